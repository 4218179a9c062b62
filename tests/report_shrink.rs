//! The minimizer: failing runs shrink to minimal ones that fail the same way.

mod report_support;

use kvsim::harness::probed::Probed;
use kvsim::harness::shrink::{self, ShrinkLimits};
use kvsim::harness::target::Target;
use kvsim::sim::Token;
use kvsim::Verdict;
use kvsim::{FaultKind, Strategy};
use report_support::*;

#[test]
fn a_lost_update_shrinks_to_two_clients_with_one_increment_each() {
    let t = getset();
    let cfg = config(4, 3, &[], Strategy::Random);
    let failing = first_failure(&t, "many", &cfg);
    let small = shrink::shrink(&t, &failing, &ShrinkLimits::default());
    assert!(small.verdict.is_violation(), "{}", small.verdict);
    assert_eq!(shrink::active_clients(&small.config).len(), 2);
    assert_eq!(shrink::total_ops(&small.config), 2);
    // Two increments, each: start (parks on get), deliver get, deliver set.
    assert_eq!(small.steps, 6);
    let stats = small.shrink.clone().expect("shrink stats");
    assert!(!stats.exhausted);
    assert!(stats.from_steps > small.steps);
    assert_eq!(stats.from_clients, 4);
    shrink::is_minimal(&t, &small, &ShrinkLimits::default()).unwrap();
}

#[test]
fn a_shrink_that_remembers_earlier_probes_runs_none_again_and_ends_the_same() {
    let t = getset();
    let cfg = config(4, 3, &[], Strategy::Random);
    let failing = first_failure(&t, "many", &cfg);
    let mut probed = Probed::new();
    let first = shrink::shrink_with(&t, &failing, &ShrinkLimits::default(), &mut probed);
    let learned = probed.len();
    let stats = first.shrink.clone().expect("shrink stats");
    // Repeats within one shrink are answered from memory, yet count as probes.
    assert!(
        learned > 0 && (learned as u64) < stats.probes,
        "{learned} of {}",
        stats.probes
    );
    let again = shrink::shrink_with(&t, &failing, &ShrinkLimits::default(), &mut probed);
    assert_eq!(probed.len(), learned, "the second shrink ran a probe again");
    assert_eq!(again.token, first.token);
    assert_eq!(again.shrink, first.shrink);
    let fresh = shrink::shrink(&t, &failing, &ShrinkLimits::default());
    assert_eq!(fresh.token, first.token);
    assert_eq!(fresh.shrink, first.shrink);
}

#[test]
fn the_token_of_a_shrunk_run_replays_it_exactly() {
    let t = getset();
    let cfg = config(3, 2, &[FaultKind::Crash], Strategy::Pct { depth: 2 });
    let failing = first_failure(&t, "crashy", &cfg);
    let small = shrink::shrink(&t, &failing, &ShrinkLimits::default());
    let token = Token::decode(&small.token).unwrap();
    assert!(token.choices.is_some());
    let again = t.run(
        &token.scenario,
        &token.config,
        token.seed,
        token.choices.as_deref(),
    );
    assert_eq!(again.trace, small.trace);
    assert_eq!(again.verdict, small.verdict);
}

#[test]
fn an_eviction_bug_keeps_exactly_one_fault_and_drops_the_rest() {
    let t = hits();
    let cfg = config(
        3,
        3,
        &[FaultKind::Evict, FaultKind::Crash, FaultKind::Pause],
        Strategy::Random,
    );
    let mut cfg = cfg;
    cfg.fault_probability = 0.2;
    let failing = first_failure(&t, "evict", &cfg);
    let small = shrink::shrink(&t, &failing, &ShrinkLimits::default());
    assert!(small.verdict.is_violation());
    assert_eq!(small.config.faults.kinds(), &[FaultKind::Evict]);
    assert_eq!(small.config.fault_budget, 1);
    assert_eq!(shrink::active_clients(&small.config).len(), 1);
    assert_eq!(shrink::total_ops(&small.config), 1);
    assert_eq!(shrink::faults_in(&small), 1);
    shrink::is_minimal(&t, &small, &ShrinkLimits::default()).unwrap();
}

#[test]
fn is_minimal_names_what_could_still_go() {
    let t = getset();
    let cfg = config(3, 2, &[], Strategy::Random);
    let failing = first_failure(&t, "t", &cfg);
    let err = shrink::is_minimal(&t, &failing, &ShrinkLimits::default()).unwrap_err();
    assert!(err.starts_with("could still remove: client C2"), "{err}");
}

#[test]
fn a_passing_run_is_left_alone() {
    let t = getset();
    let cfg = config(1, 2, &[], Strategy::Random);
    let ok = t.run("t", &cfg, 5, None);
    assert_eq!(ok.verdict, Verdict::Ok);
    assert_eq!(shrink::shrink(&t, &ok, &ShrinkLimits::default()), ok);
}

#[test]
fn shrinking_is_deterministic() {
    let t = getset();
    let cfg = config(3, 3, &[FaultKind::Lose], Strategy::Swarm);
    let failing = first_failure(&t, "t", &cfg);
    let a = shrink::shrink(&t, &failing, &ShrinkLimits::default());
    let b = shrink::shrink(&t, &failing, &ShrinkLimits::default());
    assert_eq!(a, b);
}
