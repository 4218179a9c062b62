//! Pipelined, fragmented and half-closed byte streams, differential against a real
//! memcached 1.6.18: each case is sent in pieces (each piece written whole, then the
//! replies read until the server is quiet), then the client half-closes and reads until
//! the server closes. What arrived after each piece, after the half-close, and how the
//! connection ended must be the same from `kvsim serve` as from memcached.
//!
//! This pins when replies leave, not only what they are: memcached holds its replies while
//! a data block (or a swallowed one) is incomplete and drops them if the client leaves
//! first, reads a data block exactly to its end before the next command, and sends what it
//! has when it runs out of input between commands.
//!
//! Without memcached installed the test passes vacuously, unless
//! `KVSIM_REQUIRE_MEMCACHED=1` (as in CI), which makes a missing memcached a failure.

#[path = "differential_support/show.rs"]
mod show;
use kvsim::net::{MemcachedProcess, ServeConfig, Server};
use kvsim::SimRng;
use show::show;
use std::io::{ErrorKind, Read, Write};
use std::net::{Shutdown, TcpStream};
use std::time::Duration;

/// How long the server must stay silent before a piece's replies are taken as complete.
const QUIET: Duration = Duration::from_millis(120);

/// What a client saw: the bytes after each piece, the bytes after its half-close, and how
/// the connection ended.
#[derive(Debug, PartialEq, Eq)]
struct Transcript {
    after_pieces: Vec<String>,
    after_half_close: String,
    end: &'static str,
}

/// Reads until the server is quiet for `quiet`, closes (`EOF`) or resets (`RST`).
fn read_until_quiet(stream: &mut TcpStream, quiet: Duration) -> (Vec<u8>, Option<&'static str>) {
    stream.set_read_timeout(Some(quiet)).unwrap();
    let mut got = Vec::new();
    let mut buf = vec![0u8; 1 << 16];
    loop {
        match stream.read(&mut buf) {
            Ok(0) => return (got, Some("EOF")),
            Ok(n) => got.extend_from_slice(&buf[..n]),
            Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {
                return (got, None)
            }
            Err(e) if e.kind() == ErrorKind::Interrupted => continue,
            Err(_) => return (got, Some("RST")),
        }
    }
}

fn transcript(addr: &str, pieces: &[Vec<u8>]) -> Transcript {
    let mut stream = TcpStream::connect(addr).expect("connect");
    let mut after_pieces = Vec::new();
    for piece in pieces {
        if stream.write_all(piece).is_err() {
            after_pieces.push("(write failed)".to_string());
            continue;
        }
        let (got, end) = read_until_quiet(&mut stream, QUIET);
        after_pieces.push(show(&got));
        if let Some(end) = end {
            return Transcript {
                after_pieces,
                after_half_close: String::new(),
                end,
            };
        }
    }
    let _ = stream.shutdown(Shutdown::Write);
    let (got, end) = read_until_quiet(&mut stream, Duration::from_secs(3));
    Transcript {
        after_pieces,
        after_half_close: show(&got),
        end: end.unwrap_or("still open"),
    }
}

/// A named case: its pieces.
struct Case {
    name: String,
    pieces: Vec<Vec<u8>>,
}

fn case(name: &str, pieces: &[&[u8]]) -> Case {
    Case {
        name: name.to_string(),
        pieces: pieces.iter().map(|p| p.to_vec()).collect(),
    }
}

fn big(n: usize) -> Vec<u8> {
    vec![b'a'; n]
}

/// The hand-written cases: each names the rule it pins. Keys carry the case's number so
/// that cases sharing a server do not meet.
fn fixed_cases() -> Vec<Case> {
    let set20k = [
        &b"delete p5\r\nset p5 0 0 20000\r\n"[..],
        &big(20_000),
        b"\r\n",
    ]
    .concat();
    vec![
        case(
            "replies wait for an incomplete data block and are dropped at the half-close",
            &[b"delete p1\r\nset p1y 0 0 5\r\nab"],
        ),
        case(
            "replies held during a data block leave when it completes",
            &[b"delete p2\r\nset p2y 0 0 5\r\nab", b"cde\r\n"],
        ),
        case(
            "replies leave when the input runs out between commands",
            &[b"delete p3\r\nget p3"],
        ),
        case(
            "a swallowed too-large value holds the replies before it",
            &[b"delete p4\r\nset p4y 0 0 2000000\r\nab"],
        ),
        case(
            "a large value is read to its end, then a bad command answered",
            &[&[&set20k[..], b"bogus\r\n"].concat()],
        ),
        case(
            "a large value is read to its end before an over-long line closes",
            &[&[&set20k[..], &[b'x'; 3000][..]].concat()],
        ),
        case(
            "quit sends what is pending and closes before later commands",
            &[b"set p7 0 0 3\r\nabc\r\nquit\r\nget p7\r\n"],
        ),
        case(
            "a data block in many pieces",
            &[
                b"set p8 0 0 10\r\n",
                b"01234",
                b"56789",
                b"\r",
                b"\nget p8\r\n",
            ],
        ),
        case("a bad data chunk", &[b"set p9 0 0 3\r\nabcd\r\nget p9\r\n"]),
        case(
            "a command line in pieces",
            &[b"ge", b"t p1", b"0 p10b\r", b"\n"],
        ),
        case(
            "noreply stores pipelined with a get in the middle of a value",
            &[
                b"set p11 0 0 2 noreply\r\nab\r\nget p11\r\nset p11 0 0 4 noreply\r\nab",
                b"cd\r\nget p11\r\n",
            ],
        ),
        case(
            "a swallow completed in pieces, then a command",
            &[
                &[&b"set p12 0 0 1048577\r\n"[..], &big(30_000)].concat(),
                &big(1_048_577 - 30_000),
                b"\r\nget p12\r\n",
            ],
        ),
    ]
}

/// Random pipelines of valid commands on the case's own keys, cut into 2 to 5 pieces at
/// random points, half the time cut short (the client leaves mid-stream).
fn random_cases(count: usize) -> Vec<Case> {
    let mut rng = SimRng::new(2026);
    (0..count)
        .map(|n| {
            let mut stream = Vec::new();
            for _ in 0..2 + rng.index(8) {
                let key = format!("r{n}k{}", rng.index(3));
                let len = if rng.chance(0.15) {
                    17_000 + rng.index(4_000)
                } else {
                    rng.index(8)
                };
                let noreply = if rng.chance(0.3) { " noreply" } else { "" };
                match rng.index(6) {
                    0 | 1 => {
                        let verb = ["set", "add", "append"][rng.index(3)];
                        stream.extend_from_slice(
                            format!("{verb} {key} 0 0 {len}{noreply}\r\n").as_bytes(),
                        );
                        stream.extend(std::iter::repeat_n(b'v', len));
                        stream.extend_from_slice(b"\r\n");
                    }
                    2 => stream.extend_from_slice(format!("get {key} {key}\r\n").as_bytes()),
                    3 => stream.extend_from_slice(format!("delete {key}{noreply}\r\n").as_bytes()),
                    4 => stream.extend_from_slice(format!("incr {key} 1{noreply}\r\n").as_bytes()),
                    _ => stream.extend_from_slice(format!("gets {key}\r\n").as_bytes()),
                }
            }
            if rng.chance(0.5) {
                stream.truncate(1 + rng.index(stream.len()));
            }
            let mut cuts: Vec<usize> = (0..1 + rng.index(4))
                .map(|_| 1 + rng.index(stream.len()))
                .collect();
            cuts.sort_unstable();
            cuts.dedup();
            let mut pieces = Vec::new();
            let mut last = 0;
            for cut in cuts.into_iter().chain([stream.len()]) {
                if cut > last {
                    pieces.push(stream[last..cut].to_vec());
                    last = cut;
                }
            }
            Case {
                name: format!("random pipeline {n}"),
                pieces,
            }
        })
        .collect()
}

#[test]
fn pipelined_fragmented_and_half_closed_streams_match_memcached() {
    let Some(memcached) = MemcachedProcess::for_test("memcached_pipelining", &[]) else {
        return;
    };
    let server = Server::start(ServeConfig {
        listen: "127.0.0.1:0".parse().unwrap(),
        ..ServeConfig::default()
    })
    .expect("kvsim serve");
    let (real, ours) = (memcached.addr(), server.local_addr().to_string());
    let cases: Vec<Case> = fixed_cases().into_iter().chain(random_cases(16)).collect();
    // The two servers are asked at once, each case on its own connection.
    let mut mismatches = Vec::new();
    for case in &cases {
        let (want, got) = std::thread::scope(|s| {
            let want = s.spawn(|| transcript(&real, &case.pieces));
            let got = transcript(&ours, &case.pieces);
            (want.join().unwrap(), got)
        });
        if want != got {
            mismatches.push(format!(
                "{}:\n  pieces:    {:?}\n  memcached: {want:?}\n  kvsim:     {got:?}",
                case.name,
                case.pieces.iter().map(|p| show(p)).collect::<Vec<_>>()
            ));
        }
    }
    assert!(
        mismatches.is_empty(),
        "{} of {} cases differ:\n{}",
        mismatches.len(),
        cases.len(),
        mismatches.join("\n")
    );
}
