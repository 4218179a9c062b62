//! The counter's sequential behaviour on a tiny store.
mod common;

use common::Sequential;
use kvsim::Verdict;
use kvsim_models::counter::{self, Op, Ret};

#[test]
fn both_variants_count_sequentially() {
    for model in [counter::published(), counter::fixed()] {
        let mut s = Sequential::new(&model, 1_000_000);
        assert_eq!(s.run(Op::Value), Ret::Value(0));
        assert_eq!(s.run(Op::Increment(2)), Ret::Done);
        assert_eq!(s.run(Op::Increment(3)), Ret::Done);
        assert_eq!(s.run(Op::Value), Ret::Value(5));
        assert_eq!(s.verdict(), Verdict::Ok);
    }
}

#[test]
fn published_restarts_from_zero_after_a_loss_and_the_check_sees_it() {
    let model = counter::published();
    let mut s = Sequential::new(&model, 1_000_000);
    s.run(Op::Increment(2));
    s.kv.evict(b"counterhits");
    s.run(Op::Increment(1));
    assert_eq!(s.run(Op::Value), Ret::Value(1));
    let v = s.verdict();
    insta::assert_snapshot!(v.to_string());
}

#[test]
fn fixed_reports_the_loss_instead() {
    let model = counter::fixed();
    let mut s = Sequential::new(&model, 1_000_000);
    s.run(Op::Increment(2));
    s.kv.evict(b"counterhits");
    assert_eq!(s.run(Op::Increment(1)), Ret::Lost);
    assert_eq!(s.run(Op::Value), Ret::Lost);
    assert_eq!(s.verdict(), Verdict::Ok);
}
