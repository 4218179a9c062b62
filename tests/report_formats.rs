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

#[test]
fn a_structure_s_representation_stands_beside_the_reason_in_text_html_and_json() {
    let mut r = evicted_counter();
    assert_eq!(r.representation, None, "the test model describes nothing");
    let text = kvsim::report::text(&r);
    assert!(
        !text.contains("how the structure stores its state"),
        "{text}"
    );
    r.representation = Some("one key, hits, holds the count in decimal".into());
    let text = kvsim::report::text(&r);
    let why = text
        .find("why: C0 found the counter missing")
        .expect("the reason");
    let how = text
        .find("how the structure stores its state: one key, hits, holds the count in decimal")
        .expect("the representation");
    let replay = text.find("replay: kvsim replay").expect("the replay line");
    assert!(why < how && how < replay, "{text}");
    let page = kvsim::report::html(&r);
    let why = page.find("<p class=\"why\">why: C0").expect("the reason");
    let how = page
        .find("<p class=\"how\">how the structure stores its state: one key, hits,")
        .expect("the representation");
    assert!(why < how && how < page.find("<h2>Sequence diagram").unwrap());
    let v: Value = serde_json::from_str(&kvsim::report::json(&r)).unwrap();
    assert_eq!(
        v["representation"],
        "one key, hits, holds the count in decimal"
    );
}

#[test]
fn a_run_record_written_before_representations_still_reads() {
    let r = evicted_counter();
    let mut old: Value = serde_json::to_value(&r).unwrap();
    assert!(old.get("representation").is_none(), "None is not written");
    old["shrink"]
        .as_object_mut()
        .unwrap()
        .remove("from_numbered_steps");
    let back: RunReport = serde_json::from_value(old).unwrap();
    assert_eq!(back.representation, None);
    let s = back.shrink.as_ref().unwrap();
    assert_eq!(s.from_numbered_steps, None);
    // Without the original's numbered steps, the shrink line says what it counts.
    assert!(
        s.describe(&back).starts_with(&format!(
            "shrunk {} → {} scheduling choices",
            s.from_steps, back.steps
        )),
        "{}",
        s.describe(&back)
    );
}

#[test]
fn html_setup_has_its_own_place_and_the_header_counts_the_numbered_steps() {
    let r = evicted_counter();
    let page = kvsim::report::html(&r);
    // The viewer's data: the setup's command stands apart (shown above step 1 as "setup:
    // …"), never as a step of the faults lane (lane -1).
    let data = page
        .split("<script type=\"application/json\" id=\"kv-data\">")
        .nth(1)
        .and_then(|rest| rest.split("</script>").next())
        .expect("the viewer's data");
    let data: serde_json::Value = serde_json::from_str(data).expect("the viewer's data is JSON");
    let setup: Vec<&str> = data["setup"]
        .as_array()
        .expect("a setup list")
        .iter()
        .filter_map(|s| s.as_str())
        .collect();
    assert!(
        setup.iter().any(|s| s.starts_with("set hits")),
        "setup: {setup:?}"
    );
    let steps = data["steps"].as_array().expect("the steps");
    assert!(
        !steps
            .iter()
            .any(|s| s[1] == -1 && s[2].as_str().is_some_and(|t| t.starts_with("set hits"))),
        "setup in the faults lane"
    );
    // The header's steps, the shrink line and the viewer count the same steps.
    assert_eq!(steps.len(), r.numbered_steps());
    assert!(page.contains(&format!("<b>steps</b> {}</p>", r.numbered_steps())));
    assert!(page.contains(&format!("→ {} steps", r.numbered_steps())));
}
