//! An exhaustive search's report as text: what `kvsim explore` prints and what
//! [`crate::Explore`] panics with.

use crate::explore::Scope;
use crate::harness::records::ExploreReport;
use crate::verdict::Verdict;

/// The first lines of the text form, printed before the search: the target, the scope,
/// and how many workloads it covers (`spread`: a choice among many values took only
/// [`Scope::draw_values`] of them).
pub fn explore_header(target: &str, scope: &Scope, (workloads, spread): (u64, bool)) -> String {
    let mut out = format!("kvsim explore {target} · {}\n", scope.describe());
    if scope.seeded_workload {
        out.push_str(&format!(
            "  scope    1 workload: the one seed {} draws (--workload all for every one)\n",
            scope.seed
        ));
        return out;
    }
    let plural = if workloads == 1 { "" } else { "s" };
    out.push_str(&format!(
        "  scope    {workloads} workload{plural}: every operation each client can run"
    ));
    if spread {
        out.push_str(&format!(
            " (a choice among more than {} values takes {} of them, --every-value-up-to, --draws)",
            scope.every_value_bound(),
            scope.draw_values
        ));
    }
    out.push('\n');
    out
}

/// The text form after the header: the verdict, the figures, and for a violation the
/// counterexample's report (the same as `kvsim check` prints) with its replay token.
pub fn explore_body(r: &ExploreReport) -> String {
    let mut out = String::new();
    if let Some(w) = &r.warning {
        out.push_str(&format!("warning: {w}\n"));
    }
    let verdict = match &r.verdict {
        Verdict::Ok => "ok: every path of the scope passes".to_string(),
        Verdict::Violation(v) => format!("violation: {}: {}", v.property, v.reason),
        Verdict::Unknown(why) => format!("unknown: {why}"),
    };
    out.push_str(&format!("  verdict  {verdict}\n"));
    out.push_str(&format!(
        "  states   {} unique, {} total · depth {} · {} ms · {} states/s\n",
        r.unique_states, r.total_states, r.max_depth, r.millis, r.states_per_s
    ));
    if r.reduced {
        out.push_str(&format!(
            "  order    sleep sets: {} steps that commute with steps already explored left out \
             (every state still visited; {} states generated without them)\n",
            r.slept,
            r.total_states + r.slept
        ));
    }
    for set in &r.interchangeable {
        let names: Vec<String> = set.iter().map(|c| format!("C{c}")).collect();
        out.push_str(&format!(
            "  symmetry {} interchangeable: one state of every permutation of them explored \
             (--no-symmetry for all)\n",
            names.join(" ")
        ));
    }
    if r.time_free {
        out.push_str(
            "  time     free: no client read its clock and no command involved time, so states \
             that differ only in when things happen were one, and no path needed the horizon \
             (--no-time-shift to keep times)\n",
        );
    } else if let Some(why) = &r.time_dependence {
        out.push_str(&format!(
            "  time     kept in every state: {why} (the time-free search stopped there)\n"
        ));
    }
    if let Some(cx) = &r.counterexample {
        out.push_str("\nshortest counterexample:\n\n");
        out.push_str(&super::text_styled(cx, false));
    }
    out
}

/// The whole text form, as `kvsim explore` prints it: [`explore_header`] then
/// [`explore_body`].
pub fn explore_text(r: &ExploreReport) -> String {
    let mut out = explore_header(&r.target, &r.scope, (r.workloads, false));
    out.push_str(&explore_body(r));
    out
}
