//! Running `kvsim check-history` from the integration tests, on files in a directory of
//! the test's own.

use std::path::{Path, PathBuf};
use std::process::Command;

/// A fresh directory for this test's files.
pub fn dir(test: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!(
        "kvsim-{}-{}-{test}",
        env!("CARGO_CRATE_NAME"),
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).expect("temp dir");
    d
}

/// What one run of the binary did.
pub struct Run {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

/// Runs `kvsim check-history ARGS` in `cwd`.
pub fn kvsim(cwd: &Path, args: &[&str]) -> Run {
    let out = Command::new(env!("CARGO_BIN_EXE_kvsim"))
        .arg("check-history")
        .args(args)
        .current_dir(cwd)
        .output()
        .expect("runs kvsim");
    Run {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8(out.stdout).expect("utf-8"),
        stderr: String::from_utf8(out.stderr).expect("utf-8"),
    }
}

/// Writes `text` to `name` in `d`.
pub fn write(d: &Path, name: &str, text: &str) {
    std::fs::write(d.join(name), text).expect("write");
}
