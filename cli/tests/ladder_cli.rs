//! `kvsim ladder` through the binary, and every command that takes a target with a
//! repaired one (`fifo/published+dequeue-next`): check, explore, replay, stress, corpus and
//! merge identity; `kvsim list` and the matrix's JSON tell impossible from not yet fixed.

use kvsim::net::MemcachedProcess;
use serde_json::Value;
use std::process::Output;

mod cli;
use cli::{kvsim, text};

const REPAIRED: &str = "fifo/published+dequeue-next";

fn json(out: &Output) -> Value {
    serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("json output ({e}): {}", text(&out.stdout)))
}

/// A fresh directory under the system's temp dir.
fn temp_dir(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("kvsim-ladder-cli-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

#[test]
fn an_unknown_model_is_a_usage_error_that_names_the_valid_ones() {
    let out = kvsim(&["ladder", "no-such-model"]);
    assert_eq!(out.status.code(), Some(2));
    let err = text(&out.stderr);
    assert!(err.contains("unknown model \"no-such-model\""), "{err}");
    assert!(
        err.contains("fifo") && err.contains("message-queue"),
        "{err}"
    );
    let out = kvsim(&["ladder", "fifo", "--runs", "0"]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    let out = kvsim(&["ladder", "fifo", "--min-runs", "5"]);
    assert_eq!(out.status.code(), Some(2), "--min-runs needs --time-budget");
}

#[test]
fn a_ladder_has_every_rung_and_scenario_and_each_finding_once() {
    let out = kvsim(&["ladder", "fifo", "--runs", "30", "--json", "--seed", "3"]);
    let v = json(&out);
    assert_eq!(v["model"], "fifo");
    assert_eq!(v["seed"], 3);
    let entries = kvsim_models::registry::registry();
    let fifo = entries.iter().find(|e| e.name == "fifo").unwrap();
    let rungs = v["rungs"].as_array().unwrap();
    let targets: Vec<&str> = rungs
        .iter()
        .map(|r| r["target"].as_str().unwrap())
        .collect();
    let expected: Vec<String> = fifo
        .rungs()
        .into_iter()
        .map(|r| fifo.target(r).name().to_string())
        .collect();
    assert_eq!(targets, expected);
    assert!(targets.contains(&REPAIRED));
    let mut differ = false;
    for r in rungs {
        let results = r["results"].as_array().unwrap();
        assert_eq!(results.len(), fifo.scenarios.len());
        for row in results {
            assert_eq!(row["target"], r["target"]);
            assert_eq!(row["runs"], 30);
            differ |= row["matches"] == false;
        }
        let repairs = r["repairs"].as_array().unwrap();
        let target = r["target"].as_str().unwrap();
        assert_eq!(repairs.is_empty(), !target.contains('+'), "{r}");
    }
    // Exit codes as the matrix's: 1 exactly when a verdict differs from its expectation.
    assert_eq!(out.status.code(), Some(if differ { 1 } else { 0 }));
    let findings = v["findings"].as_array().unwrap();
    assert!(!findings.is_empty());
    for (i, f) in findings.iter().enumerate() {
        for key in [
            "property",
            "reason",
            "class",
            "faults",
            "scenarios",
            "runs",
            "found_in",
            "removed_by",
            "minimized",
            "replay",
        ] {
            assert!(f.get(key).is_some(), "finding {i} has no {key}: {f}");
        }
        for g in &findings[..i] {
            let key = |x: &Value| {
                (
                    x["property"].clone(),
                    x["class"].clone(),
                    x["faults"].clone(),
                )
            };
            assert_ne!(key(f), key(g), "each finding once");
        }
        let removed = f["removed_by"].as_array().unwrap();
        let found_in = f["found_in"].as_array().unwrap();
        // What dequeue-next removes is found on the published rung and not on the repaired.
        if removed.iter().any(|r| r == "dequeue-next") {
            assert!(found_in.iter().any(|t| t == "fifo/published"), "{f}");
            assert!(!found_in.iter().any(|t| t == REPAIRED), "{f}");
        }
    }
    // The published code's dequeue defect: no fault needed, removed by dequeue-next.
    assert!(
        findings
            .iter()
            .any(|f| f["removed_by"] == serde_json::json!(["dequeue-next"])
                && f["faults"] == serde_json::json!([])),
        "{findings:?}"
    );
}

#[test]
fn the_text_ladder_prints_the_seed_first_and_what_removes_each_finding() {
    let out = kvsim(&["ladder", "fifo", "--runs", "20", "--seed", "5"]);
    let stdout = text(&out.stdout);
    assert!(
        stdout.starts_with("kvsim ladder fifo · seed 5 · 20 runs a check · 5 rungs × "),
        "{stdout}"
    );
    assert!(
        stdout.contains("\nfindings (each once over every rung):\n"),
        "{stdout}"
    );
    assert!(
        stdout.contains("     removed by dequeue-next\n"),
        "{stdout}"
    );
    assert!(
        stdout.contains("not yet fixed"),
        "fifo/fixed's label: {stdout}"
    );
    assert!(stdout.contains("verdicts"), "{stdout}");
}

#[test]
fn check_takes_a_repaired_target_and_replay_and_corpus_name_it_canonically() {
    let dir = temp_dir("corpus");
    let corpus = dir.to_str().unwrap();
    let out = kvsim(&[
        "check",
        REPAIRED,
        "--scenario",
        "lru",
        "--runs",
        "200",
        "--json",
        "--corpus",
        corpus,
    ]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    let v = json(&out);
    let row = &v["results"][0];
    assert_eq!(row["target"], REPAIRED);
    let token = row["replay"].as_str().unwrap().to_string();
    assert!(token.starts_with(&format!("{REPAIRED}:lru")), "{token}");
    // replay
    let out = kvsim(&["replay", &token]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    assert!(
        text(&out.stdout).contains(REPAIRED),
        "{}",
        text(&out.stdout)
    );
    // corpus: files named by the canonical target, listed and replayed as it
    let names: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert!(!names.is_empty());
    for n in &names {
        assert!(n.starts_with("fifo_published+dequeue-next-lru-"), "{n}");
    }
    let out = kvsim(&["corpus", "list", corpus]);
    assert!(
        text(&out.stdout).contains(REPAIRED),
        "{}",
        text(&out.stdout)
    );
    let out = kvsim(&[
        "check",
        REPAIRED,
        "--scenario",
        "lru",
        "--runs",
        "1",
        "--corpus",
        corpus,
    ]);
    assert_eq!(
        out.status.code(),
        Some(1),
        "a saved failure replays and still fails"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn merge_takes_the_shards_of_a_repaired_target() {
    let dir = temp_dir("merge");
    let mut files = Vec::new();
    for shard in ["1/2", "2/2"] {
        let out = kvsim(&[
            "check",
            REPAIRED,
            "--scenario",
            "no-faults",
            "--runs",
            "40",
            "--json",
            "--shard",
            shard,
        ]);
        let v = json(&out);
        assert_eq!(v["identity"]["targets"][0], REPAIRED);
        assert_eq!(v["identity"]["checks"][0]["target"], REPAIRED);
        let path = dir.join(format!("shard-{}.json", &shard[..1]));
        std::fs::write(&path, &out.stdout).unwrap();
        files.push(path.to_string_lossy().into_owned());
    }
    let mut args = vec!["merge", "--json"];
    args.extend(files.iter().map(String::as_str));
    let out = kvsim(&args);
    assert!(
        matches!(out.status.code(), Some(0 | 1)),
        "{}",
        text(&out.stderr)
    );
    let v = json(&out);
    assert_eq!(v["results"][0]["target"], REPAIRED);
    assert_eq!(v["results"][0]["runs"], 40);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn explore_takes_a_repaired_target() {
    let out = kvsim(&[
        "explore",
        REPAIRED,
        "--clients",
        "1",
        "--ops",
        "2",
        "--json",
    ]);
    assert!(
        matches!(out.status.code(), Some(0 | 1 | 3)),
        "{}",
        text(&out.stderr)
    );
    assert_eq!(json(&out)["target"], REPAIRED);
}

#[test]
fn stress_takes_a_repaired_target() {
    let Some(mc) = MemcachedProcess::for_test("ladder_cli", &[]) else {
        return;
    };
    let out = kvsim(&[
        "stress",
        REPAIRED,
        "--server",
        &mc.addr(),
        "--threads",
        "2",
        "--ops",
        "3",
    ]);
    let stdout = text(&out.stdout);
    assert!(matches!(out.status.code(), Some(0 | 1 | 3)), "{stdout}");
    assert!(
        stdout.starts_with(&format!("kvsim stress: {REPAIRED} against ")),
        "{stdout}"
    );
}

#[test]
fn list_shows_repairs_and_tells_impossible_from_not_yet_fixed() {
    let out = kvsim(&["list", "--json"]);
    let v = json(&out);
    let models = v["models"].as_array().unwrap();
    let fifo = models.iter().find(|m| m["model"] == "fifo").unwrap();
    assert_eq!(fifo["repairs"][0]["name"], "dequeue-next");
    assert!(fifo["repairs"][0]["fixes"].as_str().unwrap().len() > 10);
    assert_eq!(fifo["variants"], serde_json::json!(["published", "fixed"]));
    let entries = kvsim_models::registry::registry();
    let mut kinds = std::collections::BTreeSet::new();
    for (m, e) in models.iter().zip(&entries) {
        for (row, (_, x)) in m["scenarios"].as_array().unwrap().iter().zip(&e.scenarios) {
            match x.label {
                None => assert!(row["label"].is_null(), "{row}"),
                Some(l) => {
                    assert_eq!(row["label"]["kind"], l.name());
                    assert_eq!(row["label"]["reason"], l.reason());
                    kinds.insert(l.name());
                }
            }
        }
    }
    assert!(
        kinds.contains("impossible") && kinds.contains("not yet fixed"),
        "{kinds:?}"
    );
    let out = kvsim(&["list"]);
    let stdout = text(&out.stdout);
    assert!(stdout.contains("  repair dequeue-next: fixes "), "{stdout}");
    assert!(
        stdout.contains("fixed expected to fail: impossible: "),
        "{stdout}"
    );
    assert!(
        stdout.contains("fixed expected to fail: not yet fixed: "),
        "{stdout}"
    );
}

#[test]
fn the_matrix_rows_carry_the_fixed_variants_label() {
    let out = kvsim(&["check", "--runs", "1", "--no-shrink", "--json"]);
    let v = json(&out);
    let entries = kvsim_models::registry::registry();
    let mut labelled = 0;
    for row in v["results"].as_array().unwrap() {
        let target = row["target"].as_str().unwrap();
        let (model, variant) = target.split_once('/').unwrap();
        let e = entries.iter().find(|e| e.name == model).unwrap();
        let (_, x) = e
            .scenarios
            .iter()
            .find(|(s, _)| s.name == row["scenario"])
            .unwrap();
        match (variant, x.label) {
            ("fixed", Some(l)) => {
                labelled += 1;
                assert_eq!(row["label"], l.name());
                assert_eq!(row["label_reason"], l.reason());
                assert_eq!(row["expected"], "violation");
            }
            _ => assert!(
                row["label"].is_null() && row["label_reason"].is_null(),
                "{row}"
            ),
        }
    }
    assert!(labelled > 0);
}
