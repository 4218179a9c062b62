//! A read/write register holding values of type `V`, initially empty (reads return
//! `None`, nil in history files).

use crate::formats::{expected, outcome, FromRaw, RawOp, Value};
use crate::history::Outcome;
use crate::spec::SequentialSpec;
use std::fmt::Debug;
use std::hash::Hash;
use std::marker::PhantomData;

/// A register operation.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum RegisterOp<V> {
    /// Read the value.
    Read,
    /// Write a value.
    Write(V),
}

/// What a register operation returns.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum RegisterRet<V> {
    /// A read's value (`None`: never written).
    Value(Option<V>),
    /// A write's acknowledgement.
    Written,
}

/// The register spec.
#[derive(Clone, Copy, Debug, Default)]
pub struct RegisterSpec<V>(PhantomData<V>);

impl<V> RegisterSpec<V> {
    /// A register spec.
    pub fn new() -> Self {
        RegisterSpec(PhantomData)
    }
}

impl<V: Clone + Eq + Hash + Debug> SequentialSpec for RegisterSpec<V> {
    type State = Option<V>;
    type Op = RegisterOp<V>;
    type Ret = RegisterRet<V>;

    fn name(&self) -> &'static str {
        "register"
    }

    fn init(&self) -> Option<V> {
        None
    }

    fn step(&self, state: &Option<V>, op: &RegisterOp<V>) -> (Option<V>, RegisterRet<V>) {
        match op {
            RegisterOp::Read => (state.clone(), RegisterRet::Value(state.clone())),
            RegisterOp::Write(v) => (Some(v.clone()), RegisterRet::Written),
        }
    }

    fn accepts(
        &self,
        state: &Option<V>,
        op: &RegisterOp<V>,
        found: &RegisterRet<V>,
    ) -> Option<Option<V>> {
        match (op, found) {
            (RegisterOp::Read, RegisterRet::Value(v)) => (v == state).then(|| state.clone()),
            (RegisterOp::Write(v), RegisterRet::Written) => Some(Some(v.clone())),
            _ => None,
        }
    }

    fn read_only(&self, op: &RegisterOp<V>, _: &RegisterRet<V>) -> bool {
        matches!(op, RegisterOp::Read)
    }

    fn explain(
        &self,
        state: &Option<V>,
        op: &RegisterOp<V>,
        _: &RegisterRet<V>,
        found: &RegisterRet<V>,
    ) -> String {
        match (op, found) {
            (RegisterOp::Read, RegisterRet::Value(v)) => {
                format!(
                    "read returned {}, but the register holds {}",
                    show(v),
                    show(state)
                )
            }
            _ => format!("{op:?} cannot return {found:?}"),
        }
    }
}

/// `3`, or `nothing` for `None`.
pub(crate) fn show<V: Debug>(v: &Option<V>) -> String {
    match v {
        Some(v) => format!("{v:?}"),
        None => "nothing".to_string(),
    }
}

/// A register value from a file: nil is `None`.
pub(crate) fn value_or_nil(v: &Value) -> Option<Value> {
    match v {
        Value::Nil => None,
        v => Some(v.clone()),
    }
}

impl FromRaw for RegisterSpec<Value> {
    fn op_from_raw(
        &self,
        raw: &RawOp,
    ) -> Result<(RegisterOp<Value>, Outcome<RegisterRet<Value>>), String> {
        match raw.f.as_str() {
            "read" => Ok((
                RegisterOp::Read,
                outcome(raw, |r| Ok(RegisterRet::Value(value_or_nil(r))))?,
            )),
            "write" => Ok((
                RegisterOp::Write(raw.args.clone()),
                outcome(raw, |_| Ok(RegisterRet::Written))?,
            )),
            f => Err(expected(
                "f read or write (the register spec; cas needs --spec cas-register)",
                &Value::Keyword(f.to_string()),
            )),
        }
    }
}
