//! `kvsim check-history` with the time-window specs, through the binary: a small
//! hand-written history each that passes and one that breaks the property (the models'
//! own checkers, `visitor-counter` with `--period`, `event-log` with `--window`); a
//! malformed value, a missing time and a missing parameter are errors (exit 2) that say
//! what was expected, naming the line; a file the property has nothing to judge in is
//! `unknown` (exit 3).

mod check_history_support;

use check_history_support::{dir, kvsim, write, Run};
use std::path::Path;

/// `kvsim check-history --spec visitor-counter --period PERIOD FILE` in `d`.
fn visitor_counter(d: &Path, period: &str, file: &str) -> Run {
    kvsim(d, &["--spec", "visitor-counter", "--period", period, file])
}

/// `kvsim check-history --spec event-log --window WINDOW FILE` in `d`.
fn event_log(d: &Path, window: &str, file: &str) -> Run {
    kvsim(d, &["--spec", "event-log", "--window", window, file])
}

/// Asserts that `r` exited with `code` and wrote `text` to stdout.
fn assert_stdout(r: &Run, code: i32, text: &str) {
    assert_eq!(r.code, code, "{}{}", r.stdout, r.stderr);
    assert!(r.stdout.contains(text), "{}", r.stdout);
}

/// Asserts that `r` exited with `code` and wrote `text` to stderr.
fn assert_stderr(r: &Run, code: i32, text: &str) {
    assert_eq!(r.code, code, "{}{}", r.stdout, r.stderr);
    assert!(r.stderr.contains(text), "{}", r.stderr);
}

/// Asserts that `r` found a violation and that its report ends with `text`.
fn assert_violation(r: &Run, text: &str) {
    assert_eq!(r.code, 1, "{}{}", r.stdout, r.stderr);
    assert!(
        r.stdout.contains(": violation ") && r.stdout.trim_end().ends_with(text),
        "{}",
        r.stdout
    );
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
    write(&d, "ok.jsonl", &visitors("2"));
    write(&d, "lost.jsonl", &visitors("0"));
    let r = visitor_counter(&d, "2", "ok.jsonl");
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    assert!(r.stdout.starts_with("ok.jsonl: ok "), "{}", r.stdout);

    let r = visitor_counter(&d, "2", "lost.jsonl");
    assert_violation(
        &r,
        "time window (visitor counter): value() at 1700000002.100 s (period 850000001) \
         returned 0, but the period it reports, 850000000, had between 2 and 2 visits: the \
         key it read lost visits of period 850000000 (it expired, was evicted or was created \
         again while they were counted) (process 2, value at line 7)",
    );

    // The same history with a period of 1 s: value() at 1.0 s is in the period after the
    // visits' already, so its 0 is wrong.
    let r = visitor_counter(&d, "1", "ok.jsonl");
    assert_stdout(
        &r,
        1,
        "value() at 1700000001.000 s (period 1700000001) returned 0",
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
    write(&d, "ok.jsonl", &events("[1]", "[1]", "[]"));
    write(&d, "twice.jsonl", &events("[1]", "[1]", "[1]"));
    write(&d, "missed.jsonl", &events("[]", "[1]", "[]"));
    let r = event_log(&d, "10", "ok.jsonl");
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    assert!(r.stdout.starts_with("ok.jsonl: ok "), "{}", r.stdout);

    let r = event_log(&d, "10", "twice.jsonl");
    assert_violation(
        &r,
        "polling (event log): round 2 of the poll at 1700000001.600 s returned event 1 \
         twice (process 2, poll at line 5)",
    );

    let r = event_log(&d, "10", "missed.jsonl");
    assert_violation(
        &r,
        "time window (event log): fetch() at 1700000001.500 s missed event 1, put at \
         1700000000.100 s (inside the window of 10 s) (process 1, fetch at line 3)",
    );

    // A window of 1 s: the event put 1.4 s before the fetch is no longer owed to it.
    let r = event_log(&d, "1", "missed.jsonl");
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
}

#[test]
fn malformed_values_and_missing_times_name_the_line() {
    let d = dir("malformed");
    write(&d, "count.jsonl", &visitors("\"two\""));
    let r = visitor_counter(&d, "2", "count.jsonl");
    assert_stderr(
        &r,
        2,
        "count.jsonl:8: expected the result of value(): a count, an integer of at least \
         0, found \"two\"",
    );

    let put = events("[1]", "[1]", "[]").replacen("\"value\": 1,", "\"value\": \"one\",", 1);
    write(&d, "put.jsonl", &put);
    let r = event_log(&d, "10", "put.jsonl");
    assert_stderr(
        &r,
        2,
        "put.jsonl:1: expected the value of put: the event's id: an integer from 0 to \
         4294967295, found \"one\"",
    );

    let round = events("[1]", "[1]", "[]").replacen("\"back\": 1,", "\"bakc\": 1,", 1);
    write(&d, "round.jsonl", &round);
    let r = event_log(&d, "10", "round.jsonl");
    assert_stderr(
        &r,
        2,
        "round.jsonl:6: expected the result of poll, each round: a window {\"back\": \
         SECS, \"span\": SECS, \"events\": [ID, ...]}, found ",
    );

    // Times are the evidence: none on a line is an error naming it.
    let mut untimed: Vec<String> = visitors("2").lines().map(String::from).collect();
    untimed[5] = untimed[5].replace(&format!(", \"time\": {}", T0 + 1010), "");
    write(&d, "untimed.jsonl", &untimed.join("\n"));
    let r = visitor_counter(&d, "2", "untimed.jsonl");
    assert_stderr(
        &r,
        2,
        "untimed.jsonl:6: expected a time in milliseconds (on the clock the structure reads: \
         Unix epoch milliseconds for a real client) on every ok, found an event without an \
         integer time",
    );

    // An operation of another spec.
    write(&d, "read.jsonl", &event(0, "invoke", "read", "null", 0));
    let r = visitor_counter(&d, "2", "read.jsonl");
    assert_stderr(
        &r,
        2,
        "read.jsonl:1: expected an operation of spec visitor-counter (increment, value, \
         sleep or wait), found \"read\"",
    );
}

#[test]
fn parameters_are_required_and_belong_to_their_spec() {
    let d = dir("parameters");
    write(&d, "v.jsonl", &visitors("2"));
    let r = kvsim(&d, &["--spec", "visitor-counter", "v.jsonl"]);
    assert_stderr(
        &r,
        2,
        "--spec visitor-counter needs --period SECS: the counter's period T",
    );
    let r = kvsim(&d, &["--spec", "event-log", "v.jsonl"]);
    assert_stderr(
        &r,
        2,
        "--spec event-log needs --window SECS: the log's window timeChunk",
    );
    let r = kvsim(&d, &["--spec", "counter", "--period", "2", "v.jsonl"]);
    assert_stderr(
        &r,
        2,
        "--period: expected --spec visitor-counter, found --spec counter",
    );
    for bad in ["0", "-2", "1.5", "x"] {
        let r = visitor_counter(&d, bad, "v.jsonl");
        assert_eq!(r.code, 2, "--period {bad}: {}{}", r.stdout, r.stderr);
    }
}

#[test]
fn nothing_to_judge_is_unknown() {
    let d = dir("unknown");
    // Visits, but no value(): the property says nothing about them.
    let visits = visitors("2").lines().take(4).collect::<Vec<_>>().join("\n");
    write(&d, "visits.jsonl", &visits);
    let r = visitor_counter(&d, "2", "visits.jsonl");
    assert_stdout(
        &r,
        3,
        "unknown 0.000 ms: no value() completed, nothing to check: 2 operations",
    );
    // Puts and a fetch whose outcome is unknown.
    let text = [
        event(0, "invoke", "put", "1", 0),
        event(0, "ok", "put", "null", 5),
        event(1, "invoke", "fetch", "null", 10),
        event(1, "info", "fetch", "\"timeout\"", 2010),
    ]
    .concat();
    write(&d, "puts.jsonl", &text);
    let r = event_log(&d, "10", "puts.jsonl");
    assert_stdout(
        &r,
        3,
        "no fetch, fetch-range or poll completed, nothing to check: 2 operations",
    );
    write(&d, "empty.jsonl", "");
    let r = event_log(&d, "10", "empty.jsonl");
    assert_eq!(r.code, 3, "{}{}", r.stdout, r.stderr);
}

/// A `value()` whose call and return lie a billion periods apart is not judged period by
/// period (a bound, not a hang): `unknown`, naming the bound.
#[test]
fn a_read_spanning_too_many_periods_is_unknown_at_once() {
    let d = dir("span");
    let text = [
        event(0, "invoke", "value", "null", 0),
        event(0, "ok", "value", "0", 1_000_000_000_000),
    ]
    .concat();
    write(&d, "span.jsonl", &text);
    let r = visitor_counter(&d, "1", "span.jsonl");
    assert_stdout(&r, 3, "spans 1000000001 periods of 1000 ms between its call and its return; at most 100000 are judged");
}
