//! The exploration engine of mbhybrid: which run comes next.
//!
//! This crate owns two pure computations over what the runtime records
//! (the analyses of one run's traces it uses, the oracle among them, are
//! `mbh-analysis`'s):
//!
//! * **exploration** ([`Explorer`]): from the wildcard events of each run,
//!   decide the next run (which wildcard receives to force to which
//!   sender, a [`Guidance`](mbh_trace::config::Guidance)) or that the
//!   space is covered: depth-first search over the clock-ordered choice
//!   points (seed 000 Fig 5.23), loop-iteration abstraction (§5.3.5.1) and
//!   bounded mixing (§5.3.5.2, Fig 5.31) as typed bounds
//!   ([`ExploreConfig`]), and search statistics; a run whose forced
//!   matches did not happen ([`unmatched_forces`], from `mbh-trace`, the
//!   rule `mbhybrid replay` shares) is not expanded. The search state
//!   outlives each run; which open alternative runs next is a [`Policy`]
//!   ([`Dfs`]), separate from the engine. A choice among requests
//!   (`MPI_Waitany`, ...; seed 001 §4,
//!   [`WildcardEvent::is_index_choice`](mbh_trace::rank_trace::WildcardEvent::is_index_choice))
//!   is a choice point like any other: a value per (rank, event), here an
//!   index, forced the same way.
//! * **an exhaustive reference search** ([`Exhaustive`]): forces, run by
//!   run, every sender the traces show a wildcard event could have taken,
//!   trusting no clock; slow, simple, obviously complete (its module docs
//!   argue it), for the differential test of [`Explorer`].
//!
//! It must not start processes, call MPI, or read or write files: callers
//! pass the traces in and write the guidance out. Everything here is unit
//! tested without MPI, on synthetic programs and hand-built traces.
//!
//! # Example
//!
//! ```
//! use mbh_bounding::{ExploreConfig, Explorer, LoopAbstraction, Reach, RunEnd};
//! use mbh_trace::config::Guidance;
//! use mbh_trace::rank_trace::WildcardEvent;
//! use mbh_trace::OpKind;
//!
//! // A stand-in for running the job: P1's wildcard receive takes P0 unless
//! // forced, and lists P2 as a potential sender (seed 000's crooked barrier).
//! // The runtime records whether it forced the receive.
//! fn run_job(guidance: Option<&Guidance>) -> Vec<WildcardEvent> {
//!     let forced = guidance.and_then(|g| g.index().source_for(1, 0));
//!     let matched = forced.unwrap_or(0);
//!     vec![WildcardEvent {
//!         rank: 1, event: 0, op_index: 3, kind: OpKind::Irecv, site: 7,
//!         start_clock: 0, final_clock: 1, matched, matched_tag: 0,
//!         potential: vec![2 - matched], loops: vec![], zone: None, pattern: None,
//!         enablers: vec![], forced: forced.is_some(), settled_in_loop: false,
//!     }]
//! }
//!
//! let config = ExploreConfig::new()
//!     .loop_abstraction(LoopAbstraction::Off)
//!     .mixing_bound(None);
//! let mut explorer = Explorer::new(config);
//! let mut runs = 0;
//! while let Some(run) = explorer.next_run() {
//!     let events = run_job(run.guidance.as_ref());
//!     let warnings = explorer.record_run(&events, RunEnd::Complete, &Reach::Whole);
//!     assert!(warnings.is_empty());
//!     runs += 1;
//! }
//! assert_eq!(runs, 2);
//! assert!(explorer.is_complete());
//! assert_eq!(explorer.stats().choice_points.explored, 1);
//! ```
//!
//! Limitations: `docs/design/bounding.md`.
#![deny(missing_docs)]

pub mod config;
pub mod exhaustive;
pub mod explore;
pub mod policy;

pub use config::{ExploreConfig, LoopAbstraction};
pub use exhaustive::Exhaustive;
pub use explore::{unmatched_forces, Explorer, NextRun, Reach, RunEnd, Stats, UnmatchedForce};
pub use policy::{Choice, Dfs, Key, NodeId, Policy};
