//! The trace of a simulated run: every step, who took it, what it sent and saw, and every
//! fault, in virtual time.

use crate::command::{show_bytes, Command, Reply};
use serde::{Deserialize, Serialize};
use std::fmt;

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

/// A fault the world injected (or the store's own LRU eviction).
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Fault {
    /// The adversary evicted a key.
    Evict {
        /// The server.
        shard: usize,
        /// The key.
        key: Vec<u8>,
    },
    /// The store evicted a key to make room (memory limit).
    LruEvict {
        /// The server.
        shard: usize,
        /// The key.
        key: Vec<u8>,
    },
    /// Virtual time jumped forward.
    AdvanceTime {
        /// Milliseconds skipped.
        by_ms: u64,
    },
    /// A client's clock jumped.
    ClockJump {
        /// The client.
        client: usize,
        /// By how much (may be negative).
        by_ms: i64,
    },
    /// A server restarted.
    Restart {
        /// The server.
        shard: usize,
        /// Whether its data survived (persistent store).
        persistent: bool,
    },
    /// A client crashed; its operation's outcome is unknown.
    Crash {
        /// The client.
        client: usize,
    },
    /// A client stalled.
    Pause {
        /// The client.
        client: usize,
        /// For how long (true time).
        ms: u64,
    },
    /// A client's request was held back: it lands this many ms later, and the client
    /// times out meanwhile.
    Delay {
        /// The client.
        client: usize,
        /// The request.
        command: Command,
        /// How late it lands (true time).
        ms: u64,
    },
    /// A server of the cluster went down (its data is lost).
    ShardDown {
        /// The server.
        shard: usize,
        /// For how long.
        ms: u64,
    },
    /// A server came back (empty).
    ShardUp {
        /// The server.
        shard: usize,
    },
}

impl Fault {
    /// The kind of fault this event belongs to (`None` for a server coming back, which
    /// only ends a `shard-fail`).
    pub fn kind(&self) -> Option<crate::scenario::FaultKind> {
        use crate::scenario::FaultKind as K;
        Some(match self {
            Fault::Evict { .. } => K::Evict,
            Fault::LruEvict { .. } => K::Lru,
            Fault::AdvanceTime { .. } => K::Expire,
            Fault::ClockJump { .. } => K::Skew,
            Fault::Restart { .. } => K::Restart,
            Fault::Crash { .. } => K::Crash,
            Fault::Pause { .. } => K::Pause,
            Fault::Delay { .. } => K::Delay,
            Fault::ShardDown { .. } => K::ShardFail,
            Fault::ShardUp { .. } => return None,
        })
    }
}

impl fmt::Display for Fault {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Fault::Evict { shard, key } => write!(f, "evict {}{}", show_bytes(key), at(*shard)),
            Fault::LruEvict { shard, key } => {
                write!(f, "lru evicts {}{}", show_bytes(key), at(*shard))
            }
            Fault::AdvanceTime { by_ms } => write!(f, "time +{}", ms(*by_ms)),
            Fault::ClockJump { client, by_ms } => {
                let sign = if *by_ms < 0 { "-" } else { "+" };
                write!(f, "C{client} clock {sign}{}", ms(by_ms.unsigned_abs()))
            }
            Fault::Restart { shard, persistent } => write!(
                f,
                "restart server{}{}",
                at(*shard),
                if *persistent {
                    " (data kept)"
                } else {
                    " (data lost)"
                }
            ),
            Fault::Crash { client } => write!(f, "crash C{client}"),
            Fault::Pause { client, ms: d } => write!(f, "pause C{client} for {}", ms(*d)),
            Fault::Delay {
                client,
                command,
                ms: d,
            } => write!(f, "delay C{client}'s {command} by {}", ms(*d)),
            Fault::ShardDown { shard, ms: d } => write!(f, "server {shard} down for {}", ms(*d)),
            Fault::ShardUp { shard } => write!(f, "server {shard} up (empty)"),
        }
    }
}

fn at(shard: usize) -> String {
    if shard == 0 {
        String::new()
    } else {
        format!(" @s{shard}")
    }
}

/// Milliseconds for people: `750 ms`, `2 s`, `2.5 s`.
pub fn ms(ms: u64) -> String {
    if ms < 1000 {
        format!("{ms} ms")
    } else if ms.is_multiple_of(1000) {
        format!("{} s", ms / 1000)
    } else {
        format!("{:.3} s", ms as f64 / 1000.0)
    }
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
