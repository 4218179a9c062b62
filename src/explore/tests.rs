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
                .map(|m| (m.label.as_ref(), m.time_ms))
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

/// [`Lease`] with its clients declared interchangeable: the bridge reduces by symmetry and
/// seeds random numbers by operation start.
struct SymmetricLease;

impl Model for SymmetricLease {
    type Op = u8;
    type Ret = u64;

    async fn setup<K: Kv>(&self, kv: &K) -> Result<(), KvError> {
        Lease.setup(kv).await
    }

    async fn run<K: Kv>(&self, kv: &K, client: usize, op: &u8) -> Result<u64, KvError> {
        Lease.run(kv, client, op).await
    }

    fn op(&self, client: usize, index: usize, rng: &mut SimRng) -> u8 {
        Lease.op(client, index, rng)
    }

    fn interchangeable_clients(&self) -> bool {
        true
    }

    fn check(&self, history: &History<u8, u64>) -> Verdict {
        Lease.check(history)
    }
}

#[test]
fn random_paths_of_the_bridge_replay_identically_in_the_simulator() {
    replay_random_paths(Arc::new(Lease));
}

#[test]
fn random_paths_of_a_symmetric_bridge_replay_identically_in_the_simulator() {
    replay_random_paths(Arc::new(SymmetricLease));
}

fn mirror(a: &Action) -> Action {
    let m = |c: usize| 1 - c;
    match a {
        Action::Start(c, i, alt) => Action::Start(m(*c), *i, *alt),
        Action::Step(c) => Action::Step(m(*c)),
        Action::Fault(f) => {
            let mut f = f.clone();
            if let Some(c) = f.client_mut() {
                *c = m(*c);
            }
            Action::Fault(f)
        }
    }
}

fn hash_of<T: std::hash::Hash>(t: &T) -> u64 {
    use std::hash::{BuildHasher, BuildHasherDefault};
    BuildHasherDefault::<std::hash::DefaultHasher>::default().hash_one(t)
}

/// Two interchangeable clients: a random path and its mirror image (every action's client
/// swapped) pass through states that hash alike, step for step, while a path whose
/// clients run different operations does not merge with its mirror.
#[test]
fn a_path_and_its_mirror_image_hash_alike_under_symmetry() {
    let kinds = [
        FaultKind::Evict,
        FaultKind::Expire,
        FaultKind::Restart,
        FaultKind::Crash,
        FaultKind::Lose,
        FaultKind::Pause,
        FaultKind::Delay,
    ];
    let mut rng = SimRng::new(11);
    let (mut compared, mut told_apart) = (0, 0);
    for round in 0..200u64 {
        let mut scope = Scope::new(2, 2);
        scope.seed = round;
        scope.config.timeout_ms = if round % 2 == 0 { 400 } else { 0 };
        scope.faults = kinds.iter().map(|k| (*k, 2)).collect();
        scope.horizon_ms = 60_000;
        scope.max_op_steps = 200;
        let bridge = Bridge::new(
            Arc::new(SymmetricLease),
            &scope,
            Arc::new(Guard::new(usize::MAX, u64::MAX)),
        )
        .expect("a small workload");
        assert!(bridge.cfg.rng_by_start, "the clients are interchangeable");
        let mut s = bridge.init_states().remove(0);
        let mut t = s.clone();
        loop {
            let mut actions = Vec::new();
            bridge.actions(&s, &mut actions);
            if actions.is_empty() {
                break;
            }
            let a = actions[rng.index(actions.len())].clone();
            let mut mirrored = Vec::new();
            bridge.actions(&t, &mut mirrored);
            assert!(
                mirrored.contains(&mirror(&a)),
                "round {round}: {a:?} mirrored is enabled"
            );
            s = bridge.next_state(&s, a.clone()).expect("a state");
            t = bridge.next_state(&t, mirror(&a)).expect("a state");
            assert_eq!(hash_of(&s), hash_of(&t), "round {round}: after {a:?}");
            compared += 1;
            // The clients' current operations, when both started: different ones make
            // the states different, not only permuted.
            let alt = |w: &super::State<u8, u64>, c: usize| w.clients[c].rec.alt;
            if s.clients
                .iter()
                .all(|c| c.op_index == 0 && c.rec.ordinal.is_some())
                && alt(&s, 0) != alt(&s, 1)
            {
                let mut swapped = s.clone();
                swapped.clients.swap(0, 1);
                told_apart += (hash_of(&swapped) != hash_of(&s)) as u32;
            }
        }
    }
    assert!(compared > 2_000, "{compared} steps compared");
    assert!(told_apart > 0, "a swap of different clients was seen");
}

fn replay_random_paths<M: Explorable<Op = u8, Ret = u64>>(model: Arc<M>) {
    let kinds = [
        FaultKind::Evict,
        FaultKind::Expire,
        FaultKind::Skew,
        FaultKind::Restart,
        FaultKind::Crash,
        FaultKind::Lose,
        FaultKind::Pause,
        FaultKind::Delay,
    ];
    let mut rng = SimRng::new(7);
    let mut faults_taken = 0;
    for round in 0..300u64 {
        let mut scope = Scope::new(2 + (round % 2) as usize, 2);
        scope.seed = round;
        // Every third round, lost and late calls cost their clients a timeout.
        scope.config.timeout_ms = if round % 3 == 0 { 700 } else { 0 };
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
            // The digests kept beside the history are its operations' after every step
            // (marks, returns, crashes, runs of invocations reordered).
            assert_eq!(
                &*next.op_digests,
                &super::canon::fresh_op_digests(&next.history)[..],
                "round {round}: after {a:?}"
            );
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
            shape::<M>(&out.history),
            shape::<M>(&s.history),
            "round {round}: same history"
        );
    }
    assert!(faults_taken > 300, "faults were exercised ({faults_taken})");
}

/// Clients that touch their own keys and a shared one, with every kind of command the
/// sleep sets tell apart: reads, failed and successful writes, marks, sleeps.
struct Mixed;

impl Model for Mixed {
    type Op = u8;
    type Ret = u64;

    async fn setup<K: Kv>(&self, kv: &K) -> Result<(), KvError> {
        kv.set(b"shared", b"0", 0).await.map(|_| ())
    }

    async fn run<K: Kv>(&self, kv: &K, client: usize, op: &u8) -> Result<u64, KvError> {
        let own = format!("k{client}");
        match op % 4 {
            0 => {
                kv.add(own.as_bytes(), b"1", 0).await?;
                Ok(kv.incr(own.as_bytes(), 1).await?.unwrap_or(0))
            }
            1 => {
                kv.mark("read");
                let n = kv.get(b"shared").await?.map_or(0, |d| d.len() as u64);
                kv.append(b"shared", b"x").await?;
                Ok(n)
            }
            2 => {
                kv.sleep_ms(5).await;
                Ok(u64::from(kv.delete(own.as_bytes()).await?))
            }
            _ => {
                let taken = kv.add(b"lock", b"1", 0).await? == StoreOutcome::Stored;
                if taken {
                    kv.delete(b"lock").await?;
                }
                Ok(u64::from(taken))
            }
        }
    }

    fn op(&self, _client: usize, index: usize, rng: &mut SimRng) -> u8 {
        (rng.below(4) + index as u64) as u8
    }

    fn interchangeable_clients(&self) -> bool {
        true
    }

    fn check(&self, _history: &History<u8, u64>) -> Verdict {
        Verdict::Ok
    }
}

/// The independence relation of the sleep sets against the states themselves: at every
/// reachable state of time-free scopes (with and without symmetry, with the fairness rule
/// able to force a step and not), every pair of steps the relation says commute reaches
/// one fingerprint in both orders; and the relation does say so of many pairs.
#[test]
fn every_pair_of_steps_the_sleep_sets_take_as_commuting_reaches_one_state_both_ways() {
    use super::dfs::fingerprint;
    let mut accepted = 0;
    for (clients, ops, symmetry, step_ms) in [(2, 2, false, 1), (3, 1, true, 1), (2, 2, true, 30)] {
        let mut scope = Scope::new(clients, ops);
        scope.times = false;
        scope.symmetry = symmetry;
        scope.config.step_ms = step_ms;
        let bridge = Bridge::new(
            Arc::new(Mixed),
            &scope,
            Arc::new(Guard::new(usize::MAX, u64::MAX)),
        )
        .expect("a small workload")
        .reducing(true);
        assert!(
            super::dfs::Successors::reduces(&bridge),
            "{clients} × {ops}: a time-free scope reduces"
        );
        let mut seen = std::collections::HashSet::new();
        let mut stack = bridge.init_states();
        while let Some(s) = stack.pop() {
            if !seen.insert(fingerprint(&s)) {
                continue;
            }
            for (why_not, same) in bridge.audit(&s) {
                assert!(
                    why_not.is_some() || same,
                    "{clients} × {ops}: a pair taken as commuting reaches two states"
                );
                accepted += usize::from(why_not.is_none());
            }
            let mut actions = Vec::new();
            bridge.actions(&s, &mut actions);
            for a in actions {
                stack.extend(bridge.next_state(&s, a));
            }
            assert!(seen.len() < 200_000, "the scope stays small");
        }
    }
    assert!(accepted > 1_000, "{accepted} pairs taken as commuting");
}

/// A search with sleep sets visits the very states of one without, on one thread and on
/// two, and generates fewer: exactly as many fewer as the steps it left asleep.
#[test]
fn sleep_sets_visit_the_same_states_and_count_the_steps_they_leave_out() {
    for (clients, ops, symmetry) in [(2, 2, false), (3, 1, true), (2, 2, true)] {
        let mut scope = Scope::new(clients, ops);
        scope.times = false;
        scope.symmetry = symmetry;
        let plain = super::explore(Arc::new(Mixed), &scope, &super::SearchLimits::default());
        assert_eq!(plain.verdict, Verdict::Ok, "{clients} × {ops}");
        assert!(plain.time_free, "{clients} × {ops}");
        assert!(!plain.reduced);
        for threads in [1, 2] {
            let limits = super::SearchLimits {
                reduction: true,
                threads,
                ..super::SearchLimits::default()
            };
            let reduced = super::explore(Arc::new(Mixed), &scope, &limits);
            let at = format!("{clients} × {ops}, {threads} threads");
            assert!(reduced.reduced, "{at}");
            assert_eq!(reduced.verdict, Verdict::Ok, "{at}");
            assert_eq!(reduced.unique_states, plain.unique_states, "{at}");
            assert_eq!(
                reduced.total_states + reduced.slept,
                plain.total_states,
                "{at}"
            );
            assert!(reduced.slept > 0, "{at}: some steps slept");
        }
    }
}
