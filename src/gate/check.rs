//! Checks from `cargo test`: the library API behind `kvsim check`, so a user's own test
//! suite is the CI gate.
//!
//! ```
//! # use kvsim::{Check, Model, Kv, KvError, SimRng, History,
//! #   Verdict, Scenario};
//! # struct Noop;
//! # impl Model for Noop {
//! #     type Op = (); type Ret = ();
//! #     async fn run<K: Kv>(&self, kv: &K, _c: usize, _op: &()) -> Result<(), KvError> {
//! #         kv.set(b"k", b"v", 0).await.map(|_| ())
//! #     }
//! #     fn op(&self, _c: usize, _i: usize, _r: &mut SimRng) {}
//! #     fn check(&self, _h: &History<(), ()>) -> Verdict { Verdict::Ok }
//! # }
//! let outcome = Check::new("noop/fixed", Noop, Scenario::new("smoke", 2, 3).runs(200)).run();
//! outcome.assert_ok(); // on failure: panics with the report and how to replay it here
//! ```

use crate::harness::campaign::{self, Budget, Job, Plan, Runs};
use crate::harness::records::{CheckReport, RunReport};
use crate::harness::shrink::ShrinkLimits;
use crate::harness::sweep::Clock;
use crate::harness::target::ModelTarget;
use crate::model::Model;
use crate::report;
use crate::scenario::Scenario;
use crate::sim::{SimConfig, TokenError};
use crate::verdict::Verdict;
use std::time::Duration;

/// A check of one model against one scenario, built step by step.
pub struct Check<M: Model> {
    target: ModelTarget<M>,
    scenario: Scenario,
    config: SimConfig,
    seed: u64,
    time_limit: Option<Duration>,
    /// With a time budget: the fewest runs for a verdict.
    min_runs: Option<u64>,
    /// The clock the time limit or budget is measured on.
    clock: Clock,
    shrink: Option<ShrinkLimits>,
}

// `Explorable` (a `Send + Sync` model): what `ModelTarget` needs to be a `Target`.
impl<M: crate::explore::Explorable> Check<M> {
    /// Checks `model`, named `name` (`MODEL/VARIANT`), under `scenario`.
    pub fn new(name: &str, model: M, scenario: Scenario) -> Check<M> {
        let config = SimConfig::from_scenario(&scenario);
        Check {
            target: ModelTarget::new(name, model),
            scenario,
            config,
            seed: 1,
            time_limit: None,
            min_runs: None,
            clock: Clock::Wall,
            shrink: Some(ShrinkLimits::default()),
        }
    }

    /// Sets the base seed (default 1): run *i* uses a seed derived from it.
    pub fn seed(mut self, seed: u64) -> Check<M> {
        self.seed = seed;
        self
    }

    /// Stops after this much wall-clock time with `Unknown` (never a pass).
    pub fn time_limit(mut self, limit: Duration) -> Check<M> {
        self.time_limit = Some(limit);
        self.min_runs = None;
        self
    }

    /// Spends `budget` of wall-clock time on runs instead of the scenario's run count: as
    /// many runs as fit (at most a hundred million), judged when there are at least
    /// `min_runs` of them; fewer is `Unknown`, never a pass, and a violation stays one.
    /// Minimizing a failure comes on top of the budget.
    pub fn time_budget(mut self, budget: Duration, min_runs: u64) -> Check<M> {
        self.time_limit = Some(budget);
        self.min_runs = Some(min_runs.max(1));
        self
    }

    /// Measures the time limit or budget on `clock` instead of the wall clock: with
    /// [`Clock::PerRun`], a test of a budget's logic gets the same runs and verdict on any
    /// machine, however loaded.
    pub fn clock(mut self, clock: Clock) -> Check<M> {
        self.clock = clock;
        self
    }

    /// Reports a failure as found, without minimizing it first (as `kvsim check
    /// --no-shrink`). By default a failing run is shrunk (fewer clients, operations and
    /// faults, the same property still violated) before it is reported.
    pub fn no_shrink(mut self) -> Check<M> {
        self.shrink = None;
        self
    }

    /// Adjusts the simulator's knobs beyond the scenario (step bounds, fault sizes, …).
    pub fn configure(mut self, f: impl FnOnce(&mut SimConfig)) -> Check<M> {
        f(&mut self.config);
        self
    }

    /// Runs the scenario's runs; stops at the first violation, which it minimizes
    /// (unless [`Check::no_shrink`]).
    pub fn run(&self) -> CheckOutcome {
        let runs = match self.min_runs {
            Some(min_runs) => Runs::Each {
                time: self.time_limit.expect("a time budget sets its time"),
                min_runs,
                cap: campaign::MAX_RUNS,
            },
            None => Runs::Scenario {
                time_limit: self.time_limit,
            },
        };
        let plan = Plan {
            jobs: vec![Job {
                target: (),
                scenario: self.scenario.clone(),
                config: self.config.clone(),
                expect_violation: false,
            }],
            budget: Budget {
                runs,
                clock: self.clock,
                ..Budget::runs(self.seed)
            },
            shrink: self.shrink.clone(),
        };
        let report = campaign::run(&plan, &|| &self.target, &|t, _| *t, &()).remove(0);
        CheckOutcome(report)
    }

    /// Replays a token this check printed (see [`CheckOutcome::assert_ok`]): the run with its
    /// full trace, as [`report::text`] shows it. The token must be one of this check's
    /// target (its `MODEL/VARIANT` name); the model is this check's, so a failure of a
    /// model `kvsim` does not know replays here, in the test that found it.
    ///
    /// ```
    /// # use kvsim::{Check, Model, Kv, KvError, SimRng, History,
    /// #   Verdict, Scenario};
    /// # struct Noop;
    /// # impl Model for Noop {
    /// #     type Op = (); type Ret = ();
    /// #     async fn run<K: Kv>(&self, kv: &K, _c: usize, _op: &()) -> Result<(), KvError> {
    /// #         kv.set(b"k", b"v", 0).await.map(|_| ())
    /// #     }
    /// #     fn op(&self, _c: usize, _i: usize, _r: &mut SimRng) {}
    /// #     fn check(&self, _h: &History<(), ()>) -> Verdict { Verdict::Ok }
    /// # }
    /// let check = Check::new("noop/fixed", Noop, Scenario::new("smoke", 2, 3));
    /// # let token = kvsim::sim::Token {
    /// #     target: "noop/fixed".into(), scenario: "smoke".into(),
    /// #     config: kvsim::sim::SimConfig::from_scenario(&Scenario::new("smoke", 2, 3)),
    /// #     seed: 7, choices: None,
    /// # }.encode();
    /// // `token`: the one a failing `check.run().assert_ok()` printed.
    /// let run = check.replay(&token).expect("a token this check printed");
    /// println!("{}", kvsim::report::text(&run));
    /// assert!(check.replay("other/model:smoke:AgE").is_err());
    /// ```
    pub fn replay(&self, token: &str) -> Result<RunReport, TokenError> {
        super::replay(&self.target, token)
    }
}

/// The text report of a gate's failing run: [`report::text`] with, in place of the CLI's
/// `kvsim replay TOKEN` (the CLI knows only its own models), how to replay it in the test.
fn gate_text(r: &RunReport) -> String {
    let text = report::text(r).replace(&format!("  replay: kvsim replay {}\n", r.token), "");
    format!(
        "{text}  replay in this test (kvsim::Check::replay, on the Check that failed):\n    \
         check.replay({:?})\n",
        r.token
    )
}

/// What a [`Check`] found.
#[derive(Clone, Debug)]
pub struct CheckOutcome(pub CheckReport);

impl CheckOutcome {
    /// The verdict over all runs.
    pub fn verdict(&self) -> &Verdict {
        &self.0.verdict
    }

    /// How often the runs hit each probe of the structure ([`crate::kv::Kv::probe`]).
    pub fn probes(&self) -> &std::collections::BTreeMap<String, u64> {
        &self.0.probes
    }

    /// The failing run, if any.
    pub fn failure(&self) -> Option<&RunReport> {
        self.0.failure.as_ref()
    }

    /// The text report of the failing run (as `kvsim check` prints it), ending with how to
    /// replay it in the test ([`Check::replay`]).
    pub fn report(&self) -> Option<String> {
        self.failure().map(gate_text)
    }

    /// Panics unless the verdict is `Ok`, printing the report (see [`CheckOutcome::report`]) and
    /// how to replay the failing run in the test ([`Check::replay`]).
    #[track_caller]
    pub fn assert_ok(&self) {
        match &self.0.verdict {
            Verdict::Ok => {}
            Verdict::Unknown(why) => panic!(
                "kvsim: {} under {}: unknown after {} runs: {why}",
                self.0.target, self.0.scenario, self.0.runs
            ),
            Verdict::Violation(_) => panic!(
                "kvsim: {} under {} failed after {} runs\n\n{}",
                self.0.target,
                self.0.scenario,
                self.0.runs,
                self.report().unwrap_or_default()
            ),
        }
    }

    /// Panics unless a violation was found; returns the failing run.
    #[track_caller]
    pub fn assert_violation(&self) -> &RunReport {
        match self.failure() {
            Some(f) if self.0.verdict.is_violation() => f,
            _ => panic!(
                "kvsim: {} under {}: expected a violation, found {} after {} runs",
                self.0.target, self.0.scenario, self.0.verdict, self.0.runs
            ),
        }
    }
}
