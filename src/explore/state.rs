//! The explicit state of a simulated world, as stateright stores and hashes it: the
//! simulator's [`World`] itself, with each client's [`Recorded`] poll inputs.
//!
//! What is kept: each server's store (and whether it is down), true time, the fault
//! budget spent per kind, the partial history, and per client: where it is (its
//! [`Phase`]), its operation index, its clock offset, when a pause ends, and the inputs of
//! every poll of its current operation (the replies it received, and the time it saw when
//! it read its clock). A client's local variables are *not* kept: its code is
//! deterministic, so they are rebuilt by polling a fresh future of the current operation
//! against the recorded inputs.
//!
//! Canonical where it is cheap: a poll's time is kept only if the client read its clock
//! during it, a pause or server outage that is over is forgotten, and the store drops the
//! time it last saw from its identity. Nothing whose order matters is sorted.

use crate::command::{show_bytes, Reply, Value};
use crate::history::Outcome;
pub(crate) use crate::sim::{Delivered, Halt, Phase, World};
use crate::sim::{Polled, Request, EPOCH_MS};
use std::fmt;
use std::hash::{Hash, Hasher};
use std::sync::{Arc, Mutex};

/// The inputs of one poll of a client's operation.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(crate) struct PollInput {
    /// True time and clock offset at the poll, kept only if the client read its clock.
    pub clock: Option<(u64, i64)>,
    /// What came back for the command before the poll (`None`: the first poll, or a
    /// wake-up).
    pub reply: Option<Delivered>,
}

/// A client's record in an explored world: what its current operation is and the inputs
/// of every poll of it so far (from which its future is rebuilt).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Recorded<Ret> {
    /// Which alternative of the workload the current (or last) operation is.
    pub(crate) alt: u32,
    /// Every poll of the current operation so far.
    pub(crate) polls: Trace<Ret>,
    /// The client's symmetry class: the lowest index of the clients it is
    /// interchangeable with (itself when there is none). Fixed for a search.
    pub(crate) class: u32,
    /// The current operation's position among the run's operation starts, when it seeds
    /// the operation's random numbers ([`crate::sim::SimConfig::rng_by_start`]).
    pub(crate) ordinal: Option<u32>,
}

impl<Ret> Default for Recorded<Ret> {
    fn default() -> Self {
        Recorded {
            alt: 0,
            polls: Trace::default(),
            class: 0,
            ordinal: None,
        }
    }
}

/// Which operation a trace belongs to: client, workload index, alternative and start
/// ordinal (what, besides its poll inputs, a client's code depends on).
pub(crate) type OpKey = (usize, u32, u32, Option<u32>);

/// The poll inputs of a client's current operation: a persistent list, shared by every
/// state whose client polled through the same inputs (a clone counts a reference), each
/// of its nodes with what replaying it taught ([`Memo`]), so that a client's future is
/// rebuilt only the first time a node is stepped from.
///
/// Its identity is its inputs: equality compares them, and its hash (and the explored
/// state's, see `canon.rs`) goes by a digest of them kept in each node: the inputs with
/// every cas unique replaced by its position among the trace's distinct uniques
/// ([`Trace::shape`]), and those uniques in order of first appearance
/// ([`Trace::uniques`]), which together determine the inputs.
pub struct Trace<Ret>(Option<Arc<Node<Ret>>>);

/// One node of a [`Trace`]: the inputs of its parent and one more (an operation's root
/// has none).
pub(crate) struct Node<Ret> {
    parent: Trace<Ret>,
    input: Option<PollInput>,
    len: u32,
    shape: u64,
    uniques: Vec<u64>,
    /// The operation whose client polled through these inputs.
    pub(crate) op: OpKey,
    /// What replaying these inputs and polling once more gave.
    pub(crate) memo: Mutex<Memo<Ret>>,
}

/// What the bridge learned about a node: the request the client waits on after its
/// inputs, and what each next poll gave. Valid because a client's code is deterministic
/// (as the rebuilding of futures already assumes): its requests, marks, result and
/// whether it reads its clock depend only on its operation and inputs.
pub(crate) struct Memo<Ret> {
    /// The request the client waits on (`None`: not learned yet).
    pub(crate) request: Option<Request>,
    /// By what came back for the request: what the next poll gave.
    pub(crate) next: Vec<(Option<Delivered>, Next<Ret>)>,
}

/// What a next poll gave: the same at any time if the client did not read its clock
/// during it, else per true time and clock offset.
pub(crate) enum Next<Ret> {
    Timeless(Step<Ret>),
    Timed(rustc_hash::FxHashMap<(u64, i64), Step<Ret>>),
}

/// One memoized poll: what came of it, its marks, and the trace after it.
pub(crate) struct Step<Ret> {
    pub(crate) polled: Polled<Ret>,
    pub(crate) marks: Vec<&'static str>,
    pub(crate) child: Trace<Ret>,
}

impl<Ret> Memo<Ret> {
    /// The memoized poll after `reply` at true time and clock offset `at`.
    pub(crate) fn find(&self, reply: Option<&Delivered>, at: (u64, i64)) -> Option<&Step<Ret>> {
        let (_, next) = self.next.iter().find(|(r, _)| r.as_ref() == reply)?;
        match next {
            Next::Timeless(step) => Some(step),
            Next::Timed(by_time) => by_time.get(&at),
        }
    }

    /// Records a poll after `reply` (at `at`, which matters when the client read its
    /// clock); keeps a step already recorded (another thread's).
    pub(crate) fn insert(
        &mut self,
        reply: Option<Delivered>,
        clock_read: bool,
        at: (u64, i64),
        step: Step<Ret>,
    ) -> &Step<Ret> {
        let i = match self.next.iter().position(|(r, _)| *r == reply) {
            Some(i) => i,
            None => {
                self.next.push((reply, Next::Timed(Default::default())));
                self.next.len() - 1
            }
        };
        let next = &mut self.next[i].1;
        if !clock_read && matches!(next, Next::Timed(m) if m.is_empty()) {
            *next = Next::Timeless(step);
            let Next::Timeless(step) = next else {
                unreachable!("just set")
            };
            return step;
        }
        match next {
            Next::Timeless(existing) => existing,
            Next::Timed(by_time) => by_time.entry(at).or_insert(step),
        }
    }

    /// Takes every child trace out (to break the cycles between nodes and memos).
    fn take_children(&mut self) -> Vec<Trace<Ret>> {
        let mut out = Vec::new();
        for (_, next) in self.next.drain(..) {
            match next {
                Next::Timeless(step) => out.push(step.child),
                Next::Timed(by_time) => out.extend(by_time.into_values().map(|s| s.child)),
            }
        }
        out
    }
}

impl<Ret> Trace<Ret> {
    /// The root trace of operation `op`: no inputs yet.
    pub(crate) fn root(op: OpKey) -> Trace<Ret> {
        Trace(Some(Arc::new(Node {
            parent: Trace(None),
            input: None,
            len: 0,
            shape: 0,
            uniques: Vec::new(),
            op,
            memo: Mutex::new(Memo {
                request: None,
                next: Vec::new(),
            }),
        })))
    }

    /// This trace with one more input (a new node; the memo of this one is the
    /// caller's business).
    pub(crate) fn push(&self, input: PollInput) -> Trace<Ret> {
        let (len, shape, mut uniques, op) = match &self.0 {
            Some(n) => (n.len, n.shape, n.uniques.clone(), n.op),
            None => (0, 0, Vec::new(), (usize::MAX, 0, 0, None)),
        };
        let mut h = std::hash::DefaultHasher::new();
        h.write_u64(shape);
        input.clock.hash(&mut h);
        match &input.reply {
            Some(Delivered::Reply(Reply::Values(values))) => {
                h.write_u8(0);
                h.write_usize(values.len());
                for Value {
                    key,
                    flags,
                    data,
                    cas,
                } in values
                {
                    key.hash(&mut h);
                    flags.hash(&mut h);
                    data.hash(&mut h);
                    cas.map(|c| match uniques.iter().position(|&u| u == c) {
                        Some(i) => i,
                        None => {
                            uniques.push(c);
                            uniques.len() - 1
                        }
                    })
                    .hash(&mut h);
                }
            }
            other => {
                h.write_u8(1);
                other.hash(&mut h);
            }
        }
        Trace(Some(Arc::new(Node {
            parent: self.clone(),
            input: Some(input),
            len: len + 1,
            shape: h.finish(),
            uniques,
            op,
            memo: Mutex::new(Memo {
                request: None,
                next: Vec::new(),
            }),
        })))
    }

    /// The last node (`None` outside an operation).
    pub(crate) fn node(&self) -> Option<&Node<Ret>> {
        self.0.as_deref()
    }

    /// How many polls.
    pub(crate) fn len(&self) -> usize {
        self.0.as_ref().map_or(0, |n| n.len as usize)
    }

    /// Whether there were no polls.
    pub(crate) fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// A digest of the inputs with each cas unique replaced by its position in
    /// [`Trace::uniques`].
    pub(crate) fn shape(&self) -> u64 {
        self.0.as_ref().map_or(0, |n| n.shape)
    }

    /// The distinct cas uniques of the replies, in order of first appearance.
    pub(crate) fn uniques(&self) -> &[u64] {
        self.0.as_ref().map_or(&[], |n| &n.uniques)
    }

    /// The inputs, first to last.
    pub(crate) fn inputs(&self) -> Vec<&PollInput> {
        let mut out = Vec::with_capacity(self.len());
        let mut at = self.node();
        while let Some(n) = at {
            if let Some(input) = &n.input {
                out.push(input);
            }
            at = n.parent.node();
        }
        out.reverse();
        out
    }

    /// Empties the memos of this trace's node and of every node reached from them (the
    /// memos hold their children, which hold their parents: without this, a search's
    /// traces would never be freed).
    pub(crate) fn release(&self) {
        let mut stack: Vec<Trace<Ret>> = vec![self.clone()];
        while let Some(t) = stack.pop() {
            if let Some(n) = t.node() {
                let mut memo = n.memo.lock().unwrap_or_else(|e| e.into_inner());
                stack.extend(memo.take_children());
            }
        }
    }
}

impl<Ret> Clone for Trace<Ret> {
    fn clone(&self) -> Self {
        Trace(self.0.clone())
    }
}

impl<Ret> Default for Trace<Ret> {
    fn default() -> Self {
        Trace(None)
    }
}

impl<Ret> PartialEq for Trace<Ret> {
    fn eq(&self, other: &Self) -> bool {
        match (&self.0, &other.0) {
            (Some(a), Some(b)) if Arc::ptr_eq(a, b) => true,
            _ => {
                self.len() == other.len()
                    && self.shape() == other.shape()
                    && self.uniques() == other.uniques()
                    && self.inputs() == other.inputs()
            }
        }
    }
}

impl<Ret> Eq for Trace<Ret> {}

impl<Ret> Hash for Trace<Ret> {
    fn hash<H: Hasher>(&self, h: &mut H) {
        h.write_usize(self.len());
        h.write_u64(self.shape());
        self.uniques().hash(h);
    }
}

impl<Ret> fmt::Debug for Trace<Ret> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.inputs()).finish()
    }
}

/// The state of a world under exploration: a stateright `Model::State`. The world's
/// fields are the state's (servers, time, clients, history, faults used, last fault,
/// halt); each client's `rec` holds its [`Recorded`] poll inputs. Its `Hash` (its
/// identity for stateright) renames cas uniques: see `canon.rs`.
pub type State<Op, Ret> = World<Op, Ret, Recorded<Ret>>;

/// Readable for people (the Explorer shows states with `{:#?}`): time, the stores'
/// live items, each client, and the history so far.
impl<Op: fmt::Debug, Ret: fmt::Debug> fmt::Debug for World<Op, Ret, Recorded<Ret>> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "time {} ms", self.now - EPOCH_MS)?;
        for (s, server) in self.servers.iter().enumerate() {
            write!(f, "server {s}:")?;
            if let Some(t) = server.down_until {
                write!(f, " down until {} ms", t - EPOCH_MS)?;
            }
            let keys = server.store.live_keys(self.now);
            if keys.is_empty() {
                write!(f, " (empty)")?;
            }
            for key in keys {
                if let Some(item) = server.store.peek(self.now, &key) {
                    write!(f, " {}={}", show_bytes(&key), show_bytes(&item.data))?;
                }
            }
            writeln!(f)?;
        }
        for (c, cl) in self.clients.iter().enumerate() {
            write!(f, "C{c}: op {} ", cl.op_index)?;
            match cl.phase {
                Phase::Idle => write!(f, "not started")?,
                Phase::Calling => write!(f, "waiting for a reply")?,
                Phase::Sleeping(t) => write!(f, "asleep until {} ms", t - EPOCH_MS)?,
                Phase::TimingOut(t) => write!(f, "timing out until {} ms", t - EPOCH_MS)?,
                Phase::Done => write!(f, "(all done)")?,
                Phase::Crashed => write!(f, "(crashed)")?,
            }
            if !cl.rec.polls.is_empty() {
                write!(f, ", {} replies:", cl.rec.polls.len() - 1)?;
                for p in cl.rec.polls.inputs() {
                    match &p.reply {
                        Some(Delivered::Reply(r)) => write!(f, " {}", first_line(&r.to_string()))?,
                        Some(Delivered::Timeout) => write!(f, " timeout")?,
                        Some(Delivered::Refused(_)) => write!(f, " refused")?,
                        None => {}
                    }
                }
            }
            if cl.paused_until > 0 {
                write!(f, ", paused until {} ms", cl.paused_until - EPOCH_MS)?;
            }
            writeln!(f)?;
        }
        writeln!(f, "history:")?;
        for op in &self.history.ops {
            let outcome = match (&op.outcome, op.ret) {
                (_, None) => "pending".to_string(),
                (Outcome::Ok(r), _) => format!("{r:?}"),
                (Outcome::Failed, _) => "failed".to_string(),
                (Outcome::Unknown, _) => "unknown".to_string(),
            };
            writeln!(f, "  C{} {:?} -> {outcome}", op.client, op.op)?;
        }
        if let Some(h) = &self.halt {
            writeln!(f, "halted: {h:?}")?;
        }
        Ok(())
    }
}

fn first_line(s: &str) -> String {
    s.lines().next().unwrap_or_default().to_string()
}
