//! Replay tokens keep working across releases (see `kvsim::sim::Token`, Versions): golden
//! tokens of every version replay to the same run, and every `kvsim replay TOKEN` printed
//! in the docs (README.md, examples/, reports/) replays and ends in the violation it was
//! printed for.

use kvsim::harness::records::RunReport;
use kvsim::sim::Token;
use kvsim_models::registry::registry;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The repository's root.
fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("cli/ has a parent")
        .to_path_buf()
}

/// The run `text` names, replayed on its registered target (as `kvsim replay` does).
fn replay(text: &str) -> RunReport {
    let token = Token::decode(text).unwrap_or_else(|e| panic!("{text}: {e}"));
    let entries = registry();
    let target = entries
        .iter()
        .flat_map(|e| e.targets())
        .map(|(_, t)| t)
        .find(|t| t.name() == token.target)
        .unwrap_or_else(|| panic!("{text}: no target {}", token.target));
    target.run(
        &token.scenario,
        &token.config,
        token.seed,
        token.choices.as_deref(),
    )
}

/// FNV-1a-64 of the run's trace (as JSON): two replays with the same digest took the same
/// steps with the same results.
fn trace_digest(r: &RunReport) -> u64 {
    let json = serde_json::to_string(&r.trace).expect("a trace serializes");
    json.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3)
    })
}

/// README's showcase run ("A counterexample, line by line") in every version that wrote it:
/// version 2 before the workload (the token README showed until version 3), version 2 with
/// the workload (reports/lock/published-pause.txt), version 3 (README now).
const SHOWCASE: [&str; 3] = [
    "lock/published:slow-holder+pause:AgIBAIABAZqZmZmZmak_AAAAAQHcC6Af0A_QD9wLoJwBMqCcAYC1GKD4rbvWh6eLdQQBAQMkTGTkp1Vn1w",
    "lock/published:slow-holder+pause:AgIBAACAAQGamZmZmZmpPwAAAAEB3AugH9AP0A_cC6CcATKgnAGAtRig-K271oeni3UEAQEDidBtZefUtv0",
    "lock/published:slow-holder+pause:AwIBAACAAQGamZmZmZmpPwAAAAEB3AugH9AP0A_cC6CcATKgnAGAtRig-K271oeni3UEAQEDqq9_mKk516Q",
];

/// A token kvsim 397aadd printed (reports/spinlock/published-delay.txt then): version 2,
/// timeouts before retries.
const V2_TIMEOUTS_BEFORE_RETRIES: &str = "spinlock/published:delay+delay:AgMDBAEAAQABAQCABAGamZmZmZmpPwAAAAEB3AugH9AP0A_cC6CcATKgnAGAtRi049_EnqKyv3kJAQECAgICAAToB6wCxBOnoZjnW8TAHQ";

#[test]
fn golden_tokens_of_every_version_replay_to_their_runs() {
    for text in SHOWCASE {
        let r = replay(text);
        assert_eq!(r.token, SHOWCASE[2], "printed again as today's token");
        let kvsim::Verdict::Violation(v) = &r.verdict else {
            panic!("{text}: {}", r.verdict)
        };
        assert_eq!(v.property, "mutual exclusion");
        assert_eq!(
            v.reason,
            "C1 and C0 were both inside the critical section from 2001 ms to 2003 ms: C1's lock \
             expired under it: memcached's clock counts whole seconds, so the TTL of 2 s that \
             C1 set when it took the lock at 0.001 s ended at 2.000 s, 1999 ms later, with C1 \
             still inside; C0 took the lock at 2.001 s"
        );
        assert_eq!(
            (r.steps, r.trace.len(), trace_digest(&r)),
            (2010, 2016, 13_860_050_075_543_372_894),
            "{text}"
        );
    }
    // The late write 397aadd found in the published spinlock (a 1 s timeout, delays of
    // 300 ms to 2.5 s), as it reads today.
    let r = replay(V2_TIMEOUTS_BEFORE_RETRIES);
    assert_eq!(
        (r.verdict.to_string().as_str(), r.steps, trace_digest(&r)),
        (
            "violation: mutual exclusion: C0 and C2 were both inside the critical section \
             from 504 ms to 506 ms",
            21,
            4_391_511_198_689_981_141
        )
    );
}

/// Every `kvsim replay TOKEN` in `text`: the word after it, up to a character no token
/// holds.
fn tokens_in(text: &str) -> Vec<String> {
    let is_token_char = |c: char| c.is_ascii_alphanumeric() || "-_:/+.".contains(c);
    text.match_indices("kvsim replay ")
        .map(|(i, m)| {
            let rest = &text[i + m.len()..];
            let end = rest.find(|c| !is_token_char(c)).unwrap_or(rest.len());
            rest[..end].trim_end_matches('.').to_string()
        })
        .collect()
}

/// The files under `dir` (recursively), in name order.
fn files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(listing) = std::fs::read_dir(dir) else {
        return;
    };
    let mut paths: Vec<PathBuf> = listing.map(|e| e.unwrap().path()).collect();
    paths.sort();
    for p in paths {
        if p.is_dir() {
            files(&p, out);
        } else {
            out.push(p);
        }
    }
}

#[test]
fn every_token_in_the_docs_replays_to_a_violation() {
    let root = root();
    let mut paths = vec![root.join("README.md")];
    files(&root.join("examples"), &mut paths);
    files(&root.join("reports"), &mut paths);
    let mut checked = std::collections::BTreeSet::new();
    let mut failures = Vec::new();
    for path in &paths {
        let Ok(text) = std::fs::read_to_string(path) else {
            continue; // not text
        };
        for token in tokens_in(&text) {
            // A placeholder in prose (`kvsim replay TOKEN`), not a token.
            if token.chars().all(|c| c.is_ascii_uppercase()) {
                continue;
            }
            if !checked.insert(token.clone()) {
                continue;
            }
            let verdict = match Token::decode(&token) {
                Ok(_) => replay(&token).verdict,
                Err(e) => {
                    failures.push(format!("{}: {token}: {e}", path.display()));
                    continue;
                }
            };
            if !verdict.is_violation() {
                failures.push(format!("{}: {token}: {verdict}", path.display()));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    // README's showcase and the reports' counterexamples: not a vacuous pass.
    assert!(checked.len() > 50, "only {} tokens found", checked.len());
    assert!(checked.contains(SHOWCASE[2]), "README's showcase token");
}

/// README's showcase ("A counterexample, line by line") is what `kvsim replay` of its
/// token prints, line by line (but the header's "shrunk …", which only `kvsim check`
/// prints: a replay says how many steps).
#[test]
fn readme_showcase_is_its_tokens_replay_line_by_line() {
    let readme = std::fs::read_to_string(root().join("README.md")).unwrap();
    let section = readme
        .split("## A counterexample, line by line")
        .nth(1)
        .expect("README has the section");
    let block = section
        .split("```text\n")
        .nth(1)
        .and_then(|b| b.split("```").next())
        .expect("the section has a text block");
    let token = tokens_in(block);
    assert_eq!(token, [SHOWCASE[2]], "the block's token is version 3's");
    let out = Command::new(env!("CARGO_BIN_EXE_kvsim"))
        .args(["replay", &token[0]])
        .env("NO_COLOR", "1")
        .output()
        .expect("kvsim runs");
    assert_eq!(out.status.code(), Some(1), "a violation");
    let printed = String::from_utf8(out.stdout).unwrap();
    let (shown, printed): (Vec<&str>, Vec<&str>) =
        (block.lines().collect(), printed.lines().collect());
    assert_eq!(shown.len(), printed.len(), "{printed:#?}");
    for (i, (a, b)) in shown.iter().zip(&printed).enumerate() {
        if i == 2 {
            assert!(a.starts_with("  shrunk 2062 → 2016 steps"), "{a}");
            assert_eq!(*b, "  2016 steps");
            continue;
        }
        assert_eq!(a, b, "line {}", i + 1);
    }
}
