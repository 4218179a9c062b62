//! The text report of one run: a header with the target, seed and every knob, a lane
//! diagram of operations per client, the step table with one column per client (faults in
//! their own column, virtual time on the left), the verdict's reason in words and the
//! replay command. It fits in 100 columns and reads without colour; [`text_styled`] adds
//! colour for terminals (see [`colour_wanted`]).

use super::rows::{self, Who};
use crate::harness::records::RunReport;
use crate::scenario::Strategy;
use crate::sim::SimConfig;
use crate::verdict::Verdict;
use anstyle::{AnsiColor, Style};
use std::fmt::Write;
use std::io::IsTerminal;

/// Width the report fits in.
pub const WIDTH: usize = 100;

/// The words that introduce a structure's own description of its state
/// ([`RunReport::representation`]) in the text and HTML reports.
pub const REPRESENTATION_LEAD: &str = "how the structure stores its state:";

/// Renders `r` as the text report, without colour.
pub fn text(r: &RunReport) -> String {
    text_styled(r, false)
}

/// Whether a report printed on stdout should be coloured: stdout is a terminal and
/// `NO_COLOR` is unset or empty.
pub fn colour_wanted() -> bool {
    let no_color = std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty());
    !no_color && std::io::stdout().is_terminal()
}

/// Styles, or none.
#[derive(Clone, Copy)]
struct Paint(bool);

impl Paint {
    fn with(self, style: Style, s: &str) -> String {
        if self.0 && !s.is_empty() {
            format!("{}{s}{}", style.render(), style.render_reset())
        } else {
            s.to_string()
        }
    }
    fn bad(self, s: &str) -> String {
        self.with(Style::new().fg_color(Some(AnsiColor::Red.into())).bold(), s)
    }
    fn fault(self, s: &str) -> String {
        self.with(Style::new().fg_color(Some(AnsiColor::Yellow.into())), s)
    }
    fn dim(self, s: &str) -> String {
        self.with(Style::new().dimmed(), s)
    }
    fn strong(self, s: &str) -> String {
        self.with(Style::new().bold(), s)
    }
}

/// Renders `r` as the text report; `colour` adds ANSI styles (the layout is the same).
pub fn text_styled(r: &RunReport, colour: bool) -> String {
    let p = Paint(colour);
    let mut out = String::new();
    let head = match &r.verdict {
        Verdict::Ok => "ok".to_string(),
        Verdict::Violation(v) => p.bad(&format!("violation: {}", v.property)),
        Verdict::Unknown(_) => p.bad("unknown"),
    };
    // The scenario goes on the first line when it fits, else it starts the second.
    let first = format!(
        "kvsim: {} in {} (scenario {})",
        head_plain(r),
        r.target,
        r.scenario
    );
    let scenario_first = first.chars().count() <= WIDTH;
    let _ = writeln!(
        out,
        "kvsim: {head} in {}{}",
        p.strong(&r.target),
        if scenario_first {
            format!(" (scenario {})", r.scenario)
        } else {
            String::new()
        }
    );
    for line in header(r, !scenario_first) {
        let _ = writeln!(out, "  {line}");
    }
    out.push('\n');
    let setup: Vec<String> = rows::rows(r)
        .into_iter()
        .filter(|row| row.who == Who::Setup)
        .map(|row| row.text)
        .collect();
    if !setup.is_empty() {
        let line = wrap(
            &format!("setup: {}", setup.join(" · ")),
            WIDTH - 2,
            "       ",
        );
        let _ = writeln!(out, "  {}\n", p.dim(&line));
    }
    out.push_str(&lanes(r, p));
    out.push('\n');
    out.push_str(&table(r, p));
    out.push('\n');
    match &r.verdict {
        Verdict::Ok => {
            let _ = writeln!(out, "  verdict: ok");
        }
        Verdict::Violation(v) => {
            let why = wrap(&format!("why: {}", v.reason), WIDTH - 2, "       ");
            let _ = writeln!(out, "  {}", p.bad(&why));
            if let Some(how) = &r.representation {
                let how = wrap(
                    &format!("{REPRESENTATION_LEAD} {how}"),
                    WIDTH - 2,
                    "       ",
                );
                let _ = writeln!(out, "  {}", p.dim(&how));
            }
        }
        Verdict::Unknown(why) => {
            let why = wrap(&format!("unknown: {why}"), WIDTH - 2, "           ");
            let _ = writeln!(out, "  {}", p.bad(&why));
        }
    }
    let _ = writeln!(out, "  replay: kvsim replay {}", r.token);
    out
}

/// The verdict as the first line names it, without colour.
fn head_plain(r: &RunReport) -> String {
    match &r.verdict {
        Verdict::Ok => "ok".to_string(),
        Verdict::Violation(v) => format!("violation: {}", v.property),
        Verdict::Unknown(_) => "unknown".to_string(),
    }
}

/// `1 client`, `2 clients`.
fn plural(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// The header lines after the first: seed, scenario knobs, run facts, other knobs.
fn header(r: &RunReport, with_scenario: bool) -> Vec<String> {
    let c = &r.config;
    let mut first = Vec::new();
    if with_scenario {
        first.push(format!("scenario {}", r.scenario));
    }
    first.extend([format!("seed {}", r.seed), ops_line(c)]);
    first.push(format!("faults {}", super::faults_phrase(c)));
    first.push(format!("strategy {}", c.strategy));
    if r.shrink.is_none() {
        first.push(plural(r.numbered_steps(), "step", "steps"));
    }
    let mut lines = flow(first);
    if let Some(s) = &r.shrink {
        lines.push(s.describe(r));
    }
    let mut more = Vec::new();
    if c.strategy == Strategy::Swarm {
        let on: Vec<&str> = r.faults_on.iter().map(|k| k.name()).collect();
        more.push(format!(
            "swarm drew faults {}",
            if on.is_empty() {
                "none".to_string()
            } else {
                on.join(",")
            }
        ));
    }
    more.extend(knobs(c));
    lines.extend(flow(more));
    lines
}

/// Joins items with ` · ` into lines that fit the width.
fn flow(items: Vec<String>) -> Vec<String> {
    let mut lines = Vec::new();
    let mut line = String::new();
    for k in items {
        if !line.is_empty() && line.chars().count() + 3 + k.chars().count() > WIDTH - 2 {
            lines.push(std::mem::take(&mut line));
        }
        if !line.is_empty() {
            line.push_str(" · ");
        }
        line.push_str(&k);
    }
    if !line.is_empty() {
        lines.push(line);
    }
    lines
}

/// `2 clients × 1 op`, or with the operations each client runs when they differ.
fn ops_line(c: &SimConfig) -> String {
    let counts: Vec<usize> = (0..c.clients).map(|i| c.ops_of(i).len()).collect();
    if counts.iter().all(|&n| n == c.ops) {
        return format!(
            "{} × {}",
            plural(c.clients, "client", "clients"),
            plural(c.ops, "op", "ops")
        );
    }
    let per: Vec<String> = (0..c.clients)
        .map(|i| {
            let l = c.ops_of(i);
            if l.is_empty() {
                format!("C{i} none")
            } else {
                let idx: Vec<String> = l.iter().map(|x| format!("#{x}")).collect();
                format!("C{i} {}", idx.join(","))
            }
        })
        .collect();
    format!(
        "{} × ops of {} ({})",
        plural(c.clients, "client", "clients"),
        c.ops,
        per.join(" ")
    )
}

/// The knobs besides clients, operations, faults and strategy: those that shape this run
/// (the knob table's header lines, [`crate::sim::knobs::header`]).
pub fn knobs(c: &SimConfig) -> Vec<String> {
    crate::sim::knobs::header(c)
}

/// Cuts `s` to `width` characters, ending with `…` when cut.
fn clip(s: &str, width: usize) -> String {
    if s.chars().count() <= width {
        s.to_string()
    } else {
        let mut t: String = s.chars().take(width.saturating_sub(1)).collect();
        t.push('…');
        t
    }
}

/// Wraps `s` at spaces to `width`, indenting continuation lines with `indent`.
fn wrap(s: &str, width: usize, indent: &str) -> String {
    let mut out = String::new();
    let mut line = String::new();
    for word in s.split(' ') {
        let len = line.chars().count();
        if len > 0 && len + 1 + word.chars().count() > width {
            out.push_str(&line);
            out.push('\n');
            out.push_str("  ");
            line = indent.to_string();
        } else if len > 0 {
            line.push(' ');
        }
        line.push_str(word);
    }
    out.push_str(&line);
    out
}

/// The lane diagram: one line per client, each operation from invocation to completion,
/// laid out in event order; the operations the verdict names are drawn with `=`.
fn lanes(r: &RunReport, p: Paint) -> String {
    let bad = rows::offending(r);
    let mut points: Vec<u64> = Vec::new();
    for o in &r.ops {
        points.push(o.call_seq);
        if let Some(s) = o.ret_seq {
            points.push(s);
        }
    }
    points.sort_unstable();
    points.dedup();
    let at = |seq: u64| points.binary_search(&seq).unwrap_or(0);
    // Space the points so that each operation's label fits inside its bar.
    let n = points.len();
    let mut x = vec![0usize; n + 1];
    let labels: Vec<String> = r
        .ops
        .iter()
        .map(|o| format!(" {} ", rows::op_label(o)))
        .collect();
    for k in 1..=n {
        let mut want = x[k - 1] + 2;
        for (o, label) in r.ops.iter().zip(&labels) {
            let end = o.ret_seq.map_or(n, at);
            if end == k {
                want = want.max(x[at(o.call_seq)] + label.chars().count() + 4);
            }
        }
        x[k] = want;
    }
    // Then squeeze into the width if needed.
    let usable = WIDTH - 8;
    if x[n] > usable {
        let scale = usable as f64 / x[n] as f64;
        for k in 1..=n {
            x[k] = ((x[k] as f64 * scale) as usize).max(x[k - 1] + 2);
        }
    }
    let end = x[n];
    let mut out = String::new();
    for c in rows::clients(r) {
        let mut lane: Vec<(char, bool)> = vec![(' ', false); end + 2];
        for (i, o) in r.ops.iter().enumerate().filter(|(_, o)| o.client == c) {
            let hot = bad.contains(&i);
            let a = x[at(o.call_seq)];
            let (b, open) = match o.ret_seq {
                Some(s) => (x[at(s)], false),
                None => (end, true),
            };
            let b = b.max(a + 2);
            let fill = if hot { '=' } else { '-' };
            for cell in lane.iter_mut().take(b).skip(a) {
                *cell = (fill, hot);
            }
            lane[a] = ('|', hot);
            lane[b] = (if open { '?' } else { '|' }, hot);
            let label = clip(&labels[i], b.saturating_sub(a + 3));
            for (j, ch) in label.chars().enumerate() {
                lane[a + 2 + j] = (ch, hot);
            }
        }
        // Very long runs cannot fit: the lane is cut at the width.
        lane.truncate(WIDTH - 7);
        while lane.last().is_some_and(|(ch, _)| *ch == ' ') {
            lane.pop();
        }
        let mut line = String::new();
        let mut run = String::new();
        let mut run_hot = false;
        for (ch, hot) in lane {
            if hot != run_hot && !run.is_empty() {
                line.push_str(&if run_hot { p.bad(&run) } else { run.clone() });
                run.clear();
            }
            run_hot = hot;
            run.push(ch);
        }
        line.push_str(&if run_hot { p.bad(&run) } else { run });
        let _ = writeln!(out, "  C{c:<3} {line}");
    }
    let mut legend = Vec::new();
    if !bad.is_empty() {
        legend.push("=== the operations the verdict is about");
    }
    if r.ops.iter().any(|o| o.ret_seq.is_none()) {
        legend.push("? never returned");
    }
    if !legend.is_empty() {
        let _ = writeln!(out, "  {}", p.dim(&format!("({})", legend.join(" · "))));
    }
    out
}

/// The step table: one column per client, faults in their own column. A row has one
/// event, so a long cell runs on into the empty columns to its right; faults that do not
/// fit move left into the (empty) client columns.
fn table(r: &RunReport, p: Paint) -> String {
    let clients = rows::clients(r);
    let bad = rows::offending(r);
    let lead = 2 + 5 + 1 + 9 + 1;
    let fault_w = 24;
    let col = ((WIDTH - lead - fault_w) / clients.len().max(1)).clamp(10, 30);
    let fault_at = lead + col * clients.len();
    let mut out = String::new();
    let mut head = format!("  {:>5} {:<9} ", "step", "time");
    for c in &clients {
        head.push_str(&format!("{:<col$}", format!("C{c}")));
    }
    head.push_str("faults");
    let _ = writeln!(out, "{}", p.dim(&head));
    for line in rows::folded(r) {
        let (n, row) = match line {
            rows::Line::Step { n, row } => (n, row),
            repeat => {
                let text = repeat.summary().unwrap_or_default();
                let _ = writeln!(out, "{}{}", " ".repeat(lead), p.dim(&text));
                continue;
            }
        };
        let start = match row.who {
            Who::Setup => continue,
            Who::Client(c) => lead + col * clients.iter().position(|&x| x == c).unwrap_or(0),
            Who::World => {
                let len = row.text.chars().count();
                fault_at.min(WIDTH.saturating_sub(len)).max(lead)
            }
        };
        let hot = row.op.is_some_and(|o| bad.contains(&o));
        let mark = if hot { '»' } else { ' ' };
        let prefix = format!(" {mark}{n:>5} {:<9} ", rows::secs(row.step.time_ms));
        let cell = clip(&row.text, WIDTH - start);
        let pad = " ".repeat(start - lead);
        let cell = match row.who {
            Who::World => p.fault(&cell),
            _ if hot => p.bad(&cell),
            _ => cell,
        };
        let prefix = if hot { p.bad(&prefix) } else { prefix };
        let _ = writeln!(out, "{prefix}{pad}{cell}");
    }
    if !bad.is_empty() {
        let _ = writeln!(
            out,
            "  {}",
            p.dim("(» steps of the operations the verdict is about)")
        );
    }
    out
}
