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

use petgraph::algo::kosaraju_scc;
use petgraph::graph::{DiGraph, NodeIndex};
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

/// The condensation of a graph, its arcs as flat successor lists, its
/// components in topological order.
pub(super) struct Condensed {
    /// The component of each node.
    component_of: Vec<u32>,
    /// Successor components of component `c`:
    /// `successors[first_successor[c]..first_successor[c + 1]]`.
    first_successor: Vec<u32>,
    successors: Vec<u32>,
    /// Every component, each after all its predecessors.
    topological: Vec<u32>,
}

impl Condensed {
    pub(super) fn new(graph: &DiGraph<(), ()>) -> Condensed {
        let components = kosaraju_scc(graph);
        let mut component_of = vec![0u32; graph.node_count()];
        for (c, nodes) in components.iter().enumerate() {
            for node in nodes {
                component_of[node.index()] = c as u32;
            }
        }
        let count = components.len();
        drop(components);
        let mut arcs: Vec<(u32, u32)> = graph
            .raw_edges()
            .iter()
            .map(|e| {
                (
                    component_of[e.source().index()],
                    component_of[e.target().index()],
                )
            })
            .filter(|(from, to)| from != to)
            .collect();
        arcs.sort_unstable();
        arcs.dedup();
        let mut first_successor = vec![0u32; count + 1];
        for &(from, _) in &arcs {
            first_successor[from as usize + 1] += 1;
        }
        for c in 0..count {
            first_successor[c + 1] += first_successor[c];
        }
        let successors: Vec<u32> = arcs.iter().map(|&(_, to)| to).collect();
        let topological = kahn_order(&first_successor, &successors);
        Condensed {
            component_of,
            first_successor,
            successors,
            topological,
        }
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
        labels.resize(self.first_successor.len() - 1, [0; BATCH / 64]);
        for (i, node) in sources.iter().enumerate() {
            labels[self.component_of[node.index()] as usize][i / 64] |= 1 << (i % 64);
        }
        match direction {
            Sweep::Forward => {
                for &c in &self.topological {
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
                for &c in self.topological.iter().rev() {
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
}

fn or_into(into: &mut Bits, from: &Bits) {
    for (word, add) in into.iter_mut().zip(from) {
        *word |= add;
    }
}

/// Kahn's algorithm over the condensed arcs (a DAG by construction).
fn kahn_order(first_successor: &[u32], successors: &[u32]) -> Vec<u32> {
    let count = first_successor.len() - 1;
    let mut waiting_for = vec![0u32; count];
    for &to in successors {
        waiting_for[to as usize] += 1;
    }
    let mut ready: VecDeque<u32> = (0..count as u32)
        .filter(|&c| waiting_for[c as usize] == 0)
        .collect();
    let mut order = Vec::with_capacity(count);
    while let Some(c) = ready.pop_front() {
        order.push(c);
        let from = first_successor[c as usize] as usize;
        let to = first_successor[c as usize + 1] as usize;
        for &next in &successors[from..to] {
            waiting_for[next as usize] -= 1;
            if waiting_for[next as usize] == 0 {
                ready.push_back(next);
            }
        }
    }
    debug_assert_eq!(order.len(), count, "the condensation has a cycle");
    order
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
            let condensed = Condensed::new(&g);
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
    fn a_full_batch_uses_every_bit() {
        let mut g = DiGraph::new();
        let chain: Vec<NodeIndex> = (0..BATCH + 1).map(|_| g.add_node(())).collect();
        for pair in chain.windows(2) {
            g.add_edge(pair[0], pair[1], ());
        }
        let condensed = Condensed::new(&g);
        let mut labels = Vec::new();
        condensed.sweep(&chain[..BATCH], Sweep::Forward, &mut labels);
        // The last node is reached from every source; the first only from
        // itself.
        assert!((0..BATCH).all(|i| condensed.has(&labels, chain[BATCH], i)));
        assert!((1..BATCH).all(|i| !condensed.has(&labels, chain[0], i)));
        assert!(condensed.has(&labels, chain[0], 0));
    }
}
