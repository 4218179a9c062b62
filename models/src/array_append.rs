//! §7 Array, append-mostly (001, task 2: MCArray2).
//!
//! # Published
//! ```text
//! fetch():      deserializeIntArray(get("array" + name)), or [] on a miss
//! add(element): element = serializeInt(element)
//!   loop: try: append(key, element)  except KeyError: return
//!         try: add(key, element, 0)  except KeyError: return
//! ```
//! transcribed exactly as printed. Elements serialize as `5,` so that appends concatenate.
//!
//! The printed loop is the event log's pattern with its `return`s moved: it returns when
//! `append` *fails*, so on an empty (missing) array nothing is ever stored and every
//! `fetch` answers `[]`; when `append` succeeds it goes on to `add`, which fails (the key
//! exists) and returns, unless the key vanished in between, when the element is stored
//! again and the loop appends it a second time.
//!
//! # The article's defects
//! - **return-after-store** (`no-faults`): "except KeyError: return try: self.mc.add(self.key, element, 0) except KeyError: return"
//!   — the returns are swapped: `add` returns when `append` is refused (the array is
//!   missing) and goes on when it stores, so the array is never created and every fetch
//!   answers `[]` ("no array stored").
//! - **none:eviction-loses-the-array** (`evict`): "try: return deserializeIntArray(self.mc.get(self.key)) except KeyError: return []"
//!   — with the loop the author meant, an evicted array reads as `[]` and the next `add`
//!   creates it anew with one element: every earlier element is lost ("the array was lost
//!   and created anew").
//! - **none:resent-append-duplicates** (`retrying-client`): "self.mc.append(self.key, element)"
//!   — `append` is not idempotent: a client library that sends a timed-out `append` again
//!   stores the element twice ("an append landed twice").
//!
//! Not yet a finding: the 1 MB item limit the author hints at ("配列が大きい(多くの要素を含む)場合、各キーのサイズを制限できます").
//! kvsim's store enforces memcached's limit (`item_size_max`, 1 MiB; `kvsim::VALUE_MAX_LEN`
//! for a command's data), but no scenario can scale it and the workload's elements are a
//! few bytes, so no run reaches it; at the limit the meant loop spins forever (`append`
//! refused for size, `add` refused for an existing key). Showing it needs a scenario knob
//! for `item_size_max` (a core change: scenario, config, world, knob table, token).
//!
//! # Findings (kvsim, pinned in `tests/findings.rs`)
//! - No faults, one client: `add(5)` then `fetch()` answers `[]`; the array is never
//!   created (`array_append_published_never_stores_anything`). Every scenario of
//!   `published` shows it.
//! - With `return-after-store` (the loop the author meant), `no-faults`, `crash-lose` and
//!   `delay` pass; `evict` and `lru` lose the array (the next add creates it anew), and
//!   `retrying-client` stores a resent element twice
//!   (`array_append_repaired_duplicates_a_resent_append`).
//!
//! # Fixed
//! `setup` creates the array (`add key "" 0`); `add` is one `append` of the element with a
//! random tag (`5#k3x9qa,`), `fetch` one `get` that reads every tag once, so an element a
//! resending library appended twice (the same bytes, tag included) counts once. Operations
//! never re-create the key, so a miss means it was lost and the operation answers
//! [`Ret::Lost`]. A timed-out `append` is not retried by the structure: its outcome is
//! reported unknown (a library's resend is harmless, as said).
//!
//! Tolerates (linearizable), by scenario: no faults (`no-faults`); `crash` and `lose`
//! (`crash-lose`); a resending library (`retrying-client`); late delivery (`delay`). Safe
//! under `evict` (`evict`) and `lru` (`lru`): it answers `Lost` once the array is gone.
//! Untested: `pause`, `expire`, `skew`, and `restart`, `shard-fail` (which lose the key as
//! `evict` does). (The article's "+x -x" operation log would add removal with the same
//! one-`append` cost; the workload here only adds, as the published class does.)
//!
//! Not fixed yet: the 1 MB item limit (above): a full array would need more keys (the
//! article's own suggestion: elements spread over several keys by hash).
//!
//! What no design on this store can fix: liveness under `evict`, `lru`, `restart` and
//! `shard-fail`, because the array's only copy is gone and nothing can rebuild it.
//!
//! Probes: `append miss` (an `append` found no array: published, the add returns having
//! stored nothing, the printed defect; fixed, it answers `Lost`), `add not stored`
//! (published: the `add` after a successful `append` found the key, the printed loop's
//! normal exit, which no run reaches because the array is never created; repaired: the
//! `add` after a refused `append` found the key), `missing key` (`fetch` found no array:
//! published reads `[]`, fixed answers `Lost`), `resent element` (fixed: a tag read twice,
//! an `append` a library sent again).

use crate::expect::{Expect, ExpectedVerdict, Variant};
use crate::lincheck;
use kvsim::{
    CheckerLimits, FaultKind, History, Kv, KvError, Model, Repair, Scenario, SequentialSpec,
    SimRng, StoreOutcome, Verdict, SIMULATED_LIMITS,
};

/// The published array's probes ([`Kv::probe`]): its `add` loop and `fetch`.
const PUBLISHED_PROBES: &[&str] = &["append miss", "add not stored", "missing key"];

/// The fixed array's probes: its one-`append` `add` and `fetch`.
const FIXED_PROBES: &[&str] = &["append miss", "missing key", "resent element"];

/// The repairs of the published array ([`Model::repairs`]), each the fix of one defect.
pub const REPAIRS: &[Repair] = &[Repair {
    name: "return-after-store",
    fixes: "add returns when its append or add is refused and goes on when it stores (the \
            printed returns are swapped), so the array is never created",
}];

/// Length of the fixed array's per-element tag.
const TAG_LEN: usize = 6;

/// An array operation.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Op {
    /// `add(element)`.
    Add(u8),
    /// `fetch()`.
    Fetch,
}

/// What an array operation returns.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Ret {
    /// `add` returned.
    Added,
    /// `fetch` returned this array.
    Array(Vec<u8>),
    /// The fixed variant found the array gone and did nothing.
    Lost,
}

fn serialize_int(e: u8) -> Vec<u8> {
    format!("{e},").into_bytes()
}

/// The append-only array of §7, in one of its variants.
#[derive(Clone, Debug)]
pub struct ArrayAppend {
    variant: Variant,
    key: Vec<u8>,
}

/// The published array.
pub fn published() -> ArrayAppend {
    ArrayAppend::new(Variant::Published)
}

/// The fixed array.
pub fn fixed() -> ArrayAppend {
    ArrayAppend::new(Variant::Fixed)
}

impl ArrayAppend {
    /// The array named `log` (key `arraylog`).
    pub fn new(variant: Variant) -> ArrayAppend {
        ArrayAppend {
            variant,
            key: b"arraylog".to_vec(),
        }
    }

    /// Which variant this is.
    pub fn variant(&self) -> Variant {
        self.variant
    }

    async fn published_add<K: Kv>(&self, kv: &K, element: u8) -> Result<Ret, KvError> {
        let element = serialize_int(element);
        if self.variant.repaired("return-after-store") {
            // Repair `return-after-store`: the event log's loop, which the printed one
            // meant: return once a command stored the element, go on when it was refused.
            loop {
                if kv.append(&self.key, &element).await?.is_stored() {
                    return Ok(Ret::Added);
                }
                kv.probe("append miss");
                if kv.add(&self.key, &element, 0).await?.is_stored() {
                    return Ok(Ret::Added);
                }
                kv.probe("add not stored");
            }
        }
        loop {
            if kv.append(&self.key, &element).await? != StoreOutcome::Stored {
                kv.probe("append miss");
                return Ok(Ret::Added);
            }
            if kv.add(&self.key, &element, 0).await? != StoreOutcome::Stored {
                kv.probe("add not stored");
                return Ok(Ret::Added);
            }
        }
    }

    async fn fixed_add<K: Kv>(&self, kv: &K, element: u8) -> Result<Ret, KvError> {
        // Tagged, so that a copy a resending library appended twice reads once.
        let tagged = format!("{element}#{},", kv.random_string(TAG_LEN)).into_bytes();
        Ok(match kv.append(&self.key, &tagged).await? {
            StoreOutcome::Stored => Ret::Added,
            _ => {
                kv.probe("append miss");
                Ret::Lost
            }
        })
    }
}

/// How the published variant (and its repairs) stores its state
/// ([`Model::representation`]).
const REPRESENTATION: &str =
    "one key, arraylog, holds the array as its elements each followed by a comma \
     (5,3,); add appends its element, and fetch is get (a miss reads as []). As \
     printed, add returns when the append fails and goes on to add(arraylog, element) \
     when it stores, so a missing array is never created";

/// How the fixed variant stores its state ([`Model::representation`]).
const REPRESENTATION_FIXED: &str =
    "one key, arraylog, made once by setup, holds the elements each with a random tag \
     and a comma (5#k3x9qa,3#0p2m7c,); add appends its tagged element once, fetch is \
     get and counts each tag once (a resent append lands the same bytes twice); a \
     miss means the array was lost (Lost)";

impl Model for ArrayAppend {
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

    async fn setup<K: Kv>(&self, kv: &K) -> Result<(), KvError> {
        if self.variant == Variant::Fixed {
            kv.add(&self.key, b"", 0).await?;
        }
        Ok(())
    }

    async fn run<K: Kv>(&self, kv: &K, _client: usize, op: &Op) -> Result<Ret, KvError> {
        match (self.variant, op) {
            (Variant::Published | Variant::Repaired(_) | Variant::Proposed, Op::Add(e)) => {
                self.published_add(kv, *e).await
            }
            (Variant::Fixed, Op::Add(e)) => self.fixed_add(kv, *e).await,
            (Variant::Fixed, Op::Fetch) => Ok(match kv.get(&self.key).await? {
                Some(d) => Ret::Array(deserialize_tagged(kv, &d)),
                None => {
                    kv.probe("missing key");
                    Ret::Lost
                }
            }),
            (variant, Op::Fetch) => Ok(match kv.get(&self.key).await? {
                Some(d) => Ret::Array(crate::array_locked::deserialize(&d)),
                None if variant.name() == "published" => {
                    kv.probe("missing key");
                    Ret::Array(Vec::new())
                }
                None => {
                    kv.probe("missing key");
                    Ret::Lost
                }
            }),
        }
    }

    fn probes(&self) -> &'static [&'static str] {
        self.variant
            .published_or_fixed(PUBLISHED_PROBES, FIXED_PROBES)
    }

    fn repairs(&self) -> &'static [Repair] {
        REPAIRS
    }

    fn op(&self, _client: usize, _index: usize, rng: &mut SimRng) -> Op {
        if rng.chance(0.35) {
            Op::Fetch
        } else {
            Op::Add(rng.below(10) as u8)
        }
    }

    fn check(&self, history: &History<Op, Ret>) -> Verdict {
        self.check_with(history, &SIMULATED_LIMITS)
    }

    fn check_with(&self, history: &History<Op, Ret>, limits: &CheckerLimits) -> Verdict {
        lincheck::check(&AppendSpec, history, limits, |r| *r == Ret::Lost)
    }

    fn check_long_with(&self, history: &History<Op, Ret>, limits: &CheckerLimits) -> Verdict {
        self.check_with(history, limits)
    }
}

/// The fixed array's value `5#tag,7#tag,...` as its elements: every tag read once (a
/// resending library may have appended an element twice: the same bytes, tag included).
fn deserialize_tagged<K: Kv>(kv: &K, data: &[u8]) -> Vec<u8> {
    let text = String::from_utf8_lossy(data);
    let mut seen = std::collections::HashSet::new();
    let mut out = Vec::new();
    for piece in text.split(',').filter(|p| !p.is_empty()) {
        let (e, tag) = piece.split_once('#').unwrap_or((piece, ""));
        if !seen.insert(tag) {
            kv.probe("resent element");
            continue;
        }
        if let Ok(e) = e.parse() {
            out.push(e);
        }
    }
    out
}

/// The sequential append-only array.
#[derive(Clone, Copy, Debug, Default)]
pub struct AppendSpec;

impl SequentialSpec for AppendSpec {
    type State = Vec<u8>;
    type Op = Op;
    type Ret = Ret;

    fn name(&self) -> &'static str {
        "append-only array"
    }

    fn init(&self) -> Vec<u8> {
        Vec::new()
    }

    fn step(&self, state: &Vec<u8>, op: &Op) -> (Vec<u8>, Ret) {
        match op {
            Op::Add(e) => {
                let mut s = state.clone();
                s.push(*e);
                (s, Ret::Added)
            }
            Op::Fetch => (state.clone(), Ret::Array(state.clone())),
        }
    }

    fn explain(&self, state: &Vec<u8>, op: &Op, expected: &Ret, found: &Ret) -> String {
        match (op, found) {
            (Op::Fetch, Ret::Array(a)) => {
                let why = surplus_or_lack(state, a);
                format!("fetch returned {a:?}{why}, but the adds so far make the array {state:?}")
            }
            _ => format!("{op:?} returned {found:?}, expected {expected:?}"),
        }
    }
}

/// What a fetched array holds more or less often than the adds put in, in the
/// structure's words (empty when the difference is only in order).
fn surplus_or_lack(state: &[u8], found: &[u8]) -> String {
    let count = |a: &[u8], e: u8| a.iter().filter(|&&x| x == e).count();
    if let Some(&e) = found.iter().find(|&&e| count(found, e) > count(state, e)) {
        return format!(" ({e} more often than it was added: an append landed twice)");
    }
    if found.is_empty() {
        return " (no array stored)".to_string();
    }
    if let Some(&e) = state.iter().find(|&&e| count(state, e) > count(found, e)) {
        return format!(" ({e} missing: the array was lost and created anew)");
    }
    String::new()
}

/// The named scenarios and what each variant is expected to get.
pub fn scenarios() -> Vec<(Scenario, Expect)> {
    vec![
        (
            Scenario::new("no-faults", 3, 4)
                .about("concurrent adds and fetches")
                .runs(300),
            Expect::BROKEN_FIXED.shows(&["return-after-store"]),
        ),
        (
            Scenario::new("evict", 3, 4)
                .about("keys may be evicted at any step")
                .faults(&[FaultKind::Evict])
                .fault_budget(1)
                .runs(500),
            Expect::BROKEN_FIXED
                .shows(&["return-after-store"])
                .then(ExpectedVerdict::Violation),
        ),
        (
            Scenario::new("lru", 3, 4)
                .about(
                    "a shared cache under memory pressure: a neighbour's writes push the array out",
                )
                .faults(&[FaultKind::Lru])
                .memory_limit(200)
                .runs(500),
            Expect::BROKEN_FIXED
                .shows(&["return-after-store"])
                .then(ExpectedVerdict::Violation),
        ),
        (
            Scenario::new("crash-lose", 3, 4)
                .about("clients crash mid-operation; requests and replies get lost")
                .faults(&[FaultKind::Crash, FaultKind::Lose])
                .fault_budget(2)
                .runs(300),
            Expect::BROKEN_FIXED.shows(&["return-after-store"]),
        ),
        (
            Scenario::new("retrying-client", 3, 4)
                .about(
                    "lost requests and replies; the client library sends a timed-out command again",
                )
                .faults(&[FaultKind::Lose])
                .fault_budget(2)
                .retries(1)
                .runs(1000),
            Expect::BROKEN_FIXED
                .shows(&["return-after-store"])
                .then(ExpectedVerdict::Violation),
        ),
        (
            Scenario::new("delay", 3, 4)
                .about("requests land late, after their client timed out and moved on")
                .faults(&[FaultKind::Delay])
                .fault_budget(2)
                .timeout_ms(1_000)
                .runs(1000),
            Expect::BROKEN_FIXED.shows(&["return-after-store"]),
        ),
    ]
}
