//! The exploration engine: from the traces of the runs so far, decide the
//! next run (which wildcard receives to force to which sender), or that the
//! space is covered.
//!
//! Owns: choice points, depth-first search over them by clock (seed 000
//! Fig 5.23), decision files, loop-iteration abstraction (§5.3.5.1) and
//! bounded mixing (§5.3.5.2, Fig 5.31), search statistics.
//!
//! Must not: start processes, touch MPI or the file system beyond reading
//! traces and writing decision files. It is a pure function of the traces,
//! so it is unit-tested without MPI.
//!
//! # Status
//!
//! Empty in this version: `mbhybrid verify` runs one interleaving (the
//! MPI library's own choice) and says its coverage is partial. The engine
//! comes with the exploration issue.
#![deny(missing_docs)]
