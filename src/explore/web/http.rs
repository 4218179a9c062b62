//! The page's HTTP server: `GET` and `HEAD` only, one request per connection, every
//! resource bounded ([`Limits`]): past the most concurrent connections a new one gets
//! 503 at once, a request head past its bound gets 431, a silent client is dropped after
//! the timeout, a handler that panics gives 500.
//!
//! Hand-written on `std::net` because tiny_http (in the tree, under stateright) cannot
//! bound its connections: it takes every one on a thread of its own.

use super::Response;
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// The bounds of the server.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Limits {
    /// Most connections served at once (more get 503).
    pub max_connections: usize,
    /// Most bytes of a request's line and headers (more get 431).
    pub max_head_bytes: usize,
    /// How long a client may take to send its request or read the response.
    pub timeout: Duration,
}

impl Default for Limits {
    /// 16 connections, 8 KiB heads, 10 s.
    fn default() -> Limits {
        Limits {
            max_connections: 16,
            max_head_bytes: 8 << 10,
            timeout: Duration::from_secs(10),
        }
    }
}

/// What answers a request: the request's target (path and query) to a response.
pub type Handler = Arc<dyn Fn(&str) -> Response + Send + Sync>;

/// Serves `handler` on `listener` within `limits`; returns only when accepting fails for
/// good (never in practice: stop the process).
pub fn serve(listener: TcpListener, limits: Limits, handler: Handler) -> std::io::Result<()> {
    let live = Arc::new(AtomicUsize::new(0));
    for stream in listener.incoming() {
        let mut stream = match stream {
            Ok(s) => s,
            // Out of descriptors or a connection reset before accept: go on.
            Err(_) => {
                std::thread::sleep(Duration::from_millis(10));
                continue;
            }
        };
        if live.load(Ordering::SeqCst) >= limits.max_connections {
            // Take what the client sent (briefly) before answering: a socket closed on
            // unread bytes is reset, and the reset can eat the answer.
            let _ = stream.set_read_timeout(Some(Duration::from_millis(50)));
            let _ = stream.set_write_timeout(Some(Duration::from_secs(1)));
            let _ = stream.read(&mut [0u8; 4096]);
            let busy = Response::error(
                503,
                &format!(
                    "busy: expected at most {} connections at once; try again",
                    limits.max_connections
                ),
            );
            let _ = write_response(&mut stream, &busy, true);
            let _ = stream.shutdown(std::net::Shutdown::Write);
            continue;
        }
        live.fetch_add(1, Ordering::SeqCst);
        let slot = Slot(Arc::clone(&live));
        let handler = Arc::clone(&handler);
        let limits = limits.clone();
        std::thread::spawn(move || {
            let _slot = slot;
            let _ = handle(stream, &limits, &*handler);
        });
    }
    Ok(())
}

/// A connection's place among the live ones, given back when it ends (also on a panic).
struct Slot(Arc<AtomicUsize>);

impl Drop for Slot {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

/// Reads one request from `stream` and answers it.
fn handle(
    mut stream: TcpStream,
    limits: &Limits,
    handler: &(dyn Fn(&str) -> Response + Send + Sync),
) -> std::io::Result<()> {
    stream.set_read_timeout(Some(limits.timeout))?;
    stream.set_write_timeout(Some(limits.timeout))?;
    let head = match read_head(&mut stream, limits.max_head_bytes)? {
        Head::Complete(h) => h,
        Head::TooLarge => {
            let why = format!(
                "request head too large: expected at most {} bytes",
                limits.max_head_bytes
            );
            return write_response(&mut stream, &Response::error(431, &why), true);
        }
        Head::Closed => return Ok(()),
    };
    let (response, body) = match parse_request_line(&head) {
        Err(why) => (Response::error(400, &why), true),
        Ok((method, target)) => {
            let r = catch_unwind(AssertUnwindSafe(|| handler(target))).unwrap_or_else(|_| {
                Response::error(500, "internal error: the page's handler failed")
            });
            (r, method == "GET")
        }
    };
    write_response(&mut stream, &response, body)
}

/// A request's head as read.
enum Head {
    Complete(String),
    TooLarge,
    Closed,
}

fn read_head(stream: &mut TcpStream, max: usize) -> std::io::Result<Head> {
    let mut buf = Vec::with_capacity(1024);
    let mut chunk = [0u8; 1024];
    loop {
        if let Some(end) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            if end > max {
                return Ok(Head::TooLarge);
            }
            buf.truncate(end);
            return Ok(Head::Complete(String::from_utf8_lossy(&buf).into_owned()));
        }
        if buf.len() > max {
            return Ok(Head::TooLarge);
        }
        let n = stream.read(&mut chunk)?;
        if n == 0 {
            return Ok(Head::Closed);
        }
        buf.extend_from_slice(&chunk[..n]);
    }
}

/// The method (`GET` or `HEAD`) and target of a request's first line.
pub fn parse_request_line(head: &str) -> Result<(&str, &str), String> {
    let line = head.lines().next().unwrap_or_default();
    let parts: Vec<&str> = line.split(' ').collect();
    let [method, target, version] = parts[..] else {
        return Err(format!(
            "bad request line: expected METHOD TARGET HTTP/1.x, found {:?}",
            super::super::browse::clip(line, 80)
        ));
    };
    if !version.starts_with("HTTP/1.") {
        return Err(format!("bad request: expected HTTP/1.x, found {version:?}"));
    }
    if method != "GET" && method != "HEAD" {
        return Err(format!(
            "bad request: expected method GET or HEAD, found {:?}",
            super::super::browse::clip(method, 20)
        ));
    }
    if !target.starts_with('/') {
        return Err(format!(
            "bad request: expected a target starting with /, found {:?}",
            super::super::browse::clip(target, 80)
        ));
    }
    Ok((method, target))
}

fn reason(status: u16) -> &'static str {
    match status {
        200 => "OK",
        400 => "Bad Request",
        404 => "Not Found",
        431 => "Request Header Fields Too Large",
        503 => "Service Unavailable",
        _ => "Internal Server Error",
    }
}

fn write_response(stream: &mut TcpStream, r: &Response, body: bool) -> std::io::Result<()> {
    let head = format!(
        "HTTP/1.1 {} {}\r\nContent-Type: {}\r\nContent-Length: {}\r\nCache-Control: no-store\r\n\
         X-Content-Type-Options: nosniff\r\nConnection: close\r\n\r\n",
        r.status,
        reason(r.status),
        r.content_type,
        r.body.len()
    );
    stream.write_all(head.as_bytes())?;
    if body {
        stream.write_all(&r.body)?;
    }
    stream.flush()
}
