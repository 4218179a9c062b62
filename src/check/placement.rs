//! Where the linearizability search stands: which operations are linearized, kept two
//! ways at once. As sets the memo keys ([`OpSet`]s of the known-outcome and of the
//! unknown-outcome operations, and a hash of the known set), and lifted out of the doubly
//! linked list of calls and returns in real-time order (dancing links), so that a walk of
//! the list from its head meets only what is still to be placed. [`Placement::place`] and
//! [`Placement::undo`] keep both in step.

use super::opset::{OpSet, Window};

/// The list's head node; the first entry is `next(HEAD)`.
pub(super) const HEAD: usize = 0;

/// One entry of the doubly linked list of calls and returns.
#[derive(Clone, Copy)]
struct Link {
    next: u32,
    prev: u32,
    /// The (local) operation it belongs to.
    op: u32,
    is_ret: bool,
}

/// One operation as the search sees it.
pub(super) struct Timing {
    /// Its invocation's position in the history.
    pub call: u64,
    /// Its return's position, for an operation whose outcome is known (`None`: it never
    /// returned); `None` for an unknown outcome, which has no return entry.
    pub ret: Option<u64>,
    /// Whether its outcome is known.
    pub known: bool,
    /// For an unknown outcome, what makes it interchangeable with others (its Debug
    /// form): of equal ones only the earliest-invoked unused one is tried.
    pub class: Option<String>,
}

/// The linearized operations of one search (see the module docs).
pub(super) struct Placement {
    links: Vec<Link>,
    call_node: Vec<usize>,
    ret_node: Vec<usize>,
    /// Per operation: its number among the known or among the unknown ones, in call order.
    bit: Vec<usize>,
    known_op: Vec<bool>,
    known: OpSet,
    unknown: OpSet,
    known_hash: u64,
    known_left: usize,
    unknown_count: usize,
    class_of: Vec<usize>,
    class_members: Vec<Vec<usize>>,
    class_used: Vec<usize>,
}

/// A well-mixed 64-bit value per operation (splitmix64).
#[inline]
pub(super) fn op_hash(i: usize) -> u64 {
    let mut z = (i as u64)
        .wrapping_add(1)
        .wrapping_mul(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

impl Placement {
    /// Nothing placed yet, for operations with these timings.
    pub fn new(ops: &[Timing]) -> Self {
        let n = ops.len();
        // Numbers in call order, so that the linearized set is a full prefix and a short
        // window (see `opset`).
        let mut by_call: Vec<usize> = (0..n).collect();
        by_call.sort_by_key(|&j| ops[j].call);
        let mut bit = vec![0usize; n];
        let (mut known_count, mut unknown_count) = (0usize, 0usize);
        // Entries: (position, is_return, local op).
        let mut entries: Vec<(u64, bool, usize)> = Vec::with_capacity(2 * n);
        let mut class_of = vec![usize::MAX; n];
        let mut class_members: Vec<Vec<usize>> = Vec::new();
        let mut by_form: rustc_hash::FxHashMap<&str, usize> = Default::default();
        for &j in &by_call {
            let op = &ops[j];
            entries.push((op.call, false, j));
            if op.known {
                bit[j] = known_count;
                known_count += 1;
                entries.push((op.ret.unwrap_or(u64::MAX), true, j));
            } else {
                bit[j] = unknown_count;
                unknown_count += 1;
                let form = op.class.as_deref().unwrap_or("");
                let c = *by_form.entry(form).or_insert_with(|| {
                    class_members.push(Vec::new());
                    class_members.len() - 1
                });
                class_of[j] = c;
                class_members[c].push(j);
            }
        }
        entries.sort_unstable();
        // Nodes: 0 = head, 1..=len = entries, len + 1 = tail.
        let tail = entries.len() + 1;
        let mut links: Vec<Link> = (0..=tail)
            .map(|k| Link {
                next: (k + 1).min(tail) as u32,
                prev: k.saturating_sub(1) as u32,
                op: 0,
                is_ret: false,
            })
            .collect();
        let mut call_node = vec![0usize; n];
        let mut ret_node = vec![usize::MAX; n];
        for (k, &(_, is_ret, j)) in entries.iter().enumerate() {
            let node = k + 1;
            links[node].op = j as u32;
            links[node].is_ret = is_ret;
            if is_ret {
                ret_node[j] = node;
            } else {
                call_node[j] = node;
            }
        }
        Placement {
            links,
            call_node,
            ret_node,
            bit,
            known_op: ops.iter().map(|o| o.known).collect(),
            known: OpSet::new(known_count, true),
            unknown: OpSet::new(unknown_count, false),
            known_hash: 0,
            known_left: known_count,
            unknown_count,
            class_used: vec![0; class_members.len()],
            class_of,
            class_members,
        }
    }

    /// The node after `node` in the list (the first entry after [`HEAD`]).
    #[inline]
    pub fn next(&self, node: usize) -> usize {
        self.links[node].next as usize
    }

    /// Whether `node` is the list's end (after its last entry).
    #[inline]
    pub fn is_end(&self, node: usize) -> bool {
        node == self.links.len() - 1
    }

    /// The operation of entry `node`, and whether the entry is its return.
    #[inline]
    pub fn entry(&self, node: usize) -> (usize, bool) {
        (self.links[node].op as usize, self.links[node].is_ret)
    }

    /// The operations that may be placed now: those invoked before the first return
    /// entry still in the list.
    pub fn placeable(&self) -> impl Iterator<Item = usize> + '_ {
        let mut node = self.next(HEAD);
        std::iter::from_fn(move || {
            let (j, is_ret) = self.entry(node);
            (!is_ret).then(|| {
                node = self.next(node);
                j
            })
        })
    }

    /// Known-outcome operations not yet placed.
    pub fn known_left(&self) -> usize {
        self.known_left
    }

    /// Whether there are unknown-outcome operations at all.
    pub fn has_unknowns(&self) -> bool {
        self.unknown_count > 0
    }

    /// For an unknown-outcome operation: whether it is the first unused one of its class
    /// (the only one of them worth trying).
    pub fn first_of_class(&self, j: usize) -> bool {
        let c = self.class_of[j];
        self.class_members[c][self.class_used[c]] == j
    }

    /// The hash of the known set and the sets' windows, as the memo keys them.
    pub fn key(&self) -> (u64, Window<'_>, Window<'_>) {
        (self.known_hash, self.known.window(), self.unknown.window())
    }

    /// Counts `j` as linearized in the sets (not yet lifted out of the list).
    pub fn mark(&mut self, j: usize) {
        if self.known_op[j] {
            self.known.insert(self.bit[j]);
            self.known_hash ^= op_hash(self.bit[j]);
        } else {
            self.unknown.insert(self.bit[j]);
            self.class_used[self.class_of[j]] += 1;
        }
    }

    /// Undoes [`Placement::mark`].
    pub fn unmark(&mut self, j: usize) {
        if self.known_op[j] {
            self.known.remove(self.bit[j]);
            self.known_hash ^= op_hash(self.bit[j]);
        } else {
            self.unknown.remove(self.bit[j]);
            self.class_used[self.class_of[j]] -= 1;
        }
    }

    /// Lifts a marked `j` out of the list: it is placed.
    pub fn lift(&mut self, j: usize) {
        self.unlink(self.call_node[j]);
        if self.known_op[j] {
            self.unlink(self.ret_node[j]);
            self.known_left -= 1;
        }
    }

    /// Undoes a placement: `j` back in the list and out of the sets. Returns the node
    /// after its call entry, where the search goes on.
    pub fn undo(&mut self, j: usize) -> usize {
        self.unmark(j);
        if self.known_op[j] {
            self.relink(self.ret_node[j]);
            self.known_left += 1;
        }
        self.relink(self.call_node[j]);
        self.next(self.call_node[j])
    }

    fn unlink(&mut self, x: usize) {
        let Link { next, prev, .. } = self.links[x];
        self.links[prev as usize].next = next;
        self.links[next as usize].prev = prev;
    }

    fn relink(&mut self, x: usize) {
        let Link { next, prev, .. } = self.links[x];
        self.links[prev as usize].next = x as u32;
        self.links[next as usize].prev = x as u32;
    }
}
