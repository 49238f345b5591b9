//! Control-flow graphs, dominators and natural loops.

use petgraph::algo::dominators::simple_fast;
use petgraph::graph::{DiGraph, NodeIndex};

use crate::ir::{BlockId, Function};

/// A function's control-flow graph with its dominator tree.
#[derive(Debug, Clone)]
pub(crate) struct Cfg {
    /// Distinct predecessors of each block.
    pub preds: Vec<Vec<BlockId>>,
    /// Distinct successors of each block.
    pub succs: Vec<Vec<BlockId>>,
    /// Whether each block is reachable from the entry.
    pub reachable: Vec<bool>,
    /// Preorder and postorder numbers in the dominator tree, for constant
    /// time dominance queries.
    pre: Vec<u32>,
    post: Vec<u32>,
}

impl Cfg {
    pub fn new(f: &Function) -> Self {
        let n = f.blocks.len();
        let mut graph = DiGraph::<(), ()>::with_capacity(n, n * 2);
        for _ in 0..n {
            graph.add_node(());
        }
        let mut succs = vec![Vec::new(); n];
        let mut preds = vec![Vec::new(); n];
        for (b, block) in f.blocks.iter().enumerate() {
            for &s in &block.succs {
                if !succs[b].contains(&s) {
                    succs[b].push(s);
                    preds[s as usize].push(b as BlockId);
                    graph.add_edge(NodeIndex::new(b), NodeIndex::new(s as usize), ());
                }
            }
        }
        let mut reachable = vec![false; n];
        let mut pre = vec![u32::MAX; n];
        let mut post = vec![u32::MAX; n];
        if n > 0 {
            let doms = simple_fast(&graph, NodeIndex::new(0));
            let mut children = vec![Vec::new(); n];
            for b in 0..n {
                if let Some(d) = doms.immediate_dominator(NodeIndex::new(b)) {
                    children[d.index()].push(b);
                }
            }
            // Iterative DFS over the dominator tree.
            let mut clock = 0u32;
            let mut stack = vec![(0usize, false)];
            while let Some((b, done)) = stack.pop() {
                if done {
                    post[b] = clock;
                    clock += 1;
                    continue;
                }
                reachable[b] = true;
                pre[b] = clock;
                clock += 1;
                stack.push((b, true));
                for &c in children[b].iter().rev() {
                    stack.push((c, false));
                }
            }
        }
        Cfg {
            preds,
            succs,
            reachable,
            pre,
            post,
        }
    }

    /// Whether block `a` dominates block `b` (both reachable).
    pub fn dominates(&self, a: BlockId, b: BlockId) -> bool {
        let (a, b) = (a as usize, b as usize);
        self.reachable[a]
            && self.reachable[b]
            && self.pre[a] <= self.pre[b]
            && self.post[b] <= self.post[a]
    }
}

/// One natural loop: the blocks that reach a back edge's source without
/// passing the header, for all back edges to the same header.
#[derive(Debug, Clone)]
pub(crate) struct NaturalLoop {
    pub header: BlockId,
    /// Sources of the back edges.
    pub latches: Vec<BlockId>,
    /// Membership by block.
    pub body: Vec<bool>,
    /// Its blocks, ascending.
    pub blocks: Vec<BlockId>,
    /// Index (in [`Loops::loops`]) of the innermost loop containing it.
    pub parent: Option<usize>,
    /// 1 for outermost.
    pub depth: u32,
}

/// The loops of one function.
#[derive(Debug, Clone, Default)]
pub(crate) struct Loops {
    /// Ordered by header block.
    pub loops: Vec<NaturalLoop>,
    /// The innermost loop of each block.
    pub innermost: Vec<Option<usize>>,
    /// Strongly connected regions that remain once back edges are
    /// removed: cycles with more than one entry, for which no loop is
    /// claimed. Blocks ascending.
    pub irreducible: Vec<Vec<BlockId>>,
}

impl Loops {
    pub fn new(cfg: &Cfg) -> Self {
        let n = cfg.succs.len();
        let mut by_header: Vec<(BlockId, Vec<BlockId>)> = Vec::new();
        let mut forward = DiGraph::<(), ()>::with_capacity(n, n * 2);
        for _ in 0..n {
            forward.add_node(());
        }
        for u in 0..n {
            if !cfg.reachable[u] {
                continue;
            }
            for &h in &cfg.succs[u] {
                if cfg.dominates(h, u as BlockId) {
                    match by_header.iter_mut().find(|(hh, _)| *hh == h) {
                        Some((_, latches)) => latches.push(u as BlockId),
                        None => by_header.push((h, vec![u as BlockId])),
                    }
                } else if cfg.reachable[h as usize] {
                    forward.add_edge(NodeIndex::new(u), NodeIndex::new(h as usize), ());
                }
            }
        }
        by_header.sort_by_key(|(h, _)| *h);

        let mut loops: Vec<NaturalLoop> = by_header
            .into_iter()
            .map(|(header, latches)| {
                let mut body = vec![false; n];
                body[header as usize] = true;
                let mut stack: Vec<BlockId> = latches.clone();
                while let Some(b) = stack.pop() {
                    if body[b as usize] {
                        continue;
                    }
                    body[b as usize] = true;
                    for &p in &cfg.preds[b as usize] {
                        if cfg.reachable[p as usize] && !body[p as usize] {
                            stack.push(p);
                        }
                    }
                }
                let blocks = (0..n as BlockId).filter(|b| body[*b as usize]).collect();
                NaturalLoop {
                    header,
                    latches,
                    body,
                    blocks,
                    parent: None,
                    depth: 1,
                }
            })
            .collect();

        // Nesting: natural loops with different headers are disjoint or
        // nested; the parent is the smallest other loop holding the header.
        for i in 0..loops.len() {
            let header = loops[i].header as usize;
            let parent = (0..loops.len())
                .filter(|&j| j != i && loops[j].body[header] && loops[j].header != loops[i].header)
                .min_by_key(|&j| loops[j].blocks.len());
            loops[i].parent = parent;
        }
        for i in 0..loops.len() {
            let mut depth = 1;
            let mut p = loops[i].parent;
            while let Some(j) = p {
                depth += 1;
                p = loops[j].parent;
                if depth as usize > loops.len() {
                    break;
                }
            }
            loops[i].depth = depth;
        }
        let innermost: Vec<Option<usize>> = (0..n)
            .map(|b| {
                (0..loops.len())
                    .filter(|&j| loops[j].body[b])
                    .max_by_key(|&j| loops[j].depth)
            })
            .collect();

        let irreducible = petgraph::algo::tarjan_scc(&forward)
            .into_iter()
            .filter(|scc| scc.len() > 1)
            .map(|scc| {
                let mut blocks: Vec<BlockId> = scc.iter().map(|x| x.index() as BlockId).collect();
                blocks.sort_unstable();
                blocks
            })
            .collect::<Vec<_>>();
        let mut irreducible = irreducible;
        irreducible.sort();

        Loops {
            loops,
            innermost,
            irreducible,
        }
    }
}
