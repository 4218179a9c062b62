//! `kvsim check` through the binary: the gate's contract. Tuning flags tune each scenario
//! and keep its faults; degenerate scopes are usage errors; a check reports findings (each
//! defect once, with the faults its minimal run needs); schedules are fair without the
//! `pause` fault; a closed pipe ends the process quietly.

use kvsim_models::expect::{ExpectedVerdict, Variant};
use kvsim_models::registry::registry;
use serde_json::Value;
use std::io::{BufRead, BufReader};
use std::process::{Command, Output, Stdio};

mod cli;
use cli::{kvsim, text};

fn json(out: &Output) -> Value {
    serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("json output ({e}): {}", text(&out.stdout)))
}

#[test]
fn raising_runs_keeps_every_scenario_and_its_faults() {
    let out = kvsim(&[
        "check",
        "lock/published",
        "--runs",
        "300",
        "--json",
        "--no-shrink",
    ]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    let v = json(&out);
    let rows = v["results"].as_array().unwrap();
    let entries = registry();
    let lock = entries.iter().find(|e| e.name == "lock").unwrap();
    assert_eq!(
        rows.len(),
        lock.scenarios.len(),
        "one row per scenario of the model"
    );
    for ((s, _), row) in lock.scenarios.iter().zip(rows) {
        assert_eq!(row["scenario"], s.name.as_str());
        assert_eq!(row["faults"], s.faults.to_string().as_str(), "faults kept");
        assert_eq!(row["runs"], 300, "--runs applies to every scenario");
    }
}

#[test]
fn faults_replace_and_knobs_tune() {
    let out = kvsim(&[
        "check",
        "lock/fixed",
        "--scenario",
        "slow-holder",
        "--faults",
        "pause,crash",
        "--fault-budget",
        "2",
        "--fault-rate",
        "0.2",
        "--pause-ms",
        "100..200",
        "--starve-ms",
        "20",
        "--runs",
        "5",
        "--json",
    ]);
    let v = json(&out);
    let row = &v["results"][0];
    assert_eq!(row["faults"], "crash,pause");
    assert_eq!(row["fault_budget"], 2);
    assert_eq!(row["fault_rate"], 0.2);
    assert_eq!(row["pause_ms"], serde_json::json!([100, 200]));
    assert_eq!(row["starve_ms"], 20);
}

#[test]
fn every_published_variant_that_breaks_in_the_matrix_fails_its_tuned_gate() {
    for e in registry() {
        if !e
            .scenarios
            .iter()
            .any(|(_, x)| x.of(Variant::Published) == ExpectedVerdict::Violation)
        {
            continue;
        }
        let target = format!("{}/published", e.name);
        let out = kvsim(&["check", &target, "--runs", "500", "--no-shrink", "--json"]);
        assert_eq!(
            out.status.code(),
            Some(1),
            "{target} --runs 500: {}",
            text(&out.stdout)
        );
    }
}

#[test]
fn degenerate_scopes_and_out_of_range_numbers_are_usage_errors() {
    for (flags, says) in [
        (&["--runs", "0"][..], "--runs 0 checks nothing"),
        (&["--clients", "0"], "--clients 0 checks nothing"),
        (&["--ops", "0"], "--ops 0 checks nothing"),
        (&["--fault-budget", "0"], "--fault-budget 0 checks nothing"),
        (&["--fault-rate", "0"], "bad --fault-rate 0"),
        (&["--fault-rate", "1.5"], "bad --fault-rate 1.5"),
        (&["--pause-ms", "5..1"], "bad --pause-ms"),
        (&["--time-limit", "1e20"], "bad --time-limit"),
        (&["--time-limit", "NaN"], "bad --time-limit"),
        (&["--clients", "100000"], "--clients 100000 is too large"),
    ] {
        let mut args = vec!["check", "fifo/fixed"];
        args.extend_from_slice(flags);
        let out = kvsim(&args);
        let err = text(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{flags:?}: {err}");
        assert!(err.contains(says), "{flags:?}: {err}");
        assert!(!err.contains("panicked"), "{flags:?}: {err}");
    }
}

#[test]
fn a_fault_column_does_not_claim_a_defect_that_needs_no_fault() {
    // fifo/published loses its head without any fault; its restart scenario finds that
    // too. The finding says it needs no fault, and no finding claims a fault the minimal
    // run does not inject.
    let out = kvsim(&["check", "fifo/published", "--scenario", "restart", "--json"]);
    assert_eq!(out.status.code(), Some(1));
    let v = json(&out);
    let findings = v["results"][0]["findings"].as_array().unwrap();
    assert!(!findings.is_empty());
    assert!(
        findings
            .iter()
            .any(|f| f["faults"].as_array().unwrap().is_empty()),
        "the fault-free defect is reported as such: {findings:#?}"
    );
    for f in findings {
        assert_eq!(f["minimized"], true);
        for k in f["faults"].as_array().unwrap() {
            assert_eq!(k, "restart", "{f:#?}");
        }
        assert!(f["replay"]
            .as_str()
            .unwrap()
            .starts_with("fifo/published:restart:"));
    }
}

#[test]
fn a_defect_found_by_several_scenarios_is_listed_once() {
    let out = kvsim(&["check", "fifo/published", "--runs", "300"]);
    let stdout = text(&out.stdout);
    assert_eq!(out.status.code(), Some(1));
    let list: Vec<&str> = stdout
        .lines()
        .skip_while(|l| *l != "findings:")
        .skip(1)
        .take_while(|l| !l.is_empty())
        .collect();
    let no_fault: Vec<&&str> = list
        .iter()
        .filter(|l| l.contains("needs no fault"))
        .collect();
    assert!(!list.is_empty(), "{stdout}");
    // One line per (property, reason class) that needs no fault: the head-loss defect is
    // listed once, naming the scenarios that found it.
    let mut classes: Vec<String> = no_fault
        .iter()
        .map(|l| kvsim::reason_class(l.split(" · ").next().unwrap()))
        .collect();
    let n = classes.len();
    classes.dedup();
    assert_eq!(classes.len(), n, "{stdout}");
    assert!(
        no_fault.iter().any(|l| l.contains("scenarios ")),
        "{stdout}"
    );
}

#[test]
fn pct_without_faults_never_starves_the_lock_holder() {
    // Without the pause fault, no strategy may stall a runnable client for longer than the
    // fairness bound: the published lock (2 s expiry) is correct without faults, when its
    // critical sections take no time (`slow-work` breaks it with no fault at all).
    for target in ["lock/published", "array-locked/published"] {
        let out = kvsim(&[
            "check",
            target,
            "--strategy",
            "pct",
            "--faults",
            "none",
            "--work-ms",
            "0",
            "--runs",
            "300",
            "--no-shrink",
        ]);
        assert_eq!(
            out.status.code(),
            Some(0),
            "{target}: {}",
            text(&out.stdout)
        );
    }
    // With pauses, the same strategy finds the expiry defect.
    let out = kvsim(&[
        "check",
        "lock/published",
        "--scenario",
        "slow-holder",
        "--strategy",
        "pct",
        "--runs",
        "300",
        "--no-shrink",
    ]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stdout));
}

#[cfg(unix)]
#[test]
fn a_closed_pipe_ends_quietly() {
    use std::os::unix::process::ExitStatusExt;
    for args in [&["check", "fifo"][..], &["list"]] {
        let mut child = Command::new(env!("CARGO_BIN_EXE_kvsim"))
            .args(args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
        let _ = lines.next();
        drop(lines);
        let out = child.wait_with_output().unwrap();
        let err = text(&out.stderr);
        assert!(!err.contains("panicked"), "{args:?}: {err}");
        assert_ne!(out.status.code(), Some(101), "{args:?}");
        if out.status.code().is_none() {
            assert_eq!(out.status.signal(), Some(13), "SIGPIPE");
        }
    }
}

/// The progress finding of `target` under `scenario`, after replaying its token: a
/// lockout once faults stop, which needs `fault`.
fn lockout_finding(target: &str, scenario: &str, fault: &str) -> Value {
    let out = kvsim(&["check", target, "--scenario", scenario, "--json"]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    let v = json(&out);
    let findings = v["results"][0]["findings"].as_array().unwrap();
    let progress = findings
        .iter()
        .find(|f| f["property"] == "progress")
        .unwrap_or_else(|| panic!("a progress finding: {findings:#?}"))
        .clone();
    let reason = progress["reason"].as_str().unwrap();
    assert!(
        reason.contains("after the last fault ended") && reason.contains("GaveUp"),
        "{reason}"
    );
    assert_eq!(
        progress["faults"],
        serde_json::json!([fault]),
        "{progress:#?}"
    );
    // The counterexample replays: the same progress violation.
    let replay = kvsim(&["replay", progress["replay"].as_str().unwrap()]);
    assert_eq!(replay.status.code(), Some(1), "{}", text(&replay.stderr));
    assert!(
        text(&replay.stdout).contains("violation: progress"),
        "{}",
        text(&replay.stdout)
    );
    progress
}

#[test]
fn a_crashed_spin_lock_holder_locks_everyone_out_for_ever() {
    // The published spin lock has no expiry: a holder that crashes keeps it, and every
    // operation that starts afterwards gives up. So does the fixed one's owner token.
    lockout_finding("spinlock/published", "crash", "crash");
    lockout_finding("spinlock/fixed", "crash", "crash");
}

#[test]
fn a_lost_spin_lock_release_locks_everyone_out_for_ever() {
    // A lost `decr` request leaves the published lock taken with nobody inside.
    lockout_finding("spinlock/published", "lose-pause", "lose");
    // The fixed variant reads every timed-out command back: nothing is locked out.
    let out = kvsim(&[
        "check",
        "spinlock/fixed",
        "--scenario",
        "lose-pause",
        "--json",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stdout));
}

/// `proposed` is a variant only where the source proposes a fix: `kvsim check MODEL`
/// includes it there, and naming it for another model is a usage error that says which
/// variants the model has.
#[test]
fn a_proposed_variant_is_checked_where_the_source_proposes_one() {
    let out = kvsim(&["check", "visitor-counter", "--json", "--runs", "20"]);
    let v = json(&out);
    let targets: Vec<&str> = v["results"]
        .as_array()
        .expect("results")
        .iter()
        .filter_map(|r| r["target"].as_str())
        .collect();
    assert!(targets.contains(&"visitor-counter/proposed"), "{targets:?}");
    let out = kvsim(&["check", "fifo/proposed"]);
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("model \"fifo\" has no variant \"proposed\"")
            && err.contains("expected published or fixed"),
        "{err}"
    );
}

/// `--junit FILE`: valid XML with one test case per target × scenario; a violation is a
/// `<failure>` carrying the counterexample and its replay line, a passing check has none,
/// an `unknown` is an `<error>` (never a pass), and the counts agree with the cases.
#[test]
fn junit_has_one_case_per_cell_and_fails_what_the_gate_fails() {
    let dir = tempfile_dir("junit");
    let path = dir.join("kvsim.xml");
    let out = kvsim(&[
        "check",
        "fifo",
        "--scenario",
        "no-faults",
        "--runs",
        "40",
        "--junit",
        path.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    let xml = std::fs::read_to_string(&path).expect("the junit file");
    let doc = roxmltree::Document::parse(&xml).expect("well-formed XML");
    let root = doc.root_element();
    assert_eq!(root.tag_name().name(), "testsuites");
    let cases: Vec<_> = doc
        .descendants()
        .filter(|n| n.has_tag_name("testcase"))
        .collect();
    let cells: Vec<(&str, &str)> = cases
        .iter()
        .map(|c| {
            (
                c.attribute("classname").unwrap(),
                c.attribute("name").unwrap(),
            )
        })
        .collect();
    assert_eq!(
        cells,
        [("fifo/published", "no-faults"), ("fifo/fixed", "no-faults")]
    );
    assert_eq!(root.attribute("tests"), Some("2"));
    // The published queue's violation is the registry's expectation: skipped, not failed
    // (the gate still exits 1).
    assert_eq!(root.attribute("failures"), Some("0"));
    assert_eq!(root.attribute("errors"), Some("0"));
    assert_eq!(root.attribute("skipped"), Some("1"));
    assert!(!cases[0].children().any(|n| n.has_tag_name("failure")));
    let skipped = cases[0]
        .children()
        .find(|n| n.has_tag_name("skipped"))
        .expect("the published queue's expected violation");
    assert_eq!(skipped.attribute("type"), Some("expected violation"));
    assert!(skipped
        .attribute("message")
        .unwrap()
        .starts_with("expected violation"));
    let body = skipped.text().unwrap();
    assert!(
        body.contains("replay: kvsim replay fifo/published:no-faults:"),
        "{body}"
    );
    assert!(
        !cases[1]
            .children()
            .any(|n| n.has_tag_name("failure") || n.has_tag_name("error")),
        "the fixed queue passes"
    );

    // The JUnit file of `kvsim check ARGS --junit PATH`, which exits with `code`.
    let junit_of = |args: &[&str], code: i32| -> String {
        let mut a = args.to_vec();
        a.extend(["--junit", path.to_str().unwrap()]);
        let out = kvsim(&a);
        assert_eq!(out.status.code(), Some(code), "{}", text(&out.stderr));
        std::fs::read_to_string(&path).expect("the junit file")
    };
    // A violation no expectation covers (`--faults` replaces the scenario's) stays a
    // failure; a check stopped by its time limit is unknown: an error, not a pass.
    let unknown: &[&str] = &[
        "check",
        "fifo/fixed",
        "--scenario",
        "no-faults",
        "--runs",
        "100000000",
        "--time-limit",
        "0.2",
    ];
    let unexpected: &[&str] = &LOCK_UNDER_OTHER_FAULTS;
    for (args, code, tag, kind, counts) in [
        (unexpected, 1, "failure", "violation", ["1", "0", "0"]),
        (unknown, 3, "error", "unknown", ["0", "1", "0"]),
    ] {
        assert_eq!(
            first_of(&junit_of(args, code), tag),
            (kind.into(), counts.map(String::from)),
            "{args:?}"
        );
    }

    // A path that cannot be written is refused before anything runs.
    let out = kvsim(&["check", "fifo/fixed", "--junit", "/nonexistent-dir/x.xml"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("cannot write the junit file /nonexistent-dir/x.xml"));
    assert!(!text(&out.stdout).contains("kvsim check ·"), "nothing ran");
}

/// A gate whose `--faults` replace the scenario's: the registry expects nothing of it (the
/// fixed lock fails it).
const LOCK_UNDER_OTHER_FAULTS: [&str; 6] = [
    "check",
    "lock/fixed",
    "--scenario",
    "no-faults",
    "--faults",
    "evict",
];

/// The type of the first `<TAG>` of a JUnit document, and its failures, errors and
/// skipped cases.
fn first_of(xml: &str, tag: &str) -> (String, [String; 3]) {
    let doc = roxmltree::Document::parse(xml).expect("well-formed XML");
    let first = doc
        .descendants()
        .find(|n| n.has_tag_name(tag))
        .unwrap_or_else(|| panic!("no <{tag}>: {xml}"));
    let root = doc.root_element();
    let count = |a: &str| root.attribute(a).unwrap_or("none").to_string();
    (
        first.attribute("type").unwrap_or_default().to_string(),
        [count("failures"), count("errors"), count("skipped")],
    )
}

fn tempfile_dir(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("kvsim-test-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a temp dir");
    dir
}

/// `--shard I/N` then `kvsim merge`: the same verdicts, runs and findings as the check
/// run whole with the same seed; anything but every shard of one check is an error.
#[test]
fn shards_merge_into_the_whole_checks_findings() {
    let dir = tempfile_dir("shards");
    let check = |extra: &[&str]| {
        let mut a = vec![
            "check",
            "fifo",
            "--scenario",
            "no-faults",
            "--runs",
            "60",
            "--json",
        ];
        a.extend_from_slice(extra);
        kvsim(&a)
    };
    let whole = check(&[]);
    assert_eq!(whole.status.code(), Some(1));
    let mut files = Vec::new();
    for i in 1..=4 {
        let out = check(&["--shard", &format!("{i}/4")]);
        assert_eq!(json(&out)["shard"], format!("{i}/4"));
        let f = dir.join(format!("shard{i}.json"));
        std::fs::write(&f, &out.stdout).unwrap();
        files.push(f.to_str().unwrap().to_string());
    }
    let mut args = vec!["merge", "--json"];
    args.extend(files.iter().map(String::as_str));
    let merged = kvsim(&args);
    assert_eq!(merged.status.code(), Some(1), "{}", text(&merged.stderr));
    let cells = |v: &Value| -> Vec<Value> {
        v["results"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| {
                let findings: Vec<Value> = r["findings"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|f| serde_json::json!([f["property"], f["class"], f["faults"], f["runs"]]))
                    .collect();
                serde_json::json!([
                    r["target"],
                    r["scenario"],
                    r["verdict"],
                    r["runs"],
                    r["violating_runs"],
                    findings
                ])
            })
            .collect()
    };
    assert_eq!(cells(&json(&merged)), cells(&json(&whole)));

    // The merge job writes the JUnit file the shards could not: one case per cell, the
    // published queue's expected failure (skipped, as `kvsim check` marks it) carrying
    // its counterexample replayed from the token.
    let xml_path = dir.join("merged.xml");
    let mut args = vec!["merge", "--junit", xml_path.to_str().unwrap()];
    args.extend(files.iter().map(String::as_str));
    assert_eq!(kvsim(&args).status.code(), Some(1));
    let xml = std::fs::read_to_string(&xml_path).expect("the junit file");
    let doc = roxmltree::Document::parse(&xml).expect("well-formed XML");
    let cases: Vec<_> = doc
        .descendants()
        .filter(|n| n.has_tag_name("testcase"))
        .map(|c| {
            let failure = c.children().find(|n| n.has_tag_name("skipped"));
            (
                c.attribute("classname").unwrap().to_string(),
                failure
                    .and_then(|f| f.text())
                    .unwrap_or_default()
                    .to_string(),
            )
        })
        .collect();
    assert_eq!(cases.len(), 2, "{xml}");
    assert_eq!(cases[0].0, "fifo/published");
    assert!(
        cases[0].1.contains("linearizability")
            && cases[0]
                .1
                .contains("replay: kvsim replay fifo/published:no-faults:"),
        "{xml}"
    );
    assert_eq!(
        (cases[1].0.as_str(), cases[1].1.as_str()),
        ("fifo/fixed", "")
    );
    assert_eq!(doc.root_element().attribute("failures"), Some("0"));
    assert_eq!(doc.root_element().attribute("skipped"), Some("1"));
    let merged_rows = json(&merged);
    assert_eq!(merged_rows["results"][0]["expected_failure"], true);
    assert_eq!(merged_rows["results"][0]["as_expected"], true);
    assert_eq!(merged_rows["results"][1]["expected_failure"], false);
    let text_out = kvsim(&{
        let mut a = vec!["merge"];
        a.extend(files.iter().map(String::as_str));
        a
    });
    let shown = text(&text_out.stdout);
    assert!(shown.contains("violation · expected"), "{shown}");
    assert!(
        shown.contains("1 of 2 verdicts are expected failures (0 impossible, 0 not yet fixed, 1 published defects); 0 unexpected"),
        "{shown}"
    );

    // Not every shard, a shard twice, shards of another seed: errors, never a verdict.
    let run = |files: &[&str]| {
        let mut a = vec!["merge"];
        a.extend_from_slice(files);
        kvsim(&a)
    };
    let out = run(&[&files[0], &files[1], &files[3]]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("missing 3/4"),
        "{}",
        text(&out.stderr)
    );
    let out = run(&[&files[0], &files[1], &files[2], &files[2]]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("shard 3/4 given twice"),
        "{}",
        text(&out.stderr)
    );
    let other = check(&["--shard", "4/4", "--seed", "2"]);
    let f = dir.join("other-seed.json");
    std::fs::write(&f, &other.stdout).unwrap();
    let out = run(&[&files[0], &files[1], &files[2], f.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("not one check"),
        "{}",
        text(&out.stderr)
    );
    let out = kvsim(&["check", "fifo/fixed", "--shard", "5/4"]);
    assert_eq!(out.status.code(), Some(2));

    // More shards than runs: an empty shard is unknown on its own, and says nothing in
    // the merge, which is the whole check's ok.
    let mut files = Vec::new();
    for i in 1..=3 {
        let shard = format!("{i}/3");
        let a = [
            "check",
            "fifo/fixed",
            "--scenario",
            "no-faults",
            "--runs",
            "2",
            "--json",
            "--shard",
            &shard,
        ];
        let out = kvsim(&a);
        assert_eq!(
            out.status.code(),
            Some(if i == 3 { 3 } else { 0 }),
            "{shard}"
        );
        let f = dir.join(format!("small{i}.json"));
        std::fs::write(&f, &out.stdout).unwrap();
        files.push(f.to_str().unwrap().to_string());
    }
    let mut args = vec!["merge"];
    args.extend(files.iter().map(String::as_str));
    let out = kvsim(&args);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stdout));
}

/// `--time-budget`: each scenario does as many runs as fit in its share (more than its
/// planned 300 here: the lock's fault-free scenario makes thousands a second), a floor it
/// cannot reach is `unknown` (exit 3) with the reason, a violation stays one, and the
/// budget and a per-scenario time limit are not both taken.
#[test]
fn a_time_budget_does_the_runs_that_fit_and_never_passes_below_its_floor() {
    let check = |extra: &[&str]| {
        let mut a = vec!["check", "lock/fixed", "--scenario", "no-faults", "--json"];
        a.extend_from_slice(extra);
        kvsim(&a)
    };
    let out = check(&["--time-budget", "1"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stdout));
    let row = &json(&out)["results"][0];
    assert_eq!(row["verdict"], "ok");
    assert!(row["runs"].as_u64().unwrap() > 300, "{row}");
    let out = check(&["--time-budget", "0.05", "--min-runs", "100000000"]);
    assert_eq!(out.status.code(), Some(3), "{}", text(&out.stdout));
    let row = &json(&out)["results"][0];
    assert_eq!(row["verdict"], "unknown");
    let reason = row["reason"].as_str().unwrap();
    assert!(
        reason.contains("fewer than the 100000000 required"),
        "{reason}"
    );
    // `--runs` caps the runs under a budget.
    let out = check(&["--time-budget", "1", "--runs", "7"]);
    assert_eq!(json(&out)["results"][0]["runs"], 7);
    // A violation found within the budget is reported as ever.
    let out = kvsim(&[
        "check",
        "lock/published",
        "--scenario",
        "evict",
        "--time-budget",
        "1",
        "--no-shrink",
    ]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stdout));
    let out = check(&["--time-budget", "1", "--time-limit", "1"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("--time-limit"),
        "{}",
        text(&out.stderr)
    );
}

/// `--corpus DIR`: a check saves each finding's token there; the next check replays them
/// first, so a single run that passes on its own still fails the gate with the saved
/// failures; an entry that is not a token is an error naming it, which `kvsim corpus
/// prune` removes; `kvsim corpus list` says what each entry gives now.
#[test]
fn a_saved_failure_is_replayed_first_by_the_next_check() {
    let dir = tempfile_dir("corpus").join("corpus");
    let _ = std::fs::remove_dir_all(&dir);
    let corpus = dir.to_str().unwrap();
    let check = |extra: &[&str]| {
        let mut a = vec!["check", "lock/published", "--scenario", "evict", "--json"];
        a.extend_from_slice(extra);
        kvsim(&a)
    };
    // Seed 5's one run passes on its own.
    let alone = check(&["--runs", "1", "--seed", "5"]);
    assert_eq!(alone.status.code(), Some(0), "{}", text(&alone.stdout));
    let first = check(&["--corpus", corpus]);
    assert_eq!(first.status.code(), Some(1));
    let first = json(&first);
    let saved = first["corpus"]["saved"].as_u64().unwrap();
    assert!(saved >= 1, "{}", first["corpus"]);
    let tokens: Vec<String> = first["results"][0]["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["replay"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(tokens.len() as u64, saved);
    let again = check(&["--runs", "1", "--seed", "5", "--corpus", corpus]);
    assert_eq!(again.status.code(), Some(1), "{}", text(&again.stdout));
    let again = json(&again);
    assert_eq!(again["corpus"]["replayed"], saved);
    assert_eq!(again["corpus"]["still_failing"], saved);
    assert_eq!(again["corpus"]["saved"], 0, "nothing new");
    assert_eq!(again["results"][0]["verdict"], "violation");
    for f in again["results"][0]["findings"].as_array().unwrap() {
        assert!(
            tokens.contains(&f["replay"].as_str().unwrap().to_string()),
            "{f}"
        );
    }
    // Another scenario's check replays none of them.
    let other = kvsim(&[
        "check",
        "lock/published",
        "--scenario",
        "no-faults",
        "--runs",
        "5",
        "--json",
        "--corpus",
        corpus,
    ]);
    assert_eq!(other.status.code(), Some(0));
    assert_eq!(json(&other)["corpus"]["replayed"], 0);
    let list = kvsim(&["corpus", "list", corpus]);
    assert_eq!(list.status.code(), Some(0));
    assert_eq!(
        text(&list.stdout).matches("still fails").count() as u64,
        saved
    );
    std::fs::write(dir.join("bad.token"), "garbage\n").unwrap();
    let broken = check(&["--corpus", corpus]);
    assert_eq!(broken.status.code(), Some(2));
    let err = text(&broken.stderr);
    assert!(err.contains("bad.token") && err.contains("prune"), "{err}");
    let prune = kvsim(&["corpus", "prune", corpus]);
    assert_eq!(prune.status.code(), Some(0));
    assert!(
        text(&prune.stdout).contains("removed bad.token"),
        "{}",
        text(&prune.stdout)
    );
    assert!(!dir.join("bad.token").exists());
    assert_eq!(std::fs::read_dir(&dir).unwrap().count() as u64, saved);
}

/// `kvsim merge` merges only the shards of one check: each shard's JSON carries the
/// check's identity (kvsim's version, targets, scenario, seed, budget, shrinking, corpus,
/// and per target × scenario its planned runs and every knob of its configuration) and
/// the identity's digest (FNV-1a 64 of its canonical JSON); a shard of another check, a
/// file whose identity was edited, and counts that cannot be are errors naming what is
/// wrong, never a verdict.
#[test]
fn merge_refuses_shards_of_another_check_and_counts_that_cannot_be() {
    let dir = tempfile_dir("identity");
    let corpus = dir.join("corpus");
    let base = [
        "check",
        "counter/fixed",
        "--scenario",
        "crash-lose",
        "--seed",
        "1",
        "--runs",
        "20",
        "--json",
    ];
    // `base` with each `--flag value` of `changes` replacing the flag's value (or added),
    // and a target given as a change replacing the target.
    let shard = |name: &str, i: u32, changes: &[&str]| -> String {
        let mut args: Vec<String> = base.iter().map(|s| s.to_string()).collect();
        let mut k = 0;
        while k < changes.len() {
            let c = changes[k];
            if !c.starts_with("--") {
                args[1] = c.to_string();
                k += 1;
                continue;
            }
            let value = changes
                .get(k + 1)
                .filter(|v| !v.starts_with("--") || v.parse::<f64>().is_ok());
            match (args.iter().position(|a| a == c), value) {
                (Some(p), Some(v)) => args[p + 1] = v.to_string(),
                (None, Some(v)) => args.extend([c.to_string(), v.to_string()]),
                (_, None) => args.push(c.to_string()),
            }
            k += 1 + usize::from(value.is_some());
        }
        args.extend(["--shard".to_string(), format!("{i}/2")]);
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let out = kvsim(&args);
        assert!(
            [0, 1, 3].contains(&out.status.code().unwrap_or(-1)),
            "{args:?}: {}",
            text(&out.stderr)
        );
        let f = dir.join(format!("{name}.json"));
        std::fs::write(&f, &out.stdout).unwrap();
        f.to_str().unwrap().to_string()
    };
    let merge = |files: &[&str]| {
        let mut a = vec!["merge", "--json"];
        a.extend_from_slice(files);
        kvsim(&a)
    };
    let one = shard("shard-1", 1, &[]);
    let two = shard("shard-2", 2, &[]);

    // The happy path: one check's shards merge, and the merge carries their identity.
    let merged = merge(&[&one, &two]);
    assert_eq!(merged.status.code(), Some(0), "{}", text(&merged.stderr));
    let shard_one: Value = serde_json::from_str(&std::fs::read_to_string(&one).unwrap()).unwrap();
    let merged = json(&merged);
    assert_eq!(merged["results"][0]["runs"], 20);
    assert_eq!(merged["identity"], shard_one["identity"]);
    assert_eq!(merged["identity_digest"], shard_one["identity_digest"]);
    // The digest is FNV-1a 64 of the identity's canonical JSON (keys sorted, compact).
    let fnv = |text: &str| {
        let h = text.bytes().fold(0xcbf2_9ce4_8422_2325_u64, |h, b| {
            (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3)
        });
        format!("{h:016x}")
    };
    assert_eq!(
        shard_one["identity_digest"],
        fnv(&shard_one["identity"].to_string())
    );
    let identity = &shard_one["identity"];
    assert_eq!(identity["kvsim"], env!("CARGO_PKG_VERSION"));
    assert_eq!(identity["checks"][0]["planned_runs"], 20);
    assert_eq!(identity["checks"][0]["config"]["ops"], 5);

    // Every knob differing in turn: the merge names the field and both values.
    let corpus = corpus.to_str().unwrap();
    let knobs: &[(&[&str], &str)] = &[
        (&["counter/published"], "targets"),
        (&["--scenario", "no-faults"], "scenario"),
        (&["--seed", "2"], "seed"),
        (
            &["--clients", "1"],
            "clients is 1 in counter/fixed crash-lose, where",
        ),
        (
            &["--ops", "1"],
            "ops is 1 in counter/fixed crash-lose, where",
        ),
        (&["--faults", "none"], "faults"),
        (&["--fault-budget", "7"], "fault_budget is 7"),
        (&["--fault-rate", "0.5"], "fault_probability is 0.5"),
        (&["--pause-ms", "10..20"], "pause_ms is [10,20]"),
        (&["--delay-ms", "10..20"], "delay_ms is [10,20]"),
        (&["--work-ms", "1..2"], "work_ms is [1,2]"),
        (&["--timeout-ms", "7"], "timeout_ms is 7"),
        (&["--retries", "4"], "retries is 4"),
        (&["--memory-limit", "5000"], "memory_limit is 5000"),
        (&["--neighbour-bytes", "10"], "neighbour_bytes is 10"),
        (&["--starve-ms", "20"], "starve_ms is 20"),
        (&["--strategy", "pct"], "strategy"),
        (&["--runs", "21"], "planned_runs is 21"),
        (&["--time-limit", "100"], "budget.time_limit_secs is 100"),
        (&["--time-budget", "0.3"], "budget.mode is \"time\""),
        (&["--no-shrink"], "shrink is false"),
        (&["--corpus", corpus], "corpus is true"),
    ];
    for (changes, field) in knobs {
        let other = shard("other", 2, changes);
        let out = merge(&[&one, &other]);
        let err = text(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{changes:?}: {err}");
        assert!(
            err.contains(field) && err.contains("shard-1.json") && err.contains("one check"),
            "{changes:?}: expected {field:?} in: {err}"
        );
    }
    // Two time budgets that differ in their floor or length.
    let budget = ["--time-budget", "0.3", "--min-runs", "1"];
    let b1 = shard("budget-1", 1, &budget);
    for (changes, field) in [
        (
            ["--time-budget", "0.3", "--min-runs", "2"],
            "budget.min_runs is 2",
        ),
        (
            ["--time-budget", "0.4", "--min-runs", "1"],
            "budget.time_budget_secs is 0.4",
        ),
    ] {
        let b2 = shard("budget-2", 2, &changes);
        let out = merge(&[&b1, &b2]);
        let err = text(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{err}");
        assert!(err.contains(field), "expected {field:?} in: {err}");
    }

    // Edited files. `edit` changes shard 2's JSON and writes it as a file of its own.
    let edit = |name: &str, change: &dyn Fn(&mut Value)| {
        let mut v: Value = serde_json::from_str(&std::fs::read_to_string(&two).unwrap()).unwrap();
        change(&mut v);
        let f = dir.join(format!("{name}.json"));
        std::fs::write(&f, v.to_string()).unwrap();
        f.to_str().unwrap().to_string()
    };
    let refused = |file: &str, expected: &str| {
        let out = merge(&[&one, file]);
        let err = text(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{expected}: {err}");
        assert!(err.contains(expected), "expected {expected:?} in: {err}");
    };
    // An identity edited without its digest: the file was edited.
    let f = edit("edited-identity", &|v| {
        v["identity"]["checks"][0]["config"]["ops"] = 1.into()
    });
    refused(&f, "was edited");
    // Edited with the digest recomputed: another check (another kvsim version, too).
    let f = edit("edited-ops", &|v| {
        v["identity"]["checks"][0]["config"]["ops"] = 1.into();
        v["identity_digest"] = fnv(&v["identity"].to_string()).into();
    });
    refused(&f, "ops is 1 in counter/fixed crash-lose, where");
    let f = edit("other-version", &|v| {
        v["identity"]["kvsim"] = "0.0.1".into();
        v["identity_digest"] = fnv(&v["identity"].to_string()).into();
    });
    refused(&f, "kvsim is \"0.0.1\", where");
    let f = edit("no-identity", &|v| {
        v.as_object_mut().unwrap().remove("identity");
    });
    refused(&f, "expected the check's identity");
    // Counts that cannot be.
    let f = edit("negative", &|v| v["results"][0]["runs"] = (-5).into());
    refused(&f, "runs is -5: expected a whole number from 0 to 10");
    let f = edit("fraction", &|v| v["results"][0]["runs"] = 2.5.into());
    refused(&f, "runs is 2.5");
    let f = edit("too-many", &|v| v["results"][0]["runs"] = 11.into());
    refused(&f, "runs is 11: expected a whole number from 0 to 10");
    let f = edit("violating", &|v| {
        v["results"][0]["violating_runs"] = 11.into()
    });
    refused(&f, "violating_runs is 11");
    let f = edit("verdict", &|v| v["results"][0]["verdict"] = "fine".into());
    refused(
        &f,
        "verdict is \"fine\": expected one of ok, violation, unknown",
    );
    let f = edit("finding", &|v| {
        v["results"][0]["findings"] = serde_json::json!([{"property": "p", "class": "c",
            "faults": [], "runs": 11, "replay": "x"}]);
    });
    refused(&f, "finding 1's runs is 11");
    let f = edit("cell", &|v| {
        v["results"][0]["scenario"] = "no-faults".into()
    });
    refused(&f, "not of the check it names");
}

/// A corpus directory holds only `*.token` entries (dotfiles and README files aside):
/// any other file or a subdirectory stops `check --corpus` with its name (exit 2), never
/// silently; `corpus list` shows it, and `corpus prune` names it (exit 2) and leaves it,
/// since it may be someone's file.
#[test]
fn a_file_in_the_corpus_that_is_not_an_entry_stops_the_check_with_its_name() {
    let dir = tempfile_dir("stray").join("corpus");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let corpus = dir.to_str().unwrap();
    let check = || {
        kvsim(&[
            "check",
            "fifo/fixed",
            "--scenario",
            "no-faults",
            "--runs",
            "2",
            "--corpus",
            corpus,
        ])
    };
    std::fs::write(dir.join(".gitkeep"), "").unwrap();
    std::fs::write(dir.join("README.md"), "past failures of our gate\n").unwrap();
    let out = check();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let list = kvsim(&["corpus", "list", corpus]);
    assert_eq!(list.status.code(), Some(0));
    assert!(
        text(&list.stdout).contains("0 entries\n"),
        "{}",
        text(&list.stdout)
    );

    std::fs::write(dir.join("notes.txt"), "a note\n").unwrap();
    let out = check();
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("notes.txt: not a corpus entry") && err.contains("*.token"),
        "{err}"
    );
    assert!(!text(&out.stdout).contains("kvsim check ·"), "nothing ran");
    let list = kvsim(&["corpus", "list", corpus]);
    assert_eq!(list.status.code(), Some(0));
    assert!(
        text(&list.stdout).contains("notes.txt  unreadable: not a corpus entry"),
        "{}",
        text(&list.stdout)
    );
    let prune = kvsim(&["corpus", "prune", corpus]);
    assert_eq!(prune.status.code(), Some(2));
    assert!(
        text(&prune.stderr).contains("notes.txt: not a corpus entry"),
        "{}",
        text(&prune.stderr)
    );
    assert!(
        dir.join("notes.txt").exists(),
        "prune leaves what is not an entry"
    );
    std::fs::remove_file(dir.join("notes.txt")).unwrap();

    // A subdirectory, even one named like an entry, is not one either.
    std::fs::create_dir_all(dir.join("old")).unwrap();
    let err = text(&check().stderr);
    assert!(err.contains("old: not a corpus entry"), "{err}");
    std::fs::remove_dir(dir.join("old")).unwrap();
    std::fs::create_dir_all(dir.join("x.token")).unwrap();
    let out = check();
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("x.token: expected a file"), "{err}");
}

/// The table's verdict cells, times masked (they vary), from the header on, and the
/// closing lines.
fn marked_table(stdout: &str) -> String {
    let mut lines = Vec::new();
    for line in stdout.lines() {
        if line.starts_with("probes") || line.starts_with("findings:") {
            break;
        }
        let masked: Vec<String> = line
            .split(' ')
            .map(|w| match w.strip_suffix("ms") {
                // Right-aligned in its column: the same width keeps the line's.
                Some(n) if !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()) => {
                    format!("{:>1$}", "?ms", w.len())
                }
                _ => w.to_string(),
            })
            .collect();
        // The replay token is the finding's (pinned elsewhere): only its target here.
        let masked = masked.join(" ");
        let cut = masked
            .find("kvsim replay ")
            .map_or(masked.as_str(), |i| &masked[..i + "kvsim replay".len()]);
        lines.push(cut.trim_end().to_string());
    }
    let tail: Vec<&str> = stdout.lines().rev().take_while(|l| !l.is_empty()).collect();
    lines.push("…".into());
    lines.extend(tail.into_iter().rev().map(str::to_string));
    lines.join("\n")
}

#[test]
fn a_gate_marks_every_violation_the_registry_expects_with_its_label() {
    let out = kvsim(&["check", "lock/fixed"]);
    assert_eq!(
        out.status.code(),
        Some(1),
        "a gate fails on every violation"
    );
    let stdout = text(&out.stdout);
    insta::assert_snapshot!(marked_table(&stdout));

    let out = kvsim(&["check", "lock/fixed", "--scenario", "evict", "--json"]);
    assert_eq!(out.status.code(), Some(1));
    let row = &json(&out)["results"][0];
    assert_eq!(row["verdict"], "violation");
    assert_eq!(row["expected"], Value::Null, "a gate compares nothing");
    assert_eq!(row["matches"], Value::Null);
    assert_eq!(row["expected_verdict"], "violation");
    assert_eq!(row["as_expected"], true);
    assert_eq!(row["expected_failure"], true);
    assert_eq!(row["label"], "impossible");
    assert!(row["label_reason"].as_str().unwrap().contains("evicted"));

    let out = kvsim(&["check", "lock/fixed", "--scenario", "no-faults", "--json"]);
    assert_eq!(out.status.code(), Some(0));
    let row = &json(&out)["results"][0];
    assert_eq!(row["expected_verdict"], "pass");
    assert_eq!(row["as_expected"], true);
    assert_eq!(row["expected_failure"], false);
    assert_eq!(row["label"], Value::Null);

    // `--faults` makes another scenario: no expectation, an unmarked violation.
    let out = kvsim(&[&LOCK_UNDER_OTHER_FAULTS[..], &["--json"]].concat());
    assert_eq!(out.status.code(), Some(1));
    let row = &json(&out)["results"][0];
    assert_eq!(row["verdict"], "violation");
    assert_eq!(row["expected_verdict"], Value::Null);
    assert_eq!(row["as_expected"], Value::Null);
    assert_eq!(row["expected_failure"], false);
}
