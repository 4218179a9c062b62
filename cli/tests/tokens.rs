//! Replay tokens keep working across releases (see `kvsim::sim::Token`, Versions): golden
//! tokens of every version replay to the same run, and every `kvsim replay TOKEN` printed
//! in the docs (README.md, examples/, reports/) replays in process through the registry
//! and ends in the violation it was printed for: verdict `violation`, and the property the
//! doc states where it states one (a report's `kvsim: violation: PROPERTY in TARGET`
//! header, or the numbered finding `N. PROPERTY: …` on the line before); a token that
//! fails is named with its file and line. README's line-by-line counterexample is what its
//! token's replay prints.

use kvsim::harness::records::RunReport;
use kvsim::harness::target::Target;
use kvsim::sim::Token;
use kvsim_models::registry::{registry, Entry};
use std::collections::BTreeMap;
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
    replay_in(&registry(), text).unwrap_or_else(|e| panic!("{text}: {e}"))
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
/// the workload (reports/lock/published-pause.txt), version 3, version 4 (README now: the
/// choices run-length encoded), version 5 (README now: the slab geometry added).
const SHOWCASE: [&str; 5] = [
    "lock/published:slow-holder+pause:AgIBAIABAZqZmZmZmak_AAAAAQHcC6Af0A_QD9wLoJwBMqCcAYC1GKD4rbvWh6eLdQQBAQMkTGTkp1Vn1w",
    "lock/published:slow-holder+pause:AgIBAACAAQGamZmZmZmpPwAAAAEB3AugH9AP0A_cC6CcATKgnAGAtRig-K271oeni3UEAQEDidBtZefUtv0",
    "lock/published:slow-holder+pause:AwIBAACAAQGamZmZmZmpPwAAAAEB3AugH9AP0A_cC6CcATKgnAGAtRig-K271oeni3UEAQEDqq9_mKk516Q",
    "lock/published:slow-holder+pause:BAIBAACAAQGamZmZmZmpPwAAAAEB3AugH9AP0A_cC6CcATKgnAGAtRig-K271oeni3UEAwAGNo21AA81e84",
    "lock/published:slow-holder+pause:BQIBAACAAQGamZmZmZmpPwAAAAEB3AugH9AP0A_cC6CcATKgnAGAtRig-K271oeni3UEAwAG2MG1AV0Otkw",
];

/// A token kvsim 397aadd printed (reports/spinlock/published-delay.txt then): version 2,
/// timeouts before retries.
const V2_TIMEOUTS_BEFORE_RETRIES: &str = "spinlock/published:delay+delay:AgMDBAEAAQABAQCABAGamZmZmZmpPwAAAAEB3AugH9AP0A_cC6CcATKgnAGAtRi049_EnqKyv3kJAQECAgICAAToB6wCxBOnoZjnW8TAHQ";

#[test]
fn golden_tokens_of_every_version_replay_to_their_runs() {
    for text in SHOWCASE {
        let r = replay(text);
        assert_eq!(r.token, SHOWCASE[4], "printed again as today's token");
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

/// The most bytes of one doc read (a doc bigger than this is not a doc).
const MAX_FILE_BYTES: u64 = 16 << 20;

/// The files under `dir` (recursively, build output skipped), in name order.
fn files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(listing) = std::fs::read_dir(dir) else {
        return;
    };
    let mut paths: Vec<PathBuf> = listing.map(|e| e.unwrap().path()).collect();
    paths.sort();
    for p in paths {
        if p.is_dir() {
            if p.file_name().is_some_and(|n| n != "target") {
                files(&p, out);
            }
        } else {
            out.push(p);
        }
    }
}

/// One `kvsim replay TOKEN` in a doc.
struct Found {
    /// `FILE:LINE`.
    place: String,
    /// The token.
    token: String,
    /// The property the doc states for it, if it states one: (the line saying it, and
    /// what it says: a report header's property, or a numbered finding's line).
    stated: Option<Stated>,
}

enum Stated {
    /// `kvsim: violation: PROPERTY in TARGET`: the property.
    Header(String),
    /// `N. TEXT`: the finding's line, which must start with the property.
    Finding(String),
}

/// The characters of a token: base64url, the separators and the names' characters.
fn token_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || "-_:/+.".contains(c)
}

/// Every `kvsim replay TOKEN` of `text` (a token holds at least `M/V:S:P`; `TOKEN` and
/// other words are skipped), with the property stated before it.
fn tokens_in(file: &str, text: &str) -> Vec<Found> {
    let lines: Vec<&str> = text.lines().collect();
    let mut found = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        for (at, _) in line.match_indices("kvsim replay ") {
            let rest = &line[at + "kvsim replay ".len()..];
            let token: String = rest.chars().take_while(|&c| token_char(c)).collect();
            let token = token.trim_end_matches('.').to_string();
            if token.matches(':').count() < 2 || !token.contains('/') {
                continue;
            }
            let target = token.split(':').next().unwrap_or_default();
            // A report's header within the 80 lines before, for this target.
            let header = lines[i.saturating_sub(80)..i].iter().rev().find_map(|l| {
                let l = l.trim_start();
                let after = l.strip_prefix("kvsim: violation: ")?;
                let (property, tail) = after.split_once(" in ")?;
                tail.starts_with(target)
                    .then(|| Stated::Header(property.to_string()))
            });
            // A numbered finding on the line before.
            let finding = i
                .checked_sub(1)
                .map(|j| lines[j].trim_start())
                .and_then(|l| {
                    let (n, after) = l.split_once(". ")?;
                    (!n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
                        .then(|| Stated::Finding(after.to_string()))
                });
            found.push(Found {
                place: format!("{file}:{}", i + 1),
                token,
                stated: finding.or(header),
            });
        }
    }
    found
}

/// Replays `text` as `kvsim replay` does: decoded, its target found in the registry.
fn replay_in(entries: &[Entry], text: &str) -> Result<RunReport, String> {
    let token = Token::decode(text).map_err(|e| e.to_string())?;
    let target: &dyn Target = entries
        .iter()
        .flat_map(|e| e.targets())
        .map(|(_, t)| t)
        .find(|t| t.name() == token.target)
        .ok_or_else(|| format!("no registered target {}", token.target))?;
    Ok(target.run(
        &token.scenario,
        &token.config,
        token.seed,
        token.choices.as_deref(),
    ))
}

/// What is wrong with `found`'s replay, if anything.
fn check(found: &Found, run: &Result<RunReport, String>) -> Option<String> {
    let run = match run {
        Err(e) => return Some(format!("does not replay: {e}")),
        Ok(r) => r,
    };
    let kvsim::Verdict::Violation(v) = &run.verdict else {
        return Some(format!(
            "replays to {} ({}), not to its violation",
            run.verdict.name(),
            run.verdict.reason().unwrap_or_default()
        ));
    };
    match &found.stated {
        Some(Stated::Header(p)) if *p != v.property => Some(format!(
            "the doc states {p:?}, the replay violates {:?}",
            v.property
        )),
        Some(Stated::Finding(line)) if !line.starts_with(&format!("{}:", v.property)) => {
            Some(format!(
                "the doc's finding reads {:?}, the replay violates {:?}",
                line.chars().take(80).collect::<String>(),
                v.property
            ))
        }
        _ => None,
    }
}

#[test]
fn every_replay_token_in_the_docs_ends_in_its_violation() {
    let root = root();
    let entries = registry();
    let mut paths = vec![root.join("README.md")];
    files(&root.join("examples"), &mut paths);
    files(&root.join("reports"), &mut paths);
    let mut all = Vec::new();
    for path in paths {
        let len = std::fs::metadata(&path).map(|m| m.len()).unwrap_or(0);
        assert!(
            len <= MAX_FILE_BYTES,
            "{} is over {MAX_FILE_BYTES} bytes",
            path.display()
        );
        let Ok(text) = std::fs::read_to_string(&path) else {
            continue; // not text
        };
        let name = path
            .strip_prefix(&root)
            .unwrap_or(&path)
            .display()
            .to_string();
        all.extend(tokens_in(&name, &text));
    }
    // README's showcase, a report per structure and their findings at least.
    assert!(all.len() > 100, "only {} tokens found", all.len());
    let mut runs: BTreeMap<&str, Result<RunReport, String>> = BTreeMap::new();
    let mut failures = Vec::new();
    for f in &all {
        let run = runs
            .entry(f.token.as_str())
            .or_insert_with(|| replay_in(&entries, &f.token));
        if let Some(why) = check(f, run) {
            failures.push(format!("{}: kvsim replay {}: {why}", f.place, f.token));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} docs' tokens fail:\n{}",
        failures.len(),
        all.len(),
        failures.join("\n")
    );
    assert!(
        all.iter().any(|f| f.token == SHOWCASE[4]),
        "README's showcase token"
    );
}

#[test]
fn a_token_that_fails_is_named_with_its_file_and_line() {
    let doc = "intro\n\
               kvsim: violation: mutual exclusion in lock/published (scenario x)\n\
               1. progress: stuck\n\
               `kvsim replay lock/published:x:BAAA` and `kvsim replay TOKEN`\n";
    let found = tokens_in("DOC.md", doc);
    assert_eq!(found.len(), 1);
    assert_eq!(found[0].place, "DOC.md:4");
    assert_eq!(found[0].token, "lock/published:x:BAAA");
    let entries = registry();
    let run = replay_in(&entries, &found[0].token);
    assert!(check(&found[0], &run)
        .unwrap()
        .starts_with("does not replay: bad replay token"));
    // A real token whose stated property is another: named.
    let run = replay_in(&entries, SHOWCASE[3]);
    let wrong = Found {
        place: "DOC.md:1".into(),
        token: SHOWCASE[3].into(),
        stated: Some(Stated::Header("linearizability".into())),
    };
    assert_eq!(
        check(&wrong, &run).unwrap(),
        "the doc states \"linearizability\", the replay violates \"mutual exclusion\""
    );
    let right = Found {
        stated: Some(Stated::Finding("mutual exclusion: C1 and C0 …".into())),
        ..wrong
    };
    assert_eq!(check(&right, &run), None);
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
    let token: Vec<String> = tokens_in("README.md", block)
        .into_iter()
        .map(|f| f.token)
        .collect();
    assert_eq!(token, [SHOWCASE[4]], "the block's token is version 5's");
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
