//! Control dependence of a control-flow graph, after Ferrante, Ottenstein
//! and Warren, *The program dependence graph and its use in optimization*
//! (TOPLAS 9(3), 1987), §3.1.
//!
//! Node `Y` is control-dependent on node `X` when `X` has an edge after
//! which `Y` must run and another after which it may not: `Y`
//! post-dominates a successor of `X` but not `X` itself. The post-dominator
//! tree is petgraph's dominator tree of the reversed graph, rooted at a
//! virtual exit joined by every node without successors (returns,
//! `unreachable`). For each edge `X -> S` where `S` does not post-dominate
//! `X`, every node from `S` up the post-dominator tree to `X`'s immediate
//! post-dominator (exclusive) is control-dependent on `X` (FOW's
//! algorithm; the nodes so marked are `X`'s post-dominance frontier seen
//! from the other side, Cytron et al. 1991). The closure
//! ([`ControlDeps::closure`]) adds the branches that decide whether those
//! branches run: a call inside `if (a) { if (b) { .. } }` depends on both.
//! A loop's exit branch controls its whole body, itself included, so a
//! call in a loop whose trip count depends on `x` depends on the exit test.
//!
//! What it does not do: it knows nodes and edges, not what a branch tests
//! or whether an edge is an exception edge (callers filter the nodes they
//! care about). Nodes that cannot reach any exit (an infinite loop) would
//! have no post-dominator; as in the usual augmentation, each such region
//! is given an edge to the virtual exit from its highest-numbered node
//! (for clang's block order, the loop's last block, usually its latch),
//! which makes the loop's body depend on nothing outside the loop except
//! what decides entering it. Nodes unreachable from the entry depend on
//! nothing.

use std::collections::VecDeque;

use petgraph::algo::dominators::simple_fast;
use petgraph::graph::{DiGraph, NodeIndex};

/// The control dependences of one graph.
#[derive(Debug, Clone, Default)]
pub(crate) struct ControlDeps {
    /// Per node, the nodes it is directly control-dependent on, ascending.
    direct: Vec<Vec<u32>>,
    /// Per node, its immediate post-dominator (`None`: the virtual exit).
    joins: Vec<Option<u32>>,
}

impl ControlDeps {
    /// Computes the control dependences of the graph whose node `n` has
    /// successors `succs[n]`, entered at node 0.
    ///
    /// Complexity: `O(N * E)` in the worst case (one post-dominator walk
    /// per edge), linear on structured code.
    pub fn new(succs: &[Vec<u32>]) -> Self {
        let n = succs.len();
        if n == 0 {
            return ControlDeps::default();
        }
        let reachable = reachable_from(succs, 0);
        let exit = n as u32;
        let mut edges: Vec<Vec<u32>> = (0..n)
            .map(|u| {
                let mut out: Vec<u32> = Vec::new();
                if reachable[u] {
                    for &s in &succs[u] {
                        if (s as usize) < n && !out.contains(&s) {
                            out.push(s);
                        }
                    }
                    if out.is_empty() {
                        out.push(exit);
                    }
                }
                out
            })
            .collect();
        edges.push(Vec::new());
        connect_endless_regions(&mut edges, &reachable);
        let ipdom = post_dominators(&edges);
        let mut direct = vec![Vec::new(); n];
        for (u, out) in edges.iter().enumerate().take(n) {
            if out.len() < 2 {
                continue;
            }
            let stop = ipdom[u];
            for &s in out {
                let mut walk = Some(s);
                // Each step climbs the tree, so at most `n` steps.
                for _ in 0..=n {
                    let Some(v) = walk else { break };
                    if Some(v) == stop || v == exit {
                        break;
                    }
                    let deps = &mut direct[v as usize];
                    if !deps.contains(&(u as u32)) {
                        deps.push(u as u32);
                    }
                    walk = ipdom[v as usize];
                }
            }
        }
        for deps in &mut direct {
            deps.sort_unstable();
        }
        let joins = ipdom[..n]
            .iter()
            .map(|d| d.filter(|&v| v != exit))
            .collect();
        ControlDeps { direct, joins }
    }

    /// Per node, its immediate post-dominator: where the paths from it
    /// meet again (`None`: only at the function's end).
    pub fn joins(&self) -> &[Option<u32>] {
        &self.joins
    }

    /// The nodes `node` is directly control-dependent on, ascending.
    #[cfg(test)]
    pub fn direct(&self, node: u32) -> &[u32] {
        self.direct.get(node as usize).map_or(&[], Vec::as_slice)
    }

    /// Per node, every node it is control-dependent on, directly or through
    /// the nodes those depend on, ascending.
    pub fn closure(&self) -> Vec<Vec<u32>> {
        let n = self.direct.len();
        (0..n)
            .map(|start| {
                let mut seen = vec![false; n];
                let mut queue: VecDeque<u32> = self.direct[start].iter().copied().collect();
                while let Some(x) = queue.pop_front() {
                    if std::mem::replace(&mut seen[x as usize], true) {
                        continue;
                    }
                    queue.extend(self.direct[x as usize].iter().copied());
                }
                (0..n as u32).filter(|x| seen[*x as usize]).collect()
            })
            .collect()
    }
}

/// Which nodes `root` reaches.
fn reachable_from(edges: &[Vec<u32>], root: usize) -> Vec<bool> {
    let mut seen = vec![false; edges.len()];
    let mut stack = vec![root];
    while let Some(u) = stack.pop() {
        if u >= edges.len() || std::mem::replace(&mut seen[u], true) {
            continue;
        }
        stack.extend(edges[u].iter().map(|s| *s as usize));
    }
    seen
}

/// Which nodes reach the last node (the exit).
fn reaching_exit(edges: &[Vec<u32>]) -> Vec<bool> {
    let n = edges.len();
    let mut preds = vec![Vec::new(); n];
    for (u, out) in edges.iter().enumerate() {
        for &s in out {
            preds[s as usize].push(u as u32);
        }
    }
    reachable_from(&preds, n - 1)
}

/// Gives every region of reachable nodes that cannot reach the exit an
/// edge to it, from the highest-numbered node of each region without a way
/// out (a sink among the strongly connected components of those nodes).
fn connect_endless_regions(edges: &mut [Vec<u32>], reachable: &[bool]) {
    let exit = (edges.len() - 1) as u32;
    // Each round connects at least one node, so at most `n` rounds.
    for _ in 0..edges.len() {
        let reaches = reaching_exit(edges);
        let stuck: Vec<usize> = (0..edges.len() - 1)
            .filter(|&u| reachable[u] && !reaches[u])
            .collect();
        if stuck.is_empty() {
            return;
        }
        let mut graph = DiGraph::<usize, ()>::new();
        let index: std::collections::HashMap<usize, NodeIndex> =
            stuck.iter().map(|&u| (u, graph.add_node(u))).collect();
        for &u in &stuck {
            for s in &edges[u] {
                if let Some(&t) = index.get(&(*s as usize)) {
                    graph.add_edge(index[&u], t, ());
                }
            }
        }
        for scc in petgraph::algo::tarjan_scc(&graph) {
            let members: Vec<usize> = scc.iter().map(|x| graph[*x]).collect();
            let leaves = members.iter().any(|&u| {
                edges[u].iter().any(|s| {
                    index.contains_key(&(*s as usize)) && !members.contains(&(*s as usize))
                })
            });
            if !leaves {
                if let Some(&last) = members.iter().max() {
                    edges[last].push(exit);
                }
            }
        }
    }
}

/// The immediate post-dominator of each node (the last node is the exit,
/// which has none; neither do nodes that do not reach it).
fn post_dominators(edges: &[Vec<u32>]) -> Vec<Option<u32>> {
    let n = edges.len();
    let mut reversed = DiGraph::<(), ()>::with_capacity(n, n * 2);
    for _ in 0..n {
        reversed.add_node(());
    }
    for (u, out) in edges.iter().enumerate() {
        for &s in out {
            reversed.add_edge(NodeIndex::new(s as usize), NodeIndex::new(u), ());
        }
    }
    let doms = simple_fast(&reversed, NodeIndex::new(n - 1));
    (0..n)
        .map(|v| {
            doms.immediate_dominator(NodeIndex::new(v))
                .map(|d| d.index() as u32)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::ControlDeps;

    fn deps(succs: &[&[u32]]) -> ControlDeps {
        let succs: Vec<Vec<u32>> = succs.iter().map(|s| s.to_vec()).collect();
        ControlDeps::new(&succs)
    }

    /// `if (c) A else B; J`: A and B depend on the branch, J does not.
    #[test]
    fn diamond() {
        let cd = deps(&[&[1, 2], &[3], &[3], &[]]);
        assert_eq!(cd.direct(0), [] as [u32; 0]);
        assert_eq!(cd.direct(1), [0]);
        assert_eq!(cd.direct(2), [0]);
        assert_eq!(cd.direct(3), [] as [u32; 0]);
    }

    /// `if (a) { if (b) { X } }`: X depends on b directly and on a through
    /// b.
    #[test]
    fn nested_ifs() {
        // 0: if (a) -> 1 | 3; 1: if (b) -> 2 | 3; 2: X -> 3; 3: return.
        let cd = deps(&[&[1, 3], &[2, 3], &[3], &[]]);
        assert_eq!(cd.direct(2), [1]);
        assert_eq!(cd.direct(1), [0]);
        let closure = cd.closure();
        assert_eq!(closure[2], [0, 1]);
        assert_eq!(closure[3], [] as [u32; 0]);
    }

    /// `for (..; cond; ..) { body }`: the body, the increment and the test
    /// itself depend on the loop's exit test; the code after it does not.
    #[test]
    fn loop_exit() {
        // 0: entry -> 1; 1: cond -> 2 | 4; 2: body -> 3; 3: inc -> 1;
        // 4: return.
        let cd = deps(&[&[1], &[2, 4], &[3], &[1], &[]]);
        assert_eq!(cd.direct(2), [1]);
        assert_eq!(cd.direct(3), [1]);
        assert_eq!(cd.direct(1), [1]);
        assert_eq!(cd.direct(4), [] as [u32; 0]);
        assert_eq!(cd.direct(0), [] as [u32; 0]);
    }

    /// `if (c) return; X; return`: X depends on the early return's test.
    #[test]
    fn early_return() {
        // 0: if (c) -> 1 | 2; 1: return; 2: X -> 3; 3: return.
        let cd = deps(&[&[1, 2], &[], &[3], &[]]);
        assert_eq!(cd.direct(1), [0]);
        assert_eq!(cd.direct(2), [0]);
        assert_eq!(cd.direct(3), [0]);
    }

    /// `while (1) { if (c) X; }` after an entry: the loop never reaches a
    /// return; X still depends on c, and the rest of the loop on nothing
    /// that is a branch in the source.
    #[test]
    fn endless_loop() {
        // 0: entry -> 1; 1: header -> 2; 2: if (c) -> 3 | 4; 3: X -> 4;
        // 4: latch -> 1.
        let cd = deps(&[&[1], &[2], &[3, 4], &[4], &[1]]);
        assert_eq!(cd.direct(3), [2]);
        assert!(!cd.direct(4).contains(&2));
        assert!(!cd.direct(1).contains(&2));
    }

    /// `switch` with a shared target, unreachable nodes and self loops.
    #[test]
    fn switch_and_unreachable() {
        // 0: switch -> 1 | 2 | 2; 1 -> 3; 2 -> 2 | 3; 3: return; 4: dead.
        let cd = deps(&[&[1, 2, 2], &[3], &[2, 3], &[], &[3]]);
        assert_eq!(cd.direct(1), [0]);
        assert_eq!(cd.direct(2), [0, 2]);
        assert_eq!(cd.direct(4), [] as [u32; 0]);
        assert_eq!(cd.direct(3), [] as [u32; 0]);
    }
}
