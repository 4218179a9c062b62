//! `kvsim serve`: one [`Store`] over memcached's text protocol, with fault knobs.
//!
//! Every connection gets its own thread; all share the store behind one mutex, so commands
//! are atomic and totally ordered, as in memcached. The bytes on the wire are memcached
//! 1.6.18's ([`crate::wire::Connection`]). The server listens on loopback unless told
//! otherwise, and its clock is the host's, shifted by `clock_offset_secs` (never running
//! backwards, as the store requires).
//!
//! Faults, all drawn from one [`SimRng`] seeded with `seed`:
//! - `evict_probability`: before each command, every key it names is evicted with this
//!   probability (as if memory pressure had pushed it out just then);
//! - `delay_ms`: each command waits a uniform random time in `lo..=hi` milliseconds
//!   before it is applied (a slow server or network: clients see late replies and time
//!   out);
//! - the store's own: `memory_limit` with LRU eviction, `evict: false` for memcached `-M`
//!   (out-of-memory errors), `persistent` (never evicts).
//!
//! Expired items are reclaimed as commands arrive ([`CRAWL_PER_COMMAND`] after each), as
//! memcached's LRU crawler reclaims them in the background.
//!
//! Bounded as memcached is: at most `max_connections` open at once (memcached's `-c`,
//! 1024); a connection past them is answered `ERROR Too many open connections` and closed,
//! as memcached does (which counts a few descriptors of its own in the same budget, so it
//! turns clients away a little earlier).

use crate::command::{Command, Reply};
use crate::rng::SimRng;
use crate::store::{Store, StoreConfig};
use crate::wire::Connection;
use std::collections::BTreeMap;
use std::io::{self, Read, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::thread::JoinHandle;
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
}

/// Expired items reclaimed after each command, as memcached's LRU crawler reclaims them
/// in the background: a store that keeps being used does not keep dead items.
pub const CRAWL_PER_COMMAND: usize = 8;

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
        }
    }
}

struct State {
    store: Store,
    rng: SimRng,
    last_ms: u64,
}

struct Shared {
    config: ServeConfig,
    state: Mutex<State>,
    stop: AtomicBool,
    conns: Mutex<BTreeMap<u64, TcpStream>>,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

impl Shared {
    fn host_ms(&self) -> u64 {
        let real = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_millis() as i64);
        (real + self.config.clock_offset_secs * 1000).max(0) as u64
    }

    fn apply(&self, command: &Command) -> Reply {
        if let Some((lo, hi)) = self.config.delay_ms {
            let ms = lock(&self.state).rng.range_inclusive(lo, hi);
            if ms > 0 {
                std::thread::sleep(Duration::from_millis(ms));
            }
        }
        let host = self.host_ms();
        let mut state = lock(&self.state);
        let now = host.max(state.last_ms);
        state.last_ms = now;
        if self.config.evict_probability > 0.0 {
            for key in command.keys() {
                if state.rng.chance(self.config.evict_probability) {
                    state.store.evict_at(now, key);
                }
            }
        }
        let reply = state.store.apply(now, command);
        state.store.crawl_expired(now, CRAWL_PER_COMMAND);
        reply
    }
}

/// A running server; dropping it (or [`Server::stop`]) stops it and closes its connections.
pub struct Server {
    addr: SocketAddr,
    shared: Arc<Shared>,
    accept: Option<JoinHandle<()>>,
}

impl Server {
    /// Binds `config.listen` and starts accepting connections on a thread of its own.
    pub fn start(config: ServeConfig) -> io::Result<Server> {
        let listener = TcpListener::bind(config.listen)?;
        let addr = listener.local_addr()?;
        let now = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_millis() as i64);
        let start_ms = (now + config.clock_offset_secs * 1000).max(0) as u64;
        let shared = Arc::new(Shared {
            state: Mutex::new(State {
                store: Store::new(config.store.clone(), start_ms),
                rng: SimRng::new(config.seed),
                last_ms: start_ms,
            }),
            config,
            stop: AtomicBool::new(false),
            conns: Mutex::new(BTreeMap::new()),
        });
        let accept_shared = Arc::clone(&shared);
        let accept = std::thread::Builder::new()
            .name("kvsim-serve-accept".into())
            .spawn(move || accept_loop(listener, accept_shared))?;
        Ok(Server {
            addr,
            shared,
            accept: Some(accept),
        })
    }

    /// The address it listens on.
    pub fn local_addr(&self) -> SocketAddr {
        self.addr
    }

    /// Blocks until the server stops (it runs until the process ends).
    pub fn wait(mut self) {
        if let Some(handle) = self.accept.take() {
            let _ = handle.join();
        }
    }

    /// Stops accepting, closes every connection, and waits for the acceptor to end.
    pub fn stop(mut self) {
        self.shutdown();
    }

    fn shutdown(&mut self) {
        self.shared.stop.store(true, Ordering::SeqCst);
        // Wake the acceptor.
        let _ = TcpStream::connect_timeout(&self.addr, Duration::from_millis(200));
        for stream in lock(&self.shared.conns).values() {
            let _ = stream.shutdown(Shutdown::Both);
        }
        if let Some(handle) = self.accept.take() {
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

fn accept_loop(listener: TcpListener, shared: Arc<Shared>) {
    let mut next_id = 0u64;
    for stream in listener.incoming() {
        if shared.stop.load(Ordering::SeqCst) {
            break;
        }
        let Ok(mut stream) = stream else { continue };
        if lock(&shared.conns).len() >= shared.config.max_connections {
            let _ = stream.write_all(TOO_MANY_CONNECTIONS);
            let _ = stream.shutdown(Shutdown::Both);
            continue;
        }
        let id = next_id;
        next_id += 1;
        if let Ok(clone) = stream.try_clone() {
            lock(&shared.conns).insert(id, clone);
        }
        let conn_shared = Arc::clone(&shared);
        let spawned = std::thread::Builder::new()
            .name(format!("kvsim-serve-{id}"))
            .spawn(move || {
                serve_connection(stream, &conn_shared);
                lock(&conn_shared.conns).remove(&id);
            });
        if spawned.is_err() {
            lock(&shared.conns).remove(&id);
        }
    }
}

/// Reads requests and writes replies until the client leaves or the protocol closes.
fn serve_connection(mut stream: TcpStream, shared: &Shared) {
    let _ = stream.set_nodelay(true);
    let mut conn = Connection::new(shared.config.store.item_size_max);
    // memcached's read buffer size: what one read event can hold.
    let mut buf = vec![0u8; 16 * 1024];
    loop {
        // A data block is read exactly to its end, as memcached reads it.
        let cap = conn.wants().map_or(buf.len(), |n| n.clamp(1, buf.len()));
        let n = match stream.read(&mut buf[..cap]) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(_) => break,
        };
        let close = conn.serve_read(
            &buf[..n],
            |command| shared.apply(command),
            |bytes| stream.write_all(bytes).is_ok(),
        );
        if close {
            break;
        }
    }
    let _ = stream.shutdown(Shutdown::Both);
}
