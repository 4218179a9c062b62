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
    search_pruned(spec, history, ops, budget)
}

/// The search over one partition after the pre-pass and the replay: interned with
/// [`Prune::Free`] first, again in plain mode or with [`Prune::Exact`] as a run asks.
pub(super) fn search_pruned<S: SequentialSpec>(
    spec: &S,
    history: &History<S::Op, S::Ret>,
    ops: &[usize],
    budget: &mut Budget<'_>,
) -> Found {
    let mut interned = true;
    let mut prune = Prune::Free;
    loop {
        match search_in(spec, history, ops, budget, interned, prune) {
            Run::Done(found) => return found,
            Run::Unprofitable => interned = false,
            Run::Inexact => prune = Prune::Exact,
        }
    }
}

/// Which placements the search leaves out when the spec finds a return ahead
/// unreachable after them (see [`SequentialSpec::reachable`]). Such a placement holds no
/// linearization, so leaving it out keeps the witness the search finds (the walk is
/// otherwise the same); but a partial linearization under it may be longer than any
/// found elsewhere, and the longest is the counterexample.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(super) enum Prune {
    /// None.
    Off,
    /// Only those under which no partial linearization can be longer than the longest
    /// found so far: the search ends as the unpruned one does.
    Exact,
    /// All; a violation is searched for again with [`Prune::Exact`] unless every partial
    /// linearization left out was shorter than the counterexample's.
    Free,
}

/// How one run of [`search_in`] ended.
pub(super) enum Run {
    /// With the search's outcome.
    Done(Found),
    /// Interned mode stopped paying: search again in plain mode.
    Unprofitable,
    /// A violation whose counterexample may lie under a placement [`Prune::Free`] left
    /// out: search again with [`Prune::Exact`].
    Inexact,
}

/// [`search`] in interned or plain mode (see [`Memo`]), leaving out what `prune` says;
/// [`Run::Unprofitable`] when interned mode stops paying and [`Run::Inexact`] when the
/// pruning may have changed the counterexample, so that the partition is searched again
/// (the steps taken so far still count against the limits).
pub(super) fn search_in<S: SequentialSpec>(
    spec: &S,
    history: &History<S::Op, S::Ret>,
    ops: &[usize],
    budget: &mut Budget<'_>,
    interned: bool,
    prune: Prune,
) -> Run {
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
    let mut ahead = Ahead {
        local_ops: &local_ops,
        rets: &rets,
        read_only: &read_only,
        prune: if S::PRUNES { prune } else { Prune::Off },
        between: Vec::new(),
        widest: 0,
    };
    // Whether the current configuration is new, so its reads are still to be tried.
    let mut fresh = true;
    // At each configuration the known operations are tried first, then (more passes over
    // the list) the unknown ones: an unknown operation is only placed when the known ones
    // cannot go on without it, which finds a linearization with far fewer steps.
    let mut pass = Pass::Known;

    while placed.known_left() > 0 {
        if let Some(why) = budget.tick(|| memo.bytes()) {
            return Run::Done(Found::Unknown(why));
        }
        if memo.unprofitable {
            return Run::Unprofitable;
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
            let longest = best.as_ref().map_or(0, |(p, _, _)| p.len());
            let depth = (stack.len(), longest);
            if !forced && ahead.leaves_out(spec, memo.state_of(&next), (&placed, j), depth) {
                cur = placed.next(cur);
                continue;
            }
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
            if ahead.widest > 0 && ahead.widest >= best.as_ref().map_or(0, |(p, _, _)| p.len()) {
                return Run::Inexact;
            }
            return Run::Done(Found::Violation(counterexample(
                spec, history, ops, &rets, best,
            )));
        };
        cur = after;
        pass = resumed;
    }
    Run::Done(Found::Ok(stack.into_iter().map(|f| ops[f.op]).collect()))
}

/// The entries [`Ahead::ruled_out`] looks at, at most, from the list's head.
const LOOKAHEAD: usize = 64;

/// The operations of a partition as [`Ahead::ruled_out`] looks at them, and what the
/// pruning left out.
struct Ahead<'a, S: SequentialSpec> {
    local_ops: &'a [&'a S::Op],
    rets: &'a [Option<&'a S::Ret>],
    read_only: &'a [bool],
    prune: Prune,
    /// The operations invoked before a return ahead (reused).
    between: Vec<usize>,
    /// The longest partial linearization a placement left out may hold (0: none).
    widest: usize,
}

impl<S: SequentialSpec> Ahead<'_, S> {
    /// Whether `prune` leaves out placing `j`, leading to `state`, after `placed_now`
    /// operations, when the longest partial linearization found so far places `longest`.
    fn leaves_out(
        &mut self,
        spec: &S,
        state: &S::State,
        (placed, j): (&Placement, usize),
        (placed_now, longest): (usize, usize),
    ) -> bool {
        if self.prune == Prune::Off {
            return false;
        }
        let Some(width) = self.ruled_out(spec, state, placed, j) else {
            return false;
        };
        // The longest partial linearization under it places `j` and at most `width` more.
        let reach = placed_now + 1 + width;
        if reach <= longest {
            return true;
        }
        if self.prune == Prune::Exact {
            return false;
        }
        self.widest = self.widest.max(reach);
        true
    }

    /// Whether a return ahead is ruled out after `j` is placed, leading to `state`: the
    /// spec is asked about each known return from the list's head up to the first
    /// read-only one (at most [`LOOKAHEAD`] entries), with the operations invoked before
    /// that return (those that may take effect before it). When it rules one out, no
    /// linearization extends this placement, and the partial ones under it place after
    /// `j` only operations invoked before that return, which is never placed: how many
    /// there are (`Some`); else `None`.
    fn ruled_out(
        &mut self,
        spec: &S,
        state: &S::State,
        placed: &Placement,
        j: usize,
    ) -> Option<usize> {
        let between = &mut self.between;
        between.clear();
        let mut node = placed.next(HEAD);
        for _ in 0..LOOKAHEAD {
            if placed.is_end(node) {
                break;
            }
            let (k, is_ret) = placed.entry(node);
            node = placed.next(node);
            if k == j {
                continue;
            }
            if !is_ret {
                between.push(k);
                continue;
            }
            let Some(ret) = self.rets[k] else { continue };
            let mut before = between.iter().map(|&i| self.local_ops[i]);
            if !spec.reachable(state, self.local_ops[k], ret, &mut before) {
                return Some(between.len());
            }
            if self.read_only[k] {
                break;
            }
        }
        None
    }
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
