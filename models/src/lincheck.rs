//! The models' use of kvsim's linearizability checker: a structure's own "nothing
//! happened" answers (a detected loss, a lock that gave up) are operations that certainly
//! had no effect, and are judged as failed ones.

use kvsim::{linearizable, CheckerLimits, History, Outcome, SequentialSpec, Verdict};

/// Search steps one check of a simulated run may take before it answers `Unknown`
/// (deterministic, unlike a time limit): [`kvsim::SIMULATED_MAX_STEPS`], the bound
/// of the limits the simulator and the explorer pass to [`kvsim::Model::check_with`]
/// ([`kvsim::SIMULATED_LIMITS`]), and the default of `kvsim stress
/// --check-max-steps`. The seed structures' histories need far fewer.
pub const MAX_STEPS: u64 = kvsim::SIMULATED_MAX_STEPS;

/// Checks `history` against `spec` within `limits` (hitting one makes the verdict
/// `Unknown`), treating operations that returned what `no_effect` accepts as failed
/// (certainly no effect). A model's [`kvsim::Model::check_with`] passes its limits
/// on here: [`kvsim::SIMULATED_LIMITS`] in simulated runs, `kvsim stress`'s flags
/// in a stress run.
pub fn check<S: SequentialSpec>(
    spec: &S,
    history: &History<S::Op, S::Ret>,
    limits: &CheckerLimits,
    no_effect: impl Fn(&S::Ret) -> bool,
) -> Verdict {
    let mut h = history.clone();
    for o in &mut h.ops {
        if matches!(&o.outcome, Outcome::Ok(r) if no_effect(r)) {
            o.outcome = Outcome::Failed;
        }
    }
    let v = linearizable(spec, &h, *limits);
    match v {
        Verdict::Violation(mut x) => {
            x.property = format!("linearizability ({})", spec.name());
            Verdict::Violation(x)
        }
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use kvsim::Operation;

    /// A register of one number: `Some(v)` writes, `None` reads.
    struct Register;
    impl SequentialSpec for Register {
        type State = u8;
        type Op = Option<u8>;
        type Ret = u8;
        fn name(&self) -> &'static str {
            "register"
        }
        fn init(&self) -> u8 {
            0
        }
        fn step(&self, s: &u8, op: &Option<u8>) -> (u8, u8) {
            match op {
                Some(v) => (*v, 0),
                None => (*s, *s),
            }
        }
    }

    fn op(call: u64, ret: u64, op: Option<u8>, r: u8) -> Operation<Option<u8>, u8> {
        Operation {
            client: call as usize,
            op,
            call,
            ret: Some(ret),
            call_ms: 0,
            ret_ms: None,
            outcome: Outcome::Ok(r),
            marks: vec![],
        }
    }

    #[test]
    fn no_effect_answers_are_judged_as_failed_operations() {
        // A write answering 9 ("gave up") then a read of 0: fine only if the write had no
        // effect.
        let h = History {
            ops: vec![op(0, 1, Some(5), 9), op(2, 3, None, 0)],
        };
        let sim = &kvsim::SIMULATED_LIMITS;
        assert!(check(&Register, &h, sim, |_| false).is_violation());
        assert_eq!(check(&Register, &h, sim, |r| *r == 9), Verdict::Ok);
        // One search step is not enough for three reads: unknown; the simulated limits
        // are.
        let reads = History {
            ops: vec![op(0, 1, None, 0), op(2, 3, None, 0), op(4, 5, None, 0)],
        };
        let bounded = check(&Register, &reads, &CheckerLimits::steps(1), |_| false);
        assert!(matches!(bounded, Verdict::Unknown(_)), "{bounded}");
        assert_eq!(check(&Register, &reads, sim, |_| false), Verdict::Ok);
        let v = check(&Register, &h, sim, |_| false);
        assert!(
            v.to_string()
                .starts_with("violation: linearizability (register)"),
            "{v}"
        );
    }

    #[test]
    fn a_models_check_with_bounds_its_search_by_the_limits_it_is_given() {
        use crate::counter::{self, Op, Ret};
        use kvsim::Model;
        let read = |call: u64| Operation {
            client: call as usize,
            op: Op::Value,
            call,
            ret: Some(call + 1),
            call_ms: 0,
            ret_ms: None,
            outcome: Outcome::Ok(Ret::Value(0)),
            marks: vec![],
        };
        let reads = History {
            ops: vec![read(0), read(2), read(4)],
        };
        let model = counter::fixed();
        // No thread-local, no wrapper: the limits are the argument.
        let one = CheckerLimits::steps(1);
        let bounded = model.check_with(&reads, &one);
        assert!(matches!(bounded, Verdict::Unknown(_)), "{bounded}");
        assert_eq!(model.check(&reads), Verdict::Ok);
        assert_eq!(
            model.check_with(&reads, &kvsim::SIMULATED_LIMITS),
            Verdict::Ok
        );
        // The long check's own counter check needs no search; the limits reach only its
        // fallback.
        assert_eq!(model.check_long_with(&reads, &one), Verdict::Ok);
        // The FIFO's long check falls back to the search on repeated values: bounded by
        // the limits given.
        use crate::fifo::{self, Op as Q, Ret as R};
        let fifo_op = |call: u64, op: Q, ret: R| Operation {
            client: call as usize,
            op,
            call,
            ret: Some(call + 1),
            call_ms: 0,
            ret_ms: None,
            outcome: Outcome::Ok(ret),
            marks: vec![],
        };
        let twice = History {
            ops: vec![
                fifo_op(0, Q::Enqueue("a".into()), R::Enqueued),
                fifo_op(2, Q::Enqueue("a".into()), R::Enqueued),
                fifo_op(4, Q::Dequeue, R::Dequeued(Some("a".into()))),
            ],
        };
        let fifo = fifo::fixed();
        let bounded = fifo.check_long_with(&twice, &one);
        assert!(matches!(bounded, Verdict::Unknown(_)), "{bounded}");
        assert_eq!(fifo.check_long(&twice), Verdict::Ok);
    }
}
