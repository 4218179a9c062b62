//! The workload as choices: every operation [`Model::op`] can give for a client and an
//! index, found by running it with a scripted [`SimRng`] over every value of every choice
//! it makes (an odometer over the recorded choices, as Hypothesis and proptest treat
//! randomness). A choice among at most [`EVERY_VALUE_UP_TO`] values takes every value (a
//! `below(20)` that picks the kind of operation covers every kind); a choice among more
//! takes [`Scope::draw_values`](super::Scope) values spread over its range (both ends
//! included), so that a sleep of 500..=3000 ms does not become 2,501 branches.

use super::Scope;
use crate::model::Model;
use crate::rng::SimRng;
use crate::sim::op_rng_seed;
use std::collections::HashSet;

/// Most alternatives of one operation of the workload.
pub(crate) const MAX_ALTERNATIVES: usize = 4096;

/// Choices among at most this many values take every value.
pub const EVERY_VALUE_UP_TO: u64 = 32;

/// Most runs of [`Model::op`] while enumerating one operation's alternatives.
const MAX_RUNS: usize = 100_000;

/// One alternative of an operation: the operation and the choice values that give it.
pub(crate) type Alternative<Op> = (Op, Vec<u64>);

/// An operation's alternatives, and whether some choice was spread.
pub(crate) type Alternatives<Op> = (Vec<Alternative<Op>>, bool);

/// The alternatives of one client's operation `index`, each once (the first values that
/// give it), in the order of the odometer; and whether some choice was spread (not every
/// value of it taken).
/// The scope gives the seed and how many values a choice takes.
pub(crate) fn alternatives<M: Model>(
    model: &M,
    scope: &Scope,
    client: usize,
    index: usize,
    max_alternatives: usize,
) -> Result<Alternatives<M::Op>, String> {
    let seed = scope.seed;
    let spread = scope.draw_values.max(2);
    let every = scope.every_value_bound().max(spread);
    let mut seen = HashSet::new();
    let mut out = Vec::new();
    let mut spread_any = false;
    let mut script: Vec<u64> = Vec::new();
    for _ in 0..MAX_RUNS {
        let mut rng = SimRng::scripted(script.clone(), op_rng_seed(seed, client, index));
        let op = model.op(client, index, &mut rng);
        let drawn = rng.drawn().to_vec();
        if seen.insert(op.clone()) {
            if out.len() == max_alternatives {
                return Err(format!(
                    "the workload is too large to enumerate: C{client}'s operation {index} has \
                     more than {max_alternatives} alternatives (use --draws to take fewer values \
                     of each choice)"
                ));
            }
            out.push((op, drawn.iter().map(|(v, _)| *v).collect()));
        }
        spread_any |= drawn.iter().any(|&(_, n)| n > every);
        // The odometer: the last choice that has a next value takes it; later ones restart.
        let next = drawn
            .iter()
            .enumerate()
            .rev()
            .find_map(|(k, &(v, n))| next_value(v, n, spread, every).map(|nv| (k, nv)));
        match next {
            Some((k, nv)) => {
                script = drawn[..k].iter().map(|(v, _)| *v).collect();
                script.push(nv);
            }
            None => return Ok((out, spread_any)),
        }
    }
    Err(format!(
        "the workload is too large to enumerate: C{client}'s operation {index} makes more than \
         {MAX_RUNS} combinations of choices (use --draws to take fewer values of each choice)"
    ))
}

/// The value after `v` of a choice among `n`: every value when `n` is at most `every`,
/// else `spread` values spread over `0..n`.
fn next_value(v: u64, n: u64, spread: u64, every: u64) -> Option<u64> {
    if n <= every {
        return (v + 1 < n).then_some(v + 1);
    }
    let at = |j: u64| (j as u128 * (n - 1) as u128 / (spread - 1) as u128) as u64;
    (0..spread).map(at).find(|&x| x > v)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::history::History;
    use crate::kv::{Kv, KvError};
    use crate::verdict::Verdict;

    struct Draws;

    /// Seed 1, choices of more than `every` values taking `draws` of them.
    fn scope(draws: u64, every: u64) -> Scope {
        let mut s = Scope::new(1, 1);
        s.draw_values = draws;
        s.every_value_up_to = every;
        s
    }

    impl Model for Draws {
        type Op = (bool, u64);
        type Ret = ();
        async fn run<K: Kv>(&self, _: &K, _: usize, _: &(bool, u64)) -> Result<(), KvError> {
            Ok(())
        }
        fn op(&self, _: usize, _: usize, rng: &mut SimRng) -> (bool, u64) {
            if rng.chance(0.5) {
                (true, rng.range_inclusive(500, 3000))
            } else {
                (false, rng.below(30) / 10)
            }
        }
        fn check(&self, _: &History<(bool, u64), ()>) -> Verdict {
            Verdict::Ok
        }
    }

    #[test]
    fn every_value_of_small_choices_and_spread_values_of_large_ones() {
        let (alts, spread) = alternatives(&Draws, &scope(4, EVERY_VALUE_UP_TO), 0, 0, 100).unwrap();
        let ops: Vec<_> = alts.iter().map(|(op, _)| *op).collect();
        assert_eq!(
            ops,
            [
                (false, 0),
                (false, 1),
                (false, 2),
                (true, 500),
                (true, 1333),
                (true, 2166),
                (true, 3000)
            ]
        );
        assert!(spread);
        // Each alternative's values replay it.
        for (op, values) in alts {
            assert_eq!(Draws.op(0, 0, &mut SimRng::scripted(values, 9)), op);
        }
        assert!(alternatives(&Draws, &scope(4, EVERY_VALUE_UP_TO), 0, 0, 6)
            .unwrap_err()
            .contains("more than 6 alternatives"));
    }

    #[test]
    fn a_lower_every_value_bound_spreads_small_choices_too() {
        // `below(30)` now takes 2 values (0 and 29: `/ 10` gives 0 and 2).
        let (alts, _) = alternatives(&Draws, &scope(2, 2), 0, 0, 100).unwrap();
        let ops: Vec<_> = alts.iter().map(|(op, _)| *op).collect();
        assert_eq!(ops, [(false, 0), (false, 2), (true, 500), (true, 3000)]);
    }
}
