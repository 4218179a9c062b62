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
//! Clients 0 and 1 put events, call `fetch()` without arguments (then `first`/`last` are
//! computed exactly as printed, `time()` read once per use) and let time go by. Every
//! further client is a reader that uses the log as the article describes:
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
//! - returns no event twice, none whose `put` was called before `fc - (W+1) s`, and none
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
//! # Findings (kvsim, pinned in `tests/findings.rs`)
//! - No faults, 2 clients: chunk 0's key, created at `0.001 s` with expiry `W = 10 s`,
//!   dies at `10 s` with an event put at `4.42 s`; a `fetch()` at `10.49 s` misses it,
//!   though it is 6 s old (`event_log_published_drops_events_before_the_window_ends`).
//! - `skew`, `evict`: events missing or outside the window (both variants; see below).
//! - No faults, a reader: the polling use returns events twice. `fetch(first = lastSeen)`
//!   includes the second `lastSeen`, whose events the first round returned; and as that
//!   window lies inside one chunk (`firstKey == lastKey`), the printed range goes round
//!   the whole ring and reads the chunk twice, so even one `fetch(first, last)` inside a
//!   chunk returns its events twice
//!   (`event_log_published_polling_returns_events_twice`,
//!   `event_log_published_reads_a_chunk_twice_for_a_window_inside_it`).
//!
//! # Fixed
//! One key per absolute chunk number (`messagelog<name>_c<n>`, never reused), created
//! with an expiry of `W + 2*timeChunk` seconds, long enough for its last event to leave
//! the window; `fetch` reads the chunks from `first` to `last` and filters by `when`. A
//! timed-out `append` is retried (it may then be stored twice) and `fetch` drops repeated
//! ids, so every `put` ends with a known outcome. Its poller reads the whole window in
//! every round and keeps the ids the earlier rounds did not return: a `when` is stamped
//! before the event lands (a put paused or delayed between its clock read and its
//! `append` lands with an old `when`), so a round that starts from `lastSeen` can lose it,
//! and one that starts a second later can return it twice.
//!
//! Tolerates, by scenario: no faults (`no-faults`); `crash`, `lose` and `pause`
//! (`crash-lose-pause`). Untested: `expire`, `delay`, `shard-fail` (and `lru`, `restart`
//! below).
//!
//! Not fixed yet: nothing a scenario shows.
//!
//! What no design on this store can fix: `skew` (scenario `skew`), because the window is
//! defined by true time while events are stamped and chunks chosen by the clients' own
//! clocks; and `evict` (scenario `evict`; `lru`, `restart` and `shard-fail` lose keys the
//! same way, untested), because the events' only copy is gone.
//!
//! Probes: `create on miss` (a put's `append` found no chunk and it creates the chunk with
//! `add`), `add not stored` (that `add` found the chunk present: another put created it
//! first, and the loop appends again), `wrap` (published: a fetch's key range goes round
//! the ring's end, all the way round when `firstKey == lastKey`, reading that chunk twice),
//! `timeout resolved` (fixed: a timed-out `append` or `add` sent again),
//! `duplicate dropped` (fixed: a fetch found an id twice, a resent `append` that landed
//! twice, and kept one).
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

use crate::expect::{Expect, Variant};
use kvsim::{
    raw_expected, raw_outcome, FaultKind, History, JsonlFormat, JsonlOp, Kv, KvError, Model,
    Outcome, RawOp, Scenario, SimRng, StoreOutcome, Value, Verdict, Violation,
};
use serde_json::json;
use std::collections::BTreeSet;

/// `timeChunk`, seconds.
pub const TIME_CHUNK: u64 = 5;

/// `numChunks`.
pub const NUM_CHUNKS: u64 = 3;

/// How many clients put events; every further client reads windows and polls.
pub const WRITERS: usize = 2;

/// The published event log's probes ([`Kv::probe`]): its `put` loop and its ring `fetch`.
const PUBLISHED_PROBES: &[&str] = &["create on miss", "add not stored", "wrap"];

/// The fixed event log's probes: its `put` loop (timeouts sent again) and its chunked
/// `fetch` (repeats dropped).
const FIXED_PROBES: &[&str] = &[
    "create on miss",
    "add not stored",
    "timeout resolved",
    "duplicate dropped",
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

    async fn published_put<K: Kv>(&self, kv: &K, id: u32) -> Result<Ret, KvError> {
        let when = kv.now_secs();
        let serialized = serialize(id, when);
        let k = self.key(when / self.time_chunk % self.num_chunks);
        loop {
            if kv.append(&k, &serialized).await? == StoreOutcome::Stored {
                return Ok(Ret::Put);
            }
            kv.probe("create on miss");
            let exp = (self.time_chunk * (self.num_chunks - 1)) as i64;
            if kv.add(&k, &serialized, exp).await? == StoreOutcome::Stored {
                return Ok(Ret::Put);
            }
            kv.probe("add not stored");
        }
    }

    /// The window `fetch(first, last)` reads, corrected as printed (`time()` read once
    /// per use): `last` no later than now, `first` the last `W` seconds when it is
    /// missing, after `last` or too far before it.
    fn corrected<K: Kv>(&self, kv: &K, first: Option<u64>, last: Option<u64>) -> (u64, u64) {
        let w = self.window_secs();
        let last = match last {
            Some(l) if l <= kv.now_secs() => l,
            _ => kv.now_secs(),
        };
        let first = match first {
            Some(f) if f <= last && last - f <= w => f,
            _ => kv.now_secs().saturating_sub(w),
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
        let (first, last) = self.corrected(kv, first, last);
        let first_key = first / self.time_chunk % self.num_chunks;
        let last_key = last / self.time_chunk % self.num_chunks;
        let range: Vec<u64> = if first_key < last_key {
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
            events,
        })
    }

    async fn fixed_put<K: Kv>(&self, kv: &K, id: u32) -> Result<Ret, KvError> {
        let when = kv.now_secs();
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
        let (first, last) = self.corrected(kv, first, last);
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
        let mut rounds = vec![first.window(kv)];
        kv.sleep_ms(sleep_ms).await;
        kv.mark("poll");
        let second = match self.variant {
            Variant::Published | Variant::Repaired(_) | Variant::Proposed => {
                let last_seen = first.events.iter().map(|&(_, when)| when).max();
                self.fetch(kv, last_seen, None).await?
            }
            Variant::Fixed => {
                let mut found = self.fetch(kv, None, None).await?;
                found
                    .events
                    .retain(|(id, _)| !first.events.iter().any(|(seen, _)| seen == id));
                found
            }
        };
        rounds.push(second.window(kv));
        Ok(Ret::Polled(rounds))
    }
}

/// What a `fetch(first, last)` read: its corrected window and the events found.
struct Found {
    first: u64,
    last: u64,
    events: Vec<(u32, u64)>,
}

impl Found {
    /// The ids found.
    fn ids(&self) -> Vec<u32> {
        self.events.iter().map(|&(id, _)| id).collect()
    }

    /// The window relative to a clock reading now, and the ids.
    fn window<K: Kv>(&self, kv: &K) -> Window {
        let now = kv.now_secs();
        Window {
            back: now.saturating_sub(self.first),
            span: self.last.saturating_sub(self.first),
            events: self.ids(),
        }
    }
}

impl Model for EventLog {
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
                let first = kv.now_secs().saturating_sub(*ago);
                let found = self.fetch(kv, Some(first), Some(first + span)).await?;
                Ok(Ret::Range(found.window(kv)))
            }
            (_, Op::Poll(sleep_ms)) => self.poll(kv, *sleep_ms).await,
        }
    }

    fn probes(&self) -> &'static [&'static str] {
        self.variant
            .published_or_fixed(PUBLISHED_PROBES, FIXED_PROBES)
    }

    /// Clients 0 and 1 put, fetch and sleep; every further client reads windows and
    /// polls (see the module's text).
    fn op(&self, client: usize, index: usize, rng: &mut SimRng) -> Op {
        if client >= WRITERS {
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

/// The largest `back` or `span` of a window read from a history file, seconds (about
/// 31700 years): the checker's arithmetic in milliseconds stays far from overflowing.
pub const MAX_WINDOW_SECS: u64 = 1_000_000_000_000;

/// A window's fields in a history file.
fn window_json(w: &Window) -> serde_json::Value {
    json!({"back": w.back, "span": w.span, "events": w.events})
}

/// An operation's fields in a history file (read back by [`op_from_raw`]).
fn jsonl_op(op: &Op, ret: Option<&Ret>) -> JsonlOp {
    let null = json!(null);
    match op {
        Op::Put(id) => JsonlOp::new("put", json!(id), null, false),
        Op::Fetch => {
            let events = match ret {
                Some(Ret::Events(ids)) => json!(ids),
                _ => null,
            };
            JsonlOp::new("fetch", json!(null), events, false)
        }
        Op::FetchRange { ago, span } => {
            let window = match ret {
                Some(Ret::Range(w)) => window_json(w),
                _ => null,
            };
            JsonlOp::new(
                "fetch-range",
                json!({"ago": ago, "span": span}),
                window,
                false,
            )
        }
        Op::Poll(ms) => {
            let rounds = match ret {
                Some(Ret::Polled(rounds)) => rounds.iter().map(window_json).collect(),
                _ => null,
            };
            JsonlOp::new("poll", json!(ms), rounds, false)
        }
        Op::Sleep(ms) => JsonlOp::new("sleep", json!(ms), null, false),
    }
}

/// An event id of a history file.
fn event_id(v: &Value, what: &str) -> Result<u32, String> {
    match v {
        Value::Int(n) => u32::try_from(*n)
            .map_err(|_| raw_expected(&format!("{what}: an integer from 0 to 4294967295"), v)),
        other => Err(raw_expected(
            &format!("{what}: an integer from 0 to 4294967295"),
            other,
        )),
    }
}

/// The event ids a fetch returned, `[ID, ...]`.
fn event_ids(v: &Value, what: &str) -> Result<Vec<u32>, String> {
    match v {
        Value::List(items) => items
            .iter()
            .map(|i| event_id(i, &format!("{what}, each event id")))
            .collect(),
        other => Err(raw_expected(
            &format!("{what}: a list of event ids [ID, ...]"),
            other,
        )),
    }
}

/// A window of a history file, `{"back": B, "span": S, "events": [ID, ...]}`.
fn window(v: &Value, what: &str) -> Result<Window, String> {
    let shape =
        format!("{what}: a window {{\"back\": SECS, \"span\": SECS, \"events\": [ID, ...]}}");
    if !matches!(v, Value::Map(_)) {
        return Err(raw_expected(&shape, v));
    }
    let secs = |key: &str| match v.get(key) {
        Some(Value::Int(n)) if (0..=MAX_WINDOW_SECS as i64).contains(n) => Ok(*n as u64),
        Some(other) => Err(raw_expected(
            &format!("{what}: {key}, seconds from 0 to {MAX_WINDOW_SECS}"),
            other,
        )),
        None => Err(raw_expected(&shape, v)),
    };
    let (back, span) = (secs("back")?, secs("span")?);
    let events = match v.get("events") {
        Some(events) => event_ids(events, &format!("{what}: its events"))?,
        None => return Err(raw_expected(&shape, v)),
    };
    Ok(Window { back, span, events })
}

/// One operation of a history file (see "History files" in the module docs): the
/// operation and its outcome (`ok` with its return, `fail` no effect, `info` or no
/// completion unknown). `Err` is `expected …, found …` (naming the `result` when the
/// completion's value is wrong).
pub fn op_from_raw(raw: &RawOp) -> Result<(Op, Outcome<Ret>), String> {
    let ms = match raw.args {
        Value::Int(ms) if ms >= 0 => ms as u64,
        _ => 0,
    };
    match raw.f.as_str() {
        "put" => Ok((
            Op::Put(event_id(&raw.args, "the value of put: the event's id")?),
            raw_outcome(raw, |_| Ok(Ret::Put))?,
        )),
        "fetch" => Ok((
            Op::Fetch,
            raw_outcome(raw, |v| {
                event_ids(v, "the result of fetch()").map(Ret::Events)
            })?,
        )),
        "fetch-range" => {
            let arg = |key: &str| match raw.args.get(key) {
                Some(Value::Int(n)) if *n >= 0 => *n as u64,
                _ => 0,
            };
            Ok((
                Op::FetchRange {
                    ago: arg("ago"),
                    span: arg("span"),
                },
                raw_outcome(raw, |v| {
                    window(v, "the result of fetch(first, last)").map(Ret::Range)
                })?,
            ))
        }
        "poll" => {
            let rounds = |v: &Value| match v {
                Value::List(items) => items
                    .iter()
                    .map(|r| window(r, "the result of poll, each round"))
                    .collect::<Result<Vec<_>, _>>()
                    .map(Ret::Polled),
                other => Err(raw_expected(
                    "the result of poll: a list of its rounds' windows [WINDOW, ...]",
                    other,
                )),
            };
            Ok((Op::Poll(ms), raw_outcome(raw, rounds)?))
        }
        "sleep" => Ok((Op::Sleep(ms), raw_outcome(raw, |_| Ok(Ret::Slept))?)),
        other => Err(format!(
            "expected an operation of spec event-log (put, fetch, fetch-range, poll or sleep), found {other:?}"
        )),
    }
}

/// Checks the time-window and polling properties of the module docs for a window of
/// `window_ms`.
pub fn check_window(window_ms: u64, history: &History<Op, Ret>) -> Verdict {
    let judge = Judge::new(window_ms, history);
    for (i, o) in history.ops.iter().enumerate() {
        let (Outcome::Ok(ret), Some(fr)) = (&o.outcome, o.ret_ms) else {
            continue;
        };
        let fc = o.call_ms;
        let found = match ret {
            Ret::Events(events) => judge.fetch("fetch()", fc, fr, events, None, &BTreeSet::new()),
            Ret::Range(w) => judge.fetch(
                "fetch(first, last)",
                fc,
                fr,
                &w.events,
                Some(w),
                &BTreeSet::new(),
            ),
            Ret::Polled(rounds) => {
                let starts = o.marks.iter().filter(|m| m.label == "poll");
                judge.poll(starts.map(|m| m.time_ms).collect(), fc, fr, rounds)
            }
            Ret::Put | Ret::Slept => None,
        };
        if let Some(reason) = found {
            let property = match ret {
                Ret::Polled(_) => "polling (event log)",
                _ => "time window (event log)",
            };
            return Verdict::Violation(Violation::new(property, reason, vec![i]));
        }
    }
    Verdict::Ok
}

/// A time in a reason: seconds since the run began.
fn at(ms: u64) -> String {
    format!("{:.3} s", ms as f64 / 1000.0)
}

/// One `put` of a history: id, call, return if it completed, and whether it may have
/// happened (completed or unknown).
struct Put {
    id: u32,
    call: u64,
    ret: Option<u64>,
    maybe: bool,
}

/// The properties' judge: the window and every `put` of the history.
struct Judge {
    window_ms: u64,
    puts: Vec<Put>,
}

impl Judge {
    fn new(window_ms: u64, history: &History<Op, Ret>) -> Judge {
        let puts = history
            .ops
            .iter()
            .filter_map(|o| {
                let Op::Put(id) = o.op else { return None };
                let (ret, maybe) = match o.outcome {
                    Outcome::Ok(_) => (o.ret_ms, true),
                    Outcome::Unknown => (None, true),
                    Outcome::Failed => (None, false),
                };
                Some(Put {
                    id,
                    call: o.call_ms,
                    ret,
                    maybe,
                })
            })
            .collect();
        Judge { window_ms, puts }
    }

    /// Whether the put completed at `pr` (called at `pc`) is still inside the window for
    /// a fetch returning at `fr` (with a second for `when()`'s granularity).
    fn inside_capacity(&self, pc: u64, fr: u64) -> bool {
        pc + self.window_ms > fr + 1000
    }

    /// What is wrong with a fetch (`what`, as the reason names it) called at `fc`,
    /// returning at `fr`, that returned `events` (of the window `window`, if it was asked
    /// one), `earlier` counting as returned already (a poll's earlier rounds).
    fn fetch(
        &self,
        what: &str,
        fc: u64,
        fr: u64,
        events: &[u32],
        window: Option<&Window>,
        earlier: &BTreeSet<u32>,
    ) -> Option<String> {
        let w_s = self.window_ms / 1000;
        // The window in true time, from the clock reading somewhere in [fc, fr]: it
        // begins at or after `fc - back` and by `fr - back`, ends at or after
        // `fc - back + span` and by `fr - back + span` (a second of slack each side).
        let bounds = window.map(|w| {
            let back = w.back as i64 * 1000;
            let span = w.span as i64 * 1000;
            (fc as i64 - back, fr as i64 - back, span)
        });
        let mut seen = BTreeSet::new();
        for &id in events {
            if !seen.insert(id) || earlier.contains(&id) {
                return Some(format!("{what} at {} returned event {id} twice", at(fc)));
            }
            let Some(p) = self.puts.iter().find(|p| p.id == id && p.maybe) else {
                return Some(format!(
                    "{what} at {} returned event {id}, which was never put",
                    at(fc)
                ));
            };
            if p.call > fr {
                return Some(format!(
                    "{what} at {} returned event {id}, put only at {}",
                    at(fc),
                    at(p.call)
                ));
            }
            // A window asked for may reach past the capacity (`fetch` corrects only one
            // too long): then older events are the caller's to have.
            if window.is_none() && p.call + self.window_ms + 1000 < fc {
                return Some(format!(
                    "{what} at {} returned event {id}, put at {}: older than the window of {w_s} s",
                    at(fc),
                    at(p.call)
                ));
            }
            if let (Some((first_lo, _, _)), Some(pr)) = (bounds, p.ret) {
                if (pr as i64) + 2000 < first_lo {
                    return Some(format!(
                        "{what} at {} returned event {id}, put by {}: before the window it asked for",
                        at(fc),
                        at(pr)
                    ));
                }
            }
            if let Some((_, first_hi, span)) = bounds {
                if p.call as i64 - 2000 > first_hi + span {
                    return Some(format!(
                        "{what} at {} returned event {id}, put at {}: after the window it asked for",
                        at(fc),
                        at(p.call)
                    ));
                }
            }
        }
        for p in &self.puts {
            let Some(pr) = p.ret else { continue };
            let asked = match bounds {
                None => true,
                Some((first_lo, first_hi, span)) => {
                    p.call as i64 >= first_hi + 1000 && pr as i64 + 1000 <= first_lo + span
                }
            };
            if pr < fc
                && asked
                && self.inside_capacity(p.call, fr)
                && !seen.contains(&p.id)
                && !earlier.contains(&p.id)
            {
                let which = if window.is_some() {
                    "the window it asked for"
                } else {
                    "the window"
                };
                return Some(format!(
                    "{what} at {} missed event {}, put at {} (inside {which} of {w_s} s)",
                    at(fc),
                    p.id,
                    at(p.call)
                ));
            }
        }
        None
    }

    /// What is wrong with a poll called at `fc` and returning at `fr` whose rounds
    /// began at `starts` (its `poll` marks) and returned `rounds`. A round whose start
    /// was not marked (a history from elsewhere) is taken to span the whole poll, which
    /// only asks less of it.
    fn poll(&self, starts: Vec<u64>, fc: u64, fr: u64, rounds: &[Window]) -> Option<String> {
        let mut returned = BTreeSet::new();
        let marked = starts.len() == rounds.len();
        let start_of = |k: usize| if marked { starts[k] } else { fc };
        for (k, round) in rounds.iter().enumerate() {
            let start = start_of(k);
            let end = if marked && k + 1 < rounds.len() {
                starts[k + 1]
            } else {
                fr
            };
            let what = format!("round {} of the poll", k + 1);
            let found = self.fetch(&what, start, end, &round.events, Some(round), &returned);
            if found.is_some() {
                return found;
            }
            returned.extend(round.events.iter().copied());
        }
        let last = start_of(rounds.len().checked_sub(1)?);
        for p in &self.puts {
            let Some(pr) = p.ret else { continue };
            if pr < last && self.inside_capacity(p.call, fr) && !returned.contains(&p.id) {
                return Some(format!(
                    "the poll lost event {}: put at {}, it returned at {}, before the poll's \
                     round {} began at {}, and no round returned it",
                    p.id,
                    at(p.call),
                    at(pr),
                    rounds.len(),
                    at(last)
                ));
            }
        }
        None
    }
}

/// The named scenarios and what each variant is expected to get.
pub fn scenarios() -> Vec<(Scenario, Expect)> {
    vec![
        (
            Scenario::new("no-faults", 3, 16)
                .about("puts, fetches and idle time over more than one window")
                .runs(300),
            Expect::BROKEN_FIXED,
        ),
        (
            Scenario::new("crash-lose-pause", 3, 16)
                .about("clients crash or stall; requests and replies get lost")
                .faults(&[FaultKind::Crash, FaultKind::Lose, FaultKind::Pause])
                .fault_budget(3)
                .runs(300),
            Expect::BROKEN_FIXED,
        ),
        (
            Scenario::new("skew", 3, 16)
                .about("client clocks are offset, drift and jump")
                .faults(&[FaultKind::Skew])
                .fault_budget(2)
                .runs(300),
            Expect::impossible("the window is measured on the clients' clocks, and a skewed client files an event in the wrong chunk (see the model's docs for the server-clock designs this covers)"),
        ),
        (
            Scenario::new("evict", 3, 16)
                .about("keys may be evicted at any step")
                .faults(&[FaultKind::Evict])
                .fault_budget(1)
                .runs(300),
            Expect::impossible("an evicted chunk is the only copy of its events: no read can return them"),
        ),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::history_files::{raw_ok, read_back_runs};

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
