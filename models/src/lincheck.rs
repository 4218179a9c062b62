//! The models' use of kvsim's linearizability checker: a structure's own "nothing
//! happened" answers (a detected loss, a lock that gave up) are operations that certainly
//! had no effect, and are judged as failed ones.

use kvsim::check::{linearizable, CheckerLimits};
use kvsim::history::{History, Outcome};
use kvsim::spec::SequentialSpec;
use kvsim::verdict::Verdict;

/// Search steps one check may take before it answers `Unknown` (deterministic, unlike a
/// time limit). The seed structures' histories need far fewer.
pub const MAX_STEPS: u64 = 5_000_000;

thread_local! {
    /// The limits [`with_limits`] set for this thread, if any.
    static LIMITS: std::cell::Cell<Option<CheckerLimits>> = const { std::cell::Cell::new(None) };
}

/// Runs `f` with the models' checks on this thread bounded by `limits` instead of
/// [`MAX_STEPS`] (for `kvsim stress`, whose histories come from real servers; simulated
/// runs keep the deterministic step limit). Hitting a limit makes a check `Unknown`.
pub fn with_limits<R>(limits: CheckerLimits, f: impl FnOnce() -> R) -> R {
    struct Restore(Option<CheckerLimits>);
    impl Drop for Restore {
        fn drop(&mut self) {
            LIMITS.with(|l| l.set(self.0));
        }
    }
    let _restore = Restore(LIMITS.with(|l| l.replace(Some(limits))));
    f()
}

/// Checks `history` against `spec`, treating operations that returned what `no_effect`
/// accepts as failed (certainly no effect).
pub fn check<S: SequentialSpec>(
    spec: &S,
    history: &History<S::Op, S::Ret>,
    no_effect: impl Fn(&S::Ret) -> bool,
) -> Verdict {
    let mut h = history.clone();
    for o in &mut h.ops {
        if matches!(&o.outcome, Outcome::Ok(r) if no_effect(r)) {
            o.outcome = Outcome::Failed;
        }
    }
    let limits = LIMITS
        .with(std::cell::Cell::get)
        .unwrap_or(CheckerLimits::steps(MAX_STEPS));
    let v = linearizable(spec, &h, limits);
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
    use kvsim::history::Operation;

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
        assert!(check(&Register, &h, |_| false).is_violation());
        assert_eq!(check(&Register, &h, |r| *r == 9), Verdict::Ok);
        // One search step is not enough for three reads: unknown, then back to normal.
        let reads = History {
            ops: vec![op(0, 1, None, 0), op(2, 3, None, 0), op(4, 5, None, 0)],
        };
        let bounded = with_limits(CheckerLimits::steps(1), || {
            check(&Register, &reads, |_| false)
        });
        assert!(matches!(bounded, Verdict::Unknown(_)), "{bounded}");
        assert_eq!(check(&Register, &reads, |_| false), Verdict::Ok);
        let v = check(&Register, &h, |_| false);
        assert!(
            v.to_string()
                .starts_with("violation: linearizability (register)"),
            "{v}"
        );
    }
}
