//! Scripted interleavings for the message queue's tests: kvsim's [`Store`] in virtual time,
//! clients whose every KV call parks until the script delivers it, and a [`Script`] that
//! runs a model's operations and steps clients by the command they are about to send.
//! (The simulator explores schedules at random; these tests pin one schedule each, so a
//! finding stays pinned whatever the simulator's strategies become.)
#![allow(dead_code)]

use kvsim::command::{Command, Reply};
use kvsim::sim::EPOCH_MS;
use kvsim::store::{Store, StoreConfig};
use kvsim::Model;
use kvsim::{History, Operation, Outcome};
use kvsim::{Kv, KvError};
use std::cell::{Cell, RefCell};
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll, Waker};

/// Where a client stands.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum State {
    /// Not polled yet.
    Start,
    /// Parked with this command (rendered).
    Command(String),
    /// Asleep until this time.
    Sleep(u64),
    /// All its operations returned.
    Done,
}

/// The store, the clock and the clients' states.
pub struct World {
    store: RefCell<Store>,
    now: Cell<u64>,
    seq: Cell<u64>,
    states: RefCell<Vec<State>>,
    /// Every command applied, with its reply, as text.
    pub trace: RefCell<Vec<String>>,
}

impl World {
    /// A world of `clients` clients over a volatile store.
    pub fn new(clients: usize) -> World {
        World {
            store: RefCell::new(Store::new(StoreConfig::default(), EPOCH_MS)),
            now: Cell::new(EPOCH_MS),
            seq: Cell::new(0),
            states: RefCell::new(vec![State::Start; clients]),
            trace: RefCell::new(Vec::new()),
        }
    }

    /// Client `id`'s handle.
    pub fn client(&self, id: usize) -> Client<'_> {
        Client { world: self, id }
    }

    /// Advances virtual time.
    pub fn advance(&self, ms: u64) {
        self.now.set(self.now.get() + ms);
    }

    fn tick(&self) -> u64 {
        self.seq.set(self.seq.get() + 1);
        self.seq.get()
    }

    /// Client `c`'s state.
    pub fn state(&self, c: usize) -> State {
        self.states.borrow()[c].clone()
    }

    fn set_state(&self, c: usize, s: State) {
        self.states.borrow_mut()[c] = s;
    }
}

/// One client of a [`World`]: every KV call parks until the script delivers it.
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
        self.world
            .set_state(self.id, State::Command(command.to_string()));
        Park(false).await;
        let now = self.world.now.get();
        let reply = self.world.store.borrow_mut().apply(now, &command);
        let shown: String = format!("{reply}").chars().take(60).collect();
        self.world
            .trace
            .borrow_mut()
            .push(format!("C{} {command} -> {shown}", self.id));
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

type Task<'a> = Pin<Box<dyn Future<Output = ()> + 'a>>;

/// The operations' records, shared by the tasks.
pub type Log<M> = RefCell<Vec<Operation<<M as Model>::Op, <M as Model>::Ret>>>;

/// A model's clients, each running its list of operations, stepped by hand.
pub struct Script<'a, M: Model> {
    world: &'a World,
    tasks: Vec<Option<Task<'a>>>,
    log: &'a Log<M>,
}

impl<'a, M: Model> Script<'a, M> {
    /// Client `c` runs `ops[c]` in order.
    pub fn new(
        world: &'a World,
        handles: &'a [Client<'a>],
        model: &'a M,
        log: &'a Log<M>,
        ops: Vec<Vec<M::Op>>,
    ) -> Script<'a, M> {
        let tasks = ops
            .into_iter()
            .enumerate()
            .map(|(c, list)| {
                let kv = &handles[c];
                let task: Task<'a> = Box::pin(async move {
                    for op in list {
                        let i = log.borrow().len();
                        log.borrow_mut().push(Operation {
                            client: c,
                            op: op.clone(),
                            call: world.tick(),
                            ret: None,
                            call_ms: world.now.get() - EPOCH_MS,
                            ret_ms: None,
                            outcome: Outcome::Unknown,
                            marks: Vec::new(),
                        });
                        let result = model.run(kv, c, &op).await;
                        let mut l = log.borrow_mut();
                        l[i].ret = Some(world.tick());
                        l[i].ret_ms = Some(world.now.get() - EPOCH_MS);
                        if let Ok(r) = result {
                            l[i].outcome = Outcome::Ok(r);
                        }
                    }
                });
                Some(task)
            })
            .collect();
        Script { world, tasks, log }
    }

    /// Delivers client `c`'s parked command (or starts it); `true` once it is done.
    pub fn step(&mut self, c: usize) -> bool {
        let Some(task) = self.tasks[c].as_mut() else {
            return true;
        };
        let mut cx = Context::from_waker(Waker::noop());
        if let Poll::Ready(()) = task.as_mut().poll(&mut cx) {
            self.world.set_state(c, State::Done);
            self.tasks[c] = None;
            return true;
        }
        false
    }

    /// Steps client `c` until the command it is about to send contains `pattern` (or, with
    /// a trailing `$`, is exactly `pattern`) for the `nth` time (1 = the first), without
    /// sending it.
    pub fn until_nth(&mut self, c: usize, pattern: &str, nth: usize) {
        let mut seen = 0;
        for _ in 0..10_000 {
            if let State::Command(cmd) = self.world.state(c) {
                let hit = match pattern.strip_suffix('$') {
                    Some(exact) => cmd == exact,
                    None => cmd.contains(pattern),
                };
                if hit {
                    seen += 1;
                    if seen == nth {
                        return;
                    }
                }
            }
            if let State::Sleep(t) = self.world.state(c) {
                self.world.now.set(self.world.now.get().max(t));
            }
            assert!(!self.step(c), "C{c} finished before sending {pattern:?}");
        }
        panic!("C{c} never sent {pattern:?}");
    }

    /// Steps client `c` until it is about to send a command containing `pattern`.
    pub fn until(&mut self, c: usize, pattern: &str) {
        self.until_nth(c, pattern, 1)
    }

    /// Crashes client `c`: it never runs again (its operation stays pending).
    pub fn crash(&mut self, c: usize) {
        self.tasks[c] = None;
    }

    /// Runs client `c` alone to the end of its operations (sleeps advance time).
    pub fn run(&mut self, c: usize) {
        for _ in 0..100_000 {
            if let State::Sleep(t) = self.world.state(c) {
                self.world.now.set(self.world.now.get().max(t));
            }
            if self.step(c) {
                return;
            }
            self.world.advance(1);
        }
        panic!("C{c} did not finish");
    }

    /// Runs every client, one after another, to the end; returns the history.
    pub fn finish(mut self) -> History<M::Op, M::Ret> {
        for c in 0..self.tasks.len() {
            self.run(c);
        }
        History {
            ops: self.log.borrow().clone(),
        }
    }
}
