use super::*;
use crate::harness::target::{ModelTarget, Target};
use crate::history::History;
use crate::kv::{Kv, KvError};
use crate::rng::SimRng;
use crate::sim::SimConfig;
use crate::verdict::Violation;
use serde_json::Value;

/// A value that would end the page's script if it were written as it is.
const NASTY: &[u8] = b"</script><b>&\"'";

/// Writes `n` values over four keys, after a setup that stores [`NASTY`] and an item
/// that expires after a second; always a violation about operation 0.
struct Writer {
    n: usize,
}

impl crate::model::Model for Writer {
    type Op = ();
    type Ret = usize;

    async fn setup<K: Kv>(&self, kv: &K) -> Result<(), KvError> {
        kv.set(b"cfg", NASTY, 0).await?;
        kv.set(b"ttl", b"x", 1).await.map(|_| ())
    }

    async fn run<K: Kv>(&self, kv: &K, client: usize, _op: &()) -> Result<usize, KvError> {
        for i in 0..self.n {
            let key = format!("k{}", i % 4);
            kv.set(key.as_bytes(), format!("c{client}v{i}").as_bytes(), 0)
                .await?;
        }
        kv.get(b"cfg").await?;
        Ok(self.n)
    }

    fn op(&self, _client: usize, _index: usize, _rng: &mut SimRng) {}

    fn check(&self, _history: &History<(), usize>) -> Verdict {
        Verdict::Violation(Violation::new("always", "a test".to_string(), vec![0]))
    }
}

/// Spins on a key nobody sets, then sets it.
struct Spin;

impl crate::model::Model for Spin {
    type Op = ();
    type Ret = ();

    async fn setup<K: Kv>(&self, _kv: &K) -> Result<(), KvError> {
        Ok(())
    }

    async fn run<K: Kv>(&self, kv: &K, _client: usize, _op: &()) -> Result<(), KvError> {
        for _ in 0..40 {
            kv.get(b"flag").await?;
        }
        kv.set(b"flag", b"1", 0).await.map(|_| ())
    }

    fn op(&self, _client: usize, _index: usize, _rng: &mut SimRng) {}

    fn check(&self, _history: &History<(), ()>) -> Verdict {
        Verdict::Ok
    }
}

fn writer_run(clients: usize, n: usize) -> (RunReport, RunReport) {
    let t = ModelTarget::new("writer/test", Writer { n });
    let cfg = SimConfig::new(clients, 1);
    let plain = t.run("test", &cfg, 7, None);
    let recorded = t.run_with_store("test", &cfg, 7, None);
    (plain, recorded)
}

/// The page's data, parsed.
fn parsed(r: &RunReport) -> Value {
    serde_json::from_str(&data(r, Some("k: a key"), None)).expect("the data is JSON")
}

/// An item of the data, unpacked as the page's script does: `[shard, key, value, cas,
/// exptime, expires_ms, dead, flags]`.
fn unpack(d: &Value, it: &Value) -> Value {
    let s = &d["strings"];
    let a = it.as_array().unwrap();
    let full = a.len() > 4;
    serde_json::json!([
        a[0],
        s[a[1].as_u64().unwrap() as usize],
        s[a[2].as_u64().unwrap() as usize],
        a[3],
        if full { a[4].clone() } else { 0.into() },
        if full { a[5].clone() } else { Value::Null },
        if full { a[6].clone() } else { false.into() },
        if full { a[7].clone() } else { 0.into() },
    ])
}

/// The stores after each step, rebuilt from the data as the page's script does: `(shard,
/// key) → item`.
fn rebuilt(d: &Value) -> Vec<BTreeMap<(u64, String), Value>> {
    let mut have = BTreeMap::new();
    let key = |it: &Value| (it[0].as_u64().unwrap(), it[1].as_str().unwrap().to_string());
    for it in d["initial"].as_array().unwrap() {
        let it = unpack(d, it);
        have.insert(key(&it), it);
    }
    let mut out = vec![have.clone()];
    for s in d["steps"].as_array().unwrap() {
        for g in s[5].as_array().unwrap() {
            let name = d["strings"][g[1].as_u64().unwrap() as usize]
                .as_str()
                .unwrap();
            have.remove(&(g[0].as_u64().unwrap(), name.to_string()));
        }
        for it in s[4].as_array().unwrap() {
            let it = unpack(d, it);
            have.insert(key(&it), it);
        }
        out.push(have.clone());
    }
    out
}

#[test]
fn recording_the_store_changes_nothing_else() {
    let (plain, recorded) = writer_run(2, 5);
    assert!(plain.store.is_none());
    let log = recorded.store.as_ref().expect("a store log");
    assert!(!log.changes.is_empty());
    assert_eq!(plain.trace, recorded.trace);
    assert_eq!(plain.choices, recorded.choices);
    assert_eq!(plain.token, recorded.token);
    assert_eq!(plain.verdict, recorded.verdict);
    // with_store keeps the report as it is and adds the log.
    let t = ModelTarget::new("writer/test", Writer { n: 5 });
    let again = crate::harness::target::with_store(&t, &plain);
    assert_eq!(again.store.as_ref(), Some(log));
    assert_eq!(again.trace, plain.trace);
    // A report whose trace the replay does not give gets no store rather than a wrong one.
    let mut other = plain.clone();
    other.trace.pop();
    assert!(crate::harness::target::with_store(&t, &other)
        .store
        .is_none());
}

#[test]
fn deltas_rebuild_the_store_at_every_step() {
    let (_, r) = writer_run(2, 600);
    let d = parsed(&r);
    let stores = rebuilt(&d);
    let steps = d["steps"].as_array().unwrap();
    assert_eq!(stores.len(), steps.len() + 1);
    // After setup: the two items setup stored.
    let start: Vec<&str> = stores[0].keys().map(|(_, k)| k.as_str()).collect();
    assert_eq!(start, ["cfg", "ttl"]);
    // The log's own view agrees at every traced step.
    let log = r.store.as_ref().unwrap();
    let setup = r.trace.len() - steps.len();
    for (n, store) in stores.iter().enumerate().skip(1) {
        let want = log.at(setup + n - 1);
        let got: Vec<(String, String)> = store
            .values()
            .map(|it| {
                (
                    it[1].as_str().unwrap().into(),
                    it[2].as_str().unwrap().into(),
                )
            })
            .collect();
        let want: Vec<(String, String)> = want
            .values()
            .map(|it| (it.key.clone(), it.value.clone()))
            .collect();
        assert_eq!(got, want, "step {n}");
    }
    // Each set is in the store at its own step, and the TTL item dies at 1 s.
    let mut sets = 0;
    for (i, s) in steps.iter().enumerate() {
        let text = s[2].as_str().unwrap();
        let store = &stores[i + 1];
        if let Some(rest) = text.strip_prefix("set ") {
            let (key, rest) = rest.split_once(' ').unwrap();
            let value = rest.strip_suffix(" → STORED").unwrap();
            assert_eq!(store[&(0, key.to_string())][2], value, "step {}", i + 1);
            sets += 1;
        }
        let dead = store[&(0, "ttl".to_string())][6].as_bool().unwrap();
        assert_eq!(dead, s[0].as_u64().unwrap() >= 1000, "step {}", i + 1);
        assert_eq!(store[&(0, "ttl".to_string())][5], 1000);
    }
    assert_eq!(sets, 1200);
}

#[test]
fn a_value_cannot_break_the_page() {
    let (_, r) = writer_run(1, 2);
    let json = data(&r, Some("</script> & \"x\""), None);
    assert!(!json.contains('<') && !json.contains('>') && !json.contains('&'));
    let d: Value = serde_json::from_str(&json).unwrap();
    let cfg = unpack(&d, &d["initial"][0]);
    assert_eq!(cfg[1], "cfg");
    assert_eq!(cfg[2], format!("{:?}", "</script><b>&\"'"));
    assert_eq!(d["representation"], "</script> & \"x\"");
    let page = viewer(&r, Some("</script>"));
    // Three scripts (the error handler, the data, the viewer), each closed once.
    assert_eq!(page.matches("<script").count(), 3);
    assert_eq!(page.matches("</script>").count(), 3);
    assert!(page.contains("<div id=\"errors\""));
}

#[test]
fn a_2000_step_run_stays_under_1_mb() {
    let (_, r) = writer_run(2, 1000);
    let page = viewer(&r, None);
    let d = parsed(&r);
    assert!(d["steps"].as_array().unwrap().len() >= 2000);
    // Every step changed the store: the log holds deltas, not snapshots.
    assert!(page.len() < 1_000_000, "{} bytes", page.len());
}

#[test]
fn repeats_fold_as_in_the_text_report() {
    let t = ModelTarget::new("spin/test", Spin);
    let r = t.run_with_store("test", &SimConfig::new(1, 1), 3, None);
    let d = parsed(&r);
    let text = crate::report::text(&r);
    let lines = d["lines"].as_array().unwrap();
    let repeats: Vec<&Value> = lines.iter().filter(|l| l.is_array()).collect();
    assert_eq!(repeats.len(), 1, "{lines:?}");
    let summary = repeats[0][4].as_str().unwrap();
    assert!(text.contains(summary), "{summary} not in\n{text}");
    // Every step is shown or folded, once.
    let n = d["steps"].as_array().unwrap().len() as u64;
    let mut covered = Vec::new();
    for l in lines {
        match l.as_u64() {
            Some(s) => covered.push(s),
            None => covered.extend(l[2].as_u64().unwrap()..=l[3].as_u64().unwrap()),
        }
    }
    assert_eq!(covered, (1..=n).collect::<Vec<_>>());
    // The flag's set is the last step that changes the store.
    let changed: Vec<usize> = d["steps"]
        .as_array()
        .unwrap()
        .iter()
        .enumerate()
        .filter(|(_, s)| !s[4].as_array().unwrap().is_empty())
        .map(|(i, _)| i + 1)
        .collect();
    let set = d["steps"]
        .as_array()
        .unwrap()
        .iter()
        .position(|s| s[2].as_str().is_some_and(|t| t.starts_with("set flag")))
        .unwrap();
    assert_eq!(changed, [set + 1]);
    // A folded step's text is not written again: the page takes its block's.
    let (first, last) = (
        repeats[0][2].as_u64().unwrap(),
        repeats[0][3].as_u64().unwrap(),
    );
    for (i, s) in d["steps"].as_array().unwrap().iter().enumerate() {
        let n = i as u64 + 1;
        assert_eq!(s[2].is_null(), (first..=last).contains(&n), "step {n}");
    }
}

#[test]
fn a_run_without_a_store_log_says_so() {
    let (plain, _) = writer_run(1, 1);
    let d = parsed(&plain);
    assert_eq!(d["no_store"], NO_STORE);
    let d: Value =
        serde_json::from_str(&data(&plain, None, Some("a history has no store"))).unwrap();
    assert_eq!(d["no_store"], "a history has no store");
    assert_eq!(d["ops"][0]["hot"], true);
    assert_eq!(d["property"], "always");
}
