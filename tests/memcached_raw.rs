//! Raw byte exchanges of the reference's wire edge cases (`memcached-semantics.md` §1–3,
//! 13, 14), pinned: each case's reply bytes are checked against a real memcached 1.6.18
//! and against `kvsim serve`, each case on a fresh server.

use kvsim::net::MemcachedProcess;
use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::Duration;

const SENTINEL: &[u8] = b"version\r\n";
const SENTINEL_REPLY: &[u8] = b"VERSION 1.6.18\r\n";

/// One exchange: `input` is sent in one write; the server either answers `expected` and
/// then the reply to a trailing `version` (appended unless `closes`), or answers
/// `expected` and closes the connection.
struct Case {
    name: &'static str,
    input: Vec<u8>,
    expected: Vec<u8>,
    closes: bool,
}

fn case(name: &'static str, input: impl AsRef<[u8]>, expected: impl AsRef<[u8]>) -> Case {
    Case {
        name,
        input: input.as_ref().to_vec(),
        expected: expected.as_ref().to_vec(),
        closes: false,
    }
}

fn closing(name: &'static str, input: impl AsRef<[u8]>, expected: impl AsRef<[u8]>) -> Case {
    Case {
        closes: true,
        ..case(name, input, expected)
    }
}

fn cat(parts: &[&[u8]]) -> Vec<u8> {
    parts.concat()
}

fn cases() -> Vec<Case> {
    let long_key = "k".repeat(251);
    let key250 = "k".repeat(250);
    let big_ok = vec![b'x'; 1_048_516];
    let big_flagged_ok = vec![b'x'; 1_048_512];
    let too_big = vec![b'x'; 1_048_517];
    let thirty_keys: Vec<String> = (0..30).map(|i| format!("k{i}")).collect();
    let thirty_sets: String = thirty_keys
        .iter()
        .map(|k| format!("set {k} 0 0 1 noreply\r\nv\r\n"))
        .collect();
    let thirty_values: String = thirty_keys
        .iter()
        .map(|k| format!("VALUE {k} 0 1\r\nv\r\n"))
        .collect();
    vec![
        // §1 line handling and the tokenizer
        case("tab is not a separator", "get\tk\r\n", "ERROR\r\n"),
        case(
            "bare newline ends a line",
            "set k 0 0 1\na\r\nget k\n",
            "STORED\r\nVALUE k 0 1\r\na\r\nEND\r\n",
        ),
        case(
            "NUL ends the command",
            b"set k 0 0 1\r\na\r\nget k\0 junk\r\n",
            "STORED\r\nVALUE k 0 1\r\na\r\nEND\r\n",
        ),
        case(
            "runs of spaces collapse",
            "  set   k  0 0   1  \r\na\r\n get  k \r\n",
            "STORED\r\nVALUE k 0 1\r\na\r\nEND\r\n",
        ),
        case(
            "empty and one-byte lines",
            "\r\n\n \r\ng\r\nGET k\r\n",
            "ERROR\r\nERROR\r\nERROR\r\nERROR\r\nERROR\r\n",
        ),
        case(
            "commands are case-sensitive and need their arity",
            "SET k 0 0 1\r\nget\r\nincr k\r\ntouch k\r\nflush_all 1 2 3\r\nverbosity\r\ngat 5\r\n",
            "ERROR\r\nERROR\r\nERROR\r\nERROR\r\nERROR\r\nERROR\r\nEND\r\n",
        ),
        case(
            "arity error leaves the data block to be read as a command",
            "set k 0 0 1 noreply extra\r\na\r\ncas k 0 0 1\r\nb\r\n",
            "ERROR\r\nERROR\r\nERROR\r\nERROR\r\n",
        ),
        case(
            "24 tokens: any other command fails its arity, a multi-get goes on",
            format!(
                "{thirty_sets}delete {}\r\nget {}\r\n",
                thirty_keys.join(" "),
                thirty_keys.join(" ")
            ),
            format!("ERROR\r\n{thirty_values}END\r\n"),
        ),
        case(
            "pipelined commands are answered in order",
            "set a 0 0 1\r\n1\r\nincr a 5\r\nget a b a\r\ndelete a\r\ndelete a\r\n",
            "STORED\r\n6\r\nVALUE a 0 1\r\n6\r\nVALUE a 0 1\r\n6\r\nEND\r\nDELETED\r\nNOT_FOUND\r\n",
        ),
        case(
            "bget is get",
            "set k 0 0 1\r\na\r\nbget k\r\n",
            "STORED\r\nVALUE k 0 1\r\na\r\nEND\r\n",
        ),
        closing("GET with HTTP/ closes", "GET / HTTP/1.1\r\n", ""),
        closing(
            "an unknown command ending in HTTP/ closes after the replies already sent",
            "get a\r\ndelete a\r\nxyz /x HTTP/1.0\r\nget b\r\n",
            "END\r\n",
        ),
        closing(
            "an over-long line drops the unsent replies",
            cat(&[b"get a\r\ndelete a\r\nset ", &[b'x'; 3000]]),
            "END\r\n",
        ),
        case(
            "HTTP/ after a known first letter is only ERROR",
            "stuff HTTP/1.1\r\nget / HTTP/1.1\r\n",
            "ERROR\r\nEND\r\n",
        ),
        closing(
            "a line over 2048 bytes without newline closes",
            cat(&[b"set ", &[b'x'; 3000]]),
            "",
        ),
        case(
            "a long line with its newline is read",
            format!("get {}\r\n", vec!["nokey"; 700].join(" ")),
            "END\r\n",
        ),
        closing("quit closes after the replies", "get a\r\nquit\r\nget b\r\n", "END\r\n"),
        case("version", "version ignored words\r\n", "VERSION 1.6.18\r\n"),
        case(
            "verbosity",
            "verbosity 1\r\nverbosity x\r\nverbosity 1 noreply\r\nverbosity noreply\r\n",
            "OK\r\nCLIENT_ERROR bad command line format\r\n",
        ),
        // §2 keys
        case(
            "control and high bytes are key bytes",
            b"set a\x01\x7f\xffb 0 0 1\r\nx\r\nget a\x01\x7f\xffb\r\n",
            b"STORED\r\nVALUE a\x01\x7f\xffb 0 1\r\nx\r\nEND\r\n",
        ),
        case(
            "250-byte keys work, 251 do not (and the data is read as a command)",
            format!("set {key250} 0 0 1\r\nx\r\nset {long_key} 0 0 1\r\nx\r\nget {key250}\r\n"),
            format!(
                "STORED\r\nCLIENT_ERROR bad command line format\r\nERROR\r\nVALUE {key250} 0 1\r\nx\r\nEND\r\n"
            ),
        ),
        case(
            "a long key in a multi-get wipes the whole reply and every unsent one before it",
            format!("set a 0 0 1\r\n1\r\nget a {long_key} a\r\nget a\r\n"),
            "CLIENT_ERROR bad command line format\r\nVALUE a 0 1\r\n1\r\nEND\r\n",
        ),
        case(
            "a retrieval sends its reply at once, so a later cull spares it",
            format!("set a 0 0 1\r\n1\r\nget x\r\ndelete y\r\nget a {long_key}\r\n"),
            "STORED\r\nEND\r\nCLIENT_ERROR bad command line format\r\n",
        ),
        case(
            "the cull spares the batches of 21 (then 20) commands already sent",
            format!("{}get {long_key}\r\n", "delete z\r\n".repeat(45)),
            format!("{}CLIENT_ERROR bad command line format\r\n", "NOT_FOUND\r\n".repeat(41)),
        ),
        case(
            "gat before a long key still touches the keys before it",
            format!("set a 0 0 1\r\n1\r\nget x\r\ngat -1 a {long_key}\r\nget a\r\n"),
            "STORED\r\nEND\r\nCLIENT_ERROR bad command line format\r\nEND\r\n",
        ),
        case(
            "a key with a space: the rest is the flags",
            "set a b 0 0 1\r\nx\r\n",
            "CLIENT_ERROR bad command line format\r\nERROR\r\n",
        ),
        case(
            "long keys elsewhere",
            format!(
                "touch {long_key} 1\r\nincr {long_key} 1\r\ndelete {long_key}\r\ndelete {long_key} noreply\r\n"
            ),
            "CLIENT_ERROR bad command line format\r\nCLIENT_ERROR bad command line format\r\nCLIENT_ERROR bad command line format\r\n",
        ),
        // §3 storage command lines and data blocks
        case(
            "a bad command line does not swallow the data block",
            "set k x 0 5\r\nget k\r\n",
            "CLIENT_ERROR bad command line format\r\nEND\r\n",
        ),
        case(
            "bad numbers",
            "set k 0 x 1\r\nset k 0 0 -1\r\nset k 0 0 4294967295\r\nset k 0 0 2147483647\r\nset k -1 0 1\r\ncas k 0 0 1 -1\r\ncas k 0 0 1 x\r\n",
            "CLIENT_ERROR bad command line format\r\n".repeat(7),
        ),
        case(
            "bad data chunk, then the leftover is a command",
            "set k 0 0 1\r\nab\r\nget k\r\nset k 0 0 1\r\nab\r\n",
            "CLIENT_ERROR bad data chunk\r\nERROR\r\nEND\r\nCLIENT_ERROR bad data chunk\r\nERROR\r\n",
        ),
        case(
            "a short data block swallows the next line",
            "set k 0 0 9\r\nab\r\nget k\r\nget k\r\n",
            "STORED\r\nVALUE k 0 9\r\nab\r\nget k\r\nEND\r\n",
        ),
        case(
            "zero-length values",
            "set k 0 0 0\r\n\r\nget k\r\n",
            "STORED\r\nVALUE k 0 0\r\n\r\nEND\r\n",
        ),
        case(
            "32-bit truncation of flags, bytes and exptime",
            "set k 4294967297 4294967296 4294967297\r\na\r\nget k\r\nset e 0 2147483648 1\r\na\r\nget e\r\n",
            "STORED\r\nVALUE k 1 1\r\na\r\nEND\r\nSTORED\r\nEND\r\n",
        ),
        case(
            "strtoul quirks: whitespace, plus, minus zero, text after a tab",
            "set k +5 -0 \t1\r\na\r\nget k\r\nset j 7\tjunk 0 1\r\nb\r\nget j\r\n",
            "STORED\r\nVALUE k 5 1\r\na\r\nEND\r\nSTORED\r\nVALUE j 7 1\r\nb\r\nEND\r\n",
        ),
        case(
            "the largest values that fit",
            cat(&[
                b"set k 0 0 1048516\r\n",
                &big_ok,
                b"\r\nset f 1 0 1048512\r\n",
                &big_flagged_ok,
                b"\r\nset g 1 0 1048513\r\n",
                &big_flagged_ok,
                b"x\r\n",
            ]),
            "STORED\r\nSTORED\r\nSERVER_ERROR object too large for cache\r\n",
        ),
        case(
            "too large: swallowed, and a set deletes the old value, an add does not",
            cat(&[
                b"set k 0 0 1\r\na\r\nset k 0 0 1048517\r\n",
                &too_big,
                b"\r\nget k\r\nset j 0 0 1\r\nb\r\nadd j 0 0 1048517\r\n",
                &too_big,
                b"\r\nget j\r\n",
            ]),
            "STORED\r\nSERVER_ERROR object too large for cache\r\nEND\r\nSTORED\r\nSERVER_ERROR object too large for cache\r\nVALUE j 0 1\r\nb\r\nEND\r\n",
        ),
        case(
            "too large: the swallowed block need not end in CRLF",
            cat(&[b"set k 0 0 1048517\r\n", &too_big, b"XYget k\r\n"]),
            "SERVER_ERROR object too large for cache\r\nEND\r\n",
        ),
        // §13 noreply
        case(
            "noreply suppresses errors too",
            cat(&[
                b"set k x 0 1 noreply\r\nset n 0 0 2 noreply\r\nhi\r\nincr n 1 noreply\r\nincr n x noreply\r\nset k 0 0 1 noreply\r\nab\r\nset b 0 0 1048517 noreply\r\n",
                &too_big,
                b"\r\ntouch k x noreply\r\nflush_all x noreply\r\nget n\r\n",
            ]),
            "ERROR\r\nVALUE n 0 2\r\nhi\r\nEND\r\n",
        ),
        case(
            "noreply on every storage command, checked by a get",
            "set a 0 0 1 noreply\r\n1\r\nadd a 0 0 1 noreply\r\n2\r\nreplace a 0 0 1 noreply\r\n3\r\nappend a 0 0 1 noreply\r\n4\r\nprepend a 0 0 1 noreply\r\n5\r\nincr a 1 noreply\r\ndecr a 2 noreply\r\ntouch a 0 noreply\r\nget a\r\n",
            "VALUE a 0 3\r\n533\r\nEND\r\n",
        ),
        case(
            "noreply is a key for get, and norepl is just a word",
            "get noreply\r\nset k 0 0 1 norepl\r\nx\r\n",
            "END\r\nSTORED\r\n",
        ),
        case(
            "arity errors are not suppressed",
            "set k 0 0 noreply\r\nincr k 1 2 noreply\r\n",
            "ERROR\r\n",
        ),
        // §10 delete, the legacy form
        case(
            "delete with a hold time of 0, and the usage error",
            "set k 0 0 1\r\na\r\ndelete k 10\r\ndelete k 10 noreply\r\nget k\r\ndelete k 0\r\nset k 0 0 1\r\na\r\ndelete k 0 noreply\r\ndelete k noreply\r\ndelete k\r\ndelete k 0 noreply x\r\n",
            "STORED\r\nCLIENT_ERROR bad command line format.  Usage: delete <key> [noreply]\r\nVALUE k 0 1\r\na\r\nEND\r\nDELETED\r\nSTORED\r\nNOT_FOUND\r\nERROR\r\n",
        ),
        // §14 the other error strings
        case(
            "touch, gat and incr errors",
            "touch k x\r\ngat x k\r\ngats 1x k\r\nincr k x\r\nincr k -1\r\ndecr k 18446744073709551616\r\nset n 0 0 2\r\nab\r\nincr n 1\r\nincr n 1 bogus\r\n",
            "CLIENT_ERROR invalid exptime argument\r\nCLIENT_ERROR invalid exptime argument\r\nCLIENT_ERROR invalid exptime argument\r\nCLIENT_ERROR invalid numeric delta argument\r\nCLIENT_ERROR invalid numeric delta argument\r\nCLIENT_ERROR invalid numeric delta argument\r\nSTORED\r\nCLIENT_ERROR cannot increment or decrement non-numeric value\r\nCLIENT_ERROR cannot increment or decrement non-numeric value\r\n",
        ),
        case(
            "flush_all forms",
            "flush_all\r\nflush_all 0\r\nflush_all noreply\r\nflush_all 0 noreply\r\nflush_all x\r\nflush_all noreply 5\r\nflush_all -1\r\n",
            "OK\r\nOK\r\nCLIENT_ERROR invalid exptime argument\r\nCLIENT_ERROR invalid exptime argument\r\nOK\r\n",
        ),
        case(
            "incr pads in place, decr clamps, incr wraps",
            "set n 0 0 2\r\n10\r\ndecr n 1\r\nget n\r\ndecr n 100\r\nset m 0 0 20\r\n18446744073709551615\r\nincr m 1\r\nget m\r\n",
            "STORED\r\n9\r\nVALUE n 0 2\r\n9 \r\nEND\r\n0\r\nSTORED\r\n0\r\nVALUE m 0 20\r\n0                   \r\nEND\r\n",
        ),
        case(
            "cas outcomes",
            "cas k 0 0 1 1\r\na\r\nset k 0 0 1\r\na\r\ncas k 0 0 1 0\r\nb\r\ncas k 0 0 1 99\r\nb\r\nget k\r\n",
            "NOT_FOUND\r\nSTORED\r\nEXISTS\r\nEXISTS\r\nVALUE k 0 1\r\na\r\nEND\r\n",
        ),
    ]
}

/// Sends `input` (plus the sentinel unless the case closes) and collects the reply bytes.
fn exchange(addr: &str, case: &Case) -> (Vec<u8>, bool) {
    let mut stream = TcpStream::connect(addr).expect("connect");
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    let mut input = case.input.clone();
    if !case.closes {
        input.extend_from_slice(SENTINEL);
    }
    // A server that closes early may reset the connection while we write: fine.
    let _ = stream.write_all(&input);
    let mut out = Vec::new();
    let mut buf = [0u8; 65536];
    loop {
        if !case.closes && out.ends_with(SENTINEL_REPLY) {
            out.truncate(out.len() - SENTINEL_REPLY.len());
            return (out, false);
        }
        match stream.read(&mut buf) {
            Ok(0) => return (out, true),
            Ok(n) => out.extend_from_slice(&buf[..n]),
            Err(e) if e.kind() == std::io::ErrorKind::ConnectionReset => return (out, true),
            Err(e) => panic!("{}: reading: {e} after {:?}", case.name, show(&out)),
        }
    }
}

fn show(bytes: &[u8]) -> String {
    kvsim::command::show_bytes(bytes).replace("\\x0d\\x0a", "\\r\\n\n")
}

/// Runs every case against servers made by `server`, and lists the mismatches.
fn check_all<S>(label: &str, server: impl Fn() -> (S, String)) {
    let mut failures = Vec::new();
    for case in cases() {
        let (_guard, addr) = server();
        let (got, closed) = exchange(&addr, &case);
        if got != case.expected || closed != case.closes {
            failures.push(format!(
                "{label}: {}\n  expected (closes: {}):\n{}\n  got (closed: {closed}):\n{}",
                case.name,
                case.closes,
                show(&case.expected),
                show(&got)
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

#[test]
fn real_memcached_answers_the_edge_cases_as_pinned() {
    if MemcachedProcess::for_test("memcached_raw", &[]).is_none() {
        return;
    }
    check_all("memcached 1.6.18", || {
        let mc = MemcachedProcess::spawn(&[]).expect("memcached");
        let addr = mc.addr();
        (mc, addr)
    });
}

#[test]
fn kvsim_serve_answers_the_edge_cases_as_pinned() {
    use kvsim::net::{ServeConfig, Server};
    check_all("kvsim serve", || {
        let server = Server::start(ServeConfig {
            listen: "127.0.0.1:0".parse().unwrap(),
            ..ServeConfig::default()
        })
        .expect("kvsim serve");
        let addr = server.local_addr().to_string();
        (server, addr)
    });
}
