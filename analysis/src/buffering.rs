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
//! 4096 requests each). A world collective's instance counts its arrivals
//! (`gates.rs`) rather than hold a condition on every other rank, which
//! was `ranks²` per instance. The facts are read rank by rank in parallel
//! into per-rank arrays (`read.rs`, `record_map.rs`); the fixpoint is
//! sequential.

use crate::deadlock::{find_cycle, request_origin};
use crate::record_map::{partition_point_near, RecordMap};
use gates::Gates;
use mbh_trace::envelope::{RecvPattern, SendSide};
use mbh_trace::op::{flags, OpClass};
use mbh_trace::rank_trace::{Op, RankState, RankTrace};
use mbh_trace::OpKind;
use petgraph::algo::kosaraju_scc;
use petgraph::graph::{DiGraph, NodeIndex};
use rustc_hash::FxHashMap as HashMap;
use std::cell::Cell;
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

/// Where the message of a send went (16 bytes: there is one per message).
#[derive(Debug, Clone, Copy)]
struct Receipt {
    /// The receiving rank.
    rank: u32,
    /// Whether `posted` is exact; otherwise it is the earliest record the
    /// receive can have been posted at.
    exact: bool,
    /// Where the receive was posted: the `Recv`/`Sendrecv`, or the `Irecv`;
    /// [`NO_RECORD`] when unknown.
    posted: u64,
}

impl Receipt {
    fn rank(&self) -> usize {
        self.rank as usize
    }

    fn posted(&self) -> Option<u64> {
        (self.posted != NO_RECORD).then_some(self.posted)
    }
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
    /// `MPI_COMM_WORLD`'s communicator, as the traces name it (that of the
    /// first `MPI_Init` record).
    world: Option<u64>,
    /// What each rank's records say, by rank.
    ranks: Vec<RankFacts>,
    /// World collective instances every rank has (the fewest any has).
    common_instances: usize,
}

/// A request handle of one rank, and the requests made with it (MPICH
/// recycles a handle for each step of a loop).
#[derive(Debug, Default)]
struct Handle {
    /// The requests made with it, in order.
    made: Vec<u64>,
    /// The longest a request of `made` stayed open (its completing
    /// record's index minus its own), over those completed; it bounds
    /// which of them can still be open at a call (`open_twins`).
    span: u64,
    /// The requests of `made` that no call completed, in order.
    never_completed: Vec<u64>,
    /// Where the last search of `made` ended (`open_twins`).
    hint: Cell<usize>,
}

/// No record, in a per-record array.
const NO_RECORD: u64 = u64::MAX;

/// What one rank's records say, for the transition system: per-rank
/// arrays indexed or sorted by record (`record_map.rs` says why).
#[derive(Default)]
struct RankFacts {
    /// Its collectives on `MPI_COMM_WORLD`, in order (record indices).
    collectives: Vec<u64>,
    /// Index of its `MPI_Finalize`.
    finalize: u64,
    /// By receiving record: the sends `(rank, record)` whose messages it
    /// took.
    sources: RecordMap<(usize, u64)>,
    /// By send record: where its message went.
    receipts: RecordMap<Receipt>,
    /// By `Irecv`: the send it took, when the call that completed it
    /// names it.
    irecv_source: RecordMap<(usize, u64)>,
    /// The messages taken by `Irecv`s that a call not naming them
    /// completed (`Waitall`, ...): (completing record, sender, send).
    loose: Vec<(u64, usize, u64)>,
    /// By completion call: the requests (records that made them) it
    /// completed: from `Completed` records for the calls on several
    /// requests, from the record itself for `Wait`/`Test`.
    completes: RecordMap<u64>,
    /// By record: the call that completed the request it made
    /// ([`NO_RECORD`]: none, or not a request).
    completed_at: Vec<u64>,
    /// The point-to-point requests made (records of `Isend`, `Irecv`,
    /// `Start`, ...), in order.
    requests: Vec<u64>,
    /// The `Waitany`/`Waitsome` records that completed a request, in
    /// order.
    any_calls: Vec<u64>,
    /// Its request handles.
    handles: HashMap<u64, Handle>,
    /// The first nonblocking collective, whose request a `Waitany` may
    /// complete though the pool does not model it.
    first_opaque: Option<u64>,
}

impl<'a> Model<'a> {
    fn in_world(&self, comm: u64) -> bool {
        self.world == Some(comm)
    }

    /// The call that completed the request `made` of `rank`, if any.
    fn completed_at(&self, rank: usize, made: u64) -> Option<u64> {
        let at = *self.ranks[rank].completed_at.get(made as usize)?;
        (at != NO_RECORD).then_some(at)
    }

    /// The requests of `rank` made with `handle` before record `call`,
    /// other than `made`, that no call before or at `call` completed (in
    /// record order): what a completion of `made` by `call` may stand for
    /// (see [`Model::send_request_cond`]).
    ///
    /// The same as filtering all of the handle's requests, without
    /// reading every request the handle was ever recycled for (MPICH
    /// recycles a handle for each step of a loop, which made this
    /// quadratic in the trace): a request completed at `c`
    /// with `c - r <= span` and `r + span <= call` has `c <= call`, so
    /// before the window `r + span > call` only requests never completed
    /// can qualify.
    fn open_twins(&self, rank: usize, handle: u64, made: u64, call: u64) -> Vec<u64> {
        if handle == 0 {
            return Vec::new();
        }
        let Some(handle) = self.ranks[rank].handles.get(&handle) else {
            return Vec::new();
        };
        let list = &handle.made[..];
        let span = handle.span;
        // Searched from where the last search of the handle ended: its
        // calls come in about record order.
        let window =
            partition_point_near(list, handle.hint.get(), |&r| r.saturating_add(span) <= call);
        let end = partition_point_near(list, window, |&r| r < call).max(window);
        handle.hint.set(window);
        let qualifies =
            |&r: &u64| r != made && r < call && self.completed_at(rank, r).is_none_or(|c| c > call);
        let bound = list.get(window).copied().unwrap_or(u64::MAX);
        handle
            .never_completed
            .iter()
            .take_while(|&&r| r < bound)
            .chain(&list[window..end])
            .copied()
            .filter(qualifies)
            .collect()
    }

    /// The world collective instance record `op` of `rank` is, when its
    /// condition is that every other rank reached its own instance (every
    /// rank has one): the fixpoint counts arrivals at it ([`Gates`])
    /// rather than test a condition on each other rank.
    fn world_instance(&self, rank: usize, op: &Op) -> Option<usize> {
        if op.kind.class() != OpClass::Collective
            || op.kind.is_nonblocking_collective()
            || op.has(flags::FAILED)
            || !self.in_world(op.comm)
        {
            return None;
        }
        let sequence = self.ranks[rank].collectives.binary_search(&op.index).ok()?;
        (sequence < self.common_instances).then_some(sequence)
    }

    /// When `op`, record of `rank`, is passed.
    fn cond(&self, rank: usize, op: &Op) -> Cond {
        if op.has(flags::FAILED) {
            return Cond::default();
        }
        match op.kind {
            OpKind::Wait | OpKind::Waitall => {
                let mut cond = Cond::default();
                for &made in self.ranks[rank].completes.all(op.index) {
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
        let facts = &self.ranks[rank];
        if !facts.completes.contains(op.index) || facts.first_opaque.is_some_and(|c| c < op.index) {
            return pass;
        }
        let before = |list: &[u64]| list.partition_point(|&i| i < op.index);
        let made = &facts.requests[..before(&facts.requests)];
        let taken = before(&facts.any_calls);
        let mut groups = Vec::new();
        let mut free = 0usize;
        for &request in made {
            let done_before = self.completed_at(rank, request).is_some_and(|c| {
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
                if let Some(&(sender, send)) = facts.irecv_source.get(request) {
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
                    op: self.ranks[q].finalize,
                    standard: false,
                    origin: None,
                }))
            }
            kind if kind.class() == OpClass::Collective
                && !kind.is_nonblocking_collective()
                && self.in_world(op.comm) =>
            {
                let Ok(sequence) = self.ranks[rank].collectives.binary_search(&op.index) else {
                    return needs;
                };
                // A rank without this instance: a mismatch the library
                // tolerated; not modelled.
                let instance: Option<Vec<Need>> = (0..self.ranks.len())
                    .filter(|&q| q != rank)
                    .map(|q| {
                        self.ranks[q].collectives.get(sequence).map(|&c| Need {
                            rank: q,
                            op: c,
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
        if let Some(receipt) = self.ranks[rank].receipts.get(send) {
            if let Some(posted) = receipt.posted() {
                needs.push(Need {
                    rank: receipt.rank(),
                    op: posted,
                    standard,
                    origin: None,
                });
            }
        }
    }

    /// A receive's conditions: the sends its messages came from were issued.
    fn receive_needs(&self, rank: usize, record: u64, needs: &mut Vec<Need>) {
        for &(sender, send) in self.ranks[rank].sources.all(record) {
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
        let mut gates = Gates::new(self, &mut work);
        while let Some(r) = work.pop() {
            while let Some(op) = self.traces[r].ops.get(at[r] as usize) {
                if let Some(instance) = self.world_instance(r, op) {
                    if !gates.is_open(instance) {
                        gates.wait(instance, r);
                        break;
                    }
                } else {
                    let cond = current[r].get_or_insert_with(|| self.cond(r, op));
                    if let Some(unmet) = cond.unmet(&at, false) {
                        for need in unmet {
                            waiting[need.rank].push(Reverse((need.op, r)));
                        }
                        break;
                    }
                }
                at[r] += 1;
                current[r] = None;
                gates.reached(self, r, at[r], &mut work);
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
                        match self.ranks[rank].irecv_source.get(op.index) {
                            Some(&(s, n)) => at[s] < n,
                            None => !surely_sent(&sent[rank], op, self.in_world(op.comm)),
                        }
                    }
                    OpKind::Recv | OpKind::Sendrecv | OpKind::SendrecvReplace
                        if op.index == here =>
                    {
                        self.ranks[rank]
                            .sources
                            .all(here)
                            .iter()
                            .any(|&(s, n)| at[s] < n)
                    }
                    _ => false,
                };
                if waiting {
                    let world = self.in_world(op.comm);
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
            let world = self.in_world(send.comm);
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
                let candidate = match self.ranks[sender].receipts.get(send.index) {
                    // Taken by a receive not posted before the wildcard (a
                    // wildcard posted first would have taken it).
                    Some(receipt) => taker(&open[receipt.rank()], &side).is_some_and(|wildcard| {
                        !receipt.exact || receipt.posted().is_none_or(|p| wildcard < p)
                    }),
                    // Never received: still pending at its destination.
                    None if self.in_world(side.comm) => usize::try_from(side.dest)
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
        self.ranks
            .iter()
            .map(|facts| {
                let mut sent = HashMap::default();
                for &(record, sender, send) in &facts.loose {
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

mod gates;
mod read;

#[cfg(test)]
mod tests;
