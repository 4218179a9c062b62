//! The report as one self-contained HTML page: the header, the verdict and its reason, an
//! SVG sequence diagram (a lane per client and one per server, arrows for commands and
//! replies, faults marked, the operations the verdict is about in red), the operations,
//! the step table and the replay command. Inline CSS, no script, no network.

use super::rows::{self, Who};
use super::text::knobs;
use crate::records::RunReport;
use crate::sim::{Delivery, Event, Fault};
use crate::verdict::Verdict;
use std::fmt::Write;

/// Escapes text for HTML and SVG.
pub fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for ch in s.chars() {
        match ch {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

const STYLE: &str = "
body{font:14px/1.45 system-ui,-apple-system,'Segoe UI',sans-serif;margin:24px 32px;color:#1d2330;background:#fff}
h1{font-size:20px;margin:0 0 4px}h1 .bad{color:#b3261e}h1 .ok{color:#1e7b34}h1 .target{font-weight:600}
h2{font-size:15px;margin:26px 0 8px;color:#3b4252;border-bottom:1px solid #e3e6ec;padding-bottom:3px}
.why{font-size:15px;background:#fdecea;border-left:4px solid #b3261e;padding:8px 12px;margin:12px 0}
.whyok{background:#e8f5ea;border-left-color:#1e7b34}
.knobs{color:#4c566a;margin:2px 0}.knobs b{color:#1d2330;font-weight:600}
code,pre,.mono{font-family:ui-monospace,'SFMono-Regular',Menlo,Consolas,monospace;font-size:12.5px}
pre{background:#f4f5f8;padding:8px 12px;overflow-x:auto;border-radius:4px}
table{border-collapse:collapse}td,th{padding:2px 10px 2px 0;text-align:left;vertical-align:top;white-space:nowrap}
th{color:#4c566a;font-weight:600;border-bottom:1px solid #d8dce4}
tr.hot td{color:#b3261e}td.fault{color:#b35c00}td.num{text-align:right;color:#6b7385}
.legend{color:#6b7385;font-size:12.5px}
svg text{font-family:ui-monospace,'SFMono-Regular',Menlo,Consolas,monospace;font-size:12px}
";

/// Renders `r` as a self-contained HTML page.
pub fn html(r: &RunReport) -> String {
    let mut out = String::new();
    let (title, class) = match &r.verdict {
        Verdict::Ok => ("ok".to_string(), "ok"),
        Verdict::Violation(v) => (format!("violation: {}", v.property), "bad"),
        Verdict::Unknown(_) => ("unknown".to_string(), "bad"),
    };
    let _ = write!(
        out,
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <title>kvsim: {} in {} ({})</title>\n<style>{STYLE}</style>\n</head>\n<body>\n",
        escape(&title),
        escape(&r.target),
        escape(&r.scenario)
    );
    let _ = writeln!(
        out,
        "<h1><span class=\"{class}\">{}</span> in <span class=\"target\">{}</span> \
         (scenario {})</h1>",
        escape(&title),
        escape(&r.target),
        escape(&r.scenario)
    );
    header(&mut out, r);
    match &r.verdict {
        Verdict::Ok => {
            let _ = writeln!(out, "<p class=\"why whyok\">verdict: ok</p>");
        }
        Verdict::Violation(v) => {
            let _ = writeln!(out, "<p class=\"why\">why: {}</p>", escape(&v.reason));
        }
        Verdict::Unknown(why) => {
            let _ = writeln!(out, "<p class=\"why\">unknown: {}</p>", escape(why));
        }
    }
    out.push_str("<h2>Sequence diagram</h2>\n");
    out.push_str(&svg(r));
    out.push_str(
        "<p class=\"legend\">Time runs down. Solid arrows: commands to a server; dashed: \
         replies; ✗ a lost message. Orange: faults. Red: the operations the verdict is \
         about. Bars on a client's lane: its operations, from invocation to completion.</p>\n",
    );
    ops_table(&mut out, r);
    steps_table(&mut out, r);
    let _ = writeln!(
        out,
        "<h2>Replay</h2>\n<pre>kvsim replay {}</pre>\n</body>\n</html>",
        escape(&r.token)
    );
    out
}

fn header(out: &mut String, r: &RunReport) {
    let c = &r.config;
    let per_client: Vec<usize> = (0..c.clients).map(|i| c.ops_of(i).len()).collect();
    let ops = if per_client.iter().all(|&n| n == c.ops) {
        format!("{} × {}", c.clients, c.ops)
    } else {
        let list: Vec<String> = per_client.iter().map(|n| n.to_string()).collect();
        format!("{} (ops per client {})", c.clients, list.join(", "))
    };
    let faults = super::faults_phrase(c);
    let _ = writeln!(
        out,
        "<p class=\"knobs\"><b>seed</b> {} · <b>clients × ops</b> {} · <b>faults</b> {} · \
         <b>strategy</b> {} · <b>steps</b> {}</p>",
        r.seed,
        escape(&ops),
        escape(&faults),
        c.strategy,
        r.steps
    );
    if let Some(s) = &r.shrink {
        let _ = writeln!(out, "<p class=\"knobs\">{}</p>", escape(&s.describe(r)));
    }
    let _ = writeln!(
        out,
        "<p class=\"knobs\">{}</p>",
        escape(&knobs(c).join(" · "))
    );
}

fn ops_table(out: &mut String, r: &RunReport) {
    let bad = rows::offending(r);
    out.push_str(
        "<h2>Operations</h2>\n<table class=\"mono\">\n<tr><th>#</th><th>client</th>\
         <th>operation</th><th>outcome</th><th>invoked</th><th>completed</th></tr>\n",
    );
    for (i, o) in r.ops.iter().enumerate() {
        let _ = writeln!(
            out,
            "<tr{}><td class=\"num\">{i}</td><td>C{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            if bad.contains(&i) { " class=\"hot\"" } else { "" },
            o.client,
            escape(&o.op),
            escape(&match (&o.ret, o.outcome.as_str()) {
                (Some(ret), _) => ret.clone(),
                (None, "unknown") if o.ret_seq.is_some() => "error (outcome unknown)".into(),
                (None, other) if o.ret_seq.is_some() => other.to_string(),
                (None, _) => "never returned".into(),
            }),
            rows::secs(o.call_ms),
            o.ret_ms.map(rows::secs).unwrap_or_else(|| "—".into())
        );
    }
    out.push_str("</table>\n");
}

fn steps_table(out: &mut String, r: &RunReport) {
    let clients = rows::clients(r);
    let bad = rows::offending(r);
    out.push_str("<h2>Steps</h2>\n<table class=\"mono\">\n<tr><th>step</th><th>time</th>");
    for c in &clients {
        let _ = write!(out, "<th>C{c}</th>");
    }
    out.push_str("<th>faults</th></tr>\n");
    for row in rows::rows(r).into_iter().filter(|x| x.who == Who::Setup) {
        let _ = writeln!(
            out,
            "<tr><td class=\"num\">setup</td><td>{}</td>{}<td class=\"fault\">{}</td></tr>",
            rows::secs(row.step.time_ms),
            "<td></td>".repeat(clients.len()),
            escape(&row.text)
        );
    }
    for line in rows::folded(r) {
        let (n, row) = match line {
            rows::Line::Step { n, row } => (n, row),
            repeat => {
                let _ = writeln!(
                    out,
                    "<tr><td></td><td></td><td colspan=\"{}\" class=\"legend\">{}</td></tr>",
                    clients.len() + 1,
                    escape(&repeat.summary().unwrap_or_default())
                );
                continue;
            }
        };
        let hot = row.op.is_some_and(|o| bad.contains(&o));
        let _ = write!(
            out,
            "<tr{}><td class=\"num\">{n}</td><td>{}</td>",
            if hot { " class=\"hot\"" } else { "" },
            rows::secs(row.step.time_ms)
        );
        for c in &clients {
            let cell = if row.who == Who::Client(*c) {
                escape(&row.text)
            } else {
                String::new()
            };
            let _ = write!(out, "<td>{cell}</td>");
        }
        let fault = match row.who {
            Who::World | Who::Setup => escape(&row.text),
            Who::Client(_) => String::new(),
        };
        let _ = writeln!(out, "<td class=\"fault\">{fault}</td></tr>");
    }
    out.push_str("</table>\n");
}

/// Character width of the diagram's monospace text, in pixels (12 px font).
const CH: f64 = 7.3;

/// The SVG sequence diagram.
fn svg(r: &RunReport) -> String {
    let clients = rows::clients(r);
    let servers = r.config.shards.max(1);
    let all = rows::rows(r);
    let bad = rows::offending(r);
    // Lane spacing: the client nearest the store must fit its longest command or reply
    // label between its lane and the store's.
    let longest = all
        .iter()
        .filter_map(|row| match &row.step.event {
            Event::Call {
                command, delivery, ..
            } if matches!(row.who, Who::Client(_)) => {
                let reply = match delivery {
                    Delivery::Replied(r) => r.to_string().chars().count(),
                    Delivery::ReplyLost(r) => r.to_string().chars().count() + 15,
                    Delivery::Late(r) => r.to_string().chars().count() + 18,
                    _ => 20,
                };
                Some(command.to_string().chars().count().max(reply))
            }
            _ => None,
        })
        .max()
        .unwrap_or(10);
    let lane_w = (longest as f64 * CH + 24.0).clamp(170.0, 560.0).round();
    let left = 92.0;
    let lane_x: Vec<f64> = (0..clients.len())
        .map(|i| left + 40.0 + i as f64 * lane_w)
        .collect();
    let store_x0 = left + 40.0 + clients.len() as f64 * lane_w + 40.0;
    let store_gap = 150.0;
    let server_x: Vec<f64> = (0..servers)
        .map(|s| store_x0 + s as f64 * store_gap)
        .collect();
    let setup_w = all
        .iter()
        .filter(|row| row.who == Who::Setup)
        .map(|row| row.text.chars().count())
        .max()
        .unwrap_or(0) as f64
        * CH;
    let width = server_x[servers - 1] + 290f64.max(setup_w + 30.0);
    let cx = |c: usize| lane_x[clients.iter().position(|&x| x == c).unwrap_or(0)];
    // Rows: y positions.
    let top = 56.0;
    let mut y = top;
    let mut body = String::new();
    let mut bars: Vec<(usize, f64, Option<f64>)> = Vec::new(); // (op, y0, y1)
    let mut open: Vec<Option<(usize, f64)>> = vec![None; r.config.clients.max(1)];
    let mut last_time: Option<u64> = None;
    let setup: Vec<String> = all
        .iter()
        .filter(|row| row.who == Who::Setup)
        .map(|row| row.text.clone())
        .collect();
    if !setup.is_empty() {
        // The setup's commands, beside the store's lane, one a line.
        let _ = writeln!(
            body,
            "<text x=\"{}\" y=\"{}\" fill=\"#6b7385\" font-style=\"italic\">setup (before any client):</text>",
            server_x[servers - 1] + 12.0,
            y + 4.0
        );
        for text in &setup {
            y += 16.0;
            let _ = writeln!(
                body,
                "<text x=\"{}\" y=\"{}\" fill=\"#6b7385\">{}</text>",
                server_x[servers - 1] + 12.0,
                y + 4.0,
                escape(text)
            );
        }
        y += 22.0;
    }
    for line in rows::folded(r) {
        let row = match line {
            rows::Line::Step { row, .. } => row,
            repeat => {
                let _ = writeln!(
                    body,
                    "<rect x=\"96\" y=\"{}\" width=\"{}\" height=\"22\" fill=\"#eef0f4\"/>\n\
                     <text x=\"{}\" y=\"{}\" fill=\"#4c566a\" font-style=\"italic\">{}</text>",
                    y + 3.0,
                    width - 100.0,
                    left + 20.0,
                    y + 18.0,
                    escape(&repeat.summary().unwrap_or_default())
                );
                y += 28.0;
                continue;
            }
        };
        let row = &row;
        let hot = row.op.is_some_and(|o| bad.contains(&o));
        let ink = if hot { "#b3261e" } else { "#1d2330" };
        let head = if hot { "url(#hot)" } else { "url(#head)" };
        let t = row.step.time_ms;
        let h = match &row.step.event {
            Event::Call { .. } => 40.0,
            Event::Fault(_) => 28.0,
            _ => 24.0,
        };
        if last_time != Some(t) {
            let _ = writeln!(
                body,
                "<text x=\"{}\" y=\"{}\" text-anchor=\"end\" fill=\"#6b7385\">{}</text>",
                left,
                y + 14.0,
                rows::secs(t)
            );
            last_time = Some(t);
        }
        match (&row.step.event, row.who) {
            (Event::Invoke { op }, Who::Client(c)) => {
                if c < open.len() {
                    open[c] = Some((row.op.unwrap_or(0), y + 6.0));
                }
                let _ = writeln!(
                    body,
                    "<text x=\"{}\" y=\"{}\" fill=\"{ink}\" font-weight=\"600\">▶ {}</text>",
                    cx(c) + 12.0,
                    y + 16.0,
                    escape(op)
                );
            }
            (Event::Return { outcome }, Who::Client(c)) => {
                if let Some((op, y0)) = open.get_mut(c).and_then(Option::take) {
                    bars.push((op, y0, Some(y + 12.0)));
                }
                let _ = writeln!(
                    body,
                    "<text x=\"{}\" y=\"{}\" fill=\"{ink}\" font-weight=\"600\">◀ {}</text>",
                    cx(c) + 12.0,
                    y + 16.0,
                    escape(outcome)
                );
            }
            (
                Event::Call {
                    shard,
                    command,
                    delivery,
                },
                Who::Client(c),
            ) => {
                let x0 = cx(c) + 6.0;
                let x1 = server_x[(*shard).min(servers - 1)];
                let mid = (x0 + x1) / 2.0;
                let y0 = y + 16.0;
                let y1 = y + 32.0;
                let req_end = if matches!(delivery, Delivery::RequestLost) {
                    mid
                } else {
                    x1
                };
                let _ =
                    writeln!(
                    body,
                    "<line x1=\"{x0}\" y1=\"{y0}\" x2=\"{req_end}\" y2=\"{y0}\" stroke=\"{ink}\" \
                     stroke-width=\"1.3\"{}/>",
                    if req_end == x1 { format!(" marker-end=\"{head}\"") } else { String::new() }
                );
                let _ = writeln!(
                    body,
                    "<text x=\"{}\" y=\"{}\" fill=\"{ink}\">{}</text>",
                    x0 + 8.0,
                    y0 - 4.0,
                    escape(&command.to_string())
                );
                match delivery {
                    Delivery::Replied(reply)
                    | Delivery::ReplyLost(reply)
                    | Delivery::Late(reply) => {
                        // A late request's reply reaches nobody: drawn as lost.
                        let lost = !matches!(delivery, Delivery::Replied(_));
                        let end = if lost { mid } else { x0 };
                        let _ = writeln!(
                            body,
                            "<line x1=\"{x1}\" y1=\"{y1}\" x2=\"{end}\" y2=\"{y1}\" stroke=\"{ink}\" \
                             stroke-width=\"1.1\" stroke-dasharray=\"5 3\"{}/>",
                            if lost { String::new() } else { format!(" marker-end=\"{head}\"") }
                        );
                        let text = match delivery {
                            Delivery::ReplyLost(_) => format!("{reply}  (reply lost)"),
                            Delivery::Late(_) => format!("{reply}  (landed late)"),
                            _ => reply.to_string(),
                        };
                        let _ = writeln!(
                            body,
                            "<text x=\"{}\" y=\"{}\" text-anchor=\"end\" fill=\"{ink}\">{}</text>",
                            x1 - 8.0,
                            y1 - 4.0,
                            escape(&text)
                        );
                        if lost {
                            cross(&mut body, mid, y1);
                        }
                    }
                    Delivery::RequestLost => {
                        cross(&mut body, mid, y0);
                        let _ = writeln!(
                            body,
                            "<text x=\"{}\" y=\"{}\" fill=\"#b35c00\">request lost: timeout</text>",
                            mid + 10.0,
                            y1
                        );
                    }
                    Delivery::ServerDown => {
                        cross(&mut body, x1 - 10.0, y0);
                        let _ = writeln!(
                            body,
                            "<text x=\"{}\" y=\"{}\" text-anchor=\"end\" fill=\"#b35c00\">server down</text>",
                            x1 - 8.0,
                            y1
                        );
                    }
                }
            }
            (Event::Fault(f), _) => {
                fault(&mut body, f, row, y, width, &cx, &server_x);
            }
            (_, Who::Client(c)) => {
                let _ = writeln!(
                    body,
                    "<text x=\"{}\" y=\"{}\" fill=\"{ink}\" font-style=\"italic\">{}</text>",
                    cx(c) + 12.0,
                    y + 16.0,
                    escape(&row.text)
                );
            }
            (_, _) => {
                let _ = writeln!(
                    body,
                    "<text x=\"{}\" y=\"{}\" fill=\"#b35c00\">{}</text>",
                    left + 20.0,
                    y + 16.0,
                    escape(&row.text)
                );
            }
        }
        y += h;
    }
    let bottom = y + 10.0;
    for (c, o) in open.iter().enumerate() {
        if let Some((op, y0)) = o {
            let _ = c;
            bars.push((*op, *y0, None));
        }
    }
    let mut out = String::new();
    let _ = writeln!(
        out,
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{width}\" height=\"{}\" \
         viewBox=\"0 0 {width} {}\" role=\"img\" aria-label=\"sequence diagram\">",
        bottom + 10.0,
        bottom + 10.0
    );
    out.push_str("<defs>");
    for (id, colour) in [("head", "#1d2330"), ("hot", "#b3261e")] {
        let _ = write!(
            out,
            "<marker id=\"{id}\" viewBox=\"0 0 10 10\" refX=\"9\" refY=\"5\" markerWidth=\"7\" \
             markerHeight=\"7\" orient=\"auto\"><path d=\"M0,0 L10,5 L0,10 z\" fill=\"{colour}\"/></marker>"
        );
    }
    out.push_str("</defs>\n");
    // Lanes.
    for &c in &clients {
        let x = cx(c);
        let _ = writeln!(
            out,
            "<text x=\"{x}\" y=\"22\" text-anchor=\"middle\" font-weight=\"700\">C{c}</text>\n\
             <line x1=\"{x}\" y1=\"30\" x2=\"{x}\" y2=\"{bottom}\" stroke=\"#c5cad3\" stroke-width=\"1.5\"/>"
        );
    }
    for (s, &x) in server_x.iter().enumerate() {
        let name = if servers == 1 {
            "store".to_string()
        } else {
            format!("store s{s}")
        };
        let _ = writeln!(
            out,
            "<text x=\"{x}\" y=\"22\" text-anchor=\"middle\" font-weight=\"700\" fill=\"#1f4e8c\">{name}</text>\n\
             <line x1=\"{x}\" y1=\"30\" x2=\"{x}\" y2=\"{bottom}\" stroke=\"#1f4e8c\" stroke-width=\"2.5\"/>"
        );
    }
    // Operation bars, under the arrows.
    for (op, y0, y1) in bars {
        let o = &r.ops[op.min(r.ops.len().saturating_sub(1))];
        let hot = bad.contains(&op);
        let x = cx(o.client) - 5.0;
        let y1v = y1.unwrap_or(bottom);
        let (fill, stroke) = if hot {
            ("#f6c9c5", "#b3261e")
        } else {
            ("#e3e8f0", "#8a94a6")
        };
        let _ = writeln!(
            out,
            "<rect x=\"{x}\" y=\"{y0}\" width=\"10\" height=\"{}\" fill=\"{fill}\" stroke=\"{stroke}\"{}>\
             <title>{}</title></rect>",
            (y1v - y0).max(4.0),
            if y1.is_none() { " stroke-dasharray=\"3 2\"" } else { "" },
            escape(&rows::op_label(o))
        );
    }
    out.push_str(&body);
    out.push_str("</svg>\n");
    out
}

/// A red ✗ at (x, y).
fn cross(out: &mut String, x: f64, y: f64) {
    let _ = writeln!(
        out,
        "<path d=\"M{} {} L{} {} M{} {} L{} {}\" stroke=\"#b3261e\" stroke-width=\"2.2\"/>",
        x - 5.0,
        y - 5.0,
        x + 5.0,
        y + 5.0,
        x - 5.0,
        y + 5.0,
        x + 5.0,
        y - 5.0
    );
}

/// A fault: an orange band across the diagram with its text, and a mark on the lane it
/// hits (a client or a server).
fn fault(
    out: &mut String,
    f: &Fault,
    row: &rows::Row<'_>,
    y: f64,
    width: f64,
    cx: &dyn Fn(usize) -> f64,
    server_x: &[f64],
) {
    let lru = matches!(f, Fault::LruEvict { .. } | Fault::ShardUp { .. });
    let colour = if lru { "#8a6d3b" } else { "#d35400" };
    let mid = y + 14.0;
    let _ = writeln!(
        out,
        "<rect x=\"96\" y=\"{}\" width=\"{}\" height=\"22\" fill=\"#fff4e5\" opacity=\"{}\"/>",
        y + 3.0,
        width - 100.0,
        if lru { 0.5 } else { 1.0 }
    );
    let server = |s: usize| server_x[s.min(server_x.len() - 1)];
    let (x, anchor) = match f {
        Fault::Evict { shard, .. }
        | Fault::LruEvict { shard, .. }
        | Fault::Restart { shard, .. }
        | Fault::ShardDown { shard, .. }
        | Fault::ShardUp { shard } => (server(*shard), "start"),
        Fault::Crash { client }
        | Fault::Pause { client, .. }
        | Fault::ClockJump { client, .. }
        | Fault::Delay { client, .. } => (cx(*client), "start"),
        Fault::AdvanceTime { .. } => (server_x[0], "start"),
    };
    let _ = row;
    let _ = writeln!(
        out,
        "<circle cx=\"{x}\" cy=\"{mid}\" r=\"5\" fill=\"{colour}\"/>\n\
         <text x=\"{}\" y=\"{}\" text-anchor=\"{anchor}\" fill=\"{colour}\" font-weight=\"600\">⚡ {}</text>",
        x + 12.0,
        mid + 4.0,
        escape(&f.to_string())
    );
}
