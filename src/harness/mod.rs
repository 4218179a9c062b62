//! The harness: what turns the simulator's single runs into checks. The erased target
//! ([`target`]), plain records ([`records`]), many runs of one scenario with their budget
//! and shard ([`sweep`]), minimizing ([`shrink`], remembering what it probed in [`probed`]), findings ([`findings`]), the one
//! [`campaign`] that runs many checks on threads under one budget, and the `cargo test`
//! gates ([`Check`], [`Explore`]).

pub mod campaign;
pub mod findings;
pub mod probed;
pub mod records;
pub mod shrink;
pub mod sweep;
pub mod target;

pub use campaign::{Budget, Hooks, Job, Plan, Runs};
pub use findings::Finding;
pub use records::{CheckReport, RunReport};
pub use shrink::ShrinkLimits;
pub use target::{ModelTarget, Target};
