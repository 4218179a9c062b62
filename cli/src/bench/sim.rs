//! The simulator's suite: simulated KV operations and runs per second on one core.

use kvsim::sim::{self, SimConfig};
use kvsim::History;
use kvsim::Model;
use kvsim::Scenario;
use kvsim::SimRng;
use kvsim::Verdict;
use kvsim::{Kv, KvError};
use serde_json::{json, Map, Value};
use std::collections::BTreeMap;
use std::time::{Duration, Instant};

/// A 3-client workload: each operation is an `incr` followed by a `get` of a counter.
struct IncrGet;

impl Model for IncrGet {
    type Op = u8;
    type Ret = u64;

    async fn setup<K: Kv>(&self, kv: &K) -> Result<(), KvError> {
        for k in 0..4u8 {
            kv.set(&[b'k', b'0' + k], b"0", 0).await?;
        }
        Ok(())
    }

    async fn run<K: Kv>(&self, kv: &K, _client: usize, op: &u8) -> Result<u64, KvError> {
        let key = [b'k', b'0' + op];
        let n = kv.incr(&key, 1).await?.unwrap_or(0);
        let _ = kv.get(&key).await?;
        Ok(n)
    }

    fn op(&self, _client: usize, _index: usize, rng: &mut SimRng) -> u8 {
        rng.below(4) as u8
    }

    fn check(&self, _history: &History<u8, u64>) -> Verdict {
        Verdict::Ok
    }
}

/// Runs the suite: 3 clients × 20 operations (40 KV calls each), random strategy, no
/// faults, history recorded, trace off (as in bulk checking), for about a second.
pub fn run() -> Result<Map<String, Value>, String> {
    let config = SimConfig::from_scenario(&Scenario::new("bench", 3, 20));
    let model = IncrGet;
    // Warm up.
    for seed in 0..200 {
        std::hint::black_box(sim::run(&model, &config, seed, None));
    }
    let start = Instant::now();
    let mut runs = 0u64;
    let mut kv = 0u64;
    let mut steps = 0u64;
    while start.elapsed() < Duration::from_millis(1500) {
        for _ in 0..100 {
            let out = sim::run(&model, &config, runs, None);
            kv += out.kv_calls;
            steps += out.steps as u64;
            runs += 1;
            std::hint::black_box(&out.history);
        }
    }
    let secs = start.elapsed().as_secs_f64();
    let limit = limit_kv_ops_per_s();
    let mut m = Map::new();
    m.insert(
        "workload".into(),
        json!("3 clients x 20 ops (incr+get), random, history on, 1 thread"),
    );
    m.insert("kv_ops_per_s".into(), json!((kv as f64 / secs).round()));
    m.insert("runs_per_s".into(), json!((runs as f64 / secs).round()));
    m.insert("steps_per_s".into(), json!((steps as f64 / secs).round()));
    m.insert("runs".into(), json!(runs));
    m.insert("limit_kv_ops_per_s".into(), json!(limit.round()));
    m.insert(
        "limit".into(),
        json!("the same operations on a bare BTreeMap<Vec<u8>, Vec<u8>> in a loop: a fresh map per run, 4 sets, then 3 x 20 x (incr + get)"),
    );
    Ok(m)
}

/// The limit: the workload's KV operations on a bare map in a loop, per second. Each run
/// starts a fresh map with the setup's 4 counters; each operation draws its counter as the
/// model does (clients in turn, each from its own stream), adds 1 to it as `incr` does
/// (reads the decimal digits, writes the new ones back) and reads it as `get` does (a
/// copy of the value). Only the incr and get calls count, as in the simulator's figure.
fn limit_kv_ops_per_s() -> f64 {
    let once = |seed: u64| -> u64 {
        let mut map: BTreeMap<Vec<u8>, Vec<u8>> = BTreeMap::new();
        for k in 0..4u8 {
            map.insert(vec![b'k', b'0' + k], b"0".to_vec());
        }
        let mut rngs: Vec<SimRng> = (0..3).map(|c| SimRng::derive(seed, 1 + c)).collect();
        let mut kv = 0u64;
        for _ in 0..20 {
            for rng in &mut rngs {
                let key = [b'k', b'0' + rng.below(4) as u8];
                if let Some(v) = map.get_mut(&key[..]) {
                    let n = v
                        .iter()
                        .take_while(|b| b.is_ascii_digit())
                        .fold(0u64, |n, &b| {
                            n.wrapping_mul(10).wrapping_add((b - b'0') as u64)
                        })
                        .wrapping_add(1);
                    v.clear();
                    v.extend_from_slice(itoa::Buffer::new().format(n).as_bytes());
                }
                std::hint::black_box(map.get(&key[..]).cloned());
                kv += 2;
            }
        }
        kv
    };
    for seed in 0..200 {
        std::hint::black_box(once(seed));
    }
    let start = Instant::now();
    let mut kv = 0u64;
    let mut seed = 0u64;
    while start.elapsed() < Duration::from_millis(500) {
        for _ in 0..100 {
            kv += once(seed);
            seed += 1;
        }
    }
    kv as f64 / start.elapsed().as_secs_f64()
}
