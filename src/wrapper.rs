//! `mbhybrid-cc`, `mbhybrid-c++` (also spelled `mbhybrid-cxx`): the same
//! executable as `mbhybrid`, run under another name (as ccache is), acting
//! as a compiler driver that takes what `mpicc`/`mpicxx` take. What it
//! does is `mbh_instrument::drive`'s; this module only picks the language
//! from the name, prints and chooses the exit status.
//!
//! The names reach this executable through the small `mbhybrid-cc` and
//! `mbhybrid-cxx` programs cargo builds beside it (`src/bin/`), through
//! the `mbhybrid-c++` link the build script makes there, or through any
//! symbolic link to `mbhybrid` with one of the names.

use mbh_diagnostics::tool::{emit, ToolDiagnostic};
use std::ffi::OsStr;
use std::path::Path;
use std::process::ExitCode;

use mbh_instrument::{BuildError, Driven, DriverRequest, Language};

/// The language of the compiler driver `argv0` names, if it names one:
/// the drivers' own names, and the MPI wrapper names of the folder
/// `mbhybrid wrappers` makes (links to `mbhybrid`).
pub fn invoked_as(argv0: &OsStr) -> Option<Language> {
    let name = Path::new(argv0).file_name()?.to_str()?;
    match name {
        "mbhybrid-cc" => Some(Language::C),
        "mbhybrid-c++" | "mbhybrid-cxx" => Some(Language::Cxx),
        _ => crate::commands::wrappers::MPI_WRAPPER_NAMES
            .iter()
            .find(|(wrapper, _)| *wrapper == name)
            .map(|(_, language)| *language),
    }
}

/// Runs the compiler driver for `language` on this process's arguments.
pub fn main(language: Language) -> ExitCode {
    let name = match language {
        Language::C => "mbhybrid-cc",
        Language::Cxx => "mbhybrid-c++",
    };
    // The driver's own errors: said in its name, exit status 2.
    let fail = |message: String| {
        emit(&ToolDiagnostic::error(message).from(name));
        ExitCode::from(2)
    };
    if std::env::var_os(mbh_instrument::PROBING_ENV).is_some() {
        // Asked for its flags as if it were the MPI's wrapper: a copy of
        // this program under an MPI wrapper's name is on the PATH before
        // the real one, and answering would ask itself again forever.
        return fail(format!(
            "this is mbhybrid's compiler driver, run where the MPI's own compiler wrapper was \
             looked for: put only the folder `mbhybrid wrappers` prints before the MPI's \
             wrappers on the PATH (its names are links to mbhybrid, which the drivers skip), \
             never a copy of the drivers under an MPI wrapper's name ({} is set)",
            mbh_instrument::PROBING_ENV
        ));
    }
    let mut args = Vec::new();
    for arg in std::env::args_os().skip(1) {
        match arg.into_string() {
            Ok(arg) => args.push(arg),
            Err(arg) => {
                return fail(format!(
                    "the argument {arg:?} is not valid UTF-8; rename the file or directory it names"
                ))
            }
        }
    }
    let args = gcc_options_for_clang(name, language, &args);
    if args.iter().any(|a| a == "-v") {
        // As mpicc does before its compiler's own `-v` output: say what
        // this driver is.
        emit(&ToolDiagnostic::info(format!(
            "{name} for mbhybrid {}: clang 16 with the flags of {}; objects carry their IR, \
             executables are instrumented",
            env!("CARGO_PKG_VERSION"),
            match language {
                Language::C => "mpicc",
                Language::Cxx => "mpicxx",
            }
        )));
    }
    let base_dir = match std::env::current_dir() {
        Ok(dir) => dir,
        Err(e) => return fail(format!("cannot read the current directory: {e}")),
    };
    let checks = std::env::var(mbh_instrument::ENV_ACCESS_CHECKS).ok();
    let access_checks = match mbh_instrument::access_checks_from_env(checks.as_deref()) {
        Ok(on) => on,
        Err(e) => return fail(e.to_string()),
    };
    let request = DriverRequest {
        language,
        args,
        runtime_dir: crate::commands::default_runtime_dir(),
        base_dir,
        access_checks,
    };
    match mbh_instrument::drive(&request) {
        Ok(Driven::Exited(status)) => exit_status(status),
        Ok(Driven::Printed(text)) => {
            print!("{text}");
            ExitCode::SUCCESS
        }
        Ok(Driven::Linked(built)) => {
            // A compiler is silent when all is well: only what clang and
            // the linker printed, and what the runtime will not handle.
            emit(&ToolDiagnostic::verbatim(built.warnings));
            emit(&ToolDiagnostic::verbatim_lines(&built.preflight));
            ExitCode::SUCCESS
        }
        // The compiler's own words and status, as make and CMake expect
        // from a compiler: no paragraph of mbhybrid's around them.
        Err(BuildError::Compile { stderr, status, .. })
        | Err(BuildError::Link { stderr, status, .. }) => {
            emit(&ToolDiagnostic::verbatim(stderr));
            exit_status(status.max(1))
        }
        Err(err) => fail(err.to_string()),
    }
}

/// The command line `args`, written for gcc's `mpicc`, as clang takes it
/// (`mbh_instrument::clang_command_line`): gcc's own options are dropped,
/// with one warning naming them, so a build written for gcc still builds.
fn gcc_options_for_clang(name: &str, language: Language, args: &[String]) -> Vec<String> {
    let line = mbh_instrument::clang_command_line(language, args);
    if !line.dropped.is_empty() {
        let (options, them) = match line.dropped.len() {
            1 => ("option", "it"),
            _ => ("options", "them"),
        };
        emit(
            &ToolDiagnostic::warning(format!(
                "ignoring the gcc {options} {}: clang 16, which mbhybrid compiles with, does not \
                 know {them}",
                line.dropped.join(" ")
            ))
            .from(name),
        );
    }
    line.args
}

fn exit_status(status: i32) -> ExitCode {
    ExitCode::from(u8::try_from(status).unwrap_or(1))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_pick_the_language() {
        let lang = |s: &str| invoked_as(OsStr::new(s));
        assert_eq!(lang("mbhybrid-cc"), Some(Language::C));
        assert_eq!(lang("/opt/mbh/bin/mbhybrid-cc"), Some(Language::C));
        assert_eq!(lang("mbhybrid-c++"), Some(Language::Cxx));
        assert_eq!(lang("./mbhybrid-cxx"), Some(Language::Cxx));
        assert_eq!(lang("mbhybrid"), None);
        assert_eq!(lang("target/debug/mbhybrid"), None);
        assert_eq!(lang("cc"), None);
        assert_eq!(lang("/x/mpi-wrappers/mpicc"), Some(Language::C));
        for cxx in ["mpicxx", "mpic++", "mpiCC"] {
            assert_eq!(lang(cxx), Some(Language::Cxx));
        }
        assert_eq!(lang("mpicc.mpich"), None);
    }
}
