//! A reference linearizability checker: tries every order of the operations that
//! respects real time (depth first, no memoization, no partitioning). Exponential: for
//! testing the fast checker on small histories only.
//!
//! Semantics are the same as [`super::linearizability`]: failed operations are left out,
//! an operation with an unknown outcome may be placed anywhere after its invocation (any
//! return accepted) or left out, and an operation with a known return must be placed
//! after every known operation that returned before it was invoked.

use crate::history::{History, Outcome};
use crate::spec::SequentialSpec;

/// Whether some order of the operations explains the history.
pub fn linearizable<S: SequentialSpec>(spec: &S, history: &History<S::Op, S::Ret>) -> bool {
    let live: Vec<usize> = (0..history.ops.len())
        .filter(|&i| !matches!(history.ops[i].outcome, Outcome::Failed))
        .collect();
    // must_follow[a] = the live ops that must be placed before a.
    let before: Vec<Vec<usize>> = live
        .iter()
        .map(|&a| {
            live.iter()
                .copied()
                .filter(|&b| {
                    let ob = &history.ops[b];
                    matches!(ob.outcome, Outcome::Ok(_))
                        && ob.ret.is_some_and(|r| r < history.ops[a].call)
                })
                .collect()
        })
        .collect();
    let mut placed = vec![false; history.ops.len()];
    dfs(spec, history, &live, &before, &mut placed, &spec.init())
}

fn dfs<S: SequentialSpec>(
    spec: &S,
    history: &History<S::Op, S::Ret>,
    live: &[usize],
    before: &[Vec<usize>],
    placed: &mut [bool],
    state: &S::State,
) -> bool {
    let done = live
        .iter()
        .all(|&i| placed[i] || !matches!(history.ops[i].outcome, Outcome::Ok(_)));
    if done {
        return true;
    }
    for (k, &i) in live.iter().enumerate() {
        if placed[i] || before[k].iter().any(|&b| !placed[b]) {
            continue;
        }
        let o = &history.ops[i];
        let next = match &o.outcome {
            Outcome::Ok(r) => {
                let (s, ret) = spec.step(state, &o.op);
                (ret == *r).then_some(s)
            }
            _ => Some(spec.step(state, &o.op).0),
        };
        if let Some(s) = next {
            placed[i] = true;
            let ok = dfs(spec, history, live, before, placed, &s);
            placed[i] = false;
            if ok {
                return true;
            }
        }
    }
    false
}
