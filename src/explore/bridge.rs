//! The bridge: a kvsim [`Model`] in a bounded [`Scope`] as a stateright `Model`.
//!
//! Every transition is a step of the simulator's own [`World`](crate::sim::World) (its
//! delivery, time accounting, fault effects and enumeration of faults); the bridge only
//! rebuilds each client's future from its recorded poll inputs, so a path of the bridge is
//! a run of the simulator, and its choices replay it there.

use super::commute::{Allowance, Effect, Touched};
use super::dfs::{Positions, Stepped};
use super::guard::{Cut, Guard, Tickets, TICKET_RUN};
use super::polls::{OpKey, PollInput, Polls, PollsRef, Step, Waits};
use super::scope::Scope;
use super::state::{Delivered, Halt, Phase, Recorded, State};
use super::workload::{alternatives, Alternative, MAX_ALTERNATIVES};
use super::Explorable;
use crate::command::Command;
use crate::history::History;
use crate::kv::KvError;
use crate::rng::SimRng;
use crate::scenario::FaultKind;
use crate::sim::{
    self, after_setup, handle_rng_seed, ClientClock, ClientState, Clients, OpStart, PollAt, Polled,
    Polling, Request, Rules, SimClient, SimConfig, EPOCH_MS,
};
use crate::store::geometry::SlabClass;
use crate::verdict::Verdict;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll, Waker};

type OpFuture<R> = Pin<Box<dyn Future<Output = Result<R, KvError>>>>;

/// The name of the property that runs the model's own check on final histories.
pub(crate) const PROP_CHECK: &str = "the model's check";
/// The name of the progress property (no livelock).
pub(crate) const PROP_PROGRESS: &str = "progress";
/// The name of the property that shows the scope is not vacuous.
pub(crate) const PROP_COMPLETES: &str = "every operation completes";

/// One step of the world: a client's step (start an operation, deliver its pending
/// command, or wake it), or a fault.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Action {
    /// Idle client `c` starts its operation `index` as alternative `alt` of the workload.
    Start(usize, u32, u32),
    /// Client `c` takes its next step.
    Step(usize),
    /// A fault.
    Fault(sim::Fault<sim::Pending>),
}

/// One step of a path: a state and the action taken from it (`None` at the end).
pub(crate) type PathStep<M> = (
    State<<M as crate::model::Model>::Op, <M as crate::model::Model>::Ret>,
    Option<Action>,
);

/// A model in a scope, as a stateright model.
pub(crate) struct Bridge<M: Explorable> {
    pub(crate) model: Arc<M>,
    /// The simulator's knobs for this scope (the replay token carries them).
    pub(crate) cfg: SimConfig,
    pub(crate) seed: u64,
    /// Fault kinds on, and the budget of each.
    kinds: Vec<FaultKind>,
    /// The noisy neighbour's slab classes ([`crate::sim::neighbour_classes`] of `cfg`).
    pub(crate) neighbour: Vec<(SlabClass, usize)>,
    budgets: Vec<u32>,
    /// Paths are not expanded past this true time.
    horizon: u64,
    /// Whether the history's virtual times are part of the state.
    times: bool,
    /// Most polls of one operation on a path.
    max_op_steps: u32,
    /// Each client's operations: per index, every alternative the model's `op` can give
    /// (the operation and the choice values that give it).
    alts: Vec<Vec<Vec<Alternative<M::Op>>>>,
    /// The workload is the seed's (the simulator draws it the same way).
    seeded: bool,
    /// Each client's clock drift.
    drift: Vec<i64>,
    /// Whether the simulator's fairness bound can ever force a step in this scope (a
    /// state then keeps since when each client is runnable; otherwise it never does, and
    /// the state stays free of it).
    fair: bool,
    /// Whether states forget since when a client has been runnable once it can no longer
    /// be starved ([`Scope::fairness_abstraction`]; see `Bridge::never_starved`).
    abstract_fairness: bool,
    init: State<M::Op, M::Ret>,
    pub(crate) guard: Arc<Guard>,
    /// The root polls of every operation started so far (whose nodes memoize what
    /// replaying them gave).
    roots: Roots<M::Ret>,
    /// Whether the depth-first search reduces with sleep sets (see `commute`).
    reduce: bool,
}

/// The `ready_since` of a client that can no longer be starved before its next step
/// (see `Bridge::never_starved`): a time the fairness rule never reaches.
pub(crate) const NEVER_STARVED: u64 = u64::MAX;

/// The root polls of a search's operations, one per [`OpKey`]: every state whose client
/// runs the same operation shares their nodes and their memos. Dropped with the
/// bridge, it empties the memos (which hold their children, which hold their parents).
struct Roots<Ret> {
    map: std::sync::Mutex<rustc_hash::FxHashMap<OpKey, Polls<Ret>>>,
}

impl<Ret> Roots<Ret> {
    fn new() -> Roots<Ret> {
        Roots {
            map: std::sync::Mutex::new(Default::default()),
        }
    }

    /// The root polls of operation `op`.
    fn get(&self, op: OpKey) -> Polls<Ret> {
        let mut map = self.map.lock().unwrap_or_else(|e| e.into_inner());
        map.entry(op).or_insert_with(|| Polls::root(op)).clone()
    }
}

impl<Ret> Drop for Roots<Ret> {
    fn drop(&mut self) {
        let map = self.map.get_mut().unwrap_or_else(|e| e.into_inner());
        for polls in map.values() {
            polls.release();
        }
    }
}

/// What a client's replayed future is waiting for.
struct Rebuilt<R> {
    handle: SimClient,
    future: OpFuture<R>,
    request: Option<Request>,
}

/// The clients of an explored world, as the world polls them: each client's future is
/// rebuilt from its recorded poll inputs, and every poll is recorded.
struct Replay<'b, M: Explorable> {
    bridge: &'b Bridge<M>,
    /// The future rebuilt to find a client's pending command, for the poll that follows.
    cached: Option<(usize, Rebuilt<M::Ret>)>,
    /// What came back for the command of the client polled next.
    delivered: Option<(Delivered, Arc<Command>)>,
}

impl<'b, M: Explorable> Clients<M::Op, M::Ret, Recorded<M::Ret>> for Replay<'b, M> {
    type Cmd = Arc<Command>;

    fn start(&mut self, c: usize, at: OpStart, cl: &mut ClientState<Recorded<M::Ret>>) -> M::Op {
        cl.rec.ordinal = self.bridge.cfg.rng_by_start.then_some(at.ordinal as u32);
        let key = (c, at.index as u32, cl.rec.alt, cl.rec.ordinal);
        cl.rec.polls = self.bridge.roots.get(key);
        self.bridge.alts[c][at.index][cl.rec.alt as usize].0.clone()
    }

    fn command(&mut self, c: usize, cl: &ClientState<Recorded<M::Ret>>) -> Option<Arc<Command>> {
        let node = cl
            .rec
            .polls
            .node()
            .filter(|n| n.op == self.bridge.op_key(c, cl));
        if let Some(node) = node {
            let memo = node.memo.lock().unwrap_or_else(|e| e.into_inner());
            if let Some(waits) = &memo.request {
                return waits.command();
            }
        }
        let mut rebuilt = self.bridge.rebuild(c, cl)?;
        let waits = Waits::of(rebuilt.request.take()?);
        let cmd = waits.command();
        if let Some(node) = node {
            node.memo.lock().unwrap_or_else(|e| e.into_inner()).request = Some(waits);
        }
        let cmd = cmd?;
        self.cached = Some((c, rebuilt));
        Some(cmd)
    }

    fn deliver(&mut self, _: usize, delivered: Delivered, cmd: Arc<Command>) {
        self.delivered = Some((delivered, cmd));
    }

    /// The client is rebuilt parked on its lost command: it is handed the timeout now
    /// (what `deliver` was handed when the call went unanswered lasted only that step).
    fn time_out(&mut self, c: usize, cl: &ClientState<Recorded<M::Ret>>) {
        if let Some(cmd) = self.command(c, cl) {
            self.delivered = Some((Delivered::Timeout, cmd));
        }
    }

    /// From the memo of the client's polls when this poll was seen before (the same
    /// operation, inputs and reply, and, if the client read its clock during it, the same
    /// time and clock offset); else by rebuilding and polling its future, memoized.
    fn poll(
        &mut self,
        c: usize,
        cl: &mut ClientState<Recorded<M::Ret>>,
        at: PollAt,
    ) -> Polling<M::Ret> {
        let PollAt { now, clock } = at;
        let reply = self.delivered.take();
        let polls = cl.rec.polls.clone();
        let node = polls.node().filter(|n| n.op == self.bridge.op_key(c, cl));
        let when = (now, clock.offset_ms);
        if let Some(node) = node {
            let memo = node.memo.lock().unwrap_or_else(|e| e.into_inner());
            if let Some(step) = memo.find(reply.as_ref().map(|(d, _)| d), when) {
                cl.rec.polls = step.child.clone();
                return (step.polled.clone(), step.marks.clone());
            }
        }
        let rebuilt = match self.cached.take() {
            Some((x, rebuilt)) if x == c => Some(rebuilt),
            _ => self.bridge.rebuild(c, cl),
        };
        let Some(mut rebuilt) = rebuilt else {
            return (Polled::Nondeterministic, Vec::new());
        };
        {
            let mut slot = rebuilt.handle.slot.borrow_mut();
            if let Some((delivered, cmd)) = &reply {
                slot.deliver_copy(delivered, cmd);
            }
            slot.true_ms = now;
            slot.clock = clock;
            slot.clock_reads = 0;
        }
        let mut cx = Context::from_waker(Waker::noop());
        let polled = rebuilt.future.as_mut().poll(&mut cx);
        let mut slot = rebuilt.handle.slot.borrow_mut();
        let marks = std::mem::take(&mut slot.marks);
        let clock_read = slot.clock_reads > 0;
        if self.bridge.time_free() && clock_read {
            self.bridge
                .guard
                .depends_on_time(format!("client C{c} read its clock"));
        }
        let delivered = reply.map(|(delivered, _)| delivered);
        let mut park = None;
        let child = polls.push(PollInput {
            clock: clock_read.then_some(when),
            reply: delivered.clone(),
        });
        let polled = match polled {
            Poll::Ready(Err(e)) if e.is_refusal() => {
                Polled::Refused(e.refusal().unwrap_or_default())
            }
            Poll::Ready(result) => Polled::Ready(result.ok()),
            Poll::Pending => match slot.request.take() {
                Some(request) => {
                    if let Request::Command(cmd) = &request {
                        if self.bridge.time_free() && cmd.involves_time() {
                            self.bridge.guard.depends_on_time(format!(
                                "client C{c} sent `{}`, whose effect depends on the time",
                                cmd.verb()
                            ));
                        }
                    }
                    let polled = match request {
                        Request::Command(_) => Polled::Calling,
                        Request::Sleep(ms, wait) => Polled::Sleep(ms, wait),
                    };
                    park = Some(request.clone());
                    if let Some(n) = child.node() {
                        n.memo.lock().unwrap_or_else(|e| e.into_inner()).request =
                            Some(Waits::of(request));
                    }
                    polled
                }
                None => Polled::Foreign,
            },
        };
        drop(slot);
        let out = match node {
            None => {
                cl.rec.polls = child;
                (polled, marks)
            }
            Some(node) => {
                let mut memo = node.memo.lock().unwrap_or_else(|e| e.into_inner());
                let step = Step {
                    polled,
                    marks,
                    child,
                };
                let step = memo.insert(delivered, clock_read, when, step);
                cl.rec.polls = step.child.clone();
                (step.polled.clone(), step.marks.clone())
            }
        };
        // The future, waiting on its request, is the client at its new polls: kept for
        // the next step from them (else rebuilt by replaying every input again).
        if let Some(request) = park {
            rebuilt.request = Some(request);
            park_future(cl.rec.polls.clone(), rebuilt);
        }
        out
    }

    fn steps(&self, cl: &ClientState<Recorded<M::Ret>>) -> u32 {
        cl.rec.polls.len() as u32
    }

    fn end(&mut self, _: usize, cl: &mut ClientState<Recorded<M::Ret>>, returned: bool) {
        cl.rec.polls = Polls::default();
        if returned {
            cl.rec.alt = 0;
        }
    }
}

/// Futures kept per checker thread, most recent last (see [`park_future`]).
const PARKED_MAX: usize = 64;

/// A client's future that has been polled through exactly `polls`' inputs and waits on
/// its request: what [`Bridge::rebuild`] would give for them, without replaying them.
struct Parked {
    /// Held, so that the node cannot be freed and its address taken by another.
    polls: PollsRef,
    /// A `Rebuilt<Ret>` of the search's model.
    future: Box<dyn std::any::Any>,
}

thread_local! {
    /// The futures this thread polled last, by the polls they stand at. The profile
    /// (fifo/fixed 2 × 2) showed rebuilding a client's future, which replays every
    /// input of its operation, at 13% of the search: in depth-first order the next step
    /// from a node a thread just created is mostly that thread's, soon.
    static PARKED: std::cell::RefCell<std::collections::VecDeque<Parked>> =
        const { std::cell::RefCell::new(std::collections::VecDeque::new()) };
}

/// Keeps `rebuilt`, a future just polled through `polls`' inputs and waiting on its
/// request, for the next [`Bridge::rebuild`] of a client at `polls` on this thread. Sound
/// as rebuilding is: a client's code is deterministic (the same inputs give the same
/// future), and a node is only ever the polls of one operation.
fn park_future<R: 'static>(polls: Polls<R>, rebuilt: Rebuilt<R>) {
    if polls.node().is_none() {
        return;
    }
    PARKED.with_borrow_mut(|parked| {
        if parked.len() == PARKED_MAX {
            parked.pop_front();
        }
        parked.push_back(Parked {
            polls: PollsRef::of(polls),
            future: Box::new(rebuilt),
        });
    });
}

impl<M: Explorable> Bridge<M> {
    pub(crate) fn new(
        model: Arc<M>,
        scope: &Scope,
        guard: Arc<Guard>,
    ) -> Result<Bridge<M>, String> {
        let cfg = scope.run_config();
        let seed = scope.seed;
        let mut alts = Vec::with_capacity(cfg.clients);
        for c in 0..cfg.clients {
            if scope.seeded_workload {
                // The simulator's draw: one stream per client, no recorded values (the
                // replay draws the same from the seed).
                let mut rng = SimRng::derive(seed, 1 + c as u64);
                alts.push(
                    (0..cfg.ops)
                        .map(|i| vec![(model.op(c, i, &mut rng), Vec::new())])
                        .collect(),
                );
                continue;
            }
            let mut per_op = Vec::with_capacity(cfg.ops);
            for i in 0..cfg.ops {
                let (a, _) = alternatives(&*model, scope, c, i, MAX_ALTERNATIVES)?;
                per_op.push(a);
            }
            alts.push(per_op);
        }
        let setup = after_setup(&*model, &cfg, seed, Recorded::default);
        let mut init = setup.world;
        init.faults_used = vec![0; scope.faults.len()];
        init.halt = setup.failed.map(Halt::SetupFailed);
        // Time-free: nothing kept so far depends on the time (the history keeps no times,
        // the stores answer alike at any time), and the guard watches for what would.
        init.time_free = scope.time_shift
            && !scope.times
            && init
                .servers
                .iter()
                .all(|s| s.store.time_free() && !s.store.orders_cas());
        if init.time_free {
            for s in &mut init.servers {
                s.store.untrack_access();
            }
        }
        let drift: Vec<i64> = setup.clocks.iter().map(|c| c.drift_ppm).collect();
        let classes = if scope.symmetry && model.interchangeable_clients() {
            classes(&alts, &drift)
        } else {
            (0..cfg.clients as u32).collect()
        };
        // Random numbers by operation start: with them by client, interchangeable clients
        // would draw different numbers, and a permuted state would not be one the search
        // can reach.
        let mut cfg = cfg;
        cfg.rng_by_start = classes.iter().enumerate().any(|(c, &k)| k as usize != c);
        for (cl, k) in init.clients.iter_mut().zip(classes) {
            cl.rec.class = k;
        }
        // The simulator's fairness bound can only force a step if a runnable client can
        // wait longer than it: time passes while a client is runnable only by the other
        // clients' KV calls (each op at most `max_op_steps + 1` of them before its path is
        // cut) and by the `expire` fault's jumps. When it cannot, states need not carry
        // since when each client has been runnable, and interleavings that differ only
        // there merge.
        let others_calls = (cfg.clients.saturating_sub(1) as u64)
            .saturating_mul(cfg.ops as u64)
            .saturating_mul(u64::from(scope.max_op_steps) + 1);
        let fair = scope.faults.iter().any(|(k, _)| *k == FaultKind::Expire)
            || cfg.step_ms.saturating_mul(others_calls) > cfg.starve_ms;
        let neighbour = crate::sim::neighbour_classes(&cfg);
        let mut bridge = Bridge {
            model,
            cfg,
            neighbour,
            seed,
            kinds: scope.faults.iter().map(|(k, _)| *k).collect(),
            budgets: scope.faults.iter().map(|(_, b)| *b).collect(),
            horizon: EPOCH_MS + scope.horizon_ms,
            times: scope.times,
            max_op_steps: scope.max_op_steps,
            alts,
            seeded: scope.seeded_workload,
            drift,
            fair,
            abstract_fairness: scope.fairness_abstraction,
            init,
            guard,
            roots: Roots::new(),
            reduce: false,
        };
        let mut init = bridge.init.clone();
        bridge.settle(&mut init);
        bridge.init = init;
        Ok(bridge)
    }

    /// The sets of clients treated as interchangeable (at least two each).
    pub(crate) fn interchangeable(&self) -> Vec<Vec<usize>> {
        let class = |c: usize| self.init.clients[c].rec.class as usize;
        (0..self.cfg.clients)
            .filter(|&c| class(c) == c)
            .map(|c| {
                (c..self.cfg.clients)
                    .filter(|&d| class(d) == c)
                    .collect::<Vec<_>>()
            })
            .filter(|set| set.len() > 1)
            .collect()
    }

    /// How many workloads the scope covers: the product of every operation's number of
    /// alternatives (saturating).
    pub(crate) fn workloads(&self) -> u64 {
        self.alts
            .iter()
            .flatten()
            .fold(1u64, |n, a| n.saturating_mul(a.len() as u64))
    }

    /// The workload of a path, as the simulator replays it: per client and operation
    /// index, the choice values of the alternative the path started (the first
    /// alternative for operations it never started).
    pub(crate) fn workload(&self, path: &[PathStep<M>]) -> Option<Vec<Vec<Vec<u64>>>> {
        if self.seeded {
            return None;
        }
        let values = self
            .chosen(path)
            .iter()
            .enumerate()
            .map(|(c, per_op)| {
                per_op
                    .iter()
                    .enumerate()
                    .map(|(i, &alt)| self.alts[c][i][alt as usize].1.clone())
                    .collect()
            })
            .collect();
        Some(values)
    }

    /// The alternative a path started, per client and operation index (the first for
    /// operations it never started).
    pub(crate) fn chosen(&self, path: &[PathStep<M>]) -> Vec<Vec<u32>> {
        let mut chosen: Vec<Vec<u32>> = self.alts.iter().map(|a| vec![0; a.len()]).collect();
        for (s, a) in path {
            if let Some(Action::Start(c, _, alt)) = a {
                chosen[*c][s.clients[*c].op_index as usize] = *alt;
            }
        }
        chosen
    }

    /// The same search restricted to one workload: per client and operation index, only
    /// the alternative `chosen` names (see [`Bridge::chosen`]), under its own guard.
    pub(crate) fn restricted(&self, chosen: &[Vec<u32>], guard: Arc<Guard>) -> Bridge<M> {
        let alts: Vec<Vec<Vec<Alternative<M::Op>>>> = self
            .alts
            .iter()
            .zip(chosen)
            .map(|(per_op, ch)| {
                per_op
                    .iter()
                    .zip(ch)
                    .map(|(alts, &k)| vec![alts[k as usize].clone()])
                    .collect()
            })
            .collect();
        // Clients stay interchangeable only if they run the same alternatives (the
        // random numbers stay seeded as in the whole search: the path found replays).
        let mut init = self.init.clone();
        if self.cfg.rng_by_start {
            for (cl, k) in init.clients.iter_mut().zip(classes(&alts, &self.drift)) {
                cl.rec.class = k;
            }
        }
        Bridge {
            model: Arc::clone(&self.model),
            cfg: self.cfg.clone(),
            seed: self.seed,
            kinds: self.kinds.clone(),
            neighbour: self.neighbour.clone(),
            budgets: self.budgets.clone(),
            horizon: self.horizon,
            times: self.times,
            max_op_steps: self.max_op_steps,
            alts,
            seeded: self.seeded,
            drift: self.drift.clone(),
            fair: self.fair,
            abstract_fairness: self.abstract_fairness,
            init,
            guard,
            roots: Roots::new(),
            reduce: false,
        }
    }

    /// The rules the world is stepped under in this scope.
    fn rules(&self) -> Rules<'_> {
        Rules {
            cfg: &self.cfg,
            kinds: &self.kinds,
            drift: &self.drift,
            times: self.times,
            canonical: true,
            fair: self.fair,
            neighbour: &self.neighbour,
        }
    }

    /// The simulator's judgement of a final state: progress (livelock), the model's
    /// check, or why the path could not be judged.
    pub(crate) fn verdict(&self, s: &State<M::Op, M::Ret>) -> Verdict {
        match &s.halt {
            Some(Halt::SetupFailed(why)) => Verdict::Unknown(why.clone()),
            Some(Halt::Nondeterministic { client }) => Verdict::Unknown(format!(
                "client C{client} did not repeat its requests when its operation was \
                 replayed against the same replies: its code depends on something other \
                 than its kv handle (time, randomness, iteration order)"
            )),
            // Progress is judged after the last fault (see `World::quiet`).
            _ => sim::judge_end(
                &*self.model,
                s.stop().as_ref(),
                &s.history,
                s.quiet(self.rules()),
                s.faults_used.iter().any(|&u| u > 0),
            ),
        }
    }

    /// Every fault the simulator could take in `s` (its enumeration, every kind of the
    /// scope, budgets ignored): what replay choices index.
    pub(crate) fn all_faults(
        &self,
        s: &State<M::Op, M::Ret>,
        out: &mut Vec<sim::Fault<sim::Pending>>,
    ) {
        s.faults(self.rules(), &self.kinds, out);
    }

    /// The world between steps (servers back up, time jumps to the next wake-up). Also
    /// canonical: with one client runnable and no fault left, the next action steps it
    /// (which restarts its fairness clock), whatever its clock says.
    fn settle(&self, s: &mut State<M::Op, M::Ret>) {
        thread_local! {
            /// The runnable clients of the state being settled (a buffer kept per checker
            /// thread: no allocation per state).
            static RUNNABLE: std::cell::RefCell<Vec<usize>> =
                const { std::cell::RefCell::new(Vec::new()) };
        }
        let runnable = RUNNABLE.with_borrow_mut(|runnable| {
            s.settle(self.rules(), &mut (), runnable);
            runnable.len()
        });
        if !self.fair {
            return;
        }
        let no_fault_left = s.faults_used.iter().zip(&self.budgets).all(|(u, b)| u >= b);
        if runnable <= 1 && no_fault_left {
            for cl in &mut s.clients {
                cl.ready_since = None;
            }
        } else if self.abstract_fairness {
            for c in 0..s.clients.len() {
                if self.never_starved(s, c) {
                    s.clients[c].ready_since = Some(NEVER_STARVED);
                }
            }
        }
    }

    /// Whether client `c`, runnable since `ready_since`, can be starved on no path from
    /// `s` (before it takes its next step): then since when it has been runnable changes
    /// nothing to come, and the state keeps [`NEVER_STARVED`] instead
    /// ([`Scope::fairness_abstraction`]).
    ///
    /// # Soundness
    /// The fairness rule ([`World::starved`](crate::sim::World)) forces `c`'s step once
    /// true time passes `ready_since + starve_ms` while `c` stays runnable and unstepped.
    /// While `c` is runnable, true time moves only by the other clients' KV calls
    /// (`step_ms` each; a lost or delayed request is one too): the world jumps time only
    /// when no client can move, and the only fault that moves it, `expire`, must have no
    /// budget left. A client can call only once it is awake (its sleep, timeout and pause
    /// over): one that wakes after `ready_since + starve_ms` cannot call before `c` is
    /// already starved, so it does not count. Each other client calls at most once per
    /// poll, and a path is cut once an operation has polled more than
    /// [`Scope::max_op_steps`] times, so `step_ms × Σ calls_left` bounds how far time can
    /// still move before `c` is starved. If `now` plus that bound stays within
    /// `ready_since + starve_ms`, the rule never forces `c`'s step, nor (no tie: a tie is
    /// an equal `ready_since`, which would starve `c` too) lets it step as another's tie,
    /// from this state or any state it reaches before `c` steps; the bound only shrinks as
    /// time moves (a sleeper that was too late stays too late), so the same holds for the
    /// successors. A state with [`NEVER_STARVED`] there (a time the rule never reaches,
    /// which the world's settle keeps until `c` steps, and which ties with no starved
    /// client) has exactly the same successors, up to this same forgetting: the enabled
    /// actions, the histories and the verdicts are those of the original.
    fn never_starved(&self, s: &State<M::Op, M::Ret>, c: usize) -> bool {
        let Some(since) = s.clients[c].ready_since else {
            return false;
        };
        let time_jumps = self
            .kinds
            .iter()
            .zip(s.faults_used.iter().zip(&self.budgets))
            .any(|(k, (u, b))| *k == FaultKind::Expire && u < b);
        if time_jumps {
            return false;
        }
        let end = since.saturating_add(self.cfg.starve_ms);
        let per_op = u64::from(self.max_op_steps) + 1;
        let mut calls = 0u64;
        for (d, cl) in s.clients.iter().enumerate() {
            if d == c || cl.phase.finished() {
                continue;
            }
            let wakes = match cl.phase {
                Phase::Sleeping(t) | Phase::TimingOut(t) => t,
                _ => s.now,
            }
            .max(cl.paused_until);
            if wakes > end {
                continue;
            }
            let mut next = cl.op_index as usize;
            if cl.phase != Phase::Idle {
                calls += per_op.saturating_sub(cl.rec.polls.len() as u64);
                next += 1;
            }
            while let Some(i) = self.cfg.next_op(d, next) {
                calls += per_op;
                next = i + 1;
            }
        }
        s.now.saturating_add(calls.saturating_mul(self.cfg.step_ms)) <= end
    }

    /// A fresh future of client `c`'s current operation, polled through its recorded
    /// inputs: the client as it was, waiting for its next input.
    fn rebuild(&self, c: usize, cl: &ClientState<Recorded<M::Ret>>) -> Option<Rebuilt<M::Ret>> {
        if let Some(parked) = self.unpark(c, cl) {
            return Some(parked);
        }
        let index = cl.op_index as usize;
        let clock = ClientClock {
            offset_ms: cl.offset_ms,
            drift_ppm: self.drift[c],
        };
        let ordinal = cl.rec.ordinal.unwrap_or(0) as usize;
        let rng_seed = handle_rng_seed(&self.cfg, self.seed, c, index, ordinal);
        let handle = SimClient::new(rng_seed, EPOCH_MS, clock).configured(&self.cfg);
        let model = Arc::clone(&self.model);
        let op = self.alts[c][index][cl.rec.alt as usize].0.clone();
        let h = handle.clone();
        let mut future: OpFuture<M::Ret> = Box::pin(async move { model.run(&h, c, &op).await });
        let mut cx = Context::from_waker(Waker::noop());
        let mut request: Option<Request> = None;
        for input in cl.rec.polls.inputs() {
            {
                let mut slot = handle.slot.borrow_mut();
                if let Some((t, offset)) = input.clock {
                    slot.true_ms = t;
                    slot.clock.offset_ms = offset;
                }
                match (&input.reply, &request) {
                    (Some(d), Some(Request::Command(cmd))) => slot.deliver_copy(d, cmd),
                    (None, _) => slot.clear_delivery(),
                    (Some(_), _) => return None,
                }
            }
            if future.as_mut().poll(&mut cx).is_ready() {
                return None;
            }
            request = handle.slot.borrow_mut().request.take();
            request.as_ref()?;
        }
        handle.slot.borrow_mut().marks.clear();
        Some(Rebuilt {
            handle,
            future,
            request,
        })
    }

    /// The future [`park_future`] kept for client `c` at its polls, if it is this
    /// thread's and still there.
    fn unpark(&self, c: usize, cl: &ClientState<Recorded<M::Ret>>) -> Option<Rebuilt<M::Ret>> {
        let node = cl.rec.polls.node()?;
        if node.op != self.op_key(c, cl) {
            return None;
        }
        PARKED.with_borrow_mut(|parked| {
            let i = parked.iter().position(|p| cl.rec.polls.same_as(&p.polls))?;
            let any = parked.remove(i)?.future;
            any.downcast::<Rebuilt<M::Ret>>().ok().map(|b| *b)
        })
    }

    /// The operation client `c` runs (what its polls' memos is valid for).
    fn op_key(&self, c: usize, cl: &ClientState<Recorded<M::Ret>>) -> OpKey {
        (c, cl.op_index, cl.rec.alt, cl.rec.ordinal)
    }

    /// The request client `c` waits on (rebuilt from its recorded inputs): the command it
    /// sent or the sleep it asked for; `None` when it is not inside an operation or did not
    /// repeat its requests. For the Explorer's labels.
    pub(crate) fn pending(&self, s: &State<M::Op, M::Ret>, c: usize) -> Option<Request> {
        match s.clients[c].phase {
            Phase::Calling | Phase::Sleeping(_) => self.rebuild(c, &s.clients[c])?.request,
            _ => None,
        }
    }

    /// Whether this is a time-free search ([`Scope::time_shift`]): states are identified
    /// with their times relative to now, and no path is cut at the horizon. The guard stops
    /// it the moment a client reads its clock or sends a command that involves time.
    pub(crate) fn time_free(&self) -> bool {
        self.init.time_free
    }

    /// The time horizon, in ms from the start.
    pub(crate) fn horizon_ms(&self) -> u64 {
        self.horizon - EPOCH_MS
    }

    /// The step bound of one operation.
    pub(crate) fn max_op_steps(&self) -> u32 {
        self.max_op_steps
    }

    /// Operation `index` of client `c` as alternative `alt` of the workload.
    pub(crate) fn op_of(&self, c: usize, index: u32, alt: u32) -> &M::Op {
        &self.alts[c][index as usize][alt as usize].0
    }

    /// The alternative of client `c`'s operation `index` whose choice values are `values`
    /// (a replayed workload's), if one is.
    pub(crate) fn alt_with(&self, c: usize, index: u32, values: &[u64]) -> Option<u32> {
        let alts = self.alts.get(c)?.get(index as usize)?;
        alts.iter().position(|(_, v)| v == values).map(|k| k as u32)
    }

    /// The replay choices of a path: client steps by index, faults by their position in
    /// the simulator's enumeration (after the clients).
    pub(crate) fn choices(&self, path: &[PathStep<M>]) -> Vec<u32> {
        let n = self.cfg.clients as u32;
        let mut faults = Vec::new();
        path.iter()
            .filter_map(|(s, a)| {
                a.as_ref().map(|a| match a {
                    Action::Start(c, ..) | Action::Step(c) => *c as u32,
                    Action::Fault(f) => {
                        self.all_faults(s, &mut faults);
                        let i = faults
                            .iter()
                            .position(|x| x == f)
                            .expect("a fault of a path is one the simulator enumerates");
                        n + i as u32
                    }
                })
            })
            .collect()
    }

    /// The state `action` leads to from `s`, telling `sink` what happens (the Explorer's
    /// page labels actions with these events); the stateright model's `next_state`.
    pub(crate) fn traced_next(
        &self,
        s: &State<M::Op, M::Ret>,
        action: Action,
        sink: &mut impl sim::Sink,
    ) -> State<M::Op, M::Ret> {
        self.advance(s.clone(), &s.history, &s.op_digests, action, sink)
    }

    /// [`Bridge::traced_next`] of a state `next` (taken, not copied) whose history and
    /// operation digests are `history` and `digests`.
    fn advance(
        &self,
        mut next: State<M::Op, M::Ret>,
        history: &Arc<History<M::Op, M::Ret>>,
        digests: &[u64],
        action: Action,
        sink: &mut impl sim::Sink,
    ) -> State<M::Op, M::Ret> {
        let rules = self.rules();
        let mut clients = Replay {
            bridge: self,
            cached: None,
            delivered: None,
        };
        match action {
            Action::Start(c, _, alt) => {
                next.clients[c].ready_since = None;
                next.clients[c].rec.alt = alt;
                next.step(rules, c, None, &mut clients, sink)
            }
            Action::Step(c) => {
                next.clients[c].ready_since = None;
                next.step(rules, c, None, &mut clients, sink)
            }
            Action::Fault(f) => next.apply_fault(rules, f, &mut clients, sink),
        }
        self.settle(&mut next);
        super::canon::refresh_op_digests(history, digests, &mut next);
        next
    }

    /// The client an action is a step of (`None` for a fault).
    fn client_of(action: &Action) -> Option<usize> {
        match action {
            Action::Start(c, ..) | Action::Step(c) => Some(*c),
            Action::Fault(_) => None,
        }
    }

    /// The same bridge, its search reduced with sleep sets when `on` and it can be (see
    /// `commute`).
    pub(crate) fn reducing(mut self, on: bool) -> Self {
        self.reduce = on && self.can_reduce();
        self
    }

    /// Which of the scope's bounds cuts this state, if one does: past the time horizon,
    /// or an operation past its step bound. A final state is never cut.
    pub(crate) fn cut(&self, s: &State<M::Op, M::Ret>) -> Option<Cut> {
        if s.is_final() {
            None
        } else if !self.time_free() && s.now > self.horizon {
            Some(Cut::Horizon)
        } else if s
            .clients
            .iter()
            .any(|c| c.rec.polls.len() as u32 > self.max_op_steps)
        {
            Some(Cut::Steps)
        } else {
            None
        }
    }
}

/// Each client's symmetry class under [`crate::model::Model::interchangeable_clients`]:
/// the lowest index of the clients with the same alternatives at every operation index
/// and the same clock drift.
fn classes<Op: PartialEq>(alts: &[Vec<Vec<Alternative<Op>>>], drift: &[i64]) -> Vec<u32> {
    (0..alts.len())
        .map(|c| {
            (0..=c)
                .find(|&d| alts[d] == alts[c] && drift[d] == drift[c])
                .unwrap_or(c) as u32
        })
        .collect()
}

impl<M: Explorable> super::dfs::Successors for Bridge<M> {
    fn next_state_from(&self, s: Self::State, action: Action) -> Option<Self::State> {
        // The parent's history and digests, kept for the digests' refresh (which compares
        // the histories): the step copies the history on write as it does from a copy.
        let (history, digests) = (s.history.clone(), s.op_digests.clone());
        Some(self.advance(s, &history, &digests, action, &mut ()))
    }

    fn reduces(&self) -> bool {
        self.reduce
    }

    fn step(&self, s: &Self::State, action: Action) -> Stepped<Self::State> {
        let (client, before) = (Self::client_of(&action), (s.now, s.seq));
        let mut touched = Touched::default();
        let next = self.advance(s.clone(), &s.history, &s.op_digests, action, &mut touched);
        let effect = client.and_then(|c| self.effect(c, before, &next, &touched));
        (Some(next), effect)
    }

    fn step_from(&self, s: Self::State, action: Action) -> Stepped<Self::State> {
        let (client, before) = (Self::client_of(&action), (s.now, s.seq));
        let mut touched = Touched::default();
        let (history, digests) = (s.history.clone(), s.op_digests.clone());
        let next = self.advance(s, &history, &digests, action, &mut touched);
        let effect = client.and_then(|c| self.effect(c, before, &next, &touched));
        (Some(next), effect)
    }

    fn agent(&self, action: &Action) -> Option<usize> {
        Self::client_of(action)
    }

    fn context(&self, s: &Self::State) -> Option<Allowance> {
        Bridge::context(self, s)
    }

    fn commute(&self, at: &Allowance, a: &Effect, b: &Effect) -> bool {
        Bridge::commute(self, at, a, b)
    }

    fn fingerprint_with_positions(&self, s: &Self::State) -> (u64, Positions)
    where
        Self::State: std::hash::Hash,
    {
        super::canon::fingerprint_with_positions(s)
    }

    fn tickets(&self) -> Tickets {
        Tickets::new(self.guard.clone())
    }

    fn admit(&self, s: &Self::State, tickets: &mut Tickets) -> bool {
        self.guard.admit_with(self.cut(s), tickets, TICKET_RUN)
    }
}

impl<M: Explorable> stateright::Model for Bridge<M> {
    type State = State<M::Op, M::Ret>;
    type Action = Action;

    fn init_states(&self) -> Vec<Self::State> {
        vec![self.init.clone()]
    }

    fn actions(&self, s: &Self::State, actions: &mut Vec<Action>) {
        if s.is_final() || self.cut(s).is_some() {
            return;
        }
        // The simulator's fairness: a client runnable for longer than `starve_ms` steps
        // now, and nothing else happens (a longer stall is the `pause` fault).
        let starved = s.starved(
            self.rules(),
            (0..s.clients.len()).filter(|&c| s.runnable(c)),
        );
        for c in 0..s.clients.len() {
            // Under symmetry a tie between clients that waited equally long is broken
            // either way (the lowest index is not a property of interchangeable clients).
            let forced = |x: usize| {
                if self.cfg.rng_by_start {
                    s.ties_with(x, c)
                } else {
                    x == c
                }
            };
            if starved.is_some_and(|x| !forced(x)) {
                continue;
            }
            if s.runnable(c) {
                let cl = &s.clients[c];
                if cl.phase == Phase::Idle {
                    let i = cl.op_index;
                    let n = self.alts[c][i as usize].len() as u32;
                    actions.extend((0..n).map(|alt| Action::Start(c, i, alt)));
                } else {
                    actions.push(Action::Step(c));
                }
            }
        }
        if starved.is_some() {
            return;
        }
        if s.faults_used.iter().zip(&self.budgets).any(|(u, b)| u < b) {
            let mut faults = Vec::new();
            self.all_faults(s, &mut faults);
            for f in faults {
                let k = self
                    .kinds
                    .iter()
                    .position(|k| Some(*k) == f.kind())
                    .expect("only the scope's kinds are enumerated");
                if s.faults_used[k] < self.budgets[k] {
                    actions.push(Action::Fault(f));
                }
            }
        }
    }

    fn next_state(&self, s: &Self::State, action: Action) -> Option<Self::State> {
        Some(self.traced_next(s, action, &mut ()))
    }

    fn format_action(&self, action: &Action) -> String {
        match action {
            Action::Start(c, i, alt) => format!(
                "C{c}: start {:?} (operation {i})",
                self.alts[*c][*i as usize][*alt as usize].0
            ),
            Action::Step(c) => format!("C{c} steps"),
            Action::Fault(f) => format!("fault: {f:?}"),
        }
    }

    fn properties(&self) -> Vec<stateright::Property<Self>> {
        vec![
            stateright::Property::always(PROP_CHECK, |b: &Self, s: &Self::State| match &s.halt {
                Some(Halt::Livelock { .. }) => true,
                Some(_) => false,
                None if s.is_final() => b.verdict(s).is_ok(),
                None => true,
            }),
            stateright::Property::always(PROP_PROGRESS, |_: &Self, s: &Self::State| {
                !matches!(s.halt, Some(Halt::Livelock { .. }))
            }),
            stateright::Property::sometimes(PROP_COMPLETES, |_: &Self, s: &Self::State| {
                s.all_done()
            }),
        ]
    }

    fn within_boundary(&self, s: &Self::State) -> bool {
        self.guard.admit(self.cut(s))
    }
}
