//! Why a module could not be loaded.

use std::path::PathBuf;

/// Why [`Module::load`](crate::Module::load) or
/// [`Module::parse`](crate::Module::parse) failed.
///
/// Each message is one paragraph that names the file, says what went wrong
/// and what to do about it.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum LoadError {
    /// The file could not be read.
    #[error(
        "cannot read LLVM IR file {}: {source}; check that the path is right and readable",
        path.display()
    )]
    Read {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// LLVM could not parse the file as textual IR or bitcode.
    #[error(
        "cannot parse {} as LLVM IR: {message}; mbhybrid reads textual IR (.ll) and bitcode (.bc) \
         of LLVM 16, so regenerate the file with `clang-16 -g -emit-llvm` if it came from another \
         LLVM version",
        path.display()
    )]
    Parse {
        /// The file (or the name given to [`Module::parse`](crate::Module::parse)).
        path: PathBuf,
        /// LLVM's diagnostic, as it printed it.
        message: String,
    },
    /// The IR parsed but the LLVM verifier rejected it.
    #[error(
        "the LLVM IR in {} is not valid: {message}; fix the IR (or regenerate it with \
         `clang-16 -g -emit-llvm`)",
        path.display()
    )]
    Invalid {
        /// The file.
        path: PathBuf,
        /// The verifier's report.
        message: String,
    },
}
