//! The list of the MPI functions the runtime models and does not
//! (docs/limits.md) is the runtime's table, never hand-written: the
//! section between its markers equals what
//! `mbh_trace::support::limits_markdown` prints. `MBH_BLESS=1` rewrites it.

use std::path::PathBuf;

const BEGIN: &str = "<!-- begin: generated from trace/src/support/calls.rs -->\n";
const END: &str = "<!-- end: generated from trace/src/support/calls.rs -->";

#[test]
fn limits_list_the_support_table() {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../docs/limits.md");
    let limits = std::fs::read_to_string(&path).expect("docs/limits.md");
    let start = limits
        .find(BEGIN)
        .expect("docs/limits.md has the begin marker")
        + BEGIN.len();
    let end = limits.find(END).expect("docs/limits.md has the end marker");
    let generated = mbh_trace::support::limits_markdown();
    if std::env::var_os("MBH_BLESS").is_some_and(|v| v == "1") {
        let rewritten = format!("{}{generated}{}", &limits[..start], &limits[end..]);
        std::fs::write(&path, rewritten).expect("rewrite docs/limits.md");
        return;
    }
    assert!(
        limits[start..end] == generated,
        "docs/limits.md's generated list of MPI functions differs from the table \
         (rerun with MBH_BLESS=1 to rewrite it)"
    );
}
