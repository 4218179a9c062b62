//! The event log's history files: what `kvsim stress --history-out` writes and `kvsim
//! check-history --spec event-log` reads (see "History files" in the model's docs).

use super::{Op, Ret, Window};
use kvsim::{raw_expected, raw_outcome, JsonlOp, Outcome, RawOp, Value};
use serde_json::json;

/// The largest `back` or `span` of a window read from a history file, seconds (about
/// 31700 years): the checker's arithmetic in milliseconds stays far from overflowing.
pub const MAX_WINDOW_SECS: u64 = 1_000_000_000_000;

/// A window's fields in a history file.
fn window_json(w: &Window) -> serde_json::Value {
    json!({"back": w.back, "span": w.span, "events": w.events})
}

/// An operation's fields in a history file (read back by [`op_from_raw`]).
pub(super) fn jsonl_op(op: &Op, ret: Option<&Ret>) -> JsonlOp {
    let null = json!(null);
    match op {
        Op::Put(id) => JsonlOp::new("put", json!(id), null, false),
        Op::Fetch => {
            let events = match ret {
                Some(Ret::Events(ids)) => json!(ids),
                _ => null,
            };
            JsonlOp::new("fetch", json!(null), events, false)
        }
        Op::FetchRange { ago, span } => {
            let window = match ret {
                Some(Ret::Range(w)) => window_json(w),
                _ => null,
            };
            JsonlOp::new(
                "fetch-range",
                json!({"ago": ago, "span": span}),
                window,
                false,
            )
        }
        Op::Poll(ms) => {
            let rounds = match ret {
                Some(Ret::Polled(rounds)) => rounds.iter().map(window_json).collect(),
                _ => null,
            };
            JsonlOp::new("poll", json!(ms), rounds, false)
        }
        Op::Sleep(ms) => JsonlOp::new("sleep", json!(ms), null, false),
    }
}

/// An event id of a history file.
fn event_id(v: &Value, what: &str) -> Result<u32, String> {
    match v {
        Value::Int(n) => u32::try_from(*n)
            .map_err(|_| raw_expected(&format!("{what}: an integer from 0 to 4294967295"), v)),
        other => Err(raw_expected(
            &format!("{what}: an integer from 0 to 4294967295"),
            other,
        )),
    }
}

/// The event ids a fetch returned, `[ID, ...]`.
fn event_ids(v: &Value, what: &str) -> Result<Vec<u32>, String> {
    match v {
        Value::List(items) => items
            .iter()
            .map(|i| event_id(i, &format!("{what}, each event id")))
            .collect(),
        other => Err(raw_expected(
            &format!("{what}: a list of event ids [ID, ...]"),
            other,
        )),
    }
}

/// A window of a history file, `{"back": B, "span": S, "events": [ID, ...]}`.
fn window(v: &Value, what: &str) -> Result<Window, String> {
    let shape =
        format!("{what}: a window {{\"back\": SECS, \"span\": SECS, \"events\": [ID, ...]}}");
    if !matches!(v, Value::Map(_)) {
        return Err(raw_expected(&shape, v));
    }
    let secs = |key: &str| match v.get(key) {
        Some(Value::Int(n)) if (0..=MAX_WINDOW_SECS as i64).contains(n) => Ok(*n as u64),
        Some(other) => Err(raw_expected(
            &format!("{what}: {key}, seconds from 0 to {MAX_WINDOW_SECS}"),
            other,
        )),
        None => Err(raw_expected(&shape, v)),
    };
    let (back, span) = (secs("back")?, secs("span")?);
    let events = match v.get("events") {
        Some(events) => event_ids(events, &format!("{what}: its events"))?,
        None => return Err(raw_expected(&shape, v)),
    };
    Ok(Window { back, span, events })
}

/// One operation of a history file (see "History files" in the module docs): the
/// operation and its outcome (`ok` with its return, `fail` no effect, `info` or no
/// completion unknown). `Err` is `expected …, found …` (naming the `result` when the
/// completion's value is wrong).
pub fn op_from_raw(raw: &RawOp) -> Result<(Op, Outcome<Ret>), String> {
    let ms = match raw.args {
        Value::Int(ms) if ms >= 0 => ms as u64,
        _ => 0,
    };
    match raw.f.as_str() {
        "put" => Ok((
            Op::Put(event_id(&raw.args, "the value of put: the event's id")?),
            raw_outcome(raw, |_| Ok(Ret::Put))?,
        )),
        "fetch" => Ok((
            Op::Fetch,
            raw_outcome(raw, |v| {
                event_ids(v, "the result of fetch()").map(Ret::Events)
            })?,
        )),
        "fetch-range" => {
            let arg = |key: &str| match raw.args.get(key) {
                Some(Value::Int(n)) if *n >= 0 => *n as u64,
                _ => 0,
            };
            Ok((
                Op::FetchRange {
                    ago: arg("ago"),
                    span: arg("span"),
                },
                raw_outcome(raw, |v| {
                    window(v, "the result of fetch(first, last)").map(Ret::Range)
                })?,
            ))
        }
        "poll" => {
            let rounds = |v: &Value| match v {
                Value::List(items) => items
                    .iter()
                    .map(|r| window(r, "the result of poll, each round"))
                    .collect::<Result<Vec<_>, _>>()
                    .map(Ret::Polled),
                other => Err(raw_expected(
                    "the result of poll: a list of its rounds' windows [WINDOW, ...]",
                    other,
                )),
            };
            Ok((Op::Poll(ms), raw_outcome(raw, rounds)?))
        }
        "sleep" => Ok((Op::Sleep(ms), raw_outcome(raw, |_| Ok(Ret::Slept))?)),
        other => Err(format!(
            "expected an operation of spec event-log (put, fetch, fetch-range, poll or sleep), found {other:?}"
        )),
    }
}
