//! The `kvsim` command: kvsim's command line ([`kvsim_cli`]) on the built-in models.
#![forbid(unsafe_code)]

use std::process::ExitCode;

// The simulator allocates small, short-lived values on every step (commands, replies,
// futures); mimalloc serves them markedly faster than the system allocator.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    kvsim_cli::Kvsim::new(kvsim_cli::kvsim_models::registry::registry)
        .reports_dir(kvsim_cli::kvsim_models::reports::default_dir())
        .main()
}
