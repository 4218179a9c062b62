//! `kvsim check`: the main job (every model × scenario against its expectation) and the CI
//! gate for one target.

use crate::corpus::Corpus;
use crate::error::{self, CliError};
use crate::installed::registry;
use crate::junit;
use crate::marks::{Mark, Tally};
use crate::out::{out, outln};
use kvsim::harness::campaign::{self, Budget, Hooks, Plan, Runs, TimeBudget};
use kvsim::harness::findings::Finding;
use kvsim::harness::shrink::ShrinkLimits;
use kvsim::harness::sweep::{Clock, Shard};
use kvsim::harness::target::{CheckReport, RunReport, Target};
use kvsim::sim::SimConfig;
use kvsim::Verdict;
use kvsim::{FaultKind, FaultSet, Scenario, Strategy};
use kvsim_models::expect::{ExpectedVerdict, Label, Variant};
use kvsim_models::registry::{self, Entry};
use serde_json::json;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// Options of `kvsim check`.
///
/// The tuning flags tune each of the target's scenarios and keep what they check: `--runs`,
/// `--clients`, `--ops`, `--strategy`, `--fault-budget`, `--fault-rate`, `--pause-ms` and
/// `--starve-ms` change a knob of every scenario and keep its faults; only `--faults`
/// replaces the faults. A degenerate scope (0 runs, clients or operations) is a usage
/// error, never a pass.
#[derive(clap::Args, Debug, Clone)]
pub struct Args {
    /// Targets `MODEL/VARIANT` (or `MODEL` for both variants). Without targets: every
    /// model's scenarios as a matrix, each verdict compared with its expectation.
    pub targets: Vec<String>,
    /// Only the scenario with this name.
    #[arg(long)]
    pub scenario: Option<String>,
    /// Number of clients in every scenario (at least 1).
    #[arg(long)]
    pub clients: Option<usize>,
    /// Operations per client in every scenario (at least 1).
    #[arg(long)]
    pub ops: Option<usize>,
    /// Faults: `none` or a comma-separated list of evict, lru, expire, skew, restart,
    /// crash, lose, pause, shard-fail, delay (replaces every scenario's faults).
    #[arg(long)]
    pub faults: Option<String>,
    /// Most faults per run in every scenario (at least 1; use `--faults none` for none).
    #[arg(long)]
    pub fault_budget: Option<u32>,
    /// Probability that a step is a fault, when one is possible (0 < P <= 1).
    #[arg(long, value_name = "P")]
    pub fault_rate: Option<f64>,
    /// Lengths the `pause` fault chooses from, in virtual ms: `LO..HI` (or one length).
    #[arg(long, value_name = "LO..HI")]
    pub pause_ms: Option<String>,
    /// How late the `delay` fault delivers a request, in virtual ms: `LO..HI` (or one
    /// length).
    #[arg(long, value_name = "LO..HI")]
    pub delay_ms: Option<String>,
    /// How long the structure's own work takes each time it calls `Kv::work` (a critical
    /// section's body), in virtual ms: `LO..HI` (or one length; 0: no time; default: the
    /// scenario's).
    #[arg(long, value_name = "LO..HI")]
    pub work_ms: Option<String>,
    /// How long a client waits for a lost or late reply before it sees the timeout, in
    /// virtual ms (0: at once; default: the scenario's).
    #[arg(long, value_name = "MS")]
    pub timeout_ms: Option<u64>,
    /// How often the clients' library sends a timed-out command again before the
    /// structure sees the timeout (0: never; default: the scenario's).
    #[arg(long, value_name = "N")]
    pub retries: Option<u32>,
    /// The store's memory limit in bytes (default: the scenario's; with `lru`, 1200 when
    /// the scenario gives none).
    #[arg(long, value_name = "BYTES")]
    pub memory_limit: Option<usize>,
    /// The noisy neighbour: another tenant who writes a value this large after each
    /// command of the clients, so that a memory limit evicts the structure's least
    /// recently used keys (0: none; default: the scenario's, 40 with `lru`).
    #[arg(long, value_name = "BYTES")]
    pub neighbour_bytes: Option<usize>,
    /// Fairness: the most virtual ms a runnable client waits for the schedule (longer
    /// stalls come only from the `pause` fault).
    #[arg(long, value_name = "MS")]
    pub starve_ms: Option<u64>,
    /// Strategy: random, pct, pct:DEPTH or swarm (in every scenario).
    #[arg(long)]
    pub strategy: Option<String>,
    /// Runs (seeds) per scenario (at least 1).
    #[arg(long)]
    pub runs: Option<u64>,
    /// Base seed: run i of a scenario uses a seed derived from it.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Wall-clock limit per scenario, in seconds; hitting it gives `unknown`, never a pass.
    #[arg(long, value_name = "SECS", conflicts_with = "time_budget")]
    pub time_limit: Option<f64>,
    /// Spend about SECS seconds of wall-clock time on the whole check instead of a run
    /// count: each scenario gets a share (in proportion to its planned runs) and does as
    /// many runs as fit in it (at most `--runs`, if given), then its findings are
    /// minimized within the budget. A scenario that did fewer than `--min-runs` runs, or
    /// that was expected to fail and did not within its share, is `unknown`, never a pass.
    #[arg(long, value_name = "SECS")]
    pub time_budget: Option<f64>,
    /// With `--time-budget`: the fewest runs a scenario must do for a verdict.
    #[arg(long, value_name = "N", default_value_t = 10, requires = "time_budget")]
    pub min_runs: u64,
    /// Print `{"results": [...]}` instead of the table.
    #[arg(long)]
    pub json: bool,
    /// Worker threads (default: the machine's cores).
    #[arg(long)]
    pub threads: Option<usize>,
    /// Show each finding's run as found, without minimizing it (its faults are then the
    /// ones the run injected, not the ones it needs).
    #[arg(long)]
    pub no_shrink: bool,
    /// Also write the results as JUnit XML to FILE: one test case per target × scenario,
    /// a failing case with its minimal counterexample and the line that replays it.
    #[arg(long, value_name = "FILE")]
    pub junit: Option<PathBuf>,
    /// Do only shard I of N of every scenario's runs (run i when i % N == I - 1), to spread
    /// one check over N machines; `kvsim merge` combines their `--json` outputs.
    #[arg(long, value_name = "I/N", value_parser = Shard::parse, default_value = "1/1")]
    pub shard: Shard,
    /// A corpus of past failures (e.g. `.kvsim/corpus`): each scenario replays the ones
    /// saved for it first (a fixed bug stays fixed), and every violation found is saved
    /// there as its replay token. `kvsim corpus list|prune DIR` looks after it.
    #[arg(long, value_name = "DIR")]
    pub corpus: Option<PathBuf>,
}

/// One unit of work: a target against a scenario.
pub(crate) type Job = campaign::Job<Pick>;

/// A job's target: a registry entry's variant, with the verdict it is expected to get.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Pick {
    pub(crate) entry: usize,
    pub(crate) variant: Variant,
    pub(crate) expected: Option<ExpectedVerdict>,
    /// The registry's expectation of this target × scenario, in a gate too (none when
    /// `--faults` replaced the scenario's faults: then it is not the registry's scenario).
    pub(crate) expectation: Option<ExpectedVerdict>,
    /// Why an expected failure is expected (the fixed variant's label), with
    /// `expectation`.
    pub(crate) label: Option<Label>,
}

/// The knobs the command line sets, checked.
#[derive(Clone, Debug, Default)]
pub(crate) struct Tuning {
    clients: Option<usize>,
    ops: Option<usize>,
    faults: Option<FaultSet>,
    fault_budget: Option<u32>,
    fault_rate: Option<f64>,
    pause_ms: Option<[u64; 2]>,
    delay_ms: Option<[u64; 2]>,
    work_ms: Option<[u64; 2]>,
    timeout_ms: Option<u64>,
    retries: Option<u32>,
    memory_limit: Option<usize>,
    neighbour_bytes: Option<usize>,
    starve_ms: Option<u64>,
    strategy: Option<Strategy>,
    runs: Option<u64>,
    time_limit: Option<Duration>,
    time_budget: Option<TimeBudget>,
}

/// The most of each scope knob (a larger value is a usage error, never an attempt): within
/// what a replay token carries ([`kvsim::sim::Token`]'s limits), so every run replays.
const MAX_CLIENTS: usize = 64;
const MAX_OPS: usize = kvsim::sim::Token::MAX_OPS as usize;
const MAX_RUNS: u64 = campaign::MAX_RUNS;

fn at_least_one<T: PartialOrd + From<u8> + std::fmt::Display>(
    v: Option<T>,
    flag: &str,
    max: T,
) -> Result<Option<T>, String> {
    match v {
        Some(n) if n < T::from(1) => Err(format!(
            "--{flag} 0 checks nothing: expected at least 1 (a degenerate scope is never a pass)"
        )),
        Some(n) if n > max => Err(format!("--{flag} {n} is too large: expected at most {max}")),
        other => Ok(other),
    }
}

/// Parses `LO..HI` or `N` (virtual ms).
fn ms_range(flag: &str, text: &str, min: u64) -> Result<[u64; 2], String> {
    let bad = || {
        format!(
            "bad --{flag} {text:?}: expected LO..HI or N, in ms ({min} <= LO <= HI <= 86400000)"
        )
    };
    let (lo, hi) = match text.split_once("..") {
        Some((a, b)) => (a.trim(), b.trim()),
        None => (text.trim(), text.trim()),
    };
    let lo: u64 = lo.parse().map_err(|_| bad())?;
    let hi: u64 = hi.parse().map_err(|_| bad())?;
    if lo < min || lo > hi || hi > 86_400_000 {
        return Err(bad());
    }
    Ok([lo, hi])
}

impl Args {
    /// A check of nothing but a budget: the seed, runs or time budget (with its fewest
    /// runs) and threads, every other flag at its default (`kvsim ladder`'s flags, read
    /// and checked as `check` reads them).
    pub(crate) fn budget_only(
        seed: u64,
        runs: Option<u64>,
        time_budget: Option<f64>,
        min_runs: u64,
        threads: Option<usize>,
    ) -> Args {
        Args {
            targets: Vec::new(),
            scenario: None,
            clients: None,
            ops: None,
            faults: None,
            fault_budget: None,
            fault_rate: None,
            pause_ms: None,
            delay_ms: None,
            work_ms: None,
            timeout_ms: None,
            retries: None,
            memory_limit: None,
            neighbour_bytes: None,
            starve_ms: None,
            strategy: None,
            runs,
            seed,
            time_limit: None,
            time_budget,
            min_runs,
            json: false,
            threads,
            no_shrink: false,
            junit: None,
            shard: Shard::ALL,
            corpus: None,
        }
    }

    /// The knobs the command line sets, checked.
    pub(crate) fn tuning(&self) -> Result<Tuning, String> {
        let fault_rate = match self.fault_rate {
            Some(p) if !(p > 0.0 && p <= 1.0) => {
                return Err(format!(
                    "bad --fault-rate {p}: expected a probability above 0 and at most 1 \
                     (use --faults none for no faults)"
                ))
            }
            other => other,
        };
        let time_limit = self
            .time_limit
            .map(|t| seconds("time-limit", t))
            .transpose()?;
        let time_budget = match self.time_budget {
            None => None,
            Some(t) => Some(TimeBudget {
                total: seconds("time-budget", t)?,
                min_runs: at_least_one(Some(self.min_runs), "min-runs", MAX_RUNS)?.unwrap_or(1),
                cap: self.runs,
            }),
        };
        if let Some(Strategy::Pct { depth }) =
            self.strategy.as_deref().map(Strategy::parse).transpose()?
        {
            if depth as u64 > kvsim::sim::Token::MAX_PCT_DEPTH {
                return Err(format!(
                    "bad --strategy pct:{depth}: expected a depth of at most {}",
                    kvsim::sim::Token::MAX_PCT_DEPTH
                ));
            }
        }
        if let (Some(c), Some(o)) = (self.clients, self.ops) {
            let max = kvsim::sim::Token::MAX_OPERATIONS as usize;
            if c.saturating_mul(o) > max {
                return Err(format!(
                    "--clients {c} × --ops {o} is too large: expected at most {max} operations"
                ));
            }
        }
        Ok(Tuning {
            clients: at_least_one(self.clients, "clients", MAX_CLIENTS)?,
            ops: at_least_one(self.ops, "ops", MAX_OPS)?,
            faults: self.faults.as_deref().map(FaultSet::parse).transpose()?,
            fault_budget: at_least_one(self.fault_budget, "fault-budget", 1_000_000)?,
            fault_rate,
            pause_ms: self
                .pause_ms
                .as_deref()
                .map(|t| ms_range("pause-ms", t, 1))
                .transpose()?,
            delay_ms: self
                .delay_ms
                .as_deref()
                .map(|t| ms_range("delay-ms", t, 1))
                .transpose()?,
            work_ms: self
                .work_ms
                .as_deref()
                .map(|t| ms_range("work-ms", t, 0))
                .transpose()?,
            timeout_ms: match self.timeout_ms {
                Some(ms) if ms > 86_400_000 => {
                    return Err(format!(
                        "bad --timeout-ms {ms}: expected at most 86400000 (one day)"
                    ))
                }
                other => other,
            },
            retries: match self.retries {
                Some(n) if u64::from(n) > kvsim::sim::Token::MAX_RETRIES => {
                    return Err(format!(
                        "bad --retries {n}: expected at most {}",
                        kvsim::sim::Token::MAX_RETRIES
                    ))
                }
                other => other,
            },
            memory_limit: match self.memory_limit {
                Some(m) if m as u64 > kvsim::sim::Token::MAX_MEMORY => {
                    return Err(format!(
                        "bad --memory-limit {m}: expected at most {}",
                        kvsim::sim::Token::MAX_MEMORY
                    ))
                }
                other => other,
            },
            neighbour_bytes: match self.neighbour_bytes {
                Some(b) if b as u64 > kvsim::sim::Token::MAX_NEIGHBOUR_BYTES => {
                    return Err(format!(
                        "bad --neighbour-bytes {b}: expected at most {} (memcached's item \
                         size limit)",
                        kvsim::sim::Token::MAX_NEIGHBOUR_BYTES
                    ))
                }
                other => other,
            },
            starve_ms: at_least_one(self.starve_ms, "starve-ms", 86_400_000)?,
            strategy: self.strategy.as_deref().map(Strategy::parse).transpose()?,
            runs: at_least_one(self.runs, "runs", MAX_RUNS)?,
            time_limit,
            time_budget,
        })
    }
}

/// `--NAME SECS` as a duration: above 0, at most a year.
fn seconds(flag: &str, secs: f64) -> Result<Duration, String> {
    Duration::try_from_secs_f64(secs)
        .ok()
        .filter(|d| !d.is_zero() && d.as_secs() <= 366 * 86_400)
        .ok_or_else(|| format!("bad --{flag} {secs}: expected seconds above 0, at most a year"))
}

impl Tuning {
    /// The scenario with the command line's knobs applied (its faults kept unless
    /// `--faults` replaces them).
    pub(crate) fn scenario(&self, mut s: Scenario) -> Scenario {
        if let Some(c) = self.clients {
            s.clients = c;
        }
        if let Some(o) = self.ops {
            s.ops = o;
        }
        if let Some(f) = &self.faults {
            if !f.has(FaultKind::Lru) {
                s.memory_limit = s.memory_limit.filter(|_| !s.faults.has(FaultKind::Lru));
            }
            s.faults = f.clone();
        }
        if let Some(b) = self.fault_budget {
            s.fault_budget = b;
        }
        if let Some(st) = self.strategy {
            s.strategy = st;
        }
        // Under a time budget `--runs` caps the runs; the scenario's own weigh its share.
        if let (Some(r), None) = (self.runs, self.time_budget) {
            s.runs = r;
        }
        if let Some(ms) = self.timeout_ms {
            s.timeout_ms = ms;
        }
        if let Some(n) = self.retries {
            s.retries = n;
        }
        if let Some(m) = self.memory_limit {
            s.memory_limit = Some(m);
        }
        if let Some(b) = self.neighbour_bytes {
            s.neighbour_bytes = Some(b);
        }
        if let Some([lo, hi]) = self.work_ms {
            s = s.work_ms(lo, hi);
        }
        s
    }

    /// The run knobs of a (tuned) scenario.
    pub(crate) fn config(&self, s: &Scenario) -> SimConfig {
        let mut c = SimConfig::from_scenario(s);
        if let Some(p) = self.fault_rate {
            c.fault_probability = p;
        }
        if let Some(p) = self.pause_ms {
            c.pause_ms = p;
        }
        if let Some(d) = self.delay_ms {
            c.delay_ms = d;
        }
        if let Some(ms) = self.starve_ms {
            c.starve_ms = ms;
        }
        c
    }
}

/// The jobs of a check: each selected target × scenario, tuned by the command line.
pub(crate) fn plan(args: &Args, entries: &[Entry]) -> Result<Vec<Job>, String> {
    let tuning = args.tuning()?;
    let gate = !args.targets.is_empty();
    let mut selected: Vec<(usize, Vec<Variant>)> = Vec::new();
    if gate {
        for t in &args.targets {
            selected.push(registry::resolve(entries, t)?);
        }
    } else {
        selected = (0..entries.len())
            .map(|i| (i, entries[i].available_variants()))
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
        }
        for (scenario, expect) in scenarios {
            let scenario = tuning.scenario(scenario);
            let config = tuning.config(&scenario);
            for &variant in &variants {
                // A gate's `--faults` makes the scenario another than the registry's: no
                // expectation then (checking every model, the matrix keeps comparing).
                let expected = (!gate).then(|| expect.of(variant));
                let expectation = expected.or((args.faults.is_none()).then(|| expect.of(variant)));
                let label = expectation.and(kvsim_models::ladder::label_of(variant, &expect));
                jobs.push(Job {
                    target: Pick {
                        entry,
                        variant,
                        expected,
                        expectation,
                        label,
                    },
                    scenario: scenario.clone(),
                    config: config.clone(),
                    expect_violation: expected == Some(ExpectedVerdict::Violation),
                });
            }
        }
    }
    Ok(jobs)
}

/// Runs `kvsim check`; returns the exit code.
pub fn main(args: &Args) -> Result<ExitCode, CliError> {
    let entries = registry();
    let jobs = plan(args, &entries).map_err(CliError::new)?;
    let tuning = args.tuning().map_err(CliError::new)?;
    let mut corpus = args.corpus.as_deref().map(Corpus::open).transpose()?;
    let junit_file = args.junit.as_deref().map(junit::create).transpose()?;
    if !args.json {
        print_header(args, &tuning, jobs.len(), corpus.as_ref())?;
    }
    let around = Around::new(jobs.len(), corpus.as_ref(), args.json);
    let results = run_jobs(args, jobs.clone(), &tuning, &around);
    let (replayed, failing) = (around.replayed.into_inner(), around.failing.into_inner());
    let saved = match &mut corpus {
        Some(c) => c.save(&results)?,
        None => 0,
    };
    let gate = !args.targets.is_empty();
    let mut mismatches = 0;
    let mut unknowns = 0;
    let mut rows = Vec::new();
    for (job, report) in jobs.iter().zip(&results) {
        let ok = as_expected(job, report);
        if !ok {
            mismatches += 1;
            unknowns += usize::from(matches!(report.verdict, Verdict::Unknown(_)));
        }
        rows.push(json_row(&row(job, report, &entries), ok));
    }
    let code = if gate {
        gate_code(&results)
    } else {
        expectations_code(mismatches, unknowns)
    };
    if let Some(file) = junit_file {
        junit::write(
            file,
            &junit::render(args.seed, &junit_cases(&jobs, &results, &entries)),
        )?;
    }
    if args.json {
        let identity = identity(args, &tuning, &jobs, &entries);
        let corpus_json = corpus.as_ref().map(|c| {
            json!({
                "dir": c.dir().display().to_string(),
                "replayed": replayed,
                "still_failing": failing,
                "saved": saved,
            })
        });
        outln!(
            "{}",
            serde_json::to_string_pretty(&json!({
                "seed": args.seed,
                "shard": args.shard.to_string(),
                "results": rows,
                "corpus": corpus_json,
                "identity_digest": crate::identity::digest(&identity),
                "identity": identity,
            }))
            .expect("json")
        )?;
        return Ok(error::code(code));
    }
    let table: Vec<Row> = jobs
        .iter()
        .zip(&results)
        .map(|(job, report)| row(job, report, &entries))
        .collect();
    print_table(&table)?;
    if let Some(c) = &corpus {
        outln!(
            "\ncorpus {}: {} past failures replayed, {} still fail; {saved} new saved",
            c.dir().display(),
            replayed,
            failing,
        )?;
    }
    if gate {
        print_probes(&results)?;
        print_findings(&results)?;
    } else {
        print_expectations(mismatches, unknowns, results.len())?;
    }
    Tally::of(table.iter().map(|r| (r.mark(), r.report.verdict.name()))).print(gate)?;
    Ok(error::code(code))
}

/// The first lines of the text output: the check's seed, shard, budget and size, and the
/// corpus it replays.
fn print_header(
    args: &Args,
    tuning: &Tuning,
    jobs: usize,
    corpus: Option<&Corpus>,
) -> Result<(), CliError> {
    outln!(
        "kvsim check · seed {}{}{} · {} checks{}",
        args.seed,
        if args.shard == Shard::ALL {
            String::new()
        } else {
            format!(" · shard {}", args.shard)
        },
        match tuning.time_budget {
            None => String::new(),
            Some(b) => format!(
                " · time budget {} s, at least {} runs a scenario",
                b.total.as_secs_f64(),
                b.min_runs
            ),
        },
        jobs,
        if args.targets.is_empty() {
            " (every model × scenario, against expectations)"
        } else {
            ""
        }
    )?;
    if let Some(c) = corpus {
        outln!(
            "corpus {}: {} past failures, each replayed first by its scenario",
            c.dir().display(),
            c.entries().len()
        )?;
    }
    Ok(())
}

/// One target × scenario as the table, `--json` and JUnit show it.
pub(crate) struct Row<'a> {
    /// The verdict expected, when checking expectations.
    pub(crate) expected: Option<ExpectedVerdict>,
    /// The registry's expectation (in a gate too; none when `--faults` replaced the
    /// scenario's faults).
    pub(crate) expectation: Option<ExpectedVerdict>,
    /// Why an expected failure is expected (a fixed variant's label).
    pub(crate) label: Option<Label>,
    /// The scenario, as tuned.
    pub(crate) scenario: &'a Scenario,
    /// Its run knobs.
    pub(crate) config: &'a SimConfig,
    /// The probes the scenario requires of the target.
    pub(crate) sometimes: Vec<&'a str>,
    /// The check's report.
    pub(crate) report: &'a CheckReport,
}

impl Row<'_> {
    /// Whether the verdict is what was expected (without an expectation: not a violation).
    pub(crate) fn ok(&self) -> bool {
        match self.expected {
            Some(exp) => registry::matches(exp, &self.report.verdict),
            None => !self.report.verdict.is_violation(),
        }
    }

    /// The verdict against the registry's expectation.
    pub(crate) fn mark(&self) -> Mark {
        Mark::of(self.expectation, self.label, self.report.verdict.name())
    }

    /// The `expected` column: the registry's expectation, `violation`,
    /// `violation (impossible)`, or `-` (none).
    fn expected_text(&self) -> String {
        match (self.expectation, self.label) {
            (None, _) => "-".to_string(),
            (Some(e), None) => e.name().to_string(),
            (Some(e), Some(l)) => format!("{} ({})", e.name(), l.name()),
        }
    }
}

/// A job's row.
fn row<'a>(job: &'a Job, report: &'a CheckReport, entries: &[Entry]) -> Row<'a> {
    let target = entries[job.target.entry].target(job.target.variant);
    Row {
        expected: job.target.expected,
        expectation: job.target.expectation,
        label: job.target.label,
        scenario: &job.scenario,
        config: &job.config,
        sometimes: job.scenario.required(target.probes()),
        report,
    }
}

/// One row of `--json`: its verdict, expectation (and label), findings, probes and knobs.
pub(crate) fn json_row(r: &Row, ok: bool) -> serde_json::Value {
    let report = r.report;
    let replay = report.failure.as_ref().map(|f| f.token.clone());
    let findings: Vec<_> = report
        .findings
        .iter()
        .map(|f| {
            json!({
                "property": f.property,
                "reason": f.reason,
                "class": f.class,
                "faults": f.faults.iter().map(|k| k.name()).collect::<Vec<_>>(),
                "runs": f.runs,
                "minimized": f.minimized,
                "replay": f.replay,
                "slab_classes": f.slab_classes(),
                "geometry": f.needs(FaultKind::Lru).then(|| {
                    kvsim::sim::knobs::describe_geometry(&f.counterexample.config.geometry)
                }),
                "reachability": f.reachability(),
            })
        })
        .collect();
    let mut row = json!({
        "target": report.target,
        "scenario": report.scenario,
        "verdict": report.verdict.name(),
        "expected": r.expected.map(|e| e.name()),
        "label": r.label.map(|l| l.name()),
        "label_reason": r.label.map(|l| l.reason()),
        "matches": r.expected.map(|_| ok),
        "expected_verdict": r.expectation.map(|e| e.name()),
        "as_expected": r.mark().as_expected(),
        "expected_failure": matches!(r.mark(), Mark::ExpectedFailure(_)),
        "runs": report.runs,
        "violating_runs": report.violating_runs,
        "millis": report.millis,
        "replay": replay,
        "reason": report.verdict.reason(),
        "findings": findings,
        "probes": report.probes,
        "sometimes": r.sometimes,
    });
    // The run's knobs, as the knob table shows them in a row.
    let knobs = kvsim::sim::knobs::json_row(r.config, kvsim::sim::knobs::rows::CHECK);
    row.as_object_mut().expect("a row").extend(knobs);
    row
}

/// The exit code of a gate (targets given): 1 on a violation, else 3 on an unknown.
fn gate_code(results: &[CheckReport]) -> i32 {
    if results.iter().any(|r| r.verdict.is_violation()) {
        1
    } else if results
        .iter()
        .any(|r| matches!(r.verdict, Verdict::Unknown(_)))
    {
        3
    } else {
        0
    }
}

/// The JUnit cases of the jobs: one per target × scenario.
fn junit_cases(jobs: &[Job], results: &[CheckReport], entries: &[Entry]) -> Vec<junit::Case> {
    jobs.iter()
        .zip(results)
        .map(|(job, report)| junit_case(&row(job, report, entries)))
        .collect()
}

/// A row's JUnit case.
pub(crate) fn junit_case(r: &Row) -> junit::Case {
    junit::Case::of_report(
        r.report,
        r.expected.map(|e| e.name()),
        r.label.map(|l| l.to_string()),
        matches!(r.mark(), Mark::ExpectedFailure(_)),
        match r.expected {
            Some(exp) => registry::matches(exp, &r.report.verdict),
            None => r.report.verdict.is_ok(),
        },
        knobs(
            &r.scenario.faults,
            r.scenario.clients,
            r.scenario.ops,
            r.scenario.strategy,
        ),
    )
}

/// The check's identity (see [`crate::identity`]): everything that decides what it
/// checks, so that `kvsim merge` merges only the shards of one check.
fn identity(args: &Args, tuning: &Tuning, jobs: &[Job], entries: &[Entry]) -> serde_json::Value {
    let budget = match tuning.time_budget {
        None => json!({
            "mode": "runs",
            "time_limit_secs": tuning.time_limit.map(|d| d.as_secs_f64()),
        }),
        Some(b) => json!({
            "mode": "time",
            "time_budget_secs": b.total.as_secs_f64(),
            "min_runs": b.min_runs,
            "runs_cap": b.cap,
        }),
    };
    let checks: Vec<serde_json::Value> = jobs
        .iter()
        .map(|job| {
            let target = entries[job.target.entry].target(job.target.variant);
            json!({
                "target": target.name(),
                "scenario": job.scenario.name,
                "expected": job.target.expected.map(|e| e.name()),
                "planned_runs": planned_runs(job, tuning),
                "sometimes": job.scenario.required(target.probes()),
                "config": serde_json::to_value(&job.config).expect("a config is JSON"),
            })
        })
        .collect();
    json!({
        "kvsim": env!("CARGO_PKG_VERSION"),
        "targets": args.targets,
        "scenario": args.scenario,
        "seed": args.seed,
        "shards": args.shard.count,
        "budget": budget,
        "shrink": !args.no_shrink,
        "corpus": args.corpus.is_some(),
        "checks": checks,
    })
}

/// The most runs a job does (over all shards): its scenario's runs, or under a time
/// budget the `--runs` cap (else [`MAX_RUNS`]).
pub(crate) fn planned_runs(job: &Job, tuning: &Tuning) -> u64 {
    match tuning.time_budget {
        None => job.scenario.runs,
        Some(b) => b.cap.unwrap_or(MAX_RUNS),
    }
}

/// The exit code of a check against expectations with `mismatches` verdicts that differ,
/// `unknowns` of them unknown: 1 when a verdict contradicts its expectation, else 3 when
/// one is unknown (no pass without evidence), else 0.
pub(crate) fn expectations_code(mismatches: usize, unknowns: usize) -> i32 {
    if mismatches > unknowns {
        1
    } else if unknowns > 0 {
        3
    } else {
        0
    }
}

/// The last line of a check against expectations: all `total` verdicts match, or how
/// many differ (`unknowns` of them unknown).
pub(crate) fn print_expectations(
    mismatches: usize,
    unknowns: usize,
    total: usize,
) -> Result<(), CliError> {
    if mismatches == 0 {
        outln!("\nall {total} verdicts match their expectations")?;
    } else if unknowns == 0 {
        outln!("\n{mismatches} of {total} verdicts differ from their expectations (marked ✗)")?;
    } else {
        outln!(
            "\n{mismatches} of {total} verdicts differ from their expectations (marked ✗), \
             {unknowns} of them unknown"
        )?;
    }
    Ok(())
}

/// How often each check's runs hit each probe of its structure (a gate's evidence that
/// its runs reached the interesting places); nothing when no structure has probes.
fn print_probes(results: &[CheckReport]) -> Result<(), CliError> {
    let with: Vec<&CheckReport> = results.iter().filter(|r| !r.probes.is_empty()).collect();
    if with.is_empty() {
        return Ok(());
    }
    outln!("\nprobes (how often the runs reached each):")?;
    for r in with {
        let counts: Vec<String> = r
            .probes
            .iter()
            .map(|(name, n)| match n {
                0 => format!("{name} 0 (never)"),
                n => format!("{name} {n}"),
            })
            .collect();
        outln!("  {} {}: {}", r.target, r.scenario, counts.join(" · "))?;
    }
    Ok(())
}

/// The findings of a gate, each once per target (a defect several scenarios found is one
/// finding), with its minimal counterexample.
fn print_findings(results: &[CheckReport]) -> Result<(), CliError> {
    let mut seen: Vec<(&str, Finding, Vec<&str>)> = Vec::new();
    for r in results {
        for f in &r.findings {
            match seen
                .iter_mut()
                .find(|(t, g, _)| *t == r.target && g.same_defect(f))
            {
                Some((_, g, scenarios)) => {
                    g.runs += f.runs;
                    scenarios.push(&r.scenario);
                }
                None => seen.push((&r.target, f.clone(), vec![&r.scenario])),
            }
        }
    }
    for r in results {
        if let Verdict::Unknown(why) = &r.verdict {
            outln!("\n{} under {}: unknown: {why}", r.target, r.scenario)?;
        }
    }
    if seen.is_empty() {
        return Ok(());
    }
    outln!("\nfindings:")?;
    for (i, (target, f, scenarios)) in seen.iter().enumerate() {
        outln!(
            "  {}. {target}: {} (scenario{} {})",
            i + 1,
            f.line(),
            if scenarios.len() == 1 { "" } else { "s" },
            scenarios.join(", ")
        )?;
    }
    let colour = kvsim::report::colour_wanted();
    for (i, (_, f, _)) in seen.iter().enumerate() {
        outln!("\nfinding {}:", i + 1)?;
        out!("{}", kvsim::report::text_styled(&f.counterexample, colour))?;
    }
    Ok(())
}

/// The table: one line per target × scenario with its expectation (and label) and
/// verdict, then the labels' reasons.
pub(crate) fn print_table(rows: &[Row]) -> Result<(), CliError> {
    let tw = rows
        .iter()
        .map(|r| r.report.target.len())
        .max()
        .unwrap_or(6)
        .max(6);
    let sw = rows
        .iter()
        .map(|r| r.report.scenario.len())
        .max()
        .unwrap_or(8)
        .max(8);
    let ew = rows
        .iter()
        .map(|r| r.expected_text().chars().count())
        .max()
        .unwrap_or(10)
        .max(10);
    let vw = rows
        .iter()
        .map(|r| {
            r.mark()
                .verdict_text(r.report.verdict.name())
                .chars()
                .count()
        })
        .max()
        .unwrap_or(11)
        .max(11);
    outln!(
        "\n{:<tw$} {:<sw$} {:<ew$} {:<vw$} {:>6} {:>8} {:>8}  replay",
        "target",
        "scenario",
        "expected",
        "verdict",
        "runs",
        "time",
        "findings"
    )?;
    for r in rows {
        let report = r.report;
        let replay = report
            .failure
            .as_ref()
            .map(|f| format!("kvsim replay {}", f.token))
            .unwrap_or_default();
        outln!(
            "{:<tw$} {:<sw$} {:<ew$} {:<vw$} {:>6} {:>6}ms {:>8}  {replay}",
            report.target,
            report.scenario,
            r.expected_text(),
            r.mark().verdict_text(report.verdict.name()),
            report.runs,
            report.millis,
            report.findings.len()
        )?;
    }
    let labelled: Vec<&Row> = rows.iter().filter(|r| r.label.is_some()).collect();
    if !labelled.is_empty() {
        outln!("\nexpected failures:")?;
        for r in labelled {
            let label = r.label.expect("filtered");
            outln!("  {} {}: {label}", r.report.target, r.report.scenario)?;
        }
    }
    Ok(())
}

/// What `kvsim check` does around each job: its corpus's past failures replayed first
/// and added to its report, and the progress bar.
struct Around<'a> {
    corpus: Option<&'a Corpus>,
    /// Each job's replays, from its start to its end.
    past: Vec<Mutex<Vec<RunReport>>>,
    /// Past failures replayed.
    replayed: AtomicUsize,
    /// Those that still fail.
    failing: AtomicUsize,
    progress: crate::progress::Progress,
}

impl<'a> Around<'a> {
    /// Hooks for `jobs` jobs, replaying `corpus`'s past failures; no progress bar when
    /// `quiet`.
    fn new(jobs: usize, corpus: Option<&'a Corpus>, quiet: bool) -> Self {
        Around {
            corpus,
            past: (0..jobs).map(|_| Mutex::default()).collect(),
            replayed: AtomicUsize::new(0),
            failing: AtomicUsize::new(0),
            progress: crate::progress::Progress::new(jobs as u64, quiet),
        }
    }
}

/// Whether `report`'s verdict is what `job` expects (with no expectation: no violation).
fn as_expected(job: &Job, report: &CheckReport) -> bool {
    match job.target.expected {
        Some(exp) => registry::matches(exp, &report.verdict),
        None => !report.verdict.is_violation(),
    }
}

impl Hooks<Pick> for Around<'_> {
    fn before(&self, i: usize, job: &Job, target: &dyn Target) {
        let runs = self
            .corpus
            .map_or_else(Vec::new, |c| c.replay(target, &job.scenario.name));
        self.replayed.fetch_add(runs.len(), Ordering::Relaxed);
        *self.past[i]
            .lock()
            .expect("no worker panics holding the lock") = runs;
    }

    fn after(&self, i: usize, _: &Job, report: &mut CheckReport) {
        let runs = std::mem::take(&mut *self.past[i].lock().expect("no worker panicked"));
        self.failing
            .fetch_add(crate::corpus::add(report, runs), Ordering::Relaxed);
        self.progress
            .tick(&format!("{} {}", report.target, report.scenario));
    }
}

/// The plan's budget the command line asks for: seed, the scenarios' runs (within
/// `--time-limit`) or `--time-budget` shared by every job, shard, threads.
pub(crate) fn budget(args: &Args, tuning: &Tuning) -> Budget {
    Budget {
        seed: args.seed,
        runs: match tuning.time_budget {
            None => Runs::Scenario {
                time_limit: tuning.time_limit,
            },
            Some(budget) => Runs::Shared(budget),
        },
        shard: args.shard,
        threads: args.threads.unwrap_or_else(Budget::cores),
        clock: Clock::Wall,
    }
}

/// Runs the jobs as one campaign (each worker thread with its own registry: targets stay
/// on their thread); results come back in job order.
fn run_jobs(args: &Args, jobs: Vec<Job>, tuning: &Tuning, around: &Around) -> Vec<CheckReport> {
    let started = Instant::now();
    let plan = Plan {
        jobs,
        budget: budget(args, tuning),
        shrink: (!args.no_shrink).then(ShrinkLimits::default),
    };
    let results = campaign::run(
        &plan,
        &registry,
        &|entries: &Vec<Entry>, pick: &Pick| entries[pick.entry].target(pick.variant),
        around,
    );
    around.progress.finish(started.elapsed());
    results
}

/// A scenario's knobs in one line, as a JUnit case's log gives them.
pub fn knobs(
    faults: impl std::fmt::Display,
    clients: impl std::fmt::Display,
    ops: impl std::fmt::Display,
    strategy: impl std::fmt::Display,
) -> String {
    format!("faults {faults} · {clients} clients × {ops} ops · strategy {strategy}")
}

/// What `kvsim check` with its defaults did, for `kvsim bench check`: the whole matrix,
/// shrinking included, on every core, nothing printed.
pub(crate) struct MatrixRun {
    /// Verdicts (jobs) in the matrix.
    pub verdicts: usize,
    /// Verdicts that differ from their expectation.
    pub unexpected: usize,
    /// Simulated runs over every job.
    pub runs: u64,
    /// Wall time of the whole campaign.
    pub wall: Duration,
    /// Worker threads.
    pub threads: usize,
}

/// Runs `kvsim check`'s default matrix as [`main`] does (same plan, budget, shrinking and
/// hooks), without printing, and says how many runs it took and how long.
pub(crate) fn matrix_run() -> Result<MatrixRun, String> {
    #[derive(clap::Parser)]
    struct Defaults {
        #[command(flatten)]
        args: Args,
    }
    let args = <Defaults as clap::Parser>::try_parse_from(["check"])
        .map_err(|e| e.to_string())?
        .args;
    let entries = registry();
    let jobs = plan(&args, &entries)?;
    let tuning = args.tuning()?;
    let around = Around::new(jobs.len(), None, true);
    let threads = budget(&args, &tuning).threads;
    let started = Instant::now();
    let results = run_jobs(&args, jobs.clone(), &tuning, &around);
    let wall = started.elapsed();
    let unexpected = jobs
        .iter()
        .zip(&results)
        .filter(|(job, report)| !as_expected(job, report))
        .count();
    Ok(MatrixRun {
        verdicts: jobs.len(),
        unexpected,
        runs: results.iter().map(|r| r.runs).sum(),
        wall,
        threads,
    })
}
