//! `mbhybrid run` (issue 14, seed 002): programs whose output depends on
//! which sender each wildcard receive takes print the same output on every
//! run under it, where plain `mpiexec` runs of the same programs, whose
//! senders sleep at random, differ.

use crate::util::{build, describe, verify_json};
use mbh_tests::json::Report;
use mbh_tests::{mpiexec, run_mbhybrid, workspace_root, TestProgram};
use std::collections::BTreeSet;
use std::path::Path;

/// Runs of each kind per program.
const RUNS: usize = 20;

/// The lines of an output in order: ranks print in any order.
fn sorted_lines(stdout: &str) -> String {
    let mut lines: Vec<&str> = stdout.lines().collect();
    lines.sort_unstable();
    lines.join("\n")
}

/// `mbhybrid run -n NP EXE` in `dir`: (exit status, stdout, stderr).
fn run(exe: &Path, np: u32, dir: &Path) -> (i32, String, String) {
    let runs = dir.join("runs");
    let np = np.to_string();
    let out = run_mbhybrid(
        &workspace_root(),
        &[
            "run",
            "-n",
            &np,
            "--run-dir",
            runs.to_str().unwrap(),
            exe.to_str().unwrap(),
        ],
    );
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// The summary line's match digest and decision count.
fn summary(stderr: &str) -> (String, u64) {
    let line = stderr
        .lines()
        .find(|l| l.contains("decided by logical time"))
        .unwrap_or_else(|| panic!("no summary line in\n{stderr}"));
    let digest = line
        .split("match digest ")
        .nth(1)
        .and_then(|rest| rest.split(';').next())
        .expect("the summary names a digest")
        .to_string();
    let decided = line
        .trim_start_matches("mbhybrid: ")
        .split(' ')
        .next()
        .and_then(|n| n.parse().ok())
        .expect("the summary counts the decisions");
    (digest, decided)
}

/// Builds `tests/programs/run/NAME.c`, runs it [`RUNS`] times under
/// `mbhybrid run` and under plain `mpiexec` with `np` ranks, and checks
/// that the first give one output, one match digest and `decided`
/// decisions, and the second more than one output.
fn reproducible(name: &str, np: u32, decided: u64) {
    let _lock = mbh_tests::mpi_lock();
    let dir = tempfile::tempdir().unwrap();
    let source = format!("tests/programs/run/{name}.c");
    let exe = build(Path::new(&source), dir.path());
    let mut outputs = BTreeSet::new();
    let mut digests = BTreeSet::new();
    for _ in 0..RUNS {
        let (status, stdout, stderr) = run(&exe, np, dir.path());
        assert_eq!(status, 0, "{name}\n{stdout}\n{stderr}");
        assert!(
            !stderr.contains("warning"),
            "every decision by logical time:\n{stderr}"
        );
        let (digest, count) = summary(&stderr);
        assert_eq!(count, decided, "{name}:\n{stderr}");
        outputs.insert(sorted_lines(&stdout));
        digests.insert(digest);
    }
    assert_eq!(outputs.len(), 1, "{name} under mbhybrid run: {outputs:?}");
    assert_eq!(digests.len(), 1, "{name} under mbhybrid run: {digests:?}");
    let mut plain = BTreeSet::new();
    for _ in 0..RUNS {
        // As a user runs it: `cargo test` puts target/debug on
        // LD_LIBRARY_PATH, whose runtime is MPICH's, not the one an Open
        // MPI build was linked against.
        let out = mpiexec(np)
            .arg(&exe)
            .env_remove("LD_LIBRARY_PATH")
            .output()
            .expect("mpiexec runs");
        assert!(out.status.success(), "{name}\n{}", describe(&out));
        plain.insert(sorted_lines(&String::from_utf8_lossy(&out.stdout)));
    }
    assert!(
        plain.len() > 1,
        "{name}: plain mpiexec printed one output in {RUNS} runs ({plain:?}): the program no longer shows the nondeterminism this test needs"
    );
}

/// Wildcard `MPI_Recv` and `MPI_Probe` on world and on a duplicate, the
/// senders sleeping at random before each send.
#[test]
fn arrival_order_is_the_same_on_every_run() {
    reproducible("r1_arrival_order", 4, 12);
}

/// Master and workers: the workers block on the master between tasks.
#[test]
fn master_worker_assignment_is_the_same_on_every_run() {
    reproducible("r2_master_worker", 4, 27);
}

/// `MPI_Testany`, `MPI_Iprobe` and `MPI_Test` polls: what they report,
/// and after how many polls, is the same on every run (seed 002 §3.3).
#[test]
fn test_and_probe_polls_are_the_same_on_every_run() {
    reproducible("r3_test_and_probe_polls", 4, 1);
}

/// A ring of wildcard `MPI_Irecv`s posted before the sends (deferred),
/// completed by `MPI_Waitany` and `MPI_Waitall`.
#[test]
fn deferred_wildcard_irecvs_are_the_same_on_every_run() {
    reproducible("r4_ring_irecv_any", 3, 18);
}

/// Every program of `tests/programs/` that verifies clean (exit 0) runs
/// to its end under `mbhybrid run` with exit 0 and prints the same output
/// twice: deterministic mode adds no deadlock to a correct program
/// (polling loops that give up, cancelled and persistent wildcard
/// receives, collectives, matched probes, forks, ...).
#[test]
fn every_clean_test_program_runs_to_its_end_the_same_twice() {
    let _lock = mbh_tests::mpi_lock();
    let dir = tempfile::tempdir().unwrap();
    let mut sources: Vec<String> = std::fs::read_dir(workspace_root().join("tests/programs"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|name| name.ends_with(".c"))
        .map(|name| format!("tests/programs/{name}"))
        .collect();
    sources.sort();
    let mut ran = 0;
    for source in sources {
        let text = std::fs::read_to_string(workspace_root().join(&source)).unwrap();
        if !text.starts_with("/* mbhybrid-test:") {
            // Driven by a test of its own (`transparency.rs`).
            continue;
        }
        let program = TestProgram::parse(&source, &text);
        if program.exit != 0 {
            continue;
        }
        let exe = build(Path::new(&source), dir.path());
        let (first, second) = (
            run(&exe, program.np, dir.path()),
            run(&exe, program.np, dir.path()),
        );
        for (status, stdout, stderr) in [&first, &second] {
            assert_eq!(*status, 0, "{source}\n{stdout}\n{stderr}");
        }
        assert_eq!(
            sorted_lines(&first.1),
            sorted_lines(&second.1),
            "{source}: two outputs\n{}\n{}",
            first.2,
            second.2
        );
        ran += 1;
    }
    assert!(ran >= 30, "only {ran} clean programs");
}

/// Wildcards on an intercommunicator, which deterministic mode does not
/// decide: the run ends as under MPI, and the warning counts each of them
/// (two `MPI_Irecv`s and the `MPI_Iprobe` that found a message).
#[test]
fn intercommunicator_wildcards_are_named_as_undecided_and_still_run() {
    let _lock = mbh_tests::mpi_lock();
    let dir = tempfile::tempdir().unwrap();
    let exe = build(
        Path::new("tests/programs/run/r5_intercomm_wildcard.c"),
        dir.path(),
    );
    let (status, stdout, stderr) = run(&exe, 4, dir.path());
    assert_eq!(status, 0, "{stdout}\n{stderr}");
    assert_eq!(stdout.trim(), "sum 4 last 1", "{stderr}");
    assert!(
        stderr.contains("warning: 3 wildcard receive(s) or probe(s) took the first message")
            && stderr.contains("intercommunicator"),
        "{stderr}"
    );
}

/// A deadlock of the program is confirmed on the wait-for graph and the
/// job stopped, as under `verify`.
#[test]
fn a_deadlock_stops_the_job_and_says_so() {
    let _lock = mbh_tests::mpi_lock();
    let dir = tempfile::tempdir().unwrap();
    let exe = build(Path::new("tests/programs/e1_recv_recv.c"), dir.path());
    let (status, stdout, stderr) = run(&exe, 2, dir.path());
    assert_eq!(status, 1, "{stdout}\n{stderr}");
    assert!(
        stderr.contains("the job deadlocked (the wait-for graph confirmed it)"),
        "{stderr}"
    );
}

/// A program that is not there is a usage error that names it.
#[test]
fn a_missing_program_is_a_usage_error() {
    let dir = tempfile::tempdir().unwrap();
    let (status, _, stderr) = run(&dir.path().join("no-such-app"), 2, dir.path());
    assert_eq!(status, 2, "{stderr}");
    assert!(stderr.contains("no-such-app"), "{stderr}");
}

/// Every run's output lines that tell its matches (`sig …`, `arrival
/// order: …`), in run order.
fn signatures(report: &Report) -> Vec<String> {
    report
        .runs
        .iter()
        .map(|run| {
            let lines: Vec<&str> = run
                .stdout
                .lines()
                .filter(|l| l.starts_with("sig ") || l.starts_with("arrival order"))
                .collect();
            assert!(
                !lines.is_empty(),
                "a run without its matches:\n{}",
                run.stdout
            );
            lines.join(" | ")
        })
        .collect()
}

/// `verify --deterministic` starts from the run `mbhybrid run` makes: its
/// first interleaving is the same on every verify, and it explores the
/// same outcomes as without it (wildcard receives and `MPI_Testany`).
#[test]
fn verify_deterministic_starts_from_one_run_and_explores_the_same_outcomes() {
    let _lock = mbh_tests::mpi_lock();
    let dir = tempfile::tempdir().unwrap();
    for (source, np) in [
        ("tests/programs/f3_testany_irecvs.c", 3),
        ("tests/programs/r1_output_order.c", 4),
    ] {
        let exe = build(Path::new(source), dir.path());
        let free = verify_json(&exe, np, dir.path(), &[]).1;
        let mut firsts = BTreeSet::new();
        for _ in 0..3 {
            let (status, report, out) = verify_json(&exe, np, dir.path(), &["--deterministic"]);
            assert_eq!(status, 0, "{source}\n{}", describe(&out));
            assert!(report.complete, "{source}");
            let sigs = signatures(&report);
            assert_eq!(
                sigs.iter().collect::<BTreeSet<_>>(),
                signatures(&free).iter().collect::<BTreeSet<_>>(),
                "{source}: the same outcomes as without --deterministic"
            );
            firsts.insert(sigs[0].clone());
        }
        assert!(
            signatures(&free).len() > 1,
            "{source}: more than one outcome"
        );
        assert_eq!(
            firsts.len(),
            1,
            "{source}: one first interleaving: {firsts:?}"
        );
    }
}
