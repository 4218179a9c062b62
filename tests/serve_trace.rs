//! A `kvsim serve` trace that stops taking lines while the server runs stops the server
//! (issue #32.10): [`Server::wait`] returns the error, naming the file; the command whose
//! lines could not be written gets no reply. (`cli/tests/serve_trace.rs` tests a trace
//! that cannot be written at the start.)

use kvsim::net::{ServeConfig, Server};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::Command;
use std::time::Duration;

#[test]
fn a_trace_that_stops_taking_lines_stops_the_server() {
    let dir = std::env::temp_dir().join(format!("kvsim-serve-trace-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let fifo = dir.join("trace.fifo");
    let _ = std::fs::remove_file(&fifo);
    assert!(Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap()
        .success());
    // The reader takes the first line, then goes away: later writes fail (EPIPE; the
    // test harness ignores SIGPIPE).
    let reader_path = fifo.clone();
    let reader = std::thread::spawn(move || {
        let f = std::fs::File::open(&reader_path).unwrap();
        let mut line = String::new();
        BufReader::new(f).read_line(&mut line).unwrap();
        line
    });
    let server = Server::start(ServeConfig {
        listen: "127.0.0.1:0".parse().unwrap(),
        trace: Some(fifo.clone()),
        ..ServeConfig::default()
    })
    .expect("the trace's first line is written");
    let first = reader.join().unwrap();
    assert!(first.contains(r#""kind":"start""#), "{first}");
    let mut c = TcpStream::connect(server.local_addr()).unwrap();
    let _ = c.write_all(b"set a 0 0 1\r\na\r\n");
    c.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    let mut buf = [0u8; 64];
    let n = c.read(&mut buf).unwrap_or(0);
    assert_eq!(n, 0, "a reply: {:?}", String::from_utf8_lossy(&buf[..n]));
    let err = server
        .wait()
        .expect_err("the server stops on the trace's error");
    let _ = std::fs::remove_dir_all(&dir);
    let text = err.to_string();
    assert!(text.starts_with("cannot write the trace file "), "{text}");
    assert!(text.contains("Broken pipe"), "{text}");
}
