//! The client side, inbound: reply bytes in, [`Reply`]s out.
//!
//! Replies are self-describing (a `VALUE` block carries its length), so the parser needs
//! no knowledge of which command was sent; the caller matches replies to commands in order.

use super::WireError;
use crate::command::meta::base64_decode;
use crate::command::{
    ClientError, MetaDebug, MetaReply, MetaRet, MetaStatus, Reply, ServerError, Value,
};

/// The longest reply line accepted (a `VALUE` line with a 250-byte key is under 320).
pub const REPLY_LINE_MAX: usize = 4096;

/// The largest data block accepted in a `VALUE` (memcached's `-I` maximum, 128 MiB).
pub const VALUE_DATA_MAX: usize = 128 * 1024 * 1024;

#[derive(Clone, Debug)]
struct PendingValue {
    key: Vec<u8>,
    flags: u32,
    len: usize,
    cas: Option<u64>,
}

/// An incremental parser of memcached text-protocol replies (the client's side).
#[derive(Clone, Debug, Default)]
pub struct ReplyParser {
    buf: Vec<u8>,
    pos: usize,
    values: Vec<Value>,
    in_values: bool,
    pending: Option<PendingValue>,
    /// A meta `VA` line read, its data block not yet: the reply and the block's length.
    pending_meta: Option<(MetaReply, usize)>,
}

impl ReplyParser {
    /// An empty parser.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds bytes read from the connection.
    pub fn feed(&mut self, bytes: &[u8]) {
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

    /// Whether a reply has started but not finished (some `VALUE`s read, no `END` yet, or
    /// bytes of an unfinished line).
    pub fn mid_reply(&self) -> bool {
        self.in_values || self.pending_meta.is_some() || self.buffered() > 0
    }

    /// The next complete reply, `Ok(None)` until more bytes are fed, or an error when the
    /// bytes are not a memcached reply (the connection is then out of step: drop it).
    pub fn next_reply(&mut self) -> Result<Option<Reply>, WireError> {
        loop {
            if let Some((_, len)) = &self.pending_meta {
                let need = len + 2;
                if self.buffered() < need {
                    return Ok(None);
                }
                let block = &self.buf[self.pos..self.pos + need];
                if !block.ends_with(b"\r\n") {
                    return Err(WireError::BadDataTerminator {
                        found: crate::command::show_bytes(&block[need - 2..]),
                    });
                }
                let data = block[..need - 2].to_vec();
                self.pos += need;
                let (mut reply, _) = self.pending_meta.take().expect("checked above");
                reply.value = Some(data);
                return Ok(Some(Reply::Meta(reply)));
            }
            if let Some(p) = &self.pending {
                let need = p.len + 2;
                if self.buffered() < need {
                    return Ok(None);
                }
                let block = &self.buf[self.pos..self.pos + need];
                if !block.ends_with(b"\r\n") {
                    return Err(WireError::BadDataTerminator {
                        found: crate::command::show_bytes(&block[p.len..]),
                    });
                }
                let p = self.pending.take().expect("checked above");
                self.values.push(Value {
                    key: p.key,
                    flags: p.flags,
                    data: block[..p.len].to_vec(),
                    cas: p.cas,
                });
                self.pos += need;
                continue;
            }
            let rest = &self.buf[self.pos..];
            let Some(nl) = rest.windows(2).position(|w| w == b"\r\n") else {
                if rest.len() > REPLY_LINE_MAX {
                    return Err(WireError::LineTooLong {
                        max: REPLY_LINE_MAX,
                    });
                }
                return Ok(None);
            };
            let line = rest[..nl].to_vec();
            self.pos += nl + 2;
            if self.in_values {
                if line == b"END" {
                    self.in_values = false;
                    return Ok(Some(Reply::Values(std::mem::take(&mut self.values))));
                }
                if line.starts_with(b"VALUE ") {
                    self.pending = Some(parse_value_line(&line)?);
                    continue;
                }
                return Err(WireError::UnexpectedLine {
                    expected: "VALUE or END",
                    found: crate::command::show_bytes(&line),
                });
            }
            if line.starts_with(b"VALUE ") {
                self.in_values = true;
                self.pending = Some(parse_value_line(&line)?);
                continue;
            }
            if line.starts_with(b"VA ") {
                self.pending_meta = Some(parse_meta_value_line(&line)?);
                continue;
            }
            return parse_status_line(&line).map(Some);
        }
    }
}

fn unexpected(expected: &'static str, line: &[u8]) -> WireError {
    WireError::UnexpectedLine {
        expected,
        found: crate::command::show_bytes(line),
    }
}

fn parse_status_line(line: &[u8]) -> Result<Reply, WireError> {
    let reply = match line {
        b"END" => Reply::Values(Vec::new()),
        b"STORED" => Reply::Stored,
        b"NOT_STORED" => Reply::NotStored,
        b"EXISTS" => Reply::Exists,
        b"NOT_FOUND" => Reply::NotFound,
        b"DELETED" => Reply::Deleted,
        b"TOUCHED" => Reply::Touched,
        b"OK" => Reply::Ok,
        b"ERROR" => Reply::Error,
        _ => {
            if line.starts_with(b"ME ") {
                return parse_debug_line(line).map(Reply::MetaDebug);
            }
            if let Some(status) = meta_status(line) {
                let mut reply = MetaReply::status(status);
                reply.flags = parse_meta_flags(line, &line[2..])?;
                return Ok(Reply::Meta(reply));
            }
            if let Some(text) = line.strip_prefix(b"CLIENT_ERROR ") {
                return ClientError::ALL
                    .into_iter()
                    .find(|e| e.as_str().as_bytes() == text)
                    .map(Reply::ClientError)
                    .ok_or_else(|| unexpected("a known CLIENT_ERROR text", line));
            }
            if let Some(text) = line.strip_prefix(b"SERVER_ERROR ") {
                return ServerError::ALL
                    .into_iter()
                    .find(|e| e.as_str().as_bytes() == text)
                    .map(Reply::ServerError)
                    .ok_or_else(|| unexpected("a known SERVER_ERROR text", line));
            }
            return parse_decimal(line)
                .map(Reply::Number)
                .ok_or_else(|| unexpected("a reply line", line));
        }
    };
    Ok(reply)
}

/// A plain decimal number, as memcached prints it (no sign, no spaces).
fn parse_decimal(s: &[u8]) -> Option<u64> {
    if s.is_empty() || s.len() > 20 || !s.iter().all(u8::is_ascii_digit) {
        return None;
    }
    std::str::from_utf8(s).ok()?.parse().ok()
}

/// The meta return code a line starts with (`HD`, `EN`, `NF`, `NS`, `EX`, `MN`, alone or
/// followed by a space): `VA` has a line of its own.
fn meta_status(line: &[u8]) -> Option<MetaStatus> {
    if line.len() > 2 && line[2] != b' ' {
        return None;
    }
    Some(match line.get(..2)? {
        b"HD" => MetaStatus::Hd,
        b"EN" => MetaStatus::En,
        b"NF" => MetaStatus::Nf,
        b"NS" => MetaStatus::Ns,
        b"EX" => MetaStatus::Ex,
        b"MN" => MetaStatus::Mn,
        _ => return None,
    })
}

/// A number of a meta reply token.
fn meta_num<T: std::str::FromStr>(line: &[u8], digits: &[u8]) -> Result<T, WireError> {
    std::str::from_utf8(digits)
        .ok()
        .filter(|d| !d.is_empty() && d.len() <= 20)
        .and_then(|d| d.parse().ok())
        .ok_or_else(|| unexpected("a meta flag with a number", line))
}

/// The returned flags of a meta reply line: `rest` is what follows its code.
fn parse_meta_flags(line: &[u8], rest: &[u8]) -> Result<Vec<MetaRet>, WireError> {
    let tokens: Vec<&[u8]> = rest
        .split(|&b| b == b' ')
        .filter(|t| !t.is_empty())
        .collect();
    let mut flags = Vec::with_capacity(tokens.len());
    let mut i = 0;
    while i < tokens.len() {
        let t = tokens[i];
        let arg = &t[1..];
        let flag = match t[0] {
            b'c' => MetaRet::Cas(meta_num(line, arg)?),
            b'f' => MetaRet::Flags(meta_num(line, arg)?),
            b'h' => match arg {
                b"0" => MetaRet::Hit(false),
                b"1" => MetaRet::Hit(true),
                _ => return Err(unexpected("h0 or h1", line)),
            },
            b'l' => MetaRet::LastAccess(meta_num(line, arg)?),
            b's' => MetaRet::Size(meta_num(line, arg)?),
            b't' => MetaRet::Ttl(meta_num(line, arg)?),
            b'O' => MetaRet::Opaque(arg.to_vec()),
            b'W' if arg.is_empty() => MetaRet::Win,
            b'X' if arg.is_empty() => MetaRet::Stale,
            b'Z' if arg.is_empty() => MetaRet::AlreadyWon,
            b'k' if tokens.get(i + 1) == Some(&&b"b"[..]) => {
                i += 1;
                MetaRet::Key {
                    key: base64_decode(arg).ok_or_else(|| unexpected("a base64 key", line))?,
                    base64: true,
                }
            }
            b'k' => MetaRet::Key {
                key: arg.to_vec(),
                base64: false,
            },
            _ => return Err(unexpected("a meta return flag", line)),
        };
        flags.push(flag);
        i += 1;
    }
    Ok(flags)
}

/// `VA <size> <flags>*`: the reply (its value to come) and the value's length.
fn parse_meta_value_line(line: &[u8]) -> Result<(MetaReply, usize), WireError> {
    let rest = &line[3..];
    let end = rest.iter().position(|&b| b == b' ').unwrap_or(rest.len());
    let len = parse_decimal(&rest[..end])
        .and_then(|l| usize::try_from(l).ok())
        .filter(|&l| l <= VALUE_DATA_MAX)
        .ok_or_else(|| unexpected("a VA length of at most 128 MiB", line))?;
    let mut reply = MetaReply::status(MetaStatus::Va);
    reply.flags = parse_meta_flags(line, &rest[end..])?;
    Ok((reply, len))
}

/// `ME <key> exp=<n> la=<n> cas=<n> fetch=<yes|no> cls=<n> size=<n>`.
fn parse_debug_line(line: &[u8]) -> Result<MetaDebug, WireError> {
    let words: Vec<&[u8]> = line.split(|&b| b == b' ').collect();
    let bad = || unexpected("ME <key> exp= la= cas= fetch= cls= size=", line);
    if words.len() != 8 || words[1].is_empty() {
        return Err(bad());
    }
    let field = |i: usize, name: &[u8]| -> Result<&[u8], WireError> {
        words[i]
            .strip_prefix(name)
            .and_then(|w| w.strip_prefix(b"="))
            .ok_or_else(bad)
    };
    let num = |i: usize, name: &[u8]| -> Result<u64, WireError> {
        parse_decimal(field(i, name)?).ok_or_else(bad)
    };
    let exp = field(2, b"exp")?;
    let exp = match exp.strip_prefix(b"-") {
        Some(digits) => -(parse_decimal(digits).ok_or_else(bad)? as i64),
        None => parse_decimal(exp).ok_or_else(bad)? as i64,
    };
    Ok(MetaDebug {
        key: words[1].to_vec(),
        exp,
        la: num(3, b"la")?,
        cas: num(4, b"cas")?,
        fetched: match field(5, b"fetch")? {
            b"yes" => true,
            b"no" => false,
            _ => return Err(bad()),
        },
        class: u32::try_from(num(6, b"cls")?).map_err(|_| bad())?,
        size: num(7, b"size")?,
    })
}

/// `VALUE <key> <flags> <bytes> [<cas unique>]`.
fn parse_value_line(line: &[u8]) -> Result<PendingValue, WireError> {
    let words: Vec<&[u8]> = line.split(|&b| b == b' ').collect();
    if !(words.len() == 4 || words.len() == 5) || words[1].is_empty() {
        return Err(unexpected("VALUE <key> <flags> <bytes> [<cas>]", line));
    }
    let flags = parse_decimal(words[2])
        .and_then(|f| u32::try_from(f).ok())
        .ok_or_else(|| unexpected("VALUE flags as a 32-bit number", line))?;
    let len = parse_decimal(words[3])
        .and_then(|l| usize::try_from(l).ok())
        .filter(|&l| l <= VALUE_DATA_MAX)
        .ok_or_else(|| unexpected("a VALUE length of at most 128 MiB", line))?;
    let cas = match words.get(4) {
        Some(w) => Some(parse_decimal(w).ok_or_else(|| unexpected("a cas unique", line))?),
        None => None,
    };
    Ok(PendingValue {
        key: words[1].to_vec(),
        flags,
        len,
        cas,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replies_parse_incrementally() {
        let bytes = b"STORED\r\nVALUE k 5 4 7\r\na\r\nb\r\nVALUE j 0 0 8\r\n\r\nEND\r\n42\r\nEND\r\nCLIENT_ERROR bad data chunk\r\n";
        let mut p = ReplyParser::new();
        let mut got = Vec::new();
        for b in bytes.iter() {
            p.feed(&[*b]);
            while let Some(r) = p.next_reply().unwrap() {
                got.push(r);
            }
        }
        assert_eq!(
            got,
            vec![
                Reply::Stored,
                Reply::Values(vec![
                    Value {
                        key: b"k".to_vec(),
                        flags: 5,
                        data: b"a\r\nb".to_vec(),
                        cas: Some(7)
                    },
                    Value {
                        key: b"j".to_vec(),
                        flags: 0,
                        data: vec![],
                        cas: Some(8)
                    }
                ]),
                Reply::Number(42),
                Reply::Values(vec![]),
                Reply::ClientError(ClientError::BadDataChunk),
            ]
        );
        assert!(!p.mid_reply());
    }

    #[test]
    fn garbage_is_an_error_not_a_panic() {
        let mut p = ReplyParser::new();
        p.feed(b"HELLO\r\n");
        assert_eq!(
            p.next_reply().unwrap_err().to_string(),
            "unexpected reply line: expected a reply line, found \"HELLO\""
        );
        let mut p = ReplyParser::new();
        p.feed(b"VALUE k 0 1\r\nab\r\n");
        assert!(p.next_reply().is_err());
    }
}
