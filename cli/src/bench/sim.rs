//! The simulator's suite: simulated KV operations and runs per second on one core.

use kvsim::sim::{self, SimConfig};
use kvsim::History;
use kvsim::Model;
use kvsim::Scenario;
use kvsim::SimRng;
use kvsim::Verdict;
use kvsim::{Kv, KvError};
use serde_json::{json, Map, Value};
use std::time::{Duration, Instant};

mod floors;

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
/// faults, history recorded, trace off (as in bulk checking), for 1.5 s; then its
/// reference figures ([`floors`]), half a second each.
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
    let limit = floors::bare_map(&config);
    let store_alone = floors::store_alone(&model, &config);
    let minimal = floors::minimal_executor(&model, &config);
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
    m.insert("store_kv_ops_per_s".into(), json!(store_alone.round()));
    m.insert("store".into(), json!(floors::STORE_ALONE));
    m.insert(
        "minimal_executor_kv_ops_per_s".into(),
        json!(minimal.round()),
    );
    m.insert("minimal_executor".into(), json!(floors::MINIMAL_EXECUTOR));
    m.insert("limit".into(), json!(floors::BARE_MAP));
    Ok(m)
}
