//! Loops that run unchecked while nothing is pending: the access checks
//! cost a load, a compare and a branch per access, and they keep the
//! optimizer from vectorizing the loop, although most of a program's
//! loops run while it has no nonblocking operation in flight
//! (BENCHMARKS.md, "Wildcard-free applications").
//!
//! A function none of whose calls can reach MPI is versioned whole: a
//! guard at its entry picks an unchecked copy of its body once per call
//! (its allocas stay, shared, in the entry block). In the other functions,
//! a loop that cannot change the pending table is *versioned*: its blocks
//! are cloned, and a guard before it reads `mbhybrid_pending_hi` once and
//! enters the clone when it is 0. In the clone every load of
//! `mbhybrid_pending_hi` is the constant 0 and each check is taken out;
//! the original, checked loop runs whenever anything is pending. Checks
//! of a checked callee inlined into a clone are deleted by the optimizer:
//! the hull's loads have a TBAA type of their own (`hull_tbaa.rs`) and the
//! check is declared not to write the program's memory, so they merge
//! with the guard's load, known to be 0 there.
//!
//! Only the MPI calls made by the thread in the loop change the table, so a
//! loop may be versioned when it makes no call that can reach MPI: every
//! call in it is an intrinsic, a known C library or C++ runtime function
//! (math, `mem*`/`str*`, allocation, `printf`), an MPI call that starts
//! and completes nothing (`MPI_Wtime`, `MPI_Comm_rank`, `MPI_Abort`), a
//! runtime helper of mbhybrid's own that watches nothing, or a function
//! defined in the program (any unit of the link) whose calls are all of
//! these ([`StaysUnchecked`]). Only the outermost such loop is versioned
//! (its inner loops are in its clone); `-O0` (`optnone`) code too, as the
//! clone's checks are taken out, not left to an optimizer.
//!
//! Threads: another thread can start an operation while this one is in
//! the loop. The runtime never lets `mbhybrid_pending_hi` rest at 0 once
//! MPI was initialised at a level above `MPI_THREAD_SINGLE` (it rests at
//! 1, below every address, so each check still finds nothing while
//! nothing is pending), and such programs always run the checked loops.
//!
//! A loop is left as it is (checked) when its shape is one this pass does
//! not clone: more than one edge enters its header from outside, a value
//! it computes is used after it other than by a `phi` of an exit block,
//! or it holds an `indirectbr` or `callbr`.

use std::collections::{HashMap, HashSet};

use inkwell::values::{AsValueRef, FunctionValue, GlobalValue};
use llvm_sys::core::{
    LLVMAddIncoming, LLVMAppendBasicBlockInContext, LLVMBasicBlockAsValue, LLVMBuildCondBr,
    LLVMBuildICmp, LLVMBuildLoad2, LLVMBuildPhi, LLVMConstInt, LLVMCountIncoming,
    LLVMCreateBuilderInContext, LLVMDisposeBuilder, LLVMGetBasicBlockParent,
    LLVMGetBasicBlockTerminator, LLVMGetCalledValue, LLVMGetFirstInstruction, LLVMGetFirstUse,
    LLVMGetIncomingBlock, LLVMGetIncomingValue, LLVMGetInstructionOpcode, LLVMGetInstructionParent,
    LLVMGetNextInstruction, LLVMGetNextUse, LLVMGetNumOperands, LLVMGetNumSuccessors,
    LLVMGetOperand, LLVMGetSuccessor, LLVMGetUser, LLVMGetValueName2,
    LLVMInsertIntoBuilderWithName, LLVMInstructionClone, LLVMIsAFunction, LLVMIsDeclaration,
    LLVMMoveBasicBlockAfter, LLVMPositionBuilderAtEnd, LLVMSetAlignment, LLVMSetOperand,
    LLVMSetSuccessor, LLVMTypeOf, LLVMValueAsBasicBlock,
};
use llvm_sys::prelude::{LLVMBasicBlockRef, LLVMBuilderRef, LLVMValueRef};
use llvm_sys::{LLVMIntPredicate, LLVMOpcode};

use crate::accesses::{drop_check, is_check_entry, is_opcode, retarget_block_phis};
use crate::hull_tbaa::HullTbaa;

mod loops;
mod stays;

pub(crate) use stays::StaysUnchecked;

/// The environment variable that turns versioning off
/// (`MBHYBRID_LOOP_VERSIONING=off`: every loop checked, as a benchmark's
/// baseline).
pub const ENV_LOOP_VERSIONING: &str = "MBHYBRID_LOOP_VERSIONING";

/// Whether loops are versioned (unless [`ENV_LOOP_VERSIONING`] is `off`).
pub(crate) fn enabled() -> bool {
    std::env::var(ENV_LOOP_VERSIONING).map_or(true, |v| v != "off")
}

/// Versions every loop of `module`'s functions that may run unchecked;
/// returns how many it versioned.
pub(crate) fn version_loops(
    functions: &[FunctionValue<'_>],
    pending_hi: GlobalValue<'_>,
    tbaa: Option<HullTbaa>,
    stays: &StaysUnchecked,
) -> usize {
    functions
        .iter()
        .filter(|f| f.count_basic_blocks() > 0)
        .map(|&f| version_function(f, pending_hi, tbaa, stays))
        .sum()
}

/// Versions the outermost loops of `function` that may run unchecked.
fn version_function(
    function: FunctionValue<'_>,
    pending_hi: GlobalValue<'_>,
    tbaa: Option<HullTbaa>,
    stays: &StaysUnchecked,
) -> usize {
    if stays.function(function.as_value_ref()) {
        // SAFETY: a live defined function of the module.
        return unsafe { version_whole(function, pending_hi.as_value_ref(), tbaa) };
    }
    let forest = loops::find(function);
    let mut versioned = 0;
    let mut todo: Vec<usize> = forest.outermost();
    while let Some(index) = todo.pop() {
        let body = &forest.loops[index];
        let pending = pending_hi.as_value_ref();
        if reads(body, pending) && runs_unchecked(body, stays) {
            // SAFETY: `body` holds live blocks of `function`, found just now
            // and not changed since (versioning one loop never touches the
            // blocks of a loop disjoint from it).
            if unsafe { Versioning::plan(body, pending, tbaa) }.map(|v| unsafe { v.apply() })
                == Some(())
            {
                versioned += 1;
                continue;
            }
        }
        todo.extend(forest.children(index));
    }
    versioned
}

/// Versions the whole body of `function`, none of whose calls can reach
/// MPI, when it holds checks: a new entry block keeps the allocas (static
/// stack slots must stay in the entry block, and both versions share
/// them) and the guard picks the checked or the unchecked body once per
/// call. A call of such a function from a loop's unchecked copy then runs
/// unchecked too, inlined or not. Returns 1 when it versioned.
///
/// # Safety
///
/// `function` is a live defined function.
unsafe fn version_whole(
    function: FunctionValue<'_>,
    pending_hi: LLVMValueRef,
    tbaa: Option<HullTbaa>,
) -> usize {
    // Nothing to version (and no entry block to add) without a check.
    let checked = function.get_basic_blocks().iter().any(|block| {
        block.get_instructions().any(|inst| {
            // SAFETY: a live instruction of the function.
            unsafe {
                let inst = inst.as_value_ref();
                is_opcode(inst, LLVMOpcode::LLVMLoad) && LLVMGetOperand(inst, 0) == pending_hi
            }
        })
    });
    if !checked {
        return 0;
    }
    // SAFETY: the caller's contract; the entry made is the function's
    // first block and only branches to the rest.
    unsafe {
        let entry = split_entry(function);
        let body = loops::Loop::whole_body(function, entry);
        match Versioning::plan(&body, pending_hi, tbaa) {
            Some(versioning) => {
                versioning.apply();
                1
            }
            None => 0,
        }
    }
}

/// Puts a new first block before `function`'s entry, holding its allocas
/// and a branch to the rest; returns it.
///
/// # Safety
///
/// `function` is a live function with a body.
unsafe fn split_entry(function: FunctionValue<'_>) -> LLVMBasicBlockRef {
    // SAFETY: the caller's contract; each alloca moved is the old entry's.
    unsafe {
        let old_entry = llvm_sys::core::LLVMGetFirstBasicBlock(function.as_value_ref());
        let context = llvm_sys::core::LLVMGetTypeContext(LLVMTypeOf(function.as_value_ref()));
        let entry = llvm_sys::core::LLVMInsertBasicBlockInContext(
            context,
            old_entry,
            c"mbh.entry".as_ptr(),
        );
        let builder = LLVMCreateBuilderInContext(context);
        LLVMPositionBuilderAtEnd(builder, entry);
        let mut inst = LLVMGetFirstInstruction(old_entry);
        while !inst.is_null() {
            let next = LLVMGetNextInstruction(inst);
            if is_opcode(inst, LLVMOpcode::LLVMAlloca) {
                // Removing the instruction drops its name: keep a copy.
                let mut len = 0;
                let name = std::ffi::CStr::from_ptr(LLVMGetValueName2(inst, &mut len)).to_owned();
                llvm_sys::core::LLVMInstructionRemoveFromParent(inst);
                LLVMInsertIntoBuilderWithName(builder, inst, name.as_ptr());
            }
            inst = next;
        }
        llvm_sys::core::LLVMBuildBr(builder, old_entry);
        LLVMDisposeBuilder(builder);
        entry
    }
}

/// Whether `body` loads `global` (it holds access checks).
fn reads(body: &loops::Loop, global: LLVMValueRef) -> bool {
    body.instructions().any(|inst| {
        // SAFETY: live instructions of the loop.
        unsafe { is_opcode(inst, LLVMOpcode::LLVMLoad) && LLVMGetOperand(inst, 0) == global }
    })
}

/// Whether no instruction of `body` can reach MPI (or cannot be cloned).
fn runs_unchecked(body: &loops::Loop, stays: &StaysUnchecked) -> bool {
    body.instructions().all(|inst| {
        // SAFETY: live instructions of the loop.
        unsafe {
            match LLVMGetInstructionOpcode(inst) {
                LLVMOpcode::LLVMCall | LLVMOpcode::LLVMInvoke => stays.call(inst),
                LLVMOpcode::LLVMIndirectBr | LLVMOpcode::LLVMCallBr => false,
                _ => true,
            }
        }
    })
}

/// The plan for one loop: what enters it, and where its values go.
struct Versioning<'a> {
    body: &'a loops::Loop,
    /// The one block outside the loop that branches to its header.
    entry: LLVMBasicBlockRef,
    pending_hi: LLVMValueRef,
    tbaa: Option<HullTbaa>,
}

impl<'a> Versioning<'a> {
    /// The plan, or `None` when the loop's shape is one this pass leaves
    /// checked.
    ///
    /// # Safety
    ///
    /// `body` holds live blocks of one function.
    unsafe fn plan(
        body: &'a loops::Loop,
        pending_hi: LLVMValueRef,
        tbaa: Option<HullTbaa>,
    ) -> Option<Self> {
        let [entry] = body.entries.as_slice() else {
            return None;
        };
        // SAFETY: the caller's contract.
        if unsafe { edges_between(*entry, body.header) != 1 || used_outside(body) } {
            return None;
        }
        Some(Versioning {
            body,
            entry: *entry,
            pending_hi,
            tbaa,
        })
    }

    /// Clones the loop, and puts the guard that picks a version between
    /// its entry and its header.
    ///
    /// # Safety
    ///
    /// As [`Versioning::plan`], which made `self`.
    unsafe fn apply(self) {
        // SAFETY: live blocks and instructions of one function; every
        // value made here is inserted into it before the next is made.
        unsafe {
            let header = self.body.header;
            let function = LLVMGetBasicBlockParent(header);
            let context = llvm_sys::core::LLVMGetTypeContext(LLVMTypeOf(function));
            let builder = LLVMCreateBuilderInContext(context);
            let guard = LLVMAppendBasicBlockInContext(context, function, c"mbh.version".as_ptr());
            LLVMMoveBasicBlockAfter(guard, self.entry);
            let map = self.clone_blocks(builder, guard);
            self.add_exit_incomings(&map);
            LLVMPositionBuilderAtEnd(builder, guard);
            let i64_type = llvm_sys::core::LLVMInt64TypeInContext(context);
            let hi = LLVMBuildLoad2(builder, i64_type, self.pending_hi, c"mbh.hi".as_ptr());
            LLVMSetAlignment(hi, 8);
            if let Some(tbaa) = &self.tbaa {
                tbaa.tag(hi);
            }
            let zero = LLVMConstInt(i64_type, 0, 0);
            let none = LLVMBuildICmp(
                builder,
                LLVMIntPredicate::LLVMIntEQ,
                hi,
                zero,
                c"mbh.none".as_ptr(),
            );
            let fast = LLVMValueAsBasicBlock(map[&LLVMBasicBlockAsValue(header)]);
            LLVMBuildCondBr(builder, none, fast, header);
            retarget_block_phis(header, self.entry, guard);
            let term = LLVMGetBasicBlockTerminator(self.entry);
            for k in 0..LLVMGetNumSuccessors(term) {
                if LLVMGetSuccessor(term, k) == header {
                    LLVMSetSuccessor(term, k, guard);
                }
            }
            LLVMDisposeBuilder(builder);
        }
    }

    /// Clones every block of the loop; returns the map from each block
    /// (as a value) and instruction to its clone. In the clone, a load of
    /// `mbhybrid_pending_hi` is the constant 0, and `llvm.dbg.value`
    /// calls are left out (they name values of the original).
    ///
    /// # Safety
    ///
    /// As [`Versioning::apply`].
    unsafe fn clone_blocks(
        &self,
        builder: LLVMBuilderRef,
        guard: LLVMBasicBlockRef,
    ) -> HashMap<LLVMValueRef, LLVMValueRef> {
        // SAFETY: the caller's contract.
        unsafe {
            let function = LLVMGetBasicBlockParent(self.body.header);
            let context = llvm_sys::core::LLVMGetTypeContext(LLVMTypeOf(function));
            let zero = LLVMConstInt(llvm_sys::core::LLVMInt64TypeInContext(context), 0, 0);
            let mut map = HashMap::new();
            let mut clones = Vec::new();
            let mut phis = Vec::new();
            let mut entries = Vec::new();
            for &block in &self.body.blocks {
                let copy = LLVMAppendBasicBlockInContext(context, function, c"mbh.fast".as_ptr());
                map.insert(LLVMBasicBlockAsValue(block), LLVMBasicBlockAsValue(copy));
                LLVMPositionBuilderAtEnd(builder, copy);
                let mut inst = LLVMGetFirstInstruction(block);
                while !inst.is_null() {
                    if is_opcode(inst, LLVMOpcode::LLVMLoad)
                        && LLVMGetOperand(inst, 0) == self.pending_hi
                    {
                        map.insert(inst, zero);
                    } else if is_opcode(inst, LLVMOpcode::LLVMPHI) {
                        let phi = LLVMBuildPhi(builder, LLVMTypeOf(inst), c"".as_ptr());
                        map.insert(inst, phi);
                        phis.push((inst, phi));
                    } else if !is_debug_value(inst) {
                        let clone = LLVMInstructionClone(inst);
                        let mut len = 0;
                        let name = LLVMGetValueName2(inst, &mut len);
                        LLVMInsertIntoBuilderWithName(builder, clone, name);
                        map.insert(inst, clone);
                        clones.push(clone);
                        if is_check_entry(inst, self.pending_hi) {
                            entries.push(clone);
                        }
                    }
                    inst = LLVMGetNextInstruction(inst);
                }
            }
            for clone in clones {
                for k in 0..LLVMGetNumOperands(clone) as u32 {
                    if let Some(&to) = map.get(&LLVMGetOperand(clone, k)) {
                        LLVMSetOperand(clone, k, to);
                    }
                }
            }
            // The clone runs while nothing is pending: its checks go, so
            // that it is unchecked whether or not the optimizer runs.
            for entry in entries {
                drop_check(entry);
            }
            for (original, phi) in phis {
                for k in 0..LLVMCountIncoming(original) {
                    let mut value = LLVMGetIncomingValue(original, k);
                    let from = LLVMGetIncomingBlock(original, k);
                    value = *map.get(&value).unwrap_or(&value);
                    let mut block = if from == self.entry {
                        guard
                    } else {
                        LLVMValueAsBasicBlock(map[&LLVMBasicBlockAsValue(from)])
                    };
                    LLVMAddIncoming(phi, &mut value, &mut block, 1);
                }
            }
            map
        }
    }

    /// Gives every `phi` of a block the loop exits to the clone's values,
    /// from the clone's blocks.
    ///
    /// # Safety
    ///
    /// As [`Versioning::apply`]; `map` is [`Versioning::clone_blocks`]'s.
    unsafe fn add_exit_incomings(&self, map: &HashMap<LLVMValueRef, LLVMValueRef>) {
        // SAFETY: the caller's contract.
        unsafe {
            for &exit in self.body.exits() {
                let mut phi = LLVMGetFirstInstruction(exit);
                while !phi.is_null() && is_opcode(phi, LLVMOpcode::LLVMPHI) {
                    for k in 0..LLVMCountIncoming(phi) {
                        let from = LLVMGetIncomingBlock(phi, k);
                        let Some(&copy) = map.get(&LLVMBasicBlockAsValue(from)) else {
                            continue;
                        };
                        let value = LLVMGetIncomingValue(phi, k);
                        let mut value = *map.get(&value).unwrap_or(&value);
                        let mut block = LLVMValueAsBasicBlock(copy);
                        LLVMAddIncoming(phi, &mut value, &mut block, 1);
                    }
                    phi = LLVMGetNextInstruction(phi);
                }
            }
        }
    }
}

/// How many of `from`'s successor slots are `to` (a `switch` may have
/// several: the guard would then need a `phi` per case).
///
/// # Safety
///
/// `from` is a live block with a terminator.
unsafe fn edges_between(from: LLVMBasicBlockRef, to: LLVMBasicBlockRef) -> u32 {
    // SAFETY: the caller's contract.
    unsafe {
        let term = LLVMGetBasicBlockTerminator(from);
        (0..LLVMGetNumSuccessors(term))
            .filter(|&k| LLVMGetSuccessor(term, k) == to)
            .count() as u32
    }
}

/// Whether a value the loop computes is used outside it, other than by a
/// `phi` of an exit block on an edge from the loop.
///
/// # Safety
///
/// `body` holds live blocks.
unsafe fn used_outside(body: &loops::Loop) -> bool {
    let inside: HashSet<LLVMBasicBlockRef> = body.blocks.iter().copied().collect();
    body.instructions().any(|inst| {
        // SAFETY: the use list of a live instruction; users are live.
        unsafe {
            let mut used = LLVMGetFirstUse(inst);
            while !used.is_null() {
                let user = LLVMGetUser(used);
                used = LLVMGetNextUse(used);
                let at = LLVMGetInstructionParent(user);
                if inside.contains(&at) {
                    continue;
                }
                if !is_opcode(user, LLVMOpcode::LLVMPHI)
                    || !phi_takes_from_loop(user, inst, &inside)
                {
                    return true;
                }
            }
            false
        }
    })
}

/// Whether every incoming `value` of `phi` comes from a block in `inside`.
///
/// # Safety
///
/// `phi` is a live `phi`.
unsafe fn phi_takes_from_loop(
    phi: LLVMValueRef,
    value: LLVMValueRef,
    inside: &HashSet<LLVMBasicBlockRef>,
) -> bool {
    // SAFETY: the caller's contract.
    unsafe {
        (0..LLVMCountIncoming(phi)).all(|k| {
            LLVMGetIncomingValue(phi, k) != value || inside.contains(&LLVMGetIncomingBlock(phi, k))
        })
    }
}

/// Whether `inst` is a call of `llvm.dbg.value`.
///
/// # Safety
///
/// `inst` is a live instruction.
unsafe fn is_debug_value(inst: LLVMValueRef) -> bool {
    // SAFETY: the caller's contract; the called value of a call is live.
    unsafe {
        if !is_opcode(inst, LLVMOpcode::LLVMCall) {
            return false;
        }
        let callee = LLVMGetCalledValue(inst);
        if LLVMIsAFunction(callee).is_null() || LLVMIsDeclaration(callee) == 0 {
            return false;
        }
        let mut len = 0;
        let name = LLVMGetValueName2(callee, &mut len);
        std::slice::from_raw_parts(name.cast::<u8>(), len).starts_with(b"llvm.dbg.value")
    }
}

#[cfg(test)]
mod tests;
