//! Standard output, with its errors: every command writes its report through [`outln!`]
//! and [`out!`] (each returning `Result<(), CliError>`, used with `?`), and [`flush`]
//! flushes what is left once the command is done. A write that fails (a full disk,
//! `/dev/full`, a closed file) stops the command with `kvsim: cannot write output: …`,
//! exit 2, never a panic and never a verdict whose report was lost. A closed pipe still
//! ends kvsim by SIGPIPE (see `main`), as it ends `cat`.
//!
//! Stdout stays line-buffered (lines appear as they are written, as with `println!`).

use crate::error::CliError;
use std::fmt;
use std::io::{self, Write};

/// Writes formatted text to stdout, then a newline; `Err` if stdout cannot be written.
macro_rules! outln {
    () => {
        $crate::out::write(format_args!("\n"))
    };
    ($($arg:tt)*) => {
        $crate::out::line(format_args!($($arg)*))
    };
}

/// Writes formatted text to stdout; `Err` if stdout cannot be written.
macro_rules! out {
    ($($arg:tt)*) => {
        $crate::out::write(format_args!($($arg)*))
    };
}

pub(crate) use {out, outln};

/// The error of a failed write to stdout.
pub fn error(e: io::Error) -> CliError {
    CliError::new(format!("cannot write output: {e}"))
}

/// Writes `args` to stdout.
pub fn write(args: fmt::Arguments<'_>) -> Result<(), CliError> {
    io::stdout().lock().write_fmt(args).map_err(error)
}

/// Writes `args` and a newline to stdout.
pub fn line(args: fmt::Arguments<'_>) -> Result<(), CliError> {
    let mut o = io::stdout().lock();
    o.write_fmt(args)
        .and_then(|()| o.write_all(b"\n"))
        .map_err(error)
}

/// Flushes stdout: what a command wrote and was still buffered. Called once every command
/// is done (so that an error in the last bytes is an error too), and wherever output must
/// be seen before a long wait.
pub fn flush() -> Result<(), CliError> {
    io::stdout().lock().flush().map_err(error)
}
