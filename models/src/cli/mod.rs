//! The subcommands of `kvsim`, one module each.
pub mod serve;
