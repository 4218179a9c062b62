//! The search's fast path for a partition without concurrency: when every operation has
//! a known return and each is invoked after the one before it returned, real time allows
//! one order only, so the partition is checked by replaying it, in time linear in its
//! length and with one state in memory (no memo, no list of entries).
//!
//! The outcome is the search's: the witness is that order; the counterexample names the
//! first operation the spec refuses, the operations before it as the partial
//! linearization, and the spec's reason in the state they lead to (the search's longest
//! partial linearization in such a partition is that prefix). Each operation replayed is
//! one step of the limits' step count.

use super::budget::Budget;
use super::search::Found;
use super::Counterexample;
use crate::history::{History, Outcome};
use crate::spec::SequentialSpec;

/// Replays `ops` (indices into `history.ops`) if they are sequential (see the module
/// docs); `None` when some operation overlaps another or has an unknown outcome, for the
/// search to decide.
pub(super) fn replay<S: SequentialSpec>(
    spec: &S,
    history: &History<S::Op, S::Ret>,
    ops: &[usize],
    budget: &mut Budget<'_>,
) -> Option<Found> {
    if !sequential(history, ops) {
        return None;
    }
    let mut state = spec.init();
    for (k, &i) in ops.iter().enumerate() {
        if let Some(why) = budget.tick(|| 0) {
            return Some(Found::Unknown(why));
        }
        let o = &history.ops[i];
        let Outcome::Ok(found) = &o.outcome else {
            unreachable!("a sequential partition has known returns only")
        };
        match spec.accepts(&state, &o.op, found) {
            Some(next) => state = next,
            None => {
                let expected = spec.step(&state, &o.op).1;
                return Some(Found::Violation(Counterexample {
                    partition: None,
                    op: i,
                    partial: ops[..k].to_vec(),
                    reason: spec.explain(&state, &o.op, &expected, found),
                }));
            }
        }
    }
    Some(Found::Ok(ops.to_vec()))
}

/// Whether every operation of `ops` returned (a known outcome) before the next one was
/// invoked.
fn sequential<Op, Ret>(history: &History<Op, Ret>, ops: &[usize]) -> bool {
    let mut last_ret: Option<u64> = None;
    for &i in ops {
        let o = &history.ops[i];
        let (Outcome::Ok(_), Some(ret)) = (&o.outcome, o.ret) else {
            return false;
        };
        if last_ret.is_some_and(|r| r >= o.call) || ret <= o.call {
            return false;
        }
        last_ret = Some(ret);
    }
    true
}

#[cfg(test)]
mod tests {
    use super::super::budget::Shared;
    use super::super::prune_tests::unpruned;
    use super::super::CheckerLimits;
    use super::*;
    use crate::history::Operation;
    use crate::specs::cas_register::{CasOp, CasRegisterSpec, CasRet};

    type Op = Operation<CasOp<u64>, CasRet<u64>>;

    fn op(i: u64, call: u64, ret: u64, op: CasOp<u64>, r: CasRet<u64>) -> Op {
        Operation {
            client: i as usize,
            op,
            call,
            ret: Some(ret),
            call_ms: 0,
            ret_ms: None,
            outcome: Outcome::Ok(r),
            marks: vec![],
        }
    }

    /// A random cas-register history of `n` operations, one after the other when `gap`,
    /// else each invoked before the one before it returned; mostly what a correct
    /// register returns, sometimes not.
    fn random(rng: &mut crate::rng::SimRng, n: u64, gap: bool) -> History<CasOp<u64>, CasRet<u64>> {
        let spec = CasRegisterSpec::<u64>::new();
        let mut state = spec.init();
        let ops = (0..n)
            .map(|i| {
                let o = match rng.index(3) {
                    0 => CasOp::Write(rng.below(3)),
                    1 => CasOp::Read,
                    _ => CasOp::Cas(rng.below(3), rng.below(3)),
                };
                let (next, mut ret) = spec.step(&state, &o);
                state = next;
                if rng.chance(0.03) {
                    // A wrong return (for a write, the same one: writes cannot be wrong).
                    ret = match ret {
                        CasRet::Value(_) => CasRet::Value(Some(rng.below(3))),
                        CasRet::Swapped(ok) => CasRet::Swapped(!ok),
                        other => other,
                    };
                }
                let call = if gap {
                    3 * i
                } else {
                    3 * i.saturating_sub(1) + 1
                };
                op(i, call, 3 * i + 2, o, ret)
            })
            .collect();
        History { ops }
    }

    fn kind(f: &Found) -> String {
        match f {
            Found::Ok(order) => format!("ok {order:?}"),
            Found::Violation(c) => format!("violation {} {:?} {}", c.op, c.partial, c.reason),
            Found::Unknown(why) => format!("unknown {why}"),
        }
    }

    /// On sequential histories the replay finds exactly what the search finds: the same
    /// witness, or the same operation, partial linearization and reason.
    #[test]
    fn the_replay_agrees_with_the_search_on_sequential_histories() {
        let spec = CasRegisterSpec::<u64>::new();
        let mut rng = crate::rng::SimRng::new(11);
        let mut violations = 0;
        for _ in 0..300 {
            let n = 1 + rng.below(40);
            let h = random(&mut rng, n, true);
            let all: Vec<usize> = (0..h.ops.len()).collect();
            let shared = Shared::new(CheckerLimits::none());
            let fast = replay(&spec, &h, &all, &mut Budget::new(&shared)).expect("sequential");
            let slow = unpruned(&spec, &h, None);
            assert_eq!(kind(&fast), kind(&slow), "{h:?}");
            violations += usize::from(matches!(fast, Found::Violation(_)));
        }
        assert!(violations > 50, "{violations} violations");
    }

    /// A wrong read after two writes is found, named, and explained.
    #[test]
    fn the_replay_finds_a_stale_read() {
        let spec = CasRegisterSpec::<u64>::new();
        let h = History {
            ops: vec![
                op(0, 0, 1, CasOp::Write(1), CasRet::Written),
                op(1, 2, 3, CasOp::Write(2), CasRet::Written),
                op(0, 4, 5, CasOp::Read, CasRet::Value(Some(1))),
            ],
        };
        let shared = Shared::new(CheckerLimits::none());
        let found = replay(&spec, &h, &[0, 1, 2], &mut Budget::new(&shared)).unwrap();
        let Found::Violation(c) = found else {
            panic!("expected a violation, found {}", kind(&found))
        };
        assert_eq!((c.op, c.partial), (2, vec![0, 1]));
        assert!(c.reason.contains('2'), "{}", c.reason);
    }

    /// Overlapping operations, or one of unknown outcome, are left to the search: real
    /// time allows more than one order there.
    #[test]
    fn concurrent_or_unknown_operations_are_not_replayed() {
        let spec = CasRegisterSpec::<u64>::new();
        let mut rng = crate::rng::SimRng::new(4);
        let shared = Shared::new(CheckerLimits::none());
        let h = random(&mut rng, 10, false);
        let all: Vec<usize> = (0..10).collect();
        assert!(replay(&spec, &h, &all, &mut Budget::new(&shared)).is_none());
        // Overlapping, the writes may go in either order: linearizable, which a replay in
        // call order would miss.
        let h = History {
            ops: vec![
                op(0, 0, 3, CasOp::Write(1), CasRet::Written),
                op(1, 1, 2, CasOp::Write(2), CasRet::Written),
                op(0, 4, 5, CasOp::Read, CasRet::Value(Some(1))),
            ],
        };
        assert!(replay(&spec, &h, &[0, 1, 2], &mut Budget::new(&shared)).is_none());
        assert!(
            super::super::check_linearizability(&spec, &h, CheckerLimits::none())
                .verdict()
                .is_ok()
        );
        let mut h = random(&mut rng, 10, true);
        h.ops[5].outcome = Outcome::Unknown;
        assert!(replay(&spec, &h, &all, &mut Budget::new(&shared)).is_none());
    }

    /// Each operation replayed is a step: a bound below the length is unknown.
    #[test]
    fn the_step_bound_holds_in_the_replay() {
        let spec = CasRegisterSpec::<u64>::new();
        let mut rng = crate::rng::SimRng::new(9);
        let h = random(&mut rng, 100, true);
        let all: Vec<usize> = (0..100).collect();
        let shared = Shared::new(CheckerLimits::steps(50));
        let found = replay(&spec, &h, &all, &mut Budget::new(&shared)).unwrap();
        assert_eq!(kind(&found), "unknown search step limit of 50 reached");
    }
}
