//! Issue 11: a search that says "complete" has run every combination of
//! concurrent wildcard outcomes. These are the hand-picked floor; the
//! differential test against the exhaustive reference is the proof.

use crate::util::{build, check_program_with, describe, verify_json};
use mbh_tests::json::Report;
use std::collections::BTreeSet;

/// The first sender each rank printed (`sig R: FIRST SECOND`), per run
/// that printed them all, as a tuple over `ranks`.
fn first_senders(report: &Report, ranks: &[i32]) -> BTreeSet<Vec<i32>> {
    let mut combinations = BTreeSet::new();
    for run in &report.runs {
        let firsts: Vec<Option<i32>> = ranks
            .iter()
            .map(|rank| {
                let prefix = format!("sig {rank}: ");
                run.stdout
                    .lines()
                    .find_map(|l| l.strip_prefix(&prefix))
                    .and_then(|rest| rest.split_whitespace().next())
                    .and_then(|first| first.parse().ok())
            })
            .collect();
        if let Some(firsts) = firsts.into_iter().collect::<Option<Vec<i32>>>() {
            combinations.insert(firsts);
        }
    }
    combinations
}

#[test]
fn x1_two_concurrent_first_receives_run_all_four_combinations() {
    let source = "tests/programs/x1_concurrent_flips.c";
    for clocks in ["lamport", "vector"] {
        let report = check_program_with(source, &["--clocks", clocks]);
        assert!(report.complete, "{clocks}");
        assert_eq!(report.findings.len(), 1, "{clocks}: {:?}", report.findings);
        assert_eq!(report.findings[0].kind, "deadlock");
        // The deadlocked run prints nothing for ranks 0 and 1; the other
        // three combinations complete and print theirs.
        let expected: BTreeSet<Vec<i32>> = [vec![2, 2], vec![2, 3], vec![3, 2]].into();
        assert_eq!(first_senders(&report, &[0, 1]), expected, "{clocks}");
    }
}

#[test]
fn x2_three_concurrent_first_receives_run_all_eight_combinations() {
    let source = "tests/programs/x2_three_concurrent_flips.c";
    for clocks in ["lamport", "vector"] {
        let report = check_program_with(source, &["--clocks", clocks]);
        assert!(report.complete, "{clocks}");
        assert_eq!(report.findings.len(), 1, "{clocks}: {:?}", report.findings);
        let seen = first_senders(&report, &[0, 1, 2]);
        assert_eq!(
            seen.len(),
            7,
            "{clocks}: every combination but the deadlocking one completes: {seen:?}"
        );
        assert!(!seen.contains(&vec![4, 4, 4]), "{clocks}");
    }
}

#[test]
fn a_search_stopped_by_its_budget_still_counts_its_choice_points() {
    let _lock = mbh_tests::mpi_lock();
    let dir = tempfile::tempdir().unwrap();
    let exe = build(
        std::path::Path::new("tests/programs/x1_concurrent_flips.c"),
        dir.path(),
    );
    let (_, report, out) = verify_json(&exe, 4, dir.path(), &["--max-interleavings", "2"]);
    assert_eq!(report.interleavings, 2, "{}", describe(&out));
    assert!(!report.complete);
    assert!(
        report.choice_points.found >= 2,
        "both ranks' first receives are choice points: {:?}\n{}",
        report.choice_points,
        describe(&out)
    );
}
