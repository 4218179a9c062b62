//! The search over one partition (Wing & Gong's, with Lowe's memo; see the
//! [module docs](super)): the spec's pre-pass, then a walk of the call and return entries
//! that places operations, backtracks, and keeps the longest partial linearization for the
//! counterexample.

use super::budget::Budget;
use super::memo::{Memo, Next};
use super::Counterexample;
use crate::check::placement::{Placement, Timing, HEAD};
use crate::history::{History, Outcome};
use crate::spec::SequentialSpec;

/// What the search of one partition found.
pub(super) enum Found {
    Ok(Vec<usize>),
    Violation(Counterexample),
    Unknown(String),
}

struct Frame {
    op: usize,
    /// Index of the state before it, in [`Memo::states`].
    before: u32,
    /// Placed greedily (a read-only operation that fits here): no alternative at this
    /// point needs exploring, so backtracking passes through it.
    forced: bool,
    /// The pass it was placed in, which backtracking goes on with.
    pass: Pass,
}

/// Which operations a walk over the list tries at one configuration, in this order.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Pass {
    /// Operations with a known outcome.
    Known,
    /// Unknown-outcome operations after which some known one can go on: a crashed write
    /// whose value a read returned is tried before the crashed writes nobody needs yet,
    /// so that a linearizable history with many crashed writes is found in one descent.
    Enabling,
    /// The other unknown-outcome operations.
    Rest,
}

/// The search over one partition; `ops` are indices into `history.ops`.
pub(super) fn search<S: SequentialSpec>(
    spec: &S,
    history: &History<S::Op, S::Ret>,
    ops: &[usize],
    budget: &mut Budget<'_>,
) -> Found {
    let view: Vec<(&S::Op, Option<&S::Ret>)> = ops
        .iter()
        .map(|&i| {
            let o = &history.ops[i];
            let ret = match &o.outcome {
                Outcome::Ok(r) => Some(r),
                _ => None,
            };
            (&o.op, ret)
        })
        .collect();
    if let Some((j, reason)) = spec.unproducible(&view) {
        return Found::Violation(Counterexample {
            partition: None,
            op: ops[j],
            partial: Vec::new(),
            reason,
        });
    }
    drop(view);
    if let Some(found) = super::replay::replay(spec, history, ops, budget) {
        return found;
    }
    match search_in(spec, history, ops, budget, true) {
        Some(found) => found,
        None => search_in(spec, history, ops, budget, false).expect("plain mode always ends"),
    }
}

/// [`search`] in interned or plain mode (see [`Memo`]); `None` when interned mode stops
/// paying, so that the partition is searched again in plain mode (the steps taken so far
/// still count against the limits).
pub(super) fn search_in<S: SequentialSpec>(
    spec: &S,
    history: &History<S::Op, S::Ret>,
    ops: &[usize],
    budget: &mut Budget<'_>,
    interned: bool,
) -> Option<Found> {
    let n = ops.len();
    let (rets, mut placed) = prepare(history, ops);
    let mut memo: Memo<S::State> = Memo::new(placed.has_unknowns(), spec.init(), interned);
    let mut stack: Vec<Frame> = Vec::new();
    // The current state, as an index into `memo.states`.
    let mut state = 0u32;
    let mut best: Option<(Vec<usize>, usize, S::State)> = None;
    let mut cur = placed.next(HEAD);
    // Operations with a known return that never change the state (reads): when one fits
    // it goes first, with no alternative tried (see `SequentialSpec::read_only`).
    let local_ops: Vec<&S::Op> = ops.iter().map(|&i| &history.ops[i].op).collect();
    let read_only: Vec<bool> = (0..n)
        .map(|j| rets[j].is_some_and(|r| spec.read_only(local_ops[j], r)))
        .collect();
    // Whether the current configuration is new, so its reads are still to be tried.
    let mut fresh = true;
    // At each configuration the known operations are tried first, then (more passes over
    // the list) the unknown ones: an unknown operation is only placed when the known ones
    // cannot go on without it, which finds a linearization with far fewer steps.
    let mut pass = Pass::Known;

    while placed.known_left() > 0 {
        if let Some(why) = budget.tick(|| memo.bytes()) {
            return Some(Found::Unknown(why));
        }
        if memo.unprofitable {
            return None;
        }
        // The candidate to place now: a fitting read first, else the entry at `cur`.
        let mut candidate: Option<(usize, Next<S::State>)> = None;
        let mut backtrack = false;
        if fresh {
            fresh = false;
            candidate = placed.placeable().filter(|&j| read_only[j]).find_map(|j| {
                let next = memo.advance(spec, state, j, local_ops[j], rets[j])?;
                Some((j, next))
            });
        }
        if candidate.is_none() {
            let (j, is_ret) = placed.entry(cur);
            if is_ret {
                let next_pass = match pass {
                    Pass::Known if placed.has_unknowns() => Some(Pass::Enabling),
                    Pass::Enabling => Some(Pass::Rest),
                    _ => None,
                };
                if let Some(next_pass) = next_pass {
                    pass = next_pass;
                    cur = placed.next(HEAD);
                    continue;
                }
                backtrack = true;
                if best.as_ref().is_none_or(|(p, _, _)| stack.len() > p.len()) {
                    // `j` returned without being linearized.
                    let partial = stack.iter().map(|f| ops[f.op]).collect();
                    best = Some((partial, j, memo.states[state as usize].clone()));
                }
            } else if read_only[j]
                || rets[j].is_none() != (pass != Pass::Known)
                || (rets[j].is_none() && !placed.first_of_class(j))
            {
                // Reads were tried above; each pass tries its own kind; of interchangeable
                // unknown operations only the first unused one is tried.
                cur = placed.next(cur);
                continue;
            } else {
                match memo.advance(spec, state, j, local_ops[j], rets[j]) {
                    // An unknown operation that changes nothing here need not happen here;
                    // the enabling ones go first.
                    Some(next)
                        if rets[j].is_some()
                            || (!memo.same(&next, state)
                                && enables(spec, &mut memo, &placed, &next, &local_ops, &rets)
                                    == (pass == Pass::Enabling)) =>
                    {
                        candidate = Some((j, next))
                    }
                    _ => {
                        cur = placed.next(cur);
                        continue;
                    }
                }
            }
        }
        if let Some((j, next)) = candidate {
            let forced = read_only[j];
            placed.mark(j);
            let (known_hash, known, unknown) = placed.key();
            let h = known_hash ^ Memo::hash_of(&next);
            if let Some(index) = memo.visit(h, known, unknown, next) {
                let before = std::mem::replace(&mut state, index);
                stack.push(Frame {
                    op: j,
                    before,
                    forced,
                    pass,
                });
                placed.lift(j);
                cur = placed.next(HEAD);
                fresh = true;
                pass = Pass::Known;
                continue;
            }
            placed.unmark(j);
            if !forced {
                cur = placed.next(cur);
                continue;
            }
            // A read that fits goes first in some linearization from here, if there is
            // one; that configuration was seen, so this one fails too.
            backtrack = true;
        }
        debug_assert!(backtrack);
        let Some((after, resumed)) = backtrack_to_choice(&mut stack, &mut placed, &mut state)
        else {
            return Some(Found::Violation(counterexample(
                spec, history, ops, &rets, best,
            )));
        };
        cur = after;
        pass = resumed;
    }
    Some(Found::Ok(stack.into_iter().map(|f| ops[f.op]).collect()))
}

/// Undoes placements back to the last one that was a choice (operations placed greedily
/// are passed through, see [`Frame::forced`]), restoring `state`: where the walk goes on
/// and in which pass, or `None` when the stack empties (no linearization).
fn backtrack_to_choice(
    stack: &mut Vec<Frame>,
    placed: &mut Placement,
    state: &mut u32,
) -> Option<(usize, Pass)> {
    loop {
        let frame = stack.pop()?;
        *state = frame.before;
        let after = placed.undo(frame.op);
        if !frame.forced {
            return Some((after, frame.pass));
        }
    }
}

/// Each operation's known return (`None`: an unknown outcome), and nothing placed yet.
fn prepare<'h, Op: std::fmt::Debug, Ret>(
    history: &'h History<Op, Ret>,
    ops: &[usize],
) -> (Vec<Option<&'h Ret>>, Placement) {
    let rets: Vec<Option<&Ret>> = ops
        .iter()
        .map(|&i| match &history.ops[i].outcome {
            Outcome::Ok(r) => Some(r),
            _ => None,
        })
        .collect();
    let timings: Vec<Timing> = ops
        .iter()
        .zip(&rets)
        .map(|(&i, ret)| {
            let o = &history.ops[i];
            Timing {
                call: o.call,
                ret: o.ret,
                known: ret.is_some(),
                // Unknown operations that are the same operation (equal Debug forms) are
                // interchangeable once invoked: each class is used up in call order.
                class: ret.is_none().then(|| format!("{:?}", o.op)),
            }
        })
        .collect();
    (rets, Placement::new(&timings))
}

/// Whether some known-outcome operation that may be placed now is accepted after `next`
/// (see [`Pass::Enabling`]).
fn enables<S: SequentialSpec>(
    spec: &S,
    memo: &mut Memo<S::State>,
    placed: &Placement,
    next: &Next<S::State>,
    local_ops: &[&S::Op],
    rets: &[Option<&S::Ret>],
) -> bool {
    placed
        .placeable()
        .any(|k| rets[k].is_some() && memo.accepts_from(spec, next, k, local_ops[k], rets[k]))
}

/// The counterexample from the longest partial linearization and the operation that
/// returned before it could be placed after it.
fn counterexample<S: SequentialSpec>(
    spec: &S,
    history: &History<S::Op, S::Ret>,
    ops: &[usize],
    rets: &[Option<&S::Ret>],
    best: Option<(Vec<usize>, usize, S::State)>,
) -> Counterexample {
    let Some((partial, blocked, at)) = best else {
        return Counterexample {
            partition: None,
            op: ops[0],
            partial: Vec::new(),
            reason: "no operation can be placed first".to_string(),
        };
    };
    let op = &history.ops[ops[blocked]];
    let found = rets[blocked].expect("return entries are known");
    let reason = match spec.accepts(&at, &op.op, found) {
        None => {
            let expected = spec.step(&at, &op.op).1;
            spec.explain(&at, &op.op, &expected, found)
        }
        Some(_) => format!(
            "{:?} returning {found:?} fits after the partial linearization, \
             but no order of the operations concurrent with it does",
            op.op
        ),
    };
    Counterexample {
        partition: None,
        op: ops[blocked],
        partial,
        reason,
    }
}
