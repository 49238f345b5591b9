//! Messages sent and never received (issue 38).
//!
//! MPI-4.0 §11.2.2: a process must complete every pending communication
//! it started before `MPI_Finalize`, and a message that no receive takes
//! is such a communication. A standard-mode send completes once MPI has
//! buffered the message, so a program can send a message nobody receives
//! and still finalize cleanly on most libraries; MUST and Mc SimGrid report
//! it. Every receive's `Matched` (or `Settled`) record names the send it
//! took (the sender's world rank and record), so after a run in which
//! every rank finalized, a send no such record names was never received.
//!
//! It is judged only when the answer is certain: every rank finalized
//! with a whole trace (a rank that crashed, aborted or was stopped never
//! had the chance to receive), and no rank left a receive request
//! incomplete (MPI may have matched the message to it; the request leak is
//! reported, and says it better).

use crate::place::site_location;
use mbh_trace::check::Check;
use mbh_trace::envelope::SendSide;
use mbh_trace::op::flags;
use mbh_trace::op::OpClass;
use mbh_trace::rank_trace::{RankState, RankTrace, WORLD_COMM};
use mbh_trace::{Finding, FindingKind, Role, Severity, SiteTable};
use std::collections::{BTreeMap, HashSet};

/// One finding per send site whose messages were never received, with the
/// ranks that sent them.
pub(crate) fn unreceived_findings(
    sites: Option<&SiteTable>,
    traces: &[Option<RankTrace>],
) -> Vec<Finding> {
    let Some(traces) = whole_finalized(traces) else {
        return Vec::new();
    };
    if traces.iter().any(|t| has_incomplete_receive(t)) {
        return Vec::new();
    }
    let received: HashSet<(i32, u64)> = traces
        .iter()
        .flat_map(|t| &t.ops)
        .filter_map(|op| op.matched_send().or_else(|| op.settled_send()))
        .map(|took| (took.send.sender, took.send.record))
        .collect();
    // One cause per send site: a loop that sends a thousand unreceived
    // messages is one finding, with the count.
    let mut by_site: BTreeMap<u32, Unreceived> = BTreeMap::new();
    for trace in &traces {
        for op in &trace.ops {
            let Some(side) = SendSide::of(op) else {
                continue;
            };
            if op.has(flags::FAILED)
                || op.has(flags::CANCELLED)
                || received.contains(&(trace.rank, op.index))
            {
                continue;
            }
            let entry = by_site.entry(op.site).or_insert_with(|| Unreceived {
                first_rank: trace.rank,
                call: op.kind.mpi_name(),
                side,
                ranks: Vec::new(),
                messages: 0,
            });
            if !entry.ranks.contains(&trace.rank) {
                entry.ranks.push(trace.rank);
            }
            entry.messages += 1;
        }
    }
    by_site
        .into_iter()
        .map(|(site, unreceived)| unreceived.finding(sites.and_then(|s| s.get(site))))
        .collect()
}

/// The unreceived messages of one send site.
struct Unreceived {
    /// The first rank that sent one, and its message's envelope.
    first_rank: i32,
    call: &'static str,
    side: SendSide,
    /// Every rank that sent one.
    ranks: Vec<i32>,
    messages: u64,
}

impl Unreceived {
    fn finding(self, site: Option<&mbh_trace::Site>) -> Finding {
        let (rank, side, call) = (self.first_rank, self.side, self.call);
        let to = if side.comm == WORLD_COMM {
            format!("rank {}", side.dest)
        } else {
            format!("rank {} of its communicator", side.dest)
        };
        let mut finding = Finding::new(
            FindingKind::UnreceivedMessage,
            Severity::Error,
            format!(
                "a message that rank {rank} sent to {to} with tag {} was never received",
                side.tag
            ),
        );
        finding.ranks = self.ranks;
        let label = format!(
            "sent to {to}, tag {}; no receive took it before `MPI_Finalize`",
            side.tag
        );
        match site {
            Some(site) => finding
                .locations
                .push(site_location(site, rank, Role::Primary, &label)),
            None => finding
                .notes
                .push(format!("`{call}` on rank {rank}: {label}")),
        }
        if self.messages > 1 {
            finding.notes.push(format!(
                "{} messages of this send were never received",
                self.messages
            ));
        }
        finding.help = Some(
            "receive every message a rank sends before `MPI_Finalize` (MPI-4.0 §11.2.2): \
             add the matching receive, or do not send it"
                .into(),
        );
        finding
    }
}

/// The traces when every rank finalized and none lost records.
fn whole_finalized(traces: &[Option<RankTrace>]) -> Option<Vec<&RankTrace>> {
    traces
        .iter()
        .map(|t| {
            t.as_ref()
                .filter(|t| t.end.state == RankState::Finalized && t.end.lost_records == 0)
        })
        .collect()
}

/// Whether the rank left a receive request never completed (a
/// `RequestLeak` check about a request a receive made).
fn has_incomplete_receive(trace: &RankTrace) -> bool {
    let leaked: HashSet<u64> = trace
        .ops
        .iter()
        .filter_map(Check::decode)
        .filter_map(|record| match record.check {
            Check::RequestLeak { request } => Some(request),
            _ => None,
        })
        .collect();
    !leaked.is_empty()
        && trace
            .ops
            .iter()
            .any(|op| op.kind.class() == OpClass::Receive && leaked.contains(&op.request))
}
