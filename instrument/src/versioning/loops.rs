//! The natural loops of a function's control-flow graph, nested: the
//! dominators by Cooper, Harvey and Kennedy's iterative algorithm ("A
//! Simple, Fast Dominance Algorithm", 2001) over the reverse postorder,
//! a loop per header that dominates the source of an edge into it.

use std::collections::{HashMap, HashSet};

use inkwell::values::FunctionValue;
use llvm_sys::core::{
    LLVMGetBasicBlockTerminator, LLVMGetFirstInstruction, LLVMGetNextInstruction,
    LLVMGetNumSuccessors, LLVMGetSuccessor,
};
use llvm_sys::prelude::{LLVMBasicBlockRef, LLVMValueRef};

/// One natural loop.
pub(crate) struct Loop {
    pub header: LLVMBasicBlockRef,
    /// Its blocks, header first, then in the function's order.
    pub blocks: Vec<LLVMBasicBlockRef>,
    /// The blocks outside it that branch to its header.
    pub entries: Vec<LLVMBasicBlockRef>,
    /// The blocks outside it that a block of it branches to.
    exits: Vec<LLVMBasicBlockRef>,
}

impl Loop {
    /// Every instruction of the loop, block by block.
    pub fn instructions(&self) -> impl Iterator<Item = LLVMValueRef> + '_ {
        self.blocks.iter().flat_map(|&block| {
            // SAFETY: the blocks are live; each instruction's successor is
            // read while it is live.
            let first = unsafe { LLVMGetFirstInstruction(block) };
            std::iter::successors((!first.is_null()).then_some(first), |&inst| {
                let next = unsafe { LLVMGetNextInstruction(inst) };
                (!next.is_null()).then_some(next)
            })
        })
    }

    /// The blocks the loop exits to.
    pub fn exits(&self) -> &[LLVMBasicBlockRef] {
        &self.exits
    }

    /// A function's whole body after its entry block `entry` (which only
    /// branches to `body`), as one region entered from `entry` at `body`
    /// and left only by returning.
    pub fn whole_body(function: FunctionValue<'_>, entry: LLVMBasicBlockRef) -> Loop {
        let blocks: Vec<LLVMBasicBlockRef> = function
            .get_basic_blocks()
            .iter()
            .map(|b| b.as_mut_ptr())
            .filter(|&b| b != entry)
            .collect();
        Loop {
            header: blocks[0],
            blocks,
            entries: vec![entry],
            exits: Vec::new(),
        }
    }
}

/// The loops of a function and how they nest.
pub(crate) struct Forest {
    pub loops: Vec<Loop>,
    /// The innermost loop strictly containing each loop.
    parent: Vec<Option<usize>>,
}

impl Forest {
    /// The loops no other loop contains.
    pub fn outermost(&self) -> Vec<usize> {
        (0..self.loops.len())
            .filter(|&i| self.parent[i].is_none())
            .collect()
    }

    /// The loops directly inside loop `index`.
    pub fn children(&self, index: usize) -> Vec<usize> {
        (0..self.loops.len())
            .filter(|&i| self.parent[i] == Some(index))
            .collect()
    }
}

/// The graph of `function`'s blocks reachable from its entry.
struct Graph {
    blocks: Vec<LLVMBasicBlockRef>,
    succs: Vec<Vec<usize>>,
    preds: Vec<Vec<usize>>,
    /// The reverse postorder from the entry (reachable blocks only).
    rpo: Vec<usize>,
}

impl Graph {
    fn of(function: FunctionValue<'_>) -> Graph {
        let blocks: Vec<LLVMBasicBlockRef> = function
            .get_basic_blocks()
            .iter()
            .map(|b| b.as_mut_ptr())
            .collect();
        let index: HashMap<LLVMBasicBlockRef, usize> =
            blocks.iter().enumerate().map(|(i, &b)| (b, i)).collect();
        let mut succs = vec![Vec::new(); blocks.len()];
        let mut preds = vec![Vec::new(); blocks.len()];
        for (i, &block) in blocks.iter().enumerate() {
            // SAFETY: a live block; its terminator (if any) is live and
            // its successors are blocks of the same function.
            unsafe {
                let term = LLVMGetBasicBlockTerminator(block);
                if term.is_null() {
                    continue;
                }
                for k in 0..LLVMGetNumSuccessors(term) {
                    let to = index[&LLVMGetSuccessor(term, k)];
                    if !succs[i].contains(&to) {
                        succs[i].push(to);
                        preds[to].push(i);
                    }
                }
            }
        }
        let rpo = reverse_postorder(&succs);
        Graph {
            blocks,
            succs,
            preds,
            rpo,
        }
    }

    /// The immediate dominator of each reachable block (the entry's is
    /// itself; `usize::MAX` for unreachable blocks).
    fn idoms(&self) -> Vec<usize> {
        let mut order = vec![usize::MAX; self.blocks.len()];
        for (k, &b) in self.rpo.iter().enumerate() {
            order[b] = k;
        }
        let mut idom = vec![usize::MAX; self.blocks.len()];
        let Some(&entry) = self.rpo.first() else {
            return idom;
        };
        idom[entry] = entry;
        let intersect = |idom: &[usize], mut a: usize, mut b: usize| {
            while a != b {
                while order[a] > order[b] {
                    a = idom[a];
                }
                while order[b] > order[a] {
                    b = idom[b];
                }
            }
            a
        };
        let mut changed = true;
        while changed {
            changed = false;
            for &b in &self.rpo[1..] {
                let mut new = usize::MAX;
                for &p in &self.preds[b] {
                    if idom[p] == usize::MAX {
                        continue;
                    }
                    new = if new == usize::MAX {
                        p
                    } else {
                        intersect(&idom, p, new)
                    };
                }
                if new != idom[b] {
                    idom[b] = new;
                    changed = true;
                }
            }
        }
        idom
    }
}

/// The reverse postorder of the blocks reachable from block 0.
fn reverse_postorder(succs: &[Vec<usize>]) -> Vec<usize> {
    let mut seen = vec![false; succs.len()];
    let mut post = Vec::new();
    if succs.is_empty() {
        return post;
    }
    let mut stack = vec![(0usize, 0usize)];
    seen[0] = true;
    while let Some(&mut (b, ref mut next)) = stack.last_mut() {
        if let Some(&s) = succs[b].get(*next) {
            *next += 1;
            if !seen[s] {
                seen[s] = true;
                stack.push((s, 0));
            }
        } else {
            post.push(b);
            stack.pop();
        }
    }
    post.reverse();
    post
}

/// Whether `a` dominates `b` (both reachable).
fn dominates(idom: &[usize], a: usize, mut b: usize) -> bool {
    loop {
        if a == b {
            return true;
        }
        let up = idom[b];
        if up == b || up == usize::MAX {
            return false;
        }
        b = up;
    }
}

/// The natural loops of `function`, one per header.
pub(crate) fn find(function: FunctionValue<'_>) -> Forest {
    let graph = Graph::of(function);
    let idom = graph.idoms();
    let mut bodies: Vec<(usize, HashSet<usize>)> = Vec::new();
    for &header in &graph.rpo {
        let latches: Vec<usize> = graph.preds[header]
            .iter()
            .copied()
            .filter(|&p| idom[p] != usize::MAX && dominates(&idom, header, p))
            .collect();
        if latches.is_empty() {
            continue;
        }
        let mut body: HashSet<usize> = HashSet::from([header]);
        let mut work = latches;
        while let Some(b) = work.pop() {
            if body.insert(b) {
                work.extend(
                    graph.preds[b]
                        .iter()
                        .copied()
                        .filter(|&p| idom[p] != usize::MAX),
                );
            }
        }
        bodies.push((header, body));
    }
    let parent = nesting(&bodies);
    let loops = bodies
        .iter()
        .map(|(header, body)| to_loop(&graph, *header, body))
        .collect();
    Forest { loops, parent }
}

/// The innermost loop strictly containing each loop: the smallest other
/// body holding its header (natural loops with distinct headers nest or
/// are disjoint).
fn nesting(bodies: &[(usize, HashSet<usize>)]) -> Vec<Option<usize>> {
    bodies
        .iter()
        .enumerate()
        .map(|(i, (header, body))| {
            bodies
                .iter()
                .enumerate()
                .filter(|&(j, (_, other))| {
                    j != i && other.len() > body.len() && other.contains(header)
                })
                .min_by_key(|(_, (_, other))| other.len())
                .map(|(j, _)| j)
        })
        .collect()
}

fn to_loop(graph: &Graph, header: usize, body: &HashSet<usize>) -> Loop {
    let mut blocks = vec![graph.blocks[header]];
    blocks.extend(
        (0..graph.blocks.len())
            .filter(|b| *b != header && body.contains(b))
            .map(|b| graph.blocks[b]),
    );
    let entries = graph.preds[header]
        .iter()
        .filter(|p| !body.contains(p))
        .map(|&p| graph.blocks[p])
        .collect();
    let mut exits: Vec<LLVMBasicBlockRef> = Vec::new();
    for &b in body {
        for &s in &graph.succs[b] {
            if !body.contains(&s) && !exits.contains(&graph.blocks[s]) {
                exits.push(graph.blocks[s]);
            }
        }
    }
    Loop {
        header: graph.blocks[header],
        blocks,
        entries,
        exits,
    }
}
