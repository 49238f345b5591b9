//! Wildcard receives beyond SCENARIOS.md's list: polling probes with
//! `MPI_ANY_TAG`, and communicators other than `MPI_COMM_WORLD`. The
//! expected senders are worked out by hand in each program's comment.

use crate::util::{build, check_program_with, describe, line_of, verify_json};
use mbh_tests::json::Report;
use mbh_trace::layout::InterleavingDir;
use mbh_trace::RankTrace;

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

#[test]
fn a_wildcard_settled_inside_waitall_keeps_its_tag_when_a_freed_receive_resolves_it() {
    // The freed receive completes while the Waitall still waits, after
    // MPI completed (and freed) the wildcard's request: resolving the
    // wildcard then must not ask MPI about the freed handle.
    let source = "tests/programs/w4_freed_receive_in_waitall.c";
    let _lock = mbh_tests::mpi_lock();
    let dir = tempfile::tempdir().unwrap();
    let exe = build(std::path::Path::new(source), dir.path());
    let (status, report, out) = verify_json(&exe, 2, dir.path(), &["--keep-traces"]);
    assert_eq!(status, 0, "{}", describe(&out));
    assert!(report.findings.is_empty(), "{:?}", report.findings);
    assert!(
        report.runs[0].stdout.contains("a=1 c=3"),
        "{}",
        describe(&out)
    );
    let first = InterleavingDir::new(std::path::Path::new(&report.run_dir), 1);
    let trace = RankTrace::read(&first.trace(1)).unwrap();
    let events: Vec<_> = trace.ops.iter().filter_map(|op| op.event_clock()).collect();
    assert_eq!(events.len(), 1, "{:?}", trace.ops);
    assert_eq!(
        (events[0].matched, events[0].matched_tag),
        (0, 1),
        "the wildcard took rank 0's tag-1 message"
    );
}
