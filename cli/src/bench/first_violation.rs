//! Time to the first violation of each published variant: for each, its first scenario
//! expected to fail, searched from 11 base seeds; the median wall time and runs until the
//! first violating run is found (detection only: no shrinking, no report).

use kvsim::harness::sweep::run_seed;
use kvsim::sim::SimConfig;
use kvsim_models::expect::{ExpectedVerdict, Variant};
use kvsim_models::registry::registry;
use serde_json::{json, Map, Value};
use std::time::Instant;

/// Base seeds searched from.
const SEEDS: u64 = 11;

/// Runs the suite.
pub fn run() -> Result<Map<String, Value>, String> {
    let mut out = Map::new();
    let mut worst: f64 = 0.0;
    for entry in registry() {
        let Some((scenario, _)) = entry
            .scenarios
            .iter()
            .find(|(_, x)| x.published == ExpectedVerdict::Violation)
        else {
            continue;
        };
        let target = entry.target(Variant::Published);
        let config = SimConfig::from_scenario(scenario);
        let mut millis = Vec::new();
        let mut runs = Vec::new();
        for base in 1..=SEEDS {
            let start = Instant::now();
            let mut found = None;
            for i in 0..scenario.runs {
                if target
                    .verdict(&config, run_seed(base, i), None)
                    .is_violation()
                {
                    found = Some(i + 1);
                    break;
                }
            }
            let Some(n) = found else {
                return Err(format!(
                    "{}/published under {}: no violation in {} runs from seed {base}",
                    entry.name, scenario.name, scenario.runs
                ));
            };
            millis.push(start.elapsed().as_secs_f64() * 1000.0);
            runs.push(n);
        }
        millis.sort_by(f64::total_cmp);
        runs.sort_unstable();
        let median_ms = millis[millis.len() / 2];
        worst = worst.max(median_ms);
        out.insert(
            entry.name.to_string(),
            json!({
                "scenario": scenario.name,
                "millis_median": (median_ms * 1000.0).round() / 1000.0,
                "runs_median": runs[runs.len() / 2],
            }),
        );
    }
    out.insert(
        "millis_median_worst".into(),
        json!((worst * 1000.0).round() / 1000.0),
    );
    Ok(out)
}
