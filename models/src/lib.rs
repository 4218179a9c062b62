//! The seed structures of kvsim (published and fixed variants), their specs and
//! scenarios, and the registry the `kvsim` command uses.
#![forbid(unsafe_code)]

pub mod bench;
pub mod cli;
pub mod expect;
pub mod message_queue;
pub mod progress;
pub mod registry;
