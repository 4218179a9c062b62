//! `kvsim check-history` with the time-window specs, through the binary: a small
//! hand-written history each that passes and one that breaks the property (the models'
//! own checkers, `visitor-counter` with `--period`, `event-log` with `--window`); a
//! malformed value, a missing time and a missing parameter are errors (exit 2) that say
//! what was expected, naming the line; a file the property has nothing to judge in is
//! `unknown` (exit 3).

use std::path::{Path, PathBuf};
use std::process::Command;

/// A fresh directory for this test's files.
fn dir(test: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!(
        "kvsim-check-history-models-{}-{test}",
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).expect("temp dir");
    d
}

/// What one run of the binary did.
struct Run {
    code: i32,
    stdout: String,
    stderr: String,
}

/// Runs `kvsim check-history ARGS` in `cwd`.
fn kvsim(cwd: &Path, args: &[&str]) -> Run {
    let out = Command::new(env!("CARGO_BIN_EXE_kvsim"))
        .arg("check-history")
        .args(args)
        .current_dir(cwd)
        .output()
        .expect("runs kvsim");
    Run {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8(out.stdout).expect("utf-8"),
        stderr: String::from_utf8(out.stderr).expect("utf-8"),
    }
}

/// A moment on the Unix epoch millisecond clock that starts a 2 s period (and a second).
const T0: u64 = 1_700_000_000_000;

/// One event line: `process`, `type`, `f`, `value` (JSON text), `time` (ms after [`T0`]).
fn event(process: u32, kind: &str, f: &str, value: &str, ms: u64) -> String {
    format!(
        "{{\"process\": {process}, \"type\": \"{kind}\", \"f\": \"{f}\", \"value\": {value}, \"time\": {}}}\n",
        T0 + ms
    )
}

/// Two visits in period p (the first second of it); `value()` in period p+1 answers
/// `count`.
fn visitors(count: &str) -> String {
    [
        event(0, "invoke", "increment", "null", 100),
        event(0, "ok", "increment", "null", 110),
        event(1, "invoke", "increment", "null", 500),
        event(1, "ok", "increment", "null", 520),
        // Still period p: the previous period had no visit.
        event(2, "invoke", "value", "null", 1000),
        event(2, "ok", "value", "0", 1010),
        event(2, "invoke", "value", "null", 2100),
        event(2, "ok", "value", count, 2110),
    ]
    .concat()
}

#[test]
fn visitor_counter_ok_and_violation() {
    let d = dir("visitor-counter");
    std::fs::write(d.join("ok.jsonl"), visitors("2")).unwrap();
    std::fs::write(d.join("lost.jsonl"), visitors("0")).unwrap();
    let r = kvsim(
        &d,
        &["--spec", "visitor-counter", "--period", "2", "ok.jsonl"],
    );
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    assert!(r.stdout.starts_with("ok.jsonl: ok "), "{}", r.stdout);

    let r = kvsim(
        &d,
        &["--spec", "visitor-counter", "--period", "2", "lost.jsonl"],
    );
    assert_eq!(r.code, 1, "{}{}", r.stdout, r.stderr);
    assert!(
        r.stdout.contains(": violation ")
            && r.stdout.trim_end().ends_with(
                "time window (visitor counter): value() at 1700000002.100 s (period 850000001) \
                 returned 0, but period 850000000 had between 2 and 2 visits \
                 (process 2, value at line 7)"
            ),
        "{}",
        r.stdout
    );

    // The same history with a period of 1 s: value() at 1.0 s is in the period after the
    // visits' already, so its 0 is wrong.
    let r = kvsim(
        &d,
        &["--spec", "visitor-counter", "--period", "1", "ok.jsonl"],
    );
    assert_eq!(r.code, 1, "{}{}", r.stdout, r.stderr);
    assert!(
        r.stdout
            .contains("value() at 1700000001.000 s (period 1700000001) returned 0"),
        "{}",
        r.stdout
    );

    let r = kvsim(
        &d,
        &[
            "--spec",
            "visitor-counter",
            "--period",
            "2",
            "--json",
            "lost.jsonl",
        ],
    );
    assert_eq!(r.code, 1);
    let v: serde_json::Value = serde_json::from_str(&r.stdout).expect("json");
    assert_eq!(v[0]["verdict"], "violation");
    assert_eq!(v[0]["op_line"], 7);
}

/// A put of event 1; a `fetch()` a second later; a poll whose rounds return `round1` and
/// `round2`.
fn events(fetched: &str, round1: &str, round2: &str) -> String {
    let poll = format!(
        "[{{\"back\": 10, \"span\": 10, \"events\": {round1}}}, \
         {{\"back\": 1, \"span\": 1, \"events\": {round2}}}]"
    );
    [
        event(0, "invoke", "put", "1", 100),
        event(0, "ok", "put", "null", 110),
        event(1, "invoke", "fetch", "null", 1500),
        event(1, "ok", "fetch", fetched, 1510),
        event(2, "invoke", "poll", "300", 1600),
        event(2, "ok", "poll", &poll, 1950),
    ]
    .concat()
}

#[test]
fn event_log_ok_and_violations() {
    let d = dir("event-log");
    std::fs::write(d.join("ok.jsonl"), events("[1]", "[1]", "[]")).unwrap();
    std::fs::write(d.join("twice.jsonl"), events("[1]", "[1]", "[1]")).unwrap();
    std::fs::write(d.join("missed.jsonl"), events("[]", "[1]", "[]")).unwrap();
    let r = kvsim(&d, &["--spec", "event-log", "--window", "10", "ok.jsonl"]);
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    assert!(r.stdout.starts_with("ok.jsonl: ok "), "{}", r.stdout);

    let r = kvsim(
        &d,
        &["--spec", "event-log", "--window", "10", "twice.jsonl"],
    );
    assert_eq!(r.code, 1, "{}{}", r.stdout, r.stderr);
    assert!(
        r.stdout.trim_end().ends_with(
            "polling (event log): round 2 of the poll at 1700000001.600 s returned event 1 \
             twice (process 2, poll at line 5)"
        ),
        "{}",
        r.stdout
    );

    let r = kvsim(
        &d,
        &["--spec", "event-log", "--window", "10", "missed.jsonl"],
    );
    assert_eq!(r.code, 1, "{}{}", r.stdout, r.stderr);
    assert!(
        r.stdout.trim_end().ends_with(
            "time window (event log): fetch() at 1700000001.500 s missed event 1, put at \
             1700000000.100 s (inside the window of 10 s) (process 1, fetch at line 3)"
        ),
        "{}",
        r.stdout
    );

    // A window of 1 s: the event put 1.4 s before the fetch is no longer owed to it.
    let r = kvsim(
        &d,
        &["--spec", "event-log", "--window", "1", "missed.jsonl"],
    );
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
}

#[test]
fn malformed_values_and_missing_times_name_the_line() {
    let d = dir("malformed");
    std::fs::write(d.join("count.jsonl"), visitors("\"two\"")).unwrap();
    let r = kvsim(
        &d,
        &["--spec", "visitor-counter", "--period", "2", "count.jsonl"],
    );
    assert_eq!(r.code, 2, "{}{}", r.stdout, r.stderr);
    assert!(
        r.stderr.contains(
            "count.jsonl:8: expected the result of value(): a count, an integer of at least \
             0, found \"two\""
        ),
        "{}",
        r.stderr
    );

    let put = events("[1]", "[1]", "[]").replacen("\"value\": 1,", "\"value\": \"one\",", 1);
    std::fs::write(d.join("put.jsonl"), put).unwrap();
    let r = kvsim(&d, &["--spec", "event-log", "--window", "10", "put.jsonl"]);
    assert_eq!(r.code, 2, "{}{}", r.stdout, r.stderr);
    assert!(
        r.stderr.contains(
            "put.jsonl:1: expected the value of put: the event's id: an integer from 0 to \
             4294967295, found \"one\""
        ),
        "{}",
        r.stderr
    );

    let round = events("[1]", "[1]", "[]").replacen("\"back\": 1,", "\"bakc\": 1,", 1);
    std::fs::write(d.join("round.jsonl"), round).unwrap();
    let r = kvsim(
        &d,
        &["--spec", "event-log", "--window", "10", "round.jsonl"],
    );
    assert_eq!(r.code, 2, "{}{}", r.stdout, r.stderr);
    assert!(
        r.stderr.contains(
            "round.jsonl:6: expected the result of poll, each round: a window {\"back\": \
             SECS, \"span\": SECS, \"events\": [ID, ...]}, found "
        ),
        "{}",
        r.stderr
    );

    // Times are the evidence: none on a line is an error naming it.
    let mut untimed: Vec<String> = visitors("2").lines().map(String::from).collect();
    untimed[5] = untimed[5].replace(&format!(", \"time\": {}", T0 + 1010), "");
    std::fs::write(d.join("untimed.jsonl"), untimed.join("\n")).unwrap();
    let r = kvsim(
        &d,
        &[
            "--spec",
            "visitor-counter",
            "--period",
            "2",
            "untimed.jsonl",
        ],
    );
    assert_eq!(r.code, 2, "{}{}", r.stdout, r.stderr);
    assert!(
        r.stderr
            .contains("untimed.jsonl:6: expected a time in milliseconds (on the clock the structure reads: Unix epoch milliseconds for a real client) on every ok, found an event without an integer time"),
        "{}",
        r.stderr
    );

    // An operation of another spec.
    std::fs::write(d.join("read.jsonl"), event(0, "invoke", "read", "null", 0)).unwrap();
    let r = kvsim(
        &d,
        &["--spec", "visitor-counter", "--period", "2", "read.jsonl"],
    );
    assert_eq!(r.code, 2, "{}{}", r.stdout, r.stderr);
    assert!(
        r.stderr.contains(
            "read.jsonl:1: expected an operation of spec visitor-counter (increment, value or \
             sleep), found \"read\""
        ),
        "{}",
        r.stderr
    );
}

#[test]
fn parameters_are_required_and_belong_to_their_spec() {
    let d = dir("parameters");
    std::fs::write(d.join("v.jsonl"), visitors("2")).unwrap();
    let r = kvsim(&d, &["--spec", "visitor-counter", "v.jsonl"]);
    assert_eq!(r.code, 2);
    assert!(
        r.stderr
            .contains("--spec visitor-counter needs --period SECS: the counter's period T"),
        "{}",
        r.stderr
    );
    let r = kvsim(&d, &["--spec", "event-log", "v.jsonl"]);
    assert_eq!(r.code, 2);
    assert!(
        r.stderr
            .contains("--spec event-log needs --window SECS: the log's window timeChunk"),
        "{}",
        r.stderr
    );
    let r = kvsim(&d, &["--spec", "counter", "--period", "2", "v.jsonl"]);
    assert_eq!(r.code, 2);
    assert!(
        r.stderr
            .contains("--period: expected --spec visitor-counter, found --spec counter"),
        "{}",
        r.stderr
    );
    for bad in ["0", "-2", "1.5", "x"] {
        let r = kvsim(
            &d,
            &["--spec", "visitor-counter", "--period", bad, "v.jsonl"],
        );
        assert_eq!(r.code, 2, "--period {bad}: {}{}", r.stdout, r.stderr);
    }
}

#[test]
fn nothing_to_judge_is_unknown() {
    let d = dir("unknown");
    // Visits, but no value(): the property says nothing about them.
    let visits = visitors("2").lines().take(4).collect::<Vec<_>>().join("\n");
    std::fs::write(d.join("visits.jsonl"), visits).unwrap();
    let r = kvsim(
        &d,
        &["--spec", "visitor-counter", "--period", "2", "visits.jsonl"],
    );
    assert_eq!(r.code, 3, "{}{}", r.stdout, r.stderr);
    assert!(
        r.stdout
            .contains("unknown 0.000 ms: no value() completed, nothing to check: 2 operations"),
        "{}",
        r.stdout
    );
    // Puts and a fetch whose outcome is unknown.
    let text = [
        event(0, "invoke", "put", "1", 0),
        event(0, "ok", "put", "null", 5),
        event(1, "invoke", "fetch", "null", 10),
        event(1, "info", "fetch", "\"timeout\"", 2010),
    ]
    .concat();
    std::fs::write(d.join("puts.jsonl"), text).unwrap();
    let r = kvsim(&d, &["--spec", "event-log", "--window", "10", "puts.jsonl"]);
    assert_eq!(r.code, 3, "{}{}", r.stdout, r.stderr);
    assert!(
        r.stdout
            .contains("no fetch, fetch-range or poll completed, nothing to check: 2 operations"),
        "{}",
        r.stdout
    );
    std::fs::write(d.join("empty.jsonl"), "").unwrap();
    let r = kvsim(
        &d,
        &["--spec", "event-log", "--window", "10", "empty.jsonl"],
    );
    assert_eq!(r.code, 3, "{}{}", r.stdout, r.stderr);
}
