//! Loading IR into a [`Module`].

use std::path::{Path, PathBuf};

use inkwell::context::Context;
use inkwell::memory_buffer::MemoryBuffer;

use crate::LoadError;

/// One translation unit's LLVM IR, loaded and verified.
///
/// It lives in (and borrows) an inkwell [`Context`]; several modules may
/// share one context. The wrapped inkwell module is available through
/// [`Module::llvm`] for crates that rewrite it.
#[derive(Debug)]
pub struct Module<'ctx> {
    llvm: inkwell::module::Module<'ctx>,
    origin: PathBuf,
}

impl<'ctx> Module<'ctx> {
    /// Loads `path`, textual IR or bitcode (told apart by content, not by
    /// extension), and runs the LLVM verifier on it.
    pub fn load(context: &'ctx Context, path: &Path) -> Result<Self, LoadError> {
        let bytes = std::fs::read(path).map_err(|source| LoadError::Read {
            path: path.to_owned(),
            source,
        })?;
        Self::parse_bytes(context, path.to_owned(), &bytes)
    }

    /// Parses `bytes` (textual IR or bitcode) as a module named `name`, and
    /// runs the LLVM verifier on it. `name` only appears in errors and in
    /// [`Module::origin`].
    pub fn parse(context: &'ctx Context, name: &str, bytes: &[u8]) -> Result<Self, LoadError> {
        Self::parse_bytes(context, PathBuf::from(name), bytes)
    }

    fn parse_bytes(
        context: &'ctx Context,
        origin: PathBuf,
        bytes: &[u8],
    ) -> Result<Self, LoadError> {
        let buffer = MemoryBuffer::create_from_memory_range_copy(bytes, &origin.to_string_lossy());
        // LLVMParseIRInContext recognises bitcode by its magic number and
        // parses anything else as text.
        let llvm = context
            .create_module_from_ir(buffer)
            .map_err(|message| LoadError::Parse {
                path: origin.clone(),
                message: message.to_string().trim_end().to_owned(),
            })?;
        let module = Module { llvm, origin };
        if let Err(message) = module.verify() {
            return Err(LoadError::Invalid {
                path: module.origin.clone(),
                message,
            });
        }
        Ok(module)
    }

    /// Where the module came from: the path given to [`Module::load`] or the
    /// name given to [`Module::parse`].
    pub fn origin(&self) -> &Path {
        &self.origin
    }

    /// The source file name the IR records (`source_filename`), which for
    /// clang output is the path of the source as clang was given it.
    pub fn source_file_name(&self) -> String {
        self.llvm
            .get_source_file_name()
            .to_string_lossy()
            .into_owned()
    }

    /// The inkwell module, for crates that read or rewrite it further.
    pub fn llvm(&self) -> &inkwell::module::Module<'ctx> {
        &self.llvm
    }

    /// Runs the LLVM verifier; the error is its report.
    pub fn verify(&self) -> Result<(), String> {
        self.llvm
            .verify()
            .map_err(|message| message.to_string().trim_end().to_owned())
    }
}
