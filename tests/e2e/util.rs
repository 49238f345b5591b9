//! Helpers shared by the end-to-end tests.

use mbh_tests::json::Report;
use mbh_tests::{run_mbhybrid, workspace_root, TestProgram};
use std::path::{Path, PathBuf};
use std::process::Output;

/// Shows a failed command's output in the panic message.
pub fn describe(output: &Output) -> String {
    format!(
        "status: {:?}\n--- stdout\n{}\n--- stderr\n{}",
        output.status.code(),
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    )
}

/// `mbhybrid build -o DIR/STEM SOURCE` from the workspace root; returns the
/// executable.
pub fn build(source: &Path, dir: &Path) -> PathBuf {
    build_with(source, dir, &[])
}

/// [`build`] with `build` options before the source.
pub fn build_with(source: &Path, dir: &Path, options: &[&str]) -> PathBuf {
    build_with_flags(source, dir, options, &[])
}

/// [`build_with`], with compiler flags after `--` (`-fopenmp`).
pub fn build_with_flags(source: &Path, dir: &Path, options: &[&str], cflags: &[&str]) -> PathBuf {
    let exe = dir.join(source.file_stem().expect("source has a name"));
    let mut args = vec!["build", "-o", exe.to_str().unwrap()];
    args.extend_from_slice(options);
    args.push(source.to_str().unwrap());
    if !cflags.is_empty() {
        args.push("--");
        args.extend_from_slice(cflags);
    }
    let out = run_mbhybrid(&workspace_root(), &args);
    assert!(
        out.status.success(),
        "build of {} failed\n{}",
        source.display(),
        describe(&out)
    );
    exe
}

/// `mbhybrid verify --format json -n NP EXE` from the workspace root; returns
/// the exit status and the parsed report.
pub fn verify_json(exe: &Path, np: u32, dir: &Path, extra: &[&str]) -> (i32, Report, Output) {
    verify_json_with_args(exe, np, dir, extra, &[])
}

/// [`verify_json`] with the program's own arguments after it.
pub fn verify_json_with_args(
    exe: &Path,
    np: u32,
    dir: &Path,
    extra: &[&str],
    program_args: &[&str],
) -> (i32, Report, Output) {
    let runs = dir.join("runs");
    let np = np.to_string();
    let mut args = vec![
        "verify",
        "--format",
        "json",
        "-n",
        &np,
        "--run-dir",
        runs.to_str().unwrap(),
    ];
    args.extend_from_slice(extra);
    args.push(exe.to_str().unwrap());
    args.extend_from_slice(program_args);
    let out = run_mbhybrid(&workspace_root(), &args);
    let report: Report = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "verify printed no valid JSON report ({e})\n{}",
            describe(&out)
        )
    });
    assert!(
        report.barrier_audit.is_none(),
        "a verify report with an audit's cost\n{}",
        describe(&out)
    );
    (out.status.code().unwrap_or(-1), report, out)
}

/// Verifies a test program with other options than its header's and checks
/// only the exit status: the expectations in its text are for its header's
/// options.
pub fn check_program_with_expectations(source: &str, options: &[&str], exit: i32) -> Report {
    let program = TestProgram::load(source);
    let _lock = mbh_tests::mpi_lock();
    let dir = tempfile::tempdir().unwrap();
    let exe = build(&program.source, dir.path());
    let (status, report, out) = verify_json(&exe, program.np, dir.path(), options);
    assert_eq!(status, exit, "verify exit status\n{}", describe(&out));
    report
}

/// Builds and verifies a test program and checks its expectations.
pub fn check_program(source: &str) -> Report {
    check_program_with(source, &[])
}

/// [`check_program`] with extra `verify` options.
pub fn check_program_with(source: &str, extra: &[&str]) -> Report {
    let mut program = TestProgram::load(source);
    program.options.extend(extra.iter().map(|s| s.to_string()));
    let _lock = mbh_tests::mpi_lock();
    let dir = tempfile::tempdir().unwrap();
    let cflags: Vec<&str> = program.cflags.iter().map(String::as_str).collect();
    let exe = build_with_flags(&program.source, dir.path(), &[], &cflags);
    let options: Vec<&str> = program.options.iter().map(String::as_str).collect();
    let (status, report, out) = verify_json(&exe, program.np, dir.path(), &options);
    let context = describe(&out);
    assert_eq!(status, program.exit, "verify exit status\n{context}");
    assert_eq!(report.tool, "mbhybrid");
    assert_eq!(report.np, program.np);
    if let Some(n) = program.interleavings {
        assert_eq!(report.interleavings, n, "interleavings\n{context}");
    }
    assert_eq!(report.runs.len(), report.interleavings as usize);
    assert!(report
        .runs
        .iter()
        .all(|run| run.ranks.len() == program.np as usize));
    for expected in &program.expected {
        let found = report.findings.iter().any(|f| {
            f.kind == expected.kind
                && f.locations
                    .iter()
                    .any(|l| l.file == source && l.line == expected.line && l.rank == expected.rank)
        });
        assert!(found, "expected {expected:?} in {source}\n{context}");
    }
    for finding in &report.findings {
        assert!(
            program.expected.iter().any(|e| e.kind == finding.kind),
            "unexpected finding {finding:?}\n{context}"
        );
        assert_eq!(finding.code.len(), 7, "codes look like MBH0001");
        let replay = finding.replay.as_deref().unwrap_or("");
        assert!(
            replay.starts_with("mbhybrid replay "),
            "every finding carries its replay command: {finding:?}"
        );
    }
    if program.expected.is_empty() {
        assert!(report.findings.is_empty(), "{context}");
    }
    report
}

/// The 1-based line of `source` (relative to the workspace root) holding
/// `marker`.
pub fn line_of(source: &str, marker: &str) -> u32 {
    let text = std::fs::read_to_string(workspace_root().join(source)).unwrap();
    text.lines()
        .position(|l| l.contains(marker))
        .unwrap_or_else(|| panic!("{marker:?} not in {source}")) as u32
        + 1
}
