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
//! A write covers a range of its object: one variable or field, a number
//! of bytes (an MPI buffer of a constant count, a `memcpy` of a constant
//! length), everything from its offset on, or the whole object (at an
//! unknown offset). A write is *strong* when it replaces what it covers (a
//! store, an MPI output, a callee that writes the field on every path): it
//! kills the earlier writes it covers entirely. Every other write (a
//! `scanf` that may not parse, a callee that may write) is weak: it kills
//! nothing. A read at an unknown offset sees every write of its object.
//! What a parameter's pointee holds on entry (as its callers pass it) is a
//! write of its own, before the first block; locals and heap blocks hold
//! nothing then.
//!
//! A store and a load are compared by where they start: a read of an
//! `int` at offset 4 does not see a byte stored at offset 5 of the same
//! struct. C code that writes a struct byte by byte and reads it whole is
//! rare; `memcpy` and `memset`, the usual ways, cover their bytes.

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
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Def {
    /// The instruction, `None` for the value on entry.
    pub at: Option<InstId>,
    /// The object, and the offset the write starts at.
    pub cell: Cell,
    /// How many bytes from there it covers, for a known offset: `Some(1)`
    /// for one variable or field (reads compare where they start), `None`
    /// for everything from there to the object's end.
    pub len: Option<u64>,
    pub strong: bool,
}

impl Def {
    /// Whether the write covers offset `at` of its object.
    fn covers(&self, at: i64) -> bool {
        let Some(start) = self.cell.field else {
            return true;
        };
        // In i128: offsets come from the program's constants, whatever
        // they are.
        let from_start = i128::from(at) - i128::from(start);
        match self.len {
            Some(n) => from_start >= 0 && from_start < i128::from(n),
            None => from_start >= 0,
        }
    }

    /// Whether a read of `read` may see this write.
    pub(super) fn seen_by(&self, read: &Cell) -> bool {
        self.cell.obj == read.obj && read.field.is_none_or(|f| self.covers(f))
    }

    /// Whether this (strong) write replaces all of what `other` wrote.
    fn replaces(&self, other: &Def) -> bool {
        let (Some(start), Some(n)) = (self.cell.field, self.len) else {
            return false;
        };
        let (Some(b), Some(m)) = (other.cell.field, other.len) else {
            return false;
        };
        let from_start = i128::from(b) - i128::from(start);
        self.cell.obj == other.cell.obj
            && from_start >= 0
            && from_start + i128::from(m) <= i128::from(n)
    }
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
        let mut defs = entry_writes(&writes, reads);
        let entries = defs.len();
        defs.extend(writes);
        let transfer = Transfer::of(&defs, entries);
        let ins = transfer.block_ins(f, cfg, defs.len(), entries);
        let mut reads_at: HashMap<InstId, Vec<&Cell>> = HashMap::new();
        for (i, c) in reads {
            reads_at.entry(*i).or_default().push(c);
        }
        let mut seen = HashMap::new();
        for (b, block) in f.blocks.iter().enumerate() {
            let mut set = ins[b].clone();
            for i in block.first..block.end {
                for cell in reads_at.get(&i).into_iter().flatten() {
                    let visible = set.ones().filter(|&k| defs[k].seen_by(cell));
                    seen.insert((i, (*cell).clone()), visible.collect());
                }
                transfer.apply(&mut set, i);
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

/// The writes on entry: one per cell of a parameter's pointee that
/// `writes` write or `reads` read.
fn entry_writes(writes: &[Def], reads: &[(InstId, Cell)]) -> Vec<Def> {
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
    entry_cells
        .into_iter()
        .map(|cell| Def {
            at: None,
            len: cell.field.map(|_| 1),
            cell,
            strong: false,
        })
        .collect()
}

/// What each instruction does to the set of writes that reach it.
struct Transfer {
    /// The writes each instruction makes (indices into the defs).
    at_inst: HashMap<InstId, Vec<usize>>,
    /// What each strong write kills: the writes of its object it covers.
    kills: Vec<Vec<usize>>,
}

impl Transfer {
    /// The transfer of `defs`, whose first `entries` are the writes on
    /// entry.
    fn of(defs: &[Def], entries: usize) -> Transfer {
        let mut of_obj: HashMap<&Obj, Vec<usize>> = HashMap::new();
        for (k, d) in defs.iter().enumerate() {
            of_obj.entry(&d.cell.obj).or_default().push(k);
        }
        let kills: Vec<Vec<usize>> = defs
            .iter()
            .map(|d| match d.strong {
                true => of_obj[&d.cell.obj]
                    .iter()
                    .copied()
                    .filter(|&o| d.replaces(&defs[o]))
                    .collect(),
                false => Vec::new(),
            })
            .collect();
        let mut at_inst: HashMap<InstId, Vec<usize>> = HashMap::new();
        for (k, d) in defs.iter().enumerate().skip(entries) {
            if let Some(i) = d.at {
                at_inst.entry(i).or_default().push(k);
            }
        }
        Transfer { at_inst, kills }
    }

    /// Instruction `i`'s writes: each kills what it covers, then reaches.
    fn apply(&self, set: &mut Bits, i: InstId) {
        for &k in self.at_inst.get(&i).into_iter().flatten() {
            for &other in &self.kills[k] {
                set.remove(other);
            }
            set.insert(k);
        }
    }

    /// The writes (of `n`, the first `entries` on entry) that reach the
    /// start of each block of `f`: the fixpoint over `cfg`.
    fn block_ins(&self, f: &Function, cfg: &Cfg, n: usize, entries: usize) -> Vec<Bits> {
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
                (block.first..block.end).for_each(|i| self.apply(&mut set, i));
                if set != outs[b] {
                    outs[b] = set;
                    changed = true;
                }
            }
        }
        ins
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn def(field: Option<i64>, len: Option<u64>, strong: bool) -> Def {
        Def {
            at: Some(0),
            cell: Cell {
                obj: Obj::Local(1),
                field,
            },
            len,
            strong,
        }
    }

    fn read(field: Option<i64>) -> Cell {
        Cell {
            obj: Obj::Local(1),
            field,
        }
    }

    #[test]
    fn a_field_is_seen_by_reads_that_start_there() {
        let store = def(Some(8), Some(1), true);
        assert!(store.seen_by(&read(Some(8))));
        assert!(!store.seen_by(&read(Some(4))));
        assert!(!store.seen_by(&read(Some(9))));
        assert!(store.seen_by(&read(None)), "a read anywhere in the object");
        let other = Cell {
            obj: Obj::Local(2),
            field: Some(8),
        };
        assert!(!store.seen_by(&other));
    }

    #[test]
    fn a_measured_buffer_covers_its_bytes_and_an_open_one_the_rest() {
        // `MPI_Bcast(&a[1], 3, MPI_INT, ..)`: bytes 4 to 15.
        let bcast = def(Some(4), Some(12), true);
        assert!(!bcast.seen_by(&read(Some(0))));
        assert!(bcast.seen_by(&read(Some(4))));
        assert!(bcast.seen_by(&read(Some(12))));
        assert!(!bcast.seen_by(&read(Some(16))));
        let open = def(Some(4), None, false);
        assert!(open.seen_by(&read(Some(400))));
        assert!(!open.seen_by(&read(Some(0))));
        let whole = def(None, None, false);
        assert!(whole.seen_by(&read(Some(-8))));
    }

    #[test]
    fn a_strong_write_replaces_only_what_lies_inside_it() {
        let bcast = def(Some(0), Some(52), true);
        assert!(bcast.replaces(&def(Some(16), Some(1), true)));
        assert!(bcast.replaces(&def(Some(0), Some(52), true)));
        assert!(
            !bcast.replaces(&def(Some(48), Some(8), true)),
            "runs past it"
        );
        assert!(!bcast.replaces(&def(Some(4), None, false)), "to the end");
        assert!(!bcast.replaces(&def(None, None, false)), "anywhere");
        assert!(!def(Some(0), None, true).replaces(&def(Some(0), Some(1), true)));
        // Offsets far apart do not overflow.
        assert!(!def(Some(i64::MIN), Some(u64::MAX), true).replaces(&def(
            Some(i64::MAX),
            Some(u64::MAX),
            true
        )));
    }
}
