//! The models the commands name: the ones the program was started with ([`Kvsim`]), or
//! kvsim's built-in registry when none were (the crate's own unit tests).

use crate::Entry;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::RwLock;

/// kvsim's command line over a set of models: `Kvsim::new(models).main()` (or
/// [`crate::main`]`(models)`), with an optional default directory for `report`.
#[derive(Clone, Debug)]
pub struct Kvsim {
    /// Builds the models (called once per command, and once per worker thread of a
    /// check: a target is not shared between threads).
    models: fn() -> Vec<Entry>,
    /// Where `report` writes without `--out`.
    reports: Option<PathBuf>,
}

/// The program's models, set by [`Kvsim::main`] before the command runs.
static INSTALLED: RwLock<Option<Kvsim>> = RwLock::new(None);

impl Kvsim {
    /// The command line over `models` (each [`Entry`] a structure with its variants,
    /// scenarios and expectations); `report` needs `--out DIR`.
    pub fn new(models: fn() -> Vec<Entry>) -> Kvsim {
        Kvsim {
            models,
            reports: None,
        }
    }

    /// The same, `report` writing to `dir` when no `--out` is given (e.g. the crate's own
    /// `concat!(env!("CARGO_MANIFEST_DIR"), "/reports")`).
    pub fn reports_dir(mut self, dir: impl Into<PathBuf>) -> Kvsim {
        self.reports = Some(dir.into());
        self
    }

    /// Runs the command line (`std::env::args`) on these models: the process's exit code
    /// (0 pass or every verdict as expected, 1 violation or a verdict unlike its
    /// expectation, 2 usage or I/O error, 3 unknown; as `kvsim --help` says per command).
    pub fn main(self) -> ExitCode {
        *INSTALLED.write().unwrap_or_else(|e| e.into_inner()) = Some(self);
        crate::parse_and_run()
    }
}

/// The installed program, if [`Kvsim::main`] ran.
fn installed() -> Option<Kvsim> {
    INSTALLED.read().unwrap_or_else(|e| e.into_inner()).clone()
}

/// What builds the installed models (a function, so that each worker thread of a check
/// builds its own targets).
pub fn models() -> fn() -> Vec<Entry> {
    installed().map_or(kvsim_models::registry::registry, |k| k.models)
}

/// The installed models, in their order: what every command that names a model reads.
pub fn registry() -> Vec<Entry> {
    models()()
}

/// Where `report` writes without `--out`: the installed directory; kvsim's `reports/` when
/// nothing was installed; `None` when the installed program names none.
pub fn reports_dir() -> Option<PathBuf> {
    match installed() {
        Some(k) => k.reports,
        None => Some(kvsim_models::reports::default_dir()),
    }
}
