//! The reports `kvsim report` writes to `reports/`: per model the fault matrix (variants ×
//! fault profiles → verdict) and the minimal counterexample of every violation in it, in
//! text and HTML, with an index.
//!
//! The output is a pure function of the registry: fixed seeds, a run budget rather than a
//! time limit, no wall-clock times in any file. `models/tests/reports.rs` regenerates it and
//! fails on any difference from the committed `reports/`, so it never goes stale.
//!
//! Layout:
//! ```text
//! reports/README.md              index: every model, which profiles break which variant
//! reports/index.html             the same with every matrix, for a browser
//! reports/MODEL/README.md        the model's fault matrix and its counterexamples
//! reports/MODEL/VARIANT-PROFILE.txt   a minimal counterexample, as `kvsim check` prints it
//! reports/MODEL/VARIANT-PROFILE.html  the same as a page with a sequence diagram
//! ```

use crate::expect::{Expect, ExpectedVerdict, Label, Variant};
use crate::ladder::{self, Ladder};
use crate::registry::{registry, Entry};
use kvsim::harness::campaign;
use kvsim::harness::{Budget, CheckReport, Finding, Hooks, Job, Plan, RunReport, ShrinkLimits};
use kvsim::report::escape;
use kvsim::SimConfig;
use kvsim::Verdict;
use kvsim::{FaultKind, FaultSet, Scenario};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// The base seed of every check in the reports.
pub const SEED: u64 = 1;

/// Most runs per matrix cell (a scenario asking for fewer gets fewer).
pub const MAX_RUNS: u64 = 2000;

/// How hard counterexamples are minimized.
pub fn shrink_limits() -> ShrinkLimits {
    ShrinkLimits::default()
}

/// The default output directory: `reports/` at the workspace root.
pub fn default_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .map_or_else(|| PathBuf::from("reports"), |root| root.join("reports"))
}

/// A fault profile: no faults, or one fault kind alone.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Profile {
    /// No faults: interleavings only.
    NoFaults,
    /// This fault kind alone.
    Only(FaultKind),
    /// No faults, but the structure's work takes time (the model's first scenario with a
    /// [`Scenario::work_ms`] range): leases and expiries run out on their own.
    SlowWork,
}

impl Profile {
    /// `none`, `evict`, `pause`, ….
    pub fn name(self) -> &'static str {
        match self {
            Profile::NoFaults => "none",
            Profile::Only(k) => k.name(),
            Profile::SlowWork => "slow-work",
        }
    }
}

/// One cell of a fault matrix.
pub struct Cell {
    /// The variant.
    pub variant: Variant,
    /// The profile.
    pub profile: Profile,
    /// The scenario that was checked (the model's scenario it derives from, with only the
    /// profile's faults).
    pub scenario: Scenario,
    /// A violation the registry expects of this cell: `Some`, with the fixed variant's
    /// label if any (see [`expectation_for`]).
    pub expected_failure: Option<Option<Label>>,
    /// The verdict over the runs.
    pub verdict: Verdict,
    /// Runs made.
    pub runs: u64,
    /// The counterexample this cell shows: a finding's minimal run that needs this cell's
    /// fault (for `none`: one that needs no fault). `None` for a violation whose findings
    /// all need no fault (the cell is then "as without faults").
    pub counterexample: Option<RunReport>,
    /// Everything the cell's check found.
    pub findings: Vec<Finding>,
    /// How often the cell's runs hit each probe of the structure ([`kvsim::Kv::probe`]).
    pub probes: std::collections::BTreeMap<String, u64>,
}

impl Cell {
    /// Whether this cell's runs fail, but only in ways that need none of its fault (its
    /// findings are the fault-free column's).
    pub fn no_fault_needed(&self) -> bool {
        self.verdict.is_violation() && self.counterexample.is_none()
    }

    /// The counterexample's file name without extension: `VARIANT-PROFILE`.
    pub fn stem(&self) -> String {
        format!("{}-{}", self.variant.name(), self.profile.name())
    }
}

/// A model's fault matrix.
pub struct Matrix {
    /// The model.
    pub model: &'static str,
    /// One line about it.
    pub about: &'static str,
    /// The profiles (columns).
    pub profiles: Vec<Profile>,
    /// The cells, variant-major.
    pub cells: Vec<Cell>,
    /// The model's notes on its findings ([`Entry::notes`]).
    pub notes: Vec<&'static str>,
    /// The model's ladder ([`crate::ladder`]): every rung × scenario, findings once.
    pub ladder: Ladder,
    /// The fixed variant's labelled expected failures: (scenario, label).
    pub labels: Vec<(String, Label)>,
}

/// The profiles of a model: none, slow work if a scenario gives the work time, then each
/// fault kind its scenarios use, in the CLI's order.
pub fn profiles(e: &Entry) -> Vec<Profile> {
    let mut out = vec![Profile::NoFaults];
    if e.scenarios.iter().any(|(s, _)| slow(s)) {
        out.push(Profile::SlowWork);
    }
    for kind in FaultKind::ALL {
        if e.scenarios.iter().any(|(s, _)| s.faults.has(kind)) {
            out.push(Profile::Only(kind));
        }
    }
    out
}

/// Whether the scenario's work takes time.
fn slow(s: &Scenario) -> bool {
    s.work_ms != [0, 0]
}

/// The scenario a profile checks: the model's first scenario with that fault (for `none`,
/// its first scenario without faults and slow work, else its first with the faults taken
/// out; for `slow-work`, its first with slow work), with only the profile's fault on and
/// at most [`MAX_RUNS`] runs.
pub fn scenario_for(e: &Entry, profile: Profile) -> Scenario {
    let mut s = base_of(e, profile)
        .map(|(s, _)| s.clone())
        .unwrap_or_else(|| Scenario::new("default", 2, 2));
    let had_lru = s.faults.has(FaultKind::Lru);
    s.faults = match profile {
        Profile::NoFaults | Profile::SlowWork => FaultSet::none(),
        Profile::Only(kind) => FaultSet::of(&[kind]),
    };
    if profile != Profile::SlowWork {
        s.work_ms = [0, 0];
    }
    if had_lru && profile != Profile::Only(FaultKind::Lru) {
        s.memory_limit = None;
    }
    s.runs = s.runs.min(MAX_RUNS);
    s.name = format!("{}+{}", s.name, profile.name());
    s
}

/// The model's scenario a profile's cell derives from (see [`scenario_for`]).
fn base_of(e: &Entry, profile: Profile) -> Option<&(Scenario, Expect)> {
    match profile {
        Profile::NoFaults => e
            .scenarios
            .iter()
            .find(|(s, _)| s.faults.is_empty() && !slow(s))
            .or_else(|| e.scenarios.first()),
        Profile::Only(kind) => e.scenarios.iter().find(|(s, _)| s.faults.has(kind)),
        Profile::SlowWork => e.scenarios.iter().find(|(s, _)| slow(s)),
    }
}

/// The registry's expectation of a profile's cell for `variant`, with the fixed
/// variant's label: its scenario's, when the cell checks that scenario's faults and work
/// unchanged (a cell that took faults out checks another scenario: no expectation).
pub fn expectation_for(
    e: &Entry,
    profile: Profile,
    variant: Variant,
) -> Option<(ExpectedVerdict, Option<Label>)> {
    let (base, expect) = base_of(e, profile)?;
    let cell = scenario_for(e, profile);
    (cell.faults == base.faults && cell.work_ms == base.work_ms)
        .then(|| (expect.of(variant), ladder::label_of(variant, expect)))
}

/// The cell of `profile` from its check's report: its minimal counterexample is the first
/// minimized finding that the profile's fault (or no fault) shows.
fn cell(
    e: &Entry,
    variant: Variant,
    profile: Profile,
    scenario: Scenario,
    report: CheckReport,
) -> Cell {
    let counterexample = report
        .findings
        .iter()
        .filter(|f| f.minimized)
        .find(|f| match profile {
            Profile::NoFaults | Profile::SlowWork => f.faults.is_empty(),
            Profile::Only(kind) => f.needs(kind),
        })
        .map(|f| f.counterexample.clone());
    let expected_failure = match expectation_for(e, profile, variant) {
        Some((ExpectedVerdict::Violation, label)) if report.verdict.is_violation() => Some(label),
        _ => None,
    };
    Cell {
        variant,
        profile,
        scenario,
        expected_failure,
        verdict: report.verdict,
        runs: report.runs,
        counterexample,
        findings: report.findings,
        probes: report.probes,
    }
}

/// How many checks [`matrices`] makes of `entries`: every model's matrix cells (named
/// variants × profiles) and its ladder's rungs × scenarios.
pub fn cell_count(entries: &[Entry]) -> usize {
    entries
        .iter()
        .map(|e| {
            e.available_variants().len() * profiles(e).len() + e.rungs().len() * e.scenarios.len()
        })
        .sum()
}

/// Builds every model's matrix on `threads` worker threads (results in a fixed order).
pub fn matrices(threads: usize) -> Vec<Matrix> {
    matrices_with(registry, threads, &|_| {})
}

/// [`matrices`] of the models `registry` builds (kvsim's, or a crate's own), calling
/// `on_cell` with `MODEL/VARIANT PROFILE` as each cell is done (from the worker threads, in
/// no fixed order).
pub fn matrices_with(
    registry: fn() -> Vec<Entry>,
    threads: usize,
    on_cell: &(dyn Fn(&str) + Sync),
) -> Vec<Matrix> {
    let entries = registry();
    let mut jobs = Vec::new();
    for (i, e) in entries.iter().enumerate() {
        for variant in e.available_variants() {
            for p in profiles(e) {
                let scenario = scenario_for(e, p);
                jobs.push(Job {
                    target: (i, variant, p),
                    config: SimConfig::from_scenario(&scenario),
                    scenario,
                    expect_violation: false,
                });
            }
        }
    }
    let plan = Plan {
        jobs,
        budget: Budget {
            threads,
            ..Budget::runs(SEED)
        },
        shrink: Some(shrink_limits()),
    };
    let reports = campaign::run(
        &plan,
        &registry,
        &|entries: &Vec<Entry>, &(m, variant, _)| entries[m].target(variant),
        &Progress(on_cell),
    );
    let mut cells = plan.jobs.into_iter().zip(reports).map(|(job, report)| {
        let e = &entries[job.target.0];
        cell(e, job.target.1, job.target.2, job.scenario, report)
    });
    let models: Vec<usize> = (0..entries.len()).collect();
    let ladders = ladder::run_of(
        registry,
        &models,
        plan.budget,
        Some(shrink_limits()),
        &ladder::untuned,
        &LadderProgress(on_cell),
    );
    entries
        .iter()
        .zip(ladders)
        .map(|(e, ladder)| {
            let n = e.available_variants().len() * profiles(e).len();
            Matrix {
                model: e.name,
                about: e.about,
                profiles: profiles(e),
                cells: cells.by_ref().take(n).collect(),
                notes: e.notes.clone(),
                ladder,
                labels: e
                    .scenarios
                    .iter()
                    .filter_map(|(s, x)| {
                        Some((s.name.clone(), ladder::label_of(Variant::Fixed, x)?))
                    })
                    .collect(),
            }
        })
        .collect()
}

/// Calls its function with `MODEL/VARIANT PROFILE` as each cell is done.
struct Progress<'a>(&'a (dyn Fn(&str) + Sync));

impl Hooks<(usize, Variant, Profile)> for Progress<'_> {
    fn after(&self, _: usize, job: &Job<(usize, Variant, Profile)>, report: &mut CheckReport) {
        (self.0)(&format!("{} {}", report.target, job.target.2.name()));
    }
}

/// Calls its function with `MODEL/VARIANT SCENARIO` as each ladder check is done.
struct LadderProgress<'a>(&'a (dyn Fn(&str) + Sync));

impl Hooks<ladder::Pick> for LadderProgress<'_> {
    fn after(&self, _: usize, _: &Job<ladder::Pick>, report: &mut CheckReport) {
        (self.0)(&format!("{} {}", report.target, report.scenario));
    }
}

/// The verdict of a cell in a few characters (`pass`, `✗ linearizability`, `unknown`),
/// an expected failure marked (`✗ mutual exclusion · expected: impossible`).
fn short(cell: &Cell) -> String {
    let verdict = match &cell.verdict {
        Verdict::Ok => "pass".to_string(),
        Verdict::Violation(_) if cell.no_fault_needed() => "✗ as without faults".to_string(),
        Verdict::Violation(v) => format!("✗ {}", v.property),
        Verdict::Unknown(_) => "unknown".to_string(),
    };
    match cell.expected_failure {
        Some(Some(label)) => format!("{verdict} · expected: {}", label.name()),
        Some(None) => format!("{verdict} · expected"),
        None => verdict,
    }
}

/// The longest replay token a report's list prints whole; a longer one (a run whose
/// clients' operations or workload the token carries) is left to its counterexample's
/// page, so that no line of the list runs to a thousand characters.
pub const MAX_LISTED_TOKEN: usize = 240;

/// `` `kvsim replay TOKEN` ``, or for a token over [`MAX_LISTED_TOKEN`] characters a link
/// to `page`, whose last line replays it.
pub fn replay_md(token: &str, page: &str) -> String {
    if token.chars().count() <= MAX_LISTED_TOKEN {
        format!("`kvsim replay {token}`")
    } else {
        format!(
            "replay: the token ({} characters) ends [its counterexample]({page})",
            token.chars().count()
        )
    }
}

/// The footnote for cells "as without faults".
const NO_FAULT: &str = "as without faults: this column's runs fail, but every failure they \
found shrinks to a counterexample that needs no fault (see the `none` column): the fault adds \
no defect of its own at this budget.";

/// Every file of the reports, as (path relative to the output directory, contents).
pub fn files(ms: &[Matrix]) -> Vec<(PathBuf, String)> {
    let entries = registry();
    let mut out = Vec::new();
    out.push((PathBuf::from("README.md"), index_md(ms)));
    out.push((PathBuf::from("index.html"), index_html(ms)));
    for m in ms {
        out.push((Path::new(m.model).join("README.md"), model_md(m)));
        let own = model_findings(m)
            .into_iter()
            .filter_map(|(_, f, stem)| Some((stem?, &f.counterexample)))
            .filter(|(stem, _)| stem.contains("-finding-"));
        let cells = m
            .cells
            .iter()
            .filter_map(|c| c.counterexample.as_ref().map(|r| (c.stem(), r)));
        for (stem, r) in cells.chain(own) {
            out.push((
                Path::new(m.model).join(format!("{stem}.txt")),
                kvsim::report::text(r),
            ));
            out.push((
                Path::new(m.model).join(format!("{stem}.html")),
                kvsim::report::html(&recorded(&entries, r)),
            ));
        }
    }
    out
}

/// `r` with its stores' contents step by step for the page's viewer, replayed by its
/// registered target ([`kvsim::harness::target::with_store`]); as it is when no target of
/// that name is registered.
fn recorded(entries: &[Entry], r: &RunReport) -> RunReport {
    let target = entries
        .iter()
        .flat_map(|e| e.targets())
        .find(|(_, t)| t.name() == r.target);
    match target {
        Some((_, t)) => kvsim::harness::target::with_store(t, r),
        None => r.clone(),
    }
}

const GENERATED: &str = "Generated by `kvsim report` (`cargo run --release -- report`); do not \
edit. `models/tests/reports.rs` regenerates these files and fails when they differ, so they are \
always current.";

fn index_md(ms: &[Matrix]) -> String {
    let mut s = String::from("# kvsim reports\n\n");
    let _ = writeln!(s, "{GENERATED}\n");
    s.push_str(
        "Each model is checked in both variants under no faults and under each fault kind its \
         scenarios use, one at a time (seed 1, a fixed run budget). A violation links to its \
         minimal counterexample.\n\n",
    );
    s.push_str("| model | variant | breaks under | passes under |\n|---|---|---|---|\n");
    for m in ms {
        for variant in Variant::ALL {
            let cells: Vec<&Cell> = m.cells.iter().filter(|c| c.variant == variant).collect();
            if cells.is_empty() {
                continue;
            }
            let breaks: Vec<String> = cells
                .iter()
                .filter(|c| c.counterexample.is_some())
                .map(|c| format!("[{}]({}/{}.txt)", c.profile.name(), m.model, c.stem()))
                .chain(
                    Some(
                        cells
                            .iter()
                            .filter(|c| c.no_fault_needed())
                            .map(|c| c.profile.name())
                            .collect::<Vec<_>>(),
                    )
                    .filter(|same| !same.is_empty())
                    .map(|same| format!("{} (as without faults)", same.join(", "))),
                )
                .collect();
            let passes: Vec<&str> = cells
                .iter()
                .filter(|c| c.verdict.is_ok())
                .map(|c| c.profile.name())
                .collect();
            let _ = writeln!(
                s,
                "| [{}]({}/README.md) | {} | {} | {} |",
                m.model,
                m.model,
                variant.name(),
                if breaks.is_empty() {
                    "—".to_string()
                } else {
                    breaks.join(", ")
                },
                if passes.is_empty() {
                    "—".to_string()
                } else {
                    passes.join(", ")
                }
            );
        }
    }
    s
}

fn model_md(m: &Matrix) -> String {
    let mut s = format!(
        "# {}\n\n{}\n\n{GENERATED}\n\n## Fault matrix\n\n",
        m.model, m.about
    );
    s.push_str("| variant |");
    for p in &m.profiles {
        let _ = write!(s, " {} |", p.name());
    }
    s.push_str("\n|---|");
    for _ in &m.profiles {
        s.push_str("---|");
    }
    s.push('\n');
    for variant in Variant::ALL {
        let cells: Vec<&Cell> = m.cells.iter().filter(|c| c.variant == variant).collect();
        if cells.is_empty() {
            continue;
        }
        let _ = write!(s, "| {} |", variant.name());
        for c in cells {
            let text = short(c);
            if c.counterexample.is_some() {
                let _ = write!(s, " [{text}]({}.txt) |", c.stem());
            } else if c.no_fault_needed() {
                let _ = write!(s, " [{text}](#findings) |");
            } else {
                let _ = write!(s, " {text} |");
            }
        }
        s.push('\n');
    }
    if m.cells.iter().any(Cell::no_fault_needed) {
        let _ = writeln!(s, "\n{NO_FAULT}");
    }
    s.push_str("\nEach column checks one scenario of the model with only that fault on:\n\n");
    for p in &m.profiles {
        if let Some(c) = m.cells.iter().find(|c| c.profile == *p) {
            let sc = &c.scenario;
            let _ = writeln!(
                s,
                "- `{}`: scenario `{}`, {} clients × {} ops, strategy {}, faults {} (at most {}){}, \
                 {} runs from seed {SEED}",
                p.name(),
                sc.name,
                sc.clients,
                sc.ops,
                sc.strategy,
                sc.faults,
                sc.fault_budget,
                match sc.work_ms {
                    [0, 0] => String::new(),
                    [lo, hi] => format!(", each piece of work {lo}-{hi} ms"),
                },
                sc.runs
            );
        }
    }
    findings_md(&mut s, m);
    s.push_str(&m.ladder.markdown());
    probes_md(&mut s, m);
    let found: Vec<&Cell> = m
        .cells
        .iter()
        .filter(|c| c.counterexample.is_some())
        .collect();
    if !found.is_empty() {
        s.push_str("\n## Minimal counterexamples\n\n");
        for c in found {
            let r = c.counterexample.as_ref().expect("filtered");
            let why = match &r.verdict {
                Verdict::Violation(v) => v.reason.clone(),
                other => other.to_string(),
            };
            let _ = writeln!(
                s,
                "- **{} under {}** ([text]({stem}.txt), [page]({stem}.html)): {} — {}.\n  \
                 {}",
                c.variant.name(),
                c.profile.name(),
                r.shrink
                    .as_ref()
                    .map(|x| x.describe(r))
                    .unwrap_or_else(|| format!("{} steps", r.steps)),
                why.trim_end_matches('.'),
                replay_md(&r.token, &format!("{}.txt", c.stem())),
                stem = c.stem()
            );
        }
    }
    let unknown: Vec<&Cell> = m
        .cells
        .iter()
        .filter(|c| matches!(c.verdict, Verdict::Unknown(_)))
        .collect();
    if !unknown.is_empty() {
        s.push_str("\n## Unknown verdicts\n\n");
        for c in unknown {
            let _ = writeln!(
                s,
                "- {} under {}: {}",
                c.variant.name(),
                c.profile.name(),
                c.verdict
            );
        }
    }
    s
}

/// A model's findings: every defect its matrix found, per variant (deduplicated by
/// property, reason class and faults needed), each with the file stem of the
/// counterexample that shows it: a cell's, or `VARIANT-finding-N` of its own when no cell
/// shows it (a fault-free defect that only a fault column's runs happened to find);
/// `None` for a finding that was not minimized and no cell shows.
pub fn model_findings(m: &Matrix) -> Vec<(Variant, &Finding, Option<String>)> {
    let mut out: Vec<(Variant, &Finding, Option<String>)> = Vec::new();
    for c in &m.cells {
        for f in &c.findings {
            if out
                .iter()
                .any(|(v, g, _)| *v == c.variant && g.same_defect(f))
            {
                continue;
            }
            let shown = m.cells.iter().find(|d| {
                d.variant == c.variant
                    && d.counterexample
                        .as_ref()
                        .is_some_and(|r| r.token == f.replay)
            });
            let stem = match shown {
                Some(d) => Some(d.stem()),
                None if f.minimized => {
                    let n = 1 + out
                        .iter()
                        .filter(|(v, _, s)| {
                            *v == c.variant && s.as_ref().is_some_and(|s| s.contains("-finding-"))
                        })
                        .count();
                    Some(format!("{}-finding-{n}", c.variant.name()))
                }
                None => None,
            };
            out.push((c.variant, f, stem));
        }
    }
    out
}

/// How often each column's runs reached each probe of the structure, per variant; nothing
/// for a structure without probes.
fn probes_md(s: &mut String, m: &Matrix) {
    let mut names: Vec<&String> = m.cells.iter().flat_map(|c| c.probes.keys()).collect();
    names.sort();
    names.dedup();
    if names.is_empty() {
        return;
    }
    s.push_str(
        "\n## Probes\n\nHow often the runs of each column reached each probe of the structure's \
         code (`Kv::probe`, summed over the runs); 0: no run got there, so that column does not \
         test what follows it.\n\n| variant | probe |",
    );
    for p in &m.profiles {
        let _ = write!(s, " {} |", p.name());
    }
    s.push_str("\n|---|---|");
    for _ in &m.profiles {
        s.push_str("---|");
    }
    s.push('\n');
    let mut variants: Vec<Variant> = m.cells.iter().map(|c| c.variant).collect();
    variants.dedup();
    for v in variants {
        // A variant's own probes: the names its cells count (its catalog, hit or not).
        let mut own: Vec<&String> = m
            .cells
            .iter()
            .filter(|c| c.variant == v)
            .flat_map(|c| c.probes.keys())
            .collect();
        own.sort();
        own.dedup();
        for name in own {
            let _ = write!(s, "| {} | {name} |", v.name());
            for p in &m.profiles {
                let n = m
                    .cells
                    .iter()
                    .find(|c| c.variant == v && c.profile == *p)
                    .and_then(|c| c.probes.get(name))
                    .copied()
                    .unwrap_or(0);
                let _ = write!(s, " {n} |");
            }
            s.push('\n');
        }
    }
}

/// The model's findings, one line each.
fn findings_md(s: &mut String, m: &Matrix) {
    let lines = model_findings(m);
    if lines.is_empty() {
        return;
    }
    s.push_str("\n## Findings\n\n");
    for (v, f, stem) in lines {
        let slow_work = stem.as_deref() == Some(&format!("{}-slow-work", v.name()));
        let link = match stem {
            Some(stem) => format!("[counterexample]({stem}.txt)"),
            None => format!("not minimized: `kvsim replay {}`", f.replay),
        };
        let needs = match slow_work {
            true => format!("{}, only slow work", f.describe_faults()),
            false => f.describe_faults(),
        };
        let _ = writeln!(
            s,
            "- {}: {}: {} — needs {needs} ({link})",
            v.name(),
            f.property,
            f.reason.trim_end_matches('.'),
        );
    }
    if !m.notes.is_empty() {
        s.push_str("\n### Reading these findings\n\n");
        for note in &m.notes {
            let _ = writeln!(s, "{note}\n");
        }
    }
}

fn index_html(ms: &[Matrix]) -> String {
    let mut s = String::from(
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>kvsim \
         reports</title>\n<style>\nbody{font:14px/1.45 system-ui,sans-serif;margin:24px 32px;\
         color:#1d2330}table{border-collapse:collapse;margin:6px 0 18px}td,th{border:1px solid \
         #d8dce4;padding:3px 10px;text-align:left}th{background:#f4f5f8}.bad a,.bad{color:#b3261e}\
         .ok{color:#1e7b34}.unk{color:#8a6d3b}p{color:#4c566a}\n</style>\n</head>\n<body>\n\
         <h1>kvsim reports</h1>\n",
    );
    let _ = writeln!(s, "<p>{}</p>", escape(&GENERATED.replace('`', "")));
    for m in ms {
        let _ = writeln!(
            s,
            "<h2>{}</h2>\n<p>{}</p>\n<table>\n<tr><th>variant</th>",
            escape(m.model),
            escape(m.about)
        );
        for p in &m.profiles {
            let _ = write!(s, "<th>{}</th>", p.name());
        }
        s.push_str("</tr>\n");
        for variant in Variant::ALL {
            let cells: Vec<&Cell> = m.cells.iter().filter(|c| c.variant == variant).collect();
            if cells.is_empty() {
                continue;
            }
            let _ = write!(s, "<tr><th>{}</th>", variant.name());
            for c in cells {
                let text = escape(&short(c));
                match (&c.verdict, &c.counterexample) {
                    (Verdict::Violation(_), None) => {
                        let _ = write!(s, "<td class=\"bad\">{text}</td>");
                    }
                    (_, Some(_)) => {
                        let _ = write!(
                            s,
                            "<td class=\"bad\"><a href=\"{}/{}.html\">{text}</a></td>",
                            m.model,
                            c.stem()
                        );
                    }
                    (Verdict::Ok, _) => {
                        let _ = write!(s, "<td class=\"ok\">{text}</td>");
                    }
                    _ => {
                        let _ = write!(s, "<td class=\"unk\">{text}</td>");
                    }
                }
            }
            s.push_str("</tr>\n");
        }
        s.push_str("</table>\n");
        if m.cells.iter().any(Cell::no_fault_needed) {
            let _ = writeln!(s, "<p>{}</p>", escape(NO_FAULT));
        }
        for (scenario, label) in &m.labels {
            let _ = writeln!(
                s,
                "<p>fixed, scenario {}: expected to fail, <b>{}</b>: {}</p>",
                escape(scenario),
                label.name(),
                escape(label.reason())
            );
        }
    }
    s.push_str("</body>\n</html>\n");
    s
}

/// Writes `files` under `dir`, first removing each model directory it will write (so no
/// stale counterexample survives).
pub fn write(dir: &Path, files: &[(PathBuf, String)]) -> std::io::Result<()> {
    let mut models: Vec<PathBuf> = files
        .iter()
        .filter_map(|(p, _)| p.parent().filter(|d| !d.as_os_str().is_empty()))
        .map(Path::to_path_buf)
        .collect();
    models.sort();
    models.dedup();
    for m in models {
        let d = dir.join(m);
        if d.exists() {
            std::fs::remove_dir_all(&d)?;
        }
    }
    for (path, contents) in files {
        let full = dir.join(path);
        if let Some(parent) = full.parent() {
            std::fs::create_dir_all(parent)?;
        }
        std::fs::write(full, contents)?;
    }
    Ok(())
}
