//! The server side of the text protocol: request bytes in, [`Request`]s out, exactly as
//! memcached 1.6.18's `try_read_command_ascii` / `process_command_ascii` read them.
//!
//! [`RequestParser`] is fed whatever the socket returned and yields requests as soon as
//! they are complete. Protocol-level errors become [`Request::Answer`]s that the parser
//! decides on its own (`ERROR`, `CLIENT_ERROR …`, or nothing when `noreply` swallows
//! the error); everything the store must decide becomes a [`Request::Command`].
//!
//! Quirks reproduced (see `memcached-semantics.md` §1–3, 13, 14):
//! - lines end at `\n`, one `\r` before it is dropped (only if the line has more than one
//!   byte), a NUL ends the line early; the tokenizer splits on spaces only, 24 tokens a pass;
//! - unknown commands, commands shorter than 2 bytes and wrong arity answer `ERROR`, before
//!   `noreply` is looked at (so it is never suppressed);
//! - after a command-line error in a storage command the data block is *not* swallowed: it
//!   is read as the next command line (usually another `ERROR`);
//! - a data block not followed by `\r\n` is `CLIENT_ERROR bad data chunk`, and the bytes
//!   after `<bytes>+2` are read as the next command;
//! - a value too large for an item is answered `SERVER_ERROR object too large for cache`,
//!   its `<bytes>+2` are swallowed unread, and a `set` deletes the old item;
//! - flags, exptime and `<bytes>` are truncated to 32 bits as memcached's `safe_strto*` do;
//! - a trailing `noreply` suppresses every reply of the command, errors included;
//! - a key over 250 bytes anywhere in a multi-get discards the whole answer (the keys before
//!   it are still looked up, and for `gat` touched);
//! - `delete <key> 0` (legacy) is accepted, any other extra word is the usage error;
//! - `HTTP/` as the last word of an unknown command, and a line over 2048 bytes without a
//!   `\n` that is not a `get`/`gets`, close the connection; `quit` closes after the replies.
//!
//! The meta commands (`mg`, `ms`, `md`, `ma`, `me`, `mn`) are read as 1.6.18 reads them
//! (`request/meta.rs`): malformed flags are the parser's errors, `ms` errors found once its
//! data length is known swallow the data block, and the rest goes to the store as a
//! [`Command::Meta`].
//!
//! `stats` answers the groups of [`StatsGroup`] with the server's counters (a bare store
//! has none: `END`). memcached commands the store has no counterpart for (`shutdown`,
//! `slabs`, `stats sizes|detail|extstore`,
//! `cache_memlimit`, `lru`, `lru_crawler`, `watch`) are answered `ERROR`; `bget` (an
//! ancient alias) is read as `get`.
//!
//! Known differences, all outside what a well-behaved client can observe:
//! - memcached allocates the item before reading its data block, so a store that fails
//!   for lack of memory swallows the block unread (even without its `\r\n`) and answers
//!   `SERVER_ERROR out of memory storing object`; here the block is read first, so a
//!   *malformed* block on a full store is `CLIENT_ERROR bad data chunk` instead;
//! - `flush_all` is always allowed (memcached `-F` is not reproduced).

mod meta;

use super::cnum::{safe_strtol, safe_strtoul, safe_strtoull};
use super::tokenize::{tokenize, Tokens};
use crate::command::{ArithVerb, ClientError, Command, Reply, ServerError, StoreVerb, KEY_MAX_LEN};

/// memcached's default item size limit (`-I`, 1 MiB).
pub const DEFAULT_ITEM_SIZE_MAX: usize = 1024 * 1024;

/// How long a command line may grow without a `\n` before the connection is closed
/// (unless it is a multi-get).
pub const LINE_LIMIT: usize = 2048;

/// The version string `version` answers with (the memcached release reproduced).
pub const VERSION: &str = "1.6.18";

/// Whether an item of this key length, flags and data length fits in `item_size_max`
/// (memcached's `item_size_ok`: 48-byte header, key and its NUL, 4 bytes of flags when
/// non-zero, data and `\r\n`, 8 bytes of cas).
pub fn item_fits(key_len: usize, flags: u32, data_len: usize, item_size_max: usize) -> bool {
    let total = 48 + key_len + 1 + if flags != 0 { 4 } else { 0 } + data_len + 2 + 8;
    total <= item_size_max
}

/// One request, as the server must handle it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Request {
    /// Apply this command to the store; send its reply unless the command says `noreply`.
    Command(Command),
    /// The protocol layer answered on its own: apply `effect` (if any) for its side effects
    /// only, then send `reply` (if any; `None` when `noreply` suppressed an error).
    Answer {
        /// A command whose effect memcached performs even though its reply is discarded:
        /// the lookups before an over-long key in a multi-get, or the delete of a `set`
        /// whose value was too large.
        effect: Option<Command>,
        /// What goes on the wire.
        reply: Option<Reply>,
        /// What memcached counts in `stats` for it, if anything.
        counted: Option<Counted>,
    },
    /// A multi-key retrieval cut short by a key over 250 bytes: apply `effect` (the keys
    /// before it, if any) and discard its reply, then discard every reply of this
    /// connection not yet sent (memcached culls its unsent responses) and send
    /// `CLIENT_ERROR bad command line format`.
    AbortRetrieval {
        /// The lookups (and for `gat`, touches) memcached made before it met the long key.
        effect: Option<Command>,
    },
    /// `version`: answer `VERSION 1.6.18`.
    Version,
    /// `stats [group]`: the server's counters (`STAT name value` lines, then `END`; for
    /// `stats reset`, `RESET`).
    Stats(StatsGroup),
    /// `quit`: send what is pending, then close the connection.
    Quit,
    /// Close the connection at once, dropping replies not yet sent (`HTTP/` lines and
    /// over-long command lines).
    Close,
}

impl Request {
    fn reply(reply: Reply) -> Self {
        Request::Answer {
            effect: None,
            reply: Some(reply),
            counted: None,
        }
    }

    /// An error reply, suppressed when the command said `noreply`.
    fn error(noreply: bool, reply: Reply) -> Self {
        Request::Answer {
            effect: None,
            reply: (!noreply).then_some(reply),
            counted: None,
        }
    }

    /// [`Request::error`], counted in `stats` as `counted`.
    fn counted_error(noreply: bool, reply: Reply, counted: Counted) -> Self {
        Request::Answer {
            effect: None,
            reply: (!noreply).then_some(reply),
            counted: Some(counted),
        }
    }

    /// Writes what the protocol layer itself sends for this request (`Answer` replies and
    /// `VERSION`); `Command` replies come from the store.
    pub fn encode_own_reply(&self, out: &mut Vec<u8>) {
        match self {
            Request::Answer {
                reply: Some(reply), ..
            } => reply.encode(out),
            Request::AbortRetrieval { .. } => {
                Reply::ClientError(ClientError::BadCommandLineFormat).encode(out)
            }
            Request::Version => {
                out.extend_from_slice(b"VERSION ");
                out.extend_from_slice(VERSION.as_bytes());
                out.extend_from_slice(b"\r\n");
            }
            _ => {}
        }
    }
}

/// What memcached counts in `stats` for a request the protocol layer answers on its own.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Counted {
    /// A storage command whose data block was read, a bad one included (`cmd_set`:
    /// memcached counts it before it checks the block's `\r\n`).
    SetCommand,
    /// A `flush_all` refused for its argument (`cmd_flush`: counted before the argument
    /// is read).
    Flush,
    /// A value too large for an item (`store_too_large`); the old item the `set` unlinks
    /// is not a `delete` in the counters.
    TooLarge,
}

/// The groups of `stats` a server answers (memcached's `process_stat`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum StatsGroup {
    /// `stats`: the general counters.
    General,
    /// `stats items`: per slab class item counts.
    Items,
    /// `stats slabs`: per slab class memory.
    Slabs,
    /// `stats settings`: the server's settings.
    Settings,
    /// `stats conns`: one block per open connection.
    Conns,
    /// `stats sizes`: `sizes_status disabled`, as memcached answers by default.
    Sizes,
    /// `stats reset`: zero the counters; answers `RESET`.
    Reset,
}

impl StatsGroup {
    /// The group a `stats` line's second word names (`None` for a bare `stats`); `None`
    /// for a group memcached does not have (answered `ERROR`) or one `kvsim serve`
    /// leaves out (`detail`, `cachedump`, `extstore`: also `ERROR`).
    pub fn parse(word: Option<&[u8]>) -> Option<StatsGroup> {
        Some(match word {
            None => StatsGroup::General,
            Some(b"items") => StatsGroup::Items,
            Some(b"slabs") => StatsGroup::Slabs,
            Some(b"settings") => StatsGroup::Settings,
            Some(b"conns") => StatsGroup::Conns,
            Some(b"sizes") => StatsGroup::Sizes,
            Some(b"reset") => StatsGroup::Reset,
            Some(_) => return None,
        })
    }
}

/// What a storage command line asked for, while its data block is read.
#[derive(Clone, Debug)]
struct PendingStore {
    verb: StoreVerb,
    cas: Option<u64>,
    key: Vec<u8>,
    flags: u32,
    exptime: i64,
    noreply: bool,
    len: usize,
    /// For `ms`: the command, its data block to come.
    meta: Option<crate::command::MetaCommand>,
}

impl PendingStore {
    fn into_command(self, data: Vec<u8>) -> Command {
        if let Some(mut m) = self.meta {
            m.data = data;
            return Command::Meta(m);
        }
        match self.cas {
            Some(unique) => Command::Cas {
                key: self.key,
                flags: self.flags,
                exptime: self.exptime,
                data,
                unique,
                noreply: self.noreply,
            },
            None => Command::Store {
                verb: self.verb,
                key: self.key,
                flags: self.flags,
                exptime: self.exptime,
                data,
                noreply: self.noreply,
            },
        }
    }
}

#[derive(Clone, Debug)]
enum State {
    /// Waiting for a command line.
    Line,
    /// Reading `len + 2` bytes of a data block.
    Data(PendingStore),
    /// Throwing away this many bytes (a value too large to store).
    Swallow(usize),
    /// The connection is closing: nothing more is read.
    Closed,
}

/// What one command line turned into.
enum LineOutcome {
    Done(Request),
    ReadData(PendingStore),
    Swallow(usize, Request),
}

/// An incremental parser of memcached text-protocol requests (the server's side).
#[derive(Clone, Debug)]
pub struct RequestParser {
    buf: Vec<u8>,
    pos: usize,
    state: State,
    item_size_max: usize,
}

impl Default for RequestParser {
    fn default() -> Self {
        RequestParser::new(DEFAULT_ITEM_SIZE_MAX)
    }
}

impl RequestParser {
    /// A parser for a server whose item size limit is `item_size_max` bytes.
    pub fn new(item_size_max: usize) -> Self {
        RequestParser {
            buf: Vec::new(),
            pos: 0,
            state: State::Line,
            item_size_max,
        }
    }

    /// Adds bytes read from the connection.
    pub fn feed(&mut self, bytes: &[u8]) {
        if matches!(self.state, State::Closed) {
            return;
        }
        if self.pos > 0 && self.pos * 2 >= self.buf.len() {
            self.buf.drain(..self.pos);
            self.pos = 0;
        }
        self.buf.extend_from_slice(bytes);
    }

    /// Bytes received but not yet consumed.
    pub fn buffered(&self) -> usize {
        self.buf.len() - self.pos
    }

    /// In the middle of a data block or of a swallowed one, the bytes it still needs
    /// beyond those buffered; `None` while the parser waits for a command line. memcached
    /// reads exactly these before it reads anything else, and sends no reply meanwhile.
    pub fn wants(&self) -> Option<usize> {
        match &self.state {
            State::Data(pending) => Some((pending.len + 2).saturating_sub(self.buffered())),
            State::Swallow(left) => Some(left.saturating_sub(self.buffered())),
            State::Line | State::Closed => None,
        }
    }

    /// Whether the parser has closed the connection (after `quit`, `HTTP/` or an
    /// over-long line).
    pub fn is_closed(&self) -> bool {
        matches!(self.state, State::Closed)
    }

    /// The next complete request, or `None` until more bytes are fed.
    pub fn next_request(&mut self) -> Option<Request> {
        loop {
            match std::mem::replace(&mut self.state, State::Line) {
                State::Closed => {
                    self.state = State::Closed;
                    return None;
                }
                State::Swallow(left) => {
                    let take = left.min(self.buffered());
                    self.pos += take;
                    if take < left {
                        self.state = State::Swallow(left - take);
                        return None;
                    }
                }
                State::Data(pending) => {
                    let need = pending.len + 2;
                    if self.buffered() < need {
                        self.state = State::Data(pending);
                        return None;
                    }
                    let block = &self.buf[self.pos..self.pos + need];
                    let ok = block.ends_with(b"\r\n");
                    let data = block[..pending.len].to_vec();
                    self.pos += need;
                    if !ok {
                        return Some(Request::counted_error(
                            pending.noreply,
                            Reply::ClientError(ClientError::BadDataChunk),
                            Counted::SetCommand,
                        ));
                    }
                    return Some(Request::Command(pending.into_command(data)));
                }
                State::Line => {
                    let pending = &self.buf[self.pos..];
                    let Some(nl) = pending.iter().position(|&b| b == b'\n') else {
                        if pending.len() > LINE_LIMIT && !is_multiget_prefix(pending) {
                            self.state = State::Closed;
                            return Some(Request::Close);
                        }
                        return None;
                    };
                    let mut line = &pending[..nl];
                    self.pos += nl + 1;
                    if line.len() > 1 && line.ends_with(b"\r") {
                        line = &line[..line.len() - 1];
                    }
                    if let Some(nul) = line.iter().position(|&b| b == 0) {
                        line = &line[..nul];
                    }
                    let outcome = parse_line(line, self.item_size_max);
                    return Some(match outcome {
                        LineOutcome::Done(request) => {
                            if matches!(request, Request::Quit | Request::Close) {
                                self.state = State::Closed;
                            }
                            request
                        }
                        LineOutcome::ReadData(pending) => {
                            self.state = State::Data(pending);
                            continue;
                        }
                        LineOutcome::Swallow(n, request) => {
                            self.state = State::Swallow(n);
                            request
                        }
                    });
                }
            }
        }
    }
}

/// memcached keeps reading an unterminated line past 2048 bytes only if, after at most 100
/// leading spaces, it starts with `get ` or `gets `.
fn is_multiget_prefix(pending: &[u8]) -> bool {
    let spaces = pending.iter().take_while(|&&b| b == b' ').count();
    let rest = &pending[spaces..];
    spaces <= 100 && (rest.starts_with(b"get ") || rest.starts_with(b"gets "))
}

fn error(reply: Reply) -> LineOutcome {
    LineOutcome::Done(Request::reply(reply))
}

fn arity_ok(t: &Tokens, allowed: &[usize]) -> bool {
    allowed.contains(&t.ntokens())
}

fn has_noreply(t: &Tokens) -> bool {
    t.last() == Some(b"noreply")
}

/// `process_command_ascii`: one command line (without its line ending).
fn parse_line(line: &[u8], item_size_max: usize) -> LineOutcome {
    let t = tokenize(line);
    let Some(&cmd) = t.words.first() else {
        return error(Reply::Error);
    };
    if cmd.len() < 2 {
        return error(Reply::Error);
    }
    let n = t.ntokens();
    let store = |verb: StoreVerb| {
        if arity_ok(&t, &[6, 7]) {
            parse_store(&t, verb, false, item_size_max)
        } else {
            error(Reply::Error)
        }
    };
    match cmd[0] {
        // The meta commands (`request/meta.rs`).
        b'm' if cmd.len() == 2 => meta::parse_meta(&t, item_size_max),
        b'g' => {
            if n < 3 {
                return error(Reply::Error);
            }
            match cmd {
                b"get" => parse_get(&t, false, false),
                b"gets" => parse_get(&t, true, false),
                b"gat" => parse_get(&t, false, true),
                b"gats" => parse_get(&t, true, true),
                _ => error(Reply::Error),
            }
        }
        b's' => match cmd {
            b"set" => store(StoreVerb::Set),
            // `stats` and `stats GROUP` (words after the group are ignored, as memcached
            // ignores them).
            b"stats" => match StatsGroup::parse(t.words.get(1).copied()) {
                Some(group) => LineOutcome::Done(Request::Stats(group)),
                None => error(Reply::Error),
            },
            _ => error(Reply::Error),
        },
        b'a' => match cmd {
            b"add" => store(StoreVerb::Add),
            b"append" => store(StoreVerb::Append),
            _ => error(Reply::Error),
        },
        b'c' => match cmd {
            b"cas" if arity_ok(&t, &[7, 8]) => parse_store(&t, StoreVerb::Set, true, item_size_max),
            _ => error(Reply::Error),
        },
        b'i' => match cmd {
            b"incr" if arity_ok(&t, &[4, 5]) => parse_arith(&t, ArithVerb::Incr),
            _ => error(Reply::Error),
        },
        b'd' => match cmd {
            b"delete" if (3..=5).contains(&n) => parse_delete(&t),
            b"decr" if arity_ok(&t, &[4, 5]) => parse_arith(&t, ArithVerb::Decr),
            _ => error(Reply::Error),
        },
        b't' => match cmd {
            b"touch" if arity_ok(&t, &[4, 5]) => parse_touch(&t),
            _ => error(Reply::Error),
        },
        _ => match cmd {
            b"replace" => store(StoreVerb::Replace),
            b"prepend" => store(StoreVerb::Prepend),
            b"bget" if n >= 3 => parse_get(&t, false, false),
            b"bget" => error(Reply::Error),
            b"flush_all" if (2..=4).contains(&n) => parse_flush_all(&t),
            b"flush_all" => error(Reply::Error),
            b"version" => LineOutcome::Done(Request::Version),
            b"quit" => LineOutcome::Done(Request::Quit),
            b"verbosity" if arity_ok(&t, &[3, 4]) => parse_verbosity(&t),
            b"verbosity" => error(Reply::Error),
            _ if t.last().is_some_and(|w| w.starts_with(b"HTTP/")) => {
                LineOutcome::Done(Request::Close)
            }
            _ => error(Reply::Error),
        },
    }
}

/// `process_update_command`: `set`/`add`/`replace`/`append`/`prepend`/`cas`.
fn parse_store(t: &Tokens, verb: StoreVerb, cas: bool, item_size_max: usize) -> LineOutcome {
    let noreply = has_noreply(t);
    let bad = || {
        LineOutcome::Done(Request::error(
            noreply,
            Reply::ClientError(ClientError::BadCommandLineFormat),
        ))
    };
    let key = t.words[1];
    if key.len() > KEY_MAX_LEN {
        return bad();
    }
    let (Some(flags), Some(exptime), Some(len)) = (
        safe_strtoul(t.words[2]),
        safe_strtol(t.words[3]),
        safe_strtol(t.words[4]),
    ) else {
        return bad();
    };
    let unique = if cas {
        match safe_strtoull(t.words[5]) {
            Some(u) => Some(u),
            None => return bad(),
        }
    } else {
        None
    };
    if !(0..=i32::MAX - 2).contains(&len) {
        return bad();
    }
    let len = len as usize;
    if !item_fits(key.len(), flags, len, item_size_max) {
        let effect = (verb == StoreVerb::Set && !cas).then(|| Command::Delete {
            key: key.to_vec(),
            noreply: true,
        });
        let request = Request::Answer {
            effect,
            reply: (!noreply).then_some(Reply::ServerError(ServerError::ObjectTooLarge)),
            counted: Some(Counted::TooLarge),
        };
        return LineOutcome::Swallow(len + 2, request);
    }
    LineOutcome::ReadData(PendingStore {
        verb,
        cas: unique,
        key: key.to_vec(),
        flags,
        exptime: i64::from(exptime),
        noreply,
        len,
        meta: None,
    })
}

/// `process_get_command`: `get`/`gets`/`gat`/`gats` with any number of keys.
fn parse_get(t: &Tokens, with_cas: bool, touch: bool) -> LineOutcome {
    let mut first = 1;
    let mut exptime = 0;
    if touch {
        match safe_strtol(t.words[1]) {
            Some(e) => exptime = i64::from(e),
            None => return error(Reply::ClientError(ClientError::InvalidExptime)),
        }
        first = 2;
    }
    let command = |keys: Vec<Vec<u8>>| {
        if touch {
            Command::Gat {
                with_cas,
                exptime,
                keys,
            }
        } else {
            Command::Get { with_cas, keys }
        }
    };
    let mut keys: Vec<Vec<u8>> = Vec::new();
    let mut words: Vec<&[u8]> = t.words[first..].to_vec();
    let mut rest = t.rest;
    loop {
        for key in words {
            if key.len() > KEY_MAX_LEN {
                return LineOutcome::Done(Request::AbortRetrieval {
                    effect: (!keys.is_empty()).then(|| command(keys)),
                });
            }
            keys.push(key.to_vec());
        }
        match rest {
            Some(r) => {
                let next = tokenize(r);
                words = next.words;
                rest = next.rest;
            }
            None => break,
        }
    }
    if keys.is_empty() {
        return error(Reply::Values(Vec::new()));
    }
    LineOutcome::Done(Request::Command(command(keys)))
}

/// `process_arithmetic_command`: `incr`/`decr`.
fn parse_arith(t: &Tokens, verb: ArithVerb) -> LineOutcome {
    let noreply = has_noreply(t);
    let key = t.words[1];
    if key.len() > KEY_MAX_LEN {
        return LineOutcome::Done(Request::error(
            noreply,
            Reply::ClientError(ClientError::BadCommandLineFormat),
        ));
    }
    match safe_strtoull(t.words[2]) {
        Some(delta) => LineOutcome::Done(Request::Command(Command::Arith {
            verb,
            key: key.to_vec(),
            delta,
            noreply,
        })),
        None => LineOutcome::Done(Request::error(
            noreply,
            Reply::ClientError(ClientError::InvalidDelta),
        )),
    }
}

/// `process_touch_command`.
fn parse_touch(t: &Tokens) -> LineOutcome {
    let noreply = has_noreply(t);
    let key = t.words[1];
    if key.len() > KEY_MAX_LEN {
        return LineOutcome::Done(Request::error(
            noreply,
            Reply::ClientError(ClientError::BadCommandLineFormat),
        ));
    }
    match safe_strtol(t.words[2]) {
        Some(exptime) => LineOutcome::Done(Request::Command(Command::Touch {
            key: key.to_vec(),
            exptime: i64::from(exptime),
            noreply,
        })),
        None => LineOutcome::Done(Request::error(
            noreply,
            Reply::ClientError(ClientError::InvalidExptime),
        )),
    }
}

/// `process_delete_command`, with the legacy `delete <key> 0`.
fn parse_delete(t: &Tokens) -> LineOutcome {
    let n = t.ntokens();
    let mut noreply = false;
    if n > 3 {
        let hold_is_zero = t.words[2] == b"0";
        noreply = has_noreply(t);
        let valid = (n == 4 && (hold_is_zero || noreply)) || (n == 5 && hold_is_zero && noreply);
        if !valid {
            return LineOutcome::Done(Request::error(
                noreply,
                Reply::ClientError(ClientError::BadDeleteUsage),
            ));
        }
    }
    let key = t.words[1];
    if key.len() > KEY_MAX_LEN {
        return LineOutcome::Done(Request::error(
            noreply,
            Reply::ClientError(ClientError::BadCommandLineFormat),
        ));
    }
    LineOutcome::Done(Request::Command(Command::Delete {
        key: key.to_vec(),
        noreply,
    }))
}

/// `process_flush_all_command`.
fn parse_flush_all(t: &Tokens) -> LineOutcome {
    let noreply = has_noreply(t);
    let mut delay = None;
    if t.ntokens() != if noreply { 3 } else { 2 } {
        match safe_strtol(t.words[1]) {
            Some(d) => delay = Some(i64::from(d)),
            None => {
                return LineOutcome::Done(Request::counted_error(
                    noreply,
                    Reply::ClientError(ClientError::InvalidExptime),
                    Counted::Flush,
                ))
            }
        }
    }
    LineOutcome::Done(Request::Command(Command::FlushAll { delay, noreply }))
}

/// `process_verbosity_command`: no effect on the store; `OK`.
fn parse_verbosity(t: &Tokens) -> LineOutcome {
    let noreply = has_noreply(t);
    let reply = match safe_strtoul(t.words[1]) {
        Some(_) => Reply::Ok,
        None => Reply::ClientError(ClientError::BadCommandLineFormat),
    };
    LineOutcome::Done(Request::error(noreply, reply))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse_all(input: &[u8]) -> Vec<Request> {
        let mut p = RequestParser::default();
        p.feed(input);
        std::iter::from_fn(|| p.next_request()).collect()
    }

    fn answer(reply: Reply) -> Request {
        Request::reply(reply)
    }

    #[test]
    fn storage_command_and_data_block() {
        let reqs = parse_all(b"set k 5 10 3\r\nabc\r\n");
        assert_eq!(
            reqs,
            vec![Request::Command(Command::Store {
                verb: StoreVerb::Set,
                key: b"k".to_vec(),
                flags: 5,
                exptime: 10,
                data: b"abc".to_vec(),
                noreply: false,
            })]
        );
    }

    #[test]
    fn bad_command_line_does_not_swallow_the_data_block() {
        let reqs = parse_all(b"set k x 0 1\r\na\r\n");
        assert_eq!(
            reqs,
            vec![
                answer(Reply::ClientError(ClientError::BadCommandLineFormat)),
                answer(Reply::Error)
            ]
        );
    }

    #[test]
    fn bad_data_chunk_then_leftover_is_a_command() {
        let reqs = parse_all(b"set k 0 0 1\r\nabc\r\n");
        assert_eq!(
            reqs,
            vec![
                Request::counted_error(
                    false,
                    Reply::ClientError(ClientError::BadDataChunk),
                    Counted::SetCommand
                ),
                answer(Reply::Error)
            ]
        );
    }

    #[test]
    fn too_large_is_swallowed_and_set_deletes() {
        let mut p = RequestParser::new(1024);
        p.feed(b"set k 0 0 2000 noreply\r\n");
        let r = p.next_request().unwrap();
        assert_eq!(
            r,
            Request::Answer {
                effect: Some(Command::Delete {
                    key: b"k".to_vec(),
                    noreply: true
                }),
                reply: None,
                counted: Some(Counted::TooLarge),
            }
        );
        p.feed(&vec![b'x'; 1000]);
        assert_eq!(p.next_request(), None);
        p.feed(&vec![b'y'; 1002]);
        p.feed(b"get k\r\n");
        assert!(matches!(
            p.next_request(),
            Some(Request::Command(Command::Get { .. }))
        ));
    }

    #[test]
    fn multiget_with_long_key_keeps_the_lookups_before_it() {
        let long = "k".repeat(251);
        let reqs = parse_all(format!("gat 5 a b {long} c\r\n").as_bytes());
        assert_eq!(
            reqs,
            vec![Request::AbortRetrieval {
                effect: Some(Command::Gat {
                    with_cas: false,
                    exptime: 5,
                    keys: vec![b"a".to_vec(), b"b".to_vec()]
                }),
            }]
        );
    }

    #[test]
    fn long_multiget_is_retokenized() {
        let keys: Vec<String> = (0..100).map(|i| format!("k{i}")).collect();
        let reqs = parse_all(format!("gets {}\r\n", keys.join(" ")).as_bytes());
        let Request::Command(Command::Get { keys: got, .. }) = &reqs[0] else {
            panic!("{reqs:?}")
        };
        assert_eq!(got.len(), 100);
        assert_eq!(got[99], b"k99");
    }

    #[test]
    fn overlong_line_closes_unless_multiget() {
        let mut p = RequestParser::default();
        p.feed(&vec![b'a'; 3000]);
        assert_eq!(p.next_request(), Some(Request::Close));
        assert!(p.is_closed());
        let mut p = RequestParser::default();
        p.feed(b"get ");
        p.feed(&vec![b'a'; 3000]);
        assert_eq!(p.next_request(), None);
    }
}
