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
mod token;
mod trace;
mod world;

pub(crate) use client::Request;
pub use client::{Clock, SimClient};
pub use config::{SimConfig, DEFAULT_LRU_LIMIT, EPOCH_MS};
pub use token::{Token, TokenError};
pub use trace::{ms, Delivery, Event, Fault, Trace, TraceStep};
pub(crate) use world::{after_setup, enumerate_faults, op_rng_seed, FaultAction, FaultClient};
pub use world::{RunOutput, Stop};

use crate::model::Model;
use crate::rng::mix64;
use crate::verdict::{Verdict, Violation};
use std::time::{Duration, Instant};
use world::{Chooser, World};

/// Runs `model` once under `config` from `seed`; with `choices`, replays them instead of
/// the strategy's own walk (choices past the end: runnable clients in turn, no faults).
pub fn run<M: Model>(
    model: &M,
    config: &SimConfig,
    seed: u64,
    choices: Option<&[u32]>,
) -> RunOutput<M> {
    let mut world = World::new(model, config, seed);
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
/// otherwise the model's own check of the history.
pub fn judge<M: Model>(model: &M, out: &RunOutput<M>) -> Verdict {
    match &out.stop {
        Some(Stop::Livelock { client, op, steps }) => Verdict::Violation(Violation {
            property: "progress".into(),
            reason: format!(
                "livelock: C{client} took more than {} steps in {op} without finishing",
                steps - 1
            ),
            ops: Vec::new(),
            partial: Vec::new(),
        }),
        Some(Stop::StepBound { steps }) => Verdict::Violation(Violation {
            property: "progress".into(),
            reason: format!("the run took more than {steps} steps without finishing"),
            ops: Vec::new(),
            partial: Vec::new(),
        }),
        Some(Stop::Foreign { client }) => Verdict::Unknown(format!(
            "client C{client} awaited something other than its kv handle (a structure must \
             take time, sleep and randomness from the kv handle)"
        )),
        None => model.check(&out.history),
    }
}

/// The seed of run number `index` of a check started from `base`.
pub fn run_seed(base: u64, index: u64) -> u64 {
    mix64(base ^ mix64(index))
}

/// Limits of one check (many runs of one scenario).
#[derive(Clone, Debug)]
pub struct CheckLimits {
    /// Base seed; run *i* uses [`run_seed`]`(seed, i)`.
    pub seed: u64,
    /// How many runs.
    pub runs: u64,
    /// Wall-clock limit; hitting it before all runs gives `Unknown`, never a pass.
    pub time_limit: Option<Duration>,
}

/// The result of a check.
pub struct CheckResult<M: Model> {
    /// `Ok` (no violation in all runs), the first `Violation`, or `Unknown`.
    pub verdict: Verdict,
    /// Runs done (up to and including the failing one).
    pub runs: u64,
    /// KV calls delivered over all runs.
    pub kv_calls: u64,
    /// Wall-clock time.
    pub elapsed: Duration,
    /// The failing run, re-run with its trace recorded, and its seed.
    pub failure: Option<(u64, RunOutput<M>)>,
}

/// Runs `model` up to `limits.runs` times; stops at the first violation (re-running it with
/// the trace on) or when the time limit is hit.
pub fn check<M: Model>(model: &M, config: &SimConfig, limits: &CheckLimits) -> CheckResult<M> {
    let start = Instant::now();
    let mut quiet = config.clone();
    quiet.record_trace = false;
    let mut kv_calls = 0;
    let mut unknown: Option<String> = None;
    for i in 0..limits.runs {
        if let Some(limit) = limits.time_limit {
            if i > 0 && start.elapsed() > limit {
                return CheckResult {
                    verdict: Verdict::Unknown(format!(
                        "time limit of {} s reached after {i} of {} runs without a violation",
                        limit.as_secs_f64(),
                        limits.runs
                    )),
                    runs: i,
                    kv_calls,
                    elapsed: start.elapsed(),
                    failure: None,
                };
            }
        }
        let seed = run_seed(limits.seed, i);
        let out = run(model, &quiet, seed, None);
        kv_calls += out.kv_calls;
        match judge(model, &out) {
            Verdict::Ok => {}
            Verdict::Unknown(why) => {
                unknown.get_or_insert(why);
            }
            Verdict::Violation(v) => {
                let mut loud = config.clone();
                loud.record_trace = true;
                let traced = run(model, &loud, seed, None);
                return CheckResult {
                    verdict: Verdict::Violation(v),
                    runs: i + 1,
                    kv_calls,
                    elapsed: start.elapsed(),
                    failure: Some((seed, traced)),
                };
            }
        }
    }
    CheckResult {
        verdict: match unknown {
            Some(why) => Verdict::Unknown(why),
            None => Verdict::Ok,
        },
        runs: limits.runs,
        kv_calls,
        elapsed: start.elapsed(),
        failure: None,
    }
}
