//! The report as one self-contained HTML page: the header, the verdict and its reason, the
//! step-through viewer ([`super::viewer`]: the steps as the text report folds them, with
//! the stores' contents when the report has them), an SVG sequence diagram (a lane per
//! client and one per server, arrows for commands and replies, faults marked, the
//! operations the verdict is about in red), the operations and the replay command
//! ([`super::diagram`] draws the diagram). Inline CSS and script, no network.

use super::escape::escape;
use super::rows::{self, Who};
use super::text::{knobs, REPRESENTATION_LEAD};
use crate::harness::records::RunReport;
use crate::verdict::Verdict;
use std::fmt::Write;

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
.how{color:#3b4252;background:#f4f5f8;border-left:4px solid #8a94a8;padding:6px 12px;margin:8px 0}
tr.setup td{color:#6b7385;font-style:italic}
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
            if let Some(how) = &r.representation {
                let _ = writeln!(
                    out,
                    "<p class=\"how\">{REPRESENTATION_LEAD} {}</p>",
                    escape(how)
                );
            }
        }
        Verdict::Unknown(why) => {
            let _ = writeln!(out, "<p class=\"why\">unknown: {}</p>", escape(why));
        }
    }
    out.push_str("<h2>Step through</h2>\n");
    let no_store = "the store's contents were not recorded for this report";
    // The representation is printed above, beside the reason: not a second time beside
    // the store.
    out.push_str(&super::viewer::section(r, None, Some(no_store), true));
    out.push_str("<h2>Sequence diagram</h2>\n");
    out.push_str(&super::diagram::svg(r));
    let setup = if rows::rows(r).iter().any(|x| x.who == Who::Setup) {
        " Grey, beside the store: the structure's setup, before any client starts."
    } else {
        ""
    };
    let _ = writeln!(
        out,
        "<p class=\"legend\">Time runs down. Solid arrows: commands to a server; dashed: \
         replies; ✗ a lost message. Orange: faults. Red: the operations the verdict is \
         about. Bars on a client's lane: its operations, from invocation to completion.\
         {setup}</p>",
    );
    ops_table(&mut out, r);
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
        r.numbered_steps()
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
