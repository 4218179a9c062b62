//! Replay tokens: one short string that reproduces a run exactly (see [`Token`]).
//!
//! Tokens are kept (in `--corpus` directories, bug reports, READMEs) and keep working
//! across kvsim releases. The rule: every change to the bytes a token's payload holds
//! bumps its version number, and decoding reads every earlier version, or refuses one it
//! cannot replay faithfully naming its version and the kvsim commit that reads it (see
//! [`Token`], Versions: the versions so far, and how version 2's layouts, written under
//! one version byte, are told apart). Golden tokens of every version stay in the tests.

pub(crate) mod bytes;
mod runs;

use super::config::SimConfig;
use super::knobs::{Knob, Place, Since, KNOBS};
use crate::rng::{fnv1a64, mix64};
use crate::scenario::Scenario;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;
pub use bytes::TokenError;
pub(crate) use bytes::{Reader, Writer};

/// The version [`Token::encode`] writes (kept beside the knob table, as a new knob bumps
/// it). [`Token::decode`] reads it and every earlier version that replays its run
/// faithfully (see [`Token`]'s docs: Versions).
use super::knobs::TOKEN_VERSION as VERSION;

/// Bytes of the checksum at the end of the payload.
const CHECKSUM_BYTES: usize = 8;

/// A decoded replay token.
///
/// `TARGET:SCENARIO:PAYLOAD`. The payload (URL-safe base64, no padding) carries every knob
/// of the run's [`SimConfig`] (all but `record_trace`), the seed, and, for a shrunk run, its
/// choice sequence; the knobs come from the payload, so a token keeps working when a
/// scenario's definition or a CLI override differs. `TARGET` (`MODEL/VARIANT`) holds no
/// `:`; `SCENARIO` may.
///
/// # Version 5
///
/// The payload is the version byte `5`, then the knobs in [`SimConfig`]'s field order
/// (unsigned LEB128 numbers; the fault probability as 8 little-endian bytes), the seed, the
/// choices (`0` for none, else their count plus one, then the choices run-length
/// encoded: a value `v` once is the number `2v`, `v` repeated `k >= 2` times `2v + 1`
/// then `k - 2`), the trailing knobs (below) and, last, an 8-byte checksum: SplitMix64's
/// finalizer over FNV-1a-64 of `TARGET:SCENARIO:` followed by every payload byte before the
/// checksum. Each FNV-1a step is a bijection of the hash state that differs for different
/// bytes, and the finalizer is a bijection, so a changed byte anywhere (names included)
/// always changes the checksum; other typos (a changed base64 character, a deleted one) are
/// missed with probability 2^-64. A token renamed to another model or scenario, or
/// mistyped, is rejected.
///
/// The trailing knobs (`timeout_ms`, `delay_ms`, `retries`, then `neighbour_bytes`, then
/// `work_ms`, then `neighbour_max_bytes` and the slab `geometry`: page size, `-n`, `-f` as
/// 8 little-endian bytes, the largest chunk, and one number with the LRU maintainer in
/// bit 0 and `slab_automove` from bit 1) follow the choices, before the checksum, each group only when it or a later
/// one is not at its default; the `rng_by_start` flag shares a number with `persistent`
/// (bit 1).
///
/// Decoding checks every number against the limits below before allocating or running
/// anything; a number out of range is a [`TokenError`] naming the knob, the limit and the
/// value found. The limits are far above anything `kvsim check`, `explore`, `report` or the
/// `cargo test` gate produce by default (a CLI that takes these numbers from people should
/// bound them by the same constants, so that every token it prints replays). They apply to
/// tokens of every version:
///
/// | knob | limit |
/// |---|---|
/// | clients | [`Token::MAX_CLIENTS`] |
/// | ops (per client) | [`Token::MAX_OPS`] |
/// | clients × ops | [`Token::MAX_OPERATIONS`] |
/// | servers (`shards`) | [`Token::MAX_SHARDS`] |
/// | fault budget | [`Token::MAX_FAULT_BUDGET`] |
/// | fault probability | 0 to 1 |
/// | `pct` depth | [`Token::MAX_PCT_DEPTH`] |
/// | memory limit (bytes) | [`Token::MAX_MEMORY`] |
/// | every duration (`step_ms`, `pause_ms`, …) | [`Token::MAX_MS`] |
/// | clock drift (ppm) | [`Token::MAX_DRIFT_PPM`] |
/// | `max_steps`, `max_steps_per_op` | [`Token::MAX_STEPS`] |
/// | `retries` | [`Token::MAX_RETRIES`] |
/// | `neighbour_bytes` | [`Token::MAX_NEIGHBOUR_BYTES`] |
/// | `work_ms` | [`Token::MAX_MS`] |
/// | `neighbour_max_bytes` | [`Token::MAX_NEIGHBOUR_BYTES`] |
/// | slab page size | 1 KiB to 1 GiB (memcached's `-I` bounds) |
/// | `-n`, largest chunk | 1 to the page size |
/// | `-f` | above 1, at most 100 |
/// | `slab_automove` | 0 to 2 |
/// | choices | `max_steps` |
/// | `client_ops` | [`Token::MAX_CLIENTS`] lists, indices below `ops` |
///
/// # Versions
///
/// A token saved once (in a `--corpus` directory, a bug report, a README) must replay
/// the same run with every later kvsim, or be refused saying which kvsim replays it. The
/// rule, from version 3 on: **every change to the bytes [`Token::encode`] writes bumps
/// the version number** (a new knob, even a trailing one; a field moved, renamed or re-encoded),
/// and [`Token::decode`] keeps reading every earlier version: it decodes it into today's
/// [`SimConfig`] (the knobs it did not carry at their defaults, which is how the run was
/// made) when that replays the same run, or refuses it with a [`TokenError`] naming the
/// version and the kvsim commit that reads it. The golden tokens of every version in this
/// module's tests (and replayed to their verdicts in `cli/tests/tokens.rs`) must keep
/// decoding to the same run: a change that breaks one of them needs a new version.
///
/// | version | written by kvsim | read now |
/// |---|---|---|
/// | 1 | up to `b7e4a47` | refused (no checksum; it did not carry every knob, so a run made with non-default step or fault sizes replays differently): kvsim `b7e4a47` reads it; run the check again for a new token |
/// | 2, before the workload | `d69feb3` to `20ad2b9` | decoded: no workload (`None`: every operation drawn by the model, as then), `rng_by_start` off, the trailing knobs at their defaults |
/// | 2, with the workload | `f42016c` to version 3's change | decoded as version 3 (a token without `rng_by_start` or trailing knobs reads with them at their defaults, as it was made) |
/// | 2, timeouts before retries | `397aadd` to `a4458d9`, with a non-default `timeout_ms` or `delay_ms` | decoded: a first trailing group of three numbers, `retries` 0 |
/// | 3 | from version 3's change to `1f40422` | decoded: version 4's layout with each choice one number |
/// | 4 | issue #35 (run-length-encoded choices) to issue #36's change | decoded: version 5's layout without the fourth trailing group; with the `lru` fault, the scaled slab geometry ([`super::lru_geometry`]) and a neighbour of one size (see below) |
/// | 5 | since (issue #36: the slab geometry, the neighbour's size range) | decoded |
///
/// A token before version 5 that ran with a memory limit (the `lru` fault) was made
/// against the single LRU over bytes that kvsim's store had then; the store now evicts as
/// memcached does, per slab class. Such a token decodes (to the geometry `lru` implies
/// today, its neighbour writing its one size) and replays, but the replay may evict other
/// keys than the run it was printed for, and may not show its violation: run the check
/// again for a version 5 token. Tokens without a memory limit replay exactly.
///
/// Version 2 has three layouts under one version byte: kvsim `f42016c` added the chosen
/// workload (a number after `client_ops`, `0` for none), and later commits the
/// `rng_by_start` flag and the trailing groups (`397aadd` the first with `timeout_ms` and
/// `delay_ms`, to which `c517599` added `retries`), all without a new version. A version 2
/// payload is read deterministically, as each layout in turn, the first that fits the
/// payload exactly (every number within its bounds, no byte missing or left over)
/// winning: (1) before the workload (no workload number, a flags number of 0 or 1, no
/// byte after the choices), (2) with the workload, as version 3, (3) with timeouts before
/// retries. The checksum covers the same bytes under every reading, so it cannot tell
/// them apart; the layouts' lengths do. Reading (3) comes last: a payload fits it only
/// when it fits neither (1) nor (2). A payload written as (2) fits (1) only by chance:
/// read the old way, each field from the workload number on is read as another, and it
/// fits only when, among others, its fault probability's bytes, shifted, read as a
/// number from 0 to 1 (0 and some below 2^-11 do) and its seed is small enough to read
/// as the count of the choices that follow (seeds kvsim derives are 64-bit hashes).
/// Every version 2 token printed in this repository's history (README, reports/,
/// snapshots, tests: 73 of layout (1), 151 of (2), 2 of (3)) is read as the layout that
/// wrote it; the tests keep all of them (`src/sim/tokens_v2.txt`). A version 2 token that
/// fits no layout is refused naming each reading's error.
///
/// A token a newer kvsim printed (a version above 5) is refused saying so.
///
/// The codec iterates the knob table ([`super::knobs::KNOBS`]): the head knobs in its
/// order, then its trailing groups; a layout reads the knobs it carried (a knob's
/// `since`) and leaves the others at their defaults. Adding a knob to [`SimConfig`] is
/// one row in that table (a test fails for a field without one), appended as a new
/// trailing group, a new version number, and a golden token of the version it replaces.
///
/// Decoding allocates at most in proportion to the token's length, but for a version 4 or 5
/// token's choices: at most its `max_steps` of them (itself at most [`Token::MAX_STEPS`]).
#[derive(Clone, Debug, PartialEq)]
pub struct Token {
    /// `MODEL/VARIANT`.
    pub target: String,
    /// The scenario's name.
    pub scenario: String,
    /// The run's knobs.
    pub config: SimConfig,
    /// The run's seed.
    pub seed: u64,
    /// The choices of a shrunk run (`None`: the strategy's own walk from the seed).
    pub choices: Option<Vec<u32>>,
}

impl Token {
    /// See [`bytes::MAX_CLIENTS`].
    pub const MAX_CLIENTS: u64 = bytes::MAX_CLIENTS;
    /// See [`bytes::MAX_OPS`].
    pub const MAX_OPS: u64 = bytes::MAX_OPS;
    /// See [`bytes::MAX_OPERATIONS`].
    pub const MAX_OPERATIONS: u64 = bytes::MAX_OPERATIONS;
    /// See [`bytes::MAX_SHARDS`].
    pub const MAX_SHARDS: u64 = bytes::MAX_SHARDS;
    /// See [`bytes::MAX_FAULT_BUDGET`].
    pub const MAX_FAULT_BUDGET: u64 = bytes::MAX_FAULT_BUDGET;
    /// See [`bytes::MAX_CHOICES_PER_OP`].
    pub const MAX_CHOICES_PER_OP: u64 = bytes::MAX_CHOICES_PER_OP;
    /// See [`bytes::MAX_PCT_DEPTH`].
    pub const MAX_PCT_DEPTH: u64 = bytes::MAX_PCT_DEPTH;
    /// See [`bytes::MAX_NEIGHBOUR_BYTES`].
    pub const MAX_NEIGHBOUR_BYTES: u64 = bytes::MAX_NEIGHBOUR_BYTES;
    /// See [`bytes::MAX_RETRIES`].
    pub const MAX_RETRIES: u64 = bytes::MAX_RETRIES;
    /// See [`bytes::MAX_MEMORY`].
    pub const MAX_MEMORY: u64 = bytes::MAX_MEMORY;
    /// See [`bytes::MAX_MS`].
    pub const MAX_MS: u64 = bytes::MAX_MS;
    /// See [`bytes::MAX_DRIFT_PPM`].
    pub const MAX_DRIFT_PPM: u64 = bytes::MAX_DRIFT_PPM;
    /// See [`bytes::MAX_STEPS`].
    pub const MAX_STEPS: u64 = bytes::MAX_STEPS;

    /// Renders the token (version 5).
    pub fn encode(&self) -> String {
        let c = &self.config;
        let mut w = Writer(vec![VERSION]);
        // The knobs the table carries before the seed, in its order (as `read_payload`
        // reads them). Any change here is a new version (see Versions in `Token`'s docs).
        for k in KNOBS.iter().filter(|k| k.place == Place::Head) {
            (k.write)(c, &mut w);
        }
        w.num(self.seed);
        match &self.choices {
            None => w.num(0),
            Some(ch) => {
                w.num(ch.len() as u64 + 1);
                runs::write(&mut w, ch);
            }
        }
        // The trailing groups, each only when it or a later one is not at its default
        // (they came after the choices in version 2, written with the workload).
        let last = KNOBS
            .iter()
            .filter_map(|k| match k.place {
                Place::Trailing(g) if !(k.at_default)(c) => Some(g),
                _ => None,
            })
            .max()
            .unwrap_or(0);
        for g in 1..=last {
            for k in KNOBS.iter().filter(|k| k.place == Place::Trailing(g)) {
                (k.write)(c, &mut w);
            }
        }
        let mut b = w.0;
        let sum = checksum(&self.target, &self.scenario, &b);
        b.extend_from_slice(&sum.to_le_bytes());
        format!(
            "{}:{}:{}",
            self.target,
            self.scenario,
            URL_SAFE_NO_PAD.encode(&b)
        )
    }

    /// Parses a token of any version this kvsim reads (5, 4, 3, and the layouts of 2: see
    /// [`Token`]'s docs), checking its checksum and every number against the limits in
    /// [`Token`]'s docs; never panics, and allocates at most in proportion to the token's
    /// length. A version it cannot replay faithfully (1) or does not know (a newer one) is
    /// refused, naming the version and the kvsim that reads it.
    pub fn decode(text: &str) -> Result<Token, TokenError> {
        Token::decode_layout(text).map(|(t, _)| t)
    }

    /// [`Token::decode`], and the layout the payload was read as.
    fn decode_layout(text: &str) -> Result<(Token, Layout), TokenError> {
        let text = text.trim();
        let bad_shape = || {
            let shown: String = text.chars().take(120).collect();
            let more = if shown.len() < text.len() { "…" } else { "" };
            TokenError(format!(
                "expected MODEL/VARIANT:SCENARIO:PAYLOAD, found {shown:?}{more}"
            ))
        };
        let (names, payload) = text.rsplit_once(':').ok_or_else(bad_shape)?;
        let (target, scenario) = names.split_once(':').ok_or_else(bad_shape)?;
        if target.is_empty() {
            return Err(bad_shape());
        }
        let bytes = URL_SAFE_NO_PAD
            .decode(payload)
            .map_err(|e| TokenError(format!("payload is not base64 ({e})")))?;
        let version = match bytes.first() {
            None => return Err(TokenError("payload ends early".into())),
            Some(&v) => v,
        };
        match version {
            2..=4 | VERSION => {}
            1 => {
                return Err(TokenError(format!(
                "expected version {VERSION}, 4, 3 or 2, found version 1 (an older token, without \
                     checksum and some knobs, that this kvsim cannot replay faithfully; kvsim \
                     {LAST_READING_VERSION_1} and earlier read it): run the check again for \
                     a new token"
            )))
            }
            0 => {
                return Err(TokenError(format!(
                    "expected version {VERSION}, 4, 3 or 2, found version 0"
                )))
            }
            v => {
                return Err(TokenError(format!(
                    "expected version {VERSION} or earlier, found version {v} (a token from a \
                     newer kvsim: replay it with that kvsim, or run the check again with this \
                     one)"
                )))
            }
        }
        if bytes.len() < 1 + CHECKSUM_BYTES {
            return Err(TokenError("payload ends early".into()));
        }
        let (body, sum) = bytes.split_at(bytes.len() - CHECKSUM_BYTES);
        let mut stored = [0u8; CHECKSUM_BYTES];
        stored.copy_from_slice(sum);
        if u64::from_le_bytes(stored) != checksum(target, scenario, body) {
            return Err(TokenError(format!(
                "checksum mismatch: the token for {target} (scenario {scenario}) was changed \
                 or mistyped; copy it again whole"
            )));
        }
        let (layout, found) = Token::read_version(version, body);
        let (config, seed, choices) = found?;
        let token = Token {
            target: target.to_string(),
            scenario: scenario.to_string(),
            config,
            seed,
            choices,
        };
        Ok((token, layout))
    }

    /// Reads the payload `body` (version byte first, checksum checked and cut off) of a
    /// token of `version` (2 or 3): the layout it was read as, and what it holds. Version 2
    /// is read as each of its layouts in turn, the first that fits winning (see
    /// [`Token`]'s docs).
    fn read_version(version: u8, body: &[u8]) -> (Layout, Result<Payload, TokenError>) {
        match version {
            3 => return (Layout::V3, read_payload(body, Layout::V3)),
            4 => return (Layout::V4, read_payload(body, Layout::V4)),
            2 => {}
            _ => return (Layout::Current, read_payload(body, Layout::Current)),
        }
        let mut errors = Vec::new();
        for layout in Layout::VERSION_2 {
            match read_payload(body, layout) {
                Ok(p) => return (layout, Ok(p)),
                Err(e) => errors.push(format!("as kvsim {} wrote it, {}", layout.writers(), e.0)),
            }
        }
        let why = format!("version 2 fits none of its layouts: {}", errors.join("; "));
        (Layout::V3, Err(TokenError(why)))
    }
}

/// The last kvsim commit that reads version 1 tokens (on main, before version 2).
const LAST_READING_VERSION_1: &str = "b7e4a47";

/// The layouts of a token's payload.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Layout {
    /// Version 2 as kvsim `d69feb3` to `20ad2b9` wrote it: no workload, the flags number
    /// only `persistent` (0 or 1), nothing after the choices.
    V2BeforeWorkload,
    /// Version 3, and version 2 as kvsim `f42016c` and later wrote it: the workload after
    /// `client_ops`, `rng_by_start` in the flags number, the trailing groups after the
    /// choices, each choice one number.
    V3,
    /// Version 4: [`Layout::V3`] with the choices run-length encoded (`runs`).
    V4,
    /// Version 5: [`Layout::V4`] with the fourth trailing group (the neighbour's largest
    /// value, the slab geometry).
    Current,
    /// Version 2 as kvsim `397aadd` to `a4458d9` wrote it when a run's `timeout_ms` or
    /// `delay_ms` was not at its default: [`Layout::V3`] with a first trailing group
    /// of three numbers (`timeout_ms`, `delay_ms`; `retries` did not exist) and no other.
    V2TimeoutBeforeRetries,
}

impl Layout {
    /// Version 2's layouts, in the order a version 2 payload is tried as them.
    const VERSION_2: [Layout; 3] = [
        Layout::V2BeforeWorkload,
        Layout::V3,
        Layout::V2TimeoutBeforeRetries,
    ];

    /// Whether this layout carries the knobs kvsim first carried in `since`.
    fn knows(self, since: Since) -> bool {
        match self {
            Layout::V2BeforeWorkload => since == Since::V2,
            Layout::V3 | Layout::V4 => since != Since::V5Geometry,
            Layout::Current => true,
            Layout::V2TimeoutBeforeRetries => since <= Since::V2Timeouts,
        }
    }

    /// The kvsim commits that wrote version 2 tokens of this layout.
    fn writers(self) -> &'static str {
        match self {
            Layout::V2BeforeWorkload => "d69feb3 to 20ad2b9 (before the workload)",
            Layout::V3 | Layout::V4 | Layout::Current => "f42016c and later (with the workload)",
            Layout::V2TimeoutBeforeRetries => "397aadd to a4458d9 (timeouts before retries)",
        }
    }
}

/// What a payload holds: the knobs, the seed and the choices.
type Payload = (SimConfig, u64, Option<Vec<u32>>);

/// Reads the payload `body` (version byte first, without the checksum) as `layout` has
/// it, every number checked against its limit before anything is allocated.
fn read_payload(body: &[u8], layout: Layout) -> Result<Payload, TokenError> {
    // Every layout but the first version 2 one has the workload, both flags and trailers.
    let current = layout != Layout::V2BeforeWorkload;
    let mut r = Reader { b: body, pos: 1 };
    // The knobs a layout does not carry are at their defaults, as its runs were made.
    let mut config = SimConfig::from_scenario(&Scenario::new("token", 0, 0));
    for k in KNOBS.iter().filter(|k| k.place == Place::Head) {
        if layout.knows(k.since) {
            (k.read)(k, &mut r, &mut config, current)?;
        }
    }
    let operations = config.clients as u64 * config.ops as u64;
    if operations > Token::MAX_OPERATIONS {
        return Err(TokenError(format!(
            "expected at most {} operations (clients × ops), found {} × {} = {operations}",
            Token::MAX_OPERATIONS,
            config.clients,
            config.ops
        )));
    }
    if let Some(lists) = &config.client_ops {
        if lists.len() > config.clients {
            return Err(TokenError(format!(
                "expected operation lists for at most {} clients, found {}",
                config.clients,
                lists.len()
            )));
        }
        if let Some(&i) = lists.iter().flatten().find(|&&i| i >= config.ops) {
            return Err(TokenError(format!(
                "expected operation indices below ops = {}, found {i}",
                config.ops
            )));
        }
    }
    let seed = r.num()?;
    let choices = match r.bounded("choices", config.max_steps as u64 + 1)? {
        0 => None,
        // At most `max_steps` (bounded above) choices, however short the runs' bytes.
        n if matches!(layout, Layout::V4 | Layout::Current) => {
            Some(runs::read(&mut r, (n - 1) as usize)?)
        }
        n => {
            let n = r.fits("choices", n - 1)?;
            let mut v = Vec::with_capacity(n);
            for _ in 0..n {
                v.push(r.bounded("a choice", u32::MAX as u64)? as u32);
            }
            Some(v)
        }
    };
    for g in 1.. {
        let group: Vec<&Knob> = KNOBS
            .iter()
            .filter(|k| k.place == Place::Trailing(g) && layout.knows(k.since))
            .collect();
        if group.is_empty() {
            break;
        }
        // Timeouts before retries: the group is there (without it the payload would have
        // fit `Current`).
        if layout == Layout::V2TimeoutBeforeRetries || r.pos != body.len() {
            for k in group {
                (k.read)(k, &mut r, &mut config, current)?;
            }
        }
    }
    if r.pos != body.len() {
        return Err(TokenError(format!(
            "expected {} payload bytes, found {}",
            r.pos + CHECKSUM_BYTES,
            body.len() + CHECKSUM_BYTES
        )));
    }
    // Before the geometry: the one `lru` implies today (see Versions in `Token`'s docs).
    if !layout.knows(Since::V5Geometry) && config.faults.has(crate::scenario::FaultKind::Lru) {
        config.geometry = super::config::lru_geometry();
    }
    Ok((config, seed, choices))
}

/// The checksum of a token: SplitMix64's finalizer over FNV-1a-64 of `TARGET:SCENARIO:`
/// and the payload before the checksum.
fn checksum(target: &str, scenario: &str, body: &[u8]) -> u64 {
    let bytes = target
        .bytes()
        .chain([b':'])
        .chain(scenario.bytes())
        .chain([b':'])
        .chain(body.iter().copied());
    mix64(fnv1a64(bytes))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::Strategy;
    use crate::scenario::{FaultKind, FaultSet, Scenario};
    use crate::store::geometry::{Factor, Geometry};
    use proptest::prelude::*;

    /// Every knob away from its default (a knob added to SimConfig must be added here:
    /// the literal names every field).
    fn unusual_config() -> SimConfig {
        SimConfig {
            clients: 5,
            ops: 7,
            client_ops: Some(vec![vec![0, 6], vec![], vec![1, 2, 3]]),
            workload: Some(vec![vec![vec![3, 1]], vec![], vec![vec![], vec![7]]]),
            faults: FaultSet::of(&[FaultKind::Evict, FaultKind::Pause, FaultKind::Lru]),
            fault_budget: 9,
            fault_probability: 0.125,
            strategy: Strategy::Pct { depth: 4 },
            memory_limit: Some(777),
            persistent: true,
            rng_by_start: true,
            shards: 3,
            step_ms: 3,
            pause_ms: [11, 13_000],
            timeout_ms: 43,
            delay_ms: [47, 53],
            retries: 3,
            neighbour_bytes: 61,
            neighbour_max_bytes: 79,
            geometry: Geometry {
                page_size: 4096,
                chunk_size: 32,
                factor: Factor(1.5),
                slab_chunk_max: 2048,
                lru_maintainer: false,
                slab_automove: 2,
            },
            work_ms: [67, 71],
            shard_down_ms: 17,
            clock_jump_ms: 19,
            max_offset_ms: 23,
            max_drift_ppm: 29,
            starve_ms: 31,
            max_steps_per_op: 37,
            max_steps: 41_000,
            record_trace: false,
        }
    }

    #[test]
    fn every_knob_round_trips() {
        let unusual = unusual_config();
        let default = SimConfig::from_scenario(&Scenario::new("s", 2, 2));
        // The test config differs from the defaults in every knob but record_trace, so a
        // knob the token does not carry (decoded as its default) fails the round trip.
        let a = serde_json::to_value(&unusual).unwrap();
        let b = serde_json::to_value(&default).unwrap();
        let fields = a.as_object().unwrap();
        // client_ops, workload, rng_by_start: left out at their defaults.
        assert_eq!(fields.len(), b.as_object().unwrap().len() + 3);
        for (name, value) in fields {
            if name != "record_trace" {
                assert_ne!(Some(value), b.get(name), "{name} is at its default");
            }
        }
        for choices in [None, Some(vec![]), Some(vec![0, 1, 2, 300, 70000])] {
            let t = Token {
                target: "fifo/published".into(),
                scenario: "odd:name+evict".into(),
                config: unusual.clone(),
                seed: u64::MAX - 5,
                choices,
            };
            assert_eq!(Token::decode(&t.encode()).unwrap(), t);
        }
        let mut traced = Token {
            target: "a/b".into(),
            scenario: "s".into(),
            config: unusual,
            seed: 0,
            choices: None,
        };
        traced.config.record_trace = true;
        assert!(!Token::decode(&traced.encode()).unwrap().config.record_trace);
    }

    #[test]
    fn tokens_round_trip() {
        let s = Scenario::new("evict", 3, 2)
            .faults(&[FaultKind::Evict, FaultKind::Crash])
            .strategy(Strategy::Pct { depth: 2 })
            .memory_limit(900);
        let config = SimConfig::from_scenario(&s);
        for choices in [None, Some(vec![0, 1, 2, 300, 70000])] {
            let t = Token {
                target: "fifo/published".into(),
                scenario: "evict".into(),
                config: config.clone(),
                seed: 0xdead_beef_1234,
                choices,
            };
            let text = t.encode();
            assert_eq!(Token::decode(&text).unwrap(), t);
        }
    }

    #[test]
    fn tokens_with_chosen_operations_round_trip() {
        let mut config = SimConfig::from_scenario(&Scenario::new("two", 3, 4));
        config.client_ops = Some(vec![vec![0, 3], vec![], vec![1, 2, 3]]);
        let t = Token {
            target: "lock/fixed".into(),
            scenario: "two".into(),
            config,
            seed: 7,
            choices: Some(vec![1, 0, 2, 5]),
        };
        assert_eq!(Token::decode(&t.encode()).unwrap(), t);
        let mut all = t.clone();
        all.config.client_ops = None;
        assert_eq!(
            Token::decode(&all.encode()).unwrap().config.client_ops,
            None
        );
    }

    #[test]
    fn bad_tokens_say_what_was_expected() {
        assert_eq!(
            Token::decode("nonsense").unwrap_err().to_string(),
            "bad replay token: expected MODEL/VARIANT:SCENARIO:PAYLOAD, found \"nonsense\""
        );
        assert!(Token::decode("a/b:c:!!!")
            .unwrap_err()
            .to_string()
            .starts_with("bad replay token: payload is not base64"));
        assert_eq!(
            Token::decode("a/b:c:Ag").unwrap_err().to_string(),
            "bad replay token: payload ends early"
        );
        assert_eq!(
            Token::decode("a/b:c:").unwrap_err().to_string(),
            "bad replay token: payload ends early"
        );
    }

    #[test]
    fn a_token_printed_before_the_later_knobs_reads_as_it_did() {
        // From reports/fifo/README.md before `timeout_ms`, `delay_ms` and `rng_by_start`.
        let old = "fifo/published:no-faults+none:AgECAAAAAJqZmZmZmak_AAAAAQHcC6Af0A_QD9wLoJwBMqC\
                   cAYC1GPyL56LBi5XRawFgtAL3-82VDA";
        let t = Token::decode(old).expect("decodes");
        assert_eq!(t.config.timeout_ms, 0);
        assert_eq!(t.config.delay_ms, crate::sim::config::DEFAULT_DELAY_MS);
        assert!(!t.config.rng_by_start);
        // Encoded again: the same bytes but the version (5) and the checksum (it has no
        // choices, which versions 4 and 5 write otherwise).
        let payload = |t: &str| {
            URL_SAFE_NO_PAD
                .decode(t.rsplit_once(':').unwrap().1)
                .unwrap()
        };
        let (was, now) = (payload(old), payload(&t.encode()));
        assert_eq!((was[0], now[0]), (2, 5));
        assert_eq!(was[1..was.len() - 8], now[1..now.len() - 8]);
        assert_eq!(Token::decode(&t.encode()).unwrap(), t);
        // With a later knob set, the token grows and round-trips.
        let mut late = t.clone();
        late.config.timeout_ms = 200;
        let text = late.encode();
        assert_ne!(text, old);
        assert_eq!(Token::decode(&text).expect("decodes"), late);
        // The neighbour comes after the first group: a token with only that group (printed
        // before the neighbour existed) reads with no neighbour; one with it round-trips.
        assert_eq!(Token::decode(&text).unwrap().config.neighbour_bytes, 0);
        let mut noisy = t.clone();
        noisy.config.neighbour_bytes = 100;
        let text = noisy.encode();
        assert!(text.len() > old.len(), "a longer token");
        assert_eq!(Token::decode(&text).expect("decodes"), noisy);
        // The work range comes last: alone, it carries the groups before it at their
        // defaults, and round-trips.
        let mut slow = t.clone();
        slow.config.work_ms = [800, 1_600];
        let text = slow.encode();
        assert!(text.len() > old.len(), "a longer token");
        assert_eq!(Token::decode(&text).expect("decodes"), slow);
        // The geometry comes after the work range: a token of a run under another slab
        // geometry carries it, and round-trips.
        let mut scaled = t.clone();
        scaled.config.geometry = crate::sim::lru_geometry();
        scaled.config.neighbour_max_bytes = 60;
        let text = scaled.encode();
        assert!(text.len() > old.len(), "a longer token");
        assert_eq!(Token::decode(&text).expect("decodes"), scaled);
    }

    #[test]
    fn version_1_tokens_are_refused_with_a_reason() {
        // A token `kvsim check` printed before version 2.
        let old =
            "visitor-counter/fixed:evict+evict:AQEOAQGas-bMmbPm1D8AAAABjqiv_fKVlIl3BQAAAAEBAwACBA";
        assert_eq!(
            Token::decode(old).unwrap_err().to_string(),
            "bad replay token: expected version 5, 4, 3 or 2, found version 1 (an older token, \
             without checksum and some knobs, that this kvsim cannot replay faithfully; kvsim \
             b7e4a47 and earlier read it): run the check again for a new token"
        );
    }

    /// A token of `version` around `body` (after the version byte), with a valid checksum.
    fn with_version(version: u8, body: &[u8]) -> String {
        let mut b = vec![version];
        b.extend_from_slice(body);
        forged("a/b", "s", &b)
    }

    #[test]
    fn versions_this_kvsim_does_not_read_are_refused_naming_them() {
        assert_eq!(
            Token::decode(&with_version(6, &[1, 2]))
                .unwrap_err()
                .to_string(),
            "bad replay token: expected version 5 or earlier, found version 6 (a token from \
             a newer kvsim: replay it with that kvsim, or run the check again with this one)"
        );
        assert_eq!(
            Token::decode(&with_version(0, &[1, 2]))
                .unwrap_err()
                .to_string(),
            "bad replay token: expected version 5, 4, 3 or 2, found version 0"
        );
        // A version 2 payload that fits none of its layouts names each reading's error.
        let e = Token::decode(&with_version(2, &[1, 2]))
            .unwrap_err()
            .to_string();
        assert!(
            e.starts_with(
                "bad replay token: version 2 fits none of its layouts: as kvsim \
                 d69feb3 to 20ad2b9 (before the workload) wrote it, "
            ),
            "{e}"
        );
        for writers in ["f42016c and later", "397aadd to a4458d9"] {
            assert!(e.contains(writers), "{e}");
        }
    }

    /// README's showcase token ("A counterexample, line by line"), as kvsim 20ad2b9 printed
    /// it: version 2, before the workload.
    const V2_BEFORE_WORKLOAD: &str = "lock/published:slow-holder+pause:AgIBAIABAZqZmZmZmak_AA\
        AAAQHcC6Af0A_QD9wLoJwBMqCcAYC1GKD4rbvWh6eLdQQBAQMkTGTkp1Vn1w";

    /// The same run as kvsim f42016c and later printed it (reports/lock/published-pause.txt):
    /// version 2, with the workload.
    const V2_WITH_WORKLOAD: &str = "lock/published:slow-holder+pause:AgIBAACAAQGamZmZmZmpPwAA\
        AAEB3AugH9AP0A_cC6CcATKgnAGAtRig-K271oeni3UEAQEDidBtZefUtv0";

    /// The same run, version 4 (its choices `1, 1, 3` as the runs `3 0 6`).
    const V4: &str = "lock/published:slow-holder+pause:BAIBAACAAQGamZmZmZmpPwAAAAEB3AugH9AP0A_\
        cC6CcATKgnAGAtRig-K271oeni3UEAwAGNo21AA81e84";

    /// The same run, version 5 (nothing in the fourth trailing group: no memory limit).
    const V5: &str = "lock/published:slow-holder+pause:BQIBAACAAQGamZmZmZmpPwAAAAEB3AugH9AP0A_\
        cC6CcATKgnAGAtRig-K271oeni3UEAwAG2MG1AV0Otkw";

    /// The same run, version 3.
    const V3: &str = "lock/published:slow-holder+pause:AwIBAACAAQGamZmZmZmpPwAAAAEB3AugH9AP0A_\
        cC6CcATKgnAGAtRig-K271oeni3UEAQEDqq9_mKk516Q";

    /// A token of kvsim 397aadd (reports/spinlock/published-delay.txt then): version 2,
    /// timeouts before retries.
    const V2_TIMEOUTS_BEFORE_RETRIES: &str = "spinlock/published:delay+delay:AgMDBAEAAQABAQCAB\
        AGamZmZmZmpPwAAAAEB3AugH9AP0A_cC6CcATKgnAGAtRi049_EnqKyv3kJAQECAgICAAToB6wCxBOnoZjnW8TA\
        HQ";

    /// The golden tokens' run: lock/published, slow-holder+pause, shrunk to 2 clients × 1 op.
    fn showcase() -> Token {
        let mut config = SimConfig::from_scenario(
            &Scenario::new("slow-holder+pause", 2, 1).faults(&[FaultKind::Pause]),
        );
        config.fault_budget = 1;
        config.pause_ms = [1_500, 4_000];
        Token {
            target: "lock/published".into(),
            scenario: "slow-holder+pause".into(),
            config,
            seed: 8_437_102_739_467_238_432,
            choices: Some(vec![1, 1, 3]),
        }
    }

    #[test]
    fn golden_tokens_of_every_version_decode_to_their_runs() {
        let want = showcase();
        for (text, layout) in [
            (V2_BEFORE_WORKLOAD, Layout::V2BeforeWorkload),
            (V2_WITH_WORKLOAD, Layout::V3),
            (V3, Layout::V3),
            (V4, Layout::V4),
            (V5, Layout::Current),
        ] {
            let (t, read_as) = Token::decode_layout(text).expect(text);
            assert_eq!((&t, read_as), (&want, layout), "{text}");
            // Encoded again, any of them is today's token (without `lru`, memcached's own
            // geometry, which version 5 does not write).
            assert_eq!(t.encode(), V5);
        }
        let (t, read_as) = Token::decode_layout(V2_TIMEOUTS_BEFORE_RETRIES).unwrap();
        assert_eq!(read_as, Layout::V2TimeoutBeforeRetries);
        let c = &t.config;
        assert_eq!((c.clients, c.ops, c.shards), (3, 3, 1));
        assert_eq!(
            (c.timeout_ms, c.delay_ms, c.retries),
            (1_000, [300, 2_500], 0)
        );
        assert_eq!(c.faults, FaultSet::of(&[FaultKind::Delay]));
        assert_eq!((c.workload.as_ref(), c.rng_by_start), (None, false));
        // Version 5 pins the encoding: a change to the bytes `encode` writes fails here
        // and needs a new version (see Versions in `Token`'s docs); versions 4 and 3 still
        // read, without the fourth trailing group: with `lru`, today's scaled geometry
        // and a neighbour of one size.
        let mut unusual = Token {
            target: "fifo/published".into(),
            scenario: "odd:name+evict".into(),
            config: unusual_config(),
            seed: u64::MAX - 5,
            choices: Some(vec![0, 1, 2, 300, 70000]),
        };
        assert_eq!(unusual.encode(), UNUSUAL_V5);
        assert_eq!(Token::decode(UNUSUAL_V5).unwrap(), unusual);
        unusual.config.neighbour_max_bytes = 0;
        unusual.config.geometry = crate::sim::lru_geometry();
        assert_eq!(Token::decode(UNUSUAL_V4).unwrap(), unusual);
        assert_eq!(Token::decode(UNUSUAL_V3).unwrap(), unusual);
    }

    /// [`unusual_config`] with its seed and choices, version 5.
    const UNUSUAL_V5: &str = "fifo/published:odd:name+evict:BQUHBAIABgADAQIDBAECAwEAAgABB4MBC\
        QAAAAAAAMA_BooGAwMDC8hlERMXHR8lqMAC-v__________AQYAAgTYBODFCCsvNQM9Q0dPgCAgAAAAAAAA-D-AEAT\
        e82UnMRfyBQ";

    /// [`unusual_config`] with its seed and choices, version 4.
    const UNUSUAL_V4: &str = "fifo/published:odd:name+evict:BAUHBAIABgADAQIDBAECAwEAAgABB4MBC\
        QAAAAAAAMA_BooGAwMDC8hlERMXHR8lqMAC-v__________AQYAAgTYBODFCCsvNQM9Q0eus0K5UR2Irw";

    /// [`unusual_config`] with its seed and choices, version 3.
    const UNUSUAL_V3: &str = "fifo/published:odd:name+evict:AwUHBAIABgADAQIDBAECAwEAAgABB4MBCQ\
        AAAAAAAMA_BooGAwMDC8hlERMXHR8lqMAC-v__________AQYAAQKsAvCiBCsvNQM9Q0c8Nv0lUvKXaQ";

    /// Every version 2 token printed in kvsim's history (src/sim/tokens_v2.txt, gathered from
    /// `git log -p` of README.md, reports/, the snapshots and the tests) decodes, as the
    /// layout that wrote it.
    #[test]
    fn every_version_2_token_ever_printed_reads_as_the_layout_that_wrote_it() {
        let mut seen = [0; 3];
        for line in include_str!("tokens_v2.txt").lines() {
            if line.starts_with('#') {
                continue;
            }
            let mut words = line.split(' ');
            let (wrote, token) = (words.next().unwrap(), words.nth(1).unwrap());
            let layout = match wrote {
                "before-workload" => Layout::V2BeforeWorkload,
                "with-workload" => Layout::V3,
                "timeouts-before-retries" => Layout::V2TimeoutBeforeRetries,
                other => panic!("unknown layout {other}"),
            };
            let (_, read_as) = Token::decode_layout(token).expect(token);
            assert_eq!(read_as, layout, "{token}");
            seen[Layout::VERSION_2.iter().position(|&l| l == layout).unwrap()] += 1;
        }
        assert_eq!(seen, [73, 151, 2]);
    }

    fn real_tokens() -> Vec<String> {
        let mut shrunk = SimConfig::from_scenario(
            &Scenario::new("crash-removal", 5, 4).faults(&[FaultKind::Crash]),
        );
        shrunk.client_ops = Some(vec![vec![0], vec![], vec![2, 3]]);
        vec![
            Token {
                target: "counter/published".into(),
                scenario: "evict".into(),
                config: SimConfig::from_scenario(
                    &Scenario::new("evict", 2, 3).faults(&[FaultKind::Evict]),
                ),
                seed: 0x1234_5678_9abc,
                choices: None,
            }
            .encode(),
            Token {
                target: "message-queue/fixed".into(),
                scenario: "crash-removal".into(),
                config: shrunk,
                seed: 3,
                choices: Some(vec![0, 2, 2, 1, 0, 7, 2]),
            }
            .encode(),
        ]
    }

    /// The characters of tokens: base64url, the separators and the names' characters.
    const ALPHABET: &str = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_:/+.";

    #[test]
    fn every_one_character_typo_is_rejected() {
        for token in real_tokens() {
            let chars: Vec<char> = token.chars().collect();
            let mut tried = 0;
            for i in 0..chars.len() {
                let mut deleted = chars.clone();
                deleted.remove(i);
                let deleted: String = deleted.into_iter().collect();
                assert!(
                    Token::decode(&deleted).is_err(),
                    "deletion accepted: {deleted}"
                );
                for c in ALPHABET.chars().filter(|&c| c != chars[i]) {
                    let mut typo = chars.clone();
                    typo[i] = c;
                    let typo: String = typo.into_iter().collect();
                    assert!(Token::decode(&typo).is_err(), "typo accepted: {typo}");
                    tried += 1;
                }
            }
            assert!(tried > 60 * chars.len());
            assert!(Token::decode(&token).is_ok());
        }
    }

    /// A token with a valid checksum around an arbitrary payload body (as a crafted token).
    fn forged(target: &str, scenario: &str, body: &[u8]) -> String {
        let mut b = body.to_vec();
        b.extend_from_slice(&checksum(target, scenario, body).to_le_bytes());
        format!("{target}:{scenario}:{}", URL_SAFE_NO_PAD.encode(&b))
    }

    #[test]
    fn huge_counts_are_rejected_before_anything_is_allocated() {
        let mut w = Writer(vec![VERSION]);
        w.num(u64::MAX); // clients
        let e = Token::decode(&forged("a/b", "s", &w.0)).unwrap_err();
        assert_eq!(
            e.to_string(),
            format!(
                "bad replay token: clients: expected at most 256, found {}",
                u64::MAX
            )
        );

        // Every knob valid, then a choice count of 2^62 (the old decoder's
        // `with_capacity` overflow).
        let base = Token {
            target: "a/b".into(),
            scenario: "s".into(),
            config: SimConfig::from_scenario(&Scenario::new("s", 2, 2)),
            seed: 1,
            choices: None,
        };
        let full = URL_SAFE_NO_PAD
            .decode(base.encode().rsplit_once(':').unwrap().1)
            .unwrap();
        let mut body = full[..full.len() - CHECKSUM_BYTES - 1].to_vec(); // drop `choices: 0`
        let mut w = Writer(Vec::new());
        w.num(1 << 62);
        body.extend_from_slice(&w.0);
        let e = Token::decode(&forged("a/b", "s", &body)).unwrap_err();
        assert_eq!(
            e.to_string(),
            format!(
                "bad replay token: choices: expected at most 400001, found {}",
                (1u64 << 62)
            )
        );
        // A count within the step bound but beyond the bytes present: version 3 checks
        // it against the bytes left, version 4 reads runs until they end.
        let mut body = full[..full.len() - CHECKSUM_BYTES - 1].to_vec();
        let mut w = Writer(Vec::new());
        w.num(300_001);
        body.extend_from_slice(&w.0);
        let e = Token::decode(&forged("a/b", "s", &body)).unwrap_err();
        assert_eq!(e.to_string(), "bad replay token: payload ends early");
        body[0] = 3;
        let e = Token::decode(&forged("a/b", "s", &body)).unwrap_err();
        assert_eq!(
            e.to_string(),
            "bad replay token: choices: expected at most 0 (the payload's bytes left), \
             found 300000"
        );
        // Version 4: a run longer than the count.
        let mut body = full[..full.len() - CHECKSUM_BYTES - 1].to_vec();
        let mut w = Writer(Vec::new());
        w.num(4);
        w.num(1);
        w.num(u64::MAX);
        body.extend_from_slice(&w.0);
        let e = Token::decode(&forged("a/b", "s", &body)).unwrap_err();
        assert_eq!(
            e.to_string(),
            format!(
                "bad replay token: choices: expected a run of at most 3 (the choices left of \
                 3), found {}",
                u64::MAX
            )
        );

        // Each bounded knob just past its limit.
        let c = SimConfig::from_scenario(&Scenario::new("s", 2, 2));
        type Change = Box<dyn Fn(&mut SimConfig)>;
        let cases: Vec<(&str, Change)> = vec![
            ("ops: expected at most 10000", Box::new(|c| c.ops = 10_001)),
            (
                "expected at most 100000 operations (clients × ops), found 200 × 10000",
                Box::new(|c| {
                    c.clients = 200;
                    c.ops = 10_000
                }),
            ),
            ("servers: expected at most 64", Box::new(|c| c.shards = 65)),
            (
                "fault budget: expected at most 100000",
                Box::new(|c| c.fault_budget = u32::MAX),
            ),
            (
                "fault probability: expected 0 to 1, found NaN",
                Box::new(|c| c.fault_probability = f64::NAN),
            ),
            (
                "fault probability: expected 0 to 1, found 1.5",
                Box::new(|c| c.fault_probability = 1.5),
            ),
            (
                "strategy: expected at most 1002",
                Box::new(|c| c.strategy = Strategy::Pct { depth: u32::MAX }),
            ),
            (
                "memory limit: expected at most 1099511627777",
                Box::new(|c| c.memory_limit = Some(usize::MAX - 1)),
            ),
            (
                "step_ms: expected at most 86400000",
                Box::new(|c| c.step_ms = u64::MAX),
            ),
            (
                "neighbour_bytes: expected at most 1048576",
                Box::new(|c| c.neighbour_bytes = 1 << 21),
            ),
            (
                "work_ms: expected at most 86400000",
                Box::new(|c| c.work_ms = [0, u64::MAX]),
            ),
            (
                "pause_ms: expected at most 86400000",
                Box::new(|c| c.pause_ms[1] = 1 << 40),
            ),
            (
                "starve_ms: expected at most 86400000",
                Box::new(|c| c.starve_ms = 1 << 40),
            ),
            (
                "max_drift_ppm: expected at most 1000000",
                Box::new(|c| c.max_drift_ppm = 2_000_000),
            ),
            (
                "max_steps: expected at most 1000000",
                Box::new(|c| c.max_steps = u32::MAX),
            ),
            (
                "max_steps_per_op: expected at most 1000000",
                Box::new(|c| c.max_steps_per_op = u32::MAX),
            ),
            (
                "operations in a list: expected at most 10000",
                Box::new(|c| c.client_ops = Some(vec![vec![0; 10_001]])),
            ),
            (
                "expected operation lists for at most 2 clients, found 3",
                Box::new(|c| c.client_ops = Some(vec![vec![], vec![], vec![]])),
            ),
            (
                "expected operation indices below ops = 2, found 5",
                Box::new(|c| c.client_ops = Some(vec![vec![0, 5]])),
            ),
        ];
        for (expected, change) in cases {
            let mut config = c.clone();
            change(&mut config);
            let t = Token {
                config,
                ..base.clone()
            };
            let e = Token::decode(&t.encode()).unwrap_err().to_string();
            assert!(e.contains(expected), "expected {expected:?}, found {e:?}");
        }
    }

    proptest! {
        // PROPTEST_CASES overrides the budget (README: Fuzzing).
    #![proptest_config(ProptestConfig::with_cases(
        std::env::var("PROPTEST_CASES").ok().and_then(|c| c.parse().ok()).unwrap_or(2000)
    ))]

        #[test]
        fn arbitrary_strings_never_panic(s in ".{0,200}") {
            let _ = Token::decode(&s);
        }

        #[test]
        fn arbitrary_payloads_never_panic(body in proptest::collection::vec(any::<u8>(), 0..200),
                                          version in 0u8..5) {
            // With a valid checksum, so that the field readers see every byte pattern
            // (version 2: each of its layouts).
            let mut b = body;
            if version > 1 && !b.is_empty() {
                b[0] = version;
            }
            let _ = Token::decode(&forged("m/v", "s", &b));
            let _ = Token::decode(&format!("m/v:s:{}", URL_SAFE_NO_PAD.encode(&b)));
        }

        #[test]
        fn mutated_real_tokens_never_panic(i in 0usize..2, pos in 0usize..200, byte in any::<u8>()) {
            let token = &real_tokens()[i];
            let full = URL_SAFE_NO_PAD.decode(token.rsplit_once(':').unwrap().1).unwrap();
            let mut body = full[..full.len() - CHECKSUM_BYTES].to_vec();
            let at = pos % body.len();
            body[at] = byte;
            let _ = Token::decode(&forged("m/v", "s", &body));
        }
    }

    #[test]
    fn tokens_with_a_chosen_workload_round_trip() {
        let mut config = SimConfig::from_scenario(&Scenario::new("explore", 2, 2));
        config.workload = Some(vec![vec![vec![1], vec![0, 300]], vec![vec![], vec![2]]]);
        let mut t = Token {
            target: "fifo/published".into(),
            scenario: "explore".into(),
            config,
            seed: 1,
            choices: Some(vec![0, 1, 1, 0]),
        };
        assert_eq!(Token::decode(&t.encode()).unwrap(), t);
        t.config.client_ops = Some(vec![vec![1], vec![0, 1]]);
        assert_eq!(Token::decode(&t.encode()).unwrap(), t);
    }
}
