//! `reports/` is current (regenerated, it is byte-identical to what is committed), every
//! counterexample in it is minimal, and the text report of one counterexample per model is
//! pinned by a snapshot.

use kvsim::harness::shrink;
use kvsim::sim::Token;
use kvsim_models::registry::{self, registry};
use kvsim_models::reports::{self as report, default_dir, files, matrices};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Every file under `dir`, relative path → contents.
fn read_tree(dir: &Path) -> BTreeMap<PathBuf, String> {
    fn walk(root: &Path, dir: &Path, out: &mut BTreeMap<PathBuf, String>) {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        for e in entries {
            let path = e.expect("a readable directory entry").path();
            if path.is_dir() {
                walk(root, &path, out);
            } else {
                let rel = path.strip_prefix(root).expect("under root").to_path_buf();
                let text = std::fs::read_to_string(&path).expect("a text file");
                out.insert(rel, text);
            }
        }
    }
    let mut out = BTreeMap::new();
    walk(dir, dir, &mut out);
    out
}

fn threads() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

#[test]
fn committed_reports_are_current() {
    let ms = matrices(threads());
    // A fault's cell shows a counterexample only when its minimal form needs that fault;
    // the `none` cell's needs none.
    for m in &ms {
        for c in &m.cells {
            let Some(r) = &c.counterexample else { continue };
            let needs = kvsim::harness::findings::faults_of(r);
            match c.profile {
                report::Profile::NoFaults | report::Profile::SlowWork => {
                    assert!(needs.is_empty(), "{}/{}: {needs:?}", m.model, c.stem())
                }
                report::Profile::Only(kind) => {
                    assert!(needs.contains(&kind), "{}/{}: {needs:?}", m.model, c.stem())
                }
            }
        }
    }
    let fresh: BTreeMap<PathBuf, String> = files(&ms).into_iter().collect();
    let committed = read_tree(&default_dir());
    let mut problems = Vec::new();
    for (path, text) in &fresh {
        match committed.get(path) {
            None => problems.push(format!("missing: reports/{}", path.display())),
            Some(old) if old != text => {
                problems.push(format!("differs: reports/{}", path.display()))
            }
            Some(_) => {}
        }
    }
    for path in committed.keys() {
        if !fresh.contains_key(path) {
            problems.push(format!(
                "stale (no longer generated): reports/{}",
                path.display()
            ));
        }
    }
    assert!(
        problems.is_empty(),
        "reports/ is out of date; regenerate it with `cargo run --release -- report`:\n  {}",
        problems.join("\n  ")
    );
}

/// The committed counterexamples: (model, file stem, text).
fn counterexamples() -> Vec<(String, String, String)> {
    let mut out = Vec::new();
    for (path, text) in read_tree(&default_dir()) {
        if path.extension().is_some_and(|e| e == "txt") {
            let model = path
                .parent()
                .expect("in a model directory")
                .display()
                .to_string();
            let stem = path
                .file_stem()
                .expect("a name")
                .to_string_lossy()
                .to_string();
            out.push((model, stem, text));
        }
    }
    out
}

fn token_of(text: &str) -> String {
    text.lines()
        .find_map(|l| l.trim().strip_prefix("replay: kvsim replay "))
        .expect("every report ends with its replay command")
        .to_string()
}

#[test]
fn every_committed_counterexample_is_minimal() {
    let entries = registry();
    let mut failures = Vec::new();
    let all = counterexamples();
    assert!(
        entries.is_empty() || !all.is_empty(),
        "models are registered but reports/ holds no counterexample"
    );
    for (model, stem, text) in &all {
        let token = Token::decode(&token_of(text)).expect("a valid token");
        let (index, variants) = registry::resolve(&entries, &token.target).expect("a known target");
        let target = entries[index].target(variants[0]);
        let run = target.run(
            &token.scenario,
            &token.config,
            token.seed,
            token.choices.as_deref(),
        );
        assert!(
            run.verdict.is_violation(),
            "{model}/{stem}: {}",
            run.verdict
        );
        if let Err(e) = shrink::is_minimal(target, &run, &report::shrink_limits()) {
            failures.push(format!("{model}/{stem}: {e}"));
        }
    }
    assert!(
        failures.is_empty(),
        "not minimal:\n  {}",
        failures.join("\n  ")
    );
}

#[test]
fn every_committed_counterexample_fits_in_100_columns() {
    for (model, stem, text) in counterexamples() {
        for line in text.lines() {
            // The replay token is one word: it is never cut.
            if line.trim_start().starts_with("replay: ") {
                continue;
            }
            assert!(
                line.chars().count() <= kvsim::report::WIDTH,
                "{model}/{stem}: {} columns: {line}",
                line.chars().count()
            );
        }
    }
}

#[test]
fn one_counterexample_per_model_reads_like_this() {
    let mut seen = std::collections::BTreeSet::new();
    for (model, stem, text) in counterexamples() {
        if seen.insert(model.clone()) {
            insta::assert_snapshot!(model.clone(), text, &format!("{model}/{stem}"));
        }
    }
}

#[test]
fn writing_replaces_a_model_directory_and_keeps_the_rest() {
    let dir = std::env::temp_dir().join(format!("kvsim-report-write-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("fifo")).unwrap();
    std::fs::write(dir.join("fifo/old-evict.txt"), "stale").unwrap();
    std::fs::write(dir.join("notes.md"), "mine").unwrap();
    let files = vec![
        (PathBuf::from("README.md"), "index".to_string()),
        (PathBuf::from("fifo/README.md"), "matrix".to_string()),
    ];
    report::write(&dir, &files).unwrap();
    let tree = read_tree(&dir);
    let names: Vec<String> = tree.keys().map(|p| p.display().to_string()).collect();
    assert_eq!(names, ["README.md", "fifo/README.md", "notes.md"]);
    std::fs::remove_dir_all(&dir).unwrap();
}

/// README: "the fault matrix marks the pause cell as expected to fail for both variants".
/// A cell carries its scenario's expectation only when it checks that scenario's faults
/// unchanged.
#[test]
fn the_lock_matrix_expects_its_pause_cell_to_fail_in_both_variants() {
    use kvsim::FaultKind;
    use kvsim_models::expect::{ExpectedVerdict, Label, Variant};
    use report::{expectation_for, Profile};
    let entries = registry();
    let lock = entries.iter().find(|e| e.name == "lock").expect("the lock");
    let pause = Profile::Only(FaultKind::Pause);
    assert_eq!(
        expectation_for(lock, pause, Variant::Published),
        Some((ExpectedVerdict::Violation, None))
    );
    let Some((ExpectedVerdict::Violation, Some(Label::Impossible(why)))) =
        expectation_for(lock, pause, Variant::Fixed)
    else {
        panic!("the fixed lock's pause cell is an expected, impossible failure");
    };
    assert!(why.contains("paused"), "{why}");
    assert_eq!(
        expectation_for(lock, Profile::NoFaults, Variant::Fixed),
        Some((ExpectedVerdict::Pass, None))
    );
}

#[test]
fn a_long_token_is_left_to_its_page() {
    let short = "lock/fixed:evict:BAIB";
    assert_eq!(
        report::replay_md(short, "fixed-evict.txt"),
        format!("`kvsim replay {short}`")
    );
    let long = format!("lock/fixed:evict:{}", "A".repeat(report::MAX_LISTED_TOKEN));
    assert_eq!(
        report::replay_md(&long, "fixed-evict.txt"),
        format!(
            "replay: the token ({} characters) ends [its counterexample](fixed-evict.txt)",
            long.len()
        )
    );
}
