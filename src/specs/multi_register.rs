//! Knossos's multi-register: a map of registers, each initially unwritten; a transaction
//! is a list of micro-operations, `read k` (returns `k`'s value) and `write k v`, applied
//! in order, atomically. A history whose transactions each touch one register is checked
//! per register. Knossos's model takes the registers' initial values
//! (`(multi-register {:x 0 :y 0})`): so does [`MultiRegisterSpec::with_initial`]
//! (`kvsim check-history --initial '{:x 0 :y 0}'`).
//!
//! In history files: `{:f :txn, :value [[:read :x nil] [:write :y 2]]}`, completing with
//! the reads filled in (`[[:read :x 1] [:write :y 2]]`); `:r` and `:w` are accepted for
//! `:read` and `:write`. A read that completed with nil saw an unwritten register (and a
//! write of nil unwrites it). Knossos itself accepts a nil read whatever the register
//! holds, because it also reads the invocation's nil placeholders of operations whose
//! outcome is unknown; here those operations are unknown, and their reads constrain
//! nothing.

use crate::formats::{expected, outcome, FromRaw, RawOp, Value};
use crate::history::Outcome;
use crate::spec::SequentialSpec;
use std::collections::BTreeMap;
use std::hash::{Hash, Hasher};

/// One micro-operation of a transaction.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum RegMicro {
    /// Read a register.
    Read(Value),
    /// Write a value to a register.
    Write(Value, Value),
}

impl RegMicro {
    /// The register it touches.
    pub fn key(&self) -> &Value {
        match self {
            RegMicro::Read(k) | RegMicro::Write(k, _) => k,
        }
    }
}

/// A transaction: micro-operations applied in order, atomically.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct RegTxn(pub Vec<RegMicro>);

/// What a transaction returns: per micro-operation, the value a read saw (nil:
/// unwritten), or `None` for a write.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct RegTxnRet(pub Vec<Option<Value>>);

/// The multi-register spec.
#[derive(Clone, Debug, Default)]
pub struct MultiRegisterSpec {
    initial: BTreeMap<Value, Value>,
}

impl MultiRegisterSpec {
    /// Every register initially unwritten.
    pub fn new() -> Self {
        MultiRegisterSpec::default()
    }

    /// The registers initially hold these values (others are unwritten; a nil value is
    /// unwritten).
    pub fn with_initial(initial: impl IntoIterator<Item = (Value, Value)>) -> Self {
        MultiRegisterSpec {
            initial: initial
                .into_iter()
                .filter(|(_, v)| *v != Value::Nil)
                .collect(),
        }
    }
}

impl SequentialSpec for MultiRegisterSpec {
    /// The written registers and their values (an unwritten register is absent).
    type State = BTreeMap<Value, Value>;
    type Op = RegTxn;
    type Ret = RegTxnRet;

    fn name(&self) -> &'static str {
        "multi-register"
    }

    fn init(&self) -> Self::State {
        self.initial.clone()
    }

    fn step(&self, state: &Self::State, op: &RegTxn) -> (Self::State, RegTxnRet) {
        let mut next = state.clone();
        let ret =
            op.0.iter()
                .map(|m| match m {
                    RegMicro::Read(k) => Some(next.get(k).cloned().unwrap_or(Value::Nil)),
                    RegMicro::Write(k, Value::Nil) => {
                        next.remove(k);
                        None
                    }
                    RegMicro::Write(k, v) => {
                        next.insert(k.clone(), v.clone());
                        None
                    }
                })
                .collect();
        (next, RegTxnRet(ret))
    }

    /// A read of a register's value that neither its initial value nor any write of the
    /// history to it, complete or pending, gives (nil, unwritten, is always possible).
    fn unproducible(&self, ops: &[(&RegTxn, Option<&RegTxnRet>)]) -> Option<(usize, String)> {
        let mut written: std::collections::BTreeSet<(&Value, &Value)> =
            self.initial.iter().collect();
        for (op, _) in ops {
            for m in &op.0 {
                if let RegMicro::Write(k, v) = m {
                    written.insert((k, v));
                }
            }
        }
        ops.iter().enumerate().find_map(|(i, (op, ret))| {
            let ret = (*ret)?;
            op.0.iter()
                .zip(&ret.0)
                .enumerate()
                .find_map(|(j, (m, r))| match (m, r) {
                    (RegMicro::Read(k), Some(v))
                        if *v != Value::Nil && !written.contains(&(k, v)) =>
                    {
                        Some((
                            i,
                            format!(
                                "read of register {k} (micro-op {} of {}) returned {v}, a value no write of the history writes to it (none complete, none pending)",
                                j + 1,
                                op.0.len()
                            ),
                        ))
                    }
                    _ => None,
                })
        })
    }

    fn read_only(&self, op: &RegTxn, _: &RegTxnRet) -> bool {
        op.0.iter().all(|m| matches!(m, RegMicro::Read(_)))
    }

    fn explain(
        &self,
        state: &Self::State,
        op: &RegTxn,
        expected: &RegTxnRet,
        found: &RegTxnRet,
    ) -> String {
        for (i, (m, (e, f))) in op.0.iter().zip(expected.0.iter().zip(&found.0)).enumerate() {
            if let (RegMicro::Read(k), Some(e), Some(f)) = (m, e, f) {
                if e != f {
                    let holds = match e {
                        Value::Nil => "is unwritten".to_string(),
                        e => format!("holds {e}"),
                    };
                    return format!(
                        "read of register {k} (micro-op {} of {}) returned {f}, but the register {holds}",
                        i + 1,
                        op.0.len()
                    );
                }
            }
        }
        format!("{op:?} returned {found:?}, but in state {state:?} it returns {expected:?}")
    }

    fn partition(&self, op: &RegTxn) -> Option<u64> {
        let first = op.0.first()?.key();
        if op.0.iter().any(|m| m.key() != first) {
            return None;
        }
        let mut h = rustc_hash::FxHasher::default();
        first.hash(&mut h);
        Some(h.finish())
    }
}

const MICRO: &str = "a micro-operation [:read k v] or [:write k v]";

/// A micro-operation and, for a read, the value in the file.
fn micro(v: &Value) -> Result<(RegMicro, Option<Value>), String> {
    let Value::List(parts) = v else {
        return Err(expected(MICRO, v));
    };
    match parts.as_slice() {
        [Value::Keyword(f), k, v] if f == "read" || f == "r" => {
            Ok((RegMicro::Read(k.clone()), Some(v.clone())))
        }
        [Value::Keyword(f), k, v] if f == "write" || f == "w" => {
            Ok((RegMicro::Write(k.clone(), v.clone()), None))
        }
        _ => Err(expected(MICRO, v)),
    }
}

impl FromRaw for MultiRegisterSpec {
    fn op_from_raw(&self, raw: &RawOp) -> Result<(RegTxn, Outcome<RegTxnRet>), String> {
        if raw.f != "txn" {
            return Err(expected(
                "f txn (the multi-register spec)",
                &Value::Keyword(raw.f.clone()),
            ));
        }
        let Value::List(items) = &raw.args else {
            return Err(expected(
                "a transaction (a list of micro-operations)",
                &raw.args,
            ));
        };
        let txn = RegTxn(
            items
                .iter()
                .map(|m| micro(m).map(|(m, _)| m))
                .collect::<Result<_, _>>()?,
        );
        let outcome = outcome(raw, |r| {
            let Value::List(items) = r else {
                return Err(expected(
                    "a transaction result (the micro-operations with reads filled in)",
                    r,
                ));
            };
            if items.len() != txn.0.len() {
                return Err(expected(
                    &format!("a transaction result with {} micro-operations", txn.0.len()),
                    r,
                ));
            }
            items
                .iter()
                .zip(&txn.0)
                .map(|(m, invoked)| {
                    let (done, read) = micro(m)?;
                    let same = match (&done, invoked) {
                        (RegMicro::Read(a), RegMicro::Read(b)) => a == b,
                        (RegMicro::Write(a, x), RegMicro::Write(b, y)) => a == b && x == y,
                        _ => false,
                    };
                    if !same {
                        return Err(expected(
                            "a transaction result whose micro-operations are the invocation's, reads filled in",
                            r,
                        ));
                    }
                    Ok(read)
                })
                .collect::<Result<_, String>>()
                .map(RegTxnRet)
        })?;
        Ok((txn, outcome))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn txn(micros: Vec<RegMicro>) -> RegTxn {
        RegTxn(micros)
    }

    #[test]
    fn reads_see_the_writes_before_them_and_nil_when_unwritten() {
        let s = MultiRegisterSpec::new();
        let x = Value::Keyword("x".into());
        let y = Value::Keyword("y".into());
        let t = txn(vec![
            RegMicro::Read(x.clone()),
            RegMicro::Write(y.clone(), Value::Int(2)),
            RegMicro::Read(y.clone()),
        ]);
        let (state, ret) = s.step(&s.init(), &t);
        assert_eq!(
            ret,
            RegTxnRet(vec![Some(Value::Nil), None, Some(Value::Int(2))])
        );
        let unwrite = txn(vec![RegMicro::Write(y.clone(), Value::Nil)]);
        let (state, _) = s.step(&state, &unwrite);
        assert_eq!(state, s.init());
        let bad = RegTxnRet(vec![Some(Value::Int(5)), None, Some(Value::Int(2))]);
        assert_eq!(s.accepts(&s.init(), &t, &bad), None);
        assert_eq!(
            s.explain(&s.init(), &t, &ret, &bad),
            "read of register :x (micro-op 1 of 3) returned 5, but the register is unwritten"
        );
    }

    #[test]
    fn initial_values_are_read_until_overwritten() {
        let x = Value::Keyword("x".into());
        let s = MultiRegisterSpec::with_initial([(x.clone(), Value::Int(0))]);
        let read = txn(vec![RegMicro::Read(x.clone())]);
        assert_eq!(
            s.step(&s.init(), &read).1,
            RegTxnRet(vec![Some(Value::Int(0))])
        );
        assert_eq!(
            MultiRegisterSpec::with_initial([(x, Value::Nil)]).init(),
            BTreeMap::new()
        );
    }

    #[test]
    fn single_register_transactions_partition_by_register() {
        let s = MultiRegisterSpec::new();
        let x = Value::Keyword("x".into());
        let y = Value::Keyword("y".into());
        let one = txn(vec![
            RegMicro::Read(x.clone()),
            RegMicro::Write(x.clone(), Value::Int(1)),
        ]);
        let two = txn(vec![RegMicro::Read(x), RegMicro::Read(y)]);
        assert!(s.partition(&one).is_some());
        assert_eq!(s.partition(&two), None);
    }
}
