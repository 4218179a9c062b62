//! A FIFO queue, initially empty: `enqueue v` adds at the tail, `dequeue` removes and
//! returns the head (`None`, nil in files, when empty).
//!
//! Knossos's `fifo-queue` has no empty answer (a dequeue that completes `ok` from an
//! empty queue is inconsistent there; Jepsen's queue clients answer it `fail`) and
//! enqueues nil like any value. Here an `ok` dequeue of nil says the queue was empty, so
//! a history file's `enqueue nil` would make that answer ambiguous: it is refused (an
//! error naming its line), not guessed.

use crate::formats::{expected, nil_word, outcome, FromRaw, RawOp, Value};
use crate::history::Outcome;
use crate::spec::SequentialSpec;
use crate::specs::register::{show, value_or_nil};
use std::collections::VecDeque;
use std::fmt::Debug;
use std::hash::Hash;
use std::marker::PhantomData;

/// A queue operation.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum QueueOp<V> {
    /// Add at the tail.
    Enqueue(V),
    /// Remove the head.
    Dequeue,
}

/// What a queue operation returns.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum QueueRet<V> {
    /// An enqueue's acknowledgement.
    Enqueued,
    /// A dequeue's value (`None`: the queue was empty).
    Dequeued(Option<V>),
}

/// The queue spec.
#[derive(Clone, Copy, Debug, Default)]
pub struct QueueSpec<V>(PhantomData<V>);

impl<V> QueueSpec<V> {
    /// A queue spec.
    pub fn new() -> Self {
        QueueSpec(PhantomData)
    }
}

impl<V: Clone + Eq + Hash + Debug + 'static> SequentialSpec for QueueSpec<V> {
    type State = VecDeque<V>;
    type Op = QueueOp<V>;
    type Ret = QueueRet<V>;

    fn name(&self) -> &'static str {
        "queue"
    }

    fn init(&self) -> VecDeque<V> {
        VecDeque::new()
    }

    fn step(&self, state: &VecDeque<V>, op: &QueueOp<V>) -> (VecDeque<V>, QueueRet<V>) {
        let mut next = state.clone();
        match op {
            QueueOp::Enqueue(v) => {
                next.push_back(v.clone());
                (next, QueueRet::Enqueued)
            }
            QueueOp::Dequeue => {
                let head = next.pop_front();
                (next, QueueRet::Dequeued(head))
            }
        }
    }

    /// A value dequeued (complete) more often than enqueued (complete or pending).
    fn unproducible(&self, ops: &[(&QueueOp<V>, Option<&QueueRet<V>>)]) -> Option<(usize, String)> {
        let mut enqueued: std::collections::HashMap<&V, usize> = Default::default();
        for (op, _) in ops {
            if let QueueOp::Enqueue(v) = op {
                *enqueued.entry(v).or_default() += 1;
            }
        }
        let mut dequeued: std::collections::HashMap<&V, usize> = Default::default();
        ops.iter().enumerate().find_map(|(i, (_, ret))| {
            let Some(QueueRet::Dequeued(Some(v))) = ret else {
                return None;
            };
            let times = dequeued.entry(v).or_default();
            *times += 1;
            let can = enqueued.get(v).copied().unwrap_or(0);
            (*times > can).then(|| {
                let why = match can {
                    0 => format!("dequeue returned {v:?}, a value no enqueue of the history enqueues (none complete, none pending)"),
                    1 => format!("dequeue returned {v:?} a {} time, but the history enqueues it once (complete or pending)", ordinal(*times)),
                    n => format!("dequeue returned {v:?} a {} time, but the history enqueues it {n} times (complete or pending)", ordinal(*times)),
                };
                (i, why)
            })
        })
    }

    fn read_only(&self, op: &QueueOp<V>, ret: &QueueRet<V>) -> bool {
        matches!((op, ret), (QueueOp::Dequeue, QueueRet::Dequeued(None)))
    }

    fn explain(
        &self,
        state: &VecDeque<V>,
        op: &QueueOp<V>,
        _: &QueueRet<V>,
        found: &QueueRet<V>,
    ) -> String {
        match (op, found) {
            (QueueOp::Dequeue, QueueRet::Dequeued(Some(v))) if state.is_empty() => {
                format!("dequeue returned {v:?}, but the queue is empty")
            }
            (QueueOp::Dequeue, QueueRet::Dequeued(v)) => format!(
                "dequeue returned {}, but the queue's head is {}",
                show(v),
                show(&state.front().cloned())
            ),
            _ => format!("{op:?} cannot return {found:?}"),
        }
    }
}

impl FromRaw for QueueSpec<Value> {
    fn op_from_raw(
        &self,
        raw: &RawOp,
    ) -> Result<(QueueOp<Value>, Outcome<QueueRet<Value>>), String> {
        match raw.f.as_str() {
            "enqueue" if raw.args == Value::Nil => Err(expected(
                &format!(
                    "an enqueued value other than {nil} (a dequeue returning {nil} says the queue was empty)",
                    nil = nil_word()
                ),
                &raw.args,
            )),
            "enqueue" => Ok((
                QueueOp::Enqueue(raw.args.clone()),
                outcome(raw, |_| Ok(QueueRet::Enqueued))?,
            )),
            "dequeue" => Ok((
                QueueOp::Dequeue,
                outcome(raw, |r| Ok(QueueRet::Dequeued(value_or_nil(r))))?,
            )),
            f => Err(expected(
                "f enqueue or dequeue",
                &Value::Keyword(f.to_string()),
            )),
        }
    }
}

/// `1st`, `2nd`, `3rd`, `4th`, …
fn ordinal(n: usize) -> String {
    let suffix = match (n % 10, n % 100) {
        (1, 11) | (2, 12) | (3, 13) => "th",
        (1, _) => "st",
        (2, _) => "nd",
        (3, _) => "rd",
        _ => "th",
    };
    format!("{n}{suffix}")
}
