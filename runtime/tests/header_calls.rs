//! Every MPI function of each installed `mpi.h` is in mbhybrid's table of
//! what the runtime does with it (`mbh_trace::support`, issue 38): a new
//! MPI that declares a function the table lacks fails here, so nobody
//! forgets to decide whether the runtime models it. Both MPIs mbhybrid
//! supports are read (scripts/install-deps.sh installs both).

use mbh_trace::support::{declared_functions, support};
use std::process::Command;

/// The functions `mpicc` (a wrapper name) finds in its `mpi.h`.
fn declared_by(mpicc: &str) -> Vec<String> {
    let dir = tempfile::tempdir().expect("a temporary folder");
    let source = dir.path().join("header.c");
    std::fs::write(&source, "#include <mpi.h>\n").expect("write header.c");
    let out = Command::new(mpicc)
        .arg("-E")
        .arg(&source)
        .output()
        .unwrap_or_else(|e| panic!("{mpicc} (scripts/install-deps.sh installs it): {e}"));
    assert!(
        out.status.success(),
        "{mpicc} -E failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    declared_functions(&String::from_utf8_lossy(&out.stdout))
        .into_iter()
        .collect()
}

fn unclassified(functions: &[String]) -> Vec<&str> {
    functions
        .iter()
        .map(String::as_str)
        .filter(|name| support(name).is_none())
        .collect()
}

#[test]
fn every_function_of_mpich_mpi_h_is_classified() {
    let functions = declared_by("mpicc.mpich");
    assert!(functions.len() > 500, "{} functions read", functions.len());
    assert!(functions.iter().any(|f| f == "MPI_Put"));
    assert_eq!(unclassified(&functions), Vec::<&str>::new());
}

#[test]
fn every_function_of_open_mpi_mpi_h_is_classified() {
    let functions = declared_by("mpicc.openmpi");
    assert!(functions.len() > 300, "{} functions read", functions.len());
    assert!(functions.iter().any(|f| f == "MPI_Win_fence"));
    assert_eq!(unclassified(&functions), Vec::<&str>::new());
}
