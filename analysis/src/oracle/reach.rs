//! Reachability between many sources and every node of the matches-before
//! graph at once, for the oracle's two questions about each wildcard event
//! `R` and each candidate send `S`: does `R` reach `S`, does `S` reach `R`
//! (seed 000 Definition 3.2: concurrent when neither), and which wildcard
//! events reach `S` (its enablers).
//!
//! Why not a search per event: one breadth-first search per event and per
//! (event, sender) visits the whole past or future of the event whenever a
//! candidate is concurrent, which is the point of asking, so the oracle was
//! quadratic in the run (BENCHMARKS.md, "Post-run analysis at scale":
//! about 15,000 s at 1,024 ranks of 10^4 calls). Here the graph is
//! condensed once (strongly connected components: the cycles of match
//! sets), ordered topologically once, and each batch of [`BATCH`] sources
//! costs one sweep over the condensed arcs with a bit per source: the
//! answer for every node at once.
//!
//! Exactness: `a` reaches `b` in the graph if and only if `a`'s component
//! reaches `b`'s in the condensation (a component reaches itself), and a
//! sweep in topological order settles each component after all its
//! predecessors (forward) or successors (backward), so its bits are final
//! when they are read. The unit tests compare it with breadth-first search.

use petgraph::graph::{DiGraph, NodeIndex};
use rustc_hash::FxHashMap as HashMap;
use std::collections::VecDeque;

/// Sources per sweep: one bit each in a [`Bits`] word group.
pub(super) const BATCH: usize = 256;

/// One bit per source of a batch.
pub(super) type Bits = [u64; BATCH / 64];

/// Which way a sweep follows the arcs.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(super) enum Sweep {
    /// What each source reaches (its future).
    Forward,
    /// What reaches each source (its past).
    Backward,
}

/// The condensation of a graph, its arcs as flat successor lists. Components
/// are numbered in reverse topological order (Tarjan emits a component after
/// every component it reaches), so every arc goes from a larger number to a
/// smaller one.
#[derive(Default)]
pub(super) struct Condensed {
    /// The component of each node.
    component_of: Vec<u32>,
    /// Successor components of component `c`:
    /// `successors[first_successor[c]..first_successor[c + 1]]`.
    first_successor: Vec<u32>,
    successors: Vec<u32>,
}

impl Condensed {
    /// Condenses `graph`, which goes once its arcs are read (the oracle's
    /// is the largest thing it holds).
    pub(super) fn new(graph: DiGraph<(), ()>) -> Condensed {
        let nodes = Successors::from_graph(&graph);
        drop(graph);
        let (component_of, count) = tarjan(&nodes);
        // Arcs between components, grouped by their source (a counting
        // sort); duplicates are left in, they only cost a repeated `or`.
        let mut first_successor = vec![0u32; count + 1];
        for (node, &c) in component_of.iter().enumerate() {
            let outside = nodes
                .after(node as u32)
                .iter()
                .filter(|&&next| component_of[next as usize] != c)
                .count();
            first_successor[c as usize + 1] += outside as u32;
        }
        for c in 0..count {
            first_successor[c + 1] += first_successor[c];
        }
        let mut filled = first_successor.clone();
        let mut successors = vec![0u32; first_successor[count] as usize];
        for (node, &c) in component_of.iter().enumerate() {
            for &next in nodes.after(node as u32) {
                let to = component_of[next as usize];
                if to != c {
                    successors[filled[c as usize] as usize] = to;
                    filled[c as usize] += 1;
                }
            }
        }
        Condensed {
            component_of,
            first_successor,
            successors,
        }
    }

    fn component_count(&self) -> u32 {
        (self.first_successor.len() - 1) as u32
    }

    fn successors_of(&self, c: u32) -> &[u32] {
        let from = self.first_successor[c as usize] as usize;
        let to = self.first_successor[c as usize + 1] as usize;
        &self.successors[from..to]
    }

    /// Sets bit `i` of every component that `sources[i]` reaches
    /// ([`Sweep::Forward`]) or that reaches `sources[i]`
    /// ([`Sweep::Backward`]), its own included. `sources` holds at most
    /// [`BATCH`] nodes; `labels` is reused between batches.
    pub(super) fn sweep(&self, sources: &[NodeIndex], direction: Sweep, labels: &mut Vec<Bits>) {
        assert!(
            sources.len() <= BATCH,
            "a sweep takes at most {BATCH} sources"
        );
        labels.clear();
        labels.resize(self.component_count() as usize, [0; BATCH / 64]);
        for (i, node) in sources.iter().enumerate() {
            labels[self.component_of[node.index()] as usize][i / 64] |= 1 << (i % 64);
        }
        match direction {
            Sweep::Forward => {
                for c in (0..self.component_count()).rev() {
                    let bits = labels[c as usize];
                    if bits == [0; BATCH / 64] {
                        continue;
                    }
                    for &next in self.successors_of(c) {
                        or_into(&mut labels[next as usize], &bits);
                    }
                }
            }
            Sweep::Backward => {
                for c in 0..self.component_count() {
                    let mut bits = labels[c as usize];
                    for &next in self.successors_of(c) {
                        or_into(&mut bits, &labels[next as usize]);
                    }
                    labels[c as usize] = bits;
                }
            }
        }
    }

    /// Whether bit `i` is set for `node` in labels of the last sweep.
    pub(super) fn has(&self, labels: &[Bits], node: NodeIndex, i: usize) -> bool {
        labels[self.component_of[node.index()] as usize][i / 64] & (1 << (i % 64)) != 0
    }

    /// Breadth-first search of the components `from` reaches, marking the
    /// `targets` it reaches as `ordered`; stops once all are. `stamp`
    /// (sized here at first use) marks the components seen with
    /// `generation`, new for each search. (Choices among requests are few;
    /// wildcard events use sweeps instead.)
    pub(super) fn search(
        &self,
        from: NodeIndex,
        targets: &[NodeIndex],
        stamp: &mut Vec<u32>,
        generation: u32,
        ordered: &mut [bool],
    ) {
        let mut left = ordered.iter().filter(|&&o| !o).count();
        if left == 0 {
            return;
        }
        stamp.resize(self.component_count() as usize, 0);
        let mut wanted: HashMap<u32, Vec<usize>> = HashMap::default();
        for (i, node) in targets.iter().enumerate() {
            wanted
                .entry(self.component_of[node.index()])
                .or_default()
                .push(i);
        }
        let start = self.component_of[from.index()];
        let mut queue = VecDeque::from([start]);
        stamp[start as usize] = generation;
        while let Some(c) = queue.pop_front() {
            if let Some(hits) = wanted.get(&c) {
                for &i in hits {
                    if !ordered[i] {
                        ordered[i] = true;
                        left -= 1;
                    }
                }
                if left == 0 {
                    return;
                }
            }
            for &next in self.successors_of(c) {
                if stamp[next as usize] != generation {
                    stamp[next as usize] = generation;
                    queue.push_back(next);
                }
            }
        }
    }
}

fn or_into(into: &mut Bits, from: &Bits) {
    for (word, add) in into.iter_mut().zip(from) {
        *word |= add;
    }
}

/// A graph's arcs as flat successor lists.
struct Successors {
    first: Vec<u32>,
    next: Vec<u32>,
}

impl Successors {
    fn from_graph(graph: &DiGraph<(), ()>) -> Successors {
        let count = graph.node_count();
        let mut first = vec![0u32; count + 1];
        for edge in graph.raw_edges() {
            first[edge.source().index() + 1] += 1;
        }
        for n in 0..count {
            first[n + 1] += first[n];
        }
        let mut filled = first.clone();
        let mut next = vec![0u32; graph.edge_count()];
        for edge in graph.raw_edges() {
            let from = edge.source().index();
            next[filled[from] as usize] = edge.target().index() as u32;
            filled[from] += 1;
        }
        Successors { first, next }
    }

    fn count(&self) -> usize {
        self.first.len() - 1
    }

    fn after(&self, node: u32) -> &[u32] {
        &self.next[self.first[node as usize] as usize..self.first[node as usize + 1] as usize]
    }
}

const UNSET: u32 = u32::MAX;

/// Tarjan's strongly connected components, with an explicit stack (a
/// program-order chain of 10^7 calls would overflow a recursive one):
/// the component of each node, numbered in the order they complete, which
/// is reverse topological; and how many there are.
fn tarjan(graph: &Successors) -> (Vec<u32>, usize) {
    let mut walk = Walk {
        index: vec![UNSET; graph.count()],
        low: vec![0; graph.count()],
        next_index: 0,
        open: Vec::new(),
        path: Vec::new(),
    };
    // UNSET while a visited node is still open (in no component yet).
    let mut component = vec![UNSET; graph.count()];
    let mut components = 0u32;
    for root in 0..graph.count() as u32 {
        if walk.index[root as usize] != UNSET {
            continue;
        }
        walk.enter(root, graph);
        while let Some(&(v, arc)) = walk.path.last() {
            if arc < graph.first[v as usize + 1] {
                walk.path.last_mut().expect("path is not empty").1 += 1;
                let w = graph.next[arc as usize];
                if walk.index[w as usize] == UNSET {
                    walk.enter(w, graph);
                } else if component[w as usize] == UNSET {
                    walk.low[v as usize] = walk.low[v as usize].min(walk.index[w as usize]);
                }
                continue;
            }
            walk.path.pop();
            if let Some(&(parent, _)) = walk.path.last() {
                walk.low[parent as usize] = walk.low[parent as usize].min(walk.low[v as usize]);
            }
            if walk.low[v as usize] == walk.index[v as usize] {
                while let Some(w) = walk.open.pop() {
                    component[w as usize] = components;
                    if w == v {
                        break;
                    }
                }
                components += 1;
            }
        }
    }
    (component, components as usize)
}

/// Tarjan's depth-first walk: discovery index and low link of each node,
/// the nodes not yet in a component, and the path with each node's next
/// arc.
struct Walk {
    index: Vec<u32>,
    low: Vec<u32>,
    next_index: u32,
    open: Vec<u32>,
    path: Vec<(u32, u32)>,
}

impl Walk {
    fn enter(&mut self, v: u32, graph: &Successors) {
        self.index[v as usize] = self.next_index;
        self.low[v as usize] = self.next_index;
        self.next_index += 1;
        self.open.push(v);
        self.path.push((v, graph.first[v as usize]));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use petgraph::visit::{Bfs, Reversed};

    /// A graph with cycles, chains and isolated nodes, made from a seed.
    fn graph(seed: u64, nodes: usize, arcs: usize) -> DiGraph<(), ()> {
        let mut g = DiGraph::new();
        let ids: Vec<NodeIndex> = (0..nodes).map(|_| g.add_node(())).collect();
        let mut state = seed.wrapping_mul(6364136223846793005).wrapping_add(1);
        let mut next = |bound: usize| {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            ((state >> 33) as usize) % bound
        };
        for _ in 0..arcs {
            let from = next(nodes);
            // Mostly forward arcs (program order), some back (match sets).
            let to = if next(5) == 0 {
                next(nodes)
            } else {
                (from + 1 + next(4)).min(nodes - 1)
            };
            g.add_edge(ids[from], ids[to], ());
        }
        g
    }

    #[test]
    fn sweeps_agree_with_breadth_first_search_from_each_source() {
        for seed in 0..40 {
            let g = graph(seed, 120, 200);
            let condensed = Condensed::new(g.clone());
            let sources: Vec<NodeIndex> = g.node_indices().step_by(7).collect();
            let mut labels = Vec::new();
            for direction in [Sweep::Forward, Sweep::Backward] {
                condensed.sweep(&sources, direction, &mut labels);
                for (i, &source) in sources.iter().enumerate() {
                    let mut reached = vec![false; g.node_count()];
                    match direction {
                        Sweep::Forward => {
                            let mut bfs = Bfs::new(&g, source);
                            while let Some(n) = bfs.next(&g) {
                                reached[n.index()] = true;
                            }
                        }
                        Sweep::Backward => {
                            let reversed = Reversed(&g);
                            let mut bfs = Bfs::new(reversed, source);
                            while let Some(n) = bfs.next(reversed) {
                                reached[n.index()] = true;
                            }
                        }
                    }
                    for n in g.node_indices() {
                        assert_eq!(
                            condensed.has(&labels, n, i),
                            reached[n.index()],
                            "seed {seed}, {direction:?} from {source:?} to {n:?}"
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn a_search_reaches_what_breadth_first_search_reaches() {
        let mut stamp = Vec::new();
        let mut generation = 0;
        for seed in 0..40 {
            let g = graph(seed, 120, 200);
            let condensed = Condensed::new(g.clone());
            let targets: Vec<NodeIndex> = g.node_indices().collect();
            for source in g.node_indices().step_by(5) {
                let mut reached = vec![false; g.node_count()];
                let mut bfs = Bfs::new(&g, source);
                while let Some(n) = bfs.next(&g) {
                    reached[n.index()] = true;
                }
                // One target already known ordered stays so.
                let mut ordered = vec![false; targets.len()];
                ordered[0] = true;
                generation += 1;
                condensed.search(source, &targets, &mut stamp, generation, &mut ordered);
                for (i, n) in targets.iter().enumerate() {
                    assert_eq!(
                        ordered[i],
                        i == 0 || reached[n.index()],
                        "seed {seed}, from {source:?} to {n:?}"
                    );
                }
            }
        }
    }

    #[test]
    fn components_are_numbered_against_the_arcs_and_join_cycles() {
        for seed in 0..40 {
            let g = graph(seed, 150, 260);
            let condensed = Condensed::new(g.clone());
            for c in 0..condensed.component_count() {
                assert!(condensed.successors_of(c).iter().all(|&to| to < c));
            }
            for edge in g.raw_edges() {
                let (from, to) = (edge.source(), edge.target());
                let back = petgraph::algo::has_path_connecting(&g, to, from, None);
                let same =
                    condensed.component_of[from.index()] == condensed.component_of[to.index()];
                assert_eq!(back, same, "seed {seed}: {from:?} -> {to:?}");
            }
        }
    }

    #[test]
    fn a_chain_of_a_million_calls_needs_no_recursion() {
        let mut g = DiGraph::with_capacity(1_000_000, 1_000_000);
        let chain: Vec<NodeIndex> = (0..1_000_000).map(|_| g.add_node(())).collect();
        for pair in chain.windows(2) {
            g.add_edge(pair[0], pair[1], ());
        }
        g.add_edge(chain[999_999], chain[500_000], ());
        let condensed = Condensed::new(g.clone());
        assert_eq!(condensed.component_count(), 500_001);
        let mut labels = Vec::new();
        condensed.sweep(&[chain[0]], Sweep::Forward, &mut labels);
        assert!(condensed.has(&labels, chain[999_999], 0));
    }

    #[test]
    fn a_full_batch_uses_every_bit() {
        let mut g = DiGraph::new();
        let chain: Vec<NodeIndex> = (0..BATCH + 1).map(|_| g.add_node(())).collect();
        for pair in chain.windows(2) {
            g.add_edge(pair[0], pair[1], ());
        }
        let condensed = Condensed::new(g.clone());
        let mut labels = Vec::new();
        condensed.sweep(&chain[..BATCH], Sweep::Forward, &mut labels);
        // The last node is reached from every source; the first only from
        // itself.
        assert!((0..BATCH).all(|i| condensed.has(&labels, chain[BATCH], i)));
        assert!((1..BATCH).all(|i| !condensed.has(&labels, chain[0], i)));
        assert!(condensed.has(&labels, chain[0], 0));
    }
}
