//! The executor: one simulated world (servers, virtual time, clients) stepped by choices.

use super::client::{Clock, Request, SimClient};
use super::config::{SimConfig, EPOCH_MS};
use super::trace::{Delivery, Event, Fault, TraceStep};
use crate::command::{Command, Reply};
use crate::history::{History, Mark, Operation, Outcome};
use crate::kv::KvError;
use crate::model::Model;
use crate::rng::{mix64, SimRng};
use crate::scenario::{FaultKind, Strategy};
use crate::store::{Store, StoreConfig};
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll, Waker};

type OpFuture<'m, R> = Pin<Box<dyn Future<Output = Result<R, KvError>> + 'm>>;

/// Where a client is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Phase {
    /// Between operations (its next one not started).
    Idle,
    /// Parked on a KV command.
    Calling,
    /// Asleep until this true time.
    Sleeping(u64),
    /// All its operations done.
    Done,
    /// Crashed: never runs again.
    Crashed,
}

struct ClientRun<'m, M: Model> {
    handle: SimClient,
    phase: Phase,
    pending: Option<Command>,
    paused_until: u64,
    op_index: usize,
    steps_in_op: u32,
    future: Option<OpFuture<'m, M::Ret>>,
    hist_index: usize,
    workload: SimRng,
}

struct Server {
    store: Store,
    down_until: Option<u64>,
}

/// A fault the world can take at this step.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum FaultAction {
    Evict(usize, Vec<u8>),
    AdvanceTime,
    ClockJump(usize, i64),
    Restart(usize),
    Crash(usize),
    LoseRequest(usize),
    LoseReply(usize),
    Pause(usize, u64),
    ShardDown(usize),
}

impl FaultAction {
    /// The kind of fault this is.
    pub(crate) fn kind(&self) -> FaultKind {
        match self {
            FaultAction::Evict(..) => FaultKind::Evict,
            FaultAction::AdvanceTime => FaultKind::Expire,
            FaultAction::ClockJump(..) => FaultKind::Skew,
            FaultAction::Restart(_) => FaultKind::Restart,
            FaultAction::Crash(_) => FaultKind::Crash,
            FaultAction::LoseRequest(_) | FaultAction::LoseReply(_) => FaultKind::Lose,
            FaultAction::Pause(..) => FaultKind::Pause,
            FaultAction::ShardDown(_) => FaultKind::ShardFail,
        }
    }
}

/// What the fault enumeration needs to know about one client.
#[derive(Clone, Copy, Debug)]
pub(crate) struct FaultClient {
    /// Inside an operation (parked on a call or asleep).
    pub in_op: bool,
    /// Parked on a KV command.
    pub calling: bool,
    /// Done or crashed.
    pub finished: bool,
    /// Crashed.
    pub crashed: bool,
    /// Paused until this true time.
    pub paused_until: u64,
}

/// The faults possible now, in the world's order (the order replay choices index), for
/// the fault kinds `kinds`: the simulator's and the stateright bridge's one enumeration.
pub(crate) fn enumerate_faults<'s>(
    kinds: &[FaultKind],
    cfg: &SimConfig,
    now: u64,
    servers: impl Iterator<Item = (bool, &'s Store)> + Clone,
    clients: impl Iterator<Item = FaultClient> + Clone,
    out: &mut Vec<FaultAction>,
) {
    for &kind in kinds {
        match kind {
            FaultKind::Evict => {
                for (s, (down, store)) in servers.clone().enumerate() {
                    if down {
                        continue;
                    }
                    for key in store.live_keys(now) {
                        out.push(FaultAction::Evict(s, key));
                    }
                }
            }
            FaultKind::Expire => out.push(FaultAction::AdvanceTime),
            FaultKind::Skew => {
                for (c, cl) in clients.clone().enumerate() {
                    if !cl.finished {
                        let j = cfg.clock_jump_ms as i64;
                        out.push(FaultAction::ClockJump(c, j));
                        out.push(FaultAction::ClockJump(c, -j));
                    }
                }
            }
            FaultKind::Restart => {
                for (s, (down, _)) in servers.clone().enumerate() {
                    if !down {
                        out.push(FaultAction::Restart(s));
                    }
                }
            }
            FaultKind::Crash => {
                for (c, cl) in clients.clone().enumerate() {
                    if cl.in_op && !cl.crashed {
                        out.push(FaultAction::Crash(c));
                    }
                }
            }
            FaultKind::Lose => {
                for (c, cl) in clients.clone().enumerate() {
                    if cl.calling && cl.paused_until <= now {
                        out.push(FaultAction::LoseRequest(c));
                        out.push(FaultAction::LoseReply(c));
                    }
                }
            }
            FaultKind::Pause => {
                for (c, cl) in clients.clone().enumerate() {
                    if cl.in_op && !cl.crashed && cl.paused_until <= now {
                        for &ms in &cfg.pause_ms {
                            out.push(FaultAction::Pause(c, ms));
                        }
                    }
                }
            }
            FaultKind::ShardFail => {
                let n = servers.clone().count();
                if n > 1 && servers.clone().all(|(down, _)| !down) {
                    for s in 0..n {
                        out.push(FaultAction::ShardDown(s));
                    }
                }
            }
            FaultKind::Lru => {}
        }
    }
}

/// The seed of the random stream of client `c`'s operation number `index` in a run
/// seeded `seed`.
pub(crate) fn op_rng_seed(seed: u64, c: usize, index: usize) -> u64 {
    mix64(seed ^ mix64(((c as u64) << 32) | index as u64 | 1 << 63))
}

/// The world right after the model's setup: each server's store and down time, true
/// time, and each client's clock (drawn from the seed, as [`World::new`] draws them).
pub(crate) struct AfterSetup {
    /// Each server's store.
    pub stores: Vec<Store>,
    /// True time after setup.
    pub now: u64,
    /// Each client's clock.
    pub clocks: Vec<Clock>,
    /// Why setup failed, if it did.
    pub failed: Option<String>,
}

/// Runs `model`'s setup exactly as a run seeded `seed` does.
pub(crate) fn after_setup<M: Model>(model: &M, cfg: &SimConfig, seed: u64) -> AfterSetup {
    let mut quiet = cfg.clone();
    quiet.record_trace = false;
    let mut world = World::new(model, &quiet, seed);
    let failed = world.setup().err();
    for shard in 0..world.servers.len() {
        world.servers[shard].store.take_evicted();
    }
    AfterSetup {
        clocks: world
            .clients
            .iter()
            .map(|c| c.handle.slot.borrow().clock)
            .collect(),
        now: world.now,
        stores: world.servers.into_iter().map(|s| s.store).collect(),
        failed,
    }
}

/// How choices are made in this run.
pub(crate) enum Chooser {
    /// Random walk (also swarm, after its draw of faults and rate).
    Random { rng: SimRng },
    /// PCT: highest priority runnable client; priorities drop at change points.
    Pct {
        rng: SimRng,
        priorities: Vec<u64>,
        change_points: Vec<u32>,
        next_low: u64,
    },
    /// Replay of recorded choices; when they run out, runnable clients in turn.
    Replay {
        choices: Vec<u32>,
        pos: usize,
        next: usize,
    },
}

/// Why a run stopped early.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Stop {
    /// A client exceeded the step bound of one operation.
    Livelock {
        /// The client.
        client: usize,
        /// Its operation, rendered.
        op: String,
        /// Steps it took.
        steps: u32,
    },
    /// The run exceeded its total step bound.
    StepBound {
        /// Steps taken.
        steps: u32,
    },
    /// A client's code awaited something other than its KV handle.
    Foreign {
        /// The client.
        client: usize,
    },
}

/// From when on no fault acts in a run: the point after which every operation must
/// complete its purpose ([`crate::model::Model::made_progress`]; the `progress` property).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct Quiet {
    /// The history's event position of the last fault (0: none): operations invoked after
    /// it (`call > seq`) started once every fault had happened.
    pub seq: u64,
    /// Virtual time (ms since the epoch, as in the history) at which the last fault's
    /// effect ends (a pause's end, a downed server's return; else when it happened).
    pub ms: u64,
}

/// Everything one run produced.
pub struct RunOutput<M: Model> {
    /// The history.
    pub history: History<M::Op, M::Ret>,
    /// The trace (empty unless `record_trace`).
    pub trace: Vec<TraceStep>,
    /// The choices made (normalized: replaying them gives the same run).
    pub choices: Vec<u32>,
    /// Why it stopped early, if it did.
    pub stop: Option<Stop>,
    /// Steps taken.
    pub steps: u32,
    /// KV commands delivered (applied or lost).
    pub kv_calls: u64,
    /// The fault kinds that were on (swarm draws a subset).
    pub faults_on: Vec<FaultKind>,
    /// The fault kinds the run injected (in the CLI's order; `lru` when the store evicted
    /// to make room).
    pub faults_used: Vec<FaultKind>,
    /// From when on no fault acted; `None` if the driver cannot tell (then `progress`
    /// after faults is not judged).
    pub quiet: Option<Quiet>,
}

pub(crate) struct World<'m, 'c, M: Model> {
    model: &'m M,
    cfg: &'c SimConfig,
    seed: u64,
    servers: Vec<Server>,
    now: u64,
    clients: Vec<ClientRun<'m, M>>,
    history: History<M::Op, M::Ret>,
    seq: u64,
    trace: Vec<TraceStep>,
    faults_used: u32,
    faults_on: Vec<FaultKind>,
    fault_probability: f64,
    steps: u32,
    kv_calls: u64,
    choices: Vec<u32>,
    stop: Option<Stop>,
    runnable: Vec<usize>,
    /// Per client: since when (true time) it has been runnable without being stepped.
    ready_since: Vec<Option<u64>>,
    /// The fault kinds injected so far.
    kinds_used: Vec<FaultKind>,
    /// From when on no fault acted so far.
    quiet: Quiet,
}

impl<'m, 'c, M: Model> World<'m, 'c, M> {
    pub(crate) fn new(model: &'m M, cfg: &'c SimConfig, seed: u64) -> Self {
        let store_config = StoreConfig {
            memory_limit: cfg.memory_limit,
            persistent: cfg.persistent,
            ..StoreConfig::default()
        };
        let servers = (0..cfg.shards.max(1))
            .map(|_| Server {
                store: Store::new(store_config.clone(), EPOCH_MS),
                down_until: None,
            })
            .collect();
        let mut setup_rng = SimRng::derive(seed, u64::MAX);
        let skew = cfg.faults.has(FaultKind::Skew);
        let clients = (0..cfg.clients)
            .map(|c| {
                let clock = if skew {
                    let o = cfg.max_offset_ms;
                    let d = cfg.max_drift_ppm;
                    Clock {
                        offset_ms: setup_rng.range_inclusive(0, 2 * o) as i64 - o as i64,
                        drift_ppm: setup_rng.range_inclusive(0, 2 * d) as i64 - d as i64,
                    }
                } else {
                    Clock::default()
                };
                ClientRun {
                    handle: SimClient::new(0, EPOCH_MS, clock),
                    phase: if cfg.next_op(c, 0).is_none() {
                        Phase::Done
                    } else {
                        Phase::Idle
                    },
                    pending: None,
                    paused_until: 0,
                    op_index: 0,
                    steps_in_op: 0,
                    future: None,
                    hist_index: 0,
                    workload: SimRng::derive(seed, 1 + c as u64),
                }
            })
            .collect();
        World {
            model,
            cfg,
            seed,
            servers,
            now: EPOCH_MS,
            clients,
            history: History::new(),
            seq: 0,
            trace: Vec::new(),
            faults_used: 0,
            faults_on: cfg.faults.kinds().to_vec(),
            fault_probability: cfg.fault_probability,
            steps: 0,
            kv_calls: 0,
            choices: Vec::new(),
            stop: None,
            runnable: Vec::new(),
            ready_since: vec![None; cfg.clients],
            kinds_used: Vec::new(),
            quiet: Quiet::default(),
        }
    }

    /// Builds the chooser for a fresh run of `strategy` (swarm also draws its faults here).
    pub(crate) fn chooser_for(&mut self, strategy: Strategy) -> Chooser {
        let mut rng = SimRng::derive(self.seed, 0);
        match strategy {
            Strategy::Random => Chooser::Random { rng },
            Strategy::Swarm => {
                let all = self.cfg.faults.kinds().to_vec();
                if !all.is_empty() {
                    let mut on: Vec<FaultKind> =
                        all.iter().copied().filter(|_| rng.chance(0.5)).collect();
                    if on.is_empty() {
                        on.push(all[rng.index(all.len())]);
                    }
                    self.faults_on = on;
                }
                const RATES: [f64; 4] = [0.01, 0.03, 0.1, 0.25];
                self.fault_probability = RATES[rng.index(RATES.len())];
                Chooser::Random { rng }
            }
            Strategy::Pct { depth } => {
                let n = self.cfg.clients as u64;
                let d = depth.max(1) as u64;
                // Distinct initial priorities d..d+n in random order.
                let mut priorities: Vec<u64> = (0..n).map(|i| d + i).collect();
                for i in (1..priorities.len()).rev() {
                    let j = rng.index(i + 1);
                    priorities.swap(i, j);
                }
                let k = (self.cfg.clients * self.cfg.ops * 8).max(8) as u64;
                let mut change_points: Vec<u32> =
                    (1..d).map(|_| rng.range_inclusive(1, k) as u32).collect();
                change_points.sort_unstable();
                Chooser::Pct {
                    rng,
                    priorities,
                    change_points,
                    next_low: d - 1,
                }
            }
        }
    }

    fn log(&mut self, client: Option<usize>, event: Event) {
        if self.cfg.record_trace {
            self.trace.push(TraceStep {
                time_ms: self.now - EPOCH_MS,
                client,
                event,
            });
        }
    }

    /// Runs the model's setup to completion against server state, outside of any
    /// interleaving (no faults, no other clients).
    pub(crate) fn setup(&mut self) -> Result<(), String> {
        let handle = SimClient::new(mix64(self.seed ^ 0x5e7u64), EPOCH_MS, Clock::default());
        let model = self.model;
        let h = handle.clone();
        let mut fut: OpFuture<'m, ()> = Box::pin(async move { model.setup(&h).await });
        let mut cx = Context::from_waker(Waker::noop());
        loop {
            handle.slot.borrow_mut().true_ms = self.now;
            match fut.as_mut().poll(&mut cx) {
                Poll::Ready(r) => {
                    return r.map_err(|e| format!("setup failed: {e}"));
                }
                Poll::Pending => {
                    let req = handle.slot.borrow_mut().request.take();
                    match req {
                        Some(Request::Command(cmd)) => {
                            let shard = self.shard_of(&cmd);
                            let reply = self.servers[shard].store.apply(self.now, &cmd);
                            self.drain_lru(shard);
                            self.log(
                                None,
                                Event::Call {
                                    shard,
                                    command: cmd,
                                    delivery: Delivery::Replied(reply.clone()),
                                },
                            );
                            handle.slot.borrow_mut().reply = Some(Ok(reply));
                        }
                        Some(Request::Sleep(ms)) => self.now += ms,
                        None => {
                            return Err("setup awaited something other than its kv handle".into())
                        }
                    }
                }
            }
        }
    }

    fn shard_of(&self, cmd: &Command) -> usize {
        let n = self.servers.len();
        if n == 1 {
            return 0;
        }
        match cmd.first_key() {
            Some(key) => {
                let mut h: u64 = 0xcbf2_9ce4_8422_2325;
                for &b in key {
                    h ^= b as u64;
                    h = h.wrapping_mul(0x0000_0100_0000_01b3);
                }
                (mix64(h) % n as u64) as usize
            }
            None => 0,
        }
    }

    fn drain_lru(&mut self, shard: usize) {
        let evicted = self.servers[shard].store.take_evicted();
        if !evicted.is_empty() && !self.kinds_used.contains(&FaultKind::Lru) {
            self.kinds_used.push(FaultKind::Lru);
        }
        for key in evicted {
            self.log(None, Event::Fault(Fault::LruEvict { shard, key }));
        }
    }

    fn is_runnable(&self, c: usize) -> bool {
        let cl = &self.clients[c];
        if cl.paused_until > self.now {
            return false;
        }
        match cl.phase {
            Phase::Idle | Phase::Calling => true,
            Phase::Sleeping(until) => until <= self.now,
            Phase::Done | Phase::Crashed => false,
        }
    }

    fn all_finished(&self) -> bool {
        self.clients
            .iter()
            .all(|c| matches!(c.phase, Phase::Done | Phase::Crashed))
    }

    /// The earliest true time at which something becomes runnable.
    fn next_wake(&self) -> Option<u64> {
        let mut best: Option<u64> = None;
        let mut consider = |t: u64| {
            if t > self.now {
                best = Some(best.map_or(t, |b| b.min(t)));
            }
        };
        for c in &self.clients {
            if matches!(c.phase, Phase::Done | Phase::Crashed) {
                continue;
            }
            let ready = match c.phase {
                Phase::Sleeping(until) => until,
                _ => self.now,
            };
            consider(ready.max(c.paused_until));
        }
        best
    }

    fn fault_actions(&self, out: &mut Vec<FaultAction>) {
        out.clear();
        if self.faults_used >= self.cfg.fault_budget {
            return;
        }
        enumerate_faults(
            &self.faults_on,
            self.cfg,
            self.now,
            self.servers
                .iter()
                .map(|s| (s.down_until.is_some(), &s.store)),
            self.clients.iter().map(|cl| FaultClient {
                in_op: cl.future.is_some(),
                calling: cl.phase == Phase::Calling,
                finished: matches!(cl.phase, Phase::Done | Phase::Crashed),
                crashed: cl.phase == Phase::Crashed,
                paused_until: cl.paused_until,
            }),
            out,
        );
    }

    /// Runs the world to the end with `chooser`.
    pub(crate) fn run(mut self, mut chooser: Chooser) -> RunOutput<M> {
        if let Err(why) = self.setup() {
            self.stop = Some(Stop::Foreign { client: usize::MAX });
            self.log(None, Event::Mark { label: why });
        }
        let mut faults = Vec::new();
        let n = self.clients.len();
        while self.stop.is_none() {
            self.revive_servers();
            self.runnable.clear();
            for c in 0..n {
                if self.is_runnable(c) {
                    self.runnable.push(c);
                    self.ready_since[c].get_or_insert(self.now);
                } else {
                    self.ready_since[c] = None;
                }
            }
            if self.runnable.is_empty() {
                if self.all_finished() {
                    break;
                }
                match self.next_wake() {
                    Some(t) => {
                        self.now = t;
                        continue;
                    }
                    None => break,
                }
            }
            if self.steps >= self.cfg.max_steps {
                self.stop = Some(Stop::StepBound { steps: self.steps });
                break;
            }
            self.steps += 1;
            let choice = self.choose(&mut chooser, &mut faults);
            self.choices.push(choice);
            if (choice as usize) < n {
                self.ready_since[choice as usize] = None;
                self.step_client(choice as usize, None);
            } else {
                let action = faults[choice as usize - n].clone();
                self.apply_fault(action);
            }
        }
        // Operations still in flight never completed: their outcome is unknown.
        let mut faults_used = self.kinds_used;
        faults_used.sort();
        RunOutput {
            faults_used,
            history: self.history,
            trace: self.trace,
            choices: self.choices,
            stop: self.stop,
            steps: self.steps,
            kv_calls: self.kv_calls,
            faults_on: self.faults_on,
            quiet: Some(self.quiet),
        }
    }

    /// The runnable client that has waited longest, if it has waited longer than the
    /// fairness bound ([`SimConfig::starve_ms`]).
    fn starved(&self) -> Option<usize> {
        self.runnable
            .iter()
            .copied()
            .filter_map(|c| self.ready_since[c].map(|t| (t, c)))
            .filter(|&(t, _)| self.now - t > self.cfg.starve_ms)
            .min()
            .map(|(_, c)| c)
    }

    fn choose(&mut self, chooser: &mut Chooser, faults: &mut Vec<FaultAction>) -> u32 {
        let n = self.clients.len() as u32;
        // Fairness, whatever the strategy: a client that has been runnable for longer than
        // the bound is stepped now. A longer stall is a pause, and only the `pause` fault
        // injects one (so reports show it). A replay consumes the recorded choice, which a
        // recording made under the same rule holds this client.
        if let Some(c) = self.starved() {
            if let Chooser::Replay { pos, choices, .. } = chooser {
                if *pos < choices.len() {
                    *pos += 1;
                }
            }
            return c as u32;
        }
        match chooser {
            Chooser::Replay { choices, pos, next } => {
                // Past the recorded choices, or where a recorded choice no longer fits,
                // clients take turns (round robin): a fair scheduler, so that a shrunk run
                // never starves a client (which would look like a pause to the others).
                let fair = |runnable: &[usize], next: &mut usize| {
                    let pick = runnable
                        .iter()
                        .copied()
                        .find(|&c| c >= *next)
                        .unwrap_or(runnable[0]);
                    *next = pick + 1;
                    pick as u32
                };
                let Some(&c) = choices.get(*pos) else {
                    return fair(&self.runnable, next);
                };
                *pos += 1;
                if c < n {
                    if self.runnable.contains(&(c as usize)) {
                        return c;
                    }
                    return fair(&self.runnable, next);
                }
                self.fault_actions(faults);
                if faults.is_empty() {
                    return fair(&self.runnable, next);
                }
                n + (c - n) % faults.len() as u32
            }
            Chooser::Random { rng } => {
                if let Some(f) = self.pick_fault(rng, faults) {
                    return n + f;
                }
                self.runnable[rng.index(self.runnable.len())] as u32
            }
            Chooser::Pct {
                rng,
                priorities,
                change_points,
                next_low,
            } => {
                if let Some(f) = self.pick_fault(rng, faults) {
                    return n + f;
                }
                let best = *self
                    .runnable
                    .iter()
                    .max_by_key(|&&c| priorities[c])
                    .expect("runnable is not empty");
                if change_points.first() == Some(&self.steps) {
                    change_points.remove(0);
                    priorities[best] = *next_low;
                    *next_low = next_low.saturating_sub(1);
                    return *self
                        .runnable
                        .iter()
                        .max_by_key(|&&c| priorities[c])
                        .expect("runnable is not empty") as u32;
                }
                best as u32
            }
        }
    }

    fn pick_fault(&self, rng: &mut SimRng, faults: &mut Vec<FaultAction>) -> Option<u32> {
        if self.faults_on.is_empty()
            || self.faults_used >= self.cfg.fault_budget
            || !rng.chance(self.fault_probability)
        {
            return None;
        }
        self.fault_actions(faults);
        if faults.is_empty() {
            return None;
        }
        // Pick a kind uniformly among those possible now, then an action of that kind.
        let mut kinds: Vec<FaultKind> = faults.iter().map(FaultAction::kind).collect();
        kinds.dedup();
        let kind = kinds[rng.index(kinds.len())];
        let of_kind: Vec<usize> = (0..faults.len())
            .filter(|&i| faults[i].kind() == kind)
            .collect();
        Some(of_kind[rng.index(of_kind.len())] as u32)
    }

    fn revive_servers(&mut self) {
        for s in 0..self.servers.len() {
            if let Some(t) = self.servers[s].down_until {
                if t <= self.now {
                    self.servers[s].down_until = None;
                    self.log(None, Event::Fault(Fault::ShardUp { shard: s }));
                }
            }
        }
    }

    fn apply_fault(&mut self, action: FaultAction) {
        self.faults_used += 1;
        let lasts_ms = match action {
            FaultAction::Pause(_, ms) => ms,
            FaultAction::ShardDown(_) => self.cfg.shard_down_ms,
            _ => 0,
        };
        if !self.kinds_used.contains(&action.kind()) {
            self.kinds_used.push(action.kind());
        }
        match action {
            FaultAction::Evict(shard, key) => {
                self.servers[shard].store.evict(&key);
                self.log(None, Event::Fault(Fault::Evict { shard, key }));
            }
            FaultAction::AdvanceTime => {
                let next = self
                    .servers
                    .iter()
                    .filter_map(|s| s.store.next_expiry_ms(self.now))
                    .min();
                let to = next.unwrap_or(self.now + 1000).max(self.now + 1);
                let by_ms = to - self.now;
                self.now = to;
                self.log(None, Event::Fault(Fault::AdvanceTime { by_ms }));
            }
            FaultAction::ClockJump(c, by_ms) => {
                self.clients[c].handle.slot.borrow_mut().clock.offset_ms += by_ms;
                self.log(Some(c), Event::Fault(Fault::ClockJump { client: c, by_ms }));
            }
            FaultAction::Restart(shard) => {
                self.servers[shard].store.restart(self.now);
                let persistent = self.cfg.persistent;
                self.log(None, Event::Fault(Fault::Restart { shard, persistent }));
            }
            FaultAction::Crash(c) => {
                // The crashed operation's history entry gets a `crash` mark: a critical
                // section it was in ends here (see `check::mutex`).
                self.seq += 1;
                let hi = self.clients[c].hist_index;
                self.history.ops[hi].marks.push(Mark {
                    label: "crash".to_string(),
                    seq: self.seq,
                    time_ms: self.now - EPOCH_MS,
                });
                let cl = &mut self.clients[c];
                cl.phase = Phase::Crashed;
                cl.future = None;
                cl.pending = None;
                self.log(Some(c), Event::Fault(Fault::Crash { client: c }));
            }
            FaultAction::LoseRequest(c) | FaultAction::LoseReply(c) => {
                let lose_reply = matches!(action, FaultAction::LoseReply(_));
                self.step_client(c, Some(lose_reply));
            }
            FaultAction::Pause(c, ms) => {
                self.clients[c].paused_until = self.now + ms;
                self.log(Some(c), Event::Fault(Fault::Pause { client: c, ms }));
            }
            FaultAction::ShardDown(shard) => {
                let ms = self.cfg.shard_down_ms;
                self.servers[shard].down_until = Some(self.now + ms);
                // It comes back empty, whatever its mode: the machine failed.
                let cfg = self.servers[shard].store.config().clone();
                self.servers[shard].store = Store::new(cfg, self.now);
                self.log(None, Event::Fault(Fault::ShardDown { shard, ms }));
            }
        }
        self.quiet.seq = self.seq;
        self.quiet.ms = self.quiet.ms.max(self.now - EPOCH_MS + lasts_ms);
    }

    /// Takes one step of client `c`. `lose`: `Some(false)` loses the request,
    /// `Some(true)` the reply.
    fn step_client(&mut self, c: usize, lose: Option<bool>) {
        match self.clients[c].phase {
            Phase::Idle => self.start_op(c),
            Phase::Calling => {
                let cmd = self.clients[c]
                    .pending
                    .take()
                    .expect("a calling client has a pending command");
                let shard = self.shard_of(&cmd);
                self.kv_calls += 1;
                let (reply, delivery) = if self.servers[shard].down_until.is_some() {
                    let err = KvError::ServerGone {
                        server: format!("s{shard}"),
                        command: cmd.to_string(),
                        detail: "connection refused".into(),
                    };
                    (Err(err), Delivery::ServerDown)
                } else if lose == Some(false) {
                    let err = KvError::Timeout {
                        command: cmd.to_string(),
                    };
                    (Err(err), Delivery::RequestLost)
                } else {
                    let reply = self.servers[shard].store.apply(self.now, &cmd);
                    self.drain_lru(shard);
                    if lose == Some(true) {
                        let err = KvError::Timeout {
                            command: cmd.to_string(),
                        };
                        (Err(err), Delivery::ReplyLost(reply))
                    } else if self.cfg.record_trace {
                        (Ok(reply.clone()), Delivery::Replied(reply))
                    } else {
                        (Ok(reply), Delivery::Replied(Reply::Ok))
                    }
                };
                if self.cfg.record_trace {
                    self.log(
                        Some(c),
                        Event::Call {
                            shard,
                            command: cmd,
                            delivery,
                        },
                    );
                }
                self.now += self.cfg.step_ms;
                self.clients[c].handle.slot.borrow_mut().reply = Some(reply);
                self.poll(c);
            }
            Phase::Sleeping(_) => self.poll(c),
            Phase::Done | Phase::Crashed => unreachable!("only runnable clients step"),
        }
    }

    fn start_op(&mut self, c: usize) {
        let model = self.model;
        let from = self.clients[c].op_index;
        let index = self
            .cfg
            .next_op(c, from)
            .expect("an idle client has an operation left");
        // Workload operations this run leaves out are still drawn, so that every other
        // operation is the same as in the full run.
        for skipped in from..index {
            let _ = model.op(c, skipped, &mut self.clients[c].workload);
        }
        self.clients[c].op_index = index;
        let op = match self
            .cfg
            .workload
            .as_ref()
            .and_then(|w| w.get(c)?.get(index))
        {
            Some(values) => {
                let mut scripted =
                    SimRng::scripted(values.clone(), op_rng_seed(self.seed, c, index));
                model.op(c, index, &mut scripted)
            }
            None => model.op(c, index, &mut self.clients[c].workload),
        };
        self.seq += 1;
        let hist_index = self.history.ops.len();
        self.history.ops.push(Operation {
            client: c,
            op: op.clone(),
            call: self.seq,
            ret: None,
            call_ms: self.now - EPOCH_MS,
            ret_ms: None,
            outcome: Outcome::Unknown,
            marks: Vec::new(),
        });
        if self.cfg.record_trace {
            self.log(
                Some(c),
                Event::Invoke {
                    op: format!("{op:?}"),
                },
            );
        }
        let cl = &mut self.clients[c];
        cl.hist_index = hist_index;
        cl.steps_in_op = 0;
        {
            let mut slot = cl.handle.slot.borrow_mut();
            slot.rng_seed = op_rng_seed(self.seed, c, index);
            slot.rng = None;
        }
        let handle = cl.handle.clone();
        cl.future = Some(Box::pin(async move { model.run(&handle, c, &op).await }));
        self.poll(c);
    }

    fn poll(&mut self, c: usize) {
        let now = self.now;
        let cl = &mut self.clients[c];
        cl.steps_in_op += 1;
        cl.handle.slot.borrow_mut().true_ms = now;
        let fut = cl
            .future
            .as_mut()
            .expect("a stepping client has an operation");
        let mut cx = Context::from_waker(Waker::noop());
        let polled = fut.as_mut().poll(&mut cx);
        let marks: Vec<&'static str> = std::mem::take(&mut cl.handle.slot.borrow_mut().marks);
        for label in marks {
            self.seq += 1;
            let seq = self.seq;
            let hi = self.clients[c].hist_index;
            self.history.ops[hi].marks.push(Mark {
                label: label.to_string(),
                seq,
                time_ms: now - EPOCH_MS,
            });
            self.log(
                Some(c),
                Event::Mark {
                    label: label.to_string(),
                },
            );
        }
        match polled {
            Poll::Ready(result) => {
                self.seq += 1;
                let hi = self.clients[c].hist_index;
                let entry = &mut self.history.ops[hi];
                entry.ret = Some(self.seq);
                entry.ret_ms = Some(now - EPOCH_MS);
                entry.outcome = match result {
                    Ok(r) => Outcome::Ok(r),
                    Err(_) => Outcome::Unknown,
                };
                if self.cfg.record_trace {
                    let outcome = match &self.history.ops[hi].outcome {
                        Outcome::Ok(r) => format!("{r:?}"),
                        Outcome::Failed => "failed".to_string(),
                        Outcome::Unknown => "error (outcome unknown)".to_string(),
                    };
                    self.log(Some(c), Event::Return { outcome });
                }
                let cl = &mut self.clients[c];
                cl.future = None;
                cl.op_index += 1;
                cl.phase = if self.cfg.next_op(c, cl.op_index).is_none() {
                    Phase::Done
                } else {
                    Phase::Idle
                };
            }
            Poll::Pending => {
                let req = self.clients[c].handle.slot.borrow_mut().request.take();
                match req {
                    Some(Request::Command(cmd)) => {
                        let cl = &mut self.clients[c];
                        cl.pending = Some(cmd);
                        cl.phase = Phase::Calling;
                    }
                    Some(Request::Sleep(ms)) => {
                        let clock = self.clients[c].handle.slot.borrow().clock;
                        let until = now + clock.true_duration(ms).max(1);
                        self.clients[c].phase = Phase::Sleeping(until);
                        self.log(Some(c), Event::Sleep { ms });
                    }
                    None => {
                        self.stop = Some(Stop::Foreign { client: c });
                        return;
                    }
                }
                let (steps, hist_index) = (self.clients[c].steps_in_op, self.clients[c].hist_index);
                if steps > self.cfg.max_steps_per_op {
                    let op = format!("{:?}", self.history.ops[hist_index].op);
                    self.log(Some(c), Event::Livelock { client: c });
                    self.stop = Some(Stop::Livelock {
                        client: c,
                        op,
                        steps,
                    });
                }
            }
        }
    }
}
