//! `jsonl`: JSON lines of our own, one event per line, blank lines ignored:
//!
//! ```text
//! {"process": 0, "type": "invoke", "f": "write", "value": 3}
//! {"process": 0, "type": "ok", "f": "write", "value": 3, "time": 12}
//! {"process": 1, "type": "invoke", "f": "get", "key": "x"}
//! ```
//!
//! `process` (a number), `type` (`invoke`, `ok`, `fail`, `info`) and `f` are required;
//! `key`, `value` (any JSON; `null` or absent is nil) and `time` (milliseconds) are
//! optional. The fields are Jepsen's, so the same events read the same in every format.

use super::jepsen_edn::event_from_map;
use super::{excerpt, HistoryEvent, LineError, Value, INTEGER_64};

/// Parses JSON lines into events; its messages write values as JSON.
pub fn parse(text: &str) -> Result<Vec<HistoryEvent>, LineError> {
    super::in_syntax(super::Syntax::Json, || parse_json_lines(text))
}

fn parse_json_lines(text: &str) -> Result<Vec<HistoryEvent>, LineError> {
    let mut events = Vec::new();
    for (i, line_text) in text.lines().enumerate() {
        if let Some(e) = parse_line(i + 1, line_text)? {
            super::push_event(&mut events, e)?;
        }
    }
    Ok(events)
}

/// One line (1-based `line`) as an event: `None` for a blank line or a nemesis event.
/// Values in its messages are written in the current syntax ([`super::in_syntax`]).
pub(crate) fn parse_line(line: usize, line_text: &str) -> Result<Option<HistoryEvent>, LineError> {
    if line_text.trim().is_empty() {
        return Ok(None);
    }
    super::check_line_length(line, line_text)?;
    let json: serde_json::Value = serde_json::from_str(line_text).map_err(|e| {
        // serde_json stops at 128 levels of nesting, as the EDN reader does.
        let what = if e.to_string().starts_with("recursion limit exceeded") {
            format!(
                "a JSON object nested at most {} deep (deeper at column {})",
                super::edn::MAX_DEPTH,
                e.column()
            )
        } else {
            format!("a JSON object (invalid at column {})", e.column())
        };
        LineError::new(line, what, excerpt(line_text))
    })?;
    let v = from_json(&json).map_err(|_| {
        let literal = number_literals(line_text)
            .find(|n| n.parse::<i64>().is_err())
            .unwrap_or("a number");
        let what = if literal.bytes().all(|b| b.is_ascii_digit() || b == b'-') {
            INTEGER_64
        } else {
            "an integer (JSON numbers with a fraction or an exponent are not supported)"
        };
        LineError::new(line, what, literal)
    })?;
    event_from_map(&v, line, 1)
}

/// The number literals of a JSON text, as written (serde_json keeps only an `f64` of a
/// number too large for 64 bits).
fn number_literals(text: &str) -> impl Iterator<Item = &str> {
    let b = text.as_bytes();
    let mut i = 0;
    let mut in_string = false;
    std::iter::from_fn(move || {
        while i < b.len() {
            let c = b[i];
            if in_string {
                match c {
                    b'\\' => i += 2,
                    b'"' => {
                        in_string = false;
                        i += 1;
                    }
                    _ => i += 1,
                }
            } else if c == b'"' {
                in_string = true;
                i += 1;
            } else if c == b'-' || c.is_ascii_digit() {
                let start = i;
                while i < b.len() && matches!(b[i], b'0'..=b'9' | b'-' | b'+' | b'.' | b'e' | b'E')
                {
                    i += 1;
                }
                return Some(&text[start..i]);
            } else {
                i += 1;
            }
        }
        None
    })
}

fn from_json(j: &serde_json::Value) -> Result<Value, String> {
    use serde_json::Value as J;
    Ok(match j {
        J::Null => Value::Nil,
        J::Bool(b) => Value::Bool(*b),
        J::Number(n) => Value::Int(n.as_i64().ok_or_else(|| n.to_string())?),
        J::String(s) => Value::Str(s.clone()),
        J::Array(items) => Value::List(items.iter().map(from_json).collect::<Result<_, _>>()?),
        J::Object(m) => Value::Map(
            m.iter()
                .map(|(k, v)| Ok((Value::Str(k.clone()), from_json(v)?)))
                .collect::<Result<_, String>>()?,
        ),
    })
}
