//! `mbhybrid run`'s deterministic mode (seed 002): its configuration, and
//! the statistics each rank leaves in the run directory at `MPI_Finalize`
//! for the CLI to report.

use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// How the runtime makes wildcard receives deterministic
/// ([`crate::config::RuntimeConfig::deterministic`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Deterministic {
    /// How long every rank a decision waits for must have been stalled
    /// (blocked in MPI at one and the same logical clock) before the
    /// deadlock breaker takes the earliest message there is (seed 002
    /// §4.2.3; the seed checks after 100 ms of stopping).
    pub patience_ms: u32,
    /// The program's standard error stays its own (`mbhybrid run`), not
    /// kept in the run directory (`verify --deterministic`).
    #[serde(default)]
    pub own_stderr: bool,
}

impl Default for Deterministic {
    fn default() -> Self {
        Deterministic {
            patience_ms: 1000,
            own_stderr: false,
        }
    }
}

/// How one rank's wildcard receives were decided.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct DecisionStats {
    /// Decided by logical time: the same on every run.
    pub decided: u64,
    /// Taken by the deadlock breaker (seed 002 §4.2.3): every sender that
    /// could still have sent an earlier message was blocked for the
    /// patience. The same on every run when those senders were blocked for
    /// good; otherwise the run may differ from here on.
    pub relaxed: u64,
    /// Not decided by logical time, so whichever message came first: the
    /// receive of an `MPI_Sendrecv` from `MPI_ANY_SOURCE` that could not be
    /// decided at once, and wildcard receives (and probes that found a
    /// message) on intercommunicators.
    pub undetermined: u64,
}

impl DecisionStats {
    /// The file of `rank` in interleaving directory `dir`.
    pub fn path(dir: &Path, rank: i32) -> PathBuf {
        dir.join(format!("rank-{rank}.decisions.json"))
    }

    /// The file's text.
    pub fn to_json(&self) -> String {
        format!(
            "{{\"decided\":{},\"relaxed\":{},\"undetermined\":{}}}",
            self.decided, self.relaxed, self.undetermined
        )
    }

    /// Reads a file's text; `None` when it is not one.
    pub fn parse(text: &str) -> Option<DecisionStats> {
        serde_json::from_str(text).ok()
    }

    /// Adds another rank's counts.
    pub fn add(&mut self, other: &DecisionStats) {
        self.decided += other.decided;
        self.relaxed += other.relaxed;
        self.undetermined += other.undetermined;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statistics_read_back_what_was_written() {
        let stats = DecisionStats {
            decided: 7,
            relaxed: 1,
            undetermined: 2,
        };
        assert_eq!(DecisionStats::parse(&stats.to_json()), Some(stats));
        assert_eq!(DecisionStats::parse("{"), None);
    }
}
