//! A key-value map of strings with `get`, `put` and `append`, as in Porcupine's kv model:
//! every key starts as the empty string, `get k` returns its value, `put k v` sets it,
//! `append k v` appends to it. P-compositional: the checker checks each key on its own.
//!
//! The state is the map as a sorted list of (key, value): per partition it has at most one
//! entry, so a step clones a one-element vector and two reference counts.

use crate::formats::{expected, outcome, FromRaw, RawOp, Value};
use crate::history::Outcome;
use crate::spec::SequentialSpec;
use std::hash::{Hash, Hasher};
use std::sync::Arc;

/// A kv operation.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum KvOp {
    /// Read a key.
    Get(Arc<str>),
    /// Set a key.
    Put(Arc<str>, Arc<str>),
    /// Append to a key's value.
    Append(Arc<str>, Arc<str>),
}

impl KvOp {
    /// The key it touches.
    pub fn key(&self) -> &str {
        match self {
            KvOp::Get(k) | KvOp::Put(k, _) | KvOp::Append(k, _) => k,
        }
    }
}

/// What a kv operation returns.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum KvRet {
    /// A get's value.
    Value(Arc<str>),
    /// A put's or append's acknowledgement.
    Done,
}

/// The map: (key, value) sorted by key; absent keys hold "".
pub type KvState = Vec<(Arc<str>, Arc<str>)>;

/// The kv spec.
#[derive(Clone, Copy, Debug, Default)]
pub struct KvSpec;

fn lookup<'a>(state: &'a KvState, key: &str) -> &'a str {
    match state.binary_search_by(|(k, _)| (**k).cmp(key)) {
        Ok(i) => &state[i].1,
        Err(_) => "",
    }
}

fn set(state: &KvState, key: &Arc<str>, value: Arc<str>) -> KvState {
    let mut next = state.clone();
    match next.binary_search_by(|(k, _)| (**k).cmp(key)) {
        Ok(i) => next[i].1 = value,
        Err(i) => next.insert(i, (key.clone(), value)),
    }
    next
}

impl SequentialSpec for KvSpec {
    type State = KvState;
    type Op = KvOp;
    type Ret = KvRet;

    fn name(&self) -> &'static str {
        "kv"
    }

    fn init(&self) -> KvState {
        Vec::new()
    }

    fn step(&self, state: &KvState, op: &KvOp) -> (KvState, KvRet) {
        match op {
            KvOp::Get(k) => (state.clone(), KvRet::Value(lookup(state, k).into())),
            KvOp::Put(k, v) => (set(state, k, v.clone()), KvRet::Done),
            KvOp::Append(k, v) => {
                let mut s = String::with_capacity(lookup(state, k).len() + v.len());
                s.push_str(lookup(state, k));
                s.push_str(v);
                (set(state, k, s.into()), KvRet::Done)
            }
        }
    }

    fn accepts(&self, state: &KvState, op: &KvOp, found: &KvRet) -> Option<KvState> {
        match (op, found) {
            (KvOp::Get(k), KvRet::Value(v)) => (lookup(state, k) == &**v).then(|| state.clone()),
            (KvOp::Get(_), _) | (_, KvRet::Value(_)) => None,
            _ => Some(self.step(state, op).0),
        }
    }

    fn explain(&self, state: &KvState, op: &KvOp, _: &KvRet, found: &KvRet) -> String {
        match (op, found) {
            (KvOp::Get(k), KvRet::Value(v)) => format!(
                "get {k:?} returned {v:?}, but the key holds {:?}",
                lookup(state, k)
            ),
            _ => format!("{op:?} cannot return {found:?}"),
        }
    }

    fn partition(&self, op: &KvOp) -> Option<u64> {
        let mut h = rustc_hash::FxHasher::default();
        op.key().hash(&mut h);
        Some(h.finish())
    }
}

fn text(v: &Value) -> Option<Arc<str>> {
    match v {
        Value::Str(s) | Value::Keyword(s) | Value::Symbol(s) => Some(s.as_str().into()),
        Value::Int(i) => Some(i.to_string().into()),
        Value::Nil => Some("".into()),
        _ => None,
    }
}

impl FromRaw for KvSpec {
    fn from_raw(&self, raw: &RawOp) -> Result<(KvOp, Outcome<KvRet>), String> {
        let key = match &raw.key {
            Some(k) => text(k).ok_or_else(|| expected("a string key", k))?,
            None => return Err(expected("a key for the kv spec", &Value::Nil)),
        };
        let arg = || text(&raw.args).ok_or_else(|| expected("a string value", &raw.args));
        match raw.f.as_str() {
            "get" | "read" => Ok((
                KvOp::Get(key),
                outcome(raw, |r| {
                    text(r)
                        .map(KvRet::Value)
                        .ok_or_else(|| expected("a get result (a string or nil)", r))
                })?,
            )),
            "put" | "write" => Ok((KvOp::Put(key, arg()?), outcome(raw, |_| Ok(KvRet::Done))?)),
            "append" => Ok((
                KvOp::Append(key, arg()?),
                outcome(raw, |_| Ok(KvRet::Done))?,
            )),
            f => Err(expected(
                "f get, put or append",
                &Value::Keyword(f.to_string()),
            )),
        }
    }
}
