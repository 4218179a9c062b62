//! The world: the one executor both drivers step. Servers, virtual time, each client's
//! executor status, the faults used, the last fault and the history, as one value, with
//! its transitions (deliver a client's command or wake it, start an operation, apply a
//! fault, and settle between steps: servers back up, time jumps to the next wake-up).
//!
//! The world does not hold the clients' code. How a client is polled is its driver's
//! ([`Clients`]): the simulator's runner keeps live futures; the stateright bridge rebuilds
//! each future from the inputs of its recorded polls, which it keeps in the world's
//! per-client record `R`. What happens is told to an optional [`Sink`] (the simulator's
//! trace and counters).
//!
//! Which faults the world can take at a step, and what applying one does, are
//! `world/faults.rs`'s (the fault vocabulary itself is `crate::fault`).

use super::client::{ClientClock, Wait};
use super::config::{SimConfig, EPOCH_MS};
use super::neighbour::{neighbour_apply, NEIGHBOUR_PREFIX};
use super::trace::{Delivery, Event, Fault};
use crate::command::{Command, Reply};
use crate::history::{History, Mark, Operation, Outcome};
use crate::kv::KvError;
use crate::rng::mix64;
use crate::scenario::FaultKind;
use crate::store::geometry::SlabClass;
use crate::store::Store;
use std::borrow::Borrow;
use std::fmt::Debug;
use std::marker::PhantomData;
use std::sync::Arc;

mod faults;

/// Where a client is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum Phase {
    /// Between operations (its next one not started).
    Idle,
    /// Parked on a KV command.
    Calling,
    /// Asleep until this true time.
    Sleeping(u64),
    /// Its request or reply was lost (or is late): at this true time its timeout runs
    /// out and it sees the timeout ([`SimConfig::timeout_ms`]).
    TimingOut(u64),
    /// All its operations done.
    Done,
    /// Crashed: never runs again.
    Crashed,
}

impl<R> ClientState<R> {
    /// Whether the client can take a step at true time `now`.
    #[inline]
    pub(crate) fn runnable_at(&self, now: u64) -> bool {
        if self.paused_until > now {
            return false;
        }
        match self.phase {
            Phase::Idle | Phase::Calling => true,
            Phase::Sleeping(until) | Phase::TimingOut(until) => until <= now,
            Phase::Done | Phase::Crashed => false,
        }
    }
}

impl Phase {
    /// Done or crashed.
    pub(crate) fn finished(self) -> bool {
        matches!(self, Phase::Done | Phase::Crashed)
    }
}

/// One client's executor status.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct ClientState<R> {
    pub phase: Phase,
    pub op_index: u32,
    /// 0 unless a pause is in force.
    pub paused_until: u64,
    /// The clock's current offset (its drift is fixed per client: [`Rules::drift`]).
    pub offset_ms: i64,
    /// Since when (true time) it has been runnable without being stepped (the
    /// simulator's fairness: [`SimConfig::starve_ms`]); kept only under [`Rules::fair`].
    pub ready_since: Option<u64>,
    /// The current operation's index in the history.
    pub hist_index: u32,
    /// The driver's record of the current operation (the bridge: its poll inputs).
    pub rec: R,
}

/// One server.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(crate) struct ServerState {
    pub store: Store,
    pub down_until: Option<u64>,
}

/// The kind of the history's trailing run of events.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum Tail {
    /// Invocations.
    Calls,
    /// Returns.
    Returns,
    /// A mark (or nothing yet).
    Marks,
}

/// Why a world stopped early.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(crate) enum Halt {
    /// A client exceeded the step bound of one operation.
    Livelock { client: usize, steps: u32 },
    /// A client awaited something other than its kv handle.
    Foreign { client: usize },
    /// A client's operation failed on a command the client or server refused.
    Refused { client: usize, error: String },
    /// The model's setup failed.
    SetupFailed(String),
    /// Replaying a client's recorded inputs did not give the same requests: its code
    /// depends on something other than its kv handle.
    Nondeterministic { client: usize },
}

/// What came back for a command (the error texts are rebuilt from the command).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(crate) enum Delivered {
    /// The store's reply.
    Reply(Reply),
    /// The request or the reply was lost: a timeout.
    Timeout,
    /// The server was down.
    Refused(usize),
}

impl Delivered {
    /// What the client sees for `command`.
    pub(crate) fn to_result(&self, command: &Command) -> Result<Reply, KvError> {
        self.clone().into_result(command)
    }

    /// What the client sees for `command`, taking the reply.
    #[inline]
    pub(crate) fn into_result(self, command: &Command) -> Result<Reply, KvError> {
        match self {
            Delivered::Reply(r) => Ok(r),
            Delivered::Timeout => Err(KvError::Timeout {
                command: command.to_string(),
            }),
            Delivered::Refused(shard) => Err(KvError::ServerGone {
                server: format!("s{shard}"),
                command: command.to_string(),
                detail: "connection refused".into(),
            }),
        }
    }
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
    /// A client's operation failed on a command of its own that the client library or the
    /// server refused ([`KvError::is_refusal`]): a defect of the structure.
    Refused {
        /// The client.
        client: usize,
        /// Its operation's index in the history.
        index: usize,
        /// Its operation, rendered.
        op: String,
        /// The error, rendered.
        error: String,
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

/// The fixed rules a world is stepped under (the same for every state of one run or
/// search).
#[derive(Clone, Copy)]
pub(crate) struct Rules<'a> {
    /// The simulator's knobs (step time, step bound per operation, fault parameters,
    /// which operations each client runs).
    pub cfg: &'a SimConfig,
    /// The fault kinds [`World::faults_used`] counts, in its order.
    pub kinds: &'a [FaultKind],
    /// Each client's clock drift.
    pub drift: &'a [i64],
    /// Whether the history records virtual times (else every time is 0).
    pub times: bool,
    /// Whether adjacent invocations (or returns) are numbered in client order (see
    /// [`World::event`]); else in the order they happen.
    pub canonical: bool,
    /// Whether the world keeps since when each client is runnable
    /// ([`ClientState::ready_since`]).
    pub fair: bool,
    /// The noisy neighbour's slab classes ([`super::neighbour_classes`] of `cfg`, listed
    /// once: the neighbour writes after every delivery).
    pub neighbour: &'a [(SlabClass, usize)],
}

/// What polling a client gave.
#[derive(Clone)]
pub(crate) enum Polled<Ret> {
    /// Its operation returned: its result (`None`: an error, whose outcome is unknown).
    Ready(Option<Ret>),
    /// Its operation failed on a command of its own that was refused
    /// ([`KvError::is_refusal`]): the error, rendered.
    Refused(String),
    /// It sent a command and waits for the reply.
    Calling,
    /// It waits this many ms by its own clock (a sleep, or its structure's work).
    Sleep(u64, Wait),
    /// It awaited something other than its kv handle.
    Foreign,
    /// Its recorded inputs did not give the same requests again.
    Nondeterministic,
}

/// What polling a client gave, and the marks it made.
pub(crate) type Polling<Ret> = (Polled<Ret>, Vec<&'static str>);

/// One poll of a client: at true time `now`, its clock reading `clock` (what came back
/// for its command, if anything, was handed over before: [`Clients::deliver`]).
pub(crate) struct PollAt {
    pub now: u64,
    pub clock: ClientClock,
}

/// Where an operation starts: its client's workload index (`from`: the index the client
/// was at; operations in between are left out of this run) and its position among the
/// run's operation starts (`ordinal`, from 0).
#[derive(Clone, Copy, Debug)]
pub(crate) struct OpStart {
    pub from: usize,
    pub index: usize,
    pub ordinal: usize,
}

/// A command as a world's clients hand it over: owned by the simulator's clients, which
/// build it for this call, and shared by the explorer's, which memoize it per node.
pub(crate) trait CommandRef: std::borrow::Borrow<Command> + From<Command> {
    /// The command itself, owned.
    fn into_command(self) -> Command;
}

impl CommandRef for Command {
    fn into_command(self) -> Command {
        self
    }
}

impl CommandRef for Arc<Command> {
    fn into_command(self) -> Command {
        Arc::unwrap_or_clone(self)
    }
}

/// How a world's clients run: the driver that holds (or rebuilds) their code.
pub(crate) trait Clients<Op, Ret, R> {
    /// How the clients hand over a command.
    type Cmd: CommandRef;
    /// Client `c` starts an operation where `at` says: its record is reset and its code
    /// made ready. Returns the operation.
    fn start(&mut self, c: usize, at: OpStart, cl: &mut ClientState<R>) -> Op;
    /// The command client `c` is parked on; `None` when it did not repeat its requests.
    fn command(&mut self, c: usize, cl: &ClientState<R>) -> Option<Self::Cmd>;
    /// Hands client `c` what came back for its command `cmd`, for the poll that follows
    /// (a poll without a delivery before it is a first poll or a wake-up).
    fn deliver(&mut self, c: usize, delivered: Delivered, cmd: Self::Cmd);
    /// [`Clients::deliver`] of a reply: what nearly every call gets, handed over as the
    /// store made it (a driver may keep it without wrapping it first).
    #[inline]
    fn deliver_reply(&mut self, c: usize, reply: Reply, cmd: Self::Cmd) {
        self.deliver(c, Delivered::Reply(reply), cmd);
    }
    /// Client `c`'s timeout ran out: the timeout it was handed with [`Clients::deliver`]
    /// when its call went unanswered is what the poll that follows sees.
    fn time_out(&mut self, c: usize, cl: &ClientState<R>);
    /// Polls client `c` once, as `at` says: returns what came of it and the marks it made.
    fn poll(&mut self, c: usize, cl: &mut ClientState<R>, at: PollAt) -> Polling<Ret>;
    /// How many polls client `c`'s current operation took.
    fn steps(&self, cl: &ClientState<R>) -> u32;
    /// Client `c`'s operation ended: it returned (`returned`) or crashed.
    fn end(&mut self, c: usize, cl: &mut ClientState<R>, returned: bool);
}

/// Where a world tells what happens (the simulator's trace and counters). `()` wants
/// nothing.
pub(crate) trait Sink {
    /// Whether it wants events ([`Sink::event`] is called only then).
    fn on(&self) -> bool {
        false
    }
    /// Something happened at true time `now`.
    fn event(&mut self, _now: u64, _client: Option<usize>, _event: Event) {}
    /// A command was delivered (applied, lost or refused).
    fn kv_call(&mut self) {}
    /// `command` was applied to the store of `shard` (a client's, or a late request's),
    /// which replied `reply`.
    fn applied(&mut self, _shard: usize, _command: &Command, _reply: &Reply) {}
    /// The store of `shard` evicted these items to make room.
    fn evicted(&mut self, _now: u64, _shard: usize, _items: Vec<crate::store::geometry::Eviction>) {
    }
}

impl Sink for () {}

/// Where a world keeps its history: shared between the states a search clones until one
/// of them records an event (`Arc`, copy on write), or a simulator's run's own (`Box`: an
/// edit is a plain borrow: the profile showed `Arc::make_mut`'s two atomic operations at
/// every event of a run, and without them `kvsim bench sim` is 5 % faster). Sealed: these
/// two are the cells.
pub trait HistoryCell<Op, Ret>:
    sealed::Sealed + Clone + std::ops::Deref<Target = History<Op, Ret>>
{
    /// A cell holding `history`.
    fn hold(history: History<Op, Ret>) -> Self;
    /// The history, to edit (a shared one is copied first if another state holds it).
    fn edit(&mut self) -> &mut History<Op, Ret>;
    /// The history as a search keeps it (an `Arc`: a shared one as it is, the same
    /// allocation; a run's own moved into one).
    fn into_shared(self) -> Arc<History<Op, Ret>>;
}

mod sealed {
    /// Only kvsim's history cells are [`super::HistoryCell`]s.
    pub trait Sealed {}
    impl<T> Sealed for std::sync::Arc<T> {}
    impl<T> Sealed for Box<T> {}
}

impl<Op: Clone, Ret: Clone> HistoryCell<Op, Ret> for Arc<History<Op, Ret>> {
    fn hold(history: History<Op, Ret>) -> Self {
        Arc::new(history)
    }
    fn edit(&mut self) -> &mut History<Op, Ret> {
        Arc::make_mut(self)
    }
    fn into_shared(self) -> Arc<History<Op, Ret>> {
        self
    }
}

impl<Op: Clone, Ret: Clone> HistoryCell<Op, Ret> for Box<History<Op, Ret>> {
    fn hold(history: History<Op, Ret>) -> Self {
        Box::new(history)
    }
    fn edit(&mut self) -> &mut History<Op, Ret> {
        self
    }
    fn into_shared(self) -> Arc<History<Op, Ret>> {
        Arc::new(*self)
    }
}

/// The world: a value (cloned, hashed and compared by the explorer; the explored world's
/// hash, which renames cas uniques, is in `explore/canon.rs`). `H`: where it keeps its
/// history ([`HistoryCell`]; the explorer's worlds share it).
#[derive(Clone, PartialEq, Eq)]
pub struct World<Op, Ret, R, H = Arc<History<Op, Ret>>> {
    pub(crate) servers: Vec<ServerState>,
    pub(crate) now: u64,
    pub(crate) clients: Vec<ClientState<R>>,
    /// The history so far ([`HistoryCell`]).
    pub(crate) history: H,
    /// The history's operation and result types (which `H` holds).
    pub(crate) history_types: PhantomData<fn() -> (Op, Ret)>,
    pub(crate) seq: u64,
    /// What the last events of the history are (see [`World::event`]).
    pub(crate) tail: Tail,
    /// The first event of the trailing run of invocations or returns.
    pub(crate) tail_start: u64,
    /// Faults applied, per kind of [`Rules::kinds`].
    pub(crate) faults_used: Vec<u32>,
    /// The last fault so far: its event position, its true time, and the true time its
    /// effect ends (a pause's end, a downed server's return; the latest of all faults).
    pub(crate) last_fault: Option<(u64, u64, u64)>,
    pub(crate) halt: Option<Halt>,
    /// Requests the `delay` fault holds back, in the order they land.
    pub(crate) in_flight: Vec<InFlight>,
    /// The explorer's, false in the simulator's runs: this state is one of a time-free
    /// search, whose state identity takes every time relative to `now` (see
    /// `explore::canon`). Nothing the world does reads it.
    pub(crate) time_free: bool,
    /// The explorer's cache of each history operation's digest, one per operation when
    /// kept (see `explore::canon`), empty in the simulator's runs. Nothing the world does
    /// reads it.
    pub(crate) op_digests: Arc<[u64]>,
}

/// A request on its way to a server, late (the `delay` fault): its client has timed out.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(crate) struct InFlight {
    /// When it lands (true time).
    pub at: u64,
    pub shard: usize,
    pub command: Command,
    /// Who sent it (for the trace only: nobody waits for its reply).
    pub client: usize,
}

/// The seed of the random stream of client `c`'s operation number `index` in a run
/// seeded `seed`.
pub(crate) fn op_rng_seed(seed: u64, c: usize, index: usize) -> u64 {
    mix64(seed ^ mix64(((c as u64) << 32) | index as u64 | 1 << 63))
}

/// The seed of the random stream an operation's kv handle draws from: by client and
/// workload index ([`op_rng_seed`]), or, under [`SimConfig::rng_by_start`], by the
/// operation's `ordinal` among the run's operation starts (so that the numbers drawn do
/// not tell clients apart).
pub(crate) fn handle_rng_seed(
    cfg: &SimConfig,
    seed: u64,
    c: usize,
    index: usize,
    ordinal: usize,
) -> u64 {
    if cfg.rng_by_start {
        mix64(seed ^ mix64(ordinal as u64 | 1 << 62))
    } else {
        op_rng_seed(seed, c, index)
    }
}

impl<Op: Clone + Debug, Ret: Clone + Debug, R, H: HistoryCell<Op, Ret>> World<Op, Ret, R, H> {
    /// A fresh world for `cfg`: empty servers at the epoch, one client per clock offset,
    /// `kinds` fault kinds counted, each client's record `rec()`.
    pub(crate) fn new(
        cfg: &SimConfig,
        offsets: &[i64],
        kinds: usize,
        mut rec: impl FnMut() -> R,
    ) -> Self {
        let store_config = cfg.store_config();
        World {
            servers: (0..cfg.shards.max(1))
                .map(|_| ServerState {
                    store: Store::new(store_config.clone(), EPOCH_MS),
                    down_until: None,
                })
                .collect(),
            now: EPOCH_MS,
            clients: offsets
                .iter()
                .enumerate()
                .map(|(c, &offset_ms)| ClientState {
                    phase: if cfg.next_op(c, 0).is_none() {
                        Phase::Done
                    } else {
                        Phase::Idle
                    },
                    op_index: 0,
                    paused_until: 0,
                    offset_ms,
                    ready_since: None,
                    hist_index: 0,
                    rec: rec(),
                })
                .collect(),
            // Room for the operations a full run records (bounded: a long run grows it).
            history: H::hold(History {
                ops: Vec::with_capacity(cfg.clients.saturating_mul(cfg.ops).min(1024)),
            }),
            history_types: PhantomData,
            seq: 0,
            tail: Tail::Marks,
            tail_start: 0,
            faults_used: vec![0; kinds],
            last_fault: None,
            halt: None,
            in_flight: Vec::new(),
            time_free: false,
            op_digests: Arc::from(Vec::new()),
        }
    }

    /// The same world with each client's record replaced by `rec(old)`, its history in
    /// an `Arc`, as a search keeps it ([`HistoryCell::into_shared`]).
    pub(crate) fn map_records<S>(self, mut rec: impl FnMut(R) -> S) -> World<Op, Ret, S> {
        World {
            servers: self.servers,
            now: self.now,
            clients: self
                .clients
                .into_iter()
                .map(|cl| ClientState {
                    phase: cl.phase,
                    op_index: cl.op_index,
                    paused_until: cl.paused_until,
                    offset_ms: cl.offset_ms,
                    ready_since: cl.ready_since,
                    hist_index: cl.hist_index,
                    rec: rec(cl.rec),
                })
                .collect(),
            history: self.history.into_shared(),
            history_types: PhantomData,
            seq: self.seq,
            tail: self.tail,
            tail_start: self.tail_start,
            faults_used: self.faults_used,
            last_fault: self.last_fault,
            halt: self.halt,
            in_flight: self.in_flight,
            time_free: self.time_free,
            op_digests: self.op_digests,
        }
    }

    /// Every client is done or crashed, or the world stopped early: the history is final.
    pub(crate) fn is_final(&self) -> bool {
        self.halt.is_some() || self.all_finished()
    }

    /// Every client is done or crashed.
    pub(crate) fn all_finished(&self) -> bool {
        self.clients.iter().all(|c| c.phase.finished())
    }

    /// Every client completed every operation.
    pub(crate) fn all_done(&self) -> bool {
        self.halt.is_none() && self.clients.iter().all(|c| c.phase == Phase::Done)
    }

    /// Whether client `c` can take a step now.
    pub(crate) fn runnable(&self, c: usize) -> bool {
        self.clients[c].runnable_at(self.now)
    }

    /// Client `c`'s clock.
    pub(crate) fn clock(&self, rules: Rules, c: usize) -> ClientClock {
        ClientClock {
            offset_ms: self.clients[c].offset_ms,
            drift_ppm: rules.drift[c],
        }
    }

    /// The server a command goes to (FNV-1a of its first key, mixed).
    pub(crate) fn shard_of(&self, cmd: &Command) -> usize {
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

    /// Virtual time as the history records it: since the epoch, or 0 when the rules
    /// leave times out.
    fn time(&self, rules: Rules) -> u64 {
        if rules.times {
            self.now - EPOCH_MS
        } else {
            0
        }
    }

    /// The earliest true time after now at which a client becomes runnable or a late
    /// request lands.
    fn next_wake(&self) -> Option<u64> {
        self.clients
            .iter()
            .filter(|c| !c.phase.finished())
            .map(|c| {
                let ready = match c.phase {
                    Phase::Sleeping(until) | Phase::TimingOut(until) => until,
                    _ => self.now,
                };
                ready.max(c.paused_until)
            })
            .chain(self.in_flight.iter().map(|f| f.at))
            .filter(|&t| t > self.now)
            .min()
    }

    /// Applies `command` to server `shard` now, then lets the noisy neighbour
    /// ([`SimConfig::neighbour_bytes`]) write; the sink hears of the structure's keys its
    /// LRU evicted (the neighbour's own are not news).
    fn apply(
        &mut self,
        rules: Rules,
        shard: usize,
        command: &Command,
        sink: &mut impl Sink,
    ) -> Reply {
        let store = &mut self.servers[shard].store;
        let reply = store.apply(self.now, command);
        sink.applied(shard, command, &reply);
        let neighbour = neighbour_apply(store, self.now, rules.cfg, rules.neighbour);
        let evicted = if neighbour {
            store.take_evicted_except(NEIGHBOUR_PREFIX)
        } else {
            store.take_evicted()
        };
        if !evicted.is_empty() {
            sink.evicted(self.now, shard, evicted);
        }
        reply
    }

    /// Servers whose outage is over come back.
    #[inline(never)]
    fn servers_back(&mut self, sink: &mut impl Sink) {
        let now = self.now;
        for (shard, server) in self.servers.iter_mut().enumerate() {
            if server.down_until.is_some_and(|t| t <= now) {
                server.down_until = None;
                if sink.on() {
                    sink.event(now, None, Event::Fault(Fault::ShardUp { shard }));
                }
            }
        }
    }

    /// Delivers the late requests whose time has come: each is applied to its server (if
    /// it is up), and nobody sees the reply.
    #[inline(never)]
    fn land(&mut self, rules: Rules, sink: &mut impl Sink) {
        while self.in_flight.first().is_some_and(|f| f.at <= self.now) {
            let InFlight {
                shard,
                command,
                client,
                ..
            } = self.in_flight.remove(0);
            let delivery = if self.servers[shard].down_until.is_some() {
                Delivery::ServerDown
            } else {
                Delivery::Late(self.apply(rules, shard, &command, sink))
            };
            if sink.on() {
                let event = Event::Call {
                    shard,
                    command,
                    delivery,
                };
                sink.event(self.now, Some(client), event);
            }
        }
    }

    /// What happens between steps: servers whose outage is over come back, pauses that
    /// are over are forgotten, and while no client can move, time jumps to the next
    /// wake-up. Under [`Rules::fair`], since when each client is runnable. `runnable`: the
    /// clients that can step now.
    pub(crate) fn settle(&mut self, rules: Rules, sink: &mut impl Sink, runnable: &mut Vec<usize>) {
        self.settle_oldest(rules, sink, runnable);
    }

    /// [`World::settle`], returning the runnable client that has waited longest (since
    /// when, and the lowest index among equals), if any waits: [`World::starved`] of
    /// `runnable` is that client if it has waited longer than the bound (none else can
    /// have), so the simulator asks no second pass over the clients at every step.
    pub(crate) fn settle_oldest(
        &mut self,
        rules: Rules,
        sink: &mut impl Sink,
        runnable: &mut Vec<usize>,
    ) -> Option<(u64, usize)> {
        loop {
            // Downed servers and late requests are rare: their work is out of line (the
            // profile showed this function's set-up for them at every step).
            if self.servers.iter().any(|s| s.down_until.is_some()) {
                self.servers_back(sink);
            }
            if !self.in_flight.is_empty() {
                self.land(rules, sink);
            }
            let now = self.now;
            runnable.clear();
            let mut oldest: Option<(u64, usize)> = None;
            // One pass: under the fairness rule, a runnable client keeps since when it is
            // runnable, and any other forgets it (when none is runnable, all forget it
            // below in any case).
            for (c, cl) in self.clients.iter_mut().enumerate() {
                if cl.paused_until <= now {
                    cl.paused_until = 0;
                }
                if cl.runnable_at(now) {
                    runnable.push(c);
                    if rules.fair {
                        cl.ready_since.get_or_insert(now);
                    }
                    if let Some(t) = cl.ready_since {
                        if oldest.is_none_or(|(best, _)| t < best) {
                            oldest = Some((t, c));
                        }
                    }
                } else if rules.fair {
                    cl.ready_since = None;
                }
            }
            if self.halt.is_some() || !runnable.is_empty() {
                return oldest;
            }
            for cl in &mut self.clients {
                cl.ready_since = None;
            }
            match self.next_wake() {
                Some(t) => self.now = t,
                None => return None,
            }
        }
    }

    /// The client of `runnable` that has waited longest, if it has waited longer than the
    /// fairness bound ([`SimConfig::starve_ms`]): it steps now, and nothing else happens.
    pub(crate) fn starved(
        &self,
        rules: Rules,
        runnable: impl Iterator<Item = usize>,
    ) -> Option<usize> {
        // The longest wait, the lowest index among equals (a plain loop: this runs at
        // every step).
        let mut longest: Option<(u64, usize)> = None;
        for c in runnable {
            let Some(t) = self.clients[c].ready_since else {
                continue;
            };
            if self.now.saturating_sub(t) > rules.cfg.starve_ms
                && longest.is_none_or(|best| (t, c) < best)
            {
                longest = Some((t, c));
            }
        }
        longest.map(|(_, c)| c)
    }

    /// Whether client `c` may take the step the fairness rule forces when
    /// [`World::starved`] names `forced`: it is `forced` or has waited exactly as long
    /// (a tie, which the rule breaks by the lowest index; a replay or a search that treats
    /// clients as interchangeable may break it either way).
    pub(crate) fn ties_with(&self, forced: usize, c: usize) -> bool {
        c == forced
            || (self.clients[c].ready_since.is_some()
                && self.clients[c].ready_since == self.clients[forced].ready_since)
    }

    /// Takes one step of client `c`: starts its next operation, delivers its pending
    /// command (and resumes it until its next call), or wakes it. `lose`: `Some(false)`
    /// loses the request, `Some(true)` the reply.
    pub(crate) fn step(
        &mut self,
        rules: Rules,
        c: usize,
        lose: Option<bool>,
        clients: &mut impl Clients<Op, Ret, R>,
        sink: &mut impl Sink,
    ) {
        match self.clients[c].phase {
            Phase::Idle => self.start_op(rules, c, clients, sink),
            Phase::Calling => {
                let Some(handed) = clients.command(c, &self.clients[c]) else {
                    self.halt = Some(Halt::Nondeterministic { client: c });
                    return;
                };
                let cmd: &Command = handed.borrow();
                let shard = self.shard_of(cmd);
                sink.kv_call();
                // A call that is answered, with nothing recorded: the reply goes straight to
                // the client (what follows does the same, with the trace's delivery and the
                // losses; the profile showed the reply's copies into `Delivered` and out
                // again stall on loads of what was just stored).
                if lose.is_none() && !sink.on() && self.servers[shard].down_until.is_none() {
                    let reply = self.apply(rules, shard, cmd, sink);
                    self.now += rules.cfg.step_ms;
                    clients.deliver_reply(c, reply, handed);
                    self.poll(rules, c, clients, sink);
                    return;
                }
                // The trace's delivery only when the sink is on (the profile showed making
                // and dropping one at every call).
                let (delivered, delivery) = if self.servers[shard].down_until.is_some() {
                    (Delivered::Refused(shard), Some(Delivery::ServerDown))
                } else if lose == Some(false) {
                    (Delivered::Timeout, Some(Delivery::RequestLost))
                } else {
                    let reply = self.apply(rules, shard, cmd, sink);
                    if lose == Some(true) {
                        (Delivered::Timeout, Some(Delivery::ReplyLost(reply)))
                    } else if sink.on() {
                        (
                            Delivered::Reply(reply.clone()),
                            Some(Delivery::Replied(reply)),
                        )
                    } else {
                        (Delivered::Reply(reply), None)
                    }
                };
                if sink.on() {
                    if let Some(delivery) = delivery {
                        let command = cmd.clone();
                        let event = Event::Call {
                            shard,
                            command,
                            delivery,
                        };
                        sink.event(self.now, Some(c), event);
                    }
                }
                self.now += rules.cfg.step_ms;
                let timed_out = matches!(delivered, Delivered::Timeout);
                clients.deliver(c, delivered, handed);
                if timed_out {
                    self.time_out(rules, c, clients, sink);
                } else {
                    self.poll(rules, c, clients, sink);
                }
            }
            Phase::Sleeping(_) => self.poll(rules, c, clients, sink),
            Phase::TimingOut(_) => {
                clients.time_out(c, &self.clients[c]);
                self.poll(rules, c, clients, sink);
            }
            Phase::Done | Phase::Crashed => unreachable!("only runnable clients step"),
        }
    }

    /// Client `c`'s call got no reply (it was handed the timeout): it sees it now, or
    /// after its timeout ([`SimConfig::timeout_ms`]) while the world goes on.
    fn time_out(
        &mut self,
        rules: Rules,
        c: usize,
        clients: &mut impl Clients<Op, Ret, R>,
        sink: &mut impl Sink,
    ) {
        match rules.cfg.timeout_ms {
            0 => self.poll(rules, c, clients, sink),
            ms => self.clients[c].phase = Phase::TimingOut(self.now + ms),
        }
    }

    fn start_op(
        &mut self,
        rules: Rules,
        c: usize,
        clients: &mut impl Clients<Op, Ret, R>,
        sink: &mut impl Sink,
    ) {
        let from = self.clients[c].op_index as usize;
        let index = rules
            .cfg
            .next_op(c, from)
            .expect("an idle client has an operation left");
        self.clients[c].op_index = index as u32;
        let hist_index = self.history.ops.len();
        let at = OpStart {
            from,
            index,
            ordinal: hist_index,
        };
        let op = clients.start(c, at, &mut self.clients[c]);
        if sink.on() {
            let event = Event::Invoke {
                op: format!("{op:?}"),
            };
            sink.event(self.now, Some(c), event);
        }
        let call_ms = self.time(rules);
        self.clients[c].hist_index = hist_index as u32;
        self.event(rules, hist_index, Tail::Calls, |ops| {
            ops.push(Operation {
                client: c,
                op,
                call: 0,
                ret: None,
                call_ms,
                ret_ms: None,
                outcome: Outcome::Unknown,
                marks: Vec::new(),
            })
        });
        self.poll(rules, c, clients, sink);
    }

    /// Polls client `c` once at the current time (with what was delivered to it since
    /// its last poll), and records what came of it.
    fn poll(
        &mut self,
        rules: Rules,
        c: usize,
        clients: &mut impl Clients<Op, Ret, R>,
        sink: &mut impl Sink,
    ) {
        let now = self.now;
        let clock = self.clock(rules, c);
        let at = PollAt { now, clock };
        let (mut polled, marks) = clients.poll(c, &mut self.clients[c], at);
        if let Polled::Nondeterministic = polled {
            self.halt = Some(Halt::Nondeterministic { client: c });
            return;
        }
        let hi = self.clients[c].hist_index as usize;
        for label in marks {
            self.seq += 1;
            self.tail = Tail::Marks;
            let mark = Mark {
                label: label.into(),
                seq: self.seq,
                time_ms: self.time(rules),
            };
            self.history.edit().ops[hi].marks.push(mark);
            if sink.on() {
                let label = label.to_string();
                sink.event(now, Some(c), Event::Mark { label });
            }
        }
        // A refused command ends its operation as any error does (outcome unknown), and
        // then the run: the structure has shown its defect.
        // (Taken out in place: the profile showed the poll's result, moved into a new
        // pair, stall on a load of what the poll had just stored.)
        let refused = match &mut polled {
            Polled::Refused(error) => Some(std::mem::take(error)),
            _ => None,
        };
        if refused.is_some() {
            polled = Polled::Ready(None);
        }
        let until = match polled {
            Polled::Ready(result) => {
                let ret_ms = self.time(rules);
                self.event(rules, hi, Tail::Returns, |ops| {
                    let entry = &mut ops[hi];
                    entry.ret_ms = Some(ret_ms);
                    entry.outcome = match result {
                        Some(r) => Outcome::Ok(r),
                        None => Outcome::Unknown,
                    };
                });
                if sink.on() {
                    let entry = &self.history.ops[hi];
                    let outcome = match (&entry.outcome, &refused) {
                        (_, Some(error)) => format!("refused: {error}"),
                        (Outcome::Ok(r), _) => format!("{r:?}"),
                        (Outcome::Failed, _) => "failed".to_string(),
                        (Outcome::Unknown, _) => "error (outcome unknown)".to_string(),
                    };
                    sink.event(now, Some(c), Event::Return { outcome });
                }
                let cl = &mut self.clients[c];
                clients.end(c, cl, true);
                cl.op_index += 1;
                cl.phase = if rules.cfg.next_op(c, cl.op_index as usize).is_none() {
                    Phase::Done
                } else {
                    Phase::Idle
                };
                if let Some(error) = refused {
                    self.halt = Some(Halt::Refused { client: c, error });
                }
                return;
            }
            Polled::Calling => {
                self.clients[c].phase = Phase::Calling;
                None
            }
            Polled::Sleep(ms, wait) => Some((ms, wait, now + clock.true_duration(ms).max(1))),
            // Turned into `Ready` above.
            Polled::Refused(_) => unreachable!("a refusal ends its operation"),
            Polled::Foreign | Polled::Nondeterministic => {
                self.halt = Some(Halt::Foreign { client: c });
                return;
            }
        };
        if let Some((ms, wait, until)) = until {
            self.clients[c].phase = Phase::Sleeping(until);
            if sink.on() {
                let event = match wait {
                    Wait::Sleep => Event::Sleep { ms },
                    Wait::Work => Event::Work { ms },
                };
                sink.event(now, Some(c), event);
            }
        }
        let steps = clients.steps(&self.clients[c]);
        if steps > rules.cfg.max_steps_per_op {
            if sink.on() {
                sink.event(now, Some(c), Event::Livelock { client: c });
            }
            self.halt = Some(Halt::Livelock { client: c, steps });
        }
    }

    /// Numbers the invocation (`Tail::Calls`) or return (`Tail::Returns`) of operation
    /// `op` in the history's event order. Under [`Rules::canonical`], a run of adjacent
    /// invocations (or of adjacent returns) is kept sorted by client: their order is
    /// invisible to any check that compares returns with invocations (precedence) and
    /// marks with marks, and sorting it merges interleavings that differ only there.
    /// `edit` changes the history's operations first (one [`HistoryCell::edit`] for both,
    /// so a shared history pays its copy-on-write check once per event).
    fn event(
        &mut self,
        rules: Rules,
        op: usize,
        kind: Tail,
        edit: impl FnOnce(&mut Vec<Operation<Op, Ret>>),
    ) {
        self.seq += 1;
        let start = if rules.canonical && self.tail == kind {
            self.tail_start
        } else {
            self.seq
        };
        let ops = &mut self.history.edit().ops;
        edit(ops);
        if start == self.seq {
            // A new run: this event alone.
            match kind {
                Tail::Calls => ops[op].call = start,
                _ => ops[op].ret = Some(start),
            }
            self.tail = kind;
            self.tail_start = start;
            return;
        }
        let pos = |o: &Operation<Op, Ret>| match kind {
            Tail::Calls => Some(o.call),
            _ => o.ret,
        };
        let mut run: Vec<usize> = (0..ops.len())
            .filter(|&i| i != op && pos(&ops[i]).is_some_and(|p| p >= start))
            .collect();
        run.push(op);
        run.sort_by_key(|&i| ops[i].client);
        for (k, &i) in run.iter().enumerate() {
            let seq = start + k as u64;
            match kind {
                Tail::Calls => ops[i].call = seq,
                _ => ops[i].ret = Some(seq),
            }
        }
        if kind == Tail::Calls && run.len() > 1 {
            // The run's operations are the history's last ones, their clients all inside
            // them: keep the history sorted by invocation.
            let first = ops.len() - run.len();
            ops[first..].sort_by_key(|o| o.call);
            for (i, o) in ops.iter().enumerate().skip(first) {
                self.clients[o.client].hist_index = i as u32;
            }
        }
        self.tail = kind;
        self.tail_start = start;
    }

    /// Why the world stopped early, as the simulator reports it (a livelock or a foreign
    /// await; `None` otherwise).
    pub(crate) fn stop(&self) -> Option<Stop> {
        match &self.halt {
            Some(Halt::Livelock { client, steps }) => Some(Stop::Livelock {
                client: *client,
                op: format!(
                    "{:?}",
                    self.history.ops[self.clients[*client].hist_index as usize].op
                ),
                steps: *steps,
            }),
            Some(Halt::Foreign { client }) => Some(Stop::Foreign { client: *client }),
            Some(Halt::Refused { client, error }) => Some(Stop::Refused {
                client: *client,
                index: self.clients[*client].hist_index as usize,
                op: format!(
                    "{:?}",
                    self.history.ops[self.clients[*client].hist_index as usize].op
                ),
                error: error.clone(),
            }),
            _ => None,
        }
    }

    /// From when on no fault acted. Without times in the history, a fault that lasts (a
    /// pause, a downed server) has no end the history can be compared with: `None`.
    pub(crate) fn quiet(&self, rules: Rules) -> Option<Quiet> {
        match self.last_fault {
            None => Some(Quiet::default()),
            Some((seq, _, end)) if rules.times => Some(Quiet {
                seq,
                ms: end - EPOCH_MS,
            }),
            Some((seq, at, end)) => (end == at).then_some(Quiet { seq, ms: 0 }),
        }
    }
}
