//! Issue 40, first part: MPI + OpenMP programs built with `-fopenmp`
//! through `build` and the drivers, and the rule of the thread level every
//! call can be checked against: under `MPI_THREAD_SINGLE` and
//! `MPI_THREAD_FUNNELED` only the main thread may call MPI (MPI-4.0
//! §11.6.1), and under `MPI_THREAD_SERIALIZED` only one thread at a time
//! (§11.6). Each program of `tests/programs/threads/` says what it
//! expects; the twins differ by where, or how, the MPI calls are made.

use crate::util::{build_with_flags, check_program, describe, line_of, verify_json};
use mbh_tests::{bin_dir, mbhybrid, mpi_lock};
use std::process::Command;

#[test]
fn a_call_from_a_second_thread_under_funneled_is_an_error_naming_the_thread() {
    let report = check_program("tests/programs/threads/funneled_off_main.c");
    assert_eq!(report.findings.len(), 2, "{:?}", report.findings);
    for finding in &report.findings {
        assert_eq!(finding.kind, "thread-level");
        assert_eq!(finding.severity, "error");
        assert!(
            finding
                .message
                .contains("from a thread other than the main one (thread ")
                && finding
                    .message
                    .ends_with("which MPI_THREAD_FUNNELED does not allow"),
            "{}",
            finding.message
        );
    }
    assert!(report.complete);
}

/// Above `MPI_THREAD_SINGLE`, another thread can start an operation while
/// a loop runs: such programs never run the unchecked copies of loops, and
/// a worker's write into the main thread's pending send is found although
/// the worker entered its loop with nothing pending. The finding names
/// both threads: the worker that wrote and the main thread that sent.
#[test]
fn a_write_during_another_threads_send_is_found_in_a_loop_entered_before_it() {
    let report = check_program("tests/programs/threads/funneled_write_during_send.c");
    let finding = &report.findings[0];
    let label = |role: &str| {
        let found = finding.locations.iter().find(|l| l.role == role);
        found.map_or(String::new(), |l| l.label.clone())
    };
    assert!(
        label("primary").contains("written here by thread "),
        "{finding:?}"
    );
    assert!(!label("primary").contains("main thread"), "{finding:?}");
    assert!(
        label("secondary").contains("started here by the main thread (thread "),
        "{finding:?}"
    );
    assert!(
        finding
            .notes
            .iter()
            .any(|n| n.starts_with("two threads: thread ")),
        "{finding:?}"
    );
}

#[test]
fn the_same_calls_from_the_main_thread_are_clean() {
    let report = check_program("tests/programs/threads/funneled_master.c");
    assert!(report.complete);
}

#[test]
fn a_call_from_a_second_thread_after_mpi_init_is_an_error_under_single() {
    let report = check_program("tests/programs/threads/single_off_main.c");
    assert_eq!(report.findings.len(), 1, "{:?}", report.findings);
    assert!(
        report.findings[0]
            .message
            .ends_with("which MPI_THREAD_SINGLE does not allow"),
        "{}",
        report.findings[0].message
    );
}

/// OpenMP loops between the exchanges change nothing of the search: the
/// wildcard's other sender is found, complete, and nothing else is said.
#[test]
fn a_hybrid_halo_exchange_is_searched_like_a_single_threaded_one() {
    let report = check_program("tests/programs/threads/hybrid_halo.c");
    assert!(report.complete);
    let kinds: Vec<&str> = report.findings.iter().map(|f| f.kind.as_str()).collect();
    assert_eq!(kinds, ["assertion"]);
}

/// The drivers take `-fopenmp` as `mpicc` does, compiling and linking
/// apart; the program computes what a plain `mpicc -fopenmp` build does.
#[test]
fn the_drivers_build_openmp_programs_that_compute_what_mpicc_builds_compute() {
    mbhybrid();
    let source = mbh_tests::workspace_root().join("tests/programs/threads/funneled_master.c");
    let dir = tempfile::tempdir().unwrap();
    let run = |program: &str, args: &[&str]| {
        let out = Command::new(program)
            .args(args)
            .current_dir(dir.path())
            .env_remove("LD_LIBRARY_PATH")
            .output()
            .unwrap_or_else(|e| panic!("cannot run {program}: {e}"));
        assert!(
            out.status.success(),
            "{program} {args:?}\n{}",
            describe(&out)
        );
        out
    };
    let cc = bin_dir().join("mbhybrid-cc");
    let cc = cc.to_str().unwrap();
    run(
        cc,
        &[
            "-fopenmp",
            "-O2",
            "-c",
            source.to_str().unwrap(),
            "-o",
            "m.o",
        ],
    );
    run(cc, &["-fopenmp", "m.o", "-o", "with_driver"]);
    run(
        mbh_tests::mpicc(),
        &["-fopenmp", source.to_str().unwrap(), "-o", "plain"],
    );
    let _lock = mpi_lock();
    let outputs: Vec<Vec<String>> = ["./with_driver", "./plain"]
        .iter()
        .map(|exe| {
            let out = mbh_tests::mpiexec(2)
                .arg(exe)
                .current_dir(dir.path())
                .env_remove("LD_LIBRARY_PATH")
                .output()
                .unwrap();
            assert!(out.status.success(), "{exe}\n{}", describe(&out));
            let mut lines: Vec<String> = String::from_utf8_lossy(&out.stdout)
                .lines()
                .map(str::to_owned)
                .collect();
            lines.sort();
            lines
        })
        .collect();
    assert_eq!(outputs[0], ["rank 0 has 1", "rank 1 has 1"]);
    assert_eq!(outputs[0], outputs[1]);
    let (status, report, out) = verify_json(&dir.path().join("with_driver"), 2, dir.path(), &[]);
    assert_eq!(status, 0, "{}", describe(&out));
    assert!(
        report.complete && report.findings.is_empty(),
        "{:?}",
        report.findings
    );
}

/// At every thread level `MPI_Finalize` belongs to the main thread; under
/// `MPI_THREAD_MULTIPLE` the other calls of a second thread are allowed.
#[test]
fn finalize_from_a_second_thread_is_an_error_even_under_multiple() {
    let report = check_program("tests/programs/threads/finalize_off_main.c");
    assert_eq!(report.findings.len(), 1, "{:?}", report.findings);
    assert!(
        report.findings[0]
            .message
            .contains("`MPI_Finalize` must be called on the thread that initialised MPI"),
        "{}",
        report.findings[0].message
    );
}

/// Issue 40: two threads in MPI at once under `MPI_THREAD_SERIALIZED` are
/// the program's error, at the second call, naming the call the other
/// thread was inside. The overlap is certain (each thread's receive needs
/// the other thread's send), which thread comes second is not: both make
/// the same call, so the line is the same either way. The run stops
/// there, so the report is partial and says where.
#[test]
fn two_threads_in_mpi_at_once_under_serialized_is_a_thread_level_error() {
    let source = "tests/programs/threads/serialized_overlap.c";
    let line = line_of(source, "expect: thread-level");
    let report = check_program(source);
    assert_eq!(report.findings.len(), 1, "{:?}", report.findings);
    let finding = &report.findings[0];
    assert_eq!(finding.kind, "thread-level");
    assert_eq!(finding.code, "MBH0021");
    assert_eq!(finding.severity, "error");
    let message = &finding.message;
    assert!(
        message.starts_with("rank 0 called `MPI_Sendrecv` on ")
            && (message.contains(" while the main thread was inside `MPI_Sendrecv`")
                || message.contains(" while another thread was inside `MPI_Sendrecv`"))
            && message.ends_with(
                "two threads in MPI at once, which MPI_THREAD_SERIALIZED does not allow"
            ),
        "{message}"
    );
    // The second call, and the call the other thread was inside.
    let roles: Vec<(&str, u32)> = finding
        .locations
        .iter()
        .map(|l| (l.role.as_str(), l.line))
        .collect();
    assert_eq!(roles, [("primary", line), ("secondary", line)]);
    assert!(!report.complete);
    assert!(
        report
            .not_modelled
            .iter()
            .any(|l| l.line == line && l.call.as_deref() == Some("MPI_Sendrecv")),
        "{:?}",
        report.not_modelled
    );
    assert!(
        report.warnings.iter().any(|w| w.contains(
            "a run stopped where a second thread called MPI while another thread of its rank was inside MPI"
        ) && w.contains(&format!("serialized_overlap.c:{line}"))),
        "{:?}",
        report.warnings
    );
    assert_eq!(report.runs[0].ranks[0].state, "aborted");
}

/// The twin: the same exchanges one at a time (`omp critical`) are clean
/// and the report complete.
#[test]
fn the_same_calls_one_at_a_time_under_serialized_are_clean() {
    let report = check_program("tests/programs/threads/serialized_critical.c");
    assert!(report.complete && report.findings.is_empty());
    let ranks = &report.runs[0].ranks;
    assert!(ranks.iter().all(|r| r.state == "finalized"), "{ranks:?}");
}

/// Under `MPI_THREAD_MULTIPLE` the same overlap is allowed: no finding,
/// but this version cannot run it, and the stop names both calls and the
/// level.
#[test]
fn two_threads_in_mpi_at_once_under_multiple_stop_the_run_naming_calls_and_level() {
    let source = "tests/programs/threads/multiple_overlap.c";
    let line = line_of(source, "MPI_Sendrecv(");
    let _lock = mpi_lock();
    let dir = tempfile::tempdir().unwrap();
    let exe = build_with_flags(
        &mbh_tests::workspace_root().join(source),
        dir.path(),
        &[],
        &["-fopenmp"],
    );
    let (status, report, out) = verify_json(&exe, 2, dir.path(), &[]);
    assert_eq!(status, 2, "{}", describe(&out));
    assert!(report.findings.is_empty(), "{:?}", report.findings);
    assert!(!report.complete);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains(&format!(
            "multiple_overlap.c:{line}: rank 0: MPI_Sendrecv was called on thread "
        )) && stderr.contains(" was inside MPI_Sendrecv: two threads in MPI at once, which MPI_THREAD_MULTIPLE allows, but this version of mbhybrid cannot run yet"),
        "{stderr}"
    );
}

/// Under `MPI_THREAD_FUNNELED` the same overlap is reported as what it
/// is there: a call off the main thread. Whichever thread called second,
/// every finding is a `thread-level` error at the call, saying the rule
/// of `FUNNELED` it broke.
#[test]
fn two_threads_in_mpi_at_once_under_funneled_are_calls_off_the_main_thread() {
    let source = "tests/programs/threads/funneled_overlap.c";
    let line = line_of(source, "expect: thread-level");
    let report = check_program(source);
    assert!(
        (1..=2).contains(&report.findings.len()),
        "{:?}",
        report.findings
    );
    for finding in &report.findings {
        assert_eq!(finding.kind, "thread-level");
        assert_eq!(finding.locations[0].line, line);
        assert!(
            finding.message.contains("from a thread other than the main one")
                || finding.message.contains(
                    "a thread other than the main one was in MPI, which MPI_THREAD_FUNNELED does not allow"
                ),
            "{}",
            finding.message
        );
        assert!(
            finding.message.contains("MPI_THREAD_FUNNELED"),
            "{}",
            finding.message
        );
    }
    assert!(!report.complete);
}

/// An MPI call from inside a callback MPI runs, on the same thread, is
/// legal; `MPI_Abort` from the program's error handler, the common one,
/// is followed: the report is the program's abort at the handler's line.
#[test]
fn mpi_abort_from_an_error_handler_is_the_programs_abort() {
    let source = "tests/programs/threads/errhandler_abort.c";
    let report = check_program(source);
    assert_eq!(report.findings.len(), 1, "{:?}", report.findings);
    assert_eq!(
        report.findings[0].message,
        "rank 0 called `MPI_Abort` with error code 7"
    );
}

/// A callback's call that needs what the outer call holds (an attribute's
/// delete callback freeing a datatype inside `MPI_Comm_free`) stops the
/// run as not supported, naming both calls; nothing is said against the
/// program.
#[test]
fn a_callback_calling_mpi_inside_mpi_comm_free_stops_the_run_naming_both_calls() {
    let source = "tests/programs/threads/callback_type_free.c";
    let line = line_of(source, "MPI_Type_free(type);");
    let _lock = mpi_lock();
    let dir = tempfile::tempdir().unwrap();
    let exe = build_with_flags(
        &mbh_tests::workspace_root().join(source),
        dir.path(),
        &[],
        &[],
    );
    let (status, report, out) = verify_json(&exe, 2, dir.path(), &[]);
    assert_eq!(status, 2, "{}", describe(&out));
    assert!(report.findings.is_empty(), "{:?}", report.findings);
    assert!(!report.complete);
    let stderr = String::from_utf8_lossy(&out.stderr);
    // Both ranks make the call; whichever the runtime stops first is
    // named (the other may be killed before it says anything).
    assert!(
        ["0", "1"].iter().any(|rank| stderr.contains(&format!(
            "callback_type_free.c:{line}: rank {rank}: MPI_Type_free was called from inside MPI_Comm_free on the same thread (from a callback MPI ran"
        ))),
        "{stderr}"
    );
}
