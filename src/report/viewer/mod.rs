//! The step-through viewer: one run as a self-contained page (inline CSS and script, no
//! network) that steps through the trace with ←/→, Home/End or a slider. A timeline with a
//! lane per client, one for the store and one for faults (folded as the text report folds
//! repeats, [`super::rows::folded`]); at each step the stores' contents and each client's
//! operation in flight; the operations the verdict is about in red, with its property and
//! reason. The page opens on the step its URL names (`#step=N`).
//!
//! The run goes into the page as JSON ([`data`]): the steps, each with what it changed in
//! the stores ([`crate::sim::StoreLog`]: deltas, not snapshots, so that a 2,000-step run
//! stays well under 1 MB); the script rebuilds the stores at each step.

use super::escape::escape;
use super::rows::{self, Line, Who};
use crate::harness::records::RunReport;
use crate::sim::StoreItem;
use crate::verdict::Verdict;
use serde::Serialize;
use std::collections::BTreeMap;

const STYLE: &str = include_str!("viewer.css");
const SCRIPT: &str = include_str!("viewer.js");

/// What the store lane says when a run has no store log.
pub const NO_STORE: &str = "the store's contents were not recorded for this run";

/// An item in the page's data: `[shard, key, value, cas, exptime, expires_ms, dead,
/// flags]`, the key and value as indices into the data's `strings`; the last four left out
/// when they are `0, null, false, 0` (an item that never expires, without flags).
#[derive(Serialize)]
#[serde(untagged)]
enum ItemData {
    Short(usize, usize, usize, u64),
    Full(usize, usize, usize, u64, i64, Option<u64>, bool, u32),
}

/// A step in the page's data: `[time_ms, lane, text, op, set, gone]`; lane is the client's
/// number, or -1 for the world (faults); text `null` for a step folded away (it is the
/// step its block repeats); gone items as `[shard, key]`.
type StepData = (
    u64,
    i64,
    Option<String>,
    Option<usize>,
    Vec<ItemData>,
    Vec<(usize, usize)>,
);

/// The keys and values of the page's data, each written once.
#[derive(Default)]
struct Strings {
    list: Vec<String>,
    index: BTreeMap<String, usize>,
}

impl Strings {
    fn id(&mut self, s: &str) -> usize {
        if let Some(&i) = self.index.get(s) {
            return i;
        }
        self.list.push(s.to_string());
        self.index.insert(s.to_string(), self.list.len() - 1);
        self.list.len() - 1
    }

    fn item(&mut self, it: &StoreItem) -> ItemData {
        let (key, value) = (self.id(&it.key), self.id(&it.value));
        if it.exptime == 0 && it.expires_ms.is_none() && !it.dead && it.flags == 0 {
            ItemData::Short(it.shard, key, value, it.cas)
        } else {
            ItemData::Full(
                it.shard,
                key,
                value,
                it.cas,
                it.exptime,
                it.expires_ms,
                it.dead,
                it.flags,
            )
        }
    }
}

/// An operation in the page's data.
#[derive(Serialize)]
struct OpData {
    /// Client.
    c: usize,
    /// `Enqueue("a") → Ok(())`.
    l: String,
    /// The step that invoked it (0: before the first step).
    a: usize,
    /// The step it returned at, if it did.
    b: Option<usize>,
    /// Whether the verdict is about it.
    hot: bool,
}

/// The page's data.
#[derive(Serialize)]
struct Data<'a> {
    target: &'a str,
    scenario: &'a str,
    /// `violation`, `ok` or `unknown`.
    verdict: &'static str,
    property: Option<&'a str>,
    reason: String,
    clients: Vec<usize>,
    /// Why the store lane is empty (`None`: recorded).
    no_store: Option<String>,
    shards: usize,
    representation: Option<&'a str>,
    setup: Vec<String>,
    /// The stores after setup.
    initial: Vec<ItemData>,
    steps: Vec<StepData>,
    /// The keys and values the items name by index.
    strings: Vec<String>,
    /// The timeline's lines: a step's number, or `[period, times, first, last, summary]`.
    lines: Vec<LineData>,
    ops: Vec<OpData>,
    token: &'a str,
    /// The run's knobs, as the report's header gives them (none for a history).
    knobs: Vec<String>,
    /// Part of a page that shows the title, reason, knobs and token itself.
    bare: bool,
}

/// A line of the timeline: a step's number, or a folded block.
#[derive(Serialize)]
#[serde(untagged)]
enum LineData {
    Step(usize),
    Repeat(usize, usize, usize, usize, String),
}

/// The page's data for `r` as JSON, safe inside a `<script>` element (`<`, `>` and `&`
/// written as `\u003c`, `\u003e`, `\u0026`); `representation`: what the structure's keys
/// and values mean, shown beside the store.
pub fn data(r: &RunReport, representation: Option<&str>, no_store: Option<&str>) -> String {
    data_as(r, representation, no_store, false)
}

fn data_as(
    r: &RunReport,
    representation: Option<&str>,
    no_store: Option<&str>,
    bare: bool,
) -> String {
    let (mut steps, ops, setup, number) = timeline(r);
    let mut strings = Strings::default();
    let mut initial: BTreeMap<(usize, String), ItemData> = BTreeMap::new();
    let recorded = r.store.as_ref();
    for c in recorded.iter().flat_map(|log| &log.changes) {
        match number.get(c.at).copied().unwrap_or(0) {
            0 => {
                for g in &c.gone {
                    initial.remove(g);
                }
                for it in &c.set {
                    let data = strings.item(it);
                    initial.insert((it.shard, it.key.clone()), data);
                }
            }
            at => {
                let gone: Vec<(usize, usize)> =
                    c.gone.iter().map(|(sh, k)| (*sh, strings.id(k))).collect();
                let set: Vec<ItemData> = c.set.iter().map(|it| strings.item(it)).collect();
                let s = &mut steps[at - 1];
                s.5.extend(gone);
                s.4.extend(set);
            }
        }
    }
    let lines: Vec<LineData> = rows::folded(r)
        .into_iter()
        .map(|l| match l {
            Line::Step { n, .. } => LineData::Step(n),
            Line::Repeat {
                period,
                times,
                first,
                last,
            } => LineData::Repeat(period, times, first, last, l.summary().unwrap_or_default()),
        })
        .collect();
    // A step folded away is the step its block repeats: its text is not written twice.
    for l in &lines {
        if let LineData::Repeat(_, _, first, last, _) = l {
            for s in &mut steps[first - 1..*last] {
                s.2 = None;
            }
        }
    }
    let (verdict, property, reason) = match &r.verdict {
        Verdict::Ok => ("ok", None, "verdict: ok".to_string()),
        Verdict::Violation(v) => ("violation", Some(v.property.as_str()), v.reason.clone()),
        Verdict::Unknown(why) => ("unknown", None, why.clone()),
    };
    let d = Data {
        target: &r.target,
        scenario: &r.scenario,
        verdict,
        property,
        reason,
        clients: rows::clients(r),
        no_store: match recorded {
            Some(_) => None,
            None => Some(no_store.unwrap_or(NO_STORE).to_string()),
        },
        shards: r.config.shards.max(1),
        representation,
        setup,
        initial: initial.into_values().collect(),
        steps,
        strings: strings.list,
        lines,
        ops,
        token: &r.token,
        knobs: if r.token.is_empty() {
            Vec::new()
        } else {
            knob_lines(r)
        },
        bare,
    };
    script_safe(&serde_json::to_string(&d).expect("the viewer's data always serializes"))
}

/// The steps after setup (each with its time, lane, text and operation), the operations
/// (with the steps they start and end at), setup's texts, and each trace step's number
/// (0 for setup).
fn timeline(r: &RunReport) -> (Vec<StepData>, Vec<OpData>, Vec<String>, Vec<usize>) {
    let all = rows::rows(r);
    let mut number = vec![0usize; all.len()];
    let mut setup = Vec::new();
    let mut steps: Vec<StepData> = Vec::new();
    let mut ops: Vec<OpData> = r
        .ops
        .iter()
        .map(|o| OpData {
            c: o.client,
            l: rows::op_label(o),
            a: 0,
            b: None,
            hot: false,
        })
        .collect();
    for &i in &rows::offending(r) {
        if let Some(o) = ops.get_mut(i) {
            o.hot = true;
        }
    }
    for (i, row) in all.iter().enumerate() {
        if row.who == Who::Setup {
            setup.push(row.text.clone());
            continue;
        }
        let n = steps.len() + 1;
        number[i] = n;
        if let Some(op) = row.op.and_then(|o| ops.get_mut(o)) {
            match row.step.event {
                crate::sim::Event::Invoke { .. } => op.a = n,
                crate::sim::Event::Return { .. } => op.b = Some(n),
                _ => {}
            }
        }
        let lane = match row.who {
            Who::Client(c) => c as i64,
            _ => -1,
        };
        steps.push((
            row.step.time_ms,
            lane,
            Some(row.text.clone()),
            row.op,
            Vec::new(),
            Vec::new(),
        ));
    }
    (steps, ops, setup, number)
}

/// The header's lines: seed, clients and operations, faults, strategy; how far it shrank;
/// the other knobs.
fn knob_lines(r: &RunReport) -> Vec<String> {
    let c = &r.config;
    let plural = |n: usize, one: &str| format!("{n} {one}{}", if n == 1 { "" } else { "s" });
    // The steps are not repeated here: the viewer counts its own (the trace's events,
    // which a run's `steps`, its scheduling choices, do not count one by one).
    let mut lines = vec![format!(
        "seed {} · {} × {} · faults {} · strategy {}",
        r.seed,
        plural(c.clients, "client"),
        plural(c.ops, "op"),
        rows::faults_phrase(c),
        c.strategy
    )];
    if let Some(s) = &r.shrink {
        lines.push(s.describe(r));
    }
    let more = super::text::knobs(c);
    if !more.is_empty() {
        lines.push(more.join(" · "));
    }
    lines
}

/// JSON made safe inside `<script>`: no `<`, `>` or `&` (only strings can hold them).
fn script_safe(json: &str) -> String {
    json.replace('<', "\\u003c")
        .replace('>', "\\u003e")
        .replace('&', "\\u0026")
}

/// The viewer as a part of a page (its style, markup, data and script), for a page of
/// one's own (the HTML report, the Explorer's page): one per page. Its elements' ids
/// start with `kv-`, and it holds the element `errors` where script errors show.
/// `no_store` says why the store lane is empty when `r` has no store log (default
/// [`NO_STORE`]).
pub fn viewer_section(
    r: &RunReport,
    representation: Option<&str>,
    no_store: Option<&str>,
) -> String {
    section(r, representation, no_store, false)
}

/// [`viewer_section`]; `bare`: without the title, reason, knobs and token (the HTML report
/// shows them itself).
pub(crate) fn section(
    r: &RunReport,
    representation: Option<&str>,
    no_store: Option<&str>,
    bare: bool,
) -> String {
    format!(
        "<style>{STYLE}</style>\n\
         <div id=\"errors\" class=\"kv-errors\" role=\"alert\"></div>\n\
         <script>window.onerror=function(m,s,l,c,e){{var x=document.getElementById('errors');\
         if(x){{x.textContent+='script error: '+m+' (line '+l+')\\n';}}return false;}};</script>\n\
         <section id=\"kv-viewer\" class=\"kv\" aria-label=\"step-through viewer\">\
         <noscript><p>The step-through viewer needs JavaScript.</p></noscript></section>\n\
         <script type=\"application/json\" id=\"kv-data\">{}</script>\n<script>{SCRIPT}</script>\n",
        data_as(r, representation, no_store, bare)
    )
}

/// The viewer of `r` as one self-contained page (inline CSS and script, no network):
/// `kvsim replay TOKEN --html FILE`. `representation`: what the structure's keys and
/// values mean (shown beside the store), if the model says.
pub fn viewer(r: &RunReport, representation: Option<&str>) -> String {
    page(r, representation, None)
}

/// [`viewer`] with the store lane's text when `r` has no store log (a history from a
/// file: "a history has no store").
pub fn page(r: &RunReport, representation: Option<&str>, no_store: Option<&str>) -> String {
    let title = match &r.verdict {
        Verdict::Ok => "ok".to_string(),
        Verdict::Violation(v) => format!("violation: {}", v.property),
        Verdict::Unknown(_) => "unknown".to_string(),
    };
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <title>kvsim viewer: {} in {} ({})</title>\n</head>\n<body class=\"kv-page\">\n{}</body>\n</html>\n",
        escape(&title),
        escape(&r.target),
        escape(&r.scenario),
        viewer_section(r, representation, no_store)
    )
}

#[cfg(test)]
mod tests;
