//! The one vocabulary of kvsim: [`Command`] and [`Reply`].
//!
//! Every KV operation is a value. The store applies a `Command` and answers a `Reply`; the
//! simulator's trace, replay tokens, the wire codec (both directions), the stateright bridge
//! and the reports all use these two types, so nothing re-describes an operation.
//!
//! The types mirror memcached's classic text protocol (1.6.18): storage commands
//! (`set`, `add`, `replace`, `append`, `prepend`, `cas`), retrieval (`get`, `gets`, `gat`,
//! `gats`), arithmetic (`incr`, `decr`), `delete`, `touch` and `flush_all`; and the meta
//! protocol (`mg`, `ms`, `md`, `ma`, `me`, `mn`: [`Command::Meta`], [`Reply::Meta`],
//! [`Reply::MetaDebug`], see [`meta`]).
//! [`Reply::encode`] writes a reply exactly as memcached puts it on the wire.

use serde::{Deserialize, Serialize};
use std::fmt;

pub mod meta;

pub use meta::{MetaCommand, MetaDebug, MetaFlag, MetaReply, MetaRet, MetaStatus, MetaVerb};

/// The longest key memcached accepts, in bytes.
pub const KEY_MAX_LEN: usize = 250;

/// Which of the five plain storage commands a [`Command::Store`] is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum StoreVerb {
    /// `set`: store unconditionally.
    Set,
    /// `add`: store only if the key is absent.
    Add,
    /// `replace`: store only if the key is present.
    Replace,
    /// `append`: add data after the existing value (flags and exptime ignored).
    Append,
    /// `prepend`: add data before the existing value (flags and exptime ignored).
    Prepend,
}

impl StoreVerb {
    /// The protocol word: `set`, `add`, ….
    pub fn as_str(self) -> &'static str {
        match self {
            StoreVerb::Set => "set",
            StoreVerb::Add => "add",
            StoreVerb::Replace => "replace",
            StoreVerb::Append => "append",
            StoreVerb::Prepend => "prepend",
        }
    }
}

/// Whether a [`Command::Arith`] increments or decrements.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum ArithVerb {
    /// `incr`: add, wrapping at 2^64.
    Incr,
    /// `decr`: subtract, clamping at 0.
    Decr,
}

impl ArithVerb {
    /// The protocol word: `incr` or `decr`.
    pub fn as_str(self) -> &'static str {
        match self {
            ArithVerb::Incr => "incr",
            ArithVerb::Decr => "decr",
        }
    }
}

/// One KV command, as memcached's text protocol has it.
///
/// Keys and data are raw bytes. `exptime` is the value after memcached's own 32-bit
/// truncation (the wire codec applies it); see the store for how it is interpreted
/// (0 never, 1..=2592000 relative seconds, larger absolute unix time, negative expired).
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum Command {
    /// `set|add|replace|append|prepend <key> <flags> <exptime> <bytes> [noreply]`.
    Store {
        /// Which storage command.
        verb: StoreVerb,
        /// The key.
        key: Vec<u8>,
        /// Opaque client flags.
        flags: u32,
        /// Expiration time (see the type's docs).
        exptime: i64,
        /// The data block.
        data: Vec<u8>,
        /// Suppress the reply on the wire.
        noreply: bool,
    },
    /// `cas <key> <flags> <exptime> <bytes> <cas unique> [noreply]`.
    Cas {
        /// The key.
        key: Vec<u8>,
        /// Opaque client flags.
        flags: u32,
        /// Expiration time.
        exptime: i64,
        /// The data block.
        data: Vec<u8>,
        /// The unique the client read with `gets`.
        unique: u64,
        /// Suppress the reply on the wire.
        noreply: bool,
    },
    /// `get <key>*` (`with_cas: false`) or `gets <key>*` (`with_cas: true`).
    Get {
        /// Return cas uniques (`gets`).
        with_cas: bool,
        /// One or more keys; duplicates are answered each time.
        keys: Vec<Vec<u8>>,
    },
    /// `gat <exptime> <key>*` or `gats <exptime> <key>*`: get and touch.
    Gat {
        /// Return cas uniques (`gats`).
        with_cas: bool,
        /// The new expiration time of every hit.
        exptime: i64,
        /// One or more keys.
        keys: Vec<Vec<u8>>,
    },
    /// `incr|decr <key> <delta> [noreply]`.
    Arith {
        /// Increment or decrement.
        verb: ArithVerb,
        /// The key.
        key: Vec<u8>,
        /// The amount.
        delta: u64,
        /// Suppress the reply on the wire.
        noreply: bool,
    },
    /// `delete <key> [noreply]`.
    Delete {
        /// The key.
        key: Vec<u8>,
        /// Suppress the reply on the wire.
        noreply: bool,
    },
    /// `touch <key> <exptime> [noreply]`.
    Touch {
        /// The key.
        key: Vec<u8>,
        /// The new expiration time.
        exptime: i64,
        /// Suppress the reply on the wire.
        noreply: bool,
    },
    /// `flush_all [delay] [noreply]`.
    FlushAll {
        /// Delay (converted like an exptime); `None` or `<= 0` flushes now.
        delay: Option<i64>,
        /// Suppress the reply on the wire.
        noreply: bool,
    },
    /// A meta command: `mg`, `ms`, `md`, `ma`, `me` or `mn` (see [`meta`]).
    Meta(MetaCommand),
}

impl Command {
    /// Whether what the store answers, to this command or a later one, can depend on the
    /// time it arrives: it gives an item an expiration time (any `exptime` but 0: memcached
    /// keeps expiries in whole seconds of its own clock) or flushes (a flush hides the
    /// items last stored before a second of that clock), or reports times or the items'
    /// access history (meta `l`, `h`, `me`; a time-free search leaves both out). Every
    /// other command's effect and reply are the same at every time, on a store with no
    /// expiring item, no flush and no memory limit (`Store::time_free`).
    pub fn involves_time(&self) -> bool {
        match self {
            Command::Store { exptime, .. }
            | Command::Cas { exptime, .. }
            | Command::Gat { exptime, .. }
            | Command::Touch { exptime, .. } => *exptime != 0,
            Command::FlushAll { .. } => true,
            Command::Get { .. } | Command::Arith { .. } | Command::Delete { .. } => false,
            // A new TTL (`T`, `N`, `R`) other than 0, or a report of times or of the
            // access history (`l`, `h`, `me`), which a time-free search leaves out.
            Command::Meta(m) => {
                m.verb == MetaVerb::Debug
                    || m.flags.iter().any(|f| match f {
                        MetaFlag::Ttl(t) | MetaFlag::Vivify(t) | MetaFlag::Recache(t) => *t != 0,
                        MetaFlag::ReturnLastAccess | MetaFlag::ReturnHit => true,
                        _ => false,
                    })
            }
        }
    }

    /// The protocol word of this command (`set`, `gets`, `incr`, `flush_all`, …).
    #[inline]
    pub fn verb(&self) -> &'static str {
        match self {
            Command::Store { verb, .. } => verb.as_str(),
            Command::Cas { .. } => "cas",
            Command::Get {
                with_cas: false, ..
            } => "get",
            Command::Get { with_cas: true, .. } => "gets",
            Command::Gat {
                with_cas: false, ..
            } => "gat",
            Command::Gat { with_cas: true, .. } => "gats",
            Command::Arith { verb, .. } => verb.as_str(),
            Command::Delete { .. } => "delete",
            Command::Touch { .. } => "touch",
            Command::FlushAll { .. } => "flush_all",
            Command::Meta(m) => m.verb.as_str(),
        }
    }

    /// The keys this command names, in order (none for `flush_all`).
    pub fn keys(&self) -> Vec<&[u8]> {
        match self {
            Command::Store { key, .. }
            | Command::Cas { key, .. }
            | Command::Arith { key, .. }
            | Command::Delete { key, .. }
            | Command::Touch { key, .. } => vec![key.as_slice()],
            Command::Get { keys, .. } | Command::Gat { keys, .. } => {
                keys.iter().map(Vec::as_slice).collect()
            }
            Command::FlushAll { .. } => Vec::new(),
            Command::Meta(m) if m.verb == MetaVerb::Noop => Vec::new(),
            Command::Meta(m) => vec![m.key.as_slice()],
        }
    }

    /// The keys this command names, to change them (a client's key prefix).
    pub fn keys_mut(&mut self) -> Vec<&mut Vec<u8>> {
        match self {
            Command::Store { key, .. }
            | Command::Cas { key, .. }
            | Command::Arith { key, .. }
            | Command::Delete { key, .. }
            | Command::Touch { key, .. } => vec![key],
            Command::Get { keys, .. } | Command::Gat { keys, .. } => keys.iter_mut().collect(),
            Command::FlushAll { .. } => Vec::new(),
            Command::Meta(m) if m.verb == MetaVerb::Noop => Vec::new(),
            Command::Meta(m) => vec![&mut m.key],
        }
    }

    /// Asks for every reply: drops `noreply`, and a meta command's quiet flag (`q`).
    pub fn clear_noreply(&mut self) {
        match self {
            Command::Store { noreply, .. }
            | Command::Cas { noreply, .. }
            | Command::Arith { noreply, .. }
            | Command::Delete { noreply, .. }
            | Command::Touch { noreply, .. }
            | Command::FlushAll { noreply, .. } => *noreply = false,
            Command::Get { .. } | Command::Gat { .. } => {}
            Command::Meta(m) => m.flags.retain(|f| *f != MetaFlag::Quiet),
        }
    }

    /// For a retrieval (`get`, `gets`, `gat`, `gats`), the one-key retrievals it makes, in
    /// order: memcached looks a multi-get's keys up one at a time. `None` for every other
    /// command.
    pub fn lookups(&self) -> Option<Vec<Command>> {
        match self {
            Command::Get { with_cas, keys } => Some(
                keys.iter()
                    .map(|k| Command::Get {
                        with_cas: *with_cas,
                        keys: vec![k.clone()],
                    })
                    .collect(),
            ),
            Command::Gat {
                with_cas,
                exptime,
                keys,
            } => Some(
                keys.iter()
                    .map(|k| Command::Gat {
                        with_cas: *with_cas,
                        exptime: *exptime,
                        keys: vec![k.clone()],
                    })
                    .collect(),
            ),
            _ => None,
        }
    }

    /// The first key this command names, if any (used to route in a sharded cluster).
    pub fn first_key(&self) -> Option<&[u8]> {
        match self {
            Command::Store { key, .. }
            | Command::Cas { key, .. }
            | Command::Arith { key, .. }
            | Command::Delete { key, .. }
            | Command::Touch { key, .. } => Some(key),
            Command::Get { keys, .. } | Command::Gat { keys, .. } => {
                keys.first().map(Vec::as_slice)
            }
            Command::FlushAll { .. } => None,
            Command::Meta(m) if m.verb == MetaVerb::Noop => None,
            Command::Meta(m) => Some(&m.key),
        }
    }

    /// Whether the command asked for no reply on the wire (a meta command's quiet mode
    /// drops only some replies: see [`MetaReply::quiet`]).
    pub fn noreply(&self) -> bool {
        match self {
            Command::Store { noreply, .. }
            | Command::Cas { noreply, .. }
            | Command::Arith { noreply, .. }
            | Command::Delete { noreply, .. }
            | Command::Touch { noreply, .. }
            | Command::FlushAll { noreply, .. } => *noreply,
            Command::Get { .. } | Command::Gat { .. } | Command::Meta(_) => false,
        }
    }

    /// Whether the command can change the store (everything but `get`/`gets`, `me` and
    /// `mn`; an `mg` can create, touch, bump and hand out a win token).
    pub fn is_mutation(&self) -> bool {
        match self {
            Command::Get { .. } => false,
            Command::Meta(m) => !matches!(m.verb, MetaVerb::Debug | MetaVerb::Noop),
            _ => true,
        }
    }

    /// Checks what a careful client checks before sending: every key is 1 to 250 bytes
    /// with no whitespace or control bytes, and no data block exceeds the 1 MiB item limit.
    ///
    /// memcached 1.6.18 itself only checks the key length; a key with a space cannot
    /// even be written on the wire, and one with control bytes is outside the protocol.
    #[inline]
    pub fn validate(&self) -> Result<(), CommandError> {
        // What structures send at nearly every call, in line: one key, and for a storage
        // command its data block (checked in the same order as below).
        match self {
            Command::Arith { key, .. }
            | Command::Delete { key, .. }
            | Command::Touch { key, .. } => return validate_key(key),
            Command::Get { keys, .. } if keys.len() == 1 => return validate_key(&keys[0]),
            Command::Store { key, data, .. } | Command::Cas { key, data, .. } => {
                validate_key(key)?;
                return validate_data(data);
            }
            _ => {}
        }
        self.validate_any()
    }

    /// [`Command::validate`] for every command.
    fn validate_any(&self) -> Result<(), CommandError> {
        match self {
            Command::Get { keys, .. } | Command::Gat { keys, .. } => {
                if keys.is_empty() {
                    return Err(CommandError::NoKeys { verb: self.verb() });
                }
                for key in keys {
                    validate_key(key)?;
                }
            }
            Command::Meta(m) => validate_meta(m)?,
            other => {
                if let Some(key) = other.first_key() {
                    validate_key(key)?;
                }
            }
        }
        if let Command::Store { data, .. }
        | Command::Cas { data, .. }
        | Command::Meta(MetaCommand { data, .. }) = self
        {
            validate_data(data)?;
        }
        Ok(())
    }
}

/// Checks a data block's length ([`VALUE_MAX_LEN`]).
#[inline]
pub(crate) fn validate_data(data: &[u8]) -> Result<(), CommandError> {
    if data.len() > VALUE_MAX_LEN {
        return Err(CommandError::ValueTooLarge {
            len: data.len(),
            max: VALUE_MAX_LEN,
        });
    }
    Ok(())
}

/// The largest data block any default memcached can hold (1 MiB item limit minus the
/// smallest item overhead); larger values are rejected before they are sent.
pub const VALUE_MAX_LEN: usize = 1024 * 1024 - 60;

/// Checks a meta command before sending: its key (any bytes with `b`, as long as the
/// base64 fits in 250), at most as many flags as memcached accepts, and opaque tokens and
/// proxy hints that are single tokens of at most 32 bytes.
fn validate_meta(m: &MetaCommand) -> Result<(), CommandError> {
    if m.verb == MetaVerb::Noop {
        return Ok(());
    }
    if m.base64() {
        if m.key.is_empty() {
            return Err(CommandError::EmptyKey);
        }
        let encoded = meta::base64_encode(&m.key).len();
        if encoded > KEY_MAX_LEN {
            return Err(CommandError::KeyTooLong {
                key: show_bytes(&m.key[..40.min(m.key.len())]) + "…",
                len: encoded,
            });
        }
    } else {
        validate_key(&m.key)?;
    }
    if m.ntokens() > meta::META_MAX_TOKENS {
        return Err(CommandError::TooManyFlags {
            verb: m.verb.as_str(),
            found: m.flags.len(),
            max: meta::META_MAX_TOKENS + m.flags.len() - m.ntokens(),
        });
    }
    for flag in &m.flags {
        let token = match flag {
            MetaFlag::Opaque(t) | MetaFlag::Hint { text: t, .. } => t,
            MetaFlag::Mode(b) => &vec![*b],
            _ => continue,
        };
        let bad = |b: &u8| *b <= b' ' || *b == 0x7f;
        if token.len() + 1 > meta::META_OPAQUE_MAX || token.iter().any(bad) {
            return Err(CommandError::BadFlagToken {
                flag: flag.to_string(),
            });
        }
    }
    Ok(())
}

/// Checks one key: 1 to 250 bytes, no whitespace, no control bytes.
#[inline]
pub fn validate_key(key: &[u8]) -> Result<(), CommandError> {
    // A short good key (what structures use) in line; anything else, and every error, below.
    if !key.is_empty() && key.len() <= KEY_MAX_LEN && !has_bad_key_byte(key) {
        return Ok(());
    }
    check_key(key)
}

/// Whether a key may not hold `b`: whitespace or a control byte.
#[inline]
fn bad_key_byte(b: u8) -> bool {
    b <= b' ' || b == 0x7f
}

/// Whether `key` holds a byte [`bad_key_byte`] refuses, eight bytes at a time: structures'
/// keys are 5-30 bytes, where a byte loop cost ~5 instructions a byte on every command
/// (callgrind: 7 % of the message queue's writer).
#[inline]
fn has_bad_key_byte(key: &[u8]) -> bool {
    const ONES: u64 = u64::from_le_bytes([0x01; 8]);
    const HIGHS: u64 = u64::from_le_bytes([0x80; 8]);
    const DEL: u64 = u64::from_le_bytes([0x7f; 8]);
    // Some byte of `x` is below 0x21 (whitespace or control), or is 0x7f. Both tests are
    // exact for "some byte" (a borrow only starts at a byte that is below the bound, and
    // a byte of 0x80 or more never sets its flag, as `!x` clears it).
    let bad = |x: u64| {
        let below = x.wrapping_sub(ONES * 0x21) & !x & HIGHS;
        let d = x ^ DEL;
        let del = d.wrapping_sub(ONES) & !d & HIGHS;
        below | del != 0
    };
    let word = |at: usize| u64::from_le_bytes(key[at..at + 8].try_into().unwrap_or([0; 8]));
    let n = key.len();
    if n < 8 {
        // Short keys byte by byte (a padded word would cost a `memcpy` call).
        return key.iter().any(|&b| bad_key_byte(b));
    }
    // Whole words, then the last eight bytes (overlapping the words before: no tail loop).
    let mut found = false;
    let mut at = 0;
    while at + 8 < n {
        found |= bad(word(at));
        at += 8;
    }
    found | bad(word(n - 8))
}

/// [`validate_key`] for every key.
fn check_key(key: &[u8]) -> Result<(), CommandError> {
    if key.is_empty() {
        return Err(CommandError::EmptyKey);
    }
    if key.len() > KEY_MAX_LEN {
        return Err(CommandError::KeyTooLong {
            key: show_bytes(&key[..40]) + "…",
            len: key.len(),
        });
    }
    // The position only when a byte is bad.
    if has_bad_key_byte(key) {
        let pos = key.iter().position(|&b| bad_key_byte(b)).unwrap_or(0);
        return Err(CommandError::BadKeyByte {
            key: show_bytes(key),
            byte: key[pos],
            pos,
        });
    }
    Ok(())
}

/// Renders bytes for people: printable ASCII as is, anything else as `\xNN`.
pub fn show_bytes(bytes: &[u8]) -> String {
    let mut s = String::with_capacity(bytes.len());
    for &b in bytes {
        if (0x21..0x7f).contains(&b) || b == b' ' {
            s.push(b as char);
        } else {
            s.push_str(&format!("\\x{b:02x}"));
        }
    }
    s
}

/// A command that must not be sent, found before sending it.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error, Serialize, Deserialize)]
pub enum CommandError {
    /// A key of zero bytes.
    #[error("bad key: expected 1 to 250 bytes, found an empty key")]
    EmptyKey,
    /// A key longer than 250 bytes.
    #[error("bad key {key:?}: expected at most 250 bytes, found {len}")]
    KeyTooLong {
        /// The key's first bytes.
        key: String,
        /// Its length.
        len: usize,
    },
    /// A key with whitespace or a control byte.
    #[error("bad key {key:?}: expected no whitespace or control bytes, found byte 0x{byte:02x} at position {pos}")]
    BadKeyByte {
        /// The key.
        key: String,
        /// The offending byte.
        byte: u8,
        /// Its position.
        pos: usize,
    },
    /// A data block larger than any item memcached can hold.
    #[error("value too large: expected at most {max} bytes, found {len}")]
    ValueTooLarge {
        /// Its length.
        len: usize,
        /// The limit.
        max: usize,
    },
    /// A multi-key command with no key.
    #[error("{verb} needs at least one key, found none")]
    NoKeys {
        /// The command.
        verb: &'static str,
    },
    /// A meta command with more flags than memcached reads.
    #[error("{verb} takes at most {max} flags, found {found}")]
    TooManyFlags {
        /// The command.
        verb: &'static str,
        /// How many it has.
        found: usize,
        /// How many memcached accepts.
        max: usize,
    },
    /// A meta flag whose token is not one token of at most 32 bytes (an opaque, a
    /// mode, a proxy hint).
    #[error("bad meta flag {flag:?}: expected one token of at most 32 bytes without whitespace or control bytes")]
    BadFlagToken {
        /// The flag, rendered.
        flag: String,
    },
}

/// One hit of a retrieval command: `VALUE <key> <flags> <bytes> [<cas unique>]`.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct Value {
    /// The key.
    pub key: Vec<u8>,
    /// The item's flags.
    pub flags: u32,
    /// The item's data.
    pub data: Vec<u8>,
    /// The cas unique, for `gets`/`gats` only.
    pub cas: Option<u64>,
}

/// A `CLIENT_ERROR` memcached sends, by its exact text.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum ClientError {
    /// `CLIENT_ERROR bad command line format`
    BadCommandLineFormat,
    /// `CLIENT_ERROR bad command line format.  Usage: delete <key> [noreply]`
    BadDeleteUsage,
    /// `CLIENT_ERROR bad data chunk`
    BadDataChunk,
    /// `CLIENT_ERROR invalid exptime argument`
    InvalidExptime,
    /// `CLIENT_ERROR invalid numeric delta argument`
    InvalidDelta,
    /// `CLIENT_ERROR cannot increment or decrement non-numeric value`
    NonNumeric,
    /// `CLIENT_ERROR flush_all not allowed`
    FlushNotAllowed,
    /// `CLIENT_ERROR duplicate flag` (meta: a flag letter twice, or a byte >= 127)
    DuplicateFlag,
    /// `CLIENT_ERROR invalid flag` (meta: a letter no meta command knows)
    InvalidFlag,
    /// `CLIENT_ERROR error decoding key` (meta `b` with a key that is not base64)
    ErrorDecodingKey,
    /// `CLIENT_ERROR bad token in command line format` (meta `N`/`T`/`R`/`C` not a number)
    BadToken,
    /// `CLIENT_ERROR incorrect length for M token`
    BadModeLength,
    /// `CLIENT_ERROR invalid numeric initial value` (meta `J`)
    InvalidInitial,
    /// `CLIENT_ERROR invalid numeric delta value` (meta `D`)
    InvalidDeltaValue,
    /// `CLIENT_ERROR options flags are too long` (`mg` with more than 20 tokens)
    GetFlagsTooLong,
    /// `CLIENT_ERROR options flags too long` (`ms`, `md`, `ma` with more than 20 tokens)
    FlagsTooLong,
    /// `CLIENT_ERROR opaque token too long` (an `O` token over 32 bytes)
    OpaqueTooLong,
    /// `CLIENT_ERROR invalid mode for ms M token`
    InvalidSetMode,
    /// `CLIENT_ERROR invalid mode for ma M token`
    InvalidArithMode,
    /// `CLIENT_ERROR invalid or duplicate flag` (`md` and `ma`, for every flag error)
    InvalidOrDuplicateFlag,
}

impl ClientError {
    /// The text after `CLIENT_ERROR `.
    pub fn as_str(self) -> &'static str {
        match self {
            ClientError::BadCommandLineFormat => "bad command line format",
            ClientError::BadDeleteUsage => {
                "bad command line format.  Usage: delete <key> [noreply]"
            }
            ClientError::BadDataChunk => "bad data chunk",
            ClientError::InvalidExptime => "invalid exptime argument",
            ClientError::InvalidDelta => "invalid numeric delta argument",
            ClientError::NonNumeric => "cannot increment or decrement non-numeric value",
            ClientError::FlushNotAllowed => "flush_all not allowed",
            ClientError::DuplicateFlag => "duplicate flag",
            ClientError::InvalidFlag => "invalid flag",
            ClientError::ErrorDecodingKey => "error decoding key",
            ClientError::BadToken => "bad token in command line format",
            ClientError::BadModeLength => "incorrect length for M token",
            ClientError::InvalidInitial => "invalid numeric initial value",
            ClientError::InvalidDeltaValue => "invalid numeric delta value",
            ClientError::GetFlagsTooLong => "options flags are too long",
            ClientError::FlagsTooLong => "options flags too long",
            ClientError::OpaqueTooLong => "opaque token too long",
            ClientError::InvalidSetMode => "invalid mode for ms M token",
            ClientError::InvalidArithMode => "invalid mode for ma M token",
            ClientError::InvalidOrDuplicateFlag => "invalid or duplicate flag",
        }
    }

    /// Every `CLIENT_ERROR` memcached sends for the commands of [`Command`].
    pub const ALL: [ClientError; 20] = [
        ClientError::BadCommandLineFormat,
        ClientError::BadDeleteUsage,
        ClientError::BadDataChunk,
        ClientError::InvalidExptime,
        ClientError::InvalidDelta,
        ClientError::NonNumeric,
        ClientError::FlushNotAllowed,
        ClientError::DuplicateFlag,
        ClientError::InvalidFlag,
        ClientError::ErrorDecodingKey,
        ClientError::BadToken,
        ClientError::BadModeLength,
        ClientError::InvalidInitial,
        ClientError::InvalidDeltaValue,
        ClientError::GetFlagsTooLong,
        ClientError::FlagsTooLong,
        ClientError::OpaqueTooLong,
        ClientError::InvalidSetMode,
        ClientError::InvalidArithMode,
        ClientError::InvalidOrDuplicateFlag,
    ];
}

/// A `SERVER_ERROR` memcached sends, by its exact text.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum ServerError {
    /// `SERVER_ERROR object too large for cache`
    ObjectTooLarge,
    /// `SERVER_ERROR out of memory storing object`
    OutOfMemoryStoring,
    /// `SERVER_ERROR out of memory` (incr/decr reallocation failure)
    OutOfMemory,
    /// `SERVER_ERROR out of memory writing get response`
    OutOfMemoryGetResponse,
    /// `SERVER_ERROR Out of memory allocating new item` (`ma` with `N` on a full store)
    OutOfMemoryAllocating,
}

impl ServerError {
    /// The text after `SERVER_ERROR `.
    pub fn as_str(self) -> &'static str {
        match self {
            ServerError::ObjectTooLarge => "object too large for cache",
            ServerError::OutOfMemoryStoring => "out of memory storing object",
            ServerError::OutOfMemory => "out of memory",
            ServerError::OutOfMemoryGetResponse => "out of memory writing get response",
            ServerError::OutOfMemoryAllocating => "Out of memory allocating new item",
        }
    }

    /// Every `SERVER_ERROR` memcached sends for the commands of [`Command`].
    pub const ALL: [ServerError; 5] = [
        ServerError::ObjectTooLarge,
        ServerError::OutOfMemoryStoring,
        ServerError::OutOfMemory,
        ServerError::OutOfMemoryGetResponse,
        ServerError::OutOfMemoryAllocating,
    ];
}

/// Every reply memcached gives to the commands of [`Command`].
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum Reply {
    /// Zero or more `VALUE` blocks followed by `END`.
    Values(Vec<Value>),
    /// `STORED`
    Stored,
    /// `NOT_STORED`
    NotStored,
    /// `EXISTS`
    Exists,
    /// `NOT_FOUND`
    NotFound,
    /// `DELETED`
    Deleted,
    /// `TOUCHED`
    Touched,
    /// `OK` (flush_all)
    Ok,
    /// The new value after incr/decr, in decimal.
    Number(u64),
    /// `ERROR`: unknown command or wrong arity.
    Error,
    /// `CLIENT_ERROR <text>`
    ClientError(ClientError),
    /// `SERVER_ERROR <text>`
    ServerError(ServerError),
    /// A meta reply: `HD`, `VA`, `EN`, `NF`, `NS`, `EX` or `MN`, with returned flags.
    Meta(MetaReply),
    /// `me`'s `ME <key> exp=… …` line for a hit (a miss is `EN`, a [`Reply::Meta`]).
    MetaDebug(MetaDebug),
}

impl Reply {
    /// The reply's first word on the wire (`STORED`, `END`, `CLIENT_ERROR`, …).
    pub(crate) fn status_word(&self) -> &'static str {
        match self {
            Reply::Stored => "STORED",
            Reply::NotStored => "NOT_STORED",
            Reply::Exists => "EXISTS",
            Reply::NotFound => "NOT_FOUND",
            Reply::Deleted => "DELETED",
            Reply::Touched => "TOUCHED",
            Reply::Ok => "OK",
            Reply::Error => "ERROR",
            Reply::Values(_) => "END",
            Reply::Number(_) => "NUMBER",
            Reply::ClientError(_) => "CLIENT_ERROR",
            Reply::ServerError(_) => "SERVER_ERROR",
            Reply::Meta(m) => m.status.as_str(),
            Reply::MetaDebug(_) => "ME",
        }
    }

    /// Whether memcached sends this reply to `command` (noreply and quiet mode drop
    /// some or all of them; errors of a meta command are always sent).
    pub fn is_sent(&self, command: &Command) -> bool {
        match self {
            Reply::Meta(m) => !m.quiet,
            _ => !command.noreply(),
        }
    }

    /// Whether this is `ERROR`, `CLIENT_ERROR …` or `SERVER_ERROR …`.
    #[inline]
    pub fn is_error(&self) -> bool {
        matches!(
            self,
            Reply::Error | Reply::ClientError(_) | Reply::ServerError(_)
        )
    }
}

/// Short, one-line rendering for traces and reports:
/// `add lock 0 2 "1"`, `gets head`, `incr n 1`.
impl fmt::Display for Command {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let nr = |noreply: bool| if noreply { " noreply" } else { "" };
        match self {
            Command::Store {
                verb,
                key,
                flags,
                exptime,
                data,
                noreply,
            } => {
                write!(f, "{} {}", verb.as_str(), show_bytes(key))?;
                if *flags != 0 || *exptime != 0 {
                    write!(f, " flags={flags} exp={exptime}")?;
                }
                write!(f, " {:?}{}", show_bytes(data), nr(*noreply))
            }
            Command::Cas {
                key,
                flags,
                exptime,
                data,
                unique,
                noreply,
            } => {
                write!(f, "cas {} #{unique}", show_bytes(key))?;
                if *flags != 0 || *exptime != 0 {
                    write!(f, " flags={flags} exp={exptime}")?;
                }
                write!(f, " {:?}{}", show_bytes(data), nr(*noreply))
            }
            Command::Get { keys, .. } => {
                write!(f, "{}", self.verb())?;
                for k in keys {
                    write!(f, " {}", show_bytes(k))?;
                }
                Ok(())
            }
            Command::Gat { exptime, keys, .. } => {
                write!(f, "{} {exptime}", self.verb())?;
                for k in keys {
                    write!(f, " {}", show_bytes(k))?;
                }
                Ok(())
            }
            Command::Arith {
                verb,
                key,
                delta,
                noreply,
            } => write!(
                f,
                "{} {} {delta}{}",
                verb.as_str(),
                show_bytes(key),
                nr(*noreply)
            ),
            Command::Delete { key, noreply } => {
                write!(f, "delete {}{}", show_bytes(key), nr(*noreply))
            }
            Command::Touch {
                key,
                exptime,
                noreply,
            } => write!(f, "touch {} {exptime}{}", show_bytes(key), nr(*noreply)),
            Command::FlushAll { delay, noreply } => {
                write!(f, "flush_all")?;
                if let Some(d) = delay {
                    write!(f, " {d}")?;
                }
                write!(f, "{}", nr(*noreply))
            }
            Command::Meta(m) => write!(f, "{m}"),
        }
    }
}

/// Short, one-line rendering for traces and reports: `STORED`, `"a1" #7`, `miss`.
impl fmt::Display for Reply {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Reply::Values(values) if values.is_empty() => write!(f, "miss"),
            Reply::Values(values) => {
                for (i, v) in values.iter().enumerate() {
                    if i > 0 {
                        write!(f, ", ")?;
                    }
                    if values.len() > 1 {
                        write!(f, "{}=", show_bytes(&v.key))?;
                    }
                    write!(f, "{:?}", show_bytes(&v.data))?;
                    if let Some(cas) = v.cas {
                        write!(f, " #{cas}")?;
                    }
                }
                Ok(())
            }
            Reply::Number(n) => write!(f, "{n}"),
            Reply::ClientError(e) => write!(f, "CLIENT_ERROR {}", e.as_str()),
            Reply::ServerError(e) => write!(f, "SERVER_ERROR {}", e.as_str()),
            Reply::Meta(m) => write!(f, "{m}"),
            Reply::MetaDebug(d) => write!(f, "{d}"),
            other => write!(f, "{}", other.status_word()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_eight_byte_key_check_agrees_with_the_byte_rule_everywhere() {
        // Every byte value at every position of keys of 1 to 40 bytes, among good bytes
        // and beside high bytes (0x80 and up, which must not set off a neighbour).
        for len in 1..=40usize {
            for fill in [b'a', 0x80, 0xff, b'!', 0x7e] {
                for pos in 0..len {
                    for b in 0..=255u8 {
                        let mut key = vec![fill; len];
                        key[pos] = b;
                        assert_eq!(
                            has_bad_key_byte(&key),
                            key.iter().any(|&k| bad_key_byte(k)),
                            "{key:?}"
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn only_expiries_and_flushes_involve_time() {
        let set = |exptime| Command::Store {
            verb: StoreVerb::Set,
            key: b"k".to_vec(),
            flags: 0,
            exptime,
            data: b"v".to_vec(),
            noreply: false,
        };
        assert!(!set(0).involves_time());
        assert!(set(5).involves_time());
        assert!(set(-1).involves_time());
        let touch = |exptime| Command::Touch {
            key: b"k".to_vec(),
            exptime,
            noreply: false,
        };
        assert!(!touch(0).involves_time());
        assert!(touch(1).involves_time());
        assert!(Command::FlushAll {
            delay: None,
            noreply: false
        }
        .involves_time());
        assert!(!Command::Get {
            with_cas: true,
            keys: vec![b"k".to_vec()]
        }
        .involves_time());
    }

    #[test]
    fn replies_encode_as_memcached_sends_them() {
        assert_eq!(Reply::Stored.to_bytes(), b"STORED\r\n");
        assert_eq!(Reply::Number(9).to_bytes(), b"9\r\n");
        assert_eq!(
            Reply::ClientError(ClientError::BadDeleteUsage).to_bytes(),
            b"CLIENT_ERROR bad command line format.  Usage: delete <key> [noreply]\r\n"
        );
        let v = Reply::Values(vec![Value {
            key: b"k".to_vec(),
            flags: 5,
            data: b"ab".to_vec(),
            cas: Some(3),
        }]);
        assert_eq!(v.to_bytes(), b"VALUE k 5 2 3\r\nab\r\nEND\r\n");
        assert_eq!(Reply::Values(vec![]).to_bytes(), b"END\r\n");
    }

    #[test]
    fn keys_are_validated_before_sending() {
        assert_eq!(validate_key(b""), Err(CommandError::EmptyKey));
        assert!(validate_key(&[b'a'; 250]).is_ok());
        let err = validate_key(&[b'a'; 251]).unwrap_err();
        assert_eq!(
            err.to_string(),
            format!(
                "bad key \"{}…\": expected at most 250 bytes, found 251",
                "a".repeat(40)
            )
        );
        let err = validate_key(b"a b").unwrap_err();
        assert_eq!(
            err.to_string(),
            "bad key \"a b\": expected no whitespace or control bytes, found byte 0x20 at position 1"
        );
    }
}
