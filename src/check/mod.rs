//! Checkers: is a history correct?
//!
//! - [`linearizable`] / [`check_linearizability`]: linearizability against a
//!   [`SequentialSpec`](crate::spec::SequentialSpec), with unknown outcomes, per-partition
//!   checking and limits that yield `Unknown`, never a pass ([`linearizability`]).
//! - [`mutual_exclusion`]: critical sections (marked `enter`/`exit`) never overlap
//!   ([`mutex`]).
//! - [`progress()`]: every operation completes within a bound unless a fault blocked it
//!   ([`mod@progress`]).
//! - [`bruteforce`]: a reference linearizability checker that tries every order; slow,
//!   for testing the fast one.
//! - Checks polynomial in the history's length, where a spec and its history allow one
//!   (each falls back to [`linearizable`] where it does not settle the question):
//!   [`unique_queue`] (a queue whose enqueued values are unique), [`counter`] (a counter;
//!   exponential only in how many operations run at once), [`unique_set`] (a set that only
//!   grows, each value added once). `kvsim stress` judges the `fifo` and `counter` models
//!   with the first two ([`crate::model::Model::check_long`]).
//!
//! ```
//! use kvsim::check::{linearizable, CheckerLimits};
//! use kvsim::{History, Operation, Outcome};
//! use kvsim::specs::register::{RegisterOp, RegisterRet, RegisterSpec};
//! use kvsim::Verdict;
//!
//! let op = |client, op, call, ret, outcome| Operation {
//!     client, op, call, ret: Some(ret), call_ms: 0, ret_ms: None, outcome, marks: vec![],
//! };
//! // C0 writes 1 while C1 reads 1: fine. Then C1 reads nothing: stale.
//! let history = History { ops: vec![
//!     op(0, RegisterOp::Write(1), 0, 3, Outcome::Ok(RegisterRet::Written)),
//!     op(1, RegisterOp::Read, 1, 2, Outcome::Ok(RegisterRet::Value(Some(1)))),
//!     op(1, RegisterOp::Read, 4, 5, Outcome::Ok(RegisterRet::Value(None))),
//! ]};
//! let spec = RegisterSpec::<i64>::new();
//! assert!(linearizable(&spec, &history, CheckerLimits::none()).is_violation());
//! ```

pub mod bruteforce;
pub mod counter;
pub mod files;
pub mod linearizability;
pub mod mutex;
mod opset;
mod placement;
pub mod progress;
#[cfg(test)]
mod random_history;
pub mod registry;
pub mod unique_queue;
pub mod unique_set;

pub use files::Timed;
pub use linearizability::{
    check_linearizability, check_linearizability_parallel, linearizable, CheckerLimits,
    Counterexample, Linearization, Witness,
};
pub use mutex::mutual_exclusion;
pub use progress::{progress, Blocked, ProgressBound};
pub use registry::{Param, SpecArgs, SpecEntry, Specs};
