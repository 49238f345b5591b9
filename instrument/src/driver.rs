//! `mbhybrid-cc` and `mbhybrid-c++`: compiler drivers that take what
//! `mpicc`/`mpicxx` take and build what `mbhybrid build` builds.
//!
//! [`drive`] looks at the command line the way a compiler driver does and
//! does one of:
//!
//! * **compile** (`-c`): runs clang with the user's arguments, the MPI
//!   compile flags, `-g` and `-Xclang -fembed-bitcode=all` (the front end's
//!   IR, before any optimization pass, goes into the object), then moves
//!   that IR and the flags code generation will need into the object's
//!   record section ([`crate::embed`]). The object is a real one: a plain
//!   linker links it as it is.
//! * **link** (inputs and none of the modes below): compiles the sources
//!   on the command line to IR, reads the records of the objects and of
//!   the members of static archives (given by path or found through `-l`
//!   and `-L`), instruments all of these units as one program (site ids
//!   unique across them), generates an object from each with the flags of
//!   its own compile, puts the instrumented members into copies of their
//!   archives, and links the user's command line, with every such input
//!   replaced, against the runtime and MPI; the site table goes beside the
//!   output (`-o`, else `a.out`). Inputs without records link as they are.
//! * **anything else** (`-E`, `-S`, `-M`, `-MM`, `-fsyntax-only`,
//!   `-emit-llvm`, `-###`, `-shared`, `-r`, no input at all as in
//!   `--version` or `-v`): runs clang with the user's arguments and the
//!   MPI flags `mpicc` would add (compile flags, and link flags when
//!   clang links), with clang's output and exit status.
//!
//! MPICH's own `mpicc` options are honoured where they make sense: `-show`
//! prints the plain compiler command, `-show-compile-info` and
//! `-show-link-info` the MPI flags, `-echo` is ignored; `-cc=`, `-config=`,
//! `-profile=`, `-static-mpi` and `-nativelinking` are refused.

use std::path::{Path, PathBuf};

use mbh_static::SourceLocation;

use crate::build::{
    instrument_program, runtime_link_flags, source_kind, Frontend, SourceInput, SourceKind, Unit,
};
use crate::embed::{attach_record, inspect, Inspected, Language, Member, Record, UnitMeta};
use crate::toolchain::{find_clang, find_llvm_tool, Cmd};
use crate::{runtime_dir_for, BuildError, BuildOutput, MpiFlags, MpiInstall};

/// What a compiler driver was asked to do.
#[derive(Debug, Clone)]
pub struct DriverRequest {
    /// `mbhybrid-cc` ([`Language::C`]: `clang-16`, `mpicc`'s flags) or
    /// `mbhybrid-c++` ([`Language::Cxx`]: `clang++-16`, `mpicxx`'s).
    pub language: Language,
    /// The arguments after the program name, as given.
    pub args: Vec<String>,
    /// The directory that holds [`RUNTIME_LIB`](crate::RUNTIME_LIB).
    pub runtime_dir: PathBuf,
    /// The current directory: site file names are relative to it when
    /// the file lies below it.
    pub base_dir: PathBuf,
    /// Whether linked executables check their accesses against pending
    /// nonblocking buffers (for `buffer-reuse`); see [`access_checks_from_env`].
    pub access_checks: bool,
}

/// The environment variable that turns the access checks off for
/// `mbhybrid-cc` and `mbhybrid-c++`, whose command line is the build
/// system's: `MBHYBRID_ACCESS_CHECKS=off make`.
pub const ENV_ACCESS_CHECKS: &str = "MBHYBRID_ACCESS_CHECKS";

/// The access checks as `value` of [`ENV_ACCESS_CHECKS`] asks: on when
/// unset; off for `off`, `0`, `no` or `false`; any other value is an
/// error that says what is accepted.
pub fn access_checks_from_env(value: Option<&str>) -> Result<bool, BuildError> {
    match value.map(str::trim) {
        None | Some("") | Some("on" | "1" | "yes" | "true") => Ok(true),
        Some("off" | "0" | "no" | "false") => Ok(false),
        Some(other) => Err(BuildError::BadEnv {
            variable: ENV_ACCESS_CHECKS,
            value: other.to_owned(),
            expected: "`on` or `off`",
        }),
    }
}

/// What [`drive`] did.
#[derive(Debug)]
#[must_use]
pub enum Driven {
    /// clang ran with the standard streams of this process and exited
    /// with this status, which the driver exits with too.
    Exited(i32),
    /// An MPI wrapper query (`-show`, `-show-compile-info`, …): the text
    /// to print on standard output.
    Printed(String),
    /// An instrumented executable was linked (boxed: it is much larger
    /// than the other answers).
    Linked(Box<BuildOutput>),
}

/// Runs one compiler driver command: compile (`-c`), link, or pass the
/// command to clang, as the [crate docs](crate) and `driver.rs` describe.
///
/// A compile or link error of clang comes back as
/// [`BuildError::Compile`] or [`BuildError::Link`], whose `stderr` and
/// `status` are what clang printed and exited with.
pub fn drive(req: &DriverRequest) -> Result<Driven, BuildError> {
    let mut args = Vec::with_capacity(req.args.len());
    let mut show = None;
    for arg in &req.args {
        match wrapper_option(arg)? {
            Some(WrapperOption::Show(what)) => show = Some(what),
            Some(WrapperOption::Ignore) => {}
            None => args.push(arg.clone()),
        }
    }
    let (expanded, from_response_file) = expand_response_files(&args, &req.base_dir)?;
    let words = parse(&expanded);
    let mode = Mode::of(&words);
    if let Some(what) = show {
        return show_info(req.language, &args, mode, what);
    }
    if matches!(mode, Mode::Compile | Mode::Link) {
        if let Some(lto) = link_time_optimization(&words) {
            return Err(BuildError::WrapperOption {
                option: lto,
                why: "its objects hold IR instead of machine code, where the driver keeps the IR \
                      beside the code; drop it for the verification build",
            });
        }
    }
    match mode {
        Mode::Info => passthrough(req.language, &args, false, false),
        Mode::NoLink => passthrough(req.language, &args, true, false),
        Mode::OtherLink { mpi_link } => passthrough(req.language, &args, true, mpi_link),
        Mode::Compile => compile(req, &args, &words),
        Mode::Link => link(req, &words, from_response_file),
    }
}

/// An option of MPICH's `mpicc` that the driver handles itself.
pub(crate) enum WrapperOption {
    Show(Show),
    Ignore,
}

/// What `-show` and its kin print.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Show {
    /// The plain compiler command line.
    Command,
    /// The MPI compile flags.
    CompileFlags,
    /// The MPI link flags.
    LinkFlags,
}

pub(crate) fn wrapper_option(arg: &str) -> Result<Option<WrapperOption>, BuildError> {
    let refuse = |why| {
        Err(BuildError::WrapperOption {
            option: arg.to_owned(),
            why,
        })
    };
    Ok(Some(match arg {
        "-show" | "-compile-info" | "-compile_info" | "-link-info" | "-link_info" => {
            WrapperOption::Show(Show::Command)
        }
        "-show-compile-info" => WrapperOption::Show(Show::CompileFlags),
        "-show-link-info" => WrapperOption::Show(Show::LinkFlags),
        // mpicc's `-echo` traces its shell script; there is none here.
        "-echo" => WrapperOption::Ignore,
        "-static-mpi" => {
            return refuse(
                "the mbhybrid runtime wraps MPI from a shared library, so MPI cannot be linked \
                 statically; drop it",
            )
        }
        "-nativelinking" => {
            return refuse("it links without MPI, and an instrumented program needs MPI; drop it")
        }
        _ if arg.starts_with("-cc=") || arg.starts_with("-cxx=") || arg.starts_with("-config=") => {
            return refuse(
                "the mbhybrid compiler drivers always compile with clang 16, whose IR mbhybrid \
                 reads; drop it",
            )
        }
        _ if arg.starts_with("-profile=") => {
            return refuse(
                "MPI profiling libraries would sit where the mbhybrid runtime does; drop it",
            )
        }
        _ => return Ok(None),
    }))
}

/// The `-flto…` flag in force, if any (a later `-fno-lto` cancels it).
fn link_time_optimization(words: &[Word]) -> Option<String> {
    words
        .iter()
        .rev()
        .find_map(|word| match word {
            Word::Flag(f) if f[0] == "-flto" || f[0].starts_with("-flto=") => Some(Some(&f[0])),
            Word::Flag(f) if f[0] == "-fno-lto" => Some(None),
            _ => None,
        })
        .flatten()
        .cloned()
}

/// `-show` and its kin: what `mpicc` would print, with clang for the compiler.
fn show_info(
    language: Language,
    args: &[String],
    mode: Mode,
    what: Show,
) -> Result<Driven, BuildError> {
    let mpi = mpi_flags(language)?;
    let text = match what {
        Show::CompileFlags => shell_words::join(&mpi.compile),
        Show::LinkFlags => shell_words::join(&mpi.link),
        Show::Command => {
            let clang = find_clang(language == Language::Cxx)?;
            let mut words = vec![clang.to_string_lossy().into_owned()];
            words.extend(args.iter().cloned());
            words.extend(mpi.compile.iter().cloned());
            if matches!(mode, Mode::Link | Mode::OtherLink { mpi_link: true }) {
                words.extend(mpi.link.iter().cloned());
            }
            shell_words::join(&words)
        }
    };
    Ok(Driven::Printed(text + "\n"))
}

/// The flags of the MPI the drivers use (`MBHYBRID_MPI`, else the `mpicc`
/// on the `PATH`) for `language`.
fn mpi_flags(language: Language) -> Result<MpiFlags, BuildError> {
    let mpi = MpiInstall::find(None)?;
    match language {
        Language::C => Ok(mpi.c_flags),
        Language::Cxx => mpi.cxx_flags(),
    }
}

/// Runs clang on the user's arguments as they are, adding the MPI compile
/// flags (`compile_flags`) and link flags (`link_flags`) after them, as
/// `mpicc` does; clang prints to this process's streams.
fn passthrough(
    language: Language,
    args: &[String],
    compile_flags: bool,
    link_flags: bool,
) -> Result<Driven, BuildError> {
    let clang = find_clang(language == Language::Cxx)?;
    let mut cmd = Cmd::new(&clang);
    cmd.args(args);
    if compile_flags || link_flags {
        let mpi = mpi_flags(language)?;
        if compile_flags {
            cmd.args(&mpi.compile);
        }
        if link_flags {
            cmd.args(&mpi.link);
        }
    }
    Ok(Driven::Exited(cmd.run_inherited()?))
}

/// `-c`: the object clang writes, with a record of each C/C++ source.
fn compile(req: &DriverRequest, args: &[String], words: &[Word]) -> Result<Driven, BuildError> {
    let inputs: Vec<(&str, Option<SourceKind>)> = words
        .iter()
        .filter_map(|word| match word {
            Word::Input { path, lang } => Some((path.as_str(), input_kind(path, lang.as_deref()))),
            _ => None,
        })
        .collect();
    let embeds = inputs
        .iter()
        .any(|(_, kind)| matches!(kind, Some(SourceKind::C | SourceKind::Cxx)));
    let clang = find_clang(req.language == Language::Cxx)?;
    let install = MpiInstall::find(None)?;
    let family = install.family;
    let mpi = match req.language {
        Language::C => install.c_flags,
        Language::Cxx => install.cxx_flags()?,
    };
    let mut cmd = Cmd::new(&clang);
    // `mbhybrid-cc` takes C as gcc's mpicc does (gcc_compat.rs), ahead of
    // the user's flags so that their `-Werror=GROUP` wins.
    if req.language == Language::C {
        cmd.args(crate::gcc_compat::c_flags(args));
    }
    cmd.args(args).args(&mpi.compile);
    if embeds {
        // After the user's flags, so that a `-g0` of theirs does not leave
        // the sites without lines. The cc1 flag (not the driver's
        // `-fembed-bitcode`) embeds the IR as the front end made it, before
        // the optimization pipeline, which is what `build` analyses.
        cmd.args(["-g", "-Xclang", "-fembed-bitcode=all"]);
    }
    let status = cmd.run_inherited()?;
    if status != 0 || !embeds {
        return Ok(Driven::Exited(status));
    }
    let output = words.iter().rev().find_map(|word| match word {
        Word::Output { path, .. } => Some(path.as_str()),
        _ => None,
    });
    // Where clang put each object: `-o` for the only input, else the
    // source's stem with `.o` in the current directory.
    let objects: Vec<(&str, SourceKind, PathBuf)> = match output {
        Some(output) => match inputs.as_slice() {
            [(source, Some(kind))] => vec![(source, *kind, req.base_dir.join(output))],
            _ => Vec::new(),
        },
        None => inputs
            .iter()
            .filter_map(|(source, kind)| {
                let stem = Path::new(source).file_stem()?;
                let mut name = stem.to_owned();
                name.push(".o");
                Some((*source, (*kind)?, req.base_dir.join(name)))
            })
            .collect(),
    };
    let flags = codegen_flags(words);
    for (source, kind, object) in objects {
        // `-o /dev/null` (a compiler check) or stdin's `-`: nothing to keep.
        if source == "-" || !object.is_file() {
            continue;
        }
        let meta = UnitMeta {
            language: match kind {
                SourceKind::Cxx => Language::Cxx,
                _ => Language::C,
            },
            source: req.base_dir.join(source),
            directory: req.base_dir.clone(),
            flags: flags.clone(),
            mpi: Some(family),
        };
        if matches!(kind, SourceKind::C | SourceKind::Cxx) {
            attach_record(&object, meta)?;
        }
    }
    Ok(Driven::Exited(0))
}

/// An input of the link, as the instrumented link sees it.
enum Slot<'w> {
    /// Linked as it is.
    Keep(&'w Word),
    /// A source on the command line, the index among the sources.
    Source(usize),
    /// An object with records, or an archive some of whose members have
    /// them: replaced by the instrumented objects, or a copy of the
    /// archive holding them.
    Records(Holder),
}

/// Where records came from.
enum Holder {
    Object(Vec<Record>),
    Archive(Vec<Member>),
}

/// Link: instrument every unit the inputs carry, link the result.
///
/// In turn: what each input is ([`link_inputs`]); one front end for the
/// whole program, compiling the sources on the command line to IR; the
/// units in command-line order ([`link_units`]), instrumented together;
/// the user's command line with the inputs that carried units replaced
/// ([`rewritten_command_line`]), linked against the runtime and MPI
/// ([`link_command`]).
fn link(req: &DriverRequest, words: &[Word], response_file: bool) -> Result<Driven, BuildError> {
    let mpi = MpiInstall::find(None)?;
    let runtime_dir = runtime_dir_for(&req.runtime_dir, mpi.family)?;
    let output = words
        .iter()
        .rev()
        .find_map(|word| match word {
            Word::Output { path, .. } => Some(PathBuf::from(path)),
            _ => None,
        })
        .unwrap_or_else(|| PathBuf::from("a.out"));
    let (slots, sources) = link_inputs(req, words, &output)?;

    // `mpi.h` differs between MPIs (handles are `int`s in MPICH, pointers
    // in Open MPI): code compiled for one cannot run on the other.
    if let Some(record) = records(&slots).find(|r| r.meta.mpi.is_some_and(|f| f != mpi.family)) {
        return Err(BuildError::MixedMpi {
            unit: record.meta.source.clone(),
            compiled: record.meta.mpi.unwrap_or(mpi.family),
            linking: mpi.family,
        });
    }
    let cxx = req.language == Language::Cxx
        || sources.iter().any(|(_, kind, _)| *kind == SourceKind::Cxx)
        || records(&slots).any(|r| r.meta.language == Language::Cxx);
    let frontend = Frontend::new(cxx, mpi)?;
    let inputs: Vec<SourceInput<'_>> = sources
        .iter()
        .map(|(path, kind, cc_flags)| SourceInput {
            path,
            kind: *kind,
            cc_flags,
        })
        .collect();
    let (irs, mut warnings) = frontend.compile(&inputs)?;
    let units = link_units(req, words, &frontend, &slots, &sources, &irs)?;

    let options = crate::build::Options {
        zone_bounds: &[],
        access_checks: req.access_checks,
    };
    let program = instrument_program(&frontend, &units, options, &req.base_dir, &output)?;
    warnings.push_str(&program.warnings);

    let rewritten = rewritten_command_line(&slots, &program.objects, frontend.tmp.path())?;
    let cmd = link_command(req, &frontend, &runtime_dir, &rewritten, response_file)?;
    let ran = cmd.run()?;
    if !ran.success {
        return Err(BuildError::Link {
            output,
            command: cmd.display(),
            stderr: ran.messages,
            status: ran.status,
        });
    }
    warnings.push_str(&ran.messages);
    let output = req.base_dir.join(&output);
    program
        .finish(&output, warnings)
        .map(|built| Driven::Linked(Box::new(built)))
}

/// A source on the link's command line, with its kind and the flags to
/// compile it with.
type LinkSource = (PathBuf, SourceKind, Vec<String>);

/// What each word of a link's command line is ([`Slot`]): a source to
/// compile (listed in the second vector, with the `-x` language in force
/// and the link line's compile flags), an object or a static archive
/// (named by path, or found through `-l` in the `-L` directories) whose
/// records are read, or anything else, linked as it is.
fn link_inputs<'w>(
    req: &DriverRequest,
    words: &'w [Word],
    output: &Path,
) -> Result<(Vec<Slot<'w>>, Vec<LinkSource>), BuildError> {
    let lib_dirs = library_dirs(words, &req.base_dir);
    let static_link = words
        .iter()
        .any(|word| matches!(word, Word::Flag(f) if f[0] == "-static"));

    let mut slots = Vec::new();
    let mut sources: Vec<LinkSource> = Vec::new();
    let compile_flags = link_line_compile_flags(words, output);
    for word in words {
        let holder = match word {
            Word::Input { path, lang } => {
                if let Some(kind) = input_kind(path, lang.as_deref()) {
                    let mut flags = Vec::new();
                    if let Some(lang) = lang {
                        flags.extend(["-x".to_owned(), lang.clone()]);
                    }
                    flags.extend(compile_flags.iter().cloned());
                    sources.push((PathBuf::from(path), kind, flags));
                    slots.push(Slot::Source(sources.len() - 1));
                    continue;
                }
                let file = req.base_dir.join(path);
                if lang.is_some() || path == "-" || !file.is_file() {
                    None
                } else {
                    holder(inspect(&file)?)
                }
            }
            Word::Library { name, .. } => match find_archive(name, &lib_dirs, static_link) {
                Some(archive) => holder(inspect(&archive)?),
                None => None,
            },
            _ => None,
        };
        slots.push(match holder {
            Some(holder) => Slot::Records(holder),
            None => Slot::Keep(word),
        });
    }
    Ok((slots, sources))
}

/// Every record the objects and archive members of `slots` carry, in
/// command-line order.
fn records<'a>(slots: &'a [Slot<'a>]) -> impl Iterator<Item = &'a Record> + 'a {
    slots.iter().flat_map(|slot| match slot {
        Slot::Records(Holder::Object(records)) => records.iter().collect::<Vec<_>>(),
        Slot::Records(Holder::Archive(members)) => {
            members.iter().flat_map(|m| &m.records).collect()
        }
        _ => Vec::new(),
    })
}

/// The units of the program in command-line order, which numbers the
/// sites: each source with its IR (`irs`, by source) and the link line's
/// code generation flags, and each record with its own compile's flags
/// and directory, its IR written to the front end's temporary directory.
fn link_units(
    req: &DriverRequest,
    words: &[Word],
    frontend: &Frontend,
    slots: &[Slot<'_>],
    sources: &[LinkSource],
    irs: &[PathBuf],
) -> Result<Vec<Unit>, BuildError> {
    let mut units = Vec::new();
    let mut embedded = 0;
    let mut unit_of = |record: &Record, units: &mut Vec<Unit>| -> Result<(), BuildError> {
        let bitcode = frontend.tmp.path().join(format!("embedded-{embedded}.bc"));
        embedded += 1;
        std::fs::write(&bitcode, &record.bitcode).map_err(|source| BuildError::Write {
            path: bitcode.clone(),
            source,
        })?;
        units.push(Unit {
            display: SourceLocation::display_path(&record.meta.source, &req.base_dir)
                .to_string_lossy()
                .into_owned(),
            source: record.meta.source.clone(),
            bitcode,
            flags: record.meta.flags.clone(),
            dir: Some(record.meta.directory.clone()),
        });
        Ok(())
    };
    for slot in slots {
        match slot {
            Slot::Keep(_) => {}
            Slot::Source(index) => {
                let source = &sources[*index].0;
                units.push(Unit {
                    source: source.clone(),
                    display: source.to_string_lossy().into_owned(),
                    bitcode: irs[*index].clone(),
                    flags: codegen_flags(words),
                    dir: None,
                });
            }
            Slot::Records(Holder::Object(records)) => {
                for record in records {
                    unit_of(record, &mut units)?;
                }
            }
            Slot::Records(Holder::Archive(members)) => {
                for record in members.iter().flat_map(|m| &m.records) {
                    unit_of(record, &mut units)?;
                }
            }
        }
    }
    Ok(units)
}

/// The command line with every input that carried units replaced by
/// what was made of them (the next of `objects`, in unit order; a copy
/// of an archive, in a directory of `tmp`), in the same place.
fn rewritten_command_line(
    slots: &[Slot<'_>],
    objects: &[PathBuf],
    tmp: &Path,
) -> Result<Vec<String>, BuildError> {
    let mut objects = objects.iter();
    let mut rewritten: Vec<String> = Vec::new();
    let mut lang: Option<&str> = None;
    let mut archives = 0;
    for slot in slots {
        let replacement: Vec<PathBuf> = match slot {
            Slot::Keep(word) => {
                if let Word::Language { lang: l, .. } = word {
                    lang = Some(l.as_str()).filter(|l| *l != "none");
                }
                rewritten.extend(word.words());
                continue;
            }
            Slot::Source(_) => objects.next().into_iter().cloned().collect(),
            Slot::Records(Holder::Object(records)) => {
                objects.by_ref().take(records.len()).cloned().collect()
            }
            Slot::Records(Holder::Archive(members)) => {
                archives += 1;
                let dir = tmp.join(format!("archive-{archives}"));
                vec![rebuild_archive(&dir, members, &mut objects)?]
            }
        };
        // Under `-x LANG` a replaced object would be read as a source.
        if let Some(lang) = lang {
            rewritten.extend(["-x".to_owned(), "none".to_owned()]);
            rewritten.extend(replacement.iter().map(|p| p.to_string_lossy().into_owned()));
            rewritten.extend(["-x".to_owned(), lang.to_owned()]);
        } else {
            rewritten.extend(replacement.iter().map(|p| p.to_string_lossy().into_owned()));
        }
    }
    Ok(rewritten)
}

/// The link command: the runtime's link flags, the `rewritten` command
/// line (through a response file when the user's came from one), and
/// MPI's flags.
fn link_command(
    req: &DriverRequest,
    frontend: &Frontend,
    runtime_dir: &Path,
    rewritten: &[String],
    response_file: bool,
) -> Result<Cmd, BuildError> {
    let (driver, mpi) = frontend.toolchain(req.language == Language::Cxx);
    let mut cmd = Cmd::new(driver);
    // The runtime first: the dynamic linker binds each `MPI_*` symbol to
    // the first library in the executable's list that defines it, and a
    // Makefile may name `-lmpi` itself.
    cmd.args(runtime_link_flags(runtime_dir));
    if response_file {
        // The command line came (in part) from a response file because it
        // is long; so does the rewritten one.
        let path = frontend.tmp.path().join("link.rsp");
        std::fs::write(&path, shell_words::join(rewritten)).map_err(|source| {
            BuildError::Write {
                path: path.clone(),
                source,
            }
        })?;
        cmd.arg(format!("@{}", path.display()));
    } else {
        cmd.args(rewritten);
    }
    cmd.args(&mpi.compile)
        .args(&mpi.link)
        .arg("-Qunused-arguments");
    Ok(cmd)
}

fn holder(inspected: Inspected) -> Option<Holder> {
    match inspected {
        Inspected::Object(records) => Some(Holder::Object(records)),
        Inspected::Archive(members) => Some(Holder::Archive(members)),
        Inspected::Other => None,
    }
}

/// A copy of an archive, in `dir`, with each member that had records
/// replaced by the instrumented objects made of them (the next ones of
/// `objects`), in the same order and under the same name: the linker picks
/// members by the symbols they define, which instrumenting does not change.
fn rebuild_archive(
    dir: &Path,
    members: &[Member],
    objects: &mut std::slice::Iter<'_, PathBuf>,
) -> Result<PathBuf, BuildError> {
    let write = |path: &Path, result: std::io::Result<()>| {
        result.map_err(|source| BuildError::Write {
            path: path.to_owned(),
            source,
        })
    };
    let mut files = Vec::new();
    for (index, member) in members.iter().enumerate() {
        let name = Path::new(&member.name)
            .file_name()
            .map(|n| n.to_owned())
            .unwrap_or_else(|| "member.o".into());
        // One directory per member, so that equal names stay apart.
        let member_dir = dir.join(index.to_string());
        write(&member_dir, std::fs::create_dir_all(&member_dir))?;
        if member.records.is_empty() {
            let path = member_dir.join(&name);
            write(&path, std::fs::write(&path, &member.data))?;
            files.push(path);
        }
        for (k, object) in objects.by_ref().take(member.records.len()).enumerate() {
            let path = if k == 0 {
                member_dir.join(&name)
            } else {
                let sub = member_dir.join(k.to_string());
                write(&sub, std::fs::create_dir_all(&sub))?;
                sub.join(&name)
            };
            write(&path, std::fs::copy(object, &path).map(|_| ()))?;
            files.push(path);
        }
    }
    let archive = dir.join("lib.a");
    let ar = find_llvm_tool("llvm-ar")?;
    let mut cmd = Cmd::new(&ar);
    // q: append without looking for members of the same name; s: index.
    cmd.arg("qcs").arg(&archive).args(&files);
    let ran = cmd.run()?;
    if !ran.success {
        return Err(BuildError::Tool {
            command: cmd.display(),
            stderr: ran.messages,
        });
    }
    Ok(archive)
}

/// The `-L` directories, in order.
fn library_dirs(words: &[Word], base_dir: &Path) -> Vec<PathBuf> {
    words
        .iter()
        .filter_map(|word| match word {
            Word::Flag(f) if f[0] == "-L" => f.get(1).map(String::as_str),
            Word::Flag(f) => f[0].strip_prefix("-L").filter(|d| !d.is_empty()),
            _ => None,
        })
        .map(|dir| base_dir.join(dir))
        .collect()
}

/// The static archive `-lNAME` names, if the linker would take one from
/// the `-L` directories: in each directory in turn, `libNAME.so` first
/// (then it is a shared library, linked as it is) unless the link is
/// static, then `libNAME.a`. `-l:FILE` names a file. The system
/// directories are not searched: archives built by `mbhybrid-cc` are the
/// project's own.
fn find_archive(name: &str, dirs: &[PathBuf], static_link: bool) -> Option<PathBuf> {
    if let Some(file) = name.strip_prefix(':') {
        return dirs
            .iter()
            .map(|dir| dir.join(file))
            .find(|path| path.is_file())
            .filter(|path| path.extension().is_some_and(|e| e == "a"));
    }
    for dir in dirs {
        if !static_link && dir.join(format!("lib{name}.so")).exists() {
            return None;
        }
        let archive = dir.join(format!("lib{name}.a"));
        if archive.is_file() {
            return Some(archive);
        }
    }
    None
}

/// The kind of an input: from `-x LANG` when one is in force, else from
/// the file name's extension. `None` for what is not compiled to IR
/// (assembly, objects, libraries).
fn input_kind(path: &str, lang: Option<&str>) -> Option<SourceKind> {
    match lang {
        Some("c" | "cpp-output") => Some(SourceKind::C),
        Some("c++" | "c++-cpp-output") => Some(SourceKind::Cxx),
        Some("ir") => Some(SourceKind::Ir),
        Some(_) => None,
        None => source_kind(Path::new(path)),
    }
}

/// The flags of a command that matter to code generation: all but its
/// inputs, output, `-x`, mode flags (`-c`, `-S`, …), dependency flags
/// (`-M…`) and linker flags. Code generation from IR ignores preprocessor
/// and language flags (it runs with `-Qunused-arguments`).
fn codegen_flags(words: &[Word]) -> Vec<String> {
    const DROPPED: &[&str] = &[
        "-c",
        "-S",
        "-E",
        "-v",
        "-###",
        "-fsyntax-only",
        "-emit-llvm",
        "-shared",
        "-static",
        "-r",
        "-pie",
        "-no-pie",
        "-rdynamic",
        "-Xlinker",
        "-save-temps",
        "-M",
        "-MM",
        "-MD",
        "-MMD",
        "-MP",
        "-MG",
        "-MF",
        "-MT",
        "-MQ",
        "-MJ",
    ];
    const DROPPED_PREFIXES: &[&str] = &["-Wl,", "-save-temps=", "-L", "-MF", "-MT", "-MQ", "-MJ"];
    words
        .iter()
        .filter_map(|word| match word {
            Word::Flag(f)
                if !DROPPED.contains(&f[0].as_str())
                    && !DROPPED_PREFIXES.iter().any(|p| f[0].starts_with(p)) =>
            {
                Some(f.clone())
            }
            _ => None,
        })
        .flatten()
        .collect()
}

/// The flags for compiling the sources on a link line: those of code
/// generation, and the dependency flags, completed as clang completes them
/// when it links (the file `OUTPUT.d`, naming `OUTPUT` as the target),
/// because the front end here writes its IR to a file of its own.
fn link_line_compile_flags(words: &[Word], output: &Path) -> Vec<String> {
    let mut flags = codegen_flags(words);
    let dependency: Vec<&Vec<String>> = words
        .iter()
        .filter_map(|word| match word {
            Word::Flag(f)
                if ["-MD", "-MMD", "-MP", "-MG", "-MF", "-MT", "-MQ"].contains(&f[0].as_str())
                    || ["-MF", "-MT", "-MQ"].iter().any(|p| f[0].starts_with(p)) =>
            {
                Some(f)
            }
            _ => None,
        })
        .collect();
    let has = |prefix: &str| dependency.iter().any(|f| f[0].starts_with(prefix));
    if !dependency.iter().any(|f| f[0] == "-MD" || f[0] == "-MMD") {
        return flags;
    }
    flags.extend(dependency.iter().flat_map(|f| f.iter().cloned()));
    if !has("-MF") {
        flags.extend([
            "-MF".to_owned(),
            output.with_extension("d").to_string_lossy().into_owned(),
        ]);
    }
    if !has("-MT") && !has("-MQ") {
        flags.extend(["-MT".to_owned(), output.to_string_lossy().into_owned()]);
    }
    flags
}

/// One element of a compiler command line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Word {
    /// An input file, with the `-x` language in force for it.
    Input { path: String, lang: Option<String> },
    /// `-lNAME` or `-l NAME`.
    Library { words: Vec<String>, name: String },
    /// `-o FILE` or `-oFILE`.
    Output { words: Vec<String>, path: String },
    /// `-x LANG` or `-xLANG`.
    Language { words: Vec<String>, lang: String },
    /// Any other option, with its value when that is a word of its own.
    Flag(Vec<String>),
}

impl Word {
    /// The command-line words it was made of.
    fn words(&self) -> Vec<String> {
        match self {
            Word::Input { path, .. } => vec![path.clone()],
            Word::Library { words, .. } | Word::Output { words, .. } => words.clone(),
            Word::Language { words, .. } => words.clone(),
            Word::Flag(words) => words.clone(),
        }
    }
}

/// Options of the gcc/clang driver whose value is the next word when not
/// joined to them (`-I dir`, `-MF file`, `-Xlinker arg`).
const WITH_VALUE: &[&str] = &[
    "-D",
    "-U",
    "-I",
    "-L",
    "-A",
    "-B",
    "-F",
    "-T",
    "-e",
    "-u",
    "-z",
    "-include",
    "-imacros",
    "-isystem",
    "-isystem-after",
    "-iquote",
    "-idirafter",
    "-iprefix",
    "-iwithprefix",
    "-iwithprefixbefore",
    "-isysroot",
    "-include-pch",
    "-cxx-isystem",
    "-MF",
    "-MT",
    "-MQ",
    "-MJ",
    "-Xlinker",
    "-Xclang",
    "-Xpreprocessor",
    "-Xassembler",
    "-Xanalyzer",
    "-Xopenmp-target",
    "-mllvm",
    "-target",
    "-arch",
    "-aux-info",
    "-dumpbase",
    "-dumpdir",
    "--param",
    "--sysroot",
    "-framework",
    "-gcc-toolchain",
    "-resource-dir",
    "-serialize-diagnostics",
    "-working-directory",
];

/// Splits a command line into [`Word`]s, the way the compiler reads it.
pub(crate) fn parse(args: &[String]) -> Vec<Word> {
    let mut words = Vec::new();
    let mut lang: Option<String> = None;
    let mut iter = args.iter();
    while let Some(arg) = iter.next() {
        let mut with_next = |flag: &str| {
            let mut words = vec![flag.to_owned()];
            let value = iter.next().cloned();
            words.extend(value.clone());
            (words, value.unwrap_or_default())
        };
        let word = match arg.as_str() {
            "-o" => {
                let (words, path) = with_next(arg);
                Word::Output { words, path }
            }
            "-x" => {
                let (words, value) = with_next(arg);
                lang = Some(value.clone()).filter(|l| l != "none");
                Word::Language { words, lang: value }
            }
            "-l" => {
                let (words, name) = with_next(arg);
                Word::Library { words, name }
            }
            "-" => Word::Input {
                path: arg.clone(),
                lang: lang.clone(),
            },
            flag if WITH_VALUE.contains(&flag) => Word::Flag(with_next(flag).0),
            joined if joined.starts_with("-o") => Word::Output {
                words: vec![arg.clone()],
                path: joined[2..].to_owned(),
            },
            joined if joined.starts_with("-x") => {
                let value = joined[2..].to_owned();
                lang = Some(value.clone()).filter(|l| l != "none");
                Word::Language {
                    words: vec![arg.clone()],
                    lang: value,
                }
            }
            joined if joined.starts_with("-l") => Word::Library {
                words: vec![arg.clone()],
                name: joined[2..].to_owned(),
            },
            flag if flag.starts_with('-') => Word::Flag(vec![arg.clone()]),
            _ => Word::Input {
                path: arg.clone(),
                lang: lang.clone(),
            },
        };
        words.push(word);
    }
    words
}

/// Replaces each `@FILE` whose file exists by the words in it (quoted as a
/// shell quotes, as gcc and clang read them), recursively; returns the
/// words and whether any response file was read.
fn expand_response_files(
    args: &[String],
    base_dir: &Path,
) -> Result<(Vec<String>, bool), BuildError> {
    fn expand(
        args: &[String],
        base_dir: &Path,
        depth: u32,
        out: &mut Vec<String>,
    ) -> Result<bool, BuildError> {
        let mut any = false;
        for arg in args {
            let file = arg.strip_prefix('@').map(|f| base_dir.join(f));
            match file {
                Some(file) if file.is_file() => {
                    let error = |detail: String| BuildError::ResponseFile {
                        path: file.clone(),
                        detail,
                    };
                    if depth > 16 {
                        return Err(error("response files nest more than 16 deep".into()));
                    }
                    let text = std::fs::read_to_string(&file).map_err(|e| error(e.to_string()))?;
                    let words = shell_words::split(&text).map_err(|e| error(e.to_string()))?;
                    expand(&words, base_dir, depth + 1, out)?;
                    any = true;
                }
                _ => out.push(arg.clone()),
            }
        }
        Ok(any)
    }
    let mut out = Vec::new();
    let any = expand(args, base_dir, 0, &mut out)?;
    Ok((out, any))
}

/// What the command line asks the compiler to do.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    /// No input: `--version`, `-v`, `-print-…`, `--help`.
    Info,
    /// Preprocess, check syntax, write assembly or IR, or `-###`: no object.
    NoLink,
    /// `-c`: objects.
    Compile,
    /// A link that is not an executable (`-shared`, `-r`); `mpi_link`:
    /// whether MPI's libraries belong on it.
    OtherLink { mpi_link: bool },
    /// An executable.
    Link,
}

impl Mode {
    fn of(words: &[Word]) -> Mode {
        let has = |name: &str| {
            words
                .iter()
                .any(|word| matches!(word, Word::Flag(f) if f[0] == name))
        };
        let inputs = words
            .iter()
            .any(|word| matches!(word, Word::Input { .. } | Word::Library { .. }));
        if !inputs {
            Mode::Info
        } else if [
            "-E",
            "-S",
            "-M",
            "-MM",
            "-fsyntax-only",
            "-emit-llvm",
            "-###",
        ]
        .iter()
        .any(|flag| has(flag))
        {
            Mode::NoLink
        } else if has("-c") {
            Mode::Compile
        } else if has("-shared") {
            Mode::OtherLink { mpi_link: true }
        } else if has("-r") {
            Mode::OtherLink { mpi_link: false }
        } else {
            Mode::Link
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn strings(words: &[&str]) -> Vec<String> {
        words.iter().map(|w| w.to_string()).collect()
    }

    fn parsed(args: &[&str]) -> Vec<Word> {
        parse(&strings(args))
    }

    #[test]
    fn words_are_split_as_the_compiler_reads_them() {
        let args = [
            "-I", "inc", "-DX=1", "-c", "a.c", "-o", "a.o", "-MD", "-MF", "a.d", "-lm", "-l",
            "mpi", "-x", "c", "b.inc", "-xnone", "c.o", "-ofinal",
        ];
        let words = parsed(&args);
        assert_eq!(
            words,
            vec![
                Word::Flag(strings(&["-I", "inc"])),
                Word::Flag(strings(&["-DX=1"])),
                Word::Flag(strings(&["-c"])),
                Word::Input {
                    path: "a.c".into(),
                    lang: None
                },
                Word::Output {
                    words: strings(&["-o", "a.o"]),
                    path: "a.o".into()
                },
                Word::Flag(strings(&["-MD"])),
                Word::Flag(strings(&["-MF", "a.d"])),
                Word::Library {
                    words: strings(&["-lm"]),
                    name: "m".into()
                },
                Word::Library {
                    words: strings(&["-l", "mpi"]),
                    name: "mpi".into()
                },
                Word::Language {
                    words: strings(&["-x", "c"]),
                    lang: "c".into()
                },
                Word::Input {
                    path: "b.inc".into(),
                    lang: Some("c".into())
                },
                Word::Language {
                    words: strings(&["-xnone"]),
                    lang: "none".into()
                },
                Word::Input {
                    path: "c.o".into(),
                    lang: None
                },
                Word::Output {
                    words: strings(&["-ofinal"]),
                    path: "final".into()
                },
            ]
        );
        // Nothing is lost: the link step rebuilds the command from them.
        let back: Vec<String> = words.iter().flat_map(Word::words).collect();
        assert_eq!(back, strings(&args));
    }

    #[test]
    fn modes_follow_the_flags_in_any_order() {
        let mode = |args: &[&str]| Mode::of(&parsed(args));
        assert_eq!(mode(&["--version"]), Mode::Info);
        assert_eq!(mode(&["-v"]), Mode::Info);
        assert_eq!(mode(&["-print-search-dirs"]), Mode::Info);
        assert_eq!(mode(&["a.c", "-c"]), Mode::Compile);
        assert_eq!(
            mode(&["-c", "-o", "a.o", "a.c", "-MD", "-MF", "a.d"]),
            Mode::Compile
        );
        assert_eq!(mode(&["a.c", "-E"]), Mode::NoLink);
        assert_eq!(mode(&["-c", "a.c", "-S"]), Mode::NoLink);
        assert_eq!(mode(&["-MM", "a.c"]), Mode::NoLink);
        assert_eq!(mode(&["-c", "-emit-llvm", "a.c"]), Mode::NoLink);
        assert_eq!(mode(&["-###", "a.c"]), Mode::NoLink);
        assert_eq!(
            mode(&["-shared", "a.o", "-o", "liba.so"]),
            Mode::OtherLink { mpi_link: true }
        );
        assert_eq!(
            mode(&["-r", "a.o", "b.o", "-o", "ab.o"]),
            Mode::OtherLink { mpi_link: false }
        );
        assert_eq!(mode(&["a.o", "-o", "app", "-lm"]), Mode::Link);
        assert_eq!(mode(&["-O2", "a.c", "b.o", "libx.a"]), Mode::Link);
        // A value that looks like a mode flag is a value.
        assert_eq!(mode(&["-MT", "-c", "a.o", "-o", "app"]), Mode::Link);
        assert_eq!(mode(&["-Xlinker", "-E", "a.o"]), Mode::Link);
    }

    #[test]
    fn code_generation_keeps_what_changes_the_code() {
        let flags = codegen_flags(&parsed(&[
            "-O2",
            "-g",
            "-fPIC",
            "-march=x86-64-v2",
            "-c",
            "src/a.c",
            "-o",
            "a.o",
            "-MD",
            "-MT",
            "a.o",
            "-MF",
            "a.o.d",
            "-Iinclude",
            "-DN=3",
            "-Wall",
            "-Wl,-z,now",
            "-L.",
            "-lm",
            "-x",
            "c",
        ]));
        assert_eq!(
            flags,
            strings(&[
                "-O2",
                "-g",
                "-fPIC",
                "-march=x86-64-v2",
                "-Iinclude",
                "-DN=3",
                "-Wall"
            ])
        );
    }

    #[test]
    fn sources_on_a_link_line_write_dependencies_where_clang_would() {
        let flags = |args: &[&str]| link_line_compile_flags(&parsed(args), Path::new("bin/app"));
        assert_eq!(flags(&["-O1", "a.c", "-o", "bin/app"]), strings(&["-O1"]));
        assert_eq!(
            flags(&["-MMD", "-MP", "a.c", "-o", "bin/app"]),
            strings(&["-MMD", "-MP", "-MF", "bin/app.d", "-MT", "bin/app"])
        );
        assert_eq!(
            flags(&["-MD", "-MFdeps/app.d", "-MQ", "app", "a.c"]),
            strings(&["-MD", "-MFdeps/app.d", "-MQ", "app"])
        );
    }

    #[test]
    fn inputs_take_their_kind_from_x_or_the_extension() {
        assert_eq!(input_kind("a.c", None), Some(SourceKind::C));
        assert_eq!(input_kind("a.cpp", None), Some(SourceKind::Cxx));
        assert_eq!(input_kind("a.i", None), Some(SourceKind::C));
        assert_eq!(input_kind("a.inc", Some("c")), Some(SourceKind::C));
        assert_eq!(input_kind("a.c", Some("c++")), Some(SourceKind::Cxx));
        assert_eq!(input_kind("a.s", None), None);
        assert_eq!(input_kind("a.c", Some("assembler-with-cpp")), None);
        assert_eq!(input_kind("a.o", None), None);
        assert_eq!(input_kind("libx.a", None), None);
    }

    #[test]
    fn archives_are_found_as_the_linker_finds_them() {
        let dir = tempfile::tempdir().unwrap();
        let (one, two) = (dir.path().join("one"), dir.path().join("two"));
        std::fs::create_dir_all(&one).unwrap();
        std::fs::create_dir_all(&two).unwrap();
        std::fs::write(two.join("libhalo.a"), "").unwrap();
        std::fs::write(one.join("libshared.so"), "").unwrap();
        std::fs::write(two.join("libshared.a"), "").unwrap();
        let dirs = vec![one.clone(), two.clone()];
        assert_eq!(
            find_archive("halo", &dirs, false),
            Some(two.join("libhalo.a"))
        );
        assert_eq!(find_archive("shared", &dirs, false), None);
        assert_eq!(
            find_archive("shared", &dirs, true),
            Some(two.join("libshared.a"))
        );
        assert_eq!(
            find_archive(":libhalo.a", &dirs, false),
            Some(two.join("libhalo.a"))
        );
        assert_eq!(find_archive("nothing", &dirs, false), None);
        let words = parsed(&["-L", "one", "-Ltwo", "a.o"]);
        assert_eq!(library_dirs(&words, dir.path()), dirs);
    }

    #[test]
    fn response_files_are_read_like_the_compilers_do() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("inner.rsp"), "-lm 'b c.o'\n").unwrap();
        std::fs::write(dir.path().join("objs.rsp"), "a.o @inner.rsp\n").unwrap();
        let (words, any) = expand_response_files(
            &strings(&["-o", "app", "@objs.rsp", "@missing"]),
            dir.path(),
        )
        .unwrap();
        assert!(any);
        assert_eq!(
            words,
            strings(&["-o", "app", "a.o", "-lm", "b c.o", "@missing"])
        );
        std::fs::write(dir.path().join("loop.rsp"), "@loop.rsp").unwrap();
        let err = expand_response_files(&strings(&["@loop.rsp"]), dir.path()).unwrap_err();
        assert!(err.to_string().contains("nest"), "{err}");
    }

    #[test]
    fn link_time_optimization_is_seen_in_any_spelling() {
        let lto = |args: &[&str]| link_time_optimization(&parsed(args));
        assert_eq!(lto(&["-O2", "-flto", "-c", "a.c"]), Some("-flto".into()));
        assert_eq!(lto(&["-flto=thin", "a.o"]), Some("-flto=thin".into()));
        assert_eq!(lto(&["-flto", "-fno-lto", "a.o"]), None);
        assert_eq!(lto(&["-O2", "a.o"]), None);
    }

    #[test]
    fn mpich_options_are_honoured_or_refused() {
        assert!(matches!(
            wrapper_option("-show").unwrap(),
            Some(WrapperOption::Show(Show::Command))
        ));
        assert!(matches!(
            wrapper_option("-show-link-info").unwrap(),
            Some(WrapperOption::Show(Show::LinkFlags))
        ));
        assert!(matches!(
            wrapper_option("-echo").unwrap(),
            Some(WrapperOption::Ignore)
        ));
        assert!(wrapper_option("-O2").unwrap().is_none());
        let err = wrapper_option("-cc=gcc").err().unwrap();
        assert!(err.to_string().contains("clang 16"), "{err}");
        assert!(wrapper_option("-static-mpi").is_err());
    }

    #[test]
    fn a_link_sorts_its_inputs_into_sources_records_and_the_rest() {
        let dir = tempfile::tempdir().unwrap();
        let req = DriverRequest {
            language: Language::C,
            args: Vec::new(),
            runtime_dir: PathBuf::new(),
            base_dir: dir.path().to_owned(),
            access_checks: true,
        };
        let words = parsed(&[
            "a.c",
            "-x",
            "c",
            "prog.inc",
            "-x",
            "none",
            "missing.o",
            "-lm",
            "-o",
            "app",
        ]);
        let (slots, sources) = link_inputs(&req, &words, Path::new("app")).unwrap();
        let kinds: Vec<&str> = slots
            .iter()
            .map(|slot| match slot {
                Slot::Keep(_) => "keep",
                Slot::Source(_) => "source",
                Slot::Records(_) => "records",
            })
            .collect();
        assert_eq!(
            kinds,
            ["source", "keep", "source", "keep", "keep", "keep", "keep"],
            "a file that does not exist and a library not found link as they are"
        );
        let named: Vec<(&Path, SourceKind)> = sources
            .iter()
            .map(|(path, kind, _)| (path.as_path(), *kind))
            .collect();
        assert_eq!(
            named,
            [
                (Path::new("a.c"), SourceKind::C),
                (Path::new("prog.inc"), SourceKind::C)
            ]
        );
        // The `-x` in force comes first, then the link line's own flags.
        assert_eq!(sources[1].2[..2], strings(&["-x", "c"]));
        assert_eq!(sources[1].2[2..], sources[0].2[..]);
    }

    #[test]
    fn inputs_that_carried_units_are_replaced_in_place() {
        let words = parsed(&["-O2", "a.c", "-x", "c", "b.o", "-lm"]);
        let record = Record {
            meta: UnitMeta {
                language: Language::C,
                source: PathBuf::from("/p/b.c"),
                directory: PathBuf::from("/p"),
                flags: Vec::new(),
                mpi: None,
            },
            bitcode: Vec::new(),
        };
        let slots = [
            Slot::Keep(&words[0]),
            Slot::Source(0),
            Slot::Keep(&words[2]),
            // An object that carried two units.
            Slot::Records(Holder::Object(vec![record.clone(), record])),
            Slot::Keep(&words[4]),
        ];
        let objects = ["/t/0.o", "/t/1.o", "/t/2.o"].map(PathBuf::from);
        let rewritten = rewritten_command_line(&slots, &objects, Path::new("/t")).unwrap();
        assert_eq!(
            rewritten,
            strings(&[
                "-O2", "/t/0.o", "-x", "c", "-x", "none", "/t/1.o", "/t/2.o", "-x", "c", "-lm"
            ])
        );
    }
}
