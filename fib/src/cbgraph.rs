//! The storage of a run's completes-before graph: compressed adjacency
//! lists and a table of calls, instead of petgraph's linked lists of nodes
//! that each carry a [`Node`].
//!
//! At 1,024 ranks of 10^4 calls a run has about 30 M nodes and
//! 45 M edges. petgraph's `DiGraph<Node, Edge>` spent 64 bytes a node (a
//! 48-byte [`Node`] and two list heads) and 20 an edge, and grew its
//! vectors by doubling while the graph was built: several GiB. Here a node
//! is 8 bytes of offsets (its lists in each direction) and an edge 10 (its
//! other end and its rule, in each direction); a node's [`Node`] is worked
//! out from its call's entry in the table (16 bytes a call).
//!
//! The graph is the one petgraph held, node for node and in the same
//! order: node numbers, and the order in which [`CbGraph::neighbors_directed`]
//! and [`CbGraph::edges_directed`] list a node's edges (the reverse of the
//! order they were added in, as petgraph lists them), so that searches,
//! and the shortest paths given as evidence, are the same.

use crate::model::{CollectiveInstance, Edge, Event, Node, OpRef};
use mbh_trace::OpKind;
use petgraph::graph::{EdgeIndex, NodeIndex};
use petgraph::visit::{
    EdgeRef, GraphBase, IntoNeighbors, IntoNeighborsDirected, IntoNodeIdentifiers, NodeIndexable,
};
use petgraph::Direction;
use rustc_hash::FxHashMap;
use std::iter::{Copied, Rev};
use std::slice::Iter;

/// No partner, no call.
pub(crate) const NONE: u32 = u32::MAX;

/// Nodes per entry of [`CbGraph`]'s block index.
const BLOCK: u32 = 64;

/// One call with nodes: its record index, site, kind, first node (its
/// issue) and which match events it has.
#[derive(Debug, Clone, Copy)]
pub(crate) struct OpSlot {
    pub(crate) index: u32,
    pub(crate) site: u32,
    pub(crate) first: u32,
    pub(crate) kind: OpKind,
    /// [`SEND_HALF`] and [`RECEIVE_HALF`].
    pub(crate) halves: u8,
}

/// The call has its own send match event.
pub(crate) const SEND_HALF: u8 = 1;
/// The call has its own receive match event.
pub(crate) const RECEIVE_HALF: u8 = 2;

impl OpSlot {
    /// Its nodes: issue, send match, receive match (its own, before any
    /// merge), completion.
    pub(crate) fn nodes(&self) -> (u32, Option<u32>, Option<u32>, u32) {
        let send = self.halves & SEND_HALF != 0;
        let receive = self.halves & RECEIVE_HALF != 0;
        let s = send.then_some(self.first + 1);
        let r = receive.then_some(self.first + 1 + u32::from(send));
        (
            self.first,
            s,
            r,
            self.first + 1 + u32::from(send) + u32::from(receive),
        )
    }
}

/// The calls of one rank in the table: slots `start..end`, found by record
/// index by binary search when the indices increase (as the runtime writes
/// them), else through a map (the last call of an index wins).
#[derive(Debug, Clone)]
pub(crate) struct RankOps {
    pub(crate) rank: i32,
    pub(crate) start: u32,
    pub(crate) end: u32,
    unordered: Option<FxHashMap<u32, u32>>,
    /// While building: slot by record index ([`NONE`]: no call), when the
    /// indices are dense enough; the builder looks calls up millions of
    /// times.
    dense: Option<Vec<u32>>,
    /// Records of the rank's trace (bounds `dense`).
    records: usize,
}

/// A run's completes-before graph: nodes, edges labelled with their rule,
/// and the calls the nodes are events of.
///
/// Implements petgraph's visitor traits ([`IntoNeighborsDirected`],
/// [`IntoNodeIdentifiers`], [`NodeIndexable`]), so
/// [`crate::WindowedReach`] searches it.
#[derive(Debug, Default)]
pub struct CbGraph {
    out_start: Vec<u32>,
    out_to: Vec<NodeIndex>,
    out_kind: Vec<Edge>,
    in_start: Vec<u32>,
    in_from: Vec<NodeIndex>,
    in_kind: Vec<Edge>,
    pub(crate) ops: Vec<OpSlot>,
    pub(crate) ranks: Vec<RankOps>,
    /// Per slot: the receive that took its send half, the send its receive
    /// half took ([`NONE`]: none).
    pub(crate) send_partner: Vec<u32>,
    pub(crate) recv_partner: Vec<u32>,
    /// Collective instance nodes come after every call's nodes (while
    /// building: the number of call nodes so far).
    pub(crate) hub_base: u32,
    /// Per block of [`BLOCK`] call nodes, the slot of its first node's
    /// call: finding a node's call is a search among a few calls.
    blocks: Vec<u32>,
    pub(crate) hubs: Vec<CollectiveInstance>,
}

/// An edge as [`CbGraph::edges_directed`] gives it.
#[derive(Debug, Clone, Copy)]
pub struct EdgeReference<'a> {
    source: NodeIndex,
    target: NodeIndex,
    weight: &'a Edge,
    id: EdgeIndex,
}

impl EdgeRef for EdgeReference<'_> {
    type NodeId = NodeIndex;
    type EdgeId = EdgeIndex;
    type Weight = Edge;
    fn source(&self) -> NodeIndex {
        self.source
    }
    fn target(&self) -> NodeIndex {
        self.target
    }
    fn weight(&self) -> &Edge {
        self.weight
    }
    fn id(&self) -> EdgeIndex {
        self.id
    }
}

/// A node's neighbours in one direction, most recently added edge first.
pub type Neighbors<'a> = Rev<Copied<Iter<'a, NodeIndex>>>;

impl CbGraph {
    /// Number of nodes.
    pub fn node_count(&self) -> usize {
        self.out_start.len().saturating_sub(1)
    }

    /// Number of edges.
    pub fn edge_count(&self) -> usize {
        self.out_to.len()
    }

    /// Every node, in index order.
    pub fn node_indices(&self) -> impl Iterator<Item = NodeIndex> {
        (0..self.node_count()).map(NodeIndex::new)
    }

    fn range(start: &[u32], n: NodeIndex) -> std::ops::Range<usize> {
        let i = n.index();
        start[i] as usize..start[i + 1] as usize
    }

    /// The neighbours of `n` along edges in direction `dir`, the most
    /// recently added edge first (as petgraph lists them).
    pub fn neighbors_directed(&self, n: NodeIndex, dir: Direction) -> Neighbors<'_> {
        let list = match dir {
            Direction::Outgoing => &self.out_to[Self::range(&self.out_start, n)],
            Direction::Incoming => &self.in_from[Self::range(&self.in_start, n)],
        };
        list.iter().copied().rev()
    }

    /// The edges of `n` in direction `dir` (for `Incoming`, `target()` is
    /// `n`), the most recently added first.
    pub fn edges_directed(
        &self,
        n: NodeIndex,
        dir: Direction,
    ) -> impl Iterator<Item = EdgeReference<'_>> + '_ {
        let (range, others, kinds) = match dir {
            Direction::Outgoing => (
                Self::range(&self.out_start, n),
                &self.out_to,
                &self.out_kind,
            ),
            Direction::Incoming => (Self::range(&self.in_start, n), &self.in_from, &self.in_kind),
        };
        range.rev().map(move |e| {
            let (source, target) = match dir {
                Direction::Outgoing => (n, others[e]),
                Direction::Incoming => (others[e], n),
            };
            EdgeReference {
                source,
                target,
                weight: &kinds[e],
                id: EdgeIndex::new(e),
            }
        })
    }

    /// The edges from `a` to `b`, the most recently added first.
    pub fn edges_connecting(
        &self,
        a: NodeIndex,
        b: NodeIndex,
    ) -> impl Iterator<Item = EdgeReference<'_>> + '_ {
        self.edges_directed(a, Direction::Outgoing)
            .filter(move |e| e.target == b)
    }

    /// An edge from `a` to `b`, if any.
    pub fn find_edge(&self, a: NodeIndex, b: NodeIndex) -> Option<EdgeIndex> {
        self.edges_connecting(a, b).next().map(|e| e.id)
    }

    /// The slot of the call whose nodes include `n` (not a collective):
    /// a binary search among the few calls of `n`'s block of nodes.
    fn slot_of(&self, n: u32) -> usize {
        let b = (n / BLOCK) as usize;
        let (from, to) = match (self.blocks.get(b), self.blocks.get(b + 1)) {
            (Some(&from), Some(&to)) => (from as usize, to as usize + 1),
            _ => (0, self.ops.len()),
        };
        let to = to.min(self.ops.len());
        from + self.ops[from..to].partition_point(|op| op.first <= n) - 1
    }

    /// The collective instance of node `n`, if it is one.
    pub fn collective(&self, n: NodeIndex) -> Option<CollectiveInstance> {
        let i = (n.index() as u32).checked_sub(self.hub_base)?;
        self.hubs.get(i as usize).copied()
    }

    /// Indexes the calls by block of nodes (building, once they are all
    /// added).
    fn index_blocks(&mut self) {
        let blocks = self.hub_base.div_ceil(BLOCK) as usize + 1;
        self.blocks = Vec::with_capacity(blocks);
        let mut slot = 0usize;
        for b in 0..blocks as u32 {
            let n = b * BLOCK;
            while slot + 1 < self.ops.len() && self.ops[slot + 1].first <= n {
                slot += 1;
            }
            self.blocks.push(slot as u32);
        }
    }

    /// The rank of the call in `slot`.
    fn rank_of(&self, slot: usize) -> i32 {
        let at = self.ranks.partition_point(|r| r.start as usize <= slot);
        self.ranks[at - 1].rank
    }

    /// The call in `slot`.
    pub(crate) fn op_ref(&self, slot: usize) -> OpRef {
        let op = &self.ops[slot];
        OpRef {
            rank: self.rank_of(slot),
            index: u64::from(op.index),
            site: op.site,
            kind: op.kind,
        }
    }

    /// What node `n` stands for.
    ///
    /// # Panics
    ///
    /// If `n` is not a node of the graph.
    pub fn node(&self, n: NodeIndex) -> Node {
        let i = n.index() as u32;
        assert!((i as usize) < self.node_count(), "no node {i}");
        if i >= self.hub_base {
            return Node::Collective(self.hubs[(i - self.hub_base) as usize]);
        }
        let slot = self.slot_of(i);
        let (_, send, receive, _) = self.ops[slot].nodes();
        let op = self.op_ref(slot);
        let event = if i == self.ops[slot].first {
            Event::Issue
        } else if Some(i) == send {
            let partner = self.send_partner[slot];
            if partner != NONE {
                return Node::Match {
                    send: op,
                    receive: self.op_ref(partner as usize),
                };
            }
            Event::SendMatch
        } else if Some(i) == receive {
            Event::ReceiveMatch
        } else {
            Event::Complete
        };
        Node::Event { op, event }
    }

    /// The slot of record `index` of the rank at position `pos`.
    pub(crate) fn slot(&self, pos: usize, index: u64) -> Option<usize> {
        let r = self.ranks.get(pos)?;
        let index = u32::try_from(index).ok()?;
        if let Some(dense) = &r.dense {
            return dense
                .get(index as usize)
                .filter(|&&s| s != NONE)
                .map(|&s| s as usize);
        }
        match &r.unordered {
            Some(map) => map.get(&index).map(|&s| s as usize),
            None => {
                let ops = &self.ops[r.start as usize..r.end as usize];
                let at = ops.binary_search_by_key(&index, |op| op.index).ok()?;
                Some(r.start as usize + at)
            }
        }
    }
}

impl GraphBase for CbGraph {
    type NodeId = NodeIndex;
    type EdgeId = EdgeIndex;
}

impl NodeIndexable for CbGraph {
    fn node_bound(&self) -> usize {
        self.node_count()
    }
    fn to_index(&self, a: NodeIndex) -> usize {
        a.index()
    }
    fn from_index(&self, i: usize) -> NodeIndex {
        NodeIndex::new(i)
    }
}

impl<'a> IntoNeighbors for &'a CbGraph {
    type Neighbors = Neighbors<'a>;
    fn neighbors(self, a: NodeIndex) -> Neighbors<'a> {
        self.neighbors_directed(a, Direction::Outgoing)
    }
}

impl<'a> IntoNeighborsDirected for &'a CbGraph {
    type NeighborsDirected = Neighbors<'a>;
    fn neighbors_directed(self, n: NodeIndex, d: Direction) -> Neighbors<'a> {
        CbGraph::neighbors_directed(self, n, d)
    }
}

impl IntoNodeIdentifiers for &CbGraph {
    type NodeIdentifiers = std::iter::Map<std::ops::Range<usize>, fn(usize) -> NodeIndex>;
    fn node_identifiers(self) -> Self::NodeIdentifiers {
        (0..self.node_count()).map(NodeIndex::new as fn(usize) -> NodeIndex)
    }
}

impl CbGraph {
    /// Starts the calls of the next rank, whose trace has `records`
    /// records (building).
    pub(crate) fn begin_rank(&mut self, rank: i32, records: usize) {
        let start = self.ops.len() as u32;
        self.ranks.push(RankOps {
            rank,
            start,
            end: start,
            unordered: None,
            dense: Some(Vec::with_capacity(records)),
            records,
        });
    }

    /// Ends building: the lookup tables by record index go (lookups are
    /// binary searches from now on).
    pub(crate) fn end_build(&mut self) {
        for r in &mut self.ranks {
            r.dense = None;
        }
    }

    /// Adds a call of the current rank with the given match halves
    /// (building): its nodes come next. Returns its slot, or `None` if its
    /// record index does not fit.
    pub(crate) fn add_op(
        &mut self,
        index: u64,
        site: u32,
        kind: OpKind,
        halves: u8,
    ) -> Option<usize> {
        let index = u32::try_from(index).ok()?;
        let slot = self.ops.len();
        let count = 2 + u32::from(halves & SEND_HALF != 0) + u32::from(halves & RECEIVE_HALF != 0);
        let first = self.hub_base;
        let rank = self.ranks.last_mut()?;
        self.ops.push(OpSlot {
            index,
            site,
            first,
            kind,
            halves,
        });
        self.hub_base += count;
        let ops = &self.ops;
        let increasing = slot == rank.start as usize || ops[slot - 1].index < index;
        if !increasing && rank.unordered.is_none() {
            let all = (rank.start as usize..slot).map(|s| (ops[s].index, s as u32));
            rank.unordered = Some(all.collect());
        }
        if let Some(map) = &mut rank.unordered {
            map.insert(index, slot as u32);
        }
        let at = index as usize;
        if at > 2 * rank.records + 64 {
            rank.dense = None;
        }
        if let Some(dense) = &mut rank.dense {
            if dense.len() <= at {
                dense.resize(at + 1, NONE);
            }
            dense[at] = slot as u32;
        }
        rank.end = slot as u32 + 1;
        Some(slot)
    }

    /// Ends the calls (building): no partners yet; collective nodes come
    /// next.
    pub(crate) fn end_calls(&mut self) {
        let n = self.ops.len();
        self.send_partner = vec![NONE; n];
        self.recv_partner = vec![NONE; n];
        self.index_blocks();
    }

    /// Adds a collective instance's node (building).
    pub(crate) fn add_hub(&mut self, instance: CollectiveInstance) -> NodeIndex {
        self.hubs.push(instance);
        NodeIndex::new(self.hub_base as usize + self.hubs.len() - 1)
    }
}

/// The edges of a graph being built, in the order they are added, in
/// batches as petgraph's `add_edge` would have added them one after the
/// other; [`EdgeStream::lay_out`] stores them per node.
#[derive(Debug, Default)]
pub(crate) struct EdgeStream {
    from: Vec<u32>,
    to: Vec<u32>,
    kind: Vec<Edge>,
    /// Edges of the first batch, whose order per node is fixed at the end.
    first_batch: usize,
}

impl EdgeStream {
    /// Adds an edge of the first batch, all [`Edge::Lifecycle`], in any
    /// order and without duplicates: each node's edges of this batch are
    /// listed as if sorted by their other end (as one sorted batch of
    /// `add_edge` calls lists them).
    pub(crate) fn push_first(&mut self, a: u32, b: u32) {
        debug_assert_eq!(self.first_batch, 0);
        self.from.push(a);
        self.to.push(b);
        self.kind.push(Edge::Lifecycle);
    }

    /// Ends the first batch.
    pub(crate) fn end_first(&mut self) {
        self.first_batch = self.from.len();
    }

    /// Adds a batch of edges as the old `add_edges` did: no loops, sorted
    /// by (source, target, rule), no duplicates.
    pub(crate) fn add_batch(&mut self, mut edges: Vec<(NodeIndex, NodeIndex, Edge)>) {
        edges.retain(|(a, b, _)| a != b);
        // One key: source and target in a word, then the rule.
        let key = |&(a, b, e): &(NodeIndex, NodeIndex, Edge)| {
            ((a.index() as u64) << 32 | b.index() as u64, e as u8)
        };
        if !edges.is_sorted_by_key(key) {
            edges.sort_unstable_by_key(key);
        }
        edges.dedup();
        for (a, b, e) in edges {
            self.from.push(a.index() as u32);
            self.to.push(b.index() as u32);
            self.kind.push(e);
        }
    }

    /// Stores the edges in `graph`, per node in each direction.
    pub(crate) fn lay_out(self, graph: &mut CbGraph) {
        let n = graph.hub_base as usize + graph.hubs.len();
        let first = self.first_batch;
        let (start, to, kind) = lay_out(n, &self.to, &self.from, &self.kind, first);
        (graph.in_start, graph.in_from, graph.in_kind) = (start, to, kind);
        let (start, to, kind) = lay_out(n, &self.from, &self.to, &self.kind, first);
        (graph.out_start, graph.out_to, graph.out_kind) = (start, to, kind);
    }
}

/// Per node of `0..n`, the edges `at[e] -> other[e]` in the order they were
/// added (a stable counting sort by `at`), the part of each node's list
/// from the first `first` edges sorted by the other end; as (offsets,
/// other ends, rules).
fn lay_out(
    n: usize,
    at: &[u32],
    other: &[u32],
    kind: &[Edge],
    first: usize,
) -> (Vec<u32>, Vec<NodeIndex>, Vec<Edge>) {
    // `start[a + 1]` counts `a`'s edges, then, summed, is where its list
    // begins, then the next free place in it: once every edge is placed,
    // where it ends, that is, where `a + 1`'s begins.
    let mut start = vec![0u32; n + 1];
    for &a in at {
        if let Some(c) = start.get_mut(a as usize + 2) {
            *c += 1;
        }
    }
    for i in 1..n {
        start[i + 1] += start[i];
    }
    let mut to = vec![NodeIndex::new(0); at.len()];
    let mut rule = vec![Edge::Lifecycle; at.len()];
    for e in 0..at.len() {
        let cursor = &mut start[at[e] as usize + 1];
        let slot = *cursor as usize;
        *cursor += 1;
        to[slot] = NodeIndex::new(other[e] as usize);
        rule[slot] = kind[e];
    }
    // The first batch, all `Lifecycle` and the only edges of that rule, was
    // added sorted by (source, target): each node's list begins with its
    // part of it, in order of the other end.
    debug_assert!(kind[first..].iter().all(|&k| k != Edge::Lifecycle));
    for i in 0..n {
        let list = start[i] as usize..start[i + 1] as usize;
        let len = rule[list.clone()]
            .iter()
            .take_while(|&&r| r == Edge::Lifecycle)
            .count();
        if len > 1 {
            to[list.start..list.start + len].sort_unstable();
        }
    }
    (start, to, rule)
}
