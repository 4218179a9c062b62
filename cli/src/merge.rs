//! `kvsim merge FILE...`: the `--json` outputs of the shards of one check
//! (`kvsim check --shard I/N --json`) combined into the check's verdict.
//!
//! The shards must be the whole check: the same seed, every shard `1/N` … `N/N` exactly
//! once, one identity ([`crate::identity`]: kvsim's version, targets, scenarios, every
//! knob, planned runs, budget, shrinking, corpus) whose digest each file still matches,
//! and counts that can be; anything less is an error, never a verdict. Per scenario the
//! runs add up, a violation in any shard is the scenario's violation (else an `unknown` in
//! any is its `unknown`), and findings that share property, reason class and faults are
//! one finding, with the first shard's counterexample to replay.

use crate::check;
use crate::error::{self, CliError};
use crate::identity;
use crate::junit;
use crate::marks::{Mark, Tally};
use crate::out::outln;
use kvsim::harness::sweep::Shard;
use kvsim_models::expect::ExpectedVerdict;
use kvsim_models::registry::Entry;
use serde_json::{json, Map, Value};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// Largest shard output read, in bytes.
const MAX_FILE_BYTES: u64 = 256 << 20;

/// Runs `kvsim merge`.
pub fn main(
    files: &[PathBuf],
    json_out: bool,
    junit_path: Option<&Path>,
) -> Result<ExitCode, CliError> {
    let junit_file = junit_path.map(junit::create).transpose()?;
    let outputs = files
        .iter()
        .map(|f| read(f).map(|v| (f, v)))
        .collect::<Result<Vec<_>, _>>()?;
    let (seed, shards) = complete(&outputs)?;
    let entries = crate::installed::registry();
    let plan = plan_of(&outputs[0].1["identity"], &entries)
        .map_err(|e| CliError::of("merge", format!("{}: {e}", outputs[0].0.display())))?;
    one_check(&outputs, &plan)?;
    let first = &outputs[0].1["results"];
    let same_cell =
        |a: &Value, b: &Value| a["target"] == b["target"] && a["scenario"] == b["scenario"];
    let mut rows = Vec::new();
    for (k, row) in first.as_array().into_iter().flatten().enumerate() {
        let mut parts = Vec::new();
        for (file, out) in &outputs {
            let theirs = &out["results"][k];
            if !same_cell(theirs, row) {
                return Err(CliError::of(
                    "merge",
                    format!(
                        "{}: result {} is {} {}, where {} has {} {}: the shards are not of one check",
                        file.display(),
                        k + 1,
                        theirs["target"],
                        theirs["scenario"],
                        outputs[0].0.display(),
                        row["target"],
                        row["scenario"]
                    ),
                ));
            }
            parts.push(theirs);
        }
        rows.push(merge_rows(&parts));
    }
    let gate = rows.iter().all(|r| r["expected"].is_null());
    let code = if gate {
        if rows.iter().any(|r| r["verdict"] == "violation") {
            1
        } else if rows.iter().any(|r| r["verdict"] == "unknown") {
            3
        } else {
            0
        }
    } else {
        check::expectations_code(differ(&rows, false), differ(&rows, true))
    };
    let marks = marks(&rows, &plan);
    if let Some(file) = junit_file {
        let cases: Vec<junit::Case> = rows
            .iter()
            .zip(&marks)
            .map(|(r, m)| case(r, gate, *m))
            .collect();
        junit::write(file, &junit::render(seed, &cases))?;
    }
    if json_out {
        let identity = &outputs[0].1["identity"];
        let merged = json!({
            "seed": seed,
            "shard": "1/1",
            "shards": shards,
            "results": rows,
            "identity": identity,
            "identity_digest": identity::digest(identity),
        });
        outln!("{}", serde_json::to_string_pretty(&merged).expect("json"))?;
    } else {
        print_text(seed, shards, &rows, &marks)?;
        if !gate {
            check::print_expectations(differ(&rows, false), differ(&rows, true), rows.len())?;
        }
        Tally::of(
            marks
                .iter()
                .zip(&rows)
                .map(|(m, r)| (*m, r["verdict"].as_str().unwrap_or_default())),
        )
        .print(gate)?;
    }
    Ok(error::code(code))
}

/// How many merged rows differ from their expectation (only the unknown ones, if
/// `unknown`).
fn differ(rows: &[Value], unknown: bool) -> usize {
    rows.iter()
        .filter(|r| r["matches"] == false && (!unknown || r["verdict"] == "unknown"))
        .count()
}

/// One shard's output, read and checked for its shape.
fn read(path: &PathBuf) -> Result<Value, CliError> {
    let fail = |what: String| CliError::of("merge", format!("{}: {what}", path.display()));
    let len = std::fs::metadata(path)
        .map_err(|e| fail(e.to_string()))?
        .len();
    if len > MAX_FILE_BYTES {
        return Err(fail(format!(
            "expected at most {MAX_FILE_BYTES} bytes of `kvsim check --json` output, found {len}"
        )));
    }
    let text = std::fs::read_to_string(path).map_err(|e| fail(e.to_string()))?;
    let value: Value = serde_json::from_str(&text)
        .map_err(|e| fail(format!("expected the JSON of `kvsim check --json`: {e}")))?;
    let shaped = value["seed"].is_u64()
        && value["shard"]
            .as_str()
            .is_some_and(|s| Shard::parse(s).is_ok())
        && value["results"].is_array();
    if !shaped {
        return Err(fail(
            "expected `kvsim check --json` output with seed, shard and results".to_string(),
        ));
    }
    if !value["identity"].is_object() {
        return Err(fail(
            "expected the check's identity (`identity` and `identity_digest`), found none: \
             a shard written by an older kvsim? run it again with this one"
                .to_string(),
        ));
    }
    let computed = identity::digest(&value["identity"]);
    if value["identity_digest"].as_str() != Some(computed.as_str()) {
        return Err(fail(format!(
            "its identity_digest is {}, where its identity's digest is {computed}: the file \
             was edited (run the shard again)",
            value["identity_digest"]
        )));
    }
    Ok(value)
}

/// Checks that every output has the first one's identity (the same check), and that its
/// results are that check's and hold counts that can be (within `plan`, the jobs the
/// identity names, each with its planned runs).
fn one_check(outputs: &[(&PathBuf, Value)], plan: &[(check::Job, u64)]) -> Result<(), CliError> {
    let (first, ours) = &outputs[0];
    for (file, v) in outputs {
        if let Some(d) = identity::differ(&ours["identity"], &v["identity"]) {
            return Err(CliError::of(
                "merge",
                format!(
                    "{}: {} is {}{}, where {} has {}: the shards are not of one check",
                    file.display(),
                    d.field,
                    d.theirs,
                    d.check.map(|c| format!(" in {c}")).unwrap_or_default(),
                    first.display(),
                    d.ours
                ),
            ));
        }
        plausible(file, v, plan)?;
    }
    Ok(())
}

/// The plan a check's identity ([`crate::identity`]) names, as `kvsim check` made it: the
/// same planner over the identity's targets, scenario and budget, each job with the knobs
/// and planned runs the identity gives it; with each job its planned runs (over all
/// shards). An identity whose checks are not this planner's jobs is an error.
fn plan_of(
    identity: &serde_json::Value,
    entries: &[Entry],
) -> Result<Vec<(check::Job, u64)>, String> {
    #[derive(clap::Parser)]
    struct Cmd {
        #[command(flatten)]
        args: check::Args,
    }
    let mut argv: Vec<String> = vec!["check".into()];
    let text = |v: &serde_json::Value| v.as_str().map(str::to_string);
    argv.extend(
        identity["targets"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(text),
    );
    let budget = &identity["budget"];
    let flags = [
        ("--scenario", text(&identity["scenario"])),
        ("--seed", Some(identity["seed"].to_string())),
        ("--shard", Some(format!("1/{}", identity["shards"]))),
        (
            "--time-limit",
            budget["time_limit_secs"].as_f64().map(|t| t.to_string()),
        ),
        (
            "--time-budget",
            budget["time_budget_secs"].as_f64().map(|t| t.to_string()),
        ),
        (
            "--min-runs",
            budget["min_runs"].as_u64().map(|n| n.to_string()),
        ),
        ("--runs", budget["runs_cap"].as_u64().map(|n| n.to_string())),
    ];
    for (flag, value) in flags {
        argv.extend(value.map(|v| [flag.to_string(), v]).into_iter().flatten());
    }
    let args = <Cmd as clap::Parser>::try_parse_from(&argv)
        .map_err(|e| format!("its identity is no check this kvsim plans: {e}"))?
        .args;
    let tuning = args.tuning()?;
    let jobs = check::plan(&args, entries)?;
    let checks = identity["checks"].as_array().map_or(&[][..], Vec::as_slice);
    if jobs.len() != checks.len() {
        return Err(format!(
            "its identity has {} checks, where this kvsim plans {} for it",
            checks.len(),
            jobs.len()
        ));
    }
    let mut planned = Vec::new();
    for (mut job, check) in jobs.into_iter().zip(checks) {
        let name = entries[job.target.entry].target(job.target.variant).name();
        let ours = json!([
            name,
            job.scenario.name,
            job.target.expected.map(|e| e.name())
        ]);
        if ours != json!([check["target"], check["scenario"], check["expected"]]) {
            return Err(format!(
                "its identity has {} {}, where this kvsim plans {} {}",
                check["target"], check["scenario"], ours[0], ours[1]
            ));
        }
        job.config = serde_json::from_value(check["config"].clone()).map_err(|e| {
            format!(
                "{} {}: its config is none of kvsim's: {e}",
                ours[0], ours[1]
            )
        })?;
        if budget["mode"] != "time" {
            job.scenario.runs = check["planned_runs"].as_u64().unwrap_or(0);
        }
        let runs = check::planned_runs(&job, &tuning);
        if check["planned_runs"].as_u64() != Some(runs) {
            return Err(format!(
                "its identity plans {} runs for {} {}, where this kvsim plans {runs}",
                check["planned_runs"], ours[0], ours[1]
            ));
        }
        planned.push((job, runs));
    }
    Ok(planned)
}

/// The verdicts a shard's row may carry.
const VERDICTS: [&str; 3] = ["ok", "violation", "unknown"];

/// Checks one shard's results against its identity: one row per check of the identity, in
/// its order, with counts that can be (whole numbers; no more runs than the shard's share
/// of the job's planned runs in `plan`; no more violating runs than runs; no finding with more runs than
/// the row's, its corpus replays added) and verdicts kvsim gives.
fn plausible(file: &Path, out: &Value, plan: &[(check::Job, u64)]) -> Result<(), CliError> {
    let shard = Shard::parse(out["shard"].as_str().unwrap_or_default()).expect("read checked it");
    let checks = out["identity"]["checks"]
        .as_array()
        .map_or(&[][..], Vec::as_slice);
    let rows = out["results"].as_array().map_or(&[][..], Vec::as_slice);
    let fail = |what: String| CliError::of("merge", format!("{}: {what}", file.display()));
    if rows.len() != checks.len() {
        return Err(fail(format!(
            "expected {} results (the checks of its identity), found {}",
            checks.len(),
            rows.len()
        )));
    }
    let replayed = match &out["corpus"] {
        Value::Null => 0,
        c => count(&c["replayed"]).ok_or_else(|| {
            fail(format!(
                "corpus.replayed is {}: expected a whole number",
                c["replayed"]
            ))
        })?,
    };
    for (k, ((row, check), (_, planned))) in rows.iter().zip(checks).zip(plan).enumerate() {
        let cell = format!("result {} ({} {})", k + 1, row["target"], row["scenario"]);
        for key in ["target", "scenario", "expected"] {
            if row[key] != check[key] {
                return Err(fail(format!(
                    "{cell}: {key} is {}, where its identity has {}: the results are not \
                     of the check it names",
                    row[key], check[key]
                )));
            }
        }
        let planned = *planned;
        let share = shard.share(planned);
        let number = |key: &str, max: u64, what: &str| -> Result<u64, CliError> {
            match count(&row[key]) {
                Some(n) if n <= max => Ok(n),
                _ => Err(fail(format!(
                    "{cell}: {key} is {}: expected a whole number from 0 to {max} ({what})",
                    row[key]
                ))),
            }
        };
        let runs = number(
            "runs",
            share,
            &format!("shard {shard}'s share of the {planned} planned runs"),
        )?;
        number("violating_runs", runs, "at most its runs")?;
        number("millis", u64::MAX, "milliseconds")?;
        let verdict = row["verdict"].as_str().unwrap_or_default();
        if !VERDICTS.contains(&verdict) {
            return Err(fail(format!(
                "{cell}: verdict is {}: expected one of {}",
                row["verdict"],
                VERDICTS.join(", ")
            )));
        }
        if !(row["matches"].is_null() || row["matches"].is_boolean()) {
            return Err(fail(format!(
                "{cell}: matches is {}: expected true, false or null",
                row["matches"]
            )));
        }
        let Some(findings) = row["findings"].as_array() else {
            return Err(fail(format!(
                "{cell}: findings is {}: expected a list",
                row["findings"]
            )));
        };
        for (i, f) in findings.iter().enumerate() {
            let max = runs + replayed;
            match count(&f["runs"]) {
                Some(n) if (1..=max).contains(&n) => {}
                _ => {
                    return Err(fail(format!(
                        "{cell}: finding {}'s runs is {}: expected a whole number from 1 to \
                         {max} (the result's runs, with the corpus replays)",
                        i + 1,
                        f["runs"]
                    )))
                }
            }
        }
        for (name, n) in row["probes"].as_object().into_iter().flatten() {
            if count(n).is_none() {
                return Err(fail(format!(
                    "{cell}: probe {name:?} is {n}: expected a whole number of hits"
                )));
            }
        }
    }
    Ok(())
}

/// A JSON value as a count: a whole number from 0 (not negative, not a fraction).
fn count(v: &Value) -> Option<u64> {
    v.as_u64()
}

/// The seed and shard count of outputs that are exactly the shards of one check.
fn complete(outputs: &[(&PathBuf, Value)]) -> Result<(u64, u64), CliError> {
    let fail = |what: String| CliError::of("merge", what);
    let shard =
        |v: &Value| Shard::parse(v["shard"].as_str().unwrap_or_default()).expect("read checked it");
    let Some((first, out)) = outputs.first() else {
        return Err(fail(
            "expected the --json output of every shard, found no file".into(),
        ));
    };
    let (seed, count) = (out["seed"].as_u64().unwrap_or(0), shard(out).count);
    let mut seen = vec![None; count as usize];
    for (file, v) in outputs {
        let s = shard(v);
        if v["seed"].as_u64() != Some(seed) || s.count != count {
            return Err(fail(format!(
                "{} is shard {s} of seed {}, {} shard {} of seed {seed}: not one check",
                file.display(),
                v["seed"],
                first.display(),
                shard(out)
            )));
        }
        if let Some(other) = seen[s.index as usize].replace(*file) {
            return Err(fail(format!(
                "shard {s} given twice ({} and {})",
                other.display(),
                file.display()
            )));
        }
        if v["results"].as_array().map(Vec::len) != out["results"].as_array().map(Vec::len) {
            return Err(fail(format!(
                "{} has {} results, {} has {}: the shards are not of one check",
                file.display(),
                v["results"].as_array().map_or(0, Vec::len),
                first.display(),
                out["results"].as_array().map_or(0, Vec::len)
            )));
        }
    }
    let missing: Vec<String> = (0..count)
        .filter(|&i| seen[i as usize].is_none())
        .map(|i| Shard { index: i, count }.to_string())
        .collect();
    if !missing.is_empty() {
        return Err(fail(format!(
            "expected all {count} shards, missing {}: a check without all its runs has no verdict",
            missing.join(", ")
        )));
    }
    Ok((seed, count))
}

/// One scenario's rows from every shard, as one.
fn merge_rows(parts: &[&Value]) -> Value {
    let mut row: Map<String, Value> = parts[0].as_object().cloned().unwrap_or_default();
    // A shard that holds none of the runs says nothing (its `unknown` is "no run").
    let with_runs: Vec<&Value> = parts
        .iter()
        .copied()
        .filter(|p| p["runs"].as_u64() > Some(0))
        .collect();
    let worst: &Value = ["violation", "unknown"]
        .into_iter()
        .find_map(|v| with_runs.iter().copied().find(|p| p["verdict"] == v))
        .or(with_runs.first().copied())
        .unwrap_or(parts[0]);
    for key in ["verdict", "reason", "replay"] {
        row.insert(key.into(), worst[key].clone());
    }
    for key in ["runs", "violating_runs", "millis"] {
        let sum: u64 = parts.iter().filter_map(|p| p[key].as_u64()).sum();
        row.insert(key.into(), sum.into());
    }
    let mut findings: Vec<Value> = Vec::new();
    for f in parts
        .iter()
        .flat_map(|p| p["findings"].as_array().into_iter().flatten())
    {
        let same = |g: &&mut Value| ["property", "class", "faults"].iter().all(|k| g[k] == f[k]);
        match findings.iter_mut().find(|g| same(g)) {
            Some(g) => {
                let runs = g["runs"].as_u64().unwrap_or(0) + f["runs"].as_u64().unwrap_or(0);
                g["runs"] = runs.into();
            }
            None => findings.push(f.clone()),
        }
    }
    row.insert("findings".into(), findings.into());
    let mut probes: Map<String, Value> = Map::new();
    for (name, n) in parts
        .iter()
        .flat_map(|p| p["probes"].as_object().into_iter().flatten())
    {
        let sum = probes.get(name).and_then(Value::as_u64).unwrap_or(0) + n.as_u64().unwrap_or(0);
        probes.insert(name.clone(), sum.into());
    }
    // A probe the scenario requires must be hit by some shard's runs (each shard leaves
    // that to the merge).
    let unreached = row["sometimes"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .find(|name| probes.get(*name).and_then(Value::as_u64).unwrap_or(0) == 0)
        .map(str::to_string);
    if let (Some(name), "ok") = (unreached, row["verdict"].as_str().unwrap_or_default()) {
        row.insert("verdict".into(), "unknown".into());
        row.insert(
            "reason".into(),
            format!(
                "probe {name:?} was never hit in the runs of any shard: the scenario requires it"
            )
            .into(),
        );
    }
    row.insert("probes".into(), probes.into());
    if let Some(expected) = row
        .get("expected")
        .and_then(Value::as_str)
        .and_then(ExpectedVerdict::from_name)
    {
        let matches = expected.matches_name(row["verdict"].as_str().unwrap_or_default());
        row.insert("matches".into(), matches.into());
    }
    // The registry's expectation, against the merged verdict (rows of a kvsim before the
    // marks carry none, and get none).
    if let Some(e) = expectation_of(&row) {
        let verdict = row["verdict"].as_str().unwrap_or_default();
        let failure = e == ExpectedVerdict::Violation && verdict == "violation";
        row.insert("as_expected".into(), e.matches_name(verdict).into());
        row.insert("expected_failure".into(), failure.into());
    }
    Value::Object(row)
}

/// The registry's expectation a row carries (`expected_verdict`), if any.
fn expectation_of(row: &Map<String, Value>) -> Option<ExpectedVerdict> {
    row.get("expected_verdict")
        .and_then(Value::as_str)
        .and_then(ExpectedVerdict::from_name)
}

/// Each merged row's mark: its expectation, and the label the plan's job gives it.
fn marks(rows: &[Value], plan: &[(check::Job, u64)]) -> Vec<Mark> {
    rows.iter()
        .zip(plan)
        .map(|(r, (job, _))| {
            let e = r.as_object().and_then(expectation_of);
            Mark::of(
                e,
                job.target.label.filter(|_| e.is_some()),
                r["verdict"].as_str().unwrap_or_default(),
            )
        })
        .collect()
}

fn print_text(seed: u64, shards: u64, rows: &[Value], marks: &[Mark]) -> Result<(), CliError> {
    outln!(
        "kvsim merge · seed {seed} · {shards} shards · {} checks",
        rows.len()
    )?;
    let s = |v: &Value| v.as_str().unwrap_or_default().to_string();
    for (r, m) in rows.iter().zip(marks) {
        // A row that differs from the check's own expectation is marked, as before the
        // registry's marks (they agree when checking expectations).
        let mark = match (r["matches"].as_bool(), m) {
            (Some(false), m) if *m != Mark::Unexpected => " ✗",
            _ => "",
        };
        outln!(
            "  {:<28} {:<26} {:<32} {:>7} runs{mark}",
            s(&r["target"]),
            s(&r["scenario"]),
            m.verdict_text(&s(&r["verdict"])),
            r["runs"]
        )?;
    }
    let mut n = 0;
    for r in rows {
        for f in r["findings"].as_array().into_iter().flatten() {
            if n == 0 {
                outln!("\nfindings:")?;
            }
            n += 1;
            outln!(
                "  {n}. {}: {}: {} · needs {} · {} runs (scenario {})\n     kvsim replay {}",
                s(&r["target"]),
                s(&f["property"]),
                s(&f["reason"]),
                faults_text(f),
                f["runs"],
                s(&r["scenario"]),
                s(&f["replay"])
            )?;
        }
    }
    Ok(())
}

/// The faults a finding of a shard's output needs, as a check names them.
fn faults_text(finding: &Value) -> String {
    let faults: Vec<&str> = finding["faults"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .collect();
    if faults.is_empty() {
        "no fault".to_string()
    } else {
        faults.join(", ")
    }
}

/// A merged row as a JUnit case. The counterexample is the row's replay token run again
/// (a shard's output carries the token, not the text), so the failure reads as
/// `kvsim check --junit` writes it; a token that no longer replays says so instead.
fn case(row: &Value, gate: bool, mark: Mark) -> junit::Case {
    let expected_failure = matches!(mark, Mark::ExpectedFailure(_));
    let s = |v: &Value| v.as_str().unwrap_or_default().to_string();
    let verdict = s(&row["verdict"]);
    let expected = row["expected"].as_str().map(str::to_string);
    let passed = if gate {
        verdict == "ok"
    } else {
        row["matches"].as_bool().unwrap_or(false)
    };
    // Only a failing case shows its counterexample (as `kvsim check --junit` does).
    let token = row["replay"]
        .as_str()
        .filter(|_| !passed || expected_failure);
    let counterexample = token.map(|token| {
        let entries = crate::installed::registry();
        match crate::replay::resolve(&entries, token) {
            Ok((t, target)) => junit::counterexample(&target.run(
                &t.scenario,
                &t.config,
                t.seed,
                t.choices.as_deref(),
            )),
            Err(e) => format!(
                "this kvsim cannot replay the counterexample: {e}\nreplay: kvsim replay {token}\n"
            ),
        }
    });
    junit::Case {
        target: s(&row["target"]),
        scenario: s(&row["scenario"]),
        millis: row["millis"].as_u64().unwrap_or(0),
        passed,
        expected_failure,
        verdict,
        reason: row["reason"].as_str().map(str::to_string),
        expected,
        label: match (row["label"].as_str(), row["label_reason"].as_str()) {
            (Some(kind), Some(why)) => Some(format!("{kind}: {why}")),
            _ => None,
        },
        knobs: check::knobs(
            s(&row["faults"]),
            &row["clients"],
            &row["ops"],
            s(&row["strategy"]),
        ),
        runs: (
            row["runs"].as_u64().unwrap_or(0),
            row["violating_runs"].as_u64().unwrap_or(0),
        ),
        findings: row["findings"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|f| {
                junit::finding_line(
                    &s(&f["property"]),
                    &s(&f["reason"]),
                    &faults_text(f),
                    &s(&f["replay"]),
                )
            })
            .collect(),
        counterexample,
    }
}
