//! Wildcard receives beyond SCENARIOS.md's list: polling probes with
//! `MPI_ANY_TAG`, and communicators other than `MPI_COMM_WORLD`. The
//! expected senders are worked out by hand in each program's comment.

use crate::util::{check_program_with, line_of};
use mbh_tests::json::Report;

/// The first-run senders (taken and potential) of `rank`'s wildcard events
/// at `line`, in event order.
fn first_run_senders(report: &Report, rank: i32, line: u32) -> Vec<Vec<i32>> {
    let mut events: Vec<_> = report
        .wildcards
        .iter()
        .filter(|w| w.rank == rank && w.line == line)
        .collect();
    events.sort_by_key(|w| w.event);
    events
        .iter()
        .map(|w| {
            let mut all: Vec<i32> = w.matched.iter().chain(&w.potential).copied().collect();
            all.sort_unstable();
            all.dedup();
            all
        })
        .collect()
}

#[test]
fn polling_probes_with_any_tag_see_every_sender_not_yet_received() {
    let source = "tests/programs/w1_probe_poll.c";
    let line = line_of(source, "// probe");
    for clocks in ["lamport", "vector"] {
        let report = check_program_with(source, &["--clocks", clocks]);
        let events = first_run_senders(&report, 0, line);
        assert_eq!(events.len(), 3, "{clocks}: {:?}", report.wildcards);
        // Each successful probe: every sender not received yet.
        assert_eq!(events[0], [1, 2, 3], "{clocks}: {:?}", report.wildcards);
        assert_eq!(events[1].len(), 2, "{clocks}: {:?}", report.wildcards);
        assert_eq!(events[2].len(), 1, "{clocks}: {:?}", report.wildcards);
        assert!(report.runs.iter().all(|r| r.stdout.contains("total 20")));
    }
}

#[test]
fn wildcards_on_a_split_communicator_name_world_ranks_and_stay_inside_it() {
    let source = "tests/programs/w2_subcomm_wildcard.c";
    let line = line_of(source, "// sub wildcard");
    for clocks in ["lamport", "vector"] {
        let report = check_program_with(source, &["--clocks", clocks]);
        let even = first_run_senders(&report, 0, line);
        assert_eq!(even.len(), 2, "{clocks}: {:?}", report.wildcards);
        assert_eq!(even[0], [2, 4], "{clocks}: {:?}", report.wildcards);
        assert_eq!(even[1].len(), 1, "{clocks}: {:?}", report.wildcards);
        let odd = first_run_senders(&report, 1, line);
        assert_eq!(odd, [vec![3]], "{clocks}: {:?}", report.wildcards);
    }
}

#[test]
fn a_polled_wildcard_on_a_duplicated_communicator_has_both_senders() {
    let source = "tests/programs/w3_dup_comm_poll.c";
    let line = line_of(source, "// polled");
    for clocks in ["lamport", "vector"] {
        let report = check_program_with(source, &["--clocks", clocks]);
        let events = first_run_senders(&report, 0, line);
        assert_eq!(events, [vec![1, 2]], "{clocks}: {:?}", report.wildcards);
    }
}
