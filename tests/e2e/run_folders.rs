//! Issue 37: each interleaving runs in a working folder of its own that
//! mirrors the user's, so an application's output files do not pile up in
//! the user's folder; the report says where each kept run's output is,
//! and the human report shows the end of the failing run's output.

use crate::util::{build, describe};
use mbh_tests::json::Report;
use mbh_tests::{mpi_lock, run_mbhybrid, workspace_root};

const PROGRAM: &str = "tests/programs/exit/writes_its_folder.c";

/// A project folder `top/project/` with `input.txt`, and `top/shared.txt`
/// one level up; the program built into it.
fn project() -> (tempfile::TempDir, std::path::PathBuf, std::path::PathBuf) {
    let top = tempfile::tempdir().unwrap();
    let project = top.path().join("project");
    std::fs::create_dir(&project).unwrap();
    std::fs::write(project.join("input.txt"), "the input\n").unwrap();
    std::fs::write(top.path().join("shared.txt"), "beside\n").unwrap();
    let exe = build(&workspace_root().join(PROGRAM), &project);
    (top, project, exe)
}

#[test]
fn each_run_writes_in_its_own_folder_and_finds_its_inputs() {
    let _lock = mpi_lock();
    let (_top, project, exe) = project();
    let out = run_mbhybrid(
        &project,
        &[
            "verify",
            "--format",
            "json",
            "-n",
            "3",
            "--keep-traces",
            exe.to_str().unwrap(),
        ],
    );
    assert_eq!(out.status.code(), Some(1), "{}", describe(&out));
    let report: Report = serde_json::from_slice(&out.stdout).unwrap();
    assert!(
        report.complete && report.interleavings >= 2,
        "{}",
        describe(&out)
    );
    assert!(
        report.findings.iter().all(|f| f.kind == "assertion"),
        "{}",
        describe(&out)
    );
    assert!(
        !project.join("out.txt").exists(),
        "a run wrote into the user's folder"
    );
    for run in &report.runs {
        assert!(run.stdout.contains("read the input"), "{run:?}");
        let dir = run
            .dir
            .as_ref()
            .expect("--keep-traces keeps every run's directory");
        let written = std::path::Path::new(dir).join("work/project/out.txt");
        let text = std::fs::read_to_string(&written)
            .unwrap_or_else(|e| panic!("{}: {e}", written.display()));
        assert!(text.starts_with("first "), "{text}");
    }
}

#[test]
fn the_human_report_shows_the_end_of_the_failing_runs_output() {
    let _lock = mpi_lock();
    let (_top, project, exe) = project();
    let out = run_mbhybrid(&project, &["verify", "-n", "3", exe.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1), "{}", describe(&out));
    let text = String::from_utf8_lossy(&out.stdout);
    let shown = text
        .find("= output of interleaving")
        .unwrap_or_else(|| panic!("no output under the finding\n{}", describe(&out)));
    let after = &text[shown..];
    assert!(after.contains("launcher.stdout):"), "{after}");
    assert!(after.contains("| first message from rank 2"), "{after}");
}
