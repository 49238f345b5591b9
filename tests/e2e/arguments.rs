//! Issue 18: buffer arguments checked against their datatype and their
//! object's size, statically by `build` and at run time for heap blocks.

use crate::util::check_program;

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
