//! The one error type of the command line, and the one place errors become exit codes.
//!
//! Exit codes: 0 pass, 1 violation, 3 unknown (a command's verdict, see
//! [`kvsim::Verdict::exit_code`]); 2 for every [`CliError`] (usage or I/O).

use std::fmt;
use std::process::ExitCode;

/// Why a command could not give a verdict: bad usage or an input/output error. Printed on
/// stderr as `kvsim: MESSAGE` (or `kvsim COMMAND: MESSAGE`); the exit code is 2.
#[derive(Debug)]
pub enum CliError {
    /// The command stops on this error.
    Stop {
        /// The command named in the prefix (`kvsim serve: …`), or none (`kvsim: …`).
        command: Option<&'static str>,
        /// What was expected and what was found.
        message: String,
    },
    /// Some inputs could not be read; each was reported ([`CliError::report`]) as it
    /// happened, and the others were still checked.
    Inputs,
}

impl CliError {
    /// An error printed as `kvsim: MESSAGE`.
    pub fn new(message: impl fmt::Display) -> CliError {
        CliError::Stop {
            command: None,
            message: message.to_string(),
        }
    }

    /// An error printed as `kvsim COMMAND: MESSAGE`.
    pub fn of(command: &'static str, message: impl fmt::Display) -> CliError {
        CliError::Stop {
            command: Some(command),
            message: message.to_string(),
        }
    }

    /// Prints the error on stderr (nothing for [`CliError::Inputs`]: each was printed
    /// already).
    pub fn report(&self) {
        if let CliError::Stop { .. } = self {
            eprintln!("{self}");
        }
    }
}

impl fmt::Display for CliError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CliError::Stop {
                command: None,
                message,
            } => write!(f, "kvsim: {message}"),
            CliError::Stop {
                command: Some(c),
                message,
            } => write!(f, "kvsim {c}: {message}"),
            CliError::Inputs => write!(f, "kvsim: some inputs could not be read"),
        }
    }
}

impl std::error::Error for CliError {}

/// The exit code of a verdict's code (0 ok, 1 violation, 3 unknown).
pub fn code(verdict_code: i32) -> ExitCode {
    ExitCode::from(u8::try_from(verdict_code).unwrap_or(2))
}

/// The exit code of a command's result, printing its error: 2 for every error.
pub fn exit(result: Result<ExitCode, CliError>) -> ExitCode {
    match result {
        Ok(code) => code,
        Err(e) => {
            e.report();
            ExitCode::from(2)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn errors_read_kvsim_then_the_command_and_exit_with_2() {
        assert_eq!(CliError::new("bad").to_string(), "kvsim: bad");
        assert_eq!(CliError::of("serve", "bad").to_string(), "kvsim serve: bad");
        assert_eq!(exit(Err(CliError::new("bad"))), ExitCode::from(2));
        assert_eq!(exit(Err(CliError::Inputs)), ExitCode::from(2));
        assert_eq!(exit(Ok(code(3))), ExitCode::from(3));
        assert_eq!(code(0), ExitCode::SUCCESS);
    }
}
