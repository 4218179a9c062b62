//! `kvsim replay TOKEN` through the binary: a token replays only the target and scenario
//! it was made for; anything that does not decode or names something unknown is an error
//! (exit 2) saying what was expected, never a panic, a hang or a run of something else.

use kvsim::sim::{SimConfig, Token};
use kvsim::Scenario;
use kvsim_models::registry::registry;
use std::process::Command;

/// Runs `kvsim replay ARGS…`: (exit code, stdout, stderr).
fn replay(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_kvsim"))
        .arg("replay")
        .args(args)
        .env("NO_COLOR", "1")
        .output()
        .expect("kvsim runs");
    (
        out.status.code().expect("an exit code, not a signal"),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// A token of `target` under the first scenario of the counter model.
fn token(target: &str, scenario: Option<&str>) -> Token {
    let entries = registry();
    let counter = entries.iter().find(|e| e.name == "counter").unwrap();
    let s: &Scenario = &counter.scenarios[0].0;
    Token {
        target: target.into(),
        scenario: scenario.unwrap_or(&s.name).into(),
        config: SimConfig::from_scenario(s),
        seed: 5,
        choices: None,
    }
}

#[test]
fn a_token_replays_its_run() {
    let t = token("counter/published", None).encode();
    let (code, out, err) = replay(&[&t]);
    assert!([0, 1].contains(&code), "exit {code}: {err}");
    assert!(out.contains(&format!("replay: kvsim replay {t}")), "{out}");
}

#[test]
fn a_token_of_an_unregistered_model_is_an_error_listing_the_targets() {
    let t = token("hits/getset", None).encode();
    let (code, out, err) = replay(&[&t]);
    assert_eq!(code, 2, "{out}{err}");
    assert!(out.is_empty());
    insta::assert_snapshot!(err);
    // Each registered target is listed.
    for e in registry() {
        for (v, _) in &e.variants {
            assert!(err.contains(&format!("{}/{}", e.name, v.name())), "{err}");
        }
    }
}

#[test]
fn a_token_renamed_to_another_model_is_refused() {
    let t = token("counter/published", None).encode();
    let renamed = t.replacen("counter/published", "counter/fixed", 1);
    let (code, _, err) = replay(&[&renamed]);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.starts_with("kvsim: bad replay token: checksum mismatch"),
        "{err}"
    );
    let other = t.replacen("counter/published", "lock/published", 1);
    let (code, _, err) = replay(&[&other]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("checksum mismatch"), "{err}");
}

#[test]
fn a_token_of_a_scenario_the_model_does_not_have_is_an_error() {
    let t = token("counter/published", Some("no-such-scenario")).encode();
    let (code, out, err) = replay(&[&t]);
    assert_eq!(code, 2, "{out}{err}");
    assert!(
        err.starts_with("kvsim: bad replay token: expected a scenario of counter ("),
        "{err}"
    );
    assert!(err.contains("found \"no-such-scenario\""), "{err}");
    // The names kvsim gives ad-hoc runs replay.
    for name in ["custom", "explore"] {
        let t = token("counter/published", Some(name)).encode();
        let (code, _, err) = replay(&[&t]);
        assert!([0, 1].contains(&code), "{name}: exit {code}: {err}");
    }
}

#[test]
fn tokens_that_do_not_decode_exit_2_before_anything_runs() {
    let mut huge = token("counter/published", None);
    huge.config.max_steps = u32::MAX;
    huge.config.ops = 1 << 40;
    let huge = huge.encode();
    let typo = {
        let t = token("counter/published", None).encode();
        let mut c: Vec<char> = t.chars().collect();
        let i = c.len() - 12;
        c[i] = if c[i] == 'A' { 'B' } else { 'A' };
        c.into_iter().collect::<String>()
    };
    let cases = [
        ("nonsense", "expected MODEL/VARIANT:SCENARIO:PAYLOAD"),
        ("a/b:c:!!!", "payload is not base64"),
        (
            // A version 1 token (as reports/ held before version 2).
            "visitor-counter/fixed:evict+evict:AQEOAQGas-bMmbPm1D8AAAABjqiv_fKVlIl3BQAAAAEBAwACBA",
            "found version 1",
        ),
        (&huge, "ops: expected at most 10000, found 1099511627776"),
        (&typo, "checksum mismatch"),
    ];
    for (t, expected) in cases {
        let (code, out, err) = replay(&[t]);
        assert_eq!(code, 2, "{t}: {out}{err}");
        assert!(out.is_empty(), "{t}: refused, yet it printed a run: {out}");
        assert!(
            err.starts_with("kvsim: bad replay token: ") && err.contains(expected),
            "{t}: {err}"
        );
    }
}
