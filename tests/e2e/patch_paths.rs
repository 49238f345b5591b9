//! `audit-barriers --patch` run away from the directory the program was
//! built in (issue 37, item 6: CoMD compiles in `src-mpi/`, links into
//! `bin/`, and is run from `bin/`): the sources are found from the build
//! directory the site table records, and the patch applies with the `patch`
//! command the output gives, in the directory it names.

use crate::util::describe;
use mbh_tests::{bin_dir, mbhybrid, run_mbhybrid};
use std::path::Path;
use std::process::Command;

const APP: &str = r#"#include <mpi.h>
#include <stdio.h>

static void sync_all(void) {
  MPI_Barrier(MPI_COMM_WORLD);
}

int main(int argc, char **argv) {
  int rank, sum = 0;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  sync_all();
  MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  printf("sum %d\n", sum);
  MPI_Finalize();
  return 0;
}
"#;

/// The directory and command `audit-barriers` says to apply its patch
/// with: "apply it in DIR with `patch -p1 < FILE`".
fn apply_instruction(stderr: &str) -> (String, String) {
    let line = stderr
        .lines()
        .find(|l| l.contains("apply it in"))
        .unwrap_or_else(|| panic!("no instruction to apply the patch\n{stderr}"));
    let rest = line.split_once("apply it in ").unwrap().1;
    let (dir, rest) = rest.split_once(" with `").unwrap();
    let command = rest.split_once('`').unwrap().0;
    (dir.to_owned(), command.to_owned())
}

#[test]
fn audit_from_bin_writes_a_patch_that_applies_from_the_project_root() {
    mbhybrid();
    let tmp = tempfile::tempdir().unwrap();
    let project = tmp.path();
    let (src, bin) = (project.join("src"), project.join("bin"));
    std::fs::create_dir_all(&src).unwrap();
    std::fs::create_dir_all(&bin).unwrap();
    std::fs::write(src.join("app.c"), APP).unwrap();
    let built = Command::new(bin_dir().join("mbhybrid-cc"))
        .args(["-g", "-O1", "-o", "../bin/app", "app.c"])
        .current_dir(&src)
        .env_remove("LD_LIBRARY_PATH")
        .output()
        .unwrap();
    assert!(built.status.success(), "{}", describe(&built));

    let _lock = mbh_tests::mpi_lock();
    let runs = project.join("runs");
    let out = run_mbhybrid(
        &bin,
        &[
            "audit-barriers",
            "-n",
            "2",
            "--run-dir",
            runs.to_str().unwrap(),
            "--patch",
            "drop.patch",
            "./app",
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", describe(&out));
    let patch = std::fs::read_to_string(bin.join("drop.patch")).unwrap();
    assert!(
        patch.starts_with("--- a/src/app.c\n+++ b/src/app.c\n"),
        "{patch}"
    );
    assert!(patch.contains("-  MPI_Barrier(MPI_COMM_WORLD);"), "{patch}");

    let stderr = String::from_utf8_lossy(&out.stderr);
    let (dir, command) = apply_instruction(&stderr);
    assert_eq!(
        Path::new(&dir).canonicalize().unwrap(),
        project.canonicalize().unwrap(),
        "{stderr}"
    );
    assert!(command.starts_with("patch -p1 < "), "{command}");
    let applied = Command::new("sh")
        .arg("-c")
        .arg(command.replace("patch -p1", "patch -p1 --dry-run"))
        .current_dir(&dir)
        .output()
        .unwrap();
    assert!(applied.status.success(), "{}", describe(&applied));
}
