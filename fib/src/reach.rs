//! Windowed reachability and cut nodes on a directed graph, without a
//! transitive closure and without recursion.
//!
//! Every node gets the topological position of its strongly connected
//! component (Kosaraju, iterative). A path from `a` to `b` only visits
//! nodes whose position lies between those of `a` and `b`, so a search
//! from `a` for `b` never leaves that *window*. Cut nodes (nodes on every
//! path) are the dominators of the target in the window's subgraph,
//! rooted at the source (Cooper, Harvey and Kennedy, *A Simple, Fast
//! Dominance Algorithm*, through [`petgraph::algo::dominators`]).

use petgraph::algo::dominators::simple_fast;
use petgraph::graph::{DiGraph, NodeIndex};
use petgraph::visit::{IntoNeighborsDirected, IntoNodeIdentifiers, NodeIndexable};
use petgraph::Direction;
use rustc_hash::FxHashMap;
use std::borrow::Cow;
use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};

/// What a [`WindowedReach::sweep_cuts`] caller says after each node.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sweep {
    /// Go on.
    Continue,
    /// Every target is settled: stop.
    Stop,
}

const NONE: u32 = u32::MAX;

/// Which paths a cut search counts, and which nodes it reports.
#[derive(Debug, Clone, Copy)]
pub struct CutRules<C, F, L> {
    /// Nodes that may be reported as cut nodes.
    pub candidate: C,
    /// Whether a first step from the source to this neighbour counts.
    pub first_step: F,
    /// Whether a last step into `target` from this neighbour counts:
    /// `last_step(target, neighbour)`.
    pub last_step: L,
}

/// A node test that holds everywhere.
pub type Every<N> = fn(N) -> bool;
/// A step test that holds everywhere.
pub type EveryStep<N> = fn(N, N) -> bool;

impl<N> CutRules<Every<N>, Every<N>, EveryStep<N>> {
    /// Every node a candidate, every path counted.
    pub fn all() -> Self {
        CutRules {
            candidate: |_| true,
            first_step: |_| true,
            last_step: |_, _| true,
        }
    }
}

/// Reusable scratch space of the searches: the nodes a search marked (a
/// map, so that a search costs what it visits, not the graph's size: a
/// run of 1,024 ranks has tens of millions of nodes, and each thread of
/// each parallel search has its own workspace), the BFS queue and order.
/// One per thread; see [`WindowedReach`].
#[derive(Debug, Default)]
pub struct Workspace {
    /// Position of each marked node in `order` (its local index), by graph
    /// index.
    local: FxHashMap<u32, u32>,
    /// BFS parent (local index) of each node in `order`, for paths.
    parent: Vec<u32>,
    queue: VecDeque<usize>,
    order: Vec<usize>,
    /// Sweep state, by local index: immediate dominator, its depth, the
    /// nearest candidate strict dominator, whether processed.
    idom: Vec<u32>,
    depth: Vec<u32>,
    up: Vec<u32>,
    done: Vec<bool>,
    heap: BinaryHeap<Reverse<(u32, usize)>>,
}

impl Workspace {
    /// An empty workspace.
    pub fn new() -> Self {
        Self::default()
    }

    fn begin(&mut self) {
        // A map that once held a large search is not cleared bucket by
        // bucket for every small one after it.
        if self.local.capacity() > 1 << 16 && self.local.len() < self.local.capacity() / 8 {
            self.local = FxHashMap::default();
        }
        self.local.clear();
        self.queue.clear();
        self.order.clear();
        self.parent.clear();
        self.idom.clear();
        self.depth.clear();
        self.up.clear();
        self.done.clear();
        self.heap.clear();
    }

    fn marked(&self, n: usize) -> bool {
        self.local.contains_key(&(n as u32))
    }

    /// The local index of marked node `n`.
    fn local(&self, n: usize) -> u32 {
        self.local.get(&(n as u32)).copied().unwrap_or(NONE)
    }

    fn mark(&mut self, n: usize, parent: u32) {
        self.local.insert(n as u32, self.order.len() as u32);
        self.order.push(n);
        self.parent.push(parent);
        self.queue.push_back(n);
        self.idom.push(NONE);
        self.depth.push(0);
        self.up.push(NONE);
        self.done.push(false);
    }

    /// Nodes visited by the last search, in BFS order (as graph indices).
    pub fn visited(&self) -> &[usize] {
        &self.order
    }

    /// Whether the last search reached node `index` (a graph index).
    pub fn reached(&self, index: usize) -> bool {
        u32::try_from(index).is_ok_and(|i| self.local.contains_key(&i))
    }
}

/// A graph with the topological positions of its strongly connected
/// components, answering windowed reachability questions.
///
/// Generic over petgraph's visitor traits: any `Copy` graph reference that
/// can list nodes, neighbours in both directions, and index its nodes.
///
/// ```
/// use mbh_fib::{CutRules, WindowedReach, Workspace};
/// use petgraph::graph::{DiGraph, NodeIndex};
/// use petgraph::Direction;
///
/// // 0 -> 1 -> 3 and 0 -> 2 -> 3, then 3 -> 4: 3 is on every path to 4.
/// let g = DiGraph::<(), ()>::from_edges([(0, 1), (1, 3), (0, 2), (2, 3), (3, 4)]);
/// let reach = WindowedReach::new(&g);
/// let mut ws = Workspace::new();
/// let n = NodeIndex::new;
/// assert!(reach.reaches(&mut ws, n(0), n(4)));
/// assert!(!reach.reaches(&mut ws, n(4), n(0)));
/// let cuts = reach.cuts(&mut ws, n(0), Direction::Outgoing, &[n(4), n(3)], &CutRules::all());
/// assert_eq!(cuts, vec![Some(vec![n(3)]), Some(vec![])]);
/// ```
#[derive(Debug, Clone)]
pub struct WindowedReach<'p, G> {
    graph: G,
    topo: Cow<'p, [u32]>,
    acyclic: bool,
}

impl<'p, G> WindowedReach<'p, G>
where
    G: IntoNeighborsDirected + IntoNodeIdentifiers + NodeIndexable + Copy,
{
    /// Computes the topological positions of `graph`'s strongly connected
    /// components.
    ///
    /// # Complexity
    ///
    /// O(|V| + |E|) time, O(|V|) space.
    pub fn new(graph: G) -> Self {
        let (topo, acyclic) = positions(graph);
        WindowedReach {
            graph,
            topo: Cow::Owned(topo),
            acyclic,
        }
    }

    /// Reuses positions computed by [`WindowedReach::new`] for the same,
    /// unchanged graph.
    pub(crate) fn with_positions(graph: G, topo: &'p (Vec<u32>, bool)) -> Self {
        debug_assert_eq!(topo.0.len(), graph.node_bound());
        WindowedReach {
            graph,
            topo: Cow::Borrowed(&topo.0),
            acyclic: topo.1,
        }
    }

    /// The positions, by node index, and whether the graph is acyclic.
    pub fn into_positions(self) -> (Vec<u32>, bool) {
        (self.topo.into_owned(), self.acyclic)
    }

    /// Whether the graph has no cycle (then positions are all distinct).
    pub fn is_acyclic(&self) -> bool {
        self.acyclic
    }

    /// The graph.
    pub fn graph(&self) -> G {
        self.graph
    }

    /// Topological position of `n`'s strongly connected component: every
    /// edge `u -> v` has `position(u) <= position(v)`, with equality only
    /// inside a component.
    pub fn position(&self, n: G::NodeId) -> u32 {
        self.topo[self.graph.to_index(n)]
    }

    fn within(&self, n: usize, dir: Direction, bound: u32) -> bool {
        match dir {
            Direction::Outgoing => self.topo[n] <= bound,
            Direction::Incoming => self.topo[n] >= bound,
        }
    }

    /// Breadth-first search from `from` following edges in `dir`, never
    /// entering a node outside the window (position above `bound` going
    /// forward, below it going backward) or one for which `avoid` holds.
    /// Stops early when `stop` is visited. The visited nodes are left in
    /// `ws`.
    fn search(
        &self,
        ws: &mut Workspace,
        from: G::NodeId,
        dir: Direction,
        bound: u32,
        stop: Option<usize>,
        refused: &dyn Fn(usize, usize) -> bool,
    ) -> bool {
        ws.begin();
        let start = self.graph.to_index(from);
        ws.mark(start, u32::MAX);
        if stop == Some(start) {
            return true;
        }
        while let Some(u) = ws.queue.pop_front() {
            let parent = ws.local(u);
            for v in self.graph.neighbors_directed(self.graph.from_index(u), dir) {
                let v = self.graph.to_index(v);
                if ws.marked(v) || !self.within(v, dir, bound) || refused(u, v) {
                    continue;
                }
                ws.mark(v, parent);
                if stop == Some(v) {
                    return true;
                }
            }
        }
        false
    }

    /// Whether a path leads from `from` to `to`.
    ///
    /// # Complexity
    ///
    /// O(|V_w| + |E_w|), where the window holds the nodes reachable from
    /// `from` whose position is at most `to`'s.
    pub fn reaches(&self, ws: &mut Workspace, from: G::NodeId, to: G::NodeId) -> bool {
        let bound = self.position(to);
        if self.position(from) > bound {
            return false;
        }
        self.search(
            ws,
            from,
            Direction::Outgoing,
            bound,
            Some(self.graph.to_index(to)),
            &|_, _| false,
        )
    }

    /// The nodes reachable from `from` in direction `dir` inside the window
    /// bounded by `bound` (a position), `from` first.
    pub fn window(
        &self,
        ws: &mut Workspace,
        from: G::NodeId,
        dir: Direction,
        bound: u32,
    ) -> Vec<G::NodeId> {
        self.search(ws, from, dir, bound, None, &|_, _| false);
        ws.order.iter().map(|&n| self.graph.from_index(n)).collect()
    }

    /// For each of `targets`, the nodes satisfying `candidate` that lie on
    /// every path from `from` to it (in direction `dir`; `Incoming` gives
    /// the nodes on every path from the target to `from`), or `None` when
    /// no path leads there. Only paths whose first and last steps `rules`
    /// accepts count; only nodes `rules.candidate` accepts are reported;
    /// `from` and the target themselves never are. Cut nodes come nearest
    /// the target first.
    ///
    /// # Complexity
    ///
    /// One search of the window reaching the farthest target, O(|V_w| +
    /// |E_w|), then the dominator tree of that window, O(|V_w|²) in the
    /// worst case and near linear on the graphs of MPI runs, then, per
    /// target, the candidate dominators of its accepted last steps.
    pub fn cuts<C, F, L>(
        &self,
        ws: &mut Workspace,
        from: G::NodeId,
        dir: Direction,
        targets: &[G::NodeId],
        rules: &CutRules<C, F, L>,
    ) -> Vec<Option<Vec<G::NodeId>>>
    where
        C: Fn(G::NodeId) -> bool,
        F: Fn(G::NodeId) -> bool,
        L: Fn(G::NodeId, G::NodeId) -> bool,
    {
        let (candidate, first_step, last_step) =
            (&rules.candidate, &rules.first_step, &rules.last_step);
        let start = self.position(from);
        let in_window = |t: &G::NodeId| match dir {
            Direction::Outgoing => self.position(*t) >= start,
            Direction::Incoming => self.position(*t) <= start,
        };
        let bound = targets
            .iter()
            .filter(|t| in_window(t))
            .map(|&t| self.position(t));
        let bound = match dir {
            Direction::Outgoing => bound.max(),
            Direction::Incoming => bound.min(),
        };
        let Some(bound) = bound else {
            return vec![None; targets.len()];
        };
        let root = self.graph.to_index(from);
        let graph = self.graph;
        let refused = |u: usize, v: usize| u == root && !first_step(graph.from_index(v));
        self.search(ws, from, dir, bound, None, &refused);
        // The window as a compact graph, edges turned to point away from
        // `from`, for the dominator computation.
        let n = ws.order.len();
        let mut local: DiGraph<(), (), u32> = DiGraph::with_capacity(n, n * 2);
        for _ in 0..n {
            local.add_node(());
        }
        for (i, &u) in ws.order.iter().enumerate() {
            for v in self.graph.neighbors_directed(self.graph.from_index(u), dir) {
                let v = self.graph.to_index(v);
                if ws.marked(v) && !refused(u, v) {
                    local.add_edge(NodeIndex::new(i), NodeIndex::new(ws.local(v) as usize), ());
                }
            }
        }
        let doms = simple_fast(&local, NodeIndex::new(0));
        // Nearest strict dominator satisfying `candidate`, per local node.
        // An immediate dominator lies on every shortest path, so it comes
        // earlier in BFS order: one pass in that order fills the links.
        for i in 0..n {
            ws.done[i] = true;
            let Some(d) = doms.immediate_dominator(NodeIndex::new(i)) else {
                continue;
            };
            let d = d.index();
            ws.up[i] = if d != 0 && candidate(self.graph.from_index(ws.order[d])) {
                d as u32
            } else {
                ws.up[d]
            };
        }
        let back = dir.opposite();
        targets
            .iter()
            .map(|&t| self.target_cuts(ws, t, back, candidate, last_step, &refused))
            .collect()
    }

    /// The cut nodes of target `t` from the searched workspace: the
    /// candidates among each accepted last step and its dominators, common
    /// to all accepted last steps. `back` is the direction from `t` to its
    /// last steps.
    fn target_cuts(
        &self,
        ws: &Workspace,
        t: G::NodeId,
        back: Direction,
        candidate: &dyn Fn(G::NodeId) -> bool,
        last_step: &dyn Fn(G::NodeId, G::NodeId) -> bool,
        refused: &dyn Fn(usize, usize) -> bool,
    ) -> Option<Vec<G::NodeId>> {
        let ti = self.graph.to_index(t);
        let root = *ws.order.first()?;
        if ti == root {
            return Some(Vec::new());
        }
        let reached = |n: usize| ws.marked(n) && ws.done[ws.local(n) as usize];
        let mut common: Option<Vec<G::NodeId>> = None;
        for p in self.graph.neighbors_directed(t, back) {
            let pi = self.graph.to_index(p);
            if !reached(pi) || refused(pi, ti) || !last_step(t, p) {
                continue;
            }
            // p itself (unless it is `from`), then its candidate dominators;
            // never the target itself.
            let mut chain = Vec::new();
            if pi != root && pi != ti && candidate(p) {
                chain.push(p);
            }
            let mut at = ws.up[ws.local(pi) as usize];
            while at != NONE {
                if ws.order[at as usize] != ti {
                    chain.push(self.graph.from_index(ws.order[at as usize]));
                }
                at = ws.up[at as usize];
            }
            common = Some(match common {
                None => chain,
                Some(mut c) => {
                    c.retain(|x| chain.contains(x));
                    c
                }
            });
            if common.as_ref().is_some_and(|c| c.is_empty()) {
                break;
            }
        }
        common
    }

    /// [`WindowedReach::cuts`] going forward, for an acyclic graph, as a
    /// sweep in topological order that the caller can stop early.
    ///
    /// Nodes reachable from `from` with a position up to `bound` are
    /// processed in increasing position (`rules.first_step` is not used), each once all its reachable
    /// predecessors are; its immediate dominator is the nearest common
    /// dominator of those (Cooper, Harvey and Kennedy's intersection on a
    /// DAG). After each node, `visit` is told the node, whether no
    /// `candidate` strictly dominates it, and, when `is_target` holds for
    /// it, its cut nodes (nearest first; `None` when no accepted last step
    /// reaches it); it may stop the sweep. Returns `false` when the graph
    /// has cycles: then nothing is visited, and the caller uses
    /// [`WindowedReach::cuts`].
    ///
    /// # Complexity
    ///
    /// O((|V_s| + |E_s|)·(log |V_s| + d)) for the |V_s| nodes processed
    /// before the stop and d the dominator tree distance from a node to its
    /// predecessors' common dominator.
    pub fn sweep<C, F, L>(
        &self,
        ws: &mut Workspace,
        (from, bound): (G::NodeId, u32),
        rules: &CutRules<C, F, L>,
        is_target: impl Fn(G::NodeId) -> bool,
        mut visit: impl FnMut(G::NodeId, bool, Option<Vec<G::NodeId>>) -> Sweep,
    ) -> bool
    where
        C: Fn(G::NodeId) -> bool,
        L: Fn(G::NodeId, G::NodeId) -> bool,
    {
        let (candidate, last_step) = (&rules.candidate, &rules.last_step);
        if !self.acyclic {
            return false;
        }
        let start = self.position(from);
        ws.begin();
        let root = self.graph.to_index(from);
        ws.mark(root, NONE);
        ws.heap.push(Reverse((start, root)));
        let never = |_: usize, _: usize| false;
        while let Some(Reverse((_, u))) = ws.heap.pop() {
            let lu = ws.local(u) as usize;
            let node = self.graph.from_index(u);
            if u != root {
                // All reachable predecessors come earlier: intersect them.
                let mut acc = NONE;
                for p in self.graph.neighbors_directed(node, Direction::Incoming) {
                    let p = self.graph.to_index(p);
                    if !ws.marked(p) {
                        continue;
                    }
                    let lp = ws.local(p);
                    debug_assert!(ws.done[lp as usize]);
                    acc = if acc == NONE {
                        lp
                    } else {
                        intersect(&ws.idom, &ws.depth, acc, lp)
                    };
                }
                let d = acc as usize;
                ws.up[lu] = if d != 0 && candidate(self.graph.from_index(ws.order[d])) {
                    acc
                } else {
                    ws.up[d]
                };
                ws.idom[lu] = acc;
                ws.depth[lu] = ws.depth[d] + 1;
            }
            ws.done[lu] = true;
            let cuts = if is_target(node) {
                self.target_cuts(
                    ws,
                    node,
                    Direction::Incoming,
                    &candidate,
                    &last_step,
                    &never,
                )
            } else {
                None
            };
            if visit(node, ws.up[lu] == NONE, cuts) == Sweep::Stop {
                break;
            }
            for v in self.graph.neighbors_directed(node, Direction::Outgoing) {
                let vi = self.graph.to_index(v);
                if ws.marked(vi) || self.topo[vi] > bound {
                    continue;
                }
                ws.mark(vi, lu as u32);
                ws.heap.push(Reverse((self.topo[vi], vi)));
            }
        }
        ws.queue.clear();
        true
    }

    /// Plain reachability from `from`, in increasing position, never
    /// entering a node for which `skip` holds: each reached node is handed
    /// to `visit` with its position and the workspace (whose
    /// [`Workspace::reached`] tells the nodes reached so far), and `visit`
    /// may stop the sweep.
    ///
    /// When `visit` sees a node at position p, every node reachable at a
    /// position below p has been reached (a path only climbs), also on a
    /// graph with cycles; on an acyclic graph, so have the node's own
    /// reachable predecessors.
    ///
    /// # Complexity
    ///
    /// O((|V_s| + |E_s|) log |V_s|) for the |V_s| nodes reached before the
    /// stop.
    pub fn sweep_reach(
        &self,
        ws: &mut Workspace,
        from: G::NodeId,
        skip: impl Fn(G::NodeId) -> bool,
        mut visit: impl FnMut(G::NodeId, u32, &Workspace) -> Sweep,
    ) {
        ws.begin();
        let root = self.graph.to_index(from);
        ws.mark(root, NONE);
        ws.heap.push(Reverse((self.topo[root], root)));
        while let Some(Reverse((position, u))) = ws.heap.pop() {
            let node = self.graph.from_index(u);
            if visit(node, position, ws) == Sweep::Stop {
                break;
            }
            for v in self.graph.neighbors_directed(node, Direction::Outgoing) {
                let vi = self.graph.to_index(v);
                if ws.marked(vi) || skip(v) {
                    continue;
                }
                ws.mark(vi, ws.local(u));
                ws.heap.push(Reverse((self.topo[vi], vi)));
            }
        }
        ws.queue.clear();
    }

    /// [`WindowedReach::sweep`] for a list of targets: each target
    /// processed before `visit` stops the sweep gets its cut nodes, the
    /// others `None`. On a graph with cycles this is
    /// [`WindowedReach::cuts`] and `visit` is not called.
    pub fn sweep_cuts<C, F, L>(
        &self,
        ws: &mut Workspace,
        from: G::NodeId,
        targets: &[G::NodeId],
        rules: &CutRules<C, F, L>,
        mut visit: impl FnMut(G::NodeId, bool) -> Sweep,
    ) -> Vec<Option<Vec<G::NodeId>>>
    where
        C: Fn(G::NodeId) -> bool,
        F: Fn(G::NodeId) -> bool,
        L: Fn(G::NodeId, G::NodeId) -> bool,
    {
        let start = self.position(from);
        let Some(bound) = targets
            .iter()
            .map(|&t| self.position(t))
            .filter(|&p| p >= start)
            .max()
        else {
            return vec![None; targets.len()];
        };
        let index: std::collections::HashMap<usize, Vec<usize>> =
            targets
                .iter()
                .enumerate()
                .fold(Default::default(), |mut m, (i, &t)| {
                    m.entry(self.graph.to_index(t))
                        .or_insert_with(Vec::new)
                        .push(i);
                    m
                });
        let mut out = vec![None; targets.len()];
        let acyclic = self.sweep(
            ws,
            (from, bound),
            rules,
            |t| index.contains_key(&self.graph.to_index(t)),
            |n, free, cuts| {
                if let Some(is) = index.get(&self.graph.to_index(n)) {
                    for &i in is {
                        out[i] = cuts.clone();
                    }
                }
                visit(n, free)
            },
        );
        if !acyclic {
            let rules = CutRules {
                candidate: &rules.candidate,
                first_step: |_| true,
                last_step: &rules.last_step,
            };
            return self.cuts(ws, from, Direction::Outgoing, targets, &rules);
        }
        out
    }

    /// A shortest path from `from` to `to` following edges in `dir` that
    /// avoids every node for which `avoid` holds, both ends included, in
    /// the order of the walk (from `from`).
    pub fn path(
        &self,
        ws: &mut Workspace,
        from: G::NodeId,
        to: G::NodeId,
        dir: Direction,
        avoid: impl Fn(G::NodeId) -> bool,
    ) -> Option<Vec<G::NodeId>> {
        let (lo, hi) = (self.position(from), self.position(to));
        let ok = match dir {
            Direction::Outgoing => lo <= hi,
            Direction::Incoming => lo >= hi,
        };
        if !ok {
            return None;
        }
        let target = self.graph.to_index(to);
        let graph = self.graph;
        let refused = |_: usize, n: usize| avoid(graph.from_index(n));
        if !self.search(ws, from, dir, hi, Some(target), &refused) {
            return None;
        }
        let mut at = ws.local(target);
        let mut path = Vec::new();
        while at != u32::MAX {
            path.push(self.graph.from_index(ws.order[at as usize]));
            at = ws.parent[at as usize];
        }
        path.reverse();
        Some(path)
    }
}

/// The topological position of each node's strongly connected component
/// (by node index), and whether every component is a single node without
/// a loop.
///
/// Kosaraju's algorithm as petgraph's `kosaraju_scc` runs it, so that the
/// positions are the ones it gives (the order of the nodes it leaves
/// unordered decides which send a search meets first, hence the evidence
/// of a kept barrier): a depth-first postorder of the reversed graph from
/// each node in index order, neighbours pushed in the order the graph
/// lists them; then, in decreasing finishing order, each node not yet
/// reached leads a component of the nodes it reaches, and components come
/// in reverse topological order. Without petgraph's vector per component
/// (tens of millions of them at 1,024 ranks): two bit sets, the
/// finishing order and a stack.
fn positions<G>(graph: G) -> (Vec<u32>, bool)
where
    G: IntoNeighborsDirected + IntoNodeIdentifiers + NodeIndexable,
{
    let n = graph.node_bound();
    let mut discovered = BitSet::new(n);
    let mut finished = BitSet::new(n);
    let mut finish: Vec<u32> = Vec::with_capacity(n);
    let mut stack: Vec<u32> = Vec::new();
    // A predecessor met while it is still being explored closes a cycle
    // (a back edge of this depth-first search, which checks each node's
    // neighbours when it discovers the node, as a recursive one would);
    // without one, every component is a single node.
    let mut cyclic = false;
    for start in graph.node_identifiers() {
        let start = graph.to_index(start);
        if discovered.has(start) {
            continue;
        }
        stack.clear();
        stack.push(start as u32);
        while let Some(&top) = stack.last() {
            let top = top as usize;
            if discovered.insert(top) {
                let node = graph.from_index(top);
                for p in graph.neighbors_directed(node, Direction::Incoming) {
                    let p = graph.to_index(p);
                    if !discovered.has(p) {
                        stack.push(p as u32);
                    } else if !finished.has(p) {
                        cyclic = true;
                    }
                }
            } else {
                stack.pop();
                if finished.insert(top) {
                    finish.push(top as u32);
                }
            }
        }
    }
    drop(finished);
    let mut topo = vec![0u32; n];
    if !cyclic {
        // Components come in decreasing finishing order: position k is the
        // k-th node to finish.
        for (k, &node) in finish.iter().enumerate() {
            topo[node as usize] = k as u32;
        }
        return (topo, true);
    }
    let mut reached = discovered;
    reached.clear();
    let mut components = 0u32;
    let mut acyclic = true;
    for &leader in finish.iter().rev() {
        if reached.has(leader as usize) {
            continue;
        }
        stack.clear();
        stack.push(leader);
        let mut size = 0usize;
        while let Some(node) = stack.pop() {
            let node = node as usize;
            if !reached.insert(node) {
                continue;
            }
            size += 1;
            topo[node] = components;
            for s in graph.neighbors_directed(graph.from_index(node), Direction::Outgoing) {
                let s = graph.to_index(s);
                acyclic &= s != node;
                if !reached.has(s) {
                    stack.push(s as u32);
                }
            }
        }
        acyclic &= size == 1;
        components += 1;
    }
    // Components came in reverse topological order.
    let last = components.saturating_sub(1);
    for &node in &finish {
        topo[node as usize] = last - topo[node as usize];
    }
    (topo, acyclic)
}

/// A fixed-size set of node indices.
struct BitSet(Vec<u64>);

impl BitSet {
    fn new(n: usize) -> Self {
        BitSet(vec![0; n.div_ceil(64)])
    }

    fn has(&self, i: usize) -> bool {
        self.0[i / 64] & (1 << (i % 64)) != 0
    }

    /// Adds `i`; whether it was absent.
    fn insert(&mut self, i: usize) -> bool {
        let (word, bit) = (&mut self.0[i / 64], 1u64 << (i % 64));
        let absent = *word & bit == 0;
        *word |= bit;
        absent
    }

    fn clear(&mut self) {
        self.0.iter_mut().for_each(|w| *w = 0);
    }
}

/// The nearest common ancestor of `a` and `b` in the dominator tree given
/// by `idom` and `depth` (local indices).
fn intersect(idom: &[u32], depth: &[u32], mut a: u32, mut b: u32) -> u32 {
    while a != b {
        let (da, db) = (depth[a as usize], depth[b as usize]);
        if da >= db {
            a = idom[a as usize];
        }
        if db >= da {
            b = idom[b as usize];
        }
    }
    a
}

#[cfg(test)]
mod tests {
    use super::*;

    fn graph(n: usize, edges: &[(u32, u32)]) -> DiGraph<(), ()> {
        let mut g = DiGraph::new();
        for _ in 0..n {
            g.add_node(());
        }
        g.extend_with_edges(edges);
        g
    }

    #[test]
    fn positions_follow_edges_and_cycles_share_one() {
        let g = graph(5, &[(0, 1), (1, 2), (2, 1), (2, 3), (4, 0)]);
        let r = WindowedReach::new(&g);
        let p = |i: u32| r.position(NodeIndex::new(i as usize));
        for e in g.raw_edges() {
            assert!(p(e.source().index() as u32) <= p(e.target().index() as u32));
        }
        assert_eq!(p(1), p(2));
        assert!(p(4) < p(0) && p(0) < p(1) && p(2) < p(3));
    }

    #[test]
    fn reaches_and_paths() {
        let g = graph(5, &[(0, 1), (1, 2), (0, 3), (3, 2)]);
        let r = WindowedReach::new(&g);
        let mut ws = Workspace::new();
        let n = NodeIndex::new;
        assert!(r.reaches(&mut ws, n(0), n(2)));
        assert!(!r.reaches(&mut ws, n(2), n(0)));
        assert!(!r.reaches(&mut ws, n(0), n(4)));
        let p = r.path(&mut ws, n(0), n(2), Direction::Outgoing, |x| x == n(1));
        assert_eq!(p, Some(vec![n(0), n(3), n(2)]));
        let back = r.path(&mut ws, n(2), n(0), Direction::Incoming, |_| false);
        assert_eq!(back.map(|p| p.len()), Some(3));
    }

    #[test]
    fn cuts_are_dominators_in_either_direction() {
        // 0 -> 1 -> 2 -> 4, 0 -> 3 -> 2: node 2 is on every path to 4.
        let g = graph(5, &[(0, 1), (1, 2), (0, 3), (3, 2), (2, 4)]);
        let r = WindowedReach::new(&g);
        let mut ws = Workspace::new();
        let n = NodeIndex::new;
        let all = CutRules::all();
        let fwd = r.cuts(
            &mut ws,
            n(0),
            Direction::Outgoing,
            &[n(4), n(1), n(0)],
            &all,
        );
        assert_eq!(fwd, vec![Some(vec![n(2)]), Some(vec![]), Some(vec![])]);
        let back = r.cuts(&mut ws, n(4), Direction::Incoming, &[n(0), n(3)], &all);
        assert_eq!(back, vec![Some(vec![n(2)]), Some(vec![n(2)])]);
        let none = r.cuts(&mut ws, n(4), Direction::Outgoing, &[n(0)], &all);
        assert_eq!(none, vec![None]);
        // Only paths leaving 0 towards 3: then 3 is on every path to 2.
        let via3 = CutRules {
            candidate: |_| true,
            first_step: |x| x == n(3),
            last_step: |_, _| true,
        };
        let cut = r.cuts(&mut ws, n(0), Direction::Outgoing, &[n(2)], &via3);
        assert_eq!(cut, vec![Some(vec![n(3)])]);
        // Only paths entering 2 from 1: then 1 is.
        let from1 = CutRules {
            candidate: |_| true,
            first_step: |_| true,
            last_step: |_, p| p == n(1),
        };
        let cut = r.cuts(&mut ws, n(0), Direction::Outgoing, &[n(2)], &from1);
        assert_eq!(cut, vec![Some(vec![n(1)])]);
        let sweep = r.sweep_cuts(&mut ws, n(0), &[n(4), n(2)], &from1, |_, _| Sweep::Continue);
        assert_eq!(sweep, vec![None, Some(vec![n(1)])]);
    }
}
