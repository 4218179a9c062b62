//! History files from outside: three formats, one shape of result.
//!
//! Every format is a list of Jepsen-style events, one per operation start or end:
//! a process, a type (`invoke`, `ok`, `fail`, `info`), a function name `f`, an optional
//! key and a value. [`read_events`] parses a file into [`HistoryEvent`]s; [`pair`] matches each
//! process's invocation with its completion into [`RawOp`]s; [`to_history`] turns those
//! into a typed [`History`] through a spec's [`FromRaw`].
//!
//! - `jsonl` ([`jsonl`]): JSON lines of our own.
//! - `jepsen-edn` ([`jepsen_edn`]): Jepsen's EDN operation maps, one per line, in a
//!   vector (history.edn) or in a list (a seq as Clojure's `pr` writes it).
//! - `jepsen-log` ([`jepsen_log`]): Jepsen's log lines (`INFO  jepsen.util - 3 :ok :read 1`).
//!
//! Outcomes: `ok` completes with the value; `fail` certainly had no effect; `info`, and an
//! invocation never completed, have an unknown outcome. Nemesis events (process
//! `:nemesis`) are not client operations and are skipped.
//!
//! What else a `fail` says is a [`FailMeans`]: in Jepsen and Knossos nothing more
//! ([`FailMeans::NoEffect`], the reading of `jepsen-edn` and `jsonl`); in Porcupine's
//! etcd test a failed cas also says its comparison did not match
//! ([`FailMeans::CompareFailed`], the reading of `jepsen-log`, whose etcd histories need
//! it).
//!
//! No evidence, no pass: [`nothing_recognised`] and [`no_known_outcome`] say why a file
//! gives a checker nothing to check (an empty file, a log of another logger, only
//! operations of unknown outcome), so that a caller reports `unknown` rather than `ok`.
//!
//! Errors name the file, the line, what was expected and what was found.

pub mod edn;
pub mod jepsen_edn;
pub mod jepsen_log;
pub mod jsonl;
pub mod stream;

pub use stream::{load_history, Loaded};

use crate::history::{History, Operation, Outcome};
use crate::spec::SequentialSpec;
use std::fmt;
use std::path::Path;

/// What a number too large for a value is expected to be (both readers say it alike).
pub(crate) const INTEGER_64: &str =
    "an integer of at most 64 bits (from -9223372036854775808 to 9223372036854775807)";

/// A value in a history file (EDN's data model, which covers JSON's). Its `Debug` form is
/// its EDN text, so spec messages read `read returned 3`, not `Int(3)`.
#[derive(Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Value {
    /// `nil` / `null`.
    Nil,
    /// `true` / `false`.
    Bool(bool),
    /// An integer.
    Int(i64),
    /// A string.
    Str(String),
    /// An EDN keyword, without its colon.
    Keyword(String),
    /// An EDN symbol.
    Symbol(String),
    /// A vector, list or set (sets in file order).
    List(Vec<Value>),
    /// A map, in file order.
    Map(Vec<(Value, Value)>),
}

impl Value {
    /// The value for `key` (a keyword, without colon) if this is a map.
    pub fn get(&self, key: &str) -> Option<&Value> {
        match self {
            Value::Map(entries) => entries
                .iter()
                .find(|(k, _)| matches!(k, Value::Keyword(s) | Value::Str(s) if s == key))
                .map(|(_, v)| v),
            _ => None,
        }
    }
}

impl fmt::Debug for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

/// How values are written in messages: as EDN (the default), or as JSON in messages
/// about a `jsonl` file, whose values were JSON ([`in_syntax`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Syntax {
    /// `nil`, `:keyword`, `[1 2]`, `{:a 1}`.
    #[default]
    Edn,
    /// `null`, `"name"`, `[1, 2]`, `{"a": 1}`.
    Json,
}

impl Syntax {
    /// The syntax of a format's values.
    pub fn of(format: Format) -> Syntax {
        match format {
            Format::Jsonl => Syntax::Json,
            Format::JepsenEdn | Format::JepsenLog => Syntax::Edn,
        }
    }
}

thread_local! {
    static SYNTAX: std::cell::Cell<Syntax> = const { std::cell::Cell::new(Syntax::Edn) };
}

/// The syntax values are written in on this thread now ([`in_syntax`]).
pub fn syntax() -> Syntax {
    SYNTAX.with(|s| s.get())
}

/// How nil is written in the current syntax: `nil`, or `null` in JSON.
pub fn nil_word() -> &'static str {
    match syntax() {
        Syntax::Edn => "nil",
        Syntax::Json => "null",
    }
}

/// Runs `f` with every [`Value`] this thread writes (its `Display` and `Debug`, so every
/// message built meanwhile) in `syntax`; then the syntax before.
pub fn in_syntax<T>(syntax: Syntax, f: impl FnOnce() -> T) -> T {
    struct Restore(Syntax);
    impl Drop for Restore {
        fn drop(&mut self) {
            SYNTAX.with(|s| s.set(self.0));
        }
    }
    let _restore = Restore(SYNTAX.with(|s| s.replace(syntax)));
    f()
}

impl Value {
    /// Writes the value as JSON: names (keywords, symbols) as strings, nil as null.
    fn fmt_json(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let string =
            |f: &mut fmt::Formatter<'_>, s: &str| write!(f, "{}", serde_json::Value::from(s));
        match self {
            Value::Nil => write!(f, "null"),
            Value::Bool(b) => write!(f, "{b}"),
            Value::Int(i) => write!(f, "{i}"),
            Value::Str(s) | Value::Keyword(s) | Value::Symbol(s) => string(f, s),
            Value::List(items) => {
                write!(f, "[")?;
                for (i, v) in items.iter().enumerate() {
                    if i > 0 {
                        write!(f, ", ")?;
                    }
                    v.fmt_json(f)?;
                }
                write!(f, "]")
            }
            Value::Map(entries) => {
                write!(f, "{{")?;
                for (i, (k, v)) in entries.iter().enumerate() {
                    if i > 0 {
                        write!(f, ", ")?;
                    }
                    k.fmt_json(f)?;
                    write!(f, ": ")?;
                    v.fmt_json(f)?;
                }
                write!(f, "}}")
            }
        }
    }
}

impl fmt::Display for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if syntax() == Syntax::Json {
            return self.fmt_json(f);
        }
        match self {
            Value::Nil => write!(f, "nil"),
            Value::Bool(b) => write!(f, "{b}"),
            Value::Int(i) => write!(f, "{i}"),
            Value::Str(s) => write!(f, "{s:?}"),
            Value::Keyword(k) => write!(f, ":{k}"),
            Value::Symbol(s) => write!(f, "{s}"),
            Value::List(items) => {
                write!(f, "[")?;
                for (i, v) in items.iter().enumerate() {
                    if i > 0 {
                        write!(f, " ")?;
                    }
                    write!(f, "{v}")?;
                }
                write!(f, "]")
            }
            Value::Map(entries) => {
                write!(f, "{{")?;
                for (i, (k, v)) in entries.iter().enumerate() {
                    if i > 0 {
                        write!(f, ", ")?;
                    }
                    write!(f, "{k} {v}")?;
                }
                write!(f, "}}")
            }
        }
    }
}

/// The history file formats.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// JSON lines of our own.
    Jsonl,
    /// Jepsen's EDN operation maps.
    JepsenEdn,
    /// Jepsen's log lines.
    JepsenLog,
}

impl Format {
    /// Every format, with its name.
    pub const ALL: [(&'static str, Format); 3] = [
        ("jsonl", Format::Jsonl),
        ("jepsen-edn", Format::JepsenEdn),
        ("jepsen-log", Format::JepsenLog),
    ];

    /// The format's name as the command line spells it.
    pub fn name(self) -> &'static str {
        match self {
            Format::Jsonl => "jsonl",
            Format::JepsenEdn => "jepsen-edn",
            Format::JepsenLog => "jepsen-log",
        }
    }

    /// The format by name.
    pub fn from_name(name: &str) -> Option<Format> {
        Format::ALL
            .iter()
            .find(|(n, _)| *n == name)
            .map(|&(_, f)| f)
    }

    /// Guesses the format from a file's first non-blank line that is not an EDN comment:
    /// `{"` is JSON lines, `{`, `[` or `(` is EDN (as is a file of nothing but `;`
    /// comments), a line with `jepsen.util - ` is a log; `None` if none fits.
    pub fn guess(text: &str) -> Option<Format> {
        let mut lines = text
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty())
            .peekable();
        lines.peek()?;
        let Some(line) = lines.find(|l| !l.starts_with(';')) else {
            return Some(Format::JepsenEdn);
        };
        if line.starts_with("{\"") {
            Some(Format::Jsonl)
        } else if line.starts_with('{') || line.starts_with('[') || line.starts_with('(') {
            Some(Format::JepsenEdn)
        } else if line.contains("jepsen.util - ") {
            Some(Format::JepsenLog)
        } else {
            None
        }
    }

    /// What a line of this format looks like, for messages about a file in which nothing
    /// was recognised.
    pub fn example(self) -> &'static str {
        match self {
            Format::Jsonl => {
                "JSON lines like `{\"process\": 0, \"type\": \"invoke\", \"f\": \"read\", \"value\": null}`"
            }
            Format::JepsenEdn => {
                "EDN operation maps like `{:process 0, :type :invoke, :f :read, :value nil}`"
            }
            Format::JepsenLog => {
                "jepsen.util log lines like `INFO  jepsen.util - 3 :invoke :read nil`"
            }
        }
    }
}

/// What a `fail` completion says besides "this operation had no effect".
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FailMeans {
    /// Nothing more: the operation certainly did not take effect, and says nothing about
    /// the state (Jepsen's and Knossos's reading). Every `fail` is left out of the check.
    NoEffect,
    /// A conditional operation's condition did not hold: a failed cas says the register
    /// did not hold its old value, a failed try-acquire or release that the lock was not
    /// free or not ours (Porcupine's etcd reading). This is each spec's
    /// [`FromRaw::op_from_raw`] as written; other operations' `fail` is still no effect.
    CompareFailed,
}

impl FailMeans {
    /// Every reading, with its name.
    pub const ALL: [(&'static str, FailMeans); 2] = [
        ("no-effect", FailMeans::NoEffect),
        ("compare-failed", FailMeans::CompareFailed),
    ];

    /// The name as the command line spells it.
    pub fn name(self) -> &'static str {
        match self {
            FailMeans::NoEffect => "no-effect",
            FailMeans::CompareFailed => "compare-failed",
        }
    }

    /// The reading by name.
    pub fn from_name(name: &str) -> Option<FailMeans> {
        FailMeans::ALL
            .iter()
            .find(|(n, _)| *n == name)
            .map(|&(_, f)| f)
    }

    /// The reading a format's files are written for: `compare-failed` for `jepsen-log`
    /// (Porcupine's etcd histories), `no-effect` for `jepsen-edn` and `jsonl` (Jepsen's
    /// meaning).
    pub fn default_for(format: Format) -> FailMeans {
        match format {
            Format::JepsenLog => FailMeans::CompareFailed,
            Format::Jsonl | Format::JepsenEdn => FailMeans::NoEffect,
        }
    }
}

/// What an event says about its operation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum EventType {
    /// The operation starts.
    Invoke,
    /// It completed with a value.
    Ok,
    /// It certainly had no effect.
    Fail,
    /// Its outcome is unknown.
    Info,
}

impl EventType {
    /// From `invoke`, `ok`, `fail`, `info`.
    pub fn from_name(name: &str) -> Option<EventType> {
        match name {
            "invoke" => Some(EventType::Invoke),
            "ok" => Some(EventType::Ok),
            "fail" => Some(EventType::Fail),
            "info" => Some(EventType::Info),
            _ => None,
        }
    }
}

/// One line (or map) of a history file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HistoryEvent {
    /// The client process.
    pub process: u64,
    /// Invocation or which completion.
    pub kind: EventType,
    /// The function, e.g. `read`.
    pub f: String,
    /// The key, for keyed operations.
    pub key: Option<Value>,
    /// The value (argument at invocation, result at completion).
    pub value: Value,
    /// Time in milliseconds, if the file gives one.
    pub time_ms: Option<u64>,
    /// 1-based line in the file.
    pub line: usize,
}

/// How an operation ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum End {
    /// Completed (`ok`).
    Ok,
    /// Failed (`fail`).
    Fail,
    /// Unknown (`info`).
    Info,
    /// Never completed in the file.
    Pending,
}

/// An invocation matched with its completion.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RawOp {
    /// The client process.
    pub process: u64,
    /// The function.
    pub f: String,
    /// The key from the invocation (or the completion if only it has one).
    pub key: Option<Value>,
    /// The invocation's value (the arguments).
    pub args: Value,
    /// The completion's value (`Nil` when pending).
    pub result: Value,
    /// How it ended.
    pub end: End,
    /// Position of the invocation among the file's events.
    pub call: u64,
    /// Position of the completion, if any.
    pub ret: Option<u64>,
    /// Time of the invocation and completion, if the file gives them.
    pub call_ms: Option<u64>,
    /// Completion time, if the file gives one.
    pub ret_ms: Option<u64>,
    /// Line of the invocation.
    pub line: usize,
    /// Line of the completion.
    pub ret_line: Option<usize>,
}

/// The most events one history file may give (10 million, 5 million operations: a few
/// GiB once parsed); past it, reading stops with an error naming the line.
pub const MAX_EVENTS: usize = 10_000_000;

/// The longest line of a `jsonl` or Jepsen log file, where a line is one event: 1 MiB.
pub const MAX_LINE_BYTES: usize = 1 << 20;

/// The largest history file read: 2 GiB.
pub const MAX_FILE_BYTES: u64 = 2 << 30;

/// Appends `event`, unless the file has given [`MAX_EVENTS`] already.
pub(crate) fn push_event(
    events: &mut Vec<HistoryEvent>,
    event: HistoryEvent,
) -> Result<(), LineError> {
    event_limit(events.len(), event.line)?;
    events.push(event);
    Ok(())
}

/// Refuses another event, at `line`, when a file has given `count` events already and
/// that is [`MAX_EVENTS`].
pub(crate) fn event_limit(count: usize, line: usize) -> Result<(), LineError> {
    if count >= MAX_EVENTS {
        return Err(LineError::new(
            line,
            format!("at most {MAX_EVENTS} events in one file"),
            "more (split the history, or check it by key)",
        ));
    }
    Ok(())
}

/// Refuses a line of one event longer than [`MAX_LINE_BYTES`].
pub(crate) fn check_line_length(line: usize, text: &str) -> Result<(), LineError> {
    if text.len() > MAX_LINE_BYTES {
        return Err(LineError::new(
            line,
            format!("a line of at most {} MiB", MAX_LINE_BYTES >> 20),
            format!("{} bytes", text.len()),
        ));
    }
    Ok(())
}

/// The one error type of the formats layer.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum FormatError {
    /// The file could not be read.
    #[error("{file}: cannot read: {message}")]
    Io {
        /// The file.
        file: String,
        /// The OS error.
        message: String,
    },
    /// A line is not what the format says.
    #[error("{file}:{line}: expected {expected}, found {found}")]
    Malformed {
        /// The file.
        file: String,
        /// 1-based line.
        line: usize,
        /// What the format wants there.
        expected: String,
        /// What the file has.
        found: String,
    },
    /// The file is larger than [`MAX_FILE_BYTES`].
    #[error("{file}: expected a history file of at most {} MiB, found {bytes} bytes", MAX_FILE_BYTES >> 20)]
    TooLarge {
        /// The file.
        file: String,
        /// Its size.
        bytes: u64,
    },
    /// The format could not be guessed.
    #[error("{file}: cannot tell the format: expected JSON lines, EDN maps or Jepsen log lines, found {found}; pass --format")]
    Unrecognized {
        /// The file.
        file: String,
        /// The start of the file.
        found: String,
    },
}

/// A parse error before the file name is known: line, expected, found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LineError {
    /// 1-based line.
    pub line: usize,
    /// What was expected.
    pub expected: String,
    /// What was found.
    pub found: String,
}

impl LineError {
    /// A new error.
    pub fn new(line: usize, expected: impl Into<String>, found: impl Into<String>) -> Self {
        LineError {
            line,
            expected: expected.into(),
            found: found.into(),
        }
    }

    /// With the file name.
    pub fn in_file(self, file: &str) -> FormatError {
        FormatError::Malformed {
            file: file.to_string(),
            line: self.line,
            expected: self.expected,
            found: self.found,
        }
    }
}

/// Shortens text quoted in an error message.
pub(crate) fn excerpt(s: &str) -> String {
    let s = s.trim_end();
    let mut out: String = s.chars().take(60).collect();
    if out.len() < s.len() {
        out.push('…');
    }
    format!("{out:?}")
}

/// Parses a file's text in `format` into events.
pub fn parse_events(text: &str, format: Format) -> Result<Vec<HistoryEvent>, LineError> {
    match format {
        Format::Jsonl => jsonl::parse(text),
        Format::JepsenEdn => jepsen_edn::parse(text),
        Format::JepsenLog => jepsen_log::parse(text),
    }
}

/// A file read and parsed: its format (given or guessed), its number of lines and its
/// events.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Parsed {
    /// The format it was read as.
    pub format: Format,
    /// Its number of non-blank lines.
    pub lines: usize,
    /// Its client events (nemesis events and other log output left out).
    pub events: Vec<HistoryEvent>,
    /// Whether the format was guessed (not given).
    pub guessed: bool,
}

/// Reads and parses a file; `format` `None` guesses it from the content
/// ([`Format::guess`]).
pub fn read_events(path: &Path, format: Option<Format>) -> Result<Vec<HistoryEvent>, FormatError> {
    read_file(path, format).map(|p| p.events)
}

/// The error for a byte that is not UTF-8, at a 1-based line and column.
pub(crate) fn not_utf8(file: &str, line: usize, column: usize, byte: u8) -> FormatError {
    FormatError::Malformed {
        file: file.to_string(),
        line,
        expected: "UTF-8 text".to_string(),
        found: format!("the byte 0x{byte:02x} at column {column}, which is not UTF-8"),
    }
}

/// Refuses a file larger than [`MAX_FILE_BYTES`] (named `file` in the error).
pub(crate) fn check_size(path: &Path, file: &str) -> Result<(), FormatError> {
    match std::fs::metadata(path) {
        Ok(meta) if meta.len() > MAX_FILE_BYTES => Err(FormatError::TooLarge {
            file: file.to_string(),
            bytes: meta.len(),
        }),
        _ => Ok(()),
    }
}

/// Reads and parses a file, keeping its format and number of non-blank lines; `format` `None`
/// guesses it from the content ([`Format::guess`]; an empty file is `jsonl`).
pub fn read_file(path: &Path, format: Option<Format>) -> Result<Parsed, FormatError> {
    let file = path.display().to_string();
    check_size(path, &file)?;
    let bytes = std::fs::read(path).map_err(|e| FormatError::Io {
        file: file.clone(),
        message: e.to_string(),
    })?;
    let text = String::from_utf8(bytes).map_err(|e| {
        let bytes = e.as_bytes();
        let at = e.utf8_error().valid_up_to();
        let line_start = bytes[..at]
            .iter()
            .rposition(|&b| b == b'\n')
            .map_or(0, |i| i + 1);
        not_utf8(
            &file,
            1 + bytes[..at].iter().filter(|&&b| b == b'\n').count(),
            at - line_start + 1,
            bytes[at],
        )
    })?;
    let guessed = format.is_none();
    let format = match format {
        Some(f) => f,
        None if text.trim().is_empty() => Format::Jsonl,
        None => Format::guess(&text).ok_or_else(|| FormatError::Unrecognized {
            file: file.clone(),
            found: excerpt(
                text.lines()
                    .map(str::trim)
                    .find(|l| !l.is_empty())
                    .unwrap_or(""),
            ),
        })?,
    };
    let events = in_syntax(Syntax::of(format), || parse_events(&text, format))
        .map_err(|e| e.in_file(&file))?;
    Ok(Parsed {
        format,
        lines: text.lines().filter(|l| !l.trim().is_empty()).count(),
        events,
        guessed,
    })
}

/// Why a parsed file gives nothing to check, if it does: it is empty, or none of its lines
/// is a client operation of its format (a log of another logger, JSON read as a log, only
/// nemesis events). The text says what was expected.
pub fn nothing_recognised(parsed: &Parsed) -> Option<String> {
    nothing_in(
        parsed.events.len(),
        parsed.lines,
        parsed.guessed,
        parsed.format,
    )
}

/// [`nothing_recognised`] of a file of `lines` non-blank lines that gave `events` events
/// in `format` (`guessed` or given).
pub(crate) fn nothing_in(
    events: usize,
    lines: usize,
    guessed: bool,
    format: Format,
) -> Option<String> {
    if events > 0 {
        return None;
    }
    Some(match lines {
        0 if guessed => "empty file: no operation to check (expected JSON lines, Jepsen EDN maps or jepsen.util log lines)".to_string(),
        0 => format!(
            "empty file: no operation to check (expected {})",
            format.example()
        ),
        n => format!(
            "no client operation recognised in {n} line{} (nemesis events and other log lines are skipped): expected {}",
            if n == 1 { "" } else { "s" },
            format.example()
        ),
    })
}

/// Why a history gives nothing to check, if it does: none of its operations completed
/// with a known result (each is `info`, never completed, or a `fail` that had no effect),
/// so every order of them is linearizable and a pass would claim what was not checked.
pub fn no_known_outcome<Op, Ret>(history: &History<Op, Ret>) -> Option<String> {
    if history.ops.is_empty() {
        return Some("no operation to check".to_string());
    }
    if history
        .ops
        .iter()
        .any(|o| matches!(o.outcome, Outcome::Ok(_)))
    {
        return None;
    }
    let failed = history
        .ops
        .iter()
        .filter(|o| matches!(o.outcome, Outcome::Failed))
        .count();
    let unknown = history.ops.len() - failed;
    let n = history.ops.len();
    Some(format!(
        "no operation of known outcome, nothing to check: {n} operation{}, {unknown} unknown (info or never completed), {failed} failed (no effect)",
        if n == 1 { "" } else { "s" }
    ))
}

/// Matches each process's invocation with its next completion.
pub fn pair(events: &[HistoryEvent]) -> Result<Vec<RawOp>, LineError> {
    let mut pairing = stream::Pairing::default();
    let mut ops: Vec<Option<RawOp>> = Vec::new();
    for (pos, e) in events.iter().enumerate() {
        match pairing.feed(pos as u64, e)? {
            stream::Fed::Invoked => ops.push(None),
            stream::Fed::Completed(k, raw) => ops[k] = Some(*raw),
        }
    }
    for (k, raw) in pairing.finish() {
        ops[k] = Some(raw);
    }
    Ok(ops.into_iter().flatten().collect())
}

/// A spec whose operations can be read from history files.
pub trait FromRaw: SequentialSpec {
    /// The operation and its outcome; `Err` says what was expected and what was found.
    fn op_from_raw(&self, raw: &RawOp) -> Result<(Self::Op, Outcome<Self::Ret>), String>;
}

/// The usual outcome: `ok` parses the result, `fail` is `Failed`, `info` and pending are
/// `Unknown`.
pub fn outcome<R>(
    raw: &RawOp,
    parse: impl FnOnce(&Value) -> Result<R, String>,
) -> Result<Outcome<R>, String> {
    Ok(match raw.end {
        End::Ok => Outcome::Ok(parse(&raw.result)?),
        End::Fail => Outcome::Failed,
        End::Info | End::Pending => Outcome::Unknown,
    })
}

/// "expected X, found Y" for a [`FromRaw`] error.
pub fn expected(what: &str, found: &Value) -> String {
    format!("expected {what}, found {found}")
}

/// Turns paired operations into a typed history for `spec`, reading `fail` as the spec's
/// [`FromRaw`] does ([`FailMeans::CompareFailed`]); an error names the line.
pub fn to_history<S: FromRaw>(
    spec: &S,
    raws: &[RawOp],
) -> Result<History<S::Op, S::Ret>, LineError> {
    to_history_with(spec, raws, FailMeans::CompareFailed)
}

/// Turns paired operations into a typed history for `spec`, reading `fail` as
/// `fail_means` says; an error names the line.
pub fn to_history_with<S: FromRaw>(
    spec: &S,
    raws: &[RawOp],
    fail_means: FailMeans,
) -> Result<History<S::Op, S::Ret>, LineError> {
    let mut ops = Vec::with_capacity(raws.len());
    for raw in raws {
        ops.push(op_of(spec, raw, fail_means)?);
    }
    Ok(History { ops })
}

/// One paired operation as a typed one for `spec`, reading `fail` as `fail_means` says;
/// an error names the line.
pub(crate) fn op_of<S: FromRaw>(
    spec: &S,
    raw: &RawOp,
    fail_means: FailMeans,
) -> Result<Operation<S::Op, S::Ret>, LineError> {
    let (op, outcome) = spec.op_from_raw(raw).map_err(|msg| {
        let (expected, found) = match msg.strip_prefix("expected ") {
            Some(rest) => match rest.split_once(", found ") {
                Some((e, f)) => (e.to_string(), f.to_string()),
                None => (rest.to_string(), format!("{} {}", raw.f, raw.args)),
            },
            None => (format!("an operation of spec {}", spec.name()), msg),
        };
        let line = match raw.end {
            End::Ok | End::Fail | End::Info if expected.contains("result") => {
                raw.ret_line.unwrap_or(raw.line)
            }
            _ => raw.line,
        };
        LineError::new(line, expected, found)
    })?;
    let outcome = match (fail_means, raw.end) {
        (FailMeans::NoEffect, End::Fail) => Outcome::Failed,
        _ => outcome,
    };
    Ok(Operation {
        client: raw.process as usize,
        op,
        call: raw.call,
        ret: raw.ret,
        call_ms: raw.call_ms.unwrap_or(0),
        ret_ms: raw.ret_ms,
        outcome,
        marks: Vec::new(),
    })
}

/// Reads a file into a typed history for `spec`: [`read_file`], [`pair`],
/// [`to_history_with`] with the format's reading of `fail` ([`FailMeans::default_for`]).
pub fn read_history<S: FromRaw>(
    spec: &S,
    path: &Path,
    format: Option<Format>,
) -> Result<History<S::Op, S::Ret>, FormatError> {
    let file = path.display().to_string();
    let parsed = read_file(path, format)?;
    in_syntax(Syntax::of(parsed.format), move || {
        let raws = pair(&parsed.events).map_err(|e| e.in_file(&file))?;
        let fail_means = FailMeans::default_for(parsed.format);
        drop(parsed);
        to_history_with(spec, &raws, fail_means).map_err(|e| e.in_file(&file))
    })
}
