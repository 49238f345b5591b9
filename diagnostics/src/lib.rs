//! Rendering mbhybrid's findings for people, editors, scripts, code-scanning
//! viewers and browsers, and the pages that explain each finding code.
//!
//! One model ([`mbh_trace::Report`] and its [`mbh_trace::Finding`]s), five
//! renderers:
//!
//! * [`human`]: codespan-reporting text with a source snippet for every
//!   rank's line, then a summary;
//! * [`short`]: one `file:line:col: severity: [code] message (rank R)` line
//!   per location, for editors' quickfix ([`short::render`] has an example);
//! * [`json`]: the report object of `docs/json.md`;
//! * [`sarif`]: a SARIF 2.1.0 log for GitHub code scanning and VS Code;
//! * [`html`]: one self-contained page with a space-time diagram per
//!   finding, from a [`mbh_trace::timeline::Timeline`] the caller builds.
//!
//! It also owns the words of the rest of what mbhybrid shows: the barrier
//! verdicts of `audit-barriers` ([`barriers`]), the static report of
//! `analyze` ([`static_report`]), what a verification could not do
//! ([`outcome`]), mbhybrid's own errors and warnings on standard error
//! ([`tool`]), and one Markdown page per finding code ([`explain`]).
//!
//! This crate decides nothing about the program: it must not compute
//! findings, only show them. It reads source files only to quote them.
//!
//! Read more: `docs/design/diagnostics.md` (what each format shows,
//! limitations).
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
