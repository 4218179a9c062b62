//! Lowe's memo of the configurations a linearizability search has visited, in arenas
//! (see [`Memo`]), with its interned mode that asks the spec once per (state, operation).

use crate::check::opset::Window;
use crate::check::placement::op_hash;
use crate::spec::SequentialSpec;
use hashbrown::HashTable;
use std::hash::{Hash, Hasher};

pub(super) const NIL: u32 = u32::MAX;

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
pub(super) enum Next<St> {
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
pub(super) struct Memo<St> {
    table: HashTable<Slot>,
    keys: Vec<u64>,
    links: Vec<UnknownLink>,
    unknown_sets: Vec<u64>,
    pub(super) states: Vec<St>,
    interned: Option<Interned>,
    /// Interned mode does not pay here: the search starts again in plain mode.
    pub(super) unprofitable: bool,
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
    pub(super) fn bytes(&self) -> u64 {
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

    pub(super) fn new(unknowns: bool, init: St, interned: bool) -> Self {
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
    pub(super) fn advance<S: SequentialSpec<State = St>>(
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
    pub(super) fn accepts_from<S: SequentialSpec<State = St>>(
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

    /// The state `next` names.
    #[inline]
    pub(super) fn state_of<'a>(&'a self, next: &'a Next<St>) -> &'a St {
        match next {
            Next::Id(id) => &self.states[*id as usize],
            Next::Value(v) => v,
        }
    }

    /// Whether `next` is the state `id`.
    #[inline]
    pub(super) fn same(&self, next: &Next<St>, id: u32) -> bool {
        match next {
            Next::Id(n) => *n == id,
            Next::Value(v) => *v == self.states[id as usize],
        }
    }

    /// The memo hash of a state.
    #[inline]
    pub(super) fn hash_of(next: &Next<St>) -> u64 {
        match next {
            Next::Id(id) => id_hash(*id),
            Next::Value(v) => state_hash(v),
        }
    }

    /// Records (known, unknown, state); the state's index if the configuration is new
    /// (not dominated), `None` if it was seen. `hash` covers the known set and the state.
    pub(super) fn visit(
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
