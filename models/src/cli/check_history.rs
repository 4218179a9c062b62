//! `kvsim check-history`: checks history files from outside against a spec.
//!
//! ```text
//! kvsim check-history --spec SPEC [--format jsonl|jepsen-edn|jepsen-log]
//!                     [--time-limit SECS] [--json] FILE...
//! ```
//! One line per file, `FILE: ok|violation|unknown MILLIS ms` (a violation's reason and an
//! unknown's cause after a colon); `--json` prints an array of objects instead. Exit
//! codes: 0 all ok, 1 any violation, 3 unknown (and no violation), 2 an error (usage, an
//! unreadable or malformed file; errors win over verdicts).

use clap::builder::PossibleValuesParser;
use kvsim::check::{check_linearizability_parallel, Limits, Linearization};
use kvsim::formats::{pair, read_events, to_history, Format, FormatError, FromRaw, RawOp, Value};
use kvsim::specs::{
    cas_register::CasRegisterSpec, counter::CounterSpec, kv::KvSpec, list_append::ListAppendSpec,
    mutex::MutexSpec, queue::QueueSpec, register::RegisterSpec, set::SetSpec, NAMES,
};
use serde_json::{json, Value as Json};
use std::io::Write;
use std::path::PathBuf;
use std::time::{Duration, Instant};

/// Arguments of `kvsim check-history`.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// The sequential spec to check against.
    #[arg(long, value_parser = PossibleValuesParser::new(NAMES))]
    spec: String,
    /// The files' format. Default: guessed from each file's first non-blank line
    /// (`{"` JSON lines, `{` or `[` Jepsen EDN, `jepsen.util - ` Jepsen log).
    #[arg(long, value_parser = PossibleValuesParser::new(["jsonl", "jepsen-edn", "jepsen-log"]))]
    format: Option<String>,
    /// Give up on a file after this many seconds of checking (its verdict is then
    /// `unknown`). Default: no limit.
    #[arg(long, value_name = "SECS")]
    time_limit: Option<f64>,
    /// Print a JSON array of {file, verdict, millis, reason?, op_line?, partial_lines?}.
    #[arg(long)]
    json: bool,
    /// History files.
    #[arg(required = true, value_name = "FILE")]
    files: Vec<PathBuf>,
}

/// The result for one file.
struct FileResult {
    verdict: &'static str,
    millis: f64,
    detail: Option<String>,
    op_line: Option<usize>,
    partial_lines: Vec<usize>,
}

/// Runs the command, printing to stdout; returns the exit code.
pub fn main(args: Args) -> i32 {
    run(&args, &mut std::io::stdout().lock())
}

/// Runs the command, writing results to `out` (errors go to stderr); returns the exit
/// code.
fn run(args: &Args, out: &mut impl Write) -> i32 {
    let format = args.format.as_deref().and_then(Format::from_name);
    let limits = match args.time_limit {
        Some(s) if !(s.is_finite() && s > 0.0) => {
            eprintln!("kvsim: check-history: expected a positive number of seconds for --time-limit, found {s}");
            return 2;
        }
        Some(s) => Limits::time(Duration::from_secs_f64(s)),
        None => Limits::none(),
    };
    let (mut errors, mut violations, mut unknowns) = (0, 0, 0);
    let mut objects = Vec::new();
    for path in &args.files {
        let file = path.display().to_string();
        let result = match args.spec.as_str() {
            "register" => check_file(&RegisterSpec::<Value>::new(), path, format, limits),
            "cas-register" => check_file(&CasRegisterSpec::<Value>::new(), path, format, limits),
            "kv" => check_file(&KvSpec, path, format, limits),
            "counter" => check_file(&CounterSpec, path, format, limits),
            "queue" => check_file(&QueueSpec::<Value>::new(), path, format, limits),
            "mutex" => check_file(&MutexSpec, path, format, limits),
            "set" => check_file(&SetSpec::<Value>::new(), path, format, limits),
            "list-append" => check_file(&ListAppendSpec::<Value>::new(), path, format, limits),
            other => unreachable!("clap admits only known specs, got {other}"),
        };
        let r = match result {
            Ok(r) => r,
            Err(e) => {
                eprintln!("kvsim: check-history: {e}");
                errors += 1;
                continue;
            }
        };
        match r.verdict {
            "violation" => violations += 1,
            "unknown" => unknowns += 1,
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
            let _ = writeln!(out, "{line}");
        }
    }
    if args.json {
        let _ = writeln!(out, "{}", Json::Array(objects));
    }
    if errors > 0 {
        2
    } else if violations > 0 {
        1
    } else if unknowns > 0 {
        3
    } else {
        0
    }
}

/// Parses one file (not timed) and checks it (timed).
fn check_file<S>(
    spec: &S,
    path: &std::path::Path,
    format: Option<Format>,
    limits: Limits,
) -> Result<FileResult, FormatError>
where
    S: FromRaw + Sync,
    S::Op: Sync,
    S::Ret: Sync,
    S::State: Send,
{
    let file = path.display().to_string();
    let events = read_events(path, format)?;
    let raws: Vec<RawOp> = pair(&events).map_err(|e| e.in_file(&file))?;
    let history = to_history(spec, &raws).map_err(|e| e.in_file(&file))?;
    let start = Instant::now();
    let result = check_linearizability_parallel(spec, &history, limits);
    let millis = start.elapsed().as_secs_f64() * 1000.0;
    Ok(match result {
        Linearization::Ok(_) => FileResult {
            verdict: "ok",
            millis,
            detail: None,
            op_line: None,
            partial_lines: Vec::new(),
        },
        Linearization::Unknown(why) => FileResult {
            verdict: "unknown",
            millis,
            detail: Some(why),
            op_line: None,
            partial_lines: Vec::new(),
        },
        Linearization::Violation(c) => {
            let raw = &raws[c.op];
            let detail = format!(
                "{} (process {}, {} at line {}; {} operations linearized before it)",
                c.reason,
                raw.process,
                raw.f,
                raw.line,
                c.partial.len()
            );
            let _ = spec.name();
            FileResult {
                verdict: "violation",
                millis,
                detail: Some(detail),
                op_line: Some(raw.line),
                partial_lines: c.partial.iter().map(|&i| raws[i].line).collect(),
            }
        }
    })
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

    fn run_to_string(a: &Args) -> (i32, String) {
        let mut out = Vec::new();
        let code = run(a, &mut out);
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
        assert_eq!(code, 0);
        assert!(
            text.starts_with(&format!("{}: ok ", ok.display())),
            "{text}"
        );
        let (code, text) = run_to_string(&args("register", &[], &[ok.clone(), stale.clone()]));
        assert_eq!(code, 1);
        let line = text.lines().nth(1).expect("two lines");
        assert!(line.contains(": violation ") && line.ends_with(
            "ms: read returned nothing, but the register holds 1 (process 1, read at line 3; 1 operations linearized before it)"
        ), "{line}");
        let (code, _) = run_to_string(&args(
            "register",
            &[],
            &[ok.clone(), broken.clone(), stale.clone()],
        ));
        assert_eq!(code, 2, "errors win");
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
        assert_eq!(code, 0);
        let v: Json = serde_json::from_str(&text).expect("json");
        assert_eq!(v[0]["file"], Json::from(ok.display().to_string()));
        assert_eq!(v[0]["verdict"], Json::from("ok"));
        assert!(v[0]["millis"].as_f64().is_some());
        let (code, text) =
            run_to_string(&args("register", &["--json"], std::slice::from_ref(&stale)));
        assert_eq!(code, 1);
        let v: Json = serde_json::from_str(&text).expect("json");
        assert_eq!(v[0]["verdict"], Json::from("violation"));
        assert_eq!(v[0]["op_line"], Json::from(3));
        assert_eq!(v[0]["partial_lines"], Json::from(vec![1]));
    }

    #[test]
    fn a_time_limit_must_be_positive() {
        let ok = temp("ok3.edn", OK);
        let (code, out) = run_to_string(&args("register", &["--time-limit", "0"], &[ok]));
        assert_eq!((code, out.as_str()), (2, ""));
    }
}
