//! MPI call sites and indirect calls.

use std::path::{Component, Path, PathBuf};

use inkwell::values::{FunctionValue, InstructionValue};

use crate::debug_loc::{self, Callee};
use crate::Module;

/// A place in the source, from a call's debug location.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct SourceLocation {
    /// The file as the debug information records it: the `DIFile`'s
    /// directory joined with its file name (so an absolute file name stands
    /// alone, and a relative one is taken relative to the directory clang
    /// ran in). Empty when the IR names no file.
    pub file: PathBuf,
    /// 1-based line; 0 when the compiler recorded none.
    pub line: u32,
    /// 1-based column; 0 when the compiler recorded none (`-gno-column-info`).
    pub column: u32,
}

impl SourceLocation {
    /// [`SourceLocation::file`] as a user would write it from directory
    /// `base`: relative to `base` when the file lies below it, otherwise
    /// absolute. See [`display_path`](SourceLocation::display_path) for the
    /// rules.
    pub fn file_from(&self, base: &Path) -> PathBuf {
        Self::display_path(&self.file, base)
    }

    /// `file` relative to `base` when it lies below `base`, and unchanged
    /// otherwise.
    ///
    /// Both paths are made absolute (against the process's current
    /// directory) and cleaned of `.` and `..` components without touching
    /// the file system. If `file` still is not below `base`, both are
    /// resolved through the file system (symbolic links, such as a `/tmp`
    /// that is a link) and compared again. A relative `file` that cannot be
    /// anchored (empty) is returned as it is.
    pub fn display_path(file: &Path, base: &Path) -> PathBuf {
        if file.as_os_str().is_empty() {
            return PathBuf::new();
        }
        let cwd = std::env::current_dir().unwrap_or_default();
        let abs_file = normalize(&cwd.join(file));
        let abs_base = normalize(&cwd.join(base));
        if let Ok(rel) = abs_file.strip_prefix(&abs_base) {
            return rel.to_owned();
        }
        if let (Ok(real_file), Ok(real_base)) = (abs_file.canonicalize(), abs_base.canonicalize()) {
            if let Ok(rel) = real_file.strip_prefix(&real_base) {
                return rel.to_owned();
            }
        }
        abs_file
    }
}

/// Removes `.` components and folds `..` into its parent, lexically.
fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for component in path.components() {
        match component {
            Component::CurDir => {}
            Component::ParentDir => {
                if !out.pop() {
                    out.push(component);
                }
            }
            other => out.push(other),
        }
    }
    out
}

/// A direct call to a function named `MPI_*` or `PMPI_*`.
#[derive(Debug, Clone)]
pub struct MpiCallSite<'ctx> {
    /// The MPI function called, as named in the IR (`MPI_Send`).
    pub callee: String,
    /// The function that contains the call (the IR's symbol name).
    pub function: String,
    /// The call's debug location; `None` when the IR has none (no `-g`).
    pub location: Option<SourceLocation>,
    /// The `call` (or `invoke`) instruction, for inserting code before it.
    pub instruction: InstructionValue<'ctx>,
}

/// A call through a function pointer: its callee is unknown statically.
#[derive(Debug, Clone)]
pub struct IndirectCall<'ctx> {
    /// The function that contains the call.
    pub function: String,
    /// The call's debug location, if any.
    pub location: Option<SourceLocation>,
    /// The call instruction.
    pub instruction: InstructionValue<'ctx>,
}

/// Whether `name` is the name of an MPI or PMPI function.
fn is_mpi_name(name: &str) -> bool {
    name.starts_with("MPI_") || name.starts_with("PMPI_")
}

/// Every call instruction of the module's defined functions, in module
/// order (functions, then blocks, then instructions), with its function.
fn calls<'a, 'ctx>(
    module: &'a Module<'ctx>,
) -> impl Iterator<Item = (FunctionValue<'ctx>, InstructionValue<'ctx>)> + 'a {
    module.llvm().get_functions().flat_map(|function| {
        function.get_basic_block_iter().flat_map(move |block| {
            block
                .get_instructions()
                .filter(|inst| debug_loc::is_call(*inst))
                .map(move |inst| (function, inst))
        })
    })
}

fn function_name(function: FunctionValue<'_>) -> String {
    function.get_name().to_string_lossy().into_owned()
}

/// Every direct call to an `MPI_*` or `PMPI_*` function, in module order
/// (function by function, block by block, instruction by instruction).
///
/// Calls through function pointers are not included; see
/// [`indirect_calls`].
pub fn mpi_call_sites<'ctx>(module: &Module<'ctx>) -> Vec<MpiCallSite<'ctx>> {
    calls(module)
        .filter_map(|(function, inst)| match debug_loc::callee(inst) {
            Callee::Named(callee) if is_mpi_name(&callee) => Some(MpiCallSite {
                callee,
                function: function_name(function),
                location: debug_loc::location(inst),
                instruction: inst,
            }),
            _ => None,
        })
        .collect()
}

/// Every call through a function pointer, in module order. Any of them may
/// call MPI; none is an [`MpiCallSite`].
pub fn indirect_calls<'ctx>(module: &Module<'ctx>) -> Vec<IndirectCall<'ctx>> {
    calls(module)
        .filter_map(|(function, inst)| match debug_loc::callee(inst) {
            Callee::Indirect => Some(IndirectCall {
                function: function_name(function),
                location: debug_loc::location(inst),
                instruction: inst,
            }),
            Callee::Named(_) | Callee::InlineAsm => None,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mpi_names() {
        assert!(is_mpi_name("MPI_Send"));
        assert!(is_mpi_name("PMPI_Send"));
        assert!(!is_mpi_name("mpi_send_"));
        assert!(!is_mpi_name("MPIX_Foo"));
        assert!(!is_mpi_name("my_MPI_Send"));
    }

    #[test]
    fn display_paths() {
        let base = Path::new("/home/u/proj");
        let rel = |f: &str| SourceLocation::display_path(Path::new(f), base);
        assert_eq!(rel("/home/u/proj/app.c"), PathBuf::from("app.c"));
        assert_eq!(
            rel("/home/u/proj/./src/../lib/x.c"),
            PathBuf::from("lib/x.c")
        );
        assert_eq!(
            rel("/usr/include/stdio.h"),
            PathBuf::from("/usr/include/stdio.h")
        );
        assert_eq!(
            rel("/home/u/project2/a.c"),
            PathBuf::from("/home/u/project2/a.c")
        );
        assert_eq!(rel(""), PathBuf::new());
        // A relative file is anchored at the current directory.
        let cwd = std::env::current_dir().unwrap();
        assert_eq!(
            SourceLocation::display_path(Path::new("a/b.c"), &cwd),
            PathBuf::from("a/b.c")
        );
        assert_eq!(
            SourceLocation::display_path(Path::new("a/b.c"), &cwd.join("a")),
            PathBuf::from("b.c")
        );
    }
}
