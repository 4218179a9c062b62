//! The Explorer page itself: rendered on the server (the verdict, the counts, the
//! counterexample's steps and the first state are in the page as it arrives, so a browser
//! shows them with no click and no request more), with a small inline script to browse
//! the state space through `/api/state`. Inline CSS and script, no network beyond the page's
//! own API.

use super::embedded;
use crate::explore::browse::StateView;
use crate::harness::records::ExploreReport;
use crate::report::escape;
use crate::verdict::Verdict;
use std::fmt::Write;

/// What the page shows.
pub(super) struct Page<'a> {
    pub report: &'a ExploreReport,
    /// The CLI's text report.
    pub text: &'a str,
    pub property: String,
    pub counterexample: Option<&'a Result<Vec<usize>, String>>,
    /// The state shown first (the counterexample's last, or the initial state).
    pub first: Result<&'a StateView, &'a String>,
    pub stock: Option<&'a str>,
}

const STYLE: &str = "
body{font:14px/1.45 system-ui,-apple-system,'Segoe UI',sans-serif;margin:20px 28px;color:#1d2330;background:#fff}
h1{font-size:20px;margin:0 0 6px}h2{font-size:15px;margin:22px 0 8px;color:#3b4252;border-bottom:1px solid #e3e6ec;padding-bottom:3px}
.verdict{display:inline-block;padding:1px 10px;border-radius:4px;color:#fff;font-weight:600}
.violation{background:#b3261e}.ok{background:#1e7b34}.unknown{background:#9a6700}
.why{font-size:15px;border-left:4px solid #b3261e;background:#fdecea;padding:8px 12px;margin:10px 0}
.why.ok{border-left-color:#1e7b34;background:#e8f5ea;color:#1d2330}.why.unknown{border-left-color:#9a6700;background:#fff4d6;color:#1d2330}
table.facts td{padding:1px 14px 1px 0;vertical-align:top}table.facts td:first-child{color:#4c566a;white-space:nowrap}
code,pre,.mono{font-family:ui-monospace,'SFMono-Regular',Menlo,Consolas,monospace;font-size:12.5px}
pre{background:#f4f5f8;padding:8px 12px;overflow-x:auto;border-radius:4px;margin:4px 0}
ol.steps{padding-left:3.2em;margin:4px 0}ol.steps li{font-family:ui-monospace,Menlo,Consolas,monospace;font-size:12.5px}
ol.steps a,#successors a,#trail a{color:#1d2330;text-decoration:none}ol.steps a:hover,#successors a:hover,#trail a:hover{text-decoration:underline}
li.fault,li.fault a{color:#b35c00}li.here{background:#fff4d6}li.oncxstep a{color:#b3261e}
.oncx{background:#fdecea;font-weight:600}.oncx::after{content:'  ← the counterexample';color:#b3261e;font-weight:400}
#browser{display:grid;grid-template-columns:minmax(300px,1fr) minmax(300px,1fr);gap:16px}
.checker{font-weight:600}.checker.bad{color:#b3261e}
button{font:inherit;padding:2px 10px;margin:0 6px 6px 0}
iframe{width:100%;height:720px;border:1px solid #d8dce4;border-radius:4px}
.note{color:#6b7385;font-size:12.5px}#errors{color:#b3261e;white-space:pre-wrap}
";

const SCRIPT: &str = include_str!("page.js");

/// The page as HTML.
pub(super) fn render(p: &Page<'_>) -> String {
    let r = p.report;
    let mut out = String::new();
    let verdict = r.verdict.name();
    let _ = write!(
        out,
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <title>kvsim explore {}: {verdict}</title>\n<style>{STYLE}</style>\n\
         <script>window.onerror=function(m,s,l,c){{var e=document.getElementById('errors');\
         if(e){{e.textContent+=m+' ('+l+':'+c+')\\n';}}}};\
         window.addEventListener('unhandledrejection',function(ev){{var e=document.getElementById('errors');\
         if(e){{e.textContent+='unhandled: '+ev.reason+'\\n';}}}});</script>\n</head>\n<body>\n",
        escape(&r.target)
    );
    let _ = writeln!(
        out,
        "<h1>kvsim explore {} <span class=\"verdict {verdict}\" id=\"verdict\">{verdict}</span></h1>",
        escape(&r.target)
    );
    let why = match &r.verdict {
        Verdict::Ok => "ok: every path of the scope passes".to_string(),
        Verdict::Violation(v) => format!("violation: {}: {}", v.property, v.reason),
        Verdict::Unknown(why) => {
            format!("unknown: {why} (not a pass: part of the scope was not checked)")
        }
    };
    let _ = writeln!(
        out,
        "<p class=\"why {verdict}\" id=\"reason\">{}</p>",
        escape(&why)
    );
    facts(&mut out, p);
    counterexample(&mut out, p);
    browser(&mut out, p);
    if r.counterexample.is_some() {
        let _ = writeln!(
            out,
            "<h2>The counterexample's report</h2>\n<iframe src=\"/counterexample\" \
             title=\"the counterexample's report\"></iframe>"
        );
    }
    let _ = writeln!(
        out,
        "<h2>The CLI's report</h2>\n<details><summary>as <code>kvsim explore {}</code> \
         printed it</summary><pre>{}</pre></details>",
        escape(&r.target),
        escape(p.text)
    );
    stock(&mut out, p);
    let cx = match p.counterexample {
        Some(Ok(path)) => serde_json::to_string(path).unwrap_or_else(|_| "null".into()),
        _ => "null".to_string(),
    };
    let first = match p.first {
        Ok(v) => embedded(v),
        Err(_) => "null".to_string(),
    };
    let _ = writeln!(
        out,
        "<h2>Script errors</h2><pre id=\"errors\"></pre>\n\
         <script>var CX={cx};var FIRST={first};\n{SCRIPT}</script>\n</body>\n</html>"
    );
    out
}

fn facts(out: &mut String, p: &Page<'_>) {
    let r = p.report;
    let mut rows = vec![
        ("property", p.property.clone()),
        (
            "states",
            format!(
                "{} unique, {} total · depth {} · {} ms",
                r.unique_states, r.total_states, r.max_depth, r.millis
            ),
        ),
        ("scope", r.scope.describe()),
    ];
    if !r.scope.seeded_workload {
        rows.push((
            "workloads",
            format!("{}: every operation each client can run", r.workloads),
        ));
    }
    for set in &r.interchangeable {
        let names: Vec<String> = set.iter().map(|c| format!("C{c}")).collect();
        rows.push((
            "symmetry",
            format!(
                "{} interchangeable: one state of every permutation explored",
                names.join(" ")
            ),
        ));
    }
    if r.time_free {
        rows.push((
            "time",
            "free: states that differ only in when things happen are one".to_string(),
        ));
    } else if let Some(why) = &r.time_dependence {
        rows.push(("time", format!("kept in every state: {why}")));
    }
    if let Some(w) = &r.warning {
        rows.push(("warning", w.clone()));
    }
    if let Some(b) = &r.bound {
        rows.push(("bound hit", b.clone()));
    }
    if let Some(t) = &r.token {
        rows.push(("replay", format!("kvsim replay {t}")));
    }
    out.push_str("<table class=\"facts\" id=\"facts\">\n");
    for (k, v) in rows {
        let _ = writeln!(
            out,
            "<tr><td>{k}</td><td id=\"fact-{}\">{}</td></tr>",
            k.replace(' ', "-"),
            escape(&v)
        );
    }
    out.push_str("</table>\n");
}

fn counterexample(out: &mut String, p: &Page<'_>) {
    out.push_str("<h2>The counterexample, step by step</h2>\n");
    match (p.counterexample, p.first) {
        (None, _) => {
            let _ = writeln!(
                out,
                "<p id=\"cx\">none: the verdict is {} (browse the state space below)</p>",
                p.report.verdict.name()
            );
        }
        (Some(Err(why)), _) => {
            let _ = writeln!(
                out,
                "<p id=\"cx\">its path cannot be shown in the state space: {} (its report is \
                 below)</p>",
                escape(why)
            );
        }
        (Some(Ok(_)), Err(why)) => {
            let _ = writeln!(out, "<p id=\"cx\">{}</p>", escape(why));
        }
        (Some(Ok(path)), Ok(view)) => {
            let _ = writeln!(
                out,
                "<p>{} steps from the initial state; click a step to see the state after it. \
                 <button id=\"follow\" type=\"button\">follow the counterexample</button></p>\
                 \n<ol class=\"steps\" id=\"cx\">",
                path.len()
            );
            for (i, label) in view.steps.iter().enumerate() {
                let class = if label.starts_with("fault:") {
                    " class=\"fault\""
                } else {
                    ""
                };
                let _ = writeln!(
                    out,
                    "<li{class}><a href=\"#p={}\">{}</a></li>",
                    join(&path[..=i]),
                    escape(label)
                );
            }
            let _ = writeln!(
                out,
                "</ol>\n<p class=\"checker bad\">then the checker says: {}</p>",
                escape(&view.checker)
            );
        }
    }
}

fn browser(out: &mut String, p: &Page<'_>) {
    out.push_str(
        "<h2>The state space</h2>\n<p class=\"note\">The search's own states (the same \
         scope and reductions as the counts above). A state is named by the actions taken \
         from the initial state; the actions on the counterexample's path are marked.</p>\n\
         <p><button id=\"initial\" type=\"button\">initial state</button>\
         <button id=\"back\" type=\"button\">back one step</button></p>\n",
    );
    let view = match p.first {
        Ok(v) => v,
        Err(why) => {
            let _ = writeln!(out, "<p id=\"api-error\">{}</p>", escape(why));
            return;
        }
    };
    out.push_str("<div id=\"browser\">\n<div>\n<h3>Path</h3>\n<ol class=\"steps\" id=\"trail\">");
    for (i, label) in view.steps.iter().enumerate() {
        let _ = write!(
            out,
            "<li><a href=\"#p={}\">{}</a></li>",
            join(&view.path[..=i]),
            escape(label)
        );
    }
    let _ = writeln!(
        out,
        "</ol>\n<h3>State</h3>\n<pre id=\"state\">{}</pre>\n<pre id=\"pending\">{}</pre>\n\
         <p class=\"checker\" id=\"checker\">checker: {}</p>\n</div>\n<div>\n\
         <h3>Successors</h3>\n<ol class=\"steps\" start=\"0\" id=\"successors\">",
        escape(&view.state.join("\n")),
        escape(&pending(view)),
        escape(&view.checker)
    );
    for s in &view.successors {
        let mut path = view.path.clone();
        path.push(s.step);
        let class = if s.fault { " class=\"fault\"" } else { "" };
        let _ = write!(
            out,
            "<li{class}><a href=\"#p={}\">{}</a></li>",
            join(&path),
            escape(&s.label)
        );
    }
    if view.successors.is_empty() {
        out.push_str("<li>none: the path ends here</li>");
    }
    let _ = writeln!(
        out,
        "</ol>\n<p class=\"note\" id=\"more\">{}</p>\n<p id=\"api-error\"></p>\n</div>\n</div>",
        if view.more_successors > 0 {
            format!("{} more not listed", view.more_successors)
        } else {
            String::new()
        }
    );
}

fn stock(out: &mut String, p: &Page<'_>) {
    out.push_str("<h2>stateright's stock Explorer</h2>\n<p class=\"note\" id=\"stock\">");
    match p.stock {
        Some(url) => {
            let _ = write!(
                out,
                "<a href=\"{0}\">{0}</a>: the same model in stateright's own page. Its counts \
                 differ from the ones above: it keeps every state's times (no time shift: \
                 states that differ only in when things happen are counted apart), and its \
                 \"Run to completion\" explores every state where kvsim's search stops at the \
                 first violation. It opens at the initial state and names the property \
                 \"the model's check\".",
                escape(url)
            );
        }
        None => out.push_str("not served."),
    }
    out.push_str("</p>\n");
}

/// The requests the clients wait on, one a line (as the script renders them too).
fn pending(view: &StateView) -> String {
    if view.pending.is_empty() {
        "pending: none".to_string()
    } else {
        view.pending.join("\n")
    }
}

/// A path as the page names it: `0.2.1`.
fn join(path: &[usize]) -> String {
    path.iter()
        .map(|k| k.to_string())
        .collect::<Vec<_>>()
        .join(".")
}
