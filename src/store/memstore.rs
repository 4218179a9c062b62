//! `MemStore`: one [`Store`] shared between OS threads (stress runs, benchmarks).
//!
//! Each command locks the store, applies at the current time and unlocks, so commands are
//! atomic and take effect in the order the lock is taken: the same linearizable server a
//! single-threaded memcached worker gives. Clients get a [`MemClient`] handle implementing
//! [`Kv`]; every future it returns completes without ever returning `Pending`, so
//! [`crate::kv::block_on_ready`] runs a structure's operation on the calling thread.
//!
//! Time: `MemStore` is for real threads, so its clock is the host's, read once at creation
//! (`SystemTime`) and advanced by the host's coarse monotonic clock (`coarsetime`: Linux's
//! `CLOCK_MONOTONIC_COARSE`, a few ms resolution): it never goes back. Every command reads
//! the clock, and the precise clock costs more than a whole command's work on the store;
//! memcached itself only knows the time to the second. Under
//! `cfg(loom)` there is no clock: virtual time advances one millisecond per command
//! (a logical clock), and sleeping yields. The loom tests check that concurrent
//! `cas`/`add`/`incr`/`append` from up to three threads always give the replies and final
//! state of some sequential order.

use crate::command::{Command, Reply};
use crate::kv::{Kv, KvError};
use crate::rng::SimRng;
use crate::store::{Store, StoreConfig};
use std::cell::{Cell, RefCell};

#[cfg(loom)]
use loom::sync::{Arc, Condvar, Mutex, MutexGuard};
#[cfg(not(loom))]
use std::sync::{Arc, Condvar, Mutex, MutexGuard};

/// The seed every client's random stream is derived from (with the client's id).
const CLIENT_SEED: u64 = 0x6d65_6d73_746f_7265; // "memstore"

/// A [`Store`] shared between threads.
#[derive(Clone)]
pub struct MemStore {
    shared: Arc<Shared>,
}

struct Shared {
    state: Mutex<State>,
    /// Notified after every mutating command.
    changed: Condvar,
    clock: HostClock,
}

struct State {
    store: Store,
    /// Counts mutating commands (what `wait_for_change_ms` waits on).
    version: u64,
    /// Clients blocked in `wait_for_change_ms` (the condvar is only notified when > 0).
    waiters: usize,
    /// The logical clock under loom: the last time handed out.
    #[cfg(loom)]
    logical_ms: u64,
}

/// The host's unix time in ms, anchored once and advanced monotonically.
#[cfg(not(loom))]
struct HostClock {
    anchor_unix_ms: u64,
    anchor: coarsetime::Instant,
}

#[cfg(not(loom))]
impl HostClock {
    fn new() -> HostClock {
        let anchor_unix_ms = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_millis() as u64);
        HostClock {
            anchor_unix_ms,
            anchor: coarsetime::Instant::now(),
        }
    }

    fn now_ms(&self) -> u64 {
        let elapsed = coarsetime::Instant::now().duration_since(self.anchor);
        self.anchor_unix_ms + elapsed.as_millis()
    }
}

/// Under loom: the logical clock's start (a fixed unix time).
#[cfg(loom)]
struct HostClock;

#[cfg(loom)]
const LOGICAL_START_MS: u64 = 1_700_000_000_000;

#[cfg(loom)]
impl HostClock {
    fn new() -> HostClock {
        HostClock
    }
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, State> {
        // A panic while holding the lock cannot leave the store half-updated in a way
        // that matters more than the panic itself; keep serving.
        self.state
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Applies one command under the lock; returns the reply and the store's version.
    fn apply(&self, command: &Command) -> (Reply, u64) {
        let mut state = self.lock();
        let now = self.tick(&mut state);
        let reply = state.store.apply(now, command);
        let version = if command.is_mutation() {
            self.changed_locked(state)
        } else {
            state.version
        };
        (reply, version)
    }

    /// Records a change and wakes the waiters (if any), releasing the lock.
    fn changed_locked(&self, mut state: MutexGuard<'_, State>) -> u64 {
        state.version += 1;
        let version = state.version;
        let wake = state.waiters > 0;
        drop(state);
        if wake {
            self.changed.notify_all();
        }
        version
    }

    /// The time for the next command, taken under the lock so it never decreases.
    #[cfg(not(loom))]
    fn tick(&self, _state: &mut State) -> u64 {
        self.clock.now_ms()
    }

    #[cfg(loom)]
    fn tick(&self, state: &mut State) -> u64 {
        let _ = &self.clock;
        state.logical_ms += 1;
        state.logical_ms
    }
}

impl MemStore {
    /// A shared store with this configuration, started now.
    pub fn new(config: StoreConfig) -> MemStore {
        let clock = HostClock::new();
        #[cfg(not(loom))]
        let start = clock.now_ms();
        #[cfg(loom)]
        let start = LOGICAL_START_MS;
        MemStore {
            shared: Arc::new(Shared {
                state: Mutex::new(State {
                    store: Store::new(config, start),
                    version: 0,
                    waiters: 0,
                    #[cfg(loom)]
                    logical_ms: start,
                }),
                changed: Condvar::new(),
                clock,
            }),
        }
    }

    /// A handle for client `id` (its random numbers are seeded by `id`).
    pub fn client(&self, id: usize) -> MemClient {
        MemClient {
            shared: Arc::clone(&self.shared),
            id,
            rng: RefCell::new(SimRng::derive(CLIENT_SEED, id as u64)),
            seen_version: Cell::new(0),
        }
    }

    /// Applies one command now (what every client's `execute` does).
    pub fn apply(&self, command: &Command) -> Reply {
        self.shared.apply(command).0
    }

    /// Forced eviction of `key`; `true` if a live item was removed.
    pub fn evict(&self, key: &[u8]) -> bool {
        let mut state = self.shared.lock();
        let now = self.shared.tick(&mut state);
        let removed = state.store.evict_at(now, key);
        self.shared.changed_locked(state);
        removed
    }

    /// Restarts the server (volatile data lost unless the store is persistent).
    pub fn restart(&self) {
        let mut state = self.shared.lock();
        let now = self.shared.tick(&mut state);
        state.store.restart(now);
        self.shared.changed_locked(state);
    }

    /// A copy of the store as it is now.
    pub fn snapshot(&self) -> Store {
        self.shared.lock().store.clone()
    }
}

/// One client's handle on a [`MemStore`]; implements [`Kv`]. Meant for one thread
/// (it is `Send`, not `Sync`).
pub struct MemClient {
    shared: Arc<Shared>,
    id: usize,
    rng: RefCell<SimRng>,
    /// The store's version when this client last heard from it.
    seen_version: Cell<u64>,
}

impl MemClient {
    /// The client's id.
    pub fn id(&self) -> usize {
        self.id
    }
}

impl Kv for MemClient {
    async fn execute(&self, command: Command) -> Result<Reply, KvError> {
        let (reply, version) = self.shared.apply(&command);
        self.seen_version.set(version);
        Ok(reply)
    }

    #[cfg(not(loom))]
    fn now_ms(&self) -> u64 {
        self.shared.clock.now_ms()
    }

    #[cfg(loom)]
    fn now_ms(&self) -> u64 {
        self.shared.lock().logical_ms
    }

    #[cfg(not(loom))]
    async fn sleep_ms(&self, ms: u64) {
        std::thread::sleep(std::time::Duration::from_millis(ms));
    }

    #[cfg(loom)]
    async fn sleep_ms(&self, _ms: u64) {
        loom::thread::yield_now();
    }

    /// Returns as soon as the store changed since this client last executed a command
    /// (or at once if it already has), else after `ms`.
    #[cfg(not(loom))]
    async fn wait_for_change_ms(&self, ms: u64) {
        let seen = self.seen_version.get();
        let mut state = self.shared.lock();
        state.waiters += 1;
        let (mut state, _) = self
            .shared
            .changed
            .wait_timeout_while(state, std::time::Duration::from_millis(ms), |st| {
                st.version == seen
            })
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        state.waiters -= 1;
        self.seen_version.set(state.version);
    }

    #[cfg(loom)]
    async fn wait_for_change_ms(&self, _ms: u64) {
        loom::thread::yield_now();
    }

    fn random_u64(&self) -> u64 {
        self.rng.borrow_mut().next_u64()
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use crate::kv::block_on_ready;

    #[test]
    fn clients_share_one_store() {
        let mem = MemStore::new(StoreConfig::default());
        let a = mem.client(0);
        let b = mem.client(1);
        assert!(block_on_ready(a.set(b"k", b"1", 0)).unwrap().is_stored());
        assert_eq!(block_on_ready(b.incr(b"k", 4)).unwrap(), Some(5));
        assert_eq!(block_on_ready(a.get(b"k")).unwrap(), Some(b"5".to_vec()));
        assert_ne!(a.random_u64(), b.random_u64());
        assert!(mem.evict(b"k"));
        assert_eq!(block_on_ready(a.get(b"k")).unwrap(), None);
    }

    #[test]
    fn threads_incrementing_lose_no_update() {
        let mem = MemStore::new(StoreConfig::default());
        block_on_ready(mem.client(0).set(b"n", b"0", 0)).unwrap();
        let handles: Vec<_> = (0..4)
            .map(|id| {
                let mem = mem.clone();
                std::thread::spawn(move || {
                    let c = mem.client(id);
                    for _ in 0..500 {
                        block_on_ready(c.incr(b"n", 1)).unwrap();
                    }
                })
            })
            .collect();
        for h in handles {
            h.join().unwrap();
        }
        assert_eq!(
            block_on_ready(mem.client(9).get(b"n")).unwrap(),
            Some(b"2000".to_vec())
        );
    }

    #[test]
    fn a_waiting_reader_wakes_on_a_write() {
        let mem = MemStore::new(StoreConfig::default());
        let reader = mem.client(0);
        assert_eq!(block_on_ready(reader.get(b"q")).unwrap(), None);
        let writer = {
            let mem = mem.clone();
            std::thread::spawn(move || {
                block_on_ready(mem.client(1).set(b"q", b"x", 0)).unwrap();
            })
        };
        // Waits at most an hour; returns as soon as the write lands (or at once if it
        // already has). The test would hang, not pass, if no notification came.
        block_on_ready(reader.wait_for_change_ms(3_600_000));
        writer.join().unwrap();
        assert_eq!(
            block_on_ready(reader.get(b"q")).unwrap(),
            Some(b"x".to_vec())
        );
    }
}

/// loom: commands from several threads are atomic, i.e. the replies and the final store
/// are those of some sequential order of the same commands.
#[cfg(all(loom, test))]
mod loom_tests {
    use super::*;
    use crate::command::{ArithVerb, StoreVerb};
    use crate::kv::block_on_ready;

    fn store(verb: StoreVerb, key: &str, data: &str) -> Command {
        Command::Store {
            verb,
            key: key.as_bytes().to_vec(),
            flags: 0,
            exptime: 0,
            data: data.as_bytes().to_vec(),
            noreply: false,
        }
    }

    fn cas(key: &str, unique: u64, data: &str) -> Command {
        Command::Cas {
            key: key.as_bytes().to_vec(),
            flags: 0,
            exptime: 0,
            data: data.as_bytes().to_vec(),
            unique,
            noreply: false,
        }
    }

    fn incr(key: &str, delta: u64) -> Command {
        Command::Arith {
            verb: ArithVerb::Incr,
            key: key.as_bytes().to_vec(),
            delta,
            noreply: false,
        }
    }

    type Outcome = (Vec<Vec<Reply>>, Store);

    /// Every (replies per thread, final store) a sequential execution can give: all
    /// interleavings of the threads' programs, each run through a fresh `Store` with the
    /// same logical clock as `MemStore` under loom.
    fn sequential_outcomes(setup: &[Command], threads: &[Vec<Command>]) -> Vec<Outcome> {
        fn go(
            store: &Store,
            now: u64,
            threads: &[Vec<Command>],
            next: &mut Vec<usize>,
            replies: &mut Vec<Vec<Reply>>,
            out: &mut Vec<Outcome>,
        ) {
            let mut any = false;
            for t in 0..threads.len() {
                if next[t] == threads[t].len() {
                    continue;
                }
                any = true;
                let mut s = store.clone();
                let reply = s.apply(now + 1, &threads[t][next[t]]);
                next[t] += 1;
                replies[t].push(reply);
                go(&s, now + 1, threads, next, replies, out);
                replies[t].pop();
                next[t] -= 1;
            }
            if !any {
                out.push((replies.clone(), store.clone()));
            }
        }
        let mut store = Store::new(StoreConfig::default(), LOGICAL_START_MS);
        let mut now = LOGICAL_START_MS;
        for c in setup {
            now += 1;
            store.apply(now, c);
        }
        let mut out = Vec::new();
        go(
            &store,
            now,
            threads,
            &mut vec![0; threads.len()],
            &mut vec![Vec::new(); threads.len()],
            &mut out,
        );
        out
    }

    fn check_sequential(setup: Vec<Command>, threads: Vec<Vec<Command>>) {
        let allowed = std::sync::Arc::new(sequential_outcomes(&setup, &threads));
        assert!(allowed.len() > 1, "the test must allow several orders");
        let mut model = loom::model::Builder::new();
        // Three preemptions cover every order of three threads' lock acquisitions.
        model.preemption_bound = Some(3);
        model.check(move || {
            let mem = MemStore::new(StoreConfig::default());
            for c in &setup {
                mem.apply(c);
            }
            let handles: Vec<_> = threads
                .iter()
                .cloned()
                .enumerate()
                .map(|(id, program)| {
                    let mem = mem.clone();
                    loom::thread::spawn(move || {
                        let client = mem.client(id);
                        program
                            .into_iter()
                            .map(|c| {
                                block_on_ready(client.execute(c)).expect("memstore never fails")
                            })
                            .collect::<Vec<Reply>>()
                    })
                })
                .collect();
            let replies: Vec<Vec<Reply>> = handles.into_iter().map(|h| h.join().unwrap()).collect();
            let outcome = (replies, mem.snapshot());
            assert!(
                allowed.contains(&outcome),
                "no sequential order explains replies {:?}",
                outcome.0
            );
        });
    }

    #[test]
    fn loom_cas_add_incr_append_are_atomic() {
        // n = "1" with unique 1.
        let setup = vec![store(StoreVerb::Set, "n", "1")];
        let threads = vec![
            vec![incr("n", 5), store(StoreVerb::Add, "m", "a")],
            vec![cas("n", 1, "7"), store(StoreVerb::Append, "m", "b")],
            vec![
                store(StoreVerb::Append, "n", "0"),
                store(StoreVerb::Add, "m", "c"),
            ],
        ];
        check_sequential(setup, threads);
    }

    #[test]
    fn loom_racing_adds_and_cas_have_one_winner() {
        let setup = vec![store(StoreVerb::Set, "k", "v")];
        let threads = vec![
            vec![store(StoreVerb::Add, "lock", "1")],
            vec![store(StoreVerb::Add, "lock", "2")],
            vec![cas("k", 1, "w"), cas("k", 1, "x")],
        ];
        check_sequential(setup, threads);
    }

    #[test]
    fn loom_concurrent_increments_are_not_lost() {
        let setup = vec![store(StoreVerb::Set, "n", "9")];
        let threads = vec![vec![incr("n", 1)], vec![incr("n", 1)], vec![incr("n", 90)]];
        check_sequential(setup, threads);
    }
}
