//! `kvsim serve --trace FILE` never loses its trace silently (issue #32.10): a trace that
//! cannot be written stops the server at once, exit 2, naming the file and the error.
//! (`tests/serve_trace.rs` of the library tests a write failing later, while serving.)

use std::io::Read;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// Waits for `child` to exit (at most 20 s); its exit code and stderr.
fn finish(mut child: Child, mut stderr: impl Read) -> (Option<i32>, String) {
    let deadline = Instant::now() + Duration::from_secs(20);
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("kvsim serve did not stop on a trace it cannot write");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let mut err = String::new();
    stderr.read_to_string(&mut err).unwrap();
    (status.code(), err)
}

#[test]
fn a_trace_that_cannot_be_written_at_the_start_is_an_error_at_once() {
    let mut child = Command::new(env!("CARGO_BIN_EXE_kvsim"))
        .args(["serve", "--listen", "127.0.0.1:0", "--trace", "/dev/full"])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let stderr = child.stderr.take().unwrap();
    let (code, err) = finish(child, stderr);
    assert_eq!(code, Some(2), "{err}");
    assert!(
        err.contains("kvsim serve: cannot write the trace file /dev/full: No space left on device"),
        "{err}"
    );
}
