//! `kvsim::Explore` from `cargo test`: a user's own model searched exhaustively, with
//! `assert_ok` / `assert_violation` and `kvsim explore`'s report.

use kvsim::Explore;
use kvsim::FaultKind;
use kvsim::Model;
use kvsim::SimRng;
use kvsim::{History, Outcome};
use kvsim::{Kv, KvError};
use kvsim::{Verdict, Violation};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::time::Duration;

/// Fetch-and-increment: get-then-set (loses updates) or `incr` (atomic).
struct Counter {
    atomic: bool,
}

const KEY: &[u8] = b"count";

impl Model for Counter {
    type Op = ();
    type Ret = u64;

    async fn setup<K: Kv>(&self, kv: &K) -> Result<(), KvError> {
        kv.set(KEY, b"0", 0).await.map(|_| ())
    }

    async fn run<K: Kv>(&self, kv: &K, _client: usize, _op: &()) -> Result<u64, KvError> {
        if self.atomic {
            return Ok(kv.incr(KEY, 1).await?.unwrap_or(0));
        }
        let v: u64 = match kv.get(KEY).await? {
            Some(d) => String::from_utf8_lossy(&d).trim().parse().unwrap_or(0),
            None => 0,
        };
        kv.set(KEY, (v + 1).to_string().as_bytes(), 0).await?;
        Ok(v + 1)
    }

    fn op(&self, _client: usize, _index: usize, _rng: &mut SimRng) {}

    /// Without faults, completed increments return distinct values.
    fn check(&self, history: &History<(), u64>) -> Verdict {
        let mut seen = std::collections::BTreeSet::new();
        for (i, op) in history.ops.iter().enumerate() {
            if let Outcome::Ok(v) = op.outcome {
                if !seen.insert(v) {
                    return Verdict::Violation(Violation::new(
                        "linearizability",
                        format!("two increments returned {v}: an update was lost"),
                        vec![i],
                    ));
                }
            }
        }
        Verdict::Ok
    }
}

fn panic_text(f: impl FnOnce()) -> String {
    let err = catch_unwind(AssertUnwindSafe(f)).expect_err("expected a panic");
    err.downcast_ref::<String>()
        .cloned()
        .or_else(|| err.downcast_ref::<&str>().map(|s| s.to_string()))
        .unwrap_or_default()
}

#[test]
fn the_get_then_set_counter_is_a_violation_with_the_explore_report() {
    let explore = Explore::new("counter/getset", Counter { atomic: false })
        .clients(2)
        .ops(1);
    let outcome = explore.run();
    let cx = outcome.assert_violation();
    assert_eq!(cx.choices.len(), 6, "the shortest counterexample");
    let Verdict::Violation(v) = outcome.verdict() else {
        panic!("expected a violation")
    };
    assert_eq!(v.reason, "two increments returned 1: an update was lost");
    // The report is `kvsim explore`'s, with the replay in the test in place of the CLI's.
    let report = outcome.report();
    assert!(
        report.starts_with("kvsim explore counter/getset · 2 clients × 1 ops · faults none"),
        "{report}"
    );
    assert!(report.contains("  scope    1 workload: every operation each client can run\n"));
    assert!(report.contains(
        "  verdict  violation: linearizability: two increments returned 1: an update was lost\n"
    ));
    assert!(
        report.contains("\nshortest counterexample:\n\n"),
        "{report}"
    );
    let token = outcome.search.token.clone().expect("a token");
    assert!(
        report.contains(&format!("    explore.replay({token:?})\n")),
        "{report}"
    );
    assert!(!report.contains("kvsim replay "), "{report}");
    // assert_ok fails with that report.
    let msg = panic_text(|| outcome.assert_ok());
    assert!(
        msg.starts_with("kvsim: explore counter/getset (2 clients × 1 ops"),
        "{msg}"
    );
    assert!(msg.contains("found a violation"), "{msg}");
    assert!(msg.contains(&report), "{msg}");
    // The token replays here, with the same verdict.
    let again = explore.replay(&token).expect("this search's token");
    assert_eq!(again.verdict, *outcome.verdict());
    assert_eq!(again.trace, cx.trace);
    assert!(explore.replay("other/model:explore:AgE").is_err());
}

#[test]
fn the_incr_counter_is_ok_over_its_scope_with_lost_replies() {
    let outcome = Explore::new("counter/incr", Counter { atomic: true }).run();
    outcome.assert_ok();
    assert_eq!(outcome.search.horizon_cut + outcome.search.steps_cut, 0);
    assert!(outcome.search.unique_states > 0);
    let msg = panic_text(|| {
        outcome.assert_violation();
    });
    assert!(msg.contains("expected a violation, found ok"), "{msg}");

    // A lost reply: the increment was applied but its outcome is unknown; still ok.
    Explore::new("counter/incr", Counter { atomic: true })
        .ops(1)
        .fault(FaultKind::Lose, 1)
        .run()
        .assert_ok();
}

#[test]
fn assert_ok_on_a_state_bound_panics_naming_the_bound() {
    let outcome = Explore::new("counter/incr", Counter { atomic: true })
        .clients(3)
        .ops(3)
        .max_states(50)
        .run();
    assert!(matches!(outcome.verdict(), Verdict::Unknown(_)));
    let msg = panic_text(|| outcome.assert_ok());
    assert!(
        msg.contains("unknown, the scope was not covered: state bound reached: 50 states"),
        "{msg}"
    );
    assert!(msg.contains("raise it with Explore::max_states"), "{msg}");
}

#[test]
fn assert_ok_on_cut_paths_panics_naming_the_horizon() {
    let outcome = Explore::new("counter/incr", Counter { atomic: true })
        .horizon(Duration::from_millis(2))
        .run();
    let Verdict::Unknown(why) = outcome.verdict() else {
        panic!("expected unknown, found {}", outcome.verdict())
    };
    assert!(why.contains("cut by the time horizon of"), "{why}");
    let msg = panic_text(|| outcome.assert_ok());
    assert!(msg.contains(why.as_str()), "{msg}");
    assert!(msg.contains("raise it with Explore::horizon"), "{msg}");
    assert!(
        msg.contains("  verdict  unknown: "),
        "the report follows: {msg}"
    );
}

#[test]
fn a_scope_of_no_clients_is_refused_clearly() {
    let msg = panic_text(|| {
        let _ = Explore::new("counter/incr", Counter { atomic: true }).clients(0);
    });
    assert_eq!(msg, "kvsim::Explore: expected at least 1 client, found 0");
}
