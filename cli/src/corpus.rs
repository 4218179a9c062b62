//! The failure corpus: every violation `kvsim check --corpus DIR` finds is saved in DIR as
//! its replay token, and every later check with the same DIR replays those first, so a
//! fixed bug stays fixed and a failure seen once is reproduced at once. `kvsim corpus
//! list|prune` looks after the directory.
//!
//! One file per failure, `DIR/TARGET-SCENARIO-HASH.token` (the target's `/` as `_`, the
//! hash that of the token), holding the token on its first line; lines after it, and
//! lines starting with `#`, are for people. DIR holds nothing else: every entry of it
//! must be a `*.token` file holding a token, except dotfiles (`.gitkeep`, `.gitignore`)
//! and README files (`README`, `README.md`, …), which are left alone. Anything else (a
//! `notes.txt`, a subdirectory) stops a check with its name, never silently: a failure
//! saved under another name would otherwise never be replayed.

use crate::error::CliError;
use crate::installed::registry;
use crate::out::outln;
use crate::replay;
use kvsim::harness::records::{CheckReport, RunReport};
use kvsim::harness::target::Target;
use kvsim::sim::Token;
use kvsim_models::registry::Entry;
use std::path::{Path, PathBuf};

/// Most entries a corpus may hold: more is an error, never a slow start.
pub const MAX_ENTRIES: usize = 10_000;

/// Largest entry file, in bytes (a long shrunk run's token is a few KiB).
pub const MAX_ENTRY_BYTES: u64 = 1 << 20;

/// The file name ending of an entry.
const SUFFIX: &str = ".token";

/// One saved failure.
#[derive(Clone, Debug)]
pub struct Saved {
    /// Its file.
    pub path: PathBuf,
    /// Its token, as saved.
    pub token: String,
    /// The token decoded.
    pub decoded: Token,
}

/// A corpus directory and its entries, in file name order.
pub struct Corpus {
    dir: PathBuf,
    entries: Vec<Saved>,
}

impl Corpus {
    /// Reads the corpus at `dir` (none yet: empty). An entry that does not hold a token
    /// is an error naming its file (`kvsim corpus prune` removes such entries), and so is
    /// a file that is not an entry (not `*.token`, not a dotfile or README).
    pub fn open(dir: &Path) -> Result<Corpus, CliError> {
        let Listing {
            entries,
            bad,
            stray,
        } = read(dir)?;
        if let Some((path, why)) = stray.into_iter().next() {
            return Err(CliError::of("corpus", format!("{}: {why}", path.display())));
        }
        if let Some((path, why)) = bad.into_iter().next() {
            return Err(CliError::of(
                "corpus",
                format!(
                    "{}: {why} (`kvsim corpus prune {}` removes it)",
                    path.display(),
                    dir.display()
                ),
            ));
        }
        Ok(Corpus {
            dir: dir.to_path_buf(),
            entries,
        })
    }

    /// Its directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Every entry.
    pub fn entries(&self) -> &[Saved] {
        &self.entries
    }

    /// The entries of `target` under `scenario`.
    pub fn of<'c>(&'c self, target: &'c str, scenario: &'c str) -> impl Iterator<Item = &'c Saved> {
        self.entries
            .iter()
            .filter(move |e| e.decoded.target == target && e.decoded.scenario == scenario)
    }

    /// Replays the entries of `target` under `scenario`: the runs they name, as they go now.
    pub fn replay(&self, target: &dyn Target, scenario: &str) -> Vec<RunReport> {
        self.of(target.name(), scenario)
            .map(|e| run(target, &e.decoded))
            .collect()
    }

    /// Saves the counterexample of every finding of `reports` not saved yet; returns how
    /// many files were written.
    pub fn save(&mut self, reports: &[CheckReport]) -> Result<usize, CliError> {
        let mut written = 0;
        for report in reports {
            for f in &report.findings {
                let path = self.dir.join(file_name(&f.replay)?);
                if self.entries.iter().any(|e| e.path == path) {
                    continue;
                }
                if written == 0 {
                    std::fs::create_dir_all(&self.dir).map_err(|e| io(&self.dir, e))?;
                }
                if self.entries.len() >= MAX_ENTRIES {
                    return Err(CliError::of(
                        "corpus",
                        format!(
                            "{}: expected at most {MAX_ENTRIES} entries, the corpus is full \
                             (`kvsim corpus prune` removes stale ones)",
                            self.dir.display()
                        ),
                    ));
                }
                let text = format!(
                    "{}\n# {}: {}: {}\n# needs {} · found by kvsim check, scenario {}\n",
                    f.replay,
                    report.target,
                    f.property,
                    f.reason.lines().next().unwrap_or_default(),
                    f.describe_faults(),
                    report.scenario
                );
                std::fs::write(&path, text).map_err(|e| io(&path, e))?;
                let decoded = Token::decode(&f.replay).map_err(|e| CliError::of("corpus", e))?;
                self.entries.push(Saved {
                    path,
                    token: f.replay.clone(),
                    decoded,
                });
                written += 1;
            }
        }
        Ok(written)
    }
}

/// Adds the replays of past failures to `report` ([`kvsim::harness::findings::add_replayed`]);
/// returns how many still fail.
pub fn add(report: &mut CheckReport, replays: Vec<RunReport>) -> usize {
    replays
        .into_iter()
        .map(|r| usize::from(kvsim::harness::findings::add_replayed(report, r)))
        .sum()
}

/// The entry file name of `token`: `TARGET-SCENARIO-HASH.token`, in characters any file
/// system takes.
fn file_name(token: &str) -> Result<String, CliError> {
    let t = Token::decode(token).map_err(|e| CliError::of("corpus", e))?;
    let clean = |s: &str| -> String {
        s.chars()
            .map(|c| match c {
                'a'..='z' | 'A'..='Z' | '0'..='9' | '-' | '+' | '.' => c,
                _ => '_',
            })
            .take(80)
            .collect()
    };
    let hash = token.bytes().fold(0xcbf2_9ce4_8422_2325_u64, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3)
    });
    Ok(format!(
        "{}-{}-{hash:016x}{SUFFIX}",
        clean(&t.target),
        clean(&t.scenario)
    ))
}

/// The run a token names, on `target`.
fn run(target: &dyn Target, t: &Token) -> RunReport {
    target.run(&t.scenario, &t.config, t.seed, t.choices.as_deref())
}

/// A file that should hold a token and does not, with why.
type Unreadable = (PathBuf, String);

/// What a corpus directory holds.
struct Listing {
    /// The entries that hold a token, in file name order.
    entries: Vec<Saved>,
    /// The `*.token` entries that do not hold one, with why (`prune` removes them).
    bad: Vec<Unreadable>,
    /// Everything else that is not a dotfile or a README file, with why (no entry: never
    /// removed by kvsim, since it may be someone's file).
    stray: Vec<Unreadable>,
}

/// Why a file in a corpus directory that is not a `*.token` file stops a check.
const STRAY: &str = "not a corpus entry: a corpus directory holds only `*.token` files \
                     holding a replay token (dotfiles and README files aside); move it out";

/// Whether a corpus directory may hold a file of this name besides its entries: a dotfile
/// (`.gitkeep`, `.gitignore`) or a README (`README`, `README.md`, any case).
fn allowed(name: &str) -> bool {
    let stem = name.split('.').next().unwrap_or_default();
    name.starts_with('.') || stem.eq_ignore_ascii_case("readme")
}

/// What `dir` holds (see [`Listing`]). A missing directory is an empty corpus.
fn read(dir: &Path) -> Result<Listing, CliError> {
    let mut listing = Listing {
        entries: Vec::new(),
        bad: Vec::new(),
        stray: Vec::new(),
    };
    let items = match std::fs::read_dir(dir) {
        Ok(l) => l,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(listing),
        Err(e) => return Err(io(dir, e)),
    };
    let mut paths = Vec::new();
    for item in items {
        let path = item.map_err(|e| io(dir, e))?.path();
        let name = name(&path);
        if allowed(&name) {
            continue;
        }
        if name.ends_with(SUFFIX) {
            paths.push(path);
        } else {
            listing.stray.push((path, STRAY.to_string()));
        }
        if paths.len() + listing.stray.len() > MAX_ENTRIES {
            return Err(CliError::of(
                "corpus",
                format!(
                    "{}: expected at most {MAX_ENTRIES} entries, found more",
                    dir.display()
                ),
            ));
        }
    }
    paths.sort();
    listing.stray.sort();
    for path in paths {
        match read_entry(&path) {
            Ok(e) => listing.entries.push(e),
            Err(why) => listing.bad.push((path, why)),
        }
    }
    Ok(listing)
}

/// One entry file: its first line that is not a comment must be a token.
fn read_entry(path: &Path) -> Result<Saved, String> {
    let meta = std::fs::metadata(path).map_err(|e| e.to_string())?;
    if !meta.is_file() {
        return Err(
            "expected a file holding a replay token, found a directory or \
                    another kind of entry"
                .to_string(),
        );
    }
    let len = meta.len();
    if len > MAX_ENTRY_BYTES {
        return Err(format!(
            "expected at most {MAX_ENTRY_BYTES} bytes, found {len}"
        ));
    }
    let text = std::fs::read_to_string(path).map_err(|e| e.to_string())?;
    let token = text
        .lines()
        .map(str::trim)
        .find(|l| !l.is_empty() && !l.starts_with('#'))
        .ok_or("expected a replay token on its first line, found none")?;
    let decoded = Token::decode(token).map_err(|e| format!("expected a replay token: {e}"))?;
    Ok(Saved {
        path: path.to_path_buf(),
        token: token.to_string(),
        decoded,
    })
}

fn io(path: &Path, e: std::io::Error) -> CliError {
    CliError::of("corpus", format!("{}: {e}", path.display()))
}

/// `kvsim corpus list DIR`: every entry with its target, scenario and what replaying it
/// gives now, then the files a check would stop on (unreadable entries, files that are
/// not entries), each with why. Exit 0.
pub fn list(dir: &Path) -> Result<std::process::ExitCode, CliError> {
    let Listing {
        entries,
        mut bad,
        stray,
    } = read(dir)?;
    bad.extend(stray);
    let registry = registry();
    outln!(
        "kvsim corpus {} · {} entries{}",
        dir.display(),
        entries.len(),
        if bad.is_empty() {
            String::new()
        } else {
            format!(", {} unreadable", bad.len())
        }
    )?;
    for e in &entries {
        let now = match replay::resolve(&registry, &e.token) {
            Ok((t, target)) => describe(&run(target, &t)),
            Err(why) => format!("stale: {}", why.lines().next().unwrap_or_default()),
        };
        outln!(
            "  {}  {} · {} · {now}",
            name(&e.path),
            e.decoded.target,
            e.decoded.scenario
        )?;
    }
    for (path, why) in &bad {
        outln!("  {}  unreadable: {why}", name(path))?;
    }
    Ok(std::process::ExitCode::SUCCESS)
}

/// `kvsim corpus prune DIR [--passing]`: removes the entries that cannot be replayed any
/// more (unreadable, or naming a target or scenario kvsim does not know), and with
/// `passing` those that pass now. Prints each removal. Exit 0; exit 2 when DIR also holds
/// files that are not entries (named on stderr, and never removed: they may be someone's).
pub fn prune(dir: &Path, passing: bool) -> Result<std::process::ExitCode, CliError> {
    let Listing {
        entries,
        bad,
        stray,
    } = read(dir)?;
    let registry: Vec<Entry> = registry();
    let mut doomed: Vec<Unreadable> = bad;
    for e in entries {
        match replay::resolve(&registry, &e.token) {
            Err(why) => doomed.push((e.path, why.lines().next().unwrap_or_default().to_string())),
            Ok((t, target)) => {
                let r = run(target, &t);
                if passing && !r.verdict.is_violation() {
                    doomed.push((e.path, describe(&r)));
                }
            }
        }
    }
    for (path, why) in &doomed {
        std::fs::remove_file(path).map_err(|e| io(path, e))?;
        outln!("removed {}: {why}", name(path))?;
    }
    outln!("kvsim corpus {}: {} removed", dir.display(), doomed.len())?;
    // Not an entry: maybe someone's file, never removed; the corpus still stops a check.
    for (path, why) in &stray {
        CliError::of(
            "corpus",
            format!(
                "{}: {why} (prune removes only `*.token` files)",
                path.display()
            ),
        )
        .report();
    }
    if stray.is_empty() {
        Ok(std::process::ExitCode::SUCCESS)
    } else {
        Err(CliError::Inputs)
    }
}

/// What a replay gives now, in a few words.
fn describe(r: &RunReport) -> String {
    match &r.verdict {
        kvsim::Verdict::Violation(v) => format!("still fails: {}", v.property),
        kvsim::Verdict::Ok => "passes now".to_string(),
        kvsim::Verdict::Unknown(why) => format!("unknown: {why}"),
    }
}

/// A path's file name, for people.
fn name(path: &Path) -> String {
    path.file_name().map_or_else(
        || path.display().to_string(),
        |n| n.to_string_lossy().into_owned(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_entry_is_named_by_its_target_scenario_and_token() {
        let token = "lock/published:evict:AgIBAAABAZqZmZmZmak_AAAAAQHcC6Af0A_QD9wLoJwBMqCcAYC1GP7wzo7IkOerNAQBAQIn7T0AMRSxnw";
        let name = file_name(token).unwrap();
        assert!(name.starts_with("lock_published-evict-"), "{name}");
        assert!(name.ends_with(SUFFIX));
        assert_eq!(
            file_name(token).unwrap(),
            name,
            "the same token, the same file"
        );
        assert!(file_name("lock/published:evict:nope").is_err());
    }
}
