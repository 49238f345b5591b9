//! Barrier relevance (seed 004, Fib): from each explored run's trace, build
//! the IntraCB and InterCB graphs and decide, per `MPI_Barrier` site,
//! whether it ever orders a wildcard receive before a send that could
//! otherwise have matched it.
//!
//! Owns: the completes-before graphs (petgraph), the CheckRelevant
//! procedure, verdicts with their evidence.
//!
//! Must not: run programs or decide exploration; it reads traces only.
//!
//! # Status
//!
//! Empty in this version; `mbhybrid audit-barriers` comes with the barrier
//! audit issue.
#![deny(missing_docs)]
