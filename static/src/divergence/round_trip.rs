//! Values the root reads and broadcasts, and the other ranks copy back
//! from the broadcast: equal on every rank where the two paths meet.
//!
//! miniAMR's `main`, and many codes like it:
//!
//! ```c
//! if (my_pe == 0) {                  /* the root parses its arguments */
//!     for (...) if (!strcmp(argv[i], "--nx")) nx = atoi(argv[++i]);
//!     params[0] = nx; ...
//!     MPI_Bcast(params, 39, MPI_INT, 0, MPI_COMM_WORLD);
//! } else {                           /* the others copy them back */
//!     MPI_Bcast(params, 39, MPI_INT, 0, MPI_COMM_WORLD);
//!     nx = params[0]; ...
//! }
//! ```
//!
//! `nx` is written on both sides of a rank-dependent branch, so the
//! implicit flow of the dependence analysis (a value stored under a
//! branch takes the branch's dependences; Huchant et al.'s gated
//! multi-valued analysis does the same at the join's `phi`) makes it
//! rank-dependent, and every later branch on a parameter looked like a
//! divergence (43 false warnings on miniAMR). Yet every rank holds the
//! same `nx` after the join: the root's own, which it put in `params[0]`
//! and sent, and the copy every other rank received.
//!
//! The rule, for a conditional branch `c` and a variable `x` (a tracked
//! cell, or a global of one scalar whose address the program only loads
//! and stores): the branch's dependences do not reach the writes of `x`
//! it decides when all of this holds:
//!
//! 1. `c` tests `rank == R` (or `!=`), `rank` what `MPI_Comm_rank` wrote
//!    for a communicator `C` that is a constant (`MPI_COMM_WORLD`), `R` a
//!    constant: one side, the root's, is taken by rank `R` alone.
//! 2. The blocks between each side's start and the join (the branch's
//!    immediate post-dominator) are apart: no rank is on both.
//! 3. On each side, an `MPI_Bcast` with root `R` on `C` is on every path to
//!    the join, is the first collective there, and runs once: the two
//!    match each other. They name the same buffer cell, count and
//!    datatype (constants), of a known extent ([`super::extents`]).
//! 4. Non-root side: a store of `buf[k]` (a load that only the broadcast's
//!    write reaches, that it dominates, inside the extent) into `x`, on
//!    every path to the join, with no write of `x` after it.
//! 5. Root side: the only write of `buf[k]` that reaches the broadcast is
//!    a store of a load of `x` on that side, with no write of `x` from the
//!    load to the join. (The drivers analyse the IR before LLVM's passes
//!    run, where `params[0] = x` is always a load and a store; optimised IR
//!    given to `analyze`, which may forward the stored value or merge it in
//!    a `phi`, keeps the branch's dependence.)
//!
//! Then, at the join, `x` on the root is what it sent in `buf[k]`, and on
//! every other rank the copy of it: equal, and its dependences are only
//! those of what the writes carry (the program's input, here). Within one
//! side, every rank took the branch the same way, so leaving the branch
//! out there hides no difference either. The rank alone does not make
//! the value equal: `if (rank == 0) x = atoi(argv[1]); else x = 0;` keeps
//! the branch's dependence, as does a root that broadcasts another value
//! than the one it keeps, or a root side that is not only the root's
//! (`if (rank != 0) { parse; pack; MPI_Bcast(..) }`, the root left with
//! what it never parsed).
//!
//! Each candidate costs walks over the function's blocks, polynomial in
//! its size; only branches of the shape of 1 with a broadcast on both
//! sides are tried.

use std::collections::{BTreeSet, HashMap, HashSet};

use crate::ir::{BlockId, Callee, InstId, IntCmp, Op, Val};
use crate::mpi;
use crate::taint::Obj;

use super::{is_collective, Cell, Flow, Program};

/// What the whole program tells the rule.
#[derive(Debug, Default)]
pub(super) struct Facts {
    /// Globals only `MPI_Comm_rank` writes, with its communicator (the
    /// same constant at every call).
    rank_globals: HashMap<String, Val>,
    /// Globals of one scalar whose address the program only loads and
    /// stores through (never passes, keeps or offsets): their every write
    /// is a `store` naming them.
    plain: HashSet<String>,
    /// Per function: the plain globals it, or a function it calls, may
    /// store to.
    writes: Vec<BTreeSet<String>>,
    /// What a call out of the program may write: the callbacks it may
    /// make are the functions whose address is taken.
    callback_writes: BTreeSet<String>,
    /// Per function: whether it, or a function it calls, may make a
    /// collective.
    collective: Vec<bool>,
}

impl Facts {
    pub(super) fn of(p: &Program<'_>) -> Facts {
        let (rank_globals, plain) = global_uses(p);
        let n = p.fns.len();
        let mut writes: Vec<BTreeSet<String>> = p
            .fns
            .iter()
            .map(|f| {
                f.insts
                    .iter()
                    .filter(|i| i.op == Op::Store)
                    .filter_map(|i| match i.ops.get(1) {
                        Some(Val::Global(g)) if plain.contains(g) => Some(g.clone()),
                        _ => None,
                    })
                    .collect()
            })
            .collect();
        let mut collective: Vec<bool> = p
            .fns
            .iter()
            .map(|f| {
                f.insts.iter().any(|i| match &i.op {
                    Op::Call(Callee::Named(name)) => is_collective(name),
                    Op::Call(_) => true,
                    _ => false,
                })
            })
            .collect();
        let mut callback_writes = BTreeSet::new();
        // Sets only grow, each round by at least one element or flag.
        for _ in 0..=n {
            let mut changed = false;
            let mut callbacks = BTreeSet::new();
            for &g in p.address_taken {
                callbacks.extend(writes[g].iter().cloned());
            }
            changed |= callbacks != callback_writes;
            callback_writes = callbacks;
            for fi in 0..n {
                let mut add = BTreeSet::new();
                let mut calls_collective = false;
                for &(_, g) in &p.calls[fi] {
                    add.extend(writes[g].iter().cloned());
                    calls_collective |= collective[g];
                }
                if p.fns[fi].insts.iter().any(|i| matches!(i.op, Op::Call(_))) {
                    add.extend(callback_writes.iter().cloned());
                }
                let before = writes[fi].len();
                writes[fi].extend(add);
                changed |= writes[fi].len() != before;
                if calls_collective && !collective[fi] {
                    collective[fi] = true;
                    changed = true;
                }
            }
            if !changed {
                break;
            }
        }
        Facts {
            rank_globals,
            plain,
            writes,
            callback_writes,
            collective,
        }
    }
}

/// The globals that hold the rank, and the plain scalar globals
/// ([`Facts`]), from every use of every global in the program.
fn global_uses(p: &Program<'_>) -> (HashMap<String, Val>, HashSet<String>) {
    // Per global: the communicators of the `MPI_Comm_rank` calls writing
    // it, and whether any other use than a load, a store to it or such a
    // call names it.
    let mut rank_of: HashMap<&str, Vec<&Val>> = HashMap::new();
    let mut stored: HashSet<&str> = HashSet::new();
    let mut escapes: HashSet<&str> = HashSet::new();
    for f in p.fns {
        for inst in &f.insts {
            let comm_rank = matches!(&inst.op, Op::Call(Callee::Named(n))
                if mpi::base_name(n) == Some("MPI_Comm_rank"));
            for (k, v) in inst.ops.iter().enumerate() {
                let Val::Global(g) = v else { continue };
                match (&inst.op, k) {
                    (Op::Load, 0) => {}
                    (Op::Store, 1) => {
                        stored.insert(g);
                    }
                    (Op::Call(_), 1) if comm_rank => {
                        rank_of.entry(g).or_default().push(&inst.ops[0]);
                    }
                    _ => {
                        escapes.insert(g);
                    }
                }
            }
        }
    }
    let rank_globals = rank_of
        .iter()
        .filter(|(g, _)| !stored.contains(*g) && !escapes.contains(*g))
        .filter_map(|(g, comms)| {
            let first = comms[0];
            let constant = !matches!(first, Val::Inst(_) | Val::Arg(_));
            (constant && comms.iter().all(|c| *c == first)).then(|| (g.to_string(), first.clone()))
        })
        .collect();
    let plain = p
        .scalar_globals
        .iter()
        .filter(|g| !escapes.contains(g.as_str()) && !rank_of.contains_key(g.as_str()))
        .cloned()
        .collect();
    (rank_globals, plain)
}

/// A conditional branch on `rank == R` and its two sides.
struct RankBranch {
    root: Val,
    comm: Val,
    /// The first block of the side only rank `R` takes, and of the other.
    root_side: BlockId,
    other_side: BlockId,
    join: BlockId,
}

/// The first `MPI_Bcast` of one side, and what it broadcasts.
#[derive(PartialEq)]
struct Bcast {
    at: InstId,
    buf: Cell,
    count: Val,
    datatype: Val,
    bytes: u64,
}

impl Flow<'_> {
    /// The pairs `(branch, cell)` for which the branch's dependences do
    /// not reach the cell's writes it decides (see the module docs).
    pub(super) fn find_round_trips(&self) -> HashSet<(BlockId, Cell)> {
        let mut out = HashSet::new();
        for c in 0..self.f.blocks.len() as BlockId {
            let Some(branch) = self.rank_branch(c) else {
                continue;
            };
            for x in self.round_tripped(&branch) {
                out.insert((c, x));
            }
        }
        out
    }

    /// Block `c`'s branch when it tests `rank == R` (condition 1).
    fn rank_branch(&self, c: BlockId) -> Option<RankBranch> {
        let f = self.f;
        let Some(Val::Inst(k)) = self.shape.cond[c as usize] else {
            return None;
        };
        let cmp = &f.insts[k as usize];
        let Op::Compare(pred @ (IntCmp::Eq | IntCmp::Ne)) = cmp.op else {
            return None;
        };
        let (comm, root) = match &cmp.ops[..] {
            [v, r @ Val::Int(_)] | [r @ Val::Int(_), v] => (self.rank_comm(v)?, r.clone()),
            _ => return None,
        };
        let succs = &f.blocks[c as usize].succs;
        let living = &self.shape.succs[c as usize];
        if succs.len() != 2 || succs[0] == succs[1] || living.len() != 2 {
            return None;
        }
        let (root_side, other_side) = match pred {
            IntCmp::Eq => (succs[0], succs[1]),
            _ => (succs[1], succs[0]),
        };
        let join = self.shape.joins[c as usize]?;
        (root_side != join && other_side != join).then_some(RankBranch {
            root,
            comm,
            root_side,
            other_side,
            join,
        })
    }

    /// The communicator whose rank `v` is, when it is one: a load of a
    /// variable only `MPI_Comm_rank` writes, on a constant communicator.
    fn rank_comm(&self, v: &Val) -> Option<Val> {
        let Val::Inst(i) = v else { return None };
        let inst = &self.f.insts[*i as usize];
        match inst.op {
            Op::Cast => return self.rank_comm(inst.ops.first()?),
            Op::Load => {}
            _ => return None,
        }
        let comm = match inst.ops.first()? {
            // A global: every write of it is `MPI_Comm_rank`'s, and one
            // in this function ran before the load (before it, the global
            // holds its initial value, the same everywhere).
            Val::Global(g) => {
                let comm = self.shared.round_trip.rank_globals.get(g)?;
                let written_before = (0..self.f.insts.len() as InstId).any(|w| {
                    self.f.callee(w).and_then(mpi::base_name) == Some("MPI_Comm_rank")
                        && self.f.insts[w as usize].ops.get(1) == Some(&Val::Global(g.clone()))
                        && self.dominates(w, *i)
                });
                written_before.then(|| comm.clone())?
            }
            _ => match self.mpi_result(v)? {
                ("MPI_Comm_rank", comm) => comm,
                _ => return None,
            },
        };
        (!matches!(comm, Val::Inst(_) | Val::Arg(_))).then_some(comm)
    }

    /// The cells that `branch` round-trips through a broadcast.
    fn round_tripped(&self, branch: &RankBranch) -> Vec<Cell> {
        let succs = &self.shape.succs;
        // Each side's blocks, the join left out.
        let side = |start: BlockId| {
            let mut blocks = reach(succs, &[start], branch.join, None);
            blocks[branch.join as usize] = false;
            blocks
        };
        let root_blocks = side(branch.root_side);
        let other_blocks = side(branch.other_side);
        // Condition 2.
        if root_blocks.iter().zip(&other_blocks).any(|(a, b)| *a && *b) {
            return Vec::new();
        }
        let Some(sent) = self.first_bcast(branch, branch.root_side, &root_blocks) else {
            return Vec::new();
        };
        let Some(received) = self.first_bcast(branch, branch.other_side, &other_blocks) else {
            return Vec::new();
        };
        if sent.buf != received.buf
            || sent.count != received.count
            || sent.datatype != received.datatype
            || sent.bytes != received.bytes
        {
            return Vec::new();
        }
        self.copied_back(branch, &received, &other_blocks)
            .into_iter()
            .filter(|(x, k)| self.sent_as_kept(branch, &sent, &root_blocks, x, *k))
            .map(|(x, _)| x)
            .collect()
    }

    /// The first collective on every path from `start` (inside `blocks`)
    /// to the join, when it is an `MPI_Bcast` from the branch's root on its
    /// communicator, run once, with a constant count and datatype and a
    /// known extent (condition 3).
    fn first_bcast(&self, branch: &RankBranch, start: BlockId, blocks: &[bool]) -> Option<Bcast> {
        let f = self.f;
        let succs = &self.shape.succs;
        let at = (0..f.insts.len() as InstId).find(|&i| {
            blocks[f.insts[i as usize].block as usize]
                && f.callee(i).and_then(mpi::base_name) == Some("MPI_Bcast")
        })?;
        let b = f.insts[at as usize].block;
        // Every path from `start` to the join passes it, and no
        // collective comes first.
        let before = reach(succs, &[start], branch.join, Some(b));
        if before[branch.join as usize] {
            return None;
        }
        let earlier = (0..f.insts.len() as InstId).filter(|&i| {
            let ib = f.insts[i as usize].block;
            (ib != b && before[ib as usize]) || (ib == b && i < at)
        });
        if earlier.into_iter().any(|i| self.may_be_collective(i)) {
            return None;
        }
        // It runs once: not reachable from itself before the join.
        let again = reach(succs, &succs[b as usize], branch.join, None);
        if again[b as usize] {
            return None;
        }
        let ops = &f.insts[at as usize].ops;
        let constant = |v: &Val| !matches!(v, Val::Inst(_) | Val::Arg(_));
        if ops.len() != 5
            || ops[3] != branch.root
            || ops[4] != branch.comm
            || !constant(&ops[1])
            || !constant(&ops[2])
        {
            return None;
        }
        let buf = Self::cell(&self.addr(&ops[0])?);
        let bytes = *self.p.extents[self.fi].get(&(at, 0))?;
        (super::tracked(&buf.obj) && buf.field.is_some()).then(|| Bcast {
            at,
            buf,
            count: ops[1].clone(),
            datatype: ops[2].clone(),
            bytes,
        })
    }

    /// Whether instruction `i` may make a collective.
    fn may_be_collective(&self, i: InstId) -> bool {
        match &self.f.insts[i as usize].op {
            Op::Call(Callee::Named(name)) => match self.shape.callee.get(&i) {
                Some(&g) => self.shared.round_trip.collective[g],
                None => is_collective(name),
            },
            Op::Call(_) => true,
            _ => false,
        }
    }

    /// The cells the non-root side sets from the broadcast buffer, with
    /// the buffer offset each comes from (condition 4).
    fn copied_back(
        &self,
        branch: &RankBranch,
        received: &Bcast,
        blocks: &[bool],
    ) -> Vec<(Cell, i64)> {
        let f = self.f;
        let (Some(start), buf_obj) = (received.buf.field, &received.buf.obj) else {
            return Vec::new();
        };
        let mut out = Vec::new();
        for (s, inst) in f.insts.iter().enumerate() {
            let s = s as InstId;
            if inst.op != Op::Store || !blocks[inst.block as usize] {
                continue;
            }
            let Some(Val::Inst(l)) = inst.ops.first() else {
                continue;
            };
            let load = &f.insts[*l as usize];
            if load.op != Op::Load {
                continue;
            }
            let Some(from) = load
                .ops
                .first()
                .and_then(|v| self.addr(v))
                .map(|a| Self::cell(&a))
            else {
                continue;
            };
            let Some(k) = from.field.filter(|_| from.obj == *buf_obj) else {
                continue;
            };
            let inside =
                k >= start && i128::from(k) < i128::from(start) + i128::from(received.bytes);
            let only_the_bcast = self.reach.seen(*l, &from).is_some_and(|d| {
                !d.is_empty()
                    && d.iter()
                        .all(|&w| self.reach.defs[w].at == Some(received.at))
            });
            if !inside || !only_the_bcast || !self.dominates(received.at, *l) {
                continue;
            }
            let Some(x) = inst
                .ops
                .get(1)
                .and_then(|v| self.addr(v))
                .map(|a| Self::cell(&a))
            else {
                continue;
            };
            if x.obj == *buf_obj || !self.eligible(&x) {
                continue;
            }
            let b = inst.block;
            let always = !reach(
                &self.shape.succs,
                &[branch.other_side],
                branch.join,
                Some(b),
            )[branch.join as usize];
            if always && !self.written_after(s, branch.join, &x) {
                out.push((x, k));
            }
        }
        out
    }

    /// Whether a round trip may be claimed for `x`: a field of a tracked
    /// object, or a plain scalar global.
    fn eligible(&self, x: &Cell) -> bool {
        match &x.obj {
            Obj::Global(g) => self.shared.round_trip.plain.contains(g),
            obj => super::tracked(obj) && x.field.is_some(),
        }
    }

    /// Whether the root sends in `buf[k]` the value `x` keeps to the join
    /// (condition 5).
    fn sent_as_kept(
        &self,
        branch: &RankBranch,
        sent: &Bcast,
        blocks: &[bool],
        x: &Cell,
        k: i64,
    ) -> bool {
        let f = self.f;
        let slot = Cell {
            obj: sent.buf.obj.clone(),
            field: Some(k),
        };
        let whole = Cell {
            field: None,
            ..slot.clone()
        };
        let Some(seen) = self.reach.seen(sent.at, &whole) else {
            return false;
        };
        let mut writes = seen
            .iter()
            .map(|&d| &self.reach.defs[d])
            .filter(|d| d.seen_by(&slot));
        let (Some(def), None) = (writes.next(), writes.next()) else {
            return false;
        };
        let Some(s) = def.at else { return false };
        let store = &f.insts[s as usize];
        if store.op != Op::Store || !blocks[store.block as usize] || def.cell != slot {
            return false;
        }
        let Some(value) = store.ops.first() else {
            return false;
        };
        // The value is what `x` held when it was loaded, and `x` keeps it.
        let Val::Inst(l) = value else { return false };
        let load = &f.insts[*l as usize];
        let loads_x = load.op == Op::Load
            && load
                .ops
                .first()
                .and_then(|v| self.addr(v))
                .map(|a| Self::cell(&a))
                .as_ref()
                == Some(x);
        loads_x && blocks[load.block as usize] && !self.written_after(*l, branch.join, x)
    }

    /// Whether an instruction after `at`, before the join, may write `x`.
    fn written_after(&self, at: InstId, join: BlockId, x: &Cell) -> bool {
        let f = self.f;
        let b = f.insts[at as usize].block;
        let later = reach(&self.shape.succs, &self.shape.succs[b as usize], join, None);
        (0..f.insts.len() as InstId)
            .filter(|&i| {
                let ib = f.insts[i as usize].block;
                ib != join && (later[ib as usize] || (ib == b && i > at))
            })
            .any(|i| self.writes_cell(i, x))
    }

    /// Whether instruction `i` may write `x`.
    fn writes_cell(&self, i: InstId, x: &Cell) -> bool {
        let inst = &self.f.insts[i as usize];
        let Obj::Global(g) = &x.obj else {
            return self
                .reach
                .writes(i, &x.obj)
                .iter()
                .any(|&d| self.reach.defs[d].seen_by(x));
        };
        // A plain global is written by the stores that name it, and by
        // the functions that do.
        let facts = &self.shared.round_trip;
        match &inst.op {
            Op::Store => inst.ops.get(1) == Some(&Val::Global(g.clone())),
            Op::Call(_) => match self.shape.callee.get(&i) {
                Some(&h) => facts.writes[h].contains(g),
                None => facts.callback_writes.contains(g),
            },
            _ => false,
        }
    }
}

/// The blocks reachable from `from` along `succs` without going through
/// `stop` (nor, when given, through `avoid`, which is marked but not
/// left); `stop` is marked when reached.
fn reach(succs: &[Vec<u32>], from: &[BlockId], stop: BlockId, avoid: Option<BlockId>) -> Vec<bool> {
    let mut seen = vec![false; succs.len()];
    let mut todo: Vec<BlockId> = from.to_vec();
    while let Some(b) = todo.pop() {
        let Some(slot) = seen.get_mut(b as usize) else {
            continue;
        };
        if *slot {
            continue;
        }
        *slot = true;
        if b == stop || Some(b) == avoid {
            continue;
        }
        todo.extend(succs[b as usize].iter().copied());
    }
    seen
}

#[cfg(test)]
mod tests {
    use super::reach;

    #[test]
    fn reach_stops_at_the_join_and_at_the_avoided_block() {
        // 0 -> 1 -> 3, 0 -> 2 -> 3, 3 -> 4
        let succs = vec![vec![1, 2], vec![3], vec![3], vec![4], vec![]];
        assert_eq!(
            reach(&succs, &[0], 3, None),
            [true, true, true, true, false]
        );
        assert_eq!(
            reach(&succs, &[1], 3, None),
            [false, true, false, true, false]
        );
        // Every path from 0 to 3 passes 1? No: 2 goes around it.
        assert!(reach(&succs, &[0], 3, Some(1))[3]);
        // From 1 alone, avoiding 1 itself: 3 is not reached.
        assert!(!reach(&succs, &[1], 3, Some(1))[3]);
    }
}
