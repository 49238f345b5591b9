//! Static analysis of the LLVM IR of an MPI program.
//!
//! This crate owns reading a program's IR (the `clang -g -emit-llvm` output
//! of each source, or an `.ll`/`.bc` file given directly) and answering
//! questions about it. Today that is one question: where does the program
//! call MPI? Later milestones add the control-flow graph, loops, the call
//! graph and zones here.
//!
//! * [`Module`] loads textual IR or bitcode into an inkwell
//!   [`Context`](inkwell::context::Context) and checks it with the LLVM
//!   verifier; failures are [`LoadError`]s that name the file.
//! * [`mpi_call_sites`] lists every direct call to a function whose name
//!   starts with `MPI_` or `PMPI_`, in module order, with the enclosing
//!   function, the [`SourceLocation`] from the call's debug location, and
//!   the instruction itself, so that `mbh-instrument` can insert code
//!   before it.
//! * [`indirect_calls`] lists the calls through function pointers, whose
//!   callee this crate cannot know.
//!
//! This crate reads IR and never changes it, never runs a compiler and
//! never touches MPI: rewriting belongs to `mbh-instrument`, running
//! programs to the runtime. Anything other crates must agree on (the site
//! table) lives in `mbh-trace`.
//!
//! # Example
//!
//! ```
//! use inkwell::context::Context;
//! use mbh_static::{mpi_call_sites, Module};
//!
//! let ir = r#"
//! declare i32 @MPI_Barrier(i32)
//! define void @sync() {
//!   %r = call i32 @MPI_Barrier(i32 1140850688)
//!   ret void
//! }
//! "#;
//! let context = Context::create();
//! let module = Module::parse(&context, "sync.ll", ir.as_bytes())?;
//! let sites = mpi_call_sites(&module);
//! assert_eq!(sites.len(), 1);
//! assert_eq!(sites[0].callee, "MPI_Barrier");
//! assert_eq!(sites[0].function, "sync");
//! assert!(sites[0].location.is_none()); // no `-g`, no line
//! # Ok::<(), mbh_static::LoadError>(())
//! ```
//!
//! # What this does not prove
//!
//! The list of call sites is exactly the direct calls present in the IR it
//! was given. It says nothing about which of them run, how often, or with
//! which arguments, and nothing about MPI calls made from code that is not
//! in the IR (libraries, objects linked in later).
//!
//! # Limitations
//!
//! * Calls through function pointers are not resolved: an indirect call may
//!   reach an MPI function and is then not a site ([`indirect_calls`] lists
//!   them so a caller can say so).
//! * A call is an MPI call by its callee's name alone. A program that
//!   defines its own `MPI_` functions has those counted too.
//! * Only LLVM 16 IR loads; bitcode from another LLVM version may be
//!   rejected.
//! * Locations are as the debug information recorded them: without `-g`
//!   there are none, and after inlining by an optimizer a location names
//!   the inlined function's line, not the caller's.
//! * Function names are the IR's symbol names, so C++ names are mangled.
#![deny(missing_docs)]

mod debug_loc;
mod error;
mod module;
mod sites;

pub use error::LoadError;
pub use module::Module;
pub use sites::{indirect_calls, mpi_call_sites, IndirectCall, MpiCallSite, SourceLocation};
