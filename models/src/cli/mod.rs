//! The subcommands of `kvsim`, one module each.
pub mod check;
pub mod check_history;
pub mod explore;
pub mod list;
pub mod replay;
pub mod report;
pub mod serve;
pub mod stress;
