//! An offline oracle for the potential senders of wildcard receives: from
//! one run's complete traces, the exact set of ranks whose messages each
//! wildcard receive (or wildcard probe) could have taken instead, computed
//! on the matches-before order of seed 000 chapter 3, not on clocks.
//!
//! Tests use it to check the runtime's causality tracking: LVCP must find
//! exactly these senders (seed 000 Theorem 5.5, "if and only if"), LLCP may
//! miss some (Theorem 5.3 is one way; Fig 5.3), and neither may report a
//! sender the oracle rules out ([`compare`]).
//!
//! # The matches-before graph
//!
//! One node per recorded MPI call (a `Sendrecv` gets two: its send part
//! and its receive part), an arc `a → b` meaning `a` matches before `b`
//! (seed 000 §3.3, seed 001 Definition 2). Reachability is the relation
//! (rule C6 is the transitive closure; cycles only join events of one match
//! set, which the queries never compare):
//!
//! * **C1, program order after fences.** A call that the program cannot
//!   pass before it is matched orders every later call of its rank: `Recv`,
//!   the receive of `Sendrecv`, `Probe` and a recorded (successful)
//!   `Iprobe`, `Ssend`, every completion (`Wait`, `Waitall`, `Waitany`, a
//!   recorded, hence completed, `Test`), and every collective. Standard,
//!   buffered and ready sends (blocking or not), `Irecv`, and `Isend` order
//!   nothing after them: their match point floats.
//! * **C2.** An `Irecv` precedes the completion that completed it (the
//!   `Wait` that names it, `Op::request_origin`, or the completion whose
//!   `Matched` record names its message). An `Issend` precedes its `Wait`
//!   (it is synchronous: the wait returns only after the match); a plain
//!   `Isend` does not.
//! * **C3, send non-overtaking.** Each send precedes the next send of its
//!   rank to the same destination, communicator and tag.
//! * **C4/C4', receive non-overtaking.** A nonblocking receive `r1` still
//!   open (its completion not yet issued) when a later receive or probe
//!   `r2` of its rank is issued precedes `r2` when `r1`'s pattern accepts
//!   the envelope `r2` actually matched (C4' generalised: MPI would have
//!   given that message to the earlier-posted `r1`), or, when `r2` never
//!   matched, when `r1`'s pattern contains `r2`'s (C4). A receive issued as
//!   `MPI_ANY_SOURCE` counts as a wildcard even in a guided run that forced
//!   its source: the oracle is about the program, and the forced source
//!   only fixes its outcome. Receives whose completion was issued before
//!   `r2` need no arc: they reach `r2` through C1/C2.
//! * **C5/C7/C9, send-receive match sets.** The send precedes the receive
//!   it matched (a `Matched` record names the exact sender record), so what
//!   precedes a send precedes what follows its receive. For a synchronous
//!   send (`Ssend`, `Issend`) the receive also precedes the send's return
//!   (C10, seed 000 §5.2.1): what follows the send is after the receive.
//!   The return is a node of its own (an `Ssend`'s completion, an
//!   `Issend`'s `Wait`), not the send's match: what precedes the receive
//!   (an earlier wildcard receive of that rank) does not precede the send.
//! * **Collectives** (the k-th collective on a communicator of each rank
//!   form one set), by the kind's data flow ([`DataFlow`]). Synchronising
//!   ones (`Barrier`, `Allreduce`, `Allgather(v)`, `Alltoall(v/w)`,
//!   `Reduce_scatter(_block)`: every output needs every input) are full
//!   match sets (C8/C11): a hub node with arcs from every member's call and
//!   to every member's completion. The others are **not**: a non-root may
//!   leave `Reduce`/`Gather(v)` before the root entered it, so only
//!   non-root calls precede the root's completion; a root may leave
//!   `Bcast`/`Scatter(v)` early, so only the root's call precedes the
//!   others' completions (seed 003 Fig 4, SCENARIOS.md S11); `Scan` and
//!   `Exscan` order rank `i`'s completion after the calls of ranks below
//!   `i` only. A nonblocking collective's call is not a fence: its
//!   completion is the `Wait`/`Test` its `CollectiveComplete` record names.
//!   Rooted and prefix collectives on a communicator other than the world
//!   one get no cross-rank arcs (ranks cannot be placed): the oracle may
//!   then list more senders, never fewer.
//! * **Communicator constructors** (`CommMade` records on the parent) are
//!   full match sets too, numbered apart from the collectives: the runtime
//!   synchronises clocks there, and a send after an `MPI_Comm_split` cannot
//!   reach a receive made before it (SCENARIOS.md S11's split form, c4).
//! * A **wildcard probe** is preceded by the message it saw: the earliest
//!   send (in its sender's program order) from the probe's matched source
//!   with a compatible tag that no receive issued before the probe took.
//!
//! # Potential senders
//!
//! For a wildcard receive or probe `R` of rank `i` (the calls with a
//! `WildcardClock` record) a rank `q` is a potential sender when `q` is not
//! the rank `R` matched and some send `S` of `q` to `i` on `R`'s
//! communicator with a tag `R` accepts is
//!
//! 1. **not claimed**: `S` was not taken by `R`, nor by a receive of `i`
//!    issued before `R` (MPI matches a message to the earliest-posted
//!    receive that accepts it, so while that receive waits `S` cannot go to
//!    `R`; this is Theorem 5.5's "received by `r'` ... `r` issued before
//!    `r'`"), and
//! 2. **concurrent with `R`** (Definition 3.2): neither `R →mb S` (no chain
//!    orders `S` after `R`'s match, e.g. `S` is issued after a call that
//!    `R`'s match enabled) nor `S →mb R` (`S`'s match set precedes `R`,
//!    e.g. `S` was taken by a receive that matched before `R`; rule C9).
//!
//! Send non-overtaking needs no extra rule for a set of *ranks*: if an
//! earlier send `S0` of `q` to `i` with the same tag precedes `S` (C3), then
//! either `S0` is itself a candidate (and `q` is listed for it anyway) or
//! it was consumed before `R` (then `S` alone decides), or it is ordered
//! after `R` (then so is `S`, through C3). So every message is examined, and
//! `q` is listed if any of them qualifies.
//!
//! A send that no receive ever took (a run that deadlocked, or a message
//! left in flight) can qualify too; such senders are also listed in
//! [`OracleMatch::unreceived`], because no clock protocol can report a
//! message that never arrived, and [`compare`] does not count them missed.
//!
//! # Cost
//!
//! Building the graph is linear in the trace (C3 arcs chain consecutive
//! sends; C4 arcs come only from the receives still open, which is bounded
//! by the outstanding requests). The graph is then condensed and ordered
//! once, and each batch of 256 wildcard events costs two sweeps over its
//! arcs (one forward, one backward) with a bit per event, which answer
//! every candidate's concurrency at once, and one more sweep for the
//! enablers (`reach.rs`): linear in the graph times events / 256, where a
//! search per event and per sender was quadratic in the run. Choices among
//! requests keep a breadth-first search each. No recursion anywhere.
//!
//! # Limitations
//!
//! Ranks in `peer` fields are taken as world ranks, so the answer is exact
//! for `MPI_COMM_WORLD` (and communicators whose ranks coincide with it).
//! Communicators are compared by the ids the runtime names them with
//! (`OpKind::CommId`; handle bits for those it did not name). A `Waitall` that completed a
//! non-wildcard `Irecv` is linked to it through its `Matched` records (the
//! earliest open `Irecv` whose status names that sender).

use crate::record_map::RecordMap;
use mbh_trace::envelope::{Envelope, RecvPattern, SendSide};
use mbh_trace::op::{flags, DataFlow, OpClass};
use mbh_trace::rank_trace::{Op, RankTrace, WildcardEvent};
use mbh_trace::OpKind;
use petgraph::graph::{DiGraph, NodeIndex};
use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};
use std::collections::BTreeSet;

/// The potential senders of one wildcard receive or probe.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OracleMatch {
    /// The receiving rank.
    pub rank: i32,
    /// Its wildcard event number (from the `WildcardClock` record).
    pub event: u32,
    /// Index of the receive's (or probe's) record.
    pub op_index: u64,
    /// The call.
    pub kind: OpKind,
    /// The sender it matched (-1 when unknown).
    pub matched: i32,
    /// Every other rank whose message it could have taken, sorted.
    pub senders: Vec<i32>,
    /// The subset of `senders` listed only for messages no receive took.
    pub unreceived: Vec<i32>,
    /// For each of `senders`: the wildcard events `(rank, event)` in the
    /// causal past of its first message the event could have taken (see
    /// [`WildcardEvent::enablers`]), ascending; then `matched`'s, for the
    /// message it took. Senders with none are omitted.
    pub enablers: Vec<(i32, Vec<(i32, u32)>)>,
}

/// A sender on which the runtime and the oracle disagree.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SenderDiff {
    /// The receiving rank.
    pub rank: i32,
    /// The wildcard event number.
    pub event: u32,
    /// Index of the receive's (or probe's) record.
    pub op_index: u64,
    /// The sender.
    pub sender: i32,
}

/// How the runtime's potential senders compare with the oracle's.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Comparison {
    /// Senders the oracle lists that the runtime did not report (allowed
    /// for LLCP, Fig 5.3; not for LVCP). Senders listed only for messages
    /// never received are not counted.
    pub missed: Vec<SenderDiff>,
    /// Senders the runtime reported that the oracle rules out: the runtime
    /// would force a match that cannot happen (never allowed).
    pub false_matches: Vec<SenderDiff>,
    /// Wildcard events `(rank, event)` of one side the other lacks.
    pub unknown_events: Vec<(i32, u32)>,
}

impl Comparison {
    /// No false potential match and no unknown event.
    pub fn is_sound(&self) -> bool {
        self.false_matches.is_empty() && self.unknown_events.is_empty()
    }

    /// Sound and nothing missed.
    pub fn is_exact(&self) -> bool {
        self.is_sound() && self.missed.is_empty()
    }
}

/// Compares the runtime's wildcard events (with their `potential` senders)
/// with the oracle's answer for the same run. Choices among requests
/// ([`WildcardEvent::is_index_choice`]) are skipped.
pub fn compare(runtime: &[WildcardEvent], oracle: &[OracleMatch]) -> Comparison {
    let by_key: HashMap<(i32, u32), &OracleMatch> =
        oracle.iter().map(|m| ((m.rank, m.event), m)).collect();
    let mut out = Comparison::default();
    let mut seen = BTreeSet::new();
    // Choices among requests (`MPI_Waitany`, ...; seed 001 §4) are no
    // receives: the oracle judges senders only.
    for e in runtime.iter().filter(|e| !e.is_index_choice()) {
        let Some(m) = by_key.get(&(e.rank, e.event)) else {
            out.unknown_events.push((e.rank, e.event));
            continue;
        };
        seen.insert((e.rank, e.event));
        let diff = |sender| SenderDiff {
            rank: e.rank,
            event: e.event,
            op_index: e.op_index,
            sender,
        };
        for &s in &e.potential {
            if s != m.matched && !m.senders.contains(&s) {
                out.false_matches.push(diff(s));
            }
        }
        for &s in &m.senders {
            if !e.potential.contains(&s) && !m.unreceived.contains(&s) {
                out.missed.push(diff(s));
            }
        }
    }
    for m in oracle {
        if !seen.contains(&(m.rank, m.event)) {
            out.unknown_events.push((m.rank, m.event));
        }
    }
    out
}

/// A point-to-point send as the oracle sees it.
#[derive(Debug, Clone, Copy)]
struct SendInfo {
    rank: i32,
    op: u64,
    /// What it sends (`side.dest` is `rank`'s destination).
    side: SendSide,
    node: NodeIndex,
    /// Its position: the trace of its rank, and `op`.
    at: At,
    /// The receive that took it, if one did ([`Oracle::taken_by`]): asked
    /// for each candidate of each event, so read once.
    taken: Option<At>,
}

/// A collective call of one set: trace index, node, kind, root.
/// A member of a collective match set: trace position, the node of its
/// call, the record index of its call, kind, root.
type Member = (usize, NodeIndex, u64, OpKind, i32);

/// A call's position: (trace index, record index).
type At = (usize, u64);

/// One wildcard event the oracle answers for.
struct Question {
    /// Its trace's position.
    t: usize,
    event: u32,
    /// Its call's record index.
    call: u64,
    /// The rank it matched.
    matched: i32,
    kind: OpKind,
    /// Its call's node.
    node: NodeIndex,
}

/// The potential senders of every wildcard receive and probe of a run,
/// from all ranks' complete traces (any order), sorted by rank and event.
pub fn potential_matches(traces: &[RankTrace]) -> Vec<OracleMatch> {
    Oracle::build(traces, false).answer()
}

/// [`potential_matches`] and, after them, the potential indices of every
/// choice among requests (`MPI_Waitany`, `MPI_Testany`, ...; seed 001 §4):
/// a receive of the array still incomplete when the choice returned
/// ([`OpKind::ChoiceCandidate`]) could have been returned instead when the
/// send it took is not ordered after the choice's call. Lamport clocks
/// cannot tell (a message with a larger clock need not be causally after);
/// the search adds these to the runtime's. `senders` holds indices there.
pub fn potential_senders_and_indices(
    traces: &[RankTrace],
    zero_buffering: bool,
) -> Vec<OracleMatch> {
    let oracle = Oracle::build(traces, zero_buffering);
    let mut out = oracle.answer();
    out.extend(oracle.answer_indices());
    out
}

/// [`potential_matches`] for a run under `--buffering zero`, where the
/// runtime made every standard-mode send synchronous (the trace still
/// records `MPI_Send`): each orders what follows its return after its
/// receive (C10), as an `MPI_Ssend` would.
pub fn potential_matches_zero_buffering(traces: &[RankTrace]) -> Vec<OracleMatch> {
    Oracle::build(traces, true).answer()
}

/// The send kind a record behaves as: under zero buffering, standard sends
/// are synchronous.
fn behaves_as(kind: OpKind, zero_buffering: bool) -> OpKind {
    match kind {
        OpKind::Send if zero_buffering => OpKind::Ssend,
        OpKind::Isend if zero_buffering => OpKind::Issend,
        OpKind::StartSend if zero_buffering => OpKind::StartSsend,
        other => other,
    }
}

/// No node, in [`Oracle::node`].
const NO_NODE: u32 = u32::MAX;

// Per-trace arrays and sorted maps, not maps keyed by (trace, record):
// at 1,024 ranks of 10^4 calls those were a cache miss per call and a
// quarter of the oracle's time.
struct Oracle<'a> {
    traces: &'a [RankTrace],
    /// The matches-before graph while it is built; then empty, and
    /// `condensed` answers for it.
    graph: DiGraph<(), ()>,
    /// The graph's condensation, which every question is asked of.
    condensed: reach::Condensed,
    /// Main node of each call (the receive part of a `Sendrecv`), by
    /// trace and position of the record ([`NO_NODE`]: none).
    node: Vec<Vec<u32>>,
    /// Whether each trace's record indices are their positions (as in
    /// every trace the runtime writes): its records are then found
    /// without reading them.
    dense: Vec<bool>,
    /// The node of each send (a `Sendrecv`'s send part), by trace and
    /// record.
    send_node: Vec<RecordMap<NodeIndex>>,
    /// The ranks with wildcard events: the only destinations `sends_to`
    /// is asked about.
    asked: HashSet<i32>,
    /// Sends by destination rank, for the ranks in `asked`.
    sends_to: HashMap<i32, Vec<SendInfo>>,
    /// Each trace's position, by its rank.
    rank_index: HashMap<i32, usize>,
    /// Which receive call took a send: by the send's trace and record, the
    /// receive's position.
    taken_by: Vec<RecordMap<At>>,
    /// The send a receive call took: by the receive's trace and record,
    /// the send's position.
    took: Vec<RecordMap<At>>,
    /// Per trace, the wildcard events: (event, call index, matched rank).
    events: Vec<Vec<(u32, u64, i32)>>,
}

/// Each trace's position, by its rank.
fn rank_index(traces: &[RankTrace]) -> HashMap<i32, usize> {
    traces
        .iter()
        .enumerate()
        .map(|(i, t)| (t.rank, i))
        .collect()
}

/// A destination is a rank of the send's communicator; the sends are kept
/// by world rank. Each member names its rank in every communicator it
/// made (`CommId`, whose id the records on it carry as `comm`):
/// (communicator, its rank) to world rank. `MPI_COMM_WORLD` and unnamed
/// communicators are as written.
fn world_ranks(traces: &[RankTrace]) -> HashMap<(u64, i32), i32> {
    traces
        .iter()
        .flat_map(|t| {
            t.ops
                .iter()
                .filter_map(Op::comm_naming)
                .filter_map(move |naming| Some(((naming.id, naming.rank?), t.rank)))
        })
        .collect()
}

/// The record with index `i` (records are dense, so normally `ops[i]`).
fn op_at(trace: &RankTrace, i: u64) -> Option<&Op> {
    position(trace, i).map(|at| &trace.ops[at])
}

/// Where the record with index `i` is in `trace.ops` (records are dense,
/// so normally at `i`).
fn position(trace: &RankTrace, i: u64) -> Option<usize> {
    usize::try_from(i)
        .ok()
        .filter(|&at| trace.ops.get(at).is_some_and(|op| op.index == i))
        .or_else(|| trace.ops.iter().position(|op| op.index == i))
}

/// The `Irecv`s of one trace already linked to a completion: a flag per
/// record, and the indices no record has.
struct Linked<'a> {
    trace: &'a RankTrace,
    at: Vec<bool>,
    elsewhere: HashSet<u64>,
}

impl<'a> Linked<'a> {
    fn new(trace: &'a RankTrace) -> Self {
        Linked {
            trace,
            at: vec![false; trace.ops.len()],
            elsewhere: HashSet::default(),
        }
    }

    /// Links `irecv`; false if it was already.
    fn insert(&mut self, irecv: u64) -> bool {
        match position(self.trace, irecv) {
            Some(at) => !std::mem::replace(&mut self.at[at], true),
            None => self.elsewhere.insert(irecv),
        }
    }
}

/// What the walk over each rank's calls leaves for the arcs between ranks.
#[derive(Default)]
struct CallNodes {
    /// The members of each collective match set, by (communicator,
    /// position among its collectives).
    collectives: HashMap<(u64, usize), Vec<Member>>,
    /// The calls of each communicator constructor, numbered apart.
    constructors: HashMap<(u64, usize), Vec<NodeIndex>>,
    /// Where a synchronous send returns: an `Ssend`'s own completion node,
    /// an `Issend`'s `Wait` (under zero buffering, also those of the
    /// standard sends, which behave as synchronous); no other send has an
    /// entry. Its receive precedes that, not the send's match (see
    /// [`Oracle::add_message_arcs`]).
    sync_return: HashMap<At, NodeIndex>,
}

/// One rank's walk in [`Oracle::add_rank_calls`]: the state program order
/// carries from call to call.
#[derive(Default)]
struct RankWalk {
    /// The last call that orders every later call of the rank (C1).
    last_fence: Option<NodeIndex>,
    /// Nonblocking receives not yet completed: record, pattern, node (C4).
    open: Vec<(u64, RecvPattern, NodeIndex)>,
    /// The last send on each (destination, communicator, tag) (C3).
    channel: HashMap<(i32, u64, i32), NodeIndex>,
    collective_seq: HashMap<u64, usize>,
    constructor_seq: HashMap<u64, usize>,
    /// Synchronous nonblocking sends by record, for their `Wait` (C2).
    issend: HashMap<u64, NodeIndex>,
}

impl RankWalk {
    /// Collective call `op`, node `n` of rank `t`: a member of its
    /// communicator's next collective.
    fn add_collective(&mut self, t: usize, op: &Op, n: NodeIndex, nodes: &mut CallNodes) {
        let seq = self.collective_seq.entry(op.comm).or_default();
        nodes
            .collectives
            .entry((op.comm, *seq))
            .or_default()
            .push((t, n, op.index, op.kind, op.peer));
        *seq += 1;
        // A nonblocking one completes later, in the call its
        // `CollectiveComplete` record names.
        if !op.kind.is_nonblocking_collective() {
            self.last_fence = Some(n);
        }
    }
}

impl<'a> Oracle<'a> {
    /// The matches-before graph of a run (see the module's rules), in
    /// phases: the matches, each rank's calls in program order, then the
    /// arcs between ranks (messages, collectives, probes).
    fn build(traces: &'a [RankTrace], zero_buffering: bool) -> Self {
        // Reserved up front: growing a graph of 10^7 nodes by doubling
        // copies it and faults its pages in again (BENCHMARKS.md).
        let calls = traces.iter().map(|t| t.ops.len() / 2).sum::<usize>();
        let mut o = Oracle {
            traces,
            graph: DiGraph::with_capacity(calls, 2 * calls),
            condensed: reach::Condensed::default(),
            node: traces.iter().map(|t| vec![NO_NODE; t.ops.len()]).collect(),
            dense: vec![false; traces.len()],
            send_node: (0..traces.len()).map(|_| RecordMap::default()).collect(),
            asked: HashSet::default(),
            sends_to: HashMap::default(),
            rank_index: rank_index(traces),
            taken_by: Vec::new(),
            took: Vec::new(),
            events: vec![Vec::new(); traces.len()],
        };
        let completes = o.read_matches();
        o.asked = traces
            .iter()
            .zip(&o.events)
            .filter(|(_, events)| !events.is_empty())
            .map(|(trace, _)| trace.rank)
            .collect();
        let world_rank = world_ranks(traces);
        let mut nodes = CallNodes::default();
        for (t, completed) in completes.iter().enumerate() {
            o.add_rank_calls(t, completed, &world_rank, zero_buffering, &mut nodes);
        }
        o.add_message_arcs(&nodes);
        o.add_collective_arcs(nodes);
        o.add_probe_arcs();
        // The graph goes as it is condensed: at 1,024 ranks of 10^4 calls
        // it is 0.5 GiB, which the sweeps' labels need next.
        o.condensed = reach::Condensed::new(std::mem::take(&mut o.graph));
        o
    }

    /// Pass 1: every rank's wildcard events, which `Irecv`s each completion
    /// completed (returned, by rank), and which send each receive took.
    fn read_matches(&mut self) -> Vec<RecordMap<u64>> {
        let traces = self.traces;
        let rank_index = rank_index(traces);
        let mut completes = Vec::with_capacity(traces.len());
        let mut taken_by: Vec<Vec<(u64, At)>> = vec![Vec::new(); traces.len()];
        for (t, trace) in traces.iter().enumerate() {
            let ops = &trace.ops;
            let mut event_call: HashMap<u32, u64> = HashMap::default();
            for clock in ops
                .iter()
                .filter(|op| op.kind == OpKind::WildcardClock)
                .filter_map(Op::event_clock)
            {
                event_call.insert(clock.event, clock.call);
                self.events[t].push((clock.event, clock.call, clock.matched));
            }
            let get = |i: u64| op_at(trace, i);
            let mut linked = Linked::new(trace);
            // (completion, Irecv), in the order found.
            let mut done: Vec<(u64, u64)> = Vec::new();
            // Waits that name their request's record.
            let mut dense = true;
            for (at, op) in ops.iter().enumerate() {
                dense &= op.index == at as u64;
                if let Some(origin) = op.request_origin() {
                    if get(origin).is_some_and(|c| c.kind.is_nonblocking_receive())
                        && linked.insert(origin)
                    {
                        done.push((op.index, origin));
                    }
                }
            }
            self.dense[t] = dense;
            let mut took: Vec<(u64, At)> = Vec::new();
            // The receives of `took[..gathered]`, gathered when asked for.
            let mut took_calls: HashSet<u64> = HashSet::default();
            let mut gathered = 0;
            for (m, matched) in ops.iter().filter_map(|op| Some((op, op.matched_send()?))) {
                let Some(receiver) = get(matched.receiver) else {
                    continue;
                };
                let send = matched.send;
                let call = if receiver.kind.class() == OpClass::Completion {
                    let by_event = matched.event.and_then(|e| event_call.get(&e)).copied();
                    // A call on several requests names only its first: the
                    // `Completed` record before this one says which request
                    // this message completed.
                    let by_completed = trace
                        .completed_request_of(m)
                        .filter(|&i| get(i).is_some_and(|c| c.kind.is_nonblocking_receive()));
                    let by_aux = receiver
                        .request_origin()
                        .filter(|&i| get(i).is_some_and(|c| c.kind.is_nonblocking_receive()));
                    let found = by_event.or(by_completed).or(by_aux).or_else(|| {
                        took_calls.extend(took[gathered..].iter().map(|&(c, _)| c));
                        gathered = took.len();
                        // The earliest Irecv before it, not yet linked to a
                        // message, whose status names this sender.
                        ops.iter()
                            .filter(|c| c.kind.is_nonblocking_receive() && c.index < receiver.index)
                            .filter(|c| !took_calls.contains(&c.index))
                            .find(|c| c.matched.is_none_or(|(s, _)| s == send.sender))
                            .map(|c| c.index)
                    });
                    let Some(irecv) = found else {
                        continue;
                    };
                    if linked.insert(irecv) {
                        done.push((receiver.index, irecv));
                    }
                    irecv
                } else {
                    receiver.index
                };
                if let Some(&s) = rank_index.get(&send.sender) {
                    took.push((call, (s, send.record)));
                    taken_by[s].push((send.record, (t, call)));
                }
            }
            self.took.push(RecordMap::last_wins(took));
            completes.push(RecordMap::multi(done));
        }
        // Pushed in the order the traces were read: where two receives
        // name one send, the last one read took it (as a map's insert).
        self.taken_by = taken_by.into_iter().map(RecordMap::last_wins).collect();
        completes
    }

    /// Pass 2 for rank `t`: a node per call, the rank's own arcs (C1-C4),
    /// and what the arcs between ranks need, into `nodes`.
    fn add_rank_calls(
        &mut self,
        t: usize,
        completes: &RecordMap<u64>,
        world_rank: &HashMap<(u64, i32), i32>,
        zero_buffering: bool,
        nodes: &mut CallNodes,
    ) {
        let trace = &self.traces[t];
        let mut walk = RankWalk::default();
        let mut send_node = Vec::new();
        for (at, op) in trace.ops.iter().enumerate() {
            let class = op.kind.class();
            if op.has(flags::CANCELLED) {
                // It matched nothing and ordered nothing.
                continue;
            }
            if op.kind == OpKind::CommMade {
                self.add_constructor(op, &mut walk, nodes);
                continue;
            }
            if !matches!(
                class,
                OpClass::Send
                    | OpClass::Receive
                    | OpClass::Probe
                    | OpClass::Completion
                    | OpClass::Collective
            ) {
                continue;
            }
            // The send part.
            if let Some(side) = SendSide::of(op) {
                let n = self.add_send(t, op, side, world_rank, &mut walk);
                send_node.push((op.index, n));
                let acts_as = behaves_as(op.kind, zero_buffering);
                if matches!(acts_as, OpKind::Issend | OpKind::StartSsend) {
                    walk.issend.insert(op.index, n);
                }
                if !op.kind.is_sendrecv() {
                    self.node[t][at] = n.index() as u32;
                    if acts_as == OpKind::Ssend {
                        // The send returns after its match: a node of its
                        // own, which fences the rank's later calls.
                        let returned = self.graph.add_node(());
                        self.graph.add_edge(n, returned, ());
                        nodes.sync_return.insert((t, op.index), returned);
                        walk.last_fence = Some(returned);
                    }
                    continue;
                }
            } else if class == OpClass::Send {
                // MPI_PROC_NULL: no message, no order.
                continue;
            }
            let n = self.add_call(walk.last_fence);
            self.node[t][at] = n.index() as u32;
            match class {
                OpClass::Receive | OpClass::Probe => self.add_receive(t, op, n, &mut walk),
                OpClass::Completion => self.add_completion(t, op, n, completes, &mut walk, nodes),
                OpClass::Collective => walk.add_collective(t, op, n, nodes),
                _ => {}
            }
        }
        self.send_node[t] = RecordMap::last_wins(send_node);
    }

    /// A communicator constructor synchronises its parent's ranks (the
    /// runtime's clocks take the maximum): a full match set of its own
    /// numbering, like a barrier.
    fn add_constructor(&mut self, op: &Op, walk: &mut RankWalk, nodes: &mut CallNodes) {
        let n = self.add_call(walk.last_fence);
        let seq = walk.constructor_seq.entry(op.comm).or_default();
        nodes
            .constructors
            .entry((op.comm, *seq))
            .or_default()
            .push(n);
        *seq += 1;
        walk.last_fence = Some(n);
    }

    /// The node of the send part `side` of call `op` of rank `t`, after
    /// the rank's last send on its channel (C3); a send to a rank whose
    /// receives were asked about is kept for them.
    fn add_send(
        &mut self,
        t: usize,
        op: &Op,
        side: SendSide,
        world_rank: &HashMap<(u64, i32), i32>,
        walk: &mut RankWalk,
    ) -> NodeIndex {
        let trace = &self.traces[t];
        let n = self.add_call(walk.last_fence);
        if let Some(prev) = walk.channel.insert((side.dest, side.comm, side.tag), n) {
            self.graph.add_edge(prev, n, ());
        }
        let dest = world_rank
            .get(&(side.comm, side.dest))
            .copied()
            .unwrap_or(side.dest);
        if self.asked.contains(&dest) {
            let at = (self.rank_index[&trace.rank], op.index);
            let taken = self.taken_by[at.0].get(at.1).copied();
            self.sends_to.entry(dest).or_default().push(SendInfo {
                rank: trace.rank,
                op: op.index,
                side,
                node: n,
                at,
                taken,
            });
        }
        n
    }

    /// A completion call, node `n` of rank `t`: after the receives it
    /// completes (C4) and the synchronous send it waits for (C2); it
    /// fences the rank's later calls.
    fn add_completion(
        &mut self,
        t: usize,
        op: &Op,
        n: NodeIndex,
        completes: &RecordMap<u64>,
        walk: &mut RankWalk,
        nodes: &mut CallNodes,
    ) {
        let done = completes.all(op.index);
        if !done.is_empty() {
            for &irecv in done {
                if let Some(r) = self.node_of(t, irecv) {
                    self.graph.add_edge(r, n, ());
                }
            }
            walk.open.retain(|(i, _, _)| !done.contains(i));
        }
        if let Some(origin) = op.request_origin() {
            if let Some(&s) = walk.issend.get(&origin) {
                self.graph.add_edge(s, n, ());
                nodes.sync_return.insert((t, origin), n);
            }
        }
        walk.last_fence = Some(n);
    }

    /// The main node of record `record` of trace `t`, if it has one.
    fn node_of(&self, t: usize, record: u64) -> Option<NodeIndex> {
        let at = if self.dense[t] {
            usize::try_from(record)
                .ok()
                .filter(|&at| at < self.node[t].len())?
        } else {
            position(&self.traces[t], record)?
        };
        let node = self.node[t][at];
        (node != NO_NODE).then(|| NodeIndex::new(node as usize))
    }

    /// A node for a call, after the rank's last fence (C1).
    fn add_call(&mut self, last_fence: Option<NodeIndex>) -> NodeIndex {
        let n = self.graph.add_node(());
        if let Some(f) = last_fence {
            self.graph.add_edge(f, n, ());
        }
        n
    }

    /// A receive's or probe's arcs from the nonblocking receives still open
    /// before it (C4/C4'), and its place in the walk.
    fn add_receive(&mut self, t: usize, op: &Op, n: NodeIndex, walk: &mut RankWalk) {
        // The program's pattern: MPI orders receives by what the program
        // wrote, and a forced wildcard was a wildcard in the run of the
        // program whose matches this replay reproduced (the oracle is about
        // the program, not the replay's postings).
        let pattern = RecvPattern::as_written(op);
        let envelope = op.matched.or_else(|| {
            let source = match self.took[t].get(op.index) {
                Some(&(s, _)) => self.traces[s].rank,
                None => {
                    self.events[t]
                        .iter()
                        .find(|e| e.1 == op.index && e.2 >= 0)?
                        .2
                }
            };
            Some((source, pattern.tag?))
        });
        let envelope = envelope.map(|(source, tag)| Envelope {
            comm: op.comm,
            source,
            tag,
        });
        for &(_, p, from) in &walk.open {
            let before = match &envelope {
                Some(message) => p.accepts(message),
                None => p.contains(&pattern),
            };
            if before {
                self.graph.add_edge(from, n, ());
            }
        }
        if op.kind.is_nonblocking_receive() {
            walk.open.push((op.index, pattern, n));
        } else {
            walk.last_fence = Some(n);
        }
    }

    /// Send-receive match sets (C5/C7/C9), and C10 for synchronous sends.
    fn add_message_arcs(&mut self, nodes: &CallNodes) {
        let mut arcs = Vec::new();
        for (s, taken_by) in self.taken_by.iter().enumerate() {
            for (si, &(r, ri)) in taken_by.iter() {
                let (Some(&sn), Some(rn)) = (self.send_node[s].get(si), self.node_of(r, ri)) else {
                    continue;
                };
                arcs.push((sn, rn));
                // Seed 000 §5.2.1: what follows a synchronous send's return
                // follows the receive (only a send that behaves as
                // synchronous has a return in `sync_return`). Not the
                // send's match itself: that would put everything before
                // the receive (an earlier wildcard receive of its rank)
                // before the send, and hide a match that send could have
                // made (SCENARIOS.md S8).
                if let Some(&returned) = nodes.sync_return.get(&(s, si)) {
                    arcs.push((rn, returned));
                }
            }
        }
        for (from, to) in arcs {
            self.graph.add_edge(from, to, ());
        }
    }

    /// Collective and constructor match sets: each member's call (`in`)
    /// and where it completed (`out`: the call itself, or for a
    /// nonblocking one the completion the runtime named; none if it never
    /// completed).
    fn add_collective_arcs(&mut self, nodes: CallNodes) {
        let traces = self.traces;
        let world = traces
            .iter()
            .flat_map(|t| t.ops.iter())
            .find(|op| matches!(op.kind, OpKind::Init | OpKind::InitThread))
            .map(|op| op.comm);
        let completion: Vec<HashMap<u64, Option<u64>>> = traces
            .iter()
            .map(|trace| {
                trace
                    .ops
                    .iter()
                    .filter_map(Op::collective_completion)
                    .map(|done| (done.collective, done.completed_by))
                    .collect()
            })
            .collect();
        for calls in nodes.constructors.values() {
            let hub = self.graph.add_node(());
            for &n in calls {
                self.graph.add_edge(n, hub, ());
                self.graph.add_edge(hub, n, ());
            }
        }
        for ((comm, _), members) in nodes.collectives {
            let kind = members[0].3;
            let ends: Vec<(i32, NodeIndex, Option<NodeIndex>)> = members
                .iter()
                .map(|&(t, n, index, k, _)| {
                    let out = if k.is_nonblocking_collective() {
                        completion[t]
                            .get(&index)
                            .copied()
                            .flatten()
                            .and_then(|c| self.node_of(t, c))
                    } else {
                        Some(n)
                    };
                    (traces[t].rank, n, out)
                })
                .collect();
            let root = members[0].4;
            // Whether member `from`'s call precedes member `to`'s
            // completion (ranks are world ranks: rooted and prefix flows
            // are placed on the world communicator only).
            let precedes = |from: i32, to: i32| match kind.data_flow() {
                Some(DataFlow::FromRoot) => from == root && to != root,
                Some(DataFlow::ToRoot) => to == root && from != root,
                Some(DataFlow::Prefix) => from < to,
                Some(DataFlow::ExclusivePrefix) => from < to,
                _ => false,
            };
            match kind.data_flow() {
                Some(DataFlow::All) | None => {
                    let hub = self.graph.add_node(());
                    for &(_, n, out) in &ends {
                        self.graph.add_edge(n, hub, ());
                        if let Some(out) = out {
                            self.graph.add_edge(hub, out, ());
                        }
                    }
                }
                Some(_) if Some(comm) != world => {}
                Some(_) => {
                    for &(from, n, _) in &ends {
                        for &(to, _, out) in &ends {
                            if let (true, Some(out)) = (precedes(from, to), out) {
                                self.graph.add_edge(n, out, ());
                            }
                        }
                    }
                }
            }
        }
    }

    /// Wildcard probes: each is preceded by the message it saw.
    fn add_probe_arcs(&mut self) {
        let traces = self.traces;
        for (t, trace) in traces.iter().enumerate() {
            for &(_, call, matched) in &self.events[t] {
                let Some(op) = op_at(trace, call) else {
                    continue;
                };
                if op.kind.class() != OpClass::Probe {
                    continue;
                }
                // As written: which message the program's probe saw (see
                // the receives above).
                let pattern = RecvPattern::as_written(op);
                let seen = self
                    .sends_to
                    .get(&trace.rank)
                    .into_iter()
                    .flatten()
                    .filter(|s| s.rank == matched && pattern.accepts(&s.side.envelope(s.rank)))
                    .filter(|s| s.taken.is_none_or(|(_, ri)| ri > call))
                    .min_by_key(|s| s.op)
                    .map(|s| s.node);
                if let (Some(s), Some(p)) = (seen, self.node_of(t, call)) {
                    self.graph.add_edge(s, p, ());
                }
            }
        }
    }

    fn answer(&self) -> Vec<OracleMatch> {
        let questions: Vec<Question> = self
            .traces
            .iter()
            .enumerate()
            .flat_map(|(t, trace)| {
                self.events[t]
                    .iter()
                    .filter_map(move |&(event, call, matched)| {
                        let op = op_at(trace, call)?;
                        let node = self.node_of(t, call)?;
                        Some(Question {
                            t,
                            event,
                            call,
                            matched,
                            kind: op.kind,
                            node,
                        })
                    })
            })
            .collect();
        let condensed = &self.condensed;
        let mut labels = Vec::new();
        let mut out = Vec::with_capacity(questions.len());
        // Per answer, in order: the sender whose message's past is asked
        // for, and that message's node.
        let mut past_wanted: Vec<Vec<(i32, NodeIndex)>> = Vec::with_capacity(questions.len());
        for batch in questions.chunks(reach::BATCH) {
            let candidates: Vec<Vec<&SendInfo>> =
                batch.iter().map(|q| self.candidates(q)).collect();
            let mut ordered: Vec<Vec<bool>> =
                candidates.iter().map(|c| vec![false; c.len()]).collect();
            let sources: Vec<NodeIndex> = batch.iter().map(|q| q.node).collect();
            // Ordered after the event (it reaches them) or before it (they
            // reach it): Definition 3.2's two ways not to be concurrent.
            for direction in [reach::Sweep::Forward, reach::Sweep::Backward] {
                condensed.sweep(&sources, direction, &mut labels);
                for (i, sends) in candidates.iter().enumerate() {
                    for (k, send) in sends.iter().enumerate() {
                        ordered[i][k] |= condensed.has(&labels, send.node, i);
                    }
                }
            }
            for ((q, sends), ordered) in batch.iter().zip(&candidates).zip(&ordered) {
                let mut senders = BTreeSet::new();
                let mut received = BTreeSet::new();
                let mut wanted = Vec::new();
                for (s, _) in sends.iter().zip(ordered).filter(|(_, &o)| !o) {
                    // The first message of each sender (sends are listed
                    // in program order) is the one MPI would deliver.
                    if senders.insert(s.rank) {
                        wanted.push((s.rank, s.node));
                    }
                    if s.taken.is_some() {
                        received.insert(s.rank);
                    }
                }
                // The message it took needs its own past as much.
                if let Some(&node) = self.took[q.t]
                    .get(q.call)
                    .and_then(|&(s, op)| self.send_node[s].get(op))
                {
                    wanted.push((q.matched, node));
                }
                past_wanted.push(wanted);
                out.push(OracleMatch {
                    rank: self.traces[q.t].rank,
                    event: q.event,
                    op_index: q.call,
                    kind: q.kind,
                    matched: q.matched,
                    unreceived: senders.difference(&received).copied().collect(),
                    senders: senders.into_iter().collect(),
                    enablers: Vec::new(),
                });
            }
        }
        let pasts = self.wildcard_pasts(condensed, &past_wanted);
        for (answer, wanted) in out.iter_mut().zip(&past_wanted) {
            answer.enablers = wanted
                .iter()
                .filter_map(|&(sender, node)| {
                    let past = &pasts[&node];
                    (!past.is_empty()).then(|| (sender, past.clone()))
                })
                .collect();
        }
        out.sort_by_key(|m| (m.rank, m.event));
        out
    }

    /// The messages wildcard event `q` could take besides the one it did:
    /// unclaimed, compatible with its pattern (any source), not from the
    /// matched rank.
    fn candidates(&self, q: &Question) -> Vec<&SendInfo> {
        let trace = &self.traces[q.t];
        let Some(op) = op_at(trace, q.call) else {
            return Vec::new();
        };
        // The program's pattern, any source: which other senders the
        // program's wildcard could have taken.
        let pattern = RecvPattern {
            source: None,
            ..RecvPattern::as_written(op)
        };
        let took = self.took[q.t].get(q.call);
        self.sends_to
            .get(&trace.rank)
            .into_iter()
            .flatten()
            .filter(|s| s.rank != q.matched && pattern.accepts(&s.side.envelope(s.rank)))
            .filter(|s| {
                took != Some(&s.at) && s.taken.is_none_or(|(rt, ri)| rt != q.t || ri > q.call)
            })
            .collect()
    }

    /// For every node in `wanted`: the wildcard events that match before
    /// it (reach it), ascending. One forward sweep per batch of events.
    fn wildcard_pasts(
        &self,
        condensed: &reach::Condensed,
        wanted: &[Vec<(i32, NodeIndex)>],
    ) -> HashMap<NodeIndex, Vec<(i32, u32)>> {
        let mut pasts: HashMap<NodeIndex, Vec<(i32, u32)>> = wanted
            .iter()
            .flatten()
            .map(|&(_, node)| (node, Vec::new()))
            .collect();
        if pasts.is_empty() {
            return pasts;
        }
        let mut events: Vec<(NodeIndex, (i32, u32))> = self.wildcard_nodes().into_iter().collect();
        events.sort_unstable_by_key(|&(node, event)| (event, node));
        let mut labels = Vec::new();
        for batch in events.chunks(reach::BATCH) {
            let sources: Vec<NodeIndex> = batch.iter().map(|&(node, _)| node).collect();
            condensed.sweep(&sources, reach::Sweep::Forward, &mut labels);
            for (&node, past) in pasts.iter_mut() {
                for (i, &(wildcard, event)) in batch.iter().enumerate() {
                    if wildcard != node && condensed.has(&labels, node, i) {
                        past.push(event);
                    }
                }
            }
        }
        for past in pasts.values_mut() {
            past.sort_unstable();
        }
        pasts
    }

    /// The potential indices of each choice with candidates (see
    /// [`potential_senders_and_indices`]): one search from the choice's
    /// call per choice.
    fn answer_indices(&self) -> Vec<OracleMatch> {
        // Sized at the first choice: most runs have none.
        let mut stamp = Vec::new();
        let mut generation = 0u32;
        let mut out = Vec::new();
        for (t, trace) in self.traces.iter().enumerate() {
            let mut by_choice: std::collections::BTreeMap<(u32, u64), Vec<(i32, u64)>> =
                std::collections::BTreeMap::new();
            for candidate in trace.ops.iter().filter_map(Op::choice_candidate) {
                by_choice
                    .entry((candidate.event, candidate.choice))
                    .or_default()
                    .push((candidate.index, candidate.receive));
            }
            for ((event, call), candidates) in by_choice {
                let (Some(from), Some(choice)) = (self.node_of(t, call), op_at(trace, call)) else {
                    continue;
                };
                // The nodes of the sends the candidates took; one not
                // reached from the choice's call could have come first. A
                // candidate that took no send stands at the choice's own
                // node, so the search marks it ordered (never offered).
                let sends: Vec<NodeIndex> = candidates
                    .iter()
                    .map(|&(_, made)| {
                        self.took[t]
                            .get(made)
                            .and_then(|&(s, op)| self.send_node[s].get(op))
                            .copied()
                            .unwrap_or(from)
                    })
                    .collect();
                let mut after = vec![false; sends.len()];
                generation += 1;
                self.condensed
                    .search(from, &sends, &mut stamp, generation, &mut after);
                let indices: Vec<i32> = candidates
                    .iter()
                    .zip(&after)
                    .filter(|(_, &ordered)| !ordered)
                    .map(|(&(index, _), _)| index)
                    .collect();
                out.push(OracleMatch {
                    rank: trace.rank,
                    event,
                    op_index: call,
                    kind: choice.kind,
                    matched: -1,
                    senders: indices,
                    unreceived: Vec::new(),
                    enablers: Vec::new(),
                });
            }
        }
        out
    }

    /// The node of each wildcard event's call, with its `(rank, event)`.
    fn wildcard_nodes(&self) -> HashMap<NodeIndex, (i32, u32)> {
        let mut at = HashMap::default();
        for (t, trace) in self.traces.iter().enumerate() {
            for &(event, call, _) in &self.events[t] {
                if let Some(node) = self.node_of(t, call) {
                    at.insert(node, (trace.rank, event));
                }
            }
        }
        at
    }
}

mod reach;

#[cfg(test)]
mod tests;
