//! Deadlock analysis on the wait-for graph of a snapshot of all ranks'
//! traces, taken while the job runs (DESIGN.md "Deadlocks", seed 003).
//!
//! # Semantics
//!
//! A job is deadlocked when every live rank (one that has not finalized,
//! exited, died of a signal or aborted) is blocked in an MPI call and no
//! blocked call can complete. Then no rank can ever act again, and the
//! wait-for graph (an arc from each blocked rank to the ranks that would
//! have to act for its call to complete) is the witness:
//!
//! | blocked in | can complete when | waits for |
//! | --- | --- | --- |
//! | `Recv`/`Probe` from `s`, `Wait` on such an `Irecv` | its own `Matched` record is written (MPI returned it), or an issued send from `s` to it, compatible tag and communicator, is not taken by an earlier receive | `s` (AND) |
//! | the same from `MPI_ANY_SOURCE` | such a send exists from any rank | every other member of the communicator (OR) |
//! | `Sendrecv` | both halves can, each as above | the union (AND; an OR receive half adds nothing) |
//! | `Send`/`Ssend`/`Rsend` to `d`, `Wait` on such an `Isend` | a receive of `d` already took it, or `d` has a posted receive that can take it (a blocked `Recv`/`Probe`, an `Irecv` not completed) | `d` (AND) |
//! | a collective on `MPI_COMM_WORLD` or a named communicator | every member reached the same collective (same sequence number on that communicator) | the members that have not (AND) |
//! | `Wait` on a nonblocking collective's request | the same, for the collective that made it | the members that have not (AND) |
//! | `MPI_Finalize` | every rank reached `MPI_Finalize` | the ranks that have not (AND) |
//! | `MPI_Win_wait` | every origin of its post's group called `MPI_Win_complete` for that epoch (`pscw.rs`) | the origins that have not (AND) |
//! | `Waitall` | every request it lists can complete (its [`OpKind::WaitRequest`] records) | what the first that cannot waits for, as a `Wait` on it would (AND) |
//! | `Waitany`/`Waitsome` | one request it lists can complete | the union of what they wait for (OR) |
//! | `Waitall`/`Waitany`/`Waitsome` that lists none (it has not waited long enough to list them, or it is a poll series) | one of the rank's outstanding requests can complete | the union (OR) |
//!
//! # Collectives on communicators
//!
//! A nonblocking collective completes only once every member of its
//! communicator posted the same collective (MPI-4.0 §6.12: nonblocking
//! collectives match in the order they are called on the communicator,
//! like blocking ones), so a rank waiting on its request waits exactly as
//! a rank blocked in the blocking form does (seed 003 §3: an AND node on
//! the members that have not arrived). The trace ties each collective
//! record to its communicator (renamed to the id every member shares, see
//! [`OpKind::CommId`]) and its sequence number on it (the record's `tag`,
//! see [`mbh_trace::rank_trace::RawOp::tag`]); each `Wait` names the
//! record that made its request, and a waiting `Waitall`/`Waitany`/
//! `Waitsome` lists the records that made each of its requests
//! ([`OpKind::WaitRequest`]). A receive MPI completed inside a `Waitall`
//! still blocked, or while its rank waited or polled for something else,
//! is done, with the send it took, as its [`OpKind::Settled`] record
//! says: the runtime writes its `Matched` record only when the program
//! completes it (a `Waitall` when it returns), which may be never.
//! A communicator's members are `MPI_COMM_WORLD`'s ranks for the world,
//! and for a named communicator the ranks whose traces hold its
//! [`OpKind::CommId`] record (each member writes one when the communicator
//! is made).
//!
//! # Ranks of other communicators
//!
//! Point-to-point records name ranks of their communicator; the graph's
//! nodes are world ranks. Each member of a named communicator records its
//! rank there, so `CommRanks` translates both ways for every named
//! communicator, split or duplicated (a receive on a split from its rank
//! 2 may wait for world rank 0), and sends are kept by world destination
//! with the sender's rank in their communicator (what a receive's source
//! names).
//!
//! Sends "taken" by receives are counted per (source, destination,
//! communicator, tag) in the non-overtaking order: the `k`-th completed
//! receive of a tag takes the `k`-th send of that tag. `Matched` records
//! (which send a receive matched, exactly) are used instead when the
//! destination wrote one for each of its completed receives from that
//! source. Receives posted earlier and not yet completed take a send
//! first, in MPI's order (MPI-4.0 §3.5: a sender's messages in the order
//! sent, each to the earliest posted receive that accepts it) when none of
//! them is a wildcard on the same communicator: a wildcard `Irecv` waited
//! on gets nothing from a sender whose one message an earlier `Irecv` from
//! it accepts, even while the runtime has not processed that `Irecv`'s
//! completion (it does so when the program waits on it). With an earlier
//! wildcard among them, which receive a message reaches depends on which
//! sender's arrives first, and only earlier receives that accept exactly
//! the same messages are counted ahead.
//!
//! A rank blocked in a collective whose position another rank filled with
//! a different collective is a collective mismatch: its call never
//! completes, and [`Deadlock::collective_mismatches`] says so.
//!
//! # Conservative by construction
//!
//! When the analysis cannot tell whether a call can complete, it assumes it
//! can, and there is no deadlock: a slow run must never be called a
//! deadlock, and the caller falls back to its timeout. That covers
//! calls on communicators the runtime did not name (`MPI_COMM_SELF`,
//! intercommunicators, a naming that failed: their ranks and members
//! are unknown), calls this analysis does not model (`Bsend`, which
//! completes locally), a rank with no trace yet or running outside MPI,
//! and a `Wait` whose request is unknown. The caller also confirms a
//! deadlock only when two consecutive snapshots show [`no_progress`].
//!
//! # Polling loops
//!
//! A rank that repeats one poll (`MPI_Test*`, `MPI_Iprobe`, `MPI_Improbe`)
//! that finds nothing, with no other recorded call, waits as the blocking
//! call the poll stands for ([`RankTrace::polling`]), once the series is
//! [`POLLS_TO_BE_STUCK`] long and still growing between snapshots
//! ([`no_progress`]). A rank polling two things in turn is a rank outside
//! MPI, as before.

use crate::comm_ranks::CommRanks;
use mbh_trace::envelope::{RecvPattern, SendSide};
use mbh_trace::op::{flags, OpClass};
use mbh_trace::rank_trace::{Op, RankState, RankTrace};
use mbh_trace::record::MatchedSend;
use mbh_trace::OpKind;
use petgraph::algo::kosaraju_scc;
use petgraph::graph::{DiGraph, NodeIndex};
// FxHash: keys are ranks, record indices and communicator bits, where
// SipHash's protection from chosen keys buys nothing (as in the oracle and
// the buffering analysis); it was most of the check at 1,024 ranks.
use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};
use std::collections::{BTreeMap, BTreeSet, VecDeque};

/// What a blocked call waits for.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum WaitFor {
    /// Every one of these ranks must act (AND semantics).
    All(Vec<i32>),
    /// Any one of these ranks acting would do (OR semantics).
    Any(Vec<i32>),
}

impl WaitFor {
    /// The ranks waited for.
    pub fn ranks(&self) -> &[i32] {
        match self {
            WaitFor::All(r) | WaitFor::Any(r) => r,
        }
    }
}

/// One blocked rank of a deadlock.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BlockedRank {
    /// The rank.
    pub rank: i32,
    /// Index of the record of the call it is blocked in.
    pub op_index: u64,
    /// The call.
    pub kind: OpKind,
    /// Its site id (0: unknown).
    pub site: u32,
    /// For a `Wait`, index of the record that created its request; for a
    /// `Waitall`, of the one request that cannot complete it names.
    pub origin: Option<u64>,
    /// The call that made that request (`MPI_Isend`, `MPI_Irecv`, ...), so
    /// a report can point at the line the stuck request comes from.
    pub request: Option<RequestCall>,
    /// The collective the call waits on when it is one, or a `Wait` (or
    /// `Waitall`) on a nonblocking collective's request that cannot
    /// complete: the collective's record, kind and site, and where it
    /// stands on its communicator.
    pub collective: Option<PendingCollective>,
    /// What the call waits for.
    pub waits_for: WaitFor,
    /// When the rank is not blocked but polls (`kind` is then the call
    /// its poll stands for): the call it polls and how many times in a
    /// row it found nothing.
    pub polled: Option<(OpKind, u64)>,
}

/// A collective a blocked rank waits on: its own call, blocking or not.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PendingCollective {
    /// The rank's call of the collective.
    pub call: CollectiveCall,
    /// Whether the communicator is `MPI_COMM_WORLD`.
    pub world: bool,
    /// The call site of the constructor that made the communicator, when
    /// the runtime named it (not for `MPI_COMM_WORLD`).
    pub made_at: Option<u32>,
    /// 0-based sequence number on the communicator.
    pub sequence: usize,
}

/// The call that made the request a blocked `Wait` or `Waitall` cannot
/// complete without.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RequestCall {
    /// Index of its record.
    pub op_index: u64,
    /// The call.
    pub kind: OpKind,
    /// Its site id (0: unknown).
    pub site: u32,
}

/// A rank that ended and that a blocked rank waits for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DeadRank {
    /// The rank.
    pub rank: i32,
    /// How it ended.
    pub state: RankState,
    /// Whether it went through `MPI_Finalize` (a normal end).
    pub finalized: bool,
}

/// One rank's call at a position of a communicator's sequence of
/// collectives.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CollectiveCall {
    /// The rank.
    pub rank: i32,
    /// Index of its record.
    pub op_index: u64,
    /// The collective.
    pub kind: OpKind,
    /// Its site id.
    pub site: u32,
}

/// Ranks that called different collectives at the same position of their
/// sequence of collectives on one communicator.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CollectiveMismatch {
    /// The communicator (`MPI_COMM_WORLD`'s bits, or the id of a named one).
    pub comm: u64,
    /// 0-based position in the sequence.
    pub sequence: usize,
    /// The calls at that position, by rank (ranks that have not got there
    /// are absent).
    pub calls: Vec<CollectiveCall>,
}

/// A deadlock, with its witness.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Deadlock {
    /// Every live rank: the call it is blocked in and what it waits for.
    pub blocked: Vec<BlockedRank>,
    /// One cycle of the wait-for graph, in wait order (each rank waits for
    /// the next, the last for the first); empty when the ranks wait only
    /// for dead ranks or for mismatched collectives.
    pub cycle: Vec<i32>,
    /// The ranks of the wait-for graph's strongly connected components that
    /// contain a cycle (the other blocked ranks only wait for them), sorted.
    pub knot: Vec<i32>,
    /// Ranks that ended and that blocked ranks wait for.
    pub dead_ranks: Vec<DeadRank>,
    /// Whether the deadlock goes away if the dead ranks could still act:
    /// it is the consequence of ranks ending, not a wait cycle of the live
    /// ones. The caller reports a crash, exit or abort of a dead rank
    /// instead; when all of them finalized normally, the live ranks wait
    /// for messages that are never sent, which is still a deadlock.
    pub caused_by_dead_ranks: bool,
    /// Collectives that can never complete because ranks called different
    /// ones (report as `collective-mismatch`).
    pub collective_mismatches: Vec<CollectiveMismatch>,
}

impl Deadlock {
    /// Whether it only follows from ranks that ended without finalizing:
    /// their own findings (crash, abort, exit) explain the run, and the
    /// launcher stops the job because of them.
    pub fn explained_by_failed_ranks(&self) -> bool {
        self.caused_by_dead_ranks && self.dead_ranks.iter().any(|d| !d.finalized)
    }

    /// The deadlocked ranks, ascending.
    pub fn ranks(&self) -> Vec<i32> {
        self.blocked.iter().map(|b| b.rank).collect()
    }
}

/// Whether two snapshots of the same job (earlier, later) show no
/// progress: every rank has the same records, the same blocking call and
/// the same state (a rank without a trace in both counts as unchanged).
pub fn no_progress(before: &[Option<RankTrace>], after: &[Option<RankTrace>]) -> bool {
    before.len() == after.len()
        && before.iter().zip(after).all(|pair| match pair {
            (None, None) => true,
            (Some(a), Some(b)) => {
                a.ops.len() == b.ops.len()
                    && a.blocking == b.blocking
                    && a.end.state == b.end.state
                    && still_polling(a, b)
            }
            _ => false,
        })
}

/// Whether a rank that polls in the later snapshot `b` polled the same
/// call in `a` and kept polling in between (a rank whose count stopped
/// is computing, which is progress as far as the graph knows).
fn still_polling(a: &RankTrace, b: &RankTrace) -> bool {
    match (&a.polling, &b.polling) {
        (_, None) => true,
        (Some(a), Some(b)) => a.wait == b.wait && b.polls > a.polls,
        (None, Some(_)) => false,
    }
}

/// Decides whether the snapshot (rank `i`'s trace at index `i`; `None`:
/// no trace yet) shows a deadlock, and gives its witness.
///
/// `None` when some rank has no trace, runs outside MPI, is blocked in a
/// call that can (or might) complete, or when no rank is live.
///
/// Complexity: `O(records + np²)` (an `MPI_ANY_SOURCE` receive waits for
/// every other rank).
pub fn find_deadlock(snapshot: &[Option<RankTrace>]) -> Option<Deadlock> {
    let traces: Vec<&RankTrace> = snapshot.iter().map(Option::as_ref).collect::<Option<_>>()?;
    let mut blocked_ops = Vec::new();
    for (rank, trace) in traces.iter().enumerate() {
        if is_dead(trace) {
            continue;
        }
        if trace.end.state != RankState::Running {
            return None;
        }
        blocked_ops.push((rank, waiting_call(trace)?));
    }
    if blocked_ops.is_empty() {
        return None;
    }
    let facts = Facts::new(&traces);
    let mut blocked = Vec::new();
    let mut mismatches: BTreeMap<(u64, usize), CollectiveMismatch> = BTreeMap::new();
    let mut stuck = HashSet::default();
    for &(rank, op) in &blocked_ops {
        let (cond, origin) = facts.condition(rank, op);
        let (waits_for, collective) = match cond {
            Cond::CanComplete | Cond::Unknown(_) => return None,
            Cond::Waits(w) => (w, None),
            Cond::Collective(w, pending) => (w, Some(pending)),
            Cond::Mismatch(comm, sequence, ranks) => {
                stuck.insert(rank);
                mismatches
                    .entry((comm, sequence))
                    .or_insert_with(|| facts.mismatch(comm, sequence));
                (WaitFor::All(ranks), None)
            }
        };
        blocked.push(BlockedRank {
            rank: rank as i32,
            op_index: op.index,
            kind: op.kind,
            site: op.site,
            origin,
            request: origin
                .and_then(|o| traces[rank].ops.get(o as usize))
                .map(|made| RequestCall {
                    op_index: made.index,
                    kind: made.kind,
                    site: made.site,
                }),
            collective,
            waits_for,
            polled: polled(traces[rank], op),
        });
    }
    Some(witness(
        &traces,
        blocked,
        stuck,
        mismatches.into_values().collect(),
    ))
}

/// What the graph says of each rank of `snapshot` (rank `i` at index
/// `i`): for a run that had to end by its timeout, which ranks' calls it
/// could not decide and why, so a user can tell a slow program from a tool
/// limit.
pub fn undecided(snapshot: &[Option<RankTrace>]) -> Vec<RankVerdict> {
    let present: Vec<&RankTrace> = snapshot.iter().flatten().collect();
    if present.len() != snapshot.len() {
        // Facts need every rank's trace; without them only the states.
        return snapshot
            .iter()
            .map(|t| match t {
                None => RankVerdict::NoTrace,
                Some(t) if is_dead(t) => RankVerdict::Ended,
                Some(t) => {
                    blocked_call(t).map_or(RankVerdict::OutsideMpi, |op| RankVerdict::Blocked {
                        kind: op.kind,
                        site: op.site,
                        judged: Judged::Undecided(Undecidable::MissingTraces),
                    })
                }
            })
            .collect();
    }
    let facts = Facts::new(&present);
    present
        .iter()
        .enumerate()
        .map(|(rank, trace)| {
            if is_dead(trace) {
                return RankVerdict::Ended;
            }
            let polling = trace.polling.as_ref().filter(|_| trace.blocking.is_none());
            let Some(op) = blocked_call(trace).or(polling.map(|p| &p.wait)) else {
                return RankVerdict::OutsideMpi;
            };
            let judged = match facts.condition(rank, op).0 {
                Cond::CanComplete => Judged::CanComplete,
                Cond::Unknown(why) => Judged::Undecided(why),
                _ => Judged::Waits,
            };
            match polling {
                Some(p) => RankVerdict::Polling {
                    kind: p.polled,
                    site: op.site,
                    polls: p.polls,
                    judged,
                },
                None => RankVerdict::Blocked {
                    kind: op.kind,
                    site: op.site,
                    judged,
                },
            }
        })
        .collect()
}

/// Polls that must find nothing in a row, with no other recorded call,
/// before a polling rank counts as blocked in the call its poll stands
/// for (`MPI_Test` for `MPI_Wait` on its request, `MPI_Iprobe` for
/// `MPI_Probe` of its pattern: a rank in `while (!flag) MPI_Test(...)`
/// waits exactly as one in `MPI_Wait` does). A loop that gives up on its
/// own after more polls than this, while every other rank is blocked, is
/// the one case where the graph errs; the caller also wants the series to
/// last (see `DeadlockMonitor`), and the finding says the rank polled.
pub const POLLS_TO_BE_STUCK: u64 = 1000;

/// How long a deadlock that holds a polling rank must stay unchanged
/// before it stops the job: a polling loop can only leave by itself (on a
/// count or a clock), and the graph cannot see such an exit coming, so
/// the series must outlast [`POLLS_TO_BE_STUCK`] polls and this too.
/// Loops that give up after a second or more, while every other rank is
/// blocked, are the graph's one blind spot.
pub const POLLING_GRACE: std::time::Duration = std::time::Duration::from_secs(1);

/// The call `trace`'s rank waits in: the blocking call it is in, or else
/// the call its poll series stands for, once that series is
/// [`POLLS_TO_BE_STUCK`] long.
pub fn waiting_call(trace: &RankTrace) -> Option<&Op> {
    if trace.blocking.is_some() {
        return blocked_call(trace);
    }
    let polling = trace.polling.as_ref()?;
    (polling.polls >= POLLS_TO_BE_STUCK).then_some(&polling.wait)
}

/// The polled call and its count when `op` is `trace`'s poll, not a
/// record.
fn polled(trace: &RankTrace, op: &Op) -> Option<(OpKind, u64)> {
    let polling = trace.polling.as_ref()?;
    (trace.blocking.is_none() && std::ptr::eq(op, &polling.wait))
        .then_some((polling.polled, polling.polls))
}

/// The call `trace`'s rank is blocked in, if any.
fn blocked_call(trace: &RankTrace) -> Option<&Op> {
    let op = trace.ops.get(trace.blocking? as usize)?;
    (!op.has(flags::RETURNED)).then_some(op)
}

fn is_dead(trace: &RankTrace) -> bool {
    matches!(
        trace.end.state,
        RankState::Finalized
            | RankState::Exited
            | RankState::Signaled
            | RankState::Aborted
            | RankState::ToolStopped
    )
}

/// Why the graph cannot tell whether a blocked call can complete (it then
/// assumes it can: see "Conservative by construction").
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Undecidable {
    /// A call the graph does not model (`Iprobe`, `Test`, ...).
    NotModelled,
    /// A call on a communicator the runtime could not name
    /// (`MPI_COMM_SELF`, an intercommunicator, a naming that failed): its
    /// ranks and members are unknown.
    UnnamedCommunicator,
    /// A `Wait` whose request the trace does not tie to a call.
    UnknownRequest,
    /// Some rank has no trace yet, so nothing can be decided.
    MissingTraces,
}

/// What the graph says of one rank of a snapshot that is no deadlock
/// ([`undecided`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RankVerdict {
    /// No trace yet: the rank has not reached `MPI_Init`.
    NoTrace,
    /// Not in an MPI call, and not polling since its last one: computing.
    OutsideMpi,
    /// Ended (finalized, exited, died, aborted).
    Ended,
    /// Blocked in a call.
    Blocked {
        /// The call.
        kind: OpKind,
        /// Its site id (0: unknown).
        site: u32,
        /// What the graph says of it.
        judged: Judged,
    },
    /// Repeating a poll (`MPI_Test`, `MPI_Iprobe`, ...) that finds nothing,
    /// with no other MPI call since the series began.
    Polling {
        /// The call polled.
        kind: OpKind,
        /// Its site id (0: unknown).
        site: u32,
        /// How many times in a row it found nothing.
        polls: u64,
        /// What the graph says of the call the poll stands for.
        judged: Judged,
    },
}

/// What the graph says of a blocked call.
///
/// (A rank in a poll series, [`RankVerdict::Polling`], is judged by the
/// call its poll stands for.)
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Judged {
    /// It can complete (its message was sent, its receiver is there, ...).
    CanComplete,
    /// It waits for other ranks.
    Waits,
    /// The graph cannot tell.
    Undecided(Undecidable),
}

/// What a blocked call needs.
enum Cond {
    /// It can complete.
    CanComplete,
    /// It might: the graph cannot tell.
    Unknown(Undecidable),
    /// It waits for ranks.
    Waits(WaitFor),
    /// It waits for the members of a communicator that have not posted
    /// this collective yet (AND).
    Collective(WaitFor, PendingCollective),
    /// A mismatched collective at this position of the communicator's
    /// sequence: it never completes; the ranks that differ or have not
    /// arrived.
    Mismatch(u64, usize, Vec<i32>),
}

/// What a pending receive accepts, as posted in this run: the wait-for
/// graph is about what this run's blocked calls can still get, and a
/// wildcard a guided replay forced was posted with the forced source only
/// (trace's [`RecvPattern::as_posted`]).
fn accepts(pattern: &RecvPattern, send: &Sent) -> bool {
    pattern.accepts(&send.side.envelope(send.source))
}

/// An issued send: its record's index and the message it sends (a send,
/// or the send half of an `MPI_Sendrecv`).
#[derive(Clone, Copy)]
struct Sent {
    index: u64,
    side: SendSide,
    /// The sender's rank in the send's communicator (what a receive's
    /// source names).
    source: i32,
}

fn is_nonblocking_p2p(kind: OpKind) -> bool {
    kind.is_nonblocking_send() || kind.is_nonblocking_receive()
}

/// What the snapshot says about messages, requests and collectives.
pub(crate) struct Facts<'a> {
    traces: &'a [&'a RankTrace],
    size: usize,
    world: Option<u64>,
    /// Communicator ranks to world ranks and back.
    ranks: CommRanks,
    /// `sends[src][dst]` (world ranks): the sends issued, in order
    /// (`Sendrecv` send halves included).
    sends: Vec<BTreeMap<i32, Vec<Sent>>>,
    /// Completed receives per (src, dst, comm, tag), world ranks.
    taken: HashMap<(i32, i32, u64, i32), usize>,
    /// Completed receives per (src, dst).
    taken_from: HashMap<(i32, i32), usize>,
    /// `exact[dst]`: (src, send index) of every `Matched` record.
    exact: Vec<HashSet<(i32, u64)>>,
    /// `Matched` records per (src, dst).
    exact_from: HashMap<(i32, i32), usize>,
    /// `received[rank]`: the records of receives a `Matched` record says
    /// took their message.
    received: Vec<HashSet<u64>>,
    /// `completed[rank]`: indices of nonblocking calls known complete.
    completed: Vec<HashSet<u64>>,
    /// `collectives[rank]`: its collectives on `MPI_COMM_WORLD`, in order.
    pub(crate) collectives: Vec<Vec<&'a Op>>,
    /// `on_comm[rank][comm]`: its collectives on each communicator, in
    /// order (the world's included).
    on_comm: Vec<HashMap<u64, Vec<&'a Op>>>,
    /// The members of each named communicator (from `CommId` records).
    members: HashMap<u64, BTreeSet<usize>>,
    /// The call site of the constructor that made each named communicator
    /// (from `CommId` records that name it).
    made_at: HashMap<u64, u32>,
    /// Whether each rank called `MPI_Finalize`.
    finalizing: Vec<bool>,
}

impl<'a> Facts<'a> {
    pub(crate) fn new(traces: &'a [&'a RankTrace]) -> Self {
        let size = traces.len();
        let world = traces.iter().find_map(|t| {
            t.ops
                .iter()
                .find(|op| matches!(op.kind, OpKind::Init | OpKind::InitThread))
                .map(|op| op.comm)
        });
        let mut facts = Facts {
            traces,
            size,
            world,
            ranks: CommRanks::new(traces, world),
            sends: vec![BTreeMap::new(); size],
            taken: HashMap::default(),
            taken_from: HashMap::default(),
            exact: vec![HashSet::default(); size],
            exact_from: HashMap::default(),
            received: vec![HashSet::default(); size],
            completed: vec![HashSet::default(); size],
            collectives: vec![Vec::new(); size],
            on_comm: vec![HashMap::default(); size],
            members: HashMap::default(),
            made_at: HashMap::default(),
            finalizing: vec![false; size],
        };
        for (rank, trace) in traces.iter().enumerate() {
            let me = rank as i32;
            let mut settled = Vec::new();
            for op in &trace.ops {
                if let Some(took) = op.settled_send() {
                    settled.push(took);
                }
                let failed = op.has(flags::FAILED);
                if let Some(sent) = SendSide::of(op)
                    .filter(|_| !failed)
                    .and_then(|side| facts.sent(me, op.index, side))
                {
                    let dst = facts.ranks.world_rank(sent.side.comm, sent.side.dest);
                    if let Some(dst) = dst {
                        facts.sends[rank].entry(dst).or_default().push(sent);
                    }
                }
                match op.kind.class() {
                    OpClass::Receive => {
                        if let Some((src, tag)) = op.matched {
                            if let Some(src) = facts.ranks.world_rank(op.comm, src) {
                                *facts.taken.entry((src, me, op.comm, tag)).or_default() += 1;
                                *facts.taken_from.entry((src, me)).or_default() += 1;
                            }
                            facts.completed[rank].insert(op.index);
                        }
                    }
                    OpClass::Completion
                        if op.kind == OpKind::Wait && op.has(flags::RETURNED) && !failed =>
                    {
                        if let Some(origin) = request_origin(trace, op) {
                            facts.completed[rank].insert(origin.index);
                        }
                    }
                    OpClass::Collective => {
                        if Some(op.comm) == world {
                            facts.collectives[rank].push(op);
                        }
                        facts.on_comm[rank].entry(op.comm).or_default().push(op);
                    }
                    OpClass::Lifecycle if op.kind == OpKind::Finalize => {
                        facts.finalizing[rank] = true
                    }
                    OpClass::Clock => {
                        if let Some(done) = op.collective_completion() {
                            facts.completed[rank].insert(done.collective);
                        } else if let Some(naming) = op.comm_naming() {
                            facts.members.entry(naming.id).or_default().insert(rank);
                            if op.site != 0 {
                                facts.made_at.entry(naming.id).or_insert(op.site);
                            }
                        } else if let Some(matched) = op.matched_send() {
                            let receiver = trace.ops.get(matched.receiver as usize);
                            if receiver.is_some_and(|r| r.kind.class() != OpClass::Probe) {
                                let send = matched.send;
                                facts.exact[rank].insert((send.sender, send.record));
                                *facts.exact_from.entry((send.sender, me)).or_default() += 1;
                                facts.received[rank].insert(matched.receiver);
                            }
                        }
                    }
                    _ => {}
                }
            }
            facts.settle(rank, &settled);
            if is_dead(trace) && trace.end.state == RankState::Finalized {
                facts.finalizing[rank] = true;
            }
        }
        facts
    }

    /// Receives of `rank` that MPI completed and the runtime has not
    /// processed yet (`Settled` records, naming the receive's own record:
    /// inside a `Waitall` still blocked, or seen by the runtime's polling):
    /// complete, and their sends taken, as the `Matched` record to come
    /// will say.
    fn settle(&mut self, rank: usize, settled: &[MatchedSend]) {
        for took in settled {
            if !self.completed[rank].insert(took.receiver) {
                continue; // processed: its receive record says so
            }
            let send = took.send;
            self.exact[rank].insert((send.sender, send.record));
            *self
                .exact_from
                .entry((send.sender, rank as i32))
                .or_default() += 1;
        }
    }

    pub(crate) fn in_world(&self, comm: u64) -> bool {
        self.world == Some(comm)
    }

    /// The send `side` of world rank `me`'s record `index`, when its
    /// communicator's ranks are known.
    fn sent(&self, me: i32, index: u64, side: SendSide) -> Option<Sent> {
        let source = self.ranks.comm_rank(side.comm, me)?;
        Some(Sent {
            index,
            side,
            source,
        })
    }

    /// Whether `dst` wrote a `Matched` record for each completed receive
    /// from `src`, so that they say exactly which sends were taken.
    fn exact_for(&self, src: i32, dst: i32) -> bool {
        let exact = self.exact_from.get(&(src, dst)).copied().unwrap_or(0);
        exact > 0 && exact >= self.taken_from.get(&(src, dst)).copied().unwrap_or(0)
    }

    /// The sends from `src` to `dst`.
    fn sends(&self, src: i32, dst: i32) -> &[Sent] {
        self.sends[src as usize]
            .get(&dst)
            .map_or(&[], Vec::as_slice)
    }

    /// Whether a completed receive of `dst` took `send` (from `src`).
    fn taken(&self, src: i32, dst: i32, send: &Sent) -> bool {
        if self.exact_for(src, dst) {
            return self.exact[dst as usize].contains(&(src, send.index));
        }
        // Non-overtaking: the k-th receive of a tag takes the k-th send.
        let before = self
            .sends(src, dst)
            .iter()
            .take_while(|s| s.index < send.index)
            .filter(|s| s.side.comm == send.side.comm && s.side.tag == send.side.tag)
            .count();
        let taken = self
            .taken
            .get(&(src, dst, send.side.comm, send.side.tag))
            .copied()
            .unwrap_or(0);
        before < taken
    }

    /// Issued sends from `src` to `dst` that `pattern` accepts and that no
    /// completed receive took.
    fn available(&self, src: i32, dst: i32, pattern: &RecvPattern) -> usize {
        self.sends(src, dst)
            .iter()
            .filter(|s| accepts(pattern, s) && !self.taken(src, dst, s))
            .count()
    }

    /// Whether one of the issued sends from `src` to `dst` that no
    /// completed receive took reaches the receive `pattern`, past the
    /// receives `earlier` posted before it and still pending (each with a
    /// source: a wildcard among them could take another sender's message
    /// first). MPI matches a sender's messages in the order they were sent,
    /// each with the earliest posted receive that accepts it (MPI-4.0
    /// §3.5, non-overtaking), so a message an earlier receive accepts is
    /// that receive's, whether or not the runtime processed its completion
    /// yet: a `Wait` on a wildcard `Irecv` whose sender's one message went
    /// to the `Irecv` before it waits for another sender.
    fn reaches(&self, src: i32, dst: i32, pattern: &RecvPattern, earlier: &[RecvPattern]) -> bool {
        let mut filled = vec![false; earlier.len()];
        for send in self.sends(src, dst) {
            if self.taken(src, dst, send) {
                continue;
            }
            match (0..earlier.len()).find(|&i| !filled[i] && accepts(&earlier[i], send)) {
                Some(i) => filled[i] = true,
                None if accepts(pattern, send) => return true,
                None => {}
            }
        }
        false
    }

    /// Whether `op` of `rank` (a nonblocking call) is known complete.
    fn is_complete(&self, rank: usize, op: &Op) -> bool {
        self.completed[rank].contains(&op.index)
            || (op.kind.is_nonblocking_receive() && op.matched.is_some())
    }

    /// Receives of `rank` posted and not completed: `Irecv`s, and the
    /// blocked call when it is a receive or probe.
    fn pending_receives(&self, rank: usize) -> impl Iterator<Item = &'a Op> + '_ {
        let trace = self.traces[rank];
        let blocked = trace.blocking;
        trace.ops.iter().filter(move |op| match op.kind {
            // Its message was taken by a matched probe already.
            OpKind::Imrecv => false,
            kind if kind.is_nonblocking_receive() => {
                !op.has(flags::FAILED) && !op.has(flags::CANCELLED) && !self.is_complete(rank, op)
            }
            OpKind::Recv | OpKind::Probe | OpKind::Mprobe => Some(op.index) == blocked,
            kind if kind.is_sendrecv() => Some(op.index) == blocked,
            _ => false,
        })
    }

    /// What the blocked call `op` of `rank` needs, and for a `Wait` the
    /// call that created its request.
    fn condition(&self, rank: usize, op: &'a Op) -> (Cond, Option<u64>) {
        let trace = self.traces[rank];
        match op.kind {
            OpKind::Recv | OpKind::Probe | OpKind::Mprobe => (self.receive(rank, op), None),
            kind if kind.is_sendrecv() => (self.sendrecv(rank, op), None),
            OpKind::Send | OpKind::Ssend | OpKind::Rsend => (self.send(rank, op), None),
            OpKind::Wait => match request_origin(trace, op) {
                Some(origin) => (self.request(rank, origin), Some(origin.index)),
                None => (Cond::Unknown(Undecidable::UnknownRequest), None),
            },
            OpKind::Waitall => match self.awaited(rank, op) {
                Some(listed) => self.all_of(rank, &listed),
                None => (self.any_request(rank, op), None),
            },
            OpKind::Waitany | OpKind::Waitsome => match self.awaited(rank, op) {
                Some(listed) => (self.any_of(rank, &listed), None),
                None => (self.any_request(rank, op), None),
            },
            OpKind::Finalize => (self.finalize(rank), None),
            OpKind::WinWait => (self.win_wait(rank, op), None),
            kind if kind.class() == OpClass::Collective => (self.collective(rank, op), None),
            // A buffered send completes locally.
            OpKind::Bsend => (Cond::CanComplete, None),
            // Test, Iprobe, Init, ...: not modelled.
            _ => (Cond::Unknown(Undecidable::NotModelled), None),
        }
    }

    /// A blocked receive or probe, or a `Wait` on an `Irecv` (`op`, the
    /// receive as posted).
    fn receive(&self, rank: usize, op: &Op) -> Cond {
        let Some(members) = self.members_of(op.comm) else {
            return Cond::Unknown(Undecidable::UnnamedCommunicator);
        };
        // Its message arrived: MPI returned the receive, and the runtime
        // wrote the `Matched` record after it. A rank still blocked in the
        // call is only finishing it (for a `Sendrecv` under `--buffering
        // zero`, waiting for the acknowledgement of its send half, which
        // `send` judges); counting the send it took as unavailable would
        // make it wait for a sender that already sent.
        if op.has(flags::PROC_NULL) || self.received[rank].contains(&op.index) {
            return Cond::CanComplete;
        }
        let pattern = RecvPattern::as_posted(op);
        let me = rank as i32;
        let earlier: Vec<RecvPattern> = self
            .pending_receives(rank)
            .filter(|r| r.index < op.index && r.comm == op.comm)
            .map(RecvPattern::as_posted)
            .collect();
        // With no wildcard among them, each sender's messages go to the
        // earlier receives in MPI's order; otherwise only receives that
        // accept exactly the same messages are known to be matched first.
        let in_order = earlier.iter().all(|r| r.source.is_some());
        let ahead = earlier.iter().filter(|&r| *r == pattern).count();
        let gets_from = |src: i32| {
            if in_order {
                self.reaches(src, me, &pattern, &earlier)
            } else {
                self.available(src, me, &pattern) > ahead
            }
        };
        match pattern.source {
            Some(src) => match self.ranks.world_rank(op.comm, src) {
                None => Cond::CanComplete,
                Some(src) if gets_from(src) => Cond::CanComplete,
                Some(src) => Cond::Waits(WaitFor::All(vec![src])),
            },
            None => {
                let others: Vec<i32> = members
                    .iter()
                    .map(|&r| r as i32)
                    .filter(|&r| r != me)
                    .collect();
                let gets = if in_order {
                    others.iter().any(|&src| gets_from(src))
                } else {
                    let available: usize = others
                        .iter()
                        .map(|&src| self.available(src, me, &pattern))
                        .sum();
                    available > ahead
                };
                if gets {
                    Cond::CanComplete
                } else {
                    Cond::Waits(WaitFor::Any(others))
                }
            }
        }
    }

    /// A blocked `Sendrecv`: it returns once both halves can complete.
    /// The send half counts as a blocked send does (a send MPI buffered
    /// would not keep the call from returning once its receive half can
    /// complete, so a call still blocked then waits for its receiver).
    fn sendrecv(&self, rank: usize, op: &Op) -> Cond {
        match (self.receive(rank, op), self.send(rank, op)) {
            (Cond::Waits(WaitFor::All(mut ranks)), Cond::Waits(send)) => {
                ranks.extend_from_slice(send.ranks());
                ranks.sort_unstable();
                ranks.dedup();
                Cond::Waits(WaitFor::All(ranks))
            }
            // An OR receive half: the send half's receiver is needed
            // whatever sends the message.
            (_, send @ Cond::Waits(_)) => send,
            (receive @ Cond::Waits(_), _) => receive,
            (Cond::Unknown(why), _) | (_, Cond::Unknown(why)) => Cond::Unknown(why),
            _ => Cond::CanComplete,
        }
    }

    /// A blocked send, or a `Wait` on an `Isend` (`op`, the send).
    fn send(&self, rank: usize, op: &Op) -> Cond {
        let Some(side) = SendSide::of(op) else {
            return Cond::CanComplete;
        };
        if self.members_of(side.comm).is_none() {
            return Cond::Unknown(Undecidable::UnnamedCommunicator);
        }
        let me = rank as i32;
        let (Some(dst), Some(sent)) = (
            self.ranks.world_rank(side.comm, side.dest),
            self.sent(me, op.index, side),
        ) else {
            return Cond::CanComplete;
        };
        // A rank that ended receives nothing more.
        let can_take = !is_dead(self.traces[dst as usize])
            && self
                .pending_receives(dst as usize)
                .any(|r| accepts(&RecvPattern::as_posted(r), &sent));
        if self.taken(me, dst, &sent) || can_take {
            Cond::CanComplete
        } else {
            Cond::Waits(WaitFor::All(vec![dst]))
        }
    }

    /// A `Wait` on the request `origin` created.
    fn request(&self, rank: usize, origin: &Op) -> Cond {
        if self.is_complete(rank, origin) {
            return Cond::CanComplete;
        }
        match origin.kind {
            OpKind::Imrecv => Cond::CanComplete,
            kind if kind.is_nonblocking_receive() => self.receive(rank, origin),
            // A buffered send completes locally whatever the receiver does.
            OpKind::Ibsend | OpKind::StartBsend => Cond::CanComplete,
            kind if kind.is_nonblocking_send() => self.send(rank, origin),
            // A nonblocking collective waits for the ranks that have not
            // called it (as a blocking one would).
            kind if kind.is_nonblocking_collective() => self.collective(rank, origin),
            _ => Cond::CanComplete,
        }
    }

    /// `Waitall`/`Waitany`/`Waitsome` whose requests the trace does not
    /// list (the call has not waited long enough for the runtime to list
    /// them, or it is a poll series, which stands for a call but has no
    /// record of its own): OR over the rank's outstanding requests
    /// (those with no completion record yet, nonblocking collectives
    /// included), which is right
    /// for `Waitany`, errs towards "can complete" for `Waitall`, and holds
    /// for `Waitsome` (it returns once one completes).
    fn any_request(&self, rank: usize, op: &Op) -> Cond {
        let trace = self.traces[rank];
        let mut waits = BTreeSet::new();
        let mut any = false;
        for origin in trace.ops[..op.index.min(trace.ops.len() as u64) as usize]
            .iter()
            .filter(|o| is_request_maker(o.kind) && !o.has(flags::FAILED))
        {
            // Completed: returned to the program already, so not among
            // what the call waits for (counting one as "can complete" made
            // every poll series after a completion look slow).
            if self.is_complete(rank, origin) {
                continue;
            }
            any = true;
            match self.request(rank, origin) {
                Cond::Waits(w) | Cond::Collective(w, _) => waits.extend(w.ranks().iter().copied()),
                Cond::Unknown(why) => return Cond::Unknown(why),
                _ => return Cond::CanComplete,
            }
        }
        if any {
            Cond::Waits(WaitFor::Any(waits.into_iter().collect()))
        } else {
            Cond::CanComplete
        }
    }

    /// The requests blocked call `op` waits for, as its
    /// [`OpKind::WaitRequest`] records list them (the record that made
    /// each; `None` for one the runtime did not know), in the order given.
    /// `None` when none is listed.
    fn awaited(&self, rank: usize, op: &Op) -> Option<Vec<Option<&'a Op>>> {
        let trace = self.traces[rank];
        let start = (op.index as usize + 1).min(trace.ops.len());
        let listed: Vec<Option<&'a Op>> = trace.ops[start..]
            .iter()
            .filter_map(|r| r.wait_request().filter(|w| w.call == op.index))
            .map(|w| {
                w.origin
                    .and_then(|o| trace.ops.get(o as usize))
                    .filter(|origin| is_request_maker(origin.kind) && origin.index < op.index)
            })
            .collect();
        (!listed.is_empty()).then_some(listed)
    }

    /// A `Waitall` (seed 003 §3: an AND node): it cannot return before
    /// each listed request completes, so the first that cannot complete
    /// decides, whatever the others do, and names the request the rank is
    /// stuck on. Otherwise a request the graph cannot judge makes it
    /// unknown, and with none it can complete.
    fn all_of(&self, rank: usize, listed: &[Option<&Op>]) -> (Cond, Option<u64>) {
        let mut unknown = None;
        for origin in listed {
            let Some(origin) = origin else {
                unknown = Some(Undecidable::UnknownRequest);
                continue;
            };
            match self.request(rank, origin) {
                Cond::CanComplete => {}
                Cond::Unknown(why) => unknown = Some(why),
                blocked => return (blocked, Some(origin.index)),
            }
        }
        match unknown {
            Some(why) => (Cond::Unknown(why), None),
            None => (Cond::CanComplete, None),
        }
    }

    /// A `Waitany`/`Waitsome` (an OR node): it returns once one listed
    /// request completes, so it waits for every rank any of them waits
    /// for.
    fn any_of(&self, rank: usize, listed: &[Option<&Op>]) -> Cond {
        let mut waits = BTreeSet::new();
        let mut unknown = None;
        for origin in listed {
            let Some(origin) = origin else {
                unknown = Some(Undecidable::UnknownRequest);
                continue;
            };
            match self.request(rank, origin) {
                Cond::CanComplete => return Cond::CanComplete,
                Cond::Unknown(why) => unknown = Some(why),
                Cond::Waits(w) | Cond::Collective(w, _) => waits.extend(w.ranks().iter().copied()),
                Cond::Mismatch(_, _, ranks) => waits.extend(ranks),
            }
        }
        match unknown {
            Some(why) => Cond::Unknown(why),
            None => Cond::Waits(WaitFor::Any(waits.into_iter().collect())),
        }
    }

    fn finalize(&self, rank: usize) -> Cond {
        let missing: Vec<i32> = (0..self.size)
            .filter(|&q| q != rank && !self.finalizing[q])
            .map(|q| q as i32)
            .collect();
        if missing.is_empty() {
            Cond::CanComplete
        } else {
            Cond::Waits(WaitFor::All(missing))
        }
    }

    /// The members of communicator `comm`, when known: every rank for
    /// `MPI_COMM_WORLD`, the ranks that recorded its name for a named one.
    fn members_of(&self, comm: u64) -> Option<Vec<usize>> {
        if self.in_world(comm) {
            return Some((0..self.size).collect());
        }
        self.members.get(&comm).map(|m| m.iter().copied().collect())
    }

    /// The collective of `rank` at `sequence` on `comm`.
    fn collective_at(&self, rank: usize, comm: u64, sequence: usize) -> Option<&'a Op> {
        let calls = self.on_comm[rank].get(&comm)?;
        calls
            .iter()
            .enumerate()
            .find(|&(at, c)| sequence_of(c, at) == sequence)
            .map(|(_, c)| *c)
    }

    /// A blocked collective, or a `Wait` on a nonblocking one (`op`, the
    /// collective as posted): AND on the members of its communicator that
    /// have not posted the collective with the same sequence number.
    fn collective(&self, rank: usize, op: &Op) -> Cond {
        let Some(members) = self.members_of(op.comm) else {
            return Cond::Unknown(Undecidable::UnnamedCommunicator);
        };
        let Some(sequence) = self.on_comm[rank].get(&op.comm).and_then(|calls| {
            calls
                .iter()
                .enumerate()
                .find(|(_, c)| c.index == op.index)
                .map(|(at, c)| sequence_of(c, at))
        }) else {
            return Cond::CanComplete;
        };
        if !members.contains(&rank) {
            return Cond::CanComplete;
        }
        let mut missing = Vec::new();
        let mut differs = Vec::new();
        for q in members.into_iter().filter(|&q| q != rank) {
            match self.collective_at(q, op.comm, sequence) {
                Some(c) if c.kind != op.kind => differs.push(q as i32),
                Some(_) => {}
                None => missing.push(q as i32),
            }
        }
        if !differs.is_empty() {
            differs.extend(missing);
            differs.sort_unstable();
            Cond::Mismatch(op.comm, sequence, differs)
        } else if missing.is_empty() {
            Cond::CanComplete
        } else {
            let call = CollectiveCall {
                rank: rank as i32,
                op_index: op.index,
                kind: op.kind,
                site: op.site,
            };
            Cond::Collective(
                WaitFor::All(missing),
                PendingCollective {
                    call,
                    world: self.in_world(op.comm),
                    made_at: self.made_at.get(&op.comm).copied(),
                    sequence,
                },
            )
        }
    }

    fn mismatch(&self, comm: u64, sequence: usize) -> CollectiveMismatch {
        let calls = (0..self.size)
            .filter_map(|rank| {
                self.collective_at(rank, comm, sequence)
                    .map(|op| CollectiveCall {
                        rank: rank as i32,
                        op_index: op.index,
                        kind: op.kind,
                        site: op.site,
                    })
            })
            .collect();
        CollectiveMismatch {
            comm,
            sequence,
            calls,
        }
    }
}

/// A collective record's sequence number on its communicator: the one the
/// runtime recorded (`tag` = 1 + it), else its position `at` among the
/// rank's records on the communicator (the same number, for traces of
/// runtimes that did not record it).
fn sequence_of(op: &Op, at: usize) -> usize {
    op.collective_sequence()
        .and_then(|sequence| usize::try_from(sequence).ok())
        .unwrap_or(at)
}

/// A call that makes a request a `Wait` completes: a nonblocking
/// point-to-point call or a nonblocking collective.
fn is_request_maker(kind: OpKind) -> bool {
    is_nonblocking_p2p(kind) || kind.is_nonblocking_collective()
}

/// The nonblocking call that created the request a `Wait` completes: the
/// record it names ([`Op::request_origin`]), else the latest earlier one
/// with its handle.
pub(crate) fn request_origin<'a>(trace: &'a RankTrace, wait: &Op) -> Option<&'a Op> {
    if let Some(origin) = wait.request_origin() {
        let origin = trace.ops.get(origin as usize)?;
        return (is_request_maker(origin.kind) && origin.index < wait.index).then_some(origin);
    }
    if wait.request == 0 {
        return None;
    }
    trace.ops[..wait.index.min(trace.ops.len() as u64) as usize]
        .iter()
        .rev()
        .find(|op| is_request_maker(op.kind) && op.request == wait.request)
}

/// Builds the witness of a deadlock: the graph's cycles and dead ranks.
fn witness(
    traces: &[&RankTrace],
    blocked: Vec<BlockedRank>,
    stuck: HashSet<usize>,
    collective_mismatches: Vec<CollectiveMismatch>,
) -> Deadlock {
    let size = traces.len();
    let mut graph: DiGraph<i32, ()> = DiGraph::with_capacity(size, 0);
    let nodes: Vec<NodeIndex> = (0..size).map(|r| graph.add_node(r as i32)).collect();
    let mut dead = BTreeSet::new();
    for b in &blocked {
        for &target in b.waits_for.ranks() {
            graph.add_edge(nodes[b.rank as usize], nodes[target as usize], ());
            if is_dead(traces[target as usize]) {
                dead.insert(target);
            }
        }
    }
    let mut knot = Vec::new();
    let mut cycle = Vec::new();
    for scc in kosaraju_scc(&graph) {
        let cyclic = scc.len() > 1 || graph.contains_edge(scc[0], scc[0]);
        if !cyclic {
            continue;
        }
        let mut ranks: Vec<i32> = scc.iter().map(|&n| graph[n]).collect();
        ranks.sort_unstable();
        if cycle.is_empty() || ranks.first() < cycle.iter().min() {
            cycle = find_cycle(&graph, &scc);
        }
        knot.extend(ranks);
    }
    knot.sort_unstable();
    let dead_ranks = dead
        .into_iter()
        .map(|rank| {
            let trace = traces[rank as usize];
            DeadRank {
                rank,
                state: trace.end.state,
                finalized: trace.end.state == RankState::Finalized
                    || trace
                        .ops
                        .iter()
                        .any(|op| op.kind == OpKind::Finalize && op.has(flags::RETURNED)),
            }
        })
        .collect::<Vec<_>>();
    let caused_by_dead_ranks =
        !dead_ranks.is_empty() && !stuck_without_dead(traces, &blocked, &stuck);
    Deadlock {
        blocked,
        cycle,
        knot,
        dead_ranks,
        caused_by_dead_ranks,
        collective_mismatches,
    }
}

/// Whether some live rank stays blocked even if every dead rank could act:
/// the greatest set of ranks that cannot complete, where an AND call
/// completes once all it waits for can act and an OR call once one can.
fn stuck_without_dead(
    traces: &[&RankTrace],
    blocked: &[BlockedRank],
    stuck: &HashSet<usize>,
) -> bool {
    let size = traces.len();
    let mut waiting = vec![false; size];
    for b in blocked {
        waiting[b.rank as usize] = true;
    }
    // Unresolved targets per rank, and who waits for whom.
    let mut unresolved = vec![0usize; size];
    let mut waiters: Vec<Vec<usize>> = vec![Vec::new(); size];
    let mut free: VecDeque<usize> = (0..size).filter(|&r| !waiting[r]).collect();
    for b in blocked {
        let r = b.rank as usize;
        for &t in b.waits_for.ranks() {
            waiters[t as usize].push(r);
        }
        unresolved[r] = b.waits_for.ranks().len();
    }
    let mut and = vec![false; size];
    for b in blocked {
        and[b.rank as usize] = matches!(b.waits_for, WaitFor::All(_));
    }
    let mut stays = waiting.clone();
    while let Some(t) = free.pop_front() {
        for &r in &waiters[t] {
            if !stays[r] || stuck.contains(&r) {
                continue;
            }
            unresolved[r] -= 1;
            if !and[r] || unresolved[r] == 0 {
                stays[r] = false;
                free.push_back(r);
            }
        }
    }
    stays.iter().any(|&s| s)
}

/// One cycle through the strongly connected component `scc`, starting at
/// its lowest rank, found breadth-first (no recursion).
pub(crate) fn find_cycle(graph: &DiGraph<i32, ()>, scc: &[NodeIndex]) -> Vec<i32> {
    let members: HashSet<NodeIndex> = scc.iter().copied().collect();
    let Some(&start) = scc.iter().min_by_key(|&&n| graph[n]) else {
        return Vec::new();
    };
    let mut parent: HashMap<NodeIndex, NodeIndex> = HashMap::default();
    let mut queue = VecDeque::from([start]);
    while let Some(node) = queue.pop_front() {
        let mut successors: Vec<NodeIndex> = graph.neighbors(node).collect();
        successors.sort_by_key(|&n| graph[n]);
        for next in successors {
            if next == start {
                let mut path = vec![graph[node]];
                let mut at = node;
                while at != start {
                    at = parent[&at];
                    path.push(graph[at]);
                }
                path.reverse();
                return path;
            }
            if members.contains(&next) && !parent.contains_key(&next) {
                parent.insert(next, node);
                queue.push_back(next);
            }
        }
    }
    Vec::new()
}

mod pscw;
#[cfg(test)]
mod tests;
