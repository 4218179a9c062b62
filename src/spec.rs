//! Sequential specifications: what a correct structure does, one operation at a time.
//!
//! Implement [`SequentialSpec`] for your structure's operations; the linearizability
//! checker ([`crate::check`]) decides whether a concurrent history could have come from
//! some sequential order of its operations that respects real time.

use std::fmt::Debug;
use std::hash::Hash;

/// A deterministic sequential specification.
pub trait SequentialSpec {
    /// The abstract state (e.g. the queue's contents). Hashed for memoization.
    type State: Clone + Eq + Hash + Debug;
    /// An operation with its arguments.
    type Op: Clone + Debug;
    /// What an operation returns.
    type Ret: Clone + Debug + PartialEq;

    /// The spec's name, e.g. `queue`.
    fn name(&self) -> &'static str;

    /// The initial state.
    fn init(&self) -> Self::State;

    /// Applies `op` to `state`: the next state and what a correct structure returns.
    fn step(&self, state: &Self::State, op: &Self::Op) -> (Self::State, Self::Ret);

    /// Why returning `found` is wrong in `state`, in words a student understands
    /// ("dequeue returned b, but the queue's head is a").
    fn explain(
        &self,
        state: &Self::State,
        op: &Self::Op,
        expected: &Self::Ret,
        found: &Self::Ret,
    ) -> String {
        format!("{op:?} returned {found:?}, but in state {state:?} it returns {expected:?}")
    }

    /// Whether a structure may return `found` for `op` in `state`, and if so the next
    /// state. The default steps and compares; override it to avoid building the expected
    /// return (e.g. compare a read with the state by reference), or for a spec that allows
    /// several returns (e.g. a set listed in any order). The linearizability checker calls
    /// this for every operation with a known return, and `step` for the others.
    fn accepts(
        &self,
        state: &Self::State,
        op: &Self::Op,
        found: &Self::Ret,
    ) -> Option<Self::State> {
        let (next, ret) = self.step(state, op);
        (ret == *found).then_some(next)
    }

    /// Whether `op` returning `ret` never changes the state, in any state where it is
    /// accepted (a read; a cas that failed; a dequeue that found the queue empty). The
    /// checker places such an operation at the first point it fits without trying later
    /// points, which is what makes read-heavy histories fast. Answer `true` only when it
    /// holds in every state: an operation that merely happens to leave this state alone
    /// (writing the value already there) must answer `false`. The default is `false`.
    fn read_only(&self, op: &Self::Op, ret: &Self::Ret) -> bool {
        let _ = (op, ret);
        false
    }

    /// A check before the search, over the operations of one partition (failed ones left
    /// out), each with its known return (`None`: an unknown outcome, which may have taken
    /// effect or not): the first operation whose return no operation of the partition,
    /// complete or pending, could have produced (a read of a value nobody wrote), and
    /// why. The checker answers such a history `violation` at once instead of searching
    /// every order of its pending operations. It must be sound: name an operation only
    /// when no order of the operations, each taking effect or not, explains its return.
    /// The default finds nothing (no pre-pass).
    fn unproducible(&self, ops: &[(&Self::Op, Option<&Self::Ret>)]) -> Option<(usize, String)> {
        let _ = ops;
        None
    }

    /// Whether the checker asks [`SequentialSpec::reachable`] (the work of asking is skipped
    /// for a spec that keeps the default).
    const PRUNES: bool = false;

    /// Whether `op` may still return `ret` once some of the operations `between` (each
    /// taking effect or not, in any order) have taken effect after `state`. The
    /// linearizability search asks it after each operation it places that changes the
    /// state, for an operation that must come soon (its return is near), and drops the
    /// branch on `false`: answer `false` only when no subset of `between` in no order
    /// leads from `state` to a state where `op` returns `ret` (an append-only value that
    /// is no longer a prefix of what a read returned). Set [`SequentialSpec::PRUNES`] to
    /// `true` when overriding it. The default answers `true`.
    fn reachable(
        &self,
        state: &Self::State,
        op: &Self::Op,
        ret: &Self::Ret,
        between: &mut dyn Iterator<Item = &Self::Op>,
    ) -> bool {
        let _ = (state, op, ret, between);
        true
    }

    /// The partition an operation belongs to, if the spec is P-compositional (e.g. a map
    /// partitioned by key): histories are then checked one partition at a time.
    fn partition(&self, op: &Self::Op) -> Option<u64> {
        let _ = op;
        None
    }
}
