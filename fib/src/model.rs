//! The vocabulary of the completes-before graphs: operations, collective
//! instances, nodes and edges.

use mbh_trace::envelope::SendSide;
use mbh_trace::op::{flags, OpClass};
use mbh_trace::rank_trace::Op;
use mbh_trace::OpKind;
use serde::Serialize;
use std::fmt;

/// One MPI call of one run: the rank (in `MPI_COMM_WORLD`), its per-rank
/// record index, its site id and what was called.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
pub struct OpRef {
    /// Rank in `MPI_COMM_WORLD`.
    pub rank: i32,
    /// Per-rank record index ([`Op::index`]).
    pub index: u64,
    /// Site id (0: unknown).
    pub site: u32,
    /// The call.
    pub kind: OpKind,
}

impl OpRef {
    /// The reference to `op` of rank `rank`.
    pub fn of(rank: i32, op: &Op) -> Self {
        OpRef {
            rank,
            index: op.index,
            site: op.site,
            kind: op.kind,
        }
    }

    /// `(rank, index)`: identifies the call across the runs of one
    /// exploration, as far as their control flow agrees.
    pub fn key(&self) -> (i32, u64) {
        (self.rank, self.index)
    }
}

impl fmt::Display for OpRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "P{}#{} {} (site {})",
            self.rank,
            self.index,
            self.kind.mpi_name(),
            self.site
        )
    }
}

/// One collective call made by every member of a communicator: the
/// `seq`-th call of `kind` on communicator `comm` of each rank that took
/// part (a match set of seed 004 §3.1).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
pub struct CollectiveInstance {
    /// Communicator handle bits.
    pub comm: u64,
    /// The collective ([`OpKind::Barrier`], [`OpKind::Bcast`], ...).
    pub kind: OpKind,
    /// 0-based sequence number of this call of `kind` on `comm`, per rank.
    pub seq: u64,
}

impl CollectiveInstance {
    fn sort_key(&self) -> (u64, u16, u64) {
        (self.comm, self.kind as u16, self.seq)
    }
}

impl PartialOrd for CollectiveInstance {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for CollectiveInstance {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.sort_key().cmp(&other.sort_key())
    }
}

impl CollectiveInstance {
    /// Whether this is an instance of `MPI_Barrier`.
    pub fn is_barrier(&self) -> bool {
        self.kind == OpKind::Barrier
    }
}

impl fmt::Display for CollectiveInstance {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} #{} on comm {:#x}",
            self.kind.mpi_name(),
            self.seq,
            self.comm
        )
    }
}

/// What happened to a call (seed 001 §2.1: issued ▷, matched ◇,
/// completed •; a blocking call returns when it completes).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Event {
    /// The process issued the call.
    Issue,
    /// The send (or the send half of a `Sendrecv`) was matched.
    SendMatch,
    /// The receive (or the receive half of a `Sendrecv`) was matched.
    ReceiveMatch,
    /// The call completed (returned, for a blocking call).
    Complete,
}

/// A node of a run's completes-before graph.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Node {
    /// An event of one call.
    Event {
        /// The call.
        op: OpRef,
        /// What happened.
        event: Event,
    },
    /// The match set of a send and the receive that took it: one event of
    /// both, so whatever precedes one side's match precedes the other's
    /// (seed 004's InterCB edges of a send/receive pair).
    Match {
        /// The send.
        send: OpRef,
        /// The receive.
        receive: OpRef,
    },
    /// The match set of a collective instance: the members' issues lead to
    /// it and it leads to their completions (seed 004's InterCB edges of a
    /// collective, through one node instead of one edge per pair).
    Collective(CollectiveInstance),
}

impl fmt::Display for Node {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Node::Event { op, event } => {
                let mark = match event {
                    Event::Issue => "issued",
                    Event::SendMatch | Event::ReceiveMatch => "matched",
                    Event::Complete => "completed",
                };
                write!(f, "{op} {mark}")
            }
            Node::Match { send, receive } => write!(f, "{receive} matched {send}"),
            Node::Collective(c) => write!(f, "{c}"),
        }
    }
}

/// Why an edge of a completes-before graph exists.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Edge {
    /// A call's own states in order (seed 001 Fig 3): issued before
    /// matched and completed; a receive (and a send that cannot be
    /// buffered) matched before completed.
    Lifecycle,
    /// IntraCB, seed 001 Definition 2 rule 1: two sends to one destination,
    /// on one communicator with one tag, match in issue order.
    SendOrder,
    /// IntraCB, Definition 2 rule 2: a receive that accepts every message a
    /// later receive accepts (wildcard source or same source, `MPI_ANY_TAG`
    /// or same tag, one communicator) matches first.
    ReceiveOrder,
    /// IntraCB, seed 004 Example 5: a receive that matched a message a
    /// later, wider receive could also accept was not trumped, so it
    /// matched first.
    NotTrumped,
    /// IntraCB, MPI's matching rule (not in seed 001): a message goes to the
    /// earliest posted receive that accepts it, so an earlier receive that
    /// accepts the message a later one took had already matched.
    OlderReceiveFirst,
    /// IntraCB, Definition 2 rules 3 and 4: a nonblocking operation
    /// completes before the call that completes its request.
    Completion,
    /// IntraCB, Definition 2 rule 5 (fence order): nothing is issued after a
    /// blocking call (barrier, wait, blocking send or receive, ...) until it
    /// returns. Stored from each fence's completion to the issues up to and
    /// including the next fence and to that fence's completion, which has
    /// the same transitive closure and survives deleting a barrier.
    Fence,
    /// InterCB of a collective: a member's issue to its match set.
    CollectiveIn,
    /// InterCB of a collective: the match set to a member's completion.
    CollectiveOut,
}

impl Edge {
    /// Whether the edge is an IntraCB rule of seed 001 Definition 2 (or
    /// seed 004's trumping exception).
    pub fn is_intra(self) -> bool {
        matches!(
            self,
            Edge::SendOrder
                | Edge::ReceiveOrder
                | Edge::NotTrumped
                | Edge::Completion
                | Edge::Fence
        )
    }
}

/// How standard-mode sends complete in the explored runs (`verify
/// --buffering`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum SendBuffering {
    /// The MPI library may buffer standard sends: a send completes without
    /// its receive, so only matching order flows from a receive to what
    /// follows its send. Gives fewer orderings, so more barriers are kept.
    #[default]
    Eager,
    /// Standard sends complete only once matched (seed 001's assumption,
    /// `--buffering zero`): the receive is also ordered before everything
    /// after the send's completion.
    Zero,
}

/// Options of the analysis.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
pub struct Options {
    /// How standard-mode sends completed in the runs.
    pub buffering: SendBuffering,
    /// Also search the paths from S's match back to R's (CheckRelevant's
    /// step "with R and S swapped"). In the event graph of a consistent,
    /// acyclic trace such a path never needs a barrier (see the crate
    /// documentation), so this only costs time; it is a cross-check.
    pub check_send_first: bool,
}

/// Whether `kind` blocks until the operation is complete (a fence).
pub(crate) fn is_fence(kind: OpKind) -> bool {
    use OpKind::*;
    matches!(
        kind,
        Init | InitThread
            | Finalize
            | Send
            | Ssend
            | Bsend
            | Rsend
            | Recv
            | Sendrecv
            | Probe
            | Mprobe
            | Mrecv
            | Wait
            | Waitall
            | Waitany
            | Waitsome
            | SendrecvReplace
    ) || (kind.class() == OpClass::Collective && !kind.is_nonblocking_collective())
}

/// Whether the send completes only once its receive matched it.
pub(crate) fn is_synchronous_send(kind: OpKind) -> bool {
    kind.is_synchronous_send()
}

/// Whether `op` is a point-to-point send that can be a candidate match
/// (it has one destination and one tag in its record).
pub(crate) fn is_plain_send(op: &Op) -> bool {
    op.kind.class() == OpClass::Send && !op.has(flags::PROC_NULL)
}

/// Whether `op` is a receive whose record tells its source and tag.
pub(crate) fn is_receive(op: &Op) -> bool {
    (matches!(op.kind, OpKind::Recv | OpKind::Mrecv) || op.kind.is_nonblocking_receive())
        && !op.has(flags::PROC_NULL)
        && !op.has(flags::CANCELLED)
}

/// Whether `op` has a send half (its own `SendMatch` event): it sends a
/// message ([`SendSide::of`]).
///
/// A `Sendrecv` record's `PROC_NULL` flag describes its source (the
/// receive half), so it says nothing about the send half: at the edge of a
/// halo exchange the send goes to a real neighbour while the receive comes
/// from `MPI_PROC_NULL`; [`SendSide::of`] reads the send half's own
/// destination.
pub(crate) fn has_send_half(op: &Op) -> bool {
    SendSide::of(op).is_some()
}

/// Whether `op` has a receive half (its own `ReceiveMatch` event).
pub(crate) fn has_receive_half(op: &Op) -> bool {
    (matches!(op.kind, OpKind::Recv | OpKind::Mrecv)
        || op.kind.is_sendrecv()
        || op.kind.is_nonblocking_receive())
        && !op.has(flags::PROC_NULL)
        && !op.has(flags::CANCELLED)
}

/// Whether the record becomes a graph node (MPI calls, not the tool's own
/// clock records or markers).
pub(crate) fn is_node(op: &Op) -> bool {
    !matches!(op.kind.class(), OpClass::Clock | OpClass::Marker)
}
