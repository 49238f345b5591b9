//! Issue 16: hangs the wait-for graph must confirm as deadlocks (never a
//! `timeout`): point-to-point calls on split communicators, `MPI_Finalize`,
//! `MPI_Sendrecv`.

use crate::util::check_program;

#[test]
fn a_receive_on_a_split_communicator_from_a_finalizing_rank_deadlocks() {
    let report = check_program("tests/programs/d1_split_recv_finalize.c");
    assert!(
        report.findings.iter().all(|f| f.kind == "deadlock"),
        "{:?}",
        report.findings
    );
}

#[test]
fn sendrecvs_whose_tags_disagree_deadlock() {
    check_program("tests/programs/d2_sendrecv_tags.c");
}

#[test]
fn a_hang_the_graph_cannot_judge_says_why() {
    let source = "tests/programs/d3_undecided_hang.c";
    let report = check_program(source);
    let timeout = &report.findings[0];
    let on_self = timeout
        .locations
        .iter()
        .find(|l| l.rank == 0)
        .expect("rank 0's call is located");
    assert!(
        on_self.label.contains("`MPI_Recv`") && on_self.label.contains("could not name"),
        "{timeout:?}"
    );
    // Rank 1 polls: it is in no blocking call, or in the Iprobe the graph
    // does not model.
    let polling = timeout
        .notes
        .iter()
        .chain(timeout.locations.iter().map(|l| &l.label))
        .any(|text| {
            text.contains("rank 1") && (text.contains("polling") || text.contains("does not model"))
        });
    assert!(polling, "{timeout:?}");
}
