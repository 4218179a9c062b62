//! `jepsen-log`: Jepsen's log lines, as in the etcd histories Porcupine checks:
//!
//! ```text
//! INFO  jepsen.util - 3  :invoke  :cas  [0 3]
//! INFO  jepsen.util - 3  :fail    :cas  [0 3]
//! ```
//!
//! After `jepsen.util - ` come the process, the type, the function and the value (EDN),
//! separated by whitespace (tabs in Jepsen's own logs). Lines without `jepsen.util - ` are other log output and are
//! skipped, as are nemesis lines (`:nemesis` as the process).
//!
//! These logs are read as Porcupine reads them: a failed cas also says its comparison did
//! not match ([`FailMeans::CompareFailed`](super::FailMeans), this format's default).

use super::{edn, excerpt, EventType, HistoryEvent, LineError, Value};

/// Parses log text into events.
pub fn parse(text: &str) -> Result<Vec<HistoryEvent>, LineError> {
    let mut events = Vec::new();
    for (i, line_text) in text.lines().enumerate() {
        let line = i + 1;
        super::check_line_length(line, line_text)?;
        let Some(at) = line_text.find("jepsen.util - ") else {
            continue;
        };
        let rest = &line_text[at + "jepsen.util - ".len()..];
        let mut fields = rest.split_whitespace();
        let process_text = fields.next().unwrap_or("");
        if process_text == ":nemesis" {
            continue;
        }
        let process: u64 = process_text.parse().map_err(|_| {
            LineError::new(
                line,
                "a process number after \"jepsen.util - \"",
                excerpt(rest),
            )
        })?;
        let kind = fields
            .next()
            .and_then(|t| t.strip_prefix(':'))
            .and_then(EventType::from_name)
            .ok_or_else(|| {
                LineError::new(
                    line,
                    "a type :invoke, :ok, :fail or :info after the process",
                    excerpt(rest),
                )
            })?;
        let f = fields
            .next()
            .and_then(|t| t.strip_prefix(':'))
            .filter(|t| !t.is_empty())
            .ok_or_else(|| {
                LineError::new(
                    line,
                    "a function keyword (like :read) after the type",
                    excerpt(rest),
                )
            })?;
        // The value is the rest of the line after the third field.
        let f_at = rest
            .find(&format!(":{f}"))
            .map_or(rest.len(), |i| i + f.len() + 1);
        let value_text = rest[f_at..].trim();
        let value = if value_text.is_empty() {
            Value::Nil
        } else {
            edn::parse_one(value_text, line)?
        };
        super::push_event(
            &mut events,
            HistoryEvent {
                process,
                kind,
                f: f.to_string(),
                key: None,
                value,
                time_ms: None,
                line,
            },
        )?;
    }
    Ok(events)
}
