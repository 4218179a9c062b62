//! `jepsen-edn`: Jepsen's EDN operation maps, as in its `history.edn`:
//!
//! ```text
//! {:process 0, :type :invoke, :f :read, :value nil}
//! {:process 0, :type :ok, :f :read, :value 3}
//! {:process 1, :type :invoke, :f :put, :key "x", :value "a"}
//! ```
//!
//! One map per line, or maps in a vector (`[{…} {…}]`) or a list (`({…} {…})`, a seq as
//! Clojure's `pr` writes it), across lines. Keys: `:process`
//! (an integer; `:nemesis` events are skipped), `:type` (`:invoke`, `:ok`, `:fail`,
//! `:info`), `:f`, optional `:key`, `:value`, and optional `:time` (nanoseconds, as
//! Jepsen writes it). Other keys are ignored.

use super::edn::Reader;
use super::{EventType, HistoryEvent, LineError, Value};

/// Parses EDN text into events.
pub fn parse(text: &str) -> Result<Vec<HistoryEvent>, LineError> {
    let mut r = Reader::new(text, 1);
    let mut events = Vec::new();
    while let Some(c) = r.peek() {
        if c == b'[' || c == b'(' {
            let close = if c == b'[' { b']' } else { b')' };
            r.bump();
            loop {
                match r.peek() {
                    Some(b) if b == close => {
                        r.bump();
                        break;
                    }
                    Some(_) => {
                        let line = r.line();
                        let v = r.value()?;
                        push(&mut events, &v, line, 1_000_000)?;
                    }
                    None => {
                        return Err(LineError::new(
                            r.line(),
                            format!(
                                "{} to close the {} of operations",
                                close as char,
                                if close == b']' { "vector" } else { "list" }
                            ),
                            "the end of the file",
                        ))
                    }
                }
            }
        } else {
            let line = r.line();
            let v = r.value()?;
            push(&mut events, &v, line, 1_000_000)?;
        }
    }
    Ok(events)
}

fn push(
    events: &mut Vec<HistoryEvent>,
    v: &Value,
    line: usize,
    per_ms: u64,
) -> Result<(), LineError> {
    if let Some(e) = event_from_map(v, line, per_ms)? {
        super::push_event(events, e)?;
    }
    Ok(())
}

/// One operation map (EDN or JSON) as an event; `None` for nemesis events. `per_ms` is
/// the number of `:time` units in a millisecond.
pub(crate) fn event_from_map(
    v: &Value,
    line: usize,
    per_ms: u64,
) -> Result<Option<HistoryEvent>, LineError> {
    if !matches!(v, Value::Map(_)) {
        let what = match super::syntax() {
            super::Syntax::Json => "a JSON object {\"process\": …, \"type\": …, \"f\": …}",
            super::Syntax::Edn => "an operation map {:process …, :type …, :f …}",
        };
        return Err(LineError::new(line, what, v.to_string()));
    }
    let name = |key: &str| -> Result<String, LineError> {
        match v.get(key) {
            Some(Value::Keyword(s) | Value::Str(s) | Value::Symbol(s)) => Ok(s.clone()),
            Some(other) => Err(LineError::new(
                line,
                format!("a name for {key}"),
                other.to_string(),
            )),
            None => Err(LineError::new(
                line,
                format!("the key {key} in the operation map"),
                v.to_string(),
            )),
        }
    };
    let process = match v.get("process") {
        Some(Value::Int(p)) if *p >= 0 => *p as u64,
        Some(Value::Keyword(k) | Value::Str(k)) if k == "nemesis" => return Ok(None),
        Some(other) => return Err(LineError::new(line, "a process number", other.to_string())),
        None => {
            return Err(LineError::new(
                line,
                "the key process in the operation map",
                v.to_string(),
            ))
        }
    };
    let type_name = name("type")?;
    let kind = EventType::from_name(&type_name).ok_or_else(|| {
        LineError::new(line, "a type invoke, ok, fail or info", type_name.clone())
    })?;
    let time_ms = match v.get("time") {
        Some(Value::Int(t)) if *t >= 0 => Some(*t as u64 / per_ms),
        _ => None,
    };
    Ok(Some(HistoryEvent {
        process,
        kind,
        f: name("f")?,
        key: v.get("key").cloned(),
        value: v.get("value").cloned().unwrap_or(Value::Nil),
        time_ms,
        line,
    }))
}
