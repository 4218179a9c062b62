//! `kvsim check --junit FILE`: the results as JUnit XML, the format CI systems display.
//!
//! One `<testsuite>` per target, one `<testcase>` per target × scenario (`classname` the
//! target, `name` the scenario). A case fails when the check's own gate fails it: in a
//! gate (`kvsim check TARGET`) a violation is a `<failure>` and an `unknown` an `<error>`
//! (never a pass); checking every model against its expectations, a verdict that differs
//! from the expected one is a `<failure>`. A violation the registry expects (an expected
//! failure: a published defect, or a fixed variant's `impossible` or `not yet fixed`
//! scenario) is a `<skipped>` case in either mode, its message `expected violation: …`
//! and its text the counterexample; an unexpected violation stays a `<failure>`. A failure's text is the minimal counterexample
//! as `kvsim check` prints it, then the line that replays it. Every case's
//! `<system-out>` gives its seed, knobs, runs, verdict and findings.

use crate::error::CliError;
use crate::marks::Mark;
use kvsim::harness::records::{CheckReport, RunReport};
use std::fmt::Write as _;
use std::fs::File;
use std::io::Write as _;
use std::path::{Path, PathBuf};

/// One test case: a cell's results and what the gate made of them.
pub struct Case {
    /// The target (`MODEL/VARIANT`): the case's class.
    pub target: String,
    /// The scenario: the case's name.
    pub scenario: String,
    /// How long the cell's runs took.
    pub millis: u64,
    /// The verdict's name (`ok`, `violation`, `unknown`).
    pub verdict: String,
    /// Why, for a verdict other than `ok`.
    pub reason: Option<String>,
    /// The verdict the registry expects, when the run checks expectations.
    pub expected: Option<String>,
    /// Why an expected failure is expected (`impossible: …` or `not yet fixed: …`), for a
    /// fixed variant whose scenario labels it.
    pub label: Option<String>,
    /// Whether the case passes (the verdict is `ok` in a gate; it matches its
    /// expectation otherwise).
    pub passed: bool,
    /// Whether the verdict is a violation the registry expects: a `<skipped>` case (with
    /// `label`, if any), whatever `passed` says.
    pub expected_failure: bool,
    /// The scenario's knobs in one line (faults, clients, ops, strategy, …).
    pub knobs: String,
    /// Runs done, and how many of them violated a property.
    pub runs: (u64, u64),
    /// One line per finding: property, reason, faults it needs, its replay line.
    pub findings: Vec<String>,
    /// The minimal counterexample as `kvsim check` prints it, ending with its replay line.
    pub counterexample: Option<String>,
}

impl Case {
    /// The case of one check's `report`.
    pub fn of_report(
        report: &CheckReport,
        expected: Option<&'static str>,
        label: Option<String>,
        expected_failure: bool,
        passed: bool,
        knobs: String,
    ) -> Case {
        Case {
            target: report.target.clone(),
            scenario: report.scenario.clone(),
            millis: report.millis,
            verdict: report.verdict.name().to_string(),
            reason: report.verdict.reason(),
            expected: expected.map(str::to_string),
            label,
            expected_failure,
            passed,
            knobs,
            runs: (report.runs, report.violating_runs),
            findings: report
                .findings
                .iter()
                .map(|f| finding_line(&f.property, &f.reason, &f.describe_faults(), &f.replay))
                .collect(),
            counterexample: report.failure.as_ref().map(counterexample),
        }
    }
}

/// A finding in one line of a case's log.
pub fn finding_line(property: &str, reason: &str, faults: &str, replay: &str) -> String {
    format!("{property}: {reason} — needs {faults} — kvsim replay {replay}")
}

/// A failing run's text report, then the line that replays it.
pub fn counterexample(run: &RunReport) -> String {
    let mut body = kvsim::report::text(run);
    let _ = writeln!(body, "\nreplay: kvsim replay {}", run.token);
    body
}

/// The XML document of `cases`, grouped by target in their order of appearance.
pub fn render(seed: u64, cases: &[Case]) -> String {
    let mut targets: Vec<&str> = Vec::new();
    for c in cases {
        if !targets.contains(&c.target.as_str()) {
            targets.push(&c.target);
        }
    }
    let (failures, errors, skipped) = counts(cases.iter());
    let secs = |ms: u64| format!("{:.3}", ms as f64 / 1000.0);
    let total_ms: u64 = cases.iter().map(|c| c.millis).sum();
    let mut out = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    let _ = writeln!(
        out,
        "<testsuites name=\"kvsim check\" tests=\"{}\" failures=\"{failures}\" errors=\"{errors}\" skipped=\"{skipped}\" time=\"{}\">",
        cases.len(),
        secs(total_ms)
    );
    for target in targets {
        let mine: Vec<&Case> = cases.iter().filter(|c| c.target == target).collect();
        let (failures, errors, skipped) = counts(mine.iter().copied());
        let _ = writeln!(
            out,
            "  <testsuite name=\"{}\" tests=\"{}\" failures=\"{failures}\" errors=\"{errors}\" skipped=\"{skipped}\" time=\"{}\">",
            escape(target),
            mine.len(),
            secs(mine.iter().map(|c| c.millis).sum())
        );
        let _ = writeln!(
            out,
            "    <properties><property name=\"seed\" value=\"{seed}\"/></properties>"
        );
        for case in mine {
            testcase(&mut out, seed, case);
        }
        out.push_str("  </testsuite>\n");
    }
    out.push_str("</testsuites>\n");
    out
}

/// Failures, errors and skipped cases among `cases`: an expected failure is skipped, an
/// `unknown` in a gate is an error, every other failing case a failure.
fn counts<'a>(cases: impl Iterator<Item = &'a Case>) -> (usize, usize, usize) {
    cases.fold((0, 0, 0), |(f, e, s), c| {
        if c.expected_failure {
            (f, e, s + 1)
        } else if c.passed {
            (f, e, s)
        } else {
            match failure_kind(c) {
                Kind::Error => (f, e + 1, s),
                Kind::Failure => (f + 1, e, s),
            }
        }
    })
}

enum Kind {
    Failure,
    Error,
}

fn failure_kind(case: &Case) -> Kind {
    if case.verdict == "unknown" && case.expected.is_none() {
        Kind::Error
    } else {
        Kind::Failure
    }
}

fn testcase(out: &mut String, seed: u64, case: &Case) {
    let _ = writeln!(
        out,
        "    <testcase classname=\"{}\" name=\"{}\" time=\"{:.3}\">",
        escape(&case.target),
        escape(&case.scenario),
        case.millis as f64 / 1000.0
    );
    // An expected failure is `<skipped>`, as pytest reports an xfail: Jenkins, GitLab,
    // Azure DevOps and the GitHub test-report actions show skipped cases apart, with their
    // message, and none of them counts one as a failure (a `<failure>` would be red on
    // every dashboard; properties are shown by few). Its text is the counterexample, for
    // the dashboards that show it.
    let element = if case.expected_failure {
        let message = Mark::skipped_message(case.label.as_deref());
        Some(("skipped", "expected violation", message))
    } else if !case.passed {
        let why = case.reason.as_deref();
        let message = match &case.expected {
            Some(expected) => format!(
                "expected {expected}{}, found {}{}",
                case.label
                    .as_deref()
                    .map(|l| format!(" ({l})"))
                    .unwrap_or_default(),
                case.verdict,
                why.map(|x| format!(": {x}")).unwrap_or_default()
            ),
            None => format!("{}: {}", case.verdict, why.unwrap_or_default()),
        };
        let (tag, kind) = match failure_kind(case) {
            Kind::Error => ("error", "unknown"),
            Kind::Failure if case.expected.is_some() => ("failure", "unexpected verdict"),
            Kind::Failure => ("failure", "violation"),
        };
        Some((tag, kind, message))
    } else {
        None
    };
    if let Some((tag, kind, message)) = element {
        let body = case.counterexample.as_deref().unwrap_or_default();
        let _ = writeln!(
            out,
            "      <{tag} type=\"{kind}\" message=\"{}\">{}</{tag}>",
            escape(&message),
            escape(body)
        );
    }
    let mut log = format!(
        "seed {seed} · {} · {} runs ({} violating) · verdict {}",
        case.knobs, case.runs.0, case.runs.1, case.verdict
    );
    if let Some(expected) = &case.expected {
        let _ = write!(log, " (expected {expected})");
    }
    if let Some(label) = &case.label {
        let _ = write!(log, "\nexpected to fail: {label}");
    }
    log.push('\n');
    for f in &case.findings {
        let _ = writeln!(log, "finding: {f}");
    }
    let _ = writeln!(out, "      <system-out>{}</system-out>", escape(&log));
    out.push_str("    </testcase>\n");
}

/// Text as XML 1.0 character data or an attribute value: markup characters escaped as
/// in HTML ([`kvsim::report::escape`]), characters XML cannot carry at all (controls other
/// than tab, newline, return) shown as `\u{..}`.
fn escape(s: &str) -> String {
    let mut carried = String::with_capacity(s.len());
    for ch in s.chars() {
        match ch {
            '\t' | '\n' | '\r' => carried.push(ch),
            c if (c as u32) < 0x20 || c == '\u{fffe}' || c == '\u{ffff}' => {
                let _ = write!(carried, "\\u{{{:x}}}", c as u32);
            }
            c => carried.push(c),
        }
    }
    kvsim::report::escape(&carried)
}

/// The file at `path`, created (or emptied) before the checks run, so a path that cannot
/// be written is an error at once, not after minutes of checking.
pub fn create(path: &Path) -> Result<(PathBuf, File), CliError> {
    File::create(path)
        .map(|f| (path.to_path_buf(), f))
        .map_err(|e| cannot_write(path, e))
}

/// Writes the document to the file [`create`] made.
pub fn write((path, mut file): (PathBuf, File), xml: &str) -> Result<(), CliError> {
    file.write_all(xml.as_bytes())
        .and_then(|()| file.flush())
        .map_err(|e| cannot_write(&path, e))
}

fn cannot_write(path: &Path, e: std::io::Error) -> CliError {
    CliError::new(format!(
        "cannot write the junit file {}: {e}",
        path.display()
    ))
}

#[cfg(test)]
mod tests {
    use super::{escape, render, Case};

    fn case(scenario: &str, verdict: &str, expected_failure: bool, passed: bool) -> Case {
        Case {
            target: "lock/fixed".into(),
            scenario: scenario.into(),
            millis: 1,
            verdict: verdict.into(),
            reason: (verdict != "ok").then(|| "two holders".to_string()),
            expected: None,
            label: expected_failure.then(|| "impossible: an evicted key reads as free".into()),
            expected_failure,
            passed,
            knobs: "faults evict".into(),
            runs: (10, 1),
            findings: vec![],
            counterexample: (verdict == "violation").then(|| "the run\n".to_string()),
        }
    }

    #[test]
    fn an_expected_violation_is_skipped_and_an_unexpected_one_fails() {
        let xml = render(
            1,
            &[
                case("evict", "violation", true, false),
                case("no-faults", "violation", false, false),
                case("lru", "ok", false, true),
            ],
        );
        assert!(
            xml.contains("failures=\"1\" errors=\"0\" skipped=\"1\""),
            "{xml}"
        );
        assert!(
            xml.contains(
                "<skipped type=\"expected violation\" message=\"expected violation: impossible: \
             an evicted key reads as free\">the run\n</skipped>"
            ),
            "{xml}"
        );
        assert!(
            xml.contains("<failure type=\"violation\" message=\"violation: two holders\">"),
            "{xml}"
        );
        assert_eq!(xml.matches("<skipped").count(), 1);
        assert_eq!(xml.matches("<failure").count(), 1);
    }

    #[test]
    fn text_xml_cannot_carry_is_escaped_not_dropped() {
        assert_eq!(
            escape("a<b & \"c\" 'd'\u{1}\te"),
            "a&lt;b &amp; &quot;c&quot; &#39;d&#39;\\u{1}\te"
        );
    }
}
