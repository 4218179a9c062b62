//! `kvsim explore TARGET`: every interleaving and fault of a bounded scope, with
//! stateright; or its Explorer in a browser (`--serve`).

use crate::error::{self, CliError};
use crate::installed::registry;
use crate::out::{out, outln};
use kvsim::explore::{Scope, SearchLimits};
use kvsim::harness::target::{ExploreReport, Target};
use kvsim::Verdict;
use kvsim_models::registry;
use serde_json::json;
use std::io::IsTerminal;
use std::process::ExitCode;

/// Options of `kvsim explore`.
#[derive(clap::Args, Debug, Clone)]
pub struct Args {
    /// The target, `MODEL/VARIANT` (e.g. `fifo/fixed`).
    pub target: String,
    /// Number of clients (default: the model's explore scope, `kvsim list`; 2 for most).
    #[arg(long)]
    pub clients: Option<usize>,
    /// Operations per client (default: the model's explore scope; 2 for most).
    #[arg(long)]
    pub ops: Option<usize>,
    /// Faults: `none` or a comma-separated list of KIND or KIND:BUDGET (budget per kind,
    /// 1 when not given), kinds evict, lru, expire, skew, restart, crash, lose, pause,
    /// shard-fail.
    #[arg(long, default_value = "none")]
    pub faults: String,
    /// Print one JSON object.
    #[arg(long)]
    pub json: bool,
    /// Checker threads of the depth-first search (a violation's shortest counterexample
    /// within its workload is then searched on one thread).
    #[arg(long, default_value_t = 1)]
    pub threads: usize,
    /// After the search, serve kvsim's Explorer page on this address (`PORT` or `:PORT`
    /// listen on loopback, `HOST:PORT` where told; port 0 takes a free one): the verdict,
    /// the counts, the counterexample step by step and the state space to browse, with
    /// stateright's stock Explorer on another port beside it.
    #[arg(long)]
    pub serve: Option<String>,
    /// The seed: fixes the random numbers the structure draws through its kv handle and
    /// the clocks `skew` draws. The workload is not drawn: every operation the model can
    /// give is explored.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Values a large workload choice takes: a choice among more than
    /// `--every-value-up-to` values (a sleep of 500..3000 ms) takes this many, spread over
    /// its range (default: the model's, `kvsim list`; 4 for most).
    #[arg(long)]
    pub draws: Option<u64>,
    /// Choices among at most this many values take every value (default: the model's;
    /// 32 for most, so that a `below(20)` picking the kind of operation covers every kind).
    #[arg(long)]
    pub every_value_up_to: Option<u64>,
    /// Which workloads: `all` (every operation each client can run) or `seed` (only the
    /// one the seed draws, as `kvsim check` does: a narrower scope).
    #[arg(long, default_value = "all")]
    pub workload: String,
    /// Virtual seconds after which a path is not expanded further (default: the model's,
    /// `kvsim list`; 10 for most).
    #[arg(long)]
    pub horizon: Option<f64>,
    /// Steps (KV calls and wake-ups) one operation may take before its path is cut
    /// (default: the model's; 24 for most).
    #[arg(long)]
    pub max_op_steps: Option<u32>,
    /// Stop with `unknown` after generating this many states.
    #[arg(long)]
    pub max_states: Option<usize>,
    /// Stop with `unknown` when the process holds this many MiB.
    #[arg(long)]
    pub max_memory: Option<u64>,
    /// Keep the history's virtual times in the state (default: only for models whose
    /// checks read them, event-log and visitor-counter).
    #[arg(long)]
    pub timed: bool,
    /// Explore every permutation of interchangeable clients instead of one of each (the
    /// verdict is the same; the search is larger): to compare, or to distrust the reduction.
    #[arg(long)]
    pub no_symmetry: bool,
    /// Keep since when each client has been runnable in every state, also where no path
    /// can starve it any more (the verdict is the same; the search is larger): to compare,
    /// or to distrust the fairness abstraction.
    #[arg(long)]
    pub no_fairness_abstraction: bool,
    /// Keep every state's times, also when no client reads its clock and no command
    /// involves time (the verdict is the same; the search is larger, and paths are cut at
    /// the horizon): to compare, or to distrust the time-shift reduction.
    #[arg(long)]
    pub no_time_shift: bool,
    /// Leave out steps that commute with steps already explored (sleep sets, a
    /// partial-order reduction: the same states visited and checked, the same verdict,
    /// fewer repeats generated; `total_states_unreduced` says how many a search without
    /// it generates). Pays where clients touch different keys.
    #[arg(long)]
    pub sleep_sets: bool,
    /// How long a client waits for a lost or late reply before it sees the timeout, in
    /// virtual ms (0: at once).
    #[arg(long, value_name = "MS", default_value_t = 0)]
    pub timeout_ms: u64,
}

/// Where `--serve ADDR` listens: loopback unless a host is given.
pub fn serve_address(addr: &str) -> String {
    let addr = addr.trim();
    if let Some(port) = addr.strip_prefix(':') {
        format!("127.0.0.1:{port}")
    } else if addr.parse::<u16>().is_ok() {
        format!("127.0.0.1:{addr}")
    } else {
        addr.to_string()
    }
}

/// The scope the options describe; `entry` gives the model's defaults.
pub fn scope(args: &Args, entry: &registry::Entry) -> Result<Scope, String> {
    let mut scope = entry.explore.clone();
    scope.config.clients = args.clients.unwrap_or(scope.config.clients);
    scope.config.ops = args.ops.unwrap_or(scope.config.ops);
    if let Some(n) = args.draws {
        if n < 2 {
            return Err(format!(
                "bad --draws {n}: expected at least 2 values per choice"
            ));
        }
        scope.draw_values = n;
    }
    if let Some(n) = args.every_value_up_to {
        if n < 2 {
            return Err(format!("bad --every-value-up-to {n}: expected at least 2"));
        }
        scope.every_value_up_to = n;
    }
    scope.seeded_workload = match args.workload.as_str() {
        "all" => false,
        "seed" => true,
        other => return Err(format!("bad --workload {other:?}: expected all or seed")),
    };
    scope.faults = Scope::parse_faults(&args.faults)?;
    scope.seed = args.seed;
    scope.symmetry = !args.no_symmetry;
    scope.fairness_abstraction = !args.no_fairness_abstraction;
    scope.time_shift = !args.no_time_shift;
    if args.timeout_ms > 86_400_000 {
        return Err(format!(
            "bad --timeout-ms {}: expected at most 86400000 (one day)",
            args.timeout_ms
        ));
    }
    scope.config.timeout_ms = args.timeout_ms;
    if let Some(h) = args.horizon {
        if !(h > 0.0 && h.is_finite()) {
            return Err(format!(
                "bad --horizon {h}: expected a positive number of seconds"
            ));
        }
        scope.horizon_ms = (h * 1000.0).round() as u64;
    }
    if let Some(n) = args.max_op_steps {
        scope.max_op_steps = n.max(1);
    }
    scope.times |= args.timed;
    if scope.config.clients == 0 || scope.config.ops == 0 {
        return Err("expected at least 1 client and 1 operation".to_string());
    }
    Ok(scope)
}

/// Runs `kvsim explore`; returns the exit code (0 ok, 1 violation, 2 usage, 3 unknown).
pub fn main(args: &Args) -> Result<ExitCode, CliError> {
    let entries = registry();
    let (index, variants) = registry::resolve(&entries, &args.target).map_err(CliError::new)?;
    let scope = scope(args, &entries[index]).map_err(CliError::new)?;
    let [variant] = variants[..] else {
        return Err(CliError::new(format!(
            "expected one target MODEL/VARIANT (e.g. {0}/fixed), found {0:?}",
            args.target
        )));
    };
    let target = entries[index].target(variant);
    let mut limits = SearchLimits {
        threads: args.threads.max(1),
        progress: !args.json && std::io::stderr().is_terminal(),
        reduction: args.sleep_sets,
        ..SearchLimits::default()
    };
    if let Some(n) = args.max_states {
        limits.max_states = n;
    }
    if let Some(mib) = args.max_memory {
        limits.max_memory_bytes = mib << 20;
    }
    let workloads = match target.workloads(&scope) {
        Ok(w) => w,
        Err(why) => {
            // A bound of the search, not bad input: unknown, with the reason.
            if args.serve.is_some() {
                eprintln!("kvsim: not serving: no search ran (its workloads are too many)");
            }
            if args.json {
                outln!(
                    "{}",
                    json!({"target": target.name(), "scope": scope, "verdict": "unknown",
                           "reason": why})
                )?;
            } else {
                outln!("kvsim explore {} · {}", target.name(), scope.describe())?;
                outln!("  verdict  unknown: {why}")?;
            }
            return Ok(error::code(Verdict::Unknown(why).exit_code()));
        }
    };
    let head = header(target.name(), &scope, workloads);
    if !args.json {
        // The header before the search: a long search shows what it is doing.
        out!("{head}")?;
        crate::out::flush()?;
    }
    let report = explore(target, &scope, &limits);
    let mut text = body(&report);
    if args.sleep_sets && !report.reduced {
        // Asked for and not applied: say why, rather than a silent full search.
        text.push_str(
            "  order    sleep sets not applied: they need a time-free search (no client \
             reads its clock, no command involves time), no noisy neighbour and at most 8 \
             clients; every step was taken\n",
        );
    }
    if args.json {
        outln!("{}", to_json(&report))?;
    } else {
        out!("{text}")?;
    }
    if let Some(addr) = &args.serve {
        crate::out::flush()?;
        crate::explore_page::serve(target, &scope, report, format!("{head}{text}"), addr)?;
        return Ok(ExitCode::SUCCESS);
    }
    Ok(error::code(report.verdict.exit_code()))
}

fn explore(target: &dyn Target, scope: &Scope, limits: &SearchLimits) -> ExploreReport {
    target.explore(scope, limits)
}

/// The first lines of the text form, printed before the search: the target, the scope,
/// and how many workloads it covers ([`kvsim::report::explore_header`]).
pub fn header(target: &str, scope: &Scope, workloads: (u64, bool)) -> String {
    kvsim::report::explore_header(target, scope, workloads)
}

/// The JSON form: `verdict` (`ok`, `violation`, `unknown`), `reason`, the state counts,
/// `millis`, the scope, and for a violation the counterexample's report and token.
pub fn to_json(r: &ExploreReport) -> serde_json::Value {
    json!({
        "target": r.target,
        "scope": r.scope,
        "verdict": r.verdict.name(),
        "reason": r.verdict.reason(),
        "unique_states": r.unique_states,
        "total_states": r.total_states,
        "reduction": if r.reduced { "sleep sets" } else { "none" },
        "total_states_unreduced": r.total_states + r.slept,
        "max_depth": r.max_depth,
        "millis": r.millis,
        "states_per_s": r.states_per_s,
        "horizon_cut": r.horizon_cut,
        "steps_cut": r.steps_cut,
        "workloads": r.workloads,
        "interchangeable": r.interchangeable,
        "bound": r.bound,
        "time_free": r.time_free,
        "time_dependence": r.time_dependence,
        "warning": r.warning,
        "token": r.token,
        "counterexample": r.counterexample,
    })
}

/// The text form after the header: the verdict, the figures, the counterexample.
pub fn body(r: &ExploreReport) -> String {
    kvsim::report::explore_body(r)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn serve_addresses_default_to_loopback() {
        assert_eq!(serve_address("3000"), "127.0.0.1:3000");
        assert_eq!(serve_address(":3000"), "127.0.0.1:3000");
        assert_eq!(serve_address("0.0.0.0:80"), "0.0.0.0:80");
    }
}
