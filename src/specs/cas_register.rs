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

use crate::formats::{expected, End, FromRaw, RawOp, Value};
use crate::history::Outcome;
use crate::spec::SequentialSpec;
use crate::specs::register::{show, value_or_nil};
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

impl<V: Clone + Eq + Hash + Debug> SequentialSpec for CasRegisterSpec<V> {
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
            CasOp::Write(v) => (Some(v.clone()), CasRet::Written),
            CasOp::Cas(old, new) => {
                if state.as_ref() == Some(old) {
                    (Some(new.clone()), CasRet::Swapped(true))
                } else {
                    (state.clone(), CasRet::Swapped(false))
                }
            }
        }
    }

    fn accepts(&self, state: &Option<V>, op: &CasOp<V>, found: &CasRet<V>) -> Option<Option<V>> {
        match (op, found) {
            (CasOp::Read, CasRet::Value(v)) => (v == state).then(|| state.clone()),
            (CasOp::Write(v), CasRet::Written) => Some(Some(v.clone())),
            (CasOp::Cas(old, new), CasRet::Swapped(ok)) => {
                let holds = state.as_ref() == Some(old);
                match (holds, ok) {
                    (true, true) => Some(Some(new.clone())),
                    (false, false) => Some(state.clone()),
                    _ => None,
                }
            }
            _ => None,
        }
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
                format!("cas {old:?} → {new:?} failed, but the register holds {old:?}")
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
                other => Err(expected("a cas value [old new]", other)),
            },
            f => Err(expected(
                "f read, write or cas",
                &Value::Keyword(f.to_string()),
            )),
        }
    }
}
