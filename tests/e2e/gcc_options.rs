//! Command lines written for gcc's `mpicc` (issue 37, item 7): gcc's own
//! options (HPCG's `-ftree-vectorizer-verbose=0`) and gcc's optimization
//! levels above 3 (CoMD's `-O5`) build through the drivers, with one
//! warning naming the options dropped and none about the level.

use crate::util::{describe, verify_json};
use mbh_tests::{bin_dir, mbhybrid};
use std::path::Path;
use std::process::{Command, Output};

const RING: &str = r#"#include <mpi.h>
#include <stdio.h>

int main(int argc, char **argv) {
  int rank, size, token = 0;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (rank == 0) {
    token = 7;
    MPI_Send(&token, 1, MPI_INT, 1, 0, MPI_COMM_WORLD);
  } else if (rank == 1) {
    MPI_Recv(&token, 1, MPI_INT, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  }
  printf("rank %d token %d\n", rank, token);
  MPI_Finalize();
  return 0;
}
"#;

/// The options of gcc's that clang 16 refuses, as Makefiles pass them.
const GCC_ONLY: [&str; 2] = ["-ftree-vectorizer-verbose=0", "-fipa-pta"];

fn driver(dir: &Path, name: &str, args: &[&str]) -> Output {
    mbhybrid();
    Command::new(bin_dir().join(name))
        .args(args)
        .current_dir(dir)
        .env_remove("LD_LIBRARY_PATH")
        .output()
        .unwrap_or_else(|e| panic!("cannot run {name}: {e}"))
}

/// The warnings a driver printed: its stderr's lines.
fn stderr_lines(out: &Output) -> Vec<String> {
    String::from_utf8_lossy(&out.stderr)
        .lines()
        .map(str::to_owned)
        .collect()
}

/// One line naming every gcc-only option, and nothing about `-O5`.
fn assert_one_warning_naming_the_options(out: &Output) {
    assert!(out.status.success(), "{}", describe(out));
    let lines = stderr_lines(out);
    assert_eq!(lines.len(), 1, "one warning\n{}", describe(out));
    for option in GCC_ONLY {
        assert!(lines[0].contains(option), "{}", describe(out));
    }
    assert!(lines[0].contains("warning"), "{}", describe(out));
}

#[test]
fn gcc_only_options_and_o5_build_with_one_warning() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    std::fs::write(dir.join("ring.c"), RING).unwrap();
    let mut flags = vec!["-std=c99", "-g", "-O5", "-DDOUBLE"];
    flags.extend(GCC_ONLY);

    let mut compile = flags.clone();
    compile.extend(["-c", "ring.c", "-o", "ring.o"]);
    assert_one_warning_naming_the_options(&driver(dir, "mbhybrid-cc", &compile));

    let mut link = flags.clone();
    link.extend(["ring.o", "-o", "ring", "-lm"]);
    assert_one_warning_naming_the_options(&driver(dir, "mbhybrid-cc", &link));

    // The same options on a compile-and-link line of the C++ driver.
    std::fs::write(dir.join("ring.cpp"), RING).unwrap();
    let mut both: Vec<&str> = flags
        .iter()
        .copied()
        .filter(|f| !f.starts_with("-std") && !f.starts_with("-D"))
        .collect();
    both.extend(["ring.cpp", "-o", "ring_cxx"]);
    assert_one_warning_naming_the_options(&driver(dir, "mbhybrid-c++", &both));

    let _lock = mbh_tests::mpi_lock();
    for exe in ["ring", "ring_cxx"] {
        let (status, report, out) = verify_json(&dir.join(exe), 2, dir, &[]);
        assert_eq!(status, 0, "{}", describe(&out));
        assert!(
            report.complete && report.findings.is_empty(),
            "{}",
            describe(&out)
        );
    }
}

/// Options clang knows stay, even those gcc's Makefiles pass most
/// (`-ffast-math`, `-ftree-vectorize`, `-march=native`): no warning.
#[test]
fn options_clang_knows_are_kept_silently() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    std::fs::write(dir.join("ring.c"), RING).unwrap();
    let out = driver(
        dir,
        "mbhybrid-cc",
        &[
            "-O3",
            "-ffast-math",
            "-ftree-vectorize",
            "-funroll-loops",
            "-c",
            "ring.c",
        ],
    );
    assert!(out.status.success(), "{}", describe(&out));
    assert!(out.stderr.is_empty(), "{}", describe(&out));
    assert!(dir.join("ring.o").is_file());
}

/// gcc's warning options clang does not know, under `-Werror` (where
/// clang's "unknown warning option" would fail the build): dropped with
/// one warning, at the compile and at the link.
#[test]
fn gcc_only_warning_options_build_under_werror() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    std::fs::write(dir.join("ring.c"), RING).unwrap();
    let flags = [
        "-Wall",
        "-Werror",
        "-Wlogical-op",
        "-Wno-maybe-uninitialized",
    ];
    for args in [&["-c", "ring.c"][..], &["ring.o", "-o", "ring"]] {
        let mut line = flags.to_vec();
        line.extend(args);
        let out = driver(dir, "mbhybrid-cc", &line);
        assert!(out.status.success(), "{}", describe(&out));
        let lines = stderr_lines(&out);
        assert_eq!(lines.len(), 1, "one warning\n{}", describe(&out));
        for option in &flags[2..] {
            assert!(lines[0].contains(option), "{}", describe(&out));
        }
        assert!(!lines[0].contains("-Wall"), "{}", describe(&out));
    }
}
