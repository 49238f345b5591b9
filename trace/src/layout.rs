//! Where a verification run keeps its files.
//!
//! ```text
//! RUN_ROOT/                    --run-dir, default ./.mbhybrid/runs
//!   RUN_ID/                    one `verify` (or `audit-barriers`) invocation
//!     manifest.json            what was run and how (for `mbhybrid replay`)
//!     i1/                      interleaving 1 (the free first run)
//!       rank-0.trace ...       rank traces (see `rank_trace`)
//!       rank-0.stderr ...      each rank's standard error after MPI_Init
//!       launcher.stdout        the launcher's standard output (the program's)
//!       launcher.stderr        the launcher's own standard error
//!       runtime.json           clocks, buffering, forced matches of this run
//!       replay.json            every wildcard match of this run, for `replay`
//!       work/CWD_NAME/         the run's working directory: links to the
//!                              user's entries, and the files the run wrote
//!     i2/ ...
//! ```
//!
//! The runtime learns its interleaving directory from [`ENV_TRACE_DIR`],
//! which `verify` sets for the launched job. It is an internal channel
//! between the CLI and the runtime, not a user setting.

use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// Environment variable naming the interleaving directory for the runtime.
pub const ENV_TRACE_DIR: &str = "MBHYBRID_TRACE_DIR";

/// Environment variable naming the process id of the `mbhybrid` that
/// launched the job: each rank's runtime ends itself when that process is
/// gone, so a killed `verify` leaves no job behind.
pub const ENV_WATCH_PID: &str = "MBHYBRID_WATCH_PID";

/// Environment variable naming the abstract Unix socket each rank's
/// runtime connects to in `MPI_Init` and never writes to: the `mbhybrid`
/// that launched the job learns the order in which ranks died from the
/// order their connections close, and a rank learns that `mbhybrid` is
/// gone when its connection does, and no rank outlives a killed `verify`.
pub const ENV_DEATH_SOCKET: &str = "MBHYBRID_DEATH_SOCKET";

/// Environment variable set (to `1`) when the `mbhybrid` that launched
/// the job watches it with a deadlock monitor that releases failed ranks:
/// a rank that fails then waits in the runtime, marked in its trace header
/// ([`crate::rank_trace::RawHeader::held`]), until the other ranks are
/// blocked or ended, so the launcher does not kill them before they record
/// the sends they make without the failed rank (a rank killed too early
/// hides a sender from the search).
pub const ENV_HOLD_FAILED: &str = "MBHYBRID_HOLD_FAILED";

/// The default run root, relative to the working directory.
pub const DEFAULT_RUN_ROOT: &str = ".mbhybrid/runs";

/// The directory of one interleaving.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InterleavingDir {
    /// The directory.
    pub path: PathBuf,
}

impl InterleavingDir {
    /// Interleaving `n` (1-based) of run directory `run`.
    pub fn new(run: &Path, n: u32) -> Self {
        InterleavingDir {
            path: run.join(format!("i{n}")),
        }
    }

    /// The trace file of `rank`.
    pub fn trace(&self, rank: i32) -> PathBuf {
        self.path.join(trace_file_name(rank))
    }

    /// The standard error file of `rank`.
    pub fn stderr(&self, rank: i32) -> PathBuf {
        self.path.join(format!("rank-{rank}.stderr"))
    }

    /// Where the run's working directory is made (`mbh_launch::workdir`).
    pub fn work(&self) -> PathBuf {
        self.path.join("work")
    }

    /// The launcher's standard output.
    pub fn launcher_stdout(&self) -> PathBuf {
        self.path.join("launcher.stdout")
    }

    /// The launcher's standard error.
    pub fn launcher_stderr(&self) -> PathBuf {
        self.path.join("launcher.stderr")
    }

    /// The runtime configuration of this run (clocks, buffering, forced
    /// matches): see [`crate::config`].
    pub fn runtime_config(&self) -> PathBuf {
        crate::config::RuntimeConfig::path(&self.path)
    }

    /// Where process `pid` notes an MPI call it made before `MPI_Init`
    /// ([`BeforeInitCall`]).
    pub fn before_init(&self, pid: u32) -> PathBuf {
        self.path.join(format!("before-init-{pid}.txt"))
    }

    /// Every call noted before `MPI_Init` ([`InterleavingDir::before_init`]).
    pub fn calls_before_init(&self) -> Vec<BeforeInitCall> {
        let Ok(entries) = std::fs::read_dir(&self.path) else {
            return Vec::new();
        };
        let mut calls: Vec<BeforeInitCall> = entries
            .flatten()
            .filter(|e| e.file_name().to_string_lossy().starts_with("before-init-"))
            .filter_map(|e| std::fs::read_to_string(e.path()).ok())
            .filter_map(|text| BeforeInitCall::parse(&text))
            .collect();
        calls.sort_by_key(|c| c.rank);
        calls
    }

    /// Where process `pid` notes that two of its threads were in MPI at
    /// once ([`ThreadOverlap`]).
    pub fn thread_overlap(&self, pid: u32) -> PathBuf {
        self.path.join(format!("thread-overlap-{pid}.txt"))
    }

    /// Every overlap noted ([`InterleavingDir::thread_overlap`]), by rank.
    pub fn thread_overlaps(&self) -> Vec<ThreadOverlap> {
        let Ok(entries) = std::fs::read_dir(&self.path) else {
            return Vec::new();
        };
        let mut found: Vec<ThreadOverlap> = entries
            .flatten()
            .filter(|e| {
                e.file_name()
                    .to_string_lossy()
                    .starts_with("thread-overlap-")
            })
            .filter_map(|e| std::fs::read_to_string(e.path()).ok())
            .filter_map(|text| ThreadOverlap::parse(&text))
            .collect();
        found.sort_by_key(|o| o.rank);
        found
    }

    /// The forced matches that replay this interleaving exactly: every
    /// wildcard event of the run, forced to the sender it took.
    pub fn replay_config(&self) -> PathBuf {
        self.path.join("replay.json")
    }
}

/// An MPI call a process made before `MPI_Init`, which the runtime notes
/// in the interleaving directory (there is no trace yet): one line, `RANK
/// SITE CALL`, the rank as the launcher's environment gives it (-1 when it
/// does not).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BeforeInitCall {
    /// The rank, -1 when unknown.
    pub rank: i32,
    /// The call's site id (0: unknown).
    pub site: u32,
    /// The MPI function.
    pub call: String,
}

impl BeforeInitCall {
    /// The file's one line.
    pub fn to_line(&self) -> String {
        format!("{} {} {}\n", self.rank, self.site, self.call)
    }

    /// Reads [`BeforeInitCall::to_line`]'s form.
    pub fn parse(text: &str) -> Option<BeforeInitCall> {
        let mut words = text.split_whitespace();
        let rank = words.next()?.parse().ok()?;
        let site = words.next()?.parse().ok()?;
        let call = words.next()?.to_string();
        call.starts_with("MPI_")
            .then_some(BeforeInitCall { rank, site, call })
    }
}

/// A thread of a process called MPI while another thread of it was inside
/// an MPI call (the runtime's export prologue saw it, `runtime/src/state.rs`),
/// at a thread level that forbids it (`MPI_THREAD_SERIALIZED` or lower,
/// MPI-4.0 §11.6). The runtime notes it in the interleaving directory,
/// not the trace (the other thread, inside its call, is the trace's one
/// writer), then stops the job with [`crate::op::THREAD_OVERLAP_EXIT`].
/// One line: `RANK LEVEL SITE THREAD ON_MAIN CALL OTHER_SITE OTHER_ON_MAIN
/// OTHER_CALL` (flags 0/1).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ThreadOverlap {
    /// The rank.
    pub rank: i32,
    /// The level the program was given: 0 `SINGLE`, 1 `FUNNELED`, 2
    /// `SERIALIZED`.
    pub level: i32,
    /// The second call's site (0: unknown).
    pub site: u32,
    /// The second caller's thread id (Linux's `gettid`).
    pub thread: i32,
    /// Whether the second caller is the thread that initialised MPI.
    pub on_main: bool,
    /// The second call's MPI function.
    pub call: String,
    /// The site of the call the other thread was inside (0: unknown).
    pub other_site: u32,
    /// Whether that thread is the one that initialised MPI.
    pub other_on_main: bool,
    /// The MPI function it was inside.
    pub other_call: String,
}

impl ThreadOverlap {
    /// The file's one line.
    pub fn to_line(&self) -> String {
        format!(
            "{} {} {} {} {} {} {} {} {}\n",
            self.rank,
            self.level,
            self.site,
            self.thread,
            u8::from(self.on_main),
            self.call,
            self.other_site,
            u8::from(self.other_on_main),
            self.other_call
        )
    }

    /// Reads [`ThreadOverlap::to_line`]'s form.
    pub fn parse(text: &str) -> Option<ThreadOverlap> {
        let mut words = text.split_whitespace();
        let mut next = || words.next();
        let rank = next()?.parse().ok()?;
        let level = next()?.parse().ok()?;
        let site = next()?.parse().ok()?;
        let thread = next()?.parse().ok()?;
        let on_main = next()? == "1";
        let call = next()?.to_string();
        let other_site = next()?.parse().ok()?;
        let other_on_main = next()? == "1";
        let other_call = next()?.to_string();
        (call.starts_with("MPI_") && other_call.starts_with("MPI_")).then_some(ThreadOverlap {
            rank,
            level,
            site,
            thread,
            on_main,
            call,
            other_site,
            other_on_main,
            other_call,
        })
    }
}

/// The name of `rank`'s trace file inside an interleaving directory.
pub fn trace_file_name(rank: i32) -> String {
    format!("rank-{rank}.trace")
}

/// What a run was, so that `mbhybrid replay RUN_ID` can run it again.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RunManifest {
    /// The run id (the directory's name).
    pub run_id: String,
    /// The executable, absolute.
    pub program: PathBuf,
    /// Its arguments.
    pub args: Vec<String>,
    /// Number of processes.
    pub np: u32,
    /// The launcher template (with `{np}`).
    pub launcher: String,
    /// Environment the launcher was given besides mbhybrid's own (Open
    /// MPI's permission to oversubscribe, ...).
    #[serde(default)]
    pub launcher_env: Vec<(String, String)>,
    /// The working directory the job ran in.
    pub cwd: PathBuf,
    /// The runtime library preloaded, when the program was not built by
    /// `mbhybrid build`.
    pub preload: Option<PathBuf>,
    /// Seconds one run may take.
    #[serde(default = "default_timeout")]
    pub timeout: u64,
}

fn default_timeout() -> u64 {
    120
}

impl RunManifest {
    /// The manifest's path in run directory `run`.
    pub fn path(run: &Path) -> PathBuf {
        run.join("manifest.json")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_call_before_init_reads_back() {
        let call = BeforeInitCall {
            rank: 2,
            site: 7,
            call: "MPI_Send".into(),
        };
        assert_eq!(BeforeInitCall::parse(&call.to_line()), Some(call));
        assert_eq!(BeforeInitCall::parse("2 7 free"), None);
        assert_eq!(BeforeInitCall::parse(""), None);
    }

    #[test]
    fn a_thread_overlap_reads_back() {
        let overlap = ThreadOverlap {
            rank: 0,
            level: 2,
            site: 12,
            thread: 4242,
            on_main: false,
            call: "MPI_Sendrecv".into(),
            other_site: 12,
            other_on_main: true,
            other_call: "MPI_Recv".into(),
        };
        let dir = tempfile::tempdir().unwrap();
        let idir = InterleavingDir {
            path: dir.path().to_owned(),
        };
        std::fs::write(idir.thread_overlap(7), overlap.to_line()).unwrap();
        assert_eq!(idir.thread_overlaps(), [overlap]);
        assert_eq!(
            ThreadOverlap::parse("0 2 12 4242 0 free 0 1 MPI_Recv"),
            None
        );
        assert_eq!(ThreadOverlap::parse("0 2 12"), None);
    }
}
