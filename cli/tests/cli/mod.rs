//! Running the `kvsim` binary from the integration tests.

use std::process::{Command, Output};

/// Runs `kvsim ARGS…` and waits for it.
pub fn kvsim(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_kvsim"))
        .args(args)
        .output()
        .expect("kvsim runs")
}

/// Output bytes as text.
pub fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}
