//! Exhaustive search of the registered models: the fixed variants verify for 2 clients ×
//! 2 operations without faults; a published variant that fails without faults yields its
//! shortest counterexample, which `kvsim replay` reproduces. Unique state counts pinned.

use kvsim::explore::{Limits, Scope};
use kvsim::sim::Token;
use kvsim::verdict::Verdict;
use kvsim_models::expect::Variant;
use kvsim_models::registry::registry;

fn scope(seed: u64) -> Scope {
    let mut s = Scope::new(2, 2);
    s.seed = seed;
    s.times = false;
    s
}

fn explore(model: &str, variant: Variant, seed: u64) -> kvsim::target::ExploreReport {
    let entries = registry();
    let entry = entries
        .iter()
        .find(|e| e.name == model)
        .expect("registered");
    entry
        .target(variant)
        .explore(&scope(seed), &Limits::default())
}

#[test]
fn the_fixed_variants_verify_2x2_without_faults() {
    for (model, unique, total) in [
        ("fifo", 38_644, 57_943),
        ("counter", 114, 123),
        ("lock", 9_226, 9_341),
    ] {
        let r = explore(model, Variant::Fixed, 1);
        assert_eq!(r.verdict, Verdict::Ok, "{model}/fixed");
        assert_eq!(r.bound, None, "{model}/fixed");
        assert_eq!(r.horizon_cut, 0, "{model}/fixed: nothing cut");
        assert_eq!(
            (r.unique_states, r.total_states),
            (unique, total),
            "{model}/fixed"
        );
        assert!(r.counterexample.is_none());
    }
}

#[test]
fn the_published_fifo_fails_without_faults_with_its_shortest_counterexample() {
    let r = explore("fifo", Variant::Published, 2);
    let Verdict::Violation(v) = &r.verdict else {
        panic!("expected a violation, found {}", r.verdict)
    };
    assert_eq!(v.property, "linearizability (queue)");
    assert_eq!(r.unique_states, 640);
    let cx = r.counterexample.as_ref().expect("a counterexample");
    assert_eq!(cx.verdict, r.verdict, "the simulator's replay agrees");
    // The token replays the same run.
    let token = Token::decode(r.token.as_deref().expect("a token")).expect("decodes");
    let entries = registry();
    let entry = entries.iter().find(|e| e.name == "fifo").expect("fifo");
    let again = entry.target(Variant::Published).run(
        &token.scenario,
        &token.config,
        token.seed,
        token.choices.as_deref(),
    );
    assert_eq!(again.trace, cx.trace);
    assert_eq!(again.verdict, r.verdict);
    insta::assert_snapshot!(kvsim::report::text(cx));
}

#[test]
fn the_published_counter_passes_without_faults() {
    let r = explore("counter", Variant::Published, 1);
    assert_eq!(r.verdict, Verdict::Ok);
    assert_eq!(r.unique_states, 166);
}
