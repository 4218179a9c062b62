//! Counterexamples people can read: one run rendered as text (terminal), JSON (tools) and
//! a self-contained HTML page with a sequence diagram.

mod diagram;
mod escape;
mod explore;
mod html;
mod json;
mod rows;
mod text;

pub use escape::escape;
pub use explore::{explore_body, explore_header, explore_text};
pub use html::html;
pub use json::{json, JsonOp, JsonReport, JsonStep, FORMAT};
pub use rows::{clients, describe, faults_phrase, offending, op_label, rows, secs, Row, Who};
pub use text::{colour_wanted, knobs, text, text_styled, WIDTH};
