//! Bytes on the wire, outbound: a [`Command`] as a client writes it ([`encode_command`]),
//! a [`Reply`] and a [`Value`] as memcached writes them ([`Reply::encode`]).

use crate::command::{Command, MetaReply, MetaStatus, MetaVerb, Reply, Value};

fn push_num(out: &mut Vec<u8>, n: impl std::fmt::Display) {
    out.push(b' ');
    out.extend_from_slice(n.to_string().as_bytes());
}

/// Writes `command` as request bytes: the command line, `\r\n`, and for storage commands
/// the data block and its `\r\n`.
///
/// The bytes are sent as given; check the command first ([`Command::validate`]) unless you
/// mean to send a malformed request (a key with a space, for one, is two tokens).
pub fn encode_command(command: &Command, out: &mut Vec<u8>) {
    out.extend_from_slice(command.verb().as_bytes());
    let noreply = |out: &mut Vec<u8>, noreply: bool| {
        if noreply {
            out.extend_from_slice(b" noreply");
        }
        out.extend_from_slice(b"\r\n");
    };
    match command {
        Command::Store {
            key,
            flags,
            exptime,
            data,
            noreply: nr,
            ..
        } => {
            out.push(b' ');
            out.extend_from_slice(key);
            push_num(out, flags);
            push_num(out, exptime);
            push_num(out, data.len());
            noreply(out, *nr);
            out.extend_from_slice(data);
            out.extend_from_slice(b"\r\n");
        }
        Command::Cas {
            key,
            flags,
            exptime,
            data,
            unique,
            noreply: nr,
        } => {
            out.push(b' ');
            out.extend_from_slice(key);
            push_num(out, flags);
            push_num(out, exptime);
            push_num(out, data.len());
            push_num(out, unique);
            noreply(out, *nr);
            out.extend_from_slice(data);
            out.extend_from_slice(b"\r\n");
        }
        Command::Get { keys, .. } => {
            for key in keys {
                out.push(b' ');
                out.extend_from_slice(key);
            }
            out.extend_from_slice(b"\r\n");
        }
        Command::Gat { exptime, keys, .. } => {
            push_num(out, exptime);
            for key in keys {
                out.push(b' ');
                out.extend_from_slice(key);
            }
            out.extend_from_slice(b"\r\n");
        }
        Command::Arith {
            key,
            delta,
            noreply: nr,
            ..
        } => {
            out.push(b' ');
            out.extend_from_slice(key);
            push_num(out, delta);
            noreply(out, *nr);
        }
        Command::Delete { key, noreply: nr } => {
            out.push(b' ');
            out.extend_from_slice(key);
            noreply(out, *nr);
        }
        Command::Touch {
            key,
            exptime,
            noreply: nr,
        } => {
            out.push(b' ');
            out.extend_from_slice(key);
            push_num(out, exptime);
            noreply(out, *nr);
        }
        Command::FlushAll { delay, noreply: nr } => {
            if let Some(d) = delay {
                push_num(out, d);
            }
            noreply(out, *nr);
        }
        Command::Meta(m) => {
            if m.verb != MetaVerb::Noop {
                out.push(b' ');
                out.extend_from_slice(&m.wire_key());
            }
            if m.verb == MetaVerb::Set {
                push_num(out, m.data.len());
            }
            for flag in &m.flags {
                out.push(b' ');
                flag.encode(out);
            }
            out.extend_from_slice(b"\r\n");
            if m.verb == MetaVerb::Set {
                out.extend_from_slice(&m.data);
                out.extend_from_slice(b"\r\n");
            }
        }
    }
}

/// The request bytes of `command` (see [`encode_command`]).
pub fn command_bytes(command: &Command) -> Vec<u8> {
    let mut out = Vec::new();
    encode_command(command, &mut out);
    out
}

impl Value {
    /// Writes the value's `VALUE` block as memcached puts it on the wire (the `END` that
    /// closes a retrieval's reply is the reply's).
    pub fn encode(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(b"VALUE ");
        out.extend_from_slice(&self.key);
        out.extend_from_slice(format!(" {} {}", self.flags, self.data.len()).as_bytes());
        if let Some(cas) = self.cas {
            out.extend_from_slice(format!(" {cas}").as_bytes());
        }
        out.extend_from_slice(b"\r\n");
        out.extend_from_slice(&self.data);
        out.extend_from_slice(b"\r\n");
    }
}

impl MetaReply {
    /// Writes the reply as memcached puts it on the wire: `VA <size> <flags>*\r\n<data>\r\n`
    /// or `<code> <flags>*\r\n` (even when it is [`MetaReply::quiet`]: whether to send it is
    /// the caller's business).
    pub fn encode(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(self.status.as_str().as_bytes());
        let value = match self.status {
            MetaStatus::Va => Some(self.value.as_deref().unwrap_or_default()),
            _ => None,
        };
        if let Some(v) = value {
            push_num(out, v.len());
        }
        for flag in &self.flags {
            out.push(b' ');
            flag.encode(out);
        }
        out.extend_from_slice(b"\r\n");
        if let Some(v) = value {
            out.extend_from_slice(v);
            out.extend_from_slice(b"\r\n");
        }
    }
}

impl Reply {
    /// Writes the reply exactly as memcached puts it on the wire, `\r\n` included.
    pub fn encode(&self, out: &mut Vec<u8>) {
        match self {
            Reply::Values(values) => {
                values.iter().for_each(|v| v.encode(out));
                out.extend_from_slice(b"END\r\n");
            }
            Reply::Number(n) => out.extend_from_slice(format!("{n}\r\n").as_bytes()),
            Reply::ClientError(e) => {
                out.extend_from_slice(format!("CLIENT_ERROR {}\r\n", e.as_str()).as_bytes())
            }
            Reply::ServerError(e) => {
                out.extend_from_slice(format!("SERVER_ERROR {}\r\n", e.as_str()).as_bytes())
            }
            Reply::Meta(m) => m.encode(out),
            Reply::MetaDebug(d) => d.encode(out),
            other => {
                out.extend_from_slice(other.status_word().as_bytes());
                out.extend_from_slice(b"\r\n");
            }
        }
    }

    /// The reply as wire bytes (see [`Reply::encode`]).
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = Vec::new();
        self.encode(&mut out);
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::command::{ArithVerb, StoreVerb};

    #[test]
    fn commands_encode_as_clients_send_them() {
        let set = Command::Store {
            verb: StoreVerb::Add,
            key: b"k".to_vec(),
            flags: 3,
            exptime: -1,
            data: b"a\r\nb".to_vec(),
            noreply: true,
        };
        assert_eq!(command_bytes(&set), b"add k 3 -1 4 noreply\r\na\r\nb\r\n");
        let cas = Command::Cas {
            key: b"k".to_vec(),
            flags: 0,
            exptime: 0,
            data: vec![],
            unique: 9,
            noreply: false,
        };
        assert_eq!(command_bytes(&cas), b"cas k 0 0 0 9\r\n\r\n");
        let gat = Command::Gat {
            with_cas: true,
            exptime: 10,
            keys: vec![b"a".to_vec(), b"b".to_vec()],
        };
        assert_eq!(command_bytes(&gat), b"gats 10 a b\r\n");
        let incr = Command::Arith {
            verb: ArithVerb::Decr,
            key: b"n".to_vec(),
            delta: u64::MAX,
            noreply: false,
        };
        assert_eq!(command_bytes(&incr), b"decr n 18446744073709551615\r\n");
        let flush = Command::FlushAll {
            delay: Some(0),
            noreply: true,
        };
        assert_eq!(command_bytes(&flush), b"flush_all 0 noreply\r\n");
    }
}
