//! Small models for the report and minimizer tests (the registered models live in
//! `kvsim-models`; these pin the harness on its own).
#![allow(dead_code)]

use kvsim::harness::sweep::RunBudget;
use kvsim::harness::target::{ModelTarget, RunReport, Target};
use kvsim::sim::SimConfig;
use kvsim::Model;
use kvsim::SimRng;
use kvsim::{FaultKind, Scenario, Strategy};
use kvsim::{History, Outcome};
use kvsim::{Kv, KvError};
use kvsim::{Verdict, Violation};

/// A counter whose increment is get-then-set: two concurrent increments lose an update.
pub struct GetSetCounter;

impl Model for GetSetCounter {
    type Op = String;
    type Ret = u64;

    async fn setup<K: Kv>(&self, kv: &K) -> Result<(), KvError> {
        kv.set(b"n", b"0", 0).await?;
        Ok(())
    }

    async fn run<K: Kv>(&self, kv: &K, _client: usize, _op: &String) -> Result<u64, KvError> {
        let v: u64 = match kv.get(b"n").await? {
            Some(d) => String::from_utf8_lossy(&d).trim().parse().unwrap_or(0),
            None => 0,
        };
        kv.set(b"n", (v + 1).to_string().as_bytes(), 0).await?;
        Ok(v + 1)
    }

    fn op(&self, client: usize, index: usize, _rng: &mut SimRng) -> String {
        format!("incr#{client}.{index}")
    }

    /// Each completed increment returns a distinct new value.
    fn check(&self, history: &History<String, u64>) -> Verdict {
        let mut seen = std::collections::BTreeMap::new();
        for (i, op) in history.ops.iter().enumerate() {
            if let Outcome::Ok(v) = op.outcome {
                if let Some(j) = seen.insert(v, i) {
                    return Verdict::Violation(Violation::new(
                        "linearizability",
                        format!("two increments both returned {v}: an update was lost"),
                        vec![i, j],
                    ));
                }
            }
        }
        Verdict::Ok
    }
}

/// A counter on `incr` that must never find its key missing: an eviction (or a restart)
/// breaks it, interleavings alone never do.
pub struct IncrCounter;

impl Model for IncrCounter {
    type Op = String;
    type Ret = Option<u64>;

    async fn setup<K: Kv>(&self, kv: &K) -> Result<(), KvError> {
        kv.set(b"hits", b"0", 0).await?;
        Ok(())
    }

    async fn run<K: Kv>(
        &self,
        kv: &K,
        _client: usize,
        _op: &String,
    ) -> Result<Option<u64>, KvError> {
        kv.incr(b"hits", 1).await
    }

    fn op(&self, _client: usize, _index: usize, _rng: &mut SimRng) -> String {
        "hit".to_string()
    }

    fn check(&self, history: &History<String, Option<u64>>) -> Verdict {
        for (i, op) in history.ops.iter().enumerate() {
            if let Outcome::Ok(None) = op.outcome {
                return Verdict::Violation(Violation::new(
                    "invariant",
                    format!(
                        "C{} found the counter missing: its hits were lost",
                        op.client
                    ),
                    vec![i],
                ));
            }
        }
        Verdict::Ok
    }
}

/// `counter/getset` as a target.
pub fn getset() -> ModelTarget<GetSetCounter> {
    ModelTarget::new("counter/getset", GetSetCounter)
}

/// `hits/incr` as a target.
pub fn hits() -> ModelTarget<IncrCounter> {
    ModelTarget::new("hits/incr", IncrCounter)
}

/// The knobs of a scenario.
pub fn config(clients: usize, ops: usize, faults: &[FaultKind], strategy: Strategy) -> SimConfig {
    SimConfig::from_scenario(
        &Scenario::new("t", clients, ops)
            .faults(faults)
            .strategy(strategy),
    )
}

/// The first failing run of `target` under `config` (from base seed 1), traced.
pub fn first_failure(target: &dyn Target, name: &str, config: &SimConfig) -> RunReport {
    let scenario = Scenario::new(name, config.clients, config.ops);
    let limits = RunBudget {
        seed: 1,
        runs: 5000,
        time_limit: None,
        shard: kvsim::harness::sweep::Shard::ALL,
        min_runs: None,
        clock: kvsim::harness::sweep::Clock::Wall,
    };
    let report = target.sweep(&scenario, config, &limits);
    report.failure.expect("the check finds a violation")
}
