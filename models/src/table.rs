//! §8 Table / set (001, "テーブル": MCTable): one key per member for `has`, one key with
//! the list of members for `fetch`, changes under the lock of §2.
//!
//! # Published
//! ```text
//! has(k):   get(T + "_v_" + k) hit => True, miss => False
//! fetch():  deserialize(get(T + "_keys")), None on a miss
//! add(k):   while not lock.try_lock(): pass
//!           try: array = deserialize(get(T + "_keys")) or []
//!                if k not in array: array.append(k); set(T + "_v_" + k, 1, 0)
//!                                   set(T + "_keys", serialize(array), 0)
//!           finally: lock.unlock()
//! delete(k): the same under the lock: if k in array: array.remove(k);
//!            delete(T + "_v_" + k); set(T + "_keys", serialize(array), 0)
//! ```
//! with `T = "table" + name` and the lock of [`crate::lock`] (published). `fetch`'s `None`
//! is read as the empty table (what a caller iterating over it means); the model returns
//! members sorted, since the table is a set.
//!
//! The article's claim: `has` is one `get` and the member list "is always consistent".
//! Each key is, but not the two together: between the two `set`s of an `add` a reader
//! finds the member with `has` and then misses it in `fetch` (and the reverse during a
//! `delete`), which no order of the operations explains; the lock orders writers only.
//! The lock's expiry and an evicted member list add lost changes on top.
//!
//! # The article's defects
//! - **none:has-and-fetch-disagree** (`no-faults`): "self.mc.set(self.key + '_v_' + key, 1, 0) self.mc.set(self.key + '_keys', serializeArray(array), 0)"
//!   — two `set`s the lock orders only among writers: between them a reader's `has`
//!   finds the member and its next `fetch` misses it.
//! - **none:lock-expires-under-a-slow-writer** (`slow-work`): "while not self.lock.try_lock(): pass"
//!   — the lock is a lease (§2): a change that outlives it lets a second writer in and a
//!   member is lost.
//! - **none:lost-list-drops-members** (`evict`): "try: array = deserializeArray(self.mc.get(self.key + '_keys')) except KeyError: array = []"
//!   — an evicted member list reads as empty and the next change rebuilds it from nothing.
//!
//! # Findings (kvsim, pinned in `tests/findings.rs`)
//! - No faults, 2 clients × 3 operations: during `add("b")`, between its two `set`s,
//!   another client's `has("b")` answers true and its next `fetch()` answers `[]`
//!   (`table_published_has_and_fetch_disagree_without_faults`).
//! - `evict`: an evicted member list silently drops members (the next `add` rebuilds it
//!   from nothing).
//! - `slow-work`, no fault: changes that compute for 0.8-1.6 s ([`Kv::work`]) outlive the
//!   lock's 2 s lease (1-2 s long on memcached's whole-second clock) and lose members.
//!
//! # Fixed
//! One key holds the whole set (`table<name>_set`, members comma-separated); `add` and
//! `delete` are `gets` + `cas` loops (no lock); `has` and `fetch` read that one key. A
//! per-member key cannot be kept consistent with a member list on a store without
//! multi-key atomicity, so `has` pays for reading the list. `setup` creates the key once;
//! a miss means it was lost and the operation answers [`Ret::Lost`]. A timed-out `cas` is
//! not retried: `add` and `delete` look idempotent, but a retry after another client's
//! `delete` would add the member a second time (the harness found exactly that); the
//! outcome is reported unknown instead.
//!
//! Tolerates (linearizable), by scenario: no faults (`no-faults`); `crash`, `lose` and
//! `pause` (`crash-lose-pause`); `expire` (`expire`, which finds no lease to break); a
//! resending library (`retrying-client`: a resent `cas` that landed answers EXISTS, and
//! the re-read finds the change made); late delivery (`delay`: a late `cas` carries a
//! unique that has moved on). Safe
//! under `evict` (`evict`), `lru` (`lru`) and `restart` (`restart`): it answers `Lost` once
//! the set is gone. Untested: `skew` (no clock in the protocol), `shard-fail`.
//!
//! Not fixed yet: nothing a scenario shows.
//!
//! What no design on this store can fix: liveness under `evict`, `lru`, `restart` and
//! `shard-fail`, because the set's only copy is gone and nothing can rebuild it.
//!
//! Probes: `lock busy` (published: the lock's `add` found it held and the writer spins),
//! `lock gone at release` (published: the unlock's `delete` found no lock: it expired or
//! was lost while held), `cas lost` (fixed: the `cas` of the set answered `EXISTS`, another
//! change came first, and the change is tried again), `missing key` (fixed: the set is gone
//! and the operation answers `Lost`), `timeout resolved` (fixed: a timed-out `gets` sent
//! again).

use crate::expect::{Expect, Variant};
use crate::lincheck;
use crate::lock::{published_try_lock, published_unlock};
use crate::spec_adapter::{Adapted, View};
use kvsim::{
    CheckerLimits, FaultKind, History, JsonlFormat, JsonlOp, Kv, KvError, Model, Scenario, SetOp,
    SetRet, SimRng, StoreOutcome, Verdict, SIMULATED_LIMITS,
};
use serde_json::json;
use std::collections::BTreeSet;

/// The members the workload uses.
pub const MEMBERS: [&str; 3] = ["a", "b", "c"];

/// The published table's probes ([`Kv::probe`]): the published lock's, hit in
/// [`published_try_lock`] and [`published_unlock`] (its body has none).
const PUBLISHED_PROBES: &[&str] = &["lock busy", "lock gone at release"];

/// The fixed table's probes: its `gets`/`cas` change loop and its `has` and `fetch`.
const FIXED_PROBES: &[&str] = &["cas lost", "missing key", "timeout resolved"];

/// A table operation.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Op {
    /// `add(k)`.
    Add(String),
    /// `delete(k)`.
    Delete(String),
    /// `has(k)`.
    Has(String),
    /// `fetch()`.
    Fetch,
}

/// What a table operation returns.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Ret {
    /// `add` or `delete` returned.
    Done,
    /// `has` returned this.
    Has(bool),
    /// `fetch` returned these members (sorted).
    Members(Vec<String>),
    /// The fixed variant found the table gone and did nothing.
    Lost,
}

fn serialize(members: &[String]) -> Vec<u8> {
    members.join(",").into_bytes()
}

fn deserialize(data: &[u8]) -> Vec<String> {
    String::from_utf8_lossy(data)
        .split(',')
        .filter(|s| !s.is_empty())
        .map(str::to_string)
        .collect()
}

fn sorted(mut v: Vec<String>) -> Vec<String> {
    v.sort();
    v
}

/// The table of §8, in one of its variants.
#[derive(Clone, Debug)]
pub struct Table {
    variant: Variant,
    name: String,
    t: String,
}

/// The published table.
pub fn published() -> Table {
    Table::new(Variant::Published)
}

/// The fixed table.
pub fn fixed() -> Table {
    Table::new(Variant::Fixed)
}

impl Table {
    /// The table named `tbl` (keys `tabletbl_keys`, `tabletbl_v_<k>`, lock `locktbl`).
    pub fn new(variant: Variant) -> Table {
        Table {
            variant,
            name: "tbl".to_string(),
            t: "tabletbl".to_string(),
        }
    }

    /// Which variant this is.
    pub fn variant(&self) -> Variant {
        self.variant
    }

    fn keys_key(&self) -> Vec<u8> {
        format!("{}_keys", self.t).into_bytes()
    }

    fn member_key(&self, k: &str) -> Vec<u8> {
        format!("{}_v_{k}", self.t).into_bytes()
    }

    fn set_key(&self) -> Vec<u8> {
        format!("{}_set", self.t).into_bytes()
    }

    async fn published_change<K: Kv>(&self, kv: &K, k: &str, add: bool) -> Result<Ret, KvError> {
        while !published_try_lock(kv, &self.name).await? {}
        kv.mark("enter");
        let body = async {
            let mut array = match kv.get(&self.keys_key()).await? {
                Some(d) => deserialize(&d),
                None => Vec::new(),
            };
            let present = array.iter().any(|m| m == k);
            kv.work().await;
            if add && !present {
                array.push(k.to_string());
                kv.set(&self.member_key(k), b"1", 0).await?;
                kv.set(&self.keys_key(), &serialize(&array), 0).await?;
            } else if !add && present {
                array.retain(|m| m != k);
                kv.delete(&self.member_key(k)).await?;
                kv.set(&self.keys_key(), &serialize(&array), 0).await?;
            }
            Ok(Ret::Done)
        }
        .await;
        kv.mark("exit");
        published_unlock(kv, &self.name).await?;
        body
    }

    async fn fixed_change<K: Kv>(&self, kv: &K, k: &str, add: bool) -> Result<Ret, KvError> {
        let key = self.set_key();
        loop {
            let current = match kv.gets(&key).await {
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
            let mut members = deserialize(&current.data);
            let present = members.iter().any(|m| m == k);
            if add == present {
                return Ok(Ret::Done);
            }
            kv.work().await;
            if add {
                members.push(k.to_string());
            } else {
                members.retain(|m| m != k);
            }
            match kv.cas(&key, current.cas, &serialize(&members), 0).await {
                Ok(StoreOutcome::Stored) => return Ok(Ret::Done),
                Ok(StoreOutcome::NotFound) => {
                    kv.probe("missing key");
                    return Ok(Ret::Lost);
                }
                Ok(_) => {
                    kv.probe("cas lost");
                    continue;
                }
                // Not retried: between the lost reply and a retry another client may
                // have undone the change, and a retry would then apply it a second time.
                Err(e) => return Err(e),
            }
        }
    }
}

/// An operation's fields in a history file (read by `kvsim check-history --spec set`).
fn jsonl_op(op: &Op, ret: Option<&Ret>) -> JsonlOp {
    let fail = ret == Some(&Ret::Lost);
    match (op, ret) {
        (Op::Add(k), _) => JsonlOp::new("add", json!(k), json!(null), fail),
        (Op::Delete(k), _) => JsonlOp::new("remove", json!(k), json!(null), fail),
        (Op::Has(k), Some(Ret::Has(b))) => JsonlOp::new("contains", json!(k), json!(b), fail),
        (Op::Has(k), _) => JsonlOp::new("contains", json!(k), json!(null), fail),
        (Op::Fetch, Some(Ret::Members(m))) => JsonlOp::new("read", json!(null), json!(m), fail),
        (Op::Fetch, _) => JsonlOp::new("read", json!(null), json!(null), fail),
    }
}

/// How the published variant (and its repairs) stores its state
/// ([`Model::representation`]).
const REPRESENTATION: &str =
    "two kinds of key: tabletbl_keys holds the list of members comma-separated (what \
     fetch reads), and tabletbl_v_<k> holds \"1\" for each member k (what has(k) reads: \
     present means a member); add and delete change both under the lock of the lock \
     structure (locktbl), one set after the other, so a reader between the two sets \
     sees them disagree";

/// How the fixed variant stores its state ([`Model::representation`]).
const REPRESENTATION_FIXED: &str =
    "one key, tabletbl_set, holds the whole set, members comma-separated, made once \
     by setup; add and delete are gets then cas on the unique they read (no lock), \
     has and fetch read that one key; a miss means the set was lost (Lost)";

impl Model for Table {
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
            kv.add(&self.set_key(), b"", 0).await?;
        }
        Ok(())
    }

    async fn run<K: Kv>(&self, kv: &K, _client: usize, op: &Op) -> Result<Ret, KvError> {
        match (self.variant, op) {
            (Variant::Published | Variant::Repaired(_) | Variant::Proposed, Op::Add(k)) => {
                self.published_change(kv, k, true).await
            }
            (Variant::Published | Variant::Repaired(_) | Variant::Proposed, Op::Delete(k)) => {
                self.published_change(kv, k, false).await
            }
            (Variant::Published | Variant::Repaired(_) | Variant::Proposed, Op::Has(k)) => {
                Ok(Ret::Has(kv.get(&self.member_key(k)).await?.is_some()))
            }
            (Variant::Published | Variant::Repaired(_) | Variant::Proposed, Op::Fetch) => {
                Ok(Ret::Members(match kv.get(&self.keys_key()).await? {
                    Some(d) => sorted(deserialize(&d)),
                    None => Vec::new(),
                }))
            }
            (Variant::Fixed, Op::Add(k)) => self.fixed_change(kv, k, true).await,
            (Variant::Fixed, Op::Delete(k)) => self.fixed_change(kv, k, false).await,
            (Variant::Fixed, Op::Has(k)) => Ok(match kv.get(&self.set_key()).await? {
                Some(d) => Ret::Has(deserialize(&d).iter().any(|m| m == k)),
                None => {
                    kv.probe("missing key");
                    Ret::Lost
                }
            }),
            (Variant::Fixed, Op::Fetch) => Ok(match kv.get(&self.set_key()).await? {
                Some(d) => Ret::Members(sorted(deserialize(&d))),
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
        let k = MEMBERS[rng.index(MEMBERS.len())].to_string();
        match rng.below(10) {
            0..=2 => Op::Add(k),
            3 => Op::Delete(k),
            4..=6 => Op::Has(k),
            _ => Op::Fetch,
        }
    }

    fn history_format(&self) -> Option<JsonlFormat<Op, Ret>> {
        Some(JsonlFormat {
            spec: "set",
            args: Vec::new(),
            describe: jsonl_op,
        })
    }

    fn check(&self, history: &History<Op, Ret>) -> Verdict {
        self.check_with(history, &SIMULATED_LIMITS)
    }

    fn check_with(&self, history: &History<Op, Ret>, limits: &CheckerLimits) -> Verdict {
        lincheck::check(&SetSpec::default(), history, limits, |r| *r == Ret::Lost)
    }

    fn check_long_with(&self, history: &History<Op, Ret>, limits: &CheckerLimits) -> Verdict {
        self.check_with(history, limits)
    }
}

/// The sequential set: kvsim's [`kvsim::SetSpec`] over the table's operations, with the
/// table's own explanations.
pub type SetSpec = Adapted<SetView>;

/// The table's operations as [`kvsim::SetSpec`]'s.
#[derive(Clone, Copy, Debug, Default)]
pub struct SetView;

impl View for SetView {
    type Spec = kvsim::SetSpec<String>;
    type Op = Op;
    type Ret = Ret;

    fn spec(&self) -> kvsim::SetSpec<String> {
        kvsim::SetSpec::new()
    }

    fn op(&self, op: &Op) -> SetOp<String> {
        match op {
            Op::Add(k) => SetOp::Add(k.clone()),
            Op::Delete(k) => SetOp::Remove(k.clone()),
            Op::Has(k) => SetOp::Contains(k.clone()),
            Op::Fetch => SetOp::Read,
        }
    }

    fn ret(&self, ret: SetRet<String>) -> Ret {
        match ret {
            SetRet::Done => Ret::Done,
            SetRet::Member(has) => Ret::Has(has),
            SetRet::Members(all) => Ret::Members(all.into_iter().collect()),
        }
    }

    fn explain(&self, state: &BTreeSet<String>, op: &Op, expected: &Ret, found: &Ret) -> String {
        let members: Vec<&String> = state.iter().collect();
        match (op, found) {
            (Op::Has(k), Ret::Has(b)) => {
                format!("has({k}) returned {b}, but the table holds {members:?}")
            }
            (Op::Fetch, Ret::Members(m)) => {
                format!("fetch returned {m:?}, but the table holds {members:?}")
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
                .about("concurrent adds, deletes, membership tests and fetches")
                .runs(500),
            Expect::BROKEN_FIXED,
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
            Scenario::new("evict", 3, 4)
                .about("keys may be evicted at any step")
                .sometimes(&["missing key"])
                .faults(&[FaultKind::Evict])
                .fault_budget(1)
                .runs(500),
            Expect::BROKEN_FIXED,
        ),
        (
            Scenario::new("lru", 3, 4)
                .about("a shared cache under memory pressure: a neighbour's writes push the structure's least recently used keys out")
                .faults(&[FaultKind::Lru])
                .runs(500),
            Expect::BROKEN_FIXED,
        ),
        (
            Scenario::new("crash-lose-pause", 3, 4)
                .about("clients crash or stall; requests and replies get lost")
                .faults(&[FaultKind::Crash, FaultKind::Lose, FaultKind::Pause])
                .fault_budget(2)
                .runs(300),
            Expect::BROKEN_FIXED,
        ),
        (
            Scenario::new("restart", 3, 4)
                .about("the server restarts and loses its volatile data")
                .sometimes(&["missing key"])
                .faults(&[FaultKind::Restart])
                .fault_budget(1)
                .runs(500),
            Expect::BROKEN_FIXED,
        ),
        (
            Scenario::new("expire", 3, 4)
                .about("time jumps to the next expiry (the lock's lease) while work goes on")
                .faults(&[FaultKind::Expire])
                .fault_budget(1)
                .runs(500),
            Expect::BROKEN_FIXED,
        ),
        (
            Scenario::new("retrying-client", 3, 4)
                .about(
                    "lost requests and replies; the client library sends a timed-out command again",
                )
                .faults(&[FaultKind::Lose])
                .fault_budget(2)
                .retries(1)
                .runs(1000),
            Expect::BROKEN_FIXED,
        ),
        (
            Scenario::new("delay", 3, 4)
                .about("requests land late, after their client timed out and moved on")
                .faults(&[FaultKind::Delay])
                .fault_budget(2)
                .runs(1000),
            Expect::BROKEN_FIXED,
        ),
    ]
}
