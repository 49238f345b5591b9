//! `mbhybrid build`: compile, instrument, link.

use std::path::{Path, PathBuf};

use inkwell::context::Context;
use mbh_static::{mpi_call_sites, Module, MpiCallSite, SourceLocation};
use mbh_trace::{Site, SiteTable};

use crate::toolchain::{find_clang, Cmd};
use crate::{insert_site_ids, BuildError, MpiFlags};

/// The file name of the runtime library every instrumented program links.
pub const RUNTIME_LIB: &str = "libmbhybrid_rt.so";

/// What to build, as `mbhybrid build -o OUT FILES... [-- CC_FLAGS]` asks.
///
/// Relative paths in `output`, `sources` and `runtime_dir` are taken from
/// the process's current directory, as any path is.
#[derive(Debug, Clone)]
pub struct BuildRequest {
    /// The executable to write; its site table goes beside it
    /// ([`SiteTable::path_for`]).
    pub output: PathBuf,
    /// C (`.c`), C++ (`.cc`, `.cpp`, `.cxx`, `.C`) and LLVM IR (`.ll`,
    /// `.bc`) files, compiled and numbered in this order.
    pub sources: Vec<PathBuf>,
    /// Flags for clang, given to every compile and to the link
    /// (`-O2`, `-DN=4`, `-lm`).
    pub cc_flags: Vec<String>,
    /// The directory that holds [`RUNTIME_LIB`]; the executable finds it
    /// there at run time (it is the executable's `RUNPATH`).
    pub runtime_dir: PathBuf,
    /// The user's working directory: site file names are written relative
    /// to it when the file lies below it.
    pub base_dir: PathBuf,
}

/// What [`build`] produced.
#[derive(Debug, Clone)]
pub struct BuildOutput {
    /// The executable ([`BuildRequest::output`]).
    pub executable: PathBuf,
    /// Where the site table was written (`OUT.mbh.json`).
    pub site_table_path: PathBuf,
    /// The site table as written.
    pub sites: SiteTable,
    /// Everything clang and the linker printed while succeeding (warnings,
    /// mostly), verbatim and in order; empty when they printed nothing.
    pub warnings: String,
}

/// The kinds of input `build` takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum SourceKind {
    C,
    Cxx,
    Ir,
}

fn source_kind(path: &Path) -> Option<SourceKind> {
    match path.extension()?.to_str()? {
        "c" => Some(SourceKind::C),
        "cc" | "cpp" | "cxx" | "c++" | "C" => Some(SourceKind::Cxx),
        "ll" | "bc" => Some(SourceKind::Ir),
        _ => None,
    }
}

/// Checks that `path` is a readable file of a kind `build` takes.
fn check_source(path: &Path) -> Result<SourceKind, BuildError> {
    let unreadable = |source| BuildError::SourceUnreadable {
        path: path.to_owned(),
        source,
    };
    let file = std::fs::File::open(path).map_err(unreadable)?;
    if file.metadata().map_err(unreadable)?.is_dir() {
        return Err(unreadable(std::io::Error::new(
            std::io::ErrorKind::IsADirectory,
            "it is a directory",
        )));
    }
    source_kind(path).ok_or_else(|| BuildError::UnsupportedSource {
        path: path.to_owned(),
    })
}

/// Builds an instrumented executable and its site table.
///
/// In order:
///
/// 1. checks that every source is a readable file of a known kind, that
///    [`RUNTIME_LIB`] is in [`BuildRequest::runtime_dir`] and that the
///    executable's directory exists;
/// 2. finds clang 16 and asks `mpicc` (and `mpicxx` when there are C++
///    sources) for the MPI flags ([`MpiFlags::probe`]);
/// 3. compiles each C/C++ source to bitcode with debug information
///    (`clang <cc_flags> <mpi compile flags> -g -Xclang -disable-llvm-passes
///    -emit-llvm -c SRC`), so the IR is the front end's, before any
///    optimization; `.ll`/`.bc` sources are taken as they are;
/// 4. numbers the MPI call sites of all files 1, 2, … in file order and
///    inserts each id's store before its call ([`insert_site_ids`]);
/// 5. compiles each instrumented module to an object with the user's flags
///    (so `-O2` optimizes it exactly once, as a plain `clang -O2 -c` would);
/// 6. links the objects with the runtime ahead of the MPI libraries, so
///    its `MPI_*` wrappers are the ones the program calls, and with a
///    `RUNPATH` to the runtime directory;
/// 7. writes the site table to `OUT.mbh.json`.
///
/// Intermediate files live in a temporary directory removed on return. The
/// instrumented program computes exactly what the program computes without
/// instrumentation: the only added code stores constants into the runtime's
/// register.
pub fn build(req: &BuildRequest) -> Result<BuildOutput, BuildError> {
    if req.sources.is_empty() {
        return Err(BuildError::NoSources);
    }
    let kinds = req
        .sources
        .iter()
        .map(|source| check_source(source))
        .collect::<Result<Vec<_>, _>>()?;
    // Absolute, because it becomes the executable's RUNPATH.
    let runtime_dir =
        std::path::absolute(&req.runtime_dir).unwrap_or_else(|_| req.runtime_dir.clone());
    if !runtime_dir.join(RUNTIME_LIB).is_file() {
        return Err(BuildError::RuntimeMissing {
            path: runtime_dir.join(RUNTIME_LIB),
        });
    }
    if let Some(dir) = req.output.parent() {
        if !dir.as_os_str().is_empty() && !dir.is_dir() {
            return Err(BuildError::OutputDir {
                path: req.output.clone(),
                dir: dir.to_owned(),
            });
        }
    }
    let clang = find_clang(false)?;
    let link_driver = if kinds.contains(&SourceKind::Cxx) {
        find_clang(true)?
    } else {
        clang.clone()
    };
    let mpi_c = MpiFlags::probe()?;
    let mpi_cxx = if kinds.contains(&SourceKind::Cxx) {
        Some(MpiFlags::probe_cxx()?)
    } else {
        None
    };
    let tmp = tempfile::Builder::new()
        .prefix("mbhybrid-build-")
        .tempdir()
        .map_err(|source| BuildError::TempDir { source })?;

    let mut table = SiteTable::new(
        req.output.to_string_lossy(),
        req.sources
            .iter()
            .map(|s| s.to_string_lossy().into_owned())
            .collect(),
    );
    let mut warnings = String::new();
    let mut objects = Vec::new();
    let context = Context::create();
    let mut next_id = 1;
    for (index, (source, kind)) in req.sources.iter().zip(&kinds).enumerate() {
        let stem = source
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default();
        let temp = |ext: &str| tmp.path().join(format!("{index}-{stem}.{ext}"));
        let ir = match kind {
            SourceKind::Ir => source.clone(),
            SourceKind::C | SourceKind::Cxx => {
                let bitcode = temp("bc");
                let (driver, mpi) = match (kind, &mpi_cxx) {
                    (SourceKind::Cxx, Some(mpi_cxx)) => (&link_driver, mpi_cxx),
                    _ => (&clang, &mpi_c),
                };
                // The user's flags first, as mpicc puts them, so that `-x`
                // applies to the source; then `-g` so that every site has
                // a line even under `-g0`.
                let mut cmd = Cmd::new(driver);
                cmd.args(&req.cc_flags)
                    .args(&mpi.compile)
                    .args(["-g", "-Xclang", "-disable-llvm-passes"])
                    .args(["-Qunused-arguments", "-emit-llvm", "-c"])
                    .arg(source)
                    .arg("-o")
                    .arg(&bitcode);
                let ran = cmd.run()?;
                if !ran.success {
                    return Err(BuildError::Compile {
                        file: source.clone(),
                        command: cmd.display(),
                        stderr: ran.messages,
                    });
                }
                warnings.push_str(&ran.messages);
                bitcode
            }
        };

        let module = Module::load(&context, &ir)?;
        let found = mpi_call_sites(&module);
        let after =
            insert_site_ids(&module, &found, next_id).map_err(|e| BuildError::Instrument {
                file: source.clone(),
                source: e,
            })?;
        for (site, id) in found.iter().zip(next_id..after) {
            table
                .sites
                .push(site_entry(site, id, source, &req.base_dir));
        }
        next_id = after;
        let instrumented = temp("mbh.bc");
        if !module.llvm().write_bitcode_to_path(&instrumented) {
            return Err(BuildError::Write {
                path: instrumented,
                source: std::io::Error::other("LLVM could not write the bitcode"),
            });
        }
        drop(module);

        let object = temp("o");
        let mut cmd = Cmd::new(&clang);
        cmd.args(&req.cc_flags)
            .args(["-c", "-x", "ir"])
            .arg(&instrumented)
            .arg("-o")
            .arg(&object)
            .arg("-Qunused-arguments");
        let ran = cmd.run()?;
        if !ran.success {
            return Err(BuildError::Codegen {
                file: source.clone(),
                command: cmd.display(),
                stderr: ran.messages,
            });
        }
        warnings.push_str(&ran.messages);
        objects.push(object);
    }

    let mut cmd = Cmd::new(&link_driver);
    cmd.args(&objects)
        .arg("-o")
        .arg(&req.output)
        .arg("-L")
        .arg(&runtime_dir)
        // -Xlinker, not -Wl, so that a comma in the path survives.
        .args(["-Xlinker", "-rpath", "-Xlinker"])
        .arg(&runtime_dir)
        // Kept even if a default --as-needed would drop it, and ahead of
        // the MPI libraries so its MPI_* symbols are the ones bound.
        .args([
            "-Wl,--push-state,--no-as-needed",
            "-lmbhybrid_rt",
            "-Wl,--pop-state",
        ])
        .args(&mpi_cxx.as_ref().unwrap_or(&mpi_c).link)
        .args(&req.cc_flags)
        .arg("-Qunused-arguments");
    let ran = cmd.run()?;
    if !ran.success {
        return Err(BuildError::Link {
            output: req.output.clone(),
            command: cmd.display(),
            stderr: ran.messages,
        });
    }
    warnings.push_str(&ran.messages);

    let site_table_path = SiteTable::path_for(&req.output);
    table
        .write(&site_table_path)
        .map_err(|source| BuildError::Write {
            path: site_table_path.clone(),
            source,
        })?;
    Ok(BuildOutput {
        executable: req.output.clone(),
        site_table_path,
        sites: table,
        warnings,
    })
}

/// The site table entry of `site`, numbered `id`, found in `source`.
/// Without a recorded file (no `-g` in a given `.ll`), the source itself
/// stands for it.
fn site_entry(site: &MpiCallSite<'_>, id: u32, source: &Path, base_dir: &Path) -> Site {
    let (file, line, column) = match &site.location {
        Some(loc) if !loc.file.as_os_str().is_empty() => {
            (loc.file_from(base_dir), loc.line, loc.column)
        }
        Some(loc) => (
            SourceLocation::display_path(source, base_dir),
            loc.line,
            loc.column,
        ),
        None => (SourceLocation::display_path(source, base_dir), 0, 0),
    };
    Site {
        id,
        function: site.function.clone(),
        call: site.callee.clone(),
        file: file.to_string_lossy().into_owned(),
        line,
        column,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn source_kinds() {
        let kind = |p: &str| source_kind(Path::new(p));
        assert_eq!(kind("a.c"), Some(SourceKind::C));
        assert_eq!(kind("dir.x/a.cpp"), Some(SourceKind::Cxx));
        assert_eq!(kind("a.C"), Some(SourceKind::Cxx));
        assert_eq!(kind("a.cc"), Some(SourceKind::Cxx));
        assert_eq!(kind("a.ll"), Some(SourceKind::Ir));
        assert_eq!(kind("a.bc"), Some(SourceKind::Ir));
        assert_eq!(kind("a.o"), None);
        assert_eq!(kind("Makefile"), None);
    }
}
