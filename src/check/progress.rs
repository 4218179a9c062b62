//! Progress: every operation completes within a bound, unless a fault blocked it.
//!
//! An operation invoked at `call_ms` must complete by `call_ms + bound_ms + blocked`,
//! where `blocked` is the time within that span during which a fault held its client up
//! (a [`Blocked`] window for its client or for every client: a pause, a restart, a
//! partition). An operation that never completed is judged against the end of the history
//! (`end_ms`): it fails if its deadline passed before the end. Excused: operations whose
//! client crashed (a mark `crash`, as the simulator records it; a crash blocks forever) and
//! operations that ended with an unknown outcome (a timeout: a lost request or reply is a
//! fault). An operation with no completion and no `crash` mark is still pending.

use crate::history::{History, Outcome};
use crate::verdict::{Verdict, Violation};

/// A span of virtual time during which a fault may hold clients up.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Blocked {
    /// The client held up; `None` for every client (e.g. a server restart).
    pub client: Option<usize>,
    /// Start, virtual milliseconds.
    pub from_ms: u64,
    /// End, virtual milliseconds (exclusive).
    pub to_ms: u64,
}

/// The bound [`progress`] checks against.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct ProgressBound {
    /// How long an unblocked operation may take, in virtual milliseconds.
    pub bound_ms: u64,
    /// The virtual time the history ends at.
    pub end_ms: u64,
    /// When faults held clients up.
    pub blocked: Vec<Blocked>,
}

/// Checks that every operation of `history` completes in time (see the module docs); the
/// violation names the first operation (by invocation) that did not.
pub fn progress<Op, Ret>(history: &History<Op, Ret>, bound: &ProgressBound) -> Verdict {
    for (i, o) in history.ops.iter().enumerate() {
        let crashed = o.marks.iter().any(|m| m.label == "crash");
        let timed_out = o.ret.is_some() && matches!(o.outcome, Outcome::Unknown);
        if crashed || timed_out {
            continue;
        }
        let end = o.ret_ms.unwrap_or(bound.end_ms);
        // Extend the deadline by the blocked time inside [call, deadline), to a fixpoint:
        // a window that starts after the bound may still hold the operation up once the
        // bound is extended by an earlier one.
        let mut deadline = o.call_ms.saturating_add(bound.bound_ms);
        loop {
            let held: u64 = bound
                .blocked
                .iter()
                .filter(|b| b.client.is_none_or(|c| c == o.client))
                .map(|b| {
                    b.to_ms
                        .min(deadline)
                        .saturating_sub(b.from_ms.max(o.call_ms))
                })
                .sum();
            let extended = o
                .call_ms
                .saturating_add(bound.bound_ms)
                .saturating_add(held);
            if extended == deadline {
                break;
            }
            deadline = extended;
        }
        if end > deadline {
            let what = if o.ret_ms.is_some() {
                format!("completed at {end} ms")
            } else {
                format!("had not completed at the end of the history ({end} ms)")
            };
            return Verdict::Violation(Violation::new(
                "progress",
                format!(
                    "C{}'s operation invoked at {} ms {what}, past its deadline of {deadline} ms \
                     ({} ms bound plus {} ms blocked by faults)",
                    o.client,
                    o.call_ms,
                    bound.bound_ms,
                    deadline - o.call_ms - bound.bound_ms
                ),
                vec![i],
            ));
        }
    }
    Verdict::Ok
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::history::Operation;

    fn op(
        client: usize,
        call_ms: u64,
        ret_ms: Option<u64>,
        outcome: Outcome<()>,
    ) -> Operation<(), ()> {
        Operation {
            client,
            op: (),
            call: call_ms,
            ret: ret_ms,
            call_ms,
            ret_ms,
            outcome,
            marks: vec![],
        }
    }

    #[test]
    fn slow_operation_fails_unless_blocked() {
        let h = History {
            ops: vec![op(0, 0, Some(150), Outcome::Ok(()))],
        };
        let mut b = ProgressBound {
            bound_ms: 100,
            end_ms: 1000,
            blocked: vec![],
        };
        assert_eq!(
            progress(&h, &b).to_string(),
            "violation: progress: C0's operation invoked at 0 ms completed at 150 ms, past its deadline of 100 ms (100 ms bound plus 0 ms blocked by faults)"
        );
        b.blocked.push(Blocked {
            client: Some(1),
            from_ms: 10,
            to_ms: 60,
        });
        assert!(
            progress(&h, &b).is_violation(),
            "another client's pause does not excuse"
        );
        b.blocked.push(Blocked {
            client: None,
            from_ms: 90,
            to_ms: 140,
        });
        assert_eq!(progress(&h, &b), Verdict::Ok);
    }

    #[test]
    fn pending_operations_are_judged_at_the_end_and_crashes_excused() {
        let mut pending = History {
            ops: vec![op(0, 0, None, Outcome::Unknown)],
        };
        let b = ProgressBound {
            bound_ms: 100,
            end_ms: 1000,
            blocked: vec![],
        };
        assert!(progress(&pending, &b).is_violation());
        pending.ops[0].marks.push(crate::history::Mark {
            label: "crash".into(),
            seq: 1,
            time_ms: 5,
        });
        assert_eq!(progress(&pending, &b), Verdict::Ok);
        let timed_out = History {
            ops: vec![op(0, 0, Some(900), Outcome::Unknown)],
        };
        assert_eq!(progress(&timed_out, &b), Verdict::Ok);
    }
}
