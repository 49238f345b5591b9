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
