//! `kvsim stress TARGET --server ADDR…`: run a model's operations from OS threads against
//! real servers (memcached, or `kvsim serve`), record the history with real-time order,
//! and check it with the model's property (see `kvsim::net::stress`).
//!
//! Exit codes: 0 ok, 1 violation, 2 usage error or a server that cannot be reached at the
//! start, 3 unknown (no operation with a known outcome, a server that died mid-run, the
//! history at its half of `--max-memory`, a checker limit hit). The run uses a fresh key
//! prefix of its own (printed), so keys left by earlier runs cannot fake a violation.
//! `--history-out FILE` saves the history in the `jsonl` format of `kvsim check-history`.

use crate::error::{self, CliError};
use crate::installed::registry;
use crate::out::outln;
use clap::Args;
use kvsim::check::CheckerLimits;
use kvsim::harness::target::Target;
use kvsim::net::StressConfig;
use kvsim_models::registry::resolve;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::{Duration, Instant};

/// The flags of `kvsim stress`.
#[derive(Args, Debug)]
pub struct StressArgs {
    /// `MODEL/VARIANT`, e.g. `fifo/fixed`.
    pub target: String,
    /// A server, `host:port` (repeat for several: keys are spread with ketama).
    #[arg(long = "server", required = true)]
    pub servers: Vec<String>,
    /// Client threads.
    #[arg(long, default_value_t = 4)]
    pub threads: usize,
    /// Stop starting operations after this many seconds.
    #[arg(long)]
    pub duration: Option<f64>,
    /// Operations per thread (default 100 when no --duration is given).
    #[arg(long)]
    pub ops: Option<usize>,
    /// Seed of the workload and the clients' random numbers.
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// Seconds to wait for each reply before the operation's outcome is unknown.
    #[arg(long, default_value_t = 2.0)]
    pub timeout: f64,
    /// Milliseconds each thread waits between two operations.
    #[arg(long)]
    pub stagger_ms: Option<u64>,
    /// Send flush_all to every server first (not needed for correctness: each run uses a
    /// fresh key prefix of its own).
    #[arg(long)]
    pub flush: bool,
    /// Give up checking the history after this many seconds (the verdict is then
    /// `unknown`).
    #[arg(long, value_name = "SECS", default_value_t = 60.0)]
    pub check_time_limit: f64,
    /// Give up checking the history after this many search steps of the linearizability
    /// checker (the verdict is then `unknown`).
    #[arg(long, value_name = "N", default_value_t = kvsim_models::lincheck::MAX_STEPS)]
    pub check_max_steps: u64,
    /// The run's memory bound in MiB: half for the recorded history (once it is full, no
    /// new operation starts, and the verdict is `unknown` unless a violation was found), a
    /// quarter for the general checker's memo (past it: `unknown`), the rest for the
    /// checks' working memory.
    #[arg(long, value_name = "MIB", default_value_t = 1024,
          value_parser = clap::value_parser!(u64).range(2..=(1 << 30)))]
    pub max_memory: u64,
    /// Save the recorded history to FILE as JSON lines (the `jsonl` format of
    /// `kvsim check-history`).
    #[arg(long, value_name = "FILE")]
    pub history_out: Option<PathBuf>,
}

fn seconds(s: f64, what: &str) -> Result<Duration, String> {
    Duration::try_from_secs_f64(s)
        .map_err(|_| format!("bad --{what} {s}: expected a non-negative number of seconds"))
}

fn positive_seconds(s: f64, what: &str) -> Result<Duration, String> {
    match seconds(s, what)? {
        d if d.is_zero() => Err(format!(
            "bad --{what} {s}: expected a positive number of seconds"
        )),
        d => Ok(d),
    }
}

fn run(target: &dyn Target, args: &StressArgs) -> Result<i32, CliError> {
    let bad = |e: String| CliError::of("stress", e);
    let name = target.name();
    if args.threads == 0 {
        return Err(bad(
            "bad --threads 0: expected at least 1 client thread".to_string()
        ));
    }
    if args.ops == Some(0) {
        return Err(bad(
            "bad --ops 0: expected at least 1 operation per thread".to_string()
        ));
    }
    if args.check_max_steps == 0 {
        return Err(bad(
            "bad --check-max-steps 0: expected at least 1 step".to_string()
        ));
    }
    let limits = CheckerLimits {
        time: Some(positive_seconds(args.check_time_limit, "check-time-limit").map_err(bad)?),
        max_steps: Some(args.check_max_steps),
        max_memory: Some((args.max_memory << 20) / 4),
    };
    let mut config = StressConfig::new(args.servers.clone(), args.threads, 0);
    config.duration = args
        .duration
        .map(|d| positive_seconds(d, "duration"))
        .transpose()
        .map_err(bad)?;
    config.ops_per_thread = match (args.ops, config.duration) {
        (Some(n), _) => Some(n),
        (None, Some(_)) => None,
        (None, None) => Some(100),
    };
    config.seed = args.seed;
    config.max_history_bytes = Some((args.max_memory << 20) / 2);
    config.flush_first = args.flush;
    config.check_limits = limits;
    config.stagger = args.stagger_ms.map(Duration::from_millis);
    config.io_timeout = positive_seconds(args.timeout, "timeout").map_err(bad)?;
    config.connect_timeout = config.io_timeout.min(Duration::from_secs(1));
    let bound = match (config.ops_per_thread, args.duration) {
        (Some(n), Some(d)) => format!("{n} ops (at most {d} s)"),
        (Some(n), None) => format!("{n} ops"),
        (None, Some(d)) => format!("{d} s"),
        (None, None) => unreachable!("a bound is always set above"),
    };
    outln!(
        "kvsim stress: {name} against {} · {} threads × {bound} · seed {}",
        args.servers.join(", "),
        args.threads,
        args.seed
    )?;
    let started = Instant::now();
    let run = target
        .subject()
        .stress(&config)
        .map_err(|e| bad(e.to_string()))?;
    let checked = started.elapsed().saturating_sub(run.elapsed);
    let secs = run.elapsed.as_secs_f64();
    outln!(
        "  key prefix {:?}{}",
        run.key_prefix,
        if args.flush {
            " (servers flushed first)"
        } else {
            ""
        }
    )?;
    outln!(
        "  {} operations in {secs:.2} s ({:.0} ops/s): {} ok, {} failed, {} unknown",
        run.history.len(),
        run.history.len() as f64 / secs.max(1e-9),
        run.ok,
        run.failed,
        run.unknown
    )?;
    if let Some(why) = &run.stopped {
        outln!("  stopped: {why}")?;
    }
    if let (Some(e), true) = (&run.first_error, run.unknown > 0) {
        outln!("  first error: {e}")?;
    }
    if let Some(path) = &args.history_out {
        let write = || -> std::io::Result<()> {
            let mut out = std::io::BufWriter::new(std::fs::File::create(path)?);
            run.history.write_jsonl(&mut out)?;
            std::io::Write::flush(&mut out)
        };
        write().map_err(|e| {
            bad(format!(
                "cannot write --history-out {}: {e}",
                path.display()
            ))
        })?;
        if let Some(spec) = run.history.spec() {
            outln!(
                "  history: {} (check it with: kvsim check-history --spec {spec} {})",
                path.display(),
                path.display()
            )?;
        } else {
            outln!(
                "  history: {} (jsonl; no check-history spec reads {name}'s operations, \
                 so each f is the operation's Debug text)",
                path.display()
            )?;
        }
    }
    outln!("  checked in {:.2} s", checked.as_secs_f64())?;
    outln!("  verdict: {}", run.verdict)?;
    if let kvsim::Verdict::Violation(v) = &run.verdict {
        for &i in v.ops.iter().take(5) {
            if let Some(op) = run.history.describe(i) {
                outln!("    op {i}: {op}")?;
            }
        }
    }
    Ok(run.verdict.exit_code())
}

/// Runs `kvsim stress`; returns the exit code (0 ok, 1 violation, 2 usage or I/O error,
/// 3 unknown).
pub fn main(args: &StressArgs) -> Result<ExitCode, CliError> {
    dispatch(args).map(error::code)
}

fn dispatch(args: &StressArgs) -> Result<i32, CliError> {
    let bad = |e: String| CliError::of("stress", e);
    let entries = registry();
    let (index, variants) = resolve(&entries, &args.target).map_err(bad)?;
    let [variant] = variants[..] else {
        return Err(bad(format!(
            "target {:?} names both variants: expected MODEL/published or MODEL/fixed",
            args.target
        )));
    };
    run(entries[index].target(variant), args)
}

#[cfg(test)]
mod tests {
    use super::*;
    use kvsim::net::{stress, MemcachedProcess};
    use kvsim::Outcome;
    use kvsim::Verdict;
    use kvsim_models::fifo;
    use std::io::{Read, Write};
    use std::net::TcpStream;
    use std::sync::atomic::{AtomicBool, Ordering};

    /// memcached flags for the lossy run: 2 MB, and a smallest slab chunk of 160 bytes
    /// (`-n 112`: a 48-byte item header + 112), so the filler's items (82 bytes) and all
    /// of the queue's items share slab class 1: one LRU, one pool of pages. With the
    /// default `-n 48` (96-byte chunks) the run's key prefix (`kvsim.0.<12 hex>:`, 21
    /// bytes) split the queue (`lru_crawler metadump all`): the unlinked tail node,
    /// 93 bytes, in class 1, but every linked node (106 bytes) and `head` and `tail`
    /// (103) in class 2 (120-byte chunks), whose first 1 MB page memcached grants even
    /// beyond `-m` (`total_malloced` 3 MB). There they sat, 9 items in 8,738 chunks,
    /// 0 evictions, while class 1 evicted ~380,000 filler items; only the tail node could
    /// go, and every operation reads it (the segmented LRU then moves it to WARM), so a
    /// node was lost in about 1 run of 3.
    const TINY: &[&str] = &["-m", "2", "-n", "112"];

    /// Other traffic: small items (the FIFO nodes' slab class with [`TINY`]), pipelined,
    /// until `stop`.
    fn filler(addr: String, stop: &AtomicBool) -> u64 {
        let mut stream = TcpStream::connect(&addr).expect("filler connects");
        let mut written = 0u64;
        let mut reply = [0u8; 256];
        while !stop.load(Ordering::Relaxed) {
            let mut batch = Vec::new();
            for _ in 0..200 {
                batch.extend_from_slice(
                    format!("set fill:{written} 0 0 12 noreply\r\nfiller-bytes\r\n").as_bytes(),
                );
                written += 1;
            }
            batch.extend_from_slice(b"version\r\n");
            stream.write_all(&batch).expect("filler sends");
            let _ = stream.read(&mut reply).expect("filler reads");
        }
        written
    }

    fn fifo_run(
        model: fifo::Fifo,
        mc: &MemcachedProcess,
        load: bool,
    ) -> kvsim::net::StressRun<fifo::Op, fifo::Ret> {
        let mut config = StressConfig::new(vec![mc.addr()], 4, 0);
        config.ops_per_thread = Some(50);
        if load {
            // Spread the run over about a second, so the other traffic can push queue
            // nodes out between operations.
            config.stagger = Some(Duration::from_millis(20));
        }
        let stop = AtomicBool::new(false);
        std::thread::scope(|s| {
            let fill = load.then(|| s.spawn(|| filler(mc.addr(), &stop)));
            if load {
                // Let the other traffic fill the memory first.
                while mc_items(&mc.addr()) < 30_000 {
                    std::thread::yield_now();
                }
            }
            let run = stress(&model, &config).expect("the run starts");
            stop.store(true, Ordering::Relaxed);
            if let Some(f) = fill {
                f.join().expect("filler");
            }
            run
        })
    }

    /// The reply to a `stats` command (`"stats"`, `"stats slabs"`, …), up to `END`.
    fn mc_stats(addr: &str, command: &str) -> String {
        let mut s = TcpStream::connect(addr).unwrap();
        s.write_all(format!("{command}\r\n").as_bytes()).unwrap();
        let mut out = Vec::new();
        let mut buf = [0u8; 8192];
        while !out.ends_with(b"END\r\n") {
            let n = s.read(&mut buf).unwrap();
            assert!(n > 0, "memcached closed the connection during {command:?}");
            out.extend_from_slice(&buf[..n]);
        }
        String::from_utf8_lossy(&out).into_owned()
    }

    /// The value of `STAT <name>` in the reply to `command`, 0 if absent.
    fn mc_stat(addr: &str, command: &str, name: &str) -> u64 {
        let prefix = format!("STAT {name} ");
        mc_stats(addr, command)
            .lines()
            .find_map(|l| l.strip_prefix(prefix.as_str()))
            .and_then(|v| v.trim().parse().ok())
            .unwrap_or(0)
    }

    /// `total_items` from `stats` (items ever stored).
    fn mc_items(addr: &str) -> u64 {
        mc_stat(addr, "stats", "total_items")
    }

    /// The FIFO's property, judged by kvsim's checker (Lowe's memoization; the models'
    /// interim checker can take minutes on a history this concurrent): linearizable
    /// against the queue spec, a detected loss (`Lost`) counting as no effect.
    fn queue_verdict(run: &kvsim::net::StressRun<fifo::Op, fifo::Ret>) -> Verdict {
        let mut history = run.history.clone();
        for op in &mut history.ops {
            if op.outcome == Outcome::Ok(fifo::Ret::Lost) {
                op.outcome = Outcome::Failed;
            }
        }
        kvsim::check::linearizability::linearizable(
            &fifo::QueueSpec::default(),
            &history,
            kvsim::check::linearizability::CheckerLimits::time(std::time::Duration::from_secs(60)),
        )
    }

    fn lost(run: &kvsim::net::StressRun<fifo::Op, fifo::Ret>) -> usize {
        run.history
            .ops
            .iter()
            .filter(|o| o.outcome == Outcome::Ok(fifo::Ret::Lost))
            .count()
    }

    #[test]
    fn fifo_fixed_is_linearizable_against_memcached_with_plenty_of_memory() {
        let Some(mc) = MemcachedProcess::for_test("stress fifo/fixed", &["-m", "64"]) else {
            return;
        };
        let run = fifo_run(fifo::fixed(), &mc, false);
        assert_eq!(run.history.len(), 200);
        assert_eq!(queue_verdict(&run), Verdict::Ok);
        assert_eq!(lost(&run), 0);
    }

    #[test]
    fn fifo_under_a_tiny_memory_limit_and_load_loses_nodes() {
        // -m 2 and other traffic in the nodes' slab class: the LRU evicts queue nodes.
        let Some(mc) = MemcachedProcess::for_test("stress fifo", TINY) else {
            return;
        };
        let run = fifo_run(fifo::fixed(), &mc, true);
        // The premise: the queue's items shared the filler's slab class (a class of their
        // own gets a page of its own, which the filler never presses).
        let addr = mc.addr();
        assert_eq!(
            mc_stat(&addr, "stats slabs", "active_slabs"),
            1,
            "the queue's items left the filler's slab class (key prefix {:?}):\n{}",
            run.key_prefix,
            mc_stats(&addr, "stats items")
        );
        assert!(
            mc_stat(&addr, "stats", "evictions") > 0,
            "memcached evicted nothing"
        );
        // The seed article's prediction: evicted nodes. The fixed FIFO notices (operations
        // answer Lost) and what it answers stays linearizable.
        assert!(
            lost(&run) > 0,
            "no node was lost: {} ops",
            run.history.len()
        );
        assert_eq!(queue_verdict(&run), Verdict::Ok);
    }
}
