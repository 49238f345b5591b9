//! The pre-issue-13 graph builder (commit b067cb6), kept verbatim as the
//! reference of the differential tests (`super::tests`); only its paths
//! changed.

use super::reach::WindowedReach;
use crate::graph::{CollectiveSet, OpNodes, P2pMatch, RunIssue};
use crate::model::{
    has_receive_half, has_send_half, is_fence, is_node, is_plain_send, is_receive,
    is_synchronous_send, CollectiveInstance, Edge, Event, Node, OpRef, Options, SendBuffering,
};
use mbh_trace::envelope::{Envelope, RecvPattern, SendSide};
use mbh_trace::op::{flags, DataFlow, OpClass};
use mbh_trace::rank_trace::{Op, RankState};
use mbh_trace::{OpKind, RankTrace};
use petgraph::graph::{DiGraph, NodeIndex};
use petgraph::visit::EdgeRef;
use std::collections::{BTreeMap, HashMap};

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
    let by_rank: HashMap<i32, &RankTrace> = ranks.iter().map(|t| (t.rank, t)).collect();
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
    // One send per receive, one receive per send.
    let mut seen_recv = HashMap::new();
    let mut seen_send = HashMap::new();
    raw.retain(|&(rr, ri, sr, si)| {
        let a = seen_recv.insert((rr, ri), (sr, si));
        let b = seen_send.insert((sr, si), (rr, ri));
        if a.is_some() || b.is_some() {
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

/// The completes-before graph of one run.
///
/// Nodes are the events of the MPI calls of every rank (not the tool's
/// clock records or markers): issued, matched, completed; a send and the
/// receive that took it share their match node, and each collective
/// instance has a node between its members' issues and completions. Edges
/// are labelled with the rule that made them ([`Edge`]).
#[derive(Debug)]
pub struct RunGraph {
    graph: DiGraph<Node, Edge>,
    /// Trace position of each rank.
    rank_pos: HashMap<i32, usize>,
    /// Nodes of each record, by trace position and record index.
    nodes: Vec<Vec<Option<OpNodes>>>,
    matches: Vec<P2pMatch>,
    collectives: Vec<CollectiveSet>,
    issues: Vec<RunIssue>,
    world: Option<u64>,
    comm_rank: HashMap<(u64, i32), i32>,
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
    /// matched earlier on its rank and communicator.
    pub fn build(ranks: &[RankTrace], options: &Options) -> RunGraph {
        let mut g = RunGraph {
            graph: DiGraph::new(),
            rank_pos: ranks.iter().enumerate().map(|(i, t)| (t.rank, i)).collect(),
            nodes: Vec::with_capacity(ranks.len()),
            matches: Vec::new(),
            collectives: Vec::new(),
            issues: Vec::new(),
            world: None,
            comm_rank: HashMap::new(),
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
        let (raw, issues) = resolve_matches(ranks);
        g.issues.extend(issues);
        g.learn_comm_ranks(ranks, &raw);
        g.add_nodes(ranks, &raw, options);
        for pos in 0..ranks.len() {
            g.add_intra_edges(ranks, pos, &raw);
        }
        g.add_collectives(ranks);
        g.check_wildcards(ranks);
        g.positions = WindowedReach::new(&g.graph).into_positions();
        g
    }

    /// The petgraph graph.
    pub fn graph(&self) -> &DiGraph<Node, Edge> {
        &self.graph
    }

    /// The nodes of record `index` of `rank`.
    pub fn op_nodes(&self, rank: i32, index: u64) -> Option<OpNodes> {
        let pos = *self.rank_pos.get(&rank)?;
        *self.nodes[pos].get(usize::try_from(index).ok()?)?
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

    /// The point-to-point match sets.
    pub fn matches(&self) -> &[P2pMatch] {
        &self.matches
    }

    /// The collective match sets (barriers included).
    pub fn collectives(&self) -> &[CollectiveSet] {
        &self.collectives
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
    pub fn reach(&self) -> WindowedReach<&DiGraph<Node, Edge>> {
        WindowedReach::with_positions(&self.graph, self.positions.clone())
    }

    /// The graph in Graphviz DOT, one cluster per rank, for failing tests
    /// and debugging.
    pub fn to_dot(&self) -> String {
        use std::fmt::Write;
        let mut out = String::from("digraph run {\n  node [shape=box, fontsize=10];\n");
        let mut by_rank: BTreeMap<i32, Vec<NodeIndex>> = BTreeMap::new();
        let mut shared = Vec::new();
        for n in self.graph.node_indices() {
            match &self.graph[n] {
                Node::Event { op, .. } => by_rank.entry(op.rank).or_default().push(n),
                _ => shared.push(n),
            }
        }
        let label = |n: NodeIndex| self.graph[n].to_string().replace('"', "'");
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
        for e in self.graph.edge_references() {
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
            let (Some(recv), Some(send)) = (
                self.trace_record(ranks, rr, ri),
                self.trace_record(ranks, sr, si),
            ) else {
                continue;
            };
            if Some(recv.comm) == self.world {
                continue;
            }
            if is_plain_send(send) {
                self.comm_rank.entry((send.comm, rr)).or_insert(send.peer);
            }
            if let Some((source, _)) = recv.matched {
                self.comm_rank.entry((recv.comm, sr)).or_insert(source);
            }
        }
    }

    /// Event nodes of every call, match sets merged, and each call's
    /// lifecycle edges.
    fn add_nodes(&mut self, ranks: &[RankTrace], raw: &[RawMatch], options: &Options) {
        let mut edges = Vec::new();
        for trace in ranks {
            let mut nodes: Vec<Option<OpNodes>> = Vec::new();
            for op in trace.ops.iter().filter(|op| is_node(op)) {
                let Ok(i) = usize::try_from(op.index) else {
                    continue;
                };
                if i >= nodes.len() {
                    nodes.resize(i + 1, None);
                }
                let me = OpRef::of(trace.rank, op);
                let mut add = |event| self.graph.add_node(Node::Event { op: me, event });
                let issue = add(Event::Issue);
                let send = has_send_half(op).then(|| add(Event::SendMatch));
                let receive = has_receive_half(op).then(|| add(Event::ReceiveMatch));
                let complete = add(Event::Complete);
                edges.push((issue, complete, Edge::Lifecycle));
                if let Some(s) = send {
                    edges.push((issue, s, Edge::Lifecycle));
                    let waits_for_match =
                        is_synchronous_send(op.kind) || options.buffering == SendBuffering::Zero;
                    if waits_for_match {
                        edges.push((s, complete, Edge::Lifecycle));
                    }
                }
                if let Some(r) = receive {
                    edges.push((issue, r, Edge::Lifecycle));
                    edges.push((r, complete, Edge::Lifecycle));
                }
                nodes[i] = Some(OpNodes {
                    issue,
                    send,
                    receive,
                    complete,
                });
            }
            self.nodes.push(nodes);
        }
        // A match set is one event: redirect the receive's match edges to
        // the send's match node and drop the receive's own.
        let mut merged: HashMap<NodeIndex, NodeIndex> = HashMap::new();
        for &(rr, ri, sr, si) in raw {
            let (Some(r), Some(s)) = (self.op_nodes(rr, ri), self.op_nodes(sr, si)) else {
                continue;
            };
            let (Some(rm), Some(sm)) = (r.receive, s.send) else {
                continue;
            };
            let (Some(receive), Some(send)) = (self.op_of(r.issue), self.op_of(s.issue)) else {
                continue;
            };
            self.graph[sm] = Node::Match { send, receive };
            merged.insert(rm, sm);
            let pos = self.rank_pos[&rr];
            if let Some(Some(n)) = self.nodes[pos].get_mut(ri as usize) {
                n.receive = Some(sm);
            }
            self.matches.push(P2pMatch { send, receive });
        }
        for (a, b, _) in edges.iter_mut() {
            *a = merged.get(a).copied().unwrap_or(*a);
            *b = merged.get(b).copied().unwrap_or(*b);
        }
        // The receive's own match nodes stay, isolated (removing them would
        // renumber the graph).
        self.add_edges(edges);
    }

    fn op_of(&self, n: NodeIndex) -> Option<OpRef> {
        match self.graph[n] {
            Node::Event { op, .. } => Some(op),
            _ => None,
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
    fn add_intra_edges(&mut self, ranks: &[RankTrace], pos: usize, raw: &[RawMatch]) {
        let trace = &ranks[pos];
        let nodes = |i: u64| -> Option<OpNodes> {
            self.nodes[pos]
                .get(usize::try_from(i).ok()?)
                .copied()
                .flatten()
        };
        let sender_of: HashMap<u64, (i32, u64)> = raw
            .iter()
            .filter(|m| m.0 == trace.rank)
            .map(|&(_, ri, sr, si)| (ri, (sr, si)))
            .collect();
        let completed_by: std::collections::HashSet<u64> = trace
            .ops
            .iter()
            .filter_map(|m| Some(m.matched_send()?.receiver))
            .collect();
        let mut edges: Vec<(NodeIndex, NodeIndex, Edge)> = Vec::new();
        // Rule 1: last send per (communicator, destination, tag).
        let mut last_send: HashMap<(u64, i32, i32), NodeIndex> = HashMap::new();
        // Rule 2: last receive per acceptance (communicator, source, tag).
        // The program's patterns (`RecvPattern::as_written`): the graph is
        // about the program's orderings, and a wildcard a guided replay
        // forced is a wildcard in the program whose run this reproduces.
        let mut last_recv: HashMap<RecvPattern, NodeIndex> = HashMap::new();
        // Example 5: last receive per message taken (communicator, source,
        // tag), with what it accepted.
        let mut last_taker: BTreeMap<(u64, i32, i32), (NodeIndex, RecvPattern)> = BTreeMap::new();
        let mut last_fence: Option<NodeIndex> = None;
        for op in &trace.ops {
            let Some(n) = nodes(op.index) else { continue };
            if let Some(f) = last_fence {
                edges.push((f, n.issue, Edge::Fence));
                if is_fence(op.kind) {
                    edges.push((f, n.complete, Edge::Fence));
                }
            }
            if let (true, Some(s)) = (is_plain_send(op), n.send) {
                if let Some(prev) = last_send.insert((op.comm, op.peer, op.tag), s) {
                    edges.push((prev, s, Edge::SendOrder));
                }
            }
            if let (true, Some(r)) = (is_receive(op), n.receive) {
                let acc = RecvPattern::as_written(op);
                // Rule 2: after the last earlier receive of each acceptance
                // that subsumes this one.
                for source in [acc.source, None] {
                    for tag in [acc.tag, None] {
                        let key = RecvPattern { source, tag, ..acc };
                        if let Some(&prev) = last_recv.get(&key) {
                            edges.push((prev, r, Edge::ReceiveOrder));
                        }
                    }
                }
                // Example 5: after the last earlier receive that took a
                // message this wider one accepts.
                if acc.source.is_none() || acc.tag.is_none() {
                    let range = (acc.comm, i32::MIN, i32::MIN)..=(acc.comm, i32::MAX, i32::MAX);
                    for (&(comm, source, tag), &(prev, prev_acc)) in last_taker.range(range) {
                        let taken = Envelope { comm, source, tag };
                        if acc.accepts(&taken) && !prev_acc.contains(&acc) {
                            edges.push((prev, r, Edge::NotTrumped));
                        }
                    }
                }
                let sender = sender_of.get(&op.index).copied();
                if let Some((source, tag)) = self.taken_message(ranks, op, sender) {
                    // An earlier receive that accepts the message this one
                    // took was no longer pending: it matched first.
                    for key_source in [Some(source), None] {
                        for key_tag in [Some(tag), None] {
                            let key = RecvPattern {
                                comm: op.comm,
                                source: key_source,
                                tag: key_tag,
                            };
                            match last_recv.get(&key) {
                                Some(&prev) if !key.contains(&acc) => {
                                    edges.push((prev, r, Edge::OlderReceiveFirst))
                                }
                                _ => {}
                            }
                        }
                    }
                    last_taker.insert((op.comm, source, tag), (r, acc));
                }
                last_recv.insert(acc, r);
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
            if is_fence(op.kind) {
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
        self.add_edges(edges);
    }

    fn add_edges(&mut self, mut edges: Vec<(NodeIndex, NodeIndex, Edge)>) {
        edges.retain(|(a, b, _)| a != b);
        edges.sort_unstable_by_key(|&(a, b, e)| (a, b, e as u8));
        edges.dedup();
        for (a, b, e) in edges {
            self.graph.add_edge(a, b, e);
        }
    }

    /// Collective match sets and their InterCB edges.
    fn add_collectives(&mut self, ranks: &[RankTrace]) {
        type Member<'t> = (OpNodes, &'t Op, i32);
        let mut instances: BTreeMap<CollectiveInstance, Vec<Member>> = BTreeMap::new();
        for (pos, trace) in ranks.iter().enumerate() {
            let mut seq: HashMap<(u64, u16), u64> = HashMap::new();
            for op in trace
                .ops
                .iter()
                .filter(|op| op.kind.class() == OpClass::Collective)
            {
                let Some(Some(n)) = self.nodes[pos].get(op.index as usize).copied() else {
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
        for (instance, mut members) in instances {
            members.sort_by_key(|m| m.2);
            if Some(instance.comm) == self.world && members.len() < ranks.len() {
                self.issues.push(RunIssue::IncompleteCollective {
                    instance,
                    members: members.len(),
                    ranks: ranks.len(),
                });
            }
            let hub = self.graph.add_node(Node::Collective(instance));
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
            for (i, &(n, _, _)) in members.iter().enumerate() {
                if enter[i] {
                    edges.push((n.issue, hub, Edge::CollectiveIn));
                }
                if exit[i] {
                    edges.push((hub, n.complete, Edge::CollectiveOut));
                }
            }
            self.collectives.push(CollectiveSet {
                instance,
                members: members
                    .iter()
                    .map(|&(_, op, rank)| OpRef::of(rank, op))
                    .collect(),
                node: hub,
            });
        }
        self.add_edges(edges);
    }

    /// Reports wildcard receives whose matched send is unknown.
    fn check_wildcards(&mut self, ranks: &[RankTrace]) {
        let matched: std::collections::HashSet<(i32, u64)> =
            self.matches.iter().map(|m| m.receive.key()).collect();
        for trace in ranks {
            for op in &trace.ops {
                if is_receive(op)
                    && op.has(flags::ANY_SOURCE)
                    && !matched.contains(&(trace.rank, op.index))
                {
                    self.issues.push(RunIssue::UnresolvedWildcard {
                        receive: OpRef::of(trace.rank, op),
                    });
                }
            }
        }
    }
}
