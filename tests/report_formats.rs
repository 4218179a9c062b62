//! The JSON and HTML forms of the report.

mod report_support;

use kvsim::harness::shrink::{self, ShrinkLimits};
use kvsim::harness::target::RunReport;
use kvsim::{FaultKind, Strategy};
use report_support::*;
use serde_json::Value;

fn evicted_counter() -> RunReport {
    let t = hits();
    let mut cfg = config(2, 2, &[FaultKind::Evict, FaultKind::Lose], Strategy::Random);
    cfg.fault_probability = 0.2;
    let failing = first_failure(&t, "evict", &cfg);
    shrink::shrink(&t, &failing, &ShrinkLimits::default())
}

#[test]
fn json_carries_the_verdict_the_ops_and_the_trace() {
    let r = evicted_counter();
    let v: Value = serde_json::from_str(&kvsim::report::json(&r)).unwrap();
    assert_eq!(v["format"], "kvsim-report/1");
    assert_eq!(v["target"], "hits/incr");
    assert_eq!(v["model"], "hits");
    assert_eq!(v["variant"], "incr");
    assert_eq!(v["verdict"], "violation");
    assert_eq!(v["property"], "invariant");
    assert_eq!(v["offending_ops"], serde_json::json!([0]));
    assert_eq!(v["ops"][0]["offending"], true);
    assert_eq!(v["ops"][0]["op"], "\"hit\"");
    assert_eq!(v["config"]["clients"], 1);
    assert!(v["shrink"]["from_steps"].as_u64().unwrap() >= v["steps"].as_u64().unwrap());
    let columns: Vec<&str> = v["trace"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["column"].as_str().unwrap())
        .collect();
    assert_eq!(columns, ["setup", "faults", "C0", "C0", "C0"]);
    assert_eq!(v["trace"][1]["text"], "evict hits");
    assert_eq!(v["trace"][1]["event"]["Fault"]["Evict"]["shard"], 0);
    assert_eq!(v["replay"], format!("kvsim replay {}", r.token));
}

#[test]
fn html_is_one_self_contained_page_with_a_sequence_diagram() {
    let r = evicted_counter();
    let page = kvsim::report::html(&r);
    assert!(page.starts_with("<!DOCTYPE html>"));
    assert!(page.trim_end().ends_with("</html>"));
    // Nothing to fetch: the viewer's scripts are inline (its data, its error handler and
    // itself), no external resources.
    assert_eq!(page.matches("<script").count(), 3);
    assert_eq!(
        page.matches("<script>").count()
            + page.matches("<script type=\"application/json\"").count(),
        3
    );
    assert!(page.contains("<section id=\"kv-viewer\""));
    assert!(page.contains("<div id=\"errors\""));
    assert!(!page.contains("src="));
    assert!(!page.contains("<link"));
    assert_eq!(
        page.matches("http").count(),
        page.matches("http://www.w3.org/2000/svg").count()
    );
    // One lane per client and one for the store; the eviction marked; the command arrow,
    // its reply, and the offending operation's bar in red.
    assert_eq!(page.matches("<svg").count(), 1);
    assert!(page.contains(">C0</text>"));
    assert!(page.contains(">store</text>"));
    assert!(page.contains("⚡ evict hits"));
    assert!(page.contains("incr hits 1</text>"));
    assert!(page.contains(">NOT_FOUND</text>"));
    assert!(page.contains("fill=\"#f6c9c5\" stroke=\"#b3261e\""));
    assert!(page.contains("why: C0 found the counter missing"));
    assert!(page.contains(&format!("kvsim replay {}", r.token)));
}

#[test]
fn html_escapes_what_the_trace_contains() {
    assert_eq!(
        kvsim::report::escape("<a href=\"x\">&'"),
        "&lt;a href=&quot;x&quot;&gt;&amp;&#39;"
    );
}
