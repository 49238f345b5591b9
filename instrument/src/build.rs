//! `mbhybrid build`: compile, instrument, link.

use std::path::{Path, PathBuf};

use inkwell::context::Context;
use mbh_static::{AnalysisInput, Module, MpiCallSite, MpiConstants, SourceLocation};
use mbh_trace::static_report::StaticReport;
use mbh_trace::{Site, SiteTable};
use rayon::prelude::*;

use crate::config::{apply_bounds, config_bounds, ZoneBound};
use crate::gcc_compat;
use crate::toolchain::{find_clang, Cmd};
use crate::{insert_markers, insert_site_ids, BuildError, MarkerCounts, MpiFlags};

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
    /// Zone bounds given by the caller (`--zone-bound FILE:LINE=K`); they
    /// override those of the `mbhybrid.toml` files beside the sources
    /// ([`CONFIG_FILE`](crate::CONFIG_FILE)) for the same zone.
    pub zone_bounds: Vec<ZoneBound>,
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
    /// The pre-flight warnings of the static analysis, one line each
    /// ([`StaticReport::warnings`]): MPI calls the runtime does not
    /// handle, irreducible loops, zone bounds that name no zone.
    pub preflight: Vec<String>,
    /// How many markers were inserted.
    pub markers: MarkerCounts,
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

/// The front end both [`build`] and [`analyze`] share: checked sources,
/// clang, the MPI flags and a temporary directory.
struct Frontend {
    kinds: Vec<SourceKind>,
    clang: PathBuf,
    link_driver: PathBuf,
    mpi_c: MpiFlags,
    mpi_cxx: Option<MpiFlags>,
    tmp: tempfile::TempDir,
}

impl Frontend {
    fn new(sources: &[PathBuf]) -> Result<Self, BuildError> {
        if sources.is_empty() {
            return Err(BuildError::NoSources);
        }
        let kinds = sources
            .iter()
            .map(|source| check_source(source))
            .collect::<Result<Vec<_>, _>>()?;
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
        Ok(Frontend {
            kinds,
            clang,
            link_driver,
            mpi_c,
            mpi_cxx,
            tmp,
        })
    }

    fn temp(&self, index: usize, source: &Path, ext: &str) -> PathBuf {
        let stem = source
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default();
        self.tmp.path().join(format!("{index}-{stem}.{ext}"))
    }

    /// Compiles each C/C++ source to bitcode with debug information
    /// (`.ll`/`.bc` sources are taken as they are), two at a time; returns
    /// the IR files and what clang printed, in source order.
    fn compile(
        &self,
        sources: &[PathBuf],
        cc_flags: &[String],
    ) -> Result<(Vec<PathBuf>, String), BuildError> {
        let results: Vec<Result<(PathBuf, String), BuildError>> = sources
            .par_iter()
            .enumerate()
            .map(|(index, source)| {
                let kind = self.kinds[index];
                if kind == SourceKind::Ir {
                    return Ok((source.clone(), String::new()));
                }
                let bitcode = self.temp(index, source, "bc");
                let (driver, mpi) = match (kind, &self.mpi_cxx) {
                    (SourceKind::Cxx, Some(mpi_cxx)) => (&self.link_driver, mpi_cxx),
                    _ => (&self.clang, &self.mpi_c),
                };
                let cmd = compile_command(driver, kind, cc_flags, &mpi.compile, source, &bitcode);
                let ran = cmd.run()?;
                if !ran.success {
                    return Err(BuildError::Compile {
                        file: source.clone(),
                        command: cmd.display(),
                        stderr: ran.messages,
                    });
                }
                Ok((bitcode, ran.messages))
            })
            .collect();
        let mut irs = Vec::new();
        let mut warnings = String::new();
        for result in results {
            let (ir, messages) = result?;
            irs.push(ir);
            warnings.push_str(&messages);
        }
        Ok((irs, warnings))
    }

    /// The installed MPI's constants: [`MpiConstants::PROBE_C`] compiled
    /// with the MPI compile flags, read back from its IR.
    fn constants(&self) -> Result<MpiConstants, BuildError> {
        let probe = self.tmp.path().join("mbh-mpi-constants.c");
        std::fs::write(&probe, MpiConstants::PROBE_C).map_err(|source| BuildError::Write {
            path: probe.clone(),
            source,
        })?;
        let ir = self.tmp.path().join("mbh-mpi-constants.ll");
        let mut cmd = Cmd::new(&self.clang);
        cmd.args(&self.mpi_c.compile)
            .args(["-Qunused-arguments", "-S", "-emit-llvm", "-g0"])
            .arg(&probe)
            .arg("-o")
            .arg(&ir);
        let ran = cmd.run()?;
        if !ran.success {
            return Err(BuildError::MpiConstants {
                detail: format!("the command {} failed:\n{}", cmd.display(), ran.messages),
            });
        }
        let context = Context::create();
        let module = Module::load(&context, &ir)?;
        MpiConstants::from_probe(&module).map_err(|e| BuildError::MpiConstants {
            detail: e.to_string(),
        })
    }
}

/// The command that compiles C or C++ `source` to bitcode `bitcode`:
///
/// ```text
/// DRIVER [C: -Wno-error=GROUP...] USER_FLAGS MPI_FLAGS -g -Xclang -disable-llvm-passes
///        -Qunused-arguments -emit-llvm -c SOURCE -o BITCODE
/// ```
///
/// For C, the flags that make clang 16 take what gcc 12 (`mpicc`) takes
/// ([`gcc_compat::c_flags`]) come first, so that the user's own
/// `-Werror=GROUP` after them wins. The user's flags come before the
/// source, as mpicc puts them, so that `-x` applies to it; `-g` comes after
/// them so that every site has a line even under `-g0`.
fn compile_command(
    driver: &Path,
    kind: SourceKind,
    user_flags: &[String],
    mpi_flags: &[String],
    source: &Path,
    bitcode: &Path,
) -> Cmd {
    let mut cmd = Cmd::new(driver);
    if kind == SourceKind::C {
        cmd.args(gcc_compat::c_flags(user_flags));
    }
    cmd.args(user_flags)
        .args(mpi_flags)
        .args(["-g", "-Xclang", "-disable-llvm-passes"])
        .args(["-Qunused-arguments", "-emit-llvm", "-c"])
        .arg(source)
        .arg("-o")
        .arg(bitcode);
    cmd
}

/// What to analyse, as `mbhybrid analyze FILES... [-- CC_FLAGS]` asks.
#[derive(Debug, Clone)]
pub struct AnalyzeRequest {
    /// C, C++ and LLVM IR files, as for [`BuildRequest::sources`].
    pub sources: Vec<PathBuf>,
    /// Flags for clang, given to every compile.
    pub cc_flags: Vec<String>,
    /// The user's working directory: file names are written relative to
    /// it when the file lies below it.
    pub base_dir: PathBuf,
    /// Zone bounds given by the caller (`--zone-bound`); they override
    /// those of `mbhybrid.toml` ([`CONFIG_FILE`](crate::CONFIG_FILE)) for the same zone.
    pub zone_bounds: Vec<ZoneBound>,
}

/// What [`analyze`] found.
#[derive(Debug, Clone)]
pub struct AnalyzeOutput {
    /// The static report, exactly as [`build`] would store it in
    /// `OUT.mbh.json`.
    pub report: StaticReport,
    /// The pre-flight warnings ([`StaticReport::warnings`]): unsupported
    /// MPI calls, irreducible loops, zone bounds that name no zone.
    pub preflight: Vec<String>,
    /// What clang printed while compiling, verbatim.
    pub warnings: String,
}

/// Compiles the sources as [`build`] does (without linking or writing
/// anything), analyses them and returns the static report.
pub fn analyze(req: &AnalyzeRequest) -> Result<AnalyzeOutput, BuildError> {
    let frontend = Frontend::new(&req.sources)?;
    let mut bounds = config_bounds(&req.sources)?;
    bounds.extend(req.zone_bounds.iter().cloned());
    let consts = frontend.constants()?;
    let (irs, warnings) = frontend.compile(&req.sources, &req.cc_flags)?;
    let context = Context::create();
    let modules = irs
        .iter()
        .map(|ir| Module::load(&context, ir))
        .collect::<Result<Vec<_>, _>>()?;
    let inputs: Vec<AnalysisInput<'_, '_>> = modules
        .iter()
        .zip(&req.sources)
        .map(|(module, source)| AnalysisInput { module, source })
        .collect();
    let mut analysis = mbh_static::analyze(&inputs, &consts, &req.base_dir);
    apply_bounds(&mut analysis.report, &bounds);
    Ok(AnalyzeOutput {
        preflight: analysis.report.warnings(),
        report: analysis.report,
        warnings,
    })
}

/// Builds an instrumented executable and its site table.
///
/// In order:
///
/// 1. checks that every source is a readable file of a known kind, that
///    [`RUNTIME_LIB`] is in [`BuildRequest::runtime_dir`] and that the
///    executable's directory exists, and reads the zone bounds of the
///    `mbhybrid.toml` files beside the sources ([`CONFIG_FILE`](crate::CONFIG_FILE));
/// 2. finds clang 16, asks `mpicc` (and `mpicxx` when there are C++
///    sources) for the MPI flags ([`MpiFlags::probe`]), and reads the
///    installed MPI's constants ([`MpiConstants::PROBE_C`]);
/// 3. compiles each C/C++ source to bitcode with debug information
///    (`clang <cc_flags> <mpi compile flags> -g -Xclang -disable-llvm-passes
///    -emit-llvm -c SRC`), so the IR is the front end's, before any
///    optimization; C sources get, ahead of `cc_flags`, the
///    `-Wno-error=GROUP` flags that make clang 16 take the C gcc 12 takes
///    with warnings (implicit declarations, int conversions, …; see the
///    crate documentation); `.ll`/`.bc` sources are taken as they are;
/// 4. analyses all modules together ([`mbh_static::analyze`]): loops,
///    wildcard sites, zones, the loop abstraction choice;
/// 5. inserts the `MPI_Pcontrol` markers ([`insert_markers`]): on the
///    entry and exit edges of every loop with wildcard sites (7301/7302
///    for loops chosen for abstraction, 7304/7305 for the others) and
///    after the call that opens each zone with a bound (7303);
/// 6. numbers the MPI call sites of all files 1, 2, … in file order and
///    inserts each id's store before its call ([`insert_site_ids`]);
/// 7. compiles each instrumented module to an object with the user's flags
///    (so `-O2` optimizes it exactly once, as a plain `clang -O2 -c` would);
/// 8. links the objects with the runtime ahead of the MPI libraries, so
///    its `MPI_*` wrappers are the ones the program calls, and with a
///    `RUNPATH` to the runtime directory;
/// 9. writes the site table, with the static report as its `analysis`, to
///    `OUT.mbh.json`.
///
/// Intermediate files live in a temporary directory removed on return. The
/// instrumented program computes exactly what the program computes without
/// instrumentation: the added code stores constants into the runtime's
/// register and calls `MPI_Pcontrol`, which only informs the runtime.
pub fn build(req: &BuildRequest) -> Result<BuildOutput, BuildError> {
    if req.sources.is_empty() {
        return Err(BuildError::NoSources);
    }
    for source in &req.sources {
        check_source(source)?;
    }
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
    let mut bounds = config_bounds(&req.sources)?;
    bounds.extend(req.zone_bounds.iter().cloned());
    let frontend = Frontend::new(&req.sources)?;
    let consts = frontend.constants()?;
    let (irs, mut warnings) = frontend.compile(&req.sources, &req.cc_flags)?;

    let mut table = SiteTable::new(
        req.output.to_string_lossy(),
        req.sources
            .iter()
            .map(|s| s.to_string_lossy().into_owned())
            .collect(),
    );
    let mut markers = MarkerCounts::default();
    let mut instrumented = Vec::new();
    {
        let context = Context::create();
        let modules = irs
            .iter()
            .map(|ir| Module::load(&context, ir))
            .collect::<Result<Vec<_>, _>>()?;
        let inputs: Vec<AnalysisInput<'_, '_>> = modules
            .iter()
            .zip(&req.sources)
            .map(|(module, source)| AnalysisInput { module, source })
            .collect();
        let mut analysis = mbh_static::analyze(&inputs, &consts, &req.base_dir);
        let zone_bounds = apply_bounds(&mut analysis.report, &bounds);
        for (index, ((module, plan), source)) in modules
            .iter()
            .zip(&analysis.modules)
            .zip(&req.sources)
            .enumerate()
        {
            let instrument_error = |e| BuildError::Instrument {
                file: source.clone(),
                source: e,
            };
            let counts = insert_markers(module, plan, &zone_bounds).map_err(instrument_error)?;
            markers.loop_markers += counts.loop_markers;
            markers.split_edges += counts.split_edges;
            markers.zone_markers += counts.zone_markers;
            let after = insert_site_ids(module, &plan.sites, plan.first_site_id)
                .map_err(instrument_error)?;
            for (site, id) in plan.sites.iter().zip(plan.first_site_id..after) {
                table
                    .sites
                    .push(site_entry(site, id, source, &req.base_dir));
            }
            let path = frontend.temp(index, source, "mbh.bc");
            if !module.llvm().write_bitcode_to_path(&path) {
                return Err(BuildError::Write {
                    path,
                    source: std::io::Error::other("LLVM could not write the bitcode"),
                });
            }
            instrumented.push(path);
        }
        table.analysis = Some(analysis.report);
    }

    let objects: Vec<Result<(PathBuf, String), BuildError>> = instrumented
        .par_iter()
        .zip(&req.sources)
        .enumerate()
        .map(|(index, (bitcode, source))| {
            let object = frontend.temp(index, source, "o");
            let mut cmd = Cmd::new(&frontend.clang);
            cmd.args(&req.cc_flags)
                .args(["-c", "-x", "ir"])
                .arg(bitcode)
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
            Ok((object, ran.messages))
        })
        .collect();
    let mut object_paths = Vec::new();
    for object in objects {
        let (path, messages) = object?;
        warnings.push_str(&messages);
        object_paths.push(path);
    }

    let mut cmd = Cmd::new(&frontend.link_driver);
    cmd.args(&object_paths)
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
        .args(&frontend.mpi_cxx.as_ref().unwrap_or(&frontend.mpi_c).link)
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
    let preflight = table
        .analysis
        .as_ref()
        .map(StaticReport::warnings)
        .unwrap_or_default();
    Ok(BuildOutput {
        executable: req.output.clone(),
        site_table_path,
        sites: table,
        warnings,
        preflight,
        markers,
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
        function: mbh_trace::demangle(&site.function).into_owned(),
        call: site.callee.clone(),
        file: file.to_string_lossy().into_owned(),
        line,
        column,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(cmd: &Cmd) -> Vec<String> {
        shell_words::split(&cmd.display()).unwrap()
    }

    fn position(words: &[String], word: &str) -> usize {
        words
            .iter()
            .position(|w| w == word)
            .unwrap_or_else(|| panic!("no {word} in {words:?}"))
    }

    /// Issue 17: the gcc-compatibility flags precede the user's, so a
    /// user's `-Werror=GROUP` comes later and wins (clang takes the last
    /// word on a group).
    #[test]
    fn user_werror_flags_come_after_the_gcc_compatibility_flags() {
        let user: Vec<String> = ["-O1", "-Werror=int-conversion", "-Wno-error=return-type"]
            .map(String::from)
            .into();
        let mpi = vec!["-I/usr/include/mpich".to_string()];
        let cmd = compile_command(
            Path::new("clang-16"),
            SourceKind::C,
            &user,
            &mpi,
            Path::new("app.c"),
            Path::new("app.bc"),
        );
        let words = words(&cmd);
        let ours = position(&words, "-Wno-error=int-conversion");
        let theirs = position(&words, "-Werror=int-conversion");
        assert!(ours < theirs, "{words:?}");
        for group in gcc_compat::GCC_WARNS_CLANG_REFUSES {
            assert!(position(&words, &format!("-Wno-error={group}")) < position(&words, "-O1"));
        }
        // The user's flags stay before the source (`-x` applies to it) and
        // `-g` after them.
        assert!(position(&words, "-O1") < position(&words, "app.c"));
        assert!(position(&words, "-Wno-error=return-type") < position(&words, "-g"));
        assert_eq!(words.last().map(String::as_str), Some("app.bc"));
    }

    #[test]
    fn cxx_and_werror_compiles_get_no_gcc_compatibility_flags() {
        let compile = |kind, user: &[&str]| {
            let user: Vec<String> = user.iter().map(|w| w.to_string()).collect();
            words(&compile_command(
                Path::new("clang-16"),
                kind,
                &user,
                &[],
                Path::new("app.cc"),
                Path::new("app.bc"),
            ))
        };
        let downgrades = |words: &[String]| {
            words
                .iter()
                .filter(|w| w.starts_with("-Wno-error="))
                .count()
        };
        assert_eq!(downgrades(&compile(SourceKind::Cxx, &["-O1"])), 0);
        assert_eq!(downgrades(&compile(SourceKind::C, &["-Werror"])), 0);
        assert_eq!(downgrades(&compile(SourceKind::C, &["-x", "c++"])), 0);
        assert_eq!(
            downgrades(&compile(SourceKind::C, &[])),
            gcc_compat::GCC_WARNS_CLANG_REFUSES.len()
        );
    }

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
