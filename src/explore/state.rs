//! The explicit state of a simulated world, as stateright stores and hashes it.
//!
//! What is kept: each server's store (and whether it is down), true time, the fault
//! budget spent per kind, the partial history, and per client: where it is (its
//! [`Phase`]), its operation index, its clock offset, when a pause ends, and the inputs of
//! every poll of its current operation (the replies it received, and the time it saw when
//! it read its clock). A client's local variables are *not* kept: its code is
//! deterministic, so they are rebuilt by polling a fresh future of the current operation
//! against the recorded inputs.
//!
//! Canonical where it is cheap: a poll's time is kept only if the client read its clock
//! during it, a pause or server outage that is over is forgotten, and the store drops the
//! time it last saw from its identity. Nothing whose order matters is sorted.

use crate::command::{show_bytes, Command, Reply};
use crate::history::{History, Outcome};
use crate::kv::KvError;
use crate::sim::EPOCH_MS;
use crate::store::Store;
use std::fmt;

/// Where a client is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum Phase {
    /// Between operations (its next one not started).
    Idle,
    /// Parked on a KV command.
    Calling,
    /// Asleep until this true time.
    Sleeping(u64),
    /// All its operations done.
    Done,
    /// Crashed: never runs again.
    Crashed,
}

impl Phase {
    pub(crate) fn finished(self) -> bool {
        matches!(self, Phase::Done | Phase::Crashed)
    }
}

/// The inputs of one poll of a client's operation.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(crate) struct PollInput {
    /// True time and clock offset at the poll, kept only if the client read its clock.
    pub clock: Option<(u64, i64)>,
    /// What came back for the command before the poll (`None`: the first poll, or a
    /// wake-up).
    pub reply: Option<Delivered>,
}

/// What came back for a command (the error texts are rebuilt from the command).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(crate) enum Delivered {
    /// The store's reply.
    Reply(Reply),
    /// The request or the reply was lost: a timeout.
    Timeout,
    /// The server was down.
    Refused(usize),
}

impl Delivered {
    /// What the client sees for `command`.
    pub(crate) fn to_result(&self, command: &Command) -> Result<Reply, KvError> {
        match self {
            Delivered::Reply(r) => Ok(r.clone()),
            Delivered::Timeout => Err(KvError::Timeout {
                command: command.to_string(),
            }),
            Delivered::Refused(shard) => Err(KvError::ServerGone {
                server: format!("s{shard}"),
                command: command.to_string(),
                detail: "connection refused".into(),
            }),
        }
    }
}

/// One client.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(crate) struct ClientState {
    pub phase: Phase,
    pub op_index: u32,
    /// 0 unless a pause is in force.
    pub paused_until: u64,
    /// The clock's current offset (its drift is fixed per client).
    pub offset_ms: i64,
    /// Which alternative of the workload the current (or last) operation is.
    pub alt: u32,
    /// Since when (true time) it has been runnable without being stepped (the
    /// simulator's fairness: [`crate::sim::SimConfig::starve_ms`]).
    pub ready_since: Option<u64>,
    /// The current operation's index in the history.
    pub hist_index: u32,
    /// Every poll of the current operation so far.
    pub polls: Vec<PollInput>,
}

/// One server.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(crate) struct ServerState {
    pub store: Store,
    pub down_until: Option<u64>,
}

/// The kind of the history's trailing run of events.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum Tail {
    /// Invocations.
    Calls,
    /// Returns.
    Returns,
    /// A mark (or nothing yet).
    Marks,
}

/// Why a path ended early.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(crate) enum Halt {
    /// A client exceeded the simulator's step bound of one operation.
    Livelock { client: usize, steps: u32 },
    /// A client awaited something other than its kv handle.
    Foreign { client: usize },
    /// The model's setup failed.
    SetupFailed(String),
    /// Replaying a client's recorded inputs did not give the same requests: its code
    /// depends on something other than its kv handle.
    Nondeterministic { client: usize },
}

/// The state of a world under exploration: a stateright `Model::State`. Its `Hash`
/// (its identity for stateright) renames cas uniques: see `canon.rs`.
#[derive(Clone, PartialEq, Eq)]
pub struct State<Op, Ret> {
    pub(crate) servers: Vec<ServerState>,
    pub(crate) now: u64,
    pub(crate) clients: Vec<ClientState>,
    pub(crate) history: History<Op, Ret>,
    pub(crate) seq: u64,
    /// What the last events of the history are (see `Bridge::event`).
    pub(crate) tail: Tail,
    /// The first event of the trailing run of invocations or returns.
    pub(crate) tail_start: u64,
    pub(crate) faults_used: Vec<u32>,
    /// The last fault so far: its event position, its true time, and the true time its
    /// effect ends (a pause's end, a downed server's return; the latest of all faults).
    pub(crate) last_fault: Option<(u64, u64, u64)>,
    pub(crate) halt: Option<Halt>,
}

impl<Op, Ret> State<Op, Ret> {
    /// Every client is done or crashed, or the path ended early: the history is final.
    pub(crate) fn is_final(&self) -> bool {
        self.halt.is_some() || self.clients.iter().all(|c| c.phase.finished())
    }

    /// Every client completed every operation.
    pub(crate) fn all_done(&self) -> bool {
        self.halt.is_none() && self.clients.iter().all(|c| c.phase == Phase::Done)
    }
}

/// Readable for people (the Explorer shows states with `{:#?}`): time, the stores'
/// live items, each client, and the history so far.
impl<Op: fmt::Debug, Ret: fmt::Debug> fmt::Debug for State<Op, Ret> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "time {} ms", self.now - EPOCH_MS)?;
        for (s, server) in self.servers.iter().enumerate() {
            write!(f, "server {s}:")?;
            if let Some(t) = server.down_until {
                write!(f, " down until {} ms", t - EPOCH_MS)?;
            }
            let keys = server.store.live_keys(self.now);
            if keys.is_empty() {
                write!(f, " (empty)")?;
            }
            for key in keys {
                if let Some(item) = server.store.peek(self.now, &key) {
                    write!(f, " {}={}", show_bytes(&key), show_bytes(&item.data))?;
                }
            }
            writeln!(f)?;
        }
        for (c, cl) in self.clients.iter().enumerate() {
            write!(f, "C{c}: op {} ", cl.op_index)?;
            match cl.phase {
                Phase::Idle => write!(f, "not started")?,
                Phase::Calling => write!(f, "waiting for a reply")?,
                Phase::Sleeping(t) => write!(f, "asleep until {} ms", t - EPOCH_MS)?,
                Phase::Done => write!(f, "(all done)")?,
                Phase::Crashed => write!(f, "(crashed)")?,
            }
            if !cl.polls.is_empty() {
                write!(f, ", {} replies:", cl.polls.len() - 1)?;
                for p in &cl.polls {
                    match &p.reply {
                        Some(Delivered::Reply(r)) => write!(f, " {}", first_line(&r.to_string()))?,
                        Some(Delivered::Timeout) => write!(f, " timeout")?,
                        Some(Delivered::Refused(_)) => write!(f, " refused")?,
                        None => {}
                    }
                }
            }
            if cl.paused_until > 0 {
                write!(f, ", paused until {} ms", cl.paused_until - EPOCH_MS)?;
            }
            writeln!(f)?;
        }
        writeln!(f, "history:")?;
        for op in &self.history.ops {
            let outcome = match (&op.outcome, op.ret) {
                (_, None) => "pending".to_string(),
                (Outcome::Ok(r), _) => format!("{r:?}"),
                (Outcome::Failed, _) => "failed".to_string(),
                (Outcome::Unknown, _) => "unknown".to_string(),
            };
            writeln!(f, "  C{} {:?} -> {outcome}", op.client, op.op)?;
        }
        if let Some(h) = &self.halt {
            writeln!(f, "halted: {h:?}")?;
        }
        Ok(())
    }
}

fn first_line(s: &str) -> String {
    s.lines().next().unwrap_or_default().to_string()
}
