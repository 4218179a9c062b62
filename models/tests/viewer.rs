//! The step-through viewer's data for fifo/published's counterexample without faults: the
//! steps as the text report numbers them, the operations, and the stores' changes step by
//! step (pinned: a change to what the page is given shows here first).

use kvsim::harness::target::with_store;
use kvsim::sim::Token;
use kvsim_models::registry::registry;

/// fifo/published under no faults: an enqueue, then a dequeue that returns the dummy's
/// empty data (as `reports/fifo/published-none.txt` gives it).
const TOKEN: &str = "fifo/published:no-faults+none:AwECAAAAAJqZmZmZmak_AAAAAQHcC6Af0A_QD9wLoJwBMqCcAYC1GPyL56LBi5XRawF5ULyTEFS7iA";

#[test]
fn the_viewer_data_of_a_fifo_counterexample() {
    let entries = registry();
    let t = Token::decode(TOKEN).expect("the token decodes");
    let target = entries
        .iter()
        .flat_map(|e| e.targets())
        .find(|(_, x)| x.name() == t.target)
        .expect("fifo/published is registered")
        .1;
    let plain = target.run(&t.scenario, &t.config, t.seed, t.choices.as_deref());
    let r = with_store(target, &plain);
    assert!(r.store.is_some(), "the replay records the stores");
    let data: serde_json::Value =
        serde_json::from_str(&kvsim::report::viewer_data(&r, None, None)).expect("JSON");
    insta::assert_snapshot!(serde_json::to_string_pretty(&data).expect("pretty JSON"));
}
