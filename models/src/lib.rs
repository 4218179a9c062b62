//! The seed structures of kvsim (published and fixed variants), their specs and
//! scenarios, and the registry the `kvsim` command uses.
#![forbid(unsafe_code)]

pub mod bench;
pub mod cli;
pub mod expect;
pub mod lincheck;
pub mod progress;
pub mod registry;

pub mod array_append;
pub mod array_locked;
pub mod counter;
pub mod event_log;
pub mod fifo;
pub mod lock;
pub mod message_queue;
pub mod spinlock;
pub mod table;
pub mod visitor_counter;
