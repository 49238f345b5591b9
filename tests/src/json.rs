//! The JSON report as the tests read it: the tests' own copy of the schema,
//! with `deny_unknown_fields`, so that a renamed or misspelt field fails a
//! test instead of silently reading as missing.

use serde::Deserialize;

/// `verify --format json`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(missing_docs)]
pub struct Report {
    pub tool: String,
    pub version: String,
    pub program: String,
    pub args: Vec<String>,
    pub np: u32,
    pub clocks: String,
    pub buffering: String,
    pub interleavings: u32,
    pub complete: bool,
    pub choice_points: ChoicePoints,
    pub findings: Vec<Finding>,
    pub wildcards: Vec<Wildcard>,
    pub barriers: Vec<serde_json::Value>,
    /// `audit-barriers` only.
    #[serde(default)]
    pub barrier_audit: Option<AuditCost>,
    pub run_id: String,
    pub run_dir: String,
    pub runs: Vec<Run>,
    pub warnings: Vec<String>,
    /// Absent when empty.
    #[serde(default)]
    pub limits: Vec<String>,
    /// Calls of MPI functions mbhybrid does not model (issue 38); absent
    /// when none.
    #[serde(default)]
    pub not_modelled: Vec<Location>,
    /// Absent without `--jobs N`, N > 1.
    #[serde(default)]
    pub run_ahead: Option<RunAhead>,
    pub seconds: f64,
}

/// `run_ahead`: how `verify --jobs N` used its runs made ahead.
#[derive(Debug, Clone, Copy, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct RunAhead {
    /// `N`.
    pub jobs: u32,
    /// Interleavings taken from runs made ahead.
    pub taken: u32,
    /// Runs made ahead and never asked for.
    pub unused: u32,
}

/// What `audit-barriers` spent.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(missing_docs)]
pub struct AuditCost {
    pub fib_seconds: f64,
    pub exploration_seconds: f64,
}

/// Choice point counts.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(missing_docs)]
pub struct ChoicePoints {
    pub found: u64,
    pub explored: u64,
    pub abstracted: u64,
    pub mixing_bounded: u64,
    #[serde(default)]
    pub orderless: u64,
}

/// A finding.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(missing_docs)]
pub struct Finding {
    pub kind: String,
    pub code: String,
    pub severity: String,
    pub message: String,
    pub interleaving: u32,
    pub ranks: Vec<i32>,
    pub locations: Vec<Location>,
    pub notes: Vec<String>,
    pub help: Option<String>,
    pub replay: Option<String>,
}

/// A location.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(missing_docs)]
pub struct Location {
    pub file: String,
    pub line: u32,
    pub column: u32,
    pub rank: i32,
    pub call: Option<String>,
    #[serde(default)]
    pub function: Option<String>,
    pub role: String,
    pub label: String,
}

/// One interleaving's end.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(missing_docs)]
pub struct Run {
    pub interleaving: u32,
    pub launcher_exit: Option<i32>,
    pub ranks: Vec<RankEnd>,
    pub seconds: f64,
    pub stdout: String,
    pub dir: Option<String>,
    #[serde(default)]
    pub infeasible: bool,
}

/// One rank's end.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(missing_docs)]
pub struct RankEnd {
    pub rank: i32,
    pub state: String,
    pub exit_status: Option<i32>,
    pub signal: Option<i32>,
    pub operations: u64,
    pub stderr: Option<String>,
}

/// A wildcard receive and its senders.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(missing_docs)]
pub struct Wildcard {
    pub rank: i32,
    pub file: String,
    pub line: u32,
    pub call: String,
    pub matched: Vec<i32>,
    pub potential: Vec<i32>,
    pub event: u32,
    pub interleaving: u32,
    pub clock: u64,
    pub senders: Vec<i32>,
}
