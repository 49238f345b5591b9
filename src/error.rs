//! Errors the user can cause or fix: each renders as one paragraph that says
//! what happened and what to do, and makes mbhybrid exit with status 2.

use std::path::PathBuf;

/// A failure of the user's input or environment (exit status 2).
#[derive(Debug, thiserror::Error)]
pub enum UsageError {
    /// The program to verify does not exist.
    #[error("there is no executable `{0}`. Build it first, for example `mbhybrid build -o {0} app.c`, or check the path.")]
    NoSuchProgram(PathBuf),
    /// The program exists but cannot be executed.
    #[error("`{0}` is not an executable file (it is a directory, or lacks execute permission). Pass the program built by `mbhybrid build`.")]
    NotExecutable(PathBuf),
    /// The program is linked against another MPI than the one asked for.
    #[error("`{}` is linked against {linked}, but --mpi asks for {asked}: it can only run on the MPI it was linked with. Drop --mpi, or rebuild the program with `mbhybrid build --mpi {}`.", program.display(), asked.key())]
    ProgramOfOtherMpi {
        /// The program.
        program: PathBuf,
        /// The MPI its executable needs.
        linked: mbh_instrument::MpiFamily,
        /// The MPI asked for.
        asked: mbh_instrument::MpiFamily,
    },
    /// No launcher of the program's MPI is installed.
    #[error("no launcher of {family} was found on PATH (tried {tried}). Install it (`scripts/install-deps.sh` installs MPICH and Open MPI), or name your launcher with `--launcher`.")]
    NoLauncherFor {
        /// The MPI.
        family: mbh_instrument::MpiFamily,
        /// The names looked for.
        tried: String,
    },
    /// The runtime library is missing.
    #[error("the mbhybrid runtime library was not found at `{0}`. Build the whole workspace (`cargo build --workspace`), or pass its location with `--runtime` / `--runtime-dir`.")]
    RuntimeMissing(PathBuf),
    /// The run directory cannot be created or written.
    #[error("cannot write the run directory `{path}`: {reason}. Pass a writable directory with `--run-dir DIR` (on a cluster, one on a file system every node sees).")]
    RunDirUnwritable {
        /// The directory.
        path: PathBuf,
        /// The OS error.
        reason: String,
    },
    /// The launcher failed before any rank ran.
    #[error("the launcher failed before any MPI process started (exit status {status}). It printed:\n{stderr}\nCheck that `{command}` works on its own.")]
    LauncherFailed {
        /// The command line.
        command: String,
        /// Its exit status, or a description.
        status: String,
        /// Its standard error.
        stderr: String,
    },
    /// `replay` was given a run that does not exist.
    #[error("there is no mbhybrid run at `{0}`. Pass the run id a finding's replay command names (run directories are under `.mbhybrid/runs/` unless `--run-dir` said otherwise).")]
    NoSuchRun(PathBuf),
    /// `replay` was given an interleaving the run does not have.
    #[error("run `{run}` has no replayable interleaving {n} (it ran {available}). Pick one of the interleavings its report lists.")]
    NoSuchInterleaving {
        /// The run id.
        run: String,
        /// The interleaving asked for.
        n: u32,
        /// How many there are.
        available: u32,
    },
    /// `explain` was given a code that does not exist.
    #[error("`{0}` is not an mbhybrid finding code. Codes run from MBH0001 to MBH{1:04}; each finding prints its code in brackets, for example `error[MBH0001]`.")]
    NoSuchCode(String, usize),
    /// The HTML report cannot be written.
    #[error("cannot write the HTML report `{path}`: {reason}. Pass a writable path to `--html`.")]
    HtmlUnwritable {
        /// The file.
        path: PathBuf,
        /// The OS error.
        reason: String,
    },
    /// The run left nothing to judge (no rank reached `MPI_Init`, no
    /// trace could be read).
    #[error(transparent)]
    NoVerdict(#[from] mbh_verdict::NoVerdict),
    /// The launcher template cannot start a job.
    #[error(transparent)]
    Launcher(#[from] mbh_launch::LauncherError),
}
