//! `kvsim check`'s whole default matrix (every model × scenario × variant, shrinking
//! included, on every core): simulated runs per second of wall time, the figure issue
//! #37 sets against e6a8f1c's `kvsim check`. A verdict that differs from its expectation
//! fails the suite: a faster matrix that finds less is no gain.

use super::round;
use serde_json::{json, Map, Value};

/// Runs the suite.
pub fn run() -> Result<Map<String, Value>, String> {
    let m = crate::check::matrix_run()?;
    if m.unexpected > 0 {
        return Err(format!(
            "{} of {} verdicts differ from their expectations (run `kvsim check`)",
            m.unexpected, m.verdicts
        ));
    }
    let secs = m.wall.as_secs_f64();
    let mut out = Map::new();
    out.insert("verdicts".into(), json!(m.verdicts));
    out.insert("runs".into(), json!(m.runs));
    out.insert("threads".into(), json!(m.threads));
    out.insert("seconds_wall".into(), round(secs));
    out.insert("runs_per_s".into(), round(m.runs as f64 / secs.max(1e-9)));
    Ok(out)
}
