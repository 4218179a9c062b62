//! The message-queue model under random schedules and faults (in the tests' own small
//! world), against the expectations of its scenarios.

mod message_queue_support;

use kvsim::model::Model;
use kvsim::scenario::FaultKind;
use kvsim::verdict::Verdict;
use kvsim_models::message_queue::{scenarios, Expect, MessageQueueModel, Variant};
use message_queue_support::{run, Faults};

fn violations(variant: Variant, name: &str, seeds: u64) -> Vec<(u64, Verdict)> {
    let exp = scenarios()
        .into_iter()
        .find(|e| e.scenario.name == name)
        .expect("scenario");
    let s = &exp.scenario;
    let faults = Faults {
        crash: s.faults.has(FaultKind::Crash),
        restart: s.faults.has(FaultKind::Restart),
        persistent: s.persistent,
        evict: s.faults.has(FaultKind::Evict),
        lose: s.faults.has(FaultKind::Lose),
        budget: s.fault_budget,
    };
    let model = MessageQueueModel::new(variant);
    (0..seeds)
        .filter_map(|seed| {
            let (history, _) = run(&model, s.clients, s.ops, faults, seed);
            let v = model.check(&history);
            v.is_violation().then_some((seed, v))
        })
        .collect()
}

#[test]
fn survey() {
    for exp in scenarios() {
        for variant in [Variant::Published, Variant::Fixed] {
            let found = violations(variant, &exp.scenario.name, 300);
            eprintln!(
                "{:20} {:10} expected {:?}: {} of 300 {}",
                exp.scenario.name,
                variant.name(),
                exp.of(variant),
                found.len(),
                match found.first() {
                    Some((seed, v)) => format!("seed {seed}: {v}"),
                    None => "no violation".to_string(),
                }
            );
        }
    }
}

#[test]
#[ignore]
fn debug_trace() {
    let variant = match std::env::var("V").as_deref() {
        Ok("published") => Variant::Published,
        _ => Variant::Fixed,
    };
    let seed: u64 = std::env::var("SEED").unwrap().parse().unwrap();
    let name = std::env::var("SC").unwrap();
    let exp = scenarios().into_iter().find(|e| e.scenario.name == name).unwrap();
    let s = &exp.scenario;
    let faults = Faults {
        crash: s.faults.has(FaultKind::Crash),
        restart: s.faults.has(FaultKind::Restart),
        persistent: s.persistent,
        evict: s.faults.has(FaultKind::Evict),
        lose: s.faults.has(FaultKind::Lose),
        budget: s.fault_budget,
    };
    let model = MessageQueueModel::new(variant);
    let (history, world) = run(&model, s.clients, s.ops, faults, seed);
    for op in &history.ops {
        eprintln!("{:?}", op);
    }
    for t in world.trace.borrow().iter() {
        eprintln!("{t}");
    }
    eprintln!("{}", model.check(&history));
}
