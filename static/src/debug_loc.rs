//! The few llvm-sys calls inkwell lacks: debug locations and callees.

use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::path::PathBuf;

use inkwell::values::{AsValueRef, InstructionValue};
use llvm_sys::core::{
    LLVMAliasGetAliasee, LLVMGetCalledValue, LLVMGetConstOpcode, LLVMGetInstructionOpcode,
    LLVMGetOperand, LLVMGetValueName2, LLVMIsAConstantExpr, LLVMIsAFunction, LLVMIsAGlobalAlias,
    LLVMIsAInlineAsm,
};
use llvm_sys::debuginfo::{
    LLVMDIFileGetDirectory, LLVMDIFileGetFilename, LLVMDILocationGetColumn, LLVMDILocationGetLine,
    LLVMDILocationGetScope, LLVMDIScopeGetFile, LLVMInstructionGetDebugLoc,
};
use llvm_sys::prelude::{LLVMMetadataRef, LLVMValueRef};
use llvm_sys::LLVMOpcode;

use crate::SourceLocation;

/// What a call instruction calls.
pub(crate) enum Callee {
    /// A function or alias, by name.
    Named(String),
    /// A function pointer computed at run time.
    Indirect,
    /// Inline assembly.
    InlineAsm,
}

/// Whether `inst` is a call site (`call`, `invoke` or `callbr`).
pub(crate) fn is_call(inst: InstructionValue<'_>) -> bool {
    // SAFETY: `inst` is a live instruction; reading its opcode has no
    // preconditions beyond that.
    let opcode = unsafe { LLVMGetInstructionOpcode(inst.as_value_ref()) };
    matches!(
        opcode,
        LLVMOpcode::LLVMCall | LLVMOpcode::LLVMInvoke | LLVMOpcode::LLVMCallBr
    )
}

/// The callee of call site `inst` (see [`is_call`]), looking through
/// pointer casts and aliases the way a direct call written in C appears
/// after clang.
pub(crate) fn callee(inst: InstructionValue<'_>) -> Callee {
    // SAFETY: `inst` is a live call site (checked by the caller), so
    // LLVMGetCalledValue is defined; every value we then look at is an
    // operand of a live value of the same module, and the LLVMIsA* casts
    // check kinds before the kind-specific calls.
    unsafe {
        let mut value = LLVMGetCalledValue(inst.as_value_ref());
        // A bounded walk: casts of casts of aliases are rare, cycles are
        // impossible in valid IR, but a bound costs nothing.
        for _ in 0..8 {
            if value.is_null() {
                return Callee::Indirect;
            }
            if !LLVMIsAFunction(value).is_null() || !LLVMIsAGlobalAlias(value).is_null() {
                let name = value_name(value);
                if !name.is_empty() {
                    return Callee::Named(name);
                }
                if LLVMIsAGlobalAlias(value).is_null() {
                    return Callee::Indirect;
                }
                value = LLVMAliasGetAliasee(value);
                continue;
            }
            if !LLVMIsAInlineAsm(value).is_null() {
                return Callee::InlineAsm;
            }
            if !LLVMIsAConstantExpr(value).is_null()
                && matches!(
                    LLVMGetConstOpcode(value),
                    LLVMOpcode::LLVMBitCast | LLVMOpcode::LLVMAddrSpaceCast
                )
            {
                value = LLVMGetOperand(value, 0);
                continue;
            }
            return Callee::Indirect;
        }
        Callee::Indirect
    }
}

/// # Safety
/// `value` must be a live, non-null LLVM value.
unsafe fn value_name(value: LLVMValueRef) -> String {
    let mut len = 0usize;
    // SAFETY: per this function's contract; LLVM returns a pointer to `len`
    // bytes owned by the value, which we copy before returning.
    unsafe {
        let ptr = LLVMGetValueName2(value, &mut len);
        if ptr.is_null() || len == 0 {
            return String::new();
        }
        let bytes = std::slice::from_raw_parts(ptr.cast::<u8>(), len);
        String::from_utf8_lossy(bytes).into_owned()
    }
}

/// The debug location attached to `inst`, if any.
pub(crate) fn location(inst: InstructionValue<'_>) -> Option<SourceLocation> {
    // SAFETY: `inst` is a live instruction. LLVMInstructionGetDebugLoc
    // returns null or a DILocation; a DILocation's scope is a DIScope
    // (possibly null in malformed IR, checked); LLVMDIScopeGetFile returns
    // null or a DIFile. Strings returned by the DIFile getters are owned by
    // the metadata and copied at once.
    unsafe {
        let loc = LLVMInstructionGetDebugLoc(inst.as_value_ref());
        if loc.is_null() {
            return None;
        }
        let line = LLVMDILocationGetLine(loc);
        let column = LLVMDILocationGetColumn(loc);
        let scope = LLVMDILocationGetScope(loc);
        let file = if scope.is_null() {
            PathBuf::new()
        } else {
            file_path(LLVMDIScopeGetFile(scope))
        };
        Some(SourceLocation { file, line, column })
    }
}

/// Directory joined with file name, as a DIFile records them. An absolute
/// file name stands alone (that is what `Path::join` does).
///
/// # Safety
/// `file` must be null or a live DIFile.
pub(crate) unsafe fn file_path(file: LLVMMetadataRef) -> PathBuf {
    if file.is_null() {
        return PathBuf::new();
    }
    // SAFETY: per this function's contract.
    let (dir, name) = unsafe {
        (
            di_string(file, LLVMDIFileGetDirectory),
            di_string(file, LLVMDIFileGetFilename),
        )
    };
    let name = OsStr::from_bytes(&name);
    let dir = OsStr::from_bytes(&dir);
    if name.is_empty() {
        return PathBuf::from(dir);
    }
    PathBuf::from(dir).join(name)
}

/// # Safety
/// `file` must be a live DIFile and `get` one of its string getters.
unsafe fn di_string(
    file: LLVMMetadataRef,
    get: unsafe extern "C" fn(LLVMMetadataRef, *mut std::ffi::c_uint) -> *const std::ffi::c_char,
) -> Vec<u8> {
    let mut len: std::ffi::c_uint = 0;
    // SAFETY: per this function's contract; the getter returns `len` bytes
    // (not necessarily NUL-terminated) owned by the metadata.
    unsafe {
        let ptr = get(file, &mut len);
        if ptr.is_null() || len == 0 {
            return Vec::new();
        }
        std::slice::from_raw_parts(ptr.cast::<u8>(), len as usize).to_vec()
    }
}
