//! Guard rails: a bound on generated states and on the process's memory. When one is
//! hit the bridge stops admitting new states; the search drains and ends `Unknown`,
//! saying which bound it hit. A time-free search is stopped the same way when a client
//! turns out to depend on the time (it is then searched again with times).

use crate::memory::resident_bytes;
use crossbeam_utils::CachePadded;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Mutex;

/// How often (in generated states) the resident memory is read.
const MEMORY_CHECK_EVERY: usize = 4096;

/// A bound of the scope that ends a path before it reaches its end.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Cut {
    /// The time horizon (`--horizon`).
    Horizon,
    /// The step bound of one operation (`--max-op-steps`).
    Steps,
}

/// Counters and the stop flag shared by the checker's threads. Every generated state
/// writes the counters and reads the flag: each is on cache lines of its own, so that
/// the flag's readers do not wait on the counters' writers.
#[derive(Debug)]
pub(crate) struct Guard {
    max_states: usize,
    max_memory_bytes: u64,
    counts: CachePadded<Counts>,
    halted: CachePadded<AtomicBool>,
    why: Mutex<Option<String>>,
    /// What showed that a time-free search depends on the time.
    timed: Mutex<Option<String>>,
}

/// The guard's counts of generated states.
#[derive(Debug, Default)]
struct Counts {
    generated: AtomicUsize,
    horizon_cut: AtomicUsize,
    steps_cut: AtomicUsize,
}

impl Guard {
    pub(crate) fn new(max_states: usize, max_memory_bytes: u64) -> Guard {
        Guard {
            max_states,
            max_memory_bytes,
            counts: CachePadded::new(Counts::default()),
            halted: CachePadded::new(AtomicBool::new(false)),
            why: Mutex::new(None),
            timed: Mutex::new(None),
        }
    }

    /// Counts a generated state (and the path it ends, if a bound of the scope cuts it);
    /// `false` once a bound was hit (the state is dropped).
    pub(crate) fn admit(&self, cut: Option<Cut>) -> bool {
        if self.halted.load(Ordering::Relaxed) {
            return false;
        }
        let n = self.counts.generated.fetch_add(1, Ordering::Relaxed) + 1;
        match cut {
            Some(Cut::Horizon) => {
                self.counts.horizon_cut.fetch_add(1, Ordering::Relaxed);
            }
            Some(Cut::Steps) => {
                self.counts.steps_cut.fetch_add(1, Ordering::Relaxed);
            }
            None => {}
        }
        if n > self.max_states {
            self.halt(format!(
                "state bound reached: {} states generated (--max-states {}); the search is \
                 not exhaustive",
                n - 1,
                self.max_states
            ));
            return false;
        }
        if n.is_multiple_of(MEMORY_CHECK_EVERY) {
            if let Some(rss) = resident_bytes() {
                if rss > self.max_memory_bytes {
                    self.halt(format!(
                        "memory bound reached: the process holds {} MiB (--max-memory {} MiB) \
                         after {n} states; the search is not exhaustive",
                        rss >> 20,
                        self.max_memory_bytes >> 20
                    ));
                    return false;
                }
            }
        }
        true
    }

    fn halt(&self, why: String) {
        let mut w = self.why.lock().expect("guard lock");
        if w.is_none() {
            *w = Some(why);
        }
        self.halted.store(true, Ordering::Relaxed);
    }

    /// Stops a time-free search: `what` (a clock read, a command that involves time)
    /// makes its states depend on the time after all.
    pub(crate) fn depends_on_time(&self, what: String) {
        let mut t = self.timed.lock().expect("guard lock");
        if t.is_none() {
            *t = Some(what);
        }
        self.halted.store(true, Ordering::Relaxed);
    }

    /// What stopped a time-free search, if something did.
    pub(crate) fn time_dependence(&self) -> Option<String> {
        self.timed.lock().expect("guard lock").clone()
    }

    /// Which bound was hit, if one was.
    pub(crate) fn hit(&self) -> Option<String> {
        self.why.lock().expect("guard lock").clone()
    }

    /// Generated states that the time horizon cut (not expanded).
    pub(crate) fn horizon_cut(&self) -> usize {
        self.counts.horizon_cut.load(Ordering::Relaxed)
    }

    /// Generated states that the step bound per operation cut (not expanded).
    pub(crate) fn steps_cut(&self) -> usize {
        self.counts.steps_cut.load(Ordering::Relaxed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_state_bound_stops_admitting_and_says_so() {
        let g = Guard::new(3, u64::MAX);
        assert!(g.admit(None));
        assert!(g.admit(Some(Cut::Horizon)));
        assert!(g.admit(Some(Cut::Steps)));
        assert!(!g.admit(None));
        assert!(!g.admit(Some(Cut::Steps)));
        assert_eq!((g.horizon_cut(), g.steps_cut()), (1, 1));
        let why = g.hit().expect("a bound was hit");
        assert!(
            why.starts_with("state bound reached: 3 states generated"),
            "{why}"
        );
    }

    #[test]
    fn the_memory_bound_stops_admitting_and_says_so() {
        if resident_bytes().is_none() {
            return; // not Linux: only the state bound applies
        }
        let g = Guard::new(usize::MAX, 1);
        let admitted = (0..MEMORY_CHECK_EVERY).filter(|_| g.admit(None)).count();
        assert_eq!(admitted, MEMORY_CHECK_EVERY - 1);
        assert!(g.hit().expect("hit").starts_with("memory bound reached"));
    }
}
