//! The findings a deadlock confirmed by the wait-for graph of
//! `mbh-analysis` makes (`deadlock`, `collective-mismatch`), and the
//! `buffering-hazard` of a run that completed only because MPI buffered
//! sends: wait-for edges and cycles turned into located diagnostics.
//! Watching the job for the deadlock is `mbh-launch`'s (`hang_monitor.rs`).

use crate::place::site_location;
use mbh_analysis::deadlock::{BlockedRank, Deadlock, PendingCollective, WaitFor};
use mbh_trace::rank_trace::RankTrace;
use mbh_trace::SiteTable;
use mbh_trace::{Finding, FindingKind, Role, Severity};

/// The findings a confirmed deadlock makes in interleaving `n`: a
/// `collective-mismatch` when ranks wait in different collectives, a
/// `deadlock` otherwise, and none when it only follows from a rank that
/// crashed or aborted (that rank's own finding explains the run).
pub fn findings(deadlock: &Deadlock, sites: Option<&SiteTable>, n: u32) -> Vec<Finding> {
    if !deadlock.collective_mismatches.is_empty() {
        return deadlock
            .collective_mismatches
            .iter()
            .map(|m| mismatch_finding(m, sites, n))
            .collect();
    }
    if deadlock.explained_by_failed_ranks() {
        return Vec::new();
    }
    let ranks = deadlock.ranks();
    let message = message(deadlock, &ranks);
    let mut finding = Finding::new(FindingKind::Deadlock, Severity::Error, message);
    finding.interleaving = n;
    finding.ranks = ranks;
    // The ranks of the cycle first, so the primary location is on it.
    let mut blocked: Vec<&BlockedRank> = deadlock.blocked.iter().collect();
    blocked.sort_by_key(|b| (!deadlock.cycle.contains(&b.rank), b.rank));
    for (i, rank) in blocked.iter().enumerate() {
        let role = if i == 0 {
            Role::Primary
        } else {
            Role::Secondary
        };
        push_blocked(&mut finding, rank, role, sites);
    }
    if blocked.iter().any(|b| b.polled.is_some()) {
        finding.notes.push(format!(
            "a polling rank counts as blocked in the call its poll stands for (`MPI_Test` as `MPI_Wait`, `MPI_Iprobe` as `MPI_Probe`) once it has polled {} times without success for {} s while every other rank is blocked; a loop that would give up by itself later is the one case this is not a deadlock",
            mbh_analysis::deadlock::POLLS_TO_BE_STUCK,
            mbh_analysis::deadlock::POLLING_GRACE.as_secs()
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

/// The deadlock's message: a cycle, ranks waiting for ranks that ended,
/// or ranks that are all blocked.
fn message(deadlock: &Deadlock, ranks: &[i32]) -> String {
    if deadlock.cycle.len() > 1 {
        let cycle: Vec<String> = deadlock
            .cycle
            .iter()
            .chain(deadlock.cycle.first())
            .map(|r| format!("rank {r}"))
            .collect();
        format!(
            "deadlock: {} wait for each other ({})",
            list_ranks(ranks),
            cycle.join(" → ")
        )
    } else if !deadlock.dead_ranks.is_empty() {
        format!(
            "deadlock: {} wait for messages from ranks that already finished",
            list_ranks(ranks)
        )
    } else {
        format!(
            "deadlock: {} are blocked and none can proceed",
            list_ranks(ranks)
        )
    }
}

/// Where a blocked rank waits, and the calls that made what it waits on.
fn push_blocked(finding: &mut Finding, rank: &BlockedRank, role: Role, sites: Option<&SiteTable>) {
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
            describe_collective(pending, sites)
        ));
    }
    match sites.and_then(|s| s.get(rank.site)) {
        Some(site) => finding
            .locations
            .push(site_location(site, rank.rank, role, &label)),
        None => finding.notes.push(label),
    }
    // A wait on a point-to-point request: the line that made the
    // request is the other half of what the rank is stuck on (for a
    // `Waitall`, the one of its requests that cannot complete).
    if let Some(made) = rank.request.filter(|_| rank.collective.is_none()) {
        let label = format!(
            "`{}` here made the request `{}` is stuck on",
            made.kind.mpi_name(),
            rank.kind.mpi_name()
        );
        match sites.and_then(|s| s.get(made.site)) {
            Some(site) => {
                finding
                    .locations
                    .push(site_location(site, rank.rank, Role::Secondary, &label))
            }
            None => finding.notes.push(format!("rank {}: {label}", rank.rank)),
        }
    }
    // A wait on a nonblocking collective: the call that posted it is
    // the other half of what the rank is stuck on (seed 003: the
    // request's node is the collective's).
    if let Some(pending) = rank.collective.filter(|p| p.call.op_index != rank.op_index) {
        let label = format!(
            "`{}` posted here: {}",
            pending.call.kind.mpi_name(),
            describe_collective(&pending, sites)
        );
        match sites.and_then(|s| s.get(pending.call.site)) {
            Some(site) => {
                finding
                    .locations
                    .push(site_location(site, rank.rank, Role::Secondary, &label))
            }
            None => finding.notes.push(format!("rank {}: {label}", rank.rank)),
        }
    }
}

/// The `buffering-hazard` finding of a run that completed only because MPI
/// buffered standard-mode sends: each stuck send at the line that issued it.
pub fn buffering_finding(
    hazard: &mbh_analysis::BufferingHazard,
    traces: &[RankTrace],
    sites: Option<&SiteTable>,
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
        match sites.and_then(|s| s.get(issued)) {
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
    m: &mbh_analysis::deadlock::CollectiveMismatch,
    sites: Option<&SiteTable>,
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
        match sites.and_then(|s| s.get(call.site)) {
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
