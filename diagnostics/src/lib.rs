//! Rendering mbhybrid's findings for people, editors, scripts, code-scanning
//! viewers and browsers, and the pages that explain each finding code.
//!
//! One model ([`mbh_trace::Report`] and its [`mbh_trace::Finding`]s), five
//! renderers:
//!
//! * [`human`]: codespan-reporting text with a source snippet for every
//!   rank's line, then a summary;
//! * [`short`]: one `file:line:col: severity: [code] message (rank R)` line
//!   per location, the format GCC and clang print, for editors' quickfix;
//! * [`json`]: the report object of DESIGN.md (`docs/json.md`);
//! * [`sarif`]: a SARIF 2.1.0 log for GitHub code scanning and VS Code;
//! * [`html`]: one self-contained page with source snippets and a
//!   space-time diagram per finding (from a [`mbh_trace::timeline::Timeline`] the caller
//!   builds from the traces).
//!
//! The barrier verdicts of `audit-barriers` ([`barriers`]) follow the
//! findings in the human and short formats and are results of their own
//! rules in SARIF.
//!
//! The static report of `analyze` has its own text form
//! ([`static_report`]).
//!
//! What a verification could not do ([`mbh_trace::outcome`]) is put in
//! words by [`outcome`], the same in every format; mbhybrid's own errors
//! and warnings on standard error go through [`tool`].
//!
//! [`explain`] holds one Markdown page per finding code (`MBH0001` …), with
//! an example that triggers it and its fix.
//!
//! ```
//! use mbh_diagnostics::{explain, short};
//! use mbh_trace::{Finding, FindingKind, Location, Report, Role, Severity};
//!
//! let mut finding = Finding::new(FindingKind::Crash, Severity::Error, "rank 1 crashed with SIGSEGV");
//! finding.locations.push(Location {
//!     file: "app.c".into(), line: 14, column: 5, rank: 1, call: None, function: None,
//!     role: Role::Primary, label: "the rank crashed here".into(),
//! });
//! let report: Report = serde_json::from_value(serde_json::json!({
//!     "tool": "mbhybrid", "version": "0.1.0", "program": "./app", "args": [],
//!     "np": 2, "clocks": "lamport", "buffering": "infinite", "interleavings": 1,
//!     "complete": true, "choice_points": {"found": 0, "explored": 0, "abstracted": 0, "mixing_bounded": 0},
//!     "findings": [finding], "wildcards": [], "barriers": [], "run_id": "r", "run_dir": "runs/r",
//!     "runs": [], "seconds": 0.1,
//! })).unwrap();
//! assert_eq!(
//!     short::render(&report),
//!     "app.c:14:5: error: [MBH0003] rank 1 crashed with SIGSEGV\n",
//! );
//! assert!(explain::page("3").unwrap().starts_with("# MBH0003: crash"));
//! ```
//!
//! This crate decides nothing about the program: it must not compute
//! findings, only show them. It reads source files only to quote them.
//!
//! # Limitations
//!
//! * The order of a rank's steps in SARIF code flows is the finding's order
//!   (secondary locations, then primary), not a recorded timeline.
//! * The HTML diagram shows at most [`html::MAX_COLUMNS`] steps per
//!   timeline, the last ones; the page says how many were left out.
#![deny(missing_docs)]

pub mod barriers;
pub mod explain;
pub mod html;
pub mod human;
pub mod json;
pub mod outcome;
pub mod sarif;
pub mod short;
mod sources;
pub mod static_report;
pub mod tool;

/// `text (rank R)`, unless the text already names rank `R` (`rank 1
/// crashed`, `rank 1's message`): every location says which rank it is on,
/// once.
pub(crate) fn with_rank(text: &str, rank: i32) -> String {
    if names_rank(text, rank) {
        text.to_string()
    } else {
        format!("{text} (rank {rank})")
    }
}

/// `text` with the ranks it is true of, `(ranks 0-2, 5)`, when it names
/// none of them itself (one rank: [`with_rank`]).
pub(crate) fn with_ranks(text: &str, ranks: &[i32]) -> String {
    match ranks {
        [rank] => with_rank(text, *rank),
        _ => format!("{text} (ranks {})", rank_ranges(ranks)),
    }
}

/// Sorted `ranks` as runs: `0-2, 5`.
fn rank_ranges(ranks: &[i32]) -> String {
    let mut sorted = ranks.to_vec();
    sorted.sort_unstable();
    sorted.dedup();
    let mut runs: Vec<(i32, i32)> = Vec::new();
    for rank in sorted {
        match runs.last_mut() {
            Some((_, last)) if *last + 1 == rank => *last = rank,
            _ => runs.push((rank, rank)),
        }
    }
    runs.iter()
        .map(|&(first, last)| match last - first {
            0 => first.to_string(),
            1 => format!("{first}, {last}"),
            _ => format!("{first}-{last}"),
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// Whether `text` has the words `rank R`.
pub(crate) fn names_rank(text: &str, rank: i32) -> bool {
    let needle = format!("rank {rank}");
    text.match_indices(&needle).any(|(at, _)| {
        let before = text[..at].chars().next_back();
        let after = text[at + needle.len()..].chars().next();
        !before.is_some_and(char::is_alphanumeric) && !after.is_some_and(|c| c.is_ascii_digit())
    })
}

#[cfg(test)]
mod tests {
    use super::{with_rank, with_ranks};

    #[test]
    fn the_rank_is_named_once() {
        assert_eq!(with_rank("blocked here", 1), "blocked here (rank 1)");
        assert_eq!(with_ranks("freed", &[2]), "freed (rank 2)");
        assert_eq!(with_ranks("freed", &[3, 0, 2, 1]), "freed (ranks 0-3)");
        assert_eq!(
            with_ranks("freed", &[0, 1, 5, 7, 8, 9]),
            "freed (ranks 0, 1, 5, 7-9)"
        );
        assert_eq!(with_rank("rank 1 crashed", 1), "rank 1 crashed");
        assert_eq!(
            with_rank("took rank 1's message", 1),
            "took rank 1's message"
        );
        assert_eq!(
            with_rank("waiting for rank 10", 1),
            "waiting for rank 10 (rank 1)"
        );
        assert_eq!(with_rank("prank 1", 1), "prank 1 (rank 1)");
        assert_eq!(
            with_rank("waiting for rank 2", 1),
            "waiting for rank 2 (rank 1)"
        );
    }
}
