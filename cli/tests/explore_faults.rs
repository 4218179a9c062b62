//! Exhaustive search with faults, through `kvsim explore --json`: the unique and total
//! state counts, the verdict and the exit code of scopes that inject each fault kind the
//! explorer can (pause, crash, evict, lose, skew, expire, restart) are pinned. The
//! simulator's runner and the explorer step one world (`kvsim::sim`'s executor), so these
//! counts change only when what a fault does, how a state is told apart or the search
//! order changes (a violation's counts are those of the depth-first search up to it).

mod cli;

use cli::{kvsim, text};

/// A scope's arguments and its (unique, total, verdict, exit code).
type Case<'a> = (&'a [&'a str], (u64, u64, &'a str, i32));

/// Explores `args` and returns (unique, total, verdict, exit code).
fn explore(args: &[&str]) -> (u64, u64, String, i32) {
    let mut all = vec!["explore"];
    all.extend_from_slice(args);
    all.push("--json");
    let out = kvsim(&all);
    let json: serde_json::Value = serde_json::from_str(&text(&out.stdout))
        .unwrap_or_else(|e| panic!("{args:?}: json: {e}: {}", text(&out.stderr)));
    (
        json["unique_states"].as_u64().expect("unique_states"),
        json["total_states"].as_u64().expect("total_states"),
        json["verdict"].as_str().expect("verdict").to_string(),
        out.status.code().expect("an exit code"),
    )
}

#[test]
fn faulty_scopes_keep_their_state_counts_and_verdicts() {
    let cases: [Case; 9] = [
        // The fairness abstraction merges states (on by default); the flag keeps them apart
        // and finds the same violation.
        (
            &["lock/published", "--faults", "expire", "--ops", "1"],
            (1_507, 1_839, "violation", 1),
        ),
        (
            &[
                "lock/published",
                "--faults",
                "expire",
                "--ops",
                "1",
                "--no-fairness-abstraction",
            ],
            (6_006, 9_979, "violation", 1),
        ),
        (
            &[
                "lock/published",
                "--faults",
                "pause",
                "--clients",
                "2",
                "--ops",
                "1",
            ],
            (12_990, 13_250, "unknown", 3),
        ),
        (
            &[
                "spinlock/fixed",
                "--faults",
                "crash",
                "--clients",
                "2",
                "--ops",
                "1",
            ],
            (1_509, 1_760, "violation", 1),
        ),
        // The time-shift reduction merges states that differ only in when things happen
        // (spinlock/fixed reads no clock and sets no expiry); the flag keeps them apart and
        // finds the same violation.
        (
            &[
                "spinlock/fixed",
                "--faults",
                "crash",
                "--clients",
                "2",
                "--ops",
                "1",
                "--no-time-shift",
            ],
            (3_004, 3_203, "violation", 1),
        ),
        (
            &["fifo/fixed", "--faults", "evict,lose", "--ops", "1"],
            (64_928, 142_185, "ok", 0),
        ),
        (
            &[
                "counter/fixed",
                "--faults",
                "skew,expire,restart",
                "--ops",
                "1",
            ],
            (10_774, 16_872, "ok", 0),
        ),
        (
            &[
                "lock/fixed",
                "--faults",
                "skew,expire,restart",
                "--clients",
                "2",
                "--ops",
                "1",
            ],
            (1_518, 1_748, "violation", 1),
        ),
        (
            &[
                "counter/published",
                "--faults",
                "lose:2,crash",
                "--ops",
                "1",
                "--timed",
            ],
            (3_036, 3_469, "ok", 0),
        ),
    ];
    // Every scope is run before the test fails, so that one change shows all its effects.
    let wrong: Vec<String> = cases
        .iter()
        .filter_map(|(args, (unique, total, verdict, code))| {
            let found = explore(args);
            (found != (*unique, *total, verdict.to_string(), *code)).then(|| {
                format!(
                    "kvsim explore {}: expected {:?}, found {found:?}",
                    args.join(" "),
                    (unique, total, verdict, code)
                )
            })
        })
        .collect();
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}
