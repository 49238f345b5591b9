//! Issue 19: collectives some ranks may skip, found by `build`'s static
//! analysis, reported from a run that reaches them and confirmed by a run
//! that shows ranks disagreeing; and the inputs a verdict depends on.

use crate::util::{build, check_program, describe, line_of, verify_json_with_args};
use mbh_tests::{run_mbhybrid, workspace_root};
use mbh_trace::static_report::StaticReport;

const V1: &str = "tests/programs/v1_rank_collective.c";

/// The default input makes every rank call the collective: the run is
/// clean, yet the collective is reported (a warning naming its branch), and
/// the report says its verdict holds for this input only.
#[test]
fn v1_a_rank_dependent_collective_is_warned_about_from_a_clean_run() {
    let report = check_program(V1);
    assert_eq!(report.findings.len(), 1, "{:?}", report.findings);
    let finding = &report.findings[0];
    assert_eq!(finding.kind, "collective-divergence");
    assert_eq!(finding.severity, "warning");
    assert!(
        finding
            .message
            .contains("the branch at tests/programs/v1_rank_collective.c:19 depends on the rank"),
        "{}",
        finding.message
    );
    assert!(
        finding.locations.iter().any(|l| l.line == 19),
        "{:?}",
        finding.locations
    );
    assert!(
        report
            .limits
            .iter()
            .any(|w| w.starts_with("this verdict holds for the input it ran with: control flow at tests/programs/v1_rank_collective.c:19 depends on")
                && w.contains("argv[1]")),
        "{:?}",
        report.limits
    );
}

/// With the argument `1`, rank 1 skips the collective: the run deadlocks,
/// and the deadlock, which points at the collective, is also where the
/// confirmation goes, with the branch that decided it: one problem, one
/// finding.
#[test]
fn v1_the_run_that_skips_it_confirms_it() {
    let _lock = mbh_tests::mpi_lock();
    let dir = tempfile::tempdir().unwrap();
    let exe = build(std::path::Path::new(V1), dir.path());
    let (status, report, _) = verify_json_with_args(&exe, 2, dir.path(), &[], &["1"]);
    assert_eq!(status, 1);
    let kinds: Vec<&str> = report.findings.iter().map(|f| f.kind.as_str()).collect();
    assert_eq!(kinds, ["deadlock"]);
    let deadlock = &report.findings[0];
    assert!(
        deadlock.notes.iter().any(|n| n.contains(
            "(collective-divergence, MBH0019; confirmed in this run: the ranks made this call rank 0 1 time, rank 1 0 times)"
        )),
        "{:?}",
        deadlock.notes
    );
    assert!(
        deadlock
            .locations
            .iter()
            .any(|l| l.line == 19 && l.label.contains("branch")),
        "{:?}",
        deadlock.locations
    );
}

/// Conditions every rank computes alike (the size, a broadcast loop
/// bound, a reduced flag) are not reported.
#[test]
fn v2_uniform_conditions_are_not_reported() {
    let report = check_program("tests/programs/v2_uniform_collectives.c");
    assert!(report.warnings.is_empty(), "{:?}", report.warnings);
}

/// A clean program whose MPI calls depend on its input: no finding, and
/// the verdict names the branches on the input.
#[test]
fn v3_the_inputs_a_verdict_depends_on_are_named() {
    let report = check_program("tests/programs/v3_input_branch.c");
    let lines: Vec<&String> = report
        .limits
        .iter()
        .filter(|w| w.starts_with("this verdict holds for the input it ran with"))
        .collect();
    assert_eq!(lines.len(), 2, "{:?}", report.limits);
    assert!(
        lines[0].ends_with("v3_input_branch.c:17 depends on argc and argv[1]"),
        "{lines:?}"
    );
    assert!(
        lines[1].ends_with("v3_input_branch.c:25 depends on argc"),
        "{lines:?}"
    );
}

/// `build` warns about a collective behind a branch whose paths make
/// different collectives, with the branch and the code; a branch whose
/// paths all make the same ones (SCENARIOS.md S3: `MPI_Barrier` on every
/// side of `if (rank == 1) ... else if (rank == 2) ... else`) is not
/// warned about (PARCOACH's sequence comparison, `static/src/balance.rs`).
#[test]
fn build_warns_only_where_the_paths_make_different_collectives() {
    let dir = tempfile::tempdir().unwrap();
    let build_stderr = |source: &str| {
        let exe = dir.path().join("prog");
        let out = run_mbhybrid(
            &workspace_root(),
            &["build", "-o", exe.to_str().unwrap(), source],
        );
        assert!(out.status.success(), "{}", describe(&out));
        String::from_utf8_lossy(&out.stderr).into_owned()
    };
    let warned = build_stderr(V1);
    assert!(
        warned.lines().any(|l| l
            .contains("warning: `MPI_Allreduce` may not be made alike by every rank")
            && l.contains(
                "the branch at tests/programs/v1_rank_collective.c:19 depends on the rank"
            )
            && l.ends_with("[MBH0019]")),
        "{warned}"
    );
    let balanced = build_stderr("tests/programs/s3_nonovertaking.c");
    assert!(!balanced.contains("MBH0019"), "{balanced}");
    let reordered = build_stderr("tests/programs/e3_collective_order.c");
    assert_eq!(reordered.matches("[MBH0019]").count(), 4, "{reordered}");
}

/// Issue 38: a collective that a rank- and input-dependent branch decides,
/// in a run whose input reaches it on no rank, is reported with the call
/// and the branch; an error (exit 1) here, since every path to it passes
/// `rank == 0`: whenever an input reaches it, rank 1 skips it. The input
/// that takes the branch deadlocks.
#[test]
fn a_collective_only_rank_0_can_make_is_an_error_before_any_input_reaches_it() {
    let source = "tests/programs/divergence/rank_and_input.c";
    let report = check_program(source);
    assert_eq!(report.findings.len(), 1, "{:?}", report.findings);
    let finding = &report.findings[0];
    assert_eq!(finding.severity, "error");
    assert!(
        finding.message.starts_with(
            "only rank 0 of the 2 can make `MPI_Barrier`, so whenever an input reaches it the other ranks skip it: every path to it passes `rank == 0` at tests/programs/divergence/rank_and_input.c:13"
        ),
        "{finding:?}"
    );
    let lines: Vec<u32> = finding.locations.iter().map(|l| l.line).collect();
    assert_eq!(lines, [14, 13], "the barrier, then the branch: {finding:?}");
    let _lock = mbh_tests::mpi_lock();
    let dir = tempfile::tempdir().unwrap();
    let exe = build(std::path::Path::new(source), dir.path());
    let (status, taken, _) = verify_json_with_args(&exe, 2, dir.path(), &[], &["a", "b"]);
    assert_eq!(status, 1);
    assert_eq!(taken.findings[0].kind, "deadlock", "{:?}", taken.findings);
}

/// Issue 38: where the ranks may agree for some input (`rank < n`, `n`
/// given), an unreached collective stays a warning with both lines.
#[test]
fn a_collective_the_ranks_may_agree_on_stays_a_warning() {
    let source = "tests/programs/divergence/ranks_below_input.c";
    let report = check_program(source);
    assert_eq!(report.findings.len(), 1, "{:?}", report.findings);
    let finding = &report.findings[0];
    assert_eq!(finding.severity, "warning");
    assert!(
        finding.message.contains("was not reached with this input"),
        "{finding:?}"
    );
    let barrier = line_of(source, "MPI_Barrier(MPI_COMM_WORLD);");
    let branch = line_of(source, "if (rank < below)");
    let lines: Vec<u32> = finding.locations.iter().map(|l| l.line).collect();
    assert_eq!(lines, [barrier, branch], "{finding:?}");
}

/// Issue 38: two barriers under `rank == 0 && v` and `rank != 0 && v` are
/// the halves of one agreement; neither is called certain.
#[test]
fn two_halves_of_one_agreement_are_not_errors() {
    let source = "tests/programs/divergence/two_halves.c";
    let report = check_program(source);
    let severities: Vec<&str> = report
        .findings
        .iter()
        .map(|f| f.severity.as_str())
        .collect();
    assert_eq!(severities, ["warning", "warning"], "{:?}", report.findings);
}

/// `mbhybrid analyze --format json SOURCE`'s report.
fn analyze(source: &str) -> StaticReport {
    let out = run_mbhybrid(&workspace_root(), &["analyze", "--format", "json", source]);
    assert!(out.status.success(), "{}", describe(&out));
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {}", describe(&out)))
}

/// Each correct program of `tests/programs/divergence/` reproduces a false
/// alarm of issue 37 on a real application (the comments in each say
/// which); `analyze` reports no collective some ranks may skip.
fn assert_no_divergence(source: &str) {
    let report = analyze(source);
    let found: Vec<String> = report
        .divergent_collectives
        .iter()
        .map(|d| d.message())
        .collect();
    assert!(found.is_empty(), "{source}: {found:#?}");
}

/// miniFE's `if (myproc == 0) { std::cout << ..; }`: a branch that only
/// prints and rejoins decides nothing, although `<<` may throw; the run
/// is clean.
#[test]
fn issue_37_a_rank_0_print_branch_decides_nothing() {
    let source = "tests/programs/divergence/print_branch.cpp";
    assert_no_divergence(source);
    let report = check_program(source);
    assert!(report.findings.is_empty(), "{:?}", report.findings);
}

/// The same branch with a barrier in it is still reported, with the
/// branch, although `<<` may throw there too.
#[test]
fn issue_37_a_rank_0_branch_that_makes_a_barrier_is_still_reported() {
    let source = "tests/programs/divergence/rank_print_barrier.cpp";
    let report = analyze(source);
    let found: Vec<(u32, Vec<u32>)> = report
        .divergent_collectives
        .iter()
        .map(|d| {
            (
                d.span.line,
                d.branches.iter().map(|b| b.span.line).collect(),
            )
        })
        .collect();
    let barrier = line_of(source, "MPI_Barrier(MPI_COMM_WORLD);");
    let branch = line_of(source, "if (rank == 0)");
    assert_eq!(found, [(barrier, vec![branch])]);
}

/// HPCG's CG loop: its condition reads a norm `MPI_Allreduce` produced,
/// through a reference, next to a timer and a struct holding the rank.
#[test]
fn issue_37_a_loop_on_an_allreduce_result_is_uniform() {
    assert_no_divergence("tests/programs/divergence/allreduce_loop.cpp");
}

/// HPCG's `if (ierr) return ierr;` after a check of sizes whose rank flag
/// gates only printing; the sizes share structs with the rank.
#[test]
fn issue_37_a_return_computed_from_sizes_only_is_uniform() {
    assert_no_divergence("tests/programs/divergence/size_only_return.cpp");
}

/// A loop bound read from the command line, in a struct that also holds
/// the rank, the time and a value read from a file: no divergence, and the
/// branch names the input it reads and nothing else.
#[test]
fn issue_37_a_branch_names_only_the_inputs_that_reach_it() {
    let source = "tests/programs/divergence/inputs_named.c";
    let report = analyze(source);
    assert!(
        report.divergent_collectives.is_empty(),
        "{:?}",
        report.divergent_collectives
    );
    let branches: Vec<(u32, Vec<String>)> = report
        .input_branches
        .iter()
        .map(|b| (b.span.line, b.inputs.clone()))
        .collect();
    let line = line_of(source, "for (i = 0; i < p.n; i++)");
    assert_eq!(
        branches,
        [(line, vec!["argc".to_owned(), "argv[1]".to_owned()])]
    );
}

/// `if (rank < nprocs)` is always true: no warning at `build`, and the
/// run is clean.
#[test]
fn issue_37_rank_below_size_is_always_true() {
    let source = "tests/programs/divergence/rank_below_size.c";
    assert_no_divergence(source);
    let report = check_program(source);
    assert!(report.findings.is_empty(), "{:?}", report.findings);
}

/// MPICH's intercommunicator harness (`MTestGetIntercomm`'s loop) on 2
/// ranks: the helper called on both sides of `if (left)` makes the same
/// collectives, the error path makes none, and the collective under
/// `if (rank != 0)` is on a communicator rank 0 is not in. Clean at
/// `build` and in the run.
#[test]
fn issue_37_mpich_intercomm_harness_is_clean() {
    let source = "tests/programs/divergence/intercomm_harness.c";
    assert_no_divergence(source);
    let report = check_program(source);
    assert!(report.findings.is_empty(), "{:?}", report.findings);
}

/// miniAMR's `main`: rank 0 parses the command line into globals and a
/// `params[]` array it broadcasts; the other ranks copy the array back.
/// The values agree on every rank after the branch: no `collective-
/// divergence` warning at `build`, unoptimized or at `-O2` (as miniAMR
/// builds: `params[]` then has lifetime markers, which write nothing),
/// and the run, which does not reach the report's barrier, is clean.
#[test]
fn issue_37_values_the_root_parses_and_broadcasts_agree() {
    let source = "tests/programs/divergence/root_parses_broadcast.c";
    let dir = tempfile::tempdir().unwrap();
    for flags in [&[][..], &["--", "-O2"][..]] {
        let exe = dir.path().join("prog");
        let mut args = vec!["build", "-o", exe.to_str().unwrap(), source];
        args.extend_from_slice(flags);
        let out = run_mbhybrid(&workspace_root(), &args);
        assert!(out.status.success(), "{}", describe(&out));
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!stderr.contains("MBH0019"), "{flags:?}: {stderr}");
    }
    let report = check_program(source);
    assert!(report.findings.is_empty(), "{:?}", report.findings);
}
