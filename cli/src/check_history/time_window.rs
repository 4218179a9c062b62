//! The time-window specs of `kvsim check-history`: `visitor-counter` and `event-log`.
//!
//! Their properties are not linearizability: a visitor counter's `value()` answers the
//! previous period's count, an event log's fetch the events of a time window. Each is
//! judged by its seed model's own checker, the one its `Model::check` runs
//! ([`kvsim_models::visitor_counter::check_window`],
//! [`kvsim_models::event_log::check_window`]), on the operations the model reads from a
//! history file ([`kvsim_models::visitor_counter::op_from_raw`],
//! [`kvsim_models::event_log::op_from_raw`], the inverse of what `kvsim stress
//! --history-out` writes for them).
//!
//! Times are the evidence here: every invocation and every `ok` completion must carry a
//! `time`, in milliseconds on the clock the structure reads (Unix epoch milliseconds for
//! a real client), as periods and windows are that clock's. No evidence, no pass: a file
//! with no operation of the spec, or none that the property judges (a completed `value`,
//! a completed fetch or poll), is `unknown`.

use super::FileResult;
use kvsim::formats::{
    in_syntax, no_known_outcome, nothing_recognised, pair, read_file, End, Format, FormatError,
    LineError, RawOp, Syntax,
};
use kvsim::history::{History, Operation, Outcome};
use kvsim::verdict::Verdict;
use kvsim_models::{event_log, visitor_counter};
use std::path::Path;
use std::time::Instant;

/// The time-window specs' names, as `--spec` takes them.
pub(super) const NAMES: [&str; 2] = ["visitor-counter", "event-log"];

/// The largest `--period` or `--window`, seconds (about 31 years, as `--time-limit`).
pub(super) const MAX_PARAMETER_SECS: u64 = 1_000_000_000;

/// The latest time a history may give, milliseconds (about the year 33658): the
/// checkers add periods and windows to times without overflowing.
pub(super) const MAX_TIME_MS: u64 = 1_000_000_000_000_000;

/// How a model reads one operation of a history file (its `op_from_raw`).
type ReadOp<Op, Ret> = fn(&RawOp) -> Result<(Op, Outcome<Ret>), String>;

/// A time-window spec with its parameter.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum WindowSpec {
    /// `--spec visitor-counter --period SECS`.
    VisitorCounter {
        /// The period `T`, milliseconds.
        period_ms: u64,
    },
    /// `--spec event-log --window SECS`.
    EventLog {
        /// The window `W = timeChunk * (numChunks-1)`, milliseconds.
        window_ms: u64,
    },
}

impl WindowSpec {
    /// The spec named `spec` with its parameters from `--period` and `--window`; `None`
    /// if `spec` is not a time-window spec; `Err` says which flag is missing or out of
    /// place.
    pub(super) fn from_args(
        spec: &str,
        period: Option<u64>,
        window: Option<u64>,
    ) -> Result<Option<WindowSpec>, String> {
        let out_of_place = |flag: &str, wanted: &str| {
            format!("{flag}: expected --spec {wanted}, found --spec {spec}")
        };
        match (spec, period, window) {
            (_, Some(_), _) if spec != "visitor-counter" => {
                Err(out_of_place("--period", "visitor-counter"))
            }
            (_, _, Some(_)) if spec != "event-log" => Err(out_of_place("--window", "event-log")),
            ("visitor-counter", Some(secs), _) => Ok(Some(WindowSpec::VisitorCounter {
                period_ms: secs * 1000,
            })),
            ("visitor-counter", None, _) => Err(
                "--spec visitor-counter needs --period SECS: the counter's period T in seconds \
                 (the T of MCVisitorCounter(mc, name, T); kvsim's visitor-counter model uses 2)"
                    .to_string(),
            ),
            ("event-log", _, Some(secs)) => Ok(Some(WindowSpec::EventLog {
                window_ms: secs * 1000,
            })),
            ("event-log", _, None) => Err(
                "--spec event-log needs --window SECS: the log's window timeChunk * \
                 (numChunks-1) in seconds (MCEventLog's defaults give 90; kvsim's event-log \
                 model uses 10)"
                    .to_string(),
            ),
            _ => Ok(None),
        }
    }
}

/// Parses one file (not timed) and checks it with the spec's checker (timed).
pub(super) fn check_file(
    spec: WindowSpec,
    path: &Path,
    format: Option<Format>,
) -> Result<FileResult, FormatError> {
    match spec {
        WindowSpec::VisitorCounter { period_ms } => check_with(
            path,
            format,
            visitor_counter::op_from_raw,
            |o| matches!(o.outcome, Outcome::Ok(visitor_counter::Ret::Count(_))),
            "no value() completed",
            |h| visitor_counter::check_window(period_ms, h),
        ),
        WindowSpec::EventLog { window_ms } => check_with(
            path,
            format,
            event_log::op_from_raw,
            |o| {
                use event_log::Ret;
                matches!(
                    o.outcome,
                    Outcome::Ok(Ret::Events(_) | Ret::Range(_) | Ret::Polled(_))
                )
            },
            "no fetch, fetch-range or poll completed",
            |h| event_log::check_window(window_ms, h),
        ),
    }
}

/// Reads `path` into a history through `from_raw` and checks it with `check`; `judged`
/// says which operations the property is about (`none_judged` the reason for a file with
/// none of them).
fn check_with<Op, Ret>(
    path: &Path,
    format: Option<Format>,
    from_raw: ReadOp<Op, Ret>,
    judged: fn(&Operation<Op, Ret>) -> bool,
    none_judged: &str,
    check: impl Fn(&History<Op, Ret>) -> Verdict,
) -> Result<FileResult, FormatError> {
    let file = path.display().to_string();
    let parsed = read_file(path, format)?;
    if let Some(why) = nothing_recognised(&parsed) {
        return Ok(FileResult::unknown(why));
    }
    // Messages about a jsonl file write its values as JSON.
    let syntax = Syntax::of(parsed.format);
    let raws = pair(&parsed.events).map_err(|e| e.in_file(&file))?;
    drop(parsed);
    let history =
        in_syntax(syntax, || to_history(&raws, from_raw)).map_err(|e| e.in_file(&file))?;
    if let Some(why) = no_known_outcome(&history) {
        return Ok(FileResult::unknown(why));
    }
    if !history.ops.iter().any(judged) {
        let n = history.ops.len();
        return Ok(FileResult::unknown(format!(
            "{none_judged}, nothing to check: {n} operation{}",
            if n == 1 { "" } else { "s" }
        )));
    }
    let start = Instant::now();
    let verdict = in_syntax(syntax, || check(&history));
    let millis = start.elapsed().as_secs_f64() * 1000.0;
    Ok(match verdict {
        Verdict::Ok => FileResult {
            verdict: "ok",
            millis,
            detail: None,
            op_line: None,
            partial_lines: Vec::new(),
        },
        Verdict::Unknown(why) => FileResult {
            verdict: "unknown",
            millis,
            detail: Some(why),
            op_line: None,
            partial_lines: Vec::new(),
        },
        Verdict::Violation(v) => {
            let raw = v.ops.first().and_then(|&i| raws.get(i));
            let detail = match raw {
                Some(raw) => format!(
                    "{}: {} (process {}, {} at line {})",
                    v.property, v.reason, raw.process, raw.f, raw.line
                ),
                None => format!("{}: {}", v.property, v.reason),
            };
            FileResult {
                verdict: "violation",
                millis,
                detail: Some(detail),
                op_line: raw.map(|r| r.line),
                partial_lines: Vec::new(),
            }
        }
    })
}

/// What every time of these specs must be.
const TIME: &str = "a time in milliseconds (on the clock the structure reads: Unix epoch milliseconds for a real client)";

/// Turns paired operations into a typed history through `from_raw`, with their times:
/// required on every invocation and `ok` completion, a completion no earlier than its
/// invocation. An error names the line: the completion's when its value or time is wrong.
fn to_history<Op, Ret>(
    raws: &[RawOp],
    from_raw: ReadOp<Op, Ret>,
) -> Result<History<Op, Ret>, LineError> {
    let mut ops = Vec::with_capacity(raws.len());
    for raw in raws {
        let (op, outcome) = from_raw(raw).map_err(|msg| {
            let (expected, found) = match msg.strip_prefix("expected ") {
                Some(rest) => match rest.split_once(", found ") {
                    Some((e, f)) => (e.to_string(), f.to_string()),
                    None => (rest.to_string(), format!("{} {}", raw.f, raw.args)),
                },
                None => (format!("an operation {}", raw.f), msg),
            };
            let line = match raw.ret_line {
                Some(l) if expected.contains("result") => l,
                _ => raw.line,
            };
            LineError::new(line, expected, found)
        })?;
        let time = |t: Option<u64>, line: usize, what: &str| match t {
            Some(t) if t <= MAX_TIME_MS => Ok(t),
            Some(t) => Err(LineError::new(
                line,
                format!("{TIME} of at most {MAX_TIME_MS}"),
                t.to_string(),
            )),
            None => Err(LineError::new(
                line,
                format!("{TIME} on {what}"),
                "an event without an integer time",
            )),
        };
        let call_ms = time(raw.call_ms, raw.line, "every invoke")?;
        let ret_line = raw.ret_line.unwrap_or(raw.line);
        let ret_ms = match (raw.end, raw.ret_ms) {
            (End::Ok, t) => Some(time(t, ret_line, "every ok")?),
            (_, Some(t)) => Some(time(Some(t), ret_line, "every completion")?),
            (_, None) => None,
        };
        if let Some(t) = ret_ms.filter(|&t| t < call_ms) {
            return Err(LineError::new(
                ret_line,
                format!(
                    "a completion no earlier than its invoke at line {} ({call_ms} ms)",
                    raw.line
                ),
                format!("{t} ms"),
            ));
        }
        ops.push(Operation {
            client: raw.process as usize,
            op,
            call: raw.call,
            ret: raw.ret,
            call_ms,
            ret_ms,
            outcome,
            marks: Vec::new(),
        });
    }
    Ok(History { ops })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parameters_belong_to_their_spec() {
        assert_eq!(WindowSpec::from_args("register", None, None), Ok(None));
        assert_eq!(
            WindowSpec::from_args("visitor-counter", Some(2), None),
            Ok(Some(WindowSpec::VisitorCounter { period_ms: 2000 }))
        );
        assert_eq!(
            WindowSpec::from_args("event-log", None, Some(10)),
            Ok(Some(WindowSpec::EventLog { window_ms: 10_000 }))
        );
        let e = WindowSpec::from_args("visitor-counter", None, None).unwrap_err();
        assert!(
            e.starts_with("--spec visitor-counter needs --period SECS"),
            "{e}"
        );
        let e = WindowSpec::from_args("event-log", None, None).unwrap_err();
        assert!(e.starts_with("--spec event-log needs --window SECS"), "{e}");
        assert_eq!(
            WindowSpec::from_args("queue", Some(2), None),
            Err("--period: expected --spec visitor-counter, found --spec queue".to_string())
        );
        assert_eq!(
            WindowSpec::from_args("visitor-counter", Some(2), Some(10)),
            Err("--window: expected --spec event-log, found --spec visitor-counter".to_string())
        );
    }
}
