//! Issue 38 §4: nonblocking collectives as the checks see their requests
//! (never completed: `request-leak`) and their communicators (a rank on
//! another one: a hang confirmed at once, never the timeout).

use crate::util::{build, check_program, line_of, verify_json_with_args};
use mbh_tests::TestProgram;

/// Every nonblocking collective never waited or tested: a `request-leak`
/// at each call (every rank's request listed), as for point-to-point
/// requests; the waited `MPI_Iallgather` is not one.
#[test]
fn nonblocking_collectives_never_completed_are_request_leaks() {
    let source = "tests/programs/l3_icoll_never_waited.c";
    let report = check_program(source);
    let mut leaks: Vec<(u32, Vec<i32>)> = report
        .findings
        .iter()
        .filter(|f| f.kind == "request-leak")
        .map(|f| {
            let mut ranks: Vec<i32> = f.locations.iter().map(|l| l.rank).collect();
            ranks.sort_unstable();
            (f.locations[0].line, ranks)
        })
        .collect();
    leaks.sort();
    let text = std::fs::read_to_string(mbh_tests::workspace_root().join(source)).unwrap();
    let leaking: Vec<(u32, Vec<i32>)> = text
        .lines()
        .zip(1..)
        .filter(|(line, _)| line.contains("&r[") && line.trim_start().starts_with("MPI_I"))
        .map(|(_, number)| (number, vec![0, 1, 2]))
        .collect();
    assert_eq!(leaking.len(), 17, "every form, Ibarrier included");
    assert_eq!(leaks, leaking, "{:?}", report.findings);
    assert_eq!(report.findings.len(), 17, "{:?}", report.findings);
}

/// `MPI_Gather`, `MPI_Igather`, `MPI_Ireduce` and both nonblocking ones in
/// turn, with one rank on a duplicate of the world (`tests/programs/
/// e24_rooted_other_comm.c FORM ODD ROOT`): on 2, 3 and 4 ranks, the odd
/// rank the root or not, each run ends in a `deadlock` or
/// `collective-mismatch`, never at the timeout (60 s: one would show as a
/// `timeout` finding).
#[test]
fn rooted_collectives_on_another_communicator_are_confirmed_not_timed_out() {
    let source = "tests/programs/e24_rooted_other_comm.c";
    let program = TestProgram::load(source);
    let _lock = mbh_tests::mpi_lock();
    let dir = tempfile::tempdir().unwrap();
    let exe = build(&program.source, dir.path());
    let cases = [
        (3, "gather", "1", "0"),
        (3, "gather", "1", "1"),
        (2, "gather", "0", "1"),
        (4, "igather", "2", "2"),
        (3, "igather", "1", "2"),
        (2, "ireduce", "1", "1"),
        (4, "ireduce", "3", "0"),
        (3, "igather-ireduce", "1", "0"),
        (4, "igather-ireduce", "0", "0"),
    ];
    for (np, form, odd, root) in cases {
        let case = format!("{np} ranks: {form} {odd} {root}");
        let (status, report, _) = verify_json_with_args(
            &exe,
            np,
            dir.path(),
            &["--timeout", "60"],
            &[form, odd, root],
        );
        assert_eq!(status, 1, "{case}: {:?}", report.findings);
        let kinds: Vec<&str> = report.findings.iter().map(|f| f.kind.as_str()).collect();
        assert!(
            !kinds.is_empty()
                && kinds
                    .iter()
                    .all(|&k| k == "deadlock" || k == "collective-mismatch"),
            "{case}: {kinds:?}"
        );
    }
}

/// A rooted collective on which the ranks pass different communicators
/// and one rank also an invalid root (`tests/programs/
/// e25_invalid_root_other_comm.c FORM ODD BAD`: rank ODD on a duplicate of
/// the world, rank BAD with root = size): the invalid root is an argument
/// error MPI decides at the call, so it is reported there, on that rank,
/// blocking forms included; a deadlock of the other ranks may stand
/// beside it (they do hang), but never alone and never a timeout.
#[test]
fn an_invalid_root_is_reported_beside_a_communicator_mismatch() {
    let source = "tests/programs/e25_invalid_root_other_comm.c";
    let program = TestProgram::load(source);
    let _lock = mbh_tests::mpi_lock();
    let dir = tempfile::tempdir().unwrap();
    let exe = build(&program.source, dir.path());
    let cases = [
        (3, "gather", "1", "2", "MPI_Gather("),
        (3, "gather", "1", "1", "MPI_Gather("),
        (2, "gather", "0", "1", "MPI_Gather("),
        (3, "bcast", "1", "2", "MPI_Bcast("),
        (3, "igather", "0", "1", "MPI_Igather("),
        (3, "ireduce", "2", "0", "MPI_Ireduce("),
    ];
    for (np, form, odd, bad, call) in cases {
        let case = format!("{np} ranks: {form} {odd} {bad}");
        let (status, report, _) = verify_json_with_args(
            &exe,
            np,
            dir.path(),
            &["--timeout", "60"],
            &[form, odd, bad],
        );
        assert_eq!(status, 1, "{case}: {:?}", report.findings);
        let line = line_of(source, call);
        let bad_rank: i32 = bad.parse().unwrap();
        let invalid = report
            .findings
            .iter()
            .find(|f| f.kind == "invalid-argument")
            .unwrap_or_else(|| panic!("{case}: no invalid-argument in {:?}", report.findings));
        assert!(
            invalid.message.contains("invalid root"),
            "{case}: {invalid:?}"
        );
        assert!(
            invalid
                .locations
                .iter()
                .any(|l| l.line == line && l.rank == bad_rank),
            "{case}: at line {line} on rank {bad_rank}: {invalid:?}"
        );
        assert!(
            report
                .findings
                .iter()
                .all(|f| f.kind == "invalid-argument" || f.kind == "deadlock"),
            "{case}: {:?}",
            report.findings
        );
    }
}
