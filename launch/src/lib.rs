//! `mbh-launch`: one run of an MPI job under the mbhybrid runtime, from the
//! launcher's command line to the processes' end.
//!
//! It owns:
//!
//! - [`job`]: the launcher template ([`Launcher`]), starting the job in a
//!   process group of its own, and stopping all of it at a timeout or when
//!   a monitor says so ([`run`]);
//! - [`hang_monitor`]: watching the running job's traces until every live
//!   rank is blocked, and stopping it only for a deadlock the wait-for
//!   graph of `mbh-analysis` confirms;
//! - [`deaths`]: which rank of the job died first, from the order in which
//!   the ranks' sockets close;
//! - [`workdir`]: the working folder of one run, mirroring the user's;
//! - [`termination`]: what SIGINT, SIGTERM (a batch system's time limit)
//!   and their kin do to the running jobs, and whether one asked the
//!   command to stop and report.
//!
//! It must not judge a run (that is `mbh-verdict`'s, from the traces the
//! job leaves), read the command line, or print.
//!
//! # Limitations
//!
//! Processes are started and stopped on this machine: a launcher that
//! starts ranks elsewhere (`srun`) is stopped through the launcher, which
//! must pass the signal on.

#![deny(missing_docs)]

pub mod deaths;
pub mod hang_monitor;
pub mod job;
mod leftovers;
pub mod termination;
pub mod workdir;

pub use job::{run, Job, Launcher, LauncherError, Watch, POLL_INTERVAL};
