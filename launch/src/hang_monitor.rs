//! Watching a running job for deadlock (DESIGN.md, "Deadlocks"): when every
//! live rank is blocked in an MPI call and two consecutive snapshots of
//! their traces show no progress, the wait-for graph of `mbh-analysis`
//! decides; only a deadlock it confirms stops the job. A slow run is never
//! called a deadlock: it runs on until it ends or `--timeout`.
//!
//! A deadlock that only follows from a rank that failed (crashed, aborted,
//! exited without `MPI_Finalize`) is the launcher's to end: every MPI
//! launcher stops the rest of the job when a rank fails, and the ranks it
//! kills are reported `killed`, not `deadlocked`. The monitor gives it
//! [`LAUNCHER_GRACE`] to do so before stopping the job itself. MPICH's
//! Hydra kills the others within milliseconds, Open MPI's `mpiexec` only
//! about a second later (it sends `SIGCONT`, then `SIGTERM` a second
//! after), which two snapshots [`crate::job::POLL_INTERVAL`] apart beat.
//!
//! Before that, a rank that failed waits in the runtime
//! ([`mbh_trace::layout::ENV_HOLD_FAILED`]) and the monitor releases it
//! only when the others can do no more without it: every other rank ended,
//! or blocked in a deadlock the graph confirms, or [`HOLD_LIMIT`] passed.
//! The launcher's kill then takes nothing the run could still have
//! recorded, so no send that does not need the failed rank is hidden from
//! the search.

use crate::job::Watch;
use mbh_analysis::deadlock::Deadlock;
use mbh_trace::layout::InterleavingDir;
use mbh_trace::rank_trace::{RankState, RankTrace, HEADER_SIZE};
use std::io::Read;
use std::time::{Duration, Instant};

/// How long the launcher is given to stop a job whose deadlock follows
/// from a failed rank. Open MPI 4.1's `mpiexec` sends `SIGTERM` to the
/// other ranks a second after one failed, and `SIGKILL` a second later to
/// those that survive it: three seconds cover both, and cost only a run
/// whose launcher does not act.
pub const LAUNCHER_GRACE: Duration = Duration::from_secs(3);

/// The longest a failed rank is held while some other rank still runs
/// outside a confirmed deadlock (computing, or waiting on something the
/// graph cannot decide). Past it the rank is released and ends the job as
/// it would have without the hold; a send a rank would have made later
/// than this is then not recorded.
pub const HOLD_LIMIT: Duration = Duration::from_secs(5);

/// Polled by the launcher loop while the job runs.
pub struct DeadlockMonitor {
    dir: InterleavingDir,
    np: u32,
    previous: Option<Vec<Option<RankTrace>>>,
    confirmed: Option<Deadlock>,
    /// When a deadlock that follows from a failed rank was first seen: the
    /// launcher is expected to stop the job by [`LAUNCHER_GRACE`] after.
    left_to_launcher: Option<Instant>,
    /// When a deadlock that holds a polling rank was first seen, unchanged
    /// since ([`mbh_analysis::deadlock::POLLING_GRACE`]).
    polling_since: Option<Instant>,
    /// When a held failed rank was first seen ([`HOLD_LIMIT`]).
    held_since: Option<Instant>,
}

impl DeadlockMonitor {
    /// A monitor of the ranks writing traces into `dir`.
    pub fn new(dir: &InterleavingDir, np: u32) -> Self {
        DeadlockMonitor {
            dir: dir.clone(),
            np,
            previous: None,
            confirmed: None,
            left_to_launcher: None,
            polling_since: None,
            held_since: None,
        }
    }

    /// The deadlock that stopped the job, if one did. `None` when the
    /// launcher ended the job first, as it does after a rank fails: that
    /// run crashed, and its ranks were killed, not deadlocked.
    pub fn confirmed(&self) -> Option<&Deadlock> {
        self.confirmed.as_ref()
    }

    /// Looks at the job once.
    pub fn poll(&mut self) -> Watch {
        if self.confirmed.is_some() {
            return Watch::Stop;
        }
        // A process called MPI before `MPI_Init`: MPI aborts it, and the
        // others wait in `MPI_Init` for it forever. The note is
        // the finding; the job has nothing more to show.
        if !self.dir.calls_before_init().is_empty() {
            return Watch::Stop;
        }
        // Cheap first: headers only. A rank computing outside MPI, or not
        // started, means no deadlock now.
        let headers: Vec<Option<RankTrace>> =
            (0..self.np as i32).map(|rank| self.header(rank)).collect();
        let held = held_ranks(&headers);
        if self.release_when_nothing_is_left(&held, &headers) {
            return Watch::Continue;
        }
        if !headers
            .iter()
            .all(|h| h.as_ref().is_some_and(blocked_or_ended))
        {
            self.previous = None;
            self.polling_since = None;
            return Watch::Continue;
        }
        let snapshot: Vec<Option<RankTrace>> = (0..self.np as i32)
            .map(|rank| RankTrace::read(&self.dir.trace(rank)).ok())
            .collect();
        let stable = self
            .previous
            .as_ref()
            .is_some_and(|before| mbh_analysis::no_progress(before, &snapshot));
        if !stable {
            self.polling_since = None;
        }
        if stable {
            if let Some(deadlock) = mbh_analysis::find_deadlock(&snapshot) {
                if deadlock.blocked.iter().any(|b| b.polled.is_some()) {
                    let since = *self.polling_since.get_or_insert_with(Instant::now);
                    if since.elapsed() < mbh_analysis::deadlock::POLLING_GRACE {
                        self.previous = Some(snapshot);
                        return Watch::Continue;
                    }
                }
                // Every rank that lives is stuck: the held ones have
                // nothing left to wait for.
                if !held.is_empty() {
                    self.release(&held);
                    return Watch::Continue;
                }
                if deadlock.explained_by_failed_ranks() {
                    let since = *self.left_to_launcher.get_or_insert_with(Instant::now);
                    if since.elapsed() < LAUNCHER_GRACE {
                        self.previous = Some(snapshot);
                        return Watch::Continue;
                    }
                }
                self.confirmed = Some(deadlock);
                return Watch::Stop;
            }
        }
        self.previous = Some(snapshot);
        Watch::Continue
    }

    /// Releases the held ranks when no other rank can still record
    /// anything (all ended), or when they were held [`HOLD_LIMIT`]; true
    /// when it released them.
    fn release_when_nothing_is_left(
        &mut self,
        held: &[i32],
        headers: &[Option<RankTrace>],
    ) -> bool {
        if held.is_empty() {
            self.held_since = None;
            return false;
        }
        let since = *self.held_since.get_or_insert_with(Instant::now);
        let others_ended = headers.iter().all(|h| {
            h.as_ref()
                .is_some_and(|t| t.end.state != RankState::Running)
        });
        if others_ended || since.elapsed() >= HOLD_LIMIT {
            self.release(held);
            return true;
        }
        false
    }

    /// Lets the held ranks end; the snapshots taken while they were held
    /// are stale once the launcher reacts.
    fn release(&mut self, held: &[i32]) {
        for &rank in held {
            // A rank that cannot be released waits out its own limit.
            let _ = mbh_trace::rank_trace::release_held(&self.dir.trace(rank));
        }
        self.previous = None;
        self.polling_since = None;
    }

    /// The trace header of `rank` alone (no records), if it is readable.
    fn header(&self, rank: i32) -> Option<RankTrace> {
        let mut bytes = vec![0u8; HEADER_SIZE];
        let n = std::fs::File::open(self.dir.trace(rank))
            .and_then(|mut f| f.read(&mut bytes))
            .ok()?;
        RankTrace::parse(&bytes[..n]).ok()
    }
}

/// Whether a rank's header shows it ended, in a blocking call, or in a
/// poll series long enough to count as blocked.
fn blocked_or_ended(header: &RankTrace) -> bool {
    header.end.state != RankState::Running
        || header.blocking.is_some()
        || header
            .polling
            .as_ref()
            .is_some_and(|p| p.polls >= mbh_analysis::deadlock::POLLS_TO_BE_STUCK)
}

/// The ranks that failed and wait to be released.
fn held_ranks(headers: &[Option<RankTrace>]) -> Vec<i32> {
    headers
        .iter()
        .flatten()
        .filter(|h| h.held)
        .map(|h| h.rank)
        .collect()
}
