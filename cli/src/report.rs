//! `kvsim report`: regenerates `reports/`, or a crate's own reports (see
//! [`kvsim_models::reports`]).

use crate::error::CliError;
use crate::installed;
use crate::out::outln;
use kvsim_models::reports::{cell_count, files, matrices_with, write};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

/// Runs `kvsim report` on the installed models, into `out` or the installed reports
/// directory ([`crate::Kvsim::reports_dir`]); returns the exit code.
pub fn main(out: Option<PathBuf>) -> Result<ExitCode, CliError> {
    let dir = out.or_else(installed::reports_dir).ok_or_else(|| {
        CliError::of(
            "report",
            "expected --out DIR (this program names no reports directory of its own), \
             found none",
        )
    })?;
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    let cells = cell_count(&installed::registry());
    let progress = crate::progress::Progress::new(cells as u64, false);
    let started = Instant::now();
    let ms = matrices_with(installed::models(), threads, &|cell| progress.tick(cell));
    progress.finish(started.elapsed());
    let files = files(&ms);
    write(&dir, &files)
        .map_err(|e| CliError::new(format!("cannot write reports to {}: {e}", dir.display())))?;
    let found: usize = ms
        .iter()
        .map(|m| {
            m.cells
                .iter()
                .filter(|c| c.counterexample.is_some())
                .count()
        })
        .sum();
    let cells: usize = ms.iter().map(|m| m.cells.len()).sum();
    outln!(
        "kvsim report: {} models, {cells} matrix cells, {found} minimal counterexamples → {}",
        ms.len(),
        dir.display()
    )?;
    Ok(ExitCode::SUCCESS)
}
