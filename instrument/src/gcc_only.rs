//! Command lines written for gcc, made acceptable to clang 16.
//!
//! `mpicc` and `mpicxx` run gcc, and Makefiles written for them pass gcc's
//! own options: HPCG's `setup/Make.Linux_MPI` passes
//! `-ftree-vectorizer-verbose=0`, which clang refuses ("unknown
//! argument"), and CoMD's `Makefile.vanilla` passes `-O5`, for which clang
//! warns at every compile and again at every code generation. The drivers
//! take every command line `mpicc` takes, so before anything runs:
//!
//! * an optimization level above 3 becomes `-O3`, silently, as gcc treats
//!   it ("-O numbers greater than 3 are treated as -O3", gcc's manual);
//! * the options clang does not know are dropped, and the caller says so
//!   in one warning naming them. Which those are is clang's own answer,
//!   not a table of ours: `clang -###` with the command line's options
//!   and no input parses them without compiling and names each unknown
//!   one ("error: unknown argument: '-fipa-pta'"), so no option clang
//!   accepts is ever dropped, and none it refuses is kept. The probe runs
//!   only when an option is not one every clang takes (`-I`, `-D`, `-W…`,
//!   `-O`, `-g`, …), so most compiles cost no extra process;
//! * so are gcc's warning options clang does not know
//!   (`-Wno-maybe-uninitialized`, `-Wlogical-op`): clang accepts them with
//!   a warning at every compile and code generation, and under `-Werror`
//!   fails the build. `clang -###` does not look at warning options, so
//!   these are asked of clang's front end on an empty file
//!   (`-fsyntax-only`, "unknown warning option '-Wlogical-op'"), when the
//!   command line has a warning option beyond the usual few (`-Wall`,
//!   `-Wextra`, `-Werror`, …). Dropping one changes no code: gcc takes
//!   them, and only gcc knows what they warn about.
//!
//! Options inside a response file (`@FILE`) are left as they are.

use std::path::Path;
use std::process::Command;

use crate::driver::{parse, wrapper_option, Word};
use crate::embed::Language;
use crate::toolchain::find_clang;

/// A command line as clang will take it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClangCommandLine {
    /// The arguments to use instead of the user's.
    pub args: Vec<String>,
    /// The user's options that clang does not know, dropped, in order.
    pub dropped: Vec<String>,
}

/// `args` (a compiler command line written for gcc) as the clang 16 of
/// `language` takes it; see the module documentation. Without that clang,
/// only the optimization level is changed (the compile then says what is
/// missing).
pub fn clang_command_line(language: Language, args: &[String]) -> ClangCommandLine {
    match find_clang(language == Language::Cxx) {
        Ok(clang) => for_clang(&clang, args),
        Err(_) => ClangCommandLine {
            args: args.iter().map(|a| optimization_level(a)).collect(),
            dropped: Vec::new(),
        },
    }
}

/// `args` as clang `clang` takes it.
fn for_clang(clang: &Path, args: &[String]) -> ClangCommandLine {
    let args: Vec<String> = args.iter().map(|a| optimization_level(a)).collect();
    let options = options_of(&args);
    let mut unknown = Vec::new();
    if !options.iter().all(|o| surely_known(o)) {
        unknown.extend(unknown_to(clang, &options));
    }
    let warnings: Vec<&String> = options
        .iter()
        .filter(|o| is_warning_option(o) && !COMMON_WARNINGS.contains(&o.as_str()))
        .collect();
    if !warnings.is_empty() {
        unknown.extend(unknown_warnings_to(clang, &warnings));
    }
    if unknown.is_empty() {
        return ClangCommandLine {
            args,
            dropped: Vec::new(),
        };
    }
    let (dropped, args): (Vec<String>, Vec<String>) =
        args.into_iter().partition(|a| unknown.contains(a));
    ClangCommandLine { args, dropped }
}

/// `-O4` and above as gcc takes them: `-O3`.
fn optimization_level(arg: &str) -> String {
    match arg.strip_prefix("-O").map(str::parse::<u32>) {
        Some(Ok(level)) if level > 3 => "-O3".to_owned(),
        _ => arg.to_owned(),
    }
}

/// The options of a command line with their values, without its inputs,
/// output, libraries, response files and MPICH wrapper options: what
/// `clang -###` is asked about.
fn options_of(args: &[String]) -> Vec<String> {
    parse(args)
        .into_iter()
        .filter_map(|word| match word {
            Word::Flag(words) | Word::Language { words, .. } => Some(words),
            _ => None,
        })
        .flatten()
        .filter(|w| !w.starts_with('@'))
        // MPICH's `mpicc` options (`-show`) are the driver's, not clang's.
        .filter(|w| matches!(wrapper_option(w), Ok(None)))
        .collect()
}

/// Whether every clang takes option word `word` (or it is the value of
/// one): the options build systems pass to every compile.
fn surely_known(word: &str) -> bool {
    const PREFIXES: &[&str] = &[
        "-I", "-D", "-U", "-L", "-W", "-g", "-std=", "-M", "-isystem", "-iquote", "-include",
    ];
    const WHOLE: &[&str] = &[
        "-c",
        "-S",
        "-E",
        "-O",
        "-Os",
        "-Oz",
        "-Og",
        "-Ofast",
        "-pthread",
        "-fPIC",
        "-fpic",
        "-fPIE",
        "-fpie",
        "-shared",
        "-static",
        "-w",
        "-pedantic",
        "-ansi",
        "-v",
    ];
    !word.starts_with('-')
        || WHOLE.contains(&word)
        || PREFIXES.iter().any(|p| word.starts_with(p))
        || matches!(
            word.strip_prefix("-O").map(str::parse::<u32>),
            Some(Ok(0..=3))
        )
}

/// The words of `options` clang names as unknown arguments. A clang that
/// cannot be run knows everything here: the compile itself then reports.
fn unknown_to(clang: &Path, options: &[String]) -> Vec<String> {
    let Ok(output) = Command::new(clang).arg("-###").args(options).output() else {
        return Vec::new();
    };
    unknown_arguments(&String::from_utf8_lossy(&output.stderr))
}

/// The warning options every clang knows, which need no probe.
const COMMON_WARNINGS: &[&str] = &[
    "-Wall",
    "-Wextra",
    "-Werror",
    "-Wno-error",
    "-Wpedantic",
    "-Wshadow",
    "-Wconversion",
    "-Wunused",
];

/// Whether `word` is a warning option (`-Wfoo`, `-Wno-foo`,
/// `-Werror=foo`), not one passing options on (`-Wl,`, `-Wa,`, `-Wp,`).
fn is_warning_option(word: &str) -> bool {
    word.len() > 2
        && word.starts_with("-W")
        && !["-Wl,", "-Wa,", "-Wp,"].iter().any(|p| word.starts_with(p))
}

/// The warning options of `warnings` clang's front end does not know,
/// asked on an empty C file; none when clang cannot be run.
fn unknown_warnings_to(clang: &Path, warnings: &[&String]) -> Vec<String> {
    let Ok(output) = Command::new(clang)
        .args(["-fsyntax-only", "-x", "c", "/dev/null"])
        .args(warnings)
        .output()
    else {
        return Vec::new();
    };
    quoted_after(
        &String::from_utf8_lossy(&output.stderr),
        "unknown warning option",
    )
}

/// The options clang's messages `text` call unknown: "error: unknown
/// argument: '-X'" and "error: unknown argument '-X'; did you mean '-Y'?"
/// (clang 16's two forms).
fn unknown_arguments(text: &str) -> Vec<String> {
    quoted_after(text, "error: unknown argument")
}

/// The first quoted word after `what` on each line of `text` that says it.
fn quoted_after(text: &str, what: &str) -> Vec<String> {
    text.lines()
        .filter_map(|line| line.split_once(what)?.1.split('\'').nth(1))
        .map(str::to_owned)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn strings(words: &[&str]) -> Vec<String> {
        words.iter().map(|w| w.to_string()).collect()
    }

    #[test]
    fn levels_above_three_are_three() {
        assert_eq!(optimization_level("-O5"), "-O3");
        assert_eq!(optimization_level("-O4"), "-O3");
        assert_eq!(optimization_level("-O12"), "-O3");
        for kept in ["-O3", "-O0", "-O", "-Os", "-Ofast", "-Og", "-o5"] {
            assert_eq!(optimization_level(kept), kept);
        }
    }

    #[test]
    fn both_forms_of_clangs_message_are_read() {
        let text = "clang: error: unknown argument: '-ftree-vectorizer-verbose=0'\n\
                    clang-16: error: unknown argument '-fipa-ptaa'; did you mean '-fipa-pta'?\n\
                    clang: error: no input files\n";
        assert_eq!(
            unknown_arguments(text),
            strings(&["-ftree-vectorizer-verbose=0", "-fipa-ptaa"])
        );
    }

    #[test]
    fn inputs_outputs_and_libraries_are_not_asked_about() {
        let args = strings(&[
            "-c",
            "a.c",
            "-o",
            "a.o",
            "-I",
            "inc",
            "-lm",
            "-x",
            "c",
            "@rsp",
            "-fipa-pta",
            "-show",
            "-cc=gcc",
        ]);
        assert_eq!(
            options_of(&args),
            strings(&["-c", "-I", "inc", "-x", "c", "-fipa-pta"])
        );
    }

    #[test]
    fn common_options_need_no_probe() {
        for known in [
            "-I.", "-DX=1", "-O2", "-g3", "-std=c99", "-Wall", "-MMD", "inc",
        ] {
            assert!(surely_known(known), "{known}");
        }
        for unknown in ["-ffast-math", "-O5", "-march=native", "-fipa-pta"] {
            assert!(!surely_known(unknown), "{unknown}");
        }
    }

    /// gcc's warning options go, clang's stay, `-Wl,` is not a warning.
    #[test]
    fn clang_names_the_warnings_it_does_not_know() {
        let clang = crate::toolchain::find_clang(false).expect("clang 16 is installed");
        let line = for_clang(
            &clang,
            &strings(&[
                "-Wall",
                "-Werror",
                "-Wno-maybe-uninitialized",
                "-Wlogical-op",
                "-Werror=format-truncation",
                "-Wno-unused-parameter",
                "-Wl,--as-needed",
                "-c",
                "a.c",
            ]),
        );
        assert_eq!(
            line.dropped,
            strings(&[
                "-Wno-maybe-uninitialized",
                "-Wlogical-op",
                "-Werror=format-truncation"
            ])
        );
        assert_eq!(
            line.args,
            strings(&[
                "-Wall",
                "-Werror",
                "-Wno-unused-parameter",
                "-Wl,--as-needed",
                "-c",
                "a.c"
            ])
        );
        assert!(!is_warning_option("-W"));
        assert!(!is_warning_option("-Wp,-MD"));
    }

    /// HPCG's `setup/Make.Linux_MPI` flags and CoMD's `-O5`, asked of the
    /// installed clang 16: only gcc's own option goes.
    #[test]
    fn clang_names_what_it_does_not_know() {
        let clang = crate::toolchain::find_clang(false).expect("clang 16 is installed");
        let line = for_clang(
            &clang,
            &strings(&[
                "-DHPCG_NO_OPENMP",
                "-Isrc",
                "-O5",
                "-ffast-math",
                "-ftree-vectorize",
                "-ftree-vectorizer-verbose=0",
                "-c",
                "main.cpp",
                "-o",
                "main.o",
            ]),
        );
        assert_eq!(line.dropped, strings(&["-ftree-vectorizer-verbose=0"]));
        assert_eq!(
            line.args,
            strings(&[
                "-DHPCG_NO_OPENMP",
                "-Isrc",
                "-O3",
                "-ffast-math",
                "-ftree-vectorize",
                "-c",
                "main.cpp",
                "-o",
                "main.o",
            ])
        );
    }
}
