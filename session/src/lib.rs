//! `mbh-session`: one verification, from a checked program to the set of
//! interleavings it ran.
//!
//! It owns:
//!
//! - [`session`]: what every run of one verification shares (the program,
//!   the launcher, the run directory and its manifest, the call sites, the
//!   runtime to preload), prepared from a request or resumed from a run
//!   directory for `replay`;
//! - [`interleaving`]: one run: its runtime configuration written, its job
//!   launched under the deadlock monitor (`mbh-launch`), its traces judged
//!   (`mbh-verdict`), and what a later replay needs kept;
//! - [`search_loop`]: the depth-first search over interleavings that
//!   `mbh-bounding`'s explorer steers, with the budgets that stop it (the
//!   one place they are enforced) and the report's search statistics;
//! - [`run_ahead`]: the interleavings `--jobs` launches ahead of the search;
//! - [`divergence`]: which forced matches a replay did not make, with
//!   their calls (the search's own are facts of [`search_loop`]; all are
//!   put in words by `mbh-diagnostics`);
//! - [`deterministic`]: what a deterministic `run` decided, read back from
//!   its traces;
//! - [`pruner`]: deleting the traces of runs that showed nothing, off the
//!   path from one run to the next.
//!
//! It must not parse the command line, choose the MPI (the binary resolves
//! the launcher and the runtime and passes them in [`SessionRequest`]), or
//! render findings or what limited the search (it records them as
//! `mbh_trace::outcome` data). It prints only the progress lines a session asked for.
//!
//! # Limitations
//!
//! Jobs run through one launcher template on this machine or inside one
//! allocation; a budget that stops the search is named in the report,
//! which is then not called complete.

#![deny(missing_docs)]

pub mod deterministic;
pub mod divergence;
pub mod error;
pub mod interleaving;
pub mod progress;
pub mod pruner;
pub mod run_ahead;
pub mod search_loop;
pub mod session;

pub use error::SessionError;
pub use session::{check_program, RuntimeLookup, Session, SessionRequest};
