//! Differential test of eviction against a real memcached 1.6.18 (issue #36.3): the same
//! seeded single-client stream (sets of 10 B to 3 KB values over N keys, gets and deletes
//! in between, no TTL) goes to `memcached -m M` and to an in-process `kvsim serve` with
//! the same memory flags; then every key is read back.
//!
//! - With `-o no_lru_maintainer,slab_automove=0` (no background thread moves anything)
//!   the surviving keys and every per-class `stats items` count (all but the ages, which
//!   depend on each server's clock) must be equal.
//! - With memcached's defaults (its LRU maintainer thread, `slab_automove=1`) two
//!   memcached processes fed the same stream differ a little (the thread's timing). Three
//!   memcached runs are compared pairwise; kvsim's mean agreement with them (both /
//!   either) must be at least 99% and at least memcached's least agreement with itself,
//!   less [`NOISE`] (the thread's timing alone moves a few keys of 10,000).
//!
//! The streams are pipelined in batches of [`BATCH`] commands. The agreement table is
//! printed (`cargo test --profile quick-release --test memcached_eviction -- --nocapture`). Without
//! memcached installed the test passes vacuously, unless `KVSIM_REQUIRE_MEMCACHED=1`.

use kvsim::net::{MemcachedProcess, ServeConfig, Server};
use kvsim::store::geometry::Geometry;
use kvsim::store::StoreConfig;
use kvsim::SimRng;
use std::collections::{BTreeMap, BTreeSet};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;

/// Memory (MB, memcached's `-m`) and number of keys, as in issue #36's table.
const CASES: [(usize, usize); 3] = [(4, 8_000), (8, 16_000), (16, 30_000)];

/// Commands written before their replies are read.
const BATCH: usize = 64;

/// Commands per key in a stream.
const OPS_PER_KEY: usize = 2;

/// memcached processes fed each stream with their defaults: how well memcached agrees
/// with itself is the least agreement between two of them.
const MEMCACHED_RUNS: usize = 3;

/// How far below memcached's least agreement with itself kvsim's mean may fall: the
/// run-to-run noise of memcached's maintainer thread (measured 0.9993 to 1.0 between two
/// memcached runs, and 1.0 on an idle machine; kvsim 0.9995 to 1.0 against them, 1 to 4
/// keys of 9,215 at 16 MB). Both servers' whole-second clocks tick from their own start
/// (memcached's `clock_handler` is a 1 s timer armed at startup), so a stream shorter than
/// a second sees one `current_time` on both; a tick in the middle of one server's stream
/// (kvsim's clock once ticked at the host's whole seconds) moves every HOT item older than
/// it to COLD at once and cost 7 keys at 16 MB.
const NOISE: f64 = 0.001;

/// The stream's seed.
const SEED: u64 = 36;

/// One command of a stream.
#[derive(Clone, Copy, Debug)]
enum Op {
    Set(usize, usize),
    Get(usize),
    Delete(usize),
}

fn key(i: usize) -> String {
    format!("key:{i:06}")
}

/// `keys × OPS_PER_KEY` commands: 70% sets (values of 10 to 3000 bytes), 23% gets, 7% deletes.
fn stream(seed: u64, keys: usize) -> Vec<Op> {
    let mut rng = SimRng::new(seed);
    (0..keys * OPS_PER_KEY)
        .map(|_| {
            let k = rng.index(keys);
            match rng.below(100) {
                0..70 => Op::Set(k, rng.range_inclusive(10, 3000) as usize),
                70..93 => Op::Get(k),
                _ => Op::Delete(k),
            }
        })
        .collect()
}

struct Conn {
    out: TcpStream,
    inp: BufReader<TcpStream>,
}

impl Conn {
    fn open(addr: &str) -> Conn {
        let out = TcpStream::connect(addr).expect("connect");
        out.set_nodelay(true).expect("nodelay");
        let inp = BufReader::new(out.try_clone().expect("clone"));
        Conn { out, inp }
    }

    fn line(&mut self) -> String {
        let mut line = String::new();
        self.inp.read_line(&mut line).expect("read");
        assert!(line.ends_with("\r\n"), "server closed: {line:?}");
        line.truncate(line.len() - 2);
        line
    }

    /// Reads one reply; the keys of the values it carries.
    fn reply(&mut self) -> Vec<String> {
        let mut keys = Vec::new();
        loop {
            let line = self.line();
            if let Some(rest) = line.strip_prefix("VALUE ") {
                let parts: Vec<&str> = rest.split(' ').collect();
                let len: usize = parts[2].parse().expect("value length");
                let mut data = vec![0; len + 2];
                self.inp.read_exact(&mut data).expect("value");
                keys.push(parts[0].to_string());
                continue;
            }
            assert!(
                matches!(
                    line.as_str(),
                    "STORED" | "END" | "DELETED" | "NOT_FOUND" | "NOT_STORED"
                ),
                "unexpected reply {line:?}"
            );
            return keys;
        }
    }

    /// `stats <group>` as name → value.
    fn stats(&mut self, group: &str) -> BTreeMap<String, String> {
        write!(self.out, "stats {group}\r\n").expect("write");
        let mut out = BTreeMap::new();
        loop {
            let line = self.line();
            if line == "END" {
                return out;
            }
            let mut parts = line.splitn(3, ' ');
            let (_, name, value) = (parts.next(), parts.next(), parts.next());
            out.insert(
                name.expect("name").to_string(),
                value.unwrap_or("").to_string(),
            );
        }
    }
}

/// What one server kept: the surviving keys, `stats items`, `stats` `evictions`.
struct Outcome {
    kept: BTreeSet<String>,
    items: BTreeMap<String, String>,
    evictions: u64,
}

fn play(addr: &str, ops: &[Op], keys: usize) -> Outcome {
    let mut conn = Conn::open(addr);
    let value = vec![b'v'; 3000];
    for batch in ops.chunks(BATCH) {
        let mut bytes = Vec::new();
        for op in batch {
            match *op {
                Op::Set(k, len) => {
                    bytes.extend_from_slice(format!("set {} 0 0 {len}\r\n", key(k)).as_bytes());
                    bytes.extend_from_slice(&value[..len]);
                    bytes.extend_from_slice(b"\r\n");
                }
                Op::Get(k) => bytes.extend_from_slice(format!("get {}\r\n", key(k)).as_bytes()),
                Op::Delete(k) => {
                    bytes.extend_from_slice(format!("delete {}\r\n", key(k)).as_bytes())
                }
            }
        }
        conn.out.write_all(&bytes).expect("write");
        for _ in batch {
            conn.reply();
        }
    }
    let items = conn.stats("items");
    let evictions = conn.stats("")["evictions"].parse().expect("evictions");
    let mut kept = BTreeSet::new();
    let all: Vec<usize> = (0..keys).collect();
    for chunk in all.chunks(100) {
        let names: Vec<String> = chunk.iter().map(|&k| key(k)).collect();
        write!(conn.out, "get {}\r\n", names.join(" ")).expect("write");
        kept.extend(conn.reply());
    }
    Outcome {
        kept,
        items,
        evictions,
    }
}

fn memcached(test: &str, mb: usize, deterministic: bool) -> Option<MemcachedProcess> {
    let mb = mb.to_string();
    let mut args = vec!["-m", mb.as_str()];
    if deterministic {
        args.extend(["-o", "no_lru_maintainer,slab_automove=0"]);
    }
    MemcachedProcess::for_test(test, &args)
}

fn kvsim(mb: usize, deterministic: bool) -> Server {
    let geometry = if deterministic {
        Geometry {
            lru_maintainer: false,
            slab_automove: 0,
            ..Geometry::default()
        }
    } else {
        Geometry::default()
    };
    Server::start(ServeConfig {
        listen: "127.0.0.1:0".parse().expect("address"),
        store: StoreConfig {
            memory_limit: Some(mb << 20),
            geometry,
            ..StoreConfig::default()
        },
        ..ServeConfig::default()
    })
    .expect("kvsim serve")
}

fn agreement(a: &BTreeSet<String>, b: &BTreeSet<String>) -> (usize, f64) {
    let both = a.intersection(b).count();
    let either = a.union(b).count();
    (both, both as f64 / either.max(1) as f64)
}

/// `stats items` lines that depend on each server's clock.
fn comparable(items: &BTreeMap<String, String>) -> BTreeMap<String, String> {
    items
        .iter()
        .filter(|(name, _)| !name.ends_with(":age") && !name.ends_with(":evicted_time"))
        .map(|(n, v)| (n.clone(), v.clone()))
        .collect()
}

fn row(label: &str, mb: usize, keys: usize, mc: &Outcome, kv: &Outcome) -> f64 {
    let (both, agree) = agreement(&mc.kept, &kv.kept);
    println!(
        "| {label} | {mb} MB, {keys} keys | {} ({} evictions) | {} ({} evictions) | {both} | {agree:.4} |",
        mc.kept.len(),
        mc.evictions,
        kv.kept.len(),
        kv.evictions
    );
    agree
}

#[test]
fn eviction_agrees_with_memcached() {
    let test = "eviction_agrees_with_memcached";
    println!(
        "| mode | memory | memcached keeps | other keeps | both | agreement (both / either) |"
    );
    println!("|---|---|---|---|---|---|");
    for (mb, keys) in CASES {
        let ops = stream(SEED + mb as u64, keys);
        // Deterministic mode: exact.
        let Some(mc) = memcached(test, mb, true) else {
            return;
        };
        let mc_out = play(&mc.addr(), &ops, keys);
        drop(mc);
        let kv = kvsim(mb, true);
        let kv_out = play(&kv.local_addr().to_string(), &ops, keys);
        kv.stop();
        let agree = row("no_lru_maintainer: kvsim", mb, keys, &mc_out, &kv_out);
        assert!(mc_out.evictions > 0, "{mb} MB: the stream must evict");
        assert_eq!(
            comparable(&kv_out.items),
            comparable(&mc_out.items),
            "{mb} MB: stats items"
        );
        assert_eq!(agree, 1.0, "{mb} MB: surviving keys");
        // Defaults: at least 99%, and at least as close as memcached to itself.
        let runs: Vec<Outcome> = (0..MEMCACHED_RUNS)
            .map(|_| {
                let mc = memcached(test, mb, false).expect("memcached");
                play(&mc.addr(), &ops, keys)
            })
            .collect();
        let kv = kvsim(mb, false);
        let kv_out = play(&kv.local_addr().to_string(), &ops, keys);
        kv.stop();
        let mut itself = f64::MAX;
        for i in 0..runs.len() {
            for j in i + 1..runs.len() {
                let label = format!("defaults: memcached {} vs {}", i + 1, j + 1);
                itself = itself.min(row(&label, mb, keys, &runs[i], &runs[j]));
            }
        }
        let mut ours = 0.0;
        for (i, run) in runs.iter().enumerate() {
            let label = format!("defaults: memcached {} vs kvsim", i + 1);
            ours += row(&label, mb, keys, run, &kv_out) / runs.len() as f64;
        }
        println!("| defaults: kvsim's mean, memcached's least | {mb} MB, {keys} keys | | | | {ours:.4} / {itself:.4} |");
        assert!(ours >= 0.99, "{mb} MB: agreement {ours:.4} < 0.99");
        assert!(
            ours >= itself - NOISE,
            "{mb} MB: kvsim agrees {ours:.4} on average, memcached with itself {itself:.4} at least"
        );
    }
}
