//! The pre-issue-13 CheckRelevant (commit b067cb6), kept verbatim as the
//! reference of the differential tests (`super::tests`); only its paths
//! changed.

use super::graph::{resolve_matches, RunGraph};
use super::reach::{CutRules, Sweep, Workspace};
use crate::model::{is_fence, is_plain_send, is_receive, Edge, Event, Node, OpRef};
use crate::relevance::{Order, PathStep, RelevantPair, RunRelevance, RunStats};
use mbh_trace::op::flags;
use mbh_trace::{RankTrace, RecvPattern};
use petgraph::graph::NodeIndex;
use petgraph::Direction;
use rayon::prelude::*;
use std::collections::{HashMap, HashSet};

/// The (receive, send) pairs matched in some explored run, by `(rank,
/// record index)`: a receive that took a send in one run is never asked
/// whether a barrier kept it from that send in another.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Taken(HashMap<(i32, u64), HashSet<(i32, u64)>>);

impl Taken {
    /// The pairs matched in any of `runs`.
    pub fn from_runs(runs: &[Vec<RankTrace>]) -> Self {
        let pairs: Vec<_> = runs
            .par_iter()
            .flat_map_iter(|run| resolve_matches(run).0)
            .collect();
        let mut taken: HashMap<_, HashSet<_>> = HashMap::new();
        for (rr, ri, sr, si) in pairs {
            taken.entry((rr, ri)).or_default().insert((sr, si));
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
    by_rank: HashMap<i32, RankSends>,
    by_tag: HashMap<i32, usize>,
    total: usize,
    max_position: u32,
    /// Every send's (match position, match node), by position.
    pub(crate) by_position: Vec<(u32, NodeIndex)>,
    /// The sends by (rank, tag): they match in order (one chain of
    /// [`crate::Edge::SendOrder`] edges each).
    pub(crate) by_rank_tag: HashMap<(i32, i32), RankSends>,
}

/// The candidate sends of a run: each send's match node, and the sends by
/// (communicator, destination).
#[derive(Debug, Default)]
pub(crate) struct Sends {
    pub(crate) info: HashMap<NodeIndex, SendInfo>,
    pub(crate) dests: HashMap<(u64, i32), DestSends>,
}

impl Sends {
    /// The plain sends of `ranks` that have a match node in `graph`.
    pub(crate) fn collect(graph: &RunGraph, ranks: &[RankTrace]) -> Sends {
        let mut info: HashMap<NodeIndex, SendInfo> = HashMap::new();
        let mut dests: HashMap<(u64, i32), DestSends> = HashMap::new();
        for trace in ranks {
            for op in trace.ops.iter().filter(|op| is_plain_send(op)) {
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
                let dest = dests.entry((op.comm, op.peer)).or_default();
                let position = graph.position(n);
                dest.by_rank
                    .entry(trace.rank)
                    .or_default()
                    .push(op.index, position);
                dest.by_rank_tag
                    .entry((trace.rank, op.tag))
                    .or_default()
                    .push(op.index, position);
                *dest.by_tag.entry(op.tag).or_default() += 1;
                dest.total += 1;
                dest.max_position = dest.max_position.max(position);
                dest.by_position.push((position, n));
            }
        }
        for dest in dests.values_mut() {
            dest.by_position.sort_unstable();
        }
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
                let Node::Match { send: took, .. } = graph.graph()[node] else {
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
/// on every path to it settles every send its rank issues later. On a
/// program that synchronises as it goes this is a few barrier epochs per R,
/// whatever the length of the trace: O(Σ_R |W_R| log |W_R|), never an
/// all-pairs closure. Receives are checked in parallel (rayon), each
/// thread with its own [`Workspace`]. A run whose graph has cycles falls
/// back to one dominator tree per R over its whole forward window.
pub fn check_relevant(graph: &RunGraph, ranks: &[RankTrace], taken: &Taken) -> RunRelevance {
    let sends = Sends::collect(graph, ranks);
    let Sends { info, dests } = &sends;
    let receives = Receive::collect(graph, ranks);
    let reach = graph.reach();
    let is_barrier =
        |n: NodeIndex| matches!(graph.graph()[n], Node::Collective(c) if c.is_barrier());
    let send_first = graph.options().check_send_first;
    let results: Vec<(Vec<RelevantPair>, RunStats)> = receives
        .par_iter()
        .map_init(Workspace::new, |ws, rc| {
            let mut stats = RunStats {
                wildcard_receives: 1,
                ..RunStats::default()
            };
            let mut found = Vec::new();
            let Some(dest) = dests.get(&(rc.comm, rc.me)) else {
                return (found, stats);
            };
            let is_candidate = |n: NodeIndex| rc.is_candidate(&sends, taken, n);
            stats.pairs = rc.pairs(graph, &sends, taken);
            if stats.pairs == 0 {
                return (found, stats);
            }
            let mut record = |s: NodeIndex, cut: Vec<NodeIndex>, order: Order| {
                for hub in cut {
                    let Node::Collective(barrier) = graph.graph()[hub] else {
                        continue;
                    };
                    let (from, to) = match order {
                        Order::ReceiveFirst => (rc.node, s),
                        Order::SendFirst => (s, rc.node),
                    };
                    found.push(RelevantPair {
                        receive: rc.r,
                        send: info[&s].op,
                        barrier,
                        order,
                        nodes: (from, hub, to),
                    });
                }
            };
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
                        stats.ordered_pairs += 1;
                        record(n, cut, Order::ReceiveFirst);
                    }
                    settle.visit(n, free)
                },
            );
            stats.visited += ws.visited().len();
            let targets: Vec<NodeIndex> = if !swept || send_first {
                info.keys().copied().filter(|&n| is_candidate(n)).collect()
            } else {
                Vec::new()
            };
            if !swept {
                let cuts = reach.cuts(ws, rc.node, Direction::Outgoing, &targets, &forward);
                stats.visited += ws.visited().len();
                for (&s, cut) in targets.iter().zip(cuts) {
                    if let Some(cut) = cut {
                        stats.ordered_pairs += 1;
                        record(s, cut, Order::ReceiveFirst);
                    }
                }
            }
            if send_first {
                let issue = graph.op_nodes(rc.r.rank, rc.r.index).map(|n| n.issue);
                let backward = CutRules {
                    candidate: is_barrier,
                    first_step: |p| receive_side(graph, rc.node, issue, p),
                    last_step: |_, _| true,
                };
                let back = reach.cuts(ws, rc.node, Direction::Incoming, &targets, &backward);
                stats.visited += ws.visited().len();
                for (&s, cut) in targets.iter().zip(back) {
                    if let Some(cut) = cut {
                        stats.ordered_pairs += 1;
                        record(s, cut, Order::SendFirst);
                    }
                }
            }
            (found, stats)
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

/// Whether the edge from `pred` into a send's match node `target` comes
/// from the send's side (its issue, or an earlier send it must match
/// after). The receive that took the send in this run is its outcome, not
/// a constraint on it: seed 004's InterCB edges lead from a match partner
/// to the other's successors, never to the other itself.
pub(crate) fn send_side(graph: &RunGraph, target: NodeIndex, pred: NodeIndex) -> bool {
    let send = match graph.graph()[target] {
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
            node: graph.graph()[n],
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
struct Settle<'a> {
    graph: &'a RunGraph,
    dest: &'a DestSends,
    /// Per rank: the earliest settling fence seen, and the largest position
    /// of the sends up to it.
    fence: HashMap<i32, (u64, u32)>,
    /// The largest position a remaining candidate can have.
    horizon: u32,
}

impl<'a> Settle<'a> {
    fn new(graph: &'a RunGraph, dest: &'a DestSends) -> Self {
        Settle {
            graph,
            dest,
            fence: HashMap::new(),
            horizon: dest.max_position,
        }
    }

    fn visit(&mut self, n: NodeIndex, free: bool) -> Sweep {
        if let (
            true,
            Node::Event {
                op,
                event: Event::Complete,
            },
        ) = (free, self.graph.graph()[n])
        {
            if let (true, Some(sends)) = (is_fence(op.kind), self.dest.by_rank.get(&op.rank)) {
                let earlier = self
                    .fence
                    .get(&op.rank)
                    .is_some_and(|&(i, _)| i <= op.index);
                if !earlier {
                    let max = sends.max_up_to(Some(op.index)).unwrap_or(0);
                    self.fence.insert(op.rank, (op.index, max));
                    self.horizon = self
                        .dest
                        .by_rank
                        .iter()
                        .map(|(rank, sends)| match self.fence.get(rank) {
                            Some(&(_, max)) => max,
                            None => sends.max_up_to(None).unwrap_or(0),
                        })
                        .max()
                        .unwrap_or(0);
                }
            }
        }
        if self.graph.position(n) >= self.horizon {
            Sweep::Stop
        } else {
            Sweep::Continue
        }
    }
}
