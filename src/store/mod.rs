//! The store: one deterministic state machine, `apply(now, Command) -> Reply`, faithful to
//! memcached 1.6.18 as `../shared/reference/memcached-semantics.md` describes it.
//!
//! Every backend wraps this one core: the simulator owns one per server, [`crate::store::memstore`]
//! shares one between OS threads, and the TCP server exposes one.
//!
//! What it reproduces (section numbers of the reference):
//! - keys: only the length is checked (> 250 bytes → `CLIENT_ERROR bad command line
//!   format`; in a multi-get the whole reply is that error) (§2);
//! - the item size limit on the whole item (`item::item_size`): a too-large `set` deletes
//!   the old value, a too-large add/replace/cas keeps it, an append/prepend whose result
//!   is too large is `NOT_STORED` (§3);
//! - flags echoed as stored (§4); exptime rules: 0 never, up to 30 days relative, larger
//!   absolute, negative or past expired yet `STORED`, 1-second granularity (`store/expiry.rs`, §5);
//! - the storage outcomes, append/prepend keeping the old flags and exptime, `add` on a
//!   live key bumping its LRU position (§6); get/gets/gat/gats (§7);
//! - cas uniques: one global counter starting at 1; every successful store and every
//!   incr/decr takes a new one, touch/gat and failed stores do not, an immediate flush
//!   consumes one (§8);
//! - incr/decr: strtoull parsing, wrap, clamp, in-place rewrite with space padding,
//!   growth to an exact-length item, the non-numeric error (`store/arith.rs`, §9);
//! - delete, touch (§10, §11); flush_all with and without delay (§12): an immediate flush
//!   hides every existing item but, through the cas cliff, not those stored later in the
//!   same second; `flush_all <delay>` sets `oldest_live` to the second before its
//!   deadline and from that second on hides every item last updated up to it, including
//!   items stored after the command (so `flush_all 1` acts at once, on its own second too);
//! - a memory limit laid out as memcached lays it out (§15): pages of the geometry's
//!   `page_size` given to slab classes (`store/slabs.rs`), one chunk per item, each class
//!   with its own segmented LRU (HOT/WARM/COLD, the maintainer's juggle, `store/lru.rs`,
//!   which lists what is exact and what is approximated), evicting from the COLD tail of
//!   the item's own class; with eviction off (`-M`) `SERVER_ERROR out of memory storing
//!   object` (and `SERVER_ERROR out of memory` for a growing incr); per-class counters
//!   for `stats items` and `stats slabs` ([`Store::memory_report`]). Without a memory
//!   limit no slab bookkeeping is done;
//! - a persistent mode standing for MemcacheDB, kumofs and Flare: no eviction, no memory
//!   limit, data and the cas counter survive [`Store::restart`];
//! - the meta commands (`mg`, `ms`, `md`, `ma`, `me`, `mn`: `store/meta.rs`) on the same
//!   items, with the marks they need: fetched (`h`, `me`'s `fetch`), stale (`md … I`,
//!   `ms … I`), win token handed out (`W`/`Z`), key stored in base64 (`b`).
//!
//! What belongs elsewhere: tokenizing, arity `ERROR`, bad data chunks, the data block
//! parsed as a command after a command-line error, noreply suppression, and the 32-bit
//! truncation of flags/exptime/bytes are the wire codec's (`src/wire/`). A noreply command
//! still returns its reply here; the codec drops it.
//!
//! Flushed and expired items are reaped lazily, as memcached does: when a command meets
//! them, when memory is needed, or when the owner calls [`Store::crawl_expired`] and
//! [`Store::reap_flushed`] (what memcached's background LRU maintainer does; `kvsim
//! serve` calls them when a connection has been quiet). By 1.6.18's oldest-live rules
//! alone, a `flush_all <future>` sent after an immediate `flush_all` brings back the
//! items nothing has reaped since; once reaped they stay gone.
//!
//! `touch` and `gat` with any negative exptime expire the item at once (observed on a live
//! 1.6.18 even for `-1000000`, which plain `realtime()` arithmetic would wrap into the far
//! future).
//!
//! An item's `it->time` (its last access, which `mg … l`, `me`'s `la` and a delayed
//! flush read) is set when it is linked and refreshed by later accesses at most once per
//! 60 s, as memcached without its segmented LRU (`-o no_lru_maintainer`) does it
//! (`do_item_bump` → `do_item_update`): a hit of get/gets/gat/gats/touch or an `mg`
//! without `u` (which also marks the item fetched), an `add` that finds it, an in-place
//! incr/decr/`ma`. A memory-limited store with the segmented LRU (the geometry's
//! `lru_maintainer`, memcached's default) refreshes it as 1.6.18 does: on the second hit
//! and on every later update (`store/lru.rs`); a store without a memory limit keeps the
//! once-a-minute rule.
//!
//! Determinism: items live in a hash table (`store/table.rs`) whose order never shows (whatever
//! lists items goes by key order); the LRU segments and expiry index are ordered maps, the
//! slab classes vectors; the maintainer's passes happen at defined instants of the
//! commands (`store/lru.rs`). `Store` is `Clone + Hash + Eq` for stateright.

pub(crate) mod arith;
mod commands;
pub(crate) mod expiry;
pub mod geometry;
pub(crate) mod item;
pub(crate) mod lru;
pub mod memstore;
mod meta;
mod slabs;
mod table;

use crate::command::{ClientError, Command, Reply, StoreVerb, KEY_MAX_LEN};
use commands::Op;
use expiry::{is_expired, now_secs, Flush, ProcessClock};
use item::Item;
use lru::Memory;
pub use lru::{ClassReport, ItemStats, MemoryReport};
use std::collections::BTreeSet;
use std::ops::Bound;
use std::sync::Arc;
pub(crate) use table::fixed_hasher;
use table::Table;

/// memcached's `ITEM_UPDATE_INTERVAL`: `do_item_update` refreshes an item at most this often.
const ITEM_UPDATE_INTERVAL: i64 = 60;

/// How a store behaves: size limit, memory limit and eviction, persistence.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct StoreConfig {
    /// The largest item (`-I`, default 1 MiB = 1048576), counted on the whole item as
    /// memcached does (see `store/item.rs`, `item_size`).
    pub item_size_max: usize,
    /// Bytes of slab pages the store may take (`-m`); `None` = unlimited. A class with no
    /// page yet still gets its first page above the limit, as memcached's does.
    pub memory_limit: Option<usize>,
    /// When a class's memory is full: `true` evicts from its LRU's COLD tail; `false` is
    /// memcached `-M` (`SERVER_ERROR out of memory storing object`).
    pub evict: bool,
    /// Never evicts (ignores `memory_limit`) and keeps its data across
    /// [`Store::restart`]: MemcacheDB, kumofs, Flare.
    pub persistent: bool,
    /// How memory is laid out in slab classes (memcached's defaults unless scaled down).
    pub geometry: geometry::Geometry,
}

impl Default for StoreConfig {
    /// memcached's defaults, without a memory limit: 1 MiB items, eviction on, volatile.
    fn default() -> Self {
        StoreConfig {
            item_size_max: 1024 * 1024,
            memory_limit: None,
            evict: true,
            persistent: false,
            geometry: geometry::Geometry::default(),
        }
    }
}

/// A memcached 1.6.18 server's data, as a deterministic state machine.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Store {
    config: StoreConfig,
    clock: ProcessClock,
    items: Table,
    /// `(exptime, key)` of every item with an expiration.
    expiry: BTreeSet<(i64, Arc<[u8]>)>,
    /// The slab allocator and per-class LRUs: only with a memory limit (not persistent).
    mem: Option<Box<Memory>>,
    /// The last cas unique handed out (`cas_id`).
    cas_id: u64,
    flush: Flush,
    /// Whether the items the current flush hides were reaped since it took effect
    /// ([`Store::reap_flushed`]).
    flush_reaped: bool,
    /// Total size of the items held (plus an allocation in flight during a command).
    used: usize,
    /// Items evicted since the last [`Store::take_evicted`], their keys shared with the
    /// items they were ([`lru::Evicted`]).
    evicted: Vec<lru::Evicted>,
    /// The latest time the store was given (for [`Store::evict`]); not part of its identity.
    seen: Seen,
    /// What lookups met and what was linked, since the last [`Store::take_tally`]; not
    /// part of its identity.
    tally: Tally,
    /// Whether reads leave the items' access fields as they are
    /// ([`Store::untrack_access`]); not part of its identity.
    untracked: Untracked,
}

/// Whether a store's reads leave its items' access fields as they are
/// ([`Store::untrack_access`]). Equal and hash-neutral for every value, like [`Seen`]: it
/// changes no answer the store gives while it is set.
#[derive(Clone, Copy, Debug, Default)]
struct Untracked(bool);

/// Makes each type equal and hash-neutral for every value: fields of a store that are
/// not part of its identity ([`Seen`], [`Tally`], [`Untracked`]).
macro_rules! not_identity {
    ($($t:ty),*) => {$(
        impl PartialEq for $t {
            fn eq(&self, _: &$t) -> bool {
                true
            }
        }

        impl Eq for $t {}

        impl std::hash::Hash for $t {
            fn hash<H: std::hash::Hasher>(&self, _: &mut H) {}
        }
    )*};
}

not_identity!(Seen, Tally, Untracked);

/// What a store's commands did that memcached counts in `stats` but the replies do not
/// show: lookups that met an expired or a flushed item (`get_expired`, `get_flushed`:
/// memcached's `do_item_get` counts them for every command that looks an item up, a
/// `set` included), and items linked (`total_items`: every store, an append, an incr
/// that outgrew its item). Equal and hash-neutral for every value, like [`Seen`].
#[derive(Clone, Copy, Debug, Default)]
pub struct Tally {
    /// Lookups that met an expired item.
    pub expired: u64,
    /// Lookups that met a flushed item.
    pub flushed: u64,
    /// Items linked.
    pub linked: u64,
}

/// Names for cas uniques, given in order of first appearance: what
/// [`Store::hash_renamed`] and the explorer's canonical state hash use instead of the
/// numbers, so that two worlds that differ only in which unique each item got hash the
/// same.
#[derive(Clone, Debug, Default)]
pub(crate) struct CasNames {
    seen: smallvec::SmallVec<[u64; 8]>,
}

impl CasNames {
    /// Names continuing `uniques` (named 0, 1, … in that order).
    pub(crate) fn from_uniques(uniques: Vec<u64>) -> CasNames {
        CasNames {
            seen: uniques.into(),
        }
    }

    /// The uniques named so far, in order of their names.
    pub(crate) fn into_uniques(self) -> Vec<u64> {
        self.seen.into_vec()
    }

    /// The uniques named so far, in order of their names.
    pub(crate) fn as_slice(&self) -> &[u64] {
        &self.seen
    }

    /// The name of unique `cas`: the number of distinct uniques named before it.
    #[inline]
    pub(crate) fn name(&mut self, cas: u64) -> usize {
        match self.seen.iter().position(|&c| c == cas) {
            Some(i) => i,
            None => {
                self.seen.push(cas);
                self.seen.len() - 1
            }
        }
    }
}

/// The latest virtual time a store saw. Equal and hash-neutral for every value, so that
/// stores with the same data compare equal whenever they were last called.
#[derive(Clone, Copy, Debug, Default)]
struct Seen(u64);

impl Store {
    /// A fresh (empty) store whose process starts at virtual unix time `now_ms`.
    pub fn new(config: StoreConfig, now_ms: u64) -> Store {
        let mem = memory_of(&config);
        Store {
            config,
            clock: ProcessClock::start(now_ms),
            items: Table::default(),
            expiry: BTreeSet::new(),
            mem,
            cas_id: 0,
            flush: Flush::default(),
            flush_reaped: false,
            used: 0,
            evicted: Vec::new(),
            seen: Seen(now_ms),
            tally: Tally::default(),
            untracked: Untracked(false),
        }
    }

    /// From now on, reads of a store without a memory limit leave the items' last access
    /// times and fetched marks as they are (memcached's `do_item_bump` on a hit): for the
    /// explorer's time-free search, which nothing in reads them. Its stores keep no LRU
    /// (no memory limit), the states' digests leave those fields out (`table::Digest`),
    /// and every command that would show them (`mg … h` or `l`, `me`, a flush or an
    /// expiration against an item's time) involves time
    /// ([`crate::command::Command::involves_time`]), where that search stops and starts
    /// again with times. The same states, the same answers; the profile
    /// (spinlock/fixed 4 × 1) showed a read's touch copying the item table its state
    /// shares with its parent at a twelfth of the search.
    pub(crate) fn untrack_access(&mut self) {
        self.untracked = Untracked(true);
    }

    /// The configuration.
    pub fn config(&self) -> &StoreConfig {
        &self.config
    }

    /// Applies one command at virtual unix time `now_ms` (which never decreases between
    /// calls) and returns memcached's reply. Noreply commands return their reply too.
    pub fn apply(&mut self, now_ms: u64, command: &Command) -> Reply {
        self.around(now_ms, |s| s.apply_command(now_ms, command))
    }

    /// [`Store::apply`] of `Command::Store { verb, key, flags, exptime, data, .. }`, from
    /// borrowed parts: the same reply, state and tally. `MemStore`'s typed calls use it, so
    /// that a call builds no `Command`: building one (a copy of the key and of the data)
    /// and the deeper future that sends it were a third of `kvsim bench mq`'s writer.
    pub(crate) fn apply_store(
        &mut self,
        now_ms: u64,
        verb: StoreVerb,
        key: &[u8],
        flags: u32,
        exptime: i64,
        data: &[u8],
    ) -> Reply {
        self.around(now_ms, |s| {
            s.store(now_ms, Op::Plain(verb), key, flags, exptime, data)
        })
    }

    /// [`Store::apply`] of `Command::Get { with_cas, keys: vec![key] }`, from a borrowed
    /// key: the same reply, state and tally.
    pub(crate) fn apply_get(&mut self, now_ms: u64, with_cas: bool, key: &[u8]) -> Reply {
        self.around(now_ms, |s| {
            s.retrieve(now_secs(now_ms), with_cas, None, std::slice::from_ref(&key))
        })
    }

    /// A command at `now_ms` (`command`), with what every command does before (the
    /// latest time seen) and after it (the memory it set aside is given back).
    #[inline]
    fn around(&mut self, now_ms: u64, command: impl FnOnce(&mut Self) -> Reply) -> Reply {
        self.seen.0 = self.seen.0.max(now_ms);
        // Without slab accounting nothing is set aside: the reply goes straight to the
        // caller (the profile showed its copy through a temporary stall on a load that
        // straddled two of the command's own stores).
        if self.mem.is_none() {
            return command(self);
        }
        let reply = command(self);
        if let Some(mem) = self.mem.as_mut() {
            mem.release_pending();
        }
        reply
    }

    fn apply_command(&mut self, now_ms: u64, command: &Command) -> Reply {
        let now_s = now_secs(now_ms);
        match command {
            Command::Store {
                verb,
                key,
                flags,
                exptime,
                data,
                ..
            } => self.store(now_ms, Op::Plain(*verb), key, *flags, *exptime, data),
            Command::Cas {
                key,
                flags,
                exptime,
                data,
                unique,
                ..
            } => self.store(now_ms, Op::Cas(*unique), key, *flags, *exptime, data),
            Command::Get { with_cas, keys } => {
                if keys.is_empty() {
                    // `get` alone fails memcached's arity check.
                    return Reply::Error;
                }
                self.retrieve(now_s, *with_cas, None, keys)
            }
            Command::Gat {
                with_cas,
                exptime,
                keys,
            } => {
                let exp = self.clock.realtime(now_ms, *exptime);
                self.retrieve(now_s, *with_cas, Some(exp), keys)
            }
            Command::Arith {
                verb, key, delta, ..
            } => self.arith(now_s, *verb, key, *delta),
            Command::Delete { key, .. } => {
                if key.len() > KEY_MAX_LEN {
                    return Reply::ClientError(ClientError::BadCommandLineFormat);
                }
                if self.find(key, now_s) {
                    self.count_class(key, lru::SlabCount::DeleteHit);
                    self.unlink(key);
                    Reply::Deleted
                } else {
                    Reply::NotFound
                }
            }
            Command::Touch { key, exptime, .. } => {
                if key.len() > KEY_MAX_LEN {
                    return Reply::ClientError(ClientError::BadCommandLineFormat);
                }
                let exp = self.clock.realtime(now_ms, *exptime);
                if self.find(key, now_s) {
                    // do_item_touch: a hit (do_item_get with DO_UPDATE), then the new time.
                    self.hit(key, now_s);
                    self.count_class(key, lru::SlabCount::TouchHit);
                    if let Some(item) = self.items.get_mut(&key[..]) {
                        set_exptime(&mut self.expiry, item, exp);
                    }
                    Reply::Touched
                } else {
                    Reply::NotFound
                }
            }
            Command::FlushAll { delay, .. } => self.flush_all(now_ms, *delay),
            Command::Meta(meta) => self.meta(now_ms, meta),
        }
    }

    /// Forced eviction (fault injection) at the last time the store saw: removes `key`;
    /// `true` if a live item was removed.
    pub fn evict(&mut self, key: &[u8]) -> bool {
        self.evict_at(self.seen.0, key)
    }

    /// Forced eviction at `now_ms`: removes `key`; `true` if a live item was removed.
    pub fn evict_at(&mut self, now_ms: u64, key: &[u8]) -> bool {
        self.seen.0 = self.seen.0.max(now_ms);
        let now_s = now_secs(now_ms);
        match self.items.get(key) {
            Some(item) => {
                let live = !self.is_dead(item, now_s);
                self.unlink(key);
                live
            }
            None => false,
        }
    }

    /// Reclaims up to `max` expired items at `now_ms`, those that expired first first, as
    /// memcached's LRU crawler reclaims them in the background; the number reclaimed.
    /// What any command answers is unchanged (an expired item is a miss either way); the
    /// memory it held is free again. Items hidden by a flush are left to be reclaimed when
    /// touched or when memory is needed.
    pub fn crawl_expired(&mut self, now_ms: u64, max: usize) -> usize {
        self.seen.0 = self.seen.0.max(now_ms);
        let now_s = now_secs(now_ms);
        let expired: Vec<Arc<[u8]>> = self
            .expiry
            .iter()
            .take_while(|(exp, _)| is_expired(*exp, now_s))
            .take(max)
            .map(|(_, key)| Arc::clone(key))
            .collect();
        for key in &expired {
            self.unlink(key);
        }
        expired.len()
    }

    /// Restarts the server process at `now_ms`: a new `process_started`, no pending
    /// flush. A volatile store loses every item and its cas counter starts again at 1 (a
    /// unique read before the restart can then match a new item: memcached's behaviour).
    /// A persistent store keeps its live items and its counter (so uniques stay distinct).
    pub fn restart(&mut self, now_ms: u64) {
        self.seen.0 = self.seen.0.max(now_ms);
        let now_s = now_secs(now_ms);
        if self.config.persistent {
            let dead: Vec<Arc<[u8]>> = self
                .items
                .unordered()
                .filter(|it| self.is_dead(it, now_s))
                .map(|it| Arc::clone(&it.key))
                .collect();
            for key in dead {
                self.unlink(&key);
            }
        } else {
            self.items.clear();
            self.expiry.clear();
            if let Some(mem) = self.mem.as_mut() {
                mem.clear();
            }
            self.used = 0;
            self.cas_id = 0;
        }
        self.clock = ProcessClock::start(now_ms);
        self.flush = Flush::default();
        self.flush_reaped = false;
    }

    /// Reaps every item a flush that has taken effect hides, as memcached's LRU
    /// maintainer thread reaps flushed items from its LRU tails soon after the flush;
    /// the number reaped. What a command answers is unchanged for those items (a flushed
    /// item is a miss either way), but a later `flush_all <delay>`, which moves
    /// `oldest_live` into the future, can no longer bring them back (on a real 1.6.18
    /// they come back only if no maintainer reaped them first: `-o no_lru_maintainer`, or
    /// the commands arrive together). Scans the items once per flush that takes effect.
    pub fn reap_flushed(&mut self, now_ms: u64) -> usize {
        self.seen.0 = self.seen.0.max(now_ms);
        let now_s = now_secs(now_ms);
        match self.flush.oldest_live {
            Some(ol) if ol <= now_s && !self.flush_reaped => {}
            _ => return 0,
        }
        self.flush_reaped = true;
        let flushed: Vec<Arc<[u8]>> = self
            .items
            .unordered()
            .filter(|it| self.flush.is_flushed(it.time, it.cas, now_s))
            .map(|it| Arc::clone(&it.key))
            .collect();
        for key in &flushed {
            self.unlink(key);
        }
        flushed.len()
    }

    /// How many items the store holds, dead ones not yet reaped included (memcached's
    /// `curr_items`).
    pub fn item_count(&self) -> usize {
        self.items.len()
    }

    /// The live (unexpired, unflushed) keys at `now_ms`, sorted.
    pub fn live_keys(&self, now_ms: u64) -> Vec<Vec<u8>> {
        let now_s = now_secs(now_ms);
        self.items
            .sorted()
            .into_iter()
            .filter(|it| !self.is_dead(it, now_s))
            .map(|it| it.key.to_vec())
            .collect()
    }

    /// Every item the store holds, in key order, each with whether it is dead at `now_ms`
    /// (expired or flushed, not yet reaped): the store as a viewer of a run shows it.
    pub fn items_at(&self, now_ms: u64) -> Vec<(&Item, bool)> {
        let now_s = now_secs(now_ms);
        self.items
            .sorted()
            .into_iter()
            .map(|it| (it, self.is_dead(it, now_s)))
            .collect()
    }

    /// What the commands since the last call did that `stats` counts ([`Tally`]).
    pub fn take_tally(&mut self) -> Tally {
        std::mem::take(&mut self.tally)
    }

    /// Items evicted since the last call (oldest eviction first), each with the slab class
    /// it was evicted from.
    pub fn take_evicted(&mut self) -> Vec<geometry::Eviction> {
        self.drain_evicted(|_| true)
    }

    /// [`Store::take_evicted`] without the keys that begin with `prefix`: the simulator's
    /// world leaves out the noisy neighbour's. The keys left out are never copied (the
    /// profile, message-queue/fixed with the scenario lru: nearly every eviction is the
    /// neighbour's).
    pub(crate) fn take_evicted_except(&mut self, prefix: &[u8]) -> Vec<geometry::Eviction> {
        self.drain_evicted(|key| !key.starts_with(prefix))
    }

    /// The evictions since the last call whose key `keep` accepts; the list is emptied.
    fn drain_evicted(&mut self, keep: impl Fn(&[u8]) -> bool) -> Vec<geometry::Eviction> {
        // Asked after every command, nearly always of nothing: the profile (the simulator's
        // bench) showed the empty drain and collect at ~90 instructions a call.
        if self.evicted.is_empty() {
            return Vec::new();
        }
        self.evicted
            .drain(..)
            .filter(|e| keep(&e.key[..]))
            .map(lru::Evicted::into_eviction)
            .collect()
    }

    /// The earliest virtual time (ms, `> now_ms`) at which some live item dies by
    /// expiry or by a pending delayed `flush_all`; `None` if no live item ever will.
    pub fn next_expiry_ms(&self, now_ms: u64) -> Option<u64> {
        let now_s = now_secs(now_ms);
        let from: (i64, Arc<[u8]>) = (now_s + 1, Arc::from(&[][..]));
        let by_expiry = self
            .expiry
            .range((Bound::Included(from), Bound::Unbounded))
            .find(|(_, key)| {
                self.items
                    .get(&key[..])
                    .is_some_and(|it| !self.is_dead(it, now_s))
            })
            .map(|(exp, _)| *exp);
        let by_flush = match self.flush.oldest_live {
            Some(ol) if ol > now_s => self
                .items
                .unordered()
                .any(|it| !self.is_dead(it, now_s) && it.time <= ol)
                .then_some(ol),
            _ => None,
        };
        let secs = match (by_expiry, by_flush) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }?;
        Some(secs as u64 * 1000)
    }

    /// The live item under `key` at `now_ms`, without touching it (for tests and traces).
    pub fn peek(&self, now_ms: u64, key: &[u8]) -> Option<&Item> {
        let now_s = now_secs(now_ms);
        self.items.get(key).filter(|it| !self.is_dead(it, now_s))
    }

    /// Total bytes of the items held, counted as memcached counts them.
    pub fn used_bytes(&self) -> usize {
        self.used
    }

    /// The last cas unique handed out (0 after a volatile restart).
    pub fn last_cas(&self) -> u64 {
        self.cas_id
    }

    /// Checks the store's internal consistency: the byte count equals the items' sizes,
    /// the pages taken stay within the memory limit plus one first page per class, every
    /// class's chunks in use match its items, the expiry index lists exactly the items
    /// with an expiration, the LRU segments list exactly the items when kept, and no
    /// unique exceeds the counter. For tests and the simulator's invariant
    /// checks; `Err` says what is inconsistent.
    pub fn check_invariants(&self) -> Result<(), String> {
        let sum: usize = self.items.unordered().map(Item::size).sum();
        if sum != self.used {
            return Err(format!(
                "used bytes: expected {sum} (the items' sizes), found {}",
                self.used
            ));
        }
        if let Some(mem) = &self.mem {
            let slabs = &mem.slabs;
            let pages: usize = slabs.class.iter().map(|c| c.pages).sum();
            let first_pages = slabs.class.iter().filter(|c| c.pages > 0).count();
            // A class's first page may go above the limit (`do_slabs_newslab`).
            let most = slabs.limit + first_pages * slabs.page_size;
            if (pages + slabs.pool) * slabs.page_size != slabs.malloced || slabs.malloced > most {
                return Err(format!(
                    "memory: expected {} bytes of pages, at most {most}, found {}",
                    (pages + slabs.pool) * slabs.page_size,
                    slabs.malloced
                ));
            }
        }
        let with_exp: BTreeSet<(i64, Arc<[u8]>)> = self
            .items
            .unordered()
            .filter(|it| it.exptime != 0)
            .map(|it| (it.exptime, Arc::clone(&it.key)))
            .collect();
        if with_exp != self.expiry {
            return Err(format!(
                "expiry index: expected {} entries matching the items, found {}",
                with_exp.len(),
                self.expiry.len()
            ));
        }
        match &self.mem {
            Some(mem) => mem.check(self.items.unordered())?,
            None if self.items.unordered().any(|it| it.tick != 0) => {
                return Err("lru: expected no order when none is kept, found one".to_string());
            }
            None => {}
        }
        if let Some(it) = self
            .items
            .sorted()
            .into_iter()
            .find(|it| it.cas == 0 || it.cas > self.cas_id)
        {
            return Err(format!(
                "cas: expected uniques in 1..={}, found {} on {}",
                self.cas_id,
                it.cas,
                crate::command::show_bytes(&it.key)
            ));
        }
        Ok(())
    }

    // ---- internals -------------------------------------------------------------------

    fn limit(&self) -> Option<usize> {
        if self.config.persistent {
            None
        } else {
            self.config.memory_limit
        }
    }

    /// Whether the store compares cas uniques by order, not only for equality: a
    /// `flush_all` with a delay remembers the unique it was given (`oldest_cas`) and
    /// flushes older items. Renaming uniques is then not sound.
    pub(crate) fn orders_cas(&self) -> bool {
        self.flush.oldest_cas != 0
    }

    /// Whether nothing this store answers depends on the time, as long as no command
    /// [involves time](crate::command::Command::involves_time): no item expires, nothing
    /// was flushed, and without a memory limit nothing is evicted, so neither the items'
    /// last access times, nor their LRU order, nor the server's clock can show. Two such
    /// stores with the same items answer every such command alike at any two times (the
    /// explorer's time-free search, `explore::canon`, relies on it). A command that
    /// reports times or the access history (`mg … l`/`h`, `me`) involves time, so the
    /// guard stops a time-free search before it.
    pub(crate) fn time_free(&self) -> bool {
        self.limit().is_none() && self.expiry.is_empty() && self.flush == Flush::default()
    }

    /// Hashes the store as its derived `Hash` does, except for cas uniques: each is hashed
    /// by the name `names` gives it, and the last unique handed out not at all. With
    /// `timeless` (only for a [`Store::time_free`] store), the server's clock, the items'
    /// last access times and their LRU order are left out as well.
    ///
    /// Sound when the store compares uniques only for equality (not
    /// [`Store::orders_cas`]): a store gives a new item a unique larger than every unique
    /// it gave before, so two stores whose items' uniques are a renaming of each other
    /// answer every command alike, up to that renaming.
    pub(crate) fn hash_renamed<H: std::hash::Hasher>(
        &self,
        h: &mut H,
        names: &mut CasNames,
        timeless: bool,
    ) {
        use std::hash::Hash;
        debug_assert!(!self.orders_cas());
        debug_assert!(!timeless || self.time_free());
        // Destructured, so that a new field cannot be left out of the hash unnoticed.
        let Store {
            config,
            clock,
            items,
            expiry,
            mem,
            cas_id: _,
            flush,
            flush_reaped,
            used,
            evicted,
            seen: _,
            tally: _,
            untracked: _,
        } = self;
        config.hash(h);
        if !timeless {
            clock.hash(h);
        }
        // The items (see `table::Digest`), with their uniques named in order of first
        // appearance: the same information as hashing them in key order with the names.
        h.write_usize(items.len());
        let digest = items.digest();
        h.write_u64(digest.shape);
        if !timeless {
            h.write_u64(items.times());
        }
        for &cas in &digest.uniques {
            h.write_usize(names.name(cas));
        }
        expiry.hash(h);
        if !timeless {
            mem.hash(h);
        }
        flush.hash(h);
        flush_reaped.hash(h);
        used.hash(h);
        evicted.hash(h);
    }

    fn next_cas(&mut self) -> u64 {
        self.cas_id += 1;
        self.cas_id
    }

    fn is_dead(&self, item: &Item, now_s: i64) -> bool {
        dead(&self.flush, item, now_s)
    }

    /// `do_item_get`'s liveness check: whether a live item is under `key`; a dead one is
    /// unlinked on the way.
    fn find(&mut self, key: &[u8], now_s: i64) -> bool {
        // One lookup when the item is live or absent (what nearly every command meets).
        let Some(item) = self.items.get(key) else {
            return false;
        };
        if count_dead(&self.flush, &mut self.tally, item, now_s) {
            self.unlink(key);
            return false;
        }
        true
    }

    /// Whether the item under `key` is dead; if it is, the lookup that met it is counted
    /// (`do_item_get`: flushed before expired).
    fn met_dead(&mut self, key: &[u8], now_s: i64) -> bool {
        let Some(item) = self.items.get(key) else {
            return false;
        };
        count_dead(&self.flush, &mut self.tally, item, now_s)
    }

    fn unlink(&mut self, key: &[u8]) -> Option<Item> {
        let item = self.items.remove(key)?;
        if item.exptime != 0 {
            self.expiry.remove(&(item.exptime, Arc::clone(&item.key)));
        }
        self.mem_unlink(&item);
        self.used -= item.size();
        Some(item)
    }

    /// `do_item_update` on a live item (an `add` that finds it, an in-place incr): its
    /// time is refreshed if older than [`ITEM_UPDATE_INTERVAL`], and it moves to the most
    /// recently used end.
    fn update(&mut self, key: &[u8], now_s: i64) {
        self.touch_item(key, now_s, false);
    }

    /// `do_item_bump` on a live item (a hit of get/gets/gat/gats/touch, an `mg` without
    /// `u`), as memcached without its segmented LRU (`-o no_lru_maintainer`) does it: the
    /// item is marked fetched, then updated ([`Store::update`]).
    fn hit(&mut self, key: &[u8], now_s: i64) {
        self.touch_item(key, now_s, true);
    }

    fn touch_item(&mut self, key: &[u8], now_s: i64, fetch: bool) {
        if self.mem.is_some() {
            return self.mem_touch(key, now_s, fetch);
        }
        if self.untracked.0 {
            return;
        }
        // Look first, so that a read that changes nothing leaves the table shared.
        let changes = self.items.get(key).is_some_and(|item| {
            (fetch && !item.fetched) || item.time < now_s - ITEM_UPDATE_INTERVAL
        });
        if !changes {
            return;
        }
        self.items.update_access(key, |item| {
            if fetch {
                item.fetched = true;
            }
            if item.time < now_s - ITEM_UPDATE_INTERVAL {
                item.time = now_s;
            }
        });
    }

    /// Links a new item under `key` (replacing any old one): a fresh cas unique, `time`
    /// now, the most recently used position, no marks. Returns the unique.
    fn link(&mut self, key: &[u8], data: &[u8], flags: u32, exp: i64, now_s: i64) -> u64 {
        let cas = self.next_cas();
        self.tally.linked += 1;
        if let Some(item) = self.items.get_mut(key) {
            // item_replace: the old item goes, a new one takes its place.
            let old_size = item.size();
            let old = (old_size, item.class, item.seg, item.tick);
            item.data.clear();
            item.data.extend_from_slice(data);
            item.flags = flags;
            item.cas = cas;
            item.time = now_s;
            item.clear_marks();
            let new_size = item.size();
            self.used = self.used - old_size + new_size;
            set_exptime(&mut self.expiry, item, exp);
            self.mem_link(key, Some(old));
            return cas;
        }
        let key: Arc<[u8]> = Arc::from(key);
        if exp != 0 {
            self.expiry.insert((exp, Arc::clone(&key)));
        }
        let mut item = Item::new(Arc::clone(&key), data.to_vec(), flags, exp, now_s);
        item.cas = cas;
        self.used += item.size();
        self.items.insert(Arc::clone(&key), item);
        if self.mem.is_some() {
            self.mem_link(&key, None);
        }
        cas
    }
}

/// The memory a store with `config` keeps: slabs and LRUs with a memory limit, unless
/// persistent.
fn memory_of(config: &StoreConfig) -> Option<Box<Memory>> {
    match config.memory_limit {
        Some(limit) if !config.persistent => Some(Box::new(Memory::new(&config.geometry, limit))),
        _ => None,
    }
}

/// Whether `item` is dead at `now_s`: expired, or hidden by a flush. (A function of the
/// flush state, not of the whole store, so that it can judge an item borrowed from it.)
fn dead(flush: &Flush, item: &Item, now_s: i64) -> bool {
    is_expired(item.exptime, now_s) || flush.is_flushed(item.time, item.cas, now_s)
}

/// Whether `item`, met by a lookup, is dead at `now_s`; a dead one is counted in `tally`
/// (`do_item_get`: flushed before expired).
#[inline]
fn count_dead(flush: &Flush, tally: &mut Tally, item: &Item, now_s: i64) -> bool {
    if flush.is_flushed(item.time, item.cas, now_s) {
        tally.flushed += 1;
        true
    } else if is_expired(item.exptime, now_s) {
        tally.expired += 1;
        true
    } else {
        false
    }
}

/// Sets an item's expiration and keeps the expiry index in step.
fn set_exptime(expiry: &mut BTreeSet<(i64, Arc<[u8]>)>, item: &mut Item, exp: i64) {
    if item.exptime == exp {
        return;
    }
    if item.exptime != 0 {
        expiry.remove(&(item.exptime, Arc::clone(&item.key)));
    }
    if exp != 0 {
        expiry.insert((exp, Arc::clone(&item.key)));
    }
    item.exptime = exp;
}

#[cfg(test)]
mod tests;
