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
//! `lru_evictions_agree_with_the_model` checks the memory-limited LRU against its own
//! small model (eviction order, allocation before lookup, byte counts), and
//! `store_stays_consistent_under_memory_pressure_and_faults` checks the store's
//! invariants under limits, eviction off, persistence, forced evictions, restarts and
//! delayed flushes.

use kvsim::command::{ArithVerb, Command, Reply, StoreVerb, Value};
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

/// An independent model of the global byte-count LRU: items in use order (oldest
/// first), every storage command allocating its item before it looks at the key.
struct LruModel {
    limit: usize,
    order: Vec<(Vec<u8>, Vec<u8>)>,
    evicted: Vec<Vec<u8>>,
}

impl LruModel {
    fn size(key: &[u8], data: &[u8]) -> usize {
        48 + key.len() + 1 + data.len() + 2 + 8
    }

    fn used(&self) -> usize {
        self.order.iter().map(|(k, d)| Self::size(k, d)).sum()
    }

    fn position(&self, key: &[u8]) -> Option<usize> {
        self.order.iter().position(|(k, _)| k == key)
    }

    fn touch(&mut self, i: usize) {
        let item = self.order.remove(i);
        self.order.push(item);
    }

    fn apply(&mut self, command: &Command) -> Reply {
        match command {
            Command::Store {
                verb, key, data, ..
            } => {
                let need = Self::size(key, data);
                if need > self.limit {
                    if *verb == StoreVerb::Set {
                        self.order.retain(|(k, _)| k != key);
                    }
                    return Reply::ServerError(kvsim::command::ServerError::OutOfMemoryStoring);
                }
                while self.used() + need > self.limit {
                    let (k, _) = self.order.remove(0);
                    self.evicted.push(k);
                }
                match (verb, self.position(key)) {
                    (StoreVerb::Add, Some(i)) => {
                        self.touch(i);
                        Reply::NotStored
                    }
                    (StoreVerb::Set, Some(i)) | (StoreVerb::Replace, Some(i)) => {
                        self.order.remove(i);
                        self.order.push((key.clone(), data.clone()));
                        Reply::Stored
                    }
                    (StoreVerb::Set, None) | (StoreVerb::Add, None) => {
                        self.order.push((key.clone(), data.clone()));
                        Reply::Stored
                    }
                    _ => Reply::NotStored,
                }
            }
            Command::Get { keys, .. } => {
                let mut values = Vec::new();
                for key in keys {
                    if let Some(i) = self.position(key) {
                        self.touch(i);
                        let (k, d) = self.order.last().unwrap();
                        values.push(Value {
                            key: k.clone(),
                            flags: 0,
                            data: d.clone(),
                            cas: None,
                        });
                    }
                }
                Reply::Values(values)
            }
            Command::Delete { key, .. } => match self.position(key) {
                Some(i) => {
                    self.order.remove(i);
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

    /// With a memory limit and eviction on, replies and the order of evictions agree with
    /// the LRU model: least recently used first, allocation before lookup.
    #[test]
    fn lru_evictions_agree_with_the_model(
        limit in 100usize..600,
        commands in prop::collection::vec(lru_command(), 1..60),
    ) {
        let config = StoreConfig { memory_limit: Some(limit), ..StoreConfig::default() };
        let mut store = Store::new(config, T0);
        let mut model = LruModel { limit, order: Vec::new(), evicted: Vec::new() };
        for (i, command) in commands.iter().enumerate() {
            let got = store.apply(T0, command);
            let want = model.apply(command);
            prop_assert_eq!(&got, &want, "step {}: `{}`", i, command);
            prop_assert_eq!(store.take_evicted().into_iter().map(|e| e.key).collect::<Vec<_>>(), std::mem::take(&mut model.evicted), "step {}: `{}`", i, command);
            prop_assert_eq!(store.used_bytes(), model.used());
        }
    }
}
