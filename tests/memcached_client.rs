//! The TCP client backend against real memcached servers: typed methods, several servers
//! with ketama, multi-gets split and merged, and servers that go away.

use kvsim::command::{Command, Reply};
use kvsim::net::{MemcachedProcess, TcpKv, TcpKvConfig};
use kvsim::{block_on_ready, Kv, KvError};

#[test]
fn typed_methods_see_memcached_outcomes() {
    let Some(mc) = MemcachedProcess::for_test("memcached_client", &[]) else {
        return;
    };
    let kv = TcpKv::connect_one(&mc.addr(), 1).unwrap();
    assert!(block_on_ready(kv.add(b"q:head", b"0", 0))
        .unwrap()
        .is_stored());
    // The memcache crate would say Ok(()) here; a checker needs NOT_STORED.
    assert!(!block_on_ready(kv.add(b"q:head", b"1", 0))
        .unwrap()
        .is_stored());
    assert_eq!(block_on_ready(kv.incr(b"q:head", 5)).unwrap(), Some(5));
    assert_eq!(block_on_ready(kv.decr(b"q:head", 9)).unwrap(), Some(0));
    assert_eq!(block_on_ready(kv.incr(b"missing", 1)).unwrap(), None);
    let v = block_on_ready(kv.gets(b"q:head")).unwrap().unwrap();
    assert!(block_on_ready(kv.cas(b"q:head", v.cas, b"7", 0))
        .unwrap()
        .is_stored());
    assert_eq!(
        block_on_ready(kv.cas(b"q:head", v.cas, b"8", 0)).unwrap(),
        kvsim::StoreOutcome::Exists
    );
    assert!(block_on_ready(kv.append(b"q:head", b"x"))
        .unwrap()
        .is_stored());
    assert_eq!(
        block_on_ready(kv.get(b"q:head")).unwrap(),
        Some(b"7x".to_vec())
    );
    let err = block_on_ready(kv.incr(b"q:head", 1)).unwrap_err();
    assert_eq!(
        err.to_string(),
        "`incr q:head` failed: CLIENT_ERROR cannot increment or decrement non-numeric value"
    );
    assert!(block_on_ready(kv.touch(b"q:head", 1000)).unwrap());
    assert!(block_on_ready(kv.delete(b"q:head")).unwrap());
    assert!(!block_on_ready(kv.delete(b"q:head")).unwrap());
    // noreply is asked for but the client still learns the outcome.
    let reply = block_on_ready(kv.execute(Command::Delete {
        key: b"q:head".to_vec(),
        noreply: true,
    }))
    .unwrap();
    assert_eq!(reply, Reply::NotFound);
}

#[test]
fn keys_spread_over_servers_by_ketama_and_multigets_merge_in_order() {
    let Some(a) = MemcachedProcess::for_test("memcached_client", &[]) else {
        return;
    };
    let b = MemcachedProcess::spawn(&[]).unwrap();
    let c = MemcachedProcess::spawn(&[]).unwrap();
    let addrs = [a.addr(), b.addr(), c.addr()];
    let kv = TcpKv::new(TcpKvConfig::new(addrs.clone())).unwrap();
    let keys: Vec<Vec<u8>> = (0..60).map(|i| format!("key{i}").into_bytes()).collect();
    for k in &keys {
        assert!(block_on_ready(kv.set(k, k, 0)).unwrap().is_stored());
    }
    // Each key lives on the server ketama names, and only there.
    let singles: Vec<TcpKv> = addrs
        .iter()
        .map(|addr| TcpKv::connect_one(addr, 0).unwrap())
        .collect();
    let mut per_server = [0; 3];
    for k in &keys {
        let owner = kv.server_for(k);
        per_server[owner] += 1;
        for (s, single) in singles.iter().enumerate() {
            let found = block_on_ready(single.get(k)).unwrap();
            assert_eq!(found.is_some(), s == owner, "key {:?} on server {s}", k);
        }
    }
    assert!(per_server.iter().all(|&n| n > 5), "{per_server:?}");
    // A multi-get across servers answers hits in request order, duplicates included.
    let mut wanted: Vec<Vec<u8>> = keys.iter().rev().step_by(7).cloned().collect();
    wanted.insert(2, b"absent".to_vec());
    wanted.push(wanted[0].clone());
    let reply = block_on_ready(kv.execute(Command::Get {
        with_cas: false,
        keys: wanted.clone(),
    }))
    .unwrap();
    let Reply::Values(values) = reply else {
        panic!("{reply:?}")
    };
    let got: Vec<Vec<u8>> = values.iter().map(|v| v.key.clone()).collect();
    let expected: Vec<Vec<u8>> = wanted.into_iter().filter(|k| k != b"absent").collect();
    assert_eq!(got, expected);
    // flush_all goes to every server.
    block_on_ready(kv.flush_all(None)).unwrap();
    for single in &singles {
        for k in &keys {
            assert_eq!(block_on_ready(single.get(k)).unwrap(), None);
        }
    }
}

#[test]
fn a_server_that_dies_makes_outcomes_unknown() {
    let Some(mc) = MemcachedProcess::for_test("memcached_client", &[]) else {
        return;
    };
    let addr = mc.addr();
    let kv = TcpKv::connect_one(&addr, 0).unwrap();
    assert!(block_on_ready(kv.set(b"k", b"v", 0)).unwrap().is_stored());
    drop(mc);
    let err = block_on_ready(kv.get(b"k")).unwrap_err();
    assert!(
        matches!(err, KvError::ServerGone { .. }),
        "expected ServerGone, found {err}"
    );
    assert!(err.is_indeterminate());
}
