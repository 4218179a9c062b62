//! The page and its API, answered without a socket (routes, errors, bounds, the three
//! verdicts), and the server's bounds over a socket.

use super::http::{self, parse_request_line, Limits};
use super::*;
use crate::explore::browse::{browser, tests::scope, tests::CasCounter};
use crate::explore::{Scope, SearchLimits};
use crate::harness::target::{ModelTarget, Target};
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::time::Duration;

fn site(scope: &Scope, limits: &SearchLimits) -> Site {
    let target = ModelTarget::new("cas/counter", CasCounter);
    let report = target.explore(scope, limits);
    let text = crate::report::explore_text(&report);
    let b = browser(Arc::new(CasCounter), scope).unwrap();
    Site::new(report, text, b, Some("http://127.0.0.1:9/".to_string()))
}

fn body(r: &Response) -> String {
    String::from_utf8(r.body.clone()).unwrap()
}

#[test]
fn the_page_opens_on_the_violation_and_its_steps() {
    let site = site(&scope(Vec::new()), &SearchLimits::default());
    let r = site.respond("/");
    assert_eq!(
        (r.status, r.content_type),
        (200, "text/html; charset=utf-8")
    );
    let page = body(&r);
    let report = &site.report;
    assert!(page.contains("<span class=\"verdict violation\" id=\"verdict\">violation</span>"));
    let why = crate::report::escape(&format!("violation: {}", report.verdict.reason().unwrap()));
    assert!(why.contains("every cas stores: C"));
    assert!(page.contains(&format!("id=\"reason\">{why}</p>")), "{why}");
    assert!(
        page.contains("<td id=\"fact-property\">every cas stores</td>"),
        "{page}"
    );
    let counts = format!(
        "{} unique, {} total · depth {}",
        report.unique_states, report.total_states, report.max_depth
    );
    assert!(page.contains(&counts), "{counts}");
    let path = site.counterexample_path().unwrap().as_ref().unwrap();
    let cx = page.split("<ol class=\"steps\" id=\"cx\">").nth(1).unwrap();
    let cx = &cx[..cx.find("</ol>").unwrap()];
    assert_eq!(cx.matches("<li").count(), path.len(), "{cx}");
    assert!(page.contains("C0: ▶ ()"));
    assert!(page.contains("then the checker says: violation: every cas stores"));
    assert!(page.contains("<pre id=\"errors\"></pre>"));
    assert!(page.contains("<iframe src=\"/counterexample\""));
    assert!(page.contains("http://127.0.0.1:9/"));
    // Offline: no resource from elsewhere.
    assert!(!page.contains("src=\"http") && !page.contains("href=\"https"));
    let cx = site.respond("/counterexample");
    assert_eq!(cx.status, 200);
    assert_eq!(
        body(&cx),
        counterexample_page(report.counterexample.as_ref().unwrap())
    );
}

#[test]
fn the_api_answers_states_and_refuses_bad_requests() {
    let site = site(&scope(Vec::new()), &SearchLimits::default());
    let init = site.respond("/api/state");
    assert_eq!((init.status, init.content_type), (200, "application/json"));
    let v: serde_json::Value = serde_json::from_slice(&init.body).unwrap();
    assert_eq!(v["path"], serde_json::json!([]));
    assert_eq!(v["successors"][0]["label"], "C0: ▶ ()");
    let one = site.respond("/api/state?path=0.0");
    let v: serde_json::Value = serde_json::from_slice(&one.body).unwrap();
    assert_eq!(v["steps"][1], "C0: gets count → \"0\" #1");
    for (target, status, error) in [
        (
            "/api/state?path=0.x",
            400,
            "bad path step 1: expected a step number",
        ),
        (
            "/api/state?path=5",
            400,
            "bad path step 0: expected one of the 2 actions",
        ),
        ("/api/state?steps=1", 400, "bad query: expected path=STEPS"),
        (
            "/api/state?path=0&x=1",
            400,
            "bad query: expected path=STEPS",
        ),
        ("/nowhere", 404, "no such page: expected /, /counterexample"),
    ] {
        let r = site.respond(target);
        assert_eq!(r.status, status, "{target}");
        let v: serde_json::Value = serde_json::from_slice(&r.body).unwrap();
        let e = v["error"].as_str().unwrap();
        assert!(e.starts_with(error), "{target}: {e}");
    }
    let summary: serde_json::Value =
        serde_json::from_slice(&site.respond("/api/report").body).unwrap();
    assert_eq!(summary["verdict"], "violation");
    assert_eq!(summary["property"], "every cas stores");
    assert_eq!(summary["unique_states"], site.report.unique_states);
    assert_eq!(
        summary["counterexample_path"],
        serde_json::json!(site.counterexample_path().unwrap().as_ref().unwrap())
    );
}

#[test]
fn ok_and_unknown_render_as_they_are() {
    let ok = site(&Scope::new(1, 1), &SearchLimits::default());
    let page = body(&ok.respond("/"));
    assert!(page.contains("<span class=\"verdict ok\" id=\"verdict\">ok</span>"));
    assert!(page.contains("ok: every path of the scope passes"));
    assert!(page.contains("<p id=\"cx\">none: the verdict is ok"));
    assert_eq!(ok.respond("/counterexample").status, 404);

    let limits = SearchLimits {
        max_states: 3,
        ..SearchLimits::default()
    };
    let unknown = site(&scope(Vec::new()), &limits);
    assert_eq!(unknown.report.verdict.name(), "unknown");
    let page = body(&unknown.respond("/"));
    assert!(page.contains("<span class=\"verdict unknown\" id=\"verdict\">unknown</span>"));
    assert!(page.contains("not a pass: part of the scope was not checked"));
    assert!(page.contains("<td>bound hit</td>"));
    assert_eq!(
        page.contains("<td>warning</td>"),
        unknown.report.warning.is_some()
    );
    assert!(!page.contains("verdict ok") && !page.contains("every path of the scope passes"));
}

#[test]
fn request_lines_are_get_or_head_with_a_path() {
    assert_eq!(
        parse_request_line("GET /api/state?path=1 HTTP/1.1\r\nHost: x"),
        Ok(("GET", "/api/state?path=1"))
    );
    assert_eq!(parse_request_line("HEAD / HTTP/1.0"), Ok(("HEAD", "/")));
    assert!(parse_request_line("POST / HTTP/1.1")
        .unwrap_err()
        .contains("expected method GET or HEAD, found \"POST\""));
    assert!(parse_request_line("GET /")
        .unwrap_err()
        .starts_with("bad request line"));
    assert!(parse_request_line("GET x HTTP/1.1")
        .unwrap_err()
        .contains("starting with /"));
    assert!(parse_request_line("GET / SPDY/3")
        .unwrap_err()
        .contains("expected HTTP/1.x"));
}

fn get_once(addr: &str, request: &[u8]) -> String {
    let mut s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    s.write_all(request).unwrap();
    let mut out = String::new();
    let _ = s.read_to_string(&mut out);
    out
}

/// The response to `request` once the one slot is free (the last connection's thread
/// gives it back just after its response).
fn get(addr: &str, request: &[u8]) -> String {
    for _ in 0..100 {
        let out = get_once(addr, request);
        if !out.starts_with("HTTP/1.1 503 ") {
            return out;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    panic!("the server stayed busy");
}

#[test]
fn the_server_bounds_connections_and_heads() {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap().to_string();
    let limits = Limits {
        max_connections: 1,
        max_head_bytes: 256,
        timeout: Duration::from_secs(3),
    };
    let handler: http::Handler = Arc::new(|target: &str| {
        if target == "/panic" {
            panic!("a handler that fails");
        }
        Response::html(format!("you asked for {target}"))
    });
    std::thread::spawn(move || http::serve(listener, limits, handler));
    let ok = get(&addr, b"GET /a?b=1 HTTP/1.1\r\nHost: x\r\n\r\n");
    assert!(ok.starts_with("HTTP/1.1 200 OK\r\n"), "{ok}");
    assert!(ok.ends_with("you asked for /a?b=1"), "{ok}");
    let big = format!("GET /{} HTTP/1.1\r\n\r\n", "a".repeat(400));
    assert!(get(&addr, big.as_bytes()).starts_with("HTTP/1.1 431 "));
    let post = get(&addr, b"POST / HTTP/1.1\r\n\r\n");
    assert!(post.starts_with("HTTP/1.1 400 ") && post.contains("expected method GET"));
    assert!(get(&addr, b"GET /panic HTTP/1.1\r\n\r\n").starts_with("HTTP/1.1 500 "));
    // One connection holds the only slot (it sends nothing yet): the next gets 503.
    std::thread::sleep(Duration::from_millis(200));
    let mut held = TcpStream::connect(&addr).unwrap();
    std::thread::sleep(Duration::from_millis(200));
    let busy = get_once(&addr, b"GET / HTTP/1.1\r\n\r\n");
    assert!(busy.starts_with("HTTP/1.1 503 "), "{busy}");
    assert!(busy.contains("expected at most 1 connections at once"));
    held.write_all(b"GET /late HTTP/1.1\r\n\r\n").unwrap();
    let mut out = String::new();
    held.read_to_string(&mut out).unwrap();
    assert!(out.ends_with("you asked for /late"));
}
