//! Stress runs (`kvsim::net::stress`) against real memcached and `kvsim serve`: models run
//! from OS threads over TCP, histories checked for linearizability.

use kvsim::check::linearizability::{linearizable, CheckerLimits};
use kvsim::net::{stress, MemcachedProcess, ServeConfig, Server, StressConfig};
use kvsim::History;
use kvsim::Model;
use kvsim::SequentialSpec;
use kvsim::SimRng;
use kvsim::Verdict;
use kvsim::{Kv, KvError};
use std::collections::BTreeSet;
use std::time::Duration;

/// A shared counter: every operation is `incr ctr 1`.
struct Counter;

struct CounterSpec;

impl SequentialSpec for CounterSpec {
    type State = u64;
    type Op = ();
    type Ret = u64;
    fn name(&self) -> &'static str {
        "counter"
    }
    fn init(&self) -> u64 {
        0
    }
    fn step(&self, state: &u64, _op: &()) -> (u64, u64) {
        (state + 1, state + 1)
    }
}

impl Model for Counter {
    type Op = ();
    type Ret = u64;

    async fn setup<K: Kv>(&self, kv: &K) -> Result<(), KvError> {
        kv.set(b"ctr", b"0", 0).await.map(|_| ())
    }

    async fn run<K: Kv>(&self, kv: &K, _client: usize, _op: &()) -> Result<u64, KvError> {
        Ok(kv.incr(b"ctr", 1).await?.unwrap_or(0))
    }

    fn op(&self, _client: usize, _index: usize, _rng: &mut SimRng) {}

    fn check(&self, history: &History<(), u64>) -> Verdict {
        linearizable(
            &CounterSpec,
            history,
            CheckerLimits::time(Duration::from_secs(20)),
        )
    }
}

/// A log that must keep what it wrote: operation `i` of a client writes a 50 KB entry
/// `log:<client>:<i>` and reads back its entry from `LAG` operations ago (each entry is
/// read once, so memcached's LRU never sees it as hot).
struct Log;

const LAG: usize = 16;

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
struct LogOp {
    client: usize,
    index: usize,
}

fn entry(client: usize, index: usize) -> String {
    format!("log:{client}:{index}")
}

struct LogSpec;

impl SequentialSpec for LogSpec {
    type State = BTreeSet<(usize, usize)>;
    type Op = LogOp;
    type Ret = bool;
    fn name(&self) -> &'static str {
        "log"
    }
    fn init(&self) -> Self::State {
        BTreeSet::new()
    }
    fn step(&self, state: &Self::State, op: &LogOp) -> (Self::State, bool) {
        let mut next = state.clone();
        next.insert((op.client, op.index));
        let found = op.index < LAG || next.contains(&(op.client, op.index - LAG));
        (next, found)
    }
    fn partition(&self, op: &LogOp) -> Option<u64> {
        Some(op.client as u64)
    }
}

impl Model for Log {
    type Op = LogOp;
    type Ret = bool;

    async fn run<K: Kv>(&self, kv: &K, _client: usize, op: &LogOp) -> Result<bool, KvError> {
        kv.set(entry(op.client, op.index).as_bytes(), &[b'e'; 50_000], 0)
            .await?;
        if op.index < LAG {
            return Ok(true);
        }
        Ok(kv
            .get(entry(op.client, op.index - LAG).as_bytes())
            .await?
            .is_some())
    }

    fn op(&self, client: usize, index: usize, _rng: &mut SimRng) -> LogOp {
        LogOp { client, index }
    }

    fn check(&self, history: &History<LogOp, bool>) -> Verdict {
        linearizable(
            &LogSpec,
            history,
            CheckerLimits::time(Duration::from_secs(20)),
        )
    }
}

#[test]
fn counter_is_linearizable_against_memcached() {
    let Some(mc) = MemcachedProcess::for_test("memcached_stress", &[]) else {
        return;
    };
    let run = stress(&Counter, &StressConfig::new(vec![mc.addr()], 4, 100)).unwrap();
    assert_eq!(run.history.len(), 400);
    assert_eq!(run.unknown, 0);
    assert_eq!(run.verdict, Verdict::Ok);
}

#[test]
fn the_log_keeps_its_entries_with_plenty_of_memory() {
    let Some(mc) = MemcachedProcess::for_test("memcached_stress", &["-m", "64"]) else {
        return;
    };
    let run = stress(&Log, &StressConfig::new(vec![mc.addr()], 4, 60)).unwrap();
    assert_eq!(run.unknown, 0);
    assert_eq!(run.verdict, Verdict::Ok);
}

#[test]
fn a_tiny_memory_limit_evicts_entries_and_the_check_says_so() {
    let Some(mc) = MemcachedProcess::for_test("memcached_stress", &["-m", "2"]) else {
        return;
    };
    let run = stress(&Log, &StressConfig::new(vec![mc.addr()], 4, 60)).unwrap();
    assert_eq!(run.unknown, 0);
    let Verdict::Violation(v) = &run.verdict else {
        panic!("expected a violation, found {}", run.verdict)
    };
    assert_eq!(v.property, "linearizability");
    let missing = run
        .history
        .ops
        .iter()
        .filter(|o| o.outcome == kvsim::Outcome::Ok(false))
        .count();
    assert!(missing > 0);
}

#[test]
fn kvsim_serve_with_forced_evictions_shows_the_same_violation() {
    let server = Server::start(ServeConfig {
        listen: "127.0.0.1:0".parse().unwrap(),
        evict_probability: 0.2,
        seed: 3,
        ..ServeConfig::default()
    })
    .unwrap();
    let servers = vec![server.local_addr().to_string()];
    let run = stress(&Log, &StressConfig::new(servers.clone(), 3, 30)).unwrap();
    assert!(run.verdict.is_violation(), "{}", run.verdict);
    let calm = Server::start(ServeConfig {
        listen: "127.0.0.1:0".parse().unwrap(),
        ..ServeConfig::default()
    })
    .unwrap();
    let run = stress(
        &Log,
        &StressConfig::new(vec![calm.local_addr().to_string()], 3, 30),
    )
    .unwrap();
    assert_eq!(run.verdict, Verdict::Ok);
}

#[test]
fn a_closed_port_is_an_error_before_any_operation() {
    // A port nothing listens on.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let mut config = StressConfig::new(vec![format!("127.0.0.1:{port}")], 2, 5);
    config.connect_timeout = Duration::from_millis(200);
    let err = stress(&Counter, &config).unwrap_err();
    assert_eq!(
        err.to_string(),
        format!("cannot reach server 127.0.0.1:{port}: connection refused (os error 111)")
    );
}

/// A server that answers the first request (the probe) with a miss, then goes away.
fn answers_once() -> String {
    use std::io::{Read, Write};
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap().to_string();
    std::thread::spawn(move || {
        let (mut conn, _) = listener.accept().unwrap();
        let mut buf = [0u8; 256];
        let _ = conn.read(&mut buf);
        conn.write_all(b"END\r\n").unwrap();
        // Dropping both: the connection closes, the port refuses.
    });
    addr
}

#[test]
fn a_run_in_which_no_outcome_is_known_is_unknown_not_ok() {
    let mut config = StressConfig::new(vec![answers_once()], 2, 1000);
    config.io_timeout = Duration::from_millis(300);
    let start = std::time::Instant::now();
    let err = stress(&Counter, &config).unwrap_err();
    // Counter's setup already fails: an error, before any operation.
    assert!(err.to_string().starts_with("setup failed: "), "{err}");
    // Without a setup, every operation is unknown: never a pass.
    struct NoSetup;
    impl Model for NoSetup {
        type Op = ();
        type Ret = u64;
        async fn run<K: Kv>(&self, kv: &K, c: usize, op: &()) -> Result<u64, KvError> {
            Counter.run(kv, c, op).await
        }
        fn op(&self, _: usize, _: usize, _: &mut SimRng) {}
        fn check(&self, h: &History<(), u64>) -> Verdict {
            Counter.check(h)
        }
    }
    let mut config = StressConfig::new(vec![answers_once()], 2, 1000);
    config.io_timeout = Duration::from_millis(300);
    let run = stress(&NoSetup, &config).unwrap();
    // Every operation waiting out its own 300 ms timeout would take 2 × 1000 × 0.3 s:
    // the bound tells that apart from a run that gives up on a dead server, whatever
    // the machine's load (no test depends on the machine's speed).
    assert!(start.elapsed() < Duration::from_secs(120));
    assert_eq!(run.ok + run.failed, 0);
    assert!(run.unknown > 0 && run.unknown < 2000, "{}", run.unknown);
    let Verdict::Unknown(why) = &run.verdict else {
        panic!("expected unknown, found {}", run.verdict)
    };
    assert!(why.starts_with("no operation has a known outcome"), "{why}");
    assert!(run
        .stopped
        .as_deref()
        .unwrap_or_default()
        .contains("failed every command"));
    let clients: BTreeSet<usize> = run.history.ops.iter().map(|o| o.client).collect();
    assert_eq!(
        clients.len(),
        run.unknown,
        "each failure starts a new process"
    );
}

#[test]
fn keys_live_in_a_namespace_of_the_run() {
    let Some(mc) = MemcachedProcess::for_test("memcached_stress", &[]) else {
        return;
    };
    // Leftovers of the key the model uses, unprefixed: the run never sees them.
    let raw = kvsim::net::TcpKv::connect_one(&mc.addr(), 0).unwrap();
    kvsim::block_on_ready(raw.set(b"ctr", b"1000", 0)).unwrap();
    let mut config = StressConfig::new(vec![mc.addr()], 2, 10);
    let first = stress(&Counter, &config).unwrap();
    assert!(
        first.key_prefix.starts_with("kvsim.0."),
        "{}",
        first.key_prefix
    );
    assert_eq!(first.verdict, Verdict::Ok);
    let second = stress(&Counter, &config).unwrap();
    assert_ne!(first.key_prefix, second.key_prefix);
    // Both runs counted in their own keys; the leftover is untouched.
    let value = |key: String| {
        kvsim::block_on_ready(raw.get(key.as_bytes()))
            .unwrap()
            .map(|v| String::from_utf8(v).unwrap())
    };
    assert_eq!(value("ctr".to_string()).as_deref(), Some("1000"));
    assert_eq!(
        value(format!("{}ctr", first.key_prefix)).as_deref(),
        Some("20")
    );
    assert_eq!(
        value(format!("{}ctr", second.key_prefix)).as_deref(),
        Some("20")
    );
    // A prefixed key still has to fit memcached's 250 bytes: refused before sending.
    config.key_prefix = Some("p".repeat(248));
    let err = stress(&Counter, &config).unwrap_err();
    assert!(
        err.to_string()
            .contains("expected at most 250 bytes, found 251"),
        "{err}"
    );
}
