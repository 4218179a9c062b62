//! Tests shared by the models whose histories go to files (`kvsim stress
//! --history-out`) and are read back (`kvsim check-history`).

use crate::expect::Expect;
use kvsim::{
    pair_events, parse_events, run_seed, simulate, Format, History, Model, Operation, Outcome,
    RawEnd, RawOp, Scenario, SimConfig, Value, Verdict,
};

/// Ten simulated runs of each model in each scenario: each history is written in the
/// format of `spec`, read back with `op_from_raw`, and checked to hold the same
/// operations, outcomes and times (not marks: a file has none). `judge` gets the model,
/// the history as run and the history as read, and returns the verdict on the history as
/// run: some runs must break the property.
pub fn read_back_runs<M: Model>(
    models: impl IntoIterator<Item = M>,
    scenarios: &[(Scenario, Expect)],
    spec: &str,
    op_from_raw: impl Fn(&RawOp) -> Result<(M::Op, Outcome<M::Ret>), String>,
    judge: impl Fn(&M, History<M::Op, M::Ret>, History<M::Op, M::Ret>) -> Verdict,
) {
    let mut violations = 0;
    for model in models {
        let format = model.history_format().expect("a history format");
        assert_eq!(format.spec, spec);
        for (scenario, _) in scenarios {
            let cfg = SimConfig::from_scenario(scenario);
            for i in 0..10 {
                let h = simulate(&model, &cfg, run_seed(1, i), None).history;
                let mut text = Vec::new();
                h.write_jsonl(&mut text, format.describe).expect("written");
                let text = String::from_utf8(text).expect("utf-8");
                let raws = pair_events(&parse_events(&text, Format::Jsonl).expect("parsed"))
                    .expect("paired");
                let read = History {
                    ops: raws
                        .iter()
                        .map(|raw| {
                            let (op, outcome) = op_from_raw(raw).expect("read");
                            Operation {
                                client: raw.process as usize,
                                op,
                                call: raw.call,
                                ret: raw.ret,
                                call_ms: raw.call_ms.expect("a time"),
                                ret_ms: raw.ret_ms,
                                outcome,
                                marks: Vec::new(),
                            }
                        })
                        .collect(),
                };
                assert_eq!(read.ops.len(), h.ops.len());
                for (a, b) in h.ops.iter().zip(&read.ops) {
                    assert_eq!((&a.op, &a.outcome), (&b.op, &b.outcome));
                    assert_eq!(
                        (a.call_ms, a.ret.map(|_| a.ret_ms)),
                        (b.call_ms, b.ret.map(|_| b.ret_ms))
                    );
                }
                violations += usize::from(judge(&model, h, read).is_violation());
            }
        }
    }
    assert!(violations > 0, "some runs break the property");
}

/// An operation as a file gives it: process 0 called `f` with `args` on line 1 and it
/// returned `result` on line 2.
pub fn raw_ok(f: &str, args: Value, result: Value) -> RawOp {
    RawOp {
        process: 0,
        f: f.to_string(),
        key: None,
        args,
        result,
        end: RawEnd::Ok,
        call: 0,
        ret: Some(1),
        call_ms: Some(0),
        ret_ms: Some(1),
        line: 1,
        ret_line: Some(2),
    }
}
