//! The text report of minimized counterexamples.

mod report_support;

use kvsim::scenario::{FaultKind, Strategy};
use kvsim::shrink::{self, ShrinkLimits};
use report_support::*;

#[test]
fn show() {
    let t = getset();
    let failing = first_failure(&t, "many", &config(4, 3, &[], Strategy::Random));
    println!("{}", kvsim::report::text(&failing));
    let small = shrink::shrink(&t, &failing, &ShrinkLimits::default());
    println!("{}", kvsim::report::text(&small));
    let t = hits();
    let mut cfg = config(
        3,
        3,
        &[FaultKind::Evict, FaultKind::Crash, FaultKind::Pause],
        Strategy::Random,
    );
    cfg.fault_probability = 0.2;
    let failing = first_failure(&t, "evict", &cfg);
    let small = shrink::shrink(&t, &failing, &ShrinkLimits::default());
    println!("{}", kvsim::report::text(&small));
}

#[test]
fn write_html_for_a_look() {
    let t = hits();
    let mut cfg = config(
        3,
        3,
        &[
            FaultKind::Evict,
            FaultKind::Crash,
            FaultKind::Pause,
            FaultKind::Lose,
        ],
        Strategy::Random,
    );
    cfg.fault_probability = 0.2;
    let failing = first_failure(&t, "evict", &cfg);
    std::fs::write("/tmp/hits-full.html", kvsim::report::html(&failing)).unwrap();
    let t = getset();
    let failing = first_failure(
        &t,
        "many",
        &config(3, 2, &[FaultKind::Lose], Strategy::Random),
    );
    let small = shrink::shrink(&t, &failing, &ShrinkLimits::default());
    std::fs::write("/tmp/getset.html", kvsim::report::html(&small)).unwrap();
    std::fs::write("/tmp/getset.json", kvsim::report::json(&small)).unwrap();
    println!("{}", kvsim::report::text(&small));
}
