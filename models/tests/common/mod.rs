//! A single-client `Kv` over kvsim's `Store` for the models' sequential tests: a clock
//! the test sets, evictions and restarts on demand, and marks recorded.
#![allow(dead_code)]

use kvsim::command::{Command, Reply};
use kvsim::store::{Store, StoreConfig};
use kvsim::Model;
use kvsim::SimRng;
use kvsim::{block_on_ready, Kv, KvError};
use kvsim::{History, Mark, Operation, Outcome};
use std::cell::{Cell, RefCell};

/// The store (kvsim's memcached core) and one client in one.
pub struct TinyKv {
    store: RefCell<Store>,
    now: Cell<u64>,
    rng: RefCell<SimRng>,
    marks: RefCell<Vec<Mark>>,
    seq: Cell<u64>,
}

impl TinyKv {
    /// An empty store whose clock starts at `start_ms`.
    pub fn new(start_ms: u64) -> TinyKv {
        TinyKv {
            store: RefCell::new(Store::new(StoreConfig::default(), start_ms)),
            now: Cell::new(start_ms),
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
        self.store.borrow_mut().evict_at(self.now.get(), key);
    }

    /// Loses every volatile key, as a restart would.
    pub fn restart(&self) {
        self.store.borrow_mut().restart(self.now.get());
    }

    /// The keys currently stored (live ones).
    pub fn keys(&self) -> Vec<String> {
        self.store
            .borrow()
            .live_keys(self.now.get())
            .into_iter()
            .map(|k| String::from_utf8_lossy(&k).into_owned())
            .collect()
    }

    fn tick(&self) -> u64 {
        let s = self.seq.get() + 1;
        self.seq.set(s);
        s
    }
}

impl Kv for TinyKv {
    async fn execute(&self, command: Command) -> Result<Reply, KvError> {
        self.tick();
        Ok(self.store.borrow_mut().apply(self.now.get(), &command))
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
            label: label.into(),
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
    pub fn verdict(&self) -> kvsim::Verdict {
        self.model.check(&self.history)
    }
}
