//! Issue 18: buffer arguments checked against their datatype and their
//! object's size, statically by `build` and at run time for heap blocks.

use crate::util::check_program;

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
