//! `kvsim check-history --html FILE`: a history file's verdict in the step-through viewer
//! ([`kvsim::report::viewer_page`]). A history has no store: the store lane says so; each
//! process is a client lane of invocations and completions (one step per event, in the
//! file's order), and the operations the verdict names are highlighted.

use kvsim::check::files::FileVerdict;
use kvsim::formats::{pair, EventType, HistoryEvent, RawOp};
use kvsim::harness::records::{OpRecord, RunReport};
use kvsim::sim::{Event, SimConfig, TraceStep};
use kvsim::{Verdict, Violation};

/// The most events a history shown in the viewer may have (the page stays a few MB).
pub const MAX_EVENTS: usize = 20_000;

/// What the store lane says for a history.
pub const NO_STORE: &str = "a history has no store: only what each client invoked and saw";

/// The viewer's page for `events` (one file's) judged `verdict` against `spec`, checked
/// for `property`; an error (for people) when the history is too long for a page or its
/// events do not pair.
pub fn page(
    property: &str,
    spec: &str,
    file: &str,
    events: &[HistoryEvent],
    verdict: &FileVerdict,
) -> Result<String, String> {
    if events.len() > MAX_EVENTS {
        return Err(format!(
            "expected a history of at most {MAX_EVENTS} events for --html, found {}",
            events.len()
        ));
    }
    let ops = pair(events).map_err(|e| e.in_file(file).to_string())?;
    let report = report(property, spec, file, events, &ops, verdict);
    Ok(kvsim::report::viewer_page(&report, None, Some(NO_STORE)))
}

/// The history as a run report: one client per process (in order of first appearance).
fn report(
    property: &str,
    spec: &str,
    file: &str,
    events: &[HistoryEvent],
    ops: &[RawOp],
    verdict: &FileVerdict,
) -> RunReport {
    let mut processes: Vec<u64> = Vec::new();
    for e in events {
        if !processes.contains(&e.process) {
            processes.push(e.process);
        }
    }
    let client = |p: u64| processes.iter().position(|&x| x == p).unwrap_or(0);
    let start = events.iter().filter_map(|e| e.time_ms).min().unwrap_or(0);
    let rel = |t: Option<u64>| t.map_or(0, |t| t - start);
    let trace = events
        .iter()
        .map(|e| TraceStep {
            time_ms: rel(e.time_ms),
            client: Some(client(e.process)),
            event: match e.kind {
                EventType::Invoke => Event::Invoke {
                    op: describe(e, &e.value),
                },
                kind => Event::Return {
                    outcome: format!("{} {} (line {})", word(kind), e.value, e.line),
                },
            },
        })
        .collect();
    let records = ops
        .iter()
        .map(|o| OpRecord {
            client: client(o.process),
            op: format!(
                "process {}: {} {} (line {})",
                o.process, o.f, o.args, o.line
            ),
            outcome: match o.end {
                kvsim::formats::End::Ok => "ok",
                kvsim::formats::End::Fail => "failed",
                _ => "unknown",
            }
            .to_string(),
            ret: matches!(o.end, kvsim::formats::End::Ok).then(|| o.result.to_string()),
            call_seq: o.call,
            ret_seq: o.ret,
            call_ms: rel(o.call_ms),
            ret_ms: o.ret_ms.map(|t| t - start),
        })
        .collect();
    let reason = verdict.detail.clone().unwrap_or_default();
    let verdict = match verdict.verdict {
        "violation" => Verdict::Violation(Violation::new(
            property,
            reason,
            ops.iter()
                .enumerate()
                .filter(|(_, o)| Some(o.line) == verdict.op_line)
                .map(|(i, _)| i)
                .collect(),
        )),
        "ok" => Verdict::Ok,
        _ => Verdict::Unknown(reason),
    };
    RunReport {
        target: file.to_string(),
        scenario: format!("check-history --spec {spec}"),
        config: SimConfig::new(processes.len().max(1), 1),
        seed: 0,
        token: String::new(),
        verdict,
        ops: records,
        trace,
        steps: events.len() as u32,
        choices: Vec::new(),
        faults_on: Vec::new(),
        shrink: None,
        store: None,
        representation: None,
    }
}

/// `process 1: read nil` with its key when it has one.
fn describe(e: &HistoryEvent, value: &kvsim::formats::Value) -> String {
    match &e.key {
        Some(k) => format!(
            "process {}: {} {k} {value} (line {})",
            e.process, e.f, e.line
        ),
        None => format!("process {}: {} {value} (line {})", e.process, e.f, e.line),
    }
}

fn word(kind: EventType) -> &'static str {
    match kind {
        EventType::Invoke => "invoke",
        EventType::Ok => "ok",
        EventType::Fail => "fail",
        EventType::Info => "info (unknown)",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_history_shows_its_processes_and_the_violating_operation() {
        let text = "{\"process\": 0, \"type\": \"invoke\", \"f\": \"write\", \"value\": \"</script>\"}\n\
                    {\"process\": 0, \"type\": \"ok\", \"f\": \"write\", \"value\": \"</script>\"}\n\
                    {\"process\": 1, \"type\": \"invoke\", \"f\": \"read\"}\n\
                    {\"process\": 1, \"type\": \"ok\", \"f\": \"read\", \"value\": null}\n";
        let events = kvsim::formats::parse_events(text, kvsim::formats::Format::Jsonl).unwrap();
        let verdict = FileVerdict {
            verdict: "violation",
            millis: 0.0,
            detail: Some("read returned nothing".into()),
            op_line: Some(3),
            partial_lines: vec![1],
        };
        let ops = pair(&events).unwrap();
        let r = report(
            "linearizability (register)",
            "register",
            "h.jsonl",
            &events,
            &ops,
            &verdict,
        );
        assert_eq!(r.trace.len(), 4);
        assert_eq!(r.trace[2].client, Some(1));
        let Verdict::Violation(v) = &r.verdict else {
            panic!("a violation")
        };
        assert_eq!(v.ops, [1]);
        assert_eq!(v.property, "linearizability (register)");
        let html = page("linearizability", "register", "h.jsonl", &events, &verdict).unwrap();
        assert_eq!(html.matches("</script>").count(), 3);
        let d: serde_json::Value =
            serde_json::from_str(&kvsim::report::viewer_data(&r, None, Some(NO_STORE))).unwrap();
        assert_eq!(d["no_store"], NO_STORE);
        assert_eq!(d["ops"][1]["hot"], true);
        assert_eq!(d["ops"][0]["hot"], false);
        assert_eq!(d["clients"], serde_json::json!([0, 1]));
        let long = vec![events[0].clone(); MAX_EVENTS + 1];
        assert_eq!(
            page("p", "register", "h", &long, &verdict).unwrap_err(),
            format!("expected a history of at most {MAX_EVENTS} events for --html, found 20001")
        );
    }
}
