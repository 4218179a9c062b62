//! `kvsim serve`'s faults on the wire: each one driven through the control channel at a
//! chosen moment, its effect seen by a memcached client on the data port, and its line
//! in the trace. Also `stats`, the control channel's bounds, and the seeded faults.

use kvsim::net::serve_trace::TraceLine;
use kvsim::net::{FaultPlan, ServeConfig, Server};
use kvsim::FaultKind;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::PathBuf;
use std::time::Duration;

struct Fixture {
    server: Server,
    trace: PathBuf,
}

fn start(faults: FaultPlan) -> Fixture {
    start_with(faults, kvsim::store::StoreConfig::default())
}

/// A server with a control channel and a trace, on `store`.
fn start_with(faults: FaultPlan, store: kvsim::store::StoreConfig) -> Fixture {
    let dir = std::env::temp_dir().join(format!(
        "kvsim-serve-faults-{}-{}",
        std::process::id(),
        rand_suffix()
    ));
    std::fs::create_dir_all(&dir).unwrap();
    let trace = dir.join("trace.jsonl");
    let server = Server::start(ServeConfig {
        listen: "127.0.0.1:0".parse().unwrap(),
        control: Some("127.0.0.1:0".parse().unwrap()),
        trace: Some(trace.clone()),
        faults,
        store,
        ..ServeConfig::default()
    })
    .expect("the server starts");
    Fixture { server, trace }
}

fn rand_suffix() -> u64 {
    use std::sync::atomic::{AtomicU64, Ordering};
    static N: AtomicU64 = AtomicU64::new(0);
    N.fetch_add(1, Ordering::SeqCst)
}

/// A memcached text-protocol client on one connection.
struct Client {
    stream: TcpStream,
    reader: BufReader<TcpStream>,
}

impl Client {
    fn connect(f: &Fixture) -> Client {
        let stream = TcpStream::connect(f.server.local_addr()).unwrap();
        stream
            .set_read_timeout(Some(Duration::from_secs(5)))
            .unwrap();
        let reader = BufReader::new(stream.try_clone().unwrap());
        Client { stream, reader }
    }

    fn send(&mut self, bytes: &str) {
        self.stream.write_all(bytes.as_bytes()).unwrap();
    }

    /// One reply line, or `None` when the server closed the connection.
    fn line(&mut self) -> Option<String> {
        let mut l = String::new();
        match self.reader.read_line(&mut l) {
            Ok(0) | Err(_) => None,
            Ok(_) => Some(l.trim_end().to_string()),
        }
    }

    /// `get key`'s value, or `None` for a miss.
    fn get(&mut self, key: &str) -> Option<String> {
        self.send(&format!("get {key}\r\n"));
        let first = self.line().expect("a reply");
        if first == "END" {
            return None;
        }
        let value = self.line().expect("a value");
        assert_eq!(self.line().as_deref(), Some("END"));
        Some(value)
    }

    fn set(&mut self, key: &str, value: &str, exptime: u32) -> String {
        self.send(&format!(
            "set {key} 0 {exptime} {}\r\n{value}\r\n",
            value.len()
        ));
        self.line().expect("a reply")
    }

    /// The id the control channel knows this connection by (after a `version` round
    /// trip: a connection the kernel queued may not be accepted yet).
    fn id(&mut self, f: &Fixture) -> u64 {
        self.send("version\r\n");
        assert_eq!(self.line().as_deref(), Some("VERSION 1.6.18"));
        let me = self.stream.local_addr().unwrap().to_string();
        let lines = control(f, "conns");
        lines
            .iter()
            .find_map(|l| {
                let w: Vec<&str> = l.split(' ').collect();
                (w.len() == 3 && w[2] == me).then(|| w[1].parse().unwrap())
            })
            .unwrap_or_else(|| panic!("{me} not in {lines:?}"))
    }
}

/// Sends one control line; its reply lines (through `END` for the listing commands).
fn control(f: &Fixture, line: &str) -> Vec<String> {
    let addr = f.server.control_addr().expect("a control channel");
    let mut s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    s.write_all(format!("{line}\n").as_bytes()).unwrap();
    let mut r = BufReader::new(s);
    let listing = ["conns", "stats", "help"].contains(&line);
    let mut out = Vec::new();
    loop {
        let mut l = String::new();
        if r.read_line(&mut l).unwrap_or(0) == 0 {
            break;
        }
        let l = l.trim_end().to_string();
        let end = !listing || l == "END";
        out.push(l);
        if end {
            break;
        }
    }
    out
}

fn trace(f: &Fixture) -> Vec<TraceLine> {
    std::fs::read_to_string(&f.trace)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).expect("a trace line is JSON"))
        .collect()
}

fn traced(f: &Fixture, kind: &str, text: &str) -> bool {
    trace(f).iter().any(|l| l.kind == kind && l.text == text)
}

#[test]
fn evict_removes_a_key_now() {
    let f = start(FaultPlan::default());
    let mut c = Client::connect(&f);
    assert_eq!(c.set("k", "v", 0), "STORED");
    assert_eq!(control(&f, "evict k"), ["OK"]);
    assert_eq!(c.get("k"), None);
    assert_eq!(control(&f, "evict k"), ["NOT_FOUND"]);
    assert!(traced(&f, "fault", "evict k"));
    assert!(traced(&f, "reply", "STORED"));
}

/// memcached's own eviction under a memory limit is traced as the simulator traces it:
/// `lru evicts K from slab class N (C-byte chunks)`, the class the key's size put it in.
#[test]
fn memory_limit_evictions_name_their_slab_class() {
    let f = start_with(
        FaultPlan::default(),
        kvsim::store::StoreConfig {
            memory_limit: Some(4096),
            geometry: kvsim::store::geometry::Geometry {
                page_size: 1024,
                slab_chunk_max: 512,
                ..Default::default()
            },
            ..Default::default()
        },
    );
    let mut c = Client::connect(&f);
    for i in 0..60 {
        assert_eq!(c.set(&format!("k{i:02}"), "0123456789", 0), "STORED");
    }
    // `k00` (3-byte key, 10-byte value) is in class 1, whose 96-byte chunks fill first.
    assert_eq!(c.get("k00"), None, "the oldest item was evicted");
    assert!(
        traced(
            &f,
            "fault",
            "lru evicts k00 from slab class 1 (96-byte chunks)"
        ),
        "{:?}",
        trace(&f)
            .iter()
            .filter(|l| l.kind == "fault")
            .map(|l| l.text.clone())
            .collect::<Vec<_>>()
    );
}

#[test]
fn restart_loses_the_data_and_closes_every_connection() {
    let f = start(FaultPlan::default());
    let mut c = Client::connect(&f);
    assert_eq!(c.set("k", "v", 0), "STORED");
    assert_eq!(control(&f, "restart"), ["OK"]);
    assert_eq!(c.line(), None, "the old connection is closed");
    let mut again = Client::connect(&f);
    assert_eq!(again.get("k"), None);
    assert!(traced(&f, "fault", "restart"));
}

#[test]
fn a_clock_jump_runs_expiries_out() {
    let f = start(FaultPlan::default());
    let mut c = Client::connect(&f);
    assert_eq!(c.set("lease", "me", 3), "STORED");
    assert_eq!(c.get("lease").as_deref(), Some("me"));
    assert_eq!(control(&f, "clock +4"), ["OK"]);
    assert_eq!(c.get("lease"), None);
    assert!(traced(&f, "fault", "clock +4 s"));
}

#[test]
fn a_dropped_request_is_not_applied_and_its_connection_closes() {
    let f = start(FaultPlan::default());
    let mut c = Client::connect(&f);
    let id = c.id(&f);
    assert_eq!(
        control(&f, &format!("drop-request {id}")),
        ["OK drop-request armed"]
    );
    c.send("set k 0 0 1\r\nv\r\n");
    assert_eq!(c.line(), None, "no reply: the connection is closed");
    assert_eq!(Client::connect(&f).get("k"), None, "not applied");
    let t = trace(&f);
    let fault = t
        .iter()
        .position(|l| l.kind == "fault" && l.text == "drop-request");
    assert!(fault.is_some(), "{t:?}");
    assert!(
        !t.iter().any(|l| l.kind == "command" && l.conn == Some(id)),
        "the dropped set never reached the store: {t:?}"
    );
}

#[test]
fn a_dropped_reply_is_applied_but_never_sent() {
    let f = start(FaultPlan::default());
    let mut c = Client::connect(&f);
    assert_eq!(control(&f, "drop-reply next"), ["OK drop-reply armed"]);
    c.send("set k 0 0 1\r\nv\r\n");
    assert_eq!(c.line(), None, "no reply: the connection is closed");
    assert_eq!(
        Client::connect(&f).get("k").as_deref(),
        Some("v"),
        "applied"
    );
    assert!(traced(&f, "fault", "drop-reply"));
    assert!(
        traced(&f, "reply", "STORED"),
        "the reply the client never saw"
    );
}

#[test]
fn a_delayed_reply_arrives_after_the_clients_timeout() {
    let f = start(FaultPlan::default());
    let mut c = Client::connect(&f);
    let id = c.id(&f);
    assert_eq!(
        control(&f, &format!("delay-reply {id} 600")),
        ["OK delay-reply 600 ms armed"]
    );
    c.stream
        .set_read_timeout(Some(Duration::from_millis(150)))
        .unwrap();
    c.send("set k 0 0 1\r\nv\r\n");
    let mut buf = [0u8; 64];
    let timed_out = c.stream.read(&mut buf).is_err();
    assert!(timed_out, "nothing within the client's 150 ms timeout");
    // Meanwhile the write has happened: the delay is the reply's, not the request's.
    assert_eq!(Client::connect(&f).get("k").as_deref(), Some("v"));
    c.stream
        .set_read_timeout(Some(Duration::from_secs(5)))
        .unwrap();
    assert_eq!(c.line().as_deref(), Some("STORED"), "the late reply");
    assert!(traced(&f, "fault", "delay-reply 600 ms"));
}

#[test]
fn a_paused_connection_applies_its_request_late() {
    let f = start(FaultPlan::default());
    let mut c = Client::connect(&f);
    let id = c.id(&f);
    control(&f, &format!("pause {id} 600"));
    c.send("set k 0 0 1\r\nv\r\n");
    std::thread::sleep(Duration::from_millis(150));
    assert_eq!(Client::connect(&f).get("k"), None, "not applied yet");
    assert_eq!(c.line().as_deref(), Some("STORED"));
    assert_eq!(Client::connect(&f).get("k").as_deref(), Some("v"));
    assert!(traced(&f, "fault", "pause 600 ms"));
}

#[test]
fn stats_counts_consistently_and_reset_zeroes_it() {
    let f = start(FaultPlan::default());
    let mut c = Client::connect(&f);
    c.set("a", "1", 0);
    c.get("a");
    c.get("nope");
    c.send("stats\r\n");
    let mut stats = std::collections::BTreeMap::new();
    loop {
        let l = c.line().unwrap();
        if l == "END" {
            break;
        }
        let w: Vec<&str> = l.splitn(3, ' ').collect();
        assert_eq!(w[0], "STAT", "{l}");
        stats.insert(w[1].to_string(), w[2].to_string());
    }
    for (k, v) in [
        ("version", "1.6.18"),
        ("cmd_get", "2"),
        ("get_hits", "1"),
        ("get_misses", "1"),
        ("cmd_set", "1"),
        ("curr_items", "1"),
        ("curr_connections", "1"),
    ] {
        assert_eq!(stats.get(k).map(String::as_str), Some(v), "{k}: {stats:?}");
    }
    c.send("stats reset\r\n");
    assert_eq!(c.line().as_deref(), Some("RESET"));
    c.send("stats sizes\r\n");
    assert_eq!(c.line().as_deref(), Some("STAT sizes_status disabled"));
    assert_eq!(c.line().as_deref(), Some("END"));
    c.send("stats nonsense\r\n");
    assert_eq!(c.line().as_deref(), Some("ERROR"));
    assert_eq!(
        control(&f, "stats")
            .iter()
            .filter(|l| l.as_str() == "STAT cmd_get 0")
            .count(),
        1
    );
}

#[test]
fn the_control_channel_refuses_bad_lines_with_what_it_expected() {
    let f = start(FaultPlan::default());
    assert_eq!(
        control(&f, "pause 99 10"),
        ["ERROR no open connection 99: open are []"]
    );
    assert_eq!(
        control(&f, "pause all 10"),
        ["ERROR no open connection to arm: expected at least one for all"]
    );
    let mut c = Client::connect(&f);
    c.id(&f);
    assert_eq!(control(&f, "pause all 10"), ["OK pause 10 ms armed on 1"]);
    let long = format!("evict {}", "k".repeat(5000));
    assert_eq!(
        control(&f, &long),
        ["ERROR line too long: expected at most 1024 bytes"]
    );
    assert!(control(&f, "explode")[0].starts_with("ERROR unknown command \"explode\""));
}

#[test]
fn seeded_faults_lose_requests_at_their_rate() {
    let f = start(FaultPlan {
        kinds: vec![FaultKind::Lose],
        rate: 1.0,
        ..FaultPlan::default()
    });
    let mut c = Client::connect(&f);
    c.send("set k 0 0 1\r\nv\r\n");
    assert_eq!(c.line(), None, "every request's connection is dropped");
    let t = trace(&f);
    assert!(
        t.iter()
            .any(|l| l.kind == "fault" && (l.text == "drop-request" || l.text == "drop-reply")),
        "{t:?}"
    );
}

/// `--lockstep 3`: three clients that each wait for their replies append to one key; the
/// order the server served them in (the key's final value) is the same for the same seed,
/// and another seed gives another.
#[test]
fn lockstep_repeats_the_interleaving_of_a_seed() {
    use kvsim::net::LockstepConfig;
    let run = |seed: u64| -> String {
        let server = Server::start(ServeConfig {
            listen: "127.0.0.1:0".parse().unwrap(),
            seed,
            lockstep: Some(LockstepConfig {
                clients: 3,
                quantum: Duration::from_secs(10),
            }),
            ..ServeConfig::default()
        })
        .unwrap();
        let addr = server.local_addr();
        // Connect in a fixed order (connection ids are the scheduler's names), each
        // accepted before the next connects (`version` is not a store command: it is
        // answered without waiting for a turn).
        let streams: Vec<TcpStream> = (0..3)
            .map(|_| {
                let mut s = TcpStream::connect(addr).unwrap();
                s.write_all(b"version\r\n").unwrap();
                let mut line = String::new();
                BufReader::new(s.try_clone().unwrap())
                    .read_line(&mut line)
                    .unwrap();
                s
            })
            .collect();
        let threads: Vec<_> = streams
            .into_iter()
            .enumerate()
            .map(|(i, s)| {
                std::thread::spawn(move || {
                    let mut r = BufReader::new(s.try_clone().unwrap());
                    let mut w = s;
                    let mut line = String::new();
                    w.write_all(b"add log 0 0 0\r\n\r\n").unwrap();
                    r.read_line(&mut line).unwrap();
                    for _ in 0..4 {
                        w.write_all(format!("append log 0 0 1\r\n{i}\r\n").as_bytes())
                            .unwrap();
                        line.clear();
                        r.read_line(&mut line).unwrap();
                        assert_eq!(line, "STORED\r\n");
                    }
                })
            })
            .collect();
        for t in threads {
            t.join().unwrap();
        }
        let mut c = TcpStream::connect(addr).unwrap();
        c.write_all(b"get log\r\n").unwrap();
        let mut r = BufReader::new(c);
        let (mut head, mut value) = (String::new(), String::new());
        r.read_line(&mut head).unwrap();
        r.read_line(&mut value).unwrap();
        value.trim_end().to_string()
    };
    let first = run(5);
    assert_eq!(first.len(), 12, "{first}");
    assert_eq!(run(5), first);
    assert!(
        (6..12).any(|s| run(s) != first),
        "seeds pick different orders"
    );
}
