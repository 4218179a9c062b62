//! `stats` for `kvsim serve`: memcached 1.6.18's counters that a store of kvsim's can
//! keep, consistent with each other (a hit is counted once as `get_hits` and once in
//! `cmd_get`), in memcached's order.

use crate::command::{ArithVerb, Command, Reply};
use crate::store::{ItemStats, MemoryReport, Store, Tally};
use crate::wire::{Counted, StatsGroup, VERSION};

/// The counters of one server process (a restart starts them again).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Counters {
    /// Connections accepted since the start.
    pub total_connections: u64,
    /// Connections refused for being one too many.
    pub rejected_connections: u64,
    /// Retrieval keys looked up.
    pub cmd_get: u64,
    /// Storage commands.
    pub cmd_set: u64,
    /// `flush_all` commands.
    pub cmd_flush: u64,
    /// `touch`, `gat`, `gats` keys.
    pub cmd_touch: u64,
    /// Meta commands (`mg`, `ms`, `md`, `ma`, `mn`, `me`).
    pub cmd_meta: u64,
    /// Retrieval keys found.
    pub get_hits: u64,
    /// Retrieval keys not found.
    pub get_misses: u64,
    /// Lookups (of any command) that met an expired item.
    pub get_expired: u64,
    /// Lookups (of any command) that met a flushed item.
    pub get_flushed: u64,
    /// Values too large for an item.
    pub store_too_large: u64,
    /// `delete` of a missing key.
    pub delete_misses: u64,
    /// `delete` of a present key.
    pub delete_hits: u64,
    /// `incr` of a missing key.
    pub incr_misses: u64,
    /// `incr` of a present key.
    pub incr_hits: u64,
    /// `decr` of a missing key.
    pub decr_misses: u64,
    /// `decr` of a present key.
    pub decr_hits: u64,
    /// `cas` of a missing key.
    pub cas_misses: u64,
    /// `cas` that stored.
    pub cas_hits: u64,
    /// `cas` that lost to another writer.
    pub cas_badval: u64,
    /// `touch` of a present key.
    pub touch_hits: u64,
    /// `touch` of a missing key.
    pub touch_misses: u64,
    /// Bytes read from clients.
    pub bytes_read: u64,
    /// Bytes written to clients.
    pub bytes_written: u64,
    /// Items linked since the start (stores, appends, incrs that outgrew their item).
    pub total_items: u64,
    /// Items evicted (by the LRU and by faults).
    pub evictions: u64,
    /// Dead (expired or flushed) items reaped in the background.
    pub reclaimed: u64,
}

impl Counters {
    /// Counts what the store did that its replies do not show ([`Tally`]).
    pub fn tally(&mut self, tally: Tally) {
        self.get_expired += tally.expired;
        self.get_flushed += tally.flushed;
        self.total_items += tally.linked;
    }

    /// Counts a request the protocol layer answered on its own.
    pub fn counted(&mut self, counted: Counted) {
        match counted {
            Counted::SetCommand => self.cmd_set += 1,
            Counted::Flush => self.cmd_flush += 1,
            Counted::TooLarge => self.store_too_large += 1,
        }
    }

    /// Counts one applied command and its reply (a multi-get arrives as one-key gets).
    /// As memcached 1.6.18 counts them: a `gat`/`gats` key is a touch (`cmd_touch`,
    /// `touch_hits`, `touch_misses`), not a get.
    pub fn count(&mut self, command: &Command, reply: &Reply) {
        match command {
            Command::Get { keys, .. } | Command::Gat { keys, .. } => {
                let found = match reply {
                    Reply::Values(v) => v.len() as u64,
                    _ => 0,
                };
                let missed = (keys.len() as u64).saturating_sub(found);
                if matches!(command, Command::Gat { .. }) {
                    self.cmd_touch += keys.len() as u64;
                    self.touch_hits += found;
                    self.touch_misses += missed;
                } else {
                    self.cmd_get += keys.len() as u64;
                    self.get_hits += found;
                    self.get_misses += missed;
                }
            }
            Command::Store { .. } => self.cmd_set += 1,
            Command::Cas { .. } => {
                self.cmd_set += 1;
                match reply {
                    Reply::Stored => self.cas_hits += 1,
                    Reply::Exists => self.cas_badval += 1,
                    _ => self.cas_misses += 1,
                }
            }
            Command::Arith { verb, .. } => {
                let hit = matches!(reply, Reply::Number(_));
                let missed = matches!(reply, Reply::NotFound);
                let (hits, misses) = match verb {
                    ArithVerb::Incr => (&mut self.incr_hits, &mut self.incr_misses),
                    ArithVerb::Decr => (&mut self.decr_hits, &mut self.decr_misses),
                };
                *hits += u64::from(hit);
                *misses += u64::from(missed);
            }
            Command::Delete { .. } => match reply {
                Reply::Deleted => self.delete_hits += 1,
                _ => self.delete_misses += 1,
            },
            Command::Touch { .. } => {
                self.cmd_touch += 1;
                match reply {
                    Reply::Touched => self.touch_hits += 1,
                    _ => self.touch_misses += 1,
                }
            }
            Command::FlushAll { .. } => self.cmd_flush += 1,
            // Meta commands are not counted yet.
            // memcached counts meta commands in `cmd_meta` (their gets and sets also count
            // as such; that finer split is left out).
            Command::Meta(_) => self.cmd_meta += 1,
        }
    }
}

/// What `stats` needs besides the counters.
pub struct StatsContext<'a> {
    /// The store (items, bytes, limit).
    pub store: &'a Store,
    /// The server clock now (ms since the epoch).
    pub now_ms: u64,
    /// When this server process started (ms since the epoch, server clock).
    pub started_ms: u64,
    /// Connections open now.
    pub curr_connections: u64,
    /// The connection limit.
    pub max_connections: u64,
    /// The port clients connect to.
    pub port: u16,
    /// The open connections: id and peer.
    pub conns: Vec<(u64, String)>,
}

/// The `STAT` lines of `group`.
pub fn render(group: StatsGroup, c: &Counters, ctx: &StatsContext<'_>) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = Vec::new();
    let mut put = |name: &str, value: String| out.push((name.to_string(), value));
    // memcached's curr_items counts the items linked, dead ones not yet reaped included.
    let items = ctx.store.item_count() as u64;
    let bytes = ctx.store.used_bytes() as u64;
    let limit = ctx.store.config().memory_limit.unwrap_or(0) as u64;
    let report = match group {
        StatsGroup::General | StatsGroup::Items | StatsGroup::Slabs => {
            ctx.store.memory_report(ctx.now_ms)
        }
        _ => None,
    };
    let total = |f: fn(&ItemStats) -> u64| {
        report
            .as_ref()
            .map_or(0, |r| r.classes.iter().map(|c| f(&c.stats)).sum::<u64>())
    };
    let (expired_unfetched, evicted_unfetched, tail_reclaimed) = (
        total(|s| s.expired_unfetched),
        total(|s| s.evicted_unfetched),
        total(|s| s.reclaimed),
    );
    match group {
        StatsGroup::General => {
            put("pid", std::process::id().to_string());
            put(
                "uptime",
                (ctx.now_ms.saturating_sub(ctx.started_ms) / 1000).to_string(),
            );
            put("time", (ctx.now_ms / 1000).to_string());
            put("version", VERSION.to_string());
            put("pointer_size", "64".into());
            put("max_connections", ctx.max_connections.to_string());
            put("curr_connections", ctx.curr_connections.to_string());
            put("total_connections", c.total_connections.to_string());
            put("rejected_connections", c.rejected_connections.to_string());
            put("cmd_get", c.cmd_get.to_string());
            put("cmd_set", c.cmd_set.to_string());
            put("cmd_flush", c.cmd_flush.to_string());
            put("cmd_touch", c.cmd_touch.to_string());
            put("cmd_meta", c.cmd_meta.to_string());
            put("get_hits", c.get_hits.to_string());
            put("get_misses", c.get_misses.to_string());
            put("get_expired", c.get_expired.to_string());
            put("get_flushed", c.get_flushed.to_string());
            put("delete_misses", c.delete_misses.to_string());
            put("delete_hits", c.delete_hits.to_string());
            put("incr_misses", c.incr_misses.to_string());
            put("incr_hits", c.incr_hits.to_string());
            put("decr_misses", c.decr_misses.to_string());
            put("decr_hits", c.decr_hits.to_string());
            put("cas_misses", c.cas_misses.to_string());
            put("cas_hits", c.cas_hits.to_string());
            put("cas_badval", c.cas_badval.to_string());
            put("touch_hits", c.touch_hits.to_string());
            put("touch_misses", c.touch_misses.to_string());
            put("store_too_large", c.store_too_large.to_string());
            put("store_no_memory", "0".into());
            put("bytes_read", c.bytes_read.to_string());
            put("bytes_written", c.bytes_written.to_string());
            put("limit_maxbytes", limit.to_string());
            put("accepting_conns", "1".into());
            put("threads", "1".into());
            put("bytes", bytes.to_string());
            put("curr_items", items.to_string());
            put("total_items", c.total_items.to_string());
            put("expired_unfetched", expired_unfetched.to_string());
            put("evicted_unfetched", evicted_unfetched.to_string());
            put("evictions", c.evictions.to_string());
            put("reclaimed", (c.reclaimed + tail_reclaimed).to_string());
        }
        StatsGroup::Items => match &report {
            Some(report) => items_lines(report, &mut put),
            None if items > 0 => {
                put("items:1:number", items.to_string());
                put("items:1:age", "0".into());
                put("items:1:mem_requested", bytes.to_string());
                put("items:1:evicted", c.evictions.to_string());
                put("items:1:outofmemory", "0".into());
            }
            None => {}
        },
        StatsGroup::Slabs => match &report {
            Some(report) => slabs_lines(report, &mut put),
            None => {
                if items > 0 {
                    put("1:chunk_size", "96".into());
                    put("1:used_chunks", items.to_string());
                    put("1:get_hits", c.get_hits.to_string());
                    put("1:cmd_set", c.cmd_set.to_string());
                }
                put("active_slabs", u64::from(items > 0).to_string());
                put("total_malloced", bytes.to_string());
            }
        },
        StatsGroup::Settings => {
            put("maxbytes", limit.to_string());
            put("maxconns", ctx.max_connections.to_string());
            put("tcpport", ctx.port.to_string());
            put("udpport", "0".into());
            put("evictions", "on".into());
            put("cas_enabled", "yes".into());
            put(
                "item_size_max",
                ctx.store.config().item_size_max.to_string(),
            );
        }
        StatsGroup::Conns => {
            for (id, peer) in &ctx.conns {
                put(&format!("{id}:addr"), format!("tcp:{peer}"));
                put(&format!("{id}:state"), "conn_parse_cmd".into());
            }
        }
        StatsGroup::Sizes => put("sizes_status", "disabled".into()),
        StatsGroup::Reset => {}
    }
    out
}

/// `stats items` as memcached 1.6.18 prints it: every class holding items, the
/// per-segment lines only with the segmented LRU (the LRU maintainer on).
fn items_lines(report: &MemoryReport, put: &mut impl FnMut(&str, String)) {
    for class in &report.classes {
        let number: usize = class.number.iter().sum();
        if number == 0 {
            continue;
        }
        let id = class.class.id;
        let s = &class.stats;
        let mut line = |name: &str, value: String| put(&format!("items:{id}:{name}"), value);
        line("number", number.to_string());
        if report.segmented {
            line("number_hot", class.number[0].to_string());
            line("number_warm", class.number[1].to_string());
            line("number_cold", class.number[2].to_string());
            line("age_hot", class.ages[0].to_string());
            line("age_warm", class.ages[1].to_string());
        }
        line("age", class.ages[2].to_string());
        line("mem_requested", class.mem_requested.to_string());
        line("evicted", s.evicted.to_string());
        line("evicted_nonzero", s.evicted_nonzero.to_string());
        line("evicted_time", s.evicted_time.to_string());
        line("outofmemory", s.outofmemory.to_string());
        line("tailrepairs", "0".into());
        line("reclaimed", s.reclaimed.to_string());
        line("expired_unfetched", s.expired_unfetched.to_string());
        line("evicted_unfetched", s.evicted_unfetched.to_string());
        if report.segmented {
            line("evicted_active", s.evicted_active.to_string());
        }
        line("crawler_reclaimed", "0".into());
        line("crawler_items_checked", "0".into());
        line("lrutail_reflocked", s.lrutail_reflocked.to_string());
        if report.segmented {
            line("moves_to_cold", s.moves_to_cold.to_string());
            line("moves_to_warm", s.moves_to_warm.to_string());
            line("moves_within_lru", s.moves_within_lru.to_string());
            line("direct_reclaims", s.direct_reclaims.to_string());
            line("hits_to_hot", s.hits[0].to_string());
            line("hits_to_warm", s.hits[1].to_string());
            line("hits_to_cold", s.hits[2].to_string());
            line("hits_to_temp", s.hits[3].to_string());
        }
    }
}

/// `stats slabs` as memcached 1.6.18 prints it: every class holding a page.
fn slabs_lines(report: &MemoryReport, put: &mut impl FnMut(&str, String)) {
    let mut active = 0;
    for class in report.classes.iter().filter(|c| c.total_pages > 0) {
        active += 1;
        let id = class.class.id;
        let s = &class.stats;
        let mut line = |name: &str, value: String| put(&format!("{id}:{name}"), value);
        line("chunk_size", class.class.chunk.to_string());
        line("chunks_per_page", class.class.per_page.to_string());
        line("total_pages", class.total_pages.to_string());
        line(
            "total_chunks",
            (class.total_pages * class.class.per_page).to_string(),
        );
        line("used_chunks", class.used_chunks.to_string());
        line("free_chunks", class.free_chunks.to_string());
        line("free_chunks_end", "0".into());
        line("get_hits", s.hits.iter().sum::<u64>().to_string());
        line("cmd_set", s.cmd_set.to_string());
        line("delete_hits", s.delete_hits.to_string());
        line("incr_hits", s.incr_hits.to_string());
        line("decr_hits", s.decr_hits.to_string());
        line("cas_hits", s.cas_hits.to_string());
        line("cas_badval", s.cas_badval.to_string());
        line("touch_hits", s.touch_hits.to_string());
    }
    put("active_slabs", active.to_string());
    put("total_malloced", report.total_malloced.to_string());
}
