//! `kvsim trace FILE`: a `kvsim serve --trace` file as a table, one column per client
//! connection (as `kvsim check` prints a run), faults in a column of their own. A command
//! and its reply share a row (`set k "v" → STORED`). The table fits in 200 characters:
//! up to [`MAX_COLUMNS`] connections get a column each; a trace with more prints one
//! `conn` column naming each row's connection instead, and says so. (A server's trace
//! holds what crossed the wire: a structure's own work between commands is not in it.)

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

/// The widest line of the table (characters): the columns share it.
const WIDTH: usize = 200;

/// The time column and the gap after it.
const LEAD: usize = 9 + 3;

/// The gap between columns.
const GAP: usize = 3;

/// The narrowest connection column (a cell longer than its column runs on into the empty
/// columns to its right: each row holds one event).
const CELL_MIN: usize = 10;

/// The widest connection column.
const CELL_MAX: usize = 38;

/// Room kept for the faults column when the connections' columns are sized.
const FAULTS_MIN: usize = 20;

/// Connections shown as columns of their own (one column each, at least [`CELL_MIN`]
/// wide, within [`WIDTH`]): past them one `conn` column names each row's connection.
pub const MAX_COLUMNS: usize = (WIDTH - LEAD - FAULTS_MIN) / (CELL_MIN + GAP);

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
    if conns.len() <= MAX_COLUMNS {
        columns(&mut out, &rows, &conns);
    } else {
        let _ = writeln!(
            out,
            "(more connections than the {MAX_COLUMNS} that fit as columns in {WIDTH} \
             characters: one conn column names each row's connection)"
        );
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

/// Cuts `s` to `width` characters, ending with `…` when cut.
fn clip(s: &str, width: usize) -> String {
    if s.chars().count() <= width {
        s.to_string()
    } else {
        let head: String = s.chars().take(width.saturating_sub(1)).collect();
        format!("{head}…")
    }
}

/// The table with a column per connection (lincheck's layout: a column per thread, one
/// event a row), faults in the last column. Columns share [`WIDTH`]; a cell longer than
/// its column runs on into the empty columns to its right and is cut at the width; a
/// fault too long for its column moves left into the (empty) connection columns.
fn columns(out: &mut String, rows: &[Row], conns: &[u64]) {
    let n = conns.len().max(1);
    let col = ((WIDTH - LEAD - FAULTS_MIN) / n)
        .saturating_sub(GAP)
        .clamp(CELL_MIN, CELL_MAX);
    let fault_at = LEAD + conns.len() * (col + GAP);
    let mut head = format!("{:>9}   ", "t (ms)");
    for c in conns {
        let _ = write!(head, "{:<w$}", format!("C{c}"), w = col + GAP);
    }
    head.push_str("faults");
    let _ = writeln!(out, "\n{head}");
    for r in rows {
        let start = match r.conn {
            Some(c) => LEAD + conns.iter().position(|&x| x == c).unwrap_or(0) * (col + GAP),
            None => fault_at
                .min(WIDTH.saturating_sub(r.text.chars().count()))
                .max(LEAD),
        };
        let cell = clip(&r.text, WIDTH - start);
        let _ = writeln!(out, "{:>9}   {}{cell}", r.t_ms, " ".repeat(start - LEAD));
    }
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

    /// Nine connections, each connecting, sending a command and closing, and a fault.
    fn nine_connections(n: u64) -> Vec<TraceLine> {
        let mut lines = Vec::new();
        for c in 0..n {
            lines.push(line(
                c,
                Some(c),
                "connect",
                &format!("127.0.0.1:{}", 5000 + c),
            ));
        }
        for c in 0..n {
            lines.push(line(
                10 + c,
                Some(c),
                "command",
                &format!("incr counter{c} 1"),
            ));
            lines.push(line(10 + c, Some(c), "reply", &format!("{}", c + 1)));
        }
        lines.push(line(
            30,
            None,
            "fault",
            "restart (volatile: the store is emptied)",
        ));
        lines.push(line(
            31,
            Some(4),
            "command",
            "set a_rather_long_key_name 0 0 5 \"hello\"",
        ));
        lines.push(line(31, Some(4), "reply", "STORED"));
        lines
    }

    #[test]
    fn nine_connections_get_nine_columns_within_the_width() {
        let text = render(&nine_connections(9));
        let head = text.lines().nth(2).expect("a header");
        for c in 0..9 {
            assert!(head.contains(&format!("C{c} ")), "{head}");
        }
        assert!(head.ends_with("faults"), "{head}");
        assert!(!text.contains("conn "), "{text}");
        assert!(
            text.lines().all(|l| l.chars().count() <= WIDTH),
            "a line wider than {WIDTH}:\n{text}"
        );
        insta::assert_snapshot!(text);
    }

    #[test]
    fn more_connections_than_fit_fall_back_to_one_conn_column_and_say_so() {
        assert_eq!(MAX_COLUMNS, 12);
        let fit = render(&nine_connections(MAX_COLUMNS as u64));
        assert!(
            fit.lines().nth(2).expect("a header").contains("C11 "),
            "{fit}"
        );
        assert!(fit.lines().all(|l| l.chars().count() <= WIDTH), "{fit}");
        let text = render(&nine_connections(MAX_COLUMNS as u64 + 1));
        assert!(
            text.contains("more connections than the 12 that fit as columns"),
            "{text}"
        );
        assert!(text.contains("conn"), "{text}");
        assert!(text.contains("   C12      incr counter12 1 → 13"), "{text}");
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
