//! `kvsim serve` against real memcached under the same client load.
//!
//! A small load generator: 4 client threads (`KVSIM_BENCH_SERVE_THREADS`), each with its own connection,
//! send a mix of 90% `get` and 10% `set` (1000 keys, 32-byte values) for a fixed time,
//! either one request at a time (`depth 1`: round-trip bound, like most applications) or
//! pipelined 16 deep (server-bound). The same load runs against a memcached 1.6.18
//! started here (`-t 4`, if installed) and against `kvsim serve`, both on loopback. Each
//! figure is the median of 3 one-second rounds, interleaved between the two servers (the
//! machine may be busy with other work).

use kvsim::command::{Command, Reply, StoreVerb};
use kvsim::net::{MemcachedProcess, ServeConfig, Server};
use kvsim::wire::{encode_command, ReplyParser};
use kvsim::SimRng;
use serde_json::{json, Map, Value};
use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

/// Client threads (override with `KVSIM_BENCH_SERVE_THREADS`).
fn threads() -> usize {
    std::env::var("KVSIM_BENCH_SERVE_THREADS")
        .ok()
        .and_then(|t| t.parse().ok())
        .unwrap_or(4)
}
const KEYS: u64 = 1000;
const SECONDS: f64 = 1.0;
/// Rounds per figure, interleaved between the servers; the median is reported.
const ROUNDS: usize = 3;

fn command(rng: &mut SimRng) -> Command {
    let key = format!("key:{}", rng.below(KEYS)).into_bytes();
    if rng.chance(0.1) {
        Command::Store {
            verb: StoreVerb::Set,
            key,
            flags: 0,
            exptime: 0,
            data: vec![b'v'; 32],
            noreply: false,
        }
    } else {
        Command::Get {
            with_cas: false,
            keys: vec![key],
        }
    }
}

/// One client thread: requests in batches of `depth`, until the deadline; returns the
/// number of replies received.
fn client(addr: &str, seed: u64, depth: usize, deadline: Instant) -> Result<u64, String> {
    let mut stream = TcpStream::connect(addr).map_err(|e| format!("connect {addr}: {e}"))?;
    stream.set_nodelay(true).map_err(|e| e.to_string())?;
    stream
        .set_read_timeout(Some(Duration::from_secs(5)))
        .map_err(|e| e.to_string())?;
    let mut rng = SimRng::new(seed);
    let mut parser = ReplyParser::new();
    let mut buf = vec![0u8; 64 * 1024];
    let mut out = Vec::new();
    let mut done = 0u64;
    while Instant::now() < deadline {
        out.clear();
        for _ in 0..depth {
            encode_command(&command(&mut rng), &mut out);
        }
        stream.write_all(&out).map_err(|e| format!("send: {e}"))?;
        let mut got = 0;
        while got < depth {
            match parser.next_reply().map_err(|e| e.to_string())? {
                Some(Reply::Values(_)) | Some(Reply::Stored) => got += 1,
                Some(other) => return Err(format!("unexpected reply {other}")),
                None => {
                    let n = stream.read(&mut buf).map_err(|e| format!("receive: {e}"))?;
                    if n == 0 {
                        return Err("connection closed".into());
                    }
                    parser.feed(&buf[..n]);
                }
            }
        }
        done += depth as u64;
    }
    Ok(done)
}

/// Operations per second of `THREADS` clients against `addr`.
fn load(addr: &str, depth: usize) -> Result<f64, String> {
    // Fill the keys first, so gets hit.
    let mut fill = TcpStream::connect(addr).map_err(|e| format!("connect {addr}: {e}"))?;
    let mut bytes = Vec::new();
    for k in 0..KEYS {
        encode_command(
            &Command::Store {
                verb: StoreVerb::Set,
                key: format!("key:{k}").into_bytes(),
                flags: 0,
                exptime: 0,
                data: vec![b'v'; 32],
                noreply: true,
            },
            &mut bytes,
        );
    }
    bytes.extend_from_slice(b"version\r\n");
    fill.write_all(&bytes).map_err(|e| e.to_string())?;
    let mut reply = [0u8; 64];
    let _ = fill.read(&mut reply).map_err(|e| e.to_string())?;
    let start = Instant::now();
    let deadline = start + Duration::from_secs_f64(SECONDS);
    let handles: Vec<_> = (0..threads())
        .map(|t| {
            let addr = addr.to_string();
            std::thread::spawn(move || client(&addr, t as u64, depth, deadline))
        })
        .collect();
    let mut total = 0;
    for h in handles {
        total += h
            .join()
            .map_err(|_| "a client thread panicked".to_string())??;
    }
    Ok(total as f64 / start.elapsed().as_secs_f64())
}

/// The median of `xs` (not empty).
fn median(xs: &mut [f64]) -> f64 {
    xs.sort_by(f64::total_cmp);
    xs[xs.len() / 2]
}

/// Runs the suite.
pub fn run() -> Result<Map<String, Value>, String> {
    let mut m = Map::new();
    m.insert(
        "workload".into(),
        json!(format!(
            "{} client threads, 90% get / 10% set, {KEYS} keys, 32-byte values, median of {ROUNDS} interleaved {SECONDS} s rounds, loopback",
            threads()
        )),
    );
    let server = Server::start(ServeConfig {
        listen: "127.0.0.1:0".parse().expect("an address"),
        ..ServeConfig::default()
    })
    .map_err(|e| format!("kvsim serve: {e}"))?;
    let kvsim_addr = server.local_addr().to_string();
    let memcached = MemcachedProcess::spawn(&["-t", "4"]).ok();
    for depth in [1usize, 16] {
        // Interleaved rounds: kvsim, memcached, kvsim, … (the machine's speed drifts).
        let (mut kv, mut real) = (Vec::new(), Vec::new());
        for _ in 0..ROUNDS {
            kv.push(load(&kvsim_addr, depth)?);
            if let Some(mc) = &memcached {
                real.push(load(&mc.addr(), depth)?);
            }
        }
        let kv = median(&mut kv);
        m.insert(
            format!("kvsim_serve_depth{depth}_ops_per_s"),
            json!(kv.round()),
        );
        if memcached.is_some() {
            let real = median(&mut real);
            m.insert(
                format!("memcached_depth{depth}_ops_per_s"),
                json!(real.round()),
            );
            m.insert(
                format!("kvsim_over_memcached_depth{depth}_ratio"),
                json!((kv / real * 100.0).round() / 100.0),
            );
        }
    }
    if memcached.is_none() {
        m.insert(
            "note".into(),
            json!("memcached is not installed: only kvsim serve was measured"),
        );
    }
    Ok(m)
}
