//! Runs that leave nothing to judge: no rank reached `MPI_Init` under the
//! runtime, or none wrote a trace that can be read. These are the tool's
//! errors to report (the user must act before anything can be verified),
//! never findings against the program.

use crate::outcome::RunContext;
use std::path::PathBuf;

/// Why a run has nothing to judge. The messages say what to do.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum NoVerdict {
    /// The runtime could not create its traces in the run directory.
    #[error("cannot write the run directory `{}`: {reason}. Pass a writable directory with `--run-dir DIR` (on a cluster, one on a file system every node sees).", path.display())]
    RunDirUnwritable {
        /// The directory.
        path: PathBuf,
        /// The OS error, as the runtime reported it.
        reason: String,
    },
    /// The MPI shared library could not be loaded by the ranks.
    #[error("the MPI processes could not start because a shared library is missing:\n{0}\nInstall MPICH (`scripts/install-deps.sh`, or `apt-get install mpich libmpich-dev`), or rebuild the program with `mbhybrid build` on this machine.")]
    MpiLibraryMissing(String),
    /// Traces were written but none could be read.
    #[error("`{program}` ran, but no rank's trace could be read: rank {rank}'s trace is unreadable: {reason}. If the program was built by another version of mbhybrid, rebuild it with `mbhybrid build`. The run's files are in {run}.")]
    UnreadableTraces {
        /// The program, as the user named it.
        program: String,
        /// The first rank whose trace is unreadable.
        rank: i32,
        /// Why, as the reader says it.
        reason: String,
        /// The interleaving's directory.
        run: String,
    },
    /// No process reached `MPI_Init` under the runtime.
    #[error("`{program}` ran, but no process reached `MPI_Init` under the mbhybrid runtime, so there is nothing to verify. Check that the program calls `MPI_Init` and was built with `mbhybrid build` (or is dynamically linked against MPI, so the runtime can be preloaded). The run's files are in {run}.{output}")]
    NeverInitialized {
        /// The program, as the user named it.
        program: String,
        /// The interleaving's directory.
        run: String,
        /// What the launcher printed, if anything.
        output: String,
    },
}
use crate::printed::*;

/// The runtime's "cannot create <trace>: <why>" in a job's output, from
/// "cannot". Searched anywhere in a line: a launcher that merges the
/// ranks' standard error (Open MPI) may put another rank's text before it.
pub(crate) fn trace_not_created(output: &str) -> Option<&str> {
    const PREFIX: &str = "mbhybrid runtime: ";
    output.lines().find_map(|line| {
        let at = line.find("mbhybrid runtime: cannot create ")?;
        Some(&line[at + PREFIX.len()..])
    })
}

pub(crate) fn no_rank_started(ctx: &RunContext<'_>, launcher_stderr: &str) -> NoVerdict {
    // The runtime could not create its traces (a run directory that became
    // read-only or full): that, not "no process reached MPI_Init".
    let stdout = std::fs::read_to_string(ctx.dir.launcher_stdout()).unwrap_or_default();
    if let Some(reason) = trace_not_created(launcher_stderr).or(trace_not_created(&stdout)) {
        return NoVerdict::RunDirUnwritable {
            path: ctx.dir.path.clone(),
            reason: reason.to_string(),
        };
    }
    if let Some(line) = launcher_stderr
        .lines()
        .find(|l| l.contains("error while loading shared libraries"))
    {
        return NoVerdict::MpiLibraryMissing(line.trim().to_string());
    }
    let stdout = std::fs::read_to_string(ctx.dir.launcher_stdout()).unwrap_or_default();
    let printed = format!("{}{}", tail(&stdout), tail(launcher_stderr));
    let output = if printed.trim().is_empty() {
        String::new()
    } else {
        format!(" The job printed:\n{}", printed.trim_end())
    };
    NoVerdict::NeverInitialized {
        program: ctx.program.to_string(),
        run: ctx.dir.path.display().to_string(),
        output,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue 12, as Open MPI's launcher printed it: two ranks' lines run
    /// together, the first cut by the second.
    #[test]
    fn a_trace_not_created_is_found_inside_a_merged_line() {
        let merged = "sig 1: 0<0\nmbhybrid runtime: mbhybrid runtime: cannot create /r/i3/rank-2.trace: Read-only file system (os error 30)\n";
        assert_eq!(
            trace_not_created(merged),
            Some("cannot create /r/i3/rank-2.trace: Read-only file system (os error 30)")
        );
        assert_eq!(
            trace_not_created("sig 1: 0<0\nmbhybrid runtime: stopped\n"),
            None
        );
    }
}
