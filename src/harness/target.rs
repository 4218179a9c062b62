//! [`Target`]: a model behind a name, with its types erased, so that a registry can hold
//! many models and the CLI, reports and minimizer can drive any of them.

use crate::explore::{self, Explorable, Scope, SearchLimits, Servable};
use crate::harness::sweep::{self, RunBudget, Shard};
use crate::history::Outcome;
use crate::model::Model;
use crate::net::Stressable;
use crate::scenario::Scenario;
use crate::sim::{self, SimConfig, Token};
use crate::verdict::Verdict;
use std::sync::Arc;

pub use crate::harness::records::{CheckReport, ExploreReport, OpRecord, RunReport};

/// A model behind a name (`MODEL/VARIANT`), driven without knowing its types.
pub trait Target {
    /// `MODEL/VARIANT`.
    fn name(&self) -> &str;

    /// Runs once, with the trace on.
    fn run(
        &self,
        scenario: &str,
        config: &SimConfig,
        seed: u64,
        choices: Option<&[u32]>,
    ) -> RunReport;

    /// [`Target::run`] that also records the stores' contents step by step
    /// ([`RunReport::store`], for the viewer): the same run, trace and token.
    fn run_with_store(
        &self,
        scenario: &str,
        config: &SimConfig,
        seed: u64,
        choices: Option<&[u32]>,
    ) -> RunReport;

    /// The probes the structure's code declares ([`crate::model::Model::probes`]).
    fn probes(&self) -> &'static [&'static str];

    /// Only the verdict of one run (fast: no trace); the minimizer's probe.
    fn verdict(&self, config: &SimConfig, seed: u64, choices: Option<&[u32]>) -> Verdict;

    /// The verdict of the run from `seed` by the strategy's own walk, with the choices it
    /// made (replaying them gives the same run): the minimizer's probe of a seed, whose
    /// choices it keeps when the run fails.
    fn verdict_and_choices(&self, config: &SimConfig, seed: u64) -> (Verdict, Vec<u32>) {
        let r = self.run("", config, seed, None);
        (r.verdict, r.choices)
    }

    /// Runs a scenario up to its limits, grouping the violations it finds (see
    /// [`sweep::sweep`]); [`crate::harness::findings::check`] turns the groups into findings.
    fn sweep(&self, scenario: &Scenario, config: &SimConfig, limits: &RunBudget) -> CheckReport;

    /// Explores every path of `scope` with stateright ([`crate::explore`]); a
    /// counterexample is replayed by the simulator for its report and token, and a
    /// violation is reported with the replay's verdict (see [`replayed_verdict`]).
    fn explore(&self, scope: &Scope, limits: &SearchLimits) -> ExploreReport;

    /// The workloads `scope` covers ([`crate::explore::workloads`]): how many, and whether
    /// a choice among many values took only some of them.
    fn workloads(&self, scope: &Scope) -> Result<(u64, bool), String>;

    /// How the structure stores its state ([`Model::representation`]).
    fn representation(&self) -> Option<&'static str>;

    /// What one item of the store means to the structure ([`Model::describe_item`]).
    fn describe_item(&self, key: &[u8], value: &[u8]) -> Option<String>;

    /// The model itself, its types erased, for the engines beyond checking: `kvsim stress`
    /// ([`crate::net::Stressable`]) and stateright's Explorer ([`crate::explore::Servable`]).
    fn subject(&self) -> Arc<dyn Subject>;
}

/// A model as the engines beyond checking take it: stressed over TCP and served in the
/// Explorer. Every [`Explorable`] model is one.
pub trait Subject: Stressable + Servable {}

impl<M: Explorable> Subject for M {}

/// A [`Model`] with its name: the standard [`Target`].
pub struct ModelTarget<M> {
    name: String,
    model: Arc<M>,
}

impl<M: Model> ModelTarget<M> {
    /// Names `model` (`MODEL/VARIANT`).
    pub fn new(name: &str, model: M) -> ModelTarget<M> {
        ModelTarget {
            name: name.to_string(),
            model: Arc::new(model),
        }
    }

    /// The model.
    pub fn model(&self) -> &M {
        &self.model
    }

    fn report(
        &self,
        scenario: &str,
        config: &SimConfig,
        seed: u64,
        replayed: Option<&[u32]>,
        out: sim::RunOutput<M>,
    ) -> RunReport {
        let verdict = sim::judge(&*self.model, &out);
        let token = Token {
            target: self.name.clone(),
            scenario: scenario.to_string(),
            config: config.clone(),
            seed,
            choices: replayed.map(<[u32]>::to_vec),
        }
        .encode();
        let ops = out
            .history
            .ops
            .iter()
            .map(|o| OpRecord {
                client: o.client,
                op: format!("{:?}", o.op),
                outcome: match &o.outcome {
                    Outcome::Ok(_) => "ok",
                    Outcome::Failed => "failed",
                    Outcome::Unknown => "unknown",
                }
                .to_string(),
                ret: match &o.outcome {
                    Outcome::Ok(r) => Some(format!("{r:?}")),
                    _ => None,
                },
                call_seq: o.call,
                ret_seq: o.ret,
                call_ms: o.call_ms,
                ret_ms: o.ret_ms,
            })
            .collect();
        RunReport {
            target: self.name.clone(),
            scenario: scenario.to_string(),
            config: config.clone(),
            seed,
            token,
            verdict,
            ops,
            trace: out.trace,
            steps: out.steps,
            choices: out.choices,
            faults_on: out.faults_on,
            shrink: None,
            store: out.store,
            representation: self.model.representation().map(str::to_string),
        }
    }
}

/// `r` with its stores' contents step by step ([`RunReport::store`]), for the viewer:
/// `target` replays `r`'s choices, recording the stores; the rest of `r` (trace, token,
/// verdict) is kept as it is. When the replay's trace differs from `r`'s (a report from
/// another build), the store is left unrecorded (`None`) rather than shown wrong.
pub fn with_store(target: &dyn Target, r: &RunReport) -> RunReport {
    let again = target.run_with_store(&r.scenario, &r.config, r.seed, Some(&r.choices));
    let mut out = r.clone();
    out.store = (again.trace == r.trace).then_some(again.store).flatten();
    out
}

/// The verdict an exhaustive search reports, given the simulator's replay of its
/// counterexample: for a violation, the replay's verdict when it violates the same
/// property (its reason then carries the run's true times, which a search that leaves
/// times out of its state does not know: it would say "from 0 ms to 0 ms"); `Unknown`
/// when the replay does not reproduce the violation (a disagreement between the bridge
/// and the simulator, never to be reported as a finding). Other verdicts are kept.
pub fn replayed_verdict(explored: &Verdict, replay: Option<&RunReport>) -> Verdict {
    let Verdict::Violation(found) = explored else {
        return explored.clone();
    };
    match replay.map(|r| &r.verdict) {
        Some(Verdict::Violation(again)) if again.property == found.property => {
            Verdict::Violation(again.clone())
        }
        Some(other) => Verdict::Unknown(format!(
            "the search found a violation of {} ({}), but the simulator's replay of its \
             counterexample gives {other}",
            found.property, found.reason
        )),
        None => Verdict::Unknown(format!(
            "the search found a violation of {} ({}) without a counterexample to replay",
            found.property, found.reason
        )),
    }
}

impl<M: Explorable> Target for ModelTarget<M> {
    fn name(&self) -> &str {
        &self.name
    }

    fn run(
        &self,
        scenario: &str,
        config: &SimConfig,
        seed: u64,
        choices: Option<&[u32]>,
    ) -> RunReport {
        let mut loud = config.clone();
        loud.record_trace = true;
        let out = sim::run(&*self.model, &loud, seed, choices);
        self.report(scenario, config, seed, choices, out)
    }

    fn run_with_store(
        &self,
        scenario: &str,
        config: &SimConfig,
        seed: u64,
        choices: Option<&[u32]>,
    ) -> RunReport {
        let out = sim::run_with_store(&*self.model, config, seed, choices);
        self.report(scenario, config, seed, choices, out)
    }

    fn probes(&self) -> &'static [&'static str] {
        self.model.probes()
    }

    fn representation(&self) -> Option<&'static str> {
        self.model.representation()
    }

    fn describe_item(&self, key: &[u8], value: &[u8]) -> Option<String> {
        self.model.describe_item(key, value)
    }

    fn verdict(&self, config: &SimConfig, seed: u64, choices: Option<&[u32]>) -> Verdict {
        let mut quiet = config.clone();
        quiet.record_trace = false;
        let out = sim::run(&*self.model, &quiet, seed, choices);
        sim::judge(&*self.model, &out)
    }

    /// Without a trace (a run traced again for its choices cost 2 % of a check of
    /// `fifo/published`, whose failing runs are long).
    fn verdict_and_choices(&self, config: &SimConfig, seed: u64) -> (Verdict, Vec<u32>) {
        let mut quiet = config.clone();
        quiet.record_trace = false;
        let out = sim::run(&*self.model, &quiet, seed, None);
        (sim::judge(&*self.model, &out), out.choices)
    }

    fn sweep(&self, scenario: &Scenario, config: &SimConfig, limits: &RunBudget) -> CheckReport {
        let result = sweep::sweep(&*self.model, config, limits);
        let failure = result
            .failure
            .map(|(seed, out)| self.report(&scenario.name, config, seed, None, out));
        // A shard's runs are a part of the check's: `kvsim merge` judges the requirement
        // on the sum of the shards' counts.
        let required = (limits.shard == Shard::ALL)
            .then(|| scenario.unreached(self.model.probes(), &result.probes))
            .flatten();
        let verdict = match required {
            Some(name) if result.verdict.is_ok() => Verdict::Unknown(format!(
                "probe {name:?} was never hit in {} runs: the scenario requires it \
                 (Scenario::sometimes), and without it the runs did not test what it is for",
                result.runs
            )),
            _ => result.verdict,
        };
        CheckReport {
            target: self.name.clone(),
            scenario: scenario.name.clone(),
            verdict,
            probes: result.probes,
            runs: result.runs,
            violating_runs: result.violating_runs,
            millis: result.elapsed.as_millis() as u64,
            kv_calls: result.kv_calls,
            failure,
            groups: result.groups,
            findings: Vec::new(),
        }
    }

    fn explore(&self, scope: &Scope, limits: &SearchLimits) -> ExploreReport {
        let warning = explore::estimate(&*self.model, scope, limits).warning;
        let found = explore::explore(Arc::clone(&self.model), scope, limits);
        let counterexample = found
            .counterexample
            .as_ref()
            .map(|choices| self.run("explore", &found.config, found.seed, Some(choices)));
        let verdict = replayed_verdict(&found.verdict, counterexample.as_ref());
        ExploreReport {
            target: self.name.clone(),
            scope: scope.clone(),
            verdict,
            unique_states: found.unique_states,
            total_states: found.total_states,
            reduced: found.reduced,
            slept: found.slept,
            max_depth: found.max_depth,
            millis: found.elapsed.as_millis() as u64,
            states_per_s: found.states_per_s().round(),
            horizon_cut: found.horizon_cut,
            steps_cut: found.steps_cut,
            workloads: found.workloads,
            interchangeable: found.interchangeable.clone(),
            bound: found.bound.clone(),
            time_free: found.time_free,
            time_dependence: found.time_dependence.clone(),
            warning,
            token: counterexample.as_ref().map(|r| r.token.clone()),
            counterexample,
        }
    }

    fn workloads(&self, scope: &Scope) -> Result<(u64, bool), String> {
        explore::workloads(&*self.model, scope)
    }

    fn subject(&self) -> Arc<dyn Subject> {
        Arc::clone(&self.model) as Arc<dyn Subject>
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::verdict::Violation;

    fn violation(property: &str, reason: &str) -> Verdict {
        Verdict::Violation(Violation::new(property, reason.to_string(), vec![0, 1]))
    }

    fn replay(verdict: Verdict) -> RunReport {
        RunReport {
            target: "t/published".to_string(),
            scenario: "explore".to_string(),
            config: Scope::new(2, 1).run_config(),
            seed: 1,
            token: String::new(),
            verdict,
            ops: Vec::new(),
            trace: Vec::new(),
            steps: 0,
            choices: Vec::new(),
            faults_on: Vec::new(),
            shrink: None,
            store: None,
            representation: None,
        }
    }

    #[test]
    fn a_violation_is_reported_with_the_replays_times() {
        let explored = violation(
            "mutual exclusion",
            "C0 and C1 were both inside from 0 ms to 0 ms",
        );
        let again = violation(
            "mutual exclusion",
            "C0 and C1 were both inside from 6 ms to 8 ms",
        );
        assert_eq!(
            replayed_verdict(&explored, Some(&replay(again.clone()))),
            again
        );
    }

    #[test]
    fn a_replay_that_disagrees_makes_the_verdict_unknown() {
        let explored = violation("linearizability (queue)", "dequeue returned b");
        let v = replayed_verdict(&explored, Some(&replay(Verdict::Ok)));
        assert_eq!(
            v,
            Verdict::Unknown(
                "the search found a violation of linearizability (queue) (dequeue returned b), \
                 but the simulator's replay of its counterexample gives ok"
                    .to_string()
            )
        );
        let other = replay(violation("progress", "C0 livelocked"));
        assert!(matches!(
            replayed_verdict(&explored, Some(&other)),
            Verdict::Unknown(_)
        ));
        assert_eq!(
            replayed_verdict(&Verdict::Ok, None),
            Verdict::Ok,
            "other verdicts are kept"
        );
    }
}
