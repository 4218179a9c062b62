//! Exhaustive checking with [stateright]: every interleaving and every fault of a bounded
//! scope, with duplicate states dropped.
//!
//! The bridge turns any [`Model`] plus a [`Scope`] (clients, operations per client, a
//! fault budget per kind, a time horizon, a seed) into a stateright model. Its state is
//! explicit and hashable: each server's store, virtual time, the fault budget spent, the
//! partial history, and per client its phase, operation index, clock offset and the
//! inputs of each poll of its current operation (the replies it received). A client's
//! local variables are not stored: its code is deterministic, so they are rebuilt by
//! polling a fresh future of the current operation against the recorded replies. Actions
//! are the simulator's choices: a client's step (start an operation, deliver its pending
//! command, wake it) or a fault, enumerated as the simulator enumerates them, so every path
//! is a run of the simulator and replays there from its choices (see
//! [`Exploration::counterexample`]).
//!
//! Properties:
//! - *the model's check* (`always`): every final history (all clients done or crashed)
//!   passes [`Model::check`] (linearizability, mutual exclusion, …);
//! - *progress* (`always`): no operation exceeds the simulator's per-operation step bound;
//! - *every operation completes* (`sometimes`): some path completes every operation; if
//!   none does, the scope is vacuous and the verdict is `Unknown`.
//!
//! # Soundness
//! - **Bounded.** "Ok" means: no violation in any interleaving of this scope (these
//!   clients, operations, fault budgets, this workload and seed) whose paths stay within
//!   the time horizon and in which no operation takes more than
//!   [`Scope::max_op_steps`] steps. Paths past these bounds are cut, not judged
//!   ([`Exploration::horizon_cut`] counts them); spin loops under an unfair schedule are
//!   such paths.
//! - **Hash compaction.** The search identifies a state by its 64-bit fingerprint alone
//!   (stateright's: its hash with stateright's fixed `ahash` keys) and never compares
//!   states. Two different states with the same fingerprint are taken for one, and
//!   everything reachable only through the second is never explored: a collision can
//!   hide a violation (it can never invent one; every counterexample is replayed in the
//!   simulator). With n states the chance of any collision is about n²/2⁶⁵: 3·10⁻⁸ for a
//!   million states, 3·10⁻⁶ for ten million.
//! - **Determinism.** A structure must take time, randomness and waiting from its kv
//!   handle. If replaying a client's recorded replies does not reproduce its requests, the
//!   path ends and the verdict is `Unknown`.
//! - **Depth-first, then shortest.** The search is depth-first (its memory is the set of
//!   fingerprints and the states waiting on the stack; a breadth-first frontier over
//!   thousands of workloads takes gigabytes). It is kvsim's own (`dfs.rs`) over the
//!   bridge's stateright model, with the semantics of stateright's depth-first checker:
//!   the same states generated, visited and checked, properties checked on every visited
//!   state (the initial one included, none outside the bounds), and the search stopped
//!   after the block of 1,500 states in which a failure shows. On one thread it visits
//!   states in stateright's order, so counts, depth and counterexamples are stateright's;
//!   on several, threads that run dry take states from another's stack, and the states
//!   visited (so the counts of a complete search and its verdict) are the same while the
//!   depth and the failing path found first depend on the threads' timing. A violation
//!   is then searched again breadth-first (stateright's checker) on one thread within the
//!   violating path's workload: the counterexample is the shortest of that workload, not
//!   necessarily of the whole scope (another workload may fail in fewer steps).
//!
//! Guard rails: the search stops with `Unknown`, naming the bound, when it has generated
//! [`SearchLimits::max_states`] states or the process holds [`SearchLimits::max_memory_bytes`];
//! [`estimate`] warns before a search when the scope looks too large for the machine.
//!
//! [stateright]: https://docs.rs/stateright

mod bridge;
pub mod browse;
mod canon;
mod commute;
mod dfs;
mod explorer;
mod guard;
mod polls;
mod scope;
mod state;
#[cfg(test)]
mod tests;
pub mod web;
mod workload;

pub use scope::{Scope, DEFAULT_DRAW_VALUES, DEFAULT_HORIZON_MS, DEFAULT_MAX_OP_STEPS};
pub use state::State;
pub use workload::EVERY_VALUE_UP_TO;

use crate::model::Model;
use crate::rng::SimRng;
use crate::sim::{self, SimConfig};
use crate::verdict::Verdict;
use bridge::{Bridge, PROP_CHECK, PROP_COMPLETES, PROP_PROGRESS};
use guard::Guard;
use stateright::{Checker, HasDiscoveries, Model as _};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// A [`Model`] that can be explored on threads (stateright's checkers and Explorer run
/// on their own threads): it and its operations and results are `Send + Sync`.
pub trait Explorable:
    Model<Op: Send + Sync + 'static, Ret: Send + Sync + 'static> + Send + Sync + 'static
{
}

impl<M> Explorable for M
where
    M: Model + Send + Sync + 'static,
    M::Op: Send + Sync + 'static,
    M::Ret: Send + Sync + 'static,
{
}

/// The guard rails and resources of one search.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SearchLimits {
    /// Most states generated (repeats included) before the search stops with `Unknown`.
    pub max_states: usize,
    /// Most resident memory of the process before the search stops with `Unknown`.
    pub max_memory_bytes: u64,
    /// Checker threads of the depth-first search (the shortest counterexample of a
    /// violating workload is then searched on one thread).
    pub threads: usize,
    /// Print progress on stderr once a second (states, unique states, depth, states/s,
    /// memory).
    pub progress: bool,
    /// Leave out steps that commute with steps already explored (sleep sets, a
    /// partial-order reduction): every state is still visited and checked, fewer repeats
    /// are generated. Only time-free searches without a noisy neighbour, of at most 8
    /// clients, reduce; see [`Exploration::reduced`]. Off by default: it pays where
    /// clients touch different keys (fifo/fixed 2 × 2: 29 % fewer states generated, 15 %
    /// fewer instructions), not where they contend for one key under the fairness rule
    /// (spinlock/fixed 4 × 1: 12 % fewer states, and the bookkeeping costs more).
    pub reduction: bool,
}

impl Default for SearchLimits {
    /// 50 million states, three quarters of the memory available now (4 GiB where the
    /// OS does not say), one thread, no reduction.
    fn default() -> SearchLimits {
        SearchLimits {
            max_states: 50_000_000,
            max_memory_bytes: crate::check::CheckerLimits::default_memory(),
            threads: 1,
            progress: false,
            reduction: false,
        }
    }
}

/// The result of an exhaustive search.
#[derive(Clone, Debug)]
pub struct Exploration {
    /// `Ok` (every path of the scope passes), `Violation` (with [`Self::counterexample`]),
    /// or `Unknown` (a bound was hit, the scope is vacuous, or a path could not be judged).
    pub verdict: Verdict,
    /// Distinct states (by hash).
    pub unique_states: usize,
    /// States generated, repeats included (after the reduction, if [`Self::reduced`]).
    pub total_states: usize,
    /// Whether the search left out steps with sleep sets ([`SearchLimits::reduction`]).
    pub reduced: bool,
    /// The steps the reduction left out: a complete search without it generates
    /// `total_states + slept` states (the same unique ones).
    pub slept: usize,
    /// The deepest path explored (in steps).
    pub max_depth: usize,
    /// Wall-clock time of the search.
    pub elapsed: Duration,
    /// Paths the time horizon cut (states not expanded, not judged).
    pub horizon_cut: usize,
    /// Paths the step bound per operation cut (states not expanded, not judged).
    pub steps_cut: usize,
    /// The sets of clients the search treated as interchangeable (symmetry reduction:
    /// one state explored for every permutation within a set); empty when none.
    pub interchangeable: Vec<Vec<usize>>,
    /// Workloads the scope covers (every alternative of every operation; saturating).
    pub workloads: u64,
    /// The guard rail that stopped the search, if one did.
    pub bound: Option<String>,
    /// Whether the search was time-free ([`Scope::time_shift`]): states that differ only
    /// by when things happen were one, and no path was cut at the horizon.
    pub time_free: bool,
    /// What made a time-free search stop and run again with times (a client read its
    /// clock, or sent a command that involves time), if something did.
    pub time_dependence: Option<String>,
    /// For a violation or an unjudgeable path: the shortest path to it, as the
    /// simulator's replay choices (client `i` < clients, faults after them).
    pub counterexample: Option<Vec<u32>>,
    /// The simulator's knobs that replay [`Self::counterexample`] with [`Self::seed`].
    pub config: SimConfig,
    /// The seed (workload and random numbers).
    pub seed: u64,
}

impl Exploration {
    /// Generated states per second of wall-clock time.
    pub fn states_per_s(&self) -> f64 {
        self.total_states as f64 / self.elapsed.as_secs_f64().max(1e-9)
    }
}

/// The workloads `scope` covers for `model`: how many (every alternative of every
/// operation [`Model::op`] can give; saturating), and whether some choice among many values
/// took only [`Scope::draw_values`] of them. An error when the workload is too large to
/// enumerate.
pub fn workloads<M: Model>(model: &M, scope: &Scope) -> Result<(u64, bool), String> {
    if scope.seeded_workload {
        return Ok((1, false));
    }
    let mut n = 1u64;
    let mut spread = false;
    for c in 0..scope.config.clients {
        for i in 0..scope.config.ops {
            let (alts, s) = workload::alternatives(model, scope, c, i, workload::MAX_ALTERNATIVES)?;
            n = n.saturating_mul(alts.len() as u64);
            spread |= s;
        }
    }
    Ok((n, spread))
}

/// Explores every path of `model` in `scope`, depth-first, within `limits`; a violation's
/// counterexample is the shortest of its workload.
pub fn explore<M: Explorable>(model: Arc<M>, scope: &Scope, limits: &SearchLimits) -> Exploration {
    let start = Instant::now();
    let mut found = search(Arc::clone(&model), scope, limits);
    if let Some(why) = found.time_dependence.take() {
        // A time-free search that turned out to depend on the time: again, with times.
        let mut timed = scope.clone();
        timed.time_shift = false;
        found = search(model, &timed, limits);
        found.time_dependence = Some(why);
        found.elapsed = start.elapsed();
    }
    found
}

/// One search of [`explore`]: a time-free one stops at the first sign that it depends on
/// the time, with [`Exploration::time_dependence`] set and no verdict to trust.
fn search<M: Explorable>(model: Arc<M>, scope: &Scope, limits: &SearchLimits) -> Exploration {
    let start = Instant::now();
    let guard = Arc::new(Guard::new(limits.max_states, limits.max_memory_bytes));
    let bridge = match Bridge::new(model, scope, Arc::clone(&guard)) {
        Ok(b) => b.reducing(limits.reduction),
        Err(why) => {
            return Exploration {
                verdict: Verdict::Unknown(why),
                unique_states: 0,
                total_states: 0,
                reduced: false,
                slept: 0,
                max_depth: 0,
                elapsed: start.elapsed(),
                horizon_cut: 0,
                steps_cut: 0,
                interchangeable: Vec::new(),
                workloads: 0,
                bound: None,
                time_free: false,
                time_dependence: None,
                counterexample: None,
                config: scope.run_config(),
                seed: scope.seed,
            }
        }
    };
    let mut config = bridge.cfg.clone();
    let workloads = bridge.workloads();
    let interchangeable = bridge.interchangeable();
    // Depth-first: memory is the visited set and the paths being expanded, where a
    // breadth-first search holds a whole frontier of states (hundreds of times more on the
    // scopes of many workloads). The shortest counterexample is searched afterwards,
    // breadth-first within the violating path's workload.
    let progress = |c: dfs::Counts| {
        let secs = start.elapsed().as_secs_f64();
        eprint!(
            "\r\x1b[K{} states, {} unique · depth {} · {:.0} states/s · {} MiB · {:.0} s",
            c.states,
            c.unique,
            c.max_depth,
            c.states as f64 / secs.max(1e-9),
            crate::memory::resident_bytes().unwrap_or(0) >> 20,
            secs
        );
    };
    let progress: Option<&(dyn Fn(dfs::Counts) + Sync)> = limits.progress.then_some(&progress);
    let searched = dfs::search(&bridge, limits.threads.max(1), progress);
    if limits.progress && start.elapsed() >= Duration::from_secs(1) {
        eprint!("\r\x1b[K");
    }
    let time_free = bridge.time_free();
    let time_dependence = guard.time_dependence();
    let failure = [PROP_CHECK, PROP_PROGRESS]
        .iter()
        .filter_map(|p| searched.discovery(p))
        .min_by_key(|path| path.len());
    let bound = guard.hit();
    let (verdict, counterexample) = match failure {
        // Not a verdict of this scope: `explore` searches again, with times.
        _ if time_dependence.is_some() => (
            Verdict::Unknown("the time-free search stopped: it depends on the time".into()),
            None,
        ),
        Some(path) => {
            let found = dfs::path(&bridge, path);
            let guard = Arc::new(Guard::new(limits.max_states, limits.max_memory_bytes));
            let within = bridge.restricted(&bridge.chosen(&found), guard);
            let (verdict, workload, choices) =
                shortest(within).unwrap_or_else(|| conclude(&bridge, &found));
            config.workload = workload;
            (verdict, Some(choices))
        }
        None => match &bound {
            Some(why) => (Verdict::Unknown(why.clone()), None),
            None if guard.horizon_cut() + guard.steps_cut() > 0 => (
                Verdict::Unknown(cut_reason(guard.horizon_cut(), guard.steps_cut(), scope)),
                None,
            ),
            None if searched.discovery(PROP_COMPLETES).is_none() => (
                Verdict::Unknown(format!(
                    "vacuous scope: no path completes every operation within the horizon of {}",
                    sim::ms(scope.horizon_ms)
                )),
                None,
            ),
            None => (Verdict::Ok, None),
        },
    };
    Exploration {
        verdict,
        unique_states: searched.counts.unique,
        total_states: searched.counts.states,
        reduced: dfs::Successors::reduces(&bridge),
        slept: searched.counts.slept,
        max_depth: searched.counts.max_depth,
        // The search and, after a violation, the search for its shortest path.
        elapsed: start.elapsed(),
        horizon_cut: guard.horizon_cut(),
        steps_cut: guard.steps_cut(),
        interchangeable,
        workloads,
        bound,
        time_free,
        time_dependence,
        counterexample,
        config,
        seed: scope.seed,
    }
}

/// What a failing path says: its verdict, its workload and its replay choices.
type Concluded = (Verdict, Option<Vec<Vec<Vec<u64>>>>, Vec<u32>);

fn conclude<M: Explorable>(bridge: &Bridge<M>, steps: &[bridge::PathStep<M>]) -> Concluded {
    let last = &steps.last().expect("a path has a state").0;
    (
        bridge.verdict(last),
        bridge.workload(steps),
        bridge.choices(steps),
    )
}

/// The shortest failing path of `bridge` (restricted to the workload a failing path
/// runs), concluded: a breadth-first search on one thread. `None` when it ends without a
/// failure (a bound hit): the caller keeps the path it has.
fn shortest<M: Explorable>(bridge: Bridge<M>) -> Option<Concluded> {
    let checker = bridge
        .checker()
        .threads(1)
        .finish_when(HasDiscoveries::AnyFailures)
        .spawn_bfs()
        .join();
    let mut discoveries = checker.discoveries();
    let path = [PROP_CHECK, PROP_PROGRESS]
        .iter()
        .filter_map(|p| discoveries.remove(p))
        .min_by_key(|path| path.clone().into_actions().len())?;
    Some(conclude(checker.model(), &path.into_vec()))
}

/// Why a search whose paths a bound of the scope cut is not exhaustive: each bound, how
/// many paths it cut, and the flag that raises it.
fn cut_reason(horizon: usize, steps: usize, scope: &Scope) -> String {
    let mut parts = Vec::new();
    if horizon > 0 {
        parts.push(format!(
            "{horizon} paths cut by the time horizon of {} (raise it with --horizon)",
            sim::ms(scope.horizon_ms)
        ));
    }
    if steps > 0 {
        parts.push(format!(
            "{steps} paths cut by the step bound of {} steps per operation (raise it with \
             --max-op-steps)",
            scope.max_op_steps
        ));
    }
    format!(
        "{}: those paths were not judged, the search is not exhaustive",
        parts.join(" and ")
    )
}

/// A model whose Explorer can be served without knowing its types: every [`Explorable`].
pub trait Servable: Send + Sync {
    /// Serves stateright's Explorer for the model in `scope` on `addr` ([`serve`]); blocks
    /// for as long as the server runs.
    fn serve_explorer(self: Arc<Self>, scope: &Scope, addr: &str) -> Result<(), String>;

    /// The model's state space in `scope`, to browse ([`browse::browser`]).
    fn browser(self: Arc<Self>, scope: &Scope) -> Result<Arc<dyn browse::Browse>, String>;
}

impl<M: Explorable> Servable for M {
    fn serve_explorer(self: Arc<Self>, scope: &Scope, addr: &str) -> Result<(), String> {
        serve(self, scope, addr)
    }

    fn browser(self: Arc<Self>, scope: &Scope) -> Result<Arc<dyn browse::Browse>, String> {
        browse::browser(self, scope)
    }
}

/// Serves stateright's Explorer for `model` in `scope` on `addr` (e.g. `127.0.0.1:3000`);
/// blocks for as long as the server runs.
pub fn serve<M: Explorable>(model: Arc<M>, scope: &Scope, addr: &str) -> Result<(), String> {
    // tiny_http panics on a bad address; find out first, with a message.
    drop(std::net::TcpListener::bind(addr).map_err(|e| format!("cannot listen on {addr}: {e}"))?);
    let guard = Arc::new(Guard::new(usize::MAX, u64::MAX));
    // Every state at its own time: the Explorer shows them.
    let mut scope = scope.clone();
    scope.time_shift = false;
    let explorer = explorer::Explorer::new(Bridge::new(model, &scope, guard)?);
    let _checker = explorer.checker().serve(addr);
    Ok(())
}

/// A rough size of a scope, from a few random runs, before searching it.
#[derive(Clone, Debug, PartialEq)]
pub struct Estimate {
    /// About how many states the search may generate (a product of per-client step
    /// counts and fault placements: an order of magnitude, not a bound).
    pub states: f64,
    /// About how many bytes of memory the search needs per state.
    pub bytes_per_state: f64,
    /// Set when the estimate exceeds the state or memory bound.
    pub warning: Option<String>,
}

/// Estimates the size of `scope` from 16 random interleavings of its workload, and warns
/// when it looks too large for `limits` (and so for the machine).
pub fn estimate<M: Model>(model: &M, scope: &Scope, limits: &SearchLimits) -> Estimate {
    let cfg = scope.run_config();
    let n = cfg.clients.max(1);
    let mut rng = SimRng::derive(scope.seed, 0xe571_3a7e);
    let runs = 16;
    let mut per_client = vec![0u64; n];
    let mut length = 0u64;
    for _ in 0..runs {
        let choices: Vec<u32> = (0..4096).map(|_| rng.below(n as u64) as u32).collect();
        let out = sim::run(model, &cfg, scope.seed, Some(&choices));
        length += out.steps as u64;
        for &c in &out.choices {
            if (c as usize) < n {
                per_client[c as usize] += 1;
            }
        }
    }
    let mean_len = length as f64 / runs as f64;
    let interleavings: f64 = per_client
        .iter()
        .map(|&s| s as f64 / runs as f64 + 1.0)
        .product();
    let budget: u32 = scope.faults.iter().map(|(_, b)| *b).sum();
    let fault_factor = (1.0 + mean_len * (n as f64 + 1.0)).powi(budget as i32);
    let states = interleavings * fault_factor;
    // A visited state costs its hash-table entry; the frontier holds whole states.
    let bytes_per_state = 48.0 + 64.0 * n as f64 + 24.0 * (n * scope.config.ops) as f64;
    let memory = states * bytes_per_state;
    let warning = if states > limits.max_states as f64 || memory > limits.max_memory_bytes as f64 {
        Some(format!(
            "this scope looks too large for the machine: about {states:.1e} states (estimated \
             from {runs} random runs of ~{mean_len:.0} steps) and ~{} MiB, against bounds of \
             {} states and {} MiB; expect the search to stop with `unknown` (use fewer \
             clients, operations or faults)",
            (memory / (1u64 << 20) as f64).round(),
            limits.max_states,
            limits.max_memory_bytes >> 20
        ))
    } else {
        None
    };
    Estimate {
        states,
        bytes_per_state,
        warning,
    }
}
