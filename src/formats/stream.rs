//! Reading a history file straight into a typed history ([`load_history`]): a `jsonl`
//! file a line at a time, each event paired and typed as it comes, so that a long history
//! costs its typed operations and nothing else (not its text, its events or its paired
//! operations, as [`super::read_file`], [`super::pair`] and [`super::to_history_with`]
//! one after the other do). The other formats are read that way.
//!
//! The errors are those of the three steps one after the other: a byte that is not UTF-8
//! anywhere in the file first, then the first line that does not parse, then the first
//! event that does not pair, then the first operation (in invocation order) the spec does
//! not read.

use super::{
    in_syntax, jsonl, not_utf8, nothing_in, op_of, End, EventType, FailMeans, Format, FormatError,
    FromRaw, HistoryEvent, LineError, RawOp, Syntax, Value,
};
use crate::history::{History, Operation};
use std::collections::BTreeMap;
use std::io::BufRead;
use std::path::Path;

/// What the pairing of one event did.
pub(crate) enum Fed {
    /// An invocation (of the next operation in invocation order).
    Invoked,
    /// A completion: the operation's index and the operation, complete.
    Completed(usize, Box<RawOp>),
}

/// Matches each process's invocation with its next completion, one event at a time,
/// holding only the operations still open.
#[derive(Default)]
pub(crate) struct Pairing {
    open: BTreeMap<u64, (usize, RawOp)>,
    invoked: usize,
}

impl Pairing {
    /// Pairs the event at position `pos` among the file's events.
    pub(crate) fn feed(&mut self, pos: u64, e: &HistoryEvent) -> Result<Fed, LineError> {
        match e.kind {
            EventType::Invoke => {
                if let Some((_, open)) = self.open.get(&e.process) {
                    return Err(LineError::new(
                        e.line,
                        format!(
                            "process {} to complete its operation from line {} before invoking again",
                            e.process, open.line
                        ),
                        format!("an invoke of {}", e.f),
                    ));
                }
                let k = self.invoked;
                self.invoked += 1;
                let raw = RawOp {
                    process: e.process,
                    f: e.f.clone(),
                    key: e.key.clone(),
                    args: e.value.clone(),
                    result: Value::Nil,
                    end: End::Pending,
                    call: pos,
                    ret: None,
                    call_ms: e.time_ms,
                    ret_ms: None,
                    line: e.line,
                    ret_line: None,
                };
                self.open.insert(e.process, (k, raw));
                Ok(Fed::Invoked)
            }
            kind => {
                let Some((k, mut op)) = self.open.remove(&e.process) else {
                    return Err(LineError::new(
                        e.line,
                        format!("an invoke by process {} before its completion", e.process),
                        format!("a completion of {} with no open invoke", e.f),
                    ));
                };
                if op.f != e.f {
                    return Err(LineError::new(
                        e.line,
                        format!(
                            "the completion of {} (invoked at line {}) by process {}",
                            op.f, op.line, e.process
                        ),
                        format!("a completion of {}", e.f),
                    ));
                }
                op.end = match kind {
                    EventType::Ok => End::Ok,
                    EventType::Fail => End::Fail,
                    _ => End::Info,
                };
                op.result = e.value.clone();
                if op.key.is_none() {
                    op.key = e.key.clone();
                }
                op.ret = Some(pos);
                op.ret_ms = e.time_ms;
                op.ret_line = Some(e.line);
                Ok(Fed::Completed(k, Box::new(op)))
            }
        }
    }

    /// The operations never completed, with their indices.
    pub(crate) fn finish(self) -> impl Iterator<Item = (usize, RawOp)> {
        self.open.into_values()
    }
}

/// Where one operation of a loaded history came from.
#[derive(Clone, Copy, Debug)]
struct Source {
    line: usize,
    f: u32,
}

/// A history file read into a typed history, with what reports need of the file.
#[derive(Debug)]
pub struct Loaded<Op, Ret> {
    /// The format it was read as.
    pub format: Format,
    /// Whether the format was guessed (not given).
    pub guessed: bool,
    /// Its number of non-blank lines.
    pub lines: usize,
    /// Its client events (nemesis events and other log output left out).
    pub events: usize,
    /// The operations.
    pub history: History<Op, Ret>,
    sources: Vec<Source>,
    names: Vec<String>,
}

impl<Op, Ret> Loaded<Op, Ret> {
    /// Why the file gives nothing to check, if it does (see [`super::nothing_recognised`]).
    pub fn nothing_recognised(&self) -> Option<String> {
        nothing_in(self.events, self.lines, self.guessed, self.format)
    }

    /// The line of operation `i`'s invocation.
    pub fn line(&self, i: usize) -> usize {
        self.sources[i].line
    }

    /// The function (`f`) of operation `i`.
    pub fn f(&self, i: usize) -> &str {
        &self.names[self.sources[i].f as usize]
    }

    /// Notes where operation `op` (the next one) came from.
    fn source(&mut self, line: usize, f: &str) {
        let at = match self.names.iter().position(|n| n == f) {
            Some(at) => at,
            None => {
                self.names.push(f.to_string());
                self.names.len() - 1
            }
        };
        self.sources.push(Source { line, f: at as u32 });
    }

    fn new(format: Format, guessed: bool) -> Self {
        Loaded {
            format,
            guessed,
            lines: 0,
            events: 0,
            history: History::new(),
            sources: Vec::new(),
            names: Vec::new(),
        }
    }
}

/// Reads a file into a typed history for `spec`, reading `fail` as `fail_means` says
/// (`None`: the format's reading, [`FailMeans::default_for`]); `format` `None` guesses it
/// ([`Format::guess`]). A file in which nothing was recognised gives an empty history
/// (see [`Loaded::nothing_recognised`]).
pub fn load_history<S: FromRaw>(
    spec: &S,
    path: &Path,
    format: Option<Format>,
    fail_means: Option<FailMeans>,
) -> Result<Loaded<S::Op, S::Ret>, FormatError> {
    let file = path.display().to_string();
    super::check_size(path, &file)?;
    let streamed = match format {
        Some(f) => f == Format::Jsonl,
        None => looks_like_json_lines(path),
    };
    if streamed {
        let reading = std::fs::File::open(path).map_err(|e| FormatError::Io {
            file: file.clone(),
            message: e.to_string(),
        })?;
        let lines = count_lines(&reading).map_err(|e| FormatError::Io {
            file: file.clone(),
            message: e.to_string(),
        })?;
        let reader = std::io::BufReader::with_capacity(1 << 16, reading);
        let fail_means = fail_means.unwrap_or(FailMeans::default_for(Format::Jsonl));
        return in_syntax(Syntax::Json, || {
            json_lines(spec, reader, &file, fail_means, format.is_none(), lines)
        });
    }
    let parsed = super::read_file(path, format)?;
    let mut loaded = Loaded::new(parsed.format, parsed.guessed);
    loaded.lines = parsed.lines;
    loaded.events = parsed.events.len();
    in_syntax(Syntax::of(parsed.format), || {
        let raws = super::pair(&parsed.events).map_err(|e| e.in_file(&file))?;
        let fail_means = fail_means.unwrap_or_else(|| FailMeans::default_for(parsed.format));
        drop(parsed);
        loaded.history =
            super::to_history_with(spec, &raws, fail_means).map_err(|e| e.in_file(&file))?;
        for raw in &raws {
            loaded.source(raw.line, &raw.f);
        }
        Ok(loaded)
    })
}

/// The number of lines of a file (its newlines, and one more for a last line without
/// one), read from the start, leaving the file at its start again.
fn count_lines(mut file: &std::fs::File) -> std::io::Result<usize> {
    use std::io::{Read, Seek};
    let mut buf = vec![0u8; 1 << 16];
    let (mut lines, mut last) = (0usize, b'\n');
    loop {
        let n = file.read(&mut buf)?;
        if n == 0 {
            break;
        }
        lines += buf[..n].iter().filter(|&&b| b == b'\n').count();
        last = buf[n - 1];
    }
    file.seek(std::io::SeekFrom::Start(0))?;
    Ok(lines + usize::from(last != b'\n'))
}

/// Whether [`Format::guess`] would guess `jsonl` for the file (its first non-blank line
/// that is not a `;` comment starts with `{"`, or it has no non-blank line), read only as
/// far as that line. `false` when it cannot tell (the whole file is then read as before).
fn looks_like_json_lines(path: &Path) -> bool {
    let Ok(file) = std::fs::File::open(path) else {
        return false;
    };
    let mut reader = std::io::BufReader::new(file);
    let mut bytes = Vec::new();
    loop {
        bytes.clear();
        match reader.read_until(b'\n', &mut bytes) {
            Ok(0) => return true,
            Ok(_) => {}
            Err(_) => return false,
        }
        let Ok(text) = std::str::from_utf8(&bytes) else {
            return false;
        };
        let line = text.trim();
        if line.is_empty() {
            continue;
        }
        if line.starts_with(';') {
            // A file of comments only is EDN; leave the guess to the whole-file reader.
            return false;
        }
        return line.starts_with("{\"");
    }
}

/// The first error of each step, kept while reading on (see the module docs).
#[derive(Default)]
struct Errors {
    parse: Option<LineError>,
    pair: Option<LineError>,
    /// The first operation the spec does not read: its index and the error.
    typed: Option<(usize, LineError)>,
}

/// Reads JSON lines from `reader` into a typed history.
fn json_lines<S: FromRaw>(
    spec: &S,
    mut reader: impl BufRead,
    file: &str,
    fail_means: FailMeans,
    guessed: bool,
    lines: usize,
) -> Result<Loaded<S::Op, S::Ret>, FormatError> {
    let mut loaded = Loaded::new(Format::Jsonl, guessed);
    // No more operations than lines: room for all at once, so that the operations are
    // never copied to a larger vector (which held the old and the new at once); the room
    // never written is never resident.
    let room = lines.min(super::MAX_EVENTS);
    let mut slots: Vec<Option<Operation<S::Op, S::Ret>>> = Vec::with_capacity(room);
    loaded.sources.reserve_exact(room);
    let mut pairing = Pairing::default();
    let mut errors = Errors::default();
    let mut bytes = Vec::new();
    let mut line = 0usize;
    let typed = |k: usize, raw: &RawOp, slots: &mut Vec<Option<_>>, errors: &mut Errors| {
        if errors.typed.as_ref().is_some_and(|(j, _)| *j < k) {
            return;
        }
        match op_of(spec, raw, fail_means) {
            Ok(op) => slots[k] = Some(op),
            Err(e) => errors.typed = Some((k, e)),
        }
    };
    loop {
        bytes.clear();
        let read = reader
            .read_until(b'\n', &mut bytes)
            .map_err(|e| FormatError::Io {
                file: file.to_string(),
                message: e.to_string(),
            })?;
        if read == 0 {
            break;
        }
        line += 1;
        let text = std::str::from_utf8(&bytes)
            .map_err(|e| not_utf8(file, line, e.valid_up_to() + 1, bytes[e.valid_up_to()]))?;
        // As `str::lines` cuts them.
        let text = match text.strip_suffix('\n') {
            Some(t) => t.strip_suffix('\r').unwrap_or(t),
            None => text,
        };
        if !text.trim().is_empty() {
            loaded.lines += 1;
        }
        if errors.parse.is_some() {
            continue;
        }
        let event = match jsonl::parse_line(line, text) {
            Ok(Some(event)) => event,
            Ok(None) => continue,
            Err(e) => {
                errors.parse = Some(e);
                continue;
            }
        };
        if let Err(e) = super::event_limit(loaded.events, event.line) {
            errors.parse = Some(e);
            continue;
        }
        let pos = loaded.events as u64;
        loaded.events += 1;
        if errors.pair.is_some() {
            continue;
        }
        match pairing.feed(pos, &event) {
            Err(e) => errors.pair = Some(e),
            Ok(Fed::Invoked) => {
                slots.push(None);
                loaded.source(event.line, &event.f);
            }
            Ok(Fed::Completed(k, raw)) => typed(k, &raw, &mut slots, &mut errors),
        }
    }
    if let Some(e) = errors.parse.take().or(errors.pair.take()) {
        return Err(e.in_file(file));
    }
    for (k, raw) in pairing.finish() {
        typed(k, &raw, &mut slots, &mut errors);
    }
    if let Some((_, e)) = errors.typed {
        return Err(e.in_file(file));
    }
    // In place where `Option<Operation>` and `Operation` have one size (a niche in
    // `Operation`), as for the specs here: no second vector of operations.
    loaded.history = History {
        ops: slots
            .into_iter()
            .map(|op| op.expect("every operation paired and typed"))
            .collect(),
    };
    Ok(loaded)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::specs::register::RegisterSpec;

    fn write(name: &str, text: &[u8]) -> std::path::PathBuf {
        let path = std::env::temp_dir().join(format!("kvsim-stream-{}-{name}", std::process::id()));
        std::fs::write(&path, text).unwrap();
        path
    }

    /// What the whole-file readers say of a file, as the loader should say it.
    fn whole(path: &Path, format: Option<Format>) -> Result<String, FormatError> {
        let spec = RegisterSpec::<Value>::new();
        let parsed = super::super::read_file(path, format)?;
        let file = path.display().to_string();
        let n = parsed.events.len();
        let (lines, f) = (parsed.lines, parsed.format);
        in_syntax(Syntax::of(f), || {
            let raws = super::super::pair(&parsed.events).map_err(|e| e.in_file(&file))?;
            let h = super::super::to_history_with(&spec, &raws, FailMeans::default_for(f))
                .map_err(|e| e.in_file(&file))?;
            let where_: Vec<(usize, String)> = raws.iter().map(|r| (r.line, r.f.clone())).collect();
            Ok(format!("{f:?} {lines} {n} {:?} {where_:?}", h.ops))
        })
    }

    fn streamed(path: &Path, format: Option<Format>) -> Result<String, FormatError> {
        let spec = RegisterSpec::<Value>::new();
        let l = load_history(&spec, path, format, None)?;
        let where_: Vec<(usize, String)> = (0..l.history.ops.len())
            .map(|i| (l.line(i), l.f(i).to_string()))
            .collect();
        Ok(format!(
            "{:?} {} {} {:?} {where_:?}",
            l.format, l.lines, l.events, l.history.ops
        ))
    }

    /// The line-at-a-time reader gives what the whole-file readers give, operations and
    /// errors alike, including the error that comes first when a file has several.
    #[test]
    fn streaming_gives_what_the_whole_file_readers_give() {
        let ok = r#"{"process": 0, "type": "invoke", "f": "write", "value": 1}"#;
        let cases: Vec<(&str, Vec<u8>)> = vec![
            (
                "plain",
                format!(
                    "{ok}\n{}\n\n{}\r\n",
                    r#"{"process": 1, "type": "invoke", "f": "read", "value": null}"#,
                    r#"{"process": 0, "type": "ok", "f": "write", "value": 1}"#
                )
                .into_bytes(),
            ),
            ("blank", b"\n  \n".to_vec()),
            (
                "nemesis",
                b"{\"process\": \"nemesis\", \"type\": \"info\", \"f\": \"kill\"}\n".to_vec(),
            ),
            (
                "utf8-after-parse-error",
                [format!("{ok}\nnot json\n{ok}\n").as_bytes(), b"\xff\n"].concat(),
            ),
            (
                "parse-after-pair-error",
                format!("{ok}\n{ok}\nnot json\n").into_bytes(),
            ),
            (
                "pair-after-type-error",
                format!(
                    "{}\n{}\n{ok}\n{ok}\n",
                    r#"{"process": 0, "type": "invoke", "f": "frob", "value": 1}"#,
                    r#"{"process": 0, "type": "ok", "f": "frob", "value": 1}"#
                )
                .into_bytes(),
            ),
            // Operation 1 completes first with a bad value; operation 0 is bad too, and
            // comes first in invocation order.
            (
                "type-order",
                format!(
                    "{}\n{}\n{}\n{}\n",
                    r#"{"process": 0, "type": "invoke", "f": "frob", "value": 1}"#,
                    r#"{"process": 1, "type": "invoke", "f": "zap", "value": 1}"#,
                    r#"{"process": 1, "type": "ok", "f": "zap", "value": 1}"#,
                    r#"{"process": 0, "type": "ok", "f": "frob", "value": 1}"#
                )
                .into_bytes(),
            ),
            ("pending", format!("{ok}\n").into_bytes()),
        ];
        for (name, text) in cases {
            let path = write(name, &text);
            for format in [None, Some(Format::Jsonl)] {
                let a = whole(&path, format).map_err(|e| e.to_string());
                let b = streamed(&path, format).map_err(|e| e.to_string());
                assert_eq!(a, b, "{name}");
            }
            let _ = std::fs::remove_file(&path);
        }
    }

    /// Files of the other formats are read whole, with the same result.
    #[test]
    fn other_formats_load_as_before() {
        let path = write(
            "edn",
            b"{:process 0, :type :invoke, :f :write, :value 1}\n{:process 0, :type :ok, :f :write, :value 1}\n",
        );
        assert_eq!(
            whole(&path, None).map_err(|e| e.to_string()),
            streamed(&path, None).map_err(|e| e.to_string())
        );
        assert!(streamed(&path, None).unwrap().starts_with("JepsenEdn 2 2"));
        let _ = std::fs::remove_file(&path);
    }
}
