//! `kvsim check-history` through the binary: no evidence, no pass (a file in which nothing
//! was recognised is `unknown`, exit 3); the two readings of `:fail` (`--fail-means`);
//! EDN histories saved as one list or vector; Knossos's multi-register; out-of-range
//! `--time-limit`s and deeply nested values are errors (exit 2), never a panic.

mod check_history_support;

use check_history_support::{dir, kvsim, write};
use std::path::{Path, PathBuf};

/// The benchmark histories of Porcupine.
fn porcupine(file: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../shared/benchmarks/porcupine")
        .join(file)
}

const JSONL_OK: &str = r#"{"process": 0, "type": "invoke", "f": "write", "value": 1}
{"process": 0, "type": "ok", "f": "write", "value": 1}
{"process": 1, "type": "invoke", "f": "read", "value": null}
{"process": 1, "type": "ok", "f": "read", "value": 1}
"#;

#[test]
fn a_file_with_nothing_recognised_is_unknown_with_the_reason() {
    let d = dir("nothing");
    write(&d, "empty.jsonl", "");
    write(&d, "blank.edn", "\n\n  \n");
    write(&d, "ops.jsonl", JSONL_OK);
    write(
        &d,
        "core.log",
        "INFO  jepsen.core - 3 :invoke :read nil\nINFO  jepsen.core - 3 :ok :read 1\n",
    );
    write(
        &d,
        "nemesis.edn",
        "{:process :nemesis, :type :info, :f :start, :value nil}\n{:process :nemesis, :type :info, :f :stop, :value nil}\n",
    );
    write(&d, "empty-vector.edn", "[]\n");
    write(
        &d,
        "no-outcome.edn",
        "{:process 0, :type :invoke, :f :write, :value 1}\n{:process 0, :type :info, :f :write, :value 1}\n{:process 1, :type :invoke, :f :read, :value nil}\n",
    );
    write(
        &d,
        "all-failed.jsonl",
        "{\"process\": 0, \"type\": \"invoke\", \"f\": \"write\", \"value\": 1}\n{\"process\": 0, \"type\": \"fail\", \"f\": \"write\", \"value\": 1}\n",
    );
    let mut text = String::new();
    for args in [
        &["empty.jsonl"][..],
        &["blank.edn"],
        &["--format", "jepsen-log", "ops.jsonl"],
        &["--format", "jepsen-log", "core.log"],
        &["nemesis.edn"],
        &["empty-vector.edn"],
        &["no-outcome.edn"],
        &["all-failed.jsonl"],
        &["/dev/null"],
    ] {
        let mut argv = vec!["--spec", "register"];
        argv.extend_from_slice(args);
        let r = kvsim(&d, &argv);
        assert_eq!(r.code, 3, "{args:?}: {}{}", r.stdout, r.stderr);
        assert_eq!(r.stderr, "", "{args:?}");
        text.push_str(&r.stdout);
    }
    insta::assert_snapshot!(text);

    // With a file that is ok, the run is still unknown; --json gives the reason.
    let r = kvsim(
        &d,
        &["--spec", "register", "--json", "ops.jsonl", "empty.jsonl"],
    );
    assert_eq!(r.code, 3, "{}", r.stdout);
    let v: serde_json::Value = serde_json::from_str(&r.stdout).expect("json");
    assert_eq!(v[0]["verdict"], "ok");
    assert_eq!(v[1]["verdict"], "unknown");
    assert!(
        v[1]["reason"]
            .as_str()
            .is_some_and(|s| s.starts_with("empty file")),
        "{v}"
    );
}

#[test]
fn the_empty_etcd_history_of_porcupine_is_unknown() {
    let file = porcupine("jepsen/etcd_095.log");
    let r = kvsim(
        Path::new("."),
        &["--spec", "cas-register", file.to_str().expect("utf-8 path")],
    );
    assert_eq!(r.code, 3, "{}{}", r.stdout, r.stderr);
    assert!(r.stdout.contains(": unknown "), "{}", r.stdout);
}

/// A history Knossos accepts: the cas fails although its compare would have matched
/// (e.g. it timed out at the server and was rolled back).
const FAILED_CAS_EDN: &str = "{:process 0, :type :invoke, :f :write, :value 1}
{:process 0, :type :ok, :f :write, :value 1}
{:process 1, :type :invoke, :f :cas, :value [1 2]}
{:process 1, :type :fail, :f :cas, :value [1 2]}
{:process 0, :type :invoke, :f :read, :value nil}
{:process 0, :type :ok, :f :read, :value 1}
";

const FAILED_CAS_JSONL: &str = r#"{"process": 0, "type": "invoke", "f": "write", "value": 1}
{"process": 0, "type": "ok", "f": "write", "value": 1}
{"process": 1, "type": "invoke", "f": "cas", "value": [1, 2]}
{"process": 1, "type": "fail", "f": "cas", "value": [1, 2]}
{"process": 0, "type": "invoke", "f": "read", "value": null}
{"process": 0, "type": "ok", "f": "read", "value": 1}
"#;

const FAILED_CAS_LOG: &str = "INFO  jepsen.util - 0\t:invoke\t:write\t1
INFO  jepsen.util - 0\t:ok\t:write\t1
INFO  jepsen.util - 1\t:invoke\t:cas\t[1 2]
INFO  jepsen.util - 1\t:fail\t:cas\t[1 2]
INFO  jepsen.util - 0\t:invoke\t:read\tnil
INFO  jepsen.util - 0\t:ok\t:read\t1
";

#[test]
fn a_fail_means_no_effect_by_default_for_edn_and_jsonl_and_compare_failed_for_logs() {
    let d = dir("fail-means");
    write(&d, "cas.edn", FAILED_CAS_EDN);
    write(&d, "cas.jsonl", FAILED_CAS_JSONL);
    write(&d, "cas.log", FAILED_CAS_LOG);
    let violation = "cas 1 → 2 failed, but the register holds 1 (process 1, cas at line 3; 1 operations linearized before it)";
    for (file, default_code) in [("cas.edn", 0), ("cas.jsonl", 0), ("cas.log", 1)] {
        let r = kvsim(&d, &["--spec", "cas-register", file]);
        assert_eq!(r.code, default_code, "{file}: {}{}", r.stdout, r.stderr);
        let r = kvsim(
            &d,
            &["--spec", "cas-register", "--fail-means", "no-effect", file],
        );
        assert_eq!(r.code, 0, "{file}: {}{}", r.stdout, r.stderr);
        assert!(
            r.stdout.starts_with(&format!("{file}: ok ")),
            "{}",
            r.stdout
        );
        let r = kvsim(
            &d,
            &[
                "--spec",
                "cas-register",
                "--fail-means",
                "compare-failed",
                file,
            ],
        );
        assert_eq!(r.code, 1, "{file}: {}{}", r.stdout, r.stderr);
        assert!(r.stdout.trim_end().ends_with(violation), "{}", r.stdout);
    }
    let r = kvsim(
        &d,
        &["--spec", "cas-register", "--fail-means", "maybe", "cas.edn"],
    );
    assert_eq!(r.code, 2);
}

#[test]
fn a_failed_try_acquire_says_the_lock_was_taken_only_when_read_as_compare_failed() {
    let d = dir("mutex");
    // The lock is free, yet the try-acquire fails (e.g. the server refused it).
    write(
        &d,
        "lock.edn",
        "{:process 0, :type :invoke, :f :try-acquire, :value nil}
{:process 0, :type :fail, :f :try-acquire, :value nil}
{:process 1, :type :invoke, :f :acquire, :value nil}
{:process 1, :type :ok, :f :acquire, :value nil}
",
    );
    let r = kvsim(&d, &["--spec", "mutex", "lock.edn"]);
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    let r = kvsim(
        &d,
        &[
            "--spec",
            "mutex",
            "--fail-means",
            "compare-failed",
            "lock.edn",
        ],
    );
    assert_eq!(r.code, 1, "{}{}", r.stdout, r.stderr);
}

/// A stale read (the write completed before the read began), as maps.
const STALE_MAPS: [&str; 4] = [
    "{:process 0, :type :invoke, :f :write, :value 1}",
    "{:process 0, :type :ok, :f :write, :value 1}",
    "{:process 1, :type :invoke, :f :read, :value nil}",
    "{:process 1, :type :ok, :f :read, :value nil}",
];

#[test]
fn a_history_saved_as_one_edn_list_or_vector_is_read() {
    let d = dir("edn-seq");
    let mut fresh = STALE_MAPS;
    fresh[3] = "{:process 1, :type :ok, :f :read, :value 1}";
    let fresh = fresh.join("\n");
    let files = [
        (
            "stale-list.edn",
            format!("({})\n", STALE_MAPS.join("\n ")),
            1,
        ),
        ("stale-list-1.edn", format!("({})", STALE_MAPS.join(" ")), 1),
        (
            "stale-vector.edn",
            format!("[{}]\n", STALE_MAPS.join(",\n ")),
            1,
        ),
        ("fresh-list.edn", format!("(\n{fresh}\n)\n"), 0),
    ];
    for (name, text, code) in &files {
        write(&d, name, text);
        let r = kvsim(&d, &["--spec", "register", name]);
        assert_eq!(r.code, *code, "{name}: {}{}", r.stdout, r.stderr);
        let r = kvsim(&d, &["--spec", "register", "--format", "jepsen-edn", name]);
        assert_eq!(r.code, *code, "{name}: {}{}", r.stdout, r.stderr);
    }
    let r = kvsim(&d, &["--spec", "register", "stale-list.edn"]);
    assert!(
        r.stdout.contains(
            "read returned nothing, but the register holds 1 (process 1, read at line 3;"
        ),
        "{}",
        r.stdout
    );
    write(&d, "open.edn", &format!("({}\n", STALE_MAPS.join("\n")));
    let r = kvsim(&d, &["--spec", "register", "open.edn"]);
    assert_eq!(r.code, 2);
    assert_eq!(
        r.stderr,
        "kvsim: check-history: open.edn:5: expected ) to close the list of operations, found the end of the file\n"
    );
}

#[test]
fn multi_register_transactions_are_checked_atomically() {
    let d = dir("multi-register");
    // Two registers written together, read together while the write runs: the read sees
    // both or neither.
    let history = |x: &str, y: &str| {
        format!(
            "{{:process 0, :type :invoke, :f :txn, :value [[:write :x 1] [:write :y 2]]}}
{{:process 1, :type :invoke, :f :txn, :value [[:read :x nil] [:read :y nil]]}}
{{:process 0, :type :ok, :f :txn, :value [[:write :x 1] [:write :y 2]]}}
{{:process 1, :type :ok, :f :txn, :value [[:read :x {x}] [:read :y {y}]]}}
{{:process 2, :type :invoke, :f :txn, :value [[:read :z nil] [:w :z 3] [:r :z nil]]}}
{{:process 2, :type :ok, :f :txn, :value [[:read :z nil] [:w :z 3] [:r :z 3]]}}
{{:process 3, :type :invoke, :f :txn, :value [[:write :x 7]]}}
{{:process 3, :type :info, :f :txn, :value [[:write :x 7]]}}
"
        )
    };
    write(&d, "both.edn", &history("1", "2"));
    write(&d, "neither.edn", &history("nil", "nil"));
    write(&d, "torn.edn", &history("1", "nil"));
    for (file, code) in [("both.edn", 0), ("neither.edn", 0), ("torn.edn", 1)] {
        let r = kvsim(&d, &["--spec", "multi-register", file]);
        assert_eq!(r.code, code, "{file}: {}{}", r.stdout, r.stderr);
    }
    let r = kvsim(&d, &["--spec", "multi-register", "torn.edn"]);
    assert!(
        r.stdout.contains("returned nil, but the register holds 2")
            || r.stdout
                .contains("returned 1, but the register is unwritten"),
        "{}",
        r.stdout
    );
    // A result that is not the invocation's transaction is an error naming the line.
    write(
        &d,
        "mismatch.edn",
        "{:process 0, :type :invoke, :f :txn, :value [[:read :x nil]]}\n{:process 0, :type :ok, :f :txn, :value [[:read :y nil]]}\n",
    );
    let r = kvsim(&d, &["--spec", "multi-register", "mismatch.edn"]);
    assert_eq!(r.code, 2);
    assert!(r.stderr.starts_with("kvsim: check-history: mismatch.edn:2: expected a transaction result whose micro-operations are the invocation's"), "{}", r.stderr);
}

#[test]
fn an_out_of_range_time_limit_is_a_usage_error() {
    let d = dir("time-limit");
    write(&d, "ok.jsonl", JSONL_OK);
    for bad in ["1e20", "-1", "NaN", "inf", "-inf", "0", "1e300"] {
        let r = kvsim(&d, &["--spec", "register", "--time-limit", bad, "ok.jsonl"]);
        assert_eq!(r.code, 2, "{bad}: {}", r.stderr);
        assert!(
            r.stderr.contains(
                "expected a number of seconds greater than 0 and at most 1000000000, found"
            ),
            "{bad}: {}",
            r.stderr
        );
    }
    let r = kvsim(
        &d,
        &["--spec", "register", "--time-limit", "1e9", "ok.jsonl"],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
}

#[test]
fn a_deeply_nested_value_is_an_error_naming_its_line() {
    let d = dir("deep");
    let deep = "[".repeat(200_000);
    write(
        &d,
        "deep.edn",
        &format!(
            "{}\n{{:process 0, :type :invoke, :f :write, :value {deep}\n",
            STALE_MAPS[0]
        ),
    );
    write(
        &d,
        "deep.log",
        &format!("INFO  jepsen.util - 0\t:invoke\t:read\tnil\nINFO  jepsen.util - 0\t:ok\t:read\t{deep}\n"),
    );
    write(
        &d,
        "deep.jsonl",
        &format!("{{\"process\": 0, \"type\": \"invoke\", \"f\": \"write\", \"value\": {deep}\n"),
    );
    for (file, expected) in [
        (
            "deep.edn",
            "deep.edn:2: expected values nested at most 128 deep, found deeper nesting",
        ),
        (
            "deep.log",
            "deep.log:2: expected values nested at most 128 deep, found deeper nesting",
        ),
        (
            "deep.jsonl",
            "deep.jsonl:1: expected a JSON object nested at most 128 deep",
        ),
    ] {
        let r = kvsim(&d, &["--spec", "register", file]);
        assert_eq!(r.code, 2, "{file}: {}", r.stderr);
        assert!(
            r.stderr
                .starts_with(&format!("kvsim: check-history: {expected}")),
            "{file}: {}",
            r.stderr
        );
    }
}

#[test]
fn a_cas_that_completed_ok_with_false_failed_its_compare_in_every_reading() {
    let d = dir("cas-false");
    let history = |old: i64| {
        format!(
            "{{:process 0, :type :invoke, :f :write, :value 1}}
{{:process 0, :type :ok, :f :write, :value 1}}
{{:process 1, :type :invoke, :f :cas, :value [{old} 2]}}
{{:process 1, :type :ok, :f :cas, :value false}}
"
        )
    };
    write(&d, "matched.edn", &history(1));
    write(&d, "missed.edn", &history(5));
    for fail_means in ["no-effect", "compare-failed"] {
        let r = kvsim(
            &d,
            &[
                "--spec",
                "cas-register",
                "--fail-means",
                fail_means,
                "matched.edn",
            ],
        );
        assert_eq!(r.code, 1, "{}{}", r.stdout, r.stderr);
        assert!(
            r.stdout
                .contains("cas 1 → 2 failed, but the register holds 1"),
            "{}",
            r.stdout
        );
        let r = kvsim(
            &d,
            &[
                "--spec",
                "cas-register",
                "--fail-means",
                fail_means,
                "missed.edn",
            ],
        );
        assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    }
}

#[test]
fn multi_register_takes_knossos_initial_values() {
    let d = dir("multi-register-initial");
    // As in Knossos's multi-register.edn: "A multi-register with x=0 and y=0", read before
    // anything was written.
    write(
        &d,
        "initial.edn",
        "; A multi-register with x=0 and y=0
[{:type :invoke,
 :f :txn,
 :value [[:read :x nil] [:read :y nil]],
 :process 2,
 :time 7686334122}
{:type :invoke, :f :txn, :value [[:write :y 2]], :process 4, :time 7686306180}
{:type :ok,
 :f :txn,
 :value [[:read :x 0] [:read :y 0]],
 :process 2,
 :time 7736090694}
{:type :ok, :f :txn, :value [[:write :y 2]], :process 4, :time 7745089410}]
",
    );
    let r = kvsim(&d, &["--spec", "multi-register", "initial.edn"]);
    assert_eq!(r.code, 1, "{}{}", r.stdout, r.stderr);
    assert!(
        r.stdout.contains(
            "read of register :x (micro-op 1 of 2) returned 0, a value no write of the history \
             writes to it (none complete, none pending)"
        ),
        "{}",
        r.stdout
    );
    let r = kvsim(
        &d,
        &[
            "--spec",
            "multi-register",
            "--initial",
            "{:x 0, :y 0}",
            "initial.edn",
        ],
    );
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    let r = kvsim(
        &d,
        &[
            "--spec",
            "multi-register",
            "--initial",
            "{:x 0, :y 1}",
            "initial.edn",
        ],
    );
    assert_eq!(r.code, 1, "{}{}", r.stdout, r.stderr);
    for (args, expected) in [
        (
            &["--spec", "register", "--initial", "{:x 0}", "initial.edn"][..],
            "--initial: expected --spec multi-register, found --spec register",
        ),
        (
            &[
                "--spec",
                "multi-register",
                "--initial",
                "[1 2]",
                "initial.edn",
            ],
            "expected an EDN map like {:x 0 :y 0}, found [1 2]",
        ),
        (
            &[
                "--spec",
                "multi-register",
                "--initial",
                "{:x",
                "initial.edn",
            ],
            "expected an EDN map like {:x 0 :y 0}: expected } to close, found the end of the file",
        ),
    ] {
        let r = kvsim(&d, args);
        assert_eq!(r.code, 2, "{args:?}");
        assert!(r.stderr.contains(expected), "{args:?}: {}", r.stderr);
    }
}

/// 120 writes that crash (`info`: they may take effect at any later point, or never) and
/// reads of values in an order no linearization gives: the search's memo grows with the
/// subsets of crashed writes. Under `--max-memory 1` it stops `unknown` (exit 3), naming
/// the bound and the flag, and the other file of the run keeps its verdict.
#[test]
fn a_search_that_outgrows_max_memory_is_unknown_and_the_run_goes_on() {
    let d = dir("max-memory");
    let mut text = String::new();
    for p in 0..120 {
        text.push_str(&format!(
            "{{\"process\": {p}, \"type\": \"invoke\", \"f\": \"write\", \"value\": {p}}}\n"
        ));
    }
    for p in 0..120 {
        text.push_str(&format!(
            "{{\"process\": {p}, \"type\": \"info\", \"f\": \"write\", \"value\": {p}}}\n"
        ));
    }
    for (i, v) in [5, 90, 17, 64, 3, 111, 40, 77, 1, 100, 58, 23]
        .iter()
        .cycle()
        .take(200)
        .enumerate()
    {
        let p = 1000 + i;
        text.push_str(&format!(
            "{{\"process\": {p}, \"type\": \"invoke\", \"f\": \"read\", \"value\": null}}\n\
             {{\"process\": {p}, \"type\": \"ok\", \"f\": \"read\", \"value\": {v}}}\n"
        ));
    }
    write(&d, "crashed.jsonl", &text);
    write(&d, "ok.jsonl", JSONL_OK);
    let r = kvsim(
        &d,
        &[
            "--spec",
            "register",
            "--max-memory",
            "1",
            "crashed.jsonl",
            "ok.jsonl",
        ],
    );
    assert_eq!(r.code, 3, "{}{}", r.stdout, r.stderr);
    assert!(
        r.stdout.contains("crashed.jsonl: unknown")
            && r.stdout.contains(
                "memory limit of 1 MiB for the search's memo reached (raise it with --max-memory)"
            ),
        "{}",
        r.stdout
    );
    assert!(r.stdout.contains("ok.jsonl: ok"), "{}", r.stdout);
    let r = kvsim(&d, &["--spec", "register", "--max-memory", "0", "ok.jsonl"]);
    assert_eq!(r.code, 2, "{}", r.stderr);
}

/// A line longer than 1 MiB and a file larger than 2 GiB are refused with what was
/// expected and what was found (exit 2), and the other files of the run keep their
/// verdicts.
#[test]
fn an_overlong_line_and_an_oversized_file_are_errors_and_lose_nothing_else() {
    let d = dir("bounds");
    let long = "7".repeat(2 << 20);
    write(
        &d,
        "long.jsonl",
        &format!(
            "{{\"process\": 0, \"type\": \"invoke\", \"f\": \"write\", \"value\": 1}}\n\
             {{\"process\": 0, \"type\": \"ok\", \"f\": \"write\", \"value\": {long}}}\n"
        ),
    );
    // Sparse: the size is what is refused, before anything is read.
    let huge = std::fs::File::create(d.join("huge.jsonl")).expect("create");
    huge.set_len(3 << 30).expect("sparse file");
    write(
        &d,
        "ok.jsonl",
        "{\"process\": 0, \"type\": \"invoke\", \"f\": \"write\", \"value\": 1}\n\
         {\"process\": 0, \"type\": \"ok\", \"f\": \"write\", \"value\": 1}\n",
    );
    let r = kvsim(
        &d,
        &["--spec", "register", "long.jsonl", "huge.jsonl", "ok.jsonl"],
    );
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(
        r.stderr.contains(&format!(
            "long.jsonl:2: expected a line of at most 1 MiB, found {} bytes",
            long.len() + 53
        )),
        "{}",
        r.stderr
    );
    assert!(
        r.stderr.contains(
            "huge.jsonl: expected a history file of at most 2048 MiB, found 3221225472 bytes"
        ),
        "{}",
        r.stderr
    );
    assert!(r.stdout.contains("ok.jsonl: ok"), "{}", r.stdout);
}

/// A verdict line without its timing (`3.141 ms` → `_ ms`), for comparing runs.
fn untimed(text: &str) -> String {
    text.lines()
        .map(|l| match l.split_once(" ms") {
            Some((head, tail)) => match head.rsplit_once(' ') {
                Some((verdict, _millis)) => format!("{verdict} _ ms{tail}"),
                None => l.to_string(),
            },
            None => l.to_string(),
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// `n` writes that never return (`info`), then a read of 1000; with `late`, a write of
/// 1000 is invoked after the read returned (and never returns either).
fn pending_writes_then_a_read(n: usize, late: bool) -> String {
    let mut text = String::new();
    for p in 0..n {
        text.push_str(&format!(
            "{{\"process\": {p}, \"type\": \"invoke\", \"f\": \"write\", \"value\": {p}}}\n"
        ));
    }
    for p in 0..n {
        text.push_str(&format!(
            "{{\"process\": {p}, \"type\": \"info\", \"f\": \"write\", \"value\": {p}}}\n"
        ));
    }
    text.push_str(
        "{\"process\": 999, \"type\": \"invoke\", \"f\": \"read\", \"value\": null}\n\
         {\"process\": 999, \"type\": \"ok\", \"f\": \"read\", \"value\": 1000}\n",
    );
    if late {
        text.push_str(
            "{\"process\": 1000, \"type\": \"invoke\", \"f\": \"write\", \"value\": 1000}\n",
        );
    }
    text
}

/// 30 writes that never return and a read of a value none of them writes: a violation
/// before any search (it took minutes and gigabytes: the search tried every subset of
/// the writes), whatever the step bound.
#[test]
fn a_read_of_a_value_no_write_writes_is_a_violation_at_once() {
    let d = dir("unwritten");
    write(
        &d,
        "unwritten.jsonl",
        &pending_writes_then_a_read(30, false),
    );
    let r = kvsim(
        &d,
        &["--spec", "register", "--max-steps", "1", "unwritten.jsonl"],
    );
    assert_eq!(r.code, 1, "{}{}", r.stdout, r.stderr);
    assert_eq!(
        untimed(&r.stdout),
        "unwritten.jsonl: violation _ ms: read returned 1000, a value no write of the history \
         writes (none complete, none pending) (process 999, read at line 61; 0 operations \
         linearized before it)"
    );
}

/// The same writes, and a write of the value read invoked only after the read returned:
/// the pre-pass cannot refuse it, and the search of every subset of the 30 writes ends at
/// the default step bound, `unknown` naming it and its flag; a lower bound ends it at the
/// same point every time.
#[test]
fn a_hopeless_search_ends_unknown_at_the_step_bound_naming_it() {
    let d = dir("step-bound");
    write(&d, "late.jsonl", &pending_writes_then_a_read(30, true));
    let r = kvsim(&d, &["--spec", "register", "late.jsonl"]);
    assert_eq!(r.code, 3, "{}{}", r.stdout, r.stderr);
    assert_eq!(
        untimed(&r.stdout),
        "late.jsonl: unknown _ ms: search step limit of 100,000,000 reached (raise it with --max-steps)"
    );
    let runs: Vec<_> = (0..2)
        .map(|_| {
            let r = kvsim(
                &d,
                &[
                    "--spec",
                    "register",
                    "--json",
                    "--max-steps",
                    "100000",
                    "late.jsonl",
                ],
            );
            assert_eq!(r.code, 3, "{}{}", r.stdout, r.stderr);
            let mut v: serde_json::Value = serde_json::from_str(&r.stdout).expect("json");
            v[0]["millis"] = serde_json::Value::Null;
            v
        })
        .collect();
    assert_eq!(runs[0], runs[1]);
    assert_eq!(
        runs[0][0]["reason"],
        "search step limit of 100,000 reached (raise it with --max-steps)"
    );
    let r = kvsim(
        &d,
        &["--spec", "register", "--max-steps", "0", "late.jsonl"],
    );
    assert_eq!(r.code, 2, "{}", r.stderr);
}

/// `--help` names the default bounds, the same on every machine.
#[test]
fn help_names_the_default_bounds() {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_kvsim"))
        .args(["check-history", "--help"])
        .output()
        .expect("runs kvsim");
    let help = String::from_utf8(out.stdout).expect("utf-8");
    let flat = help.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(flat.contains("--max-steps <N>"), "{help}");
    assert!(flat.contains("Default: 100000000."), "{help}");
    assert!(
        flat.contains("Default: 1024 (1 GiB), on every machine."),
        "{help}"
    );
}

/// Knossos's cas-register starts at nil, and `cas [nil 1]` succeeds on it (and only
/// there); a write of nil empties a register.
#[test]
fn nil_is_the_empty_registers_value_as_in_knossos() {
    let d = dir("nil");
    let edn = |ops: &[(u64, &str, &str, &str)]| {
        ops.iter()
            .map(|(p, ty, f, v)| format!("{{:process {p}, :type :{ty}, :f :{f}, :value {v}}}\n"))
            .collect::<String>()
    };
    write(
        &d,
        "cas-from-nil.edn",
        &edn(&[
            (0, "invoke", "cas", "[nil 1]"),
            (0, "ok", "cas", "[nil 1]"),
            (1, "invoke", "read", "nil"),
            (1, "ok", "read", "1"),
        ]),
    );
    write(
        &d,
        "failed-cas-from-nil.edn",
        &edn(&[
            (0, "invoke", "cas", "[nil 1]"),
            (0, "fail", "cas", "[nil 1]"),
            (1, "invoke", "read", "nil"),
            (1, "ok", "read", "nil"),
        ]),
    );
    write(
        &d,
        "cas-from-nil-when-written.edn",
        &edn(&[
            (0, "invoke", "write", "2"),
            (0, "ok", "write", "2"),
            (0, "invoke", "cas", "[nil 1]"),
            (0, "ok", "cas", "[nil 1]"),
        ]),
    );
    write(
        &d,
        "write-nil.edn",
        &edn(&[
            (0, "invoke", "write", "1"),
            (0, "ok", "write", "1"),
            (0, "invoke", "write", "nil"),
            (0, "ok", "write", "nil"),
            (1, "invoke", "read", "nil"),
            (1, "ok", "read", "nil"),
        ]),
    );
    write(
        &d,
        "cas-to-nil.edn",
        &edn(&[
            (0, "invoke", "write", "1"),
            (0, "ok", "write", "1"),
            (0, "invoke", "cas", "[1 nil]"),
            (0, "ok", "cas", "[1 nil]"),
            (1, "invoke", "read", "nil"),
            (1, "ok", "read", "nil"),
        ]),
    );
    let check = |spec: &str, extra: &[&str], file: &str| {
        let mut argv = vec!["--spec", spec];
        argv.extend_from_slice(extra);
        argv.push(file);
        let r = kvsim(&d, &argv);
        (r.code, untimed(&r.stdout))
    };
    assert_eq!(check("cas-register", &[], "cas-from-nil.edn").0, 0);
    assert_eq!(check("cas-register", &[], "failed-cas-from-nil.edn").0, 0);
    assert_eq!(
        check(
            "cas-register",
            &["--fail-means", "compare-failed"],
            "failed-cas-from-nil.edn"
        ),
        (
            1,
            "failed-cas-from-nil.edn: violation _ ms: cas nil → 1 failed, but the register holds \
             nothing (process 0, cas at line 1; 0 operations linearized before it)"
                .to_string()
        )
    );
    assert_eq!(
        check("cas-register", &[], "cas-from-nil-when-written.edn"),
        (
            1,
            "cas-from-nil-when-written.edn: violation _ ms: cas nil → 1 succeeded, but the \
             register holds 2 (process 0, cas at line 3; 1 operations linearized before it)"
                .to_string()
        )
    );
    for spec in ["register", "cas-register"] {
        assert_eq!(check(spec, &[], "write-nil.edn").0, 0, "{spec}");
    }
    assert_eq!(check("cas-register", &[], "cas-to-nil.edn").0, 0);
}

/// A queue file's `enqueue nil` is refused: an `ok` dequeue of nil says the queue was
/// empty, so the history would not say what it means.
#[test]
fn a_queue_refuses_an_enqueue_of_nil() {
    let d = dir("queue-nil");
    write(
        &d,
        "q.edn",
        "{:process 0, :type :invoke, :f :enqueue, :value nil}\n{:process 0, :type :ok, :f :enqueue, :value nil}\n",
    );
    let r = kvsim(&d, &["--spec", "queue", "q.edn"]);
    assert_eq!(r.code, 2, "{}{}", r.stdout, r.stderr);
    assert_eq!(
        r.stderr.trim_end(),
        "kvsim: check-history: q.edn:1: expected an enqueued value other than nil (a dequeue \
         returning nil says the queue was empty), found nil"
    );
}

/// What check-history says about malformed values: an integer too large is called one
/// (not a float), invalid UTF-8 names its line, and a jsonl file is answered in JSON
/// terms (`"incr"`, `null`, `[1, null]`), never EDN's.
#[test]
fn malformed_values_are_named_in_the_files_own_terms() {
    let d = dir("messages");
    let big = "123456789012345678901234567890";
    let w = |v: &str| {
        format!("{{\"process\": 0, \"type\": \"invoke\", \"f\": \"write\", \"value\": {v}}}\n")
    };
    write(&d, "big.jsonl", &w(big));
    write(&d, "u64.jsonl", &w("18446744073709551615"));
    write(&d, "float.jsonl", &w("1.5"));
    write(
        &d,
        "big.edn",
        &format!("{{:process 0, :type :invoke, :f :write, :value {big}}}\n"),
    );
    write(
        &d,
        "incr.jsonl",
        "{\"process\": 0, \"type\": \"invoke\", \"f\": \"incr\", \"value\": 1}\n",
    );
    write(
        &d,
        "incr.edn",
        "{:process 0, :type :invoke, :f :incr, :value 1}\n",
    );
    write(
        &d,
        "cas.jsonl",
        "{\"process\": 0, \"type\": \"invoke\", \"f\": \"cas\", \"value\": {\"a\": [1, null]}}\n",
    );
    write(
        &d,
        "enqueue.jsonl",
        "{\"process\": 0, \"type\": \"invoke\", \"f\": \"enqueue\", \"value\": null}\n",
    );
    write(&d, "array.jsonl", "[1, 2]\n");
    std::fs::write(
        d.join("latin1.jsonl"),
        b"{\"process\": 0, \"type\": \"invoke\", \"f\": \"write\", \"value\": \"a\"}\n\
          {\"process\": 0, \"type\": \"ok\", \"f\": \"write\", \"value\": \"caf\xe9\"}\n",
    )
    .expect("write");
    std::fs::write(d.join("latin1.edn"), b"; a comment\n\n{:f \xe9}\n").expect("write");
    let mut text = String::new();
    for (spec, file) in [
        ("register", "big.jsonl"),
        ("register", "u64.jsonl"),
        ("register", "float.jsonl"),
        ("register", "big.edn"),
        ("register", "incr.jsonl"),
        ("register", "incr.edn"),
        ("cas-register", "cas.jsonl"),
        ("queue", "enqueue.jsonl"),
        ("register", "array.jsonl"), // guessed from its `[`: an EDN vector
        ("register --format jsonl", "array.jsonl"),
        ("register", "latin1.jsonl"),
        ("register", "latin1.edn"),
    ] {
        let mut argv = vec!["--spec"];
        argv.extend(spec.split(' '));
        argv.push(file);
        let r = kvsim(&d, &argv);
        assert_eq!(r.code, 2, "{file}: {}{}", r.stdout, r.stderr);
        text.push_str(&r.stderr);
    }
    insta::assert_snapshot!(text);
}
