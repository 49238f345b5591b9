//! Why a build failed.

use std::path::PathBuf;

/// Why [`build`](crate::build) (or [`MpiFlags::probe`](crate::MpiFlags::probe))
/// failed.
///
/// Each message is one paragraph that says what happened and what to do.
/// Compiler and linker output is appended verbatim, after that paragraph,
/// exactly as the tool printed it.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum BuildError {
    /// No source file was given.
    #[error(
        "no source files given: name the C, C++ or LLVM IR files to build, as in \
         `mbhybrid build -o app app.c util.c`"
    )]
    NoSources,

    /// A source file does not exist or cannot be read.
    #[error(
        "cannot read source file {}: {source}; check the path (relative paths are taken from the \
         current directory) and that the file is readable",
        path.display()
    )]
    SourceUnreadable {
        /// The file, as given.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },

    /// A source file has an extension `build` does not know.
    #[error(
        "{} is not a file mbhybrid build compiles: it takes C (.c, .i), C++ (.cc, .cpp, .cxx, .C, \
         .ii) and LLVM IR (.ll, .bc) files; give objects and libraries as compiler flags after \
         `--`, or build the project with its own make or CMake and mbhybrid-cc as the compiler \
         (`make CC=mbhybrid-cc`), whose objects carry what mbhybrid needs",
        path.display()
    )]
    UnsupportedSource {
        /// The file, as given.
        path: PathBuf,
    },

    /// `libmbhybrid_rt.so` is not in the runtime directory.
    #[error(
        "the mbhybrid runtime library {} does not exist, and every instrumented program links \
         against it: build the workspace (`cargo build --workspace`) and run mbhybrid from that \
         build",
        path.display()
    )]
    RuntimeMissing {
        /// Where the library was expected.
        path: PathBuf,
    },

    /// The executable's directory does not exist.
    #[error(
        "cannot write the executable {}: the directory {} does not exist; create it or choose \
         another `-o`",
        path.display(),
        dir.display()
    )]
    OutputDir {
        /// The executable, as given.
        path: PathBuf,
        /// Its directory.
        dir: PathBuf,
    },

    /// No clang on the `PATH`.
    #[error(
        "no clang found on the PATH (tried {tried}): mbhybrid compiles programs with clang 16; \
         run scripts/install-deps.sh to install it"
    )]
    ClangNotFound {
        /// The names looked for, comma separated.
        tried: String,
    },

    /// The clang found is not clang 16.
    #[error(
        "{} is clang {found}, but mbhybrid needs clang 16 because it reads the IR with LLVM 16: \
         run scripts/install-deps.sh to install clang-16",
        path.display()
    )]
    ClangVersion {
        /// The clang found.
        path: PathBuf,
        /// The version it reported (or its `--version` output).
        found: String,
    },

    /// No MPI compiler wrapper (`mpicc`, or `mpicxx` for C++) on the `PATH`.
    #[error(
        "no MPI compiler wrapper on the PATH (tried {tried}): mbhybrid takes the MPI include and \
         library flags from it; install MPI (scripts/install-deps.sh installs MPICH) or add its \
         bin directory to the PATH"
    )]
    MpiWrapperNotFound {
        /// The names looked for, comma separated.
        tried: String,
    },

    /// The MPI asked for has no compiler wrapper on the `PATH`.
    #[error(
        "{family} was asked for, but its compiler wrapper is not on the PATH (tried {tried}): \
         install it (scripts/install-deps.sh installs MPICH and Open MPI from Debian), or choose \
         the other MPI with --mpi (MBHYBRID_MPI for mbhybrid-cc)"
    )]
    MpiNotInstalled {
        /// The family asked for.
        family: crate::MpiFamily,
        /// The names looked for, comma separated.
        tried: String,
    },

    /// An object to link was compiled for another MPI than the link's.
    #[error(
        "{} was compiled with {compiled}'s mpi.h, but this link uses {linking}: MPI handles and \
         constants differ between the two, so the program would not work. Build every object \
         with one MPI: set MBHYBRID_MPI={} in the environment of the whole build (`export` it \
         before `make`), or remove the objects (`make clean`) and build again",
        unit.display(),
        compiled.key()
    )]
    MixedMpi {
        /// The source of the object compiled for the other MPI.
        unit: PathBuf,
        /// The MPI it was compiled for.
        compiled: crate::MpiFamily,
        /// The MPI of the link.
        linking: crate::MpiFamily,
    },

    /// `MBHYBRID_MPI` names no supported MPI.
    #[error("MBHYBRID_MPI is `{value}`, which names no MPI mbhybrid supports: use `mpich` or `openmpi`, or unset it to use the MPI of the mpicc on the PATH")]
    UnknownMpi {
        /// The variable's value.
        value: String,
    },

    /// The runtime directory holds only a runtime built for another MPI.
    #[error(
        "the mbhybrid runtime for {family} ({}) does not exist; the one beside mbhybrid was built \
         for {built}. Build the runtime for every installed MPI with `bash scripts/build-runtimes.sh` \
         (add --release for a release build of mbhybrid)",
        path.display()
    )]
    RuntimeForOtherMpi {
        /// The MPI the program is built or run with.
        family: crate::MpiFamily,
        /// The MPI the runtime found was built for.
        built: crate::MpiFamily,
        /// Where the runtime for `family` was expected.
        path: PathBuf,
    },

    /// The MPI wrapper did not say which flags it uses.
    #[error(
        "cannot get the MPI compile and link flags from {}: {detail}; check that `mpicc -show` \
         (MPICH) or `mpicc --showme` (Open MPI) prints a compiler command line",
        wrapper.display()
    )]
    MpiFlags {
        /// The wrapper that was asked.
        wrapper: PathBuf,
        /// What went wrong.
        detail: String,
    },

    /// A tool could not be started at all.
    #[error(
        "cannot run {}: {source}; check that it is installed and executable",
        program.display()
    )]
    Spawn {
        /// The program.
        program: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },

    /// clang rejected a source file.
    #[error(
        "clang could not compile {}; fix what it reports below (or the flags after `--`) and build \
         again (the command was: {command})\n{}",
        file.display(),
        stderr.trim_end()
    )]
    Compile {
        /// The source file, as given.
        file: PathBuf,
        /// The command that failed, shell-quoted.
        command: String,
        /// clang's standard error, verbatim.
        stderr: String,
        /// clang's exit status, which a compiler driver passes on.
        status: i32,
    },

    /// An IR file (given, or produced by clang) could not be loaded.
    #[error(transparent)]
    Load(#[from] mbh_static::LoadError),

    /// Inserting the site ids failed.
    #[error("cannot instrument {}: {source}", file.display())]
    Instrument {
        /// The source file, as given.
        file: PathBuf,
        /// What went wrong.
        source: crate::InstrumentError,
    },

    /// clang could not turn the instrumented IR into an object file.
    #[error(
        "clang could not generate code for {} after instrumentation; if the flags after `--` are \
         not the cause, this is a bug in mbhybrid: please report it with the source (the command \
         was: {command})\n{}",
        file.display(),
        stderr.trim_end()
    )]
    Codegen {
        /// The source file, as given.
        file: PathBuf,
        /// The command that failed, shell-quoted.
        command: String,
        /// clang's standard error, verbatim.
        stderr: String,
    },

    /// Linking the executable failed.
    #[error(
        "linking {} failed; fix what the linker reports below (often a missing `-l` library \
         after `--`, or a missing `main`) and build again (the command was: {command})\n{}",
        output.display(),
        stderr.trim_end()
    )]
    Link {
        /// The executable, as given.
        output: PathBuf,
        /// The command that failed, shell-quoted.
        command: String,
        /// The standard error of clang and the linker, verbatim.
        stderr: String,
        /// clang's exit status, which a compiler driver passes on.
        status: i32,
    },

    /// A file could not be written.
    #[error(
        "cannot write {}: {source}; check that its directory is writable and the disk is not full",
        path.display()
    )]
    Write {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },

    /// A `mbhybrid.toml` could not be read.
    #[error(
        "cannot use {}: {message}; its `[zones]` table maps \"FILE:LINE\" (the line of the \
         collective call that opens a zone) to a mixing bound, as in `\"app.c:120\" = 3`",
        path.display()
    )]
    Config {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        message: String,
    },

    /// An environment variable mbhybrid reads has a value it does not
    /// accept.
    #[error("{variable}={value:?} is not understood: set it to {expected}, or unset it")]
    BadEnv {
        /// The variable.
        variable: &'static str,
        /// Its value.
        value: String,
        /// What it may be.
        expected: &'static str,
    },

    /// The installed MPI's constants could not be read.
    #[error(
        "cannot read the installed MPI's constants (MPI_ANY_SOURCE, MPI_ANY_TAG, the layout of \
         MPI_Status) by compiling a small probe against its mpi.h: {detail}; check that \
         `mpicc -show` works and names the directory of mpi.h"
    )]
    MpiConstants {
        /// What went wrong.
        detail: String,
    },

    /// An object or archive given to the link could not be read as one.
    #[error(
        "cannot read {} as an object file or archive: {detail}; if mbhybrid-cc built it, build \
         it again (make clean) with this mbhybrid",
        path.display()
    )]
    BadObject {
        /// The file.
        path: PathBuf,
        /// What is wrong with it.
        detail: String,
    },

    /// An LLVM tool (`llvm-objcopy`, `llvm-ar`) is not on the `PATH`.
    #[error(
        "no {tried} on the PATH: mbhybrid-cc needs the LLVM 16 tools to keep the IR in object \
         files and archives; run scripts/install-deps.sh to install them (Debian package llvm-16)"
    )]
    ToolNotFound {
        /// The names looked for, comma separated.
        tried: String,
    },

    /// An LLVM tool failed.
    #[error(
        "the command {command} failed; this is a bug in mbhybrid unless the disk is full or the \
         file is not writable, please report it\n{}",
        stderr.trim_end()
    )]
    Tool {
        /// The command, shell-quoted.
        command: String,
        /// What it printed.
        stderr: String,
    },

    /// An option (of the compiler, or of MPI's compiler wrappers) that
    /// mbhybrid-cc cannot honour.
    #[error("this compiler driver does not take `{option}`: {why}")]
    WrapperOption {
        /// The option as given.
        option: String,
        /// Why not, and what to do instead.
        why: &'static str,
    },

    /// A response file (`@FILE`) could not be read.
    #[error(
        "cannot read the response file {}: {detail}; check the path after `@`",
        path.display()
    )]
    ResponseFile {
        /// The file.
        path: PathBuf,
        /// What went wrong.
        detail: String,
    },

    /// The temporary build directory could not be created.
    #[error(
        "cannot create a temporary directory for the build: {source}; check that TMPDIR (or /tmp) \
         exists and is writable"
    )]
    TempDir {
        /// The I/O error.
        source: std::io::Error,
    },
}

/// Why site ids could not be inserted into a module.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum InstrumentError {
    /// The program already uses the name of the runtime's site register for
    /// something else.
    #[error(
        "the program already defines `{name}` as {what}, but mbhybrid needs that name (for the \
         runtime's site register, or for `MPI_Pcontrol` as the MPI standard declares it); rename \
         it in the program"
    )]
    NameClash {
        /// The name ([`SITE_GLOBAL`](crate::SITE_GLOBAL) or
        /// [`PCONTROL`](crate::PCONTROL)).
        name: &'static str,
        /// What the program defines under it.
        what: &'static str,
    },

    /// LLVM's IR builder refused to build the store.
    #[error(
        "LLVM could not insert a site id store or marker ({0}); this is a bug in mbhybrid, please \
         report it"
    )]
    Builder(String),

    /// The module no longer verifies after instrumentation.
    #[error(
        "the instrumented IR does not verify ({0}); this is a bug in mbhybrid, please report it \
         with the source"
    )]
    Verify(String),
}
