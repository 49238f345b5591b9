//! mbhybrid's end-to-end test harness: C programs with their expected
//! outcomes, driven through the real `mbhybrid` binary on real MPI.
//!
//! A test program under `tests/programs/` says what it expects in its own
//! text, so expectations move with the lines they point at:
//!
//! ```c
//! /* mbhybrid-test: np=3 exit=1 */        first line: ranks, verify's exit status
//! assert(x != 33); // expect: assertion rank=1
//! ```
//!
//! `// expect: KIND rank=R` on a line means the report must hold a finding
//! of `KIND` with a location on that line (of this file) for rank `R`
//! (`rank=0 rank=1`: one location for each). Without any `expect:` line,
//! the report must hold no finding. The header may add `interleavings=N`:
//! the exploration must run exactly N interleavings; `options=A,B`, more
//! `verify` options; `cflags=A,B`, compiler flags for `build` (after `--`).
//!
//! The harness serialises MPI jobs (machines here have two cores, and
//! concurrent jobs would make timing-dependent outcomes flaky): every test
//! that launches one holds [`mpi_lock`].
//!
//! This crate must not fake anything: no mock MPI, no recorded outputs.
#![deny(missing_docs)]

pub mod differential;
pub mod generator;
pub mod json;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::{Mutex, MutexGuard, OnceLock};

/// The workspace root (the repository).
pub fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("tests/ has a parent")
        .to_owned()
}

/// The directory cargo put the binaries in (`target/debug`), found from the
/// running executable: a test (`target/debug/deps/e2e-…`) or one of this
/// crate's programs (`target/debug/soak`).
pub fn bin_dir() -> PathBuf {
    let exe = std::env::current_exe().expect("current exe");
    let dir = exe.parent().expect("an executable lives in a directory");
    if dir
        .file_name()
        .is_some_and(|name| name == "deps" || name == "examples")
    {
        dir.parent()
            .expect("target/<profile>/deps/ or examples/")
            .to_owned()
    } else {
        dir.to_owned()
    }
}

/// The MPI the end-to-end tests build and run with: `MBHYBRID_MPI`
/// (`mpich` or `openmpi`, which `mbhybrid` reads too), MPICH when unset.
/// `scripts/test.sh` runs the suite on MPICH and a subset on Open MPI.
pub fn mpi_under_test() -> &'static str {
    static MPI: OnceLock<&'static str> = OnceLock::new();
    MPI.get_or_init(|| match std::env::var("MBHYBRID_MPI").as_deref() {
        Ok("openmpi") => "openmpi",
        Ok("mpich") | Ok("") | Err(_) => "mpich",
        Ok(other) => panic!("MBHYBRID_MPI={other}: the tests know `mpich` and `openmpi`"),
    })
}

/// The C compiler wrapper of [`mpi_under_test`]: the `mpicc` on the
/// `PATH` for MPICH (the MPI the install script leaves there), Debian's
/// `mpicc.openmpi` for Open MPI.
pub fn mpicc() -> &'static str {
    match mpi_under_test() {
        "openmpi" => "mpicc.openmpi",
        _ => "mpicc",
    }
}

/// The launcher of [`mpi_under_test`], as [`mpicc`], with the environment
/// Open MPI needs to oversubscribe and to run as root (as `mbhybrid
/// verify` gives it).
pub fn mpiexec(np: u32) -> Command {
    let mut command = match mpi_under_test() {
        "openmpi" => {
            let mut c = Command::new("mpiexec.openmpi");
            c.env("OMPI_MCA_rmaps_base_oversubscribe", "1")
                .env("OMPI_ALLOW_RUN_AS_ROOT", "1")
                .env("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1");
            c
        }
        _ => Command::new("mpiexec"),
    };
    command.args(["-n", &np.to_string()]);
    command
}

/// The `mbhybrid` binary, checked to exist (with the runtime library of
/// [`mpi_under_test`]) and to be newer than the Rust sources each is built
/// from, so a test never runs a stale build.
pub fn mbhybrid() -> PathBuf {
    static CHECKED: OnceLock<PathBuf> = OnceLock::new();
    CHECKED
        .get_or_init(|| {
            let bin = bin_dir().join("mbhybrid");
            let runtime = match mpi_under_test() {
                "openmpi" => bin_dir().join("openmpi/libmbhybrid_rt.so"),
                _ => bin_dir().join("libmbhybrid_rt.so"),
            };
            // Every crate the binary links (Cargo.toml's `[dependencies]`).
            let bin_sources: &[&str] = &[
                "src",
                "trace/src",
                "static/src",
                "instrument/src",
                "analysis/src",
                "bounding/src",
                "fib/src",
                "diagnostics/src",
                "verdict/src",
                "launch/src",
                "session/src",
            ];
            let runtime_sources: &[&str] = &["runtime/src", "trace/src"];
            for (artefact, sources) in [(&bin, bin_sources), (&runtime, runtime_sources)] {
                let build = "`cargo build --workspace` and `bash scripts/build-runtimes.sh`";
                let built = std::fs::metadata(artefact).and_then(|m| m.modified()).unwrap_or_else(|_| {
                    panic!("{} is missing: run {build} before the end-to-end tests (scripts/test.sh does)", artefact.display())
                });
                if let Some(newer) = newest_source_after(&workspace_root(), sources, built) {
                    panic!(
                        "{} is older than {}: run {build} before the end-to-end tests (scripts/test.sh does)",
                        artefact.display(),
                        newer.display()
                    );
                }
            }
            bin
        })
        .clone()
}

fn newest_source_after(
    root: &Path,
    dirs: &[&str],
    built: std::time::SystemTime,
) -> Option<PathBuf> {
    let mut stack: Vec<PathBuf> = dirs.iter().map(|c| root.join(c)).collect();
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
            } else if entry
                .metadata()
                .and_then(|m| m.modified())
                .is_ok_and(|m| m > built)
            {
                return Some(path);
            }
        }
    }
    None
}

/// Held by every test that launches an MPI job.
pub fn mpi_lock() -> MutexGuard<'static, ()> {
    static LOCK: Mutex<()> = Mutex::new(());
    // A test that panicked while holding the lock does not poison the others.
    LOCK.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// Runs `mbhybrid ARGS` in `cwd`.
pub fn run_mbhybrid(cwd: &Path, args: &[&str]) -> Output {
    // `cargo test` puts target/debug/deps on LD_LIBRARY_PATH, which would
    // make the ranks load the copy of the runtime there instead of the one
    // the program was linked against: run as a user would.
    Command::new(mbhybrid())
        .args(args)
        .current_dir(cwd)
        .env_remove("LD_LIBRARY_PATH")
        .output()
        .expect("mbhybrid runs")
}

/// A test program and what it expects.
#[derive(Debug, Clone)]
pub struct TestProgram {
    /// The source, relative to the workspace root.
    pub source: PathBuf,
    /// Number of ranks.
    pub np: u32,
    /// Expected exit status of `mbhybrid verify`.
    pub exit: i32,
    /// Expected number of interleavings, when the header says.
    pub interleavings: Option<u32>,
    /// Extra `verify` options from the header (`options=--buffering=zero`).
    pub options: Vec<String>,
    /// Compiler flags `build` passes on after `--` (`cflags=-fopenmp`).
    pub cflags: Vec<String>,
    /// Expected findings.
    pub expected: Vec<ExpectedFinding>,
}

/// One `// expect:` line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExpectedFinding {
    /// The finding kind (`assertion`).
    pub kind: String,
    /// The line it must point at.
    pub line: u32,
    /// The rank it must name.
    pub rank: i32,
}

impl TestProgram {
    /// Reads the expectations of `source` (relative to the workspace root).
    pub fn load(source: &str) -> TestProgram {
        let text = std::fs::read_to_string(workspace_root().join(source))
            .unwrap_or_else(|e| panic!("cannot read {source}: {e}"));
        Self::parse(source, &text)
    }

    /// Parses expectations from a program's text.
    pub fn parse(source: &str, text: &str) -> TestProgram {
        let header = text.lines().next().unwrap_or("");
        let header = header
            .strip_prefix("/* mbhybrid-test:")
            .and_then(|h| h.strip_suffix("*/"))
            .unwrap_or_else(|| {
                panic!("{source}: the first line must be `/* mbhybrid-test: np=N exit=S */`")
            });
        let mut np = None;
        let mut exit = None;
        let mut interleavings = None;
        let mut options = Vec::new();
        let mut cflags = Vec::new();
        for word in header.split_whitespace() {
            match word.split_once('=') {
                Some(("np", v)) => np = v.parse().ok(),
                Some(("exit", v)) => exit = v.parse().ok(),
                Some(("interleavings", v)) => interleavings = v.parse().ok(),
                Some(("options", v)) => options.extend(v.split(',').map(str::to_string)),
                Some(("cflags", v)) => cflags.extend(v.split(',').map(str::to_string)),
                _ => panic!("{source}: unknown header word `{word}`"),
            }
        }
        let mut expected = Vec::new();
        for (i, line) in text.lines().enumerate() {
            let Some((_, rest)) = line.split_once("// expect:") else {
                continue;
            };
            let mut words = rest.split_whitespace();
            let kind = words
                .next()
                .unwrap_or_else(|| panic!("{source}:{}: `expect:` needs a kind", i + 1));
            let mut ranks = Vec::new();
            for word in words {
                match word.split_once('=') {
                    Some(("rank", v)) => ranks.push(
                        v.parse()
                            .unwrap_or_else(|_| panic!("{source}:{}: bad rank `{v}`", i + 1)),
                    ),
                    _ => panic!("{source}:{}: unknown expectation word `{word}`", i + 1),
                }
            }
            assert!(
                !ranks.is_empty(),
                "{source}:{}: `expect:` needs rank=R",
                i + 1
            );
            for rank in ranks {
                expected.push(ExpectedFinding {
                    kind: kind.to_string(),
                    line: i as u32 + 1,
                    rank,
                });
            }
        }
        TestProgram {
            source: PathBuf::from(source),
            np: np.unwrap_or_else(|| panic!("{source}: header lacks np=N")),
            exit: exit.unwrap_or_else(|| panic!("{source}: header lacks exit=S")),
            interleavings,
            options,
            cflags,
            expected,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn expectations_are_read_from_the_program() {
        let text =
            "/* mbhybrid-test: np=3 exit=1 */\nint x;\n  assert(x); // expect: assertion rank=1\n";
        let p = TestProgram::parse("a.c", text);
        assert_eq!((p.np, p.exit), (3, 1));
        assert_eq!(
            p.expected,
            vec![ExpectedFinding {
                kind: "assertion".into(),
                line: 3,
                rank: 1
            }]
        );
    }

    #[test]
    #[should_panic(expected = "first line")]
    fn a_program_without_header_is_refused() {
        TestProgram::parse("a.c", "int main() {}\n");
    }
}
