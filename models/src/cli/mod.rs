//! The subcommands of `kvsim`, one module each.
