//! kvsim: deterministic simulation and model checking for data structures built on a
//! memcached-style key-value store.
//!
//! Queues, locks, counters, logs and sets built on `add`, `gets`/`cas`, `incr` and `append`
//! look right and break under eviction, expiry, clock skew, crashes and unlucky
//! interleavings. kvsim runs such a structure, written as ordinary async Rust against the
//! [`Kv`](kv::Kv) trait, under a simulated memcached 1.6.18 whose faults and schedule it
//! controls; it records what every client saw and judges the history.
//!
//! # Example: a lost update, found and explained
//!
//! ```
//! use kvsim::{History, Outcome};
//! use kvsim::{Kv, KvError};
//! use kvsim::Model;
//! use kvsim::SimRng;
//! use kvsim::Scenario;
//! use kvsim::{Verdict, Violation};
//! use kvsim::Check;
//!
//! /// A counter incremented with get-then-set: no lock, no cas.
//! struct GetSetCounter;
//!
//! impl Model for GetSetCounter {
//!     type Op = ();
//!     type Ret = u64; // the value after the increment
//!
//!     async fn setup<K: Kv>(&self, kv: &K) -> Result<(), KvError> {
//!         kv.set(b"n", b"0", 0).await.map(|_| ())
//!     }
//!
//!     async fn run<K: Kv>(&self, kv: &K, _client: usize, _op: &()) -> Result<u64, KvError> {
//!         let n: u64 = match kv.get(b"n").await? {
//!             Some(v) => String::from_utf8_lossy(&v).parse().unwrap_or(0),
//!             None => 0,
//!         };
//!         kv.set(b"n", (n + 1).to_string().as_bytes(), 0).await?; // a client may be
//!         Ok(n + 1)                                               // switched out here
//!     }
//!
//!     fn op(&self, _client: usize, _index: usize, _rng: &mut SimRng) {}
//!
//!     fn check(&self, history: &History<(), u64>) -> Verdict {
//!         // Linearizable increments return distinct values.
//!         let mut seen = std::collections::BTreeSet::new();
//!         for op in &history.ops {
//!             if let Outcome::Ok(v) = op.outcome {
//!                 if !seen.insert(v) {
//!                     let reason = format!("two increments returned {v}: one update was lost");
//!                     return Violation::new("linearizability", reason, vec![]).verdict();
//!                 }
//!             }
//!         }
//!         Verdict::Ok
//!     }
//! }
//!
//! let outcome = Check::new("counter/getset", GetSetCounter, Scenario::new("race", 2, 1)).run();
//! let failure = outcome.assert_violation();
//! // The report: seed and knobs, lane diagram, one column per client, the replay token.
//! assert!(kvsim::report::text(failure).contains("kvsim replay counter/getset:race:"));
//! ```
//!
//! # Concepts
//!
//! - **One vocabulary.** Every KV operation is a [`Command`](command::Command) and every
//!   answer a [`Reply`](command::Reply), in the store, traces, replay, the wire protocol
//!   and reports.
//! - **The store.** [`store::Store`] is a deterministic state machine faithful to memcached
//!   1.6.18 (key and size limits, exptime rules, cas uniques, incr/decr quirks, flush_all,
//!   LRU eviction, `-M`, a persistent mode standing for MemcacheDB/kumofs/Flare).
//! - **Structures and models.** A structure is written against [`Kv`](kv::Kv): typed
//!   methods (`get`, `gets`, `add`, `cas`, `incr`, `append`, …) plus the client's clock,
//!   sleep and random numbers. A [`Model`](model::Model) adds a workload and the property
//!   its histories must satisfy. A structure that reads `std::time` or `rand` directly
//!   cannot be simulated or replayed.
//! - **The simulator.** [`sim`] runs N clients as futures on one thread; each KV call is a
//!   scheduling point; faults (evict, lru, expire, skew, restart, crash, lose, pause,
//!   shard-fail) are choices like any other. Strategies: random walk, PCT, swarm, replay.
//!   A run is a pure function of (model, [`SimConfig`](sim::SimConfig), seed, choices); a
//!   [`Token`](sim::Token) replays it.
//! - **Histories and verdicts.** A [`History`](history::History) records each operation's
//!   invocation, completion and outcome (ok, failed, unknown). Verdicts are Porcupine's:
//!   `Ok`, `Violation` (with the reason in words), `Unknown` (a bound was hit; never a pass).
//!
//! # Limitations
//!
//! - A random, PCT or swarm check that passes found no violation in the runs it made; it is
//!   not a proof. Only exhaustive exploration within a bound is a proof for that bound.
//! - Faults are injected at KV-call granularity: a client runs without interruption
//!   between two KV calls (which is exactly what a structure can rely on).
//! - The simulated store's LRU is one global byte-count LRU, not memcached's per-slab-class
//!   segmented LRU (see [`store`]); eviction order in a real server is only approximately
//!   LRU, so the `evict` fault (the adversary picks any key) is the sound one.
//! - A sharded cluster places keys by a fixed hash; real clients may rehash when a server
//!   fails (which the `shard-fail` fault does not model).
#![forbid(unsafe_code)]

pub mod check;
pub mod command;
pub mod explore;
mod fault;
pub mod formats;
mod gate;
pub mod harness;
mod history;
mod kv;
mod memory;
mod model;
pub mod net;
mod repair;
pub mod report;
mod rng;
mod scenario;
pub mod sim;
mod spec;
pub mod specs;
pub mod store;
mod verdict;
pub mod wire;

pub use gate::{Check, CheckOutcome, Explore, ExploreOutcome};

// ---- #33.6 the public face: begin ----
// What a user writing a model needs, at the crate root (`kvsim::Model`, not
// `kvsim::model::Model`); `models/` imports only from here. Keep this block together.

// A structure, its workload and its property.
pub use command::{KEY_MAX_LEN, VALUE_MAX_LEN};
pub use kv::{Kv, KvError, Lease, StoreOutcome, Versioned};
pub use model::{Model, SIMULATED_LIMITS, SIMULATED_MAX_STEPS};
pub use repair::{check_list as check_repairs, Repair, Repairs, MAX_REPAIRS};
pub use rng::SimRng;
pub use scenario::{FaultKind, FaultSet, Scenario, Strategy};
// Histories and verdicts.
pub use history::{History, JsonlFormat, JsonlOp, Mark, Operation, Outcome};
pub use verdict::{Verdict, Violation};
// The checkers.
pub use check::counter::{
    check_by as check_counter_by, linearizable_counter, CounterCheck, CounterView,
};
pub use check::unique_queue::{check as check_unique_queue, linearizable_queue, UniqueCheck};
pub use check::unique_set::{check as check_unique_set, linearizable_set, SetCheck};
pub use check::{
    check_linearizability, linearizable, mutual_exclusion, progress, Blocked, CheckerLimits,
    Counterexample, Linearization, ProgressBound, Witness,
};
// Sequential specs: the trait and the shipped ones.
pub use spec::SequentialSpec;
pub use specs::cas_register::{CasOp, CasRegisterSpec, CasRet};
pub use specs::counter::{CounterOp, CounterRet, CounterSpec};
pub use specs::kv::{KvOp, KvRet, KvSpec};
pub use specs::list_append::{ListAppendSpec, Micro, Txn, TxnRet};
pub use specs::multi_register::{MultiRegisterSpec, RegMicro, RegTxn, RegTxnRet};
pub use specs::mutex::{MutexOp, MutexRet, MutexSpec};
pub use specs::queue::{QueueOp, QueueRet, QueueSpec};
pub use specs::register::{RegisterOp, RegisterRet, RegisterSpec};
pub use specs::set::{SetOp, SetRet, SetSpec};
// History files: the readers, and what a spec's `FromRaw` is written with.
pub use formats::{
    expected as raw_expected, outcome as raw_outcome, pair as pair_events, parse_events, read_file,
    read_history, to_history, End as RawEnd, Format, FormatError, FromRaw, RawOp, Value,
};
// Simulated runs.
pub use harness::sweep::run_seed;
pub use sim::{run as simulate, RunOutput, SimConfig, Token};
// The renderers of one run's report.
pub use report::{
    html as report_html, json as report_json, text as report_text,
    text_styled as report_text_styled,
};
// Everything else of the vocabulary a model is written in (its modules are private:
// `kvsim::Kv`, never `kvsim::kv::Kv`).
pub use kv::*;
pub use rng::*;
pub use verdict::*;
// ---- #33.6 the public face: end ----
