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
//!   a [`StaticReport`](mbh_trace::static_report::StaticReport) (the format
//!   `mbhybrid analyze` prints and `OUT.mbh.json` stores) plus, per module,
//!   the [`ModulePlan`] `mbh-instrument` follows. It computes, per function
//!   (in parallel, with rayon):
//!   - the control-flow graph and its dominator tree (petgraph);
//!   - natural loops (a back edge goes to a block that dominates its
//!     source; loops sharing a header are one loop) with their nesting and
//!     source lines (from clang's `!llvm.loop` locations);
//!   - irreducible control flow (cycles left once back edges are removed),
//!     for which **no** loop is claimed;
//!   - where each pointer points (the `pointers` module): one table per
//!     function, solved once by a worklist over a lattice of height four
//!     and shared by the taint, loop and divergence analyses, so that their
//!     cost stays linear however deep `phi` chains and pointer variables
//!     nest;
//!   - every MPI call's class (send, receive, probe, completion,
//!     collective, communicator, datatype, other) and, for receives and
//!     probes, the source and tag resolved to the installed MPI's
//!     constants ([`MpiConstants`]) through casts, `phi`/`select`, local
//!     variables (an `alloca` only loaded and stored), constant globals
//!     and the arguments of `static` functions whose every caller is
//!     known. Wildcard sites are receives and probes whose source is or may
//!     be `MPI_ANY_SOURCE` or whose tag is or may be `MPI_ANY_TAG`
//!     (anything not resolved to a constant may be), and `MPI_Waitany`,
//!     `MPI_Testany`, `MPI_Waitsome`, `MPI_Testsome`;
//!   - every buffer argument against its datatype and count (issue 18,
//!     [`StaticReport::buffer_errors`](mbh_trace::static_report::StaticReport::buffer_errors)):
//!     the object the buffer points into is found through casts, offsets
//!     and pointer variables, its C type read from debug information, and
//!     a predefined datatype that clearly disagrees with it (`int` with
//!     `MPI_DOUBLE`), or a constant count that reaches past its end, is
//!     reported; anything uncertain is left silent (see the `buffers`
//!     module);
//!
//!   and, over the call graph (petgraph; calls through pointers marked
//!   unknown):
//!   - which functions contain wildcard sites, directly or through calls;
//!   - which always reach a collective (every path from entry to a return
//!     passes a blocking collective, a collective communicator
//!     constructor, `MPI_Init`/`MPI_Finalize`, or a call to such a
//!     function): their calls end zones;
//!   - zones: one per zone boundary call (`MPI_Finalize` ends a zone but
//!     opens none), from just after it to the next boundary, named
//!     `file:line` by that call;
//!   - collectives some ranks may skip (issue 19,
//!     [`StaticReport::divergent_collectives`](mbh_trace::static_report::StaticReport::divergent_collectives)):
//!     every collective call site that is control-dependent (post-dominator
//!     tree, Ferrante-Ottenstein-Warren), in its function or through all
//!     of its function's callers, on a branch whose condition depends on
//!     the rank or on received data (a value-dependence analysis over the
//!     same memory objects as the taint analysis below; what `MPI_Bcast`
//!     and `MPI_Allreduce` write is uniform), and the branches on program
//!     input (`argv`, `getenv`, `rand`, reads) that decide MPI calls
//!     ([`StaticReport::input_branches`](mbh_trace::static_report::StaticReport::input_branches));
//!   - the loop abstraction choice: a loop with wildcard sites (directly or
//!     through calls) is abstracted when the outcomes of those sites (the
//!     data received, the status's source and tag, `Waitany`'s index)
//!     decide no branch, reach no MPI call after the loop, and do not leave
//!     the function (returned, stored to globals or parameters, passed to a
//!     function the analysis does not follow); a store indexed only by the
//!     sender, such as `results[status.MPI_SOURCE] = value`, does not
//!     count, because its result is the same in any order. Each decision
//!     comes with its reason in words ("loop at app.c:42 abstracted: the
//!     sender only indexes `results`", "not abstracted: the received value
//!     decides the branch at app.c:50").
//!
//!   Each of these is a phase of its own, one function each, grouped by
//!   idea in the files of the `analysis` module (reading the IR, who calls
//!   whom, MPI sites, loops, zones, the report); that module's doc lists
//!   the phases in the order [`analyze`] runs them.
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
//! # What this does not prove
//!
//! * The list of call sites is exactly the direct calls present in the IR
//!   it was given. It says nothing about which of them run, how often, or
//!   with which arguments, and nothing about MPI calls made from code that
//!   is not in the IR (libraries, objects linked in later).
//! * A site that is not listed as a wildcard site has a source and tag
//!   that resolved to constants other than the wildcards; a listed one
//!   may never actually receive from any source ("may be" is the
//!   conservative answer for anything unresolved).
//! * An abstracted loop is a heuristic choice, not a proof that exploring
//!   its wildcard outcomes is useless: the analysis follows values, not
//!   timing, so an outcome can still matter through what other ranks do
//!   with messages sent from inside the loop (a reply to the sender, for
//!   example, is allowed inside the loop), through memory the analysis
//!   does not model, or through side effects of the C library functions it
//!   takes as harmless (`printf`, math). The runtime honours the markers
//!   only under `--loop-abstraction auto|all`.
//! * A buffer error is reported only where the object, the datatype and
//!   (for overflows) the count are all known statically; the absence of
//!   one says nothing about buffers reached through `void *`, structures,
//!   derived datatypes, unknown counts or root-only collective buffers.
//! * A divergent collective is one the analysis cannot show every rank
//!   reaches, not a proven mismatch: a collective called on both sides of
//!   a rank test is reported, and so is one under a rank test every rank
//!   passes. Its absence says nothing about conditions reached through
//!   memory the analysis does not follow, or stores that undo a
//!   broadcast (see the `divergence` module).
//! * A zone is a syntactic region between boundary calls; bounded mixing
//!   over zones is a search heuristic, and nothing here says zones are
//!   independent.
//!
//! # Limitations
//!
//! * Calls through function pointers are not resolved: an indirect call may
//!   reach an MPI function and is then not a site ([`indirect_calls`] lists
//!   them), and a loop calling through a pointer is decided on the calls
//!   the analysis can see (a note says so).
//! * A call is an MPI call by its callee's name alone. A program that
//!   defines its own `MPI_` functions has those counted too.
//! * The taint analysis is flow-insensitive within a function: a variable
//!   that holds a received value somewhere taints every read of it, so
//!   reusing a buffer after the loop for another purpose makes the loop
//!   explored. Memory is modelled per object (a local variable, a heap
//!   block through the local pointer that holds it, a global, a
//!   parameter); pointers stored in memory, pointer arithmetic across
//!   objects and aliasing through parameters are not followed, and
//!   anything written to globals or parameters (other than a collection by
//!   sender) makes the loop explored. Recursive functions with wildcard
//!   sites make every loop calling them explored.
//! * Status fields are told apart by byte offset, using the installed
//!   `MPI_Status` layout; a field read through an unknown offset counts as
//!   source and tag at once.
//! * Irreducible cycles (a `goto` into a loop) get no loop and so no
//!   markers: their wildcard receives are always explored.
//! * Loops whose entry or exit edge comes from an `invoke`, `callbr` or
//!   computed `goto`, or enters an exception handler, get no markers (the
//!   report says so).
//! * Zone names are `file:line` of the opening call: two zone boundaries
//!   on one line share a name.
//! * Only LLVM 16 IR loads; bitcode from another LLVM version may be
//!   rejected.
//! * Locations are as the debug information recorded them: without `-g`
//!   there are none, and after inlining by an optimizer a location names
//!   the inlined function's line, not the caller's.
//! * Function names are the IR's symbol names, so C++ names are mangled.
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
mod taint;

pub use analysis::{
    analyze, Analysis, AnalysisInput, EdgeMarkers, Marker, ModulePlan, Placement, ZoneStart,
};
pub use consts::{ConstValue, ConstantsError, Datatype, DatatypeClass, MpiConstants};
pub use error::LoadError;
pub use module::Module;
pub use sites::{indirect_calls, mpi_call_sites, IndirectCall, MpiCallSite, SourceLocation};
