//! [`TcpKv`]: the [`Kv`] trait over TCP, for real memcached servers (or `kvsim serve`).
//!
//! One handle is one client: it keeps one connection per server, opened lazily with a
//! connect timeout and used with read and write timeouts. Keys are spread over several
//! servers with libmemcached's ketama ([`super::ketama`]); a multi-key `get` is split per
//! server and its hits put back in request order, `flush_all` goes to every server.
//!
//! Failures are values, never panics. A timeout while waiting for a reply is
//! [`KvError::Timeout`]; a refused, reset or closed connection, or bytes that are not a
//! memcached reply, is [`KvError::ServerGone`]: in both cases the command may or may not
//! have taken effect, so the operation's outcome is unknown. (A failure to connect is
//! reported the same way: conservative, as "unknown" never fakes a violation.) The
//! connection is then dropped and the next command opens a new one.
//!
//! The async methods never return `Pending`: they block the calling thread, so run them
//! with [`crate::kv::block_on_ready`] from OS threads, one handle per thread. `now_ms` is
//! the host's real clock (these servers expire items by it), `sleep_ms` sleeps the thread,
//! and `random_u64` draws from a [`SimRng`] seeded per client.
//!
//! Two options serve stress runs. A key prefix ([`TcpKvConfig::key_prefix`]) puts every
//! key of the handle in a namespace of its own: it is prepended to each key sent (the
//! prefixed key must still be a valid memcached key, at most 250 bytes) and stripped from
//! the keys of the values received, so the structure never sees it. A [`StopSignal`]
//! shared by a run's handles makes them fail fast: once the run's deadline has passed, or
//! a server has failed every command (connections refused, lost or timed out) for longer
//! than its `dead_after`, every command returns [`KvError::Stopped`] without being sent.
//! That error is not indeterminate, so structures that retry timeouts and lost
//! connections give up at once instead of retrying for ever.

use super::ketama::Ketama;
use crate::command::{Command, Reply, Value};
use crate::kv::{Kv, KvError};
use crate::rng::SimRng;
use crate::wire::{encode_command, ReplyParser};
use std::collections::BTreeMap;
use std::io::{self, Read, Write};
use std::net::{SocketAddr, TcpStream, ToSocketAddrs};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// Tells a run's handles to stop sending (see the module docs): shared through an
/// [`Arc`] in each handle's [`TcpKvConfig::stop`].
#[derive(Debug)]
pub struct StopSignal {
    deadline: Option<(Instant, String)>,
    dead_after: Duration,
    state: Mutex<StopState>,
}

#[derive(Debug, Default)]
struct StopState {
    reason: Option<String>,
    /// Set when a server was found dead (its reason).
    dead: Option<String>,
    /// Per server: since when every command to it failed, and the last failure.
    failing: BTreeMap<String, (Instant, String)>,
}

impl StopSignal {
    /// A signal that fires at `deadline` (with `why` as its reason), or when a server has
    /// failed every command for `dead_after`.
    pub fn new(deadline: Option<(Instant, String)>, dead_after: Duration) -> Self {
        StopSignal {
            deadline,
            dead_after,
            state: Mutex::new(StopState::default()),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, StopState> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Stops the run now, for `reason` (the first reason given is kept).
    pub fn stop(&self, reason: impl Into<String>) {
        let mut state = self.lock();
        if state.reason.is_none() {
            state.reason = Some(reason.into());
        }
    }

    /// Why the run stopped, or `None` while it goes on (a passed deadline stops it).
    pub fn reason(&self) -> Option<String> {
        let mut state = self.lock();
        if state.reason.is_none() {
            if let Some((at, why)) = &self.deadline {
                if Instant::now() >= *at {
                    state.reason = Some(why.clone());
                }
            }
        }
        state.reason.clone()
    }

    /// Why a server was found dead, if one was.
    pub fn dead_server(&self) -> Option<String> {
        self.lock().dead.clone()
    }

    /// Whether some server has failed its last commands (it may be down).
    pub fn any_failing(&self) -> bool {
        !self.lock().failing.is_empty()
    }

    /// Notes that a command to `server` failed (timeout, refused or lost connection);
    /// stops the run if the server has failed everything for `dead_after`.
    fn failed(&self, server: &str, error: &KvError) {
        let now = Instant::now();
        let mut state = self.lock();
        let detail = match error {
            KvError::ServerGone { detail, .. } => detail.clone(),
            other => other.to_string(),
        };
        let since = match state.failing.get_mut(server) {
            Some((since, last)) => {
                *last = detail.clone();
                *since
            }
            None => {
                state
                    .failing
                    .insert(server.to_string(), (now, detail.clone()));
                now
            }
        };
        if now.duration_since(since) >= self.dead_after && state.dead.is_none() {
            let why = format!(
                "server {server} failed every command for {:.1} s (last: {detail})",
                now.duration_since(since).as_secs_f64()
            );
            state.dead = Some(why.clone());
            state.reason.get_or_insert(why);
        }
    }

    /// Notes that `server` answered.
    fn answered(&self, server: &str) {
        let mut state = self.lock();
        if !state.failing.is_empty() {
            state.failing.remove(server);
        }
    }
}

/// How a [`TcpKv`] connects.
#[derive(Clone, Debug)]
pub struct TcpKvConfig {
    /// The servers, as `host:port`, in ketama order.
    pub servers: Vec<String>,
    /// How long to wait for a connection.
    pub connect_timeout: Duration,
    /// How long to wait for (each part of) a reply, and for a send to proceed.
    pub io_timeout: Duration,
    /// Seeds this client's random numbers.
    pub seed: u64,
    /// Prepended to every key sent and stripped from every key received (empty: none).
    pub key_prefix: Vec<u8>,
    /// Makes the handle fail fast once the run is over (see [`StopSignal`]).
    pub stop: Option<Arc<StopSignal>>,
}

impl TcpKvConfig {
    /// Defaults for `servers`: 1 s to connect, 2 s per read or write, seed 0.
    pub fn new(servers: impl IntoIterator<Item = impl Into<String>>) -> Self {
        TcpKvConfig {
            servers: servers.into_iter().map(Into::into).collect(),
            connect_timeout: Duration::from_secs(1),
            io_timeout: Duration::from_secs(2),
            seed: 0,
            key_prefix: Vec::new(),
            stop: None,
        }
    }
}

/// A bad server address, found before any connection is tried.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum AddrError {
    /// No server was given.
    #[error("no server: expected at least one host:port")]
    NoServers,
    /// An address that is not `host:port`.
    #[error("bad server address {addr:?}: expected host:port, {why}")]
    Bad {
        /// The address as given.
        addr: String,
        /// What is wrong.
        why: String,
    },
}

struct Conn {
    stream: TcpStream,
    parser: ReplyParser,
}

struct Server {
    name: String,
    addrs: Vec<SocketAddr>,
    conn: Mutex<Option<Conn>>,
}

/// A memcached client implementing [`Kv`] over TCP (see the module docs).
pub struct TcpKv {
    servers: Vec<Server>,
    ring: Ketama,
    config: TcpKvConfig,
    rng: Mutex<SimRng>,
}

fn split_host_port(addr: &str) -> Result<(&str, u16), AddrError> {
    let bad = |why: &str| AddrError::Bad {
        addr: addr.to_string(),
        why: why.to_string(),
    };
    let (host, port) = addr.rsplit_once(':').ok_or_else(|| bad("found no ':'"))?;
    let port: u16 = port.parse().map_err(|_| bad("found a bad port"))?;
    let host = host.trim_start_matches('[').trim_end_matches(']');
    if host.is_empty() {
        return Err(bad("found an empty host"));
    }
    Ok((host, port))
}

impl TcpKv {
    /// A client for `config.servers`. Addresses are resolved now; connections are opened
    /// on first use.
    pub fn new(config: TcpKvConfig) -> Result<Self, AddrError> {
        if config.servers.is_empty() {
            return Err(AddrError::NoServers);
        }
        let mut servers = Vec::new();
        let mut ring_input = Vec::new();
        for addr in &config.servers {
            let (host, port) = split_host_port(addr)?;
            let addrs: Vec<SocketAddr> = (host, port)
                .to_socket_addrs()
                .map_err(|e| AddrError::Bad {
                    addr: addr.clone(),
                    why: format!("it does not resolve: {e}"),
                })?
                .collect();
            ring_input.push((host.to_string(), port));
            servers.push(Server {
                name: addr.clone(),
                addrs,
                conn: Mutex::new(None),
            });
        }
        let ring_ref: Vec<(&str, u16, u32)> = ring_input
            .iter()
            .map(|(h, p)| (h.as_str(), *p, 1))
            .collect();
        Ok(TcpKv {
            ring: Ketama::new(&ring_ref),
            servers,
            rng: Mutex::new(SimRng::new(config.seed)),
            config,
        })
    }

    /// A client for one server with default timeouts.
    pub fn connect_one(addr: &str, seed: u64) -> Result<Self, AddrError> {
        let mut config = TcpKvConfig::new([addr]);
        config.seed = seed;
        Self::new(config)
    }

    /// The index of the server that holds `key`.
    pub fn server_for(&self, key: &[u8]) -> usize {
        self.ring.server_for(key)
    }

    /// Sends `command` to server `index` and reads its reply (blocking). Keys are sent
    /// as they are (no prefix); a stopped handle sends nothing.
    pub fn execute_on(&self, index: usize, command: &Command) -> Result<Reply, KvError> {
        let server = &self.servers[index];
        if let Some(stop) = &self.config.stop {
            if let Some(reason) = stop.reason() {
                return Err(KvError::Stopped {
                    command: command.to_string(),
                    reason,
                });
            }
        }
        let mut guard = server.conn.lock().unwrap_or_else(|p| p.into_inner());
        let result = self.exchange(server, &mut guard, command);
        if result.is_err() {
            // The stream's state is unknown: never reuse it.
            *guard = None;
        }
        if let Some(stop) = &self.config.stop {
            match &result {
                Ok(_) => stop.answered(&server.name),
                Err(e) if e.is_indeterminate() => stop.failed(&server.name, e),
                Err(_) => {}
            }
        }
        result
    }

    /// Checks that every server answers (a `get` of a key no structure uses): the first
    /// server that does not, with the error. Run before a stress run's first operation.
    pub fn probe(&self) -> Result<(), (String, KvError)> {
        let command = Command::Get {
            with_cas: false,
            keys: vec![b"kvsim:probe".to_vec()],
        };
        for (index, server) in self.servers.iter().enumerate() {
            self.execute_on(index, &command)
                .map_err(|e| (server.name.clone(), e))?;
        }
        Ok(())
    }

    fn exchange(
        &self,
        server: &Server,
        slot: &mut Option<Conn>,
        command: &Command,
    ) -> Result<Reply, KvError> {
        let gone = |detail: String| KvError::ServerGone {
            server: server.name.clone(),
            command: command.to_string(),
            detail,
        };
        if slot.is_none() {
            *slot = Some(
                self.open(server)
                    .map_err(|e| gone(format!("connect: {e}")))?,
            );
        }
        let conn = slot.as_mut().expect("opened above");
        let mut bytes = Vec::new();
        encode_command(command, &mut bytes);
        conn.stream.write_all(&bytes).map_err(|e| match e.kind() {
            io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut => KvError::Timeout {
                command: command.to_string(),
            },
            _ => gone(format!("send: {e}")),
        })?;
        let mut buf = [0u8; 16 * 1024];
        loop {
            match conn.parser.next_reply() {
                Ok(Some(reply)) => return Ok(reply),
                Ok(None) => {}
                Err(e) => return Err(gone(format!("protocol: {e}"))),
            }
            match conn.stream.read(&mut buf) {
                Ok(0) => return Err(gone("connection closed by the server".to_string())),
                Ok(n) => conn.parser.feed(&buf[..n]),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e)
                    if matches!(
                        e.kind(),
                        io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
                    ) =>
                {
                    return Err(KvError::Timeout {
                        command: command.to_string(),
                    })
                }
                Err(e) => return Err(gone(format!("receive: {e}"))),
            }
        }
    }

    fn open(&self, server: &Server) -> io::Result<Conn> {
        let mut last = io::Error::new(io::ErrorKind::NotFound, "no address");
        for addr in &server.addrs {
            match TcpStream::connect_timeout(addr, self.config.connect_timeout) {
                Ok(stream) => {
                    stream.set_nodelay(true)?;
                    stream.set_read_timeout(Some(self.config.io_timeout))?;
                    stream.set_write_timeout(Some(self.config.io_timeout))?;
                    return Ok(Conn {
                        stream,
                        parser: ReplyParser::new(),
                    });
                }
                Err(e) => last = e,
            }
        }
        Err(last)
    }

    /// Runs a multi-key retrieval: one sub-command per server, hits put back in the order
    /// of the request's keys.
    fn multi_get(&self, command: &Command) -> Result<Reply, KvError> {
        let keys = match command {
            Command::Get { keys, .. } | Command::Gat { keys, .. } => keys,
            _ => unreachable!("multi_get is only called for retrievals"),
        };
        let owners: Vec<usize> = keys.iter().map(|k| self.server_for(k)).collect();
        let mut per_server: Vec<Vec<Value>> = vec![Vec::new(); self.servers.len()];
        let mut used: Vec<usize> = owners.clone();
        used.sort_unstable();
        used.dedup();
        for &s in &used {
            let sub_keys: Vec<Vec<u8>> = keys
                .iter()
                .zip(&owners)
                .filter(|(_, &o)| o == s)
                .map(|(k, _)| k.clone())
                .collect();
            let mut sub = command.clone();
            if let Command::Get { keys, .. } | Command::Gat { keys, .. } = &mut sub {
                *keys = sub_keys;
            }
            match self.execute_on(s, &sub)? {
                Reply::Values(values) => per_server[s] = values,
                other => return Ok(other),
            }
        }
        let mut cursors = vec![0usize; self.servers.len()];
        let mut merged = Vec::new();
        for (key, &s) in keys.iter().zip(&owners) {
            if let Some(v) = per_server[s].get(cursors[s]) {
                if &v.key == key {
                    merged.push(v.clone());
                    cursors[s] += 1;
                }
            }
        }
        Ok(Reply::Values(merged))
    }

    fn execute_blocking(&self, mut command: Command) -> Result<Reply, KvError> {
        // A client that reports every operation's outcome needs every reply: `noreply`
        // would only save a round trip, so it is asked for anyway.
        clear_noreply(&mut command);
        let prefix = &self.config.key_prefix;
        if prefix.is_empty() {
            return self.route(command);
        }
        for key in keys_mut(&mut command) {
            key.splice(0..0, prefix.iter().copied());
        }
        // The prefixed keys must still be keys memcached accepts (at most 250 bytes).
        command.validate()?;
        let mut reply = self.route(command)?;
        if let Reply::Values(values) = &mut reply {
            for v in values {
                if v.key.starts_with(prefix) {
                    v.key.drain(..prefix.len());
                }
            }
        }
        Ok(reply)
    }

    fn route(&self, command: Command) -> Result<Reply, KvError> {
        match &command {
            Command::FlushAll { .. } => {
                let mut first_other = None;
                for s in 0..self.servers.len() {
                    let reply = self.execute_on(s, &command)?;
                    if reply != Reply::Ok && first_other.is_none() {
                        first_other = Some(reply);
                    }
                }
                Ok(first_other.unwrap_or(Reply::Ok))
            }
            Command::Get { keys, .. } | Command::Gat { keys, .. }
                if self.servers.len() > 1 && keys.len() > 1 =>
            {
                self.multi_get(&command)
            }
            _ => {
                let s = command.first_key().map_or(0, |k| self.server_for(k));
                self.execute_on(s, &command)
            }
        }
    }
}

fn keys_mut(command: &mut Command) -> Vec<&mut Vec<u8>> {
    command.keys_mut()
}

fn clear_noreply(command: &mut Command) {
    command.clear_noreply();
}

impl Kv for TcpKv {
    async fn execute(&self, command: Command) -> Result<Reply, KvError> {
        self.execute_blocking(command)
    }

    fn now_ms(&self) -> u64 {
        SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_millis() as u64)
    }

    async fn sleep_ms(&self, ms: u64) {
        let Some(stop) = &self.config.stop else {
            std::thread::sleep(Duration::from_millis(ms));
            return;
        };
        // A stopped handle stops waiting (its next command fails at once anyway): sleep in
        // slices, looking at the signal between them.
        let end = Instant::now() + Duration::from_millis(ms);
        while stop.reason().is_none() {
            let left = end.saturating_duration_since(Instant::now());
            if left.is_zero() {
                break;
            }
            std::thread::sleep(left.min(Duration::from_millis(20)));
        }
    }

    fn random_u64(&self) -> u64 {
        self.rng
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .next_u64()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kv::block_on_ready;
    use std::net::TcpListener;

    #[test]
    fn addresses_are_checked() {
        assert_eq!(
            TcpKv::new(TcpKvConfig::new(Vec::<String>::new())).err(),
            Some(AddrError::NoServers)
        );
        let err = TcpKv::connect_one("localhost", 0).err().unwrap();
        assert_eq!(
            err.to_string(),
            "bad server address \"localhost\": expected host:port, found no ':'"
        );
    }

    #[test]
    fn refused_connection_is_server_gone_not_a_panic() {
        // Bind then drop a listener: its port now refuses connections.
        let port = TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let kv = TcpKv::connect_one(&format!("127.0.0.1:{port}"), 1).unwrap();
        let err = block_on_ready(kv.get(b"k")).unwrap_err();
        assert!(err.is_indeterminate(), "{err}");
        assert!(matches!(err, KvError::ServerGone { .. }), "{err}");
    }

    #[test]
    fn a_stopped_handle_fails_fast_without_sending_and_does_not_sleep() {
        let port = TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let mut config = TcpKvConfig::new([format!("127.0.0.1:{port}")]);
        let stop = Arc::new(StopSignal::new(None, Duration::from_millis(100)));
        config.stop = Some(Arc::clone(&stop));
        let kv = TcpKv::new(config).unwrap();
        // Refused connections: indeterminate until the server has failed for 100 ms.
        let start = Instant::now();
        let err = loop {
            match block_on_ready(kv.get(b"k")) {
                Err(e) if e.is_indeterminate() => assert!(start.elapsed() < Duration::from_secs(2)),
                Err(e) => break e,
                Ok(_) => panic!("nothing listens"),
            }
        };
        assert!(matches!(err, KvError::Stopped { .. }), "{err}");
        // The time it failed for is measured: the bound (0.1 s) or a little more on a
        // loaded machine (one more refused attempt), never less.
        let secs: f64 = err
            .to_string()
            .split("failed every command for ")
            .nth(1)
            .and_then(|rest| rest.split(' ').next())
            .and_then(|n| n.parse().ok())
            .unwrap_or_else(|| panic!("{err}"));
        assert!((0.1..2.0).contains(&secs), "{err}");
        assert!(stop.dead_server().is_some());
        let slept = Instant::now();
        block_on_ready(kv.sleep_ms(5_000));
        assert!(slept.elapsed() < Duration::from_millis(100));
        // A deadline in the past stops a handle before it sends anything.
        let past = Instant::now();
        let stop = Arc::new(StopSignal::new(
            Some((past, "deadline".to_string())),
            Duration::from_secs(1),
        ));
        let mut config = TcpKvConfig::new([format!("127.0.0.1:{port}")]);
        config.stop = Some(stop);
        let err = block_on_ready(TcpKv::new(config).unwrap().get(b"k")).unwrap_err();
        assert_eq!(err.to_string(), "`get k` not sent: deadline");
    }

    #[test]
    fn silent_server_is_a_timeout_and_a_hangup_is_server_gone() {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let server = std::thread::spawn(move || {
            // First connection: read the request, say nothing, wait for the client to give up.
            let (mut a, _) = listener.accept().unwrap();
            let mut buf = [0u8; 64];
            let _ = a.read(&mut buf);
            // Second connection: half a reply, then hang up.
            let (mut b, _) = listener.accept().unwrap();
            let _ = b.read(&mut buf);
            b.write_all(b"VALUE k 0 5\r\nab").unwrap();
            drop(b);
            drop(a);
        });
        let mut config = TcpKvConfig::new([addr.to_string()]);
        config.io_timeout = Duration::from_millis(200);
        let kv = TcpKv::new(config).unwrap();
        let err = block_on_ready(kv.add(b"k", b"v", 0)).unwrap_err();
        assert!(matches!(err, KvError::Timeout { .. }), "{err}");
        let err = block_on_ready(kv.get(b"k")).unwrap_err();
        assert!(matches!(err, KvError::ServerGone { .. }), "{err}");
        assert!(err.to_string().contains("closed by the server"), "{err}");
        server.join().unwrap();
    }
}
