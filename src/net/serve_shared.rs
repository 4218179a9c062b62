//! What `kvsim serve`'s threads share: its settings ([`ServeConfig`]), the store and its
//! clock, the open connections and the faults armed for them, the trace, and how one
//! connection's requests are served. The acceptor and the connection loop are
//! `server.rs`'s; the control channel (`serve_control.rs`) acts on the same [`Shared`].

use super::serve_faults::{FaultPlan, WireFault};
use super::serve_lockstep::{lock, Lockstep, LockstepConfig};
use super::serve_stats::{self, Counters, StatsContext};
use super::serve_trace::{TraceWriter, DEFAULT_TRACE_MAX_BYTES};
use crate::command::{Command, Reply};
use crate::fault::Fault;
use crate::rng::SimRng;
use crate::store::{Store, StoreConfig};
use crate::wire::{Counted, Service, StatsGroup};
use std::cell::Cell;
use std::collections::BTreeMap;
use std::io;
use std::net::{Shutdown, SocketAddr, TcpStream};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// The address `kvsim serve` listens on unless told: memcached's port, on loopback.
pub const DEFAULT_LISTEN: &str = "127.0.0.1:11211";

/// How a server is set up.
#[derive(Clone, Debug)]
pub struct ServeConfig {
    /// Where to listen (port 0 picks a free one).
    pub listen: SocketAddr,
    /// The store's limits and eviction mode.
    pub store: StoreConfig,
    /// Probability that each key a command names is evicted just before it (0.0 ..= 1.0).
    pub evict_probability: f64,
    /// Each command waits uniformly `lo..=hi` ms before it is applied.
    pub delay_ms: Option<(u64, u64)>,
    /// The server clock's offset from the host clock, in seconds.
    pub clock_offset_secs: i64,
    /// Seeds the fault draws.
    pub seed: u64,
    /// Most connections open at once (memcached's `-c`); more are refused.
    pub max_connections: usize,
    /// Seeded faults before each request.
    pub faults: FaultPlan,
    /// Where the control channel listens (`None`: no control channel).
    pub control: Option<SocketAddr>,
    /// Where the trace is written (`None`: no trace).
    pub trace: Option<PathBuf>,
    /// The trace's byte limit.
    pub trace_max_bytes: u64,
    /// Serve requests one at a time in a seeded order ([`Lockstep`]).
    pub lockstep: Option<LockstepConfig>,
}

/// Expired items reaped after a quiet spell, as memcached's LRU maintainer reaps them in
/// the background: a store that keeps being used does not keep dead items.
pub const CRAWL_PER_QUIET: usize = 4096;

/// How long the server must have been without commands before the next one (or `stats`)
/// reaps dead items first. memcached's maintainer wakes every few milliseconds on a young
/// server; commands read together never see it run between them.
pub const MAINTAINER_QUIET_MS: u64 = 20;

/// The most faults armed and waiting for one connection's next command (or for `next`).
pub const MAX_ARMED: usize = 1024;

/// memcached's default `-c`.
pub const DEFAULT_MAX_CONNECTIONS: usize = 1024;

/// What memcached writes to a connection it refuses for being one too many.
pub const TOO_MANY_CONNECTIONS: &[u8] = b"ERROR Too many open connections\r\n";

impl Default for ServeConfig {
    fn default() -> Self {
        ServeConfig {
            listen: DEFAULT_LISTEN.parse().expect("a valid address"),
            store: StoreConfig::default(),
            evict_probability: 0.0,
            delay_ms: None,
            clock_offset_secs: 0,
            seed: 0,
            max_connections: DEFAULT_MAX_CONNECTIONS,
            faults: FaultPlan::default(),
            control: None,
            trace: None,
            trace_max_bytes: DEFAULT_TRACE_MAX_BYTES,
            lockstep: None,
        }
    }
}

/// The store and what changes with it.
pub(super) struct State {
    pub(super) store: Store,
    pub(super) rng: SimRng,
    pub(super) last_ms: u64,
    /// How far clock jumps have moved the server clock (ms).
    pub(super) jump_ms: u64,
    /// When this server process started (server clock, ms): a restart starts it again.
    pub(super) started_ms: u64,
    /// When the last command or `stats` was served (server clock, ms).
    pub(super) busy_ms: u64,
    pub(super) counters: Counters,
}

impl State {
    /// The maintainer's work after a quiet spell (see the module doc).
    fn maintain(&mut self, now: u64) {
        if now.saturating_sub(self.busy_ms) >= MAINTAINER_QUIET_MS {
            let reaped =
                self.store.crawl_expired(now, CRAWL_PER_QUIET) + self.store.reap_flushed(now);
            self.counters.reclaimed += reaped as u64;
        }
        self.busy_ms = now;
    }
}

/// An open client connection.
pub(super) struct Conn {
    pub(super) stream: TcpStream,
    pub(super) peer: SocketAddr,
    /// Faults waiting for its next request.
    pub(super) pending: Vec<WireFault>,
}

/// The open connections and the faults waiting for whichever sends a request next.
#[derive(Default)]
pub(super) struct Conns {
    pub(super) open: BTreeMap<u64, Conn>,
    pub(super) next: Vec<WireFault>,
}

/// Which connections a per-connection fault is for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ConnTarget {
    /// The connection with this id.
    Id(u64),
    /// The next connection that sends a request.
    Next,
    /// Every open connection.
    All,
}

/// What the connection threads, the acceptor and the control channel share.
pub(crate) struct Shared {
    pub(super) config: ServeConfig,
    pub(super) port: u16,
    pub(super) state: Mutex<State>,
    pub(super) stop: AtomicBool,
    pub(super) conns: Mutex<Conns>,
    pub(super) trace: Option<Mutex<TraceWriter>>,
    pub(super) lockstep: Option<Lockstep>,
    /// Restarts so far: a connection of an earlier process applies nothing more.
    pub(super) generation: AtomicU64,
    /// Connections accepted so far.
    pub(super) accepted: AtomicU64,
    /// Open control connections, closed when the server stops.
    pub(crate) controls: Mutex<BTreeMap<u64, TcpStream>>,
    pub(super) bytes_read: AtomicU64,
    pub(super) bytes_written: AtomicU64,
    /// Why the trace could not be written (the server stopped on it).
    pub(super) trace_error: Mutex<Option<io::Error>>,
    /// How far past a whole host second the server started (ms): the server clock runs
    /// this far behind the host's, so its whole seconds tick at the start and every second
    /// after it, as memcached's `current_time` does (`clock_handler` is a 1 s timer armed at
    /// startup). A stream shorter than a second after the start sees one `current_time`
    /// on both servers, whatever the phase of the host's seconds.
    pub(super) phase_ms: u64,
}

pub(super) fn host_ms(offset_secs: i64) -> u64 {
    let real = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as i64);
    (real + offset_secs * 1000).max(0) as u64
}

impl Shared {
    /// The server clock now (never behind the last time the store saw).
    fn now(&self, state: &mut State) -> u64 {
        let now = host_ms(self.config.clock_offset_secs)
            .saturating_sub(self.phase_ms)
            .saturating_add(state.jump_ms)
            .max(state.last_ms);
        state.last_ms = now;
        now
    }

    pub(crate) fn trace(&self, conn: Option<u64>, kind: &str, text: &str) {
        if let Some(t) = &self.trace {
            let written = lock(t).line(conn, kind, text);
            self.check_trace(written);
        }
    }

    /// A trace write that failed stops the server: the error is kept for
    /// [`Server::wait`], the acceptor is woken and every connection closed.
    fn check_trace(&self, written: io::Result<()>) {
        let Err(e) = written else { return };
        {
            let mut failure = lock(&self.trace_error);
            if failure.is_some() {
                return;
            }
            let path = self
                .config
                .trace
                .as_deref()
                .unwrap_or(std::path::Path::new(""));
            *failure = Some(io::Error::new(
                e.kind(),
                format!("cannot write the trace file {}: {e}", path.display()),
            ));
        }
        self.stop.store(true, Ordering::SeqCst);
        let ip = match self.config.listen.ip() {
            ip if ip.is_unspecified() => std::net::IpAddr::from([127, 0, 0, 1]),
            ip => ip,
        };
        let wake = SocketAddr::new(ip, self.port);
        let _ = TcpStream::connect_timeout(&wake, Duration::from_millis(200));
        for c in lock(&self.conns).open.values() {
            let _ = c.stream.shutdown(Shutdown::Both);
        }
    }

    /// Applies a fault of the whole server now (`evict`, `restart`, `clock`); `false`
    /// for `evict` of a key that held no live item.
    pub(crate) fn inject(&self, fault: &WireFault, by: Option<u64>) -> bool {
        let mut state = lock(&self.state);
        // Traced under the store's lock: the trace's order is the order of application.
        self.trace(by, "fault", &fault.to_string());
        let now = self.now(&mut state);
        match fault {
            WireFault::Evict(key) => {
                let removed = state.store.evict_at(now, key);
                state.counters.evictions += u64::from(removed);
                removed
            }
            WireFault::Clock(secs) => {
                state.jump_ms = state.jump_ms.saturating_add(secs.saturating_mul(1000));
                true
            }
            WireFault::Restart => {
                state.store.restart(now);
                state.started_ms = now;
                state.counters = Counters::default();
                // Requests of the old process's connections, read but not yet applied,
                // are never applied ([`ConnService::apply`]).
                self.generation.fetch_add(1, Ordering::SeqCst);
                drop(state);
                // memcached's clients lose their connections with the process.
                let conns = lock(&self.conns);
                for c in conns.open.values() {
                    let _ = c.stream.shutdown(Shutdown::Both);
                }
                true
            }
            // Per-connection faults wait for a request ([`Shared::arm`]).
            _ => false,
        }
    }

    /// Arms a per-connection fault for `target`'s next store command; how many
    /// connections it was armed on (`next`: 1), or why not.
    pub(crate) fn arm(&self, fault: WireFault, target: ConnTarget) -> Result<usize, String> {
        let mut conns = lock(&self.conns);
        let full = |n: usize| n >= MAX_ARMED;
        let open = |conns: &Conns| -> String {
            let ids: Vec<String> = conns.open.keys().map(u64::to_string).collect();
            format!("open are [{}]", ids.join(", "))
        };
        match target {
            ConnTarget::Next if full(conns.next.len()) => {}
            ConnTarget::Next => {
                conns.next.push(fault);
                return Ok(1);
            }
            ConnTarget::All if conns.open.is_empty() => {
                return Err("no open connection to arm: expected at least one for all".into())
            }
            ConnTarget::All if conns.open.values().any(|c| full(c.pending.len())) => {}
            ConnTarget::All => {
                conns
                    .open
                    .values_mut()
                    .for_each(|c| c.pending.push(fault.clone()));
                return Ok(conns.open.len());
            }
            ConnTarget::Id(id) => match conns.open.get(&id) {
                None => return Err(format!("no open connection {id}: {}", open(&conns))),
                Some(c) if full(c.pending.len()) => {}
                Some(_) => {
                    if let Some(c) = conns.open.get_mut(&id) {
                        c.pending.push(fault);
                    }
                    return Ok(1);
                }
            },
        }
        Err(format!(
            "too many armed faults: expected at most {MAX_ARMED} waiting per connection"
        ))
    }

    /// The open connections: id and peer address.
    pub(crate) fn connections(&self) -> Vec<(u64, String)> {
        lock(&self.conns)
            .open
            .iter()
            .map(|(id, c)| (*id, c.peer.to_string()))
            .collect()
    }

    /// The `STAT` lines of `group` (for `Reset`: zeroes the counters).
    pub(crate) fn stats(&self, group: StatsGroup) -> Vec<(String, String)> {
        let conns = self.connections();
        let mut state = lock(&self.state);
        if group == StatsGroup::Reset {
            let kept = state.counters.total_connections;
            state.counters = Counters {
                total_connections: kept,
                ..Counters::default()
            };
            self.bytes_read.store(0, Ordering::Relaxed);
            self.bytes_written.store(0, Ordering::Relaxed);
            return Vec::new();
        }
        let now = self.now(&mut state);
        state.maintain(now);
        let mut counters = state.counters.clone();
        counters.bytes_read = self.bytes_read.load(Ordering::Relaxed);
        counters.bytes_written = self.bytes_written.load(Ordering::Relaxed);
        let ctx = StatsContext {
            store: &state.store,
            now_ms: now,
            started_ms: state.started_ms,
            curr_connections: conns.len() as u64,
            max_connections: self.config.max_connections as u64,
            port: self.port,
            conns,
        };
        serve_stats::render(group, &counters, &ctx)
    }

    /// The faults armed for connection `id`'s next command, or for the next connection.
    fn armed_for(&self, id: u64) -> Vec<WireFault> {
        let mut conns = lock(&self.conns);
        let mut mine = std::mem::take(&mut conns.next);
        if let Some(c) = conns.open.get_mut(&id) {
            mine.append(&mut c.pending);
        }
        mine
    }

    /// The seeded fault before `command`, if the draw gives one.
    fn drawn_for(&self, command: &Command) -> Option<WireFault> {
        if self.config.faults.kinds.is_empty() {
            return None;
        }
        let keys = command.keys();
        self.config.faults.draw(&mut lock(&self.state).rng, &keys)
    }

    /// Waits for connection `id`'s lockstep turn (at once without `--lockstep`).
    fn turn(&self, id: u64) -> Turn<'_> {
        if let Some(ls) = &self.lockstep {
            ls.wait_turn(id, || {
                (
                    lock(&self.conns).open.len(),
                    self.accepted.load(Ordering::SeqCst),
                )
            });
        }
        Turn(self.lockstep.as_ref())
    }

    /// Whether nothing can come between two commands of one read: no delays, seeded
    /// faults, control channel (armed faults) or lockstep turns. Such a server serves a
    /// read's commands under one hold of the store's lock and writes its replies once
    /// ([`crate::wire::Connection::set_deferred_writes`]).
    pub(super) fn is_plain(&self) -> bool {
        self.config.delay_ms.is_none()
            && self.config.faults.kinds.is_empty()
            && self.config.control.is_none()
            && self.lockstep.is_none()
    }

    /// Applies one store command (after the configured delay and random evictions),
    /// counted in `stats` as a command of its own unless `counted` is `false`.
    fn apply(&self, id: u64, command: &Command, counted: bool) -> Reply {
        if let Some((lo, hi)) = self.config.delay_ms {
            let ms = lock(&self.state).rng.range_inclusive(lo, hi);
            if ms > 0 {
                std::thread::sleep(Duration::from_millis(ms));
            }
        }
        self.apply_locked(&mut lock(&self.state), id, command, counted)
    }

    /// [`Shared::apply`] after the delay, under the store's lock.
    fn apply_locked(&self, state: &mut State, id: u64, command: &Command, counted: bool) -> Reply {
        let now = self.now(state);
        state.maintain(now);
        if self.config.evict_probability > 0.0 {
            for key in command.keys() {
                if state.rng.chance(self.config.evict_probability) {
                    let removed = state.store.evict_at(now, key);
                    state.counters.evictions += u64::from(removed);
                }
            }
        }
        let reply = state.store.apply(now, command);
        if counted {
            state.counters.count(command, &reply);
        }
        let tally = state.store.take_tally();
        state.counters.tally(tally);
        let evicted = state.store.take_evicted();
        state.counters.evictions += evicted.len() as u64;
        // Traced under the store's lock, so the trace's order is the order of
        // application; the command, the evictions it caused and its reply together.
        if let Some(t) = &self.trace {
            let mut t = lock(t);
            let mut written = t.line(Some(id), "command", &command.to_string());
            for e in evicted {
                // The simulator's words for it: `lru evicts K from slab class N (C-byte chunks)`.
                let fault: Fault<Reply> = Fault::LruEvict {
                    shard: 0,
                    key: e.key,
                    class: e.class.id,
                    chunk: e.class.chunk,
                };
                written = written.and_then(|()| t.line(None, "fault", &fault.to_string()));
            }
            written = written.and_then(|()| t.line(Some(id), "reply", &reply.to_string()));
            drop(t);
            self.check_trace(written);
        }
        reply
    }
}

/// One connection's side of the faults: whether it is being dropped, and how long its
/// next write is held.
pub(super) struct ConnFaults {
    pub(super) id: u64,
    /// The server process (restart count) the connection was accepted by.
    pub(super) generation: u64,
    pub(super) dropped: Cell<bool>,
    pub(super) hold_ms: Cell<u64>,
}

/// What a connection's requests are served by.
pub(super) struct ConnService<'a> {
    pub(super) shared: &'a Shared,
    pub(super) faults: &'a ConnFaults,
    /// The command being applied is an effect only ([`Service::apply_uncounted`]).
    pub(super) uncounted: bool,
    /// The server is plain ([`Shared::is_plain`]): commands are applied under `held`.
    pub(super) plain: bool,
    /// The store's lock, held from a plain server's first command of a read until its
    /// replies are written ([`Service::release`]) or `stats` is asked for.
    pub(super) held: Option<MutexGuard<'a, State>>,
}

impl<'a> ConnService<'a> {
    /// A service for one read of the connection whose faults are `faults`.
    pub(super) fn new(shared: &'a Shared, faults: &'a ConnFaults, plain: bool) -> Self {
        ConnService {
            shared,
            faults,
            uncounted: false,
            plain,
            held: None,
        }
    }

    /// The store's state, under the lock this service holds (taken if need be).
    fn state(&mut self) -> &mut State {
        let shared = self.shared;
        self.held.get_or_insert_with(|| lock(&shared.state))
    }

    /// [`Service::apply`] on a plain server: no faults, turns or delays to wait for.
    fn apply_plain(&mut self, command: &Command) -> Reply {
        let shared = self.shared;
        if self.faults.dropped.get() {
            return Reply::Error;
        }
        let (id, counted) = (self.faults.id, !self.uncounted);
        let reply = shared.apply_locked(self.state(), id, command, counted);
        // A server stopping (its trace failed) sends nothing more.
        if shared.stopping() {
            self.faults.dropped.set(true);
        }
        reply
    }
}

/// A lockstep turn, given back when the request has been served (whichever way).
pub(super) struct Turn<'a>(Option<&'a Lockstep>);

impl Drop for Turn<'_> {
    fn drop(&mut self) {
        if let Some(ls) = self.0 {
            ls.done();
        }
    }
}

impl Service for ConnService<'_> {
    fn apply(&mut self, command: &Command) -> Reply {
        if self.plain {
            return self.apply_plain(command);
        }
        let (shared, id) = (self.shared, self.faults.id);
        // A dropped connection applies nothing more (its bytes were already read), nor
        // does one of a process that has restarted since.
        if self.faults.generation != shared.generation.load(Ordering::SeqCst) {
            self.faults.dropped.set(true);
        }
        if self.faults.dropped.get() {
            return Reply::Error;
        }
        // Armed pauses stall this connection before it queues for its turn, so that under
        // --lockstep the others go on meanwhile.
        let mut faults = shared.armed_for(id);
        for fault in faults.iter().filter(|f| matches!(f, WireFault::Pause(_))) {
            shared.trace(Some(id), "fault", &fault.to_string());
            if let WireFault::Pause(ms) = fault {
                std::thread::sleep(Duration::from_millis(*ms));
            }
        }
        faults.retain(|f| !matches!(f, WireFault::Pause(_)));
        let mut turn = shared.turn(id);
        if let Some(fault) = shared.drawn_for(command) {
            if let WireFault::Pause(ms) = fault {
                shared.trace(Some(id), "fault", &fault.to_string());
                drop(turn);
                std::thread::sleep(Duration::from_millis(ms));
                turn = shared.turn(id);
            } else {
                faults.push(fault);
            }
        }
        let mut drop_reply = false;
        for fault in faults {
            if !fault.is_per_connection() {
                shared.inject(&fault, Some(id));
                // The restarted process never saw this request: its connection is gone.
                if fault == WireFault::Restart {
                    self.faults.dropped.set(true);
                    return Reply::Error;
                }
                continue;
            }
            shared.trace(Some(id), "fault", &fault.to_string());
            match fault {
                WireFault::DropRequest => {
                    self.faults.dropped.set(true);
                    return Reply::Error;
                }
                WireFault::DropReply => drop_reply = true,
                WireFault::DelayReply(ms) => self
                    .faults
                    .hold_ms
                    .set(self.faults.hold_ms.get().saturating_add(ms)),
                // Taken above: a pause stalls before the turn; the rest act on the server.
                WireFault::Pause(_)
                | WireFault::Evict(_)
                | WireFault::Restart
                | WireFault::Clock(_) => {}
            }
        }
        let reply = shared.apply(id, command, !self.uncounted);
        drop(turn);
        // A server stopping (its trace failed) sends nothing more.
        if drop_reply || shared.stopping() {
            self.faults.dropped.set(true);
        }
        reply
    }

    fn stats(&mut self, group: StatsGroup) -> Vec<(String, String)> {
        self.held = None;
        self.shared.stats(group)
    }

    fn count(&mut self, counted: Counted) {
        match &mut self.held {
            Some(state) => state.counters.counted(counted),
            None => lock(&self.shared.state).counters.counted(counted),
        }
    }

    fn release(&mut self) {
        self.held = None;
    }

    fn apply_uncounted(&mut self, command: &Command) -> Reply {
        self.uncounted = true;
        let reply = self.apply(command);
        self.uncounted = false;
        reply
    }
}

impl Shared {
    /// Whether the server is stopping.
    pub(crate) fn stopping(&self) -> bool {
        self.stop.load(Ordering::SeqCst)
    }
}
