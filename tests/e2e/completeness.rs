//! Issue 11: a search that says "complete" has run every combination of
//! concurrent wildcard outcomes. These are the hand-picked floor; the
//! differential test against the exhaustive reference is the proof.

use crate::util::{build, check_program_with, describe, verify_json};
use mbh_tests::json::Report;
use std::collections::BTreeSet;

/// The first sender each rank printed (`sig R: FIRST SECOND`), per run
/// that printed them all, as a tuple over `ranks`.
fn first_senders(report: &Report, ranks: &[i32]) -> BTreeSet<Vec<i32>> {
    let mut combinations = BTreeSet::new();
    for run in &report.runs {
        let firsts: Vec<Option<i32>> = ranks
            .iter()
            .map(|rank| {
                let prefix = format!("sig {rank}: ");
                run.stdout
                    .lines()
                    .find_map(|l| l.strip_prefix(&prefix))
                    .and_then(|rest| rest.split_whitespace().next())
                    .and_then(|first| first.parse().ok())
            })
            .collect();
        if let Some(firsts) = firsts.into_iter().collect::<Option<Vec<i32>>>() {
            combinations.insert(firsts);
        }
    }
    combinations
}

#[test]
fn f1_two_concurrent_first_receives_run_all_four_combinations() {
    let source = "tests/programs/f1_concurrent_flips.c";
    for clocks in ["lamport", "vector"] {
        let report = check_program_with(source, &["--clocks", clocks]);
        assert!(report.complete, "{clocks}");
        assert_eq!(report.findings.len(), 1, "{clocks}: {:?}", report.findings);
        assert_eq!(report.findings[0].kind, "deadlock");
        // The deadlocked run prints nothing for ranks 0 and 1; the other
        // three combinations complete and print theirs.
        let expected: BTreeSet<Vec<i32>> = [vec![2, 2], vec![2, 3], vec![3, 2]].into();
        assert_eq!(first_senders(&report, &[0, 1]), expected, "{clocks}");
    }
}

#[test]
fn f2_three_concurrent_first_receives_run_all_eight_combinations() {
    let source = "tests/programs/f2_three_concurrent_flips.c";
    for clocks in ["lamport", "vector"] {
        let report = check_program_with(source, &["--clocks", clocks]);
        assert!(report.complete, "{clocks}");
        assert_eq!(report.findings.len(), 1, "{clocks}: {:?}", report.findings);
        let seen = first_senders(&report, &[0, 1, 2]);
        assert_eq!(
            seen.len(),
            7,
            "{clocks}: every combination but the deadlocking one completes: {seen:?}"
        );
        assert!(!seen.contains(&vec![4, 4, 4]), "{clocks}");
    }
}

/// Soak seed 1001 (shrunk): three wildcard `Irecv`s completed by a
/// `Testany` loop. Each of the 3 assignments of senders under each of the 6
/// orders Testany can return the requests in runs, under both clocks and
/// both buffering modes: 18 distinct signatures.
#[test]
fn f3_irecvs_completed_by_testany_run_every_assignment_in_every_order() {
    let source = "tests/programs/f3_testany_irecvs.c";
    for (clocks, buffering) in [
        ("lamport", "infinite"),
        ("vector", "infinite"),
        ("lamport", "zero"),
    ] {
        let report = check_program_with(source, &["--clocks", clocks, "--buffering", buffering]);
        let signatures: BTreeSet<&str> = report
            .runs
            .iter()
            .filter_map(|run| run.stdout.lines().find(|l| l.starts_with("sig 1:")))
            .collect();
        assert!(report.complete, "{clocks} {buffering}");
        assert_eq!(signatures.len(), 18, "{clocks} {buffering}: {signatures:?}");
    }
}

/// Soak seed 3086 (shrunk): a flip reaches a later wildcard receive of
/// another rank through an `MPI_Bcast`. Under both clocks the search runs
/// both outcomes of the first receive, with the later receive free in
/// each (under vector clocks it was forced to a sender that no longer
/// sent, and the search stopped with "forced match did not happen").
#[test]
fn f4_a_flip_frees_the_receives_it_reaches_through_a_collective() {
    let source = "tests/programs/f4_flip_reaches_through_bcast.c";
    every_clock_prints(source, "sig 1:", &["sig 1: took 0", "sig 1: took 2"]);
}

/// Verifies `source` under both clocks: complete, no warning, and the
/// lines its runs print starting with `prefix` are exactly `expected`.
fn every_clock_prints(source: &str, prefix: &str, expected: &[&str]) {
    for clocks in ["lamport", "vector"] {
        let report = check_program_with(source, &["--clocks", clocks]);
        let printed: BTreeSet<&str> = report
            .runs
            .iter()
            .filter_map(|run| run.stdout.lines().find(|l| l.starts_with(prefix)))
            .collect();
        assert!(
            report.complete && report.warnings.is_empty(),
            "{clocks}: {:?}",
            report.warnings
        );
        assert_eq!(
            printed,
            expected.iter().copied().collect::<BTreeSet<_>>(),
            "{clocks}"
        );
    }
}

/// Soak seed 3111 (shrunk): a flip makes a rank live to send to a
/// receive ordered before the flip. Under both clocks, rank 0 is run
/// taking each sender first, whatever the first run did.
#[test]
fn f5_a_sender_a_flip_reveals_for_an_earlier_receive_is_run() {
    let source = "tests/programs/f5_flip_reveals_an_earlier_sender.c";
    every_clock_prints(
        source,
        "sig 0:",
        &["sig 0: took 1 then 3", "sig 0: took 3 then 1"],
    );
}

/// A run that ends in a crash must not hide a sender: rank 1 sends only
/// after a second, rank 0 fails at once on rank 2's message, and the
/// launcher kills the job when rank 0 dies. Rank 0 is held until rank 1
/// has sent and blocked, so its receive lists both senders and rank 1's
/// message is run too. Without the hold this was one run, "complete".
#[test]
fn f6_a_crash_waits_for_a_slow_sender_to_be_recorded() {
    let source = "tests/programs/f6_crash_before_a_slow_sender.c";
    for clocks in ["lamport", "vector"] {
        let report = check_program_with(source, &["--clocks", clocks]);
        assert!(report.complete, "{clocks}");
        let firsts = first_senders(&report, &[0]);
        let expected: BTreeSet<Vec<i32>> = [vec![1], vec![2]].into();
        assert_eq!(firsts, expected, "{clocks}: rank 0 takes each sender");
    }
}

#[test]
fn a_search_stopped_by_its_budget_still_counts_its_choice_points() {
    let _lock = mbh_tests::mpi_lock();
    let dir = tempfile::tempdir().unwrap();
    let exe = build(
        std::path::Path::new("tests/programs/f1_concurrent_flips.c"),
        dir.path(),
    );
    let (_, report, out) = verify_json(&exe, 4, dir.path(), &["--max-interleavings", "2"]);
    assert_eq!(report.interleavings, 2, "{}", describe(&out));
    assert!(!report.complete);
    assert!(
        report.choice_points.found >= 2,
        "both ranks' first receives are choice points: {:?}\n{}",
        report.choice_points,
        describe(&out)
    );
}

/// Issue 12: a search that found nothing but stopped at a budget exits 3,
/// not 0: scripts that test for success must not read it as verified. The
/// same program searched to its end exits 0.
#[test]
fn a_clean_but_partial_search_exits_3() {
    let _lock = mbh_tests::mpi_lock();
    let dir = tempfile::tempdir().unwrap();
    let exe = build(
        std::path::Path::new("tests/programs/f3_testany_irecvs.c"),
        dir.path(),
    );
    let (status, report, out) = verify_json(&exe, 3, dir.path(), &["--max-interleavings", "2"]);
    assert!(
        report.findings.is_empty() && !report.complete,
        "{}",
        describe(&out)
    );
    assert_eq!(status, 3, "{}", describe(&out));
    let (status, report, out) = verify_json(&exe, 3, dir.path(), &[]);
    assert!(
        report.findings.is_empty() && report.complete,
        "{}",
        describe(&out)
    );
    assert_eq!(status, 0, "{}", describe(&out));
}

/// Issue 11: a replay that cannot make a forced match says so as an error
/// (exit 2), never as a warning or a silent fallback, and names the call
/// it forced. E4's rank 1 is forced to take a message from itself, which
/// it never sends.
#[test]
fn a_replay_whose_forced_match_cannot_happen_fails_loudly() {
    let _lock = mbh_tests::mpi_lock();
    let dir = tempfile::tempdir().unwrap();
    let exe = build(
        std::path::Path::new("tests/programs/e4_wildcard_deadlock.c"),
        dir.path(),
    );
    let (_, report, out) = verify_json(&exe, 3, dir.path(), &[]);
    // The deadlock's run: its traces are kept, so the error can name the
    // call the forcing was for.
    let deadlock = report
        .findings
        .iter()
        .find(|f| f.kind == "deadlock")
        .unwrap_or_else(|| panic!("E4 deadlocks\n{}", describe(&out)));
    let interleaving = deadlock.interleaving.to_string();
    let replay_config = std::path::Path::new(&report.run_dir)
        .join(format!("i{interleaving}"))
        .join("replay.json");
    let text = std::fs::read_to_string(&replay_config)
        .unwrap_or_else(|e| panic!("{}: {e}\n{}", replay_config.display(), describe(&out)));
    let mut config: serde_json::Value = serde_json::from_str(&text).unwrap();
    config["guidance"]["forced"] = serde_json::json!([{"rank": 1, "event": 0, "source": 1}]);
    std::fs::write(&replay_config, config.to_string()).unwrap();
    let runs = dir.path().join("runs");
    let replayed = mbh_tests::run_mbhybrid(
        &mbh_tests::workspace_root(),
        &[
            "replay",
            &report.run_id,
            "--interleaving",
            &interleaving,
            "--run-dir",
            runs.to_str().unwrap(),
        ],
    );
    assert_eq!(replayed.status.code(), Some(2), "{}", describe(&replayed));
    let stderr = String::from_utf8_lossy(&replayed.stderr);
    assert!(
        stderr.contains("error: 1 forced match(es) did not happen")
            && stderr.contains("rank 1's MPI_Recv at ")
            && stderr.contains(
                "e4_wildcard_deadlock.c:12 (its wildcard event 0) was forced to take rank 1's message but"
            ),
        "{}",
        describe(&replayed)
    );
}
