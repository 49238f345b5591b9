//! `mbhybrid wrappers`: the folder of MPI compiler wrapper names (`mpicc`,
//! `mpicxx`, `mpic++`, `mpiCC`) for the compiler drivers, as ccache's
//! masquerade folder is for compilers. Put first on the `PATH`, it reaches
//! build systems that name `mpicc` themselves (`$(MPICC)`, `CXX = mpicxx`
//! in a setup file, `configure` scripts), with no file edited:
//!
//! ```sh
//! PATH="$(mbhybrid wrappers):$PATH" make
//! ```
//!
//! Each name is a relative link to the `mbhybrid` beside the folder, which
//! acts as the driver its name says (`src/wrapper.rs`). The drivers find
//! the real MPI wrapper for its flags further on the `PATH`: they skip
//! links to mbhybrid (`mbh_instrument::find_mpi_wrapper`). The folder is
//! made on first use, beside the executable, and repaired when a name is
//! missing.

use anyhow::{Context, Result};
use mbh_instrument::Language;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// The folder's name, beside the `mbhybrid` executable.
pub const FOLDER: &str = "mpi-wrappers";

/// The MPI compiler wrapper names the folder holds, with the language of
/// the driver each stands for (MPICH's and Open MPI's C++ names alike).
pub const MPI_WRAPPER_NAMES: [(&str, Language); 4] = [
    ("mpicc", Language::C),
    ("mpicxx", Language::Cxx),
    ("mpic++", Language::Cxx),
    ("mpiCC", Language::Cxx),
];

/// Prints the folder, making it first when needed.
pub fn run() -> Result<ExitCode> {
    let exe = std::env::current_exe()
        .and_then(|exe| exe.canonicalize())
        .context("cannot find where the mbhybrid executable is")?;
    let folder = ensure_folder(&exe)?;
    println!("{}", folder.display());
    Ok(ExitCode::SUCCESS)
}

/// The folder beside executable `exe`, with a link to it under every name
/// of [`MPI_WRAPPER_NAMES`].
pub fn ensure_folder(exe: &Path) -> Result<PathBuf> {
    let dir = exe
        .parent()
        .context("the mbhybrid executable is in no directory")?;
    let exe_name = exe
        .file_name()
        .context("the mbhybrid executable has no name")?;
    let folder = dir.join(FOLDER);
    std::fs::create_dir_all(&folder).with_context(|| {
        format!(
            "cannot make {}, the folder of MPI wrapper names beside mbhybrid",
            folder.display()
        )
    })?;
    let target = Path::new("..").join(exe_name);
    for (name, _) in MPI_WRAPPER_NAMES {
        ensure_link(&folder.join(name), &target)?;
    }
    Ok(folder)
}

/// Makes `link` a symbolic link to `target` unless it is one already. The
/// link is made under a name of this process's and renamed into place,
/// so that two commands making the folder at once both succeed.
fn ensure_link(link: &Path, target: &Path) -> Result<()> {
    if std::fs::read_link(link).is_ok_and(|t| t == target) {
        return Ok(());
    }
    let fresh = link.with_extension(format!("new-{}", std::process::id()));
    let _ = std::fs::remove_file(&fresh);
    std::os::unix::fs::symlink(target, &fresh)
        .and_then(|()| std::fs::rename(&fresh, link))
        .with_context(|| format!("cannot link {} to {}", link.display(), target.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_folder_links_every_name_to_the_executable_and_is_repaired() {
        let tmp = tempfile::tempdir().unwrap();
        let exe = tmp.path().join("mbhybrid");
        std::fs::write(&exe, "").unwrap();
        let folder = ensure_folder(&exe).unwrap();
        assert_eq!(folder, tmp.path().join(FOLDER));
        for (name, _) in MPI_WRAPPER_NAMES {
            let link = folder.join(name);
            assert_eq!(link.canonicalize().unwrap(), exe.canonicalize().unwrap());
        }
        std::fs::remove_file(folder.join("mpicxx")).unwrap();
        std::fs::write(folder.join("mpiCC"), "stale").unwrap();
        ensure_folder(&exe).unwrap();
        for name in ["mpicxx", "mpiCC"] {
            assert_eq!(
                std::fs::read_link(folder.join(name)).unwrap(),
                Path::new("../mbhybrid")
            );
        }
        assert_eq!(std::fs::read_dir(&folder).unwrap().count(), 4);
    }
}
