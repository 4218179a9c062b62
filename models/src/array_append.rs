//! §7 Array, append-mostly (001, task 2: MCArray2).
//!
//! # Published
//! ```text
//! fetch():      deserializeIntArray(get("array" + name)), or [] on a miss
//! add(element): element = serializeInt(element)
//!   loop: try: append(key, element)  except KeyError: return
//!         try: add(key, element, 0)  except KeyError: return
//! ```
//! transcribed exactly as printed. Elements serialize as `5,` so that appends concatenate.
//!
//! The printed loop is the event log's pattern with its `return`s moved: it returns when
//! `append` *fails*, so on an empty (missing) array nothing is ever stored and every
//! `fetch` answers `[]`; when `append` succeeds it goes on to `add`, which fails (the key
//! exists) and returns, unless the key vanished in between, when the element is stored
//! again and the loop appends it a second time.
//!
//! # Findings (kvsim, pinned in `tests/findings.rs`)
//! - No faults, one client: `add(5)` then `fetch()` answers `[]`; the array is never
//!   created (`array_append_published_never_stores_anything`). Every scenario shows it.
//!
//! # Fixed
//! `setup` creates the array (`add key "" 0`); `add` is one `append`, `fetch` one `get`.
//! Operations never re-create the key, so a miss means it was lost and the operation
//! answers [`Ret::Lost`]. A timed-out `append` is not retried (it is not idempotent): its
//! outcome is reported unknown.
//!
//! Tolerates (linearizable), by scenario: no faults (`no-faults`); `crash` and `lose`
//! (`crash-lose`). Safe under `evict` (`evict`): it answers `Lost` once the array is gone.
//! Untested: `pause`, `expire`, `skew`, `delay`, and `lru`, `restart`, `shard-fail` (which
//! lose the key as `evict` does). (The article's "+x -x" operation log would add removal
//! with the same one-`append` cost; the workload here only adds, as the published class
//! does.)
//!
//! Not fixed yet: nothing a scenario shows.
//!
//! What no design on this store can fix: liveness under `evict`, `lru`, `restart` and
//! `shard-fail`, because the array's only copy is gone and nothing can rebuild it.
//!
//! Probes: `append miss` (an `append` found no array: published, the add returns having
//! stored nothing, the printed defect; fixed, it answers `Lost`), `add not stored`
//! (published: the `add` after a successful `append` found the key, the printed loop's
//! normal exit, which no run reaches because the array is never created), `missing key`
//! (`fetch` found no array: published reads `[]`, fixed answers `Lost`).

use crate::expect::{Expect, Variant};
use crate::lincheck;
use kvsim::{
    CheckerLimits, FaultKind, History, Kv, KvError, Model, Scenario, SequentialSpec, SimRng,
    StoreOutcome, Verdict, SIMULATED_LIMITS,
};

/// The published array's probes ([`Kv::probe`]): its `add` loop and `fetch`.
const PUBLISHED_PROBES: &[&str] = &["append miss", "add not stored", "missing key"];

/// The fixed array's probes: its one-`append` `add` and `fetch`.
const FIXED_PROBES: &[&str] = &["append miss", "missing key"];

/// An array operation.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Op {
    /// `add(element)`.
    Add(u8),
    /// `fetch()`.
    Fetch,
}

/// What an array operation returns.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Ret {
    /// `add` returned.
    Added,
    /// `fetch` returned this array.
    Array(Vec<u8>),
    /// The fixed variant found the array gone and did nothing.
    Lost,
}

fn serialize_int(e: u8) -> Vec<u8> {
    format!("{e},").into_bytes()
}

/// The append-only array of §7, in one of its variants.
#[derive(Clone, Debug)]
pub struct ArrayAppend {
    variant: Variant,
    key: Vec<u8>,
}

/// The published array.
pub fn published() -> ArrayAppend {
    ArrayAppend::new(Variant::Published)
}

/// The fixed array.
pub fn fixed() -> ArrayAppend {
    ArrayAppend::new(Variant::Fixed)
}

impl ArrayAppend {
    /// The array named `log` (key `arraylog`).
    pub fn new(variant: Variant) -> ArrayAppend {
        ArrayAppend {
            variant,
            key: b"arraylog".to_vec(),
        }
    }

    /// Which variant this is.
    pub fn variant(&self) -> Variant {
        self.variant
    }

    async fn published_add<K: Kv>(&self, kv: &K, element: u8) -> Result<Ret, KvError> {
        let element = serialize_int(element);
        loop {
            if kv.append(&self.key, &element).await? != StoreOutcome::Stored {
                kv.probe("append miss");
                return Ok(Ret::Added);
            }
            if kv.add(&self.key, &element, 0).await? != StoreOutcome::Stored {
                kv.probe("add not stored");
                return Ok(Ret::Added);
            }
        }
    }

    async fn fixed_add<K: Kv>(&self, kv: &K, element: u8) -> Result<Ret, KvError> {
        Ok(match kv.append(&self.key, &serialize_int(element)).await? {
            StoreOutcome::Stored => Ret::Added,
            _ => {
                kv.probe("append miss");
                Ret::Lost
            }
        })
    }
}

impl Model for ArrayAppend {
    type Op = Op;
    type Ret = Ret;

    /// `run` ignores its client argument and the check reads clients only as labels.
    fn interchangeable_clients(&self) -> bool {
        true
    }

    async fn setup<K: Kv>(&self, kv: &K) -> Result<(), KvError> {
        if self.variant == Variant::Fixed {
            kv.add(&self.key, b"", 0).await?;
        }
        Ok(())
    }

    async fn run<K: Kv>(&self, kv: &K, _client: usize, op: &Op) -> Result<Ret, KvError> {
        match (self.variant, op) {
            (Variant::Published | Variant::Repaired(_) | Variant::Proposed, Op::Add(e)) => {
                self.published_add(kv, *e).await
            }
            (Variant::Fixed, Op::Add(e)) => self.fixed_add(kv, *e).await,
            (variant, Op::Fetch) => Ok(match kv.get(&self.key).await? {
                Some(d) => Ret::Array(crate::array_locked::deserialize(&d)),
                None if variant.name() == "published" => {
                    kv.probe("missing key");
                    Ret::Array(Vec::new())
                }
                None => {
                    kv.probe("missing key");
                    Ret::Lost
                }
            }),
        }
    }

    fn probes(&self) -> &'static [&'static str] {
        self.variant
            .published_or_fixed(PUBLISHED_PROBES, FIXED_PROBES)
    }

    fn op(&self, _client: usize, _index: usize, rng: &mut SimRng) -> Op {
        if rng.chance(0.35) {
            Op::Fetch
        } else {
            Op::Add(rng.below(10) as u8)
        }
    }

    fn check(&self, history: &History<Op, Ret>) -> Verdict {
        self.check_with(history, &SIMULATED_LIMITS)
    }

    fn check_with(&self, history: &History<Op, Ret>, limits: &CheckerLimits) -> Verdict {
        lincheck::check(&AppendSpec, history, limits, |r| *r == Ret::Lost)
    }

    fn check_long_with(&self, history: &History<Op, Ret>, limits: &CheckerLimits) -> Verdict {
        self.check_with(history, limits)
    }
}

/// The sequential append-only array.
#[derive(Clone, Copy, Debug, Default)]
pub struct AppendSpec;

impl SequentialSpec for AppendSpec {
    type State = Vec<u8>;
    type Op = Op;
    type Ret = Ret;

    fn name(&self) -> &'static str {
        "append-only array"
    }

    fn init(&self) -> Vec<u8> {
        Vec::new()
    }

    fn step(&self, state: &Vec<u8>, op: &Op) -> (Vec<u8>, Ret) {
        match op {
            Op::Add(e) => {
                let mut s = state.clone();
                s.push(*e);
                (s, Ret::Added)
            }
            Op::Fetch => (state.clone(), Ret::Array(state.clone())),
        }
    }

    fn explain(&self, state: &Vec<u8>, op: &Op, expected: &Ret, found: &Ret) -> String {
        match (op, found) {
            (Op::Fetch, Ret::Array(a)) => {
                format!("fetch returned {a:?}, but the adds so far make the array {state:?}")
            }
            _ => format!("{op:?} returned {found:?}, expected {expected:?}"),
        }
    }
}

/// The named scenarios and what each variant is expected to get.
pub fn scenarios() -> Vec<(Scenario, Expect)> {
    vec![
        (
            Scenario::new("no-faults", 3, 4)
                .about("concurrent adds and fetches")
                .runs(300),
            Expect::BROKEN_FIXED,
        ),
        (
            Scenario::new("evict", 3, 4)
                .about("keys may be evicted at any step")
                .faults(&[FaultKind::Evict])
                .fault_budget(1)
                .runs(500),
            Expect::BROKEN_FIXED,
        ),
        (
            Scenario::new("crash-lose", 3, 4)
                .about("clients crash mid-operation; requests and replies get lost")
                .faults(&[FaultKind::Crash, FaultKind::Lose])
                .fault_budget(2)
                .runs(300),
            Expect::BROKEN_FIXED,
        ),
    ]
}
