//! The installed MPI's constants, and resolving call arguments to them.

use std::collections::{BTreeSet, HashMap, HashSet};

use llvm_sys::core::{LLVMGetInitializer, LLVMGetNamedGlobal};

use crate::ir::{self, Function, InstId, Op, Val};
use crate::Module;

/// A constant as it appears in IR: an integer (MPICH's handles and every
/// implementation's `MPI_ANY_SOURCE`), the address of a global (Open MPI's
/// handles), or null.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ConstValue {
    /// An integer, or an integer cast to a pointer.
    Int(i64),
    /// The address of a global variable or function.
    Global(String),
    /// The null pointer.
    Null,
}

impl ConstValue {
    /// The constant as an instruction operand would be read.
    pub(crate) fn operand(&self) -> Val {
        match self {
            ConstValue::Int(i) => Val::Int(*i),
            ConstValue::Global(g) => Val::Global(g.clone()),
            ConstValue::Null => Val::Null,
        }
    }
}

impl std::fmt::Display for ConstValue {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ConstValue::Int(i) => write!(f, "{i}"),
            ConstValue::Global(g) => write!(f, "&{g}"),
            ConstValue::Null => write!(f, "NULL"),
        }
    }
}

/// The installed MPI's constants the analysis compares arguments with.
///
/// They are read from the IR of [`MpiConstants::PROBE_C`] compiled with the
/// installed `mpi.h` ([`MpiConstants::from_probe`]), never hard-coded:
/// `MPI_ANY_SOURCE` is -2 in MPICH and -1 in Open MPI.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MpiConstants {
    /// `MPI_ANY_SOURCE`.
    pub any_source: ConstValue,
    /// `MPI_ANY_TAG`.
    pub any_tag: ConstValue,
    /// `MPI_PROC_NULL`.
    pub proc_null: ConstValue,
    /// `MPI_UNDEFINED`: the index `MPI_Waitany`/`MPI_Testany` return when
    /// no request is active, which the order they complete in cannot change.
    pub undefined: ConstValue,
    /// `MPI_COMM_WORLD`.
    pub comm_world: ConstValue,
    /// `MPI_COMM_SELF`: a collective on it has one member, so no branch
    /// can make its ranks disagree about it.
    pub comm_self: ConstValue,
    /// `sizeof(MPI_Status)`.
    pub status_size: u64,
    /// `offsetof(MPI_Status, MPI_SOURCE)`.
    pub status_source: u64,
    /// `offsetof(MPI_Status, MPI_TAG)`.
    pub status_tag: u64,
    /// The predefined datatypes the buffer check knows
    /// ([`MpiConstants::datatype`]), with their handles and sizes from
    /// the installed `mpi.h`; empty leaves buffers unchecked.
    pub datatypes: Vec<Datatype>,
}

/// What C values a predefined datatype describes, as far as telling a
/// clearly wrong buffer apart is concerned.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum DatatypeClass {
    /// Integers of either signedness (`MPI_INT`, `MPI_UNSIGNED_LONG`,
    /// `MPI_INT64_T`, `MPI_AINT`, `MPI_WCHAR`).
    Integer,
    /// Characters (`MPI_CHAR`, `MPI_SIGNED_CHAR`, `MPI_UNSIGNED_CHAR`).
    Char,
    /// `MPI_C_BOOL`.
    Bool,
    /// Floating point (`MPI_FLOAT`, `MPI_DOUBLE`, `MPI_LONG_DOUBLE`).
    Float,
    /// Complex (`MPI_C_DOUBLE_COMPLEX`).
    Complex,
    /// Raw bytes (`MPI_BYTE`, `MPI_PACKED`): any object may be viewed so.
    Untyped,
}

/// One predefined datatype of the installed MPI.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Datatype {
    /// Its handle as it appears in IR.
    pub value: ConstValue,
    /// Its name (`MPI_DOUBLE`).
    pub name: String,
    /// The size of one element in bytes (`sizeof` of its C type).
    pub size: u64,
    /// What it describes.
    pub class: DatatypeClass,
}

/// The predefined datatypes the probe asks about: name, the probe's key
/// (`mbh_dt_KEY`, `mbh_dt_KEY_size`), class. The names and classes are the
/// MPI standard's; handles and sizes come from the installed `mpi.h`.
/// Where two names share a handle (`MPI_LONG_LONG`, `MPI_LONG_LONG_INT`),
/// the first is the one reports show.
const DATATYPES: &[(&str, &str, DatatypeClass)] = {
    use DatatypeClass::*;
    &[
        ("MPI_CHAR", "char", Char),
        ("MPI_SIGNED_CHAR", "signed_char", Char),
        ("MPI_UNSIGNED_CHAR", "unsigned_char", Char),
        ("MPI_BYTE", "byte", Untyped),
        ("MPI_PACKED", "packed", Untyped),
        ("MPI_SHORT", "short", Integer),
        ("MPI_UNSIGNED_SHORT", "unsigned_short", Integer),
        ("MPI_INT", "int", Integer),
        ("MPI_UNSIGNED", "unsigned", Integer),
        ("MPI_LONG", "long", Integer),
        ("MPI_UNSIGNED_LONG", "unsigned_long", Integer),
        ("MPI_LONG_LONG", "long_long", Integer),
        ("MPI_LONG_LONG_INT", "long_long_int", Integer),
        ("MPI_UNSIGNED_LONG_LONG", "unsigned_long_long", Integer),
        ("MPI_INT8_T", "int8", Integer),
        ("MPI_INT16_T", "int16", Integer),
        ("MPI_INT32_T", "int32", Integer),
        ("MPI_INT64_T", "int64", Integer),
        ("MPI_UINT8_T", "uint8", Integer),
        ("MPI_UINT16_T", "uint16", Integer),
        ("MPI_UINT32_T", "uint32", Integer),
        ("MPI_UINT64_T", "uint64", Integer),
        ("MPI_AINT", "aint", Integer),
        ("MPI_OFFSET", "offset", Integer),
        ("MPI_COUNT", "count", Integer),
        ("MPI_WCHAR", "wchar", Integer),
        ("MPI_C_BOOL", "c_bool", Bool),
        ("MPI_FLOAT", "float", Float),
        ("MPI_DOUBLE", "double", Float),
        ("MPI_LONG_DOUBLE", "long_double", Float),
        ("MPI_C_FLOAT_COMPLEX", "c_float_complex", Complex),
        ("MPI_C_DOUBLE_COMPLEX", "c_double_complex", Complex),
        (
            "MPI_C_LONG_DOUBLE_COMPLEX",
            "c_long_double_complex",
            Complex,
        ),
    ]
};

/// Why [`MpiConstants::from_probe`] failed.
#[derive(Debug, thiserror::Error)]
#[error(
    "cannot read MPI's constants from {module}: {detail}; this is a bug in mbhybrid or an \
     unusual mpi.h, please report it with the output of `mpicc -show`"
)]
pub struct ConstantsError {
    /// The probe module's name.
    pub module: String,
    /// What was missing.
    pub detail: String,
}

impl MpiConstants {
    /// A C file that, compiled with the MPI compile flags to IR
    /// (`clang -S -emit-llvm`), holds each constant as a global's
    /// initializer, for [`MpiConstants::from_probe`].
    pub const PROBE_C: &'static str = r#"#include <mpi.h>
#include <stddef.h>
#include <stdint.h>
int mbh_any_source = MPI_ANY_SOURCE;
int mbh_any_tag = MPI_ANY_TAG;
int mbh_proc_null = MPI_PROC_NULL;
int mbh_undefined = MPI_UNDEFINED;
MPI_Comm mbh_comm_world = MPI_COMM_WORLD;
MPI_Comm mbh_comm_self = MPI_COMM_SELF;
unsigned long mbh_status_size = sizeof(MPI_Status);
unsigned long mbh_status_source = offsetof(MPI_Status, MPI_SOURCE);
unsigned long mbh_status_tag = offsetof(MPI_Status, MPI_TAG);
MPI_Datatype mbh_dt_char = MPI_CHAR;
unsigned long mbh_dt_char_size = sizeof(char);
MPI_Datatype mbh_dt_signed_char = MPI_SIGNED_CHAR;
unsigned long mbh_dt_signed_char_size = sizeof(signed char);
MPI_Datatype mbh_dt_unsigned_char = MPI_UNSIGNED_CHAR;
unsigned long mbh_dt_unsigned_char_size = sizeof(unsigned char);
MPI_Datatype mbh_dt_byte = MPI_BYTE;
unsigned long mbh_dt_byte_size = sizeof(unsigned char);
MPI_Datatype mbh_dt_packed = MPI_PACKED;
unsigned long mbh_dt_packed_size = sizeof(unsigned char);
MPI_Datatype mbh_dt_short = MPI_SHORT;
unsigned long mbh_dt_short_size = sizeof(short);
MPI_Datatype mbh_dt_unsigned_short = MPI_UNSIGNED_SHORT;
unsigned long mbh_dt_unsigned_short_size = sizeof(unsigned short);
MPI_Datatype mbh_dt_int = MPI_INT;
unsigned long mbh_dt_int_size = sizeof(int);
MPI_Datatype mbh_dt_unsigned = MPI_UNSIGNED;
unsigned long mbh_dt_unsigned_size = sizeof(unsigned);
MPI_Datatype mbh_dt_long = MPI_LONG;
unsigned long mbh_dt_long_size = sizeof(long);
MPI_Datatype mbh_dt_unsigned_long = MPI_UNSIGNED_LONG;
unsigned long mbh_dt_unsigned_long_size = sizeof(unsigned long);
MPI_Datatype mbh_dt_long_long = MPI_LONG_LONG;
unsigned long mbh_dt_long_long_size = sizeof(long long);
MPI_Datatype mbh_dt_long_long_int = MPI_LONG_LONG_INT;
unsigned long mbh_dt_long_long_int_size = sizeof(long long);
MPI_Datatype mbh_dt_unsigned_long_long = MPI_UNSIGNED_LONG_LONG;
unsigned long mbh_dt_unsigned_long_long_size = sizeof(unsigned long long);
MPI_Datatype mbh_dt_int8 = MPI_INT8_T;
unsigned long mbh_dt_int8_size = sizeof(int8_t);
MPI_Datatype mbh_dt_int16 = MPI_INT16_T;
unsigned long mbh_dt_int16_size = sizeof(int16_t);
MPI_Datatype mbh_dt_int32 = MPI_INT32_T;
unsigned long mbh_dt_int32_size = sizeof(int32_t);
MPI_Datatype mbh_dt_int64 = MPI_INT64_T;
unsigned long mbh_dt_int64_size = sizeof(int64_t);
MPI_Datatype mbh_dt_uint8 = MPI_UINT8_T;
unsigned long mbh_dt_uint8_size = sizeof(uint8_t);
MPI_Datatype mbh_dt_uint16 = MPI_UINT16_T;
unsigned long mbh_dt_uint16_size = sizeof(uint16_t);
MPI_Datatype mbh_dt_uint32 = MPI_UINT32_T;
unsigned long mbh_dt_uint32_size = sizeof(uint32_t);
MPI_Datatype mbh_dt_uint64 = MPI_UINT64_T;
unsigned long mbh_dt_uint64_size = sizeof(uint64_t);
MPI_Datatype mbh_dt_aint = MPI_AINT;
unsigned long mbh_dt_aint_size = sizeof(MPI_Aint);
MPI_Datatype mbh_dt_offset = MPI_OFFSET;
unsigned long mbh_dt_offset_size = sizeof(MPI_Offset);
MPI_Datatype mbh_dt_count = MPI_COUNT;
unsigned long mbh_dt_count_size = sizeof(MPI_Count);
MPI_Datatype mbh_dt_wchar = MPI_WCHAR;
unsigned long mbh_dt_wchar_size = sizeof(wchar_t);
MPI_Datatype mbh_dt_c_bool = MPI_C_BOOL;
unsigned long mbh_dt_c_bool_size = sizeof(_Bool);
MPI_Datatype mbh_dt_float = MPI_FLOAT;
unsigned long mbh_dt_float_size = sizeof(float);
MPI_Datatype mbh_dt_double = MPI_DOUBLE;
unsigned long mbh_dt_double_size = sizeof(double);
MPI_Datatype mbh_dt_long_double = MPI_LONG_DOUBLE;
unsigned long mbh_dt_long_double_size = sizeof(long double);
MPI_Datatype mbh_dt_c_float_complex = MPI_C_FLOAT_COMPLEX;
unsigned long mbh_dt_c_float_complex_size = sizeof(float _Complex);
MPI_Datatype mbh_dt_c_double_complex = MPI_C_DOUBLE_COMPLEX;
unsigned long mbh_dt_c_double_complex_size = sizeof(double _Complex);
MPI_Datatype mbh_dt_c_long_double_complex = MPI_C_LONG_DOUBLE_COMPLEX;
unsigned long mbh_dt_c_long_double_complex_size = sizeof(long double _Complex);
"#;

    /// Reads the constants from the IR of [`MpiConstants::PROBE_C`].
    pub fn from_probe(module: &Module<'_>) -> Result<Self, ConstantsError> {
        let raw = module.llvm().as_mut_ptr();
        let get = |name: &str| -> Result<ConstValue, ConstantsError> {
            let missing = |what: &str| ConstantsError {
                module: module.origin().display().to_string(),
                detail: format!("`{name}` {what}"),
            };
            let cname = std::ffi::CString::new(name).map_err(|_| missing("is not a C name"))?;
            // SAFETY: the module is live; a found global's initializer is a
            // constant of the same module (or null for a declaration).
            unsafe {
                let global = LLVMGetNamedGlobal(raw, cname.as_ptr());
                if global.is_null() {
                    return Err(missing("is missing"));
                }
                let init = LLVMGetInitializer(global);
                if init.is_null() {
                    return Err(missing("has no initializer"));
                }
                match ir::const_val(init) {
                    Val::Int(i) => Ok(ConstValue::Int(i)),
                    Val::Global(g) => Ok(ConstValue::Global(g)),
                    Val::Null => Ok(ConstValue::Null),
                    _ => Err(missing("is not a simple constant")),
                }
            }
        };
        let size = |name: &str| -> Result<u64, ConstantsError> {
            match get(name)? {
                ConstValue::Int(i) if i >= 0 => Ok(i as u64),
                other => Err(ConstantsError {
                    module: module.origin().display().to_string(),
                    detail: format!("`{name}` is {other}, not a size"),
                }),
            }
        };
        Ok(MpiConstants {
            any_source: get("mbh_any_source")?,
            any_tag: get("mbh_any_tag")?,
            proc_null: get("mbh_proc_null")?,
            undefined: get("mbh_undefined")?,
            comm_world: get("mbh_comm_world")?,
            comm_self: get("mbh_comm_self")?,
            status_size: size("mbh_status_size")?.max(1),
            status_source: size("mbh_status_source")?,
            status_tag: size("mbh_status_tag")?,
            // A datatype the probe lacks is left out: its buffers go
            // unchecked, which is never a false alarm.
            datatypes: DATATYPES
                .iter()
                .filter_map(|&(name, key, class)| {
                    let value = get(&format!("mbh_dt_{key}")).ok()?;
                    let size = size(&format!("mbh_dt_{key}_size")).ok()?;
                    Some(Datatype {
                        value,
                        name: name.to_owned(),
                        size,
                        class,
                    })
                })
                .collect(),
        })
    }

    /// The predefined datatype whose handle is `value`, if the probe knew
    /// it (the first name, when several share the handle).
    pub fn datatype(&self, value: &ConstValue) -> Option<&Datatype> {
        self.datatypes.iter().find(|d| d.value == *value)
    }

    /// How `value` reads as a source argument (`MPI_ANY_SOURCE`, `3`).
    pub(crate) fn describe_source(&self, value: &ConstValue) -> String {
        if *value == self.any_source {
            "MPI_ANY_SOURCE".into()
        } else if *value == self.proc_null {
            "MPI_PROC_NULL".into()
        } else {
            value.to_string()
        }
    }

    /// How `value` reads as a tag argument.
    pub(crate) fn describe_tag(&self, value: &ConstValue) -> String {
        if *value == self.any_tag {
            "MPI_ANY_TAG".into()
        } else {
            value.to_string()
        }
    }
}

/// What an argument may be.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Resolved {
    /// One of these constants (one, when it is a plain constant).
    OneOf(BTreeSet<ConstValue>),
    /// Not known.
    Unknown,
}

impl Resolved {
    /// Whether it may be `value`.
    pub fn may_be(&self, value: &ConstValue) -> bool {
        match self {
            Resolved::OneOf(set) => set.contains(value),
            Resolved::Unknown => true,
        }
    }

    /// The constant it surely is, if one.
    pub fn single(&self) -> Option<&ConstValue> {
        match self {
            Resolved::OneOf(set) if set.len() == 1 => set.iter().next(),
            _ => None,
        }
    }

    /// Whether it surely is `value`.
    pub fn is(&self, value: &ConstValue) -> bool {
        matches!(self, Resolved::OneOf(set) if set.len() == 1 && set.contains(value))
    }

    /// In words, with `describe` for each constant.
    pub fn describe(&self, describe: impl Fn(&ConstValue) -> String) -> String {
        match self {
            Resolved::OneOf(set) => set.iter().map(describe).collect::<Vec<_>>().join(" or "),
            Resolved::Unknown => "unknown".into(),
        }
    }
}

/// Per function: which allocas are plain local variables (only loaded,
/// stored to, and described by debug info) and the stores into each.
#[derive(Debug, Default, Clone)]
pub(crate) struct LocalVars {
    /// Stores into each non-escaping alloca: the stored values.
    pub stores: HashMap<InstId, Vec<Val>>,
    /// Allocas whose address is used otherwise (passed, stored, offset).
    pub escaping: BTreeSet<InstId>,
}

impl LocalVars {
    pub fn of(f: &Function) -> Self {
        let mut vars = LocalVars::default();
        for inst in &f.insts {
            let intrinsic = matches!(&inst.op, Op::Call(ir::Callee::Named(n)) if n.starts_with("llvm.dbg.") || n.starts_with("llvm.lifetime."));
            for (k, v) in inst.ops.iter().enumerate() {
                let Val::Inst(a) = v else { continue };
                if !matches!(f.insts[*a as usize].op, Op::Alloca(_)) {
                    continue;
                }
                match (&inst.op, k) {
                    (Op::Load, 0) => {}
                    (Op::Store, 1) => vars.stores.entry(*a).or_default().push(inst.ops[0].clone()),
                    _ if intrinsic => {}
                    _ => {
                        vars.escaping.insert(*a);
                    }
                }
            }
        }
        for a in &vars.escaping {
            vars.stores.remove(a);
        }
        vars
    }

    /// Whether `a` is a non-escaping alloca.
    pub fn is_plain(&self, f: &Function, a: InstId) -> bool {
        matches!(f.insts[a as usize].op, Op::Alloca(_)) && !self.escaping.contains(&a)
    }
}

/// What resolving needs to know about the rest of the program.
pub(crate) trait Program {
    /// The value of a constant global, if it is one.
    fn const_global(&self, module: usize, name: &str) -> Option<&Val>;
    /// The direct calls of internal function `name` of `module`, as
    /// `(function, instruction)`; `None` when it may be called from
    /// elsewhere (its address is taken, or it is not internal).
    fn callers(&self, module: usize, name: &str) -> Option<&[(usize, InstId)]>;
    /// Function number `index`, with its local variables.
    fn function(&self, index: usize) -> (&Function, &LocalVars);
}

/// What `value`, an operand in `f`, may be: through casts, `phi` and
/// `select`, loads of plain local variables (every store into one is
/// resolved), constant globals, and parameters of internal functions (every
/// direct caller's argument).
///
/// Every step copies a value (a `phi` may be any of its operands, a load
/// any value stored, a parameter any caller's argument), so what `value`
/// may be is the set of constants reachable from it through those steps,
/// or unknown when anything else is reachable. One walk that visits each
/// `(function, operand)` once finds it: the work is linear in what is
/// reachable, however the `phi`s and variables nest (a recursion without
/// that memory was exponential in their depth: a link of LULESH took minutes).
pub(crate) fn resolve(
    program: &dyn Program,
    f: &Function,
    vars: &LocalVars,
    value: &Val,
) -> Resolved {
    Resolver::new(program).resolve(f, vars, value)
}

/// Beyond this many constants, a value counts as unknown.
const MAX_CONSTANTS: usize = 16;

/// One walk of [`resolve`].
struct Resolver<'p> {
    program: &'p dyn Program,
    /// The operands visited, by function (its address) and operand.
    seen: HashSet<(usize, Val)>,
    /// Operands visited: the walk's cost, for the tests.
    #[cfg(test)]
    visits: usize,
}

/// An operand of a function with that function's local variables.
type Operand<'p> = (&'p Function, &'p LocalVars, Val);

/// What one operand is: a constant, other operands it copies, or anything.
enum Step<'p> {
    Constant(ConstValue),
    Copies(Vec<Operand<'p>>),
    Unknown,
}

impl<'p> Resolver<'p> {
    fn new(program: &'p dyn Program) -> Self {
        Resolver {
            program,
            seen: HashSet::new(),
            #[cfg(test)]
            visits: 0,
        }
    }

    fn resolve(&mut self, f: &'p Function, vars: &'p LocalVars, value: &Val) -> Resolved {
        let mut found = BTreeSet::new();
        let mut stack: Vec<Operand<'p>> = vec![(f, vars, value.clone())];
        while let Some((f, vars, v)) = stack.pop() {
            if !self.seen.insert((f as *const Function as usize, v.clone())) {
                continue;
            }
            #[cfg(test)]
            {
                self.visits += 1;
            }
            match self.step(f, vars, &v) {
                Step::Constant(c) => {
                    found.insert(c);
                    if found.len() > MAX_CONSTANTS {
                        return Resolved::Unknown;
                    }
                }
                Step::Copies(operands) => stack.extend(operands),
                Step::Unknown => return Resolved::Unknown,
            }
        }
        if found.is_empty() {
            // Only cycles of copies with no way in: nothing is known.
            return Resolved::Unknown;
        }
        Resolved::OneOf(found)
    }

    /// What operand `value` of `f` is, one step.
    fn step(&self, f: &'p Function, vars: &'p LocalVars, value: &Val) -> Step<'p> {
        let program = self.program;
        let copies = |vals: &[Val]| {
            if vals.is_empty() {
                Step::Unknown
            } else {
                Step::Copies(vals.iter().map(|v| (f, vars, v.clone())).collect())
            }
        };
        match value {
            Val::Int(i) => Step::Constant(ConstValue::Int(*i)),
            Val::Null => Step::Constant(ConstValue::Null),
            Val::Global(g) => match program.const_global(f.module, g) {
                // A constant global holding a constant: its value. Otherwise
                // its address (Open MPI's handles are addresses of globals).
                Some(v) if !matches!(v, Val::Global(h) if h == g) => {
                    copies(std::slice::from_ref(v))
                }
                _ => Step::Constant(ConstValue::Global(g.clone())),
            },
            Val::Other => Step::Unknown,
            Val::Arg(p) => match program.callers(f.module, &f.name) {
                Some(callers) if !callers.is_empty() => Step::Copies(
                    callers
                        .iter()
                        .map(|&(caller, call)| {
                            let (cf, cvars) = program.function(caller);
                            let arg = cf.insts[call as usize]
                                .ops
                                .get(*p as usize)
                                .cloned()
                                .unwrap_or(Val::Other);
                            (cf, cvars, arg)
                        })
                        .collect(),
                ),
                _ => Step::Unknown,
            },
            Val::Inst(i) => {
                let inst = &f.insts[*i as usize];
                match &inst.op {
                    Op::Load => match &inst.ops[0] {
                        Val::Inst(a) if vars.is_plain(f, *a) => match vars.stores.get(a) {
                            Some(stores) => copies(stores),
                            None => Step::Unknown,
                        },
                        Val::Global(g) => match program.const_global(f.module, g) {
                            Some(v) => copies(std::slice::from_ref(v)),
                            None => Step::Unknown,
                        },
                        _ => Step::Unknown,
                    },
                    Op::Phi => copies(&inst.ops),
                    Op::Cast => copies(&inst.ops[..1]),
                    Op::Select => copies(&inst.ops[1..]),
                    _ => Step::Unknown,
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::Files;

    /// One function, no constant globals, no known callers.
    struct Alone(Function, LocalVars);

    impl Program for Alone {
        fn const_global(&self, _: usize, _: &str) -> Option<&Val> {
            None
        }
        fn callers(&self, _: usize, _: &str) -> Option<&[(usize, InstId)]> {
            None
        }
        fn function(&self, _: usize) -> (&Function, &LocalVars) {
            (&self.0, &self.1)
        }
    }

    fn alone(ir: &str) -> Alone {
        let context = inkwell::context::Context::create();
        let module = Module::parse(&context, "test.ll", ir.as_bytes()).unwrap();
        let f = ir::read_module(&module, 0, &mut Files::default())
            .functions
            .remove(0);
        let vars = LocalVars::of(&f);
        Alone(f, vars)
    }

    /// What the source argument of the function's only call may be, and
    /// how many operands the walk visited.
    fn source_of_call(p: &Alone) -> (Resolved, usize) {
        let (f, vars) = (&p.0, &p.1);
        let call = f
            .insts
            .iter()
            .find(|i| matches!(i.op, Op::Call(_)))
            .expect("a call");
        let mut walk = Resolver::new(p);
        let r = walk.resolve(f, vars, &call.ops[0]);
        (r, walk.visits)
    }

    /// `levels` diamonds choosing between the previous value and a
    /// variable holding it, so that each level reads the one before twice
    /// (a phi and a load of a plain variable); then a call with it.
    fn diamonds(levels: usize) -> String {
        let mut ir = String::from(
            "declare void @use(i32)
define void @f(i1 %c) {
entry:
  %v = alloca i32
               store i32 -2, ptr %v
  %s0 = load i32, ptr %v
  br label %d1
",
        );
        for k in 1..=levels {
            let p = k - 1;
            ir.push_str(&format!(
                "d{k}:
  store i32 %s{p}, ptr %v
  br i1 %c, label %l{k}, label %r{k}
                 l{k}:
  %a{k} = load i32, ptr %v
  br label %j{k}
                 r{k}:
  br label %j{k}
                 j{k}:
  %s{k} = phi i32 [ %a{k}, %l{k} ], [ %s{p}, %r{k} ]
  br label %d{}
",
                k + 1
            ));
        }
        ir.push_str(&format!(
            "d{}:
  call void @use(i32 %s{levels})
  ret void
}}
",
            levels + 1
        ));
        ir
    }

    #[test]
    fn nested_phis_and_variables_resolve_in_linear_work() {
        let p = alone(&diamonds(8));
        let (resolved, visits) = source_of_call(&p);
        let operands: usize = p.0.insts.iter().map(|i| i.ops.len()).sum();
        assert!(
            visits <= p.0.insts.len() + operands,
            "{visits} operands visited for {} instructions",
            p.0.insts.len()
        );
        assert_eq!(resolved, Resolved::OneOf([ConstValue::Int(-2)].into()));
    }

    #[test]
    fn a_value_carried_around_a_loop_is_one_of_its_ways_in() {
        let p = alone(
            "declare void @use(i32)
define void @f(i1 %c) {
entry:
  br label %loop
             loop:
  %s = phi i32 [ -2, %entry ], [ %t, %loop ]
               %t = select i1 %c, i32 %s, i32 3
  call void @use(i32 %s)
               br i1 %c, label %loop, label %done
done:
  ret void
}
",
        );
        let (resolved, _) = source_of_call(&p);
        assert_eq!(
            resolved,
            Resolved::OneOf([ConstValue::Int(-2), ConstValue::Int(3)].into())
        );
    }

    #[test]
    fn a_computed_value_is_unknown() {
        let p = alone(
            "declare void @use(i32)
define void @f(i32 %n) {
entry:
               %m = add i32 %n, 1
  %s = select i1 true, i32 %m, i32 3
               call void @use(i32 %s)
  ret void
}
",
        );
        assert_eq!(source_of_call(&p).0, Resolved::Unknown);
    }
}
