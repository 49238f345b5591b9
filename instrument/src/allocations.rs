//! Telling the runtime the size of each heap block the program makes, for
//! the buffer check of `buffer-overflow` (`runtime/src/heap.rs`): after each direct
//! call of an allocator, `mbhybrid_note_alloc(block, size)`; before each
//! call that frees, `mbhybrid_note_free(block)`.
//!
//! Only `call` instructions are followed: an allocation by `invoke` (a C++
//! `new` inside a `try`) would need its note on the normal edge, and is
//! left unchecked rather than made complicated. The notes only write the
//! runtime's own table, so the program computes what it computed before.

use inkwell::builder::Builder;
use inkwell::module::Linkage;
use inkwell::types::BasicMetadataTypeEnum;
use inkwell::values::{AnyValue, BasicValueEnum, InstructionOpcode, IntValue};
use inkwell::values::{AsValueRef, BasicMetadataValueEnum, FunctionValue, InstructionValue};
use inkwell::AddressSpace;
use llvm_sys::core::{LLVMGetCalledValue, LLVMGetValueName2, LLVMIsAFunction};
use mbh_static::Module;

use crate::InstrumentError;

/// The runtime's function that notes an allocation.
pub const NOTE_ALLOC: &str = "mbhybrid_note_alloc";
/// The runtime's function that notes a free.
pub const NOTE_FREE: &str = "mbhybrid_note_free";

/// What a call does to the heap.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum HeapCall {
    /// Returns a block of the size of argument `size`.
    Alloc { size: u32 },
    /// `calloc`: `count * size` bytes.
    Calloc,
    /// `realloc`: frees argument 0, returns a block of argument 1's size.
    Realloc,
    /// Frees argument 0.
    Free,
}

fn heap_call(name: &str) -> Option<HeapCall> {
    Some(match name {
        "malloc" | "_Znwm" | "_Znam" => HeapCall::Alloc { size: 0 },
        "aligned_alloc" => HeapCall::Alloc { size: 1 },
        "calloc" => HeapCall::Calloc,
        "realloc" => HeapCall::Realloc,
        "free" | "_ZdlPv" | "_ZdaPv" | "_ZdlPvm" | "_ZdaPvm" => HeapCall::Free,
        _ => return None,
    })
}

/// The name of the function `call` calls directly, if it is a `call`.
pub(crate) fn direct_callee(call: InstructionValue<'_>) -> Option<String> {
    if call.get_opcode() != InstructionOpcode::Call {
        return None;
    }
    // SAFETY: `call` is a live call instruction; the called value is a
    // value of the same module, checked to be a function before its name
    // is read.
    unsafe {
        let callee = LLVMGetCalledValue(call.as_value_ref());
        if callee.is_null() || LLVMIsAFunction(callee).is_null() {
            return None;
        }
        let mut len = 0;
        let name = LLVMGetValueName2(callee, &mut len);
        let bytes = std::slice::from_raw_parts(name.cast::<u8>(), len);
        Some(String::from_utf8_lossy(bytes).into_owned())
    }
}

/// Every direct call of an allocator or a free in `module`'s defined
/// functions, in module order.
fn heap_calls<'ctx>(module: &Module<'ctx>) -> Vec<(HeapCall, InstructionValue<'ctx>)> {
    let mut found = Vec::new();
    for function in module.llvm().get_functions() {
        for block in function.get_basic_blocks() {
            let mut next = block.get_first_instruction();
            while let Some(inst) = next {
                next = inst.get_next_instruction();
                if let Some(kind) = direct_callee(inst).as_deref().and_then(heap_call) {
                    found.push((kind, inst));
                }
            }
        }
    }
    found
}

/// Inserts the notes around every allocator and free call of `module`;
/// returns how many calls it noted. The module is verified afterwards.
pub fn insert_allocation_notes(module: &Module<'_>) -> Result<usize, InstrumentError> {
    let calls = heap_calls(module);
    if calls.is_empty() {
        return Ok(0);
    }
    let notes = Notes::declare(module)?;
    for &(kind, call) in &calls {
        notes.around(kind, call)?;
    }
    module.verify().map_err(InstrumentError::Verify)?;
    Ok(calls.len())
}

/// The two runtime functions, declared in one module, and a builder.
struct Notes<'ctx> {
    alloc: FunctionValue<'ctx>,
    free: FunctionValue<'ctx>,
    builder: Builder<'ctx>,
    size_type: inkwell::types::IntType<'ctx>,
}

impl<'ctx> Notes<'ctx> {
    fn declare(module: &Module<'ctx>) -> Result<Self, InstrumentError> {
        let llvm = module.llvm();
        let context = llvm.get_context();
        let pointer = context.ptr_type(AddressSpace::default());
        let size_type = context.i64_type();
        let declare = |name: &'static str, params: &[BasicMetadataTypeEnum<'ctx>]| match llvm
            .get_function(name)
        {
            Some(existing) => Ok(existing),
            None if llvm.get_global(name).is_some() => Err(InstrumentError::NameClash {
                name,
                what: "a global variable",
            }),
            None => Ok(llvm.add_function(
                name,
                context.void_type().fn_type(params, false),
                Some(Linkage::External),
            )),
        };
        Ok(Notes {
            alloc: declare(NOTE_ALLOC, &[pointer.into(), size_type.into()])?,
            free: declare(NOTE_FREE, &[pointer.into()])?,
            builder: context.create_builder(),
            size_type,
        })
    }

    fn around(&self, kind: HeapCall, call: InstructionValue<'ctx>) -> Result<(), InstrumentError> {
        let arg = |n: u32| -> Option<BasicValueEnum<'ctx>> {
            call.get_operand(n).and_then(|operand| operand.left())
        };
        if matches!(kind, HeapCall::Free | HeapCall::Realloc) {
            if let Some(block) = arg(0) {
                self.builder.position_before(&call);
                self.call(self.free, &[block.into()])?;
            }
        }
        if kind == HeapCall::Free {
            return Ok(());
        }
        // Everything below goes after the call: its result, and any size
        // arithmetic, which uses only the call's arguments.
        self.position_after(call);
        let size = match kind {
            HeapCall::Alloc { size } => arg(size).and_then(|v| self.size(v)),
            HeapCall::Realloc => arg(1).and_then(|v| self.size(v)),
            HeapCall::Calloc => match (
                arg(0).and_then(|v| self.size(v)),
                arg(1).and_then(|v| self.size(v)),
            ) {
                (Some(count), Some(each)) => Some(
                    self.builder
                        .build_int_mul(count, each, "mbh.size")
                        .map_err(builder_error)?,
                ),
                _ => None,
            },
            HeapCall::Free => None,
        };
        let (Some(size), Ok(block)) = (size, BasicValueEnum::try_from(call.as_any_value_enum()))
        else {
            return Ok(());
        };
        self.call(self.alloc, &[block.into(), size.into()])
    }

    /// Places the builder right after `call` (a `call` is never a
    /// terminator, so an instruction follows it).
    fn position_after(&self, call: InstructionValue<'ctx>) {
        match call.get_next_instruction() {
            Some(next) => self.builder.position_before(&next),
            None => {
                if let Some(block) = call.get_parent() {
                    self.builder.position_at_end(block);
                }
            }
        }
    }

    /// `value` as a 64-bit size, when it is an integer.
    fn size(&self, value: BasicValueEnum<'ctx>) -> Option<IntValue<'ctx>> {
        let BasicValueEnum::IntValue(int) = value else {
            return None;
        };
        if int.get_type() == self.size_type {
            return Some(int);
        }
        self.builder
            .build_int_z_extend_or_bit_cast(int, self.size_type, "mbh.size")
            .ok()
    }

    fn call(
        &self,
        function: FunctionValue<'ctx>,
        args: &[BasicMetadataValueEnum<'ctx>],
    ) -> Result<(), InstrumentError> {
        self.builder
            .build_call(function, args, "")
            .map(|_| ())
            .map_err(builder_error)
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
declare ptr @malloc(i64)
declare ptr @calloc(i64, i64)
declare ptr @realloc(ptr, i64)
declare void @free(ptr)

define ptr @make(i32 %n) {
entry:
  %size = sext i32 %n to i64
  %a = call ptr @malloc(i64 %size)
  %b = call ptr @calloc(i64 10, i64 8)
  %c = call ptr @realloc(ptr %a, i64 400)
  call void @free(ptr %b)
  ret ptr %c
}
"#;

    #[test]
    fn every_allocation_and_free_is_noted_with_its_size() {
        let context = Context::create();
        let module = Module::parse(&context, "make.ll", IR.as_bytes()).unwrap();
        assert_eq!(insert_allocation_notes(&module).unwrap(), 4);
        let text = module.llvm().print_to_string().to_string();
        let lines: Vec<&str> = text
            .lines()
            .map(str::trim)
            .filter(|l| l.contains("call "))
            .collect();
        assert_eq!(
            lines,
            [
                "%a = call ptr @malloc(i64 %size)",
                "call void @mbhybrid_note_alloc(ptr %a, i64 %size)",
                "%b = call ptr @calloc(i64 10, i64 8)",
                "call void @mbhybrid_note_alloc(ptr %b, i64 80)",
                "call void @mbhybrid_note_free(ptr %a)",
                "%c = call ptr @realloc(ptr %a, i64 400)",
                "call void @mbhybrid_note_alloc(ptr %c, i64 400)",
                "call void @mbhybrid_note_free(ptr %b)",
                "call void @free(ptr %b)",
            ]
        );
    }
}
