//! Issue 38 item 2: a verdict is "complete" only over calls mbhybrid
//! models. MPI functions the runtime passes to MPI without modelling them
//! are warned about by `build` at each call, and `verify` names each call
//! with its line, reports the run as partial and exits 3 (1 when it also
//! finds an error). One-sided communication (the program here) is
//! recorded and its epochs, remote races and (built with the access
//! checks) origin buffers and window memory under fences and PSCW
//! checked: the fence program built by `mbhybrid build` is complete, and
//! built by plain `mpicc` (no access checks) it is partial, naming every
//! call, with words that say window memory and origin buffers were not
//! checked.

use crate::util::{build, check_program, describe, verify_json};
use mbh_tests::json::Report;
use mbh_tests::{run_mbhybrid, workspace_root, TestProgram};

const RMA: &str = "tests/programs/not_modelled/rma_put_race.c";

/// The calls of the RMA program, by function then line.
const RMA_CALLS: [(&str, u32); 5] = [
    ("MPI_Put", 22),
    ("MPI_Win_allocate", 17),
    ("MPI_Win_fence", 21),
    ("MPI_Win_fence", 23),
    ("MPI_Win_free", 26),
];

/// Every call of [`RMA_CALLS`] is in the report, at its line, and the
/// report says why it is partial, naming them: a program built without
/// the access checks, whose window memory and origin buffers are not
/// checked.
fn check_rma_report(report: &Report, context: &str) {
    assert!(!report.complete, "{context}");
    assert!(report.findings.is_empty(), "{:?}", report.findings);
    let named: Vec<(&str, u32)> = report
        .not_modelled
        .iter()
        .map(|l| (l.call.as_deref().unwrap_or(""), l.line))
        .collect();
    assert_eq!(named, RMA_CALLS, "{context}");
    for location in &report.not_modelled {
        assert_eq!(location.file, RMA, "{location:?}");
        assert_eq!(location.rank, 0, "the lowest rank that made it");
    }
    let why = report
        .warnings
        .iter()
        .find(|w| w.starts_with("coverage is partial"))
        .unwrap_or_else(|| panic!("the report says why it is partial\n{context}"));
    assert!(
        why.contains(
            "but not the loads and stores of window memory by its own process during an epoch"
        ) && why.contains(&format!("MPI_Put ({RMA}:22)")),
        "{why}"
    );
    assert!(
        why.contains("nor, as the program was built without the access checks"),
        "{why}"
    );
}

/// Built with the access checks, the fence program is checked fully:
/// complete, and no call is named as not checked.
#[test]
fn rma_calls_of_a_fence_program_built_with_the_access_checks_are_checked_fully() {
    // The program's header says exit 0 and no finding.
    let report = check_program(RMA);
    assert!(report.complete, "{:?}", report.warnings);
    assert!(report.not_modelled.is_empty(), "{:?}", report.not_modelled);
}

#[test]
fn build_warns_at_each_unmodelled_call() {
    let dir = tempfile::tempdir().unwrap();
    let exe = dir.path().join("rma");
    let out = run_mbhybrid(
        &workspace_root(),
        &["build", "-o", exe.to_str().unwrap(), RMA],
    );
    assert!(out.status.success(), "{}", describe(&out));
    let stderr = String::from_utf8_lossy(&out.stderr);
    for (call, line) in RMA_CALLS {
        let warning = format!(
            "{RMA}:{line}:3: warning: `{call}` is {} (one-sided communication (RMA))",
            mbh_trace::support::RACES_NOT_CHECKED
        );
        assert!(stderr.contains(&warning), "{warning}\n{stderr}");
    }
}

/// A program built by plain `mpicc -g` (the runtime preloaded): the calls
/// are found by their return addresses and placed by the debug
/// information.
#[test]
fn rma_calls_of_a_program_mpicc_built_are_named() {
    let program = TestProgram::load(RMA);
    let _lock = mbh_tests::mpi_lock();
    let dir = tempfile::tempdir().unwrap();
    let exe = dir.path().join("rma");
    let out = std::process::Command::new(mbh_tests::mpicc())
        .args(["-g", "-o"])
        .arg(&exe)
        .arg(RMA)
        .current_dir(workspace_root())
        .output()
        .expect("mpicc runs");
    assert!(out.status.success(), "{}", describe(&out));
    let (status, report, out) = verify_json(&exe, program.np, dir.path(), &[]);
    let context = describe(&out);
    assert_eq!(status, 3, "{context}");
    check_rma_report(&report, &context);
}

#[test]
fn a_build_of_the_rma_program_still_runs_as_under_mpi() {
    // The pass-throughs forward the program's arguments untouched: both
    // puts land (rank 0 prints the value of one of them).
    let _lock = mbh_tests::mpi_lock();
    let dir = tempfile::tempdir().unwrap();
    let exe = build(&workspace_root().join(RMA), dir.path());
    let (_, report, out) = verify_json(&exe, 2, dir.path(), &[]);
    let stdout = &report.runs[0].stdout;
    assert!(
        stdout.contains("target 1") || stdout.contains("target 2"),
        "{}",
        describe(&out)
    );
}
