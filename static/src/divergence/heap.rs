//! C++ heap blocks: what `new` returns is an object of its own.
//!
//! [`crate::taint::address`] knows the C allocators (`malloc` and
//! friends); a pointer that came from `operator new` is unknown memory to
//! it, so every object a C++ program allocates was one object to the
//! divergence pass, and a rank stored in one (HPCG's `geom->rank`) made
//! every size read from another (`geom->npx`) rank-dependent. This names
//! the block by the call that allocated it, through the casts, offsets and
//! plain local variables between it and the use, as `taint::address`
//! names `malloc`'s. (It belongs in `taint::address`'s list of
//! allocators; it is here while that function is being reworked.)

use crate::consts::LocalVars;
use crate::ir::{Callee, Function, Op, Val};
use crate::taint::{Addr, Obj};

/// `operator new` and `operator new[]`, plain, `nothrow` and aligned
/// (Itanium C++ ABI manglings on 64-bit targets).
const CXX_NEW: &[&str] = &[
    "_Znwm",
    "_Znam",
    "_ZnwmRKSt9nothrow_t",
    "_ZnamRKSt9nothrow_t",
    "_ZnwmSt11align_val_t",
    "_ZnamSt11align_val_t",
    "_ZnwmSt11align_val_tRKSt9nothrow_t",
    "_ZnamSt11align_val_tRKSt9nothrow_t",
];

/// How many casts, offsets and variables are followed back.
const MAX_DEPTH: u32 = 8;

/// Where `v` points when it comes from `operator new`; `None` otherwise.
pub(super) fn address(f: &Function, vars: &LocalVars, v: &Val) -> Option<Addr> {
    walk(f, vars, v, 0)
}

fn walk(f: &Function, vars: &LocalVars, v: &Val, depth: u32) -> Option<Addr> {
    let Val::Inst(i) = v else { return None };
    if depth > MAX_DEPTH {
        return None;
    }
    let inst = f.insts.get(*i as usize)?;
    match &inst.op {
        Op::Call(Callee::Named(n)) if CXX_NEW.contains(&n.as_str()) => Some(Addr {
            obj: Obj::Heap(*i),
            offset: Some(0),
            scales: Vec::new(),
        }),
        Op::Cast => walk(f, vars, inst.ops.first()?, depth + 1),
        Op::Gep { offset, var } => {
            let mut base = walk(f, vars, inst.ops.first()?, depth + 1)?;
            base.offset = base.offset.map(|o| o.wrapping_add(*offset));
            base.scales.extend(var.iter().map(|(_, s)| *s));
            Some(base)
        }
        Op::Load => {
            let Some(Val::Inst(var)) = inst.ops.first() else {
                return None;
            };
            if !vars.is_plain(f, *var) {
                return None;
            }
            // Every value stored in the variable points into one block.
            let stores = vars.stores.get(var)?;
            let mut found: Option<Addr> = None;
            for s in stores {
                let a = walk(f, vars, s, depth + 1)?;
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
