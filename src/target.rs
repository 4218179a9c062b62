//! [`Target`]: a model behind a name, with its types erased, so that a registry can hold
//! many models and the CLI, reports and minimizer can drive any of them.

use crate::history::Outcome;
use crate::model::Model;
use crate::scenario::{FaultKind, Scenario};
use crate::sim::{self, CheckLimits, SimConfig, Token, TraceStep};
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
    pub shrink: Option<crate::shrink::ShrinkStats>,
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
    /// Runs done (up to the first violation).
    pub runs: u64,
    /// Wall-clock milliseconds.
    pub millis: u64,
    /// KV calls delivered over all runs.
    pub kv_calls: u64,
    /// The failing run, if any.
    pub failure: Option<RunReport>,
}

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

    /// Only the verdict of one run (fast: no trace); the minimizer's probe.
    fn verdict(&self, config: &SimConfig, seed: u64, choices: Option<&[u32]>) -> Verdict;

    /// Runs a scenario up to its limits and stops at the first violation.
    fn check(&self, scenario: &Scenario, config: &SimConfig, limits: &CheckLimits) -> CheckReport;
}

/// A [`Model`] with its name: the standard [`Target`].
pub struct ModelTarget<M> {
    name: String,
    model: M,
}

impl<M: Model> ModelTarget<M> {
    /// Names `model` (`MODEL/VARIANT`).
    pub fn new(name: &str, model: M) -> ModelTarget<M> {
        ModelTarget {
            name: name.to_string(),
            model,
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
        let verdict = sim::judge(&self.model, &out);
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
        }
    }
}

impl<M: Model> Target for ModelTarget<M> {
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
        let out = sim::run(&self.model, &loud, seed, choices);
        self.report(scenario, config, seed, choices, out)
    }

    fn verdict(&self, config: &SimConfig, seed: u64, choices: Option<&[u32]>) -> Verdict {
        let mut quiet = config.clone();
        quiet.record_trace = false;
        let out = sim::run(&self.model, &quiet, seed, choices);
        sim::judge(&self.model, &out)
    }

    fn check(&self, scenario: &Scenario, config: &SimConfig, limits: &CheckLimits) -> CheckReport {
        let result = sim::check(&self.model, config, limits);
        let failure = result
            .failure
            .map(|(seed, out)| self.report(&scenario.name, config, seed, None, out));
        CheckReport {
            target: self.name.clone(),
            scenario: scenario.name.clone(),
            verdict: result.verdict,
            runs: result.runs,
            millis: result.elapsed.as_millis() as u64,
            kv_calls: result.kv_calls,
            failure,
        }
    }
}
