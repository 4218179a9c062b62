//! The limits of one linearizability check as its searches see them: a step count shared
//! by the partitions' searches (each counts locally and adds a chunk at a time), the
//! deadline, the memos' memory, and the stop signal one violating partition sends the
//! others.

use super::{step_limit_reason, time_limit_reason, CheckerLimits};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// Bounds shared by the partitions of one check.
pub(super) struct Shared {
    steps: AtomicU64,
    max_steps: Option<u64>,
    deadline: Option<(Instant, Duration)>,
    /// Set when a partition is not linearizable: the others stop.
    pub(super) stop: AtomicBool,
    /// Bytes of the memos of the searches running now.
    memory: AtomicU64,
    max_memory: Option<u64>,
}

impl Shared {
    pub(super) fn new(limits: CheckerLimits) -> Self {
        Shared {
            steps: AtomicU64::new(0),
            max_steps: limits.max_steps,
            deadline: limits.time.map(|t| (Instant::now() + t, t)),
            stop: AtomicBool::new(false),
            memory: AtomicU64::new(0),
            max_memory: limits.max_memory,
        }
    }
}

/// One search's view of the limits: steps are counted locally and added to the shared
/// count every [`CHUNK`] steps.
pub(super) struct Budget<'a> {
    shared: &'a Shared,
    local: u64,
    base: u64,
    /// The value of `local` at which [`Budget::check`] runs next.
    next_check: u64,
    /// This search's memo bytes as last added to the shared count.
    memory: u64,
}

/// A power of two.
const CHUNK: u64 = 1024;

impl<'a> Budget<'a> {
    pub(super) fn new(shared: &'a Shared) -> Self {
        let mut b = Budget {
            shared,
            local: 0,
            base: shared.steps.load(Ordering::Relaxed),
            next_check: 0,
            memory: 0,
        };
        b.plan();
        b
    }

    /// The next check: at the chunk boundary, or sooner if the step limit comes first.
    fn plan(&mut self) {
        let boundary = (self.local | (CHUNK - 1)) + 1;
        self.next_check = match self.shared.max_steps {
            Some(max) => boundary.min((max + 1).saturating_sub(self.base).max(self.local + 1)),
            None => boundary,
        };
    }

    /// Counts one step of a search whose memo holds `memo_bytes()`; `Some(reason)` when a
    /// limit is hit.
    #[inline(always)]
    pub(super) fn tick(&mut self, memo_bytes: impl FnOnce() -> u64) -> Option<String> {
        self.local += 1;
        if self.local < self.next_check {
            return None;
        }
        if let Some(why) = self.check() {
            return Some(why);
        }
        if self.local & (CHUNK - 1) == 0 {
            return self.check_memory(memo_bytes());
        }
        None
    }

    /// Adds the memo's growth since the last report to the shared count; `Some(reason)`
    /// when the memos together hold more than the bound.
    #[cold]
    #[inline(never)]
    fn check_memory(&mut self, bytes: u64) -> Option<String> {
        let max = self.shared.max_memory?;
        // A shrunk memo adds a wrapped (negative) delta: the atomic add wraps likewise.
        let delta = bytes.wrapping_sub(self.memory);
        let total = self
            .shared
            .memory
            .fetch_add(delta, Ordering::Relaxed)
            .wrapping_add(delta);
        self.memory = bytes;
        (total > max).then(|| {
            let size = match max {
                m if m >= 1 << 20 => format!("{} MiB", m >> 20),
                m => format!("{} KiB", m >> 10),
            };
            format!(
                "memory limit of {size} for the search's memo reached (raise it with --max-memory)"
            )
        })
    }

    #[cold]
    #[inline(never)]
    fn check(&mut self) -> Option<String> {
        if let Some(max) = self.shared.max_steps {
            if self.base + self.local > max {
                return Some(step_limit_reason(max));
            }
        }
        if self.local & (CHUNK - 1) == 0 {
            self.base = self.shared.steps.fetch_add(CHUNK, Ordering::Relaxed) + CHUNK - self.local;
            if self.shared.stop.load(Ordering::Relaxed) {
                return Some("stopped: another partition is not linearizable".to_string());
            }
            if let Some((at, t)) = self.shared.deadline {
                if Instant::now() >= at {
                    return Some(time_limit_reason(t));
                }
            }
        }
        self.plan();
        None
    }
}

impl Drop for Budget<'_> {
    fn drop(&mut self) {
        self.shared
            .steps
            .fetch_add(self.local % CHUNK, Ordering::Relaxed);
        // The search's memo goes with it.
        self.shared.memory.fetch_sub(self.memory, Ordering::Relaxed);
    }
}
