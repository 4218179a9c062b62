//! The bridge: a kvsim [`Model`] in a bounded [`Scope`] as a stateright `Model`.
//!
//! Every transition mirrors the simulator's executor step for step (same delivery, same
//! time accounting, same fault effects, same enumeration of faults), so a path of the
//! bridge is a run of the simulator, and its choices replay it there.

use super::guard::{Cut, Guard};
use super::scope::Scope;
use super::state::{ClientState, Delivered, Halt, Phase, PollInput, ServerState, State, Tail};
use super::workload::{alternatives, Alternative, MAX_ALTERNATIVES};
use super::Explorable;
use crate::command::{Command, Reply};
use crate::history::{Mark, Operation, Outcome};
use crate::kv::KvError;
use crate::rng::SimRng;
use crate::scenario::FaultKind;
use crate::sim::{
    self, after_setup, enumerate_faults, op_rng_seed, Clock, FaultAction, FaultClient, Request,
    RunOutput, SimClient, SimConfig, Stop, EPOCH_MS,
};
use crate::verdict::Verdict;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll, Waker};

type OpFuture<'m, R> = Pin<Box<dyn Future<Output = Result<R, KvError>> + 'm>>;

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
    Fault(FaultAction),
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
    init: State<M::Op, M::Ret>,
    pub(crate) guard: Arc<Guard>,
}

/// What a client's replayed future is waiting for.
struct Rebuilt<'m, R> {
    handle: SimClient,
    future: OpFuture<'m, R>,
    request: Option<Request>,
}

impl<M: Explorable> Bridge<M> {
    pub(crate) fn new(
        model: Arc<M>,
        scope: &Scope,
        guard: Arc<Guard>,
    ) -> Result<Bridge<M>, String> {
        let cfg = scope.config();
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
                let (a, _) =
                    alternatives(&*model, seed, c, i, scope.draw_values, MAX_ALTERNATIVES)?;
                per_op.push(a);
            }
            alts.push(per_op);
        }
        let setup = after_setup(&*model, &cfg, seed);
        let clients = setup
            .clocks
            .iter()
            .map(|clock| ClientState {
                phase: if cfg.ops == 0 {
                    Phase::Done
                } else {
                    Phase::Idle
                },
                op_index: 0,
                paused_until: 0,
                offset_ms: clock.offset_ms,
                alt: 0,
                ready_since: None,
                hist_index: 0,
                polls: Vec::new(),
            })
            .collect();
        let drift = setup.clocks.iter().map(|c| c.drift_ppm).collect();
        let init = State {
            servers: setup
                .stores
                .into_iter()
                .map(|store| ServerState {
                    store,
                    down_until: None,
                })
                .collect(),
            now: setup.now,
            clients,
            history: Default::default(),
            seq: 0,
            tail: Tail::Marks,
            tail_start: 0,
            faults_used: vec![0; scope.faults.len()],
            last_fault: None,
            halt: setup.failed.map(Halt::SetupFailed),
        };
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
        let mut bridge = Bridge {
            model,
            cfg,
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
            init,
            guard,
        };
        let mut init = bridge.init.clone();
        bridge.settle(&mut init);
        bridge.init = init;
        Ok(bridge)
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
        let alts = self
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
        Bridge {
            model: Arc::clone(&self.model),
            cfg: self.cfg.clone(),
            seed: self.seed,
            kinds: self.kinds.clone(),
            budgets: self.budgets.clone(),
            horizon: self.horizon,
            times: self.times,
            max_op_steps: self.max_op_steps,
            alts,
            seeded: self.seeded,
            drift: self.drift.clone(),
            fair: self.fair,
            init: self.init.clone(),
            guard,
        }
    }

    /// The simulator's judgement of a final state: progress (livelock), the model's
    /// check, or why the path could not be judged.
    pub(crate) fn verdict(&self, s: &State<M::Op, M::Ret>) -> Verdict {
        let stop = match &s.halt {
            None => None,
            Some(Halt::Livelock { client, steps }) => Some(Stop::Livelock {
                client: *client,
                op: format!(
                    "{:?}",
                    s.history.ops[s.clients[*client].hist_index as usize].op
                ),
                steps: *steps,
            }),
            Some(Halt::Foreign { client }) => Some(Stop::Foreign { client: *client }),
            Some(Halt::SetupFailed(why)) => return Verdict::Unknown(why.clone()),
            Some(Halt::Nondeterministic { client }) => {
                return Verdict::Unknown(format!(
                    "client C{client} did not repeat its requests when its operation was \
                     replayed against the same replies: its code depends on something other \
                     than its kv handle (time, randomness, iteration order)"
                ))
            }
        };
        let out = RunOutput::<M> {
            history: s.history.clone(),
            trace: Vec::new(),
            choices: Vec::new(),
            stop,
            steps: 0,
            kv_calls: 0,
            faults_on: self.kinds.clone(),
            faults_used: self
                .kinds
                .iter()
                .zip(&s.faults_used)
                .filter(|(_, &u)| u > 0)
                .map(|(k, _)| *k)
                .collect(),
            // Progress is judged after the last fault. Without times in the state, a
            // fault that lasts (a pause, a downed server) has no end the history can be
            // compared with: such a path is not judged for progress.
            quiet: match s.last_fault {
                None => Some(sim::Quiet::default()),
                Some((seq, _, end)) if self.times => Some(sim::Quiet {
                    seq,
                    ms: end - EPOCH_MS,
                }),
                Some((seq, at, end)) => (end == at).then_some(sim::Quiet { seq, ms: 0 }),
            },
        };
        sim::judge(&*self.model, &out)
    }

    fn fault_view(s: &State<M::Op, M::Ret>) -> impl Iterator<Item = FaultClient> + Clone + '_ {
        s.clients.iter().map(|cl| FaultClient {
            in_op: matches!(cl.phase, Phase::Calling | Phase::Sleeping(_)),
            calling: cl.phase == Phase::Calling,
            finished: cl.phase.finished(),
            crashed: cl.phase == Phase::Crashed,
            paused_until: cl.paused_until,
        })
    }

    /// Every fault the simulator could take in `s` (its enumeration, every kind of the
    /// scope, budgets ignored): what replay choices index.
    pub(crate) fn all_faults(&self, s: &State<M::Op, M::Ret>, out: &mut Vec<FaultAction>) {
        out.clear();
        enumerate_faults(
            &self.kinds,
            &self.cfg,
            s.now,
            s.servers
                .iter()
                .map(|sv| (sv.down_until.is_some(), &sv.store)),
            Self::fault_view(s),
            out,
        );
    }

    fn runnable(&self, s: &State<M::Op, M::Ret>, c: usize) -> bool {
        let cl = &s.clients[c];
        if cl.paused_until > s.now {
            return false;
        }
        match cl.phase {
            Phase::Idle | Phase::Calling => true,
            Phase::Sleeping(until) => until <= s.now,
            Phase::Done | Phase::Crashed => false,
        }
    }

    /// What the simulator's loop does between choices: bring servers back, and when no
    /// client can move, jump time to the next wake-up. Also forgets pauses that are over.
    fn settle(&self, s: &mut State<M::Op, M::Ret>) {
        loop {
            for server in &mut s.servers {
                if server.down_until.is_some_and(|t| t <= s.now) {
                    server.down_until = None;
                }
            }
            for cl in &mut s.clients {
                if cl.paused_until <= s.now {
                    cl.paused_until = 0;
                }
            }
            if s.halt.is_some() || (0..s.clients.len()).any(|c| self.runnable(s, c)) {
                if !self.fair {
                    return;
                }
                // The simulator's fairness clock: since when each client is runnable.
                for c in 0..s.clients.len() {
                    let runnable = self.runnable(s, c);
                    let now = s.now;
                    let cl = &mut s.clients[c];
                    if runnable {
                        cl.ready_since.get_or_insert(now);
                    } else {
                        cl.ready_since = None;
                    }
                }
                // Canonical: with one client runnable and no fault left, the next action
                // steps it (which restarts its clock), whatever its clock says.
                let runnable = (0..s.clients.len())
                    .filter(|&c| self.runnable(s, c))
                    .count();
                let no_fault_left = s.faults_used.iter().zip(&self.budgets).all(|(u, b)| u >= b);
                if runnable <= 1 && no_fault_left {
                    for cl in &mut s.clients {
                        cl.ready_since = None;
                    }
                }
                return;
            }
            for cl in &mut s.clients {
                cl.ready_since = None;
            }
            let next = s
                .clients
                .iter()
                .filter(|c| !c.phase.finished())
                .map(|c| {
                    let ready = match c.phase {
                        Phase::Sleeping(until) => until,
                        _ => s.now,
                    };
                    ready.max(c.paused_until)
                })
                .filter(|&t| t > s.now)
                .min();
            match next {
                Some(t) => s.now = t,
                None => return,
            }
        }
    }

    fn shard_of(&self, cmd: &Command) -> usize {
        // The simulator's placement (FNV-1a of the first key, mixed).
        let n = self.cfg.shards.max(1);
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
                (crate::rng::mix64(h) % n as u64) as usize
            }
            None => 0,
        }
    }

    fn clock(&self, s: &State<M::Op, M::Ret>, c: usize) -> Clock {
        Clock {
            offset_ms: s.clients[c].offset_ms,
            drift_ppm: self.drift[c],
        }
    }

    /// A fresh future of client `c`'s current operation, polled through its recorded
    /// inputs: the client as it was, waiting for its next input.
    fn rebuild(&self, s: &State<M::Op, M::Ret>, c: usize) -> Option<Rebuilt<'_, M::Ret>> {
        let cl = &s.clients[c];
        let index = cl.op_index as usize;
        let handle = SimClient::new(op_rng_seed(self.seed, c, index), EPOCH_MS, self.clock(s, c));
        let model: &M = &self.model;
        let op = self.alts[c][index][cl.alt as usize].0.clone();
        let h = handle.clone();
        let mut future: OpFuture<'_, M::Ret> = Box::pin(async move { model.run(&h, c, &op).await });
        let mut cx = Context::from_waker(Waker::noop());
        let mut request: Option<Request> = None;
        for input in &cl.polls {
            {
                let mut slot = handle.slot.borrow_mut();
                if let Some((t, offset)) = input.clock {
                    slot.true_ms = t;
                    slot.clock.offset_ms = offset;
                }
                slot.reply = match (&input.reply, &request) {
                    (Some(d), Some(Request::Command(cmd))) => Some(d.to_result(cmd)),
                    (None, _) => None,
                    (Some(_), _) => return None,
                };
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

    /// The request client `c` waits on (rebuilt from its recorded inputs): the command it
    /// sent or the sleep it asked for; `None` when it is not inside an operation or did not
    /// repeat its requests. For the Explorer's labels.
    pub(crate) fn pending(&self, s: &State<M::Op, M::Ret>, c: usize) -> Option<Request> {
        match s.clients[c].phase {
            Phase::Calling | Phase::Sleeping(_) => self.rebuild(s, c)?.request,
            _ => None,
        }
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

    /// Client `c` takes its step; `lose`: `Some(false)` loses the request, `Some(true)` the
    /// reply (the simulator's `step_client`).
    fn step_client(&self, s: &mut State<M::Op, M::Ret>, c: usize, lose: Option<bool>) {
        match s.clients[c].phase {
            Phase::Idle => self.start_op(s, c, 0),
            Phase::Calling => {
                let Some(mut rebuilt) = self.rebuild(s, c) else {
                    s.halt = Some(Halt::Nondeterministic { client: c });
                    return;
                };
                let Some(Request::Command(cmd)) = rebuilt.request.take() else {
                    s.halt = Some(Halt::Nondeterministic { client: c });
                    return;
                };
                let shard = self.shard_of(&cmd);
                let delivered = if s.servers[shard].down_until.is_some() {
                    Delivered::Refused(shard)
                } else if lose == Some(false) {
                    Delivered::Timeout
                } else {
                    let reply: Reply = s.servers[shard].store.apply(s.now, &cmd);
                    s.servers[shard].store.take_evicted();
                    if lose == Some(true) {
                        Delivered::Timeout
                    } else {
                        Delivered::Reply(reply)
                    }
                };
                s.now += self.cfg.step_ms;
                rebuilt.handle.slot.borrow_mut().reply = Some(delivered.to_result(&cmd));
                self.poll(s, c, rebuilt, Some(delivered));
            }
            Phase::Sleeping(_) => {
                let Some(rebuilt) = self.rebuild(s, c) else {
                    s.halt = Some(Halt::Nondeterministic { client: c });
                    return;
                };
                self.poll(s, c, rebuilt, None);
            }
            Phase::Done | Phase::Crashed => unreachable!("only runnable clients step"),
        }
    }

    fn start_op(&self, s: &mut State<M::Op, M::Ret>, c: usize, alt: u32) {
        let index = s.clients[c].op_index as usize;
        let hist_index = s.history.ops.len();
        s.clients[c].alt = alt;
        s.history.ops.push(Operation {
            client: c,
            op: self.alts[c][index][alt as usize].0.clone(),
            call: 0,
            ret: None,
            call_ms: self.time(s.now),
            ret_ms: None,
            outcome: Outcome::Unknown,
            marks: Vec::new(),
        });
        let cl = &mut s.clients[c];
        cl.hist_index = hist_index as u32;
        cl.polls.clear();
        self.event(s, hist_index, Tail::Calls);
        let Some(rebuilt) = self.rebuild(s, c) else {
            s.halt = Some(Halt::Nondeterministic { client: c });
            return;
        };
        self.poll(s, c, rebuilt, None);
    }

    /// Polls client `c` once at the current time with `reply` handed over (already put
    /// in its slot), and records what came of it (the simulator's `poll`).
    fn poll(
        &self,
        s: &mut State<M::Op, M::Ret>,
        c: usize,
        mut rebuilt: Rebuilt<'_, M::Ret>,
        reply: Option<Delivered>,
    ) {
        let now = s.now;
        let offset = s.clients[c].offset_ms;
        {
            let mut slot = rebuilt.handle.slot.borrow_mut();
            slot.true_ms = now;
            slot.clock.offset_ms = offset;
            slot.clock_reads = 0;
        }
        let mut cx = Context::from_waker(Waker::noop());
        let polled = rebuilt.future.as_mut().poll(&mut cx);
        let (reads, marks) = {
            let mut slot = rebuilt.handle.slot.borrow_mut();
            (slot.clock_reads, std::mem::take(&mut slot.marks))
        };
        let cl = &mut s.clients[c];
        cl.polls.push(PollInput {
            clock: (reads > 0).then_some((now, offset)),
            reply,
        });
        let steps = cl.polls.len() as u32;
        let hi = cl.hist_index as usize;
        for label in marks {
            s.seq += 1;
            s.tail = Tail::Marks;
            let time_ms = self.time(now);
            s.history.ops[hi].marks.push(Mark {
                label: label.to_string(),
                seq: s.seq,
                time_ms,
            });
        }
        match polled {
            Poll::Ready(result) => {
                self.event(s, hi, Tail::Returns);
                let ret_ms = self.time(now);
                let entry = &mut s.history.ops[hi];
                entry.ret_ms = Some(ret_ms);
                entry.outcome = match result {
                    Ok(r) => Outcome::Ok(r),
                    Err(_) => Outcome::Unknown,
                };
                let cl = &mut s.clients[c];
                cl.polls.clear();
                cl.alt = 0;
                cl.op_index += 1;
                cl.phase = if cl.op_index as usize >= self.cfg.ops {
                    Phase::Done
                } else {
                    Phase::Idle
                };
            }
            Poll::Pending => {
                let request = rebuilt.handle.slot.borrow_mut().request.take();
                match request {
                    Some(Request::Command(_)) => s.clients[c].phase = Phase::Calling,
                    Some(Request::Sleep(ms)) => {
                        let until = now + self.clock(s, c).true_duration(ms).max(1);
                        s.clients[c].phase = Phase::Sleeping(until);
                    }
                    None => {
                        s.halt = Some(Halt::Foreign { client: c });
                        return;
                    }
                }
                if steps > self.cfg.max_steps_per_op {
                    s.halt = Some(Halt::Livelock { client: c, steps });
                }
            }
        }
    }

    /// Virtual time as the history records it: since the epoch, or 0 when the scope
    /// leaves times out of the state.
    fn time(&self, now: u64) -> u64 {
        if self.times {
            now - EPOCH_MS
        } else {
            0
        }
    }

    /// Numbers the invocation (`Tail::Calls`) or return (`Tail::Returns`) of operation
    /// `op` in the history's event order. A run of adjacent invocations (or of adjacent
    /// returns) is kept sorted by client: their order is invisible to any check that
    /// compares returns with invocations (precedence) and marks with marks, and sorting
    /// it merges interleavings that differ only there.
    fn event(&self, s: &mut State<M::Op, M::Ret>, op: usize, kind: Tail) {
        s.seq += 1;
        let pos = |o: &Operation<M::Op, M::Ret>| match kind {
            Tail::Calls => Some(o.call),
            _ => o.ret,
        };
        let start = if s.tail == kind { s.tail_start } else { s.seq };
        let mut run: Vec<usize> = (0..s.history.ops.len())
            .filter(|&i| i != op && pos(&s.history.ops[i]).is_some_and(|p| p >= start))
            .collect();
        run.push(op);
        run.sort_by_key(|&i| s.history.ops[i].client);
        for (k, &i) in run.iter().enumerate() {
            let seq = start + k as u64;
            match kind {
                Tail::Calls => s.history.ops[i].call = seq,
                _ => s.history.ops[i].ret = Some(seq),
            }
        }
        if kind == Tail::Calls && run.len() > 1 {
            // The run's operations are the history's last ones, their clients all inside
            // them: keep the history sorted by invocation.
            let first = s.history.ops.len() - run.len();
            s.history.ops[first..].sort_by_key(|o| o.call);
            for i in first..s.history.ops.len() {
                let c = s.history.ops[i].client;
                s.clients[c].hist_index = i as u32;
            }
        }
        s.tail = kind;
        s.tail_start = start;
    }

    /// Applies a fault (the simulator's `apply_fault`).
    fn apply_fault(&self, s: &mut State<M::Op, M::Ret>, action: FaultAction) {
        if let Some(k) = self.kinds.iter().position(|k| *k == action.kind()) {
            s.faults_used[k] += 1;
        }
        let lasts_ms = match action {
            FaultAction::Pause(_, ms) => ms,
            FaultAction::ShardDown(_) => self.cfg.shard_down_ms,
            _ => 0,
        };
        match action {
            FaultAction::Evict(shard, key) => {
                s.servers[shard].store.evict(&key);
            }
            FaultAction::AdvanceTime => {
                let next = s
                    .servers
                    .iter()
                    .filter_map(|sv| sv.store.next_expiry_ms(s.now))
                    .min();
                s.now = next.unwrap_or(s.now + 1000).max(s.now + 1);
            }
            FaultAction::ClockJump(c, by_ms) => s.clients[c].offset_ms += by_ms,
            FaultAction::Restart(shard) => s.servers[shard].store.restart(s.now),
            FaultAction::Crash(c) => {
                // As the simulator: the crashed operation gets a `crash` mark.
                s.seq += 1;
                s.tail = Tail::Marks;
                let hi = s.clients[c].hist_index as usize;
                let time_ms = self.time(s.now);
                s.history.ops[hi].marks.push(Mark {
                    label: "crash".to_string(),
                    seq: s.seq,
                    time_ms,
                });
                let cl = &mut s.clients[c];
                cl.phase = Phase::Crashed;
                cl.polls.clear();
            }
            FaultAction::LoseRequest(c) => self.step_client(s, c, Some(false)),
            FaultAction::LoseReply(c) => self.step_client(s, c, Some(true)),
            FaultAction::Pause(c, ms) => s.clients[c].paused_until = s.now + ms,
            FaultAction::ShardDown(shard) => {
                s.servers[shard].down_until = Some(s.now + self.cfg.shard_down_ms);
                let cfg = s.servers[shard].store.config().clone();
                s.servers[shard].store = crate::store::Store::new(cfg, s.now);
            }
        }
        let end = s
            .last_fault
            .map_or(0, |(_, _, end)| end)
            .max(s.now + lasts_ms);
        s.last_fault = Some((s.seq, s.now, end));
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

    /// Which of the scope's bounds cuts this state, if one does: past the time horizon,
    /// or an operation past its step bound. A final state is never cut.
    pub(crate) fn cut(&self, s: &State<M::Op, M::Ret>) -> Option<Cut> {
        if s.is_final() {
            None
        } else if s.now > self.horizon {
            Some(Cut::Horizon)
        } else if s
            .clients
            .iter()
            .any(|c| c.polls.len() as u32 > self.max_op_steps)
        {
            Some(Cut::Steps)
        } else {
            None
        }
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
        let starved = (0..s.clients.len())
            .filter(|&c| self.runnable(s, c))
            .filter_map(|c| s.clients[c].ready_since.map(|t| (t, c)))
            .filter(|&(t, _)| s.now - t > self.cfg.starve_ms)
            .min()
            .map(|(_, c)| c);
        for c in 0..s.clients.len() {
            if starved.is_some_and(|x| x != c) {
                continue;
            }
            if self.runnable(s, c) {
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
                    .position(|k| *k == f.kind())
                    .expect("only the scope's kinds are enumerated");
                if s.faults_used[k] < self.budgets[k] {
                    actions.push(Action::Fault(f));
                }
            }
        }
    }

    fn next_state(&self, s: &Self::State, action: Action) -> Option<Self::State> {
        let mut next = s.clone();
        match action {
            Action::Start(c, _, alt) => {
                next.clients[c].ready_since = None;
                self.start_op(&mut next, c, alt)
            }
            Action::Step(c) => {
                next.clients[c].ready_since = None;
                self.step_client(&mut next, c, None)
            }
            Action::Fault(f) => self.apply_fault(&mut next, f),
        }
        self.settle(&mut next);
        Some(next)
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
                None if s.is_final() => b.verdict(s) == Verdict::Ok,
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
