//! Issue 37: how `verify` ends. Warnings never fail a run unless
//! `--deny warnings` (`-D warnings`) asks, a partial search exits 3 even
//! beside warnings, and SIGTERM or Ctrl-C (a batch system's time limit)
//! stops the search and prints the report of what ran.

use crate::faults::{processes_of, within};
use crate::util::{build, check_program, check_program_with_expectations, describe};
use mbh_tests::json::Report;
use mbh_tests::{mbhybrid, mpi_lock, workspace_root};
use std::process::{Command, Stdio};
use std::time::Duration;

const LEAKS: &str = "tests/programs/e7_leaks.c";
const LEAK_BESIDE_A_CHOICE: &str = "tests/programs/exit/leak_beside_a_choice.c";
const LONG_FAN_IN: &str = "tests/programs/exit/long_fan_in.c";

fn all_warnings(report: &Report) -> bool {
    !report.findings.is_empty() && report.findings.iter().all(|f| f.severity == "warning")
}

#[test]
fn warnings_never_fail_a_run_unless_denied() {
    // The header says exit 0 with both leaks found.
    let report = check_program(LEAKS);
    assert!(all_warnings(&report), "{:?}", report.findings);
    for deny in [&["-D", "warnings"][..], &["--deny", "warnings"]] {
        let denied = check_program_with_expectations(LEAKS, deny, 1);
        assert_eq!(denied.findings.len(), report.findings.len(), "{deny:?}");
    }
}

#[test]
fn a_partial_search_exits_3_beside_a_warning() {
    let complete = check_program(LEAK_BESIDE_A_CHOICE);
    assert!(complete.complete && all_warnings(&complete));
    let cut =
        check_program_with_expectations(LEAK_BESIDE_A_CHOICE, &["--max-interleavings", "1"], 3);
    assert!(!cut.complete);
    assert!(all_warnings(&cut), "the leak is still reported");
    let why = cut
        .warnings
        .iter()
        .find(|w| w.starts_with("coverage is partial"))
        .expect("the report says why coverage is partial");
    // The program has no loop `build` could abstract: that option would
    // change nothing, so it is not suggested.
    assert!(why.contains("--mixing-bound K"), "{why}");
    assert!(!why.contains("--loop-abstraction"), "{why}");
}

#[test]
fn a_search_cut_by_its_budget_exits_3() {
    let report = check_program(LONG_FAN_IN);
    assert!(!report.complete);
}

#[test]
fn sigterm_stops_the_search_and_prints_what_ran() {
    stop_with("-TERM", "SIGTERM");
}

#[test]
fn ctrl_c_stops_the_search_and_prints_what_ran() {
    stop_with("-INT", "SIGINT");
}

/// Starts a long search, waits for its first progress line on standard
/// error (without a terminal one comes every few seconds), sends `signal`
/// to mbhybrid alone, and checks the report of what ran and that the job
/// is gone.
fn stop_with(signal: &str, name: &str) {
    let _lock = mpi_lock();
    let dir = tempfile::tempdir().unwrap();
    let exe = build(&workspace_root().join(LONG_FAN_IN), dir.path());
    let (stdout, stderr) = (dir.path().join("out.json"), dir.path().join("err.txt"));
    let runs = dir.path().join("runs");
    let mut verify = Command::new(mbhybrid())
        .args(["verify", "--format", "json", "-n", "4", "--run-dir"])
        .arg(&runs)
        .arg(&exe)
        .current_dir(workspace_root())
        .env_remove("LD_LIBRARY_PATH")
        .stdout(std::fs::File::create(&stdout).unwrap())
        .stderr(std::fs::File::create(&stderr).unwrap())
        .stdin(Stdio::null())
        .spawn()
        .unwrap();
    let progressed = within(Duration::from_secs(120), || {
        std::fs::read_to_string(&stderr).is_ok_and(|e| e.contains("mbhybrid: interleaving"))
    });
    if !progressed {
        let _ = verify.kill();
        panic!(
            "no progress line on standard error:\n{}",
            std::fs::read_to_string(&stderr).unwrap_or_default()
        );
    }
    let sent = Command::new("kill")
        .args([signal, &verify.id().to_string()])
        .status()
        .unwrap();
    assert!(sent.success());
    let status = verify.wait().unwrap();
    let output = std::process::Output {
        status,
        stdout: std::fs::read(&stdout).unwrap(),
        stderr: std::fs::read(&stderr).unwrap(),
    };
    assert_eq!(status.code(), Some(3), "{}", describe(&output));
    let report: Report = serde_json::from_slice(&output.stdout)
        .unwrap_or_else(|e| panic!("no JSON report ({e})\n{}", describe(&output)));
    assert!(!report.complete);
    assert!(report.findings.is_empty(), "{:?}", report.findings);
    assert!(report.interleavings >= 1);
    assert_eq!(report.runs.len(), report.interleavings as usize);
    // The choice points the stopped search knew are counted.
    assert!(report.choice_points.found > 0, "{:?}", report.choice_points);
    assert!(
        report
            .warnings
            .iter()
            .any(|w| w.contains(&format!("stopped by {name}"))),
        "{:?}",
        report.warnings
    );
    assert!(
        within(Duration::from_secs(10), || processes_of(&exe).is_empty()),
        "the MPI job outlived the stopped search"
    );
}
