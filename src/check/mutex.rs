//! Mutual exclusion: no two clients inside a lock's critical section at once.
//!
//! Critical sections come from the operations' marks (see [`crate::kv::Kv::mark`]): a
//! mark `enter` opens one, the next `exit` of the same operation closes it. Marks
//! `enter:NAME` / `exit:NAME` name the lock, for histories with several locks (plain
//! `enter`/`exit` is the lock named ""). Sections are ordered by the marks' `seq` (the
//! history's total order of events); times in messages are the marks' `time_ms`.
//!
//! A section with no `exit`:
//! - closes at a mark `crash` of the same operation if there is one (a crashed client
//!   runs no more code, so it is no longer inside; the simulator marks crashes so);
//! - else, if the operation completed (`ret` is `Some`), closes at its completion;
//! - else (the client is paused or still running when the history ends) stays open to
//!   the end of the history: such a client is still inside, which is exactly the
//!   "holder paused past the lock's expiry" case.

use crate::history::{History, Mark};
use crate::verdict::{Verdict, Violation};
use std::collections::BTreeMap;

/// One critical section, as found in the marks.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Section {
    op: usize,
    client: usize,
    from: (u64, u64),
    /// (seq, time_ms) where it closes; `None`: open to the end of the history.
    to: Option<(u64, u64)>,
}

/// Checks that no two critical sections of the same lock overlap; the violation names the
/// two operations (first the one that entered first) and when both were inside.
pub fn mutual_exclusion<Op, Ret>(history: &History<Op, Ret>) -> Verdict {
    let mut locks: BTreeMap<&str, Vec<Section>> = BTreeMap::new();
    for (i, o) in history.ops.iter().enumerate() {
        let mut marks: Vec<&Mark> = o.marks.iter().collect();
        marks.sort_by_key(|m| m.seq);
        let mut open: BTreeMap<&str, (u64, u64)> = BTreeMap::new();
        for m in &marks {
            if let Some(name) = lock_name(&m.label, "enter") {
                open.entry(name).or_insert((m.seq, m.time_ms));
            } else if let Some(name) = lock_name(&m.label, "exit") {
                if let Some(from) = open.remove(name) {
                    locks.entry(name).or_default().push(Section {
                        op: i,
                        client: o.client,
                        from,
                        to: Some((m.seq, m.time_ms)),
                    });
                }
            }
        }
        let crash = marks
            .iter()
            .find(|m| m.label == "crash")
            .map(|m| (m.seq, m.time_ms));
        let end = crash.or(o.ret.map(|r| (r, o.ret_ms.unwrap_or(o.call_ms))));
        for (name, from) in open {
            locks.entry(name).or_default().push(Section {
                op: i,
                client: o.client,
                from,
                to: end,
            });
        }
    }
    for (name, mut sections) in locks {
        sections.sort_by_key(|s| s.from);
        // Sweep in order of entry: the section that is still open longest so far.
        let mut widest: Option<&Section> = None;
        for s in &sections {
            if let Some(w) = widest {
                let inside = w.to.is_none_or(|to| to.0 > s.from.0);
                if inside && w.client != s.client {
                    let until = match (w.to, s.to) {
                        (Some(a), Some(b)) => Some(if a.0 < b.0 { a } else { b }),
                        (Some(a), None) | (None, Some(a)) => Some(a),
                        (None, None) => None,
                    };
                    let lock = if name.is_empty() {
                        "the critical section".to_string()
                    } else {
                        format!("the critical section of lock {name}")
                    };
                    let until = match until {
                        Some((_, t)) => format!("{} ms", t),
                        None => "the end of the history".to_string(),
                    };
                    return Verdict::Violation(Violation::new(
                        "mutual exclusion",
                        format!(
                            "C{} and C{} were both inside {lock} from {} ms to {until}",
                            w.client, s.client, s.from.1
                        ),
                        vec![w.op, s.op],
                    ));
                }
            }
            let longer = widest.is_none_or(|w| match (w.to, s.to) {
                (None, _) => false,
                (Some(_), None) => true,
                (Some(a), Some(b)) => b.0 > a.0,
            });
            if longer {
                widest = Some(s);
            }
        }
    }
    Verdict::Ok
}

/// `enter` → `Some("")`, `enter:a` → `Some("a")`, anything else → `None`.
fn lock_name<'a>(label: &'a str, kind: &str) -> Option<&'a str> {
    let rest = label.strip_prefix(kind)?;
    if rest.is_empty() {
        Some("")
    } else {
        rest.strip_prefix(':')
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::history::{Operation, Outcome};

    fn op(client: usize, marks: &[(&str, u64)], ret: Option<u64>) -> Operation<(), ()> {
        Operation {
            client,
            op: (),
            call: marks.first().map_or(0, |m| m.1),
            ret,
            call_ms: 0,
            ret_ms: ret,
            outcome: if ret.is_some() {
                Outcome::Ok(())
            } else {
                Outcome::Unknown
            },
            marks: marks
                .iter()
                .map(|&(l, s)| Mark {
                    label: l.to_string().into(),
                    seq: s,
                    time_ms: s * 10,
                })
                .collect(),
        }
    }

    #[test]
    fn disjoint_sections_pass() {
        let h = History {
            ops: vec![
                op(0, &[("enter", 1), ("exit", 2)], Some(3)),
                op(1, &[("enter", 4), ("exit", 5)], Some(6)),
            ],
        };
        assert_eq!(mutual_exclusion(&h), Verdict::Ok);
    }

    #[test]
    fn overlapping_sections_fail_with_both_clients() {
        let h = History {
            ops: vec![
                op(0, &[("enter", 1), ("exit", 5)], Some(6)),
                op(1, &[("enter", 3), ("exit", 4)], Some(7)),
            ],
        };
        let v = mutual_exclusion(&h);
        assert_eq!(v.to_string(), "violation: mutual exclusion: C0 and C1 were both inside the critical section from 30 ms to 40 ms");
    }

    #[test]
    fn paused_holder_stays_inside_but_crashed_one_leaves() {
        let paused = History {
            ops: vec![
                op(0, &[("enter", 1)], None),
                op(1, &[("enter", 9), ("exit", 10)], Some(11)),
            ],
        };
        assert!(mutual_exclusion(&paused).is_violation());
        let crashed = History {
            ops: vec![
                op(0, &[("enter", 1), ("crash", 2)], None),
                op(1, &[("enter", 9), ("exit", 10)], Some(11)),
            ],
        };
        assert_eq!(mutual_exclusion(&crashed), Verdict::Ok);
    }

    #[test]
    fn different_locks_do_not_conflict() {
        let h = History {
            ops: vec![
                op(0, &[("enter:a", 1), ("exit:a", 5)], Some(6)),
                op(1, &[("enter:b", 3), ("exit:b", 4)], Some(7)),
            ],
        };
        assert_eq!(mutual_exclusion(&h), Verdict::Ok);
        let nested_long = History {
            ops: vec![
                op(0, &[("enter", 1), ("exit", 9)], Some(10)),
                op(1, &[("enter", 2)], Some(3)),
            ],
        };
        assert!(mutual_exclusion(&nested_long).is_violation());
    }
}
