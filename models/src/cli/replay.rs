//! `kvsim replay TOKEN`: one execution, exactly as it happened, with its full trace.

use crate::registry::{self, registry};
use kvsim::sim::Token;

/// Replays `token`; prints the report (text or JSON); returns the verdict's exit code.
pub fn main(token: &str, json_out: bool) -> i32 {
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
    if json_out {
        println!("{}", serde_json::to_string_pretty(&report).expect("json"));
    } else {
        print!("{}", kvsim::report::text(&report));
    }
    report.verdict.exit_code()
}
