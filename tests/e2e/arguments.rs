//! Issue 18: buffer arguments checked against their datatype and their
//! object's size, statically by `build` and at run time for heap blocks.

use crate::util::{build, check_program, describe, line_of, verify_json_with_args};
use mbh_tests::TestProgram;

/// An `int` sent and received as `MPI_FLOAT` is reported on both ranks at
/// the two calls, with the declaration; the correct calls beside them
/// (`void *` casts, `MPI_BYTE` views, a struct with its derived datatype,
/// `MPI_IN_PLACE`) are silent, which the harness checks by the absence of
/// any other finding.
#[test]
fn a1_a_buffer_of_another_type_than_its_datatype_is_found() {
    let report = check_program("tests/programs/a1_buffer_types.c");
    assert_eq!(report.findings.len(), 2, "{:?}", report.findings);
    for finding in &report.findings {
        assert_eq!(finding.kind, "buffer-type");
        assert!(
            finding
                .message
                .contains("`count` is an `int` (4 bytes, integer) but the datatype is `MPI_FLOAT`"),
            "{}",
            finding.message
        );
        assert!(
            finding
                .locations
                .iter()
                .any(|l| l.line == 17 && l.label.contains("declared")),
            "the declaration is the second location: {:?}",
            finding.locations
        );
    }
}

/// Receives larger than their array and their constant `malloc` block are
/// found statically, although the messages that arrive fit; the heap
/// block's runtime check does not report the same call twice.
#[test]
fn a2_counts_beyond_the_buffers_object_are_found() {
    let report = check_program("tests/programs/a2_buffer_overflow.c");
    let messages: Vec<&str> = report.findings.iter().map(|f| f.message.as_str()).collect();
    assert_eq!(
        messages,
        [
            "`MPI_Recv` receive buffer: `small` holds 16 bytes but 8 elements of `MPI_INT` need 32",
            "`MPI_Irecv` receive buffer: `block` points to 32 bytes but 8 elements of `MPI_DOUBLE` need 64",
        ]
    );
}

/// Many correct buffer arguments: no finding.
#[test]
fn a3_correct_buffers_are_not_reported() {
    check_program("tests/programs/a3_buffers_clean.c");
}

/// A receive whose count reaches past its `malloc`ed block is found though
/// the message that arrives is short, and a derived datatype by its
/// extent; the correct uses of calloc'ed, realloc'ed and re-made blocks
/// beside them stay silent (the harness checks there is no other finding).
#[test]
fn a4_heap_overflows_are_found_before_the_receive() {
    let report = check_program("tests/programs/a4_heap_overflow.c");
    assert_eq!(report.findings.len(), 2, "{:?}", report.findings);
    assert!(
        report.findings[0].message.contains(
            "the heap block holds 4000 bytes but 2000 elements of the datatype need 8000"
        ),
        "{}",
        report.findings[0].message
    );
}

/// Issue 38 item 5: an in-place `MPI_Allreduce` after many frees is
/// silent. On Open MPI, whose `MPI_IN_PLACE` is the pointer 1, the heap
/// table once matched it to a freed slot and reported a false overflow.
#[test]
fn a6_in_place_buffers_are_never_heap_blocks() {
    let report = check_program("tests/programs/heap/in_place_after_frees.c");
    assert!(report.findings.is_empty(), "{:?}", report.findings);
}

/// A derived datatype against a stack array: the static analysis gives the
/// runtime the array's room, and the runtime, which knows the extent,
/// finds the receive that cannot fit, with the array's declaration.
#[test]
fn a5_a_derived_datatype_is_checked_against_the_arrays_room() {
    let report = check_program("tests/programs/a5_derived_type_room.c");
    assert_eq!(report.findings.len(), 1, "{:?}", report.findings);
    let finding = &report.findings[0];
    assert!(
        finding
            .message
            .contains("`p` holds 3200 bytes but 200 elements of the datatype need 6400"),
        "{}",
        finding.message
    );
    assert!(
        finding
            .locations
            .iter()
            .any(|l| l.line == 18 && l.label.contains("`p` is declared here")),
        "{:?}",
        finding.locations
    );
}

/// Issue 38: a NULL counts, displacements or datatypes array where the
/// rank's call reads it (`tests/programs/a7_null_counts_refused.c FORM`):
/// one `invalid-argument` at the call naming the array, on each rank that
/// passed it, and no crash (MPICH reads such arrays unchecked: the call
/// never reaches it).
#[test]
fn a7_a_null_array_the_call_reads_is_an_invalid_argument_not_a_crash() {
    let source = "tests/programs/a7_null_counts_refused.c";
    let program = TestProgram::load(source);
    let _lock = mbh_tests::mpi_lock();
    let dir = tempfile::tempdir().unwrap();
    let exe = build(&program.source, dir.path());
    // The call, the array, and the ranks that pass it NULL (of 3).
    let cases: [(&str, &str, &[i32]); 7] = [
        ("ireduce_scatter", "recvcounts", &[0, 1, 2]),
        ("reduce_scatter", "recvcounts", &[0, 1, 2]),
        ("gatherv", "recvcounts", &[1]),
        ("iscatterv", "displs", &[0]),
        ("allgatherv", "recvcounts", &[0, 1, 2]),
        ("ialltoallv", "rdispls", &[0, 1, 2]),
        ("alltoallw", "sendtypes", &[0, 1, 2]),
    ];
    for (form, array, ranks) in cases {
        let (status, report, out) =
            verify_json_with_args(&exe, 3, dir.path(), &["--timeout", "60"], &[form]);
        assert_eq!(status, 1, "{form}\n{}", describe(&out));
        assert_eq!(report.findings.len(), 1, "{form}: {:?}", report.findings);
        let finding = &report.findings[0];
        assert_eq!(finding.kind, "invalid-argument", "{form}: {finding:?}");
        assert!(
            finding
                .message
                .contains(&format!("passed NULL as `{array}`")),
            "{form}: {finding:?}"
        );
        let marker = format!("\"{form}\") == 0) {{");
        let line = line_of(source, &marker) + 1;
        assert!(
            finding.locations.iter().all(|l| l.line == line) && !finding.locations.is_empty(),
            "{form}: at line {line}: {finding:?}"
        );
        // Every rank that refused its call and was not stopped first by
        // another's abort is listed; none other.
        assert!(
            finding.locations.iter().all(|l| ranks.contains(&l.rank)),
            "{form}: ranks {ranks:?}: {finding:?}"
        );
        let ended: Vec<&str> = report.runs[0]
            .ranks
            .iter()
            .map(|r| r.state.as_str())
            .collect();
        assert!(!ended.contains(&"signaled"), "{form}: {ended:?}");
    }
    // Under `MPI_ERRORS_RETURN` the program gets `MPI_ERR_ARG` back and
    // finishes, as with an error MPI returned.
    let (status, report, out) =
        verify_json_with_args(&exe, 3, dir.path(), &["--timeout", "60"], &["returned"]);
    assert_eq!(status, 1, "returned\n{}", describe(&out));
    let kinds: Vec<&str> = report.findings.iter().map(|f| f.kind.as_str()).collect();
    assert_eq!(kinds, ["invalid-argument"], "{:?}", report.findings);
    let run = &report.runs[0];
    assert_eq!(
        run.stdout.matches("gives MPI_ERR_ARG").count(),
        3,
        "{}",
        run.stdout
    );
    assert!(
        run.ranks.iter().all(|r| r.state == "finalized"),
        "{:?}",
        run.ranks
    );
}

/// Issue 38: NULL arrays where MPI ignores them (a non-root's counts of
/// `Gatherv`/`Scatterv`, the send arrays of an in-place
/// `Alltoallv`/`Alltoallw`, blocking and nonblocking; on an
/// intercommunicator, every rank but the one passing `MPI_ROOT`) are
/// correct: no finding, and every rank receives what it should.
#[test]
fn a8_null_arrays_where_mpi_ignores_them_are_silent() {
    let report = check_program("tests/programs/a8_null_counts_where_ignored.c");
    assert!(
        report.runs[0].stdout.matches("every call right").count() == 3,
        "{:?}",
        report.runs[0].stdout
    );
}
