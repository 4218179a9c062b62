//! kvsim from `cargo test`: [`Check`] runs what `kvsim check` runs, [`Explore`] what
//! `kvsim explore` runs, each with an outcome that asserts and prints the same report, so
//! a user's own test suite is the CI gate.

mod check;
mod explore;

pub use check::{Check, CheckOutcome};
pub use explore::{Explore, ExploreOutcome};

use crate::harness::records::RunReport;
use crate::harness::target::Target;
use crate::sim::{Token, TokenError};

/// Replays `token` on `target`: the run it names, with its full trace. A token of another
/// target is refused (a `MODEL/VARIANT` name must match), never replayed on this one.
fn replay(target: &dyn Target, token: &str) -> Result<RunReport, TokenError> {
    let t = Token::decode(token)?;
    if t.target != target.name() {
        return Err(TokenError::new(format!(
            "expected a token of {}, found one of {}",
            target.name(),
            t.target
        )));
    }
    Ok(target.run(&t.scenario, &t.config, t.seed, t.choices.as_deref()))
}
