//! The analysis as it was before issue 13's rework (commit b067cb6), kept
//! as the reference the differential tests compare the crate with: the
//! same verdicts, evidence, paths and findings on every generated trace.
//!
//! Test-only: nothing outside `#[cfg(test)]` uses it.
#![allow(dead_code)]

mod audit;
mod graph;
mod joint;
mod reach;
mod relevance;
#[cfg(test)]
mod tests;

pub(crate) use audit::audit;
pub(crate) use graph::RunGraph;
pub(crate) use relevance::{check_relevant, Taken};
