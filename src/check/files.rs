//! Checking one history file against a spec: a sequential spec for linearizability
//! ([`check_sequential`]), or a time-window property by a model's own checker
//! ([`check_timed`]). The checkers of the [spec registry](super::registry) call these.
//!
//! No evidence, no pass: a file in which no operation was recognised (empty, another
//! logger's log, JSON read as a log), or whose operations have no known outcome, is
//! `unknown` with the reason, never `ok`.

use crate::check::{check_linearizability_parallel, CheckerLimits, Linearization};
use crate::formats::{
    in_syntax, load_history, no_known_outcome, nothing_recognised, pair, read_file, End, FailMeans,
    Format, FormatError, FromRaw, LineError, Loaded, RawOp, Syntax,
};
use crate::history::{History, Operation, Outcome};
use crate::verdict::Verdict;
use std::path::Path;
use std::time::Instant;

/// The verdict on one history file.
#[derive(Clone, Debug, PartialEq)]
pub struct FileVerdict {
    /// `ok`, `violation` or `unknown`.
    pub verdict: &'static str,
    /// Milliseconds the check took (reading the file not counted).
    pub millis: f64,
    /// A violation's reason or an unknown's cause.
    pub detail: Option<String>,
    /// The line of the operation a violation names.
    pub op_line: Option<usize>,
    /// The lines of the operations linearized before it.
    pub partial_lines: Vec<usize>,
}

impl FileVerdict {
    /// `unknown` before any checking: the file gives nothing to check, for this reason.
    pub fn unknown(why: String) -> FileVerdict {
        FileVerdict {
            verdict: "unknown",
            millis: 0.0,
            detail: Some(why),
            op_line: None,
            partial_lines: Vec::new(),
        }
    }

    /// A verdict with no line to point at.
    fn plain(verdict: &'static str, millis: f64, detail: Option<String>) -> FileVerdict {
        FileVerdict {
            verdict,
            millis,
            detail,
            op_line: None,
            partial_lines: Vec::new(),
        }
    }
}

/// How to read and check each file.
#[derive(Clone, Copy, Debug)]
pub struct FileOptions {
    /// The format, `None` to guess it per file.
    pub format: Option<Format>,
    /// The reading of `fail`, `None` for the format's own (sequential specs only).
    pub fail_means: Option<FailMeans>,
    /// The checker's limits (sequential specs only: the time-window checks take
    /// polynomial time).
    pub limits: CheckerLimits,
}

/// Parses one file (not timed) and checks it for linearizability against `spec` (timed);
/// a file that gives nothing to check is `unknown`.
pub fn check_sequential<S>(
    spec: &S,
    path: &Path,
    how: FileOptions,
) -> Result<FileVerdict, FormatError>
where
    S: FromRaw + Sync,
    S::Op: Sync,
    S::Ret: Sync,
    S::State: Send,
{
    let loaded = load_history(spec, path, how.format, how.fail_means)?;
    if let Some(why) = loaded.nothing_recognised() {
        return Ok(FileVerdict::unknown(why));
    }
    // Messages about a jsonl file write its values as JSON.
    in_syntax(Syntax::of(loaded.format), || {
        check_loaded(spec, how, &loaded)
    })
}

/// [`check_sequential`] once the file is read and gives something to check.
fn check_loaded<S>(
    spec: &S,
    how: FileOptions,
    loaded: &Loaded<S::Op, S::Ret>,
) -> Result<FileVerdict, FormatError>
where
    S: FromRaw + Sync,
    S::Op: Sync,
    S::Ret: Sync,
    S::State: Send,
{
    let history = &loaded.history;
    if let Some(why) = no_known_outcome(history) {
        return Ok(FileVerdict::unknown(why));
    }
    let start = Instant::now();
    let result = check_linearizability_parallel(spec, history, how.limits);
    let millis = start.elapsed().as_secs_f64() * 1000.0;
    Ok(match result {
        Linearization::Ok(_) => FileVerdict::plain("ok", millis, None),
        Linearization::Unknown(why) => FileVerdict::plain("unknown", millis, Some(why)),
        Linearization::Violation(c) => {
            let detail = format!(
                "{} (process {}, {} at line {}; {} operations linearized before it)",
                c.reason,
                history.ops[c.op].client,
                loaded.f(c.op),
                loaded.line(c.op),
                c.partial.len()
            );
            FileVerdict {
                verdict: "violation",
                millis,
                detail: Some(detail),
                op_line: Some(loaded.line(c.op)),
                partial_lines: c.partial.iter().map(|&i| loaded.line(i)).collect(),
            }
        }
    })
}

/// The latest time a timed history may give, milliseconds (about the year 33658): the
/// checkers add periods and windows to times without overflowing.
pub const MAX_TIME_MS: u64 = 1_000_000_000_000_000;

/// How a model reads one operation of a history file (its `op_from_raw`).
pub type ReadOp<Op, Ret> = fn(&RawOp) -> Result<(Op, Outcome<Ret>), String>;

/// A model's checker of a history with times.
pub type TimedCheck<Op, Ret> = Box<dyn Fn(&History<Op, Ret>) -> Verdict>;

/// A property judged on a history with times by a model's own checker (a time-window
/// spec): how its operations are read, which of them it judges, and the checker.
pub struct Timed<Op, Ret> {
    /// Reads one operation (the inverse of what `kvsim stress --history-out` writes).
    pub from_raw: ReadOp<Op, Ret>,
    /// The operations the property is about.
    pub judged: fn(&Operation<Op, Ret>) -> bool,
    /// The reason given for a file with none of them (`no value() completed`).
    pub none_judged: &'static str,
    /// The checker.
    pub check: TimedCheck<Op, Ret>,
}

/// Reads `path` into a history with times through `spec.from_raw` and checks it with
/// `spec.check` (timed). Times are the evidence here: every invocation and every `ok`
/// completion must carry a `time`. No evidence, no pass: a file with no operation the
/// property judges is `unknown`.
pub fn check_timed<Op, Ret>(
    spec: &Timed<Op, Ret>,
    path: &Path,
    format: Option<Format>,
) -> Result<FileVerdict, FormatError> {
    let file = path.display().to_string();
    let parsed = read_file(path, format)?;
    if let Some(why) = nothing_recognised(&parsed) {
        return Ok(FileVerdict::unknown(why));
    }
    // Messages about a jsonl file write its values as JSON.
    let syntax = Syntax::of(parsed.format);
    let raws = pair(&parsed.events).map_err(|e| e.in_file(&file))?;
    drop(parsed);
    let history =
        in_syntax(syntax, || to_history(&raws, spec.from_raw)).map_err(|e| e.in_file(&file))?;
    if let Some(why) = no_known_outcome(&history) {
        return Ok(FileVerdict::unknown(why));
    }
    if !history.ops.iter().any(spec.judged) {
        let n = history.ops.len();
        return Ok(FileVerdict::unknown(format!(
            "{}, nothing to check: {n} operation{}",
            spec.none_judged,
            if n == 1 { "" } else { "s" }
        )));
    }
    let start = Instant::now();
    let verdict = in_syntax(syntax, || (spec.check)(&history));
    let millis = start.elapsed().as_secs_f64() * 1000.0;
    Ok(match verdict {
        Verdict::Ok => FileVerdict::plain("ok", millis, None),
        Verdict::Unknown(why) => FileVerdict::plain("unknown", millis, Some(why)),
        Verdict::Violation(v) => {
            let raw = v.ops.first().and_then(|&i| raws.get(i));
            let detail = match raw {
                Some(raw) => format!(
                    "{}: {} (process {}, {} at line {})",
                    v.property, v.reason, raw.process, raw.f, raw.line
                ),
                None => format!("{}: {}", v.property, v.reason),
            };
            FileVerdict {
                verdict: "violation",
                millis,
                detail: Some(detail),
                op_line: raw.map(|r| r.line),
                partial_lines: Vec::new(),
            }
        }
    })
}

/// What every time of a timed history must be.
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
        let (op, outcome) = from_raw(raw).map_err(|msg| read_error(raw, msg))?;
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

/// A model's `op_from_raw` message as a line error: `expected …, found …` split, the
/// completion's line when the result is wrong.
fn read_error(raw: &RawOp, msg: String) -> LineError {
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
}
