//! Issue 17, item 4: C++ functions are named as the source spells them
//! (demangled) wherever mbhybrid shows a function: `mbhybrid analyze`, in
//! both formats, the site table, and a finding's location.

use crate::util::{build, describe, verify_json};
use mbh_tests::{run_mbhybrid, workspace_root, TestProgram};

const SOURCE: &str = "tests/programs/cxx/ns_template.cc";
/// `ns::reduce<int>` of the program, as clang++ 16 mangles it.
const SYMBOL: &str = "_ZN2ns6reduceIiEET_PS1_i";
const SHOWN: &str = "ns::reduce<int>(int*, int)";

#[test]
fn issue_17_analyze_names_cxx_functions_demangled() {
    let out = run_mbhybrid(&workspace_root(), &["analyze", SOURCE]);
    assert!(out.status.success(), "{}", describe(&out));
    let human = String::from_utf8_lossy(&out.stdout);
    assert!(
        human.contains(&format!("`MPI_Recv` in `{SHOWN}`")),
        "{human}"
    );
    assert!(!human.contains("_ZN"), "a mangled name is shown\n{human}");

    let out = run_mbhybrid(&workspace_root(), &["analyze", "--format", "json", SOURCE]);
    assert!(out.status.success(), "{}", describe(&out));
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let function = report["functions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["symbol"] == SYMBOL)
        .unwrap_or_else(|| panic!("no function with symbol {SYMBOL}: {report}"));
    assert_eq!(function["name"], SHOWN);
    let wildcards = report["wildcards"].as_array().unwrap();
    assert_eq!(wildcards.len(), 2, "{report}");
    assert!(wildcards.iter().all(|w| w["function"] == SHOWN), "{report}");
}

#[test]
fn issue_17_findings_and_site_table_name_cxx_functions_demangled() {
    let program = TestProgram::load(SOURCE);
    let _lock = mbh_tests::mpi_lock();
    let dir = tempfile::tempdir().unwrap();
    let exe = build(&program.source, dir.path());

    let table = std::fs::read_to_string(mbh_trace::SiteTable::path_for(&exe)).unwrap();
    let table: mbh_trace::SiteTable = serde_json::from_str(&table).unwrap();
    // The program's receives (Open MPI's C++ bindings bring their own).
    let receives: Vec<&str> = table
        .sites
        .iter()
        .filter(|s| s.call == "MPI_Recv" && s.file == SOURCE)
        .map(|s| s.function.as_str())
        .collect();
    assert_eq!(receives, [SHOWN, SHOWN], "{table:?}");

    let (status, report, out) = verify_json(&exe, program.np, dir.path(), &[]);
    let context = describe(&out);
    assert_eq!(status, program.exit, "{context}");
    assert_eq!(report.interleavings, 2, "{context}");
    // The abort in the template, found through the executable's DWARF,
    // names its function as `analyze` does.
    let [expected] = &program.expected[..] else {
        panic!("{SOURCE} expects one finding");
    };
    let [finding] = &report.findings[..] else {
        panic!("one finding expected\n{context}");
    };
    assert_eq!(finding.kind, expected.kind, "{context}");
    let location = finding
        .locations
        .iter()
        .find(|l| l.file == SOURCE && l.line == expected.line && l.rank == expected.rank)
        .unwrap_or_else(|| panic!("no location at line {}\n{context}", expected.line));
    assert_eq!(location.call.as_deref(), Some(SHOWN), "{context}");
}
