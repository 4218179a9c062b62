//! The bound of an exhaustive search: the simulation's knobs (a [`SimConfig`]: clients,
//! operations per client, the servers, the timeout) plus what only a search has: a fault
//! budget per kind, a time horizon, a step bound per operation, the seed that fixes the
//! random numbers, and how the workload is enumerated and states are reduced.

use crate::scenario::{FaultKind, FaultSet, Strategy};
use crate::sim::SimConfig;
use serde::{Deserialize, Serialize};

/// The default time horizon: paths are not expanded past 10 s of virtual time.
pub const DEFAULT_HORIZON_MS: u64 = 10_000;

/// The default bound on steps per operation: a path on which one operation takes more
/// than 24 steps (KV calls and wake-ups) is not expanded further.
pub const DEFAULT_MAX_OP_STEPS: u32 = 24;

/// What an exhaustive search covers: a [`SimConfig`] plus the search-only bounds. Built
/// with [`Scope::new`] or [`Scope::of`] and then changed field by field (fields may be
/// added later).
///
/// Its JSON form (`kvsim explore --json`, [`crate::harness::records::ExploreReport`]) is
/// flat: `clients`, `ops`, `memory_limit`, `persistent`, `shards` and `timeout_ms` from
/// [`Scope::config`] among the search's own fields. The config's other knobs are not in
/// it (read back, they are kvsim's defaults).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(from = "ScopeJson", into = "ScopeJson")]
#[non_exhaustive]
pub struct Scope {
    /// The simulation's knobs: clients, operations per client, the servers (memory limit,
    /// persistence, shards), the timeout, and kvsim's defaults for the rest. Its
    /// `faults`, `fault_budget` and `strategy` are not read: a search takes the faults of
    /// [`Scope::faults`] within their budgets at every step, and [`Scope::run_config`]
    /// sets them (with the knobs those faults imply) for the simulator's replays.
    pub config: SimConfig,
    /// Fault kinds, each with how many faults of that kind one path may take.
    pub faults: Vec<(FaultKind, u32)>,
    /// Virtual milliseconds after which a path is not expanded further (spin loops under
    /// an unfair schedule never end; the horizon cuts them).
    pub horizon_ms: u64,
    /// Steps (KV calls and wake-ups) one operation may take on a path before the path is
    /// cut: a spin loop under an unfair schedule never ends, and a busy one never even
    /// advances time far.
    pub max_op_steps: u32,
    /// The seed: it fixes the clocks drawn with `skew` and the random numbers the
    /// structure draws through its kv handle. The workload is not drawn: every operation
    /// [`crate::model::Model::op`] can give is a branch of the search.
    pub seed: u64,
    /// Keep the history's virtual times (`call_ms`, `ret_ms`, marks' `time_ms`) in the
    /// state. Needed when the model's check reads them (time-window specs); without it,
    /// paths that differ only in when things happened merge, and a check sees times 0.
    /// Default: kept.
    pub times: bool,
    /// Values a large workload choice takes: a choice of [`crate::model::Model::op`] among
    /// more than [`Scope::every_value_up_to`] values (and more than this) takes this many,
    /// spread over its range (both ends); smaller choices take every value.
    pub draw_values: u64,
    /// Choices among at most this many values take every value (default
    /// [`super::EVERY_VALUE_UP_TO`], 32: a `below(20)` that picks the kind of operation
    /// covers every kind). A model whose operations carry many small numbers (timestamps,
    /// jitter) lowers it so that its workload can be enumerated.
    pub every_value_up_to: u64,
    /// One workload, drawn from the seed as the simulator draws it, instead of every
    /// workload: a narrower scope, to search one workload a random run found.
    pub seeded_workload: bool,
    /// Symmetry reduction: when the model's clients are interchangeable
    /// ([`crate::model::Model::interchangeable_clients`]), explore one of every set of
    /// states that differ only by which of the clients with the same workload is which.
    /// The verdict is the same either way; off, the search is larger (for comparison).
    /// Default: on.
    pub symmetry: bool,
    /// Fairness abstraction: a client that can no longer be starved on any path from a
    /// state (see the bridge's `never_starved`) is kept without since when it has been
    /// runnable, so that states that differ only there merge. The verdict is the same
    /// either way; off, the search is larger (for comparison). Default: on.
    pub fairness_abstraction: bool,
    /// Time-shift reduction. When no time is kept in the history ([`Scope::times`] off),
    /// the stores have no memory limit and no item that expires, a search first assumes
    /// that nothing depends on *when* things happen: two states that differ only by a
    /// shift of every time (the clock, wake-ups, timeouts, pauses, late requests) are one,
    /// and paths need no horizon (the step bound per operation ends them). The moment a
    /// client reads its clock or sends a command that involves time (an expiry, a flush),
    /// the search stops and starts again with times. The verdict is the same either way;
    /// off, the search is larger (for comparison). Default: on.
    pub time_shift: bool,
}

/// The JSON form of a [`Scope`], flat, its fields named and ordered as they always were
/// (the contract of `kvsim explore --json`).
#[derive(Clone, Serialize, Deserialize)]
struct ScopeJson {
    clients: usize,
    ops: usize,
    faults: Vec<(FaultKind, u32)>,
    horizon_ms: u64,
    max_op_steps: u32,
    seed: u64,
    memory_limit: Option<usize>,
    persistent: bool,
    shards: usize,
    times: bool,
    #[serde(default = "default_draw_values")]
    draw_values: u64,
    #[serde(default = "default_every_value_up_to")]
    every_value_up_to: u64,
    #[serde(default)]
    seeded_workload: bool,
    #[serde(default = "default_on")]
    symmetry: bool,
    #[serde(default)]
    timeout_ms: u64,
    #[serde(default = "default_on")]
    fairness_abstraction: bool,
    #[serde(default = "default_on")]
    time_shift: bool,
}

impl From<Scope> for ScopeJson {
    fn from(s: Scope) -> ScopeJson {
        ScopeJson {
            clients: s.config.clients,
            ops: s.config.ops,
            faults: s.faults,
            horizon_ms: s.horizon_ms,
            max_op_steps: s.max_op_steps,
            seed: s.seed,
            memory_limit: s.config.memory_limit,
            persistent: s.config.persistent,
            shards: s.config.shards,
            times: s.times,
            draw_values: s.draw_values,
            every_value_up_to: s.every_value_up_to,
            seeded_workload: s.seeded_workload,
            symmetry: s.symmetry,
            timeout_ms: s.config.timeout_ms,
            fairness_abstraction: s.fairness_abstraction,
            time_shift: s.time_shift,
        }
    }
}

impl From<ScopeJson> for Scope {
    fn from(j: ScopeJson) -> Scope {
        let mut config = SimConfig::new(j.clients, j.ops);
        config.memory_limit = j.memory_limit;
        config.persistent = j.persistent;
        config.shards = j.shards;
        config.timeout_ms = j.timeout_ms;
        Scope {
            config,
            faults: j.faults,
            horizon_ms: j.horizon_ms,
            max_op_steps: j.max_op_steps,
            seed: j.seed,
            times: j.times,
            draw_values: j.draw_values,
            every_value_up_to: j.every_value_up_to,
            seeded_workload: j.seeded_workload,
            symmetry: j.symmetry,
            fairness_abstraction: j.fairness_abstraction,
            time_shift: j.time_shift,
        }
    }
}

fn default_on() -> bool {
    true
}

/// The default of [`Scope::draw_values`].
pub const DEFAULT_DRAW_VALUES: u64 = 4;

fn default_draw_values() -> u64 {
    DEFAULT_DRAW_VALUES
}

fn default_every_value_up_to() -> u64 {
    super::EVERY_VALUE_UP_TO
}

impl Scope {
    /// `clients` × `ops` with kvsim's other knobs ([`SimConfig::new`]), no faults, the
    /// default horizon, seed 1.
    pub fn new(clients: usize, ops: usize) -> Scope {
        Scope::of(SimConfig::new(clients, ops))
    }

    /// A search of the runs `config` describes (its faults aside: none, see
    /// [`Scope::faults`]), with the default bounds: the default horizon and step bound,
    /// seed 1, times kept, every reduction on.
    pub fn of(config: SimConfig) -> Scope {
        Scope {
            config,
            faults: Vec::new(),
            horizon_ms: DEFAULT_HORIZON_MS,
            max_op_steps: DEFAULT_MAX_OP_STEPS,
            seed: 1,
            times: true,
            draw_values: DEFAULT_DRAW_VALUES,
            every_value_up_to: super::EVERY_VALUE_UP_TO,
            seeded_workload: false,
            symmetry: true,
            fairness_abstraction: true,
            time_shift: true,
        }
    }

    /// The same scope with these fault kinds and budgets ([`Scope::parse_faults`]).
    pub fn with_faults(mut self, faults: Vec<(FaultKind, u32)>) -> Scope {
        self.faults = faults;
        self
    }

    /// The same scope, keeping the history's times or not ([`Scope::times`]).
    pub fn with_times(mut self, times: bool) -> Scope {
        self.times = times;
        self
    }

    /// Parses `none` or a comma-separated list of `KIND` or `KIND:BUDGET` (budget 1 when
    /// not given), e.g. `evict:2,crash`.
    pub fn parse_faults(list: &str) -> Result<Vec<(FaultKind, u32)>, String> {
        let list = list.trim();
        if list.is_empty() || list == "none" {
            return Ok(Vec::new());
        }
        let mut out: Vec<(FaultKind, u32)> = Vec::new();
        for item in list.split(',') {
            let item = item.trim();
            let (name, budget) = match item.split_once(':') {
                Some((n, b)) => {
                    let b = b.parse::<u32>().map_err(|_| {
                        format!("bad fault budget in {item:?}: expected KIND:NUMBER, e.g. evict:2")
                    })?;
                    (n, b)
                }
                None => (item, 1),
            };
            let kind = FaultKind::parse(name)?;
            match out.iter_mut().find(|(k, _)| *k == kind) {
                Some(entry) => entry.1 = budget,
                None => out.push((kind, budget)),
            }
        }
        out.sort_by_key(|(k, _)| *k);
        Ok(out)
    }

    /// The simulator's knobs for this scope's paths: what a replay token of one of its
    /// paths carries. [`Scope::config`] with the fault kinds turned on, the total fault
    /// budget the sum of the kinds' budgets, strategy `random`, and the knobs the faults
    /// imply when not given (with `lru` a memory limit, and the noisy neighbour when its
    /// size is 0; with `shard-fail` two servers).
    pub fn run_config(&self) -> SimConfig {
        let kinds: Vec<FaultKind> = self.faults.iter().map(|(k, _)| *k).collect();
        let mut cfg = self.config.clone();
        cfg.faults = FaultSet::of(&kinds);
        cfg.fault_budget = self.faults.iter().map(|(_, b)| *b).sum();
        cfg.strategy = Strategy::Random;
        let neighbour_given = cfg.neighbour_bytes != 0;
        let geometry_given = cfg.geometry != crate::store::geometry::Geometry::default();
        cfg.fault_defaults(neighbour_given, geometry_given);
        cfg
    }

    /// Choices among at most this many values take every value:
    /// [`Scope::every_value_up_to`], or [`Scope::draw_values`] when that is larger.
    pub fn every_value_bound(&self) -> u64 {
        self.every_value_up_to.max(self.draw_values)
    }

    /// One line for people: `2 clients × 2 ops · faults evict:1 · horizon 10 s · seed 1`.
    pub fn describe(&self) -> String {
        let faults = if self.faults.is_empty() {
            "none".to_string()
        } else {
            self.faults
                .iter()
                .map(|(k, b)| format!("{}:{b}", k.name()))
                .collect::<Vec<_>>()
                .join(",")
        };
        let mut s = format!(
            "{} client{} × {} ops · faults {faults} · horizon {} · {} steps per op · seed {}",
            self.config.clients,
            if self.config.clients == 1 { "" } else { "s" },
            self.config.ops,
            crate::sim::ms(self.horizon_ms),
            self.max_op_steps,
            self.seed
        );
        s.push_str(&crate::sim::describe_servers(
            self.config.memory_limit,
            self.config.persistent,
            self.config.shards,
        ));
        if !self.symmetry {
            s.push_str(" · no symmetry reduction");
        }
        if !self.fairness_abstraction {
            s.push_str(" · no fairness abstraction");
        }
        if self.config.timeout_ms > 0 {
            s.push_str(&format!(
                " · timeout {}",
                crate::sim::ms(self.config.timeout_ms)
            ));
        }
        if self.draw_values != DEFAULT_DRAW_VALUES
            || self.every_value_up_to != super::EVERY_VALUE_UP_TO
        {
            s.push_str(&format!(
                " · {} values of choices among more than {}",
                self.draw_values,
                self.every_value_bound()
            ));
        }
        if !self.times {
            s.push_str(" · history times ignored");
        }
        if self.seeded_workload {
            s.push_str(" · the seed's workload only");
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fault_lists_parse_with_budgets() {
        assert_eq!(Scope::parse_faults("none").unwrap(), vec![]);
        assert_eq!(
            Scope::parse_faults("crash,evict:2").unwrap(),
            vec![(FaultKind::Evict, 2), (FaultKind::Crash, 1)]
        );
        assert_eq!(
            Scope::parse_faults("evict:x").unwrap_err(),
            "bad fault budget in \"evict:x\": expected KIND:NUMBER, e.g. evict:2"
        );
        assert!(Scope::parse_faults("bogus")
            .unwrap_err()
            .starts_with("unknown fault"));
    }

    #[test]
    fn the_config_sums_the_budgets_and_replays_with_the_random_strategy() {
        let mut s = Scope::new(2, 3);
        s.faults = vec![(FaultKind::Evict, 2), (FaultKind::Crash, 1)];
        let c = s.run_config();
        assert_eq!((c.clients, c.ops, c.fault_budget), (2, 3, 3));
        assert_eq!(c.strategy, Strategy::Random);
        assert_eq!(c.faults.kinds(), &[FaultKind::Evict, FaultKind::Crash]);
        assert_eq!(
            s.describe(),
            "2 clients × 3 ops · faults evict:2,crash:1 · horizon 10 s · 24 steps per op · seed 1"
        );
    }

    #[test]
    fn the_json_form_is_flat_and_reads_back() {
        let mut s = Scope::new(2, 3).with_faults(vec![(FaultKind::Lru, 1)]);
        s.config.timeout_ms = 400;
        let json = serde_json::to_string(&s).expect("json");
        assert_eq!(
            json,
            "{\"clients\":2,\"ops\":3,\"faults\":[[\"Lru\",1]],\"horizon_ms\":10000,\
             \"max_op_steps\":24,\"seed\":1,\"memory_limit\":null,\"persistent\":false,\
             \"shards\":1,\"times\":true,\"draw_values\":4,\"every_value_up_to\":32,\
             \"seeded_workload\":false,\"symmetry\":true,\"timeout_ms\":400,\
             \"fairness_abstraction\":true,\"time_shift\":true}"
        );
        assert_eq!(serde_json::from_str::<Scope>(&json).expect("a scope"), s);
    }

    #[test]
    fn the_run_config_adds_what_the_faults_imply() {
        let s = Scope::new(2, 2).with_faults(vec![(FaultKind::Lru, 1), (FaultKind::ShardFail, 1)]);
        let c = s.run_config();
        assert_eq!(s.config.memory_limit, None);
        assert_eq!(
            (c.memory_limit, c.neighbour_bytes, c.shards),
            (
                Some(crate::sim::DEFAULT_LRU_LIMIT),
                crate::sim::DEFAULT_NEIGHBOUR_BYTES,
                2
            )
        );
    }
}
