//! Issue 38: a rank that only sends in a collective may leave it before
//! the others enter it (MPI-4.0 §6.1), and a match that needs it is found,
//! forced and replayed, whatever the MPI library's own call would do
//! (`MPI_Scan` and `MPI_Exscan` run as a chain in guided runs); where the
//! library still keeps the sender inside (a broadcast from `MPI_BOTTOM`),
//! the search is partial with the reason, never a deadlock.
//!
//! One program, `g1_rooted_early.c`, takes the collective by name: the
//! early sender E sends after it, another sender before it, and the
//! receiver's first wildcard receive asserts that it took the other one.

use crate::util::{build, check_program_with, describe, line_of, verify_json_with_args};
use mbh_tests::json::Report;
use mbh_tests::{run_mbhybrid, workspace_root};
use std::path::Path;

const SOURCE: &str = "tests/programs/g1_rooted_early.c";

const CLOCKS: [&str; 2] = ["lamport", "vector"];

/// Verifies the program with `args` under `clocks`: exit status, report,
/// and the output for messages.
fn verify(exe: &Path, dir: &Path, clocks: &str, args: &[&str]) -> (i32, Report, String) {
    let (status, report, out) = verify_json_with_args(exe, 3, dir, &["--clocks", clocks], args);
    (status, report, describe(&out))
}

/// No deadlock or timeout among the findings.
fn assert_no_hang(report: &Report, context: &str) {
    assert!(
        report
            .findings
            .iter()
            .all(|f| f.kind != "deadlock" && f.kind != "timeout"),
        "a hang MPI does not allow\n{context}"
    );
}

/// `collective`'s early sender lets the receiver take its message first:
/// the assertion is found on the receiver, the search is complete, and the
/// finding's replay reproduces it. With the assertion off, the run in
/// which the sender left early completes, and every rank received the data
/// the sender had at the call, though it overwrote its buffers at once.
fn check_early_sender(collective: &str) {
    let _lock = mbh_tests::mpi_lock();
    let dir = tempfile::tempdir().unwrap();
    let exe = build(Path::new(SOURCE), dir.path());
    let line = line_of(SOURCE, "R's first match");
    for clocks in CLOCKS {
        let (status, report, context) = verify(&exe, dir.path(), clocks, &[collective]);
        assert_no_hang(&report, &context);
        assert_eq!(status, 1, "{collective} --clocks {clocks}\n{context}");
        assert!(report.complete, "{collective} --clocks {clocks}\n{context}");
        assert_eq!(report.findings.len(), 1, "{context}");
        let finding = &report.findings[0];
        assert_eq!(finding.kind, "assertion", "{context}");
        // The receiver: rank 2 for a scan (rank 0 sends early), else 0.
        let receiver = if collective.contains("scan") { 2 } else { 0 };
        assert_eq!(
            (finding.locations[0].line, finding.locations[0].rank),
            (line, receiver),
            "{context}"
        );
        let replay = finding.replay.as_deref().unwrap_or_default();
        let mut args: Vec<&str> = replay.split_whitespace().skip(1).collect();
        args.extend(["--format", "json"]);
        let out = run_mbhybrid(&workspace_root(), &args);
        let replayed: Report = serde_json::from_slice(&out.stdout)
            .unwrap_or_else(|e| panic!("`{replay}`: {e}\n{}", describe(&out)));
        assert_eq!(out.status.code(), Some(1), "`{replay}`\n{}", describe(&out));
        assert!(
            replayed
                .findings
                .iter()
                .any(|f| f.kind == "assertion" && f.locations[0].line == line),
            "`{replay}`\n{}",
            describe(&out)
        );

        let (status, report, context) = verify(&exe, dir.path(), clocks, &[collective, "quiet"]);
        assert_eq!(
            (status, report.interleavings, report.complete),
            (0, 2, true),
            "{collective} quiet --clocks {clocks}\n{context}"
        );
        assert!(report.findings.is_empty(), "{context}");
    }
}

macro_rules! early_senders {
    ($($name:ident),* $(,)?) => { $(
        #[test]
        fn $name() {
            check_early_sender(stringify!($name));
        }
    )* };
}

early_senders!(
    bcast, ibcast, scatter, iscatter, scatterv, iscatterv, gather, igather, gatherv, igatherv,
    reduce, ireduce, scan, iscan, exscan, iexscan,
);

/// A broadcast from `MPI_BOTTOM` (absolute addresses, where the span of
/// the data may cover memory that is not the program's) is not copied, so
/// its root stays in MPICH's `MPI_Bcast` until the others enter: the
/// forced match does not happen, the run that waited for it is no
/// deadlock, and the search is partial, exit 3, with the reason.
#[test]
fn a_forced_match_that_still_cannot_happen_makes_the_search_partial() {
    let _lock = mbh_tests::mpi_lock();
    let dir = tempfile::tempdir().unwrap();
    let exe = build(Path::new(SOURCE), dir.path());
    for clocks in CLOCKS {
        let (status, report, context) = verify(&exe, dir.path(), clocks, &["bcast_bottom"]);
        assert_no_hang(&report, &context);
        if report.findings.is_empty() {
            assert!(!report.complete, "--clocks {clocks}\n{context}");
            assert_eq!(status, 3, "--clocks {clocks}\n{context}");
            assert!(
                report.warnings.iter().any(|w| w
                    .contains("was forced to take rank 2's message but never completed")
                    && w.contains("not checked")),
                "{context}"
            );
        } else {
            // An MPI library whose root leaves at once: the assertion.
            assert_eq!(
                (status, report.findings[0].kind.as_str()),
                (1, "assertion"),
                "{context}"
            );
        }
    }
}

/// Issue 38's program (a 1-int `MPI_Bcast` rooted at the later sender),
/// and the same with `MPI_Scatter`: the assertion, under both clocks, in
/// the two interleavings there are (the header's expectations).
#[test]
fn issue_38_programs_find_the_assertion_under_both_clocks() {
    for source in [
        "tests/programs/g2_bcast_root_leaves_early.c",
        "tests/programs/g3_scatter_root_leaves_early.c",
    ] {
        for clocks in CLOCKS {
            let report = check_program_with(source, &["--clocks", clocks]);
            assert!(report.complete, "{source} --clocks {clocks}");
        }
    }
}
