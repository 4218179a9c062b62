//! The README's tutorial, "Check your own structure", compiled and run: a counter on
//! `incr` (created with `add` on first use), checked for linearizability under crashes
//! and lost replies, and the get-then-set version it replaces, which loses updates.

use kvsim::{
    linearizable, Check, CheckerLimits, CounterOp, CounterRet, CounterSpec, FaultKind, History, Kv,
    KvError, Model, Scenario, SimRng, Verdict,
};

// Beyond the README: the minimizer's own checks.
use kvsim::harness::shrink::{is_minimal, total_ops, ShrinkLimits};
use kvsim::harness::target::ModelTarget;

/// 1. The structure: plain async Rust against the KV trait.
async fn increment<K: Kv>(kv: &K) -> Result<i64, KvError> {
    loop {
        if let Some(n) = kv.incr(b"hits", 1).await? {
            return Ok(n as i64);
        }
        if kv.add(b"hits", b"1", 0).await?.is_stored() {
            return Ok(1);
        }
    }
}

async fn read<K: Kv>(kv: &K) -> Result<i64, KvError> {
    Ok(match kv.get(b"hits").await? {
        Some(v) => String::from_utf8_lossy(&v).trim().parse().unwrap_or(0),
        None => 0,
    })
}

/// 2. The model: operations, workload, property.
struct Hits;

impl Model for Hits {
    type Op = CounterOp;
    type Ret = CounterRet;

    async fn run<K: Kv>(
        &self,
        kv: &K,
        _client: usize,
        op: &CounterOp,
    ) -> Result<CounterRet, KvError> {
        match op {
            CounterOp::Read => Ok(CounterRet::Value(read(kv).await?)),
            _ => Ok(CounterRet::Value(increment(kv).await?)),
        }
    }

    fn op(&self, _client: usize, _index: usize, rng: &mut SimRng) -> CounterOp {
        if rng.chance(0.25) {
            CounterOp::Read
        } else {
            CounterOp::AddGet(1)
        }
    }

    fn check(&self, history: &History<CounterOp, CounterRet>) -> Verdict {
        linearizable(&CounterSpec, history, CheckerLimits::steps(1_000_000))
    }
}

/// 3. The gate: the same check, verdict and report as `kvsim check`.
#[test]
fn hits_survive_crashes_and_lost_replies() {
    let scenario = Scenario::new("crash-lose", 3, 4)
        .faults(&[FaultKind::Crash, FaultKind::Lose])
        .runs(1000);
    Check::new("hits/incr", Hits, scenario).run().assert_ok();
}

/// The counter the tutorial's replaces: get, then set. Another client can write between
/// the two calls, so increments are lost without any fault.
struct GetThenSet;

async fn get_then_set<K: Kv>(kv: &K) -> Result<i64, KvError> {
    let n = read(kv).await?;
    kv.set(b"hits", (n + 1).to_string().as_bytes(), 0).await?;
    Ok(n + 1)
}

impl Model for GetThenSet {
    type Op = CounterOp;
    type Ret = CounterRet;

    async fn run<K: Kv>(
        &self,
        kv: &K,
        client: usize,
        op: &CounterOp,
    ) -> Result<CounterRet, KvError> {
        match op {
            CounterOp::Read => Hits.run(kv, client, op).await,
            _ => Ok(CounterRet::Value(get_then_set(kv).await?)),
        }
    }

    fn op(&self, client: usize, index: usize, rng: &mut SimRng) -> CounterOp {
        Hits.op(client, index, rng)
    }

    fn check(&self, history: &History<CounterOp, CounterRet>) -> Verdict {
        Hits.check(history)
    }
}

/// The README's tutorial shows this file's code: each of its Rust blocks appears here
/// as it is (up to indentation and line breaks), so what a newcomer copies compiles.
#[test]
fn the_readme_tutorial_is_this_file() {
    let readme = include_str!("../README.md");
    let start = readme
        .find("## Check your own structure")
        .expect("the README has the tutorial");
    let section = &readme[start..];
    let section = &section[..section[3..].find("\n## ").map_or(section.len(), |e| e + 3)];
    let words = |s: &str| s.split_whitespace().collect::<Vec<_>>().join(" ");
    let here = words(include_str!("tutorial.rs"));
    let blocks: Vec<&str> = section
        .split("```rust")
        .skip(1)
        .map(|b| b.split("```").next().unwrap())
        .collect();
    assert!(
        blocks.len() >= 4,
        "the tutorial has its use lines, structure, model and gate"
    );
    for block in blocks {
        assert!(
            here.contains(&words(block)),
            "README block not in tests/tutorial.rs:\n{block}"
        );
    }
}

#[test]
fn get_then_set_loses_updates_and_the_report_says_so() {
    let scenario = Scenario::new("no-faults", 2, 2).runs(1000);
    let check = Check::new("hits/getset", GetThenSet, scenario);
    let outcome = check.run();
    let failure = outcome.assert_violation();
    let report = outcome.report().expect("a violation has a report");
    assert!(report.contains("linearizability"), "{report}");
    // How to replay it here, in the test: the CLI does not know this model.
    assert!(
        report.contains("check.replay(\"hits/getset:no-faults:"),
        "{report}"
    );
    assert!(!report.contains("kvsim replay"), "{report}");
    // The token replays the same run, step for step.
    let again = check
        .replay(&failure.token)
        .expect("a token we printed decodes");
    assert_eq!(again.trace, failure.trace);
    assert_eq!(again.verdict, failure.verdict);
}

/// A failing gate panics with the report and how to replay the run in the test
/// (`Check::replay`), never with a `kvsim replay` command for a model the CLI does not know.
#[test]
fn a_failing_gate_says_how_to_replay_it_in_the_test() {
    let scenario = Scenario::new("no-faults", 2, 2).runs(1000);
    let check = Check::new("hits/getset", GetThenSet, scenario);
    let outcome = check.run();
    let panic = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| outcome.assert_ok()))
        .expect_err("a violation fails the gate");
    let message = panic
        .downcast_ref::<String>()
        .expect("a formatted panic message")
        .clone();
    insta::assert_snapshot!(message);
    // The line it prints replays the run.
    let token = message
        .lines()
        .find_map(|l| l.trim().strip_prefix("check.replay(\""))
        .and_then(|l| l.strip_suffix("\")"))
        .expect("a replay line");
    let failure = outcome.failure().expect("a failing run");
    assert_eq!(token, failure.token);
    assert_eq!(check.replay(token).expect("decodes").trace, failure.trace);
    // A token of another target is refused, not replayed on this model.
    let other = kvsim::sim::Token {
        target: "hits/incr".into(),
        ..kvsim::sim::Token::decode(token).unwrap()
    }
    .encode();
    assert_eq!(
        check.replay(&other).unwrap_err().to_string(),
        "bad replay token: expected a token of hits/getset, found one of hits/incr"
    );
}

/// A gate's failure comes out minimized, as `kvsim check TARGET` prints it: fewer clients
/// and operations than the run that failed first, and no smaller run fails the same way.
#[test]
fn a_gate_reports_its_failure_minimized() {
    let scenario = Scenario::new("no-faults", 3, 4).runs(1000);
    let raw = Check::new("hits/getset", GetThenSet, scenario.clone())
        .no_shrink()
        .run();
    let small = Check::new("hits/getset", GetThenSet, scenario).run();
    let (raw, small) = (raw.assert_violation(), small.assert_violation());
    assert!(raw.shrink.is_none());
    assert!(small.shrink.is_some(), "the report says how far it shrank");
    assert!(total_ops(&small.config) < total_ops(&raw.config));
    assert_eq!(small.verdict.is_violation(), raw.verdict.is_violation());
    let target = ModelTarget::new("hits/getset", GetThenSet);
    is_minimal(&target, small, &ShrinkLimits::default()).expect("nothing smaller fails");
}
