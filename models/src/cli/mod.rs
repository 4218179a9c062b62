//! The subcommands of `kvsim`, one module each.

pub mod check_history;
