//! The simulator's strategies: how a run chooses its next step (random walk, swarm, PCT,
//! or a replay of recorded choices), with the fairness rule every strategy obeys.

use super::runner::Runner;
use super::world::FaultAction;
use crate::model::Model;
use crate::rng::SimRng;
use crate::scenario::{FaultKind, Strategy};

/// How choices are made in this run.
pub(crate) enum Chooser {
    /// Random walk (also swarm, after its draw of faults and rate).
    Random { rng: SimRng },
    /// PCT: highest priority runnable client; priorities drop at change points.
    Pct {
        rng: SimRng,
        priorities: Vec<u64>,
        change_points: Vec<u32>,
        next_low: u64,
    },
    /// Replay of recorded choices; when they run out, runnable clients in turn.
    Replay {
        choices: Vec<u32>,
        pos: usize,
        next: usize,
    },
}

impl<'m, 'c, M: Model> Runner<'m, 'c, M> {
    /// Builds the chooser for a fresh run of `strategy` (swarm also draws its faults here).
    pub(crate) fn chooser_for(&mut self, strategy: Strategy) -> Chooser {
        let mut rng = SimRng::derive(self.seed, 0);
        match strategy {
            Strategy::Random => Chooser::Random { rng },
            Strategy::Swarm => {
                let all = self.cfg.faults.kinds().to_vec();
                if !all.is_empty() {
                    let mut on: Vec<FaultKind> =
                        all.iter().copied().filter(|_| rng.chance(0.5)).collect();
                    if on.is_empty() {
                        on.push(all[rng.index(all.len())]);
                    }
                    self.faults_on = on;
                }
                const RATES: [f64; 4] = [0.01, 0.03, 0.1, 0.25];
                self.fault_probability = RATES[rng.index(RATES.len())];
                Chooser::Random { rng }
            }
            Strategy::Pct { depth } => {
                let n = self.cfg.clients as u64;
                let d = depth.max(1) as u64;
                // Distinct initial priorities d..d+n in random order.
                let mut priorities: Vec<u64> = (0..n).map(|i| d + i).collect();
                for i in (1..priorities.len()).rev() {
                    let j = rng.index(i + 1);
                    priorities.swap(i, j);
                }
                let k = (self.cfg.clients * self.cfg.ops * 8).max(8) as u64;
                let mut change_points: Vec<u32> =
                    (1..d).map(|_| rng.range_inclusive(1, k) as u32).collect();
                change_points.sort_unstable();
                Chooser::Pct {
                    rng,
                    priorities,
                    change_points,
                    next_low: d - 1,
                }
            }
        }
    }

    pub(super) fn choose(&mut self, chooser: &mut Chooser, faults: &mut Vec<FaultAction>) -> u32 {
        let n = self.world.clients.len() as u32;
        // Fairness, whatever the strategy: a client that has been runnable for longer than
        // the bound is stepped now. A longer stall is a pause, and only the `pause` fault
        // injects one (so reports show it). A replay consumes the recorded choice, which a
        // recording made under the same rule holds this client.
        if let Some(c) = self.starved() {
            if let Chooser::Replay { pos, choices, .. } = chooser {
                if let Some(&choice) = choices.get(*pos) {
                    *pos += 1;
                    // A recording may break a tie between clients that have waited
                    // equally long either way (`kvsim explore` under symmetry does).
                    let tied = (choice as usize) < self.world.clients.len()
                        && self.runnable.contains(&(choice as usize))
                        && self.world.ties_with(c, choice as usize);
                    if tied {
                        return choice;
                    }
                }
            }
            return c as u32;
        }
        match chooser {
            Chooser::Replay { choices, pos, next } => {
                // Past the recorded choices, or where a recorded choice no longer fits,
                // clients take turns (round robin): a fair scheduler, so that a shrunk run
                // never starves a client (which would look like a pause to the others).
                let fair = |runnable: &[usize], next: &mut usize| {
                    let pick = runnable
                        .iter()
                        .copied()
                        .find(|&c| c >= *next)
                        .unwrap_or(runnable[0]);
                    *next = pick + 1;
                    pick as u32
                };
                let Some(&c) = choices.get(*pos) else {
                    return fair(&self.runnable, next);
                };
                *pos += 1;
                if c < n {
                    if self.runnable.contains(&(c as usize)) {
                        return c;
                    }
                    return fair(&self.runnable, next);
                }
                self.fault_actions(faults);
                if faults.is_empty() {
                    return fair(&self.runnable, next);
                }
                n + (c - n) % faults.len() as u32
            }
            Chooser::Random { rng } => {
                if let Some(f) = self.pick_fault(rng, faults) {
                    return n + f;
                }
                self.runnable[rng.index(self.runnable.len())] as u32
            }
            Chooser::Pct {
                rng,
                priorities,
                change_points,
                next_low,
            } => {
                if let Some(f) = self.pick_fault(rng, faults) {
                    return n + f;
                }
                let best = *self
                    .runnable
                    .iter()
                    .max_by_key(|&&c| priorities[c])
                    .expect("runnable is not empty");
                if change_points.first() == Some(&self.steps) {
                    change_points.remove(0);
                    priorities[best] = *next_low;
                    *next_low = next_low.saturating_sub(1);
                    return *self
                        .runnable
                        .iter()
                        .max_by_key(|&&c| priorities[c])
                        .expect("runnable is not empty") as u32;
                }
                best as u32
            }
        }
    }

    fn pick_fault(&self, rng: &mut SimRng, faults: &mut Vec<FaultAction>) -> Option<u32> {
        if self.faults_on.is_empty()
            || self.faults_used() >= self.cfg.fault_budget
            || !rng.chance(self.fault_probability)
        {
            return None;
        }
        self.fault_actions(faults);
        if faults.is_empty() {
            return None;
        }
        // Pick a kind uniformly among those possible now, then an action of that kind.
        let mut kinds: Vec<FaultKind> = faults.iter().map(FaultAction::kind).collect();
        kinds.dedup();
        let kind = kinds[rng.index(kinds.len())];
        let of_kind: Vec<usize> = (0..faults.len())
            .filter(|&i| faults[i].kind() == kind)
            .collect();
        Some(of_kind[rng.index(of_kind.len())] as u32)
    }
}
