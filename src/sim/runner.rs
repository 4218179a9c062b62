//! The simulator's driver of the [`World`]: live futures for the clients, the trace, the
//! step bound, and a strategy's choices ([`super::strategy`]).

use super::client::{ClientClock, Request, SimClient};
use super::config::{SimConfig, EPOCH_MS};
use super::neighbour::neighbour_classes;
use super::storelog::{StoreLog, StoreRecorder};
use super::strategy::{Chooser, Choosing};
use super::trace::{Delivery, Event, Fault, TraceStep};
use super::world::{
    handle_rng_seed, op_rng_seed, ClientState, Clients, Delivered, OpStart, PollAt, Polled,
    Polling, Quiet, Rules, Sink, Stop, World,
};
use crate::command::{Command, Reply};
use crate::history::History;
use crate::kv::KvError;
use crate::model::Model;
use crate::rng::{mix64, SimRng};
use crate::scenario::{FaultKind, Strategy};
use crate::store::geometry::SlabClass;
use std::collections::BTreeMap;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll, Waker};

type OpFuture<'m, R> = Pin<Box<dyn Future<Output = Result<R, KvError>> + 'm>>;

/// The future of one operation `op` of `model`'s client `c` through `handle`: the type a
/// run keeps its clients' operations in ([`Live::future`]).
async fn op_future<M: Model>(
    model: &M,
    handle: SimClient,
    c: usize,
    op: M::Op,
) -> Result<M::Ret, KvError> {
    model.run(&handle, c, &op).await
}

/// One client's live code.
struct Live<F> {
    /// Its handle; a command it sends waits in the handle's slot until the world takes
    /// it ([`Clients::command`]): not moved anywhere in between (the profile showed
    /// every copy of a command just built stalling on its loads).
    handle: SimClient,
    /// The current operation ([`op_future`]), in a place of its own for the whole run:
    /// each operation is made in it, not allocated anew.
    future: Pin<Box<Option<F>>>,
    workload: SimRng,
}

/// The clients of a run, as the world polls them: live futures. A client's record in the
/// world is the number of polls of its current operation.
struct LiveClients<'m, 'c, M: Model, F> {
    model: &'m M,
    cfg: &'c SimConfig,
    seed: u64,
    clients: Vec<Live<F>>,
    /// Makes an operation's future ([`op_future`]).
    make: fn(&'m M, SimClient, usize, M::Op) -> F,
}

impl<'m, 'c, M: Model, F> Clients<M::Op, M::Ret, u32> for LiveClients<'m, 'c, M, F>
where
    F: Future<Output = Result<M::Ret, KvError>>,
{
    fn start(&mut self, c: usize, at: OpStart, cl: &mut ClientState<u32>) -> M::Op {
        let OpStart { from, index, .. } = at;
        let model = self.model;
        let live = &mut self.clients[c];
        // Workload operations this run leaves out are still drawn, so that every other
        // operation is the same as in the full run.
        for skipped in from..index {
            let _ = model.op(c, skipped, &mut live.workload);
        }
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
            None => model.op(c, index, &mut live.workload),
        };
        cl.rec = 0;
        live.handle
            .start_op(handle_rng_seed(self.cfg, self.seed, c, index, at.ordinal));
        let future = (self.make)(model, live.handle.clone(), c, op.clone());
        live.future.set(Some(future));
        op
    }

    type Cmd = Command;

    #[inline]
    fn command(&mut self, c: usize, _: &ClientState<u32>) -> Option<Command> {
        let mut slot = self.clients[c].handle.slot.borrow_mut();
        match slot.request.take() {
            Some(Request::Command(cmd)) => Some(cmd),
            _ => None,
        }
    }

    #[inline]
    fn deliver(&mut self, c: usize, delivered: Delivered, cmd: Command) {
        self.clients[c]
            .handle
            .slot
            .borrow_mut()
            .deliver(delivered, cmd);
    }

    /// The reply into the handle's slot as it is (the command is done with).
    #[inline]
    fn deliver_reply(&mut self, c: usize, reply: Reply, _: Command) {
        self.clients[c].handle.slot.borrow_mut().put_reply(reply);
    }

    /// The timeout is in the handle's slot since [`Clients::deliver`]: nothing to do.
    fn time_out(&mut self, _: usize, _: &ClientState<u32>) {}

    #[inline]
    fn poll(&mut self, c: usize, cl: &mut ClientState<u32>, at: PollAt) -> Polling<M::Ret> {
        let PollAt { now, clock } = at;
        cl.rec += 1;
        let live = &mut self.clients[c];
        {
            let mut slot = live.handle.slot.borrow_mut();
            slot.true_ms = now;
            slot.clock = clock;
        }
        let fut = live
            .future
            .as_mut()
            .as_pin_mut()
            .expect("a stepping client has an operation");
        let mut cx = Context::from_waker(Waker::noop());
        let polled = fut.poll(&mut cx);
        let mut slot = live.handle.slot.borrow_mut();
        let marks = std::mem::take(&mut slot.marks);
        let polled = match polled {
            Poll::Ready(Err(e)) if e.is_refusal() => {
                Polled::Refused(e.refusal().unwrap_or_default())
            }
            Poll::Ready(result) => Polled::Ready(result.ok()),
            Poll::Pending => match slot.request {
                Some(Request::Command(_)) => Polled::Calling,
                Some(Request::Sleep(ms, wait)) => {
                    slot.request = None;
                    Polled::Sleep(ms, wait)
                }
                None => Polled::Foreign,
            },
        };
        (polled, marks)
    }

    fn steps(&self, cl: &ClientState<u32>) -> u32 {
        cl.rec
    }

    fn end(&mut self, c: usize, _: &mut ClientState<u32>, _: bool) {
        let live = &mut self.clients[c];
        live.future.set(None);
        live.handle.slot.borrow_mut().request = None;
    }
}

/// The simulator's sink: the trace (when recorded), and counters.
struct Log {
    record: bool,
    trace: Vec<TraceStep>,
    kv_calls: u64,
    /// The store evicted to make room.
    lru: bool,
}

impl Sink for Log {
    fn on(&self) -> bool {
        self.record
    }

    fn event(&mut self, now: u64, client: Option<usize>, event: Event) {
        self.trace.push(TraceStep {
            time_ms: now - EPOCH_MS,
            client,
            event,
        });
    }

    fn kv_call(&mut self) {
        self.kv_calls += 1;
    }

    fn evicted(&mut self, now: u64, shard: usize, items: Vec<crate::store::geometry::Eviction>) {
        self.lru = true;
        if self.record {
            for e in items {
                let fault = Fault::LruEvict {
                    shard,
                    key: e.key,
                    class: e.class.id,
                    chunk: e.class.chunk,
                };
                self.event(now, None, Event::Fault(fault));
            }
        }
    }
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
    /// How often each probe was hit ([`crate::kv::Kv::probe`]).
    pub probes: BTreeMap<&'static str, u64>,
    /// The stores' changes, step by step (only from [`super::run_with_store`]).
    pub store: Option<StoreLog>,
}

/// A run's world: each client's record is its number of polls, and the history is the
/// run's own ([`super::HistoryCell`]: no copy-on-write check at every event).
type RunWorld<M> = World<
    <M as Model>::Op,
    <M as Model>::Ret,
    u32,
    Box<History<<M as Model>::Op, <M as Model>::Ret>>,
>;

/// One run of the simulator: the world, its live clients, the trace and the choices.
pub(crate) struct Runner<'m, 'c, M: Model, F> {
    pub(super) cfg: &'c SimConfig,
    pub(super) seed: u64,
    pub(super) world: RunWorld<M>,
    live: LiveClients<'m, 'c, M, F>,
    log: Log,
    /// Each client's clock drift.
    drift: Vec<i64>,
    /// The noisy neighbour's slab classes ([`neighbour_classes`]), listed once per run.
    neighbour: Vec<(SlabClass, usize)>,
    pub(super) faults_on: Vec<FaultKind>,
    pub(super) fault_probability: f64,
    pub(super) steps: u32,
    choices: Vec<u32>,
    stop: Option<Stop>,
    pub(super) runnable: Vec<usize>,
    /// The runnable client that has waited longest, as the last settle found it
    /// ([`World::settle_oldest`]): the fairness check at every step without a pass over
    /// the clients.
    oldest: Option<(u64, usize)>,
    /// The stores' changes, when asked for ([`super::run_with_store`]).
    pub(super) store_log: Option<StoreRecorder>,
}

/// The rules of a run of `cfg` (a macro, so that the world can be borrowed mutably
/// beside them).
macro_rules! rules {
    ($cfg:expr, $drift:expr, $neighbour:expr) => {
        Rules {
            cfg: $cfg,
            kinds: $cfg.faults.kinds(),
            drift: &$drift,
            times: true,
            canonical: false,
            fair: true,
            neighbour: &$neighbour,
        }
    };
}

/// A fresh run of `model` under `cfg` from `seed` (its clients' operations made by
/// [`op_future`]).
pub(crate) fn runner<'m, 'c, M: Model>(
    model: &'m M,
    cfg: &'c SimConfig,
    seed: u64,
) -> Runner<'m, 'c, M, impl Future<Output = Result<M::Ret, KvError>> + 'm> {
    Runner::new(model, cfg, seed, op_future::<M>)
}

impl<'m, 'c, M: Model, F> Runner<'m, 'c, M, F>
where
    F: Future<Output = Result<M::Ret, KvError>>,
{
    fn new(
        model: &'m M,
        cfg: &'c SimConfig,
        seed: u64,
        make: fn(&'m M, SimClient, usize, M::Op) -> F,
    ) -> Self {
        let mut setup_rng = SimRng::derive(seed, u64::MAX);
        let skew = cfg.faults.has(FaultKind::Skew);
        let clocks: Vec<ClientClock> = (0..cfg.clients)
            .map(|_| {
                if skew {
                    let o = cfg.max_offset_ms;
                    let d = cfg.max_drift_ppm;
                    ClientClock {
                        offset_ms: setup_rng.range_inclusive(0, 2 * o) as i64 - o as i64,
                        drift_ppm: setup_rng.range_inclusive(0, 2 * d) as i64 - d as i64,
                    }
                } else {
                    ClientClock::default()
                }
            })
            .collect();
        let offsets: Vec<i64> = clocks.iter().map(|c| c.offset_ms).collect();
        let world = World::new(cfg, &offsets, cfg.faults.kinds().len(), || 0);
        let clients = clocks
            .iter()
            .enumerate()
            .map(|(c, &clock)| Live {
                handle: SimClient::new(0, EPOCH_MS, clock).configured(cfg),
                future: Box::pin(None),
                workload: SimRng::derive(seed, 1 + c as u64),
            })
            .collect();
        Runner {
            cfg,
            seed,
            world,
            live: LiveClients {
                model,
                cfg,
                seed,
                clients,
                make,
            },
            log: Log {
                record: cfg.record_trace,
                trace: Vec::new(),
                kv_calls: 0,
                lru: false,
            },
            drift: clocks.iter().map(|c| c.drift_ppm).collect(),
            neighbour: neighbour_classes(cfg),
            faults_on: cfg.faults.kinds().to_vec(),
            fault_probability: cfg.fault_probability,
            steps: 0,
            // Room for a full run's choices (bounded: a long run grows it).
            choices: Vec::with_capacity(
                cfg.clients
                    .saturating_mul(cfg.ops)
                    .saturating_mul(4)
                    .min(4096),
            ),
            stop: None,
            runnable: Vec::new(),
            oldest: None,
            store_log: None,
        }
    }

    /// Looks at the stores for the store log, when one is kept.
    fn observe_stores(&mut self) {
        if let Some(rec) = &mut self.store_log {
            rec.observe(&self.world.servers, self.world.now, &self.log.trace);
        }
    }

    /// The chooser for a fresh run of `strategy` (swarm also draws the run's faults here).
    pub(crate) fn chooser_for(&mut self, strategy: Strategy) -> Chooser {
        Chooser::new(
            strategy,
            self.seed,
            self.cfg,
            &mut self.faults_on,
            &mut self.fault_probability,
        )
    }

    /// Faults applied so far.
    pub(super) fn faults_used(&self) -> u32 {
        self.world.faults_used.iter().sum()
    }

    /// Runs the model's setup to completion against server state, outside of any
    /// interleaving (no faults, no other clients).
    fn setup(&mut self) -> Result<(), String> {
        let handle = SimClient::new(
            mix64(self.seed ^ 0x5e7u64),
            EPOCH_MS,
            ClientClock::default(),
        );
        let model = self.live.model;
        let h = handle.clone();
        let mut fut: OpFuture<'m, ()> = Box::pin(async move { model.setup(&h).await });
        let mut cx = Context::from_waker(Waker::noop());
        let world = &mut self.world;
        loop {
            handle.slot.borrow_mut().true_ms = world.now;
            match fut.as_mut().poll(&mut cx) {
                Poll::Ready(r) => {
                    return r.map_err(|e| format!("setup failed: {e}"));
                }
                Poll::Pending => {
                    let req = handle.slot.borrow_mut().request.take();
                    match req {
                        Some(Request::Command(cmd)) => {
                            let shard = world.shard_of(&cmd);
                            let store = &mut world.servers[shard].store;
                            let reply = store.apply(world.now, &cmd);
                            let evicted = store.take_evicted();
                            if !evicted.is_empty() {
                                self.log.evicted(world.now, shard, evicted);
                            }
                            if self.log.on() {
                                let event = Event::Call {
                                    shard,
                                    command: cmd,
                                    delivery: Delivery::Replied(reply.clone()),
                                };
                                self.log.event(world.now, None, event);
                            }
                            handle.slot.borrow_mut().put_reply(reply);
                        }
                        Some(Request::Sleep(ms, _)) => world.now += ms,
                        None => {
                            return Err("setup awaited something other than its kv handle".into())
                        }
                    }
                }
            }
        }
    }

    /// Runs the world to the end with `chooser`.
    pub(crate) fn run(mut self, mut chooser: Chooser) -> RunOutput<M> {
        if let Err(why) = self.setup() {
            self.stop = Some(Stop::Foreign { client: usize::MAX });
            if self.log.on() {
                self.log
                    .event(self.world.now, None, Event::Mark { label: why });
            }
        }
        self.observe_stores();
        let mut faults = Vec::new();
        let n = self.world.clients.len();
        while self.stop.is_none() && self.world.halt.is_none() {
            self.oldest = self.world.settle_oldest(
                rules!(self.cfg, self.drift, self.neighbour),
                &mut self.log,
                &mut self.runnable,
            );
            self.observe_stores();
            if self.runnable.is_empty() {
                break;
            }
            if self.steps >= self.cfg.max_steps {
                self.stop = Some(Stop::StepBound { steps: self.steps });
                break;
            }
            self.steps += 1;
            let choice = chooser.choose(&self, &mut faults);
            self.choices.push(choice);
            let rules = rules!(self.cfg, self.drift, self.neighbour);
            if (choice as usize) < n {
                let c = choice as usize;
                self.world.clients[c].ready_since = None;
                self.world
                    .step(rules, c, None, &mut self.live, &mut self.log);
            } else {
                let action = faults[choice as usize - n].clone();
                self.world
                    .apply_fault(rules, action, &mut self.live, &mut self.log);
            }
            self.observe_stores();
        }
        let rules = rules!(self.cfg, self.drift, self.neighbour);
        // Operations still in flight never completed: their outcome is unknown.
        let mut faults_used: Vec<FaultKind> = rules
            .kinds
            .iter()
            .zip(&self.world.faults_used)
            .filter(|(_, &u)| u > 0)
            .map(|(k, _)| *k)
            .collect();
        if self.log.lru && !faults_used.contains(&FaultKind::Lru) {
            faults_used.push(FaultKind::Lru);
        }
        faults_used.sort();
        let mut probes = BTreeMap::new();
        for live in &self.live.clients {
            for name in live.handle.slot.borrow_mut().probes.drain(..) {
                *probes.entry(name).or_insert(0) += 1;
            }
        }
        let trace_len = self.log.trace.len();
        RunOutput {
            store: self.store_log.map(|rec| rec.finish(trace_len)),
            probes,
            faults_used,
            stop: self.stop.or_else(|| self.world.stop()),
            quiet: self.world.quiet(rules),
            history: *self.world.history,
            trace: self.log.trace,
            choices: self.choices,
            steps: self.steps,
            kv_calls: self.log.kv_calls,
            faults_on: self.faults_on,
        }
    }
}

impl<M: Model, F> Choosing for Runner<'_, '_, M, F>
where
    F: Future<Output = Result<M::Ret, KvError>>,
{
    fn clients(&self) -> usize {
        self.world.clients.len()
    }

    fn runnable(&self) -> &[usize] {
        &self.runnable
    }

    /// [`World::starved`] of the runnable clients: the one that waited longest, if it
    /// waited too long (if it did not, none did).
    fn starved(&self) -> Option<usize> {
        let (since, c) = self.oldest?;
        (self.world.now.saturating_sub(since) > self.cfg.starve_ms).then_some(c)
    }

    fn ties_with(&self, forced: usize, c: usize) -> bool {
        self.world.ties_with(forced, c)
    }

    fn fault_actions(&self, out: &mut Vec<Fault<crate::fault::Pending>>) {
        out.clear();
        if self.faults_used() >= self.cfg.fault_budget {
            return;
        }
        let rules = rules!(self.cfg, self.drift, self.neighbour);
        self.world.faults(rules, &self.faults_on, out);
    }

    fn may_fault(&self) -> bool {
        !self.faults_on.is_empty() && self.faults_used() < self.cfg.fault_budget
    }

    fn fault_probability(&self) -> f64 {
        self.fault_probability
    }

    fn steps(&self) -> u32 {
        self.steps
    }
}

/// The world right after the model's setup, as a run starts.
pub(crate) struct AfterSetup<Op, Ret, R> {
    /// The world (each client's record as given).
    pub world: World<Op, Ret, R>,
    /// Each client's clock.
    pub clocks: Vec<ClientClock>,
    /// Why setup failed, if it did.
    pub failed: Option<String>,
}

/// Runs `model`'s setup exactly as a run seeded `seed` does; each client's record `rec()`.
pub(crate) fn after_setup<M: Model, R>(
    model: &M,
    cfg: &SimConfig,
    seed: u64,
    mut rec: impl FnMut() -> R,
) -> AfterSetup<M::Op, M::Ret, R> {
    let mut quiet = cfg.clone();
    quiet.record_trace = false;
    let mut runner = runner(model, &quiet, seed);
    let failed = runner.setup().err();
    let clocks = runner
        .live
        .clients
        .iter()
        .map(|c| c.handle.slot.borrow().clock)
        .collect();
    AfterSetup {
        world: runner.world.map_records(|_| rec()),
        clocks,
        failed,
    }
}
