//! The control channel of `kvsim serve --control ADDR`: a line protocol on a port of its
//! own, for test drivers that need a fault at a precise moment. It is never reachable
//! through the memcached port.
//!
//! Each line is one command; each is answered by one line, `OK …` or `ERROR reason`,
//! except `conns`, `stats` and `help`, which answer lines ended by `END`:
//!
//! | command | effect |
//! |---|---|
//! | `evict KEY` | removes KEY now (`OK`, or `NOT_FOUND` if it held no live item) |
//! | `restart` | volatile data is lost and every client connection closed |
//! | `clock +SECS` | the server clock jumps SECS seconds forward (expiries run out) |
//! | `drop-request CONN` | CONN's next request is not applied; the connection closes |
//! | `drop-reply CONN` | CONN's next request is applied; the connection closes before the reply |
//! | `delay-reply CONN MS` | CONN's next reply is held MS milliseconds |
//! | `pause CONN MS` | CONN's next request waits MS milliseconds before it is applied |
//! | `conns` | `CONN id peer` per open client connection, then `END` |
//! | `stats` | the `STAT name value` lines memcached's `stats` gives, then `END` |
//! | `help` | this list |
//! | `quit` | closes the control connection |
//!
//! `CONN` is an id from `conns`, `next` (the next connection that sends a request) or
//! `all` (every open connection). Bounds: a line of at most [`LINE_MAX`] bytes, at most
//! [`MAX_CONTROL_CONNECTIONS`] control connections, MS at most [`MAX_MS`], SECS at most
//! [`MAX_SECS`].

use super::serve_faults::WireFault;
use super::serve_lockstep::lock;
use super::serve_shared::{ConnTarget, Shared};
use crate::wire::StatsGroup;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

/// The longest control line.
pub const LINE_MAX: usize = 1024;

/// The most control connections open at once.
pub const MAX_CONTROL_CONNECTIONS: usize = 16;

/// The longest pause or reply delay (one hour).
pub const MAX_MS: u64 = 3_600_000;

/// The farthest clock jump (one year).
pub const MAX_SECS: u64 = 31_536_000;

/// A control command, parsed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ControlCommand {
    /// A fault of the whole server, applied now.
    Now(WireFault),
    /// A fault for a connection's next request.
    Arm(WireFault, ConnTarget),
    /// List the open connections.
    Conns,
    /// The general stats.
    Stats,
    /// The command list.
    Help,
    /// Close this control connection.
    Quit,
}

const HELP: &[&str] = &[
    "evict KEY",
    "restart",
    "clock +SECS",
    "drop-request CONN",
    "drop-reply CONN",
    "delay-reply CONN MS",
    "pause CONN MS",
    "conns",
    "stats",
    "help",
    "quit",
    "CONN: an id from conns, next, or all",
];

/// Parses one control line (without its line end).
pub fn parse(line: &str) -> Result<ControlCommand, String> {
    let words: Vec<&str> = line.split_ascii_whitespace().collect();
    let target = |w: Option<&&str>| -> Result<ConnTarget, String> {
        match w.copied() {
            Some("next") => Ok(ConnTarget::Next),
            Some("all") => Ok(ConnTarget::All),
            Some(n) => n.parse().map(ConnTarget::Id).map_err(|_| {
                format!("bad connection {n:?}: expected an id from conns, next or all")
            }),
            None => Err("missing connection: expected an id from conns, next or all".into()),
        }
    };
    let number = |w: Option<&&str>, what: &str, max: u64| -> Result<u64, String> {
        let w = w.ok_or_else(|| format!("missing {what}: expected a number up to {max}"))?;
        match w.trim_start_matches('+').parse::<u64>() {
            Ok(n) if n <= max => Ok(n),
            _ => Err(format!(
                "bad {what} {w:?}: expected a number from 0 to {max}"
            )),
        }
    };
    let arity = |n: usize| -> Result<(), String> {
        if words.len() == n {
            Ok(())
        } else {
            Err(format!(
                "{} takes {} argument{}, found {}",
                words[0],
                n - 1,
                if n == 2 { "" } else { "s" },
                words.len() - 1
            ))
        }
    };
    let Some(&verb) = words.first() else {
        return Err("empty line: expected a command (help lists them)".into());
    };
    Ok(match verb {
        "evict" => {
            arity(2)?;
            ControlCommand::Now(WireFault::Evict(words[1].as_bytes().to_vec()))
        }
        "restart" => {
            arity(1)?;
            ControlCommand::Now(WireFault::Restart)
        }
        "clock" => {
            arity(2)?;
            if !words[1].starts_with('+') {
                return Err(format!(
                    "bad clock jump {:?}: expected +SECS (memcached's clock only runs forward)",
                    words[1]
                ));
            }
            ControlCommand::Now(WireFault::Clock(number(words.get(1), "seconds", MAX_SECS)?))
        }
        "drop-request" => {
            arity(2)?;
            ControlCommand::Arm(WireFault::DropRequest, target(words.get(1))?)
        }
        "drop-reply" => {
            arity(2)?;
            ControlCommand::Arm(WireFault::DropReply, target(words.get(1))?)
        }
        "delay-reply" => {
            arity(3)?;
            let ms = number(words.get(2), "milliseconds", MAX_MS)?;
            ControlCommand::Arm(WireFault::DelayReply(ms), target(words.get(1))?)
        }
        "pause" => {
            arity(3)?;
            let ms = number(words.get(2), "milliseconds", MAX_MS)?;
            ControlCommand::Arm(WireFault::Pause(ms), target(words.get(1))?)
        }
        "conns" => ControlCommand::Conns,
        "stats" => ControlCommand::Stats,
        "help" => ControlCommand::Help,
        "quit" => ControlCommand::Quit,
        other => {
            return Err(format!(
                "unknown command {other:?}: expected one of {}",
                HELP[..HELP.len() - 1]
                    .iter()
                    .map(|h| h.split(' ').next().unwrap_or(h))
                    .collect::<Vec<_>>()
                    .join(", ")
            ))
        }
    })
}

/// Runs `command`; the reply lines (without line ends).
fn run(shared: &Shared, command: ControlCommand) -> Vec<String> {
    match command {
        ControlCommand::Now(fault @ WireFault::Evict(_)) => {
            if shared.inject(&fault, None) {
                vec!["OK".into()]
            } else {
                vec!["NOT_FOUND".into()]
            }
        }
        ControlCommand::Now(fault) => {
            shared.inject(&fault, None);
            vec!["OK".into()]
        }
        ControlCommand::Arm(fault, target) => {
            let text = fault.to_string();
            match (shared.arm(fault, target), target) {
                (Ok(n), ConnTarget::All) => vec![format!("OK {text} armed on {n}")],
                (Ok(_), _) => vec![format!("OK {text} armed")],
                (Err(why), _) => vec![format!("ERROR {why}")],
            }
        }
        ControlCommand::Conns => shared
            .connections()
            .into_iter()
            .map(|(id, peer)| format!("CONN {id} {peer}"))
            .chain(["END".to_string()])
            .collect(),
        ControlCommand::Stats => shared
            .stats(StatsGroup::General)
            .into_iter()
            .map(|(k, v)| format!("STAT {k} {v}"))
            .chain(["END".to_string()])
            .collect(),
        ControlCommand::Help => HELP
            .iter()
            .map(|h| h.to_string())
            .chain(["END".to_string()])
            .collect(),
        ControlCommand::Quit => Vec::new(),
    }
}

/// Accepts control connections until the server stops.
pub(crate) fn accept_loop(listener: TcpListener, shared: Arc<Shared>) {
    let open = Arc::new(AtomicUsize::new(0));
    let mut next_id = 0u64;
    for stream in listener.incoming() {
        if shared.stopping() {
            break;
        }
        let Ok(mut stream) = stream else { continue };
        if open.load(Ordering::SeqCst) >= MAX_CONTROL_CONNECTIONS {
            let _ = writeln!(
                stream,
                "ERROR too many control connections (at most {MAX_CONTROL_CONNECTIONS})"
            );
            let _ = stream.shutdown(Shutdown::Both);
            continue;
        }
        open.fetch_add(1, Ordering::SeqCst);
        next_id += 1;
        let id = next_id;
        if let Ok(clone) = stream.try_clone() {
            lock(&shared.controls).insert(id, clone);
        }
        let (shared2, open2) = (Arc::clone(&shared), Arc::clone(&open));
        let spawned = std::thread::Builder::new()
            .name("kvsim-serve-control-conn".into())
            .spawn(move || {
                serve(stream, &shared2);
                lock(&shared2.controls).remove(&id);
                open2.fetch_sub(1, Ordering::SeqCst);
            });
        if spawned.is_err() {
            lock(&shared.controls).remove(&id);
            open.fetch_sub(1, Ordering::SeqCst);
        }
    }
}

/// Answers one control connection's lines.
fn serve(stream: TcpStream, shared: &Shared) {
    let Ok(mut out) = stream.try_clone() else {
        return;
    };
    let mut reader = BufReader::new(stream);
    let mut line = Vec::new();
    loop {
        line.clear();
        // One byte more than a line may hold tells a long line from a full one.
        let limit = (LINE_MAX + 2) as u64;
        match (&mut reader).take(limit).read_until(b'\n', &mut line) {
            Ok(0) | Err(_) => return,
            Ok(_) => {}
        }
        if !line.ends_with(b"\n") && line.len() as u64 >= limit {
            let _ = write!(
                out,
                "ERROR line too long: expected at most {LINE_MAX} bytes\r\n"
            );
            // Read (a bounded amount of) what the client is still sending before closing,
            // so that the close does not reset the connection under the error line.
            let _ = out.shutdown(Shutdown::Write);
            let _ = out.set_read_timeout(Some(std::time::Duration::from_millis(500)));
            let _ = std::io::copy(&mut (&mut reader).take(1 << 20), &mut std::io::sink());
            return;
        }
        let text = String::from_utf8_lossy(&line);
        let replies = match parse(text.trim_end_matches(['\r', '\n'])) {
            Ok(ControlCommand::Quit) => return,
            Ok(command) => run(shared, command),
            Err(why) => vec![format!("ERROR {why}")],
        };
        let mut bytes = replies.join("\r\n");
        bytes.push_str("\r\n");
        if out.write_all(bytes.as_bytes()).is_err() || shared.stopping() {
            return;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_parse_into_faults_and_bad_ones_say_what_was_expected() {
        assert_eq!(
            parse("pause 3 1500"),
            Ok(ControlCommand::Arm(
                WireFault::Pause(1500),
                ConnTarget::Id(3)
            ))
        );
        assert_eq!(
            parse("drop-reply next"),
            Ok(ControlCommand::Arm(WireFault::DropReply, ConnTarget::Next))
        );
        assert_eq!(
            parse("clock +5"),
            Ok(ControlCommand::Now(WireFault::Clock(5)))
        );
        assert_eq!(
            parse("evict lock"),
            Ok(ControlCommand::Now(WireFault::Evict(b"lock".to_vec())))
        );
        let err = |l: &str| parse(l).unwrap_err();
        assert!(
            err("clock -5").contains("only runs forward"),
            "{}",
            err("clock -5")
        );
        assert!(err("pause x 5").contains("bad connection \"x\""));
        assert!(err("pause 1 99999999999").contains("from 0 to 3600000"));
        assert!(err("evict").contains("evict takes 1 argument, found 0"));
        assert!(err("fly").contains("unknown command \"fly\": expected one of evict, restart"));
        assert!(err("").contains("empty line"));
    }
}
