//! A tiny single-client in-memory `Kv` for the models' sequential tests, until the
//! simulator's store lands: memcached semantics for the commands the structures use,
//! a settable clock, expiry at whole seconds, and marks recorded.
#![allow(dead_code)]

use kvsim::command::{ArithVerb, Command, Reply, StoreVerb, Value};
use kvsim::history::{History, Mark, Operation, Outcome};
use kvsim::kv::{block_on_ready, Kv, KvError};
use kvsim::model::Model;
use kvsim::rng::SimRng;
use std::cell::{Cell, RefCell};
use std::collections::BTreeMap;

/// One item.
#[derive(Clone, Debug)]
struct Item {
    data: Vec<u8>,
    cas: u64,
    /// Absolute expiry in ms, 0 = never.
    expires_ms: u64,
}

/// The tiny store and client in one.
pub struct TinyKv {
    items: RefCell<BTreeMap<Vec<u8>, Item>>,
    now: Cell<u64>,
    next_cas: Cell<u64>,
    rng: RefCell<SimRng>,
    marks: RefCell<Vec<Mark>>,
    seq: Cell<u64>,
}

impl TinyKv {
    /// An empty store whose clock starts at `start_ms`.
    pub fn new(start_ms: u64) -> TinyKv {
        TinyKv {
            items: RefCell::new(BTreeMap::new()),
            now: Cell::new(start_ms),
            next_cas: Cell::new(1),
            rng: RefCell::new(SimRng::new(7)),
            marks: RefCell::new(Vec::new()),
            seq: Cell::new(0),
        }
    }

    /// Advances the clock.
    pub fn advance_ms(&self, ms: u64) {
        self.now.set(self.now.get() + ms);
    }

    /// Removes a key, as an eviction would.
    pub fn evict(&self, key: &[u8]) {
        self.items.borrow_mut().remove(key);
    }

    /// Removes every key, as a restart would.
    pub fn restart(&self) {
        self.items.borrow_mut().clear();
    }

    /// The keys currently stored (live ones).
    pub fn keys(&self) -> Vec<String> {
        let now = self.now.get();
        self.items
            .borrow()
            .iter()
            .filter(|(_, it)| it.expires_ms == 0 || it.expires_ms > now)
            .map(|(k, _)| String::from_utf8_lossy(k).into_owned())
            .collect()
    }

    fn tick(&self) -> u64 {
        let s = self.seq.get() + 1;
        self.seq.set(s);
        s
    }

    fn live(&self, key: &[u8]) -> Option<Item> {
        let now = self.now.get();
        let mut items = self.items.borrow_mut();
        match items.get(key) {
            Some(it) if it.expires_ms != 0 && it.expires_ms <= now => {
                items.remove(key);
                None
            }
            other => other.cloned(),
        }
    }

    fn expiry(&self, exptime: i64) -> u64 {
        let now_s = self.now.get() / 1000;
        match exptime {
            0 => 0,
            e if e < 0 => 1,
            e if e <= 2_592_000 => (now_s + e as u64) * 1000,
            e => e as u64 * 1000,
        }
    }

    fn put(&self, key: Vec<u8>, data: Vec<u8>, expires_ms: u64) {
        let cas = self.next_cas.get();
        self.next_cas.set(cas + 1);
        self.items.borrow_mut().insert(
            key,
            Item {
                data,
                cas,
                expires_ms,
            },
        );
    }

    fn apply(&self, command: Command) -> Reply {
        self.tick();
        match command {
            Command::Get { with_cas, keys } => Reply::Values(
                keys.into_iter()
                    .filter_map(|k| {
                        self.live(&k).map(|it| Value {
                            key: k,
                            flags: 0,
                            data: it.data,
                            cas: with_cas.then_some(it.cas),
                        })
                    })
                    .collect(),
            ),
            Command::Store {
                verb,
                key,
                exptime,
                data,
                ..
            } => {
                let old = self.live(&key);
                match (verb, old) {
                    (StoreVerb::Set, _)
                    | (StoreVerb::Add, None)
                    | (StoreVerb::Replace, Some(_)) => {
                        self.put(key, data, self.expiry(exptime));
                        Reply::Stored
                    }
                    (StoreVerb::Append, Some(it)) => {
                        let mut d = it.data;
                        d.extend(data);
                        self.put(key, d, it.expires_ms);
                        Reply::Stored
                    }
                    (StoreVerb::Prepend, Some(it)) => {
                        let mut d = data;
                        d.extend(it.data);
                        self.put(key, d, it.expires_ms);
                        Reply::Stored
                    }
                    _ => Reply::NotStored,
                }
            }
            Command::Cas {
                key,
                exptime,
                data,
                unique,
                ..
            } => match self.live(&key) {
                None => Reply::NotFound,
                Some(it) if it.cas != unique => Reply::Exists,
                Some(_) => {
                    self.put(key, data, self.expiry(exptime));
                    Reply::Stored
                }
            },
            Command::Arith {
                verb, key, delta, ..
            } => match self.live(&key) {
                None => Reply::NotFound,
                Some(it) => {
                    let n: u64 = String::from_utf8_lossy(&it.data)
                        .trim()
                        .parse()
                        .unwrap_or(0);
                    let v = match verb {
                        ArithVerb::Incr => n.wrapping_add(delta),
                        ArithVerb::Decr => n.saturating_sub(delta),
                    };
                    self.put(key, v.to_string().into_bytes(), it.expires_ms);
                    Reply::Number(v)
                }
            },
            Command::Delete { key, .. } => match self.live(&key) {
                None => Reply::NotFound,
                Some(_) => {
                    self.items.borrow_mut().remove(&key);
                    Reply::Deleted
                }
            },
            Command::Touch { key, exptime, .. } => match self.live(&key) {
                None => Reply::NotFound,
                Some(mut it) => {
                    it.expires_ms = self.expiry(exptime);
                    self.items.borrow_mut().insert(key, it);
                    Reply::Touched
                }
            },
            other => panic!("TinyKv does not implement {other}"),
        }
    }
}

impl Kv for TinyKv {
    async fn execute(&self, command: Command) -> Result<Reply, KvError> {
        Ok(self.apply(command))
    }

    fn now_ms(&self) -> u64 {
        self.now.get()
    }

    async fn sleep_ms(&self, ms: u64) {
        self.advance_ms(ms);
    }

    fn random_u64(&self) -> u64 {
        self.rng.borrow_mut().next_u64()
    }

    fn mark(&self, label: &'static str) {
        let seq = self.tick();
        self.marks.borrow_mut().push(Mark {
            label: label.to_string(),
            seq,
            time_ms: self.now.get(),
        });
    }
}

/// Runs `ops` one after another as client 0 and records the history.
pub struct Sequential<'a, M: Model> {
    pub model: &'a M,
    pub kv: TinyKv,
    pub history: History<M::Op, M::Ret>,
}

impl<'a, M: Model> Sequential<'a, M> {
    /// Sets the model up on a fresh store whose clock starts at `start_ms`.
    pub fn new(model: &'a M, start_ms: u64) -> Self {
        let kv = TinyKv::new(start_ms);
        block_on_ready(model.setup(&kv)).expect("setup");
        Sequential {
            model,
            kv,
            history: History::new(),
        }
    }

    /// Runs one operation and returns what it returned.
    pub fn run(&mut self, op: M::Op) -> M::Ret {
        self.kv.marks.borrow_mut().clear();
        let call_ms = self.kv.now.get();
        let call = self.kv.tick();
        let ret = block_on_ready(self.model.run(&self.kv, 0, &op)).expect("operation failed");
        let ret_seq = self.kv.tick();
        self.history.ops.push(Operation {
            client: 0,
            op,
            call,
            ret: Some(ret_seq),
            call_ms,
            ret_ms: Some(self.kv.now.get()),
            outcome: Outcome::Ok(ret.clone()),
            marks: self.kv.marks.borrow().clone(),
        });
        ret
    }

    /// The model's verdict on the history so far.
    pub fn verdict(&self) -> kvsim::verdict::Verdict {
        self.model.check(&self.history)
    }
}
