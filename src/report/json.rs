//! The report as JSON, for tools. [`JsonReport`] is the schema: every field is documented
//! there, and `format` names its version (`kvsim-report/1`). The structured parts (`config`,
//! each step's `event`, `verdict`) are kvsim's own types in their serde form; the `text`
//! fields are exactly what the text report prints.

use super::rows::{self, Who};
use crate::harness::records::{OpRecord, RunReport, ShrinkStats};
use crate::sim::{Event, SimConfig};
use crate::verdict::Verdict;
use serde::Serialize;

/// The version tag of the schema.
pub const FORMAT: &str = "kvsim-report/1";

/// One run as JSON.
#[derive(Clone, Debug, Serialize)]
pub struct JsonReport<'r> {
    /// Always [`FORMAT`].
    pub format: &'static str,
    /// `MODEL/VARIANT`.
    pub target: &'r str,
    /// The model (before the `/`).
    pub model: &'r str,
    /// The variant (after the `/`).
    pub variant: &'r str,
    /// The scenario's name.
    pub scenario: &'r str,
    /// The run's seed.
    pub seed: u64,
    /// Every knob of the run.
    pub config: &'r SimConfig,
    /// The fault kinds that were on (swarm draws a subset of `config.faults`).
    pub faults_on: Vec<&'static str>,
    /// `ok`, `violation` or `unknown`.
    pub verdict: &'static str,
    /// The property that failed (`linearizability`, `mutual exclusion`, …), for a violation.
    pub property: Option<&'r str>,
    /// Why, in words: the violation's reason or what left the verdict unknown.
    pub reason: Option<&'r str>,
    /// Indices into `ops` of the operations the verdict is about (the first: the one that
    /// cannot be placed, where that applies).
    pub offending_ops: Vec<usize>,
    /// The longest partial linearization found (indices into `ops`), for linearizability.
    pub partial_linearization: Vec<usize>,
    /// Scheduling steps (choices) the run took.
    pub steps: u32,
    /// How far the minimizer shrank the run, if it did.
    pub shrink: Option<&'r ShrinkStats>,
    /// How the structure stores its state, in its own words
    /// ([`crate::model::Model::representation`]); absent when it gives none.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub representation: Option<&'r str>,
    /// The operations, in invocation order.
    pub ops: Vec<JsonOp<'r>>,
    /// The trace, one entry per row of the text report's step table (setup included).
    pub trace: Vec<JsonStep<'r>>,
    /// The run's choices (client index, or client count + fault index).
    pub choices: &'r [u32],
    /// The replay token.
    pub token: &'r str,
    /// The command that replays the run.
    pub replay: String,
}

/// One operation.
#[derive(Clone, Debug, Serialize)]
pub struct JsonOp<'r> {
    /// Its index (what `offending_ops` and trace steps' `op` refer to).
    pub index: usize,
    /// The operation, its outcome and timing (call/return in event order and virtual ms).
    #[serde(flatten)]
    pub record: &'r OpRecord,
    /// `OP → RET` as the lane diagram prints it.
    pub text: String,
    /// Whether the verdict is about this operation.
    pub offending: bool,
}

/// One step of the trace.
#[derive(Clone, Debug, Serialize)]
pub struct JsonStep<'r> {
    /// Virtual time, milliseconds since the run started.
    pub time_ms: u64,
    /// The column: `setup`, `C0`, `C1`, … or `faults`.
    pub column: String,
    /// The client the step belongs to (a fault on a client names it here too).
    pub client: Option<usize>,
    /// The operation (index into `ops`) the step is part of.
    pub op: Option<usize>,
    /// The step as the text report prints it.
    pub text: String,
    /// The event itself.
    pub event: &'r Event,
}

impl<'r> JsonReport<'r> {
    /// The JSON form of `r`.
    pub fn new(r: &'r RunReport) -> JsonReport<'r> {
        let (model, variant) = r.target.split_once('/').unwrap_or((&r.target, ""));
        let bad = rows::offending(r);
        let (property, reason, partial) = match &r.verdict {
            Verdict::Ok => (None, None, Vec::new()),
            Verdict::Violation(v) => (
                Some(v.property.as_str()),
                Some(v.reason.as_str()),
                v.partial.clone(),
            ),
            Verdict::Unknown(why) => (None, Some(why.as_str()), Vec::new()),
        };
        JsonReport {
            format: FORMAT,
            target: &r.target,
            model,
            variant,
            scenario: &r.scenario,
            seed: r.seed,
            config: &r.config,
            faults_on: r.faults_on.iter().map(|k| k.name()).collect(),
            verdict: r.verdict.name(),
            property,
            reason,
            offending_ops: bad.clone(),
            partial_linearization: partial,
            steps: r.steps,
            shrink: r.shrink.as_ref(),
            representation: r.representation.as_deref(),
            ops: r
                .ops
                .iter()
                .enumerate()
                .map(|(index, record)| JsonOp {
                    index,
                    record,
                    text: rows::op_label(record),
                    offending: bad.contains(&index),
                })
                .collect(),
            trace: rows::rows(r)
                .into_iter()
                .map(|row| JsonStep {
                    time_ms: row.step.time_ms,
                    column: match row.who {
                        Who::Setup => "setup".to_string(),
                        Who::Client(c) => format!("C{c}"),
                        Who::World => "faults".to_string(),
                    },
                    client: row.step.client,
                    op: row.op,
                    text: row.text,
                    event: &row.step.event,
                })
                .collect(),
            choices: &r.choices,
            token: &r.token,
            replay: format!("kvsim replay {}", r.token),
        }
    }
}

/// Renders `r` as pretty-printed JSON (one object, see [`JsonReport`]).
pub fn json(r: &RunReport) -> String {
    serde_json::to_string_pretty(&JsonReport::new(r)).expect("a report always serializes")
}
