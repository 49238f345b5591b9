//! Programs built by plain `mpicc`, not by `mbhybrid build` (issue 17 item
//! 3): `verify` preloads the runtime, and every finding's location comes
//! from the return address the runtime records at each MPI call and the
//! executable's debug information; without debug information, from its
//! symbol table (the function, the call's offset, a note to rebuild with
//! `-g`).

use crate::util::{describe, verify_json};
use mbh_tests::json::{Finding, Report};
use mbh_tests::{workspace_root, TestProgram};
use std::path::{Path, PathBuf};

const DEADLOCK: &str = "tests/programs/mpicc/deadlock.c";
const LEAKS: &str = "tests/programs/mpicc/leaks.c";

/// `mpicc FLAGS -o DIR/NAME SOURCE`, run in the workspace root (so the
/// debug information names the source as the expectations do).
fn mpicc(source: &str, name: &str, flags: &[&str], dir: &Path) -> PathBuf {
    let exe = dir.join(name);
    let out = std::process::Command::new(mbh_tests::mpicc())
        .args(flags)
        .arg("-o")
        .arg(&exe)
        .arg(source)
        .current_dir(workspace_root())
        .output()
        .expect("mpicc runs");
    assert!(out.status.success(), "mpicc {flags:?}\n{}", describe(&out));
    exe
}

/// Verifies `exe`, built from `program`, and checks the exit status and
/// that nothing says the program lacks sites.
fn verify(program: &TestProgram, exe: &Path, dir: &Path) -> (Report, String) {
    let options: Vec<&str> = program.options.iter().map(String::as_str).collect();
    let (status, report, out) = verify_json(exe, program.np, dir, &options);
    let context = describe(&out);
    assert_eq!(status, program.exit, "verify exit status\n{context}");
    assert!(
        report.warnings.iter().any(|w| w.contains("preloaded")),
        "the runtime is preloaded\n{context}"
    );
    (report, context)
}

/// Each expectation of `program` is a finding of its kind with a location
/// at its line, for its rank, in `function`; every location of the
/// program's findings names its file, line and function.
fn check_lines(program: &TestProgram, report: &Report, function: &str, context: &str) {
    let source = program.source.to_str().unwrap();
    for expected in &program.expected {
        let found = report.findings.iter().any(|f| {
            f.kind == expected.kind
                && f.locations.iter().any(|l| {
                    l.file == source
                        && l.line == expected.line
                        && l.rank == expected.rank
                        && l.function.as_deref() == Some(function)
                })
        });
        assert!(found, "expected {expected:?} in `{function}`\n{context}");
    }
    for finding in &report.findings {
        assert!(
            program.expected.iter().any(|e| e.kind == finding.kind),
            "unexpected finding {finding:?}\n{context}"
        );
        assert!(!finding.locations.is_empty(), "{finding:?}\n{context}");
        for l in &finding.locations {
            assert!(
                l.file == source && l.line > 0 && l.function.is_some(),
                "{l:?}\n{context}"
            );
        }
    }
}

#[test]
fn issue17_deadlock_of_an_mpicc_build_is_at_its_lines_at_o0_and_o2() {
    let program = TestProgram::load(DEADLOCK);
    let _lock = mbh_tests::mpi_lock();
    let dir = tempfile::tempdir().unwrap();
    // -O2 inlines `exchange` into `main`: the location is still the
    // `MPI_Recv` line, in `exchange` (the inlined frame). -no-pie checks a
    // fixed load address (bias 0) as well as the PIE default.
    for (name, flags) in [
        ("o0", &["-g", "-O0"][..]),
        ("o2", &["-g", "-O2"][..]),
        ("o2-no-pie", &["-g", "-O2", "-fno-pie", "-no-pie"][..]),
    ] {
        let exe = mpicc(DEADLOCK, name, flags, dir.path());
        let runs = dir.path().join(format!("verify-{name}"));
        let (report, context) = verify(&program, &exe, &runs);
        check_lines(&program, &report, "exchange", &context);
        let deadlock = &report.findings[0];
        for l in &deadlock.locations {
            assert_eq!(l.call.as_deref(), Some("MPI_Recv"), "{name}\n{context}");
        }
        let mut ranks: Vec<i32> = deadlock.locations.iter().map(|l| l.rank).collect();
        ranks.sort_unstable();
        assert_eq!(ranks, [0, 1], "{name}\n{context}");
        assert!(
            !deadlock.notes.iter().any(|n| n.contains("-g")),
            "{name}: no note about debug information\n{context}"
        );
    }
}

/// `make clean` removes the executable, not the site table `mbhybrid
/// build` wrote beside it: a plain build of the same name must still be
/// verified (through the preloaded runtime), not taken for an
/// instrumented one whose ranks never start the runtime.
#[test]
fn a_site_table_left_by_an_earlier_mbhybrid_build_is_ignored() {
    let program = TestProgram::load(DEADLOCK);
    let _lock = mbh_tests::mpi_lock();
    let dir = tempfile::tempdir().unwrap();
    let instrumented = crate::util::build(Path::new(DEADLOCK), dir.path());
    assert!(mbh_trace::SiteTable::path_for(&instrumented).exists());
    let name = instrumented.file_name().unwrap().to_str().unwrap();
    let plain = mpicc(DEADLOCK, name, &["-g", "-O0"], dir.path());
    assert_eq!(plain, instrumented);
    let (report, context) = verify(&program, &plain, &dir.path().join("runs"));
    check_lines(&program, &report, "exchange", &context);
    assert!(
        report
            .warnings
            .iter()
            .any(|w| w.contains("the table is ignored")),
        "{context}"
    );
}

#[test]
fn issue17_leaks_of_an_mpicc_build_name_the_call_that_made_them() {
    let program = TestProgram::load(LEAKS);
    let _lock = mbh_tests::mpi_lock();
    let dir = tempfile::tempdir().unwrap();
    let exe = mpicc(LEAKS, "leaks", &["-g", "-O0"], dir.path());
    let (report, context) = verify(&program, &exe, dir.path());
    check_lines(&program, &report, "main", &context);
    // `MPI_Comm_dup` makes no record of its own: its name comes from the
    // runtime's record of the call's site.
    let leak = report
        .findings
        .iter()
        .find(|f| f.kind == "resource-leak")
        .unwrap_or_else(|| panic!("a resource leak\n{context}"));
    assert!(leak.message.contains("`MPI_Comm_dup`"), "{leak:?}");
    assert!(leak
        .locations
        .iter()
        .all(|l| l.call.as_deref() == Some("MPI_Comm_dup")));
}

#[test]
fn issue17_without_debug_info_findings_name_the_function_and_offset() {
    let program = TestProgram::load(DEADLOCK);
    let _lock = mbh_tests::mpi_lock();
    let dir = tempfile::tempdir().unwrap();
    let exe = mpicc(DEADLOCK, "nodebug", &["-O0"], dir.path());
    let (report, context) = verify(&program, &exe, dir.path());
    assert!(
        report
            .warnings
            .iter()
            .any(|w| w.contains("rebuild it with `-g`")),
        "{context}"
    );
    let deadlock: &Finding = report
        .findings
        .iter()
        .find(|f| f.kind == "deadlock")
        .unwrap_or_else(|| panic!("a deadlock\n{context}"));
    let mut ranks = Vec::new();
    for l in &deadlock.locations {
        // No line: the executable, the function from the symbol table and
        // the call's offset in the executable.
        assert_eq!(
            Path::new(&l.file),
            exe.canonicalize().unwrap(),
            "{l:?}\n{context}"
        );
        assert_eq!(l.line, 0, "{l:?}");
        assert_eq!(l.function.as_deref(), Some("exchange"), "{l:?}");
        assert_eq!(l.call.as_deref(), Some("MPI_Recv"), "{l:?}");
        assert!(
            l.label
                .contains("(in `exchange`, the call returning to offset 0x"),
            "{l:?}"
        );
        ranks.push(l.rank);
    }
    ranks.sort_unstable();
    assert_eq!(ranks, [0, 1], "{context}");
    assert!(
        deadlock
            .notes
            .iter()
            .any(|n| n.contains("no debug information") && n.contains("rebuild it with `-g`")),
        "{deadlock:?}"
    );
}
