//! The meta commands on the store, where the differential test cannot go: virtual time
//! (TTLs counting down, last access times, the once-a-minute refresh of an item's time),
//! the typed `Kv` methods built on them (the stampede-free lease, incr-or-create,
//! invalidation), the simulator's traces, and the wire codec both ways.

use kvsim::command::{
    Command, MetaCommand, MetaFlag, MetaReply, MetaRet, MetaStatus, MetaVerb, Reply,
};
use kvsim::store::memstore::MemStore;
use kvsim::store::{Store, StoreConfig};
use kvsim::wire::{command_bytes, ReplyParser, Request, RequestParser};
use kvsim::{block_on_ready, Kv, Lease};

/// A whole unix second.
const T0: u64 = 1_700_000_000_000;

struct Srv {
    store: Store,
    now: u64,
}

impl Srv {
    fn new() -> Srv {
        Srv {
            store: Store::new(StoreConfig::default(), T0),
            now: T0,
        }
    }

    fn at(&mut self, secs: u64) -> &mut Srv {
        self.now = T0 + secs * 1000;
        self
    }

    /// Runs request text (`\r\n` added after each line) as `kvsim serve` would, and
    /// returns what goes on the wire.
    fn run(&mut self, text: &str) -> String {
        let mut parser = RequestParser::default();
        parser.feed(text.replace('|', "\r\n").as_bytes());
        parser.feed(b"\r\n");
        let mut out = Vec::new();
        while let Some(request) = parser.next_request() {
            match &request {
                Request::Command(command) => {
                    let reply = self.store.apply(self.now, command);
                    if reply.is_sent(command) {
                        reply.encode(&mut out);
                    }
                }
                other => {
                    if let Request::Answer {
                        effect: Some(effect),
                        ..
                    } = other
                    {
                        self.store.apply(self.now, effect);
                    }
                    other.encode_own_reply(&mut out);
                }
            }
        }
        String::from_utf8_lossy(&out).replace("\r\n", "|")
    }
}

#[test]
fn ttl_and_last_access_count_in_virtual_seconds() {
    let mut s = Srv::new();
    assert_eq!(s.run("ms k 1 T100|x"), "HD|");
    assert_eq!(s.at(30).run("mg k t l h"), "HD t70 l30 h0|");
    // The hit above marked it fetched, but left its time: memcached refreshes an item's
    // time at most once a minute.
    assert_eq!(s.at(50).run("mg k t l h"), "HD t50 l50 h1|");
    // At 61 s the item is older than a minute: this access refreshes it (after `l` was
    // reported, as the bump comes after the reply).
    assert_eq!(s.at(61).run("mg k l"), "HD l61|");
    assert_eq!(s.at(62).run("mg k l"), "HD l1|");
    assert_eq!(
        s.at(63).run("me k"),
        "ME k exp=-37 la=2 cas=1 fetch=yes cls=1 size=61|"
    );
    // `u` neither bumps nor refreshes; `T` before `t` reports the new TTL.
    assert_eq!(s.at(200).run("mg k"), "EN|");
    assert_eq!(s.at(200).run("ms k 1|x"), "HD|");
    assert_eq!(s.at(300).run("mg k u l h T10 t"), "HD l100 h0 t10|");
    assert_eq!(s.at(301).run("mg k t T20 h"), "HD t9 h0|");
    assert_eq!(s.at(302).run("mg k t h"), "HD t19 h1|");
    assert_eq!(s.at(322).run("mg k t"), "EN|");
}

#[test]
fn a_recache_win_goes_to_one_client_before_the_item_expires() {
    let mut s = Srv::new();
    s.run("ms k 1 T100|x");
    assert_eq!(s.at(10).run("mg k R30 v"), "VA 1|x|");
    assert_eq!(s.at(75).run("mg k R30 v"), "VA 1 W|x|");
    assert_eq!(s.at(76).run("mg k R30 v"), "VA 1 Z|x|");
    // A new value clears the win token.
    assert_eq!(s.at(77).run("ms k 1 T100|y"), "HD|");
    assert_eq!(s.at(78).run("mg k R30 v"), "VA 1|y|");
}

#[test]
fn invalidation_serves_stale_while_one_client_recomputes() {
    let mut s = Srv::new();
    assert_eq!(s.run("ms k 2 T1000 c|v1"), "HD c1|");
    assert_eq!(s.run("md k I T30"), "HD|");
    assert_eq!(s.run("mg k v c t"), "VA 2 c2 t30 X W|v1|");
    assert_eq!(s.run("mg k v c"), "VA 2 c2 Z X|v1|");
    // The winner's store with the unique it saw: fresh again.
    assert_eq!(s.run("ms k 2 C2 I T1000 c|v2"), "HD c3|");
    assert_eq!(s.run("mg k v"), "VA 2|v2|");
    // Invalidated again while a winner recomputed: its older unique stores the value,
    // marked stale, keeping the stale item's TTL, and the next reader wins again.
    assert_eq!(s.run("md k I T30"), "HD|");
    assert_eq!(s.run("mg k c"), "HD c4 X W|");
    assert_eq!(s.run("md k I T40"), "HD|");
    assert_eq!(s.run("ms k 2 C4 I T1000|v3"), "HD|");
    assert_eq!(s.run("mg k v t c"), "VA 2 t40 c6 X W|v3|");
    // A newer unique than the item's is refused.
    assert_eq!(s.run("ms k 2 C99 I|v4"), "EX|");
}

#[test]
fn meta_and_classic_commands_share_items_and_uniques() {
    let mut s = Srv::new();
    assert_eq!(s.run("set k 5 0 1|x"), "STORED|");
    assert_eq!(s.run("mg k v f c"), "VA 1 f5 c1|x|");
    assert_eq!(s.run("ms k 1 F7 c|y"), "HD c2|");
    assert_eq!(s.run("gets k"), "VALUE k 7 1 2|y|END|");
    assert_eq!(
        s.run("ma k v c"),
        "CLIENT_ERROR cannot increment or decrement non-numeric value|"
    );
    assert_eq!(s.run("set n 0 0 2|10"), "STORED|");
    assert_eq!(s.run("ma n MD v c"), "VA 1 c4|9|");
    assert_eq!(s.run("get n"), "VALUE n 0 2|9 |END|");
    assert_eq!(s.run("incr n 1"), "10|");
    assert_eq!(s.run("flush_all"), "OK|");
    assert_eq!(s.run("mg n v"), "EN|");
    s.store.check_invariants().unwrap();
}

#[test]
fn a_growing_increment_makes_a_new_item_and_its_ttl_goes_to_the_old_one() {
    let mut s = Srv::new();
    assert_eq!(s.run("ma n N0 J9 v"), "VA 1|9|");
    assert_eq!(s.run("ma n T100 t v"), "VA 2 t100|10|");
    assert_eq!(s.run("mg n t"), "HD t-1|");
    assert_eq!(s.run("ma n T100 t v"), "VA 2 t100|11|");
    assert_eq!(s.run("mg n t"), "HD t100|");
}

#[test]
fn quiet_mode_hides_only_the_nominal_replies() {
    let mut s = Srv::new();
    assert_eq!(s.run("mg k q|mn"), "MN|");
    assert_eq!(s.run("ms k 1 q|x|mn"), "MN|");
    // 1.6.18 answers an mg hit even in quiet mode.
    assert_eq!(s.run("mg k q v|mn"), "VA 1|x|MN|");
    assert_eq!(s.run("md k q|md k q|mn"), "NF|MN|");
    // ma answers the item its N created, even in quiet mode.
    assert_eq!(s.run("ma n q N0|ma n q|mn"), "HD|MN|");
    assert_eq!(
        s.run("ms k 2 q|abcd|mn"),
        "CLIENT_ERROR bad data chunk|ERROR|MN|"
    );
}

#[test]
fn base64_keys_are_decoded_and_returned_as_stored() {
    let mut s = Srv::new();
    assert_eq!(s.run("ms AAH/ 1 b k|x"), "HD kAAH/ b|");
    assert_eq!(
        s.run("me AAH/ b"),
        "ME AAH/ exp=-1 la=0 cas=1 fetch=no cls=1 size=63|"
    );
    assert_eq!(s.run("mg YWJj b N0 k"), "HD kabc W|");
    assert_eq!(s.run("mg YWJj b k"), "HD kabc Z|");
    assert_eq!(s.run("mg a b"), "CLIENT_ERROR error decoding key|");
}

#[test]
fn commands_built_by_hand_are_answered_as_their_wire_form() {
    let mut s = Srv::new();
    let now = s.now;
    let bad = MetaCommand::get(b"k", vec![MetaFlag::ReturnValue, MetaFlag::ReturnValue]);
    assert_eq!(
        s.store.apply(now, &Command::Meta(bad.clone())).to_string(),
        "CLIENT_ERROR duplicate flag"
    );
    assert_eq!(
        s.run(
            std::str::from_utf8(&command_bytes(&Command::Meta(bad)))
                .unwrap()
                .trim_end()
        ),
        "CLIENT_ERROR duplicate flag|"
    );
    let mode = MetaCommand::set(b"k", b"x", vec![MetaFlag::Mode(b'Q')]);
    assert_eq!(
        s.store.apply(now, &Command::Meta(mode)).to_string(),
        "CLIENT_ERROR invalid mode for ms M token"
    );
    let many = MetaCommand::get(b"k", vec![MetaFlag::Vivify(0); 18]);
    assert_eq!(
        s.store.apply(now, &Command::Meta(many)).to_string(),
        "CLIENT_ERROR options flags are too long"
    );
}

#[test]
fn the_typed_methods_follow_the_stampede_recipe() {
    let mem = MemStore::new(StoreConfig::default());
    let a = mem.client(0);
    let b = mem.client(1);
    block_on_ready(async {
        // The first reader wins, the second waits.
        assert_eq!(
            a.get_with_lease(b"page", 30).await.unwrap(),
            Lease::Win {
                cas: 1,
                stale: None
            }
        );
        assert_eq!(b.get_with_lease(b"page", 30).await.unwrap(), Lease::Wait);
        assert!(a
            .set_invalidate(b"page", b"<html>", 0, 1)
            .await
            .unwrap()
            .is_stored());
        assert_eq!(
            b.get_with_lease(b"page", 30).await.unwrap(),
            Lease::Hit(b"<html>".to_vec())
        );
        // A change upstream marks it stale: one reader recomputes, the others serve it.
        assert!(b.invalidate(b"page", 30).await.unwrap());
        let Lease::Win { cas, stale } = b.get_with_lease(b"page", 30).await.unwrap() else {
            panic!("the first reader after an invalidation wins")
        };
        assert_eq!(stale.as_deref(), Some(&b"<html>"[..]));
        assert_eq!(
            a.get_with_lease(b"page", 30).await.unwrap(),
            Lease::Stale(b"<html>".to_vec())
        );
        assert!(b
            .set_invalidate(b"page", b"<html2>", 0, cas)
            .await
            .unwrap()
            .is_stored());
        assert_eq!(
            a.get_with_lease(b"page", 30).await.unwrap(),
            Lease::Hit(b"<html2>".to_vec())
        );
        assert!(!a.invalidate(b"nothing", 30).await.unwrap());
        // incr_or_create: created with the initial value (the delta is not applied to a
        // counter this call created), then incremented.
        assert_eq!(a.incr_or_create(b"hits", 5, 100, 0).await.unwrap(), 100);
        assert_eq!(b.incr_or_create(b"hits", 5, 100, 0).await.unwrap(), 105);
        assert_eq!(a.get(b"hits").await.unwrap(), Some(b"105".to_vec()));
        // A meta reply through the generic call.
        let reply = a
            .meta(MetaCommand::get(b"hits", vec![MetaFlag::ReturnSize]))
            .await
            .unwrap();
        assert_eq!(reply.flags, vec![MetaRet::Size(3)]);
        // Errors are errors.
        let err = a.incr_or_create(b"page", 1, 0, 0).await.unwrap_err();
        assert!(err.is_refusal(), "{err}");
    });
}

#[test]
fn meta_commands_and_replies_read_well_in_traces() {
    let get = Command::Meta(MetaCommand::get(
        b"key",
        vec![
            MetaFlag::ReturnValue,
            MetaFlag::ReturnCas,
            MetaFlag::ReturnTtl,
        ],
    ));
    assert_eq!(get.to_string(), "mg key v c t");
    let reply = Reply::Meta(MetaReply {
        status: MetaStatus::Va,
        flags: vec![MetaRet::Cas(5), MetaRet::Ttl(-1)],
        value: Some(b"xy".to_vec()),
        quiet: false,
    });
    assert_eq!(reply.to_string(), "VA 2 c5 t-1 \"xy\"");
    let set = Command::Meta(MetaCommand::set(
        b"k",
        b"v",
        vec![
            MetaFlag::Ttl(100),
            MetaFlag::CompareCas(3),
            MetaFlag::Invalidate,
        ],
    ));
    assert_eq!(set.to_string(), "ms k \"v\" T100 C3 I");
    assert_eq!(
        Command::Meta(MetaCommand::new(MetaVerb::Noop, b"")).to_string(),
        "mn"
    );
    assert_eq!(
        Reply::Meta(MetaReply::status(MetaStatus::En)).to_string(),
        "EN"
    );
}

#[test]
fn the_codec_reads_back_what_it_writes() {
    let commands = [
        MetaCommand::get(
            b"\x00\xff",
            vec![
                MetaFlag::Base64Key,
                MetaFlag::ReturnKey,
                MetaFlag::Opaque(b"op".to_vec()),
                MetaFlag::Vivify(-1),
                MetaFlag::Hint {
                    letter: b'P',
                    text: b"x/y".to_vec(),
                },
            ],
        ),
        MetaCommand::set(
            b"k",
            b"a\r\nb",
            vec![
                MetaFlag::Mode(b'A'),
                MetaFlag::ClientFlags(7),
                MetaFlag::CompareCas(u64::MAX),
                MetaFlag::Quiet,
            ],
        ),
        MetaCommand::arith(
            b"n",
            vec![
                MetaFlag::Initial(3),
                MetaFlag::Delta(4),
                MetaFlag::Mode(b'-'),
                MetaFlag::Ttl(100),
            ],
        ),
        MetaCommand::delete(b"k", vec![MetaFlag::Invalidate, MetaFlag::NoBump]),
        MetaCommand {
            flags: vec![MetaFlag::Base64Key],
            ..MetaCommand::new(MetaVerb::Debug, b"\x01")
        },
        MetaCommand::new(MetaVerb::Noop, b""),
    ];
    for m in commands {
        let command = Command::Meta(m);
        command.validate().unwrap();
        let mut parser = RequestParser::default();
        parser.feed(&command_bytes(&command));
        assert_eq!(
            parser.next_request(),
            Some(Request::Command(command.clone()))
        );
        assert_eq!(parser.next_request(), None);
    }
    let replies = [
        Reply::Meta(MetaReply {
            status: MetaStatus::Va,
            flags: vec![
                MetaRet::Cas(1),
                MetaRet::Flags(2),
                MetaRet::Hit(true),
                MetaRet::Key {
                    key: b"\x00 \xff".to_vec(),
                    base64: true,
                },
                MetaRet::LastAccess(4),
                MetaRet::Opaque(b"o".to_vec()),
                MetaRet::Size(2),
                MetaRet::Ttl(-1),
                MetaRet::AlreadyWon,
                MetaRet::Stale,
                MetaRet::Win,
            ],
            value: Some(b"\r\n".to_vec()),
            quiet: false,
        }),
        Reply::Meta(MetaReply::status(MetaStatus::Mn)),
        Reply::Meta(MetaReply {
            status: MetaStatus::Ex,
            flags: vec![MetaRet::Key {
                key: b"k".to_vec(),
                base64: false,
            }],
            value: None,
            quiet: false,
        }),
        Reply::MetaDebug(kvsim::command::MetaDebug {
            key: b"k".to_vec(),
            exp: -5,
            la: 3,
            cas: 9,
            fetched: true,
            class: 1,
            size: 61,
        }),
        Reply::ClientError(kvsim::command::ClientError::InvalidOrDuplicateFlag),
        Reply::ServerError(kvsim::command::ServerError::OutOfMemoryAllocating),
    ];
    let mut bytes = Vec::new();
    for r in &replies {
        r.encode(&mut bytes);
    }
    let mut parser = ReplyParser::new();
    let mut got = Vec::new();
    for b in bytes {
        parser.feed(&[b]);
        while let Some(r) = parser.next_reply().unwrap() {
            got.push(r);
        }
    }
    assert_eq!(got, replies);
}

#[test]
fn bad_meta_commands_are_refused_before_sending() {
    let long_opaque = MetaCommand::get(b"k", vec![MetaFlag::Opaque(vec![b'o'; 32])]);
    assert!(Command::Meta(long_opaque).validate().is_err());
    let spaced = MetaCommand::get(b"k", vec![MetaFlag::Opaque(b"a b".to_vec())]);
    assert!(Command::Meta(spaced).validate().is_err());
    // 186 bytes are 248 in base64; 187 would be 252.
    let binary_ok = MetaCommand::get(&[b' '; 186], vec![MetaFlag::Base64Key]);
    assert!(Command::Meta(binary_ok).validate().is_ok());
    let binary_long = MetaCommand::get(&[b' '; 187], vec![MetaFlag::Base64Key]);
    assert!(Command::Meta(binary_long).validate().is_err());
    let most = MetaCommand::get(b"k", vec![MetaFlag::ReturnCas; 17]);
    assert!(Command::Meta(most).validate().is_ok());
    let many = MetaCommand::get(b"k", vec![MetaFlag::ReturnCas; 18]);
    assert_eq!(
        Command::Meta(many).validate().unwrap_err().to_string(),
        "mg takes at most 17 flags, found 18"
    );
}
