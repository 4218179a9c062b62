//! The registry: every model, its variants and its scenarios with expected verdicts.
//!
//! A target is `MODEL/VARIANT` (e.g. `fifo/published`), or the published code with some
//! of its repairs on, `MODEL/published+REPAIR[+REPAIR...]` (e.g.
//! `fifo/published+dequeue-next`, repairs in canonical, sorted, order); names are
//! lowercase with dashes.

use crate::expect::{Expect, ExpectedVerdict, Variant};
use kvsim::check::{Param, SpecEntry, Specs, Timed};
use kvsim::explore::Scope;
use kvsim::harness::{ModelTarget, Target};
use kvsim::Outcome;
use kvsim::Scenario;
use kvsim::{Repair, Repairs};

/// One model: a structure in its variants, with its scenarios.
pub struct Entry {
    /// The model's name, e.g. `fifo`.
    pub name: &'static str,
    /// One line for people.
    pub about: &'static str,
    /// Its named variants (`published`, `fixed`, `proposed`), each a checkable target.
    pub variants: Vec<(Variant, Box<dyn Target>)>,
    /// For a model with repairs, the published code with every non-empty set of them on
    /// ([`Variant::Repaired`]), each a checkable target.
    pub repaired: Vec<(Variant, Box<dyn Target>)>,
    /// The repairs of the published code ([`Model::repairs`]), in the model's order.
    pub repairs: &'static [Repair],
    /// Its named scenarios with the verdict each variant is expected to get.
    pub scenarios: Vec<(Scenario, Expect)>,
    /// The default scope of `kvsim explore` (no faults): the smallest that shows the
    /// published variant's defect, with the bounds its fixed variant needs to finish,
    /// and the history's times kept only when the model's check reads them.
    pub explore: Scope,
    /// What a reader of the findings must know that the verdicts cannot say (e.g. which
    /// findings come from porting the article to a shared store, not from the article);
    /// printed under the findings in `reports/`.
    pub notes: Vec<&'static str>,
}

impl Entry {
    /// A model with its two variants (named `NAME/published` and `NAME/fixed`).
    pub fn new(
        name: &'static str,
        about: &'static str,
        published: impl kvsim::explore::Explorable,
        fixed: impl kvsim::explore::Explorable,
        scenarios: Vec<(Scenario, Expect)>,
    ) -> Entry {
        Entry {
            name,
            about,
            variants: vec![
                (
                    Variant::Published,
                    Box::new(ModelTarget::new(&format!("{name}/published"), published)),
                ),
                (
                    Variant::Fixed,
                    Box::new(ModelTarget::new(&format!("{name}/fixed"), fixed)),
                ),
            ],
            repaired: Vec::new(),
            repairs: &[],
            scenarios,
            explore: Scope::new(2, 2).with_times(false),
            notes: Vec::new(),
        }
    }

    /// The same model with its published code's repairs ([`Model::repairs`] of
    /// `build(Variant::Published)`): every non-empty set of them becomes the target
    /// `NAME/published+REPAIR...`, built by `build(Variant::Repaired(set))`.
    pub fn repairable<M: kvsim::explore::Explorable>(mut self, build: fn(Variant) -> M) -> Entry {
        let list = build(Variant::Published).repairs();
        let reserved: Vec<&str> = kvsim::FaultKind::ALL
            .iter()
            .map(|k| k.name())
            .chain(self.scenarios.iter().map(|(s, _)| s.name.as_str()))
            .collect();
        if let Err(e) = kvsim::check_repairs(list, &reserved) {
            panic!("model {}: {e}", self.name);
        }
        self.repairs = list;
        for set in Repairs::every(list).into_iter().filter(|r| !r.is_empty()) {
            let variant = Variant::Repaired(set);
            let target = ModelTarget::new(&format!("{}/{variant}", self.name), build(variant));
            self.repaired.push((variant, Box::new(target)));
        }
        self
    }

    /// Every target of the model: its named variants, then its repaired ones.
    pub fn targets(&self) -> impl Iterator<Item = (Variant, &dyn Target)> {
        self.variants
            .iter()
            .chain(&self.repaired)
            .map(|(v, t)| (*v, t.as_ref()))
    }

    /// The rungs of the model's ladder, in order: the published code, each repair alone,
    /// all repairs together (with two or more), the source's own variants (`proposed`) and
    /// the fixed variant.
    pub fn rungs(&self) -> Vec<Variant> {
        let mut rungs = vec![Variant::Published];
        let mut alone: Vec<Repairs> = (0..self.repairs.len())
            .map(|i| Repairs::from_bits(self.repairs, 1 << i))
            .collect();
        alone.sort_by_key(|r| r.names());
        rungs.extend(alone.into_iter().map(Variant::Repaired));
        if self.repairs.len() >= 2 {
            rungs.push(Variant::Repaired(Repairs::all(self.repairs)));
        }
        rungs.extend(
            self.variants
                .iter()
                .map(|(v, _)| *v)
                .filter(|v| *v == Variant::Proposed),
        );
        rungs.push(Variant::Fixed);
        rungs
    }

    /// The same model with `clients` × `ops` as its default explore scope.
    pub fn explore_scope(mut self, clients: usize, ops: usize) -> Entry {
        self.explore.config.clients = clients;
        self.explore.config.ops = ops;
        self
    }

    /// The same model with a default explore horizon of `secs` virtual seconds.
    pub fn explore_horizon(mut self, secs: u64) -> Entry {
        self.explore.horizon_ms = secs * 1000;
        self
    }

    /// The same model with a default step bound of `steps` per operation.
    pub fn explore_max_op_steps(mut self, steps: u32) -> Entry {
        self.explore.max_op_steps = steps;
        self
    }

    /// The same model with its workload enumerated coarser: choices among more than
    /// `every_value_up_to` values take `draws` values.
    pub fn explore_draws(mut self, draws: u64, every_value_up_to: u64) -> Entry {
        self.explore.draw_values = draws;
        self.explore.every_value_up_to = every_value_up_to;
        self
    }

    /// Adds a note for the readers of the model's findings ([`Entry::notes`]).
    pub fn note(mut self, text: &'static str) -> Entry {
        self.notes.push(text);
        self
    }

    /// The same model, its check reading the history's virtual times.
    pub fn timed(mut self) -> Entry {
        self.explore.times = true;
        self
    }

    /// Adds the source's own proposed fix as the variant `NAME/proposed`.
    pub fn proposed(mut self, proposed: impl kvsim::explore::Explorable) -> Entry {
        let target = ModelTarget::new(&format!("{}/proposed", self.name), proposed);
        self.variants.push((Variant::Proposed, Box::new(target)));
        self
    }

    /// The model's named variants (`published`, `fixed`, `proposed`), in the CLI's order:
    /// what `kvsim check` runs by default (repaired ones are the ladder's).
    pub fn available_variants(&self) -> Vec<Variant> {
        self.variants.iter().map(|(v, _)| *v).collect()
    }

    /// The variant's target ([`resolve`] gives only variants the model has).
    pub fn target(&self, variant: Variant) -> &dyn Target {
        self.targets()
            .find(|(v, _)| *v == variant)
            .map(|(_, t)| t)
            .expect("a variant the model has")
    }
}

/// Every registered model, in a fixed order.
pub fn registry() -> Vec<Entry> {
    use crate::{
        array_append, array_locked, cache_fill, counter, event_log, fifo, lock, message_queue,
        spinlock, table, visitor_counter,
    };
    vec![
        Entry::new(
            "fifo",
            "FIFO queue on gets/cas/add: a linked list of nodes (000)",
            fifo::published(),
            fifo::fixed(),
            fifo::scenarios(),
        )
        .repairable(fifo::Fifo::new),
        Entry::new(
            "lock",
            "distributed lock: add with an expiry, delete to unlock (004)",
            lock::published(),
            lock::fixed(),
            lock::scenarios(),
        )
        .repairable(lock::Lock::new),
        Entry::new(
            "counter",
            "atomic counter: incr, add on a miss (004)",
            counter::published(),
            counter::fixed(),
            counter::scenarios(),
        )
        .repairable(counter::Counter::new),
        Entry::new(
            "visitor-counter",
            "visitor counter with a shadow key swapped every T seconds (004)",
            visitor_counter::published(),
            visitor_counter::fixed(),
            visitor_counter::scenarios(),
        )
        .repairable(visitor_counter::VisitorCounter::new)
        .proposed(visitor_counter::proposed())
        // The lost visit needs a visit, a later one in the period after next, and a
        // read in the period after that: moments seconds apart, reached through `Sleep`
        // operations. One client does it in 6 operations (46,656 workloads); two clients
        // would need 2 × 5, far too many workloads to enumerate. Every path of the fixed
        // variant ends within 20 s.
        .explore_scope(1, 6)
        .explore_horizon(20)
        .timed(),
        Entry::new(
            "event-log",
            "event log as a ring of time chunks (001)",
            event_log::published(),
            event_log::fixed(),
            event_log::scenarios(),
        )
        .repairable(event_log::EventLog::new)
        // A writer (C0: put, fetch, sleep) and a reader (C1: fetch(first, last), poll,
        // sleep), one operation each, so every operation kind runs: a put and a poll show
        // the published poll's duplicates. The missed event of the chunk that dies W after
        // its first event needs 10 s of sleeps (1 × 7, `kvsim explore --clients 1 --ops
        // 7`). Every path of the fixed variant ends within 25 s.
        .explore_scope(2, 1)
        .explore_horizon(25)
        .timed(),
        Entry::new(
            "array-locked",
            "read-mostly array, changed under the lock (001, MCArray1)",
            array_locked::published(),
            array_locked::fixed(),
            array_locked::scenarios(),
        ),
        Entry::new(
            "array-append",
            "append-mostly array (001, MCArray2)",
            array_append::published(),
            array_append::fixed(),
            array_append::scenarios(),
        )
        .repairable(array_append::ArrayAppend::new),
        Entry::new(
            "table",
            "table / set: a key per member and a member list under the lock (001, MCTable)",
            table::published(),
            table::fixed(),
            table::scenarios(),
        ),
        Entry::new(
            "spinlock",
            "spin lock on increment, runSynchronized guarding a counter (002)",
            spinlock::published(),
            spinlock::fixed(),
            spinlock::scenarios(),
        )
        .repairable(spinlock::SpinLock::new)
        .explore_scope(4, 1),
        Entry::new(
            "cache-fill",
            "cache fill under many readers: naive (every miss recomputes) or a lease (mg N)",
            cache_fill::published(),
            cache_fill::fixed(),
            cache_fill::scenarios(),
        )
        .repairable(cache_fill::CacheFill::new),
        Entry::new(
            "message-queue",
            "message queue on an update log: Tkrzw's MessageQueue, segments as keys (003)",
            message_queue::published(),
            message_queue::fixed(),
            message_queue::scenarios(),
        )
        .repairable(message_queue::MessageQueueModel::new)
        // A writer and a reader, one operation each: a reader's session waits out its
        // 1.5 s timeout in waits of at most 100 ms (about 50 steps), and a writer's turn
        // carries timestamps drawn from dozens of values, coarsened to 2 each. Turns and
        // reads only (the remover is client 4, out of this scope) and no faults: the
        // search verifies that the published reader has no race with the writer's
        // roll-over (Tkrzw's mutex, kept by the port); Tkrzw's own defects need a crash, a
        // lost reply or a removal.
        .explore_scope(2, 1)
        .explore_max_op_steps(100)
        .explore_draws(2, 2)
        .note(
            "The port keeps Tkrzw's mutex: the reader reads the newest file's id before its \
             file and starts from one listing, so its two end-of-file tests and its start \
             each see one state of the queue, as under Tkrzw's mutex; with no faults \
             (`turns`) and under `skew` the published variant passes. Its findings are \
             Tkrzw's own: the stale header trusted by the next writer (\"timestamps \
             decrease in storage\", repair rebuild-timestamp), the file being written \
             removed by its stale header (repair spare-newest-file), a reader stopped for \
             good by a removal (repair skip-removed-file); a resent append duplicates a \
             record (`retrying-client`) and a late command lands after its writer moved on \
             (`delay`); faults that lose data (evict, lru, a volatile restart) break any \
             log whose records have no other copy.",
        ),
    ]
}

/// Resolves `MODEL/VARIANT` (or `MODEL`, meaning all its variants) to (model index,
/// variants).
pub fn resolve(entries: &[Entry], target: &str) -> Result<(usize, Vec<Variant>), String> {
    let (model, variant) = match target.split_once('/') {
        Some((m, v)) => (m, Some(v)),
        None => (target, None),
    };
    let Some(index) = entries.iter().position(|e| e.name == model) else {
        let names: Vec<&str> = entries.iter().map(|e| e.name).collect();
        return Err(format!(
            "unknown model {model:?}: expected one of {}",
            names.join(", ")
        ));
    };
    let entry = &entries[index];
    let variants = match variant {
        None => entry.available_variants(),
        Some(v) if v.contains('+') => vec![repaired(entry, target, v)?],
        Some(v) => {
            let v = Variant::parse(v).map_err(|e| format!("in target {target:?}: {e}"))?;
            if !entry.available_variants().contains(&v) {
                let names: Vec<&str> = entry
                    .available_variants()
                    .iter()
                    .map(|v| v.name())
                    .collect();
                return Err(format!(
                    "in target {target:?}: model {model:?} has no variant {:?} (its source \
                     proposes no fix of its own): expected {}",
                    v.name(),
                    names.join(" or ")
                ));
            }
            vec![v]
        }
    };
    Ok((index, variants))
}

/// The repaired variant `published+REPAIR[+REPAIR...]` of `entry` (repairs in any order;
/// the target's name puts them in canonical order).
fn repaired(entry: &Entry, target: &str, variant: &str) -> Result<Variant, String> {
    let mut parts = variant.split('+');
    let base = parts.next().unwrap_or_default();
    if base != "published" {
        return Err(format!(
            "in target {target:?}: repairs apply to the published code: expected \
             {}/published+REPAIR, found {base:?} before the first +",
            entry.name
        ));
    }
    let names: Vec<&str> = parts.collect();
    let set = Repairs::parse(entry.repairs, &names)
        .map_err(|e| format!("in target {target:?}: model {:?}: {e}", entry.name))?;
    Ok(Variant::Repaired(set))
}

/// Whether `verdict` matches what was expected (`Unknown` never matches).
pub fn matches(expected: ExpectedVerdict, verdict: &kvsim::Verdict) -> bool {
    expected.matches_name(verdict.name())
}

/// Every spec `kvsim check-history --spec` takes: kvsim's sequential specs
/// ([`Specs::shipped`]), then the seed models' time-window specs, each judged by its
/// model's own checker (the one its `Model::check` runs) on the operations the model
/// reads from a history file (the inverse of what `kvsim stress --history-out` writes):
/// `visitor-counter` (`--period`) and `event-log` (`--window`).
pub fn specs() -> Specs {
    Specs::shipped().with([visitor_counter_spec(), event_log_spec()])
}

/// `visitor-counter`: 004's MCVisitorCounter, period `--period`.
fn visitor_counter_spec() -> SpecEntry {
    use crate::visitor_counter::{check_window, op_from_raw, Ret};
    SpecEntry {
        name: "visitor-counter",
        param: Some(Param::Period),
        sequential: false,
        build: |args| match args.period_secs {
            Some(secs) => Ok(Box::new(Timed {
                from_raw: op_from_raw,
                judged: |o| matches!(o.outcome, Outcome::Ok(Ret::Count(_))),
                none_judged: "no value() completed",
                check: Box::new(move |h| check_window(secs * 1000, h)),
            })),
            None => Err(
                "--spec visitor-counter needs --period SECS: the counter's period T in seconds \
                 (the T of MCVisitorCounter(mc, name, T); kvsim's visitor-counter model uses 2)"
                    .to_string(),
            ),
        },
    }
}

/// `event-log`: 001's MCEventLog, window `--window`.
fn event_log_spec() -> SpecEntry {
    use crate::event_log::{check_window, op_from_raw, Ret};
    SpecEntry {
        name: "event-log",
        param: Some(Param::Window),
        sequential: false,
        build: |args| match args.window_secs {
            Some(secs) => Ok(Box::new(Timed {
                from_raw: op_from_raw,
                judged: |o| {
                    matches!(
                        o.outcome,
                        Outcome::Ok(Ret::Events(_) | Ret::Range(_) | Ret::Polled(_))
                    )
                },
                none_judged: "no fetch, fetch-range or poll completed",
                check: Box::new(move |h| check_window(secs * 1000, h)),
            })),
            None => Err(
                "--spec event-log needs --window SECS: the log's window timeChunk * \
                 (numChunks-1) in seconds (MCEventLog's defaults give 90; kvsim's event-log \
                 model uses 10)"
                    .to_string(),
            ),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use kvsim::check::SpecArgs;

    /// Builds spec `name` with `--period` and `--window`: the error, if any.
    fn build(name: &str, period_secs: Option<u64>, window_secs: Option<u64>) -> Option<String> {
        let args = SpecArgs {
            period_secs,
            window_secs,
            ..SpecArgs::default()
        };
        specs().checker(name, &args).err()
    }

    #[test]
    fn parameters_belong_to_their_spec() {
        assert_eq!(build("register", None, None), None);
        assert_eq!(build("visitor-counter", Some(2), None), None);
        assert_eq!(build("event-log", None, Some(10)), None);
        let e = build("visitor-counter", None, None).unwrap();
        assert!(
            e.starts_with("--spec visitor-counter needs --period SECS"),
            "{e}"
        );
        let e = build("event-log", None, None).unwrap();
        assert!(e.starts_with("--spec event-log needs --window SECS"), "{e}");
        assert_eq!(
            build("queue", Some(2), None),
            Some("--period: expected --spec visitor-counter, found --spec queue".to_string())
        );
        assert_eq!(
            build("visitor-counter", Some(2), Some(10)),
            Some("--window: expected --spec event-log, found --spec visitor-counter".to_string())
        );
    }

    #[test]
    fn every_expected_failure_of_a_fixed_variant_is_labelled_and_every_shown_repair_exists() {
        for e in registry() {
            for (s, expect) in &e.scenarios {
                let fails = expect.fixed == ExpectedVerdict::Violation;
                assert_eq!(
                    fails,
                    expect.label.is_some(),
                    "{}/fixed on {}: an expected failure carries a label (impossible or not \
                     yet fixed) and only an expected failure does",
                    e.name,
                    s.name
                );
                if let Some(label) = expect.label {
                    assert!(label.reason().len() > 20, "{}: {label}", e.name);
                }
                for name in expect.shows {
                    assert!(
                        e.repairs.iter().any(|r| r.name == *name),
                        "{} on {}: shows {name:?}, which is none of the model's repairs",
                        e.name,
                        s.name
                    );
                }
            }
        }
    }

    #[test]
    fn repaired_targets_resolve_in_any_order_and_are_named_in_one() {
        let entries = registry();
        for e in &entries {
            let Some(first) = e.repairs.first() else {
                continue;
            };
            let target = format!("{}/published+{}", e.name, first.name);
            let (i, variants) = resolve(&entries, &target).unwrap();
            assert_eq!(entries[i].target(variants[0]).name(), target);
            let twice = format!("{target}+{}", first.name);
            assert!(resolve(&entries, &twice)
                .unwrap_err()
                .contains("given twice"));
            let unknown = format!("{}/published+no-such-repair", e.name);
            assert!(resolve(&entries, &unknown)
                .unwrap_err()
                .contains("expected one of"));
            if let Some(second) = e.repairs.get(1) {
                let a = format!("{}/published+{}+{}", e.name, first.name, second.name);
                let b = format!("{}/published+{}+{}", e.name, second.name, first.name);
                let (_, va) = resolve(&entries, &a).unwrap();
                let (_, vb) = resolve(&entries, &b).unwrap();
                assert_eq!(va, vb);
                let mut sorted = [first.name, second.name];
                sorted.sort_unstable();
                assert_eq!(
                    entries[i].target(va[0]).name(),
                    format!("{}/published+{}+{}", e.name, sorted[0], sorted[1])
                );
            }
        }
        let e = resolve(&entries, "fifo/fixed+x").unwrap_err();
        assert!(e.contains("repairs apply to the published code"), "{e}");
    }

    #[test]
    fn the_specs_are_the_shipped_ones_then_the_time_window_ones() {
        assert_eq!(
            specs().names(),
            [
                "register",
                "cas-register",
                "kv",
                "counter",
                "queue",
                "mutex",
                "set",
                "list-append",
                "multi-register",
                "visitor-counter",
                "event-log"
            ]
        );
    }
}
