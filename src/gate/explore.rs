//! Exhaustive searches from `cargo test`: the library API behind `kvsim explore`, for
//! users' own models.
//!
//! ```
//! # use kvsim::{Explore, Model, Kv, KvError, SimRng, History,
//! #   Verdict};
//! # struct Noop;
//! # impl Model for Noop {
//! #     type Op = (); type Ret = ();
//! #     async fn run<K: Kv>(&self, kv: &K, _c: usize, _op: &()) -> Result<(), KvError> {
//! #         kv.set(b"k", b"v", 0).await.map(|_| ())
//! #     }
//! #     fn op(&self, _c: usize, _i: usize, _r: &mut SimRng) {}
//! #     fn check(&self, _h: &History<(), ()>) -> Verdict { Verdict::Ok }
//! # }
//! // Every interleaving of 2 clients × 2 operations, with one lost request or reply.
//! let outcome = Explore::new("noop/fixed", Noop)
//!     .clients(2)
//!     .ops(2)
//!     .fault(kvsim::FaultKind::Lose, 1)
//!     .run();
//! outcome.assert_ok(); // on failure: panics with `kvsim explore`'s report
//! ```

use crate::explore::{Explorable, Scope, SearchLimits};
use crate::harness::records::{ExploreReport, RunReport};
use crate::harness::target::{ModelTarget, Target};
use crate::report;
use crate::scenario::FaultKind;
use crate::sim::TokenError;
use crate::verdict::Verdict;
use std::time::Duration;

/// An exhaustive search of one model in a bounded scope, built step by step: the knobs
/// of `kvsim explore` (clients, operations, faults, horizon, step bound, seed, workload,
/// state and memory bounds). By default 2 clients × 2 operations, no faults, every
/// workload, the default bounds of [`Scope::new`] and [`SearchLimits::default`].
pub struct Explore<M> {
    target: ModelTarget<M>,
    scope: Scope,
    limits: SearchLimits,
}

impl<M: Explorable> Explore<M> {
    /// Explores `model`, named `name` (`MODEL/VARIANT`).
    pub fn new(name: &str, model: M) -> Explore<M> {
        Explore {
            target: ModelTarget::new(name, model),
            scope: Scope::new(2, 2),
            limits: SearchLimits::default(),
        }
    }

    /// Concurrent clients (`--clients`).
    ///
    /// # Panics
    /// When `n` is 0.
    #[track_caller]
    pub fn clients(mut self, n: usize) -> Explore<M> {
        assert!(n > 0, "kvsim::Explore: expected at least 1 client, found 0");
        self.scope.config.clients = n;
        self
    }

    /// Operations per client (`--ops`).
    ///
    /// # Panics
    /// When `n` is 0.
    #[track_caller]
    pub fn ops(mut self, n: usize) -> Explore<M> {
        assert!(
            n > 0,
            "kvsim::Explore: expected at least 1 operation, found 0"
        );
        self.scope.config.ops = n;
        self
    }

    /// Adds a fault kind with how many faults of it one path may take (`--faults
    /// KIND:BUDGET`); a kind given twice keeps the last budget.
    pub fn fault(mut self, kind: FaultKind, budget: u32) -> Explore<M> {
        self.scope.faults.retain(|(k, _)| *k != kind);
        self.scope.faults.push((kind, budget));
        self
    }

    /// Virtual time after which a path is cut (`--horizon`); a cut path makes the
    /// verdict `Unknown`.
    ///
    /// # Panics
    /// When `horizon` is under a millisecond.
    #[track_caller]
    pub fn horizon(mut self, horizon: Duration) -> Explore<M> {
        let ms = u64::try_from(horizon.as_millis()).unwrap_or(u64::MAX);
        assert!(
            ms > 0,
            "kvsim::Explore: expected a horizon of at least 1 ms, found {horizon:?}"
        );
        self.scope.horizon_ms = ms;
        self
    }

    /// Steps (KV calls and wake-ups) one operation may take before its path is cut
    /// (`--max-op-steps`); a cut path makes the verdict `Unknown`.
    pub fn max_op_steps(mut self, steps: u32) -> Explore<M> {
        self.scope.max_op_steps = steps.max(1);
        self
    }

    /// The seed (`--seed`, default 1): fixes the random numbers the structure draws
    /// through its kv handle and the clocks `skew` draws.
    pub fn seed(mut self, seed: u64) -> Explore<M> {
        self.scope.seed = seed;
        self
    }

    /// Only the workload the seed draws, as `kvsim check` does (`--workload seed`), instead
    /// of every workload (`--workload all`, the default): a narrower scope.
    pub fn seeded_workload(mut self, seeded: bool) -> Explore<M> {
        self.scope.seeded_workload = seeded;
        self
    }

    /// Values a large workload choice takes (`--draws`, default
    /// [`crate::explore::DEFAULT_DRAW_VALUES`]).
    ///
    /// # Panics
    /// When `n` is under 2.
    #[track_caller]
    pub fn draws(mut self, n: u64) -> Explore<M> {
        assert!(
            n >= 2,
            "kvsim::Explore: expected at least 2 values per choice, found {n}"
        );
        self.scope.draw_values = n;
        self
    }

    /// Choices among at most `n` values take every value (`--every-value-up-to`,
    /// default [`crate::explore::EVERY_VALUE_UP_TO`]); larger ones take
    /// [`Explore::draws`] values.
    ///
    /// # Panics
    /// When `n` is under 2.
    #[track_caller]
    pub fn every_value_up_to(mut self, n: u64) -> Explore<M> {
        assert!(
            n >= 2,
            "kvsim::Explore: expected every value of choices among at least 2, found {n}"
        );
        self.scope.every_value_up_to = n;
        self
    }

    /// Keeps the history's virtual times in the state (default: kept). Leave them out
    /// (`false`) only when the model's check does not read them: paths that differ only
    /// in when things happened then merge.
    pub fn timed(mut self, timed: bool) -> Explore<M> {
        self.scope.times = timed;
        self
    }

    /// Stops with `Unknown` after generating this many states (`--max-states`).
    pub fn max_states(mut self, n: usize) -> Explore<M> {
        self.limits.max_states = n;
        self
    }

    /// Stops with `Unknown` when the process holds this many MiB (`--max-memory`).
    pub fn max_memory_mib(mut self, mib: u64) -> Explore<M> {
        self.limits.max_memory_bytes = mib << 20;
        self
    }

    /// Checker threads of the depth-first search (`--threads`, default 1).
    pub fn threads(mut self, n: usize) -> Explore<M> {
        self.limits.threads = n.max(1);
        self
    }

    /// Adjusts the scope beyond these knobs (store memory limit, persistence, shards, …).
    pub fn configure(mut self, f: impl FnOnce(&mut Scope)) -> Explore<M> {
        f(&mut self.scope);
        self
    }

    /// The scope this search covers.
    pub fn scope(&self) -> &Scope {
        &self.scope
    }

    /// Explores every path of the scope; a violation's shortest counterexample is
    /// replayed by the simulator.
    pub fn run(&self) -> ExploreOutcome {
        let workloads = self.target.workloads(&self.scope);
        let report = self.target.explore(&self.scope, &self.limits);
        let spread = workloads.map(|(_, s)| s).unwrap_or(false);
        ExploreOutcome {
            search: report,
            spread,
        }
    }

    /// Replays a token this search printed (see [`ExploreOutcome::assert_ok`]): the
    /// counterexample with its full trace, as [`report::text`] shows it. The token must be
    /// one of this search's target (its `MODEL/VARIANT` name).
    pub fn replay(&self, token: &str) -> Result<RunReport, TokenError> {
        super::replay(&self.target, token)
    }
}

/// What an [`Explore`] found.
#[derive(Clone, Debug)]
pub struct ExploreOutcome {
    /// The search's figures and verdict, as `kvsim explore --json` gives them.
    pub search: ExploreReport,
    spread: bool,
}

impl ExploreOutcome {
    /// `Ok` (every path of the scope reached its end and passes), `Violation` or
    /// `Unknown` (a bound cut paths or stopped the search).
    pub fn verdict(&self) -> &Verdict {
        &self.search.verdict
    }

    /// The shortest counterexample, replayed by the simulator, if a violation was found.
    pub fn counterexample(&self) -> Option<&RunReport> {
        self.search.counterexample.as_ref()
    }

    /// The text report, as `kvsim explore` prints it, except that the counterexample's
    /// replay line says how to replay it in the test ([`Explore::replay`]).
    pub fn report(&self) -> String {
        let r = &self.search;
        let mut text = report::explore_header(&r.target, &r.scope, (r.workloads, self.spread));
        text.push_str(&report::explore_body(r));
        if let Some(token) = &r.token {
            text = text.replace(
                &format!("  replay: kvsim replay {token}\n"),
                &format!(
                    "  replay in this test (kvsim::Explore::replay, on the Explore that \
                     failed):\n    explore.replay({token:?})\n"
                ),
            );
        }
        text
    }

    /// Which knobs of [`Explore`] raise the bounds that left the search unfinished.
    fn raise_hint(&self) -> String {
        let r = &self.search;
        let mut knobs = Vec::new();
        if r.horizon_cut > 0 {
            knobs.push("Explore::horizon (the time horizon)");
        }
        if r.steps_cut > 0 {
            knobs.push("Explore::max_op_steps (the step bound per operation)");
        }
        if let Some(b) = &r.bound {
            if b.contains("memory") {
                knobs.push("Explore::max_memory_mib (the memory bound)");
            } else {
                knobs.push("Explore::max_states (the state bound)");
            }
        }
        if knobs.is_empty() {
            String::new()
        } else {
            format!("in a test, raise it with {}\n", knobs.join(" and "))
        }
    }

    /// Panics unless every path of the scope reached its end and passes: on a violation
    /// with the report (see [`ExploreOutcome::report`]); on `Unknown` with the reason,
    /// which names the bound that cut paths or stopped the search.
    #[track_caller]
    pub fn assert_ok(&self) {
        let r = &self.search;
        match &r.verdict {
            Verdict::Ok => {}
            Verdict::Unknown(why) => panic!(
                "kvsim: explore {} ({}): unknown, the scope was not covered: {why}\n{}\n{}",
                r.target,
                r.scope.describe(),
                self.raise_hint(),
                self.report()
            ),
            Verdict::Violation(_) => panic!(
                "kvsim: explore {} ({}) found a violation\n\n{}",
                r.target,
                r.scope.describe(),
                self.report()
            ),
        }
    }

    /// Panics unless a violation was found; returns its shortest counterexample.
    #[track_caller]
    pub fn assert_violation(&self) -> &RunReport {
        let r = &self.search;
        match self.counterexample() {
            Some(cx) if r.verdict.is_violation() => cx,
            _ => panic!(
                "kvsim: explore {} ({}): expected a violation, found {}\n\n{}",
                r.target,
                r.scope.describe(),
                r.verdict,
                self.report()
            ),
        }
    }
}
