//! The folder of MPI wrapper names for the compiler drivers (issue 37,
//! "Also seen"): a Makefile that calls `$(MPICC)` and `$(MPICXX)` itself
//! ignores `CC=mbhybrid-cc`; with the folder `mbhybrid wrappers` prints
//! first on the `PATH`, it builds through the drivers, which still find the
//! MPI's own wrappers for its flags.

use crate::util::{describe, verify_json};
use mbh_tests::{mbhybrid, mpicc, run_mbhybrid};
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const HELLO: &str = r#"#include <mpi.h>
#include <stdio.h>

int main(int argc, char **argv) {
  int rank, sum = 0;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  printf("rank %d sum %d\n", rank, sum);
  MPI_Finalize();
  return 0;
}
"#;

/// A Makefile that names the MPI wrappers itself, as many HPC codes do.
const MAKEFILE: &str = "MPICC = mpicc\nMPICXX = mpicxx\n\
all: hello hello_cxx\n\
hello: hello.c\n\t$(MPICC) -O2 -o $@ hello.c\n\
hello_cxx: hello.cpp\n\t$(MPICXX) -O2 -o $@ hello.cpp\n";

/// What `mbhybrid wrappers` prints: the folder.
pub fn wrappers_folder() -> PathBuf {
    let out = run_mbhybrid(Path::new("."), &["wrappers"]);
    assert!(out.status.success(), "{}", describe(&out));
    let text = String::from_utf8(out.stdout).unwrap();
    PathBuf::from(text.trim_end_matches('\n'))
}

/// The `PATH` with `first` before it.
pub fn path_with_first(first: &Path) -> OsString {
    let mut dirs = vec![first.to_owned()];
    dirs.extend(std::env::split_paths(
        &std::env::var_os("PATH").unwrap_or_default(),
    ));
    std::env::join_paths(dirs).unwrap()
}

fn run_with_path(program: &str, args: &[&str], dir: &Path, path: &OsString) -> Output {
    Command::new(program)
        .args(args)
        .current_dir(dir)
        .env("PATH", path)
        .env_remove("LD_LIBRARY_PATH")
        .output()
        .unwrap_or_else(|e| panic!("cannot run {program}: {e}"))
}

#[test]
fn a_makefile_calling_mpicc_builds_through_the_drivers_from_the_folder() {
    mbhybrid();
    let folder = wrappers_folder();
    for name in ["mpicc", "mpicxx", "mpic++", "mpiCC"] {
        assert!(
            folder.join(name).exists(),
            "{} has no {name}",
            folder.display()
        );
    }
    let path = path_with_first(&folder);
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    std::fs::write(dir.join("hello.c"), HELLO).unwrap();
    std::fs::write(dir.join("hello.cpp"), HELLO).unwrap();
    std::fs::write(dir.join("Makefile"), MAKEFILE).unwrap();
    let made = run_with_path("make", &[], dir, &path);
    assert!(made.status.success(), "{}", describe(&made));
    assert!(made.stderr.is_empty(), "{}", describe(&made));

    let _lock = mbh_tests::mpi_lock();
    for exe in ["hello", "hello_cxx"] {
        assert!(
            dir.join(format!("{exe}.mbh.json")).is_file(),
            "{exe} was not built by a driver (no site table)"
        );
        let (status, report, out) = verify_json(&dir.join(exe), 2, dir, &[]);
        assert_eq!(status, 0, "{}", describe(&out));
        assert!(
            report.complete && report.findings.is_empty(),
            "{}",
            describe(&out)
        );
    }
}

/// The drivers under MPI's names answer MPICH's queries with the real
/// MPI's flags: they skip their own links on the `PATH`, never ask
/// themselves.
#[test]
fn the_drivers_in_the_folder_find_the_real_mpi_flags() {
    mbhybrid();
    let folder = wrappers_folder();
    let path = path_with_first(&folder);
    let dir = Path::new(".");
    let query = match mbh_tests::mpi_under_test() {
        "openmpi" => "--showme:compile",
        _ => "-show-compile-info",
    };
    let real = run_with_path(mpicc(), &[query], dir, &path);
    assert!(real.status.success(), "{}", describe(&real));
    let ours = run_with_path("mpicc", &["-show-compile-info"], dir, &path);
    assert!(ours.status.success(), "{}", describe(&ours));
    let words = |o: &Output| -> Vec<String> {
        String::from_utf8_lossy(&o.stdout)
            .split_whitespace()
            .map(str::to_owned)
            .collect()
    };
    assert_eq!(words(&ours), words(&real));
}

/// A copy of a driver under an MPI wrapper's name (not a link, so not
/// recognisable as mbhybrid's) stops with an error instead of asking
/// itself for its flags forever.
#[test]
fn a_driver_copied_under_an_mpi_name_stops_instead_of_recursing() {
    mbhybrid();
    let bin = mbh_tests::bin_dir();
    let tmp = tempfile::tempdir().unwrap();
    // Under every name the drivers look for (Debian's suffixed ones for
    // the MPI `MBHYBRID_MPI` names).
    for name in ["mpicc", "mpicc.mpich", "mpicc.openmpi"] {
        let impostor = tmp.path().join(name);
        std::fs::write(
            &impostor,
            format!(
                "#!/bin/sh\nexec {} \"$@\"\n",
                bin.join("mbhybrid-cc").display()
            ),
        )
        .unwrap();
        let status = Command::new("chmod")
            .args(["+x", impostor.to_str().unwrap()])
            .status()
            .unwrap();
        assert!(status.success());
    }
    std::fs::write(tmp.path().join("hello.c"), HELLO).unwrap();
    let path = path_with_first(tmp.path());
    let out = run_with_path("mpicc", &["-c", "hello.c"], tmp.path(), &path);
    assert!(!out.status.success(), "{}", describe(&out));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("mbhybrid wrappers"), "{}", describe(&out));
}
