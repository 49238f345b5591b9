//! Rendering mbhybrid's findings for people, editors and scripts.
//!
//! One model ([`mbh_trace::Report`] and its [`mbh_trace::Finding`]s), three
//! renderers:
//!
//! * [`human`]: codespan-reporting text with a source snippet for every
//!   rank's line, then a summary;
//! * [`short`]: one `file:line:col: severity: [code] message (rank R)` line
//!   per location, the format GCC and clang print, for editors' quickfix;
//! * [`json`]: the report object of DESIGN.md.
//!
//! This crate decides nothing about the program: it must not compute
//! findings, only show them. It reads source files only to quote them.
//!
//! # Limitations
//!
//! SARIF output and the HTML space-time diagrams are not written yet.
#![deny(missing_docs)]

pub mod human;
pub mod json;
pub mod short;
mod sources;
