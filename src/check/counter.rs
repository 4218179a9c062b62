//! A linearizability check for counters ([`CounterSpec`]) that is polynomial in the
//! history's length: exponential only in how many operations run at once, not in how many
//! there are.
//!
//! 1. **Bounds** (where every amount added is non-negative, so the counter never falls): a
//!    read must return at least what the increments that completed before it began add
//!    up to, and at most what every increment begun before it returned (complete or of
//!    unknown outcome) adds up to; an increment returning the new value (`incr`) likewise,
//!    its own amount included. A value outside is a certain violation, found in
//!    `O(n log n)`.
//! 2. **Just-in-time linearization** (Lowe's algorithm, breadth first): the history's
//!    events are replayed in order, keeping every configuration reachable so far, a
//!    configuration being the counter's value, which of the running operations have
//!    taken effect (a read: has seen its value), and how many of the increments of
//!    unknown outcome begun so far have taken effect, per amount (such increments are
//!    interchangeable, so they are counted, not named). An operation's completion keeps
//!    the configurations where it took effect; none left is a violation. The number of
//!    configurations is bounded by 2^(operations running at once) × the ways the unknown
//!    increments can have landed; past [`MAX_CONFIGS`] the check is inconclusive and the
//!    caller falls back to the general checker (or answers unknown). This step is exact:
//!    `ok` only when every completion found a configuration, so a linearization exists.
//!
//! Operations that failed, and reads of unknown outcome, had no effect and are left out.

use crate::check::linearizability::{linearizable, CheckerLimits};
use crate::history::{History, Outcome};
use crate::specs::counter::{CounterOp, CounterRet, CounterSpec};
use crate::verdict::{Verdict, Violation};
use std::collections::BTreeSet;

/// The property a violation names.
const PROPERTY: &str = "linearizability (counter)";

/// Configurations the replay may hold at once before it gives up (inconclusive).
pub const MAX_CONFIGS: usize = 1 << 16;

/// What [`check`] found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CounterCheck {
    /// Linearizable.
    Ok,
    /// Certainly not linearizable.
    Violation(Violation),
    /// Too many operations at once for the replay: ask the general checker.
    Inconclusive(String),
}

/// One operation as the check sees it.
#[derive(Clone, Copy, Debug)]
enum Kind {
    /// A completed read of this value.
    Read(i64),
    /// A completed add of this amount.
    Add(i64),
    /// A completed add of this amount that returned this new value.
    AddGet(i64, i64),
    /// An add of unknown outcome, of the amount with this index (in `amounts`).
    Unknown(usize),
}

/// A configuration of the replay: the value, the running operations (by slot) that took
/// effect, and how many unknown adds of each amount took effect.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
struct Config {
    value: i64,
    done: u64,
    landed: Vec<u32>,
}

/// What one operation is to the check: how a history of other operation types
/// ([`check_by`]) maps onto a counter's.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CounterView {
    /// A read that returned this value.
    Read(i64),
    /// An add of this amount that completed.
    Add(i64),
    /// An add of this amount that completed returning this new value.
    AddGet(i64, i64),
    /// An add of this amount of unknown outcome (it may have taken effect, or not).
    UnknownAdd(i64),
    /// An operation that certainly had no effect and saw nothing (failed; a read of
    /// unknown outcome).
    Nothing,
    /// An operation that returned what no counter operation can (a violation).
    Invalid(String),
}

/// Checks a counter history (see the module docs).
pub fn check(history: &History<CounterOp, CounterRet>) -> CounterCheck {
    check_by(history, |op, outcome| match (op, outcome) {
        (_, Outcome::Failed) | (CounterOp::Read, Outcome::Unknown) => CounterView::Nothing,
        (CounterOp::Read, Outcome::Ok(CounterRet::Value(x))) => CounterView::Read(*x),
        (CounterOp::Add(n), Outcome::Ok(CounterRet::Done)) => CounterView::Add(*n),
        (CounterOp::AddGet(n), Outcome::Ok(CounterRet::Value(x))) => CounterView::AddGet(*n, *x),
        (CounterOp::Add(n) | CounterOp::AddGet(n), Outcome::Unknown) => CounterView::UnknownAdd(*n),
        (op, Outcome::Ok(r)) => CounterView::Invalid(format!("{op:?} cannot return {r:?}")),
    })
}

/// Checks a history of any operation types that `view` maps onto a counter's (a model's
/// own counter, say), without copying it.
pub fn check_by<Op, Ret>(
    history: &History<Op, Ret>,
    view: impl Fn(&Op, &Outcome<Ret>) -> CounterView,
) -> CounterCheck {
    let mut amounts: Vec<i64> = Vec::new();
    let mut kinds: Vec<Option<Kind>> = Vec::with_capacity(history.ops.len());
    for (i, o) in history.ops.iter().enumerate() {
        let kind = match view(&o.op, &o.outcome) {
            CounterView::Nothing => None,
            CounterView::Read(x) => Some(Kind::Read(x)),
            CounterView::Add(n) => Some(Kind::Add(n)),
            CounterView::AddGet(n, x) => Some(Kind::AddGet(n, x)),
            CounterView::UnknownAdd(n) => {
                let id = match amounts.iter().position(|&a| a == n) {
                    Some(id) => id,
                    None => {
                        amounts.push(n);
                        amounts.len() - 1
                    }
                };
                Some(Kind::Unknown(id))
            }
            CounterView::Invalid(why) => {
                return CounterCheck::Violation(Violation::new(PROPERTY, why, vec![i]))
            }
        };
        kinds.push(kind);
    }
    if let Some(v) = bounds(history, &kinds, &amounts) {
        return CounterCheck::Violation(v);
    }
    replay(history, &kinds, &amounts)
}

/// The amount an operation adds, if it adds.
fn added(kind: Kind, amounts: &[i64]) -> Option<i64> {
    match kind {
        Kind::Read(_) => None,
        Kind::Add(n) | Kind::AddGet(n, _) => Some(n),
        Kind::Unknown(id) => Some(amounts[id]),
    }
}

/// Step 1 (see the module docs), for histories whose amounts are all non-negative.
fn bounds<Op, Ret>(
    history: &History<Op, Ret>,
    kinds: &[Option<Kind>],
    amounts: &[i64],
) -> Option<Violation> {
    let ops = &history.ops;
    let adds = || {
        kinds
            .iter()
            .enumerate()
            .filter_map(|(i, k)| Some((i, added((*k)?, amounts)?)))
    };
    // A counter that may fall, or sums that overflow: no bounds.
    if adds().any(|(_, n)| n < 0)
        || adds()
            .try_fold(0i64, |s, (_, n)| s.checked_add(n))
            .is_none()
    {
        return None;
    }
    // Completed adds by completion, and every add by invocation, with running sums.
    let mut done: Vec<(u64, i64)> = adds()
        .filter(|&(i, _)| !matches!(kinds[i], Some(Kind::Unknown(_))))
        .map(|(i, n)| (ops[i].ret.unwrap_or(u64::MAX), n))
        .collect();
    let mut begun: Vec<(u64, i64)> = adds().map(|(i, n)| (ops[i].call, n)).collect();
    done.sort_unstable();
    begun.sort_unstable();
    let prefix = |v: &[(u64, i64)]| -> Vec<i64> {
        std::iter::once(0)
            .chain(v.iter().scan(0i64, |s, &(_, n)| {
                *s = s.saturating_add(n);
                Some(*s)
            }))
            .collect()
    };
    let (done_sum, begun_sum) = (prefix(&done), prefix(&begun));
    for (i, k) in kinds.iter().enumerate() {
        let (x, own, what) = match k {
            Some(Kind::Read(x)) => (*x, 0, "read"),
            Some(Kind::AddGet(n, x)) => (*x, *n, "adding"),
            _ => continue,
        };
        let o = &ops[i];
        let ret = o.ret.unwrap_or(u64::MAX);
        let lower = done_sum[done.partition_point(|&(r, _)| r < o.call)].saturating_add(own);
        // Every add begun before the completion, this one included.
        let upper = begun_sum[begun.partition_point(|&(c, _)| c < ret)];
        let said = if what == "read" {
            format!("read returned {x}")
        } else {
            format!("adding {own} returned {x}")
        };
        if x < lower {
            return Some(Violation::new(
                PROPERTY,
                format!(
                    "{said}, but the increments completed before it began already add up \
                     to {lower}"
                ),
                vec![i],
            ));
        }
        if x > upper {
            return Some(Violation::new(
                PROPERTY,
                format!(
                    "{said}, but all the increments begun before it returned add up to \
                     only {upper}"
                ),
                vec![i],
            ));
        }
    }
    None
}

/// Step 2 (see the module docs).
fn replay<Op, Ret>(
    history: &History<Op, Ret>,
    kinds: &[Option<Kind>],
    amounts: &[i64],
) -> CounterCheck {
    let ops = &history.ops;
    // Events: (position, is completion, op); completions of known operations only.
    let mut events: Vec<(u64, bool, usize)> = Vec::with_capacity(ops.len() * 2);
    for (i, k) in kinds.iter().enumerate() {
        let Some(k) = k else { continue };
        events.push((ops[i].call, false, i));
        if !matches!(k, Kind::Unknown(_)) {
            events.push((ops[i].ret.unwrap_or(u64::MAX), true, i));
        }
    }
    events.sort_unstable();
    let mut configs: BTreeSet<Config> = BTreeSet::from([Config {
        value: 0,
        done: 0,
        landed: vec![0; amounts.len()],
    }]);
    // Unknown adds begun so far, per amount.
    let mut begun = vec![0u32; amounts.len()];
    // The running known operations: slot → op.
    let mut slots: [Option<usize>; 64] = [None; 64];
    let mut slot_of = vec![usize::MAX; ops.len()];
    for (_, completion, i) in events {
        let kind = kinds[i].expect("events are of checked operations");
        if completion {
            let bit = 1u64 << slot_of[i];
            let before = configs.len();
            let (took, _): (Vec<Config>, Vec<Config>) = std::mem::take(&mut configs)
                .into_iter()
                .partition(|c| c.done & bit != 0);
            if took.is_empty() {
                return CounterCheck::Violation(Violation::new(
                    PROPERTY,
                    format!(
                        "{}, but no order of the operations gives that ({before} ways \
                         the operations running with it may have landed, none fits)",
                        match kind {
                            Kind::Read(x) => format!("read returned {x}"),
                            Kind::AddGet(n, x) => format!("adding {n} returned {x}"),
                            _ => "an add completed".to_string(),
                        }
                    ),
                    vec![i],
                ));
            }
            configs = took
                .into_iter()
                .map(|mut c| {
                    c.done &= !bit;
                    c
                })
                .collect();
            slots[slot_of[i]] = None;
            continue;
        }
        // An invocation: the new operation's moves, then the closure under every move.
        match kind {
            Kind::Unknown(id) => begun[id] += 1,
            _ => {
                let Some(free) = slots.iter().position(Option::is_none) else {
                    return CounterCheck::Inconclusive(
                        "more than 64 operations of known outcome run at once".to_string(),
                    );
                };
                slots[free] = Some(i);
                slot_of[i] = free;
            }
        }
        let mut work: Vec<Config> = configs.iter().cloned().collect();
        while let Some(c) = work.pop() {
            for next in moves(&c, &slots, &slot_of, kinds, amounts, &begun) {
                if !configs.contains(&next) {
                    if configs.len() >= MAX_CONFIGS {
                        return CounterCheck::Inconclusive(format!(
                            "more than {MAX_CONFIGS} ways the running operations may have \
                             landed"
                        ));
                    }
                    configs.insert(next.clone());
                    work.push(next);
                }
            }
        }
    }
    CounterCheck::Ok
}

/// The configurations one operation taking effect leads to from `c`.
fn moves<'a>(
    c: &'a Config,
    slots: &'a [Option<usize>; 64],
    slot_of: &'a [usize],
    kinds: &'a [Option<Kind>],
    amounts: &'a [i64],
    begun: &'a [u32],
) -> impl Iterator<Item = Config> + 'a {
    let known = slots.iter().flatten().filter_map(move |&i| {
        let bit = 1u64 << slot_of[i];
        if c.done & bit != 0 {
            return None;
        }
        let value = match kinds[i]? {
            Kind::Read(x) => (c.value == x).then_some(x)?,
            Kind::Add(n) => c.value.wrapping_add(n),
            Kind::AddGet(n, x) => (c.value.wrapping_add(n) == x).then_some(x)?,
            Kind::Unknown(_) => return None,
        };
        Some(Config {
            value,
            done: c.done | bit,
            landed: c.landed.clone(),
        })
    });
    let unknown = (0..amounts.len())
        .filter(move |&id| c.landed[id] < begun[id])
        .map(move |id| {
            let mut landed = c.landed.clone();
            landed[id] += 1;
            Config {
                value: c.value.wrapping_add(amounts[id]),
                done: c.done,
                landed,
            }
        });
    known.chain(unknown)
}

/// Linearizability of a counter history: [`check`], or where it is inconclusive the
/// general checker ([`linearizable`]) within `limits`.
pub fn linearizable_counter(
    history: &History<CounterOp, CounterRet>,
    limits: CheckerLimits,
) -> Verdict {
    match check(history) {
        CounterCheck::Ok => Verdict::Ok,
        CounterCheck::Violation(v) => Verdict::Violation(v),
        CounterCheck::Inconclusive(_) => linearizable(&CounterSpec, history, limits),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::check::bruteforce;
    use crate::history::Operation;
    use crate::rng::SimRng;

    type O = Operation<CounterOp, CounterRet>;

    fn op(c: usize, op: CounterOp, call: u64, ret: Option<u64>, out: Outcome<CounterRet>) -> O {
        Operation {
            client: c,
            op,
            call,
            ret,
            call_ms: call,
            ret_ms: ret,
            outcome: out,
            marks: vec![],
        }
    }

    fn add(c: usize, n: i64, call: u64, ret: u64) -> O {
        op(
            c,
            CounterOp::Add(n),
            call,
            Some(ret),
            Outcome::Ok(CounterRet::Done),
        )
    }

    fn read(c: usize, x: i64, call: u64, ret: u64) -> O {
        op(
            c,
            CounterOp::Read,
            call,
            Some(ret),
            Outcome::Ok(CounterRet::Value(x)),
        )
    }

    fn reason(h: &History<CounterOp, CounterRet>) -> String {
        match check(h) {
            CounterCheck::Violation(v) => v.reason,
            other => panic!("expected a violation, found {other:?}"),
        }
    }

    #[test]
    fn reads_outside_their_bounds_are_violations() {
        let h = History {
            ops: vec![add(0, 2, 0, 1), read(1, 1, 2, 3)],
        };
        assert_eq!(
            reason(&h),
            "read returned 1, but the increments completed before it began already add up to 2"
        );
        let h = History {
            ops: vec![read(1, 1, 0, 1), add(0, 2, 2, 3)],
        };
        assert_eq!(
            reason(&h),
            "read returned 1, but all the increments begun before it returned add up to only 0"
        );
        // An add of unknown outcome may have landed: 3 is possible, 4 is not.
        let unknown = op(0, CounterOp::Add(3), 0, None, Outcome::Unknown);
        let h = History {
            ops: vec![unknown.clone(), read(1, 3, 1, 2)],
        };
        assert_eq!(check(&h), CounterCheck::Ok);
        let h = History {
            ops: vec![unknown, read(1, 4, 1, 2)],
        };
        assert!(reason(&h).ends_with("add up to only 3"));
    }

    #[test]
    fn reads_within_bounds_can_still_be_violations() {
        // +1 and +2 run while one read sees 1 and another 2: each within its bounds, but
        // no order gives both (0 → 1 → 3 or 0 → 2 → 3).
        let h = History {
            ops: vec![
                add(0, 1, 0, 9),
                add(1, 2, 1, 8),
                read(2, 1, 2, 6),
                read(3, 2, 3, 7),
            ],
        };
        assert!(
            reason(&h).starts_with("read returned 2, but no order"),
            "{}",
            reason(&h)
        );
        assert!(!bruteforce::linearizable(&CounterSpec, &h));
    }

    fn random_history(rng: &mut SimRng, n: usize) -> History<CounterOp, CounterRet> {
        let draw = |rng: &mut SimRng| match rng.below(10) {
            0..=3 => CounterOp::Read,
            4..=7 => CounterOp::Add(rng.range_inclusive(1, 3) as i64),
            8 => CounterOp::AddGet(rng.range_inclusive(1, 2) as i64),
            _ => CounterOp::Add(-1),
        };
        let corrupt = |rng: &mut SimRng, r: &mut CounterRet| {
            if let CounterRet::Value(x) = r {
                *x += rng.range_inclusive(0, 2) as i64 - 1;
            }
        };
        super::super::random_history::random_history(&CounterSpec, rng, n, draw, 0.15, corrupt)
    }

    #[test]
    fn agrees_with_brute_force_on_random_histories() {
        let mut rng = SimRng::new(32);
        let (mut ok, mut bad) = (0, 0);
        for round in 0..20_000 {
            let h = random_history(&mut rng, 2 + round % 7);
            let brute = bruteforce::linearizable(&CounterSpec, &h);
            match check(&h) {
                CounterCheck::Ok => {
                    assert!(brute, "the check passed a non-linearizable {h:#?}");
                    ok += 1;
                }
                CounterCheck::Violation(v) => {
                    assert!(!brute, "the check found {v:?} in a linearizable {h:#?}");
                    bad += 1;
                }
                CounterCheck::Inconclusive(why) => panic!("{why}: {h:#?}"),
            }
        }
        assert!(ok > 5_000 && bad > 2_000, "ok {ok}, violations {bad}");
    }

    #[test]
    fn many_unknown_adds_are_counted_not_named() {
        // 40 adds of unknown outcome (2^40 subsets, 41 sums) and reads that need some.
        let mut ops: Vec<O> = (0..40)
            .map(|i| op(i, CounterOp::Add(1), i as u64, None, Outcome::Unknown))
            .collect();
        ops.push(read(99, 17, 100, 101));
        ops.push(read(99, 31, 102, 103));
        ops.push(read(99, 30, 104, 105));
        let h = History { ops };
        assert!(reason(&h).starts_with("read returned 30, but no order"));
        let mut ok = h.clone();
        ok.ops.pop();
        assert_eq!(check(&ok), CounterCheck::Ok);
    }
}
