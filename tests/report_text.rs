//! The text report of minimized counterexamples: layout, width, colour.

mod report_support;

use kvsim::harness::shrink::{self, ShrinkLimits};
use kvsim::harness::target::{RunReport, Target};
use kvsim::{FaultKind, Strategy};
use report_support::*;

fn lost_update() -> RunReport {
    let t = getset();
    let failing = first_failure(&t, "many", &config(4, 3, &[], Strategy::Random));
    shrink::shrink(&t, &failing, &ShrinkLimits::default())
}

fn evicted_counter() -> RunReport {
    let t = hits();
    let mut cfg = config(
        3,
        3,
        &[FaultKind::Evict, FaultKind::Crash, FaultKind::Pause],
        Strategy::Random,
    );
    cfg.fault_probability = 0.2;
    let failing = first_failure(&t, "evict", &cfg);
    shrink::shrink(&t, &failing, &ShrinkLimits::default())
}

#[test]
fn the_lost_update_report_reads_like_this() {
    insta::assert_snapshot!(kvsim::report::text(&lost_update()));
}

#[test]
fn the_evicted_counter_report_reads_like_this() {
    insta::assert_snapshot!(kvsim::report::text(&evicted_counter()));
}

#[test]
fn an_unshrunk_run_with_every_fault_fits_in_100_columns() {
    let t = getset();
    let mut cfg = config(4, 3, &FaultKind::ALL, Strategy::Random);
    cfg.fault_probability = 0.3;
    cfg.shards = 2;
    for seed in 0..40 {
        let r = t.run("all", &cfg, seed, None);
        let text = kvsim::report::text(&r);
        for line in text.lines() {
            // The replay token is one word: it may not be cut.
            if line.starts_with("  replay: ") {
                continue;
            }
            assert!(
                line.chars().count() <= kvsim::report::WIDTH,
                "seed {seed}: {} columns: {line}",
                line.chars().count()
            );
        }
    }
}

#[test]
fn colour_changes_nothing_but_escape_codes() {
    let r = evicted_counter();
    let plain = kvsim::report::text(&r);
    assert!(!plain.contains('\u{1b}'));
    let coloured = kvsim::report::text_styled(&r, true);
    assert!(coloured.contains("\u{1b}["));
    // Stripping the escape codes gives the plain report back.
    let mut stripped = String::new();
    let mut chars = coloured.chars();
    while let Some(c) = chars.next() {
        if c == '\u{1b}' {
            for d in chars.by_ref() {
                if d == 'm' {
                    break;
                }
            }
        } else {
            stripped.push(c);
        }
    }
    assert_eq!(stripped, plain);
}

#[test]
fn no_color_turns_colour_off() {
    // Tests do not run on a terminal, so colour is off whatever NO_COLOR says; with it set
    // it must stay off.
    std::env::set_var("NO_COLOR", "1");
    assert!(!kvsim::report::colour_wanted());
}
