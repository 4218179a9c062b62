//! Every scenario of the nine seed structures gives the verdict its table expects, for
//! both variants: each published variant shows its violations, each fixed variant passes
//! the fault profiles it claims (and fails only where its doc says no design can hold).

use kvsim::harness::sweep::RunBudget;
use kvsim::sim::SimConfig;
use kvsim_models::registry::{matches, registry};

fn check_model(name: &str) {
    let entries = registry();
    let entry = entries
        .iter()
        .find(|e| e.name == name)
        .unwrap_or_else(|| panic!("{name} is not registered"));
    let mut wrong = Vec::new();
    for (scenario, expect) in &entry.scenarios {
        for variant in entry.available_variants() {
            let limits = RunBudget {
                seed: 1,
                runs: scenario.runs,
                time_limit: None,
                shard: kvsim::harness::sweep::Shard::ALL,
                min_runs: None,
                clock: kvsim::harness::sweep::Clock::Wall,
            };
            let report =
                entry
                    .target(variant)
                    .sweep(scenario, &SimConfig::from_scenario(scenario), &limits);
            if !matches(expect.of(variant), &report.verdict) {
                wrong.push(format!(
                    "{name}/{variant} {}: expected {}, found {}",
                    scenario.name,
                    expect.of(variant).name(),
                    report.verdict
                ));
            }
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn fifo() {
    check_model("fifo");
}

#[test]
fn lock() {
    check_model("lock");
}

#[test]
fn counter() {
    check_model("counter");
}

#[test]
fn visitor_counter() {
    check_model("visitor-counter");
}

#[test]
fn event_log() {
    check_model("event-log");
}

#[test]
fn array_locked() {
    check_model("array-locked");
}

#[test]
fn array_append() {
    check_model("array-append");
}

#[test]
fn table() {
    check_model("table");
}

#[test]
fn spinlock() {
    check_model("spinlock");
}

/// A probe a scenario requires (`Scenario::sometimes`) is one some variant of its model
/// declares: a structure is held only to the probes it declares, so a misspelt name would
/// otherwise hold no variant to anything.
#[test]
fn every_required_probe_is_declared_by_some_variant() {
    let mut wrong = Vec::new();
    for entry in registry() {
        for (scenario, _) in &entry.scenarios {
            for name in &scenario.sometimes {
                let declared = entry
                    .available_variants()
                    .into_iter()
                    .any(|v| entry.target(v).probes().contains(&name.as_str()));
                if !declared {
                    wrong.push(format!("{} {}: {name:?}", entry.name, scenario.name));
                }
            }
        }
    }
    assert!(
        wrong.is_empty(),
        "required probes no variant declares: {wrong:?}"
    );
}
