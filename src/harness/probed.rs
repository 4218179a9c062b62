//! What the minimizer has learned of one target: the outcome of every run it probed.
//!
//! A simulated run is a pure function of its knobs, seed and choices, so a probe made
//! twice has the same outcome twice. The minimizer makes many such repeats: after every
//! reduction that helps it tries the others again (most are the same runs as before the
//! last one, when it only shrank the schedule), and the findings of one check shrink to
//! the same small runs. Over `kvsim check`'s default matrix about half of all probes
//! were repeats. [`Probed`] remembers each outcome so a repeat costs a lookup; the result
//! of a minimization does not change, and a repeat still counts as a probe (the probe
//! budget and the reported probe counts are the same as without it).

use crate::sim::SimConfig;
use crate::verdict::Verdict;
use rustc_hash::FxHashMap;

/// Most outcomes remembered: about 100 bytes each beside the choices (a few hundred
/// bytes more); past it, new outcomes are not remembered (probes run as without it).
pub const MAX_REMEMBERED: usize = 200_000;

/// One probed run: its configuration's number, its seed and its explicit choices.
type Run = (u32, u64, Option<Vec<u32>>);

/// How many of the configurations used last are compared by value before the `Debug`
/// text is made: a minimizer probes one configuration many times in a row (seeds, then
/// schedules) and switches among a few, and formatting the text cost about 5 % of
/// `kvsim check`.
const RECENT: usize = 4;

/// The outcomes of probed runs of one target (see the module docs).
#[derive(Debug, Default)]
pub struct Probed {
    /// Each distinct configuration seen, by its `Debug` text (exact: every field,
    /// floats round-trip), numbered.
    configs: FxHashMap<String, u32>,
    /// Each probed run → the property it violated, if any.
    outcomes: FxHashMap<Run, Option<String>>,
    /// The configurations used last with their numbers, the latest last (at most
    /// [`RECENT`]). Configurations equal by value make the same runs: the slab growth
    /// factor compares by its bits, and the fault probability is only compared with a
    /// draw (`SimRng::chance`), where `-0.0` and `0.0` alike never fault.
    recent: Vec<(SimConfig, u32)>,
}

impl Probed {
    /// Remembers nothing yet.
    pub fn new() -> Probed {
        Probed::default()
    }

    /// How many outcomes are remembered.
    pub fn len(&self) -> usize {
        self.outcomes.len()
    }

    /// Whether no outcome is remembered.
    pub fn is_empty(&self) -> bool {
        self.outcomes.is_empty()
    }

    /// The property the run (`config`, `seed`, `choices`) violates (`None`: it passes or
    /// ends otherwise), from memory or, the first time, from `run`.
    pub fn violated(
        &mut self,
        config: &SimConfig,
        seed: u64,
        choices: Option<&[u32]>,
        run: impl FnOnce() -> Verdict,
    ) -> Option<String> {
        let id = self.config_id(config);
        let key = (id, seed, choices.map(<[u32]>::to_vec));
        if let Some(known) = self.outcomes.get(&key) {
            return known.clone();
        }
        let violated = match run() {
            Verdict::Violation(v) => Some(v.property),
            _ => None,
        };
        if self.outcomes.len() < MAX_REMEMBERED {
            self.outcomes.insert(key, violated.clone());
        }
        violated
    }

    /// The number of `config`: from the recent ones by value, else by its `Debug` text.
    fn config_id(&mut self, config: &SimConfig) -> u32 {
        if let Some(i) = self.recent.iter().rposition(|(c, _)| c == config) {
            let hit = self.recent.remove(i);
            let id = hit.1;
            self.recent.push(hit);
            return id;
        }
        let next = self.configs.len() as u32;
        let id = *self.configs.entry(format!("{config:?}")).or_insert(next);
        if self.recent.len() == RECENT {
            self.recent.remove(0);
        }
        self.recent.push((config.clone(), id));
        id
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::Scenario;
    use crate::verdict::Violation;
    use std::cell::Cell;

    fn violation(property: &str) -> Verdict {
        Verdict::Violation(Violation::new(property, "r", Vec::new()))
    }

    #[test]
    fn a_repeat_is_answered_from_memory_and_anything_else_is_run() {
        let config = SimConfig::from_scenario(&Scenario::new("s", 2, 2));
        let mut other = config.clone();
        other.ops = 3;
        let mut p = Probed::new();
        let runs = Cell::new(0);
        let probe = |p: &mut Probed, c: &SimConfig, seed, choices: Option<&[u32]>, v| {
            p.violated(c, seed, choices, || {
                runs.set(runs.get() + 1);
                v
            })
        };
        let lin = || violation("linearizable");
        assert_eq!(
            probe(&mut p, &config, 1, Some(&[0, 1]), lin()),
            Some("linearizable".into())
        );
        // The same run: remembered, whatever the closure would say now.
        assert_eq!(
            probe(&mut p, &config, 1, Some(&[0, 1]), Verdict::Ok),
            Some("linearizable".into())
        );
        assert_eq!(runs.get(), 1);
        // Another seed, other choices, no choices, another config: each run once.
        assert_eq!(probe(&mut p, &config, 2, Some(&[0, 1]), Verdict::Ok), None);
        assert_eq!(probe(&mut p, &config, 1, Some(&[0]), Verdict::Ok), None);
        assert_eq!(
            probe(&mut p, &config, 1, None, lin()),
            Some("linearizable".into())
        );
        assert_eq!(probe(&mut p, &other, 1, Some(&[0, 1]), Verdict::Ok), None);
        assert_eq!(runs.get(), 5);
        assert_eq!(p.len(), 5);
        assert_eq!(probe(&mut p, &other, 1, Some(&[0, 1]), lin()), None);
        assert_eq!(runs.get(), 5);
    }

    #[test]
    fn configurations_past_the_recent_ones_are_still_told_apart_and_remembered() {
        let base = SimConfig::from_scenario(&Scenario::new("s", 2, 2));
        let configs: Vec<SimConfig> = (1..=RECENT + 2)
            .map(|ops| {
                let mut c = base.clone();
                c.ops = ops;
                c
            })
            .collect();
        let mut p = Probed::new();
        let runs = Cell::new(0);
        for round in 0..2 {
            for (i, c) in configs.iter().enumerate() {
                // The outcome names the configuration: a mix-up would answer another's.
                let name = format!("p{i}");
                let got = p.violated(c, 7, None, || {
                    runs.set(runs.get() + 1);
                    violation(&name)
                });
                assert_eq!(got, Some(name), "round {round}");
            }
        }
        assert_eq!(runs.get(), configs.len());
    }
}
