//! The simulator suite's reference figures: the same workload's KV operations with less
//! and less of the simulator around them, so that its figure can be read against what
//! the store and the structure's futures cost by themselves.
//!
//! - [`bare_map`]: a `BTreeMap` in a loop, no memcached semantics (the limit).
//! - [`store_alone`]: the simulated store (memcached 1.6.18's semantics and accounting),
//!   each command built as the KV handle builds it; no futures.
//! - [`minimal_executor`]: the model's own futures over that store, stepped in random
//!   order by the least executor that can run them: no history, faults, fairness,
//!   step bounds, trace or choices kept.
//!
//! Each draws its counters from seeded streams as a run does; the last two also draw
//! for each step as the random strategy does (the figures are rates: the draws need not
//! be the simulator's own).

use super::IncrGet;
use kvsim::command::{ArithVerb, Command, Reply};
use kvsim::sim::{SimConfig, EPOCH_MS};
use kvsim::store::Store;
use kvsim::{Kv, KvError, Model, SimRng};
use std::cell::RefCell;
use std::collections::BTreeMap;
use std::future::Future;
use std::pin::Pin;
use std::rc::Rc;
use std::task::{Context, Poll, Waker};
use std::time::{Duration, Instant};

/// What [`bare_map`] measures.
pub const BARE_MAP: &str = "the same operations on a bare BTreeMap<Vec<u8>, Vec<u8>> in a \
    loop: a fresh map per run, 4 sets, then clients x ops x (incr + get)";

/// What [`store_alone`] measures.
pub const STORE_ALONE: &str = "the same commands, built as the KV handle builds them, \
    applied to a fresh simulated store per run after the model's setup (then clients x ops x \
    (incr + get)), with a draw per step as the random strategy makes; no futures, no executor";

/// What [`minimal_executor`] measures.
pub const MINIMAL_EXECUTOR: &str = "the model's own operations over a fresh simulated store \
    per run, a random client stepped at a time by a minimal executor: no history, faults, \
    fairness, bounds, trace or choices";

/// KV operations per second of `once` (a run from a seed, returning its operations):
/// 200 runs to warm up, then runs for half a second.
fn per_second(mut once: impl FnMut(u64) -> u64) -> f64 {
    for seed in 0..200 {
        std::hint::black_box(once(seed));
    }
    let start = Instant::now();
    let mut kv = 0u64;
    let mut seed = 0u64;
    while start.elapsed() < Duration::from_millis(500) {
        for _ in 0..100 {
            kv += once(seed);
            seed += 1;
        }
    }
    kv as f64 / start.elapsed().as_secs_f64()
}

/// The limit: the workload's KV operations on a bare map in a loop, per second. Each run
/// starts a fresh map with the setup's 4 counters; each operation draws its counter as the
/// model does (clients in turn, each from its own stream), adds 1 to it as `incr` does
/// (reads the decimal digits, writes the new ones back) and reads it as `get` does (a
/// copy of the value). Only the incr and get calls count, as in the simulator's figure.
pub fn bare_map(cfg: &SimConfig) -> f64 {
    per_second(|seed| {
        let mut map: BTreeMap<Vec<u8>, Vec<u8>> = BTreeMap::new();
        for k in 0..4u8 {
            map.insert(vec![b'k', b'0' + k], b"0".to_vec());
        }
        let mut rngs = streams(cfg, seed);
        let mut kv = 0u64;
        for _ in 0..cfg.ops {
            for rng in &mut rngs {
                let key = [b'k', b'0' + rng.below(4) as u8];
                if let Some(v) = map.get_mut(&key[..]) {
                    let n = v
                        .iter()
                        .take_while(|b| b.is_ascii_digit())
                        .fold(0u64, |n, &b| {
                            n.wrapping_mul(10).wrapping_add((b - b'0') as u64)
                        })
                        .wrapping_add(1);
                    v.clear();
                    v.extend_from_slice(itoa::Buffer::new().format(n).as_bytes());
                }
                std::hint::black_box(map.get(&key[..]).cloned());
                kv += 2;
            }
        }
        kv
    })
}

/// A fresh store as a run of `cfg` makes one, after `model`'s setup (its commands
/// answered at the epoch, as a run's setup is).
fn set_up(model: &IncrGet, cfg: &SimConfig) -> Store {
    let mut store = Store::new(cfg.store_config(), EPOCH_MS);
    let mut cx = Context::from_waker(Waker::noop());
    let setup = Bare::default();
    let mut fut = std::pin::pin!(model.setup(&setup));
    while fut.as_mut().poll(&mut cx).is_pending() {
        answer(&mut store, EPOCH_MS, &setup);
    }
    store
}

/// Each client's stream of operations in a run seeded `seed` (as the simulator derives
/// them).
fn streams(cfg: &SimConfig, seed: u64) -> Vec<SimRng> {
    (0..cfg.clients)
        .map(|c| SimRng::derive(seed, 1 + c as u64))
        .collect()
}

/// The store alone: per run a fresh store after the model's setup, then each client in turn
/// draws its counter and the store applies `incr` and `get` of it, each command built
/// as the KV handle builds it. Clients take turns; a draw per step (its operation's start
/// and its two calls) stands in for the random strategy's. One ms passes per call, as a
/// step's time.
pub fn store_alone(model: &IncrGet, cfg: &SimConfig) -> f64 {
    per_second(|seed| {
        let mut store = set_up(model, cfg);
        let mut rngs = streams(cfg, seed);
        let mut steps = SimRng::derive(seed, u64::MAX - 1);
        let mut now = EPOCH_MS;
        let mut kv = 0u64;
        for _ in 0..cfg.ops {
            for rng in &mut rngs {
                std::hint::black_box(steps.index(cfg.clients));
                let key = vec![b'k', b'0' + rng.below(4) as u8];
                std::hint::black_box(steps.index(cfg.clients));
                let incr = Command::Arith {
                    verb: ArithVerb::Incr,
                    key: key.clone(),
                    delta: 1,
                    noreply: false,
                };
                std::hint::black_box(store.apply(now, &incr));
                now += 1;
                std::hint::black_box(steps.index(cfg.clients));
                let get = Command::Get {
                    with_cas: false,
                    keys: vec![key],
                };
                std::hint::black_box(store.apply(now, &get));
                now += 1;
                kv += 2;
            }
        }
        kv
    })
}

/// A client handle of [`minimal_executor`]: a command sent waits in the slot until the
/// executor puts the reply beside it.
#[derive(Default)]
struct Bare {
    slot: Rc<RefCell<BareSlot>>,
}

/// What a [`Bare`] handle shares with the executor.
#[derive(Default)]
struct BareSlot {
    command: Option<Command>,
    reply: Option<Reply>,
}

/// [`Bare`]'s call: parks once with the command, then takes the reply.
struct BareCall<'a> {
    handle: &'a Bare,
    command: Option<Command>,
}

impl Future for BareCall<'_> {
    type Output = Result<Reply, KvError>;

    fn poll(mut self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<Self::Output> {
        let command = self.command.take();
        let mut slot = self.handle.slot.borrow_mut();
        match command {
            Some(command) => {
                slot.command = Some(command);
                Poll::Pending
            }
            None => Poll::Ready(Ok(slot
                .reply
                .take()
                .expect("the executor answers a parked call before polling it again"))),
        }
    }
}

impl Kv for Bare {
    fn execute(&self, command: Command) -> impl Future<Output = Result<Reply, KvError>> {
        BareCall {
            handle: self,
            command: Some(command),
        }
    }

    fn now_ms(&self) -> u64 {
        EPOCH_MS
    }

    async fn sleep_ms(&self, _: u64) {}

    fn random_u64(&self) -> u64 {
        0
    }
}

/// Applies the command `handle` parked on, if any, and leaves the reply for it: whether
/// there was one.
fn answer(store: &mut Store, now: u64, handle: &Bare) -> bool {
    let mut slot = handle.slot.borrow_mut();
    let Some(command) = slot.command.take() else {
        return false;
    };
    slot.reply = Some(store.apply(now, &command));
    true
}

/// One operation of `model`'s client `c` through `handle` (a future type with a name, so
/// that each client's place for it is made once).
async fn operation(model: &IncrGet, handle: &Bare, c: usize, op: u8) -> Result<u64, KvError> {
    model.run(handle, c, &op).await
}

/// The model's operations run by a minimal executor: per run a fresh store after the
/// model's setup, then at each step a random client with work left either starts its
/// next operation (drawn as the model draws it) or has its parked command applied, and
/// is polled on. Each client's operation is made in one place for the whole run, as the
/// simulator's are. One ms passes per call.
pub fn minimal_executor(model: &IncrGet, cfg: &SimConfig) -> f64 {
    per_second(|seed| {
        let mut store = set_up(model, cfg);
        let mut cx = Context::from_waker(Waker::noop());
        let handles: Vec<Bare> = (0..cfg.clients).map(|_| Bare::default()).collect();
        let mut rngs = streams(cfg, seed);
        let mut steps = SimRng::derive(seed, u64::MAX - 1);
        let mut done = vec![0usize; cfg.clients];
        let mut running: Vec<Pin<Box<Option<_>>>> =
            (0..cfg.clients).map(|_| Box::pin(None)).collect();
        let mut runnable: Vec<usize> = (0..cfg.clients).collect();
        let mut returns = 0u64;
        let mut now = EPOCH_MS;
        let mut kv = 0u64;
        while !runnable.is_empty() {
            let c = runnable[steps.index(runnable.len())];
            let handle = &handles[c];
            if running[c].is_none() {
                let op = model.op(c, done[c], &mut rngs[c]);
                running[c].set(Some(operation(model, handle, c, op)));
            } else if answer(&mut store, now, handle) {
                now += 1;
                kv += 1;
            }
            let fut = running[c]
                .as_mut()
                .as_pin_mut()
                .expect("a started operation");
            if let Poll::Ready(result) = fut.poll(&mut cx) {
                returns += result.unwrap_or(0);
                running[c].set(None);
                done[c] += 1;
                if done[c] == cfg.ops {
                    runnable.retain(|&r| r != c);
                }
            }
        }
        std::hint::black_box(returns);
        kv
    })
}
