//! Buffer arguments checked against their datatype and their object's
//! size.
//!
//! For each buffer argument of a point-to-point call or a collective
//! ([`MpiFunction::buffers`]), the buffer pointer is followed back through
//! casts, constant and variable `getelementptr`s and loads of pointer
//! variables to the object it points into: a local variable (an `alloca`
//! that `llvm.dbg.declare` describes), a global, or what a pointer
//! variable points to (its debug type's pointee). Two things are checked:
//!
//! * **type**: the datatype is one predefined datatype
//!   ([`MpiConstants::datatype`]) and the object's element type (through
//!   typedefs, qualifiers and array dimensions) is a basic C type that
//!   clearly disagrees with it: an integer against a floating-point
//!   datatype or the other way round, or a different size (`int` with
//!   `MPI_DOUBLE`, `long` with `MPI_INT`);
//! * **overflow**: the count is a constant, the datatype predefined, and
//!   the object's size is known (a local or global array or scalar, or a
//!   `malloc`/`calloc` of constant size held by a pointer variable stored
//!   to exactly once): `offset + count * size(datatype)` bytes reach past
//!   its end.
//!
//! # What stays silent, and why
//!
//! Every doubt is silence, because a false alarm on correct code costs the
//! user more than a missed bug costs here (the runtime still checks what
//! actually happens):
//!
//! * `MPI_BYTE` and `MPI_PACKED` (any object may be viewed as bytes; only
//!   the overflow check applies), derived datatypes and datatypes that do
//!   not resolve to one constant;
//! * signedness (`unsigned` with `MPI_INT`), and objects of character
//!   type (`char buf[N]`, `char *p`) with any datatype: C uses them as raw
//!   storage as often as for text;
//! * objects that are structures or unions, or whose element is a pointer
//!   (the layout is the derived datatype's business);
//! * pointers held in `void *` variables or parameters, pointers loaded
//!   from memory other than a named pointer variable, `phi`/`select` of
//!   pointers, `MPI_IN_PLACE`, `MPI_BOTTOM`, `NULL` and other integers;
//! * `_Complex` objects sent as pairs of their real type (`double
//!   _Complex` with `MPI_DOUBLE` and twice the count, a common idiom);
//! * the root-only buffers of `MPI_Reduce`'s and `MPI_Gather`'s receive
//!   and `MPI_Scatter`'s send (and their `v` and nonblocking forms): other
//!   ranks may pass any placeholder, and which rank runs the call is not
//!   known statically;
//! * a type mismatch is not also reported as an overflow.
//!
//! For `MPI_Allgather`, `MPI_Alltoall` and the like the count is per rank,
//! so the check is a lower bound (one rank's share must fit); counts given
//! as arrays (the `v` and `w` forms) are not checked. A constant offset
//! into a global (`&table[10]`) is folded away by the IR reader, so such a
//! buffer is taken from the object's start (an overflow may be missed,
//! never invented).

use std::collections::HashMap;

use mbh_trace::static_report::BufferErrorKind;

use crate::consts::{self, Datatype, DatatypeClass, LocalVars, MpiConstants};
use crate::dwarf::{CType, ScalarKind};
use crate::ir::{Callee, Function, InstId, Loc, Op, Val, VarInfo};
use crate::mpi::{self, BufferArgs, MpiFunction, Role};
use mbh_trace::static_report::BufferAccess;

/// One buffer argument proven wrong, before its call's span is known.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Finding {
    pub kind: BufferErrorKind,
    /// `send buffer`, `receive buffer`, `buffer`.
    pub argument: &'static str,
    pub object: String,
    pub declared: Option<Loc>,
    pub datatype: String,
    pub message: String,
}

/// What a buffer pointer points into.
#[derive(Debug)]
struct Target<'a> {
    /// The variable named in reports: the object itself, or the pointer
    /// variable the buffer was loaded from.
    var: &'a VarInfo,
    /// The type of the object's elements.
    element: &'a CType,
    /// The object's size in bytes, when known.
    bytes: Option<u64>,
    /// The buffer's byte offset into the object, when constant.
    offset: Option<i64>,
    /// Reached through a pointer variable (`p` points to ...).
    through_pointer: bool,
}

/// The room a buffer has in its object, at a call whose datatype or count
/// the analysis cannot check: the runtime checks it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Room {
    pub access: BufferAccess,
    pub object: String,
    pub declared: Option<Loc>,
    /// Bytes from the buffer's address to the object's end.
    pub bytes: u64,
}

/// What the check learned about one buffer argument.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Fact {
    /// Proven wrong.
    Error(Finding),
    /// Not decidable here; its room, for the runtime.
    Room(Room),
}

/// The facts of MPI call `call` (instruction `inst` of `f`, calling
/// `name`), whose module's globals are `globals`.
pub(crate) fn check(
    program: &dyn consts::Program,
    f: &Function,
    vars: &LocalVars,
    globals: &HashMap<String, VarInfo>,
    consts: &MpiConstants,
    (inst, name, func): (InstId, &str, &MpiFunction),
) -> Vec<Fact> {
    let args = &f.insts[inst as usize].ops;
    let mut out = Vec::new();
    for b in func.buffers() {
        if root_only(name, b.role) {
            continue;
        }
        let Some(target) = args.get(b.buffer).and_then(|v| trace(f, vars, globals, v)) else {
            continue;
        };
        let Some(dt) = args
            .get(b.datatype)
            .map(|v| consts::resolve(program, f, vars, v))
            .and_then(|r| r.single().and_then(|c| consts.datatype(c)).cloned())
        else {
            out.extend(room(b, &target).map(Fact::Room));
            continue;
        };
        if let Some(message) = type_mismatch(&target, &dt) {
            out.push(Fact::Error(finding(
                BufferErrorKind::Type,
                b,
                &target,
                &dt,
                message,
            )));
            continue;
        }
        let count = b
            .count
            .and_then(|k| args.get(k))
            .map(|v| consts::resolve(program, f, vars, v));
        match count.as_ref().and_then(|c| c.single()) {
            Some(consts::ConstValue::Int(count)) => {
                if let Some(message) = overflow(&target, &dt, *count) {
                    out.push(Fact::Error(finding(
                        BufferErrorKind::Overflow,
                        b,
                        &target,
                        &dt,
                        message,
                    )));
                }
            }
            // A count known only at run time: the runtime checks it.
            _ if b.count.is_some() => out.extend(room(b, &target).map(Fact::Room)),
            _ => {}
        }
    }
    out
}

/// The room of buffer `b` in `target`, when the object's size and the
/// buffer's offset in it are known.
fn room(b: BufferArgs, target: &Target<'_>) -> Option<Room> {
    let offset = u64::try_from(target.offset?).ok()?;
    Some(Room {
        access: match b.role {
            Role::SendBuf => BufferAccess::Read,
            Role::RecvBuf => BufferAccess::Write,
            _ => BufferAccess::ReadWrite,
        },
        object: target.var.name.clone(),
        declared: target.var.decl,
        bytes: target.bytes?.checked_sub(offset)?,
    })
}

fn finding(
    kind: BufferErrorKind,
    b: BufferArgs,
    target: &Target<'_>,
    dt: &Datatype,
    message: String,
) -> Finding {
    Finding {
        kind,
        argument: match b.role {
            Role::SendBuf => "send buffer",
            Role::RecvBuf => "receive buffer",
            _ => "buffer",
        },
        object: target.var.name.clone(),
        declared: target.var.decl,
        datatype: dt.name.clone(),
        message,
    }
}

/// Whether argument `role` of `name` matters only at the root, so that
/// other ranks may pass anything.
fn root_only(name: &str, role: Role) -> bool {
    let Some(base) = mpi::base_name(name) else {
        return false;
    };
    let short = &base["MPI_".len()..];
    let short = short
        .strip_prefix('I')
        .unwrap_or(short)
        .to_ascii_lowercase();
    match role {
        Role::RecvBuf => matches!(short.as_str(), "reduce" | "gather" | "gatherv"),
        Role::SendBuf => matches!(short.as_str(), "scatter" | "scatterv"),
        _ => false,
    }
}

/// How deep [`trace`] follows casts and offsets.
const MAX_DEPTH: u32 = 16;

/// The object `value` points into, if known.
fn trace<'a>(
    f: &'a Function,
    vars: &LocalVars,
    globals: &'a HashMap<String, VarInfo>,
    value: &Val,
) -> Option<Target<'a>> {
    let mut value = value.clone();
    let mut offset = Some(0i64);
    for _ in 0..MAX_DEPTH {
        match &value {
            Val::Global(g) => return Some(object(globals.get(g)?, offset)),
            Val::Inst(i) => {
                let inst = &f.insts[*i as usize];
                match &inst.op {
                    Op::Alloca(_) => return Some(object(f.vars.get(i)?, offset)),
                    Op::Cast => value = inst.ops.first()?.clone(),
                    Op::Gep { offset: o, var } => {
                        offset = offset
                            .and_then(|x| x.checked_add(*o))
                            .filter(|_| var.is_empty());
                        value = inst.ops.first()?.clone();
                    }
                    Op::Load => return pointee(f, vars, globals, inst.ops.first()?, offset),
                    _ => return None,
                }
            }
            _ => return None,
        }
    }
    None
}

/// A variable as the buffer's object.
fn object(var: &VarInfo, offset: Option<i64>) -> Target<'_> {
    Target {
        var,
        element: var.ty.element(),
        bytes: var.ty.bytes(),
        offset,
        through_pointer: false,
    }
}

/// What pointer variable `address` (an `alloca` or a global) points to,
/// when its debug type is a pointer to a known type.
fn pointee<'a>(
    f: &'a Function,
    vars: &LocalVars,
    globals: &'a HashMap<String, VarInfo>,
    address: &Val,
    offset: Option<i64>,
) -> Option<Target<'a>> {
    let (var, bytes) = match address {
        Val::Inst(a) if matches!(f.insts[*a as usize].op, Op::Alloca(_)) => {
            (f.vars.get(a)?, heap_bytes(f, vars, *a))
        }
        Val::Global(g) => (globals.get(g)?, None),
        _ => return None,
    };
    let CType::Pointer(Some(pointee)) = &var.ty else {
        return None;
    };
    Some(Target {
        var,
        element: pointee.element(),
        bytes,
        offset,
        through_pointer: true,
    })
}

/// The size of the block pointer variable `a` holds, when it is stored to
/// exactly once, with a `malloc` or `calloc` of constant size.
fn heap_bytes(f: &Function, vars: &LocalVars, a: InstId) -> Option<u64> {
    if !vars.is_plain(f, a) {
        return None;
    }
    let [stored] = vars.stores.get(&a)?.as_slice() else {
        return None;
    };
    let mut value = stored.clone();
    for _ in 0..MAX_DEPTH {
        let Val::Inst(i) = &value else {
            return None;
        };
        let inst = &f.insts[*i as usize];
        match &inst.op {
            Op::Cast => value = inst.ops.first()?.clone(),
            Op::Call(Callee::Named(name)) => {
                let size = |k: usize| match inst.ops.get(k) {
                    Some(Val::Int(n)) if *n >= 0 => Some(*n as u64),
                    _ => None,
                };
                return match name.as_str() {
                    "malloc" => size(0),
                    "calloc" => size(0)?.checked_mul(size(1)?),
                    _ => None,
                };
            }
            _ => return None,
        }
    }
    None
}

/// The message when the object's element type clearly is not the
/// datatype's.
fn type_mismatch(target: &Target<'_>, dt: &Datatype) -> Option<String> {
    let CType::Scalar(scalar) = target.element else {
        return None;
    };
    // Character arrays and `char *` are C's raw storage as much as text,
    // and the character datatypes are byte views as often as `MPI_BYTE`
    // (a struct or an int array sent as `n * sizeof` `MPI_CHAR`s).
    if scalar.kind == ScalarKind::Char || dt.class == DatatypeClass::Char {
        return None;
    }
    // Integers, characters and booleans are one family: only their size
    // tells them apart safely (`int8_t` is a `signed char`).
    let family = |kind: ScalarKind| match kind {
        ScalarKind::Integer | ScalarKind::Char | ScalarKind::Bool => Some(0u8),
        ScalarKind::Float => Some(1),
        ScalarKind::Complex => Some(2),
        ScalarKind::Other => None,
    };
    let dt_family = match dt.class {
        DatatypeClass::Integer | DatatypeClass::Char | DatatypeClass::Bool => 0,
        DatatypeClass::Float => 1,
        DatatypeClass::Complex => 2,
        DatatypeClass::Untyped => return None,
    };
    let c_family = family(scalar.kind)?;
    if c_family == dt_family && scalar.size == dt.size {
        return None;
    }
    // A complex number sent as its two parts.
    if c_family == 2 && dt_family == 1 && scalar.size == 2 * dt.size {
        return None;
    }
    // Of one size, the class is what differs: say it.
    let classes = |family: u8| match family {
        0 => ", integer",
        1 => ", floating point",
        _ => ", complex",
    };
    let (c_class, dt_class) = if scalar.size == dt.size {
        (classes(c_family), classes(dt_family))
    } else {
        ("", "")
    };
    let array = !target.through_pointer && matches!(target.var.ty, CType::Array { .. });
    let c_size = format!(
        "{} bytes{}{c_class}",
        scalar.size,
        if array { " each" } else { "" }
    );
    let what = if target.through_pointer {
        format!("points to {}", a_type(&scalar.name, &c_size))
    } else if array {
        format!("is an array of `{}` ({c_size})", scalar.name)
    } else {
        format!("is {}", a_type(&scalar.name, &c_size))
    };
    Some(format!(
        "`{}` {what} but the datatype is `{}` ({} byte{}{dt_class})",
        target.var.name,
        dt.name,
        dt.size,
        if dt.size == 1 { "" } else { "s" }
    ))
}

/// "an `int` (4 bytes)", with `detail` in the parentheses.
fn a_type(name: &str, detail: &str) -> String {
    let article = match name.chars().next() {
        Some('a' | 'e' | 'i' | 'o' | 'u') => "an",
        _ => "a",
    };
    format!("{article} `{name}` ({detail})")
}

/// The message when `count` elements of `dt` reach past the object's end.
fn overflow(target: &Target<'_>, dt: &Datatype, count: i64) -> Option<String> {
    let bytes = target.bytes?;
    let offset = u64::try_from(target.offset?).ok()?;
    let need = u64::try_from(count).ok()?.checked_mul(dt.size)?;
    if offset.checked_add(need)? <= bytes {
        return None;
    }
    let holds = if target.through_pointer {
        format!("`{}` points to {bytes} bytes", target.var.name)
    } else {
        format!("`{}` holds {bytes} bytes", target.var.name)
    };
    let start = if offset > 0 {
        format!(" and the buffer starts {offset} bytes in,")
    } else {
        String::new()
    };
    let (elements, need_word) = if count == 1 {
        ("element", "needs")
    } else {
        ("elements", "need")
    };
    Some(format!(
        "{holds}{start} but {count} {elements} of `{}` {need_word} {need}",
        dt.name
    ))
}
