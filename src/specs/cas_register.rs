//! A register with compare-and-set, as in Jepsen's etcd test and Porcupine's etcd model:
//! `read`, `write v`, `cas [old new]` (true and `new` stored if the register holds `old`,
//! else false and unchanged). Initially empty.
//!
//! In history files a `cas` that completes with `ok` swapped, unless its value is `false`
//! (a cas that returned false: its comparison failed). A `cas` that completes with `fail`
//! had no effect; read as [`FailMeans::CompareFailed`](crate::formats::FailMeans), as
//! Porcupine reads Jepsen's etcd histories, it also says the register did not hold `old`
//! when it took place (this spec's [`FromRaw`] reads it so); read as Jepsen and Knossos
//! mean it ([`FailMeans::NoEffect`](crate::formats::FailMeans)), it says nothing more.
//!
//! As in Knossos's `cas-register`, nil is the empty register's value: `cas [nil 1]`
//! succeeds on the empty register (and only there), `write nil` and `cas [1 nil]` empty
//! it. (Knossos also accepts a read of nil whatever the register holds; here a read that
//! completed `ok` with nil saw the empty register, as [`register`](crate::specs::register)
//! says.)

use crate::formats::{expected, syntax, End, FromRaw, RawOp, Syntax, Value};
use crate::history::Outcome;
use crate::spec::SequentialSpec;
use crate::specs::register::{held, is_nil, seen, show, unwritten_read, value_or_nil};
use std::fmt::Debug;
use std::hash::Hash;
use std::marker::PhantomData;

/// A cas-register operation.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum CasOp<V> {
    /// Read the value.
    Read,
    /// Write a value.
    Write(V),
    /// If the register holds the first value, store the second.
    Cas(V, V),
}

/// What a cas-register operation returns.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum CasRet<V> {
    /// A read's value (`None`: never written).
    Value(Option<V>),
    /// A write's acknowledgement.
    Written,
    /// Whether a cas swapped.
    Swapped(bool),
}

/// The cas-register spec.
#[derive(Clone, Copy, Debug, Default)]
pub struct CasRegisterSpec<V>(PhantomData<V>);

impl<V> CasRegisterSpec<V> {
    /// A cas-register spec.
    pub fn new() -> Self {
        CasRegisterSpec(PhantomData)
    }
}

/// Whether the register holds `old` (nil: is empty).
fn holds<V: Eq + 'static>(state: &Option<V>, old: &V) -> bool {
    match state {
        None => is_nil(old),
        Some(v) => v == old,
    }
}

impl<V: Clone + Eq + Hash + Debug + 'static> SequentialSpec for CasRegisterSpec<V> {
    type State = Option<V>;
    type Op = CasOp<V>;
    type Ret = CasRet<V>;

    fn name(&self) -> &'static str {
        "cas-register"
    }

    fn init(&self) -> Option<V> {
        None
    }

    fn step(&self, state: &Option<V>, op: &CasOp<V>) -> (Option<V>, CasRet<V>) {
        match op {
            CasOp::Read => (state.clone(), CasRet::Value(state.clone())),
            CasOp::Write(v) => (held(v), CasRet::Written),
            CasOp::Cas(old, new) => {
                if holds(state, old) {
                    (held(new), CasRet::Swapped(true))
                } else {
                    (state.clone(), CasRet::Swapped(false))
                }
            }
        }
    }

    fn accepts(&self, state: &Option<V>, op: &CasOp<V>, found: &CasRet<V>) -> Option<Option<V>> {
        match (op, found) {
            (CasOp::Read, CasRet::Value(v)) => (seen(v) == state.as_ref()).then(|| state.clone()),
            (CasOp::Write(v), CasRet::Written) => Some(held(v)),
            (CasOp::Cas(old, new), CasRet::Swapped(ok)) => match (holds(state, old), ok) {
                (true, true) => Some(held(new)),
                (false, false) => Some(state.clone()),
                _ => None,
            },
            _ => None,
        }
    }

    fn unproducible(&self, ops: &[(&CasOp<V>, Option<&CasRet<V>>)]) -> Option<(usize, String)> {
        unwritten_read(
            ops,
            |op, ret| match (op, ret) {
                (CasOp::Write(v), _) => Some(v),
                (CasOp::Cas(_, new), None | Some(CasRet::Swapped(true))) => Some(new),
                _ => None,
            },
            |op, ret| match (op, ret) {
                (CasOp::Read, CasRet::Value(Some(v))) => Some((v, "read returned")),
                (CasOp::Cas(old, _), CasRet::Swapped(true)) => {
                    Some((old, "cas succeeded comparing with"))
                }
                _ => None,
            },
        )
    }

    fn read_only(&self, op: &CasOp<V>, ret: &CasRet<V>) -> bool {
        matches!(op, CasOp::Read) || matches!((op, ret), (CasOp::Cas(..), CasRet::Swapped(false)))
    }

    fn explain(
        &self,
        state: &Option<V>,
        op: &CasOp<V>,
        _: &CasRet<V>,
        found: &CasRet<V>,
    ) -> String {
        match (op, found) {
            (CasOp::Read, CasRet::Value(v)) => {
                format!(
                    "read returned {}, but the register holds {}",
                    show(v),
                    show(state)
                )
            }
            (CasOp::Cas(old, new), CasRet::Swapped(true)) => format!(
                "cas {old:?} → {new:?} succeeded, but the register holds {}",
                show(state)
            ),
            (CasOp::Cas(old, new), CasRet::Swapped(false)) => {
                format!(
                    "cas {old:?} → {new:?} failed, but the register holds {}",
                    show(state)
                )
            }
            _ => format!("{op:?} cannot return {found:?}"),
        }
    }
}

impl FromRaw for CasRegisterSpec<Value> {
    fn op_from_raw(&self, raw: &RawOp) -> Result<(CasOp<Value>, Outcome<CasRet<Value>>), String> {
        let unknown = matches!(raw.end, End::Info | End::Pending);
        match raw.f.as_str() {
            "read" => Ok((
                CasOp::Read,
                match raw.end {
                    End::Ok => Outcome::Ok(CasRet::Value(value_or_nil(&raw.result))),
                    End::Fail => Outcome::Failed,
                    _ => Outcome::Unknown,
                },
            )),
            "write" => Ok((
                CasOp::Write(raw.args.clone()),
                match raw.end {
                    End::Ok => Outcome::Ok(CasRet::Written),
                    End::Fail => Outcome::Failed,
                    _ => Outcome::Unknown,
                },
            )),
            "cas" => match &raw.args {
                Value::List(pair) if pair.len() == 2 => Ok((
                    CasOp::Cas(pair[0].clone(), pair[1].clone()),
                    if unknown {
                        Outcome::Unknown
                    } else {
                        Outcome::Ok(CasRet::Swapped(
                            raw.end == End::Ok && raw.result != Value::Bool(false),
                        ))
                    },
                )),
                other => Err(expected(
                    match syntax() {
                        Syntax::Edn => "a cas value [old new]",
                        Syntax::Json => "a cas value [old, new]",
                    },
                    other,
                )),
            },
            f => Err(expected(
                "f read, write or cas",
                &Value::Keyword(f.to_string()),
            )),
        }
    }
}
