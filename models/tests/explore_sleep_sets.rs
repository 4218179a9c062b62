//! The sleep-set reduction (`kvsim explore --sleep-sets`) on every registered structure:
//! the same verdict as a search without it, and where the search completes, the very
//! states it visits (the same unique count) with fewer generated, exactly as many fewer
//! as the steps it reports asleep.

use kvsim::explore::{Scope, SearchLimits};
use kvsim::Verdict;
use kvsim_models::registry::registry;

/// Two clients × two operations, the seed's workload, no faults, history times left out
/// (the time-free search the reduction needs, where the model allows it).
fn scope() -> Scope {
    let mut s = Scope::new(2, 2);
    s.seed = 1;
    s.times = false;
    s.seeded_workload = true;
    s
}

#[test]
fn every_structure_keeps_its_verdict_and_its_states_under_sleep_sets() {
    let plain_limits = SearchLimits {
        max_states: 300_000,
        max_memory_bytes: 2 << 30,
        ..SearchLimits::default()
    };
    let reduced_limits = SearchLimits {
        reduction: true,
        ..plain_limits.clone()
    };
    let (mut compared, mut reduced_any) = (0, 0);
    for entry in registry() {
        for (variant, target) in entry.targets() {
            let name = format!("{}/{}", entry.name, variant.name());
            let mut scope = scope();
            // The registry's own scope where it needs more than the default, e.g. the
            // message queue's steps per operation.
            scope.max_op_steps = scope.max_op_steps.max(entry.explore.max_op_steps);
            let plain = target.explore(&scope, &plain_limits);
            let reduced = target.explore(&scope, &reduced_limits);
            assert_eq!(
                reduced.verdict.name(),
                plain.verdict.name(),
                "{name}: the same verdict"
            );
            if plain.verdict == Verdict::Ok {
                assert_eq!(reduced.unique_states, plain.unique_states, "{name}");
                assert_eq!(
                    reduced.total_states + reduced.slept,
                    plain.total_states,
                    "{name}: the steps left asleep"
                );
                compared += 1;
                reduced_any += usize::from(reduced.reduced && reduced.slept > 0);
            }
        }
    }
    assert!(compared >= 8, "{compared} searches compared");
    assert!(reduced_any >= 4, "{reduced_any} searches reduced");
}
