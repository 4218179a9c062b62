//! Ladders: every rung of a model ([`Entry::rungs`]: the published code, each repair alone,
//! all repairs together, the source's own variant, the fixed one) checked against every
//! scenario of the model in one plan, and each distinct finding reported once over all of
//! them, with the repairs that remove it.
//!
//! A defect that fires in nearly every run masks the others: the shrinker keeps the
//! cheapest failure, so the published code's first defect is all a check shows. With that
//! defect's repair on, what stands behind it becomes a finding of its own; the ladder puts
//! the rungs side by side. A finding is one defect as `kvsim check` groups them
//! ([`Finding::same_defect`]: property, reason class, faults needed), and its
//! `removed_by` are the repairs R such that, among the rungs that run the published code
//! (published and its repaired variants), no rung with R on shows it while some rung
//! without R does.
//!
//! `kvsim ladder MODEL` renders a [`Ladder`]; `reports/` shows each model's; the tests pin
//! their findings. Only kvsim's public face and the registry are used.

use crate::expect::{Expect, ExpectedVerdict, Label, Variant};
use crate::registry::{self, registry, Entry};
use kvsim::harness::campaign;
use kvsim::harness::{Budget, CheckReport, Finding, Hooks, Job, Plan, ShrinkLimits};
use kvsim::{Scenario, SimConfig, Verdict};
use std::fmt::Write as _;

/// A ladder job's target: (model index in the registry, variant).
pub type Pick = (usize, Variant);

/// How a scenario is tuned before it runs (the command line's knobs): the scenario and
/// its run configuration.
pub type Tune<'a> = dyn Fn(Scenario) -> (Scenario, SimConfig) + Sync + 'a;

/// The scenario as the registry gives it, with its own configuration.
pub fn untuned(s: Scenario) -> (Scenario, SimConfig) {
    let config = SimConfig::from_scenario(&s);
    (s, config)
}

/// One rung × scenario: what was checked, what was expected and what came back.
#[derive(Clone, Debug)]
pub struct Check {
    /// The rung's variant.
    pub variant: Variant,
    /// The scenario, as tuned.
    pub scenario: Scenario,
    /// Its run configuration.
    pub config: SimConfig,
    /// The scenario's expectations (per variant).
    pub expect: Expect,
    /// The check's report.
    pub report: CheckReport,
}

impl Check {
    /// The verdict this rung is expected to get in this scenario.
    pub fn expected(&self) -> ExpectedVerdict {
        self.expect.of(self.variant)
    }

    /// Why the fixed variant is expected to fail here (impossible or not yet fixed): only
    /// for the fixed rung, where the scenario labels its expected failure.
    pub fn label(&self) -> Option<Label> {
        label_of(self.variant, &self.expect)
    }

    /// Whether the verdict is the expected one (`unknown` never is).
    pub fn matches(&self) -> bool {
        registry::matches(self.expected(), &self.report.verdict)
    }

    /// Whether the verdict is `unknown` (a bound was hit).
    pub fn unknown(&self) -> bool {
        matches!(self.report.verdict, Verdict::Unknown(_))
    }
}

/// The label a variant's expectation carries: the scenario's label, for the fixed
/// variant expected to fail.
pub fn label_of(variant: Variant, expect: &Expect) -> Option<Label> {
    match variant {
        Variant::Fixed if expect.fixed == ExpectedVerdict::Violation => expect.label,
        _ => None,
    }
}

/// One rung: a variant of the model, checked against every scenario.
#[derive(Clone, Debug)]
pub struct Rung {
    /// The variant.
    pub variant: Variant,
    /// Its target name, `MODEL/VARIANT` (repairs in canonical order).
    pub target: String,
    /// The repairs on (canonical order; empty for every rung but a repaired one).
    pub repairs: Vec<&'static str>,
    /// One check per scenario, in the model's order.
    pub checks: Vec<Check>,
}

/// One distinct finding of a ladder, found in one or more rungs and scenarios.
#[derive(Clone, Debug)]
pub struct LadderFinding {
    /// The finding as first found (a minimized one when any rung minimized it): its
    /// property, reason, class, faults, counterexample and replay token. Its `runs` are
    /// the first check's; [`LadderFinding::runs`] sums them all.
    pub finding: Finding,
    /// Violating runs that showed it, over every rung and scenario.
    pub runs: u64,
    /// The scenarios that found it, in the model's order.
    pub scenarios: Vec<String>,
    /// The rungs (target names) that found it, in ladder order.
    pub found_in: Vec<String>,
    /// The repairs that remove it (see the module's docs), in canonical order.
    pub removed_by: Vec<&'static str>,
}

/// A model's ladder.
#[derive(Clone, Debug)]
pub struct Ladder {
    /// The model.
    pub model: &'static str,
    /// The base seed.
    pub seed: u64,
    /// The rungs, in [`Entry::rungs`] order.
    pub rungs: Vec<Rung>,
    /// Every distinct finding once, in the order the rungs found them.
    pub findings: Vec<LadderFinding>,
}

impl Ladder {
    /// Every check of every rung.
    pub fn checks(&self) -> impl Iterator<Item = &Check> {
        self.rungs.iter().flat_map(|r| r.checks.iter())
    }

    /// How many verdicts differ from their expectations, and how many of those are
    /// `unknown`.
    pub fn mismatches(&self) -> (usize, usize) {
        let differ: Vec<&Check> = self.checks().filter(|c| !c.matches()).collect();
        let unknown = differ.iter().filter(|c| c.unknown()).count();
        (differ.len(), unknown)
    }

    /// The exit code of the matrix for this ladder: 0 every verdict as expected, 1 one
    /// differs, else 3 one is `unknown`.
    pub fn code(&self) -> i32 {
        match self.mismatches() {
            (0, _) => 0,
            (m, u) if m > u => 1,
            _ => 3,
        }
    }
}

/// The index of model `name` in `entries`, or an error listing the valid ones.
pub fn model_index(entries: &[Entry], name: &str) -> Result<usize, String> {
    entries.iter().position(|e| e.name == name).ok_or_else(|| {
        let names: Vec<&str> = entries.iter().map(|e| e.name).collect();
        format!(
            "unknown model {name:?}: expected one of {}",
            names.join(", ")
        )
    })
}

/// The jobs of the ladders of `models` (registry indices): every rung × scenario, the
/// scenarios tuned by `tune`, each job expecting a violation where its rung is expected
/// to fail.
pub fn jobs(entries: &[Entry], models: &[usize], tune: &Tune<'_>) -> Vec<Job<Pick>> {
    let mut jobs = Vec::new();
    for &m in models {
        let e = &entries[m];
        for variant in e.rungs() {
            for (scenario, expect) in &e.scenarios {
                let (scenario, config) = tune(scenario.clone());
                jobs.push(Job {
                    target: (m, variant),
                    scenario,
                    config,
                    expect_violation: expect.of(variant) == ExpectedVerdict::Violation,
                });
            }
        }
    }
    jobs
}

/// Runs the ladders of `models` (indices in the registry) as one plan under `budget` and
/// returns them in the order given.
pub fn run(
    models: &[usize],
    budget: Budget,
    shrink: Option<ShrinkLimits>,
    tune: &Tune<'_>,
    hooks: &dyn Hooks<Pick>,
) -> Vec<Ladder> {
    run_of(registry, models, budget, shrink, tune, hooks)
}

/// [`run`] on the models `registry` builds (a crate's own, `kvsim_cli::main`'s): `models`
/// are indices in them.
pub fn run_of(
    registry: fn() -> Vec<Entry>,
    models: &[usize],
    budget: Budget,
    shrink: Option<ShrinkLimits>,
    tune: &Tune<'_>,
    hooks: &dyn Hooks<Pick>,
) -> Vec<Ladder> {
    let entries = registry();
    let plan = Plan {
        jobs: jobs(&entries, models, tune),
        budget,
        shrink,
    };
    let reports = campaign::run(
        &plan,
        &registry,
        &|entries: &Vec<Entry>, &(m, variant): &Pick| entries[m].target(variant),
        hooks,
    );
    let mut done = plan.jobs.into_iter().zip(reports);
    models
        .iter()
        .map(|&m| {
            let e = &entries[m];
            let rungs = e
                .rungs()
                .into_iter()
                .map(|variant| Rung {
                    variant,
                    target: e.target(variant).name().to_string(),
                    repairs: variant.repairs().map(|r| r.names()).unwrap_or_default(),
                    checks: e
                        .scenarios
                        .iter()
                        .zip(done.by_ref())
                        .map(|((_, expect), (job, report))| Check {
                            variant,
                            scenario: job.scenario,
                            config: job.config,
                            expect: *expect,
                            report,
                        })
                        .collect(),
                })
                .collect::<Vec<_>>();
            let findings = findings(e, &rungs);
            Ladder {
                model: e.name,
                seed: budget.seed,
                rungs,
                findings,
            }
        })
        .collect()
}

/// The ladder of one model, by name, with the scenarios' own runs from `seed` on
/// `threads` threads, minimized with the default limits.
pub fn ladder(model: &str, seed: u64, threads: usize) -> Result<Ladder, String> {
    let m = model_index(&registry(), model)?;
    let budget = Budget {
        threads,
        ..Budget::runs(seed)
    };
    let mut out = run(&[m], budget, Some(ShrinkLimits::default()), &untuned, &());
    Ok(out.remove(0))
}

/// Every distinct finding of the rungs once, with where it was found and what removes it.
fn findings(e: &Entry, rungs: &[Rung]) -> Vec<LadderFinding> {
    let mut out: Vec<LadderFinding> = Vec::new();
    for rung in rungs {
        for check in &rung.checks {
            for f in &check.report.findings {
                let seen = out.iter_mut().find(|g| g.finding.same_defect(f));
                let g = match seen {
                    Some(g) => {
                        g.runs += f.runs;
                        if f.minimized && !g.finding.minimized {
                            g.finding = f.clone();
                        }
                        g
                    }
                    None => {
                        out.push(LadderFinding {
                            finding: f.clone(),
                            runs: f.runs,
                            scenarios: Vec::new(),
                            found_in: Vec::new(),
                            removed_by: Vec::new(),
                        });
                        out.last_mut().expect("just pushed")
                    }
                };
                if !g.scenarios.contains(&check.report.scenario) {
                    g.scenarios.push(check.report.scenario.clone());
                }
                if !g.found_in.contains(&rung.target) {
                    g.found_in.push(rung.target.clone());
                }
            }
        }
    }
    let order: Vec<&str> = e.scenarios.iter().map(|(s, _)| s.name.as_str()).collect();
    for g in &mut out {
        g.scenarios
            .sort_by_key(|s| order.iter().position(|o| o == s).unwrap_or(usize::MAX));
        g.removed_by = removed_by(e, rungs, &g.finding);
    }
    out
}

/// The repairs R such that, among the rungs that run the published code, no rung with R
/// on shows `f` while some rung without R does (canonical order).
pub fn removed_by(e: &Entry, rungs: &[Rung], f: &Finding) -> Vec<&'static str> {
    let shows = |rung: &Rung| {
        rung.checks
            .iter()
            .any(|c| c.report.findings.iter().any(|g| g.same_defect(f)))
    };
    let mut names: Vec<&'static str> = e
        .repairs
        .iter()
        .map(|r| r.name)
        .filter(|&name| {
            let (with, without): (Vec<&Rung>, Vec<&Rung>) = rungs
                .iter()
                .filter(|r| matches!(r.variant, Variant::Published | Variant::Repaired(_)))
                .partition(|r| r.variant.repaired(name));
            !with.is_empty() && !with.iter().any(|r| shows(r)) && without.iter().any(|r| shows(r))
        })
        .collect();
    names.sort_unstable();
    names
}

/// Removed-by in words: "the dequeue-next repair", "the dequeue-next and x repairs".
pub fn repairs_in_words(names: &[&str]) -> String {
    match names {
        [] => "no repair".to_string(),
        [one] => format!("the {one} repair"),
        [init @ .., last] => format!("the {} and {last} repairs", init.join(", ")),
    }
}

impl Ladder {
    /// The ladder as a section of a model's README in `reports/`: the rungs, the table of
    /// rung × scenario verdicts (each violation naming its findings), the findings with
    /// what removes them, the same in words per repair, and the fixed variant's labelled
    /// failures.
    pub fn markdown(&self) -> String {
        let mut s = String::from("\n## Ladder\n\n");
        let _ = writeln!(
            s,
            "Every rung of the model checked against every scenario (seed {}, each \
             scenario's own runs), each distinct finding listed once: `kvsim ladder {}` \
             prints the same. A repair switches off one defect of the published code, so \
             that what stands behind it becomes a finding of its own.\n",
            self.seed, self.model
        );
        for rung in &self.rungs {
            let _ = writeln!(s, "- `{}`: {}", rung.target, rung_about(rung));
        }
        self.table_md(&mut s);
        self.findings_md(&mut s);
        self.labels_md(&mut s);
        s
    }

    /// The numbers (from 1) of the ladder's findings that `check` found.
    fn numbers(&self, check: &Check) -> Vec<String> {
        self.findings
            .iter()
            .enumerate()
            .filter(|(_, g)| {
                check
                    .report
                    .findings
                    .iter()
                    .any(|f| g.finding.same_defect(f))
            })
            .map(|(i, _)| (i + 1).to_string())
            .collect()
    }

    fn table_md(&self, s: &mut String) {
        s.push_str("\n| scenario |");
        for rung in &self.rungs {
            let _ = write!(s, " {} |", rung.variant);
        }
        s.push_str("\n|---|");
        for _ in &self.rungs {
            s.push_str("---|");
        }
        s.push('\n');
        let scenarios = self.rungs.first().map_or(0, |r| r.checks.len());
        for i in 0..scenarios {
            let _ = write!(s, "| {} |", self.rungs[0].checks[i].report.scenario);
            for rung in &self.rungs {
                let c = &rung.checks[i];
                let mut cell = match &c.report.verdict {
                    Verdict::Ok => "pass".to_string(),
                    Verdict::Violation(_) => {
                        format!("✗ finding {}", self.numbers(c).join(", "))
                    }
                    Verdict::Unknown(_) => "unknown".to_string(),
                };
                if let Some(label) = c.label() {
                    let _ = write!(cell, " ({})", label.name());
                }
                if !c.matches() {
                    let _ = write!(cell, " (expected {})", c.expected().name());
                }
                let _ = write!(s, " {cell} |");
            }
            s.push('\n');
        }
    }

    fn findings_md(&self, s: &mut String) {
        if self.findings.is_empty() {
            return;
        }
        s.push_str("\nThe ladder's findings:\n\n");
        for (i, g) in self.findings.iter().enumerate() {
            let f = &g.finding;
            let _ = writeln!(
                s,
                "{}. {}: {} — needs {} · found in {} (scenario{} {}) · removed by {}.\n   \
                 `kvsim replay {}`",
                i + 1,
                f.property,
                f.reason.trim_end_matches('.'),
                f.describe_faults(),
                g.found_in
                    .iter()
                    .map(|t| format!("`{t}`"))
                    .collect::<Vec<_>>()
                    .join(", "),
                if g.scenarios.len() == 1 { "" } else { "s" },
                g.scenarios.join(", "),
                repairs_in_words(&g.removed_by),
                f.replay
            );
        }
        for rung in self.rungs.iter().filter(|r| r.repairs.len() == 1) {
            let name = rung.repairs[0];
            let removes = self.numbered(|g| g.removed_by.contains(&name));
            let gone = if removes.is_empty() {
                "no finding of the published code goes away".to_string()
            } else {
                format!("finding {} goes away", removes.join(", "))
            };
            let _ = writeln!(
                s,
                "\nWith the {name} repair on, {gone}{}.",
                self.still(&rung.target, "; ")
            );
        }
        if let Some(all) = self.all_repairs() {
            let _ = writeln!(
                s,
                "\nWith every repair on{}.",
                self.still(&all.target, ", ")
            );
        }
    }

    /// What the published code still fails on `target`, after `sep`.
    fn still(&self, target: &str, sep: &str) -> String {
        let still = self.described(|g| g.found_in.iter().any(|t| t == target));
        if still.is_empty() {
            format!("{sep}the published code passes every scenario")
        } else {
            format!(
                "{sep}the published code still fails: finding {}",
                still.join(", ")
            )
        }
    }

    /// The rung with every repair on (with two or more repairs).
    fn all_repairs(&self) -> Option<&Rung> {
        self.rungs
            .iter()
            .filter(|r| r.repairs.len() >= 2)
            .max_by_key(|r| r.repairs.len())
    }

    /// The numbers (from 1) of the findings `keep` keeps.
    fn numbered(&self, keep: impl Fn(&LadderFinding) -> bool) -> Vec<String> {
        self.findings
            .iter()
            .enumerate()
            .filter(|(_, g)| keep(g))
            .map(|(i, _)| (i + 1).to_string())
            .collect()
    }

    /// The findings `keep` keeps, in words: `3 (progress, needs evict)`.
    fn described(&self, keep: impl Fn(&LadderFinding) -> bool) -> Vec<String> {
        self.findings
            .iter()
            .enumerate()
            .filter(|(_, g)| keep(g))
            .map(|(i, g)| {
                format!(
                    "{} ({}, needs {})",
                    i + 1,
                    g.finding.property,
                    g.finding.describe_faults()
                )
            })
            .collect()
    }

    fn labels_md(&self, s: &mut String) {
        let labelled: Vec<(&str, Label)> = self
            .checks()
            .filter_map(|c| Some((c.report.scenario.as_str(), c.label()?)))
            .collect();
        if labelled.is_empty() {
            return;
        }
        s.push_str("\nThe fixed variant's expected failures:\n\n");
        for (scenario, label) in labelled {
            let _ = writeln!(s, "- `{scenario}`: {label}");
        }
    }
}

/// What a rung is, for people.
pub fn rung_about(rung: &Rung) -> String {
    match rung.variant {
        Variant::Published => "the code as its source publishes it".to_string(),
        Variant::Proposed => "the source's own proposed fix".to_string(),
        Variant::Fixed => "the project's design".to_string(),
        Variant::Repaired(r) => r
            .repairs()
            .iter()
            .map(|r| format!("{} ({})", r.name, r.fixes))
            .collect::<Vec<_>>()
            .join(", "),
    }
}
