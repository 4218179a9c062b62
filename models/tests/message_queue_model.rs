//! The message-queue model in kvsim's simulator: every scenario gets the verdict its
//! expectation names, for both variants.

use kvsim::sim::{judge, run, SimConfig};
use kvsim::Verdict;
use kvsim_models::expect::{ExpectedVerdict, Variant};
use kvsim_models::message_queue::{scenarios, MessageQueueModel};

/// The first violating seed of `runs`, if any.
fn first_violation(variant: Variant, scenario: &str, runs: u64) -> Option<(u64, Verdict)> {
    let (s, _) = scenarios()
        .into_iter()
        .find(|(s, _)| s.name == scenario)
        .expect("scenario");
    let config = SimConfig::from_scenario(&s);
    let model = MessageQueueModel::new(variant);
    (0..runs).find_map(|seed| {
        let out = run(&model, &config, seed, None);
        let v = judge(&model, &out);
        v.is_violation().then_some((seed, v))
    })
}

fn expect_all(variant: Variant, runs_pass: u64, runs_violation: u64) {
    let mut wrong = Vec::new();
    for (s, expect) in scenarios() {
        let found = match expect.of(variant) {
            ExpectedVerdict::Pass => first_violation(variant, &s.name, runs_pass),
            ExpectedVerdict::Violation => first_violation(variant, &s.name, runs_violation),
        };
        match (expect.of(variant), &found) {
            (ExpectedVerdict::Pass, Some((seed, v))) => {
                wrong.push(format!("{}: seed {seed}: {v}", s.name))
            }
            (ExpectedVerdict::Violation, None) => {
                wrong.push(format!("{}: no violation in {runs_violation} runs", s.name))
            }
            _ => {}
        }
    }
    assert!(wrong.is_empty(), "{variant}: {wrong:#?}");
}

#[test]
fn fixed_meets_every_expectation() {
    expect_all(Variant::Fixed, 150, 300);
}

#[test]
fn published_meets_every_expectation() {
    expect_all(Variant::Published, 150, 300);
}
