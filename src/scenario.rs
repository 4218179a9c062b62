//! Scenarios: how many clients, how many operations, which faults, which strategy.

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
}

impl FaultKind {
    /// Every fault kind, in the CLI's order.
    pub const ALL: [FaultKind; 9] = [
        FaultKind::Evict,
        FaultKind::Lru,
        FaultKind::Expire,
        FaultKind::Skew,
        FaultKind::Restart,
        FaultKind::Crash,
        FaultKind::Lose,
        FaultKind::Pause,
        FaultKind::ShardFail,
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
}

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
            "unknown fault \"bogus\": expected one of evict, lru, expire, skew, restart, crash, lose, pause, shard-fail, or none"
        );
    }
}
