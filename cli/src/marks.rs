//! Expected failures marked: a verdict that is the registry's expectation says so, in the
//! gate's table, `--json`, JUnit and `kvsim merge` alike.
//!
//! The registry expects each scenario's verdict per variant (`kvsim_models::expect`), and
//! labels the fixed variant's expected failures `impossible` or `not yet fixed`. A
//! violation the registry expects is an *expected failure*: the table shows
//! `violation · expected: impossible`, `--json` gives `expected_failure: true`, JUnit a
//! `<skipped>` case. Marking changes no exit code: a gate (`kvsim check TARGET`) still
//! exits 1 on every violation, expected or not (see `kvsim check --help`).

use crate::error::CliError;
use crate::out::outln;
use kvsim_models::expect::{ExpectedVerdict, Label};

/// What a verdict is, against the registry's expectation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Mark {
    /// A violation the registry expects (with the fixed variant's label, if any).
    ExpectedFailure(Option<Label>),
    /// The verdict the registry expects, not a violation (`ok` where a pass is expected).
    AsExpected,
    /// A verdict other than the registry's expectation.
    Unexpected,
    /// No expectation applies (`--faults` replaced the scenario's faults).
    NoExpectation,
}

impl Mark {
    /// The mark of `verdict` (`ok`, `violation`, `unknown`) against `expectation`.
    pub(crate) fn of(
        expectation: Option<ExpectedVerdict>,
        label: Option<Label>,
        verdict: &str,
    ) -> Mark {
        match expectation {
            None => Mark::NoExpectation,
            Some(ExpectedVerdict::Violation) if verdict == "violation" => {
                Mark::ExpectedFailure(label)
            }
            Some(e) if e.matches_name(verdict) => Mark::AsExpected,
            Some(_) => Mark::Unexpected,
        }
    }

    /// Whether the verdict is the registry's expectation (`None`: no expectation).
    pub(crate) fn as_expected(self) -> Option<bool> {
        match self {
            Mark::ExpectedFailure(_) | Mark::AsExpected => Some(true),
            Mark::Unexpected => Some(false),
            Mark::NoExpectation => None,
        }
    }

    /// The verdict cell: `violation · expected: impossible`, `violation · expected`
    /// (a published defect the registry expects), `ok ✗` (differs from the expectation),
    /// or the verdict alone.
    pub(crate) fn verdict_text(self, verdict: &str) -> String {
        match self {
            Mark::ExpectedFailure(Some(l)) => format!("{verdict} · expected: {}", l.name()),
            Mark::ExpectedFailure(None) => format!("{verdict} · expected"),
            Mark::Unexpected => format!("{verdict} ✗"),
            Mark::AsExpected | Mark::NoExpectation => verdict.to_string(),
        }
    }

    /// The JUnit `<skipped>` message of an expected failure: `expected violation:
    /// impossible: WHY`, or `expected violation: the published code's defect`.
    pub(crate) fn skipped_message(label: Option<&str>) -> String {
        match label {
            Some(l) => format!("expected violation: {l}"),
            None => "expected violation: a defect the registry expects of this variant".to_string(),
        }
    }
}

/// The count of a check's marks: the closing line.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Tally {
    /// Verdicts in all.
    pub(crate) total: usize,
    /// Violations in all.
    pub(crate) violations: usize,
    /// Expected failures labelled impossible.
    pub(crate) impossible: usize,
    /// Expected failures labelled not yet fixed.
    pub(crate) not_yet_fixed: usize,
    /// Expected failures without a label (a published variant's defects).
    pub(crate) defects: usize,
    /// Violations the registry does not expect (or without an expectation).
    pub(crate) unexpected_violations: usize,
    /// Other verdicts that differ from the registry's expectation (`ok` or `unknown`
    /// where a violation is expected, `unknown` where a pass is).
    pub(crate) unexpected_others: usize,
}

impl Tally {
    /// Counts `marks`, each with its verdict's name.
    pub(crate) fn of<'a>(marks: impl IntoIterator<Item = (Mark, &'a str)>) -> Tally {
        let mut t = Tally::default();
        for (mark, verdict) in marks {
            t.total += 1;
            t.violations += usize::from(verdict == "violation");
            match mark {
                Mark::ExpectedFailure(Some(Label::Impossible(_))) => t.impossible += 1,
                Mark::ExpectedFailure(Some(Label::NotYetFixed(_))) => t.not_yet_fixed += 1,
                Mark::ExpectedFailure(None) => t.defects += 1,
                Mark::Unexpected | Mark::NoExpectation if verdict == "violation" => {
                    t.unexpected_violations += 1
                }
                Mark::Unexpected => t.unexpected_others += 1,
                Mark::AsExpected | Mark::NoExpectation => {}
            }
        }
        t
    }

    /// Expected failures in all.
    pub(crate) fn expected(&self) -> usize {
        self.impossible + self.not_yet_fixed + self.defects
    }

    /// The closing line: how many verdicts were expected failures (how many impossible,
    /// how many not yet fixed, how many published defects) and how many are unexpected.
    pub(crate) fn line(&self) -> String {
        format!(
            "{} of {} verdicts are expected failures ({} impossible, {} not yet fixed, {} \
             published defects); {} unexpected ({} violations, {} other verdicts)",
            self.expected(),
            self.total,
            self.impossible,
            self.not_yet_fixed,
            self.defects,
            self.unexpected_violations + self.unexpected_others,
            self.unexpected_violations,
            self.unexpected_others,
        )
    }

    /// Prints [`Tally::line`], and in a gate what its exit code means for these verdicts.
    pub(crate) fn print(&self, gate: bool) -> Result<(), CliError> {
        outln!("\n{}", self.line())?;
        if gate && self.violations > 0 {
            outln!(
                "a gate fails on every violation, expected or not: exit 1 ({} of {} violations \
                 expected)",
                self.expected(),
                self.violations
            )?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const WHY: Label = Label::Impossible("memcached forgets an evicted key");
    const LATER: Label = Label::NotYetFixed("fencing tokens");

    #[test]
    fn a_violation_the_registry_expects_is_marked_with_its_label() {
        let v = Some(ExpectedVerdict::Violation);
        let p = Some(ExpectedVerdict::Pass);
        assert_eq!(
            Mark::of(v, Some(WHY), "violation").verdict_text("violation"),
            "violation · expected: impossible"
        );
        assert_eq!(
            Mark::of(v, Some(LATER), "violation").verdict_text("violation"),
            "violation · expected: not yet fixed"
        );
        assert_eq!(
            Mark::of(v, None, "violation").verdict_text("violation"),
            "violation · expected"
        );
        assert_eq!(
            Mark::of(p, None, "violation").verdict_text("violation"),
            "violation ✗"
        );
        assert_eq!(Mark::of(v, Some(WHY), "ok").verdict_text("ok"), "ok ✗");
        assert_eq!(Mark::of(v, None, "unknown"), Mark::Unexpected);
        assert_eq!(Mark::of(p, None, "ok").verdict_text("ok"), "ok");
        assert_eq!(Mark::of(None, None, "violation").as_expected(), None);
        assert_eq!(Mark::of(v, None, "violation").as_expected(), Some(true));
        assert_eq!(Mark::of(p, None, "unknown").as_expected(), Some(false));
    }

    #[test]
    fn the_closing_line_counts_expected_failures_by_label_and_the_unexpected() {
        let v = Some(ExpectedVerdict::Violation);
        let p = Some(ExpectedVerdict::Pass);
        let t = Tally::of([
            (Mark::of(v, Some(WHY), "violation"), "violation"),
            (Mark::of(v, Some(WHY), "violation"), "violation"),
            (Mark::of(v, Some(LATER), "violation"), "violation"),
            (Mark::of(v, None, "violation"), "violation"),
            (Mark::of(p, None, "violation"), "violation"),
            (Mark::of(None, None, "violation"), "violation"),
            (Mark::of(v, None, "ok"), "ok"),
            (Mark::of(p, None, "ok"), "ok"),
        ]);
        assert_eq!(
            t.line(),
            "4 of 8 verdicts are expected failures (2 impossible, 1 not yet fixed, 1 \
             published defects); 3 unexpected (2 violations, 1 other verdicts)"
        );
        assert_eq!(t.violations, 6);
    }
}
