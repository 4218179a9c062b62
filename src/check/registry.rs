//! The spec registry: every spec a history file can be checked against, by name (what
//! `kvsim check-history --spec` takes), each with its checker. [`Specs::shipped`] holds
//! kvsim's sequential specs (linearizability); a crate adds its own with
//! [`Specs::with`] (the seed models add their time-window specs, judged by their own
//! checkers: `kvsim_models::registry::specs`).
//!
//! A spec may take one parameter ([`Param`]: `--initial`, `--period`, `--window`); the
//! parameter of another spec is refused naming the spec that takes it.

use super::files::{check_sequential, check_timed, FileOptions, FileVerdict, Timed};
use crate::formats::{FormatError, FromRaw, Value};
use crate::specs::{
    cas_register::CasRegisterSpec, counter::CounterSpec, kv::KvSpec, list_append::ListAppendSpec,
    multi_register::MultiRegisterSpec, mutex::MutexSpec, queue::QueueSpec, register::RegisterSpec,
    set::SetSpec,
};
use std::path::Path;

/// The largest `--period` or `--window`, seconds (about 31 years).
pub const MAX_PARAMETER_SECS: u64 = 1_000_000_000;

/// A spec's parameter.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Param {
    /// `--initial EDN-MAP`: the registers' initial values (optional).
    Initial,
    /// `--period SECS` (required).
    Period,
    /// `--window SECS` (required).
    Window,
}

impl Param {
    /// Every parameter, in the order they are checked.
    pub const ALL: [Param; 3] = [Param::Initial, Param::Period, Param::Window];

    /// The flag that gives it.
    pub fn flag(self) -> &'static str {
        match self {
            Param::Initial => "--initial",
            Param::Period => "--period",
            Param::Window => "--window",
        }
    }

    /// Whether `args` gives it.
    fn given(self, args: &SpecArgs) -> bool {
        match self {
            Param::Initial => args.initial.is_some(),
            Param::Period => args.period_secs.is_some(),
            Param::Window => args.window_secs.is_some(),
        }
    }
}

/// The parameters given for a spec.
#[derive(Clone, Debug, Default)]
pub struct SpecArgs {
    /// `--initial`: an EDN map.
    pub initial: Option<Value>,
    /// `--period`, seconds.
    pub period_secs: Option<u64>,
    /// `--window`, seconds.
    pub window_secs: Option<u64>,
}

/// A spec's checker of history files.
pub trait FileChecker {
    /// Parses one file (not timed) and checks it (timed).
    fn check_file(&self, path: &Path, how: FileOptions) -> Result<FileVerdict, FormatError>;
}

/// A sequential spec's checker: linearizability.
struct Sequential<S>(S);

impl<S> FileChecker for Sequential<S>
where
    S: FromRaw + Sync,
    S::Op: Sync,
    S::Ret: Sync,
    S::State: Send,
{
    fn check_file(&self, path: &Path, how: FileOptions) -> Result<FileVerdict, FormatError> {
        check_sequential(&self.0, path, how)
    }
}

impl<Op, Ret> FileChecker for Timed<Op, Ret> {
    fn check_file(&self, path: &Path, how: FileOptions) -> Result<FileVerdict, FormatError> {
        check_timed(self, path, how.format)
    }
}

/// Builds a spec's checker from its parameters (`Err`: a missing one, why).
pub type Build = fn(&SpecArgs) -> Result<Box<dyn FileChecker>, String>;

/// One spec: its name, its parameter and how its checker is built.
pub struct SpecEntry {
    /// Its name, as `--spec` takes it.
    pub name: &'static str,
    /// The parameter it takes, if any.
    pub param: Option<Param>,
    /// A sequential spec (checked for linearizability, `--fail-means` applies), or a
    /// property judged by its own checker (whose `fail` is always no effect).
    pub sequential: bool,
    /// Builds its checker.
    pub build: Build,
}

/// A sequential spec's checker, boxed.
fn sequential<S>(spec: S) -> Result<Box<dyn FileChecker>, String>
where
    S: FromRaw + Sync + 'static,
    S::Op: Sync,
    S::Ret: Sync,
    S::State: Send,
{
    Ok(Box::new(Sequential(spec)))
}

/// The registry: specs by name, in the order `--spec` lists them.
pub struct Specs(Vec<SpecEntry>);

impl Specs {
    /// kvsim's sequential specs (`src/specs/`).
    pub fn shipped() -> Specs {
        let plain = |name, build| SpecEntry {
            name,
            param: None,
            sequential: true,
            build,
        };
        Specs(vec![
            plain("register", |_| sequential(RegisterSpec::<Value>::new())),
            plain("cas-register", |_| {
                sequential(CasRegisterSpec::<Value>::new())
            }),
            plain("kv", |_| sequential(KvSpec)),
            plain("counter", |_| sequential(CounterSpec)),
            plain("queue", |_| sequential(QueueSpec::<Value>::new())),
            plain("mutex", |_| sequential(MutexSpec)),
            plain("set", |_| sequential(SetSpec::<Value>::new())),
            plain(
                "list-append",
                |_| sequential(ListAppendSpec::<Value>::new()),
            ),
            SpecEntry {
                name: "multi-register",
                param: Some(Param::Initial),
                sequential: true,
                build: |args| match &args.initial {
                    Some(Value::Map(entries)) => {
                        sequential(MultiRegisterSpec::with_initial(entries.iter().cloned()))
                    }
                    _ => sequential(MultiRegisterSpec::new()),
                },
            },
        ])
    }

    /// These specs and `more` after them.
    pub fn with(mut self, more: impl IntoIterator<Item = SpecEntry>) -> Specs {
        self.0.extend(more);
        self
    }

    /// The specs' names, in order.
    pub fn names(&self) -> Vec<&'static str> {
        self.0.iter().map(|e| e.name).collect()
    }

    /// The spec named `name`, if any.
    pub fn get(&self, name: &str) -> Option<&SpecEntry> {
        self.0.iter().find(|e| e.name == name)
    }

    /// The checker of spec `name` with its parameters. `Err` says why not: an unknown
    /// name (with the valid ones), a parameter of another spec (naming the spec that
    /// takes it), or a missing one.
    pub fn checker(&self, name: &str, args: &SpecArgs) -> Result<Box<dyn FileChecker>, String> {
        let entry = self.get(name).ok_or_else(|| {
            format!(
                "unknown spec {name:?}: expected one of {}",
                self.names().join(", ")
            )
        })?;
        for p in Param::ALL {
            if p.given(args) && entry.param != Some(p) {
                let owner = self.0.iter().find(|e| e.param == Some(p));
                let owner = owner.map_or("none", |e| e.name);
                return Err(format!(
                    "{}: expected --spec {owner}, found --spec {name}",
                    p.flag()
                ));
            }
        }
        (entry.build)(args)
    }
}
