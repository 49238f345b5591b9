//! Rewriting a program's IR for mbhybrid, and compiling and linking it.
//!
//! This crate owns the `mbhybrid build` pipeline ([`build`]): clang 16
//! turns each source into IR with debug information, `mbh-static` finds
//! the MPI call sites, this crate stores each site's id into the runtime's
//! register ([`SITE_GLOBAL`]) right before its call
//! ([`insert_site_ids`]), compiles the result with the user's flags and
//! links it against the runtime library ([`RUNTIME_LIB`]) ahead of the MPI
//! library, with the flags the installed `mpicc` (`mpicxx`) uses
//! ([`MpiFlags`]). It writes the site table (`OUT.mbh.json`, see
//! [`mbh_trace::site`]) that maps the ids back to source lines.
//!
//! It must not analyse IR (that is `mbh-static`'s), must not know the
//! runtime's internals beyond the register's name and the library's file
//! name, must not hard-code any MPI implementation's paths or constants,
//! and must not print: warnings from clang come back in
//! [`BuildOutput::warnings`], failures as [`BuildError`]s whose messages
//! say what to do.
//!
//! # Example
//!
//! ```no_run
//! use mbh_instrument::{build, BuildRequest};
//!
//! let out = build(&BuildRequest {
//!     output: "app".into(),
//!     sources: vec!["app.c".into()],
//!     cc_flags: vec!["-O1".into()],
//!     runtime_dir: "target/debug".into(),
//!     base_dir: std::env::current_dir()?,
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
//!
//! # Limitations
//!
//! * MPI calls that are not direct calls in the given sources (through a
//!   function pointer, or from a library or object linked in) carry no
//!   site id of their own: the register still holds the previous site's
//!   id unless the runtime clears it after reading.
//! * The register is a plain global, so in a program that calls MPI from
//!   several threads at once an id may belong to another thread's call.
//! * C++ sources are compiled with `clang++-16` and `mpicxx`'s flags, and
//!   the program is then linked by `clang++-16` with `mpicxx`'s link flags.
//! * Only Linux (ELF) linkers: the runtime is kept with
//!   `-Wl,--push-state,--no-as-needed`.
//! * The flags after `--` go to every step (compile, code generation,
//!   link); flags that change what clang produces (`-E`, `-S`, `-M`,
//!   `-flto`) break the pipeline.
#![deny(missing_docs)]

mod build;
mod error;
mod mpi_flags;
mod site_ids;
mod toolchain;

pub use build::{build, BuildOutput, BuildRequest, RUNTIME_LIB};
pub use error::{BuildError, InstrumentError};
pub use mpi_flags::MpiFlags;
pub use site_ids::{insert_site_ids, SITE_GLOBAL};
