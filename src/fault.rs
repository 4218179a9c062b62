//! The fault vocabulary, in one place: the kinds of fault ([`FaultKind`], the CLI's
//! `--faults` names), the fault the world applies and the trace records ([`Fault`], one
//! type for both), its text (the trace's, the Explorer's label, the diagram's lane), and
//! what `kvsim serve` injects for a kind ([`WireFault`], drawn from the kind exhaustively).
//!
//! Every fact about a kind is a `match` here without a catch-all arm, so that a new kind is
//! an edit the compiler leads through: this file, the world's enumeration and application
//! (`sim/world/faults.rs`), the state hash if the world gains state (`explore/canon.rs`),
//! and its knob (`sim/config.rs`).

use crate::command::{show_bytes, Command};
use crate::rng::SimRng;
use serde::{Deserialize, Serialize};
use std::fmt;

/// A kind of fault the simulator can inject. The names are the CLI's `--faults` names.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum FaultKind {
    /// `evict`: the adversary evicts any key at any step.
    Evict,
    /// `lru`: a small memory limit; the store evicts least-recently-used items.
    Lru,
    /// `expire`: virtual time jumps forward (items expire at the server's 1 s granularity).
    Expire,
    /// `skew`: client clocks are offset, drift and jump.
    Skew,
    /// `restart`: the server restarts; volatile data is lost.
    Restart,
    /// `crash`: a client crashes mid-operation; its outcome is unknown forever.
    Crash,
    /// `lose`: a request (not applied) or a reply (applied) is lost; the client times out.
    Lose,
    /// `pause`: a client stalls for a long while (e.g. past a lock's expiry).
    Pause,
    /// `shard-fail`: one server of a sharded cluster fails (its data is lost, it answers
    /// with errors until it comes back).
    ShardFail,
    /// `delay`: a request stays in flight and reaches the server late, after its client
    /// timed out and moved on (possibly during the client's next operation).
    Delay,
}

impl FaultKind {
    /// Every fault kind, in the CLI's order (the replay token's fault mask follows it:
    /// append a new kind at the end so that old tokens keep decoding).
    pub const ALL: [FaultKind; 10] = [
        FaultKind::Evict,
        FaultKind::Lru,
        FaultKind::Expire,
        FaultKind::Skew,
        FaultKind::Restart,
        FaultKind::Crash,
        FaultKind::Lose,
        FaultKind::Pause,
        FaultKind::ShardFail,
        FaultKind::Delay,
    ];

    /// The CLI name.
    pub fn name(self) -> &'static str {
        match self {
            FaultKind::Evict => "evict",
            FaultKind::Lru => "lru",
            FaultKind::Expire => "expire",
            FaultKind::Skew => "skew",
            FaultKind::Restart => "restart",
            FaultKind::Crash => "crash",
            FaultKind::Lose => "lose",
            FaultKind::Pause => "pause",
            FaultKind::ShardFail => "shard-fail",
            FaultKind::Delay => "delay",
        }
    }

    /// Parses a CLI name.
    pub fn parse(name: &str) -> Result<FaultKind, String> {
        FaultKind::ALL
            .iter()
            .copied()
            .find(|k| k.name() == name)
            .ok_or_else(|| {
                format!(
                    "unknown fault {name:?}: expected one of {}, or none",
                    FaultKind::ALL.map(|k| k.name()).join(", ")
                )
            })
    }

    /// What the kind does in a run even when no fault event may happen (a shrunk run with
    /// no fault budget), as the report's header says it: `lru` keeps its memory limit and
    /// `skew` its skewed clocks; the others do nothing then.
    pub fn standing(self) -> Option<&'static str> {
        match self {
            FaultKind::Lru => Some("a memory limit"),
            FaultKind::Skew => Some("skewed clocks"),
            FaultKind::Evict
            | FaultKind::Expire
            | FaultKind::Restart
            | FaultKind::Crash
            | FaultKind::Lose
            | FaultKind::Pause
            | FaultKind::ShardFail
            | FaultKind::Delay => None,
        }
    }

    /// What `kvsim serve` injects for this kind before a request that names `keys`
    /// (holding a reply or a request `hold_ms`, moving the clock `jump_secs`; `None` for a kind the server cannot inject, or an `evict` with no
    /// key). The draws from `rng` are part of `kvsim serve --seed`'s behaviour.
    pub(crate) fn on_the_wire(
        self,
        hold_ms: u64,
        jump_secs: u64,
        rng: &mut SimRng,
        keys: &[&[u8]],
    ) -> Option<WireFault> {
        match self {
            FaultKind::Evict => {
                let key = keys.get(rng.below(keys.len().max(1) as u64) as usize)?;
                Some(WireFault::Evict(key.to_vec()))
            }
            FaultKind::Expire => Some(WireFault::Clock(jump_secs)),
            FaultKind::Restart => Some(WireFault::Restart),
            FaultKind::Lose if rng.chance(0.5) => Some(WireFault::DropRequest),
            FaultKind::Lose => Some(WireFault::DropReply),
            FaultKind::Delay => Some(WireFault::DelayReply(hold_ms)),
            FaultKind::Pause => Some(WireFault::Pause(hold_ms)),
            // A client crashes and skews its own clock; `--memory-limit` is the LRU; the
            // server is one shard.
            FaultKind::Crash | FaultKind::Skew | FaultKind::Lru | FaultKind::ShardFail => None,
        }
    }
}

/// A fault the world applies, as the trace records it (or the store's own LRU eviction,
/// or a failed server coming back, which the world records but nobody chooses).
///
/// The world's enumeration gives each fault with what it will do (how far time jumps,
/// how long a server stays down, …): a `Fault<Pending>`. Only a `delay`'s request is
/// known once the fault is applied (the client's driver holds it): the trace records the
/// applied fault, a `Fault` (`Fault<Command>`), the same value with the request in.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Fault<R = Command> {
    /// The adversary evicted a key.
    Evict {
        /// The server.
        shard: usize,
        /// The key.
        key: Vec<u8>,
    },
    /// The store evicted a key to make room (memory limit) in the key's slab class.
    LruEvict {
        /// The server.
        shard: usize,
        /// The key.
        key: Vec<u8>,
        /// The slab class it was evicted from (from 1; 0 in traces written before kvsim
        /// named it), the class the neighbour's writes pressed.
        #[serde(default)]
        class: usize,
        /// That class's chunk size in bytes (0 when `class` is).
        #[serde(default)]
        chunk: usize,
    },
    /// Virtual time jumped forward (to the next expiry, or by a second).
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
    /// A client's pending request (`reply`: false) or its reply (`reply`: true) was lost;
    /// the client times out. The trace records it as the call's delivery
    /// ([`crate::sim::Delivery::RequestLost`], [`crate::sim::Delivery::ReplyLost`]).
    Lose {
        /// The client.
        client: usize,
        /// Whether the reply (the request was applied) rather than the request was lost.
        reply: bool,
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
        /// The request ([`Pending`] until the fault is applied).
        command: R,
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

/// A `delay`'s request while the fault is only chosen: the client's pending request,
/// which the world asks the client's driver for when it applies the fault.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Pending;

/// Whose lane of a diagram a fault marks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Lane {
    /// A server's.
    Server(usize),
    /// A client's.
    Client(usize),
}

impl<R> Fault<R> {
    /// The same fault with a `delay`'s request `request(its request)`.
    pub fn map_request<S>(self, request: impl FnOnce(R) -> S) -> Fault<S> {
        match self {
            Fault::Evict { shard, key } => Fault::Evict { shard, key },
            Fault::LruEvict {
                shard,
                key,
                class,
                chunk,
            } => Fault::LruEvict {
                shard,
                key,
                class,
                chunk,
            },
            Fault::AdvanceTime { by_ms } => Fault::AdvanceTime { by_ms },
            Fault::ClockJump { client, by_ms } => Fault::ClockJump { client, by_ms },
            Fault::Restart { shard, persistent } => Fault::Restart { shard, persistent },
            Fault::Crash { client } => Fault::Crash { client },
            Fault::Lose { client, reply } => Fault::Lose { client, reply },
            Fault::Pause { client, ms } => Fault::Pause { client, ms },
            Fault::Delay {
                client,
                command,
                ms,
            } => Fault::Delay {
                client,
                command: request(command),
                ms,
            },
            Fault::ShardDown { shard, ms } => Fault::ShardDown { shard, ms },
            Fault::ShardUp { shard } => Fault::ShardUp { shard },
        }
    }

    /// The kind of fault this event belongs to (`None` for a server coming back, which
    /// only ends a `shard-fail`).
    pub fn kind(&self) -> Option<FaultKind> {
        use FaultKind as K;
        Some(match self {
            Fault::Evict { .. } => K::Evict,
            Fault::LruEvict { .. } => K::Lru,
            Fault::AdvanceTime { .. } => K::Expire,
            Fault::ClockJump { .. } => K::Skew,
            Fault::Restart { .. } => K::Restart,
            Fault::Crash { .. } => K::Crash,
            Fault::Lose { .. } => K::Lose,
            Fault::Pause { .. } => K::Pause,
            Fault::Delay { .. } => K::Delay,
            Fault::ShardDown { .. } => K::ShardFail,
            Fault::ShardUp { .. } => return None,
        })
    }

    /// Whether the world injected it (an LRU eviction follows from the memory limit, and
    /// a server coming back ends a fault: neither is one).
    pub fn injected(&self) -> bool {
        match self {
            Fault::LruEvict { .. } | Fault::ShardUp { .. } => false,
            Fault::Evict { .. }
            | Fault::AdvanceTime { .. }
            | Fault::ClockJump { .. }
            | Fault::Restart { .. }
            | Fault::Crash { .. }
            | Fault::Lose { .. }
            | Fault::Pause { .. }
            | Fault::Delay { .. }
            | Fault::ShardDown { .. } => true,
        }
    }

    /// How long its effect lasts after it is applied, in true ms (0: it is over at once).
    pub fn lasts_ms(&self) -> u64 {
        match self {
            Fault::Pause { ms, .. } | Fault::Delay { ms, .. } | Fault::ShardDown { ms, .. } => *ms,
            Fault::Evict { .. }
            | Fault::LruEvict { .. }
            | Fault::AdvanceTime { .. }
            | Fault::ClockJump { .. }
            | Fault::Restart { .. }
            | Fault::Crash { .. }
            | Fault::Lose { .. }
            | Fault::ShardUp { .. } => 0,
        }
    }

    /// The client it acts on, if it acts on one (tests rename clients with it).
    #[cfg(test)]
    pub(crate) fn client_mut(&mut self) -> Option<&mut usize> {
        match self {
            Fault::Crash { client }
            | Fault::Pause { client, .. }
            | Fault::ClockJump { client, .. }
            | Fault::Lose { client, .. }
            | Fault::Delay { client, .. } => Some(client),
            Fault::Evict { .. }
            | Fault::LruEvict { .. }
            | Fault::AdvanceTime { .. }
            | Fault::Restart { .. }
            | Fault::ShardDown { .. }
            | Fault::ShardUp { .. } => None,
        }
    }

    /// The lane of a diagram it marks.
    pub fn lane(&self) -> Lane {
        match self {
            Fault::Evict { shard, .. }
            | Fault::LruEvict { shard, .. }
            | Fault::Restart { shard, .. }
            | Fault::ShardDown { shard, .. }
            | Fault::ShardUp { shard } => Lane::Server(*shard),
            Fault::Crash { client }
            | Fault::Pause { client, .. }
            | Fault::ClockJump { client, .. }
            | Fault::Lose { client, .. }
            | Fault::Delay { client, .. } => Lane::Client(*client),
            Fault::AdvanceTime { .. } => Lane::Server(0),
        }
    }
}

impl Fault<Pending> {
    /// The Explorer's label of this fault as a step to take: the trace's text, or, for a
    /// fault on a client's pending request, what `request(client)` says that request is.
    pub fn label(&self, request: impl Fn(usize) -> String) -> String {
        match self {
            Fault::Lose {
                client,
                reply: false,
            } => format!("C{client}: {} ✗ request lost (timeout)", request(*client)),
            Fault::Lose {
                client,
                reply: true,
            } => format!(
                "C{client}: {} ✗ reply lost (applied; timeout)",
                request(*client)
            ),
            Fault::Delay { client, ms: d, .. } => format!(
                "delay C{client}'s {} by {} (it lands late; C{client} times out)",
                request(*client),
                ms(*d)
            ),
            Fault::Evict { .. }
            | Fault::LruEvict { .. }
            | Fault::AdvanceTime { .. }
            | Fault::ClockJump { .. }
            | Fault::Restart { .. }
            | Fault::Crash { .. }
            | Fault::Pause { .. }
            | Fault::ShardDown { .. }
            | Fault::ShardUp { .. } => self.to_string(),
        }
    }
}

/// The trace's text (the reports, `kvsim replay` and the Explorer print it).
impl<R: fmt::Display> fmt::Display for Fault<R> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Fault::Evict { shard, key } => write!(f, "evict {}{}", show_bytes(key), at(*shard)),
            Fault::LruEvict {
                shard,
                key,
                class,
                chunk,
            } => {
                write!(f, "lru evicts {}", show_bytes(key))?;
                if *class > 0 {
                    write!(f, " from slab class {class} ({chunk}-byte chunks)")?;
                }
                write!(f, "{}", at(*shard))
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
            Fault::Lose {
                client,
                reply: false,
            } => write!(f, "lose C{client}'s request"),
            Fault::Lose {
                client,
                reply: true,
            } => write!(f, "lose C{client}'s reply"),
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

/// A chosen `delay`'s request, in words (the Explorer names the request itself).
impl fmt::Display for Pending {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "request")
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

/// One fault `kvsim serve` injects, as the control channel names it and the trace shows
/// it. `kvsim serve --faults` draws one from a [`FaultKind`] (`FaultKind::on_the_wire`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum WireFault {
    /// Remove a key now, as memory pressure would.
    Evict(Vec<u8>),
    /// Restart the server: volatile data is lost and every client connection closed.
    Restart,
    /// The connection's next request is not applied, and the connection is closed.
    DropRequest,
    /// The connection's next request is applied, then the connection is closed before
    /// its reply is sent.
    DropReply,
    /// The connection's next reply is held this many milliseconds.
    DelayReply(u64),
    /// The connection's next request waits this many milliseconds before it is applied.
    Pause(u64),
    /// The server clock jumps forward this many seconds.
    Clock(u64),
}

impl WireFault {
    /// Whether the fault acts on one connection (and so waits for its next request).
    pub fn is_per_connection(&self) -> bool {
        match self {
            WireFault::DropRequest
            | WireFault::DropReply
            | WireFault::DelayReply(_)
            | WireFault::Pause(_) => true,
            WireFault::Evict(_) | WireFault::Restart | WireFault::Clock(_) => false,
        }
    }
}

impl fmt::Display for WireFault {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            WireFault::Evict(key) => write!(f, "evict {}", String::from_utf8_lossy(key)),
            WireFault::Restart => write!(f, "restart"),
            WireFault::DropRequest => write!(f, "drop-request"),
            WireFault::DropReply => write!(f, "drop-reply"),
            WireFault::DelayReply(ms) => write!(f, "delay-reply {ms} ms"),
            WireFault::Pause(ms) => write!(f, "pause {ms} ms"),
            WireFault::Clock(secs) => write!(f, "clock +{secs} s"),
        }
    }
}

/// The fault kinds `kvsim serve --faults` draws from, in the order its messages list
/// them: exactly the kinds `FaultKind::on_the_wire` injects (a test checks it).
pub const SERVE_FAULTS: [FaultKind; 6] = [
    FaultKind::Evict,
    FaultKind::Expire,
    FaultKind::Restart,
    FaultKind::Lose,
    FaultKind::Delay,
    FaultKind::Pause,
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fault_names_parse() {
        for k in FaultKind::ALL {
            assert_eq!(FaultKind::parse(k.name()), Ok(k));
        }
        assert_eq!(
            FaultKind::parse("bogus").unwrap_err(),
            "unknown fault \"bogus\": expected one of evict, lru, expire, skew, restart, crash, lose, pause, shard-fail, delay, or none"
        );
    }

    #[test]
    fn the_served_kinds_are_the_kinds_the_wire_injects() {
        for k in FaultKind::ALL {
            let mut rng = SimRng::new(1);
            let injects = k.on_the_wire(1, 1, &mut rng, &[b"k".as_slice()]).is_some();
            assert_eq!(injects, SERVE_FAULTS.contains(&k), "{}", k.name());
        }
    }
}
