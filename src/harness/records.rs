//! The plain records of checking, below everything that makes or reads them: a run
//! ([`RunReport`]), a check ([`CheckReport`]) with its [`Finding`]s, an exhaustive search
//! ([`ExploreReport`]) and how far a run shrank ([`ShrinkStats`]).
//!
//! [`crate::harness::target`], [`crate::harness::shrink`] and [`crate::harness::findings`] make them (and re-export
//! them under their old paths); [`crate::report`] reads them. This module imports none of
//! those.

use crate::explore::Scope;
use crate::scenario::FaultKind;
use crate::sim::{Delivery, Event, SimConfig, TraceStep};
use crate::verdict::Verdict;
use serde::{Deserialize, Serialize};

/// One operation of a run, rendered for people.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct OpRecord {
    /// The client.
    pub client: usize,
    /// The operation (`{:?}`).
    pub op: String,
    /// `ok`, `failed` or `unknown`.
    pub outcome: String,
    /// What it returned (`{:?}`), when it returned.
    pub ret: Option<String>,
    /// Invocation, in the history's event order.
    pub call_seq: u64,
    /// Completion, in the history's event order.
    pub ret_seq: Option<u64>,
    /// Invocation, virtual ms.
    pub call_ms: u64,
    /// Completion, virtual ms.
    pub ret_ms: Option<u64>,
}

/// One run, with everything a report shows.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RunReport {
    /// `MODEL/VARIANT`.
    pub target: String,
    /// The scenario's name.
    pub scenario: String,
    /// Every knob of the run.
    pub config: SimConfig,
    /// The run's seed.
    pub seed: u64,
    /// The token that replays it (`kvsim replay TOKEN`).
    pub token: String,
    /// The verdict.
    pub verdict: Verdict,
    /// The operations.
    pub ops: Vec<OpRecord>,
    /// The trace.
    pub trace: Vec<TraceStep>,
    /// Steps (choices) taken.
    pub steps: u32,
    /// The run's choices.
    pub choices: Vec<u32>,
    /// The fault kinds that were on (swarm draws a subset).
    pub faults_on: Vec<FaultKind>,
    /// How far the minimizer shrank it (`None`: not minimized).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shrink: Option<ShrinkStats>,
    /// The stores' contents step by step, when the run was made to record them
    /// ([`crate::harness::target::Target::run_with_store`]); `None` otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub store: Option<crate::sim::StoreLog>,
    /// How the structure stores its state, in its own words ([`crate::model::Model::representation`]),
    /// for the reports to show beside the reason. Absent from reports written before it
    /// existed (they read as `None`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub representation: Option<String>,
}

impl RunReport {
    /// The run's steps as the reports' step tables number them: its trace after the
    /// structure's setup (the setup's commands, made before any client starts, are shown
    /// apart and not numbered). Not [`RunReport::steps`], which counts scheduling choices.
    pub fn numbered_steps(&self) -> usize {
        self.trace
            .iter()
            .filter(|s| !(s.client.is_none() && matches!(s.event, crate::sim::Event::Call { .. })))
            .count()
    }
}

/// The result of checking one target against one scenario.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CheckReport {
    /// `MODEL/VARIANT`.
    pub target: String,
    /// The scenario's name.
    pub scenario: String,
    /// The verdict over all runs.
    pub verdict: Verdict,
    /// Runs done.
    pub runs: u64,
    /// Runs that violated a property.
    #[serde(default)]
    pub violating_runs: u64,
    /// Wall-clock milliseconds.
    pub millis: u64,
    /// KV calls delivered over all runs.
    pub kv_calls: u64,
    /// The first failing run, if any (for a check made by [`crate::harness::findings::check`], the
    /// first finding's counterexample).
    pub failure: Option<RunReport>,
    /// The violating runs, grouped by property, reason class and the faults they injected.
    #[serde(default)]
    pub groups: Vec<crate::harness::sweep::ViolationGroup>,
    /// What the check found, one entry per defect; made from `groups` by
    /// [`crate::harness::findings::check`] (empty for a bare [`crate::harness::target::Target::sweep`]).
    #[serde(default)]
    pub findings: Vec<Finding>,
    /// How often each probe was hit over the runs ([`crate::kv::Kv::probe`]); 0 for a
    /// declared probe no run reached.
    #[serde(default)]
    pub probes: std::collections::BTreeMap<String, u64>,
}

/// The result of an exhaustive search of one target ([`crate::harness::target::Target::explore`]).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ExploreReport {
    /// `MODEL/VARIANT`.
    pub target: String,
    /// What was searched.
    pub scope: Scope,
    /// `Ok` (every path of the scope passes), `Violation` or `Unknown` (which bound).
    pub verdict: Verdict,
    /// Distinct states (by 64-bit hash).
    pub unique_states: usize,
    /// States generated, repeats included (after the sleep-set reduction, if `reduced`).
    pub total_states: usize,
    /// Whether the search left out steps that commute with steps already explored (sleep
    /// sets: every state still visited and checked).
    #[serde(default)]
    pub reduced: bool,
    /// The steps the reduction left out: a complete search without it generates
    /// `total_states + slept` states.
    #[serde(default)]
    pub slept: usize,
    /// The deepest path, in steps.
    pub max_depth: usize,
    /// Wall-clock milliseconds.
    pub millis: u64,
    /// Generated states per second.
    pub states_per_s: f64,
    /// Paths the time horizon cut (not expanded, not judged).
    pub horizon_cut: usize,
    /// Paths the step bound per operation cut (not expanded, not judged).
    #[serde(default)]
    pub steps_cut: usize,
    /// Workloads the scope covers: every alternative of every operation the model's `op`
    /// can give (saturating).
    #[serde(default)]
    pub workloads: u64,
    /// The sets of clients the search treated as interchangeable (symmetry reduction: one
    /// state explored for every permutation of the clients within a set).
    #[serde(default)]
    pub interchangeable: Vec<Vec<usize>>,
    /// The guard rail that stopped the search, if one did.
    pub bound: Option<String>,
    /// Whether the search was time-free (see `Scope::time_shift`): states that differ
    /// only by when things happen were one, and no path was cut at the horizon.
    #[serde(default)]
    pub time_free: bool,
    /// What made a time-free search run again with times, if something did.
    #[serde(default)]
    pub time_dependence: Option<String>,
    /// A warning about the scope's size, given before the search.
    pub warning: Option<String>,
    /// The shortest counterexample, replayed by the simulator (its trace is the
    /// simulator's own).
    pub counterexample: Option<RunReport>,
    /// The counterexample's replay token (`kvsim replay TOKEN`).
    pub token: Option<String>,
}

/// How far a run shrank.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ShrinkStats {
    /// Steps of the original run.
    pub from_steps: u32,
    /// Clients of the original run (with at least one operation).
    pub from_clients: usize,
    /// Operations of the original run.
    pub from_ops: usize,
    /// Faults injected in the original run.
    pub from_faults: usize,
    /// Runs the minimizer made.
    pub probes: u64,
    /// Whether it stopped at its probe limit (then the result may not be minimal).
    pub exhausted: bool,
    /// The original run's steps as the reports number them ([`RunReport::numbered_steps`]);
    /// absent from records written before it existed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub from_numbered_steps: Option<usize>,
}

impl ShrinkStats {
    /// `shrunk 41 → 6 steps, 3 → 2 clients, 8 → 2 ops, 2 → 1 faults` (only what changed,
    /// steps always): steps as the step tables number them ([`RunReport::numbered_steps`]),
    /// or, for a record without the original's count, scheduling choices, named so.
    pub fn describe(&self, now: &RunReport) -> String {
        let steps = match self.from_numbered_steps {
            Some(from) => format!("shrunk {from} → {} steps", now.numbered_steps()),
            None => format!(
                "shrunk {} → {} scheduling choices",
                self.from_steps, now.steps
            ),
        };
        let mut parts = vec![steps];
        let clients = active_clients(&now.config).len();
        if clients != self.from_clients {
            let noun = if clients == 1 { "client" } else { "clients" };
            parts.push(format!("{} → {clients} {noun}", self.from_clients));
        }
        let ops = total_ops(&now.config);
        if ops != self.from_ops {
            let noun = if ops == 1 { "op" } else { "ops" };
            parts.push(format!("{} → {ops} {noun}", self.from_ops));
        }
        let faults = faults_in(now);
        if faults != self.from_faults {
            let noun = if faults == 1 { "fault" } else { "faults" };
            parts.push(format!("{} → {faults} {noun}", self.from_faults));
        }
        let mut s = parts.join(", ");
        if self.exhausted {
            s.push_str(&format!(
                " (stopped at its limit of {} runs: may not be minimal)",
                self.probes
            ));
        }
        s
    }
}

/// The clients that run at least one operation.
pub fn active_clients(config: &SimConfig) -> Vec<usize> {
    (0..config.clients)
        .filter(|&c| !config.ops_of(c).is_empty())
        .collect()
}

/// Operations over all clients.
pub fn total_ops(config: &SimConfig) -> usize {
    (0..config.clients).map(|c| config.ops_of(c).len()).sum()
}

/// Faults injected in a traced run (the store's own LRU evictions are not counted: they
/// follow from the memory limit).
pub fn faults_in(r: &RunReport) -> usize {
    r.trace
        .iter()
        .filter(|s| match &s.event {
            Event::Fault(f) => f.injected(),
            Event::Call { delivery, .. } => {
                matches!(delivery, Delivery::RequestLost | Delivery::ReplyLost(_))
            }
            _ => false,
        })
        .count()
}

/// One defect a check found.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Finding {
    /// The property that fails.
    pub property: String,
    /// The reason, as the (minimal) counterexample gives it.
    pub reason: String,
    /// The reason's class ([`crate::verdict::Violation::class`]).
    pub class: String,
    /// The fault kinds the minimal counterexample still injects: the faults this defect
    /// needs (empty: it needs none).
    pub faults: Vec<FaultKind>,
    /// Violating runs that showed it.
    pub runs: u64,
    /// The token that replays the counterexample.
    pub replay: String,
    /// Whether the counterexample was minimized (the faults are then what it needs;
    /// otherwise, what the run happened to inject).
    pub minimized: bool,
    /// The counterexample.
    pub counterexample: RunReport,
}

impl Finding {
    /// The faults for people: `no fault` or `evict, restart`, each eviction fault with who
    /// can evict so: `lru` with the slab classes the counterexample's store evicted from,
    /// its geometry, and that memcached's own eviction reaches it there; `evict` as an
    /// adversary's (see [`Finding::reachability`]).
    pub fn describe_faults(&self) -> String {
        if self.faults.is_empty() {
            return describe_faults(&self.faults);
        }
        self.faults
            .iter()
            .map(|&k| match (k, self.reachability_of(k)) {
                (k, Some(why)) => format!("{} ({why})", describe_faults(&[k])),
                (k, None) => describe_faults(&[k]),
            })
            .collect::<Vec<_>>()
            .join(", ")
    }

    /// The slab classes the counterexample's store evicted the structure's keys from
    /// (its `lru evicts` steps), smallest first: `(class, chunk size)`.
    pub fn slab_classes(&self) -> Vec<(usize, usize)> {
        let mut out: Vec<(usize, usize)> = self
            .counterexample
            .trace
            .iter()
            .filter_map(|s| match &s.event {
                Event::Fault(crate::sim::Fault::LruEvict { class, chunk, .. }) if *class > 0 => {
                    Some((*class, *chunk))
                }
                _ => None,
            })
            .collect();
        out.sort_unstable();
        out.dedup();
        out
    }

    /// Who can do what this finding's eviction faults do (`None`: it needs no eviction).
    /// `lru`: **reachable by memcached's eviction at this geometry**: memcached 1.6.18's
    /// own algorithm (slab classes, per-class segmented LRU), run on the counterexample's
    /// memory limit and slab geometry, with another tenant's writes of the stated sizes,
    /// evicts those keys at those steps. At a scaled-down geometry (pages of kilobytes,
    /// not megabytes) the same happens on a real memcached whose classes hold
    /// proportionally more items under proportionally more traffic; the scale changes how
    /// much traffic it takes, not whether the algorithm can do it. `evict`: only by an
    /// adversary (any key may go, whatever its class and recency).
    pub fn reachability(&self) -> Option<String> {
        let parts: Vec<String> = [FaultKind::Lru, FaultKind::Evict]
            .into_iter()
            .filter(|&k| self.needs(k))
            .filter_map(|k| {
                self.reachability_of(k)
                    .map(|w| format!("{}: {w}", k.name()))
            })
            .collect();
        (!parts.is_empty()).then(|| parts.join("; "))
    }

    /// [`Finding::reachability`] of one eviction fault kind.
    fn reachability_of(&self, kind: FaultKind) -> Option<String> {
        match kind {
            FaultKind::Evict => Some("only by an adversary: any key may go".to_string()),
            FaultKind::Lru => {
                let c = &self.counterexample.config;
                let classes = match self.slab_classes().as_slice() {
                    [] => "no slab class named".to_string(),
                    [(id, chunk)] => format!("slab class {id} ({chunk}-byte chunks)"),
                    many => format!(
                        "slab classes {}",
                        many.iter()
                            .map(|(id, chunk)| format!("{id} ({chunk}-byte chunks)"))
                            .collect::<Vec<_>>()
                            .join(", ")
                    ),
                };
                let memory = c
                    .memory_limit
                    .map_or(String::new(), |m| format!("memory {m} B, "));
                Some(format!(
                    "evicts from {classes} at {memory}{}: reachable by memcached's eviction \
                     at this geometry",
                    c.geometry.describe()
                ))
            }
            _ => None,
        }
    }

    /// Whether `other` is the same defect: the same property, reason class and faults
    /// needed (as found by another scenario or run).
    pub fn same_defect(&self, other: &Finding) -> bool {
        self.property == other.property && self.class == other.class && self.faults == other.faults
    }

    /// Whether this finding needs `kind`.
    pub fn needs(&self, kind: FaultKind) -> bool {
        self.faults.contains(&kind)
    }

    /// One line: property, reason, faults, runs.
    pub fn line(&self) -> String {
        let faults = if self.minimized {
            format!("needs {}", self.describe_faults())
        } else {
            format!(
                "not minimized (the run injected {})",
                self.describe_faults()
            )
        };
        format!(
            "{}: {} · {faults} · {} run{}",
            self.property,
            self.reason,
            self.runs,
            if self.runs == 1 { "" } else { "s" },
        )
    }
}

/// `no fault`, or the kinds' names joined by `, ` (`skew` as `skewed clocks`: the clients'
/// clocks disagree from the run's start, whether or not a clock also jumped).
pub fn describe_faults(kinds: &[FaultKind]) -> String {
    if kinds.is_empty() {
        "no fault".to_string()
    } else {
        kinds
            .iter()
            .map(|k| match k {
                FaultKind::Skew => "skewed clocks",
                k => k.name(),
            })
            .collect::<Vec<_>>()
            .join(", ")
    }
}
