//! Findings: what a check found, one entry per defect, each with its minimal
//! counterexample.
//!
//! A check does not stop at its first violation ([`sweep`](crate::harness::sweep::sweep)): it groups every
//! violating run by property, reason class ([`Violation::class`]) and the fault kinds the
//! run injected. [`check`] then minimizes one run of each group and groups again by what
//! the minimal run still shows: its property, its reason's class, and the fault kinds it
//! still needs. So a queue that loses items without any fault and also under a restart
//! gives two findings, and a failure that a fault column merely happened to find is
//! reported as the fault-free finding it is.
//!
//! This is the one check → shrink → report path: `kvsim check`, `kvsim report` and
//! [`crate::Check`] all call [`check`].

use crate::harness::probed::Probed;
use crate::harness::records::{CheckReport, RunReport};
use crate::harness::shrink::{self, ShrinkLimits};
use crate::harness::sweep::{RunBudget, ViolationGroup};
use crate::harness::target::Target;
use crate::scenario::{FaultKind, Scenario};
use crate::sim::{self, SimConfig};
use crate::verdict::{Verdict, Violation};

pub use crate::harness::records::{describe_faults, Finding};

/// Most violation groups minimized per check (fewest faults first); the rest are
/// reported as found, marked not minimized.
pub const MAX_SHRUNK: usize = 24;

/// The fault kinds a traced run injected, in the CLI's order. Skewed clocks are set when
/// the run starts, not injected as steps: a run whose config still has `skew` (the
/// shrinker drops the kind where the run fails without it) needs skewed clocks.
pub fn faults_of(r: &RunReport) -> Vec<FaultKind> {
    let mut kinds: Vec<FaultKind> = r
        .trace
        .iter()
        .filter_map(|s| match &s.event {
            sim::Event::Fault(f) => f.kind(),
            sim::Event::Call {
                delivery: sim::Delivery::RequestLost | sim::Delivery::ReplyLost(_),
                ..
            } => Some(FaultKind::Lose),
            _ => None,
        })
        .collect();
    if r.config.faults.has(FaultKind::Skew) {
        kinds.push(FaultKind::Skew);
    }
    kinds.sort();
    kinds.dedup();
    kinds
}

/// Checks `target` under `scenario` and makes its findings: each violation group's first
/// run is replayed with its trace, minimized (unless `shrink` is `None`), and the groups
/// are merged by what their minimal runs show. The report's `failure` is the first
/// finding's counterexample.
pub fn check(
    target: &dyn Target,
    scenario: &Scenario,
    config: &SimConfig,
    limits: &RunBudget,
    shrink: Option<&ShrinkLimits>,
) -> CheckReport {
    let mut report = target.sweep(scenario, config, limits);
    complete(target, config, &mut report, shrink);
    report
}

/// The second half of [`check`], for a report `target.sweep` made with `config`: its
/// findings, its failure, and its verdict from the first finding. (A caller that sweeps
/// many scenarios first, to spend a time budget on runs before minimizing, calls it
/// after.)
pub fn complete(
    target: &dyn Target,
    config: &SimConfig,
    report: &mut CheckReport,
    shrink: Option<&ShrinkLimits>,
) {
    report.findings = findings(target, &report.scenario, config, &report.groups, shrink);
    if let Some(first) = report.findings.first() {
        report.failure = Some(first.counterexample.clone());
        if let Verdict::Violation(_) = &first.counterexample.verdict {
            report.verdict = first.counterexample.verdict.clone();
        }
    }
}

/// Adds a past failure, replayed (from a corpus of earlier findings), to `report`: when
/// the run still fails, it is a finding of the report (merged with one that shows the same
/// defect), its failure if the report had none, and the verdict is a violation. A replay
/// that passes changes nothing. Returns whether it still fails.
pub fn add_replayed(report: &mut CheckReport, run: RunReport) -> bool {
    let Verdict::Violation(v) = &run.verdict else {
        return false;
    };
    let v = v.clone();
    merge(&mut report.findings, &v, faults_of(&run), 1, true, run);
    report.findings.sort_by_key(|f| f.faults.len());
    if !report.verdict.is_violation() {
        let first = &report.findings[0].counterexample;
        report.verdict = first.verdict.clone();
        report.failure = Some(first.clone());
    }
    true
}

/// The findings of a check's violation groups (see [`check`]).
pub fn findings(
    target: &dyn Target,
    scenario: &str,
    config: &SimConfig,
    groups: &[ViolationGroup],
    shrink: Option<&ShrinkLimits>,
) -> Vec<Finding> {
    // Fewest faults first (the simplest explanation of a defect wins the merge), and each
    // property and reason class once before any twice (so the minimization budget covers
    // every kind of failure).
    let mut order: Vec<&ViolationGroup> = groups.iter().collect();
    order.sort_by_key(|g| g.faults.len());
    let (mut firsts, mut repeats): (Vec<&ViolationGroup>, Vec<&ViolationGroup>) =
        (Vec::new(), Vec::new());
    for g in order {
        if firsts
            .iter()
            .any(|f| f.property == g.property && f.class == g.class)
        {
            repeats.push(g);
        } else {
            firsts.push(g);
        }
    }
    let order = firsts.into_iter().chain(repeats);
    let mut out: Vec<Finding> = Vec::new();
    // The groups' shrinks meet the same small runs: each is run once.
    let mut probed = Probed::new();
    for (rank, g) in order.into_iter().enumerate() {
        let found = target.run(scenario, config, g.seed, None);
        if !found.verdict.is_violation() {
            // The replay disagrees with the run that was judged: never a finding.
            continue;
        }
        let (run, minimized) = match shrink {
            Some(limits) if rank < MAX_SHRUNK => {
                let run = shrink::shrink_with(target, &found, limits, &mut probed);
                (run, true)
            }
            _ => (found, false),
        };
        let Verdict::Violation(v) = &run.verdict else {
            continue;
        };
        if !minimized {
            // Past the minimization budget: a run of a defect already found (same property
            // and class) counts for it; otherwise it is a finding of its own, with the
            // faults it happened to inject.
            let class = v.class();
            if let Some(f) = out
                .iter_mut()
                .find(|f| f.minimized && f.property == v.property && f.class == class)
            {
                f.runs += g.runs;
                continue;
            }
        }
        let faults = if minimized {
            faults_of(&run)
        } else {
            g.faults.clone()
        };
        merge(&mut out, v, faults, g.runs, minimized, run.clone());
    }
    out.sort_by_key(|f| f.faults.len());
    out
}

fn merge(
    out: &mut Vec<Finding>,
    v: &Violation,
    faults: Vec<FaultKind>,
    runs: u64,
    minimized: bool,
    run: RunReport,
) {
    let class = v.class();
    if let Some(f) = out
        .iter_mut()
        .find(|f| f.property == v.property && f.class == class && f.faults == faults)
    {
        f.runs += runs;
        // Keep the smaller counterexample.
        if minimized && (!f.minimized || run.steps < f.counterexample.steps) {
            f.reason = v.reason.clone();
            f.replay = run.token.clone();
            f.minimized = true;
            f.counterexample = run;
        }
        return;
    }
    out.push(Finding {
        property: v.property.clone(),
        reason: v.reason.clone(),
        class,
        faults,
        runs,
        replay: run.token.clone(),
        minimized,
        counterexample: run,
    });
}
