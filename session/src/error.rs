//! What can stop a verification session: the user's program, the run
//! directory, the launcher, a run with nothing to judge. Each message says
//! what happened and what to do.

use std::path::PathBuf;

/// A failure of a session (the binary exits with status 2).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SessionError {
    /// The program to verify does not exist.
    #[error("there is no executable `{0}`. Build it first, for example `mbhybrid build -o {0} app.c`, or check the path.")]
    NoSuchProgram(PathBuf),
    /// The program exists but cannot be executed.
    #[error("`{0}` is not an executable file (it is a directory, or lacks execute permission). Pass the program built by `mbhybrid build`.")]
    NotExecutable(PathBuf),
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
    /// A run's manifest cannot be parsed.
    #[error("{} is not an mbhybrid run manifest", path.display())]
    BadManifest {
        /// The manifest.
        path: PathBuf,
        /// Why.
        #[source]
        source: serde_json::Error,
    },
    /// The working directory cannot be read.
    #[error("cannot read the working directory")]
    WorkingDir(#[source] std::io::Error),
    /// A file of the run directory cannot be written.
    #[error("cannot write {}", path.display())]
    Write {
        /// The file.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// An interleaving's directory cannot be renamed.
    #[error("cannot move {} to {}", from.display(), to.display())]
    Move {
        /// Its directory.
        from: PathBuf,
        /// Its new name.
        to: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// A job launched ahead (`--jobs`) panicked in mbhybrid.
    #[error("a job launched ahead panicked")]
    RunAheadPanicked,
    /// The launcher template cannot start a job.
    #[error(transparent)]
    Launcher(#[from] mbh_launch::LauncherError),
    /// The run left nothing to judge.
    #[error(transparent)]
    NoVerdict(#[from] mbh_verdict::NoVerdict),
}

/// A session's result.
pub type Result<T, E = SessionError> = std::result::Result<T, E>;
