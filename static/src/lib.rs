//! Static analysis of the LLVM IR of an MPI program.
//!
//! This crate owns reading a program's IR (the `clang -g -emit-llvm` output
//! of each source, or an `.ll`/`.bc` file given directly) and answering
//! questions about it:
//!
//! * [`Module`] loads textual IR or bitcode into an inkwell
//!   [`Context`](inkwell::context::Context) and checks it with the LLVM
//!   verifier; failures are [`LoadError`]s that name the file.
//! * [`mpi_call_sites`] lists every direct call to a function whose name
//!   starts with `MPI_` or `PMPI_`, in module order, with the enclosing
//!   function, the [`SourceLocation`] from the call's debug location, and
//!   the instruction itself; [`indirect_calls`] lists the calls through
//!   function pointers, whose callee this crate cannot know.
//! * [`analyze`] analyses the modules of one program together and returns
//!   a [`StaticReport`](mbh_trace::static_report::StaticReport) (what
//!   `mbhybrid analyze` prints and `OUT.mbh.json` stores) and, per module,
//!   the [`ModulePlan`] `mbh-instrument` follows: loops, where pointers
//!   point, MPI call classes with their resolved sources and tags,
//!   wildcard sites, buffer errors, zones, collectives some ranks may skip,
//!   and the loop-abstraction decisions with their reasons. The phases are
//!   listed, in the order [`analyze`] runs them, in the `analysis`
//!   module's doc; what each computes is in `docs/design/static.md`.
//!
//! This crate reads IR and never changes it, never runs a compiler and
//! never touches MPI: rewriting belongs to `mbh-instrument` (which also
//! compiles [`MpiConstants::PROBE_C`] to learn the constants), running
//! programs to the runtime. Anything other crates must agree on (the site
//! table, the static report) lives in `mbh-trace`.
//!
//! # Example
//!
//! ```
//! use inkwell::context::Context;
//! use mbh_static::{analyze, mpi_call_sites, AnalysisInput, ConstValue, Module, MpiConstants};
//! use mbh_trace::static_report::LoopDecision;
//!
//! let ir = r#"
//! declare i32 @MPI_Recv(ptr, i32, i32, i32, i32, i32, ptr)
//! declare i32 @MPI_Barrier(i32)
//! define void @master(i32 %n) {
//! entry:
//!   %value = alloca i32
//!   br label %loop
//! loop:
//!   %i = phi i32 [ 1, %entry ], [ %next, %loop ]
//!   %r = call i32 @MPI_Recv(ptr %value, i32 1, i32 7, i32 -2, i32 0, i32 1, ptr null)
//!   %next = add i32 %i, 1
//!   %more = icmp slt i32 %next, %n
//!   br i1 %more, label %loop, label %done
//! done:
//!   %b = call i32 @MPI_Barrier(i32 1)
//!   ret void
//! }
//! "#;
//! let context = Context::create();
//! let module = Module::parse(&context, "master.ll", ir.as_bytes())?;
//! assert_eq!(mpi_call_sites(&module).len(), 2);
//!
//! // The installed MPI's values (`mbh-instrument` reads them from mpi.h).
//! let consts = MpiConstants {
//!     any_source: ConstValue::Int(-2),
//!     any_tag: ConstValue::Int(-1),
//!     proc_null: ConstValue::Int(-1),
//!     undefined: ConstValue::Int(-32766),
//!     comm_world: ConstValue::Int(1),
//!     comm_self: ConstValue::Int(2),
//!     status_size: 20,
//!     status_source: 8,
//!     status_tag: 12,
//!     datatypes: Vec::new(),
//! };
//! let source = std::path::PathBuf::from("master.ll");
//! let inputs = [AnalysisInput { module: &module, source: &source }];
//! let analysis = analyze(&inputs, &consts, std::path::Path::new("."));
//! let report = &analysis.report;
//! assert_eq!(report.wildcards[0].source, "MPI_ANY_SOURCE");
//! assert_eq!(report.loops[0].decision, LoopDecision::Abstract);
//! assert_eq!(report.zones[0].opened_by, "MPI_Barrier");
//! // One entry edge and one exit edge get markers.
//! assert_eq!(analysis.modules[0].edges.len(), 2);
//! # Ok::<(), mbh_static::LoadError>(())
//! ```
//!
//! What this does not prove, Limitations: `docs/design/static.md`.
#![deny(missing_docs)]

mod analysis;
mod balance;
mod buffers;
mod cfg;
mod consts;
mod control_dep;
mod debug_loc;
mod divergence;
mod dwarf;
mod error;
mod ir;
mod module;
mod mpi;
mod pointers;
mod sites;
mod slot_discipline;
mod taint;

pub use analysis::{
    analyze, Analysis, AnalysisInput, EdgeMarkers, Marker, ModulePlan, Placement, ZoneStart,
};
pub use consts::{ConstValue, ConstantsError, Datatype, DatatypeClass, MpiConstants};
pub use error::LoadError;
pub use module::Module;
pub use sites::{indirect_calls, mpi_call_sites, IndirectCall, MpiCallSite, SourceLocation};
