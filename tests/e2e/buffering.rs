//! Issue 11: buffering hazards through calls on several requests. A ring
//! whose `Isend`s a `Waitall` (or a `Waitany` loop) completes before the
//! receives are posted deadlocks without buffering; the default run, which
//! completes thanks to MPI's eager sends, must report the
//! `buffering-hazard` (seed 003 §3), and the correct ring neither.

use crate::util::{build, check_program, describe, line_of, verify_json};
use mbh_tests::json::Report;

const WAITALL: &str = "tests/programs/b1_ring_waitall.c";
const WAITANY: &str = "tests/programs/b2_ring_waitany.c";
const CORRECT: &str = "tests/programs/b3_ring_irecv_first.c";

/// Builds `source` and verifies it on `np` ranks with `options`; checks
/// the exit status.
fn verify(source: &str, np: u32, options: &[&str], exit: i32) -> Report {
    let _lock = mbh_tests::mpi_lock();
    let dir = tempfile::tempdir().unwrap();
    let exe = build(std::path::Path::new(source), dir.path());
    let (status, report, out) = verify_json(&exe, np, dir.path(), options);
    assert_eq!(status, exit, "verify exit status\n{}", describe(&out));
    report
}

/// The default run completes, and reports one `buffering-hazard` with a
/// send of every rank (an `Isend` line: MPICH gives both eager sends one
/// handle, so which of the two the report names is the runtime's guess).
/// A hazard is a warning: exit 0 (issue 37), 1 under `-D warnings`.
fn assert_hazard(source: &str, np: u32) {
    verify(source, np, &["-D", "warnings"], 1);
    let report = verify(source, np, &[], 0);
    assert!(
        report.runs[0].ranks.iter().all(|r| r.state == "finalized"),
        "the run itself completed: {report:?}"
    );
    let kinds: Vec<&str> = report.findings.iter().map(|f| f.kind.as_str()).collect();
    assert_eq!(kinds, ["buffering-hazard"], "{report:?}");
    let finding = &report.findings[0];
    let all: Vec<i32> = (0..np as i32).collect();
    assert_eq!(finding.ranks, all, "{finding:?}");
    let isends = [
        line_of(source, "MPI_Isend(&out[0]"),
        line_of(source, "MPI_Isend(&out[1]"),
    ];
    let mut ranks: Vec<i32> = finding
        .locations
        .iter()
        .filter(|l| l.file == source && isends.contains(&l.line))
        .map(|l| l.rank)
        .collect();
    ranks.sort_unstable();
    assert_eq!(ranks, all, "every rank's send: {finding:?}");
}

/// Under `--buffering zero` the job deadlocks on every rank.
fn assert_deadlock(source: &str, np: u32) {
    let report = verify(source, np, &["--buffering", "zero"], 1);
    let kinds: Vec<&str> = report.findings.iter().map(|f| f.kind.as_str()).collect();
    assert_eq!(kinds, ["deadlock"], "{report:?}");
    assert_eq!(report.findings[0].ranks, (0..np as i32).collect::<Vec<_>>());
}

#[test]
fn issue_11_ring_waitall_deadlocks_without_buffering() {
    check_program(WAITALL);
    assert_deadlock(WAITALL, 4);
}

#[test]
fn issue_11_ring_waitall_is_a_buffering_hazard_by_default() {
    assert_hazard(WAITALL, 3);
    assert_hazard(WAITALL, 4);
}

#[test]
fn issue_11_ring_waitany_deadlocks_without_buffering() {
    check_program(WAITANY);
    assert_deadlock(WAITANY, 4);
}

#[test]
fn issue_11_ring_waitany_is_a_buffering_hazard_by_default() {
    assert_hazard(WAITANY, 3);
    assert_hazard(WAITANY, 4);
}

#[test]
fn issue_11_ring_with_receives_posted_first_is_clean() {
    check_program(CORRECT);
    for np in [3, 4] {
        for options in [&[][..], &["--buffering", "zero"][..]] {
            let report = verify(CORRECT, np, options, 0);
            assert!(report.findings.is_empty(), "{options:?}: {report:?}");
        }
    }
}
