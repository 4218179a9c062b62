//! `kvsim list`: models, variants and scenarios.

use crate::error::CliError;
use crate::out::outln;
use kvsim::sim::SimConfig;
use kvsim_models::registry::registry;
use serde_json::json;
use std::process::ExitCode;

/// Prints the registry; returns the exit code.
pub fn main(json_out: bool) -> Result<ExitCode, CliError> {
    let entries = registry();
    if json_out {
        let models: Vec<_> = entries
            .iter()
            .map(|e| {
                json!({
                    "model": e.name,
                    "about": e.about,
                    "variants": e.variants.iter().map(|(v, _)| v.name()).collect::<Vec<_>>(),
                    "explore": {
                        "clients": e.explore.clients,
                        "ops": e.explore.ops,
                        "horizon_ms": e.explore.horizon_ms,
                        "max_op_steps": e.explore.max_op_steps,
                        "draws": e.explore.draw_values,
                        "every_value_up_to": e.explore.every_value_up_to,
                        "timed": e.explore.times,
                    },
                    "scenarios": e.scenarios.iter().map(|(s, x)| (s, x, SimConfig::from_scenario(s))).map(|(s, x, c)| json!({
                        "name": s.name,
                        "about": s.about,
                        "clients": s.clients,
                        "ops": s.ops,
                        "faults": s.faults.to_string(),
                        "fault_budget": s.fault_budget,
                        "strategy": s.strategy.to_string(),
                        "runs": s.runs,
                        "persistent": s.persistent,
                        "timeout_ms": s.timeout_ms,
                        "retries": s.retries,
                        "memory_limit": c.memory_limit,
                        "neighbour_bytes": c.neighbour_bytes,
                        "work_ms": c.work_ms,
                        "expected": {"published": x.published.name(), "fixed": x.fixed.name()},
                    })).collect::<Vec<_>>(),
                })
            })
            .collect();
        outln!(
            "{}",
            serde_json::to_string_pretty(&json!({ "models": models })).expect("json")
        )?;
        return Ok(ExitCode::SUCCESS);
    }
    for e in &entries {
        let variants: Vec<&str> = e.variants.iter().map(|(v, _)| v.name()).collect();
        outln!("{}  ({})  {}", e.name, variants.join(", "), e.about)?;
        outln!("  explore: {}", e.explore.describe())?;
        for (s, x) in &e.scenarios {
            outln!(
                "  {:<18} {}×{} faults {:<20} {:<7} runs {:<6} expect published={} fixed={}{}",
                s.name,
                s.clients,
                s.ops,
                s.faults.to_string(),
                s.strategy.to_string(),
                s.runs,
                x.published.name(),
                x.fixed.name(),
                extras(s)
            )?;
            if !s.about.is_empty() {
                outln!("  {:<18} {}", "", s.about)?;
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// What a scenario's line adds after its expectations: a persistent store, a timeout.
fn extras(s: &kvsim::scenario::Scenario) -> String {
    let mut out = String::new();
    if s.persistent {
        out.push_str(" (persistent store)");
    }
    if s.timeout_ms > 0 {
        out.push_str(&format!(" (timeout {})", kvsim::sim::ms(s.timeout_ms)));
    }
    if s.retries > 0 {
        out.push_str(&format!(" (library retries {}×)", s.retries));
    }
    if s.work_ms != [0, 0] {
        out.push_str(&format!(
            " (its work takes {}–{} ms each time)",
            s.work_ms[0], s.work_ms[1]
        ));
    }
    let c = SimConfig::from_scenario(s);
    if let Some(m) = c.memory_limit {
        out.push_str(&format!(" (memory {m} B"));
        if c.neighbour_bytes > 0 {
            out.push_str(&format!(
                ", a neighbour writes {} B a call",
                c.neighbour_bytes
            ));
        }
        out.push(')');
    }
    out
}
