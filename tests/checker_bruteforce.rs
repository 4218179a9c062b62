//! The fast linearizability checker agrees with the brute-force one (every order that
//! respects real time) on random small histories, unknown and failed outcomes included,
//! for every spec; and its witnesses are valid linearizations.

use kvsim::check::{
    bruteforce, check_linearizability, check_linearizability_parallel, CheckerLimits, Linearization,
};
use kvsim::specs::cas_register::{CasOp, CasRegisterSpec};
use kvsim::specs::counter::{CounterOp, CounterSpec};
use kvsim::specs::kv::{KvOp, KvSpec, Text};
use kvsim::specs::list_append::{ListAppendSpec, Micro, Txn};
use kvsim::specs::mutex::{MutexOp, MutexSpec};
use kvsim::specs::queue::{QueueOp, QueueSpec};
use kvsim::specs::register::{RegisterOp, RegisterSpec};
use kvsim::specs::set::{SetOp, SetSpec};
use kvsim::SequentialSpec;
use kvsim::{History, Operation, Outcome};
use proptest::prelude::*;

/// Raw material for one operation: which op (a, b, c), client, gap before it, duration,
/// outcome kind, linearization point, and whether an unknown one takes effect.
type Raw = (u8, u8, u8, u8, u8, u8, u8, u8, bool);

fn raw_ops() -> impl Strategy<Value = (Vec<Raw>, u8, u8, u8)> {
    (
        prop::collection::vec(any::<Raw>(), 0..9),
        any::<u8>(),
        any::<u8>(),
        any::<u8>(),
    )
}

/// Builds a history whose returns come from one random linearization (so many histories
/// are linearizable), then maybe swaps two returns (so many are not).
fn build<S: SequentialSpec>(
    spec: &S,
    make_op: impl Fn(u8, u8, u8, usize) -> S::Op,
    raw: &[Raw],
    mutate: (u8, u8, u8),
) -> History<S::Op, S::Ret> {
    let mut clock = [0u64; 3];
    let mut ops = Vec::new();
    let mut points = Vec::new();
    for &(a, b, c, client, gap, dur, kind, point, effect) in raw {
        let client = (client % 3) as usize;
        let call = clock[client] + u64::from(gap % 4);
        let ret = call + 1 + u64::from(dur % 6);
        clock[client] = ret + 1;
        let outcome_kind = kind % 8;
        let (outcome, ret_pos, takes_effect) = match outcome_kind {
            0 | 1 => (
                Outcome::<Option<()>>::Unknown,
                if kind % 16 < 8 { Some(ret) } else { None },
                effect,
            ),
            2 => (Outcome::Failed, Some(ret), false),
            _ => (Outcome::Ok(None), Some(ret), true),
        };
        let i = ops.len();
        if takes_effect {
            let end = if matches!(outcome, Outcome::Unknown) {
                100
            } else {
                ret
            };
            let p = call as f64 + (end - call) as f64 * (f64::from(point) + 0.5) / 256.0;
            points.push((p, i));
        }
        ops.push((client, make_op(a, b, c, client), call, ret_pos, outcome));
    }
    points.sort_by(|x, y| x.0.total_cmp(&y.0));
    let mut rets: Vec<Option<S::Ret>> = vec![None; ops.len()];
    let mut state = spec.init();
    for (_, i) in points {
        let (next, ret) = spec.step(&state, &ops[i].1);
        rets[i] = Some(ret);
        state = next;
    }
    let known: Vec<usize> = (0..ops.len())
        .filter(|&i| matches!(ops[i].4, Outcome::Ok(_)))
        .collect();
    if matches!(mutate.0 % 3, 0) && known.len() >= 2 {
        let i = known[mutate.1 as usize % known.len()];
        let j = known[mutate.2 as usize % known.len()];
        rets.swap(i, j);
    }
    let mut history = History::new();
    for (i, (client, op, call, ret, outcome)) in ops.into_iter().enumerate() {
        let outcome = match outcome {
            Outcome::Ok(_) => Outcome::Ok(rets[i].clone().expect("known ops take effect")),
            Outcome::Failed => Outcome::Failed,
            Outcome::Unknown => Outcome::Unknown,
        };
        history.ops.push(Operation {
            client,
            op,
            call,
            ret,
            call_ms: call,
            ret_ms: ret,
            outcome,
            marks: vec![],
        });
    }
    history.ops.sort_by_key(|o| o.call);
    history
}

/// Whether `order` (indices into ops) is a valid linearization of part of the history.
fn valid_order<S: SequentialSpec>(spec: &S, h: &History<S::Op, S::Ret>, order: &[usize]) -> bool {
    let mut state = spec.init();
    for (pos, &i) in order.iter().enumerate() {
        let o = &h.ops[i];
        if matches!(o.outcome, Outcome::Failed) {
            return false;
        }
        // Nothing placed later may have returned before this was invoked.
        if order[pos + 1..].iter().any(|&k| h.ops[k].precedes(o)) {
            return false;
        }
        let (next, ret) = spec.step(&state, &o.op);
        if let Outcome::Ok(r) = &o.outcome {
            if *r != ret {
                return false;
            }
        }
        state = next;
    }
    true
}

fn agree<S>(spec: &S, h: &History<S::Op, S::Ret>) -> Result<(), TestCaseError>
where
    S: SequentialSpec + Sync,
    S::Op: Sync,
    S::Ret: Sync,
    S::State: Send,
{
    let slow = bruteforce::linearizable(spec, h);
    let fast = check_linearizability(spec, h, CheckerLimits::none());
    let par = check_linearizability_parallel(spec, h, CheckerLimits::none());
    prop_assert_eq!(fast.verdict().name(), par.verdict().name());
    match &fast {
        Linearization::Ok(w) => {
            prop_assert!(
                slow,
                "fast says linearizable, brute force does not: {:#?}",
                h
            );
            // Every known operation is placed exactly once, in a valid order.
            let placed: Vec<usize> = w.orders.iter().flatten().copied().collect();
            for (i, o) in h.ops.iter().enumerate() {
                let n = placed.iter().filter(|&&k| k == i).count();
                match o.outcome {
                    Outcome::Ok(_) => prop_assert_eq!(n, 1),
                    Outcome::Failed => prop_assert_eq!(n, 0),
                    Outcome::Unknown => prop_assert!(n <= 1),
                }
            }
            for order in &w.orders {
                prop_assert!(
                    valid_order(spec, h, order),
                    "invalid witness {:?} for {:#?}",
                    order,
                    h
                );
            }
        }
        Linearization::Violation(c) => {
            prop_assert!(
                !slow,
                "fast says violation ({}), brute force finds an order: {:#?}",
                c.reason,
                h
            );
            prop_assert!(matches!(h.ops[c.op].outcome, Outcome::Ok(_)));
        }
        Linearization::Unknown(why) => prop_assert!(false, "unknown without limits: {}", why),
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(
        std::env::var("PROPTEST_CASES").ok().and_then(|c| c.parse().ok()).unwrap_or(2000)
    ))]

    #[test]
    fn register((raw, m0, m1, m2) in raw_ops()) {
        let spec = RegisterSpec::<u8>::new();
        let h = build(&spec, |a, b, _, _| if matches!(a % 2, 0) { RegisterOp::Read } else { RegisterOp::Write(b % 3) }, &raw, (m0, m1, m2));
        agree(&spec, &h)?;
    }

    #[test]
    fn cas_register((raw, m0, m1, m2) in raw_ops()) {
        let spec = CasRegisterSpec::<u8>::new();
        let h = build(&spec, |a, b, c, _| match a % 3 {
            0 => CasOp::Read,
            1 => CasOp::Write(b % 3),
            _ => CasOp::Cas(b % 3, c % 3),
        }, &raw, (m0, m1, m2));
        agree(&spec, &h)?;
    }

    #[test]
    fn kv((raw, m0, m1, m2) in raw_ops()) {
        let keys = ["a", "b"];
        let vals = ["x", "y", ""];
        let h = build(&KvSpec, |a, b, c, _| {
            let k = keys[b as usize % 2].into();
            let v = Text::from(vals[c as usize % 3]);
            match a % 3 {
                0 => KvOp::Get(k),
                1 => KvOp::Put(k, v),
                _ => KvOp::Append(k, v),
            }
        }, &raw, (m0, m1, m2));
        agree(&KvSpec, &h)?;
    }

    #[test]
    fn counter((raw, m0, m1, m2) in raw_ops()) {
        let h = build(&CounterSpec, |a, b, _, _| match a % 3 {
            0 => CounterOp::Read,
            1 => CounterOp::Add(i64::from(b % 3)),
            _ => CounterOp::AddGet(i64::from(b % 2) + 1),
        }, &raw, (m0, m1, m2));
        agree(&CounterSpec, &h)?;
    }

    #[test]
    fn queue((raw, m0, m1, m2) in raw_ops()) {
        let spec = QueueSpec::<u8>::new();
        let h = build(&spec, |a, b, _, _| if matches!(a % 2, 0) { QueueOp::Dequeue } else { QueueOp::Enqueue(b % 3) }, &raw, (m0, m1, m2));
        agree(&spec, &h)?;
    }

    #[test]
    fn mutex((raw, m0, m1, m2) in raw_ops()) {
        let h = build(&MutexSpec, |a, _, _, client| match a % 3 {
            0 => MutexOp::Acquire(client as u64),
            1 => MutexOp::TryAcquire(client as u64),
            _ => MutexOp::Release(client as u64),
        }, &raw, (m0, m1, m2));
        agree(&MutexSpec, &h)?;
    }

    #[test]
    fn set((raw, m0, m1, m2) in raw_ops()) {
        let spec = SetSpec::<u8>::new();
        let h = build(&spec, |a, b, _, _| match a % 4 {
            0 => SetOp::Add(b % 3),
            1 => SetOp::Remove(b % 3),
            2 => SetOp::Contains(b % 3),
            _ => SetOp::Read,
        }, &raw, (m0, m1, m2));
        agree(&spec, &h)?;
    }

    #[test]
    fn list_append((raw, m0, m1, m2) in raw_ops()) {
        let spec = ListAppendSpec::<u8>::new();
        let h = build(&spec, |a, b, c, _| {
            let micro = |x: u8, y: u8| if matches!(x % 2, 0) { Micro::Read(y % 2) } else { Micro::Append(y % 2, x % 3) };
            if matches!(a % 3, 0) { Txn(vec![micro(b, c), micro(c, b)]) } else { Txn(vec![micro(b, c)]) }
        }, &raw, (m0, m1, m2));
        agree(&spec, &h)?;
    }
}
