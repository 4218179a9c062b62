//! What a reader's `read` returns, and how a reader waits for a write.

use kvsim::Kv;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// The result of one `read(timeout)`.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Read {
    /// The next message whose timestamp is at least the reader's `min_timestamp`.
    Message {
        /// The timestamp stored with it.
        timestamp: i64,
        /// Its body.
        message: Vec<u8>,
    },
    /// Nothing new arrived within the timeout.
    Timeout,
    /// The readers were cancelled: this and every later read of this reader says so.
    Canceled,
    /// (fixed) Segments `from..to` disappeared (removed, or lost by the store) before this
    /// reader had read them; reading goes on at segment `to`. Reported once per gap.
    Gap {
        /// The first segment that was gone.
        from: u64,
        /// The segment reading resumes at.
        to: u64,
    },
    /// (published) The segment the reader must read next does not exist; every later read
    /// says the same, as Tkrzw's reader does.
    NotFound {
        /// The missing segment.
        segment: u64,
    },
}

/// The longest single wait, so that a cancellation is noticed within this many ms.
const MAX_WAIT_MS: u64 = 100;

/// A read's timeout, as the article has it: negative waits forever, 0 looks once, positive
/// waits up to that many milliseconds (by the client's clock).
pub(crate) struct Deadline {
    deadline: Option<u64>,
    once: bool,
}

impl Deadline {
    /// Starts the clock of one read.
    pub(crate) fn start<K: Kv>(kv: &K, timeout_ms: i64) -> Deadline {
        match timeout_ms {
            t if t < 0 => Deadline {
                deadline: None,
                once: false,
            },
            0 => Deadline {
                deadline: None,
                once: true,
            },
            t => Deadline {
                deadline: Some(kv.now_ms().saturating_add(t as u64)),
                once: false,
            },
        }
    }

    /// Waits for a change of the store (at most until the deadline); `false` if the
    /// deadline has passed and the read must return [`Read::Timeout`].
    ///
    /// `hot` says the last look found new records: the writer is busy, so the reader
    /// sleeps [`HOT_POLL_MS`] and looks again, collecting a batch of records per look,
    /// instead of being woken by every single write. Otherwise it blocks until the store
    /// changes ([`Kv::wait_for_change_ms`]).
    pub(crate) async fn wait<K: Kv>(&self, kv: &K, hot: bool) -> bool {
        if self.once {
            return false;
        }
        let limit = match self.deadline {
            None => MAX_WAIT_MS,
            Some(d) => {
                let now = kv.now_ms();
                if now >= d {
                    return false;
                }
                (d - now).min(MAX_WAIT_MS)
            }
        };
        if hot {
            kv.sleep_ms(HOT_POLL_MS.min(limit)).await;
        } else {
            kv.wait_for_change_ms(limit).await;
        }
        true
    }
}

/// How long a reader that is keeping up with a busy writer sleeps between looks.
pub const HOT_POLL_MS: u64 = 1;

/// A flag shared by a queue handle and the readers it made.
#[derive(Clone, Debug, Default)]
pub(crate) struct CancelFlag(Arc<AtomicBool>);

impl CancelFlag {
    pub(crate) fn cancel(&self) {
        self.0.store(true, Ordering::Release);
    }

    pub(crate) fn is_canceled(&self) -> bool {
        self.0.load(Ordering::Acquire)
    }
}
