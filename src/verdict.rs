//! Verdicts, as Porcupine gives them: `Ok`, `Violation` or `Unknown`.
//!
//! A timeout or an exhausted budget is `Unknown`, never a pass.

use serde::{Deserialize, Serialize};
use std::fmt;

/// The judgement of one history (or of a whole check).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Verdict {
    /// The property holds for this history.
    Ok,
    /// The property is violated; the counterexample says how.
    Violation(Violation),
    /// Undecided (deadline, state bound); the string says which bound was hit.
    Unknown(String),
}

impl Verdict {
    /// `ok`, `violation` or `unknown`: the names used in JSON output and exit codes.
    pub fn name(&self) -> &'static str {
        match self {
            Verdict::Ok => "ok",
            Verdict::Violation(_) => "violation",
            Verdict::Unknown(_) => "unknown",
        }
    }

    /// Whether this is a violation.
    pub fn is_violation(&self) -> bool {
        matches!(self, Verdict::Violation(_))
    }

    /// The process exit code for this verdict: 0 ok, 1 violation, 3 unknown.
    pub fn exit_code(&self) -> i32 {
        match self {
            Verdict::Ok => 0,
            Verdict::Violation(_) => 1,
            Verdict::Unknown(_) => 3,
        }
    }
}

/// How a property failed, in words and by operation.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Violation {
    /// The property that failed: `linearizability`, `mutual exclusion`, `progress`, ….
    pub property: String,
    /// Why, in the spec's own words ("dequeue returned b, but the queue's head is a").
    pub reason: String,
    /// Indices (into the history's `ops`) of the operations the reason is about; the first
    /// is the one that cannot be placed, where that applies.
    pub ops: Vec<usize>,
    /// The longest partial linearization found (indices into `ops`), if the property is
    /// linearizability.
    pub partial: Vec<usize>,
}

impl fmt::Display for Verdict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Verdict::Ok => write!(f, "ok"),
            Verdict::Violation(v) => write!(f, "violation: {}: {}", v.property, v.reason),
            Verdict::Unknown(why) => write!(f, "unknown: {why}"),
        }
    }
}
