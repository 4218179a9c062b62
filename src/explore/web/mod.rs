//! kvsim's Explorer page (`kvsim explore TARGET --serve ADDR`): the search the CLI ran,
//! served to a browser. The page opens, with no click, on the verdict, the property, the
//! reason, the state counts as the CLI prints them, the scope and the counterexample step
//! by step; below it, the state space to browse from the initial state, each action
//! labelled in the words of `kvsim check`'s report, through a small JSON API:
//!
//! - `GET /`: the page;
//! - `GET /counterexample`: the counterexample's own report ([`counterexample_page`]);
//! - `GET /api/state?path=0.2.1`: a state ([`crate::explore::browse::StateView`]), named
//!   by the actions taken from the initial state (empty for the initial state);
//! - `GET /api/report`: the verdict, the counts and the counterexample's path as JSON.
//!
//! Bad requests get 400 (or 404, 405) with a message saying what was expected; every
//! response is bounded ([`MAX_RESPONSE_BYTES`]), and so are paths, request heads and
//! concurrent connections ([`http::Limits`]).

pub mod http;
mod page;

use super::browse::{parse_path, Browse, StateView};
use crate::harness::records::{ExploreReport, RunReport};
use serde_json::json;
use std::sync::Arc;

/// Most bytes of one response (a larger one is refused with 400, naming the bound).
pub const MAX_RESPONSE_BYTES: usize = 4 << 20;

/// The counterexample as the page embeds it (in a frame, from `/counterexample`): one
/// self-contained HTML page for one run. The one place the page renders a [`RunReport`].
pub fn counterexample_page(r: &RunReport) -> String {
    crate::report::html(r)
}

/// One HTTP response.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Response {
    /// The status code (200, 400, 404, 405, …).
    pub status: u16,
    /// The `Content-Type`.
    pub content_type: &'static str,
    /// The body.
    pub body: Vec<u8>,
}

impl Response {
    fn html(body: String) -> Response {
        Response {
            status: 200,
            content_type: "text/html; charset=utf-8",
            body: body.into_bytes(),
        }
    }

    fn json(status: u16, value: &serde_json::Value) -> Response {
        Response {
            status,
            content_type: "application/json",
            body: value.to_string().into_bytes(),
        }
    }

    /// An error: `{"error": why}` with `status`.
    pub fn error(status: u16, why: &str) -> Response {
        Response::json(status, &json!({ "error": why }))
    }
}

/// What the page serves: one search's report, its state space and where stateright's
/// stock Explorer is.
pub struct Site {
    report: ExploreReport,
    text: String,
    browser: Arc<dyn Browse>,
    /// The counterexample's path in the state space, or why it cannot be followed.
    counterexample: Option<Result<Vec<usize>, String>>,
    stock: Option<String>,
}

impl Site {
    /// The site of `report`, whose text form (as `kvsim explore` printed it) is `text`,
    /// browsing `browser` (the search's state space); `stock` is the address of
    /// stateright's stock Explorer, when one is served.
    pub fn new(
        report: ExploreReport,
        text: String,
        browser: Arc<dyn Browse>,
        stock: Option<String>,
    ) -> Site {
        let counterexample = report
            .counterexample
            .as_ref()
            .map(|r| browser.follow(&r.choices, r.config.workload.as_deref()));
        Site {
            report,
            text,
            browser,
            counterexample,
            stock,
        }
    }

    /// The counterexample's path in the state space (`None` without one; an error when it
    /// cannot be followed there).
    pub fn counterexample_path(&self) -> Option<&Result<Vec<usize>, String>> {
        self.counterexample.as_ref()
    }

    /// The response to `GET target` (a path with an optional query).
    pub fn respond(&self, target: &str) -> Response {
        let (path, query) = target.split_once('?').unwrap_or((target, ""));
        let response = match path {
            "/" | "/index.html" => Response::html(self.page()),
            "/counterexample" => match &self.report.counterexample {
                Some(r) => Response::html(counterexample_page(r)),
                None => Response::error(
                    404,
                    &format!(
                        "no counterexample: the verdict is {}",
                        self.report.verdict.name()
                    ),
                ),
            },
            "/api/state" => match state_query(query).and_then(|p| self.browser.view(&p)) {
                Ok(view) => match serde_json::to_value(&view) {
                    Ok(v) => Response::json(200, &v),
                    Err(e) => Response::error(500, &format!("cannot encode the state: {e}")),
                },
                Err(why) => Response::error(400, &why),
            },
            "/api/report" => Response::json(200, &self.summary()),
            _ => Response::error(
                404,
                &format!(
                    "no such page: expected /, /counterexample, /api/state?path=STEPS or \
                     /api/report, found {:?}",
                    super::browse::clip(path, 80)
                ),
            ),
        };
        if response.body.len() > MAX_RESPONSE_BYTES {
            return Response::error(
                400,
                &format!(
                    "the response would take {} bytes, more than the bound of \
                     {MAX_RESPONSE_BYTES}: ask for a shorter path",
                    response.body.len()
                ),
            );
        }
        response
    }

    /// `/api/report`: the verdict, the property, the reason, the counts, the scope, the
    /// counterexample's path and token.
    pub fn summary(&self) -> serde_json::Value {
        let r = &self.report;
        let (path, path_error) = match &self.counterexample {
            Some(Ok(p)) => (Some(p.clone()), None),
            Some(Err(e)) => (None, Some(e.clone())),
            None => (None, None),
        };
        json!({
            "target": r.target,
            "verdict": r.verdict.name(),
            "property": property(r),
            "reason": r.verdict.reason(),
            "unique_states": r.unique_states,
            "total_states": r.total_states,
            "reduction": if r.reduced { "sleep sets" } else { "none" },
            "total_states_unreduced": r.total_states + r.slept,
            "max_depth": r.max_depth,
            "scope": r.scope.describe(),
            "counterexample_path": path,
            "counterexample_path_error": path_error,
            "token": r.token,
            "stock_explorer": self.stock,
        })
    }

    fn page(&self) -> String {
        let start = match &self.counterexample {
            Some(Ok(p)) => p.clone(),
            _ => Vec::new(),
        };
        // The counterexample's end (or the initial state) is shown first, with no click.
        let first = self
            .browser
            .view(&start)
            .or_else(|_| self.browser.view(&[]));
        page::render(&page::Page {
            report: &self.report,
            text: &self.text,
            property: property(&self.report),
            counterexample: self.counterexample.as_ref(),
            first: first.as_ref(),
            stock: self.stock.as_deref(),
        })
    }
}

/// The property the verdict is about, by name.
fn property(r: &ExploreReport) -> String {
    match &r.verdict {
        crate::verdict::Verdict::Violation(v) => v.property.clone(),
        _ => "every property the model checks (its spec on every final history, and progress)"
            .to_string(),
    }
}

/// The path a `/api/state` query names: `path=STEPS`, or nothing for the initial state.
fn state_query(query: &str) -> Result<Vec<usize>, String> {
    if query.is_empty() {
        return Ok(Vec::new());
    }
    match query.split_once('=') {
        Some(("path", steps)) if !steps.contains('&') => parse_path(steps),
        _ => Err(format!(
            "bad query: expected path=STEPS (e.g. path=0.2.1), found {:?}",
            super::browse::clip(query, 80)
        )),
    }
}

/// A view as the page embeds it in its script (`<` escaped so that no `</script>` ends it).
fn embedded(view: &StateView) -> String {
    serde_json::to_string(view)
        .unwrap_or_else(|_| "null".to_string())
        .replace('<', "\\u003c")
}

#[cfg(test)]
mod tests;
