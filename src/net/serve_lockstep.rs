//! `kvsim serve --lockstep N`: requests served one at a time, in an order the seed chooses.
//!
//! Each request waits until N connections (or, once N have connected, every open one, if
//! fewer are open) each have a request waiting, or until no new request has come for a
//! quantum; then the seed picks
//! one of the waiting connections (by id order) and serves its request alone. Clients
//! that are deterministic between their calls (each call's bytes depend only on earlier
//! replies) then see the same interleaving, and the same replies, from the same seed.
//!
//! What it cannot promise: a client whose next request depends on anything but the replies
//! (its clock, its own threads, the OS scheduler) sends at a moment the server does not
//! choose; when fewer than N connections have a request waiting, the quantum decides, and
//! that is wall-clock time. Connections are numbered in the order they were accepted, so
//! clients must connect in a fixed order (e.g. one after another before the work starts)
//! for ids, and so picks, to repeat.

use crate::rng::SimRng;
use std::collections::BTreeSet;
use std::sync::{Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

/// The lockstep scheduler's settings.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LockstepConfig {
    /// How many connections' requests to wait for before picking one.
    pub clients: usize,
    /// How long to wait for them before picking among those waiting.
    pub quantum: Duration,
}

struct Turns {
    waiting: BTreeSet<u64>,
    /// The connection picked to go next, not yet started.
    picked: Option<u64>,
    /// Whether a picked request is being served.
    busy: bool,
    /// When the last request arrived or was picked.
    last_change: Instant,
    rng: SimRng,
}

/// Serves requests one at a time in a seeded order.
pub struct Lockstep {
    config: LockstepConfig,
    turns: Mutex<Turns>,
    changed: Condvar,
}

impl Lockstep {
    /// A scheduler picking with `seed`.
    pub fn new(config: LockstepConfig, seed: u64) -> Lockstep {
        Lockstep {
            config,
            turns: Mutex::new(Turns {
                waiting: BTreeSet::new(),
                picked: None,
                busy: false,
                last_change: Instant::now(),
                rng: SimRng::derive(seed, 0x10c5),
            }),
            changed: Condvar::new(),
        }
    }

    /// Waits until connection `id`'s request is picked; `live` says how many client
    /// connections are open now and how many were ever accepted (until N have been, the
    /// scheduler waits for N, so that a slow acceptor cannot make it pick among fewer).
    /// The caller serves the request, then calls [`Lockstep::done`].
    pub fn wait_turn(&self, id: u64, live: impl Fn() -> (usize, u64)) {
        let mut t = lock(&self.turns);
        t.waiting.insert(id);
        t.last_change = Instant::now();
        self.changed.notify_all();
        loop {
            if t.picked == Some(id) {
                t.picked = None;
                t.busy = true;
                t.waiting.remove(&id);
                return;
            }
            if t.picked.is_none() && !t.busy {
                let (open, accepted) = live();
                let need = if accepted < self.config.clients as u64 {
                    self.config.clients
                } else {
                    self.config.clients.min(open)
                };
                let enough = t.waiting.len() >= need.max(1);
                let idle = t.last_change.elapsed() >= self.config.quantum;
                if enough || idle {
                    let n = t.waiting.len();
                    let i = t.rng.index(n);
                    let pick = *t.waiting.iter().nth(i).expect("a waiting connection");
                    t.picked = Some(pick);
                    t.last_change = Instant::now();
                    self.changed.notify_all();
                    continue;
                }
            }
            let (next, _) = self
                .changed
                .wait_timeout(t, self.config.quantum)
                .unwrap_or_else(|p| p.into_inner());
            t = next;
        }
    }

    /// The picked request has been served: the next may be picked.
    pub fn done(&self) {
        let mut t = lock(&self.turns);
        t.busy = false;
        t.last_change = Instant::now();
        self.changed.notify_all();
    }

    /// Connection `id` is gone: it waits for nothing any more.
    pub fn leave(&self, id: u64) {
        let mut t = lock(&self.turns);
        t.waiting.remove(&id);
        if t.picked == Some(id) {
            t.picked = None;
        }
        self.changed.notify_all();
    }
}

/// A mutex's guard; a panicked holder's data is still consistent here (every critical
/// section leaves it so), so poisoning is ignored.
pub(crate) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    /// Three threads each send four requests; the order the scheduler serves them in is
    /// the same for the same seed, whatever the threads' timing.
    fn order(seed: u64, jitter: bool) -> Vec<u64> {
        let ls = Arc::new(Lockstep::new(
            LockstepConfig {
                clients: 3,
                quantum: Duration::from_secs(5),
            },
            seed,
        ));
        let served = Arc::new(Mutex::new(Vec::new()));
        let open = Arc::new(std::sync::atomic::AtomicUsize::new(3));
        let handles: Vec<_> = (0..3u64)
            .map(|id| {
                let (ls, served, open) = (Arc::clone(&ls), Arc::clone(&served), Arc::clone(&open));
                std::thread::spawn(move || {
                    for k in 0..4 {
                        if jitter {
                            std::thread::sleep(Duration::from_millis((id * 7 + k * 3) % 5));
                        }
                        ls.wait_turn(id, || (open.load(std::sync::atomic::Ordering::SeqCst), 3));
                        served.lock().unwrap().push(id);
                        ls.done();
                    }
                    open.fetch_sub(1, std::sync::atomic::Ordering::SeqCst);
                    ls.leave(id);
                })
            })
            .collect();
        for h in handles {
            h.join().unwrap();
        }
        let v = served.lock().unwrap().clone();
        v
    }

    #[test]
    fn the_seed_fixes_the_order_whatever_the_timing() {
        let a = order(11, false);
        assert_eq!(a.len(), 12);
        assert_eq!(order(11, true), a);
        assert_eq!(order(11, false), a);
        assert!(
            (1..20).any(|s| order(s, false) != a),
            "different seeds give different orders"
        );
    }
}
