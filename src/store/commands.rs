//! The commands that change items: the storage commands (`process_update_command` +
//! `do_store_item`), retrieval with get-and-touch, incr/decr (`do_add_delta`) and
//! flush_all, as methods of [`Store`].

use super::expiry::now_secs;
use super::item::{item_size, SLAB_CHUNK_MAX};
use super::{arith, dead, set_exptime, Store, ITEM_UPDATE_INTERVAL};
use crate::command::{ArithVerb, ClientError, Reply, ServerError, StoreVerb, Value, KEY_MAX_LEN};

/// Which storage command, with the unique for `cas`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Op {
    /// set/add/replace/append/prepend.
    Plain(StoreVerb),
    /// cas with the client's unique.
    Cas(u64),
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
        let now_s = now_secs(now_ms);
        let exp = self.clock.realtime(now_ms, exptime);
        let size = item_size(key.len(), flags, data.len());
        // item_alloc for the command's item comes first, for every storage command.
        let failure = if size > self.config.item_size_max {
            Some(ServerError::ObjectTooLarge)
        } else if !self.make_room(size, now_s, None) {
            Some(ServerError::OutOfMemoryStoring)
        } else {
            None
        };
        if let Some(error) = failure {
            // "Avoid stale data persisting in cache because we failed alloc": set only.
            if op == Op::Plain(StoreVerb::Set) {
                self.unlink(key);
            }
            return Reply::ServerError(error);
        }
        self.used += size; // the command's item, until it is linked or dropped
        let reply = self.store_item(now_s, op, key, flags, exp, data);
        self.used -= size;
        reply
    }

    /// `do_store_item`, after the command's item was allocated.
    fn store_item(
        &mut self,
        now_s: i64,
        op: Op,
        key: &[u8],
        flags: u32,
        exp: i64,
        data: &[u8],
    ) -> Reply {
        if op == Op::Plain(StoreVerb::Set) {
            // Dead or alive, the old item is replaced: no need to look first.
            self.link(key, data, flags, exp, now_s);
            return Reply::Stored;
        }
        if let Op::Plain(verb @ (StoreVerb::Append | StoreVerb::Prepend)) = op {
            return self.append(now_s, verb == StoreVerb::Append, key, data);
        }
        let present = self.find(key, now_s);
        match (op, present) {
            (Op::Plain(StoreVerb::Add), false) | (Op::Plain(StoreVerb::Replace), true) => {
                self.link(key, data, flags, exp, now_s);
                Reply::Stored
            }
            (Op::Plain(StoreVerb::Add), true) => {
                // "add only adds a nonexistent item, but promote to head of LRU".
                self.bump(key);
                Reply::NotStored
            }
            (Op::Plain(_), _) => Reply::NotStored, // replace of a missing key
            (Op::Cas(_), false) => Reply::NotFound,
            (Op::Cas(unique), true) => {
                let current = self.items.get(key).map_or(0, |it| it.cas);
                if unique != 0 && unique == current {
                    self.link(key, data, flags, exp, now_s);
                    Reply::Stored
                } else {
                    Reply::Exists
                }
            }
        }
    }

    /// append/prepend on a live item: a new item of combined size with the old flags and
    /// exptime; `NOT_STORED` if there is none, or the result is too large, or memory
    /// cannot be had. Looks the item up twice, not three times as `find` first would:
    /// queues and logs append to the same key again and again.
    fn append(&mut self, now_s: i64, at_end: bool, key: &[u8], data: &[u8]) -> Reply {
        let (old_size, new_size) = match self.items.get(key) {
            None => return Reply::NotStored,
            Some(item) if dead(&self.flush, item, now_s) => {
                self.unlink(key); // reaped, as `find` does
                return Reply::NotStored;
            }
            Some(item) => (
                item.size(),
                item_size(key.len(), item.flags, item.data.len() + data.len()),
            ),
        };
        if new_size > self.config.item_size_max || !self.make_room(new_size, now_s, Some(key)) {
            return Reply::NotStored;
        }
        let cas = self.next_cas();
        let tracks = self.tracks_lru();
        let Some(item) = self.items.get_mut(key) else {
            return Reply::NotStored;
        };
        if at_end {
            item.data.extend_from_slice(data);
        } else {
            item.data.splice(0..0, data.iter().copied());
        }
        item.cas = cas;
        item.time = now_s;
        if tracks {
            item.tick = self.lru.bump(item.tick);
        }
        self.used = self.used - old_size + new_size;
        Reply::Stored
    }

    /// get/gets (`exp: None`) and gat/gats (`exp: Some(new expiration)`).
    pub(super) fn retrieve(
        &mut self,
        now_s: i64,
        with_cas: bool,
        exp: Option<i64>,
        keys: &[Vec<u8>],
    ) -> Reply {
        let mut values = Vec::with_capacity(keys.len());
        let tracks = self.tracks_lru();
        for key in keys {
            if key.len() > KEY_MAX_LEN {
                // The whole reply is the error; hits found so far are dropped.
                return Reply::ClientError(ClientError::BadCommandLineFormat);
            }
            if exp.is_none() && !tracks {
                // A plain read: the table is left as it is (and stays shared).
                let dead = match self.items.get(&key[..]) {
                    None => continue,
                    Some(item) if dead(&self.flush, item, now_s) => true,
                    Some(item) => {
                        values.push(value_of(key, item, with_cas));
                        false
                    }
                };
                if dead {
                    self.unlink(key);
                }
                continue;
            }
            let dead = match self.items.get_mut(&key[..]) {
                None => continue,
                Some(item) if dead(&self.flush, item, now_s) => true,
                Some(item) => {
                    if let Some(exp) = exp {
                        set_exptime(&mut self.expiry, item, exp);
                    }
                    if tracks {
                        item.tick = self.lru.bump(item.tick);
                    }
                    values.push(value_of(key, item, with_cas));
                    false
                }
            };
            if dead {
                self.unlink(key);
            }
        }
        Reply::Values(values)
    }

    /// incr/decr: `do_add_delta`.
    pub(super) fn arith(&mut self, now_s: i64, verb: ArithVerb, key: &[u8], delta: u64) -> Reply {
        if key.len() > KEY_MAX_LEN {
            return Reply::ClientError(ClientError::BadCommandLineFormat);
        }
        if !self.find(key, now_s) {
            return Reply::NotFound;
        }
        let Some(item) = self.items.get(key) else {
            return Reply::NotFound;
        };
        if item.data.is_empty() || item.size() > SLAB_CHUNK_MAX {
            return Reply::ClientError(ClientError::NonNumeric);
        }
        let Some(value) = crate::wire::cnum::safe_strtoull(&item.data) else {
            return Reply::ClientError(ClientError::NonNumeric);
        };
        let value = match verb {
            ArithVerb::Incr => arith::incr(value, delta),
            ArithVerb::Decr => arith::decr(value, delta),
        };
        let digits = arith::Decimal::new(value);
        let digits = digits.as_bytes();
        let old_size = item.size();
        let in_place = digits.len() <= item.data.len();
        let new_size = item_size(key.len(), item.flags, digits.len());
        if !in_place && !self.make_room(new_size, now_s, Some(key)) {
            return Reply::ServerError(ServerError::OutOfMemory);
        }
        let cas = self.next_cas();
        let tracks = self.tracks_lru();
        let Some(item) = self.items.get_mut(key) else {
            return Reply::NotFound;
        };
        item.cas = cas;
        if in_place {
            arith::rewrite_in_place(&mut item.data, digits);
            // do_item_update: refreshes it->time at most once per ITEM_UPDATE_INTERVAL.
            if item.time < now_s - ITEM_UPDATE_INTERVAL {
                item.time = now_s;
            }
        } else {
            item.data.clear();
            item.data.extend_from_slice(digits);
            item.time = now_s;
            self.used = self.used - old_size + new_size;
        }
        if tracks {
            item.tick = self.lru.bump(item.tick);
        }
        Reply::Number(value)
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
        if oldest_live <= now_s {
            self.flush.oldest_cas = self.next_cas();
        }
        Reply::Ok
    }
}

/// What a retrieval answers for a live `item` under `key`.
fn value_of(key: &[u8], item: &super::Item, with_cas: bool) -> Value {
    Value {
        key: key.to_vec(),
        flags: item.flags,
        data: item.data.clone(),
        cas: with_cas.then_some(item.cas),
    }
}
