//! CheckRelevant (seed 004 §3.2) on one run: for each wildcard receive R
//! and each send S it could have taken but did not, the barrier instances
//! through which alone R and S are ordered.

use crate::cbgraph::CbGraph;
use crate::graph::{record, resolve_matches, RawMatch, RunGraph};
use crate::horizon::Horizon;
use crate::model::{
    is_fence, is_plain_send, is_receive, CollectiveInstance, Edge, Event, Node, OpRef,
};
use crate::reach::{CutRules, Sweep, WindowedReach, Workspace};
use mbh_trace::op::flags;
use mbh_trace::{RankTrace, RecvPattern};
use petgraph::graph::NodeIndex;
use petgraph::visit::EdgeRef;
use petgraph::Direction;
use rayon::prelude::*;
use rustc_hash::{FxHashMap, FxHashSet};
use serde::Serialize;

/// Which of the two a barrier orders first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Order {
    /// The receive matched before the send could be matched (the send
    /// comes after the barrier, the receive before it: seed 004 Example
    /// 4(a)).
    ReceiveFirst,
    /// The send was matched, by another receive, before the receive could
    /// match (R and S swapped in CheckRelevant).
    SendFirst,
}

/// One barrier instance found to be the only thing ordering one pair.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct RelevantPair {
    /// The wildcard receive R.
    pub receive: OpRef,
    /// The send S that R did not take.
    pub send: OpRef,
    /// The barrier instance B every ordering path between them goes
    /// through.
    pub barrier: CollectiveInstance,
    /// Which of R and S comes first.
    pub order: Order,
    #[serde(skip)]
    pub(crate) nodes: (NodeIndex, NodeIndex, NodeIndex),
}

/// What a check of one run examined.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct RunStats {
    /// Wildcard receives with a known match.
    pub wildcard_receives: usize,
    /// (R, S) pairs examined.
    pub pairs: usize,
    /// Pairs the searches reached (ordered); the pairs a search settled
    /// without reaching them (after a fence no barrier dominates) are not
    /// counted.
    pub ordered_pairs: usize,
    /// Nodes visited by the windowed searches, summed.
    pub visited: usize,
}

/// The relevant pairs of one run.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct RunRelevance {
    /// Every (R, S, B) found, sorted by R, S, B.
    pub pairs: Vec<RelevantPair>,
    /// What was examined.
    pub stats: RunStats,
}

/// The (receive, send) pairs matched in some explored run, by `(rank,
/// record index)`: a receive that took a send in one run is never asked
/// whether a barrier kept it from that send in another.
///
/// Only wildcard receives (`MPI_ANY_SOURCE`) are kept: they are the only
/// ones asked about, and a halo exchange's specific receives would
/// otherwise be millions of sets.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Taken(FxHashMap<(i32, u64), FxHashSet<(i32, u64)>>);

impl Taken {
    /// The pairs matched by wildcard receives in any of `runs`.
    pub fn from_runs(runs: &[Vec<RankTrace>]) -> Self {
        let resolved: Vec<_> = runs.par_iter().map(|run| resolve_matches(run)).collect();
        Taken::from_resolved(runs, &resolved)
    }

    /// [`Taken::from_runs`] from each run's resolved matches
    /// ([`resolve_matches`]).
    pub(crate) fn from_resolved(
        runs: &[Vec<RankTrace>],
        resolved: &[(Vec<RawMatch>, Vec<crate::RunIssue>)],
    ) -> Self {
        let mut taken: FxHashMap<_, FxHashSet<_>> = FxHashMap::default();
        for (run, (raw, _)) in runs.iter().zip(resolved) {
            let by_rank: FxHashMap<i32, &RankTrace> = run.iter().map(|t| (t.rank, t)).collect();
            let wildcard = |rr: i32, ri: u64| {
                let op = by_rank.get(&rr).and_then(|t| record(t, ri));
                op.is_some_and(|op| op.has(flags::ANY_SOURCE))
            };
            for &(rr, ri, sr, si) in raw {
                if wildcard(rr, ri) {
                    taken.entry((rr, ri)).or_default().insert((sr, si));
                }
            }
        }
        Taken(taken)
    }

    /// Whether receive `receive` took send `send` in some run.
    pub fn contains(&self, receive: (i32, u64), send: (i32, u64)) -> bool {
        self.0.get(&receive).is_some_and(|s| s.contains(&send))
    }

    /// The sends `receive` took in some run.
    fn of(&self, receive: (i32, u64)) -> impl Iterator<Item = (i32, u64)> + '_ {
        self.0.get(&receive).into_iter().flatten().copied()
    }
}

/// One step of an evidence path.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct PathStep {
    /// The event (or match set).
    pub node: Node,
    /// The rule of the edge that led here (none for the first step).
    pub via: Option<Edge>,
}

/// A point-to-point send as a candidate S.
#[derive(Debug, Clone, Copy)]
pub(crate) struct SendInfo {
    pub(crate) op: OpRef,
    pub(crate) comm: u64,
    pub(crate) dest: i32,
    pub(crate) tag: i32,
}

/// The sends of one rank to one destination, by record index, with the
/// largest position of their match nodes up to each.
#[derive(Debug, Default)]
pub(crate) struct RankSends {
    index: Vec<u64>,
    prefix_max: Vec<u32>,
}

impl RankSends {
    fn push(&mut self, index: u64, position: u32) {
        let max = self
            .prefix_max
            .last()
            .map_or(position, |&m| m.max(position));
        self.index.push(index);
        self.prefix_max.push(max);
    }

    /// The largest match position among the sends with index at most `i`
    /// (all when `None`), or `None` if there are none.
    pub(crate) fn max_up_to(&self, i: Option<u64>) -> Option<u32> {
        let n = match i {
            Some(i) => self.index.partition_point(|&x| x <= i),
            None => self.index.len(),
        };
        n.checked_sub(1).map(|k| self.prefix_max[k])
    }
}

/// The sends to one (communicator, destination).
#[derive(Debug, Default)]
pub(crate) struct DestSends {
    /// The sends by sending rank, sorted by rank.
    pub(crate) senders: Vec<(i32, RankSends)>,
    by_tag: FxHashMap<i32, usize>,
    total: usize,
    max_position: u32,
    /// Every send's (match position, match node), by position.
    pub(crate) by_position: Vec<(u32, NodeIndex)>,
    /// The sends by (rank, tag), sorted: they match in order (one chain of
    /// [`crate::Edge::SendOrder`] edges each).
    pub(crate) by_rank_tag: Vec<((i32, i32), RankSends)>,
}

impl DestSends {
    /// The index of `rank` in [`DestSends::senders`].
    pub(crate) fn sender(&self, rank: i32) -> Option<usize> {
        self.senders.binary_search_by_key(&rank, |s| s.0).ok()
    }
}

/// The candidate sends of a run: each send's match node, and the sends by
/// (communicator, destination).
#[derive(Debug, Default)]
pub(crate) struct Sends {
    pub(crate) info: FxHashMap<NodeIndex, SendInfo>,
    pub(crate) dests: FxHashMap<(u64, i32), DestSends>,
}

impl Sends {
    /// The plain sends of `ranks` that have a match node in `graph`, to a
    /// (communicator, destination) of one of `receives` (no other send is
    /// a candidate).
    pub(crate) fn collect(graph: &RunGraph, ranks: &[RankTrace], receives: &[Receive]) -> Sends {
        let wanted: FxHashSet<(u64, i32)> = receives.iter().map(|rc| (rc.comm, rc.me)).collect();
        let mut info: FxHashMap<NodeIndex, SendInfo> = FxHashMap::default();
        // Per destination: its sends by rank, by (rank, tag), and the rest.
        type Building = (
            FxHashMap<i32, RankSends>,
            FxHashMap<(i32, i32), RankSends>,
            DestSends,
        );
        let mut dests: FxHashMap<(u64, i32), Building> = FxHashMap::default();
        for trace in ranks {
            for op in trace.ops.iter().filter(|op| is_plain_send(op)) {
                if !wanted.contains(&(op.comm, op.peer)) {
                    continue;
                }
                let Some(n) = graph.op_nodes(trace.rank, op.index).and_then(|n| n.send) else {
                    continue;
                };
                let send = OpRef::of(trace.rank, op);
                info.insert(
                    n,
                    SendInfo {
                        op: send,
                        comm: op.comm,
                        dest: op.peer,
                        tag: op.tag,
                    },
                );
                let (by_rank, by_rank_tag, dest) = dests.entry((op.comm, op.peer)).or_default();
                let position = graph.position(n);
                by_rank
                    .entry(trace.rank)
                    .or_default()
                    .push(op.index, position);
                by_rank_tag
                    .entry((trace.rank, op.tag))
                    .or_default()
                    .push(op.index, position);
                *dest.by_tag.entry(op.tag).or_default() += 1;
                dest.total += 1;
                dest.max_position = dest.max_position.max(position);
                dest.by_position.push((position, n));
            }
        }
        let dests = dests
            .into_iter()
            .map(|(key, (by_rank, by_rank_tag, mut dest))| {
                dest.by_position.sort_unstable();
                dest.senders = by_rank.into_iter().collect();
                dest.senders.sort_unstable_by_key(|s| s.0);
                dest.by_rank_tag = by_rank_tag.into_iter().collect();
                dest.by_rank_tag.sort_unstable_by_key(|s| s.0);
                (key, dest)
            })
            .collect();
        Sends { info, dests }
    }
}

/// A wildcard receive R with a known match.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Receive {
    pub(crate) r: OpRef,
    /// Its match node.
    pub(crate) node: NodeIndex,
    /// The match node of the send it took (the same node).
    took: NodeIndex,
    pub(crate) comm: u64,
    /// Its rank in `comm`.
    pub(crate) me: i32,
    /// The tag it accepts (`None`: any).
    pub(crate) tag: Option<i32>,
}

impl Receive {
    /// The wildcard receives of `ranks` whose match `graph` knows.
    pub(crate) fn collect(graph: &RunGraph, ranks: &[RankTrace]) -> Vec<Receive> {
        let mut receives = Vec::new();
        for trace in ranks {
            for op in trace
                .ops
                .iter()
                .filter(|op| is_receive(op) && op.has(flags::ANY_SOURCE))
            {
                let Some(node) = graph.op_nodes(trace.rank, op.index).and_then(|n| n.receive)
                else {
                    continue;
                };
                let Node::Match { send: took, .. } = graph.node(node) else {
                    continue; // unresolved: reported by the graph
                };
                let (Some(me), Some(took)) = (
                    graph.comm_rank(op.comm, trace.rank),
                    graph.op_nodes(took.rank, took.index).and_then(|n| n.send),
                ) else {
                    continue;
                };
                receives.push(Receive {
                    r: OpRef::of(trace.rank, op),
                    node,
                    took,
                    comm: op.comm,
                    me,
                    tag: RecvPattern::as_written(op).tag,
                });
            }
        }
        receives
    }

    /// Whether send `s` could reach this receive (communicator,
    /// destination, tag).
    fn compatible(&self, s: &SendInfo) -> bool {
        s.comm == self.comm && s.dest == self.me && self.tag.is_none_or(|t| t == s.tag)
    }

    /// Whether the send whose match node is `n` is a candidate S: one it
    /// could take, that it took neither here nor in another run.
    pub(crate) fn is_candidate(&self, sends: &Sends, taken: &Taken, n: NodeIndex) -> bool {
        n != self.took
            && sends
                .info
                .get(&n)
                .is_some_and(|s| self.compatible(s) && !taken.contains(self.r.key(), s.op.key()))
    }

    /// How many candidate sends it has (the pairs to examine).
    pub(crate) fn pairs(&self, graph: &RunGraph, sends: &Sends, taken: &Taken) -> usize {
        let Some(dest) = sends.dests.get(&(self.comm, self.me)) else {
            return 0;
        };
        // Compatible sends, less the one taken here and those taken in
        // other runs.
        let compatible_count = self
            .tag
            .map_or(dest.total, |t| dest.by_tag.get(&t).copied().unwrap_or(0));
        let took_key = sends.info.get(&self.took).map(|s| s.op.key());
        let taken_elsewhere = taken
            .of(self.r.key())
            .filter(|&k| Some(k) != took_key)
            .filter_map(|(rank, index)| graph.op_nodes(rank, index).and_then(|n| n.send))
            .filter(|n| sends.info.get(n).is_some_and(|s| self.compatible(s)))
            .count();
        compatible_count
            .saturating_sub(usize::from(took_key.is_some()))
            .saturating_sub(taken_elsewhere)
    }
}

/// Runs CheckRelevant on one run.
///
/// For every wildcard receive R with a known match, and every send S on
/// R's communicator, to R's rank, with a tag R accepts, that R did not take
/// (here or, per `taken`, in any run), finds the barrier instances B such
/// that a path leads from R's match to S's match, entering it from S's side
/// (S's issue, or a send S must match after), and every such path goes
/// through B's match set: without B, R could have taken S. With
/// [`crate::Options::check_send_first`], also the paths from S's match to
/// R's.
///
/// # Arguments
///
/// * `graph`: the run's graph ([`RunGraph::build`] of `ranks`).
/// * `ranks`: the run's traces.
/// * `taken`: the pairs matched in any explored run ([`Taken::from_runs`]).
///
/// # Returns
///
/// The relevant (R, S, B) triples, sorted, and what was examined.
///
/// # Complexity
///
/// For each R, one sweep in topological order from R's match
/// ([`crate::WindowedReach::sweep`]) that stops once no candidate S can
/// have a barrier on every path to it: a fence completion with no barrier
/// on every path to it settles every send its rank issues later, and a
/// collective (not a barrier) with none settles every member it
/// completes. The horizon (the largest position left to reach) comes
/// down in O(log ranks) per settled rank. On a
/// program that synchronises as it goes this is a few barrier epochs per R,
/// whatever the length of the trace: O(Σ_R |W_R| log |W_R|), never an
/// all-pairs closure. Receives are checked in parallel (rayon), each
/// thread with its own [`Workspace`]. A run whose graph has cycles falls
/// back to one dominator tree per R over its whole forward window.
pub fn check_relevant(graph: &RunGraph, ranks: &[RankTrace], taken: &Taken) -> RunRelevance {
    let receives = Receive::collect(graph, ranks);
    let sends = Sends::collect(graph, ranks, &receives);
    let reach = graph.reach();
    let results: Vec<(Vec<RelevantPair>, RunStats)> = receives
        .par_iter()
        .map_init(Workspace::new, |ws, rc| {
            ReceiveCheck::new(graph, &sends, rc).run(&reach, ws, taken)
        })
        .collect();
    let mut out = RunRelevance::default();
    for (pairs, stats) in results {
        out.pairs.extend(pairs);
        out.stats.wildcard_receives += stats.wildcard_receives;
        out.stats.pairs += stats.pairs;
        out.stats.ordered_pairs += stats.ordered_pairs;
        out.stats.visited += stats.visited;
    }
    out.pairs
        .sort_by_key(|p| (p.receive.key(), p.send.key(), p.barrier, p.order));
    out.pairs
        .dedup_by_key(|p| (p.receive.key(), p.send.key(), p.barrier, p.order));
    out
}

/// The check of one wildcard receive R: the relevant (R, S, B) triples
/// found so far, and what was examined.
struct ReceiveCheck<'a> {
    graph: &'a RunGraph,
    sends: &'a Sends,
    rc: &'a Receive,
    found: Vec<RelevantPair>,
    stats: RunStats,
}

impl<'a> ReceiveCheck<'a> {
    fn new(graph: &'a RunGraph, sends: &'a Sends, rc: &'a Receive) -> ReceiveCheck<'a> {
        ReceiveCheck {
            graph,
            sends,
            rc,
            found: Vec::new(),
            stats: RunStats {
                wildcard_receives: 1,
                ..RunStats::default()
            },
        }
    }

    /// The forward sweep from R's match, then the cut searches it leaves
    /// (all of them when the sweep could not run, and the send-first
    /// order when the options ask for it).
    fn run(
        mut self,
        reach: &WindowedReach<'_, &CbGraph>,
        ws: &mut Workspace,
        taken: &Taken,
    ) -> (Vec<RelevantPair>, RunStats) {
        let (graph, sends, rc) = (self.graph, self.sends, self.rc);
        let Some(dest) = sends.dests.get(&(rc.comm, rc.me)) else {
            return (self.found, self.stats);
        };
        let is_candidate = |n: NodeIndex| rc.is_candidate(sends, taken, n);
        self.stats.pairs = rc.pairs(graph, sends, taken);
        if self.stats.pairs == 0 {
            return (self.found, self.stats);
        }
        let is_barrier = |n: NodeIndex| graph.graph().collective(n).is_some_and(|c| c.is_barrier());
        let mut settle = Settle::new(graph, dest);
        let forward = CutRules {
            candidate: is_barrier,
            first_step: |_| true,
            last_step: |t, p| send_side(graph, t, p),
        };
        let swept = reach.sweep(
            ws,
            (rc.node, dest.max_position),
            &forward,
            is_candidate,
            |n, free, cuts| {
                if let Some(cut) = cuts {
                    self.stats.ordered_pairs += 1;
                    self.record(n, cut, Order::ReceiveFirst);
                }
                settle.visit(n, free)
            },
        );
        self.stats.visited += ws.visited().len();
        let send_first = graph.options().check_send_first;
        let targets: Vec<NodeIndex> = if !swept || send_first {
            sends
                .info
                .keys()
                .copied()
                .filter(|&n| is_candidate(n))
                .collect()
        } else {
            Vec::new()
        };
        if !swept {
            let cuts = reach.cuts(ws, rc.node, Direction::Outgoing, &targets, &forward);
            self.stats.visited += ws.visited().len();
            self.record_all(&targets, cuts, Order::ReceiveFirst);
        }
        if send_first {
            let issue = graph.op_nodes(rc.r.rank, rc.r.index).map(|n| n.issue);
            let backward = CutRules {
                candidate: is_barrier,
                first_step: |p| receive_side(graph, rc.node, issue, p),
                last_step: |_, _| true,
            };
            let back = reach.cuts(ws, rc.node, Direction::Incoming, &targets, &backward);
            self.stats.visited += ws.visited().len();
            self.record_all(&targets, back, Order::SendFirst);
        }
        (self.found, self.stats)
    }

    /// The pairs of R and each of `targets` that `cuts` orders.
    fn record_all(
        &mut self,
        targets: &[NodeIndex],
        cuts: Vec<Option<Vec<NodeIndex>>>,
        order: Order,
    ) {
        for (&s, cut) in targets.iter().zip(cuts) {
            if let Some(cut) = cut {
                self.stats.ordered_pairs += 1;
                self.record(s, cut, order);
            }
        }
    }

    /// R and send `s`, ordered as `order` says through the barriers of
    /// `cut` (its other nodes are not barriers).
    fn record(&mut self, s: NodeIndex, cut: Vec<NodeIndex>, order: Order) {
        let rc = self.rc;
        for hub in cut {
            let Node::Collective(barrier) = self.graph.node(hub) else {
                continue;
            };
            let (from, to) = match order {
                Order::ReceiveFirst => (rc.node, s),
                Order::SendFirst => (s, rc.node),
            };
            self.found.push(RelevantPair {
                receive: rc.r,
                send: self.sends.info[&s].op,
                barrier,
                order,
                nodes: (from, hub, to),
            });
        }
    }
}

/// Whether the edge from `pred` into a send's match node `target` comes
/// from the send's side (its issue, or an earlier send it must match
/// after). The receive that took the send in this run is its outcome, not
/// a constraint on it: seed 004's InterCB edges lead from a match partner
/// to the other's successors, never to the other itself.
pub(crate) fn send_side(graph: &RunGraph, target: NodeIndex, pred: NodeIndex) -> bool {
    let send = match graph.node(target) {
        Node::Match { send, .. } => send,
        Node::Event { op, .. } => op,
        Node::Collective(_) => return false,
    };
    graph.op_nodes(send.rank, send.index).map(|n| n.issue) == Some(pred)
        || graph.has_edge(pred, target, Edge::SendOrder)
}

/// Whether the edge from `pred` into the receive's match node `target`
/// comes from the receive's side (its issue, or an earlier receive it must
/// match after), not from the send it took.
fn receive_side(
    graph: &RunGraph,
    target: NodeIndex,
    issue: Option<NodeIndex>,
    pred: NodeIndex,
) -> bool {
    Some(pred) == issue
        || [
            Edge::ReceiveOrder,
            Edge::NotTrumped,
            Edge::OlderReceiveFirst,
        ]
        .into_iter()
        .any(|e| graph.has_edge(pred, target, e))
}

/// A shortest ordering path of a relevant pair, from the first of R and S
/// through the barrier's match set to the other, entering the last one
/// from its own side.
pub fn evidence_path(graph: &RunGraph, pair: &RelevantPair) -> Vec<PathStep> {
    let reach = graph.reach();
    let mut ws = Workspace::new();
    let (from, hub, to) = pair.nodes;
    let Some(mut path) = reach.path(&mut ws, from, hub, Direction::Outgoing, |_| false) else {
        return Vec::new();
    };
    let accepted = |p: NodeIndex| match pair.order {
        Order::ReceiveFirst => send_side(graph, to, p),
        Order::SendFirst => {
            let issue = graph
                .op_nodes(pair.receive.rank, pair.receive.index)
                .map(|n| n.issue);
            receive_side(graph, to, issue, p)
        }
    };
    let rest = graph
        .graph()
        .neighbors_directed(to, Direction::Incoming)
        .filter(|&p| accepted(p))
        .filter_map(|p| reach.path(&mut ws, hub, p, Direction::Outgoing, |_| false))
        .min_by_key(|p| p.len());
    let Some(rest) = rest else {
        return Vec::new();
    };
    path.extend(rest.into_iter().skip(1));
    path.push(to);
    path_steps(graph, path)
}

/// A path of nodes as steps, each with the rule of an edge that led to it.
pub(crate) fn path_steps(graph: &RunGraph, path: Vec<NodeIndex>) -> Vec<PathStep> {
    let mut steps = Vec::with_capacity(path.len());
    let mut prev: Option<NodeIndex> = None;
    for n in path {
        let via = prev.and_then(|p| {
            graph
                .graph()
                .edges_connecting(p, n)
                .next()
                .map(|e| *e.weight())
        });
        steps.push(PathStep {
            node: graph.node(n),
            via,
        });
        prev = Some(n);
    }
    steps
}

/// Tells the forward sweep of one receive when to stop: once every
/// candidate send left has a position the sweep has passed, or comes after
/// a fence that settles it.
///
/// A fence completion F• that no barrier dominates precedes, through the
/// fence chain of its rank (no barrier node on it), the issue of every
/// later call of that rank: no barrier can be on every path to those, nor
/// to the match of a send issued there (its issue is an accepted last
/// step). So only the sends of each rank up to its earliest such fence
/// remain, and the sweep can stop past the largest of their positions.
///
/// A collective C (not a barrier) that no barrier dominates settles every
/// member whose completion it leads to, at once: C is one of that
/// completion's predecessors, so whatever dominates the completion is C
/// or dominates C. The sweep need not reach those completions one by one
/// (they lie beyond C, interleaved with the rest of the run past C) before
/// it knows it may stop.
struct Settle<'a> {
    graph: &'a RunGraph,
    dest: &'a DestSends,
    /// Per sender (as in [`DestSends::senders`]): the earliest settling
    /// fence seen.
    fence: Vec<u64>,
    /// The largest position a remaining candidate can have.
    horizon: Horizon,
}

impl<'a> Settle<'a> {
    fn new(graph: &'a RunGraph, dest: &'a DestSends) -> Self {
        let all = dest.senders.iter();
        let values = all.map(|(_, s)| s.max_up_to(None).unwrap_or(0));
        Settle {
            graph,
            dest,
            fence: vec![u64::MAX; dest.senders.len()],
            horizon: Horizon::new(values.collect()),
        }
    }

    /// A completion of `op` no barrier dominates: if a fence, its rank's
    /// later sends are settled.
    fn completed(&mut self, op: OpRef) {
        let Some(g) = self.dest.sender(op.rank) else {
            return;
        };
        if is_fence(op.kind) && op.index < self.fence[g] {
            self.fence[g] = op.index;
            let max = self.dest.senders[g].1.max_up_to(Some(op.index));
            self.horizon.lower(g, max.unwrap_or(0));
        }
    }

    fn visit(&mut self, n: NodeIndex, free: bool) -> Sweep {
        // Only a node no barrier dominates settles anything.
        match free.then(|| self.graph.node(n)) {
            Some(Node::Event {
                op,
                event: Event::Complete,
            }) => self.completed(op),
            Some(Node::Collective(c)) if !c.is_barrier() => {
                for &op in self.graph.exits(n) {
                    self.completed(op);
                }
            }
            _ => {}
        }
        if self.graph.position(n) >= self.horizon.max() {
            Sweep::Stop
        } else {
            Sweep::Continue
        }
    }
}
