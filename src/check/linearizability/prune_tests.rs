//! Tests of the search's pruning ([`SequentialSpec::reachable`], here the kv spec's): it
//! changes the steps taken only, never the witness or the counterexample.

use super::budget::{Budget, Shared};
use super::search::{search_in, search_pruned, Found, Prune, Run};
use super::CheckerLimits;
use crate::history::{History, Operation, Outcome};
use crate::spec::SequentialSpec;
use crate::specs::kv::{KvOp, KvRet, KvSpec, Text};
use std::collections::BTreeMap;
use std::sync::Arc;

/// An operation of client `client` invoked at `call`, returning `outcome` at `ret`, or of
/// unknown outcome (no return) when `outcome` is `None`.
pub(super) fn op_at<Op, Ret>(
    client: usize,
    op: Op,
    call: u64,
    ret: u64,
    outcome: Option<Ret>,
) -> Operation<Op, Ret> {
    Operation {
        client,
        op,
        call,
        ret: outcome.is_some().then_some(ret),
        call_ms: 0,
        ret_ms: None,
        outcome: match outcome {
            Some(r) => Outcome::Ok(r),
            None => Outcome::Unknown,
        },
        marks: vec![],
    }
}

/// The search in plain mode without pruning, within `steps` (`None`: no bound).
pub(super) fn unpruned<S: SequentialSpec>(
    spec: &S,
    h: &History<S::Op, S::Ret>,
    steps: Option<u64>,
) -> Found {
    let all: Vec<usize> = (0..h.ops.len()).collect();
    let shared = Shared::new(CheckerLimits {
        max_steps: steps,
        ..CheckerLimits::none()
    });
    let mut budget = Budget::new(&shared);
    match search_in(spec, h, &all, &mut budget, false, Prune::Off) {
        Run::Done(found) => found,
        _ => panic!("plain mode without pruning ends"),
    }
}

/// The search with pruning (as `check_linearizability` runs it), within `steps`.
fn pruned(h: &History<KvOp, KvRet>, steps: Option<u64>) -> Found {
    let all: Vec<usize> = (0..h.ops.len()).collect();
    let shared = Shared::new(CheckerLimits {
        max_steps: steps,
        ..CheckerLimits::none()
    });
    let mut budget = Budget::new(&shared);
    search_pruned(&KvSpec, h, &all, &mut budget)
}

fn kind(f: &Found) -> &'static str {
    match f {
        Found::Ok(_) => "ok",
        Found::Violation(_) => "violation",
        Found::Unknown(_) => "unknown",
    }
}

/// A random history of appends, puts and gets on one key, some writes of unknown
/// outcome, the gets returning the value in call order so far, or (rarely) not.
fn random_kv(rng: &mut crate::rng::SimRng) -> History<KvOp, KvRet> {
    let key: Arc<str> = "k".into();
    let mut value = String::new();
    let n = 3 + rng.index(9);
    let ops = (0..n)
        .map(|c| {
            let call = rng.below(12);
            let ret = call + 1 + rng.below(6);
            let piece = format!("{c}.");
            let (op, r) = match rng.index(5) {
                0 => {
                    value = piece.clone();
                    (
                        KvOp::Put(key.clone(), Text::from(piece.as_str())),
                        KvRet::Done,
                    )
                }
                1 | 2 => {
                    value.push_str(&piece);
                    (
                        KvOp::Append(key.clone(), Text::from(piece.as_str())),
                        KvRet::Done,
                    )
                }
                _ => {
                    let mut seen = value.clone();
                    if rng.chance(0.1) {
                        seen.push('!');
                    }
                    let got = KvRet::Value(Text::from(seen.as_str()));
                    (KvOp::Get(key.clone()), got)
                }
            };
            let unknown = !matches!(op, KvOp::Get(_)) && rng.chance(0.2);
            op_at(c, op, 2 * call, 2 * ret + 1, (!unknown).then_some(r))
        })
        .collect();
    History { ops }
}

/// On random kv histories the pruned search finds the same witness, or the same
/// counterexample (operation, partial linearization, reason), as the unpruned one.
#[test]
fn pruning_keeps_every_witness_and_counterexample() {
    let mut rng = crate::rng::SimRng::new(11);
    let mut kinds = BTreeMap::new();
    for _ in 0..3000 {
        let h = random_kv(&mut rng);
        let (with, without) = (pruned(&h, None), unpruned(&KvSpec, &h, None));
        match (&with, &without) {
            (Found::Ok(a), Found::Ok(b)) => assert_eq!(a, b, "{h:?}"),
            (Found::Violation(a), Found::Violation(b)) => assert_eq!(a, b, "{h:?}"),
            _ => panic!("{} vs {}: {h:?}", kind(&with), kind(&without)),
        }
        *kinds.entry(kind(&without)).or_insert(0) += 1;
    }
    assert!(kinds["ok"] > 300 && kinds["violation"] > 300, "{kinds:?}");
}

/// Rounds of 7 overlapping appends, each followed by a get showing them in reverse call
/// order: without pruning the search tries their orders until the get's return rules
/// each out (over 40,000 steps); with it, a placement that leaves the value no prefix of
/// the get's is not made (under 400 steps), and the witness is the same.
#[test]
fn pruning_cuts_append_orders_a_get_ahead_rules_out() {
    let key: Arc<str> = "k".into();
    let mut ops = Vec::new();
    let mut value = String::new();
    for round in 0..6u64 {
        let base = round * 100;
        for i in 0..7u64 {
            let piece = Text::from(format!("{round}.{i};").as_str());
            let append = KvOp::Append(key.clone(), piece);
            ops.push(op_at(
                i as usize,
                append,
                base + i,
                base + 20 + i,
                Some(KvRet::Done),
            ));
        }
        for i in (0..7u64).rev() {
            value.push_str(&format!("{round}.{i};"));
        }
        let got = KvRet::Value(Text::from(value.as_str()));
        ops.push(op_at(
            9,
            KvOp::Get(key.clone()),
            base + 50,
            base + 51,
            Some(got),
        ));
    }
    let h = History { ops };
    let Found::Ok(order) = pruned(&h, Some(400)) else {
        panic!("expected ok within 400 steps")
    };
    assert_eq!(order.len(), 48);
    assert_eq!(kind(&unpruned(&KvSpec, &h, Some(40_000))), "unknown");
    let Found::Ok(plain) = unpruned(&KvSpec, &h, Some(400_000)) else {
        panic!("expected ok within 400,000 steps")
    };
    assert_eq!(order, plain);
}
