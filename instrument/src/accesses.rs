//! Checking the program's loads and stores against the buffers of its
//! pending nonblocking requests, for `buffer-reuse` (seed 000
//! §2.3.6.3, Fig 2.9; SCENARIOS.md E9): a store into the buffer of a
//! pending send, or any access to the buffer of a pending receive, is a
//! bug MPI does not report.
//!
//! Before each access that may touch such a buffer this pass inserts
//!
//! ```text
//!   %hi = load i64, ptr @mbhybrid_pending_hi        ; 0: nothing pending
//!   %below = icmp ult i64 ADDR, %hi
//!   br i1 %below, label %mbh.range, label %mbh.cont   ; rarely taken
//! mbh.range:
//!   %lo = load i64, ptr @mbhybrid_pending_lo
//!   %above = icmp ugt i64 ADDR + SIZE, %lo
//!   br i1 %above, label %mbh.gap, label %mbh.cont
//! mbh.gap:                                            ; inside the hull
//!   %glo = load i64, ptr @mbhybrid_pending_gap_lo
//!   %ghi = load i64, ptr @mbhybrid_pending_gap_hi      ; 0: no gap
//!   %in = and (icmp uge ADDR, %glo), (icmp ule ADDR + SIZE, %ghi)
//!   br i1 %in, label %mbh.cont, label %mbh.check
//! mbh.check:
//!   call void @mbhybrid_check_access(ptr ADDR, i64 SIZE, i32 KIND), !dbg ACCESS
//!   br label %mbh.cont
//! mbh.cont:
//!   ACCESS ...
//! ```
//!
//! (`lo..hi` is the hull of the pending buffers, kept by the runtime, and
//! `gap_lo..gap_hi` the widest stretch inside it no buffer touches), so a
//! program with nothing pending pays one load and one predictable branch
//! per access, and one with requests pending calls the runtime only for
//! accesses inside the hull and outside its gap: the interior of an array
//! whose ghost cells are being received calls nothing. The call carries the access's debug location, so the
//! runtime's return address maps back to the access's line (as call sites
//! do, `runtime/src/callsite.rs`). `KIND` is [`READ`] or [`WRITE`].
//!
//! Which accesses are checked: every `load` and `store` of a defined
//! function, and the ranges of `llvm.memcpy`/`memmove` (source read,
//! destination written) and `llvm.memset` (written), except accesses
//! through a stack slot whose address never escapes (a local that is only
//! loaded and stored, directly or through `getelementptr`): no MPI call
//! can hold its address. Accesses to mbhybrid's own globals are skipped.
//!
//! # What this does not prove
//!
//! Code not compiled by mbhybrid (libraries, including libc's string
//! functions when not turned into the intrinsics above) is not
//! instrumented: its accesses are not checked. The check only reads the
//! runtime's table, so the program computes what it computed before.

use inkwell::basic_block::BasicBlock;
use inkwell::builder::Builder;
use inkwell::module::Linkage;
use inkwell::types::{BasicType, BasicTypeEnum, IntType};
use inkwell::values::{
    AsValueRef, BasicValue, BasicValueEnum, FunctionValue, GlobalValue, InstructionOpcode,
    InstructionValue, IntValue, PointerValue,
};
use inkwell::AddressSpace;
use llvm_sys::core::{
    LLVMAddIncoming, LLVMBuildPhi, LLVMCountIncoming, LLVMGetBasicBlockTerminator,
    LLVMGetFirstInstruction, LLVMGetFirstUse, LLVMGetIncomingBlock, LLVMGetIncomingValue,
    LLVMGetInstructionOpcode, LLVMGetNextInstruction, LLVMGetNextUse, LLVMGetNumOperands,
    LLVMGetNumSuccessors, LLVMGetOperand, LLVMGetSuccessor, LLVMGetUser,
    LLVMInstructionEraseFromParent, LLVMIsAInstruction, LLVMPositionBuilderBefore,
    LLVMReplaceAllUsesWith, LLVMTypeOf,
};
use llvm_sys::debuginfo::{LLVMInstructionGetDebugLoc, LLVMInstructionSetDebugLoc};
use llvm_sys::prelude::LLVMValueRef;
use llvm_sys::LLVMOpcode;
use mbh_static::Module;

use crate::InstrumentError;

/// The runtime's check of one access.
pub const CHECK_ACCESS: &str = "mbhybrid_check_access";
/// One past the highest byte of the pending buffers (`usize`; 0 when
/// nothing is pending).
pub const PENDING: &str = "mbhybrid_pending_hi";
/// The lowest byte of the pending buffers (`usize`).
pub const PENDING_LO: &str = "mbhybrid_pending_lo";
/// The first byte of the widest gap between pending buffers (`usize`).
pub const PENDING_GAP_LO: &str = "mbhybrid_pending_gap_lo";
/// One past the gap's last byte (`usize`; 0 when there is no gap).
pub const PENDING_GAP_HI: &str = "mbhybrid_pending_gap_hi";
/// `KIND` of a load (a read).
pub const READ: u64 = 0;
/// `KIND` of a store (a write).
pub const WRITE: u64 = 1;

/// One range the program touches: `size` bytes (a constant or a value
/// defined before `at`) from `address`, read or written, by `at`.
#[derive(Clone, Copy)]
struct Access<'ctx> {
    at: InstructionValue<'ctx>,
    address: PointerValue<'ctx>,
    size: Size<'ctx>,
    write: bool,
}

/// How many bytes an access covers.
#[derive(Clone, Copy)]
enum Size<'ctx> {
    /// The store size of a type.
    Of(BasicTypeEnum<'ctx>),
    /// An integer operand (of a memory intrinsic).
    Value(IntValue<'ctx>),
}

/// Inserts the checks before every access of `module` that may touch an
/// MPI buffer; returns how many it inserted. The module is verified
/// afterwards. Call it last: it splits blocks, which the other passes'
/// plans (made on the front end's blocks) do not expect.
pub fn insert_access_checks(module: &Module<'_>) -> Result<usize, InstrumentError> {
    let stays = crate::versioning::StaysUnchecked::of(module.llvm());
    insert_access_checks_with(module, &stays)
}

/// [`insert_access_checks`] for one module of a program whose calls that
/// cannot reach MPI were decided over all its modules (`stays`).
pub(crate) fn insert_access_checks_with(
    module: &Module<'_>,
    stays: &crate::versioning::StaysUnchecked,
) -> Result<usize, InstrumentError> {
    let accesses = accesses(module);
    if accesses.is_empty() {
        return Ok(0);
    }
    let checks = Checks::declare(module)?;
    // From the last access of the module to the first: each split moves
    // only the instructions after its access, which no later split moves
    // again.
    for access in accesses.iter().rev() {
        checks.before(access)?;
    }
    if crate::versioning::enabled() {
        let functions: Vec<FunctionValue<'_>> = module.llvm().get_functions().collect();
        crate::versioning::version_loops(&functions, checks.pending_hi, checks.tbaa, stays);
    }
    module.verify().map_err(InstrumentError::Verify)?;
    Ok(accesses.len())
}

/// Every checked access of `module`, in module order.
fn accesses<'ctx>(module: &Module<'ctx>) -> Vec<Access<'ctx>> {
    let mut found = Vec::new();
    for function in module.llvm().get_functions() {
        for block in function.get_basic_blocks() {
            let mut next = block.get_first_instruction();
            while let Some(inst) = next {
                next = inst.get_next_instruction();
                found.extend(
                    accesses_of(inst)
                        .into_iter()
                        .filter(|a| may_be_shared(a.address)),
                );
            }
        }
    }
    found
}

/// The ranges instruction `inst` touches (none for most instructions).
fn accesses_of(inst: InstructionValue<'_>) -> Vec<Access<'_>> {
    let pointer = |n: u32| match inst.get_operand(n).and_then(|o| o.left()) {
        Some(BasicValueEnum::PointerValue(p)) => Some(p),
        _ => None,
    };
    let int = |n: u32| match inst.get_operand(n).and_then(|o| o.left()) {
        Some(BasicValueEnum::IntValue(v)) => Some(v),
        _ => None,
    };
    let access = |address, size, write| Access {
        at: inst,
        address,
        size,
        write,
    };
    match inst.get_opcode() {
        InstructionOpcode::Load => {
            let ty = BasicTypeEnum::try_from(inst.get_type()).ok();
            pointer(0)
                .zip(ty)
                .map(|(p, ty)| vec![access(p, Size::Of(ty), false)])
                .unwrap_or_default()
        }
        InstructionOpcode::Store => {
            let ty = inst
                .get_operand(0)
                .and_then(|o| o.left())
                .map(|v| v.get_type());
            pointer(1)
                .zip(ty)
                .map(|(p, ty)| vec![access(p, Size::Of(ty), true)])
                .unwrap_or_default()
        }
        InstructionOpcode::Call => {
            let callee = crate::allocations::direct_callee(inst).unwrap_or_default();
            let copies = callee.starts_with("llvm.memcpy") || callee.starts_with("llvm.memmove");
            // Only these calls' operands are read: others (`llvm.dbg.*`)
            // have metadata operands inkwell cannot represent.
            if !copies && !callee.starts_with("llvm.memset") {
                return Vec::new();
            }
            let Some(len) = int(2) else {
                return Vec::new();
            };
            let mut found = Vec::new();
            if copies {
                found.extend(pointer(1).map(|p| access(p, Size::Value(len), false)));
            }
            found.extend(pointer(0).map(|p| access(p, Size::Value(len), true)));
            found
        }
        _ => Vec::new(),
    }
}

/// Whether memory at `address` may be a buffer an MPI call was given: not
/// in another address space, not mbhybrid's own global, not a stack slot
/// whose address never escapes.
fn may_be_shared(address: PointerValue<'_>) -> bool {
    if address.get_type().get_address_space() != AddressSpace::default() {
        return false;
    }
    let base = strip_gep(address.as_value_ref());
    // SAFETY: `base` is a live value of the module.
    unsafe {
        let name = value_name(base);
        if llvm_sys::core::LLVMIsAGlobalVariable(base).is_null() {
            !is_opcode(base, LLVMOpcode::LLVMAlloca) || escapes(base)
        } else {
            !name.starts_with("mbhybrid_")
        }
    }
}

/// `value` with the `getelementptr`s (instructions or constants) it is
/// computed through taken off.
fn strip_gep(mut value: LLVMValueRef) -> LLVMValueRef {
    // SAFETY: operand 0 of a GEP is its base pointer, a live value.
    unsafe {
        while is_opcode(value, LLVMOpcode::LLVMGetElementPtr)
            || (!llvm_sys::core::LLVMIsAConstantExpr(value).is_null()
                && llvm_sys::core::LLVMGetConstOpcode(value) == LLVMOpcode::LLVMGetElementPtr)
        {
            value = LLVMGetOperand(value, 0);
        }
    }
    value
}

/// Whether `value` is an instruction with `opcode`.
///
/// # Safety
///
/// `value` is a live value.
pub(crate) unsafe fn is_opcode(value: LLVMValueRef, opcode: LLVMOpcode) -> bool {
    // SAFETY: the caller's contract; the opcode is read only from an
    // instruction.
    unsafe { !LLVMIsAInstruction(value).is_null() && LLVMGetInstructionOpcode(value) == opcode }
}

/// Whether the address `pointer` (an `alloca`, or a GEP of one) is used
/// other than as the address of a load or store: passed to a call, stored
/// as a value, compared, converted. When unsure, it escapes.
///
/// # Safety
///
/// `pointer` is a live value.
unsafe fn escapes(pointer: LLVMValueRef) -> bool {
    // SAFETY: the use list of a live value; each user is live.
    unsafe {
        let mut used = LLVMGetFirstUse(pointer);
        while !used.is_null() {
            let user = LLVMGetUser(used);
            used = LLVMGetNextUse(used);
            let fine = if is_opcode(user, LLVMOpcode::LLVMLoad) {
                true
            } else if is_opcode(user, LLVMOpcode::LLVMStore) {
                // Stored *to*, not stored as a value.
                LLVMGetOperand(user, 0) != pointer
            } else if is_opcode(user, LLVMOpcode::LLVMGetElementPtr) {
                LLVMGetOperand(user, 0) == pointer && !escapes(user)
            } else if is_opcode(user, LLVMOpcode::LLVMCall) {
                value_name(llvm_sys::core::LLVMGetCalledValue(user)).starts_with("llvm.lifetime.")
            } else {
                false
            };
            if !fine {
                return true;
            }
        }
        false
    }
}

/// The name of `value` (empty when it has none).
///
/// # Safety
///
/// `value` is null or a live value.
unsafe fn value_name(value: LLVMValueRef) -> String {
    if value.is_null() {
        return String::new();
    }
    let mut len = 0;
    // SAFETY: the caller's contract; LLVM returns `len` bytes.
    unsafe {
        let name = llvm_sys::core::LLVMGetValueName2(value, &mut len);
        if name.is_null() {
            return String::new();
        }
        String::from_utf8_lossy(std::slice::from_raw_parts(name.cast::<u8>(), len)).into_owned()
    }
}

/// The runtime's check function and counter, declared in one module.
struct Checks<'ctx> {
    check: FunctionValue<'ctx>,
    pending_hi: GlobalValue<'ctx>,
    pending_lo: GlobalValue<'ctx>,
    gap_lo: GlobalValue<'ctx>,
    gap_hi: GlobalValue<'ctx>,
    builder: Builder<'ctx>,
    i64_type: IntType<'ctx>,
    i32_type: IntType<'ctx>,
    /// `!prof` branch weights: the check is rarely taken.
    unlikely: inkwell::values::MetadataValue<'ctx>,
    prof_kind: u32,
    /// The hull words' TBAA type, when the module has TBAA.
    tbaa: Option<crate::hull_tbaa::HullTbaa>,
}

impl<'ctx> Checks<'ctx> {
    fn declare(module: &Module<'ctx>) -> Result<Self, InstrumentError> {
        let llvm = module.llvm();
        let context = llvm.get_context();
        let pointer = context.ptr_type(AddressSpace::default());
        let (i64_type, i32_type) = (context.i64_type(), context.i32_type());
        let check = match llvm.get_function(CHECK_ACCESS) {
            Some(existing) => existing,
            None if llvm.get_global(CHECK_ACCESS).is_some() => {
                return Err(InstrumentError::NameClash {
                    name: CHECK_ACCESS,
                    what: "a global variable",
                })
            }
            None => llvm.add_function(
                CHECK_ACCESS,
                context
                    .void_type()
                    .fn_type(&[pointer.into(), i64_type.into(), i32_type.into()], false),
                Some(Linkage::External),
            ),
        };
        declare_effects(&context, check);
        let global = |name: &'static str| match llvm.get_global(name) {
            Some(existing) => Ok(existing),
            None if llvm.get_function(name).is_some() => Err(InstrumentError::NameClash {
                name,
                what: "a function",
            }),
            None => Ok(llvm.add_global(i64_type, Some(AddressSpace::default()), name)),
        };
        let (pending_hi, pending_lo) = (global(PENDING)?, global(PENDING_LO)?);
        let (gap_lo, gap_hi) = (global(PENDING_GAP_LO)?, global(PENDING_GAP_HI)?);
        let weights = [
            context.metadata_string("branch_weights").into(),
            i32_type.const_int(1, false).into(),
            i32_type.const_int(1 << 20, false).into(),
        ];
        Ok(Checks {
            check,
            pending_hi,
            pending_lo,
            gap_lo,
            gap_hi,
            builder: context.create_builder(),
            i64_type,
            i32_type,
            unlikely: context.metadata_node(&weights),
            prof_kind: context.get_kind_id("prof"),
            tbaa: crate::hull_tbaa::HullTbaa::of(llvm.as_mut_ptr()),
        })
    }

    /// Splits `access`'s block before it and puts the check in between.
    fn before(&self, access: &Access<'ctx>) -> Result<(), InstrumentError> {
        let Some(block) = access.at.get_parent() else {
            return Ok(());
        };
        let context = block.get_context();
        let range = context.insert_basic_block_after(block, "mbh.range");
        let gap = context.insert_basic_block_after(range, "mbh.gap");
        let check = context.insert_basic_block_after(gap, "mbh.check");
        let cont = context.insert_basic_block_after(check, "mbh.cont");
        self.move_tail(access.at, block, cont);

        self.builder.position_at_end(block);
        let size = match access.size {
            Size::Of(ty) => ty.size_of(),
            Size::Value(v) => self
                .builder
                .build_int_z_extend_or_bit_cast(v, self.i64_type, "mbh.len")
                .ok(),
        }
        .ok_or_else(|| InstrumentError::Builder("an access of unsized type".to_string()))?;
        let address = self
            .builder
            .build_ptr_to_int(access.address, self.i64_type, "mbh.addr")
            .map_err(builder_error)?;
        let hi = self.load(self.pending_hi, "mbh.hi")?;
        let below = self
            .builder
            .build_int_compare(inkwell::IntPredicate::ULT, address, hi, "mbh.below")
            .map_err(builder_error)?;
        let branch = self
            .builder
            .build_conditional_branch(below, range, cont)
            .map_err(builder_error)?;
        // Not fatal when refused: the weights only help the optimizer.
        let _ = branch.set_metadata(self.unlikely, self.prof_kind);

        self.builder.position_at_end(range);
        let lo = self.load(self.pending_lo, "mbh.lo")?;
        let end = self
            .builder
            .build_int_add(address, size, "mbh.end")
            .map_err(builder_error)?;
        let above = self
            .builder
            .build_int_compare(inkwell::IntPredicate::UGT, end, lo, "mbh.above")
            .map_err(builder_error)?;
        self.builder
            .build_conditional_branch(above, gap, cont)
            .map_err(builder_error)?;

        self.builder.position_at_end(gap);
        let in_gap = self.within_gap(address, end)?;
        self.builder
            .build_conditional_branch(in_gap, cont, check)
            .map_err(builder_error)?;

        self.builder.position_at_end(check);
        let kind = self
            .i32_type
            .const_int(if access.write { WRITE } else { READ }, false);
        let call = self
            .builder
            .build_call(
                self.check,
                &[access.address.into(), size.into(), kind.into()],
                "",
            )
            .map_err(builder_error)?;
        // The runtime reads the access's line from the call's return
        // address.
        copy_debug_loc(access.at.as_value_ref(), call.as_value_ref());
        self.builder
            .build_unconditional_branch(cont)
            .map_err(builder_error)?;
        Ok(())
    }

    /// Whether `address..end` lies wholly in the gap between the pending
    /// buffers (false when there is none: `gap_hi` is 0).
    fn within_gap(
        &self,
        address: IntValue<'ctx>,
        end: IntValue<'ctx>,
    ) -> Result<IntValue<'ctx>, InstrumentError> {
        let gap_lo = self.load(self.gap_lo, "mbh.glo")?;
        let gap_hi = self.load(self.gap_hi, "mbh.ghi")?;
        let compare = |predicate, a, b, name| {
            self.builder
                .build_int_compare(predicate, a, b, name)
                .map_err(builder_error)
        };
        let from = compare(inkwell::IntPredicate::UGE, address, gap_lo, "mbh.gfrom")?;
        let to = compare(inkwell::IntPredicate::ULE, end, gap_hi, "mbh.gto")?;
        self.builder
            .build_and(from, to, "mbh.ingap")
            .map_err(builder_error)
    }

    /// A load of the runtime's `usize` `global`.
    fn load(
        &self,
        global: GlobalValue<'ctx>,
        name: &str,
    ) -> Result<IntValue<'ctx>, InstrumentError> {
        let value = self
            .builder
            .build_load(self.i64_type, global.as_pointer_value(), name)
            .map_err(builder_error)?;
        if let Some(load) = value.as_instruction_value() {
            let _ = load.set_alignment(8);
            if let Some(tbaa) = &self.tbaa {
                // SAFETY: a load just built in this module.
                unsafe { tbaa.tag(load.as_value_ref()) };
            }
        }
        Ok(value.into_int_value())
    }

    /// Moves `first` and every instruction after it in `block` to the
    /// (empty) block `cont`, and makes the moved terminator's successors'
    /// `phi`s take from `cont` what they took from `block`.
    fn move_tail(
        &self,
        first: InstructionValue<'ctx>,
        block: BasicBlock<'ctx>,
        cont: BasicBlock<'ctx>,
    ) {
        self.builder.position_at_end(cont);
        let mut next = Some(first);
        let mut last = None;
        while let Some(inst) = next {
            next = inst.get_next_instruction();
            // Re-inserting names the instruction anew: keep its name.
            let name = inst
                .get_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            inst.remove_from_basic_block();
            self.builder.insert_instruction(&inst, Some(&name));
            last = Some(inst);
        }
        if let Some(terminator) = last.filter(|t| t.is_terminator()) {
            retarget_phis(terminator, block, cont);
        }
    }
}

/// Tells LLVM what the runtime's check may do: read any memory, write
/// only memory the program cannot reach (the runtime's own records), never
/// unwind. So a check does not clobber the hull words it compared with,
/// and their loads can be hoisted out of loops and merged with a
/// versioning guard's (`versioning.rs`). True of `check_access` in
/// `runtime/src/access.rs`, which records a finding and returns.
fn declare_effects<'ctx>(context: &inkwell::context::ContextRef<'ctx>, check: FunctionValue<'ctx>) {
    use inkwell::attributes::{Attribute, AttributeLoc};
    // LLVM 16's `MemoryEffects` encoding: two bits (1 read, 2 write) per
    // location kind: argument memory, inaccessible memory, other memory.
    const READ: u64 = 1;
    const READ_WRITE: u64 = 3;
    let memory = READ | (READ_WRITE << 2) | (READ << 4);
    for (name, value) in [("memory", memory), ("nounwind", 0)] {
        let kind = Attribute::get_named_enum_kind_id(name);
        check.add_attribute(
            AttributeLoc::Function,
            context.create_enum_attribute(kind, value),
        );
    }
}

/// Whether `branch` is the first branch of a check made by
/// [`Checks::before`] (`br (ADDR < hi), range, cont`, `hi` loaded from
/// `pending_hi`).
///
/// # Safety
///
/// `branch` is a live instruction.
pub(crate) unsafe fn is_check_entry(branch: LLVMValueRef, pending_hi: LLVMValueRef) -> bool {
    // SAFETY: the caller's contract; the operands read exist for a
    // conditional branch and a compare.
    unsafe {
        if !is_opcode(branch, LLVMOpcode::LLVMBr) || LLVMGetNumOperands(branch) != 3 {
            return false;
        }
        let below = LLVMGetOperand(branch, 0);
        if !is_opcode(below, LLVMOpcode::LLVMICmp) {
            return false;
        }
        let hi = LLVMGetOperand(below, 1);
        is_opcode(hi, LLVMOpcode::LLVMLoad) && LLVMGetOperand(hi, 0) == pending_hi
    }
}

/// Takes out the check that `entry` begins (a branch for which
/// [`is_check_entry`] holds): `entry` becomes a branch to the access,
/// and the check's three blocks (`mbh.range`, `mbh.gap`, `mbh.check`,
/// reached only from it) are deleted.
///
/// # Safety
///
/// `entry` is such a branch, and no other branch leads to its check's
/// blocks.
pub(crate) unsafe fn drop_check(entry: LLVMValueRef) {
    // SAFETY: the caller's contract; the successor indices follow the
    // shape `Checks::before` builds: entry (range, cont), range (gap,
    // cont), gap (cont, check), check (cont).
    unsafe {
        let block = llvm_sys::core::LLVMGetInstructionParent(entry);
        let range = LLVMGetSuccessor(entry, 0);
        let cont = LLVMGetSuccessor(entry, 1);
        let gap = LLVMGetSuccessor(LLVMGetBasicBlockTerminator(range), 0);
        let check = LLVMGetSuccessor(LLVMGetBasicBlockTerminator(gap), 1);
        LLVMInstructionEraseFromParent(entry);
        let context = llvm_sys::core::LLVMGetTypeContext(LLVMTypeOf(
            llvm_sys::core::LLVMGetBasicBlockParent(block),
        ));
        let builder = llvm_sys::core::LLVMCreateBuilderInContext(context);
        llvm_sys::core::LLVMPositionBuilderAtEnd(builder, block);
        llvm_sys::core::LLVMBuildBr(builder, cont);
        llvm_sys::core::LLVMDisposeBuilder(builder);
        for dead in [range, gap, check] {
            llvm_sys::core::LLVMDeleteBasicBlock(dead);
        }
    }
}

/// For every successor of `terminator` (now in `to`, before in `from`),
/// rebuilds its `phi`s with `to` where they had `from`.
fn retarget_phis(terminator: InstructionValue<'_>, from: BasicBlock<'_>, to: BasicBlock<'_>) {
    // SAFETY: `terminator` is a live terminator; successor indices are
    // below its count.
    unsafe {
        let t = terminator.as_value_ref();
        let mut done: Vec<llvm_sys::prelude::LLVMBasicBlockRef> = Vec::new();
        for k in 0..LLVMGetNumSuccessors(t) {
            let successor = LLVMGetSuccessor(t, k);
            if done.contains(&successor) {
                continue; // a switch with several cases to one block
            }
            done.push(successor);
            retarget_block_phis(successor, from.as_mut_ptr(), to.as_mut_ptr());
        }
    }
}

/// Rebuilds the `phi`s of `block` with `to` where they had `from`: the
/// LLVM C API cannot change a phi's incoming block in place.
///
/// # Safety
///
/// `block` is a live block; each phi is live, rebuilt with the same type
/// and incoming values before the old one is replaced and erased.
pub(crate) unsafe fn retarget_block_phis(
    block: llvm_sys::prelude::LLVMBasicBlockRef,
    from: llvm_sys::prelude::LLVMBasicBlockRef,
    to: llvm_sys::prelude::LLVMBasicBlockRef,
) {
    // SAFETY: the caller's contract.
    unsafe {
        let context = llvm_sys::core::LLVMGetTypeContext(LLVMTypeOf(
            llvm_sys::core::LLVMGetBasicBlockParent(block),
        ));
        let builder = llvm_sys::core::LLVMCreateBuilderInContext(context);
        let mut phis = Vec::new();
        let mut inst = LLVMGetFirstInstruction(block);
        while !inst.is_null() && is_opcode(inst, LLVMOpcode::LLVMPHI) {
            phis.push(inst);
            inst = LLVMGetNextInstruction(inst);
        }
        for old in phis {
            let n = LLVMCountIncoming(old);
            let mut values = Vec::new();
            let mut blocks = Vec::new();
            for k in 0..n {
                let incoming = LLVMGetIncomingBlock(old, k);
                values.push(LLVMGetIncomingValue(old, k));
                blocks.push(if incoming == from { to } else { incoming });
            }
            LLVMPositionBuilderBefore(builder, old);
            let new = LLVMBuildPhi(builder, LLVMTypeOf(old), c"".as_ptr());
            LLVMAddIncoming(new, values.as_mut_ptr(), blocks.as_mut_ptr(), n);
            LLVMReplaceAllUsesWith(old, new);
            copy_debug_loc(old, new);
            let mut len = 0;
            let name = llvm_sys::core::LLVMGetValueName2(old, &mut len);
            let name = std::slice::from_raw_parts(name.cast::<u8>(), len).to_vec();
            LLVMInstructionEraseFromParent(old);
            // Erased first, so that the new phi takes the name unchanged.
            llvm_sys::core::LLVMSetValueName2(new, name.as_ptr().cast(), len);
        }
        llvm_sys::core::LLVMDisposeBuilder(builder);
    }
}

fn copy_debug_loc(from: LLVMValueRef, to: LLVMValueRef) {
    // SAFETY: both are live instructions of the same function; the
    // location is null or a DILocation of that function.
    unsafe {
        let loc = LLVMInstructionGetDebugLoc(from);
        if !loc.is_null() {
            LLVMInstructionSetDebugLoc(to, loc);
        }
    }
}

fn builder_error(e: inkwell::builder::BuilderError) -> InstrumentError {
    InstrumentError::Builder(e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use inkwell::context::Context;

    const IR: &str = r#"
declare void @MPI_Isend(ptr)
declare void @llvm.memcpy.p0.p0.i64(ptr, ptr, i64, i1)

define i32 @f(ptr %out, i1 %c) {
entry:
  %i = alloca i32
  %buf = alloca [4 x i32]
  store i32 0, ptr %i
  call void @MPI_Isend(ptr %buf)
  %p = getelementptr [4 x i32], ptr %buf, i64 0, i64 1
  store i32 7, ptr %p
  %v = load i32, ptr %i
  call void @llvm.memcpy.p0.p0.i64(ptr %out, ptr %buf, i64 16, i1 false)
  br i1 %c, label %a, label %b
a:
  br label %b
b:
  %r = phi i32 [ %v, %entry ], [ 1, %a ]
  ret i32 %r
}
"#;

    #[test]
    fn escaping_accesses_are_checked_and_private_locals_are_not() {
        let context = Context::create();
        let module = Module::parse(&context, "f.ll", IR.as_bytes()).unwrap();
        // The store into `buf` (its address went to MPI_Isend) and the
        // memcpy's two ranges; not `i`, whose address never escapes.
        assert_eq!(insert_access_checks(&module).unwrap(), 3);
        let text = module.llvm().print_to_string().to_string();
        let checks: Vec<&str> = text
            .lines()
            .map(str::trim)
            .filter(|l| l.starts_with("call void @mbhybrid_check_access"))
            .collect();
        assert_eq!(
            checks,
            [
                "call void @mbhybrid_check_access(ptr %p, i64 ptrtoint (ptr getelementptr (i32, ptr null, i32 1) to i64), i32 1)",
                "call void @mbhybrid_check_access(ptr %out, i64 16, i32 1)",
                "call void @mbhybrid_check_access(ptr %buf, i64 16, i32 0)",
            ]
        );
        // The phi now takes the value from the block the branch moved to.
        assert!(text.contains("phi i32 [ %v, %mbh.cont"), "{text}");
        assert!(text.contains("!prof"), "{text}");
        // Each check is skipped for an access inside the gap between the
        // pending buffers.
        assert_eq!(
            text.matches("load i64, ptr @mbhybrid_pending_gap_hi")
                .count(),
            3,
            "{text}"
        );
    }
}
