//! The text report of one run: a header with the seed and every knob, the verdict in
//! words, a lane diagram of operations per client, the step table with one column per
//! client (faults in their own column), and the replay command. It reads well in 100
//! columns and without colour.

use crate::sim::{ms, Delivery, Event, TraceStep};
use crate::target::RunReport;
use crate::verdict::Verdict;
use std::fmt::Write;

/// Width the report aims to fit.
const WIDTH: usize = 100;

/// Renders `r` as the text report.
pub fn text(r: &RunReport) -> String {
    let mut out = String::new();
    let verdict = match &r.verdict {
        Verdict::Ok => "ok".to_string(),
        Verdict::Violation(v) => format!("violation: {}", v.property),
        Verdict::Unknown(_) => "unknown".to_string(),
    };
    let _ = writeln!(
        out,
        "kvsim: {verdict} in {} (scenario {})",
        r.target, r.scenario
    );
    let _ = writeln!(
        out,
        "  seed {} · {} · {} steps",
        r.seed,
        r.config.describe(),
        r.steps
    );
    if r.config.strategy == crate::scenario::Strategy::Swarm {
        let on: Vec<&str> = r.faults_on.iter().map(|k| k.name()).collect();
        let _ = writeln!(
            out,
            "  swarm drew faults: {}",
            if on.is_empty() {
                "none".to_string()
            } else {
                on.join(",")
            }
        );
    }
    out.push('\n');
    out.push_str(&lanes(r));
    out.push('\n');
    out.push_str(&steps(r));
    out.push('\n');
    match &r.verdict {
        Verdict::Ok => {
            let _ = writeln!(out, "  verdict: ok");
        }
        Verdict::Violation(v) => {
            let _ = writeln!(out, "  why: {}", v.reason);
        }
        Verdict::Unknown(why) => {
            let _ = writeln!(out, "  unknown: {why}");
        }
    }
    let _ = writeln!(out, "  replay: kvsim replay {}", r.token);
    out
}

fn clip(s: &str, width: usize) -> String {
    if s.chars().count() <= width {
        s.to_string()
    } else {
        let mut t: String = s.chars().take(width.saturating_sub(1)).collect();
        t.push('…');
        t
    }
}

/// The lane diagram: one line per client, each operation from invocation to completion.
fn lanes(r: &RunReport) -> String {
    let clients = r.config.clients;
    let mut points: Vec<u64> = Vec::new();
    for o in &r.ops {
        points.push(o.call_seq);
        if let Some(s) = o.ret_seq {
            points.push(s);
        }
    }
    points.sort_unstable();
    points.dedup();
    let usable = WIDTH - 6;
    let step = (usable / points.len().max(1)).clamp(1, 12);
    let pos = |seq: u64| points.binary_search(&seq).unwrap_or(0) * step;
    let end = points.len() * step;
    let mut out = String::new();
    for c in 0..clients {
        let mut lane: Vec<char> = vec![' '; end + 2];
        for o in r.ops.iter().filter(|o| o.client == c) {
            let a = pos(o.call_seq);
            let (b, open) = match o.ret_seq {
                Some(s) => (pos(s), false),
                None => (end, true),
            };
            let b = b.max(a + 1);
            for x in lane.iter_mut().take(b).skip(a) {
                *x = '-';
            }
            lane[a] = '|';
            lane[b] = if open { '?' } else { '|' };
            let label = match (&o.ret, o.outcome.as_str()) {
                (Some(ret), _) => format!(" {} → {} ", o.op, ret),
                (None, "unknown") if o.ret_seq.is_some() => format!(" {} → error ", o.op),
                (None, _) => format!(" {} (never returned) ", o.op),
            };
            let room = b.saturating_sub(a + 3);
            let label = clip(&label, room);
            for (i, ch) in label.chars().enumerate() {
                lane[a + 3 + i] = ch;
            }
        }
        let line: String = lane.into_iter().collect();
        let _ = writeln!(out, "  C{c:<2} {}", line.trim_end());
    }
    out
}

/// The step table: one column per client, faults in their own column.
fn steps(r: &RunReport) -> String {
    let clients = r.config.clients.max(1);
    let fixed = 6 + 10 + 2;
    let fault_w = 22;
    let col = ((WIDTH - fixed - fault_w) / clients).clamp(18, 44);
    let mut out = String::new();
    let _ = write!(out, "  {:>4}  {:<9}", "step", "time");
    for c in 0..clients {
        let _ = write!(out, " {:<col$}", format!("C{c}"));
    }
    let _ = writeln!(out, " faults");
    for (i, s) in r.trace.iter().enumerate() {
        let (who, cell) = describe(s);
        let _ = write!(out, "  {:>4}  {:<9}", i + 1, secs(s.time_ms));
        for c in 0..clients {
            let text = if who == Some(c) {
                clip(&cell, col)
            } else {
                String::new()
            };
            let _ = write!(out, " {text:<col$}");
        }
        if who.is_none() {
            let _ = write!(out, " {cell}");
        }
        let line = out.trim_end().len();
        out.truncate(line);
        out.push('\n');
    }
    out
}

fn secs(t: u64) -> String {
    format!("{}.{:03} s", t / 1000, t % 1000)
}

/// Which column a step goes in (`None`: the faults column) and its text.
fn describe(s: &TraceStep) -> (Option<usize>, String) {
    match &s.event {
        Event::Invoke { op } => (s.client, format!("▶ {op}")),
        Event::Return { outcome } => (s.client, format!("◀ {outcome}")),
        Event::Call {
            command, delivery, ..
        } => {
            let text = match delivery {
                Delivery::Replied(reply) => format!("{command} → {reply}"),
                Delivery::RequestLost => format!("{command} → (request lost: timeout)"),
                Delivery::ReplyLost(reply) => {
                    format!("{command} → {reply} (reply lost: timeout)")
                }
                Delivery::ServerDown => format!("{command} → (server down)"),
            };
            (s.client, text)
        }
        Event::Mark { label } => (s.client, format!("── {label} ──")),
        Event::Sleep { ms: d } => (s.client, format!("sleep {}", ms(*d))),
        Event::Fault(f) => (None, f.to_string()),
        Event::Livelock { client } => (None, format!("C{client} livelock: step bound hit")),
    }
}
