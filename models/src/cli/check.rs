//! `kvsim check`: the main job (every model × scenario against its expectation) and the CI
//! gate for one target.

use crate::expect::{ExpectedVerdict, Variant};
use crate::registry::{self, registry, Entry};
use kvsim::scenario::{FaultSet, Scenario, Strategy};
use kvsim::sim::{CheckLimits, SimConfig};
use kvsim::target::CheckReport;
use kvsim::verdict::Verdict;
use serde_json::json;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// Options of `kvsim check`.
#[derive(clap::Args, Debug, Clone)]
pub struct Args {
    /// Targets `MODEL/VARIANT` (or `MODEL` for both variants). Without targets: every
    /// model's scenarios as a matrix, each verdict compared with its expectation.
    pub targets: Vec<String>,
    /// Only the scenario with this name.
    #[arg(long)]
    pub scenario: Option<String>,
    /// Number of clients (overrides the scenarios').
    #[arg(long)]
    pub clients: Option<usize>,
    /// Operations per client (overrides the scenarios').
    #[arg(long)]
    pub ops: Option<usize>,
    /// Faults: `none` or a comma-separated list of evict, lru, expire, skew, restart,
    /// crash, lose, pause, shard-fail (overrides the scenarios').
    #[arg(long)]
    pub faults: Option<String>,
    /// Strategy: random, pct, pct:DEPTH or swarm (overrides the scenarios').
    #[arg(long)]
    pub strategy: Option<String>,
    /// Runs (seeds) per scenario (overrides the scenarios').
    #[arg(long)]
    pub runs: Option<u64>,
    /// Base seed: run i of a scenario uses a seed derived from it.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Wall-clock limit per scenario, in seconds; hitting it gives `unknown`, never a pass.
    #[arg(long)]
    pub time_limit: Option<f64>,
    /// Print `{"results": [...]}` instead of the table.
    #[arg(long)]
    pub json: bool,
    /// Worker threads (default: the machine's cores).
    #[arg(long)]
    pub threads: Option<usize>,
    /// Show a failing run as found, without minimizing it (checks of named targets
    /// minimize their failures by default).
    #[arg(long)]
    pub no_shrink: bool,
}

/// One unit of work: a target against a scenario.
#[derive(Clone)]
struct Job {
    entry: usize,
    variant: Variant,
    scenario: Scenario,
    expected: Option<ExpectedVerdict>,
}

impl Args {
    fn overrides(&self) -> bool {
        self.clients.is_some()
            || self.ops.is_some()
            || self.faults.is_some()
            || self.strategy.is_some()
            || self.runs.is_some()
    }

    fn apply(&self, mut s: Scenario) -> Result<Scenario, String> {
        if let Some(c) = self.clients {
            s.clients = c;
        }
        if let Some(o) = self.ops {
            s.ops = o;
        }
        if let Some(f) = &self.faults {
            s.faults = FaultSet::parse(f)?;
        }
        if let Some(st) = &self.strategy {
            s.strategy = Strategy::parse(st)?;
        }
        if let Some(r) = self.runs {
            s.runs = r;
        }
        Ok(s)
    }
}

fn plan(args: &Args, entries: &[Entry]) -> Result<Vec<Job>, String> {
    let gate = !args.targets.is_empty();
    let mut selected: Vec<(usize, Vec<Variant>)> = Vec::new();
    if gate {
        for t in &args.targets {
            selected.push(registry::resolve(entries, t)?);
        }
    } else {
        selected = (0..entries.len())
            .map(|i| (i, Variant::ALL.to_vec()))
            .collect();
    }
    let mut jobs = Vec::new();
    for (entry, variants) in selected {
        let e = &entries[entry];
        let mut scenarios: Vec<_> = e.scenarios.clone();
        if let Some(name) = &args.scenario {
            scenarios.retain(|(s, _)| &s.name == name);
            if scenarios.is_empty() {
                let names: Vec<&str> = e.scenarios.iter().map(|(s, _)| s.name.as_str()).collect();
                return Err(format!(
                    "model {} has no scenario {name:?}: expected one of {}",
                    e.name,
                    names.join(", ")
                ));
            }
        } else if gate && args.overrides() {
            // A custom scenario: the model's first one with the options applied.
            scenarios.truncate(1);
            if let Some((s, _)) = scenarios.first_mut() {
                s.name = "custom".to_string();
                s.about = "the model's first scenario with the command line's options".into();
            }
        }
        for (scenario, expect) in scenarios {
            let scenario = args.apply(scenario)?;
            for &variant in &variants {
                jobs.push(Job {
                    entry,
                    variant,
                    scenario: scenario.clone(),
                    expected: if gate { None } else { Some(expect.of(variant)) },
                });
            }
        }
    }
    Ok(jobs)
}

/// Runs `kvsim check`; returns the exit code.
pub fn main(args: &Args) -> i32 {
    let entries = registry();
    let jobs = match plan(args, &entries) {
        Ok(j) => j,
        Err(e) => {
            eprintln!("kvsim: {e}");
            return 2;
        }
    };
    if !args.json {
        println!(
            "kvsim check · seed {} · {} checks{}",
            args.seed,
            jobs.len(),
            if args.targets.is_empty() {
                " (every model × scenario, against expectations)"
            } else {
                ""
            }
        );
    }
    let results = run_jobs(args, &jobs);
    let gate = !args.targets.is_empty();
    let mut code = 0;
    let mut mismatches = 0;
    let mut rows = Vec::new();
    for (job, report) in jobs.iter().zip(&results) {
        let ok = match job.expected {
            Some(exp) => registry::matches(exp, &report.verdict),
            None => !report.verdict.is_violation(),
        };
        if !ok {
            mismatches += 1;
        }
        let replay = report.failure.as_ref().map(|f| f.token.clone());
        rows.push(json!({
            "target": report.target,
            "scenario": report.scenario,
            "verdict": report.verdict.name(),
            "expected": job.expected.map(|e| e.name()),
            "matches": job.expected.map(|_| ok),
            "runs": report.runs,
            "millis": report.millis,
            "replay": replay,
            "reason": reason(&report.verdict),
            "faults": job.scenario.faults.to_string(),
            "clients": job.scenario.clients,
            "ops": job.scenario.ops,
            "strategy": job.scenario.strategy.to_string(),
        }));
    }
    if gate {
        if results.iter().any(|r| r.verdict.is_violation()) {
            code = 1;
        } else if results
            .iter()
            .any(|r| matches!(r.verdict, Verdict::Unknown(_)))
        {
            code = 3;
        }
    } else if mismatches > 0 {
        code = 1;
    }
    if args.json {
        println!(
            "{}",
            serde_json::to_string_pretty(&json!({ "results": rows })).expect("json")
        );
        return code;
    }
    print_table(&jobs, &results);
    if gate {
        for r in &results {
            if let Some(f) = &r.failure {
                println!();
                print!(
                    "{}",
                    kvsim::report::text_styled(f, kvsim::report::colour_wanted())
                );
            }
        }
    } else if mismatches == 0 {
        println!("\nall {} verdicts match their expectations", results.len());
    } else {
        println!(
            "\n{mismatches} of {} verdicts differ from their expectations (marked ✗)",
            results.len()
        );
    }
    code
}

fn reason(v: &Verdict) -> Option<String> {
    match v {
        Verdict::Ok => None,
        Verdict::Violation(x) => Some(format!("{}: {}", x.property, x.reason)),
        Verdict::Unknown(why) => Some(why.clone()),
    }
}

fn print_table(jobs: &[Job], results: &[CheckReport]) {
    let tw = results
        .iter()
        .map(|r| r.target.len())
        .max()
        .unwrap_or(6)
        .max(6);
    let sw = results
        .iter()
        .map(|r| r.scenario.len())
        .max()
        .unwrap_or(8)
        .max(8);
    println!(
        "\n{:<tw$} {:<sw$} {:<10} {:<11} {:>6} {:>8}  replay",
        "target", "scenario", "expected", "verdict", "runs", "time"
    );
    for (job, r) in jobs.iter().zip(results) {
        let exp = job.expected.map_or("-", |e| e.name());
        let mark = match job.expected {
            Some(e) if !registry::matches(e, &r.verdict) => " ✗",
            _ => "",
        };
        let replay = r
            .failure
            .as_ref()
            .map(|f| format!("kvsim replay {}", f.token))
            .unwrap_or_default();
        println!(
            "{:<tw$} {:<sw$} {:<10} {:<11} {:>6} {:>6}ms  {replay}",
            r.target,
            r.scenario,
            exp,
            format!("{}{mark}", r.verdict.name()),
            r.runs,
            r.millis
        );
    }
}

/// Runs the jobs on worker threads (each with its own registry: targets stay on their
/// thread); results come back in job order.
fn run_jobs(args: &Args, jobs: &[Job]) -> Vec<CheckReport> {
    let threads = args
        .threads
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
        .clamp(1, jobs.len().max(1));
    let next = AtomicUsize::new(0);
    let results: Mutex<Vec<Option<CheckReport>>> = Mutex::new(vec![None; jobs.len()]);
    let progress = crate::progress::Progress::new(jobs.len() as u64, args.json);
    let started = Instant::now();
    std::thread::scope(|scope| {
        for _ in 0..threads {
            scope.spawn(|| {
                let entries = registry();
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    let Some(job) = jobs.get(i) else { break };
                    let e = &entries[job.entry];
                    let target = e.target(job.variant);
                    let config = SimConfig::from_scenario(&job.scenario);
                    let limits = CheckLimits {
                        seed: args.seed,
                        runs: job.scenario.runs,
                        time_limit: args.time_limit.map(Duration::from_secs_f64),
                    };
                    let mut report = target.check(&job.scenario, &config, &limits);
                    if !args.targets.is_empty() && !args.no_shrink {
                        if let Some(f) = &report.failure {
                            let small = kvsim::shrink::shrink(
                                target,
                                f,
                                &kvsim::shrink::ShrinkLimits::default(),
                            );
                            report.failure = Some(small);
                        }
                    }
                    progress.tick(&format!("{} {}", report.target, report.scenario));
                    results.lock().expect("no worker panics holding the lock")[i] = Some(report);
                }
            });
        }
    });
    progress.finish(started.elapsed());
    results
        .into_inner()
        .expect("no worker panicked")
        .into_iter()
        .map(|r| r.expect("every job ran"))
        .collect()
}
