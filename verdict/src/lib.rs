//! `mbh-verdict`: what one run of an MPI job did, read from its traces and
//! judged. Every finding `verify`, `replay` and `audit-barriers` report is
//! made here, from files (the rank traces, the site table, what the
//! processes printed) and from the analyses of `mbh-analysis` (the
//! wait-for graph, the buffering replay); the binary launches the jobs and
//! assembles the report.
//!
//! It owns:
//!
//! - [`outcome`]: reading a run's traces and the findings of how each rank
//!   ended ([`outcome::analyze`]), with its parts: [`rank_end`] (exits,
//!   crashes, assertions, aborts, timeouts, ranks killed from outside),
//!   [`local_checks`] (the checks the runtime made inside each rank),
//!   [`printed`] (MPI's, the C library's and the launchers' own words),
//!   [`place`] (source locations) and [`no_verdict`] (runs with nothing to
//!   judge);
//! - [`judge`]: one interleaving's whole verdict, the above plus a
//!   confirmed deadlock ([`deadlock`]), a buffering hazard, and
//!   collectives some ranks skip ([`divergence`]);
//! - [`barriers`]: the barrier verdicts of `audit-barriers` (Fib's, from
//!   `mbh-fib`), told with their lines and reasons;
//! - [`buffers`] and [`reuse`]: buffer errors `build` proved and buffer
//!   reuse the runtime saw;
//! - [`unreceived`]: messages sent and never received before
//!   `MPI_Finalize`;
//! - [`rma_epochs`]: one-sided communication outside its epochs, and
//!   epochs left open; [`rma_races`]: two one-sided operations on the
//!   same target bytes that nothing orders; [`rma_local`]: a process's
//!   own loads and stores of its window memory and an operation on the
//!   same bytes in the same exposure epoch;
//! - [`thread_overlap`]: two threads of a rank in MPI at once where the
//!   thread level forbids it;
//! - [`timeline`]: the space-time diagram of the HTML report;
//! - [`symbolize`]: program counters to source lines (DWARF).
//!
//! It must not launch processes, read the command line, or print: it is
//! unit-tested on fixture traces without MPI. Rendering findings is
//! `mbh-diagnostics`'s.
//!
//! # Following one finding
//!
//! A `type-mismatch`, from the record to the screen:
//!
//! 1. inside rank 0, the runtime sees a message whose datatype signature
//!    differs from the receive's and appends
//!    `mbh_trace::check::Check::TypeMismatch { sender, send_record }` through
//!    `Check::record` (`runtime/src/engine/mod.rs`, `checks::report`);
//! 2. after the job, [`read_traces`] reads each rank's trace, and
//!    [`judge::judge`] asks [`outcome::analyze`], which asks
//!    [`local_checks`] for each rank's checks: `Check::decode` gives the
//!    check back, typed, and `local_checks` turns it into an
//!    `mbh_trace::Finding` whose primary location is the receive's site and
//!    whose secondary one is the sender's send (its record, in the sender's
//!    trace);
//! 3. the binary's search loop (`mbh-session`) gathers the findings of
//!    every interleaving into an `mbh_trace::Report`, and
//!    `mbh_diagnostics::human::render` (or `json`, `short`, `sarif`)
//!    renders it.
//!
//! # Limitations
//!
//! A run's findings are only as good as its traces: a rank whose trace is
//! missing or cut short is named in [`outcome::Analysis::warnings`], and
//! the binary keeps such a verdict from being called complete.

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
