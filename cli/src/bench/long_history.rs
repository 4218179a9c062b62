//! Long histories, part of the `checker` suite: generated register histories of a million
//! operations in the `jsonl` format, checked as a user checks them (`kvsim check-history
//! --spec register --format jsonl FILE`, a child process), parsing included.
//!
//! - `sequential`: one operation at a time, writes and reads alternating, five processes.
//! - `concurrent`: five processes whose operations overlap (each invokes while the others'
//!   are open), linearizable by construction (a write takes effect at its invocation, a
//!   read returns what was written before its invocation).
//!
//! Figures per history: `long_NAME_millis` (wall clock of the child) and
//! `long_NAME_peak_rss_mib` (the child's `VmHWM`, read every 5 ms until it exits, so
//! growth in its last 5 ms may be missed).

use kvsim::SimRng;
use serde_json::{Map, Value as Json};
use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Operations per generated history.
pub const OPS: u64 = 1_000_000;

/// Processes per generated history.
const PROCESSES: u64 = 5;

/// Writes the `sequential` history of `ops` operations to `out`.
fn sequential(out: &mut impl Write, ops: u64) -> std::io::Result<()> {
    for i in 0..ops {
        let p = i % PROCESSES;
        // Writes of i alternate with reads of the value just written.
        let (f, arg, value) = match i % 2 {
            0 => ("write", i.to_string(), i.to_string()),
            _ => ("read", "null".to_string(), (i - 1).to_string()),
        };
        writeln!(
            out,
            r#"{{"process": {p}, "type": "invoke", "f": "{f}", "value": {arg}}}"#
        )?;
        writeln!(
            out,
            r#"{{"process": {p}, "type": "ok", "f": "{f}", "value": {value}}}"#
        )?;
    }
    Ok(())
}

/// Writes the `concurrent` history of `ops` operations to `out`.
fn concurrent(out: &mut impl Write, ops: u64) -> std::io::Result<()> {
    let mut rng = SimRng::new(1);
    // Per process: the open operation (is a write, the value it writes or reads).
    let mut open: Vec<Option<(bool, Option<u64>)>> = vec![None; PROCESSES as usize];
    let mut current: Option<u64> = None;
    let mut invoked = 0;
    let value = |v: Option<u64>| v.map_or("null".to_string(), |v| v.to_string());
    while invoked < ops || open.iter().any(Option::is_some) {
        let p = rng.index(PROCESSES as usize);
        match open[p].take() {
            Some((write, v)) => {
                let f = if write { "write" } else { "read" };
                let v = value(v);
                writeln!(
                    out,
                    r#"{{"process": {p}, "type": "ok", "f": "{f}", "value": {v}}}"#
                )?;
            }
            None if invoked == ops => {}
            None => {
                invoked += 1;
                if rng.chance(0.5) {
                    current = Some(invoked);
                    writeln!(
                        out,
                        r#"{{"process": {p}, "type": "invoke", "f": "write", "value": {invoked}}}"#
                    )?;
                    open[p] = Some((true, current));
                } else {
                    writeln!(
                        out,
                        r#"{{"process": {p}, "type": "invoke", "f": "read", "value": null}}"#
                    )?;
                    open[p] = Some((false, current));
                }
            }
        }
    }
    Ok(())
}

/// The peak resident memory of process `pid` so far (Linux `VmHWM`), in KiB.
fn peak_rss_kib(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// Checks `file` with this binary's `check-history`; (wall-clock ms, peak RSS in KiB).
fn check(file: &Path) -> Result<(f64, Option<u64>), String> {
    let exe = std::env::current_exe().map_err(|e| format!("cannot find kvsim itself: {e}"))?;
    let start = Instant::now();
    let mut child = Command::new(exe)
        .args(["check-history", "--spec", "register", "--format", "jsonl"])
        .arg(file)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot run kvsim check-history: {e}"))?;
    let mut peak = None;
    let status = loop {
        if let Some(kib) = peak_rss_kib(child.id()) {
            peak = Some(kib.max(peak.unwrap_or(0)));
        }
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) => std::thread::sleep(Duration::from_millis(5)),
            Err(e) => return Err(format!("waiting for kvsim check-history: {e}")),
        }
    };
    let millis = start.elapsed().as_secs_f64() * 1000.0;
    let output = child
        .wait_with_output()
        .map_err(|e| format!("reading kvsim check-history's output: {e}"))?;
    let stdout = String::from_utf8_lossy(&output.stdout);
    if !status.success() || !stdout.contains(": ok ") {
        return Err(format!(
            "expected {} to check ok, found exit {status}: {}{}",
            file.display(),
            stdout.trim(),
            String::from_utf8_lossy(&output.stderr).trim()
        ));
    }
    Ok((millis, peak))
}

/// Generates each history in the temporary directory, checks it and adds its figures.
pub fn run(out: &mut Map<String, Json>) -> Result<(), String> {
    type Generate = fn(&mut std::io::BufWriter<std::fs::File>, u64) -> std::io::Result<()>;
    let histories: [(&str, Generate); 2] = [("sequential", sequential), ("concurrent", concurrent)];
    for (name, generate) in histories {
        let file =
            std::env::temp_dir().join(format!("kvsim-bench-{}-{name}.jsonl", std::process::id()));
        let written = std::fs::File::create(&file).and_then(|f| {
            let mut w = std::io::BufWriter::new(f);
            generate(&mut w, OPS)?;
            w.flush()
        });
        let result = written
            .map_err(|e| format!("cannot write {}: {e}", file.display()))
            .and_then(|()| check(&file));
        let _ = std::fs::remove_file(&file);
        let (millis, peak) = result?;
        out.insert(format!("long_{name}_millis"), super::round(millis));
        if let Some(kib) = peak {
            out.insert(
                format!("long_{name}_peak_rss_mib"),
                super::round(kib as f64 / 1024.0),
            );
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use kvsim::check::{check_linearizability, CheckerLimits};
    use kvsim::formats::{jsonl, pair, to_history};
    use kvsim::specs::register::RegisterSpec;

    /// Both generators write linearizable histories of the asked length, every operation
    /// completed, and the concurrent one has operations that overlap.
    #[test]
    fn the_generated_histories_are_linearizable_and_complete() {
        for k in 0..2 {
            let mut bytes = Vec::new();
            match k {
                0 => sequential(&mut bytes, 20_000),
                _ => concurrent(&mut bytes, 20_000),
            }
            .unwrap();
            let text = String::from_utf8(bytes).unwrap();
            let raws = pair(&jsonl::parse(&text).unwrap()).unwrap();
            assert_eq!(raws.len(), 20_000);
            assert!(raws.iter().all(|r| r.ret.is_some()));
            let overlapping = raws.windows(2).any(|w| w[1].call < w[0].ret.unwrap());
            assert_eq!(overlapping, k == 1);
            let spec = RegisterSpec::new();
            let history = to_history(&spec, &raws).unwrap();
            let verdict = check_linearizability(&spec, &history, CheckerLimits::none()).verdict();
            assert_eq!(verdict, kvsim::Verdict::Ok);
        }
    }
}
