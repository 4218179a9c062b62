//! The one Campaign: many checks (target × scenario jobs) on worker threads under one
//! budget, each job's violations grouped into findings and minimized. `kvsim check`, the
//! reports generator (`kvsim report`) and [`crate::Check`] each build a [`Plan`] and render
//! the [`CheckReport`]s [`run`] returns, in the jobs' order; `kvsim merge` combines the
//! outputs of shards of one plan.
//!
//! A plan's budget is the scenarios' own run counts (each job within an optional time
//! limit), a time budget for each job, or one time budget shared by all jobs. Shared, every
//! job does its runs first, each in its share of the budget's sweeping part (in proportion
//! to its planned runs), and then the findings of all are minimized until the minimizing
//! part ends.

use crate::harness::findings;
use crate::harness::records::CheckReport;
use crate::harness::shrink::ShrinkLimits;
use crate::harness::sweep::{Clock, RunBudget, Shard};
use crate::harness::target::Target;
use crate::scenario::Scenario;
use crate::sim::SimConfig;
use crate::verdict::Verdict;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// The most runs a job does under a time budget without a cap.
pub const MAX_RUNS: u64 = 100_000_000;

/// One check: a target against a scenario, with its run knobs.
#[derive(Clone, Debug)]
pub struct Job<K> {
    /// The target, as the caller names it (resolved on each worker thread).
    pub target: K,
    /// The scenario (its runs are the job's planned runs).
    pub scenario: Scenario,
    /// The run knobs.
    pub config: SimConfig,
    /// The job is expected to find a violation: under a shared time budget, finding none
    /// in fewer runs than planned is `Unknown` (it has not shown what it was meant to),
    /// never a pass.
    pub expect_violation: bool,
}

/// How many runs each job does.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Runs {
    /// Its scenario's runs, within a wall-clock limit if given (hitting it: `Unknown`).
    Scenario {
        /// The limit per job.
        time_limit: Option<Duration>,
    },
    /// As many runs as fit in `time` (at most `cap`), judged when there are at least
    /// `min_runs`; minimizing comes on top.
    Each {
        /// Each job's time.
        time: Duration,
        /// The fewest runs for a verdict.
        min_runs: u64,
        /// The most runs.
        cap: u64,
    },
    /// One time budget for the whole plan, shared by its jobs (see the module's docs).
    Shared(TimeBudget),
}

/// A time budget for a whole plan (`kvsim check --time-budget`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TimeBudget {
    /// The whole plan's wall-clock time.
    pub total: Duration,
    /// The fewest runs a job must do for a verdict.
    pub min_runs: u64,
    /// The most runs a job does, if given (else [`MAX_RUNS`]).
    pub cap: Option<u64>,
}

impl TimeBudget {
    /// The share of the time that ends the sweeps; the rest is for minimizing.
    pub const SWEEP_SHARE: f64 = 0.75;
    /// The share after which no more minimizing is started.
    pub const SHRINK_SHARE: f64 = 0.9;
}

/// A plan's budget: seeds, runs or time, shard and threads.
#[derive(Clone, Copy, Debug)]
pub struct Budget {
    /// Base seed: run *i* of every job uses [`crate::harness::sweep::run_seed`]`(seed, i)`.
    pub seed: u64,
    /// How many runs each job does.
    pub runs: Runs,
    /// Which of each job's runs this process does.
    pub shard: Shard,
    /// Worker threads (at least 1, at most one per job).
    pub threads: usize,
    /// The clock time limits are measured on.
    pub clock: Clock,
}

impl Budget {
    /// Every job's scenario runs from `seed`, all shards, on one thread, no time limit.
    pub fn runs(seed: u64) -> Budget {
        Budget {
            seed,
            runs: Runs::Scenario { time_limit: None },
            shard: Shard::ALL,
            threads: 1,
            clock: Clock::Wall,
        }
    }

    /// The machine's cores.
    pub fn cores() -> usize {
        std::thread::available_parallelism().map_or(1, |n| n.get())
    }

    /// The run budget of a job that does its scenario's runs or its own time's worth.
    fn each(&self, job_runs: u64) -> RunBudget {
        let (runs, time_limit, min_runs) = match self.runs {
            Runs::Scenario { time_limit } => (job_runs, time_limit, None),
            Runs::Each {
                time,
                min_runs,
                cap,
            } => (cap, Some(time), Some(min_runs)),
            Runs::Shared(_) => unreachable!("a shared budget gives each job its share"),
        };
        RunBudget {
            seed: self.seed,
            runs,
            time_limit,
            shard: self.shard,
            min_runs,
            clock: self.clock,
        }
    }
}

/// How a worker finds a job's target among the targets `R` it built.
pub type Find<K, R> = dyn for<'a> Fn(&'a R, &K) -> &'a (dyn Target + 'a) + Sync;

/// Many checks under one budget.
#[derive(Clone, Debug)]
pub struct Plan<K> {
    /// The jobs, in the order their reports come back.
    pub jobs: Vec<Job<K>>,
    /// The budget.
    pub budget: Budget,
    /// How findings are minimized (`None`: reported as found).
    pub shrink: Option<ShrinkLimits>,
}

/// What a caller does around each job (from the worker threads).
pub trait Hooks<K>: Sync {
    /// Before job `index`'s runs (e.g. replay its past failures).
    fn before(&self, _index: usize, _job: &Job<K>, _target: &dyn Target) {}
    /// After job `index` is done and minimized (e.g. add the replays, show progress).
    fn after(&self, _index: usize, _job: &Job<K>, _report: &mut CheckReport) {}
}

/// No hooks.
impl<K: Sync> Hooks<K> for () {}

/// Runs `plan`. Each worker thread builds its own targets with `targets` (targets stay on
/// their thread) and finds a job's with `target`. The reports come back in job order.
pub fn run<K: Sync, R>(
    plan: &Plan<K>,
    targets: &(dyn Fn() -> R + Sync),
    target: &Find<K, R>,
    hooks: &dyn Hooks<K>,
) -> Vec<CheckReport> {
    let started = Instant::now();
    let threads = plan.budget.threads.clamp(1, plan.jobs.len().max(1));
    let pool = Pool {
        jobs: &plan.jobs,
        threads,
        targets,
        target,
    };
    let Runs::Shared(budget) = plan.budget.runs else {
        return pool.each(|i, job, t| {
            hooks.before(i, job, t);
            let limits = plan.budget.each(job.scenario.runs);
            let mut report =
                findings::check(t, &job.scenario, &job.config, &limits, plan.shrink.as_ref());
            hooks.after(i, job, &mut report);
            report
        });
    };
    // Every job's runs first, in its share of the budget; then the findings of all,
    // minimized until the budget's minimizing share ends.
    let mut shrink = plan.shrink.clone();
    if let Some(limits) = &mut shrink {
        limits.deadline = Some(started + budget.total.mul_f64(TimeBudget::SHRINK_SHARE));
    }
    let shares = Shares::new(budget, &plan.jobs, threads, started);
    let swept = pool.each(|i, job, t| {
        // A job's share is what is left when it starts, so the time its hook took
        // (before the share is taken) comes out of the budget too.
        hooks.before(i, job, t);
        let limits = shares.budget(i, &plan.budget);
        t.sweep(&job.scenario, &job.config, &limits)
    });
    let swept = Mutex::new(swept.into_iter().map(Some).collect::<Vec<_>>());
    pool.each(|i, job, t| {
        let mut report = swept.lock().expect("no worker panics holding the lock")[i]
            .take()
            .expect("each job once");
        findings::complete(t, &job.config, &mut report, shrink.as_ref());
        hooks.after(i, job, &mut report);
        shares.judge(job, &mut report);
        report
    })
}

/// The jobs, the threads and how to find a job's target.
struct Pool<'p, K, R> {
    jobs: &'p [Job<K>],
    threads: usize,
    targets: &'p (dyn Fn() -> R + Sync),
    target: &'p Find<K, R>,
}

impl<K: Sync, R> Pool<'_, K, R> {
    /// `work(index, job, target)` for every job, on the pool's threads (on this one when
    /// there is one); the results in the jobs' order.
    fn each<F>(&self, work: F) -> Vec<CheckReport>
    where
        F: Fn(usize, &Job<K>, &dyn Target) -> CheckReport + Sync,
    {
        if self.threads == 1 {
            let targets = (self.targets)();
            return self
                .jobs
                .iter()
                .enumerate()
                .map(|(i, job)| work(i, job, (self.target)(&targets, &job.target)))
                .collect();
        }
        let next = AtomicUsize::new(0);
        let results: Mutex<Vec<Option<CheckReport>>> = Mutex::new(vec![None; self.jobs.len()]);
        std::thread::scope(|scope| {
            for _ in 0..self.threads {
                scope.spawn(|| {
                    let targets = (self.targets)();
                    loop {
                        let i = next.fetch_add(1, Ordering::Relaxed);
                        let Some(job) = self.jobs.get(i) else { break };
                        let report = work(i, job, (self.target)(&targets, &job.target));
                        results.lock().expect("no worker panics holding the lock")[i] =
                            Some(report);
                    }
                });
            }
        });
        results
            .into_inner()
            .expect("no worker panicked")
            .into_iter()
            .map(|r| r.expect("every job ran"))
            .collect()
    }
}

/// A time budget split over the jobs of a plan: each job, when it starts, gets the time
/// left for sweeping times the threads, in proportion to its planned runs among the jobs
/// not yet started (and the ones still running).
struct Shares {
    budget: TimeBudget,
    threads: usize,
    /// When the sweeps must end.
    sweep_end: Instant,
    /// Each job's planned runs, and the sum of those from each job on.
    weights: Vec<u64>,
    suffix: Vec<u64>,
}

impl Shares {
    fn new<K>(budget: TimeBudget, jobs: &[Job<K>], threads: usize, started: Instant) -> Shares {
        let weights: Vec<u64> = jobs.iter().map(|j| j.scenario.runs.max(1)).collect();
        let mut suffix = vec![0; weights.len() + 1];
        for i in (0..weights.len()).rev() {
            suffix[i] = suffix[i + 1] + weights[i];
        }
        Shares {
            budget,
            threads,
            sweep_end: started + budget.total.mul_f64(TimeBudget::SWEEP_SHARE),
            weights,
            suffix,
        }
    }

    /// Job `i`'s run budget as it starts: as many runs as fit in its share (at most the
    /// cap), at least the floor.
    fn budget(&self, i: usize, plan: &Budget) -> RunBudget {
        let left = self.sweep_end.saturating_duration_since(Instant::now());
        // The jobs still running on the other threads hold about as much as one average
        // job each of what is left.
        let ahead = self.suffix[i] as f64;
        let running = (self.threads - 1) as f64 * ahead / (self.weights.len() - i) as f64;
        let share = left.mul_f64(self.threads as f64 * self.weights[i] as f64 / (ahead + running));
        RunBudget {
            seed: plan.seed,
            runs: self.budget.cap.unwrap_or(MAX_RUNS),
            time_limit: Some(share.max(Duration::from_millis(1))),
            shard: plan.shard,
            min_runs: Some(self.budget.min_runs),
            clock: plan.clock,
        }
    }

    /// A job expected to fail that found nothing in its share has not shown what it was
    /// meant to: `unknown`, not a pass that contradicts the expectation.
    fn judge<K>(&self, job: &Job<K>, report: &mut CheckReport) {
        if job.expect_violation && report.verdict.is_ok() && report.runs < job.scenario.runs {
            report.verdict = Verdict::Unknown(format!(
                "expected a violation, none in the {} runs that fit in this scenario's share \
                 of the {} s time budget (it plans {})",
                report.runs,
                self.budget.total.as_secs_f64(),
                job.scenario.runs
            ));
        }
    }
}
