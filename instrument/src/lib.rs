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
//! buffers ([`insert_access_checks`]) and gives each loop that cannot
//! start an MPI operation an unchecked copy for the times nothing is
//! pending (`versioning`), compiles the result with
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
//! It must not analyse IR (that is `mbh-static`'s) beyond what its own
//! rewriting needs on the blocks it made (the loops of the checked code,
//! and whether their calls can reach MPI, for `versioning`), must not know the
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
//! What this does not prove, Limitations: `docs/design/instrument.md`.
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
mod hull_tbaa;
mod markers;
mod mpi_family;
mod mpi_flags;
mod site_ids;
mod toolchain;
mod versioning;

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
pub use versioning::ENV_LOOP_VERSIONING;
