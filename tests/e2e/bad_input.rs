//! Bad input: one clear paragraph and exit status 2, never a panic.

use crate::util::describe;
use mbh_tests::{run_mbhybrid, workspace_root};

fn assert_usage_error(args: &[&str], needles: &[&str]) {
    let out = run_mbhybrid(&workspace_root(), args);
    assert_eq!(out.status.code(), Some(2), "{args:?}\n{}", describe(&out));
    let stderr = String::from_utf8_lossy(&out.stderr);
    for needle in needles {
        assert!(
            stderr.contains(needle),
            "{args:?}: stderr lacks {needle:?}\n{stderr}"
        );
    }
    assert!(!stderr.contains("panicked"), "{stderr}");
}

#[test]
fn missing_executable() {
    assert_usage_error(
        &["verify", "-n", "2", "./no-such-program"],
        &["no executable", "mbhybrid build"],
    );
}

#[test]
fn launcher_without_np() {
    assert_usage_error(
        &["verify", "--launcher", "mpiexec -n 2", "/bin/true"],
        &["does not contain `{np}`"],
    );
}

#[test]
fn launcher_not_installed() {
    assert_usage_error(
        &[
            "verify",
            "--launcher",
            "no-such-mpiexec -n {np}",
            "/bin/true",
        ],
        &["`no-such-mpiexec` was not found"],
    );
}

#[test]
fn unwritable_run_directory() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("a-file");
    std::fs::write(&file, "").unwrap();
    let run_dir = file.join("runs");
    assert_usage_error(
        &[
            "verify",
            "--run-dir",
            run_dir.to_str().unwrap(),
            "/bin/true",
        ],
        &["cannot write the run directory", "--run-dir"],
    );
}

#[test]
fn program_that_never_calls_mpi_init() {
    let _lock = mbh_tests::mpi_lock();
    let dir = tempfile::tempdir().unwrap();
    let runs = dir.path().join("runs");
    assert_usage_error(
        &[
            "verify",
            "-n",
            "1",
            "--run-dir",
            runs.to_str().unwrap(),
            "/bin/true",
        ],
        &["`/bin/true` ran, but no process reached `MPI_Init`"],
    );
}

#[test]
fn missing_source_file() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("app");
    assert_usage_error(
        &["build", "-o", out.to_str().unwrap(), "no-such-file.c"],
        &["no-such-file.c"],
    );
    assert!(!out.exists());
}

#[test]
fn clang_errors_are_passed_through() {
    let dir = tempfile::tempdir().unwrap();
    let source = dir.path().join("broken.c");
    std::fs::write(
        &source,
        "#include <mpi.h>\nint main(void) { return undeclared_thing; }\n",
    )
    .unwrap();
    let out = dir.path().join("broken");
    assert_usage_error(
        &[
            "build",
            "-o",
            out.to_str().unwrap(),
            source.to_str().unwrap(),
        ],
        &["broken.c:2:", "error:", "undeclared_thing"],
    );
}

#[test]
fn unknown_format_is_refused_by_name() {
    assert_usage_error(&["verify", "--format", "xml", "/bin/true"], &["xml"]);
}

/// Processes whose command line mentions `needle`.
fn processes_running(needle: &str) -> usize {
    std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter(|e| {
            e.file_name()
                .to_string_lossy()
                .chars()
                .all(|c| c.is_ascii_digit())
        })
        .filter(|e| {
            std::fs::read(e.path().join("cmdline"))
                .is_ok_and(|c| String::from_utf8_lossy(&c).contains(needle))
        })
        .count()
}

#[test]
fn interrupting_verify_stops_the_mpi_job_too() {
    let _lock = mbh_tests::mpi_lock();
    let dir = tempfile::tempdir().unwrap();
    let source = dir.path().join("spin.c");
    std::fs::write(
        &source,
        "#include <mpi.h>\nint main(int c, char **v) { MPI_Init(&c, &v); volatile long n = 0; for (;;) n++; }\n",
    )
    .unwrap();
    let exe = dir.path().join("spinning-program");
    let out = run_mbhybrid(
        &workspace_root(),
        &[
            "build",
            "-o",
            exe.to_str().unwrap(),
            source.to_str().unwrap(),
        ],
    );
    assert!(out.status.success(), "{}", describe(&out));
    let runs = dir.path().join("runs");
    let mut verify = std::process::Command::new(mbh_tests::mbhybrid())
        .args([
            "verify",
            "-n",
            "2",
            "--run-dir",
            runs.to_str().unwrap(),
            exe.to_str().unwrap(),
        ])
        .env_remove("LD_LIBRARY_PATH")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let needle = exe.to_str().unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while processes_running(needle) < 3 {
        assert!(
            std::time::Instant::now() < deadline,
            "the job did not start"
        );
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    std::process::Command::new("kill")
        .args(["-TERM", &verify.id().to_string()])
        .status()
        .unwrap();
    verify.wait().unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while processes_running(needle) > 0 {
        assert!(
            std::time::Instant::now() < deadline,
            "the MPI job outlived mbhybrid"
        );
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
}

/// Issue 12: a call the runtime cannot handle is a limit of the tool,
/// said as an error that names the call (exit 2, after the report), never
/// a finding against the program ("rank 0 called MPI_Abort with error code
/// 70", as it once was).
#[test]
fn an_unsupported_call_is_a_tool_error_naming_the_call() {
    let _lock = mbh_tests::mpi_lock();
    let dir = tempfile::tempdir().unwrap();
    let source = dir.path().join("isendrecv.c");
    std::fs::write(
        &source,
        r#"#include <mpi.h>
int main(int argc, char **argv) {
  int rank, v = 0, w = 0;
  MPI_Request rq;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Isendrecv(&v, 1, MPI_INT, 1 - rank, 0, &w, 1, MPI_INT, 1 - rank, 0, MPI_COMM_WORLD, &rq);
  MPI_Wait(&rq, MPI_STATUS_IGNORE);
  MPI_Finalize();
  return 0;
}
"#,
    )
    .unwrap();
    let exe = crate::util::build(&source, dir.path());
    let (status, report, out) = crate::util::verify_json(&exe, 2, dir.path(), &[]);
    assert_eq!(status, 2, "{}", crate::util::describe(&out));
    assert!(
        report.findings.is_empty(),
        "no finding against the program: {:?}",
        report.findings
    );
    assert!(!report.complete, "nothing after the call was verified");
    let stderr = String::from_utf8_lossy(&out.stderr);
    // Both ranks make the call; whichever the runtime stops first is named.
    assert!(
        ["0", "1"].iter().any(|rank| stderr.contains(&format!(
            "isendrecv.c:7: rank {rank}: MPI_Isendrecv is not supported"
        ))),
        "the error names the call, its line and a rank that made it: {stderr}"
    );
}
