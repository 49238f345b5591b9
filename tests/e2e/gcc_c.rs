//! Issue 17, item 2: C that gcc 12's `mpicc` builds is built by `mbhybrid
//! build` too (clang 16 refuses it by default), with clang's warnings on
//! standard error, and a user's `-Werror` is still obeyed.

use crate::util::{check_program, describe};
use mbh_tests::{run_mbhybrid, workspace_root};
use std::process::Command;

const OLD_STYLE: &str = "tests/programs/gcc_c/old_style.c";

/// `mbhybrid build -o DIR/old_style OLD_STYLE [-- FLAGS]`.
fn build_old_style(dir: &std::path::Path, flags: &[&str]) -> std::process::Output {
    let exe = dir.join("old_style");
    let mut args = vec!["build", "-o", exe.to_str().unwrap(), OLD_STYLE];
    if !flags.is_empty() {
        args.push("--");
        args.extend_from_slice(flags);
    }
    run_mbhybrid(&workspace_root(), &args)
}

#[test]
fn issue_17_old_c_that_mpicc_builds_is_built_with_clangs_warnings() {
    let dir = tempfile::tempdir().unwrap();
    // gcc (through the installed mpicc) takes the program as it is: what
    // mbhybrid must take too.
    let gcc = Command::new("mpicc")
        .arg("-o")
        .arg(dir.path().join("with_mpicc"))
        .arg(OLD_STYLE)
        .current_dir(workspace_root())
        .output()
        .expect("mpicc runs (scripts/install-deps.sh)");
    assert!(gcc.status.success(), "mpicc refused it\n{}", describe(&gcc));

    let out = build_old_style(dir.path(), &[]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{}", describe(&out));
    // Each refusal of clang 16 is now a warning, shown as clang prints it.
    for warning in [
        "warning: call to undeclared function 'time'",
        "warning: call to undeclared library function 'memset'",
        "with an expression of type 'void *' [-Wint-conversion]",
        "defaults to 'int'; ISO C99 and later do not support implicit int [-Wimplicit-int]",
        "warning: non-void function 'report' should return a value [-Wreturn-type]",
        "[-Wincompatible-function-pointer-types]",
    ] {
        assert!(stderr.contains(warning), "no `{warning}` in\n{stderr}");
    }
    assert!(!stderr.contains("error:"), "{stderr}");
}

/// The program runs as gcc would have built it, and its MPI bug (an
/// assertion reachable only when rank 0's wildcard receive takes rank 2's
/// message) is reported at its line.
#[test]
fn issue_17_old_c_is_verified() {
    let report = check_program(OLD_STYLE);
    assert_eq!(report.findings.len(), 1, "{:?}", report.findings);
}

/// The user's own `-Werror` and `-Werror=GROUP` still make errors of what
/// mbhybrid downgrades, as they do under gcc: `-Werror` every group,
/// `-Werror=int-conversion` that one only.
#[test]
fn issue_17_a_users_werror_still_refuses_old_c() {
    let dir = tempfile::tempdir().unwrap();
    let out = build_old_style(dir.path(), &["-Werror"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{}", describe(&out));
    assert!(
        stderr.contains("error: call to undeclared function 'time'"),
        "{stderr}"
    );

    let out = build_old_style(dir.path(), &["-Werror=int-conversion"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{}", describe(&out));
    assert!(
        stderr.contains("error: incompatible pointer to integer conversion"),
        "{stderr}"
    );
    assert!(
        stderr.contains("warning: call to undeclared function 'time'"),
        "only int-conversion is an error again\n{stderr}"
    );
}
