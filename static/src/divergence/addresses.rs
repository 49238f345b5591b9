//! Two kinds of pointers the pointer analysis ([`crate::pointers`]) leaves unknown that
//! the divergence pass needs named.
//!
//! * C++ heap blocks. the pointer analysis knows the C allocators (`malloc`
//!   and friends); a pointer that came from `operator new` is unknown
//!   memory to it, so every object a C++ program allocates was one object
//!   to the divergence pass, and a rank stored in one (HPCG's
//!   `geom->rank`) made every size read from another (`geom->npx`)
//!   rank-dependent. Here the block is named by the call that allocated
//!   it, as the pointer analysis names `malloc`'s.
//! * `main`'s `argv`. `MPI_Init(&argc, &argv)` takes the variable's
//!   address, so the pointer analysis no longer follows it, and `argv[1]` read
//!   whatever any unknown pointer wrote (a file's contents, the time).
//!   `MPI_Init` hands back the command line it was given: a variable
//!   whose address goes only to it still holds the parameter, and the
//!   strings `argv[k]` points at are part of that object.
//!
//! Both follow the casts, offsets and local variables between the value
//! and its use. (They belong in the pointer analysis; they are here while
//! that function is being reworked.)

use std::collections::{BTreeSet, HashMap};

use crate::consts::LocalVars;
use crate::ir::{Callee, Function, InstId, Op, Val};
use crate::mpi;
use crate::taint::{Addr, Obj};

/// How many casts, offsets and variables are followed back.
const MAX_DEPTH: u32 = 8;

/// The local variables of `f` a value can be followed through, with the
/// values stored in each: those [`LocalVars`] finds plain, and those whose
/// address goes only to `MPI_Init` or `MPI_Init_thread` besides loads and
/// stores.
pub(super) type Followed = HashMap<InstId, Vec<Val>>;

pub(super) fn followed_vars(f: &Function, vars: &LocalVars) -> Followed {
    let mut out: Followed = vars.stores.clone();
    let mut only_init: BTreeSet<InstId> = vars.escaping.clone();
    for inst in &f.insts {
        let init = matches!(&inst.op, Op::Call(Callee::Named(n))
            if matches!(mpi::base_name(n), Some("MPI_Init" | "MPI_Init_thread")));
        for (k, v) in inst.ops.iter().enumerate() {
            let Val::Inst(a) = v else { continue };
            let kept = init || matches!((&inst.op, k), (Op::Load, 0) | (Op::Store, 1));
            let intrinsic = matches!(&inst.op, Op::Call(Callee::Named(n))
                if n.starts_with("llvm.dbg.") || n.starts_with("llvm.lifetime."));
            if !kept && !intrinsic {
                only_init.remove(a);
            }
        }
    }
    for inst in &f.insts {
        if let (Op::Store, Some(Val::Inst(a))) = (&inst.op, inst.ops.get(1)) {
            if only_init.contains(a) {
                out.entry(*a).or_default().push(inst.ops[0].clone());
            }
        }
    }
    out
}

/// Where `v` points when it comes from `operator new` or is a parameter
/// kept in a variable `followed` holds; `None` otherwise.
pub(super) fn address(f: &Function, followed: &Followed, v: &Val) -> Option<Addr> {
    walk(f, followed, v, 0)
}

fn walk(f: &Function, followed: &Followed, v: &Val, depth: u32) -> Option<Addr> {
    if depth > MAX_DEPTH {
        return None;
    }
    let i = match v {
        Val::Arg(p) if depth > 0 => {
            return Some(Addr {
                obj: Obj::Param(*p),
                offset: Some(0),
                scales: Vec::new(),
            })
        }
        Val::Inst(i) => i,
        _ => return None,
    };
    let inst = f.insts.get(*i as usize)?;
    match &inst.op {
        Op::Call(Callee::Named(n)) if crate::pointers::ALLOC.contains(&n.as_str()) => Some(Addr {
            obj: Obj::Heap(*i),
            offset: Some(0),
            scales: Vec::new(),
        }),
        Op::Cast => walk(f, followed, inst.ops.first()?, depth + 1),
        Op::Gep { offset, var } => {
            let mut base = walk(f, followed, inst.ops.first()?, depth + 1)?;
            base.offset = base.offset.map(|o| o.wrapping_add(*offset));
            base.scales.extend(var.iter().map(|(_, s)| *s));
            Some(base)
        }
        Op::Load => {
            let from = inst.ops.first()?;
            // `argv[k]` points at the command line's strings, which are
            // the program's input as `argv` is: one object with it.
            if f.name == "main" {
                if let Some(Addr {
                    obj: Obj::Param(1), ..
                }) = walk(f, followed, from, depth + 1)
                {
                    return Some(Addr {
                        obj: Obj::Param(1),
                        offset: None,
                        scales: Vec::new(),
                    });
                }
            }
            let Val::Inst(var) = from else {
                return None;
            };
            // Every value stored in the variable points into one block.
            let stores = followed.get(var)?;
            let mut found: Option<Addr> = None;
            for s in stores {
                let a = walk(f, followed, s, depth + 1)?;
                found = match found {
                    None => Some(a),
                    Some(b) if b.obj == a.obj => Some(Addr {
                        obj: b.obj,
                        offset: None,
                        scales: Vec::new(),
                    }),
                    Some(_) => return None,
                };
            }
            if stores.len() > 1 {
                found = found.map(|a| Addr {
                    offset: None,
                    scales: Vec::new(),
                    ..a
                });
            }
            found
        }
        _ => None,
    }
}
