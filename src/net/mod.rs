//! kvsim over TCP: a client backend for real memcached servers, consistent hashing across
//! several of them, a history recorder for runs from OS threads, and `kvsim serve`.

pub(crate) mod client;
pub(crate) mod ketama;

pub use client::{StopSignal, TcpKv, TcpKvConfig};
pub use ketama::Ketama;
pub(crate) mod recorder;

pub use recorder::{op_bytes, Recorder};
pub(crate) mod memcached;

pub use memcached::MemcachedProcess;
pub mod serve_control;
pub mod serve_faults;
pub mod serve_lockstep;
pub(crate) mod serve_shared;
pub(crate) mod serve_stats;
pub mod serve_trace;
pub(crate) mod server;

pub use serve_faults::{FaultPlan, WireFault, SERVE_FAULTS};
pub use serve_lockstep::LockstepConfig;
pub use serve_shared::{ConnTarget, ServeConfig, DEFAULT_LISTEN, DEFAULT_MAX_CONNECTIONS};
pub use serve_trace::TraceLine;
pub use server::Server;
pub(crate) mod stress;
mod stressable;

pub use stress::{
    fresh_prefix, stress, StressConfig, StressError, StressHistory, StressReport, StressRun,
};
pub use stressable::Stressable;
