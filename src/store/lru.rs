//! memcached 1.6.18's per-class segmented LRU (`items.c`, `doc/new_lru.txt`) over the slab
//! allocator (`store/slabs.rs`), kept only when the store has a memory limit.
//!
//! Every slab class has its own LRU, split in segments: HOT (new items), WARM (items hit
//! twice), COLD (eviction candidates). What is exact:
//! - a new item goes to the head of its class's HOT (COLD with `-o no_lru_maintainer`,
//!   which turns the segmented LRU off: `lru_segmented = false`);
//! - a hit marks the item fetched, a second hit active (`do_item_get`): in HOT or WARM
//!   that refreshes its time (`do_item_update`, every time in 1.6.18); an active item
//!   in COLD moves to WARM (memcached queues this bump for the maintainer; kvsim does it at
//!   once); without the segmented LRU a hit refreshes the time and moves the item to the
//!   head at most once per 60 s;
//! - an allocation runs `do_item_alloc_pull`: up to 10 rounds of taking a chunk, else
//!   `lru_pull_tail` on COLD with eviction (at most 5 tail items looked at: expired and
//!   flushed ones are reclaimed and the walk goes on, the first live one is evicted), and
//!   when that removed nothing, one pull on HOT (which moves its tail to COLD, or an active
//!   tail to WARM); without the segmented LRU a pull on COLD reclaims first, and a round
//!   that neither allocates nor evicts ends the loop;
//! - the maintainer's juggle of a class (`lru_maintainer_juggle`): up to 500 rounds of
//!   pulling HOT (limit 20% of the class's bytes, or older than 0.2 × the COLD tail's age),
//!   else WARM (40%, 2 × the age; active items stay in WARM) and COLD (active items go to
//!   WARM), with the counters `moves_to_cold`, `moves_to_warm`, `moves_within_lru`;
//! - the counters `evicted`, `evicted_nonzero`, `evicted_time`, `evicted_unfetched`,
//!   `evicted_active`, `reclaimed`, `expired_unfetched`, `outofmemory`, `direct_reclaims`.
//!
//! What is approximated (and why):
//! - the maintainer is a thread that wakes every 0 to 1 s (`MAX_LRU_MAINTAINER_SLEEP`),
//!   sooner while it finds work; kvsim runs its pass at a deterministic instant standing
//!   for "soon": before the next command that allocates, at most once per virtual
//!   millisecond (commands that arrive together see no pass), juggling the classes linked into
//!   since the last pass (all classes when the second changed), then moving the COLD
//!   items whose second hit queued a bump. Under a fast stream the real thread lags a
//!   little behind or runs between two commands, so a few items near the boundary of
//!   HOT/COLD differ (`tests/memcached_eviction.rs` measures it);
//! - TEMP_LRU (`-o temporary_ttl`, off by default) is not modelled;
//! - slab automove (moving whole pages between classes) is not modelled: a class keeps
//!   the pages it took;
//! - an item held by the command in flight (an append's or incr's original) is skipped
//!   by the tail walk (memcached counts it in `lrutail_reflocked` and may unlink it while
//!   keeping its memory).

use super::item::Item;
use super::slabs::Slabs;
use super::Store;
use std::collections::VecDeque;
use std::fmt;
use std::hash::{Hash, Hasher};
use std::sync::Arc;

/// The HOT segment.
pub(crate) const HOT: u8 = 0;
/// The WARM segment.
pub(crate) const WARM: u8 = 1;
/// The COLD segment.
pub(crate) const COLD: u8 = 2;

/// memcached's `ITEM_UPDATE_INTERVAL`.
const UPDATE_INTERVAL: i64 = 60;

/// One class's counters, as `stats items` shows them (`itemstats_t`, summed over the
/// class's segments).
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct ItemStats {
    /// Live items evicted.
    pub evicted: u64,
    /// Evicted items that had an expiration time.
    pub evicted_nonzero: u64,
    /// Seconds since the last evicted item's last access.
    pub evicted_time: u64,
    /// Allocations that failed.
    pub outofmemory: u64,
    /// Expired or flushed items reclaimed at a tail.
    pub reclaimed: u64,
    /// Reclaimed items never fetched.
    pub expired_unfetched: u64,
    /// Evicted items never fetched.
    pub evicted_unfetched: u64,
    /// Evicted items marked active.
    pub evicted_active: u64,
    /// Tail items skipped because a command held them.
    pub lrutail_reflocked: u64,
    /// Items moved from HOT or WARM to COLD.
    pub moves_to_cold: u64,
    /// Items moved to WARM.
    pub moves_to_warm: u64,
    /// Active items moved to WARM's head.
    pub moves_within_lru: u64,
    /// Allocation rounds that had to pull a tail.
    pub direct_reclaims: u64,
    /// Retrieval hits by the segment the hit left the item in: HOT, WARM, COLD, TEMP
    /// (`hits_to_*`; their sum is `stats slabs`' `get_hits`).
    pub hits: [u64; 4],
    /// Storage commands whose item was allocated in this class.
    pub cmd_set: u64,
    /// `delete` hits.
    pub delete_hits: u64,
    /// `incr` hits.
    pub incr_hits: u64,
    /// `decr` hits.
    pub decr_hits: u64,
    /// `cas` that stored.
    pub cas_hits: u64,
    /// `cas` that lost.
    pub cas_badval: u64,
    /// `touch`, `gat`, `gats` hits.
    pub touch_hits: u64,
}

/// A per-class command counter of `stats slabs`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum SlabCount {
    GetHit,
    TouchHit,
    DeleteHit,
    IncrHit,
    DecrHit,
    CasHit,
    CasBadval,
}

/// One segment of one class: its items by position (the smallest tick is the tail) and
/// their bytes (`sizes_bytes`).
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
struct Segment {
    order: Order,
    bytes: usize,
}

/// A segment's keys by position (tick), the tail first: what a `BTreeMap<u64, Arc<[u8]>>`
/// held, and compared, hashed and printed as that map (the same states, the same hashes).
///
/// A new position is always the largest yet (the clock only grows), so an item joins at
/// the back, and most leave from the front (evictions, moves to COLD): a queue does both
/// in constant time. The profile (message-queue/fixed, scenario lru) showed the map's
/// inserts and removals at a twentieth of the run. An item taken out of the middle
/// leaves a hole (`None`), never at either end; holes are swept out when they outnumber
/// the items.
#[derive(Clone, Default)]
struct Order {
    /// `(tick, key)` by increasing tick; `None` where an item was taken out.
    slots: VecDeque<(u64, Option<Arc<[u8]>>)>,
    /// The keys listed (the slots that are not holes).
    live: usize,
}

impl Order {
    /// The number of keys.
    fn len(&self) -> usize {
        self.live
    }

    /// The tail: the smallest position and its key.
    #[inline]
    fn first(&self) -> Option<(u64, &Arc<[u8]>)> {
        self.slots
            .front()
            .map(|(t, k)| (*t, k.as_ref().expect("no hole at an end")))
    }

    /// The first key at position `tick` or later.
    fn first_from(&self, tick: u64) -> Option<(u64, &Arc<[u8]>)> {
        let i = self.slots.partition_point(|(t, _)| *t < tick);
        self.slots
            .range(i..)
            .find_map(|(t, k)| k.as_ref().map(|k| (*t, k)))
    }

    /// The index of the slot at position `tick`.
    #[inline]
    fn slot(&self, tick: u64) -> Option<usize> {
        // The tail first: most items leave from there.
        if self.slots.front().is_some_and(|(t, _)| *t == tick) {
            return Some(0);
        }
        self.slots.binary_search_by_key(&tick, |(t, _)| *t).ok()
    }

    /// The key at position `tick`.
    fn get(&self, tick: u64) -> Option<&Arc<[u8]>> {
        self.slots[self.slot(tick)?].1.as_ref()
    }

    /// Puts `key` at position `tick`, larger than every position listed (the head).
    #[inline]
    fn push(&mut self, tick: u64, key: Arc<[u8]>) {
        debug_assert!(self.slots.back().is_none_or(|(t, _)| *t < tick));
        self.slots.push_back((tick, Some(key)));
        self.live += 1;
    }

    /// Takes out the key at position `tick`.
    #[inline]
    fn remove(&mut self, tick: u64) -> Option<Arc<[u8]>> {
        let i = self.slot(tick)?;
        let key = self.slots[i].1.take()?;
        self.live -= 1;
        while self.slots.front().is_some_and(|(_, k)| k.is_none()) {
            self.slots.pop_front();
        }
        while self.slots.back().is_some_and(|(_, k)| k.is_none()) {
            self.slots.pop_back();
        }
        if self.slots.len() > 2 * self.live + 16 {
            self.slots.retain(|(_, k)| k.is_some());
        }
        Some(key)
    }

    /// The positions and keys, the tail first.
    fn iter(&self) -> impl Iterator<Item = (&u64, &Arc<[u8]>)> {
        self.slots
            .iter()
            .filter_map(|(t, k)| k.as_ref().map(|k| (t, k)))
    }
}

impl PartialEq for Order {
    /// The map's: the same keys at the same positions (holes do not count).
    fn eq(&self, other: &Order) -> bool {
        self.live == other.live && self.iter().eq(other.iter())
    }
}

impl Eq for Order {}

impl Hash for Order {
    /// The map's hash (`BTreeMap`'s: the length, then every entry in order).
    fn hash<H: Hasher>(&self, state: &mut H) {
        // The length as the map writes it (`write_length_prefix`, not stable to call): a
        // slice of `live` units writes its length and nothing else (and allocates nothing).
        vec![(); self.live].hash(state);
        for entry in self.iter() {
            entry.hash(state);
        }
    }
}

impl fmt::Debug for Order {
    /// The map's form: `{tick: key, …}`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_map().entries(self.iter()).finish()
    }
}

/// A memory-limited store's memory: the slab allocator and the per-class LRUs.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(crate) struct Memory {
    /// Pages and chunks.
    pub slabs: Slabs,
    /// Per class: HOT, WARM, COLD.
    segs: Vec<[Segment; 3]>,
    /// Per class counters.
    pub stats: Vec<ItemStats>,
    /// The last position handed out.
    clock: u64,
    /// Whether the LRU is segmented (the maintainer runs).
    pub segmented: bool,
    /// Allocations in flight, `(size, key length)`, until linked or dropped.
    pending: Vec<(usize, usize)>,
    /// The second of the maintainer's last pass over every class.
    swept: i64,
    /// Hits that made a COLD item active, `(key, cas)`, queued for the maintainer
    /// (`lru_bump_async`).
    bumps: Vec<(Arc<[u8]>, u64)>,
    /// Classes linked into since the maintainer's last pass.
    dirty: Vec<u8>,
    /// The virtual millisecond of the maintainer's last pass (it sleeps at least 1 ms).
    passed_ms: u64,
}

impl Memory {
    /// An empty memory of `limit` bytes.
    pub fn new(geometry: &super::geometry::Geometry, limit: usize) -> Memory {
        let slabs = Slabs::new(geometry, limit);
        let n = slabs.classes.len();
        Memory {
            slabs,
            segs: vec![Default::default(); n],
            stats: vec![ItemStats::default(); n],
            clock: 0,
            segmented: geometry.lru_maintainer,
            pending: Vec::new(),
            swept: 0,
            bumps: Vec::new(),
            dirty: Vec::new(),
            passed_ms: 0,
        }
    }

    /// Items in each segment of class `c`: HOT, WARM, COLD.
    pub fn counts(&self, c: usize) -> [usize; 3] {
        let s = &self.segs[c];
        [s[0].order.len(), s[1].order.len(), s[2].order.len()]
    }

    /// Bytes of the items in class `c` (`mem_requested`).
    pub fn bytes(&self, c: usize) -> usize {
        self.segs[c].iter().map(|s| s.bytes).sum()
    }

    /// The key at the tail of segment `seg` of class `c` (looked at in place).
    fn tail(&self, c: usize, seg: u8) -> Option<&[u8]> {
        self.segs[c][seg as usize]
            .order
            .first()
            .map(|(_, k)| &k[..])
    }

    /// Puts `item` at the head of segment `seg` of class `class`.
    fn link_q(&mut self, item: &mut Item, class: usize, seg: u8) {
        self.clock += 1;
        item.tick = self.clock;
        item.class = class as u8;
        item.seg = seg;
        let s = &mut self.segs[class][seg as usize];
        s.order.push(self.clock, Arc::clone(&item.key));
        s.bytes += item.size();
    }

    /// Takes `item` out of its segment.
    fn unlink_q(&mut self, item: &Item) {
        let s = &mut self.segs[item.class as usize][item.seg as usize];
        s.order.remove(item.tick);
        s.bytes -= item.size();
    }

    /// Moves `item` to the head of its class's segment `seg`, no longer active (the
    /// maintainer's and a bump's move).
    fn relink(&mut self, item: &mut Item, seg: u8) {
        item.active = false;
        self.unlink_q(item);
        self.link_q(item, item.class as usize, seg);
    }

    /// Frees the chunks an item of `size` bytes with a `key_len`-byte key holds.
    fn free_chunks(&mut self, size: usize, key_len: usize) {
        for c in self.slabs.chunks_of(size, key_len) {
            self.slabs.free(c as usize);
        }
    }

    /// Frees every allocation still in flight (the command did not link it).
    pub fn release_pending(&mut self) {
        while let Some((size, key_len)) = self.pending.pop() {
            self.free_chunks(size, key_len);
        }
    }

    /// Forgets every item and page (a restart); the counters stay.
    pub fn clear(&mut self) {
        self.slabs.clear();
        for segs in &mut self.segs {
            *segs = Default::default();
        }
        self.clock = 0;
        self.pending.clear();
        self.bumps.clear();
        self.dirty.clear();
    }

    /// Checks that the segments list exactly `items` and the chunks in use match them.
    pub fn check<'a>(&self, items: impl Iterator<Item = &'a Item>) -> Result<(), String> {
        let mut used = vec![0usize; self.slabs.classes.len()];
        let mut listed = 0;
        for it in items {
            listed += 1;
            let seg = &self.segs[it.class as usize][it.seg as usize];
            if seg.order.get(it.tick).map(|k| &k[..]) != Some(&it.key[..]) {
                return Err(format!(
                    "lru: expected {} in class {} segment {}, found it missing",
                    crate::command::show_bytes(&it.key),
                    it.class as usize + 1,
                    it.seg
                ));
            }
            for c in self.slabs.chunks_of(it.size(), it.key.len()) {
                used[c as usize] += 1;
            }
        }
        let in_segs: usize = self.segs.iter().flatten().map(|s| s.order.len()).sum();
        if in_segs != listed {
            return Err(format!(
                "lru: expected {listed} entries matching the items, found {in_segs}"
            ));
        }
        for (c, (u, mem)) in used.iter().zip(&self.slabs.class).enumerate() {
            if *u != mem.used || mem.used > mem.pages * self.slabs.classes[c].per_page {
                return Err(format!(
                    "slab class {}: expected {u} chunks in use within {} pages, found {}",
                    c + 1,
                    mem.pages,
                    mem.used
                ));
            }
        }
        Ok(())
    }
}

/// An item the store evicted ([`super::geometry::Eviction`]), its key shared with the item
/// it was: copied only for whoever takes it ([`Store::take_evicted`]). Compared, hashed and
/// printed as the `Eviction` it stands for.
#[derive(Clone, PartialEq, Eq, Hash)]
pub(crate) struct Evicted {
    /// The evicted item's key.
    pub key: Arc<[u8]>,
    /// The class whose memory was pressed.
    pub class: super::geometry::SlabClass,
}

impl Evicted {
    /// The public record, with its own copy of the key.
    pub(crate) fn into_eviction(self) -> super::geometry::Eviction {
        super::geometry::Eviction {
            key: self.key.to_vec(),
            class: self.class,
        }
    }
}

impl fmt::Debug for Evicted {
    /// The `Eviction`'s form.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Eviction")
            .field("key", &&self.key[..])
            .field("class", &self.class)
            .finish()
    }
}

/// What a tail walk does with the item it stops at.
enum Stop {
    Keep,
    Move(u8, Arc<[u8]>),
}

impl Store {
    /// `do_item_alloc`'s memory for an item of `size` bytes under a `key_len`-byte key:
    /// every chunk it needs, each by `do_item_alloc_pull`, evicting from the item's slab
    /// class when eviction is on. `pinned` is never reclaimed (memcached holds a reference
    /// to it). On success the allocation is in flight until [`Store::mem_link`] takes it
    /// (or the command ends); on failure `outofmemory` is counted. Without a memory limit
    /// there is nothing to allocate.
    #[inline]
    pub(super) fn make_room(
        &mut self,
        size: usize,
        key_len: usize,
        now_s: i64,
        pinned: Option<&[u8]>,
    ) -> bool {
        if self.mem.is_none() {
            return true;
        }
        self.alloc_chunks(size, key_len, now_s, pinned)
    }

    /// [`Store::make_room`] on a store with a memory limit.
    fn alloc_chunks(
        &mut self,
        size: usize,
        key_len: usize,
        now_s: i64,
        pinned: Option<&[u8]>,
    ) -> bool {
        // The maintainer has passed since the last command that linked an item.
        self.maintainer_pass(now_s);
        let mem = self.mem.as_ref().expect("memory is kept");
        let chunks = mem.slabs.chunks_of(size, key_len);
        let lru_class = mem.slabs.class_index(size);
        for (n, &c) in chunks.iter().enumerate() {
            if !self.alloc_pull(c as usize, now_s, pinned) {
                let mem = self.mem.as_mut().expect("memory is kept");
                for &d in &chunks[..n] {
                    mem.slabs.free(d as usize);
                }
                mem.stats[lru_class].outofmemory += 1;
                return false;
            }
        }
        let mem = self.mem.as_mut().expect("memory is kept");
        mem.pending.push((size, key_len));
        true
    }

    /// `do_item_alloc_pull`: one chunk of class `c`, pulling tails when none is free.
    fn alloc_pull(&mut self, c: usize, now_s: i64, pinned: Option<&[u8]>) -> bool {
        let segmented = self.mem.as_ref().is_some_and(|m| m.segmented);
        let mut got = false;
        let mut rounds = 0u64;
        while rounds < 10 {
            if !segmented {
                self.pull_tail(c, COLD, 0, false, 0, now_s, pinned);
            }
            if self.mem.as_mut().expect("memory is kept").slabs.alloc(c) {
                got = true;
                break;
            }
            if self.pull_tail(c, COLD, 0, true, 0, now_s, pinned) == 0 {
                if segmented {
                    self.pull_tail(c, HOT, 0, false, 0, now_s, pinned);
                } else {
                    break;
                }
            }
            rounds += 1;
        }
        if rounds > 0 {
            self.mem.as_mut().expect("memory is kept").stats[c].direct_reclaims += rounds;
        }
        got
    }

    /// `lru_pull_tail`: walks up to 5 items from the tail of segment `seg` of class `c`;
    /// the number of items removed or moved.
    ///
    /// The profile (message-queue/fixed, scenario lru) showed the walk at a third of the
    /// run, most of it spent on looks that led nowhere: nearly every walk stops at its
    /// first item, so the item after it is looked up only when the walk goes on, and a
    /// key is looked at in place, cloned only when the item moves or goes.
    #[allow(clippy::too_many_arguments)] // lru_pull_tail's own parameters
    fn pull_tail(
        &mut self,
        c: usize,
        seg: u8,
        total_bytes: usize,
        evict: bool,
        max_age: i64,
        now_s: i64,
        pinned: Option<&[u8]>,
    ) -> usize {
        let mut removed = 0;
        // The first position the walk may look at next: `None` at the start (the tail).
        let mut from: Option<u64> = None;
        for _ in 0..5 {
            let Some(mem) = self.mem.as_deref_mut() else {
                break;
            };
            let order = &mem.segs[c][seg as usize].order;
            let entry = match from {
                None => order.first(),
                Some(t) => order.first_from(t),
            };
            let Some((tick, key)) = entry else { break };
            if Some(&key[..]) == pinned {
                mem.stats[c].lrutail_reflocked += 1;
                from = Some(tick + 1);
                continue;
            }
            let Some(item) = self.items.get(&key[..]) else {
                break;
            };
            let reclaim = (item.exptime != 0 && item.exptime < now_s)
                || self.flush.is_flushed(item.time, item.cas, now_s);
            if reclaim {
                let stats = &mut mem.stats[c];
                stats.reclaimed += 1;
                if !item.fetched {
                    stats.expired_unfetched += 1;
                }
                let key = Arc::clone(&item.key);
                self.unlink(&key);
                removed += 1;
                // Only this item left the segment: the walk goes on after its position.
                from = Some(tick + 1);
                continue;
            }
            let seg_bytes = mem.segs[c][seg as usize].bytes;
            let stop = match seg {
                HOT | WARM => {
                    let mut limit = if seg == HOT {
                        total_bytes * 20 / 100
                    } else {
                        0
                    };
                    if limit == 0 {
                        limit = total_bytes * 40 / 100;
                    }
                    if item.active {
                        removed += 1;
                        if seg == WARM {
                            // Relinked at WARM's head, its time unchanged; the walk goes
                            // on with the item that was after it (none if it was alone:
                            // not itself again).
                            mem.stats[c].moves_within_lru += 1;
                            let key = Arc::clone(&item.key);
                            let next = mem.segs[c][seg as usize]
                                .order
                                .first_from(tick + 1)
                                .map(|(t, _)| t);
                            self.items
                                .update_access(&key[..], |item| mem.relink(item, WARM))
                                .expect("listed");
                            match next {
                                Some(t) => from = Some(t),
                                None => break,
                            }
                            continue;
                        }
                        mem.stats[c].moves_to_warm += 1;
                        Stop::Move(WARM, Arc::clone(&item.key))
                    } else if seg_bytes > limit || now_s - item.time > max_age {
                        mem.stats[c].moves_to_cold += 1;
                        removed += 1;
                        Stop::Move(COLD, Arc::clone(&item.key))
                    } else {
                        Stop::Keep
                    }
                }
                _ if evict => {
                    if self.config.evict {
                        // The live item at the COLD tail is evicted (the item already
                        // looked up is counted, not looked up again).
                        let stats = &mut mem.stats[c];
                        stats.evicted += 1;
                        stats.evicted_time = (now_s - item.time).max(0) as u64;
                        if item.exptime != 0 {
                            stats.evicted_nonzero += 1;
                        }
                        if !item.fetched {
                            stats.evicted_unfetched += 1;
                        }
                        if item.active {
                            stats.evicted_active += 1;
                        }
                        let class = mem.slabs.classes[c];
                        let key = Arc::clone(&item.key);
                        self.unlink(&key);
                        self.evicted.push(Evicted { key, class });
                        removed += 1;
                    }
                    Stop::Keep
                }
                _ if item.active && mem.segmented => {
                    mem.stats[c].moves_to_warm += 1;
                    removed += 1;
                    Stop::Move(WARM, Arc::clone(&item.key))
                }
                _ => Stop::Keep,
            };
            if let Stop::Move(to, key) = stop {
                let mem = self.mem.as_deref_mut().expect("memory is kept");
                self.items
                    .update_access(&key[..], |item| mem.relink(item, to))
                    .expect("listed");
            }
            break;
        }
        removed
    }

    /// `lru_maintainer_juggle` for class `c`: moves items between HOT, WARM and COLD
    /// until the segments are within their limits (at most 500 rounds).
    fn juggle(&mut self, c: usize, now_s: i64) {
        let Some(mem) = self.mem.as_ref() else { return };
        if !mem.segmented {
            return;
        }
        // A class without items has nothing to move (every pull would find its segment
        // empty): the pass of every second juggles every class, most of them empty.
        if mem.segs[c].iter().all(|s| s.order.len() == 0) {
            return;
        }
        let cold_age = mem
            .tail(c, COLD)
            .and_then(|k| self.items.get(k))
            .map_or(0, |it| (now_s - it.time).max(0));
        let hot_age = (cold_age as f64 * 0.2) as i64;
        let warm_age = (cold_age as f64 * 2.0) as i64;
        let total: usize = mem.segs[c].iter().map(|s| s.bytes).sum();
        for _ in 0..500 {
            let mut more = 0;
            if self.pull_tail(c, HOT, total, false, hot_age, now_s, None) != 0
                || self.pull_tail(c, WARM, total, false, warm_age, now_s, None) != 0
            {
                more += 1;
            }
            more += self.pull_tail(c, COLD, total, false, 0, now_s, None);
            if more == 0 {
                break;
            }
        }
    }

    /// One pass of the LRU maintainer thread, at a defined instant: before a command
    /// allocates, at most once per virtual millisecond (the thread sleeps at least 1 ms
    /// between passes, so commands that arrive together see none). It juggles every class linked into since its last pass (every class
    /// when the second changed: the segments' age limits moved, and the thread wakes at
    /// least once a second), then handles the queued hits on COLD items.
    fn maintainer_pass(&mut self, now_s: i64) {
        let now_ms = self.seen.0;
        let Some(mem) = self.mem.as_mut() else { return };
        if !mem.segmented || now_ms <= mem.passed_ms {
            return;
        }
        mem.passed_ms = now_ms;
        // The list of classes is given back afterwards (juggling links no class into
        // anew), so that a pass allocates none.
        let mut classes = std::mem::take(&mut mem.dirty);
        if mem.swept != now_s {
            mem.swept = now_s;
            classes.clear();
            classes.extend(0..mem.slabs.classes.len() as u8);
        }
        for &c in &classes {
            self.juggle(c as usize, now_s);
        }
        classes.clear();
        if let Some(mem) = self.mem.as_mut() {
            if mem.dirty.is_empty() {
                mem.dirty = classes;
            }
        }
        self.maintainer_bumps(now_s);
    }

    /// `lru_maintainer_bumps`: the queued hits on COLD items, each a `do_item_update` of
    /// the item if it is still linked (an active COLD item moves to WARM).
    fn maintainer_bumps(&mut self, now_s: i64) {
        let Some(mem) = self.mem.as_mut() else { return };
        if mem.bumps.is_empty() {
            return;
        }
        for (key, cas) in std::mem::take(&mut mem.bumps) {
            if self.items.get(&key[..]).is_none_or(|it| it.cas != cas) {
                continue;
            }
            self.items.update_access(&key[..], |item| {
                item.time = now_s;
                if item.seg == COLD && item.active {
                    mem.stats[item.class as usize].moves_to_warm += 1;
                    mem.relink(item, WARM);
                }
            });
        }
    }

    /// Links the item now under `key` into its class's LRU (HOT's head, or COLD's without
    /// the segmented LRU), taking the allocation in flight for it; `old` is the size of
    /// the item it replaced, whose chunks and position are given back. The maintainer
    /// juggles the class on its next pass.
    pub(super) fn mem_link(&mut self, key: &[u8], old: Option<(usize, u8, u8, u64)>) {
        let Some(mem) = self.mem.as_mut() else { return };
        let item = self.items.get_mut(key).expect("linked");
        if let Some((size, class, seg, tick)) = old {
            let s = &mut mem.segs[class as usize][seg as usize];
            s.order.remove(tick);
            s.bytes -= size;
            mem.free_chunks(size, key.len());
        }
        let size = item.size();
        match mem.pending.iter().rposition(|&p| p == (size, key.len())) {
            Some(i) => {
                mem.pending.remove(i);
            }
            None => {
                for c in mem.slabs.chunks_of(size, key.len()) {
                    mem.slabs.class[c as usize].used += 1;
                }
            }
        }
        let class = mem.slabs.class_index(size);
        let seg = if mem.segmented { HOT } else { COLD };
        item.active = false;
        mem.link_q(item, class, seg);
        if mem.segmented && !mem.dirty.contains(&(class as u8)) {
            mem.dirty.push(class as u8);
        }
    }

    /// Counts `what` for the class of the item under `key` (memory-limited stores only).
    #[inline]
    pub(super) fn count_class(&mut self, key: &[u8], what: SlabCount) {
        if self.mem.is_some() {
            self.count_class_kept(key, what);
        }
    }

    /// [`Store::count_class`] on a store that keeps slab classes.
    fn count_class_kept(&mut self, key: &[u8], what: SlabCount) {
        let Some(mem) = self.mem.as_mut() else { return };
        let Some(item) = self.items.get(key) else {
            return;
        };
        let s = &mut mem.stats[item.class as usize];
        let n = match what {
            // `lru_hits`, by the segment the hit left the item in; `get_hits` sums them.
            SlabCount::GetHit => &mut s.hits[item.seg as usize],
            SlabCount::TouchHit => &mut s.touch_hits,
            SlabCount::DeleteHit => &mut s.delete_hits,
            SlabCount::IncrHit => &mut s.incr_hits,
            SlabCount::DecrHit => &mut s.decr_hits,
            SlabCount::CasHit => &mut s.cas_hits,
            SlabCount::CasBadval => &mut s.cas_badval,
        };
        *n += 1;
    }

    /// Counts a storage command whose item of `size` bytes was allocated.
    pub(super) fn count_set(&mut self, size: usize) {
        if let Some(mem) = self.mem.as_mut() {
            let c = mem.slabs.class_index(size);
            mem.stats[c].cmd_set += 1;
        }
    }

    /// Gives back the memory and position of `item`, just taken out of the table.
    pub(super) fn mem_unlink(&mut self, item: &Item) {
        if let Some(mem) = self.mem.as_mut() {
            mem.unlink_q(item);
            mem.free_chunks(item.size(), item.key.len());
        }
    }

    /// A hit (`fetch`: `do_item_get` with `DO_UPDATE`) or an update (`do_item_update`)
    /// of the live item under `key` in a memory-limited store.
    pub(super) fn mem_touch(&mut self, key: &[u8], now_s: i64, fetch: bool) {
        let mem = self.mem.as_mut().expect("memory is kept");
        let Some(item) = self.items.get(key) else {
            return;
        };
        let (active, fetched, stale) = (
            item.active,
            item.fetched,
            item.time < now_s - UPDATE_INTERVAL,
        );
        // Only access fields change here ([`Table::update_access`]).
        if mem.segmented {
            let update = if !fetch {
                true
            } else if active {
                false
            } else if !fetched {
                self.items
                    .update_access(key, |item| item.fetched = true)
                    .expect("found");
                false
            } else {
                let cold = self.items.update_access(key, |item| {
                    item.active = true;
                    if item.seg == COLD {
                        // lru_bump_async: the maintainer moves it on its next pass.
                        mem.bumps.push((Arc::clone(&item.key), item.cas));
                        return true;
                    }
                    false
                });
                if cold.expect("found") {
                    return;
                }
                true
            };
            if !update {
                return;
            }
            self.items
                .update_access(key, |item| {
                    if item.seg == COLD && item.active {
                        item.time = now_s;
                        mem.stats[item.class as usize].moves_to_warm += 1;
                        mem.relink(item, WARM);
                    } else {
                        // 1.6.18 refreshes the time of a HOT or WARM item on every update.
                        item.time = now_s;
                    }
                })
                .expect("found");
        } else if stale || (fetch && !fetched) {
            self.items
                .update_access(key, |item| {
                    item.fetched |= fetch;
                    if stale {
                        let (c, seg) = (item.class as usize, item.seg);
                        mem.unlink_q(item);
                        item.time = now_s;
                        mem.link_q(item, c, seg);
                    }
                })
                .expect("found");
        }
    }
}

/// One slab class as `stats slabs` and `stats items` describe it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ClassReport {
    /// The class: number, chunk size, chunks per page.
    pub class: super::geometry::SlabClass,
    /// Pages the class holds.
    pub total_pages: usize,
    /// Chunks in use.
    pub used_chunks: usize,
    /// Free chunks in the class's pages.
    pub free_chunks: usize,
    /// Bytes the class's items asked for (`mem_requested`).
    pub mem_requested: usize,
    /// Items in HOT, WARM, COLD.
    pub number: [usize; 3],
    /// Seconds since the last access of the HOT, WARM and COLD tails (0 when empty).
    pub ages: [u64; 3],
    /// The class's counters.
    pub stats: ItemStats,
}

/// A memory-limited store's memory, as `stats`, `stats slabs` and `stats items` show it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MemoryReport {
    /// Every class that holds a page or has counted something, smallest first.
    pub classes: Vec<ClassReport>,
    /// Bytes of pages taken (`total_malloced`).
    pub total_malloced: usize,
    /// The memory limit (`limit_maxbytes`).
    pub limit: usize,
    /// Whether the LRU is segmented (memcached prints the per-segment lines only then).
    pub segmented: bool,
}

impl Store {
    /// The memory's pages, chunks, segments and counters at `now_ms`; `None` without a
    /// memory limit (or when persistent).
    pub fn memory_report(&self, now_ms: u64) -> Option<MemoryReport> {
        let mem = self.mem.as_ref()?;
        let now_s = super::expiry::now_secs(now_ms);
        let age = |c: usize, seg: u8| {
            mem.tail(c, seg)
                .and_then(|k| self.items.get(k))
                .map_or(0, |it| (now_s - it.time).max(0) as u64)
        };
        let classes = (0..mem.slabs.classes.len())
            .filter(|&c| mem.slabs.class[c].pages > 0 || mem.stats[c] != ItemStats::default())
            .map(|c| ClassReport {
                class: mem.slabs.classes[c],
                total_pages: mem.slabs.class[c].pages,
                used_chunks: mem.slabs.class[c].used,
                free_chunks: mem.slabs.free_chunks(c),
                mem_requested: mem.bytes(c),
                number: mem.counts(c),
                ages: [age(c, HOT), age(c, WARM), age(c, COLD)],
                stats: mem.stats[c].clone(),
            })
            .collect();
        Some(MemoryReport {
            classes,
            total_malloced: mem.slabs.malloced,
            limit: mem.slabs.limit,
            segmented: mem.segmented,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;
    use std::hash::DefaultHasher;

    fn hash_of(x: &impl Hash) -> u64 {
        let mut h = DefaultHasher::new();
        x.hash(&mut h);
        h.finish()
    }

    /// An order answers, compares, hashes and prints as the map it stands for, through
    /// pushes at the head and removals anywhere (holes swept or not).
    #[test]
    fn an_order_is_the_map_it_stands_for() {
        let mut order = Order::default();
        let mut map: BTreeMap<u64, Arc<[u8]>> = BTreeMap::new();
        let mut clock = 0u64;
        // A fixed pseudo-random walk (xorshift).
        let mut x = 0x2545_f491_4f6c_dd1du64;
        for step in 0..20_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            if !x.is_multiple_of(3) || map.is_empty() {
                clock += 1;
                let key: Arc<[u8]> = Arc::from(format!("k{step}").as_bytes());
                order.push(clock, Arc::clone(&key));
                map.insert(clock, key);
            } else {
                // The tail most often, else anywhere (or a position not listed).
                let tick = match (x >> 8) % 4 {
                    0 => *map.keys().next().expect("not empty"),
                    _ => (x >> 16) % (clock + 2),
                };
                assert_eq!(order.remove(tick), map.remove(&tick));
            }
            assert_eq!(order.len(), map.len());
            assert_eq!(
                order.first().map(|(t, k)| (t, k.clone())),
                map.first_key_value().map(|(t, k)| (*t, k.clone()))
            );
            let from = (x >> 24) % (clock + 2);
            assert_eq!(
                order.first_from(from).map(|(t, _)| t),
                map.range(from..).next().map(|(t, _)| *t)
            );
            assert_eq!(order.get(from), map.get(&from));
            if step % 97 == 0 {
                assert!(order.iter().eq(map.iter()));
                assert_eq!(hash_of(&order), hash_of(&map));
                assert_eq!(format!("{order:?}"), format!("{map:?}"));
                let mut same = Order::default();
                for (t, k) in &map {
                    same.push(*t, Arc::clone(k));
                }
                assert_eq!(order, same);
            }
        }
    }
}
