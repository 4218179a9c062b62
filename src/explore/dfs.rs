//! kvsim's depth-first search over a stateright [`Model`]: stateright's own `spawn_dfs`,
//! with its results (the same states counted, the same properties checked on the same
//! states, the same discoveries), without its costs (a concurrent set and a copy of the
//! path for every state waiting to be expanded).
//!
//! What it keeps of stateright's depth-first checker, exactly:
//! - A state is identified by its 64-bit fingerprint, stateright's (`ahash` with
//!   stateright's fixed keys), and never compared: see the module docs' hash compaction.
//! - Init states outside [`Model::within_boundary`] are dropped; the others count as
//!   generated and visited. A successor counts as generated when it is within the
//!   boundary (repeats included), and is visited (pushed) the first time its fingerprint
//!   is seen.
//! - States are popped last in, first out; a popped state's depth (1 for an init state)
//!   raises the maximum depth; its properties are checked: an `always` property that
//!   fails, or a `sometimes` one that holds, records the path to the state as the
//!   property's discovery (a later one replaces it); an `eventually` one is tracked along
//!   the path and discovered at a terminal state. A state where every property is
//!   discovered (`always` failing, `sometimes` holding, no `eventually`) ends the block
//!   unexpanded.
//! - The search stops when a failure is discovered, checked after each block of
//!   [`BLOCK`] popped states (as `finish_when(HasDiscoveries::AnyFailures)`), or when no
//!   state is left.
//!
//! One thread pops states in exactly stateright's order (its single-threaded order), so
//! counts, depth and discoveries are stateright's. Several threads share work as
//! stateright's do (a thread that runs dry takes states from another's stack): the set of
//! visited states, and so the unique and generated counts of a complete search and its
//! verdict, are the same; the depth and which path a discovery records depend on the
//! interleaving of threads.
//!
//! Paths are not copied per state: a thread keeps the action indices of the path to the
//! state it popped last (the trail). Its stack holds, deepest last, the unexpanded
//! successors of that path's states (depth never decreases from bottom to top), so a
//! popped state's path is the trail cut to its parent, plus its own index. Work handed
//! to another thread is the bottom states of one depth, with the indices of their
//! parent's path. A discovery's path of states is rebuilt from its indices, as
//! stateright rebuilds it.
//!
//! With sleep sets ([`Successors::reduces`]; `commute` says which steps commute), a state
//! is expanded without the steps of its sleep set, and each successor gets the steps,
//! among those asleep here and those taken before its own (popped first), that commute
//! with its own step. The visited set keeps, beside each fingerprint, the agents asleep
//! when the state was first reached (in the state's canonical client order, so that
//! permuted states compare client for client); reached again with a sleep set that does
//! not include them, the state is explored again for the agents now awake, and the kept
//! set shrinks to the intersection (Godefroid's sleep sets with state caching): every
//! reachable state is visited, so the same properties are checked on the same states.
//! Counts: a state's generated successors exclude the steps asleep; [`Counts::slept`]
//! counts those, less the ones taken when a state is explored again, so that a complete
//! search without the reduction generates `states + slept`. Which path a discovery
//! records and the maximum depth may differ from a search without it.

use super::commute::{Allowance, Effect, MAX_CLIENTS};
use super::guard::Tickets;
use crossbeam_utils::CachePadded;
use smallvec::SmallVec;
use stateright::{Expectation, Model, Property};
use std::hash::Hash;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

/// States popped between two checks for a failure (and for work to share): stateright's
/// block.
pub(crate) const BLOCK: usize = 1500;

/// States popped between two looks for a thread that waits for work, within a block: a
/// thread that ran dry waited up to a whole block for its share (fifo/fixed 2 × 2, all
/// workloads, is 21,283 states: 14 blocks). Looking every 32 states, that search on two
/// threads took 0.87× the wall time (whole process, paired runs). A look is one relaxed
/// load; the single-thread order does not depend on it.
const SHARE_EVERY: usize = 32;

/// A model as the search steps it: a successor made from its parent itself, not a copy (a
/// state's last successor takes the state, which is expanded once: the profile,
/// spinlock/fixed 4 × 1, showed copying a world and dropping the parent at ~13 % of the
/// search, and a state has 1.5 successors on average), and its boundary asked with the
/// thread's own count of generated states ([`Successors::admit`]).
pub(crate) trait Successors: Model {
    /// The state `action` leads to from `state`, as [`Model::next_state`] gives it from
    /// a reference.
    fn next_state_from(&self, state: Self::State, action: Self::Action) -> Option<Self::State> {
        self.next_state(&state, action)
    }

    /// A thread's tickets for [`Successors::admit`] (none: the boundary takes no count).
    fn tickets(&self) -> Tickets {
        Tickets::none()
    }

    /// [`Model::within_boundary`] with the thread's own `tickets` (a bound on generated
    /// states counts them in runs, not with a shared write per state).
    fn admit(&self, state: &Self::State, _tickets: &mut Tickets) -> bool {
        self.within_boundary(state)
    }

    /// Whether the search reduces with sleep sets ([`Successors::step`] tells effects);
    /// without, none of the methods below is called.
    fn reduces(&self) -> bool {
        false
    }

    /// [`Model::next_state`], with the step's effect (`None`: it commutes with nothing).
    fn step(&self, state: &Self::State, action: Self::Action) -> Stepped<Self::State> {
        (self.next_state(state, action), None)
    }

    /// [`Successors::next_state_from`], with the step's effect.
    fn step_from(&self, state: Self::State, action: Self::Action) -> Stepped<Self::State> {
        (self.next_state_from(state, action), None)
    }

    /// The client an action is a step of (`None`: an action that never sleeps).
    fn agent(&self, _action: &Self::Action) -> Option<usize> {
        None
    }

    /// What `state` allows pairs of steps (`None`: nothing commutes there).
    fn context(&self, _state: &Self::State) -> Option<Allowance> {
        None
    }

    /// Whether the steps of effects `a` and `b` commute at a state that allows `at`.
    fn commute(&self, _at: &Allowance, _a: &Effect, _b: &Effect) -> bool {
        false
    }

    /// The fingerprint of `state` and each agent's position in it (see
    /// `canon::fingerprint_with_positions`).
    fn fingerprint_with_positions(&self, state: &Self::State) -> (u64, Positions)
    where
        Self::State: Hash,
    {
        (fingerprint(state), IDENTITY)
    }
}

/// A successor (if any) and the effect of the step to it (see [`Successors::step`]).
pub(crate) type Stepped<S> = (Option<S>, Option<Effect>);

/// Each agent's position in a state's canonical order (see
/// [`Successors::fingerprint_with_positions`]).
pub(crate) type Positions = [u8; MAX_CLIENTS];

/// Every agent in its own position.
const IDENTITY: Positions = {
    let mut p = [0u8; MAX_CLIENTS];
    let mut i = 0;
    while i < MAX_CLIENTS {
        p[i] = i as u8;
        i += 1;
    }
    p
};

/// A sleep set: the effects of the steps not to take from a state (all of an agent's
/// steps or none), and their agents as bits.
#[derive(Clone, Debug, Default)]
struct Sleep {
    effects: SmallVec<[Effect; 2]>,
    agents: u8,
}

impl Sleep {
    fn add(&mut self, effect: Effect) {
        self.agents |= 1 << effect.client();
        self.effects.push(effect);
    }

    /// The agents in canonical positions `positions`.
    fn canonical(&self, positions: &Positions) -> u8 {
        map_agents(self.agents, positions)
    }
}

/// The agents of bits `agents` moved to their positions `positions`.
fn map_agents(mut agents: u8, positions: &Positions) -> u8 {
    let mut out = 0;
    while agents != 0 {
        out |= 1 << positions[agents.trailing_zeros() as usize];
        agents &= agents - 1;
    }
    out
}

/// The agents whose positions (in `positions`) are the bits of `canonical`.
fn agents_at(canonical: u8, positions: &Positions) -> u8 {
    (0..MAX_CLIENTS)
        .filter(|&c| canonical & (1 << positions[c]) != 0)
        .fold(0, |m, c| m | 1 << c)
}

/// A step taken from a state under sleep sets.
struct Taken {
    agent: Option<usize>,
    effect: Option<Effect>,
    /// Its successor is within the boundary (and pushed, for now).
    admitted: bool,
}

/// What the visited set said of a state and the sleep set it was reached with.
#[derive(Debug, PartialEq, Eq)]
enum Visit {
    /// Not visited before.
    New,
    /// Visited with a sleep set this one includes: nothing more to explore.
    Covered,
    /// Visited with a sleep set of these (canonical) agents, some of them awake now: the
    /// state is explored again for them (Godefroid's sleep sets with state caching: the
    /// kept set becomes the intersection).
    Uncovered(u8),
}

/// stateright's fingerprint keys (`stateright::stable`): the same fingerprints, so the
/// same states are taken for one.
const KEYS: [u64; 4] = [123_456_789_987_654_321, 98_765_432_123_456_789, 0, 0];

/// Most properties a search tracks (one bit each).
const MAX_PROPERTIES: usize = 64;

/// Visited shards of a search on several threads (by the fingerprint's low bits; a
/// [`Set`] places it by its high bits).
const SHARDS: usize = 64;

/// A state's fingerprint: stateright's.
pub(crate) fn fingerprint<T: Hash>(value: &T) -> u64 {
    let [a, b, c, d] = KEYS;
    ahash::RandomState::with_seeds(a, b, c, d).hash_one(value)
}

/// The slots of a [`Set`]: shared with the threads that touch them (see [`touch`]).
type Slots = Arc<[AtomicU64]>;

/// A set of fingerprints: open addressing with linear probing, a fingerprint placed by its
/// high bits (a fingerprint is a hash already), so that a lookup reads one cache line
/// where a general table reads a control group and then a slot. Its slots are atomics
/// only so that other threads may [`touch`] them without its lock (a relaxed access is a
/// plain one).
struct Set {
    /// The fingerprints, 0 for an empty slot; a power of two long (or empty).
    slots: Slots,
    /// Fingerprints held (the zero one included).
    len: usize,
    /// Whether the zero fingerprint is held (it cannot be told from an empty slot).
    zero: bool,
    /// Under sleep sets, per slot the (canonical) agents asleep when its state was
    /// explored; empty otherwise.
    asleep: Vec<u8>,
    /// The zero fingerprint's.
    zero_asleep: u8,
    /// Whether the set keeps sleep sets.
    keeps_sleep: bool,
}

impl Default for Set {
    fn default() -> Set {
        Set {
            slots: Arc::from(Vec::new()),
            len: 0,
            zero: false,
            asleep: Vec::new(),
            zero_asleep: 0,
            keeps_sleep: false,
        }
    }
}

impl Set {
    /// An empty set that keeps a sleep set per fingerprint ([`Set::visit`]).
    fn keeping_sleep() -> Set {
        Set {
            keeps_sleep: true,
            ..Set::default()
        }
    }

    /// Adds `fp`; `false` when it was there.
    fn insert(&mut self, fp: u64) -> bool {
        self.visit(fp, 0) == Visit::New
    }

    /// Adds `fp`, reached with the (canonical) agents `asleep` asleep; when it was there,
    /// whether the sleep set it was explored with covers this one (see [`Visit`]).
    fn visit(&mut self, fp: u64, asleep: u8) -> Visit {
        if fp == 0 {
            if !self.zero {
                self.zero = true;
                self.zero_asleep = asleep;
                self.len += 1;
                return Visit::New;
            }
            return cover(&mut self.zero_asleep, asleep, self.keeps_sleep);
        }
        // At most three quarters full.
        if (self.len + 1) * 4 > self.slots.len() * 3 {
            self.grow();
        }
        match Self::place(&self.slots, fp) {
            Ok(i) => {
                self.len += 1;
                if self.keeps_sleep {
                    self.asleep[i] = asleep;
                }
                Visit::New
            }
            Err(_) if !self.keeps_sleep => Visit::Covered,
            Err(i) => cover(&mut self.asleep[i], asleep, true),
        }
    }

    /// Puts non-zero `fp` in `slots` (not full): `Ok` with its slot, `Err` with the slot
    /// where it was.
    fn place(slots: &[AtomicU64], fp: u64) -> Result<usize, usize> {
        let mask = slots.len() - 1;
        let mut i = (fp >> (64 - slots.len().trailing_zeros())) as usize;
        loop {
            match slots[i].load(Ordering::Relaxed) {
                0 => {
                    slots[i].store(fp, Ordering::Relaxed);
                    return Ok(i);
                }
                x if x == fp => return Err(i),
                _ => i = (i + 1) & mask,
            }
        }
    }

    fn grow(&mut self) {
        let size = (self.slots.len() * 2).max(1 << 10);
        let slots: Slots = (0..size).map(|_| AtomicU64::new(0)).collect();
        let mut asleep = if self.keeps_sleep {
            vec![0u8; size]
        } else {
            Vec::new()
        };
        for (k, fp) in self.slots.iter().enumerate() {
            let fp = fp.load(Ordering::Relaxed);
            if fp != 0 {
                let i = Self::place(&slots, fp).unwrap_or_else(|i| i);
                if self.keeps_sleep {
                    asleep[i] = self.asleep[k];
                }
            }
        }
        self.slots = slots;
        self.asleep = asleep;
    }

    fn len(&self) -> usize {
        self.len
    }
}

/// A state visited with the agents `kept` asleep, reached again with `asleep`: covered
/// when `kept` is within `asleep`; else the kept set shrinks to the intersection (what
/// the two explorations together leave out).
fn cover(kept: &mut u8, asleep: u8, keeps_sleep: bool) -> Visit {
    let awake = *kept & !asleep;
    if !keeps_sleep || awake == 0 {
        return Visit::Covered;
    }
    let old = *kept;
    *kept &= asleep;
    Visit::Uncovered(old)
}

/// Loads the slot of `slots` where a lookup of `fp` begins, and throws it away: touching
/// the slots of a state's successors one after the other, before inserting them, lets
/// their cache misses on a table far larger than the caches overlap (a plain load: safe
/// code has no prefetch instruction).
fn touch(slots: &[AtomicU64], fp: u64) {
    if let Some(bits) = slots.len().checked_ilog2().filter(|&b| b > 0) {
        std::hint::black_box(slots[(fp >> (64 - bits)) as usize].load(Ordering::Relaxed));
    }
}

/// The figures of a search so far (for progress lines) or at its end.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Counts {
    /// States generated within the boundary, repeats included (stateright's
    /// `state_count`).
    pub(crate) states: usize,
    /// Distinct fingerprints (stateright's `unique_state_count`).
    pub(crate) unique: usize,
    /// The deepest popped state, in states (an init state is 1; stateright's `max_depth`).
    pub(crate) max_depth: usize,
    /// Under sleep sets, the steps left untaken (asleep at a state's first exploration and
    /// not taken at a later one): with [`Counts::states`], what a search without the
    /// reduction generates, when it completes.
    pub(crate) slept: usize,
}

/// The end of a search: its figures and, per property (in the model's order), the action
/// indices of the path of its discovery (the first is the init state's index).
pub(crate) struct Searched {
    pub(crate) counts: Counts,
    discoveries: Vec<(&'static str, Option<Vec<usize>>)>,
}

impl Searched {
    /// The action indices of the discovery of property `name`, if there is one.
    pub(crate) fn discovery(&self, name: &str) -> Option<&[usize]> {
        self.discoveries
            .iter()
            .find(|(n, _)| *n == name)
            .and_then(|(_, d)| d.as_deref())
    }
}

/// The path of states and actions that action indices `indices` name (the first: an init
/// state's), as stateright rebuilds a discovery's (`Path::into_vec`).
pub(crate) fn path<M: Model>(model: &M, indices: &[usize]) -> Vec<(M::State, Option<M::Action>)>
where
    M::State: Clone,
    M::Action: Clone,
{
    let (&first, rest) = indices.split_first().expect("a path has an init state");
    let mut last = model.init_states().swap_remove(first);
    let mut out = Vec::with_capacity(indices.len());
    let mut actions = Vec::new();
    for &i in rest {
        actions.clear();
        model.actions(&last, &mut actions);
        let action = actions.swap_remove(i);
        let next = model.next_state(&last, action.clone());
        out.push((last.clone(), Some(action)));
        if let Some(next) = next {
            last = next;
        }
    }
    out.push((last, None));
    out
}

/// A state waiting on a stack: its depth (init states 1), its index among its parent's
/// actions (or among the init states), and the `eventually` properties not yet seen to
/// hold on its path.
struct Entry<S> {
    state: S,
    depth: usize,
    index: usize,
    ebits: u64,
    /// Under sleep sets, what not to take from the state, when anything (out of line: a
    /// search without them pays one word per entry).
    asleep: Option<Box<Asleep>>,
}

/// What a state's expansion leaves out under sleep sets.
#[derive(Debug, Default)]
struct Asleep {
    /// The steps not to take.
    sleep: Sleep,
    /// For a state visited before, explored again: the agents whose steps alone are taken
    /// (a bit each; 0 for a state's first exploration, which takes every step not asleep).
    only: u8,
}

/// Work for a thread: states of one depth and the action indices of their parent's path.
struct Batch<S> {
    prefix: Vec<usize>,
    entries: Vec<Entry<S>>,
}

/// Searches `model` depth-first on `threads` threads, calling `progress` with the figures
/// so far about once a second (on one thread).
pub(crate) fn search<M>(
    model: &M,
    threads: usize,
    progress: Option<&(dyn Fn(Counts) + Sync)>,
) -> Searched
where
    M: Successors + Sync,
    M::State: Hash + Send,
{
    let properties = model.properties();
    assert!(
        properties.len() <= MAX_PROPERTIES,
        "a search tracks at most {MAX_PROPERTIES} properties, found {}",
        properties.len()
    );
    let ebits = properties
        .iter()
        .enumerate()
        .filter(|(_, p)| p.expectation == Expectation::Eventually)
        .fold(0u64, |bits, (i, _)| bits | 1 << i);
    let init: Vec<M::State> = model
        .init_states()
        .into_iter()
        .filter(|s| model.within_boundary(s))
        .collect();
    let fingerprints: Vec<u64> = init.iter().map(fingerprint).collect();
    let entries: Vec<Entry<M::State>> = init
        .into_iter()
        .enumerate()
        .map(|(index, state)| Entry {
            state,
            depth: 1,
            index,
            ebits,
            asleep: None,
        })
        .collect();
    let generated = entries.len();
    let reduces = model.reduces();
    let new_set = || {
        if reduces {
            Set::keeping_sleep()
        } else {
            Set::default()
        }
    };
    if threads <= 1 {
        let mut board = Solo {
            visited: new_set(),
            found: Found::new(&properties),
        };
        for fp in fingerprints {
            board.visited.insert(fp);
        }
        let mut worker = Worker::new(model, &properties, board, generated, progress);
        worker.stack = entries;
        worker.run(None);
        let unique = worker.board.visited.len();
        return worker.finish(unique, |b| b.found);
    }
    let shared = Shared {
        visited: (0..SHARDS)
            .map(|_| CachePadded::new(Mutex::new(new_set())))
            .collect(),
        found: Mutex::new(vec![None; properties.len()]),
        discovered: std::sync::atomic::AtomicU64::new(0),
        states: AtomicUsize::new(0),
        max_depth: AtomicUsize::new(0),
        market: Market::new(threads),
    };
    for fp in fingerprints {
        shared.insert(fp);
    }
    let mut counts = Counts::default();
    let mut entries = Some(entries);
    std::thread::scope(|scope| {
        let handles: Vec<_> = (0..threads)
            .map(|t| {
                let shared = &shared;
                let properties = &properties;
                let mut entries = entries.take();
                scope.spawn(move || {
                    let _close = CloseOnPanic(&shared.market);
                    let board = Member {
                        shared,
                        published: Counts::default(),
                        slots: vec![Arc::from(Vec::new()); SHARDS],
                    };
                    let first = if t == 0 { generated } else { 0 };
                    let mut worker =
                        Worker::new(model, properties, board, first, progress.filter(|_| t == 0));
                    if let Some(entries) = entries.take() {
                        worker.stack = entries;
                    }
                    worker.run(Some(&shared.market));
                    (worker.states, worker.max_depth, worker.slept)
                })
            })
            .collect();
        for h in handles {
            let (states, depth, slept) = h.join().unwrap_or_else(|e| std::panic::resume_unwind(e));
            counts.states += states;
            counts.max_depth = counts.max_depth.max(depth);
            counts.slept = counts.slept.wrapping_add(slept);
        }
    });
    counts.unique = shared.unique();
    let paths = shared.found.into_inner().unwrap_or_else(|e| e.into_inner());
    Searched {
        counts,
        discoveries: properties.iter().map(|p| p.name).zip(paths).collect(),
    }
}

/// The discoveries of a search on one thread.
struct Found {
    /// Per property, the action indices of its discovery's path.
    paths: Vec<Option<Vec<usize>>>,
    /// A bit per discovered property.
    bits: u64,
}

impl Found {
    fn new<M: Model>(properties: &[Property<M>]) -> Found {
        Found {
            paths: vec![None; properties.len()],
            bits: 0,
        }
    }

    fn record(&mut self, property: usize, path: &[usize]) {
        let slot = self.paths[property].get_or_insert_with(Vec::new);
        slot.clear();
        slot.extend_from_slice(path);
        self.bits |= 1 << property;
    }
}

/// The visited set and the discoveries, as a thread sees them.
trait Board {
    /// Adds a fingerprint; `false` when it was there.
    fn insert(&mut self, fp: u64) -> bool;
    /// Adds a fingerprint reached with sleep set `asleep` ([`Set::visit`]).
    fn visit(&mut self, fp: u64, asleep: u8) -> Visit;
    /// Loads what inserting `fp` will read (see [`touch`]).
    fn touch(&self, fp: u64);
    /// Records a discovery of `property` at the path `path`.
    fn record(&mut self, property: usize, path: &[usize]);
    /// A bit per discovered property.
    fn discovered(&self) -> u64;
    /// Makes the thread's figures so far visible to the others.
    fn publish(&mut self, mine: Counts);
    /// The figures of the whole search so far (the thread's own, `mine`, published).
    fn totals(&self, mine: Counts) -> Counts;
}

/// A search on one thread: plain collections, no synchronization.
struct Solo {
    visited: Set,
    found: Found,
}

impl Board for Solo {
    fn insert(&mut self, fp: u64) -> bool {
        self.visited.insert(fp)
    }

    fn visit(&mut self, fp: u64, asleep: u8) -> Visit {
        self.visited.visit(fp, asleep)
    }

    fn touch(&self, fp: u64) {
        touch(&self.visited.slots, fp);
    }

    fn record(&mut self, property: usize, path: &[usize]) {
        self.found.record(property, path);
    }

    fn discovered(&self) -> u64 {
        self.found.bits
    }

    fn publish(&mut self, _: Counts) {}

    fn totals(&self, mine: Counts) -> Counts {
        Counts {
            unique: self.visited.len(),
            ..mine
        }
    }
}

/// What the threads of one search share.
struct Shared<S> {
    /// Each shard on cache lines of its own: threads locking neighbouring shards do not
    /// take each other's line.
    visited: Vec<CachePadded<Mutex<Set>>>,
    found: Mutex<Vec<Option<Vec<usize>>>>,
    discovered: std::sync::atomic::AtomicU64,
    states: AtomicUsize,
    max_depth: AtomicUsize,
    market: Market<S>,
}

impl<S> Shared<S> {
    fn shard(&self, fp: u64) -> MutexGuard<'_, Set> {
        lock(&self.visited[shard_of(fp)])
    }

    fn insert(&self, fp: u64) -> bool {
        self.shard(fp).insert(fp)
    }

    fn unique(&self) -> usize {
        self.visited.iter().map(|s| lock(s).len()).sum()
    }
}

/// The shard of [`Shared::visited`] that holds `fp`.
fn shard_of(fp: u64) -> usize {
    fp as usize % SHARDS
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// One thread of a search on several.
struct Member<'a, S> {
    shared: &'a Shared<S>,
    /// The thread's figures as last published.
    published: Counts,
    /// Each shard's slots as of this thread's last insert there (to touch).
    slots: Vec<Slots>,
}

impl<S> Board for Member<'_, S> {
    fn insert(&mut self, fp: u64) -> bool {
        self.visit(fp, 0) == Visit::New
    }

    fn visit(&mut self, fp: u64, asleep: u8) -> Visit {
        let k = shard_of(fp);
        let mut shard = self.shared.shard(fp);
        let visit = shard.visit(fp, asleep);
        if !Arc::ptr_eq(&self.slots[k], &shard.slots) {
            self.slots[k] = Arc::clone(&shard.slots);
        }
        visit
    }

    /// Touches the shard's slots as this thread last saw them, without its lock (after
    /// the shard grew, old slots: a wasted load until the next insert there).
    fn touch(&self, fp: u64) {
        touch(&self.slots[shard_of(fp)], fp);
    }

    fn record(&mut self, property: usize, path: &[usize]) {
        let mut found = lock(&self.shared.found);
        let slot = found[property].get_or_insert_with(Vec::new);
        slot.clear();
        slot.extend_from_slice(path);
        self.shared
            .discovered
            .fetch_or(1 << property, Ordering::Relaxed);
    }

    fn discovered(&self) -> u64 {
        self.shared.discovered.load(Ordering::Relaxed)
    }

    fn publish(&mut self, mine: Counts) {
        let s = &self.shared;
        s.states
            .fetch_add(mine.states - self.published.states, Ordering::Relaxed);
        s.max_depth.fetch_max(mine.max_depth, Ordering::Relaxed);
        self.published = mine;
    }

    fn totals(&self, _: Counts) -> Counts {
        let s = &self.shared;
        Counts {
            states: s.states.load(Ordering::Relaxed),
            unique: s.unique(),
            max_depth: s.max_depth.load(Ordering::Relaxed),
            slept: 0,
        }
    }
}

/// Where threads that ran dry wait for work, and others hand it over.
struct Market<S> {
    inner: Mutex<Stalls<S>>,
    ready: Condvar,
    /// Threads waiting for work (read without the lock, to decide whether to share).
    hungry: AtomicUsize,
    /// Set when the search is over (a failure found, or no work left anywhere).
    closed: AtomicBool,
}

struct Stalls<S> {
    batches: Vec<Batch<S>>,
    idle: usize,
    threads: usize,
}

impl<S> Market<S> {
    fn new(threads: usize) -> Market<S> {
        Market {
            inner: Mutex::new(Stalls {
                batches: Vec::new(),
                idle: 0,
                threads,
            }),
            ready: Condvar::new(),
            hungry: AtomicUsize::new(0),
            closed: AtomicBool::new(false),
        }
    }

    /// Work for a thread that ran dry: `None` when the search is over (every thread
    /// dry, or closed).
    fn take(&self) -> Option<Batch<S>> {
        let mut m = lock(&self.inner);
        loop {
            if self.closed.load(Ordering::Relaxed) {
                return None;
            }
            if let Some(batch) = m.batches.pop() {
                return Some(batch);
            }
            m.idle += 1;
            if m.idle == m.threads {
                drop(m);
                self.close();
                return None;
            }
            self.hungry.store(m.idle, Ordering::Relaxed);
            m = self.ready.wait(m).unwrap_or_else(|e| e.into_inner());
            m.idle -= 1;
            self.hungry.store(m.idle, Ordering::Relaxed);
        }
    }

    /// Whether another thread waits for more work than is on offer.
    fn wants(&self, m: &Stalls<S>) -> bool {
        m.idle > m.batches.len()
    }

    fn close(&self) {
        let _m = lock(&self.inner);
        self.closed.store(true, Ordering::Relaxed);
        self.ready.notify_all();
    }
}

/// Closes the market when its thread panics, so the others stop waiting for it.
struct CloseOnPanic<'a, S>(&'a Market<S>);

impl<S> Drop for CloseOnPanic<'_, S> {
    fn drop(&mut self) {
        if std::thread::panicking() {
            self.0.close();
        }
    }
}

/// One thread's search: its stack, its trail, its figures.
struct Worker<'m, M: Successors, B> {
    model: &'m M,
    properties: &'m [Property<M>],
    /// Bits of the properties whose discovery is a failure.
    failures: u64,
    board: B,
    stack: Vec<Entry<M::State>>,
    /// The action indices of the path to the state popped last.
    trail: Vec<usize>,
    actions: Vec<M::Action>,
    /// The fingerprints of the successors being pushed.
    fps: Vec<u64>,
    /// The thread's tickets of the state bound ([`Successors::admit`]).
    tickets: Tickets,
    /// Under sleep sets, the actions of the state being expanded that are taken: each
    /// with its index among the state's actions and its agent.
    kept: Vec<(usize, Option<usize>, M::Action)>,
    /// Under sleep sets, the steps taken from the state being expanded.
    taken: Vec<Taken>,
    /// Under sleep sets, each pushed successor's positions (see [`Successors::fingerprint_with_positions`]).
    positions: Vec<Positions>,
    /// Steps left asleep less those taken again (a wrapping count: see [`Counts::slept`]).
    slept: usize,
    states: usize,
    max_depth: usize,
    progress: Option<&'m (dyn Fn(Counts) + Sync)>,
    last_progress: Instant,
}

impl<'m, M, B> Worker<'m, M, B>
where
    M: Successors,
    M::State: Hash,
    B: Board,
{
    fn new(
        model: &'m M,
        properties: &'m [Property<M>],
        board: B,
        states: usize,
        progress: Option<&'m (dyn Fn(Counts) + Sync)>,
    ) -> Self {
        let failures = properties
            .iter()
            .enumerate()
            .filter(|(_, p)| p.expectation.discovery_is_failure())
            .fold(0u64, |bits, (i, _)| bits | 1 << i);
        Worker {
            model,
            properties,
            failures,
            board,
            stack: Vec::new(),
            trail: Vec::new(),
            actions: Vec::new(),
            fps: Vec::new(),
            tickets: model.tickets(),
            kept: Vec::new(),
            taken: Vec::new(),
            positions: Vec::new(),
            slept: 0,
            states,
            max_depth: 0,
            progress,
            last_progress: Instant::now(),
        }
    }

    fn counts(&self) -> Counts {
        Counts {
            states: self.states,
            unique: 0,
            max_depth: self.max_depth,
            slept: self.slept,
        }
    }

    /// Blocks until a failure is discovered or no state is left (here, and with a
    /// market, anywhere).
    fn run(&mut self, market: Option<&Market<M::State>>) {
        loop {
            if self.stack.is_empty() {
                let Some(batch) = market.and_then(Market::take) else {
                    return;
                };
                self.trail = batch.prefix;
                self.stack = batch.entries;
            }
            self.block(market);
            if self.board.discovered() & self.failures != 0 {
                if let Some(market) = market {
                    market.close();
                }
                return;
            }
            if let Some(market) = market {
                if market.closed.load(Ordering::Relaxed) {
                    return;
                }
                self.share(market);
            }
            if self.progress.is_some() || market.is_some() {
                self.report();
            }
        }
    }

    /// Publishes the figures, and prints the progress line when one is due.
    fn report(&mut self) {
        self.board.publish(self.counts());
        if let Some(progress) = self.progress {
            if self.last_progress.elapsed() >= Duration::from_secs(1) {
                self.last_progress = Instant::now();
                progress(self.board.totals(self.counts()));
            }
        }
    }

    /// Hands the bottom states of the stack's lowest depth to a thread that waits.
    fn share(&mut self, market: &Market<M::State>) {
        if market.hungry.load(Ordering::Relaxed) == 0 || self.stack.len() < 2 {
            return;
        }
        let mut m = lock(&market.inner);
        if !market.wants(&m) {
            return;
        }
        let depth = self.stack[0].depth;
        let same = self.stack.iter().take_while(|e| e.depth == depth).count();
        // Half of the lowest depth's states, or the one there when deeper ones remain.
        let give = if same >= 2 { same / 2 } else { 1 };
        let entries: Vec<_> = self.stack.drain(..give).collect();
        m.batches.push(Batch {
            prefix: self.trail[..depth - 1].to_vec(),
            entries,
        });
        market.ready.notify_one();
    }

    /// Pops up to [`BLOCK`] states, checks their properties and pushes their new
    /// successors; with a market, hands work to a thread that waits every
    /// [`SHARE_EVERY`] states.
    fn block(&mut self, market: Option<&Market<M::State>>) {
        for popped in 0..BLOCK {
            if popped % SHARE_EVERY == SHARE_EVERY - 1 {
                if let Some(market) = market {
                    self.share(market);
                }
            }
            let Some(Entry {
                state,
                depth,
                index,
                mut ebits,
                asleep,
            }) = self.stack.pop()
            else {
                return;
            };
            let Asleep { sleep, only } = asleep.map(|a| *a).unwrap_or_default();
            self.trail.truncate(depth - 1);
            self.trail.push(index);
            if only != 0 {
                // A state explored again for steps it left asleep: its properties were
                // checked (or will be) at its first exploration.
                self.expand_reduced(state, depth, ebits, sleep, only);
                continue;
            }
            self.max_depth = self.max_depth.max(depth);
            let discovered = self.board.discovered();
            let mut awaiting = false;
            for (i, property) in self.properties.iter().enumerate() {
                let bit = 1u64 << i;
                if discovered & bit != 0
                    && property.expectation == Expectation::Eventually
                    && ebits & bit == 0
                {
                    continue;
                }
                let holds = (property.condition)(self.model, &state);
                match property.expectation {
                    Expectation::Always if !holds => self.board.record(i, &self.trail),
                    Expectation::Sometimes if holds => self.board.record(i, &self.trail),
                    Expectation::Always | Expectation::Sometimes => awaiting = true,
                    Expectation::Eventually => {
                        awaiting = true;
                        if holds {
                            ebits &= !bit;
                        }
                    }
                }
            }
            if !awaiting {
                return;
            }
            if self.model.reduces() {
                self.expand_reduced(state, depth, ebits, sleep, 0);
            } else {
                self.expand(state, depth, ebits);
            }
        }
    }

    /// [`Worker::expand`] under sleep sets: the steps of `sleep` are not taken (with
    /// `only`, the steps of those agents alone are); each successor is reached with the
    /// steps that commute with its own among those asleep here and those taken before it
    /// (the ones popped first: later in the list), and is explored again when it was
    /// visited with a sleep set that does not cover its new one ([`Visit::Uncovered`]).
    fn expand_reduced(
        &mut self,
        state: M::State,
        depth: usize,
        ebits: u64,
        sleep: Sleep,
        only: u8,
    ) {
        let at = self.model.context(&state);
        let mut actions = std::mem::take(&mut self.actions);
        self.model.actions(&state, &mut actions);
        // The actions taken, by index; those left asleep are counted.
        let mut kept = std::mem::take(&mut self.kept);
        let mut asleep_here = 0;
        for (index, action) in actions.drain(..).enumerate() {
            let agent = self.model.agent(&action).filter(|&c| c < MAX_CLIENTS);
            let take = match agent {
                Some(c) if only != 0 => only & (1 << c) != 0,
                Some(c) => sleep.agents & (1 << c) == 0,
                None => only == 0,
            };
            if take {
                kept.push((index, agent, action));
            } else if only == 0 {
                asleep_here += 1;
            }
        }
        self.actions = actions;
        self.slept = if only == 0 {
            self.slept.wrapping_add(asleep_here)
        } else {
            // Asleep at the state's first exploration, taken now.
            self.slept.wrapping_sub(kept.len())
        };
        let base = self.stack.len();
        self.fps.clear();
        self.positions.clear();
        let mut taken = std::mem::take(&mut self.taken);
        taken.clear();
        // Terminal: no step enabled (none asleep either) and no successor.
        let mut terminal = only == 0 && asleep_here == 0;
        let n = kept.len();
        let mut state = Some(state);
        for (k, (index, agent, action)) in kept.drain(..).enumerate() {
            // The last action's successor takes the state itself ([`Successors`]).
            let (next, effect) = if k + 1 == n {
                let state = state.take().expect("the state until its last step");
                self.model.step_from(state, action)
            } else {
                let state = state.as_ref().expect("the state until its last step");
                self.model.step(state, action)
            };
            let admitted = match next {
                Some(next) if self.model.admit(&next, &mut self.tickets) => {
                    self.states += 1;
                    let (fp, positions) = self.model.fingerprint_with_positions(&next);
                    self.fps.push(fp);
                    self.positions.push(positions);
                    self.stack.push(Entry {
                        state: next,
                        depth: depth + 1,
                        index,
                        ebits,
                        asleep: None,
                    });
                    true
                }
                _ => false,
            };
            terminal &= !admitted;
            taken.push(Taken {
                agent,
                effect,
                admitted,
            });
        }
        self.kept = kept;
        // Each pushed successor's sleep set: of the agents asleep here and of those whose
        // steps were all taken before its own (popped first: later in `taken`), the
        // agents all of whose steps commute with its own (an agent sleeps whole or not).
        // A sleep set holds each agent's steps together, as `taken` does.
        if let Some(at) = &at {
            let mut p = 0;
            for k in 0..taken.len() {
                if !taken[k].admitted {
                    continue;
                }
                let entry = base + p;
                p += 1;
                let Some(effect) = taken[k].effect else {
                    continue;
                };
                let mut child = Sleep::default();
                let inherited = &sleep.effects;
                let mut i = 0;
                while i < inherited.len() {
                    let agent = inherited[i].client();
                    let mut end = i + 1;
                    while end < inherited.len() && inherited[end].client() == agent {
                        end += 1;
                    }
                    let group = &inherited[i..end];
                    if group.iter().all(|e| self.model.commute(at, &effect, e)) {
                        group.iter().for_each(|e| child.add(*e));
                    }
                    i = end;
                }
                let mut j = k + 1;
                while j < taken.len() {
                    let agent = taken[j].agent;
                    let mut end = j + 1;
                    while end < taken.len() && taken[end].agent == agent {
                        end += 1;
                    }
                    // Within the boundary (its subtree is explored) and commuting.
                    let group = &taken[j..end];
                    let sleeps = agent.is_some_and(|c| c != effect.client())
                        && group.iter().all(|t| {
                            t.admitted
                                && t.effect
                                    .as_ref()
                                    .is_some_and(|e| self.model.commute(at, &effect, e))
                        });
                    if sleeps {
                        for t in group {
                            child.add(t.effect.expect("a step that commutes has an effect"));
                        }
                    }
                    j = end;
                }
                if child.agents != 0 {
                    self.stack[entry].asleep = Some(Box::new(Asleep {
                        sleep: child,
                        only: 0,
                    }));
                }
            }
        }
        taken.clear();
        self.taken = taken;
        for &fp in &self.fps {
            self.board.touch(fp);
        }
        let mut kept = base;
        for k in 0..self.fps.len() {
            let fp = self.fps[k];
            let positions = self.positions[k];
            let asleep = self.stack[base + k]
                .asleep
                .as_ref()
                .map_or(0, |a| a.sleep.canonical(&positions));
            let keep = match self.board.visit(fp, asleep) {
                Visit::New => true,
                Visit::Covered => false,
                Visit::Uncovered(old) => {
                    // Explored again for the agents asleep then and awake now, with the
                    // agents asleep both times asleep.
                    let entry = self.stack[base + k].asleep.get_or_insert_with(Box::default);
                    entry.only = agents_at(old & !asleep, &positions);
                    let both = agents_at(old & asleep, &positions);
                    entry
                        .sleep
                        .effects
                        .retain(|e| both & (1 << e.client()) != 0);
                    entry.sleep.agents &= both;
                    true
                }
            };
            if keep {
                kept = self.keep(kept, base + k);
            }
        }
        self.stack.truncate(kept);
        if terminal {
            self.record_pending(ebits);
        }
    }

    /// Generates the successors of `state` (at `depth`), pushing the new ones; records
    /// the `eventually` properties still pending when it has none. The last successor
    /// takes `state` itself ([`Successors`]).
    fn expand(&mut self, state: M::State, depth: usize, ebits: u64) {
        let mut terminal = true;
        let mut actions = std::mem::take(&mut self.actions);
        self.model.actions(&state, &mut actions);
        // Every successor is pushed with its fingerprint set aside; then their slots are
        // touched, and the fingerprints inserted in order, the states seen before taken
        // out again: the same states pushed in the same order as inserting each at once.
        let base = self.stack.len();
        self.fps.clear();
        // The last action's successor takes the state itself ([`Successors`]).
        let last = actions.pop().map(|action| (actions.len(), action));
        for (index, action) in actions.drain(..).enumerate() {
            let next = self.model.next_state(&state, action);
            terminal &= !self.push(next, depth + 1, index, ebits);
        }
        if let Some((index, action)) = last {
            let next = self.model.next_state_from(state, action);
            terminal &= !self.push(next, depth + 1, index, ebits);
        }
        self.actions = actions;
        for &fp in &self.fps {
            self.board.touch(fp);
        }
        let mut kept = base;
        for k in 0..self.fps.len() {
            if self.board.insert(self.fps[k]) {
                kept = self.keep(kept, base + k);
            }
        }
        self.stack.truncate(kept);
        if terminal {
            self.record_pending(ebits);
        }
    }

    /// Keeps the entry at `at` of the stack, moved down to `kept` (the place of the next
    /// kept one); the place after it.
    fn keep(&mut self, kept: usize, at: usize) -> usize {
        // A swap in place still copies the entry three times (the profile: a fifth of the
        // search's copies of states).
        if kept != at {
            self.stack.swap(kept, at);
        }
        kept + 1
    }

    /// Records, at a terminal state, the `eventually` properties of `ebits` still pending
    /// on its path.
    fn record_pending(&mut self, ebits: u64) {
        for i in 0..self.properties.len() {
            if ebits & (1 << i) != 0 {
                self.board.record(i, &self.trail);
            }
        }
    }

    /// Pushes successor `next` (at `depth`, action `index` of its parent) if there is one
    /// and it is within the boundary, its fingerprint set aside; tells whether it was.
    fn push(&mut self, next: Option<M::State>, depth: usize, index: usize, ebits: u64) -> bool {
        let Some(next) = next else {
            return false;
        };
        if !self.model.admit(&next, &mut self.tickets) {
            return false;
        }
        self.states += 1;
        self.fps.push(fingerprint(&next));
        self.stack.push(Entry {
            state: next,
            depth,
            index,
            ebits,
            asleep: None,
        });
        true
    }

    /// The search's end on one thread: its figures and discoveries.
    fn finish(self, unique: usize, found: impl FnOnce(B) -> Found) -> Searched {
        let counts = Counts {
            states: self.states,
            unique,
            max_depth: self.max_depth,
            slept: self.slept,
        };
        let names = self.properties.iter().map(|p| p.name);
        let paths = found(self.board).paths;
        Searched {
            counts,
            discoveries: names.zip(paths).collect(),
        }
    }
}

#[cfg(test)]
#[path = "dfs_tests.rs"]
mod tests;
