//! The simulator: finding a lost update, determinism, replay tokens, and every fault's
//! effect in a trace.

use kvsim::harness::sweep::{self, RunBudget};
use kvsim::sim::{self, Delivery, Event, Fault, SimConfig, Token};
use kvsim::Model;
use kvsim::SimRng;
use kvsim::{FaultKind, Scenario, Strategy};
use kvsim::{History, Outcome};
use kvsim::{Kv, KvError};
use kvsim::{Verdict, Violation};

/// A counter whose increment returns the new value; `by_incr` picks the atomic `incr`,
/// otherwise get-then-set (the lost update).
struct Counter {
    by_incr: bool,
}

impl Model for Counter {
    type Op = ();
    type Ret = u64;

    async fn setup<K: Kv>(&self, kv: &K) -> Result<(), KvError> {
        kv.set(b"n", b"0", 0).await?;
        Ok(())
    }

    async fn run<K: Kv>(&self, kv: &K, _client: usize, _op: &()) -> Result<u64, KvError> {
        if self.by_incr {
            Ok(kv.incr(b"n", 1).await?.unwrap_or(0))
        } else {
            let v: u64 = match kv.get(b"n").await? {
                Some(d) => String::from_utf8_lossy(&d).trim().parse().unwrap_or(0),
                None => 0,
            };
            kv.set(b"n", (v + 1).to_string().as_bytes(), 0).await?;
            Ok(v + 1)
        }
    }

    fn op(&self, _client: usize, _index: usize, _rng: &mut SimRng) {}

    /// Each completed increment returns a distinct new value (two equal ones: an update
    /// was lost).
    fn check(&self, history: &History<(), u64>) -> Verdict {
        let mut seen = std::collections::BTreeMap::new();
        for (i, op) in history.ops.iter().enumerate() {
            if let Outcome::Ok(v) = op.outcome {
                if let Some(j) = seen.insert(v, i) {
                    return Verdict::Violation(Violation::new(
                        "linearizability",
                        format!("two increments both returned {v}: an update was lost"),
                        vec![j, i],
                    ));
                }
            }
        }
        Verdict::Ok
    }
}

fn config(clients: usize, ops: usize, strategy: Strategy) -> SimConfig {
    SimConfig::from_scenario(&Scenario::new("t", clients, ops).strategy(strategy))
}

fn limits(runs: u64) -> RunBudget {
    RunBudget {
        seed: 1,
        runs,
        time_limit: None,
        shard: kvsim::harness::sweep::Shard::ALL,
        min_runs: None,
        clock: kvsim::harness::sweep::Clock::Wall,
    }
}

#[test]
fn random_walk_finds_the_lost_update_of_get_then_set() {
    let model = Counter { by_incr: false };
    let r = sweep::sweep(&model, &config(2, 2, Strategy::Random), &limits(1000));
    assert!(r.verdict.is_violation(), "{}", r.verdict);
    // A check keeps going after its first violation: every run is made, and the
    // violating ones are grouped (one defect: one property, one reason class).
    assert_eq!(r.runs, 1000);
    assert!(r.violating_runs > 20, "found in {} runs", r.violating_runs);
    assert_eq!(
        r.groups.iter().map(|g| g.runs).sum::<u64>(),
        r.violating_runs
    );
    assert_eq!(r.groups.len(), 1, "{:#?}", r.groups);
    let (_, out) = r.failure.expect("a violation comes with its run");
    assert!(!out.trace.is_empty());
}

/// Shards of a check do its runs between them, each once: their runs, violating runs,
/// groups and kv calls add up to the whole check's.
#[test]
fn shards_do_every_run_of_a_check_once() {
    use kvsim::harness::sweep::Shard;
    let model = Counter { by_incr: false };
    let cfg = config(2, 2, Strategy::Random);
    let whole = sweep::sweep(&model, &cfg, &limits(301));
    let shards: Vec<_> = (1..=4)
        .map(|i| {
            let budget = RunBudget {
                shard: Shard::parse(&format!("{i}/4")).unwrap(),
                ..limits(301)
            };
            sweep::sweep(&model, &cfg, &budget)
        })
        .collect();
    assert_eq!(
        shards.iter().map(|r| r.runs).collect::<Vec<_>>(),
        [76, 75, 75, 75]
    );
    let sum = |f: fn(&sweep::CheckResult<Counter>) -> u64| shards.iter().map(f).sum::<u64>();
    assert_eq!(sum(|r| r.runs), whole.runs);
    assert_eq!(sum(|r| r.violating_runs), whole.violating_runs);
    assert_eq!(sum(|r| r.kv_calls), whole.kv_calls);
    assert_eq!(
        sum(|r| r.groups.iter().map(|g| g.runs).sum()),
        whole.groups.iter().map(|g| g.runs).sum::<u64>()
    );
    let mut indices: Vec<u64> = (0..4)
        .flat_map(|index| Shard { index, count: 4 }.runs(301))
        .collect();
    indices.sort_unstable();
    assert_eq!(indices, (0..301).collect::<Vec<_>>());
    // A shard with none of the runs has no evidence: unknown, not ok.
    let empty = RunBudget {
        shard: Shard::parse("4/4").unwrap(),
        ..limits(3)
    };
    let none = sweep::sweep(&Counter { by_incr: true }, &cfg, &empty);
    assert_eq!(none.runs, 0);
    assert!(
        matches!(none.verdict, Verdict::Unknown(_)),
        "{}",
        none.verdict
    );
    for bad in ["0/4", "5/4", "1/0", "1", "a/b", "1/2000000"] {
        assert!(Shard::parse(bad).is_err(), "{bad}");
    }
    assert_eq!(Shard::parse("3/4").unwrap().to_string(), "3/4");
}

#[test]
fn pct_finds_the_lost_update_too() {
    let model = Counter { by_incr: false };
    let r = sweep::sweep(
        &model,
        &config(2, 2, Strategy::Pct { depth: 2 }),
        &limits(1000),
    );
    assert!(r.verdict.is_violation(), "{}", r.verdict);
}

#[test]
fn incr_counter_never_loses_an_update_without_faults() {
    let model = Counter { by_incr: true };
    for strategy in [
        Strategy::Random,
        Strategy::Pct { depth: 3 },
        Strategy::Swarm,
    ] {
        let r = sweep::sweep(&model, &config(3, 3, strategy), &limits(2000));
        assert_eq!(r.verdict, Verdict::Ok, "{strategy}");
        assert_eq!(r.runs, 2000);
    }
}

#[test]
fn a_thousand_seeds_give_identical_traces_twice() {
    let model = Counter { by_incr: false };
    let mut cfg = config(3, 2, Strategy::Random);
    cfg.faults = kvsim::FaultSet::of(&FaultKind::ALL);
    cfg.shards = 2;
    cfg.record_trace = true;
    let hashes = |_: ()| -> Vec<u64> {
        (0..1000)
            .map(|seed| {
                let out = sim::run(&model, &cfg, seed, None);
                let t = sim::Trace { steps: out.trace };
                t.fingerprint() ^ out.choices.len() as u64
            })
            .collect()
    };
    let a = hashes(());
    let b = hashes(());
    assert_eq!(a, b);
    // Different seeds explore different runs.
    let distinct: std::collections::BTreeSet<_> = a.iter().collect();
    assert!(
        distinct.len() > 100,
        "only {} distinct traces",
        distinct.len()
    );
}

#[test]
fn replay_tokens_reproduce_runs_exactly() {
    let model = Counter { by_incr: false };
    let mut cfg = config(3, 2, Strategy::Swarm);
    cfg.faults = kvsim::FaultSet::of(&[FaultKind::Crash, FaultKind::Lose]);
    cfg.record_trace = true;
    for seed in 0..50 {
        let out = sim::run(&model, &cfg, seed, None);
        // By seed.
        let token = Token {
            target: "counter/getset".into(),
            scenario: "t".into(),
            config: cfg.clone(),
            seed,
            choices: None,
        };
        let back = Token::decode(&token.encode()).unwrap();
        let mut replay_cfg = back.config.clone();
        replay_cfg.record_trace = true;
        let again = sim::run(&model, &replay_cfg, back.seed, None);
        assert_eq!(out.trace, again.trace, "seed {seed}");
        // By choices.
        let by_choices = sim::run(&model, &replay_cfg, seed, Some(&out.choices));
        assert_eq!(out.trace, by_choices.trace, "seed {seed}");
        assert_eq!(out.choices, by_choices.choices);
    }
}

/// A probe: sets and gets a few keys (with an expiry), reading its own clock.
struct Probe;

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
enum ProbeOp {
    Set(u8),
    Get(u8),
    Sleep,
}

impl Model for Probe {
    type Op = ProbeOp;
    type Ret = Option<Vec<u8>>;

    async fn setup<K: Kv>(&self, kv: &K) -> Result<(), KvError> {
        for k in [b"a", b"b", b"c"] {
            kv.set(k, b"init", 5).await?;
        }
        Ok(())
    }

    async fn run<K: Kv>(&self, kv: &K, _c: usize, op: &ProbeOp) -> Result<Self::Ret, KvError> {
        match op {
            ProbeOp::Set(k) => {
                kv.set(&[*k], kv.now_ms().to_string().as_bytes(), 5).await?;
                Ok(None)
            }
            ProbeOp::Get(k) => kv.get(&[*k]).await,
            ProbeOp::Sleep => {
                kv.sleep_ms(100).await;
                Ok(None)
            }
        }
    }

    fn op(&self, _client: usize, index: usize, rng: &mut SimRng) -> ProbeOp {
        let k = b"abc"[rng.index(3)];
        match index % 3 {
            0 => ProbeOp::Get(k),
            1 => ProbeOp::Set(k),
            _ => ProbeOp::Sleep,
        }
    }

    fn check(&self, _history: &History<ProbeOp, Self::Ret>) -> Verdict {
        Verdict::Ok
    }
}

/// Runs the probe with one fault kind at probability 0.3 until some run shows `want`.
fn find_fault(
    kind: FaultKind,
    want: impl Fn(&sim::RunOutput<Probe>) -> bool,
) -> sim::RunOutput<Probe> {
    find_fault_timed(kind, 0, want)
}

fn faults(out: &sim::RunOutput<Probe>) -> Vec<&Fault> {
    out.trace
        .iter()
        .filter_map(|s| match &s.event {
            Event::Fault(f) => Some(f),
            _ => None,
        })
        .collect()
}

fn get_missed_after(out: &sim::RunOutput<Probe>, at: usize) -> bool {
    out.trace[at..].iter().any(|s| {
        matches!(&s.event, Event::Call { command, delivery: Delivery::Replied(kvsim::command::Reply::Values(v)), .. }
            if command.verb() == "get" && v.is_empty())
    })
}

fn fault_index(out: &sim::RunOutput<Probe>, f: impl Fn(&Fault) -> bool) -> Option<usize> {
    out.trace
        .iter()
        .position(|s| matches!(&s.event, Event::Fault(x) if f(x)))
}

#[test]
fn evict_removes_a_key_a_later_get_misses() {
    let out = find_fault(FaultKind::Evict, |o| {
        fault_index(o, |f| matches!(f, Fault::Evict { .. })).is_some_and(|i| get_missed_after(o, i))
    });
    assert!(faults(&out)
        .iter()
        .any(|f| f.to_string().starts_with("evict ")));
}

/// A class whose pages are all taken evicts from its own tail, with no neighbour: at a
/// geometry of 192-byte pages (one class of 96-byte chunks, two per page) and 160 bytes of
/// memory, the class gets its first page above the limit, as memcached's does, and no more;
/// Probe's three keys cannot all stay, and each eviction names the class it pressed.
#[test]
fn lru_memory_pressure_evicts_on_its_own() {
    let mut cfg = SimConfig::from_scenario(&Scenario::new("f", 2, 6).faults(&[FaultKind::Lru]));
    cfg.memory_limit = Some(160);
    cfg.neighbour_bytes = 0;
    cfg.neighbour_max_bytes = 0;
    cfg.geometry = kvsim::store::geometry::Geometry {
        page_size: 192,
        slab_chunk_max: 96,
        ..sim::lru_geometry()
    };
    cfg.record_trace = true;
    let out = sim::run(&Probe, &cfg, 3, None);
    let classes: Vec<usize> = faults(&out)
        .iter()
        .filter_map(|f| match f {
            Fault::LruEvict { class, .. } => Some(*class),
            _ => None,
        })
        .collect();
    assert!(!classes.is_empty(), "{:#?}", out.trace);
    assert!(classes.iter().all(|c| *c == 1), "{classes:?}");
}

/// The `lru` fault's default: a memory limit and a noisy neighbour. Probe's three keys fit
/// on their own; a neighbour whose items fall in Probe's slab class (18-byte values: 96-byte
/// items, class 1) pushes them out, and the trace names each key evicted (never the
/// neighbour's). Without the LRU maintainer (`-o no_lru_maintainer`) memcached keeps one
/// LRU per class that a hit bumps at most once a minute (`ITEM_UPDATE_INTERVAL`), so within
/// a run the evicted key is, of Probe's keys held then, the one set longest ago.
#[test]
fn lru_with_a_noisy_neighbour_evicts_the_structures_keys_oldest_first() {
    let scenario = Scenario::new("f", 2, 6).faults(&[FaultKind::Lru]);
    let mut cfg = SimConfig::from_scenario(&scenario);
    assert_eq!(cfg.memory_limit, Some(sim::DEFAULT_LRU_LIMIT));
    assert_eq!(cfg.neighbour_bytes, sim::DEFAULT_NEIGHBOUR_BYTES);
    assert_eq!(cfg.geometry, sim::lru_geometry());
    // One page (ten 96-byte chunks) for Probe's class, so that its few calls see evictions.
    cfg.memory_limit = Some(1024);
    cfg.neighbour_bytes = 18;
    cfg.neighbour_max_bytes = 18;
    cfg.geometry.lru_maintainer = false;
    cfg.record_trace = true;
    let evictions = |cfg: &SimConfig, seed: u64| -> Vec<(usize, Vec<u8>, usize)> {
        let out = sim::run(&Probe, cfg, seed, None);
        out.trace
            .iter()
            .enumerate()
            .filter_map(|(i, s)| match &s.event {
                Event::Fault(Fault::LruEvict { key, class, .. }) => Some((i, key.clone(), *class)),
                _ => None,
            })
            .collect()
    };
    let mut seen = 0;
    for seed in 1..20 {
        let out = sim::run(&Probe, &cfg, seed, None);
        for (i, key, class) in evictions(&cfg, seed) {
            seen += 1;
            assert!([&b"a"[..], b"b", b"c"].contains(&&key[..]), "{key:?}");
            assert_eq!(class, 1, "seed {seed}: {key:?} evicted from class {class}");
            // A key's last link is its last set, if no eviction of it came after.
            let last_set = |k: &[u8]| {
                let set = out.trace[..i].iter().rposition(|s| match &s.event {
                    Event::Call {
                        command,
                        delivery: Delivery::Replied(_),
                        ..
                    } => command.first_key() == Some(k) && command.verb() == "set",
                    _ => false,
                })?;
                let gone = out.trace[set..i].iter().any(|s| {
                    matches!(&s.event, Event::Fault(Fault::LruEvict { key, .. }) if key[..] == *k)
                });
                (!gone).then_some(set)
            };
            let t = last_set(&key).expect("the evicted key was held");
            for k in [&b"a"[..], b"b", b"c"]
                .into_iter()
                .filter(|k| **k != key[..])
            {
                if let Some(o) = last_set(k) {
                    assert!(
                        t <= o,
                        "seed {seed}: {key:?} evicted before the older {k:?}"
                    );
                }
            }
        }
    }
    assert!(seen > 0, "the neighbour evicted nothing");
    // A neighbour in another class (60-byte values: class 3) never presses Probe's keys.
    cfg.neighbour_bytes = 60;
    cfg.neighbour_max_bytes = 60;
    assert!((1..20).all(|seed| evictions(&cfg, seed).is_empty()));
    // Without the neighbour the three keys fit: nothing is evicted.
    cfg.neighbour_bytes = 0;
    cfg.neighbour_max_bytes = 0;
    assert!((1..20).all(|seed| evictions(&cfg, seed).is_empty()));
}

#[test]
fn expire_jumps_time_to_the_next_expiry_and_items_die() {
    let out = find_fault(FaultKind::Expire, |o| {
        fault_index(o, |f| matches!(f, Fault::AdvanceTime { .. }))
            .is_some_and(|i| get_missed_after(o, i))
    });
    let i = fault_index(&out, |f| matches!(f, Fault::AdvanceTime { .. })).unwrap();
    assert!(
        out.trace[i].time_ms >= 4000,
        "jumped to {}",
        out.trace[i].time_ms
    );
}

#[test]
fn skew_gives_clients_different_clocks_and_jumps_them() {
    let out = find_fault(FaultKind::Skew, |o| {
        fault_index(o, |f| matches!(f, Fault::ClockJump { .. })).is_some()
    });
    // The values clients stored are their clock readings: with skew they differ from the
    // true time by more than the steps taken.
    let stamps: Vec<(u64, u64)> = out
        .trace
        .iter()
        .filter_map(|s| match &s.event {
            Event::Call {
                command: kvsim::command::Command::Store { data, .. },
                ..
            } => {
                let v: u64 = String::from_utf8_lossy(data).parse().ok()?;
                Some((v, s.time_ms + sim::EPOCH_MS))
            }
            _ => None,
        })
        .collect();
    assert!(
        stamps
            .iter()
            .any(|(clock, truth)| clock.abs_diff(*truth) > 10),
        "{stamps:?}"
    );
}

#[test]
fn restart_loses_volatile_data_but_not_persistent() {
    let out = find_fault(FaultKind::Restart, |o| {
        fault_index(o, |f| matches!(f, Fault::Restart { .. }))
            .is_some_and(|i| get_missed_after(o, i))
    });
    assert!(faults(&out)
        .iter()
        .any(|f| f.to_string() == "restart server (data lost)"));
    // Persistent: a get after the restart never misses a key set in setup (nothing expires
    // within the run's few ms, no other fault).
    let mut cfg = SimConfig::from_scenario(
        &Scenario::new("f", 2, 6)
            .faults(&[FaultKind::Restart])
            .persistent(),
    );
    cfg.fault_probability = 0.5;
    cfg.record_trace = true;
    for seed in 0..100 {
        let out = sim::run(&Probe, &cfg, seed, None);
        if let Some(i) = fault_index(&out, |f| {
            matches!(
                f,
                Fault::Restart {
                    persistent: true,
                    ..
                }
            )
        }) {
            assert!(!get_missed_after(&out, i), "seed {seed}");
        }
    }
}

#[test]
fn crash_leaves_the_operation_pending_forever() {
    let out = find_fault(FaultKind::Crash, |o| {
        fault_index(o, |f| matches!(f, Fault::Crash { .. })).is_some()
    });
    let crashed: Vec<_> = out.history.ops.iter().filter(|o| o.ret.is_none()).collect();
    let crashes = faults(&out)
        .iter()
        .filter(|f| matches!(f, Fault::Crash { .. }))
        .count();
    assert_eq!(crashed.len(), crashes);
    for op in crashed {
        assert_eq!(op.outcome, Outcome::Unknown);
        // The crashed client runs no further operation.
        assert!(out
            .history
            .ops
            .iter()
            .filter(|o| o.client == op.client)
            .all(|o| o.call <= op.call));
    }
}

#[test]
fn lose_request_and_reply_time_out_with_unknown_outcome() {
    for want_reply in [false, true] {
        let out = find_fault(FaultKind::Lose, |o| {
            o.trace.iter().any(|s| match &s.event {
                Event::Call {
                    delivery: Delivery::ReplyLost(_),
                    ..
                } => want_reply,
                Event::Call {
                    delivery: Delivery::RequestLost,
                    ..
                } => !want_reply,
                _ => false,
            })
        });
        assert!(out
            .history
            .ops
            .iter()
            .any(|o| o.ret.is_some() && o.outcome == Outcome::Unknown));
    }
}

#[test]
fn pause_stalls_a_client_while_time_passes() {
    let out = find_fault(FaultKind::Pause, |o| {
        fault_index(o, |f| matches!(f, Fault::Pause { .. })).is_some()
    });
    let i = fault_index(&out, |f| matches!(f, Fault::Pause { .. })).unwrap();
    let Event::Fault(Fault::Pause { client, ms }) = &out.trace[i].event else {
        unreachable!()
    };
    let t0 = out.trace[i].time_ms;
    let next = out.trace[i + 1..]
        .iter()
        .find(|s| s.client == Some(*client))
        .expect("the paused client moves again");
    assert!(
        next.time_ms >= t0 + ms,
        "moved at {} after pause at {t0} for {ms}",
        next.time_ms
    );
}

#[test]
fn shard_fail_takes_a_server_down_and_brings_it_back_empty() {
    let out = find_fault(FaultKind::ShardFail, |o| {
        o.trace.iter().any(|s| {
            matches!(
                &s.event,
                Event::Call {
                    delivery: Delivery::ServerDown,
                    ..
                }
            )
        })
    });
    assert!(faults(&out)
        .iter()
        .any(|f| matches!(f, Fault::ShardDown { .. })));
}

/// Runs the probe with `kind` at probability 0.3 and a client timeout of `timeout_ms`,
/// until some run shows `want`.
fn find_fault_timed(
    kind: FaultKind,
    timeout_ms: u64,
    want: impl Fn(&sim::RunOutput<Probe>) -> bool,
) -> sim::RunOutput<Probe> {
    let scenario = Scenario::new("f", 2, 6)
        .faults(&[kind])
        .fault_budget(2)
        .timeout_ms(timeout_ms);
    let mut cfg = SimConfig::from_scenario(&scenario);
    cfg.fault_probability = 0.3;
    cfg.record_trace = true;
    for seed in 0..500 {
        let out = sim::run(&Probe, &cfg, seed, None);
        if want(&out) {
            return out;
        }
    }
    panic!("no run showed the effect of {}", kind.name());
}

/// The delayed request lands `ms` later, after its client saw its timeout (and moved on:
/// its next step comes before the landing), and is applied there.
#[test]
fn delay_lands_a_request_late_after_its_client_timed_out() {
    let landed = |o: &sim::RunOutput<Probe>| {
        o.trace.iter().position(|s| {
            matches!(
                &s.event,
                Event::Call {
                    delivery: Delivery::Late(_),
                    ..
                }
            )
        })
    };
    let out = find_fault_timed(FaultKind::Delay, 0, |o| {
        landed(o).is_some()
            && fault_index(o, |f| matches!(f, Fault::Delay { .. })).is_some_and(|i| {
                o.trace[i + 1..]
                    .iter()
                    .any(|s| s.client == o.trace[i].client)
            })
    });
    let i = fault_index(&out, |f| matches!(f, Fault::Delay { .. })).unwrap();
    let Event::Fault(Fault::Delay {
        client,
        command,
        ms,
    }) = &out.trace[i].event
    else {
        unreachable!()
    };
    let j = landed(&out).unwrap();
    assert!(j > i);
    let late = &out.trace[j];
    assert_eq!(
        late.client,
        Some(*client),
        "the landing is shown in its client's column"
    );
    assert!(
        matches!(&late.event, Event::Call { command: c, .. } if c == command),
        "the delayed command lands"
    );
    assert!(
        late.time_ms >= out.trace[i].time_ms + ms,
        "landed at {} ms, delayed at {} ms by {ms} ms",
        late.time_ms,
        out.trace[i].time_ms
    );
    // The client saw its timeout at once: its operation went on before the landing.
    assert!(out.trace[i + 1..j]
        .iter()
        .any(|s| s.client == Some(*client)));
}

/// With a client timeout, a lost call costs its client that much virtual time: its next
/// step comes no earlier, while the others go on.
#[test]
fn a_lost_call_costs_its_client_its_timeout() {
    let lost_at = |o: &sim::RunOutput<Probe>| {
        o.trace.iter().position(|s| {
            matches!(
                &s.event,
                Event::Call {
                    delivery: Delivery::RequestLost | Delivery::ReplyLost(_),
                    ..
                }
            )
        })
    };
    let out = find_fault_timed(FaultKind::Lose, 1_000, |o| {
        lost_at(o).is_some_and(|i| {
            o.trace[i + 1..]
                .iter()
                .any(|s| s.client == o.trace[i].client)
        })
    });
    let i = lost_at(&out).unwrap();
    let client = out.trace[i].client;
    let next = out.trace[i + 1..]
        .iter()
        .find(|s| s.client == client)
        .expect("it moves again");
    assert!(
        next.time_ms >= out.trace[i].time_ms + 1_000,
        "moved at {} ms after a lost call at {} ms",
        next.time_ms,
        out.trace[i].time_ms
    );
    // Without the timeout it moves on at once (within a step or so).
    let quick = find_fault_timed(FaultKind::Lose, 0, |o| lost_at(o).is_some());
    let i = lost_at(&quick).unwrap();
    if let Some(next) = quick.trace[i + 1..]
        .iter()
        .find(|s| s.client == quick.trace[i].client)
    {
        assert!(next.time_ms < quick.trace[i].time_ms + 1_000);
    }
}

/// A client library that sends a timed-out command again: an `incr` applied whose reply
/// was lost is applied twice (the increment returns a value one too high), which the
/// structure cannot see; without retries it never happens.
#[test]
fn a_retrying_client_library_applies_a_lost_incr_twice() {
    let counter = Counter { by_incr: true };
    let doubled = |retries: u32| {
        let scenario = Scenario::new("r", 1, 3)
            .faults(&[FaultKind::Lose])
            .fault_budget(1)
            .retries(retries);
        let mut cfg = SimConfig::from_scenario(&scenario);
        cfg.fault_probability = 0.5;
        (0..300).any(|seed| {
            let out = sim::run(&counter, &cfg, seed, None);
            // One client: its k-th completed increment returns k unless one was doubled.
            let mut k = 0;
            out.history.ops.iter().any(|o| match o.outcome {
                Outcome::Ok(v) => {
                    k += 1;
                    v > k
                }
                _ => {
                    k += 1;
                    false
                }
            })
        })
    };
    assert!(doubled(1), "a retried incr was counted twice");
    assert!(!doubled(0), "never without retries");
}

/// Work between two calls, and a random key suffix drawn after it.
struct Worker;

impl Model for Worker {
    type Op = ();
    type Ret = String;

    async fn run<K: Kv>(&self, kv: &K, _client: usize, _op: &()) -> Result<String, KvError> {
        kv.get(b"x").await?;
        kv.work().await;
        kv.work().await;
        Ok(kv.random_string(8))
    }

    fn op(&self, _client: usize, _index: usize, _rng: &mut SimRng) {}

    fn check(&self, _history: &History<(), String>) -> Verdict {
        Verdict::Ok
    }
}

/// `Kv::work` takes a duration drawn from the run's `work_ms` range, each call its own,
/// as a sleep in the trace; with the default range it is no step at all. The draws come
/// from their own stream: the structure's random numbers are the same either way.
#[test]
fn work_takes_the_time_the_scenario_gives_it() {
    let run = |work: Option<(u64, u64)>| {
        let mut s = Scenario::new("work", 1, 1);
        if let Some((lo, hi)) = work {
            s = s.work_ms(lo, hi);
        }
        let mut cfg = SimConfig::from_scenario(&s);
        cfg.record_trace = true;
        let out = sim::run(&Worker, &cfg, 7, None);
        let sleeps: Vec<u64> = out
            .trace
            .iter()
            .filter_map(|s| match s.event {
                Event::Work { ms } => Some(ms),
                Event::Sleep { .. } => panic!("the structure's work traced as a sleep"),
                _ => None,
            })
            .collect();
        let ret = out.history.ops[0].outcome.clone();
        (sleeps, ret)
    };
    let (none, plain) = run(None);
    assert!(none.is_empty(), "{none:?}");
    let (slow, same) = run(Some((800, 1_600)));
    assert_eq!(slow.len(), 2, "{slow:?}");
    assert!(slow.iter().all(|ms| (800..=1_600).contains(ms)), "{slow:?}");
    assert_ne!(slow[0], slow[1], "each call draws its own duration");
    assert_eq!(plain, same, "the random string does not depend on the work");
    assert_eq!(
        run(Some((800, 1_600))).0,
        slow,
        "the same seed, the same durations"
    );
    let (fixed, _) = run(Some((250, 250)));
    assert_eq!(fixed, [250, 250]);
}

/// Every run violates.
struct AlwaysWrong;

impl Model for AlwaysWrong {
    type Op = ();
    type Ret = ();

    async fn run<K: Kv>(&self, kv: &K, _client: usize, _op: &()) -> Result<(), KvError> {
        kv.get(b"x").await?;
        Ok(())
    }

    fn op(&self, _client: usize, _index: usize, _rng: &mut SimRng) {}

    fn check(&self, _history: &History<(), ()>) -> Verdict {
        Verdict::Violation(Violation::new("always", "every run is wrong", vec![0]))
    }
}

/// A time budget (`min_runs` with a time limit) judges the runs that fit, when they reach
/// the floor; fewer is unknown, and a violation found stays one. (A zero limit lets
/// exactly one run through: the limit is looked at between runs.)
#[test]
fn a_time_budget_judges_the_runs_that_fit_and_never_passes_below_its_floor() {
    let cfg = config(2, 1, Strategy::Random);
    let budget = |min_runs| RunBudget {
        time_limit: Some(std::time::Duration::ZERO),
        min_runs,
        ..limits(1000)
    };
    let model = Counter { by_incr: true };
    let r = sweep::sweep(&model, &cfg, &budget(Some(1)));
    assert_eq!((r.runs, &r.verdict), (1, &Verdict::Ok));
    let r = sweep::sweep(&model, &cfg, &budget(Some(5)));
    assert_eq!(r.runs, 1);
    let Verdict::Unknown(why) = &r.verdict else {
        panic!("{}", r.verdict)
    };
    assert!(
        why.contains("after 1 runs, fewer than the 5 required"),
        "{why}"
    );
    // Without a floor the limit cuts the planned runs: unknown too.
    assert!(matches!(
        sweep::sweep(&model, &cfg, &budget(None)).verdict,
        Verdict::Unknown(_)
    ));
    // A violation is never turned into a pass or an unknown by the budget.
    for floor in [Some(1), Some(5), None] {
        assert!(sweep::sweep(&AlwaysWrong, &cfg, &budget(floor))
            .verdict
            .is_violation());
    }
}

/// The cargo-test gate's time budget: the runs that fit, judged above the floor. On a
/// virtual clock (every run takes 10 ms), so the runs and the verdict are the budget's
/// logic alone, the same on any machine however loaded: the limit is looked at before
/// each run, so a 200 ms budget lets 21 runs through (20 have spent exactly 200 ms, not
/// more; 21 have spent 210 ms).
#[test]
fn the_gate_takes_a_time_budget() {
    use kvsim::harness::sweep::Clock;
    use std::time::Duration;
    let gate = |budget_ms, min_runs| {
        let scenario = Scenario::new("budget", 2, 2).runs(5);
        kvsim::Check::new("counter/incr", Counter { by_incr: true }, scenario)
            .clock(Clock::PerRun(Duration::from_millis(10)))
            .time_budget(Duration::from_millis(budget_ms), min_runs)
            .run()
    };
    let out = gate(200, 10);
    out.assert_ok();
    assert_eq!(out.0.runs, 21, "the runs that fit, not the 5 planned");
    assert_eq!(out.0.millis, 210, "on the virtual clock");
    // Fewer runs fit than the floor: unknown naming both, never a pass.
    let out = gate(200, 22);
    assert_eq!(out.0.runs, 21);
    let Verdict::Unknown(why) = out.verdict() else {
        panic!("{}", out.verdict())
    };
    assert!(
        why.contains("time budget of 0.2 s spent after 21 runs, fewer than the 22 required"),
        "{why}"
    );
    // Exactly the floor is enough.
    gate(200, 21).assert_ok();
    // A zero budget lets one run through (the limit is looked at between runs).
    let out = gate(0, 1_000_000_000);
    assert_eq!(out.0.runs, 1);
    assert!(
        matches!(out.verdict(), Verdict::Unknown(_)),
        "{}",
        out.verdict()
    );
}

/// A time budget stops where its clock says, whatever the planned runs: on a virtual
/// clock of 10 ms a run, a 95 ms budget does 10 of 1000 runs (a budget that did not stop
/// would do all 1000), a 100 ms one 11, and a time limit without a floor is unknown.
#[test]
fn a_time_budget_on_a_virtual_clock_stops_where_the_clock_says() {
    use kvsim::harness::sweep::Clock;
    use std::time::Duration;
    let cfg = config(2, 1, Strategy::Random);
    let budget = |ms, min_runs| RunBudget {
        time_limit: Some(Duration::from_millis(ms)),
        min_runs,
        clock: Clock::PerRun(Duration::from_millis(10)),
        ..limits(1000)
    };
    let model = Counter { by_incr: true };
    for (ms, runs) in [(95, 10), (100, 11), (0, 1), (9_990, 1000), (100_000, 1000)] {
        let r = sweep::sweep(&model, &cfg, &budget(ms, Some(1)));
        assert_eq!((r.runs, &r.verdict), (runs, &Verdict::Ok), "{ms} ms");
        assert_eq!(r.elapsed, Duration::from_millis(10 * runs), "{ms} ms");
    }
    let r = sweep::sweep(&model, &cfg, &budget(95, Some(11)));
    assert_eq!(r.runs, 10);
    assert!(matches!(r.verdict, Verdict::Unknown(_)), "{}", r.verdict);
    // Without a floor, a limit that cuts the planned runs is unknown; one that does not,
    // ok.
    let r = sweep::sweep(&model, &cfg, &budget(95, None));
    assert_eq!(r.runs, 10);
    assert!(matches!(r.verdict, Verdict::Unknown(_)), "{}", r.verdict);
    let r = sweep::sweep(&model, &cfg, &budget(100_000, None));
    assert_eq!((r.runs, &r.verdict), (1000, &Verdict::Ok));
}

/// A get-then-set counter with probes: `read` on every read, `miss` when the key is gone
/// (never without faults), `unused` nowhere.
struct Probed;

impl Model for Probed {
    type Op = ();
    type Ret = u64;

    async fn setup<K: Kv>(&self, kv: &K) -> Result<(), KvError> {
        kv.set(b"n", b"0", 0).await?;
        Ok(())
    }

    async fn run<K: Kv>(&self, kv: &K, _client: usize, _op: &()) -> Result<u64, KvError> {
        kv.probe("read");
        let v = match kv.get(b"n").await? {
            Some(d) => String::from_utf8_lossy(&d).parse().unwrap_or(0),
            None => {
                kv.probe("miss");
                0
            }
        };
        kv.set(b"n", (v + 1).to_string().as_bytes(), 0).await?;
        Ok(v + 1)
    }

    fn op(&self, _client: usize, _index: usize, _rng: &mut SimRng) {}

    fn probes(&self) -> &'static [&'static str] {
        &["miss", "read", "unused"]
    }

    fn check(&self, _history: &History<(), u64>) -> Verdict {
        Verdict::Ok
    }
}

/// A check counts each probe's hits over its runs (a declared probe no run hit: 0), and a
/// probe the scenario requires that no run hits makes it unknown, never a pass.
#[test]
fn probes_are_counted_and_a_required_one_never_hit_is_unknown() {
    use kvsim::harness::target::{ModelTarget, Target};
    let target = ModelTarget::new("probed/fixed", Probed);
    let check = |s: &Scenario| target.sweep(s, &SimConfig::from_scenario(s), &limits(50));
    let calm = Scenario::new("calm", 2, 3);
    let r = check(&calm);
    assert_eq!(r.verdict, Verdict::Ok);
    let counts: Vec<(&str, u64)> = r.probes.iter().map(|(k, v)| (k.as_str(), *v)).collect();
    assert_eq!(counts, [("miss", 0), ("read", 300), ("unused", 0)]);
    let r = check(&calm.clone().sometimes(&["read", "miss"]));
    let Verdict::Unknown(why) = &r.verdict else {
        panic!("{}", r.verdict)
    };
    assert!(
        why.contains("probe \"miss\" was never hit in 50 runs"),
        "{why}"
    );
    // Under evictions some run reaches the miss, and the requirement is met.
    let evict = Scenario::new("evict", 2, 3)
        .faults(&[FaultKind::Evict])
        .sometimes(&["miss"]);
    let r = check(&evict);
    assert!(r.probes["miss"] > 0, "{:?}", r.probes);
    assert_eq!(r.verdict, Verdict::Ok);
    // A structure is held only to the required probes it declares: one scenario can
    // require a place that only some variants' code has.
    let r = check(&calm.clone().sometimes(&["elsewhere"]));
    assert_eq!(r.verdict, Verdict::Ok);
}
