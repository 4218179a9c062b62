//! A polynomial linearizability check for FIFO queues whose enqueued values are unique
//! (each value enqueued at most once), after Henzinger, Sezgin and Vafeiadis,
//! "Aspect-oriented linearizability proofs" (CONCUR 2013): such a history is
//! linearizable iff none of a few small patterns occurs. [`check`] answers in
//! `O(n log n)`:
//!
//! 1. **Patterns** (each one a proof that no linearization exists, so a violation found
//!    this way is certain, with or without operations of unknown outcome):
//!    - *VFresh*: a dequeue returned a value that no enqueue (complete or of unknown
//!      outcome; not a failed one) put in, or whose enqueue began after the dequeue
//!      returned;
//!    - *VRepet*: two dequeues returned the same value;
//!    - *VOrd*: `enqueue(a)` returned before `enqueue(b)` began, `dequeue → b` returned,
//!      and `a` was certainly still in the queue then (its dequeue began after, or it was
//!      never dequeued and no dequeue of unknown outcome began before);
//!    - *VWit*: a dequeue returned empty while a value was certainly in the queue
//!      throughout it (enqueued before the dequeue began, its dequeue began after the
//!      empty one returned, and no dequeue of unknown outcome began before that).
//!
//!    A dequeue of unknown outcome may have removed any value, so a value is "certainly
//!    still there" only until the first such dequeue began: the patterns stay sound, at
//!    the price of missing some violations (the fallback below finds those).
//! 2. **A witness**: the values are put in one order consistent with every real-time
//!    constraint (enqueues in real-time order, dequeues in real-time order, values never
//!    dequeued last), then the history's events are replayed in order, each operation
//!    linearized at the latest at its completion, an enqueue as late and a dequeue as
//!    early as that order allows, an empty dequeue at the first moment of its interval the
//!    queue is empty. An enqueue of unknown outcome takes effect if its value was
//!    dequeued (else never); a dequeue of unknown outcome may remove a value nobody else
//!    dequeued. Success yields the linearization ([`UniqueCheck::Ok`]): `ok` is claimed
//!    only with a linearization in hand, which the replay checks step by step.
//!
//! When neither settles it (no pattern, and the greedy replay found no witness: possible
//! for histories where the order chosen in step 2 is not the one that works, e.g. empty
//! dequeues whose intervals are covered by several values in turn, or dequeues of unknown
//! outcome that must remove particular values), the answer is
//! [`UniqueCheck::Inconclusive`], and the caller falls back to the general checker
//! ([`linearizable`]). Histories whose enqueued values repeat are
//! [`UniqueCheck::NotUnique`]: the patterns say nothing about them.

use crate::check::linearizability::{linearizable, CheckerLimits};
use crate::history::{History, Outcome};
use crate::specs::queue::{QueueOp, QueueRet, QueueSpec};
use crate::verdict::{Verdict, Violation};
use std::cmp::Reverse;
use std::collections::{BTreeMap, BTreeSet, BinaryHeap};
use std::fmt::Debug;
use std::hash::Hash;

/// The property a violation names.
const PROPERTY: &str = "linearizability (queue)";

/// Never (an operation that never returned, or a value never dequeued).
const NEVER: u64 = u64::MAX;

/// What [`check`] found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum UniqueCheck {
    /// Linearizable: the operations (indices into the history's `ops`) in the order they
    /// took effect; operations of unknown outcome left out never took effect.
    Ok(Vec<usize>),
    /// One of the patterns: certainly not linearizable.
    Violation(Violation),
    /// No pattern, and no witness found: ask the general checker.
    Inconclusive(String),
    /// Some value was enqueued twice (or an operation returned what its kind cannot):
    /// the check does not apply.
    NotUnique(String),
}

/// One value's operations.
#[derive(Clone, Debug)]
struct Val {
    /// The enqueue (index into `ops`), its invocation and completion (`NEVER`: unknown
    /// outcome).
    enq: usize,
    enq_call: u64,
    enq_ret: u64,
    /// Whether the enqueue completed (`Ok`): only then does it precede anything.
    enq_known: bool,
    /// The dequeue that returned it, if any.
    deq: Option<usize>,
    deq_call: u64,
    deq_ret: u64,
}

/// Checks a queue history whose enqueued values are unique (see the module docs).
pub fn check<V: Clone + Ord + Debug>(history: &History<QueueOp<V>, QueueRet<V>>) -> UniqueCheck {
    let ops = &history.ops;
    let ret_of = |i: usize| ops[i].ret.unwrap_or(NEVER);
    // Enqueues by value (failed ones had no effect and are left out).
    let mut enqs: BTreeMap<&V, usize> = BTreeMap::new();
    let mut deqs: BTreeMap<&V, usize> = BTreeMap::new();
    let mut empties: Vec<usize> = Vec::new();
    let mut wildcards: Vec<usize> = Vec::new();
    for (i, o) in ops.iter().enumerate() {
        match (&o.op, &o.outcome) {
            (_, Outcome::Failed) => {}
            (QueueOp::Enqueue(v), Outcome::Ok(QueueRet::Enqueued) | Outcome::Unknown) => {
                if enqs.insert(v, i).is_some() {
                    return UniqueCheck::NotUnique(format!("{v:?} is enqueued twice"));
                }
            }
            (QueueOp::Dequeue, Outcome::Ok(QueueRet::Dequeued(Some(v)))) => {
                if let Some(first) = deqs.insert(v, i) {
                    return UniqueCheck::Violation(Violation::new(
                        PROPERTY,
                        format!("{v:?} was dequeued twice"),
                        vec![i, first],
                    ));
                }
            }
            (QueueOp::Dequeue, Outcome::Ok(QueueRet::Dequeued(None))) => empties.push(i),
            (QueueOp::Dequeue, Outcome::Unknown) => wildcards.push(i),
            (op, Outcome::Ok(r)) => {
                return UniqueCheck::NotUnique(format!("{op:?} cannot return {r:?}"));
            }
        }
    }
    // The first invocation of a dequeue of unknown outcome: from then on any value may be
    // gone.
    let first_wild = wildcards
        .iter()
        .map(|&i| ops[i].call)
        .min()
        .unwrap_or(NEVER);
    // VFresh.
    for (v, &d) in &deqs {
        match enqs.get(v) {
            None => {
                return UniqueCheck::Violation(Violation::new(
                    PROPERTY,
                    format!("dequeue returned {v:?}, which no enqueue put in the queue"),
                    vec![d],
                ))
            }
            Some(&e) if ops[e].call > ret_of(d) => {
                return UniqueCheck::Violation(Violation::new(
                    PROPERTY,
                    format!("dequeue returned {v:?} before the enqueue of {v:?} began"),
                    vec![d, e],
                ))
            }
            Some(_) => {}
        }
    }
    // The values that took effect: every dequeued one, and every one whose enqueue
    // completed; an enqueue of unknown outcome whose value nobody dequeued never did.
    let mut vals: Vec<(&V, Val)> = Vec::new();
    for (v, &e) in &enqs {
        let d = deqs.get(v).copied();
        let enq_known = matches!(ops[e].outcome, Outcome::Ok(_));
        if d.is_none() && !enq_known {
            continue;
        }
        vals.push((
            v,
            Val {
                enq: e,
                enq_call: ops[e].call,
                enq_ret: if enq_known { ret_of(e) } else { NEVER },
                enq_known,
                deq: d,
                deq_call: d.map_or(NEVER, |d| ops[d].call),
                deq_ret: d.map_or(NEVER, ret_of),
            },
        ));
    }
    if let Some(v) = patterns(&vals, &empties, first_wild, &ret_of, |i| ops[i].call) {
        return UniqueCheck::Violation(v);
    }
    match witness(history, &vals, &empties, &wildcards) {
        Ok(order) if replays(history, &order) => UniqueCheck::Ok(order),
        Ok(_) => UniqueCheck::Inconclusive(
            "the witness found does not replay (a bug in the check)".to_string(),
        ),
        Err(why) => UniqueCheck::Inconclusive(why),
    }
}

/// Whether `order` is a linearization of `history`: replayed on a queue, every operation
/// with a known return returns it, every completed operation is in it once, no failed one
/// is, and an operation is placed after every one that completed before it began.
fn replays<V: Clone + Eq>(history: &History<QueueOp<V>, QueueRet<V>>, order: &[usize]) -> bool {
    let ops = &history.ops;
    let mut queue = std::collections::VecDeque::new();
    let mut placed = vec![false; ops.len()];
    // The latest invocation placed so far: an operation that completed before it must
    // already be placed.
    let mut latest_call = 0;
    let mut by_ret: Vec<usize> = (0..ops.len())
        .filter(|&i| matches!(ops[i].outcome, Outcome::Ok(_)))
        .collect();
    by_ret.sort_unstable_by_key(|&i| ops[i].ret.unwrap_or(NEVER));
    let mut next_ret = 0;
    for &i in order {
        let o = &ops[i];
        if placed[i] || matches!(o.outcome, Outcome::Failed) {
            return false;
        }
        placed[i] = true;
        latest_call = latest_call.max(o.call);
        // Every known operation that returned before the latest invocation so far is
        // placed by now (else it would follow an operation invoked after it returned).
        while next_ret < by_ret.len() && ops[by_ret[next_ret]].ret.unwrap_or(NEVER) < latest_call {
            if !placed[by_ret[next_ret]] && by_ret[next_ret] != i {
                return false;
            }
            next_ret += 1;
        }
        let ok = match (&o.op, &o.outcome) {
            (QueueOp::Enqueue(v), _) => {
                queue.push_back(v.clone());
                true
            }
            (QueueOp::Dequeue, Outcome::Ok(QueueRet::Dequeued(want))) => queue.pop_front() == *want,
            (QueueOp::Dequeue, _) => queue.pop_front().is_some(),
        };
        if !ok {
            return false;
        }
    }
    (0..ops.len()).all(|i| placed[i] || !matches!(ops[i].outcome, Outcome::Ok(_)))
}

/// When a value is certainly gone: its dequeue's invocation, or (never dequeued) the first
/// invocation of a dequeue of unknown outcome.
fn gone(v: &Val, first_wild: u64) -> u64 {
    if v.deq.is_some() {
        v.deq_call
    } else {
        first_wild
    }
}

/// VOrd and VWit (see the module docs): for each dequeue, the value enqueued certainly
/// before it began that stays longest.
fn patterns<V: Debug>(
    vals: &[(&V, Val)],
    empties: &[usize],
    first_wild: u64,
    ret_of: &dyn Fn(usize) -> u64,
    call_of: impl Fn(usize) -> u64,
) -> Option<Violation> {
    // Completed enqueues by completion, with the running maximum of "gone".
    let mut by_ret: Vec<(u64, u64, usize)> = vals
        .iter()
        .enumerate()
        .filter(|(_, (_, v))| v.enq_known)
        .map(|(k, (_, v))| (v.enq_ret, gone(v, first_wild), k))
        .collect();
    by_ret.sort_unstable();
    let mut best: Vec<(u64, usize)> = Vec::with_capacity(by_ret.len());
    for &(_, g, k) in &by_ret {
        match best.last() {
            Some(&(m, _)) if m >= g => best.push(*best.last().expect("just seen")),
            _ => best.push((g, k)),
        }
    }
    // The value enqueued (completed) before `at` that is gone last.
    let longest = |at: u64| -> Option<(u64, usize)> {
        let n = by_ret.partition_point(|&(r, _, _)| r < at);
        n.checked_sub(1).map(|i| best[i])
    };
    // VOrd: a dequeue → b that returned while a, enqueued before b began, was certainly
    // there.
    for (b, vb) in vals {
        let Some(d) = vb.deq else { continue };
        if let Some((g, k)) = longest(vb.enq_call) {
            if g > ret_of(d) {
                let (a, va) = &vals[k];
                let reason = match va.deq {
                    Some(_) => format!(
                        "{a:?} was enqueued before {b:?} (its enqueue returned before the \
                         other began), but {b:?} was dequeued first"
                    ),
                    None => format!(
                        "{a:?} was enqueued before {b:?} (its enqueue returned before the \
                         other began), but {b:?} was dequeued while {a:?} stayed in the queue"
                    ),
                };
                let mut ops = vec![d, va.enq, vb.enq];
                ops.extend(va.deq);
                return Some(Violation::new(PROPERTY, reason, ops));
            }
        }
    }
    // VWit: an empty dequeue while a value was certainly there throughout.
    for &e in empties {
        if let Some((g, k)) = longest(call_of(e)) {
            if g > ret_of(e) {
                let (a, va) = &vals[k];
                let mut ops = vec![e, va.enq];
                ops.extend(va.deq);
                return Some(Violation::new(
                    PROPERTY,
                    format!(
                        "dequeue returned empty, but {a:?} was in the queue throughout \
                         (enqueued before the dequeue began, {})",
                        if va.deq.is_some() {
                            "dequeued only after it returned"
                        } else {
                            "never dequeued"
                        }
                    ),
                    ops,
                ));
            }
        }
    }
    None
}

/// The values in one order that respects every real-time constraint: Kahn's algorithm,
/// where a value is ready once every value whose enqueue returned before its enqueue
/// began, and every one whose dequeue returned before its dequeue began, is placed (a
/// value never dequeued: once every dequeued one is placed); among the ready ones, the
/// one dequeued first. With dequeues of unknown outcome (`wild`), a value nobody dequeued
/// may be placed early when nothing else is ready (one of them may have removed it).
/// `None`: the constraints form a cycle.
fn order<V>(vals: &[(&V, Val)], wild: bool) -> Option<Vec<usize>> {
    let n = vals.len();
    let mut unplaced_enq: BTreeSet<(u64, usize)> = (0..n).map(|k| (vals[k].1.enq_ret, k)).collect();
    let mut unplaced_deq: BTreeSet<(u64, usize)> = (0..n)
        .filter(|&k| vals[k].1.deq.is_some())
        .map(|k| (vals[k].1.deq_ret, k))
        .collect();
    let mut by_call: Vec<usize> = (0..n).collect();
    by_call.sort_unstable_by_key(|&k| (vals[k].1.enq_call, k));
    let mut next_call = 0;
    let mut waiting: BTreeSet<(u64, usize)> = BTreeSet::new();
    let mut ready: BinaryHeap<Reverse<(u64, u64, usize)>> = BinaryHeap::new();
    let mut out = Vec::with_capacity(n);
    while out.len() < n {
        let t_enq = unplaced_enq.first().map_or(NEVER, |&(r, _)| r);
        while next_call < n && vals[by_call[next_call]].1.enq_call < t_enq {
            let k = by_call[next_call];
            waiting.insert((vals[k].1.deq_call, k));
            next_call += 1;
        }
        let t_deq = unplaced_deq.first().map_or(NEVER, |&(r, _)| r);
        while let Some(&(c, k)) = waiting.first() {
            if c < t_deq || t_deq == NEVER {
                waiting.pop_first();
                let v = &vals[k].1;
                ready.push(Reverse((v.deq_ret, v.enq_ret, k)));
            } else {
                break;
            }
        }
        let k = match ready.pop() {
            Some(Reverse((_, _, k))) => k,
            // Stuck: a value nobody dequeued must go before a dequeued one. A dequeue of
            // unknown outcome may have removed it: take the one enqueued first.
            None if wild => {
                let &(c, k) = waiting
                    .range((NEVER, 0)..)
                    .min_by_key(|&&(_, k)| (vals[k].1.enq_ret, vals[k].1.enq_call))?;
                waiting.remove(&(c, k));
                k
            }
            None => return None,
        };
        unplaced_enq.remove(&(vals[k].1.enq_ret, k));
        unplaced_deq.remove(&(vals[k].1.deq_ret, k));
        out.push(k);
    }
    Some(out)
}

/// What each operation is to the replay of [`witness`].
#[derive(Clone, Copy)]
enum Role {
    /// The enqueue of the value at this rank.
    Enq(usize),
    /// The dequeue of the value at this rank.
    Deq(usize),
    /// A dequeue that found the queue empty.
    Empty,
    /// A dequeue of unknown outcome.
    Wild,
    /// Not in the replay.
    None,
}

/// Replays the history's events with the values in [`order`] (see the module docs): the
/// linearization, or why none was found this way.
fn witness<V>(
    history: &History<QueueOp<V>, QueueRet<V>>,
    vals: &[(&V, Val)],
    empties: &[usize],
    wildcards: &[usize],
) -> Result<Vec<usize>, String> {
    let ops = &history.ops;
    let pi = order(vals, !wildcards.is_empty())
        .ok_or("the real-time constraints on the values' order form a cycle")?;
    let role = roles(ops.len(), vals, &pi, empties, wildcards);
    let by_rank: Vec<(usize, Option<usize>)> =
        pi.iter().map(|&k| (vals[k].1.enq, vals[k].1.deq)).collect();
    let mut r = Replay::new(&by_rank, ops.len());
    for (_, done, i) in events(history, &role) {
        r.event(role[i], done, i)?;
    }
    Ok(r.out)
}

/// Each operation's role, the values ranked by the order `pi`.
fn roles<V>(
    n_ops: usize,
    vals: &[(&V, Val)],
    pi: &[usize],
    empties: &[usize],
    wildcards: &[usize],
) -> Vec<Role> {
    let mut role = vec![Role::None; n_ops];
    let mut rank = vec![0; vals.len()];
    for (r, &k) in pi.iter().enumerate() {
        rank[k] = r;
    }
    for (k, (_, v)) in vals.iter().enumerate() {
        role[v.enq] = Role::Enq(rank[k]);
        if let Some(d) = v.deq {
            role[d] = Role::Deq(rank[k]);
        }
    }
    for &e in empties {
        role[e] = Role::Empty;
    }
    for &w in wildcards {
        role[w] = Role::Wild;
    }
    role
}

/// The replay's events in order: (position, is completion, op), the operations with a
/// role only, a completion only for a known outcome.
fn events<V>(history: &History<QueueOp<V>, QueueRet<V>>, role: &[Role]) -> Vec<(u64, bool, usize)> {
    let ops = &history.ops;
    let mut events: Vec<(u64, bool, usize)> = Vec::with_capacity(ops.len() * 2);
    for (i, o) in ops.iter().enumerate() {
        if matches!(role[i], Role::None) {
            continue;
        }
        events.push((o.call, false, i));
        if let (Outcome::Ok(_), Some(r)) = (&o.outcome, o.ret) {
            events.push((r, true, i));
        }
    }
    events.sort_unstable();
    events
}

/// The replay's progress: the values (enqueue, dequeue) by rank, which of them have
/// begun, the pending dequeues of unknown outcome and empty ones, and the linearization
/// so far.
struct Replay<'a> {
    vals: &'a [(usize, Option<usize>)],
    enq_invoked: Vec<bool>,
    deq_invoked: Vec<bool>,
    wild: std::collections::VecDeque<usize>,
    pending_empty: BTreeSet<usize>,
    enq_ptr: usize,
    deq_ptr: usize,
    out: Vec<usize>,
}

impl<'a> Replay<'a> {
    fn new(vals: &'a [(usize, Option<usize>)], n_ops: usize) -> Self {
        Replay {
            vals,
            enq_invoked: vec![false; vals.len()],
            deq_invoked: vec![false; vals.len()],
            wild: std::collections::VecDeque::new(),
            pending_empty: BTreeSet::new(),
            enq_ptr: 0,
            deq_ptr: 0,
            out: Vec::with_capacity(n_ops),
        }
    }

    /// One event: operation `i` in `role` begins, or completes (`done`).
    fn event(&mut self, role: Role, done: bool, i: usize) -> Result<(), String> {
        match (role, done) {
            (Role::Enq(k), false) => self.enq_invoked[k] = true,
            (Role::Deq(k), false) => self.deq_invoked[k] = true,
            (Role::Wild, false) => self.wild.push_back(i),
            (Role::Empty, false) => {
                self.pending_empty.insert(i);
                self.flush_empties();
            }
            (Role::Enq(k), true) => self.enq_upto(k)?,
            (Role::Deq(k), true) => self.deq_upto(k)?,
            (Role::Empty, true) => {
                if self.pending_empty.contains(&i) {
                    if self.enq_ptr > 0 {
                        self.deq_upto(self.enq_ptr - 1)?;
                    }
                    self.flush_empties();
                    if self.pending_empty.contains(&i) {
                        return Err("an empty dequeue found no empty queue".to_string());
                    }
                }
            }
            (Role::Wild | Role::None, _) => {}
        }
        Ok(())
    }

    fn enq_upto(&mut self, r: usize) -> Result<(), String> {
        while self.enq_ptr <= r {
            if !self.enq_invoked[self.enq_ptr] {
                return Err(format!(
                    "the enqueue of the value at position {} had not begun",
                    self.enq_ptr
                ));
            }
            self.out.push(self.vals[self.enq_ptr].0);
            self.enq_ptr += 1;
        }
        Ok(())
    }

    fn deq_upto(&mut self, r: usize) -> Result<(), String> {
        while self.deq_ptr <= r {
            self.enq_upto(self.deq_ptr)?;
            match self.vals[self.deq_ptr].1 {
                Some(d) if self.deq_invoked[self.deq_ptr] => self.out.push(d),
                Some(_) => {
                    return Err(format!(
                        "the dequeue of the value at position {} had not begun",
                        self.deq_ptr
                    ))
                }
                None => match self.wild.pop_front() {
                    Some(w) => self.out.push(w),
                    None => {
                        return Err(format!(
                            "the value at position {} blocks the queue",
                            self.deq_ptr
                        ))
                    }
                },
            }
            self.deq_ptr += 1;
            self.flush_empties();
        }
        Ok(())
    }

    fn flush_empties(&mut self) {
        if self.deq_ptr == self.enq_ptr {
            self.out.extend(std::mem::take(&mut self.pending_empty));
        }
    }
}

/// Linearizability of a queue history: [`check`] where it applies and settles the
/// question, else the general checker ([`linearizable`]) within `limits`.
pub fn linearizable_queue<V>(
    history: &History<QueueOp<V>, QueueRet<V>>,
    limits: CheckerLimits,
) -> Verdict
where
    V: Clone + Ord + Hash + Debug + 'static,
{
    match check(history) {
        UniqueCheck::Ok(_) => Verdict::Ok,
        UniqueCheck::Violation(v) => Verdict::Violation(v),
        UniqueCheck::Inconclusive(_) | UniqueCheck::NotUnique(_) => {
            linearizable(&QueueSpec::new(), history, limits)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::check::bruteforce;
    use crate::history::Operation;
    use crate::rng::SimRng;

    type Q = QueueOp<u32>;
    type R = QueueRet<u32>;

    fn op(
        client: usize,
        op: Q,
        call: u64,
        ret: Option<u64>,
        outcome: Outcome<R>,
    ) -> Operation<Q, R> {
        Operation {
            client,
            op,
            call,
            ret,
            call_ms: call,
            ret_ms: ret,
            outcome,
            marks: vec![],
        }
    }

    fn enq(c: usize, v: u32, call: u64, ret: u64) -> Operation<Q, R> {
        op(
            c,
            QueueOp::Enqueue(v),
            call,
            Some(ret),
            Outcome::Ok(QueueRet::Enqueued),
        )
    }

    fn deq(c: usize, v: Option<u32>, call: u64, ret: u64) -> Operation<Q, R> {
        op(
            c,
            QueueOp::Dequeue,
            call,
            Some(ret),
            Outcome::Ok(QueueRet::Dequeued(v)),
        )
    }

    fn violation(h: &History<Q, R>) -> String {
        match check(h) {
            UniqueCheck::Violation(v) => v.reason,
            other => panic!("expected a violation, found {other:?}"),
        }
    }

    #[test]
    fn each_pattern_is_a_violation() {
        // VFresh: never enqueued; dequeued before its enqueue began.
        let h = History {
            ops: vec![deq(0, Some(7), 0, 1)],
        };
        assert_eq!(
            violation(&h),
            "dequeue returned 7, which no enqueue put in the queue"
        );
        let h = History {
            ops: vec![deq(0, Some(7), 0, 1), enq(1, 7, 2, 3)],
        };
        assert_eq!(
            violation(&h),
            "dequeue returned 7 before the enqueue of 7 began"
        );
        // VRepet.
        let h = History {
            ops: vec![
                enq(0, 1, 0, 1),
                deq(0, Some(1), 2, 3),
                deq(1, Some(1), 4, 5),
            ],
        };
        assert_eq!(violation(&h), "1 was dequeued twice");
        // VOrd: 1 then 2 enqueued, 2 dequeued first; and 2 dequeued while 1 stays.
        let h = History {
            ops: vec![
                enq(0, 1, 0, 1),
                enq(0, 2, 2, 3),
                deq(0, Some(2), 4, 5),
                deq(0, Some(1), 6, 7),
            ],
        };
        assert!(
            violation(&h).ends_with("but 2 was dequeued first"),
            "{}",
            violation(&h)
        );
        let h = History {
            ops: vec![enq(0, 1, 0, 1), enq(0, 2, 2, 3), deq(0, Some(2), 4, 5)],
        };
        assert!(violation(&h).ends_with("while 1 stayed in the queue"));
        // VWit: empty while 1 is there.
        let h = History {
            ops: vec![enq(0, 1, 0, 1), deq(1, None, 2, 3)],
        };
        assert!(violation(&h).starts_with("dequeue returned empty, but 1 was in the queue"));
    }

    #[test]
    fn unknown_outcomes_are_judged_soundly() {
        // An enqueue of unknown outcome whose value is dequeued took effect; one whose
        // value never shows never did (so the empty dequeue is fine).
        let h = History {
            ops: vec![
                op(0, QueueOp::Enqueue(1), 0, Some(1), Outcome::Unknown),
                deq(1, Some(1), 2, 3),
                op(2, QueueOp::Enqueue(2), 4, None, Outcome::Unknown),
                deq(1, None, 5, 6),
            ],
        };
        assert!(matches!(check(&h), UniqueCheck::Ok(_)), "{:?}", check(&h));
        // A dequeue of unknown outcome may have removed 1 before the empty dequeue: no
        // VWit, and the witness uses it.
        let h = History {
            ops: vec![
                enq(0, 1, 0, 1),
                op(1, QueueOp::Dequeue, 2, None, Outcome::Unknown),
                deq(0, None, 3, 4),
            ],
        };
        assert_eq!(check(&h), UniqueCheck::Ok(vec![0, 1, 2]));
        // A failed enqueue had no effect: its value dequeued is fresh.
        let h = History {
            ops: vec![
                op(0, QueueOp::Enqueue(1), 0, Some(1), Outcome::Failed),
                deq(0, Some(1), 2, 3),
            ],
        };
        assert!(violation(&h).contains("no enqueue"));
        // Values enqueued twice: not for this check.
        let h = History {
            ops: vec![enq(0, 1, 0, 1), enq(0, 1, 2, 3)],
        };
        assert!(matches!(check(&h), UniqueCheck::NotUnique(_)));
    }

    #[test]
    fn concurrent_enqueues_take_the_order_their_dequeues_need() {
        // 1 and 2 enqueued concurrently, dequeued 2 then 1 (sequentially): fine.
        let h = History {
            ops: vec![
                enq(0, 1, 0, 3),
                enq(1, 2, 1, 2),
                deq(0, Some(2), 4, 5),
                deq(0, Some(1), 6, 7),
                deq(0, None, 8, 9),
            ],
        };
        assert_eq!(check(&h), UniqueCheck::Ok(vec![1, 0, 2, 3, 4]));
    }

    /// A random history of at most `n` operations by 3 clients, every enqueued value
    /// unique ([`crate::check::random_history`]); a corrupted dequeue returns any value
    /// or nothing.
    fn random_history(rng: &mut SimRng, n: usize) -> History<Q, R> {
        let next = std::cell::Cell::new(0u32);
        let draw = |rng: &mut SimRng| {
            if rng.chance(0.5) {
                next.set(next.get() + 1);
                QueueOp::Enqueue(next.get())
            } else {
                QueueOp::Dequeue
            }
        };
        let corrupt = |rng: &mut SimRng, r: &mut R| {
            if let QueueRet::Dequeued(d) = r {
                let v = rng.below(next.get() as u64 + 1) as u32;
                *d = (v > 0).then_some(v);
            }
        };
        super::super::random_history::random_history(&QueueSpec::new(), rng, n, draw, 0.1, corrupt)
    }

    #[test]
    fn agrees_with_brute_force_on_random_histories() {
        let mut rng = SimRng::new(32);
        let (mut ok, mut bad, mut inconclusive) = (0, 0, 0);
        for round in 0..20_000 {
            let h = random_history(&mut rng, 2 + round % 7);
            let brute = bruteforce::linearizable(&QueueSpec::new(), &h);
            match check(&h) {
                UniqueCheck::Ok(order) => {
                    assert!(
                        brute,
                        "the check found {order:?} for a non-linearizable {h:#?}"
                    );
                    assert!(replays(&h, &order));
                    ok += 1;
                }
                UniqueCheck::Violation(v) => {
                    assert!(!brute, "the check found {v:?} in a linearizable {h:#?}");
                    bad += 1;
                }
                UniqueCheck::Inconclusive(_) => inconclusive += 1,
                UniqueCheck::NotUnique(why) => panic!("values are unique: {why}"),
            }
            // The whole decision, with its fallback, is the brute force's.
            assert_eq!(
                linearizable_queue(&h, CheckerLimits::none()).is_ok(),
                brute,
                "{h:#?}"
            );
        }
        eprintln!("ok {ok}, violations {bad}, inconclusive {inconclusive}");
        assert!(ok > 5_000 && bad > 2_000, "ok {ok}, violations {bad}");
        // The fast check settles nearly every history on its own.
        assert!(
            inconclusive * 50 < ok + bad,
            "inconclusive {inconclusive} of {}",
            ok + bad
        );
    }
}
