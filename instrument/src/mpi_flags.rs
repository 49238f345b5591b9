//! The installed MPI's compile and link flags, from its `mpicc` wrapper.

use std::path::Path;
use std::process::Command;

use crate::BuildError;

/// The flags the installed MPI's `mpicc` adds to a compiler command line,
/// split into those for compiling and those for linking. The wrapper's own
/// compiler (`gcc`, usually) is dropped: mbhybrid compiles with clang.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct MpiFlags {
    /// Flags for compiling a source (`-I…`, `-D…`, `-pthread`).
    pub compile: Vec<String>,
    /// Flags for linking an executable (`-L…`, `-l…`, `-Wl,…`).
    pub link: Vec<String>,
}

/// Flags taking their value as the next word, that only matter when compiling.
const COMPILE_WITH_VALUE: &[&str] = &[
    "-I",
    "-D",
    "-U",
    "-isystem",
    "-iquote",
    "-idirafter",
    "-include",
    "-imacros",
];
/// Prefixes of flags that only matter when compiling.
const COMPILE_PREFIXES: &[&str] = &["-I", "-D", "-U", "-isystem", "-iquote", "-idirafter"];
/// Flags taking their value as the next word, that only matter when linking.
const LINK_WITH_VALUE: &[&str] = &["-L", "-l", "-Xlinker"];
/// Prefixes of flags that only matter when linking.
const LINK_PREFIXES: &[&str] = &["-L", "-l", "-Wl,"];
/// Whole flags that only matter when linking.
const LINK_ONLY: &[&str] = &["-static", "-shared", "-rdynamic", "-no-pie", "-pie"];

impl MpiFlags {
    /// Asks the `mpicc` on the `PATH`; see [`MpiFlags::probe_wrapper`].
    pub fn probe() -> Result<MpiFlags, BuildError> {
        Self::probe_first(&["mpicc"])
    }

    /// Asks the C++ wrapper on the `PATH` (`mpicxx`, `mpic++` or `mpiCC`),
    /// whose flags add the C++ bindings library that MPI's `mpi.h` may
    /// need in C++ (MPICH's `-lmpichcxx`).
    pub fn probe_cxx() -> Result<MpiFlags, BuildError> {
        Self::probe_first(&["mpicxx", "mpic++", "mpiCC"])
    }

    fn probe_first(names: &[&str]) -> Result<MpiFlags, BuildError> {
        let wrapper = names
            .iter()
            .find_map(|name| crate::mpi_family::find_mpi_wrapper(name))
            .ok_or_else(|| BuildError::MpiWrapperNotFound {
                tried: names.join(", "),
            })?;
        Self::probe_wrapper(&wrapper)
    }

    /// Asks MPI compiler wrapper `wrapper` for its flags, trying in turn
    /// the forms the MPI implementations understand:
    ///
    /// 1. `--showme:compile` and `--showme:link` (Open MPI);
    /// 2. `-show-compile-info` and `-show-link-info` (MPICH 4 and later);
    /// 3. `-show` (MPICH and its derivatives, Intel MPI, MVAPICH), whose
    ///    command line is split with [`MpiFlags::from_show`].
    ///
    /// A wrapper that does not know a form passes it to its compiler, which
    /// fails, so the next form is tried.
    pub fn probe_wrapper(wrapper: &Path) -> Result<MpiFlags, BuildError> {
        let ask = |arg: &str| -> Result<Option<String>, BuildError> {
            let output = Command::new(wrapper)
                .arg(arg)
                .env(crate::mpi_family::PROBING_ENV, "1")
                .output()
                .map_err(|source| BuildError::Spawn {
                    program: wrapper.to_owned(),
                    source,
                })?;
            if !output.status.success()
                && String::from_utf8_lossy(&output.stderr).contains(crate::mpi_family::PROBING_ENV)
            {
                return Err(BuildError::MpiFlags {
                    wrapper: wrapper.to_owned(),
                    detail: "it is mbhybrid's own compiler driver, not the MPI's wrapper (a copy \
                             or a script running it, ahead of the MPI's wrappers on the PATH); \
                             put the folder `mbhybrid wrappers` prints there instead"
                        .to_owned(),
                });
            }
            let text = String::from_utf8_lossy(&output.stdout).trim().to_owned();
            Ok((output.status.success() && !text.is_empty()).then_some(text))
        };
        for (compile, link) in [
            ("--showme:compile", "--showme:link"),
            ("-show-compile-info", "-show-link-info"),
        ] {
            if let (Some(compile), Some(link)) = (ask(compile)?, ask(link)?) {
                return Ok(Self::from_split(&compile, &link));
            }
        }
        match ask("-show")? {
            Some(line) => Self::from_show(&line).map_err(|detail| BuildError::MpiFlags {
                wrapper: wrapper.to_owned(),
                detail,
            }),
            None => Err(BuildError::MpiFlags {
                wrapper: wrapper.to_owned(),
                detail: "it understood none of --showme:compile (Open MPI), -show-compile-info \
                         (MPICH 4) and -show (MPICH)"
                    .to_owned(),
            }),
        }
    }

    /// Flags from separate outputs for compiling and for linking, as Open
    /// MPI's `--showme:compile`/`--showme:link` and MPICH's
    /// `-show-compile-info`/`-show-link-info` print them (no compiler word).
    pub fn from_split(compile: &str, link: &str) -> MpiFlags {
        MpiFlags {
            compile: words(compile),
            link: words(link),
        }
    }

    /// Flags from a whole compiler command line as `mpicc -show` prints it
    /// (`gcc -I/usr/include/mpich -L/usr/lib -lmpich`): the first word, the
    /// compiler, is dropped (unless it is a flag), `-c` is dropped, and each
    /// other word goes to [`compile`](MpiFlags::compile), to
    /// [`link`](MpiFlags::link) or, when it matters to both (`-pthread`,
    /// `-f…`, `-m…`), to both. Preprocessor flags are compile-only; library
    /// paths, libraries, `-Wl,…`, `-Xlinker …` and file names are link-only.
    pub fn from_show(line: &str) -> Result<MpiFlags, String> {
        let mut words = words(line).into_iter().peekable();
        match words.peek() {
            None => return Err("`-show` printed nothing".to_owned()),
            Some(first) if !first.starts_with('-') => {
                words.next();
            }
            Some(_) => {}
        }
        let mut flags = MpiFlags::default();
        while let Some(word) = words.next() {
            let w = word.as_str();
            if w == "-c" {
                continue;
            }
            if COMPILE_WITH_VALUE.contains(&w) {
                flags.compile.push(word.clone());
                flags.compile.extend(words.next());
            } else if LINK_WITH_VALUE.contains(&w) {
                flags.link.push(word.clone());
                flags.link.extend(words.next());
            } else if COMPILE_PREFIXES.iter().any(|p| w.starts_with(p)) {
                flags.compile.push(word);
            } else if LINK_PREFIXES.iter().any(|p| w.starts_with(p))
                || LINK_ONLY.contains(&w)
                || !w.starts_with('-')
            {
                flags.link.push(word);
            } else {
                flags.compile.push(word.clone());
                flags.link.push(word);
            }
        }
        Ok(flags)
    }
}

/// Splits wrapper output into words the way a shell would (Intel MPI
/// quotes its paths); falls back to whitespace on unbalanced quotes.
fn words(text: &str) -> Vec<String> {
    shell_words::split(text)
        .unwrap_or_else(|_| text.split_whitespace().map(str::to_owned).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn strings(words: &[&str]) -> Vec<String> {
        words.iter().map(|w| w.to_string()).collect()
    }

    #[test]
    fn mpich_debian_show() {
        // MPICH 4.0.2 on Debian 12, `mpicc -show`.
        let flags = MpiFlags::from_show(
            "gcc -Wl,-z,relro -I/usr/include/x86_64-linux-gnu/mpich -L/usr/lib/x86_64-linux-gnu -lmpich\n",
        )
        .unwrap();
        assert_eq!(
            flags.compile,
            strings(&["-I/usr/include/x86_64-linux-gnu/mpich"])
        );
        assert_eq!(
            flags.link,
            strings(&["-Wl,-z,relro", "-L/usr/lib/x86_64-linux-gnu", "-lmpich"])
        );
    }

    #[test]
    fn mpich_show_with_c_and_rpath() {
        // MPICH built from source, `mpicc -show -c`, then `mpicc -show`.
        let flags = MpiFlags::from_show("gcc -c -I/opt/mpich/include").unwrap();
        assert_eq!(flags.compile, strings(&["-I/opt/mpich/include"]));
        assert!(flags.link.is_empty());
        let flags = MpiFlags::from_show(
            "cc -I/opt/mpich/include -L/opt/mpich/lib -Wl,-rpath -Wl,/opt/mpich/lib \
             -Wl,--enable-new-dtags -lmpi",
        )
        .unwrap();
        assert_eq!(flags.compile, strings(&["-I/opt/mpich/include"]));
        assert_eq!(
            flags.link,
            strings(&[
                "-L/opt/mpich/lib",
                "-Wl,-rpath",
                "-Wl,/opt/mpich/lib",
                "-Wl,--enable-new-dtags",
                "-lmpi"
            ])
        );
    }

    #[test]
    fn open_mpi_showme() {
        // Open MPI 4.1 built from source, `mpicc --showme`.
        let flags = MpiFlags::from_show(
            "gcc -I/opt/openmpi/include -pthread -Wl,-rpath -Wl,/opt/openmpi/lib \
             -Wl,--enable-new-dtags -L/opt/openmpi/lib -lmpi",
        )
        .unwrap();
        assert_eq!(
            flags.compile,
            strings(&["-I/opt/openmpi/include", "-pthread"])
        );
        assert_eq!(
            flags.link,
            strings(&[
                "-pthread",
                "-Wl,-rpath",
                "-Wl,/opt/openmpi/lib",
                "-Wl,--enable-new-dtags",
                "-L/opt/openmpi/lib",
                "-lmpi"
            ])
        );
    }

    #[test]
    fn open_mpi_showme_split() {
        // Open MPI 4.1 on Debian 12, `--showme:compile` and `--showme:link`.
        let flags = MpiFlags::from_split(
            "-I/usr/lib/x86_64-linux-gnu/openmpi/include -I/usr/lib/x86_64-linux-gnu/openmpi/include/openmpi\n",
            "-L/usr/lib/x86_64-linux-gnu/openmpi/lib -lmpi\n",
        );
        assert_eq!(
            flags.compile,
            strings(&[
                "-I/usr/lib/x86_64-linux-gnu/openmpi/include",
                "-I/usr/lib/x86_64-linux-gnu/openmpi/include/openmpi"
            ])
        );
        assert_eq!(
            flags.link,
            strings(&["-L/usr/lib/x86_64-linux-gnu/openmpi/lib", "-lmpi"])
        );
    }

    #[test]
    fn intel_mpi_quoted_paths_and_separate_values() {
        let flags = MpiFlags::from_show(
            "gcc -I'/opt/intel mpi/include' -L'/opt/intel mpi/lib' -Xlinker --enable-new-dtags \
             -Xlinker -rpath -Xlinker '/opt/intel mpi/lib' -lmpi -ldl -I /opt/x -D FOO=1 \
             /opt/extra/libfoo.a",
        )
        .unwrap();
        assert_eq!(
            flags.compile,
            strings(&["-I/opt/intel mpi/include", "-I", "/opt/x", "-D", "FOO=1"])
        );
        assert_eq!(
            flags.link,
            strings(&[
                "-L/opt/intel mpi/lib",
                "-Xlinker",
                "--enable-new-dtags",
                "-Xlinker",
                "-rpath",
                "-Xlinker",
                "/opt/intel mpi/lib",
                "-lmpi",
                "-ldl",
                "/opt/extra/libfoo.a"
            ])
        );
    }

    #[test]
    fn empty_show_is_an_error() {
        assert!(MpiFlags::from_show("  \n").is_err());
    }

    /// The installed wrappers answer one of the forms (MPICH 4 on the
    /// reference machine: `-show-compile-info`).
    #[test]
    fn probes_the_installed_wrappers() {
        let c = MpiFlags::probe().expect("mpicc is installed (scripts/install-deps.sh)");
        assert!(c.compile.iter().any(|f| f.starts_with("-I")), "{c:?}");
        assert!(c.link.iter().any(|f| f.starts_with("-l")), "{c:?}");
        let cxx = MpiFlags::probe_cxx().expect("mpicxx is installed (scripts/install-deps.sh)");
        assert!(cxx.link.len() >= c.link.len(), "{cxx:?}");
    }
}
