//! The least-recently-used order of a memory-limited store.
//!
//! kvsim keeps **one global LRU over all items, with a byte-count limit**: every item is
//! charged its full memcached size (`item::item_size`), and when a new allocation would
//! exceed `memory_limit` the store first reclaims expired items, then walks this list from
//! the least recently used end, dropping flushed items and evicting live ones until the
//! allocation fits. An item being appended to or incremented is pinned (memcached holds a
//! reference on it) and is skipped. Every link (successful store), `add` on an existing
//! key, hit of `get`/`gets`/`gat`/`gats`, `touch` and `incr`/`decr` moves an item to the
//! most recently used end.
//!
//! How this differs from memcached 1.6.18 (`items.c`, `slabs.c`, `doc/new_lru.txt`):
//! - memcached carves memory into 1 MiB pages per **slab class** (chunk sizes ×1.25) and
//!   evicts from the tail of the LRU of the class the new item falls in: small items never
//!   evict large ones and vice versa, and a class with no page yet gets its first page
//!   even above the limit. kvsim has no classes: any item may evict any other, and the
//!   limit counts item bytes, not pages or chunk slack.
//! - memcached's default LRU is **segmented** (HOT/WARM/COLD with a background
//!   maintainer): an item must be hit twice to be protected, bumps are rate-limited to
//!   once per 60 s (`ITEM_UPDATE_INTERVAL`), and the order depends on the maintainer
//!   thread's timing. kvsim's order is exact LRU on every access, deterministic.
//! - memcached reclaims only expired items it meets near the tail (plus the background
//!   crawler); kvsim reclaims every expired item before evicting a live one.
//! - memcached gives up after a bounded number of tail pulls; kvsim refuses an item larger
//!   than the whole limit up front and otherwise evicts until it fits.
//!
//! The order is only kept when it can matter (a memory limit with eviction on, not
//! persistent); otherwise ticks stay 0 so that reads do not change the store's state.

use std::collections::BTreeMap;
use std::sync::Arc;

/// Items ordered by their last use.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct Lru {
    /// Tick of last use → key; the first entry is the least recently used.
    order: BTreeMap<u64, Arc<[u8]>>,
    /// The last tick handed out.
    clock: u64,
}

impl Lru {
    /// Records a newly linked item; returns its tick.
    pub fn link(&mut self, key: &Arc<[u8]>) -> u64 {
        self.clock += 1;
        self.order.insert(self.clock, Arc::clone(key));
        self.clock
    }

    /// Moves the item with tick `tick` to the most recently used end; returns its new tick.
    pub fn bump(&mut self, tick: u64) -> u64 {
        if tick == self.clock {
            return tick;
        }
        match self.order.remove(&tick) {
            Some(key) => {
                self.clock += 1;
                self.order.insert(self.clock, key);
                self.clock
            }
            None => tick,
        }
    }

    /// Forgets the item with tick `tick`.
    pub fn unlink(&mut self, tick: u64) {
        self.order.remove(&tick);
    }

    /// The least recently used items, oldest first.
    pub fn oldest(&self) -> impl Iterator<Item = (u64, &Arc<[u8]>)> {
        self.order.iter().map(|(t, k)| (*t, k))
    }

    /// The number of items in the order.
    #[cfg(test)]
    pub fn len(&self) -> usize {
        self.order.len()
    }

    /// Whether the order is empty.
    pub fn is_empty(&self) -> bool {
        self.order.is_empty()
    }

    /// Forgets everything.
    pub fn clear(&mut self) {
        self.order.clear();
        self.clock = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bump_moves_to_the_young_end() {
        let mut lru = Lru::default();
        let a: Arc<[u8]> = Arc::from(&b"a"[..]);
        let b: Arc<[u8]> = Arc::from(&b"b"[..]);
        let ta = lru.link(&a);
        let _tb = lru.link(&b);
        let ta2 = lru.bump(ta);
        let order: Vec<&[u8]> = lru.oldest().map(|(_, k)| &k[..]).collect();
        assert_eq!(order, vec![&b"b"[..], &b"a"[..]]);
        assert_eq!(lru.bump(ta2), ta2);
        lru.unlink(ta2);
        assert_eq!(lru.len(), 1);
    }
}
