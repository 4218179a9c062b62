//! kvsim over TCP: a client backend for real memcached servers, consistent hashing across
//! several of them, a history recorder for runs from OS threads, and `kvsim serve`.

pub mod client;
pub mod ketama;

pub use client::{StopSignal, TcpKv, TcpKvConfig};
pub use ketama::Ketama;
pub mod recorder;

pub use recorder::Recorder;
pub mod memcached;

pub use memcached::MemcachedProcess;
pub mod server;

pub use server::{ServeConfig, Server};
pub mod stress;

pub use stress::{
    fresh_prefix, stress, StressConfig, StressError, StressHistory, StressReport, StressRun,
};
