//! `kvsim bench`: the performance suite. Each suite is a function returning named figures
//! (names carry their unit: `kv_ops_per_s`, `seconds_median`, `millis_total`, …).

pub mod check;
pub mod checker;
pub mod compare;
pub mod explore;
pub mod long_history;
pub mod mq;

use crate::error::CliError;
use crate::out::outln;
use serde_json::{Map, Value};
use std::path::Path;
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
        about: "simulated KV operations and runs per second, 3 clients, one core; beside them the store alone, a minimal executor and a bare map",
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
        name: "check",
        about: "kvsim check's whole default matrix, shrinking included, every core: runs per second of wall time (every verdict as expected)",
        run: check::run,
    },
    Suite {
        name: "first-violation",
        about: "time to the first violation of each published variant, median over 11 seeds",
        run: first_violation::run,
    },
];

/// The suites `kvsim bench --quick` runs (CI runs them beside `bench/baseline.json`):
/// those that take seconds, not minutes.
pub const QUICK: &[&str] = &["sim", "serve", "mq", "first-violation"];

/// Runs the named suites (all when `names` is empty, the [`QUICK`] ones with `quick`);
/// prints JSON or a table, each figure beside its baseline's with `compare`.
pub fn main(
    names: &[String],
    json: bool,
    quick: bool,
    compare: Option<&Path>,
) -> Result<ExitCode, CliError> {
    for name in names {
        if !SUITES.iter().any(|s| s.name == name) {
            let valid: Vec<&str> = SUITES.iter().map(|s| s.name).collect();
            return Err(CliError::new(format!(
                "unknown bench suite {name:?}: expected one of {}",
                valid.join(", ")
            )));
        }
    }
    let baseline = compare
        .map(compare::load)
        .transpose()
        .map_err(CliError::new)?;
    if let (Some(b), false) = (&baseline, json) {
        outln!(
            "compared with the baseline of commit {} on {} (ratio = now / baseline)",
            b.commit,
            b.machine
        )?;
    }
    let mut out = Map::new();
    let mut compared = Map::new();
    for suite in SUITES {
        let wanted = names.iter().any(|n| n == suite.name)
            || (names.is_empty() && (!quick || QUICK.contains(&suite.name)));
        if !wanted {
            continue;
        }
        match (suite.run)() {
            Ok(figures) => {
                let rows = baseline.as_ref().map(|b| {
                    let base = b.suites.get(suite.name).and_then(Value::as_object);
                    (compare::rows(&figures, base), base.is_some())
                });
                if !json {
                    outln!("{} ({})", suite.name, suite.about)?;
                    match &rows {
                        Some((rows, has)) => {
                            if !has {
                                outln!("  (the baseline has no suite {})", suite.name)?;
                            }
                            for row in rows {
                                outln!("{}", compare::line(row))?;
                            }
                        }
                        None => {
                            for (k, v) in &figures {
                                outln!("  {k:<32} {v}")?;
                            }
                        }
                    }
                }
                if let Some((rows, _)) = &rows {
                    compared.insert(suite.name.to_string(), compare::json_rows(rows));
                }
                out.insert(suite.name.to_string(), Value::Object(figures));
            }
            Err(e) => return Err(CliError::new(format!("bench {}: {e}", suite.name))),
        }
    }
    if json {
        if let Some(b) = &baseline {
            // Beside the suites, never in place of a figure: `compare` is no suite's name.
            out.insert(
                "compare".into(),
                serde_json::json!({
                    "baseline_commit": b.commit,
                    "baseline_machine": b.machine,
                    "ratio": "now / baseline",
                    "suites": compared,
                }),
            );
        }
        outln!("{}", Value::Object(out))?;
    }
    Ok(ExitCode::SUCCESS)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quick_suites_are_suites_and_compare_is_not_a_suite_name() {
        for q in QUICK {
            assert!(SUITES.iter().any(|s| s.name == *q), "{q}");
        }
        assert!(SUITES.iter().all(|s| s.name != "compare"));
    }
}
