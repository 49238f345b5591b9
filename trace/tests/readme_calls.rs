//! README's list of the MPI functions the runtime models and does not
//! (issue 38) is the runtime's table, never hand-written: the section
//! between its markers equals what `mbh_trace::support::limits_markdown`
//! prints. `MBH_BLESS=1` rewrites it.

use std::path::PathBuf;

const BEGIN: &str = "<!-- begin: generated from trace/src/support/calls.rs -->\n";
const END: &str = "<!-- end: generated from trace/src/support/calls.rs -->";

#[test]
fn readme_lists_the_support_table() {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../README.md");
    let readme = std::fs::read_to_string(&path).expect("README.md");
    let start = readme.find(BEGIN).expect("README has the begin marker") + BEGIN.len();
    let end = readme.find(END).expect("README has the end marker");
    let generated = mbh_trace::support::limits_markdown();
    if std::env::var_os("MBH_BLESS").is_some_and(|v| v == "1") {
        let rewritten = format!("{}{generated}{}", &readme[..start], &readme[end..]);
        std::fs::write(&path, rewritten).expect("rewrite README.md");
        return;
    }
    assert!(
        readme[start..end] == generated,
        "README.md's generated list of MPI functions differs from the table \
         (rerun with MBH_BLESS=1 to rewrite it)"
    );
}
