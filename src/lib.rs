//! kvsim: deterministic simulation and model checking for data structures built on a
//! memcached-style key-value store.
//!
//! (The crate documentation with a runnable example, the concepts and the limitations is
//! written as the pieces land.)
#![forbid(unsafe_code)]

pub mod command;
pub mod explore;
pub mod history;
pub mod kv;
pub mod model;
pub mod report;
pub mod rng;
pub mod scenario;
pub mod sim;
pub mod spec;
pub mod store;
pub mod target;
pub mod verdict;
