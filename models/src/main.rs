//! The `kvsim` command.
#![forbid(unsafe_code)]

use clap::{Parser, Subcommand};

/// kvsim: deterministic simulation and model checking for KV-store data structures.
#[derive(Parser)]
#[command(name = "kvsim", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Cmd,
}

#[derive(Subcommand)]
enum Cmd {}

fn main() {
    let cli = Cli::parse();
    let code = match cli.command {};
    #[allow(unreachable_code)]
    std::process::exit(code)
}
