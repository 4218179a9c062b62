//! The state space as the page browses it: paths, labels in the report's words, bounds,
//! and a counterexample's replay choices followed to its violation.

use super::*;
use crate::explore::{explore, SearchLimits};
use crate::history::{History, Outcome};
use crate::kv::{Kv, KvError};
use crate::rng::SimRng;
use crate::scenario::FaultKind;
use crate::verdict::{Verdict, Violation};

/// An increment by gets and cas, not retried: two clients make one cas fail.
pub(crate) struct CasCounter;

impl crate::model::Model for CasCounter {
    type Op = ();
    type Ret = bool;

    async fn setup<K: Kv>(&self, kv: &K) -> Result<(), KvError> {
        kv.set(b"count", b"0", 0).await.map(|_| ())
    }

    async fn run<K: Kv>(&self, kv: &K, _client: usize, _op: &()) -> Result<bool, KvError> {
        let Some(v) = kv.gets(b"count").await? else {
            return Ok(false);
        };
        let n: u64 = String::from_utf8_lossy(&v.data).parse().unwrap_or(0);
        let next = (n + 1).to_string();
        Ok(kv
            .cas(b"count", v.cas, next.as_bytes(), 0)
            .await?
            .is_stored())
    }

    fn op(&self, _client: usize, _index: usize, _rng: &mut SimRng) {}

    fn check(&self, history: &History<(), bool>) -> Verdict {
        match history.ops.iter().find(|o| o.outcome == Outcome::Ok(false)) {
            Some(o) => Verdict::Violation(Violation::new(
                "every cas stores",
                format!("C{}'s cas did not store", o.client),
                Vec::new(),
            )),
            None => Verdict::Ok,
        }
    }
}

/// The scope of the tests: two clients, one operation each, these faults.
pub(crate) fn scope(faults: Vec<(FaultKind, u32)>) -> Scope {
    let mut scope = Scope::new(2, 1);
    scope.faults = faults;
    scope
}

fn labels(view: &StateView) -> Vec<&str> {
    view.successors.iter().map(|s| s.label.as_str()).collect()
}

#[test]
fn paths_parse_as_dotted_step_numbers() {
    assert_eq!(parse_path(""), Ok(vec![]));
    assert_eq!(parse_path("0.2.11"), Ok(vec![0, 2, 11]));
    let bad = parse_path("0.x").unwrap_err();
    assert!(
        bad.starts_with("bad path step 1: expected a step number") && bad.ends_with("found \"x\""),
        "{bad}"
    );
    assert!(parse_path("1..2").unwrap_err().contains("step 1"));
    assert!(parse_path("-1").is_err());
    assert!(parse_path("1234567").unwrap_err().contains("0 to 999999"));
    let long = vec!["0"; MAX_PATH_STEPS + 1].join(".");
    assert_eq!(
        parse_path(&long).unwrap_err(),
        format!(
            "bad path: expected at most {MAX_PATH_STEPS} steps, found {}",
            MAX_PATH_STEPS + 1
        )
    );
}

#[test]
fn actions_are_labelled_in_the_reports_words() {
    let b = browser(Arc::new(CasCounter), &scope(vec![(FaultKind::Evict, 1)])).unwrap();
    let init = b.view(&[]).unwrap();
    assert_eq!(init.path, Vec::<usize>::new());
    assert!(init.steps.is_empty());
    assert_eq!(
        labels(&init),
        ["C0: ▶ ()", "C1: ▶ ()", "fault: evict count"]
    );
    assert_eq!(
        init.successors.iter().map(|s| s.fault).collect::<Vec<_>>(),
        [false, false, true]
    );
    let s = b.view(&[0, 0]).unwrap();
    assert_eq!(s.steps, ["C0: ▶ ()", "C0: gets count → \"0\" #1"]);
    assert_eq!(labels(&s)[0], "C0: cas count #1 \"1\" → STORED · ◀ true");
    assert!(
        s.pending[0].contains("waits for the reply to cas count #1 \"1\""),
        "{:?}",
        s.pending
    );
    assert!(
        s.state.iter().any(|l| l.contains("count=0")),
        "{:?}",
        s.state
    );
    assert_eq!(s.checker, "not judged yet: the path goes on");
}

#[test]
fn a_step_that_is_no_action_is_refused_by_name() {
    let b = browser(Arc::new(CasCounter), &scope(Vec::new())).unwrap();
    assert_eq!(
        b.view(&[0, 7]).unwrap_err(),
        "bad path step 1: expected one of the 2 actions of the state before it (0 to 1), \
         found 7"
    );
    let long = vec![0; MAX_PATH_STEPS + 1];
    assert!(b
        .view(&long)
        .unwrap_err()
        .starts_with("bad path: expected at most"));
    // Past a final state there is no action.
    let end = b.view(&[0, 0, 0, 0, 0, 0]).unwrap();
    assert!(end.successors.is_empty(), "{:?}", end.successors);
    assert!(b
        .view(&[0, 0, 0, 0, 0, 0, 0])
        .unwrap_err()
        .contains("expected one of the 0"));
}

#[test]
fn a_counterexamples_choices_lead_to_its_violation() {
    let scope = scope(vec![(FaultKind::Evict, 1)]);
    let found = explore(Arc::new(CasCounter), &scope, &SearchLimits::default());
    assert!(
        matches!(found.verdict, Verdict::Violation(_)),
        "{:?}",
        found.verdict
    );
    let choices = found.counterexample.expect("a counterexample");
    let b = browser(Arc::new(CasCounter), &scope).unwrap();
    let path = b
        .follow(&choices, found.config.workload.as_deref())
        .expect("the path is one of the state space");
    assert_eq!(path.len(), choices.len());
    let end = b.view(&path).unwrap();
    let Verdict::Violation(v) = &found.verdict else {
        unreachable!()
    };
    assert_eq!(
        end.checker,
        format!("violation: {}: {}", v.property, v.reason)
    );
    assert!(end.checker.starts_with("violation: every cas stores: C"));
    assert!(end.successors.is_empty());
    // A choice that is no action is named.
    assert!(b
        .follow(&[0, 9], None)
        .unwrap_err()
        .starts_with("choice 1 (9) is no action"));
}
