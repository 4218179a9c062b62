//! §6 Array, read-mostly, under a lock (001, "配列" task 1: MCArray1).
//!
//! # Published
//! ```text
//! fetch():  deserialize(get("array" + name)), or [] on a miss
//! change(add_elems, delete_elems):
//!   while not lock.try_lock(): pass                  # the lock of §2, same name
//!   try: array = deserialize(get(key)) or []
//!        array = [e for e in array if e not in delete_elems] + add_elems
//!        set(key, serialize(array), 0)
//!   finally: lock.unlock()
//! ```
//! The lock is [`crate::lock`]'s published one (`add` with a [`LOCK_TIMEOUT_SECS`] expiry,
//! `delete`). Elements are small integers, serialized as `1,4,5`.
//!
//! The article's argument: readers need no lock because a writer replaces the whole
//! value with one `set`, so `fetch` sees the array before or after a change. True; but
//! the writers' read-modify-write is only as safe as the lock, which expires while a slow
//! writer is still inside and disappears with an eviction, and then a change is lost. An
//! evicted or flushed array silently reads as `[]` and the next change rebuilds it from
//! nothing.
//!
//! # The article's defects
//! - **none:lock-expires-under-a-slow-writer** (`slow-work`): "while not self.lock.try_lock(): pass"
//!   — the lock is a lease (§2): a change that computes longer than it lasts (1-2 s on
//!   memcached's whole-second clock) lets a second writer in, and one change is lost.
//! - **none:lost-array-reads-empty** (`evict`): "try: array = deserializeArray(self.mc.get(self.key)) except KeyError: array = []"
//!   — an evicted array reads as `[]` and the next change rebuilds it from nothing.
//!
//! # Findings (kvsim, pinned in `tests/findings.rs`)
//! - `pause`: a writer stalled past the lock's expiry writes back an array read before
//!   another writer's change, which is lost
//!   (`array_locked_published_loses_a_change_when_a_writer_is_slow`).
//! - `evict`: the evicted array reads as `[]` and the next change rebuilds it from nothing.
//! - `slow-work`, no fault: a change that computes for 0.8-1.6 s ([`Kv::work`]) outlives the
//!   lock's 2 s lease, which memcached's whole-second clock makes 1-2 s long; a second
//!   writer enters and one change is lost.
//! - No faults, `crash`, `lose`: linearizable.
//!
//! # Fixed
//! What the article itself suggests instead of the lock: `gets` and `cas` (optimistic
//! concurrency), no lock at all. `setup` creates the array (`add key "" 0`); operations
//! never re-create it, so a miss means it was lost and the operation answers
//! [`Ret::Lost`] without writing. A timed-out `cas` is not retried (a retry would apply
//! the change twice): that change's outcome is reported unknown.
//!
//! Tolerates (linearizable), by scenario: no faults (`no-faults`); `crash` and `lose`
//! (`crash-lose`); `pause` (`slow-writer`) and `expire` (`expire`), which find no lease
//! to break; `delay` (`delay`). Safe under `evict` (`evict`), `lru` (`lru`) and `restart`
//! (`restart`): it answers `Lost` once the array is gone. Untested: `skew` (no clock in
//! the protocol), `shard-fail`.
//!
//! Not fixed yet (`retrying-client`, expected to fail): a client library that resends a
//! timed-out `cas` turns the writer's own landed `cas` into EXISTS, and the writer applies
//! its change a second time (`[0, 0]` for one `add 0`). Telling needs the writer's tag
//! (and the last writers' tags) in the value, read back after EXISTS. Late delivery
//! (`delay`) passes: a late `cas` carries a unique that has moved on.
//!
//! What no design on this store can fix: liveness under `evict`, `lru`, `restart` and
//! `shard-fail`, because the array's only copy is gone and nothing can rebuild it.
//!
//! [`LOCK_TIMEOUT_SECS`]: crate::lock::LOCK_TIMEOUT_SECS
//!
//! Probes: `lock busy` (published: the lock's `add` found it held and the writer spins),
//! `lock gone at release` (published: the unlock's `delete` found no lock: it expired or
//! was lost while held), `cas lost` (fixed: the `cas` answered `EXISTS`, another change
//! came first, and the change is tried again), `missing key` (fixed: the array is gone and
//! the operation answers `Lost`), `timeout resolved` (fixed: a timed-out `gets` sent
//! again).

use crate::expect::{Expect, Variant};
use crate::lincheck;
use crate::lock::{published_try_lock, published_unlock};
use kvsim::{
    CheckerLimits, FaultKind, History, Kv, KvError, Model, Scenario, SequentialSpec, SimRng,
    StoreOutcome, Verdict, SIMULATED_LIMITS,
};

/// The published array's probes ([`Kv::probe`]): the published lock's, hit in
/// [`published_try_lock`] and [`published_unlock`] (its `get`/`set` body has none).
const PUBLISHED_PROBES: &[&str] = &["lock busy", "lock gone at release"];

/// The fixed array's probes: its `gets`/`cas` change loop and its `fetch`.
const FIXED_PROBES: &[&str] = &["cas lost", "missing key", "timeout resolved"];

/// An array operation.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Op {
    /// `change(add_elems, delete_elems)`.
    Change {
        /// Appended after the deletions.
        add: Vec<u8>,
        /// Removed (every occurrence).
        delete: Vec<u8>,
    },
    /// `fetch()`.
    Fetch,
}

/// What an array operation returns.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Ret {
    /// `change` returned.
    Changed,
    /// `fetch` returned this array.
    Array(Vec<u8>),
    /// The fixed variant found the array gone and did nothing.
    Lost,
}

/// `1,4,5`.
pub(crate) fn serialize(array: &[u8]) -> Vec<u8> {
    array
        .iter()
        .map(|e| e.to_string())
        .collect::<Vec<_>>()
        .join(",")
        .into_bytes()
}

/// The inverse of [`serialize`]; empty pieces are skipped (so `1,4,` reads as `[1, 4]`).
pub(crate) fn deserialize(data: &[u8]) -> Vec<u8> {
    String::from_utf8_lossy(data)
        .split(',')
        .filter_map(|p| p.trim().parse().ok())
        .collect()
}

fn apply_change(array: &[u8], add: &[u8], delete: &[u8]) -> Vec<u8> {
    let mut out: Vec<u8> = array
        .iter()
        .copied()
        .filter(|e| !delete.contains(e))
        .collect();
    out.extend_from_slice(add);
    out
}

/// The array of §6, in one of its variants.
#[derive(Clone, Debug)]
pub struct ArrayLocked {
    variant: Variant,
    name: String,
    key: Vec<u8>,
}

/// The published array.
pub fn published() -> ArrayLocked {
    ArrayLocked::new(Variant::Published)
}

/// The fixed array.
pub fn fixed() -> ArrayLocked {
    ArrayLocked::new(Variant::Fixed)
}

impl ArrayLocked {
    /// The array named `arr` (key `arrayarr`, lock `lockarr`).
    pub fn new(variant: Variant) -> ArrayLocked {
        ArrayLocked {
            variant,
            name: "arr".to_string(),
            key: b"arrayarr".to_vec(),
        }
    }

    /// Which variant this is.
    pub fn variant(&self) -> Variant {
        self.variant
    }

    async fn published_change<K: Kv>(
        &self,
        kv: &K,
        add: &[u8],
        delete: &[u8],
    ) -> Result<Ret, KvError> {
        while !published_try_lock(kv, &self.name).await? {}
        kv.mark("enter");
        let body = async {
            let array = match kv.get(&self.key).await? {
                Some(d) => deserialize(&d),
                None => Vec::new(),
            };
            let array = apply_change(&array, add, delete);
            kv.work().await;
            kv.set(&self.key, &serialize(&array), 0).await?;
            Ok(Ret::Changed)
        }
        .await;
        kv.mark("exit");
        published_unlock(kv, &self.name).await?;
        body
    }

    async fn fixed_change<K: Kv>(&self, kv: &K, add: &[u8], delete: &[u8]) -> Result<Ret, KvError> {
        loop {
            let current = match kv.gets(&self.key).await {
                Ok(Some(v)) => v,
                Ok(None) => {
                    kv.probe("missing key");
                    return Ok(Ret::Lost);
                }
                Err(e) if e.is_indeterminate() => {
                    kv.probe("timeout resolved");
                    continue;
                }
                Err(e) => return Err(e),
            };
            let array = apply_change(&deserialize(&current.data), add, delete);
            kv.work().await;
            match kv
                .cas(&self.key, current.cas, &serialize(&array), 0)
                .await?
            {
                StoreOutcome::Stored => return Ok(Ret::Changed),
                StoreOutcome::NotFound => {
                    kv.probe("missing key");
                    return Ok(Ret::Lost);
                }
                _ => {
                    kv.probe("cas lost");
                    continue;
                }
            }
        }
    }
}

/// How the published variant (and its repairs) stores its state
/// ([`Model::representation`]).
const REPRESENTATION: &str =
    "one key, arrayarr, holds the whole array, its elements comma-separated (1,4,5); \
     fetch is get (a miss reads as []); a change takes the lock of the lock structure \
     (the key lockarr, added with an expiry of 2 s, which memcached's whole-second \
     clock makes 1 to 2 s long, deleted on unlock), reads the array, removes and adds \
     elements and writes it back with set: a writer still inside after the lock \
     expired writes back an array that misses another writer's change";

/// How the fixed variant stores its state ([`Model::representation`]).
const REPRESENTATION_FIXED: &str =
    "one key, arrayarr, holds the whole array, its elements comma-separated (1,4,5), \
     made once by setup; a change reads it with gets and writes it back with cas on \
     the unique it read (no lock), trying again when another writer got there first; \
     a miss means the array was lost (Lost)";

impl Model for ArrayLocked {
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
        if self.variant == Variant::Fixed {
            kv.add(&self.key, b"", 0).await?;
        }
        Ok(())
    }

    async fn run<K: Kv>(&self, kv: &K, _client: usize, op: &Op) -> Result<Ret, KvError> {
        match (self.variant, op) {
            (
                Variant::Published | Variant::Repaired(_) | Variant::Proposed,
                Op::Change { add, delete },
            ) => self.published_change(kv, add, delete).await,
            (Variant::Fixed, Op::Change { add, delete }) => {
                self.fixed_change(kv, add, delete).await
            }
            (Variant::Published | Variant::Repaired(_) | Variant::Proposed, Op::Fetch) => {
                Ok(match kv.get(&self.key).await? {
                    Some(d) => Ret::Array(deserialize(&d)),
                    None => Ret::Array(Vec::new()),
                })
            }
            (Variant::Fixed, Op::Fetch) => Ok(match kv.get(&self.key).await? {
                Some(d) => Ret::Array(deserialize(&d)),
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
            return Op::Fetch;
        }
        let add = vec![rng.below(6) as u8];
        let delete = if rng.chance(0.3) {
            vec![rng.below(6) as u8]
        } else {
            Vec::new()
        };
        Op::Change { add, delete }
    }

    fn check(&self, history: &History<Op, Ret>) -> Verdict {
        self.check_with(history, &SIMULATED_LIMITS)
    }

    fn check_with(&self, history: &History<Op, Ret>, limits: &CheckerLimits) -> Verdict {
        lincheck::check(&ArraySpec, history, limits, |r| *r == Ret::Lost)
    }

    fn check_long_with(&self, history: &History<Op, Ret>, limits: &CheckerLimits) -> Verdict {
        self.check_with(history, limits)
    }
}

/// The sequential array: `change` removes every `delete` element then appends `add`.
#[derive(Clone, Copy, Debug, Default)]
pub struct ArraySpec;

impl SequentialSpec for ArraySpec {
    type State = Vec<u8>;
    type Op = Op;
    type Ret = Ret;

    fn name(&self) -> &'static str {
        "array"
    }

    fn init(&self) -> Vec<u8> {
        Vec::new()
    }

    fn step(&self, state: &Vec<u8>, op: &Op) -> (Vec<u8>, Ret) {
        match op {
            Op::Change { add, delete } => (apply_change(state, add, delete), Ret::Changed),
            Op::Fetch => (state.clone(), Ret::Array(state.clone())),
        }
    }

    fn explain(&self, state: &Vec<u8>, op: &Op, expected: &Ret, found: &Ret) -> String {
        match (op, found) {
            (Op::Fetch, Ret::Array(a)) => {
                format!("fetch returned {a:?}, but the changes so far make the array {state:?}")
            }
            _ => format!("{op:?} returned {found:?}, expected {expected:?}"),
        }
    }
}

/// The named scenarios and what each variant is expected to get.
pub fn scenarios() -> Vec<(Scenario, Expect)> {
    vec![
        (
            Scenario::new("no-faults", 3, 3)
                .about("concurrent changes and fetches")
                .runs(300),
            Expect::BOTH_PASS,
        ),
        (
            // Critical sections that take real time: memcached's whole-second expiry
            // makes the published lock's 2 s lease 1-2 s long.
            Scenario::new("slow-work", 3, 2)
                .about("no faults; each change computes for 0.8-1.6 s, less than the lock's 2 s expiry")
                .work_ms(800, 1_600)
                .runs(300),
            Expect::BROKEN_FIXED,
        ),
        (
            Scenario::new("slow-writer", 3, 3)
                .about("a writer may stall longer than the lock's expiry")
                .faults(&[FaultKind::Pause])
                .fault_budget(1)
                .runs(500),
            Expect::BROKEN_FIXED,
        ),
        (
            Scenario::new("evict", 3, 3)
                .about("keys may be evicted at any step")
                .sometimes(&["missing key"])
                .faults(&[FaultKind::Evict])
                .fault_budget(1)
                .runs(500),
            Expect::BROKEN_FIXED,
        ),
        (
            // Under the old global byte LRU the published variant lost its array here (the
            // item pushed out right after its `set`, a fetch reading `[]`). memcached's
            // segmented LRU does not reach it in 500 runs: the array is read and written at
            // every operation, so it stays in HOT/WARM while the neighbour's unread items
            // leave COLD's tail. The same defect stays a finding under `evict` (an
            // adversary may drop any key).
            Scenario::new("lru", 3, 3)
                .about("a shared cache under memory pressure: a neighbour's writes press the array's slab class, which memcached's segmented LRU keeps in HOT/WARM while it is used")
                .faults(&[FaultKind::Lru])
                .runs(500),
            Expect::BOTH_PASS,
        ),
        (
            Scenario::new("crash-lose", 3, 3)
                .about("clients crash mid-operation; requests and replies get lost")
                .faults(&[FaultKind::Crash, FaultKind::Lose])
                .fault_budget(2)
                .runs(300),
            Expect::BOTH_PASS,
        ),
        (
            Scenario::new("restart", 3, 3)
                .about("the server restarts and loses its volatile data")
                .sometimes(&["missing key"])
                .faults(&[FaultKind::Restart])
                .fault_budget(1)
                .runs(500),
            Expect::BROKEN_FIXED,
        ),
        (
            Scenario::new("expire", 3, 3)
                .about("time jumps to the next expiry (the lock's lease) while work goes on")
                .faults(&[FaultKind::Expire])
                .fault_budget(1)
                .runs(500),
            Expect::BROKEN_FIXED,
        ),
        (
            Scenario::new("delay", 3, 3)
                .about("requests land late, after their client timed out and moved on")
                .faults(&[FaultKind::Delay])
                .fault_budget(2)
                .runs(3000),
            Expect::BROKEN_FIXED,
        ),
        (
            Scenario::new("retrying-client", 3, 3)
                .about(
                    "lost requests and replies; the client library sends a timed-out command again",
                )
                .faults(&[FaultKind::Lose])
                .fault_budget(2)
                .retries(1)
                .runs(1000),
            Expect::not_yet_fixed(
                "each write carries its writer's tag and the tags of the last writes; after \
                 EXISTS the writer reads the value back and stops if its tag is there (a \
                 resent cas that landed), instead of applying its change a second time",
            ),
        ),
    ]
}
