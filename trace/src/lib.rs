//! The data that crosses mbhybrid's crates, and its on-disk formats.
//!
//! Everything two crates must agree on lives here and nowhere else:
//!
//! * [`site`]: the table of MPI call sites that `mbhybrid build` writes
//!   beside the executable (`OUT.mbh.json`) and that the runtime's records
//!   point into by id;
//! * [`op`]: the MPI operations the runtime records, by kind;
//! * [`check`]: the records of the checks the runtime makes inside a
//!   rank, decoded (and encoded) in this one place;
//! * [`envelope`]: which message a receive can take (the one matching rule
//!   the analyses share, and the decoding of a send's envelope);
//! * [`record`]: the kind-specific words of a record (a completion's
//!   request, the runtime's own records), decoded in this one place;
//! * [`rma`]: the fields of the one-sided communication records;
//! * [`rank_trace`]: the per-rank binary trace file the runtime writes
//!   through a shared memory map (so it survives `SIGKILL`) and the CLI reads;
//! * [`config`]: the runtime's configuration for one run (clocks,
//!   buffering, the matches a guided replay forces);
//! * [`forced`]: which of those forced matches a run did not make, the
//!   one rule the search and `mbhybrid replay` share;
//! * [`layout`]: where a run keeps its files (run directory, interleavings);
//! * [`finding`] and [`report`]: what a verification found, as the JSON
//!   object of DESIGN.md;
//! * [`outcome`]: what it could not do (partial coverage, forced matches
//!   that did not happen, ranks the runtime stopped), as data;
//! * [`symbol`]: how a function's name is shown ([`demangle`]), the same
//!   in the static report, the site table and the findings.
//!
//! This crate must not depend on MPI, LLVM, or any other crate of the
//! workspace: it is the vocabulary, not an actor. The runtime links it into
//! the user's processes, so [`rank_trace::TraceWriter`] must never allocate
//! or panic.
//!
//! # Limitations
//!
//! The rank trace format is versioned ([`rank_trace::FORMAT_VERSION`]);
//! readers reject other versions instead of guessing. The readers of files
//! (rank traces, site tables, runtime configurations) never panic on bad
//! input: they return an error that says what is wrong, and a rank trace
//! cut short keeps its complete records and says how many it lost
//! ([`rank_trace::RankTrace::decode`]).
#![deny(missing_docs)]

pub mod check;
pub mod config;
pub mod determinism;
pub mod envelope;
pub mod finding;
pub mod forced;
pub mod layout;
mod loop_completions;
pub mod op;
pub mod outcome;
pub mod place;
pub mod rank_trace;
pub mod record;
pub mod report;
pub mod rma;
pub mod site;
pub mod static_report;
pub mod support;
pub mod symbol;
pub mod timeline;
pub mod window_access;

pub use envelope::{Envelope, RecvPattern, SendSide};
pub use finding::{Finding, FindingKind, Location, Role, Severity};
pub use op::OpKind;
pub use place::place;
pub use rank_trace::{RankTrace, TraceError};
pub use report::Report;
pub use site::{Site, SiteTable};
pub use symbol::demangle;
