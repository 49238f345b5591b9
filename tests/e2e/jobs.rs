//! `verify --jobs N` (issue 13): runs launched ahead of the search cover
//! what the search covers alone, number their interleavings the same way,
//! replay, and leave nothing behind.

use crate::util::{build, describe, line_of, verify_json};
use mbh_tests::json::Report;
use mbh_tests::{run_mbhybrid, workspace_root};
use std::collections::BTreeSet;
use std::path::Path;

/// Every `sig R:` line of every run: which sender each receive took.
fn signatures(report: &Report) -> BTreeSet<String> {
    report
        .runs
        .iter()
        .map(|run| {
            run.stdout
                .lines()
                .filter(|l| l.starts_with("sig "))
                .collect::<Vec<_>>()
                .join(" | ")
        })
        .collect()
}

/// The entries of a report's run directory.
fn run_dir_entries(report: &Report) -> BTreeSet<String> {
    std::fs::read_dir(&report.run_dir)
        .unwrap_or_else(|e| panic!("cannot list {}: {e}", report.run_dir))
        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
        .collect()
}

/// Soak seed 1001 (shrunk): 18 orders and assignments of three wildcard
/// `Irecv`s completed by `Testany`, under both clocks.
#[test]
fn two_and_three_jobs_run_every_signature_one_job_runs() {
    let _lock = mbh_tests::mpi_lock();
    let dir = tempfile::tempdir().unwrap();
    let exe = build(Path::new("tests/programs/f3_testany_irecvs.c"), dir.path());
    for clocks in ["lamport", "vector"] {
        let alone = verify_json(&exe, 3, dir.path(), &["--clocks", clocks]).1;
        assert!(alone.complete, "{clocks}");
        assert_eq!(alone.run_ahead, None, "{clocks}: nothing runs ahead alone");
        assert_eq!(signatures(&alone).len(), 18, "{clocks}");
        for jobs in ["2", "3"] {
            let (status, report, out) =
                verify_json(&exe, 3, dir.path(), &["--clocks", clocks, "--jobs", jobs]);
            assert_eq!(status, 0, "{clocks} --jobs {jobs}\n{}", describe(&out));
            assert!(report.complete, "{clocks} --jobs {jobs}");
            // Runs made ahead were used: the root's other alternatives
            // keep their guidance while the search walks the first.
            let ahead = report
                .run_ahead
                .expect("--jobs reports its runs made ahead");
            assert_eq!(ahead.jobs.to_string(), jobs);
            assert!(
                ahead.taken > 0 && ahead.taken < report.interleavings,
                "{clocks} --jobs {jobs}: {ahead:?} of {} interleavings",
                report.interleavings
            );
            assert_eq!(
                signatures(&report),
                signatures(&alone),
                "{clocks} --jobs {jobs}: the same outcomes"
            );
            // Interleavings are numbered 1..N as without --jobs; no
            // directory of a run made ahead is left.
            let expected: BTreeSet<String> = (1..=report.interleavings)
                .map(|n| format!("i{n}"))
                .chain(["manifest.json".to_string()])
                .collect();
            assert_eq!(run_dir_entries(&report), expected, "{clocks} --jobs {jobs}");
        }
    }
}

/// The crooked barrier (SCENARIOS.md S1): the assertion shows in the
/// second interleaving, which `--jobs 2` launches ahead of the first's
/// analysis. Its replay command reproduces it.
#[test]
fn a_finding_of_a_run_made_ahead_replays() {
    let _lock = mbh_tests::mpi_lock();
    let dir = tempfile::tempdir().unwrap();
    let source = "tests/programs/s1_crooked_barrier.c";
    let exe = build(Path::new(source), dir.path());
    let alone = verify_json(&exe, 3, dir.path(), &[]).1;
    let (status, report, out) = verify_json(&exe, 3, dir.path(), &["--jobs", "2"]);
    assert_eq!(status, 1, "{}", describe(&out));
    let kinds = |r: &Report| -> BTreeSet<(String, Vec<u32>)> {
        r.findings
            .iter()
            .map(|f| (f.kind.clone(), f.locations.iter().map(|l| l.line).collect()))
            .collect()
    };
    assert_eq!(kinds(&report), kinds(&alone));
    assert_eq!(report.interleavings, alone.interleavings);
    let replay = report.findings[0].replay.clone().expect("a replay command");
    let words: Vec<&str> = replay.split_whitespace().collect();
    let mut args: Vec<&str> = words[1..].to_vec();
    args.extend(["--format", "json"]);
    let out = run_mbhybrid(&workspace_root(), &args);
    assert_eq!(out.status.code(), Some(1), "{}", describe(&out));
    let replayed: Report = serde_json::from_slice(&out.stdout).unwrap();
    assert!(
        replayed.warnings.iter().all(|w| !w.contains("diverged")),
        "{:?}",
        replayed.warnings
    );
    assert_eq!(replayed.findings[0].kind, "assertion");
    assert_eq!(
        replayed.findings[0].locations[0].line,
        line_of(source, "expect: assertion")
    );
}

#[test]
fn zero_jobs_is_refused_with_what_to_give() {
    let out = run_mbhybrid(
        &workspace_root(),
        &["verify", "-n", "2", "--jobs", "0", "/bin/true"],
    );
    assert_eq!(out.status.code(), Some(2), "{}", describe(&out));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("--jobs"), "{stderr}");
}
