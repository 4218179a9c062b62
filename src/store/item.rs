//! One stored item and its size as memcached counts it.

use std::sync::Arc;

/// `sizeof(item)` in memcached 1.6.18 on 64-bit Linux.
pub const ITEM_HEADER: usize = 48;

/// Bytes taken by the cas unique (`settings.use_cas`).
pub const CAS_SIZE: usize = 8;

/// Items larger than this are stored "chunked" (`slab_chunk_size_max`, half of the 1 MiB
/// slab page) and `incr`/`decr` treat them as non-numeric.
pub const SLAB_CHUNK_MAX: usize = 512 * 1024;

/// The total size of an item as `item_make_header` + `do_item_alloc` count it
/// (`items.c:165-173`): header, key with its NUL, 4 bytes of flags only when they are
/// non-zero, the data with its `\r\n`, and the cas unique.
pub fn item_size(key_len: usize, flags: u32, data_len: usize) -> usize {
    ITEM_HEADER + key_len + 1 + if flags != 0 { 4 } else { 0 } + data_len + 2 + CAS_SIZE
}

/// One item.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Item {
    /// The key (shared with the store's indexes).
    pub key: Arc<[u8]>,
    /// The data (without memcached's trailing `\r\n`).
    pub data: Vec<u8>,
    /// Opaque client flags.
    pub flags: u32,
    /// Absolute expiration in unix seconds; `0` = never.
    pub exptime: i64,
    /// memcached's `it->time`: unix second of the item's last link or update, which
    /// `flush_all` compares against.
    pub time: i64,
    /// The cas unique.
    pub cas: u64,
    /// LRU position (a larger tick is more recently used); `0` when the store keeps no LRU.
    pub tick: u64,
    /// The slab class (index from 0) whose LRU holds the item (memory-limited stores).
    pub class: u8,
    /// The LRU segment: HOT, WARM or COLD (`store/lru.rs`).
    pub seg: u8,
    /// memcached's `ITEM_ACTIVE`: hit twice (segmented LRU).
    pub active: bool,
    /// memcached's `ITEM_FETCHED`: a hit bumped the item since it was stored (`mg … h`,
    /// `me`'s `fetch`).
    pub fetched: bool,
    /// `ITEM_STALE`: marked stale by `md … I` (or stored by `ms … I` with an older
    /// unique): `mg` answers `X`, and the first to see it wins the right to recache.
    pub stale: bool,
    /// `ITEM_TOKEN_SENT`: a client was answered `W` (won the right to recache); later
    /// ones see `Z`.
    pub win_sent: bool,
    /// `ITEM_KEY_BINARY`: stored by `ms` with a base64 key (`b`), so a returned key is
    /// written in base64.
    pub key_binary: bool,
}

impl Item {
    /// A new item as memcached links it: no marks (not fetched, not stale, no win token,
    /// a text key).
    pub fn new(
        key: std::sync::Arc<[u8]>,
        data: Vec<u8>,
        flags: u32,
        exptime: i64,
        time: i64,
    ) -> Item {
        Item {
            key,
            data,
            flags,
            exptime,
            time,
            cas: 0,
            tick: 0,
            class: 0,
            seg: 0,
            active: false,
            fetched: false,
            stale: false,
            win_sent: false,
            key_binary: false,
        }
    }

    /// Clears the marks an item loses when a new item takes its place (memcached's
    /// `item_replace` links a fresh item: append, prepend, a growing incr).
    pub fn clear_marks(&mut self) {
        self.fetched = false;
        self.stale = false;
        self.win_sent = false;
        self.key_binary = false;
    }

    /// The item's total size (see [`item_size`]).
    pub fn size(&self) -> usize {
        item_size(self.key.len(), self.flags, self.data.len())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_match_the_measured_limits() {
        // The largest values a 1 MiB item holds, measured on memcached 1.6.18.
        assert_eq!(item_size(1, 0, 1_048_516), 1_048_576);
        assert_eq!(item_size(1, 7, 1_048_512), 1_048_576);
        assert_eq!(item_size(250, 0, 1_048_267), 1_048_576);
    }
}
