//! The completes-before graph of one run: IntraCB edges per rank, match
//! sets, and InterCB edges through them (seed 004 §3.2, CheckRelevant's
//! first three steps), over the events of each call (seed 001 §2.1).

use crate::cbgraph::{CbGraph, EdgeStream, NONE, RECEIVE_HALF, SEND_HALF};
use crate::model::{
    has_receive_half, has_send_half, is_fence, is_node, is_plain_send, is_receive,
    is_synchronous_send, CollectiveInstance, Edge, Event, Node, OpRef, Options, SendBuffering,
};
use crate::reach::WindowedReach;
use mbh_trace::envelope::{Envelope, RecvPattern, SendSide};
use mbh_trace::op::{flags, DataFlow, OpClass};
use mbh_trace::rank_trace::{Op, RankState};
use mbh_trace::{OpKind, RankTrace};
use petgraph::graph::NodeIndex;
use petgraph::visit::EdgeRef;
use rustc_hash::FxHashMap;
use rustc_hash::FxHashSet;
use serde::Serialize;
use std::collections::BTreeMap;

/// A point-to-point match set: the send a receive took, from the receive's
/// `Matched` record.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct P2pMatch {
    /// The send.
    pub send: OpRef,
    /// The receive (the `Irecv`, not the `Wait` that completed it).
    pub receive: OpRef,
}

/// The match set of one collective instance.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CollectiveSet {
    /// Which call it is.
    pub instance: CollectiveInstance,
    /// The calls, one per rank that made it, by rank.
    pub members: Vec<OpRef>,
    /// Its node in the graph.
    #[serde(skip)]
    pub node: NodeIndex,
}

/// Something in a run's traces that keeps the analysis from being sure.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "issue", rename_all = "kebab-case")]
pub enum RunIssue {
    /// A rank did not finish normally (crash, abort, nonzero exit,
    /// deadlock, or a job still running).
    RankEndedEarly {
        /// The rank.
        rank: i32,
        /// Its last state.
        state: RankState,
    },
    /// A wildcard receive whose matched send is not known: no `Matched`
    /// record names it (it never completed, or the runtime did not say).
    UnresolvedWildcard {
        /// The receive.
        receive: OpRef,
    },
    /// A `Matched` record that names no receive or no send of the run, or
    /// a send or receive matched twice.
    BadMatchRecord {
        /// Rank of the record.
        rank: i32,
        /// Its index.
        record: u64,
        /// What was wrong.
        reason: String,
    },
    /// A collective on `MPI_COMM_WORLD` that not every rank called.
    IncompleteCollective {
        /// The instance.
        instance: CollectiveInstance,
        /// How many ranks called it.
        members: usize,
        /// How many ranks the run has.
        ranks: usize,
    },
    /// A rooted collective, or a wildcard receive, on a communicator whose
    /// rank numbering the traces do not tell.
    UnknownCommRank {
        /// The call.
        op: OpRef,
    },
}

/// The nodes of one call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OpNodes {
    /// Issued.
    pub issue: NodeIndex,
    /// The send half matched (shared with the receive that took it).
    pub send: Option<NodeIndex>,
    /// The receive half matched (shared with the send it took).
    pub receive: Option<NodeIndex>,
    /// Completed.
    pub complete: NodeIndex,
}

/// A `Matched` record resolved to record indices: (receiving rank,
/// receive index, sender rank, send index).
pub(crate) type RawMatch = (i32, u64, i32, u64);

/// The record `index` of `trace` (records are dense, but do not rely on it).
pub(crate) fn record(trace: &RankTrace, index: u64) -> Option<&Op> {
    let at = usize::try_from(index).ok()?;
    match trace.ops.get(at) {
        Some(op) if op.index == index => Some(op),
        _ => trace.ops.iter().find(|op| op.index == index),
    }
}

/// Resolves the `Matched` records of a run to (receive, send) record
/// indices; a record naming the `Wait` that completed an `Irecv` is
/// resolved to the `Irecv` through the wait's request link.
pub(crate) fn resolve_matches(ranks: &[RankTrace]) -> (Vec<RawMatch>, Vec<RunIssue>) {
    let by_rank: FxHashMap<i32, &RankTrace> = ranks.iter().map(|t| (t.rank, t)).collect();
    let mut raw = Vec::new();
    let mut issues = Vec::new();
    for trace in ranks {
        for (m, matched) in trace
            .ops
            .iter()
            .filter_map(|op| Some((op, op.matched_send()?)))
        {
            let bad = |reason: &str| RunIssue::BadMatchRecord {
                rank: trace.rank,
                record: m.index,
                reason: reason.to_owned(),
            };
            let receive = record(trace, matched.receiver).and_then(|at| match at.kind.class() {
                _ if has_receive_half(at) => Some(at),
                // A call on several requests names only its first one: the
                // `Completed` record before this one says which it was.
                OpClass::Completion => trace
                    .completed_request_of(m)
                    .or_else(|| at.request_origin())
                    .and_then(|i| record(trace, i))
                    .filter(|op| has_receive_half(op)),
                _ => None,
            });
            let Some(receive) = receive else {
                issues.push(bad("it names no receive of its rank"));
                continue;
            };
            let (sender, send_record) = (matched.send.sender, matched.send.record);
            let send = by_rank.get(&sender).and_then(|t| record(t, send_record));
            if !send.is_some_and(has_send_half) {
                issues.push(bad("it names no send of the sending rank"));
                continue;
            }
            raw.push((trace.rank, receive.index, sender, send_record));
        }
    }
    raw.sort_unstable();
    raw.dedup();
    // One send per receive, one receive per send: a later match of either
    // is dropped (it still counts as seen). `raw` is sorted, so an earlier
    // match of the receive is the one just before.
    let mut last_recv = None;
    let mut seen_send = SeenSends::new(&by_rank);
    raw.retain(|&(rr, ri, sr, si)| {
        let a = last_recv.replace((rr, ri)) == Some((rr, ri));
        let b = !seen_send.insert(sr, si);
        if a || b {
            issues.push(RunIssue::BadMatchRecord {
                rank: rr,
                record: ri,
                reason: format!("P{rr}#{ri} or P{sr}#{si} is matched twice"),
            });
            return false;
        }
        true
    });
    (raw, issues)
}

/// The sends already matched, by rank and record index: a bit per record
/// of each rank (a set for indices beyond its record count).
struct SeenSends {
    bits: FxHashMap<i32, Vec<u64>>,
    beyond: FxHashSet<(i32, u64)>,
}

impl SeenSends {
    fn new(by_rank: &FxHashMap<i32, &RankTrace>) -> Self {
        let bits = by_rank
            .iter()
            .map(|(&rank, t)| (rank, vec![0u64; t.ops.len().div_ceil(64)]))
            .collect();
        SeenSends {
            bits,
            beyond: FxHashSet::default(),
        }
    }

    /// Adds send `index` of `rank`; whether it was new.
    fn insert(&mut self, rank: i32, index: u64) -> bool {
        let words = self.bits.get_mut(&rank);
        match (words, usize::try_from(index / 64)) {
            (Some(words), Ok(w)) if w < words.len() => {
                let bit = 1u64 << (index % 64);
                let new = words[w] & bit == 0;
                words[w] |= bit;
                new
            }
            _ => self.beyond.insert((rank, index)),
        }
    }
}

/// The completes-before graph of one run.
///
/// Nodes are the events of the MPI calls of every rank (not the tool's
/// clock records or markers): issued, matched, completed; a send and the
/// receive that took it share their match node, and each collective
/// instance has a node between its members' issues and completions. Edges
/// are labelled with the rule that made them ([`Edge`]).
#[derive(Debug)]
pub struct RunGraph {
    graph: CbGraph,
    /// Trace position of each rank.
    rank_pos: FxHashMap<i32, usize>,
    collectives: Vec<CollectiveSet>,
    /// Per collective set: the members whose completion it leads to.
    exits: Vec<Vec<OpRef>>,
    issues: Vec<RunIssue>,
    world: Option<u64>,
    comm_rank: FxHashMap<(u64, i32), i32>,
    positions: (Vec<u32>, bool),
    options: Options,
}

impl RunGraph {
    /// Builds the graph of one run from its ranks' traces.
    ///
    /// # Arguments
    ///
    /// * `ranks`: every rank's trace of the run, in any order.
    /// * `options`: how standard sends completed in the run, and what
    ///   [`crate::check_relevant`] searches.
    ///
    /// # Returns
    ///
    /// The graph, with the problems found in the traces in
    /// [`RunGraph::issues`] (the graph holds what could be used).
    ///
    /// # Complexity
    ///
    /// O(n + m) time and space for n records and m `Matched` records, plus,
    /// for each receive with a wildcard, one step per (source, tag) pair
    /// matched earlier on its rank and communicator. About 20 bytes per
    /// node and 10 per edge ([`CbGraph`]), 16 per call.
    pub fn build(ranks: &[RankTrace], options: &Options) -> RunGraph {
        Self::build_resolved(ranks, options, resolve_matches(ranks))
    }

    /// [`RunGraph::build`] with the run's matches already resolved
    /// ([`resolve_matches`]).
    pub(crate) fn build_resolved(
        ranks: &[RankTrace],
        options: &Options,
        (raw, issues): (Vec<RawMatch>, Vec<RunIssue>),
    ) -> RunGraph {
        let mut g = RunGraph {
            graph: CbGraph::default(),
            rank_pos: ranks.iter().enumerate().map(|(i, t)| (t.rank, i)).collect(),
            collectives: Vec::new(),
            exits: Vec::new(),
            issues: Vec::new(),
            world: None,
            comm_rank: FxHashMap::default(),
            positions: (Vec::new(), true),
            options: *options,
        };
        for trace in ranks {
            let finished = trace.end.state == RankState::Finalized
                || (trace.end.state == RankState::Exited && trace.end.exit_status == Some(0));
            if !finished {
                g.issues.push(RunIssue::RankEndedEarly {
                    rank: trace.rank,
                    state: trace.end.state,
                });
            }
        }
        g.world = ranks
            .iter()
            .flat_map(|t| &t.ops)
            .find(|op| matches!(op.kind, OpKind::Init | OpKind::InitThread))
            .map(|op| op.comm);
        g.issues.extend(issues);
        g.learn_comm_ranks(ranks, &raw);
        add_calls(&mut g.graph, ranks);
        g.merge_matches(&raw);
        let mut edges = EdgeStream::default();
        lifecycle_edges(&g.graph, options, &mut edges);
        for pos in 0..ranks.len() {
            edges.add_batch(g.intra_edges(ranks, pos, &raw));
        }
        let (hubs, inter) = g.collective_sets(ranks);
        for (instance, members, exits) in hubs {
            g.exits.push(exits);
            let node = g.graph.add_hub(instance);
            g.collectives.push(CollectiveSet {
                instance,
                members,
                node,
            });
        }
        let hub = |i: NodeIndex| g.collectives[i.index()].node;
        let inter = inter
            .into_iter()
            .map(|(a, b, e)| match e {
                Edge::CollectiveIn => (a, hub(b), e),
                _ => (hub(a), b, e),
            })
            .collect();
        edges.add_batch(inter);
        drop(raw);
        g.graph.end_build();
        edges.lay_out(&mut g.graph);
        g.check_wildcards(ranks);
        g.positions = WindowedReach::new(&g.graph).into_positions();
        g
    }

    /// The graph.
    pub fn graph(&self) -> &CbGraph {
        &self.graph
    }

    /// What node `n` stands for.
    pub fn node(&self, n: NodeIndex) -> Node {
        self.graph.node(n)
    }

    /// The slot of record `index` of `rank` in the graph's call table.
    fn slot(&self, rank: i32, index: u64) -> Option<usize> {
        self.graph.slot(*self.rank_pos.get(&rank)?, index)
    }

    /// The nodes of record `index` of `rank`.
    pub fn op_nodes(&self, rank: i32, index: u64) -> Option<OpNodes> {
        self.slot_nodes(self.slot(rank, index)?)
    }

    /// The node of one event of record `index` of `rank`.
    pub fn event(&self, rank: i32, index: u64, event: Event) -> Option<NodeIndex> {
        let n = self.op_nodes(rank, index)?;
        match event {
            Event::Issue => Some(n.issue),
            Event::SendMatch => n.send,
            Event::ReceiveMatch => n.receive,
            Event::Complete => Some(n.complete),
        }
    }

    /// Whether an edge of kind `kind` leads from `from` to `to`.
    pub fn has_edge(&self, from: NodeIndex, to: NodeIndex, kind: Edge) -> bool {
        self.graph
            .edges_connecting(from, to)
            .any(|e| *e.weight() == kind)
    }

    /// The point-to-point match sets, by receive (rank, record index).
    pub fn matches(&self) -> Vec<P2pMatch> {
        let g = &self.graph;
        let mut out: Vec<P2pMatch> = (0..g.ops.len())
            .filter(|&slot| g.recv_partner[slot] != NONE)
            .map(|slot| P2pMatch {
                send: g.op_ref(g.recv_partner[slot] as usize),
                receive: g.op_ref(slot),
            })
            .collect();
        out.sort_by_key(|m| (m.receive.key(), m.send.key()));
        out
    }

    /// The collective match sets (barriers included).
    pub fn collectives(&self) -> &[CollectiveSet] {
        &self.collectives
    }

    /// The members of collective node `hub` whose completion it leads to
    /// (none if `hub` is not a collective node).
    pub(crate) fn exits(&self, hub: NodeIndex) -> &[OpRef] {
        let base = self.graph.hub_base as usize;
        match hub.index().checked_sub(base) {
            Some(i) => self.exits.get(i).map_or(&[], Vec::as_slice),
            None => &[],
        }
    }

    /// What in the traces the analysis could not use.
    pub fn issues(&self) -> &[RunIssue] {
        &self.issues
    }

    /// The options the graph was built with.
    pub fn options(&self) -> &Options {
        &self.options
    }

    /// Communicator handle bits of `MPI_COMM_WORLD`, from `MPI_Init`.
    pub fn world(&self) -> Option<u64> {
        self.world
    }

    /// Rank of world rank `rank` in communicator `comm`, when known (from
    /// `MPI_COMM_WORLD`, or learnt from the matched messages on `comm`).
    pub fn comm_rank(&self, comm: u64, rank: i32) -> Option<i32> {
        if Some(comm) == self.world {
            return Some(rank);
        }
        self.comm_rank.get(&(comm, rank)).copied()
    }

    /// Topological position of a node (see [`WindowedReach::position`]).
    pub(crate) fn position(&self, n: NodeIndex) -> u32 {
        self.positions.0[n.index()]
    }

    /// The windowed reachability structure of the graph.
    pub fn reach(&self) -> WindowedReach<'_, &CbGraph> {
        WindowedReach::with_positions(&self.graph, &self.positions)
    }

    /// The graph in Graphviz DOT, one cluster per rank, for failing tests
    /// and debugging.
    pub fn to_dot(&self) -> String {
        use std::fmt::Write;
        let mut out = String::from("digraph run {\n  node [shape=box, fontsize=10];\n");
        let mut by_rank: BTreeMap<i32, Vec<NodeIndex>> = BTreeMap::new();
        let mut shared = Vec::new();
        for n in self.graph.node_indices() {
            match self.graph.node(n) {
                Node::Event { op, .. } => by_rank.entry(op.rank).or_default().push(n),
                _ => shared.push(n),
            }
        }
        let label = |n: NodeIndex| self.graph.node(n).to_string().replace('"', "'");
        for (rank, nodes) in by_rank {
            let _ = writeln!(out, "  subgraph cluster_{rank} {{\n    label=\"P{rank}\";");
            for n in nodes {
                let _ = writeln!(out, "    n{} [label=\"{}\"];", n.index(), label(n));
            }
            out.push_str("  }\n");
        }
        for n in shared {
            let _ = writeln!(
                out,
                "  n{} [label=\"{}\", shape=ellipse];",
                n.index(),
                label(n)
            );
        }
        for n in self.graph.node_indices() {
            // By source, each source's edges in the order added.
            let mut edges: Vec<_> = self
                .graph
                .edges_directed(n, petgraph::Direction::Outgoing)
                .collect();
            edges.reverse();
            for e in edges {
                let style = if e.weight().is_intra() {
                    "solid"
                } else {
                    "dashed"
                };
                let _ = writeln!(
                    out,
                    "  n{} -> n{} [label=\"{:?}\", style={style}, fontsize=8];",
                    e.source().index(),
                    e.target().index(),
                    e.weight()
                );
            }
        }
        out.push_str("}\n");
        out
    }

    fn trace_record<'t>(&self, ranks: &'t [RankTrace], rank: i32, index: u64) -> Option<&'t Op> {
        record(&ranks[*self.rank_pos.get(&rank)?], index)
    }

    /// Learns ranks in communicators other than the world from matched
    /// messages: a send's destination is its receiver's rank, a receive's
    /// status source is its sender's rank.
    fn learn_comm_ranks(&mut self, ranks: &[RankTrace], raw: &[RawMatch]) {
        for &(rr, ri, sr, si) in raw {
            // Most messages are on the world: no send to look up.
            let Some(recv) = self.trace_record(ranks, rr, ri) else {
                continue;
            };
            if Some(recv.comm) == self.world {
                continue;
            }
            let Some(send) = self.trace_record(ranks, sr, si) else {
                continue;
            };
            if is_plain_send(send) {
                self.comm_rank.entry((send.comm, rr)).or_insert(send.peer);
            }
            if let Some((source, _)) = recv.matched {
                self.comm_rank.entry((recv.comm, sr)).or_insert(source);
            }
        }
    }

    /// Merges each match set into one event: the receive's match is the
    /// send's match node (its own stays, isolated, so that node numbers
    /// follow the calls).
    fn merge_matches(&mut self, raw: &[RawMatch]) {
        for &(rr, ri, sr, si) in raw {
            let (Some(r), Some(s)) = (self.slot(rr, ri), self.slot(sr, si)) else {
                continue;
            };
            let g = &mut self.graph;
            let has = |slot: usize, half: u8| g.ops[slot].halves & half != 0;
            if !has(r, RECEIVE_HALF) || !has(s, SEND_HALF) {
                continue;
            }
            g.send_partner[s] = r as u32;
            g.recv_partner[r] = s as u32;
        }
    }

    /// The message a receive took, as (source rank in its communicator,
    /// tag), from its status or its matched send.
    fn taken_message(
        &self,
        ranks: &[RankTrace],
        recv: &Op,
        sender: Option<(i32, u64)>,
    ) -> Option<(i32, i32)> {
        if let Some(m) = recv.matched {
            return Some(m);
        }
        let (sr, si) = sender?;
        let send = self.trace_record(ranks, sr, si)?;
        // A `Sendrecv`'s send tag is not its record's `tag`.
        Some((self.comm_rank(recv.comm, sr)?, SendSide::of(send)?.tag))
    }

    /// IntraCB edges of one rank (seed 001 Definition 2, with tags and
    /// communicators, and seed 004's trumping exception).
    fn intra_edges(
        &self,
        ranks: &[RankTrace],
        pos: usize,
        raw: &[RawMatch],
    ) -> Vec<(NodeIndex, NodeIndex, Edge)> {
        let trace = &ranks[pos];
        let nodes = |i: u64| self.graph.slot(pos, i).and_then(|s| self.slot_nodes(s));
        // The rank's matches: `raw` is sorted by receiving rank.
        let mine =
            raw.partition_point(|m| m.0 < trace.rank)..raw.partition_point(|m| m.0 <= trace.rank);
        let sender_of: FxHashMap<u64, (i32, u64)> = raw[mine]
            .iter()
            .map(|&(_, ri, sr, si)| (ri, (sr, si)))
            .collect();
        let completed_by: FxHashSet<u64> = trace
            .ops
            .iter()
            .filter_map(|m| Some(m.matched_send()?.receiver))
            .collect();
        let mut edges: Vec<(NodeIndex, NodeIndex, Edge)> = Vec::new();
        // Rule 1: last send per (communicator, destination, tag).
        let mut last_send: FxHashMap<(u64, i32, i32), NodeIndex> = FxHashMap::default();
        let mut receives = Receives::default();
        let mut last_fence: Option<NodeIndex> = None;
        for op in &trace.ops {
            let Some(n) = nodes(op.index) else { continue };
            let fence = is_fence(op.kind);
            if let Some(f) = last_fence {
                edges.push((f, n.issue, Edge::Fence));
                if fence {
                    edges.push((f, n.complete, Edge::Fence));
                }
            }
            if let (true, Some(s)) = (is_plain_send(op), n.send) {
                if let Some(prev) = last_send.insert((op.comm, op.peer, op.tag), s) {
                    edges.push((prev, s, Edge::SendOrder));
                }
            }
            if let (true, Some(r)) = (is_receive(op), n.receive) {
                let sender = sender_of.get(&op.index).copied();
                let taken = self.taken_message(ranks, op, sender);
                receives.receive(op, r, taken, &mut edges);
            }
            if op.kind.class() == OpClass::Completion {
                // `Test`, `Waitany` and the `some` forms may return without
                // completing the (first) request: only a `Matched` record
                // naming them says they did.
                let completed = matches!(op.kind, OpKind::Wait | OpKind::Waitall | OpKind::Testall)
                    || completed_by.contains(&op.index);
                let origin = op.request_origin().filter(|&o| o < op.index);
                if let (true, Some(o)) = (completed, origin.and_then(nodes)) {
                    edges.push((o.complete, n.complete, Edge::Completion));
                }
            }
            if fence {
                last_fence = Some(n.complete);
            }
        }
        // A nonblocking collective completes in the call the runtime
        // names (a `Waitall`'s record names its first request only).
        for done in trace.ops.iter().filter_map(Op::collective_completion) {
            if let (Some(o), Some(c)) = (nodes(done.collective), done.completed_by.and_then(nodes))
            {
                edges.push((o.complete, c.complete, Edge::Completion));
            }
        }
        edges
    }

    /// The nodes of the call in `slot`, its receive merged as in
    /// [`RunGraph::op_nodes`].
    fn slot_nodes(&self, slot: usize) -> Option<OpNodes> {
        let (issue, send, receive, complete) = self.graph.ops.get(slot)?.nodes();
        let partner = self.graph.recv_partner[slot];
        let receive = match (receive, partner) {
            (Some(_), p) if p != NONE => self.graph.ops[p as usize].nodes().1,
            (r, _) => r,
        };
        let n = |i: u32| NodeIndex::new(i as usize);
        Some(OpNodes {
            issue: n(issue),
            send: send.map(n),
            receive: receive.map(n),
            complete: n(complete),
        })
    }

    /// Collective match sets (instance, members by rank) and their InterCB
    /// edges, with the instance's place in the list standing for its node
    /// (`CollectiveIn` edges end there, `CollectiveOut` edges start there).
    #[allow(clippy::type_complexity)]
    fn collective_sets(
        &mut self,
        ranks: &[RankTrace],
    ) -> (
        Vec<(CollectiveInstance, Vec<OpRef>, Vec<OpRef>)>,
        Vec<(NodeIndex, NodeIndex, Edge)>,
    ) {
        type Member<'t> = (OpNodes, &'t Op, i32);
        let mut instances: BTreeMap<CollectiveInstance, Vec<Member>> = BTreeMap::new();
        for (pos, trace) in ranks.iter().enumerate() {
            let mut seq: FxHashMap<(u64, u16), u64> = FxHashMap::default();
            for op in trace
                .ops
                .iter()
                .filter(|op| op.kind.class() == OpClass::Collective)
            {
                let Some(n) = self
                    .graph
                    .slot(pos, op.index)
                    .and_then(|s| self.slot_nodes(s))
                else {
                    continue;
                };
                let k = seq.entry((op.comm, op.kind as u16)).or_insert(0);
                let instance = CollectiveInstance {
                    comm: op.comm,
                    kind: op.kind,
                    seq: *k,
                };
                *k += 1;
                instances
                    .entry(instance)
                    .or_default()
                    .push((n, op, trace.rank));
            }
        }
        let mut edges = Vec::new();
        let mut sets = Vec::with_capacity(instances.len());
        for (i, (instance, mut members)) in instances.into_iter().enumerate() {
            members.sort_by_key(|m| m.2);
            if Some(instance.comm) == self.world && members.len() < ranks.len() {
                self.issues.push(RunIssue::IncompleteCollective {
                    instance,
                    members: members.len(),
                    ranks: ranks.len(),
                });
            }
            let hub = NodeIndex::new(i);
            let roots: Option<Vec<bool>> = members
                .iter()
                .map(|&(_, op, rank)| self.comm_rank(instance.comm, rank).map(|r| r == op.peer))
                .collect();
            let everyone = vec![true; members.len()];
            // Whose issue must precede whose completion.
            // Prefix flows (`Scan`, `Exscan`) order rank i after ranks
            // 0..i only: one hub cannot say that, so they get no edges
            // (fewer orders, never false ones).
            let (enter, exit) = match (instance.kind.data_flow(), roots) {
                (Some(DataFlow::All), _) => (everyone.clone(), everyone),
                (Some(DataFlow::FromRoot), Some(root)) => (root, everyone),
                (Some(DataFlow::ToRoot), Some(root)) => (everyone, root),
                (Some(DataFlow::Prefix | DataFlow::ExclusivePrefix), _) => {
                    (vec![false; members.len()], vec![false; members.len()])
                }
                (_, roots) => {
                    if roots.is_none() {
                        let (_, op, rank) = members[0];
                        self.issues.push(RunIssue::UnknownCommRank {
                            op: OpRef::of(rank, op),
                        });
                    }
                    (vec![false; members.len()], vec![false; members.len()])
                }
            };
            for (k, &(n, _, _)) in members.iter().enumerate() {
                if enter[k] {
                    edges.push((n.issue, hub, Edge::CollectiveIn));
                }
                if exit[k] {
                    edges.push((hub, n.complete, Edge::CollectiveOut));
                }
            }
            let refs: Vec<OpRef> = members
                .iter()
                .map(|&(_, op, rank)| OpRef::of(rank, op))
                .collect();
            let exits = refs
                .iter()
                .zip(&exit)
                .filter(|(_, &e)| e)
                .map(|(&r, _)| r)
                .collect();
            sets.push((instance, refs, exits));
        }
        (sets, edges)
    }

    /// Reports wildcard receives whose matched send is unknown.
    fn check_wildcards(&mut self, ranks: &[RankTrace]) {
        for trace in ranks {
            for op in &trace.ops {
                if !is_receive(op) || !op.has(flags::ANY_SOURCE) {
                    continue;
                }
                let matched = self
                    .slot(trace.rank, op.index)
                    .is_some_and(|s| self.graph.recv_partner[s] != NONE);
                if !matched {
                    self.issues.push(RunIssue::UnresolvedWildcard {
                        receive: OpRef::of(trace.rank, op),
                    });
                }
            }
        }
    }
}

/// The calls with nodes, rank by rank, in trace order: numbers the nodes
/// (issue, send match, receive match, completion of each call, in turn).
fn add_calls(b: &mut CbGraph, ranks: &[RankTrace]) {
    for trace in ranks {
        b.begin_rank(trace.rank, trace.ops.len());
        for op in trace.ops.iter().filter(|op| is_node(op)) {
            let halves = if has_send_half(op) { SEND_HALF } else { 0 }
                | if has_receive_half(op) {
                    RECEIVE_HALF
                } else {
                    0
                };
            b.add_op(op.index, op.site, op.kind, halves);
        }
    }
    b.end_calls();
}

/// Each call's own states in order (seed 001 Fig 3), a receive's match
/// being the send's match node once merged: issued before matched and
/// completed; a receive, and a send that cannot be buffered, matched
/// before completed. Each call's edges, without duplicates (a call that
/// took its own message has one match node for both halves).
fn lifecycle_edges(g: &CbGraph, options: &Options, out: &mut EdgeStream) {
    for (op, &partner) in g.ops.iter().zip(&g.recv_partner) {
        let (issue, send, receive, complete) = op.nodes();
        let receive = match (receive, partner) {
            (Some(_), p) if p != NONE => g.ops[p as usize].nodes().1,
            (r, _) => r,
        };
        let mut edges = [(0u32, 0u32); 5];
        let mut len = 0;
        let mut push = |a: u32, b: u32| {
            if a != b && !edges[..len].contains(&(a, b)) {
                edges[len] = (a, b);
                len += 1;
            }
        };
        push(issue, complete);
        if let Some(s) = send {
            push(issue, s);
            let waits_for_match =
                is_synchronous_send(op.kind) || options.buffering == SendBuffering::Zero;
            if waits_for_match {
                push(s, complete);
            }
        }
        if let Some(r) = receive {
            push(issue, r);
            push(r, complete);
        }
        for &(a, b) in &edges[..len] {
            out.push_first(a, b);
        }
    }
    out.end_first();
}

/// The receives of one rank so far, for the edges that order its
/// receives (seed 001 rule 2, seed 004's Example 5, and an older receive
/// that matched first).
#[derive(Default)]
struct Receives {
    /// Rule 2: last receive per acceptance (communicator, source, tag).
    /// The program's patterns (`RecvPattern::as_written`): the graph is
    /// about the program's orderings, and a wildcard a guided replay
    /// forced is a wildcard in the program whose run this reproduces.
    last_recv: FxHashMap<RecvPattern, NodeIndex>,
    /// Example 5: last receive per message taken (communicator, source,
    /// tag), with what it accepted.
    last_taker: BTreeMap<(u64, i32, i32), (NodeIndex, RecvPattern)>,
    /// Which shapes of acceptance (source given or any, tag given or
    /// any) `last_recv` holds: a key of another shape is not looked up
    /// (a halo exchange's specific receives would look up four shapes
    /// twice each).
    shapes: [bool; 4],
}

impl Receives {
    fn shape(p: &RecvPattern) -> usize {
        usize::from(p.source.is_none()) * 2 + usize::from(p.tag.is_none())
    }

    /// The edges into receive node `r` of `op`, which took the message
    /// `taken` (source, tag) when known; then `op` is the last receive.
    fn receive(
        &mut self,
        op: &Op,
        r: NodeIndex,
        taken: Option<(i32, i32)>,
        edges: &mut Vec<(NodeIndex, NodeIndex, Edge)>,
    ) {
        let acc = RecvPattern::as_written(op);
        // Rule 2: after the last earlier receive of each acceptance
        // that subsumes this one.
        for source in [acc.source, None] {
            for tag in [acc.tag, None] {
                let key = RecvPattern { source, tag, ..acc };
                if !self.shapes[Self::shape(&key)] {
                    continue;
                }
                if let Some(&prev) = self.last_recv.get(&key) {
                    edges.push((prev, r, Edge::ReceiveOrder));
                }
            }
        }
        // Example 5: after the last earlier receive that took a
        // message this wider one accepts.
        if acc.source.is_none() || acc.tag.is_none() {
            let range = (acc.comm, i32::MIN, i32::MIN)..=(acc.comm, i32::MAX, i32::MAX);
            for (&(comm, source, tag), &(prev, prev_acc)) in self.last_taker.range(range) {
                let taken = Envelope { comm, source, tag };
                if acc.accepts(&taken) && !prev_acc.contains(&acc) {
                    edges.push((prev, r, Edge::NotTrumped));
                }
            }
        }
        if let Some((source, tag)) = taken {
            self.older_first(op.comm, (source, tag), acc, r, edges);
            self.last_taker.insert((op.comm, source, tag), (r, acc));
        }
        self.last_recv.insert(acc, r);
        self.shapes[Self::shape(&acc)] = true;
    }

    /// An earlier receive that accepts the message (`source`, `tag`) that
    /// receive `r` (accepting `acc`) took was no longer pending: it
    /// matched first.
    fn older_first(
        &self,
        comm: u64,
        (source, tag): (i32, i32),
        acc: RecvPattern,
        r: NodeIndex,
        edges: &mut Vec<(NodeIndex, NodeIndex, Edge)>,
    ) {
        for key_source in [Some(source), None] {
            for key_tag in [Some(tag), None] {
                let key = RecvPattern {
                    comm,
                    source: key_source,
                    tag: key_tag,
                };
                if !self.shapes[Self::shape(&key)] || key.contains(&acc) {
                    continue;
                }
                if let Some(&prev) = self.last_recv.get(&key) {
                    edges.push((prev, r, Edge::OlderReceiveFirst))
                }
            }
        }
    }
}
