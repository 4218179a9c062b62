//! A FIFO queue, initially empty: `enqueue v` adds at the tail, `dequeue` removes and
//! returns the head (`None`, nil in files, when empty).

use crate::formats::{expected, outcome, FromRaw, RawOp, Value};
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

impl<V: Clone + Eq + Hash + Debug> SequentialSpec for QueueSpec<V> {
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
