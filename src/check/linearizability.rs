//! Linearizability: Wing & Gong's search with Lowe's memoization, as in Porcupine.
//!
//! The history becomes a doubly linked list of call and return entries in real-time
//! order. The search walks the list from its head: at a call entry it tries to linearize
//! that operation now (the spec must accept its return in the current state, and the pair
//! (set of linearized operations, new state) must be new, else the branch was explored
//! already); at a return entry it backtracks, since that operation should have been
//! linearized before it returned. Linearized operations are lifted out of the list and put
//! back when the search backtracks (dancing links, `check/placement.rs`). The memo keeps
//! each set of linearized operations as its window (`check/opset.rs`), so a history costs
//! what its concurrency costs, not its length squared.
//!
//! Outcomes:
//! - `Ok(ret)`: the spec must accept `ret` where the operation is placed.
//! - `Failed`: certainly no effect; the operation is left out of the search.
//! - `Unknown` (crashed, timed out): the operation may take effect at any point after its
//!   invocation, or never. It has no return entry (it returns "at the end of the history",
//!   as Porcupine models it), any return is accepted, and the search succeeds as soon as
//!   every operation with a known outcome is placed: the unknown ones left over never took
//!   effect.
//!
//! When the spec is P-compositional ([`SequentialSpec::partition`] returns `Some` for every
//! operation) each partition is checked on its own, from the spec's initial state.
//!
//! Before searching a partition, the spec's pre-pass
//! ([`SequentialSpec::unproducible`]) looks for a return no operation of it, complete or
//! pending, could have produced (a read of a value nobody wrote): a violation at once,
//! where the search would try every subset of the pending operations first.
//!
//! Bounds: a wall-clock deadline, a bound on search steps and a bound on the memo's
//! memory, all checked inside the search; hitting one yields [`Verdict::Unknown`] naming
//! it, never a pass (nor an abort of the process). Simulated runs should use the step
//! bound only: it is deterministic, the deadline is not. Histories from outside get
//! [`CheckerLimits::for_histories`] unless told otherwise.

use super::opset::Window;
use super::placement::{op_hash, Placement, Timing, HEAD};
use crate::history::{History, Outcome};
use crate::spec::SequentialSpec;
use crate::verdict::{Verdict, Violation};
use hashbrown::HashTable;
use std::collections::BTreeMap;
use std::hash::{Hash, Hasher};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// Bounds on one linearizability check. The default has none.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CheckerLimits {
    /// Wall-clock time for the whole check (all partitions). Not deterministic: use it for
    /// histories from outside, not inside simulated runs.
    pub time: Option<Duration>,
    /// Search steps (entries visited) for the whole check. Deterministic.
    pub max_steps: Option<u64>,
    /// Bytes of the searches' memos (the visited configurations and their states, as the
    /// tables hold them) summed over the partitions searched at once. Checked every
    /// 1,024 steps, so a memo may pass it by what that many steps add.
    pub max_memory: Option<u64>,
}

impl CheckerLimits {
    /// No bound at all.
    pub fn none() -> Self {
        CheckerLimits::default()
    }

    /// At most `time` of wall-clock time.
    pub fn time(time: Duration) -> Self {
        CheckerLimits {
            time: Some(time),
            ..CheckerLimits::default()
        }
    }

    /// At most `steps` search steps.
    pub fn steps(steps: u64) -> Self {
        CheckerLimits {
            max_steps: Some(steps),
            ..CheckerLimits::default()
        }
    }

    /// The step bound `kvsim check-history` uses unless told (`--max-steps`): 100 million
    /// search steps, a minute or two of searching on a laptop, the same on every machine.
    /// Every history of Porcupine's benchmark takes far fewer.
    pub const HISTORY_MAX_STEPS: u64 = 100_000_000;

    /// The memo bound `kvsim check-history` uses unless told (`--max-memory`): 1 GiB, the
    /// same on every machine.
    pub const HISTORY_MAX_MEMORY: u64 = 1 << 30;

    /// The bounds a check of a history from outside uses unless told:
    /// [`CheckerLimits::HISTORY_MAX_STEPS`] and [`CheckerLimits::HISTORY_MAX_MEMORY`], both
    /// deterministic, so a history gets the same verdict on every machine.
    pub fn for_histories() -> Self {
        CheckerLimits {
            time: None,
            max_steps: Some(Self::HISTORY_MAX_STEPS),
            max_memory: Some(Self::HISTORY_MAX_MEMORY),
        }
    }

    /// Three quarters of the memory available now (as `kvsim explore`'s bound; 4 GiB
    /// where the OS does not say), at least 64 MiB: the memo bound of `kvsim stress`.
    pub fn default_memory() -> u64 {
        crate::memory::available_bytes()
            .map_or(4 << 30, |a| a / 4 * 3)
            .max(64 << 20)
    }

    /// These limits, with the memos bounded to `bytes`.
    pub fn with_memory(self, bytes: u64) -> Self {
        CheckerLimits {
            max_memory: Some(bytes),
            ..self
        }
    }
}

/// The reason an `Unknown` gives when the search took more than `max` steps:
/// `search step limit of 10,000,000 reached` (a caller may add the flag that raises it).
pub fn step_limit_reason(max: u64) -> String {
    format!("search step limit of {} reached", thousands(max))
}

/// The reason an `Unknown` gives when the check took longer than `time`.
pub fn time_limit_reason(time: Duration) -> String {
    format!("time limit of {} ms reached", time.as_millis())
}

/// `10000000` as `10,000,000`.
fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// A linearization that explains a history: per partition, the operations (indices into
/// the history's `ops`) in the order they took effect. Operations with an unknown outcome
/// that appear nowhere never took effect; failed operations appear nowhere.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct Witness {
    /// One order per partition (one in all when the spec does not partition), partitions
    /// in increasing order of their key.
    pub orders: Vec<Vec<usize>>,
}

/// Why a history is not linearizable.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Counterexample {
    /// The partition it happened in (`None` when the spec does not partition).
    pub partition: Option<u64>,
    /// The first operation that cannot be placed after the longest partial linearization
    /// (index into the history's `ops`).
    pub op: usize,
    /// The longest partial linearization the search found (indices into `ops`).
    pub partial: Vec<usize>,
    /// Why, in the spec's own words.
    pub reason: String,
}

/// The result of a linearizability check, with its evidence.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Linearization {
    /// Linearizable; the witness is one valid order.
    Ok(Witness),
    /// Not linearizable.
    Violation(Counterexample),
    /// Undecided: a limit was hit (the string says which).
    Unknown(String),
}

impl Linearization {
    /// The verdict alone.
    pub fn verdict(&self) -> Verdict {
        match self {
            Linearization::Ok(_) => Verdict::Ok,
            Linearization::Unknown(why) => Verdict::Unknown(why.clone()),
            Linearization::Violation(c) => {
                let mut ops = vec![c.op];
                ops.extend(c.partial.iter().copied());
                Verdict::Violation(
                    Violation::new("linearizability", c.reason.clone(), ops)
                        .with_partial(c.partial.clone()),
                )
            }
        }
    }
}

/// Checks `history` against `spec`; the verdict only (see [`check_linearizability`]).
pub fn linearizable<S: SequentialSpec>(
    spec: &S,
    history: &History<S::Op, S::Ret>,
    limits: CheckerLimits,
) -> Verdict {
    check_linearizability(spec, history, limits).verdict()
}

/// Checks `history` against `spec` within `limits`: a witness, a counterexample, or
/// `Unknown` when a limit was hit. Partitions are checked one after the other, so the
/// result (and, with `max_steps`, where the search stops) is deterministic.
pub fn check_linearizability<S: SequentialSpec>(
    spec: &S,
    history: &History<S::Op, S::Ret>,
    limits: CheckerLimits,
) -> Linearization {
    let shared = Shared::new(limits);
    let mut results = Vec::new();
    for (key, ops) in partitions(spec, history) {
        let found = search(spec, history, &ops, &mut Budget::new(&shared));
        let stop = !matches!(found, Found::Ok(_));
        results.push((key, found));
        if stop {
            break;
        }
    }
    conclude(results)
}

/// Like [`check_linearizability`], with the partitions spread over the machine's cores
/// (a violation in one stops the others) when the history has 1000 operations or more. The verdict is the same; which limit is hit
/// first, and so an `Unknown`'s reason, may vary from run to run.
pub fn check_linearizability_parallel<S>(
    spec: &S,
    history: &History<S::Op, S::Ret>,
    limits: CheckerLimits,
) -> Linearization
where
    S: SequentialSpec + Sync,
    S::Op: Sync,
    S::Ret: Sync,
    S::State: Send,
{
    // Threads cost more than they save on small histories.
    if history.ops.len() < PARALLEL_MIN_OPS {
        return check_linearizability(spec, history, limits);
    }
    let threads = cores();
    let mut parts = partitions(spec, history);
    if parts.len() < 2 || threads < 2 {
        return check_linearizability(spec, history, limits);
    }
    // Largest first, so the long ones start early.
    let mut order: Vec<usize> = (0..parts.len()).collect();
    order.sort_by_key(|&p| std::cmp::Reverse(parts[p].1.len()));
    let shared = Shared::new(limits);
    let next = AtomicUsize::new(0);
    let slots: Vec<Mutex<Option<Found>>> = parts.iter().map(|_| Mutex::new(None)).collect();
    // The workers write values in messages as this thread does (JSON for a jsonl file).
    let syntax = crate::formats::syntax();
    std::thread::scope(|scope| {
        for _ in 0..threads.min(parts.len()) {
            scope.spawn(|| loop {
                let k = next.fetch_add(1, Ordering::Relaxed);
                let Some(&p) = order.get(k) else { break };
                let found = crate::formats::in_syntax(syntax, || {
                    search(spec, history, &parts[p].1, &mut Budget::new(&shared))
                });
                if matches!(found, Found::Violation(_)) {
                    shared.stop.store(true, Ordering::Relaxed);
                }
                *slots[p].lock().unwrap_or_else(|e| e.into_inner()) = Some(found);
            });
        }
    });
    let results = parts
        .drain(..)
        .zip(slots)
        .filter_map(|((key, _), slot)| {
            let found = slot.into_inner().unwrap_or_else(|e| e.into_inner())?;
            Some((key, found))
        })
        .collect();
    conclude(results)
}

/// Histories shorter than this are checked on one thread.
const PARALLEL_MIN_OPS: usize = 1000;

/// The cores this process may use, asked once: the answer takes reading the cgroup's CPU
/// quota from /sys, which costs more than checking a small history.
fn cores() -> usize {
    static CORES: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    *CORES.get_or_init(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
}

/// The live operations by partition (keys in increasing order), or all in one.
fn partitions<S: SequentialSpec>(
    spec: &S,
    history: &History<S::Op, S::Ret>,
) -> Vec<(Option<u64>, Vec<usize>)> {
    let live: Vec<usize> = (0..history.ops.len())
        .filter(|&i| !matches!(history.ops[i].outcome, Outcome::Failed))
        .collect();
    let keys: Option<Vec<u64>> = live
        .iter()
        .map(|&i| spec.partition(&history.ops[i].op))
        .collect();
    match keys {
        Some(keys) => {
            let mut by_key: BTreeMap<u64, Vec<usize>> = BTreeMap::new();
            for (&i, k) in live.iter().zip(keys) {
                by_key.entry(k).or_default().push(i);
            }
            by_key.into_iter().map(|(k, v)| (Some(k), v)).collect()
        }
        None => vec![(None, live)],
    }
}

/// The verdict from per-partition results in key order: the first violation, else the
/// first unknown, else the witness.
fn conclude(results: Vec<(Option<u64>, Found)>) -> Linearization {
    let mut witness = Witness::default();
    let mut unknown = None;
    for (key, found) in results {
        match found {
            Found::Ok(order) => witness.orders.push(order),
            Found::Violation(mut c) => {
                c.partition = key;
                return Linearization::Violation(c);
            }
            Found::Unknown(why) => {
                unknown.get_or_insert(why);
            }
        }
    }
    match unknown {
        Some(why) => Linearization::Unknown(why),
        None => Linearization::Ok(witness),
    }
}

/// Bounds shared by the partitions of one check.
struct Shared {
    steps: AtomicU64,
    max_steps: Option<u64>,
    deadline: Option<(Instant, Duration)>,
    stop: AtomicBool,
    /// Bytes of the memos of the searches running now.
    memory: AtomicU64,
    max_memory: Option<u64>,
}

impl Shared {
    fn new(limits: CheckerLimits) -> Self {
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
struct Budget<'a> {
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
    fn new(shared: &'a Shared) -> Self {
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
    fn tick(&mut self, memo_bytes: impl FnOnce() -> u64) -> Option<String> {
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

enum Found {
    Ok(Vec<usize>),
    Violation(Counterexample),
    Unknown(String),
}

const NIL: u32 = u32::MAX;

#[inline]
fn state_hash<T: Hash>(state: &T) -> u64 {
    let mut h = rustc_hash::FxHasher::default();
    state.hash(&mut h);
    op_hash(h.finish() as usize)
}

/// One memo slot: a set of linearized known operations (the window of `len` words from
/// word `low`, at `key` in [`Memo::keys`]) and a state (at `state` in [`Memo::states`]),
/// with the sets of unknown-outcome operations linearized on the way there (a list in
/// [`Memo::links`]).
#[derive(Clone, Copy)]
struct Slot {
    hash: u64,
    key: u32,
    low: u32,
    len: u32,
    state: u32,
    unknowns: u32,
}

/// One used-up set of unknown-outcome operations in a slot's list: the next in the list
/// ([`NIL`] at its end), and the set's window (`len` words from word `low`, at `at` in
/// [`Memo::unknown_sets`]).
#[derive(Clone, Copy)]
struct UnknownLink {
    next: u32,
    at: u32,
    low: u32,
    len: u32,
}

impl UnknownLink {
    fn window<'a>(&self, arena: &'a [u64]) -> Window<'a> {
        Window {
            low: self.low,
            words: &arena[self.at as usize..(self.at + self.len) as usize],
        }
    }
}

/// Where an operation leads: a state already in [`Memo::states`] (interned mode), or a
/// new value.
enum Next<St> {
    Id(u32),
    Value(St),
}

/// Lowe's memo of visited configurations. Sets and states live in arenas: a slot is
/// plain data, and the search refers to states by index, so a state is never cloned.
/// A configuration (known set K, unknown set U, state s) is dominated by a visited
/// (K, U', s) with U' ⊆ U: with fewer unknown operations used up, the visited one could do
/// everything this one can, and it failed (or is being explored above us).
///
/// Interned mode (the search starts in it): every distinct state is stored once and known
/// by its index, and what each operation does in each state is remembered, so a history
/// that keeps meeting the same few states (a register) asks the spec once per (state,
/// operation) and compares states as integers. When states rarely repeat (a growing kv
/// value), the remembering costs more than it saves: when fewer than half of the first
/// [`PROBE`] lookups hit, the search of that partition starts again in plain mode, where
/// each configuration keeps its own copy of its state.
struct Memo<St> {
    table: HashTable<Slot>,
    keys: Vec<u64>,
    links: Vec<UnknownLink>,
    unknown_sets: Vec<u64>,
    states: Vec<St>,
    interned: Option<Interned>,
    /// Interned mode does not pay here: the search starts again in plain mode.
    unprofitable: bool,
    /// Whether the partition has unknown-outcome operations.
    unknowns: bool,
}

/// The interned mode's tables.
#[derive(Default)]
struct Interned {
    /// Distinct states by hash: (hash, index in [`Memo::states`]).
    ids: HashTable<(u64, u32)>,
    /// `state id << 32 | local op` → the next state's id, or [`NIL`] if the spec refuses.
    steps: rustc_hash::FxHashMap<u64, u32>,
    /// Lookups and hits of the step cache.
    lookups: u64,
    hits: u64,
}

/// Step-cache lookups after which interned mode judges whether it pays.
const PROBE: u64 = 1024;

/// The memo hash of an interned state id (independent of the operations' bit hashes).
#[inline]
fn id_hash(id: u32) -> u64 {
    op_hash((id as usize) ^ (1 << 40))
}

impl<St: Clone + Eq + Hash> Memo<St> {
    /// The bytes the memo's tables hold (states counted by their inline size).
    fn bytes(&self) -> u64 {
        use std::mem::size_of;
        let mut bytes = self.table.capacity() * (size_of::<Slot>() + 1)
            + self.keys.capacity() * size_of::<u64>()
            + self.links.capacity() * size_of::<UnknownLink>()
            + self.unknown_sets.capacity() * size_of::<u64>()
            + self.states.capacity() * size_of::<St>();
        if let Some(interned) = &self.interned {
            bytes += interned.ids.capacity() * (size_of::<(u64, u32)>() + 1)
                + interned.steps.capacity() * (size_of::<(u64, u32)>() + 1);
        }
        bytes as u64
    }

    fn new(unknowns: bool, init: St, interned: bool) -> Self {
        let interned = interned.then(|| {
            let mut interned = Interned::default();
            let h = state_hash(&init);
            interned.ids.insert_unique(h, (h, 0), |e| e.0);
            interned
        });
        Memo {
            table: HashTable::new(),
            keys: Vec::new(),
            links: Vec::new(),
            unknown_sets: Vec::new(),
            states: vec![init],
            interned,
            unprofitable: false,
            unknowns,
        }
    }

    /// Where `op` (local index `j`) leads from state `from`, given its known return
    /// (`None`: unknown outcome, any return); `None` if the spec refuses that return.
    #[inline]
    fn advance<S: SequentialSpec<State = St>>(
        &mut self,
        spec: &S,
        from: u32,
        j: usize,
        op: &S::Op,
        ret: Option<&S::Ret>,
    ) -> Option<Next<St>> {
        let apply = |state: &St| match ret {
            Some(r) => spec.accepts(state, op, r),
            None => Some(spec.step(state, op).0),
        };
        if let Some(interned) = self.interned.as_mut() {
            if interned.lookups == PROBE {
                self.unprofitable = interned.hits * 2 < PROBE;
            }
        }
        let Some(interned) = self.interned.as_mut() else {
            return apply(&self.states[from as usize]).map(Next::Value);
        };
        let key = (u64::from(from) << 32) | j as u64;
        interned.lookups += 1;
        if let Some(&to) = interned.steps.get(&key) {
            interned.hits += 1;
            return (to != NIL).then_some(Next::Id(to));
        }
        let to = apply(&self.states[from as usize]).map(|next| {
            let h = state_hash(&next);
            let states = &mut self.states;
            match interned
                .ids
                .find(h, |&(eh, i)| eh == h && states[i as usize] == next)
            {
                Some(&(_, i)) => i,
                None => {
                    let i = states.len() as u32;
                    states.push(next);
                    interned.ids.insert_unique(h, (h, i), |e| e.0);
                    i
                }
            }
        });
        interned.steps.insert(key, to.unwrap_or(NIL));
        to.map(Next::Id)
    }

    /// Whether the spec accepts `op` (local index `j`) returning `ret` from `from` (see
    /// [`Memo::advance`]).
    #[inline]
    fn accepts_from<S: SequentialSpec<State = St>>(
        &mut self,
        spec: &S,
        from: &Next<St>,
        j: usize,
        op: &S::Op,
        ret: Option<&S::Ret>,
    ) -> bool {
        match from {
            Next::Id(id) => self.advance(spec, *id, j, op, ret).is_some(),
            Next::Value(v) => match ret {
                Some(r) => spec.accepts(v, op, r).is_some(),
                None => true,
            },
        }
    }

    /// Whether `next` is the state `id`.
    #[inline]
    fn same(&self, next: &Next<St>, id: u32) -> bool {
        match next {
            Next::Id(n) => *n == id,
            Next::Value(v) => *v == self.states[id as usize],
        }
    }

    /// The memo hash of a state.
    #[inline]
    fn hash_of(next: &Next<St>) -> u64 {
        match next {
            Next::Id(id) => id_hash(*id),
            Next::Value(v) => state_hash(v),
        }
    }

    /// Records (known, unknown, state); the state's index if the configuration is new
    /// (not dominated), `None` if it was seen. `hash` covers the known set and the state.
    fn visit(
        &mut self,
        hash: u64,
        known: Window<'_>,
        unknown: Window<'_>,
        next: Next<St>,
    ) -> Option<u32> {
        let Memo {
            table,
            keys,
            links,
            unknown_sets,
            states,
            unknowns,
            ..
        } = self;
        let found = table.find_mut(hash, |s| {
            s.hash == hash
                && s.low == known.low
                && s.len as usize == known.words.len()
                && keys[s.key as usize..(s.key + s.len) as usize] == *known.words
                && match &next {
                    Next::Id(id) => s.state == *id,
                    Next::Value(v) => states[s.state as usize] == *v,
                }
        });
        match found {
            Some(slot) => {
                if !*unknowns {
                    return None;
                }
                let mut l = slot.unknowns;
                while l != NIL {
                    let link = links[l as usize];
                    if link.window(unknown_sets).subset_of(&unknown) {
                        return None;
                    }
                    l = link.next;
                }
                // Drop the sets this one dominates, keeping the list an antichain.
                let mut prev = NIL;
                let mut l = slot.unknowns;
                while l != NIL {
                    let link = links[l as usize];
                    if unknown.subset_of(&link.window(unknown_sets)) {
                        if prev == NIL {
                            slot.unknowns = link.next;
                        } else {
                            links[prev as usize].next = link.next;
                        }
                    } else {
                        prev = l;
                    }
                    l = link.next;
                }
                slot.unknowns = push_unknown(links, unknown_sets, slot.unknowns, unknown);
                Some(slot.state)
            }
            None => {
                let key = keys.len() as u32;
                keys.extend_from_slice(known.words);
                let unknowns = match *unknowns {
                    true => push_unknown(links, unknown_sets, NIL, unknown),
                    false => NIL,
                };
                let index = match next {
                    Next::Id(id) => id,
                    Next::Value(v) => {
                        states.push(v);
                        states.len() as u32 - 1
                    }
                };
                table.insert_unique(
                    hash,
                    Slot {
                        hash,
                        key,
                        low: known.low,
                        len: known.words.len() as u32,
                        state: index,
                        unknowns,
                    },
                    |s| s.hash,
                );
                Some(index)
            }
        }
    }
}

/// Puts `set` at the head of the list that goes on at `next`; the new head.
fn push_unknown(
    links: &mut Vec<UnknownLink>,
    arena: &mut Vec<u64>,
    next: u32,
    set: Window<'_>,
) -> u32 {
    links.push(UnknownLink {
        next,
        at: arena.len() as u32,
        low: set.low,
        len: set.words.len() as u32,
    });
    arena.extend_from_slice(set.words);
    links.len() as u32 - 1
}

/// A linearized operation on the search stack.
struct Frame {
    op: usize,
    /// Index of the state before it, in [`Memo::states`].
    before: u32,
    /// Placed greedily (a read-only operation that fits here): no alternative at this
    /// point needs exploring, so backtracking passes through it.
    forced: bool,
    /// The pass it was placed in, which backtracking goes on with.
    pass: Pass,
}

/// Which operations a walk over the list tries at one configuration, in this order.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Pass {
    /// Operations with a known outcome.
    Known,
    /// Unknown-outcome operations after which some known one can go on: a crashed write
    /// whose value a read returned is tried before the crashed writes nobody needs yet,
    /// so that a linearizable history with many crashed writes is found in one descent.
    Enabling,
    /// The other unknown-outcome operations.
    Rest,
}

/// The search over one partition; `ops` are indices into `history.ops`.
fn search<S: SequentialSpec>(
    spec: &S,
    history: &History<S::Op, S::Ret>,
    ops: &[usize],
    budget: &mut Budget<'_>,
) -> Found {
    let view: Vec<(&S::Op, Option<&S::Ret>)> = ops
        .iter()
        .map(|&i| {
            let o = &history.ops[i];
            let ret = match &o.outcome {
                Outcome::Ok(r) => Some(r),
                _ => None,
            };
            (&o.op, ret)
        })
        .collect();
    if let Some((j, reason)) = spec.unproducible(&view) {
        return Found::Violation(Counterexample {
            partition: None,
            op: ops[j],
            partial: Vec::new(),
            reason,
        });
    }
    drop(view);
    match search_in(spec, history, ops, budget, true) {
        Some(found) => found,
        None => search_in(spec, history, ops, budget, false).expect("plain mode always ends"),
    }
}

/// [`search`] in interned or plain mode (see [`Memo`]); `None` when interned mode stops
/// paying, so that the partition is searched again in plain mode (the steps taken so far
/// still count against the limits).
fn search_in<S: SequentialSpec>(
    spec: &S,
    history: &History<S::Op, S::Ret>,
    ops: &[usize],
    budget: &mut Budget<'_>,
    interned: bool,
) -> Option<Found> {
    let n = ops.len();
    let (rets, mut placed) = prepare(history, ops);
    let mut memo: Memo<S::State> = Memo::new(placed.has_unknowns(), spec.init(), interned);
    let mut stack: Vec<Frame> = Vec::new();
    // The current state, as an index into `memo.states`.
    let mut state = 0u32;
    let mut best: Option<(Vec<usize>, usize, S::State)> = None;
    let mut cur = placed.next(HEAD);
    // Operations with a known return that never change the state (reads): when one fits
    // it goes first, with no alternative tried (see `SequentialSpec::read_only`).
    let local_ops: Vec<&S::Op> = ops.iter().map(|&i| &history.ops[i].op).collect();
    let read_only: Vec<bool> = (0..n)
        .map(|j| rets[j].is_some_and(|r| spec.read_only(local_ops[j], r)))
        .collect();
    // Whether the current configuration is new, so its reads are still to be tried.
    let mut fresh = true;
    // At each configuration the known operations are tried first, then (more passes over
    // the list) the unknown ones: an unknown operation is only placed when the known ones
    // cannot go on without it, which finds a linearization with far fewer steps.
    let mut pass = Pass::Known;

    while placed.known_left() > 0 {
        if let Some(why) = budget.tick(|| memo.bytes()) {
            return Some(Found::Unknown(why));
        }
        if memo.unprofitable {
            return None;
        }
        // The candidate to place now: a fitting read first, else the entry at `cur`.
        let mut candidate: Option<(usize, Next<S::State>)> = None;
        let mut backtrack = false;
        if fresh {
            fresh = false;
            candidate = placed.placeable().filter(|&j| read_only[j]).find_map(|j| {
                let next = memo.advance(spec, state, j, local_ops[j], rets[j])?;
                Some((j, next))
            });
        }
        if candidate.is_none() {
            let (j, is_ret) = placed.entry(cur);
            if is_ret {
                let next_pass = match pass {
                    Pass::Known if placed.has_unknowns() => Some(Pass::Enabling),
                    Pass::Enabling => Some(Pass::Rest),
                    _ => None,
                };
                if let Some(next_pass) = next_pass {
                    pass = next_pass;
                    cur = placed.next(HEAD);
                    continue;
                }
                backtrack = true;
                if best.as_ref().is_none_or(|(p, _, _)| stack.len() > p.len()) {
                    // `j` returned without being linearized.
                    let partial = stack.iter().map(|f| ops[f.op]).collect();
                    best = Some((partial, j, memo.states[state as usize].clone()));
                }
            } else if read_only[j]
                || rets[j].is_none() != (pass != Pass::Known)
                || (rets[j].is_none() && !placed.first_of_class(j))
            {
                // Reads were tried above; each pass tries its own kind; of interchangeable
                // unknown operations only the first unused one is tried.
                cur = placed.next(cur);
                continue;
            } else {
                match memo.advance(spec, state, j, local_ops[j], rets[j]) {
                    // An unknown operation that changes nothing here need not happen here;
                    // the enabling ones go first.
                    Some(next)
                        if rets[j].is_some()
                            || (!memo.same(&next, state)
                                && enables(spec, &mut memo, &placed, &next, &local_ops, &rets)
                                    == (pass == Pass::Enabling)) =>
                    {
                        candidate = Some((j, next))
                    }
                    _ => {
                        cur = placed.next(cur);
                        continue;
                    }
                }
            }
        }
        if let Some((j, next)) = candidate {
            let forced = read_only[j];
            placed.mark(j);
            let (known_hash, known, unknown) = placed.key();
            let h = known_hash ^ Memo::hash_of(&next);
            if let Some(index) = memo.visit(h, known, unknown, next) {
                let before = std::mem::replace(&mut state, index);
                stack.push(Frame {
                    op: j,
                    before,
                    forced,
                    pass,
                });
                placed.lift(j);
                cur = placed.next(HEAD);
                fresh = true;
                pass = Pass::Known;
                continue;
            }
            placed.unmark(j);
            if !forced {
                cur = placed.next(cur);
                continue;
            }
            // A read that fits goes first in some linearization from here, if there is
            // one; that configuration was seen, so this one fails too.
            backtrack = true;
        }
        debug_assert!(backtrack);
        loop {
            let Some(frame) = stack.pop() else {
                return Some(Found::Violation(counterexample(
                    spec, history, ops, &rets, best,
                )));
            };
            state = frame.before;
            let after = placed.undo(frame.op);
            if !frame.forced {
                cur = after;
                pass = frame.pass;
                break;
            }
        }
    }
    Some(Found::Ok(stack.into_iter().map(|f| ops[f.op]).collect()))
}

/// Each operation's known return (`None`: an unknown outcome), and nothing placed yet.
fn prepare<'h, Op: std::fmt::Debug, Ret>(
    history: &'h History<Op, Ret>,
    ops: &[usize],
) -> (Vec<Option<&'h Ret>>, Placement) {
    let rets: Vec<Option<&Ret>> = ops
        .iter()
        .map(|&i| match &history.ops[i].outcome {
            Outcome::Ok(r) => Some(r),
            _ => None,
        })
        .collect();
    let timings: Vec<Timing> = ops
        .iter()
        .zip(&rets)
        .map(|(&i, ret)| {
            let o = &history.ops[i];
            Timing {
                call: o.call,
                ret: o.ret,
                known: ret.is_some(),
                // Unknown operations that are the same operation (equal Debug forms) are
                // interchangeable once invoked: each class is used up in call order.
                class: ret.is_none().then(|| format!("{:?}", o.op)),
            }
        })
        .collect();
    (rets, Placement::new(&timings))
}

/// Whether some known-outcome operation that may be placed now is accepted after `next`
/// (see [`Pass::Enabling`]).
fn enables<S: SequentialSpec>(
    spec: &S,
    memo: &mut Memo<S::State>,
    placed: &Placement,
    next: &Next<S::State>,
    local_ops: &[&S::Op],
    rets: &[Option<&S::Ret>],
) -> bool {
    placed
        .placeable()
        .any(|k| rets[k].is_some() && memo.accepts_from(spec, next, k, local_ops[k], rets[k]))
}

/// The counterexample from the longest partial linearization and the operation that
/// returned before it could be placed after it.
fn counterexample<S: SequentialSpec>(
    spec: &S,
    history: &History<S::Op, S::Ret>,
    ops: &[usize],
    rets: &[Option<&S::Ret>],
    best: Option<(Vec<usize>, usize, S::State)>,
) -> Counterexample {
    let Some((partial, blocked, at)) = best else {
        return Counterexample {
            partition: None,
            op: ops[0],
            partial: Vec::new(),
            reason: "no operation can be placed first".to_string(),
        };
    };
    let op = &history.ops[ops[blocked]];
    let found = rets[blocked].expect("return entries are known");
    let reason = match spec.accepts(&at, &op.op, found) {
        None => {
            let expected = spec.step(&at, &op.op).1;
            spec.explain(&at, &op.op, &expected, found)
        }
        Some(_) => format!(
            "{:?} returning {found:?} fits after the partial linearization, \
             but no order of the operations concurrent with it does",
            op.op
        ),
    };
    Counterexample {
        partition: None,
        op: ops[blocked],
        partial,
        reason,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::history::Operation;
    use crate::specs::register::{RegisterOp, RegisterRet, RegisterSpec};

    /// Writes of `0..n` by clients `0..n`, invoked one after the other, that never
    /// complete.
    fn crashed_writes(n: u64) -> Vec<Operation<RegisterOp<u64>, RegisterRet<u64>>> {
        (0..n)
            .map(|v| Operation {
                client: v as usize,
                op: RegisterOp::Write(v),
                call: v,
                ret: None,
                call_ms: 0,
                ret_ms: None,
                outcome: Outcome::Unknown,
                marks: vec![],
            })
            .collect()
    }

    /// `n` writes that never complete, then a read of a value nobody wrote.
    fn unwritten(n: u64) -> History<RegisterOp<u64>, RegisterRet<u64>> {
        let mut ops = crashed_writes(n);
        ops.push(Operation {
            client: 99,
            op: RegisterOp::Read,
            call: n,
            ret: Some(n + 1),
            call_ms: 0,
            ret_ms: None,
            outcome: Outcome::Ok(RegisterRet::Value(Some(1000))),
            marks: vec![],
        });
        History { ops }
    }

    /// `n` writes that never complete, then a read of a value written only by a write
    /// invoked after the read returned (which never completes either): no order explains
    /// the read, and the search tries every subset of the first `n` writes to see it.
    fn hard(n: u64) -> History<RegisterOp<u64>, RegisterRet<u64>> {
        let mut h = unwritten(n);
        h.ops.push(Operation {
            client: 100,
            op: RegisterOp::Write(1000),
            call: n + 2,
            ret: None,
            call_ms: 0,
            ret_ms: None,
            outcome: Outcome::Unknown,
            marks: vec![],
        });
        h
    }

    /// A read of a value that no write, complete or pending, writes is a violation before
    /// any search step: 30 pending writes (2^30 subsets to search) and a step bound of 1.
    #[test]
    fn a_read_of_a_value_nobody_wrote_is_a_violation_at_once() {
        let spec = RegisterSpec::<u64>::new();
        match check_linearizability(&spec, &unwritten(30), CheckerLimits::steps(1)) {
            Linearization::Violation(c) => {
                assert_eq!((c.op, c.partial.len()), (30, 0));
                assert_eq!(
                    c.reason,
                    "read returned 1000, a value no write of the history writes (none complete, none pending)"
                );
            }
            other => panic!("expected a violation, found {:?}", other.verdict()),
        }
        // A write of it anywhere, even after the read, makes the search decide.
        assert!(matches!(
            check_linearizability(&spec, &hard(30), CheckerLimits::steps(1000)),
            Linearization::Unknown(_)
        ));
    }

    /// The bounds `check-history` uses unless told end a search of 30 pending writes at
    /// the step bound, the same way on every machine.
    #[test]
    fn the_default_history_bounds_end_a_hopeless_search_at_the_step_bound() {
        let spec = RegisterSpec::<u64>::new();
        match check_linearizability(&spec, &hard(30), CheckerLimits::for_histories()) {
            Linearization::Unknown(why) => {
                assert_eq!(why, step_limit_reason(CheckerLimits::HISTORY_MAX_STEPS))
            }
            other => panic!("expected unknown, found {:?}", other.verdict()),
        }
        assert_eq!(
            step_limit_reason(10_000_000),
            "search step limit of 10,000,000 reached"
        );
        assert_eq!(CheckerLimits::HISTORY_MAX_MEMORY, 1 << 30);
    }

    #[test]
    fn limits_give_unknown_never_ok() {
        let spec = RegisterSpec::<u64>::new();
        let h = hard(12);
        assert!(matches!(
            check_linearizability(&spec, &h, CheckerLimits::none()),
            Linearization::Violation(_)
        ));
        match check_linearizability(&spec, &h, CheckerLimits::steps(5)) {
            Linearization::Unknown(why) => assert_eq!(why, "search step limit of 5 reached"),
            other => panic!("expected unknown, got {other:?}"),
        }
        match check_linearizability(&spec, &h, CheckerLimits::time(Duration::ZERO)) {
            Linearization::Unknown(why) => assert_eq!(why, "time limit of 0 ms reached"),
            other => panic!("expected unknown, got {other:?}"),
        }
    }

    #[test]
    fn counterexample_names_op_partial_and_reason() {
        let spec = RegisterSpec::<u64>::new();
        let op = |client, op, call, ret, r| Operation {
            client,
            op,
            call,
            ret: Some(ret),
            call_ms: 0,
            ret_ms: None,
            outcome: Outcome::Ok(r),
            marks: vec![],
        };
        let h = History {
            ops: vec![
                op(0, RegisterOp::Write(1), 0, 1, RegisterRet::Written),
                op(1, RegisterOp::Write(2), 2, 3, RegisterRet::Written),
                op(0, RegisterOp::Read, 4, 5, RegisterRet::Value(Some(1))),
            ],
        };
        let Linearization::Violation(c) = check_linearizability(&spec, &h, CheckerLimits::none())
        else {
            panic!("stale read")
        };
        assert_eq!(
            (c.op, c.partial.clone(), c.partition),
            (2, vec![0, 1], None)
        );
        assert_eq!(c.reason, "read returned 1, but the register holds 2");
        let v = Linearization::Violation(c).verdict();
        assert_eq!(
            v.to_string(),
            "violation: linearizability: read returned 1, but the register holds 2"
        );
    }

    fn found_kind(f: &Found) -> &'static str {
        match f {
            Found::Ok(_) => "ok",
            Found::Violation(_) => "violation",
            Found::Unknown(_) => "unknown",
        }
    }

    #[test]
    fn interned_mode_gives_way_when_states_do_not_repeat() {
        use crate::specs::kv::{KvOp, KvRet, KvSpec, Text};
        // Eight overlapping appends of distinct pieces to one key, then a get of a value
        // no order gives: every order is a different state, so the step cache never hits.
        let key: std::sync::Arc<str> = "k".into();
        let mut ops: Vec<_> = (0..8u64)
            .map(|i| Operation {
                client: i as usize,
                op: KvOp::Append(key.clone(), Text::from(format!("<{i}>").as_str())),
                call: i,
                ret: Some(20 + i),
                call_ms: 0,
                ret_ms: None,
                outcome: Outcome::Ok(KvRet::Done),
                marks: vec![],
            })
            .collect();
        ops.push(Operation {
            client: 9,
            op: KvOp::Get(key.clone()),
            call: 30,
            ret: Some(31),
            call_ms: 0,
            ret_ms: None,
            outcome: Outcome::Ok(KvRet::Value(Text::from("nope"))),
            marks: vec![],
        });
        let h = History { ops };
        let all: Vec<usize> = (0..h.ops.len()).collect();
        let shared = Shared::new(CheckerLimits::none());
        assert!(search_in(&KvSpec, &h, &all, &mut Budget::new(&shared), true).is_none());
        let plain = search_in(&KvSpec, &h, &all, &mut Budget::new(&shared), false).unwrap();
        assert_eq!(found_kind(&plain), "violation");
        assert!(matches!(
            check_linearizability(&KvSpec, &h, CheckerLimits::none()),
            Linearization::Violation(_)
        ));
    }

    #[test]
    fn both_modes_agree_on_random_histories() {
        let spec = RegisterSpec::<u64>::new();
        let mut rng = crate::rng::SimRng::new(7);
        let mut kinds = BTreeMap::new();
        for _ in 0..400 {
            let n = 2 + rng.index(7);
            let ops = (0..n)
                .map(|c| {
                    let call = rng.below(10);
                    let ret = call + 1 + rng.below(6);
                    let (op, ret_value) = if rng.chance(0.5) {
                        let v = rng.below(3);
                        (RegisterOp::Write(v), RegisterRet::Written)
                    } else {
                        let v = rng.below(4);
                        (RegisterOp::Read, RegisterRet::Value((v < 3).then_some(v)))
                    };
                    let unknown = rng.chance(0.25);
                    Operation {
                        client: c,
                        op,
                        call: 2 * call,
                        ret: (!unknown).then_some(2 * ret + 1),
                        call_ms: 0,
                        ret_ms: None,
                        outcome: if unknown {
                            Outcome::Unknown
                        } else {
                            Outcome::Ok(ret_value)
                        },
                        marks: vec![],
                    }
                })
                .collect();
            let h = History { ops };
            let all: Vec<usize> = (0..h.ops.len()).collect();
            let shared = Shared::new(CheckerLimits::none());
            let interned = search_in(&spec, &h, &all, &mut Budget::new(&shared), true)
                .expect("small histories stay interned");
            let plain = search_in(&spec, &h, &all, &mut Budget::new(&shared), false).unwrap();
            assert_eq!(found_kind(&interned), found_kind(&plain), "{h:?}");
            *kinds.entry(found_kind(&plain)).or_insert(0) += 1;
        }
        // Both verdicts occur, so the comparison means something.
        assert!(kinds["ok"] > 50 && kinds["violation"] > 50, "{kinds:?}");
    }

    /// A search whose memo outgrows its bound ends `Unknown`, naming the bound and the
    /// flag that raises it; the same history with room enough is judged.
    #[test]
    fn the_memory_bound_gives_unknown_naming_it() {
        let spec = RegisterSpec::<u64>::new();
        let h = hard(16);
        match check_linearizability(&spec, &h, CheckerLimits::none().with_memory(64 << 10)) {
            Linearization::Unknown(why) => assert_eq!(
                why,
                "memory limit of 64 KiB for the search's memo reached (raise it with --max-memory)"
            ),
            other => panic!("expected unknown, found {:?}", other.verdict()),
        }
        let judged = check_linearizability(&spec, &h, CheckerLimits::none().with_memory(1 << 30));
        assert!(judged.verdict().is_violation());
    }

    /// The memo of a sequential history grows linearly: 50,000 operations fit in 16 MiB
    /// (whole bitsets per configuration would take 50,000² / 8 bytes, 312 MB).
    #[test]
    fn a_sequential_history_costs_linear_memory() {
        let spec = RegisterSpec::<u64>::new();
        let ops = (0..50_000u64)
            .map(|i| {
                let (op, ret) = if i % 2 == 0 {
                    (RegisterOp::Write(i), RegisterRet::Written)
                } else {
                    (RegisterOp::Read, RegisterRet::Value(Some(i - 1)))
                };
                Operation {
                    client: (i % 3) as usize,
                    op,
                    call: 2 * i,
                    ret: Some(2 * i + 1),
                    call_ms: 0,
                    ret_ms: None,
                    outcome: Outcome::Ok(ret),
                    marks: vec![],
                }
            })
            .collect();
        let h = History { ops };
        let limits = CheckerLimits::none().with_memory(16 << 20);
        match check_linearizability(&spec, &h, limits) {
            Linearization::Ok(w) => assert_eq!(w.orders[0].len(), 50_000),
            other => panic!("expected ok, found {:?}", other.verdict()),
        }
    }

    /// 200 crashed writes, then 200 reads returning their values in a shuffled order: the
    /// writes each read needs are tried before the others, so the linearization is found
    /// in one descent (trying them in call order took longer than five minutes).
    #[test]
    fn crashed_writes_that_reads_need_are_tried_first() {
        let spec = RegisterSpec::<u64>::new();
        let mut rng = crate::rng::SimRng::new(5);
        let mut values: Vec<u64> = (0..200).collect();
        for i in (1..values.len()).rev() {
            values.swap(i, rng.index(i + 1));
        }
        let mut ops = crashed_writes(200);
        for (i, &v) in values.iter().enumerate() {
            let at = 1000 + 2 * i as u64;
            ops.push(Operation {
                client: 1000 + i,
                op: RegisterOp::Read,
                call: at,
                ret: Some(at + 1),
                call_ms: 0,
                ret_ms: None,
                outcome: Outcome::Ok(RegisterRet::Value(Some(v))),
                marks: vec![],
            });
        }
        let h = History { ops };
        match check_linearizability(&spec, &h, CheckerLimits::steps(100_000)) {
            Linearization::Ok(w) => assert_eq!(w.orders[0].len(), 400),
            other => panic!("expected ok, found {:?}", other.verdict()),
        }
    }
}
