//! The space-time diagram of one interleaving, for the HTML report: each
//! rank's MPI calls in order, the messages between them (from the runtime's
//! `Matched` records), the potential matches of wildcard receives, sends
//! nobody received, the calls ranks were blocked in, and the wildcard
//! events the interleaving forced (as the runtime recorded them).

use mbh_trace::op::OpClass;
use mbh_trace::timeline::{CallRef, MessageKind, Timeline, TimelineCall, TimelineMessage};
use mbh_trace::{OpKind, RankTrace, SiteTable};
use std::collections::HashMap;

/// A call record: its rank, and its index in the rank's trace.
type Record = (i32, u64);

/// The timeline of one run from its traces.
pub fn build(traces: &[RankTrace], sites: Option<&SiteTable>) -> Timeline {
    let (ranks, position) = lanes(traces, sites);
    let places = Places {
        lane_of: traces
            .iter()
            .enumerate()
            .map(|(i, t)| (t.rank, i))
            .collect(),
        position,
    };
    let mut messages = Vec::new();
    let (received, sender_of_receive) = matched_messages(traces, &places, &mut messages);
    potential_messages(traces, &places, &sender_of_receive, &mut messages);
    unreceived_messages(traces, &places, &received, &ranks, &mut messages);
    Timeline { ranks, messages }
}

/// Each rank's lane of MPI calls, and the position of each MPI call
/// record in its rank's lane.
fn lanes(
    traces: &[RankTrace],
    sites: Option<&SiteTable>,
) -> (Vec<Vec<TimelineCall>>, HashMap<Record, usize>) {
    let mut position: HashMap<Record, usize> = HashMap::new();
    let mut ranks = Vec::new();
    for trace in traces {
        // The calls whose wildcard event the runtime forced: every forcing
        // of the guidance (the flip and the prefix that leads to it), read
        // from the records rather than guessed from the guidance's clock.
        let forced: std::collections::HashSet<u64> = trace
            .ops
            .iter()
            .filter_map(|op| op.event_clock())
            .filter(|clock| clock.forced)
            .map(|clock| clock.call)
            .collect();
        let mut lane = Vec::new();
        for op in trace
            .ops
            .iter()
            .filter(|op| op.kind.class() != OpClass::Clock)
        {
            position.insert((trace.rank, op.index), lane.len());
            lane.push(TimelineCall {
                label: op.kind.mpi_name().trim_start_matches("MPI_").to_string(),
                line: sites.and_then(|s| s.get(op.site)).map_or(0, |s| s.line),
                blocked: trace.blocking == Some(op.index),
                forced: forced.contains(&op.index),
            });
        }
        ranks.push(lane);
    }
    (ranks, position)
}

/// Where a rank's call record is in the diagram.
struct Places {
    /// Each rank's lane.
    lane_of: HashMap<i32, usize>,
    /// Each call record's position in its lane.
    position: HashMap<Record, usize>,
}

impl Places {
    fn call(&self, rank: i32, index: u64) -> Option<CallRef> {
        Some(CallRef {
            rank: *self.lane_of.get(&rank)?,
            call: *self.position.get(&(rank, index))?,
        })
    }
}

/// The messages the runtime's `Matched` records name, into `messages`;
/// the sends received, and which send each receive took.
fn matched_messages(
    traces: &[RankTrace],
    places: &Places,
    messages: &mut Vec<TimelineMessage>,
) -> (HashMap<Record, ()>, HashMap<Record, Record>) {
    let mut received: HashMap<Record, ()> = HashMap::new();
    // Which send each receive took.
    let mut sender_of_receive: HashMap<Record, Record> = HashMap::new();
    for trace in traces {
        for m in trace.ops.iter().filter_map(|op| op.matched_send()) {
            received.insert((m.send.sender, m.send.record), ());
            sender_of_receive.insert((trace.rank, m.receiver), (m.send.sender, m.send.record));
            if let (Some(from), Some(to)) = (
                places.call(m.send.sender, m.send.record),
                places.call(trace.rank, m.receiver),
            ) {
                messages.push(TimelineMessage {
                    from,
                    to,
                    kind: MessageKind::Matched,
                });
            }
        }
    }
    (received, sender_of_receive)
}

/// The sends wildcard receives could have taken (`PotentialMatch`
/// records), into `messages`.
fn potential_messages(
    traces: &[RankTrace],
    places: &Places,
    sender_of_receive: &HashMap<Record, Record>,
    messages: &mut Vec<TimelineMessage>,
) {
    for trace in traces {
        for potential in trace
            .ops
            .iter()
            .filter(|op| op.kind == OpKind::PotentialMatch)
            .filter_map(|op| op.potential())
        {
            // The late message was taken by the receive `request`; its send
            // could have matched the wildcard receive of event `count`.
            let Some(&(sender, send_index)) =
                sender_of_receive.get(&(trace.rank, potential.receiver))
            else {
                continue;
            };
            let Some(wildcard) = trace
                .ops
                .iter()
                .filter(|w| w.kind == OpKind::WildcardClock)
                .filter_map(|w| w.event_clock())
                .find(|w| w.event == potential.event)
                .map(|w| w.call)
            else {
                continue;
            };
            if let (Some(from), Some(to)) = (
                places.call(sender, send_index),
                places.call(trace.rank, wildcard),
            ) {
                messages.push(TimelineMessage {
                    from,
                    to,
                    kind: MessageKind::Potential,
                });
            }
        }
    }
}

/// The sends nobody received, drawn to the end of their destination's
/// lane, into `messages`.
fn unreceived_messages(
    traces: &[RankTrace],
    places: &Places,
    received: &HashMap<Record, ()>,
    ranks: &[Vec<TimelineCall>],
    messages: &mut Vec<TimelineMessage>,
) {
    for trace in traces {
        for op in trace
            .ops
            .iter()
            .filter(|op| op.kind.class() == OpClass::Send && op.peer >= 0)
        {
            if received.contains_key(&(trace.rank, op.index)) {
                continue;
            }
            let Some(&to_lane) = places.lane_of.get(&op.peer) else {
                continue;
            };
            if let Some(from) = places.call(trace.rank, op.index) {
                let last = ranks[to_lane].len().saturating_sub(1);
                messages.push(TimelineMessage {
                    from,
                    to: CallRef {
                        rank: to_lane,
                        call: last,
                    },
                    kind: MessageKind::Unreceived,
                });
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use mbh_trace::op::flags;
    use mbh_trace::rank_trace::{Op, RankState};

    fn op(index: u64, kind: OpKind) -> Op {
        Op::new(index, kind)
    }

    fn trace(rank: i32, ops: Vec<Op>, blocking: Option<u64>) -> RankTrace {
        let mut trace = RankTrace::finalized(rank, 2, ops);
        trace.end.state = RankState::Running;
        trace.blocking = blocking;
        trace
    }

    #[test]
    fn matches_become_arrows_and_lost_sends_point_at_their_destination() {
        let sender = trace(
            0,
            vec![
                Op {
                    peer: 1,
                    ..op(0, OpKind::Send)
                },
                Op {
                    peer: 1,
                    ..op(1, OpKind::Send)
                },
            ],
            None,
        );
        let receiver = trace(
            1,
            vec![
                Op {
                    peer: -2,
                    ..op(0, OpKind::Recv)
                },
                Op {
                    peer: 0,
                    request: 0,
                    aux: 0,
                    ..op(1, OpKind::Matched)
                },
                Op {
                    peer: 0,
                    ..op(2, OpKind::Recv)
                },
            ],
            Some(2),
        );
        let t = build(&[sender, receiver], None);
        assert_eq!(t.ranks[0].len(), 2);
        assert_eq!(t.ranks[1].len(), 2, "clock records are not calls");
        assert!(t.ranks[1][1].blocked);
        assert_eq!(
            t.messages,
            vec![
                TimelineMessage {
                    from: CallRef { rank: 0, call: 0 },
                    to: CallRef { rank: 1, call: 0 },
                    kind: MessageKind::Matched
                },
                TimelineMessage {
                    from: CallRef { rank: 0, call: 1 },
                    to: CallRef { rank: 1, call: 1 },
                    kind: MessageKind::Unreceived
                },
            ]
        );
    }

    /// A call is marked forced when its wildcard event's record says the
    /// runtime forced it, whatever its clock; an unforced one is not.
    #[test]
    fn calls_whose_event_the_runtime_forced_are_marked() {
        let clock = |index: u64, call: u64, event: i32, forced: bool| Op {
            flags: if forced { flags::FORCED } else { 0 },
            request: call,
            count: event,
            aux: 7 + index,
            ..op(index, OpKind::WildcardClock)
        };
        let receiver = trace(
            1,
            vec![
                op(0, OpKind::Recv),
                clock(1, 0, 0, true),
                op(2, OpKind::Recv),
                clock(3, 2, 1, false),
            ],
            None,
        );
        let t = build(&[receiver], None);
        let forced: Vec<bool> = t.ranks[0].iter().map(|c| c.forced).collect();
        assert_eq!(forced, [true, false]);
    }
}
