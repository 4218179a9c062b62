//! §11 Cache fill: a value computed from a slow source and cached in memcached, read by
//! many clients at once (the recipe every memcached user writes; not one of the seed
//! articles, but the problem memcached's meta protocol was built for).
//!
//! # Published (the naive fill)
//! ```text
//! read():   v = get(cache); if v: return v
//!           v = compute()              (slow: reads the source, works for a while)
//!           set(cache, v, ttl); return v
//! update(): incr(source); delete(cache)
//! ```
//! Every client that misses recomputes: when the value is cold, expires or is deleted
//! while many clients read it, all of them query the source at once (a *stampede*, or
//! thundering herd), which is what takes databases down behind a cache.
//!
//! # Fixed (a lease, memcached's meta protocol)
//! ```text
//! read():   loop: mg cache v c N<lease>   (Kv::get_with_lease)
//!             hit or stale value (X/Z)  -> return it
//!             win (W)                   -> v = compute(); ms cache I C<cas> (set_invalidate)
//!             placeholder, no value (Z) -> sleep 50 ms, ask again
//! update(): incr(source); md cache I T<stale_ttl>   (Kv::invalidate: mark stale)
//! ```
//! The first client to miss wins the lease: memcached creates an empty placeholder that
//! lives for the lease's TTL and hands the win flag to one client only; the others wait
//! (no value yet) or are served the stale value while the winner recomputes. A winner
//! that dies leaves the placeholder to expire, and the next reader wins.
//!
//! # The property
//! *One recompute at a time*: two recomputes (the sections between the marks
//! `enter:recompute` and `exit:recompute`, from the decision to compute to the stored
//! value) overlap only when an update of the source may have acted between their starts:
//! then the first one's result is already stale and the second is the update's point
//! (memcached's `md … I` takes the win back for that reason). Any other overlap is the
//! stampede, reported with the clients that recomputed together.
//!
//! # Defects (no article)
//! None listed: no seed article describes this structure (it is kvsim's own naive fill
//! against memcached's lease), so there is no article text to quote. The naive fill's
//! one defect, the stampede, has its repair: `lease-on-miss` (a miss takes the lease,
//! `mg cache N`, and only its winner recomputes; the update still `delete`s), which
//! removes the findings of `no-faults`, `crash`, `retrying-client` and `delay`.
//!
//! # Findings (kvsim)
//! - Published, no faults: clients that miss the cold value together all recompute
//!   (`no-faults`, `updates`: every update's `delete` makes the next readers stampede).
//! - Fixed, first design: the harness found two recomputes without any fault, because an
//!   update's `md … I` takes the win back and hands it to the next reader while the first
//!   winner still computes. That is the protocol's intent (the first result is stale the
//!   moment the source changes), so the property excuses overlaps with an update between
//!   their starts; without one, the fixed fill never stampedes.
//! - Fixed: passes without faults, with updates and with crashes (the lease's placeholder
//!   expires and the next reader takes over); with a library that resends a timed-out
//!   command (`retrying-client`: a resent `mg … N` of a winner whose reply was lost finds
//!   the win already handed out and waits, and the placeholder expires) and with requests
//!   that land late (`delay`: a late `ms … C I` of a winner stores a stale value, which
//!   only one reader recomputes). A winner paused past its lease (`pause`),
//!   or a jump of time past it (`expire`), lets a second client win while the first still
//!   computes: no lease can tell a slow winner from a dead one, so either the readers wait
//!   for ever or two compute. Expected to fail in both variants.
//!
//! Probes: `miss` (published: a read missed and recomputes), `lease won`, `lease wait`
//! (a placeholder without a value: wait), `stale served` (fixed).

use crate::expect::{Expect, Variant};
use kvsim::{
    FaultKind, History, Kv, KvError, Lease, Model, Repair, Scenario, SimRng, Verdict, Violation,
};

/// How long the cached value lives (s).
pub const VALUE_TTL_SECS: i64 = 30;

/// How long a lease's placeholder lives (s): on memcached's whole-second clock 1-2 s,
/// longer than a recompute takes (0.2-0.8 s in the scenarios), shorter than a pause.
pub const LEASE_TTL_SECS: i64 = 2;

/// How long an invalidated value may still be served while one client recomputes (s).
pub const STALE_TTL_SECS: i64 = 30;

/// How long a waiting reader sleeps before it asks again (ms).
pub const WAIT_MS: u64 = 50;

const PUBLISHED_PROBES: &[&str] = &["miss"];
/// The naive fill's probes with repair `lease-on-miss` on (its update still deletes, so
/// no value is ever served stale).
const LEASE_ON_MISS_PROBES: &[&str] = &["lease won", "lease wait"];

/// The repairs of the naive fill ([`Model::repairs`]), each the fix of one defect.
pub const REPAIRS: &[Repair] = &[Repair {
    name: "lease-on-miss",
    fixes: "every client that misses recomputes (a stampede): a miss takes memcached's lease (mg N) and only its winner recomputes",
}];
const FIXED_PROBES: &[&str] = &["lease won", "lease wait", "stale served"];

/// A cache-fill operation.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Op {
    /// Read the value (recomputing it if the variant says so).
    Read,
    /// Change the source, and invalidate the cached value.
    Update,
}

/// What a cache-fill operation returns.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Ret {
    /// The value read from the cache (the source's version it was computed from).
    Cached(u64),
    /// The value this client computed (and stored).
    Computed(u64),
    /// The update is done.
    Updated,
}

/// The cache fill, in one of its variants.
#[derive(Clone, Debug)]
pub struct CacheFill {
    variant: Variant,
    cache: Vec<u8>,
    source: Vec<u8>,
}

/// The naive fill: every miss recomputes.
pub fn published() -> CacheFill {
    CacheFill::new(Variant::Published)
}

/// The fill under a lease (`mg … N`).
pub fn fixed() -> CacheFill {
    CacheFill::new(Variant::Fixed)
}

fn number(data: &[u8]) -> u64 {
    crate::counter::parse_number(data)
}

impl CacheFill {
    /// A cache fill of key `fillvalue`, computed from the number at `fillsource`.
    pub fn new(variant: Variant) -> CacheFill {
        CacheFill {
            variant,
            cache: b"fillvalue".to_vec(),
            source: b"fillsource".to_vec(),
        }
    }

    /// Which variant this is.
    pub fn variant(&self) -> Variant {
        self.variant
    }

    /// The slow computation: read the source, then work on it.
    async fn compute<K: Kv>(&self, kv: &K) -> Result<u64, KvError> {
        let v = kv.get(&self.source).await?.map_or(0, |d| number(&d));
        kv.work().await;
        Ok(v)
    }

    async fn published_read<K: Kv>(&self, kv: &K) -> Result<Ret, KvError> {
        if self.variant.repaired("lease-on-miss") {
            // Repair `lease-on-miss`: the read of the fixed fill (the update still deletes).
            return self.fixed_read(kv).await;
        }
        if let Some(v) = kv.get(&self.cache).await? {
            return Ok(Ret::Cached(number(&v)));
        }
        kv.probe("miss");
        kv.mark("enter:recompute");
        let v = self.compute(kv).await?;
        kv.set(&self.cache, v.to_string().as_bytes(), VALUE_TTL_SECS)
            .await?;
        kv.mark("exit:recompute");
        Ok(Ret::Computed(v))
    }

    async fn fixed_read<K: Kv>(&self, kv: &K) -> Result<Ret, KvError> {
        loop {
            match kv.get_with_lease(&self.cache, LEASE_TTL_SECS).await? {
                Lease::Hit(v) => return Ok(Ret::Cached(number(&v))),
                Lease::Stale(v) => {
                    kv.probe("stale served");
                    return Ok(Ret::Cached(number(&v)));
                }
                Lease::Win { cas, .. } => {
                    kv.probe("lease won");
                    kv.mark("enter:recompute");
                    let v = self.compute(kv).await?;
                    kv.set_invalidate(&self.cache, v.to_string().as_bytes(), VALUE_TTL_SECS, cas)
                        .await?;
                    kv.mark("exit:recompute");
                    return Ok(Ret::Computed(v));
                }
                Lease::Wait => {
                    kv.probe("lease wait");
                    kv.sleep_ms(WAIT_MS).await;
                }
            }
        }
    }

    async fn update<K: Kv>(&self, kv: &K) -> Result<Ret, KvError> {
        if kv.incr(&self.source, 1).await?.is_none() {
            kv.add(&self.source, b"1", 0).await?;
        }
        match self.variant {
            Variant::Fixed => {
                kv.invalidate(&self.cache, STALE_TTL_SECS).await?;
            }
            Variant::Published | Variant::Repaired(_) | Variant::Proposed => {
                kv.delete(&self.cache).await?;
            }
        }
        Ok(Ret::Updated)
    }
}

/// How the published variant (and its repairs) stores its state
/// ([`Model::representation`]).
const REPRESENTATION: &str =
    "fillsource holds the source's version in decimal (update is incr fillsource, \
     then delete fillvalue); fillvalue caches the value computed from it, with a TTL. \
     read is get fillvalue, and on a miss every reader computes from the source (its \
     work) and sets fillvalue: readers that miss together all recompute at once (a \
     stampede)";

/// How the fixed variant stores its state ([`Model::representation`]).
const REPRESENTATION_FIXED: &str =
    "fillsource holds the source's version in decimal; fillvalue caches the value \
     computed from it, read with memcached's lease (mg … N): the first reader to miss \
     gets the win flag and an empty placeholder that lives for the lease's TTL, \
     recomputes and stores with a cas on the placeholder; other readers get the stale \
     value or wait. update is incr fillsource, then md fillvalue I (marks the value \
     stale, so the next reader wins the recompute)";

impl Model for CacheFill {
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
        kv.add(&self.source, b"1", 0).await?;
        Ok(())
    }

    async fn run<K: Kv>(&self, kv: &K, _client: usize, op: &Op) -> Result<Ret, KvError> {
        match (self.variant, op) {
            (_, Op::Update) => self.update(kv).await,
            (Variant::Fixed, Op::Read) => self.fixed_read(kv).await,
            (Variant::Published | Variant::Repaired(_) | Variant::Proposed, Op::Read) => {
                self.published_read(kv).await
            }
        }
    }

    fn probes(&self) -> &'static [&'static str] {
        if self.variant.repaired("lease-on-miss") {
            return LEASE_ON_MISS_PROBES;
        }
        self.variant
            .published_or_fixed(PUBLISHED_PROBES, FIXED_PROBES)
    }

    fn repairs(&self) -> &'static [Repair] {
        REPAIRS
    }

    fn op(&self, _client: usize, _index: usize, rng: &mut SimRng) -> Op {
        if rng.chance(0.2) {
            Op::Update
        } else {
            Op::Read
        }
    }

    fn check(&self, history: &History<Op, Ret>) -> Verdict {
        stampede(history).map_or(Verdict::Ok, Verdict::Violation)
    }
}

/// A recompute: the operation, its client, and where it starts and ends in the history's
/// order (seq, ms); `None`: still running when the history ends.
struct Recompute {
    op: usize,
    client: usize,
    from: (u64, u64),
    to: Option<(u64, u64)>,
}

/// The first two recomputes that overlap with no update between their starts. An update
/// (the source changed: `delete` or `md … I`) that may have taken effect after the first
/// recompute started makes its result stale, so a second one is the point of the update,
/// not a stampede; an update that certainly completed before it started does not excuse
/// (one whose outcome is unknown never certainly completed: its request may land late).
fn stampede(history: &History<Op, Ret>) -> Option<Violation> {
    let mut sections: Vec<Recompute> = Vec::new();
    for (i, o) in history.ops.iter().enumerate() {
        let enter = o.marks.iter().find(|m| m.label == "enter:recompute");
        let Some(enter) = enter else { continue };
        let exit = o.marks.iter().find(|m| m.label == "exit:recompute");
        let crash = o.marks.iter().find(|m| m.label == "crash");
        let end = exit
            .or(crash)
            .map(|m| (m.seq, m.time_ms))
            .or(o.ret.map(|r| (r, o.ret_ms.unwrap_or(o.call_ms))));
        sections.push(Recompute {
            op: i,
            client: o.client,
            from: (enter.seq, enter.time_ms),
            to: end,
        });
    }
    sections.sort_by_key(|s| s.from);
    let updates: Vec<(u64, Option<u64>)> = history
        .ops
        .iter()
        .filter(|o| o.op == Op::Update)
        // An update whose outcome is unknown (it timed out) may act at any time after its
        // call: its `delete` or `md … I` can land late (the `delay` fault).
        .map(|o| match o.outcome {
            kvsim::Outcome::Unknown => (o.call, None),
            _ => (o.call, o.ret),
        })
        .collect();
    for (k, b) in sections.iter().enumerate() {
        for a in &sections[..k] {
            let overlaps = a.to.is_none_or(|to| to.0 > b.from.0);
            // An update that may have acted after `a` started and before `b` started.
            let excused = updates
                .iter()
                .any(|&(call, ret)| call < b.from.0 && ret.is_none_or(|r| r > a.from.0));
            if overlaps && !excused && a.client != b.client {
                let until = match (a.to, b.to) {
                    (Some(x), Some(y)) => format!(" to {} ms", x.1.min(y.1)),
                    (Some(x), None) | (None, Some(x)) => format!(" to {} ms", x.1),
                    (None, None) => String::new(),
                };
                return Some(Violation::new(
                    "one recompute at a time",
                    format!(
                        "a stampede: C{} and C{} both recomputed the value from {} ms{until}, \
                         with no update of the source in between",
                        a.client, b.client, b.from.1
                    ),
                    vec![a.op, b.op],
                ));
            }
        }
    }
    None
}

/// The named scenarios and what each variant is expected to get.
pub fn scenarios() -> Vec<(Scenario, Expect)> {
    vec![
        (
            Scenario::new("no-faults", 4, 2)
                .about("readers and a few updates; a recompute takes 0.2-0.8 s")
                .work_ms(200, 800)
                .runs(300),
            Expect::BROKEN_FIXED.shows(&["lease-on-miss"]),
        ),
        (
            Scenario::new("crash", 4, 2)
                .about("clients crash, also while recomputing: the lease's placeholder expires")
                .work_ms(200, 800)
                .faults(&[FaultKind::Crash])
                .fault_budget(1)
                .runs(300),
            Expect::BROKEN_FIXED.shows(&["lease-on-miss"]),
        ),
        (
            // A jump past the lease's expiry while its winner computes is a winner slower
            // than its lease, as a pause is.
            Scenario::new("expire", 4, 2)
                .about("time jumps to the next expiry: the value or a lease runs out")
                .work_ms(200, 800)
                .faults(&[FaultKind::Expire])
                .fault_budget(1)
                .runs(300),
            Expect::impossible("an expiry the server applies on its own clock ends the value whatever the clients do; a reader that arrives after it must recompute"),
        ),
        (
            Scenario::new("pause", 4, 2)
                .about("a recomputing client stalls past its lease")
                .work_ms(200, 800)
                .faults(&[FaultKind::Pause])
                .fault_budget(1)
                .runs(500),
            Expect::impossible("a lease holder paused past its lease is indistinguishable, to the store, from one that crashed: another client must be let in"),
        ),
        (
            Scenario::new("retrying-client", 4, 2)
                .about("lost requests and replies; the client library sends a timed-out command again, as most do")
                .work_ms(200, 800)
                .faults(&[FaultKind::Lose])
                .fault_budget(2)
                .retries(1)
                .runs(300),
            Expect::BROKEN_FIXED.shows(&["lease-on-miss"]),
        ),
        (
            // A late `ms` of a winner, a late `delete` or `md … I` of an update. Recomputes
            // of 0.2-0.6 s and 200 ms timeouts: a winner that waits out one timeout still
            // ends within the lease's shortest life (1 s), since a winner slower than its
            // lease is `pause`'s finding, not a late request's.
            Scenario::new("delay", 4, 2)
                .about("a request lands late, after its client timed out and moved on")
                .work_ms(200, 600)
                .faults(&[FaultKind::Delay])
                .fault_budget(2)
                .timeout_ms(200)
                .runs(300),
            Expect::BROKEN_FIXED.shows(&["lease-on-miss"]),
        ),
    ]
}
