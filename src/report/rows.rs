//! A run's trace as rows for people: who each step belongs to, which operation it is part
//! of, and its text. Every renderer (text, JSON, HTML) reads the trace through this.

use crate::sim::{ms, Delivery, Event, TraceStep};
use crate::target::RunReport;
use crate::verdict::Verdict;

/// Whose column a row goes in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Who {
    /// The model's setup, before any client starts.
    Setup,
    /// A client.
    Client(usize),
    /// The world: faults and the store's own evictions.
    World,
}

/// One row of the step table.
#[derive(Clone, Debug)]
pub struct Row<'r> {
    /// The trace step.
    pub step: &'r TraceStep,
    /// Whose column it goes in.
    pub who: Who,
    /// The operation (index into [`RunReport::ops`]) it is part of, if any.
    pub op: Option<usize>,
    /// Its text.
    pub text: String,
}

/// The rows of `r`'s trace, in order.
pub fn rows(r: &RunReport) -> Vec<Row<'_>> {
    let mut current: Vec<Option<usize>> = vec![None; r.config.clients];
    let mut invoked = 0usize;
    let mut out = Vec::with_capacity(r.trace.len());
    for step in &r.trace {
        let who = match (step.client, &step.event) {
            (Some(c), Event::Fault(_)) => {
                let _ = c;
                Who::World
            }
            (Some(c), _) => Who::Client(c),
            (None, Event::Call { .. }) => Who::Setup,
            (None, _) => Who::World,
        };
        let mut op = None;
        if let Some(c) = step.client {
            if c >= current.len() {
                current.resize(c + 1, None);
            }
            if let Event::Invoke { .. } = step.event {
                current[c] = Some(invoked);
                invoked += 1;
            }
            op = current[c];
            if let Event::Return { .. } = step.event {
                current[c] = None;
            }
        }
        out.push(Row {
            step,
            who,
            op,
            text: describe(&step.event),
        });
    }
    out
}

/// The text of one event.
pub fn describe(event: &Event) -> String {
    match event {
        Event::Invoke { op } => format!("▶ {op}"),
        Event::Return { outcome } => format!("◀ {outcome}"),
        Event::Call {
            command, delivery, ..
        } => match delivery {
            Delivery::Replied(reply) => format!("{command} → {reply}"),
            Delivery::RequestLost => format!("{command} ✗ request lost (timeout)"),
            Delivery::ReplyLost(reply) => format!("{command} → {reply} ✗ reply lost (timeout)"),
            Delivery::ServerDown => format!("{command} ✗ server down"),
        },
        Event::Mark { label } => format!("── {label} ──"),
        Event::Sleep { ms: d } => format!("sleep {}", ms(*d)),
        Event::Fault(f) => f.to_string(),
        Event::Livelock { client } => format!("C{client} stopped: step bound hit (livelock)"),
    }
}

/// The operations the verdict names (indices into [`RunReport::ops`]).
pub fn offending(r: &RunReport) -> Vec<usize> {
    match &r.verdict {
        Verdict::Violation(v) => v.ops.clone(),
        _ => Vec::new(),
    }
}

/// The clients that appear in the run (invoked something or had a fault), ascending.
pub fn clients(r: &RunReport) -> Vec<usize> {
    let mut seen: Vec<usize> = r.ops.iter().map(|o| o.client).collect();
    seen.extend(r.trace.iter().filter_map(|s| s.client));
    seen.sort_unstable();
    seen.dedup();
    if seen.is_empty() {
        seen = (0..r.config.clients).collect();
    }
    seen
}

/// Virtual time for people: `2.001 s`.
pub fn secs(t: u64) -> String {
    format!("{}.{:03} s", t / 1000, t % 1000)
}

/// An operation with its outcome: `Enqueue("a") → Ok(())`, `… → error`, `… (never returned)`.
pub fn op_label(o: &crate::target::OpRecord) -> String {
    match (&o.ret, o.outcome.as_str()) {
        (Some(ret), _) => format!("{} → {}", o.op, ret),
        (None, "unknown") if o.ret_seq.is_some() => format!("{} → error (outcome unknown)", o.op),
        (None, "failed") => format!("{} → failed", o.op),
        (None, _) => format!("{} (never returned)", o.op),
    }
}
