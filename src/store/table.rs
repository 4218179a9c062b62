//! The item table: items by key, found by hashing, compared and listed in key order.
//!
//! Lookups are what a store does most (a storage command looks its key up two or three
//! times), and the keys structures use share long prefixes (`queue.0000000001`,
//! `queue.0000000002`, …): an ordered map compares the whole prefix at every node it
//! passes, a hash map hashes the key once and compares it once. So the table is a hash map
//! (`hashbrown` with the fixed `FxHasher`: no per-process random seed) and never lets its
//! iteration order show: everything that lists items ([`Table::sorted`], `Debug`, `Hash`)
//! goes by key order, as the ordered map it replaces did, and equality is the maps'.

use super::item::Item;
use rustc_hash::FxBuildHasher;
use smallvec::SmallVec;
use std::fmt;
use std::hash::{BuildHasher, Hash, Hasher};
use std::sync::Arc;

/// Items by key. Copy on write: a clone shares the map until one of them changes it (the
/// explorer clones a world at every step, and most steps leave the store alone or only
/// read it).
#[derive(Clone, Default)]
pub struct Table {
    map: Arc<Map>,
    /// [`Table::digest`], computed once per map (reset when the map changes).
    digest: Arc<DigestCell>,
    /// [`Table::times`], computed once per map (reset when the map changes, even in its
    /// access fields alone). Kept beside the map, not in the shared digest: a read's touch
    /// forgets it without allocating (the profile, spinlock/fixed 4 × 1 explored: a new
    /// digest cell per touch, 146,000 allocations in 200,000 states).
    times: TimesCell,
}

/// A table's items by key.
type Map = hashbrown::HashMap<Arc<[u8]>, Item, FxBuildHasher>;

/// A key to look up, compared with the table's keys in line ([`same_bytes`]): `[u8]`'s
/// own equality calls the C library's `memcmp` for every candidate, which the profile of
/// `kvsim check` showed at 4 % of its time for keys of 2 to 30 bytes.
#[derive(Clone, Copy)]
struct Lookup<'a>(&'a [u8]);

impl Hash for Lookup<'_> {
    /// As the table's `Arc<[u8]>` keys hash (a lookup must find what was inserted).
    #[inline]
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.0.hash(state);
    }
}

impl hashbrown::Equivalent<Arc<[u8]>> for Lookup<'_> {
    #[inline]
    fn equivalent(&self, key: &Arc<[u8]>) -> bool {
        same_bytes(self.0, key)
    }
}

/// Whether `a` and `b` hold the same bytes: keys up to 32 bytes are compared in line, a
/// word at a time (the last word overlapping the one before when the length is not a
/// multiple of the word), longer ones by `memcmp`.
#[inline]
fn same_bytes(a: &[u8], b: &[u8]) -> bool {
    let n = a.len();
    if n != b.len() {
        return false;
    }
    let word = |s: &[u8], at: usize| u64::from_le_bytes(s[at..at + 8].try_into().unwrap_or([0; 8]));
    let half = |s: &[u8], at: usize| u32::from_le_bytes(s[at..at + 4].try_into().unwrap_or([0; 4]));
    match n {
        0..=3 => a.iter().zip(b).all(|(x, y)| x == y),
        4..=7 => half(a, 0) == half(b, 0) && half(a, n - 4) == half(b, n - 4),
        8..=32 => {
            let mut at = 0;
            while at + 8 < n {
                if word(a, at) != word(b, at) {
                    return false;
                }
                at += 8;
            }
            word(a, n - 8) == word(b, n - 8)
        }
        _ => a == b,
    }
}

/// The cell of a table's [`Digest`] (see the dependency's note in `Cargo.toml`).
type DigestCell = once_cell::sync::OnceCell<Digest>;

/// The cell of a table's [`Table::times`] (as [`DigestCell`]: its clone copies a filled
/// cell without `std`'s `Once`).
type TimesCell = once_cell::sync::OnceCell<u64>;

/// The items in key order as one hash with every cas unique replaced by its position
/// among the distinct uniques, and those uniques in order of first appearance: together
/// the same information as the items (see `Store::hash_renamed`).
#[derive(Debug)]
pub struct Digest {
    /// The items without their last access times, LRU positions and fetched marks,
    /// uniques by position: all that tells apart the items of a store whose answers
    /// depend on none of them ([`super::Store::time_free`]); the rest is
    /// [`Table::times`].
    pub shape: u64,
    /// The distinct uniques, in key order of first appearance.
    pub uniques: Vec<u64>,
}

impl PartialEq for Table {
    /// The items' (the digest is derived from them).
    fn eq(&self, other: &Table) -> bool {
        self.map == other.map
    }
}

impl Eq for Table {}

impl Table {
    /// The item under `key`, dead or alive.
    #[inline]
    pub fn get(&self, key: &[u8]) -> Option<&Item> {
        self.map.get(&Lookup(key))
    }

    /// The item under `key`, to change it in place.
    #[inline]
    pub fn get_mut(&mut self, key: &[u8]) -> Option<&mut Item> {
        let item = Self::item_in(&mut self.map, key)?;
        Self::forget_digest(&mut self.digest);
        self.times.take();
        Some(item)
    }

    /// The item under `key` in `map`, the map copied first if it is shared. A map of its
    /// own (the simulator's, always): one lookup. A shared one (the explorer's clones) is
    /// copied only if the key is there. Only a table can clone its map, so a count of 1
    /// stays 1 while it is borrowed.
    #[inline]
    fn item_in<'a>(map: &'a mut Arc<Map>, key: &[u8]) -> Option<&'a mut Item> {
        if Arc::strong_count(map) > 1 {
            if !map.contains_key(&Lookup(key)) {
                return None;
            }
            Arc::make_mut(map);
        }
        Arc::get_mut(map)?.get_mut(&Lookup(key))
    }

    /// Changes the item under `key` by `change`, which may touch only what a read or the
    /// LRU maintainer changes: its last access time, LRU position and marks (`time`,
    /// `tick`, `class`, `seg`, `active`, `fetched`). None of them is in the
    /// [`Digest`], so it is kept and only [`Table::times`] is forgotten: the profile
    /// (spinlock/fixed 4 × 1, explored) showed a `get`'s touch recomputing the whole
    /// digest at a twentieth of the search.
    /// `None` (and `change` not called) when there is no item under `key`.
    #[inline]
    pub fn update_access<R>(
        &mut self,
        key: &[u8],
        change: impl FnOnce(&mut Item) -> R,
    ) -> Option<R> {
        let item = Self::item_in(&mut self.map, key)?;
        #[cfg(debug_assertions)]
        let before = item.clone();
        let out = change(item);
        #[cfg(debug_assertions)]
        {
            let after = &*item;
            debug_assert!(
                before.key == after.key
                    && before.data == after.data
                    && before.flags == after.flags
                    && before.exptime == after.exptime
                    && before.cas == after.cas
                    && before.stale == after.stale
                    && before.win_sent == after.win_sent
                    && before.key_binary == after.key_binary,
                "update_access changed more than an item's access fields"
            );
        }
        self.times.take();
        Some(out)
    }

    /// Forgets the digest of a map about to change (a cell shared with a clone is let go
    /// even while empty: the clone may fill it later, from its own items).
    #[inline]
    fn forget_digest(digest: &mut Arc<DigestCell>) {
        // An empty cell of its own (the simulator's, always): nothing to forget.
        if Arc::strong_count(digest) == 1 && digest.get().is_none() {
            return;
        }
        match Arc::get_mut(digest) {
            Some(cell) => {
                cell.take();
            }
            None => *digest = Arc::default(),
        }
    }

    /// The map, to change it (the digest is forgotten). A digest cell shared with a clone
    /// is let go even while empty: the clone may fill it later, from its own items.
    fn map_mut(&mut self) -> &mut Map {
        Self::forget_digest(&mut self.digest);
        self.times.take();
        Arc::make_mut(&mut self.map)
    }

    /// The items' [`Digest`] (computed once while the map is unchanged but for access
    /// fields).
    pub fn digest(&self) -> &Digest {
        self.digest.get_or_init(|| {
            let items = self.sorted_small();
            let mut h = fixed_hasher();
            let mut names = super::CasNames::default();
            for item in &items {
                let Item {
                    key,
                    data,
                    flags,
                    exptime,
                    time: _,
                    cas,
                    tick: _,
                    class: _,
                    seg: _,
                    active: _,
                    fetched: _,
                    stale,
                    win_sent,
                    key_binary,
                } = item;
                key.hash(&mut h);
                data.hash(&mut h);
                flags.hash(&mut h);
                exptime.hash(&mut h);
                h.write_usize(names.name(*cas));
                h.write_u8(*stale as u8 | (*win_sent as u8) << 1 | (*key_binary as u8) << 2);
            }
            Digest {
                shape: h.finish(),
                uniques: names.into_uniques(),
            }
        })
    }

    /// The items' last access times, LRU positions and fetched marks, in key order, as
    /// one hash (computed once while the map is unchanged): what [`Table::digest`] leaves
    /// out. A time-free search never asks for it, and the profile showed the digest at a
    /// tenth of fifo/fixed's search.
    pub fn times(&self) -> u64 {
        *self.times.get_or_init(|| times_of(&self.sorted_small()))
    }

    /// Every item in key order, inline for the tables explored states hold.
    fn sorted_small(&self) -> SmallVec<[&Item; 16]> {
        let mut items: SmallVec<[&Item; 16]> = self.map.values().collect();
        items.sort_unstable_by(|a, b| a.key.cmp(&b.key));
        items
    }

    /// Puts `item` under `key`, replacing any item there.
    pub fn insert(&mut self, key: Arc<[u8]>, item: Item) {
        self.map_mut().insert(key, item);
    }

    /// Takes the item under `key` out.
    pub fn remove(&mut self, key: &[u8]) -> Option<Item> {
        if !self.map.contains_key(&Lookup(key)) {
            return None;
        }
        self.map_mut().remove(&Lookup(key))
    }

    /// The number of items.
    pub fn len(&self) -> usize {
        self.map.len()
    }

    /// Removes every item.
    pub fn clear(&mut self) {
        if !self.map.is_empty() {
            self.map = Arc::default();
            self.digest = Arc::default();
            self.times = TimesCell::new();
        }
    }

    /// Every item in no particular order: only for questions whose answer does not depend
    /// on the order (sums, "is there any").
    pub fn unordered(&self) -> impl Iterator<Item = &Item> {
        self.map.values()
    }

    /// Every item, in key order.
    pub fn sorted(&self) -> Vec<&Item> {
        self.sorted_small().into_vec()
    }
}

/// The [`Digest::times`] of `items` (in key order).
fn times_of(items: &[&Item]) -> u64 {
    let mut times = fixed_hasher();
    for item in items {
        item.time.hash(&mut times);
        item.tick.hash(&mut times);
        (item.class, item.seg, item.active).hash(&mut times);
        // The access history: only `mg … h` and `me` show it, and both involve time (a
        // time-free search stops before them).
        item.fetched.hash(&mut times);
    }
    times.finish()
}

impl Hash for Table {
    /// As an ordered map hashes: the length, then the entries in key order.
    fn hash<H: Hasher>(&self, state: &mut H) {
        state.write_usize(self.map.len());
        for item in self.sorted() {
            item.hash(state); // the key included
        }
    }
}

impl fmt::Debug for Table {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_map()
            .entries(self.sorted().into_iter().map(|it| (&it.key, it)))
            .finish()
    }
}

/// A hasher with fixed keys for digests that explored states are identified by: ahash, as
/// stateright hashes states, fast on keys' and values' bytes and as good a 64-bit hash as
/// the state's own (SipHash, the std default, took a tenth of a search's time here).
pub(crate) fn fixed_hasher() -> ahash::AHasher {
    ahash::RandomState::with_seeds(0x6b76, 0x7369, 0x6d74, 0x626c).build_hasher()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::hash::DefaultHasher;

    fn item(key: &str) -> Item {
        let mut it = Item::new(Arc::from(key.as_bytes()), key.as_bytes().to_vec(), 0, 0, 0);
        it.cas = 1;
        it
    }

    fn table(keys: &[&str]) -> Table {
        let mut t = Table::default();
        for k in keys {
            let it = item(k);
            t.insert(Arc::clone(&it.key), it);
        }
        t
    }

    #[test]
    fn same_bytes_tells_apart_every_single_byte_difference_at_every_length() {
        for n in 0..=40usize {
            let a: Vec<u8> = (0..n as u8).map(|i| i.wrapping_mul(37) ^ 0x5a).collect();
            assert!(same_bytes(&a, &a.clone()), "length {n}");
            for at in 0..n {
                let mut b = a.clone();
                b[at] ^= 0x01;
                assert!(!same_bytes(&a, &b), "length {n}, byte {at}");
            }
            let mut longer = a.clone();
            longer.push(0);
            assert!(!same_bytes(&a, &longer), "lengths {n} and {}", n + 1);
        }
    }

    #[test]
    fn a_lookup_finds_each_key_and_no_other() {
        let keys = [
            "a",
            "ab",
            "abcd",
            "abcdefg",
            "mq.0000000001.head",
            "mq.0000000001.heae",
        ];
        let t = table(&keys);
        for k in keys {
            assert_eq!(t.get(k.as_bytes()).map(|i| &i.key[..]), Some(k.as_bytes()));
        }
        for k in [
            "",
            "b",
            "abc",
            "abcdefh",
            "mq.0000000001.hea",
            "mq.0000000002.head",
        ] {
            assert!(t.get(k.as_bytes()).is_none(), "{k}");
        }
    }

    fn hash(t: &Table) -> u64 {
        let mut h = DefaultHasher::new();
        t.hash(&mut h);
        h.finish()
    }

    #[test]
    fn insertion_order_does_not_show() {
        let keys = ["q.0000000003", "q.0000000001", "a", "q.0000000002", "zz"];
        let mut reversed = keys;
        reversed.reverse();
        let (a, b) = (table(&keys), table(&reversed));
        assert_eq!(a, b);
        assert_eq!(hash(&a), hash(&b));
        assert_eq!(format!("{a:?}"), format!("{b:?}"));
        let listed: Vec<&[u8]> = a.sorted().iter().map(|it| &it.key[..]).collect();
        assert_eq!(
            listed,
            [
                &b"a"[..],
                b"q.0000000001",
                b"q.0000000002",
                b"q.0000000003",
                b"zz"
            ]
        );
    }

    /// A clone changed before either computed its digest does not share it.
    #[test]
    fn a_clone_changed_before_its_digest_has_its_own() {
        let a = table(&["a"]);
        let mut b = a.clone();
        let it = item("b");
        b.insert(Arc::clone(&it.key), it);
        assert_ne!(a.digest().shape, b.digest().shape);
    }

    /// Times asked for after the digest, or before it, are the same; the times of a
    /// table changed after they were asked for are the new items'.
    #[test]
    fn times_are_those_of_the_items_now() {
        let (a, b) = (table(&["a", "b", "q.1"]), table(&["a", "b", "q.1"]));
        let _ = a.digest();
        assert_eq!(a.times(), b.times());
        assert_eq!(a.digest().shape, b.digest().shape);
        let mut c = a.clone();
        c.get_mut(b"a").expect("there").tick = 9;
        assert_ne!(c.times(), a.times());
        assert_eq!(a.times(), b.times());
    }

    /// A read's touch keeps the digest's shape and uniques and forgets its times, in the
    /// table touched (shared with a clone or not) and never in its clone: each ends with
    /// the digest of a fresh table with its items.
    #[test]
    fn a_touch_forgets_only_the_times_of_the_table_touched() {
        let fresh = |t: &Table| {
            let mut f = Table::default();
            for it in t.sorted() {
                f.insert(Arc::clone(&it.key), it.clone());
            }
            let d = f.digest();
            (d.shape, f.times(), d.uniques.clone())
        };
        let digest = |t: &Table| {
            let d = t.digest();
            (d.shape, t.times(), d.uniques.clone())
        };
        for with_times in [false, true] {
            let a = table(&["a", "b"]);
            let _ = a.digest();
            if with_times {
                let _ = a.times();
            }
            let mut b = a.clone();
            let touched = b.update_access(b"a", |it| {
                it.time = 7;
                it.fetched = true;
            });
            assert_eq!(touched, Some(()));
            assert_eq!(b.update_access(b"zz", |_| unreachable!()), None);
            assert_eq!(b.digest().shape, a.digest().shape);
            assert_eq!(digest(&b), fresh(&b));
            assert_eq!(digest(&a), fresh(&a));
            assert_ne!(digest(&a).1, digest(&b).1);
            // Touched again, unshared, after its times were computed.
            b.update_access(b"b", |it| it.active = true);
            assert_eq!(digest(&b), fresh(&b));
        }
    }

    #[test]
    fn different_contents_differ() {
        let (a, b) = (table(&["a", "b"]), table(&["a", "c"]));
        assert_ne!(a, b);
        assert_ne!(hash(&a), hash(&b));
        assert_ne!(hash(&table(&["a"])), hash(&table(&["a", "a2"])));
    }
}
