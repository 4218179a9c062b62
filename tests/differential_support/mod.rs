//! The harness of the differential tests against a real memcached 1.6.18: requests with
//! cas uniques by symbol, sent to memcached and to `kvsim serve` and ended by a sentinel,
//! replies read with each server's uniques renamed in order of first appearance and
//! compared exchange by exchange. How replies are renamed and compared is the test's
//! own ([`Replies`]); so is its request grammar (its own `impl Gen`).

use kvsim::net::{MemcachedProcess, ServeConfig, Server};
use kvsim::SimRng;
use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::marker::PhantomData;
use std::net::TcpStream;
use std::time::Duration;

/// Sent after every request: its reply marks the end of the request's replies.
const SENTINEL: &[u8] = b"version\r\n";
const SENTINEL_REPLY: &[u8] = b"VERSION 1.6.18\r\n";

/// A piece of a request: bytes, or the cas unique a server gave under a symbol.
#[derive(Clone, Debug)]
pub enum Part {
    Bytes(Vec<u8>),
    Unique(usize),
}

/// Cas uniques of one server, renamed in order of first appearance.
#[derive(Default)]
pub struct Uniques {
    symbol_of: BTreeMap<u64, usize>,
    actual: Vec<u64>,
}

impl Uniques {
    pub fn symbol(&mut self, unique: u64) -> usize {
        if let Some(&s) = self.symbol_of.get(&unique) {
            return s;
        }
        self.actual.push(unique);
        self.symbol_of.insert(unique, self.actual.len() - 1);
        self.actual.len() - 1
    }
}

/// Rewrites a server's replies line by line: a `VALUE <key> <flags> <bytes> [<cas>]` line
/// with its unique as `#<symbol>`, any other line as `other` writes it to the result
/// (returning the length of the data block that follows the line, if one does); data
/// blocks are copied as they are.
pub fn rename_lines(
    out: &[u8],
    uniques: &mut Uniques,
    mut other: impl FnMut(&[u8], &mut Uniques, &mut Vec<u8>) -> Option<usize>,
) -> Vec<u8> {
    let mut res = Vec::new();
    let mut i = 0;
    while i < out.len() {
        let Some(nl) = out[i..].windows(2).position(|w| w == b"\r\n") else {
            res.extend_from_slice(&out[i..]);
            break;
        };
        let line = &out[i..i + nl];
        i += nl + 2;
        let fields: Vec<&[u8]> = line.split(|&b| b == b' ').collect();
        let block = if fields[0] == b"VALUE" && (fields.len() == 4 || fields.len() == 5) {
            res.extend_from_slice(&fields[..4].join(&b' '));
            if fields.len() == 5 {
                let unique = parse(fields[4]).expect("a cas unique");
                res.extend_from_slice(format!(" #{}", uniques.symbol(unique)).as_bytes());
            }
            parse(fields[3])
        } else {
            other(line, uniques, &mut res)
        };
        res.extend_from_slice(b"\r\n");
        if let Some(len) = block {
            let end = (i + len + 2).min(out.len());
            res.extend_from_slice(&out[i..end]);
            i = end;
        }
    }
    res
}

/// A decimal number.
fn parse<T: std::str::FromStr>(s: &[u8]) -> Option<T> {
    std::str::from_utf8(s).ok()?.parse().ok()
}

/// A server's replies to one exchange, as a test reads, compares and shows them.
pub trait Replies {
    /// The most bytes of one request part the history keeps.
    const SHOWN_PART: usize = usize::MAX;
    /// The most characters of a request, and of its replies, the history keeps.
    const SHOWN_LINE: usize = usize::MAX;

    /// The replies `out` (the sentinel's taken off) with the server's uniques renamed.
    fn read(out: &[u8], uniques: &mut Uniques) -> Self;
    /// Whether the two servers' replies count as the same.
    fn agrees(&self, other: &Self) -> bool;
    /// The renamed reply bytes.
    fn bytes(&self) -> &[u8];
    /// The replies as a failure shows them.
    fn show(&self) -> String {
        kvsim::command::show_bytes(self.bytes())
    }
}

struct Peer {
    name: &'static str,
    stream: TcpStream,
    uniques: Uniques,
}

impl Peer {
    fn connect(name: &'static str, addr: &str) -> Peer {
        let stream = TcpStream::connect(addr).expect("connect");
        stream
            .set_read_timeout(Some(Duration::from_secs(10)))
            .unwrap();
        stream.set_nodelay(true).unwrap();
        Peer {
            name,
            stream,
            uniques: Uniques::default(),
        }
    }

    /// Sends the request (with this server's uniques) and the sentinel; returns the
    /// replies, renamed.
    fn exchange<R: Replies>(&mut self, parts: &[Part]) -> R {
        let mut bytes = Vec::new();
        for part in parts {
            match part {
                Part::Bytes(b) => bytes.extend_from_slice(b),
                Part::Unique(s) => {
                    bytes.extend_from_slice(self.uniques.actual[*s].to_string().as_bytes())
                }
            }
        }
        bytes.extend_from_slice(SENTINEL);
        self.stream.write_all(&bytes).expect("send");
        let mut out = Vec::new();
        let mut buf = [0u8; 65536];
        while !out.ends_with(SENTINEL_REPLY) {
            let n = self
                .stream
                .read(&mut buf)
                .unwrap_or_else(|e| panic!("{}: read: {e}", self.name));
            assert!(n > 0, "{}: connection closed", self.name);
            out.extend_from_slice(&buf[..n]);
        }
        out.truncate(out.len() - SENTINEL_REPLY.len());
        R::read(&out, &mut self.uniques)
    }
}

/// A real memcached and `kvsim serve`, each with a connection, compared exchange by
/// exchange, their replies read as `R`.
pub struct Pair<R> {
    real: Peer,
    sim: Peer,
    history: Vec<String>,
    _memcached: MemcachedProcess,
    _server: Server,
    _replies: PhantomData<fn() -> R>,
}

impl<R> Drop for Pair<R> {
    /// `KVSIM_DIFF_LOG=<path>` keeps every exchange and memcached's replies.
    fn drop(&mut self) {
        if let Ok(path) = std::env::var("KVSIM_DIFF_LOG") {
            let _ = std::fs::write(&path, self.history.join("\n"));
        }
    }
}

impl<R: Replies> Pair<R> {
    /// Starts both servers for the test `test`; `None` when there is no memcached to run
    /// (and the test is not required to have one).
    pub fn start(test: &str) -> Option<Pair<R>> {
        // memcached's background LRU threads take item references at times of their own,
        // and an incr rewrites in place (space-padded) only when nobody else holds the
        // item: with them running, the padding of an incr result is a race. Without its
        // maintainer, memcached also bumps items as kvsim does (no segmented LRU).
        let memcached =
            MemcachedProcess::for_test(test, &["-o", "no_lru_crawler,no_lru_maintainer"])?;
        let server = Server::start(ServeConfig {
            listen: "127.0.0.1:0".parse().unwrap(),
            ..ServeConfig::default()
        })
        .expect("kvsim serve");
        Some(Pair {
            real: Peer::connect("memcached", &memcached.addr()),
            sim: Peer::connect("kvsim serve", &server.local_addr().to_string()),
            history: Vec::new(),
            _memcached: memcached,
            _server: server,
            _replies: PhantomData,
        })
    }

    /// Sends `parts` to both servers and panics, naming the exchange `what` and the
    /// recent history, if their replies disagree.
    pub fn exchange(&mut self, what: &str, parts: &[Part]) {
        let mut shown: String = parts
            .iter()
            .map(|p| match p {
                Part::Bytes(b) => kvsim::command::show_bytes(&b[..b.len().min(R::SHOWN_PART)]),
                Part::Unique(s) => format!("<#{s}>"),
            })
            .collect();
        shown.truncate(R::SHOWN_LINE);
        let a: R = self.real.exchange(parts);
        let b: R = self.sim.exchange(parts);
        let mut replied = kvsim::command::show_bytes(a.bytes());
        replied.truncate(R::SHOWN_LINE);
        self.history.push(format!("{shown} -> {replied}"));
        if !a.agrees(&b) {
            let start = self.history.len().saturating_sub(12);
            panic!(
                "{what} differs:\n  recent requests (memcached's replies):\n    {}\n  memcached:   {}\n  kvsim serve: {}",
                self.history[start..].join("\n    "),
                a.show(),
                b.show(),
            );
        }
    }

    /// The symbols both servers' uniques have so far (the same count, if they agreed).
    pub fn symbols(&self) -> usize {
        self.real.uniques.actual.len()
    }
}

/// Draws requests. Each test writes its grammar in its own `impl Gen`.
pub struct Gen {
    pub rng: SimRng,
    /// The symbols of the uniques seen so far ([`Pair::symbols`] after each exchange).
    pub symbols: usize,
}

impl Gen {
    /// A generator seeded with `seed`, before any unique is seen.
    pub fn new(seed: u64) -> Gen {
        Gen {
            rng: SimRng::new(seed),
            symbols: 0,
        }
    }

    pub fn pick<'a>(&mut self, xs: &[&'a str]) -> &'a str {
        xs[self.rng.index(xs.len())]
    }

    pub fn chance(&mut self, p: f64) -> bool {
        self.rng.chance(p)
    }

    /// Mostly the symbol of one of the last four uniques seen, if any; else `None`.
    pub fn recent_unique(&mut self) -> Option<usize> {
        if self.symbols > 0 && self.chance(0.8) {
            let back = self.rng.below(self.symbols.min(4) as u64) as usize;
            Some(self.symbols - 1 - back)
        } else {
            None
        }
    }
}

/// The seed of the first stream: `KVSIM_DIFF_SEED`, else `default`.
pub fn seed(default: u64) -> u64 {
    std::env::var("KVSIM_DIFF_SEED").map_or(default, |s| s.parse().expect("a seed"))
}
