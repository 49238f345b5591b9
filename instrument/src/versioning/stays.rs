//! Which calls cannot change the table of pending buffers: no call in them
//! can reach MPI. A function defined in the module qualifies when every
//! call it makes does (a fixed point over the call graph, so recursion
//! among such functions is fine); a declared one only when it is an
//! intrinsic, one of mbhybrid's helpers that watch nothing, or a C
//! library or C++ runtime function that cannot call back into the
//! program ([`KNOWN`]). Calls through pointers never qualify.

use std::collections::{HashMap, HashSet};

use inkwell::module::Module;
use inkwell::values::AsValueRef;
use llvm_sys::core::{
    LLVMGetCalledValue, LLVMGetFirstBasicBlock, LLVMGetFirstInstruction, LLVMGetInstructionOpcode,
    LLVMGetLinkage, LLVMGetNextBasicBlock, LLVMGetNextInstruction, LLVMGetValueName2,
    LLVMIsAFunction, LLVMIsDeclaration,
};
use llvm_sys::prelude::LLVMValueRef;
use llvm_sys::LLVMOpcode;

/// C library and C++ runtime functions that neither call MPI nor call
/// back into the program, and the MPI functions that leave the table as
/// it is. Functions taking callbacks (`qsort`,
/// `pthread_create`, `atexit`) and the OpenMP runtime (`__kmpc_*`, whose
/// `fork_call` runs the program's outlined code on other threads) are
/// not among them.
const KNOWN: &[&str] = &[
    // Allocation (the runtime's heap table notes them; it watches nothing).
    "malloc",
    "calloc",
    "realloc",
    "free",
    "aligned_alloc",
    "posix_memalign",
    "_Znwm",
    "_Znam",
    "_ZdlPv",
    "_ZdaPv",
    "_ZdlPvm",
    "_ZdaPvm",
    "_ZnwmSt11align_val_t",
    "_ZdlPvSt11align_val_t",
    // Memory and strings.
    "memcpy",
    "memmove",
    "memset",
    "memcmp",
    "strlen",
    "strcmp",
    "strncmp",
    "strcpy",
    "strncpy",
    "strcat",
    "strchr",
    "strstr",
    "strtol",
    "strtod",
    "atoi",
    "atof",
    // Output.
    "printf",
    "fprintf",
    "sprintf",
    "snprintf",
    "puts",
    "fputs",
    "putchar",
    "fputc",
    "fflush",
    "fwrite",
    // Input and time.
    "__isoc99_sscanf",
    "__isoc99_fscanf",
    "fopen",
    "fclose",
    "fgets",
    "gettimeofday",
    "clock_gettime",
    "clock",
    "time",
    // Ending.
    "abort",
    "exit",
    "_exit",
    "__assert_fail",
    "__cxa_throw",
    "__cxa_allocate_exception",
    "__cxa_free_exception",
    "__cxa_begin_catch",
    "__cxa_end_catch",
    "__cxa_rethrow",
    "__cxa_call_unexpected",
    "_ZSt9terminatev",
    "__clang_call_terminate",
    "_ZSt20__throw_length_errorPKc",
    "_ZSt17__throw_bad_allocv",
    "_ZSt24__throw_out_of_range_fmtPKcz",
    "_ZSt19__throw_logic_errorPKc",
    "_ZSt28__throw_bad_array_new_lengthv",
    // MPI calls that start and complete nothing (`MPI_Abort` never
    // returns to the loop).
    "MPI_Abort",
    "MPI_Wtime",
    "MPI_Wtick",
    "MPI_Comm_rank",
    "MPI_Comm_size",
    // Math (libm).
    "sqrt",
    "sqrtf",
    "cbrt",
    "exp",
    "expf",
    "exp2",
    "log",
    "logf",
    "log2",
    "log10",
    "pow",
    "powf",
    "sin",
    "sinf",
    "cos",
    "cosf",
    "tan",
    "tanh",
    "asin",
    "acos",
    "atan",
    "atan2",
    "sinh",
    "cosh",
    "fabs",
    "fabsf",
    "floor",
    "ceil",
    "round",
    "trunc",
    "fmod",
    "fmin",
    "fmax",
    "hypot",
    "erf",
    "lround",
    "rand",
    "drand48",
    "random",
];

/// The functions of a program whose calls stay: a set of function values
/// of its modules.
pub(crate) struct StaysUnchecked {
    safe: HashSet<LLVMValueRef>,
}

impl StaysUnchecked {
    /// Decides every function of `module`, alone.
    pub fn of(module: &Module<'_>) -> StaysUnchecked {
        StaysUnchecked::program(&[module])
    }

    /// Decides every function of the program made of `modules`: a
    /// function one module declares and another defines (with a name the
    /// linker resolves across them) stays when that definition does.
    pub fn program(modules: &[&Module<'_>]) -> StaysUnchecked {
        let functions: Vec<LLVMValueRef> = modules
            .iter()
            .flat_map(|m| m.get_functions().map(|f| f.as_value_ref()))
            .collect();
        let mut definitions: HashMap<String, Vec<LLVMValueRef>> = HashMap::new();
        for &f in &functions {
            // SAFETY: live functions of the modules.
            unsafe {
                if LLVMIsDeclaration(f) == 0 && exported(f) {
                    definitions.entry(name(f)).or_default().push(f);
                }
            }
        }
        let mut safe: HashSet<LLVMValueRef> = functions
            .iter()
            .copied()
            // SAFETY: live functions of the modules.
            .filter(|&f| unsafe {
                if LLVMIsDeclaration(f) != 0 {
                    known(f) || definitions.contains_key(&name(f))
                } else {
                    !interposable(f)
                }
            })
            .collect();
        // Take out, until nothing changes, each defined function with a
        // call that does not stay, and each declaration whose definition
        // was taken out.
        loop {
            let unsafe_now: Vec<LLVMValueRef> = safe
                .iter()
                .copied()
                // SAFETY: live functions.
                .filter(|&f| unsafe {
                    if LLVMIsDeclaration(f) == 0 {
                        !body_stays(f, &safe)
                    } else {
                        !known(f)
                            && !definitions
                                .get(&name(f))
                                .is_some_and(|defs| defs.iter().all(|d| safe.contains(d)))
                    }
                })
                .collect();
            if unsafe_now.is_empty() {
                return StaysUnchecked { safe };
            }
            for f in unsafe_now {
                safe.remove(&f);
            }
        }
    }

    /// Whether no call of the defined function `f` can reach MPI.
    pub fn function(&self, f: LLVMValueRef) -> bool {
        self.safe.contains(&f)
    }

    /// Whether the call or invoke `inst` stays.
    ///
    /// # Safety
    ///
    /// `inst` is a live call or invoke.
    pub unsafe fn call(&self, inst: LLVMValueRef) -> bool {
        // SAFETY: the caller's contract.
        unsafe { call_stays(inst, &self.safe) }
    }
}

/// Whether every call of function `f`'s body stays.
///
/// # Safety
///
/// `f` is a live defined function.
unsafe fn body_stays(f: LLVMValueRef, safe: &HashSet<LLVMValueRef>) -> bool {
    // SAFETY: the caller's contract; blocks and instructions are walked
    // while live.
    unsafe {
        let mut block = LLVMGetFirstBasicBlock(f);
        while !block.is_null() {
            let mut inst = LLVMGetFirstInstruction(block);
            while !inst.is_null() {
                let fine = match LLVMGetInstructionOpcode(inst) {
                    LLVMOpcode::LLVMCall | LLVMOpcode::LLVMInvoke => call_stays(inst, safe),
                    LLVMOpcode::LLVMCallBr => false,
                    _ => true,
                };
                if !fine {
                    return false;
                }
                inst = LLVMGetNextInstruction(inst);
            }
            block = LLVMGetNextBasicBlock(block);
        }
        true
    }
}

/// # Safety
///
/// `inst` is a live call or invoke.
unsafe fn call_stays(inst: LLVMValueRef, safe: &HashSet<LLVMValueRef>) -> bool {
    // SAFETY: the caller's contract.
    unsafe {
        let callee = LLVMGetCalledValue(inst);
        if LLVMIsAFunction(callee).is_null() {
            return false; // through a pointer, or inline assembly
        }
        // A known declaration stays whenever it was declared (the access
        // check is declared after the program was decided).
        safe.contains(&callee) || (LLVMIsDeclaration(callee) != 0 && known(callee))
    }
}

/// Whether the linker may take another definition than the module's for
/// `f` (weak and common symbols), one that could call MPI.
///
/// # Safety
///
/// `f` is a live function.
unsafe fn interposable(f: LLVMValueRef) -> bool {
    use llvm_sys::LLVMLinkage::*;
    // SAFETY: the caller's contract.
    let linkage = unsafe { LLVMGetLinkage(f) };
    matches!(
        linkage,
        LLVMWeakAnyLinkage | LLVMLinkOnceAnyLinkage | LLVMExternalWeakLinkage | LLVMCommonLinkage
    )
}

/// The name of function `f`.
///
/// # Safety
///
/// `f` is a live function.
unsafe fn name(f: LLVMValueRef) -> String {
    let mut len = 0;
    // SAFETY: the caller's contract; LLVM returns `len` bytes.
    unsafe {
        let name = LLVMGetValueName2(f, &mut len);
        String::from_utf8_lossy(std::slice::from_raw_parts(name.cast::<u8>(), len)).into_owned()
    }
}

/// Whether other modules can call the defined function `f` by its name
/// (not internal or private to its module).
///
/// # Safety
///
/// `f` is a live function.
unsafe fn exported(f: LLVMValueRef) -> bool {
    use llvm_sys::LLVMLinkage::*;
    // SAFETY: the caller's contract.
    let linkage = unsafe { LLVMGetLinkage(f) };
    !matches!(linkage, LLVMInternalLinkage | LLVMPrivateLinkage)
}

/// Whether the declared function `f` is an intrinsic, an mbhybrid helper
/// that watches nothing, or in [`KNOWN`].
///
/// # Safety
///
/// `f` is a live function.
unsafe fn known(f: LLVMValueRef) -> bool {
    let mut len = 0;
    // SAFETY: the caller's contract; LLVM returns `len` bytes.
    let name = unsafe {
        let name = LLVMGetValueName2(f, &mut len);
        std::slice::from_raw_parts(name.cast::<u8>(), len)
    };
    let Ok(name) = std::str::from_utf8(name) else {
        return false;
    };
    name.starts_with("llvm.")
        || name == crate::accesses::CHECK_ACCESS
        || name == crate::NOTE_ALLOC
        || name == crate::NOTE_FREE
        || KNOWN.contains(&name)
}
