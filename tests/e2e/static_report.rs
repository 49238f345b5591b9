//! `mbhybrid analyze` and the HTML report, through the CLI.

use crate::util::{build, describe, line_of};
use mbh_tests::{run_mbhybrid, workspace_root};

#[test]
fn analyze_abstracts_a_collection_loop_but_not_one_that_decides_a_branch() {
    let source = "tests/programs/static/branch_on_received.c";
    let out = run_mbhybrid(&workspace_root(), &["analyze", "--format", "json", source]);
    assert!(out.status.success(), "{}", describe(&out));
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let decision = |marker: &str| {
        let line = line_of(source, marker);
        let found = report["loops"]
            .as_array()
            .unwrap()
            .iter()
            .find(|l| l["span"]["line"] == line);
        found.unwrap_or_else(|| panic!("no loop at line {line}: {report}"))["decision"].clone()
    };
    assert_eq!(decision("/* collect */"), "abstract");
    assert_eq!(decision("/* decide */"), "explore");
    let wildcards = report["wildcards"].as_array().unwrap();
    assert_eq!(wildcards.len(), 2, "{wildcards:?}");
}

/// `verify -n 3 --html PAGE [--format FORMAT]` on the crooked barrier
/// (S1, one assertion), in `dir`.
fn crooked_barrier_with_html(
    dir: &std::path::Path,
    page: &std::path::Path,
    format: &str,
) -> std::process::Output {
    let exe = build(
        std::path::Path::new("tests/programs/s1_crooked_barrier.c"),
        dir,
    );
    let runs = dir.join("runs");
    run_mbhybrid(
        &workspace_root(),
        &[
            "verify",
            "-n",
            "3",
            "--format",
            format,
            "--run-dir",
            runs.to_str().unwrap(),
            "--html",
            page.to_str().unwrap(),
            exe.to_str().unwrap(),
        ],
    )
}

#[test]
fn verify_writes_an_html_report_with_the_failing_interleaving() {
    let _lock = mbh_tests::mpi_lock();
    let dir = tempfile::tempdir().unwrap();
    let page = dir.path().join("report.html");
    let out = crooked_barrier_with_html(dir.path(), &page, "human");
    assert_eq!(out.status.code(), Some(1), "{}", describe(&out));
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(html.contains("<svg"), "a space-time diagram");
    assert!(html.contains("x != 33"), "the finding");
    // The failing interleaving forced P1's `Irecv(*)` to P2: the runtime
    // recorded it as forced, and the diagram marks it.
    assert!(
        html.contains("<g class=\"call forced\">"),
        "the forced receive is marked"
    );
    assert!(
        !html.contains("http://") && !html.contains("https://"),
        "self-contained"
    );
}

/// Issue 12: an `--html` path that cannot be written is an error after the
/// report, never a lost report: the findings are printed, then the error,
/// and the exit status is 2.
#[test]
fn an_unwritable_html_path_keeps_the_report() {
    let _lock = mbh_tests::mpi_lock();
    let dir = tempfile::tempdir().unwrap();
    let page = dir.path().join("no-such-directory").join("report.html");
    let out = crooked_barrier_with_html(dir.path(), &page, "json");
    assert_eq!(out.status.code(), Some(2), "{}", describe(&out));
    let report: serde_json::Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("the report was lost ({e})\n{}", describe(&out)));
    assert_eq!(
        report["findings"].as_array().map(Vec::len),
        Some(1),
        "{}",
        describe(&out)
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("report.html"),
        "the error names the path: {stderr}"
    );
}

/// A `Testany`'s line in `analyze` says what its choice is (which request
/// completes first), not an empty source and tag.
#[test]
fn analyze_names_a_testany_site_by_its_choice() {
    let source = "tests/programs/x2_testany_order.c";
    let out = run_mbhybrid(&workspace_root(), &["analyze", source]);
    assert!(out.status.success(), "{}", describe(&out));
    let human = String::from_utf8_lossy(&out.stdout);
    let line = line_of(source, "// testany");
    let expected = format!(
        "x2_testany_order.c:{line}: `MPI_Testany` in `main` (which request completes first: \
         every order explored: the index of the completed request is printed at \
         tests/programs/x2_testany_order.c:{}",
        line + 3
    );
    assert!(human.contains(&expected), "{human}");
    assert!(!human.contains("(source , tag )"), "{human}");
}

/// A `Testany` whose index only says which neighbour's ghost cell to fill
/// is no choice, and `analyze` says which memory is filled slot by slot.
#[test]
fn analyze_says_a_testany_whose_order_decides_nothing_is_no_choice() {
    let source = "tests/programs/x5_testany_halo.c";
    let out = run_mbhybrid(&workspace_root(), &["analyze", source]);
    assert!(out.status.success(), "{}", describe(&out));
    let human = String::from_utf8_lossy(&out.stdout);
    let line = line_of(source, "// testany");
    let expected = format!(
        "x5_testany_halo.c:{line}: `MPI_Testany` in `main` (which request completes first: \
         the order decides nothing (`u` filled slot by slot), so it is no choice where the \
         loop completes every request)"
    );
    assert!(human.contains(&expected), "{human}");
}
