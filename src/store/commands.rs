//! The commands that change items: the storage commands (`process_update_command` +
//! `do_store_item`), retrieval with get-and-touch, incr/decr (`do_add_delta`) and
//! flush_all, as methods of [`Store`].

use super::expiry::now_secs;
use super::item::{item_size, SLAB_CHUNK_MAX};
use super::lru::SlabCount;
use super::{arith, count_dead, dead, set_exptime, Store, ITEM_UPDATE_INTERVAL};
use crate::command::{ArithVerb, ClientError, Reply, ServerError, StoreVerb, Value, KEY_MAX_LEN};

/// Which storage command, with the unique for `cas`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Op {
    /// set/add/replace/append/prepend.
    Plain(StoreVerb),
    /// cas with the client's unique.
    Cas(u64),
}

/// What `ms` adds to a storage command (its flags as `do_store_item` sees them).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(super) struct MetaStore {
    /// The `C` unique for append/prepend (`0`: none): a different live unique is `EXISTS`.
    pub compare: u64,
    /// `I` with a cas store: a unique older than the item's stores the value marked stale.
    pub stale_ok: bool,
    /// `b`: the item's key was sent in base64.
    pub key_binary: bool,
}

/// What `do_add_delta` answered.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Delta {
    /// Applied: the new value; `in_place` when the item was rewritten in place (else a
    /// new item took its place).
    Done { value: u64, in_place: bool },
    /// No live item.
    NotFound,
    /// The value is not a number (or empty, or chunked).
    NonNumeric,
    /// A growing value found no memory.
    OutOfMemory,
    /// The compared unique (`ma … C`) did not match.
    CasMismatch,
}

impl Store {
    /// set/add/replace/append/prepend/cas: `process_update_command` + `do_store_item`.
    pub(super) fn store(
        &mut self,
        now_ms: u64,
        op: Op,
        key: &[u8],
        flags: u32,
        exptime: i64,
        data: &[u8],
    ) -> Reply {
        if key.len() > KEY_MAX_LEN {
            return Reply::ClientError(ClientError::BadCommandLineFormat);
        }
        self.store_full(now_ms, op, key, flags, exptime, data, None)
            .0
    }

    /// A storage command, classic (`meta: None`) or `ms`: the reply and the unique of the
    /// stored item (`0` when nothing was stored).
    #[allow(clippy::too_many_arguments)] // the storage command's own fields
    pub(super) fn store_full(
        &mut self,
        now_ms: u64,
        op: Op,
        key: &[u8],
        flags: u32,
        exptime: i64,
        data: &[u8],
        meta: Option<MetaStore>,
    ) -> (Reply, u64) {
        let now_s = now_secs(now_ms);
        let exp = self.clock.realtime(now_ms, exptime);
        let size = item_size(key.len(), flags, data.len());
        // item_alloc for the command's item comes first, for every storage command.
        let failure = if size > self.config.item_size_max {
            Some(ServerError::ObjectTooLarge)
        } else if !self.make_room(size, key.len(), now_s, None) {
            Some(ServerError::OutOfMemoryStoring)
        } else {
            None
        };
        if let Some(error) = failure {
            // "Avoid stale data persisting in cache because we failed alloc": set only,
            // but `ms` in every mode.
            if op == Op::Plain(StoreVerb::Set) || meta.is_some() {
                self.met_dead(key, now_s);
                self.unlink(key);
            }
            return (Reply::ServerError(error), 0);
        }
        self.count_set(size);
        self.used += size; // the command's item, until it is linked or dropped
        let meta = meta.unwrap_or_default();
        let stored = self.store_item(now_s, op, key, flags, exp, data, meta);
        self.used -= size;
        match stored {
            Ok(cas) => (Reply::Stored, cas),
            Err(reply) => (reply, 0),
        }
    }

    /// `do_store_item`, after the command's item was allocated: the stored item's unique,
    /// or the reply that says why nothing was stored.
    #[allow(clippy::too_many_arguments)] // the storage command's own fields
    fn store_item(
        &mut self,
        now_s: i64,
        op: Op,
        key: &[u8],
        flags: u32,
        exp: i64,
        data: &[u8],
        meta: MetaStore,
    ) -> Result<u64, Reply> {
        let linked = |store: &mut Store, exp: i64| {
            let cas = store.link(key, data, flags, exp, now_s);
            if meta.key_binary {
                if let Some(item) = store.items.get_mut(key) {
                    item.key_binary = true;
                }
            }
            Ok(cas)
        };
        if op == Op::Plain(StoreVerb::Set) {
            // Dead or alive, the old item is replaced; memcached looks it up all the same
            // (and counts a dead one).
            self.met_dead(key, now_s);
            return linked(self, exp);
        }
        if let Op::Plain(verb @ (StoreVerb::Append | StoreVerb::Prepend)) = op {
            return self.append(now_s, verb == StoreVerb::Append, key, data, meta.compare);
        }
        let present = self.find(key, now_s);
        match (op, present) {
            (Op::Plain(StoreVerb::Add), false) | (Op::Plain(StoreVerb::Replace), true) => {
                linked(self, exp)
            }
            (Op::Plain(StoreVerb::Add), true) => {
                // "add only adds a nonexistent item, but promote to head of LRU".
                self.update(key, now_s);
                Err(Reply::NotStored)
            }
            (Op::Plain(_), _) => Err(Reply::NotStored), // replace of a missing key
            (Op::Cas(_), false) => Err(Reply::NotFound),
            (Op::Cas(unique), true) => {
                let (current, old_exp, old_win) = self
                    .items
                    .get(key)
                    .map_or((0, 0, false), |it| (it.cas, it.exptime, it.win_sent));
                if unique != 0 && unique == current {
                    self.count_class(key, SlabCount::CasHit);
                    linked(self, exp)
                } else if unique != 0 && meta.stale_ok && unique < current {
                    // CAS_STALE: the value is stored, but keeps the old item's TTL and is
                    // marked stale (with its win token, if one was handed out).
                    let cas = linked(self, old_exp)?;
                    if let Some(item) = self.items.get_mut(key) {
                        item.stale = true;
                        item.win_sent = old_win;
                    }
                    Ok(cas)
                } else {
                    self.count_class(key, SlabCount::CasBadval);
                    Err(Reply::Exists)
                }
            }
        }
    }

    /// append/prepend on a live item: a new item of combined size with the old flags and
    /// exptime; `NOT_STORED` if there is none, or the result is too large, or memory
    /// cannot be had. Looks the item up twice, not three times as `find` first would:
    /// queues and logs append to the same key again and again.
    ///
    /// `compare` is `ms`'s `C` unique: when it is not 0 and differs from the item's, the
    /// answer is `EXISTS`.
    fn append(
        &mut self,
        now_s: i64,
        at_end: bool,
        key: &[u8],
        data: &[u8],
        compare: u64,
    ) -> Result<u64, Reply> {
        // `find`, the checks and, without an LRU to make room in, the change in one lookup
        // (a table shared with a clone is copied only when the key is there:
        // `Table::get_mut`).
        let max = self.config.item_size_max;
        let tracked = self.mem.is_some();
        let Some(item) = self.items.get_mut(key) else {
            return Err(Reply::NotStored);
        };
        if dead(&self.flush, item, now_s) {
            self.met_dead(key, now_s);
            self.unlink(key); // reaped, as `find` does
            return Err(Reply::NotStored);
        }
        if compare != 0 && compare != item.cas {
            return Err(Reply::Exists);
        }
        let old_size = item.size();
        let new_size = item_size(key.len(), item.flags, item.data.len() + data.len());
        if new_size > max {
            return Err(Reply::NotStored);
        }
        if !tracked {
            self.cas_id += 1;
            self.tally.linked += 1;
            appended(item, at_end, data, self.cas_id, now_s);
            self.used = self.used - old_size + new_size;
            return Ok(self.cas_id);
        }
        if !self.make_room(new_size, key.len(), now_s, Some(key)) {
            return Err(Reply::NotStored);
        }
        let cas = self.next_cas();
        self.tally.linked += 1;
        let Some(item) = self.items.get_mut(key) else {
            return Err(Reply::NotStored);
        };
        let old = (old_size, item.class, item.seg, item.tick);
        appended(item, at_end, data, cas, now_s);
        self.used = self.used - old_size + new_size;
        self.mem_link(key, Some(old));
        Ok(cas)
    }

    /// get/gets (`exp: None`) and gat/gats (`exp: Some(new expiration)`): every hit is
    /// bumped (marked fetched, its time refreshed once a minute, moved in the LRU), and
    /// for gat/gats touched.
    pub(super) fn retrieve(
        &mut self,
        now_s: i64,
        with_cas: bool,
        exp: Option<i64>,
        keys: &[impl AsRef<[u8]>],
    ) -> Reply {
        let mut values = Vec::with_capacity(keys.len());
        for key in keys {
            let key = key.as_ref();
            if key.len() > KEY_MAX_LEN {
                // The whole reply is the error; hits found so far are dropped.
                return Reply::ClientError(ClientError::BadCommandLineFormat);
            }
            // `find`'s lookup; a live item that the bump leaves as it is (fetched, its
            // time fresh, no LRU kept; or a store that keeps no access fields:
            // `Store::untrack_access`) and no new expiration: its value, and done.
            let Some(item) = self.items.get(key) else {
                continue;
            };
            if count_dead(&self.flush, &mut self.tally, item, now_s) {
                self.unlink(key);
                continue;
            }
            if exp.is_none()
                && self.mem.is_none()
                && (self.untracked.0 || item.fetched && item.time >= now_s - ITEM_UPDATE_INTERVAL)
            {
                values.push(value_of(key, item, with_cas));
                continue;
            }
            // Likewise with a segmented LRU: a hit on an active item changes nothing
            // (`Store::mem_touch`) but the class's hit count (`Store::count_class`), counted
            // here with the item at hand: the general path looks the key up four times
            // (`kvsim bench sim`: −1 % instructions per run).
            if let (None, Some(mem)) = (exp, self.mem.as_deref_mut()) {
                if mem.segmented && item.active {
                    mem.stats[item.class as usize].hits[item.seg as usize] += 1;
                    values.push(value_of(key, item, with_cas));
                    continue;
                }
            }
            self.hit(key, now_s);
            let what = if exp.is_some() {
                SlabCount::TouchHit
            } else {
                SlabCount::GetHit
            };
            self.count_class(key, what);
            if let Some(exp) = exp {
                if let Some(item) = self.items.get_mut(key) {
                    set_exptime(&mut self.expiry, item, exp);
                }
            }
            if let Some(item) = self.items.get(key) {
                values.push(value_of(key, item, with_cas));
            }
        }
        Reply::Values(values)
    }

    /// incr/decr: `do_add_delta`.
    pub(super) fn arith(&mut self, now_s: i64, verb: ArithVerb, key: &[u8], delta: u64) -> Reply {
        if key.len() > KEY_MAX_LEN {
            return Reply::ClientError(ClientError::BadCommandLineFormat);
        }
        match self.add_delta(now_s, verb == ArithVerb::Incr, key, delta, 0) {
            Delta::Done { value, .. } => {
                let what = match verb {
                    ArithVerb::Incr => SlabCount::IncrHit,
                    ArithVerb::Decr => SlabCount::DecrHit,
                };
                self.count_class(key, what);
                Reply::Number(value)
            }
            Delta::NotFound | Delta::CasMismatch => Reply::NotFound,
            Delta::NonNumeric => Reply::ClientError(ClientError::NonNumeric),
            Delta::OutOfMemory => Reply::ServerError(ServerError::OutOfMemory),
        }
    }

    /// `do_add_delta`: incr (`incr: true`) or decr the live item under `key` by `delta`;
    /// `compare`, when not 0, must be the item's unique (`ma … C`).
    pub(super) fn add_delta(
        &mut self,
        now_s: i64,
        incr: bool,
        key: &[u8],
        delta: u64,
        compare: u64,
    ) -> Delta {
        // `find`, the checks and a rewrite in place in one lookup (a table shared with a
        // clone is copied only when the key is there: `Table::get_mut`).
        let tracked = self.mem.is_some();
        let Some(item) = self.items.get_mut(key) else {
            return Delta::NotFound;
        };
        if count_dead(&self.flush, &mut self.tally, item, now_s) {
            self.unlink(key);
            return Delta::NotFound;
        }
        if item.data.is_empty() || item.size() > SLAB_CHUNK_MAX {
            return Delta::NonNumeric;
        }
        if compare != 0 && item.cas != compare {
            return Delta::CasMismatch;
        }
        let Some(value) = arith_result(&item.data, incr, delta) else {
            return Delta::NonNumeric;
        };
        let digits = arith::Decimal::new(value);
        let digits = digits.as_bytes();
        if arith::rewrite_in_place(&mut item.data, digits) {
            self.cas_id += 1;
            item.cas = self.cas_id;
            // do_item_update: refreshes it->time at most once per ITEM_UPDATE_INTERVAL.
            if tracked {
                self.update(key, now_s);
            } else if item.time < now_s - ITEM_UPDATE_INTERVAL {
                item.time = now_s;
            }
            return Delta::Done {
                value,
                in_place: true,
            };
        }
        // The value grows: a new item of exact length takes the old one's place.
        let old_size = item.size();
        let new_size = item_size(key.len(), item.flags, digits.len());
        if !self.make_room(new_size, key.len(), now_s, Some(key)) {
            return Delta::OutOfMemory;
        }
        let cas = self.next_cas();
        let Some(item) = self.items.get_mut(key) else {
            return Delta::NotFound;
        };
        item.cas = cas;
        let old = (old_size, item.class, item.seg, item.tick);
        self.tally.linked += 1;
        item.data.clear();
        item.data.extend_from_slice(digits);
        item.time = now_s;
        // item_replace links a new item: no marks carry over.
        item.clear_marks();
        self.used = self.used - old_size + new_size;
        self.mem_link(key, Some(old));
        Delta::Done {
            value,
            in_place: false,
        }
    }

    /// flush_all (`process_flush_all_command`, 1.6.18).
    pub(super) fn flush_all(&mut self, now_ms: u64, delay: Option<i64>) -> Reply {
        let now_s = now_secs(now_ms);
        let delay = delay.unwrap_or(0);
        // new_oldest in unix seconds; realtime() never returns 0 for delay > 0.
        let new_oldest = if delay > 0 {
            self.clock.realtime(now_ms, delay)
        } else {
            now_s
        };
        // oldest_live = new_oldest - 1, in rel time; rel 0 means "no flush".
        let oldest_live = new_oldest - 1;
        self.flush.oldest_live = (oldest_live > self.clock.started).then_some(oldest_live);
        self.flush_reaped = false;
        if oldest_live <= now_s {
            self.flush.oldest_cas = self.next_cas();
        }
        Reply::Ok
    }
}

/// What `incr` (or `decr`) of `delta` makes of a value's digits; `None` when they are not
/// a number (`safe_strtoull`).
#[inline]
fn arith_result(data: &[u8], incr: bool, delta: u64) -> Option<u64> {
    // Digits alone, too few to overflow (what counters hold): their value, as
    // `safe_strtoull` reads them; anything else is read by it.
    let value = if !data.is_empty() && data.len() < 20 && data.iter().all(u8::is_ascii_digit) {
        data.iter().fold(0u64, |n, &b| n * 10 + u64::from(b - b'0'))
    } else {
        crate::wire::cnum::safe_strtoull(data)?
    };
    Some(if incr {
        arith::incr(value, delta)
    } else {
        arith::decr(value, delta)
    })
}

/// The item that an append (`at_end`) or prepend of `data` links in `item`'s place: the
/// combined data, unique `cas`, time `now_s`, no marks.
fn appended(item: &mut super::Item, at_end: bool, data: &[u8], cas: u64, now_s: i64) {
    if at_end {
        item.data.extend_from_slice(data);
    } else {
        item.data.splice(0..0, data.iter().copied());
    }
    item.cas = cas;
    item.time = now_s;
    // A new item took the old one's place: no marks carry over.
    item.clear_marks();
}

/// What a retrieval answers for a live `item` under `key`.
#[inline]
fn value_of(key: &[u8], item: &super::Item, with_cas: bool) -> Value {
    Value {
        key: key.to_vec(),
        flags: item.flags,
        data: item.data.clone(),
        cas: with_cas.then_some(item.cas),
    }
}
