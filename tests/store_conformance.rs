//! Conformance of `Store` to memcached 1.6.18, one test per rule of
//! `../shared/reference/memcached-semantics.md` (§ numbers below), with exact reply bytes.
//!
//! Not here, because they belong to the wire codec (`src/wire/`) and not to the store:
//! tokenizing and line handling (§1), arity `ERROR` (except `get` with no key, which the
//! `Command` type can express), `CLIENT_ERROR bad data chunk` and the data block parsed as
//! a command after a command-line error (§3), unparsable flags/exptime/bytes/cas/delta
//! (`bad command line format`, `invalid exptime argument`, `invalid numeric delta
//! argument`), the 32-bit truncation of flags and exptime (§3, §4), `delete <key> <n>`
//! usage errors (§10), noreply suppression (§13), `HTTP/` and over-long lines.
//! Not modelled: `-F` (`flush_all not allowed`), `-C` (cas disabled), `-o no_modern`,
//! per-slab-class eviction (see `kvsim::store::lru` for how the global LRU differs).

use kvsim::command::{ArithVerb, ClientError, Command, Reply, ServerError, StoreVerb};
use kvsim::store::geometry::Geometry;
use kvsim::store::{Store, StoreConfig};

/// A whole unix second, so that `T0 + 999` is still the same server second.
const T0: u64 = 1_700_000_000_000;
const T0_S: i64 = 1_700_000_000;

/// A store and a virtual clock.
struct Srv {
    store: Store,
    now: u64,
}

impl Srv {
    fn new() -> Srv {
        Srv::with(StoreConfig::default())
    }

    fn with(config: StoreConfig) -> Srv {
        Srv {
            store: Store::new(config, T0),
            now: T0,
        }
    }

    /// Moves the clock to `T0 + ms`.
    fn at(&mut self, ms: u64) -> &mut Srv {
        assert!(T0 + ms >= self.now, "time never goes back");
        self.now = T0 + ms;
        self
    }

    fn reply(&mut self, command: Command) -> Reply {
        self.store.apply(self.now, &command)
    }

    /// The reply's exact wire bytes, as a string (tests use ASCII or `{:?}` escapes).
    fn run(&mut self, command: Command) -> String {
        String::from_utf8_lossy(&self.reply(command).to_bytes()).into_owned()
    }

    fn st(&mut self, verb: StoreVerb, key: &[u8], flags: u32, exptime: i64, data: &[u8]) -> String {
        self.run(Command::Store {
            verb,
            key: key.to_vec(),
            flags,
            exptime,
            data: data.to_vec(),
            noreply: false,
        })
    }

    fn set(&mut self, key: &str, data: &str) -> String {
        self.st(StoreVerb::Set, key.as_bytes(), 0, 0, data.as_bytes())
    }

    fn set_exp(&mut self, key: &str, exptime: i64, data: &str) -> String {
        self.st(StoreVerb::Set, key.as_bytes(), 0, exptime, data.as_bytes())
    }

    fn add(&mut self, key: &str, data: &str) -> String {
        self.st(StoreVerb::Add, key.as_bytes(), 0, 0, data.as_bytes())
    }

    fn replace(&mut self, key: &str, data: &str) -> String {
        self.st(StoreVerb::Replace, key.as_bytes(), 0, 0, data.as_bytes())
    }

    fn append(&mut self, key: &str, data: &str) -> String {
        self.st(StoreVerb::Append, key.as_bytes(), 0, 0, data.as_bytes())
    }

    fn prepend(&mut self, key: &str, data: &str) -> String {
        self.st(StoreVerb::Prepend, key.as_bytes(), 0, 0, data.as_bytes())
    }

    fn cas_full(&mut self, key: &str, flags: u32, exptime: i64, unique: u64, data: &str) -> String {
        self.run(Command::Cas {
            key: key.as_bytes().to_vec(),
            flags,
            exptime,
            data: data.as_bytes().to_vec(),
            unique,
            noreply: false,
        })
    }

    fn cas(&mut self, key: &str, unique: u64, data: &str) -> String {
        self.cas_full(key, 0, 0, unique, data)
    }

    fn get_keys(&mut self, with_cas: bool, keys: &[&[u8]]) -> String {
        self.run(Command::Get {
            with_cas,
            keys: keys.iter().map(|k| k.to_vec()).collect(),
        })
    }

    fn get(&mut self, key: &str) -> String {
        self.get_keys(false, &[key.as_bytes()])
    }

    fn gets(&mut self, key: &str) -> String {
        self.get_keys(true, &[key.as_bytes()])
    }

    /// The cas unique of a live item.
    fn unique(&mut self, key: &str) -> u64 {
        match self.reply(Command::Get {
            with_cas: true,
            keys: vec![key.as_bytes().to_vec()],
        }) {
            Reply::Values(v) if v.len() == 1 => v[0].cas.unwrap(),
            other => panic!("expected one value for {key}, found {other}"),
        }
    }

    fn gat(&mut self, with_cas: bool, exptime: i64, keys: &[&str]) -> String {
        self.run(Command::Gat {
            with_cas,
            exptime,
            keys: keys.iter().map(|k| k.as_bytes().to_vec()).collect(),
        })
    }

    fn arith(&mut self, verb: ArithVerb, key: &str, delta: u64) -> String {
        self.run(Command::Arith {
            verb,
            key: key.as_bytes().to_vec(),
            delta,
            noreply: false,
        })
    }

    fn incr(&mut self, key: &str, delta: u64) -> String {
        self.arith(ArithVerb::Incr, key, delta)
    }

    fn decr(&mut self, key: &str, delta: u64) -> String {
        self.arith(ArithVerb::Decr, key, delta)
    }

    fn delete(&mut self, key: &str) -> String {
        self.run(Command::Delete {
            key: key.as_bytes().to_vec(),
            noreply: false,
        })
    }

    fn touch(&mut self, key: &str, exptime: i64) -> String {
        self.run(Command::Touch {
            key: key.as_bytes().to_vec(),
            exptime,
            noreply: false,
        })
    }

    fn flush(&mut self, delay: Option<i64>) -> String {
        self.run(Command::FlushAll {
            delay,
            noreply: false,
        })
    }
}

fn value(key: &str, flags: u32, data: &str) -> String {
    format!("VALUE {key} {flags} {}\r\n{data}\r\nEND\r\n", data.len())
}

const END: &str = "END\r\n";
const STORED: &str = "STORED\r\n";
const NOT_STORED: &str = "NOT_STORED\r\n";
const EXISTS: &str = "EXISTS\r\n";
const NOT_FOUND: &str = "NOT_FOUND\r\n";
const BAD_FORMAT: &str = "CLIENT_ERROR bad command line format\r\n";
const NON_NUMERIC: &str = "CLIENT_ERROR cannot increment or decrement non-numeric value\r\n";
const TOO_LARGE: &str = "SERVER_ERROR object too large for cache\r\n";
const OOM_STORING: &str = "SERVER_ERROR out of memory storing object\r\n";

// ---- §2 keys ------------------------------------------------------------------------

#[test]
fn s2_a_key_of_250_bytes_is_accepted_and_251_is_a_bad_command_line() {
    let mut s = Srv::new();
    let k250 = "k".repeat(250);
    let k251 = "k".repeat(251);
    assert_eq!(s.set(&k250, "v"), STORED);
    assert_eq!(s.get(&k250), value(&k250, 0, "v"));
    assert_eq!(s.set(&k251, "v"), BAD_FORMAT);
    assert_eq!(s.get(&k251), BAD_FORMAT);
    assert_eq!(s.add(&k251, "v"), BAD_FORMAT);
    assert_eq!(s.cas(&k251, 1, "v"), BAD_FORMAT);
    assert_eq!(s.incr(&k251, 1), BAD_FORMAT);
    assert_eq!(s.touch(&k251, 1), BAD_FORMAT);
    assert_eq!(s.delete(&k251), BAD_FORMAT);
    assert_eq!(s.gat(false, 0, &[&k251]), BAD_FORMAT);
}

#[test]
fn s2_only_the_key_length_is_checked_control_and_high_bytes_are_key_bytes() {
    let mut s = Srv::new();
    for key in [&b"a\x01b"[..], b"tab\there", b"\x7f", b"\xff\xfe", b"cr\rx"] {
        assert_eq!(s.st(StoreVerb::Set, key, 0, 0, b"v"), STORED);
        let mut expected = b"VALUE ".to_vec();
        expected.extend_from_slice(key);
        expected.extend_from_slice(b" 0 1\r\nv\r\nEND\r\n");
        let reply = s.reply(Command::Get {
            with_cas: false,
            keys: vec![key.to_vec()],
        });
        assert_eq!(reply.to_bytes(), expected);
    }
}

#[test]
fn s2_a_too_long_key_in_a_multiget_discards_the_hits_found_so_far() {
    let mut s = Srv::new();
    s.set("a", "1");
    let long = vec![b'x'; 251];
    assert_eq!(s.get_keys(false, &[b"a", &long, b"a"]), BAD_FORMAT);
    assert_eq!(s.get_keys(true, &[b"a", &long]), BAD_FORMAT);
}

// ---- §3 storage, value size -------------------------------------------------------

#[test]
fn s3_a_zero_length_value_is_legal() {
    let mut s = Srv::new();
    assert_eq!(s.set("k", ""), STORED);
    assert_eq!(s.get("k"), "VALUE k 0 0\r\n\r\nEND\r\n");
}

#[test]
fn s3_the_size_limit_counts_the_whole_item() {
    let mut s = Srv::new();
    // 48 header + key + 1 + (4 if flags) + data + 2 + 8 cas <= 1048576.
    let fits = vec![b'a'; 1_048_516];
    assert_eq!(s.st(StoreVerb::Set, b"k", 0, 0, &fits), STORED);
    assert_eq!(
        s.st(StoreVerb::Set, b"k", 0, 0, &vec![b'a'; 1_048_517]),
        TOO_LARGE
    );
    assert_eq!(
        s.st(StoreVerb::Set, b"f", 1, 0, &vec![b'a'; 1_048_512]),
        STORED
    );
    assert_eq!(
        s.st(StoreVerb::Set, b"f", 1, 0, &vec![b'a'; 1_048_513]),
        TOO_LARGE
    );
    let k250 = vec![b'k'; 250];
    assert_eq!(
        s.st(StoreVerb::Set, &k250, 0, 0, &vec![b'a'; 1_048_267]),
        STORED
    );
    assert_eq!(
        s.st(StoreVerb::Set, &k250, 0, 0, &vec![b'a'; 1_048_268]),
        TOO_LARGE
    );
}

#[test]
fn s3_item_size_max_is_configurable() {
    let mut s = Srv::with(StoreConfig {
        item_size_max: 1000,
        ..StoreConfig::default()
    });
    assert_eq!(s.st(StoreVerb::Set, b"k", 0, 0, &[b'a'; 940]), STORED);
    assert_eq!(s.st(StoreVerb::Set, b"k", 0, 0, &[b'a'; 941]), TOO_LARGE);
}

#[test]
fn s3_a_too_large_set_deletes_the_old_value() {
    let mut s = Srv::new();
    s.set("k", "old");
    assert_eq!(
        s.st(StoreVerb::Set, b"k", 0, 0, &vec![b'a'; 2 << 20]),
        TOO_LARGE
    );
    assert_eq!(s.get("k"), END);
}

#[test]
fn s3_a_too_large_add_replace_append_prepend_or_cas_keeps_the_old_value() {
    let mut s = Srv::new();
    s.set("k", "old");
    let u = s.unique("k");
    let big = vec![b'a'; 2 << 20];
    for verb in [
        StoreVerb::Add,
        StoreVerb::Replace,
        StoreVerb::Append,
        StoreVerb::Prepend,
    ] {
        assert_eq!(s.st(verb, b"k", 0, 0, &big), TOO_LARGE);
    }
    let reply = s.reply(Command::Cas {
        key: b"k".to_vec(),
        flags: 0,
        exptime: 0,
        data: big,
        unique: u,
        noreply: false,
    });
    assert_eq!(reply, Reply::ServerError(ServerError::ObjectTooLarge));
    assert_eq!(s.get("k"), value("k", 0, "old"));
    assert_eq!(s.unique("k"), u);
}

#[test]
fn s3_an_append_or_prepend_whose_result_is_too_large_is_not_stored() {
    let mut s = Srv::new();
    assert_eq!(
        s.st(StoreVerb::Set, b"k", 0, 0, &vec![b'a'; 1_048_500]),
        STORED
    );
    assert_eq!(s.append("k", &"b".repeat(16)), STORED); // exactly the limit
    assert_eq!(s.append("k", "c"), NOT_STORED);
    assert_eq!(s.prepend("k", "c"), NOT_STORED);
    match s.reply(Command::Get {
        with_cas: false,
        keys: vec![b"k".to_vec()],
    }) {
        Reply::Values(v) => assert_eq!(v[0].data.len(), 1_048_516),
        other => panic!("expected the value, found {other}"),
    }
}

// ---- §4 flags ------------------------------------------------------------------------

#[test]
fn s4_flags_round_trip_as_stored() {
    let mut s = Srv::new();
    for flags in [0u32, 123, 65_535, 1 << 31, u32::MAX] {
        assert_eq!(s.st(StoreVerb::Set, b"k", flags, 0, b"v"), STORED);
        assert_eq!(s.get("k"), value("k", flags, "v"));
    }
}

// ---- §5 expiration -------------------------------------------------------------------

#[test]
fn s5_exptime_zero_never_expires() {
    let mut s = Srv::new();
    s.set_exp("k", 0, "v");
    s.at(400 * 24 * 3600 * 1000);
    assert_eq!(s.get("k"), value("k", 0, "v"));
}

#[test]
fn s5_a_relative_ttl_expires_on_the_server_second() {
    let mut s = Srv::new();
    s.set_exp("k", 3, "v");
    s.at(2_999);
    assert_eq!(s.get("k"), value("k", 0, "v"));
    s.at(3_000);
    assert_eq!(s.get("k"), END);
}

#[test]
fn s5_a_ttl_of_1_may_expire_almost_immediately() {
    let mut s = Srv::new();
    s.at(999);
    s.set_exp("k", 1, "v");
    s.at(1_000);
    assert_eq!(s.get("k"), END);
}

#[test]
fn s5_thirty_days_is_relative_and_one_second_more_is_an_absolute_past_time() {
    let mut s = Srv::new();
    assert_eq!(s.set_exp("rel", 2_592_000, "v"), STORED);
    assert_eq!(s.set_exp("abs", 2_592_001, "v"), STORED);
    assert_eq!(s.get("rel"), value("rel", 0, "v"));
    assert_eq!(s.get("abs"), END);
    s.at(2_592_000 * 1000 - 1);
    assert_eq!(s.get("rel"), value("rel", 0, "v"));
    s.at(2_592_000 * 1000);
    assert_eq!(s.get("rel"), END);
}

#[test]
fn s5_absolute_times_are_unix_seconds() {
    let mut s = Srv::new();
    assert_eq!(s.set_exp("past", T0_S - 10, "v"), STORED);
    assert_eq!(s.get("past"), END);
    assert_eq!(s.set_exp("future", T0_S + 5, "v"), STORED);
    s.at(4_999);
    assert_eq!(s.get("future"), value("future", 0, "v"));
    s.at(5_000);
    assert_eq!(s.get("future"), END);
    assert_eq!(s.set_exp("far", i32::MAX as i64, "v"), STORED);
    assert_eq!(s.get("far"), value("far", 0, "v"));
}

#[test]
fn s5_a_negative_exptime_is_stored_but_already_expired() {
    let mut s = Srv::new();
    s.set("k", "old");
    assert_eq!(s.set_exp("k", -1, "v"), STORED);
    assert_eq!(s.get("k"), END);
}

#[test]
fn s5_expired_items_are_invisible_to_every_command() {
    let mut s = Srv::new();
    let setup = |s: &mut Srv| {
        s.set_exp("k", -1, "5");
    };
    setup(&mut s);
    assert_eq!(s.get("k"), END);
    assert_eq!(s.gets("k"), END);
    assert_eq!(s.gat(false, 100, &["k"]), END);
    assert_eq!(s.replace("k", "x"), NOT_STORED);
    assert_eq!(s.append("k", "x"), NOT_STORED);
    assert_eq!(s.prepend("k", "x"), NOT_STORED);
    assert_eq!(s.cas("k", 1, "x"), NOT_FOUND);
    assert_eq!(s.incr("k", 1), NOT_FOUND);
    assert_eq!(s.decr("k", 1), NOT_FOUND);
    assert_eq!(s.touch("k", 100), NOT_FOUND);
    assert_eq!(s.delete("k"), NOT_FOUND);
    setup(&mut s);
    assert_eq!(s.add("k", "new"), STORED);
    assert_eq!(s.get("k"), value("k", 0, "new"));
}

// ---- §6 storage outcomes -------------------------------------------------------------

#[test]
fn s6_set_always_stores() {
    let mut s = Srv::new();
    assert_eq!(s.set("k", "a"), STORED);
    assert_eq!(s.set("k", "b"), STORED);
    assert_eq!(s.get("k"), value("k", 0, "b"));
}

#[test]
fn s6_add_stores_only_an_absent_key() {
    let mut s = Srv::new();
    assert_eq!(s.add("k", "a"), STORED);
    assert_eq!(s.add("k", "b"), NOT_STORED);
    assert_eq!(s.get("k"), value("k", 0, "a"));
}

#[test]
fn s6_replace_stores_only_a_present_key() {
    let mut s = Srv::new();
    assert_eq!(s.replace("k", "a"), NOT_STORED);
    assert_eq!(s.get("k"), END);
    s.set("k", "a");
    assert_eq!(s.replace("k", "b"), STORED);
    assert_eq!(s.get("k"), value("k", 0, "b"));
}

#[test]
fn s6_append_and_prepend_concatenate_and_need_the_key() {
    let mut s = Srv::new();
    assert_eq!(s.append("k", "x"), NOT_STORED);
    assert_eq!(s.prepend("k", "x"), NOT_STORED);
    assert_eq!(s.get("k"), END);
    s.set("k", "mid");
    assert_eq!(s.append("k", ">"), STORED);
    assert_eq!(s.prepend("k", "<"), STORED);
    assert_eq!(s.get("k"), value("k", 0, "<mid>"));
}

#[test]
fn s6_append_and_prepend_ignore_the_commands_flags_and_exptime() {
    let mut s = Srv::new();
    s.st(StoreVerb::Set, b"k", 7, 10, b"a");
    assert_eq!(s.st(StoreVerb::Append, b"k", 9, -1, b"b"), STORED);
    assert_eq!(s.st(StoreVerb::Prepend, b"k", 0, 1000, b"c"), STORED);
    assert_eq!(s.get("k"), value("k", 7, "cab"));
    s.at(9_999);
    assert_eq!(s.get("k"), value("k", 7, "cab"));
    s.at(10_000);
    assert_eq!(s.get("k"), END);
}

#[test]
fn s6_cas_with_the_current_unique_stores_the_commands_flags_exptime_and_value() {
    let mut s = Srv::new();
    s.st(StoreVerb::Set, b"k", 3, 0, b"a");
    let u = s.unique("k");
    assert_eq!(s.cas_full("k", 5, 2, u, "b"), STORED);
    assert_eq!(s.get("k"), value("k", 5, "b"));
    s.at(2_000);
    assert_eq!(s.get("k"), END);
}

#[test]
fn s6_cas_with_another_unique_or_a_reused_one_is_exists() {
    let mut s = Srv::new();
    s.set("k", "a");
    let u = s.unique("k");
    assert_eq!(s.cas("k", u + 1, "x"), EXISTS);
    assert_eq!(s.cas("k", u, "b"), STORED);
    assert_eq!(s.cas("k", u, "c"), EXISTS);
    assert_eq!(s.get("k"), value("k", 0, "b"));
}

#[test]
fn s6_cas_with_unique_0_never_matches() {
    let mut s = Srv::new();
    s.set("k", "a");
    assert_eq!(s.cas("k", 0, "x"), EXISTS);
}

#[test]
fn s6_cas_on_a_missing_key_is_not_found_even_with_a_stale_unique() {
    let mut s = Srv::new();
    s.set("k", "a");
    let u = s.unique("k");
    s.delete("k");
    assert_eq!(s.cas("k", u, "x"), NOT_FOUND);
    assert_eq!(s.cas("never", 1, "x"), NOT_FOUND);
    assert_eq!(s.get("k"), END);
}

#[test]
fn s6_a_unique_taken_from_another_key_never_matches() {
    let mut s = Srv::new();
    s.set("a", "1");
    s.set("b", "2");
    let ua = s.unique("a");
    assert_eq!(s.cas("b", ua, "x"), EXISTS);
}

// ---- §7 retrieval --------------------------------------------------------------------

#[test]
fn s7_get_answers_hits_in_request_order_skips_misses_and_repeats_duplicates() {
    let mut s = Srv::new();
    s.set("a", "1");
    s.st(StoreVerb::Set, b"b", 9, 0, b"22");
    assert_eq!(
        s.get_keys(false, &[b"b", b"x", b"a", b"b"]),
        "VALUE b 9 2\r\n22\r\nVALUE a 0 1\r\n1\r\nVALUE b 9 2\r\n22\r\nEND\r\n"
    );
    assert_eq!(s.get("x"), END);
}

#[test]
fn s7_gets_appends_the_unique() {
    let mut s = Srv::new();
    s.set("a", "1");
    s.set("b", "2");
    assert_eq!(
        s.get_keys(true, &[b"a", b"b"]),
        "VALUE a 0 1 1\r\n1\r\nVALUE b 0 1 2\r\n2\r\nEND\r\n"
    );
    assert_eq!(s.gets("missing"), END);
}

#[test]
fn s7_get_with_no_key_fails_the_arity_check() {
    let mut s = Srv::new();
    assert_eq!(s.get_keys(false, &[]), "ERROR\r\n");
    assert_eq!(s.gat(false, 10, &[]), END);
}

#[test]
fn s7_data_is_returned_byte_exact() {
    let mut s = Srv::new();
    let data = b"a\r\nb\0c\xff\r\n";
    s.st(StoreVerb::Set, b"k", 0, 0, data);
    let mut expected = b"VALUE k 0 9\r\n".to_vec();
    expected.extend_from_slice(data);
    expected.extend_from_slice(b"\r\nEND\r\n");
    let reply = s.reply(Command::Get {
        with_cas: false,
        keys: vec![b"k".to_vec()],
    });
    assert_eq!(reply.to_bytes(), expected);
}

#[test]
fn s7_gat_sets_the_expiry_of_every_hit_and_returns_the_value() {
    let mut s = Srv::new();
    s.set_exp("a", 2, "1");
    s.set("b", "2");
    assert_eq!(
        s.gat(false, 10, &["a", "x", "b"]),
        "VALUE a 0 1\r\n1\r\nVALUE b 0 1\r\n2\r\nEND\r\n"
    );
    s.at(9_999);
    assert_eq!(
        s.get_keys(false, &[b"a", b"b"]),
        "VALUE a 0 1\r\n1\r\nVALUE b 0 1\r\n2\r\nEND\r\n"
    );
    s.at(10_000);
    assert_eq!(s.get_keys(false, &[b"a", b"b"]), END);
}

#[test]
fn s7_gats_returns_uniques_and_gat_does_not() {
    let mut s = Srv::new();
    s.set("a", "1");
    assert_eq!(s.gat(true, 0, &["a"]), "VALUE a 0 1 1\r\n1\r\nEND\r\n");
    assert_eq!(s.gat(false, 0, &["a"]), "VALUE a 0 1\r\n1\r\nEND\r\n");
    assert_eq!(s.gat(false, 0, &["x"]), END);
}

#[test]
fn s7_gat_with_a_negative_or_past_time_returns_the_value_then_it_is_gone() {
    let mut s = Srv::new();
    s.set("a", "1");
    s.set("b", "2");
    assert_eq!(s.gat(false, -1, &["a"]), value("a", 0, "1"));
    assert_eq!(s.get("a"), END);
    assert_eq!(s.gat(false, T0_S - 1, &["b"]), value("b", 0, "2"));
    assert_eq!(s.get("b"), END);
}

// ---- §8 cas uniques ------------------------------------------------------------------

#[test]
fn s8_uniques_start_at_1_and_every_successful_store_takes_the_next() {
    let mut s = Srv::new();
    s.set("a", "1");
    assert_eq!(s.unique("a"), 1);
    s.add("b", "1");
    assert_eq!(s.unique("b"), 2);
    s.replace("a", "2");
    assert_eq!(s.unique("a"), 3);
    s.append("a", "x");
    assert_eq!(s.unique("a"), 4);
    s.prepend("a", "x");
    assert_eq!(s.unique("a"), 5);
    s.cas("a", 5, "y");
    assert_eq!(s.unique("a"), 6);
}

#[test]
fn s8_failed_stores_do_not_consume_a_unique() {
    let mut s = Srv::new();
    s.set("a", "1");
    assert_eq!(s.add("a", "x"), NOT_STORED);
    assert_eq!(s.replace("b", "x"), NOT_STORED);
    assert_eq!(s.append("b", "x"), NOT_STORED);
    assert_eq!(s.cas("a", 99, "x"), EXISTS);
    assert_eq!(s.cas("b", 1, "x"), NOT_FOUND);
    s.set("c", "1");
    assert_eq!(s.unique("c"), 2);
}

#[test]
fn s8_incr_and_decr_take_a_new_unique() {
    let mut s = Srv::new();
    s.set("n", "10");
    let u = s.unique("n");
    s.incr("n", 1);
    let u2 = s.unique("n");
    assert!(u2 > u);
    s.decr("n", 1);
    assert!(s.unique("n") > u2);
    assert_eq!(s.cas("n", u, "x"), EXISTS);
}

#[test]
fn s8_get_touch_gat_and_gats_keep_the_unique() {
    let mut s = Srv::new();
    s.set("k", "v");
    let u = s.unique("k");
    s.get("k");
    s.touch("k", 100);
    s.gat(false, 100, &["k"]);
    s.gat(true, 100, &["k"]);
    assert_eq!(s.unique("k"), u);
    assert_eq!(s.cas("k", u, "w"), STORED);
}

#[test]
fn s8_an_immediate_flush_consumes_a_unique() {
    let mut s = Srv::new();
    s.set("a", "1"); // 1
    s.flush(None); // consumes 2
    s.set("a", "1");
    assert_eq!(s.unique("a"), 3);
}

#[test]
fn s8_deleting_and_recreating_a_key_gives_a_new_unique() {
    let mut s = Srv::new();
    s.set("k", "v");
    let u = s.unique("k");
    s.delete("k");
    s.set("k", "v");
    assert_ne!(s.unique("k"), u);
    assert_eq!(s.cas("k", u, "w"), EXISTS);
}

// ---- §9 incr/decr --------------------------------------------------------------------

#[test]
fn s9_incr_and_decr_follow_memcached_tests() {
    // t/incrdecr.t
    let mut s = Srv::new();
    s.set("num", "1");
    assert_eq!(s.incr("num", 1), "2\r\n");
    assert_eq!(s.incr("num", 8), "10\r\n");
    assert_eq!(s.decr("num", 1), "9\r\n");
    assert_eq!(s.decr("num", 9), "0\r\n");
    assert_eq!(s.decr("num", 5), "0\r\n");
    s.set("num", "4294967296");
    assert_eq!(s.incr("num", 1), "4294967297\r\n");
    s.set("bigincr", "0");
    assert_eq!(
        s.incr("bigincr", 18_446_744_073_709_551_610),
        "18446744073709551610\r\n"
    );
    s.set("text", "hi");
    assert_eq!(s.incr("text", 1), NON_NUMERIC);
}

#[test]
fn s9_signed_overflow_is_no_special_case() {
    // bug 21: 2^63-1 +1 +1 -1
    let mut s = Srv::new();
    s.set("n", "9223372036854775807");
    assert_eq!(s.incr("n", 1), "9223372036854775808\r\n");
    assert_eq!(s.incr("n", 1), "9223372036854775809\r\n");
    assert_eq!(s.decr("n", 1), "9223372036854775808\r\n");
}

#[test]
fn s9_incr_wraps_at_2_pow_64_and_decr_clamps_at_0() {
    let mut s = Srv::new();
    s.set("n", "18446744073709551615");
    assert_eq!(s.incr("n", 1), "0\r\n");
    assert_eq!(s.get("n"), value("n", 0, &format!("0{}", " ".repeat(19))));
    s.set("m", "2");
    assert_eq!(s.incr("m", u64::MAX), "1\r\n");
    s.set("d", "3");
    assert_eq!(s.decr("d", 4), "0\r\n");
}

#[test]
fn s9_a_shorter_result_is_written_in_place_padded_with_spaces() {
    let mut s = Srv::new();
    s.set("n", "10");
    assert_eq!(s.decr("n", 1), "9\r\n");
    assert_eq!(s.get("n"), "VALUE n 0 2\r\n9 \r\nEND\r\n");
    s.set("m", "1000");
    assert_eq!(s.decr("m", 999), "1\r\n");
    assert_eq!(s.get("m"), "VALUE m 0 4\r\n1   \r\nEND\r\n");
    // The padded value is still numeric and keeps its length while it fits.
    assert_eq!(s.incr("m", 10), "11\r\n");
    assert_eq!(s.get("m"), "VALUE m 0 4\r\n11  \r\nEND\r\n");
}

#[test]
fn s9_a_longer_result_gets_an_item_of_exact_length() {
    let mut s = Srv::new();
    s.set("n", "99");
    assert_eq!(s.incr("n", 1), "100\r\n");
    assert_eq!(s.get("n"), value("n", 0, "100"));
}

#[test]
fn s9_the_value_is_parsed_like_strtoull() {
    let cases: &[(&str, &str)] = &[
        (" 5", "6\r\n"),
        ("\t5", "6\r\n"),
        ("5 x", "6\r\n"),
        ("5 ", "6\r\n"),
        ("+2", "3\r\n"),
        ("-0", "1\r\n"),
        ("00000000000000000000001", "2\r\n"),
        ("-1", NON_NUMERIC),
        ("12abc", NON_NUMERIC),
        ("0x10", NON_NUMERIC),
        ("1.5", NON_NUMERIC),
        ("abc", NON_NUMERIC),
        ("", NON_NUMERIC),
        ("   ", NON_NUMERIC),
        ("18446744073709551616", NON_NUMERIC),
        ("123456789012345678901", NON_NUMERIC),
    ];
    for (stored, reply) in cases {
        let mut s = Srv::new();
        s.set("n", stored);
        assert_eq!(s.incr("n", 1), *reply, "incr of {stored:?}");
    }
}

#[test]
fn s9_a_value_after_a_nul_byte_is_ignored() {
    let mut s = Srv::new();
    s.st(StoreVerb::Set, b"n", 0, 0, b"7\0junk");
    assert_eq!(s.incr("n", 1), "8\r\n");
}

#[test]
fn s9_a_chunked_item_is_non_numeric() {
    let mut s = Srv::new();
    // A numeric value whose item exceeds slab_chunk_max (512 KiB).
    let mut digits = vec![b'0'; 600_000];
    *digits.last_mut().unwrap() = b'1';
    s.st(StoreVerb::Set, b"n", 0, 0, &digits);
    assert_eq!(s.incr("n", 1), NON_NUMERIC);
    // Just below the chunk limit it is a number.
    let small = vec![b'0'; 524_288 - 60];
    s.st(StoreVerb::Set, b"m", 0, 0, &small);
    assert_eq!(s.incr("m", 1), "1\r\n");
}

#[test]
fn s9_incr_on_a_missing_key_is_not_found_and_creates_nothing() {
    let mut s = Srv::new();
    assert_eq!(s.incr("n", 1), NOT_FOUND);
    assert_eq!(s.decr("n", 1), NOT_FOUND);
    assert_eq!(s.get("n"), END);
}

#[test]
fn s9_incr_keeps_flags_and_exptime() {
    let mut s = Srv::new();
    s.st(StoreVerb::Set, b"n", 42, 5, b"99");
    assert_eq!(s.incr("n", 1), "100\r\n");
    assert_eq!(s.decr("n", 1), "99\r\n");
    assert_eq!(s.get("n"), "VALUE n 42 3\r\n99 \r\nEND\r\n");
    s.at(5_000);
    assert_eq!(s.get("n"), END);
}

// ---- §10 delete, §11 touch -----------------------------------------------------------

#[test]
fn s10_delete_answers_deleted_or_not_found() {
    let mut s = Srv::new();
    s.set("k", "v");
    assert_eq!(s.delete("k"), "DELETED\r\n");
    assert_eq!(s.delete("k"), NOT_FOUND);
    assert_eq!(s.get("k"), END);
}

#[test]
fn s11_touch_changes_only_the_expiry() {
    // t/touch.t: set with TTL 2, touch 10, still there after 2 s.
    let mut s = Srv::new();
    s.st(StoreVerb::Set, b"k", 3, 2, b"v");
    let u = s.unique("k");
    assert_eq!(s.touch("k", 10), "TOUCHED\r\n");
    s.at(2_000);
    assert_eq!(s.get("k"), value("k", 3, "v"));
    assert_eq!(s.unique("k"), u);
    assert_eq!(s.touch("k", 1), "TOUCHED\r\n"); // can shorten too
    s.at(3_000);
    assert_eq!(s.get("k"), END);
    assert_eq!(s.touch("k", 10), NOT_FOUND);
}

#[test]
fn s11_touch_with_a_negative_or_past_time_kills_the_item_but_answers_touched() {
    let mut s = Srv::new();
    s.set("a", "v");
    s.set("b", "v");
    assert_eq!(s.touch("a", -1), "TOUCHED\r\n");
    assert_eq!(s.get("a"), END);
    assert_eq!(s.touch("b", T0_S - 5), "TOUCHED\r\n");
    assert_eq!(s.get("b"), END);
}

// ---- §12 flush_all -------------------------------------------------------------------

#[test]
fn s12_an_immediate_flush_removes_every_item_but_not_later_ones_of_the_same_second() {
    let mut s = Srv::new();
    s.at(500);
    s.set("a", "1");
    s.set_exp("b", 100, "2");
    assert_eq!(s.flush(None), "OK\r\n");
    assert_eq!(s.get_keys(false, &[b"a", b"b"]), END);
    s.set("c", "3");
    assert_eq!(s.get("c"), value("c", 0, "3"));
    s.at(999);
    assert_eq!(s.get("c"), value("c", 0, "3"));
    s.at(5_000);
    assert_eq!(s.get("c"), value("c", 0, "3"));
}

#[test]
fn s12_flush_all_0_and_negative_delays_flush_now() {
    for delay in [Some(0), Some(-5)] {
        let mut s = Srv::new();
        s.set("a", "1");
        assert_eq!(s.flush(delay), "OK\r\n");
        assert_eq!(s.get("a"), END);
    }
}

#[test]
fn s12_a_delayed_flush_hides_items_updated_before_its_last_second() {
    // oldest_live = realtime(delay) - 1, in force once current_time reaches it: a
    // `flush_all 2` hides, from the next second on, every item last updated up to then,
    // including items stored after the command.
    let mut s = Srv::new();
    s.set("a", "1");
    assert_eq!(s.flush(Some(2)), "OK\r\n");
    assert_eq!(s.get("a"), value("a", 0, "1"));
    s.at(500);
    s.set("b", "2"); // after the command, before the deadline
    s.at(999);
    assert_eq!(
        s.get_keys(false, &[b"a", b"b"]),
        "VALUE a 0 1\r\n1\r\nVALUE b 0 1\r\n2\r\nEND\r\n"
    );
    s.at(1_000);
    assert_eq!(s.get_keys(false, &[b"a", b"b"]), END);
    s.at(1_500);
    assert_eq!(s.set("c", "3"), STORED); // updated in the flush's own second: hidden
    assert_eq!(s.get("c"), END);
    s.at(2_000);
    s.set("d", "4");
    assert_eq!(s.get("d"), value("d", 0, "4"));
}

#[test]
fn s12_flush_all_1_also_hides_items_stored_later_in_the_same_second() {
    let mut s = Srv::new();
    s.at(200);
    s.set("a", "1");
    s.flush(Some(1));
    assert_eq!(s.get("a"), END);
    s.set("b", "2");
    assert_eq!(s.get("b"), END);
    s.at(1_000);
    s.set("c", "3");
    assert_eq!(s.get("c"), value("c", 0, "3"));
}

#[test]
fn s12_a_flush_a_day_away_removes_nothing_now() {
    let mut s = Srv::new();
    s.set("a", "1");
    s.flush(Some(86_400));
    s.at(86_398_999);
    assert_eq!(s.get("a"), value("a", 0, "1"));
    s.at(86_399_000);
    assert_eq!(s.get("a"), END);
}

#[test]
fn s12_a_delayed_flush_can_be_an_absolute_time() {
    let mut s = Srv::new();
    s.set("a", "1");
    s.flush(Some(T0_S + 3));
    s.at(1_999);
    assert_eq!(s.get("a"), value("a", 0, "1"));
    s.at(2_000);
    assert_eq!(s.get("a"), END);
}

#[test]
fn s12_a_later_flush_all_overrides_a_pending_one() {
    let mut s = Srv::new();
    s.set("a", "1");
    s.flush(Some(10));
    s.flush(Some(100));
    s.at(10_000);
    assert_eq!(s.get("a"), value("a", 0, "1"));
    s.at(99_000);
    assert_eq!(s.get("a"), END);
}

#[test]
fn s12_a_flush_to_a_time_before_the_process_started_cancels_flushing() {
    // realtime() gives rel time 1, so oldest_live becomes 0: "no flush".
    let mut s = Srv::new();
    s.set("a", "1");
    s.flush(Some(100));
    s.flush(Some(2_592_001));
    s.at(200_000);
    assert_eq!(s.get("a"), value("a", 0, "1"));
}

#[test]
fn s12_flushed_items_are_reaped_lazily_so_a_later_delayed_flush_brings_back_untouched_ones() {
    // Observed on memcached 1.6.18: set r; flush_all; flush_all 86400; get r → the value.
    let mut s = Srv::new();
    s.set("r", "v");
    s.set("touched", "v");
    s.flush(None);
    assert_eq!(s.get("touched"), END); // reaped here, for good
    s.flush(Some(86_400));
    assert_eq!(s.get("r"), value("r", 0, "v"));
    assert_eq!(s.get("touched"), END);
}

// ---- §15 memory limit, LRU, -M, persistence -------------------------------------------

/// memcached's geometry scaled down: 360-byte pages and chunks of at most 360 bytes, so
/// the classes are 96, 120, 152, 192, 240 and 360 bytes (3, 3, 2, 1, 1, 1 per page).
/// `segmented` is the LRU maintainer (memcached's default); off is `-o no_lru_maintainer`.
fn small(segmented: bool) -> Geometry {
    Geometry {
        page_size: 360,
        slab_chunk_max: 360,
        lru_maintainer: segmented,
        slab_automove: 0,
        ..Geometry::default()
    }
}

/// Each `set` of a 1-byte key with a 40-byte value takes 48 + 2 + 42 + 8 = 100 bytes: a
/// 120-byte chunk, three to a page. `pages` pages of memory, `-o no_lru_maintainer`.
fn lru_config(pages: usize, evict: bool) -> StoreConfig {
    StoreConfig {
        memory_limit: Some(pages * 360),
        evict,
        geometry: small(false),
        ..StoreConfig::default()
    }
}

fn v40() -> String {
    "v".repeat(40)
}

#[test]
fn s15_a_full_class_evicts_its_least_recently_used_item() {
    for segmented in [false, true] {
        let mut s = Srv::with(StoreConfig {
            geometry: small(segmented),
            ..lru_config(1, true)
        });
        for k in ["a", "b", "c"] {
            assert_eq!(s.set(k, &v40()), STORED);
        }
        assert_eq!(s.store.used_bytes(), 300);
        assert_eq!(s.set("d", &v40()), STORED);
        assert_eq!(s.get("a"), END, "segmented: {segmented}");
        let evicted = s.store.take_evicted();
        assert_eq!(evicted.len(), 1);
        assert_eq!(
            (&evicted[0].key[..], evicted[0].class.chunk),
            (&b"a"[..], 120)
        );
        assert_eq!(
            s.store.live_keys(s.now),
            vec![b"b".to_vec(), b"c".to_vec(), b"d".to_vec()]
        );
    }
}

#[test]
fn s15_a_class_without_a_page_gets_one_above_the_limit_and_evicts_only_its_own() {
    let mut s = Srv::with(lru_config(1, true));
    for k in ["a", "b", "c"] {
        s.set(k, &v40());
    }
    // A 312-byte item: the 360-byte class has no page yet, so it gets one (do_slabs_newslab
    // refuses only a class that already has pages).
    let big = "x".repeat(250);
    assert_eq!(s.set("big", &big), STORED);
    assert!(evicted_keys(&mut s.store).is_empty());
    // Its class is full now (one chunk per page): the next one evicts from that class
    // alone, however old a, b and c are.
    assert_eq!(s.set("big2", &big), STORED);
    assert_eq!(evicted_keys(&mut s.store), vec![b"big".to_vec()]);
    for k in ["a", "b", "c"] {
        assert_eq!(s.get(k), value(k, 0, &v40()));
    }
    let report = s.store.memory_report(s.now).unwrap();
    let pages: Vec<(usize, usize)> = report
        .classes
        .iter()
        .map(|c| (c.class.chunk, c.total_pages))
        .collect();
    assert_eq!(pages, vec![(120, 1), (360, 1)]);
    assert_eq!(report.total_malloced, 720);
}

#[test]
fn s15_without_the_maintainer_a_hit_moves_an_item_at_most_once_a_minute() {
    // -o no_lru_maintainer: do_item_update relinks only an item older than 60 s.
    let mut s = Srv::with(lru_config(1, true));
    for k in ["a", "b", "c"] {
        s.set(k, &v40());
    }
    s.get("a");
    s.touch("a", 0);
    s.set("d", &v40()); // a was not moved: evicted
    assert_eq!(evicted_keys(&mut s.store), vec![b"a".to_vec()]);
    s.at(61_000);
    s.get("b"); // older than a minute: to the head
    s.set("e", &v40());
    assert_eq!(evicted_keys(&mut s.store), vec![b"c".to_vec()]);
    // (A 61-byte item: another class, so the allocation evicts nothing here.)
    assert_eq!(s.add("d", "x"), NOT_STORED); // older than a minute: d to the head
    s.set("f", &v40()); // b is the oldest now
    assert_eq!(evicted_keys(&mut s.store), vec![b"b".to_vec()]);
    assert_eq!(
        s.store.live_keys(s.now),
        vec![b"d".to_vec(), b"e".to_vec(), b"f".to_vec()]
    );
}

#[test]
fn s15_with_the_segmented_lru_two_hits_protect_an_item() {
    // The segmented LRU (memcached's default): a second hit marks an item active; an
    // active COLD item moves to WARM, out of the eviction's reach.
    let mut s = Srv::with(StoreConfig {
        geometry: small(true),
        ..lru_config(1, true)
    });
    for k in ["a", "b", "c"] {
        s.set(k, &v40());
    }
    s.get("a");
    s.set("d", &v40()); // one hit is not enough: a goes
    assert_eq!(evicted_keys(&mut s.store), vec![b"a".to_vec()]);
    s.get("b");
    s.get("b");
    s.set("e", &v40()); // b moved to WARM: c goes
    assert_eq!(evicted_keys(&mut s.store), vec![b"c".to_vec()]);
    s.set("f", &v40());
    assert_eq!(evicted_keys(&mut s.store), vec![b"d".to_vec()]);
    assert_eq!(s.get("b"), value("b", 0, &v40()));
    let report = s.store.memory_report(s.now).unwrap();
    assert_eq!(report.classes[0].number, [0, 1, 2]);
    assert_eq!(report.classes[0].stats.moves_to_warm, 1);
    assert_eq!(report.classes[0].stats.evicted, 3);
    assert_eq!(report.classes[0].stats.evicted_unfetched, 2);
}

#[test]
fn s15_a_storage_command_allocates_before_it_looks_so_a_failing_add_can_evict() {
    // process_update_command allocates the command's item before do_store_item looks
    // the key up: in a full class even an `add` that ends NOT_STORED evicts.
    let mut s = Srv::with(lru_config(1, true));
    for k in ["a", "b", "c"] {
        s.set(k, &v40());
    }
    assert_eq!(s.add("c", &v40()), NOT_STORED);
    assert_eq!(evicted_keys(&mut s.store), vec![b"a".to_vec()]);
    // And the evicted item may be the very key being replaced.
    s.set("a", &v40()); // the freed chunk; b is the oldest
    assert_eq!(s.replace("b", &v40()), NOT_STORED);
    assert_eq!(evicted_keys(&mut s.store), vec![b"b".to_vec()]);
}

#[test]
fn s15_expired_items_at_the_tail_are_reclaimed_before_live_ones_are_evicted() {
    let mut s = Srv::with(lru_config(1, true));
    s.set_exp("a", 1, &v40());
    s.set("b", &v40());
    s.set_exp("c", 1, &v40());
    s.at(2_000);
    assert_eq!(s.set("d", &v40()), STORED); // a, expired, at the tail: reclaimed
    assert!(evicted_keys(&mut s.store).is_empty());
    // c expired too, but b (live) is at the tail: lru_pull_tail evicts b and stops; the
    // next round of do_item_alloc_pull reclaims c from the tail before it allocates.
    assert_eq!(s.set("e", &v40()), STORED);
    assert_eq!(evicted_keys(&mut s.store), vec![b"b".to_vec()]);
    assert_eq!(s.store.item_count(), 2);
    let report = s.store.memory_report(s.now).unwrap();
    assert_eq!(report.classes[0].stats.reclaimed, 2);
    assert_eq!(report.classes[0].stats.expired_unfetched, 2);
    assert_eq!(report.classes[0].free_chunks, 1);
}

#[test]
fn s15_with_eviction_off_a_full_store_answers_out_of_memory() {
    // t/dash-M.t: the store fails, every stored item stays readable.
    let mut s = Srv::with(lru_config(1, false));
    for k in ["a", "b", "c"] {
        assert_eq!(s.set(k, &v40()), STORED);
    }
    assert_eq!(s.set("d", &v40()), OOM_STORING);
    assert_eq!(s.add("d", &v40()), OOM_STORING);
    for k in ["a", "b", "c"] {
        assert_eq!(s.get(k), value(k, 0, &v40()));
    }
    assert!(evicted_keys(&mut s.store).is_empty());
    // A failed set deletes the old value (the allocation fails before the lookup).
    assert_eq!(s.set("a", &"w".repeat(41)), OOM_STORING);
    assert_eq!(s.get("a"), END);
    // Room again.
    assert_eq!(s.set("d", &v40()), STORED);
    let report = s.store.memory_report(s.now).unwrap();
    assert_eq!(report.classes[0].stats.outofmemory, 3);
}

#[test]
fn s15_with_eviction_off_expired_items_are_still_reclaimed() {
    let mut s = Srv::with(lru_config(1, false));
    s.set_exp("a", 1, &v40());
    s.set("b", &v40());
    s.set("c", &v40());
    s.at(2_000);
    assert_eq!(s.set("d", &v40()), STORED);
}

#[test]
fn s15_an_incr_that_must_grow_in_a_full_store_is_out_of_memory() {
    let mut s = Srv::with(lru_config(1, false));
    s.set("n", "9"); // 61 bytes: the 96-byte class, three to a page
    s.set("m", "99");
    s.set("o", "9");
    assert_eq!(s.incr("n", 1), "SERVER_ERROR out of memory\r\n");
    assert_eq!(s.get("n"), value("n", 0, "9"));
    assert_eq!(s.decr("m", 90), "9\r\n"); // in place, no allocation
}

#[test]
fn s15_an_append_needs_room_for_the_combined_item() {
    let mut s = Srv::with(lru_config(1, false));
    s.set("p", &"p".repeat(80)); // 140 bytes: the 152-byte class, two to a page
    s.set("q", &"q".repeat(80));
    s.set("a", &v40());
    // The command's item (100 bytes) fits its class; the combined one (140 bytes) does
    // not: its class is full and the limit is reached.
    assert_eq!(s.append("a", &"x".repeat(40)), NOT_STORED);
    assert_eq!(s.get("a"), value("a", 0, &v40()));
    assert_eq!(s.append("a", "x"), STORED); // 101 bytes: its own class has room
}

#[test]
fn persistent_stores_never_evict_and_survive_a_restart() {
    let mut s = Srv::with(StoreConfig {
        persistent: true,
        ..lru_config(1, true)
    });
    for k in ["a", "b", "c"] {
        assert_eq!(s.set(k, &v40()), STORED);
    }
    s.set_exp("t", 5, "x");
    let u = s.unique("c");
    s.at(1_000);
    s.store.restart(s.now);
    assert_eq!(s.get("a"), value("a", 0, &v40()));
    assert_eq!(s.unique("c"), u);
    // The cas counter survives too: new uniques stay distinct.
    s.set("d", "1");
    assert!(s.unique("d") > u);
    // An expiry set before the restart still holds.
    assert_eq!(s.get("t"), value("t", 0, "x"));
    s.at(5_000);
    assert_eq!(s.get("t"), END);
}

#[test]
fn a_volatile_restart_loses_everything_and_restarts_the_cas_counter() {
    let mut s = Srv::new();
    s.set("a", "1");
    s.set("b", "2");
    let ub = s.unique("b");
    s.at(10_000);
    s.store.restart(s.now);
    assert_eq!(s.get_keys(false, &[b"a", b"b"]), END);
    assert!(s.store.live_keys(s.now).is_empty());
    s.set("x", "1");
    s.set("b", "new");
    // The unique read before the restart matches the new item: an ABA a structure
    // relying on cas across restarts must survive.
    assert_eq!(s.unique("b"), ub);
    assert_eq!(s.cas("b", ub, "swapped"), STORED);
}

#[test]
fn forced_eviction_removes_a_live_item() {
    let mut s = Srv::new();
    s.set("a", "1");
    s.set_exp("b", 1, "2");
    assert!(s.store.evict(b"a"));
    assert!(!s.store.evict(b"a"));
    assert_eq!(s.get("a"), END);
    s.at(1_000);
    assert!(!s.store.evict_at(s.now, b"b"));
    assert!(
        evicted_keys(&mut s.store).is_empty(),
        "forced evictions are the caller's to report"
    );
}

#[test]
fn next_expiry_is_the_next_death_of_a_live_item() {
    let mut s = Srv::new();
    assert_eq!(s.store.next_expiry_ms(s.now), None);
    s.set("forever", "v");
    assert_eq!(s.store.next_expiry_ms(s.now), None);
    s.at(300);
    s.set_exp("a", 5, "v");
    s.set_exp("b", 2, "v");
    s.set_exp("dead", -1, "v");
    assert_eq!(s.store.next_expiry_ms(s.now), Some(T0 + 2_000));
    s.at(2_000);
    assert_eq!(s.store.next_expiry_ms(s.now), Some(T0 + 5_000));
    s.flush(Some(3)); // items die at the deadline
    assert_eq!(s.store.next_expiry_ms(s.now), Some(T0 + 4_000));
    s.at(5_000);
    assert_eq!(s.store.next_expiry_ms(s.now), None);
}

#[test]
fn live_keys_are_sorted_and_exclude_dead_items() {
    let mut s = Srv::new();
    s.set("b", "1");
    s.set("a", "1");
    s.set_exp("c", 1, "1");
    s.set_exp("d", -1, "1");
    assert_eq!(
        s.store.live_keys(s.now),
        vec![b"a".to_vec(), b"b".to_vec(), b"c".to_vec()]
    );
    assert_eq!(
        s.store.live_keys(T0 + 1_000),
        vec![b"a".to_vec(), b"b".to_vec()]
    );
}

#[test]
fn noreply_commands_still_return_their_reply_to_the_caller() {
    let mut s = Srv::new();
    let reply = s.reply(Command::Store {
        verb: StoreVerb::Add,
        key: b"k".to_vec(),
        flags: 0,
        exptime: 0,
        data: b"v".to_vec(),
        noreply: true,
    });
    assert_eq!(reply, Reply::Stored);
    let reply = s.reply(Command::Arith {
        verb: ArithVerb::Incr,
        key: b"k".to_vec(),
        delta: 1,
        noreply: true,
    });
    assert_eq!(reply, Reply::ClientError(ClientError::NonNumeric));
}

#[test]
fn the_same_commands_give_the_same_store() {
    let run = || {
        let mut s = Srv::with(lru_config(4, true));
        for i in 0..50u64 {
            s.at(i * 137);
            let k = format!("k{}", i % 7);
            match i % 5 {
                0 => s.set_exp(&k, (i % 3) as i64, &v40()),
                1 => s.get(&k),
                2 => s.incr(&k, i),
                3 => s.append(&k, "x"),
                _ => s.touch(&k, 2),
            };
        }
        s.store
    };
    let (a, b) = (run(), run());
    assert_eq!(a, b);
    use std::hash::{BuildHasher, BuildHasherDefault};
    let h = BuildHasherDefault::<std::collections::hash_map::DefaultHasher>::default();
    assert_eq!(h.hash_one(&a), h.hash_one(&b));
}

#[test]
fn a_session_recorded_on_memcached_1_6_18_replays_byte_for_byte() {
    // Recorded against Debian's memcached 1.6.18 (fresh process, all within two seconds):
    // flush_all 1 hides items of its own second and consumes a unique, decr pads and
    // takes a unique, touch keeps it, append keeps the old flags and exptime.
    let mut s = Srv::new();
    s.at(520);
    assert_eq!(s.set("a", "v"), STORED);
    assert_eq!(s.flush(Some(1)), "OK\r\n");
    assert_eq!(s.get("a"), END);
    assert_eq!(s.set("b", "v"), STORED);
    assert_eq!(s.get("b"), END);
    s.at(1_621);
    assert_eq!(s.set("c", "v"), STORED);
    assert_eq!(s.get("c"), "VALUE c 0 1\r\nv\r\nEND\r\n");
    assert_eq!(s.set("n", "10"), STORED);
    assert_eq!(s.gets("n"), "VALUE n 0 2 5\r\n10\r\nEND\r\n");
    assert_eq!(s.decr("n", 1), "9\r\n");
    assert_eq!(s.gets("n"), "VALUE n 0 2 6\r\n9 \r\nEND\r\n");
    assert_eq!(s.touch("n", 100), "TOUCHED\r\n");
    assert_eq!(s.gets("n"), "VALUE n 0 2 6\r\n9 \r\nEND\r\n");
    assert_eq!(s.st(StoreVerb::Set, b"f", 7, 0, b"a"), STORED);
    assert_eq!(s.st(StoreVerb::Append, b"f", 9, -1, b"b"), STORED);
    assert_eq!(s.get("f"), "VALUE f 7 2\r\nab\r\nEND\r\n");
    assert_eq!(s.flush(None), "OK\r\n");
    assert_eq!(s.set("k", "v"), STORED);
    assert_eq!(s.gets("k"), "VALUE k 0 1 10\r\nv\r\nEND\r\n");
}

#[test]
fn s11_touch_and_gat_with_a_large_negative_time_expire_the_item() {
    // Observed on 1.6.18: a negative exptime never wraps into "far future".
    let mut s = Srv::new();
    s.set("k", "v");
    s.set("g", "v");
    assert_eq!(s.touch("k", -1_000_000), "TOUCHED\r\n");
    assert_eq!(s.get("k"), END);
    assert_eq!(s.gat(false, -1_000_000, &["g"]), value("g", 0, "v"));
    assert_eq!(s.get("g"), END);
}

/// The keys the store evicted since the last call.
fn evicted_keys(store: &mut kvsim::store::Store) -> Vec<Vec<u8>> {
    store.take_evicted().into_iter().map(|e| e.key).collect()
}
