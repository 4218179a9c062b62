//! A ticket dispenser ("take a number") on a memcached-style store: one key, `tickets`,
//! holds the next ticket to hand out.
//!
//! # Published
//! ```text
//! take(): v = get(tickets); if missing: add(tickets, 2) → return 1 (else try again)
//!         set(tickets, v + 1); return v
//! peek(): get(tickets), or 1 when missing
//! ```
//! Two clients that both read 5 before either writes 6 both hand out ticket 5; and when
//! the store loses the key, the dispenser starts again from 1.
//!
//! # Fixed
//! `setup` creates the key once (`add tickets 0 1`); `take()` is one `incr tickets 1`
//! (atomic on the server) and hands out the number before the new value; a miss means the
//! counter was lost, and both operations answer `Lost` rather than start again from 1.
//! Still broken: a client library that sends a timed-out `incr` again counts it twice and
//! skips a ticket (`incr` carries no id).

use crate::spec::{DispenserSpec, Op, Ret};
use kvsim_cli::kvsim::{
    linearizable, CheckerLimits, History, Kv, KvError, Model, SimRng, StoreOutcome, Verdict,
    SIMULATED_LIMITS,
};
use kvsim_cli::Variant;

/// The one key.
const KEY: &[u8] = b"tickets";

/// The dispenser in one of its variants (`published` or `fixed`).
#[derive(Clone, Copy, Debug)]
pub struct Dispenser {
    variant: Variant,
}

/// The published dispenser: `get`, then `set`.
pub fn published() -> Dispenser {
    Dispenser {
        variant: Variant::Published,
    }
}

/// The fixed dispenser: one `incr`.
pub fn fixed() -> Dispenser {
    Dispenser {
        variant: Variant::Fixed,
    }
}

/// The number `data` holds (memcached stores numbers as decimal text; `incr` may leave
/// trailing spaces); anything else reads as 0.
fn number(data: &[u8]) -> u64 {
    std::str::from_utf8(data)
        .ok()
        .and_then(|s| s.trim().parse().ok())
        .unwrap_or(0)
}

impl Dispenser {
    async fn published_take<K: Kv>(&self, kv: &K) -> Result<Ret, KvError> {
        loop {
            let Some(data) = kv.get(KEY).await? else {
                kv.probe("create on miss");
                if kv.add(KEY, b"2", 0).await? == StoreOutcome::Stored {
                    return Ok(Ret::Ticket(1));
                }
                continue;
            };
            let v = number(&data);
            kv.set(KEY, (v + 1).to_string().as_bytes(), 0).await?;
            return Ok(Ret::Ticket(v));
        }
    }

    async fn fixed_take<K: Kv>(&self, kv: &K) -> Result<Ret, KvError> {
        Ok(match kv.incr(KEY, 1).await? {
            Some(after) => Ret::Ticket(after - 1),
            None => {
                kv.probe("missing key");
                Ret::Lost
            }
        })
    }

    async fn peek<K: Kv>(&self, kv: &K) -> Result<Ret, KvError> {
        Ok(match kv.get(KEY).await? {
            Some(data) => Ret::Next(number(&data)),
            None if self.variant == Variant::Fixed => {
                kv.probe("missing key");
                Ret::Lost
            }
            None => Ret::Next(1),
        })
    }
}

impl Model for Dispenser {
    type Op = Op;
    type Ret = Ret;

    async fn setup<K: Kv>(&self, kv: &K) -> Result<(), KvError> {
        if self.variant == Variant::Fixed {
            kv.add(KEY, b"1", 0).await?;
        }
        Ok(())
    }

    async fn run<K: Kv>(&self, kv: &K, _client: usize, op: &Op) -> Result<Ret, KvError> {
        match (op, self.variant) {
            (Op::Peek, _) => self.peek(kv).await,
            (Op::Take, Variant::Fixed) => self.fixed_take(kv).await,
            (Op::Take, _) => self.published_take(kv).await,
        }
    }

    /// Three takes in four operations.
    fn op(&self, _client: usize, _index: usize, rng: &mut SimRng) -> Op {
        if rng.chance(0.75) {
            Op::Take
        } else {
            Op::Peek
        }
    }

    fn probes(&self) -> &'static [&'static str] {
        self.variant
            .published_or_fixed(&["create on miss"], &["missing key"])
    }

    /// `run` does not read its client argument: `kvsim explore` may treat clients as
    /// interchangeable (fewer states).
    fn interchangeable_clients(&self) -> bool {
        true
    }

    fn check(&self, history: &History<Op, Ret>) -> Verdict {
        self.check_with(history, &SIMULATED_LIMITS)
    }

    fn check_with(&self, history: &History<Op, Ret>, limits: &CheckerLimits) -> Verdict {
        linearizable(&DispenserSpec, history, *limits)
    }
}
