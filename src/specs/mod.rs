//! The sequential specifications kvsim ships, one per file. Each implements
//! [`SequentialSpec`](crate::spec::SequentialSpec) and
//! [`FromRaw`](crate::formats::FromRaw) (so `kvsim check-history` can read its operations
//! from history files); add your own the same way. [`crate::check::Specs`] names them (what `kvsim check-history
//! --spec` takes) with their checkers of history files ([`crate::check::files`]).
//!
//! | name | spec | operations (`f` in history files) |
//! |---|---|---|
//! | `register` | [`register::RegisterSpec`] | read, write |
//! | `cas-register` | [`cas_register::CasRegisterSpec`] | read, write, cas `[old new]` |
//! | `kv` | [`kv::KvSpec`] | get, put, append (with `key`); partitioned by key |
//! | `counter` | [`counter::CounterSpec`] | read, add `n`, incr/decr `n` (returning the new value) |
//! | `queue` | [`queue::QueueSpec`] | enqueue `v`, dequeue (nil when empty) |
//! | `mutex` | [`mutex::MutexSpec`] | acquire, try-acquire, release (owner: the process) |
//! | `set` | [`set::SetSpec`] | add `v`, remove `v`, contains `v`, read (all members) |
//! | `list-append` | [`list_append::ListAppendSpec`] | append/read with `key`, or txn `[[:append k v] [:r k nil]]` |
//! | `multi-register` | [`multi_register::MultiRegisterSpec`] | txn `[[:read :x nil] [:write :y 2]]` (Knossos's multi-register) |

pub mod cas_register;
pub mod counter;
pub mod kv;
pub mod list_append;
pub mod multi_register;
pub mod mutex;
pub mod queue;
pub mod register;
pub mod set;

/// The specs' pre-passes ([`SequentialSpec::unproducible`](crate::spec::SequentialSpec)):
/// a return no operation of the history could have produced is a violation before any
/// search step (a step bound of 1 would otherwise end the check `unknown`), and a return
/// that some pending operation could have produced is left to the search.
#[cfg(test)]
mod prepass_tests {
    use crate::check::{check_linearizability, CheckerLimits, Linearization};
    use crate::formats::Value;
    use crate::history::{History, Operation, Outcome};
    use crate::spec::SequentialSpec;

    /// Operations in sequence; `None` is an unknown outcome (never returned).
    fn seq<Op, Ret>(ops: Vec<(Op, Option<Ret>)>) -> History<Op, Ret> {
        History {
            ops: ops
                .into_iter()
                .enumerate()
                .map(|(i, (op, ret))| Operation {
                    client: i,
                    op,
                    call: 2 * i as u64,
                    ret: ret.is_some().then_some(2 * i as u64 + 1),
                    call_ms: 0,
                    ret_ms: None,
                    outcome: ret.map_or(Outcome::Unknown, Outcome::Ok),
                    marks: vec![],
                })
                .collect(),
        }
    }

    /// The reason of the violation found before any search step.
    fn at_once<S: SequentialSpec>(spec: &S, h: &History<S::Op, S::Ret>) -> String {
        match check_linearizability(spec, h, CheckerLimits::steps(1)) {
            Linearization::Violation(c) if c.partial.is_empty() => c.reason,
            other => panic!("expected a violation at once, found {other:?}"),
        }
    }

    /// Not refused by the pre-pass: the search runs (and a step bound of 1 ends it).
    fn searched<S: SequentialSpec>(spec: &S, h: &History<S::Op, S::Ret>) {
        assert!(matches!(
            check_linearizability(spec, h, CheckerLimits::steps(1)),
            Linearization::Unknown(_)
        ));
    }

    /// Pending writes of 0..n, for histories the pre-pass alone must judge.
    fn pending<Op, Ret>(n: i64, op: impl Fn(i64) -> Op) -> Vec<(Op, Option<Ret>)> {
        (0..n).map(|v| (op(v), None)).collect()
    }

    #[test]
    fn cas_register() {
        use super::cas_register::{CasOp, CasRegisterSpec, CasRet};
        let spec = CasRegisterSpec::<i64>::new();
        let mut ops = pending(20, CasOp::Write);
        ops.push((CasOp::Cas(50, 51), Some(CasRet::Swapped(true))));
        assert_eq!(
            at_once(&spec, &seq(ops.clone())),
            "cas succeeded comparing with 50, a value no write of the history writes (none complete, none pending)"
        );
        ops.pop();
        ops.push((CasOp::Cas(7, 60), None));
        ops.push((CasOp::Read, Some(CasRet::Value(Some(61)))));
        assert!(at_once(&spec, &seq(ops.clone())).starts_with("read returned 61, "));
        ops.pop();
        ops.push((CasOp::Read, Some(CasRet::Value(Some(60)))));
        searched(&spec, &seq(ops));
    }

    #[test]
    fn queue() {
        use super::queue::{QueueOp, QueueRet, QueueSpec};
        let spec = QueueSpec::<i64>::new();
        let mut ops = pending(20, QueueOp::Enqueue);
        ops.push((QueueOp::Dequeue, Some(QueueRet::Dequeued(Some(5)))));
        ops.push((QueueOp::Dequeue, Some(QueueRet::Dequeued(Some(5)))));
        assert_eq!(
            at_once(&spec, &seq(ops.clone())),
            "dequeue returned 5 a 2nd time, but the history enqueues it once (complete or pending)"
        );
        ops.pop();
        ops.push((QueueOp::Dequeue, Some(QueueRet::Dequeued(Some(99)))));
        assert!(at_once(&spec, &seq(ops.clone()))
            .starts_with("dequeue returned 99, a value no enqueue"));
        ops.pop();
        ops.push((QueueOp::Dequeue, Some(QueueRet::Dequeued(Some(6)))));
        searched(&spec, &seq(ops));
    }

    #[test]
    fn set() {
        use super::set::{SetOp, SetRet, SetSpec};
        let spec = SetSpec::<i64>::new();
        let mut ops = pending(20, SetOp::Add);
        ops.push((SetOp::Contains(30), Some(SetRet::Member(true))));
        assert!(at_once(&spec, &seq(ops.clone()))
            .starts_with("contains 30 returned true, but 30 is a value no add"));
        ops.pop();
        ops.push((SetOp::Read, Some(SetRet::Members([1, 2, 30].into()))));
        assert!(at_once(&spec, &seq(ops.clone()))
            .starts_with("read returned {1, 2, 30}, whose member 30 is"));
        ops.pop();
        ops.push((SetOp::Read, Some(SetRet::Members([1, 2].into()))));
        searched(&spec, &seq(ops));
    }

    #[test]
    fn counter() {
        use super::counter::{CounterOp, CounterRet, CounterSpec};
        let mut ops = pending(20, |_| CounterOp::AddGet(1));
        ops.push((CounterOp::Add(-3), None));
        ops.push((CounterOp::Read, Some(CounterRet::Value(21))));
        assert_eq!(
            at_once(&CounterSpec, &seq(ops.clone())),
            "read returned 21, but the adds of the history (complete or pending) keep the counter from -3 to 20"
        );
        ops.pop();
        ops.push((CounterOp::Read, Some(CounterRet::Value(-4))));
        assert!(at_once(&CounterSpec, &seq(ops.clone())).starts_with("read returned -4, "));
        ops.pop();
        ops.push((CounterOp::Read, Some(CounterRet::Value(17))));
        searched(&CounterSpec, &seq(ops));
    }

    #[test]
    fn kv() {
        use super::kv::{KvOp, KvRet, KvSpec, Text};
        let k: std::sync::Arc<str> = "k".into();
        let t = |s: &str| Text::from(s);
        let mut ops = pending(20, |v| KvOp::Put(k.clone(), t(&v.to_string())));
        ops.push((KvOp::Get(k.clone()), Some(KvRet::Value(t("x")))));
        assert!(at_once(&KvSpec, &seq(ops.clone()))
            .starts_with("get \"k\" returned \"x\", a value no put"));
        // With an append on the key, "x" may be built: the search decides.
        ops.insert(0, (KvOp::Append(k.clone(), t("x")), None));
        searched(&KvSpec, &seq(ops));
    }

    #[test]
    fn multi_register_and_list_append() {
        use super::list_append::{ListAppendSpec, Micro, Txn, TxnRet};
        use super::multi_register::{MultiRegisterSpec, RegMicro, RegTxn, RegTxnRet};
        let x = Value::Keyword("x".into());
        let mut ops = pending(20, |v| {
            RegTxn(vec![RegMicro::Write(x.clone(), Value::Int(v))])
        });
        ops.push((
            RegTxn(vec![RegMicro::Read(x.clone())]),
            Some(RegTxnRet(vec![Some(Value::Int(40))])),
        ));
        let spec = MultiRegisterSpec::new();
        assert!(at_once(&spec, &seq(ops.clone()))
            .starts_with("read of register :x (micro-op 1 of 1) returned 40, a value no write"));
        let initial = MultiRegisterSpec::with_initial([(x.clone(), Value::Int(40))]);
        assert!(matches!(
            check_linearizability(&initial, &seq(ops), CheckerLimits::none()),
            Linearization::Ok(_)
        ));

        let spec = ListAppendSpec::<i64>::new();
        let mut ops = pending(20, |v| Txn(vec![Micro::Append(1, v)]));
        ops.push((
            Txn(vec![Micro::Read(1)]),
            Some(TxnRet(vec![Some(vec![3, 25])])),
        ));
        assert!(at_once(&spec, &seq(ops.clone()))
            .starts_with("read of 1 returned [3, 25], whose element 25"));
        ops.pop();
        ops.push((
            Txn(vec![Micro::Read(1)]),
            Some(TxnRet(vec![Some(vec![3, 2])])),
        ));
        searched(&spec, &seq(ops));
    }

    /// Knossos's registers: nil is the empty register's value; a write of nil empties it,
    /// `cas [nil 1]` succeeds on the empty register only.
    #[test]
    fn nil_is_the_empty_register() {
        use super::cas_register::{CasOp, CasRegisterSpec, CasRet};
        use super::register::{RegisterOp, RegisterRet, RegisterSpec};
        let spec = CasRegisterSpec::<Value>::new();
        let (one, nil) = (Value::Int(1), Value::Nil);
        let empty = spec.init();
        assert_eq!(
            spec.step(&empty, &CasOp::Cas(nil.clone(), one.clone())),
            (Some(one.clone()), CasRet::Swapped(true))
        );
        let held = Some(one.clone());
        assert_eq!(
            spec.step(&held, &CasOp::Cas(nil.clone(), Value::Int(2))),
            (held.clone(), CasRet::Swapped(false))
        );
        assert_eq!(
            spec.step(&held, &CasOp::Cas(one.clone(), nil.clone())).0,
            None
        );
        assert_eq!(spec.step(&held, &CasOp::Write(nil.clone())).0, None);
        assert_eq!(
            spec.accepts(&empty, &CasOp::Read, &CasRet::Value(Some(nil.clone()))),
            Some(None)
        );
        let reg = RegisterSpec::<Value>::new();
        assert_eq!(reg.step(&held, &RegisterOp::Write(nil.clone())).0, None);
        assert_eq!(
            reg.accepts(&None, &RegisterOp::Read, &RegisterRet::Value(Some(nil))),
            Some(None)
        );
    }
}
