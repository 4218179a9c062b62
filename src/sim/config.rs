//! The knobs of one simulated run, derived from a [`Scenario`] (every knob is printed in
//! reports, so a run can be understood and repeated).

use crate::scenario::{FaultKind, FaultSet, Scenario, Strategy};
use crate::store::geometry::Geometry;
use crate::store::StoreConfig;
use serde::{Deserialize, Serialize};

/// Virtual time zero: 2026-01-01T00:00:00Z in unix milliseconds. Client clocks and the
/// server's clock (absolute expiry times) are read relative to it.
pub const EPOCH_MS: u64 = 1_767_225_600_000;

/// The memory limit used with the `lru` fault when the scenario gives none: two of the
/// scaled geometry's pages ([`lru_geometry`]). memcached gives every slab class its first
/// page even past the limit, so each class the noisy neighbour presses holds about one
/// page: a handful of items, so that memory pressure evicts live data within a short run.
pub const DEFAULT_LRU_LIMIT: usize = 2048;

/// The delays the `delay` fault chooses from by default (ms): one that lands during the
/// next operations of a client that moved on, one long after (past a 2 s lease).
pub const DEFAULT_DELAY_MS: [u64; 2] = [300, 2_500];

/// The noisy neighbour's smallest value with the `lru` fault when the scenario gives none
/// (bytes): with [`DEFAULT_NEIGHBOUR_MAX_BYTES`], items of 88 to 138 bytes (its keys are
/// 19 bytes), which fall in slab classes 1 to 3 of [`lru_geometry`] (96-, 120- and
/// 152-byte chunks), where the structures' small keys live.
pub const DEFAULT_NEIGHBOUR_BYTES: usize = 10;

/// The noisy neighbour's largest value with the `lru` fault when the scenario gives none
/// (bytes; see [`DEFAULT_NEIGHBOUR_BYTES`]).
pub const DEFAULT_NEIGHBOUR_MAX_BYTES: usize = 60;

/// The slab geometry used with the `lru` fault when the scenario gives none: memcached
/// 1.6.18's algorithm (`-n 48`, `-f 1.25`, the LRU maintainer on, `slab_automove=1`) with
/// its memory scaled down a thousandfold: 1 KiB pages (`-I 1k`) and chunks of at most half
/// a page (512 bytes), eight slab classes (96, 120, 152, 192, 240, 304, 384 and 512-byte
/// chunks). See README.md, "Slab classes", for what a finding at this scale means.
pub fn lru_geometry() -> Geometry {
    Geometry {
        page_size: 1024,
        slab_chunk_max: 512,
        ..Geometry::default()
    }
}

fn default_delay_ms() -> [u64; 2] {
    DEFAULT_DELAY_MS
}

/// Everything a run depends on besides the model and the seed: the only carrier of
/// simulation knobs, each described once in the knob table
/// ([`crate::sim::knobs::KNOBS`]), for a run as for a search ([`crate::explore::Scope`]).
/// Built with [`SimConfig::new`] or [`SimConfig::from_scenario`] and then changed field
/// by field (fields may be added later).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct SimConfig {
    /// Concurrent clients.
    pub clients: usize,
    /// Operations per client.
    pub ops: usize,
    /// Which of its `ops` workload operations each client runs (indices into its
    /// workload, ascending), when not all of them: the minimizer's way to drop single
    /// operations or whole clients while every other operation stays the same.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_ops: Option<Vec<Vec<usize>>>,
    /// The workload, when chosen rather than drawn from the seed: per client, per
    /// operation index, the values of the choices [`crate::model::Model::op`] makes (a
    /// scripted [`crate::rng::SimRng`]; exhaustive exploration chooses them). Indices past
    /// a client's list are drawn from the seed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workload: Option<Vec<Vec<Vec<u64>>>>,
    /// Faults the world may inject.
    pub faults: FaultSet,
    /// Most faults per run.
    pub fault_budget: u32,
    /// Probability that a step is a fault (when one is possible and budget is left).
    pub fault_probability: f64,
    /// How steps are chosen.
    pub strategy: Strategy,
    /// Store memory limit (bytes), if any.
    pub memory_limit: Option<usize>,
    /// Persistent store.
    pub persistent: bool,
    /// Seed each operation's random stream (what the structure draws through its kv
    /// handle) by the operation's position among the run's operation starts, not by its
    /// client and workload index: the numbers drawn then do not tell clients apart.
    /// `kvsim explore` sets it when it treats clients as interchangeable
    /// ([`crate::model::Model::interchangeable_clients`]), so that its counterexamples
    /// replay here.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub rng_by_start: bool,
    /// Servers in the cluster.
    pub shards: usize,
    /// True time each delivered KV call takes (ms).
    pub step_ms: u64,
    /// Pause lengths the `pause` fault chooses from (ms).
    pub pause_ms: [u64; 2],
    /// How long a client waits for a lost or delayed reply before it sees a timeout (ms;
    /// 0: at once).
    #[serde(default)]
    pub timeout_ms: u64,
    /// How late the `delay` fault delivers a request (ms), the two lengths it chooses from.
    #[serde(default = "default_delay_ms")]
    pub delay_ms: [u64; 2],
    /// How often a client library sends a timed-out command again before the structure
    /// sees the timeout (0: never). Most libraries retry, `incr` included.
    #[serde(default)]
    pub retries: u32,
    /// The noisy neighbour (0: none): after each command a client delivers, another
    /// tenant of the cache sets one item with a value this large, rotating over just
    /// enough keys to fill the memory limit on its own. Under a memory limit the store's
    /// LRU then evicts the structure's keys in the order a shared cache would: least
    /// recently used first.
    #[serde(default)]
    pub neighbour_bytes: usize,
    /// The noisy neighbour's largest value (bytes; 0: every value is `neighbour_bytes`
    /// long). Its values then range from `neighbour_bytes` to this, one size per slab
    /// class of [`SimConfig::geometry`] the range reaches, so that it presses exactly the
    /// classes those sizes fall in: memcached evicts a key only to make room in its own
    /// class.
    #[serde(default)]
    pub neighbour_max_bytes: usize,
    /// How the servers lay out their memory in slab classes (memcached's page size, `-n`,
    /// `-f`, largest chunk, LRU maintainer and slab automove): memcached 1.6.18's defaults
    /// unless a scenario scales them down ([`lru_geometry`] with the `lru` fault). It
    /// decides which slab class each item falls in, and so which keys a memory limit can
    /// evict to make room for which.
    #[serde(default)]
    pub geometry: Geometry,
    /// How long each [`crate::kv::Kv::work`] call of the structure takes (ms), drawn per
    /// call between the two (`[0, 0]`: no time, and nothing drawn).
    #[serde(default)]
    pub work_ms: [u64; 2],
    /// How long a failed server stays down (ms).
    pub shard_down_ms: u64,
    /// Clock jump size of the `skew` fault (ms), either direction.
    pub clock_jump_ms: u64,
    /// Largest initial clock offset with `skew` (ms), either direction.
    pub max_offset_ms: u64,
    /// Largest clock drift with `skew` (parts per million), either direction.
    pub max_drift_ppm: u64,
    /// Fairness: the most virtual time (ms) a runnable client may wait for the schedule
    /// while others step. Without the `pause` fault no strategy starves a client longer;
    /// a longer wait is a pause, and is injected (and shown) only as the `pause` fault.
    pub starve_ms: u64,
    /// Most steps one operation may take before the run is stopped as a livelock.
    pub max_steps_per_op: u32,
    /// Most steps per run.
    pub max_steps: u32,
    /// Record the full trace (off for bulk runs; a failing run is replayed with it on).
    pub record_trace: bool,
}

impl SimConfig {
    /// `clients` × `ops` with kvsim's defaults for every other knob: no faults (a budget
    /// of 3 once some are turned on), the random strategy, one volatile server without a
    /// memory limit. The knobs of [`Scenario::new`].
    pub fn new(clients: usize, ops: usize) -> SimConfig {
        SimConfig {
            clients,
            ops,
            client_ops: None,
            workload: None,
            faults: FaultSet::none(),
            fault_budget: 3,
            fault_probability: 0.05,
            strategy: Strategy::Random,
            memory_limit: None,
            persistent: false,
            rng_by_start: false,
            shards: 1,
            step_ms: 1,
            pause_ms: [1_500, 4_000],
            timeout_ms: 0,
            delay_ms: DEFAULT_DELAY_MS,
            retries: 0,
            neighbour_bytes: 0,
            neighbour_max_bytes: 0,
            geometry: Geometry::default(),
            work_ms: [0, 0],
            shard_down_ms: 2_000,
            clock_jump_ms: 2_000,
            max_offset_ms: 1_500,
            max_drift_ppm: 20_000,
            starve_ms: 50,
            max_steps_per_op: 20_000,
            max_steps: 400_000,
            record_trace: false,
        }
    }

    /// The configuration of each of a run's stores (servers): its memory limit,
    /// persistence and slab geometry, with the store's defaults for the rest.
    pub fn store_config(&self) -> StoreConfig {
        StoreConfig {
            memory_limit: self.memory_limit,
            persistent: self.persistent,
            geometry: self.geometry.clone(),
            ..StoreConfig::default()
        }
    }

    /// The knobs a scenario implies, with kvsim's defaults for the rest.
    pub fn from_scenario(s: &Scenario) -> SimConfig {
        let mut c = SimConfig::new(s.clients, s.ops);
        c.faults = s.faults.clone();
        c.fault_budget = s.fault_budget;
        c.strategy = s.strategy;
        c.memory_limit = s.memory_limit;
        c.persistent = s.persistent;
        c.shards = s.shards;
        c.timeout_ms = s.timeout_ms;
        c.retries = s.retries;
        c.neighbour_bytes = s.neighbour_bytes.unwrap_or(0);
        c.neighbour_max_bytes = s.neighbour_max_bytes;
        if let Some(g) = &s.geometry {
            c.geometry = g.clone();
        }
        c.work_ms = s.work_ms;
        c.fault_defaults(s.neighbour_bytes.is_some(), s.geometry.is_some());
        c
    }

    /// The knobs the faults turned on imply when not given: with `lru`, a memory limit
    /// ([`DEFAULT_LRU_LIMIT`]), unless `neighbour_given` the noisy neighbour
    /// ([`DEFAULT_NEIGHBOUR_BYTES`] to [`DEFAULT_NEIGHBOUR_MAX_BYTES`]) and unless
    /// `geometry_given` the scaled geometry ([`lru_geometry`]); with `shard-fail`, at least
    /// two servers (else at least one).
    pub(crate) fn fault_defaults(&mut self, neighbour_given: bool, geometry_given: bool) {
        let lru = self.faults.has(FaultKind::Lru);
        if lru && self.memory_limit.is_none() {
            self.memory_limit = Some(DEFAULT_LRU_LIMIT);
        }
        if lru && !neighbour_given {
            self.neighbour_bytes = DEFAULT_NEIGHBOUR_BYTES;
            self.neighbour_max_bytes = DEFAULT_NEIGHBOUR_MAX_BYTES;
        }
        if lru && !geometry_given {
            self.geometry = lru_geometry();
        }
        let least = if self.faults.has(FaultKind::ShardFail) {
            2
        } else {
            1
        };
        self.shards = self.shards.max(least);
    }

    /// The workload indices client `c` runs, in order: `0..ops`, or its `client_ops` entry.
    pub fn ops_of(&self, c: usize) -> Vec<usize> {
        match &self.client_ops {
            None => (0..self.ops).collect(),
            Some(v) => v
                .get(c)
                .map(|l| l.iter().copied().filter(|&i| i < self.ops).collect())
                .unwrap_or_default(),
        }
    }

    /// The first workload index at or after `from` that client `c` runs.
    pub fn next_op(&self, c: usize, from: usize) -> Option<usize> {
        match &self.client_ops {
            None => (from < self.ops).then_some(from),
            Some(v) => v
                .get(c)?
                .iter()
                .copied()
                .find(|&i| i >= from && i < self.ops),
        }
    }

    /// The operations per client for people: `2 ops`, or `ops 2,0,1` when they differ.
    pub fn describe_ops(&self) -> String {
        let counts: Vec<usize> = (0..self.clients).map(|c| self.ops_of(c).len()).collect();
        if counts.iter().all(|&n| n == self.ops) {
            format!("{} clients × {} ops", self.clients, self.ops)
        } else {
            let list: Vec<String> = (0..self.clients)
                .map(|c| {
                    let l = self.ops_of(c);
                    if l.len() == self.ops {
                        "all".to_string()
                    } else {
                        format!(
                            "#{}",
                            l.iter()
                                .map(|i| i.to_string())
                                .collect::<Vec<_>>()
                                .join("+")
                        )
                    }
                })
                .collect();
            format!(
                "{} clients × {} ops (ops run per client: {})",
                self.clients,
                self.ops,
                list.join(" ")
            )
        }
    }

    /// One line with every knob, for report headers.
    pub fn describe(&self) -> String {
        let mut s = format!(
            "{} · faults {} (budget {}, p={}) · strategy {}",
            self.describe_ops(),
            self.faults,
            self.fault_budget,
            self.fault_probability,
            self.strategy
        );
        s.push_str(&describe_servers(
            self.memory_limit,
            self.persistent,
            self.shards,
        ));
        if self.rng_by_start {
            s.push_str(" · random numbers by operation start");
        }
        s
    }
}

/// The servers' knobs for people, as descriptions end: ` · memory 4096 B · persistent
/// store · 2 servers`, each only when it is not the default.
pub(crate) fn describe_servers(
    memory_limit: Option<usize>,
    persistent: bool,
    shards: usize,
) -> String {
    let mut s = String::new();
    if let Some(m) = memory_limit {
        s.push_str(&format!(" · memory {m} B"));
    }
    if persistent {
        s.push_str(" · persistent store");
    }
    if shards > 1 {
        s.push_str(&format!(" · {shards} servers"));
    }
    s
}
