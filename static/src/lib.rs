//! Static analysis of the LLVM IR of an MPI program.
//!
//! This crate owns reading a program's IR (the `clang -g -emit-llvm` output
//! of each source, or an `.ll`/`.bc` file given directly) and answering
//! questions about it:
//!
//! * [`Module`] loads textual IR or bitcode and checks it with the LLVM
//!   verifier; failures are [`LoadError`]s that name the file.
//! * [`mpi_call_sites`] lists every direct call to an `MPI_`/`PMPI_`
//!   function with its [`SourceLocation`]; [`indirect_calls`] lists the
//!   calls through function pointers, whose callee it cannot know.
//! * [`analyze`] analyses the modules of one program together: the
//!   [`StaticReport`](mbh_trace::static_report::StaticReport) that
//!   `mbhybrid analyze` prints and `OUT.mbh.json` stores (loops, wildcard
//!   sites, buffer errors, zones, collectives some ranks may skip, the
//!   loop-abstraction decisions with their reasons) and, per module, the
//!   [`ModulePlan`] `mbh-instrument` follows. Its doc has an example.
//!
//! It must not change the IR, run a compiler or touch MPI: rewriting and
//! compiling belong to `mbh-instrument` (which also compiles
//! [`MpiConstants::PROBE_C`] to learn the constants), running programs to
//! the runtime. Anything other crates must agree on (the site table, the
//! static report) lives in `mbh-trace`. It reports what it finds as data
//! and prints nothing.
//!
//! Read more: `docs/design/static.md` (what each phase computes, what this
//! does not prove, limitations); the `analysis` module's doc lists the
//! phases in the order [`analyze`] runs them.
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
