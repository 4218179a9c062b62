//! A polynomial linearizability check for sets ([`SetSpec`]) that only grow and whose
//! values are added at most once: `add v`, `contains v`, `read` (all members), no
//! `remove`.
//!
//! Adds commute, so such a history is linearizable iff the operations can be ordered so
//! that each observation (a `contains`, a `read`) comes after the adds of exactly the
//! values it saw. Every observation therefore orders every add it concerns: an add of a
//! value it saw goes before it, an add of a value it did not see goes after it. Together
//! with real time (an operation that completed before another began goes first), these
//! are all the constraints, and any order that respects them is a linearization: the
//! history is linearizable iff the graph they form has no cycle. [`check`] decides that
//! in time linear in the history plus the observations' size, real-time order included
//! (through one chain of nodes for the history's event positions instead of an edge per
//! pair of operations).
//!
//! Unknown outcomes: an add of unknown outcome took effect iff some observation saw its
//! value (then it is an add that may land at any time after its invocation, with no
//! completion), else it is left out; a failed add is left out, and a value seen that no
//! add (complete or of unknown outcome) could have put in is a violation at once. An
//! observation of unknown outcome saw nothing anyone knows, and is left out.
//!
//! Histories with a `remove`, or a value added twice, are [`SetCheck::NotApplicable`]:
//! [`linearizable_set`] then asks the general checker.

use crate::check::linearizability::{linearizable, CheckerLimits};
use crate::history::{History, Outcome};
use crate::specs::set::{SetOp, SetRet, SetSpec};
use crate::verdict::{Verdict, Violation};
use std::collections::BTreeMap;
use std::fmt::Debug;
use std::hash::Hash;

/// The property a violation names.
const PROPERTY: &str = "linearizability (set)";

/// What [`check`] found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SetCheck {
    /// Linearizable.
    Ok,
    /// Certainly not linearizable.
    Violation(Violation),
    /// The history removes, or adds a value twice: the check does not apply.
    NotApplicable(String),
}

/// Checks a grow-only set history with unique adds (see the module docs).
pub fn check<V: Clone + Ord + Debug>(history: &History<SetOp<V>, SetRet<V>>) -> SetCheck {
    let ops = &history.ops;
    let adds = match unique_adds(history) {
        Ok(adds) => adds,
        Err(why) => return SetCheck::NotApplicable(why),
    };
    let observations = match observations(history, &adds) {
        Ok(observations) => observations,
        Err(violation) => return SetCheck::Violation(violation),
    };
    let seen_by = match seen_by(history, &adds, &observations) {
        Ok(seen_by) => seen_by,
        Err(violation) => return SetCheck::Violation(violation),
    };
    let edges = constraints(history, &adds, &observations, &seen_by);
    match cycle(&edges) {
        None => SetCheck::Ok,
        Some(nodes) => {
            let on: Vec<usize> = nodes.into_iter().filter(|&k| k < ops.len()).collect();
            let list: Vec<String> = on.iter().map(|&i| format!("{:?}", ops[i].op)).collect();
            SetCheck::Violation(Violation::new(
                PROPERTY,
                format!(
                    "no order explains what was seen: real time and the observations put {} \
                     in a cycle (an add goes before what saw its value, after what did not)",
                    list.join(" → ")
                ),
                on,
            ))
        }
    }
}

/// An observation: (op, value, seen).
type Observation<'h, V> = (usize, &'h V, bool);

/// The add of each value (failed ones left out); why the check does not apply if the
/// history removes or adds a value twice.
fn unique_adds<V: Ord + Debug>(
    history: &History<SetOp<V>, SetRet<V>>,
) -> Result<BTreeMap<&V, usize>, String> {
    let mut adds: BTreeMap<&V, usize> = BTreeMap::new();
    for (i, o) in history.ops.iter().enumerate() {
        match (&o.op, &o.outcome) {
            (_, Outcome::Failed) => {}
            (SetOp::Remove(_), _) => return Err("the history removes members".to_string()),
            (SetOp::Add(v), _) => {
                let again = adds.insert(v, i).is_some();
                if again {
                    return Err(format!("{v:?} is added twice"));
                }
            }
            _ => {}
        }
    }
    Ok(adds)
}

/// What each known `contains` and `read` saw, and did not see, of the values added; the
/// violation if an operation returned what its kind cannot.
fn observations<'h, V: Ord + Debug>(
    history: &'h History<SetOp<V>, SetRet<V>>,
    adds: &BTreeMap<&'h V, usize>,
) -> Result<Vec<Observation<'h, V>>, Violation> {
    let mut observations: Vec<Observation<'h, V>> = Vec::new();
    for (i, o) in history.ops.iter().enumerate() {
        match (&o.op, &o.outcome) {
            (SetOp::Contains(v), Outcome::Ok(SetRet::Member(m))) => observations.push((i, v, *m)),
            (SetOp::Read, Outcome::Ok(SetRet::Members(m))) => {
                for v in m {
                    observations.push((i, v, true));
                }
                // Every value added and not listed: not seen.
                for (v, _) in adds.iter().filter(|(v, _)| !m.contains(**v)) {
                    observations.push((i, v, false));
                }
            }
            (SetOp::Add(_), Outcome::Ok(SetRet::Done))
            | (
                SetOp::Add(_) | SetOp::Contains(_) | SetOp::Read,
                Outcome::Unknown | Outcome::Failed,
            ) => {}
            (op, Outcome::Ok(r)) => {
                return Err(Violation::new(
                    PROPERTY,
                    format!("{op:?} cannot return {r:?}"),
                    vec![i],
                ))
            }
            (SetOp::Remove(_), _) => unreachable!("refused above"),
        }
    }
    Ok(observations)
}

/// The observations that saw each value; the violation if one saw a value no add put in.
fn seen_by<'h, V: Ord + Debug>(
    history: &History<SetOp<V>, SetRet<V>>,
    adds: &BTreeMap<&'h V, usize>,
    observations: &[Observation<'h, V>],
) -> Result<BTreeMap<&'h V, Vec<usize>>, Violation> {
    let mut seen_by: BTreeMap<&V, Vec<usize>> = BTreeMap::new();
    for &(i, v, seen) in observations {
        if seen {
            match adds.get(v) {
                None => {
                    return Err(Violation::new(
                        PROPERTY,
                        format!(
                            "{} saw {v:?}, which no add put in the set",
                            what(&history.ops[i].op)
                        ),
                        vec![i],
                    ))
                }
                Some(_) => seen_by.entry(v).or_default().push(i),
            }
        }
    }
    Ok(seen_by)
}

/// The constraint graph's edges: nodes are the operations, then one per event position
/// (the real-time chain); an add goes before the observations that saw its value and
/// after those that did not.
fn constraints<V: Ord>(
    history: &History<SetOp<V>, SetRet<V>>,
    adds: &BTreeMap<&V, usize>,
    observations: &[Observation<'_, V>],
    seen_by: &BTreeMap<&V, Vec<usize>>,
) -> Vec<Vec<usize>> {
    let ops = &history.ops;
    // The adds that took effect: completed ones, and unknown ones whose value was seen.
    let effective = |i: usize| {
        matches!(ops[i].outcome, Outcome::Ok(_))
            || matches!(&ops[i].op, SetOp::Add(v) if seen_by.contains_key(v))
    };
    let positions: Vec<u64> = {
        let mut p: Vec<u64> = ops
            .iter()
            .flat_map(|o| [Some(o.call), o.ret])
            .flatten()
            .collect();
        p.sort_unstable();
        p.dedup();
        p
    };
    let at = |pos: u64| positions.partition_point(|&p| p < pos);
    let n = ops.len();
    let mut edges: Vec<Vec<usize>> = vec![Vec::new(); n + positions.len()];
    for k in 1..positions.len() {
        edges[n + k - 1].push(n + k);
    }
    let live = |i: usize| match (&ops[i].op, &ops[i].outcome) {
        (_, Outcome::Failed) => false,
        (SetOp::Add(_), _) => effective(i),
        (_, Outcome::Ok(_)) => true,
        _ => false,
    };
    for (i, o) in ops.iter().enumerate() {
        if !live(i) {
            continue;
        }
        // A known operation completed at `ret` goes before every one begun after.
        if let (Outcome::Ok(_), Some(r)) = (&o.outcome, o.ret) {
            edges[i].push(n + at(r));
        }
        let c = at(o.call);
        if c > 0 {
            edges[n + c - 1].push(i);
        }
    }
    for &(i, v, seen) in observations {
        let Some(&a) = adds.get(v) else { continue };
        if !live(a) {
            continue;
        }
        if seen {
            edges[a].push(i);
        } else {
            edges[i].push(a);
        }
    }
    edges
}

fn what<V>(op: &SetOp<V>) -> &'static str {
    match op {
        SetOp::Read => "read",
        _ => "contains",
    }
}

/// A cycle of the graph (its nodes in order), if it has one: iterative depth-first
/// search.
fn cycle(edges: &[Vec<usize>]) -> Option<Vec<usize>> {
    // 0 unvisited, 1 on the stack, 2 done.
    let mut color = vec![0u8; edges.len()];
    let mut parent = vec![usize::MAX; edges.len()];
    for root in 0..edges.len() {
        if color[root] != 0 {
            continue;
        }
        let mut stack: Vec<(usize, usize)> = vec![(root, 0)];
        color[root] = 1;
        while let Some(&mut (u, ref mut next)) = stack.last_mut() {
            if let Some(&w) = edges[u].get(*next) {
                *next += 1;
                match color[w] {
                    0 => {
                        color[w] = 1;
                        parent[w] = u;
                        stack.push((w, 0));
                    }
                    1 => {
                        let mut path = vec![u];
                        let mut x = u;
                        while x != w {
                            x = parent[x];
                            path.push(x);
                        }
                        path.reverse();
                        return Some(path);
                    }
                    _ => {}
                }
            } else {
                color[u] = 2;
                stack.pop();
            }
        }
    }
    None
}

/// Linearizability of a set history: [`check`] where it applies, else the general
/// checker ([`linearizable`]) within `limits`.
pub fn linearizable_set<V>(history: &History<SetOp<V>, SetRet<V>>, limits: CheckerLimits) -> Verdict
where
    V: Clone + Ord + Hash + Debug,
{
    match check(history) {
        SetCheck::Ok => Verdict::Ok,
        SetCheck::Violation(v) => Verdict::Violation(v),
        SetCheck::NotApplicable(_) => linearizable(&SetSpec::new(), history, limits),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::check::bruteforce;
    use crate::history::Operation;
    use crate::rng::SimRng;

    type O = Operation<SetOp<u32>, SetRet<u32>>;

    fn op(c: usize, op: SetOp<u32>, call: u64, ret: Option<u64>, out: Outcome<SetRet<u32>>) -> O {
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

    fn reason(h: &History<SetOp<u32>, SetRet<u32>>) -> String {
        match check(h) {
            SetCheck::Violation(v) => v.reason,
            other => panic!("expected a violation, found {other:?}"),
        }
    }

    #[test]
    fn reads_that_disagree_are_violations() {
        let add =
            |c, v, call, ret| op(c, SetOp::Add(v), call, Some(ret), Outcome::Ok(SetRet::Done));
        let read = |c, m: &[u32], call, ret| {
            op(
                c,
                SetOp::Read,
                call,
                Some(ret),
                Outcome::Ok(SetRet::Members(m.iter().copied().collect())),
            )
        };
        // Never added.
        let h = History {
            ops: vec![read(0, &[1], 0, 1)],
        };
        assert_eq!(reason(&h), "read saw 1, which no add put in the set");
        // Added before the read began, not seen.
        let h = History {
            ops: vec![add(0, 1, 0, 1), read(1, &[], 2, 3)],
        };
        assert!(
            reason(&h).starts_with("no order explains what was seen"),
            "{}",
            reason(&h)
        );
        // Two concurrent adds, two concurrent reads seeing one each: a cycle.
        let h = History {
            ops: vec![
                add(0, 1, 0, 9),
                add(1, 2, 1, 8),
                read(2, &[1], 2, 6),
                read(3, &[2], 3, 7),
            ],
        };
        assert!(reason(&h).starts_with("no order explains"));
        // Each seeing one, in real-time order that allows it: fine.
        let h = History {
            ops: vec![
                add(0, 1, 0, 9),
                add(1, 2, 1, 8),
                read(2, &[1], 2, 6),
                read(3, &[1, 2], 7, 10),
            ],
        };
        assert_eq!(check(&h), SetCheck::Ok);
        // An add of unknown outcome seen took effect; one never seen did not.
        let h = History {
            ops: vec![
                op(0, SetOp::Add(1), 0, None, Outcome::Unknown),
                op(1, SetOp::Add(2), 1, None, Outcome::Unknown),
                read(2, &[1], 5, 6),
            ],
        };
        assert_eq!(check(&h), SetCheck::Ok);
        let h = History {
            ops: vec![
                add(0, 1, 0, 1),
                op(0, SetOp::Remove(1), 2, Some(3), Outcome::Ok(SetRet::Done)),
            ],
        };
        assert!(matches!(check(&h), SetCheck::NotApplicable(_)));
    }

    fn random_history(rng: &mut SimRng, n: usize) -> History<SetOp<u32>, SetRet<u32>> {
        let next = std::cell::Cell::new(0u32);
        let draw = |rng: &mut SimRng| match rng.below(3) {
            0 => {
                next.set(next.get() + 1);
                SetOp::Add(next.get())
            }
            1 => SetOp::Contains(rng.range_inclusive(1, next.get() as u64 + 1) as u32),
            _ => SetOp::Read,
        };
        let corrupt = |rng: &mut SimRng, r: &mut SetRet<u32>| match r {
            SetRet::Member(m) => *m = !*m,
            SetRet::Members(m) => {
                let v = rng.range_inclusive(1, next.get() as u64 + 1) as u32;
                if !m.remove(&v) {
                    m.insert(v);
                }
            }
            _ => {}
        };
        super::super::random_history::random_history(&SetSpec::new(), rng, n, draw, 0.15, corrupt)
    }

    #[test]
    fn agrees_with_brute_force_on_random_histories() {
        let mut rng = SimRng::new(32);
        let (mut ok, mut bad) = (0, 0);
        for round in 0..20_000 {
            let h = random_history(&mut rng, 2 + round % 7);
            let brute = bruteforce::linearizable(&SetSpec::new(), &h);
            match check(&h) {
                SetCheck::Ok => {
                    assert!(brute, "the check passed a non-linearizable {h:#?}");
                    ok += 1;
                }
                SetCheck::Violation(v) => {
                    assert!(!brute, "the check found {v:?} in a linearizable {h:#?}");
                    bad += 1;
                }
                SetCheck::NotApplicable(why) => panic!("{why}"),
            }
        }
        assert!(ok > 5_000 && bad > 2_000, "ok {ok}, violations {bad}");
    }
}
