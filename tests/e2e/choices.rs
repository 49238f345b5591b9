//! Issue 11: which request `MPI_Waitany`, `MPI_Testany` or `MPI_Waitsome`
//! returns is explored like a wildcard match (seed 001 §4), with
//! specific-source receives, and never offered when the other request's
//! message is causally after the call.

use crate::util::{check_program_with, line_of};
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
