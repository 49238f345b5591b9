//! `mbhybrid build`: compile, instrument, link.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use inkwell::context::Context;
use mbh_static::{AnalysisInput, Module, MpiCallSite, MpiConstants, SourceLocation};
use mbh_trace::static_report::StaticReport;
use mbh_trace::{Site, SiteTable};
use rayon::prelude::*;

use crate::config::{apply_bounds, config_bounds, ZoneBound};
use crate::gcc_compat;
use crate::toolchain::{find_clang, Cmd};
use crate::{
    insert_markers, insert_site_ids, runtime_dir_for, BuildError, MarkerCounts, MpiFamily,
    MpiFlags, MpiInstall,
};

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
    /// C (`.c`, `.i`), C++ (`.cc`, `.cpp`, `.cxx`, `.C`, `.ii`) and LLVM IR
    /// (`.ll`, `.bc`) files, compiled and numbered in this order.
    pub sources: Vec<PathBuf>,
    /// Flags for clang, given to every compile and to the link
    /// (`-O2`, `-DN=4`, `-lm`).
    pub cc_flags: Vec<String>,
    /// The directory that holds [`RUNTIME_LIB`], or a subdirectory per MPI
    /// holding it ([`runtime_dir_for`]); the executable finds it there at
    /// run time (it is the executable's `RUNPATH`).
    pub runtime_dir: PathBuf,
    /// The MPI to build with (`None`: `MBHYBRID_MPI`, else the `mpicc` on
    /// the `PATH`; see [`MpiInstall::find`]).
    pub mpi: Option<MpiFamily>,
    /// The user's working directory: site file names are written relative
    /// to it when the file lies below it.
    pub base_dir: PathBuf,
    /// Zone bounds given by the caller (`--zone-bound FILE:LINE=K`); they
    /// override those of the `mbhybrid.toml` files beside the sources
    /// ([`CONFIG_FILE`](crate::CONFIG_FILE)) for the same zone.
    pub zone_bounds: Vec<ZoneBound>,
    /// Whether to check the program's loads and stores against the
    /// buffers of its pending nonblocking calls ([`crate::insert_access_checks`]).
    /// `mbhybrid build --no-access-checks` turns it off for a
    /// compute-bound program that pays for the checks.
    pub access_checks: bool,
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
pub(crate) enum SourceKind {
    C,
    Cxx,
    Ir,
}

pub(crate) fn source_kind(path: &Path) -> Option<SourceKind> {
    match path.extension()?.to_str()? {
        // `.i`/`.ii`: preprocessed C/C++, as `cc -E` or `-save-temps` leave it.
        "c" | "i" => Some(SourceKind::C),
        "cc" | "cpp" | "cxx" | "c++" | "C" | "cp" | "CPP" | "ii" => Some(SourceKind::Cxx),
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

/// Checks every source ([`check_source`]); their kinds, in order.
fn check_sources(sources: &[PathBuf]) -> Result<Vec<SourceKind>, BuildError> {
    if sources.is_empty() {
        return Err(BuildError::NoSources);
    }
    sources.iter().map(|source| check_source(source)).collect()
}

/// A source to compile to IR, with the flags of its compile.
#[derive(Debug, Clone, Copy)]
pub(crate) struct SourceInput<'a> {
    /// The file.
    pub path: &'a Path,
    /// Its kind.
    pub kind: SourceKind,
    /// The user's flags for it; they come first on clang's command line,
    /// so a `-x` among them applies to the source.
    pub cc_flags: &'a [String],
}

/// What [`build`], [`analyze`] and the compiler driver share: clang, the
/// MPI flags and a temporary directory.
pub(crate) struct Frontend {
    clang: PathBuf,
    /// `clang++`, found when C++ is compiled or linked.
    clangxx: Option<PathBuf>,
    mpi_c: MpiFlags,
    /// `mpicxx`'s flags, asked for when C++ is compiled or linked.
    mpi_cxx: Option<MpiFlags>,
    pub tmp: tempfile::TempDir,
}

impl Frontend {
    /// Finds clang 16 and takes `mpi`'s C flags; with `cxx`, also
    /// `clang++` and the flags of `mpi`'s `mpicxx`.
    pub(crate) fn new(cxx: bool, mpi: MpiInstall) -> Result<Self, BuildError> {
        let clang = find_clang(false)?;
        let clangxx = if cxx { Some(find_clang(true)?) } else { None };
        let mpi_cxx = if cxx { Some(mpi.cxx_flags()?) } else { None };
        let mpi_c = mpi.c_flags;
        let tmp = tempfile::Builder::new()
            .prefix("mbhybrid-build-")
            .tempdir()
            .map_err(|source| BuildError::TempDir { source })?;
        Ok(Frontend {
            clang,
            clangxx,
            mpi_c,
            mpi_cxx,
            tmp,
        })
    }

    /// The clang driver and MPI flags for `cxx` (C++) or C; C++ falls back
    /// to C's when the front end was made without C++.
    pub(crate) fn toolchain(&self, cxx: bool) -> (&Path, &MpiFlags) {
        match (cxx, &self.clangxx, &self.mpi_cxx) {
            (true, Some(clangxx), Some(mpi_cxx)) => (clangxx, mpi_cxx),
            _ => (&self.clang, &self.mpi_c),
        }
    }

    /// Drops from the report's list of wildcard sites those in the MPI's
    /// own headers: Open MPI's C++ bindings (`MPI::Comm::Recv`, ...) are
    /// inline functions its `mpi.h` gives every C++ program, emitted
    /// through their vtables whether the program uses them or not, and
    /// listing them (a dozen "source unknown" sites) buried the program's
    /// own. Their calls keep their site ids, and the runtime sees their
    /// wildcards when the program makes them.
    pub(crate) fn unlist_mpi_header_wildcards(&self, report: &mut StaticReport, base_dir: &Path) {
        let dirs: Vec<PathBuf> = [Some(&self.mpi_c), self.mpi_cxx.as_ref()]
            .into_iter()
            .flatten()
            .flat_map(|flags| flags.compile.iter())
            .filter_map(|flag| flag.strip_prefix("-I"))
            .filter(|dir| !dir.is_empty())
            .map(|dir| base_dir.join(dir))
            .collect();
        report.wildcards.retain(|w| {
            !dirs
                .iter()
                .any(|dir| Path::new(&w.span.file).starts_with(dir))
        });
    }

    pub(crate) fn temp(&self, index: usize, source: &Path, ext: &str) -> PathBuf {
        let stem = source
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default();
        self.tmp.path().join(format!("{index}-{stem}.{ext}"))
    }

    /// Compiles each C/C++ source to bitcode with debug information
    /// (`.ll`/`.bc` sources are taken as they are), two at a time; returns
    /// the IR files and what clang printed, in source order.
    pub(crate) fn compile(
        &self,
        sources: &[SourceInput<'_>],
    ) -> Result<(Vec<PathBuf>, String), BuildError> {
        let results: Vec<Result<(PathBuf, String), BuildError>> = sources
            .par_iter()
            .enumerate()
            .map(|(index, input)| {
                let (source, kind, cc_flags) = (input.path, input.kind, input.cc_flags);
                if kind == SourceKind::Ir {
                    return Ok((source.to_owned(), String::new()));
                }
                let bitcode = self.temp(index, source, "bc");
                let (driver, mpi) = self.toolchain(kind == SourceKind::Cxx);
                let cmd = compile_command(driver, kind, cc_flags, &mpi.compile, source, &bitcode);
                let ran = cmd.run()?;
                if !ran.success {
                    return Err(BuildError::Compile {
                        file: source.to_owned(),
                        command: cmd.display(),
                        stderr: ran.messages,
                        status: ran.status,
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
    pub(crate) fn constants(&self) -> Result<MpiConstants, BuildError> {
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
    /// The MPI whose `mpi.h` the sources are compiled with, as for
    /// [`BuildRequest::mpi`].
    pub mpi: Option<MpiFamily>,
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
    let kinds = check_sources(&req.sources)?;
    let mpi = MpiInstall::find(req.mpi)?;
    let frontend = Frontend::new(kinds.contains(&SourceKind::Cxx), mpi)?;
    let mut bounds = config_bounds(&req.sources)?;
    bounds.extend(req.zone_bounds.iter().cloned());
    let consts = frontend.constants()?;
    let inputs = source_inputs(&req.sources, &kinds, &req.cc_flags);
    let (irs, warnings) = frontend.compile(&inputs)?;
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
    frontend.unlist_mpi_header_wildcards(&mut analysis.report, &req.base_dir);
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
///    with warnings (implicit declarations, int conversions, …; see
///    `docs/design/instrument.md`); `.ll`/`.bc` sources are taken as they are;
/// 4. analyses all modules together ([`mbh_static::analyze`]): loops,
///    wildcard sites, zones, the loop abstraction choice;
/// 5. inserts the `MPI_Pcontrol` markers ([`insert_markers`]): on the
///    entry and exit edges of every loop with wildcard sites (7301/7302
///    for loops chosen for abstraction, 7304/7305 for the others) and
///    after the call that opens each zone with a bound (7303);
/// 6. numbers the MPI call sites of all files 1, 2, … in file order and
///    inserts each id's store before its call ([`insert_site_ids`]);
///    tells the runtime the size of each heap block the program's own code
///    allocates, and each free (`allocations.rs`);
///    puts a check of every load and store that may touch the buffer of
///    a pending nonblocking request before it ([`crate::insert_access_checks`],
///    one load and a rarely taken branch while nothing is
///    pending);
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
///
/// # Example
///
/// ```no_run
/// use mbh_instrument::{build, BuildRequest, MpiFamily, ZoneBound};
///
/// let out = build(&BuildRequest {
///     output: "app".into(),
///     sources: vec!["app.c".into()],
///     cc_flags: vec!["-O1".into()],
///     runtime_dir: "target/debug".into(),
///     base_dir: std::env::current_dir()?,
///     zone_bounds: vec![ZoneBound::parse("app.c:120=3")?],
///     // `None`: MBHYBRID_MPI, else the MPI of the `mpicc` on the PATH.
///     mpi: Some(MpiFamily::OpenMpi),
///     access_checks: true,
/// })?;
/// for site in &out.sites.sites {
///     println!("{} {}:{} {}", site.id, site.file, site.line, site.call);
/// }
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn build(req: &BuildRequest) -> Result<BuildOutput, BuildError> {
    let kinds = check_sources(&req.sources)?;
    let mpi = MpiInstall::find(req.mpi)?;
    let runtime_dir = runtime_dir_for(&req.runtime_dir, mpi.family)?;
    if let Some(dir) = req.output.parent() {
        if !dir.as_os_str().is_empty() && !dir.is_dir() {
            return Err(BuildError::OutputDir {
                path: req.output.clone(),
                dir: dir.to_owned(),
            });
        }
    }
    let cxx = kinds.contains(&SourceKind::Cxx);
    let frontend = Frontend::new(cxx, mpi)?;
    let inputs = source_inputs(&req.sources, &kinds, &req.cc_flags);
    let (irs, mut warnings) = frontend.compile(&inputs)?;
    let units: Vec<Unit> = irs
        .into_iter()
        .zip(&req.sources)
        .map(|(bitcode, source)| Unit {
            source: source.clone(),
            display: source.to_string_lossy().into_owned(),
            bitcode,
            flags: req.cc_flags.clone(),
            dir: None,
        })
        .collect();
    let program = instrument_program(
        &frontend,
        &units,
        Options {
            zone_bounds: &req.zone_bounds,
            access_checks: req.access_checks,
        },
        &req.base_dir,
        &req.output,
    )?;
    warnings.push_str(&program.warnings);

    let (link_driver, mpi) = frontend.toolchain(cxx);
    let mut cmd = Cmd::new(link_driver);
    cmd.args(&program.objects)
        .arg("-o")
        .arg(&req.output)
        .args(runtime_link_flags(&runtime_dir))
        .args(&mpi.link)
        .args(&req.cc_flags)
        .arg("-Qunused-arguments");
    let ran = cmd.run()?;
    if !ran.success {
        return Err(BuildError::Link {
            output: req.output.clone(),
            command: cmd.display(),
            stderr: ran.messages,
            status: ran.status,
        });
    }
    warnings.push_str(&ran.messages);
    program.finish(&req.output, warnings)
}

/// The link flags that make an executable use the runtime in `runtime_dir`:
/// found there at link time and, through the `RUNPATH`, at run time; kept
/// even if a default `--as-needed` would drop it (the program does not
/// name it, but it must be loaded for its `MPI_*` symbols to win).
pub(crate) fn runtime_link_flags(runtime_dir: &Path) -> Vec<OsString> {
    let mut flags: Vec<OsString> = vec!["-L".into(), runtime_dir.into()];
    // -Xlinker, not -Wl, so that a comma in the path survives.
    flags.extend(["-Xlinker", "-rpath", "-Xlinker"].map(OsString::from));
    flags.push(runtime_dir.into());
    flags.extend(
        [
            "-Wl,--push-state,--no-as-needed",
            "-lmbhybrid_rt",
            "-Wl,--pop-state",
        ]
        .map(OsString::from),
    );
    flags
}

/// The sources with their kinds, all compiled with `cc_flags`.
fn source_inputs<'a>(
    sources: &'a [PathBuf],
    kinds: &[SourceKind],
    cc_flags: &'a [String],
) -> Vec<SourceInput<'a>> {
    sources
        .iter()
        .zip(kinds)
        .map(|(path, &kind)| SourceInput {
            path,
            kind,
            cc_flags,
        })
        .collect()
}

/// A translation unit on its way into the instrumented program: its
/// front-end IR and how to generate code from it.
#[derive(Debug, Clone)]
pub(crate) struct Unit {
    /// The source file: what sites name when the IR records no file, and
    /// where `mbhybrid.toml` is looked for.
    pub source: PathBuf,
    /// The source as the site table lists it.
    pub display: String,
    /// The front end's IR (bitcode or text).
    pub bitcode: PathBuf,
    /// The flags code generation gets (`-O2`, `-fPIC`, …).
    pub flags: Vec<String>,
    /// The directory code generation runs in (the compile's, so relative
    /// paths among `flags` mean what they meant); `None`: this process's.
    pub dir: Option<PathBuf>,
}

/// The units instrumented and compiled to objects, not yet linked.
pub(crate) struct Program {
    /// The site table to write beside the executable.
    pub table: SiteTable,
    /// One object per unit, in unit order, in the front end's temporary
    /// directory.
    pub objects: Vec<PathBuf>,
    /// How many markers were inserted.
    pub markers: MarkerCounts,
    /// What clang printed while generating code.
    pub warnings: String,
}

/// What the caller asks of [`instrument_program`] beyond the units.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Options<'a> {
    /// Bounds that override those of `mbhybrid.toml`.
    pub zone_bounds: &'a [ZoneBound],
    /// Whether to insert the access checks.
    pub access_checks: bool,
}

/// Steps 4 to 7 of [`build`] for `units`, whatever made them: reads the
/// zone bounds of the `mbhybrid.toml` beside each unit's source (the
/// options' bounds override them), analyses all units together, inserts
/// markers and site ids (numbered across all units, in order), and
/// generates one object per unit with its own flags.
pub(crate) fn instrument_program(
    frontend: &Frontend,
    units: &[Unit],
    options: Options<'_>,
    base_dir: &Path,
    output: &Path,
) -> Result<Program, BuildError> {
    let sources: Vec<PathBuf> = units.iter().map(|u| u.source.clone()).collect();
    let mut bounds = config_bounds(&sources)?;
    bounds.extend(options.zone_bounds.iter().cloned());
    let mut table = SiteTable::new(
        output.to_string_lossy(),
        units.iter().map(|u| u.display.clone()).collect(),
    );
    table.access_checks = options.access_checks;
    table.directory = std::path::absolute(base_dir)
        .unwrap_or_else(|_| base_dir.to_owned())
        .to_string_lossy()
        .into_owned();
    let (instrumented, markers) =
        instrument_units(frontend, units, &bounds, options, base_dir, &mut table)?;
    let (objects, warnings) = codegen(frontend, units, &instrumented)?;
    Ok(Program {
        table,
        objects,
        markers,
        warnings,
    })
}

/// Steps 4 to 6 of [`build`]: analyses all `units` together under zone
/// bounds `bounds`, inserts markers and site ids (numbered across all
/// units, in order, into `table`, with the analysis's report), and writes
/// each unit's instrumented bitcode; its paths, in the units' order, and
/// how many markers were inserted.
fn instrument_units(
    frontend: &Frontend,
    units: &[Unit],
    bounds: &[ZoneBound],
    options: Options<'_>,
    base_dir: &Path,
    table: &mut SiteTable,
) -> Result<(Vec<PathBuf>, MarkerCounts), BuildError> {
    let sources: Vec<PathBuf> = units.iter().map(|u| u.source.clone()).collect();
    let consts = frontend.constants()?;
    let mut markers = MarkerCounts::default();
    let mut instrumented = Vec::new();
    let context = Context::create();
    let modules = units
        .iter()
        .map(|unit| Module::load(&context, &unit.bitcode))
        .collect::<Result<Vec<_>, _>>()?;
    let inputs: Vec<AnalysisInput<'_, '_>> = modules
        .iter()
        .zip(&sources)
        .map(|(module, source)| AnalysisInput { module, source })
        .collect();
    let mut analysis = mbh_static::analyze(&inputs, &consts, base_dir);
    let zone_bounds = apply_bounds(&mut analysis.report, bounds);
    // Before any module changes: which functions cannot reach MPI, over
    // the whole program (a loop may call another unit's function).
    let llvm_modules: Vec<_> = modules.iter().map(|m| m.llvm()).collect();
    let stays = crate::versioning::StaysUnchecked::program(&llvm_modules);
    for (index, ((module, plan), source)) in modules
        .iter()
        .zip(&analysis.modules)
        .zip(&sources)
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
        let after =
            insert_site_ids(module, &plan.sites, plan.first_site_id).map_err(instrument_error)?;
        for (site, id) in plan.sites.iter().zip(plan.first_site_id..after) {
            table.sites.push(site_entry(site, id, source, base_dir));
        }
        crate::insert_allocation_notes(module).map_err(instrument_error)?;
        if options.access_checks {
            // Last: it splits blocks the passes above planned on.
            crate::accesses::insert_access_checks_with(module, &stays).map_err(instrument_error)?;
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
    frontend.unlist_mpi_header_wildcards(&mut analysis.report, base_dir);
    table.analysis = Some(analysis.report);
    Ok((instrumented, markers))
}

/// Step 7 of [`build`]: generates one object per unit from its
/// instrumented bitcode, with the unit's own flags (in parallel): the
/// objects, in the units' order, and what clang printed.
fn codegen(
    frontend: &Frontend,
    units: &[Unit],
    instrumented: &[PathBuf],
) -> Result<(Vec<PathBuf>, String), BuildError> {
    let objects: Vec<Result<(PathBuf, String), BuildError>> = instrumented
        .par_iter()
        .zip(units)
        .enumerate()
        .map(|(index, (bitcode, unit))| {
            let object = frontend.temp(index, &unit.source, "o");
            let mut cmd = Cmd::new(&frontend.clang);
            cmd.args(&unit.flags)
                .args(["-c", "-x", "ir"])
                .arg(bitcode)
                .arg("-o")
                .arg(&object)
                .arg("-Qunused-arguments");
            if let Some(dir) = unit.dir.as_deref().filter(|dir| dir.is_dir()) {
                cmd.current_dir(dir);
            }
            let ran = cmd.run()?;
            if !ran.success {
                return Err(BuildError::Codegen {
                    file: unit.source.clone(),
                    command: cmd.display(),
                    stderr: ran.messages,
                });
            }
            Ok((object, ran.messages))
        })
        .collect();
    let mut object_paths = Vec::new();
    let mut warnings = String::new();
    for object in objects {
        let (path, messages) = object?;
        warnings.push_str(&messages);
        object_paths.push(path);
    }
    Ok((object_paths, warnings))
}

impl Program {
    /// Step 9 of [`build`], once `executable` is linked: writes the site
    /// table beside it.
    pub(crate) fn finish(
        self,
        executable: &Path,
        warnings: String,
    ) -> Result<BuildOutput, BuildError> {
        let site_table_path = SiteTable::path_for(executable);
        self.table
            .write(&site_table_path)
            .map_err(|source| BuildError::Write {
                path: site_table_path.clone(),
                source,
            })?;
        let preflight = self
            .table
            .analysis
            .as_ref()
            .map(StaticReport::warnings)
            .unwrap_or_default();
        Ok(BuildOutput {
            executable: executable.to_owned(),
            site_table_path,
            sites: self.table,
            warnings,
            preflight,
            markers: self.markers,
        })
    }
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
        // Preprocessed sources, as `-save-temps` and `cc -E` leave them.
        assert_eq!(kind("a.i"), Some(SourceKind::C));
        assert_eq!(kind("a.ii"), Some(SourceKind::Cxx));
        assert_eq!(kind("a.o"), None);
        assert_eq!(kind("Makefile"), None);
    }
}
