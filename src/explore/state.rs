//! The explicit state of a simulated world, as stateright stores and hashes it: the
//! simulator's [`World`] itself, with each client's [`Recorded`] poll inputs.
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

use super::polls::Polls;
use crate::command::show_bytes;
use crate::history::Outcome;
use crate::sim::EPOCH_MS;
pub(crate) use crate::sim::{Delivered, Halt, Phase, World};
use std::fmt;

/// A client's record in an explored world: what its current operation is and the inputs
/// of every poll of it so far (from which its future is rebuilt).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Recorded<Ret> {
    /// Which alternative of the workload the current (or last) operation is.
    pub(crate) alt: u32,
    /// Every poll of the current operation so far.
    pub(crate) polls: Polls<Ret>,
    /// The client's symmetry class: the lowest index of the clients it is
    /// interchangeable with (itself when there is none). Fixed for a search.
    pub(crate) class: u32,
    /// The current operation's position among the run's operation starts, when it seeds
    /// the operation's random numbers ([`crate::sim::SimConfig::rng_by_start`]).
    pub(crate) ordinal: Option<u32>,
}

impl<Ret> Default for Recorded<Ret> {
    fn default() -> Self {
        Recorded {
            alt: 0,
            polls: Polls::default(),
            class: 0,
            ordinal: None,
        }
    }
}

/// The state of a world under exploration: a stateright `Model::State`. The world's
/// fields are the state's (servers, time, clients, history, faults used, last fault,
/// halt); each client's `rec` holds its `Recorded` poll inputs. Its `Hash` (its
/// identity for stateright) renames cas uniques: see `canon.rs`.
pub type State<Op, Ret> = World<Op, Ret, Recorded<Ret>>;

/// Readable for people (the Explorer shows states with `{:#?}`): time, the stores'
/// live items, each client, and the history so far.
impl<Op: fmt::Debug, Ret: fmt::Debug> fmt::Debug for World<Op, Ret, Recorded<Ret>> {
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
                Phase::TimingOut(t) => write!(f, "timing out until {} ms", t - EPOCH_MS)?,
                Phase::Done => write!(f, "(all done)")?,
                Phase::Crashed => write!(f, "(crashed)")?,
            }
            if !cl.rec.polls.is_empty() {
                write!(f, ", {} replies:", cl.rec.polls.len() - 1)?;
                for p in cl.rec.polls.inputs() {
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
