//! An interim linearizability checker (Wing & Gong search with Lowe's memoization) for the
//! small histories of the seed structures.
//!
//! kvsim's own checker (`kvsim::check`) is being written at the same time; when it lands,
//! the models call it instead and this module goes. Until then this one is small, exact
//! and never passes a history it could not finish: past its node budget it answers
//! [`Verdict::Unknown`].
//!
//! Operations come as [`LinOp`]s: an operation with a known return must be placed between
//! its invocation and its completion; an operation whose outcome is unknown (crashed, timed
//! out) may be placed anywhere after its invocation, or left out; operations that certainly
//! had no effect are simply not passed in.

use kvsim::history::{History, Outcome};
use kvsim::spec::SequentialSpec;
use kvsim::verdict::{Verdict, Violation};
use std::collections::HashSet;

/// Nodes the search may visit before it answers `Unknown`.
const NODE_BUDGET: u64 = 2_000_000;

/// One operation as the checker sees it.
#[derive(Clone, Debug)]
pub struct LinOp<Op, Ret> {
    /// Index of the operation in the history's `ops` (for the counterexample).
    pub index: usize,
    /// Position of the invocation in the history's event order.
    pub call: u64,
    /// Position of the completion; `None` for an operation that may take effect at any
    /// later point or never (unknown outcome).
    pub ret: Option<u64>,
    /// The operation.
    pub op: Op,
    /// What it returned; `None` when the outcome is unknown.
    pub result: Option<Ret>,
}

/// The operations of `history` that the checker must place: `Ok` ones with their return,
/// `Unknown` ones as optional. `Failed` ones and those for which `no_effect` says so (a
/// structure's own "nothing happened" answers, such as a detected loss) are left out.
pub fn lin_ops<Op: Clone, Ret: Clone>(
    history: &History<Op, Ret>,
    no_effect: impl Fn(&Op, &Ret) -> bool,
) -> Vec<LinOp<Op, Ret>> {
    let mut out = Vec::new();
    for (index, o) in history.ops.iter().enumerate() {
        match &o.outcome {
            Outcome::Ok(r) if no_effect(&o.op, r) => {}
            Outcome::Ok(r) => out.push(LinOp {
                index,
                call: o.call,
                ret: o.ret,
                op: o.op.clone(),
                result: Some(r.clone()),
            }),
            Outcome::Failed => {}
            Outcome::Unknown => out.push(LinOp {
                index,
                call: o.call,
                ret: None,
                op: o.op.clone(),
                result: None,
            }),
        }
    }
    out
}

/// Checks that `ops` are linearizable with respect to `spec` (one partition at a time when
/// the spec partitions its operations).
pub fn check<S: SequentialSpec>(spec: &S, ops: &[LinOp<S::Op, S::Ret>]) -> Verdict {
    type Part<O, R> = (Option<u64>, Vec<LinOp<O, R>>);
    let mut parts: Vec<Part<S::Op, S::Ret>> = Vec::new();
    for op in ops {
        let p = spec.partition(&op.op);
        match parts.iter_mut().find(|(q, _)| *q == p) {
            Some((_, v)) => v.push(op.clone()),
            None => parts.push((p, vec![op.clone()])),
        }
    }
    for (_, part) in &parts {
        let v = check_one(spec, part);
        if !matches!(v, Verdict::Ok) {
            return v;
        }
    }
    Verdict::Ok
}

struct Search<'a, S: SequentialSpec> {
    spec: &'a S,
    ops: &'a [LinOp<S::Op, S::Ret>],
    seen: HashSet<(Vec<u64>, S::State)>,
    nodes: u64,
    best: Vec<usize>,
    best_reason: Option<(usize, String)>,
    path: Vec<usize>,
}

fn check_one<S: SequentialSpec>(spec: &S, ops: &[LinOp<S::Op, S::Ret>]) -> Verdict {
    let mut s = Search {
        spec,
        ops,
        seen: HashSet::new(),
        nodes: 0,
        best: Vec::new(),
        best_reason: None,
        path: Vec::new(),
    };
    let done = vec![0u64; ops.len().div_ceil(64)];
    match s.dfs(&done, spec.init()) {
        Some(true) => Verdict::Ok,
        None => Verdict::Unknown(format!(
            "linearizability search gave up after {NODE_BUDGET} nodes ({} operations)",
            ops.len()
        )),
        Some(false) => {
            let (first, reason) = s.best_reason.clone().unwrap_or_else(|| {
                // No operation could be placed with a matching return value: name the
                // first known operation left.
                let first = (0..ops.len())
                    .find(|i| !s.best.contains(i) && ops[*i].result.is_some())
                    .unwrap_or(0);
                (
                    first,
                    "no order of the operations explains the results".to_string(),
                )
            });
            let mut involved = vec![ops[first].index];
            involved.extend(
                ops.iter()
                    .filter(|o| o.index != ops[first].index && o.result.is_some())
                    .filter(|o| o.call < ops[first].ret.unwrap_or(u64::MAX))
                    .filter(|o| o.ret.unwrap_or(u64::MAX) > ops[first].call)
                    .map(|o| o.index),
            );
            Verdict::Violation(Violation {
                property: format!("linearizability ({})", spec.name()),
                reason,
                ops: involved,
                partial: s.best.iter().map(|i| ops[*i].index).collect(),
            })
        }
    }
}

impl<S: SequentialSpec> Search<'_, S> {
    fn is_done(done: &[u64], i: usize) -> bool {
        done[i / 64] & (1 << (i % 64)) != 0
    }

    /// `Some(true)`: the rest can be linearized from here; `Some(false)`: it cannot;
    /// `None`: the budget ran out.
    fn dfs(&mut self, done: &[u64], state: S::State) -> Option<bool> {
        self.nodes += 1;
        if self.nodes > NODE_BUDGET {
            return None;
        }
        // Finished when every operation with a known return is placed.
        let remaining_known = (0..self.ops.len())
            .filter(|i| !Self::is_done(done, *i) && self.ops[*i].result.is_some())
            .count();
        if remaining_known == 0 {
            return Some(true);
        }
        if !self.seen.insert((done.to_vec(), state.clone())) {
            return Some(false);
        }
        // An operation may go next only if no unplaced completed operation returned
        // before it was invoked.
        let min_ret = (0..self.ops.len())
            .filter(|i| !Self::is_done(done, *i))
            .filter_map(|i| self.ops[i].ret)
            .min()
            .unwrap_or(u64::MAX);
        for i in 0..self.ops.len() {
            if Self::is_done(done, i) || self.ops[i].call > min_ret {
                continue;
            }
            let o = &self.ops[i];
            let (next, expected) = self.spec.step(&state, &o.op);
            if let Some(found) = &o.result {
                if *found != expected {
                    if self.path.len() >= self.best.len() && self.best_reason.is_none()
                        || self.path.len() > self.best.len()
                    {
                        self.best = self.path.clone();
                        self.best_reason =
                            Some((i, self.spec.explain(&state, &o.op, &expected, found)));
                    }
                    continue;
                }
            }
            let mut d = done.to_vec();
            d[i / 64] |= 1 << (i % 64);
            self.path.push(i);
            if self.path.len() > self.best.len() {
                self.best = self.path.clone();
                self.best_reason = None;
            }
            let r = self.dfs(&d, next);
            self.path.pop();
            match r {
                Some(true) => return Some(true),
                None => return None,
                Some(false) => {}
            }
        }
        Some(false)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A register: write(v) / read() -> v.
    struct Register;
    impl SequentialSpec for Register {
        type State = u8;
        type Op = (bool, u8);
        type Ret = u8;
        fn name(&self) -> &'static str {
            "register"
        }
        fn init(&self) -> u8 {
            0
        }
        fn step(&self, s: &u8, op: &(bool, u8)) -> (u8, u8) {
            if op.0 {
                (op.1, 0)
            } else {
                (*s, *s)
            }
        }
    }

    fn op(
        call: u64,
        ret: Option<u64>,
        op: (bool, u8),
        result: Option<u8>,
    ) -> LinOp<(bool, u8), u8> {
        LinOp {
            index: call as usize,
            call,
            ret,
            op,
            result,
        }
    }

    #[test]
    fn overlapping_write_and_read_linearize() {
        let h = [
            op(0, Some(3), (true, 5), Some(0)),
            op(1, Some(2), (false, 0), Some(5)),
        ];
        assert_eq!(check(&Register, &h), Verdict::Ok);
    }

    #[test]
    fn a_stale_read_after_a_write_is_a_violation() {
        let h = [
            op(0, Some(1), (true, 5), Some(0)),
            op(2, Some(3), (false, 0), Some(0)),
        ];
        let v = check(&Register, &h);
        assert!(v.is_violation(), "{v}");
    }

    #[test]
    fn an_unknown_write_may_or_may_not_take_effect() {
        let took = [
            op(0, None, (true, 5), None),
            op(2, Some(3), (false, 0), Some(5)),
        ];
        assert_eq!(check(&Register, &took), Verdict::Ok);
        let not = [
            op(0, None, (true, 5), None),
            op(2, Some(3), (false, 0), Some(0)),
        ];
        assert_eq!(check(&Register, &not), Verdict::Ok);
    }
}
