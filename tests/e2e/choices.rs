//! Issue 11: which request `MPI_Waitany`, `MPI_Testany` or `MPI_Waitsome`
//! returns is explored like a wildcard match (seed 001 §4), with
//! specific-source receives, and never offered when the other request's
//! message is causally after the call; not explored where the order
//! decides nothing (issue 37).

use crate::util::{check_program, check_program_with, line_of};
use mbh_tests::json::Report;

/// The choice events of rank 0 at `line`: (index returned, potential
/// indices) of each, in event order.
fn choices_at(report: &Report, line: u32) -> Vec<(Vec<i32>, Vec<i32>)> {
    let mut events: Vec<_> = report
        .wildcards
        .iter()
        .filter(|w| w.rank == 0 && w.line == line)
        .collect();
    events.sort_by_key(|w| w.event);
    events
        .iter()
        .map(|w| (w.matched.clone(), w.potential.clone()))
        .collect()
}

/// Both clocks find the order where rank 2's message comes first, and the
/// finding says which index the interleaving returned.
fn both_orders_explored(source: &str, marker: &str, call: &str) {
    let line = line_of(source, marker);
    for clocks in ["lamport", "vector"] {
        let report = check_program_with(source, &["--clocks", clocks]);
        let events = choices_at(&report, line);
        assert_eq!(events.len(), 1, "{clocks}: {:?}", report.wildcards);
        let w = report
            .wildcards
            .iter()
            .find(|w| w.line == line)
            .expect("the choice is listed");
        assert_eq!(w.call, call, "{clocks}");
        assert_eq!(w.senders, [0, 1], "{clocks}: both indices ran");
        let finding = &report.findings[0];
        let note = format!("`{call}` at {source}:{line}");
        assert!(
            finding
                .notes
                .iter()
                .any(|n| n.contains(&note) && n.contains("index 1")),
            "{clocks}: {:?}",
            finding.notes
        );
    }
}

#[test]
fn waitany_over_specific_receives_explores_both_indices() {
    both_orders_explored(
        "tests/programs/x1_waitany_order.c",
        "// waitany",
        "MPI_Waitany",
    );
}

#[test]
fn testany_polling_explores_both_indices() {
    both_orders_explored(
        "tests/programs/x2_testany_order.c",
        "// testany",
        "MPI_Testany",
    );
}

#[test]
fn waitsome_explores_which_request_comes_first() {
    both_orders_explored(
        "tests/programs/x4_waitsome_order.c",
        "// waitsome",
        "MPI_Waitsome",
    );
}

/// The halo exchange of issue 37 that handles whichever neighbour's
/// message is complete first: the order only picks the ghost cell, so it
/// is no choice, and 10 steps on 3 ranks (30 `Testany` choices, 2^30
/// orders) verify in one interleaving, complete, with the program's sums.
#[test]
fn a_testany_whose_order_decides_nothing_is_no_choice_point() {
    let source = "tests/programs/x5_testany_halo.c";
    let report = check_program(source);
    assert!(report.complete, "{:?}", report.warnings);
    assert_eq!(report.interleavings, 1);
    assert_eq!(
        report.choice_points.orderless, 30,
        "{:?}",
        report.choice_points
    );
    assert_eq!(
        report.choice_points.explored, 0,
        "{:?}",
        report.choice_points
    );
    let stdout = &report.runs[0].stdout;
    assert_eq!(stdout.matches("sum").count(), 3, "{stdout}");
}

/// The static half says the index only picks a slot, but the loop stops
/// after one request of two: the run shows it did not complete them all,
/// so the order is explored and the assertion that needs rank 1's message
/// first is found.
#[test]
fn a_loop_that_leaves_a_request_to_later_keeps_its_order_choice() {
    both_orders_explored(
        "tests/programs/x6_waitany_loop_leaves_one.c",
        "// waitany",
        "MPI_Waitany",
    );
}

#[test]
fn a_request_completed_causally_after_the_waitany_is_not_offered() {
    let source = "tests/programs/x3_waitany_causal.c";
    let line = line_of(source, "// waitany");
    for clocks in ["lamport", "vector"] {
        let report = check_program_with(source, &["--clocks", clocks]);
        let events = choices_at(&report, line);
        assert_eq!(
            events,
            [(vec![0], vec![])],
            "{clocks}: {:?}",
            report.wildcards
        );
        assert!(
            report.warnings.is_empty(),
            "{clocks}: {:?}",
            report.warnings
        );
    }
}
