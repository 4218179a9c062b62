//! Variants and expected verdicts: what every model file's scenario table is made of.
//!
//! Every structure comes in two [`Variant`]s: `published` (transcribed faithfully from
//! `STRUCTURES.md`, defects included) and `fixed` (the project's design). Each model file
//! exports `pub fn scenarios() -> Vec<(Scenario, Expect)>`: the named scenarios with the
//! verdict each variant is expected to get.

use kvsim::Repairs;
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
    /// The published code with some of its repairs switched on ([`kvsim::Repair`]): the
    /// target `MODEL/published+REPAIR[+REPAIR...]`, a rung of the model's ladder.
    Repaired(Repairs),
}

impl Variant {
    /// Every variant, in the CLI's order (a model has `published` and `fixed`, and
    /// `proposed` where its source proposes a fix).
    pub const ALL: [Variant; 3] = [Variant::Published, Variant::Fixed, Variant::Proposed];

    /// `published` for the published variant and for a proposed one (which runs the
    /// published code unless its model gives it code of its own), `fixed` for the fixed.
    pub fn published_or_fixed<T>(self, published: T, fixed: T) -> T {
        match self {
            Variant::Published | Variant::Proposed | Variant::Repaired(_) => published,
            Variant::Fixed => fixed,
        }
    }

    /// Whether the published code runs with the repair `name` switched on (only in a
    /// [`Variant::Repaired`] that has it). The model's code reads its switches here.
    pub fn repaired(self, name: &str) -> bool {
        match self {
            Variant::Repaired(r) => r.on(name),
            _ => false,
        }
    }

    /// The repairs switched on (none but in a [`Variant::Repaired`]).
    pub fn repairs(self) -> Option<Repairs> {
        match self {
            Variant::Repaired(r) => Some(r),
            _ => None,
        }
    }

    /// The CLI name of the variant's code: `published`, `fixed` or `proposed` (a repaired
    /// variant runs the published code: `published`; its whole name is its `Display`,
    /// `published+REPAIR...`).
    pub fn name(self) -> &'static str {
        match self {
            Variant::Published | Variant::Repaired(_) => "published",
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
        f.write_str(self.name())?;
        if let Variant::Repaired(r) = self {
            write!(f, "{r}")?;
        }
        Ok(())
    }
}

/// Why a variant meant to be correct still fails a scenario: told apart for people
/// (`kvsim list`, the gate's table, JSON, reports).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Label {
    /// No design on this store passes: the one-line argument why.
    Impossible(&'static str),
    /// A design exists that would pass and the fixed variant does not implement it yet:
    /// which design.
    NotYetFixed(&'static str),
}

impl Label {
    /// `impossible` or `not yet fixed`.
    pub fn name(self) -> &'static str {
        match self {
            Label::Impossible(_) => "impossible",
            Label::NotYetFixed(_) => "not yet fixed",
        }
    }

    /// The argument (impossible) or the design (not yet fixed).
    pub fn reason(self) -> &'static str {
        match self {
            Label::Impossible(why) | Label::NotYetFixed(why) => why,
        }
    }
}

impl fmt::Display for Label {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.name(), self.reason())
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
    /// The repairs ([`kvsim::Repair`]) whose defects this scenario finds in the published
    /// code: a repaired variant that lacks one of them fails as `published` does.
    pub shows: &'static [&'static str],
    /// The published code's verdict with every repair of `shows` on (what stands behind
    /// the defects they fix).
    pub repaired: ExpectedVerdict,
    /// Why the fixed variant fails, where it is expected to.
    pub label: Option<Label>,
}

impl Expect {
    /// The published variant fails, the fixed one passes: the usual row.
    pub const BROKEN_FIXED: Expect = Expect {
        published: ExpectedVerdict::Violation,
        fixed: ExpectedVerdict::Pass,
        proposed: ExpectedVerdict::Violation,
        shows: &[],
        repaired: ExpectedVerdict::Violation,
        label: None,
    };
    /// Both pass.
    pub const BOTH_PASS: Expect = Expect {
        published: ExpectedVerdict::Pass,
        fixed: ExpectedVerdict::Pass,
        proposed: ExpectedVerdict::Pass,
        shows: &[],
        repaired: ExpectedVerdict::Pass,
        label: None,
    };

    /// Every variant fails: a fault no design on this store survives, `why` in one line.
    pub const fn impossible(why: &'static str) -> Expect {
        Expect {
            fixed: ExpectedVerdict::Violation,
            label: Some(Label::Impossible(why)),
            ..Expect::BROKEN_FIXED
        }
    }

    /// Every variant fails, and a design could do better: the fixed variant does not
    /// implement `design` yet. Kept apart from [`Expect::impossible`].
    pub const fn not_yet_fixed(design: &'static str) -> Expect {
        Expect {
            fixed: ExpectedVerdict::Violation,
            label: Some(Label::NotYetFixed(design)),
            ..Expect::BROKEN_FIXED
        }
    }

    /// This expectation, the published code's defects here being the ones `repairs` fix:
    /// with all of them on it passes (unless [`Expect::then`] says otherwise).
    pub const fn shows(self, repairs: &'static [&'static str]) -> Expect {
        Expect {
            shows: repairs,
            repaired: ExpectedVerdict::Pass,
            ..self
        }
    }

    /// This expectation with `verdict` for the published code once every repair of
    /// [`Expect::shows`] is on (a defect no repair fixes stands behind them).
    pub const fn then(self, verdict: ExpectedVerdict) -> Expect {
        Expect {
            repaired: verdict,
            ..self
        }
    }

    /// The expectation for `variant`.
    pub fn of(self, variant: Variant) -> ExpectedVerdict {
        match variant {
            Variant::Published => self.published,
            Variant::Fixed => self.fixed,
            Variant::Proposed => self.proposed,
            Variant::Repaired(r) if self.shows.iter().all(|name| r.on(name)) => self.repaired,
            Variant::Repaired(_) => self.published,
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
