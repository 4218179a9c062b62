//! Property tests of the wire codec: every valid command survives encode → server parse,
//! every reply survives encode → client parse (whatever the read boundaries), and
//! arbitrary bytes never make either parser (or a whole server connection) panic.

use kvsim::command::{ArithVerb, ClientError, Command, Reply, ServerError, StoreVerb, Value};
use kvsim::wire::{command_bytes, Connection, ReplyParser, Request, RequestParser};
use proptest::prelude::*;

fn key() -> impl Strategy<Value = Vec<u8>> {
    // Any bytes but space, \r, \n and NUL (which the protocol cannot carry in a key),
    // 1 to 250 of them; control and high bytes included, as memcached accepts them.
    prop::collection::vec(
        // Chosen from the allowed bytes, not filtered: a filter's rejects add up over a
        // long fuzz run (PROPTEST_CASES) until proptest gives up.
        prop::sample::select(
            (1..=255u8)
                .filter(|b| !matches!(b, b' ' | b'\n' | b'\r'))
                .collect::<Vec<u8>>(),
        ),
        1..=250,
    )
    .prop_flat_map(|k| {
        // Mostly short keys, sometimes long ones.
        let short = k.len().min(8);
        prop_oneof![4 => Just(k[..short].to_vec()), 1 => Just(k)]
    })
    // `noreply` as a key is a real ambiguity only where it is the last word of a command
    // that takes noreply; valid clients never send it there (and neither do we).
    .prop_filter("not the noreply word", |k| k != b"noreply")
}

fn data() -> impl Strategy<Value = Vec<u8>> {
    prop::collection::vec(any::<u8>(), 0..64)
}

fn exptime() -> impl Strategy<Value = i64> {
    prop_oneof![Just(0i64), -5i64..5, any::<i32>().prop_map(i64::from)]
}

fn store_verb() -> impl Strategy<Value = StoreVerb> {
    prop_oneof![
        Just(StoreVerb::Set),
        Just(StoreVerb::Add),
        Just(StoreVerb::Replace),
        Just(StoreVerb::Append),
        Just(StoreVerb::Prepend),
    ]
}

fn command() -> impl Strategy<Value = Command> {
    prop_oneof![
        (
            store_verb(),
            key(),
            any::<u32>(),
            exptime(),
            data(),
            any::<bool>()
        )
            .prop_map(
                |(verb, key, flags, exptime, data, noreply)| Command::Store {
                    verb,
                    key,
                    flags,
                    exptime,
                    data,
                    noreply
                }
            ),
        (
            key(),
            any::<u32>(),
            exptime(),
            data(),
            any::<u64>(),
            any::<bool>()
        )
            .prop_map(
                |(key, flags, exptime, data, unique, noreply)| Command::Cas {
                    key,
                    flags,
                    exptime,
                    data,
                    unique,
                    noreply
                }
            ),
        (any::<bool>(), prop::collection::vec(key(), 1..40))
            .prop_map(|(with_cas, keys)| Command::Get { with_cas, keys }),
        (
            any::<bool>(),
            exptime(),
            prop::collection::vec(key(), 1..40)
        )
            .prop_map(|(with_cas, exptime, keys)| Command::Gat {
                with_cas,
                exptime,
                keys
            }),
        (any::<bool>(), key(), any::<u64>(), any::<bool>()).prop_map(
            |(incr, key, delta, noreply)| Command::Arith {
                verb: if incr {
                    ArithVerb::Incr
                } else {
                    ArithVerb::Decr
                },
                key,
                delta,
                noreply
            }
        ),
        (key(), any::<bool>()).prop_map(|(key, noreply)| Command::Delete { key, noreply }),
        (key(), exptime(), any::<bool>()).prop_map(|(key, exptime, noreply)| Command::Touch {
            key,
            exptime,
            noreply
        }),
        (
            prop::option::of(any::<i32>().prop_map(i64::from)),
            any::<bool>()
        )
            .prop_map(|(delay, noreply)| Command::FlushAll { delay, noreply }),
    ]
}

/// A command a correct client can send in pieces: memcached closes the connection when
/// more than 2048 bytes of a command line arrive without its newline, except for
/// `get`/`gets` (so a long `gat` line must arrive in one read).
fn sendable_command() -> impl Strategy<Value = Command> {
    command().prop_filter("command line within 2048 bytes unless get/gets", |c| {
        matches!(c, Command::Get { .. }) || {
            let bytes = command_bytes(c);
            bytes
                .iter()
                .position(|&b| b == b'\n')
                .unwrap_or(bytes.len())
                <= 2048
        }
    })
}

fn value() -> impl Strategy<Value = Value> {
    (key(), any::<u32>(), data(), prop::option::of(any::<u64>())).prop_map(
        |(key, flags, data, cas)| Value {
            key,
            flags,
            data,
            cas,
        },
    )
}

fn reply() -> impl Strategy<Value = Reply> {
    prop_oneof![
        prop::collection::vec(value(), 0..4).prop_map(Reply::Values),
        Just(Reply::Stored),
        Just(Reply::NotStored),
        Just(Reply::Exists),
        Just(Reply::NotFound),
        Just(Reply::Deleted),
        Just(Reply::Touched),
        Just(Reply::Ok),
        Just(Reply::Error),
        any::<u64>().prop_map(Reply::Number),
        Just(Reply::ClientError(ClientError::BadDataChunk)),
        Just(Reply::ClientError(ClientError::BadDeleteUsage)),
        Just(Reply::ClientError(ClientError::NonNumeric)),
        Just(Reply::ServerError(ServerError::ObjectTooLarge)),
        Just(Reply::ServerError(ServerError::OutOfMemoryStoring)),
    ]
}

/// Splits `bytes` at the given cut points and feeds the pieces one by one.
fn chunks(bytes: &[u8], cuts: &[usize]) -> Vec<Vec<u8>> {
    let mut points: Vec<usize> = cuts.iter().map(|c| c % (bytes.len() + 1)).collect();
    points.sort_unstable();
    let mut out = Vec::new();
    let mut last = 0;
    for p in points {
        out.push(bytes[last..p].to_vec());
        last = p;
    }
    out.push(bytes[last..].to_vec());
    out
}

proptest! {
    // PROPTEST_CASES overrides the budget (README: Fuzzing).
    #![proptest_config(ProptestConfig::with_cases(
        std::env::var("PROPTEST_CASES").ok().and_then(|c| c.parse().ok()).unwrap_or(256)
    ))]

    #[test]
    fn commands_round_trip_through_the_server_parser(
        cmds in prop::collection::vec(sendable_command(), 1..6),
        cuts in prop::collection::vec(any::<usize>(), 0..8),
    ) {
        let bytes: Vec<u8> = cmds.iter().flat_map(command_bytes).collect();
        let mut parser = RequestParser::default();
        let mut got = Vec::new();
        for piece in chunks(&bytes, &cuts) {
            parser.feed(&piece);
            while let Some(r) = parser.next_request() {
                got.push(r);
            }
        }
        let want: Vec<Request> = cmds.into_iter().map(Request::Command).collect();
        prop_assert_eq!(got, want);
        prop_assert_eq!(parser.buffered(), 0);
    }

    #[test]
    fn replies_round_trip_through_the_client_parser(
        replies in prop::collection::vec(reply(), 1..6),
        cuts in prop::collection::vec(any::<usize>(), 0..8),
    ) {
        let bytes: Vec<u8> = replies.iter().flat_map(Reply::to_bytes).collect();
        let mut parser = ReplyParser::new();
        let mut got = Vec::new();
        for piece in chunks(&bytes, &cuts) {
            parser.feed(&piece);
            while let Some(r) = parser.next_reply().expect("a valid reply") {
                got.push(r);
            }
        }
        prop_assert_eq!(got, replies);
        prop_assert!(!parser.mid_reply());
    }

    #[test]
    fn arbitrary_bytes_never_panic_the_server_side(
        pieces in prop::collection::vec(
            prop::collection::vec(
                prop_oneof![
                    4 => any::<u8>(),
                    1 => Just(b' '),
                    1 => Just(b'\n'),
                    1 => Just(b'\r'),
                    1 => Just(b'0'),
                ],
                0..300,
            ),
            1..6,
        ),
        prefix in prop_oneof![
            Just(&b""[..]), Just(&b"set k 0 0 "[..]), Just(&b"get "[..]), Just(&b"gat "[..]),
            Just(&b"cas k 1 2 3 "[..]), Just(&b"delete k "[..]), Just(&b"incr k "[..]),
        ],
    ) {
        let mut conn = Connection::new(1024);
        let mut store = kvsim::store::Store::new(
            kvsim::store::StoreConfig { item_size_max: 1024, ..Default::default() },
            1_700_000_000_000,
        );
        let mut parser = RequestParser::new(1024);
        let mut first = true;
        for piece in pieces {
            let piece = if first { [prefix, &piece].concat() } else { piece };
            first = false;
            parser.feed(&piece);
            while parser.next_request().is_some() {}
            let out = conn.on_read(&piece, |c| store.apply(1_700_000_000_000, c));
            if out.close {
                prop_assert!(conn.is_closed());
            }
        }
    }

    #[test]
    fn arbitrary_bytes_never_panic_the_client_side(
        bytes in prop::collection::vec(
            prop_oneof![
                4 => any::<u8>(),
                2 => Just(b'\r'),
                2 => Just(b'\n'),
                1 => Just(b' '),
            ],
            0..400,
        ),
        prefix in prop_oneof![
            Just(&b""[..]), Just(&b"VALUE k 0 3"[..]), Just(&b"VALUE k 1 2 3\r\n"[..]),
            Just(&b"CLIENT_ERROR "[..]), Just(&b"1"[..]),
        ],
    ) {
        let mut parser = ReplyParser::new();
        parser.feed(prefix);
        parser.feed(&bytes);
        // Ok(None), Ok(Some(_)) or Err(_): anything but a panic; stop at the first error.
        while let Ok(Some(_)) = parser.next_reply() {}
    }
}
