//! `kvsim bench`: the performance suite. Each suite is a function returning named figures
//! (names carry their unit: `kv_ops_per_s`, `seconds_median`, `millis_total`, …).

pub mod checker;
pub mod explore;
pub mod long_history;
pub mod mq;

use crate::error::CliError;
use crate::out::outln;
use serde_json::{Map, Value};
use std::process::ExitCode;

pub mod first_violation;
pub mod serve;
pub mod sim;

/// A figure: `x` to three decimals, as a JSON number.
pub fn round(x: f64) -> Value {
    Value::from((x * 1000.0).round() / 1000.0)
}

/// One benchmark suite.
pub struct Suite {
    /// The suite's name (the section of `kvsim bench --json`).
    pub name: &'static str,
    /// What it measures, in one line.
    pub about: &'static str,
    /// Runs the suite and returns its figures.
    pub run: fn() -> Result<Map<String, Value>, String>,
}

/// Every suite, in the order `kvsim bench` runs them.
pub const SUITES: &[Suite] = &[
    Suite {
        name: "sim",
        about: "simulated KV operations and runs per second, 3 clients, one core",
        run: sim::run,
    },
    Suite {
        name: "checker",
        about: "linearizability checker on Porcupine's histories (median ms, parsing excluded) and on generated 1e6-operation histories (check-history, parsing included)",
        run: checker::run,
    },
    Suite {
        name: "explore",
        about: "exhaustive search (stateright): fifo/fixed 2 clients x 2 ops, no faults",
        run: explore::run,
    },
    Suite {
        name: "serve",
        about: "kvsim serve vs memcached 1.6.18 ops/s under the same TCP client load",
        run: serve::run,
    },
    Suite {
        name: "mq",
        about: "message queue: 1M 16-byte messages, one writer thread, one blocking reader thread, MemStore, 5 runs",
        run: mq::run,
    },
    Suite {
        name: "first-violation",
        about: "time to the first violation of each published variant, median over 11 seeds",
        run: first_violation::run,
    },
];

/// Runs the named suites (all when `names` is empty); prints JSON or a table.
pub fn main(names: &[String], json: bool) -> Result<ExitCode, CliError> {
    for name in names {
        if !SUITES.iter().any(|s| s.name == name) {
            let valid: Vec<&str> = SUITES.iter().map(|s| s.name).collect();
            return Err(CliError::new(format!(
                "unknown bench suite {name:?}: expected one of {}",
                valid.join(", ")
            )));
        }
    }
    let mut out = Map::new();
    for suite in SUITES {
        if !names.is_empty() && !names.iter().any(|n| n == suite.name) {
            continue;
        }
        match (suite.run)() {
            Ok(figures) => {
                if !json {
                    outln!("{} ({})", suite.name, suite.about)?;
                    for (k, v) in &figures {
                        outln!("  {k:<32} {v}")?;
                    }
                }
                out.insert(suite.name.to_string(), Value::Object(figures));
            }
            Err(e) => return Err(CliError::new(format!("bench {}: {e}", suite.name))),
        }
    }
    if json {
        outln!("{}", Value::Object(out))?;
    }
    Ok(ExitCode::SUCCESS)
}
