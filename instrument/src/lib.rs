//! Rewriting a program's IR for mbhybrid, and compiling and linking it.
//!
//! This crate owns the `mbhybrid build` pipeline ([`build`]): clang 16
//! turns each source into IR with debug information, `mbh-static` analyses
//! the whole program (MPI call sites, loops, wildcard sites, zones, the
//! loop abstraction choice), this crate inserts the `MPI_Pcontrol` markers
//! ([`insert_markers`]: 7301/7302 on the entry and exit edges of loops
//! chosen for abstraction, 7304/7305 around the other loops with wildcard
//! sites, 7303 at the start of each zone given a mixing bound, from
//! [`CONFIG_FILE`] beside the sources or [`BuildRequest::zone_bounds`]),
//! stores each site's id into the runtime's register ([`SITE_GLOBAL`])
//! right before its call ([`insert_site_ids`]), tells the runtime about
//! heap blocks ([`insert_allocation_notes`]), checks every load and store
//! that may touch an MPI buffer against the runtime's pending nonblocking
//! buffers ([`insert_access_checks`], issue 19), compiles the result with
//! the user's flags and links it against the runtime library
//! ([`RUNTIME_LIB`]) ahead of the MPI library, with the flags the
//! installed `mpicc` (`mpicxx`) uses ([`MpiFlags`]). It writes the site
//! table (`OUT.mbh.json`, see [`mbh_trace::site`]) that maps the ids back
//! to source lines, with the static report as its `analysis`.
//!
//! [`drive`] is the same pipeline behind a compiler's command line, for
//! `mbhybrid-cc` and `mbhybrid-c++` (see its module): with `-c` it writes a
//! real object that also carries the unit's front-end IR and code
//! generation flags in an ELF section, and a link instruments every unit
//! the inputs carry (sources, such objects, members of static archives)
//! as one program; other modes go to clang with MPI's flags.
//!
//! [`analyze`] runs the same front end and analysis without instrumenting,
//! linking or writing anything, for `mbhybrid analyze`. Both return the
//! pre-flight warnings (MPI calls the runtime does not handle, by name and
//! line; irreducible loops; zone bounds that name no zone) for the caller
//! to print.
//!
//! The MPI constants the analysis compares arguments with
//! (`MPI_ANY_SOURCE`, `MPI_ANY_TAG`, the layout of `MPI_Status`) are read
//! once per build from the installed `mpi.h`, by compiling
//! [`MpiConstants::PROBE_C`](mbh_static::MpiConstants::PROBE_C) to IR.
//!
//! It must not analyse IR (that is `mbh-static`'s), must not know the
//! runtime's internals beyond the names of what the inserted code calls
//! or reads (the site register, the allocation notes, the access check
//! and its bounds) and the library's file name, must not hard-code any MPI implementation's paths or constants,
//! and must not print: warnings from clang come back in
//! [`BuildOutput::warnings`], failures as [`BuildError`]s whose messages
//! say what to do.
//!
//! # Example
//!
//! ```no_run
//! use mbh_instrument::{build, BuildRequest, MpiFamily, ZoneBound};
//!
//! let out = build(&BuildRequest {
//!     output: "app".into(),
//!     sources: vec!["app.c".into()],
//!     cc_flags: vec!["-O1".into()],
//!     runtime_dir: "target/debug".into(),
//!     base_dir: std::env::current_dir()?,
//!     zone_bounds: vec![ZoneBound::parse("app.c:120=3")?],
//!     // `None`: MBHYBRID_MPI, else the MPI of the `mpicc` on the PATH.
//!     mpi: Some(MpiFamily::OpenMpi),
//!     access_checks: true,
//! })?;
//! for site in &out.sites.sites {
//!     println!("{} {}:{} {}", site.id, site.file, site.line, site.call);
//! }
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # What this does not prove
//!
//! A site id names the last instrumented MPI call that started; the
//! instrumentation does not check that the runtime reads it, nor that
//! every MPI call the program makes went through an instrumented site.
//! Markers are placed on every control-flow edge into and out of a loop,
//! so a loop left by `longjmp`, `exit` or a signal runs no exit marker;
//! and whether a loop is worth abstracting is `mbh-static`'s heuristic
//! (see its "What this does not prove"). The instrumented program computes
//! what the original computes: the inserted code stores constants into
//! the register, calls `MPI_Pcontrol` (which MPI defines to do nothing
//! unless a tool gives it meaning) and adds blocks that only branch on;
//! the module is verified after each step.
//!
//! # Limitations
//!
//! * MPI calls that are not direct calls in the given sources (through a
//!   function pointer, or from a library or object linked in) carry no
//!   site id of their own: the register still holds the previous site's
//!   id unless the runtime clears it after reading.
//! * Access checks cover the loads, stores and memory intrinsics of the
//!   given sources only: code not compiled by mbhybrid (libraries, libc
//!   calls, inline assembly) is not instrumented. Each checked access
//!   costs a load and a branch, and the inserted calls keep LLVM from
//!   vectorizing the loops they are in (BENCHMARKS.md, "Access checks").
//! * The register is a plain global, so in a program that calls MPI from
//!   several threads at once an id may belong to another thread's call.
//! * C++ sources are compiled with `clang++-16` and `mpicxx`'s flags, and
//!   the program is then linked by `clang++-16` with `mpicxx`'s link flags.
//! * C is compiled as gcc 12 (what `mpicc` runs) takes it: the diagnostics
//!   clang 16 makes errors but gcc 12 only warns about (implicit function
//!   declarations, implicit `int`, integer/pointer conversions,
//!   incompatible function pointers, `return` with a value in a `void`
//!   function or without one in another, members of atomic structs) get
//!   `-Wno-error=GROUP` ahead of the user's flags, and clang prints them as
//!   warnings. A user's `-Werror` keeps them all errors, as under gcc, and
//!   a user's `-Werror=GROUP` its group. GNU extensions clang does not
//!   implement (nested functions, variable-length arrays in structs, a
//!   declaration right after a label) still fail, and C++ gets nothing:
//!   g++ refuses these too.
//! * The drivers take command lines written for gcc ([`clang_command_line`]):
//!   `-O4` and above become `-O3` as in gcc, and the options clang 16
//!   does not know (gcc's own, such as `-ftree-vectorizer-verbose=0`) are
//!   dropped, by clang's own answer, for the caller to name in a warning.
//!   Options inside a response file are not looked at.
//! * A marker call runs on every traversal of its edge, also in loops that
//!   turn out to receive nothing in a run; nested marked loops produce
//!   nested markers, also across function calls.
//! * The constants probe is compiled with the C MPI flags only (not the
//!   user's flags), so a `-D` that changes `mpi.h` is not seen by it.
//! * `mbhybrid.toml` bounds name zones by file suffix and line: `app.c:12`
//!   matches `src/app.c` and `test/app.c` alike.
//! * Only Linux (ELF) linkers: the runtime is kept with
//!   `-Wl,--push-state,--no-as-needed`.
//! * The flags after `--` go to every step (compile, code generation,
//!   link); flags that change what clang produces (`-E`, `-S`, `-M`,
//!   `-flto`) break the pipeline. The compiler drivers ([`drive`]) tell
//!   those modes apart and pass them to clang; they refuse `-flto`.
//! * A driver link analyses and numbers every member of a static archive
//!   that carries IR, also those the linker then leaves out; it finds
//!   archives named by `-l` in the `-L` directories only. Shared
//!   libraries (`-shared`) are linked from the objects' own code, not
//!   instrumented. A relocatable object (`-r`) made of the drivers'
//!   objects and others loses the others' code at an instrumented link.
#![deny(missing_docs)]

mod accesses;
mod allocations;
mod build;
mod config;
mod driver;
mod embed;
mod error;
mod gcc_compat;
mod gcc_only;
mod markers;
mod mpi_family;
mod mpi_flags;
mod site_ids;
mod toolchain;

pub use accesses::{
    insert_access_checks, CHECK_ACCESS, PENDING, PENDING_GAP_HI, PENDING_GAP_LO, PENDING_LO,
};
pub use allocations::{insert_allocation_notes, NOTE_ALLOC, NOTE_FREE};
pub use build::{
    analyze, build, AnalyzeOutput, AnalyzeRequest, BuildOutput, BuildRequest, RUNTIME_LIB,
};
pub use config::{read_config, ZoneBound, CONFIG_FILE};
pub use driver::{access_checks_from_env, drive, Driven, DriverRequest, ENV_ACCESS_CHECKS};
pub use embed::Language;
pub use error::{BuildError, InstrumentError};
pub use gcc_only::{clang_command_line, ClangCommandLine};
pub use markers::{insert_markers, MarkerCounts, PCONTROL};
pub use mpi_family::{
    family_from_env, find_mpi_wrapper, links_runtime, runtime_dir_for, MpiFamily, MpiInstall,
    MPI_ENV, OWN_EXECUTABLES, PROBING_ENV,
};
pub use mpi_flags::MpiFlags;
pub use site_ids::{insert_site_ids, SITE_GLOBAL};
