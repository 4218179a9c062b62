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
//! What is not here yet: the `kvsim stress TARGET` command, which needs the model
//! registry to name models.

use super::client::{AddrError, TcpKv, TcpKvConfig};
use super::recorder::{Pending, Recorder};
use crate::command::{Command, Reply};
use crate::history::{History, Outcome};
use crate::kv::{block_on_ready, Kv, KvError};
use crate::model::Model;
use crate::rng::SimRng;
use crate::verdict::Verdict;
use std::time::{Duration, Instant};

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
    /// Send `flush_all` to every server before the model's setup (a model's keys may be
    /// left over from an earlier run).
    pub flush_first: bool,
}

impl StressConfig {
    /// `threads` clients × `ops` operations against `servers`, seed 0, 1 s to connect,
    /// 2 s per reply.
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
    /// How long the operations ran.
    pub elapsed: Duration,
}

impl StressConfig {
    fn client(&self, stream: u64) -> Result<TcpKv, AddrError> {
        TcpKv::new(TcpKvConfig {
            servers: self.servers.clone(),
            connect_timeout: self.connect_timeout,
            io_timeout: self.io_timeout,
            seed: SimRng::derive(self.seed, stream).next_u64(),
        })
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
    let setup = config.client(u64::MAX)?;
    if config.flush_first {
        block_on_ready(setup.flush_all(None)).map_err(StressError::Setup)?;
    }
    block_on_ready(model.setup(&setup)).map_err(StressError::Setup)?;
    drop(setup);
    let clients: Vec<TcpKv> = (0..config.threads)
        .map(|t| config.client(t as u64))
        .collect::<Result<_, _>>()?;
    let recorder: Recorder<M::Op, M::Ret> = Recorder::new();
    let start = Instant::now();
    let deadline = config.duration.map(|d| start + d);
    let unknown: usize = std::thread::scope(|scope| {
        let handles: Vec<_> = clients
            .into_iter()
            .enumerate()
            .map(|(thread, kv)| {
                let recorder = &recorder;
                scope.spawn(move || {
                    let mut rng = SimRng::derive(config.seed, thread as u64);
                    let mut process = thread;
                    let mut unknown = 0;
                    for index in 0.. {
                        if config.ops_per_thread.is_some_and(|n| index >= n)
                            || deadline.is_some_and(|d| Instant::now() >= d)
                        {
                            break;
                        }
                        if let (Some(pause), true) = (config.stagger, index > 0) {
                            std::thread::sleep(pause);
                        }
                        let op = model.op(thread, index, &mut rng);
                        let pending = recorder.invoke(process, op.clone());
                        let handle = Recording {
                            kv: &kv,
                            recorder,
                            pending: &pending,
                        };
                        let result = block_on_ready(model.run(&handle, thread, &op));
                        match result {
                            Ok(ret) => recorder.complete(pending, Outcome::Ok(ret)),
                            Err(_) => {
                                recorder.complete(pending, Outcome::Unknown);
                                unknown += 1;
                                process += config.threads;
                            }
                        }
                    }
                    unknown
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("a stress client thread panicked"))
            .sum()
    });
    let elapsed = start.elapsed();
    let history = recorder.finish();
    let verdict = model.check(&history);
    Ok(StressRun {
        history,
        verdict,
        unknown,
        elapsed,
    })
}
