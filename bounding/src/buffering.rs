//! Buffering hazards: whether a run that finished did so only because the
//! MPI library buffered standard-mode sends (DESIGN.md "Send buffering";
//! seed 003 §3; seed 001 §4.4), decided from that one run's traces, without
//! a second run under `--buffering zero`.
//!
//! # Semantics
//!
//! The input is the complete traces of a run in which every rank went
//! through `MPI_Finalize`. The analysis runs seed 003's wait-state
//! transition system (§3.1, rules 1-4) over them, with every standard-mode
//! send treated as synchronous (the stricter `b` of §3.3), and with the
//! run's own matches: each receive's `Matched` record names the sender's
//! record, so the analysis is about this interleaving. Each rank sits at
//! one record `l`; a record whose condition holds is passed, and every rank
//! is advanced as far as it can go (a fixpoint; the system is confluent, so
//! the order does not matter). Rank `r` *reached* its record `j` when
//! `l_r >= j`.
//!
//! | record | is passed when |
//! | --- | --- |
//! | `Send`, `Ssend`; `Wait` on an `Isend`/`Issend` (or a started `Send_init`/`Ssend_init`) | the receive that took the message was posted: its rank reached the `Recv` (or `Sendrecv`), or issued the `Irecv` |
//! | `Recv`; `Wait` on an `Irecv` | the send the message came from was issued: its rank reached it |
//! | `Sendrecv`, `Sendrecv_replace` | both of the above, for its two halves |
//! | `Waitall` | both of the above, for every request it completed |
//! | `Waitany`, `Waitsome` | more requests of its pool can complete than the `Waitany`/`Waitsome` calls before it took (see below) |
//! | `Test`, `Testall`, `Testany`, `Testsome` | always (see below) |
//! | a collective on `MPI_COMM_WORLD` | every rank reached the same instance (the same position in its sequence of world collectives) |
//! | `MPI_Finalize` | every rank reached its `MPI_Finalize` |
//! | anything else | always (rule 1, or not modelled: see below) |
//!
//! If some rank cannot reach the end of its trace, this interleaving cannot
//! happen without buffering: the terminal state is a deadlock of the
//! transition system, and the run completed only because the library
//! buffered a send. [`find_buffering_hazard`] then returns the witness (the
//! [`BufferingHazard`]): each rank's record it is stuck at, the records
//! other ranks must reach for it to pass, and a cycle of the wait-for graph.
//! Only terminal states where at least one rank is stuck in a standard-mode
//! send (`MPI_Send`, the send half of `MPI_Sendrecv`, or a `Wait`,
//! `Waitall`, `Waitany` or `Waitsome` waiting for an `MPI_Isend`) are
//! reported: anything else is not a buffering issue.
//!
//! `Ssend`/`Issend` are modelled as what they are (synchronous: the run
//! itself waited for the receive, so the condition is exact); a rank stuck
//! in one never makes a hazard on its own, but an `Ssend` that only
//! completed because the peer's standard `Send` was buffered is part of
//! that `Send`'s hazard.
//!
//! # Completion calls
//!
//! The record of a call on several requests names only its first request;
//! the runtime follows it with one `Completed` record per request the call
//! completed (`mbh_trace::OpKind::Completed`), and, for a receive, the
//! `Matched` record right after its `Completed` record, which says where
//! the receive was posted (its `Irecv`).
//!
//! * `Wait`, `Waitall`: the requests a call completed are exactly those it
//!   waited for (rule 2 of seed 003 §3.1, AND).
//! * `Waitany`, `Waitsome` return once any request given completes (rule
//!   3, OR). The trace does not list the requests given, so the call's
//!   *pool* is every request the rank made before it that no `Wait` or
//!   `Waitall` before it completed: more than it was given, which can only
//!   let the rank pass more easily. Without buffering the call may take
//!   another request of the pool than the run did; but every `Waitany` or
//!   `Waitsome` before it that completed something took at least one
//!   request of the pool that could complete, and a request that can
//!   complete stays so. So the call passes when more requests of its pool
//!   can complete than there were such calls before it: a `Waitany` loop
//!   over `n` sends needs each of them in turn, whatever order the library
//!   picks. A call that completed nothing (no active request) passes.
//! * `Test` forms never wait. One that completed a request in the run
//!   (those that completed nothing are not recorded) may return false
//!   without buffering, and what the program does then (poll again, or do
//!   other work that posts the receive) is not in the trace: no deadlock
//!   can be claimed. A request a `Test` form completed stays in the pool of
//!   the `Waitany`/`Waitsome` calls after it, since without buffering the
//!   test may have left it to them.
//! * MPICH hands every send that completed eagerly one shared handle, and
//!   the runtime credits a completion to the latest request holding it: a
//!   `Wait`/`Waitall` completing such a request passes once any request
//!   that shares the handle and was not completed before can complete.
//! * Persistent requests: each `Start` (or request of `Startall`) is
//!   recorded as the `Isend`/`Irecv` it stands for, and is modelled so.
//!
//! # Collectives are synchronising
//!
//! Seed 003's system treats every collective as a barrier. MPI lets a
//! non-root rank leave `MPI_Bcast` or `MPI_Reduce` early, and most libraries
//! do; a hazard that needs a collective to synchronise is one MPI permits,
//! i.e. a portability hazard: the program deadlocks on an MPI library that
//! synchronises its collectives and does not buffer sends.
//!
//! # Unexpected matches: no report
//!
//! A wildcard receive's sender is the library's choice (seed 003 §3.3). If,
//! in the terminal state, a posted `MPI_ANY_SOURCE` receive whose message
//! was not sent yet could take a send that was issued and that no receive
//! posted before it takes, a library without buffering would have matched
//! the two, and the run would have gone another way, which this analysis
//! cannot follow (that is the exploration's job). Such a terminal state is
//! not reported. SCENARIOS.md S11 (seed 003 Fig 4) is the example: the
//! interleaving where P1's first `Recv(*)` takes P2's message needs P0's
//! `Send` to be buffered, but without buffering that `Send` would simply
//! have matched the `Recv(*)`. An `Irecv(*)` completed by a call that does
//! not name it (`Waitall`, ...) counts as waiting unless every message from
//! its status's source and tag that such calls after it took was sent.
//!
//! # Buffering-dependent deadlocks are another matter
//!
//! Seed 001 Fig 8 (SCENARIOS.md E6) is the other direction: a deadlock that
//! only buffering makes possible. With eager sends, P2's `Irecv(*)` may take
//! P0's second message and then its `Irecv(from 0)` waits forever; without
//! buffering only P1's message can match it. A run of E6 that finished took
//! P1's message, which is also the zero-buffering match, and the transition
//! system passes every record: no hazard. The deadlocking interleaving is
//! found by exploring the wildcard's other sender, and reported by the
//! deadlock analysis, not here.
//!
//! # Conservative by construction
//!
//! The analysis must never report a hazard the run does not have, so
//! whatever it cannot model is assumed to complete (which can only let
//! ranks advance further):
//!
//! * the answer is `None` when some rank did not go through
//!   `MPI_Finalize`, or a completed receive has no `Matched` record (a
//!   runtime that does not write them);
//! * `Bsend`/`Ibsend` are buffered by definition, `Rsend`/`Irsend` need a
//!   posted receive by contract: never waited for;
//! * a call on several requests without `Completed` records (a trace of an
//!   older runtime) waits for none of its send requests; a `Waitany` or
//!   `Waitsome` passes when the rank has a nonblocking collective
//!   outstanding (not in its pool), or a pool of more than 4096 requests;
//!   `Test` forms never block; probes are not modelled; a `Wait` whose
//!   request is unknown completes;
//! * a send no receive took (its `Irecv` was never completed, or it was
//!   never received) waits for nothing;
//! * a receive completed by a call on several requests without a
//!   `Completed` record before its `Matched` record is taken as posted at
//!   the earliest `Irecv` before that
//!   call that could have taken the message and that no `Wait`/`Test`
//!   naming it completed (in a loop, that is usually the first iteration's:
//!   such sends are then hardly ever found stuck);
//! * collectives on other communicators (their ranks cannot be translated);
//!   failed calls.
//!
//! Complexity: `O(records + ranks² + world collectives × ranks)`, times a
//! logarithm for the waiting queues (a `Wait` whose record does not name
//! the request's origin costs a backward search for its handle, as in the
//! deadlock analysis), plus the pool of each `Waitany`/`Waitsome` (at most
//! 4096 requests each).

use crate::deadlock::{find_cycle, request_origin, Facts};
use mbh_trace::envelope::{RecvPattern, SendSide};
use mbh_trace::op::{flags, OpClass};
use mbh_trace::rank_trace::{Op, RankState, RankTrace};
use mbh_trace::OpKind;
use petgraph::algo::kosaraju_scc;
use petgraph::graph::{DiGraph, NodeIndex};
use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};
use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// A record another rank must reach for a stuck record to pass.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Awaited {
    /// The rank.
    pub rank: i32,
    /// Index of its record: for a stuck send, where the receive that took
    /// its message was posted (the `Recv`, `Sendrecv` or `Irecv`); for a
    /// stuck receive, the send its message came from; for a collective or
    /// `MPI_Finalize`, the rank's own instance of it.
    pub op_index: u64,
    /// The record's call.
    pub kind: OpKind,
    /// Its site id (0: unknown).
    pub site: u32,
}

/// One rank that cannot reach the end of its trace when standard-mode
/// sends are synchronous.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StuckRank {
    /// The rank.
    pub rank: i32,
    /// Index of the record it is stuck at.
    pub op_index: u64,
    /// The call.
    pub kind: OpKind,
    /// Its site id (0: unknown).
    pub site: u32,
    /// For a `Wait`: index of the record that created the request; for a
    /// call on several requests, that of the first stuck send's (standard
    /// mode first).
    pub origin: Option<u64>,
    /// Whether it is stuck in a standard-mode send (`MPI_Send`, the send
    /// half of `MPI_Sendrecv`, the `Wait` of an `MPI_Isend`), the send that
    /// the run's library buffered.
    pub standard_send: bool,
    /// What it waits for, one entry per record not reached yet: all of
    /// them (AND), except for a `Waitany`/`Waitsome`, or a request whose
    /// handle others share, where any enough of them would do.
    pub waits_for: Vec<Awaited>,
}

/// A run that completed only because standard-mode sends were buffered,
/// with its witness.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BufferingHazard {
    /// Every rank that cannot reach its end, ascending; ranks that reached
    /// `MPI_Finalize` wait there for the others.
    pub stuck: Vec<StuckRank>,
    /// One cycle of the wait-for graph, in wait order (each rank waits for
    /// the next, the last for the first), through the lowest rank on a
    /// cycle.
    pub cycle: Vec<i32>,
    /// The ranks of the wait-for graph's strongly connected components that
    /// contain a cycle, sorted.
    pub knot: Vec<i32>,
}

impl BufferingHazard {
    /// The stuck ranks, ascending.
    pub fn ranks(&self) -> Vec<i32> {
        self.stuck.iter().map(|s| s.rank).collect()
    }

    /// The ranks stuck in a standard-mode send: the sends that needed
    /// buffering.
    pub fn sends(&self) -> impl Iterator<Item = &StuckRank> {
        self.stuck.iter().filter(|s| s.standard_send)
    }
}

/// Decides whether a finished run (rank `i`'s complete trace at index `i`)
/// completed only because standard-mode sends were buffered, and gives the
/// witness.
///
/// `None` when it did not need buffering, and whenever the analysis cannot
/// tell: a rank that did not finalize, missing `Matched` records, an
/// unexpected match, or a terminal state with no standard-mode send stuck
/// (see the module documentation).
pub fn find_buffering_hazard(traces: &[RankTrace]) -> Option<BufferingHazard> {
    let size = traces.len();
    if size == 0
        || !traces
            .iter()
            .enumerate()
            .all(|(rank, trace)| finished(trace, rank, size))
    {
        return None;
    }
    let refs: Vec<&RankTrace> = traces.iter().collect();
    let model = Model::new(&refs)?;
    let at = model.run();
    if (0..size).all(|r| at[r] >= refs[r].ops.len() as u64) || model.unexpected_match(&at) {
        return None;
    }
    let stuck: Vec<StuckRank> = (0..size)
        .filter(|&r| at[r] < refs[r].ops.len() as u64)
        .map(|r| model.stuck(r, &at))
        .collect();
    if !stuck.iter().any(|s| s.standard_send) {
        return None;
    }
    Some(witness(size, stuck))
}

/// Whether `trace` is rank `rank`'s, went through `MPI_Finalize`, and has
/// dense record indices.
fn finished(trace: &RankTrace, rank: usize, size: usize) -> bool {
    trace.rank == rank as i32
        && trace.size == size as i32
        && matches!(trace.end.state, RankState::Finalized | RankState::Exited)
        && trace
            .ops
            .iter()
            .any(|op| op.kind == OpKind::Finalize && op.has(flags::RETURNED))
        && trace
            .ops
            .iter()
            .enumerate()
            .all(|(i, op)| op.index == i as u64)
}

/// Whether `op` made a point-to-point request a completion call completes.
fn is_request(op: &Op) -> bool {
    (op.kind.is_nonblocking_send() || op.kind.is_nonblocking_receive()) && !op.has(flags::FAILED)
}

/// Where the message of a send went.
#[derive(Debug, Clone, Copy)]
struct Receipt {
    /// The receiving rank.
    rank: usize,
    /// Where the receive was posted: the `Recv`/`Sendrecv`, or the `Irecv`;
    /// `None` when unknown.
    posted: Option<u64>,
    /// Whether `posted` is exact; otherwise it is the earliest record the
    /// receive can have been posted at.
    exact: bool,
}

/// One condition of a record: `rank` must reach its record `op`.
#[derive(Debug, Clone, Copy)]
struct Need {
    rank: usize,
    op: u64,
    /// Whether it is the condition of a standard-mode send.
    standard: bool,
    /// For a request's condition: the record that made the request (the
    /// `Isend`, ...), which the report shows rather than the completion.
    origin: Option<u64>,
}

/// When a record is passed: every condition of `all` holds (seed 003
/// §3.1: AND), and for each clause `(n, groups)` at least `n` of the groups
/// hold, a group holding when all its conditions do (OR, counted): a
/// `Waitany`/`Waitsome` needs one more request of its pool to complete
/// than the calls of its kind before it took, and a request whose handle
/// another one shares may be either of them (see the module docs).
#[derive(Debug, Clone, Default)]
struct Cond {
    all: Vec<Need>,
    clauses: Vec<(usize, Vec<Vec<Need>>)>,
}

impl Cond {
    fn all(all: Vec<Need>) -> Cond {
        Cond {
            all,
            clauses: Vec::new(),
        }
    }

    /// `None` when it holds in state `at`; otherwise the conditions not
    /// met yet, any of which may change that (only those needed to wake
    /// the rank, or with `every` all of them, for the witness).
    fn unmet(&self, at: &[u64], every: bool) -> Option<Vec<Need>> {
        let met = |n: &Need| at[n.rank] >= n.op;
        let mut unmet: Vec<Need> = Vec::new();
        for need in self.all.iter().filter(|n| !met(n)) {
            unmet.push(*need);
            if !every {
                return Some(unmet);
            }
        }
        for (n, groups) in &self.clauses {
            if groups.iter().filter(|g| g.iter().all(met)).count() >= *n {
                continue;
            }
            for group in groups {
                let open = group.iter().filter(|n| !met(n));
                unmet.extend(open.take(if every { usize::MAX } else { 1 }));
            }
            if !every {
                return Some(unmet);
            }
        }
        (!unmet.is_empty()).then_some(unmet)
    }
}

/// Requests a `Waitany`/`Waitsome` pool may hold before the analysis stops
/// building it and lets the call pass (conservative; bounds the cost of
/// long `Waitany` loops, whose pools grow with every iteration).
const POOL_LIMIT: usize = 4096;

/// The transition system over the traces of one run.
struct Model<'a> {
    traces: &'a [&'a RankTrace],
    facts: Facts<'a>,
    /// `sources[(rank, record)]`: the sends `(rank, record)` whose messages
    /// the receiving record took.
    sources: HashMap<(usize, u64), Vec<(usize, u64)>>,
    /// `receipts[(rank, record)]`: where the message of a send went.
    receipts: HashMap<(usize, u64), Receipt>,
    /// `irecv_source[(rank, irecv)]`: the send an `Irecv` took, when the
    /// call that completed it names it.
    irecv_source: HashMap<(usize, u64), (usize, u64)>,
    /// `loose[rank]`: the messages taken by `Irecv`s that a call not naming
    /// them completed (`Waitall`, ...): (completing record, sender, send).
    loose: Vec<Vec<(u64, usize, u64)>>,
    /// Index of each rank's `MPI_Finalize`.
    finalize: Vec<u64>,
    /// `completes[(rank, call)]`: the requests (records that made them) a
    /// completion call completed: from `Completed` records for the calls
    /// on several requests, from the record itself for `Wait`/`Test`.
    completes: HashMap<(usize, u64), Vec<u64>>,
    /// `completed_at[(rank, request)]`: the call that completed a request.
    completed_at: HashMap<(usize, u64), u64>,
    /// `requests[rank]`: the point-to-point requests made (records of
    /// `Isend`, `Irecv`, `Start`, ...), in order.
    requests: Vec<Vec<u64>>,
    /// `any_calls[rank]`: the `Waitany`/`Waitsome` records that completed
    /// a request, in order.
    any_calls: Vec<Vec<u64>>,
    /// `handles[(rank, handle)]`: the requests made with a handle, in order.
    handles: HashMap<(usize, u64), Vec<u64>>,
    /// `handle_span[(rank, handle)]`: the longest a request of `handles`
    /// stayed open (its completing record's index minus its own), over
    /// those completed; it bounds which of them can still be open at a
    /// call (`open_twins`).
    handle_span: HashMap<(usize, u64), u64>,
    /// `never_completed[(rank, handle)]`: the requests of `handles` that
    /// no call completed, in order.
    never_completed: HashMap<(usize, u64), Vec<u64>>,
    /// `first_opaque[rank]`: the first nonblocking collective, whose
    /// request a `Waitany` may complete though the pool does not model it.
    first_opaque: Vec<Option<u64>>,
}

impl<'a> Model<'a> {
    /// Reads the matches; `None` when a completed receive has no `Matched`
    /// record.
    fn new(traces: &'a [&'a RankTrace]) -> Option<Self> {
        let size = traces.len();
        let facts = Facts::new(traces);
        // Every match: (receiving rank, receiving record, sender, send).
        let mut matches: Vec<(usize, &Op, usize, &Op)> = Vec::new();
        // The index of each match's `Matched` record.
        let mut matched_at: Vec<u64> = Vec::new();
        let mut covered = HashSet::default();
        for (rank, trace) in traces.iter().enumerate() {
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
                covered.insert((rank, receiver.index));
                let (sender, at) = (matched.send.sender, matched.send.record as usize);
                let send = (0..size as i32)
                    .contains(&sender)
                    .then(|| traces[sender as usize].ops.get(at))
                    .flatten()
                    .filter(|send| SendSide::of(send).is_some());
                if let Some(send) = send {
                    matches.push((rank, receiver, sender as usize, send));
                    matched_at.push(record.index);
                }
            }
        }
        let complete = traces.iter().enumerate().all(|(rank, trace)| {
            trace
                .ops
                .iter()
                .filter(|op| completed_receive(op))
                .all(|op| covered.contains(&(rank, op.index)))
        });
        if !complete {
            return None;
        }
        let mut model = Model {
            traces,
            facts,
            sources: HashMap::default(),
            receipts: HashMap::default(),
            irecv_source: HashMap::default(),
            completes: HashMap::default(),
            completed_at: HashMap::default(),
            requests: vec![Vec::new(); size],
            any_calls: vec![Vec::new(); size],
            first_opaque: vec![None; size],
            handles: HashMap::default(),
            handle_span: HashMap::default(),
            never_completed: HashMap::default(),
            loose: vec![Vec::new(); size],
            finalize: traces
                .iter()
                .map(|t| {
                    t.ops
                        .iter()
                        .find(|op| op.kind == OpKind::Finalize)
                        .map_or(0, |op| op.index)
                })
                .collect(),
        };
        let paired = model.read_completions();
        // Receives posted where their records say: the `Irecv` a `Wait`
        // names, or the one whose `Completed` record the `Matched` record
        // follows.
        let exact: Vec<Option<u64>> = matches
            .iter()
            .zip(&matched_at)
            .map(|(&(rank, receiver, _, _), &record)| {
                exact_posting(traces[rank], receiver)
                    .or_else(|| paired.get(&(rank, record)).copied())
            })
            .collect();
        for (&(rank, _, sender, send), posted) in matches.iter().zip(&exact) {
            if let Some(irecv) =
                posted.filter(|&p| traces[rank].ops[p as usize].kind.is_nonblocking_receive())
            {
                model
                    .irecv_source
                    .insert((rank, irecv), (sender, send.index));
            }
        }
        let unclaimed = model.unclaimed_irecvs();
        for ((rank, receiver, sender, send), posted) in matches.into_iter().zip(exact) {
            let posted = match posted {
                Some(p) => Some((p, true)),
                None => {
                    model.loose[rank].push((receiver.index, sender, send.index));
                    model
                        .earliest_irecv(&unclaimed[rank], sender, send)
                        .filter(|&p| p < receiver.index)
                        .map(|p| (p, false))
                }
            };
            model
                .sources
                .entry((rank, receiver.index))
                .or_default()
                .push((sender, send.index));
            model.receipts.insert(
                (sender, send.index),
                Receipt {
                    rank,
                    posted: posted.map(|(p, _)| p),
                    exact: posted.is_some_and(|(_, exact)| exact),
                },
            );
        }
        Some(model)
    }

    /// Fills `completes`, `completed_at`, `requests`, `any_calls` and
    /// `first_opaque`. Returns, for each `Matched` record `(rank, record)`
    /// of a receive completed by a call on several requests, the `Irecv` it
    /// completed: the runtime writes a request's `Completed` record just
    /// before processing it, and so before its `Matched` record.
    fn read_completions(&mut self) -> HashMap<(usize, u64), u64> {
        let mut paired = HashMap::default();
        for (rank, trace) in self.traces.iter().enumerate() {
            let mut last: HashMap<u64, u64> = HashMap::default();
            for op in &trace.ops {
                match op.kind {
                    OpKind::Completed => {
                        let made = op.completed_request().and_then(|done| {
                            let made = trace.ops.get(done.origin as usize)?;
                            (is_request(made) && made.index < done.call && done.call < op.index)
                                .then_some((done.call, made.index))
                        });
                        if let Some((call, made)) = made {
                            self.complete(rank, call, made);
                            last.insert(call, made);
                        }
                    }
                    OpKind::Matched => {
                        let receiver = op.matched_send().map(|m| m.receiver);
                        if let Some(&made) = receiver.and_then(|r| last.get(&r)) {
                            if trace.ops[made as usize].kind.is_nonblocking_receive() {
                                paired.insert((rank, op.index), made);
                            }
                        }
                    }
                    OpKind::Wait | OpKind::Test if !op.has(flags::FAILED) => {
                        if let Some(made) = request_origin(trace, op) {
                            self.complete(rank, op.index, made.index);
                        }
                    }
                    kind if kind.is_nonblocking_collective() => {
                        self.first_opaque[rank].get_or_insert(op.index);
                    }
                    _ if is_request(op) => {
                        self.requests[rank].push(op.index);
                        self.handles
                            .entry((rank, op.request))
                            .or_default()
                            .push(op.index);
                    }
                    _ => {}
                }
            }
        }
        for (&(rank, call), _) in self.completes.iter() {
            if matches!(
                self.traces[rank].ops[call as usize].kind,
                OpKind::Waitany | OpKind::Waitsome
            ) {
                self.any_calls[rank].push(call);
            }
        }
        for calls in &mut self.any_calls {
            calls.sort_unstable();
        }
        for (&key, made) in &self.handles {
            let (rank, _) = key;
            let mut span = 0;
            let mut never = Vec::new();
            for &request in made {
                match self.completed_at.get(&(rank, request)) {
                    Some(&call) => span = span.max(call.saturating_sub(request)),
                    None => never.push(request),
                }
            }
            self.handle_span.insert(key, span);
            if !never.is_empty() {
                self.never_completed.insert(key, never);
            }
        }
        paired
    }

    /// The requests of `rank` made with `handle` before record `call`,
    /// other than `made`, that no call before or at `call` completed (in
    /// record order): what a completion of `made` by `call` may stand for
    /// (see [`Model::send_request_cond`]).
    ///
    /// The same as filtering all of `handles[(rank, handle)]`, without
    /// reading every request the handle was ever recycled for (MPICH
    /// recycles a handle for each step of a loop, which made this
    /// quadratic in the trace, issue 13): a request completed at `c`
    /// with `c - r <= span` and `r + span <= call` has `c <= call`, so
    /// before the window `r + span > call` only requests never completed
    /// can qualify.
    fn open_twins(&self, rank: usize, handle: u64, made: u64, call: u64) -> Vec<u64> {
        if handle == 0 {
            return Vec::new();
        }
        let key = (rank, handle);
        let list = self.handles.get(&key).map_or(&[][..], Vec::as_slice);
        let span = self.handle_span.get(&key).copied().unwrap_or(0);
        let window = list.partition_point(|&r| r.saturating_add(span) <= call);
        let end = list.partition_point(|&r| r < call).max(window);
        let qualifies = |&r: &u64| {
            r != made && r < call && self.completed_at.get(&(rank, r)).is_none_or(|&c| c > call)
        };
        let bound = list.get(window).copied().unwrap_or(u64::MAX);
        let never = self
            .never_completed
            .get(&key)
            .map_or(&[][..], Vec::as_slice);
        never
            .iter()
            .take_while(|&&r| r < bound)
            .chain(&list[window..end])
            .copied()
            .filter(qualifies)
            .collect()
    }

    /// Notes that record `call` of `rank` completed the request `made`.
    fn complete(&mut self, rank: usize, call: u64, made: u64) {
        if self.completed_at.insert((rank, made), call).is_none() {
            self.completes.entry((rank, call)).or_default().push(made);
        }
    }

    /// Per rank, the earliest `Irecv` with each [`IrecvKey`], leaving out
    /// those a call naming them completed.
    fn unclaimed_irecvs(&self) -> Vec<HashMap<IrecvKey, u64>> {
        self.traces
            .iter()
            .enumerate()
            .map(|(rank, trace)| {
                let mut earliest = HashMap::default();
                for op in trace.ops.iter().filter(|op| {
                    op.kind.is_nonblocking_receive()
                        && !op.has(flags::FAILED)
                        && !op.has(flags::CANCELLED)
                        && !op.has(flags::PROC_NULL)
                        && !self.irecv_source.contains_key(&(rank, op.index))
                }) {
                    let world = self.facts.in_world(op.comm);
                    // The program's pattern: the analysis asks what a run
                    // of the program without buffering does, where a
                    // wildcard this replay forced is a wildcard again.
                    let pattern = RecvPattern::as_written(op);
                    let key = (world, pattern.source.filter(|_| world), pattern.tag);
                    earliest.entry(key).or_insert(op.index);
                }
                earliest
            })
            .collect()
    }

    /// The earliest of `unclaimed` (a rank's) that may take the message of
    /// `send` (of `sender`): sources on other communicators cannot be
    /// translated, any is accepted there.
    fn earliest_irecv(
        &self,
        unclaimed: &HashMap<IrecvKey, u64>,
        sender: usize,
        send: &Op,
    ) -> Option<u64> {
        let tag = SendSide::of(send)?.tag;
        let world = self.facts.in_world(send.comm);
        let source = world.then_some(sender as i32);
        [
            (world, source, Some(tag)),
            (world, None, Some(tag)),
            (world, source, None),
            (world, None, None),
        ]
        .iter()
        .filter_map(|key| unclaimed.get(key).copied())
        .min()
    }

    /// When `op`, record of `rank`, is passed.
    fn cond(&self, rank: usize, op: &Op) -> Cond {
        if op.has(flags::FAILED) {
            return Cond::default();
        }
        match op.kind {
            OpKind::Wait | OpKind::Waitall => {
                let mut cond = Cond::default();
                let made = self.completes.get(&(rank, op.index)).into_iter().flatten();
                for &made in made {
                    if self.traces[rank].ops[made as usize]
                        .kind
                        .is_nonblocking_send()
                    {
                        self.send_request_cond(rank, op.index, made, &mut cond);
                    }
                }
                // Its receives: from their `Matched` records, which name
                // the call (exact whether or not the runtime wrote
                // `Completed` records).
                if op.kind == OpKind::Waitall
                    || request_origin(self.traces[rank], op)
                        .is_some_and(|o| o.kind.is_nonblocking_receive())
                {
                    self.receive_needs(rank, op.index, &mut cond.all);
                }
                cond
            }
            OpKind::Waitany | OpKind::Waitsome => self.any_cond(rank, op),
            _ => Cond::all(self.needs(rank, op)),
        }
    }

    /// Adds the condition of the send request made at record `made`, which
    /// call `call` completed, to `cond`. MPICH hands every send that
    /// completed eagerly the same handle, and the runtime then credits a
    /// completion to the latest request with the handle (the older ones it
    /// completes itself, unrecorded): the program may have meant any of
    /// them, so any of them completing lets the call pass.
    fn send_request_cond(&self, rank: usize, call: u64, made: u64, cond: &mut Cond) {
        let handle = self.traces[rank].ops[made as usize].request;
        let twins = self.open_twins(rank, handle, made, call);
        if twins.is_empty() {
            self.request_needs(rank, made, &mut cond.all);
            return;
        }
        let mut groups = Vec::new();
        for request in std::iter::once(made).chain(twins) {
            let mut group = Vec::new();
            self.request_needs(rank, request, &mut group);
            if group.is_empty() {
                return;
            }
            groups.push(group);
        }
        cond.clauses.push((1, groups));
    }

    /// The condition of a `Waitany`/`Waitsome` (seed 003 §3.1 rule 3: it
    /// returns once any of its requests completes). The trace does not list
    /// the requests the call was given, so its *pool* is every request the
    /// rank made before it that no `Wait`/`Waitall` before it completed
    /// (more than it was given: easier to pass, so never a false report).
    /// Without buffering, the call may complete another request of its
    /// pool than the run did, but each `Waitany`/`Waitsome` before it that
    /// completed a request took at least one request of this pool that
    /// could complete, and completable stays completable: it passes when
    /// more requests of its pool can complete than there were such calls.
    /// A call that completed nothing (all its requests inactive) passes.
    fn any_cond(&self, rank: usize, op: &Op) -> Cond {
        let pass = Cond::default();
        if !self.completes.contains_key(&(rank, op.index))
            || self.first_opaque[rank].is_some_and(|c| c < op.index)
        {
            return pass;
        }
        let before = |list: &[u64]| list.partition_point(|&i| i < op.index);
        let made = &self.requests[rank][..before(&self.requests[rank])];
        let taken = before(&self.any_calls[rank]);
        let mut groups = Vec::new();
        let mut free = 0usize;
        for &request in made {
            let done_before = self.completed_at.get(&(rank, request)).is_some_and(|&c| {
                c < op.index
                    && matches!(
                        self.traces[rank].ops[c as usize].kind,
                        OpKind::Wait | OpKind::Waitall
                    )
            });
            if done_before {
                continue;
            }
            let mut group = Vec::new();
            self.request_needs(rank, request, &mut group);
            let origin = &self.traces[rank].ops[request as usize];
            if origin.kind.is_nonblocking_receive() {
                if let Some(&(sender, send)) = self.irecv_source.get(&(rank, request)) {
                    group.push(Need {
                        rank: sender,
                        op: send,
                        standard: false,
                        origin: Some(request),
                    });
                }
            }
            if group.is_empty() {
                // Can always complete: counted, not stored.
                free += 1;
                if free > taken {
                    return pass;
                }
            } else {
                groups.push(group);
            }
            if groups.len() > POOL_LIMIT {
                return pass;
            }
        }
        Cond {
            all: Vec::new(),
            clauses: vec![(taken + 1 - free.min(taken), groups)],
        }
    }

    /// The conditions of the send request made at record `made` of `rank`:
    /// the receive that took its message was posted (standard mode and
    /// synchronous mode; a buffered or ready send waits for nothing). A
    /// receive request's conditions are its `Matched` records'.
    fn request_needs(&self, rank: usize, made: u64, needs: &mut Vec<Need>) {
        let origin = &self.traces[rank].ops[made as usize];
        if origin.has(flags::FAILED) || origin.has(flags::CANCELLED) {
            return;
        }
        let standard = match origin.kind {
            OpKind::Isend | OpKind::StartSend => true,
            OpKind::Issend | OpKind::StartSsend => false,
            _ => return,
        };
        let from = needs.len();
        self.send_need(rank, made, standard, needs);
        for need in &mut needs[from..] {
            need.origin = Some(made);
        }
    }

    /// The conditions of `op`, record of `rank`, other than the calls on
    /// several requests ([`Model::cond`]).
    fn needs(&self, rank: usize, op: &Op) -> Vec<Need> {
        let mut needs = Vec::new();
        if op.has(flags::FAILED) {
            return needs;
        }
        match op.kind {
            OpKind::Send => self.send_need(rank, op.index, true, &mut needs),
            OpKind::Ssend => self.send_need(rank, op.index, false, &mut needs),
            OpKind::Recv => self.receive_needs(rank, op.index, &mut needs),
            OpKind::Sendrecv | OpKind::SendrecvReplace => {
                self.receive_needs(rank, op.index, &mut needs);
                self.send_need(rank, op.index, true, &mut needs);
            }
            OpKind::Finalize => {
                needs.extend((0..self.traces.len()).filter(|&q| q != rank).map(|q| Need {
                    rank: q,
                    op: self.finalize[q],
                    standard: false,
                    origin: None,
                }))
            }
            kind if kind.class() == OpClass::Collective
                && !kind.is_nonblocking_collective()
                && self.facts.in_world(op.comm) =>
            {
                let colls = &self.facts.collectives;
                let Ok(sequence) = colls[rank].binary_search_by_key(&op.index, |c| c.index) else {
                    return needs;
                };
                // A rank without this instance: a mismatch the library
                // tolerated; not modelled.
                let instance: Option<Vec<Need>> = (0..colls.len())
                    .filter(|&q| q != rank)
                    .map(|q| {
                        colls[q].get(sequence).map(|c| Need {
                            rank: q,
                            op: c.index,
                            standard: false,
                            origin: None,
                        })
                    })
                    .collect();
                needs.extend(instance.unwrap_or_default());
            }
            // Isend, Irecv, Bsend, Rsend, the `Test` forms (a test that
            // completed a request in the run may return false without
            // buffering, and the trace does not say what the program does
            // then: see the module docs), probes, markers, clock records,
            // ...: never wait.
            _ => {}
        }
        needs
    }

    /// A send's condition: the receive that took its message was posted.
    fn send_need(&self, rank: usize, send: u64, standard: bool, needs: &mut Vec<Need>) {
        if let Some(receipt) = self.receipts.get(&(rank, send)) {
            if let Some(posted) = receipt.posted {
                needs.push(Need {
                    rank: receipt.rank,
                    op: posted,
                    standard,
                    origin: None,
                });
            }
        }
    }

    /// A receive's conditions: the sends its messages came from were issued.
    fn receive_needs(&self, rank: usize, record: u64, needs: &mut Vec<Need>) {
        for &(sender, send) in self.sources.get(&(rank, record)).into_iter().flatten() {
            needs.push(Need {
                rank: sender,
                op: send,
                standard: false,
                origin: None,
            });
        }
    }

    /// Runs the transition system to its terminal state: each rank's
    /// record (its trace's length when it got to the end).
    fn run(&self) -> Vec<u64> {
        let size = self.traces.len();
        let mut at = vec![0u64; size];
        // The condition of each rank's current record (a condition that
        // holds keeps holding).
        let mut current: Vec<Option<Cond>> = vec![None; size];
        // Ranks waiting for a rank to reach a record, earliest first.
        let mut waiting: Vec<BinaryHeap<Reverse<(u64, usize)>>> = vec![BinaryHeap::new(); size];
        let mut work: Vec<usize> = (0..size).rev().collect();
        while let Some(r) = work.pop() {
            while let Some(op) = self.traces[r].ops.get(at[r] as usize) {
                let cond = current[r].get_or_insert_with(|| self.cond(r, op));
                if let Some(unmet) = cond.unmet(&at, false) {
                    for need in unmet {
                        waiting[need.rank].push(Reverse((need.op, r)));
                    }
                    break;
                }
                at[r] += 1;
                current[r] = None;
                while let Some(&Reverse((op, waiter))) = waiting[r].peek() {
                    if op > at[r] {
                        break;
                    }
                    waiting[r].pop();
                    work.push(waiter);
                }
            }
        }
        at
    }

    /// Whether, in the terminal state `at`, a posted `MPI_ANY_SOURCE`
    /// receive whose message was not sent yet could take a send that was
    /// issued and that no receive posted before it takes (seed 003 §3.3).
    fn unexpected_match(&self, at: &[u64]) -> bool {
        let size = self.traces.len();
        let sent = self.loose_sent(at);
        // The posted wildcard receives waiting for their message: per rank,
        // the earliest posted for each (on MPI_COMM_WORLD, tag or None for
        // MPI_ANY_TAG); and over all ranks, for other communicators.
        let mut open: Vec<HashMap<(bool, Option<i32>), u64>> = vec![HashMap::default(); size];
        let mut open_elsewhere: HashMap<(bool, Option<i32>), u64> = HashMap::default();
        for (rank, trace) in self.traces.iter().enumerate() {
            let here = at[rank];
            let end = (here as usize + 1).min(trace.ops.len());
            for op in &trace.ops[..end] {
                if !op.has(flags::ANY_SOURCE) || op.has(flags::FAILED) || op.has(flags::CANCELLED) {
                    continue;
                }
                let waiting = match op.kind {
                    kind if kind.is_nonblocking_receive() && op.index < here => {
                        match self.irecv_source.get(&(rank, op.index)) {
                            Some(&(s, n)) => at[s] < n,
                            None => !surely_sent(&sent[rank], op, self.facts.in_world(op.comm)),
                        }
                    }
                    OpKind::Recv | OpKind::Sendrecv | OpKind::SendrecvReplace
                        if op.index == here =>
                    {
                        self.sources
                            .get(&(rank, here))
                            .into_iter()
                            .flatten()
                            .any(|&(s, n)| at[s] < n)
                    }
                    _ => false,
                };
                if waiting {
                    let world = self.facts.in_world(op.comm);
                    let key = (world, RecvPattern::as_written(op).tag);
                    open[rank].entry(key).or_insert(op.index);
                    if !world {
                        let first = open_elsewhere.entry(key).or_insert(op.index);
                        *first = (*first).min(op.index);
                    }
                }
            }
        }
        if open.iter().all(HashMap::is_empty) {
            return false;
        }
        // The earliest posted open wildcard in `open` that accepts `send`.
        let taker = |open: &HashMap<(bool, Option<i32>), u64>, send: &SendSide| {
            let world = self.facts.in_world(send.comm);
            [(world, Some(send.tag)), (world, None)]
                .iter()
                .filter_map(|key| open.get(key).copied())
                .min()
        };
        for (sender, trace) in self.traces.iter().enumerate() {
            let end = (at[sender] as usize + 1).min(trace.ops.len());
            // A `Sendrecv`'s `PROC_NULL` flag is its receive half's:
            // `SendSide` decides from the send half.
            for (send, side) in trace.ops[..end]
                .iter()
                .filter(|op| !op.has(flags::FAILED))
                .filter_map(|op| Some((op, SendSide::of(op)?)))
            {
                let candidate = match self.receipts.get(&(sender, send.index)) {
                    // Taken by a receive not posted before the wildcard (a
                    // wildcard posted first would have taken it).
                    Some(receipt) => taker(&open[receipt.rank], &side).is_some_and(|wildcard| {
                        !receipt.exact || receipt.posted.is_none_or(|p| wildcard < p)
                    }),
                    // Never received: still pending at its destination.
                    None if self.facts.in_world(side.comm) => usize::try_from(side.dest)
                        .ok()
                        .and_then(|d| open.get(d))
                        .is_some_and(|open| taker(open, &side).is_some()),
                    // Another communicator: any destination.
                    None => taker(&open_elsewhere, &side).is_some(),
                };
                if candidate {
                    return true;
                }
            }
        }
        false
    }

    /// Per rank, the messages that calls not naming their `Irecv`s took,
    /// by (source: `Some` world rank, `None` any; tag): the latest such
    /// call, and the latest whose message was not sent in state `at`.
    fn loose_sent(&self, at: &[u64]) -> Vec<LooseSent> {
        self.loose
            .iter()
            .map(|taken| {
                let mut sent = HashMap::default();
                for &(record, sender, send) in taken {
                    let Some(SendSide { tag, .. }) =
                        SendSide::of(&self.traces[sender].ops[send as usize])
                    else {
                        continue;
                    };
                    let unsent = at[sender] < send;
                    for key in [(Some(sender as i32), tag), (None, tag)] {
                        let (latest, latest_unsent): &mut (u64, Option<u64>) =
                            sent.entry(key).or_default();
                        *latest = (*latest).max(record);
                        if unsent {
                            *latest_unsent = (*latest_unsent).max(Some(record));
                        }
                    }
                }
                sent
            })
            .collect()
    }

    /// The witness entry of stuck rank `rank`.
    fn stuck(&self, rank: usize, at: &[u64]) -> StuckRank {
        let trace = self.traces[rank];
        let op = &trace.ops[at[rank] as usize];
        let unmet: Vec<Need> = self.cond(rank, op).unmet(at, true).unwrap_or_default();
        // For a call on several requests, the first stuck standard send's.
        let origin = match op.kind {
            OpKind::Wait => request_origin(trace, op).map(|o| o.index),
            _ => unmet
                .iter()
                .filter(|n| n.standard)
                .chain(&unmet)
                .find_map(|n| n.origin),
        };
        StuckRank {
            rank: rank as i32,
            op_index: op.index,
            kind: op.kind,
            site: op.site,
            origin,
            standard_send: unmet.iter().any(|n| n.standard),
            waits_for: unmet
                .iter()
                .map(|n| {
                    let target = &self.traces[n.rank].ops[n.op as usize];
                    Awaited {
                        rank: n.rank as i32,
                        op_index: n.op,
                        kind: target.kind,
                        site: target.site,
                    }
                })
                .collect(),
        }
    }
}

/// An `Irecv`'s arguments, for finding the ones that may take a message:
/// whether on `MPI_COMM_WORLD`, its source (`None`: `MPI_ANY_SOURCE`, or
/// another communicator's rank) and tag (`None`: `MPI_ANY_TAG`).
type IrecvKey = (bool, Option<i32>, Option<i32>);

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

/// A rank's messages taken by `Irecv`s that a call not naming them
/// completed, by (source: `Some` world rank, `None` any; tag): the latest
/// such call, and the latest whose message was not sent (see
/// [`Model::loose_sent`]).
type LooseSent = HashMap<(Option<i32>, i32), (u64, Option<u64>)>;

/// Whether the message of `irecv`, an `Irecv` completed by a call that does
/// not name it, was surely sent: every message from its status's source
/// and tag that such a call after it took was (`sent`: the rank's
/// [`Model::loose_sent`]).
fn surely_sent(sent: &LooseSent, irecv: &Op, world: bool) -> bool {
    let Some((source, tag)) = irecv.matched else {
        return false;
    };
    let key = (world.then_some(source), tag);
    sent.get(&key).is_some_and(|&(latest, latest_unsent)| {
        latest > irecv.index && latest_unsent.is_none_or(|u| u < irecv.index)
    })
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

/// The wait-for graph of the stuck ranks, its cycle and knot.
fn witness(size: usize, stuck: Vec<StuckRank>) -> BufferingHazard {
    let mut graph: DiGraph<i32, ()> = DiGraph::with_capacity(size, 0);
    let nodes: Vec<NodeIndex> = (0..size).map(|r| graph.add_node(r as i32)).collect();
    for s in &stuck {
        for w in &s.waits_for {
            graph.update_edge(nodes[s.rank as usize], nodes[w.rank as usize], ());
        }
    }
    let mut knot = Vec::new();
    let mut cycle: Vec<i32> = Vec::new();
    for scc in kosaraju_scc(&graph) {
        if scc.len() == 1 && !graph.contains_edge(scc[0], scc[0]) {
            continue;
        }
        let lowest = scc.iter().map(|&n| graph[n]).min();
        if cycle.is_empty() || lowest < cycle.iter().min().copied() {
            cycle = find_cycle(&graph, &scc);
        }
        knot.extend(scc.iter().map(|&n| graph[n]));
    }
    knot.sort_unstable();
    BufferingHazard { stuck, cycle, knot }
}

#[cfg(test)]
mod tests;
