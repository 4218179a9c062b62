//! The explored state's identity: its hash, with cas uniques renamed.
//!
//! stateright keeps a state by its 64-bit hash only, so the hash *is* the state's
//! identity: two states that hash alike are explored once. Hashing a state as it is would
//! keep apart worlds that differ only in which cas unique each item got (the store hands
//! them out in the order the commands arrived, so two interleavings that end with the same
//! items give them different numbers). A client's code compares uniques only for equality
//! (it hands one back in a `cas` command), and so does the store unless a delayed
//! `flush_all` remembers one: so the hash names each unique by its first appearance
//! (servers in order, items in key order, then each client's recorded replies) instead of
//! its number. When a store orders uniques ([`crate::store::Store::orders_cas`]), the
//! state is hashed with the numbers.
//!
//! What this assumes, and a structure could break: that uniques are not turned into data
//! (a structure that stores a unique's digits in a value, or returns one as its result,
//! and later compares it with a unique from `gets`). Results are hashed with their numbers,
//! so the second only merges less; the first would merge states that differ.
//!
//! In a time-free search ([`super::Scope::time_shift`]) every time is hashed relative to
//! the state's `now`, and `now` itself not at all: the clients' wake-ups and timeouts, the
//! end of a pause, a downed server's return, a late request's landing, since when a client
//! is runnable, the last fault's end; the stores are hashed without their clock, their
//! items' access times and their LRU order ([`crate::store::Store::time_free`]). Sound
//! because in such a search nothing reads an absolute time: no client reads its clock, no
//! command involves time ([`crate::command::Command::involves_time`]; the guard stops the
//! search at the first that does, and it runs again with times), the history keeps no
//! times, and no path is cut at a time horizon. Whether a client reads its clock, or sends
//! such a command, is decided before the value it would read is used, so two states that
//! differ by a shift meet the first such read on the same paths: a search that met none
//! left none unmet.
//!
//! What a search computes once rather than per hash: each history operation's digest
//! (every field but its client and event positions), kept beside the history in the
//! state ([`refresh_op_digests`], after every step) and hashed in place of the fields;
//! and under symmetry each client's key (its own state and its operations in the
//! history, as one 64-bit hash), which both orders the clients and stands for the client
//! and its operations in the hash: a collision of two keys, like one of two states'
//! fingerprints, would merge states that differ.
//!
//! Every struct is destructured, so a field added later cannot be left out unnoticed.

use super::bridge::NEVER_STARVED;
use super::state::{Recorded, World};
use crate::history::History;
use crate::sim::{ClientState, Halt, InFlight, Phase, ServerState};
use crate::store::CasNames;
use smallvec::SmallVec;
use std::hash::{Hash, Hasher};

/// The explored state's hash (see the module's text). Only the explored world, whose
/// clients record their poll inputs, is hashed: the simulator's runner never hashes its
/// world.
impl<Op: Hash, Ret: Hash> Hash for World<Op, Ret, Recorded<Ret>> {
    fn hash<H: Hasher>(&self, h: &mut H) {
        let World {
            servers,
            now,
            clients,
            history,
            seq,
            tail,
            tail_start,
            faults_used,
            last_fault,
            halt,
            in_flight,
            time_free,
            op_digests,
            history_types: _,
        } = self;
        // In a time-free search, every time is taken relative to `now` (see the module's
        // text), and `now` itself is left out.
        let at = time_free.then_some(*now);
        let renamed = !servers.iter().any(|s| s.store.orders_cas());
        let mut names = CasNames::default();
        h.write_u8(renamed as u8 | (*time_free as u8) << 1);
        h.write_usize(servers.len());
        for ServerState { store, down_until } in servers {
            if renamed {
                store.hash_renamed(h, &mut names, *time_free);
            } else {
                store.hash(h);
            }
            down_until.map(|t| since(at, t)).hash(h);
        }
        if at.is_none() {
            now.hash(h);
        }
        h.write_usize(clients.len());
        let symmetric = symmetric(clients);
        // Each operation's digest: kept beside the history by the search
        // ([`refresh_op_digests`]), computed here for a state without them.
        let computed: Ops<u64>;
        let digests: &[u64] = if op_digests.len() == history.ops.len() {
            op_digests
        } else {
            computed = history.ops.iter().map(op_digest).collect();
            &computed
        };
        let rename = if symmetric {
            // Clients in canonical order, each as its key: its own digest and its
            // operations with the runs their events are in, which together are the
            // history as the permuted path has it (see `Scratch::canonical_order`); on
            // per-thread scratch: no collection built per state.
            SCRATCH.with_borrow_mut(|sc| {
                sc.runs(history, digests);
                sc.canonical_order(clients, history, digests, names.as_slice(), renamed, at);
                h.write_usize(history.ops.len());
                for &old in &sc.order {
                    // The client's key names its uniques by their position among the
                    // servers' and its own; then those uniques as named across the
                    // state: together, the client with every unique named by its first
                    // appearance.
                    h.write_u64(sc.keys[old]);
                    if renamed {
                        for &u in clients[old].rec.polls.uniques() {
                            h.write_usize(names.name(u));
                        }
                    }
                }
                // Needed only to rename a halted client.
                halt.is_some().then(|| {
                    let mut rename = Clients::from_elem(0, clients.len());
                    for (new, &old) in sc.order.iter().enumerate() {
                        rename[old] = new;
                    }
                    rename
                })
            })
        } else {
            for client in clients {
                hash_client(client, h, &mut |u| names.name(u), renamed, true, at);
            }
            // Each operation as its client, its event positions and its digest (every
            // other field).
            h.write_usize(history.ops.len());
            for (op, &digest) in history.ops.iter().zip(digests) {
                h.write_usize(op.client);
                op.call.hash(h);
                op.ret.hash(h);
                h.write_u64(digest);
            }
            None
        };
        // Late requests, without who sent them: nobody waits for their replies, so the
        // sender changes nothing to come (and interchangeable clients stay so).
        h.write_usize(in_flight.len());
        for InFlight {
            at: lands,
            shard,
            command,
            client: _,
        } in in_flight
        {
            since(at, *lands).hash(h);
            shard.hash(h);
            command.hash(h);
        }
        seq.hash(h);
        tail.hash(h);
        tail_start.hash(h);
        faults_used.hash(h);
        match (last_fault, at) {
            // Without history times (a time-free search has none) the last fault's time
            // matters only as "its effect lasted or not" (`World::quiet`) and its end
            // only against times to come.
            (Some((seq, when, end)), Some(_)) => {
                Some((seq, end == when, since(at, *end))).hash(h);
            }
            (last, _) => last.hash(h),
        }
        match (halt, &rename) {
            (
                Some(
                    Halt::Livelock { client, .. }
                    | Halt::Foreign { client }
                    | Halt::Refused { client, .. }
                    | Halt::Nondeterministic { client },
                ),
                Some(rename),
            ) => {
                let mut renamed_halt = halt.clone();
                if let Some(
                    Halt::Livelock { client: c, .. }
                    | Halt::Foreign { client: c }
                    | Halt::Refused { client: c, .. }
                    | Halt::Nondeterministic { client: c },
                ) = &mut renamed_halt
                {
                    *c = rename[*client];
                }
                renamed_halt.hash(h);
            }
            _ => halt.hash(h),
        }
    }
}

/// Whether some client is interchangeable with another (the hash then renames clients).
fn symmetric<R>(clients: &[ClientState<Recorded<R>>]) -> bool {
    clients
        .iter()
        .enumerate()
        .any(|(c, cl)| cl.rec.class as usize != c)
}

/// The fingerprint of `s` and each client's position in the canonical order its hash took
/// (its index, without symmetry): the coordinates in which the search keeps a sleep set
/// beside a fingerprint, so that two states that differ by a renaming of clients compare
/// their sleep sets client for client. Clients with equal keys are ordered by index: the
/// hash cannot tell them apart, so comparing them by index can only find a sleep set not
/// covered where it is (a state explored again), never the other way round.
pub(crate) fn fingerprint_with_positions<Op: Hash, Ret: Hash>(
    s: &World<Op, Ret, Recorded<Ret>>,
) -> (u64, [u8; super::commute::MAX_CLIENTS]) {
    let fp = super::dfs::fingerprint(s);
    let mut positions = [0u8; super::commute::MAX_CLIENTS];
    for (c, p) in positions.iter_mut().enumerate() {
        *p = c as u8;
    }
    if symmetric(&s.clients) {
        // The order the hash just took, on this thread's scratch.
        SCRATCH.with_borrow(|sc| {
            for (new, &old) in sc.order.iter().enumerate() {
                if let Some(p) = positions.get_mut(old) {
                    *p = new as u8;
                }
            }
        });
    }
    (fp, positions)
}

/// A true time as the hash takes it: as it is (`at` is `None`), or relative to `at`, the
/// state's `now`, in a time-free search (negative for a time already past).
fn since(at: Option<u64>, t: u64) -> i64 {
    match at {
        None => t as i64,
        Some(now) => t as i64 - now as i64,
    }
}

/// One client's part of the hash. `hist_index` is left out under symmetry: it is the
/// position of the client's last operation in the history, which the renamed history
/// determines.
fn hash_client<Ret, H: Hasher>(
    client: &ClientState<Recorded<Ret>>,
    h: &mut H,
    name: &mut impl FnMut(u64) -> usize,
    renamed: bool,
    with_hist_index: bool,
    at: Option<u64>,
) {
    let ClientState {
        phase,
        op_index,
        paused_until,
        offset_ms,
        ready_since,
        hist_index,
        // The class is the same at every position of a permutation: nothing to hash.
        rec:
            Recorded {
                alt,
                polls,
                class: _,
                ordinal,
            },
    } = client;
    match (phase, at) {
        (Phase::Sleeping(t), Some(_)) => (1u8, since(at, *t)).hash(h),
        (Phase::TimingOut(t), Some(_)) => (2u8, since(at, *t)).hash(h),
        _ => phase.hash(h),
    }
    op_index.hash(h);
    // 0 when no pause is in force.
    match paused_until {
        0 => 0,
        &t => since(at, t),
    }
    .hash(h);
    offset_ms.hash(h);
    alt.hash(h);
    ordinal.hash(h);
    ready_since
        .map(|t| match t {
            NEVER_STARVED => i64::MAX,
            t => since(at, t),
        })
        .hash(h);
    if with_hist_index {
        hist_index.hash(h);
    }
    // The inputs as their digest (cas uniques by their position among the client's own),
    // then those uniques, renamed: the same information as the inputs with every
    // unique renamed, and the uniques named in the same order of first appearance.
    h.write_usize(polls.len());
    h.write_u64(polls.shape());
    for &u in polls.uniques() {
        if renamed {
            h.write_usize(name(u));
        } else {
            h.write_u64(u);
        }
    }
}

/// An operation's fields but its client and event positions (its invocation, times,
/// outcome and marks), as one hash: what the canonical order and the renamed history
/// take of each operation besides who ran it and where its events are.
fn op_digest<Op: Hash, Ret: Hash>(op: &crate::history::Operation<Op, Ret>) -> u64 {
    let mut h = crate::store::fixed_hasher();
    op.call_ms.hash(&mut h);
    op.ret_ms.hash(&mut h);
    op.op.hash(&mut h);
    op.outcome.hash(&mut h);
    op.marks.hash(&mut h);
    h.finish()
}

/// Brings `next`'s cache of operation digests up to date after a step from a state whose
/// history and cache were `history` and `digests` (`next`'s until then): an operation whose client, marks and whether it
/// returned are those of `parent`'s at the same position is the same operation with the
/// same fields (a returned operation never moves or changes; only pending ones, one per
/// client, are reordered, and an operation's fields change only by a mark or its
/// return), so its digest is kept; every other is computed.
pub(crate) fn refresh_op_digests<Op: Hash, Ret: Hash>(
    history: &std::sync::Arc<History<Op, Ret>>,
    digests: &[u64],
    next: &mut World<Op, Ret, Recorded<Ret>>,
) {
    let old = &history.ops;
    let ops = &next.history.ops;
    let cached = digests.len() == old.len();
    if cached && std::sync::Arc::ptr_eq(history, &next.history) {
        return;
    }
    let same = |i: usize| {
        cached
            && old.get(i).is_some_and(|o| {
                let op = &ops[i];
                o.client == op.client
                    && o.marks.len() == op.marks.len()
                    && o.ret.is_some() == op.ret.is_some()
            })
    };
    if ops.len() == old.len() && (0..ops.len()).all(same) {
        return;
    }
    next.op_digests = ops
        .iter()
        .enumerate()
        .map(|(i, op)| if same(i) { digests[i] } else { op_digest(op) })
        .collect();
}

/// Every operation's digest, computed afresh (what [`refresh_op_digests`] keeps).
#[cfg(test)]
pub(crate) fn fresh_op_digests<Op: Hash, Ret: Hash>(history: &History<Op, Ret>) -> Vec<u64> {
    history.ops.iter().map(op_digest).collect()
}

/// Per-client scratch of the hash, inline for the scopes people explore.
type Clients<T> = SmallVec<[T; 8]>;

/// Per-operation scratch of the hash, inline for the scopes people explore.
type Ops<T> = SmallVec<[T; 8]>;

thread_local! {
    /// The symmetric hash's scratch, one per checker thread: the profile (spinlock/fixed
    /// 4 × 1) showed the canonical order and the renamed history spending more on
    /// building small collections per state than on hashing.
    static SCRATCH: std::cell::RefCell<Scratch> = const {
        std::cell::RefCell::new(Scratch {
            call_start: Vec::new(),
            ret_start: Vec::new(),
            by_ret: Vec::new(),
            keys: Vec::new(),
            order: Vec::new(),
            hashers: Vec::new(),
            keyed: Vec::new(),
        })
    };
}

/// The scratch of a symmetric hash (see [`SCRATCH`]): the history's runs, the clients'
/// keys and their canonical order.
///
/// The runs are those of the history's events that the world keeps sorted by client
/// (see `World::event`): per operation, the first event position of the run of adjacent
/// invocations its invocation is in (`call_start`), and likewise for its return
/// (`ret_start`). Every event takes the next position, so two invocations (or returns)
/// are adjacent exactly when their positions are consecutive. With them, per operation,
/// the digest of every field but its client and its event positions ([`op_digest`]), as
/// the search keeps them beside the history: each client's key takes its operations'.
struct Scratch {
    call_start: Vec<u64>,
    ret_start: Vec<Option<u64>>,
    by_ret: Vec<(u64, usize)>,
    /// Each client's key, by old index.
    keys: Vec<u64>,
    /// New position → old index.
    order: Vec<usize>,
    /// Each client's key hasher, by old index.
    hashers: Vec<ahash::AHasher>,
    /// A class's members with their keys, sorted: the sort compares ready tuples (the
    /// profile, spinlock/fixed 4 × 1: the sorts with a key closure, which indexed two
    /// slices at every comparison, were ~10 % of the search; sorting ready tuples took
    /// the search's instructions down 3.3 %).
    keyed: Vec<(u64, usize)>,
}

impl Scratch {
    /// The runs of `history`'s events (see [`Scratch`]).
    fn runs<Op, Ret>(&mut self, history: &History<Op, Ret>, digest: &[u64]) {
        let ops = &history.ops;
        debug_assert_eq!(ops.len(), digest.len());
        self.call_start.clear();
        for (i, op) in ops.iter().enumerate() {
            let start = match i.checked_sub(1) {
                Some(p) if ops[p].call + 1 == op.call => self.call_start[p],
                _ => op.call,
            };
            self.call_start.push(start);
        }
        self.by_ret.clear();
        self.by_ret.extend(
            ops.iter()
                .enumerate()
                .filter_map(|(i, o)| o.ret.map(|r| (r, i))),
        );
        self.by_ret.sort_unstable();
        self.ret_start.clear();
        self.ret_start.resize(ops.len(), None);
        for k in 0..self.by_ret.len() {
            let (r, i) = self.by_ret[k];
            self.ret_start[i] = Some(match k.checked_sub(1) {
                Some(p) if self.by_ret[p].0 + 1 == r => {
                    self.ret_start[self.by_ret[p].1].expect("set")
                }
                _ => r,
            });
        }
    }

    /// The canonical order of the clients (`order`: new position → old index), and each
    /// client's key (`keys`, by old index): a hash of its state with its uniques named
    /// after the servers' alone (`servers`: the uniques the servers named, in order), then
    /// of its operations in the history, each with the runs its invocation and return
    /// are in and its digest. Within each symmetry class, the class's positions are taken
    /// by its members sorted by key, which does not depend on their indices. Two states
    /// that differ by a permutation within classes and whose keys differ get the same
    /// order; equal keys keep index order, which can only merge less (never states that
    /// differ otherwise).
    ///
    /// The keys in this order also stand for the history in the state's hash: the
    /// permuted history has the operations by run of adjacent invocations, and within a
    /// run by new client name (as the world sorts a run), and each event's position is
    /// its run's start plus its rank by client name within the run (a client has at most
    /// one event in a run); so the clients' operations with their runs, client by client
    /// in the new order, are the permuted history, and hashing it again was the same
    /// information twice (spinlock/fixed 4 × 1: hashing the clients alone took the search's
    /// instructions down 5.9 %). Needs [`Scratch::runs`] of `history` first.
    fn canonical_order<Op, Ret>(
        &mut self,
        clients: &[ClientState<Recorded<Ret>>],
        history: &History<Op, Ret>,
        digest: &[u64],
        servers: &[u64],
        renamed: bool,
        at: Option<u64>,
    ) {
        // A client's uniques are distinct: one not among the servers' is named after
        // them and after the client's earlier such ones.
        self.hashers.clear();
        for cl in clients {
            let mut h = crate::store::fixed_hasher();
            let mut fresh = servers.len();
            let mut name = |u: u64| match servers.iter().position(|&s| s == u) {
                Some(i) => i,
                None => {
                    fresh += 1;
                    fresh - 1
                }
            };
            hash_client(cl, &mut h, &mut name, renamed, false, at);
            self.hashers.push(h);
        }
        // Each client's hasher, fed the client, then takes its operations in one pass
        // over the history.
        for (i, op) in history.ops.iter().enumerate() {
            let h = &mut self.hashers[op.client];
            self.call_start[i].hash(h);
            self.ret_start[i].hash(h);
            h.write_u64(digest[i]);
        }
        self.keys.clear();
        self.keys.extend(self.hashers.iter().map(Hasher::finish));
        self.order.clear();
        self.order.extend(0..clients.len());
        for (c, cl) in clients.iter().enumerate() {
            if cl.rec.class as usize != c {
                continue;
            }
            let in_class = |d: &usize| clients[*d].rec.class as usize == c;
            let keys = &self.keys;
            self.keyed.clear();
            self.keyed
                .extend((c..clients.len()).filter(in_class).map(|d| (keys[d], d)));
            if self.keyed.len() < 2 {
                continue;
            }
            self.keyed.sort_unstable();
            // The class's positions, in index order, take its sorted members.
            let positions = (c..clients.len()).filter(in_class);
            for (pos, &(_, member)) in positions.zip(&self.keyed) {
                self.order[pos] = member;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::command::{Command, Reply, StoreVerb, Value};
    use crate::explore::polls::{PollInput, Polls};
    use crate::explore::state::{Delivered, Phase, State};
    use crate::sim::Tail;
    use crate::store::{Store, StoreConfig};
    use std::hash::DefaultHasher;

    fn hash_of(s: &State<u8, u8>) -> u64 {
        let mut h = DefaultHasher::new();
        s.hash(&mut h);
        h.finish()
    }

    fn state(stores: Vec<Store>) -> State<u8, u8> {
        World {
            servers: stores
                .into_iter()
                .map(|store| ServerState {
                    store,
                    down_until: None,
                })
                .collect(),
            now: 0,
            clients: Vec::new(),
            history: Default::default(),
            seq: 0,
            tail: Tail::Marks,
            tail_start: 0,
            faults_used: Vec::new(),
            last_fault: None,
            halt: None,
            in_flight: Vec::new(),
            time_free: false,
            op_digests: std::sync::Arc::from(Vec::new()),
            history_types: std::marker::PhantomData,
        }
    }

    fn set(store: &mut Store, key: &str, data: &str) {
        store.apply(
            0,
            &Command::Store {
                verb: StoreVerb::Set,
                key: key.as_bytes().to_vec(),
                flags: 0,
                exptime: 0,
                data: data.as_bytes().to_vec(),
                noreply: false,
            },
        );
    }

    /// A state of a time-free search hashes alike at every time when every time in it
    /// (the store's clock and item times, a downed server's return, a wake-up, a pause,
    /// since when a client is runnable) moves with the clock; a search that keeps times
    /// tells them apart, and a wait of a different length is a different state.
    #[test]
    fn a_time_free_state_is_the_same_state_at_every_time() {
        let at = |t: u64, time_free: bool, wake: u64| {
            let mut store = Store::new(StoreConfig::default(), t);
            store.apply(
                t,
                &Command::Store {
                    verb: StoreVerb::Set,
                    key: b"x".to_vec(),
                    flags: 0,
                    exptime: 0,
                    data: b"1".to_vec(),
                    noreply: false,
                },
            );
            let mut s = state(vec![store]);
            s.now = t;
            s.time_free = time_free;
            s.servers[0].down_until = Some(t + 700);
            s.last_fault = Some((0, t - 100, t + 700));
            s.clients.push(ClientState {
                phase: Phase::Sleeping(t + wake),
                op_index: 0,
                paused_until: t + 300,
                offset_ms: 0,
                ready_since: Some(t - 20),
                hist_index: 0,
                rec: Recorded::default(),
            });
            s
        };
        let t0 = crate::sim::EPOCH_MS;
        let t1 = t0 + 1_234;
        assert_eq!(hash_of(&at(t0, true, 500)), hash_of(&at(t1, true, 500)));
        assert_ne!(hash_of(&at(t0, false, 500)), hash_of(&at(t1, false, 500)));
        assert_ne!(hash_of(&at(t0, true, 500)), hash_of(&at(t0, true, 501)));
        assert_ne!(hash_of(&at(t0, true, 500)), hash_of(&at(t0, false, 500)));
    }

    #[test]
    fn stores_that_differ_only_in_their_uniques_hash_alike() {
        let mut a = Store::new(StoreConfig::default(), 0);
        set(&mut a, "x", "1");
        set(&mut a, "y", "2");
        let mut b = Store::new(StoreConfig::default(), 0);
        set(&mut b, "y", "2");
        set(&mut b, "x", "1");
        assert_ne!(a, b, "the uniques differ");
        assert_eq!(hash_of(&state(vec![a.clone()])), hash_of(&state(vec![b])));
        // Different data still hashes apart.
        let mut c = a.clone();
        set(&mut c, "x", "3");
        assert_ne!(hash_of(&state(vec![a])), hash_of(&state(vec![c])));
    }

    #[test]
    fn which_items_share_a_unique_with_a_client_is_kept() {
        // Two clients' replies naming x's unique and y's: swapping them is a different
        // state (the next cas of each client succeeds on a different key).
        let mut store = Store::new(StoreConfig::default(), 0);
        set(&mut store, "x", "1");
        set(&mut store, "y", "1");
        let gets = |key: &str, store: &mut Store| match store.apply(
            0,
            &Command::Get {
                with_cas: true,
                keys: vec![key.as_bytes().to_vec()],
            },
        ) {
            Reply::Values(v) => v,
            other => panic!("{other:?}"),
        };
        let vx = gets("x", &mut store);
        let vy = gets("y", &mut store);
        let with_reply = |values: Vec<Value>| {
            let mut s = state(vec![store.clone()]);
            s.clients.push(ClientState {
                phase: Phase::Calling,
                op_index: 0,
                paused_until: 0,
                offset_ms: 0,
                ready_since: None,
                hist_index: 0,
                rec: Recorded {
                    class: 0,
                    ordinal: None,
                    alt: 0,
                    polls: Polls::default().push(PollInput {
                        clock: None,
                        reply: Some(Delivered::Reply(Reply::Values(values))),
                    }),
                },
            });
            s
        };
        let mut vx_as_y = vx.clone();
        vx_as_y[0].cas = vy[0].cas;
        assert_ne!(hash_of(&with_reply(vx)), hash_of(&with_reply(vx_as_y)));
    }
}
