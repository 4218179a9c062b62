//! `kvsim replay TOKEN`: one execution, exactly as it happened, with its full trace.
//!
//! The token must decode (see [`kvsim::sim::Token`]: a checksum over the names and the
//! payload, every count within limits), name a registered target `MODEL/VARIANT`, and name
//! a scenario of that model or one of the names kvsim gives ad-hoc runs (see
//! [`scenario_is_known`]); anything else is an error (exit 2), never a run of something
//! else.

use crate::error::{self, CliError};
use crate::installed::registry;
use crate::out::{out, outln};
use kvsim::harness::target::Target;
use kvsim::sim::Token;
use kvsim::FaultKind;
use kvsim_models::registry::Entry;
use std::process::ExitCode;

/// Scenario names kvsim gives runs that are not one of a model's scenarios: `custom`
/// (`kvsim check` with options that change the scenarios), `explore` (`kvsim explore`) and
/// `default` (`kvsim report` for a model without scenarios, as `default+PROFILE`).
pub const AD_HOC_SCENARIOS: [&str; 3] = ["custom", "explore", "default"];

/// Replays `token` (minimized first with `shrink`); prints the report (text or JSON);
/// with `html`, also writes the run's step-through viewer there; returns the verdict's
/// exit code (2 when the token does not decode or names no registered target or scenario,
/// or the page cannot be written).
pub fn main(
    token: &str,
    json_out: bool,
    shrink: bool,
    html: Option<&std::path::Path>,
) -> Result<ExitCode, CliError> {
    let entries = registry();
    let (token, target) = resolve(&entries, token).map_err(CliError::new)?;
    let report = target.run(
        &token.scenario,
        &token.config,
        token.seed,
        token.choices.as_deref(),
    );
    let report = if shrink {
        kvsim::harness::shrink::shrink(
            target,
            &report,
            &kvsim::harness::shrink::ShrinkLimits::default(),
        )
    } else {
        report
    };
    if let Some(path) = html {
        let recorded = kvsim::harness::target::with_store(target, &report);
        std::fs::write(
            path,
            kvsim::report::viewer(&recorded, recorded.representation.as_deref()),
        )
        .map_err(|e| {
            CliError::new(format!(
                "replay: --html: cannot write {}: {e}",
                path.display()
            ))
        })?;
    }
    if json_out {
        outln!("{}", kvsim::report::json(&report))?;
    } else {
        out!(
            "{}",
            kvsim::report::text_styled(&report, kvsim::report::colour_wanted())
        )?;
    }
    Ok(error::code(report.verdict.exit_code()))
}

/// Decodes `text` and finds its target among `entries`: an error (for people, without the
/// `kvsim: ` prefix) when the token does not decode, its target is not registered or its
/// scenario is not one of the model's.
pub fn resolve<'e>(entries: &'e [Entry], text: &str) -> Result<(Token, &'e dyn Target), String> {
    let token = Token::decode(text).map_err(|e| e.to_string())?;
    let found = entries.iter().find_map(|e| {
        e.targets()
            .find(|(_, t)| t.name() == token.target)
            .map(|(_, t)| (e, t))
    });
    let Some((entry, target)) = found else {
        let names: Vec<String> = entries
            .iter()
            .map(|e| {
                let mut targets: Vec<String> = e
                    .variants
                    .iter()
                    .map(|(_, t)| t.name().to_string())
                    .collect();
                if !e.repairs.is_empty() {
                    let mut repairs: Vec<&str> = e.repairs.iter().map(|r| r.name).collect();
                    repairs.sort_unstable();
                    targets.push(format!(
                        "{}/published+REPAIR[+REPAIR...] (repairs: {})",
                        e.name,
                        repairs.join(", ")
                    ));
                }
                format!("  {}", targets.join(", "))
            })
            .collect();
        return Err(format!(
            "bad replay token: expected a registered target, found {:?}; the targets are:\n{}\n\
             (a token printed by a `cargo test` gate replays in that test, with \
             `Check::replay`)",
            token.target,
            names.join("\n"),
        ));
    };
    if !scenario_is_known(entry, &token.scenario) {
        let names: Vec<&str> = entry
            .scenarios
            .iter()
            .map(|(s, _)| s.name.as_str())
            .chain(AD_HOC_SCENARIOS)
            .collect();
        return Err(format!(
            "bad replay token: expected a scenario of {} ({}, or one of these with \
             +none, +slow-work or +FAULT as `kvsim report` names them), found {:?}",
            entry.name,
            names.join(", "),
            token.scenario
        ));
    }
    Ok((token, target))
}

/// Whether `name` is a scenario of `entry`, an [`AD_HOC_SCENARIOS`] name, or either with
/// `+none`, `+slow-work` or `+FAULT` (a `kvsim report` cell).
pub fn scenario_is_known(entry: &Entry, name: &str) -> bool {
    let base = match name.rsplit_once('+') {
        Some((base, profile))
            if profile == "none"
                || profile == "slow-work"
                || FaultKind::ALL.iter().any(|k| k.name() == profile) =>
        {
            base
        }
        _ => name,
    };
    AD_HOC_SCENARIOS.contains(&base) || entry.scenarios.iter().any(|(s, _)| s.name == base)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_scenarios_tools_produce_are_known() {
        let entries = registry();
        let fifo = entries.iter().find(|e| e.name == "fifo").unwrap();
        let first = fifo.scenarios[0].0.name.clone();
        for name in [
            first.clone(),
            "custom".into(),
            "explore".into(),
            format!("{first}+none"),
            format!("{first}+evict"),
            "default+pause".into(),
        ] {
            assert!(scenario_is_known(fifo, &name), "{name}");
        }
        for name in ["nope", "custom+nope", "+evict", "nope+evict", ""] {
            assert!(!scenario_is_known(fifo, name), "{name}");
        }
        // Every scenario `kvsim report` checks is known.
        for e in &entries {
            for p in kvsim_models::reports::profiles(e) {
                let s = kvsim_models::reports::scenario_for(e, p);
                assert!(scenario_is_known(e, &s.name), "{}", s.name);
            }
        }
    }
}
