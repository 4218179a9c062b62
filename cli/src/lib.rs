//! The `kvsim` command-line tool as a library: every command of `kvsim` (`list`, `check`,
//! `explore`, `replay`, `ladder`, `report`, `trace`, `stress`, `corpus`, `merge`, …) for the
//! models a crate gives it.
//!
//! kvsim's own binary runs it on the built-in registry; a crate of your own runs it on its
//! own models, with one dependency line (`kvsim-cli`, which re-exports the core crate as
//! [`kvsim`] and the registry's types, [`Entry`], [`Expect`], [`Variant`], …):
//!
//! ```no_run
//! fn models() -> Vec<kvsim_cli::Entry> {
//!     Vec::new() // your `Entry::new(name, about, published, fixed, scenarios)`, …
//! }
//!
//! fn main() -> std::process::ExitCode {
//!     kvsim_cli::main(models)
//! }
//! ```
//!
//! The entry lives here, not in the core crate: `kvsim` knows no particular structure and
//! the CLI depends on it (and on the registry's types in `kvsim-models`), so `kvsim` cannot
//! depend on the CLI. `examples/my-structure/` is a complete crate of this kind.
#![forbid(unsafe_code)]

mod bench;
mod check;
mod check_history;
mod corpus;
mod error;
mod explore;
mod explore_page;
mod history_view;
mod identity;
mod installed;
mod junit;
mod ladder;
mod list;
mod marks;
mod merge;
mod out;
mod progress;
mod replay;
mod report;
mod serve;
mod serve_memory;
mod stress;
mod trace;

pub use installed::Kvsim;
/// The core crate: [`kvsim::Model`], [`kvsim::Kv`], [`kvsim::Scenario`],
/// [`kvsim::SequentialSpec`], the checkers and the simulator.
pub use kvsim;
/// The built-in models and the registry's types (`kvsim_models::registry::registry()` is
/// the registry kvsim's own binary runs on).
pub use kvsim_models;
pub use kvsim_models::expect::{Expect, ExpectedVerdict, Label, Variant};
pub use kvsim_models::registry::Entry;

use clap::{Parser, Subcommand};
use error::CliError;
use std::process::ExitCode;

/// kvsim: deterministic simulation and model checking for KV-store data structures.
#[derive(Parser)]
#[command(name = "kvsim", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Cmd,
}

#[derive(Subcommand)]
enum Cmd {
    /// List models, their variants and scenarios.
    List {
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Check targets (default: every model's scenarios, as a matrix with expectations).
    ///
    /// Exit codes. A gate (`kvsim check TARGET...`): 0 every verdict ok, 1 a violation
    /// (any: an expected one too), 3 no violation but an unknown. Without targets (every
    /// model against its expectations): 0 every verdict as expected, 1 a verdict differs
    /// from its expectation, 3 only unknowns differ. Both: 2 usage or I/O error.
    ///
    /// A violation the registry expects (a published defect, or a fixed variant's
    /// `impossible` or `not yet fixed` scenario) is marked `violation · expected: LABEL` in
    /// the table, `expected_failure: true` in `--json` and `<skipped>` in JUnit, in a gate
    /// too; the marks change no exit code. With `--faults` a gate's scenarios are not the
    /// registry's: no expectation is shown.
    Check(check::Args),
    /// Check every rung of a model (published, each repair alone, all repairs, proposed,
    /// fixed) against every scenario, and list each distinct finding once with the
    /// repairs that remove it.
    ///
    /// Exit codes: 0 every verdict as the model expects, 1 one differs, 2 usage or I/O
    /// error (an unknown model lists the valid ones), 3 unknown (a bound was hit).
    Ladder(ladder::Args),
    /// Exhaustive check of one target in a bounded scope (stateright), or its Explorer.
    ///
    /// Exit codes: 0 every path passes, 1 violation, 2 usage or I/O error, 3 unknown
    /// (a bound was hit).
    Explore(explore::Args),
    /// Replay one run from its token, with the full trace.
    Replay {
        /// The token a failing run printed.
        token: String,
        /// Print the report as JSON.
        #[arg(long)]
        json: bool,
        /// Minimize the run first (a token printed by `kvsim check` is minimized already).
        #[arg(long)]
        shrink: bool,
        /// Also write the step-through viewer of the run to this file: one self-contained
        /// page (no network) stepping through the trace with the store's contents.
        #[arg(long, value_name = "FILE")]
        html: Option<std::path::PathBuf>,
    },
    /// Regenerate the reports: per model its fault matrix and minimal counterexamples.
    Report {
        /// Output directory (default: `reports/` at kvsim's workspace root for kvsim's own
        /// models; for a crate of your own, the directory it names, else required).
        #[arg(long)]
        out: Option<std::path::PathBuf>,
    },
    /// Check history files (JSON lines, Jepsen EDN or Jepsen log) for linearizability, or
    /// against a structure's time-window spec (visitor-counter, event-log).
    CheckHistory(check_history::Args),
    /// Run the performance suite (figures named with their unit).
    Bench {
        /// Print one JSON object with a section per suite.
        #[arg(long)]
        json: bool,
        /// Run the quick suites only (sim, serve, mq, first-violation: about 20 s), unless
        /// suites are named.
        #[arg(long)]
        quick: bool,
        /// Print each figure beside this baseline's (`bench/baseline.json`), with the
        /// ratio now / baseline; with --json, a `compare` section is added.
        #[arg(long, value_name = "FILE")]
        compare: Option<std::path::PathBuf>,
        /// Suites to run (default: all).
        suites: Vec<String>,
    },
    /// Serve the simulated memcached over TCP (memcached 1.6.18's text protocol).
    Serve(serve::ServeArgs),
    /// Run a model against real servers from OS threads and check its history.
    ///
    /// Exit codes: 0 ok, 1 violation, 2 usage or I/O error, 3 unknown.
    Stress(stress::StressArgs),
    /// Look after a failure corpus (`kvsim check --corpus DIR`): list its entries with what
    /// replaying each gives now, or prune the ones that cannot be replayed any more.
    Corpus {
        #[command(subcommand)]
        action: CorpusAction,
    },
    /// Print a `kvsim serve --trace` file as a table: one column per connection, faults in
    /// a column of their own.
    Trace {
        /// The trace file.
        file: std::path::PathBuf,
    },
    /// Combine the `--json` outputs of the shards of one check (`kvsim check --shard I/N
    /// --json`) into its verdict: every shard must be there, all of one check (the same
    /// identity: version, targets, scenarios, every knob, planned runs, seed, budget).
    ///
    /// Exit codes: as `kvsim check`'s (0 ok, 1 violation or a verdict unlike its
    /// expectation, 3 unknown); 2 when the files are not every shard of one check.
    Merge {
        /// The shards' outputs.
        #[arg(required = true)]
        files: Vec<std::path::PathBuf>,
        /// Print the merged results as JSON, in the shape of `kvsim check --json`.
        #[arg(long)]
        json: bool,
        /// Also write the merged results as JUnit XML to this file (as `kvsim check
        /// --junit` does for one job).
        #[arg(long, value_name = "FILE")]
        junit: Option<std::path::PathBuf>,
    },
}

/// What `kvsim corpus` does.
#[derive(Subcommand)]
enum CorpusAction {
    /// Every entry: its target, scenario, and whether it still fails when replayed now.
    List {
        /// The corpus directory.
        #[arg(default_value = ".kvsim/corpus")]
        dir: std::path::PathBuf,
    },
    /// Remove the entries that cannot be replayed any more (unreadable, or naming a target
    /// or scenario kvsim no longer has); with `--passing`, also those that pass now.
    Prune {
        /// The corpus directory.
        #[arg(default_value = ".kvsim/corpus")]
        dir: std::path::PathBuf,
        /// Also remove the entries that pass now (a fixed bug's guard goes with them).
        #[arg(long)]
        passing: bool,
    },
}

/// Runs the command line (`std::env::args`) on `models`, every command that names a model
/// seeing these (`list`, `check`, `explore`, `replay`, `ladder`, `report`, `stress`,
/// `corpus`, `merge`): the process's exit code. `report` then needs `--out DIR`; give it a
/// default with [`Kvsim::reports_dir`].
pub fn main(models: fn() -> Vec<Entry>) -> ExitCode {
    Kvsim::new(models).main()
}

/// Parses the command line and runs it (see [`Kvsim::main`]).
fn parse_and_run() -> ExitCode {
    sigpipe::reset();
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        // Help and the version go to stdout (exit 0), usage errors to stderr (exit 2), as
        // clap prints them; help that cannot be written is an error too.
        Err(e) => {
            return match e.print().map_err(out::error).and_then(|()| out::flush()) {
                Ok(()) => ExitCode::from(u8::try_from(e.exit_code()).unwrap_or(2)),
                Err(err) => error::exit(Err(err)),
            }
        }
    };
    let result = run(cli.command);
    // The command's own error first; else a report that could not be written is one.
    error::exit(result.and_then(|code| out::flush().map(|()| code)))
}

/// Runs one command: its exit code (0 pass, 1 violation, 3 unknown), or the error that
/// stopped it (exit code 2, see [`error::exit`]).
fn run(command: Cmd) -> Result<ExitCode, CliError> {
    match command {
        Cmd::Bench {
            json,
            quick,
            compare,
            suites,
        } => bench::main(&suites, json, quick, compare.as_deref()),
        Cmd::Serve(args) => serve::main(args),
        Cmd::Trace { file } => trace::main(&file),
        Cmd::Stress(args) => stress::main(&args),
        Cmd::List { json } => list::main(json),
        Cmd::Merge { files, json, junit } => merge::main(&files, json, junit.as_deref()),
        Cmd::Corpus { action } => match action {
            CorpusAction::List { dir } => corpus::list(&dir),
            CorpusAction::Prune { dir, passing } => corpus::prune(&dir, passing),
        },
        Cmd::Check(args) => check::main(&args),
        Cmd::Ladder(args) => ladder::main(&args),
        Cmd::Explore(args) => explore::main(&args),
        Cmd::Replay {
            token,
            json,
            shrink,
            html,
        } => replay::main(&token, json, shrink, html.as_deref()),
        Cmd::Report { out } => report::main(out),
        Cmd::CheckHistory(args) => check_history::main(args),
    }
}
