//! The trace of a simulated run: every step, who took it, what it sent and saw, and every
//! fault, in virtual time.

use crate::command::{Command, Reply};
pub use crate::fault::{ms, Fault, Lane, Pending};
use serde::{Deserialize, Serialize};

/// What happened to a command on its way to the store and back.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Delivery {
    /// Applied; the client saw this reply.
    Replied(Reply),
    /// Lost on the way to the server: not applied; the client timed out.
    RequestLost,
    /// Applied, but the reply was lost; the client timed out.
    ReplyLost(Reply),
    /// The server was down: not applied; the client saw a connection error.
    ServerDown,
    /// A request the `delay` fault held back landed: applied, long after its client timed
    /// out; nobody saw the reply.
    Late(Reply),
}

/// One event of a trace.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Event {
    /// A client invoked an operation (rendered with `{:?}`).
    Invoke {
        /// The operation.
        op: String,
    },
    /// A client's KV command and what came of it.
    Call {
        /// The server it went to.
        shard: usize,
        /// The command.
        command: Command,
        /// What came of it.
        delivery: Delivery,
    },
    /// A client's operation completed (rendered outcome: `ok "a"`, `unknown`, …).
    Return {
        /// The rendered outcome.
        outcome: String,
    },
    /// A structure's mark (e.g. `enter`, `exit`).
    Mark {
        /// The label.
        label: String,
    },
    /// A client went to sleep until this true time.
    Sleep {
        /// For how long, by its own clock.
        ms: u64,
    },
    /// A client's structure did its own work ([`crate::kv::Kv::work`]: a critical
    /// section's body, a value computed) for this long, by its own clock; the client
    /// waits meanwhile, as in a [`Event::Sleep`].
    Work {
        /// For how long, by its own clock.
        ms: u64,
    },
    /// A fault.
    Fault(Fault),
    /// The run stopped: a client exceeded its step bound.
    Livelock {
        /// The client.
        client: usize,
    },
}

/// One step of a trace.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct TraceStep {
    /// Virtual (true) time in milliseconds since the run started.
    pub time_ms: u64,
    /// The client it belongs to (`None` for world events such as most faults).
    pub client: Option<usize>,
    /// What happened.
    pub event: Event,
}

/// A whole trace.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Trace {
    /// The steps, in order.
    pub steps: Vec<TraceStep>,
}

impl Trace {
    /// A 64-bit fingerprint of the trace (FNV-1a over its JSON form): equal traces give
    /// equal hashes on every machine.
    pub fn fingerprint(&self) -> u64 {
        let bytes = serde_json::to_vec(self).expect("a trace always serializes");
        let mut h: u64 = 0xcbf2_9ce4_8422_2325;
        for b in bytes {
            h ^= b as u64;
            h = h.wrapping_mul(0x0000_0100_0000_01b3);
        }
        h
    }
}
