//! The analyses of one run's traces: pure computations over what the
//! runtime recorded, used by the search (`mbh-bounding`), the hang monitor
//! (`mbh-launch`) and the verdict (`mbh-verdict`).
//!
//! * **deadlock analysis** ([`find_deadlock`]): from a snapshot of all
//!   ranks' traces taken while the job runs, decide on the wait-for graph
//!   (AND/OR semantics, seed 003) whether the job is deadlocked, with a
//!   witness (blocked calls, what each waits for, a cycle, the knot, dead
//!   ranks, mismatched collectives); and whether two snapshots show
//!   [`no_progress`];
//! * **buffering hazards** ([`find_buffering_hazard`]): from the complete
//!   traces of a run that finished, decide whether it completed only
//!   because the MPI library buffered standard-mode sends: seed 003's
//!   wait-state transition system over the run's own matches, with every
//!   standard-mode send synchronous, gets stuck; the witness names each
//!   stuck call, what it waits for, and a wait-for cycle;
//! * **an offline oracle** ([`potential_matches`]): from the complete
//!   traces of a run, the exact potential senders of every wildcard
//!   receive and probe on the matches-before order (seed 000 ch. 3), to
//!   check the runtime's LLCP/LVCP answers against ([`compare`]) and to
//!   give the exhaustive reference search its senders.
//!
//! It must not start processes, call MPI, read or write files, or decide
//! what runs next (that is the search's): callers pass the traces in. It
//! is unit tested without MPI, on hand-built traces.

#![deny(missing_docs)]

pub mod buffering;
mod comm_ranks;
pub mod deadlock;
pub mod oracle;
mod record_map;

pub use buffering::{find_buffering_hazard, Awaited, BufferingHazard, StuckRank};
pub use deadlock::{find_deadlock, no_progress, Deadlock, WaitFor};
pub use oracle::{
    compare, potential_matches, potential_matches_zero_buffering, potential_senders_and_indices,
    Comparison, OracleMatch, SenderDiff,
};
