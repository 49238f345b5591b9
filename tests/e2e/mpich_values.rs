//! Programs that depend on MPICH's own values of MPI's constants. Run on
//! MPICH only (scripts/test.sh leaves this module out of the Open MPI
//! run): their numeric constants mean something else there.

use crate::util::check_program;

/// Issue 18: `MPI_ANY_TAG` and `MPI_PROC_NULL` written as their numeric
/// values (-1) are not errors: the run is clean and the receive with tag
/// -1 takes the message with tag 42.
#[test]
fn numeric_any_tag_and_proc_null_are_not_errors() {
    let report = check_program("tests/programs/mpich/numeric_constants.c");
    let stdout: String = report.runs.iter().map(|r| r.stdout.as_str()).collect();
    assert!(stdout.contains("got 7 with tag 42"), "{stdout}");
}
