//! A served Explorer page for the tests: `kvsim explore TARGET --serve 127.0.0.1:0`
//! started, its address read from stderr, stopped (killed and waited for) when dropped,
//! also when a test fails; and a plain HTTP GET over a `TcpStream`.

#![allow(dead_code)]

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// A running `kvsim explore --serve`.
pub struct Served {
    child: Child,
    /// `HOST:PORT` of kvsim's page.
    pub addr: String,
    /// What it printed on stdout so far (the CLI's report).
    stdout: Arc<Mutex<String>>,
    /// Every stderr line so far.
    pub stderr: Arc<Mutex<Vec<String>>>,
}

impl Served {
    /// Starts `kvsim explore TARGET --serve 127.0.0.1:0` and waits (at most 120 s) for
    /// the address it serves on.
    pub fn start(target: &str) -> Served {
        let mut child = Command::new(env!("CARGO_BIN_EXE_kvsim"))
            .args(["explore", target, "--serve", "127.0.0.1:0"])
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("kvsim starts");
        let stdout = Arc::new(Mutex::new(String::new()));
        let out = Arc::clone(&stdout);
        let mut pipe = child.stdout.take().unwrap();
        std::thread::spawn(move || {
            let mut buf = [0u8; 4096];
            while let Ok(n) = pipe.read(&mut buf) {
                if n == 0 {
                    break;
                }
                out.lock()
                    .unwrap()
                    .push_str(&String::from_utf8_lossy(&buf[..n]));
            }
        });
        let stderr = Arc::new(Mutex::new(Vec::new()));
        let err = Arc::clone(&stderr);
        let (tx, rx) = mpsc::channel();
        let pipe = child.stderr.take().unwrap();
        std::thread::spawn(move || {
            for line in BufReader::new(pipe).lines() {
                let Ok(line) = line else { break };
                if let Some(rest) = line.strip_prefix("kvsim: serving http://") {
                    let addr = rest.split('/').next().unwrap_or_default().to_string();
                    let _ = tx.send(addr);
                }
                err.lock().unwrap().push(line);
            }
        });
        let mut served = Served {
            child,
            addr: String::new(),
            stdout,
            stderr,
        };
        match rx.recv_timeout(Duration::from_secs(120)) {
            Ok(addr) => served.addr = addr,
            Err(_) => panic!(
                "kvsim explore --serve printed no address in 120 s; stderr: {:?}",
                served.stderr.lock().unwrap()
            ),
        }
        served
    }

    /// The CLI's report on stdout, once its state counts are in (at most 10 s).
    pub fn report(&self) -> String {
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            let out = self.stdout.lock().unwrap().clone();
            if out.contains("\n  states ") && out.contains("replay: kvsim replay") {
                return out;
            }
            assert!(Instant::now() < deadline, "no report on stdout: {out:?}");
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// `GET target` from the page: the status and the body.
    pub fn get(&self, target: &str) -> (u16, String) {
        get(&self.addr, target)
    }
}

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `GET target` from `addr` with HTTP/1.1 (the server closes the connection after it):
/// the status and the body.
pub fn get(addr: &str, target: &str) -> (u16, String) {
    let mut s = TcpStream::connect(addr).expect("the page's server accepts");
    s.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    write!(
        s,
        "GET {target} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut raw = Vec::new();
    s.read_to_end(&mut raw).expect("a whole response");
    let raw = String::from_utf8(raw).expect("utf-8");
    let (head, body) = raw.split_once("\r\n\r\n").expect("a head and a body");
    let status = head
        .split(' ')
        .nth(1)
        .and_then(|s| s.parse().ok())
        .expect("a status");
    (status, body.to_string())
}

/// The state counts of a `kvsim explore` text report: `(unique, total, depth)`.
pub fn counts(report: &str) -> (u64, u64, u64) {
    let line = report
        .lines()
        .find_map(|l| l.strip_prefix("  states   "))
        .expect("a states line");
    let n: Vec<u64> = line
        .split(|c: char| !c.is_ascii_digit())
        .filter(|s| !s.is_empty())
        .take(3)
        .map(|s| s.parse().unwrap())
        .collect();
    (n[0], n[1], n[2])
}
