//! Issue 16: hangs the wait-for graph must confirm as deadlocks (never a
//! `timeout`): point-to-point calls on split communicators, `MPI_Finalize`,
//! `MPI_Sendrecv`, `MPI_Waitall` over requests of which one is stuck,
//! polling loops (`MPI_Test`, `MPI_Iprobe`).

use crate::util::check_program;

/// Verifies `source` (its expectations included) and asserts that the
/// report holds one finding, a deadlock.
fn only_a_deadlock(source: &str) {
    let report = check_program(source);
    assert_eq!(report.findings.len(), 1, "{:?}", report.findings);
    assert_eq!(report.findings[0].kind, "deadlock");
}

#[test]
fn a_receive_on_a_split_communicator_from_a_finalizing_rank_deadlocks() {
    let report = check_program("tests/programs/d1_split_recv_finalize.c");
    assert!(
        report.findings.iter().all(|f| f.kind == "deadlock"),
        "{:?}",
        report.findings
    );
}

/// A rank that left a gather early (it is not the root) and freed the
/// communicator while the gather's root waits for a rank that never comes:
/// the runtime used to finish the gather's clock exchange and signature
/// check inside `MPI_Comm_free`, where the graph saw the rank as running,
/// so the hang timed out (soak seed 3460, every run 60 s). The rank now
/// waits in `MPI_Finalize`, and the deadlock is confirmed.
#[test]
fn a_rank_that_freed_the_communicator_of_an_unfinished_gather_deadlocks() {
    only_a_deadlock("tests/programs/h1_comm_free_after_gather.c");
}

/// A `Waitall` waits for every one of its requests: one send that can
/// complete must not hide the other that cannot (soak seed 3945, whose
/// hangs each ran into the timeout). The finding names the stuck send.
#[test]
fn a_waitall_whose_second_send_is_never_received_deadlocks() {
    let report = check_program("tests/programs/h2_waitall_one_send_unreceived.c");
    assert_eq!(report.findings.len(), 1, "{:?}", report.findings);
    let stuck_send = report.findings[0]
        .locations
        .iter()
        .find(|l| l.rank == 0 && l.line == 19)
        .expect("the second MPI_Isend is located");
    assert!(
        stuck_send
            .label
            .contains("`MPI_Isend` here made the request `MPI_Waitall` is stuck on"),
        "{stuck_send:?}"
    );
}

/// A `Sendrecv` that received but cannot send must not hold its
/// synchronous sender (soak seed 4051): under `--buffering zero` the ring
/// used to end at its timeout; the expectations ask for the deadlock with
/// rank 1 in `MPI_Finalize` and the other two in `MPI_Sendrecv`.
#[test]
fn a_sendrecv_that_received_but_cannot_send_releases_its_sender() {
    only_a_deadlock("tests/programs/h3_sendrecv_received_cannot_send.c");
}

/// A receive MPI completed inside a `Waitall` that is still blocked is no
/// longer posted: the send it took must not look takeable by it (soak seed
/// 4094, whose hangs ran into the timeout).
#[test]
fn a_waitall_whose_wildcard_receive_completed_deadlocks() {
    only_a_deadlock("tests/programs/h4_waitall_settled_receive.c");
}

/// A wildcard `Irecv` posted after a receive from rank 1 never gets rank
/// 1's one message (MPI gives it to the receive posted first), even while
/// the runtime has not processed that receive's completion: the graph
/// follows MPI's matching order (soak seed 4220, whose forced `Waitany`
/// runs ran into the timeout).
#[test]
fn a_wait_on_a_wildcard_after_a_receive_that_took_the_message_deadlocks() {
    only_a_deadlock("tests/programs/h5_wait_wildcard_after_specific_irecv.c");
}

/// A `Testany` loop polling for its last receive, which nobody sends,
/// waits for that receive alone: the one it already returned does not
/// make it look slow (soak seed 4406, whose such loops ran into the
/// timeout).
#[test]
fn a_testany_loop_after_a_completion_deadlocks() {
    only_a_deadlock("tests/programs/h6_testany_loop_after_a_completion.c");
}

/// Receives MPI completed while the rank polls another request are no
/// longer posted, though the program has not completed them: the sends
/// they took must not look takeable by them (soak seed 4480, whose such
/// runs ran into the timeout under `--buffering zero`).
#[test]
fn a_test_loop_beside_completed_wildcard_receives_deadlocks() {
    only_a_deadlock("tests/programs/h7_test_loop_beside_completed_wildcards.c");
}

/// A replay that forces a `Testany`/`Testsome` loop to return a request
/// that cannot complete first hangs; the loop waits for that request
/// alone, so the graph confirms the hang instead of the run ending at its
/// timeout (the exhaustive reference forces every index, feasible or not;
/// before, the send beside it made the loop look slow). The infeasible
/// run is no finding.
#[test]
fn a_forced_poll_on_several_that_cannot_complete_is_confirmed() {
    let report = check_program("tests/programs/h8_forced_testany_that_cannot_complete.c");
    let states: Vec<Vec<&str>> = report
        .runs
        .iter()
        .map(|run| run.ranks.iter().map(|r| r.state.as_str()).collect())
        .collect();
    assert_eq!(
        states,
        [["finalized"; 3], ["deadlocked"; 3], ["deadlocked"; 3]],
        "each forced run's hang (Testany, then Testsome) is confirmed, not timed out"
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

/// Issue 16: a rank polling `MPI_Test` on a receive that only the rank
/// waiting for it could send is blocked as in `MPI_Wait`: the graph
/// confirms the deadlock, and the finding says the rank polled.
#[test]
fn a_test_loop_that_waits_for_a_blocked_rank_deadlocks() {
    let report = check_program("tests/programs/d4_test_loop_deadlock.c");
    let deadlock = &report.findings[0];
    let polling = deadlock
        .locations
        .iter()
        .find(|l| l.rank == 0)
        .expect("rank 0's poll is located");
    assert!(
        polling.label.contains("polling `MPI_Test`") && polling.label.contains("rank 1"),
        "{deadlock:?}"
    );
    assert!(
        deadlock
            .notes
            .iter()
            .any(|n| n.contains("give up by itself")),
        "{deadlock:?}"
    );
}

/// Issue 16: two ranks polling `MPI_Iprobe` (one from any source) for
/// each other's message while the third waits in a barrier.
#[test]
fn iprobe_loops_waiting_for_each_other_deadlock() {
    check_program("tests/programs/d5_iprobe_loop_deadlock.c");
}

/// Issue 16: a loop that gives up polling, and one that polls while its
/// partner computes, are no deadlock.
#[test]
fn polling_that_ends_by_itself_is_clean() {
    check_program("tests/programs/t3_polling_gives_up.c");
}
