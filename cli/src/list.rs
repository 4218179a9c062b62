//! `kvsim list`: models, variants and scenarios.

use crate::error::CliError;
use crate::installed::registry;
use crate::out::outln;
use kvsim::sim::{knobs, SimConfig};
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
                    "variants": e.available_variants().iter().map(|v| v.name()).collect::<Vec<_>>(),
                    "repairs": e.repairs.iter().map(|r| json!({"name": r.name, "fixes": r.fixes})).collect::<Vec<_>>(),
                    "explore": {
                        "clients": e.explore.config.clients,
                        "ops": e.explore.config.ops,
                        "horizon_ms": e.explore.horizon_ms,
                        "max_op_steps": e.explore.max_op_steps,
                        "draws": e.explore.draw_values,
                        "every_value_up_to": e.explore.every_value_up_to,
                        "timed": e.explore.times,
                    },
                    "scenarios": e.scenarios.iter().map(|(s, x)| {
                        let mut row = json!({
                            "name": s.name,
                            "about": s.about,
                            "runs": s.runs,
                            "expected": {"published": x.published.name(), "fixed": x.fixed.name()},
                            "label": x.label.map(|l| json!({"kind": l.name(), "reason": l.reason()})),
                        });
                        // The scenario's knobs, as the knob table shows them in a row.
                        let knobs = knobs::json_row(&SimConfig::from_scenario(s), knobs::rows::LIST);
                        row.as_object_mut().expect("an object").extend(knobs);
                        row
                    }).collect::<Vec<_>>(),
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
        let variants: Vec<&str> = e.available_variants().iter().map(|v| v.name()).collect();
        outln!("{}  ({})  {}", e.name, variants.join(", "), e.about)?;
        outln!("  explore: {}", e.explore.describe())?;
        for r in e.repairs {
            outln!(
                "  repair {}: fixes {} (target {}/published+{})",
                r.name,
                r.fixes,
                e.name,
                r.name
            )?;
        }
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
            if let Some(label) = x.label {
                outln!("  {:<18} fixed expected to fail: {label}", "")?;
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// What a scenario's line adds after its expectations: a persistent store, a timeout, …
/// (the knob table's notes, [`knobs::list_notes`]).
fn extras(s: &kvsim::Scenario) -> String {
    knobs::list_notes(&SimConfig::from_scenario(s))
}
