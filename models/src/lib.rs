//! The seed structures of kvsim (published and fixed variants), their specs and
//! scenarios, the registry the `kvsim` command uses, and the reports it generates.
#![forbid(unsafe_code)]

pub mod expect;
#[cfg(test)]
mod history_files;
pub mod ladder;
pub mod lincheck;
pub mod registry;
pub mod reports;
pub mod spec_adapter;

pub mod array_append;
pub mod array_locked;
pub mod cache_fill;
pub mod counter;
pub mod event_log;
pub mod fifo;
pub mod lock;
pub mod message_queue;
pub mod server_clock;
pub mod spinlock;
pub mod table;
pub mod visitor_counter;
