//! Issue 12: faults of the tool's own process must not leave MPI jobs
//! behind.

use crate::util::build;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Rank 0 polls with `MPI_Iprobe` for a message nobody sends: a hang the
/// wait-for graph cannot confirm, so the job runs until the timeout.
const POLLS_FOREVER: &str = r#"
#include <mpi.h>
int main(int argc, char **argv) {
  int rank, flag = 0;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  while (rank == 0 && !flag)
    MPI_Iprobe(1, 99, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_Finalize();
  return 0;
}
"#;

/// The processes whose command line names `exe` (the launcher and ranks).
pub(crate) fn processes_of(exe: &Path) -> Vec<i32> {
    let wanted = exe.to_string_lossy().into_owned();
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<i32>() else {
            continue;
        };
        let Ok(cmdline) = std::fs::read(entry.path().join("cmdline")) else {
            continue;
        };
        let alive = std::fs::read_to_string(entry.path().join("stat"))
            .map(|s| {
                !s.rsplit(')')
                    .next()
                    .unwrap_or("")
                    .trim_start()
                    .starts_with('Z')
            })
            .unwrap_or(false);
        if alive && String::from_utf8_lossy(&cmdline).contains(&wanted) {
            found.push(pid);
        }
    }
    found
}

/// Polls `done` every 100 ms for up to `limit`.
pub(crate) fn within(limit: Duration, mut done: impl FnMut() -> bool) -> bool {
    let start = Instant::now();
    while start.elapsed() < limit {
        if done() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    done()
}

/// `verify` killed with SIGKILL (a batch scheduler's time limit): its job
/// ends within seconds instead of spinning forever.
#[test]
fn a_verify_killed_with_sigkill_leaves_no_job_running() {
    let _lock = mbh_tests::mpi_lock();
    let (_dir, exe, mut verify) =
        verify_in_background("polls_forever", POLLS_FOREVER, &["-n", "2"]);
    let started = within(Duration::from_secs(60), || processes_of(&exe).len() >= 3);
    verify.kill().unwrap(); // SIGKILL
    verify.wait().unwrap();
    let left = processes_left(&exe);
    assert!(started, "the job (launcher and two ranks) never ran");
    assert!(
        left.is_empty(),
        "processes left running 15 s after verify was killed: {left:?}"
    );
}

/// Builds `text` as NAME and starts `verify` on it with `options` and a
/// 600 s timeout, in the background: the temporary directory, the
/// executable, the child.
fn verify_in_background(
    name: &str,
    text: &str,
    options: &[&str],
) -> (tempfile::TempDir, std::path::PathBuf, std::process::Child) {
    let dir = tempfile::tempdir().unwrap();
    let source = dir.path().join(format!("{name}.c"));
    std::fs::write(&source, text).unwrap();
    let exe = build(&source, dir.path());
    // As `run_mbhybrid` does: cargo's LD_LIBRARY_PATH would make the ranks
    // load the runtime copy of the MPI the workspace was built for (MPICH)
    // instead of the one the program was linked against.
    let verify = Command::new(mbh_tests::mbhybrid())
        .env_remove("LD_LIBRARY_PATH")
        .arg("verify")
        .args(options)
        .args(["--timeout", "600", "--run-dir"])
        .arg(dir.path().join("runs"))
        .arg(&exe)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    (dir, exe, verify)
}

/// The processes naming `exe` still alive 15 s after verify ended; each is
/// then killed, so that no test leaves a job behind.
fn processes_left(exe: &Path) -> Vec<i32> {
    within(Duration::from_secs(15), || processes_of(exe).is_empty());
    let left = processes_of(exe);
    for &pid in &left {
        // SAFETY: kill(2) on processes this test started (their command
        // lines name its temporary executable).
        unsafe { libc::kill(pid, libc::SIGKILL) };
    }
    left
}

/// Rank 0 takes two `MPI_ANY_SOURCE` messages. The free run takes rank 1's
/// first (ranks 2 and 3 send only after rank 1's go, which follows its
/// message) and ends; in every run that forces rank 2's or 3's first, rank
/// 0 sleeps forever outside MPI: a rank computing, which the wait-for graph
/// never calls blocked (a polling loop would be, after a second), so the
/// job runs until the timeout.
const FORCED_RUNS_HANG: &str = r#"
#include <mpi.h>
#include <unistd.h>
int main(int argc, char **argv) {
  int rank, v = 0, go = 1;
  MPI_Status st;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank == 0) {
    MPI_Recv(&v, 1, MPI_INT, MPI_ANY_SOURCE, 0, MPI_COMM_WORLD, &st);
    int first = st.MPI_SOURCE;
    MPI_Recv(&v, 1, MPI_INT, MPI_ANY_SOURCE, 0, MPI_COMM_WORLD, &st);
    MPI_Recv(&v, 1, MPI_INT, MPI_ANY_SOURCE, 0, MPI_COMM_WORLD, &st);
    while (first != 1)
      sleep(1);
  } else if (rank == 1) {
    MPI_Send(&v, 1, MPI_INT, 0, 0, MPI_COMM_WORLD);
    MPI_Send(&go, 1, MPI_INT, 2, 1, MPI_COMM_WORLD);
    MPI_Send(&go, 1, MPI_INT, 3, 1, MPI_COMM_WORLD);
  } else {
    MPI_Recv(&go, 1, MPI_INT, 1, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Send(&v, 1, MPI_INT, 0, 0, MPI_COMM_WORLD);
  }
  MPI_Finalize();
  return 0;
}
"#;

/// `verify --jobs 3` stopped with SIGTERM (a scheduler's warning signal, or
/// Ctrl-C's SIGINT alike) while two of its jobs hang: every job's launcher
/// and ranks end, not only those of the last job started. Two mechanisms
/// see to it, and this checks their sum: the signal handler kills every
/// running job's process group (`launch/src/job.rs`), and each rank's runtime
/// ends its process when verify is gone (the death socket closes).
#[test]
fn a_verify_with_jobs_stopped_by_sigterm_leaves_no_job_running() {
    let _lock = mbh_tests::mpi_lock();
    let (_dir, exe, mut verify) = verify_in_background(
        "forced_runs_hang",
        FORCED_RUNS_HANG,
        &["-n", "4", "--jobs", "3"],
    );
    // Two jobs at once: two launchers and eight ranks name the program.
    let two_jobs = within(Duration::from_secs(120), || processes_of(&exe).len() >= 10);
    let seen = processes_of(&exe).len();
    // SAFETY: kill(2) on the verify this test started.
    unsafe { libc::kill(verify.id() as i32, libc::SIGTERM) };
    verify.wait().unwrap();
    let left = processes_left(&exe);
    assert!(
        two_jobs,
        "never two hanging jobs at once ({seen} processes)"
    );
    assert!(
        left.is_empty(),
        "processes left running 15 s after verify got SIGTERM: {left:?}"
    );
}

/// Issue 12: a rank killed from outside (here by itself, with SIGKILL,
/// which no handler sees) is named with its signal, in a sentence, from the
/// launcher's "BAD TERMINATION" banner: not "rank(s) [0, 1]".
#[test]
fn a_killed_rank_is_named_with_its_signal() {
    let _lock = mbh_tests::mpi_lock();
    let dir = tempfile::tempdir().unwrap();
    let source = dir.path().join("killed.c");
    std::fs::write(
        &source,
        r#"#include <mpi.h>
#include <signal.h>
#include <unistd.h>
int main(int argc, char **argv) {
  int rank;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank == 1) kill(getpid(), SIGKILL);
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_Finalize();
  return 0;
}
"#,
    )
    .unwrap();
    let exe = build(&source, dir.path());
    let (status, report, out) = crate::util::verify_json(&exe, 2, dir.path(), &[]);
    assert_eq!(status, 1, "{}", crate::util::describe(&out));
    let messages: Vec<&str> = report.findings.iter().map(|f| f.message.as_str()).collect();
    assert_eq!(messages.len(), 1, "{messages:?}");
    assert!(blames_only(messages[0], 1), "{messages:?}");
    assert!(messages[0].contains("killed"), "{messages:?}");
}

/// Whether a killed-rank `message` blames `rank` or no rank at all: when
/// the order of deaths is known it names the rank that died first; when
/// it is not (several exits at once on a loaded machine), it says so and
/// never blames the process the launcher's banner names (which can be one
/// the launcher killed itself).
pub(crate) fn blames_only(message: &str, rank: i32) -> bool {
    let confident =
        message.contains(" was killed by signal") || message.contains(" was the first to end");
    if confident {
        message.starts_with(&format!("rank {rank} was"))
    } else {
        message.contains("could not confirm") || message.contains("ended without finishing")
    }
}

/// Issue 12: a child the rank forks shares its trace mapping; the child's
/// exit (and the leak checks it would run) is not the rank's.
#[test]
fn a_forked_child_that_exits_leaves_the_rank_clean() {
    let report = crate::util::check_program("tests/programs/k1_forked_child_exits.c");
    assert!(
        report.runs[0].stdout.contains("child exited with 3"),
        "{:?}",
        report.runs[0].stdout
    );
    assert!(report.runs[0].ranks.iter().all(|r| r.state == "finalized"));
}

/// Issue 12: a run directory on a full file system. Each rank's trace
/// cannot grow past its first mapping; the records that do not fit are
/// counted in the trace header, the report names the ranks, and the
/// verdict is partial (exit 3), never "complete". The test mounts a
/// 2.6 MB tmpfs in a user and mount namespace of its own (`unshare -rm`),
/// which needs no privilege on Debian.
#[test]
fn a_full_run_directory_is_never_a_complete_verdict() {
    let _lock = mbh_tests::mpi_lock();
    let dir = tempfile::tempdir().unwrap();
    let exe = build(Path::new("tests/programs/k2_many_records.c"), dir.path());
    let small = dir.path().join("small");
    std::fs::create_dir(&small).unwrap();
    let script = format!(
        "mount -t tmpfs -o size=2600k tmpfs {small} && exec {mbhybrid} verify --format json -n 2 --run-dir {small}/runs {exe}",
        small = small.display(),
        mbhybrid = mbh_tests::mbhybrid().display(),
        exe = exe.display(),
    );
    let out = in_own_namespace(&script);
    let report: mbh_tests::json::Report = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("no JSON report ({e})\n{}", crate::util::describe(&out)));
    assert_eq!(
        out.status.code(),
        Some(3),
        "{}",
        crate::util::describe(&out)
    );
    assert!(!report.complete);
    assert!(report.findings.is_empty(), "{:?}", report.findings);
    for rank in 0..2 {
        assert!(
            report
                .warnings
                .iter()
                .any(|w| w.contains(&format!("rank {rank}'s runtime could not write"))),
            "{:?}",
            report.warnings
        );
    }
}

/// Issue 12: glibc aborting a rank whose heap it found damaged is a crash
/// that quotes glibc and shows the program's own stack, not the program's
/// `abort()` at whatever MPI call was running.
#[test]
fn a_double_free_is_a_crash_with_the_user_s_stack() {
    let report = crate::util::check_program("tests/programs/k3_double_free.c");
    let crash = &report.findings[0];
    assert!(crash.message.contains("C library"), "{crash:?}");
    assert!(
        crash
            .notes
            .iter()
            .any(|n| n.contains("release (") && n.contains("<- main (")),
        "{crash:?}"
    );
}

/// Issue 12: the run directory becomes read-only in the middle of an
/// exploration (a bind mount made read-only over it, in a user and mount
/// namespace of the test's own). The interleavings that ran are still
/// reported, never called complete, and the error says what happened
/// (not "no process reached MPI_Init"), exit 2, nothing left running.
#[test]
fn a_run_directory_made_read_only_mid_run_keeps_the_report() {
    let _lock = mbh_tests::mpi_lock();
    let dir = tempfile::tempdir().unwrap();
    let exe = build(Path::new("tests/programs/f3_testany_irecvs.c"), dir.path());
    let runs = dir.path().join("runs");
    let report = dir.path().join("report.json");
    let errors = dir.path().join("stderr.txt");
    let script = format!(
        r#"{mbhybrid} verify --format json -n 3 --run-dir {runs} {exe} > {report} 2> {errors} &
pid=$!
until ls -d {runs}/*/i3 >/dev/null 2>&1; do sleep 0.05; done
run=$(ls -d {runs}/*)
mount --bind "$run" "$run" || exit 99
# A remount fails (EBUSY) while the search is writing through the mount,
# as when it makes a run's working folder: try again until it takes.
tries=0
until mount -o remount,ro,bind "$run" 2>/dev/null; do
  tries=$((tries + 1)); [ $tries -lt 200 ] || exit 99; sleep 0.01
done
wait $pid"#,
        mbhybrid = mbh_tests::mbhybrid().display(),
        runs = runs.display(),
        exe = exe.display(),
        report = report.display(),
        errors = errors.display(),
    );
    let out = in_own_namespace(&script);
    let stderr = std::fs::read_to_string(&errors).unwrap_or_default();
    let context = format!("{}\n{stderr}", crate::util::describe(&out));
    assert_eq!(out.status.code(), Some(2), "{context}");
    let report: mbh_tests::json::Report =
        serde_json::from_str(&std::fs::read_to_string(&report).unwrap())
            .unwrap_or_else(|e| panic!("no report ({e})\n{context}"));
    assert!(report.interleavings >= 2 && !report.complete, "{context}");
    assert!(
        stderr.contains("the report above covers those"),
        "{context}"
    );
    assert!(stderr.contains("Read-only file system"), "{context}");
    assert!(!stderr.contains("no process reached"), "{context}");
    assert!(processes_of(&exe).is_empty(), "{context}");
}

/// Runs the shell `script` as root of a user and mount namespace of its
/// own (`unshare -rm`: no privilege needed on Debian), so it can mount a
/// tmpfs or a read-only bind over a run directory.
fn in_own_namespace(script: &str) -> std::process::Output {
    Command::new("unshare")
        .args(["-rm", "sh", "-c", script])
        .current_dir(mbh_tests::workspace_root())
        .env_remove("LD_LIBRARY_PATH")
        .output()
        .expect("unshare (util-linux) runs")
}
