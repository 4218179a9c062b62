//! `kvsim check-history`: checks history files from outside against a spec.
//!
//! ```text
//! kvsim check-history --spec SPEC [--format jsonl|jepsen-edn|jepsen-log]
//!                     [--fail-means no-effect|compare-failed]
//!                     [--period SECS] [--window SECS]
//!                     [--time-limit SECS] [--max-steps N] [--max-memory MIB]
//!                     [--json] FILE...
//! ```
//! The specs come from the spec registry ([`kvsim_models::registry::specs`]): a sequential
//! spec (`src/specs/`) is checked for linearizability; the time-window specs
//! `visitor-counter` (`--period`) and `event-log` (`--window`) by their seed models'
//! checkers.
//! One line per file, `FILE: ok|violation|unknown MILLIS ms` (a violation's reason and an
//! unknown's cause after a colon); `--json` prints an array of objects instead. Exit
//! codes: 0 all ok, 1 any violation, 3 unknown (and no violation), 2 an error (usage, an
//! unreadable or malformed file; errors win over verdicts).
//!
//! No evidence, no pass: a file in which no operation was recognised (empty, another
//! logger's log, JSON read as a log), or whose operations have no known outcome, is
//! `unknown` with the reason, never `ok`.

use crate::error::{self, CliError};
use clap::builder::PossibleValuesParser;
use kvsim::check::files::FileOptions;
use kvsim::check::linearizability::{step_limit_reason, time_limit_reason};
use kvsim::check::registry::{SpecArgs, MAX_PARAMETER_SECS};
use kvsim::check::CheckerLimits;
use kvsim::formats::{FailMeans, Format, Value};
use serde_json::{json, Value as Json};
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

/// The longest `--time-limit` accepted, in seconds (about 31 years): longer ones cannot
/// be added to the clock.
const MAX_TIME_LIMIT_SECS: f64 = 1e9;

/// Parses `--time-limit`: seconds, more than 0 and at most [`MAX_TIME_LIMIT_SECS`].
fn time_limit(text: &str) -> Result<f64, String> {
    let range =
        format!("expected a number of seconds greater than 0 and at most {MAX_TIME_LIMIT_SECS:.0}");
    match text.trim().parse::<f64>() {
        Ok(s) if s.is_finite() && s > 0.0 && s <= MAX_TIME_LIMIT_SECS => Ok(s),
        Ok(s) if s.is_nan() => Err(format!("{range}, found {text} (not a number)")),
        Ok(_) => Err(format!("{range}, found {text} (out of range)")),
        Err(_) => Err(format!("{range}, found {text}")),
    }
}

/// Parses `--initial`: an EDN map.
fn initial_values(text: &str) -> Result<Value, String> {
    match kvsim::formats::edn::parse_one(text, 1) {
        Ok(v @ Value::Map(_)) => Ok(v),
        Ok(v) => Err(format!("expected an EDN map like {{:x 0 :y 0}}, found {v}")),
        Err(e) => Err(format!(
            "expected an EDN map like {{:x 0 :y 0}}: expected {}, found {}",
            e.expected, e.found
        )),
    }
}

/// Arguments of `kvsim check-history`.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// The spec to check against: a sequential spec (register, cas-register, kv, counter,
    /// queue, mutex, set, list-append, multi-register; linearizability), or a time-window
    /// spec judged by its seed model's checker (visitor-counter, event-log).
    ///
    /// The time-window specs need a `time` on every invoke and ok, in milliseconds on the
    /// clock the structure reads (a real client: Unix epoch milliseconds, e.g. Python's
    /// int(time.time() * 1000)), as their periods and windows are that clock's. A fail
    /// is no effect, an info unknown.
    ///
    /// visitor-counter (004's MCVisitorCounter; needs --period): `increment` (values
    /// ignored); `value` returning the count, an integer >= 0; `sleep` (ignored). Period p
    /// is [p*T, (p+1)*T) s; a value() whose call and return lie in periods p..q must
    /// return a count of period r-1 for some r in p..q: at least the visits called and
    /// returned within it, at most those whose span (to forever for an info) meets it.
    ///
    /// event-log (001's MCEventLog; needs --window): `put` with the event's id (an
    /// integer from 0 to 4294967295); `fetch` (fetch(), the last W seconds) returning the
    /// ids [ID, ...]; `fetch-range` (fetch(first, last)) returning the window it read,
    /// {"back": B, "span": S, "events": [ID, ...]} (first = now - B, last = first + S in
    /// whole seconds, now a clock reading during the call); `poll` (the article's polling
    /// use) returning its rounds' windows in order; `sleep` (ignored). A fetch returns no
    /// event twice (nor a poll across its rounds), none not yet put or older than the
    /// window, and every event put before it within the last W-1 s (and, for a window,
    /// inside it).
    ///
    /// A file with no value() completed (visitor-counter) or no fetch, fetch-range or
    /// poll completed (event-log) is unknown.
    #[arg(long, value_parser = PossibleValuesParser::new(kvsim_models::registry::specs().names()))]
    spec: String,
    /// The files' format. Default: guessed from each file's first non-blank line
    /// (`{"` JSON lines, `{`, `[` or `(` Jepsen EDN, `jepsen.util - ` Jepsen log).
    #[arg(long, value_parser = PossibleValuesParser::new(["jsonl", "jepsen-edn", "jepsen-log"]))]
    format: Option<String>,
    /// What a `fail` completion means: `no-effect` (it certainly did not take effect and
    /// says nothing about the state: Jepsen's and Knossos's reading) or `compare-failed`
    /// (a failed cas also says the register did not hold its old value, a failed
    /// try-acquire or release that the lock was not free or not ours: Porcupine's etcd
    /// reading). Default: `compare-failed` for jepsen-log files, `no-effect` for the
    /// others.
    #[arg(long, value_parser = PossibleValuesParser::new(["no-effect", "compare-failed"]))]
    fail_means: Option<String>,
    /// The registers' initial values for `--spec multi-register`, as an EDN map (Knossos's
    /// `(multi-register {:x 0 :y 0})` is `--initial '{:x 0 :y 0}'`). Default: every
    /// register unwritten (a read of it returns nil).
    #[arg(long, value_name = "EDN-MAP", value_parser = initial_values)]
    initial: Option<Value>,
    /// The visitor counter's period T for `--spec visitor-counter` (required there), in
    /// whole seconds from 1 to 1000000000: the T of MCVisitorCounter(mc, name, T) (the
    /// article's example: 180; kvsim's visitor-counter model: 2).
    #[arg(long, value_name = "SECS", value_parser = clap::value_parser!(u64).range(1..=MAX_PARAMETER_SECS))]
    period: Option<u64>,
    /// The event log's window W = timeChunk * (numChunks-1) for `--spec event-log`
    /// (required there), in whole seconds from 1 to 1000000000 (MCEventLog's defaults,
    /// 10 and 10: 90; kvsim's event-log model, 5 and 3: 10).
    #[arg(long, value_name = "SECS", value_parser = clap::value_parser!(u64).range(1..=MAX_PARAMETER_SECS))]
    window: Option<u64>,
    /// Give up on a file after this many seconds of checking (its verdict is then
    /// `unknown`); more than 0, at most 1000000000. Default: no limit. Sequential specs
    /// only (as --max-memory): the time-window checks take polynomial time.
    #[arg(long, value_name = "SECS", value_parser = time_limit, allow_hyphen_values = true)]
    time_limit: Option<f64>,
    /// Give up on a file (its verdict is then `unknown`) when the search's memo holds this
    /// many MiB. Default: 1024 (1 GiB), on every machine. Sequential specs only.
    #[arg(long, value_name = "MIB", value_parser = clap::value_parser!(u64).range(1..=(1 << 30)))]
    max_memory: Option<u64>,
    /// Give up on a file (its verdict is then `unknown`) after this many search steps, a
    /// bound that ends the same search at the same point on every machine. Default:
    /// 100000000. Sequential specs only.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    max_steps: Option<u64>,
    /// Print a JSON array of {file, verdict, millis, reason?, op_line?, partial_lines?}.
    #[arg(long)]
    json: bool,
    /// Also write the step-through viewer of the (one) history file's verdict to this
    /// file: a lane per process with its invocations and completions, the operation a
    /// violation names highlighted, with the reason (a history has no store). At most
    /// 20000 events.
    #[arg(long, value_name = "HTML")]
    html: Option<PathBuf>,
    /// History files.
    #[arg(required = true, value_name = "FILE")]
    files: Vec<PathBuf>,
}

/// Runs the command, printing to stdout; returns the exit code.
pub fn main(args: Args) -> Result<ExitCode, CliError> {
    run(&args, &mut std::io::stdout().lock())
}

/// Runs the command, writing results to `out` (errors go to stderr); returns the exit
/// code.
fn run(args: &Args, out: &mut impl Write) -> Result<ExitCode, CliError> {
    let format = args.format.as_deref().and_then(Format::from_name);
    let fail_means = args.fail_means.as_deref().and_then(FailMeans::from_name);
    let mut limits = CheckerLimits::for_histories();
    if let Some(s) = args.time_limit {
        limits.time = match Duration::try_from_secs_f64(s) {
            Ok(d) if s > 0.0 && s <= MAX_TIME_LIMIT_SECS => Some(d),
            _ => {
                return Err(CliError::new(format!("check-history: --time-limit: expected a number of seconds greater than 0 and at most {MAX_TIME_LIMIT_SECS:.0}, found {s}")));
            }
        };
    }
    if let Some(mib) = args.max_memory {
        limits.max_memory = Some(mib << 20);
    }
    if let Some(steps) = args.max_steps {
        limits.max_steps = Some(steps);
    }
    let specs = kvsim_models::registry::specs();
    let spec_args = SpecArgs {
        initial: args.initial.clone(),
        period_secs: args.period,
        window_secs: args.window,
    };
    let checker = specs
        .checker(&args.spec, &spec_args)
        .map_err(|e| CliError::new(format!("check-history: {e}")))?;
    let sequential = specs.get(&args.spec).is_some_and(|e| e.sequential);
    if let (false, Some(reading)) = (sequential, &args.fail_means) {
        return Err(CliError::new(format!(
            "check-history: --fail-means {reading}: expected a sequential spec, found --spec {} \
             (whose fail is always no effect)",
            args.spec
        )));
    }
    if args.html.is_some() && args.files.len() != 1 {
        return Err(CliError::new(format!(
            "check-history: --html: expected one history file, found {}",
            args.files.len()
        )));
    }
    let how = FileOptions {
        format,
        fail_means,
        limits,
    };
    let (mut errors, mut violations, mut unknowns) = (0, 0, 0);
    let mut objects = Vec::new();
    for path in &args.files {
        let file = path.display().to_string();
        let result = checker.check_file(path, how);
        let mut r = match result {
            Ok(r) => r,
            Err(e) => {
                // Reported now; the other files are still checked.
                CliError::new(format!("check-history: {e}")).report();
                errors += 1;
                continue;
            }
        };
        if let Some(html) = &args.html {
            let property = if sequential {
                format!("linearizability ({})", args.spec)
            } else {
                args.spec.clone()
            };
            write_viewer(html, (&property, &args.spec), path, format, &r)?;
        }
        match r.verdict {
            "violation" => violations += 1,
            "unknown" => {
                unknowns += 1;
                r.detail = r.detail.map(|why| with_flag(why, limits));
            }
            _ => {}
        }
        if args.json {
            let mut o = json!({"file": file, "verdict": r.verdict, "millis": (r.millis * 1000.0).round() / 1000.0});
            if let Some(d) = &r.detail {
                o["reason"] = Json::from(d.as_str());
            }
            if let Some(l) = r.op_line {
                o["op_line"] = Json::from(l);
                o["partial_lines"] = Json::from(r.partial_lines.clone());
            }
            objects.push(o);
        } else {
            let mut line = format!("{file}: {} {:.3} ms", r.verdict, r.millis);
            if let Some(d) = &r.detail {
                line.push_str(": ");
                line.push_str(d);
            }
            writeln!(out, "{line}").map_err(crate::out::error)?;
        }
    }
    if args.json {
        writeln!(out, "{}", Json::Array(objects)).map_err(crate::out::error)?;
    }
    if errors > 0 {
        Err(CliError::Inputs)
    } else if violations > 0 {
        Ok(error::code(1))
    } else if unknowns > 0 {
        Ok(error::code(3))
    } else {
        Ok(ExitCode::SUCCESS)
    }
}

/// Writes the viewer of `path`'s verdict `r` to `html`.
fn write_viewer(
    html: &std::path::Path,
    (property, spec): (&str, &str),
    path: &std::path::Path,
    format: Option<Format>,
    r: &kvsim::check::files::FileVerdict,
) -> Result<(), CliError> {
    let fail = |e: String| CliError::new(format!("check-history: --html: {e}"));
    let events = kvsim::formats::read_events(path, format).map_err(|e| fail(e.to_string()))?;
    let page = crate::history_view::page(property, spec, &path.display().to_string(), &events, r)
        .map_err(fail)?;
    std::fs::write(html, page).map_err(|e| fail(format!("cannot write {}: {e}", html.display())))
}

/// A bound's reason with the flag that raises it (the memory bound names its own).
fn with_flag(why: String, limits: CheckerLimits) -> String {
    let flag = if limits.max_steps.map(step_limit_reason) == Some(why.clone()) {
        "--max-steps"
    } else if limits.time.map(time_limit_reason) == Some(why.clone()) {
        "--time-limit"
    } else {
        return why;
    };
    format!("{why} (raise it with {flag})")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(spec: &str, extra: &[&str], files: &[PathBuf]) -> Args {
        use clap::Parser;
        #[derive(Parser)]
        struct Cli {
            #[command(flatten)]
            args: Args,
        }
        let mut argv = vec!["kvsim".to_string(), "--spec".into(), spec.into()];
        argv.extend(extra.iter().map(|s| s.to_string()));
        argv.extend(files.iter().map(|f| f.display().to_string()));
        Cli::try_parse_from(argv).expect("valid arguments").args
    }

    fn run_to_string(a: &Args) -> (ExitCode, String) {
        let mut out = Vec::new();
        let code = error::exit(run(a, &mut out));
        (code, String::from_utf8(out).expect("utf-8"))
    }

    fn temp(name: &str, text: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("kvsim-check-history-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("temp dir");
        let path = dir.join(name);
        std::fs::write(&path, text).expect("write");
        path
    }

    const OK: &str = "{:process 0, :type :invoke, :f :write, :value 1}\n{:process 0, :type :ok, :f :write, :value 1}\n{:process 1, :type :invoke, :f :read, :value nil}\n{:process 1, :type :ok, :f :read, :value 1}\n";
    const STALE: &str = "{\"process\": 0, \"type\": \"invoke\", \"f\": \"write\", \"value\": 1}\n{\"process\": 0, \"type\": \"ok\", \"f\": \"write\", \"value\": 1}\n{\"process\": 1, \"type\": \"invoke\", \"f\": \"read\"}\n{\"process\": 1, \"type\": \"ok\", \"f\": \"read\", \"value\": null}\n";

    #[test]
    fn exit_codes_follow_the_verdicts() {
        let ok = temp("ok.edn", OK);
        let stale = temp("stale.jsonl", STALE);
        let broken = temp("broken.jsonl", "{\"process\": 0}\n");
        let (code, text) = run_to_string(&args("register", &[], std::slice::from_ref(&ok)));
        assert_eq!(code, ExitCode::from(0));
        assert!(
            text.starts_with(&format!("{}: ok ", ok.display())),
            "{text}"
        );
        let (code, text) = run_to_string(&args("register", &[], &[ok.clone(), stale.clone()]));
        assert_eq!(code, ExitCode::from(1));
        let line = text.lines().nth(1).expect("two lines");
        assert!(line.contains(": violation ") && line.ends_with(
            "ms: read returned nothing, but the register holds 1 (process 1, read at line 3; 1 operations linearized before it)"
        ), "{line}");
        let (code, _) = run_to_string(&args(
            "register",
            &[],
            &[ok.clone(), broken.clone(), stale.clone()],
        ));
        assert_eq!(code, ExitCode::from(2), "errors win");
    }

    #[test]
    fn json_lists_file_verdict_and_millis() {
        let ok = temp("ok2.edn", OK);
        let stale = temp("stale2.jsonl", STALE);
        let (code, text) = run_to_string(&args(
            "cas-register",
            &["--json", "--format", "jepsen-edn"],
            std::slice::from_ref(&ok),
        ));
        assert_eq!(code, ExitCode::from(0));
        let v: Json = serde_json::from_str(&text).expect("json");
        assert_eq!(v[0]["file"], Json::from(ok.display().to_string()));
        assert_eq!(v[0]["verdict"], Json::from("ok"));
        assert!(v[0]["millis"].as_f64().is_some());
        let (code, text) =
            run_to_string(&args("register", &["--json"], std::slice::from_ref(&stale)));
        assert_eq!(code, ExitCode::from(1));
        let v: Json = serde_json::from_str(&text).expect("json");
        assert_eq!(v[0]["verdict"], Json::from("violation"));
        assert_eq!(v[0]["op_line"], Json::from(3));
        assert_eq!(v[0]["partial_lines"], Json::from(vec![1]));
    }

    #[test]
    fn a_time_limit_must_be_in_range() {
        for bad in ["0", "-1", "1e20", "NaN", "inf", "1e9x"] {
            let e = time_limit(bad).unwrap_err();
            assert!(
                e.starts_with(
                    "expected a number of seconds greater than 0 and at most 1000000000, found "
                ),
                "{e}"
            );
        }
        assert_eq!(time_limit("1e9"), Ok(1e9));
        assert_eq!(time_limit("0.5"), Ok(0.5));
    }
}
