//! Reading the transition system's facts from the traces: each rank's
//! matches, completions and requests, rank by rank in parallel (rayon),
//! into per-rank arrays ([`RankFacts`]); then where each send's message
//! went, which the receiving ranks say and the sending rank needs.

use super::{Model, RankFacts, Receipt, NO_RECORD};
use crate::deadlock::request_origin;
use crate::record_map::RecordMap;
use mbh_trace::envelope::{RecvPattern, SendSide};
use mbh_trace::op::{flags, OpClass};
use mbh_trace::rank_trace::{Op, RankTrace};
use mbh_trace::OpKind;
use rayon::prelude::*;
use rustc_hash::FxHashMap as HashMap;

/// A receive that a `Matched` record names with its send.
#[derive(Debug, Clone, Copy)]
struct Match {
    /// The receiving record.
    receiver: u64,
    /// The sending rank and its send record.
    sender: usize,
    send: u64,
    /// The `Matched` record.
    record: u64,
}

/// Where the message of a send went, as the receiving rank tells it:
/// (sender, send record, receipt).
type Outgoing = Vec<(usize, u64, Receipt)>;

impl<'a> Model<'a> {
    /// Reads the matches; `None` when a completed receive has no `Matched`
    /// record.
    pub(super) fn new(traces: &'a [&'a RankTrace]) -> Option<Self> {
        let world = traces.iter().find_map(|t| {
            t.ops
                .iter()
                .find(|op| matches!(op.kind, OpKind::Init | OpKind::InitThread))
                .map(|op| op.comm)
        });
        let read: Vec<(RankFacts, Outgoing)> = (0..traces.len())
            .into_par_iter()
            .map(|rank| read_rank(traces, rank, world))
            .collect::<Option<_>>()?;
        let mut ranks = Vec::with_capacity(read.len());
        let mut received: Vec<Vec<(u64, Receipt)>> = vec![Vec::new(); traces.len()];
        // In rank order, then record order: where two receives name one
        // send, the last one read says where it went.
        for (facts, outgoing) in read {
            ranks.push(facts);
            for (sender, send, receipt) in outgoing {
                received[sender].push((send, receipt));
            }
        }
        ranks
            .par_iter_mut()
            .zip(received)
            .for_each(|(facts, received)| facts.receipts = RecordMap::last_wins(received));
        let common_instances = ranks.iter().map(|r| r.collectives.len()).min().unwrap_or(0);
        Some(Model {
            traces,
            world,
            ranks,
            common_instances,
        })
    }
}

/// What rank `rank`'s records say, and where the messages it received
/// came from; `None` when a receive it completed has no `Matched` record.
fn read_rank(
    traces: &[&RankTrace],
    rank: usize,
    world: Option<u64>,
) -> Option<(RankFacts, Outgoing)> {
    let trace = traces[rank];
    let matches = read_matches(traces, rank)?;
    let (mut facts, paired) = read_completions(trace);
    facts.collectives = trace
        .ops
        .iter()
        .filter(|op| op.kind.class() == OpClass::Collective && Some(op.comm) == world)
        .map(|op| op.index)
        .collect();
    facts.finalize = trace
        .ops
        .iter()
        .find(|op| op.kind == OpKind::Finalize)
        .map_or(0, |op| op.index);
    // Receives posted where their records say: the `Irecv` a `Wait`
    // names, or the one whose `Completed` record the `Matched` record
    // follows.
    let exact: Vec<Option<u64>> = matches
        .iter()
        .map(|m| {
            exact_posting(trace, &trace.ops[m.receiver as usize])
                .or_else(|| paired.get(m.record).copied())
        })
        .collect();
    facts.irecv_source = RecordMap::last_wins(
        matches
            .iter()
            .zip(&exact)
            .filter_map(|(m, posted)| {
                posted
                    .filter(|&p| trace.ops[p as usize].kind.is_nonblocking_receive())
                    .map(|irecv| (irecv, (m.sender, m.send)))
            })
            .collect(),
    );
    let unclaimed = unclaimed_irecvs(trace, &facts.irecv_source, world);
    let mut sources = Vec::with_capacity(matches.len());
    let mut outgoing = Vec::with_capacity(matches.len());
    for (m, posted) in matches.into_iter().zip(exact) {
        let posted = match posted {
            Some(p) => Some((p, true)),
            None => {
                facts.loose.push((m.receiver, m.sender, m.send));
                let send = &traces[m.sender].ops[m.send as usize];
                earliest_irecv(&unclaimed, world, m.sender, send)
                    .filter(|&p| p < m.receiver)
                    .map(|p| (p, false))
            }
        };
        sources.push((m.receiver, (m.sender, m.send)));
        outgoing.push((
            m.sender,
            m.send,
            Receipt {
                rank: rank as u32,
                posted: posted.map_or(NO_RECORD, |(p, _)| p),
                exact: posted.is_some_and(|(_, exact)| exact),
            },
        ));
    }
    facts.sources = RecordMap::multi(sources);
    Some((facts, outgoing))
}

/// Every receive of rank `rank` that a `Matched` record names with a send
/// (probes left out), in record order; `None` when a receive it completed
/// has no `Matched` record (a runtime that does not write them).
fn read_matches(traces: &[&RankTrace], rank: usize) -> Option<Vec<Match>> {
    let trace = traces[rank];
    let size = traces.len();
    let mut matches = Vec::new();
    let mut covered = Vec::new();
    for (record, matched) in trace
        .ops
        .iter()
        .filter_map(|op| Some((op, op.matched_send()?)))
    {
        let Some(receiver) = trace.ops.get(matched.receiver as usize) else {
            continue;
        };
        if receiver.kind.class() == OpClass::Probe {
            continue;
        }
        covered.push(receiver.index);
        let (sender, at) = (matched.send.sender, matched.send.record as usize);
        let send = (0..size as i32)
            .contains(&sender)
            .then(|| traces[sender as usize].ops.get(at))
            .flatten()
            .filter(|send| SendSide::of(send).is_some());
        if let Some(send) = send {
            matches.push(Match {
                receiver: receiver.index,
                sender: sender as usize,
                send: send.index,
                record: record.index,
            });
        }
    }
    covered.sort_unstable();
    covered.dedup();
    trace
        .ops
        .iter()
        .filter(|op| completed_receive(op))
        .all(|op| covered.binary_search(&op.index).is_ok())
        .then_some(matches)
}

/// Whether `op` made a point-to-point request a completion call completes.
fn is_request(op: &Op) -> bool {
    (op.kind.is_nonblocking_send() || op.kind.is_nonblocking_receive()) && !op.has(flags::FAILED)
}

/// A rank's completions and requests: `completes`, `completed_at`,
/// `requests`, `any_calls`, `handles` and `first_opaque` of its
/// [`RankFacts`]. Also gives, for each `Matched` record of a receive
/// completed by a call on several requests, the `Irecv` it completed: the
/// runtime writes a request's `Completed` record just before processing
/// it, and so before its `Matched` record.
fn read_completions(trace: &RankTrace) -> (RankFacts, RecordMap<u64>) {
    let mut facts = RankFacts {
        completed_at: vec![NO_RECORD; trace.ops.len()],
        ..RankFacts::default()
    };
    let mut completes = Vec::new();
    let mut paired = Vec::new();
    let mut last: HashMap<u64, u64> = HashMap::default();
    // Notes that record `call` completed the request `made`: the first
    // call to complete it lists it, the last one is where it completed.
    let mut complete = |facts: &mut RankFacts, call: u64, made: u64| {
        let at = &mut facts.completed_at[made as usize];
        if *at == NO_RECORD {
            completes.push((call, made));
        }
        *at = call;
    };
    for op in &trace.ops {
        match op.kind {
            OpKind::Completed => {
                let made = op.completed_request().and_then(|done| {
                    let made = trace.ops.get(done.origin as usize)?;
                    (is_request(made) && made.index < done.call && done.call < op.index)
                        .then_some((done.call, made.index))
                });
                if let Some((call, made)) = made {
                    complete(&mut facts, call, made);
                    last.insert(call, made);
                }
            }
            OpKind::Matched => {
                let receiver = op.matched_send().map(|m| m.receiver);
                if let Some(&made) = receiver.and_then(|r| last.get(&r)) {
                    if trace.ops[made as usize].kind.is_nonblocking_receive() {
                        paired.push((op.index, made));
                    }
                }
            }
            OpKind::Wait | OpKind::Test if !op.has(flags::FAILED) => {
                if let Some(made) = request_origin(trace, op) {
                    complete(&mut facts, op.index, made.index);
                }
            }
            kind if kind.is_nonblocking_collective() => {
                facts.first_opaque.get_or_insert(op.index);
            }
            _ if is_request(op) => {
                facts.requests.push(op.index);
                facts
                    .handles
                    .entry(op.request)
                    .or_default()
                    .made
                    .push(op.index);
            }
            _ => {}
        }
    }
    facts.completes = RecordMap::multi(completes);
    facts.any_calls = facts
        .completes
        .iter()
        .map(|(call, _)| call)
        .filter(|&call| {
            matches!(
                trace.ops[call as usize].kind,
                OpKind::Waitany | OpKind::Waitsome
            )
        })
        .collect();
    facts.any_calls.dedup();
    for handle in facts.handles.values_mut() {
        for &request in &handle.made {
            match facts.completed_at[request as usize] {
                NO_RECORD => handle.never_completed.push(request),
                call => handle.span = handle.span.max(call.saturating_sub(request)),
            }
        }
    }
    (facts, RecordMap::last_wins(paired))
}

/// An `Irecv`'s arguments, for finding the ones that may take a message:
/// whether on `MPI_COMM_WORLD`, its source (`None`: `MPI_ANY_SOURCE`, or
/// another communicator's rank) and tag (`None`: `MPI_ANY_TAG`).
type IrecvKey = (bool, Option<i32>, Option<i32>);

/// A rank's earliest `Irecv` with each [`IrecvKey`], leaving out those a
/// call naming them completed (`claimed`).
fn unclaimed_irecvs(
    trace: &RankTrace,
    claimed: &RecordMap<(usize, u64)>,
    world: Option<u64>,
) -> HashMap<IrecvKey, u64> {
    let mut earliest = HashMap::default();
    for op in trace.ops.iter().filter(|op| {
        op.kind.is_nonblocking_receive()
            && !op.has(flags::FAILED)
            && !op.has(flags::CANCELLED)
            && !op.has(flags::PROC_NULL)
            && !claimed.contains(op.index)
    }) {
        let in_world = world == Some(op.comm);
        // The program's pattern: the analysis asks what a run of the
        // program without buffering does, where a wildcard this replay
        // forced is a wildcard again.
        let pattern = RecvPattern::as_written(op);
        let key = (in_world, pattern.source.filter(|_| in_world), pattern.tag);
        earliest.entry(key).or_insert(op.index);
    }
    earliest
}

/// The earliest of `unclaimed` (a rank's) that may take the message of
/// `send` (of `sender`): sources on other communicators cannot be
/// translated, any is accepted there.
fn earliest_irecv(
    unclaimed: &HashMap<IrecvKey, u64>,
    world: Option<u64>,
    sender: usize,
    send: &Op,
) -> Option<u64> {
    let tag = SendSide::of(send)?.tag;
    let in_world = world == Some(send.comm);
    let source = in_world.then_some(sender as i32);
    [
        (in_world, source, Some(tag)),
        (in_world, None, Some(tag)),
        (in_world, source, None),
        (in_world, None, None),
    ]
    .iter()
    .filter_map(|key| unclaimed.get(key).copied())
    .min()
}

/// Where the receive whose receiving record is `receiver` was posted, when
/// the records say: the `Recv`/`Sendrecv` itself, or the `Irecv` that the
/// `Wait`/`Test` of a single request names.
fn exact_posting(trace: &RankTrace, receiver: &Op) -> Option<u64> {
    match receiver.kind {
        OpKind::Recv | OpKind::Sendrecv | OpKind::SendrecvReplace | OpKind::Mrecv => {
            Some(receiver.index)
        }
        kind if (kind == OpKind::Wait || kind.is_test()) && receiver.count <= 1 => {
            request_origin(trace, receiver)
                .filter(|o| o.kind.is_nonblocking_receive())
                .map(|o| o.index)
        }
        _ => None,
    }
}

/// Whether `op` completed a receive (it has the receive's status) and so
/// must have a `Matched` record.
fn completed_receive(op: &Op) -> bool {
    matches!(
        op.kind,
        OpKind::Recv
            | OpKind::Sendrecv
            | OpKind::SendrecvReplace
            | OpKind::Mrecv
            | OpKind::Wait
            | OpKind::Waitall
            | OpKind::Waitany
            | OpKind::Waitsome
            | OpKind::Test
            | OpKind::Testall
            | OpKind::Testany
            | OpKind::Testsome
    ) && op.has(flags::HAS_STATUS)
        && !op.has(flags::FAILED)
        && !op.has(flags::PROC_NULL)
        && op.matched.is_some_and(|(source, _)| source >= 0)
}
