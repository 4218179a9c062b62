//! Variants and expected verdicts: what every model file's scenario table is made of.
//!
//! Every structure comes in two [`Variant`]s: `published` (transcribed faithfully from
//! `STRUCTURES.md`, defects included) and `fixed` (the project's design). Each model file
//! exports `pub fn scenarios() -> Vec<(Scenario, Expect)>`: the named scenarios with the
//! verdict each variant is expected to get.

use std::fmt;

/// Which variant of a structure runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Variant {
    /// As published: the same keys, commands, loops and expiry arguments as the source.
    Published,
    /// The project's design, correct under every fault it claims in its doc comment.
    Fixed,
    /// The source's own proposed fix, where it proposes one (the visitor counter's
    /// "line 43"): the published code with that change and nothing else. Only the models
    /// whose source proposes a fix have it.
    Proposed,
}

impl Variant {
    /// Every variant, in the CLI's order (a model has `published` and `fixed`, and
    /// `proposed` where its source proposes a fix).
    pub const ALL: [Variant; 3] = [Variant::Published, Variant::Fixed, Variant::Proposed];

    /// `published` for the published variant and for a proposed one (which runs the
    /// published code unless its model gives it code of its own), `fixed` for the fixed.
    pub fn published_or_fixed<T>(self, published: T, fixed: T) -> T {
        match self {
            Variant::Published | Variant::Proposed => published,
            Variant::Fixed => fixed,
        }
    }

    /// The CLI name: `published`, `fixed` or `proposed`.
    pub fn name(self) -> &'static str {
        match self {
            Variant::Published => "published",
            Variant::Fixed => "fixed",
            Variant::Proposed => "proposed",
        }
    }

    /// Parses `published`, `fixed` or `proposed`.
    pub fn parse(name: &str) -> Result<Variant, String> {
        Variant::ALL
            .into_iter()
            .find(|v| v.name() == name)
            .ok_or_else(|| {
                format!("unknown variant {name:?}: expected published, fixed or proposed")
            })
    }
}

impl fmt::Display for Variant {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The verdict a scenario is expected to give.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ExpectedVerdict {
    /// No violation within the scenario's budget.
    Pass,
    /// A violation is found within the scenario's budget.
    Violation,
}

impl ExpectedVerdict {
    /// `pass` or `violation`.
    pub fn name(self) -> &'static str {
        match self {
            ExpectedVerdict::Pass => "pass",
            ExpectedVerdict::Violation => "violation",
        }
    }

    /// The expectation named `name` ([`ExpectedVerdict::name`]), if any.
    pub fn from_name(name: &str) -> Option<ExpectedVerdict> {
        [ExpectedVerdict::Pass, ExpectedVerdict::Violation]
            .into_iter()
            .find(|e| e.name() == name)
    }

    /// Whether a verdict named `verdict` ([`kvsim::Verdict::name`]: `ok`,
    /// `violation`, `unknown`) is what this expects (`unknown` never is).
    pub fn matches_name(self, verdict: &str) -> bool {
        matches!(
            (self, verdict),
            (ExpectedVerdict::Pass, "ok") | (ExpectedVerdict::Violation, "violation")
        )
    }
}

/// The expected verdict of one scenario, per variant.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Expect {
    /// For the `published` variant.
    pub published: ExpectedVerdict,
    /// For the `fixed` variant.
    pub fixed: ExpectedVerdict,
    /// For the `proposed` variant, where the model has one.
    pub proposed: ExpectedVerdict,
}

impl Expect {
    /// The published variant fails, the fixed one passes: the usual row.
    pub const BROKEN_FIXED: Expect = Expect {
        published: ExpectedVerdict::Violation,
        fixed: ExpectedVerdict::Pass,
        proposed: ExpectedVerdict::Violation,
    };
    /// Both pass.
    pub const BOTH_PASS: Expect = Expect {
        published: ExpectedVerdict::Pass,
        fixed: ExpectedVerdict::Pass,
        proposed: ExpectedVerdict::Pass,
    };
    /// Both fail: a fault no design on this store survives (the fixed variant's doc says why).
    pub const IMPOSSIBLE: Expect = Expect {
        published: ExpectedVerdict::Violation,
        fixed: ExpectedVerdict::Violation,
        proposed: ExpectedVerdict::Violation,
    };

    /// Both fail, and a design could do better: the fixed variant does not handle this
    /// yet (its doc says what is missing). Kept apart from [`Expect::IMPOSSIBLE`].
    pub const NOT_YET_FIXED: Expect = Expect {
        published: ExpectedVerdict::Violation,
        fixed: ExpectedVerdict::Violation,
        proposed: ExpectedVerdict::Violation,
    };

    /// The expectation for `variant`.
    pub fn of(self, variant: Variant) -> ExpectedVerdict {
        match variant {
            Variant::Published => self.published,
            Variant::Fixed => self.fixed,
            Variant::Proposed => self.proposed,
        }
    }

    /// This expectation with `verdict` for the `proposed` variant (which otherwise is
    /// expected to fail as the published one does).
    pub const fn proposed(self, verdict: ExpectedVerdict) -> Expect {
        Expect {
            proposed: verdict,
            ..self
        }
    }
}
