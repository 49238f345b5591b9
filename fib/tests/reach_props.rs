//! Differential property tests: the windowed searches of `WindowedReach`
//! against a naive full transitive closure, on random small graphs (cycles
//! included). A failing case shrinks, and its graph is printed in DOT.
// Node ids index the closure matrices: ranges over them read best.
#![allow(clippy::needless_range_loop)]

use mbh_fib::{CutRules, Sweep, WindowedReach, Workspace};
use petgraph::dot::{Config, Dot};
use petgraph::graph::{DiGraph, NodeIndex};
use petgraph::Direction;
use proptest::prelude::*;
use std::collections::BTreeSet;

/// A random graph: node count, edges, and which nodes are cut candidates.
fn graphs() -> impl Strategy<Value = (usize, Vec<(usize, usize)>, Vec<bool>)> {
    (1usize..=10).prop_flat_map(|n| {
        (
            Just(n),
            prop::collection::vec((0..n, 0..n), 0..=3 * n),
            prop::collection::vec(any::<bool>(), n),
        )
    })
}

/// Which (target, neighbour) steps a search accepts, from a seed: 0 takes
/// every step.
fn accepts(seed: u32, t: usize, p: usize) -> bool {
    seed == 0 || !(t as u32 * 7 + p as u32 * 13 + seed).is_multiple_of(3)
}

/// The seed of the first-step filter that goes with `seed`.
fn first_seed(seed: u32) -> u32 {
    if seed == 0 {
        0
    } else {
        seed ^ 0x55
    }
}

/// Brute-force cut sets from `from` to every target, going `dir`, with the
/// first step from `from` and the last step into the target filtered.
fn brute(
    g: &DiGraph<(), ()>,
    from: usize,
    dir: Direction,
    candidate: &[bool],
    seed: u32,
    first_seed: u32,
) -> Vec<Option<BTreeSet<usize>>> {
    let n = g.node_count();
    // Walk direction as a graph of its own, without the refused first steps.
    let mut h = DiGraph::<(), ()>::new();
    for _ in 0..n {
        h.add_node(());
    }
    for e in g.raw_edges() {
        let (a, b) = match dir {
            Direction::Outgoing => (e.source().index(), e.target().index()),
            Direction::Incoming => (e.target().index(), e.source().index()),
        };
        if a == from && !accepts(first_seed, b, b) {
            continue;
        }
        h.add_edge(NodeIndex::new(a), NodeIndex::new(b), ());
    }
    let full = closure(&h, None);
    let without: Vec<_> = (0..n).map(|c| closure(&h, Some(c))).collect();
    (0..n)
        .map(|t| {
            if t == from {
                return Some(BTreeSet::new());
            }
            let last: Vec<usize> = h
                .neighbors_directed(NodeIndex::new(t), Direction::Incoming)
                .map(|p| p.index())
                .filter(|&p| full[from][p] && accepts(seed, t, p))
                .collect();
            if last.is_empty() {
                return None;
            }
            Some(
                (0..n)
                    .filter(|&c| candidate[c] && c != from && c != t)
                    .filter(|&c| last.iter().all(|&p| p == c || !without[c][from][p]))
                    .collect(),
            )
        })
        .collect()
}

fn build(n: usize, edges: &[(usize, usize)]) -> DiGraph<(), ()> {
    let mut g = DiGraph::new();
    for _ in 0..n {
        g.add_node(());
    }
    for &(a, b) in edges {
        g.add_edge(NodeIndex::new(a), NodeIndex::new(b), ());
    }
    g
}

fn dot(g: &DiGraph<(), ()>) -> String {
    format!(
        "{:?}",
        Dot::with_config(g, &[Config::EdgeNoLabel, Config::NodeIndexLabel])
    )
}

/// reach[a][b]: a path of zero or more edges from a to b avoiding `skip`
/// (except at the ends), by a plain search from every node.
fn closure(g: &DiGraph<(), ()>, skip: Option<usize>) -> Vec<Vec<bool>> {
    let n = g.node_count();
    let mut reach = vec![vec![false; n]; n];
    for (a, row) in reach.iter_mut().enumerate() {
        let mut stack = vec![a];
        row[a] = true;
        while let Some(u) = stack.pop() {
            if Some(u) == skip && u != a {
                continue;
            }
            for v in g.neighbors(NodeIndex::new(u)) {
                if !row[v.index()] {
                    row[v.index()] = true;
                    stack.push(v.index());
                }
            }
        }
    }
    reach
}

/// A random DAG: edges go from lower to higher node numbers.
fn dags() -> impl Strategy<Value = (usize, Vec<(usize, usize)>, Vec<bool>, usize)> {
    graphs().prop_flat_map(|(n, edges, candidate)| {
        let edges = edges
            .into_iter()
            .filter(|(a, b)| a != b)
            .map(|(a, b)| (a.min(b), a.max(b)))
            .collect::<Vec<_>>();
        (Just(n), Just(edges), Just(candidate), 0..=n)
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]

    #[test]
    fn positions_respect_edges_and_components((n, edges, _) in graphs()) {
        let g = build(n, &edges);
        let r = WindowedReach::new(&g);
        let full = closure(&g, None);
        for &(a, b) in &edges {
            prop_assert!(r.position(NodeIndex::new(a)) <= r.position(NodeIndex::new(b)), "{}", dot(&g));
        }
        for a in 0..n {
            for b in 0..n {
                let same = full[a][b] && full[b][a];
                let equal = r.position(NodeIndex::new(a)) == r.position(NodeIndex::new(b));
                prop_assert_eq!(same, equal, "{} and {} in\n{}", a, b, dot(&g));
            }
        }
    }

    #[test]
    fn positions_are_the_order_of_petgraphs_kosaraju((n, edges, _) in graphs()) {
        // The positions decide which send a search meets first, hence a kept
        // barrier's evidence: they are kept as petgraph's Kosaraju ordered
        // the components (its vector per component cost too much memory).
        let g = build(n, &edges);
        let r = WindowedReach::new(&g);
        let sccs = petgraph::algo::kosaraju_scc(&g);
        let last = sccs.len() - 1;
        for (i, scc) in sccs.iter().enumerate() {
            for &x in scc {
                prop_assert_eq!(r.position(x) as usize, last - i, "{}", dot(&g));
            }
        }
        let acyclic = sccs.iter().all(|c| c.len() == 1) && !edges.iter().any(|(a, b)| a == b);
        prop_assert_eq!(r.is_acyclic(), acyclic, "{}", dot(&g));
    }

    #[test]
    fn windowed_reachability_is_the_closure((n, edges, _) in graphs()) {
        let g = build(n, &edges);
        let r = WindowedReach::new(&g);
        let full = closure(&g, None);
        let mut ws = Workspace::new();
        for a in 0..n {
            for b in 0..n {
                let (na, nb) = (NodeIndex::new(a), NodeIndex::new(b));
                prop_assert_eq!(r.reaches(&mut ws, na, nb), full[a][b], "{} -> {} in\n{}", a, b, dot(&g));
                let path = r.path(&mut ws, na, nb, Direction::Outgoing, |_| false);
                prop_assert_eq!(path.is_some(), full[a][b], "path {} -> {} in\n{}", a, b, dot(&g));
                if let Some(p) = path {
                    prop_assert_eq!(p.first(), Some(&na));
                    prop_assert_eq!(p.last(), Some(&nb));
                    for w in p.windows(2) {
                        prop_assert!(g.find_edge(w[0], w[1]).is_some(), "{:?} in\n{}", p, dot(&g));
                    }
                }
            }
        }
    }

    #[test]
    fn cuts_are_the_nodes_every_path_needs((n, edges, candidate) in graphs(), seed in 0u32..4) {
        let g = build(n, &edges);
        let r = WindowedReach::new(&g);
        let mut ws = Workspace::new();
        let targets: Vec<NodeIndex> = (0..n).map(NodeIndex::new).collect();
        for from in 0..n {
            for dir in [Direction::Outgoing, Direction::Incoming] {
                let expected = brute(&g, from, dir, &candidate, seed, first_seed(seed));
                let rules = CutRules {
                    candidate: |x: NodeIndex| candidate[x.index()],
                    first_step: |x: NodeIndex| accepts(first_seed(seed), x.index(), x.index()),
                    last_step: |t: NodeIndex, p: NodeIndex| accepts(seed, t.index(), p.index()),
                };
                let got = r.cuts(&mut ws, NodeIndex::new(from), dir, &targets, &rules);
                for t in 0..n {
                    let actual = got[t]
                        .as_ref()
                        .map(|cuts| cuts.iter().map(|c| c.index()).collect::<BTreeSet<_>>());
                    prop_assert_eq!(
                        &actual, &expected[t],
                        "cuts from {} to {} ({:?}), candidates {:?}, seed {}, in\n{}",
                        from, t, dir, candidate, seed, dot(&g)
                    );
                }
            }
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]

    #[test]
    fn the_sweep_agrees_with_the_closure_wherever_it_got(
        (n, edges, candidate, stop_after) in dags(),
        seed in 0u32..4,
    ) {
        let g = build(n, &edges);
        let r = WindowedReach::new(&g);
        prop_assert!(r.is_acyclic());
        let mut ws = Workspace::new();
        let targets: Vec<NodeIndex> = (0..n).map(NodeIndex::new).collect();
        for from in 0..n {
            // `free` is about the node itself: every step accepted.
            let plain = brute(&g, from, Direction::Outgoing, &candidate, 0, 0);
            let expected = brute(&g, from, Direction::Outgoing, &candidate, seed, 0);
            // Run to the end, then stop after `stop_after` nodes.
            for limit in [usize::MAX, stop_after] {
                let mut seen = 0;
                let mut free_ok = true;
                let rules = CutRules {
                    candidate: |x: NodeIndex| candidate[x.index()],
                    first_step: |_: NodeIndex| true,
                    last_step: |t: NodeIndex, p: NodeIndex| accepts(seed, t.index(), p.index()),
                };
                let got = r.sweep_cuts(&mut ws, NodeIndex::new(from), &targets, &rules, |x, free| {
                    // `free` says no candidate strictly dominates x.
                    let e = &plain[x.index()];
                    free_ok &= e.as_ref().is_some_and(|c| c.is_empty() == free);
                    seen += 1;
                    if seen >= limit {
                        Sweep::Stop
                    } else {
                        Sweep::Continue
                    }
                });
                prop_assert!(free_ok, "free flags from {} in\n{}", from, dot(&g));
                for t in 0..n {
                    let actual = got[t]
                        .as_ref()
                        .map(|cuts| cuts.iter().map(|c| c.index()).collect::<BTreeSet<_>>());
                    if limit == usize::MAX {
                        prop_assert_eq!(
                            &actual, &expected[t],
                            "sweep cuts of {} -> {}, candidates {:?}, in\n{}", from, t, candidate, dot(&g)
                        );
                    } else if actual.is_some() {
                        prop_assert_eq!(&actual, &expected[t], "stopped sweep {} -> {} in\n{}", from, t, dot(&g));
                    }
                }
            }
        }
    }
}
