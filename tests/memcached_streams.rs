//! Differential test of whole byte streams against a real memcached 1.6.18 (issue #32.4,
//! #32.5): seeded random bursts of about 20 classic commands, well-formed and misframed
//! (a data block shorter or longer than its declared length, no `\r\n` after it,
//! negative, 32-bit-wrapping and too-large lengths, keys over 250 bytes, over-long lines
//! with and without a `get`, bad numbers), cut into writes at random byte boundaries,
//! often half-closed after the last write (the client shuts its write side down).
//!
//! Each stream runs on a fresh pair of servers: `memcached -l 127.0.0.1 -p PORT -U 0`
//! with its defaults (its LRU maintainer included) and an in-process `kvsim serve` with
//! its defaults (`-m 64`). After each write the client reads until the server is quiet
//! for [`QUIET`], so both servers see the same read boundaries. Compared:
//! - every reply byte, all writes together: 0 differences;
//! - how the connection ended (`FIN`, `RST`, still open), where memcached ends the same
//!   stream the same way twice (a close with unread input is a reset; how much input
//!   memcached read before closing can depend on timing) and no write of the client
//!   failed (a server that closes while the client is still writing a large write);
//! - `stats` afterwards, on a new connection, except [`STATS_EXCLUDED`].
//!
//! When memcached's bytes or stats differ from kvsim's, the stream is run on a second
//! fresh memcached: kvsim must give what one of the two runs gave (memcached's background
//! threads can make a run differ from another), and a difference in both is a failure.
//!
//! Streams run [`PAIRS`] at a time. `KVSIM_DIFF_STREAMS` sets their number (default
//! [`STREAMS`], sized for about two minutes in CI), `KVSIM_DIFF_SEED` the first seed.
//! Without memcached installed the test passes vacuously, unless
//! `KVSIM_REQUIRE_MEMCACHED=1` (as in CI), which makes a missing memcached a failure.

#[path = "differential_support/show.rs"]
mod show;
use kvsim::net::{MemcachedProcess, ServeConfig, Server};
use kvsim::store::StoreConfig;
use kvsim::SimRng;
use show::show;
use std::collections::BTreeMap;
use std::io::{ErrorKind, Read, Write};
use std::net::{Shutdown, TcpStream};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::Duration;

/// Streams run in CI (one to two minutes on a loaded 2-core machine).
const STREAMS: usize = 250;

/// Streams run at once, each on its own pair of servers.
const PAIRS: usize = 4;

/// How long a server must stay silent before a write's replies are taken as complete.
/// (Also long enough for memcached's LRU maintainer, on a young server, to reap dead
/// items between writes, as kvsim does after a quiet spell.)
const QUIET: Duration = Duration::from_millis(150);

/// How long a half-closed stream may take to be closed by the server.
const CLOSE_WAIT: Duration = Duration::from_secs(2);

/// `stats` lines that cannot agree, each with the reason. Every other line kvsim prints
/// must equal memcached's.
const STATS_EXCLUDED: &[(&str, &str)] = &[
    ("pid", "the server process's id"),
    ("uptime", "seconds since each server started"),
    ("time", "each server's clock, read at a different instant"),
    (
        "curr_connections",
        "the harness's own connections, and memcached counts its listening sockets",
    ),
    (
        "total_connections",
        "memcached counts its listening sockets and its startup probe",
    ),
    (
        "threads",
        "memcached's worker threads (4); kvsim serves each connection on a thread of its own",
    ),
    (
        "get_expired",
        "memcached's LRU maintainer reaps dead items at times of its own, even in the middle \
         of a write: a lookup may or may not meet them first (compared as DEAD_ITEMS)",
    ),
    ("get_flushed", "as get_expired"),
    ("reclaimed", "as get_expired"),
];

/// A line compared instead of the three racing ones: every dead item is either met by
/// a lookup (`get_expired`, `get_flushed`) or reaped in the background (`reclaimed`),
/// whichever comes first, so their sum is the same on both servers.
const DEAD_ITEMS: &str = "get_expired+get_flushed+reclaimed";

/// How a connection ended, as the client saw it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum End {
    Fin,
    Rst,
    Open,
}

/// What a client saw: every reply byte, whether a write failed, how the connection ended.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Seen {
    replies: Vec<u8>,
    write_failed: bool,
    end: End,
}

/// One stream: its writes and whether the client half-closes after the last.
#[derive(Clone, Debug)]
struct Stream {
    pieces: Vec<Vec<u8>>,
    half_close: bool,
}

/// Reads until the server is quiet for `quiet`, closes or resets.
fn read_until_quiet(stream: &mut TcpStream, quiet: Duration, into: &mut Vec<u8>) -> Option<End> {
    stream.set_read_timeout(Some(quiet)).unwrap();
    let mut buf = vec![0u8; 1 << 16];
    loop {
        match stream.read(&mut buf) {
            Ok(0) => return Some(End::Fin),
            Ok(n) => into.extend_from_slice(&buf[..n]),
            Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {
                return None
            }
            Err(e) if e.kind() == ErrorKind::Interrupted => continue,
            Err(_) => return Some(End::Rst),
        }
    }
}

/// Runs `s` against the server at `addr`.
fn play(addr: &str, s: &Stream) -> Seen {
    let mut stream = TcpStream::connect(addr).expect("connect");
    stream.set_nodelay(true).unwrap();
    let mut seen = Seen {
        replies: Vec::new(),
        write_failed: false,
        end: End::Open,
    };
    for piece in &s.pieces {
        if stream.write_all(piece).is_err() {
            seen.write_failed = true;
            break;
        }
        if let Some(end) = read_until_quiet(&mut stream, QUIET, &mut seen.replies) {
            seen.end = end;
            return seen;
        }
    }
    if s.half_close && !seen.write_failed {
        let _ = stream.shutdown(Shutdown::Write);
        seen.end =
            read_until_quiet(&mut stream, CLOSE_WAIT, &mut seen.replies).unwrap_or(End::Open);
    } else {
        seen.end = read_until_quiet(&mut stream, QUIET, &mut seen.replies).unwrap_or(End::Open);
    }
    seen
}

/// The server's `stats`, on a connection of its own.
fn stats(addr: &str) -> BTreeMap<String, String> {
    let mut stream = TcpStream::connect(addr).expect("connect for stats");
    stream.write_all(b"stats\r\n").unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    let mut out = Vec::new();
    let mut buf = [0u8; 8192];
    while !out.ends_with(b"END\r\n") {
        let n = stream.read(&mut buf).expect("read stats");
        assert!(n > 0, "{addr}: stats: connection closed");
        out.extend_from_slice(&buf[..n]);
    }
    String::from_utf8_lossy(&out)
        .lines()
        .filter_map(|l| l.strip_prefix("STAT "))
        .filter_map(|l| l.split_once(' '))
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

/// `stats` with the [`DEAD_ITEMS`] line added.
fn with_dead_items(mut stats: BTreeMap<String, String>) -> BTreeMap<String, String> {
    let sum: u64 = ["get_expired", "get_flushed", "reclaimed"]
        .iter()
        .map(|k| {
            stats
                .get(*k)
                .and_then(|v| v.parse::<u64>().ok())
                .unwrap_or(0)
        })
        .sum();
    stats.insert(DEAD_ITEMS.to_string(), sum.to_string());
    stats
}

/// kvsim's stats lines, except the excluded ones, each with memcached's value.
fn stats_differences(
    real: &BTreeMap<String, String>,
    ours: &BTreeMap<String, String>,
) -> Vec<String> {
    ours.iter()
        .filter(|(k, _)| !STATS_EXCLUDED.iter().any(|(x, _)| x == k))
        .filter(|(k, v)| real.get(*k) != Some(v))
        .map(|(k, v)| {
            format!(
                "{k}: memcached {}, kvsim {v}",
                real.get(k).map_or("(none)", String::as_str)
            )
        })
        .collect()
}

/// What one server gave for a stream.
struct Outcome {
    seen: Seen,
    stats: BTreeMap<String, String>,
}

fn run_memcached(s: &Stream) -> Outcome {
    let m = MemcachedProcess::spawn(&[]).expect("memcached starts");
    let seen = play(&m.addr(), s);
    // What a quiet spell leaves (memcached's maintainer, kvsim's reaping) shows in stats.
    std::thread::sleep(QUIET);
    let stats = with_dead_items(stats(&m.addr()));
    Outcome { seen, stats }
}

fn run_kvsim(s: &Stream) -> Outcome {
    let server = Server::start(ServeConfig {
        listen: "127.0.0.1:0".parse().unwrap(),
        store: StoreConfig {
            memory_limit: Some(64 << 20),
            ..StoreConfig::default()
        },
        ..ServeConfig::default()
    })
    .expect("kvsim serve");
    let addr = server.local_addr().to_string();
    let seen = play(&addr, s);
    std::thread::sleep(QUIET);
    let stats = with_dead_items(stats(&addr));
    Outcome { seen, stats }
}

/// The stream generator.
struct Gen {
    rng: SimRng,
}

impl Gen {
    fn pick<'a>(&mut self, xs: &[&'a str]) -> &'a str {
        xs[self.rng.index(xs.len())]
    }

    fn key(&mut self) -> String {
        match self.rng.below(100) {
            0..=84 => self.pick(&["a", "b", "c", "n"]).to_string(),
            85..=94 => "K".repeat(250),
            _ => "L".repeat(251),
        }
    }

    fn noreply(&mut self) -> &'static str {
        if self.rng.chance(0.2) {
            " noreply"
        } else {
            ""
        }
    }

    fn value(&mut self) -> Vec<u8> {
        match self.rng.below(20) {
            0..=9 => self
                .pick(&[
                    "0",
                    "7",
                    "10",
                    "99",
                    "x",
                    "hello",
                    "",
                    "18446744073709551615",
                ])
                .as_bytes()
                .to_vec(),
            10..=15 => (0..self.rng.index(12))
                .map(|i| b'a' + (i % 26) as u8)
                .collect(),
            16..=17 => b"get a\r\nset b 0 0 1".to_vec(),
            _ => vec![b'v'; 1 + self.rng.index(20_000)],
        }
    }

    fn exptime(&mut self) -> &'static str {
        self.pick(&["0", "0", "1000", "-1", "abc", "4294967296", "2592001"])
    }

    /// A storage command, its data block framed right or wrong.
    fn store(&mut self, out: &mut Vec<u8>) {
        let verb = self.pick(&["set", "set", "add", "replace", "append", "prepend", "cas"]);
        let key = self.key();
        let data = self.value();
        let flags = self.pick(&["0", "0", "5", "4294967296", "-1"]);
        let exptime = self.exptime();
        let exptime = if exptime == "abc" { "0" } else { exptime };
        let cas = if verb == "cas" {
            format!(" {}", self.pick(&["1", "2", "3", "0", "abc"]))
        } else {
            String::new()
        };
        let noreply = self.noreply();
        let mut len = data.len().to_string();
        let mut tail: &[u8] = b"\r\n";
        let mut body = data.clone();
        match self.rng.below(100) {
            0..=64 => {}
            65..=71 => len = (data.len() + 1 + self.rng.index(4)).to_string(), // longer than sent
            72..=78 if !data.is_empty() => len = (data.len() - 1).to_string(), // block too long
            72..=78 => len = "-1".to_string(),
            79..=83 => tail = b"", // no \r\n after the block
            84..=86 => tail = b"xx",
            87..=89 => {
                len = self
                    .pick(&["-1", "-5", "2147483646", "2147483648", "abc"])
                    .to_string()
            }
            90..=93 => {
                // Too large for an item: the block is swallowed (whatever follows).
                len = self.pick(&["1048577", "2000000"]).to_string();
                body = vec![b'z'; 1_048_577 + self.rng.index(3)];
            }
            94..=96 => len = "4294967297".to_string(), // wraps to 1
            _ => body.extend_from_slice(b"\r\nget a b"),
        }
        out.extend_from_slice(
            format!("{verb} {key} {flags} {exptime} {len}{cas}{noreply}\r\n").as_bytes(),
        );
        out.extend_from_slice(&body);
        out.extend_from_slice(tail);
    }

    fn command(&mut self, out: &mut Vec<u8>) {
        let line = match self.rng.below(100) {
            0..=34 => return self.store(out),
            35..=46 => {
                let verb = self.pick(&["get", "get", "gets"]);
                let n = 1 + self.rng.index(3);
                let keys: Vec<String> = (0..n).map(|_| self.key()).collect();
                format!("{verb} {}", keys.join(" "))
            }
            47..=52 => {
                let verb = self.pick(&["gat", "gats"]);
                let exptime = self.exptime();
                format!("{verb} {exptime} {}", self.key())
            }
            53..=56 => format!("touch {} {}{}", self.key(), self.exptime(), self.noreply()),
            57..=63 => {
                let verb = self.pick(&["incr", "decr"]);
                let delta = self.pick(&["1", "5", "abc", "-1", "18446744073709551615"]);
                format!("{verb} {} {delta}{}", self.key(), self.noreply())
            }
            64..=69 => {
                let extra = self.pick(&["", "", " 0", " 10", " noreply", " 0 noreply"]);
                format!("delete {}{extra}", self.key())
            }
            70..=73 => self
                .pick(&[
                    "flush_all",
                    "flush_all 0",
                    "flush_all -1",
                    "flush_all noreply",
                    "flush_all abc",
                    "flush_all abc noreply",
                ])
                .to_string(),
            74..=78 => self
                .pick(&[
                    "version",
                    "verbosity 1",
                    "verbosity x",
                    "bogus",
                    "",
                    "gets",
                    "set a 0 0",
                ])
                .to_string(),
            79..=81 => {
                // An over-long line: a multi-get of many keys, or anything else.
                let n = 1_000 + self.rng.index(25_000);
                let word = if self.rng.chance(0.6) {
                    "get "
                } else {
                    "sett "
                };
                let mut l = word.to_string();
                while l.len() < n {
                    l.push_str(if self.rng.chance(0.5) {
                        "a "
                    } else {
                        "bbbbbbbbbb"
                    });
                }
                l
            }
            82..=83 if self.rng.chance(0.2) => self.pick(&["quit", "GET / HTTP/1.1"]).to_string(),
            _ => format!("get {}", self.key()),
        };
        out.extend_from_slice(line.as_bytes());
        out.extend_from_slice(if self.rng.chance(0.95) {
            b"\r\n"
        } else {
            b"\n"
        });
    }

    /// A burst of commands, cut into writes.
    fn stream(&mut self) -> Stream {
        let mut bytes = Vec::new();
        for _ in 0..10 + self.rng.index(20) {
            self.command(&mut bytes);
        }
        let half_close = self.rng.chance(0.7);
        if self.rng.chance(0.3) {
            bytes.truncate(1 + self.rng.index(bytes.len()));
        }
        let mut cuts: Vec<usize> = (0..self.rng.index(4))
            .map(|_| 1 + self.rng.index(bytes.len()))
            .collect();
        cuts.sort_unstable();
        cuts.dedup();
        Stream {
            pieces: split(&bytes, &cuts),
            half_close,
        }
    }
}

fn split(bytes: &[u8], cuts: &[usize]) -> Vec<Vec<u8>> {
    let mut pieces = Vec::new();
    let mut last = 0;
    for &cut in cuts.iter().chain([&bytes.len()]) {
        if cut > last {
            pieces.push(bytes[last..cut].to_vec());
            last = cut;
        }
    }
    pieces
}

/// The streams the issue names, before the random ones.
fn fixed_streams() -> Vec<Stream> {
    // A 20,000-byte get line and an 8,192-byte set line, the first write cut after 9,531
    // bytes: memcached keeps reading a long get line into a larger buffer.
    let mut b = b"get ".to_vec();
    while b.len() < 19_998 {
        b.extend_from_slice(if b.len() % 300 < 280 {
            b"k "
        } else {
            b"kkkkkkkkkk"
        });
    }
    b.truncate(19_998);
    b.extend_from_slice(b"\r\nset ");
    b.resize(20_000 + 8_190, b's');
    b.extend_from_slice(b"\r\n");
    vec![
        Stream {
            pieces: split(&b, &[9_531]),
            half_close: true,
        },
        Stream {
            pieces: split(&b, &[9_531]),
            half_close: false,
        },
    ]
}

/// Compares one stream; `Err` describes a difference memcached does not make itself.
fn compare(n: usize, s: &Stream) -> Result<(), String> {
    let ours = run_kvsim(s);
    let first = run_memcached(s);
    // A server that closes with input unread (a reset) has read as much of it as had
    // arrived: how much that is, so `bytes_read`, is a matter of speed (seen under load: 2 KB
    // apart on a 2 MB write). There `bytes_read` is held only to what the client wrote.
    let written: usize = s.pieces.iter().map(Vec::len).sum();
    let agrees = |real: &Outcome| {
        let reset = real.seen.end == End::Rst || ours.seen.end == End::Rst;
        let read_ok = |stats: &BTreeMap<String, String>| {
            stats
                .get("bytes_read")
                .and_then(|v| v.parse::<usize>().ok())
                .is_some_and(|n| n <= written)
        };
        real.seen.replies == ours.seen.replies
            && stats_differences(&real.stats, &ours.stats)
                .iter()
                .all(|d| reset && d.starts_with("bytes_read:") && read_ok(&ours.stats))
    };
    let mut runs = vec![first];
    if !agrees(&runs[0]) || runs[0].seen.end != ours.seen.end {
        runs.push(run_memcached(s));
    }
    let bytes_ok = runs.iter().any(agrees);
    // The close kind is asserted only where memcached closes the same way both times, and
    // not where a server closed while the client was still writing (how much the client
    // had written by then, so whether its write failed, is a matter of speed).
    let unstable_end = runs.len() == 2 && runs[0].seen.end != runs[1].seen.end;
    let write_failed = ours.seen.write_failed || runs.iter().any(|r| r.seen.write_failed);
    let end_ok = unstable_end || write_failed || runs[0].seen.end == ours.seen.end;
    if bytes_ok && end_ok {
        return Ok(());
    }
    let real = &runs[runs.len() - 1];
    Err(format!(
        "stream {n} ({} writes{}):\n  writes:    {:?}\n  memcached: {} {:?}{}\n  kvsim:     {} {:?}{}\n  stats:     {:?}",
        s.pieces.len(),
        if s.half_close { ", half-closed" } else { "" },
        s.pieces.iter().map(|p| show(p)).collect::<Vec<_>>(),
        show(&real.seen.replies),
        real.seen.end,
        if real.seen.write_failed { " (write failed)" } else { "" },
        show(&ours.seen.replies),
        ours.seen.end,
        if ours.seen.write_failed { " (write failed)" } else { "" },
        stats_differences(&real.stats, &ours.stats),
    ))
}

#[test]
fn random_misframed_half_closed_streams_match_memcached() {
    // Installed (or required: KVSIM_REQUIRE_MEMCACHED=1)? Each stream starts its own.
    if MemcachedProcess::for_test("memcached_streams", &[]).is_none() {
        return;
    }
    let count: usize = std::env::var("KVSIM_DIFF_STREAMS").map_or(STREAMS, |s| {
        s.parse().expect("KVSIM_DIFF_STREAMS: a number of streams")
    });
    let seed: u64 = std::env::var("KVSIM_DIFF_SEED").map_or(32, |s| s.parse().expect("a seed"));
    let mut streams = fixed_streams();
    let mut g = Gen {
        rng: SimRng::new(seed),
    };
    while streams.len() < count {
        streams.push(g.stream());
    }
    streams.truncate(count);
    let next = AtomicUsize::new(0);
    let failures = Mutex::new(Vec::new());
    std::thread::scope(|scope| {
        for _ in 0..PAIRS {
            scope.spawn(|| loop {
                let n = next.fetch_add(1, Ordering::SeqCst);
                let Some(s) = streams.get(n) else { break };
                if let Err(e) = compare(n, s) {
                    failures.lock().unwrap().push((n, e));
                }
            });
        }
    });
    let mut failures = failures.into_inner().unwrap();
    if let Ok(path) = std::env::var("KVSIM_DIFF_LOG") {
        let text: Vec<String> = failures
            .iter()
            .map(|(n, _)| format!("{n} {:?}", streams[*n]))
            .collect();
        let _ = std::fs::write(path, text.join("\n"));
    }
    failures.sort();
    assert!(
        failures.is_empty(),
        "{} of {} streams differ (seed {seed}):\n{}",
        failures.len(),
        streams.len(),
        failures
            .iter()
            .map(|(_, e)| e.as_str())
            .collect::<Vec<_>>()
            .join("\n")
    );
}

/// The counters `stats` must agree on after each of [`stats_cases`].
const COUNTED: &[&str] = &[
    "cmd_get",
    "get_hits",
    "get_misses",
    "get_expired",
    "get_flushed",
    "cmd_touch",
    "touch_hits",
    "touch_misses",
    "cmd_set",
    "cmd_flush",
    "total_items",
    "curr_items",
    "store_too_large",
    "delete_misses",
    "delete_hits",
];

/// Pipelines sent in one write, `stats` at their end (so no background reaping comes
/// between their commands), each naming what it pins (issue #32.5).
fn stats_cases() -> Vec<(&'static str, Vec<u8>)> {
    let too_large = [&b"set big 0 0 2000000\r\n"[..], &vec![b'z'; 2_000_002]].concat();
    vec![
        (
            "a missed gat is a touch, not a get",
            b"gat 10 nokey\r\n".to_vec(),
        ),
        (
            "a gat hit is a touch hit",
            b"set kk 0 0 1\r\nx\r\ngat 10 kk\r\ngats 10 kk nokey\r\n".to_vec(),
        ),
        (
            "flush_all with a bad delay counts",
            b"flush_all abc\r\nflush_all x noreply\r\n".to_vec(),
        ),
        (
            "a bad data chunk counts as a set",
            b"set k 0 0 1\r\nxyz\r\nset k 0 0 1 noreply\r\nabc\r\n".to_vec(),
        ),
        (
            "an item stored expired is met by a get",
            b"set e 0 -1 1\r\nx\r\nget e e\r\n".to_vec(),
        ),
        (
            "and by a set",
            b"set e 0 -1 1\r\nx\r\nset e 0 0 1\r\ny\r\nappend q 0 0 1\r\nx\r\n".to_vec(),
        ),
        (
            "and by a delete",
            b"set e 0 -1 1\r\nx\r\ndelete e\r\n".to_vec(),
        ),
        (
            "a flushed item is met by a get",
            b"set f 0 0 1\r\nx\r\nflush_all\r\nget f\r\n".to_vec(),
        ),
        ("a too-large value", too_large),
        (
            "an incr that outgrows its item links a new one",
            b"set n 0 0 2\r\n99\r\nincr n 1\r\n".to_vec(),
        ),
        (
            "a multi-get cut short by a long key counts the keys before it",
            [&b"get a "[..], &[b'L'; 251], b"\r\n"].concat(),
        ),
    ]
}

#[test]
fn stats_count_error_paths_as_memcached_does() {
    if MemcachedProcess::for_test("memcached_streams", &[]).is_none() {
        return;
    }
    let mut differences = Vec::new();
    for (name, bytes) in stats_cases() {
        let mut with_stats = bytes.clone();
        with_stats.extend_from_slice(b"stats\r\n");
        let s = Stream {
            pieces: vec![with_stats],
            half_close: false,
        };
        let counters = |seen: &Seen| -> BTreeMap<String, String> {
            String::from_utf8_lossy(&seen.replies)
                .lines()
                .filter_map(|l| l.strip_prefix("STAT "))
                .filter_map(|l| l.split_once(' '))
                .filter(|(k, _)| COUNTED.contains(k))
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect()
        };
        let ours = counters(&run_kvsim(&s).seen);
        // memcached's LRU maintainer thread may reclaim an expired item between two
        // commands of one write (a `set` then meets no item: no `get_expired`), so its
        // count differs from run to run: kvsim's must be one memcached gives in one of
        // up to five runs (as the one-write flush case below).
        let mut real = counters(&run_memcached(&s).seen);
        for _ in 1..5 {
            if real == ours {
                break;
            }
            real = counters(&run_memcached(&s).seen);
        }
        assert_eq!(
            real.len(),
            COUNTED.len(),
            "{name}: memcached's stats: {real:?}"
        );
        if real != ours {
            differences.push(format!(
                "{name}:\n  memcached: {real:?}\n  kvsim:     {ours:?}"
            ));
        }
    }
    assert!(differences.is_empty(), "{}", differences.join("\n"));
}

/// `set k1`, `flush_all`, `flush_all 100 noreply`, `get k1`, each on its own connection
/// with a pause between (issue #32.3): memcached's LRU maintainer has reaped k1 by the
/// time the delayed flush moves `oldest_live` into the future, so it stays gone; so does
/// kvsim's. Sent in one write, the item usually comes back on both (nothing reaped it yet).
#[test]
fn a_flushed_item_stays_gone_after_a_delayed_flush() {
    if MemcachedProcess::for_test("memcached_streams", &[]).is_none() {
        return;
    }
    let steps: [&[u8]; 4] = [
        b"set k1 0 0 2\r\nv1\r\n",
        b"flush_all\r\n",
        b"flush_all 100 noreply\r\n",
        b"get k1\r\n",
    ];
    let together = Stream {
        pieces: vec![[&steps.concat()[..], b"get k1\r\n"].concat()],
        half_close: false,
    };
    let apart = |addr: &str| -> Vec<Vec<u8>> {
        steps
            .iter()
            .map(|step| {
                let seen = play(
                    addr,
                    &Stream {
                        pieces: vec![step.to_vec()],
                        half_close: true,
                    },
                );
                std::thread::sleep(Duration::from_millis(300));
                seen.replies
            })
            .collect()
    };
    let m = MemcachedProcess::spawn(&[]).expect("memcached starts");
    let real = apart(&m.addr());
    let server = Server::start(ServeConfig {
        listen: "127.0.0.1:0".parse().unwrap(),
        ..ServeConfig::default()
    })
    .expect("kvsim serve");
    let ours = apart(&server.local_addr().to_string());
    assert_eq!(real[3], b"END\r\n", "memcached: {real:?}");
    assert_eq!(ours, real);
    // In one write, whether memcached's maintainer thread reaps k1 before the delayed
    // flush is a race of its own (seen both ways on a loaded machine): kvsim must answer
    // as one of a few memcached runs does.
    let ours = run_kvsim(&together).seen.replies;
    let mut real = Vec::new();
    for _ in 0..5 {
        real.push(show(&run_memcached(&together).seen.replies));
        if real.last() == Some(&show(&ours)) {
            return;
        }
    }
    panic!("kvsim: {}\nmemcached: {real:#?}", show(&ours));
}
