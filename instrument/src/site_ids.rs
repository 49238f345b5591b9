//! Storing each MPI call's site id where the runtime reads it.

use inkwell::values::{AsValueRef, GlobalValue};
use inkwell::AddressSpace;
use llvm_sys::debuginfo::{LLVMInstructionGetDebugLoc, LLVMInstructionSetDebugLoc};
use mbh_static::{Module, MpiCallSite};

use crate::InstrumentError;

/// The runtime's site register: an `i32` (`u32` in Rust) global that
/// `libmbhybrid_rt.so` defines and exports, and into which instrumented
/// code stores a call's site id right before the call.
pub const SITE_GLOBAL: &str = "mbhybrid_site";

/// Inserts `store i32 ID, ptr @mbhybrid_site` right before each of `sites`'
/// calls, with ids `first_id`, `first_id + 1`, … in the order of `sites`,
/// and returns the id after the last one used.
///
/// `@mbhybrid_site` is declared as an external `i32` global when the module
/// has sites and does not declare it yet. Each store carries its call's debug location, so
/// a debugger or profiler attributes it to the MPI call's line. The store
/// writes only to the runtime's register, so the program computes exactly
/// what it computed before. The module is verified afterwards.
pub fn insert_site_ids<'ctx>(
    module: &Module<'ctx>,
    sites: &[MpiCallSite<'ctx>],
    first_id: u32,
) -> Result<u32, InstrumentError> {
    if sites.is_empty() {
        return Ok(first_id);
    }
    let llvm = module.llvm();
    let context = llvm.get_context();
    let i32_type = context.i32_type();
    let register = site_register(module)?;
    let builder = context.create_builder();
    let mut id = first_id;
    for site in sites {
        builder.position_before(&site.instruction);
        let store = builder
            .build_store(
                register.as_pointer_value(),
                i32_type.const_int(u64::from(id), false),
            )
            .map_err(|e| InstrumentError::Builder(e.to_string()))?;
        // SAFETY: both are live instructions of this module; the call's
        // debug location is null or a DILocation of the same function,
        // which LLVMInstructionSetDebugLoc accepts (null clears it).
        unsafe {
            let loc = LLVMInstructionGetDebugLoc(site.instruction.as_value_ref());
            LLVMInstructionSetDebugLoc(store.as_value_ref(), loc);
        }
        id += 1;
    }
    module.verify().map_err(InstrumentError::Verify)?;
    Ok(id)
}

/// The module's `@mbhybrid_site`, declared if absent.
fn site_register<'ctx>(module: &Module<'ctx>) -> Result<GlobalValue<'ctx>, InstrumentError> {
    let llvm = module.llvm();
    if llvm.get_function(SITE_GLOBAL).is_some() {
        return Err(InstrumentError::NameClash {
            name: SITE_GLOBAL,
            what: "a function",
        });
    }
    let i32_type = llvm.get_context().i32_type();
    match llvm.get_global(SITE_GLOBAL) {
        Some(global) if global.get_value_type() == i32_type.into() => Ok(global),
        Some(_) => Err(InstrumentError::NameClash {
            name: SITE_GLOBAL,
            what: "a global that is not a 32-bit integer",
        }),
        // No initializer and external linkage: a declaration, resolved
        // against the runtime at link time.
        None => Ok(llvm.add_global(i32_type, Some(AddressSpace::default()), SITE_GLOBAL)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use inkwell::context::Context;
    use inkwell::values::InstructionOpcode;
    use mbh_static::mpi_call_sites;

    const FIXTURE: &str = include_str!("../tests/fixtures/ring.ll");

    /// The `store` right before each site's call: `(id, same debug loc)`.
    fn stores_before_calls(module: &Module<'_>) -> Vec<(String, u64, bool)> {
        mpi_call_sites(module)
            .into_iter()
            .map(|site| {
                let store = site
                    .instruction
                    .get_previous_instruction()
                    .expect("a store");
                assert_eq!(store.get_opcode(), InstructionOpcode::Store, "{store}");
                let pointer = store.get_operand(1).unwrap().left().unwrap();
                assert_eq!(
                    pointer.into_pointer_value().get_name().to_str().unwrap(),
                    SITE_GLOBAL
                );
                let id = store
                    .get_operand(0)
                    .unwrap()
                    .left()
                    .unwrap()
                    .into_int_value()
                    .get_zero_extended_constant()
                    .unwrap();
                // SAFETY: live instructions of `module`.
                let same_loc = unsafe {
                    LLVMInstructionGetDebugLoc(store.as_value_ref())
                        == LLVMInstructionGetDebugLoc(site.instruction.as_value_ref())
                };
                (site.callee, id, same_loc)
            })
            .collect()
    }

    #[test]
    fn stores_ids_right_before_each_mpi_call() {
        let context = Context::create();
        let module = Module::parse(&context, "ring.ll", FIXTURE.as_bytes()).unwrap();
        let sites = mpi_call_sites(&module);
        assert_eq!(sites.len(), 6);
        let next = insert_site_ids(&module, &sites, 10).unwrap();
        assert_eq!(next, 16);
        module.verify().unwrap();
        let got = stores_before_calls(&module);
        let want: Vec<(String, u64, bool)> = [
            "MPI_Init",
            "MPI_Comm_rank",
            "MPI_Comm_size",
            "MPI_Send",
            "MPI_Recv",
            "MPI_Finalize",
        ]
        .iter()
        .zip(10..)
        .map(|(c, id)| (c.to_string(), id, true))
        .collect();
        assert_eq!(got, want);
        // One declaration of the register, external, no initializer.
        let global = module.llvm().get_global(SITE_GLOBAL).unwrap();
        assert!(global.is_declaration());
        let text = module.llvm().print_to_string().to_string();
        assert!(
            text.contains("@mbhybrid_site = external global i32"),
            "{text}"
        );
        // Non-MPI calls (printf, the helper) got nothing.
        assert_eq!(text.matches("store i32 1").count(), 6, "{text}");
    }

    #[test]
    fn reuses_an_existing_declaration() {
        let ir = format!("{FIXTURE}\n@{SITE_GLOBAL} = external global i32\n");
        let context = Context::create();
        let module = Module::parse(&context, "ring.ll", ir.as_bytes()).unwrap();
        let sites = mpi_call_sites(&module);
        insert_site_ids(&module, &sites, 1).unwrap();
        let text = module.llvm().print_to_string().to_string();
        assert_eq!(text.matches("@mbhybrid_site =").count(), 1, "{text}");
        assert!(!text.contains("mbhybrid_site.1"), "{text}");
    }

    #[test]
    fn refuses_a_clashing_name() {
        let ir = format!("{FIXTURE}\ndefine void @{SITE_GLOBAL}() {{\n  ret void\n}}\n");
        let context = Context::create();
        let module = Module::parse(&context, "ring.ll", ir.as_bytes()).unwrap();
        let sites = mpi_call_sites(&module);
        let err = insert_site_ids(&module, &sites, 1).unwrap_err();
        assert!(matches!(err, InstrumentError::NameClash { .. }), "{err}");

        let ir = format!("{FIXTURE}\n@{SITE_GLOBAL} = global i64 0\n");
        let module = Module::parse(&context, "ring2.ll", ir.as_bytes()).unwrap();
        let sites = mpi_call_sites(&module);
        assert!(insert_site_ids(&module, &sites, 1).is_err());
    }

    #[test]
    fn no_sites_no_change() {
        let context = Context::create();
        let ir = b"define void @f() {\n  ret void\n}\n";
        let module = Module::parse(&context, "empty.ll", ir).unwrap();
        let before = module.llvm().print_to_string().to_string();
        assert_eq!(insert_site_ids(&module, &[], 1).unwrap(), 1);
        assert_eq!(module.llvm().print_to_string().to_string(), before);
    }
}
