//! Real memcached processes for tests and stress runs: [`MemcachedProcess`] starts one on
//! a free loopback port and stops it when dropped.

use std::io;
use std::net::{TcpListener, TcpStream};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// The environment variable that makes a missing memcached a test failure (CI sets it).
pub const REQUIRE_ENV: &str = "KVSIM_REQUIRE_MEMCACHED";

/// A memcached server started by this process, on `127.0.0.1`, killed on drop.
#[derive(Debug)]
pub struct MemcachedProcess {
    child: Child,
    port: u16,
}

/// Where the `memcached` binary is: on `PATH`, or in `/usr/bin` (Debian's package).
pub fn memcached_binary() -> Option<PathBuf> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .chain([PathBuf::from("/usr/bin"), PathBuf::from("/usr/local/bin")])
        .map(|dir| dir.join("memcached"))
        .find(|p| p.is_file())
}

fn free_port() -> io::Result<u16> {
    Ok(TcpListener::bind("127.0.0.1:0")?.local_addr()?.port())
}

impl MemcachedProcess {
    /// Starts `memcached -l 127.0.0.1 -p <free port> -U 0 -u root <extra>` and waits until
    /// it accepts connections. (`-u root` only matters when run as root, which memcached
    /// otherwise refuses.)
    pub fn spawn(extra: &[&str]) -> io::Result<Self> {
        let binary = memcached_binary()
            .ok_or_else(|| io::Error::new(io::ErrorKind::NotFound, "memcached is not installed"))?;
        let mut last = io::Error::other("memcached did not start");
        for _ in 0..5 {
            let port = free_port()?;
            let mut child = Command::new(&binary)
                .args([
                    "-l",
                    "127.0.0.1",
                    "-p",
                    &port.to_string(),
                    "-U",
                    "0",
                    "-u",
                    "root",
                ])
                .args(extra)
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()?;
            let deadline = Instant::now() + Duration::from_secs(5);
            loop {
                if let Some(status) = child.try_wait()? {
                    last = io::Error::other(format!("memcached exited at start: {status}"));
                    break;
                }
                if TcpStream::connect(("127.0.0.1", port)).is_ok() {
                    // Another process may have taken the free port before memcached bound
                    // it (tests run in parallel): then the probe reached that one and
                    // memcached exits at once, unable to listen. Alive a moment later means
                    // the port is its own.
                    std::thread::sleep(Duration::from_millis(50));
                    if child.try_wait()?.is_none() {
                        return Ok(MemcachedProcess { child, port });
                    }
                    continue;
                }
                if Instant::now() > deadline {
                    let _ = child.kill();
                    let _ = child.wait();
                    last = io::Error::new(io::ErrorKind::TimedOut, "memcached did not listen");
                    break;
                }
                std::thread::sleep(Duration::from_millis(10));
            }
        }
        Err(last)
    }

    /// For tests: a memcached, or `None` (with a note on stderr saying how to run the test)
    /// when it is not installed, unless `KVSIM_REQUIRE_MEMCACHED=1`, which makes that a
    /// panic.
    pub fn for_test(test: &str, extra: &[&str]) -> Option<Self> {
        if memcached_binary().is_none() {
            if std::env::var(REQUIRE_ENV).is_ok_and(|v| v == "1") {
                panic!("{test}: memcached is not installed and {REQUIRE_ENV}=1");
            }
            eprintln!(
                "{test}: skipped: memcached is not installed \
                 (apt-get install -y memcached, then run the test again; \
                 {REQUIRE_ENV}=1 makes this a failure)"
            );
            return None;
        }
        Some(Self::spawn(extra).unwrap_or_else(|e| panic!("{test}: starting memcached: {e}")))
    }

    /// The port it listens on.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// `127.0.0.1:<port>`.
    pub fn addr(&self) -> String {
        format!("127.0.0.1:{}", self.port)
    }
}

impl Drop for MemcachedProcess {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
