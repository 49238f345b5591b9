//! Errors the user can cause or fix: each renders as one paragraph that says
//! what happened and what to do, and makes mbhybrid exit with status 2.

use std::path::PathBuf;

/// A failure of the user's input or environment (exit status 2).
#[derive(Debug, thiserror::Error)]
pub enum UsageError {
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
    /// A verification session failed (the program, the run directory, the
    /// launcher, a run with nothing to judge).
    #[error(transparent)]
    Session(#[from] mbh_session::SessionError),
}
