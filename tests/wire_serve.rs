//! `kvsim serve`'s fault knobs, seen from a client over TCP.

use kvsim::command::{Command, Reply, ServerError, StoreVerb};
use kvsim::net::{ServeConfig, Server, TcpKv, TcpKvConfig};
use kvsim::store::StoreConfig;
use kvsim::{block_on_ready, Kv, KvError};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

fn start(config: ServeConfig) -> Server {
    Server::start(ServeConfig {
        listen: "127.0.0.1:0".parse().unwrap(),
        ..config
    })
    .expect("kvsim serve")
}

fn client(server: &Server) -> TcpKv {
    TcpKv::connect_one(&server.local_addr().to_string(), 1).unwrap()
}

#[test]
fn evict_probability_one_evicts_every_key_before_each_command() {
    let server = start(ServeConfig {
        evict_probability: 1.0,
        ..ServeConfig::default()
    });
    let kv = client(&server);
    assert!(block_on_ready(kv.set(b"k", b"v", 0)).unwrap().is_stored());
    assert_eq!(block_on_ready(kv.get(b"k")).unwrap(), None);
    // add always wins: the key is gone before every command.
    assert!(block_on_ready(kv.add(b"k", b"v", 0)).unwrap().is_stored());
    assert!(block_on_ready(kv.add(b"k", b"v", 0)).unwrap().is_stored());
}

#[test]
fn no_fault_by_default_and_add_reports_not_stored() {
    let server = start(ServeConfig::default());
    let kv = client(&server);
    assert!(block_on_ready(kv.add(b"lock", b"1", 0))
        .unwrap()
        .is_stored());
    assert!(!block_on_ready(kv.add(b"lock", b"2", 0))
        .unwrap()
        .is_stored());
    let v = block_on_ready(kv.gets(b"lock")).unwrap().unwrap();
    assert_eq!(v.data, b"1");
    assert!(block_on_ready(kv.cas(b"lock", v.cas, b"3", 0))
        .unwrap()
        .is_stored());
    assert!(!block_on_ready(kv.cas(b"lock", v.cas, b"4", 0))
        .unwrap()
        .is_stored());
    assert_eq!(block_on_ready(kv.incr(b"lock", 2)).unwrap(), Some(5));
}

#[test]
fn delay_longer_than_the_timeout_is_an_unknown_outcome() {
    let server = start(ServeConfig {
        delay_ms: Some((300, 300)),
        ..ServeConfig::default()
    });
    let mut config = TcpKvConfig::new([server.local_addr().to_string()]);
    config.io_timeout = Duration::from_millis(20);
    let kv = TcpKv::new(config).unwrap();
    let err = block_on_ready(kv.set(b"k", b"v", 0)).unwrap_err();
    assert!(matches!(err, KvError::Timeout { .. }), "{err}");
    assert!(err.is_indeterminate());
    // The set was applied all the same (after the delay): its outcome really was unknown.
    let mut patient = TcpKvConfig::new([server.local_addr().to_string()]);
    patient.io_timeout = Duration::from_secs(5);
    let kv = TcpKv::new(patient).unwrap();
    assert_eq!(block_on_ready(kv.get(b"k")).unwrap(), Some(b"v".to_vec()));
}

#[test]
fn memory_limit_without_eviction_refuses_stores() {
    let server = start(ServeConfig {
        // 1 KiB pages: four pages, a 563-byte item to a page.
        store: StoreConfig {
            memory_limit: Some(4096),
            evict: false,
            geometry: kvsim::store::geometry::Geometry {
                page_size: 1024,
                slab_chunk_max: 1024,
                ..Default::default()
            },
            ..StoreConfig::default()
        },
        ..ServeConfig::default()
    });
    let kv = client(&server);
    let mut refused = None;
    for i in 0..100 {
        let reply = block_on_ready(kv.execute(Command::Store {
            verb: StoreVerb::Set,
            key: format!("k{i}").into_bytes(),
            flags: 0,
            exptime: 0,
            data: vec![b'x'; 500],
            noreply: false,
        }))
        .unwrap();
        if reply != Reply::Stored {
            refused = Some((i, reply));
            break;
        }
    }
    let (i, reply) = refused.expect("the store fills up");
    assert!(i > 0);
    assert_eq!(reply, Reply::ServerError(ServerError::OutOfMemoryStoring));
    // Nothing was evicted to make room.
    assert!(block_on_ready(kv.get(b"k0")).unwrap().is_some());
}

#[test]
fn clock_offset_moves_absolute_expiry() {
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs() as i64;
    // The server's clock runs a day ahead: "now + 1 hour" is already in its past.
    let ahead = start(ServeConfig {
        clock_offset_secs: 86_400,
        ..ServeConfig::default()
    });
    let kv = client(&ahead);
    assert!(block_on_ready(kv.set(b"k", b"v", now + 3600))
        .unwrap()
        .is_stored());
    assert_eq!(block_on_ready(kv.get(b"k")).unwrap(), None);
    let plain = start(ServeConfig::default());
    let kv = client(&plain);
    assert!(block_on_ready(kv.set(b"k", b"v", now + 3600))
        .unwrap()
        .is_stored());
    assert_eq!(block_on_ready(kv.get(b"k")).unwrap(), Some(b"v".to_vec()));
}

#[test]
fn stopping_the_server_mid_session_is_server_gone() {
    let server = start(ServeConfig::default());
    let kv = client(&server);
    assert!(block_on_ready(kv.set(b"k", b"v", 0)).unwrap().is_stored());
    server.stop();
    let err = block_on_ready(kv.get(b"k")).unwrap_err();
    assert!(err.is_indeterminate(), "{err}");
}

/// Past `max_connections` open at once, a connection is answered as memcached answers it
/// (`ERROR Too many open connections`) and closed; once one closes, a new one is served.
#[test]
fn connections_past_the_limit_are_refused_as_memcached_refuses_them() {
    use std::io::{Read, Write};
    use std::net::TcpStream;
    let server = start(ServeConfig {
        max_connections: 2,
        ..ServeConfig::default()
    });
    let addr = server.local_addr();
    // The reply to `version`, or what came before the connection broke (a refused
    // connection may be reset under the write).
    let served = |s: &mut TcpStream| {
        let mut buf = [0u8; 64];
        match s.write_all(b"version\r\n").and_then(|()| s.read(&mut buf)) {
            Ok(n) => String::from_utf8_lossy(&buf[..n]).into_owned(),
            Err(e) => format!("broken: {e}"),
        }
    };
    let mut a = TcpStream::connect(addr).unwrap();
    let mut b = TcpStream::connect(addr).unwrap();
    assert!(served(&mut a).starts_with("VERSION "));
    assert!(served(&mut b).starts_with("VERSION "));
    let mut c = TcpStream::connect(addr).unwrap();
    let mut refused = Vec::new();
    c.read_to_end(&mut refused).unwrap();
    assert_eq!(refused, b"ERROR Too many open connections\r\n");
    drop(a);
    // The server notices the close when its reader sees the end of the stream.
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    loop {
        let mut d = TcpStream::connect(addr).unwrap();
        let reply = served(&mut d);
        if reply.starts_with("VERSION ") {
            break;
        }
        assert!(
            reply == "ERROR Too many open connections\r\n" || reply.starts_with("broken"),
            "{reply}"
        );
        assert!(
            std::time::Instant::now() < deadline,
            "the closed slot was never freed"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
}
