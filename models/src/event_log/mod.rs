//! §5 Event log as a ring of time chunks (001, "イベントログ": MCEventLog).
//!
//! # Published
//! ```text
//! key(n) = "messagelog" + name + "_" + n
//! put(event): k = key(event.when() // timeChunk % numChunks)
//!   loop: append(k, serialize(event)) -> return; on miss:
//!         add(k, serialize(event), timeChunk * (numChunks-1)) -> return; on NOT_STORED: loop
//! fetch(): last = time(); first = time() - timeChunk*(numChunks-1)
//!   firstKey = first // timeChunk % numChunks; lastKey = last // timeChunk % numChunks
//!   keys firstKey..=lastKey, or firstKey..numChunks then 0..=lastKey
//!   result = events of those keys with first <= when <= last
//! ```
//! with the \[repair\]s of `STRUCTURES.md` (`//`, and `events` for the printed `l`). An
//! event is an id stamped with `when()` = the putting client's clock in whole seconds,
//! serialized as `id@when;` (concatenates under `append`). `timeChunk` and `numChunks` are
//! [`TIME_CHUNK`] and [`NUM_CHUNKS`] (the article's defaults are 10 and 10: the same
//! mechanism over a longer time).
//!
//! # The workload
//! Even clients put events, call `fetch()` without arguments (then `first`/`last` are
//! computed exactly as printed, `time()` read once) and let time go by. Every odd client
//! ([`is_reader`]) is a reader that uses the log as the article describes:
//! - `fetch(first, last)` over a window given relative to its clock
//!   ([`Op::FetchRange`]: `first = time() - ago`, `last = first + span`): windows inside
//!   one chunk, across chunks and the ring's wrap, reaching past the capacity (which
//!   `fetch` replaces by the last `W` seconds) or into the future (cut at `time()`);
//! - the article's polling use ([`Op::Poll`]): `events = fetch()`, a pause, then
//!   `fetch(first = lastSeen)` with `lastSeen = max(e.when())` of the events so far.
//!
//! # The property (time window)
//! With `W = timeChunk * (numChunks-1)` seconds (the article: "the capacity of the log is
//! (numChunks-1)*timeChunk seconds") and true (virtual) time in milliseconds, a `fetch()`
//! called at `fc` and returning at `fr`:
//! - returns every event whose `put` returned before `fc` and was called after
//!   `fr - (W-1) s` (the one second is the granularity of `when()`);
//! - returns no event twice, none whose `put` returned before `fc - (W+1) s` (the event
//!   happened somewhere in its put's span: a put stalled before it stamps the event, as
//!   the server-clock designs' round trip for the time can be, stamps it late), and none
//!   whose `put` had not been called by `fr`.
//!
//! Events of a `put` with an unknown outcome may be returned or not.
//!
//! A `fetch(first, last)` reports the window it read as seconds relative to its clock
//! reading `now` ([`Window`]: `first = now - back`, `last = first + span`, after its own
//! corrections). Besides the rules above (with "returns every event" limited to the
//! window), it returns every event whose whole `put` lies more than a second inside the
//! window, and none whose whole `put` lies more than a second outside it (the second of
//! slack covers `when()`'s granularity and where in the call the clock was read; the
//! rules take the clocks to be right, as the skew scenario shows they need not be).
//!
//! # The property (polling)
//! A poll is judged round by round (each round's start is its `poll` mark) as the fetches
//! above, the events of earlier rounds counting as returned, and as a whole: no event is
//! returned by two rounds, and every event whose `put` returned before the last round
//! started and is still inside the window when the poll returns was returned by some
//! round (a poller that follows the recipe must neither see an event twice nor lose one).
//!
//! What the published ring gets wrong against the article's own capacity claim: a chunk's
//! key expires `W` seconds after its *first* event, not after its last, so the newest
//! events of the oldest chunk disappear up to one chunk early. Client clocks that
//! disagree put events in chunks the readers do not look at.
//!
//! # Repairs (`event-log/published+REPAIR`)
//! Each a switch in the published code ([`REPAIRS`]): `ring-range-once` (the key range
//! `firstKey..=lastKey` when `firstKey <= lastKey`), `poll-skips-returned` (the poller's
//! second round drops the events its first returned), `expire-at-chunk-end` (a chunk's
//! key gets the absolute expiry at which the ring reuses it, `(chunk + numChunks) *
//! timeChunk`), `server-clock` (`time()`, and so `when()`, is the server's clock, read
//! through an item with an absolute expiry: [`crate::server_clock`]).
//!
//! # The article's defects
//! - **ring-range-once** (`no-faults`): "if firstKey < lastKey: keyRange = range(firstKey, lastKey+1) else: keyRange = range(firstKey, self.numChunks) + range(0, lastKey+1)" — a window inside one chunk
//!   (`firstKey == lastKey`) goes round the whole ring and reads that chunk twice: a
//!   `fetch(first, last)` returns its events twice.
//! - **poll-skips-returned** (`no-faults`): "events = fetch(first=lastSeen)" — the second
//!   round includes second `lastSeen`, whose events the first round returned: the poll
//!   returns them twice.
//! - **expire-at-chunk-end** (`no-faults`): "self.mc.add(key, serialized, self.timeChunk * (self.numChunks-1))" — the key expires
//!   `W` after the chunk's first event, not its last: a `fetch()` misses events still
//!   inside the window.
//! - **server-clock** (`skew`): "key = self.keyTemplate % (event.when() // self.timeChunk % self.numChunks)" — events are stamped and
//!   chunks chosen on each client's clock: a skewed client files events where readers
//!   do not look, or outside the window.
//! - **none:poll-misses-late-events** (`crash-lose-pause`): "max(events.when())" — an event
//!   is stamped before it lands: one stamped before `lastSeen` that lands after the first
//!   round (its put stalled) is never returned by any round (found with every repair on;
//!   the fixed poller reads the whole window every round).
//! - **none:resent-append-duplicates** (`retrying-client`): "self.mc.append(key, serialized)" — a client library
//!   that sends a timed-out `append` again stores the event twice, and every fetch
//!   returns it twice (the fixed `fetch` drops repeated ids).
//! - **none:evicted-chunk** (`evict`): "try: events = Event.deserialize(self.mc.get(key)) except KeyError: continue" — an evicted chunk
//!   is skipped silently: its events are gone (every variant).
//!
//! # Findings (kvsim, pinned in `tests/findings.rs`)
//! - No faults, a writer: chunk 0's key, created at its first event with expiry `W`,
//!   dies with later events in it; a later `fetch()` misses them though they are inside
//!   the window (`event_log_published_drops_events_before_the_window_ends`).
//! - No faults, a reader: the polling use returns events twice
//!   (`event_log_published_polling_returns_events_twice`,
//!   `event_log_published_reads_a_chunk_twice_for_a_window_inside_it`); `kvsim explore`'s
//!   default scope (a writer and a reader, one operation each) finds it.
//! - Every repair on: `crash-lose-pause` shows the poll's lost late event,
//!   `retrying-client` the resent append's duplicate, `evict` the lost chunk; `no-faults`,
//!   `skew` and `delay` pass.
//!
//! # Fixed
//! One key per absolute chunk number (`messagelog<name>_c<n>`, never reused), created
//! with an expiry of `W + 2*timeChunk` seconds, long enough for its last event to leave
//! the window; `fetch` reads the chunks from `first` to `last` and filters by `when`. Its
//! `time()` is the server's clock, read through the clock item [`CLOCK_KEY`] (`mg
//! messagelogev_clock t`: the item's absolute expiry minus its time to live), so events
//! are stamped and windows measured on one clock whatever the clients' clocks say. A
//! timed-out `append` is retried (it may then be stored twice) and `fetch` drops repeated
//! ids, so every `put` ends with a known outcome. Its poller reads the whole window in
//! every round and keeps the ids the earlier rounds did not return: a `when` is stamped
//! before the event lands (a put paused or delayed between its clock read and its
//! `append` lands with an old `when`), so a round that starts from `lastSeen` can lose it,
//! and one that starts a second later can return it twice.
//!
//! Tolerates, by scenario: no faults (`no-faults`); `crash`, `lose` and `pause`
//! (`crash-lose-pause`); `skew` (`skew`: the server's clock decides); `delay` (`delay`);
//! a library that resends (`retrying-client`). Untested: `expire`, `shard-fail` (and
//! `lru`, `restart` below).
//!
//! Not fixed yet: nothing a scenario shows.
//!
//! What no design on this store can fix: `evict` (scenario `evict`; `lru`, `restart` and
//! `shard-fail` lose keys the same way, untested), because the events' only copy is gone.
//! (`skew` was listed here while the fixed variant read the clients' clocks: memcached
//! does tell a client the server's clock, through an item's time to live.)
//!
//! Probes: `create on miss` (a put's `append` found no chunk and it creates the chunk with
//! `add`), `add not stored` (that `add` found the chunk present: another put created it
//! first, and the loop appends again), `wrap` (published: a fetch's key range goes round
//! the ring's end, all the way round when `firstKey == lastKey`, reading that chunk twice),
//! `timeout resolved` (fixed: a timed-out `append` or `add` sent again),
//! `duplicate dropped` (fixed: a fetch found an id twice, a resent `append` that landed
//! twice, and kept one), `clock created` (fixed, `server-clock`: the clock item was
//! missing and is created).
//!
//! # History files
//! `kvsim stress --history-out` writes, and `kvsim check-history --spec event-log
//! --window SECS` reads ([`op_from_raw`], judged by [`check_window`]), these operations
//! (a window is `{"back": B, "span": S, "events": [ID, ...]}`, [`Window`]: it read
//! `first = now - B` to `last = first + S`, whole seconds, `now` a clock reading during
//! the call, after the fetch's own corrections; the events in the order found):
//! - `put`: the event's id (an integer from 0 to 4294967295); its result is ignored;
//! - `fetch`: `fetch()`, the last `W` seconds; returns the event ids, `[ID, ...]`;
//! - `fetch-range`: `fetch(first, last)`; returns the window it read (its value, kvsim's
//!   `{"ago", "span"}`, is ignored);
//! - `poll`: the polling use; returns its rounds' windows in order, `[WINDOW, ...]` (its
//!   value, kvsim's milliseconds between the rounds, is ignored; each round is judged as
//!   if it spanned the whole poll, as the file does not say when each began);
//! - `sleep`: idle time, values ignored.
//!
//! `time` is in milliseconds on the clock of the structure's `time()` (a real
//! structure's: Unix epoch milliseconds).

use crate::expect::{Expect, ExpectedVerdict, Variant};
use crate::server_clock::server_secs;
use kvsim::{
    FaultKind, History, JsonlFormat, Kv, KvError, Model, Repair, Scenario, SimRng, StoreOutcome,
    Verdict,
};
use std::collections::BTreeSet;

mod history;
mod judge;

use history::jsonl_op;
pub use history::{op_from_raw, MAX_WINDOW_SECS};
pub use judge::check_window;

/// `timeChunk`, seconds.
pub const TIME_CHUNK: u64 = 5;

/// `numChunks`.
pub const NUM_CHUNKS: u64 = 3;

/// Whether client `c` reads (windows and polls) rather than puts: every odd client (so
/// 3 clients are two writers and a reader, 2 clients a writer and a reader).
pub fn is_reader(c: usize) -> bool {
    c % 2 == 1
}

/// The clock item through which the server-clock designs read the server's clock
/// ([`crate::server_clock`]).
pub const CLOCK_KEY: &[u8] = b"messagelogev_clock";

/// The published event log's probes ([`Kv::probe`]): its `put` loop and its ring `fetch`.
const PUBLISHED_PROBES: &[&str] = &["create on miss", "add not stored", "wrap"];

/// The repaired event log's probes: the published ones and the server's clock item.
const REPAIRED_PROBES: &[&str] = &["create on miss", "add not stored", "wrap", "clock created"];

/// The repairs of the published event log ([`Model::repairs`]), each the fix of one defect.
pub const REPAIRS: &[Repair] = &[
    Repair {
        name: "ring-range-once",
        fixes: "a window inside one chunk (firstKey == lastKey) makes the printed key range \
                go round the whole ring and read that chunk twice (the repair: the range \
                firstKey..lastKey when firstKey <= lastKey)",
    },
    Repair {
        name: "poll-skips-returned",
        fixes: "polling with fetch(first = lastSeen) returns the events of second lastSeen \
                again (the repair: the poller drops the events it returned already)",
    },
    Repair {
        name: "expire-at-chunk-end",
        fixes: "a chunk's key expires (numChunks-1)*timeChunk seconds after its first event, \
                not after its last, so its newest events leave up to a chunk early (the \
                repair: an absolute expiry at the moment the ring reuses the key)",
    },
    Repair {
        name: "server-clock",
        fixes: "events are stamped and windows measured on each client's own clock, so a \
                skewed client files events where readers do not look (the repair: time() \
                is the server's clock, read as an item's time to live)",
    },
];

/// The fixed event log's probes: its `put` loop (timeouts sent again), its chunked
/// `fetch` (repeats dropped) and the server's clock item.
const FIXED_PROBES: &[&str] = &[
    "create on miss",
    "add not stored",
    "timeout resolved",
    "duplicate dropped",
    "clock created",
];

/// An event-log operation.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Op {
    /// `put(event)`: the event with this id, happening now.
    Put(u32),
    /// `fetch()`.
    Fetch,
    /// `fetch(first = time() - ago, last = first + span)`, seconds.
    FetchRange {
        /// How far back the window starts, seconds before the clock reading.
        ago: u64,
        /// The window's length, seconds.
        span: u64,
    },
    /// The article's polling use: `events = fetch()`, a sleep of this many milliseconds,
    /// then `events = fetch(first = lastSeen)` with `lastSeen = max(e.when())` of the
    /// events so far (the fixed variant: see its section).
    Poll(u64),
    /// The client does nothing for this long (lets time go by).
    Sleep(u64),
}

/// The window a `fetch(first, last)` read, relative to its clock reading `now`, and what
/// it returned.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Window {
    /// `first = now - back`, seconds.
    pub back: u64,
    /// `last = first + span`, seconds.
    pub span: u64,
    /// The event ids returned, in the order found.
    pub events: Vec<u32>,
}

/// What an operation returns.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Ret {
    /// `put` returned.
    Put,
    /// `fetch()` returned these event ids (in the order found).
    Events(Vec<u32>),
    /// `fetch(first, last)` read this window.
    Range(Window),
    /// The rounds of a poll, in order.
    Polled(Vec<Window>),
    /// The sleep ended.
    Slept,
}

/// One serialized event.
fn serialize(id: u32, when: u64) -> Vec<u8> {
    format!("{id}@{when};").into_bytes()
}

/// `(id, when)` pairs of a chunk's value; malformed pieces are skipped.
fn deserialize(data: &[u8]) -> Vec<(u32, u64)> {
    String::from_utf8_lossy(data)
        .split(';')
        .filter_map(|e| {
            let (id, when) = e.split_once('@')?;
            Some((id.parse().ok()?, when.parse().ok()?))
        })
        .collect()
}

/// The event log of §5, in one of its variants.
#[derive(Clone, Debug)]
pub struct EventLog {
    variant: Variant,
    name: String,
    time_chunk: u64,
    num_chunks: u64,
}

/// The published event log.
pub fn published() -> EventLog {
    EventLog::new(Variant::Published)
}

/// The fixed event log.
pub fn fixed() -> EventLog {
    EventLog::new(Variant::Fixed)
}

impl EventLog {
    /// The log named `ev` with [`TIME_CHUNK`] and [`NUM_CHUNKS`].
    pub fn new(variant: Variant) -> EventLog {
        EventLog {
            variant,
            name: "ev".to_string(),
            time_chunk: TIME_CHUNK,
            num_chunks: NUM_CHUNKS,
        }
    }

    /// Which variant this is.
    pub fn variant(&self) -> Variant {
        self.variant
    }

    /// The window `W` in seconds.
    pub fn window_secs(&self) -> u64 {
        self.time_chunk * (self.num_chunks - 1)
    }

    fn key(&self, n: u64) -> Vec<u8> {
        format!("messagelog{}_{n}", self.name).into_bytes()
    }

    fn chunk_key(&self, c: u64) -> Vec<u8> {
        format!("messagelog{}_c{c}", self.name).into_bytes()
    }

    /// Whether `time()` is the server's clock (`server-clock`, and the fixed variant).
    fn server_clock(&self) -> bool {
        self.variant == Variant::Fixed || self.variant.repaired("server-clock")
    }

    /// `time()`: the client's own clock, or the server's ([`EventLog::server_clock`]).
    async fn time<K: Kv>(&self, kv: &K) -> Result<u64, KvError> {
        if self.server_clock() {
            server_secs(kv, CLOCK_KEY).await
        } else {
            Ok(kv.now_secs())
        }
    }

    /// The clock reading a returned window is told relative to: `start` (the reading the
    /// fetch began with) on the server's clock, else the client's clock now.
    fn window_now<K: Kv>(&self, kv: &K, start: u64) -> u64 {
        if self.server_clock() {
            start
        } else {
            kv.now_secs()
        }
    }

    async fn published_put<K: Kv>(&self, kv: &K, id: u32) -> Result<Ret, KvError> {
        let when = self.time(kv).await?;
        let serialized = serialize(id, when);
        let k = self.key(when / self.time_chunk % self.num_chunks);
        loop {
            if kv.append(&k, &serialized).await? == StoreOutcome::Stored {
                return Ok(Ret::Put);
            }
            kv.probe("create on miss");
            // Repair `expire-at-chunk-end`: the key dies when the ring reuses it, an
            // absolute time.
            let exp = if self.variant.repaired("expire-at-chunk-end") {
                (when / self.time_chunk + self.num_chunks) * self.time_chunk
            } else {
                self.time_chunk * (self.num_chunks - 1)
            } as i64;
            if kv.add(&k, &serialized, exp).await? == StoreOutcome::Stored {
                return Ok(Ret::Put);
            }
            kv.probe("add not stored");
        }
    }

    /// The window `fetch(first, last)` reads, corrected as printed (`time()` read once
    /// per use): `last` no later than now, `first` the last `W` seconds when it is
    /// missing, after `last` or too far before it.
    fn corrected(&self, now: u64, first: Option<u64>, last: Option<u64>) -> (u64, u64) {
        let w = self.window_secs();
        let last = match last {
            Some(l) if l <= now => l,
            _ => now,
        };
        let first = match first {
            Some(f) if f <= last && last - f <= w => f,
            _ => now.saturating_sub(w),
        };
        (first, last)
    }

    /// `fetch(first, last)` as printed: the window read and the events found, with
    /// their `when`.
    async fn published_fetch<K: Kv>(
        &self,
        kv: &K,
        first: Option<u64>,
        last: Option<u64>,
    ) -> Result<Found, KvError> {
        let now = self.time(kv).await?;
        let (first, last) = self.corrected(now, first, last);
        let first_key = first / self.time_chunk % self.num_chunks;
        let last_key = last / self.time_chunk % self.num_chunks;
        // Repair `ring-range-once`: a window inside one chunk reads that chunk once.
        let once = self.variant.repaired("ring-range-once") && first_key == last_key;
        let range: Vec<u64> = if first_key < last_key || once {
            (first_key..=last_key).collect()
        } else {
            // Round the ring's end (and, when `first_key == last_key`, the whole ring).
            kv.probe("wrap");
            (first_key..self.num_chunks).chain(0..=last_key).collect()
        };
        let mut events = Vec::new();
        for k in range {
            let Some(data) = kv.get(&self.key(k)).await? else {
                continue;
            };
            events.extend(
                deserialize(&data)
                    .into_iter()
                    .filter(|(_, when)| first <= *when && *when <= last),
            );
        }
        Ok(Found {
            first,
            last,
            now,
            events,
        })
    }

    async fn fixed_put<K: Kv>(&self, kv: &K, id: u32) -> Result<Ret, KvError> {
        let when = server_secs(kv, CLOCK_KEY).await?;
        let serialized = serialize(id, when);
        let k = self.chunk_key(when / self.time_chunk);
        let exp = (self.window_secs() + 2 * self.time_chunk) as i64;
        loop {
            match kv.append(&k, &serialized).await {
                Ok(StoreOutcome::Stored) => return Ok(Ret::Put),
                Ok(_) => kv.probe("create on miss"),
                Err(e) if e.is_indeterminate() => {
                    kv.probe("timeout resolved");
                    continue; // fetch drops repeats
                }
                Err(e) => return Err(e),
            }
            match kv.add(&k, &serialized, exp).await {
                Ok(StoreOutcome::Stored) => return Ok(Ret::Put),
                Ok(_) => kv.probe("add not stored"),
                Err(e) if e.is_indeterminate() => {
                    kv.probe("timeout resolved");
                    continue;
                }
                Err(e) => return Err(e),
            }
        }
    }

    /// `fetch(first, last)` of the fixed layout: the window corrected as the article's,
    /// the chunks from `first` to `last` read, repeated ids dropped.
    async fn fixed_fetch<K: Kv>(
        &self,
        kv: &K,
        first: Option<u64>,
        last: Option<u64>,
    ) -> Result<Found, KvError> {
        let now = server_secs(kv, CLOCK_KEY).await?;
        let (first, last) = self.corrected(now, first, last);
        let mut seen = BTreeSet::new();
        let mut events = Vec::new();
        for c in first / self.time_chunk..=last / self.time_chunk {
            let Some(data) = kv.get(&self.chunk_key(c)).await? else {
                continue;
            };
            for (id, when) in deserialize(&data) {
                if first <= when && when <= last {
                    if seen.insert(id) {
                        events.push((id, when));
                    } else {
                        kv.probe("duplicate dropped");
                    }
                }
            }
        }
        Ok(Found {
            first,
            last,
            now,
            events,
        })
    }

    async fn fetch<K: Kv>(
        &self,
        kv: &K,
        first: Option<u64>,
        last: Option<u64>,
    ) -> Result<Found, KvError> {
        match self.variant {
            Variant::Published | Variant::Repaired(_) | Variant::Proposed => {
                self.published_fetch(kv, first, last).await
            }
            Variant::Fixed => self.fixed_fetch(kv, first, last).await,
        }
    }

    /// The article's polling use. Published: `events = fetch()`, then, after `sleep_ms`,
    /// `fetch(first = lastSeen)` with `lastSeen = max(e.when())` (`fetch()` again when
    /// the first round found nothing: `max` of nothing is an error in the article's
    /// Python). Fixed: a `when` is stamped before its event lands, so no bound on `when`
    /// is safe for the second round: it reads the whole window again and keeps the ids
    /// the first round did not return.
    async fn poll<K: Kv>(&self, kv: &K, sleep_ms: u64) -> Result<Ret, KvError> {
        kv.mark("poll");
        let first = self.fetch(kv, None, None).await?;
        let mut rounds = vec![first.window(self.window_now(kv, first.now))];
        kv.sleep_ms(sleep_ms).await;
        kv.mark("poll");
        let second = match self.variant {
            Variant::Published | Variant::Repaired(_) | Variant::Proposed => {
                let last_seen = first.events.iter().map(|&(_, when)| when).max();
                let mut found = self.fetch(kv, last_seen, None).await?;
                // Repair `poll-skips-returned`: the events the first round returned are
                // not returned again.
                if self.variant.repaired("poll-skips-returned") {
                    found
                        .events
                        .retain(|(id, _)| !first.events.iter().any(|(seen, _)| seen == id));
                }
                found
            }
            Variant::Fixed => {
                let mut found = self.fetch(kv, None, None).await?;
                found
                    .events
                    .retain(|(id, _)| !first.events.iter().any(|(seen, _)| seen == id));
                found
            }
        };
        rounds.push(second.window(self.window_now(kv, second.now)));
        Ok(Ret::Polled(rounds))
    }
}

/// What a `fetch(first, last)` read: its corrected window and the events found.
struct Found {
    first: u64,
    last: u64,
    /// The clock reading the window was corrected by.
    now: u64,
    events: Vec<(u32, u64)>,
}

impl Found {
    /// The ids found.
    fn ids(&self) -> Vec<u32> {
        self.events.iter().map(|&(id, _)| id).collect()
    }

    /// The window relative to the clock reading `now`, and the ids.
    fn window(&self, now: u64) -> Window {
        Window {
            back: now.saturating_sub(self.first),
            span: self.last.saturating_sub(self.first),
            events: self.ids(),
        }
    }
}

/// How the published variant (and its repairs) stores its state
/// ([`Model::representation`]).
const REPRESENTATION: &str =
    "a ring of chunk keys, messagelogev_<n> for n from 0 to numChunks-1, each holding \
     the events of one timeChunk of seconds as id@when; entries appended one after \
     another; an event goes to chunk (when / timeChunk) % numChunks, created by add \
     with an expiry of timeChunk × (numChunks-1) seconds from its first event, and \
     fetch reads the chunks of its window and keeps the events whose when falls in \
     it. A chunk's expiry counts from its first event, so its later events die early, \
     and the ring reuses a key once round";

/// How the fixed variant stores its state ([`Model::representation`]).
const REPRESENTATION_FIXED: &str =
    "one key per absolute chunk number, messagelogev_c<n> for chunk n = when / \
     timeChunk, never reused, holding its events as id@when; entries appended one \
     after another and created with an expiry long enough for its last event to leave \
     the window; when is the server's clock, read through the clock item \
     messagelogev_clock (its absolute expiry minus its time to live); fetch reads the \
     chunks of its window, keeps the events whose when falls in it and drops repeated \
     ids";

impl Model for EventLog {
    fn representation(&self) -> Option<&'static str> {
        Some(match self.variant {
            Variant::Fixed => REPRESENTATION_FIXED,
            _ => REPRESENTATION,
        })
    }

    type Op = Op;
    type Ret = Ret;

    /// `run` ignores its client argument and the check reads clients only as labels.
    fn interchangeable_clients(&self) -> bool {
        true
    }

    async fn run<K: Kv>(&self, kv: &K, _client: usize, op: &Op) -> Result<Ret, KvError> {
        match (self.variant, op) {
            (_, Op::Sleep(ms)) => {
                kv.sleep_ms(*ms).await;
                Ok(Ret::Slept)
            }
            (Variant::Published | Variant::Repaired(_) | Variant::Proposed, Op::Put(id)) => {
                self.published_put(kv, *id).await
            }
            (Variant::Fixed, Op::Put(id)) => self.fixed_put(kv, *id).await,
            (_, Op::Fetch) => Ok(Ret::Events(self.fetch(kv, None, None).await?.ids())),
            (_, Op::FetchRange { ago, span }) => {
                let first = self.time(kv).await?.saturating_sub(*ago);
                let found = self.fetch(kv, Some(first), Some(first + span)).await?;
                Ok(Ret::Range(found.window(self.window_now(kv, found.now))))
            }
            (_, Op::Poll(sleep_ms)) => self.poll(kv, *sleep_ms).await,
        }
    }

    fn probes(&self) -> &'static [&'static str] {
        match self.variant {
            Variant::Repaired(_) => REPAIRED_PROBES,
            v => v.published_or_fixed(PUBLISHED_PROBES, FIXED_PROBES),
        }
    }

    fn repairs(&self) -> &'static [Repair] {
        REPAIRS
    }

    /// Even clients put, fetch and sleep; odd clients read windows and poll
    /// ([`is_reader`], see the module's text).
    fn op(&self, client: usize, index: usize, rng: &mut SimRng) -> Op {
        if is_reader(client) {
            let reach = self.window_secs() + self.time_chunk;
            return match rng.below(10) {
                0..=3 => Op::FetchRange {
                    ago: rng.below(reach + 1),
                    span: rng.below(reach + 1),
                },
                4..=6 => Op::Poll(rng.range_inclusive(500, 3_000)),
                _ => Op::Sleep(rng.range_inclusive(500, 3_000)),
            };
        }
        match rng.below(20) {
            0..=6 => Op::Put((client * 1000 + index) as u32),
            7..=9 => Op::Fetch,
            _ => Op::Sleep(rng.range_inclusive(500, 3_000)),
        }
    }

    fn history_format(&self) -> Option<JsonlFormat<Op, Ret>> {
        Some(JsonlFormat {
            spec: "event-log",
            args: vec!["--window".into(), self.window_secs().to_string()],
            describe: jsonl_op,
        })
    }

    fn check(&self, history: &History<Op, Ret>) -> Verdict {
        check_window(self.window_secs() * 1000, history)
    }
}

/// The named scenarios and what each variant is expected to get.
pub fn scenarios() -> Vec<(Scenario, Expect)> {
    vec![
        (
            Scenario::new("no-faults", 3, 16)
                .about("puts, fetches and idle time over more than one window")
                .runs(300),
            Expect::BROKEN_FIXED.shows(NO_FAULT_DEFECTS),
        ),
        (
            Scenario::new("crash-lose-pause", 3, 16)
                .about("clients crash or stall; requests and replies get lost")
                .faults(&[FaultKind::Crash, FaultKind::Lose, FaultKind::Pause])
                .fault_budget(3)
                .runs(300),
            Expect::BROKEN_FIXED
                .shows(NO_FAULT_DEFECTS)
                .then(ExpectedVerdict::Violation),
        ),
        (
            Scenario::new("skew", 3, 16)
                .about("client clocks are offset, drift and jump")
                .faults(&[FaultKind::Skew])
                .fault_budget(2)
                .runs(300),
            Expect::BROKEN_FIXED.shows(&[
                "expire-at-chunk-end",
                "poll-skips-returned",
                "ring-range-once",
                "server-clock",
            ]),
        ),
        (
            Scenario::new("delay", 3, 16)
                .about("a put's append or add lands late, after its client gave up on it")
                .faults(&[FaultKind::Delay])
                .fault_budget(2)
                .runs(300),
            Expect::BROKEN_FIXED.shows(NO_FAULT_DEFECTS),
        ),
        (
            Scenario::new("retrying-client", 3, 16)
                .about("the client library sends a timed-out command again, as most do")
                .faults(&[FaultKind::Lose])
                .fault_budget(1)
                .retries(1)
                .runs(500),
            Expect::BROKEN_FIXED
                .shows(NO_FAULT_DEFECTS)
                .then(ExpectedVerdict::Violation),
        ),
        (
            Scenario::new("evict", 3, 16)
                .about("keys may be evicted at any step")
                .faults(&[FaultKind::Evict])
                .fault_budget(1)
                .runs(300),
            Expect::impossible(
                "an evicted chunk is the only copy of its events: no read can return them",
            ),
        ),
    ]
}

/// The repairs whose defects every scenario shows, faults or none.
const NO_FAULT_DEFECTS: &[&str] = &[
    "expire-at-chunk-end",
    "poll-skips-returned",
    "ring-range-once",
];

#[cfg(test)]
mod tests {
    use super::*;
    use crate::history_files::{raw_ok, read_back_runs};
    use kvsim::{Outcome, Value};

    /// What `kvsim stress --history-out` writes reads back as the same operations, with
    /// the same times, and is judged the same as the history without its marks
    /// (`kvsim check-history --spec event-log --window 10`: a file does not say when a
    /// poll's rounds began).
    #[test]
    fn history_files_read_back_as_written() {
        read_back_runs(
            [published(), fixed()],
            &scenarios(),
            "event-log",
            op_from_raw,
            |model, mut h, read| {
                for o in &mut h.ops {
                    o.marks.clear();
                }
                let verdict = check_window(model.window_secs() * 1000, &h);
                assert_eq!(check_window(model.window_secs() * 1000, &read), verdict);
                verdict
            },
        );
    }

    #[test]
    fn malformed_operations_say_what_was_expected() {
        let window = |back: i64, events: Vec<Value>| {
            Value::Map(vec![
                (Value::Str("back".into()), Value::Int(back)),
                (Value::Str("span".into()), Value::Int(1)),
                (Value::Str("events".into()), Value::List(events)),
            ])
        };
        assert_eq!(
            op_from_raw(&raw_ok("put", Value::Int(7), Value::Nil)),
            Ok((Op::Put(7), Outcome::Ok(Ret::Put)))
        );
        assert_eq!(
            op_from_raw(&raw_ok("put", Value::Int(1 << 32), Value::Nil)),
            Err("expected the value of put: the event's id: an integer from 0 to 4294967295, found 4294967296".to_string())
        );
        assert_eq!(
            op_from_raw(&raw_ok(
                "fetch",
                Value::Nil,
                Value::List(vec![Value::Int(1)])
            )),
            Ok((Op::Fetch, Outcome::Ok(Ret::Events(vec![1]))))
        );
        assert_eq!(
            op_from_raw(&raw_ok(
                "fetch-range",
                Value::Nil,
                window(2, vec![Value::Int(1)])
            )),
            Ok((
                Op::FetchRange { ago: 0, span: 0 },
                Outcome::Ok(Ret::Range(Window {
                    back: 2,
                    span: 1,
                    events: vec![1]
                }))
            ))
        );
        assert_eq!(
            op_from_raw(&raw_ok("fetch-range", Value::Nil, window(-2, vec![]))),
            Err(format!("expected the result of fetch(first, last): back, seconds from 0 to {MAX_WINDOW_SECS}, found -2"))
        );
        assert_eq!(
            op_from_raw(&raw_ok("poll", Value::Nil, window(2, vec![Value::Str("a".into())]))),
            Err("expected the result of poll: a list of its rounds' windows [WINDOW, ...], found {\"back\" 2, \"span\" 1, \"events\" [\"a\"]}".to_string())
        );
        assert_eq!(
            op_from_raw(&raw_ok("poll", Value::Nil, Value::List(vec![window(2, vec![Value::Str("a".into())])]))),
            Err("expected the result of poll, each round: its events, each event id: an integer from 0 to 4294967295, found \"a\"".to_string())
        );
    }
}
