//! `kvsim report`: regenerates `reports/` (see [`kvsim_models::reports`]).

use crate::error::CliError;
use crate::out::outln;
use kvsim_models::reports::{cell_count, default_dir, files, matrices_with, write};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

/// Runs `kvsim report`; returns the exit code.
pub fn main(out: Option<PathBuf>) -> Result<ExitCode, CliError> {
    let dir = out.unwrap_or_else(default_dir);
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    let progress = crate::progress::Progress::new(cell_count() as u64, false);
    let started = Instant::now();
    let ms = matrices_with(threads, &|cell| progress.tick(cell));
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
