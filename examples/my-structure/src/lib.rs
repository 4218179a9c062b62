//! A structure of one's own, checked with kvsim's whole command line: a ticket dispenser
//! ([`dispenser`]) with its sequential spec ([`spec`]), and [`models`], what `src/main.rs`
//! hands to `kvsim_cli`.
#![forbid(unsafe_code)]

pub mod dispenser;
pub mod spec;

use kvsim_cli::kvsim::{FaultKind, Scenario};
use kvsim_cli::{Entry, Expect};

/// The models of this crate: the dispenser (`ticket/published`, `ticket/fixed`) with its
/// scenarios, each with the verdict each variant is expected to get.
pub fn models() -> Vec<Entry> {
    vec![Entry::new(
        "ticket",
        "ticket dispenser: take a number with get/set (published) or incr (fixed)",
        dispenser::published(),
        dispenser::fixed(),
        scenarios(),
    )]
}

/// The dispenser's named scenarios and what each variant is expected to get.
pub fn scenarios() -> Vec<(Scenario, Expect)> {
    vec![
        (
            // 3 clients, 4 operations each, no faults: interleavings only.
            Scenario::new("no-faults", 3, 4)
                .about("concurrent takes and peeks, no faults")
                .runs(300),
            Expect::BROKEN_FIXED,
        ),
        (
            Scenario::new("evict", 3, 4)
                .about("the store may evict the counter at any step")
                .faults(&[FaultKind::Evict])
                .fault_budget(1)
                .sometimes(&["missing key"])
                .runs(300),
            Expect::BROKEN_FIXED,
        ),
        (
            Scenario::new("retrying-client", 3, 4)
                .about("the client library sends a timed-out command again")
                .faults(&[FaultKind::Lose])
                .fault_budget(1)
                .retries(1)
                .runs(500),
            Expect::not_yet_fixed(
                "take with gets/cas on a value that also records the last ticket each \
                 client took: a resent cas answers EXISTS and reading back tells",
            ),
        ),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;
    use kvsim_cli::kvsim::sim::Token;
    use kvsim_cli::Variant;

    /// The run `cargo run --release -- check` printed for `ticket/published` under
    /// `no-faults` (its replay column), minimized: two clients both handed ticket 2.
    const NO_FAULTS: &str = "ticket/published:no-faults:BQIEAwEAAgABAAAAmpmZmZmZqT8AAAABAdwLoB_QD9AP3AugnAEyoJwBgLUY1LC8gqPDv5rGAQIC0a218s7ZJBM";

    /// How to print a replayed run in code: decode the token, run it on its target (what
    /// `cargo run -- replay TOKEN` does), print the report.
    #[test]
    fn a_token_replays_to_its_run_and_the_report_prints_it() {
        let token = Token::decode(NO_FAULTS).expect("a token this crate printed");
        let entries = models();
        let target = entries[0].target(Variant::Published);
        assert_eq!(target.name(), token.target);
        let run = target.run(
            &token.scenario,
            &token.config,
            token.seed,
            token.choices.as_deref(),
        );
        let text = kvsim_cli::kvsim::report::text(&run);
        println!("{text}");
        assert!(run.verdict.is_violation(), "{}", run.verdict);
        assert!(
            text.contains("why: take() handed out ticket 2 again"),
            "the report says why:\n{text}"
        );
        assert_eq!(
            run.token, NO_FAULTS,
            "the same run, printed with the same token"
        );
    }
}
