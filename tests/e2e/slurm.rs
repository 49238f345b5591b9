//! Issue 42, the launcher part: `verify` through Slurm, on a real one-node
//! cluster (`slurmctld` and `slurmd` from Debian's slurm-wlm, started by
//! `scripts/slurm-local.sh` for each test and stopped after it): `srun`
//! as the launcher template, on its own and inside a batch job.
//!
//! MPICH takes its ranks' wire-up from Slurm's PMI-2, Open MPI from PMIx:
//! the template names the one the MPI under test speaks, as a user's would.

use crate::faults::{processes_of, within};
use crate::util::describe;
use mbh_tests::json::Report;
use mbh_tests::{mbhybrid, mpi_lock, mpi_under_test, workspace_root};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::Duration;

/// A one-node Slurm cluster, stopped when dropped.
struct Cluster {
    dir: tempfile::TempDir,
    conf: PathBuf,
}

impl Cluster {
    fn start() -> Cluster {
        let dir = tempfile::tempdir().unwrap();
        let out = script("start", dir.path());
        assert!(
            out.status.success(),
            "the test cluster did not start\n{}",
            describe(&out)
        );
        let conf = PathBuf::from(String::from_utf8_lossy(&out.stdout).trim());
        Cluster { dir, conf }
    }

    /// `program ARGS` in `cwd` with this cluster's configuration.
    fn run(&self, cwd: &Path, program: &str, args: &[&str]) -> Output {
        Command::new(program)
            .args(args)
            .current_dir(cwd)
            .env("SLURM_CONF", &self.conf)
            .env_remove("LD_LIBRARY_PATH")
            .output()
            .unwrap_or_else(|e| panic!("cannot run {program}: {e}"))
    }
}

impl Cluster {
    /// How many job steps of `job` slurmd launched (its log's "launch task
    /// StepId=JOB.STEP" lines; the batch script's own step is not one).
    fn steps_launched(&self, job: &str) -> usize {
        let log = std::fs::read_to_string(self.dir.path().join("slurmd.log")).unwrap_or_default();
        let prefix = format!("launch task StepId={job}.");
        log.lines().filter(|l| l.contains(&prefix)).count()
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        let _ = script("stop", self.dir.path());
    }
}

fn script(command: &str, dir: &Path) -> Output {
    Command::new("bash")
        .arg(workspace_root().join("scripts/slurm-local.sh"))
        .arg(command)
        .arg(dir)
        .output()
        .unwrap()
}

/// The launcher template for the MPI under test.
fn srun_template() -> &'static str {
    match mpi_under_test() {
        "openmpi" => "srun -n {np} --mpi=pmix",
        _ => "srun -n {np} --mpi=pmi2",
    }
}

/// `x1_waitany_order.c` built in `dir`: its assertion fails in one of its
/// two interleavings.
fn build_x1(dir: &Path) -> PathBuf {
    let source = workspace_root().join("tests/programs/x1_waitany_order.c");
    crate::util::build(&source, dir)
}

fn report_of(json: &[u8], context: &Output) -> Report {
    serde_json::from_slice(json)
        .unwrap_or_else(|e| panic!("no JSON report ({e})\n{}", describe(context)))
}

/// The search through `srun`: the same interleavings and finding as
/// through `mpiexec`.
#[test]
fn verify_through_srun_finds_what_it_finds_through_mpiexec() {
    let _lock = mpi_lock();
    let cluster = Cluster::start();
    let dir = tempfile::tempdir().unwrap();
    let exe = build_x1(dir.path());
    let verify = mbhybrid();
    let out = cluster.run(
        dir.path(),
        verify.to_str().unwrap(),
        &[
            "verify",
            "--format",
            "json",
            "--launcher",
            srun_template(),
            "-n",
            "3",
            exe.to_str().unwrap(),
        ],
    );
    let report = report_of(&out.stdout, &out);
    assert_eq!(out.status.code(), Some(1), "{}", describe(&out));
    assert_eq!(report.interleavings, 2);
    assert!(report.complete);
    let kinds: Vec<&str> = report.findings.iter().map(|f| f.kind.as_str()).collect();
    assert_eq!(kinds, ["assertion"], "{:?}", report.findings);
}

/// Inside a batch job (`sbatch --wait`), as a user submits one: `srun`
/// launches each interleaving in the job's allocation, and the job ends
/// with `verify`'s exit status.
#[test]
fn verify_inside_a_batch_job_launches_its_interleavings_in_the_allocation() {
    let _lock = mpi_lock();
    let cluster = Cluster::start();
    let dir = tempfile::tempdir().unwrap();
    let exe = build_x1(dir.path());
    let script = format!(
        "#!/bin/bash\n{} verify --format json --launcher '{}' -n 3 {} > report.json\n",
        mbhybrid().display(),
        srun_template(),
        exe.display()
    );
    std::fs::write(dir.path().join("job.sh"), script).unwrap();
    let out = cluster.run(
        dir.path(),
        "sbatch",
        &["--wait", "-n", "3", "-o", "job.out", "job.sh"],
    );
    let json = std::fs::read(dir.path().join("report.json")).unwrap_or_default();
    let report = report_of(&json, &out);
    assert!(report.complete, "{}", describe(&out));
    assert_eq!(report.interleavings, 2);
    assert_eq!(report.findings.len(), 1, "{:?}", report.findings);
    // The batch job's exit is verify's: 1, an error found.
    assert_eq!(out.status.code(), Some(1), "{}", describe(&out));
}

/// `--jobs` inside a batch job: the interleavings run ahead run as job
/// steps of the allocation too, each its own `srun` step, and the report
/// is the one a single job would give.
#[test]
fn run_ahead_interleavings_are_job_steps_of_the_allocation() {
    let _lock = mpi_lock();
    let cluster = Cluster::start();
    let dir = tempfile::tempdir().unwrap();
    write_fan_in_job(dir.path(), "--jobs 2 --max-interleavings 6");
    let out = cluster.run(
        dir.path(),
        "sbatch",
        &["--wait", "--parsable", "-n", "4", "-o", "job.out", "job.sh"],
    );
    let job = String::from_utf8_lossy(&out.stdout).trim().to_owned();
    let json = std::fs::read(dir.path().join("report.json")).unwrap_or_default();
    let report = report_of(&json, &out);
    assert_eq!(report.interleavings, 6, "{}", job_files(dir.path()));
    assert!(!report.complete, "--max-interleavings stopped it");
    assert!(report.findings.is_empty(), "{:?}", report.findings);
    // Partial coverage: exit 3, the batch job's exit.
    assert_eq!(out.status.code(), Some(3), "{}", describe(&out));
    let steps = cluster.steps_launched(&job);
    assert!(
        steps >= 6,
        "{steps} job steps launched for 6 interleavings\n{}",
        job_files(dir.path())
    );
}

/// A batch job cancelled as a time limit ends it (Slurm sends SIGTERM to
/// every process of the job, `KillWait` seconds before SIGKILL): `verify`
/// stops and writes the report of what ran, partial, saying why; no rank
/// outlives it. The script `exec`s
/// `verify`, as docs/guide.md says to: a shell that stays in between dies of
/// the SIGTERM at once, and Slurm then kills what is left of the step.
#[test]
fn a_cancelled_batch_job_still_writes_the_report_of_what_ran() {
    let _lock = mpi_lock();
    let cluster = Cluster::start();
    let dir = tempfile::tempdir().unwrap();
    let exe = write_fan_in_job(dir.path(), "");
    let out = cluster.run(
        dir.path(),
        "sbatch",
        &["--parsable", "-n", "4", "-o", "job.out", "job.sh"],
    );
    assert!(out.status.success(), "{}", describe(&out));
    let job = String::from_utf8_lossy(&out.stdout).trim().to_owned();
    let err = dir.path().join("verify.err");
    let progressed = within(Duration::from_secs(120), || {
        std::fs::read_to_string(&err).is_ok_and(|e| e.contains("mbhybrid: interleaving"))
    });
    let cancelled = cluster.run(dir.path(), "scancel", &[&job]);
    assert!(
        progressed,
        "no progress line from verify in the batch job\n{}",
        job_files(dir.path())
    );
    assert!(cancelled.status.success(), "{}", describe(&cancelled));
    let json = dir.path().join("report.json");
    let written = within(Duration::from_secs(30), || {
        std::fs::read(&json).is_ok_and(|j| serde_json::from_slice::<Report>(&j).is_ok())
    });
    assert!(
        written,
        "no report after the cancel\n{}",
        job_files(dir.path())
    );
    let report: Report = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    assert!(!report.complete);
    assert!(report.interleavings >= 1);
    // Slurm signals the job step that runs the interleaving and the batch
    // step that runs `verify` in either order: `verify` is stopped by the
    // SIGTERM, or sees its interleaving's step killed first and ends the
    // search there; either way the report says why it is partial.
    assert!(
        report
            .warnings
            .iter()
            .any(|w| w.contains("stopped by SIGTERM")
                || (w.starts_with("coverage is partial") && w.contains("could not run"))),
        "{:?}",
        report.warnings
    );
    assert!(
        within(Duration::from_secs(30), || processes_of(&exe).is_empty()),
        "ranks outlived the cancelled job"
    );
}

/// Builds `long_fan_in.c` (1,680 orders on 4 ranks) in `dir` and writes
/// `dir/job.sh`, a batch script that `exec`s `verify OPTIONS` on 4 ranks
/// through `srun`, its report to `report.json`, its stderr to
/// `verify.err`. Returns the executable.
fn write_fan_in_job(dir: &Path, options: &str) -> PathBuf {
    let source = workspace_root().join("tests/programs/exit/long_fan_in.c");
    let exe = crate::util::build(&source, dir);
    let script = format!(
        "#!/bin/bash\nexec {} verify {options} --format json --launcher '{}' -n 4 {} > report.json 2> verify.err\n",
        mbhybrid().display(),
        srun_template(),
        exe.display()
    );
    std::fs::write(dir.join("job.sh"), script).unwrap();
    exe
}

/// What the batch job left in `dir` (verify's stderr, the job's output),
/// for a failed assertion's message.
fn job_files(dir: &Path) -> String {
    ["verify.err", "job.out"]
        .iter()
        .map(|name| {
            let text = std::fs::read_to_string(dir.join(name)).unwrap_or_default();
            format!("--- {name}\n{text}")
        })
        .collect()
}
