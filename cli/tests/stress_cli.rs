//! `kvsim stress` through the binary, against real memcached (skipped when memcached is not
//! installed, unless `KVSIM_REQUIRE_MEMCACHED=1`): no evidence, no pass; a namespace of
//! its own per run; `--history-out` for `check-history`; the checker's limits as flags.

use kvsim::net::MemcachedProcess;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

mod cli;
use cli::{kvsim, text};

/// A loopback port nothing listens on.
fn closed_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

#[test]
fn a_closed_port_is_an_error_before_any_operation() {
    let addr = format!("127.0.0.1:{}", closed_port());
    let out = kvsim(&["stress", "counter/published", "--server", &addr]);
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert_eq!(out.status.code(), Some(2), "{stdout}{stderr}");
    assert!(
        stderr.contains(&format!("cannot reach server {addr}: connection refused")),
        "{stderr}"
    );
    assert!(!stdout.contains("verdict"), "{stdout}");
}

#[test]
fn degenerate_scopes_and_limits_are_usage_errors() {
    let addr = format!("127.0.0.1:{}", closed_port());
    for (flag, value) in [
        ("--ops", "0"),
        ("--threads", "0"),
        ("--timeout", "0"),
        ("--duration", "0"),
        ("--check-time-limit", "0"),
        ("--check-max-steps", "0"),
    ] {
        let out = kvsim(&["stress", "counter/fixed", "--server", &addr, flag, value]);
        let stderr = text(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{flag} {value}: {stderr}");
        assert!(stderr.contains(&format!("bad {flag} 0")), "{stderr}");
    }
}

/// Starts `kvsim stress TARGET` with a long duration against a memcached, kills the
/// memcached after a second, and returns how long stress took to end after that, and its
/// output.
fn kill_mid_run(target: &str) -> Option<(Duration, Output)> {
    let mc = MemcachedProcess::for_test("stress_cli", &[])?;
    let child = Command::new(env!("CARGO_BIN_EXE_kvsim"))
        .args(["stress", target, "--server", &mc.addr()])
        .args(["--duration", "60", "--timeout", "1", "--stagger-ms", "2"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("kvsim starts");
    std::thread::sleep(Duration::from_secs(1));
    drop(mc); // kills it
    let killed = Instant::now();
    let out = child.wait_with_output().expect("kvsim ends");
    Some((killed.elapsed(), out))
}

#[test]
fn a_server_killed_mid_run_ends_the_run_within_the_timeout_and_never_passes() {
    // lock/fixed, spinlock/fixed and event-log/fixed retry lost connections for ever;
    // counter/published does not.
    for target in [
        "lock/fixed",
        "spinlock/fixed",
        "event-log/fixed",
        "counter/published",
    ] {
        let Some((after, out)) = kill_mid_run(target) else {
            return;
        };
        let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
        // --timeout 1: the server is declared dead 1 s after its first failure; then the
        // check of a few thousand operations. A run that did not notice would go on to its
        // 60 s duration: the bound sits far between the two, so that a loaded machine
        // never fails it (no test depends on the machine's speed).
        assert!(
            after < Duration::from_secs(30),
            "{target}: ended {after:?} after the kill\n{stdout}{stderr}"
        );
        assert_eq!(out.status.code(), Some(3), "{target}: {stdout}{stderr}");
        assert!(
            stdout.contains("verdict: unknown: the run was cut short: server 127.0.0.1:"),
            "{target}: {stdout}"
        );
        assert!(
            stdout.contains(" ok, 0 failed, ") && stdout.contains(" unknown\n"),
            "{target}: {stdout}"
        );
    }
}

#[test]
fn two_runs_against_the_same_server_do_not_see_each_others_keys() {
    let Some(mc) = MemcachedProcess::for_test("stress_cli", &[]) else {
        return;
    };
    let mut prefixes = Vec::new();
    for _ in 0..2 {
        let out = kvsim(&[
            "stress",
            "fifo/fixed",
            "--server",
            &mc.addr(),
            // A history small enough that the queue checker always decides it (4 × 50
            // operations on a loaded machine can overlap enough to reach its step limit:
            // `unknown`, exit 3).
            "--threads",
            "2",
            "--ops",
            "20",
        ]);
        let stdout = text(&out.stdout);
        assert_eq!(out.status.code(), Some(0), "{stdout}{}", text(&out.stderr));
        let prefix = stdout
            .lines()
            .find_map(|l| l.trim().strip_prefix("key prefix "))
            .expect("the prefix is printed")
            .to_string();
        assert!(prefix.starts_with("\"kvsim.0."), "{prefix}");
        prefixes.push(prefix);
    }
    assert_ne!(prefixes[0], prefixes[1]);
}

#[test]
fn history_out_round_trips_through_check_history() {
    let Some(mc) = MemcachedProcess::for_test("stress_cli", &[]) else {
        return;
    };
    let dir = std::env::temp_dir().join(format!("kvsim-stress-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    // fifo/published breaks without faults (a violation); fifo/fixed and table/fixed pass.
    // The time-window specs take the structure's parameters, and the history's times are
    // the clients' epoch clock (a visitor counter's periods are `now / T`).
    for (target, spec, ops) in [
        ("fifo/published", "queue", "15"),
        ("fifo/fixed", "queue", "15"),
        ("table/fixed", "set", "15"),
        ("counter/fixed", "counter", "15"),
        ("lock/fixed", "counter", "15"),
        ("visitor-counter/fixed", "visitor-counter --period 2", "4"),
        ("event-log/fixed", "event-log --window 10", "4"),
    ] {
        let file = dir.join(format!("{}.jsonl", target.replace('/', "-")));
        let file = file.to_str().unwrap();
        let out = kvsim(&[
            "stress",
            target,
            "--server",
            &mc.addr(),
            // Small enough that both checkers always decide it: 4 × 40 queue operations
            // on a loaded machine can overlap enough that stress's step limit is hit
            // (`unknown`) where check-history, without one, goes on to `ok`.
            "--threads",
            "2",
            "--ops",
            ops,
            "--history-out",
            file,
        ]);
        let stdout = text(&out.stdout);
        assert!(
            stdout.contains(&format!("kvsim check-history --spec {spec} {file}")),
            "{stdout}"
        );
        let mut args = vec!["check-history", "--spec"];
        args.extend(spec.split(' '));
        args.push(file);
        let checked = kvsim(&args);
        assert_eq!(
            checked.status.code(),
            out.status.code(),
            "{target}: stress said\n{stdout}check-history said\n{}{}",
            text(&checked.stdout),
            text(&checked.stderr)
        );
        if target == "fifo/published" {
            assert_eq!(out.status.code(), Some(1), "{stdout}");
        }
    }
    // A model no spec reads: written anyway, with Debug text, and said so.
    let file = dir.join("array-append.jsonl");
    let out = kvsim(&[
        "stress",
        "array-append/fixed",
        "--server",
        &mc.addr(),
        "--ops",
        "5",
        "--history-out",
        file.to_str().unwrap(),
    ]);
    assert!(text(&out.stdout).contains("no check-history spec reads"));
    let written = std::fs::read_to_string(&file).unwrap();
    assert_eq!(written.lines().count(), 4 * 5 * 2, "{written}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// Every registered target can be stressed: the registry is the one list of models
/// (`kvsim stress` keeps none of its own), and a run gives a verdict, never a usage error.
#[test]
fn every_registered_target_can_be_stressed() {
    let Some(mc) = MemcachedProcess::for_test("stress_cli", &[]) else {
        return;
    };
    for entry in kvsim_models::registry::registry() {
        // Every variant, repaired ones (`fifo/published+dequeue-next`) included.
        for (_, t) in &entry.variants {
            let target = t.name().to_string();
            let out = kvsim(&[
                "stress",
                &target,
                "--server",
                &mc.addr(),
                "--threads",
                "2",
                "--ops",
                "3",
            ]);
            let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
            assert!(
                matches!(out.status.code(), Some(0 | 1 | 3)),
                "{target}: {stdout}{stderr}"
            );
            assert!(
                stdout.starts_with(&format!("kvsim stress: {target} against ")),
                "{stdout}"
            );
            assert!(stdout.contains("  verdict: "), "{target}: {stdout}");
        }
    }
}

#[test]
fn a_checker_limit_hit_is_unknown() {
    let Some(mc) = MemcachedProcess::for_test("stress_cli", &[]) else {
        return;
    };
    // The table (a set of three members, added and deleted again) has no polynomial
    // check: the general search judges it, within the step limit.
    let args = [
        "stress",
        "table/fixed",
        "--server",
        &mc.addr(),
        "--ops",
        "50",
    ];
    let out = kvsim(&[&args[..], &["--check-max-steps", "1"]].concat());
    let stdout = text(&out.stdout);
    assert_eq!(out.status.code(), Some(3), "{stdout}");
    assert!(stdout.contains("verdict: unknown"), "{stdout}");
    let out = kvsim(&args);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stdout));
}

/// 4 threads × 1000 operations of the fixed FIFO against a healthy memcached: the general
/// search ran out of steps (unknown, 1.7 GB); the unique-value queue check settles it.
#[test]
fn a_long_fifo_run_gets_a_verdict() {
    let Some(mc) = MemcachedProcess::for_test("stress_cli", &["-m", "64"]) else {
        return;
    };
    let out = kvsim(&[
        "stress",
        "fifo/fixed",
        "--server",
        &mc.addr(),
        "--threads",
        "4",
        "--ops",
        "1000",
    ]);
    let stdout = text(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}{}", text(&out.stderr));
    assert!(
        stdout.contains("4000 operations in") && stdout.contains("  verdict: ok\n"),
        "{stdout}"
    );
}

/// The published FIFO hands out the dummy node's empty data first: the queue check's
/// VFresh pattern, at once.
#[test]
fn the_published_fifo_is_still_a_violation() {
    let Some(mc) = MemcachedProcess::for_test("stress_cli", &[]) else {
        return;
    };
    let out = kvsim(&[
        "stress",
        "fifo/published",
        "--server",
        &mc.addr(),
        "--ops",
        "200",
    ]);
    let stdout = text(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{stdout}");
    assert!(
        stdout.contains(
            "verdict: violation: linearizability (queue): dequeue returned \"\", which no \
             enqueue put in the queue"
        ),
        "{stdout}"
    );
}

/// A history that fills its half of --max-memory stops the run: unknown, naming the
/// bound and the flag (the operations recorded are still checked).
#[test]
fn a_history_past_the_memory_bound_is_unknown() {
    let Some(mc) = MemcachedProcess::for_test("stress_cli", &[]) else {
        return;
    };
    let out = kvsim(&[
        "stress",
        "counter/fixed",
        "--server",
        &mc.addr(),
        "--ops",
        "100000",
        "--max-memory",
        "2",
    ]);
    let stdout = text(&out.stdout);
    assert_eq!(out.status.code(), Some(3), "{stdout}{}", text(&out.stderr));
    let per_op = kvsim::net::op_bytes::<kvsim_models::counter::Op, kvsim_models::counter::Ret>();
    let held = (2u64 << 20) / 2 / per_op;
    assert!(
        stdout.contains(&format!(
            "verdict: unknown: the run was cut short: the history reached its memory bound \
             of 1 MiB ({held} operations; raise it with --max-memory); the operations \
             recorded check ok"
        )),
        "{stdout}"
    );
    assert!(
        stdout.contains(&format!("  {held} operations in ")),
        "{stdout}"
    );
}
