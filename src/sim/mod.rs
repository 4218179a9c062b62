//! The deterministic simulator.
//!
//! A single-threaded executor runs N clients, each performing a sequence of a model's
//! operations against simulated memcached servers. Every KV call parks the client; a step
//! of the world is one choice: deliver client *i*'s pending command (and resume it until
//! its next call), or inject a fault (evict a key, jump time to the next expiry, jump a
//! client's clock, restart a server, crash a client, lose a request or a reply, pause a
//! client, take a server of the cluster down). All randomness comes from one seeded
//! [`SimRng`](crate::rng::SimRng); a run is a pure function of (model, [`SimConfig`],
//! seed, choices), and every run can be replayed from a [`Token`].
//!
//! Time is virtual milliseconds: a delivered KV call takes [`SimConfig::step_ms`]; a
//! sleeping client wakes when time reaches its deadline; when no client can move, time
//! jumps to the next wake-up. The server's clock drives expiry at memcached's one-second
//! granularity; each client's clock has its own offset, drift and jumps (`skew`).

mod client;
mod config;
mod runner;
mod strategy;
mod token;
mod trace;
mod world;

pub(crate) use client::Request;
pub use client::{ClientClock, SimClient};
pub(crate) use config::describe_servers;
pub use config::{SimConfig, DEFAULT_LRU_LIMIT, DEFAULT_NEIGHBOUR_BYTES, EPOCH_MS};
pub(crate) use runner::after_setup;
pub use runner::RunOutput;
pub use token::{Token, TokenError};
pub use trace::{ms, Delivery, Event, Fault, Lane, Pending, Trace, TraceStep};
#[cfg(test)]
pub(crate) use world::Tail;
pub(crate) use world::{
    handle_rng_seed, op_rng_seed, ClientState, Clients, Delivered, Halt, InFlight, OpStart, Phase,
    PollAt, Polled, Polling, Rules, ServerState,
};
pub use world::{Quiet, Stop, World};

use crate::history::Outcome;
use crate::model::Model;
use crate::rng::mix64;
use crate::scenario::FaultKind;
use crate::verdict::{Verdict, Violation};
use runner::Runner;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::time::{Duration, Instant};
use strategy::Chooser;

/// Runs `model` once under `config` from `seed`; with `choices`, replays them instead of
/// the strategy's own walk (choices past the end: runnable clients in turn, no faults).
pub fn run<M: Model>(
    model: &M,
    config: &SimConfig,
    seed: u64,
    choices: Option<&[u32]>,
) -> RunOutput<M> {
    let mut world = Runner::new(model, config, seed);
    let own = world.chooser_for(config.strategy);
    let chooser = match choices {
        Some(c) => Chooser::Replay {
            choices: c.to_vec(),
            pos: 0,
            next: 0,
        },
        None => own,
    };
    world.run(chooser)
}

/// Judges a run: a livelock or an exhausted step bound is a `progress` violation;
/// otherwise the model's own check of the history, then `progress` once faults stop: an
/// operation invoked after the last fault that returned without completing its purpose
/// ([`Model::made_progress`]) is a lockout.
pub fn judge<M: Model>(model: &M, out: &RunOutput<M>) -> Verdict {
    judge_end(
        model,
        out.stop.as_ref(),
        &out.history,
        out.quiet,
        !out.faults_used.is_empty(),
    )
}

/// [`judge`] of a run's end: why it stopped early, its history, from when on no fault
/// acted, and whether any fault acted.
pub(crate) fn judge_end<M: Model>(
    model: &M,
    stop: Option<&Stop>,
    history: &crate::history::History<M::Op, M::Ret>,
    quiet: Option<Quiet>,
    faulted: bool,
) -> Verdict {
    match stop {
        Some(Stop::Livelock { client, op, steps }) => Verdict::Violation(Violation::new(
            "progress",
            format!(
                "livelock: C{client} took more than {} steps in {op} without finishing",
                steps - 1
            ),
            Vec::new(),
        )),
        Some(Stop::StepBound { steps }) => Verdict::Violation(Violation::new(
            "progress",
            format!("the run took more than {steps} steps without finishing"),
            Vec::new(),
        )),
        Some(Stop::Refused {
            client,
            index,
            op,
            error,
        }) => Verdict::Violation(Violation::new(
            "valid commands",
            format!("C{client}'s {op} failed on a command of its own that was refused: {error}"),
            vec![*index],
        )),
        Some(Stop::Foreign { client }) => Verdict::Unknown(format!(
            "client C{client} awaited something other than its kv handle (a structure must \
             take time, sleep and randomness from the kv handle)"
        )),
        None => match model.check_with(history, &crate::model::SIMULATED_LIMITS) {
            Verdict::Violation(v) => Verdict::Violation(v),
            other => match quiet {
                Some(q) => lockout(model, history, q, faulted).map_or(other, Verdict::Violation),
                // When the faults stopped is unknown: a return without progress can be
                // judged neither way.
                None if history.ops.iter().any(
                    |o| matches!(&o.outcome, Outcome::Ok(r) if !model.made_progress(&o.op, r)),
                ) =>
                {
                    Verdict::Unknown(
                        "progress not judged: an operation returned without completing its \
                         purpose on a path with a lasting fault (pause, shard-fail), and the \
                         history holds no times to tell whether it started after that fault \
                         ended (explore with --timed)"
                            .to_string(),
                    )
                }
                None => other,
            },
        },
    }
}

/// The `progress` property once faults stop: the first operation invoked after the last
/// fault (and after its effect ended) that returned without completing its purpose
/// ([`Model::made_progress`]).
fn lockout<M: Model>(
    model: &M,
    history: &crate::history::History<M::Op, M::Ret>,
    quiet: Quiet,
    faulted: bool,
) -> Option<Violation> {
    history.ops.iter().enumerate().find_map(|(i, o)| {
        let Outcome::Ok(ret) = &o.outcome else {
            return None;
        };
        if o.call <= quiet.seq || o.call_ms < quiet.ms || model.made_progress(&o.op, ret) {
            return None;
        }
        let when = if faulted {
            format!("after the last fault ended ({})", ms(quiet.ms))
        } else {
            "in a run without faults".to_string()
        };
        Some(Violation::new(
            "progress",
            format!(
                "C{}'s {:?}, started at {} {when}, returned {ret:?} without completing its \
                 purpose",
                o.client,
                o.op,
                ms(o.call_ms)
            ),
            vec![i],
        ))
    })
}

/// The seed of run number `index` of a check started from `base`.
pub fn run_seed(base: u64, index: u64) -> u64 {
    mix64(base ^ mix64(index))
}

/// The budget of one check (many runs of one scenario): its seed, its runs, its time.
#[derive(Clone, Debug)]
pub struct RunBudget {
    /// Base seed; run *i* uses [`run_seed`]`(seed, i)`.
    pub seed: u64,
    /// How many runs.
    pub runs: u64,
    /// Wall-clock limit; hitting it before all runs gives `Unknown`, never a pass (unless
    /// `min_runs` makes it a time budget).
    pub time_limit: Option<Duration>,
    /// Which of the runs this process does (every run: [`Shard::ALL`]).
    pub shard: Shard,
    /// A time budget's floor: with a `time_limit`, the check does as many of its `runs`
    /// as fit in it and judges the runs done, provided they are at least this many (fewer
    /// is `Unknown`: no pass on too little evidence). `None`: every run must be done.
    pub min_runs: Option<u64>,
    /// The clock `time_limit` is measured on ([`Clock::Wall`] but in tests of the budget's
    /// logic).
    pub clock: Clock,
}

/// The clock a [`RunBudget`]'s time limit is measured on.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Clock {
    /// The machine's wall clock, from the start of the check.
    #[default]
    Wall,
    /// A virtual clock: every run takes exactly this long, however fast the machine is (a
    /// check that has done `n` runs has spent `n` times this). For tests of a budget's
    /// logic, whose outcome must not depend on how loaded the machine is.
    PerRun(Duration),
}

impl Clock {
    /// The time spent by a check that started at `start` and has done `runs` runs.
    pub fn elapsed(self, start: Instant, runs: u64) -> Duration {
        match self {
            Clock::Wall => start.elapsed(),
            Clock::PerRun(each) => {
                let nanos = each.as_nanos().saturating_mul(runs as u128);
                Duration::from_nanos(nanos.min(u64::MAX as u128) as u64)
            }
        }
    }
}

/// Which of a check's runs one process does, so a check can be spread over machines: run
/// *i* (seed [`run_seed`]`(seed, i)`) belongs to shard `i % count`. Shards of one check
/// share nothing, and together do exactly the runs of the whole check.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Shard {
    /// This shard, from 0.
    pub index: u64,
    /// How many shards the runs are spread over.
    pub count: u64,
}

impl Shard {
    /// Every run.
    pub const ALL: Shard = Shard { index: 0, count: 1 };

    /// Most shards a check can be spread over.
    pub const MAX_COUNT: u64 = 1 << 20;

    /// Parses `I/N` as `--shard` takes it: shard `I` of `N`, counted from 1.
    pub fn parse(text: &str) -> Result<Shard, String> {
        let bad = || {
            format!(
                "expected a shard as I/N with 1 <= I <= N <= {}, found {text:?}",
                Shard::MAX_COUNT
            )
        };
        let (i, n) = text.split_once('/').ok_or_else(bad)?;
        let (i, n): (u64, u64) = (
            i.trim().parse().map_err(|_| bad())?,
            n.trim().parse().map_err(|_| bad())?,
        );
        if i == 0 || i > n || n > Shard::MAX_COUNT {
            return Err(bad());
        }
        Ok(Shard {
            index: i - 1,
            count: n,
        })
    }

    /// The indices of the runs of `runs` that this shard does, in order.
    pub fn runs(self, runs: u64) -> impl Iterator<Item = u64> {
        (self.index..runs).step_by(self.count.max(1) as usize)
    }
}

/// `I/N`, as [`Shard::parse`] reads it.
impl std::fmt::Display for Shard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.index + 1, self.count)
    }
}

/// Violating runs of one check that share a property, a reason class
/// ([`Violation::class`]) and the fault kinds they injected: the raw material of findings.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ViolationGroup {
    /// The property.
    pub property: String,
    /// The reason's class.
    pub class: String,
    /// The first run's reason.
    pub reason: String,
    /// The fault kinds the runs injected.
    pub faults: Vec<FaultKind>,
    /// How many runs fell in this group.
    pub runs: u64,
    /// The first run's seed.
    pub seed: u64,
}

/// Most distinct [`ViolationGroup`]s one check keeps; violating runs past it are counted
/// in [`CheckResult::violating_runs`] only.
pub const MAX_GROUPS: usize = 64;

/// The result of a check.
pub struct CheckResult<M: Model> {
    /// `Ok` (no violation in all runs), the first `Violation`, or `Unknown`.
    pub verdict: Verdict,
    /// Runs done.
    pub runs: u64,
    /// Runs that violated a property.
    pub violating_runs: u64,
    /// The violating runs, grouped (at most [`MAX_GROUPS`]), in the order first found.
    pub groups: Vec<ViolationGroup>,
    /// KV calls delivered over all runs.
    pub kv_calls: u64,
    /// The time the runs took, on the budget's [`Clock`] (the wall clock but in tests).
    pub elapsed: Duration,
    /// How often each probe was hit over all runs ([`crate::kv::Kv::probe`]): every probe
    /// the model declares ([`Model::probes`]), 0 for those no run hit.
    pub probes: BTreeMap<String, u64>,
    /// The first failing run, re-run with its trace recorded, and its seed.
    pub failure: Option<(u64, RunOutput<M>)>,
}

/// Runs `model` `limits.runs` times (or until the time limit), and groups the violating
/// runs it finds: a check does not stop at its first violation, so one defect never hides
/// another. The first failing run is re-run with its trace on.
pub fn sweep<M: Model>(model: &M, config: &SimConfig, limits: &RunBudget) -> CheckResult<M> {
    let start = Instant::now();
    let mut quiet = config.clone();
    quiet.record_trace = false;
    let mut kv_calls = 0;
    let mut unknown: Option<String> = None;
    let mut first: Option<(u64, Violation)> = None;
    let mut groups: Vec<ViolationGroup> = Vec::new();
    let mut violating_runs = 0;
    let mut runs = 0;
    let mut timed_out = None;
    let planned = limits.shard.runs(limits.runs).count() as u64;
    let mut probes: BTreeMap<String, u64> =
        model.probes().iter().map(|p| (p.to_string(), 0)).collect();
    for i in limits.shard.runs(limits.runs) {
        if let Some(limit) = limits.time_limit {
            if runs > 0 && limits.clock.elapsed(start, runs) > limit {
                timed_out = Some(limit).filter(|_| limits.min_runs.is_none_or(|m| runs < m));
                break;
            }
        }
        let seed = run_seed(limits.seed, i);
        let out = run(model, &quiet, seed, None);
        runs += 1;
        kv_calls += out.kv_calls;
        for (&name, &n) in &out.probes {
            // No allocation per run for a probe already counted (the usual case).
            match probes.get_mut(name) {
                Some(total) => *total += n,
                None => {
                    probes.insert(name.to_string(), n);
                }
            }
        }
        match judge(model, &out) {
            Verdict::Ok => {}
            Verdict::Unknown(why) => {
                unknown.get_or_insert(why);
            }
            Verdict::Violation(v) => {
                violating_runs += 1;
                let class = v.class();
                let known = groups.iter().position(|g| {
                    g.property == v.property && g.class == class && g.faults == out.faults_used
                });
                match known {
                    Some(g) => groups[g].runs += 1,
                    None if groups.len() < MAX_GROUPS => groups.push(ViolationGroup {
                        property: v.property.clone(),
                        class,
                        reason: v.reason.clone(),
                        faults: out.faults_used.clone(),
                        runs: 1,
                        seed,
                    }),
                    None => {}
                }
                first.get_or_insert((seed, v));
            }
        }
    }
    let verdict = match (first.as_ref(), timed_out, unknown) {
        (Some((_, v)), _, _) => Verdict::Violation(v.clone()),
        (None, Some(limit), _) => Verdict::Unknown(match limits.min_runs {
            Some(floor) => format!(
                "time budget of {} s spent after {runs} runs, fewer than the {floor} required, \
                 without a violation",
                limit.as_secs_f64(),
            ),
            None => format!(
                "time limit of {} s reached after {runs} of {planned} runs without a violation",
                limit.as_secs_f64(),
            ),
        }),
        (None, None, Some(why)) => Verdict::Unknown(why),
        // No evidence, no pass: a shard can hold none of a scenario's runs.
        (None, None, None) if runs == 0 => Verdict::Unknown(format!(
            "no run: shard {} holds none of the {} runs",
            limits.shard, limits.runs
        )),
        (None, None, None) => Verdict::Ok,
    };
    let failure = first.map(|(seed, _)| {
        let mut loud = config.clone();
        loud.record_trace = true;
        (seed, run(model, &loud, seed, None))
    });
    CheckResult {
        verdict,
        runs,
        violating_runs,
        groups,
        kv_calls,
        elapsed: limits.clock.elapsed(start, runs),
        probes,
        failure,
    }
}
