//! `kvsim trace FILE`: a `kvsim serve --trace` file as a table, one column per client
//! connection (as `kvsim check` prints a run), faults in a column of their own. A command
//! and its reply share a row (`set k "v" → STORED`).

use crate::error::CliError;
use crate::out::out;
use kvsim::net::TraceLine;
use std::fmt::Write as _;
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::ExitCode;

/// The longest trace line read (a server's lines are far shorter: their text is clipped).
const LINE_MAX: usize = 64 << 10;

/// The largest trace printed (the table is built in memory): a larger one is an error
/// that says how to print part of it.
const FILE_MAX: u64 = 256 << 20;

/// Connections shown as columns of their own; past them one `conn` column names each
/// row's connection.
const MAX_COLUMNS: usize = 6;

/// The widest cell.
const CELL_MAX: usize = 38;

/// Runs `kvsim trace`.
pub fn main(file: &Path) -> Result<ExitCode, CliError> {
    let lines = read(file)?;
    out!("{}", render(&lines))?;
    Ok(ExitCode::SUCCESS)
}

/// The trace's lines; an error names the file and the line that is not a trace line.
fn read(file: &Path) -> Result<Vec<TraceLine>, CliError> {
    let f = std::fs::File::open(file)
        .map_err(|e| CliError::of("trace", format!("cannot read {}: {e}", file.display())))?;
    let size = f.metadata().map_or(0, |m| m.len());
    if size > FILE_MAX {
        return Err(CliError::of(
            "trace",
            format!(
                "{}: expected a trace of at most {} MiB, found {} MiB; print a part of it \
                 (e.g. `head -n 100000 FILE > part.jsonl`)",
                file.display(),
                FILE_MAX >> 20,
                size >> 20
            ),
        ));
    }
    let mut reader = BufReader::new(f);
    let mut out = Vec::new();
    let mut buf = Vec::new();
    for n in 1.. {
        buf.clear();
        let read = std::io::Read::take(&mut reader, LINE_MAX as u64 + 1)
            .read_until(b'\n', &mut buf)
            .map_err(|e| CliError::of("trace", format!("cannot read {}: {e}", file.display())))?;
        if read == 0 {
            break;
        }
        if buf.len() > LINE_MAX {
            return Err(CliError::of(
                "trace",
                format!(
                    "{}:{n}: expected a trace line of at most {LINE_MAX} bytes, found a longer one",
                    file.display()
                ),
            ));
        }
        let text = String::from_utf8_lossy(&buf);
        if text.trim().is_empty() {
            continue;
        }
        let line: TraceLine = serde_json::from_str(text.trim()).map_err(|e| {
            CliError::of(
                "trace",
                format!(
                    "{}:{n}: expected a kvsim serve trace line ({{\"t_ms\", \"conn\", \"kind\", \"text\"}}), found {:?} ({e})",
                    file.display(),
                    text.trim().chars().take(80).collect::<String>()
                ),
            )
        })?;
        out.push(line);
    }
    Ok(out)
}

/// One row of the table.
struct Row {
    t_ms: u64,
    conn: Option<u64>,
    text: String,
}

/// The table of `lines`.
fn render(lines: &[TraceLine]) -> String {
    let mut rows: Vec<Row> = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        let l = &lines[i];
        let text = match l.kind.as_str() {
            "command" => match lines.get(i + 1) {
                Some(r) if r.kind == "reply" && r.conn == l.conn => {
                    i += 1;
                    format!("{} → {}", l.text, r.text)
                }
                _ => format!("{} → (no reply)", l.text),
            },
            "reply" => format!("→ {}", l.text),
            "connect" => format!("connects from {}", l.text),
            "close" => "closes".to_string(),
            "fault" => l.text.clone(),
            other => format!("{other}: {}", l.text),
        };
        let conn = if l.kind == "fault" && l.conn.is_none() {
            None
        } else {
            l.conn
        };
        // A fault on one connection goes in the faults column, naming it.
        let (conn, text) = match (l.kind.as_str(), conn) {
            ("fault", Some(c)) => (None, format!("C{c}: {text}")),
            (_, c) => (c, text),
        };
        rows.push(Row {
            t_ms: l.t_ms,
            conn,
            text,
        });
        i += 1;
    }
    let mut conns: Vec<u64> = rows.iter().filter_map(|r| r.conn).collect();
    conns.sort_unstable();
    conns.dedup();
    let mut out = String::new();
    let _ = writeln!(
        out,
        "kvsim serve trace · {} lines · {} connections",
        lines.len(),
        conns.len()
    );
    let clip = |s: &str| -> String {
        if s.chars().count() <= CELL_MAX {
            s.to_string()
        } else {
            let head: String = s.chars().take(CELL_MAX - 1).collect();
            format!("{head}…")
        }
    };
    if conns.len() <= MAX_COLUMNS {
        let _ = write!(out, "\n{:>9}", "t (ms)");
        for c in &conns {
            let _ = write!(out, "   {:<w$}", format!("C{c}"), w = CELL_MAX);
        }
        let _ = writeln!(out, "   faults");
        for r in &rows {
            let _ = write!(out, "{:>9}", r.t_ms);
            for c in &conns {
                let cell = if r.conn == Some(*c) {
                    clip(&r.text)
                } else {
                    String::new()
                };
                let _ = write!(out, "   {cell:<w$}", w = CELL_MAX);
            }
            let fault = if r.conn.is_none() {
                r.text.as_str()
            } else {
                ""
            };
            let _ = writeln!(out, "   {fault}").map(|_| ());
        }
    } else {
        let _ = writeln!(out, "\n{:>9}   {:<6}   event", "t (ms)", "conn");
        for r in &rows {
            let conn = r.conn.map_or("fault".to_string(), |c| format!("C{c}"));
            let _ = writeln!(out, "{:>9}   {conn:<6}   {}", r.t_ms, r.text);
        }
    }
    // Trailing spaces of empty cells carry nothing.
    out.lines()
        .map(str::trim_end)
        .collect::<Vec<_>>()
        .join("\n")
        + "\n"
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(t_ms: u64, conn: Option<u64>, kind: &str, text: &str) -> TraceLine {
        TraceLine {
            t_ms,
            conn,
            kind: kind.into(),
            text: text.into(),
        }
    }

    #[test]
    fn a_trace_reads_as_a_table_with_a_column_per_connection() {
        let lines = [
            line(0, Some(0), "connect", "127.0.0.1:5000"),
            line(1, Some(1), "connect", "127.0.0.1:5001"),
            line(2, Some(0), "command", "add lock \"1\" exp=2"),
            line(2, Some(0), "reply", "STORED"),
            line(3, None, "fault", "clock +3 s"),
            line(4, Some(1), "fault", "pause 500 ms"),
            line(504, Some(1), "command", "add lock \"1\" exp=2"),
            line(504, Some(1), "reply", "STORED"),
            line(505, Some(0), "close", ""),
        ];
        insta::assert_snapshot!(render(&lines));
    }

    #[test]
    fn a_line_that_is_not_a_trace_line_is_named_with_its_number() {
        let dir = std::env::temp_dir().join(format!("kvsim-trace-cli-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("t.jsonl");
        std::fs::write(
            &path,
            "{\"t_ms\":0,\"conn\":0,\"kind\":\"connect\",\"text\":\"x\"}\n\n{\"t_ms\": \"soon\"}\n",
        )
        .unwrap();
        let err = read(&path).expect_err("an error").to_string();
        assert!(
            err.contains("t.jsonl:3: expected a kvsim serve trace line"),
            "{err}"
        );
        assert!(read(&dir.join("absent")).is_err());
    }
}
