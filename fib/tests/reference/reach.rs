//! The pre-issue-13 windowed reachability (commit b067cb6), kept verbatim as the
//! reference of the differential tests (`super::tests`); only its paths
//! changed.

use petgraph::algo::dominators::simple_fast;
use petgraph::algo::kosaraju_scc;
use petgraph::graph::{DiGraph, NodeIndex};
use petgraph::visit::{IntoNeighborsDirected, IntoNodeIdentifiers, NodeIndexable, Visitable};
use petgraph::Direction;
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

/// Reusable scratch space of the searches: visit marks stamped with an
/// epoch (so starting a search costs nothing), the BFS queue and order.
/// One per thread; see [`WindowedReach`].
#[derive(Debug, Default)]
pub struct Workspace {
    stamp: Vec<u32>,
    epoch: u32,
    /// Position of each marked node in `order` (its local index).
    local: Vec<u32>,
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
    /// An empty workspace; it grows to the graph on first use.
    pub fn new() -> Self {
        Self::default()
    }

    fn begin(&mut self, bound: usize) {
        if self.stamp.len() < bound {
            self.stamp.resize(bound, 0);
            self.local.resize(bound, 0);
        }
        self.epoch = self.epoch.wrapping_add(1);
        if self.epoch == 0 {
            self.stamp.iter_mut().for_each(|s| *s = 0);
            self.epoch = 1;
        }
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
        self.stamp[n] == self.epoch
    }

    fn mark(&mut self, n: usize, parent: u32) {
        self.stamp[n] = self.epoch;
        self.local[n] = self.order.len() as u32;
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
        self.stamp.get(index) == Some(&self.epoch)
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
pub struct WindowedReach<G> {
    graph: G,
    topo: Vec<u32>,
    acyclic: bool,
}

impl<G> WindowedReach<G>
where
    G: IntoNeighborsDirected + IntoNodeIdentifiers + NodeIndexable + Visitable + Copy,
{
    /// Computes the topological positions of `graph`'s strongly connected
    /// components.
    ///
    /// # Complexity
    ///
    /// O(|V| + |E|) time, O(|V|) space.
    pub fn new(graph: G) -> Self {
        let sccs = kosaraju_scc(graph);
        let acyclic = sccs.iter().all(|c| c.len() == 1)
            && !graph.node_identifiers().any(|n| {
                graph
                    .neighbors_directed(n, Direction::Outgoing)
                    .any(|m| m == n)
            });
        let mut topo = vec![0u32; graph.node_bound()];
        // Kosaraju lists the components in reverse topological order.
        let last = sccs.len().saturating_sub(1);
        for (i, scc) in sccs.iter().enumerate() {
            for &n in scc {
                topo[graph.to_index(n)] = (last - i) as u32;
            }
        }
        WindowedReach {
            graph,
            topo,
            acyclic,
        }
    }

    /// Reuses positions computed by [`WindowedReach::new`] for the same,
    /// unchanged graph.
    pub fn with_positions(graph: G, topo: (Vec<u32>, bool)) -> Self {
        debug_assert_eq!(topo.0.len(), graph.node_bound());
        WindowedReach {
            graph,
            topo: topo.0,
            acyclic: topo.1,
        }
    }

    /// The positions, by node index, and whether the graph is acyclic.
    pub fn into_positions(self) -> (Vec<u32>, bool) {
        (self.topo, self.acyclic)
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
        ws.begin(self.graph.node_bound());
        let start = self.graph.to_index(from);
        ws.mark(start, u32::MAX);
        if stop == Some(start) {
            return true;
        }
        while let Some(u) = ws.queue.pop_front() {
            let parent = ws.local[u];
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
                    local.add_edge(NodeIndex::new(i), NodeIndex::new(ws.local[v] as usize), ());
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
        let reached = |n: usize| ws.marked(n) && ws.done[ws.local[n] as usize];
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
            let mut at = ws.up[ws.local[pi] as usize];
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
        ws.begin(self.graph.node_bound());
        let root = self.graph.to_index(from);
        ws.mark(root, NONE);
        ws.heap.push(Reverse((start, root)));
        let never = |_: usize, _: usize| false;
        while let Some(Reverse((_, u))) = ws.heap.pop() {
            let lu = ws.local[u] as usize;
            let node = self.graph.from_index(u);
            if u != root {
                // All reachable predecessors come earlier: intersect them.
                let mut acc = NONE;
                for p in self.graph.neighbors_directed(node, Direction::Incoming) {
                    let p = self.graph.to_index(p);
                    if !ws.marked(p) {
                        continue;
                    }
                    let lp = ws.local[p];
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
        ws.begin(self.graph.node_bound());
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
                ws.mark(vi, ws.local[u]);
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
        let mut at = ws.local[target];
        let mut path = Vec::new();
        while at != u32::MAX {
            path.push(self.graph.from_index(ws.order[at as usize]));
            at = ws.parent[at as usize];
        }
        path.reverse();
        Some(path)
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
