//! A set, initially empty: `add v`, `remove v` (acknowledged), `contains v` (whether it
//! is a member) and `read` (all members, in order).

use crate::formats::{expected, outcome, FromRaw, RawOp, Value};
use crate::history::Outcome;
use crate::spec::SequentialSpec;
use std::collections::BTreeSet;
use std::fmt::Debug;
use std::hash::Hash;
use std::marker::PhantomData;

/// A set operation.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum SetOp<V> {
    /// Add a member.
    Add(V),
    /// Remove a member.
    Remove(V),
    /// Whether it is a member.
    Contains(V),
    /// All members.
    Read,
}

/// What a set operation returns.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum SetRet<V: Ord> {
    /// An add's or remove's acknowledgement.
    Done,
    /// A contains's answer.
    Member(bool),
    /// A read's members.
    Members(BTreeSet<V>),
}

/// The set spec.
#[derive(Clone, Copy, Debug, Default)]
pub struct SetSpec<V>(PhantomData<V>);

impl<V> SetSpec<V> {
    /// A set spec.
    pub fn new() -> Self {
        SetSpec(PhantomData)
    }
}

impl<V: Clone + Ord + Hash + Debug> SequentialSpec for SetSpec<V> {
    type State = BTreeSet<V>;
    type Op = SetOp<V>;
    type Ret = SetRet<V>;

    fn name(&self) -> &'static str {
        "set"
    }

    fn init(&self) -> BTreeSet<V> {
        BTreeSet::new()
    }

    fn step(&self, state: &BTreeSet<V>, op: &SetOp<V>) -> (BTreeSet<V>, SetRet<V>) {
        match op {
            SetOp::Add(v) => {
                let mut next = state.clone();
                next.insert(v.clone());
                (next, SetRet::Done)
            }
            SetOp::Remove(v) => {
                let mut next = state.clone();
                next.remove(v);
                (next, SetRet::Done)
            }
            SetOp::Contains(v) => (state.clone(), SetRet::Member(state.contains(v))),
            SetOp::Read => (state.clone(), SetRet::Members(state.clone())),
        }
    }

    fn accepts(
        &self,
        state: &BTreeSet<V>,
        op: &SetOp<V>,
        found: &SetRet<V>,
    ) -> Option<BTreeSet<V>> {
        match (op, found) {
            (SetOp::Contains(v), SetRet::Member(m)) => {
                (state.contains(v) == *m).then(|| state.clone())
            }
            (SetOp::Read, SetRet::Members(m)) => (m == state).then(|| state.clone()),
            (SetOp::Add(_) | SetOp::Remove(_), SetRet::Done) => Some(self.step(state, op).0),
            _ => None,
        }
    }

    /// A member read (or a contains that returned true) that no add of the history,
    /// complete or pending, adds.
    fn unproducible(&self, ops: &[(&SetOp<V>, Option<&SetRet<V>>)]) -> Option<(usize, String)> {
        let added: std::collections::BTreeSet<&V> = ops
            .iter()
            .filter_map(|(op, _)| match op {
                SetOp::Add(v) => Some(v),
                _ => None,
            })
            .collect();
        let never = "a value no add of the history adds (none complete, none pending)";
        ops.iter()
            .enumerate()
            .find_map(|(i, (op, ret))| match (op, ret) {
                (SetOp::Contains(v), Some(SetRet::Member(true))) if !added.contains(v) => Some((
                    i,
                    format!("contains {v:?} returned true, but {v:?} is {never}"),
                )),
                (SetOp::Read, Some(SetRet::Members(m))) => {
                    let v = m.iter().find(|v| !added.contains(v))?;
                    Some((
                        i,
                        format!("read returned {m:?}, whose member {v:?} is {never}"),
                    ))
                }
                _ => None,
            })
    }

    fn read_only(&self, op: &SetOp<V>, _: &SetRet<V>) -> bool {
        matches!(op, SetOp::Contains(_) | SetOp::Read)
    }

    fn explain(
        &self,
        state: &BTreeSet<V>,
        op: &SetOp<V>,
        _: &SetRet<V>,
        found: &SetRet<V>,
    ) -> String {
        match (op, found) {
            (SetOp::Contains(v), SetRet::Member(true)) => {
                format!("contains {v:?} returned true, but the set {state:?} lacks it")
            }
            (SetOp::Contains(v), SetRet::Member(false)) => {
                format!("contains {v:?} returned false, but the set {state:?} has it")
            }
            (SetOp::Read, SetRet::Members(m)) => {
                format!("read returned {m:?}, but the set is {state:?}")
            }
            _ => format!("{op:?} cannot return {found:?}"),
        }
    }
}

impl FromRaw for SetSpec<Value> {
    fn op_from_raw(&self, raw: &RawOp) -> Result<(SetOp<Value>, Outcome<SetRet<Value>>), String> {
        let v = raw.args.clone();
        match raw.f.as_str() {
            "add" => Ok((SetOp::Add(v), outcome(raw, |_| Ok(SetRet::Done))?)),
            "remove" => Ok((SetOp::Remove(v), outcome(raw, |_| Ok(SetRet::Done))?)),
            "contains" => Ok((
                SetOp::Contains(v),
                outcome(raw, |r| match r {
                    Value::Bool(b) => Ok(SetRet::Member(*b)),
                    other => Err(expected("a contains result (true or false)", other)),
                })?,
            )),
            "read" => Ok((
                SetOp::Read,
                outcome(raw, |r| match r {
                    Value::List(items) => Ok(SetRet::Members(items.iter().cloned().collect())),
                    Value::Nil => Ok(SetRet::Members(BTreeSet::new())),
                    other => Err(expected("a read result (a collection of members)", other)),
                })?,
            )),
            f => Err(expected(
                "f add, remove, contains or read",
                &Value::Keyword(f.to_string()),
            )),
        }
    }
}
