//! Barrier relevance: which `MPI_Barrier` calls can be deleted without
//! changing what any wildcard receive can match.
//!
//! This is Fib (Sharma, Vakkalanka, Gopalakrishnan, Kirby, Thakur, Gropp,
//! *A Formal Approach to Detect Functionally Irrelevant Barriers in MPI
//! Programs*, EuroPVM/MPI 2008; seed 004), over the IntraHB relation of
//! Vakkalanka, Vo, Gopalakrishnan and Kirby, *Reduced Execution Semantics
//! of MPI* (seed 001, Definition 2). A barrier is relevant when, in some
//! explored run, it is the only thing that orders a wildcard receive R and
//! a send S that targets R's rank with a tag and communicator R accepts:
//! without it, R could take S. A barrier never relevant in a complete,
//! deadlock-free exploration is irrelevant (Siegel and Avrunin show that
//! without wildcards every barrier of a deadlock-free program is).
//!
//! Seed 004 judges barriers one at a time, but the irrelevant ones are
//! deleted together (`audit-barriers --patch`), so [`audit`] then chooses a
//! deletion set: in site order, a group of irrelevant sites joins it only
//! if, with every instance of the set and the group cut out of every run's
//! graph, every pair (R, S) ordered in the full graph stays ordered (see
//! "The deletion set" below). The sites that cannot join are kept:
//! relevant, naming the sites of the set they depend on
//! ([`Verdict::Relevant`]'s `after_deleting`).
//!
//! Owns: the completes-before graphs ([`RunGraph`], stored as
//! [`CbGraph`]), the windowed reachability and cut search
//! ([`WindowedReach`]), CheckRelevant ([`check_relevant`]), the verdicts
//! per site with their evidence and the deletion set ([`audit`]), and the
//! patch that deletes irrelevant calls ([`deletion_patch`]).
//!
//! Must not: run programs, read files or decide exploration; it reads
//! traces (`mbh_trace::RankTrace`) only.
//!
//! # Example
//!
//! ```
//! use mbh_fib::{audit, Coverage, Options, Verdict};
//!
//! // No runs, nothing executed: nothing to say.
//! let audit = audit(&[], Coverage { complete: true, deadlock_free: true }, &Options::default());
//! assert!(audit.barriers.is_empty());
//! assert_eq!(audit.verdict(7), None::<&Verdict>);
//! ```
//!
//! The graph, The deletion set, Limitations: `docs/design/fib.md`.
#![deny(missing_docs)]

// The differential tests share the integration tests' trace builder
// (`tests/common`), which names the crate `mbh_fib`.
#[cfg(test)]
extern crate self as mbh_fib;

mod audit;
mod cbgraph;
mod graph;
mod horizon;
mod joint;
mod model;
mod patch;
mod reach;
// The analysis before its rework, the differential tests' oracle: test
// code, kept with the tests, compiled into the unit tests because it
// reads the crate's private model.
#[cfg(test)]
#[path = "../tests/reference/mod.rs"]
mod reference;
mod relevance;

pub use audit::{
    audit, Audit, AuditStats, BarrierVerdict, Coverage, Evidence, UnknownReason, Verdict,
};
pub use cbgraph::{CbGraph, EdgeReference, Neighbors};
pub use graph::{CollectiveSet, OpNodes, P2pMatch, RunGraph, RunIssue};
pub use model::{CollectiveInstance, Edge, Event, Node, OpRef, Options, SendBuffering};
pub use patch::{deletion_patch, patch_path, patch_root, DeletionPatch, SkipReason, Skipped};
pub use reach::{CutRules, Every, EveryStep, Sweep, WindowedReach, Workspace};
pub use relevance::{
    check_relevant, evidence_path, Order, PathStep, RelevantPair, RunRelevance, RunStats, Taken,
};
