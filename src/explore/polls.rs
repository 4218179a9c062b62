//! A client's poll inputs in an explored world ([`Polls`]): a persistent list shared by
//! every state whose client polled through the same inputs, each node memoizing what
//! replaying it gave, so that a client's future is rebuilt only the first time a node is
//! stepped from.

use crate::command::{Command, MetaReply, MetaRet, Reply, Value};
use crate::sim::{Delivered, Polled, Request};
use crate::store::CasNames;
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

/// Which operation a client's polls belong to: client, workload index, alternative and start
/// ordinal (what, besides its poll inputs, a client's code depends on).
pub(crate) type OpKey = (usize, u32, u32, Option<u32>);

/// The poll inputs of a client's current operation: a persistent list, shared by every
/// state whose client polled through the same inputs (a clone counts a reference), each
/// of its nodes with what replaying it taught ([`Memo`]), so that a client's future is
/// rebuilt only the first time a node is stepped from.
///
/// Its identity is its inputs: equality compares them, and its hash (and the explored
/// state's, see `canon.rs`) goes by a digest of them kept in each node: the inputs with
/// every cas unique replaced by its position among the list's distinct uniques
/// ([`Polls::shape`]), and those uniques in order of first appearance
/// ([`Polls::uniques`]), which together determine the inputs.
pub struct Polls<Ret>(Option<Arc<Node<Ret>>>);

/// One node of a [`Polls`]: the inputs of its parent and one more (an operation's root
/// has none).
pub(crate) struct Node<Ret> {
    parent: Polls<Ret>,
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
    pub(crate) request: Option<Waits>,
    /// By what came back for the request: what the next poll gave.
    pub(crate) next: Vec<(Option<Delivered>, Next<Ret>)>,
}

/// The request a client waits on, as a [`Memo`] keeps it: the command shared by every
/// state at the node, which the world is handed without a copy (the profile,
/// spinlock/fixed 4 × 1: a command copied and dropped at every step was ~4 % of the
/// search).
pub(crate) enum Waits {
    /// A KV command.
    Command(Arc<Command>),
    /// A wait.
    Sleep,
}

impl Waits {
    /// The memo's form of `request`.
    pub(crate) fn of(request: Request) -> Waits {
        match request {
            Request::Command(cmd) => Waits::Command(Arc::new(cmd)),
            Request::Sleep(..) => Waits::Sleep,
        }
    }

    /// The command, shared; `None` for a wait.
    pub(crate) fn command(&self) -> Option<Arc<Command>> {
        match self {
            Waits::Command(cmd) => Some(cmd.clone()),
            Waits::Sleep => None,
        }
    }
}

/// What a next poll gave: the same at any time if the client did not read its clock
/// during it, else per true time and clock offset.
pub(crate) enum Next<Ret> {
    Timeless(Step<Ret>),
    Timed(rustc_hash::FxHashMap<(u64, i64), Step<Ret>>),
}

/// One memoized poll: what came of it, its marks, and the polls after it.
pub(crate) struct Step<Ret> {
    pub(crate) polled: Polled<Ret>,
    pub(crate) marks: Vec<&'static str>,
    pub(crate) child: Polls<Ret>,
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

    /// Takes every child list out (to break the cycles between nodes and memos).
    fn take_children(&mut self) -> Vec<Polls<Ret>> {
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

impl<Ret> Polls<Ret> {
    /// The root list of operation `op`: no inputs yet.
    pub(crate) fn root(op: OpKey) -> Polls<Ret> {
        Polls(Some(Arc::new(Node {
            parent: Polls(None),
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

    /// These polls with one more input (a new node; the memo of this one is the
    /// caller's business).
    pub(crate) fn push(&self, input: PollInput) -> Polls<Ret> {
        let (len, shape, uniques, op) = match &self.0 {
            Some(n) => (n.len, n.shape, n.uniques.clone(), n.op),
            None => (0, 0, Vec::new(), (usize::MAX, 0, 0, None)),
        };
        let mut names = CasNames::from_uniques(uniques);
        let mut h = crate::store::fixed_hasher();
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
                    cas.map(|c| names.name(c)).hash(&mut h);
                }
            }
            // Meta replies with their uniques named, as the values' above.
            Some(Delivered::Reply(Reply::Meta(MetaReply {
                status,
                flags,
                value,
                quiet,
            }))) => {
                h.write_u8(2);
                status.hash(&mut h);
                value.hash(&mut h);
                quiet.hash(&mut h);
                h.write_usize(flags.len());
                for flag in flags {
                    match flag {
                        MetaRet::Cas(c) => {
                            h.write_u8(0);
                            h.write_usize(names.name(*c));
                        }
                        other => {
                            h.write_u8(1);
                            other.hash(&mut h);
                        }
                    }
                }
            }
            other => {
                h.write_u8(1);
                other.hash(&mut h);
            }
        }
        Polls(Some(Arc::new(Node {
            parent: self.clone(),
            input: Some(input),
            len: len + 1,
            shape: h.finish(),
            uniques: names.into_uniques(),
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
    /// [`Polls::uniques`].
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

    /// Empties the memos of this list's last node and of every node reached from them (the
    /// memos hold their children, which hold their parents: without this, a search's
    /// lists would never be freed).
    pub(crate) fn release(&self) {
        let mut stack: Vec<Polls<Ret>> = vec![self.clone()];
        while let Some(t) = stack.pop() {
            if let Some(n) = t.node() {
                let mut memo = n.memo.lock().unwrap_or_else(|e| e.into_inner());
                stack.extend(memo.take_children());
            }
        }
    }
}

/// A [`Polls`] of any `Ret`, held: its last node stays alive (and its address its own)
/// while this is.
pub(crate) struct PollsRef(Arc<dyn std::any::Any>);

impl PollsRef {
    /// Holds `polls`' last node (`polls` must have one).
    pub(crate) fn of<Ret: 'static>(polls: Polls<Ret>) -> PollsRef {
        PollsRef(polls.0.expect("polls with a node"))
    }
}

impl<Ret> Polls<Ret> {
    /// Whether `held` holds this list's last node.
    pub(crate) fn same_as(&self, held: &PollsRef) -> bool {
        self.0
            .as_ref()
            .is_some_and(|n| std::ptr::addr_eq(Arc::as_ptr(n), Arc::as_ptr(&held.0)))
    }
}

impl<Ret> Clone for Polls<Ret> {
    fn clone(&self) -> Self {
        Polls(self.0.clone())
    }
}

impl<Ret> Default for Polls<Ret> {
    fn default() -> Self {
        Polls(None)
    }
}

impl<Ret> PartialEq for Polls<Ret> {
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

impl<Ret> Eq for Polls<Ret> {}

impl<Ret> Hash for Polls<Ret> {
    fn hash<H: Hasher>(&self, h: &mut H) {
        h.write_usize(self.len());
        h.write_u64(self.shape());
        self.uniques().hash(h);
    }
}

impl<Ret> fmt::Debug for Polls<Ret> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.inputs()).finish()
    }
}
