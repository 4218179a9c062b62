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
pub mod knobs;
mod neighbour;
mod runner;
mod storelog;
mod strategy;
mod token;
mod trace;
mod world;

pub use client::{ClientClock, SimClient};
pub(crate) use client::{Request, Wait};
pub(crate) use config::describe_servers;
pub use config::{
    lru_geometry, SimConfig, DEFAULT_LRU_LIMIT, DEFAULT_NEIGHBOUR_BYTES,
    DEFAULT_NEIGHBOUR_MAX_BYTES, EPOCH_MS,
};
pub use neighbour::{describe_classes, neighbour_classes};
pub(crate) use runner::after_setup;
pub use runner::RunOutput;
pub use storelog::{StoreChange, StoreItem, StoreLog};
pub use token::{Token, TokenError};
pub use trace::{ms, Delivery, Event, Fault, Lane, Pending, Trace, TraceStep};
pub(crate) use world::Tail;
pub(crate) use world::{
    handle_rng_seed, op_rng_seed, ClientState, Clients, Delivered, Halt, InFlight, OpStart, Phase,
    PollAt, Polled, Polling, Rules, ServerState, Sink,
};
pub use world::{HistoryCell, Quiet, Stop, World};

use crate::history::Outcome;
use crate::model::Model;
use crate::verdict::{Verdict, Violation};
use runner::runner;
use strategy::Chooser;

/// Runs `model` once under `config` from `seed`; with `choices`, replays them instead of
/// the strategy's own walk (choices past the end: runnable clients in turn, no faults).
pub fn run<M: Model>(
    model: &M,
    config: &SimConfig,
    seed: u64,
    choices: Option<&[u32]>,
) -> RunOutput<M> {
    run_as(model, config, seed, choices, false)
}

/// [`run`] with the trace on that also records the stores' contents step by step
/// ([`RunOutput::store`]): the same run (trace, choices, verdict), for a viewer.
pub fn run_with_store<M: Model>(
    model: &M,
    config: &SimConfig,
    seed: u64,
    choices: Option<&[u32]>,
) -> RunOutput<M> {
    let mut loud = config.clone();
    loud.record_trace = true;
    run_as(model, &loud, seed, choices, true)
}

/// [`run`], keeping a store log when `stores`.
fn run_as<M: Model>(
    model: &M,
    config: &SimConfig,
    seed: u64,
    choices: Option<&[u32]>,
    stores: bool,
) -> RunOutput<M> {
    let mut world = runner(model, config, seed);
    if stores {
        world.store_log = Some(storelog::StoreRecorder::default());
    }
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
