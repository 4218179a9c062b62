//! Linearizability: Wing & Gong's search with Lowe's memoization, as in Porcupine.
//!
//! The history becomes a doubly linked list of call and return entries in real-time
//! order. The search walks the list from its head: at a call entry it tries to linearize
//! that operation now (the spec must accept its return in the current state, and the pair
//! (set of linearized operations, new state) must be new, else the branch was explored
//! already); at a return entry it backtracks, since that operation should have been
//! linearized before it returned. Linearized operations are lifted out of the list and put
//! back when the search backtracks (dancing links).
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
//! Limits: a wall-clock deadline and a bound on search steps, both checked inside the
//! search; hitting either yields [`Verdict::Unknown`], never a pass. Simulated runs should
//! use the step bound only: it is deterministic, the deadline is not.

use crate::history::{History, Outcome};
use crate::spec::SequentialSpec;
use crate::verdict::{Verdict, Violation};
use hashbrown::HashTable;
use std::collections::BTreeMap;
use std::hash::{Hash, Hasher};
use std::time::{Duration, Instant};

/// Bounds on one linearizability check. The default has none.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Limits {
    /// Wall-clock time for the whole check (all partitions). Not deterministic: use it for
    /// histories from outside, not inside simulated runs.
    pub time: Option<Duration>,
    /// Search steps (entries visited) for the whole check. Deterministic.
    pub max_steps: Option<u64>,
}

impl Limits {
    /// No bound at all.
    pub fn none() -> Self {
        Limits::default()
    }

    /// At most `time` of wall-clock time.
    pub fn time(time: Duration) -> Self {
        Limits {
            time: Some(time),
            max_steps: None,
        }
    }

    /// At most `steps` search steps.
    pub fn steps(steps: u64) -> Self {
        Limits {
            time: None,
            max_steps: Some(steps),
        }
    }
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
                Verdict::Violation(Violation {
                    property: "linearizability".to_string(),
                    reason: c.reason.clone(),
                    ops,
                    partial: c.partial.clone(),
                })
            }
        }
    }
}

/// Checks `history` against `spec`; the verdict only (see [`check_linearizability`]).
pub fn linearizable<S: SequentialSpec>(
    spec: &S,
    history: &History<S::Op, S::Ret>,
    limits: Limits,
) -> Verdict {
    check_linearizability(spec, history, limits).verdict()
}

/// Checks `history` against `spec` within `limits`: a witness, a counterexample, or
/// `Unknown` when a limit was hit.
pub fn check_linearizability<S: SequentialSpec>(
    spec: &S,
    history: &History<S::Op, S::Ret>,
    limits: Limits,
) -> Linearization {
    let live: Vec<usize> = (0..history.ops.len())
        .filter(|&i| !matches!(history.ops[i].outcome, Outcome::Failed))
        .collect();
    let keys: Option<Vec<u64>> = live
        .iter()
        .map(|&i| spec.partition(&history.ops[i].op))
        .collect();
    let parts: Vec<(Option<u64>, Vec<usize>)> = match keys {
        Some(keys) => {
            let mut by_key: BTreeMap<u64, Vec<usize>> = BTreeMap::new();
            for (&i, k) in live.iter().zip(keys) {
                by_key.entry(k).or_default().push(i);
            }
            by_key.into_iter().map(|(k, v)| (Some(k), v)).collect()
        }
        None => vec![(None, live)],
    };
    let mut budget = Budget::new(limits);
    let mut witness = Witness::default();
    for (key, ops) in parts {
        match search(spec, history, &ops, &mut budget) {
            Found::Ok(order) => witness.orders.push(order),
            Found::Unknown(why) => return Linearization::Unknown(why),
            Found::Violation(mut c) => {
                c.partition = key;
                return Linearization::Violation(c);
            }
        }
    }
    Linearization::Ok(witness)
}

/// The shared step and time budget of one check.
struct Budget {
    steps: u64,
    max_steps: Option<u64>,
    deadline: Option<(Instant, Duration)>,
}

impl Budget {
    fn new(limits: Limits) -> Self {
        Budget {
            steps: 0,
            max_steps: limits.max_steps,
            deadline: limits.time.map(|t| (Instant::now() + t, t)),
        }
    }

    /// Counts one step; `Some(reason)` when a limit is hit.
    #[inline]
    fn tick(&mut self) -> Option<String> {
        self.steps += 1;
        if let Some(max) = self.max_steps {
            if self.steps > max {
                return Some(format!("search step limit of {max} reached"));
            }
        }
        if self.steps % 1024 == 0 {
            if let Some((at, t)) = self.deadline {
                if Instant::now() >= at {
                    return Some(format!("time limit of {} ms reached", t.as_millis()));
                }
            }
        }
        None
    }
}

enum Found {
    Ok(Vec<usize>),
    Violation(Counterexample),
    Unknown(String),
}

const HEAD: usize = 0;

/// A set of operations (by local index) with an order-independent hash kept up to date.
struct Bits {
    words: Vec<u64>,
    hash: u64,
}

impl Bits {
    fn new(n: usize) -> Self {
        Bits {
            words: vec![0; n.div_ceil(64)],
            hash: 0,
        }
    }

    #[inline]
    fn flip(&mut self, i: usize) {
        self.words[i / 64] ^= 1 << (i % 64);
        self.hash ^= op_hash(i);
    }
}

/// A well-mixed 64-bit value per operation (splitmix64).
#[inline]
fn op_hash(i: usize) -> u64 {
    let mut z = (i as u64)
        .wrapping_add(1)
        .wrapping_mul(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

#[inline]
fn state_hash<T: Hash>(state: &T) -> u64 {
    let mut h = rustc_hash::FxHasher::default();
    state.hash(&mut h);
    h.finish()
}

/// The search over one partition; `ops` are indices into `history.ops`, in call order
/// or not.
fn search<S: SequentialSpec>(
    spec: &S,
    history: &History<S::Op, S::Ret>,
    ops: &[usize],
    budget: &mut Budget,
) -> Found {
    let n = ops.len();
    // Entries: (position, is_return, local op). Unknown outcomes have no return entry.
    let mut entries: Vec<(u64, bool, usize)> = Vec::with_capacity(2 * n);
    let mut known_left = 0usize;
    for (j, &i) in ops.iter().enumerate() {
        let o = &history.ops[i];
        entries.push((o.call, false, j));
        if let Outcome::Ok(_) = o.outcome {
            known_left += 1;
            entries.push((o.ret.unwrap_or(u64::MAX), true, j));
        }
    }
    entries.sort_unstable();
    // Nodes: 0 = head, 1..=len = entries, len + 1 = tail.
    let len = entries.len();
    let tail = len + 1;
    let mut next: Vec<usize> = (1..=len + 2).collect();
    let mut prev: Vec<usize> = (0..len + 2).map(|k| k.wrapping_sub(1)).collect();
    next[tail] = tail;
    let mut node_op = vec![0usize; len + 2];
    let mut node_is_ret = vec![false; len + 2];
    let mut call_node = vec![0usize; n];
    let mut ret_node = vec![usize::MAX; n];
    for (k, &(_, is_ret, j)) in entries.iter().enumerate() {
        let node = k + 1;
        node_op[node] = j;
        node_is_ret[node] = is_ret;
        if is_ret {
            ret_node[j] = node;
        } else {
            call_node[j] = node;
        }
    }
    let rets: Vec<Option<&S::Ret>> = ops
        .iter()
        .map(|&i| match &history.ops[i].outcome {
            Outcome::Ok(r) => Some(r),
            _ => None,
        })
        .collect();

    let mut bits = Bits::new(n);
    let mut memo: HashTable<(u64, Box<[u64]>, S::State)> = HashTable::new();
    let mut stack: Vec<(usize, S::State)> = Vec::new();
    let mut state = spec.init();
    let mut best: Option<(Vec<usize>, usize, S::State)> = None;
    let mut cur = next[HEAD];

    macro_rules! unlink {
        ($x:expr) => {{
            let x = $x;
            next[prev[x]] = next[x];
            prev[next[x]] = prev[x];
        }};
    }
    macro_rules! relink {
        ($x:expr) => {{
            let x = $x;
            next[prev[x]] = x;
            prev[next[x]] = x;
        }};
    }

    while known_left > 0 {
        if let Some(why) = budget.tick() {
            return Found::Unknown(why);
        }
        debug_assert!(cur != tail, "a known return entry is always left");
        let j = node_op[cur];
        if !node_is_ret[cur] {
            let op = &history.ops[ops[j]].op;
            let next_state = match rets[j] {
                Some(r) => spec.accepts(&state, op, r),
                None => Some(spec.step(&state, op).0),
            };
            if let Some(ns) = next_state {
                bits.flip(j);
                let h = bits.hash ^ state_hash(&ns).wrapping_mul(0x9e37_79b9_7f4a_7c15);
                let seen = memo
                    .find(h, |(eh, w, s)| *eh == h && **w == *bits.words && *s == ns)
                    .is_some();
                if !seen {
                    memo.insert_unique(
                        h,
                        (h, bits.words.clone().into_boxed_slice(), ns.clone()),
                        |e| e.0,
                    );
                    let old = std::mem::replace(&mut state, ns);
                    stack.push((j, old));
                    unlink!(call_node[j]);
                    if ret_node[j] != usize::MAX {
                        unlink!(ret_node[j]);
                        known_left -= 1;
                    }
                    cur = next[HEAD];
                    continue;
                }
                bits.flip(j);
            }
            cur = next[cur];
        } else {
            // `j` returned without being linearized: backtrack.
            if best.as_ref().is_none_or(|(p, _, _)| stack.len() > p.len()) {
                let partial = stack.iter().map(|&(k, _)| ops[k]).collect();
                best = Some((partial, j, state.clone()));
            }
            let Some((k, old)) = stack.pop() else {
                let (partial, blocked, at) = best.expect("recorded above");
                let op = &history.ops[ops[blocked]];
                let found = rets[blocked].expect("return entries are known");
                let reason = match spec.accepts(&at, &op.op, found) {
                    None => {
                        let expected = spec.step(&at, &op.op).1;
                        spec.explain(&at, &op.op, &expected, found)
                    }
                    Some(_) => format!(
                        "{:?} returning {found:?} fits after the partial linearization, \
                         but no order of the remaining operations does",
                        op.op
                    ),
                };
                return Found::Violation(Counterexample {
                    partition: None,
                    op: ops[blocked],
                    partial,
                    reason,
                });
            };
            state = old;
            bits.flip(k);
            if ret_node[k] != usize::MAX {
                relink!(ret_node[k]);
                known_left += 1;
            }
            relink!(call_node[k]);
            cur = next[call_node[k]];
        }
    }
    Found::Ok(stack.into_iter().map(|(k, _)| ops[k]).collect())
}
