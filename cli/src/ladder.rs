//! `kvsim ladder MODEL`: every rung of a model (published, each repair alone, all repairs,
//! proposed, fixed) against every scenario, as one plan, and each distinct finding once
//! with the repairs that remove it (see [`kvsim_models::ladder`]).
//!
//! The budget flags are `kvsim check`'s, read and checked by check's own code
//! ([`check::Args::budget_only`], [`check::Args::tuning`]); the table is check's.

use crate::check::{self, Row};
use crate::error::{self, CliError};
use crate::installed::registry;
use crate::out::{out, outln};
use kvsim::harness::{CheckReport, Hooks, Job, ShrinkLimits};
use kvsim::Verdict;
use kvsim_models::ladder::{self, Ladder, Pick};
use serde_json::json;
use std::process::ExitCode;
use std::time::Instant;

/// Options of `kvsim ladder`.
#[derive(clap::Args, Debug, Clone)]
pub struct Args {
    /// The model, e.g. `fifo` (`kvsim list` names them).
    pub model: String,
    /// Print `{model, seed, rungs, findings}` as JSON instead of the table.
    #[arg(long)]
    pub json: bool,
    /// Base seed: run i of a scenario uses a seed derived from it.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Runs (seeds) per rung × scenario (at least 1; default: each scenario's own).
    #[arg(long)]
    pub runs: Option<u64>,
    /// Spend about SECS seconds on the whole ladder, shared by its checks as `kvsim
    /// check --time-budget` shares it.
    #[arg(long, value_name = "SECS")]
    pub time_budget: Option<f64>,
    /// With `--time-budget`: the fewest runs a check must do for a verdict.
    #[arg(long, value_name = "N", default_value_t = 10, requires = "time_budget")]
    pub min_runs: u64,
    /// Worker threads (default: the machine's cores).
    #[arg(long)]
    pub threads: Option<usize>,
}

/// Ticks the progress bar after each rung × scenario.
struct Ticks(crate::progress::Progress);

impl Hooks<Pick> for Ticks {
    fn after(&self, _: usize, _: &Job<Pick>, report: &mut CheckReport) {
        self.0
            .tick(&format!("{} {}", report.target, report.scenario));
    }
}

/// Runs `kvsim ladder`; returns the exit code (0 every verdict as expected, 1 one
/// differs, 3 one is unknown; 2 a usage error).
pub fn main(args: &Args) -> Result<ExitCode, CliError> {
    let entries = registry();
    let model = ladder::model_index(&entries, &args.model).map_err(CliError::new)?;
    let check_args = check::Args::budget_only(
        args.seed,
        args.runs,
        args.time_budget,
        args.min_runs,
        args.threads,
    );
    let tuning = check_args.tuning().map_err(CliError::new)?;
    let budget = check::budget(&check_args, &tuning);
    let e = &entries[model];
    let checks = e.rungs().len() * e.scenarios.len();
    if !args.json {
        print_header(args, e, checks, budget.threads)?;
    }
    let ticks = Ticks(crate::progress::Progress::new(checks as u64, args.json));
    let started = Instant::now();
    let tune = |s| {
        let s = tuning.scenario(s);
        let c = tuning.config(&s);
        (s, c)
    };
    let mut ladders = ladder::run_of(
        crate::installed::models(),
        &[model],
        budget,
        Some(ShrinkLimits::default()),
        &tune,
        &ticks,
    );
    ticks.0.finish(started.elapsed());
    let l = ladders.remove(0);
    if args.json {
        outln!(
            "{}",
            serde_json::to_string_pretty(&to_json(&l, &entries)).expect("json")
        )?;
    } else {
        print_text(&l, &entries)?;
    }
    Ok(error::code(l.code()))
}

/// The ladder's rows, as check's table and `--json` show them.
fn rows<'a>(l: &'a Ladder, entries: &'a [kvsim_models::registry::Entry]) -> Vec<(usize, Row<'a>)> {
    let e = entries
        .iter()
        .find(|e| e.name == l.model)
        .expect("the ladder's model");
    l.rungs
        .iter()
        .enumerate()
        .flat_map(|(i, rung)| {
            rung.checks.iter().map(move |c| {
                let target = e.target(c.variant);
                (
                    i,
                    Row {
                        expected: Some(c.expected()),
                        expectation: Some(c.expected()),
                        label: c.label(),
                        scenario: &c.scenario,
                        config: &c.config,
                        sometimes: c.scenario.required(target.probes()),
                        report: &c.report,
                    },
                )
            })
        })
        .collect()
}

/// `{model, seed, rungs: [{target, repairs, results}], findings: [...]}`.
fn to_json(l: &Ladder, entries: &[kvsim_models::registry::Entry]) -> serde_json::Value {
    let rows = rows(l, entries);
    let rungs: Vec<_> = l
        .rungs
        .iter()
        .enumerate()
        .map(|(i, rung)| {
            let results: Vec<_> = rows
                .iter()
                .filter(|(r, _)| *r == i)
                .map(|(_, row)| check::json_row(row, row.ok()))
                .collect();
            json!({
                "target": rung.target,
                "repairs": rung.repairs,
                "results": results,
            })
        })
        .collect();
    let findings: Vec<_> = l
        .findings
        .iter()
        .map(|g| {
            let f = &g.finding;
            json!({
                "property": f.property,
                "reason": f.reason,
                "class": f.class,
                "faults": f.faults.iter().map(|k| k.name()).collect::<Vec<_>>(),
                "scenarios": g.scenarios,
                "runs": g.runs,
                "found_in": g.found_in,
                "removed_by": g.removed_by,
                "minimized": f.minimized,
                "replay": f.replay,
            })
        })
        .collect();
    json!({
        "model": l.model,
        "seed": l.seed,
        "rungs": rungs,
        "findings": findings,
    })
}

/// The header: the seed first, the budget, the rungs and every scenario's knobs.
fn print_header(
    args: &Args,
    e: &kvsim_models::registry::Entry,
    checks: usize,
    threads: usize,
) -> Result<(), CliError> {
    let budget = match (args.time_budget, args.runs) {
        (Some(t), cap) => format!(
            "time budget {t} s, at least {} runs a check{}",
            args.min_runs,
            cap.map(|c| format!(", at most {c}")).unwrap_or_default()
        ),
        (None, Some(r)) => format!("{r} runs a check"),
        (None, None) => "each scenario's own runs".to_string(),
    };
    outln!(
        "kvsim ladder {} · seed {} · {budget} · {} rungs × {} scenarios = {checks} checks · \
         {threads} thread{} · findings minimized",
        e.name,
        args.seed,
        e.rungs().len(),
        e.scenarios.len(),
        if threads == 1 { "" } else { "s" },
    )?;
    outln!("\nrungs:")?;
    for v in e.rungs() {
        let what = match v.repairs() {
            Some(r) => r
                .repairs()
                .iter()
                .map(|r| format!("{}: {}", r.name, r.fixes))
                .collect::<Vec<_>>()
                .join("; "),
            None => match v.name() {
                "published" => "the code as its source publishes it".to_string(),
                "proposed" => "the source's own proposed fix".to_string(),
                _ => "the project's design".to_string(),
            },
        };
        outln!("  {:<32} {what}", e.target(v).name())?;
    }
    outln!("\nscenarios (every rung runs each):")?;
    let w = e
        .scenarios
        .iter()
        .map(|(s, _)| s.name.len())
        .max()
        .unwrap_or(8);
    for (s, _) in &e.scenarios {
        let config = kvsim::SimConfig::from_scenario(s);
        outln!(
            "  {:<w$} {} · runs {}{}",
            s.name,
            check::knobs(&s.faults, s.clients, s.ops, s.strategy),
            args.runs.unwrap_or(s.runs),
            kvsim::sim::knobs::list_notes(&config)
        )?;
    }
    Ok(())
}

/// The table, the unknowns, the findings with where they were found and what removes
/// them, each finding's counterexample, and the expectations' last line.
fn print_text(l: &Ladder, entries: &[kvsim_models::registry::Entry]) -> Result<(), CliError> {
    let rows: Vec<Row> = rows(l, entries).into_iter().map(|(_, r)| r).collect();
    check::print_table(&rows)?;
    for c in l.checks() {
        if let Verdict::Unknown(why) = &c.report.verdict {
            outln!(
                "\n{} under {}: unknown: {why}",
                c.report.target,
                c.report.scenario
            )?;
        }
    }
    if !l.findings.is_empty() {
        outln!("\nfindings (each once over every rung):")?;
    }
    for (i, g) in l.findings.iter().enumerate() {
        let f = &g.finding;
        let mut line = f.line();
        if let Some(at) = line.rfind(" · ") {
            line.truncate(at);
        }
        outln!(
            "  {}. {line} · {} run{}",
            i + 1,
            g.runs,
            if g.runs == 1 { "" } else { "s" }
        )?;
        outln!(
            "     found in {} (scenario{} {})",
            g.found_in.join(", "),
            if g.scenarios.len() == 1 { "" } else { "s" },
            g.scenarios.join(", ")
        )?;
        outln!(
            "     removed by {}",
            match g.removed_by.as_slice() {
                [] => "no repair".to_string(),
                names => names.join(", "),
            }
        )?;
        outln!("     replay: kvsim replay {}", f.replay)?;
    }
    let colour = kvsim::report::colour_wanted();
    for (i, g) in l.findings.iter().enumerate() {
        outln!("\nfinding {}:", i + 1)?;
        out!(
            "{}",
            kvsim::report::text_styled(&g.finding.counterexample, colour)
        )?;
    }
    let (mismatches, unknowns) = l.mismatches();
    check::print_expectations(mismatches, unknowns, l.checks().count())
}
