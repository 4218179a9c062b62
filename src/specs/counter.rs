//! A counter, initially 0: `read` returns it, `add n` adds `n` (acknowledged only),
//! `incr n` / `decr n` add or subtract `n` and return the new value (as memcached's
//! incr/decr do; the spec does not clamp at zero).

use crate::formats::{expected, outcome, FromRaw, RawOp, Value};
use crate::history::Outcome;
use crate::spec::SequentialSpec;

/// A counter operation.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum CounterOp {
    /// Read the value.
    Read,
    /// Add (a negative number subtracts); returns nothing.
    Add(i64),
    /// Add and return the new value.
    AddGet(i64),
}

/// What a counter operation returns.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum CounterRet {
    /// The value read, or the value after an `AddGet`.
    Value(i64),
    /// An `Add`'s acknowledgement.
    Done,
}

/// The counter spec.
#[derive(Clone, Copy, Debug, Default)]
pub struct CounterSpec;

impl SequentialSpec for CounterSpec {
    type State = i64;
    type Op = CounterOp;
    type Ret = CounterRet;

    fn name(&self) -> &'static str {
        "counter"
    }

    fn init(&self) -> i64 {
        0
    }

    fn step(&self, state: &i64, op: &CounterOp) -> (i64, CounterRet) {
        match op {
            CounterOp::Read => (*state, CounterRet::Value(*state)),
            CounterOp::Add(n) => (state.wrapping_add(*n), CounterRet::Done),
            CounterOp::AddGet(n) => {
                let v = state.wrapping_add(*n);
                (v, CounterRet::Value(v))
            }
        }
    }

    /// A value read (or returned by an add) outside the range the adds of the history,
    /// complete or pending, can take the counter to: from 0 plus every negative amount to
    /// 0 plus every positive one. Not applied when that range leaves the 64-bit integers
    /// (the counter wraps there).
    fn unproducible(&self, ops: &[(&CounterOp, Option<&CounterRet>)]) -> Option<(usize, String)> {
        let (mut lo, mut hi) = (i128::from(self.init()), i128::from(self.init()));
        for (op, _) in ops {
            if let CounterOp::Add(n) | CounterOp::AddGet(n) = op {
                let n = i128::from(*n);
                if n < 0 {
                    lo += n;
                } else {
                    hi += n;
                }
            }
        }
        if lo < i128::from(i64::MIN) || hi > i128::from(i64::MAX) {
            return None;
        }
        ops.iter().enumerate().find_map(|(i, (op, ret))| {
            let Some(CounterRet::Value(v)) = ret else {
                return None;
            };
            let what = match op {
                CounterOp::AddGet(n) => format!("adding {n} returned {v}"),
                _ => format!("read returned {v}"),
            };
            (!(lo..=hi).contains(&i128::from(*v))).then(|| {
                (
                    i,
                    format!(
                        "{what}, but the adds of the history (complete or pending) keep the counter from {lo} to {hi}"
                    ),
                )
            })
        })
    }

    fn read_only(&self, op: &CounterOp, _: &CounterRet) -> bool {
        matches!(
            op,
            CounterOp::Read | CounterOp::Add(0) | CounterOp::AddGet(0)
        )
    }

    fn explain(
        &self,
        state: &i64,
        op: &CounterOp,
        expected: &CounterRet,
        found: &CounterRet,
    ) -> String {
        match (op, found) {
            (CounterOp::Read, CounterRet::Value(v)) => {
                format!("read returned {v}, but the counter is {state}")
            }
            (CounterOp::AddGet(n), CounterRet::Value(v)) => format!(
                "adding {n} returned {v}, but the counter was {state}, so it returns {expected:?}"
            ),
            _ => format!("{op:?} cannot return {found:?}"),
        }
    }
}

fn int(v: &Value, what: &str) -> Result<i64, String> {
    match v {
        Value::Int(i) => Ok(*i),
        Value::Nil if what == "an amount" => Ok(1),
        other => Err(expected(what, other)),
    }
}

impl FromRaw for CounterSpec {
    fn op_from_raw(&self, raw: &RawOp) -> Result<(CounterOp, Outcome<CounterRet>), String> {
        match raw.f.as_str() {
            "read" => Ok((
                CounterOp::Read,
                outcome(raw, |r| {
                    int(r, "a read result (an integer)").map(CounterRet::Value)
                })?,
            )),
            "add" => Ok((
                CounterOp::Add(int(&raw.args, "an amount")?),
                outcome(raw, |_| Ok(CounterRet::Done))?,
            )),
            "incr" | "decr" => {
                let n = int(&raw.args, "an amount")?;
                let n = if raw.f == "decr" { n.wrapping_neg() } else { n };
                Ok((
                    CounterOp::AddGet(n),
                    outcome(raw, |r| {
                        int(r, "an incr/decr result (the new value)").map(CounterRet::Value)
                    })?,
                ))
            }
            f => Err(expected(
                "f read, add, incr or decr",
                &Value::Keyword(f.to_string()),
            )),
        }
    }
}
