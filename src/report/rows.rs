//! A run's trace as rows for people: who each step belongs to, which operation it is part
//! of, and its text. Every renderer (text, JSON, HTML) reads the trace through this.

use crate::harness::records::RunReport;
use crate::sim::{ms, Delivery, Event, TraceStep};
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
            Delivery::Late(reply) => format!("{command} → {reply} ⧗ landed late (timed out)"),
        },
        Event::Mark { label } => format!("── {label} ──"),
        Event::Sleep { ms: d } => format!("sleep {}", ms(*d)),
        Event::Work { ms: d } => format!("work {}", ms(*d)),
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
pub fn op_label(o: &crate::harness::records::OpRecord) -> String {
    match (&o.ret, o.outcome.as_str()) {
        (Some(ret), _) => format!("{} → {}", o.op, ret),
        (None, "unknown") if o.ret_seq.is_some() => format!("{} → error (outcome unknown)", o.op),
        (None, "failed") => format!("{} → failed", o.op),
        (None, _) => format!("{} (never returned)", o.op),
    }
}

/// A line of the step table once repetition is folded.
#[derive(Clone, Debug)]
pub enum Line<'r> {
    /// A step, with its number (setup rows are not numbered and not included).
    Step {
        /// 1-based step number.
        n: usize,
        /// The row.
        row: Row<'r>,
    },
    /// The `period` steps just shown happen `times` more times, as steps `first..=last`.
    Repeat {
        /// Length of the repeated block.
        period: usize,
        /// How many more times it happens.
        times: usize,
        /// The first step folded away.
        first: usize,
        /// The last step folded away.
        last: usize,
    },
}

/// Longest block of steps looked for when folding repetition.
const MAX_PERIOD: usize = 16;

/// The rows of `r` after setup, with runs of an identical block of steps (same column,
/// same text; time may differ) shown once and then summarized: a spin loop of 2000 steps
/// reads as its loop body and one line.
pub fn folded(r: &RunReport) -> Vec<Line<'_>> {
    let all: Vec<Row<'_>> = rows(r)
        .into_iter()
        .filter(|x| x.who != Who::Setup)
        .collect();
    let same = |a: usize, b: usize| all[a].who == all[b].who && all[a].text == all[b].text;
    let mut out = Vec::new();
    let mut i = 0;
    while i < all.len() {
        // The block (period, count) starting at i that covers the most steps.
        let mut best: Option<(usize, usize)> = None;
        for p in 1..=MAX_PERIOD {
            if i + 2 * p > all.len() {
                break;
            }
            let mut count = 1;
            while i + (count + 1) * p <= all.len() && (0..p).all(|k| same(i + k, i + count * p + k))
            {
                count += 1;
            }
            if count >= 3 && (count - 1) * p >= 3 && best.is_none_or(|(bp, bc)| count * p > bp * bc)
            {
                best = Some((p, count));
            }
        }
        match best {
            Some((p, count)) => {
                for k in 0..p {
                    out.push(Line::Step {
                        n: i + k + 1,
                        row: all[i + k].clone(),
                    });
                }
                out.push(Line::Repeat {
                    period: p,
                    times: count - 1,
                    first: i + p + 1,
                    last: i + count * p,
                });
                i += count * p;
            }
            None => {
                out.push(Line::Step {
                    n: i + 1,
                    row: all[i].clone(),
                });
                i += 1;
            }
        }
    }
    out
}

impl Line<'_> {
    /// The summary of a folded block: `⟳ the 3 steps above happen 6,666 more times (steps
    /// 5–20,002)`.
    pub fn summary(&self) -> Option<String> {
        match self {
            Line::Step { .. } => None,
            Line::Repeat {
                period,
                times,
                first,
                last,
            } => Some(format!(
                "⟳ {} above {} {} more {} (steps {}–{})",
                if *period == 1 {
                    "the step".to_string()
                } else {
                    format!("the {period} steps")
                },
                if *period == 1 { "happens" } else { "happen" },
                group(*times as u64),
                if *times == 1 { "time" } else { "times" },
                group(*first as u64),
                group(*last as u64)
            )),
        }
    }
}

/// `20002` → `20,002`.
pub fn group(n: u64) -> String {
    let s = n.to_string();
    let mut out = String::new();
    for (i, ch) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(ch);
    }
    out
}

/// A run's faults in one phrase, as the text and HTML headers print them: `none`,
/// `evict,lose (at most 2 faults)`, or, when no fault event may happen (a shrunk run keeps
/// only what its failure needs), what the kinds still do without one: `lru (a memory limit
/// only: no fault injected)`.
pub fn faults_phrase(c: &crate::sim::SimConfig) -> String {
    if c.faults.is_empty() {
        return "none".to_string();
    }
    if c.fault_budget > 0 {
        let n = c.fault_budget;
        return format!(
            "{} (at most {n} fault{})",
            c.faults,
            if n == 1 { "" } else { "s" }
        );
    }
    let standing: Vec<&str> = c
        .faults
        .kinds()
        .iter()
        .filter_map(|k| k.standing())
        .collect();
    if standing.is_empty() {
        format!("{} (no fault injected)", c.faults)
    } else {
        format!(
            "{} ({} only: no fault injected)",
            c.faults,
            standing.join(" and ")
        )
    }
}

#[cfg(test)]
mod tests {
    use super::faults_phrase;
    use crate::explore::Scope;
    use crate::scenario::FaultSet;

    #[test]
    fn the_faults_phrase_says_what_acts_without_a_fault_event() {
        let mut c = Scope::new(2, 1).run_config();
        c.faults = FaultSet::none();
        assert_eq!(faults_phrase(&c), "none");
        c.faults = FaultSet::parse("evict,lose").expect("faults");
        c.fault_budget = 2;
        assert_eq!(faults_phrase(&c), "evict,lose (at most 2 faults)");
        c.fault_budget = 1;
        assert_eq!(faults_phrase(&c), "evict,lose (at most 1 fault)");
        c.fault_budget = 0;
        assert_eq!(faults_phrase(&c), "evict,lose (no fault injected)");
        c.faults = FaultSet::parse("lru,skew").expect("faults");
        assert_eq!(
            faults_phrase(&c),
            "lru,skew (a memory limit and skewed clocks only: no fault injected)"
        );
    }
}
