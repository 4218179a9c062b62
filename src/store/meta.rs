//! The meta commands (`mg`, `ms`, `md`, `ma`, `me`, `mn`) as memcached 1.6.18's
//! `proto_text.c` runs them, on the same items as the classic commands: a meta set and a
//! classic set make the same item, uniques come from the one counter, and expiry, flush,
//! the LRU and the memory limit apply alike.
//!
//! The checks memcached makes before it touches an item are made here too (so that a
//! [`MetaCommand`] built by hand is answered as its wire form would be): the key's length
//! as sent (base64 with `b`), the number of tokens, duplicate flags, the `ms`/`ma` mode,
//! the opaque's length. Where memcached makes a check *after* an effect, so does the
//! store: an over-long opaque on `mg` comes after `T` touched and `N` created the item,
//! and on `ma` after the delta was applied.
//!
//! The order of the flags matters as in memcached: `mg` and `ma` apply `T` and `N` and
//! write the returned flags in the order sent, so `t` before `T` reports the old TTL.
//! Quirks kept: `mg … q` still answers a hit (only `EN` is quiet); `ma … q` answers an
//! item it created with `N` (only the plain success is quiet); an `ma` whose result
//! outgrows the value makes a new item and its `T` changes the *old* one (no effect); an
//! `mg` that creates an item with `N` bumps it, so it is fetched at once (unless `u`).

use super::commands::{Delta, MetaStore, Op};
use super::expiry::now_secs;
use super::item::item_size;
use super::{set_exptime, Store};
use crate::command::meta::{base64_encode, slab_class, META_MAX_TOKENS, META_OPAQUE_MAX};
use crate::command::{
    ClientError, MetaCommand, MetaDebug, MetaFlag, MetaReply, MetaRet, MetaStatus, MetaVerb, Reply,
    ServerError, StoreVerb, KEY_MAX_LEN,
};

fn client(e: ClientError) -> Reply {
    Reply::ClientError(e)
}

/// An opaque token (its `O` included) longer than memcached echoes.
fn opaque_too_long(m: &MetaCommand) -> bool {
    m.flags
        .iter()
        .any(|f| matches!(f, MetaFlag::Opaque(t) if t.len() + 1 > META_OPAQUE_MAX))
}

/// `t`'s number: `-1` for never, else memcached's unsigned 32-bit difference.
fn ttl_left(exptime: i64, now_s: i64) -> i64 {
    if exptime == 0 {
        -1
    } else {
        i64::from((exptime - now_s) as u32)
    }
}

impl Store {
    /// Applies one meta command.
    pub(super) fn meta(&mut self, now_ms: u64, m: &MetaCommand) -> Reply {
        if m.verb == MetaVerb::Noop {
            return Reply::Meta(MetaReply::status(MetaStatus::Mn));
        }
        // The key as memcached saw it on the line (base64 with `b`): none at all is too
        // few tokens (`ERROR`, but `CLIENT_ERROR bad command line format` for `me`).
        if m.key.is_empty() {
            return match m.verb {
                MetaVerb::Debug => client(ClientError::BadCommandLineFormat),
                _ => Reply::Error,
            };
        }
        if m.wire_key().len() > KEY_MAX_LEN {
            return client(ClientError::BadCommandLineFormat);
        }
        if m.verb == MetaVerb::Debug {
            return self.meta_debug(now_ms, m);
        }
        if m.ntokens() > META_MAX_TOKENS {
            return client(match m.verb {
                MetaVerb::Get => ClientError::GetFlagsTooLong,
                _ => ClientError::FlagsTooLong,
            });
        }
        if let Some(e) = m.preparse_error() {
            return client(match m.verb {
                MetaVerb::Delete | MetaVerb::Arith => ClientError::InvalidOrDuplicateFlag,
                _ => e,
            });
        }
        match m.verb {
            MetaVerb::Get => self.meta_get(now_ms, m),
            MetaVerb::Set => self.meta_set(now_ms, m),
            MetaVerb::Delete => self.meta_delete(now_ms, m),
            MetaVerb::Arith => self.meta_arith(now_ms, m),
            MetaVerb::Debug | MetaVerb::Noop => unreachable!("answered above"),
        }
    }

    /// `process_mget_command`.
    fn meta_get(&mut self, now_ms: u64, m: &MetaCommand) -> Reply {
        let now_s = now_secs(now_ms);
        let key = &m.key[..];
        let locked = m.flags.iter().any(MetaFlag::locks);
        let bump = !m.has(b'u');
        let mut found = self.find(key, now_s);
        let mut created = false;
        if !found && m.has(b'N') {
            // item_alloc(key, 0, realtime(0), 2): an empty item without a TTL (`N` sets it
            // below), linked with a new unique; no item on a full store (a miss then).
            let size = item_size(key.len(), 0, 0);
            if size <= self.config.item_size_max && self.make_room(size, key.len(), now_s, None) {
                self.link(key, b"", 0, 0, now_s);
                found = true;
                created = true;
            }
        }
        if !found {
            let mut reply = MetaReply::status(MetaStatus::En);
            for flag in &m.flags {
                match flag {
                    MetaFlag::Opaque(t) if t.len() + 1 > META_OPAQUE_MAX => {
                        return client(ClientError::OpaqueTooLong)
                    }
                    MetaFlag::Opaque(t) => reply.flags.push(MetaRet::Opaque(t.clone())),
                    MetaFlag::ReturnKey => reply.flags.push(MetaRet::Key {
                        key: key.to_vec(),
                        base64: m.base64(),
                    }),
                    _ => {}
                }
            }
            reply.quiet = m.quiet();
            return Reply::Meta(reply);
        }
        if !locked && bump {
            // limited_get with DO_UPDATE: bumped before the reply is built.
            self.hit(key, now_s);
        }
        let value = m.has(b'v');
        let mut reply = MetaReply::status(if value {
            MetaStatus::Va
        } else {
            MetaStatus::Hd
        });
        let mut won = false;
        for flag in &m.flags {
            match flag {
                MetaFlag::Ttl(t) => {
                    let exp = self.clock.realtime(now_ms, *t);
                    if let Some(item) = self.items.get_mut(key) {
                        set_exptime(&mut self.expiry, item, exp);
                    }
                }
                MetaFlag::Vivify(t) if created => {
                    let exp = self.clock.realtime(now_ms, *t);
                    if let Some(item) = self.items.get_mut(key) {
                        set_exptime(&mut self.expiry, item, exp);
                    }
                    won = true;
                }
                MetaFlag::Recache(t) => {
                    let recache = self.clock.realtime(now_ms, *t);
                    if let Some(item) = self.items.get(key) {
                        if !item.win_sent && !created && item.exptime != 0 && item.exptime < recache
                        {
                            won = true;
                        }
                    }
                }
                MetaFlag::Opaque(t) if t.len() + 1 > META_OPAQUE_MAX => {
                    // After `T` and `N` took effect; the locked path's bump is skipped.
                    return client(ClientError::OpaqueTooLong);
                }
                other => {
                    let Some(item) = self.items.get(key) else {
                        continue;
                    };
                    let ret = match other {
                        MetaFlag::ReturnSize => MetaRet::Size(item.data.len() as u32),
                        MetaFlag::ReturnTtl => MetaRet::Ttl(ttl_left(item.exptime, now_s)),
                        MetaFlag::ReturnCas => MetaRet::Cas(item.cas),
                        MetaFlag::ReturnFlags => MetaRet::Flags(item.flags),
                        MetaFlag::ReturnLastAccess => {
                            MetaRet::LastAccess((now_s - item.time) as u32)
                        }
                        MetaFlag::ReturnHit => MetaRet::Hit(item.fetched),
                        MetaFlag::Opaque(t) => MetaRet::Opaque(t.clone()),
                        MetaFlag::ReturnKey => MetaRet::Key {
                            key: item.key.to_vec(),
                            base64: item.key_binary,
                        },
                        _ => continue,
                    };
                    reply.flags.push(ret);
                }
            }
        }
        if let Some(item) = self.items.get_mut(key) {
            if item.win_sent {
                reply.flags.push(MetaRet::AlreadyWon);
            }
            if item.stale {
                reply.flags.push(MetaRet::Stale);
                if !item.win_sent {
                    won = true;
                }
            }
            if won {
                reply.flags.push(MetaRet::Win);
                item.win_sent = true;
            }
            if value {
                reply.value = Some(item.data.clone());
            }
        }
        if locked && bump {
            // The delayed bump, so that `h` and `l` saw the item as it was.
            self.hit(key, now_s);
        }
        Reply::Meta(reply)
    }

    /// `process_mset_command` + `complete_nread_ascii` + `_finalize_mset`.
    fn meta_set(&mut self, now_ms: u64, m: &MetaCommand) -> Reply {
        let verb = match m.flag(b'M') {
            None => StoreVerb::Set,
            Some(MetaFlag::Mode(mode)) => match mode {
                b'S' => StoreVerb::Set,
                b'E' => StoreVerb::Add,
                b'A' => StoreVerb::Append,
                b'P' => StoreVerb::Prepend,
                b'R' => StoreVerb::Replace,
                _ => return client(ClientError::InvalidSetMode),
            },
            Some(_) => return client(ClientError::InvalidSetMode),
        };
        if opaque_too_long(m) {
            return client(ClientError::OpaqueTooLong);
        }
        let compare = match m.flag(b'C') {
            Some(MetaFlag::CompareCas(c)) => Some(*c),
            _ => None,
        };
        let flags = match m.flag(b'F') {
            Some(MetaFlag::ClientFlags(f)) => *f,
            _ => 0,
        };
        let exptime = match m.flag(b'T') {
            Some(MetaFlag::Ttl(t)) => *t,
            _ => 0,
        };
        // A compared unique turns set and replace into cas; add ignores it; append and
        // prepend compare it themselves.
        let op = match (verb, compare) {
            (StoreVerb::Set | StoreVerb::Replace, Some(c)) => Op::Cas(c),
            (verb, _) => Op::Plain(verb),
        };
        let meta = MetaStore {
            compare: compare.unwrap_or(0),
            stale_ok: m.has(b'I') && matches!(op, Op::Cas(_)),
            key_binary: m.base64(),
        };
        let (outcome, cas) =
            self.store_full(now_ms, op, &m.key, flags, exptime, &m.data, Some(meta));
        let status = match outcome {
            Reply::Stored => MetaStatus::Hd,
            Reply::NotStored => MetaStatus::Ns,
            Reply::Exists => MetaStatus::Ex,
            Reply::NotFound => MetaStatus::Nf,
            error => return error,
        };
        let mut reply = MetaReply::status(status);
        for flag in &m.flags {
            match flag {
                MetaFlag::Opaque(t) => reply.flags.push(MetaRet::Opaque(t.clone())),
                MetaFlag::ReturnKey => reply.flags.push(MetaRet::Key {
                    key: m.key.clone(),
                    base64: m.base64(),
                }),
                MetaFlag::ReturnCas => reply.flags.push(MetaRet::Cas(cas)),
                _ => {}
            }
        }
        reply.quiet = status == MetaStatus::Hd && m.quiet();
        Reply::Meta(reply)
    }

    /// The `O` and `k` flags every meta reply echoes, in order.
    fn echoes(m: &MetaCommand, reply: &mut MetaReply) {
        for flag in &m.flags {
            match flag {
                MetaFlag::Opaque(t) => reply.flags.push(MetaRet::Opaque(t.clone())),
                MetaFlag::ReturnKey => reply.flags.push(MetaRet::Key {
                    key: m.key.clone(),
                    base64: m.base64(),
                }),
                _ => {}
            }
        }
    }

    /// `process_mdelete_command`.
    fn meta_delete(&mut self, now_ms: u64, m: &MetaCommand) -> Reply {
        if opaque_too_long(m) {
            return client(ClientError::OpaqueTooLong);
        }
        let now_s = now_secs(now_ms);
        let key = &m.key[..];
        let status = if !self.find(key, now_s) {
            MetaStatus::Nf
        } else {
            let current = self.items.get(key).map_or(0, |it| it.cas);
            match m.flag(b'C') {
                Some(MetaFlag::CompareCas(c)) if *c != current => MetaStatus::Ex,
                _ if m.has(b'I') => {
                    // Marked stale, not removed: a new unique, the win token taken back,
                    // and with `T` a new TTL.
                    let exp = match m.flag(b'T') {
                        Some(MetaFlag::Ttl(t)) => Some(self.clock.realtime(now_ms, *t)),
                        _ => None,
                    };
                    let cas = self.next_cas();
                    if let Some(item) = self.items.get_mut(key) {
                        if let Some(exp) = exp {
                            set_exptime(&mut self.expiry, item, exp);
                        }
                        item.stale = true;
                        item.win_sent = false;
                        item.cas = cas;
                    }
                    MetaStatus::Hd
                }
                _ => {
                    self.unlink(key);
                    MetaStatus::Hd
                }
            }
        };
        let mut reply = MetaReply::status(status);
        Self::echoes(m, &mut reply);
        reply.quiet = status == MetaStatus::Hd && m.quiet();
        Reply::Meta(reply)
    }

    /// `process_marithmetic_command`.
    fn meta_arith(&mut self, now_ms: u64, m: &MetaCommand) -> Reply {
        let incr = match m.flag(b'M') {
            None => true,
            Some(MetaFlag::Mode(b'I' | b'+')) => true,
            Some(MetaFlag::Mode(b'D' | b'-')) => false,
            Some(_) => return client(ClientError::InvalidArithMode),
        };
        let now_s = now_secs(now_ms);
        let key = &m.key[..];
        let delta = match m.flag(b'D') {
            Some(MetaFlag::Delta(d)) => *d,
            _ => 1,
        };
        let compare = match m.flag(b'C') {
            Some(MetaFlag::CompareCas(c)) => *c,
            _ => 0,
        };
        let mut created = false;
        // The item the reply describes: the live one, or (a growing value) the old one,
        // which memcached still holds and whose TTL `T` then changes to no effect.
        let (value, live, mut old_exptime, old_cas) = match self
            .add_delta(now_s, incr, key, delta, compare)
        {
            Delta::Done { value, in_place } => {
                let item = self.items.get(key);
                let exp = item.map_or(0, |it| it.exptime);
                let cas = item.map_or(0, |it| it.cas);
                (value, in_place, exp, cas)
            }
            Delta::NonNumeric => return client(ClientError::NonNumeric),
            Delta::OutOfMemory => return Reply::ServerError(ServerError::OutOfMemory),
            Delta::NotFound if m.has(b'N') => {
                let initial = match m.flag(b'J') {
                    Some(MetaFlag::Initial(j)) => *j,
                    _ => 0,
                };
                let digits = initial.to_string();
                let size = item_size(key.len(), 0, digits.len());
                if size > self.config.item_size_max || !self.make_room(size, key.len(), now_s, None)
                {
                    return Reply::ServerError(ServerError::OutOfMemoryAllocating);
                }
                let cas = self.link(key, digits.as_bytes(), 0, 0, now_s);
                created = true;
                (initial, true, 0, cas)
            }
            miss @ (Delta::NotFound | Delta::CasMismatch) => {
                let mut reply = MetaReply::status(if miss == Delta::NotFound {
                    MetaStatus::Nf
                } else {
                    MetaStatus::Ex
                });
                if opaque_too_long(m) {
                    return client(ClientError::OpaqueTooLong);
                }
                Self::echoes(m, &mut reply);
                return Reply::Meta(reply);
            }
        };
        let with_value = m.has(b'v');
        let mut reply = MetaReply::status(if with_value {
            MetaStatus::Va
        } else {
            MetaStatus::Hd
        });
        let set_ttl = |store: &mut Store, exp: i64, old_exptime: &mut i64| {
            if live {
                if let Some(item) = store.items.get_mut(key) {
                    set_exptime(&mut store.expiry, item, exp);
                }
            }
            *old_exptime = exp;
        };
        for flag in &m.flags {
            match flag {
                MetaFlag::ReturnCas => reply.flags.push(MetaRet::Cas(old_cas)),
                MetaFlag::ReturnTtl => reply.flags.push(MetaRet::Ttl(ttl_left(old_exptime, now_s))),
                MetaFlag::Ttl(t) => {
                    let exp = self.clock.realtime(now_ms, *t);
                    set_ttl(self, exp, &mut old_exptime);
                }
                MetaFlag::Vivify(t) if created => {
                    let exp = self.clock.realtime(now_ms, *t);
                    set_ttl(self, exp, &mut old_exptime);
                }
                MetaFlag::Opaque(t) if t.len() + 1 > META_OPAQUE_MAX => {
                    return client(ClientError::OpaqueTooLong);
                }
                MetaFlag::Opaque(t) => reply.flags.push(MetaRet::Opaque(t.clone())),
                MetaFlag::ReturnKey => reply.flags.push(MetaRet::Key {
                    key: key.to_vec(),
                    base64: m.base64(),
                }),
                _ => {}
            }
        }
        if with_value {
            reply.value = Some(value.to_string().into_bytes());
        }
        // Only the plain success is quiet: an item created by `N` is answered.
        reply.quiet = !created && m.quiet();
        Reply::Meta(reply)
    }

    /// `process_meta_command` (`me`): the item's internals, without bumping it.
    fn meta_debug(&mut self, now_ms: u64, m: &MetaCommand) -> Reply {
        let now_s = now_secs(now_ms);
        if !self.find(&m.key, now_s) {
            return Reply::Meta(MetaReply::status(MetaStatus::En));
        }
        let Some(item) = self.items.get(&m.key[..]) else {
            return Reply::Meta(MetaReply::status(MetaStatus::En));
        };
        let size = item.size();
        Reply::MetaDebug(MetaDebug {
            key: if item.key_binary {
                base64_encode(&item.key)
            } else {
                item.key.to_vec()
            },
            exp: if item.exptime == 0 {
                -1
            } else {
                i64::from((now_s - item.exptime) as i32)
            },
            la: u64::from((now_s - item.time) as u32),
            cas: item.cas,
            fetched: item.fetched,
            class: slab_class(size, self.config.item_size_max),
            size: size as u64,
        })
    }
}
