//! Which MPI a `verify` runs on, and what that means for the launch: the
//! launcher, its environment, and the runtime to preload.
//!
//! The program decides when it can: an executable linked against
//! `libmpich.so` runs on MPICH whatever the `PATH` says, and one linked
//! against Open MPI's `libmpi.so` on Open MPI (a launcher of the other MPI
//! would start N singletons). `--mpi` must agree with it. For a program
//! whose MPI cannot be read (linked statically), `--mpi` decides, else
//! `MBHYBRID_MPI`, else the `mpicc` on the `PATH`, as for `build`.
//! `MBHYBRID_MPI` is a default for builds, so it does not overrule a
//! program's own MPI.

use std::path::Path;
use std::process::Command;

use anyhow::{Context, Result};
use mbh_instrument::RUNTIME_LIB;
use mbh_instrument::{MpiFamily, MpiInstall};
use mbh_session::RuntimeLookup;

use crate::error::UsageError;

/// The MPI to run `program` on, given the one asked for with `--mpi`.
pub fn family_for_program(asked: Option<MpiFamily>, program: &Path) -> Result<MpiFamily> {
    let linked = MpiFamily::of_elf(program);
    match (asked, linked) {
        (Some(asked), Some(linked)) if asked != linked => Err(UsageError::ProgramOfOtherMpi {
            program: program.to_owned(),
            linked,
            asked,
        }
        .into()),
        (_, Some(linked)) => Ok(linked),
        (Some(asked), None) => Ok(asked),
        (None, None) => Ok(match mbh_instrument::family_from_env()? {
            Some(family) => family,
            // No MPI wrapper at all: MPICH, the MPI the README installs.
            None => MpiInstall::find(None).map_or(MpiFamily::Mpich, |mpi| mpi.family),
        }),
    }
}

/// The launcher template for `family` when `--launcher` is not given: its
/// `mpiexec` (the plain one when it is that MPI's, else Debian's
/// `mpiexec.mpich`/`mpiexec.openmpi`).
pub fn default_launcher(family: MpiFamily) -> Result<String, UsageError> {
    if which::which("mpiexec").is_ok() && launcher_family("mpiexec") == Some(family) {
        return Ok("mpiexec -n {np}".to_owned());
    }
    let suffixed = format!("mpiexec.{}", family.key());
    if which::which(&suffixed).is_ok() {
        return Ok(format!("{suffixed} -n {{np}}"));
    }
    Err(UsageError::NoLauncherFor {
        family,
        tried: format!("mpiexec, {suffixed}"),
    })
}

/// The MPI of launcher `program`, from its `--version` (Open MPI's says
/// "Open MPI" or "OpenRTE", MPICH's Hydra "HYDRA").
fn launcher_family(program: &str) -> Option<MpiFamily> {
    let out = Command::new(program).arg("--version").output().ok()?;
    let text = String::from_utf8_lossy(&out.stdout) + String::from_utf8_lossy(&out.stderr);
    if text.contains("Open MPI") || text.contains("OpenRTE") {
        Some(MpiFamily::OpenMpi)
    } else if text.contains("HYDRA") || text.contains("MPICH") {
        Some(MpiFamily::Mpich)
    } else {
        None
    }
}

/// Environment the launcher of `family` needs for a verification job,
/// less what the user already set (their setting wins).
///
/// Open MPI refuses by default to start more ranks than the machine has
/// cores, and to run as root; a verification runs small jobs of more
/// ranks than cores, and in containers and CI as root. Oversubscribed, its
/// ranks should yield the CPU while they wait rather than spin.
pub fn launcher_env(family: MpiFamily) -> Vec<(String, String)> {
    let mut env: Vec<(&str, &str)> = Vec::new();
    if family == MpiFamily::OpenMpi {
        env.push(("OMPI_MCA_rmaps_base_oversubscribe", "1"));
        env.push(("OMPI_MCA_mpi_yield_when_idle", "1"));
        // SAFETY: geteuid has no preconditions and cannot fail.
        if unsafe { libc::geteuid() } == 0 {
            env.push(("OMPI_ALLOW_RUN_AS_ROOT", "1"));
            env.push(("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1"));
        }
    }
    env.into_iter()
        .filter(|(key, _)| std::env::var_os(key).is_none())
        .map(|(key, value)| (key.to_owned(), value.to_owned()))
        .collect()
}

/// What a session needs from the MPI the program runs on.
pub struct MpiSetup {
    /// The launcher template (`--launcher`, else the MPI's `mpiexec`).
    pub launcher: String,
    /// The environment that launcher needs.
    pub launcher_env: Vec<(String, String)>,
    /// The runtime library built for that MPI.
    pub runtime: RuntimeLookup,
}

/// The MPI `program` (as given, from the working directory) runs on,
/// with the `--launcher`, `--mpi` and `--runtime` the user gave.
pub fn setup(
    program: &Path,
    launcher: Option<&str>,
    mpi: Option<MpiFamily>,
    runtime: Option<&Path>,
) -> Result<MpiSetup> {
    let cwd = std::env::current_dir().context("cannot read the working directory")?;
    let program = mbh_session::check_program(program, &cwd)?;
    let family = family_for_program(mpi, &program)?;
    let launcher = match launcher {
        Some(template) => template.to_owned(),
        None => default_launcher(family)?,
    };
    let installed = crate::commands::default_runtime_dir();
    let library = match runtime {
        Some(runtime) => runtime.to_owned(),
        None => mbh_instrument::runtime_dir_for(&installed, family)
            .map(|dir| dir.join(RUNTIME_LIB))
            .unwrap_or_else(|_| installed.join(RUNTIME_LIB)),
    };
    Ok(MpiSetup {
        launcher,
        launcher_env: launcher_env(family),
        runtime: RuntimeLookup {
            library,
            links_runtime: mbh_instrument::links_runtime,
        },
    })
}

/// The runtime installed beside the mbhybrid executable (`replay` reads
/// the rest from the run's manifest).
pub fn installed_runtime() -> RuntimeLookup {
    RuntimeLookup {
        library: crate::commands::default_runtime_dir().join(RUNTIME_LIB),
        links_runtime: mbh_instrument::links_runtime,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mpich_needs_no_launcher_environment() {
        assert!(launcher_env(MpiFamily::Mpich).is_empty());
    }

    #[test]
    fn open_mpi_may_oversubscribe() {
        let env = launcher_env(MpiFamily::OpenMpi);
        if std::env::var_os("OMPI_MCA_rmaps_base_oversubscribe").is_none() {
            assert!(env
                .iter()
                .any(|(k, v)| k == "OMPI_MCA_rmaps_base_oversubscribe" && v == "1"));
        }
    }

    #[test]
    fn a_program_not_linked_against_mpi_takes_the_mpi_asked_for() {
        // This test binary needs no MPI library.
        let me = std::env::current_exe().unwrap();
        assert_eq!(
            family_for_program(Some(MpiFamily::OpenMpi), &me).unwrap(),
            MpiFamily::OpenMpi
        );
    }
}
