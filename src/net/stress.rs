//! Running a [`Model`] against real servers from OS threads, and checking the history:
//! the engine of `kvsim stress`.
//!
//! Each thread is one client with its own [`TcpKv`] (its own connections, its random
//! numbers seeded from the run's seed and the thread). It runs the model's workload
//! (`model.op(thread, index, …)`) until its operation count or the deadline is reached,
//! recording every operation in a shared [`Recorder`], whose ordering rules make sure no
//! thread scheduling can fake a violation; the structure's marks (`kv.mark("enter")`)
//! go into the same order, taken when the event has happened. An operation that fails (timeout, lost
//! connection, error reply) has an unknown outcome: it may have taken effect, even later
//! (a request still in flight), so as in Jepsen the thread then goes on as a *new*
//! process: the history's client ids are process ids, `thread + threads * k` after `k`
//! such failures, while the model keeps seeing the thread index as its client.
//!
//! No evidence, no pass. Every server must answer before the first operation (else
//! [`StressError::Unreachable`]). All handles share a [`StopSignal`]: once the run's hard
//! deadline (`duration` + `io_timeout`) has passed, or a server has failed every command
//! for `io_timeout`, commands fail at once without being sent, so even structures that
//! retry lost connections for ever end their operation. A run in which no operation has a
//! known outcome, or that was stopped by a dead server, is `Unknown` (a violation found
//! among the known outcomes stays a violation).
//!
//! Each run works in a key namespace of its own: every key gets a per-run prefix
//! ([`fresh_prefix`]), so items left by an earlier run can never fake a violation.

use super::client::{AddrError, StopSignal, TcpKv, TcpKvConfig};
use super::recorder::{Pending, Recorder};
use crate::check::CheckerLimits;
use crate::command::{Command, Reply};
use crate::history::{History, JsonlFormat, JsonlOp, Outcome};
use crate::kv::{block_on_ready, Kv, KvError};
use crate::model::Model;
use crate::rng::SimRng;
use crate::verdict::Verdict;
use std::fmt::Debug;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// A client's handle during one operation: [`TcpKv`], plus its marks going to the
/// recorder under the operation they belong to.
struct Recording<'a, Op, Ret> {
    kv: &'a TcpKv,
    recorder: &'a Recorder<Op, Ret>,
    pending: &'a Pending,
}

impl<Op, Ret> Kv for Recording<'_, Op, Ret> {
    async fn execute(&self, command: Command) -> Result<Reply, KvError> {
        self.kv.execute(command).await
    }

    fn now_ms(&self) -> u64 {
        self.kv.now_ms()
    }

    async fn sleep_ms(&self, ms: u64) {
        self.kv.sleep_ms(ms).await
    }

    fn random_u64(&self) -> u64 {
        self.kv.random_u64()
    }

    fn mark(&self, label: &'static str) {
        self.recorder.mark(self.pending, label);
    }
}

/// How a stress run is set up.
#[derive(Clone, Debug)]
pub struct StressConfig {
    /// The servers, `host:port`, spread with ketama.
    pub servers: Vec<String>,
    /// Client threads.
    pub threads: usize,
    /// Operations per thread (`None`: until the deadline).
    pub ops_per_thread: Option<usize>,
    /// Stop starting operations after this long (`None`: until the count).
    pub duration: Option<Duration>,
    /// Seeds the workload and the clients' random numbers.
    pub seed: u64,
    /// Connect timeout of every client.
    pub connect_timeout: Duration,
    /// Read/write timeout of every client.
    pub io_timeout: Duration,
    /// Each thread waits this long between two operations (Jepsen's stagger): spreads a
    /// run over time, so that other load and expiry can act between operations.
    pub stagger: Option<Duration>,
    /// Send `flush_all` to every server before the model's setup.
    pub flush_first: bool,
    /// The run's key prefix: `None` draws a fresh one ([`fresh_prefix`]); `Some("")`
    /// uses the keys as they are.
    pub key_prefix: Option<String>,
    /// Bytes the recorded history may take ([`super::op_bytes`] per
    /// operation): once it holds that many operations, no thread starts another, and a
    /// run that finds no violation is `Unknown` naming the bound (`None`: no bound).
    pub max_history_bytes: Option<u64>,
    /// The limits of the history's check, passed to [`Model::check_long_with`] (hitting
    /// one makes the verdict `Unknown`). Default: [`crate::model::SIMULATED_LIMITS`].
    pub check_limits: CheckerLimits,
}

/// A key prefix no other run uses: `kvsim.<seed>.<12 hex digits>:`, the digits mixed from
/// the process id, the wall clock and a counter (a stress run is not simulated, so this
/// randomness decides nothing but the namespace). At most 40 bytes.
pub fn fresh_prefix(seed: u64) -> String {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64);
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    let mut rng = SimRng::derive(
        nanos ^ (u64::from(std::process::id()) << 32),
        n ^ seed.rotate_left(17),
    );
    format!("kvsim.{seed}.{:012x}:", rng.next_u64() >> 16)
}

impl StressConfig {
    /// `threads` clients × `ops` operations against `servers`, seed 0, 1 s to connect,
    /// 2 s per reply, the check bounded by [`crate::model::SIMULATED_LIMITS`].
    pub fn new(servers: Vec<String>, threads: usize, ops: usize) -> Self {
        StressConfig {
            servers,
            threads,
            ops_per_thread: Some(ops),
            duration: None,
            seed: 0,
            connect_timeout: Duration::from_secs(1),
            io_timeout: Duration::from_secs(2),
            stagger: None,
            flush_first: false,
            key_prefix: None,
            max_history_bytes: None,
            check_limits: crate::model::SIMULATED_LIMITS,
        }
    }
}

/// Why a stress run could not run.
#[derive(Debug, thiserror::Error)]
pub enum StressError {
    /// A server address is unusable.
    #[error(transparent)]
    Addr(#[from] AddrError),
    /// The run has no end: neither an operation count nor a duration.
    #[error("unbounded run: expected an operation count or a duration, found neither")]
    Unbounded,
    /// No client thread.
    #[error("no client: expected at least one thread, found 0")]
    NoThreads,
    /// A server did not answer before the first operation.
    #[error("cannot reach server {server}: {detail}")]
    Unreachable {
        /// The server, as given.
        server: String,
        /// What went wrong (connection refused, timeout, …).
        detail: String,
    },
    /// The model's setup failed (before any operation ran).
    #[error("setup failed: {0}")]
    Setup(KvError),
}

/// The result of a stress run.
#[derive(Debug)]
pub struct StressRun<Op, Ret> {
    /// Every operation, with real-time order and outcomes.
    pub history: History<Op, Ret>,
    /// The model's judgement of the history.
    pub verdict: Verdict,
    /// Operations whose outcome is unknown (timeouts, lost connections, error replies).
    pub unknown: usize,
    /// Operations that completed (their outcome is known).
    pub ok: usize,
    /// Operations known to have had no effect.
    pub failed: usize,
    /// How long the operations ran.
    pub elapsed: Duration,
    /// The key prefix of the run (empty: none).
    pub key_prefix: String,
    /// Why the run was stopped before its bound, if it was (a dead server, the hard
    /// deadline).
    pub stopped: Option<String>,
    /// The first error an operation ended with.
    pub first_error: Option<String>,
}

/// A stress run of any model, its operation types erased ([`StressRun::erase`]): what
/// [`Stressable::stress`](super::Stressable::stress) returns.
pub struct StressReport {
    /// The model's judgement of the history.
    pub verdict: Verdict,
    /// Operations whose outcome is unknown.
    pub unknown: usize,
    /// Operations that completed.
    pub ok: usize,
    /// Operations known to have had no effect.
    pub failed: usize,
    /// How long the operations ran.
    pub elapsed: Duration,
    /// The key prefix of the run.
    pub key_prefix: String,
    /// Why the run was stopped before its bound, if it was.
    pub stopped: Option<String>,
    /// The first error an operation ended with.
    pub first_error: Option<String>,
    /// The history.
    pub history: Box<dyn StressHistory>,
}

/// A stress run's history, its operation types erased.
pub trait StressHistory {
    /// Number of operations.
    fn len(&self) -> usize;

    /// Whether there are no operations.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The `i`-th operation for people: `client C OP → OUTCOME (CALL ms … RET ms)`.
    fn describe(&self, i: usize) -> Option<String>;

    /// The `kvsim check-history` spec that reads the operations, with the flags it needs
    /// (`visitor-counter --period 2`; `None`: none does, each is written as its Debug
    /// text).
    fn spec(&self) -> Option<String>;

    /// Writes the history in the `jsonl` format ([`History::write_jsonl`]).
    fn write_jsonl(&self, out: &mut dyn std::io::Write) -> std::io::Result<()>;
}

struct Erased<Op, Ret> {
    history: History<Op, Ret>,
    format: Option<JsonlFormat<Op, Ret>>,
}

impl<Op: Debug, Ret: Debug> StressHistory for Erased<Op, Ret> {
    fn len(&self) -> usize {
        self.history.len()
    }

    fn describe(&self, i: usize) -> Option<String> {
        let op = self.history.ops.get(i)?;
        Some(format!(
            "client {} {:?} → {:?} ({} ms … {} ms)",
            op.client,
            op.op,
            op.outcome,
            op.call_ms,
            op.ret_ms.map_or("-".to_string(), |t| t.to_string())
        ))
    }

    fn spec(&self) -> Option<String> {
        self.format.as_ref().map(|f| {
            std::iter::once(f.spec.to_string())
                .chain(f.args.iter().cloned())
                .collect::<Vec<_>>()
                .join(" ")
        })
    }

    fn write_jsonl(&self, mut out: &mut dyn std::io::Write) -> std::io::Result<()> {
        match &self.format {
            Some(f) => self.history.write_jsonl(&mut out, f.describe),
            None => self
                .history
                .write_jsonl(&mut out, |o: &Op, r: Option<&Ret>| JsonlOp::debug(o, r)),
        }
    }
}

impl<Op: Debug + 'static, Ret: Debug + 'static> StressRun<Op, Ret> {
    /// The run with its operation types erased; `format` writes its history for
    /// `kvsim check-history`.
    pub fn erase(self, format: Option<JsonlFormat<Op, Ret>>) -> StressReport {
        StressReport {
            verdict: self.verdict,
            unknown: self.unknown,
            ok: self.ok,
            failed: self.failed,
            elapsed: self.elapsed,
            key_prefix: self.key_prefix,
            stopped: self.stopped,
            first_error: self.first_error,
            history: Box::new(Erased {
                history: self.history,
                format,
            }),
        }
    }
}

impl StressConfig {
    fn client(
        &self,
        stream: u64,
        prefix: &str,
        stop: &Arc<StopSignal>,
    ) -> Result<TcpKv, AddrError> {
        TcpKv::new(TcpKvConfig {
            servers: self.servers.clone(),
            connect_timeout: self.connect_timeout,
            io_timeout: self.io_timeout,
            seed: SimRng::derive(self.seed, stream).next_u64(),
            key_prefix: prefix.as_bytes().to_vec(),
            stop: Some(Arc::clone(stop)),
        })
    }
}

/// How long a thread waits after an operation with an unknown outcome before it starts
/// the next one (a dead server would otherwise fill the history with failed attempts).
const BACKOFF: Duration = Duration::from_millis(20);

/// The error for a server that did not answer the probe, in the words a user reads:
/// "connection refused (os error 111)", "no reply within 2.0 s (--timeout)".
fn unreachable(server: String, e: KvError, io_timeout: Duration) -> StressError {
    let detail = match e {
        KvError::ServerGone { detail, .. } => {
            // "connect: Connection refused (os error 111)" → "connection refused (…)"
            let d = detail.strip_prefix("connect: ").unwrap_or(&detail);
            let mut chars = d.chars();
            chars.next().map_or(String::new(), |c| {
                c.to_lowercase().chain(chars).collect::<String>()
            })
        }
        KvError::Timeout { .. } => format!(
            "no reply within {:.1} s (--timeout)",
            io_timeout.as_secs_f64()
        ),
        other => other.to_string(),
    };
    StressError::Unreachable { server, detail }
}

/// Setup and the probe, on a connection of their own with no deadline yet (a dead
/// server stops them after the io timeout): the servers answer, are flushed if asked, and
/// the model's `setup` ran.
fn set_up<M: Model>(model: &M, config: &StressConfig, prefix: &str) -> Result<(), StressError> {
    let setup_stop = Arc::new(StopSignal::new(None, config.io_timeout));
    let setup = config.client(u64::MAX, prefix, &setup_stop)?;
    setup
        .probe()
        .map_err(|(server, e)| unreachable(server, e, config.io_timeout))?;
    if config.flush_first {
        block_on_ready(setup.flush_all(None)).map_err(StressError::Setup)?;
    }
    block_on_ready(model.setup(&setup)).map_err(StressError::Setup)?;
    Ok(())
}

/// The run's stop signal: a dead server, or the hard deadline (the run's duration plus
/// the io timeout) that cuts operations still running.
fn run_stop(config: &StressConfig, deadline: Option<Instant>) -> StopSignal {
    StopSignal::new(
        deadline.map(|d| {
            (
                d + config.io_timeout,
                format!(
                    "the run's deadline passed (--duration {:.1} s + --timeout {:.1} s)",
                    config.duration.unwrap_or_default().as_secs_f64(),
                    config.io_timeout.as_secs_f64()
                ),
            )
        }),
        config.io_timeout,
    )
}

/// What the client threads share: the model and the run's settings, the recorder, the
/// stop signal and the first error any of them met.
struct Workers<'a, M: Model> {
    model: &'a M,
    config: &'a StressConfig,
    deadline: Option<Instant>,
    recorder: Recorder<M::Op, M::Ret>,
    stop: &'a StopSignal,
    first_error: std::sync::Mutex<Option<String>>,
}

impl<M: Model> Workers<'_, M> {
    /// One client thread: the model's operations, one after the other, until the run's
    /// bound, the stop signal or a full history; how many ended with an unknown outcome.
    fn run(&self, thread: usize, kv: TcpKv) -> usize {
        let config = self.config;
        let mut rng = SimRng::derive(config.seed, thread as u64);
        let mut process = thread;
        let mut unknown = 0;
        for index in 0.. {
            if config.ops_per_thread.is_some_and(|n| index >= n)
                || self.deadline.is_some_and(|d| Instant::now() >= d)
                || self.stop.reason().is_some()
            {
                break;
            }
            if let (Some(pause), true) = (config.stagger, index > 0) {
                std::thread::sleep(pause);
            }
            let op = self.model.op(thread, index, &mut rng);
            let Some(pending) = self.recorder.try_invoke(process, op.clone()) else {
                break;
            };
            let handle = Recording {
                kv: &kv,
                recorder: &self.recorder,
                pending: &pending,
            };
            let result = block_on_ready(self.model.run(&handle, thread, &op));
            match result {
                Ok(ret) => self.recorder.complete(pending, Outcome::Ok(ret)),
                Err(e) => {
                    self.recorder.complete(pending, Outcome::Unknown);
                    unknown += 1;
                    process += config.threads;
                    let mut first = self.first_error.lock().unwrap_or_else(|p| p.into_inner());
                    if first.is_none() {
                        *first = Some(e.to_string());
                    }
                    drop(first);
                    if self.stop.any_failing() {
                        std::thread::sleep(BACKOFF);
                    }
                }
            }
        }
        unknown
    }
}

/// Runs `model` against `config.servers` from `config.threads` OS threads and checks the
/// history with the model's own property.
pub fn stress<M>(model: &M, config: &StressConfig) -> Result<StressRun<M::Op, M::Ret>, StressError>
where
    M: Model + Sync,
    M::Op: Send,
    M::Ret: Send,
{
    if config.ops_per_thread.is_none() && config.duration.is_none() {
        return Err(StressError::Unbounded);
    }
    if config.threads == 0 {
        return Err(StressError::NoThreads);
    }
    let prefix = config
        .key_prefix
        .clone()
        .unwrap_or_else(|| fresh_prefix(config.seed));
    set_up(model, config, &prefix)?;
    let start = Instant::now();
    let deadline = config.duration.map(|d| start + d);
    let stop = Arc::new(run_stop(config, deadline));
    let clients: Vec<TcpKv> = (0..config.threads)
        .map(|t| config.client(t as u64, &prefix, &stop))
        .collect::<Result<_, _>>()?;
    let workers = Workers {
        model,
        config,
        deadline,
        recorder: Recorder::bounded(config.max_history_bytes.unwrap_or(u64::MAX)),
        stop: &stop,
        first_error: std::sync::Mutex::new(None),
    };
    let unknown: usize = std::thread::scope(|scope| {
        let handles: Vec<_> = clients
            .into_iter()
            .enumerate()
            .map(|(thread, kv)| {
                let workers = &workers;
                scope.spawn(move || workers.run(thread, kv))
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("a stress client thread panicked"))
            .sum()
    });
    let Workers {
        recorder,
        first_error,
        ..
    } = workers;
    let elapsed = start.elapsed();
    let full = recorder.full().then(|| {
        let bytes = config.max_history_bytes.unwrap_or(u64::MAX);
        format!(
            "the history reached its memory bound of {} MiB ({} operations; raise it with \
             --max-memory)",
            bytes >> 20,
            recorder.len()
        )
    });
    let history = recorder.finish();
    let (mut ok, mut failed) = (0, 0);
    for op in &history.ops {
        match op.outcome {
            Outcome::Ok(_) => ok += 1,
            Outcome::Failed => failed += 1,
            Outcome::Unknown => {}
        }
    }
    // A dead server stops the run; the hard deadline only cuts operations still running.
    let stopped = stop.reason();
    let dead = stop.dead_server();
    let first_error = first_error.into_inner().unwrap_or_else(|p| p.into_inner());
    let verdict = match model.check_long_with(&history, &config.check_limits) {
        checked @ Verdict::Violation(_) => checked,
        _ if ok + failed == 0 => Verdict::Unknown(format!(
            "no operation has a known outcome ({unknown} of {} unknown{})",
            history.len(),
            first_error
                .as_ref()
                .map_or(String::new(), |e| format!("; first error: {e}"))
        )),
        _ if dead.is_some() => Verdict::Unknown(format!(
            "the run was cut short: {}; {unknown} of {} outcomes unknown",
            dead.as_deref().unwrap_or_default(),
            history.len()
        )),
        checked if full.is_some() => Verdict::Unknown(format!(
            "the run was cut short: {}; the operations recorded check {checked}",
            full.as_deref().unwrap_or_default()
        )),
        other => other,
    };
    let stopped = stopped.or(full);
    Ok(StressRun {
        history,
        verdict,
        unknown,
        ok,
        failed,
        elapsed,
        key_prefix: prefix,
        stopped,
        first_error,
    })
}
