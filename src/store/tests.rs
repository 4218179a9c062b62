//! Unit tests of the store's internals (memory accounting, indexes). The behaviour rules
//! are pinned by `tests/store_conformance.rs`.

use super::*;
use crate::command::{ArithVerb, StoreVerb};

const T0: u64 = 1_700_000_000_000;

fn set(key: &str, data: &str, exptime: i64) -> Command {
    Command::Store {
        verb: StoreVerb::Set,
        key: key.as_bytes().to_vec(),
        flags: 0,
        exptime,
        data: data.as_bytes().to_vec(),
        noreply: false,
    }
}

fn recount(store: &Store) -> usize {
    store.items.unordered().map(Item::size).sum()
}

#[test]
fn used_bytes_track_every_change() {
    let mut s = Store::new(StoreConfig::default(), T0);
    s.apply(T0, &set("a", "10", 0));
    s.apply(T0, &set("b", "xyz", 5));
    assert_eq!(s.used_bytes(), recount(&s));
    s.apply(
        T0,
        &Command::Arith {
            verb: ArithVerb::Incr,
            key: b"a".to_vec(),
            delta: 100,
            noreply: false,
        },
    );
    s.apply(
        T0,
        &Command::Store {
            verb: StoreVerb::Append,
            key: b"b".to_vec(),
            flags: 0,
            exptime: 0,
            data: b"123".to_vec(),
            noreply: false,
        },
    );
    assert_eq!(s.used_bytes(), recount(&s));
    s.apply(
        T0,
        &Command::Delete {
            key: b"a".to_vec(),
            noreply: false,
        },
    );
    assert_eq!(s.used_bytes(), recount(&s));
    assert_eq!(s.expiry.len(), 1);
    s.apply(
        T0 + 6000,
        &Command::Get {
            with_cas: false,
            keys: vec![b"b".to_vec()],
        },
    );
    assert_eq!(s.used_bytes(), 0);
    assert!(s.expiry.is_empty());
}

#[test]
fn indexes_follow_items() {
    let config = StoreConfig {
        memory_limit: Some(10_000),
        ..StoreConfig::default()
    };
    let mut s = Store::new(config, T0);
    for i in 0..20 {
        s.apply(T0, &set(&format!("k{i}"), "v", i % 3));
    }
    s.check_invariants().unwrap();
    let report = s.memory_report(T0).unwrap();
    let listed: usize = report
        .classes
        .iter()
        .map(|c| c.number.iter().sum::<usize>())
        .sum();
    assert_eq!(listed, s.items.len());
    let with_exp = s.items.unordered().filter(|it| it.exptime != 0).count();
    assert_eq!(s.expiry.len(), with_exp);
    s.apply(
        T0,
        &Command::FlushAll {
            delay: None,
            noreply: false,
        },
    );
    // Flushed items are reaped lazily: they still hold memory until something meets them.
    assert!(s.live_keys(T0).is_empty());
    assert_eq!(s.items.len(), 20);
    for i in 0..20 {
        s.evict_at(T0, format!("k{i}").as_bytes());
    }
    assert!(s.items.len() == 0 && s.expiry.is_empty());
    assert_eq!(s.used_bytes(), 0);
    s.check_invariants().unwrap();
    let report = s.memory_report(T0).unwrap();
    assert!(report
        .classes
        .iter()
        .all(|c| c.used_chunks == 0 && c.number == [0; 3]));
}

#[test]
fn equal_data_equal_stores_whenever_last_called() {
    let mut a = Store::new(StoreConfig::default(), T0);
    let mut b = a.clone();
    a.apply(T0, &set("k", "v", 0));
    b.apply(T0 + 10, &set("k", "v", 0));
    assert_eq!(a, b);
}

#[test]
fn the_crawler_reclaims_expired_items_only_and_at_most_max() {
    let mut s = Store::new(StoreConfig::default(), T0);
    for i in 0..5 {
        s.apply(T0, &set(&format!("short{i}"), "x", 1));
    }
    s.apply(T0, &set("long", "x", 100));
    s.apply(T0, &set("forever", "x", 0));
    // Not yet expired: nothing to reclaim.
    assert_eq!(s.crawl_expired(T0, 100), 0);
    let later = T0 + 2_000;
    assert_eq!(s.crawl_expired(later, 3), 3);
    assert_eq!(s.crawl_expired(later, 100), 2);
    assert_eq!(s.crawl_expired(later, 100), 0);
    assert_eq!(s.items.len(), 2);
    assert_eq!(s.used_bytes(), recount(&s));
    let get = |key: &str| Command::Get {
        with_cas: false,
        keys: vec![key.as_bytes().to_vec()],
    };
    assert_eq!(s.apply(later, &get("short0")), Reply::Values(vec![]));
    assert!(matches!(s.apply(later, &get("long")), Reply::Values(v) if v.len() == 1));
}

fn meta(text: &str) -> Command {
    let mut parser = crate::wire::RequestParser::default();
    parser.feed(text.as_bytes());
    parser.feed(b"\r\n");
    match parser.next_request() {
        Some(crate::wire::Request::Command(command)) => command,
        other => panic!("{text}: {other:?}"),
    }
}

fn renamed(store: &Store, timeless: bool) -> u64 {
    use std::hash::Hasher;
    let mut h = fixed_hasher();
    store.hash_renamed(&mut h, &mut CasNames::default(), timeless);
    h.finish()
}

/// The explorer tells stores apart by their meta marks: stale and win token always, the
/// fetched mark (access history, like the items' times) only when it hashes times.
#[test]
fn meta_marks_are_part_of_the_state() {
    let mut a = Store::new(StoreConfig::default(), T0);
    a.apply(T0, &set("k", "v", 0));
    let mut fetched = a.clone();
    fetched.apply(
        T0,
        &Command::Get {
            with_cas: false,
            keys: vec![b"k".to_vec()],
        },
    );
    assert_ne!(a, fetched);
    assert_ne!(renamed(&a, false), renamed(&fetched, false));
    assert_eq!(renamed(&a, true), renamed(&fetched, true));
    let mut won = a.clone();
    won.apply(T0, &meta("mg k N30"));
    won.apply(T0, &meta("md k I"));
    assert_ne!(renamed(&a, true), renamed(&won, true));
    let mut stale_won = won.clone();
    stale_won.apply(T0, &meta("mg k c"));
    assert_ne!(renamed(&won, true), renamed(&stale_won, true));
    let mut binary = a.clone();
    binary.apply(T0, &meta("ms aw== 1 b\r\nv"));
    let mut text = a.clone();
    text.apply(T0, &meta("ms k 1\r\nv"));
    assert_ne!(renamed(&binary, true), renamed(&text, true));
    for s in [&fetched, &won, &stale_won, &binary, &text] {
        s.check_invariants().unwrap();
    }
}

/// A read that changes nothing (the item already fetched, its time fresh) leaves the
/// table shared, as the explorer's clones rely on.
#[test]
fn a_repeated_read_changes_nothing() {
    let mut s = Store::new(StoreConfig::default(), T0);
    s.apply(T0, &set("k", "v", 0));
    let get = Command::Get {
        with_cas: true,
        keys: vec![b"k".to_vec()],
    };
    s.apply(T0, &get);
    let before = s.clone();
    s.apply(T0 + 5_000, &get);
    s.apply(T0 + 5_000, &meta("mg k v"));
    assert_eq!(s, before);
}

/// 1.6.18's oldest-live rules: an immediate `flush_all` sets `oldest_live` to the second
/// before now and takes the cas bound; a later `flush_all <delay>` moves `oldest_live`
/// into the future, so by the rules alone an item flushed and not yet reaped is visible
/// again. memcached's LRU maintainer reaps flushed items soon after the flush, and so
/// does [`Store::reap_flushed`]: once reaped, the item stays gone (issue #32.3).
#[test]
fn a_reaped_flushed_item_does_not_come_back() {
    let get = |key: &str| Command::Get {
        with_cas: false,
        keys: vec![key.as_bytes().to_vec()],
    };
    let flush = |delay: Option<i64>| Command::FlushAll {
        delay,
        noreply: false,
    };
    for reap in [false, true] {
        let mut s = Store::new(StoreConfig::default(), T0);
        s.apply(T0, &set("k1", "v", 0));
        assert_eq!(s.apply(T0 + 100, &flush(None)), Reply::Ok);
        assert_eq!(s.item_count(), 1, "flushed, not yet reaped");
        assert_eq!(s.apply(T0 + 100, &get("k1")), Reply::Values(vec![]));
        assert_eq!(s.item_count(), 0, "the get met it and reaped it");
        // Stored in the same second after the flush: visible (the cas cliff).
        s.apply(T0 + 200, &set("k2", "w", 0));
        if reap {
            assert_eq!(s.reap_flushed(T0 + 1_100), 0, "k1 was reaped by the get");
            s.apply(T0 + 1_100, &set("k3", "x", 0));
            assert_eq!(s.apply(T0 + 1_100, &flush(None)), Reply::Ok);
            assert_eq!(s.reap_flushed(T0 + 1_200), 2, "k2 and k3");
            assert_eq!(s.reap_flushed(T0 + 1_200), 0, "once per flush");
            assert_eq!(s.item_count(), 0);
        } else {
            s.apply(T0 + 1_100, &set("k3", "x", 0));
            assert_eq!(s.apply(T0 + 1_100, &flush(None)), Reply::Ok);
        }
        assert_eq!(s.apply(T0 + 1_300, &flush(Some(100))), Reply::Ok);
        let k3 = s.apply(T0 + 1_400, &get("k3"));
        if reap {
            assert_eq!(k3, Reply::Values(vec![]));
        } else {
            // The rules alone: oldest_live is in the future again, nothing is flushed.
            assert!(matches!(&k3, Reply::Values(v) if v.len() == 1), "{k3:?}");
        }
        // The delayed flush takes effect at its deadline: k3 and everything older go.
        s.apply(T0 + 2_000, &set("k4", "y", 0));
        assert_eq!(s.apply(T0 + 101_000, &get("k4")), Reply::Values(vec![]));
        assert_eq!(s.apply(T0 + 101_000, &get("k3")), Reply::Values(vec![]));
        s.check_invariants().unwrap();
    }
}

/// A store that keeps no access fields (the explorer's time-free search) answers every
/// command of such a search as one that keeps them, and its states hash alike; only the
/// items' last access times and fetched marks stay as they were linked.
#[test]
fn an_untracked_store_answers_alike_and_keeps_no_access_fields() {
    let get = |key: &str, with_cas: bool| Command::Get {
        with_cas,
        keys: vec![key.as_bytes().to_vec()],
    };
    let mut tracked = Store::new(StoreConfig::default(), T0);
    let mut untracked = tracked.clone();
    untracked.untrack_access();
    let hour = 3_600_000;
    let script = [
        (T0, set("a", "1", 0)),
        (T0, get("a", false)),
        (T0 + hour, get("a", true)),
        (T0 + hour, set("b", "2", 0)),
        (T0 + 2 * hour, get("b", false)),
        (T0 + 2 * hour, get("a", false)),
    ];
    let shape = |s: &Store| {
        let mut h = std::hash::DefaultHasher::new();
        s.hash_renamed(&mut h, &mut CasNames::default(), true);
        std::hash::Hasher::finish(&h)
    };
    for (now, command) in &script {
        assert_eq!(tracked.apply(*now, command), untracked.apply(*now, command));
        assert_eq!(shape(&tracked), shape(&untracked));
    }
    let a = |s: &Store| {
        let it = s.items.get(b"a").expect("linked").clone();
        (it.fetched, it.time)
    };
    let linked = expiry::now_secs(T0);
    assert_eq!(a(&untracked), (false, linked));
    assert_eq!(a(&tracked), (true, expiry::now_secs(T0 + 2 * hour)));
    assert_ne!(tracked.items.times(), untracked.items.times());
}
