//! The report's SVG sequence diagram: a lane per client and one per server, arrows for
//! commands and replies, faults as bands, the operations the verdict is about in red.
//!
//! [`Layout`] places the lanes; [`Drawing`] draws the rows top to bottom; [`frame`] puts
//! the lanes and the operations' bars around them.

use super::escape::escape;
use super::rows::{self, Row, Who};
use crate::command::Command;
use crate::harness::records::RunReport;
use crate::sim::{Delivery, Event, Fault, Lane};
use std::fmt::Write;

/// Character width of the diagram's monospace text, in pixels (12 px font).
const CH: f64 = 7.3;

/// Right edge of the time column, in pixels.
const LEFT: f64 = 92.0;

/// The SVG sequence diagram of a run.
pub(super) fn svg(r: &RunReport) -> String {
    let all = rows::rows(r);
    let layout = Layout::of(r, &all);
    let mut drawing = Drawing {
        layout: &layout,
        bad: rows::offending(r),
        body: String::new(),
        y: 56.0,
        bars: Vec::new(),
        open: vec![None; r.config.clients.max(1)],
        last_time: None,
    };
    drawing.setup(&all);
    for line in rows::folded(r) {
        match line {
            rows::Line::Step { row, .. } => drawing.row(&row),
            repeat => drawing.repeat(&repeat.summary().unwrap_or_default()),
        }
    }
    frame(r, drawing)
}

/// Where the lanes are.
struct Layout {
    /// The clients that have a lane, in lane order.
    clients: Vec<usize>,
    /// Each client lane's x.
    lane_x: Vec<f64>,
    /// Each server lane's x.
    server_x: Vec<f64>,
    /// The diagram's width.
    width: f64,
}

impl Layout {
    /// Lane spacing: the client nearest the store must fit its longest command or reply
    /// label between its lane and the store's; the setup's lines fit right of the store.
    fn of(r: &RunReport, all: &[Row<'_>]) -> Layout {
        let clients = rows::clients(r);
        let servers = r.config.shards.max(1);
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
                        Delivery::RequestLost | Delivery::ServerDown => 20,
                    };
                    Some(command.to_string().chars().count().max(reply))
                }
                _ => None,
            })
            .max()
            .unwrap_or(10);
        let lane_w = (longest as f64 * CH + 24.0).clamp(170.0, 560.0).round();
        let lane_x: Vec<f64> = (0..clients.len())
            .map(|i| LEFT + 40.0 + i as f64 * lane_w)
            .collect();
        let store_x0 = LEFT + 40.0 + clients.len() as f64 * lane_w + 40.0;
        let server_x: Vec<f64> = (0..servers).map(|s| store_x0 + s as f64 * 150.0).collect();
        let setup_w = all
            .iter()
            .filter(|row| row.who == Who::Setup)
            .map(|row| row.text.chars().count())
            .max()
            .unwrap_or(0) as f64
            * CH;
        let width = server_x[servers - 1] + 290f64.max(setup_w + 30.0);
        Layout {
            clients,
            lane_x,
            server_x,
            width,
        }
    }

    /// A client's lane.
    fn client(&self, c: usize) -> f64 {
        self.lane_x[self.clients.iter().position(|&x| x == c).unwrap_or(0)]
    }

    /// A server's lane.
    fn server(&self, shard: usize) -> f64 {
        self.server_x[shard.min(self.server_x.len() - 1)]
    }

    /// The rightmost server's lane.
    fn last_server(&self) -> f64 {
        self.server(usize::MAX)
    }
}

/// An operation's bar on its client's lane: the operation, and from where to where
/// (to the bottom when it never returned).
type Bar = (usize, f64, Option<f64>);

/// The rows drawn so far, and where the next one goes.
struct Drawing<'l> {
    layout: &'l Layout,
    /// The operations the verdict is about.
    bad: Vec<usize>,
    body: String,
    /// The next row's top.
    y: f64,
    bars: Vec<Bar>,
    /// Per client, its open operation and where its bar starts.
    open: Vec<Option<(usize, f64)>>,
    /// The time label last written.
    last_time: Option<u64>,
}

impl Drawing<'_> {
    /// The setup's commands, beside the store's lane, one a line.
    fn setup(&mut self, all: &[Row<'_>]) {
        let setup: Vec<&str> = all
            .iter()
            .filter(|row| row.who == Who::Setup)
            .map(|row| row.text.as_str())
            .collect();
        if setup.is_empty() {
            return;
        }
        let x = self.layout.last_server() + 12.0;
        let _ = writeln!(
            self.body,
            "<text x=\"{x}\" y=\"{}\" fill=\"#6b7385\" font-style=\"italic\">setup (before any client):</text>",
            self.y + 4.0
        );
        for text in setup {
            self.y += 16.0;
            let _ = writeln!(
                self.body,
                "<text x=\"{x}\" y=\"{}\" fill=\"#6b7385\">{}</text>",
                self.y + 4.0,
                escape(text)
            );
        }
        self.y += 22.0;
    }

    /// A band saying that steps repeat.
    fn repeat(&mut self, summary: &str) {
        let _ = writeln!(
            self.body,
            "<rect x=\"96\" y=\"{}\" width=\"{}\" height=\"22\" fill=\"#eef0f4\"/>\n\
             <text x=\"{}\" y=\"{}\" fill=\"#4c566a\" font-style=\"italic\">{}</text>",
            self.y + 3.0,
            self.layout.width - 100.0,
            LEFT + 20.0,
            self.y + 18.0,
            escape(summary)
        );
        self.y += 28.0;
    }

    /// One step: its time (when it changed), then what it shows.
    fn row(&mut self, row: &Row<'_>) {
        let hot = row.op.is_some_and(|o| self.bad.contains(&o));
        let ink = if hot { "#b3261e" } else { "#1d2330" };
        let y = self.y;
        let t = row.step.time_ms;
        if self.last_time != Some(t) {
            let _ = writeln!(
                self.body,
                "<text x=\"{LEFT}\" y=\"{}\" text-anchor=\"end\" fill=\"#6b7385\">{}</text>",
                y + 14.0,
                rows::secs(t)
            );
            self.last_time = Some(t);
        }
        let label = |body: &mut String, c: usize, text: &str, style: &str| {
            let _ = writeln!(
                body,
                "<text x=\"{}\" y=\"{}\" fill=\"{ink}\" {style}>{}</text>",
                self.layout.client(c) + 12.0,
                y + 16.0,
                escape(text)
            );
        };
        let mut body = std::mem::take(&mut self.body);
        match (&row.step.event, row.who) {
            (Event::Invoke { op }, Who::Client(c)) => {
                if let Some(open) = self.open.get_mut(c) {
                    *open = Some((row.op.unwrap_or(0), y + 6.0));
                }
                label(&mut body, c, &format!("▶ {op}"), "font-weight=\"600\"");
            }
            (Event::Return { outcome }, Who::Client(c)) => {
                if let Some((op, y0)) = self.open.get_mut(c).and_then(Option::take) {
                    self.bars.push((op, y0, Some(y + 12.0)));
                }
                label(&mut body, c, &format!("◀ {outcome}"), "font-weight=\"600\"");
            }
            (
                Event::Call {
                    shard,
                    command,
                    delivery,
                },
                Who::Client(c),
            ) => message(
                &mut body,
                self.layout,
                (c, *shard),
                command,
                delivery,
                y,
                hot,
            ),
            (Event::Fault(f), _) => fault(&mut body, self.layout, f, y),
            (_, Who::Client(c)) => label(&mut body, c, &row.text, "font-style=\"italic\""),
            (_, _) => {
                let _ = writeln!(
                    body,
                    "<text x=\"{}\" y=\"{}\" fill=\"#b35c00\">{}</text>",
                    LEFT + 20.0,
                    y + 16.0,
                    escape(&row.text)
                );
            }
        }
        self.body = body;
        self.y += match &row.step.event {
            Event::Call { .. } => 40.0,
            Event::Fault(_) => 28.0,
            _ => 24.0,
        };
    }
}

/// A command from client `c` to server `shard` and what became of it: the request's
/// arrow (cut by a ✗ when lost), the reply's dashed arrow (cut when lost or late).
fn message(
    out: &mut String,
    layout: &Layout,
    (c, shard): (usize, usize),
    command: &Command,
    delivery: &Delivery,
    y: f64,
    hot: bool,
) {
    let ink = if hot { "#b3261e" } else { "#1d2330" };
    let head = if hot { "url(#hot)" } else { "url(#head)" };
    let x0 = layout.client(c) + 6.0;
    let x1 = layout.server(shard);
    let mid = (x0 + x1) / 2.0;
    let y0 = y + 16.0;
    let y1 = y + 32.0;
    let req_end = if matches!(delivery, Delivery::RequestLost) {
        mid
    } else {
        x1
    };
    let _ = writeln!(
        out,
        "<line x1=\"{x0}\" y1=\"{y0}\" x2=\"{req_end}\" y2=\"{y0}\" stroke=\"{ink}\" \
         stroke-width=\"1.3\"{}/>",
        if req_end == x1 {
            format!(" marker-end=\"{head}\"")
        } else {
            String::new()
        }
    );
    let _ = writeln!(
        out,
        "<text x=\"{}\" y=\"{}\" fill=\"{ink}\">{}</text>",
        x0 + 8.0,
        y0 - 4.0,
        escape(&command.to_string())
    );
    match delivery {
        Delivery::Replied(reply) | Delivery::ReplyLost(reply) | Delivery::Late(reply) => {
            // A late request's reply reaches nobody: drawn as lost.
            let lost = !matches!(delivery, Delivery::Replied(_));
            let end = if lost { mid } else { x0 };
            let _ = writeln!(
                out,
                "<line x1=\"{x1}\" y1=\"{y1}\" x2=\"{end}\" y2=\"{y1}\" stroke=\"{ink}\" \
                 stroke-width=\"1.1\" stroke-dasharray=\"5 3\"{}/>",
                if lost {
                    String::new()
                } else {
                    format!(" marker-end=\"{head}\"")
                }
            );
            let text = match delivery {
                Delivery::ReplyLost(_) => format!("{reply}  (reply lost)"),
                Delivery::Late(_) => format!("{reply}  (landed late)"),
                Delivery::Replied(_) | Delivery::RequestLost | Delivery::ServerDown => {
                    reply.to_string()
                }
            };
            let _ = writeln!(
                out,
                "<text x=\"{}\" y=\"{}\" text-anchor=\"end\" fill=\"{ink}\">{}</text>",
                x1 - 8.0,
                y1 - 4.0,
                escape(&text)
            );
            if lost {
                cross(out, mid, y1);
            }
        }
        Delivery::RequestLost => {
            cross(out, mid, y0);
            let _ = writeln!(
                out,
                "<text x=\"{}\" y=\"{y1}\" fill=\"#b35c00\">request lost: timeout</text>",
                mid + 10.0
            );
        }
        Delivery::ServerDown => {
            cross(out, x1 - 10.0, y0);
            let _ = writeln!(
                out,
                "<text x=\"{}\" y=\"{y1}\" text-anchor=\"end\" fill=\"#b35c00\">server down</text>",
                x1 - 8.0
            );
        }
    }
}

/// The whole picture: the svg element, the arrow heads, the lanes, the operations' bars
/// under the drawn rows.
fn frame(r: &RunReport, drawing: Drawing<'_>) -> String {
    let Drawing {
        layout,
        bad,
        body,
        y,
        mut bars,
        open,
        ..
    } = drawing;
    let bottom = y + 10.0;
    bars.extend(open.into_iter().flatten().map(|(op, y0)| (op, y0, None)));
    let width = layout.width;
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
    for &c in &layout.clients {
        let x = layout.client(c);
        let _ = writeln!(
            out,
            "<text x=\"{x}\" y=\"22\" text-anchor=\"middle\" font-weight=\"700\">C{c}</text>\n\
             <line x1=\"{x}\" y1=\"30\" x2=\"{x}\" y2=\"{bottom}\" stroke=\"#c5cad3\" stroke-width=\"1.5\"/>"
        );
    }
    let servers = layout.server_x.len();
    for (s, &x) in layout.server_x.iter().enumerate() {
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
    for (op, y0, y1) in bars {
        let o = &r.ops[op.min(r.ops.len().saturating_sub(1))];
        let (fill, stroke) = if bad.contains(&op) {
            ("#f6c9c5", "#b3261e")
        } else {
            ("#e3e8f0", "#8a94a6")
        };
        let _ = writeln!(
            out,
            "<rect x=\"{}\" y=\"{y0}\" width=\"10\" height=\"{}\" fill=\"{fill}\" stroke=\"{stroke}\"{}>\
             <title>{}</title></rect>",
            layout.client(o.client) - 5.0,
            (y1.unwrap_or(bottom) - y0).max(4.0),
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
fn fault(out: &mut String, layout: &Layout, f: &Fault, y: f64) {
    let lru = !f.injected();
    let colour = if lru { "#8a6d3b" } else { "#d35400" };
    let mid = y + 14.0;
    let _ = writeln!(
        out,
        "<rect x=\"96\" y=\"{}\" width=\"{}\" height=\"22\" fill=\"#fff4e5\" opacity=\"{}\"/>",
        y + 3.0,
        layout.width - 100.0,
        if lru { 0.5 } else { 1.0 }
    );
    let (x, anchor) = match f.lane() {
        Lane::Server(shard) => (layout.server(shard), "start"),
        Lane::Client(client) => (layout.client(client), "start"),
    };
    let _ = writeln!(
        out,
        "<circle cx=\"{x}\" cy=\"{mid}\" r=\"5\" fill=\"{colour}\"/>\n\
         <text x=\"{}\" y=\"{}\" text-anchor=\"{anchor}\" fill=\"{colour}\" font-weight=\"600\">⚡ {}</text>",
        x + 12.0,
        mid + 4.0,
        escape(&f.to_string())
    );
}
