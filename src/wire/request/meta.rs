//! The meta commands' lines, as memcached 1.6.18's `process_mget_command`,
//! `process_mset_command`, `process_mdelete_command`, `process_marithmetic_command`,
//! `process_meta_command` and `_meta_flag_preparse` read them.
//!
//! What the parser decides on its own: `ERROR` for a line without a key; the key's length
//! (as sent, base64 with `b`); the number of tokens; every malformed flag (a letter twice,
//! an unknown letter, a token that is not a number, a key that is not base64, an `M`
//! token of the wrong length), with the error text the command gives (`mg`/`ms` report the
//! last problem found, `md`/`ma` always say `invalid or duplicate flag`, and a duplicate or
//! unknown letter stops the scan at once); for `ms` also its data length, its mode and its
//! opaque, whose errors swallow the data block unread, and a value too large to store
//! (swallowed, and the old item unlinked, whatever the mode). Everything else is the
//! store's (see `store/meta.rs`).

use super::{error, item_fits, LineOutcome, PendingStore, Request};
use crate::command::meta::{base64_decode, META_MAX_TOKENS, META_OPAQUE_MAX};
use crate::command::{
    ClientError, Command, MetaCommand, MetaFlag, MetaVerb, Reply, ServerError, StoreVerb,
    KEY_MAX_LEN,
};
use crate::wire::cnum::{safe_strtol, safe_strtoul, safe_strtoull};
use crate::wire::tokenize::Tokens;

fn client(e: ClientError) -> LineOutcome {
    error(Reply::ClientError(e))
}

/// A meta command line (`cmd` is two bytes, the first `m`).
pub(super) fn parse_meta(t: &Tokens, item_size_max: usize) -> LineOutcome {
    let verb = match t.words[0][1] {
        b'g' => MetaVerb::Get,
        b's' => MetaVerb::Set,
        b'd' => MetaVerb::Delete,
        b'a' => MetaVerb::Arith,
        b'e' => return parse_debug(t),
        // `mn` ignores whatever follows it.
        b'n' => {
            return LineOutcome::Done(Request::Command(Command::Meta(MetaCommand::new(
                MetaVerb::Noop,
                b"",
            ))))
        }
        _ => return error(Reply::Error),
    };
    let n = t.ntokens();
    if n < 3 {
        return error(Reply::Error);
    }
    let key = t.words[1];
    if key.len() > KEY_MAX_LEN {
        return client(ClientError::BadCommandLineFormat);
    }
    if verb == MetaVerb::Set && n == 3 {
        return client(ClientError::BadCommandLineFormat);
    }
    if n > META_MAX_TOKENS {
        return client(match verb {
            MetaVerb::Get => ClientError::GetFlagsTooLong,
            _ => ClientError::FlagsTooLong,
        });
    }
    if verb == MetaVerb::Set {
        return parse_set(t, item_size_max);
    }
    match preparse(&t.words[2..], key) {
        Ok((key, flags)) => LineOutcome::Done(Request::Command(Command::Meta(MetaCommand {
            verb,
            key,
            flags,
            data: Vec::new(),
        }))),
        Err(e) if verb == MetaVerb::Get => client(e),
        Err(_) => client(ClientError::InvalidOrDuplicateFlag),
    }
}

/// `ms <key> <datalen> <flags>*`: errors once the length is known swallow the data block.
fn parse_set(t: &Tokens, item_size_max: usize) -> LineOutcome {
    let len = match safe_strtol(t.words[2]) {
        Some(len) if (0..=i32::MAX - 2).contains(&len) => len as usize,
        _ => return client(ClientError::BadCommandLineFormat),
    };
    let swallow = |e: Reply| {
        LineOutcome::Swallow(
            len + 2,
            Request::Answer {
                effect: None,
                reply: Some(e),
                counted: None,
            },
        )
    };
    let (key, flags) = match preparse(&t.words[3..], t.words[1]) {
        Ok(parsed) => parsed,
        Err(e) => return swallow(Reply::ClientError(e)),
    };
    let m = MetaCommand {
        verb: MetaVerb::Set,
        key,
        flags,
        data: Vec::new(),
    };
    if let Some(MetaFlag::Mode(mode)) = m.flag(b'M') {
        if !matches!(mode, b'S' | b'E' | b'A' | b'P' | b'R') {
            return swallow(Reply::ClientError(ClientError::InvalidSetMode));
        }
    }
    let long_opaque = m
        .flags
        .iter()
        .any(|f| matches!(f, MetaFlag::Opaque(o) if o.len() + 1 > META_OPAQUE_MAX));
    if long_opaque {
        return swallow(Reply::ClientError(ClientError::OpaqueTooLong));
    }
    let client_flags = match m.flag(b'F') {
        Some(MetaFlag::ClientFlags(f)) => *f,
        _ => 0,
    };
    if !item_fits(m.key.len(), client_flags, len, item_size_max) {
        // item_alloc failed: the old item is unlinked ("avoid stale data"), in any mode.
        return LineOutcome::Swallow(
            len + 2,
            Request::Answer {
                effect: Some(Command::Delete {
                    key: m.key,
                    noreply: true,
                }),
                reply: Some(Reply::ServerError(ServerError::ObjectTooLarge)),
                counted: Some(super::Counted::TooLarge),
            },
        );
    }
    LineOutcome::ReadData(PendingStore {
        verb: StoreVerb::Set,
        cas: None,
        key: Vec::new(),
        flags: 0,
        exptime: 0,
        // A bad data chunk is answered even in quiet mode.
        noreply: false,
        len,
        meta: Some(m),
    })
}

/// `me <key> [b]`: only a third token of exactly `b` means anything; the rest is ignored.
fn parse_debug(t: &Tokens) -> LineOutcome {
    let n = t.ntokens();
    if n < 3 || t.words[1].len() > KEY_MAX_LEN {
        return client(ClientError::BadCommandLineFormat);
    }
    let mut m = MetaCommand::new(MetaVerb::Debug, t.words[1]);
    if n >= 4 && t.words[2] == b"b" {
        match base64_decode(t.words[1]) {
            Some(key) => m.key = key,
            None => return client(ClientError::BadCommandLineFormat),
        }
        m.flags.push(MetaFlag::Base64Key);
    }
    LineOutcome::Done(Request::Command(Command::Meta(m)))
}

/// `_meta_flag_preparse`: the flags, and the key (decoded with `b`), or the error text
/// memcached reports: a letter seen twice (or a byte of 127 or more) or an unknown letter
/// at once; otherwise the last problem met, after reading every token.
fn preparse(tokens: &[&[u8]], key: &[u8]) -> Result<(Vec<u8>, Vec<MetaFlag>), ClientError> {
    let mut seen = [false; 128];
    let mut key = key.to_vec();
    let mut flags = Vec::with_capacity(tokens.len());
    let mut failed: Option<ClientError> = None;
    // `F` fails without a text of its own: the last one set, or the default.
    let fail = |failed: &mut Option<ClientError>, e: Option<ClientError>| {
        *failed = Some(e.or(*failed).unwrap_or(ClientError::BadCommandLineFormat));
    };
    for token in tokens {
        let o = token[0];
        if o >= 127 || seen[o as usize] {
            return Err(ClientError::DuplicateFlag);
        }
        seen[o as usize] = true;
        let arg = &token[1..];
        let flag = match o {
            b'b' => {
                match base64_decode(&key) {
                    Some(decoded) => key = decoded,
                    None => fail(&mut failed, Some(ClientError::ErrorDecodingKey)),
                }
                MetaFlag::Base64Key
            }
            b'N' | b'T' | b'R' => match safe_strtol(arg) {
                Some(v) => {
                    let v = i64::from(v);
                    match o {
                        b'N' => MetaFlag::Vivify(v),
                        b'T' => MetaFlag::Ttl(v),
                        _ => MetaFlag::Recache(v),
                    }
                }
                None => {
                    fail(&mut failed, Some(ClientError::BadToken));
                    continue;
                }
            },
            b'l' => MetaFlag::ReturnLastAccess,
            b'O' => MetaFlag::Opaque(arg.to_vec()),
            b'P' | b'L' => MetaFlag::Hint {
                letter: o,
                text: arg.to_vec(),
            },
            b'k' => MetaFlag::ReturnKey,
            b's' => MetaFlag::ReturnSize,
            b't' => MetaFlag::ReturnTtl,
            b'c' => MetaFlag::ReturnCas,
            b'f' => MetaFlag::ReturnFlags,
            b'v' => MetaFlag::ReturnValue,
            b'h' => MetaFlag::ReturnHit,
            b'u' => MetaFlag::NoBump,
            b'q' => MetaFlag::Quiet,
            b'I' => MetaFlag::Invalidate,
            b'F' => match safe_strtoul(arg) {
                Some(f) => MetaFlag::ClientFlags(f),
                None => {
                    fail(&mut failed, None);
                    continue;
                }
            },
            b'C' => match safe_strtoull(arg) {
                Some(c) => MetaFlag::CompareCas(c),
                None => {
                    fail(&mut failed, Some(ClientError::BadToken));
                    continue;
                }
            },
            b'M' => {
                if token.len() != 2 {
                    fail(&mut failed, Some(ClientError::BadModeLength));
                    continue;
                }
                MetaFlag::Mode(token[1])
            }
            b'J' => match safe_strtoull(arg) {
                Some(j) => MetaFlag::Initial(j),
                None => {
                    fail(&mut failed, Some(ClientError::InvalidInitial));
                    continue;
                }
            },
            b'D' => match safe_strtoull(arg) {
                Some(d) => MetaFlag::Delta(d),
                None => {
                    fail(&mut failed, Some(ClientError::InvalidDeltaValue));
                    continue;
                }
            },
            _ => return Err(ClientError::InvalidFlag),
        };
        flags.push(flag);
    }
    match failed {
        Some(e) => Err(e),
        None => Ok((key, flags)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::tokenize::tokenize;

    fn flags_of(line: &[u8]) -> Result<(Vec<u8>, Vec<MetaFlag>), ClientError> {
        let t = tokenize(line);
        preparse(&t.words[2..], t.words[1])
    }

    #[test]
    fn preparse_reports_as_memcached_does() {
        assert_eq!(
            flags_of(b"mg k v T30 Oab"),
            Ok((
                b"k".to_vec(),
                vec![
                    MetaFlag::ReturnValue,
                    MetaFlag::Ttl(30),
                    MetaFlag::Opaque(b"ab".to_vec())
                ]
            ))
        );
        assert_eq!(flags_of(b"mg k v v"), Err(ClientError::DuplicateFlag));
        assert_eq!(flags_of(b"mg k Nx v v"), Err(ClientError::DuplicateFlag));
        assert_eq!(flags_of(b"mg k 5"), Err(ClientError::InvalidFlag));
        assert_eq!(flags_of(b"mg k Nx Jx"), Err(ClientError::InvalidInitial));
        assert_eq!(flags_of(b"mg k Jx Fx"), Err(ClientError::InvalidInitial));
        assert_eq!(flags_of(b"mg k Fx"), Err(ClientError::BadCommandLineFormat));
        assert_eq!(flags_of(b"mg k Mxx"), Err(ClientError::BadModeLength));
        assert_eq!(flags_of(b"mg k b"), Err(ClientError::ErrorDecodingKey));
        assert_eq!(flags_of(b"mg YWJj b").map(|(k, _)| k), Ok(b"abc".to_vec()));
        assert_eq!(flags_of(b"mg k \xff"), Err(ClientError::DuplicateFlag));
    }
}
