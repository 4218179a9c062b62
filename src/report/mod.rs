//! Counterexamples people can read: the text report (lane diagram and step table).

mod text;

pub use text::text;
