//! The knob table: every knob of a simulated run ([`SimConfig`]'s fields), described once
//! (its name, its bound in replay tokens, its default, its unit, the token layout that
//! first carried it) with how each output shows it. The token codec
//! ([`super::Token`]), the report's header ([`header`]), the JSON rows of `kvsim check
//! --json` and `kvsim list --json` ([`json_row`]) and `kvsim list`'s notes ([`list_notes`])
//! iterate [`KNOBS`] instead of listing knobs by hand.
//!
//! A new knob: its [`SimConfig`] field and default (`SimConfig::new`, and
//! `SimConfig::from_scenario` if a scenario sets it), then one row here (appended as a
//! trailing token group, with a new token version, [`TOKEN_VERSION`], beside the table:
//! see [`super::Token`]'s Versions).

use super::config::{SimConfig, DEFAULT_DELAY_MS};
use super::neighbour::{describe_classes, neighbour_classes};
use super::token::bytes::{self, Reader, TokenError, Writer};
use super::trace::ms;
use crate::scenario::FaultKind;
use crate::store::geometry::Geometry;
use serde_json::{json, Map, Value};

/// The replay token version [`super::Token::encode`] writes. A new knob bumps it, beside its
/// row (see [`super::Token`]'s docs: Versions), so that a token never reads with a knob it lacks
/// silently at a default it was not made with.
pub(crate) const TOKEN_VERSION: u8 = 5;

/// The token layout that first carried a knob (a layout that predates it reads the knob
/// at its default, which is how its runs were made).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Since {
    /// Version 2 as kvsim `d69feb3` first wrote it.
    V2,
    /// Version 2 from kvsim `f42016c` (the chosen workload, `rng_by_start`).
    V2Workload,
    /// Version 2 from kvsim `397aadd` (the first trailing group: `timeout_ms`, `delay_ms`).
    V2Timeouts,
    /// Version 2 from kvsim `c517599` (`retries`, appended to the first trailing group).
    V2Retries,
    /// Version 2, the second trailing group (`neighbour_bytes`).
    V2Neighbour,
    /// Version 2, the third trailing group (`work_ms`).
    V2Work,
    /// Version 5, the fourth trailing group (`neighbour_max_bytes`, `geometry`).
    V5Geometry,
}

/// Where a token carries a knob.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Place {
    /// Before the seed, in table order.
    Head,
    /// In a number another knob writes (`rng_by_start`, in `persistent`'s).
    Shared,
    /// After the choices, in trailing group `n` (1, 2, 3), written when a knob of it or
    /// of a later group is not at its default.
    Trailing(u8),
    /// Not carried (`record_trace`: a replay records its trace).
    None,
}

/// The JSON rows that show a knob.
pub mod rows {
    /// A row of `kvsim check --json`'s `results`.
    pub const CHECK: u8 = 1;
    /// A scenario of `kvsim list --json`.
    pub const LIST: u8 = 2;
}

/// A line of text about a knob, at a position among the others (`None`: nothing to say
/// for this run).
pub(crate) type Text = (u8, fn(&SimConfig) -> Option<String>);

/// One knob of a run.
pub struct Knob {
    /// Its [`SimConfig`] field.
    pub name: &'static str,
    /// What token errors call it (`fault budget`, `servers`, `step_ms`).
    pub label: &'static str,
    /// Its unit (`ms`, `B`, `ppm`; empty for counts, flags and lists).
    pub unit: &'static str,
    /// The largest value a replay token may carry (`None`: no single number).
    pub max: Option<u64>,
    /// Its default, for people.
    pub default: &'static str,
    /// The token layout that first carried it.
    pub since: Since,
    /// Its key in JSON rows, and which rows show it ([`rows`]).
    pub key: (&'static str, u8),
    pub(crate) json: fn(&SimConfig) -> Value,
    pub(crate) header: Option<Text>,
    pub(crate) list: Option<Text>,
    pub(crate) place: Place,
    pub(crate) write: fn(&SimConfig, &mut Writer),
    pub(crate) read: fn(&Knob, &mut Reader, &mut SimConfig, bool) -> Result<(), TokenError>,
    pub(crate) at_default: fn(&SimConfig) -> bool,
}

impl Knob {
    /// A number within [`Knob::max`], named by [`Knob::label`].
    fn num(&self, r: &mut Reader) -> Result<u64, TokenError> {
        r.bounded(self.label, self.max.expect("a numeric knob has a bound"))
    }
}

/// The fields every row shares unless it says otherwise.
const BASE: Knob = Knob {
    name: "",
    label: "",
    unit: "",
    max: None,
    default: "",
    since: Since::V2,
    key: ("", 0),
    json: |_| Value::Null,
    header: None,
    list: None,
    place: Place::Head,
    write: |_, _| {},
    read: |_, _, _, _| Ok(()),
    at_default: |_| true,
};

/// Every knob, in the order a replay token carries them.
pub static KNOBS: &[Knob] = &[
    Knob {
        name: "clients",
        label: "clients",
        max: Some(bytes::MAX_CLIENTS),
        default: "the scenario's",
        key: ("clients", rows::CHECK | rows::LIST),
        json: |c| json!(c.clients),
        write: |c, w| w.num(c.clients as u64),
        read: |k, r, c, _| {
            c.clients = k.num(r)? as usize;
            Ok(())
        },
        ..BASE
    },
    Knob {
        name: "ops",
        label: "ops",
        max: Some(bytes::MAX_OPS),
        default: "the scenario's",
        key: ("ops", rows::CHECK | rows::LIST),
        json: |c| json!(c.ops),
        write: |c, w| w.num(c.ops as u64),
        read: |k, r, c, _| {
            c.ops = k.num(r)? as usize;
            Ok(())
        },
        ..BASE
    },
    Knob {
        name: "client_ops",
        default: "every client runs all its operations",
        write: |c, w| w.client_ops(&c.client_ops),
        read: |_, r, c, _| {
            c.client_ops = r.client_ops()?;
            Ok(())
        },
        ..BASE
    },
    Knob {
        name: "workload",
        default: "drawn from the seed",
        since: Since::V2Workload,
        write: |c, w| w.workload(&c.workload),
        read: |_, r, c, _| {
            c.workload = r.workload()?;
            Ok(())
        },
        ..BASE
    },
    Knob {
        name: "faults",
        default: "the scenario's",
        key: ("faults", rows::CHECK | rows::LIST),
        json: |c| json!(c.faults.to_string()),
        write: |c, w| w.faults(&c.faults),
        read: |_, r, c, _| {
            c.faults = r.faults()?;
            Ok(())
        },
        ..BASE
    },
    Knob {
        name: "fault_budget",
        label: "fault budget",
        max: Some(bytes::MAX_FAULT_BUDGET),
        default: "the scenario's",
        key: ("fault_budget", rows::CHECK | rows::LIST),
        json: |c| json!(c.fault_budget),
        write: |c, w| w.num(c.fault_budget as u64),
        read: |k, r, c, _| {
            c.fault_budget = k.num(r)? as u32;
            Ok(())
        },
        ..BASE
    },
    Knob {
        name: "fault_probability",
        label: "fault probability",
        default: "0.05",
        key: ("fault_rate", rows::CHECK),
        json: |c| json!(c.fault_probability),
        // Only where a fault may be injected: beside "faults none" a rate contradicts it.
        header: Some((0, |c| {
            (!c.faults.is_empty() && c.fault_budget > 0)
                .then(|| format!("fault rate {}", c.fault_probability))
        })),
        write: |c, w| w.probability(c.fault_probability),
        read: |_, r, c, _| {
            c.fault_probability = r.probability()?;
            Ok(())
        },
        ..BASE
    },
    Knob {
        name: "strategy",
        default: "the scenario's",
        key: ("strategy", rows::CHECK | rows::LIST),
        json: |c| json!(c.strategy.to_string()),
        write: |c, w| w.strategy(c.strategy),
        read: |_, r, c, _| {
            c.strategy = r.strategy()?;
            Ok(())
        },
        ..BASE
    },
    Knob {
        name: "memory_limit",
        label: "memory limit",
        unit: "B",
        max: Some(bytes::MAX_MEMORY),
        default: "the scenario's (with `lru`, 2048 when it gives none)",
        key: ("memory_limit", rows::CHECK | rows::LIST),
        json: |c| json!(c.memory_limit),
        header: Some((2, |c| c.memory_limit.map(|m| format!("memory {m} B")))),
        list: Some((4, |c| {
            let m = c.memory_limit?;
            let neighbour = match (c.neighbour_bytes, c.neighbour_max_bytes) {
                (0, _) => String::new(),
                (lo, hi) if hi > lo => format!(", a neighbour writes {lo}–{hi} B a call"),
                (b, _) => format!(", a neighbour writes {b} B a call"),
            };
            Some(format!(" (memory {m} B{neighbour})"))
        })),
        write: |c, w| w.num(c.memory_limit.map_or(0, |m| m as u64 + 1)),
        read: |k, r, c, _| {
            c.memory_limit = match r.bounded(k.label, bytes::MAX_MEMORY + 1)? {
                0 => None,
                m => Some((m - 1) as usize),
            };
            Ok(())
        },
        ..BASE
    },
    Knob {
        name: "persistent",
        default: "the scenario's",
        key: ("persistent", rows::LIST),
        json: |c| json!(c.persistent),
        header: Some((3, |c| c.persistent.then(|| "persistent store".to_string()))),
        list: Some((0, |c| {
            c.persistent.then(|| " (persistent store)".to_string())
        })),
        // One number for two flags: bit 0 persistent, bit 1 rng_by_start.
        write: |c, w| w.num(c.persistent as u64 | (c.rng_by_start as u64) << 1),
        read: |_, r, c, with_workload| {
            let flags = if with_workload {
                r.bounded("store and randomness flags (0 to 3)", 3)?
            } else {
                r.bounded("persistent (0 or 1)", 1)?
            };
            c.persistent = flags & 1 == 1;
            c.rng_by_start = flags & 2 == 2;
            Ok(())
        },
        ..BASE
    },
    Knob {
        name: "rng_by_start",
        default: "off",
        since: Since::V2Workload,
        header: Some((12, |c| {
            c.rng_by_start
                .then(|| "random numbers by operation start".to_string())
        })),
        place: Place::Shared,
        ..BASE
    },
    Knob {
        name: "shards",
        label: "servers",
        max: Some(bytes::MAX_SHARDS),
        default: "the scenario's (at least 2 with `shard-fail`)",
        header: Some((4, |c| {
            (c.shards > 1).then(|| format!("{} servers", c.shards))
        })),
        write: |c, w| w.num(c.shards as u64),
        read: |k, r, c, _| {
            c.shards = k.num(r)? as usize;
            Ok(())
        },
        ..BASE
    },
    Knob {
        name: "step_ms",
        label: "step_ms",
        unit: "ms",
        max: Some(bytes::MAX_MS),
        default: "1",
        header: Some((1, |c| Some(format!("kv call {}", ms(c.step_ms))))),
        write: |c, w| w.num(c.step_ms),
        read: |k, r, c, _| {
            c.step_ms = k.num(r)?;
            Ok(())
        },
        ..BASE
    },
    Knob {
        name: "pause_ms",
        label: "pause_ms",
        unit: "ms",
        max: Some(bytes::MAX_MS),
        default: "1500, 4000",
        key: ("pause_ms", rows::CHECK),
        json: |c| json!(c.pause_ms),
        header: Some((5, |c| {
            let [a, b] = c.pause_ms;
            c.faults
                .has(FaultKind::Pause)
                .then(|| format!("pause {} or {}", ms(a), ms(b)))
        })),
        write: |c, w| c.pause_ms.iter().for_each(|&x| w.num(x)),
        read: |k, r, c, _| {
            c.pause_ms = [k.num(r)?, k.num(r)?];
            Ok(())
        },
        ..BASE
    },
    Knob {
        name: "shard_down_ms",
        label: "shard_down_ms",
        unit: "ms",
        max: Some(bytes::MAX_MS),
        default: "2000",
        header: Some((6, |c| {
            c.faults
                .has(FaultKind::ShardFail)
                .then(|| format!("server down {}", ms(c.shard_down_ms)))
        })),
        write: |c, w| w.num(c.shard_down_ms),
        read: |k, r, c, _| {
            c.shard_down_ms = k.num(r)?;
            Ok(())
        },
        ..BASE
    },
    Knob {
        name: "clock_jump_ms",
        label: "clock_jump_ms",
        unit: "ms",
        max: Some(bytes::MAX_MS),
        default: "2000",
        // The `skew` fault's three knobs, on one line.
        header: Some((13, |c| {
            c.faults.has(FaultKind::Skew).then(|| {
                format!(
                    "clock jump ±{} · offset ≤ ±{} · drift ≤ ±{} ppm",
                    ms(c.clock_jump_ms),
                    ms(c.max_offset_ms),
                    c.max_drift_ppm
                )
            })
        })),
        write: |c, w| w.num(c.clock_jump_ms),
        read: |k, r, c, _| {
            c.clock_jump_ms = k.num(r)?;
            Ok(())
        },
        ..BASE
    },
    Knob {
        name: "max_offset_ms",
        label: "max_offset_ms",
        unit: "ms",
        max: Some(bytes::MAX_MS),
        default: "1500",
        write: |c, w| w.num(c.max_offset_ms),
        read: |k, r, c, _| {
            c.max_offset_ms = k.num(r)?;
            Ok(())
        },
        ..BASE
    },
    Knob {
        name: "max_drift_ppm",
        label: "max_drift_ppm",
        unit: "ppm",
        max: Some(bytes::MAX_DRIFT_PPM),
        default: "20000",
        write: |c, w| w.num(c.max_drift_ppm),
        read: |k, r, c, _| {
            c.max_drift_ppm = k.num(r)?;
            Ok(())
        },
        ..BASE
    },
    Knob {
        name: "starve_ms",
        label: "starve_ms",
        unit: "ms",
        max: Some(bytes::MAX_MS),
        default: "50",
        key: ("starve_ms", rows::CHECK),
        json: |c| json!(c.starve_ms),
        write: |c, w| w.num(c.starve_ms),
        read: |k, r, c, _| {
            c.starve_ms = k.num(r)?;
            Ok(())
        },
        ..BASE
    },
    Knob {
        name: "max_steps_per_op",
        label: "max_steps_per_op",
        max: Some(bytes::MAX_STEPS),
        default: "20000",
        // Both step bounds, on one line.
        header: Some((14, |c| {
            Some(format!(
                "bounds {} steps/op, {} steps",
                c.max_steps_per_op, c.max_steps
            ))
        })),
        write: |c, w| w.num(c.max_steps_per_op as u64),
        read: |k, r, c, _| {
            c.max_steps_per_op = k.num(r)? as u32;
            Ok(())
        },
        ..BASE
    },
    Knob {
        name: "max_steps",
        label: "max_steps",
        max: Some(bytes::MAX_STEPS),
        default: "400000",
        write: |c, w| w.num(c.max_steps as u64),
        read: |k, r, c, _| {
            c.max_steps = k.num(r)? as u32;
            Ok(())
        },
        ..BASE
    },
    Knob {
        name: "timeout_ms",
        label: "timeout_ms",
        unit: "ms",
        max: Some(bytes::MAX_MS),
        default: "the scenario's (0: at once)",
        since: Since::V2Timeouts,
        key: ("timeout_ms", rows::CHECK | rows::LIST),
        json: |c| json!(c.timeout_ms),
        header: Some((8, |c| {
            (c.timeout_ms > 0).then(|| format!("timeout {}", ms(c.timeout_ms)))
        })),
        list: Some((1, |c| {
            (c.timeout_ms > 0).then(|| format!(" (timeout {})", ms(c.timeout_ms)))
        })),
        place: Place::Trailing(1),
        write: |c, w| w.num(c.timeout_ms),
        read: |k, r, c, _| {
            c.timeout_ms = k.num(r)?;
            Ok(())
        },
        at_default: |c| c.timeout_ms == 0,
    },
    Knob {
        name: "delay_ms",
        label: "delay_ms",
        unit: "ms",
        max: Some(bytes::MAX_MS),
        default: "300, 2500",
        since: Since::V2Timeouts,
        key: ("delay_ms", rows::CHECK),
        json: |c| json!(c.delay_ms),
        header: Some((7, |c| {
            let [a, b] = c.delay_ms;
            c.faults
                .has(FaultKind::Delay)
                .then(|| format!("delay {} or {}", ms(a), ms(b)))
        })),
        place: Place::Trailing(1),
        write: |c, w| c.delay_ms.iter().for_each(|&x| w.num(x)),
        read: |k, r, c, _| {
            c.delay_ms = [k.num(r)?, k.num(r)?];
            Ok(())
        },
        at_default: |c| c.delay_ms == DEFAULT_DELAY_MS,
        ..BASE
    },
    Knob {
        name: "retries",
        label: "retries",
        max: Some(bytes::MAX_RETRIES),
        default: "the scenario's (0: never)",
        since: Since::V2Retries,
        key: ("retries", rows::CHECK | rows::LIST),
        json: |c| json!(c.retries),
        header: Some((9, |c| {
            (c.retries > 0).then(|| format!("the client library retries a timeout {}×", c.retries))
        })),
        list: Some((2, |c| {
            (c.retries > 0).then(|| format!(" (library retries {}×)", c.retries))
        })),
        place: Place::Trailing(1),
        write: |c, w| w.num(c.retries as u64),
        read: |k, r, c, _| {
            c.retries = k.num(r)? as u32;
            Ok(())
        },
        at_default: |c| c.retries == 0,
        ..BASE
    },
    Knob {
        name: "neighbour_bytes",
        label: "neighbour_bytes",
        unit: "B",
        max: Some(bytes::MAX_NEIGHBOUR_BYTES),
        default: "the scenario's (with `lru`, 10 when it gives none; 0: none)",
        since: Since::V2Neighbour,
        key: ("neighbour_bytes", rows::CHECK | rows::LIST),
        json: |c| json!(c.neighbour_bytes),
        header: Some((10, |c| {
            (c.neighbour_bytes > 0).then(|| {
                let lo = c.neighbour_bytes;
                let size = match c.neighbour_max_bytes {
                    hi if hi > lo => format!("{lo}–{hi} B"),
                    _ => format!("{lo} B"),
                };
                format!(
                    "a noisy neighbour writes {size} after each call ({})",
                    describe_classes(&neighbour_classes(c))
                )
            })
        })),
        place: Place::Trailing(2),
        write: |c, w| w.num(c.neighbour_bytes as u64),
        read: |k, r, c, _| {
            c.neighbour_bytes = k.num(r)? as usize;
            Ok(())
        },
        at_default: |c| c.neighbour_bytes == 0,
        ..BASE
    },
    Knob {
        name: "work_ms",
        label: "work_ms",
        unit: "ms",
        max: Some(bytes::MAX_MS),
        default: "the scenario's (0, 0: no time)",
        since: Since::V2Work,
        key: ("work_ms", rows::CHECK | rows::LIST),
        json: |c| json!(c.work_ms),
        header: Some((11, |c| {
            let [a, b] = c.work_ms;
            (c.work_ms != [0, 0]).then(|| {
                format!(
                    "the structure's work takes {} to {} each time",
                    ms(a),
                    ms(b)
                )
            })
        })),
        list: Some((3, |c| {
            let [a, b] = c.work_ms;
            (c.work_ms != [0, 0]).then(|| format!(" (its work takes {a}–{b} ms each time)"))
        })),
        place: Place::Trailing(3),
        write: |c, w| c.work_ms.iter().for_each(|&x| w.num(x)),
        read: |k, r, c, _| {
            c.work_ms = [k.num(r)?, k.num(r)?];
            Ok(())
        },
        at_default: |c| c.work_ms == [0, 0],
    },
    Knob {
        name: "neighbour_max_bytes",
        label: "neighbour_max_bytes",
        unit: "B",
        max: Some(bytes::MAX_NEIGHBOUR_BYTES),
        default: "the scenario's (with `lru`, 60 when it gives none; 0: as neighbour_bytes)",
        since: Since::V5Geometry,
        key: ("neighbour_max_bytes", rows::CHECK | rows::LIST),
        json: |c| json!(c.neighbour_max_bytes),
        place: Place::Trailing(4),
        write: |c, w| w.num(c.neighbour_max_bytes as u64),
        read: |k, r, c, _| {
            c.neighbour_max_bytes = k.num(r)? as usize;
            Ok(())
        },
        at_default: |c| c.neighbour_max_bytes == 0,
        ..BASE
    },
    Knob {
        name: "geometry",
        label: "geometry",
        default: "memcached 1.6.18's (1 MiB pages, -n 48, -f 1.25, 512 KiB chunks at most, \
                  LRU maintainer on, slab_automove=1); with `lru`, 1 KiB pages and 512-byte \
                  chunks at most when the scenario gives none",
        since: Since::V5Geometry,
        key: ("geometry", rows::CHECK | rows::LIST),
        json: |c| json!(describe_geometry(&c.geometry)),
        // Where it decides anything: under a memory limit, or when not memcached's.
        header: Some((2, |c| {
            (c.memory_limit.is_some() || c.geometry != Geometry::default())
                .then(|| format!("slab geometry {}", describe_geometry(&c.geometry)))
        })),
        place: Place::Trailing(4),
        write: |c, w| w.geometry(&c.geometry),
        read: |_, r, c, _| {
            c.geometry = r.geometry()?;
            Ok(())
        },
        at_default: |c| c.geometry == Geometry::default(),
        ..BASE
    },
    Knob {
        name: "record_trace",
        default: "off (a failing run is replayed with it on)",
        place: Place::None,
        ..BASE
    },
];

/// A slab geometry for people, every parameter, within a report's 100 columns: `1024-byte
/// pages, -n 48, -f 1.25 (8 classes, 96–512 B), maintainer on, automove=1` (the LRU
/// maintainer, `-o slab_automove`).
pub fn describe_geometry(g: &Geometry) -> String {
    let classes = g.classes();
    let (first, last) = (classes[0].chunk, classes[classes.len() - 1].chunk);
    format!(
        "{} ({} classes, {first}–{last} B), maintainer {}, automove={}",
        g.describe(),
        classes.len(),
        if g.lru_maintainer { "on" } else { "off" },
        g.slab_automove
    )
}

/// The lines `text`'s texts give for `c`, in their positions' order.
fn texts(c: &SimConfig, text: fn(&Knob) -> Option<Text>) -> Vec<String> {
    let mut lines: Vec<(u8, String)> = KNOBS
        .iter()
        .filter_map(text)
        .filter_map(|(at, f)| f(c).map(|s| (at, s)))
        .collect();
    lines.sort_by_key(|(at, _)| *at);
    lines.into_iter().map(|(_, s)| s).collect()
}

/// The report header's knobs besides clients, operations, faults and strategy: those
/// that shape this run.
///
/// With an eviction fault, a last line says who evicts: under `lru` memcached's own
/// algorithm at the stated geometry (no key chosen), under `evict` an adversary.
pub fn header(c: &SimConfig) -> Vec<String> {
    let mut lines = texts(c, |k| k.header);
    if c.faults.has(FaultKind::Lru) {
        lines.push(
            "lru: memcached's own eviction, no key chosen: reachable by memcached's eviction at \
             this geometry"
                .to_string(),
        );
    }
    if c.faults.has(FaultKind::Evict) {
        lines.push("evict: any key may go at any step: only by an adversary".to_string());
    }
    lines
}

/// What `kvsim list` says after a scenario's expectations (a persistent store, a
/// timeout, …), from the scenario's knobs `c`.
pub fn list_notes(c: &SimConfig) -> String {
    texts(c, |k| k.list).concat()
}

/// The knobs the JSON rows `rows` ([`rows::CHECK`] or [`rows::LIST`]) show, by key.
pub fn json_row(c: &SimConfig, rows: u8) -> Map<String, Value> {
    KNOBS
        .iter()
        .filter(|k| k.key.1 & rows != 0)
        .map(|k| (k.key.0.to_string(), (k.json)(c)))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::Scenario;

    #[test]
    fn every_field_of_the_config_is_one_knob_in_its_order() {
        let mut c = SimConfig::from_scenario(&Scenario::new("s", 1, 1));
        c.client_ops = Some(vec![]);
        c.workload = Some(vec![]);
        c.rng_by_start = true;
        let fields: Vec<String> = match serde_json::to_value(&c).unwrap() {
            Value::Object(m) => m.keys().cloned().collect(),
            _ => unreachable!(),
        };
        let mut names: Vec<String> = KNOBS.iter().map(|k| k.name.to_string()).collect();
        names.sort();
        assert_eq!(names, fields);
        for k in KNOBS {
            assert!(!k.default.is_empty(), "{} has no default", k.name);
        }
    }
}
