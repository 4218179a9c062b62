//! Counterexamples people can read: one run rendered as text (terminal), JSON (tools) and
//! a self-contained HTML page with a sequence diagram, and a step-through viewer
//! ([`viewer`]).

mod diagram;
mod escape;
mod explore;
mod html;
mod json;
mod rows;
mod text;
mod viewer;

pub use escape::escape;
pub use explore::{explore_body, explore_header, explore_text};
pub use html::html;
pub use json::{json, JsonOp, JsonReport, JsonStep, FORMAT};
pub use rows::{clients, describe, faults_phrase, offending, op_label, rows, secs, Row, Who};
pub use text::{colour_wanted, knobs, text, text_styled, WIDTH};
pub use viewer::{data as viewer_data, page as viewer_page, viewer, viewer_section, NO_STORE};
