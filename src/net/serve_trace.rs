//! `kvsim serve --trace FILE`: every connection, command, reply and fault as one JSON
//! line, in the order the server saw them.
//!
//! ```text
//! {"t_ms":0,"conn":0,"kind":"connect","text":"127.0.0.1:50312"}
//! {"t_ms":3,"conn":0,"kind":"command","text":"add lock \"1\" exp=2"}
//! {"t_ms":3,"conn":0,"kind":"reply","text":"STORED"}
//! {"t_ms":5,"conn":null,"kind":"fault","text":"clock +3 s"}
//! ```
//!
//! `t_ms` counts milliseconds from the server's start; `conn` is the connection id the
//! control channel uses (`null` for a fault of the whole server); `kind` is `start` (the
//! first line, written when the server starts: `text` names the address it listens on),
//! `connect`, `command`, `reply`, `fault` or `close`; `text` is the command or reply as
//! kvsim prints them everywhere ([`Command`](crate::command::Command)'s and
//! [`Reply`](crate::command::Reply)'s `Display`), at most [`TEXT_MAX`] characters. The
//! file stops growing at its byte limit, with a last line of kind `truncated`.
//!
//! A trace that cannot be written is an error, never a silent loss: the `start` line is
//! written and flushed before the server accepts a connection (so `--trace /dev/full`
//! fails at once), and a later write error stops the server
//! ([`TraceWriter::line`] returns it).

use serde::{Deserialize, Serialize};
use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::Path;
use std::time::Instant;

/// The longest `text` a line carries (a longer one ends with `… (N chars)`).
pub const TEXT_MAX: usize = 300;

/// The trace file's default byte limit.
pub const DEFAULT_TRACE_MAX_BYTES: u64 = 1 << 30;

/// One line of a trace.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct TraceLine {
    /// Milliseconds since the server started.
    pub t_ms: u64,
    /// The connection, or `None` for the whole server.
    pub conn: Option<u64>,
    /// `connect`, `command`, `reply`, `fault`, `close` or `truncated`.
    pub kind: String,
    /// What happened, rendered.
    pub text: String,
}

/// Writes trace lines up to a byte limit.
pub struct TraceWriter {
    out: BufWriter<File>,
    started: Instant,
    written: u64,
    max_bytes: u64,
    full: bool,
}

impl TraceWriter {
    /// Creates (or empties) the file at `path` and writes its `start` line, `text` saying
    /// what started; an error if the file cannot be created or written.
    pub fn create(
        path: &Path,
        max_bytes: u64,
        started: Instant,
        text: &str,
    ) -> io::Result<TraceWriter> {
        let mut w = TraceWriter {
            out: BufWriter::new(File::create(path)?),
            started,
            written: 0,
            max_bytes,
            full: false,
        };
        w.line(None, "start", text)?;
        Ok(w)
    }

    /// Appends one line (and flushes it, so a killed server leaves a readable trace); the
    /// error if it could not be written (the server stops on it).
    pub fn line(&mut self, conn: Option<u64>, kind: &str, text: &str) -> io::Result<()> {
        if self.full {
            return Ok(());
        }
        let line = TraceLine {
            t_ms: self.started.elapsed().as_millis() as u64,
            conn,
            kind: kind.to_string(),
            text: clip(text),
        };
        let mut json = serde_json::to_string(&line).expect("a trace line serializes");
        json.push('\n');
        if self.written + json.len() as u64 > self.max_bytes {
            self.full = true;
            let last = TraceLine {
                kind: "truncated".into(),
                conn: None,
                text: format!("the trace reached its limit of {} bytes", self.max_bytes),
                ..line
            };
            json = serde_json::to_string(&last).expect("a trace line serializes") + "\n";
        }
        self.written += json.len() as u64;
        self.out
            .write_all(json.as_bytes())
            .and_then(|()| self.out.flush())
    }
}

/// `text`, cut at [`TEXT_MAX`] characters.
fn clip(text: &str) -> String {
    let n = text.chars().count();
    if n <= TEXT_MAX {
        return text.to_string();
    }
    let head: String = text.chars().take(TEXT_MAX).collect();
    format!("{head}… ({n} chars)")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_are_json_clipped_and_stop_at_the_limit() {
        let dir = std::env::temp_dir().join(format!("kvsim-trace-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("t.jsonl");
        let mut w = TraceWriter::create(&path, 500, Instant::now(), "127.0.0.1:1").unwrap();
        w.line(Some(0), "command", &"x".repeat(1000)).unwrap();
        w.line(None, "fault", "restart").unwrap();
        w.line(Some(1), "reply", "STORED").unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        let lines: Vec<TraceLine> = text
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        assert_eq!(lines[0].kind, "start");
        assert_eq!(lines[1].conn, Some(0));
        assert!(
            lines[1].text.ends_with("… (1000 chars)"),
            "{}",
            lines[1].text
        );
        assert_eq!(lines.last().unwrap().kind, "truncated");
        assert_eq!(lines.len(), 4, "{text}");
    }

    /// A trace that cannot be written is an error at once (issue #32.10).
    #[test]
    fn an_unwritable_trace_is_an_error_at_once() {
        let err = TraceWriter::create(Path::new("/dev/full"), 1 << 20, Instant::now(), "x")
            .err()
            .expect("/dev/full cannot hold a trace");
        assert_eq!(err.kind(), io::ErrorKind::StorageFull, "{err}");
    }
}
