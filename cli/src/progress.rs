//! Progress on stderr for long runs, only when stderr is a terminal (and never in JSON
//! mode or with `NO_COLOR` … colour aside, a plain line is still drawn).

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::io::IsTerminal;
use std::time::Duration;

/// A progress bar that stays silent unless stderr is a terminal.
pub struct Progress {
    bar: Option<ProgressBar>,
}

impl Progress {
    /// A bar over `total` steps; hidden when `quiet` or stderr is not a terminal. It only
    /// appears after a second, so short runs print nothing.
    pub fn new(total: u64, quiet: bool) -> Progress {
        if quiet || !std::io::stderr().is_terminal() {
            return Progress { bar: None };
        }
        let bar = ProgressBar::with_draw_target(Some(total), ProgressDrawTarget::hidden());
        bar.set_style(
            ProgressStyle::with_template("{elapsed:>4} [{bar:30}] {pos}/{len} {msg}")
                .expect("a valid template")
                .progress_chars("=> "),
        );
        let shown = bar.clone();
        std::thread::spawn(move || {
            std::thread::sleep(Duration::from_secs(1));
            if !shown.is_finished() {
                shown.set_draw_target(ProgressDrawTarget::stderr());
            }
        });
        Progress { bar: Some(bar) }
    }

    /// One step done.
    pub fn tick(&self, msg: &str) {
        if let Some(b) = &self.bar {
            b.set_message(msg.to_string());
            b.inc(1);
        }
    }

    /// All done: clears the bar.
    pub fn finish(&self, _elapsed: Duration) {
        if let Some(b) = &self.bar {
            b.finish_and_clear();
        }
    }
}
