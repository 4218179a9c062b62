//! The store's contents over a run, recorded only when asked for ([`super::run_with_store`]):
//! after each step of the world, what changed in the stores (items set or changed, items
//! gone), tied to the trace step that changed them. A run without it records nothing and
//! runs as before; the trace, the choices and the token are the same either way.

use super::trace::{Event, TraceStep};
use super::world::ServerState;
use super::EPOCH_MS;
use crate::command::show_bytes;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// One item as a viewer shows it, in the trace's words.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct StoreItem {
    /// The server that holds it.
    pub shard: usize,
    /// The key, as the trace writes keys (`c0x0`, non-printable bytes as `\xNN`).
    pub key: String,
    /// The value, as the trace writes values (quoted: `"a"`).
    pub value: String,
    /// The client flags.
    pub flags: u32,
    /// The cas unique.
    pub cas: u64,
    /// The expiration as the store holds it: absolute unix seconds, 0 = never.
    pub exptime: i64,
    /// The expiration in the trace's virtual time (ms since the run started; 0 for a time
    /// before the run), `None` when the item never expires.
    pub expires_ms: Option<u64>,
    /// Dead (expired or flushed) but not yet reaped: no command sees it.
    pub dead: bool,
}

/// What one step changed in the stores.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct StoreChange {
    /// The trace step (index into the trace) after which the stores look like this.
    pub at: usize,
    /// Items new or changed (their whole new state).
    pub set: Vec<StoreItem>,
    /// Items gone: `(shard, key)`.
    pub gone: Vec<(usize, String)>,
}

/// The stores over a run: empty when it starts, then each change in trace order.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct StoreLog {
    /// The changes, in trace order (`at` never decreases).
    pub changes: Vec<StoreChange>,
}

impl StoreLog {
    /// The items after trace step `at` (all changes with `at` up to it applied), by
    /// `(shard, key)`.
    pub fn at(&self, at: usize) -> BTreeMap<(usize, String), StoreItem> {
        let mut items = BTreeMap::new();
        for c in self.changes.iter().take_while(|c| c.at <= at) {
            for g in &c.gone {
                items.remove(g);
            }
            for it in &c.set {
                items.insert((it.shard, it.key.clone()), it.clone());
            }
        }
        items
    }
}

/// Watches the stores while a run goes on and writes down what changed.
#[derive(Debug, Default)]
pub(crate) struct StoreRecorder {
    last: BTreeMap<(usize, Vec<u8>), StoreItem>,
    /// Trace steps seen at the last look.
    seen: usize,
    log: StoreLog,
}

impl StoreRecorder {
    /// Looks at the stores after the world moved: what differs from the last look is one
    /// change, tied to the last command or fault the trace got since (else its last new
    /// step; with no new step, the next one).
    pub(crate) fn observe(&mut self, servers: &[ServerState], now: u64, trace: &[TraceStep]) {
        let new = &trace[self.seen.min(trace.len())..];
        let at = match new
            .iter()
            .rposition(|s| matches!(s.event, Event::Call { .. } | Event::Fault(_)))
        {
            Some(i) => self.seen + i,
            None if new.is_empty() => trace.len(),
            None => trace.len() - 1,
        };
        self.seen = trace.len();
        // Whether an item is dead is judged at the time of the step the change is tied to
        // (the world's clock may have moved on since), so that a step shows the stores as
        // they were at its own time.
        let when = trace.get(at).map_or(now, |s| s.time_ms + EPOCH_MS).min(now);
        let mut now_items = BTreeMap::new();
        for (shard, sv) in servers.iter().enumerate() {
            for (it, dead) in sv.store.items_at(when) {
                now_items.insert((shard, it.key.to_vec()), item(shard, it, dead));
            }
        }
        let mut change = StoreChange {
            at,
            set: Vec::new(),
            gone: Vec::new(),
        };
        for (k, it) in &now_items {
            if self.last.get(k) != Some(it) {
                change.set.push(it.clone());
            }
        }
        for (shard, key) in self.last.keys() {
            if !now_items.contains_key(&(*shard, key.clone())) {
                change.gone.push((*shard, show_bytes(key)));
            }
        }
        self.last = now_items;
        if !change.set.is_empty() || !change.gone.is_empty() {
            self.log.changes.push(change);
        }
    }

    /// The log, each change tied to a step the trace has (`trace_len` steps).
    pub(crate) fn finish(mut self, trace_len: usize) -> StoreLog {
        for c in &mut self.log.changes {
            c.at = c.at.min(trace_len.saturating_sub(1));
        }
        self.log
    }
}

fn item(shard: usize, it: &crate::store::item::Item, dead: bool) -> StoreItem {
    StoreItem {
        shard,
        key: show_bytes(&it.key),
        value: format!("{:?}", show_bytes(&it.data)),
        flags: it.flags,
        cas: it.cas,
        exptime: it.exptime,
        expires_ms: (it.exptime != 0)
            .then(|| (it.exptime.max(0) as u64 * 1000).saturating_sub(EPOCH_MS)),
        dead,
    }
}
