//! §3 Atomic counter (004, "Атомарный счетчик"): `incr`, and `add` when the key is missing.
//!
//! # Published
//! ```text
//! increment(value): loop { incr(key, value) -> return; on miss: add(key, value, 0) -> return;
//!                          on NOT_STORED: loop }
//! value():          get(key), or 0 on a miss
//! ```
//! The article itself names the weakness: when memcached loses the key (memory pressure,
//! a crash of the server), the counter silently starts again from zero and the next
//! `value()` is smaller than what earlier reads showed. Without faults the published
//! counter is linearizable.
//!
//! # The article's defects
//! - **create-once** (`evict`): "памяти должно хватать для счетчиков, иначе мы начинаем терять значения" —
//!   once memcached evicts the key, `increment` re-creates it with `add` and `value()`
//!   starts again from zero, below what earlier reads showed; created once and never
//!   again, a miss answers `Lost` instead
//! - **create-once** (`restart`): "процесс memcached аварийно завершился (сервер «упал»)" —
//!   a volatile restart loses the key the same way, and the counter restarts from zero
//! - **none:resent-incr-counts-twice** (`retrying-client`): "При этом счетчик не должен «терять» события и начислять «лишние» значения" —
//!   an `incr` (or the `add`) applied whose reply was lost, sent again by the client
//!   library, is counted twice: `incr` carries no id, so no repair of the loop tells
//!
//! # Findings (kvsim, pinned in `tests/findings.rs`)
//! - `evict` (and `restart`): after the key is lost, `increment` re-creates it with `add`
//!   and `value()` starts again from zero, below what earlier reads showed
//!   (`counter_published_restarts_from_zero_after_an_eviction`); repair `create-once`
//!   removes it.
//! - No faults, `crash`, `lose`, persistent restarts: linearizable (a lost `incr` reply is
//!   an unknown outcome, never counted twice: the published loop does not retry errors).
//! - `retrying-client` (the client library sends a timed-out command again): an `add`
//!   whose reply was lost is sent again, answers `NOT_STORED`, and the loop goes on to
//!   `incr`: one increment counted twice (with `create-once` on, a resent `incr`: the
//!   same).
//!
//! # Fixed
//! `setup` creates the key once (`add key 0 0`); operations never create it again. A miss
//! therefore means the counter was lost, and both operations answer [`Ret::Lost`] without
//! writing anything, instead of restarting from zero.
//!
//! Tolerates (linearizable, every answer true), by scenario: no faults (`no-faults`);
//! `crash` and `lose` (`crash-lose`: a timed-out `incr` is reported as an unknown outcome,
//! never retried, so never counted twice); `restart` and `crash` on a persistent store
//! (`persistent-restart`: MemcacheDB, kumofs, Flare); `lru` (`lru`, a weak test: the
//! published counter passes it too). Safe under `evict` (`evict`) and `restart`
//! (`restart`): once the key is gone every operation answers `Lost`. Untested: `pause`,
//! `skew`, `expire` (no expiry used), `delay`, `shard-fail`.
//!
//! Not fixed yet: a client library that sends a timed-out `incr` again (scenario
//! `retrying-client`, expected to fail): the fixed counter is still on `incr`, which
//! carries no id, so an `incr` applied twice is two increments. A counter on this store
//! that survives it exists: each increment a `gets`/`cas` of the value that also records
//! the increment's unique token (the last one per client), so a resent `cas` answers
//! `EXISTS` and reading the token back tells an applied increment from a lost race (the
//! price: increments contend on `cas`). Until then, turn such retries off.
//!
//! What no design on this store can fix: liveness under `evict`, `restart`, `lru` and
//! `shard-fail`, because the key is the counter's only copy and once it is gone no client
//! knows the value.
//!
//! Probes: `create on miss` (published: `incr` missed and the loop creates the key with
//! `add`), `add not stored` (published: that `add` found the key present, another client
//! created it first or a retried `add` landed twice), `missing key` (fixed: `incr` or `get`
//! found the counter gone and the operation answers `Lost`; also published with repair
//! `create-once`). No `delay` scenario: the counter sends no `delete`, `cas` or `set`,
//! and a late `incr` or `add` is an operation whose outcome is unknown.

use crate::expect::{Expect, Variant};
use crate::lincheck;
use crate::spec_adapter::{Adapted, View};
use kvsim::{
    CheckerLimits, CounterOp, CounterRet, FaultKind, History, JsonlFormat, JsonlOp, Kv, KvError,
    Model, Repair, Scenario, SimRng, StoreOutcome, Verdict, SIMULATED_LIMITS,
};
use serde_json::json;

/// The published counter's probes ([`Kv::probe`]): its `increment` loop.
const PUBLISHED_PROBES: &[&str] = &["create on miss", "add not stored"];

/// The published counter's probes with repair `create-once` on: a miss answers `Lost`.
const CREATE_ONCE_PROBES: &[&str] = &["missing key"];

/// The repairs of the published counter ([`Model::repairs`]), each the fix of one defect.
pub const REPAIRS: &[Repair] = &[Repair {
    name: "create-once",
    fixes: "increment re-creates a lost counter from zero: created once (setup), a miss answers Lost instead",
}];

/// The fixed counter's probes: its `increment` and `value` (not [`fenced_increment`] or
/// [`gets_retrying`], which only the locks use).
const FIXED_PROBES: &[&str] = &["missing key"];

/// A counter operation.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Op {
    /// `increment(value)`.
    Increment(u64),
    /// `value()`.
    Value,
}

/// What a counter operation returns.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Ret {
    /// `increment` returned.
    Done,
    /// `value()` returned this.
    Value(u64),
    /// The fixed variant found its key gone and did nothing.
    Lost,
}

/// The atomic counter of §3, in one of its variants.
#[derive(Clone, Debug)]
pub struct Counter {
    variant: Variant,
    key: Vec<u8>,
}

/// The published counter.
pub fn published() -> Counter {
    Counter::new(Variant::Published)
}

/// The fixed counter.
pub fn fixed() -> Counter {
    Counter::new(Variant::Fixed)
}

impl Counter {
    /// The counter named `hits` (key `counterhits`).
    pub fn new(variant: Variant) -> Counter {
        Counter {
            variant,
            key: b"counterhits".to_vec(),
        }
    }

    /// Which variant this is.
    pub fn variant(&self) -> Variant {
        self.variant
    }

    async fn published_increment<K: Kv>(&self, kv: &K, value: u64) -> Result<Ret, KvError> {
        loop {
            if kv.incr(&self.key, value).await?.is_some() {
                return Ok(Ret::Done);
            }
            if self.variant.repaired("create-once") {
                // Repair `create-once`: the counter was created by `setup`; a miss means
                // it was lost, and re-creating it would restart it from zero.
                kv.probe("missing key");
                return Ok(Ret::Lost);
            }
            kv.probe("create on miss");
            if kv.add(&self.key, value.to_string().as_bytes(), 0).await? == StoreOutcome::Stored {
                return Ok(Ret::Done);
            }
            kv.probe("add not stored");
        }
    }

    async fn published_value<K: Kv>(&self, kv: &K) -> Result<Ret, KvError> {
        Ok(match kv.get(&self.key).await? {
            Some(data) => Ret::Value(parse_number(&data)),
            None if self.variant.repaired("create-once") => {
                kv.probe("missing key");
                Ret::Lost
            }
            None => Ret::Value(0),
        })
    }

    async fn fixed_increment<K: Kv>(&self, kv: &K, value: u64) -> Result<Ret, KvError> {
        Ok(match kv.incr(&self.key, value).await? {
            Some(_) => Ret::Done,
            None => {
                kv.probe("missing key");
                Ret::Lost
            }
        })
    }

    async fn fixed_value<K: Kv>(&self, kv: &K) -> Result<Ret, KvError> {
        Ok(match kv.get(&self.key).await? {
            Some(data) => Ret::Value(parse_number(&data)),
            None => {
                kv.probe("missing key");
                Ret::Lost
            }
        })
    }
}

/// Reads a decimal number as memcached stores it (`decr` may leave trailing spaces);
/// anything else reads as 0.
pub(crate) fn parse_number(data: &[u8]) -> u64 {
    std::str::from_utf8(data)
        .ok()
        .and_then(|s| s.trim().parse().ok())
        .unwrap_or(0)
}

/// `gets`, retrying timeouts (a read has no effect).
pub(crate) async fn gets_retrying<K: Kv>(
    kv: &K,
    key: &[u8],
) -> Result<Option<kvsim::Versioned>, KvError> {
    loop {
        match kv.gets(key).await {
            Err(e) if e.is_indeterminate() => {
                kv.probe("timeout resolved");
                continue;
            }
            other => return other,
        }
    }
}

/// A lock holder's increment of the number at `key`: `gets`, then `cas` on the unique it
/// read, never `set`; every timeout is resolved by reading the number back (the holder is
/// its only writer, so the value says whether the write took effect). A write whose
/// request lands late (the `delay` fault: after the holder timed out, released, and
/// another holder wrote) finds a newer unique and changes nothing, where a retried `set`
/// would overwrite the later holder's count. The new value, or `None` when the number
/// is missing (lost: nothing is written).
pub(crate) async fn fenced_increment<K: Kv>(kv: &K, key: &[u8]) -> Result<Option<u64>, KvError> {
    let Some(v) = gets_retrying(kv, key).await? else {
        kv.probe("missing key");
        return Ok(None);
    };
    let n = parse_number(&v.data) + 1;
    let mine = n.to_string();
    let mut unique = v.cas;
    loop {
        match kv.cas(key, unique, mine.as_bytes(), 0).await {
            Ok(StoreOutcome::Stored) => return Ok(Some(n)),
            Ok(StoreOutcome::NotFound) => {
                kv.probe("missing key");
                return Ok(None);
            }
            // Changed since the read (only by this holder's own late write), or maybe
            // written: read it back.
            Ok(_) => kv.probe("cas lost"),
            Err(e) if e.is_indeterminate() => kv.probe("timeout resolved"),
            Err(e) => return Err(e),
        }
        match gets_retrying(kv, key).await? {
            Some(now) if now.data == mine.as_bytes() => return Ok(Some(n)),
            Some(now) => unique = now.cas,
            None => {
                kv.probe("missing key");
                return Ok(None);
            }
        }
    }
}

/// An operation's fields in a history file (read by `kvsim check-history --spec counter`).
fn jsonl_op(op: &Op, ret: Option<&Ret>) -> JsonlOp {
    let fail = ret == Some(&Ret::Lost);
    match op {
        Op::Increment(n) => JsonlOp::new("add", json!(n), json!(null), fail),
        Op::Value => {
            let n = match ret {
                Some(Ret::Value(n)) => json!(n),
                _ => json!(null),
            };
            JsonlOp::new("read", json!(null), n, fail)
        }
    }
}

/// How the published variant (and its repairs) stores its state
/// ([`Model::representation`]).
const REPRESENTATION: &str =
    "one key, counterhits, holds the count in decimal; increment is incr counterhits, \
     and on a miss add counterhits with the increment (so a lost key starts again \
     from zero); value is get, a miss reading as 0";

/// How the fixed variant stores its state ([`Model::representation`]).
const REPRESENTATION_FIXED: &str =
    "one key, counterhits, holds the count in decimal, made once by setup (\"0\"); \
     increment is incr counterhits, value is get; a miss means the counter was lost, \
     and the operation answers Lost instead of starting again from zero";

impl Model for Counter {
    fn representation(&self) -> Option<&'static str> {
        Some(match self.variant {
            Variant::Fixed => REPRESENTATION_FIXED,
            _ => REPRESENTATION,
        })
    }

    type Op = Op;
    type Ret = Ret;

    /// `run` ignores its client argument and the check reads clients only as labels.
    fn interchangeable_clients(&self) -> bool {
        true
    }

    async fn setup<K: Kv>(&self, kv: &K) -> Result<(), KvError> {
        if self.variant == Variant::Fixed || self.variant.repaired("create-once") {
            kv.add(&self.key, b"0", 0).await?;
        }
        Ok(())
    }

    async fn run<K: Kv>(&self, kv: &K, _client: usize, op: &Op) -> Result<Ret, KvError> {
        match (self.variant, op) {
            (Variant::Published | Variant::Repaired(_) | Variant::Proposed, Op::Increment(v)) => {
                self.published_increment(kv, *v).await
            }
            (Variant::Published | Variant::Repaired(_) | Variant::Proposed, Op::Value) => {
                self.published_value(kv).await
            }
            (Variant::Fixed, Op::Increment(v)) => self.fixed_increment(kv, *v).await,
            (Variant::Fixed, Op::Value) => self.fixed_value(kv).await,
        }
    }

    fn probes(&self) -> &'static [&'static str] {
        if self.variant.repaired("create-once") {
            return CREATE_ONCE_PROBES;
        }
        self.variant
            .published_or_fixed(PUBLISHED_PROBES, FIXED_PROBES)
    }

    fn repairs(&self) -> &'static [Repair] {
        REPAIRS
    }

    fn op(&self, _client: usize, _index: usize, rng: &mut SimRng) -> Op {
        if rng.chance(0.6) {
            Op::Increment(rng.range_inclusive(1, 3))
        } else {
            Op::Value
        }
    }

    fn history_format(&self) -> Option<JsonlFormat<Op, Ret>> {
        Some(JsonlFormat {
            spec: "counter",
            args: Vec::new(),
            describe: jsonl_op,
        })
    }

    fn check(&self, history: &History<Op, Ret>) -> Verdict {
        self.check_with(history, &SIMULATED_LIMITS)
    }

    fn check_with(&self, history: &History<Op, Ret>, limits: &CheckerLimits) -> Verdict {
        lincheck::check(&SumSpec::default(), history, limits, |r| *r == Ret::Lost)
    }

    fn check_long(&self, history: &History<Op, Ret>) -> Verdict {
        self.check_long_with(history, &SIMULATED_LIMITS)
    }

    /// [`kvsim::check_counter_by`], polynomial in the history's length (a `Lost` answer
    /// had no effect); the general search of [`Model::check_with`], within `limits`, only
    /// where it is inconclusive (more operations at once than it handles).
    fn check_long_with(&self, history: &History<Op, Ret>, limits: &CheckerLimits) -> Verdict {
        use kvsim::{check_counter_by, CounterCheck, CounterView, Outcome};
        let int = |n: u64| i64::try_from(n).map_err(|_| format!("{n} is too big"));
        let checked = check_counter_by(history, |op, outcome| {
            let view = match (op, outcome) {
                (_, Outcome::Failed | Outcome::Ok(Ret::Lost)) | (Op::Value, Outcome::Unknown) => {
                    Ok(CounterView::Nothing)
                }
                (Op::Increment(n), Outcome::Ok(Ret::Done)) => int(*n).map(CounterView::Add),
                (Op::Increment(n), Outcome::Unknown) => int(*n).map(CounterView::UnknownAdd),
                (Op::Value, Outcome::Ok(Ret::Value(x))) => int(*x).map(CounterView::Read),
                (op, Outcome::Ok(r)) => Err(format!("{op:?} cannot return {r:?}")),
            };
            view.unwrap_or_else(CounterView::Invalid)
        });
        match checked {
            CounterCheck::Ok => Verdict::Ok,
            CounterCheck::Violation(v) => Verdict::Violation(v),
            CounterCheck::Inconclusive(_) => self.check_with(history, limits),
        }
    }
}

/// The sequential counter in the article's own terms (its explanations speak of
/// `increment` and `value()`): kvsim's [`kvsim::CounterSpec`], which starts at 0;
/// `increment(v)` adds v; `value()` reads the sum.
pub type SumSpec = Adapted<SumView>;

/// The counter's operations as [`kvsim::CounterSpec`]'s.
#[derive(Clone, Copy, Debug, Default)]
pub struct SumView;

impl View for SumView {
    type Spec = kvsim::CounterSpec;
    type Op = Op;
    type Ret = Ret;

    fn spec(&self) -> kvsim::CounterSpec {
        kvsim::CounterSpec
    }

    fn op(&self, op: &Op) -> CounterOp {
        match op {
            Op::Increment(v) => CounterOp::Add(*v as i64),
            Op::Value => CounterOp::Read,
        }
    }

    fn ret(&self, ret: CounterRet) -> Ret {
        match ret {
            CounterRet::Done => Ret::Done,
            CounterRet::Value(v) => Ret::Value(v as u64),
        }
    }

    fn explain(&self, state: &i64, op: &Op, expected: &Ret, found: &Ret) -> String {
        let state = *state as u64;
        match (op, expected, found) {
            (Op::Value, Ret::Value(e), Ret::Value(f)) => format!(
                "value() returned {f}, but the increments before it add up to {e} (counter at {state})"
            ),
            _ => format!("{op:?} returned {found:?}, but the counter at {state} gives {expected:?}"),
        }
    }
}

/// The named scenarios and what each variant is expected to get.
pub fn scenarios() -> Vec<(Scenario, Expect)> {
    vec![
        (
            Scenario::new("no-faults", 3, 5)
                .about("concurrent increments and reads, no faults")
                .runs(300),
            Expect::BOTH_PASS,
        ),
        (
            Scenario::new("evict", 3, 5)
                .about("keys may be evicted at any step")
                .sometimes(&["missing key"])
                .faults(&[FaultKind::Evict])
                .fault_budget(1)
                .runs(500),
            Expect::BROKEN_FIXED.shows(&["create-once"]),
        ),
        (
            // A hot key survives LRU: every call touches the counter, so the neighbour's
            // writes push out only colder keys (`evict`, where any key may go, is the one
            // that loses the published counter's count).
            Scenario::new("lru", 3, 5)
                .about("a shared cache under memory pressure: a neighbour's writes push the structure's least recently used keys out")
                .faults(&[FaultKind::Lru])
                .runs(500),
            Expect::BOTH_PASS,
        ),
        (
            Scenario::new("restart", 3, 5)
                .about("the server may restart and lose its volatile data")
                .sometimes(&["missing key"])
                .faults(&[FaultKind::Restart])
                .fault_budget(1)
                .runs(500),
            Expect::BROKEN_FIXED.shows(&["create-once"]),
        ),
        (
            Scenario::new("crash-lose", 3, 5)
                .about("clients crash mid-operation; requests and replies get lost")
                .faults(&[FaultKind::Crash, FaultKind::Lose])
                .fault_budget(2)
                .runs(300),
            Expect::BOTH_PASS,
        ),
        (
            Scenario::new("persistent-restart", 3, 5)
                .about("a persistent store (MemcacheDB, kumofs) restarts and keeps its data")
                .faults(&[FaultKind::Restart, FaultKind::Crash])
                .persistent()
                .runs(300),
            Expect::BOTH_PASS,
        ),
        (
            Scenario::new("retrying-client", 3, 5)
                .about("the client library sends a timed-out command again, as most do")
                .faults(&[FaultKind::Lose])
                .fault_budget(1)
                .retries(1)
                .runs(500),
            // An `incr` or `add` applied whose reply was lost, sent again by the library:
            // counted twice. No counter on `incr` can tell (the command carries no id), and
            // no repair of the published code changes that; a counter on `gets`/`cas`
            // that records each increment's token in the value can.
            Expect::not_yet_fixed("each increment a gets/cas of the value that also records its own unique token (the last one per client): a resent cas answers EXISTS, and reading the token back tells an applied increment from a lost race"),
        ),
    ]
}
