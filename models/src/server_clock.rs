//! The server's clock, read by a client: the designs of the visitor counter and the event
//! log that take their periods and chunks from it survive clients whose clocks disagree.
//!
//! memcached's text protocol has no command that answers the server's time alone (`stats`
//! has `time`, but a client library rarely exposes it), yet an item with an absolute
//! expiry tells it: `mg KEY t` answers the seconds the item has left to live, `t`, and
//! with the absolute expiry `E` the item was stored with, the server's clock reads
//! `E - t` (whole seconds, memcached's `current_time`). The clock item is created once
//! with `add KEY "" E` (an absolute `E`, far in the future but below 2^31, so that
//! memcached's 32-bit exptime does not wrap) and created again if it is lost.

use kvsim::command::{MetaCommand, MetaFlag, MetaRet, MetaStatus};
use kvsim::{Kv, KvError};

/// The clock item's absolute expiry, unix seconds (2038-01-19, the largest exptime
/// memcached's 32-bit field keeps).
pub const CLOCK_EXPIRY: i64 = 2_147_483_647;

/// The server's clock in whole unix seconds, read through the clock item `key` (created
/// with [`CLOCK_EXPIRY`] if missing). Probes `clock created` when it creates the item.
pub async fn server_secs<K: Kv>(kv: &K, key: &[u8]) -> Result<u64, KvError> {
    loop {
        let reply = kv
            .meta(MetaCommand::get(key, vec![MetaFlag::ReturnTtl]))
            .await?;
        if reply.status != MetaStatus::En {
            let left = reply.flags.iter().find_map(|f| match f {
                MetaRet::Ttl(t) if *t >= 0 => Some(*t),
                _ => None,
            });
            if let Some(left) = left {
                return Ok((CLOCK_EXPIRY - left).max(0) as u64);
            }
        }
        // Missing (first use, or evicted): create it; another client may have done so
        // first, either way the next read finds it.
        kv.probe("clock created");
        kv.add(key, b"", CLOCK_EXPIRY).await?;
    }
}
