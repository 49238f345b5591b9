//! One module per subcommand: each turns parsed arguments into calls of the
//! library crates and returns the process exit status.

pub mod analyze;
pub mod audit;
pub mod build;
pub mod explain;
pub mod replay;
pub mod run;
pub mod verify;
pub mod wrappers;

use crate::cli::JobArgs;
use mbh_session::{Session, SessionRequest};
use std::path::{Path, PathBuf};

/// The session of a command that launches `program ARGS` as `job` says,
/// each run stopped after `timeout` seconds, with progress on standard
/// error as `progress` says.
pub fn prepare_session(
    job: &JobArgs,
    program: &Path,
    args: &[String],
    timeout: u64,
    progress: mbh_session::progress::ProgressMode,
) -> anyhow::Result<Session> {
    let mpi = crate::mpi_choice::setup(
        program,
        job.launcher.as_deref(),
        job.mpi.map(crate::cli::MpiArg::family),
        job.runtime.as_deref(),
    )?;
    Ok(Session::prepare(&SessionRequest {
        program,
        args,
        np: job.np,
        launcher: &mpi.launcher,
        launcher_env: mpi.launcher_env,
        runtime: &mpi.runtime,
        run_root: &job.run_dir,
        timeout,
        progress,
    })?)
}

/// Where the runtime library is installed: beside the mbhybrid executable
/// (cargo puts both in `target/<profile>/`).
pub fn default_runtime_dir() -> PathBuf {
    std::env::current_exe()
        .ok()
        .and_then(|exe| exe.canonicalize().ok())
        .and_then(|exe| exe.parent().map(|p| p.to_owned()))
        .unwrap_or_else(|| PathBuf::from("."))
}
