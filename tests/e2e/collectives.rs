//! Collectives through the runtime: clocks in the direction each one's
//! data flows (never more synchronising than MPI: seed 003 Fig 4,
//! SCENARIOS.md S11), nonblocking collectives merged where their request
//! completes, the collective signature check, and deadlocks in waits on
//! nonblocking collectives (issue 11).

use crate::util::{check_program, check_program_with, line_of};
use mbh_tests::json::{Report, Wildcard};

/// The senders of the first interleaving's wildcard receive `event` of
/// `rank`: the one it took and the potential ones.
fn first_senders(report: &Report, rank: i32, event: u32) -> Vec<i32> {
    let w: &Wildcard = report
        .wildcards
        .iter()
        .find(|w| w.rank == rank && w.event == event && w.interleaving == 1)
        .unwrap_or_else(|| panic!("no event {event} of rank {rank}: {:?}", report.wildcards));
    let mut all: Vec<i32> = w.matched.iter().chain(&w.potential).copied().collect();
    all.sort_unstable();
    all.dedup();
    all
}

fn senders_under_both_clocks(source: &str) -> [Vec<i32>; 2] {
    ["lamport", "vector"].map(|clocks| {
        let report = check_program_with(source, &["--clocks", clocks]);
        first_senders(&report, 1, 0)
    })
}

#[test]
fn gatherv_does_not_hide_the_late_sender() {
    let [lamport, vector] = senders_under_both_clocks("tests/programs/c1_gatherv_reduce.c");
    assert_eq!(lamport, [0, 2]);
    assert_eq!(vector, [0, 2]);
}

#[test]
fn allgatherv_orders_the_send_after_it() {
    let [lamport, vector] = senders_under_both_clocks("tests/programs/c2_allgatherv_orders.c");
    assert_eq!(lamport, [0]);
    assert_eq!(vector, [0]);
}

#[test]
fn ibarrier_orders_the_send_after_its_wait() {
    let [lamport, vector] = senders_under_both_clocks("tests/programs/c3_ibarrier_orders.c");
    assert_eq!(lamport, [0]);
    assert_eq!(vector, [0]);
}

#[test]
fn comm_split_orders_the_send_after_it() {
    let [lamport, vector] = senders_under_both_clocks("tests/programs/c4_comm_split_orders.c");
    assert_eq!(lamport, [0]);
    assert_eq!(vector, [0]);
}

/// A mismatch the signature check found: one finding naming both ranks'
/// calls (the expectations in the source give the lines), and the job
/// stopped by the runtime, not hung. (Both ranks call the same kind, so
/// the wait-for graph never reports these.)
fn check_mismatch(source: &str, calls: &str) {
    let report = check_program(source);
    assert_eq!(report.findings.len(), 1, "{:?}", report.findings);
    let finding = &report.findings[0];
    assert_eq!(finding.ranks, [0, 1], "{finding:?}");
    assert!(finding.message.contains(calls), "{finding:?}");
    let ranks = &report.runs[0].ranks;
    assert!(ranks.iter().all(|r| r.state == "aborted"), "{ranks:?}");
}

#[test]
fn bcast_with_different_roots_is_a_mismatch() {
    check_mismatch(
        "tests/programs/e11_bcast_root_mismatch.c",
        "rank 0 `MPI_Bcast`, rank 1 `MPI_Bcast`",
    );
}

#[test]
fn reduce_with_different_counts_is_a_mismatch() {
    check_mismatch(
        "tests/programs/e12_reduce_count_mismatch.c",
        "rank 0 `MPI_Reduce`, rank 1 `MPI_Reduce`",
    );
}

/// Ibcast against Ibarrier: both lines named (the wait-for graph may see
/// the same mismatch when both ranks block in `MPI_Wait`, hence only the
/// program's expectations here).
#[test]
fn nonblocking_collectives_in_different_orders_are_a_mismatch() {
    check_program("tests/programs/e13_nonblocking_mismatch.c");
}

/// Issue 16: reductions with different operations compute garbage under
/// MPI without any error; the signature check names both calls.
#[test]
fn reductions_with_different_operations_are_a_mismatch() {
    check_program("tests/programs/e15_iallreduce_ops.c");
}

/// Issue 16: an `MPI_Alltoallv` whose ranks disagree on one pair's counts
/// (MPI just delivers fewer ints) is reported on every rank, and the job
/// stopped; the correct uneven `Alltoallv`/`Ialltoallv`/`Alltoallw` calls
/// before it (in place, and with different counts of equal signatures)
/// are not.
#[test]
fn alltoallv_with_pairwise_different_counts_is_a_mismatch() {
    let report = check_program("tests/programs/e16_alltoallv_counts.c");
    assert_eq!(report.findings.len(), 1, "{:?}", report.findings);
    let finding = &report.findings[0];
    assert_eq!(finding.ranks, [0, 1, 2], "{finding:?}");
    assert!(
        finding.message.contains("rank 1 `MPI_Alltoallv`"),
        "{finding:?}"
    );
    let ranks = &report.runs[0].ranks;
    assert!(ranks.iter().all(|r| r.state == "aborted"), "{ranks:?}");
}

/// Issue 16: an `MPI_Gatherv` whose root expects more ints from rank 1
/// than it sends (MPI just delivers fewer) is reported on every rank, and
/// the job stopped; the correct uneven `Gatherv`/`Scatterv`/`Allgatherv`
/// calls before it (nonblocking, in place, and with different counts of
/// equal signatures) are not.
#[test]
fn gatherv_with_a_count_the_root_does_not_expect_is_a_mismatch() {
    let report = check_program("tests/programs/e17_v_collective_counts.c");
    assert_eq!(report.findings.len(), 1, "{:?}", report.findings);
    let finding = &report.findings[0];
    assert_eq!(finding.ranks, [0, 1, 2], "{finding:?}");
    assert!(
        finding.message.contains("rank 1 `MPI_Gatherv`")
            && finding
                .message
                .contains("a block that differs from what its receiver's counts expect"),
        "{finding:?}"
    );
    // The clean part ran on every rank, without a finding.
    let stdout = &report.runs[0].stdout;
    for rank in 0..3 {
        assert!(stdout.contains(&format!("rank {rank}: ")), "{stdout:?}");
    }
}

/// Issue 16: the same blocking collective posted on two different
/// communicators hangs under MPI; the wait-for graph confirms the
/// deadlock, naming both calls, instead of the timeout.
#[test]
fn a_collective_posted_on_different_communicators_deadlocks() {
    let report = check_program("tests/programs/e18_allreduce_other_comm.c");
    assert_eq!(report.findings.len(), 1, "{:?}", report.findings);
    let finding = &report.findings[0];
    assert_eq!(finding.kind, "deadlock", "{finding:?}");
    let waiting = |rank: i32| {
        finding.locations.iter().any(|l| {
            l.label.contains("blocked in `MPI_Allreduce`")
                && l.label.contains("which has not posted collective number 1")
                && l.rank == rank
        })
    };
    assert!(waiting(0) && waiting(1), "{finding:?}");
    // Each communicator is named: the world, and the duplicate by the
    // call that made it.
    let label_of = |rank: i32| {
        let location = finding.locations.iter().find(|l| l.rank == rank);
        location.map_or("", |l| l.label.as_str())
    };
    assert!(label_of(0).contains("on `MPI_COMM_WORLD`"), "{finding:?}");
    assert!(
        label_of(1).contains(
            "on the communicator made by `MPI_Comm_dup` at tests/programs/e18_allreduce_other_comm.c:15"
        ),
        "{finding:?}"
    );
}

/// Issue 11: a hang in a wait on a nonblocking collective is confirmed on
/// the wait-for graph as a `deadlock` (never a `timeout`, which the
/// program's header puts at 60 s), within seconds, naming the waits and the
/// collectives they wait on (the expectations in the source give the
/// lines).
fn check_nbc_deadlock(source: &str, collective: &str, ranks: &[i32]) -> Report {
    let report = check_program(source);
    assert_eq!(report.findings.len(), 1, "{:?}", report.findings);
    let finding = &report.findings[0];
    assert_eq!(finding.kind, "deadlock", "{finding:?}");
    assert_eq!(finding.ranks, ranks, "{finding:?}");
    let run = &report.runs[0];
    assert!(
        run.seconds < 20.0,
        "confirmed on the graph, not left to the timeout: {} s",
        run.seconds
    );
    assert!(
        finding.locations.iter().any(|l| l.label.contains(&format!(
            "`{collective}` posted here: collective number 1 on"
        ))),
        "{finding:?}"
    );
    assert!(
        finding
            .locations
            .iter()
            .any(|l| l.label.contains("which has not posted collective number 1")),
        "{finding:?}"
    );
    report
}

#[test]
fn issue_11_ibarriers_on_different_communicators_deadlock() {
    check_nbc_deadlock(
        "tests/programs/n1_ibarrier_other_comm.c",
        "MPI_Ibarrier",
        &[0, 1],
    );
}

#[test]
fn issue_11_an_ibarrier_a_rank_never_posts_deadlocks() {
    check_nbc_deadlock(
        "tests/programs/n2_ibarrier_never_posted.c",
        "MPI_Ibarrier",
        &[0, 1],
    );
}

#[test]
fn issue_11_a_waitall_over_a_collective_never_posted_deadlocks() {
    check_nbc_deadlock(
        "tests/programs/n3_waitall_collectives.c",
        "MPI_Ibarrier",
        &[0, 1],
    );
}

/// Nonblocking collectives overlapping point-to-point, completed by every
/// completion call, while ranks wait in receives or compute: clean.
#[test]
fn nonblocking_collectives_overlapping_point_to_point_are_clean() {
    check_program("tests/programs/n4_nbc_overlap_clean.c");
}

/// Members of a split communicator only: P0 waits on its `MPI_Iallreduce`
/// for P2, not for P1, which is in the other half.
#[test]
fn issue_11_a_collective_on_a_split_communicator_waits_for_its_members() {
    let source = "tests/programs/n5_split_iallreduce.c";
    let report = check_nbc_deadlock(source, "MPI_Iallreduce", &[0, 1, 2]);
    let finding = &report.findings[0];
    let wait = line_of(source, "MPI_Wait(&request");
    assert!(
        finding.locations.iter().any(|l| l.rank == 0
            && l.line == wait
            && l.label.contains("waiting for rank 2, which has not posted")),
        "{finding:?}"
    );
}
