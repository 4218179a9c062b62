//! Every history of Porcupine's benchmark (`../shared/benchmarks/porcupine`) gets the
//! verdict its VERDICTS.md lists, through the same path as `kvsim check-history`, within
//! its default bounds ([`CheckerLimits::for_histories`]).

use kvsim::check::{check_linearizability, CheckerLimits, Linearization};
use kvsim::formats::{read_history, Format, Value};
use kvsim::specs::cas_register::CasRegisterSpec;
use kvsim::specs::kv::KvSpec;
use std::path::PathBuf;

fn bench_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared/benchmarks/porcupine")
}

/// (file, linearizable?) from VERDICTS.md's tables.
fn expected() -> Vec<(String, bool)> {
    let text = std::fs::read_to_string(bench_dir().join("VERDICTS.md")).expect("VERDICTS.md");
    text.lines()
        .filter_map(|l| {
            let cells: Vec<&str> = l.split('|').map(str::trim).collect();
            let file = cells.get(1)?;
            if !(file.starts_with("jepsen/") || file.starts_with("kv/")) {
                return None;
            }
            let verdict = cells.iter().find(|c| c.ends_with("linearizable"))?;
            Some((file.to_string(), !verdict.starts_with("NOT")))
        })
        .collect()
}

fn check(file: &str) -> Linearization {
    let path = bench_dir().join(file);
    if file.starts_with("kv/") {
        let h = read_history(&KvSpec, &path, Some(Format::JepsenEdn)).expect("parses");
        check_linearizability(&KvSpec, &h, CheckerLimits::for_histories())
    } else {
        let spec = CasRegisterSpec::<Value>::new();
        let h = read_history(&spec, &path, Some(Format::JepsenLog)).expect("parses");
        check_linearizability(&spec, &h, CheckerLimits::for_histories())
    }
}

#[test]
fn every_file_gets_its_expected_verdict() {
    let expected = expected();
    assert_eq!(expected.len(), 108, "102 etcd + 6 kv files with a verdict");
    let mut wrong = Vec::new();
    for (file, ok) in &expected {
        let got = check(file);
        let got_ok = match &got {
            Linearization::Ok(_) => true,
            Linearization::Violation(_) => false,
            Linearization::Unknown(why) => {
                panic!("{file}: unknown within check-history's default bounds: {why}")
            }
        };
        if got_ok != *ok {
            wrong.push(format!("{file}: expected linearizable={ok}, got {got:?}"));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn the_empty_etcd_file_is_an_empty_history() {
    assert!(matches!(check("jepsen/etcd_095.log"), Linearization::Ok(_)));
}

#[test]
fn counterexample_names_the_op_and_a_reason() {
    let Linearization::Violation(c) = check("kv/c01-bad.txt") else {
        panic!("c01-bad is not linearizable")
    };
    assert!(c.reason.starts_with("get "), "{}", c.reason);
    assert!(!c.partial.contains(&c.op));
}
