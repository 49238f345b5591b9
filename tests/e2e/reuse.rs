//! Issue 19: `buffer-reuse` of any nonblocking send or receive, found by
//! the load and store checks `build` inserts (seed 000 §2.3.6.3, Fig 2.9;
//! SCENARIOS.md E9).

use crate::util::{check_program, line_of};
use mbh_tests::json::Finding;

/// The one finding's primary (the access) and secondary (the call) lines.
fn lines(finding: &Finding) -> (Vec<u32>, Vec<u32>) {
    let of = |role: &str| {
        finding
            .locations
            .iter()
            .filter(|l| l.role == role)
            .map(|l| l.line)
            .collect()
    };
    (of("primary"), of("secondary"))
}

/// A 64 KiB send buffer (beyond the packed comparison) written while its
/// `MPI_Isend` is pending: reported at the write, with the send's line.
#[test]
fn u1_a_send_buffer_written_before_its_wait_is_found_at_the_write() {
    let source = "tests/programs/u1_send_written.c";
    let report = check_program(source);
    assert_eq!(report.findings.len(), 1, "{:?}", report.findings);
    let finding = &report.findings[0];
    assert_eq!(finding.code, "MBH0013");
    assert_eq!(
        finding.message,
        "rank 0 wrote to the buffer of `MPI_Isend` before the send completed"
    );
    let write = line_of(source, "big[N / 2] = -1.0;");
    let send = line_of(source, "MPI_Isend(big");
    assert_eq!(lines(finding), (vec![write], vec![send]), "{finding:?}");
    let labels: Vec<&str> = finding.locations.iter().map(|l| l.label.as_str()).collect();
    assert_eq!(labels, ["(2) written here", "(1) `MPI_Isend` started here"]);
    assert_eq!(finding.locations[0].call, None, "the access is not a call");
}

/// A receive buffer read before its `MPI_Wait`: reported at the read.
#[test]
fn u2_a_receive_buffer_read_before_its_wait_is_found_at_the_read() {
    let source = "tests/programs/u2_recv_read.c";
    let report = check_program(source);
    assert_eq!(report.findings.len(), 1, "{:?}", report.findings);
    let finding = &report.findings[0];
    assert_eq!(
        finding.message,
        "rank 1 read the buffer of `MPI_Irecv` before the receive completed"
    );
    let read = line_of(source, "first = buf[0];");
    let recv = line_of(source, "MPI_Irecv(buf");
    assert_eq!(lines(finding), (vec![read], vec![recv]), "{finding:?}");
}

/// Buffers touched only after their completion, another array touched
/// while requests are pending, a send buffer read while pending: silent
/// (the harness checks that there is no finding).
#[test]
fn u3_touching_other_memory_or_after_completion_is_not_reported() {
    check_program("tests/programs/u3_reuse_clean.c");
}

/// The packed send of `buffer_reuse.c` is found by both the access check
/// and the comparison at its wait: reported once, at the write.
#[test]
fn a_packed_send_written_early_is_reported_once_at_the_write() {
    let source = "tests/programs/buffer_reuse.c";
    let report = check_program(source);
    assert_eq!(report.findings.len(), 1, "{:?}", report.findings);
    let write = line_of(source, "buf[0] = 5;");
    assert_eq!(lines(&report.findings[0]), (vec![write], vec![write - 1]));
}
