//! One adapter from a model's own operations to one of kvsim's shipped specs
//! ([`kvsim::QueueSpec`], [`kvsim::SetSpec`], [`kvsim::CounterSpec`], …), so that a model
//! whose structure is a queue, a set or a counter judges its histories by the library's
//! sequential object instead of a copy of it.
//!
//! A model's [`View`] says how its operations map onto the spec's, how the spec's returns
//! map back, and how a violation reads in the model's own words; [`Adapted`] is the
//! resulting [`SequentialSpec`]. Only the spec's state and transitions are taken: the
//! adapter keeps the checker's defaults for `read_only`, `unproducible` and `partition`
//! (as the models' own specs did), so the search, and every counterexample it reports,
//! stays the model's.

use kvsim::SequentialSpec;
use std::fmt::Debug;
use std::hash::Hash;

/// How a model's operations read as those of a shipped spec.
pub trait View {
    /// The shipped spec.
    type Spec: SequentialSpec;
    /// The model's operation.
    type Op: Clone + Debug;
    /// What the model's operation returns.
    type Ret: Clone + Eq + Hash + Debug;

    /// The spec.
    fn spec(&self) -> Self::Spec;

    /// The model's operation as the spec's.
    fn op(&self, op: &Self::Op) -> <Self::Spec as SequentialSpec>::Op;

    /// The spec's return as the model's.
    fn ret(&self, ret: <Self::Spec as SequentialSpec>::Ret) -> Self::Ret;

    /// Why `op` cannot return `found` in `state` (where it returns `expected`), in the
    /// model's words.
    fn explain(
        &self,
        state: &<Self::Spec as SequentialSpec>::State,
        op: &Self::Op,
        expected: &Self::Ret,
        found: &Self::Ret,
    ) -> String;
}

/// A model's operations judged by a shipped spec, through the model's [`View`].
#[derive(Clone, Copy, Debug, Default)]
pub struct Adapted<V>(pub V);

impl<V: View> SequentialSpec for Adapted<V> {
    type State = <V::Spec as SequentialSpec>::State;
    type Op = V::Op;
    type Ret = V::Ret;

    fn name(&self) -> &'static str {
        self.0.spec().name()
    }

    fn init(&self) -> Self::State {
        self.0.spec().init()
    }

    fn step(&self, state: &Self::State, op: &V::Op) -> (Self::State, V::Ret) {
        let (next, ret) = self.0.spec().step(state, &self.0.op(op));
        (next, self.0.ret(ret))
    }

    fn explain(
        &self,
        state: &Self::State,
        op: &V::Op,
        expected: &V::Ret,
        found: &V::Ret,
    ) -> String {
        self.0.explain(state, op, expected, found)
    }
}
