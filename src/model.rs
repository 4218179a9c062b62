//! The [`Model`] trait: a structure, its workload and its property, ready to be checked.

use crate::check::CheckerLimits;
use crate::history::{History, JsonlFormat};
use crate::kv::{Kv, KvError};
use crate::rng::SimRng;
use crate::verdict::Verdict;
use std::fmt::Debug;
use std::hash::Hash;

/// Search steps a simulated run's check may take before it answers `Unknown`
/// (deterministic, unlike a time limit): what the simulator and the explorer pass to
/// [`Model::check_with`] ([`SIMULATED_LIMITS`]). The seed structures' histories need far
/// fewer.
pub const SIMULATED_MAX_STEPS: u64 = 5_000_000;

/// The checker limits of a simulated run's check: [`SIMULATED_MAX_STEPS`] steps, no time
/// or memory bound (both would make a verdict depend on the machine).
pub const SIMULATED_LIMITS: CheckerLimits = CheckerLimits {
    time: None,
    max_steps: Some(SIMULATED_MAX_STEPS),
    max_memory: None,
};

/// A structure under test: how to set it up, what one operation does, which operations
/// clients run, and what its histories must satisfy.
///
/// Everything nondeterministic comes from the `kv` handle (time, sleep, random numbers),
/// so the same model runs in the simulator, under stateright, on threads over
/// [`crate::store::memstore::MemStore`], and against real memcached servers.
#[allow(async_fn_in_trait)] // single-threaded executor; no `Send` bound wanted
pub trait Model {
    /// An operation with its arguments (e.g. `Enqueue("a")`).
    type Op: Clone + Debug + Eq + Hash;
    /// What an operation returns.
    type Ret: Clone + Debug + Eq + Hash;

    /// Runs once, before any client starts (e.g. the FIFO's `init`). Default: nothing.
    async fn setup<K: Kv>(&self, kv: &K) -> Result<(), KvError> {
        let _ = kv;
        Ok(())
    }

    /// Runs one operation as client `client`. An `Err` makes the operation's outcome
    /// unknown (it may have taken effect).
    async fn run<K: Kv>(&self, kv: &K, client: usize, op: &Self::Op) -> Result<Self::Ret, KvError>;

    /// The workload: the `index`-th operation of client `client`.
    fn op(&self, client: usize, index: usize, rng: &mut SimRng) -> Self::Op;

    /// The names of every probe the structure's code hits ([`crate::kv::Kv::probe`]), so
    /// that a check reports the ones no run reached (with 0) as well. Default: none.
    fn probes(&self) -> &'static [&'static str] {
        &[]
    }

    /// The repairs of this structure's published code, each the fix of one defect
    /// ([`crate::Repair`]): the model reads the ones switched on from a [`crate::Repairs`]
    /// set it was built with, so that one defect fixed shows what stands behind it.
    /// Default: none.
    fn repairs(&self) -> &'static [crate::Repair] {
        &[]
    }

    /// How the structure stores its state in the store, in its own terms: what each key
    /// holds and what its value means (e.g. the FIFO's "a node's key is its data plus a
    /// random suffix, its value the next node's key"), so that a report gives the cause of
    /// a violation beside its symptom. Shown by the text and HTML reports near the reason
    /// ([`crate::harness::records::RunReport::representation`]). Default: `None`.
    fn representation(&self) -> Option<&'static str> {
        None
    }

    /// What one item of the store means to the structure (`key` → `value`), for a viewer
    /// that shows the store's contents step by step: e.g. `node "c0x0": its next node is
    /// "c1x0…"`. `None` when the structure says nothing of it (the default).
    fn describe_item(&self, key: &[u8], value: &[u8]) -> Option<String> {
        let _ = (key, value);
        None
    }

    /// Whether an operation that returned `ret` did what it is for (the `progress`
    /// property). Default: every return made progress. A model says `false` for answers
    /// such as "gave up" or "locked out": once faults stop, every operation that starts
    /// must complete its purpose, so such an answer after the last fault is a `progress`
    /// violation (a lockout).
    fn made_progress(&self, op: &Self::Op, ret: &Self::Ret) -> bool {
        let _ = (op, ret);
        true
    }

    /// Whether clients that run the same workload are interchangeable: [`Model::run`]
    /// does not depend on its `client` argument, and [`Model::check`] gives the same
    /// verdict when the clients of a history are renamed. `kvsim explore` then explores
    /// one of every set of states that differ only by which of these clients is which
    /// (symmetry reduction), and seeds the random numbers an operation draws through its
    /// kv handle by the order in which operations start, not by client
    /// ([`crate::sim::SimConfig::rng_by_start`]). Default: `false` (no reduction). Clients
    /// are interchangeable only when their workloads offer the same operations and their
    /// clocks the same drift.
    fn interchangeable_clients(&self) -> bool {
        false
    }

    /// Judges a complete history (linearizability against a spec, mutual exclusion, a
    /// time-window spec, …). A model whose check takes limits (a search that may run long)
    /// judges here with its own deterministic default, e.g. [`SIMULATED_LIMITS`], and
    /// overrides [`Model::check_with`] too.
    fn check(&self, history: &History<Self::Op, Self::Ret>) -> Verdict;

    /// Judges a complete history as [`Model::check`] does, bounded by `limits` (hitting
    /// one makes the verdict `Unknown`). The simulator and the explorer call this one, with
    /// [`SIMULATED_LIMITS`]. Default: [`Model::check`], `limits` unused (for a property
    /// whose check is cheap). A model whose check takes limits overrides this one and
    /// passes them to its checker.
    ///
    /// (`check` stays the required method and this one the provided, not the other way
    /// round, so that models written before this method keep compiling and judging as
    /// they did.)
    fn check_with(
        &self,
        history: &History<Self::Op, Self::Ret>,
        limits: &CheckerLimits,
    ) -> Verdict {
        let _ = limits;
        self.check(history)
    }

    /// Judges a long history, from `kvsim stress` (thousands to millions of operations
    /// from real servers), by the same property as [`Model::check`]. Default:
    /// [`Model::check`]. A model whose property has a check polynomial in the history's
    /// length overrides it (the FIFO's with [`crate::check::unique_queue`], the counter's
    /// with [`crate::check::counter`]), so that a long run gets a verdict within bounded
    /// memory where the general search would not; simulated runs keep [`Model::check_with`].
    fn check_long(&self, history: &History<Self::Op, Self::Ret>) -> Verdict {
        self.check(history)
    }

    /// Judges a long history as [`Model::check_long`] does, bounded by `limits` (those of
    /// `kvsim stress`: `--check-time-limit`, `--check-max-steps`, a share of
    /// `--max-memory`). `kvsim stress` calls this one. Default: [`Model::check_long`],
    /// `limits` unused, so that a model written before this method judges as it did. A
    /// model that overrides [`Model::check_with`] overrides this one too (at least with
    /// `self.check_with(history, limits)`), or a stress run's checks ignore the limits.
    fn check_long_with(
        &self,
        history: &History<Self::Op, Self::Ret>,
        limits: &CheckerLimits,
    ) -> Verdict {
        let _ = limits;
        self.check_long(history)
    }

    /// How the operations are written to a history file that `kvsim check-history` can
    /// check (`kvsim stress --history-out`). Default: `None`, no spec reads them (each
    /// operation is written as its Debug text, [`crate::history::JsonlOp::debug`]).
    fn history_format(&self) -> Option<JsonlFormat<Self::Op, Self::Ret>> {
        None
    }
}
