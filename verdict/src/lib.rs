//! `mbh-verdict`: what one run of an MPI job did, read from its traces and
//! judged. Every finding `verify`, `replay` and `audit-barriers` report is
//! made here, from files (the rank traces, the site table, what the
//! processes printed) and from the analyses of `mbh-analysis` (the
//! wait-for graph, the buffering replay); the binary launches the jobs and
//! assembles the report.
//!
//! It owns:
//!
//! - how each rank ended ([`outcome::analyze`], with [`rank_end`],
//!   [`local_checks`], [`printed`], [`place`], [`no_verdict`]);
//! - one interleaving's whole verdict ([`judge`]): the above plus a
//!   confirmed deadlock ([`deadlock`]), a buffering hazard, collectives
//!   some ranks skip ([`divergence`]);
//! - the findings of one kind each: buffer errors and reuse ([`buffers`],
//!   [`reuse`]), messages never received ([`unreceived`]), one-sided
//!   communication ([`rma_epochs`], [`rma_races`], [`rma_local`]), thread
//!   levels ([`thread_overlap`]), calls not modelled ([`not_modelled`]);
//! - the barrier verdicts of `audit-barriers` ([`barriers`]), the HTML
//!   report's diagram ([`timeline`]) and DWARF lookups ([`symbolize`]).
//!
//! It must not launch processes, read the command line, or print: it is
//! unit-tested on fixture traces without MPI. Rendering findings is
//! `mbh-diagnostics`'s.
//!
//! A run's findings are only as good as its traces: a rank whose trace is
//! missing or cut short is named in [`outcome::Analysis::warnings`], and
//! the binary keeps such a verdict from being called complete.
//!
//! Read more: `docs/design/verdict.md` (what each module owns, one finding
//! followed from the runtime's record to the screen).

#![deny(missing_docs)]

pub mod barriers;
pub mod buffers;
pub mod deadlock;
pub mod divergence;
#[cfg(test)]
mod fixtures;
pub mod judge;
pub mod local_checks;
pub mod no_verdict;
pub mod not_modelled;
pub mod outcome;
pub mod place;
pub mod printed;
pub mod rank_end;
pub mod reuse;
mod reuse_threads;
pub mod rma_epochs;
pub mod rma_local;
pub mod rma_races;
pub mod rma_reuse;
pub mod symbolize;
pub mod thread_overlap;
pub mod timeline;
pub mod unreceived;

pub use no_verdict::NoVerdict;
pub use outcome::{analyze, read_traces, Analysis, RunContext};
