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
#[cfg(doc)]
use super::serve_faults::{FaultPlan, WireFault};
use super::serve_lockstep::{lock, Lockstep};
use super::serve_shared::{
    host_ms, Conn, ConnFaults, ConnService, Conns, ServeConfig, Shared, State, TOO_MANY_CONNECTIONS,
};
#[cfg(doc)]
use super::serve_shared::{CRAWL_PER_QUIET, MAINTAINER_QUIET_MS};
use super::serve_stats::Counters;
use super::serve_trace::TraceWriter;
use crate::rng::SimRng;
use crate::store::Store;
use crate::wire::Connection;
use std::cell::Cell;
use std::collections::BTreeMap;
use std::io::{self, Read, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

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
        let host_start_ms = host_ms(config.clock_offset_secs);
        let phase_ms = host_start_ms % 1000;
        let start_ms = host_start_ms - phase_ms;
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
            phase_ms,
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
    let plain = shared.is_plain();
    conn.set_deferred_writes(plain);
    let mut rbuf = ReadBuffer::default();
    let mut buf = Vec::new();
    loop {
        let n = match rbuf.read(&mut stream, &conn, &mut buf) {
            Ok(0) => break,
            Ok(n) => n,
            Err(_) => break,
        };
        shared.bytes_read.fetch_add(n as u64, Ordering::Relaxed);
        let service = ConnService::new(shared, &faults, plain);
        let close = conn.serve(&buf[..n], service, |bytes| {
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
    /// One read event: the bytes read, into `buf[..n]` (0 at the end of the input).
    /// `buf` is kept from read to read (grown as needed, never cleared).
    fn read(
        &mut self,
        stream: &mut TcpStream,
        conn: &Connection,
        buf: &mut Vec<u8>,
    ) -> io::Result<usize> {
        let held = conn.buffered();
        if let Some(want) = conn.wants() {
            let cap = want.clamp(1, self.size);
            return read_at(stream, buf, 0, cap);
        }
        if held == 0 {
            *self = ReadBuffer::default();
            if buf.len() > 2 * READ_BUFFER_SIZE {
                buf.truncate(READ_BUFFER_SIZE);
                buf.shrink_to_fit();
            }
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
                read_at(stream, buf, 0, avail)?
            } else {
                // Only what is waiting already (memcached's socket is non-blocking).
                stream.set_nonblocking(true)?;
                let r = read_at(stream, buf, got, avail);
                stream.set_nonblocking(false)?;
                match r {
                    Ok(n) => n,
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

/// Reads at most `cap` bytes into `buf[at..]` (growing `buf` to hold them); retries on
/// EINTR.
fn read_at(stream: &mut TcpStream, buf: &mut Vec<u8>, at: usize, cap: usize) -> io::Result<usize> {
    if buf.len() < at + cap {
        buf.resize(at + cap, 0);
    }
    loop {
        match stream.read(&mut buf[at..at + cap]) {
            Ok(n) => return Ok(n),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        }
    }
}
