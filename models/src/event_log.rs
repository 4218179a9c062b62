//! §5 Event log as a ring of time chunks (001, "イベントログ": MCEventLog).
//!
//! # Published
//! ```text
//! key(n) = "messagelog" + name + "_" + n
//! put(event): k = key(event.when() // timeChunk % numChunks)
//!   loop: append(k, serialize(event)) -> return; on miss:
//!         add(k, serialize(event), timeChunk * (numChunks-1)) -> return; on NOT_STORED: loop
//! fetch(): last = time(); first = time() - timeChunk*(numChunks-1)
//!   firstKey = first // timeChunk % numChunks; lastKey = last // timeChunk % numChunks
//!   keys firstKey..=lastKey, or firstKey..numChunks then 0..=lastKey
//!   result = events of those keys with first <= when <= last
//! ```
//! with the \[repair\]s of `STRUCTURES.md` (`//`, and `events` for the printed `l`). An
//! event is an id stamped with `when()` = the putting client's clock in whole seconds,
//! serialized as `id@when;` (concatenates under `append`). The workload calls `fetch()`
//! without arguments (then `first`/`last` are computed exactly as printed, `time()` read
//! once per use). `timeChunk` and `numChunks` are [`TIME_CHUNK`] and [`NUM_CHUNKS`] (the
//! article's defaults are 10 and 10: the same mechanism over a longer time).
//!
//! # The property (time window)
//! With `W = timeChunk * (numChunks-1)` seconds (the article: "the capacity of the log is
//! (numChunks-1)*timeChunk seconds") and true (virtual) time in milliseconds, a `fetch()`
//! called at `fc` and returning at `fr`:
//! - returns every event whose `put` returned before `fc` and was called after
//!   `fr - (W-1) s` (the one second is the granularity of `when()`);
//! - returns no event twice, none whose `put` was called before `fc - (W+1) s`, and none
//!   whose `put` had not been called by `fr`.
//!
//! Events of a `put` with an unknown outcome may be returned or not.
//!
//! What the published ring gets wrong against the article's own capacity claim: a chunk's
//! key expires `W` seconds after its *first* event, not after its last, so the newest
//! events of the oldest chunk disappear up to one chunk early. Client clocks that
//! disagree put events in chunks the readers do not look at.
//!
//! # Findings (kvsim, pinned in `tests/findings.rs`)
//! - No faults, 2 clients: chunk 0's key, created at `0.001 s` with expiry `W = 10 s`,
//!   dies at `10 s` with an event put at `4.42 s`; a `fetch()` at `10.49 s` misses it,
//!   though it is 6 s old (`event_log_published_drops_events_before_the_window_ends`).
//! - `skew`, `evict`: events missing or outside the window (both variants; see below).
//!
//! # Fixed
//! One key per absolute chunk number (`messagelog<name>_c<n>`, never reused), created
//! with an expiry of `W + 2*timeChunk` seconds, long enough for its last event to leave
//! the window; `fetch` reads the chunks from `first` to `last` and filters by `when`. A
//! timed-out `append` is retried (it may then be stored twice) and `fetch` drops repeated
//! ids, so every `put` ends with a known outcome.
//!
//! Tolerates: no faults, `crash`, `lose`, `pause`, `expire`. Not tolerated, by any design:
//! `skew` (the window is defined by true time; events are stamped and chunks chosen by
//! the clients' own clocks), and `evict`, `lru`, `restart`, `shard-fail` (the events' only copy is gone).

use crate::expect::{Expect, Variant};
use kvsim::history::{History, Outcome};
use kvsim::kv::{Kv, KvError, StoreOutcome};
use kvsim::model::Model;
use kvsim::rng::SimRng;
use kvsim::scenario::{FaultKind, Scenario};
use kvsim::verdict::{Verdict, Violation};
use std::collections::BTreeSet;

/// `timeChunk`, seconds.
pub const TIME_CHUNK: u64 = 5;

/// `numChunks`.
pub const NUM_CHUNKS: u64 = 3;

/// An event-log operation.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Op {
    /// `put(event)`: the event with this id, happening now.
    Put(u32),
    /// `fetch()`.
    Fetch,
    /// The client does nothing for this long (lets time go by).
    Sleep(u64),
}

/// What an operation returns.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Ret {
    /// `put` returned.
    Put,
    /// `fetch()` returned these event ids (in the order found).
    Events(Vec<u32>),
    /// The sleep ended.
    Slept,
}

/// One serialized event.
fn serialize(id: u32, when: u64) -> Vec<u8> {
    format!("{id}@{when};").into_bytes()
}

/// `(id, when)` pairs of a chunk's value; malformed pieces are skipped.
fn deserialize(data: &[u8]) -> Vec<(u32, u64)> {
    String::from_utf8_lossy(data)
        .split(';')
        .filter_map(|e| {
            let (id, when) = e.split_once('@')?;
            Some((id.parse().ok()?, when.parse().ok()?))
        })
        .collect()
}

/// The event log of §5, in one of its variants.
#[derive(Clone, Debug)]
pub struct EventLog {
    variant: Variant,
    name: String,
    time_chunk: u64,
    num_chunks: u64,
}

/// The published event log.
pub fn published() -> EventLog {
    EventLog::new(Variant::Published)
}

/// The fixed event log.
pub fn fixed() -> EventLog {
    EventLog::new(Variant::Fixed)
}

impl EventLog {
    /// The log named `ev` with [`TIME_CHUNK`] and [`NUM_CHUNKS`].
    pub fn new(variant: Variant) -> EventLog {
        EventLog {
            variant,
            name: "ev".to_string(),
            time_chunk: TIME_CHUNK,
            num_chunks: NUM_CHUNKS,
        }
    }

    /// Which variant this is.
    pub fn variant(&self) -> Variant {
        self.variant
    }

    /// The window `W` in seconds.
    pub fn window_secs(&self) -> u64 {
        self.time_chunk * (self.num_chunks - 1)
    }

    fn key(&self, n: u64) -> Vec<u8> {
        format!("messagelog{}_{n}", self.name).into_bytes()
    }

    fn chunk_key(&self, c: u64) -> Vec<u8> {
        format!("messagelog{}_c{c}", self.name).into_bytes()
    }

    async fn published_put<K: Kv>(&self, kv: &K, id: u32) -> Result<Ret, KvError> {
        let when = kv.now_secs();
        let serialized = serialize(id, when);
        let k = self.key(when / self.time_chunk % self.num_chunks);
        loop {
            if kv.append(&k, &serialized).await? == StoreOutcome::Stored {
                return Ok(Ret::Put);
            }
            let exp = (self.time_chunk * (self.num_chunks - 1)) as i64;
            if kv.add(&k, &serialized, exp).await? == StoreOutcome::Stored {
                return Ok(Ret::Put);
            }
        }
    }

    async fn published_fetch<K: Kv>(&self, kv: &K) -> Result<Ret, KvError> {
        // fetch(first = None, last = None), as printed.
        let last = kv.now_secs();
        let first = kv.now_secs().saturating_sub(self.window_secs());
        let first_key = first / self.time_chunk % self.num_chunks;
        let last_key = last / self.time_chunk % self.num_chunks;
        let range: Vec<u64> = if first_key < last_key {
            (first_key..=last_key).collect()
        } else {
            (first_key..self.num_chunks).chain(0..=last_key).collect()
        };
        let mut result = Vec::new();
        for k in range {
            let Some(data) = kv.get(&self.key(k)).await? else {
                continue;
            };
            result.extend(
                deserialize(&data)
                    .into_iter()
                    .filter(|(_, when)| first <= *when && *when <= last)
                    .map(|(id, _)| id),
            );
        }
        Ok(Ret::Events(result))
    }

    async fn fixed_put<K: Kv>(&self, kv: &K, id: u32) -> Result<Ret, KvError> {
        let when = kv.now_secs();
        let serialized = serialize(id, when);
        let k = self.chunk_key(when / self.time_chunk);
        let exp = (self.window_secs() + 2 * self.time_chunk) as i64;
        loop {
            match kv.append(&k, &serialized).await {
                Ok(StoreOutcome::Stored) => return Ok(Ret::Put),
                Ok(_) => {}
                Err(e) if e.is_indeterminate() => continue, // fetch drops repeats
                Err(e) => return Err(e),
            }
            match kv.add(&k, &serialized, exp).await {
                Ok(StoreOutcome::Stored) => return Ok(Ret::Put),
                Ok(_) => {}
                Err(e) if e.is_indeterminate() => continue,
                Err(e) => return Err(e),
            }
        }
    }

    async fn fixed_fetch<K: Kv>(&self, kv: &K) -> Result<Ret, KvError> {
        let last = kv.now_secs();
        let first = last.saturating_sub(self.window_secs());
        let mut seen = BTreeSet::new();
        let mut result = Vec::new();
        for c in first / self.time_chunk..=last / self.time_chunk {
            let Some(data) = kv.get(&self.chunk_key(c)).await? else {
                continue;
            };
            for (id, when) in deserialize(&data) {
                if first <= when && when <= last && seen.insert(id) {
                    result.push(id);
                }
            }
        }
        Ok(Ret::Events(result))
    }
}

impl Model for EventLog {
    type Op = Op;
    type Ret = Ret;

    /// `run` ignores its client argument and the check reads clients only as labels.
    fn interchangeable_clients(&self) -> bool {
        true
    }

    async fn run<K: Kv>(&self, kv: &K, _client: usize, op: &Op) -> Result<Ret, KvError> {
        match (self.variant, op) {
            (_, Op::Sleep(ms)) => {
                kv.sleep_ms(*ms).await;
                Ok(Ret::Slept)
            }
            (Variant::Published, Op::Put(id)) => self.published_put(kv, *id).await,
            (Variant::Published, Op::Fetch) => self.published_fetch(kv).await,
            (Variant::Fixed, Op::Put(id)) => self.fixed_put(kv, *id).await,
            (Variant::Fixed, Op::Fetch) => self.fixed_fetch(kv).await,
        }
    }

    fn op(&self, client: usize, index: usize, rng: &mut SimRng) -> Op {
        match rng.below(20) {
            0..=6 => Op::Put((client * 1000 + index) as u32),
            7..=9 => Op::Fetch,
            _ => Op::Sleep(rng.range_inclusive(500, 3_000)),
        }
    }

    fn check(&self, history: &History<Op, Ret>) -> Verdict {
        check_window(self.window_secs() * 1000, history)
    }
}

/// Checks the time-window property of the module docs for a window of `window_ms`.
pub fn check_window(window_ms: u64, history: &History<Op, Ret>) -> Verdict {
    // id -> (put call, put return if known to have completed)
    let puts: Vec<(u32, u64, Option<u64>, bool)> = history
        .ops
        .iter()
        .filter_map(|o| match (&o.op, &o.outcome) {
            (Op::Put(id), Outcome::Ok(_)) => Some((*id, o.call_ms, o.ret_ms, true)),
            (Op::Put(id), Outcome::Unknown) => Some((*id, o.call_ms, None, true)),
            (Op::Put(id), Outcome::Failed) => Some((*id, o.call_ms, None, false)),
            _ => None,
        })
        .collect();
    let violation = |i: usize, reason: String| {
        Verdict::Violation(Violation {
            property: "time window (event log)".to_string(),
            reason,
            ops: vec![i],
            partial: Vec::new(),
        })
    };
    for (i, o) in history.ops.iter().enumerate() {
        let (Outcome::Ok(Ret::Events(events)), Some(fr)) = (&o.outcome, o.ret_ms) else {
            continue;
        };
        let fc = o.call_ms;
        let at = |ms: u64| format!("{:.3} s", ms as f64 / 1000.0);
        let mut seen = BTreeSet::new();
        for id in events {
            if !seen.insert(*id) {
                return violation(
                    i,
                    format!("fetch() at {} returned event {id} twice", at(fc)),
                );
            }
            match puts.iter().find(|p| p.0 == *id) {
                Some((_, pc, _, true)) if *pc <= fr && *pc + window_ms + 1000 >= fc => {}
                Some((_, pc, _, true)) if *pc > fr => {
                    return violation(
                        i,
                        format!("fetch() at {} returned event {id}, put only at {}", at(fc), at(*pc)),
                    )
                }
                Some((_, pc, _, true)) => {
                    return violation(
                        i,
                        format!(
                            "fetch() at {} returned event {id}, put at {}: older than the window of {} s",
                            at(fc),
                            at(*pc),
                            window_ms / 1000
                        ),
                    )
                }
                _ => {
                    return violation(
                        i,
                        format!("fetch() at {} returned event {id}, which was never put", at(fc)),
                    )
                }
            }
        }
        for (id, pc, pr, _) in &puts {
            let Some(pr) = pr else { continue };
            if *pr < fc && *pc + window_ms > fr + 1000 && !seen.contains(id) {
                return violation(
                    i,
                    format!(
                        "fetch() at {} missed event {id}, put at {} (inside the window of {} s)",
                        at(fc),
                        at(*pc),
                        window_ms / 1000
                    ),
                );
            }
        }
    }
    Verdict::Ok
}

/// The named scenarios and what each variant is expected to get.
pub fn scenarios() -> Vec<(Scenario, Expect)> {
    vec![
        (
            Scenario::new("no-faults", 3, 16)
                .about("puts, fetches and idle time over more than one window")
                .runs(300),
            Expect::BROKEN_FIXED,
        ),
        (
            Scenario::new("crash-lose-pause", 3, 16)
                .about("clients crash or stall; requests and replies get lost")
                .faults(&[FaultKind::Crash, FaultKind::Lose, FaultKind::Pause])
                .fault_budget(3)
                .runs(300),
            Expect::BROKEN_FIXED,
        ),
        (
            Scenario::new("skew", 3, 16)
                .about("client clocks are offset, drift and jump")
                .faults(&[FaultKind::Skew])
                .fault_budget(2)
                .runs(300),
            Expect::IMPOSSIBLE,
        ),
        (
            Scenario::new("evict", 3, 16)
                .about("keys may be evicted at any step")
                .faults(&[FaultKind::Evict])
                .fault_budget(1)
                .runs(300),
            Expect::IMPOSSIBLE,
        ),
    ]
}
