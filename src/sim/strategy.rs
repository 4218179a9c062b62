//! The simulator's strategies: how a run chooses its next step (random walk, swarm, PCT,
//! or a replay of recorded choices), with the fairness rule every strategy obeys.

use super::config::SimConfig;
use crate::fault::{Fault, Pending};
use crate::rng::SimRng;
use crate::scenario::{FaultKind, Strategy};

/// What a chooser asks of the run it chooses for (the simulator's runner answers).
pub(super) trait Choosing {
    /// Clients in the run.
    fn clients(&self) -> usize;
    /// The clients that can be stepped now, in order.
    fn runnable(&self) -> &[usize];
    /// The client the fairness rule steps now, if one has waited too long.
    fn starved(&self) -> Option<usize>;
    /// Whether client `c` has waited as long as `forced`, the starved client (either may
    /// be stepped).
    fn ties_with(&self, forced: usize, c: usize) -> bool;
    /// The faults the world can take now (none once the run's budget is spent).
    fn fault_actions(&self, out: &mut Vec<Fault<Pending>>);
    /// Whether a fault may be drawn at all: some kind is on and the budget is not spent.
    fn may_fault(&self) -> bool;
    /// The chance that a random step is a fault.
    fn fault_probability(&self) -> f64;
    /// Steps taken so far.
    fn steps(&self) -> u32;
}

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

impl Chooser {
    /// The chooser for a fresh run of `strategy` under `cfg` from `seed` (swarm also draws
    /// the run's fault kinds and rate here, into `faults_on` and `fault_probability`).
    pub(super) fn new(
        strategy: Strategy,
        seed: u64,
        cfg: &SimConfig,
        faults_on: &mut Vec<FaultKind>,
        fault_probability: &mut f64,
    ) -> Chooser {
        let mut rng = SimRng::derive(seed, 0);
        match strategy {
            Strategy::Random => Chooser::Random { rng },
            Strategy::Swarm => {
                let all = cfg.faults.kinds().to_vec();
                if !all.is_empty() {
                    let mut on: Vec<FaultKind> =
                        all.iter().copied().filter(|_| rng.chance(0.5)).collect();
                    if on.is_empty() {
                        on.push(all[rng.index(all.len())]);
                    }
                    *faults_on = on;
                }
                const RATES: [f64; 4] = [0.01, 0.03, 0.1, 0.25];
                *fault_probability = RATES[rng.index(RATES.len())];
                Chooser::Random { rng }
            }
            Strategy::Pct { depth } => {
                let n = cfg.clients as u64;
                let d = depth.max(1) as u64;
                // Distinct initial priorities d..d+n in random order.
                let mut priorities: Vec<u64> = (0..n).map(|i| d + i).collect();
                for i in (1..priorities.len()).rev() {
                    let j = rng.index(i + 1);
                    priorities.swap(i, j);
                }
                let k = (cfg.clients * cfg.ops * 8).max(8) as u64;
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

    /// The next step of `run`: a client (`0..clients`) or a fault (`clients + i`, the
    /// `i`-th of `faults`, which this fills as needed).
    pub(super) fn choose(&mut self, run: &impl Choosing, faults: &mut Vec<Fault<Pending>>) -> u32 {
        let n = run.clients() as u32;
        // Fairness, whatever the strategy: a client that has been runnable for longer than
        // the bound is stepped now. A longer stall is a pause, and only the `pause` fault
        // injects one (so reports show it). A replay consumes the recorded choice, which a
        // recording made under the same rule holds this client.
        if let Some(c) = run.starved() {
            if let Chooser::Replay { pos, choices, .. } = self {
                if let Some(&choice) = choices.get(*pos) {
                    *pos += 1;
                    // A recording may break a tie between clients that have waited
                    // equally long either way (`kvsim explore` under symmetry does).
                    let tied = (choice as usize) < run.clients()
                        && run.runnable().contains(&(choice as usize))
                        && run.ties_with(c, choice as usize);
                    if tied {
                        return choice;
                    }
                }
            }
            return c as u32;
        }
        match self {
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
                    return fair(run.runnable(), next);
                };
                *pos += 1;
                if c < n {
                    if run.runnable().contains(&(c as usize)) {
                        return c;
                    }
                    return fair(run.runnable(), next);
                }
                run.fault_actions(faults);
                if faults.is_empty() {
                    return fair(run.runnable(), next);
                }
                n + (c - n) % faults.len() as u32
            }
            Chooser::Random { rng } => {
                if let Some(f) = pick_fault(run, rng, faults) {
                    return n + f;
                }
                run.runnable()[rng.index(run.runnable().len())] as u32
            }
            Chooser::Pct {
                rng,
                priorities,
                change_points,
                next_low,
            } => {
                if let Some(f) = pick_fault(run, rng, faults) {
                    return n + f;
                }
                let best = *run
                    .runnable()
                    .iter()
                    .max_by_key(|&&c| priorities[c])
                    .expect("runnable is not empty");
                if change_points.first() == Some(&run.steps()) {
                    change_points.remove(0);
                    priorities[best] = *next_low;
                    *next_low = next_low.saturating_sub(1);
                    return *run
                        .runnable()
                        .iter()
                        .max_by_key(|&&c| priorities[c])
                        .expect("runnable is not empty") as u32;
                }
                best as u32
            }
        }
    }
}

/// A random chooser's fault, if it draws one now: the index of the action in `faults`.
fn pick_fault(
    run: &impl Choosing,
    rng: &mut SimRng,
    faults: &mut Vec<Fault<Pending>>,
) -> Option<u32> {
    if !run.may_fault() || !rng.chance(run.fault_probability()) {
        return None;
    }
    run.fault_actions(faults);
    if faults.is_empty() {
        return None;
    }
    // Pick a kind uniformly among those possible now, then an action of that kind.
    let mut kinds: Vec<FaultKind> = faults.iter().filter_map(Fault::kind).collect();
    kinds.dedup();
    let kind = kinds[rng.index(kinds.len())];
    let of_kind: Vec<usize> = (0..faults.len())
        .filter(|&i| faults[i].kind() == Some(kind))
        .collect();
    Some(of_kind[rng.index(of_kind.len())] as u32)
}
