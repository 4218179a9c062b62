//! Scenarios: how many clients, how many operations, which faults, which strategy.

use serde::{Deserialize, Serialize};
use std::fmt;

pub use crate::fault::FaultKind;

/// A set of fault kinds, in a fixed order.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct FaultSet(Vec<FaultKind>);

impl FaultSet {
    /// No faults.
    pub fn none() -> Self {
        FaultSet(Vec::new())
    }

    /// These faults (duplicates dropped, sorted).
    pub fn of(kinds: &[FaultKind]) -> Self {
        let mut v = kinds.to_vec();
        v.sort();
        v.dedup();
        FaultSet(v)
    }

    /// Whether `kind` is on.
    pub fn has(&self, kind: FaultKind) -> bool {
        self.0.contains(&kind)
    }

    /// The kinds that are on.
    pub fn kinds(&self) -> &[FaultKind] {
        &self.0
    }

    /// Whether no fault is on.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Parses `none` or a comma-separated list of fault names (`evict,crash`).
    pub fn parse(list: &str) -> Result<FaultSet, String> {
        let list = list.trim();
        if list.is_empty() || list == "none" {
            return Ok(FaultSet::none());
        }
        let kinds = list
            .split(',')
            .map(|s| FaultKind::parse(s.trim()))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(FaultSet::of(&kinds))
    }
}

impl fmt::Display for FaultSet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.0.is_empty() {
            return write!(f, "none");
        }
        let names: Vec<&str> = self.0.iter().map(|k| k.name()).collect();
        write!(f, "{}", names.join(","))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fault_lists_parse_and_print() {
        let f = FaultSet::parse("crash,evict,crash").unwrap();
        assert_eq!(f.kinds(), &[FaultKind::Evict, FaultKind::Crash]);
        assert_eq!(f.to_string(), "evict,crash");
        assert_eq!(FaultSet::parse("none").unwrap(), FaultSet::none());
        assert_eq!(
            FaultSet::parse("evict,bogus").unwrap_err(),
            "unknown fault \"bogus\": expected one of evict, lru, expire, skew, restart, crash, lose, pause, shard-fail, delay, or none"
        );
    }
}

/// How the simulator picks the next step.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Strategy {
    /// `random`: a uniform random walk over enabled steps, faults with their probabilities.
    Random,
    /// `pct`: probabilistic concurrency testing with `depth` priority change points.
    Pct {
        /// The bug depth d (d-1 priority change points).
        depth: u32,
    },
    /// `swarm`: like random, but each run's seed also picks which of the scenario's faults
    /// are on and how often they fire.
    Swarm,
}

impl Strategy {
    /// The CLI name: `random`, `pct` or `swarm`.
    pub fn name(self) -> &'static str {
        match self {
            Strategy::Random => "random",
            Strategy::Pct { .. } => "pct",
            Strategy::Swarm => "swarm",
        }
    }

    /// Parses `random`, `pct`, `pct:D` (depth D, default 3) or `swarm`.
    pub fn parse(s: &str) -> Result<Strategy, String> {
        match s {
            "random" => Ok(Strategy::Random),
            "swarm" => Ok(Strategy::Swarm),
            "pct" => Ok(Strategy::Pct { depth: 3 }),
            _ => {
                if let Some(d) = s.strip_prefix("pct:") {
                    if let Ok(depth) = d.parse::<u32>() {
                        if depth >= 1 {
                            return Ok(Strategy::Pct { depth });
                        }
                    }
                }
                Err(format!(
                    "unknown strategy {s:?}: expected random, pct, pct:DEPTH or swarm"
                ))
            }
        }
    }
}

impl fmt::Display for Strategy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Strategy::Pct { depth } => write!(f, "pct:{depth}"),
            other => write!(f, "{}", other.name()),
        }
    }
}

/// One named way to exercise a model: clients, operations, faults, strategy and budget.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Scenario {
    /// Lowercase with dashes, e.g. `evict` or `slow-holder`.
    pub name: String,
    /// One line for people: what the scenario exercises.
    pub about: String,
    /// Number of concurrent clients.
    pub clients: usize,
    /// Operations per client.
    pub ops: usize,
    /// Which faults the simulator may inject.
    pub faults: FaultSet,
    /// The most faults injected in one run (all kinds together).
    pub fault_budget: u32,
    /// How steps are chosen.
    pub strategy: Strategy,
    /// How many runs (seeds) to try before concluding no violation was found.
    pub runs: u64,
    /// The store's memory limit in bytes (`None`: unlimited); with the `lru` fault a small
    /// limit is used if none is given.
    pub memory_limit: Option<usize>,
    /// A persistent store (never evicts, survives restart: MemcacheDB, kumofs, Flare).
    pub persistent: bool,
    /// Number of servers (a sharded cluster when > 1; keys placed by consistent hashing).
    pub shards: usize,
    /// How long a client waits for a reply that does not come before it sees a timeout
    /// (virtual ms; 0: it sees it at once). Leases and expiries run on meanwhile.
    #[serde(default)]
    pub timeout_ms: u64,
    /// How often the clients' library sends a timed-out command again (0: never).
    #[serde(default)]
    pub retries: u32,
    /// The noisy neighbour's value size in bytes: another tenant of the same cache who
    /// writes one item of this size after each command of the clients, so that a memory
    /// limit evicts the structure's least recently used keys (`None`: with the `lru` fault,
    /// [`crate::sim::DEFAULT_NEIGHBOUR_BYTES`]; `Some(0)`: no neighbour).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub neighbour_bytes: Option<usize>,
    /// The noisy neighbour's largest value in bytes (0: every value is `neighbour_bytes`
    /// long): its values then range over both, one size per slab class the range reaches,
    /// and it presses exactly those classes ([`crate::sim::SimConfig::neighbour_max_bytes`]).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub neighbour_max_bytes: usize,
    /// How the servers lay out memory in slab classes (`None`: memcached 1.6.18's defaults,
    /// or with the `lru` fault memcached's algorithm scaled down to 1 KiB pages,
    /// [`crate::sim::lru_geometry`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub geometry: Option<crate::store::geometry::Geometry>,
    /// How long the structure's own work takes where it calls [`crate::kv::Kv::work`]
    /// (a critical section's computation): each call draws a duration from this range of
    /// virtual ms (`[0, 0]`: no time at all, the default).
    #[serde(default, skip_serializing_if = "is_no_work")]
    pub work_ms: [u64; 2],
    /// Probes ([`crate::kv::Kv::probe`]) that some run must hit: a check whose runs hit
    /// none of one is `unknown`, never a pass.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub sometimes: Vec<String>,
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

fn is_no_work(range: &[u64; 2]) -> bool {
    *range == [0, 0]
}

impl Scenario {
    /// A scenario with `clients` × `ops`, no faults, the random strategy and 1000 runs.
    pub fn new(name: &str, clients: usize, ops: usize) -> Scenario {
        Scenario {
            name: name.to_string(),
            about: String::new(),
            clients,
            ops,
            faults: FaultSet::none(),
            fault_budget: 3,
            strategy: Strategy::Random,
            runs: 1000,
            memory_limit: None,
            persistent: false,
            shards: 1,
            timeout_ms: 0,
            retries: 0,
            neighbour_bytes: None,
            neighbour_max_bytes: 0,
            geometry: None,
            work_ms: [0, 0],
            sometimes: Vec::new(),
        }
    }

    /// Sets the description.
    pub fn about(mut self, about: &str) -> Scenario {
        self.about = about.to_string();
        self
    }

    /// Turns these faults on.
    pub fn faults(mut self, kinds: &[FaultKind]) -> Scenario {
        self.faults = FaultSet::of(kinds);
        self
    }

    /// Sets the fault budget per run.
    pub fn fault_budget(mut self, budget: u32) -> Scenario {
        self.fault_budget = budget;
        self
    }

    /// Sets the strategy.
    pub fn strategy(mut self, strategy: Strategy) -> Scenario {
        self.strategy = strategy;
        self
    }

    /// Sets the number of runs.
    pub fn runs(mut self, runs: u64) -> Scenario {
        self.runs = runs;
        self
    }

    /// Makes the store persistent (never evicts, survives restarts).
    pub fn persistent(mut self) -> Scenario {
        self.persistent = true;
        self
    }

    /// Sets the store's memory limit.
    pub fn memory_limit(mut self, bytes: usize) -> Scenario {
        self.memory_limit = Some(bytes);
        self
    }

    /// Uses a sharded cluster of `n` servers.
    pub fn shards(mut self, n: usize) -> Scenario {
        self.shards = n.max(1);
        self
    }

    /// Makes a lost or delayed call cost its client `ms` of virtual time before it sees
    /// the timeout.
    pub fn timeout_ms(mut self, ms: u64) -> Scenario {
        self.timeout_ms = ms;
        self
    }

    /// Makes the clients' library send a timed-out command again, up to `n` times, before
    /// the structure sees the timeout.
    pub fn retries(mut self, n: u32) -> Scenario {
        self.retries = n;
        self
    }

    /// Sets the noisy neighbour's value size (bytes; 0: no neighbour): another tenant who
    /// writes an item that large after each of the clients' commands.
    pub fn neighbour(mut self, bytes: usize) -> Scenario {
        self.neighbour_bytes = Some(bytes);
        self
    }

    /// Makes the noisy neighbour write values of `min` to `max` bytes, one size per slab
    /// class that range reaches: it presses those classes, and memcached evicts a key only
    /// to make room in the key's own class.
    pub fn neighbour_range(mut self, min: usize, max: usize) -> Scenario {
        self.neighbour_bytes = Some(min.min(max));
        self.neighbour_max_bytes = max.max(min);
        self
    }

    /// Lays the servers' memory out in slab classes as `geometry` says (memcached's page
    /// size, `-n`, `-f`, largest chunk, LRU maintainer, slab automove).
    pub fn geometry(mut self, geometry: crate::store::geometry::Geometry) -> Scenario {
        self.geometry = Some(geometry);
        self
    }

    /// Requires these probes ([`crate::kv::Kv::probe`]) to be hit by some run of a check:
    /// a check that reaches none of one is `unknown` (its runs did not test that place).
    ///
    /// A structure that declares its probes ([`crate::model::Model::probes`]) is held only
    /// to the required ones it declares, so that one scenario can require a place that
    /// only some variants' code has (the fixed lock's "cas lost"); a structure that
    /// declares none is held to them all.
    pub fn sometimes(mut self, probes: &[&str]) -> Scenario {
        self.sometimes = probes.iter().map(|p| p.to_string()).collect();
        self
    }

    /// The probes this scenario requires of a structure that declares `catalog`.
    pub fn required<'s>(&'s self, catalog: &[&str]) -> Vec<&'s str> {
        self.sometimes
            .iter()
            .map(String::as_str)
            .filter(|p| catalog.is_empty() || catalog.contains(p))
            .collect()
    }

    /// The first probe this scenario requires of a structure that declares `catalog`
    /// which `hits` counts no hit of.
    pub fn unreached(
        &self,
        catalog: &[&str],
        hits: &std::collections::BTreeMap<String, u64>,
    ) -> Option<&str> {
        self.required(catalog)
            .into_iter()
            .find(|p| hits.get(*p).copied().unwrap_or(0) == 0)
    }

    /// Makes each [`crate::kv::Kv::work`] call of the structure take between `min_ms` and
    /// `max_ms` of virtual time (drawn per call from the run's seed), as a critical
    /// section's real work does: leases and expiries run on meanwhile.
    pub fn work_ms(mut self, min_ms: u64, max_ms: u64) -> Scenario {
        self.work_ms = [min_ms.min(max_ms), max_ms.max(min_ms)];
        self
    }
}
