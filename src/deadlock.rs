//! Watching a running job for deadlock (DESIGN.md, "Deadlocks"): when every
//! live rank is blocked in an MPI call and two consecutive snapshots of
//! their traces show no progress, the wait-for graph of `mbh-bounding`
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
//! after), which two snapshots [`crate::launch::POLL_INTERVAL`] apart beat.
//!
//! Before that, a rank that failed waits in the runtime
//! ([`mbh_trace::layout::ENV_HOLD_FAILED`]) and the monitor releases it
//! only when the others can do no more without it: every other rank ended,
//! or blocked in a deadlock the graph confirms, or [`HOLD_LIMIT`] passed.
//! The launcher's kill then takes nothing the run could still have
//! recorded, so no send that does not need the failed rank is hidden from
//! the search (issue 11).

use crate::launch::Watch;
use crate::outcome::site_location;
use crate::session::Session;
use mbh_bounding::deadlock::{BlockedRank, Deadlock, PendingCollective, WaitFor};
use mbh_trace::layout::InterleavingDir;
use mbh_trace::rank_trace::{RankState, RankTrace, HEADER_SIZE};
use mbh_trace::{Finding, FindingKind, Role, Severity};
use std::io::Read;
use std::time::{Duration, Instant};

/// How long the launcher is given to stop a job whose deadlock follows
/// from a failed rank. Open MPI 4.1's `mpiexec` sends `SIGTERM` to the
/// other ranks a second after one failed, and `SIGKILL` a second later to
/// those that survive it: three seconds cover both, and cost only a run
/// whose launcher does not act.
pub const LAUNCHER_GRACE: Duration = Duration::from_secs(3);

/// How long a deadlock that holds a polling rank must stay unchanged
/// before it stops the job: a polling loop can only leave by itself (on a
/// count or a clock), and the graph cannot see such an exit coming, so
/// the series must outlast [`mbh_bounding::deadlock::POLLS_TO_BE_STUCK`]
/// polls and this too. Loops that give up after a second or more, while
/// every other rank is blocked, are the graph's one blind spot.
pub const POLLING_GRACE: Duration = Duration::from_secs(1);

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
    /// since ([`POLLING_GRACE`]).
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
        // others wait in `MPI_Init` for it forever (issue 18). The note is
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
            .is_some_and(|before| mbh_bounding::no_progress(before, &snapshot));
        if !stable {
            self.polling_since = None;
        }
        if stable {
            if let Some(deadlock) = mbh_bounding::find_deadlock(&snapshot) {
                if deadlock.blocked.iter().any(|b| b.polled.is_some()) {
                    let since = *self.polling_since.get_or_insert_with(Instant::now);
                    if since.elapsed() < POLLING_GRACE {
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
                if explained_by_failed_ranks(&deadlock) {
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
            .is_some_and(|p| p.polls >= mbh_bounding::deadlock::POLLS_TO_BE_STUCK)
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

/// The findings a confirmed deadlock makes in interleaving `n`: a
/// `collective-mismatch` when ranks wait in different collectives, a
/// `deadlock` otherwise, and none when it only follows from a rank that
/// crashed or aborted (that rank's own finding explains the run).
pub fn findings(deadlock: &Deadlock, session: &Session, n: u32) -> Vec<Finding> {
    if !deadlock.collective_mismatches.is_empty() {
        return deadlock
            .collective_mismatches
            .iter()
            .map(|m| mismatch_finding(m, session, n))
            .collect();
    }
    if explained_by_failed_ranks(deadlock) {
        return Vec::new();
    }
    let ranks = deadlock.ranks();
    let message = if deadlock.cycle.len() > 1 {
        let cycle: Vec<String> = deadlock
            .cycle
            .iter()
            .chain(deadlock.cycle.first())
            .map(|r| format!("rank {r}"))
            .collect();
        format!(
            "deadlock: {} wait for each other ({})",
            list_ranks(&ranks),
            cycle.join(" → ")
        )
    } else if !deadlock.dead_ranks.is_empty() {
        format!(
            "deadlock: {} wait for messages from ranks that already finished",
            list_ranks(&ranks)
        )
    } else {
        format!(
            "deadlock: {} are blocked and none can proceed",
            list_ranks(&ranks)
        )
    };
    let mut finding = Finding::new(FindingKind::Deadlock, Severity::Error, message);
    finding.interleaving = n;
    finding.ranks = ranks;
    // The ranks of the cycle first, so the primary location is on it.
    let mut blocked: Vec<&BlockedRank> = deadlock.blocked.iter().collect();
    blocked.sort_by_key(|b| (!deadlock.cycle.contains(&b.rank), b.rank));
    for (i, rank) in blocked.iter().enumerate() {
        let mut label = match rank.polled {
            Some((polled, polls)) => format!(
                "polling `{}` ({polls} times in a row without success, no other MPI call) {}",
                polled.mpi_name(),
                describe_wait(&rank.waits_for)
            ),
            None => format!(
                "blocked in `{}` {}",
                rank.kind.mpi_name(),
                describe_wait(&rank.waits_for)
            ),
        };
        if let Some(pending) = &rank.collective {
            label.push_str(&format!(
                ", which {} not posted {}",
                if rank.waits_for.ranks().len() == 1 {
                    "has"
                } else {
                    "have"
                },
                describe_collective(pending, session.sites.as_ref())
            ));
        }
        let role = if i == 0 {
            Role::Primary
        } else {
            Role::Secondary
        };
        match session.sites.as_ref().and_then(|s| s.get(rank.site)) {
            Some(site) => finding
                .locations
                .push(site_location(site, rank.rank, role, &label)),
            None => finding.notes.push(label),
        }
        // A wait on a nonblocking collective: the call that posted it is
        // the other half of what the rank is stuck on (seed 003: the
        // request's node is the collective's).
        if let Some(pending) = rank.collective.filter(|p| p.call.op_index != rank.op_index) {
            let label = format!(
                "`{}` posted here: {}",
                pending.call.kind.mpi_name(),
                describe_collective(&pending, session.sites.as_ref())
            );
            match session
                .sites
                .as_ref()
                .and_then(|s| s.get(pending.call.site))
            {
                Some(site) => {
                    finding
                        .locations
                        .push(site_location(site, rank.rank, Role::Secondary, &label))
                }
                None => finding.notes.push(format!("rank {}: {label}", rank.rank)),
            }
        }
    }
    if blocked.iter().any(|b| b.polled.is_some()) {
        finding.notes.push(format!(
            "a polling rank counts as blocked in the call its poll stands for (`MPI_Test` as `MPI_Wait`, `MPI_Iprobe` as `MPI_Probe`) once it has polled {} times without success for {} s while every other rank is blocked; a loop that would give up by itself later is the one case this is not a deadlock",
            mbh_bounding::deadlock::POLLS_TO_BE_STUCK,
            POLLING_GRACE.as_secs()
        ));
    }
    for dead in &deadlock.dead_ranks {
        finding.notes.push(
            format!("rank {} had already ended ({:?})", dead.rank, dead.state).to_lowercase(),
        );
    }
    finding.help = Some(
        if deadlock.blocked.iter().any(|b| b.collective.is_some()) {
            "a collective, and a wait on a nonblocking one, returns only once every member of the communicator posted it: every rank must post the same collectives on each communicator in the same order, and post them before it blocks on what another rank does after them"
        } else {
            "a blocking call returns only when its partner acts: reorder the calls so one side sends first, or use `MPI_Sendrecv` or nonblocking calls completed together with `MPI_Waitall`"
        }
        .into(),
    );
    vec![finding]
}

/// Whether `deadlock` only follows from ranks that ended without
/// finalizing: their own findings (crash, abort, exit) explain the run, and
/// the launcher stops the job because of them.
fn explained_by_failed_ranks(deadlock: &Deadlock) -> bool {
    deadlock.caused_by_dead_ranks && deadlock.dead_ranks.iter().any(|d| !d.finalized)
}

/// The `buffering-hazard` finding of a run that completed only because MPI
/// buffered standard-mode sends: each stuck send at the line that issued it.
pub fn buffering_finding(
    hazard: &mbh_bounding::BufferingHazard,
    traces: &[RankTrace],
    session: &Session,
    n: u32,
) -> Finding {
    let cycle: Vec<String> = hazard
        .cycle
        .iter()
        .chain(hazard.cycle.first())
        .map(|r| format!("rank {r}"))
        .collect();
    let ranks = hazard.ranks();
    let mut in_cycle = hazard.cycle.clone();
    in_cycle.sort_unstable();
    let (who, verb) = match in_cycle.as_slice() {
        [] => (list_ranks(&ranks), "complete"),
        [_] => (list_ranks(&in_cycle), "completes"),
        _ => (list_ranks(&in_cycle), "complete"),
    };
    let mut finding = Finding::new(
        FindingKind::BufferingHazard,
        Severity::Warning,
        format!(
            "{who} {verb} only because MPI buffered sends: without buffering this interleaving deadlocks ({})",
            cycle.join(" → ")
        ),
    );
    finding.interleaving = n;
    finding.ranks = ranks;
    for (i, stuck) in hazard.sends().enumerate() {
        // The line that issued the send (an Isend's, not its Wait's).
        let issued = stuck
            .origin
            .and_then(|origin| {
                traces
                    .iter()
                    .find(|t| t.rank == stuck.rank)?
                    .ops
                    .get(origin as usize)
            })
            .map_or(stuck.site, |op| op.site);
        // A rank named once, though several of its receives are awaited.
        let mut waits: Vec<String> = Vec::new();
        for w in &stuck.waits_for {
            let rank = format!("rank {}", w.rank);
            if !waits.contains(&rank) {
                waits.push(rank);
            }
        }
        let label = format!(
            "this send completes only once {} posts its receive",
            waits.join(" and ")
        );
        let role = if i == 0 {
            Role::Primary
        } else {
            Role::Secondary
        };
        match session.sites.as_ref().and_then(|s| s.get(issued)) {
            Some(site) => finding
                .locations
                .push(site_location(site, stuck.rank, role, &label)),
            None => finding.notes.push(format!("rank {}: {label}", stuck.rank)),
        }
    }
    finding
        .notes
        .push("`--buffering zero` makes the deadlock happen".into());
    finding.help = Some(
        "post the receives before the sends (`MPI_Irecv` first), or exchange with `MPI_Sendrecv`: MPI does not promise to buffer standard-mode sends"
            .into(),
    );
    finding
}

fn mismatch_finding(
    m: &mbh_bounding::deadlock::CollectiveMismatch,
    session: &Session,
    n: u32,
) -> Finding {
    let calls: Vec<String> = m
        .calls
        .iter()
        .map(|c| format!("rank {} `{}`", c.rank, c.kind.mpi_name()))
        .collect();
    let mut finding = Finding::new(
        FindingKind::CollectiveMismatch,
        Severity::Error,
        format!(
            "ranks call different collectives at the same point: {}",
            calls.join(", ")
        ),
    );
    finding.interleaving = n;
    finding.ranks = m.calls.iter().map(|c| c.rank).collect();
    for (i, call) in m.calls.iter().enumerate() {
        let label = format!(
            "collective number {} here is `{}`",
            m.sequence + 1,
            call.kind.mpi_name()
        );
        let role = if i == 0 {
            Role::Primary
        } else {
            Role::Secondary
        };
        match session.sites.as_ref().and_then(|s| s.get(call.site)) {
            Some(site) => finding
                .locations
                .push(site_location(site, call.rank, role, &label)),
            None => finding.notes.push(label),
        }
    }
    finding.help = Some(
        "every rank of a communicator must call the same collectives in the same order".into(),
    );
    finding
}

/// `collective number 2 on `MPI_COMM_WORLD``, the instance a rank waits on;
/// another communicator is named by the call that made it, where the
/// runtime recorded it (its `CommId` record's site).
fn describe_collective(
    pending: &PendingCollective,
    sites: Option<&mbh_trace::site::SiteTable>,
) -> String {
    let made = pending
        .made_at
        .and_then(|site| sites?.get(site))
        .filter(|site| site.line > 0);
    let communicator = match made {
        _ if pending.world => "`MPI_COMM_WORLD`".to_string(),
        Some(site) => format!(
            "the communicator made by `{}` at {}:{}",
            site.call, site.file, site.line
        ),
        None => "its communicator".to_string(),
    };
    format!(
        "collective number {} on {communicator}",
        pending.sequence + 1
    )
}

fn describe_wait(wait: &WaitFor) -> String {
    match wait {
        WaitFor::All(ranks) if ranks.is_empty() => "and nothing can complete it".into(),
        WaitFor::All(ranks) => format!("waiting for {}", list_ranks(ranks)),
        WaitFor::Any(ranks) => format!("waiting for any of {}", list_ranks(ranks)),
    }
}

fn list_ranks(ranks: &[i32]) -> String {
    match ranks {
        [one] => format!("rank {one}"),
        _ => format!(
            "ranks {}",
            ranks
                .iter()
                .map(i32::to_string)
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn waits_read_as_words() {
        assert_eq!(describe_wait(&WaitFor::All(vec![1])), "waiting for rank 1");
        assert_eq!(
            describe_wait(&WaitFor::Any(vec![0, 2])),
            "waiting for any of ranks 0, 2"
        );
        assert_eq!(list_ranks(&[3]), "rank 3");
    }
}
