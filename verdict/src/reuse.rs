//! `buffer-reuse` findings of the access check (seed 000
//! §2.3.6.3, Fig 2.9; SCENARIOS.md E9): an instrumented load or store
//! touched the buffer of a pending nonblocking operation. The runtime's
//! record ([`mbh_trace::op::LocalCheck::BufferReuse`] with an access
//! [`ReuseFound`]) names the access by its site (a return address the
//! session turned into a line) and the operation by its record.
//!
//! The same bug can also be seen by the packed-send comparison at the
//! completion: [`superseded`] says when that record adds nothing.

use crate::place::site_location;
use mbh_trace::check::{Check, CheckRecord, ReuseThreads};
use mbh_trace::op::ReuseFound;
use mbh_trace::{Finding, FindingKind, RankTrace, Role, Severity, SiteTable};

/// An access that found a buffer in use, as its check recorded it.
#[derive(Debug, Clone, Copy)]
pub struct Access {
    /// The access's site.
    pub site: u32,
    /// What it did to what.
    pub found: ReuseFound,
    /// Its thread and the operation's.
    pub threads: ReuseThreads,
}

/// The finding of a buffer `access` of `trace`'s rank (run
/// `interleaving`) during the operation whose record is
/// `operation_record` ([`Check::BufferReuse`]).
pub fn access_finding(
    sites: Option<&SiteTable>,
    trace: &RankTrace,
    access: Access,
    operation_record: u64,
    interleaving: u32,
) -> Finding {
    let Access {
        site: access_site,
        found,
        threads,
    } = access;
    let rank = trace.rank;
    let site_of = |id: u32| sites.and_then(|s| s.get(id));
    let start = usize::try_from(operation_record)
        .ok()
        .and_then(|at| trace.ops.get(at))
        .filter(|op| op.index == operation_record);
    if let Some(op) = start.filter(|op| op.kind.is_rma_operation()) {
        return crate::rma_reuse::access_finding(
            sites,
            trace,
            access_site,
            found,
            op,
            interleaving,
        );
    }
    let call = start.map_or("the nonblocking call".to_string(), |op| {
        let name = site_of(op.site).map_or(op.kind.mpi_name(), |s| s.call.as_str());
        format!("`{name}`")
    });
    let mut words = Words::of(found);
    if start.is_some_and(|op| op.kind.is_nonblocking_collective()) {
        words.operation = "collective"; // its buffers are read and written at once
    }
    let mut finding = Finding::new(
        FindingKind::BufferReuse,
        Severity::Error,
        format!(
            "rank {rank} {} the buffer of {call} before the {} completed",
            words.verb, words.operation
        ),
    );
    finding.interleaving = interleaving;
    finding.ranks = vec![rank];
    push_access(&mut finding, sites, rank, access_site, found);
    let by_threads = crate::reuse_threads::named(threads, trace.pid);
    if let Some((access_by, _)) = &by_threads {
        if let Some(location) = finding.locations.last_mut() {
            location.label.push_str(&format!(" by {access_by}"));
        }
    }
    if let Some(site) = start.and_then(|op| site_of(op.site)) {
        let mut label = format!("(1) {call} started here");
        if let Some((_, started_by)) = &by_threads {
            label.push_str(&format!(" by {started_by}"));
        }
        finding
            .locations
            .push(site_location(site, rank, Role::Secondary, &label));
    }
    if let Some((access_by, started_by)) = &by_threads {
        finding.notes.push(format!(
            "two threads: {access_by} touched the buffer while the operation {started_by} started was pending"
        ));
    }
    finding.notes.push(words.note.to_string());
    finding.help = Some(words.help.to_string());
    finding
}

/// Adds to `finding` the access of `rank` at site `access` that `found`
/// the buffer in use, as its primary location (a note when its line is
/// unknown).
pub(crate) fn push_access(
    finding: &mut Finding,
    sites: Option<&SiteTable>,
    rank: i32,
    access: u32,
    found: ReuseFound,
) {
    let label = match found {
        ReuseFound::CallReadRecv => "(2) this send reads it".to_string(),
        ReuseFound::CallWroteSend | ReuseFound::CallWroteRecv => {
            "(2) this receive writes it".to_string()
        }
        _ => format!("(2) {} here", words(found).participle),
    };
    match sites.and_then(|s| s.get(access)) {
        Some(site) => {
            let mut location = site_location(site, rank, Role::Primary, &label);
            if !found.is_call() {
                // The site is an access, not an MPI call.
                location.call = None;
            }
            finding.locations.push(location);
        }
        None => finding.notes.push(format!(
            "rank {rank}: {label} (the access's line is unknown)"
        )),
    }
}

/// The words of a finding `found` (its verb and participle serve the
/// one-sided operations' findings too, `rma_reuse.rs`).
pub(crate) fn words(found: ReuseFound) -> Words {
    Words::of(found)
}

/// Whether `record`, a packed send's [`ReuseFound::Changed`], reports a
/// send an access record of the same trace already reported (the access
/// names the line of the write; the completion adds nothing).
pub fn superseded(trace: &RankTrace, record: &CheckRecord) -> bool {
    let Check::BufferReuse {
        found: ReuseFound::Changed,
        operation_record: send,
        ..
    } = record.check
    else {
        return false;
    };
    trace
        .ops
        .iter()
        .filter_map(Check::decode)
        .any(|other| match other.check {
            Check::BufferReuse {
                found,
                operation_record,
                ..
            } => found.is_access() && operation_record == send,
            _ => false,
        })
}

/// The words of a finding, by what the access did to what.
pub(crate) struct Words {
    pub(crate) verb: &'static str,
    participle: &'static str,
    operation: &'static str,
    note: &'static str,
    help: &'static str,
}

impl Words {
    fn of(found: ReuseFound) -> Words {
        const SEND_HELP: &str = "write to a send buffer only after `MPI_Wait` or a successful `MPI_Test` completes its request";
        const RECV_HELP: &str = "use a receive buffer only after `MPI_Wait` or a successful `MPI_Test` completes its request";
        match found {
            ReuseFound::SendWritten | ReuseFound::Changed => Words {
                verb: "wrote to",
                participle: "written",
                operation: "send",
                note: "the receiver may get the old contents, the new ones, or a mix",
                help: SEND_HELP,
            },
            ReuseFound::RecvRead => Words {
                verb: "read",
                participle: "read",
                operation: "receive",
                note: "the message may not have arrived yet: the read may see the old contents, the message's, or a mix",
                help: RECV_HELP,
            },
            ReuseFound::RecvWritten => Words {
                verb: "wrote to",
                participle: "written",
                operation: "receive",
                note: "the message may overwrite the write, or the write part of the message",
                help: RECV_HELP,
            },
            ReuseFound::CallReadRecv => Words {
                verb: "sent from",
                participle: "sent from",
                operation: "receive",
                note: "the message may not have arrived yet: the send may carry the old contents, the message's, or a mix (MPI-4.0 §3.7.2: a pending receive's buffer must not be accessed)",
                help: RECV_HELP,
            },
            ReuseFound::CallWroteSend => Words {
                verb: "received into",
                participle: "received into",
                operation: "send",
                note: "the receiver may get the old contents, the new ones, or a mix (MPI-4.0 §3.7.2: a pending send's buffer must not be written)",
                help: SEND_HELP,
            },
            ReuseFound::CallWroteRecv => Words {
                verb: "received into",
                participle: "received into",
                operation: "receive",
                note: "the two messages may land in either order, or mixed (MPI-4.0 §3.7.2: a pending receive's buffer must not be accessed)",
                help: RECV_HELP,
            },
        }
    }
}

/// The calls whose buffers the access check watches: the program's own
/// nonblocking point-to-point calls and collectives, and one-sided
/// operations (`runtime/src/access.rs`, `runtime/src/coll_pending.rs`,
/// `runtime/src/rma_watch.rs`).
const WATCHED_CALLS: [&str; 34] = [
    "MPI_Isend",
    "MPI_Ibsend",
    "MPI_Issend",
    "MPI_Irsend",
    "MPI_Irecv",
    "MPI_Imrecv",
    "MPI_Start",
    "MPI_Startall",
    "MPI_Ibcast",
    "MPI_Ireduce",
    "MPI_Iallreduce",
    "MPI_Iscan",
    "MPI_Iexscan",
    "MPI_Ireduce_scatter",
    "MPI_Ireduce_scatter_block",
    "MPI_Igather",
    "MPI_Igatherv",
    "MPI_Iscatter",
    "MPI_Iscatterv",
    "MPI_Iallgather",
    "MPI_Iallgatherv",
    "MPI_Ialltoall",
    "MPI_Ialltoallv",
    "MPI_Ialltoallw",
    "MPI_Put",
    "MPI_Get",
    "MPI_Accumulate",
    "MPI_Get_accumulate",
    "MPI_Fetch_and_op",
    "MPI_Compare_and_swap",
    "MPI_Rput",
    "MPI_Rget",
    "MPI_Raccumulate",
    "MPI_Rget_accumulate",
];

/// What a report must say the buffer-reuse check did not cover, for a
/// program whose site table is `sites` (code not compiled by mbhybrid
/// is not instrumented, so the report's limits must say so). Nothing
/// for a program that makes no nonblocking call with a buffer, or that
/// `build` did not make (the session says so already).
pub fn limits(sites: Option<&SiteTable>) -> Option<String> {
    let table = sites?;
    let watched = |call: &str| WATCHED_CALLS.contains(&call.strip_prefix('P').unwrap_or(call));
    let nonblocking = table.sites.iter().any(|site| watched(&site.call));
    if !nonblocking {
        return None;
    }
    Some(if table.access_checks {
        "buffer reuse is checked in code `mbhybrid build` compiled only: a library (or a libc \
         function the compiler did not inline) that writes a pending send's buffer or reads a \
         pending receive's before its `MPI_Wait` (or a one-sided operation's origin buffer \
         before the call that completes it) is not seen, nor is the buffer of a nonblocking \
         collective on an intercommunicator"
            .to_string()
    } else {
        "the program was built with the access checks off (`--no-access-checks` or \
         MBHYBRID_ACCESS_CHECKS=off): a buffer written or read before its `MPI_Wait` is found \
         only for sends of up to 8 KiB of a predefined type"
            .to_string()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table(calls: &[&str], access_checks: bool) -> SiteTable {
        let mut table = crate::fixtures::site_table(calls, 1);
        table.access_checks = access_checks;
        table
    }

    #[test]
    fn limits_name_what_the_check_does_not_see() {
        assert_eq!(
            limits(None),
            None,
            "not built by mbhybrid: the session says so"
        );
        let blocking = table(&["MPI_Send", "MPI_Recv", "MPI_Ibarrier"], true);
        assert_eq!(limits(Some(&blocking)), None);
        let collective = limits(Some(&table(&["MPI_Iallreduce"], true))).unwrap();
        assert!(collective.contains("intercommunicator"), "{collective}");
        let checked = limits(Some(&table(&["MPI_Send", "PMPI_Irecv"], true))).unwrap();
        assert!(checked.contains("library"), "{checked}");
        let unchecked = limits(Some(&table(&["MPI_Startall"], false))).unwrap();
        assert!(unchecked.contains("access checks off"), "{unchecked}");
    }
}
