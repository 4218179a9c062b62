//! Jepsen's list-append: keys hold lists, initially empty; a transaction is a list of
//! micro-operations, `append k v` (adds `v` at the end of `k`'s list) and `read k`
//! (returns the list), applied atomically. Linearizability of transactions is strict
//! serializability. A history whose transactions each touch one key is checked per key.
//!
//! In history files: `{:f :txn, :value [[:append 1 5] [:r 1 nil]]}` completing with the
//! reads filled in (`[[:append 1 5] [:r 1 [3 5]]]`), or single operations `:f :append`
//! / `:f :read` with `:key` and `:value`.

use crate::formats::{expected, outcome, FromRaw, RawOp, Value};
use crate::history::Outcome;
use crate::spec::SequentialSpec;
use std::collections::BTreeMap;
use std::fmt::Debug;
use std::hash::{Hash, Hasher};
use std::marker::PhantomData;

/// One micro-operation of a transaction.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Micro<V> {
    /// Append a value to a key's list.
    Append(V, V),
    /// Read a key's list.
    Read(V),
}

/// A transaction: micro-operations applied in order, atomically.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Txn<V>(pub Vec<Micro<V>>);

/// What a transaction returns: per micro-operation, the list a read saw (`None` for
/// appends).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct TxnRet<V>(pub Vec<Option<Vec<V>>>);

/// The list-append spec.
#[derive(Clone, Copy, Debug, Default)]
pub struct ListAppendSpec<V>(PhantomData<V>);

impl<V> ListAppendSpec<V> {
    /// A list-append spec.
    pub fn new() -> Self {
        ListAppendSpec(PhantomData)
    }
}

impl<V: Clone + Ord + Hash + Debug> SequentialSpec for ListAppendSpec<V> {
    type State = BTreeMap<V, Vec<V>>;
    type Op = Txn<V>;
    type Ret = TxnRet<V>;

    fn name(&self) -> &'static str {
        "list-append"
    }

    fn init(&self) -> Self::State {
        BTreeMap::new()
    }

    fn step(&self, state: &Self::State, op: &Txn<V>) -> (Self::State, TxnRet<V>) {
        let mut next = state.clone();
        let ret =
            op.0.iter()
                .map(|m| match m {
                    Micro::Append(k, v) => {
                        next.entry(k.clone()).or_default().push(v.clone());
                        None
                    }
                    Micro::Read(k) => Some(next.get(k).cloned().unwrap_or_default()),
                })
                .collect();
        (next, TxnRet(ret))
    }

    /// A read list holding an element that no append of the history, complete or pending,
    /// appends to that key.
    fn unproducible(&self, ops: &[(&Txn<V>, Option<&TxnRet<V>>)]) -> Option<(usize, String)> {
        let mut appended: std::collections::BTreeSet<(&V, &V)> = Default::default();
        for (op, _) in ops {
            for m in &op.0 {
                if let Micro::Append(k, v) = m {
                    appended.insert((k, v));
                }
            }
        }
        ops.iter().enumerate().find_map(|(i, (op, ret))| {
            let ret = (*ret)?;
            op.0.iter().zip(&ret.0).find_map(|(m, r)| match (m, r) {
                (Micro::Read(k), Some(list)) => {
                    let v = list.iter().find(|v| !appended.contains(&(k, *v)))?;
                    Some((
                        i,
                        format!(
                            "read of {k:?} returned {list:?}, whose element {v:?} no append of the history appends to it (none complete, none pending)"
                        ),
                    ))
                }
                _ => None,
            })
        })
    }

    fn read_only(&self, op: &Txn<V>, _: &TxnRet<V>) -> bool {
        op.0.iter().all(|m| matches!(m, Micro::Read(_)))
    }

    fn explain(
        &self,
        state: &Self::State,
        op: &Txn<V>,
        expected: &TxnRet<V>,
        found: &TxnRet<V>,
    ) -> String {
        for (i, (m, (e, f))) in op.0.iter().zip(expected.0.iter().zip(&found.0)).enumerate() {
            if e != f {
                if let (Micro::Read(k), Some(e), Some(f)) = (m, e, f) {
                    return format!(
                        "read of key {k:?} (micro-op {}) returned {f:?}, but the list is {e:?}",
                        i + 1
                    );
                }
            }
        }
        format!("{op:?} returned {found:?}, but in state {state:?} it returns {expected:?}")
    }

    fn partition(&self, op: &Txn<V>) -> Option<u64> {
        let key = |m: &Micro<V>| match m {
            Micro::Append(k, _) | Micro::Read(k) => k.clone(),
        };
        let first = key(op.0.first()?);
        if op.0.iter().any(|m| key(m) != first) {
            return None;
        }
        let mut h = rustc_hash::FxHasher::default();
        first.hash(&mut h);
        Some(h.finish())
    }
}

fn micro(v: &Value) -> Result<(Micro<Value>, Option<Vec<Value>>), String> {
    let Value::List(parts) = v else {
        return Err(expected(
            "a micro-operation [:append k v] or [:r k list]",
            v,
        ));
    };
    match parts.as_slice() {
        [Value::Keyword(f), k, v] if f == "append" => {
            Ok((Micro::Append(k.clone(), v.clone()), None))
        }
        [Value::Keyword(f), k, v] if f == "r" || f == "read" => Ok((
            Micro::Read(k.clone()),
            match v {
                Value::Nil => None,
                Value::List(items) => Some(items.clone()),
                other => return Err(expected("a read list or nil", other)),
            },
        )),
        _ => Err(expected(
            "a micro-operation [:append k v] or [:r k list]",
            v,
        )),
    }
}

impl FromRaw for ListAppendSpec<Value> {
    fn op_from_raw(&self, raw: &RawOp) -> Result<(Txn<Value>, Outcome<TxnRet<Value>>), String> {
        let key = || {
            raw.key
                .clone()
                .ok_or_else(|| expected("a key", &Value::Nil))
        };
        match raw.f.as_str() {
            "txn" => {
                let Value::List(items) = &raw.args else {
                    return Err(expected(
                        "a transaction (a list of micro-operations)",
                        &raw.args,
                    ));
                };
                let txn = Txn(items
                    .iter()
                    .map(|m| micro(m).map(|(m, _)| m))
                    .collect::<Result<_, _>>()?);
                let n = txn.0.len();
                let outcome = outcome(raw, |r| {
                    let Value::List(items) = r else {
                        return Err(expected(
                            "a transaction result (the micro-operations with reads filled in)",
                            r,
                        ));
                    };
                    if items.len() != n {
                        return Err(expected(
                            &format!("a transaction result with {n} micro-operations"),
                            r,
                        ));
                    }
                    let reads = items
                        .iter()
                        .map(|m| match micro(m)? {
                            (Micro::Read(_), None) => Ok(Some(Vec::new())),
                            (_, read) => Ok(read),
                        })
                        .collect::<Result<_, String>>()?;
                    Ok(TxnRet(reads))
                })?;
                Ok((txn, outcome))
            }
            "append" => Ok((
                Txn(vec![Micro::Append(key()?, raw.args.clone())]),
                outcome(raw, |_| Ok(TxnRet(vec![None])))?,
            )),
            "read" | "r" => Ok((
                Txn(vec![Micro::Read(key()?)]),
                outcome(raw, |r| match r {
                    Value::List(items) => Ok(TxnRet(vec![Some(items.clone())])),
                    Value::Nil => Ok(TxnRet(vec![Some(Vec::new())])),
                    other => Err(expected("a read result (a list)", other)),
                })?,
            )),
            f => Err(expected(
                "f txn, append or read",
                &Value::Keyword(f.to_string()),
            )),
        }
    }
}
