//! Generated programs (`mbh_tests::generator`) are usable: they compile
//! warning-free with `mpicc -Wall`, terminate under plain MPICH with one
//! signature line per rank when they have no intentional bug, and go
//! through `mbhybrid build` and `verify`.

use crate::util::{build, describe, verify_json};
use mbh_tests::generator::Program;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

/// Seconds a plain run may take before it is called hung.
const TIMEOUT: &str = "10";

/// Writes the program of `seed` to `DIR/gSEED.c` and builds it with
/// `mpicc -Wall -Werror`.
fn compile_plain(program: &Program, dir: &Path) -> PathBuf {
    let source = dir.join(format!("g{}.c", program.seed));
    std::fs::write(&source, program.to_c()).unwrap();
    let exe = dir.join(format!("g{}", program.seed));
    let out = Command::new("mpicc")
        .args(["-Wall", "-Wextra", "-Werror", "-o"])
        .arg(&exe)
        .arg(&source)
        .output()
        .expect("mpicc runs");
    assert!(
        out.status.success(),
        "seed {}: mpicc\n{}",
        program.seed,
        describe(&out)
    );
    exe
}

/// `timeout 10 mpiexec -n NP EXE` in a process group of its own, which is
/// killed whole afterwards (a deadlocked run leaves ranks behind otherwise).
fn run_plain(exe: &Path, np: u32) -> Output {
    let child = Command::new("timeout")
        .args(["-k", "2", TIMEOUT, "mpiexec", "-n", &np.to_string()])
        .arg(exe)
        .env_remove("LD_LIBRARY_PATH")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .spawn()
        .expect("timeout mpiexec runs");
    let group = child.id();
    let out = child.wait_with_output().expect("mpiexec finishes");
    let _ = Command::new("kill")
        .args(["-KILL", "--", &format!("-{group}")])
        .stderr(Stdio::null())
        .status();
    out
}

/// The `sig R: …` lines of a run's output, sorted by rank, after checking
/// there is exactly one per rank.
fn signatures(stdout: &str, np: u32) -> Result<Vec<String>, String> {
    let mut lines: Vec<&str> = stdout.lines().filter(|l| l.starts_with("sig ")).collect();
    lines.sort_by_key(|l| l[4..].split(':').next().and_then(|r| r.parse::<u32>().ok()));
    let ranks: Vec<String> = (0..np).map(|r| format!("sig {r}:")).collect();
    if lines.len() != np as usize || lines.iter().zip(&ranks).any(|(l, r)| !l.starts_with(r)) {
        return Err(format!(
            "expected one signature per rank of {np}: {lines:?}"
        ));
    }
    Ok(lines.into_iter().map(str::to_owned).collect())
}

#[test]
fn generated_programs_terminate_under_plain_mpi() {
    // Programs without an intentional bug run three times; a program with
    // one may fail or hang (a deadlock hangs under plain MPI), so it runs
    // once and must then have printed every signature if it exited 0.
    let _lock = mbh_tests::mpi_lock();
    let dir = tempfile::tempdir().unwrap();
    let mut clean = 0;
    for seed in 0..12 {
        let program = Program::generate(seed);
        let exe = compile_plain(&program, dir.path());
        let runs = if program.has_bug() { 1 } else { 3 };
        if !program.has_bug() {
            clean += 1;
        }
        for _ in 0..runs {
            let out = run_plain(&exe, program.np());
            let stdout = String::from_utf8_lossy(&out.stdout);
            if program.has_bug() && !out.status.success() {
                continue;
            }
            assert!(
                out.status.success(),
                "seed {seed} failed without an intentional bug\n{}\n{}",
                describe(&out),
                program.to_c()
            );
            if let Err(e) = signatures(&stdout, program.np()) {
                panic!("seed {seed}: {e}\n{}", describe(&out));
            }
        }
    }
    assert!(clean >= 6, "only {clean} programs without a bug");
}

#[test]
fn generated_programs_go_through_build_and_verify() {
    // The search may miss outcomes (the differential test's business);
    // here every explored run of a program without a bug must end cleanly
    // with one signature per rank, and a program with a bug must at least
    // give a report.
    let _lock = mbh_tests::mpi_lock();
    let dir = tempfile::tempdir().unwrap();
    for seed in [5, 11, 15, 3] {
        let program = Program::generate(seed);
        let source = dir.path().join(format!("g{seed}.c"));
        std::fs::write(&source, program.to_c()).unwrap();
        let exe = build(&source, dir.path());
        let (status, report, out) = verify_json(&exe, program.np(), dir.path(), &[]);
        assert!(report.interleavings >= 1, "seed {seed}\n{}", describe(&out));
        if program.has_bug() {
            assert!(
                status == 0 || status == 1,
                "seed {seed}\n{}",
                describe(&out)
            );
            continue;
        }
        assert_eq!(
            (status, report.findings.len()),
            (0, 0),
            "seed {seed}: {:?}\n{}",
            report.findings,
            program.to_c()
        );
        for run in &report.runs {
            if let Err(e) = signatures(&run.stdout, program.np()) {
                panic!("seed {seed}, interleaving {}: {e}", run.interleaving);
            }
        }
    }
}

#[test]
fn the_issue_deadlock_shape_is_generated_and_reachable() {
    // Some seed gives the two-receiver cross deadlock; verify must be able
    // to run it (whether the fast search finds the deadlock is what the
    // differential test checks).
    let seed = (0..200)
        .find(|&s| {
            let p = Program::generate(s);
            p.features().deadlock_bug && p.phases.len() == 1
        })
        .or_else(|| (0..200).find(|&s| Program::generate(s).features().deadlock_bug))
        .expect("a seed with the cross deadlock");
    let program = Program::generate(seed);
    let _lock = mbh_tests::mpi_lock();
    let dir = tempfile::tempdir().unwrap();
    let source = dir.path().join(format!("g{seed}.c"));
    std::fs::write(&source, program.to_c()).unwrap();
    let exe = build(&source, dir.path());
    let (status, report, out) = verify_json(&exe, program.np(), dir.path(), &[]);
    assert!(
        status == 0 || status == 1,
        "seed {seed}\n{}",
        describe(&out)
    );
    assert!(report.interleavings >= 2, "seed {seed}\n{}", describe(&out));
    // Never in all outcomes: some explored run ends with every signature.
    assert!(
        report
            .runs
            .iter()
            .any(|run| signatures(&run.stdout, program.np()).is_ok()),
        "seed {seed}: no run ended cleanly\n{}",
        describe(&out)
    );
}
