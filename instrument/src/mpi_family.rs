//! Which MPI a build or a run is for: MPICH or Open MPI, and where that
//! MPI's compiler wrappers and runtime library are.
//!
//! The two are not interchangeable at any level: `mpi.h` differs (handles
//! are `int`s in MPICH, pointers in Open MPI), so do the libraries
//! (`libmpich.so.12`, `libmpi.so.40`) and the launchers. mbhybrid's runtime
//! is therefore built once per MPI (`cargo build` makes the one for the
//! `mpicc` on the `PATH`; `scripts/build-runtimes.sh` puts each MPI's in
//! `<runtime dir>/<family>/`), and everything that compiles, links or
//! launches first settles on one [`MpiFamily`]:
//!
//! 1. the one asked for (`--mpi`, or `MBHYBRID_MPI` for the compiler
//!    drivers, which take no options of their own);
//! 2. else, for a program already linked, the MPI library it needs;
//! 3. else the MPI of the `mpicc` on the `PATH`, as `mpicc` itself would.
//!
//! Debian installs both MPIs' wrappers under suffixed names (`mpicc.mpich`,
//! `mpicc.openmpi`) and points `mpicc` at one of them; a family's wrapper is
//! `mpicc` when it is that family's, else the suffixed name.

use std::path::{Path, PathBuf};

use crate::{BuildError, MpiFlags, RUNTIME_LIB};

/// The environment variable naming the MPI (`mpich` or `openmpi`) for the
/// compiler drivers and, when `--mpi` is not given, for `build`/`verify`.
pub const MPI_ENV: &str = "MBHYBRID_MPI";

/// An MPI implementation family mbhybrid supports.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub enum MpiFamily {
    /// MPICH and the MPIs built on it that keep its ABI.
    #[serde(rename = "mpich")]
    Mpich,
    /// Open MPI.
    #[serde(rename = "openmpi")]
    OpenMpi,
}

impl MpiFamily {
    /// Every supported family.
    pub const ALL: [MpiFamily; 2] = [MpiFamily::Mpich, MpiFamily::OpenMpi];

    /// The name used on command lines, in `MBHYBRID_MPI`, as the runtime's
    /// subdirectory and as Debian's wrapper suffix.
    pub fn key(self) -> &'static str {
        match self {
            MpiFamily::Mpich => "mpich",
            MpiFamily::OpenMpi => "openmpi",
        }
    }

    /// The name people know it by.
    pub fn display_name(self) -> &'static str {
        match self {
            MpiFamily::Mpich => "MPICH",
            MpiFamily::OpenMpi => "Open MPI",
        }
    }

    /// The family called `key` ([`MpiFamily::key`]).
    pub fn from_key(key: &str) -> Option<MpiFamily> {
        MpiFamily::ALL.into_iter().find(|f| f.key() == key)
    }

    /// The family a wrapper links with: MPICH's wrappers link `-lmpich`,
    /// Open MPI's `-lmpi` (and never `-lmpich`).
    pub fn of_link_flags(flags: &MpiFlags) -> MpiFamily {
        let libs = || flags.link.iter().map(String::as_str);
        if libs().any(|w| w == "-lmpi") && !libs().any(|w| w == "-lmpich") {
            MpiFamily::OpenMpi
        } else {
            MpiFamily::Mpich
        }
    }

    /// The family of a shared library name an executable needs
    /// (`libmpich.so.12`, `libmpi.so.40`); `None` for any other library.
    pub fn of_soname(soname: &str) -> Option<MpiFamily> {
        if soname.starts_with("libmpich.so") {
            Some(MpiFamily::Mpich)
        } else if soname.starts_with("libmpi.so") {
            Some(MpiFamily::OpenMpi)
        } else {
            None
        }
    }

    /// The family of the MPI library the ELF file at `path` needs
    /// (`DT_NEEDED`); `None` when it needs none (a static MPI, not an
    /// MPI program) or cannot be read.
    pub fn of_elf(path: &Path) -> Option<MpiFamily> {
        let file = std::fs::File::open(path).ok()?;
        needed_libraries(&object::ReadCache::new(file))
            .into_iter()
            .find_map(|name| MpiFamily::of_soname(&name))
    }

    /// The names of this family's C (`cxx`: C++) wrapper that Debian
    /// installs beside the plain one.
    fn suffixed_wrappers(self, cxx: bool) -> Vec<String> {
        let names: &[&str] = if cxx {
            &["mpicxx", "mpic++", "mpiCC"]
        } else {
            &["mpicc"]
        };
        names
            .iter()
            .map(|name| format!("{name}.{}", self.key()))
            .collect()
    }
}

impl std::fmt::Display for MpiFamily {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.display_name())
    }
}

/// An MPI chosen for a build: its family, its C wrapper and that
/// wrapper's flags.
#[derive(Debug, Clone)]
pub struct MpiInstall {
    /// The family.
    pub family: MpiFamily,
    /// Its C wrapper (`mpicc` or `mpicc.<family>`).
    pub mpicc: PathBuf,
    /// The flags `mpicc` adds.
    pub c_flags: MpiFlags,
}

impl MpiInstall {
    /// The MPI `wanted` (see the module docs for the order), found on the
    /// `PATH`.
    pub fn find(wanted: Option<MpiFamily>) -> Result<MpiInstall, BuildError> {
        let wanted = match wanted {
            Some(family) => Some(family),
            None => family_from_env()?,
        };
        let plain = find_mpi_wrapper("mpicc").map(|mpicc| {
            let flags = MpiFlags::probe_wrapper(&mpicc)?;
            Ok(MpiInstall {
                family: MpiFamily::of_link_flags(&flags),
                mpicc,
                c_flags: flags,
            })
        });
        let Some(family) = wanted else {
            return plain.unwrap_or_else(|| {
                Err(BuildError::MpiWrapperNotFound {
                    tried: "mpicc".to_owned(),
                })
            });
        };
        if let Some(Ok(plain)) = plain.filter(|p| p.as_ref().is_ok_and(|p| p.family == family)) {
            return Ok(plain);
        }
        let names = family.suffixed_wrappers(false);
        let mpicc = names
            .iter()
            .find_map(|name| find_mpi_wrapper(name))
            .ok_or_else(|| BuildError::MpiNotInstalled {
                family,
                tried: format!("{}, mpicc", names.join(", ")),
            })?;
        let c_flags = MpiFlags::probe_wrapper(&mpicc)?;
        Ok(MpiInstall {
            family,
            mpicc,
            c_flags,
        })
    }

    /// The flags of this MPI's C++ wrapper (which add the C++ bindings
    /// library that `mpi.h` may need in C++: MPICH's `-lmpichcxx`).
    pub fn cxx_flags(&self) -> Result<MpiFlags, BuildError> {
        let plain = ["mpicxx", "mpic++", "mpiCC"]
            .iter()
            .find_map(|name| find_mpi_wrapper(name))
            .and_then(|wrapper| {
                let flags = MpiFlags::probe_wrapper(&wrapper).ok()?;
                (MpiFamily::of_link_flags(&flags) == self.family).then_some(flags)
            });
        if let Some(flags) = plain {
            return Ok(flags);
        }
        let names = self.family.suffixed_wrappers(true);
        let wrapper = names
            .iter()
            .find_map(|name| find_mpi_wrapper(name))
            .ok_or_else(|| BuildError::MpiNotInstalled {
                family: self.family,
                tried: format!("{}, mpicxx", names.join(", ")),
            })?;
        MpiFlags::probe_wrapper(&wrapper)
    }
}

/// The names of mbhybrid's own executables: `mbhybrid`, and the programs
/// that run it as a compiler driver. A `mpicc` that is one of these (a
/// link in the folder of MPI wrapper names `mbhybrid wrappers` prints, put
/// first on the `PATH`) is not the MPI's wrapper.
pub const OWN_EXECUTABLES: [&str; 3] = ["mbhybrid", "mbhybrid-cc", "mbhybrid-cxx"];

/// The environment variable set for an MPI wrapper asked for its flags:
/// a compiler driver that finds it set was run as the wrapper it looks
/// for (a copy of it under an MPI wrapper's name on the `PATH`), and stops
/// instead of asking itself again.
pub const PROBING_ENV: &str = "MBHYBRID_PROBING_MPI_WRAPPER";

/// The first MPI compiler wrapper called `name` on the `PATH` that is not
/// one of mbhybrid's own executables ([`OWN_EXECUTABLES`], followed
/// through links): with the folder of wrapper names for the drivers first
/// on the `PATH`, the real `mpicc` is the next one.
pub fn find_mpi_wrapper(name: &str) -> Option<PathBuf> {
    which::which_all(name)
        .ok()?
        .find(|path| !is_own_executable(path))
}

/// Whether `path` is (a link to) one of mbhybrid's executables.
fn is_own_executable(path: &Path) -> bool {
    let Ok(real) = path.canonicalize() else {
        return false;
    };
    real.file_name()
        .and_then(|n| n.to_str())
        .is_some_and(|n| OWN_EXECUTABLES.contains(&n))
}

/// The family `MBHYBRID_MPI` names, if set.
pub fn family_from_env() -> Result<Option<MpiFamily>, BuildError> {
    match std::env::var(MPI_ENV) {
        Ok(value) if value.is_empty() => Ok(None),
        Ok(value) => MpiFamily::from_key(&value)
            .map(Some)
            .ok_or(BuildError::UnknownMpi { value }),
        Err(_) => Ok(None),
    }
}

/// The directory holding the runtime built for `family` under `base` (the
/// runtime directory given or defaulted): `base` itself when its library is
/// that family's (a plain `cargo build` makes the one for the `mpicc` on the
/// `PATH`; it wins, so that a rebuild is never shadowed by an older copy),
/// else `base/<family>/`, where `scripts/build-runtimes.sh` puts each MPI's.
/// Absolute: it becomes executables' `RUNPATH`.
pub fn runtime_dir_for(base: &Path, family: MpiFamily) -> Result<PathBuf, BuildError> {
    let base = std::path::absolute(base).unwrap_or_else(|_| base.to_owned());
    let plain = base.join(RUNTIME_LIB);
    let plain_family = plain
        .is_file()
        .then(|| MpiFamily::of_elf(&plain))
        .map(|built| built.unwrap_or(MpiFamily::Mpich));
    if plain_family == Some(family) {
        return Ok(base);
    }
    let own = base.join(family.key());
    if own.join(RUNTIME_LIB).is_file() {
        return Ok(own);
    }
    match plain_family {
        Some(built) => Err(BuildError::RuntimeForOtherMpi {
            family,
            built,
            path: own.join(RUNTIME_LIB),
        }),
        None => Err(BuildError::RuntimeMissing { path: plain }),
    }
}

/// Whether the ELF executable at `path` may use mbhybrid's runtime library
/// (`build` and the compiler drivers link it in): `false` only for a
/// dynamically linked executable that does not need it, such as a plain
/// `mpicc` build with a site table left beside it by an earlier build. A
/// static executable, or a file that cannot be read, cannot tell: `true`.
pub fn links_runtime(path: &Path) -> bool {
    let Ok(file) = std::fs::File::open(path) else {
        return true;
    };
    let needed = needed_libraries(&object::ReadCache::new(file));
    needed.is_empty() || needed.iter().any(|name| name == RUNTIME_LIB)
}

/// The `DT_NEEDED` names of an ELF executable or shared library (empty
/// when `data` is not one, or has no dynamic section). Given a file
/// through a [`object::ReadCache`], only the headers and the dynamic
/// section are read: `verify` asks this of the runtime library (11 MB with
/// its debug information) at every start, and reading all of it was a
/// third of the command's own start-up.
fn needed_libraries<'data, R: object::ReadRef<'data>>(data: R) -> Vec<String> {
    use object::read::elf::{Dyn as _, ElfFile64, SectionHeader as _};
    use object::Endianness;
    let Ok(file) = ElfFile64::<Endianness, R>::parse(data) else {
        return Vec::new();
    };
    let endian = file.endian();
    let sections = file.elf_section_table();
    let Ok(Some((entries, link))) = sections
        .iter()
        .find_map(|s| s.dynamic(endian, data).transpose())
        .transpose()
    else {
        return Vec::new();
    };
    let Ok(strings) = sections.strings(endian, data, link) else {
        return Vec::new();
    };
    entries
        .iter()
        .filter(|d| d.d_tag(endian) == u64::from(object::elf::DT_NEEDED))
        .filter_map(|d| strings.get(u32::try_from(d.d_val(endian)).ok()?).ok())
        .map(|name| String::from_utf8_lossy(name).into_owned())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn flags(link: &[&str]) -> MpiFlags {
        MpiFlags {
            compile: Vec::new(),
            link: link.iter().map(|w| w.to_string()).collect(),
        }
    }

    #[test]
    fn families_are_told_apart_by_the_library_the_wrapper_links() {
        // Debian 12: `mpicc.mpich -show-link-info`, `mpicc.openmpi --showme:link`.
        assert_eq!(
            MpiFamily::of_link_flags(&flags(&["-L/usr/lib/x86_64-linux-gnu", "-lmpich"])),
            MpiFamily::Mpich
        );
        assert_eq!(
            MpiFamily::of_link_flags(&flags(&[
                "-L/usr/lib/x86_64-linux-gnu/openmpi/lib",
                "-lmpi"
            ])),
            MpiFamily::OpenMpi
        );
    }

    #[test]
    fn sonames_name_their_family() {
        assert_eq!(
            MpiFamily::of_soname("libmpich.so.12"),
            Some(MpiFamily::Mpich)
        );
        assert_eq!(
            MpiFamily::of_soname("libmpi.so.40"),
            Some(MpiFamily::OpenMpi)
        );
        assert_eq!(MpiFamily::of_soname("libmpi_cxx.so.40"), None);
        assert_eq!(MpiFamily::of_soname("libc.so.6"), None);
    }

    #[test]
    fn keys_round_trip() {
        for family in MpiFamily::ALL {
            assert_eq!(MpiFamily::from_key(family.key()), Some(family));
        }
        assert_eq!(MpiFamily::from_key("intel"), None);
    }

    #[test]
    fn an_elf_file_names_what_it_needs() {
        let exe = std::env::current_exe().unwrap();
        let needed = needed_libraries(std::fs::read(&exe).unwrap().as_slice());
        assert!(
            needed.iter().any(|n| n.starts_with("libc.so")),
            "{needed:?}"
        );
        // Read in parts, as `of_elf` and `links_runtime` read files.
        let cache = object::ReadCache::new(std::fs::File::open(&exe).unwrap());
        assert_eq!(needed_libraries(&cache), needed);
        assert!(needed_libraries(&b"not an ELF file"[..]).is_empty());
    }
}
