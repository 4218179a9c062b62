//! A tiny single-threaded world for the message queue's tests: a BTreeMap store with
//! memcached's semantics for the commands the queue uses, virtual time, clients whose every
//! KV call is a scheduling point, and a random scheduler with crash, restart, evict and
//! lose faults. (A module of the `message_queue_*` tests.)
#![allow(dead_code)]

use kvsim::command::{ArithVerb, Command, Reply, StoreVerb, Value};
use kvsim::history::{History, Operation, Outcome};
use kvsim::kv::{Kv, KvError};
use kvsim::model::Model;
use kvsim::rng::SimRng;
use std::cell::{Cell, RefCell};
use std::collections::BTreeMap;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll, Waker};

#[derive(Clone, Debug)]
struct Item {
    data: Vec<u8>,
    cas: u64,
    expires_ms: Option<u64>,
}

/// What the next delivery does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fate {
    Deliver,
    LoseRequest,
    LoseReply,
}

/// Where a client stands.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum State {
    Start,
    Command(String),
    Sleep(u64),
    Done,
}

/// The store, the clock and the clients' states.
pub struct World {
    items: RefCell<BTreeMap<Vec<u8>, Item>>,
    next_cas: Cell<u64>,
    pub now: Cell<u64>,
    seq: Cell<u64>,
    fate: Cell<Fate>,
    states: RefCell<Vec<State>>,
    /// Every command applied, with its reply, as text (for failing tests).
    pub trace: RefCell<Vec<String>>,
}

impl World {
    pub fn new(clients: usize) -> World {
        World {
            items: RefCell::new(BTreeMap::new()),
            next_cas: Cell::new(1),
            now: Cell::new(1_000_000),
            seq: Cell::new(0),
            fate: Cell::new(Fate::Deliver),
            states: RefCell::new(vec![State::Start; clients]),
            trace: RefCell::new(Vec::new()),
        }
    }

    pub fn client(&self, id: usize) -> Client<'_> {
        Client { world: self, id }
    }

    fn tick(&self) -> u64 {
        self.seq.set(self.seq.get() + 1);
        self.seq.get()
    }

    pub fn state(&self, client: usize) -> State {
        self.states.borrow()[client].clone()
    }

    fn set_state(&self, client: usize, s: State) {
        self.states.borrow_mut()[client] = s;
    }

    /// Drops every item (a volatile restart).
    pub fn restart(&self) {
        self.items.borrow_mut().clear();
        self.trace.borrow_mut().push("-- restart --".into());
    }

    /// Evicts one key.
    pub fn evict(&self, key: &[u8]) {
        self.items.borrow_mut().remove(key);
        self.trace
            .borrow_mut()
            .push(format!("-- evict {} --", String::from_utf8_lossy(key)));
    }

    /// The keys in the store.
    pub fn keys(&self) -> Vec<Vec<u8>> {
        self.items.borrow().keys().cloned().collect()
    }

    /// A key's value.
    pub fn value(&self, key: &str) -> Option<Vec<u8>> {
        self.live(key.as_bytes());
        self.items.borrow().get(key.as_bytes()).map(|i| i.data.clone())
    }

    fn live(&self, key: &[u8]) {
        let now = self.now.get();
        let mut items = self.items.borrow_mut();
        if items
            .get(key)
            .is_some_and(|i| i.expires_ms.is_some_and(|e| e <= now))
        {
            items.remove(key);
        }
    }

    fn expiry(&self, exptime: i64) -> Option<u64> {
        match exptime {
            0 => None,
            e if e < 0 => Some(0),
            e => Some(self.now.get() + e as u64 * 1000),
        }
    }

    fn stamp(&self) -> u64 {
        let c = self.next_cas.get();
        self.next_cas.set(c + 1);
        c
    }

    /// Applies one command (the subset of memcached the queue and its tests use).
    pub fn apply(&self, command: &Command) -> Reply {
        for k in command.keys() {
            self.live(k);
        }
        let mut items = self.items.borrow_mut();
        match command {
            Command::Get { with_cas, keys } => Reply::Values(
                keys.iter()
                    .filter_map(|k| {
                        items.get(k).map(|i| Value {
                            key: k.clone(),
                            flags: 0,
                            data: i.data.clone(),
                            cas: with_cas.then_some(i.cas),
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
                let present = items.contains_key(key);
                match verb {
                    StoreVerb::Add if present => return Reply::NotStored,
                    StoreVerb::Replace | StoreVerb::Append | StoreVerb::Prepend if !present => {
                        return Reply::NotStored
                    }
                    _ => {}
                }
                let cas = self.stamp();
                match verb {
                    StoreVerb::Append => {
                        let i = items.get_mut(key).unwrap();
                        i.data.extend_from_slice(data);
                        i.cas = cas;
                    }
                    StoreVerb::Prepend => {
                        let i = items.get_mut(key).unwrap();
                        let mut d = data.clone();
                        d.extend_from_slice(&i.data);
                        i.data = d;
                        i.cas = cas;
                    }
                    _ => {
                        items.insert(
                            key.clone(),
                            Item {
                                data: data.clone(),
                                cas,
                                expires_ms: self.expiry(*exptime),
                            },
                        );
                    }
                }
                Reply::Stored
            }
            Command::Cas {
                key,
                exptime,
                data,
                unique,
                ..
            } => match items.get(key) {
                None => Reply::NotFound,
                Some(i) if i.cas != *unique => Reply::Exists,
                Some(_) => {
                    let cas = self.stamp();
                    items.insert(
                        key.clone(),
                        Item {
                            data: data.clone(),
                            cas,
                            expires_ms: self.expiry(*exptime),
                        },
                    );
                    Reply::Stored
                }
            },
            Command::Delete { key, .. } => match items.remove(key) {
                Some(_) => Reply::Deleted,
                None => Reply::NotFound,
            },
            Command::Arith {
                verb, key, delta, ..
            } => match items.get_mut(key) {
                None => Reply::NotFound,
                Some(i) => {
                    let n: u64 = String::from_utf8_lossy(&i.data).trim().parse().unwrap_or(0);
                    let n = match verb {
                        ArithVerb::Incr => n.wrapping_add(*delta),
                        ArithVerb::Decr => n.saturating_sub(*delta),
                    };
                    i.data = n.to_string().into_bytes();
                    Reply::Number(n)
                }
            },
            other => panic!("the test store does not implement {other}"),
        }
    }
}

/// One client: every KV call parks until the scheduler delivers it.
pub struct Client<'w> {
    world: &'w World,
    id: usize,
}

struct Park(bool);

impl Future for Park {
    type Output = ();
    fn poll(mut self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<()> {
        if self.0 {
            Poll::Ready(())
        } else {
            self.0 = true;
            Poll::Pending
        }
    }
}

impl Kv for Client<'_> {
    async fn execute(&self, command: Command) -> Result<Reply, KvError> {
        self.world.set_state(self.id, State::Command(command.to_string()));
        Park(false).await;
        let fate = self.world.fate.replace(Fate::Deliver);
        let timeout = || KvError::Timeout {
            command: command.to_string(),
        };
        if fate == Fate::LoseRequest {
            self.world
                .trace
                .borrow_mut()
                .push(format!("C{} {command} -> (request lost)", self.id));
            return Err(timeout());
        }
        let reply = self.world.apply(&command);
        let shown: String = format!("{reply}").chars().take(80).collect();
        self.world
            .trace
            .borrow_mut()
            .push(format!("C{} {command} -> {shown}", self.id));
        if fate == Fate::LoseReply {
            return Err(timeout());
        }
        Ok(reply)
    }

    fn now_ms(&self) -> u64 {
        self.world.now.get()
    }

    async fn sleep_ms(&self, ms: u64) {
        let until = self.world.now.get() + ms.max(1);
        while self.world.now.get() < until {
            self.world.set_state(self.id, State::Sleep(until));
            Park(false).await;
        }
    }

    fn random_u64(&self) -> u64 {
        self.world.tick()
    }
}

/// A client's future.
pub type Task<'a> = Pin<Box<dyn Future<Output = ()> + 'a>>;

/// Polls a task once (delivering its parked command, or waking it from a sleep).
pub fn step(world: &World, client: usize, task: &mut Task<'_>) -> bool {
    let mut cx = Context::from_waker(Waker::noop());
    match task.as_mut().poll(&mut cx) {
        Poll::Ready(()) => {
            world.set_state(client, State::Done);
            true
        }
        Poll::Pending => false,
    }
}

/// Which faults a random run may inject.
#[derive(Clone, Copy, Debug, Default)]
pub struct Faults {
    pub crash: bool,
    pub restart: bool,
    pub persistent: bool,
    pub evict: bool,
    pub lose: bool,
    pub budget: u32,
}

/// Runs `model` with `clients` × `ops` under a random schedule; returns the history.
pub fn run<M: Model>(
    model: &M,
    clients: usize,
    ops: usize,
    faults: Faults,
    seed: u64,
) -> (History<M::Op, M::Ret>, World) {
    let world = World::new(clients);
    let log: RefCell<Vec<Operation<M::Op, M::Ret>>> = RefCell::new(Vec::new());
    {
        let handles: Vec<Client<'_>> = (0..clients).map(|c| world.client(c)).collect();
        // setup runs before any client, without faults
        kvsim::kv::block_on_ready(model.setup(&handles[0])).expect("setup");
        let mut tasks: Vec<Option<Task<'_>>> = handles
            .iter()
            .enumerate()
            .map(|(c, kv)| {
                let world = &world;
                let log = &log;
                let task: Task<'_> = Box::pin(async move {
                    let mut rng = SimRng::derive(seed, c as u64);
                    for index in 0..ops {
                        let op = model.op(c, index, &mut rng);
                        let i = log.borrow().len();
                        log.borrow_mut().push(Operation {
                            client: c,
                            op: op.clone(),
                            call: world.tick(),
                            ret: None,
                            call_ms: world.now.get(),
                            ret_ms: None,
                            outcome: Outcome::Unknown,
                            marks: Vec::new(),
                        });
                        let result = model.run(kv, c, &op).await;
                        let mut l = log.borrow_mut();
                        l[i].ret = Some(world.tick());
                        l[i].ret_ms = Some(world.now.get());
                        if let Ok(r) = result {
                            l[i].outcome = Outcome::Ok(r);
                        }
                    }
                });
                Some(task)
            })
            .collect();
        let mut rng = SimRng::new(seed);
        let mut budget = faults.budget;
        loop {
            let now = world.now.get();
            let runnable: Vec<usize> = (0..clients)
                .filter(|&c| {
                    tasks[c].is_some()
                        && match world.state(c) {
                            State::Start | State::Command(_) => true,
                            State::Sleep(t) => t <= now,
                            State::Done => false,
                        }
                })
                .collect();
            if runnable.is_empty() {
                let wake = (0..clients)
                    .filter(|&c| tasks[c].is_some())
                    .filter_map(|c| match world.state(c) {
                        State::Sleep(t) => Some(t),
                        _ => None,
                    })
                    .min();
                match wake {
                    Some(t) => {
                        world.now.set(t);
                        continue;
                    }
                    None => break,
                }
            }
            let c = runnable[rng.index(runnable.len())];
            if budget > 0 && rng.chance(0.03) {
                let mut kinds = Vec::new();
                if faults.crash {
                    kinds.push(0);
                }
                if faults.restart {
                    kinds.push(1);
                }
                if faults.evict {
                    kinds.push(2);
                }
                if faults.lose {
                    kinds.push(3);
                }
                if !kinds.is_empty() {
                    budget -= 1;
                    match kinds[rng.index(kinds.len())] {
                        0 => {
                            world.trace.borrow_mut().push(format!("-- crash C{c} --"));
                            tasks[c] = None;
                            continue;
                        }
                        1 => {
                            if faults.persistent {
                                world.trace.borrow_mut().push("-- restart (persistent) --".into());
                            } else {
                                world.restart();
                            }
                        }
                        2 => {
                            let keys = world.keys();
                            if !keys.is_empty() {
                                world.evict(&keys[rng.index(keys.len())]);
                            }
                        }
                        _ => world.fate.set(if rng.chance(0.5) {
                            Fate::LoseRequest
                        } else {
                            Fate::LoseReply
                        }),
                    }
                }
            }
            let done = step(&world, c, tasks[c].as_mut().unwrap());
            if done {
                tasks[c] = None;
            }
            world.now.set(world.now.get() + 1);
        }
    }
    let history = History {
        ops: log.into_inner(),
    };
    (history, world)
}
