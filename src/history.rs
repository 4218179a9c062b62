//! Histories: what every client invoked and what it saw.
//!
//! A [`History`] is a list of [`Operation`]s, each with its client, its invocation and
//! completion (as positions in one total order of events, and in virtual time), and its
//! [`Outcome`]: `Ok(ret)`, `Failed` (certainly no effect), or `Unknown` (the client crashed
//! or timed out: the operation may have taken effect at any point after its invocation,
//! or never). The same type comes out of the simulator, out of stress runs against real
//! servers, and out of the history file parsers.

use serde::{Deserialize, Serialize};
use std::borrow::Cow;

/// What became of one operation.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Outcome<Ret> {
    /// It completed and returned this.
    Ok(Ret),
    /// It completed with an error that guarantees it had no effect.
    Failed,
    /// Its effect is unknown (crash, timeout, lost connection): it may take effect at any
    /// point after its invocation, or never.
    Unknown,
}

/// A note a structure made in the trace during an operation (see [`crate::kv::Kv::mark`]).
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Mark {
    /// The label, e.g. `"enter"` or `"exit"`: borrowed when it is the `&'static str` a
    /// structure passed to [`crate::kv::Kv::mark`] (copying a history then copies no
    /// text), owned when it was read or built. Compares, hashes, prints and serializes
    /// as the text alone.
    pub label: Cow<'static, str>,
    /// Position in the history's total order of events.
    pub seq: u64,
    /// Virtual (true, not client) time in milliseconds.
    pub time_ms: u64,
}

/// One operation of a history.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Operation<Op, Ret> {
    /// The client (process) that ran it.
    pub client: usize,
    /// What was invoked.
    pub op: Op,
    /// Position of the invocation in the total order of events.
    pub call: u64,
    /// Position of the completion, `None` if it never completed (crashed or pending).
    pub ret: Option<u64>,
    /// Virtual time of the invocation, in milliseconds (0 for histories from outside).
    pub call_ms: u64,
    /// Virtual time of the completion, in milliseconds.
    pub ret_ms: Option<u64>,
    /// What became of it.
    pub outcome: Outcome<Ret>,
    /// Marks the structure made while running it.
    pub marks: Vec<Mark>,
}

impl<Op, Ret> Operation<Op, Ret> {
    /// Whether this operation certainly finished before `other` was invoked.
    pub fn precedes(&self, other: &Self) -> bool {
        match (&self.outcome, self.ret) {
            (Outcome::Unknown, _) | (_, None) => false,
            (_, Some(r)) => r < other.call,
        }
    }
}

/// A history: operations in invocation order.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct History<Op, Ret> {
    /// The operations, sorted by `call`.
    pub ops: Vec<Operation<Op, Ret>>,
}

impl<Op, Ret> Default for History<Op, Ret> {
    fn default() -> Self {
        History { ops: Vec::new() }
    }
}

impl<Op, Ret> History<Op, Ret> {
    /// An empty history.
    pub fn new() -> Self {
        Self::default()
    }

    /// Number of operations.
    pub fn len(&self) -> usize {
        self.ops.len()
    }

    /// Whether there are no operations.
    pub fn is_empty(&self) -> bool {
        self.ops.is_empty()
    }
}

/// One operation as the fields of its events in a history file (Jepsen's `f`, the
/// invocation's `value`, the completion's `value`), for [`History::write_jsonl`].
#[derive(Clone, Debug, PartialEq)]
pub struct JsonlOp {
    /// The function, e.g. `"enqueue"`.
    pub f: String,
    /// The invocation's value (`null`: none).
    pub value: serde_json::Value,
    /// The completion's value (`null`: none).
    pub result: serde_json::Value,
    /// The completion is `fail` (certainly no effect) although the operation returned.
    pub fail: bool,
}

impl JsonlOp {
    /// An operation's fields: its function, the invocation's value, the completion's
    /// value, and whether the completion is `fail`.
    pub fn new(
        f: &str,
        value: serde_json::Value,
        result: serde_json::Value,
        fail: bool,
    ) -> JsonlOp {
        JsonlOp {
            f: f.to_string(),
            value,
            result,
            fail,
        }
    }

    /// For operations no check-history spec reads: the operation's Debug text as `f`, the
    /// return value's Debug text (when it returned) as the completion's value.
    pub fn debug<Op: std::fmt::Debug, Ret: std::fmt::Debug>(op: &Op, ret: Option<&Ret>) -> JsonlOp {
        JsonlOp {
            f: format!("{op:?}"),
            value: serde_json::Value::Null,
            result: ret.map_or(serde_json::Value::Null, |r| {
                serde_json::Value::from(format!("{r:?}"))
            }),
            fail: false,
        }
    }
}

/// How a model's operations are written to a history file for `kvsim check-history`
/// ([`crate::model::Model::history_format`]): the spec that reads them, and each
/// operation's fields.
pub struct JsonlFormat<Op, Ret> {
    /// The `--spec` of `kvsim check-history` that reads these operations (`queue`, …).
    pub spec: &'static str,
    /// The flags that spec needs besides `--spec` (`--period 2` for a visitor counter
    /// whose period is 2 s), as `kvsim check-history` takes them.
    pub args: Vec<String>,
    /// An operation's fields, from the operation and its return value.
    pub describe: fn(&Op, Option<&Ret>) -> JsonlOp,
}

impl<Op, Ret> Clone for JsonlFormat<Op, Ret> {
    fn clone(&self) -> Self {
        JsonlFormat {
            spec: self.spec,
            args: self.args.clone(),
            describe: self.describe,
        }
    }
}

impl<Op, Ret> History<Op, Ret> {
    /// Writes the history as JSON lines in the `jsonl` format `kvsim check-history` reads
    /// (see `kvsim::formats::jsonl`): an `invoke` and a completion per operation, in the
    /// history's order of events, with `process`, `f`, `value` and `time` (milliseconds).
    /// An `Ok` outcome completes as `ok` (or `fail` when `describe` says so), a `Failed`
    /// one as `fail`, an `Unknown` one as `info`, or not at all if it never completed.
    /// `describe` gives each operation's fields from the operation and its return value.
    pub fn write_jsonl<W: std::io::Write>(
        &self,
        out: &mut W,
        describe: impl Fn(&Op, Option<&Ret>) -> JsonlOp,
    ) -> std::io::Result<()> {
        use serde_json::json;
        // (position, line): invocations and completions, then sorted by position.
        let mut lines: Vec<(u64, String)> = Vec::with_capacity(self.ops.len() * 2);
        for o in &self.ops {
            let ret = match &o.outcome {
                Outcome::Ok(r) => Some(r),
                _ => None,
            };
            let d = describe(&o.op, ret);
            let invoke = json!({"process": o.client, "type": "invoke", "f": d.f, "value": d.value, "time": o.call_ms});
            lines.push((o.call, invoke.to_string()));
            let Some(at) = o.ret else { continue };
            let (kind, value) = match &o.outcome {
                Outcome::Ok(_) if d.fail => ("fail", d.result),
                Outcome::Ok(_) => ("ok", d.result),
                Outcome::Failed => ("fail", serde_json::Value::Null),
                Outcome::Unknown => ("info", serde_json::Value::Null),
            };
            let mut done = json!({"process": o.client, "type": kind, "f": d.f, "value": value});
            if let Some(t) = o.ret_ms {
                done["time"] = json!(t);
            }
            lines.push((at, done.to_string()));
        }
        lines.sort_by_key(|(at, _)| *at);
        for (_, line) in lines {
            writeln!(out, "{line}")?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::formats::{jsonl, pair, to_history};
    use crate::specs::counter::CounterSpec;
    use serde_json::json;

    fn op(
        client: usize,
        call: u64,
        ret: Option<u64>,
        o: &str,
        out: Outcome<u64>,
    ) -> Operation<String, u64> {
        Operation {
            client,
            op: o.to_string(),
            call,
            ret,
            call_ms: call,
            ret_ms: ret,
            outcome: out,
            marks: vec![],
        }
    }

    #[test]
    fn jsonl_round_trips_through_the_reader() {
        // 0 adds 1 (ok) while 1 reads 1; 2 adds 5 and times out; 3's add is lost (fail);
        // 4 reads, never completed.
        let h = History {
            ops: vec![
                op(0, 0, Some(2), "add", Outcome::Ok(0)),
                op(1, 1, Some(3), "read", Outcome::Ok(1)),
                op(2, 4, Some(5), "add", Outcome::Unknown),
                op(3, 6, Some(7), "add", Outcome::Ok(99)),
                op(4, 8, None, "read", Outcome::Unknown),
            ],
        };
        let mut out = Vec::new();
        h.write_jsonl(&mut out, |o, r| JsonlOp {
            f: o.clone(),
            value: if o == "add" {
                json!(if r == Some(&99) { 7 } else { 1 })
            } else {
                json!(null)
            },
            result: if o == "read" { json!(r) } else { json!(null) },
            fail: r == Some(&99),
        })
        .unwrap();
        let text = String::from_utf8(out).unwrap();
        assert_eq!(text.lines().count(), 9, "{text}");
        assert_eq!(
            text.lines().nth(1).unwrap(),
            r#"{"f":"read","process":1,"time":1,"type":"invoke","value":null}"#
        );
        let raws = pair(&jsonl::parse(&text).unwrap()).unwrap();
        let back = to_history(&CounterSpec, &raws).unwrap();
        let outcomes: Vec<String> = back
            .ops
            .iter()
            .map(|o| format!("{:?}", o.outcome))
            .collect();
        assert_eq!(
            outcomes,
            ["Ok(Done)", "Ok(Value(1))", "Unknown", "Failed", "Unknown"]
        );
        let order: Vec<(u64, Option<u64>)> = back.ops.iter().map(|o| (o.call, o.ret)).collect();
        assert_eq!(
            order,
            [
                (0, Some(2)),
                (1, Some(3)),
                (4, Some(5)),
                (6, Some(7)),
                (8, None)
            ]
        );
    }
}
