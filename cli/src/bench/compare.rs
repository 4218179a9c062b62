//! `kvsim bench --compare FILE`: each figure beside a committed baseline's
//! (`bench/baseline.json`), with the ratio now / baseline. Information only: a slower
//! figure is printed, never an error; a baseline file that is not one is.
//!
//! The file: `{"commit": TEXT, "machine": TEXT, "suites": {SUITE: {FIGURE: VALUE}}}`,
//! `suites` being what `kvsim bench --json` prints (other top-level fields are notes).

use serde_json::{json, Map, Value};
use std::path::Path;

/// The largest baseline file read.
pub const MAX_BASELINE_BYTES: u64 = 1 << 20;

/// A baseline: where it was measured and its figures, suite by suite.
#[derive(Debug)]
pub struct Baseline {
    /// The commit it was measured at.
    pub commit: String,
    /// The machine it was measured on.
    pub machine: String,
    /// `kvsim bench --json`'s object: suite → figure → value.
    pub suites: Map<String, Value>,
}

const EXPECTED: &str = "expected a JSON object {\"commit\": text, \"machine\": text, \"suites\": {suite: {figure: number or text}}}";

/// Reads and checks a baseline file; an error says what was expected and what was found.
pub fn load(path: &Path) -> Result<Baseline, String> {
    let name = path.display();
    let size = std::fs::metadata(path)
        .map_err(|e| format!("cannot read the baseline {name}: {e}"))?
        .len();
    if size > MAX_BASELINE_BYTES {
        return Err(format!(
            "baseline {name}: expected at most {MAX_BASELINE_BYTES} bytes, found {size}"
        ));
    }
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("cannot read the baseline {name}: {e}"))?;
    parse(&text).map_err(|e| format!("baseline {name}: {e}"))
}

/// Parses a baseline's text ([`load`] without the file).
pub fn parse(text: &str) -> Result<Baseline, String> {
    let value: Value =
        serde_json::from_str(text).map_err(|e| format!("{EXPECTED}, found invalid JSON: {e}"))?;
    let Value::Object(mut top) = value else {
        return Err(format!("{EXPECTED}, found {}", kind(&value)));
    };
    let mut text_field = |field: &str| match top.remove(field) {
        Some(Value::String(s)) => Ok(s),
        Some(other) => Err(format!("{EXPECTED}, found {} for {field:?}", kind(&other))),
        None => Err(format!("{EXPECTED}, found no {field:?}")),
    };
    let commit = text_field("commit")?;
    let machine = text_field("machine")?;
    let suites = match top.remove("suites") {
        Some(Value::Object(suites)) => suites,
        Some(other) => return Err(format!("{EXPECTED}, found {} for \"suites\"", kind(&other))),
        None => return Err(format!("{EXPECTED}, found no \"suites\"")),
    };
    for (suite, figures) in &suites {
        let Value::Object(figures) = figures else {
            return Err(format!(
                "{EXPECTED}, found {} for suite {suite:?}",
                kind(figures)
            ));
        };
        for (figure, v) in flatten(figures) {
            if !(v.is_number() || v.is_string()) {
                return Err(format!(
                    "{EXPECTED}, found {} for {suite}.{figure}",
                    kind(&v)
                ));
            }
        }
    }
    Ok(Baseline {
        commit,
        machine,
        suites,
    })
}

/// A suite's figures with those grouped in objects (one per variant, say) named
/// `group.figure`, in order.
pub fn flatten(figures: &Map<String, Value>) -> Map<String, Value> {
    let mut flat = Map::new();
    for (name, v) in figures {
        match v {
            Value::Object(inner) => {
                for (k, v) in flatten(inner) {
                    flat.insert(format!("{name}.{k}"), v);
                }
            }
            v => {
                flat.insert(name.clone(), v.clone());
            }
        }
    }
    flat
}

fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "text",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// One figure beside its baseline.
#[derive(Debug, PartialEq)]
pub struct Row {
    /// The figure's name.
    pub figure: String,
    /// Its value now (`None`: this run has no such figure).
    pub now: Option<Value>,
    /// Its baseline (`None`: the baseline has no such figure).
    pub baseline: Option<Value>,
    /// now / baseline, when both are numbers and the baseline is not zero.
    pub ratio: Option<f64>,
}

/// The rows of one suite ([`flatten`]ed): the figures of this run in order, then those
/// only the baseline has.
pub fn rows(now: &Map<String, Value>, baseline: Option<&Map<String, Value>>) -> Vec<Row> {
    let now = &flatten(now);
    let baseline = &baseline.map(flatten).unwrap_or_default();
    let mut rows: Vec<Row> = now
        .iter()
        .map(|(figure, v)| {
            let base = baseline.get(figure).cloned();
            let ratio = match (v.as_f64(), base.as_ref().and_then(Value::as_f64)) {
                (Some(a), Some(b)) if b != 0.0 => Some(a / b),
                _ => None,
            };
            Row {
                figure: figure.clone(),
                now: Some(v.clone()),
                baseline: base,
                ratio,
            }
        })
        .collect();
    for (figure, v) in baseline {
        if !now.contains_key(figure) {
            rows.push(Row {
                figure: figure.clone(),
                now: None,
                baseline: Some(v.clone()),
                ratio: None,
            });
        }
    }
    rows
}

/// A row as a table line: figure, now, baseline, ratio (missing sides said as such).
pub fn line(row: &Row) -> String {
    let show = |v: &Option<Value>, missing: &str| match v {
        Some(Value::String(s)) => s.clone(),
        Some(v) => v.to_string(),
        None => missing.to_string(),
    };
    let ratio = match (row.ratio, &row.now, &row.baseline) {
        (Some(r), _, _) => format!("{r:.2}x"),
        (None, Some(a), Some(b)) if a == b => "same".to_string(),
        (None, Some(Value::String(_)), Some(_)) => "differs".to_string(),
        (None, Some(_), Some(_)) => "no ratio".to_string(),
        _ => "-".to_string(),
    };
    format!(
        "  {:<40} {:>14}  baseline {:>14}  {ratio}",
        row.figure,
        show(&row.now, "missing now"),
        show(&row.baseline, "missing")
    )
}

/// The JSON of a suite's comparison: figure → {"baseline", "ratio"} (null when missing).
pub fn json_rows(rows: &[Row]) -> Value {
    let mut m = Map::new();
    for row in rows {
        m.insert(
            row.figure.clone(),
            json!({
                "now": row.now,
                "baseline": row.baseline,
                "ratio": row.ratio.map(|r| (r * 1000.0).round() / 1000.0),
            }),
        );
    }
    Value::Object(m)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_baseline_parses_and_malformed_ones_say_what_was_expected() {
        let b = parse(
            r#"{"commit":"abc","machine":"m","suites":{"serve":{"x_ops_per_s":10,"w":"t"}}}"#,
        )
        .unwrap();
        assert_eq!((b.commit.as_str(), b.machine.as_str()), ("abc", "m"));
        assert_eq!(b.suites["serve"]["x_ops_per_s"], json!(10));
        for (text, found) in [
            ("[1]", "found an array"),
            ("{", "found invalid JSON"),
            (r#"{"machine":"m","suites":{}}"#, "found no \"commit\""),
            (
                r#"{"commit":1,"machine":"m","suites":{}}"#,
                "found a number for \"commit\"",
            ),
            (r#"{"commit":"c","machine":"m"}"#, "found no \"suites\""),
            (
                r#"{"commit":"c","machine":"m","suites":{"s":3}}"#,
                "found a number for suite \"s\"",
            ),
            (
                r#"{"commit":"c","machine":"m","suites":{"s":{"f":[1]}}}"#,
                "found an array for s.f",
            ),
        ] {
            let e = parse(text).unwrap_err();
            assert!(e.starts_with("expected a JSON object"), "{e}");
            assert!(e.contains(found), "{text}: {e}");
        }
    }

    #[test]
    fn rows_give_ratios_and_say_which_side_is_missing() {
        let now = json!({"a_ops_per_s": 30.0, "b_ms": 5, "w": "x"});
        let base = json!({"a_ops_per_s": 10, "w": "y", "gone_ms": 2});
        let rows = rows(now.as_object().unwrap(), base.as_object());
        let by = |f: &str| rows.iter().find(|r| r.figure == f).unwrap();
        assert_eq!(by("a_ops_per_s").ratio, Some(3.0));
        assert!(line(by("a_ops_per_s")).ends_with("3.00x"));
        assert_eq!(by("b_ms").baseline, None);
        assert!(line(by("b_ms")).contains("baseline        missing"));
        assert_eq!(by("gone_ms").now, None);
        assert!(line(by("gone_ms")).contains("missing now"));
        assert!(line(by("w")).ends_with("differs"));
        assert_eq!(rows.len(), 4);
        let j = json_rows(&rows);
        assert_eq!(j["a_ops_per_s"]["ratio"], json!(3.0));
        assert_eq!(j["b_ms"]["baseline"], Value::Null);
        let nested = json!({"fifo": {"millis_median": 2.0}});
        let base = json!({"fifo": {"millis_median": 4.0}});
        let r = super::rows(nested.as_object().unwrap(), base.as_object());
        assert_eq!(
            (r[0].figure.as_str(), r[0].ratio),
            ("fifo.millis_median", Some(0.5))
        );
        let no_suite = super::rows(now.as_object().unwrap(), None);
        assert!(no_suite.iter().all(|r| r.baseline.is_none()));
    }
}
