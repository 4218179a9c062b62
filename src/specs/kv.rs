//! A key-value map of strings with `get`, `put` and `append`, as in Porcupine's kv model:
//! every key starts as the empty string, `get k` returns its value, `put k v` sets it,
//! `append k v` appends to it. P-compositional: the checker checks each key on its own.
//!
//! Values are [`Text`]s: strings kept as a chain of appended pieces with a polynomial hash
//! maintained as they grow, so an append, a hash and (almost always) a comparison take
//! constant time however long the value gets. The state is [`KvState`], with no
//! allocation for the empty map and for one key (the per-key partitions).

use crate::formats::{expected, outcome, FromRaw, RawOp, Value};
use crate::history::Outcome;
use crate::spec::SequentialSpec;
use std::fmt;
use std::hash::{Hash, Hasher};
use std::sync::Arc;

const BASE: u64 = 0x100_0000_01b3;

struct Node {
    prev: Option<Arc<Node>>,
    piece: Arc<str>,
}

impl Drop for Node {
    /// Frees a long chain iteratively (the default drop would recurse once per piece).
    fn drop(&mut self) {
        let mut prev = self.prev.take();
        while let Some(node) = prev {
            match Arc::try_unwrap(node) {
                Ok(mut node) => prev = node.prev.take(),
                Err(_) => break,
            }
        }
    }
}

/// A string value: the pieces appended since the last put.
#[derive(Clone)]
pub struct Text {
    len: usize,
    hash: u64,
    pow: u64,
    node: Option<Arc<Node>>,
}

static EMPTY: Text = Text {
    len: 0,
    hash: 0,
    pow: 1,
    node: None,
};

impl Default for Text {
    fn default() -> Text {
        EMPTY.clone()
    }
}

impl Text {
    /// The length in bytes.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether it is the empty string.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// This text followed by `more`.
    pub fn append(&self, more: &Text) -> Text {
        if more.is_empty() {
            return self.clone();
        }
        if self.is_empty() {
            return more.clone();
        }
        let node = match &more.node {
            // One piece (an operation's own value): chain it on directly.
            Some(one) if one.prev.is_none() => Some(Arc::new(Node {
                prev: self.node.clone(),
                piece: one.piece.clone(),
            })),
            _ => self.rechain(more),
        };
        Text {
            len: self.len + more.len,
            hash: self.hash.wrapping_mul(more.pow).wrapping_add(more.hash),
            pow: self.pow.wrapping_mul(more.pow),
            node,
        }
    }

    /// This text's chain with `more`'s pieces chained on top.
    fn rechain(&self, more: &Text) -> Option<Arc<Node>> {
        let mut pieces = Vec::new();
        let mut n = more.node.as_ref();
        while let Some(node) = n {
            pieces.push(node.piece.clone());
            n = node.prev.as_ref();
        }
        let mut node = self.node.clone();
        for piece in pieces.into_iter().rev() {
            node = Some(Arc::new(Node { prev: node, piece }));
        }
        node
    }

    /// Whether this text may be a prefix of `whole`: `false` only when it certainly is
    /// not (longer; as long but different; or its last piece is not where it would be in
    /// `whole`). Constant time: `whole` made of several pieces is not looked into.
    pub fn may_prefix(&self, whole: &Text) -> bool {
        if self.len > whole.len {
            return false;
        }
        if self.len == whole.len && self.hash != whole.hash {
            return false;
        }
        let (Some(last), Some(w)) = (&self.node, &whole.node) else {
            return true;
        };
        if w.prev.is_some() {
            return true;
        }
        let start = self.len - last.piece.len();
        w.piece.as_bytes().get(start..self.len) == Some(last.piece.as_bytes())
    }

    /// The bytes, last first.
    fn rev_bytes(&self) -> impl Iterator<Item = u8> + '_ {
        let mut pieces = Vec::new();
        let mut n = self.node.as_ref();
        while let Some(node) = n {
            pieces.push(&node.piece);
            n = node.prev.as_ref();
        }
        pieces.into_iter().flat_map(|p| p.bytes().rev())
    }
}

impl From<&str> for Text {
    fn from(s: &str) -> Text {
        let (mut hash, mut pow) = (0u64, 1u64);
        for b in s.bytes() {
            hash = hash.wrapping_mul(BASE).wrapping_add(u64::from(b) + 1);
            pow = pow.wrapping_mul(BASE);
        }
        Text {
            len: s.len(),
            hash,
            pow,
            node: (!s.is_empty()).then(|| {
                Arc::new(Node {
                    prev: None,
                    piece: s.into(),
                })
            }),
        }
    }
}

impl PartialEq for Text {
    fn eq(&self, other: &Text) -> bool {
        if self.len != other.len || self.hash != other.hash {
            return false;
        }
        // Walk both chains from the end. Chains built by the same appends share their
        // pieces, and usually their older nodes: both end the walk at once.
        let (mut a, mut b) = (self.node.as_deref(), other.node.as_deref());
        let (mut ia, mut ib) = (
            a.map_or(0, |n| n.piece.len()),
            b.map_or(0, |n| n.piece.len()),
        );
        loop {
            let (Some(x), Some(y)) = (a, b) else {
                return a.is_none() && b.is_none();
            };
            let whole = ia == x.piece.len() && ib == y.piece.len();
            if whole && std::ptr::eq(x, y) {
                return true;
            }
            if whole && Arc::ptr_eq(&x.piece, &y.piece) {
                ia = 0;
                ib = 0;
            } else {
                let k = ia.min(ib);
                if x.piece.as_bytes()[ia - k..ia] != y.piece.as_bytes()[ib - k..ib] {
                    return false;
                }
                ia -= k;
                ib -= k;
            }
            if ia == 0 {
                a = x.prev.as_deref();
                ia = a.map_or(0, |n| n.piece.len());
            }
            if ib == 0 {
                b = y.prev.as_deref();
                ib = b.map_or(0, |n| n.piece.len());
            }
        }
    }
}

impl Eq for Text {}

impl Hash for Text {
    fn hash<H: Hasher>(&self, state: &mut H) {
        state.write_u64(self.hash ^ self.len as u64);
    }
}

impl fmt::Display for Text {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut bytes: Vec<u8> = self.rev_bytes().collect();
        bytes.reverse();
        f.write_str(&String::from_utf8_lossy(&bytes))
    }
}

impl fmt::Debug for Text {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:?}", self.to_string())
    }
}

/// A kv operation.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum KvOp {
    /// Read a key.
    Get(Arc<str>),
    /// Set a key.
    Put(Arc<str>, Text),
    /// Append to a key's value.
    Append(Arc<str>, Text),
}

impl KvOp {
    /// The key it touches.
    pub fn key(&self) -> &Arc<str> {
        match self {
            KvOp::Get(k) | KvOp::Put(k, _) | KvOp::Append(k, _) => k,
        }
    }
}

/// What a kv operation returns.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum KvRet {
    /// A get's value.
    Value(Text),
    /// A put's or append's acknowledgement.
    Done,
}

/// The map; keys never written hold "".
#[derive(Clone, Debug, PartialEq, Eq, Hash, Default)]
pub enum KvState {
    /// Nothing written.
    #[default]
    Empty,
    /// One key written.
    One(Arc<str>, Text),
    /// Two or more keys written, sorted by key.
    Many(Arc<Vec<(Arc<str>, Text)>>),
}

impl KvState {
    /// The value of `key`.
    pub fn get(&self, key: &str) -> &Text {
        match self {
            KvState::One(k, v) if same_key(k, key) => v,
            KvState::Many(entries) => match entries.binary_search_by(|(k, _)| (**k).cmp(key)) {
                Ok(i) => &entries[i].1,
                Err(_) => &EMPTY,
            },
            _ => &EMPTY,
        }
    }

    /// This map with `key` set to `value`.
    pub fn set(&self, key: &Arc<str>, value: Text) -> KvState {
        match self {
            KvState::Empty => KvState::One(key.clone(), value),
            KvState::One(k, _) if k == key => KvState::One(key.clone(), value),
            KvState::One(k, v) => {
                let mut entries = vec![(k.clone(), v.clone()), (key.clone(), value)];
                entries.sort_by(|a, b| a.0.cmp(&b.0));
                KvState::Many(Arc::new(entries))
            }
            KvState::Many(entries) => {
                let mut entries = (**entries).clone();
                match entries.binary_search_by(|(k, _)| k.cmp(key)) {
                    Ok(i) => entries[i].1 = value,
                    Err(i) => entries.insert(i, (key.clone(), value)),
                }
                KvState::Many(Arc::new(entries))
            }
        }
    }
}

/// Key equality, quick for the short keys histories use (no `memcmp` call).
#[inline]
fn same_key(a: &str, b: &str) -> bool {
    a.len() == b.len()
        && if a.len() <= 16 {
            a.bytes().zip(b.bytes()).all(|(x, y)| x == y)
        } else {
            a == b
        }
}

/// The kv spec.
#[derive(Clone, Copy, Debug, Default)]
pub struct KvSpec;

impl SequentialSpec for KvSpec {
    type State = KvState;
    type Op = KvOp;
    type Ret = KvRet;

    fn name(&self) -> &'static str {
        "kv"
    }

    fn init(&self) -> KvState {
        KvState::Empty
    }

    fn step(&self, state: &KvState, op: &KvOp) -> (KvState, KvRet) {
        match op {
            KvOp::Get(k) => (state.clone(), KvRet::Value(state.get(k).clone())),
            KvOp::Put(k, v) => (state.set(k, v.clone()), KvRet::Done),
            KvOp::Append(k, v) => (state.set(k, state.get(k).append(v)), KvRet::Done),
        }
    }

    fn accepts(&self, state: &KvState, op: &KvOp, found: &KvRet) -> Option<KvState> {
        match (op, found) {
            (KvOp::Get(k), KvRet::Value(v)) => (state.get(k) == v).then(|| state.clone()),
            (KvOp::Get(_), _) | (_, KvRet::Value(_)) => None,
            _ => Some(self.step(state, op).0),
        }
    }

    fn read_only(&self, op: &KvOp, _: &KvRet) -> bool {
        matches!(op, KvOp::Get(_))
    }

    const PRUNES: bool = true;

    /// Appends only lengthen a value: a get can still return `v` only if the key's value
    /// is a prefix of `v`, unless a put to the key may come first.
    fn reachable(
        &self,
        state: &KvState,
        op: &KvOp,
        ret: &KvRet,
        between: &mut dyn Iterator<Item = &KvOp>,
    ) -> bool {
        let (KvOp::Get(k), KvRet::Value(v)) = (op, ret) else {
            return true;
        };
        if state.get(k).may_prefix(v) {
            return true;
        }
        for o in between {
            if let KvOp::Put(p, _) = o {
                if same_key(p, k) {
                    return true;
                }
            }
        }
        false
    }

    fn explain(&self, state: &KvState, op: &KvOp, _: &KvRet, found: &KvRet) -> String {
        match (op, found) {
            (KvOp::Get(k), KvRet::Value(v)) => format!(
                "get {k:?} returned {v:?}, but the key holds {:?}",
                state.get(k)
            ),
            _ => format!("{op:?} cannot return {found:?}"),
        }
    }

    /// A get of a value that no put of the history, complete or pending, puts to its key
    /// (nor the unwritten key's ""). Not applied to a key with appends, whose values are
    /// the puts' followed by any sequence of appended pieces.
    fn unproducible(&self, ops: &[(&KvOp, Option<&KvRet>)]) -> Option<(usize, String)> {
        let mut appended: std::collections::BTreeSet<&str> = Default::default();
        let mut put: std::collections::HashSet<(&str, &Text)> = Default::default();
        for (op, _) in ops {
            match op {
                KvOp::Put(k, v) => {
                    put.insert((k, v));
                }
                KvOp::Append(k, _) => {
                    appended.insert(k);
                }
                KvOp::Get(_) => {}
            }
        }
        ops.iter().enumerate().find_map(|(i, (op, ret))| match (op, ret) {
            (KvOp::Get(k), Some(KvRet::Value(v)))
                if *v != EMPTY && !appended.contains(&**k) && !put.contains(&(&**k, v)) =>
            {
                Some((
                    i,
                    format!(
                        "get {k:?} returned {v:?}, a value no put of the history puts to that key (none complete, none pending)"
                    ),
                ))
            }
            _ => None,
        })
    }

    fn partition(&self, op: &KvOp) -> Option<u64> {
        let mut h = rustc_hash::FxHasher::default();
        op.key().hash(&mut h);
        Some(h.finish())
    }
}

fn text(v: &Value) -> Option<String> {
    match v {
        Value::Str(s) | Value::Keyword(s) | Value::Symbol(s) => Some(s.clone()),
        Value::Int(i) => Some(i.to_string()),
        Value::Nil => Some(String::new()),
        _ => None,
    }
}

impl FromRaw for KvSpec {
    fn op_from_raw(&self, raw: &RawOp) -> Result<(KvOp, Outcome<KvRet>), String> {
        let key: Arc<str> = match &raw.key {
            Some(k) => text(k).ok_or_else(|| expected("a string key", k))?.into(),
            None => return Err(expected("a key for the kv spec", &Value::Nil)),
        };
        let arg = || {
            text(&raw.args)
                .map(|s| Text::from(s.as_str()))
                .ok_or_else(|| expected("a string value", &raw.args))
        };
        match raw.f.as_str() {
            "get" | "read" => Ok((
                KvOp::Get(key),
                outcome(raw, |r| {
                    text(r)
                        .map(|s| KvRet::Value(Text::from(s.as_str())))
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_equality_ignores_how_it_was_built() {
        let ab = Text::from("a").append(&Text::from("b"));
        assert_eq!(ab, Text::from("ab"));
        assert_ne!(ab, Text::from("ba"));
        assert_eq!(ab.to_string(), "ab");
        assert_eq!(Text::from("").append(&ab), ab);
        let h = |t: &Text| {
            let mut h = rustc_hash::FxHasher::default();
            t.hash(&mut h);
            h.finish()
        };
        assert_eq!(h(&ab), h(&Text::from("ab")));
    }

    #[test]
    fn may_prefix_is_false_only_for_a_text_that_is_no_prefix() {
        let t = |s: &str| Text::from(s);
        let ab = t("a").append(&t("b"));
        assert!(ab.may_prefix(&t("abc")) && ab.may_prefix(&t("ab")));
        assert!(Text::default().may_prefix(&t("x")));
        // Its last piece is not where it would be; too long; as long but different.
        assert!(!ab.may_prefix(&t("bac")));
        assert!(!ab.may_prefix(&t("a")));
        assert!(!ab.may_prefix(&t("ba")));
        assert!(!t("x").may_prefix(&Text::default()));
        // A whole of several pieces is not looked into.
        assert!(ab.may_prefix(&t("b").append(&t("ac"))));
        // A get of "ab" cannot follow a value "ba" unless a put to the key comes first.
        let spec = KvSpec;
        let k: Arc<str> = "k".into();
        let state = KvState::Empty.set(&k, t("b").append(&t("a")));
        let get = KvOp::Get(k.clone());
        let ret = KvRet::Value(t("abc"));
        let append = KvOp::Append(k.clone(), t("c"));
        let other = KvOp::Put("j".into(), t("ab"));
        let put = KvOp::Put(k.clone(), t("a"));
        assert!(!spec.reachable(&state, &get, &ret, &mut [&append, &other].into_iter()));
        assert!(spec.reachable(&state, &get, &ret, &mut [&append, &put].into_iter()));
        assert!(spec.reachable(&state, &append, &KvRet::Done, &mut std::iter::empty()));
    }
}
