//! The mutual-exclusion property: no two critical sections overlap.
//!
//! A structure marks its critical section with `kv.mark("enter")` and `kv.mark("exit")`.
//! An operation that entered and never exited (its client crashed inside) is inside from
//! its `enter` until its last mark: a crashed client does nothing more, so it cannot
//! conflict with anyone afterwards. A client that is only slow (paused) does exit later,
//! and its section lasts until then.

use kvsim::history::History;
use kvsim::verdict::{Verdict, Violation};

/// One critical section: which operation, from which mark to which.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Section {
    op: usize,
    client: usize,
    enter: u64,
    exit: u64,
    enter_ms: u64,
    exit_ms: u64,
}

/// Checks that no two critical sections of `history` overlap.
pub fn check<Op, Ret>(history: &History<Op, Ret>) -> Verdict {
    let mut sections = Vec::new();
    for (i, o) in history.ops.iter().enumerate() {
        let mut open: Option<(u64, u64)> = None;
        for m in &o.marks {
            match (m.label.as_str(), open) {
                ("enter", None) => open = Some((m.seq, m.time_ms)),
                ("exit", Some((seq, ms))) => {
                    sections.push(Section {
                        op: i,
                        client: o.client,
                        enter: seq,
                        exit: m.seq,
                        enter_ms: ms,
                        exit_ms: m.time_ms,
                    });
                    open = None;
                }
                _ => {}
            }
        }
        if let Some((seq, ms)) = open {
            let last = o.marks.last().map_or((seq, ms), |m| (m.seq, m.time_ms));
            sections.push(Section {
                op: i,
                client: o.client,
                enter: seq,
                exit: last.0,
                enter_ms: ms,
                exit_ms: last.1,
            });
        }
    }
    sections.sort_by_key(|s| s.enter);
    for (k, a) in sections.iter().enumerate() {
        for b in &sections[k + 1..] {
            if b.enter < a.exit && b.op != a.op {
                return Verdict::Violation(Violation {
                    property: "mutual exclusion".to_string(),
                    reason: format!(
                        "C{} and C{} were both inside the critical section from {} to {}",
                        a.client,
                        b.client,
                        seconds(b.enter_ms),
                        seconds(a.exit_ms.min(b.exit_ms)),
                    ),
                    ops: vec![b.op, a.op],
                    partial: Vec::new(),
                });
            }
        }
    }
    Verdict::Ok
}

fn seconds(ms: u64) -> String {
    format!("{}.{:03} s", ms / 1000, ms % 1000)
}

#[cfg(test)]
mod tests {
    use super::*;
    use kvsim::history::{Mark, Operation, Outcome};

    fn op(client: usize, marks: &[(&str, u64)]) -> Operation<(), ()> {
        Operation {
            client,
            op: (),
            call: marks[0].1,
            ret: Some(marks[marks.len() - 1].1 + 1),
            call_ms: 0,
            ret_ms: Some(0),
            outcome: Outcome::Ok(()),
            marks: marks
                .iter()
                .map(|(l, s)| Mark {
                    label: l.to_string(),
                    seq: *s,
                    time_ms: *s * 1000,
                })
                .collect(),
        }
    }

    #[test]
    fn disjoint_sections_pass_and_overlapping_ones_fail() {
        let ok = History {
            ops: vec![
                op(0, &[("enter", 1), ("exit", 2)]),
                op(1, &[("enter", 3), ("exit", 4)]),
            ],
        };
        assert_eq!(check(&ok), Verdict::Ok);
        let bad = History {
            ops: vec![
                op(0, &[("enter", 1), ("exit", 4)]),
                op(1, &[("enter", 2), ("exit", 3)]),
            ],
        };
        let v = check(&bad);
        assert_eq!(
            v.to_string(),
            "violation: mutual exclusion: C0 and C1 were both inside the critical section from 2.000 s to 3.000 s"
        );
    }

    #[test]
    fn a_crashed_holder_stops_at_its_last_mark() {
        let h = History {
            ops: vec![op(0, &[("enter", 1)]), op(1, &[("enter", 3), ("exit", 4)])],
        };
        assert_eq!(check(&h), Verdict::Ok);
    }
}
