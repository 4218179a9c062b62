//! An unwritable stdout: every command stops with exit 2 and `kvsim: cannot write output:
//! …` on stderr, never a panic (exit 101) and never a verdict whose report was lost.

use std::path::PathBuf;
use std::process::{Command, Output, Stdio};

mod cli;
use cli::{kvsim, text};

/// Runs `kvsim ARGS…` with stdout opened on /dev/full (every write fails with ENOSPC).
fn to_full(args: &[&str]) -> Output {
    let full = std::fs::OpenOptions::new()
        .write(true)
        .open("/dev/full")
        .expect("/dev/full opens for writing");
    Command::new(env!("CARGO_BIN_EXE_kvsim"))
        .args(args)
        .stdout(Stdio::from(full))
        .output()
        .expect("kvsim runs")
}

fn dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("kvsim-output-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).expect("a temp dir");
    d
}

fn assert_output_error(args: &[&str]) {
    let out = to_full(args);
    let err = text(&out.stderr);
    assert_eq!(
        out.status.code(),
        Some(2),
        "kvsim {}: expected exit 2, stderr: {err}",
        args.join(" ")
    );
    assert!(
        err.contains("kvsim: cannot write output: No space left on device"),
        "kvsim {}: {err}",
        args.join(" ")
    );
    assert!(!err.contains("panicked"), "kvsim {}: {err}", args.join(" "));
}

#[test]
fn every_command_with_an_unwritable_stdout_is_an_error() {
    let d = dir("all");
    // A token to replay, a trace, a history, a corpus and two shards to merge.
    let check = kvsim(&[
        "check",
        "lock/published",
        "--scenario",
        "evict",
        "--runs",
        "40",
        "--json",
        "--corpus",
        d.join("corpus").to_str().unwrap(),
    ]);
    assert_eq!(check.status.code(), Some(1), "{}", text(&check.stderr));
    let found: serde_json::Value = serde_json::from_slice(&check.stdout).unwrap();
    let token = found["results"][0]["replay"].as_str().unwrap().to_string();
    let trace = d.join("t.jsonl");
    std::fs::write(
        &trace,
        "{\"t_ms\":0,\"conn\":0,\"kind\":\"connect\",\"text\":\"127.0.0.1:5000\"}\n\
         {\"t_ms\":1,\"conn\":0,\"kind\":\"command\",\"text\":\"get k\"}\n",
    )
    .unwrap();
    let history = d.join("h.jsonl");
    std::fs::write(
        &history,
        "{\"process\": 0, \"type\": \"invoke\", \"f\": \"write\", \"value\": 1}\n\
         {\"process\": 0, \"type\": \"ok\", \"f\": \"write\", \"value\": 1}\n",
    )
    .unwrap();
    let mut shards = Vec::new();
    for i in 1..=2 {
        let shard = format!("{i}/2");
        let out = kvsim(&[
            "check",
            "fifo/fixed",
            "--scenario",
            "no-faults",
            "--runs",
            "4",
            "--json",
            "--shard",
            &shard,
        ]);
        assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
        let f = d.join(format!("shard{i}.json"));
        std::fs::write(&f, &out.stdout).unwrap();
        shards.push(f.to_str().unwrap().to_string());
    }
    let tiny = [
        "check",
        "fifo/fixed",
        "--scenario",
        "no-faults",
        "--runs",
        "2",
    ];
    let corpus = d.join("corpus");
    let commands: Vec<Vec<&str>> = vec![
        vec!["--help"],
        vec!["--version"],
        vec!["check", "--help"],
        vec!["list"],
        vec!["list", "--json"],
        tiny.to_vec(),
        [&tiny[..], &["--json"]].concat(),
        vec!["check", "--runs", "1"],
        vec!["replay", &token],
        vec!["replay", "--json", &token],
        vec!["trace", trace.to_str().unwrap()],
        vec!["corpus", "list", corpus.to_str().unwrap()],
        vec![
            "check-history",
            "--spec",
            "register",
            history.to_str().unwrap(),
        ],
        vec![
            "check-history",
            "--spec",
            "register",
            "--json",
            history.to_str().unwrap(),
        ],
        vec!["merge", &shards[0], &shards[1]],
        vec!["merge", "--json", &shards[0], &shards[1]],
        vec![
            "explore",
            "counter/fixed",
            "--clients",
            "1",
            "--ops",
            "1",
            "--faults",
            "none",
        ],
    ];
    for args in &commands {
        assert_output_error(args);
    }
    // `corpus prune` prints what it removed: the removal happened, and the report of it
    // is lost, which is an error too.
    let prune_dir = d.join("prune");
    std::fs::create_dir_all(&prune_dir).unwrap();
    std::fs::write(prune_dir.join("stale.token"), "garbage\n").unwrap();
    assert_output_error(&["corpus", "prune", prune_dir.to_str().unwrap()]);
}
