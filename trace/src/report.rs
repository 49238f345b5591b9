//! The report of a verification: the JSON object `verify --format json`
//! prints (DESIGN.md, "Command line"). Fields may be added, none renamed.

use crate::finding::{Finding, Location};
use serde::{Deserialize, Serialize};

/// Counts of choice points (wildcard receives with more than one possible
/// sender), and what the bounds did with them.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ChoicePointStats {
    /// Choice points seen in all runs.
    pub found: u64,
    /// Choice points whose alternatives were all run.
    pub explored: u64,
    /// Skipped by loop-iteration abstraction.
    pub abstracted: u64,
    /// Skipped by the mixing bound.
    pub mixing_bounded: u64,
    /// Choices of which request `MPI_Waitany`, `MPI_Testany` or a `some`
    /// form returns first, at sites whose order the static analysis showed
    /// to decide nothing: no choice, so skipping them leaves the search
    /// complete. Absent when zero.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub orderless: u64,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// One wildcard receive and the senders it matched or could have matched.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct WildcardReport {
    /// The receiving rank.
    pub rank: i32,
    /// Source file.
    pub file: String,
    /// Line.
    pub line: u32,
    /// The MPI call.
    pub call: String,
    /// The sender it matched (a one-element list; empty when unknown).
    pub matched: Vec<i32>,
    /// Senders found as potential matches and not taken in the first run.
    pub potential: Vec<i32>,
    /// The rank's wildcard event number (0-based, issue order).
    pub event: u32,
    /// The interleaving these senders come from (the first that ran the
    /// receive).
    pub interleaving: u32,
    /// Final logical clock of the receive in that interleaving.
    pub clock: u64,
    /// Every sender the receive (the same rank's same wildcard event) took
    /// or could have taken in any interleaving, sorted.
    #[serde(default)]
    pub senders: Vec<i32>,
}

/// The verdict on one `MPI_Barrier` site.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BarrierVerdict {
    /// Source file.
    pub file: String,
    /// Line.
    pub line: u32,
    /// `relevant`, `irrelevant` or `unknown`.
    pub verdict: String,
    /// Why the verdict is `unknown`, or what makes the barrier relevant, in
    /// words.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// For a relevant barrier: the wildcard receive and the send it orders.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub evidence: Vec<crate::finding::Location>,
}

/// How one rank's process ended in one interleaving.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RankOutcome {
    /// Rank.
    pub rank: i32,
    /// `finalized`, `exited`, `signaled`, `aborted`, `deadlocked` (stopped
    /// by mbhybrid after a confirmed deadlock), `timed-out`, `killed` (by the
    /// launcher, after another rank failed), `never-started`.
    pub state: String,
    /// Exit status, when it exited.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub exit_status: Option<i32>,
    /// Signal number, when a signal ended it.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub signal: Option<i32>,
    /// MPI operations the rank recorded.
    pub operations: u64,
    /// The rank's standard error (the end of it, when long).
    #[serde(skip_serializing_if = "String::is_empty", default)]
    pub stderr: String,
}

/// What one run of the job (one interleaving) ended with.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunOutcome {
    /// 1-based interleaving number.
    pub interleaving: u32,
    /// The launcher's exit code (`None` if killed by a signal).
    pub launcher_exit: Option<i32>,
    /// Per rank.
    pub ranks: Vec<RankOutcome>,
    /// Wall time of the run, seconds.
    pub seconds: f64,
    /// What the program printed on standard output (the end of it, when
    /// long).
    #[serde(default)]
    pub stdout: String,
    /// The interleaving's directory, when it is kept (it showed a new
    /// finding, or `--keep-traces`): the whole standard output in
    /// `launcher.stdout`, each rank's standard error in `rank-N.stderr`,
    /// and the files the run wrote in `work/`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dir: Option<String>,
    /// The exhaustive reference search (`--search exhaustive`) forced a
    /// match this run could not make: it is not an execution of the
    /// program, and its findings are not reported.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub infeasible: bool,
}

/// The time `audit-barriers` spent: Fib's share of a run is what
/// BENCHMARKS.md's "Fib share" measures (`scripts/bench.sh`).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct AuditCost {
    /// Fib's judgement of every barrier site, seconds.
    pub fib_seconds: f64,
    /// The exploration before it, seconds.
    pub exploration_seconds: f64,
}

/// How `verify --jobs N` used the runs it launched ahead of the search.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct RunAheadStats {
    /// `N`: MPI jobs at once.
    pub jobs: u32,
    /// Interleavings the search took from runs made ahead.
    pub taken: u32,
    /// Runs made ahead the search never asked for (deleted).
    pub unused: u32,
}

/// The whole report.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Report {
    /// Always `mbhybrid`.
    pub tool: String,
    /// mbhybrid's version.
    pub version: String,
    /// The program as given.
    pub program: String,
    /// Its arguments.
    pub args: Vec<String>,
    /// Number of processes.
    pub np: u32,
    /// `lamport` or `vector`.
    pub clocks: String,
    /// `infinite`, `zero` or `both`.
    pub buffering: String,
    /// Interleavings run.
    pub interleavings: u32,
    /// Whether every interleaving within the bounds was run.
    pub complete: bool,
    /// Choice point statistics.
    pub choice_points: ChoicePointStats,
    /// Findings, deduplicated, in order of discovery.
    pub findings: Vec<Finding>,
    /// Wildcard receives and their senders.
    pub wildcards: Vec<WildcardReport>,
    /// Barrier verdicts (`audit-barriers` only).
    pub barriers: Vec<BarrierVerdict>,
    /// What the barrier audit cost (`audit-barriers` only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub barrier_audit: Option<AuditCost>,
    /// The run id (`mbhybrid replay RUN_ID`).
    pub run_id: String,
    /// The run directory.
    pub run_dir: String,
    /// How each interleaving's processes ended.
    pub runs: Vec<RunOutcome>,
    /// Tool warnings (unsupported calls, soundness warnings).
    #[serde(default)]
    pub warnings: Vec<String>,
    /// What the verdict does not cover, whatever this run did:
    /// the branches on the program's input that decide MPI calls, code
    /// the access checks do not see. Not problems of the run: warnings
    /// are those.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub limits: Vec<String>,
    /// The calls of MPI functions the runtime does not model that the
    /// program made (`MPI_Put`, `MPI_Neighbor_alltoall`, ...),
    /// one per function and line: what they do is not verified, so the
    /// report is not `complete`. Also the one-sided communication calls
    /// (races not checked) and the calls where a run stopped because two
    /// threads of a rank were in MPI at once (each told by its `label`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub not_modelled: Vec<Location>,
    /// `verify --jobs N` with `N > 1`: how the runs made ahead were used.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run_ahead: Option<RunAheadStats>,
    /// Wall time of the whole verification, seconds.
    pub seconds: f64,
}

/// How the launcher of one run ended.
#[derive(Debug)]
pub struct JobEnd {
    /// The launcher's exit status; `None` when mbhybrid stopped it.
    pub status: Option<std::process::ExitStatus>,
    /// Whether the timeout stopped it.
    pub timed_out: bool,
    /// Whether the monitor stopped it (a confirmed deadlock).
    pub stopped_by_monitor: bool,
    /// Wall time.
    pub elapsed: std::time::Duration,
}
