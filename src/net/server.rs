//! `kvsim serve`: one [`Store`] over memcached's text protocol, with the simulator's
//! faults on the wire, a control channel for test drivers, and a trace.
//!
//! Every connection gets its own thread; all share the store behind one mutex, so commands
//! are atomic and totally ordered, as in memcached. The bytes on the wire are memcached
//! 1.6.18's ([`crate::wire::Connection`]), `stats` included. The server listens on
//! loopback unless told otherwise, and its clock is the host's, shifted by
//! `clock_offset_secs` and by every clock jump (never running backwards, as the store
//! requires).
//!
//! Faults ([`WireFault`]), all drawn from one [`SimRng`] seeded with `seed`:
//! - `faults` ([`FaultPlan`]): before each request, with its probability, one of the
//!   kinds: a key the request names evicted, the clock jumped forward (`expire`), the
//!   server restarted, the request or its reply lost (`lose`: the connection is closed),
//!   the reply held past the client's timeout (`delay`), the connection paused;
//! - on demand, through the control channel ([`crate::net::serve_control`]): the same
//!   faults at the moment a test driver chooses, on the connection it names;
//! - `evict_probability`: before each command, every key it names is evicted with this
//!   probability (as if memory pressure had pushed it out just then);
//! - `delay_ms`: each command waits a uniform random time in `lo..=hi` milliseconds
//!   before it is applied (a slow server or network);
//! - the store's own: `memory_limit` with LRU eviction, `evict: false` for memcached `-M`
//!   (out-of-memory errors), `persistent` (never evicts).
//!
//! Expired and flushed items are reaped as memcached's LRU maintainer thread reaps them in
//! the background: before a command (or `stats`) that comes after the server was quiet
//! for [`MAINTAINER_QUIET_MS`] (at most [`CRAWL_PER_QUIET`] expired items, and every
//! item a flush hides). Commands that arrive together meet the dead items a real
//! memcached would still hold (`get_expired`, `get_flushed`, `curr_items` count them);
//! after a pause they are gone, so a `flush_all <delay>` cannot bring flushed items back.
//!
//! Bounded as memcached is: at most `max_connections` open at once (memcached's `-c`,
//! 1024); a connection past them is answered `ERROR Too many open connections` and closed,
//! as memcached does (which counts a few descriptors of its own in the same budget, so it
//! turns clients away a little earlier). The trace stops at `trace_max_bytes`.

use super::serve_control;
use super::serve_faults::{FaultPlan, WireFault};
use super::serve_lockstep::{Lockstep, LockstepConfig};
use super::serve_stats::{self, Counters, StatsContext};
use super::serve_trace::{TraceWriter, DEFAULT_TRACE_MAX_BYTES};
use crate::command::{Command, Reply};
use crate::rng::SimRng;
use crate::store::{Store, StoreConfig};
use crate::wire::{Connection, Counted, Service, StatsGroup};
use std::cell::Cell;
use std::collections::BTreeMap;
use std::io::{self, Read, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

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
struct State {
    store: Store,
    rng: SimRng,
    last_ms: u64,
    /// How far clock jumps have moved the server clock (ms).
    jump_ms: u64,
    /// When this server process started (server clock, ms): a restart starts it again.
    started_ms: u64,
    /// When the last command or `stats` was served (server clock, ms).
    busy_ms: u64,
    counters: Counters,
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
struct Conn {
    stream: TcpStream,
    peer: SocketAddr,
    /// Faults waiting for its next request.
    pending: Vec<WireFault>,
}

/// The open connections and the faults waiting for whichever sends a request next.
#[derive(Default)]
struct Conns {
    open: BTreeMap<u64, Conn>,
    next: Vec<WireFault>,
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
    config: ServeConfig,
    port: u16,
    state: Mutex<State>,
    stop: AtomicBool,
    conns: Mutex<Conns>,
    trace: Option<Mutex<TraceWriter>>,
    lockstep: Option<Lockstep>,
    /// Restarts so far: a connection of an earlier process applies nothing more.
    generation: AtomicU64,
    /// Connections accepted so far.
    accepted: AtomicU64,
    /// Open control connections, closed when the server stops.
    pub(crate) controls: Mutex<BTreeMap<u64, TcpStream>>,
    bytes_read: AtomicU64,
    bytes_written: AtomicU64,
    /// Why the trace could not be written (the server stopped on it).
    trace_error: Mutex<Option<io::Error>>,
}

/// A mutex's guard; a panicked holder's data is still consistent here (every critical
/// section leaves it so), so poisoning is ignored.
pub(crate) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

fn host_ms(offset_secs: i64) -> u64 {
    let real = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as i64);
    (real + offset_secs * 1000).max(0) as u64
}

impl Shared {
    /// The server clock now (never behind the last time the store saw).
    fn now(&self, state: &mut State) -> u64 {
        let now = host_ms(self.config.clock_offset_secs)
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

    /// Applies one store command (after the configured delay and random evictions),
    /// counted in `stats` as a command of its own unless `counted` is `false`.
    fn apply(&self, id: u64, command: &Command, counted: bool) -> Reply {
        if let Some((lo, hi)) = self.config.delay_ms {
            let ms = lock(&self.state).rng.range_inclusive(lo, hi);
            if ms > 0 {
                std::thread::sleep(Duration::from_millis(ms));
            }
        }
        let mut state = lock(&self.state);
        let now = self.now(&mut state);
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
            for key in evicted {
                let text = format!("lru evicts {}", String::from_utf8_lossy(&key));
                written = written.and_then(|()| t.line(None, "fault", &text));
            }
            written = written.and_then(|()| t.line(Some(id), "reply", &reply.to_string()));
            drop(t);
            self.check_trace(written);
        }
        drop(state);
        reply
    }
}

/// One connection's side of the faults: whether it is being dropped, and how long its
/// next write is held.
struct ConnFaults {
    id: u64,
    /// The server process (restart count) the connection was accepted by.
    generation: u64,
    dropped: Cell<bool>,
    hold_ms: Cell<u64>,
}

/// What a connection's requests are served by.
struct ConnService<'a> {
    shared: &'a Shared,
    faults: &'a ConnFaults,
    /// The command being applied is an effect only ([`Service::apply_uncounted`]).
    uncounted: bool,
}

/// A lockstep turn, given back when the request has been served (whichever way).
struct Turn<'a>(Option<&'a Lockstep>);

impl Drop for Turn<'_> {
    fn drop(&mut self) {
        if let Some(ls) = self.0 {
            ls.done();
        }
    }
}

impl Service for ConnService<'_> {
    fn apply(&mut self, command: &Command) -> Reply {
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
                _ => {}
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
        self.shared.stats(group)
    }

    fn count(&mut self, counted: Counted) {
        lock(&self.shared.state).counters.counted(counted);
    }

    fn apply_uncounted(&mut self, command: &Command) -> Reply {
        self.uncounted = true;
        let reply = self.apply(command);
        self.uncounted = false;
        reply
    }
}

/// A running server; dropping it (or [`Server::stop`]) stops it and closes its connections.
pub struct Server {
    addr: SocketAddr,
    control_addr: Option<SocketAddr>,
    shared: Arc<Shared>,
    accept: Option<JoinHandle<()>>,
    control: Option<JoinHandle<()>>,
}

impl Server {
    /// Binds `config.listen` (and `config.control`), creates the trace file, and starts
    /// accepting connections on a thread of its own. An error says which of these failed.
    pub fn start(config: ServeConfig) -> io::Result<Server> {
        config
            .faults
            .validate()
            .map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, e))?;
        let context =
            |what: String| move |e: io::Error| io::Error::new(e.kind(), format!("{what}: {e}"));
        let listener = TcpListener::bind(config.listen)
            .map_err(context(format!("cannot listen on {}", config.listen)))?;
        let addr = listener.local_addr()?;
        let control_listener = config
            .control
            .map(|a| {
                TcpListener::bind(a).map_err(context(format!(
                    "cannot listen for control commands on {a}"
                )))
            })
            .transpose()?;
        let control_addr = control_listener
            .as_ref()
            .map(TcpListener::local_addr)
            .transpose()?;
        let trace = config
            .trace
            .as_deref()
            .map(|p| {
                let text = format!("kvsim serve listening on {addr}");
                TraceWriter::create(p, config.trace_max_bytes, Instant::now(), &text).map_err(
                    context(format!("cannot write the trace file {}", p.display())),
                )
            })
            .transpose()?
            .map(Mutex::new);
        let start_ms = host_ms(config.clock_offset_secs);
        let lockstep = config.lockstep.map(|c| Lockstep::new(c, config.seed));
        let shared = Arc::new(Shared {
            state: Mutex::new(State {
                store: Store::new(config.store.clone(), start_ms),
                rng: SimRng::new(config.seed),
                last_ms: start_ms,
                jump_ms: 0,
                started_ms: start_ms,
                busy_ms: start_ms,
                counters: Counters::default(),
            }),
            port: addr.port(),
            config,
            stop: AtomicBool::new(false),
            conns: Mutex::new(Conns::default()),
            trace,
            lockstep,
            generation: AtomicU64::new(0),
            accepted: AtomicU64::new(0),
            controls: Mutex::new(BTreeMap::new()),
            bytes_read: AtomicU64::new(0),
            bytes_written: AtomicU64::new(0),
            trace_error: Mutex::new(None),
        });
        let accept_shared = Arc::clone(&shared);
        let accept = std::thread::Builder::new()
            .name("kvsim-serve-accept".into())
            .spawn(move || accept_loop(listener, accept_shared))?;
        let control = match control_listener {
            Some(l) => {
                let s = Arc::clone(&shared);
                Some(
                    std::thread::Builder::new()
                        .name("kvsim-serve-control".into())
                        .spawn(move || serve_control::accept_loop(l, s))?,
                )
            }
            None => None,
        };
        Ok(Server {
            addr,
            control_addr,
            shared,
            accept: Some(accept),
            control,
        })
    }

    /// The address it listens on.
    pub fn local_addr(&self) -> SocketAddr {
        self.addr
    }

    /// The control channel's address, if it has one.
    pub fn control_addr(&self) -> Option<SocketAddr> {
        self.control_addr
    }

    /// Blocks until the server stops: it runs until the process ends, unless its trace
    /// cannot be written, which stops it with that error.
    pub fn wait(mut self) -> io::Result<()> {
        if let Some(handle) = self.accept.take() {
            let _ = handle.join();
        }
        self.shutdown_rest();
        match lock(&self.shared.trace_error).take() {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }

    /// Why the server stopped on its own, if it did (its trace could not be written).
    pub fn failure(&self) -> Option<String> {
        lock(&self.shared.trace_error)
            .as_ref()
            .map(|e| e.to_string())
    }

    /// Stops accepting, closes every connection, and waits for the acceptors to end.
    pub fn stop(mut self) {
        self.shutdown();
    }

    /// After the acceptor ended on its own: closes the control channel and its
    /// connections too.
    fn shutdown_rest(&mut self) {
        if self.control.is_some() {
            self.shutdown();
        }
    }

    fn shutdown(&mut self) {
        self.shared.stop.store(true, Ordering::SeqCst);
        // Wake the acceptors.
        let _ = TcpStream::connect_timeout(&self.addr, Duration::from_millis(200));
        if let Some(addr) = self.control_addr {
            let _ = TcpStream::connect_timeout(&addr, Duration::from_millis(200));
        }
        for c in lock(&self.shared.conns).open.values() {
            let _ = c.stream.shutdown(Shutdown::Both);
        }
        for c in lock(&self.shared.controls).values() {
            let _ = c.shutdown(Shutdown::Both);
        }
        for handle in [self.accept.take(), self.control.take()]
            .into_iter()
            .flatten()
        {
            let _ = handle.join();
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        if self.accept.is_some() {
            self.shutdown();
        }
    }
}

impl Shared {
    /// Whether the server is stopping.
    pub(crate) fn stopping(&self) -> bool {
        self.stop.load(Ordering::SeqCst)
    }
}

fn accept_loop(listener: TcpListener, shared: Arc<Shared>) {
    let mut next_id = 0u64;
    for stream in listener.incoming() {
        if shared.stopping() {
            break;
        }
        let Ok(mut stream) = stream else { continue };
        if lock(&shared.conns).open.len() >= shared.config.max_connections {
            let _ = stream.write_all(TOO_MANY_CONNECTIONS);
            let _ = stream.shutdown(Shutdown::Both);
            lock(&shared.state).counters.rejected_connections += 1;
            continue;
        }
        let id = next_id;
        next_id += 1;
        shared.accepted.fetch_add(1, Ordering::SeqCst);
        let peer = stream
            .peer_addr()
            .unwrap_or_else(|_| SocketAddr::from(([0, 0, 0, 0], 0)));
        let Ok(clone) = stream.try_clone() else {
            continue;
        };
        lock(&shared.state).counters.total_connections += 1;
        lock(&shared.conns).open.insert(
            id,
            Conn {
                stream: clone,
                peer,
                pending: Vec::new(),
            },
        );
        shared.trace(Some(id), "connect", &peer.to_string());
        let conn_shared = Arc::clone(&shared);
        let spawned = std::thread::Builder::new()
            .name(format!("kvsim-serve-{id}"))
            .spawn(move || {
                serve_connection(stream, id, &conn_shared);
                lock(&conn_shared.conns).open.remove(&id);
                if let Some(ls) = &conn_shared.lockstep {
                    ls.leave(id);
                }
                conn_shared.trace(Some(id), "close", "");
            });
        if spawned.is_err() {
            lock(&shared.conns).open.remove(&id);
        }
    }
}

/// Reads requests and writes replies until the client leaves, the protocol closes or a
/// fault drops the connection.
fn serve_connection(mut stream: TcpStream, id: u64, shared: &Shared) {
    let _ = stream.set_nodelay(true);
    let mut conn = Connection::new(shared.config.store.item_size_max);
    let faults = ConnFaults {
        id,
        generation: shared.generation.load(Ordering::SeqCst),
        dropped: Cell::new(false),
        hold_ms: Cell::new(0),
    };
    let mut rbuf = ReadBuffer::default();
    let mut buf = Vec::new();
    loop {
        let n = match rbuf.read(&mut stream, &conn, &mut buf) {
            Ok(0) => break,
            Ok(n) => n,
            Err(_) => break,
        };
        shared.bytes_read.fetch_add(n as u64, Ordering::Relaxed);
        let service = ConnService {
            shared,
            faults: &faults,
            uncounted: false,
        };
        let close = conn.serve(&buf, service, |bytes| {
            if faults.dropped.get() {
                return false;
            }
            let hold = faults.hold_ms.replace(0);
            if hold > 0 {
                std::thread::sleep(Duration::from_millis(hold));
            }
            shared
                .bytes_written
                .fetch_add(bytes.len() as u64, Ordering::Relaxed);
            stream.write_all(bytes).is_ok()
        });
        if close || faults.dropped.get() {
            break;
        }
    }
    // Closed as memcached closes it, without a shutdown first: input left unread makes
    // the close a reset (RST), as it does for memcached; otherwise the client sees FIN.
    // (The connection's clone in `Shared::conns` is dropped right after this returns.)
    drop(stream);
}

/// memcached's `READ_BUFFER_SIZE`: what one read takes while it waits for a command.
pub const READ_BUFFER_SIZE: usize = 16 * 1024;

/// How much a connection reads at a time, as memcached 1.6.18 sizes its reads (which
/// decides, for instance, whether a long line is seen whole or closes the connection
/// for lack of a `\n` in its first 2048 bytes, and how much unread input a close leaves
/// behind, which makes the close a reset):
/// - waiting for a command line, one read fills what its read buffer (16 KiB) has free
///   next to the incomplete line already held;
/// - a line of a multi-get longer than 2048 bytes moves the buffer to one of twice the
///   size, which then doubles (at most 4 times a read event) whenever a read fills it,
///   and reads go on while input is waiting; it goes back to 16 KiB once empty;
/// - a data block (or a swallowed one) is read exactly to its end, at most a buffer's
///   worth at a time ([`Connection::wants`]).
#[derive(Debug)]
struct ReadBuffer {
    size: usize,
    malloced: bool,
}

impl Default for ReadBuffer {
    fn default() -> Self {
        ReadBuffer {
            size: READ_BUFFER_SIZE,
            malloced: false,
        }
    }
}

impl ReadBuffer {
    /// One read event: the bytes read into `buf` (0 at the end of the input).
    fn read(
        &mut self,
        stream: &mut TcpStream,
        conn: &Connection,
        buf: &mut Vec<u8>,
    ) -> io::Result<usize> {
        let held = conn.buffered();
        if let Some(want) = conn.wants() {
            let cap = want.clamp(1, self.size);
            return read_some(stream, buf, cap);
        }
        if held == 0 {
            *self = ReadBuffer::default();
        } else if !self.malloced && held > crate::wire::LINE_LIMIT {
            // try_read_command_ascii kept a long multi-get line: rbuf_switch_to_malloc.
            self.size *= 2;
            self.malloced = true;
        }
        let mut got = 0;
        let mut allocs = 0;
        loop {
            if self.malloced && held + got >= self.size {
                if allocs == 4 {
                    break;
                }
                allocs += 1;
                self.size *= 2;
            }
            let avail = self.size - held - got;
            let n = if got == 0 {
                read_some(stream, buf, avail)?
            } else {
                // Only what is waiting already (memcached's socket is non-blocking).
                stream.set_nonblocking(true)?;
                let mut more = Vec::new();
                let r = read_some(stream, &mut more, avail);
                stream.set_nonblocking(false)?;
                match r {
                    Ok(n) => {
                        buf.extend_from_slice(&more[..n]);
                        n
                    }
                    Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
                    Err(e) => return Err(e),
                }
            };
            if n == 0 {
                break;
            }
            got += n;
            if !(n == avail && self.malloced) {
                break;
            }
        }
        Ok(got)
    }
}

/// Reads at most `cap` bytes into `buf` (replacing what it held); retries on EINTR.
fn read_some(stream: &mut TcpStream, buf: &mut Vec<u8>, cap: usize) -> io::Result<usize> {
    buf.resize(cap, 0);
    loop {
        match stream.read(&mut buf[..cap]) {
            Ok(n) => {
                buf.truncate(n);
                return Ok(n);
            }
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        }
    }
}
