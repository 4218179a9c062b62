//! memcached's meta protocol (1.6.18): `mg`, `ms`, `md`, `ma`, `me` and `mn`, their flags
//! and their replies, as values of the one vocabulary ([`super::Command::Meta`],
//! [`super::Reply::Meta`], [`super::Reply::MetaDebug`]).
//!
//! A meta command is a verb, a key and an ordered list of single-letter flags, some with a
//! token (`T30`, `Oabc`); `ms` adds a data block. The order matters: memcached 1.6.18
//! builds its reply and applies `T`/`N` in the order the flags were sent (`mg k t T30`
//! reports the TTL before the touch, `mg k T30 t` after it), and echoes return flags in
//! that order. A key sent with the `b` flag is base64 on the wire; a [`MetaCommand`]
//! holds it decoded (the item's real key) and the encoder writes it back in base64.
//!
//! What 1.6.18 does *not* have, and kvsim therefore answers as it does
//! (`CLIENT_ERROR invalid flag`): the `E` (explicit cas) flag of later releases, lowercase
//! `ms`/`ma` modes, `x` (removal of a value on `md`).

use super::show_bytes;
use serde::{Deserialize, Serialize};
use std::fmt;

/// The most tokens memcached accepts on a meta command line, the command, key and (for
/// `ms`) the data length included, plus the tokenizer's terminal token
/// (`MFLAG_MAX_OPT_LENGTH`): more is `CLIENT_ERROR options flags [are] too long`.
pub const META_MAX_TOKENS: usize = 20;

/// The longest opaque token (`O` included) memcached echoes
/// (`MFLAG_MAX_OPAQUE_LENGTH`): a longer one is `CLIENT_ERROR opaque token too long`.
pub const META_OPAQUE_MAX: usize = 32;

/// Which meta command.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum MetaVerb {
    /// `mg <key> <flags>*`: meta get.
    Get,
    /// `ms <key> <datalen> <flags>*` and a data block: meta set.
    Set,
    /// `md <key> <flags>*`: meta delete (or invalidate, with `I`).
    Delete,
    /// `ma <key> <flags>*`: meta arithmetic.
    Arith,
    /// `me <key> [b]`: meta debug, the item's internals in words.
    Debug,
    /// `mn`: no-op; answers `MN` (and makes memcached send what it holds).
    Noop,
}

impl MetaVerb {
    /// The protocol word: `mg`, `ms`, `md`, `ma`, `me`, `mn`.
    pub fn as_str(self) -> &'static str {
        match self {
            MetaVerb::Get => "mg",
            MetaVerb::Set => "ms",
            MetaVerb::Delete => "md",
            MetaVerb::Arith => "ma",
            MetaVerb::Debug => "me",
            MetaVerb::Noop => "mn",
        }
    }
}

/// One flag of a meta command, as 1.6.18's `_meta_flag_preparse` accepts it. Every
/// command accepts every flag (those that mean nothing to it are ignored); numbers are
/// held as memcached holds them after its 32-bit truncation (`N`, `R`, `T`: `int32_t`;
/// `F`: `uint32_t`).
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum MetaFlag {
    /// `b`: the key is base64 on the wire (and a returned key too).
    Base64Key,
    /// `c`: return the cas unique.
    ReturnCas,
    /// `f`: return the client flags.
    ReturnFlags,
    /// `h`: return whether the item was fetched before (`h0`/`h1`).
    ReturnHit,
    /// `k`: return the key.
    ReturnKey,
    /// `l`: return the seconds since the item was last accessed.
    ReturnLastAccess,
    /// `O<token>`: an opaque token echoed in the reply (at most 31 bytes).
    Opaque(Vec<u8>),
    /// `q`: quiet mode: the nominal reply is not sent (`EN` for `mg`, `HD` for
    /// `ms`/`md`/`ma`); errors always are.
    Quiet,
    /// `s`: return the value's size.
    ReturnSize,
    /// `t`: return the seconds to live left (`-1`: forever).
    ReturnTtl,
    /// `u`: do not bump the item (LRU, fetched flag, access time).
    NoBump,
    /// `v`: return the value (`VA <size>` and a data block instead of `HD`).
    ReturnValue,
    /// `N<ttl>`: on a miss, create the item (`mg`: empty, `ma`: the initial value) with
    /// this TTL; `mg` answers the creator `W`.
    Vivify(i64),
    /// `R<ttl>`: `mg`: win the right to recache (`W`) when the item has less TTL left.
    Recache(i64),
    /// `T<ttl>`: the new TTL (`mg`, `ma`: touch; `ms`: the item's; `md I`: the stale item's).
    Ttl(i64),
    /// `F<flags>`: `ms`: the item's client flags.
    ClientFlags(u32),
    /// `C<cas>`: compare the cas unique (`ms`, `md`, `ma`).
    CompareCas(u64),
    /// `I`: invalidate: `md` marks the item stale; `ms` with `C` stores a value whose
    /// unique is older than the item's, marked stale.
    Invalidate,
    /// `M<mode>`: `ms`: `S` set, `E` add, `A` append, `P` prepend, `R` replace; `ma`:
    /// `I`/`+` increment, `D`/`-` decrement.
    Mode(u8),
    /// `J<n>`: `ma`: the initial value of an item created by `N`.
    Initial(u64),
    /// `D<n>`: `ma`: the delta (default 1).
    Delta(u64),
    /// `P<token>` or `L<token>`: a proxy hint, ignored by memcached.
    Hint {
        /// `b'P'` or `b'L'`.
        letter: u8,
        /// The token after the letter.
        text: Vec<u8>,
    },
}

impl MetaFlag {
    /// The flag's letter (its token's first byte).
    pub fn letter(&self) -> u8 {
        match self {
            MetaFlag::Base64Key => b'b',
            MetaFlag::ReturnCas => b'c',
            MetaFlag::ReturnFlags => b'f',
            MetaFlag::ReturnHit => b'h',
            MetaFlag::ReturnKey => b'k',
            MetaFlag::ReturnLastAccess => b'l',
            MetaFlag::Opaque(_) => b'O',
            MetaFlag::Quiet => b'q',
            MetaFlag::ReturnSize => b's',
            MetaFlag::ReturnTtl => b't',
            MetaFlag::NoBump => b'u',
            MetaFlag::ReturnValue => b'v',
            MetaFlag::Vivify(_) => b'N',
            MetaFlag::Recache(_) => b'R',
            MetaFlag::Ttl(_) => b'T',
            MetaFlag::ClientFlags(_) => b'F',
            MetaFlag::CompareCas(_) => b'C',
            MetaFlag::Invalidate => b'I',
            MetaFlag::Mode(_) => b'M',
            MetaFlag::Initial(_) => b'J',
            MetaFlag::Delta(_) => b'D',
            MetaFlag::Hint { letter, .. } => *letter,
        }
    }

    /// Writes the flag's token (`T30`, `Oabc`, `v`).
    pub fn encode(&self, out: &mut Vec<u8>) {
        out.push(self.letter());
        match self {
            MetaFlag::Opaque(text) | MetaFlag::Hint { text, .. } => out.extend_from_slice(text),
            MetaFlag::Vivify(n) | MetaFlag::Recache(n) | MetaFlag::Ttl(n) => {
                out.extend_from_slice(n.to_string().as_bytes())
            }
            MetaFlag::ClientFlags(n) => out.extend_from_slice(n.to_string().as_bytes()),
            MetaFlag::CompareCas(n) | MetaFlag::Initial(n) | MetaFlag::Delta(n) => {
                out.extend_from_slice(n.to_string().as_bytes())
            }
            MetaFlag::Mode(m) => out.push(*m),
            _ => {}
        }
    }

    /// Whether the flag makes memcached hold the item's lock and bump it only after the
    /// reply is built (`of.locked`: `N`, `T`, `R`, `l`, `h`), so `h`/`l` report the state
    /// before this command's bump.
    pub(crate) fn locks(&self) -> bool {
        matches!(
            self,
            MetaFlag::Vivify(_)
                | MetaFlag::Ttl(_)
                | MetaFlag::Recache(_)
                | MetaFlag::ReturnLastAccess
                | MetaFlag::ReturnHit
        )
    }
}

impl fmt::Display for MetaFlag {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut token = Vec::new();
        self.encode(&mut token);
        f.write_str(&show_bytes(&token))
    }
}

/// A meta command: verb, key, flags in the order sent, and for `ms` the data block.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct MetaCommand {
    /// Which command.
    pub verb: MetaVerb,
    /// The key, decoded when the `b` flag is given (empty for `mn`).
    pub key: Vec<u8>,
    /// The flags, in order.
    pub flags: Vec<MetaFlag>,
    /// `ms`'s data block (empty for the others).
    pub data: Vec<u8>,
}

impl MetaCommand {
    /// A command without flags or data.
    pub fn new(verb: MetaVerb, key: &[u8]) -> MetaCommand {
        MetaCommand {
            verb,
            key: key.to_vec(),
            flags: Vec::new(),
            data: Vec::new(),
        }
    }

    /// `mg <key> <flags>`.
    pub fn get(key: &[u8], flags: Vec<MetaFlag>) -> MetaCommand {
        MetaCommand {
            flags,
            ..MetaCommand::new(MetaVerb::Get, key)
        }
    }

    /// `ms <key> <len> <flags>` with `data`.
    pub fn set(key: &[u8], data: &[u8], flags: Vec<MetaFlag>) -> MetaCommand {
        MetaCommand {
            flags,
            data: data.to_vec(),
            ..MetaCommand::new(MetaVerb::Set, key)
        }
    }

    /// `md <key> <flags>`.
    pub fn delete(key: &[u8], flags: Vec<MetaFlag>) -> MetaCommand {
        MetaCommand {
            flags,
            ..MetaCommand::new(MetaVerb::Delete, key)
        }
    }

    /// `ma <key> <flags>`.
    pub fn arith(key: &[u8], flags: Vec<MetaFlag>) -> MetaCommand {
        MetaCommand {
            flags,
            ..MetaCommand::new(MetaVerb::Arith, key)
        }
    }

    /// Whether a flag with this letter was given.
    pub fn has(&self, letter: u8) -> bool {
        self.flags.iter().any(|f| f.letter() == letter)
    }

    /// The first flag with this letter.
    pub fn flag(&self, letter: u8) -> Option<&MetaFlag> {
        self.flags.iter().find(|f| f.letter() == letter)
    }

    /// Whether the key is base64 on the wire (`b`).
    pub fn base64(&self) -> bool {
        self.has(b'b')
    }

    /// Whether quiet mode (`q`) was asked for.
    pub fn quiet(&self) -> bool {
        self.has(b'q')
    }

    /// The key as it goes on the wire: base64 with `b`, else as is.
    pub fn wire_key(&self) -> Vec<u8> {
        if self.base64() && self.verb != MetaVerb::Noop {
            base64_encode(&self.key)
        } else {
            self.key.clone()
        }
    }

    /// memcached's `ntokens` for this command's line: the command, the key, the data
    /// length (`ms`), the flags and the terminal token.
    pub fn ntokens(&self) -> usize {
        3 + usize::from(self.verb == MetaVerb::Set) + self.flags.len()
    }

    /// What 1.6.18's `_meta_flag_preparse` answers for these flags, written out: the
    /// first letter seen twice (or a byte of 127 or more) is `duplicate flag`, a letter it
    /// does not know `invalid flag`. (Malformed tokens cannot be held by a [`MetaFlag`].)
    pub(crate) fn preparse_error(&self) -> Option<super::ClientError> {
        let mut seen = [false; 128];
        for flag in &self.flags {
            let o = flag.letter();
            if o >= 127 || seen[o as usize] {
                return Some(super::ClientError::DuplicateFlag);
            }
            seen[o as usize] = true;
            if let MetaFlag::Hint { letter, .. } = flag {
                if !matches!(letter, b'P' | b'L') {
                    return Some(super::ClientError::InvalidFlag);
                }
            }
        }
        None
    }
}

/// A meta reply's return code.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum MetaStatus {
    /// `HD`: success, no value.
    Hd,
    /// `VA <size>`: success, with a value.
    Va,
    /// `EN`: a miss (`mg`, `me`).
    En,
    /// `NF`: not found (`md`, `ma`, `ms` with `C` on a missing key).
    Nf,
    /// `NS`: not stored (`ms` modes add/replace/append/prepend).
    Ns,
    /// `EX`: the compared cas unique did not match.
    Ex,
    /// `MN`: the no-op's answer.
    Mn,
}

impl MetaStatus {
    /// The two letters on the wire.
    pub fn as_str(self) -> &'static str {
        match self {
            MetaStatus::Hd => "HD",
            MetaStatus::Va => "VA",
            MetaStatus::En => "EN",
            MetaStatus::Nf => "NF",
            MetaStatus::Ns => "NS",
            MetaStatus::Ex => "EX",
            MetaStatus::Mn => "MN",
        }
    }
}

/// One returned flag of a meta reply, in the order memcached writes them.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum MetaRet {
    /// `c<cas>`.
    Cas(u64),
    /// `f<flags>`.
    Flags(u32),
    /// `h0` / `h1`: whether the item had been fetched before this command.
    Hit(bool),
    /// `k<key>`, followed by a `b` token when the key is written in base64.
    Key {
        /// The key (decoded).
        key: Vec<u8>,
        /// Written in base64, with a `b` token after it.
        base64: bool,
    },
    /// `l<seconds>` since the last access.
    LastAccess(u32),
    /// `O<token>`: the opaque token, echoed.
    Opaque(Vec<u8>),
    /// `s<size>` of the value.
    Size(u32),
    /// `t<seconds>` to live: `-1` for never, else memcached's unsigned 32-bit difference.
    Ttl(i64),
    /// `W`: this client won the right to recache the item.
    Win,
    /// `X`: the item is stale.
    Stale,
    /// `Z`: another client already won the right to recache.
    AlreadyWon,
}

impl MetaRet {
    /// Writes the flag's token(s): `c5`, `kfoo`, `kZm9v b`, `W`.
    pub fn encode(&self, out: &mut Vec<u8>) {
        let mut num = |letter: u8, n: &dyn fmt::Display| {
            out.push(letter);
            out.extend_from_slice(n.to_string().as_bytes());
        };
        match self {
            MetaRet::Cas(n) => num(b'c', n),
            MetaRet::Flags(n) => num(b'f', n),
            MetaRet::Hit(h) => num(b'h', &u8::from(*h)),
            MetaRet::LastAccess(n) => num(b'l', n),
            MetaRet::Size(n) => num(b's', n),
            MetaRet::Ttl(n) => num(b't', n),
            MetaRet::Key { key, base64 } => {
                out.push(b'k');
                if *base64 {
                    out.extend_from_slice(&base64_encode(key));
                    out.extend_from_slice(b" b");
                } else {
                    out.extend_from_slice(key);
                }
            }
            MetaRet::Opaque(text) => {
                out.push(b'O');
                out.extend_from_slice(text);
            }
            MetaRet::Win => out.push(b'W'),
            MetaRet::Stale => out.push(b'X'),
            MetaRet::AlreadyWon => out.push(b'Z'),
        }
    }
}

/// A meta reply: `HD`/`VA`/`EN`/`NF`/`NS`/`EX`/`MN` with returned flags, and for `VA` the
/// value.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct MetaReply {
    /// The return code.
    pub status: MetaStatus,
    /// The returned flags, in order.
    pub flags: Vec<MetaRet>,
    /// The value (`Some` exactly when the status is `VA`).
    pub value: Option<Vec<u8>>,
    /// memcached sends nothing for this reply because the command asked for quiet mode
    /// (`q`) and this is its nominal outcome. The store still returns it (the simulator's
    /// client sees it); the wire codec drops it, and a reply read off the wire never is.
    pub quiet: bool,
}

impl MetaReply {
    /// A reply with this status and nothing else.
    pub fn status(status: MetaStatus) -> MetaReply {
        MetaReply {
            status,
            flags: Vec::new(),
            value: None,
            quiet: false,
        }
    }

    /// Whether a returned flag of this kind is present (`W`, `X`, `Z`: compare with
    /// [`MetaRet::Win`], …).
    pub fn has(&self, ret: &MetaRet) -> bool {
        self.flags.contains(ret)
    }

    /// The returned cas unique (`c`), if any.
    pub fn cas(&self) -> Option<u64> {
        self.flags.iter().find_map(|f| match f {
            MetaRet::Cas(c) => Some(*c),
            _ => None,
        })
    }

    /// The returned TTL (`t`), if any.
    pub fn ttl(&self) -> Option<i64> {
        self.flags.iter().find_map(|f| match f {
            MetaRet::Ttl(t) => Some(*t),
            _ => None,
        })
    }
}

/// `me`'s answer for a hit: `ME <key> exp=… la=… cas=… fetch=… cls=… size=…`.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct MetaDebug {
    /// The key as written: base64 when the item was stored with a base64 key.
    pub key: Vec<u8>,
    /// `exp`: `-1` for never, else `current_time - exptime` as a signed 32-bit number
    /// (negative while the item lives: memcached prints it that way round).
    pub exp: i64,
    /// `la`: seconds since the last access.
    pub la: u64,
    /// `cas`: the cas unique.
    pub cas: u64,
    /// `fetch`: whether the item was fetched since it was stored.
    pub fetched: bool,
    /// `cls`: the slab class (default slab sizes: 96 bytes × 1.25 up to 512 KiB).
    pub class: u32,
    /// `size`: the item's total size.
    pub size: u64,
}

impl MetaDebug {
    /// Writes the `ME` line.
    pub fn encode(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(b"ME ");
        out.extend_from_slice(&self.key);
        out.extend_from_slice(
            format!(
                " exp={} la={} cas={} fetch={} cls={} size={}\r\n",
                self.exp,
                self.la,
                self.cas,
                if self.fetched { "yes" } else { "no" },
                self.class,
                self.size
            )
            .as_bytes(),
        );
    }
}

impl fmt::Display for MetaCommand {
    /// `mg key v c t`, `ms key "xy" T100 c`, `mn`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.verb.as_str())?;
        if self.verb != MetaVerb::Noop {
            write!(f, " {}", show_bytes(&self.key))?;
        }
        if self.verb == MetaVerb::Set {
            write!(f, " {:?}", show_bytes(&self.data))?;
        }
        for flag in &self.flags {
            write!(f, " {flag}")?;
        }
        Ok(())
    }
}

impl fmt::Display for MetaReply {
    /// `HD c5`, `VA 2 c5 t-1 "xy"`, `EN`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.status.as_str())?;
        if let Some(v) = &self.value {
            write!(f, " {}", v.len())?;
        }
        for ret in &self.flags {
            let mut token = Vec::new();
            ret.encode(&mut token);
            write!(f, " {}", show_bytes(&token))?;
        }
        if let Some(v) = &self.value {
            write!(f, " {:?}", show_bytes(v))?;
        }
        Ok(())
    }
}

impl fmt::Display for MetaDebug {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut line = Vec::new();
        self.encode(&mut line);
        line.truncate(line.len() - 2);
        f.write_str(&show_bytes(&line))
    }
}

const BASE64_TABLE: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/// Base64 as memcached's `base64_encode` writes it: the standard alphabet, `=` padding,
/// no line breaks.
pub fn base64_encode(src: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(src.len().div_ceil(3) * 4);
    for chunk in src.chunks(3) {
        let b = [
            chunk[0],
            chunk.get(1).copied().unwrap_or(0),
            chunk.get(2).copied().unwrap_or(0),
        ];
        out.push(BASE64_TABLE[(b[0] >> 2) as usize]);
        out.push(BASE64_TABLE[(((b[0] & 0x03) << 4) | (b[1] >> 4)) as usize]);
        out.push(if chunk.len() > 1 {
            BASE64_TABLE[(((b[1] & 0x0f) << 2) | (b[2] >> 6)) as usize]
        } else {
            b'='
        });
        out.push(if chunk.len() > 2 {
            BASE64_TABLE[(b[2] & 0x3f) as usize]
        } else {
            b'='
        });
    }
    out
}

/// The value of a base64 byte in memcached's decoding table (`=` is 0), `None` for a
/// byte it skips.
fn base64_value(b: u8) -> Option<u8> {
    match b {
        b'A'..=b'Z' => Some(b - b'A'),
        b'a'..=b'z' => Some(b - b'a' + 26),
        b'0'..=b'9' => Some(b - b'0' + 52),
        b'+' => Some(62),
        b'/' => Some(63),
        b'=' => Some(0),
        _ => None,
    }
}

/// Base64 as memcached 1.6.18's `base64_decode` reads it: bytes outside the alphabet
/// (and `=`) are skipped; the rest must be a non-zero multiple of 4; the first group of 4
/// with `=` in it ends the input (one `=` drops one byte, two drop two, more is an
/// error). `None` where memcached's answer is 0 bytes (an error to every caller).
pub fn base64_decode(src: &[u8]) -> Option<Vec<u8>> {
    let count = src.iter().filter(|&&b| base64_value(b).is_some()).count();
    if count == 0 || count & 3 != 0 {
        return None;
    }
    let mut out = Vec::with_capacity(count / 4 * 3);
    let mut block = [0u8; 4];
    let mut n = 0;
    let mut pad = 0;
    for &b in src {
        let Some(v) = base64_value(b) else { continue };
        if b == b'=' {
            pad += 1;
        }
        block[n] = v;
        n += 1;
        if n == 4 {
            out.push((block[0] << 2) | (block[1] >> 4));
            out.push((block[1] << 4) | (block[2] >> 2));
            out.push((block[2] << 6) | block[3]);
            n = 0;
            if pad > 0 {
                match pad {
                    1 => out.truncate(out.len() - 1),
                    2 => out.truncate(out.len() - 2),
                    _ => return None,
                }
                break;
            }
        }
    }
    (!out.is_empty()).then_some(out)
}

/// memcached's slab class for an item of `size` total bytes, with the default slab
/// sizes (`-n 48 -f 1.25`, 1 MiB pages, 512 KiB largest chunk): `0` for an item larger
/// than `item_size_max`.
pub fn slab_class(size: usize, item_size_max: usize) -> u32 {
    const CHUNK_MAX: usize = 512 * 1024;
    if size == 0 || size > item_size_max {
        return 0;
    }
    let mut chunk: u32 = 96;
    let mut class = 1;
    loop {
        if f64::from(chunk) >= CHUNK_MAX as f64 / 1.25 {
            // The largest class holds everything up to the largest chunk, and chunked
            // items beyond it.
            return class;
        }
        // Aligned up to 8 bytes (CHUNK_ALIGN_BYTES).
        chunk = (chunk + 7) & !7;
        if size <= chunk as usize {
            return class;
        }
        chunk = (f64::from(chunk) * 1.25) as u32;
        class += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_as_memcached_reads_it() {
        assert_eq!(base64_encode(b"abc"), b"YWJj");
        assert_eq!(base64_encode(b"a"), b"YQ==");
        assert_eq!(base64_encode(b"ab"), b"YWI=");
        assert_eq!(base64_decode(b"YWJj").as_deref(), Some(&b"abc"[..]));
        assert_eq!(base64_decode(b"YQ==").as_deref(), Some(&b"a"[..]));
        assert_eq!(base64_decode(b"a"), None);
        assert_eq!(base64_decode(b"===="), None);
        // Bytes outside the alphabet are skipped; a padded group ends the input.
        assert_eq!(base64_decode(b"Y\tWJj").as_deref(), Some(&b"abc"[..]));
        assert_eq!(base64_decode(b"YQ==YWJj").as_deref(), Some(&b"a"[..]));
        for len in 0..20u8 {
            let bytes: Vec<u8> = (0..len).map(|i| i.wrapping_mul(37)).collect();
            if !bytes.is_empty() {
                assert_eq!(base64_decode(&base64_encode(&bytes)), Some(bytes));
            }
        }
    }

    #[test]
    fn slab_classes_follow_the_defaults() {
        assert_eq!(slab_class(61, 1 << 20), 1);
        assert_eq!(slab_class(96, 1 << 20), 1);
        assert_eq!(slab_class(97, 1 << 20), 2);
        assert_eq!(slab_class(120, 1 << 20), 2);
        assert_eq!(slab_class(121, 1 << 20), 3);
        assert_eq!(slab_class(1 << 20, 1 << 20), slab_class(600_000, 1 << 20));
        assert_eq!(slab_class((1 << 20) + 1, 1 << 20), 0);
    }
}
