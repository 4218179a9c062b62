//! One server connection's byte-level behaviour: requests in, replies out, and *when*
//! replies leave, as memcached 1.6.18's connection state machine decides it.
//!
//! When replies are sent is observable: memcached culls the replies it has not sent yet
//! when a multi-get meets an over-long key, and drops them when it closes a connection for
//! an `HTTP/` line or an over-long line. It sends what it has after each successful
//! retrieval (`get`, `gets`, `gat`, `gats` switch to writing at once), after every 21
//! commands of one read (then every 20: its `reqs_per_event` yield), when the bytes read
//! are used up, and before closing on `quit`. [`Connection`] reproduces that, so
//! `kvsim serve` answers pipelined input byte for byte as memcached does (given the same
//! read boundaries).

use super::request::{Request, RequestParser};
use crate::command::{Command, Reply};

/// How many commands memcached runs for one read event before it yields (its
/// `reqs_per_event` of 20, plus the one the event starts with).
pub const FIRST_BATCH: usize = 21;

/// How many it runs per event after a yield.
pub const LATER_BATCH: usize = 20;

/// What the server must do after handling a read.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Output {
    /// Bytes to write, in order.
    pub bytes: Vec<u8>,
    /// Close the connection after writing them.
    pub close: bool,
}

/// A connection's parser and its unsent replies.
#[derive(Clone, Debug)]
pub struct Connection {
    parser: RequestParser,
    unsent: Vec<u8>,
}

impl Connection {
    /// A connection for a server whose item size limit is `item_size_max`.
    pub fn new(item_size_max: usize) -> Self {
        Connection {
            parser: RequestParser::new(item_size_max),
            unsent: Vec::new(),
        }
    }

    /// Whether the connection is closed (nothing more will be read).
    pub fn is_closed(&self) -> bool {
        self.parser.is_closed()
    }

    /// Handles the bytes of one read: every complete request is run, store commands
    /// through `apply`, and the bytes to write are returned.
    pub fn on_read(&mut self, bytes: &[u8], mut apply: impl FnMut(&Command) -> Reply) -> Output {
        let mut out = Output::default();
        self.parser.feed(bytes);
        let mut budget = FIRST_BATCH;
        let mut ran = 0;
        while let Some(request) = self.parser.next_request() {
            match &request {
                Request::Command(command) => {
                    let reply = apply(command);
                    if !command.noreply() {
                        reply.encode(&mut self.unsent);
                    }
                    if matches!(reply, Reply::Values(_)) {
                        out.bytes.append(&mut self.unsent);
                    }
                }
                Request::Answer { effect, reply } => {
                    if let Some(effect) = effect {
                        apply(effect);
                    }
                    request.encode_own_reply(&mut self.unsent);
                    if matches!(reply, Some(Reply::Values(_))) {
                        out.bytes.append(&mut self.unsent);
                    }
                }
                Request::AbortRetrieval { effect } => {
                    if let Some(effect) = effect {
                        apply(effect);
                    }
                    self.unsent.clear();
                    request.encode_own_reply(&mut self.unsent);
                }
                Request::Version => request.encode_own_reply(&mut self.unsent),
                Request::Quit => {
                    out.bytes.append(&mut self.unsent);
                    out.close = true;
                    return out;
                }
                Request::Close => {
                    self.unsent.clear();
                    out.close = true;
                    return out;
                }
            }
            ran += 1;
            if ran == budget {
                out.bytes.append(&mut self.unsent);
                ran = 0;
                budget = LATER_BATCH;
            }
        }
        out.bytes.append(&mut self.unsent);
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn not_found(_: &Command) -> Reply {
        Reply::NotFound
    }

    #[test]
    fn a_long_multiget_key_culls_unsent_replies_only() {
        let long = "k".repeat(251);
        let mut c = Connection::new(1 << 20);
        let out = c.on_read(
            format!("delete a\r\nget a {long}\r\n").as_bytes(),
            |cmd| match cmd {
                Command::Get { .. } => Reply::Values(vec![]),
                _ => Reply::NotFound,
            },
        );
        assert_eq!(out.bytes, b"CLIENT_ERROR bad command line format\r\n");
        let out = c.on_read(
            format!("delete a\r\nget x\r\nget a {long}\r\n").as_bytes(),
            |cmd| match cmd {
                Command::Get { .. } => Reply::Values(vec![]),
                _ => Reply::NotFound,
            },
        );
        assert_eq!(
            out.bytes,
            b"NOT_FOUND\r\nEND\r\nCLIENT_ERROR bad command line format\r\n"
        );
    }

    #[test]
    fn batches_of_21_then_20_are_sent_before_a_cull() {
        let long = "k".repeat(251);
        for (n, kept) in [(20, 0), (21, 21), (40, 21), (41, 41), (45, 41)] {
            let mut c = Connection::new(1 << 20);
            let input = format!("{}get a {long}\r\n", "delete z\r\n".repeat(n));
            let out = c.on_read(input.as_bytes(), not_found);
            let count = out.bytes.windows(9).filter(|w| w == b"NOT_FOUND").count();
            assert_eq!(count, kept, "{n} deletes");
        }
    }

    #[test]
    fn http_drops_unsent_replies_and_quit_sends_them() {
        let mut c = Connection::new(1 << 20);
        let out = c.on_read(b"delete a\r\nGET / HTTP/1.1\r\n", not_found);
        assert_eq!(
            out,
            Output {
                bytes: vec![],
                close: true
            }
        );
        assert!(c.is_closed());
        let mut c = Connection::new(1 << 20);
        let out = c.on_read(b"delete a\r\nquit\r\ndelete b\r\n", not_found);
        assert_eq!(
            out,
            Output {
                bytes: b"NOT_FOUND\r\n".to_vec(),
                close: true
            }
        );
    }
}
