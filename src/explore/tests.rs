//! The bridge against the simulator: random paths of the bridge, with every fault kind,
//! replayed in the simulator from their choices, give the same history.

use super::bridge::{Action, Bridge};
use super::guard::Guard;
use super::{Explorable, Scope};
use crate::history::{History, Outcome};
use crate::kv::{Kv, KvError, StoreOutcome};
use crate::model::Model;
use crate::rng::SimRng;
use crate::scenario::FaultKind;
use crate::sim;
use crate::verdict::Verdict;
use stateright::Model as _;
use std::sync::Arc;

/// A lease lock that reads its clock, sleeps, marks its critical section and retries.
struct Lease;

impl Model for Lease {
    type Op = u8;
    type Ret = u64;

    async fn setup<K: Kv>(&self, kv: &K) -> Result<(), KvError> {
        kv.set(b"n", b"0", 0).await.map(|_| ())
    }

    async fn run<K: Kv>(&self, kv: &K, _client: usize, op: &u8) -> Result<u64, KvError> {
        let me = format!("{}", kv.now_ms() % 1000 + *op as u64);
        for _ in 0..3 {
            if kv.add(b"lock", me.as_bytes(), 1).await? == StoreOutcome::Stored {
                kv.mark("enter");
                let n: u64 = match kv.get(b"n").await? {
                    Some(d) => String::from_utf8_lossy(&d).trim().parse().unwrap_or(0),
                    None => 0,
                };
                kv.set(b"n", (n + 1).to_string().as_bytes(), 0).await?;
                kv.mark("exit");
                kv.delete(b"lock").await?;
                return Ok(n + 1);
            }
            kv.sleep_ms(300 + kv.random_u64() % 3).await;
        }
        Ok(0)
    }

    fn op(&self, _client: usize, index: usize, rng: &mut SimRng) -> u8 {
        (rng.below(5) + index as u64) as u8
    }

    fn check(&self, _history: &History<u8, u64>) -> Verdict {
        Verdict::Ok
    }
}

/// Per client, each operation's op, outcome, times and marks; and which operation
/// precedes which: everything of a history but the order of adjacent events.
fn shape<M: Explorable>(h: &History<M::Op, M::Ret>) -> (Vec<String>, Vec<(String, String)>) {
    let mut ops: Vec<String> = h
        .ops
        .iter()
        .map(|o| {
            let marks: Vec<(&str, u64)> = o
                .marks
                .iter()
                .map(|m| (m.label.as_str(), m.time_ms))
                .collect();
            let outcome = match (&o.outcome, o.ret) {
                (_, None) => "pending".to_string(),
                (Outcome::Ok(r), _) => format!("{r:?}"),
                (other, _) => format!("{other:?}"),
            };
            format!(
                "C{} {:?} {} {} {:?} {:?}",
                o.client, o.op, outcome, o.call_ms, o.ret_ms, marks
            )
        })
        .collect();
    ops.sort();
    let key = |i: usize| format!("C{} {}", h.ops[i].client, h.ops[i].call_ms);
    let mut pairs = Vec::new();
    for a in 0..h.ops.len() {
        for b in 0..h.ops.len() {
            if h.ops[a].precedes(&h.ops[b]) {
                pairs.push((a, b));
            }
        }
    }
    let mut named: Vec<(String, String)> = pairs.iter().map(|&(a, b)| (key(a), key(b))).collect();
    named.sort();
    (ops, named)
}

#[test]
fn random_paths_of_the_bridge_replay_identically_in_the_simulator() {
    let model = Arc::new(Lease);
    let kinds = [
        FaultKind::Evict,
        FaultKind::Expire,
        FaultKind::Skew,
        FaultKind::Restart,
        FaultKind::Crash,
        FaultKind::Lose,
        FaultKind::Pause,
    ];
    let mut rng = SimRng::new(7);
    let mut faults_taken = 0;
    for round in 0..300u64 {
        let mut scope = Scope::new(2 + (round % 2) as usize, 2);
        scope.seed = round;
        scope.faults = kinds.iter().map(|k| (*k, 2)).collect();
        scope.horizon_ms = 60_000;
        scope.max_op_steps = 200;
        let bridge = Bridge::new(
            Arc::clone(&model),
            &scope,
            Arc::new(Guard::new(usize::MAX, u64::MAX)),
        )
        .expect("a small workload");
        let mut s = bridge.init_states().remove(0);
        let mut path = Vec::new();
        loop {
            let mut actions = Vec::new();
            bridge.actions(&s, &mut actions);
            if actions.is_empty() {
                break;
            }
            // Faults one time in four, so that operations also complete.
            let faults: Vec<&Action> = actions
                .iter()
                .filter(|a| matches!(a, Action::Fault(_)))
                .collect();
            let steps: Vec<&Action> = actions
                .iter()
                .filter(|a| matches!(a, Action::Step(_) | Action::Start(..)))
                .collect();
            let a = if !faults.is_empty() && (steps.is_empty() || rng.chance(0.25)) {
                faults_taken += 1;
                faults[rng.index(faults.len())].clone()
            } else {
                steps[rng.index(steps.len())].clone()
            };
            let next = bridge.next_state(&s, a.clone()).expect("a state");
            path.push((s, Some(a)));
            s = next;
        }
        path.push((s.clone(), None));
        let choices = bridge.choices(&path);
        let mut cfg = bridge.cfg.clone();
        cfg.workload = bridge.workload(&path);
        let out = sim::run(&*model, &cfg, scope.seed, Some(&choices));
        assert_eq!(
            out.choices, choices,
            "round {round}: the simulator took the same choices"
        );
        assert_eq!(
            shape::<Lease>(&out.history),
            shape::<Lease>(&s.history),
            "round {round}: same history"
        );
    }
    assert!(faults_taken > 300, "faults were exercised ({faults_taken})");
}
