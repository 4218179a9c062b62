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

    /// Whether this is a pass: the property was checked over the whole scope and holds.
    pub fn is_ok(&self) -> bool {
        matches!(self, Verdict::Ok)
    }

    /// Whether this is a violation.
    pub fn is_violation(&self) -> bool {
        matches!(self, Verdict::Violation(_))
    }

    /// Why it is not `Ok`, in one line: `property: reason` for a violation, the bound or
    /// cause for `Unknown`; `None` for `Ok`.
    pub fn reason(&self) -> Option<String> {
        match self {
            Verdict::Ok => None,
            Verdict::Violation(x) => Some(format!("{}: {}", x.property, x.reason)),
            Verdict::Unknown(why) => Some(why.clone()),
        }
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

/// How a property failed, in words and by operation. Built with [`Violation::new`] (fields
/// may be added later).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
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

impl Violation {
    /// A violation of `property` because of `reason`, about operations `ops` (indices
    /// into the history's `ops`), with no partial linearization.
    pub fn new(property: impl Into<String>, reason: impl Into<String>, ops: Vec<usize>) -> Self {
        Violation {
            property: property.into(),
            reason: reason.into(),
            ops,
            partial: Vec::new(),
        }
    }

    /// The same violation with `partial` as its longest partial linearization.
    pub fn with_partial(mut self, partial: Vec<usize>) -> Self {
        self.partial = partial;
        self
    }

    /// The same violation as a [`Verdict`].
    pub fn verdict(self) -> Verdict {
        Verdict::Violation(self)
    }

    /// The reason with its particulars blanked: quoted values become `"…"`, client
    /// names `C#`, other numbers `#`. Violations of one property with the same class are
    /// one finding (`dequeue returned "…", but the queue is empty`).
    pub fn class(&self) -> String {
        reason_class(&self.reason)
    }
}

/// [`Violation::class`] of a reason.
pub fn reason_class(reason: &str) -> String {
    let mut out = String::with_capacity(reason.len());
    let mut chars = reason.chars().peekable();
    while let Some(ch) = chars.next() {
        match ch {
            '"' => {
                // A quoted value (with `\"` escapes) becomes "…".
                let mut escaped = false;
                for c in chars.by_ref() {
                    match (escaped, c) {
                        (false, '\\') => escaped = true,
                        (false, '"') => break,
                        _ => escaped = false,
                    }
                }
                out.push_str("\"…\"");
            }
            c if c.is_ascii_digit() => {
                while chars
                    .peek()
                    .is_some_and(|d| d.is_ascii_digit() || *d == '.')
                {
                    chars.next();
                }
                out.push('#');
            }
            c => out.push(c),
        }
    }
    collapse_lists(&out)
}

/// `[#, #, #]` and `["…", "…"]` become `[…]`: a list's length is a particular too.
fn collapse_lists(class: &str) -> String {
    let mut out = String::with_capacity(class.len());
    let mut rest = class;
    while let Some(open) = rest.find('[') {
        out.push_str(&rest[..open]);
        let after = &rest[open + 1..];
        match after.find(']') {
            Some(close)
                if close > 0
                    && after[..close]
                        .chars()
                        .all(|c| matches!(c, '#' | '"' | '…' | ',' | ' ')) =>
            {
                out.push_str("[…]");
                rest = &after[close + 1..];
            }
            _ => {
                out.push('[');
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_verdicts_reason_is_one_line_and_none_for_ok() {
        assert_eq!(Verdict::Ok.reason(), None);
        let v = Violation::new("linearizability", "dequeue returned b", vec![1]).verdict();
        assert_eq!(
            v.reason().as_deref(),
            Some("linearizability: dequeue returned b")
        );
        let u = Verdict::Unknown("the step bound (10) was hit".into());
        assert_eq!(u.reason().as_deref(), Some("the step bound (10) was hit"));
    }

    #[test]
    fn reason_classes_blank_the_particulars() {
        assert_eq!(
            reason_class("dequeue returned \"c0x8\", but the queue is empty"),
            "dequeue returned \"…\", but the queue is empty"
        );
        assert_eq!(
            reason_class("C0 and C12 were both inside from 6 ms to 8.5 ms"),
            "C# and C# were both inside from # ms to # ms"
        );
        assert_eq!(reason_class("read \"a\\\"b\" at 3"), "read \"…\" at #");
        assert_eq!(
            reason_class("fetch returned [], but the adds make the array [1, 22, 3]"),
            "fetch returned [], but the adds make the array […]"
        );
        assert_eq!(
            reason_class("read [\"a\", \"b\"] then [x]"),
            "read […] then [x]"
        );
        assert_ne!(
            reason_class("dequeue returned \"a\", but the queue is empty"),
            reason_class("dequeue returned \"a\", but the queue's head is \"b\"")
        );
    }
}
