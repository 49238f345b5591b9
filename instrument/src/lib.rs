//! Rewriting a program's IR for mbhybrid, and compiling and linking it.
//!
//! This crate owns the `mbhybrid build` pipeline ([`build`], its steps in
//! order in its doc): clang 16 turns each source into IR with debug
//! information, `mbh-static` analyses the whole program, this crate
//! inserts the `MPI_Pcontrol` markers ([`insert_markers`]), the site ids
//! ([`insert_site_ids`]), the heap notes ([`insert_allocation_notes`]) and
//! the access checks ([`insert_access_checks`]), compiles the result with
//! the user's flags and links it against the runtime ([`RUNTIME_LIB`])
//! ahead of the installed MPI ([`MpiFlags`]). It writes the site table
//! (`OUT.mbh.json`, [`mbh_trace::site`]) that maps the ids back to lines.
//! It also owns the compiler drivers `mbhybrid-cc` and `mbhybrid-c++`
//! ([`drive`]), and [`analyze`], the same front end and analysis without
//! instrumenting, for `mbhybrid analyze`.
//!
//! It must not analyse IR (that is `mbh-static`'s) beyond what its own
//! rewriting needs on the blocks it made, must not know the runtime's
//! internals beyond the names of what the inserted code calls or reads and
//! the library's file name, must not hard-code any MPI implementation's
//! paths or constants (they are read from the installed `mpi.h`), and
//! must not print: warnings come back in [`BuildOutput::warnings`],
//! failures as [`BuildError`]s whose messages say what to do.
//!
//! Read more: `docs/design/instrument.md` (the markers and the drivers in
//! detail, what this does not prove, limitations).
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
