//! Inserting the `MPI_Pcontrol` markers that `mbh-static` planned.

use std::collections::HashMap;

use inkwell::basic_block::BasicBlock;
use inkwell::builder::Builder;
use inkwell::values::{AsValueRef, FunctionValue, InstructionOpcode, InstructionValue};
use llvm_sys::core::{
    LLVMAddIncoming, LLVMBuildPhi, LLVMCountIncoming, LLVMGetIncomingBlock, LLVMGetIncomingValue,
    LLVMGetNumSuccessors, LLVMGetSuccessor, LLVMGetValueName2, LLVMInstructionEraseFromParent,
    LLVMPositionBuilderBefore, LLVMReplaceAllUsesWith, LLVMSetSuccessor, LLVMSetValueName2,
    LLVMTypeOf,
};
use llvm_sys::debuginfo::{LLVMInstructionGetDebugLoc, LLVMInstructionSetDebugLoc};
use llvm_sys::prelude::LLVMValueRef;
use mbh_static::{Marker, Module, ModulePlan, Placement};
use mbh_trace::static_report::PCONTROL_ZONE;

use crate::InstrumentError;

/// The MPI function markers call.
pub const PCONTROL: &str = "MPI_Pcontrol";

/// What [`insert_markers`] inserted.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct MarkerCounts {
    /// `MPI_Pcontrol` calls on loop entry and exit edges.
    pub loop_markers: usize,
    /// Critical edges split to hold them.
    pub split_edges: usize,
    /// `MPI_Pcontrol(7303, zone, k)` calls.
    pub zone_markers: usize,
}

/// Inserts the loop markers of `plan` (on every entry and exit edge of
/// each marked loop, splitting critical edges) and, for each zone with a
/// bound in `zone_bounds` (zone id to k), `MPI_Pcontrol(7303, zone, k)`
/// right after the call that opens it. The module is verified afterwards.
///
/// Each inserted call is `call i32 (i32, ...) @MPI_Pcontrol(i32 LEVEL, i32
/// ID[, i32 K])` with the debug location of the edge's branch (or of the
/// zone's call). `MPI_Pcontrol` is declared when the module does not
/// declare it yet. The calls only inform the runtime (the MPI library's
/// own `MPI_Pcontrol` does nothing), and a split edge only adds a block
/// that branches on, so the program computes what it computed before.
///
/// Call it before [`insert_site_ids`](crate::insert_site_ids), so that no
/// marker lands between a site id's store and its call.
pub fn insert_markers<'ctx>(
    module: &Module<'ctx>,
    plan: &ModulePlan<'ctx>,
    zone_bounds: &HashMap<u32, i64>,
) -> Result<MarkerCounts, InstrumentError> {
    let mut counts = MarkerCounts::default();
    let zones: Vec<_> = plan
        .zone_starts
        .iter()
        .filter_map(|z| zone_bounds.get(&z.zone).map(|k| (z, *k)))
        .collect();
    if plan.edges.is_empty() && zones.is_empty() {
        return Ok(counts);
    }
    let llvm = module.llvm();
    let context = llvm.get_context();
    let i32_type = context.i32_type();
    let pcontrol = pcontrol(module)?;
    let builder = context.create_builder();
    let call = |builder: &Builder<'ctx>, args: &[i64], loc_from: Option<LLVMValueRef>| {
        let args: Vec<_> = args
            .iter()
            .map(|a| i32_type.const_int(*a as u64, true).into())
            .collect();
        let site = builder
            .build_call(pcontrol, &args, "")
            .map_err(|e| InstrumentError::Builder(e.to_string()))?;
        if let Some(from) = loc_from {
            copy_debug_loc(from, site.as_value_ref());
        }
        Ok::<(), InstrumentError>(())
    };
    let emit = |builder: &Builder<'ctx>, markers: &[Marker], loc: Option<LLVMValueRef>| {
        for m in markers {
            call(builder, &[i64::from(m.level), i64::from(m.id)], loc)?;
        }
        Ok::<(), InstrumentError>(())
    };

    for edge in &plan.edges {
        let terminator = edge
            .from
            .get_terminator()
            .ok_or_else(|| InstrumentError::Builder("a block without terminator".into()))?;
        let loc = Some(terminator.as_value_ref());
        match edge.placement {
            Placement::EndOfSource => {
                builder.position_before(&terminator);
                emit(&builder, &edge.markers, loc)?;
            }
            Placement::StartOfTarget => {
                let first = first_non_phi(edge.to).ok_or_else(|| {
                    InstrumentError::Builder("a block without instructions".into())
                })?;
                builder.position_before(&first);
                emit(&builder, &edge.markers, loc)?;
            }
            Placement::Split => {
                let middle = context.insert_basic_block_after(edge.from, "mbh.edge");
                builder.position_at_end(middle);
                emit(&builder, &edge.markers, loc)?;
                let br = builder
                    .build_unconditional_branch(edge.to)
                    .map_err(|e| InstrumentError::Builder(e.to_string()))?;
                copy_debug_loc(terminator.as_value_ref(), br.as_value_ref());
                redirect(terminator, edge.from, edge.to, middle);
                counts.split_edges += 1;
            }
        }
        counts.loop_markers += edge.markers.len();
    }

    for (zone, k) in zones {
        let Some(next) = zone.after.get_next_instruction() else {
            continue;
        };
        builder.position_before(&next);
        call(
            &builder,
            &[i64::from(PCONTROL_ZONE), i64::from(zone.zone), k],
            Some(zone.after.as_value_ref()),
        )?;
        counts.zone_markers += 1;
    }
    module.verify().map_err(InstrumentError::Verify)?;
    Ok(counts)
}

/// The module's `MPI_Pcontrol`, declared `i32 (i32, ...)` if absent.
fn pcontrol<'ctx>(module: &Module<'ctx>) -> Result<FunctionValue<'ctx>, InstrumentError> {
    let llvm = module.llvm();
    let i32_type = llvm.get_context().i32_type();
    if let Some(f) = llvm.get_function(PCONTROL) {
        let ty = f.get_type();
        let params = ty.get_param_types();
        if ty.is_var_arg() && params.len() == 1 && params[0] == i32_type.into() {
            return Ok(f);
        }
        return Err(InstrumentError::NameClash {
            name: PCONTROL,
            what: "a function whose type is not `int (int, ...)`",
        });
    }
    if llvm.get_global(PCONTROL).is_some() {
        return Err(InstrumentError::NameClash {
            name: PCONTROL,
            what: "a global variable",
        });
    }
    let ty = i32_type.fn_type(&[i32_type.into()], true);
    Ok(llvm.add_function(PCONTROL, ty, None))
}

/// The first instruction of `block` a call may go before: past its `phi`s
/// and its `landingpad` (the plan puts an exit marker at the start of a
/// landing pad that an exception leaves a loop to).
fn first_non_phi(block: BasicBlock<'_>) -> Option<InstructionValue<'_>> {
    let mut inst = block.get_first_instruction();
    while let Some(i) = inst {
        if !matches!(
            i.get_opcode(),
            InstructionOpcode::Phi | InstructionOpcode::LandingPad
        ) {
            return Some(i);
        }
        inst = i.get_next_instruction();
    }
    None
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

/// Points every successor `to` of `terminator` (in block `from`) at
/// `middle`, and makes `to`'s `phi`s take from `middle` what they took
/// from `from`.
fn redirect<'ctx>(
    terminator: InstructionValue<'ctx>,
    from: BasicBlock<'ctx>,
    to: BasicBlock<'ctx>,
    middle: BasicBlock<'ctx>,
) {
    // SAFETY: `terminator` is the live `br`/`switch` of `from`, or the
    // `invoke` whose normal edge goes to `to` (the plan only splits those;
    // an `invoke`'s unwind edge, to a landing pad, is never `to`);
    // successor indices are below their count; the phis are live instructions of `to`, rebuilt with the same type and
    // incoming values before the old ones are replaced and erased.
    unsafe {
        let t = terminator.as_value_ref();
        for k in 0..LLVMGetNumSuccessors(t) {
            if LLVMGetSuccessor(t, k) == to.as_mut_ptr() {
                LLVMSetSuccessor(t, k, middle.as_mut_ptr());
            }
        }
        let mut phis: Vec<LLVMValueRef> = Vec::new();
        let mut inst = to.get_first_instruction();
        while let Some(i) = inst {
            if i.get_opcode() != InstructionOpcode::Phi {
                break;
            }
            phis.push(i.as_value_ref());
            inst = i.get_next_instruction();
        }
        if phis.is_empty() {
            return;
        }
        let context = to.get_context();
        let builder = context.create_builder();
        for old in phis {
            let n = LLVMCountIncoming(old);
            let mut values = Vec::new();
            let mut blocks = Vec::new();
            let mut middle_done = false;
            for k in 0..n {
                let mut block = LLVMGetIncomingBlock(old, k);
                if block == from.as_mut_ptr() {
                    // One entry per edge: the edges from `from` are now
                    // one edge from `middle`.
                    if middle_done {
                        continue;
                    }
                    middle_done = true;
                    block = middle.as_mut_ptr();
                }
                values.push(LLVMGetIncomingValue(old, k));
                blocks.push(block);
            }
            LLVMPositionBuilderBefore(builder.as_mut_ptr(), old);
            let mut len = 0usize;
            let name_ptr = LLVMGetValueName2(old, &mut len);
            let name = if name_ptr.is_null() {
                Vec::new()
            } else {
                std::slice::from_raw_parts(name_ptr.cast::<u8>(), len).to_vec()
            };
            let new = LLVMBuildPhi(builder.as_mut_ptr(), LLVMTypeOf(old), c"".as_ptr());
            LLVMAddIncoming(
                new,
                values.as_mut_ptr(),
                blocks.as_mut_ptr(),
                values.len() as u32,
            );
            LLVMReplaceAllUsesWith(old, new);
            LLVMInstructionEraseFromParent(old);
            if !name.is_empty() {
                LLVMSetValueName2(new, name.as_ptr().cast(), name.len());
            }
        }
    }
}
