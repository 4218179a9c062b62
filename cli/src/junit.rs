//! `kvsim check --junit FILE`: the results as JUnit XML, the format CI systems display.
//!
//! One `<testsuite>` per target, one `<testcase>` per target × scenario (`classname` the
//! target, `name` the scenario). A case fails when the check's own gate fails it: in a
//! gate (`kvsim check TARGET`) a violation is a `<failure>` and an `unknown` an `<error>`
//! (never a pass); checking every model against its expectations, a verdict that differs
//! from the expected one is a `<failure>`. A failure's text is the minimal counterexample
//! as `kvsim check` prints it, then the line that replays it. Every case's
//! `<system-out>` gives its seed, knobs, runs, verdict and findings.

use crate::check::reason;
use crate::error::CliError;
use kvsim::records::CheckReport;
use kvsim::verdict::Verdict;
use std::fmt::Write as _;
use std::fs::File;
use std::io::Write as _;
use std::path::{Path, PathBuf};

/// One test case: a check's report and what the gate made of it.
pub struct Case<'r> {
    /// The check.
    pub report: &'r CheckReport,
    /// The verdict the registry expects, when the run checks expectations.
    pub expected: Option<&'static str>,
    /// Whether the case passes (the verdict is `ok` in a gate; it matches its
    /// expectation otherwise).
    pub passed: bool,
    /// The scenario's knobs in one line (faults, clients, ops, strategy, …).
    pub knobs: String,
}

/// The XML document of `cases`, grouped by target in their order of appearance.
pub fn render(seed: u64, cases: &[Case<'_>]) -> String {
    let mut targets: Vec<&str> = Vec::new();
    for c in cases {
        if !targets.contains(&c.report.target.as_str()) {
            targets.push(&c.report.target);
        }
    }
    let (failures, errors) = counts(cases.iter());
    let secs = |ms: u64| format!("{:.3}", ms as f64 / 1000.0);
    let total_ms: u64 = cases.iter().map(|c| c.report.millis).sum();
    let mut out = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    let _ = writeln!(
        out,
        "<testsuites name=\"kvsim check\" tests=\"{}\" failures=\"{failures}\" errors=\"{errors}\" time=\"{}\">",
        cases.len(),
        secs(total_ms)
    );
    for target in targets {
        let mine: Vec<&Case<'_>> = cases.iter().filter(|c| c.report.target == target).collect();
        let (failures, errors) = counts(mine.iter().copied());
        let _ = writeln!(
            out,
            "  <testsuite name=\"{}\" tests=\"{}\" failures=\"{failures}\" errors=\"{errors}\" time=\"{}\">",
            escape(target),
            mine.len(),
            secs(mine.iter().map(|c| c.report.millis).sum())
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

/// Failures and errors among `cases`: an `unknown` in a gate is an error, every other
/// failing case a failure.
fn counts<'a, 'r: 'a>(cases: impl Iterator<Item = &'a Case<'r>>) -> (usize, usize) {
    cases
        .filter(|c| !c.passed)
        .fold((0, 0), |(f, e), c| match failure_kind(c) {
            Kind::Error => (f, e + 1),
            Kind::Failure => (f + 1, e),
        })
}

enum Kind {
    Failure,
    Error,
}

fn failure_kind(case: &Case<'_>) -> Kind {
    match (&case.report.verdict, case.expected) {
        (Verdict::Unknown(_), None) => Kind::Error,
        _ => Kind::Failure,
    }
}

fn testcase(out: &mut String, seed: u64, case: &Case<'_>) {
    let r = case.report;
    let _ = writeln!(
        out,
        "    <testcase classname=\"{}\" name=\"{}\" time=\"{:.3}\">",
        escape(&r.target),
        escape(&r.scenario),
        r.millis as f64 / 1000.0
    );
    if !case.passed {
        let message = match (case.expected, &r.verdict) {
            (Some(expected), v) => format!(
                "expected {expected}, found {}{}",
                v.name(),
                reason(v).map(|x| format!(": {x}")).unwrap_or_default()
            ),
            (None, v) => format!("{}: {}", v.name(), reason(v).unwrap_or_default()),
        };
        let (tag, kind) = match failure_kind(case) {
            Kind::Error => ("error", "unknown"),
            Kind::Failure if case.expected.is_some() => ("failure", "unexpected verdict"),
            Kind::Failure => ("failure", "violation"),
        };
        let mut body = String::new();
        if let Some(run) = &r.failure {
            body.push_str(&kvsim::report::text(run));
            let _ = writeln!(body, "\nreplay: kvsim replay {}", run.token);
        }
        let _ = writeln!(
            out,
            "      <{tag} type=\"{kind}\" message=\"{}\">{}</{tag}>",
            escape(&message),
            escape(&body)
        );
    }
    let mut log = format!(
        "seed {seed} · {} · {} runs ({} violating) · verdict {}",
        case.knobs,
        r.runs,
        r.violating_runs,
        r.verdict.name()
    );
    if let Some(expected) = case.expected {
        let _ = write!(log, " (expected {expected})");
    }
    log.push('\n');
    for f in &r.findings {
        let _ = writeln!(
            log,
            "finding: {}: {} — needs {} — kvsim replay {}",
            f.property,
            f.reason,
            f.describe_faults(),
            f.replay
        );
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
    use super::escape;

    #[test]
    fn text_xml_cannot_carry_is_escaped_not_dropped() {
        assert_eq!(
            escape("a<b & \"c\" 'd'\u{1}\te"),
            "a&lt;b &amp; &quot;c&quot; &#39;d&#39;\\u{1}\te"
        );
    }
}
