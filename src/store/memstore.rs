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

use crate::command::{validate_data, validate_key, Command, Reply, StoreVerb, Value};
use crate::kv::{checked_reply, single_value, store_outcome, Kv, KvError, StoreOutcome, Versioned};
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

    /// [`Shared::apply`] of a storage command with flags 0, from borrowed parts (see
    /// [`MemClient`]'s typed methods).
    fn apply_store(&self, verb: StoreVerb, key: &[u8], exptime: i64, data: &[u8]) -> (Reply, u64) {
        let mut state = self.lock();
        let now = self.tick(&mut state);
        let reply = state.store.apply_store(now, verb, key, 0, exptime, data);
        (reply, self.changed_locked(state))
    }

    /// [`Shared::apply`] of a `get`/`gets` of one key, from a borrowed key.
    fn apply_get(&self, with_cas: bool, key: &[u8]) -> (Reply, u64) {
        let mut state = self.lock();
        let now = self.tick(&mut state);
        let reply = state.store.apply_get(now, with_cas, key);
        (reply, state.version)
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

    /// [`Kv::store`] without building a `Command`: validated as `Command::validate`
    /// validates it, applied as [`Store::apply`] applies it, the reply read as the default
    /// method reads it.
    fn store_now(
        &self,
        verb: StoreVerb,
        key: &[u8],
        data: &[u8],
        exptime: i64,
    ) -> Result<StoreOutcome, KvError> {
        validate_key(key)?;
        validate_data(data)?;
        let (reply, version) = self.shared.apply_store(verb, key, exptime, data);
        self.seen_version.set(version);
        let reply = checked_reply(verb.as_str(), key, reply)?;
        store_outcome(verb.as_str(), key, reply)
    }

    /// `get`/`gets` of one key without building a `Command` (see [`MemClient::store_now`]).
    fn get_now(&self, with_cas: bool, key: &[u8]) -> Result<Option<Value>, KvError> {
        let verb = if with_cas { "gets" } else { "get" };
        validate_key(key)?;
        let (reply, version) = self.shared.apply_get(with_cas, key);
        self.seen_version.set(version);
        let reply = checked_reply(verb, key, reply)?;
        single_value(verb, key, reply)
    }
}

impl Kv for MemClient {
    async fn execute(&self, command: Command) -> Result<Reply, KvError> {
        let (reply, version) = self.shared.apply(&command);
        self.seen_version.set(version);
        Ok(reply)
    }

    // The typed calls structures make most, overridden to skip the `Command` the default
    // methods build (a key and a data copy, a deeper future): a third of `kvsim bench
    // mq`'s writer. Same validation, effect and result as the default methods
    // (`typed_calls_match_execute` checks it).

    async fn get(&self, key: &[u8]) -> Result<Option<Vec<u8>>, KvError> {
        Ok(self.get_now(false, key)?.map(|v| v.data))
    }

    async fn gets(&self, key: &[u8]) -> Result<Option<Versioned>, KvError> {
        Ok(self.get_now(true, key)?.map(|v| Versioned {
            data: v.data,
            flags: v.flags,
            cas: v.cas.unwrap_or(0),
        }))
    }

    async fn store(
        &self,
        verb: StoreVerb,
        key: &[u8],
        data: &[u8],
        exptime: i64,
    ) -> Result<StoreOutcome, KvError> {
        self.store_now(verb, key, data, exptime)
    }

    async fn set(&self, key: &[u8], data: &[u8], exptime: i64) -> Result<StoreOutcome, KvError> {
        self.store_now(StoreVerb::Set, key, data, exptime)
    }

    async fn add(&self, key: &[u8], data: &[u8], exptime: i64) -> Result<StoreOutcome, KvError> {
        self.store_now(StoreVerb::Add, key, data, exptime)
    }

    async fn replace(
        &self,
        key: &[u8],
        data: &[u8],
        exptime: i64,
    ) -> Result<StoreOutcome, KvError> {
        self.store_now(StoreVerb::Replace, key, data, exptime)
    }

    async fn append(&self, key: &[u8], data: &[u8]) -> Result<StoreOutcome, KvError> {
        self.store_now(StoreVerb::Append, key, data, 0)
    }

    async fn prepend(&self, key: &[u8], data: &[u8]) -> Result<StoreOutcome, KvError> {
        self.store_now(StoreVerb::Prepend, key, data, 0)
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

    /// The pseudo-random storage and retrieval calls both checks below make: verb (0-4
    /// storage, 5 get, 6 gets), key, data length, exptime.
    fn calls(seed: u64, n: usize) -> Vec<(u64, Vec<u8>, usize, i64)> {
        let mut rng = SimRng::derive(seed, 0);
        let keys: [&[u8]; 5] = [b"a", b"b", b"c", b"d", &[b'k'; 251]];
        (0..n)
            .map(|_| {
                let verb = rng.next_u64() % 7;
                let key = keys[(rng.next_u64() % 5) as usize].to_vec();
                let len = [0, 3, 100, 700][(rng.next_u64() % 4) as usize];
                let exptime = [0, 0, -1, 100][(rng.next_u64() % 4) as usize];
                (verb, key, len, exptime)
            })
            .collect()
    }

    const VERBS: [StoreVerb; 5] = [
        StoreVerb::Set,
        StoreVerb::Add,
        StoreVerb::Replace,
        StoreVerb::Append,
        StoreVerb::Prepend,
    ];

    fn configs() -> Vec<StoreConfig> {
        let small = crate::store::geometry::Geometry {
            page_size: 1024,
            slab_chunk_max: 512,
            ..Default::default()
        };
        vec![
            StoreConfig::default(),
            StoreConfig {
                item_size_max: 1024,
                memory_limit: Some(4096),
                geometry: small.clone(),
                ..StoreConfig::default()
            },
            StoreConfig {
                item_size_max: 1024,
                memory_limit: Some(4096),
                evict: false,
                geometry: small,
                ..StoreConfig::default()
            },
        ]
    }

    /// `Store::apply_store`/`apply_get` leave the store (its tally and last time included:
    /// the `Debug` rendering shows them) and reply exactly as `apply` of the `Command`.
    #[test]
    fn borrowed_entry_points_match_apply() {
        for config in configs() {
            let t0 = 1_700_000_000_000;
            let mut by_command = Store::new(config.clone(), t0);
            let mut borrowed = Store::new(config, t0);
            for (i, (verb, key, len, exptime)) in calls(1, 3000).into_iter().enumerate() {
                // Time goes on (a second per 40 calls), and now and then everything is
                // flushed: items expire and are hidden under both paths.
                let now = t0 + 25 * i as u64;
                if i % 500 == 499 {
                    let flush = Command::FlushAll {
                        delay: None,
                        noreply: false,
                    };
                    by_command.apply(now, &flush);
                    borrowed.apply(now, &flush);
                }
                let data = vec![b'x'; len];
                let (expected, got) = if verb < 5 {
                    let verb = VERBS[verb as usize];
                    let command = Command::Store {
                        verb,
                        key: key.clone(),
                        flags: 0,
                        exptime,
                        data: data.clone(),
                        noreply: false,
                    };
                    (
                        by_command.apply(now, &command),
                        borrowed.apply_store(now, verb, &key, 0, exptime, &data),
                    )
                } else {
                    let with_cas = verb == 6;
                    let command = Command::Get {
                        with_cas,
                        keys: vec![key.clone()],
                    };
                    (
                        by_command.apply(now, &command),
                        borrowed.apply_get(now, with_cas, &key),
                    )
                };
                assert_eq!(expected, got, "call {i}");
                assert_eq!(
                    format!("{by_command:?}"),
                    format!("{borrowed:?}"),
                    "call {i}"
                );
            }
            let (a, b) = (by_command.take_tally(), borrowed.take_tally());
            assert_eq!(
                (a.expired, a.flushed, a.linked),
                (b.expired, b.flushed, b.linked)
            );
            assert!(a.linked > 0 && a.expired > 0 && a.flushed > 0);
        }
    }

    /// The client's default `Kv` methods, which go through `execute`.
    struct ViaExecute<'a>(&'a MemClient);

    impl Kv for ViaExecute<'_> {
        async fn execute(&self, command: Command) -> Result<Reply, KvError> {
            self.0.execute(command).await
        }
        fn now_ms(&self) -> u64 {
            self.0.now_ms()
        }
        async fn sleep_ms(&self, ms: u64) {
            self.0.sleep_ms(ms).await
        }
        fn random_u64(&self) -> u64 {
            self.0.random_u64()
        }
    }

    /// The typed calls `MemClient` overrides give what the default methods give (results,
    /// errors, refusals before sending) and bump the store's version as `execute` does.
    #[test]
    fn typed_calls_match_execute() {
        for config in configs() {
            let (m1, m2) = (MemStore::new(config.clone()), MemStore::new(config));
            let (fast, slow) = (m1.client(0), m2.client(0));
            let via = ViaExecute(&slow);
            let mut calls = calls(2, 2000);
            calls.push((0, b"bad key".to_vec(), 1, 0));
            calls.push((5, b"bad key".to_vec(), 1, 0));
            calls.push((3, b"a".to_vec(), crate::command::VALUE_MAX_LEN + 1, 0));
            for (i, (verb, key, len, exptime)) in calls.into_iter().enumerate() {
                let data = vec![b'x'; len];
                let (expected, got) = match verb {
                    0 => (
                        format!("{:?}", block_on_ready(via.set(&key, &data, exptime))),
                        format!("{:?}", block_on_ready(fast.set(&key, &data, exptime))),
                    ),
                    1 => (
                        format!("{:?}", block_on_ready(via.add(&key, &data, exptime))),
                        format!("{:?}", block_on_ready(fast.add(&key, &data, exptime))),
                    ),
                    2 => (
                        format!("{:?}", block_on_ready(via.replace(&key, &data, exptime))),
                        format!("{:?}", block_on_ready(fast.replace(&key, &data, exptime))),
                    ),
                    3 => (
                        format!("{:?}", block_on_ready(via.append(&key, &data))),
                        format!("{:?}", block_on_ready(fast.append(&key, &data))),
                    ),
                    4 => (
                        format!("{:?}", block_on_ready(via.prepend(&key, &data))),
                        format!("{:?}", block_on_ready(fast.prepend(&key, &data))),
                    ),
                    5 => (
                        format!("{:?}", block_on_ready(via.get(&key))),
                        format!("{:?}", block_on_ready(fast.get(&key))),
                    ),
                    _ => (
                        format!("{:?}", block_on_ready(via.gets(&key))),
                        format!("{:?}", block_on_ready(fast.gets(&key))),
                    ),
                };
                assert_eq!(expected, got, "call {i}");
                let v = |m: &MemStore| m.shared.lock().version;
                assert_eq!(v(&m1), v(&m2), "call {i}");
                assert_eq!(fast.seen_version.get(), slow.seen_version.get(), "call {i}");
            }
            for (verb, key, len, exptime) in [(0, b"s".to_vec(), 3, 0), (3, b"s".to_vec(), 2, 0)] {
                let data = vec![b'y'; len];
                let verb = VERBS[verb];
                assert_eq!(
                    block_on_ready(via.store(verb, &key, &data, exptime)),
                    block_on_ready(fast.store(verb, &key, &data, exptime))
                );
            }
            assert_eq!(
                m1.snapshot().live_keys(fast.now_ms()),
                m2.snapshot().live_keys(slow.now_ms())
            );
        }
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
