//! `kvsim explore TARGET --serve ADDR`: after the search, kvsim's Explorer page
//! ([`kvsim::explore::web`]) on ADDR, and stateright's stock Explorer on another port.

use crate::error::CliError;
use crate::explore::serve_address;
use kvsim::explore::web::{http, Site};
use kvsim::explore::Scope;
use kvsim::harness::target::{ExploreReport, Target};
use std::net::{SocketAddr, TcpListener};
use std::sync::Arc;

/// Serves the page of `report` (whose text form is `text`) on `addr`; blocks for as long
/// as the server runs.
pub fn serve(
    target: &dyn Target,
    scope: &Scope,
    mut report: ExploreReport,
    text: String,
    addr: &str,
) -> Result<(), CliError> {
    let addr = serve_address(addr);
    let listener = TcpListener::bind(&addr)
        .map_err(|e| CliError::new(format!("cannot listen on {addr}: {e}")))?;
    let local = listener
        .local_addr()
        .map_err(|e| CliError::new(format!("cannot listen on {addr}: {e}")))?;
    // The search's states: a time-free search that depended on the time ran again with
    // times, and its counts are that one's.
    let mut browsed = scope.clone();
    browsed.time_shift = scope.time_shift && report.time_dependence.is_none();
    let browser = target.subject().browser(&browsed).map_err(CliError::new)?;
    // The counterexample replayed once more with the store recorded, so that its page
    // steps through the store's contents too.
    if let Some(cx) = report.counterexample.take() {
        report.counterexample = Some(kvsim::harness::target::with_store(target, &cx));
    }
    let stock = stock_explorer(target, scope, local);
    let site = Arc::new(Site::new(report, text, browser, stock.clone()));
    eprintln!("kvsim: serving http://{local}/ (Ctrl-C to stop)");
    if let Some(url) = &stock {
        eprintln!(
            "kvsim: stateright's stock Explorer on {url} (its counts differ: it keeps every \
             state's times, and runs on past the first violation)"
        );
    }
    let handler: http::Handler = Arc::new(move |target: &str| site.respond(target));
    http::serve(listener, http::Limits::default(), handler)
        .map_err(|e| CliError::new(format!("serving on {local} failed: {e}")))
}

/// Starts stateright's stock Explorer on a free port of `local`'s host, on a thread of its
/// own; its address, or `None` when no port is free.
fn stock_explorer(target: &dyn Target, scope: &Scope, local: SocketAddr) -> Option<String> {
    // A free port: bound, read and let go (stateright binds it again at once).
    let port = TcpListener::bind(SocketAddr::new(local.ip(), 0))
        .and_then(|l| l.local_addr())
        .ok()?
        .port();
    let stock = SocketAddr::new(local.ip(), port).to_string();
    let subject = target.subject();
    let scope = scope.clone();
    let at = stock.clone();
    std::thread::spawn(move || {
        if let Err(why) = subject.serve_explorer(&scope, &at) {
            eprintln!("kvsim: stateright's stock Explorer: {why}");
        }
    });
    Some(format!("http://{stock}/"))
}
