//! Random command sequences through `Store` and through a small, independent reference
//! model of memcached's core rules; every reply must agree byte for byte.
//!
//! The model covers set/add/replace/append/prepend/cas/get/gets/incr/decr/delete/touch and
//! an immediate flush_all, with relative, absolute-past and negative expiry and time steps
//! that cross second boundaries. It models the cas counter exactly (one global counter;
//! every successful store and incr/decr takes the next value, an immediate flush consumes
//! one), so uniques are compared as they are. It leaves out what the conformance tests pin
//! one by one: size limits, memory limits, delayed flushes, chunked items.
//!
//! `lru_evictions_agree_with_the_model` checks the memory-limited store against its own
//! small model of memcached's slab classes with `-o no_lru_maintainer` (pages per class,
//! a class's first page above the limit, per-class eviction order, allocation before
//! lookup), and
//! `store_stays_consistent_under_memory_pressure_and_faults` checks the store's
//! invariants under limits, eviction off, persistence, forced evictions, restarts and
//! delayed flushes.

use kvsim::command::{ArithVerb, Command, Reply, StoreVerb, Value};
use kvsim::store::geometry::Geometry;
use kvsim::store::{Store, StoreConfig};
use proptest::prelude::*;
use std::collections::BTreeMap;

const T0: u64 = 1_700_000_000_000;

/// The reference model: a map of live items with absolute expiry seconds.
#[derive(Default)]
struct Model {
    items: BTreeMap<Vec<u8>, ModelItem>,
    counter: u64,
}

struct ModelItem {
    data: Vec<u8>,
    flags: u32,
    /// Unix second at which the item dies; `None` = never.
    dies_at: Option<i64>,
    cas: u64,
}

impl Model {
    fn dies_at(now_s: i64, exptime: i64) -> Option<i64> {
        match exptime {
            0 => None,
            e if e < 0 => Some(i64::MIN),
            e if e > 2_592_000 => Some(e),
            e => Some(now_s + e),
        }
    }

    fn purge(&mut self, now_s: i64) {
        self.items
            .retain(|_, it| it.dies_at.is_none_or(|d| d > now_s));
    }

    fn next(&mut self) -> u64 {
        self.counter += 1;
        self.counter
    }

    /// A strict decimal parser standing in for strtoull on the values the test generates:
    /// optional leading blanks and `+`, digits, then nothing or a blank and anything.
    fn parse(data: &[u8]) -> Option<u64> {
        let text = std::str::from_utf8(data).ok()?;
        let text = text.trim_start_matches([' ', '\t']);
        let text = text.strip_prefix('+').unwrap_or(text);
        let end = text
            .find(|c: char| !c.is_ascii_digit())
            .unwrap_or(text.len());
        let (digits, rest) = text.split_at(end);
        if digits.is_empty() || !(rest.is_empty() || rest.starts_with([' ', '\t'])) {
            return None;
        }
        digits.parse().ok()
    }

    fn apply(&mut self, now_ms: u64, command: &Command) -> Reply {
        let now_s = (now_ms / 1000) as i64;
        self.purge(now_s);
        match command {
            Command::Store {
                verb,
                key,
                flags,
                exptime,
                data,
                ..
            } => {
                let present = self.items.contains_key(key);
                match (verb, present) {
                    (StoreVerb::Set, _) | (StoreVerb::Add, false) | (StoreVerb::Replace, true) => {
                        let cas = self.next();
                        self.items.insert(
                            key.clone(),
                            ModelItem {
                                data: data.clone(),
                                flags: *flags,
                                dies_at: Self::dies_at(now_s, *exptime),
                                cas,
                            },
                        );
                        Reply::Stored
                    }
                    (StoreVerb::Append | StoreVerb::Prepend, true) => {
                        let cas = self.next();
                        let it = self.items.get_mut(key).unwrap();
                        it.data = if *verb == StoreVerb::Append {
                            [it.data.as_slice(), data].concat()
                        } else {
                            [data.as_slice(), it.data.as_slice()].concat()
                        };
                        it.cas = cas;
                        Reply::Stored
                    }
                    _ => Reply::NotStored,
                }
            }
            Command::Cas {
                key,
                flags,
                exptime,
                data,
                unique,
                ..
            } => match self.items.get(key) {
                None => Reply::NotFound,
                Some(it) if *unique == 0 || it.cas != *unique => Reply::Exists,
                Some(_) => {
                    let cas = self.next();
                    self.items.insert(
                        key.clone(),
                        ModelItem {
                            data: data.clone(),
                            flags: *flags,
                            dies_at: Self::dies_at(now_s, *exptime),
                            cas,
                        },
                    );
                    Reply::Stored
                }
            },
            Command::Get { with_cas, keys } => Reply::Values(
                keys.iter()
                    .filter_map(|k| {
                        self.items.get(k).map(|it| Value {
                            key: k.clone(),
                            flags: it.flags,
                            data: it.data.clone(),
                            cas: with_cas.then_some(it.cas),
                        })
                    })
                    .collect(),
            ),
            Command::Arith {
                verb, key, delta, ..
            } => {
                let Some(it) = self.items.get(key) else {
                    return Reply::NotFound;
                };
                let Some(old) = Self::parse(&it.data) else {
                    return Reply::ClientError(kvsim::command::ClientError::NonNumeric);
                };
                let new = match verb {
                    ArithVerb::Incr => old.wrapping_add(*delta),
                    ArithVerb::Decr => old.saturating_sub(*delta),
                };
                let cas = self.next();
                let it = self.items.get_mut(key).unwrap();
                let digits = new.to_string().into_bytes();
                it.data = if digits.len() <= it.data.len() {
                    let mut padded = digits;
                    padded.resize(it.data.len(), b' ');
                    padded
                } else {
                    digits
                };
                it.cas = cas;
                Reply::Number(new)
            }
            Command::Delete { key, .. } => match self.items.remove(key) {
                Some(_) => Reply::Deleted,
                None => Reply::NotFound,
            },
            Command::Touch { key, exptime, .. } => match self.items.get_mut(key) {
                Some(it) => {
                    it.dies_at = Self::dies_at(now_s, *exptime);
                    Reply::Touched
                }
                None => Reply::NotFound,
            },
            Command::FlushAll { .. } => {
                self.items.clear();
                self.next();
                Reply::Ok
            }
            Command::Gat { .. } | Command::Meta(_) => unreachable!("not generated"),
        }
    }

    fn live_keys(&self, now_ms: u64) -> Vec<Vec<u8>> {
        let now_s = (now_ms / 1000) as i64;
        self.items
            .iter()
            .filter(|(_, it)| it.dies_at.is_none_or(|d| d > now_s))
            .map(|(k, _)| k.clone())
            .collect()
    }
}

fn key() -> impl Strategy<Value = Vec<u8>> {
    prop::sample::select(vec![b"a".to_vec(), b"b".to_vec(), b"c".to_vec()])
}

fn data() -> impl Strategy<Value = Vec<u8>> {
    prop::sample::select(vec![
        b"0".to_vec(),
        b"9".to_vec(),
        b"10".to_vec(),
        b"99".to_vec(),
        b"1000".to_vec(),
        b" 5".to_vec(),
        b"+7".to_vec(),
        b"5 x".to_vec(),
        b"12abc".to_vec(),
        b"18446744073709551615".to_vec(),
        b"x".to_vec(),
        Vec::new(),
    ])
}

fn exptime() -> impl Strategy<Value = i64> {
    prop::sample::select(vec![0i64, 0, 0, 1, 2, 5, -1, 2_592_001, 1_700_000_003])
}

fn command() -> impl Strategy<Value = Command> {
    let verb = prop::sample::select(vec![
        StoreVerb::Set,
        StoreVerb::Add,
        StoreVerb::Replace,
        StoreVerb::Append,
        StoreVerb::Prepend,
    ]);
    prop_oneof![
        4 => (verb, key(), 0u32..3, exptime(), data()).prop_map(|(verb, key, flags, exptime, data)| {
            Command::Store { verb, key, flags, exptime, data, noreply: false }
        }),
        2 => (key(), 0u32..3, exptime(), data(), 0u64..12).prop_map(|(key, flags, exptime, data, unique)| {
            Command::Cas { key, flags, exptime, data, unique, noreply: false }
        }),
        3 => (any::<bool>(), prop::collection::vec(key(), 1..4))
            .prop_map(|(with_cas, keys)| Command::Get { with_cas, keys }),
        3 => (any::<bool>(), key(), prop::sample::select(vec![0u64, 1, 5, 90, u64::MAX]))
            .prop_map(|(incr, key, delta)| Command::Arith {
                verb: if incr { ArithVerb::Incr } else { ArithVerb::Decr },
                key,
                delta,
                noreply: false,
            }),
        1 => key().prop_map(|key| Command::Delete { key, noreply: false }),
        1 => (key(), exptime()).prop_map(|(key, exptime)| Command::Touch { key, exptime, noreply: false }),
        1 => Just(Command::FlushAll { delay: None, noreply: false }),
    ]
}

/// A step: wait this many ms, then run the command.
fn steps() -> impl Strategy<Value = Vec<(u64, Command)>> {
    prop::collection::vec(
        (
            prop::sample::select(vec![0u64, 0, 0, 1, 300, 999, 1_000, 2_500]),
            command(),
        ),
        1..40,
    )
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    #[test]
    fn store_agrees_with_the_reference_model(start in 0u64..1000, steps in steps()) {
        let mut now = T0 + start;
        let mut store = Store::new(StoreConfig::default(), now);
        let mut model = Model::default();
        for (i, (wait, command)) in steps.iter().enumerate() {
            now += wait;
            let got = store.apply(now, command);
            let want = model.apply(now, command);
            prop_assert_eq!(
                got.to_bytes(),
                want.to_bytes(),
                "step {} at +{} ms: `{}`: store said {}, model said {}",
                i,
                now - T0,
                command,
                got,
                want
            );
        }
        prop_assert_eq!(store.live_keys(now), model.live_keys(now));
    }
}

/// One step of the fault-heavy sequence: a command, a forced eviction, a restart, or a
/// delayed flush.
#[derive(Clone, Debug)]
enum Step {
    Apply(Command),
    Evict(Vec<u8>),
    Restart,
}

fn step_key(step: &Step) -> Option<&[u8]> {
    match step {
        Step::Apply(command) => command.first_key(),
        _ => None,
    }
}

fn big_data() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![data(), (1usize..200).prop_map(|n| vec![b'1'; n]),]
}

fn fault_step() -> impl Strategy<Value = Step> {
    let verb = prop::sample::select(vec![
        StoreVerb::Set,
        StoreVerb::Add,
        StoreVerb::Replace,
        StoreVerb::Append,
        StoreVerb::Prepend,
    ]);
    prop_oneof![
        6 => (verb, key(), 0u32..2, exptime(), big_data()).prop_map(|(verb, key, flags, exptime, data)| {
            Step::Apply(Command::Store { verb, key, flags, exptime, data, noreply: false })
        }),
        3 => command().prop_map(Step::Apply),
        1 => prop::sample::select(vec![-1i64, 0, 1, 2, 30]).prop_map(|d| {
            Step::Apply(Command::FlushAll { delay: Some(d), noreply: false })
        }),
        1 => key().prop_map(Step::Evict),
        1 => Just(Step::Restart),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    /// Under memory limits (eviction on or off), persistence, forced evictions, restarts
    /// and delayed flushes, the store stays consistent: its byte count matches its items
    /// and the limit, its indexes match its items, evicted keys are gone, and only a
    /// persistent store keeps data across a restart.
    #[test]
    fn store_stays_consistent_under_memory_pressure_and_faults(
        limit in prop::option::of(200usize..800),
        evict in any::<bool>(),
        persistent in any::<bool>(),
        steps in prop::collection::vec(
            (prop::sample::select(vec![0u64, 1, 400, 1_000, 3_000]), fault_step()),
            1..60,
        ),
    ) {
        let config = StoreConfig { memory_limit: limit, evict, persistent, ..StoreConfig::default() };
        let mut now = T0;
        let mut store = Store::new(config, now);
        for (wait, step) in &steps {
            now += wait;
            match step {
                Step::Apply(command) => {
                    let reply = store.apply(now, command);
                    let oom = reply == Reply::ServerError(kvsim::command::ServerError::OutOfMemoryStoring);
                    prop_assert!(!oom || (limit.is_some() && !persistent), "{} gave {}", command, reply);
                }
                Step::Evict(key) => {
                    store.evict(key);
                    prop_assert!(store.peek(now, key).is_none());
                }
                Step::Restart => {
                    let before = store.live_keys(now);
                    store.restart(now);
                    let after = store.live_keys(now);
                    if persistent {
                        prop_assert_eq!(before, after);
                    } else {
                        prop_assert!(after.is_empty());
                        prop_assert_eq!(store.last_cas(), 0);
                    }
                }
            }
            if let Err(e) = store.check_invariants() {
                return Err(TestCaseError::fail(format!("after {step:?}: {e}")));
            }
            for key in store.take_evicted().into_iter().map(|e| e.key) {
                prop_assert!(evict && !persistent && limit.is_some(), "unexpected eviction");
                // Gone, unless the step itself stored that key after evicting its old item.
                let restored = step_key(step) == Some(&key[..]);
                prop_assert!(store.peek(now, &key).is_none() || restored, "evicted key still live");
            }
        }
    }
}

/// The slab classes of [`slab_geometry`]: `-n 48`, `-f 1.25`, 360-byte pages and chunks
/// of at most 360 bytes.
const CHUNKS: [usize; 6] = [96, 120, 152, 192, 240, 360];

/// Bytes per page in the model.
const PAGE: usize = 360;

/// A memcached geometry scaled down so that a few items fill a page.
fn slab_geometry() -> Geometry {
    Geometry {
        page_size: PAGE,
        slab_chunk_max: PAGE,
        lru_maintainer: false,
        slab_automove: 0,
        ..Geometry::default()
    }
}

/// An independent model of memcached's memory with `-o no_lru_maintainer` (one LRU per
/// slab class; within a second no hit moves an item): pages of [`PAGE`] bytes, a class's
/// first page even above the limit, every storage command allocating its item's chunk
/// before it looks at the key, evicting from the tail of its own class only.
struct SlabModel {
    limit: usize,
    malloced: usize,
    pages: [usize; 6],
    used: [usize; 6],
    /// Per class, oldest first.
    order: [Vec<(Vec<u8>, Vec<u8>)>; 6],
    evicted: Vec<(Vec<u8>, usize)>,
}

impl SlabModel {
    fn new(limit: usize) -> SlabModel {
        SlabModel {
            limit,
            malloced: 0,
            pages: [0; 6],
            used: [0; 6],
            order: Default::default(),
            evicted: Vec::new(),
        }
    }

    fn size(key: &[u8], data: &[u8]) -> usize {
        48 + key.len() + 1 + data.len() + 2 + 8
    }

    fn class(size: usize) -> usize {
        CHUNKS
            .iter()
            .position(|&c| c >= size)
            .expect("a class holds it")
    }

    fn find(&self, key: &[u8]) -> Option<(usize, usize)> {
        (0..6).find_map(|c| {
            self.order[c]
                .iter()
                .position(|(k, _)| k == key)
                .map(|i| (c, i))
        })
    }

    fn remove(&mut self, key: &[u8]) {
        if let Some((c, i)) = self.find(key) {
            self.order[c].remove(i);
            self.used[c] -= 1;
        }
    }

    /// One chunk of class `c`: a free one, a new page, or the class's oldest item evicted.
    fn alloc(&mut self, c: usize) -> bool {
        loop {
            if self.used[c] < self.pages[c] * (PAGE / CHUNKS[c]) {
                self.used[c] += 1;
                return true;
            }
            if self.pages[c] == 0 || self.malloced + PAGE <= self.limit {
                self.pages[c] += 1;
                self.malloced += PAGE;
                continue;
            }
            if self.order[c].is_empty() {
                return false;
            }
            let (k, _) = self.order[c].remove(0);
            self.used[c] -= 1;
            self.evicted.push((k, CHUNKS[c]));
        }
    }

    fn apply(&mut self, command: &Command) -> Reply {
        match command {
            Command::Store {
                verb, key, data, ..
            } => {
                let c = Self::class(Self::size(key, data));
                if !self.alloc(c) {
                    if *verb == StoreVerb::Set {
                        self.remove(key);
                    }
                    return Reply::ServerError(kvsim::command::ServerError::OutOfMemoryStoring);
                }
                let stores = match (verb, self.find(key)) {
                    (StoreVerb::Add, Some(_)) => false,
                    (StoreVerb::Set, _) | (StoreVerb::Add, None) => true,
                    (StoreVerb::Replace, found) => found.is_some(),
                    _ => false,
                };
                if !stores {
                    self.used[c] -= 1;
                    return Reply::NotStored;
                }
                self.remove(key);
                self.order[c].push((key.clone(), data.clone()));
                Reply::Stored
            }
            Command::Get { keys, .. } => Reply::Values(
                keys.iter()
                    .filter_map(|key| {
                        let (c, i) = self.find(key)?;
                        let (k, d) = &self.order[c][i];
                        Some(Value {
                            key: k.clone(),
                            flags: 0,
                            data: d.clone(),
                            cas: None,
                        })
                    })
                    .collect(),
            ),
            Command::Delete { key, .. } => match self.find(key) {
                Some(_) => {
                    self.remove(key);
                    Reply::Deleted
                }
                None => Reply::NotFound,
            },
            _ => unreachable!("not generated"),
        }
    }
}

fn lru_command() -> impl Strategy<Value = Command> {
    let keys = || {
        prop::sample::select(vec![
            b"a".to_vec(),
            b"b".to_vec(),
            b"c".to_vec(),
            b"d".to_vec(),
            b"e".to_vec(),
        ])
    };
    let verb = prop::sample::select(vec![
        StoreVerb::Set,
        StoreVerb::Set,
        StoreVerb::Add,
        StoreVerb::Replace,
    ]);
    prop_oneof![
        4 => (verb, keys(), 0usize..150).prop_map(|(verb, key, n)| Command::Store {
            verb, key, flags: 0, exptime: 0, data: vec![b'x'; n], noreply: false,
        }),
        3 => prop::collection::vec(keys(), 1..3).prop_map(|keys| Command::Get { with_cas: false, keys }),
        1 => keys().prop_map(|key| Command::Delete { key, noreply: false }),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    /// With a memory limit and eviction on (`-o no_lru_maintainer`), replies, the order of
    /// evictions, the classes they come from and every class's pages and chunks agree with
    /// the slab model.
    #[test]
    fn lru_evictions_agree_with_the_model(
        pages in 1usize..4,
        commands in prop::collection::vec(lru_command(), 1..60),
    ) {
        let limit = pages * PAGE;
        let config = StoreConfig {
            memory_limit: Some(limit),
            geometry: slab_geometry(),
            ..StoreConfig::default()
        };
        let mut store = Store::new(config, T0);
        let mut model = SlabModel::new(limit);
        for (i, command) in commands.iter().enumerate() {
            let got = store.apply(T0, command);
            let want = model.apply(command);
            prop_assert_eq!(&got, &want, "step {}: `{}`", i, command);
            let evicted: Vec<(Vec<u8>, usize)> =
                store.take_evicted().into_iter().map(|e| (e.key, e.class.chunk)).collect();
            prop_assert_eq!(evicted, std::mem::take(&mut model.evicted), "step {}: `{}`", i, command);
            let report = store.memory_report(T0).expect("memory-limited");
            for class in &report.classes {
                let c = SlabModel::class(class.class.chunk);
                prop_assert_eq!(class.class.chunk, CHUNKS[c]);
                prop_assert_eq!((class.total_pages, class.used_chunks), (model.pages[c], model.used[c]), "class {} after step {}", c + 1, i);
            }
            prop_assert_eq!(report.total_malloced, model.malloced);
            prop_assert!(store.check_invariants().is_ok(), "{:?}", store.check_invariants());
        }
    }
}
