//! The `kvsim` command.
#![forbid(unsafe_code)]

mod bench;
mod cli;

use clap::{Parser, Subcommand};

/// kvsim: deterministic simulation and model checking for KV-store data structures.
#[derive(Parser)]
#[command(name = "kvsim", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Cmd,
}

#[derive(Subcommand)]
enum Cmd {
    /// Check history files (JSON lines, Jepsen EDN or Jepsen log) for linearizability.
    CheckHistory(cli::check_history::Args),
    /// Run the performance suite (figures named with their unit).
    Bench {
        /// Print one JSON object with a section per suite.
        #[arg(long)]
        json: bool,
        /// Suites to run (default: all).
        suites: Vec<String>,
    },
}

fn main() {
    let cli = Cli::parse();
    let code = match cli.command {
        Cmd::Bench { json, suites } => bench::main(&suites, json),
        Cmd::CheckHistory(args) => cli::check_history::main(args),
    };
    std::process::exit(code)
}
