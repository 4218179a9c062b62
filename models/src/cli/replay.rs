//! `kvsim replay TOKEN`: one execution, exactly as it happened, with its full trace.

use crate::registry::{self, registry};
use kvsim::sim::Token;

/// Replays `token` (minimized first with `shrink`); prints the report (text or JSON);
/// returns the verdict's exit code.
pub fn main(token: &str, json_out: bool, shrink: bool) -> i32 {
    let token = match Token::decode(token) {
        Ok(t) => t,
        Err(e) => {
            eprintln!("kvsim: {e}");
            return 2;
        }
    };
    let entries = registry();
    let (index, variants) = match registry::resolve(&entries, &token.target) {
        Ok(x) => x,
        Err(e) => {
            eprintln!("kvsim: {e}");
            return 2;
        }
    };
    let [variant] = variants[..] else {
        eprintln!(
            "kvsim: bad replay token: expected a target MODEL/VARIANT, found {:?}",
            token.target
        );
        return 2;
    };
    let target = entries[index].target(variant);
    let report = target.run(
        &token.scenario,
        &token.config,
        token.seed,
        token.choices.as_deref(),
    );
    let report = if shrink {
        kvsim::shrink::shrink(target, &report, &kvsim::shrink::ShrinkLimits::default())
    } else {
        report
    };
    if json_out {
        println!("{}", kvsim::report::json(&report));
    } else {
        print!(
            "{}",
            kvsim::report::text_styled(&report, kvsim::report::colour_wanted())
        );
    }
    report.verdict.exit_code()
}
