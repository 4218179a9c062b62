//! [`Recorder`]: a history of operations run from OS threads against real servers.
//!
//! Every invocation and completion takes its position in one total order from a counter
//! behind a mutex, the invocation *before* the operation sends anything and the completion
//! *after* it has received everything. So when the history says operation A returned before
//! B was invoked, A's last reply really arrived before B's first request left: thread
//! scheduling can only make operations look more concurrent than they were, never less,
//! and a reordering can never fake a violation. Times are the clients' clock (Unix-epoch
//! ms, what a structure's `now_ms` reads), read under the same mutex and clamped to the
//! last one, so they never run backwards along the order.

use crate::history::{History, Mark, Operation, Outcome};
use std::sync::Mutex;

/// The handle of an invoked, not yet completed operation.
#[derive(Debug, PartialEq, Eq)]
#[must_use = "complete the operation with Recorder::complete"]
pub struct Pending {
    index: usize,
}

struct Inner<Op, Ret> {
    /// Operations the recorder holds at most ([`Recorder::bounded`]).
    max_ops: usize,
    next_seq: u64,
    /// The last time recorded: times never run backwards, even if the system clock does.
    last_ms: u64,
    ops: Vec<Operation<Op, Ret>>,
}

/// Records a history from many threads (see the module docs).
/// Times are the clients' clock ([`crate::net::TcpKv`]'s `now_ms`, Unix-epoch ms), read
/// when each event is recorded, so a structure's period of `now / T` and the history's
/// agree; they never run backwards.
pub struct Recorder<Op, Ret> {
    inner: Mutex<Inner<Op, Ret>>,
    /// Set once the recorder refused an operation (it held [`Inner::max_ops`]).
    full: std::sync::atomic::AtomicBool,
}

/// Bytes one recorded operation counts for against a bound ([`Recorder::bounded`]): its
/// record twice (a growing vector holds up to twice what it uses while it moves), and 64
/// bytes for what its operation and return hold on the heap (a queue's element, say).
pub fn op_bytes<Op, Ret>() -> u64 {
    2 * std::mem::size_of::<Operation<Op, Ret>>() as u64 + 64
}

impl<Op, Ret> Default for Recorder<Op, Ret> {
    fn default() -> Self {
        Self::new()
    }
}

impl<Op, Ret> Inner<Op, Ret> {
    /// Now, on the clients' clock, and never before the last time recorded.
    fn now_ms(&mut self) -> u64 {
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_millis() as u64);
        self.last_ms = self.last_ms.max(now);
        self.last_ms
    }
}

impl<Op, Ret> Recorder<Op, Ret> {
    /// An empty recorder; times are Unix-epoch milliseconds.
    pub fn new() -> Self {
        Self::bounded(u64::MAX)
    }

    /// An empty recorder that holds operations worth at most `bytes` ([`op_bytes`] each):
    /// once it holds that many, [`Recorder::try_invoke`] refuses more and
    /// [`Recorder::full`] says so (operations already started are still completed).
    pub fn bounded(bytes: u64) -> Self {
        let max_ops = usize::try_from(bytes / op_bytes::<Op, Ret>()).unwrap_or(usize::MAX);
        Recorder {
            full: std::sync::atomic::AtomicBool::new(false),
            inner: Mutex::new(Inner {
                max_ops,
                next_seq: 0,
                last_ms: 0,
                ops: Vec::new(),
            }),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Inner<Op, Ret>> {
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Notes that `client` invokes `op`; call it before the operation sends anything.
    pub fn invoke(&self, client: usize, op: Op) -> Pending {
        let mut inner = self.lock();
        self.push(&mut inner, client, op)
    }

    /// [`Recorder::invoke`], unless the recorder is full ([`Recorder::bounded`]): then
    /// `None`, and the operation must not start.
    pub fn try_invoke(&self, client: usize, op: Op) -> Option<Pending> {
        let mut inner = self.lock();
        if inner.ops.len() >= inner.max_ops {
            self.full.store(true, std::sync::atomic::Ordering::Relaxed);
            return None;
        }
        Some(self.push(&mut inner, client, op))
    }

    fn push(&self, inner: &mut Inner<Op, Ret>, client: usize, op: Op) -> Pending {
        let call_ms = inner.now_ms();
        let call = inner.next_seq;
        inner.next_seq += 1;
        inner.ops.push(Operation {
            client,
            op,
            call,
            ret: None,
            call_ms,
            ret_ms: None,
            outcome: Outcome::Unknown,
            marks: Vec::new(),
        });
        Pending {
            index: inner.ops.len() - 1,
        }
    }

    /// Whether the recorder refused an operation ([`Recorder::try_invoke`]) because it
    /// held as many as its bound allows ([`Recorder::bounded`]).
    pub fn full(&self) -> bool {
        self.full.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// Notes that the operation finished with `outcome`; call it after its last reply.
    /// An `Outcome::Unknown` (timeout, lost connection) still records when the client
    /// gave up; the checker lets such an operation take effect at any later point.
    pub fn complete(&self, pending: Pending, outcome: Outcome<Ret>) {
        let mut inner = self.lock();
        let ret_ms = inner.now_ms();
        let ret = inner.next_seq;
        inner.next_seq += 1;
        let op = &mut inner.ops[pending.index];
        op.ret = Some(ret);
        op.ret_ms = Some(ret_ms);
        op.outcome = outcome;
    }

    /// Notes an event of the structure during a pending operation (e.g. `"enter"` of a
    /// critical section), in the same total order as invocations and completions. Call it
    /// when the event has happened (after the reply that made it so): a recorded critical
    /// section then lies within the real one, so recorded overlaps are real overlaps.
    pub fn mark(&self, pending: &Pending, label: &str) {
        let mut inner = self.lock();
        let time_ms = inner.now_ms();
        let seq = inner.next_seq;
        inner.next_seq += 1;
        inner.ops[pending.index].marks.push(Mark {
            label: label.to_string().into(),
            seq,
            time_ms,
        });
    }

    /// Operations recorded so far.
    pub fn len(&self) -> usize {
        self.lock().ops.len()
    }

    /// Whether no operation was recorded.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The history so far, in invocation order (operations never completed stay
    /// `Unknown` with no completion).
    pub fn finish(self) -> History<Op, Ret> {
        let inner = self.inner.into_inner().unwrap_or_else(|p| p.into_inner());
        // Pushed under the lock in `call` order already.
        History { ops: inner.ops }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    #[test]
    fn completion_before_invocation_means_real_precedence() {
        let rec: Recorder<&str, u32> = Recorder::new();
        let a = rec.invoke(0, "a");
        rec.complete(a, Outcome::Ok(1));
        let b = rec.invoke(1, "b");
        rec.mark(&b, "enter");
        let c = rec.invoke(2, "c");
        rec.complete(c, Outcome::Unknown);
        let _never = rec.invoke(3, "d");
        rec.complete(b, Outcome::Ok(2));
        let h = rec.finish();
        assert_eq!(h.ops.len(), 4);
        assert!(h.ops[0].precedes(&h.ops[1]));
        assert!(!h.ops[1].precedes(&h.ops[2]));
        assert!(!h.ops[2].precedes(&h.ops[3]), "unknown never precedes");
        assert_eq!(h.ops[3].ret, None);
        let calls: Vec<u64> = h.ops.iter().map(|o| o.call).collect();
        assert_eq!(calls, vec![0, 2, 4, 6]);
        assert_eq!(h.ops[1].marks[0].label, "enter");
        assert_eq!(h.ops[1].marks[0].seq, 3);
    }

    #[test]
    fn a_bounded_recorder_says_when_it_is_full() {
        let each = op_bytes::<u32, u32>();
        let rec: Recorder<u32, u32> = Recorder::bounded(3 * each + each / 2);
        for i in 0..3 {
            let p = rec.try_invoke(0, i).expect("room for three");
            rec.complete(p, Outcome::Ok(i));
        }
        assert!(!rec.full(), "nothing refused yet");
        assert_eq!(rec.try_invoke(0, 9), None, "no room for a fourth");
        assert!(rec.full());
        assert_eq!(rec.finish().len(), 3);
        assert_eq!(
            Recorder::<u32, u32>::bounded(each - 1).try_invoke(0, 1),
            None
        );
        assert!(Recorder::<u32, u32>::new().try_invoke(0, 1).is_some());
    }

    #[test]
    fn threads_get_distinct_positions_and_monotonic_times() {
        let rec: Arc<Recorder<usize, usize>> = Arc::new(Recorder::new());
        let threads: Vec<_> = (0..4)
            .map(|t| {
                let rec = Arc::clone(&rec);
                std::thread::spawn(move || {
                    for i in 0..100 {
                        let p = rec.invoke(t, i);
                        rec.complete(p, Outcome::Ok(i));
                    }
                })
            })
            .collect();
        for t in threads {
            t.join().unwrap();
        }
        let h = Arc::into_inner(rec).unwrap().finish();
        let mut seqs: Vec<u64> = h
            .ops
            .iter()
            .flat_map(|o| [o.call, o.ret.unwrap()])
            .collect();
        seqs.sort_unstable();
        assert_eq!(seqs, (0..800).collect::<Vec<u64>>());
        for w in h.ops.windows(2) {
            assert!(w[0].call < w[1].call && w[0].call_ms <= w[1].call_ms);
        }
    }
}
