//! The type-based alias analysis (TBAA) type of the runtime's hull words
//! (`mbhybrid_pending_hi` and its siblings), which the access checks and
//! the loop versioning guard load.
//!
//! Without a type, LLVM must assume that any store of the program may
//! write the hull, so a check's load of it stays in every iteration of a
//! loop, and after a checked accessor (C++'s `v[i]`) is inlined into a
//! loop's unchecked copy, its check cannot be seen to be dead. With a
//! scalar type of its own under the module's "omnipotent char" (beside
//! `int`, `double`, ...), the program's typed stores do not alias the
//! hull: the optimizer hoists its loads, merges them with the guard's and
//! deletes the checks the guard made dead. The program never touches the
//! runtime's words, so the type is true; untyped or `char` accesses still
//! alias it, as they should.

use llvm_sys::core::{
    LLVMConstInt, LLVMGetBasicBlockParent, LLVMGetFirstBasicBlock, LLVMGetFirstFunction,
    LLVMGetFirstInstruction, LLVMGetMDKindIDInContext, LLVMGetMDNodeNumOperands,
    LLVMGetMDNodeOperands, LLVMGetMetadata, LLVMGetModuleContext, LLVMGetNextBasicBlock,
    LLVMGetNextFunction, LLVMGetNextInstruction, LLVMInt64TypeInContext, LLVMMDNodeInContext2,
    LLVMMDStringInContext2, LLVMMetadataAsValue, LLVMSetMetadata, LLVMValueAsMetadata,
};
use llvm_sys::prelude::{LLVMModuleRef, LLVMValueRef};

/// The hull's access tag in one module, if the module uses TBAA.
#[derive(Clone, Copy)]
pub(crate) struct HullTbaa {
    kind: u32,
    tag: LLVMValueRef,
}

impl HullTbaa {
    /// The tag for `module`: `None` when no access of the module carries
    /// a TBAA tag (an `-O0` or `-fno-strict-aliasing` build), or its
    /// types are not in the scalar form clang writes.
    pub fn of(module: LLVMModuleRef) -> Option<HullTbaa> {
        // SAFETY: a live module; metadata nodes read through the C API.
        unsafe {
            let context = LLVMGetModuleContext(module);
            let kind = LLVMGetMDKindIDInContext(context, c"tbaa".as_ptr(), 4);
            let access = first_tag(module, kind)?;
            let char_type = below_root(operand(access, 1)?)?;
            let name = "mbhybrid pending hull";
            let zero = LLVMValueAsMetadata(LLVMConstInt(LLVMInt64TypeInContext(context), 0, 0));
            let mut fields = [
                LLVMMDStringInContext2(context, name.as_ptr().cast(), name.len()),
                LLVMValueAsMetadata(char_type),
                zero,
            ];
            let hull = LLVMMDNodeInContext2(context, fields.as_mut_ptr(), 3);
            let mut tag = [hull, hull, zero];
            let tag =
                LLVMMetadataAsValue(context, LLVMMDNodeInContext2(context, tag.as_mut_ptr(), 3));
            Some(HullTbaa { kind, tag })
        }
    }

    /// Tags `load` (a load of a hull word).
    ///
    /// # Safety
    ///
    /// `load` is a live load of the module the tag was made for.
    pub unsafe fn tag(&self, load: LLVMValueRef) {
        // SAFETY: the caller's contract.
        unsafe { LLVMSetMetadata(load, self.kind, self.tag) }
    }
}

/// The first `!tbaa` tag of any instruction of `module`.
///
/// # Safety
///
/// `module` is live; `kind` is the `tbaa` kind.
unsafe fn first_tag(module: LLVMModuleRef, kind: u32) -> Option<LLVMValueRef> {
    // SAFETY: the caller's contract; every walk reads live objects.
    unsafe {
        let mut function = LLVMGetFirstFunction(module);
        while !function.is_null() {
            let mut block = LLVMGetFirstBasicBlock(function);
            while !block.is_null() {
                debug_assert!(LLVMGetBasicBlockParent(block) == function);
                let mut inst = LLVMGetFirstInstruction(block);
                while !inst.is_null() {
                    let tag = LLVMGetMetadata(inst, kind);
                    if !tag.is_null() {
                        return Some(tag);
                    }
                    inst = LLVMGetNextInstruction(inst);
                }
                block = LLVMGetNextBasicBlock(block);
            }
            function = LLVMGetNextFunction(function);
        }
        None
    }
}

/// Operand `k` of metadata node `node`.
///
/// # Safety
///
/// `node` is a live metadata node (as a value).
unsafe fn operand(node: LLVMValueRef, k: usize) -> Option<LLVMValueRef> {
    // SAFETY: the caller's contract; the buffer holds every operand.
    unsafe {
        let n = LLVMGetMDNodeNumOperands(node) as usize;
        if k >= n {
            return None;
        }
        let mut operands = vec![std::ptr::null_mut(); n];
        LLVMGetMDNodeOperands(node, operands.as_mut_ptr());
        Some(operands[k]).filter(|o| !o.is_null())
    }
}

/// The scalar type just below the root on `scalar`'s chain of parents
/// ("omnipotent char"): a scalar type node is `(name, parent, offset)`,
/// the root `(name)`.
///
/// # Safety
///
/// `scalar` is a live metadata node.
unsafe fn below_root(mut scalar: LLVMValueRef) -> Option<LLVMValueRef> {
    // SAFETY: the caller's contract; parents are live nodes.
    unsafe {
        for _ in 0..64 {
            let parent = operand(scalar, 1)?;
            if LLVMGetMDNodeNumOperands(parent) == 1 {
                return Some(scalar);
            }
            if LLVMGetMDNodeNumOperands(parent) != 3 {
                return None;
            }
            scalar = parent;
        }
        None
    }
}
