//! A lock, initially free, held by one owner at a time: `acquire` (blocking: completes
//! only when it gets the lock), `try-acquire` (returns whether it got it) and `release`
//! (returns whether the caller held it). In history files the owner is the process.

use crate::formats::{expected, End, FromRaw, RawOp, Value};
use crate::history::Outcome;
use crate::spec::SequentialSpec;

/// A lock operation by an owner.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum MutexOp {
    /// Block until the lock is free, then take it.
    Acquire(u64),
    /// Take the lock if it is free.
    TryAcquire(u64),
    /// Give the lock back.
    Release(u64),
}

/// What a lock operation returns: whether it succeeded (a blocking acquire that
/// completes always has).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct MutexRet(pub bool);

/// The mutex spec; the state is the holder.
#[derive(Clone, Copy, Debug, Default)]
pub struct MutexSpec;

impl SequentialSpec for MutexSpec {
    type State = Option<u64>;
    type Op = MutexOp;
    type Ret = MutexRet;

    fn name(&self) -> &'static str {
        "mutex"
    }

    fn init(&self) -> Option<u64> {
        None
    }

    fn step(&self, state: &Option<u64>, op: &MutexOp) -> (Option<u64>, MutexRet) {
        match (op, state) {
            (MutexOp::Acquire(o) | MutexOp::TryAcquire(o), None) => (Some(*o), MutexRet(true)),
            (MutexOp::Acquire(_) | MutexOp::TryAcquire(_), Some(_)) => (*state, MutexRet(false)),
            (MutexOp::Release(o), Some(h)) if h == o => (None, MutexRet(true)),
            (MutexOp::Release(_), _) => (*state, MutexRet(false)),
        }
    }

    fn read_only(&self, op: &MutexOp, ret: &MutexRet) -> bool {
        !ret.0 && !matches!(op, MutexOp::Acquire(_))
    }

    fn explain(&self, state: &Option<u64>, op: &MutexOp, _: &MutexRet, found: &MutexRet) -> String {
        let holder = match state {
            Some(h) => format!("{h} holds it"),
            None => "it is free".to_string(),
        };
        match (op, found.0) {
            (MutexOp::Acquire(o) | MutexOp::TryAcquire(o), true) => {
                format!("{o} acquired the lock, but {holder}")
            }
            (MutexOp::TryAcquire(o), false) => {
                format!("{o} failed to acquire the lock, but {holder}")
            }
            (MutexOp::Release(o), true) => format!("{o} released the lock, but {holder}"),
            (MutexOp::Release(o), false) => format!("{o}'s release failed, but {holder}"),
            (MutexOp::Acquire(o), false) => format!("{o}'s blocking acquire returned failure"),
        }
    }
}

impl FromRaw for MutexSpec {
    fn op_from_raw(&self, raw: &RawOp) -> Result<(MutexOp, Outcome<MutexRet>), String> {
        let owner = raw.process;
        let op = match raw.f.as_str() {
            "acquire" => MutexOp::Acquire(owner),
            "try-acquire" | "try_acquire" => MutexOp::TryAcquire(owner),
            "release" => MutexOp::Release(owner),
            f => {
                return Err(expected(
                    "f acquire, try-acquire or release",
                    &Value::Keyword(f.to_string()),
                ))
            }
        };
        let outcome = match (raw.end, &op) {
            (End::Ok, _) => Outcome::Ok(MutexRet(!matches!(raw.result, Value::Bool(false)))),
            // A failed try-acquire or release is an observation: the lock was not free,
            // or not ours (read as `--fail-means compare-failed`; as `no-effect` it says
            // nothing). A failed blocking acquire never got the lock.
            (End::Fail, MutexOp::TryAcquire(_) | MutexOp::Release(_)) => {
                Outcome::Ok(MutexRet(false))
            }
            (End::Fail, MutexOp::Acquire(_)) => Outcome::Failed,
            (End::Info | End::Pending, _) => Outcome::Unknown,
        };
        Ok((op, outcome))
    }
}
