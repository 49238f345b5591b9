//! The wildcard and error scenarios of SCENARIOS.md: potential senders,
//! interleaving counts, deadlocks that need a particular match, replays.

use crate::util::{
    build, check_program, check_program_with, check_program_with_expectations, describe, line_of,
    verify_json,
};
use mbh_tests::json::{Report, Wildcard};
use mbh_tests::{run_mbhybrid, workspace_root};

/// The wildcard receive of `rank` at `line` of `source`, as first seen.
fn wildcard<'r>(report: &'r Report, source: &str, rank: i32, line: u32) -> &'r Wildcard {
    report
        .wildcards
        .iter()
        .find(|w| w.rank == rank && w.file == source && w.line == line)
        .unwrap_or_else(|| {
            panic!(
                "no wildcard receive of rank {rank} at {source}:{line} in {:?}",
                report.wildcards
            )
        })
}

/// Every sender found for a wildcard receive over the exploration.
fn senders(w: &Wildcard) -> Vec<i32> {
    w.senders.clone()
}

/// The senders of the first interleaving that ran a wildcard receive: the
/// one it took and the potential ones.
fn first_run_senders(w: &Wildcard) -> Vec<i32> {
    let mut all: Vec<i32> = w.matched.iter().chain(&w.potential).copied().collect();
    all.sort_unstable();
    all.dedup();
    all
}

#[test]
fn s1_crooked_barrier_finds_p2_and_the_elusive_assertion() {
    let source = "tests/programs/s1_crooked_barrier.c";
    let report = check_program(source);
    let irecv = wildcard(&report, source, 1, line_of(source, "MPI_Irecv(&x"));
    assert_eq!(
        irecv.matched,
        [0],
        "the MPI library's own choice is P0's message"
    );
    assert_eq!(
        irecv.potential,
        [2],
        "P2 is a potential sender of P1's Irecv"
    );
    let finding = &report.findings[0];
    assert_eq!(
        finding.interleaving, 2,
        "only the forced interleaving fails"
    );
    assert!(
        finding
            .notes
            .iter()
            .any(|n| n.contains("was made to take rank 2's message")),
        "{finding:?}"
    );
    assert_eq!(report.choice_points.found, report.choice_points.explored);
    assert!(report.complete);
}

#[test]
fn e11_replay_reproduces_the_assertion_20_times_out_of_20() {
    let _lock = mbh_tests::mpi_lock();
    let dir = tempfile::tempdir().unwrap();
    let source = std::path::Path::new("tests/programs/s1_crooked_barrier.c");
    let exe = build(source, dir.path());
    let (status, report, out) = verify_json(&exe, 3, dir.path(), &[]);
    assert_eq!(status, 1, "{}", describe(&out));
    let replay = report.findings[0].replay.clone().expect("a replay command");
    let words: Vec<&str> = replay.split_whitespace().collect();
    assert_eq!(&words[..2], ["mbhybrid", "replay"]);
    let assertion_line = line_of("tests/programs/s1_crooked_barrier.c", "expect: assertion");
    for attempt in 0..20 {
        let mut args: Vec<&str> = words[1..].to_vec();
        args.extend(["--format", "json"]);
        let out = run_mbhybrid(&workspace_root(), &args);
        assert_eq!(
            out.status.code(),
            Some(1),
            "replay {attempt}\n{}",
            describe(&out)
        );
        let replayed: Report = serde_json::from_slice(&out.stdout).unwrap();
        assert!(
            replayed.warnings.iter().all(|w| !w.contains("diverged")),
            "{:?}",
            replayed.warnings
        );
        let finding = &replayed.findings[0];
        assert_eq!(finding.kind, "assertion");
        assert_eq!(finding.locations[0].line, assertion_line);
        assert!(
            replayed.runs[0].stdout.contains("x=33"),
            "{:?}",
            replayed.runs[0].stdout
        );
    }
}

#[test]
fn s2_both_senders_under_lamport_and_vector_clocks() {
    let source = "tests/programs/s2_two_matches.c";
    for clocks in ["lamport", "vector"] {
        let report = check_program_with(source, &["--clocks", clocks]);
        let first = &report
            .wildcards
            .iter()
            .filter(|w| w.rank == 0)
            .min_by_key(|w| w.event)
            .unwrap();
        assert_eq!(
            first_run_senders(first),
            [1, 2],
            "{clocks}: {:?}",
            report.wildcards
        );
        assert_eq!(report.clocks, clocks);
    }
}

#[test]
fn s3_nonovertaking_is_deterministic() {
    let report = check_program("tests/programs/s3_nonovertaking.c");
    assert!(
        report.wildcards.iter().all(|w| w.potential.is_empty()),
        "{:?}",
        report.wildcards
    );
    assert_eq!(report.choice_points.found, 0);
}

#[test]
fn s4_late_message_is_recognised() {
    let source = "tests/programs/s4_late_message.c";
    let report = check_program(source);
    let first = report
        .wildcards
        .iter()
        .find(|w| w.rank == 1 && w.event == 0)
        .unwrap();
    assert_eq!(first_run_senders(first), [0, 2], "{:?}", report.wildcards);
}

#[test]
fn s5_every_wildcard_has_both_senders() {
    let report = check_program("tests/programs/s5_tags_pending.c");
    let p0: Vec<&Wildcard> = report.wildcards.iter().filter(|w| w.rank == 0).collect();
    assert_eq!(p0.len(), 4, "{:?}", report.wildcards);
    for w in p0 {
        assert_eq!(senders(w), [1, 2], "{w:?}");
    }
}

#[test]
fn s6_vector_clocks_find_both_senders_and_lamport_claims_no_more() {
    let source = "tests/programs/s6_llcp_omission.c";
    let vector = check_program_with(source, &["--clocks", "vector"]);
    let p2_first = vector
        .wildcards
        .iter()
        .find(|w| w.rank == 2 && w.event == 0)
        .unwrap();
    assert_eq!(
        first_run_senders(p2_first),
        [0, 1],
        "{:?}",
        vector.wildcards
    );
    assert_eq!(vector.interleavings, 2);
    let lamport = check_program_with(source, &["--clocks", "lamport"]);
    let p2_first = lamport
        .wildcards
        .iter()
        .find(|w| w.rank == 2 && w.event == 0)
        .unwrap();
    assert!(
        first_run_senders(p2_first)
            .iter()
            .all(|s| [0, 1].contains(s)),
        "{:?}",
        lamport.wildcards
    );
    assert!(lamport.interleavings <= 2);
}

#[test]
fn s7_any_tag_receive_gives_no_false_potential_match() {
    let source = "tests/programs/s7_any_tag.c";
    for clocks in ["lamport", "vector"] {
        let report = check_program_with(source, &["--clocks", clocks]);
        for marker in ["// h0", "// h1", "// tag 2"] {
            let w = wildcard(&report, source, 0, line_of(source, marker));
            assert_eq!(
                first_run_senders(w),
                [1],
                "{clocks}, {marker}: {:?}",
                report.wildcards
            );
        }
    }
}

#[test]
fn s8_ssend_orders_the_later_send_after_the_wildcard() {
    let source = "tests/programs/s8_ssend_order.c";
    for clocks in ["lamport", "vector"] {
        let report = check_program_with(source, &["--clocks", clocks]);
        let first = wildcard(&report, source, 0, line_of(source, "// first"));
        assert_eq!(
            first_run_senders(first),
            [1, 2],
            "{clocks}: P3's send is ordered after the first receive: {:?}",
            report.wildcards
        );
        assert_eq!(senders(first), [1, 2], "{clocks}: {:?}", report.wildcards);
    }
}

#[test]
fn s9_wildcard_probe_has_both_senders_and_user_counts() {
    let report = check_program("tests/programs/s9_wildcard_probe.c");
    let probe = report
        .wildcards
        .iter()
        .find(|w| w.rank == 0 && w.event == 0)
        .unwrap();
    assert_eq!(probe.call, "MPI_Probe");
    assert_eq!(first_run_senders(probe), [1, 2]);
}

#[test]
fn s11_a_reduce_does_not_hide_the_late_sender() {
    let source = "tests/programs/s11_reduce.c";
    let report = check_program(source);
    let first = report
        .wildcards
        .iter()
        .find(|w| w.rank == 1 && w.event == 0)
        .unwrap();
    assert_eq!(first_run_senders(first), [0, 2], "{:?}", report.wildcards);
}

#[test]
fn e2_head_to_head_deadlocks_without_buffering() {
    let report = check_program("tests/programs/e2_head_to_head.c");
    assert_eq!(report.buffering, "zero");
}

#[test]
fn e2_head_to_head_is_a_buffering_hazard_with_buffering() {
    let source = "tests/programs/e2_head_to_head.c";
    // A warning: exit 0 (issue 37).
    let report = check_program_with_expectations(source, &["--buffering", "infinite"], 0);
    let finding = report
        .findings
        .iter()
        .find(|f| f.kind == "buffering-hazard")
        .expect("a buffering hazard");
    let isend = line_of(source, "MPI_Isend(&out");
    let mut ranks: Vec<i32> = finding
        .locations
        .iter()
        .filter(|l| l.line == isend)
        .map(|l| l.rank)
        .collect();
    ranks.sort_unstable();
    assert_eq!(ranks, [0, 1], "both sends: {finding:?}");
    assert_eq!(report.interleavings, 1);
    assert!(
        report.runs[0].ranks.iter().all(|r| r.state == "finalized"),
        "the run itself completed"
    );
}

#[test]
fn e3_collective_order_is_a_mismatch() {
    check_program("tests/programs/e3_collective_order.c");
}

#[test]
fn e4_deadlock_only_when_the_wildcard_takes_p2() {
    // Two interleavings (the header); which one comes first is MPI's
    // choice, so the deadlock is in the first or the second, and its note
    // says the wildcard "took" or "was made to take" P2's message.
    let report = check_program("tests/programs/e4_wildcard_deadlock.c");
    assert_eq!(report.findings.len(), 1, "{:?}", report.findings);
    let finding = &report.findings[0];
    let decision = if finding.interleaving == 1 {
        "took rank 2's message"
    } else {
        "was made to take rank 2's message"
    };
    assert!(
        finding.notes.iter().any(|n| n.contains(decision)),
        "{finding:?}"
    );
}

/// Whichever run comes first, the deadlock is found in the interleaving
/// where the wildcard took P2's message, and the other one runs too:
/// P0's message, never received in a deadlocked run, is still a
/// potential sender.
#[test]
fn e4_a_first_run_that_deadlocks_still_explores_the_other_match() {
    let source = "tests/programs/e4b_deadlock_first.c";
    for clocks in ["lamport", "vector"] {
        let report = check_program_with(source, &["--clocks", clocks]);
        assert_eq!(report.findings.len(), 1, "{clocks}: {:?}", report.findings);
        let finding = &report.findings[0];
        assert!(
            finding.notes.iter().any(|n| n.contains("rank 2's message")),
            "{clocks}: {finding:?}"
        );
        let w = wildcard(&report, source, 1, line_of(source, "// wildcard"));
        assert_eq!(senders(w), [0, 2], "{clocks}: {:?}", report.wildcards);
    }
}

#[test]
fn e5_crooked_barrier_deadlock() {
    let report = check_program("tests/programs/e5_crooked_deadlock.c");
    assert!(
        report.findings[0]
            .notes
            .iter()
            .any(|n| n.contains("was made to take rank 1's message")),
        "{:?}",
        report.findings
    );
}

#[test]
fn e6_buffering_dependent_deadlock() {
    check_program("tests/programs/e6_buffering_deadlock.c");
}

#[test]
fn e10b_send_cycle_under_zero_buffering() {
    let report = check_program("tests/programs/e10b_send_send.c");
    let finding = &report.findings[0];
    assert_eq!(finding.ranks, [0, 1, 2], "{finding:?}");
}

#[test]
fn r1_every_output_once_and_replays_reproduce_them() {
    let source = "tests/programs/r1_output_order.c";
    let _lock = mbh_tests::mpi_lock();
    let dir = tempfile::tempdir().unwrap();
    let exe = build(std::path::Path::new(source), dir.path());
    let (status, report, out) = verify_json(&exe, 4, dir.path(), &[]);
    assert_eq!(status, 0, "{}", describe(&out));
    let mut outputs: Vec<&str> = report.runs.iter().map(|r| r.stdout.trim()).collect();
    outputs.sort_unstable();
    let expected = [
        "arrival order: 123",
        "arrival order: 132",
        "arrival order: 213",
        "arrival order: 231",
        "arrival order: 312",
        "arrival order: 321",
    ];
    assert_eq!(outputs, expected, "every order once");
    let runs = dir.path().join("runs");
    for (i, run) in report.runs.iter().enumerate() {
        let n = (i + 1).to_string();
        for _ in 0..if i == 0 { 20 } else { 3 } {
            let out = run_mbhybrid(
                &workspace_root(),
                &[
                    "replay",
                    &report.run_id,
                    "--interleaving",
                    &n,
                    "--run-dir",
                    runs.to_str().unwrap(),
                    "--format",
                    "json",
                ],
            );
            assert_eq!(out.status.code(), Some(0), "{}", describe(&out));
            let replayed: Report = serde_json::from_slice(&out.stdout).unwrap();
            assert_eq!(
                replayed.runs[0].stdout, run.stdout,
                "replay of interleaving {n}"
            );
        }
    }
}

/// Issue 13: a wildcard `Irecv` and a wildcard `Probe` in a loop on every
/// rank, under `--loop-abstraction auto`: one interleaving, every choice
/// point abstracted, every rank's sum the same as in any other order.
#[test]
fn l1_irecv_and_probe_loop_on_every_rank_is_one_interleaving() {
    let source = "tests/programs/l1_irecv_probe_loop_every_rank.c";
    let report = check_program(source);
    assert!(
        report.choice_points.found >= 4,
        "{:?}",
        report.choice_points
    );
    assert_eq!(report.choice_points.abstracted, report.choice_points.found);
    let run = &report.runs[0];
    // Each rank's neighbours send it 100*rank+r on both tags: the sum is
    // the same whichever message each receive took.
    for rank in 0..4 {
        let (left, right) = ((rank + 3) % 4, (rank + 1) % 4);
        let sum: i32 = (0..6)
            .map(|r| 2 * (left * 100 + r) + 2 * (right * 100 + r))
            .sum();
        assert!(
            run.stdout.contains(&format!("rank {rank} sum {sum}")),
            "{:?}",
            run.stdout
        );
    }
}

/// Issue 37, item 4: miniFE's receive loop in C. Every wildcard receive of
/// every rank is in the loop `build` marked, so `auto` runs one
/// interleaving of the 3!^4 = 1,296 orders, and every rank's sum is right.
#[test]
fn l2_irecv_loop_into_slots_completed_by_waitall_is_one_interleaving() {
    let report = check_program("tests/programs/l2_irecv_slots_waitall.c");
    // Up to 4 x 3 receives; one whose other senders had all been taken is
    // no choice point.
    assert!(
        report.choice_points.found >= 4,
        "{:?}",
        report.choice_points
    );
    assert_eq!(report.choice_points.abstracted, report.choice_points.found);
    for rank in 0..4 {
        let sum: i32 = (0..4).filter(|p| *p != rank).map(|p| 10 * p + 1).sum();
        assert!(
            report.runs[0]
                .stdout
                .contains(&format!("rank {rank} sum {sum}")),
            "{:?}",
            report.runs[0].stdout
        );
    }
}

/// The same loop in C++ with a destructor alive across it, as in miniFE:
/// its calls are `invoke`s, and the markers still go on its edges (split
/// normal edges, exits after the landing pad), so it is abstracted too.
#[test]
fn l4_cxx_irecv_loop_with_cleanups_is_one_interleaving() {
    let report = check_program("tests/programs/cxx/l4_irecv_slots_with_cleanups.cc");
    assert!(
        report.choice_points.found >= 4,
        "{:?}",
        report.choice_points
    );
    assert_eq!(report.choice_points.abstracted, report.choice_points.found);
    for rank in 0..4 {
        let sum: i32 = (0..4).filter(|p| *p != rank).map(|p| 10 * p + 1).sum();
        assert!(
            report.runs[0]
                .stdout
                .contains(&format!("rank {rank} sum {sum}")),
            "{:?}",
            report.runs[0].stdout
        );
    }
}

/// Its counter-example: the slot's value decides an assertion, so the
/// loop is not abstracted even under `auto` (the header's option), and
/// the search finds the order that fails (the header's `expect:`).
#[test]
fn l3_irecv_slots_that_decide_a_branch_are_explored_under_auto() {
    let source = "tests/programs/l3_irecv_slots_decide_a_branch.c";
    let report = check_program(source);
    assert_eq!(
        report.choice_points.abstracted, 0,
        "{source}: {:?}",
        report.choice_points
    );
    assert!(report.interleavings > 1, "{}", report.interleavings);
}

#[test]
fn s10_master_worker_is_right_on_every_interleaving_and_abstracts_its_loop() {
    let source = "tests/programs/s10_master_worker.c";
    // The header asks for --loop-abstraction auto: the collection loop was
    // marked by `build` itself, no hand-written markers.
    let abstracted = check_program(source);
    assert_eq!(
        abstracted.choice_points.abstracted,
        abstracted.choice_points.found
    );
    assert!(abstracted.choice_points.found > 0);
    // Without abstraction, a mixing bound of 0 still explores every choice
    // point once, and every interleaving computes the same total.
    let bounded = check_program_with_expectations(
        source,
        &["--loop-abstraction", "off", "--mixing-bound", "0"],
        3,
    );
    assert!(bounded.interleavings > 1, "{}", bounded.interleavings);
    assert_eq!(bounded.choice_points.explored, bounded.choice_points.found);
    for run in &bounded.runs {
        assert_eq!(
            run.stdout.trim(),
            "total 1296",
            "interleaving {}",
            run.interleaving
        );
    }
}

#[test]
fn e7_request_and_datatype_leaks_at_their_creating_lines() {
    let report = check_program("tests/programs/e7_leaks.c");
    assert!(report.findings.iter().any(|f| f.kind == "request-leak"));
    assert!(report.findings.iter().any(|f| f.kind == "resource-leak"));
}

#[test]
fn e8_type_mismatch_names_both_calls() {
    let report = check_program("tests/programs/e8_type_mismatch.c");
    let finding = report
        .findings
        .iter()
        .find(|f| f.kind == "type-mismatch")
        .unwrap();
    assert_eq!(finding.ranks, [1, 0]);
    assert_eq!(finding.locations.len(), 2, "{finding:?}");
}

#[test]
fn p2_each_start_of_a_wildcard_recv_init_is_an_event_under_both_clocks() {
    let source = "tests/programs/p2_persistent_wildcard.c";
    let line = line_of(source, "the wildcard start");
    for clocks in ["lamport", "vector"] {
        let report = check_program_with(source, &["--clocks", clocks]);
        let first = wildcard(&report, source, 0, line);
        assert_eq!(first.call, "MPI_Start", "{clocks}");
        assert_eq!(first.event, 0, "{clocks}");
        assert_eq!(first_run_senders(first), [1, 2], "{clocks}: {first:?}");
        let events: Vec<u32> = report
            .wildcards
            .iter()
            .filter(|w| w.rank == 0 && w.interleaving == 1)
            .map(|w| w.event)
            .collect();
        assert_eq!(events, [0, 1], "one event per start ({clocks})");
        // The replay forced the start to the other sender.
        let firsts: Vec<bool> = report
            .runs
            .iter()
            .map(|r| r.stdout.contains("event 0 from 1"))
            .collect();
        assert_eq!(firsts.len(), 2, "{clocks}");
        assert_ne!(firsts[0], firsts[1], "{clocks}: {:?}", report.runs);
    }
}

#[test]
fn p4_a_wildcard_mprobe_is_explored_like_a_probe() {
    let source = "tests/programs/p4_wildcard_mprobe.c";
    for clocks in ["lamport", "vector"] {
        let report = check_program_with(source, &["--clocks", clocks]);
        let mprobe = wildcard(&report, source, 0, line_of(source, "the matched probe"));
        assert_eq!(mprobe.call, "MPI_Mprobe");
        assert_eq!(first_run_senders(mprobe), [1, 2], "{clocks}: {mprobe:?}");
        let improbe = report
            .wildcards
            .iter()
            .find(|w| w.rank == 0 && w.event == 1)
            .unwrap_or_else(|| panic!("{:?}", report.wildcards));
        assert_eq!(improbe.call, "MPI_Improbe");
        assert_eq!(improbe.senders, [1, 2], "{clocks}: {improbe:?}");
        // The replay forced the matched probe to the other sender.
        let firsts: Vec<bool> = report
            .runs
            .iter()
            .map(|r| r.stdout.contains("first from 1"))
            .collect();
        assert_eq!(firsts.len(), 2, "{clocks}");
        assert_ne!(firsts[0], firsts[1], "{clocks}: {:?}", report.runs);
    }
}
