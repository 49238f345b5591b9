//! Messages sent and never received.
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
//! reported, and says it better). A receive that failed (`MPI_ERR_TRUNCATE`
//! under `MPI_ERRORS_RETURN`) took its message without naming it: a send it
//! could have matched is not reported (the error is).

use crate::place::site_location;
use mbh_trace::check::Check;
use mbh_trace::envelope::{RecvPattern, SendSide};
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
    let failed = failed_receives(&traces);
    let mut by_site: BTreeMap<u32, Unreceived> = BTreeMap::new();
    for trace in &traces {
        for op in &trace.ops {
            let Some(side) = SendSide::of(op) else {
                continue;
            };
            if op.has(flags::FAILED)
                || op.has(flags::CANCELLED)
                || received.contains(&(trace.rank, op.index))
                || failed.iter().any(|f| f.may_have_taken(trace.rank, &side))
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

/// A receive, or a completion, that failed: it may have taken a message
/// without a `Matched` record naming it.
struct FailedReceive {
    /// Its world rank.
    rank: i32,
    /// What the receive accepted; `None` for a failed completion call,
    /// which may have been any of the rank's receives.
    pattern: Option<RecvPattern>,
}

impl FailedReceive {
    /// Whether it may have taken the message `side` that world rank
    /// `sender` sent. Ranks of other communicators than the world are not
    /// translated here: any source on the same communicator may have been
    /// taken.
    fn may_have_taken(&self, sender: i32, side: &SendSide) -> bool {
        let world = side.comm == WORLD_COMM;
        if world && side.dest != self.rank {
            return false;
        }
        let Some(pattern) = self.pattern else {
            return true;
        };
        let source = if world {
            sender
        } else {
            pattern.source.unwrap_or(sender)
        };
        pattern.accepts(&side.envelope(source))
    }
}

/// Every failed receive and completion call of `traces`.
fn failed_receives(traces: &[&RankTrace]) -> Vec<FailedReceive> {
    traces
        .iter()
        .flat_map(|t| t.ops.iter().map(move |op| (t.rank, op)))
        .filter(|(_, op)| op.has(flags::FAILED))
        .filter_map(|(rank, op)| match op.kind.class() {
            OpClass::Receive => Some(FailedReceive {
                rank,
                pattern: Some(RecvPattern::as_written(op)),
            }),
            OpClass::Completion => Some(FailedReceive {
                rank,
                pattern: None,
            }),
            _ => None,
        })
        .collect()
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

#[cfg(test)]
mod tests {
    use super::*;
    use mbh_trace::rank_trace::Op;
    use mbh_trace::OpKind;

    fn send(index: u64, dest: i32, tag: i32, site: u32) -> Op {
        let mut op = Op::new(index, OpKind::Send);
        (op.peer, op.tag, op.comm, op.site) = (dest, tag, WORLD_COMM, site);
        op
    }

    fn recv(index: u64, source: i32, tag: i32) -> Op {
        let mut op = Op::new(index, OpKind::Recv);
        (op.peer, op.tag, op.comm) = (source, tag, WORLD_COMM);
        op
    }

    /// The `Matched` record of receive `receiver` that took record
    /// `record` of `sender`.
    fn matched(index: u64, receiver: u64, sender: i32, record: u64) -> Op {
        let mut op = Op::new(index, OpKind::Matched);
        (op.request, op.peer, op.aux, op.count) = (receiver, sender, record, -1);
        op
    }

    fn run(zero: Vec<Op>, one: Vec<Op>) -> Vec<Finding> {
        let traces = vec![
            Some(RankTrace::finalized(0, 2, zero)),
            Some(RankTrace::finalized(1, 2, one)),
        ];
        unreceived_findings(None, &traces)
    }

    #[test]
    fn a_received_send_is_not_reported() {
        let found = run(
            vec![send(0, 1, 7, 3)],
            vec![recv(0, 0, 7), matched(1, 0, 0, 0)],
        );
        assert!(found.is_empty(), "{found:?}");
    }

    #[test]
    fn unreceived_sends_of_one_site_are_one_finding_with_the_count() {
        let zero = vec![send(0, 1, 7, 3), send(1, 1, 7, 3), send(2, 1, 7, 3)];
        let found = run(zero, vec![recv(0, 0, 7), matched(1, 0, 0, 0)]);
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!(found[0].kind, FindingKind::UnreceivedMessage);
        assert_eq!(found[0].severity, Severity::Error);
        assert_eq!(found[0].ranks, [0]);
        assert!(found[0]
            .message
            .contains("rank 0 sent to rank 1 with tag 7 was never received"));
        assert!(
            found[0]
                .notes
                .iter()
                .any(|n| n == "2 messages of this send were never received"),
            "{:?}",
            found[0].notes
        );
    }

    #[test]
    fn a_failed_receive_may_have_taken_the_message() {
        let mut truncated = recv(0, 0, 7);
        truncated.flags |= flags::FAILED;
        assert!(run(vec![send(0, 1, 7, 3)], vec![truncated.clone()]).is_empty());
        // It accepts tag 7 only: a tag 8 message is still unreceived.
        assert_eq!(run(vec![send(0, 1, 8, 3)], vec![truncated]).len(), 1);
    }

    #[test]
    fn nothing_is_judged_when_a_rank_did_not_finalize() {
        let mut traces = vec![
            Some(RankTrace::finalized(0, 2, vec![send(0, 1, 7, 3)])),
            Some(RankTrace::finalized(1, 2, Vec::new())),
        ];
        if let Some(t) = traces[1].as_mut() {
            t.end.state = RankState::Signaled;
        }
        assert!(unreceived_findings(None, &traces).is_empty());
        traces[1] = None;
        assert!(unreceived_findings(None, &traces).is_empty());
    }
}
