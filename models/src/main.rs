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
    /// Run the performance suite (figures named with their unit).
    Bench {
        /// Print one JSON object with a section per suite.
        #[arg(long)]
        json: bool,
        /// Suites to run (default: all).
        suites: Vec<String>,
    },
    /// Serve the simulated memcached over TCP (memcached 1.6.18's text protocol).
    Serve(cli::serve::ServeArgs),
}

fn main() {
    let cli = Cli::parse();
    let code = match cli.command {
        Cmd::Bench { json, suites } => bench::main(&suites, json),
        Cmd::Serve(args) => cli::serve::main(args),
    };
    std::process::exit(code)
}
