//! Guard rails: a bound on generated states and on the process's memory. When one is
//! hit the bridge stops admitting new states; the search drains and ends `Unknown`,
//! saying which bound it hit. A time-free search is stopped the same way when a client
//! turns out to depend on the time (it is then searched again with times).

use crate::memory::resident_bytes;
use crossbeam_utils::CachePadded;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

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

/// Tickets a thread of the depth-first search takes from the guard at once ([`Tickets`]): the
/// profile (spinlock/fixed 4 × 1 on two threads) showed the shared count of generated
/// states, written by both threads at every state, at 3.4 % of the search (0.7 % on one
/// thread: the cost was its cache line moving between the cores).
pub(crate) const TICKET_RUN: usize = 64;

/// Counters and the stop flag shared by the checker's threads. Every generated state
/// reads the flag, and takes a ticket from the counts (a thread of the depth-first
/// search takes them in runs, [`Tickets`]): each is on cache lines of its own, so that
/// the flag's readers do not wait on the counters' writers.
#[derive(Debug)]
pub(crate) struct Guard {
    max_states: usize,
    max_memory_bytes: u64,
    counts: CachePadded<Counts>,
    halted: CachePadded<AtomicBool>,
    /// Whether the state bound was reached (its message is made when asked for, from
    /// the states admitted by then: [`Guard::hit`]).
    bound: AtomicBool,
    why: Mutex<Option<String>>,
    /// What showed that a time-free search depends on the time.
    timed: Mutex<Option<String>>,
}

/// The guard's counts of generated states.
#[derive(Debug, Default)]
struct Counts {
    /// Tickets handed out: the generated states admitted, and those a thread holds.
    generated: AtomicUsize,
    /// Tickets given back unused ([`Tickets`]' drop).
    unused: AtomicUsize,
    horizon_cut: AtomicUsize,
    steps_cut: AtomicUsize,
}

/// A thread's tickets: numbers of generated states taken from the guard in a run, to
/// admit states without writing the shared count at every one. Every ticket is one
/// state of the bound, numbered as the states would be admitted one by one (the memory
/// check runs at the same numbers), and a run never passes the bound: a search admits
/// at most the bound's states, and all of them unless a thread's search ends with
/// tickets unused (given back when the tickets are dropped), which the bound's message
/// does not count. On one thread, exactly the states admitted one by one.
#[derive(Debug)]
pub(crate) struct Tickets {
    guard: Option<Arc<Guard>>,
    /// The next ticket's number (from 1).
    next: usize,
    /// Tickets left, from `next` on.
    left: usize,
}

impl Tickets {
    /// Tickets of `guard` (none taken yet).
    pub(crate) fn new(guard: Arc<Guard>) -> Tickets {
        Tickets {
            guard: Some(guard),
            next: 0,
            left: 0,
        }
    }

    /// No guard: every state is admitted by the model's own boundary.
    pub(crate) fn none() -> Tickets {
        Tickets {
            guard: None,
            next: 0,
            left: 0,
        }
    }
}

impl Drop for Tickets {
    fn drop(&mut self) {
        if let Some(guard) = &self.guard {
            if self.left > 0 {
                guard.counts.unused.fetch_add(self.left, Ordering::Relaxed);
            }
        }
    }
}

impl Guard {
    pub(crate) fn new(max_states: usize, max_memory_bytes: u64) -> Guard {
        Guard {
            max_states,
            max_memory_bytes,
            counts: CachePadded::new(Counts::default()),
            halted: CachePadded::new(AtomicBool::new(false)),
            bound: AtomicBool::new(false),
            why: Mutex::new(None),
            timed: Mutex::new(None),
        }
    }

    /// Counts a generated state (and the path it ends, if a bound of the scope cuts it);
    /// `false` once a bound was hit (the state is dropped).
    pub(crate) fn admit(&self, cut: Option<Cut>) -> bool {
        self.admit_with(cut, &mut Tickets::none(), 1)
    }

    /// [`Guard::admit`] with a ticket of `tickets` (taking a run of up to `run` more
    /// when they ran out).
    pub(crate) fn admit_with(&self, cut: Option<Cut>, tickets: &mut Tickets, run: usize) -> bool {
        if self.halted.load(Ordering::Relaxed) {
            return false;
        }
        if tickets.left == 0 && !self.take(tickets, run) {
            // The state that reached the bound counts as cut, as when tickets were taken
            // one by one (the next ones are not: the search was halted then).
            if !self.bound.load(Ordering::Relaxed) && !self.bound.swap(true, Ordering::Relaxed) {
                self.count_cut(cut);
            }
            return false;
        }
        let n = tickets.next;
        tickets.next += 1;
        tickets.left -= 1;
        self.count_cut(cut);
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

    fn count_cut(&self, cut: Option<Cut>) {
        match cut {
            Some(Cut::Horizon) => {
                self.counts.horizon_cut.fetch_add(1, Ordering::Relaxed);
            }
            Some(Cut::Steps) => {
                self.counts.steps_cut.fetch_add(1, Ordering::Relaxed);
            }
            None => {}
        }
    }

    /// Takes up to `run` tickets, never past the state bound; `false` when none is left.
    /// Threads that still hold tickets go on using them: every ticket up to the bound
    /// admits a state, as when they were taken one by one.
    fn take(&self, tickets: &mut Tickets, run: usize) -> bool {
        let (max, run) = (self.max_states, run.max(1));
        let taken = self
            .counts
            .generated
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |g| {
                (g < max).then(|| g + run.min(max - g))
            });
        match taken {
            Ok(g) => {
                tickets.next = g + 1;
                tickets.left = run.min(max - g);
                true
            }
            Err(_) => false,
        }
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

    /// Which bound was hit, if one was. The state bound's message counts the states
    /// admitted: asked for when the search is over, every ticket was used or given back.
    pub(crate) fn hit(&self) -> Option<String> {
        // The state bound first: once it is reached no thread takes tickets, so a memory
        // bound noted later was met by a thread using its last ones.
        if self.bound.load(Ordering::Relaxed) {
            let admitted = self.counts.generated.load(Ordering::Relaxed)
                - self.counts.unused.load(Ordering::Relaxed);
            return Some(format!(
                "state bound reached: {admitted} states generated (--max-states {}); the \
                 search is not exhaustive",
                self.max_states
            ));
        }
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

    /// Threads that take tickets in runs never pass the bound between them, the one
    /// holding tickets after another met the bound goes on using them, and the message
    /// counts the states admitted once the unused tickets are given back.
    #[test]
    fn tickets_in_runs_never_pass_the_bound_and_count_the_states_admitted() {
        let g = Arc::new(Guard::new(100, u64::MAX));
        let (mut a, mut b) = (Tickets::new(g.clone()), Tickets::new(g.clone()));
        // a takes 1..=64, b 65..=100 (the run stops at the bound).
        assert!(g.admit_with(None, &mut a, TICKET_RUN));
        assert!(g.admit_with(None, &mut b, TICKET_RUN));
        assert!((0..35).all(|_| g.admit_with(None, &mut b, TICKET_RUN)));
        // b used its run of 36 and meets the bound.
        assert!(!g.admit_with(Some(Cut::Steps), &mut b, TICKET_RUN));
        assert!(!g.admit_with(Some(Cut::Steps), &mut b, TICKET_RUN));
        assert_eq!(
            g.steps_cut(),
            1,
            "only the state that met the bound counts as cut"
        );
        // a still holds 63 tickets: it uses ten of them and gives the rest back.
        assert!((0..10).all(|_| g.admit_with(None, &mut a, TICKET_RUN)));
        drop(a);
        drop(b);
        let why = g.hit().expect("a bound was hit");
        assert!(
            why.starts_with("state bound reached: 47 states generated (--max-states 100)"),
            "{why}"
        );
    }

    /// One thread taking tickets in runs admits exactly the bound's states, as one by one.
    #[test]
    fn one_run_of_tickets_stops_at_the_bound() {
        let g = Arc::new(Guard::new(130, u64::MAX));
        let mut t = Tickets::new(g.clone());
        let admitted = (0..1000)
            .take_while(|_| g.admit_with(None, &mut t, TICKET_RUN))
            .count();
        assert_eq!(admitted, 130);
        drop(t);
        assert!(g
            .hit()
            .expect("hit")
            .starts_with("state bound reached: 130 states generated"));
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
