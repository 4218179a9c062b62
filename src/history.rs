//! Histories: what every client invoked and what it saw.
//!
//! A [`History`] is a list of [`Operation`]s, each with its client, its invocation and
//! completion (as positions in one total order of events, and in virtual time), and its
//! [`Outcome`]: `Ok(ret)`, `Failed` (certainly no effect), or `Unknown` (the client crashed
//! or timed out: the operation may have taken effect at any point after its invocation,
//! or never). The same type comes out of the simulator, out of stress runs against real
//! servers, and out of the history file parsers.

use serde::{Deserialize, Serialize};

/// What became of one operation.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Outcome<Ret> {
    /// It completed and returned this.
    Ok(Ret),
    /// It completed with an error that guarantees it had no effect.
    Failed,
    /// Its effect is unknown (crash, timeout, lost connection): it may take effect at any
    /// point after its invocation, or never.
    Unknown,
}

/// A note a structure made in the trace during an operation (see [`crate::kv::Kv::mark`]).
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Mark {
    /// The label, e.g. `"enter"` or `"exit"`.
    pub label: String,
    /// Position in the history's total order of events.
    pub seq: u64,
    /// Virtual (true, not client) time in milliseconds.
    pub time_ms: u64,
}

/// One operation of a history.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Operation<Op, Ret> {
    /// The client (process) that ran it.
    pub client: usize,
    /// What was invoked.
    pub op: Op,
    /// Position of the invocation in the total order of events.
    pub call: u64,
    /// Position of the completion, `None` if it never completed (crashed or pending).
    pub ret: Option<u64>,
    /// Virtual time of the invocation, in milliseconds (0 for histories from outside).
    pub call_ms: u64,
    /// Virtual time of the completion, in milliseconds.
    pub ret_ms: Option<u64>,
    /// What became of it.
    pub outcome: Outcome<Ret>,
    /// Marks the structure made while running it.
    pub marks: Vec<Mark>,
}

impl<Op, Ret> Operation<Op, Ret> {
    /// Whether this operation certainly finished before `other` was invoked.
    pub fn precedes(&self, other: &Self) -> bool {
        match (&self.outcome, self.ret) {
            (Outcome::Unknown, _) | (_, None) => false,
            (_, Some(r)) => r < other.call,
        }
    }
}

/// A history: operations in invocation order.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct History<Op, Ret> {
    /// The operations, sorted by `call`.
    pub ops: Vec<Operation<Op, Ret>>,
}

impl<Op, Ret> Default for History<Op, Ret> {
    fn default() -> Self {
        History { ops: Vec::new() }
    }
}

impl<Op, Ret> History<Op, Ret> {
    /// An empty history.
    pub fn new() -> Self {
        Self::default()
    }

    /// Number of operations.
    pub fn len(&self) -> usize {
        self.ops.len()
    }

    /// Whether there are no operations.
    pub fn is_empty(&self) -> bool {
        self.ops.is_empty()
    }
}
