//! A read/write register holding values of type `V`, initially empty (reads return
//! `None`, nil in history files).
//!
//! As in Knossos's `register`, nil (a [`Value::Nil`] in a history file's values) is the
//! empty register's value: a write of nil empties it. Knossos also accepts a read of nil
//! whatever the register holds (it reads nil as "the read's value is unknown"); here a
//! read that completed `ok` with nil saw the empty register, as in Porcupine, and a read
//! whose value is unknown is an `info`.

use crate::formats::{expected, outcome, FromRaw, RawOp, Value};
use crate::history::Outcome;
use crate::spec::SequentialSpec;
use std::any::Any;
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

/// Whether `v` is a history file's nil ([`Value::Nil`]), the empty register's value.
/// Other value types have no nil.
pub(crate) fn is_nil<V: 'static>(v: &V) -> bool {
    (v as &dyn Any).downcast_ref::<Value>() == Some(&Value::Nil)
}

/// What a register holds after `v` is written: nothing for nil.
pub(crate) fn held<V: Clone + 'static>(v: &V) -> Option<V> {
    (!is_nil(v)).then(|| v.clone())
}

/// A read's value as the register's content: `Some(nil)` is `None`.
pub(crate) fn seen<V: 'static>(v: &Option<V>) -> Option<&V> {
    v.as_ref().filter(|v| !is_nil(*v))
}

/// The first read in `ops` that returned a value no write of `ops`, complete or pending,
/// writes (nor the empty register's nothing): its index and why. `written` gives the
/// value an operation may leave in the register (a write's, a cas's new value),
/// `observed` the value an operation with its known return says the register held (a
/// read's; a successful cas's old value).
pub(crate) fn unwritten_read<'a, Op, Ret, V>(
    ops: &[(&'a Op, Option<&'a Ret>)],
    written: impl Fn(&'a Op, Option<&'a Ret>) -> Option<&'a V>,
    observed: impl Fn(&'a Op, &'a Ret) -> Option<(&'a V, &'static str)>,
) -> Option<(usize, String)>
where
    V: Eq + Hash + Debug + 'static,
{
    let values: std::collections::HashSet<&V> = ops
        .iter()
        .filter_map(|&(op, ret)| written(op, ret))
        .filter(|v| !is_nil(*v))
        .collect();
    ops.iter().enumerate().find_map(|(i, &(op, ret))| {
        let (v, what) = observed(op, ret?)?;
        (!is_nil(v) && !values.contains(v)).then(|| {
            (
                i,
                format!("{what} {v:?}, a value no write of the history writes (none complete, none pending)"),
            )
        })
    })
}

impl<V: Clone + Eq + Hash + Debug + 'static> SequentialSpec for RegisterSpec<V> {
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
            RegisterOp::Write(v) => (held(v), RegisterRet::Written),
        }
    }

    fn accepts(
        &self,
        state: &Option<V>,
        op: &RegisterOp<V>,
        found: &RegisterRet<V>,
    ) -> Option<Option<V>> {
        match (op, found) {
            (RegisterOp::Read, RegisterRet::Value(v)) => {
                (seen(v) == state.as_ref()).then(|| state.clone())
            }
            (RegisterOp::Write(v), RegisterRet::Written) => Some(held(v)),
            _ => None,
        }
    }

    fn unproducible(
        &self,
        ops: &[(&RegisterOp<V>, Option<&RegisterRet<V>>)],
    ) -> Option<(usize, String)> {
        unwritten_read(
            ops,
            |op, _| match op {
                RegisterOp::Write(v) => Some(v),
                RegisterOp::Read => None,
            },
            |op, ret| match (op, ret) {
                (RegisterOp::Read, RegisterRet::Value(Some(v))) => Some((v, "read returned")),
                _ => None,
            },
        )
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

/// `3`, or `nothing` for `None` (and nil).
pub(crate) fn show<V: Debug + 'static>(v: &Option<V>) -> String {
    match seen(v) {
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
