//! The `checker` suite: the linearizability checker on Porcupine's benchmark histories
//! (`../shared/benchmarks/porcupine`, or `$KVSIM_PORCUPINE_DIR`), parsed first, then each
//! checked 21 times; figures are medians in milliseconds, parsing excluded, as Porcupine's
//! own figures in VERDICTS.md. Every verdict is compared with VERDICTS.md; a mismatch
//! fails the suite.
//!
//! `NAME_millis` is the wall-clock time of `check_linearizability_parallel` (what
//! `kvsim check-history` runs). `NAME_cpu_millis` is the CPU time of the one-thread
//! `check_linearizability` on the measuring thread (Linux `/proc/thread-self/schedstat`),
//! which other load on the machine barely changes; the kernel updates that counter at
//! scheduler ticks (4 ms here), so it means something only for the slow files.

use super::round;
use kvsim::check::{check_linearizability_parallel, CheckerLimits, Linearization};
use kvsim::formats::{read_history, Format, Value};
use kvsim::specs::cas_register::CasRegisterSpec;
use kvsim::specs::kv::KvSpec;
use kvsim::History;
use kvsim::SequentialSpec;
use serde_json::{Map, Value as Json};
use std::path::{Path, PathBuf};
use std::time::Instant;

const REPEATS: usize = 21;

/// Where the benchmark histories are.
pub fn bench_dir() -> Result<PathBuf, String> {
    let mut candidates = Vec::new();
    if let Some(d) = std::env::var_os("KVSIM_PORCUPINE_DIR") {
        candidates.push(PathBuf::from(d));
    }
    candidates.push(PathBuf::from("../shared/benchmarks/porcupine"));
    candidates
        .push(Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared/benchmarks/porcupine"));
    candidates
        .into_iter()
        .find(|d| d.join("VERDICTS.md").is_file())
        .ok_or_else(|| {
            "expected Porcupine's histories in ../shared/benchmarks/porcupine or $KVSIM_PORCUPINE_DIR, found none".to_string()
        })
}

/// (file, linearizable?) from VERDICTS.md.
pub fn expected(dir: &Path) -> Result<Vec<(String, bool)>, String> {
    let text = std::fs::read_to_string(dir.join("VERDICTS.md")).map_err(|e| e.to_string())?;
    Ok(text
        .lines()
        .filter_map(|l| {
            let cells: Vec<&str> = l.split('|').map(str::trim).collect();
            let file = cells.get(1)?;
            if !(file.starts_with("jepsen/") || file.starts_with("kv/")) {
                return None;
            }
            let verdict = cells.iter().find(|c| c.ends_with("linearizable"))?;
            Some((file.to_string(), !verdict.starts_with("NOT")))
        })
        .collect())
}

/// CPU time of this thread so far, in milliseconds (Linux only).
fn thread_cpu_millis() -> Option<f64> {
    let text = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    let ns: f64 = text.split_whitespace().next()?.parse().ok()?;
    Some(ns / 1e6)
}

/// Median CPU milliseconds of the one-thread check of `h`, if the OS tells.
fn cpu_time<S: SequentialSpec>(spec: &S, h: &History<S::Op, S::Ret>) -> Option<f64> {
    let mut times = Vec::with_capacity(REPEATS);
    for _ in 0..REPEATS {
        let start = thread_cpu_millis()?;
        let r = kvsim::check::check_linearizability(spec, h, CheckerLimits::none());
        times.push(thread_cpu_millis()? - start);
        drop(r);
    }
    times.sort_by(f64::total_cmp);
    Some(times[REPEATS / 2])
}

/// Median and minimum milliseconds of checking `h`, and whether it was linearizable.
fn time<S>(spec: &S, h: &History<S::Op, S::Ret>) -> Result<(f64, f64, bool), String>
where
    S: SequentialSpec + Sync,
    S::Op: Sync,
    S::Ret: Sync,
    S::State: Send,
{
    let mut times = Vec::with_capacity(REPEATS);
    let mut ok = false;
    for _ in 0..REPEATS {
        let start = Instant::now();
        let r = check_linearizability_parallel(spec, h, CheckerLimits::none());
        times.push(start.elapsed().as_secs_f64() * 1000.0);
        ok = match r {
            Linearization::Ok(_) => true,
            Linearization::Violation(_) => false,
            Linearization::Unknown(why) => return Err(format!("unknown without limits: {why}")),
        };
    }
    times.sort_by(f64::total_cmp);
    Ok((times[REPEATS / 2], times[0], ok))
}

/// The figure name of a file: `jepsen/etcd_002.log` → `etcd_002`, `kv/c50-ok.txt` → `kv_c50_ok`.
fn figure(file: &str) -> String {
    let stem = Path::new(file)
        .file_stem()
        .map(|s| s.to_string_lossy().replace('-', "_"))
        .unwrap_or_default();
    if file.starts_with("kv/") {
        format!("kv_{stem}")
    } else {
        stem
    }
}

/// Runs the suite.
pub fn run() -> Result<Map<String, Json>, String> {
    let dir = bench_dir()?;
    let mut out = Map::new();
    let (mut etcd_total, mut etcd_min_total, mut kv_total) = (0.0, 0.0, 0.0);
    let (mut etcd_cpu, mut kv_cpu) = (0.0, 0.0);
    let mut rows = Vec::new();
    for (file, want) in expected(&dir)? {
        let path = dir.join(&file);
        let (median, min, ok, cpu) = if file.starts_with("kv/") {
            let h =
                read_history(&KvSpec, &path, Some(Format::JepsenEdn)).map_err(|e| e.to_string())?;
            let (median, min, ok) = time(&KvSpec, &h)?;
            (median, min, ok, cpu_time(&KvSpec, &h))
        } else {
            let spec = CasRegisterSpec::<Value>::new();
            let h =
                read_history(&spec, &path, Some(Format::JepsenLog)).map_err(|e| e.to_string())?;
            let (median, min, ok) = time(&spec, &h)?;
            (median, min, ok, cpu_time(&spec, &h))
        };
        if ok != want {
            return Err(format!(
                "{file}: expected linearizable={want}, got linearizable={ok}"
            ));
        }
        if file.starts_with("kv/") {
            kv_total += median;
            kv_cpu += cpu.unwrap_or(0.0);
        } else {
            etcd_total += median;
            etcd_min_total += min;
            etcd_cpu += cpu.unwrap_or(0.0);
        }
        rows.push((figure(&file), median, min, cpu));
    }
    out.insert("etcd_all_millis".into(), round(etcd_total));
    out.insert("etcd_all_min_millis".into(), round(etcd_min_total));
    out.insert("kv_all_millis".into(), round(kv_total));
    if thread_cpu_millis().is_some() {
        out.insert("etcd_all_cpu_millis".into(), round(etcd_cpu));
        out.insert("kv_all_cpu_millis".into(), round(kv_cpu));
    }
    for (name, median, min, cpu) in rows {
        out.insert(format!("{name}_millis"), round(median));
        out.insert(format!("{name}_min_millis"), round(min));
        if let Some(cpu) = cpu {
            out.insert(format!("{name}_cpu_millis"), round(cpu));
        }
    }
    if let Some(kib) = peak_rss_kib() {
        out.insert("peak_rss_mib".into(), round(kib as f64 / 1024.0));
    }
    super::long_history::run(&mut out)?;
    Ok(out)
}

/// The process's peak resident memory (Linux `VmHWM`), in KiB.
fn peak_rss_kib() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}
