//! Exhaustive search of two small counters: a get-then-set counter (lost update) must
//! yield its shortest counterexample, an incr counter must verify; both replay in the
//! simulator with the same verdict.

use kvsim::explore::{self, Scope, SearchLimits};
use kvsim::harness::target::{ModelTarget, Target};
use kvsim::sim::Token;
use kvsim::Model;
use kvsim::SimRng;
use kvsim::{History, Outcome};
use kvsim::{Kv, KvError};
use kvsim::{Verdict, Violation};
use std::sync::Arc;

/// Fetch-and-increment: each operation returns the counter's new value.
struct Counter {
    atomic: bool,
}

const KEY: &[u8] = b"count";

impl Model for Counter {
    type Op = ();
    type Ret = u64;

    async fn setup<K: Kv>(&self, kv: &K) -> Result<(), KvError> {
        kv.set(KEY, b"0", 0).await?;
        Ok(())
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

    /// Linearizable fetch-and-increment without faults: the completed operations returned
    /// 1..=n, each once, in an order that respects real time.
    fn check(&self, history: &History<(), u64>) -> Verdict {
        let mut rets: Vec<(usize, u64)> = Vec::new();
        for (i, op) in history.ops.iter().enumerate() {
            if let Outcome::Ok(r) = op.outcome {
                rets.push((i, r));
            }
        }
        let mut values: Vec<u64> = rets.iter().map(|(_, r)| *r).collect();
        values.sort_unstable();
        for (k, v) in values.iter().enumerate() {
            if *v != k as u64 + 1 {
                let dup: Vec<usize> = rets
                    .iter()
                    .filter(|(_, r)| r == v)
                    .map(|(i, _)| *i)
                    .collect();
                return Verdict::Violation(Violation::new(
                    "linearizability",
                    format!("two increments both returned {v}: an update was lost"),
                    dup,
                ));
            }
        }
        for &(a, ra) in &rets {
            for &(b, rb) in &rets {
                if history.ops[a].precedes(&history.ops[b]) && ra > rb {
                    return Verdict::Violation(Violation::new(
                        "linearizability",
                        format!("an earlier increment returned {ra}, a later one {rb}"),
                        vec![a, b],
                    ));
                }
            }
        }
        Verdict::Ok
    }
}

#[test]
fn the_get_then_set_counter_loses_an_update_in_the_shortest_counterexample() {
    let target = ModelTarget::new("counter/getset", Counter { atomic: false });
    let report = target.explore(&Scope::new(2, 1), &SearchLimits::default());
    let Verdict::Violation(v) = &report.verdict else {
        panic!("expected a violation, found {}", report.verdict)
    };
    assert_eq!(
        v.reason,
        "two increments both returned 1: an update was lost"
    );
    let cx = report.counterexample.as_ref().expect("a counterexample");
    // Start, get (C0), start, get (C1), set, set: both read 0 before either writes.
    assert_eq!(cx.choices.len(), 6, "choices {:?}", cx.choices);
    assert_eq!(cx.verdict, report.verdict, "the simulator's replay agrees");
    let token = Token::decode(report.token.as_deref().expect("a token")).expect("decodes");
    assert_eq!(token.target, "counter/getset");
    let replayed = target.run(
        &token.scenario,
        &token.config,
        token.seed,
        token.choices.as_deref(),
    );
    assert_eq!(replayed.verdict, report.verdict);
    assert_eq!(replayed.trace, cx.trace);
    insta::assert_snapshot!(kvsim::report::text(cx));
}

#[test]
fn the_incr_counter_verifies_exhaustively() {
    let model = Arc::new(Counter { atomic: true });
    for (clients, ops, unique) in [(2, 1, 14), (2, 2, 134), (3, 2, 24_272)] {
        let mut scope = Scope::new(clients, ops);
        scope.times = false;
        let found = explore::explore(Arc::clone(&model), &scope, &SearchLimits::default());
        assert_eq!(found.verdict, Verdict::Ok, "{clients}×{ops}");
        assert_eq!(found.counterexample, None);
        assert_eq!(found.bound, None);
        assert_eq!(found.unique_states, unique, "{clients}×{ops}");
    }
}

#[test]
fn the_get_then_set_counter_is_fine_with_one_client() {
    let found = explore::explore(
        Arc::new(Counter { atomic: false }),
        &Scope::new(1, 3),
        &SearchLimits::default(),
    );
    assert_eq!(found.verdict, Verdict::Ok);
    assert_eq!(found.max_depth, 10);
}

#[test]
fn a_state_bound_ends_unknown_and_names_the_bound() {
    let limits = SearchLimits {
        max_states: 50,
        ..SearchLimits::default()
    };
    let found = explore::explore(
        Arc::new(Counter { atomic: true }),
        &Scope::new(3, 3),
        &limits,
    );
    let Verdict::Unknown(why) = &found.verdict else {
        panic!("expected unknown, found {}", found.verdict)
    };
    assert!(
        why.starts_with("state bound reached: 50 states generated"),
        "{why}"
    );
    assert_eq!(found.bound.as_deref(), Some(why.as_str()));
}
