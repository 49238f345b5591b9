//! The exploration engine of mbhybrid: which run comes next.
//!
//! This crate owns two pure computations over what the runtime records
//! (the analyses of one run's traces it uses, the oracle among them, are
//! `mbh-analysis`'s):
//!
//! * **exploration** ([`Explorer`]): from the wildcard events of each run,
//!   decide the next run (which wildcard receives, or which requests of
//!   `MPI_Waitany` and its kin, to force, a
//!   [`Guidance`](mbh_trace::config::Guidance)) or that the space is
//!   covered: depth-first search over the clock-ordered choice points
//!   (seed 000 Fig 5.23) with loop abstraction and bounded mixing as typed
//!   bounds ([`ExploreConfig`]). Which open alternative runs next is a
//!   [`Policy`] ([`Dfs`]), separate from the engine. [`Explorer`]'s doc
//!   has an example;
//! * **an exhaustive reference search** ([`Exhaustive`]): every sender the
//!   traces show a wildcard event could have taken, trusting no clock;
//!   slow, simple, obviously complete, for the differential test of
//!   [`Explorer`].
//!
//! It must not start processes, call MPI, or read or write files: callers
//! pass the traces in and write the guidance out. Everything here is unit
//! tested without MPI, on synthetic programs and hand-built traces.
//!
//! Read more: `docs/design/bounding.md` (the search in detail,
//! limitations); the `explore` module's doc argues why the search is
//! complete, and the `exhaustive` module's why the reference is.
#![deny(missing_docs)]

pub mod config;
pub mod exhaustive;
pub mod explore;
pub mod policy;

pub use config::{ExploreConfig, LoopAbstraction};
pub use exhaustive::Exhaustive;
pub use explore::{unmatched_forces, Explorer, NextRun, Reach, RunEnd, Stats, UnmatchedForce};
pub use policy::{Choice, Dfs, Key, NodeId, Policy};
