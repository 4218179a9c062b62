//! One server connection's byte-level behaviour: requests in, replies out, and *when*
//! replies leave, as memcached 1.6.18's connection state machine decides it.
//!
//! When replies are sent is observable: memcached culls the replies it has not sent yet
//! when a multi-get meets an over-long key, and drops them when it closes a connection for
//! an `HTTP/` line or an over-long line. It sends what it has after each successful
//! retrieval (`get`, `gets`, `gat`, `gats` switch to writing at once; so does `mn`, while
//! `mg` does not), after every 21
//! commands of one read (then every 20: its `reqs_per_event` yield), when the bytes read
//! are used up while it waits for a command line (not in the middle of a data block, whose
//! replies wait for its end, and are dropped if the client leaves first), and before
//! closing on `quit`. It reads a data block exactly to its end before reading further
//! ([`Connection::wants`]). [`Connection`] reproduces that, so `kvsim serve` answers
//! pipelined, fragmented and half-closed input byte for byte as memcached does (given the
//! same read boundaries).

use super::request::{Counted, Request, RequestParser, StatsGroup};
use crate::command::{Command, MetaVerb, Reply};

/// What a connection serves: the store's commands, and the server's own `stats`
/// ([`Connection::serve`]; [`Connection::serve_read`] serves a bare store, whose `stats`
/// groups are empty).
pub trait Service {
    /// Applies one store command.
    fn apply(&mut self, command: &Command) -> Reply;

    /// The `STAT name value` lines of `stats [group]`, in order.
    fn stats(&mut self, group: StatsGroup) -> Vec<(String, String)> {
        let _ = group;
        Vec::new()
    }

    /// Counts a request the protocol layer answered on its own ([`Counted`]).
    fn count(&mut self, counted: Counted) {
        let _ = counted;
    }

    /// Applies a command for its effect only, without counting it as a command of its
    /// own (the unlink of a too-large `set`).
    fn apply_uncounted(&mut self, command: &Command) -> Reply {
        self.apply(command)
    }

    /// Called before replies are written: a service that holds a lock across a read's
    /// commands lets it go here (a write may wait on a slow peer).
    fn release(&mut self) {}
}

/// A bare store's service: its commands through a closure, no counters.
struct Commands<F>(F);

impl<F: FnMut(&Command) -> Reply> Service for Commands<F> {
    fn apply(&mut self, command: &Command) -> Reply {
        (self.0)(command)
    }
}

/// How many commands memcached runs for one read event before it yields (its
/// `reqs_per_event` of 20, plus the one the event starts with).
pub const FIRST_BATCH: usize = 21;

/// How many it runs per event after a yield.
pub const LATER_BATCH: usize = 20;

/// Pending reply bytes past which a multi-key retrieval writes them out before its next
/// key (memcached streams a multi-get's values from the items themselves).
pub const STREAM_BYTES: usize = 256 << 10;

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
    /// With deferred writes: how much of `unsent` memcached would have written already
    /// (the flush points passed during this read); a cull or a close keeps these bytes.
    committed: usize,
    deferred: bool,
}

impl Connection {
    /// A connection for a server whose item size limit is `item_size_max`.
    pub fn new(item_size_max: usize) -> Self {
        Connection {
            parser: RequestParser::new(item_size_max),
            unsent: Vec::new(),
            committed: 0,
            deferred: false,
        }
    }

    /// Writes a read's replies once, when its complete requests have all been served,
    /// instead of at each of memcached's flush points; the bytes that leave are the same
    /// (what memcached would have sent by a flush point survives a later cull or close,
    /// what it would not have sent is dropped as memcached drops it). Only the moment
    /// changes, so a server turns it on when nothing can happen between two commands of
    /// one read that a client could tell apart (no delays, dropped or held replies, or
    /// turns): one write per read instead of one per retrieval. A peer gone in the
    /// middle of a read is found at that one write, after the read's commands ran.
    pub fn set_deferred_writes(&mut self, deferred: bool) {
        self.deferred = deferred;
    }

    /// Whether the connection is closed (nothing more will be read).
    pub fn is_closed(&self) -> bool {
        self.parser.is_closed()
    }

    /// Handles the bytes of one read: every complete request is run, store commands
    /// through `apply`, and the bytes to write are returned.
    pub fn on_read(&mut self, bytes: &[u8], apply: impl FnMut(&Command) -> Reply) -> Output {
        let mut out = Output::default();
        out.close = self.serve_read(bytes, apply, |b| {
            out.bytes.extend_from_slice(b);
            true
        });
        out
    }

    /// Like [`Connection::on_read`], handing the bytes to `write` as they leave: a
    /// multi-key retrieval looks its keys up one at a time (`apply` sees a one-key `get`
    /// per key, as memcached looks them up) and writes its replies out whenever
    /// [`STREAM_BYTES`] are pending, so a `get` naming a large item a thousand times costs
    /// a few of its copies, not a thousand. `write` returns `false` when the peer is gone;
    /// the result is whether to close the connection.
    pub fn serve_read(
        &mut self,
        bytes: &[u8],
        apply: impl FnMut(&Command) -> Reply,
        write: impl FnMut(&[u8]) -> bool,
    ) -> bool {
        self.serve(bytes, Commands(apply), write)
    }

    /// [`Connection::serve_read`] with a server's own requests (`stats`) answered by
    /// `service`.
    pub fn serve(
        &mut self,
        bytes: &[u8],
        mut service: impl Service,
        mut write: impl FnMut(&[u8]) -> bool,
    ) -> bool {
        self.parser.feed(bytes);
        let mut budget = FIRST_BATCH;
        let mut ran = 0;
        // `send!(n)`: writes the first `n` unsent bytes now (closing if the peer is gone);
        // `flush!()`: one of memcached's flush points, a write unless writes are deferred.
        macro_rules! send {
            ($n:expr) => {{
                let n = $n;
                if n > 0 {
                    service.release();
                    let sent = write(&self.unsent[..n]);
                    self.unsent.drain(..n);
                    self.committed = 0;
                    if !sent {
                        self.unsent.clear();
                        return true;
                    }
                }
            }};
        }
        macro_rules! flush {
            () => {{
                if self.deferred {
                    self.committed = self.unsent.len();
                } else {
                    send!(self.unsent.len());
                }
            }};
        }
        while let Some(request) = self.parser.next_request() {
            match &request {
                Request::Command(command) => match retrieval_keys(command) {
                    Some(_) => {
                        if !self.retrieve(command, &mut service, &mut write) {
                            return true;
                        }
                        flush!();
                    }
                    None => {
                        let reply = service.apply(command);
                        if reply.is_sent(command) {
                            reply.encode(&mut self.unsent);
                        }
                        // `mn` makes memcached write what it holds at once (conn_mwrite).
                        if matches!(command, Command::Meta(m) if m.verb == MetaVerb::Noop) {
                            flush!();
                        }
                    }
                },
                Request::Answer {
                    effect,
                    reply,
                    counted,
                } => {
                    if let Some(counted) = counted {
                        service.count(*counted);
                    }
                    if let Some(effect) = effect {
                        if *counted == Some(Counted::TooLarge) {
                            service.apply_uncounted(effect);
                        } else {
                            service.apply(effect);
                        }
                    }
                    request.encode_own_reply(&mut self.unsent);
                    if matches!(reply, Some(Reply::Values(_))) {
                        flush!();
                    }
                }
                Request::AbortRetrieval { effect } => {
                    for lookup in effect.iter().flat_map(|e| e.lookups().unwrap_or_default()) {
                        service.apply(&lookup);
                    }
                    self.unsent.truncate(self.committed);
                    request.encode_own_reply(&mut self.unsent);
                }
                Request::Version => request.encode_own_reply(&mut self.unsent),
                Request::Stats(StatsGroup::Reset) => {
                    service.stats(StatsGroup::Reset);
                    self.unsent.extend_from_slice(b"RESET\r\n");
                }
                Request::Stats(group) => {
                    for (name, value) in service.stats(*group) {
                        self.unsent.extend_from_slice(b"STAT ");
                        self.unsent.extend_from_slice(name.as_bytes());
                        self.unsent.push(b' ');
                        self.unsent.extend_from_slice(value.as_bytes());
                        self.unsent.extend_from_slice(b"\r\n");
                    }
                    self.unsent.extend_from_slice(b"END\r\n");
                }
                Request::Quit => {
                    send!(self.unsent.len());
                    return true;
                }
                Request::Close => {
                    self.unsent.truncate(self.committed);
                    send!(self.committed);
                    self.unsent.clear();
                    return true;
                }
            }
            ran += 1;
            if ran == budget {
                flush!();
                ran = 0;
                budget = LATER_BATCH;
            }
        }
        // memcached sends what it has when it runs out of input while waiting for a
        // command line; in the middle of a data block (or a swallowed one) it holds its
        // replies until the block is complete, and drops them if the client leaves first
        // (what it had sent by its last flush point is gone already).
        if self.parser.wants().is_none() {
            send!(self.unsent.len());
        } else {
            send!(self.committed);
        }
        false
    }

    /// In the middle of a data block (or of a swallowed one), the bytes it still needs:
    /// the most the server should read next, as memcached reads a value exactly to its
    /// end before it reads anything else. `None` while waiting for a command line.
    pub fn wants(&self) -> Option<usize> {
        self.parser.wants()
    }

    /// Bytes read but not yet used: the start of a command line still incomplete (what
    /// memcached's read buffer holds between reads).
    pub fn buffered(&self) -> usize {
        self.parser.buffered()
    }

    /// Runs a retrieval's one-key lookups (the command itself when it names one key),
    /// encoding their values into `unsent` and writing them out whenever
    /// [`STREAM_BYTES`] are pending, then `END`; `false` when `write` found the peer gone.
    fn retrieve(
        &mut self,
        command: &Command,
        service: &mut impl Service,
        write: &mut impl FnMut(&[u8]) -> bool,
    ) -> bool {
        let lookups = match retrieval_keys(command) {
            Some(1) => None,
            _ => command.lookups(),
        };
        let lookups = lookups.as_deref().unwrap_or(std::slice::from_ref(command));
        for lookup in lookups {
            match service.apply(lookup) {
                Reply::Values(values) => values.iter().for_each(|v| v.encode(&mut self.unsent)),
                // The parser passes only keys a lookup accepts, so this is a store that
                // refuses the command as a whole: its reply is the command's reply.
                other => {
                    other.encode(&mut self.unsent);
                    return true;
                }
            }
            if self.unsent.len() >= STREAM_BYTES {
                service.release();
                let sent = write(&self.unsent);
                self.unsent.clear();
                self.committed = 0;
                if !sent {
                    return false;
                }
            }
        }
        self.unsent.extend_from_slice(b"END\r\n");
        true
    }
}

/// How many keys a retrieval (`get`, `gets`, `gat`, `gats`) names; `None` for any other
/// command (the commands [`Command::lookups`] splits).
fn retrieval_keys(command: &Command) -> Option<usize> {
    match command {
        Command::Get { keys, .. } | Command::Gat { keys, .. } => Some(keys.len()),
        _ => None,
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

    /// A multi-get naming a large item many times is written out as it goes, in pieces
    /// of about [`STREAM_BYTES`], never held whole; the bytes are those of the whole
    /// reply, and each key is looked up on its own.
    #[test]
    fn a_multiget_streams_its_values() {
        let data = vec![b'x'; 100_000];
        let value = crate::command::Value {
            key: b"big".to_vec(),
            flags: 0,
            data: data.clone(),
            cas: None,
        };
        let mut lookups = 0;
        let mut pieces: Vec<usize> = Vec::new();
        let mut bytes = Vec::new();
        let mut c = Connection::new(1 << 20);
        let input = format!("get{}\r\n", " big".repeat(100));
        let close = c.serve_read(
            input.as_bytes(),
            |cmd| {
                assert_eq!(cmd.keys(), vec![&b"big"[..]]);
                lookups += 1;
                Reply::Values(vec![value.clone()])
            },
            |b| {
                pieces.push(b.len());
                bytes.extend_from_slice(b);
                true
            },
        );
        assert!(!close);
        assert_eq!(lookups, 100);
        assert_eq!(bytes, Reply::Values(vec![value; 100]).to_bytes());
        assert!(pieces.len() > 30, "{pieces:?}");
        assert!(
            pieces.iter().all(|&p| p < STREAM_BYTES + 100_100),
            "{pieces:?}"
        );
    }

    /// A peer gone mid-reply ends the retrieval: no more lookups, the connection closes.
    #[test]
    fn a_peer_gone_mid_multiget_stops_it() {
        let value = crate::command::Value {
            key: b"big".to_vec(),
            flags: 0,
            data: vec![b'x'; 100_000],
            cas: None,
        };
        let mut lookups = 0;
        let mut c = Connection::new(1 << 20);
        let input = format!("get{}\r\n", " big".repeat(100));
        let close = c.serve_read(
            input.as_bytes(),
            |_| {
                lookups += 1;
                Reply::Values(vec![value.clone()])
            },
            |_| false,
        );
        assert!(close);
        assert!(lookups < 10, "{lookups} lookups after the peer left");
    }

    /// Replies wait while a data block is incomplete (memcached holds them), and leave
    /// once it is complete; the connection says how much of the block is still to come.
    #[test]
    fn replies_wait_for_an_incomplete_data_block() {
        let mut c = Connection::new(1 << 20);
        let stored = |cmd: &Command| match cmd {
            Command::Store { .. } => Reply::Stored,
            _ => Reply::NotFound,
        };
        assert_eq!(c.wants(), None);
        let out = c.on_read(b"delete a\r\nset b 0 0 5\r\nab", stored);
        assert_eq!(out.bytes, b"");
        assert_eq!(c.wants(), Some(5));
        let out = c.on_read(b"cde\r\n", stored);
        assert_eq!(out.bytes, b"NOT_FOUND\r\nSTORED\r\n");
        assert_eq!(c.wants(), None);
        // A swallowed value holds them likewise, its error included.
        let out = c.on_read(b"delete a\r\nset b 0 0 2000000\r\nab", stored);
        assert_eq!(out.bytes, b"");
        assert_eq!(c.wants(), Some(2_000_000));
    }

    /// Deferred writes send the bytes memcached sends (what a flush point passed
    /// survives a cull, a close drops the rest), in one write per read.
    #[test]
    fn deferred_writes_send_the_same_bytes_once_per_read() {
        let long = "k".repeat(251);
        let found = |cmd: &Command| match cmd {
            Command::Get { keys, .. } => Reply::Values(vec![crate::command::Value {
                key: keys[0].clone(),
                flags: 0,
                data: b"v".to_vec(),
                cas: None,
            }]),
            Command::Store { .. } => Reply::Stored,
            _ => Reply::NotFound,
        };
        let inputs = [
            format!("delete a\r\nget a\r\ndelete b\r\nget a {long}\r\n"),
            format!("{}get a {long}\r\n", "delete z\r\n".repeat(45)),
            "get a\r\ndelete b\r\nGET / HTTP/1.1\r\n".to_string(),
            "get a\r\ndelete b\r\nquit\r\ndelete c\r\n".to_string(),
            "get a b\r\nmn\r\ndelete b\r\nset c 0 0 5\r\nab".to_string(),
        ];
        for input in inputs {
            let (mut now, mut later) = (Connection::new(1 << 20), Connection::new(1 << 20));
            later.set_deferred_writes(true);
            let (mut sent, mut writes) = (Vec::new(), 0);
            let close = later.serve_read(input.as_bytes(), found, |b| {
                writes += 1;
                sent.extend_from_slice(b);
                true
            });
            let out = now.on_read(input.as_bytes(), found);
            assert_eq!((sent, close), (out.bytes, out.close), "{input:?}");
            assert!(writes <= 1, "{writes} writes for {input:?}");
        }
    }
}
