//! Which writes a read of memory may see: reaching definitions over the
//! cells of one function's locals, heap blocks and pointer parameters.
//!
//! The divergence pass's value dependence was flow-insensitive: a read of
//! a variable saw every write to it anywhere in the function, and a read
//! of one field of a struct saw every field. A struct holding the rank
//! next to the problem size (HPCG's `params.comm_rank` and `params.nx`)
//! made every size rank-dependent, and a variable the rank once went into
//! stayed rank-dependent after `MPI_Allreduce` overwrote it. Here a cell
//! is an object and a byte offset, and a read sees only the writes that
//! reach it along some path of the control-flow graph without being
//! overwritten (the classic reaching-definitions problem, Aho, Lam, Sethi
//! and Ullman, *Compilers*, §9.2.4): one bit vector per block, iterated to
//! its fixpoint, polynomial in blocks times writes.
//!
//! A write is *strong* when it replaces the whole cell (a store to a
//! known offset, an MPI output, a callee that writes the cell on every
//! path): it kills the earlier writes of that cell. Every other write
//! (at an unknown offset, a `memcpy`, a callee that may write) is weak: it
//! kills nothing and every read of its object may see it. A read at an
//! unknown offset sees every write of its object. What a parameter's
//! pointee holds on entry (as its callers pass it) is a write of its own,
//! before the first block; locals and heap blocks hold nothing then.
//!
//! Offsets are compared by where an access starts: a read of an `int` at
//! offset 4 does not see a byte stored at offset 5 of the same struct.
//! C code that writes a struct byte by byte and reads it whole is rare;
//! `memcpy` and `memset`, the usual ways, are weak writes of the object.

use std::collections::HashMap;

use crate::cfg::Cfg;
use crate::ir::{Function, InstId};
use crate::taint::Obj;

/// One memory cell: an object and the offset an access starts at, `None`
/// when unknown (an array element at a variable index, say).
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(crate) struct Cell {
    pub obj: Obj,
    pub field: Option<i64>,
}

/// One write the analysis knows of.
#[derive(Debug, Clone)]
pub(crate) struct Def {
    /// The instruction, `None` for the value on entry.
    pub at: Option<InstId>,
    pub cell: Cell,
    pub strong: bool,
}

/// Whether a write of `def` may be what a read of `read` sees.
fn overlaps(def: &Cell, read: &Cell) -> bool {
    def.obj == read.obj && (def.field.is_none() || read.field.is_none() || def.field == read.field)
}

/// A set of writes, by index.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Bits(Vec<u64>);

impl Bits {
    fn new(n: usize) -> Self {
        Bits(vec![0; n.div_ceil(64)])
    }
    fn insert(&mut self, i: usize) {
        self.0[i / 64] |= 1 << (i % 64);
    }
    fn remove(&mut self, i: usize) {
        self.0[i / 64] &= !(1 << (i % 64));
    }
    /// Adds `other`; whether anything was new.
    fn union(&mut self, other: &Bits) -> bool {
        let mut changed = false;
        for (a, b) in self.0.iter_mut().zip(&other.0) {
            let before = *a;
            *a |= *b;
            changed |= *a != before;
        }
        changed
    }
    fn ones(&self) -> impl Iterator<Item = usize> + '_ {
        self.0.iter().enumerate().flat_map(|(w, &word)| {
            (0..64)
                .filter(move |b| word & (1 << b) != 0)
                .map(move |b| w * 64 + b)
        })
    }
}

/// The writes each read of a function may see.
#[derive(Debug, Default)]
pub(crate) struct Reaching {
    pub defs: Vec<Def>,
    /// The writes of each instruction, by object.
    by_write: HashMap<(InstId, Obj), Vec<usize>>,
    /// Per read (instruction, cell): the writes it may see.
    seen: HashMap<(InstId, Cell), Vec<usize>>,
}

impl Reaching {
    /// Solves the problem for function `f` with control-flow graph `cfg`:
    /// `writes` are the writes of its instructions (in any order; an
    /// instruction's own writes happen after its reads), `reads` the cells
    /// its instructions read. Every cell of a parameter's pointee read or
    /// written gets a write on entry.
    pub fn new(f: &Function, cfg: &Cfg, writes: Vec<Def>, reads: &[(InstId, Cell)]) -> Self {
        let mut defs: Vec<Def> = Vec::new();
        let mut entry_cells: Vec<Cell> = writes
            .iter()
            .map(|d| d.cell.clone())
            .chain(reads.iter().map(|(_, c)| c.clone()))
            .collect();
        // A local or heap block holds nothing before the function makes
        // it: only a parameter's pointee has a value on entry.
        entry_cells.retain(|c| matches!(c.obj, Obj::Param(_)));
        entry_cells.sort();
        entry_cells.dedup();
        defs.extend(entry_cells.into_iter().map(|cell| Def {
            at: None,
            cell,
            strong: false,
        }));
        let entries = defs.len();
        defs.extend(writes);
        let n = defs.len();
        // What a strong write kills: the other writes of its exact cell.
        let mut same_cell: HashMap<&Cell, Vec<usize>> = HashMap::new();
        for (k, d) in defs.iter().enumerate() {
            if d.cell.field.is_some() {
                same_cell.entry(&d.cell).or_default().push(k);
            }
        }
        let mut at_inst: HashMap<InstId, Vec<usize>> = HashMap::new();
        for (k, d) in defs.iter().enumerate().skip(entries) {
            if let Some(i) = d.at {
                at_inst.entry(i).or_default().push(k);
            }
        }
        let mut reads_at: HashMap<InstId, Vec<&Cell>> = HashMap::new();
        for (i, c) in reads {
            reads_at.entry(*i).or_default().push(c);
        }
        let apply = |set: &mut Bits, i: InstId| {
            for &k in at_inst.get(&i).into_iter().flatten() {
                if defs[k].strong {
                    for &other in &same_cell[&defs[k].cell] {
                        set.remove(other);
                    }
                }
                set.insert(k);
            }
        };
        let blocks = f.blocks.len();
        let mut outs: Vec<Bits> = vec![Bits::new(n); blocks];
        let mut ins: Vec<Bits> = vec![Bits::new(n); blocks];
        let mut entry = Bits::new(n);
        (0..entries).for_each(|k| entry.insert(k));
        let mut changed = true;
        while changed {
            changed = false;
            for b in 0..blocks {
                if !cfg.reachable[b] {
                    continue;
                }
                let mut set = if b == 0 { entry.clone() } else { Bits::new(n) };
                for p in &cfg.preds[b] {
                    set.union(&outs[*p as usize]);
                }
                ins[b] = set.clone();
                let block = &f.blocks[b];
                (block.first..block.end).for_each(|i| apply(&mut set, i));
                if set != outs[b] {
                    outs[b] = set;
                    changed = true;
                }
            }
        }
        let mut seen = HashMap::new();
        for (b, block) in f.blocks.iter().enumerate() {
            let mut set = ins[b].clone();
            for i in block.first..block.end {
                for cell in reads_at.get(&i).into_iter().flatten() {
                    let visible = set.ones().filter(|&k| overlaps(&defs[k].cell, cell));
                    seen.insert((i, (*cell).clone()), visible.collect());
                }
                apply(&mut set, i);
            }
        }
        let mut by_write: HashMap<(InstId, Obj), Vec<usize>> = HashMap::new();
        for (k, d) in defs.iter().enumerate().skip(entries) {
            if let Some(i) = d.at {
                by_write.entry((i, d.cell.obj.clone())).or_default().push(k);
            }
        }
        Reaching {
            defs,
            by_write,
            seen,
        }
    }

    /// The writes instruction `at` makes to `obj`.
    pub fn writes(&self, at: InstId, obj: &Obj) -> &[usize] {
        self.by_write
            .get(&(at, obj.clone()))
            .map_or(&[], Vec::as_slice)
    }

    /// The writes a read of `cell` at `at` may see; `None` for a read the
    /// problem was not told of.
    pub fn seen(&self, at: InstId, cell: &Cell) -> Option<&[usize]> {
        self.seen.get(&(at, cell.clone())).map(Vec::as_slice)
    }
}
