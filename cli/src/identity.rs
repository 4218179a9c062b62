//! A check's identity: everything that decides what `kvsim check` checks (kvsim's version,
//! the targets, the scenario, the seed, the shard count, the budget, shrinking, the corpus,
//! and per target × scenario its planned runs, required probes and every knob of its run
//! configuration), as `kvsim check --json` writes it under `identity`, with its digest
//! under `identity_digest`. `kvsim merge` merges only shards whose identities are one and
//! whose digests are those of their identities.
//!
//! The digest is FNV-1a (64 bits) of the identity's canonical JSON (object keys sorted by
//! their UTF-8 bytes, no whitespace, strings and numbers as `serde_json` writes them), as
//! 16 lowercase hex digits. It tells a file that was edited by hand from one kvsim wrote;
//! it is not a signature (anyone can compute it).

use serde_json::Value;

/// The identity's canonical JSON text, the digest's input.
pub fn canonical(v: &Value) -> String {
    let mut s = String::new();
    write_canonical(v, &mut s);
    s
}

fn write_canonical(v: &Value, s: &mut String) {
    match v {
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            s.push('{');
            for (i, k) in keys.into_iter().enumerate() {
                if i > 0 {
                    s.push(',');
                }
                s.push_str(&Value::String(k.clone()).to_string());
                s.push(':');
                write_canonical(&map[k], s);
            }
            s.push('}');
        }
        Value::Array(items) => {
            s.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    s.push(',');
                }
                write_canonical(item, s);
            }
            s.push(']');
        }
        other => s.push_str(&other.to_string()),
    }
}

/// The digest of an identity: FNV-1a 64 of its canonical JSON, 16 hex digits.
pub fn digest(identity: &Value) -> String {
    format!("{:016x}", kvsim::fnv1a64(canonical(identity).bytes()))
}

/// The first field in which two identities differ.
#[derive(Debug, PartialEq)]
pub struct Difference {
    /// The field, as its key (`ops`) or dotted path (`budget.min_runs`).
    pub field: String,
    /// The target × scenario the field belongs to (`counter/fixed crash-lose`), if it is
    /// one check's.
    pub check: Option<String>,
    /// Its value in the first identity.
    pub ours: Value,
    /// Its value in the second.
    pub theirs: Value,
}

/// The order in which an identity's own fields are compared (the most telling first);
/// fields not named here come after, by name.
const TOP: [&str; 9] = [
    "kvsim", "targets", "scenario", "seed", "shards", "budget", "shrink", "corpus", "checks",
];

/// The order of a check's fields.
const CHECK: [&str; 6] = [
    "target",
    "scenario",
    "planned_runs",
    "expected",
    "sometimes",
    "config",
];

/// The first field in which `theirs` differs from `ours` (identities of two shards), or
/// none when they are the same.
pub fn differ(ours: &Value, theirs: &Value) -> Option<Difference> {
    let mut d = field_diff(ours, theirs, &TOP, "")?;
    if d.field == "checks" {
        // Within the checks: which check, and which of its fields.
        let (a, b) = (ours["checks"].as_array(), theirs["checks"].as_array());
        if let (Some(a), Some(b)) = (a, b) {
            if a.len() != b.len() {
                return Some(Difference {
                    field: "checks (the number of target × scenario checks)".into(),
                    check: None,
                    ours: a.len().into(),
                    theirs: b.len().into(),
                });
            }
            for (x, y) in a.iter().zip(b) {
                if let Some(mut inner) = field_diff(x, y, &CHECK, "") {
                    if inner.field == "config" {
                        inner = field_diff(&x["config"], &y["config"], &[], "")?;
                    }
                    inner.check = Some(format!(
                        "{} {}",
                        x["target"].as_str().unwrap_or("?"),
                        x["scenario"].as_str().unwrap_or("?")
                    ));
                    return Some(inner);
                }
            }
        }
        return Some(d);
    }
    d.check = None;
    Some(d)
}

/// The first differing field of two objects (fields in `order` first, then the rest by
/// name), descending into nested objects as `a.b`; a non-object compared as a whole.
fn field_diff(ours: &Value, theirs: &Value, order: &[&str], prefix: &str) -> Option<Difference> {
    if ours == theirs {
        return None;
    }
    let whole = || Difference {
        field: prefix.trim_end_matches('.').to_string(),
        check: None,
        ours: ours.clone(),
        theirs: theirs.clone(),
    };
    let (Some(a), Some(b)) = (ours.as_object(), theirs.as_object()) else {
        return Some(whole());
    };
    let mut keys: Vec<&str> = a.keys().chain(b.keys()).map(String::as_str).collect();
    keys.sort_by_key(|k| (order.iter().position(|o| o == k).unwrap_or(order.len()), *k));
    keys.dedup();
    for k in keys {
        let (x, y) = (
            a.get(k).unwrap_or(&Value::Null),
            b.get(k).unwrap_or(&Value::Null),
        );
        if x == y {
            continue;
        }
        // The checks and a check's config are compared by the caller, field by field.
        if x.is_object() && y.is_object() && k != "config" {
            // A budget's mode first: the other fields follow from it.
            return field_diff(x, y, &["mode"], &format!("{prefix}{k}."));
        }
        return Some(Difference {
            field: format!("{prefix}{k}"),
            check: None,
            ours: x.clone(),
            theirs: y.clone(),
        });
    }
    Some(whole())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_canonical_form_sorts_keys_at_every_depth() {
        let v = json!({"b": 1, "a": {"d": [1, {"z": 0, "y": "x"}], "c": 0.05}});
        assert_eq!(
            canonical(&v),
            r#"{"a":{"c":0.05,"d":[1,{"y":"x","z":0}]},"b":1}"#
        );
        assert_eq!(digest(&v), digest(&json!({"a": v["a"], "b": 1})));
        assert_ne!(digest(&v), digest(&json!({"a": v["a"], "b": 2})));
        // FNV-1a 64 of the empty object's text `{}`.
        let fnv = "{}".bytes().fold(0xcbf29ce484222325_u64, |h, b| {
            (h ^ u64::from(b)).wrapping_mul(0x100000001b3)
        });
        assert_eq!(digest(&json!({})), format!("{fnv:016x}"));
    }

    #[test]
    fn a_difference_names_its_field_and_its_check() {
        let a = json!({"seed": 1, "budget": {"mode": "runs", "time_limit_secs": null},
            "checks": [{"target": "t/fixed", "scenario": "s", "planned_runs": 20,
                        "config": {"ops": 20, "clients": 2}}]});
        let mut b = a.clone();
        assert_eq!(differ(&a, &b), None);
        b["checks"][0]["config"]["ops"] = json!(1);
        let d = differ(&a, &b).unwrap();
        assert_eq!(
            (d.field.as_str(), d.check.as_deref(), &d.ours, &d.theirs),
            ("ops", Some("t/fixed s"), &json!(20), &json!(1))
        );
        b["budget"]["time_limit_secs"] = json!(3.0);
        let d = differ(&a, &b).unwrap();
        assert_eq!(
            (d.field.as_str(), d.check),
            ("budget.time_limit_secs", None)
        );
        b["seed"] = json!(2);
        assert_eq!(differ(&a, &b).unwrap().field, "seed", "seed before budget");
    }
}
