//! Every structure, one client at a time on a tiny store: the transcriptions do what the
//! pseudocode says, the fixed variants do what their specs say, and the checkers accept
//! the sequential histories of the fixed variants.
mod common;

use common::Sequential;
use kvsim::Kv;
use kvsim::Verdict;
use kvsim_models::{
    array_append, array_locked, event_log, fifo, lock, spinlock, table, visitor_counter,
};

const START_MS: u64 = 1_767_225_600_000;

#[test]
fn fifo_fixed_is_first_in_first_out() {
    use fifo::{Op, Ret};
    let model = fifo::fixed();
    let mut s = Sequential::new(&model, START_MS);
    assert_eq!(s.run(Op::Dequeue), Ret::Dequeued(None));
    s.run(Op::Enqueue("a".into()));
    s.run(Op::Enqueue("b".into()));
    assert_eq!(s.run(Op::Dequeue), Ret::Dequeued(Some("a".into())));
    s.run(Op::Enqueue("c".into()));
    assert_eq!(s.run(Op::Dequeue), Ret::Dequeued(Some("b".into())));
    assert_eq!(s.run(Op::Dequeue), Ret::Dequeued(Some("c".into())));
    assert_eq!(s.run(Op::Dequeue), Ret::Dequeued(None));
    assert_eq!(s.verdict(), Verdict::Ok);
}

#[test]
fn fifo_published_returns_the_unlinked_node_as_printed() {
    use fifo::{Op, Ret};
    let model = fifo::published();
    let mut s = Sequential::new(&model, START_MS);
    s.run(Op::Enqueue("a".into()));
    s.run(Op::Enqueue("b".into()));
    // `return RemoveRandomString(old_head)`: the dummy's data (empty) comes out first.
    assert_eq!(s.run(Op::Dequeue), Ret::Dequeued(Some(String::new())));
    assert_eq!(s.run(Op::Dequeue), Ret::Dequeued(Some("a".into())));
    assert!(s.verdict().is_violation());
}

#[test]
fn fifo_fixed_reports_a_lost_node_and_published_answers_empty() {
    use fifo::{Op, Ret};
    for (model, expected) in [
        (fifo::fixed(), Ret::Lost),
        (fifo::published(), Ret::Dequeued(None)),
    ] {
        let mut s = Sequential::new(&model, START_MS);
        s.run(Op::Enqueue("a".into()));
        s.run(Op::Enqueue("b".into()));
        s.run(Op::Dequeue);
        // The node holding the link to `b` (key "a" + suffix) goes.
        let a_node =
            s.kv.keys()
                .into_iter()
                .find(|k| k.starts_with('a'))
                .unwrap();
        s.kv.evict(a_node.as_bytes());
        let r = s.run(Op::Dequeue);
        if model.variant() == kvsim_models::expect::Variant::Fixed {
            assert_eq!(r, expected);
        } else {
            // published: head points to the lost node; its next reads as NULL.
            assert_ne!(r, Ret::Dequeued(Some("b".into())));
        }
    }
}

#[test]
fn lock_variants_count_and_mark_their_sections() {
    use lock::{Op, Ret};
    for model in [lock::published(), lock::fixed()] {
        let mut s = Sequential::new(&model, START_MS);
        for i in 1..=3 {
            assert_eq!(s.run(Op::Increment), Ret::Value(i));
        }
        assert_eq!(s.history.ops[0].marks.len(), 2);
        assert_eq!(s.verdict(), Verdict::Ok);
        // released: no lock key left
        assert!(
            !s.kv.keys().iter().any(|k| k == "lockres"),
            "{:?}",
            s.kv.keys()
        );
    }
}

#[test]
fn spinlock_variants_count_and_read() {
    use spinlock::{Op, Ret};
    for model in [spinlock::published(), spinlock::fixed()] {
        let mut s = Sequential::new(&model, START_MS);
        let first = s.run(Op::Increment);
        let second = s.run(Op::Increment);
        let read = s.run(Op::Read);
        if model.variant() == kvsim_models::expect::Variant::Published {
            // The first acquireLock finds no key: put(key, 0), "not acquired", sleep, retry.
            assert_eq!(
                (first, second, read),
                (Ret::Value(1), Ret::Value(2), Ret::Value(2))
            );
            assert_eq!(s.kv.now_ms() - START_MS, spinlock::SLEEP_MS);
        } else {
            assert_eq!(
                (first, second, read),
                (Ret::Value(1), Ret::Value(2), Ret::Value(2))
            );
        }
        assert_eq!(s.verdict(), Verdict::Ok);
    }
}

#[test]
fn spinlock_fixed_stops_when_the_lock_is_lost() {
    use spinlock::{Op, Ret};
    let model = spinlock::fixed();
    let mut s = Sequential::new(&model, START_MS);
    s.run(Op::Increment);
    s.kv.evict(b"counter_lock");
    assert_eq!(s.run(Op::Increment), Ret::Lost);
    assert_eq!(s.verdict(), Verdict::Ok);
}

#[test]
fn array_locked_variants_change_and_fetch() {
    use array_locked::{Op, Ret};
    for model in [array_locked::published(), array_locked::fixed()] {
        let mut s = Sequential::new(&model, START_MS);
        assert_eq!(s.run(Op::Fetch), Ret::Array(vec![]));
        s.run(Op::Change {
            add: vec![1, 3],
            delete: vec![],
        });
        s.run(Op::Change {
            add: vec![4],
            delete: vec![3],
        });
        assert_eq!(s.run(Op::Fetch), Ret::Array(vec![1, 4]));
        assert_eq!(s.verdict(), Verdict::Ok);
    }
}

#[test]
fn array_append_published_never_creates_the_array_as_printed() {
    use array_append::{Op, Ret};
    let model = array_append::published();
    let mut s = Sequential::new(&model, START_MS);
    s.run(Op::Add(5));
    // `try: append … except KeyError: return`: the missing key makes add return at once.
    assert_eq!(s.run(Op::Fetch), Ret::Array(vec![]));
    assert!(s.verdict().is_violation());
}

#[test]
fn array_append_fixed_appends_in_order() {
    use array_append::{Op, Ret};
    let model = array_append::fixed();
    let mut s = Sequential::new(&model, START_MS);
    for e in [5, 1, 5] {
        assert_eq!(s.run(Op::Add(e)), Ret::Added);
    }
    assert_eq!(s.run(Op::Fetch), Ret::Array(vec![5, 1, 5]));
    assert_eq!(s.verdict(), Verdict::Ok);
}

#[test]
fn table_variants_add_delete_has_fetch() {
    use table::{Op, Ret};
    for model in [table::published(), table::fixed()] {
        let mut s = Sequential::new(&model, START_MS);
        assert_eq!(s.run(Op::Fetch), Ret::Members(vec![]));
        s.run(Op::Add("b".into()));
        s.run(Op::Add("a".into()));
        s.run(Op::Add("a".into()));
        assert_eq!(s.run(Op::Has("a".into())), Ret::Has(true));
        s.run(Op::Delete("a".into()));
        assert_eq!(s.run(Op::Has("a".into())), Ret::Has(false));
        assert_eq!(s.run(Op::Fetch), Ret::Members(vec!["b".into()]));
        assert_eq!(s.verdict(), Verdict::Ok);
    }
}

#[test]
fn visitor_counter_fixed_reports_the_previous_period() {
    use visitor_counter::{Op, Ret, PERIOD_SECS};
    let model = visitor_counter::fixed();
    let mut s = Sequential::new(&model, START_MS);
    s.run(Op::Visit);
    s.run(Op::Visit);
    assert_eq!(s.run(Op::Value), Ret::Count(0));
    s.run(Op::Sleep(PERIOD_SECS * 1000));
    s.run(Op::Visit);
    assert_eq!(s.run(Op::Value), Ret::Count(2));
    s.run(Op::Sleep(PERIOD_SECS * 1000));
    assert_eq!(s.run(Op::Value), Ret::Count(1));
    s.run(Op::Sleep(PERIOD_SECS * 1000));
    assert_eq!(s.run(Op::Value), Ret::Count(0));
}

#[test]
fn visitor_counter_published_counts_into_the_shadow_key() {
    use visitor_counter::{Op, Ret, PERIOD_SECS};
    let model = visitor_counter::published();
    let mut s = Sequential::new(&model, START_MS);
    s.run(Op::Visit);
    s.run(Op::Sleep(PERIOD_SECS * 1000));
    assert_eq!(s.run(Op::Value), Ret::Count(1));
}

#[test]
fn event_log_fixed_keeps_the_window() {
    use event_log::{Op, Ret};
    let model = event_log::fixed();
    let w = model.window_secs() * 1000;
    let mut s = Sequential::new(&model, START_MS);
    s.run(Op::Put(1));
    s.run(Op::Sleep(4_000));
    s.run(Op::Put(2));
    assert_eq!(s.run(Op::Fetch), Ret::Events(vec![1, 2]));
    s.run(Op::Sleep(w - 4_000 + 1_000));
    assert_eq!(s.run(Op::Fetch), Ret::Events(vec![2]));
    s.run(Op::Sleep(w));
    assert_eq!(s.run(Op::Fetch), Ret::Events(vec![]));
}

#[test]
fn event_log_published_reads_the_ring() {
    use event_log::{Op, Ret};
    let model = event_log::published();
    let mut s = Sequential::new(&model, START_MS);
    s.run(Op::Put(1));
    s.run(Op::Sleep(6_000));
    s.run(Op::Put(2));
    assert_eq!(s.run(Op::Fetch), Ret::Events(vec![1, 2]));
}

#[test]
fn event_log_fetches_the_window_it_is_asked_for() {
    use event_log::{Op, Ret, Window};
    for model in [event_log::published(), event_log::fixed()] {
        let mut s = Sequential::new(&model, START_MS);
        s.run(Op::Put(1));
        s.run(Op::Sleep(6_000));
        s.run(Op::Put(2));
        // The last 3 s: event 2 only.
        let recent = s.run(Op::FetchRange { ago: 3, span: 3 });
        assert_eq!(
            recent,
            Ret::Range(Window {
                back: 3,
                span: 3,
                events: vec![2]
            })
        );
        // From 7 s ago for 2 s: event 1 only (a window across no chunk boundary).
        let older = s.run(Op::FetchRange { ago: 7, span: 2 });
        assert_eq!(
            older,
            Ret::Range(Window {
                back: 7,
                span: 2,
                events: vec![1]
            })
        );
        // Too long a window is replaced by the last W seconds; one reaching into the
        // future is cut at now.
        let w = model.window_secs();
        let long = s.run(Op::FetchRange {
            ago: w + 3,
            span: w + 3,
        });
        assert_eq!(
            long,
            Ret::Range(Window {
                back: w,
                span: w,
                events: vec![1, 2]
            })
        );
        assert_eq!(s.verdict(), Verdict::Ok, "{:?}", model.variant());
    }
}

#[test]
fn event_log_published_polling_returns_the_last_second_again_and_twice_over() {
    use event_log::{Op, Ret, Window};
    let model = event_log::published();
    let mut s = Sequential::new(&model, START_MS);
    s.run(Op::Put(1));
    // `fetch(first = lastSeen)` includes the second of the newest event seen, and as
    // its window lies inside one chunk (`firstKey == lastKey`), the printed range goes
    // round the whole ring and reads that chunk twice.
    let polled = s.run(Op::Poll(1_000));
    let Ret::Polled(rounds) = polled else {
        panic!("not a poll: {polled:?}")
    };
    assert_eq!(rounds[0].events, vec![1]);
    assert_eq!(
        rounds[1],
        Window {
            back: 1,
            span: 1,
            events: vec![1, 1]
        }
    );
    let verdict = s.verdict();
    assert!(
        matches!(&verdict, Verdict::Violation(v) if v.property == "polling (event log)"
            && v.reason.contains("returned event 1 twice")),
        "{verdict:?}"
    );
}

#[test]
fn event_log_fixed_polling_returns_each_event_once() {
    use event_log::{Op, Ret};
    let model = event_log::fixed();
    let mut s = Sequential::new(&model, START_MS);
    s.run(Op::Put(1));
    let polled = s.run(Op::Poll(1_000));
    let Ret::Polled(rounds) = polled else {
        panic!("not a poll: {polled:?}")
    };
    assert_eq!(rounds[0].events, vec![1]);
    assert_eq!(rounds[1].events, Vec::<u32>::new());
    assert_eq!(s.verdict(), Verdict::Ok);
}

#[test]
fn event_log_published_reads_a_chunk_twice_for_a_window_inside_it() {
    use event_log::{Op, Ret, Window};
    let model = event_log::published();
    let mut s = Sequential::new(&model, START_MS);
    s.run(Op::Put(1));
    s.run(Op::Sleep(2_000));
    // [now - 2, now - 1]: both ends in chunk 0, so `firstKey < lastKey` fails and the
    // range is firstKey..numChunks-1 then 0..=lastKey: chunk 0 is read twice.
    let got = s.run(Op::FetchRange { ago: 2, span: 1 });
    assert_eq!(
        got,
        Ret::Range(Window {
            back: 2,
            span: 1,
            events: vec![1, 1]
        })
    );
    assert!(s.verdict().is_violation());
}
