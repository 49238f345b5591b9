//! Issue 19: `buffer-reuse` of any nonblocking send or receive, found by
//! the load and store checks `build` inserts (seed 000 §2.3.6.3, Fig 2.9;
//! SCENARIOS.md E9).

use crate::util::{build_with, check_program, describe, line_of, verify_json};
use mbh_tests::json::Finding;
use mbh_tests::{bin_dir, mbhybrid, workspace_root, TestProgram};
use std::path::Path;
use std::process::Command;

/// A finding's primary (the access) and secondary (the call) lines.
type Lines = (Vec<u32>, Vec<u32>);

/// The one finding's primary (the access) and secondary (the call) lines.
fn lines(finding: &Finding) -> Lines {
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
    assert!(
        report.limits.iter().any(|w| w.contains("a library")),
        "the report names what the check cannot see: {:?}",
        report.limits
    );
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

/// An MPI call's own buffer against the pending operations' (the
/// handshake of miniFE's `make_local_matrix`): a send from the buffer of a
/// pending receive is found at the send, on both ranks, with the
/// receive's line; its twin, sending from other memory, is clean.
#[test]
fn u8_a_send_from_a_pending_receives_buffer_is_found_at_the_send() {
    let source = "tests/programs/u8_send_from_pending_recv.c";
    let report = check_program(source);
    assert_eq!(report.findings.len(), 1, "{:?}", report.findings);
    let finding = &report.findings[0];
    assert_eq!(
        finding.message,
        "rank 0 sent from the buffer of `MPI_Irecv` before the receive completed"
    );
    assert_eq!(finding.ranks, [0, 1]);
    let send = line_of(source, "MPI_Send(&tmp[0]");
    let recv = line_of(source, "MPI_Irecv(&tmp[0]");
    // Rank 0's send is the primary place; each rank's receive and rank
    // 1's send come after it.
    let (primary, secondary) = lines(finding);
    assert_eq!(primary, [send], "{finding:?}");
    let mut places: Vec<(i32, u32)> = finding.locations.iter().map(|l| (l.rank, l.line)).collect();
    places.sort_unstable();
    assert_eq!(
        places,
        [(0, recv), (0, send), (1, recv), (1, send)],
        "{finding:?}"
    );
    assert!(secondary.contains(&recv), "{finding:?}");
}

#[test]
fn u9_a_send_from_memory_no_operation_owns_is_clean() {
    check_program("tests/programs/u9_send_from_other_buffer.c");
}

/// A strided receive pending while a strided send from the same array
/// starts: their ranges overlap, their bytes do not. Clean.
#[test]
fn u11_strided_buffers_that_share_no_byte_are_not_reported() {
    check_program("tests/programs/u11_strided_halo_clean.c");
}

/// A receive into the buffer of the rank's own pending send: found at the
/// receive, with the send's line.
/// Built with `-O2`, a loop that cannot start an MPI operation runs an
/// unchecked copy while nothing is pending (`instrument/src/versioning.rs`):
/// the loop before the send takes it, the loop entered while the send is
/// pending takes the checked one and its write is found.
#[test]
fn u12_a_loop_entered_while_a_send_is_pending_runs_checked() {
    check_program("tests/programs/u12_loop_entered_while_pending.c");
}

/// Built with `-O2`, a loop whose callee starts the send that a later
/// iteration writes into never runs unchecked.
#[test]
fn u13_a_loop_that_starts_a_send_through_a_call_runs_checked() {
    check_program("tests/programs/u13_loop_starts_send_in_callee.c");
}

#[test]
fn u10_a_receive_into_a_pending_sends_buffer_is_found_at_the_receive() {
    let source = "tests/programs/u10_recv_into_pending_send.c";
    let report = check_program(source);
    assert_eq!(report.findings.len(), 1, "{:?}", report.findings);
    let finding = &report.findings[0];
    assert_eq!(
        finding.message,
        "rank 0 received into the buffer of `MPI_Isend` before the send completed"
    );
    let recv = line_of(source, "MPI_Recv(data");
    let send = line_of(source, "MPI_Isend(data");
    assert_eq!(lines(finding), (vec![recv], vec![send]), "{finding:?}");
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

/// A send of a derived datatype (every other element) written inside its
/// extent, and a receive made by `MPI_Imrecv` read before its wait: each
/// at the access's line, with its call's.
#[test]
fn u4_derived_type_send_and_imrecv_buffers_used_early_are_found() {
    let source = "tests/programs/u4_derived_and_mrecv.c";
    let report = check_program(source);
    let mut found: Vec<(String, Lines)> = report
        .findings
        .iter()
        .map(|f| (f.message.clone(), lines(f)))
        .collect();
    found.sort();
    let write = line_of(source, "grid[2 * 10] = -1.0;");
    let send = line_of(source, "MPI_Isend(grid");
    let read = line_of(source, "double early = column[N - 1];");
    let recv = line_of(source, "MPI_Imrecv(column");
    assert_eq!(
        found,
        [
            (
                "rank 0 wrote to the buffer of `MPI_Isend` before the send completed".to_string(),
                (vec![write], vec![send])
            ),
            (
                "rank 1 read the buffer of `MPI_Imrecv` before the receive completed".to_string(),
                (vec![read], vec![recv])
            ),
        ]
    );
}

/// `build --no-access-checks` leaves the checks out: the 64 KiB send
/// written early goes unseen, and the report says why rather than
/// reading as clean.
#[test]
fn built_without_access_checks_the_report_says_what_goes_unseen() {
    let program = TestProgram::load("tests/programs/u1_send_written.c");
    let _lock = mbh_tests::mpi_lock();
    let dir = tempfile::tempdir().unwrap();
    let exe = build_with(&program.source, dir.path(), &["--no-access-checks"]);
    assert_eq!(access_checks_of(&exe), Some(false));
    let (status, report, out) = verify_json(&exe, program.np, dir.path(), &[]);
    assert_eq!(status, 0, "{}", describe(&out));
    assert!(report.findings.is_empty(), "{:?}", report.findings);
    assert!(
        report
            .limits
            .iter()
            .any(|w| w.contains("access checks off")),
        "{:?}",
        report.limits
    );
}

/// `mbhybrid-cc` takes the switch from `MBHYBRID_ACCESS_CHECKS`, as a
/// build system's compiler cannot take a flag of ours, and refuses a
/// value it does not know, saying which it knows.
#[test]
fn the_compiler_driver_takes_access_checks_off_from_the_environment() {
    mbhybrid();
    let cc = bin_dir().join("mbhybrid-cc");
    let dir = tempfile::tempdir().unwrap();
    let source = workspace_root().join("tests/programs/u1_send_written.c");
    let exe = dir.path().join("u1");
    let cc_with = |value: &str| {
        Command::new(&cc)
            .args(["-g", "-o"])
            .arg(&exe)
            .arg(&source)
            .env("MBHYBRID_ACCESS_CHECKS", value)
            .env_remove("LD_LIBRARY_PATH")
            .output()
            .unwrap()
    };
    let out = cc_with("off");
    assert!(out.status.success(), "{}", describe(&out));
    assert_eq!(access_checks_of(&exe), Some(false));
    let out = cc_with("on");
    assert!(out.status.success(), "{}", describe(&out));
    assert_eq!(access_checks_of(&exe), Some(true));
    let out = cc_with("sometimes");
    assert_eq!(out.status.code(), Some(2), "{}", describe(&out));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains(
            "MBHYBRID_ACCESS_CHECKS=\"sometimes\" is not understood: set it to `on` or `off`"
        ),
        "{stderr}"
    );
}

/// The site table's `access_checks` of executable `exe`.
fn access_checks_of(exe: &Path) -> Option<bool> {
    let mut name = exe.as_os_str().to_owned();
    name.push(".mbh.json");
    let text = std::fs::read_to_string(&name).ok()?;
    let table: serde_json::Value = serde_json::from_str(&text).ok()?;
    table["access_checks"].as_bool()
}

/// Issue 38 §4: the buffers of nonblocking collectives are watched as
/// point-to-point buffers are: `MPI_Iallreduce`'s send buffer written and
/// receive buffer read, the root's receive buffer of `MPI_Igather` (its
/// last rank's block: the extent is `size * recvcount`), a non-root's
/// buffer of `MPI_Ibcast` read, a block of `MPI_Igatherv` placed by its
/// displacement. Each at the access, with the collective's line; what a
/// rank's call does not hand MPI is not reported (the harness checks that
/// no other finding is made).
#[test]
fn u5_nonblocking_collective_buffers_used_early_are_found() {
    let source = "tests/programs/u5_icoll_reuse.c";
    let report = check_program(source);
    let mut found: Vec<(String, Lines)> = report
        .findings
        .iter()
        .map(|f| (f.message.clone(), lines(f)))
        .collect();
    found.sort();
    let at = |marker: &str| line_of(source, marker);
    let finding = |rank: u32, verb: &str, call: &str, access: &str| {
        (
            format!("rank {rank} {verb} the buffer of `{call}` before the collective completed"),
            (vec![at(access)], vec![at(&format!("{call}(&in"))]),
        )
    };
    let ibcast = |rank: u32, access: &str| {
        (
            format!("rank {rank} read the buffer of `MPI_Ibcast` before the collective completed"),
            (vec![at(access)], vec![at("MPI_Ibcast(&b")]),
        )
    };
    let mut expected = vec![
        finding(0, "wrote to", "MPI_Iallreduce", "in = 5;"),
        finding(0, "wrote to", "MPI_Igatherv", "all[8] = -2;"),
        finding(1, "read", "MPI_Iallreduce", "printf(\"early sum"),
        ibcast(1, "if (rank == 1) seen += b;"),
        finding(2, "wrote to", "MPI_Igather", "all[2] = -1;"),
    ];
    expected.sort();
    assert_eq!(found, expected);
}

/// Nonblocking collectives' buffers touched after their `Wait`/`Test`,
/// or not the rank's part in the call (a non-root's send buffer of
/// `MPI_Iscatter`, receive buffer of `MPI_Ireduce`), send buffers read,
/// `MPI_IN_PLACE`: silent.
#[test]
fn u6_nonblocking_collective_buffers_used_in_turn_are_not_reported() {
    check_program("tests/programs/u6_icoll_clean.c");
}

/// Every other form of nonblocking collective, each with the extent its
/// arguments give (`tests/programs/u7_icoll_forms.c`): one finding per
/// access marked in the source, at its line with its collective's; the
/// accesses just past each extent, or on a rank that does not hand the
/// buffer over, are not reported.
#[test]
fn u7_each_nonblocking_collective_form_is_watched_over_its_extent() {
    let source = "tests/programs/u7_icoll_forms.c";
    let report = check_program(source);
    let mut found: Vec<(i32, Lines)> = report
        .findings
        .iter()
        .map(|f| (f.ranks[0], lines(f)))
        .collect();
    found.sort();
    let at = |marker: &str| line_of(source, marker);
    let mut expected = vec![
        (2, (vec![at("x += out[0];")], vec![at("MPI_Iscan(")])),
        (1, (vec![at("v = 3;")], vec![at("MPI_Iexscan(")])),
        (
            0,
            (
                vec![at("in[2] = 9;")],
                vec![at("MPI_Ireduce_scatter_block(")],
            ),
        ),
        (
            1,
            (
                vec![at("if (rank == 1) x += out[1];")],
                vec![at("MPI_Ireduce_scatter(big")],
            ),
        ),
        (
            0,
            (
                vec![at("if (rank == 0) big[5] = 1;")],
                vec![at("MPI_Iscatterv(")],
            ),
        ),
        (2, (vec![at("x += big[4];")], vec![at("MPI_Iallgatherv(")])),
        (1, (vec![at("in[2] = 0;")], vec![at("MPI_Ialltoall(")])),
        (
            0,
            (
                vec![at("if (rank == 0) x += big[4];")],
                vec![at("MPI_Ialltoallw(")],
            ),
        ),
    ];
    expected.sort();
    assert_eq!(found, expected, "{:?}", report.findings);
}
