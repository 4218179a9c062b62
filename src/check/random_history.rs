//! Random concurrent histories for the checkers' tests (the polynomial checks are each
//! compared with the brute force on thousands of them).

use crate::history::{History, Operation, Outcome};
use crate::rng::SimRng;
use crate::spec::SequentialSpec;

/// A random history of at most `n` operations by 3 clients: each operation drawn by
/// `draw`, run against `spec`'s own state at a random point between its call and its
/// return; then one operation in ten made unknown (half of those left pending), one in
/// twenty failed, and of the rest, with probability `corrupt_p`, the return handed to
/// `corrupt` to be made wrong.
pub(crate) fn random_history<S: SequentialSpec>(
    spec: &S,
    rng: &mut SimRng,
    n: usize,
    mut draw: impl FnMut(&mut SimRng) -> S::Op,
    corrupt_p: f64,
    mut corrupt: impl FnMut(&mut SimRng, &mut S::Ret),
) -> History<S::Op, S::Ret> {
    let mut ops: Vec<Operation<S::Op, S::Ret>> = Vec::new();
    let mut state = spec.init();
    let mut running: [Option<(usize, bool)>; 3] = [None; 3]; // (op, linearized)
    let (mut seq, mut started) = (0, 0);
    loop {
        let c = rng.index(3);
        match running[c] {
            None if started < n => {
                let op = draw(rng);
                ops.push(Operation {
                    client: c,
                    op,
                    call: seq,
                    ret: None,
                    call_ms: seq,
                    ret_ms: None,
                    outcome: Outcome::Unknown,
                    marks: vec![],
                });
                running[c] = Some((ops.len() - 1, false));
                started += 1;
            }
            Some((i, false)) => {
                let (next, ret) = spec.step(&state, &ops[i].op);
                state = next;
                ops[i].outcome = Outcome::Ok(ret);
                running[c] = Some((i, true));
                continue; // no event
            }
            Some((i, true)) => {
                ops[i].ret = Some(seq);
                running[c] = None;
            }
            None => {
                if running.iter().all(Option::is_none) {
                    break;
                }
                continue;
            }
        }
        seq += 1;
    }
    for o in &mut ops {
        if rng.chance(0.1) {
            o.outcome = Outcome::Unknown;
            if rng.chance(0.5) {
                o.ret = None;
            }
        } else if rng.chance(0.05) {
            o.outcome = Outcome::Failed;
        } else if rng.chance(corrupt_p) {
            if let Outcome::Ok(r) = &mut o.outcome {
                corrupt(rng, r);
            }
        }
    }
    History { ops }
}
