//! Every program of `tests/programs/` through build and verify.

use crate::util::{build, check_program, describe, line_of, verify_json};
use mbh_tests::{run_mbhybrid, workspace_root};

#[test]
fn every_program_has_a_test() {
    let listed = [
        "a1_buffer_types.c",
        "a2_buffer_overflow.c",
        "a3_buffers_clean.c",
        "a4_heap_overflow.c",
        "a5_derived_type_room.c",
        "a7_null_counts_refused.c",
        "a8_null_counts_where_ignored.c",
        "assert_rank1.c",
        "b1_ring_waitall.c",
        "b2_ring_waitany.c",
        "b3_ring_irecv_first.c",
        "buffer_reuse.c",
        "c1_gatherv_reduce.c",
        "c2_allgatherv_orders.c",
        "c3_ibarrier_orders.c",
        "c4_comm_split_orders.c",
        "clean_ring.c",
        "d1_split_recv_finalize.c",
        "d2_sendrecv_tags.c",
        "d3_undecided_hang.c",
        "d4_test_loop_deadlock.c",
        "d5_iprobe_loop_deadlock.c",
        "e10b_send_send.c",
        "e11_bcast_root_mismatch.c",
        "e12_reduce_count_mismatch.c",
        "e13_nonblocking_mismatch.c",
        "e14_exit_without_finalize.c",
        "e15_iallreduce_ops.c",
        "e16_alltoallv_counts.c",
        "e17_v_collective_counts.c",
        "e18_allreduce_other_comm.c",
        "e1_recv_recv.c",
        "e24_rooted_other_comm.c",
        "e25_invalid_root_other_comm.c",
        "e2_head_to_head.c",
        "e3_collective_order.c",
        "e4_wildcard_deadlock.c",
        "e4b_deadlock_first.c",
        "e5_crooked_deadlock.c",
        "e6_buffering_deadlock.c",
        "e7_leaks.c",
        "e8_type_mismatch.c",
        "every_call.c",
        "exit_rank1.c",
        "f1_concurrent_flips.c",
        "f2_three_concurrent_flips.c",
        "f3_testany_irecvs.c",
        "f4_flip_reaches_through_bcast.c",
        "f5_flip_reveals_an_earlier_sender.c",
        "f6_crash_before_a_slow_sender.c",
        "g1_rooted_early.c",
        "g2_bcast_root_leaves_early.c",
        "g3_scatter_root_leaves_early.c",
        "h1_comm_free_after_gather.c",
        "h2_waitall_one_send_unreceived.c",
        "h3_sendrecv_received_cannot_send.c",
        "h4_waitall_settled_receive.c",
        "h5_wait_wildcard_after_specific_irecv.c",
        "h6_testany_loop_after_a_completion.c",
        "h7_test_loop_beside_completed_wildcards.c",
        "h8_forced_testany_that_cannot_complete.c",
        "invalid_rank_fatal.c",
        "k1_forked_child_exits.c",
        "k2_many_records.c",
        "k3_double_free.c",
        "k4_fault_target.c",
        "k5_call_before_init.c",
        "k6_error_on_comm_self.c",
        "l1_irecv_probe_loop_every_rank.c",
        "l2_irecv_slots_waitall.c",
        "l3_icoll_never_waited.c",
        "l3_irecv_slots_decide_a_branch.c",
        "mpi_abort_rank2.c",
        "mpi_errors_returned.c",
        "n1_ibarrier_other_comm.c",
        "n2_ibarrier_never_posted.c",
        "n3_waitall_collectives.c",
        "n4_nbc_overlap_clean.c",
        "n5_split_iallreduce.c",
        "p1_persistent_halo.c",
        "p2_persistent_wildcard.c",
        "p3_missing_start.c",
        "p4_wildcard_mprobe.c",
        "p5_cancel_recv.c",
        "packed_messages.c",
        "q1_unreceived_send.c",
        "q2_freed_send_unreceived.c",
        "r1_output_order.c",
        "s10_master_worker.c",
        "s11_reduce.c",
        "s1_crooked_barrier.c",
        "s2_two_matches.c",
        "s3_nonovertaking.c",
        "s4_late_message.c",
        "s5_tags_pending.c",
        "s6_llcp_omission.c",
        "s7_any_tag.c",
        "s8_ssend_order.c",
        "s9_wildcard_probe.c",
        "segfault_rank1.c",
        "t1_bsend_exact.c",
        "t2_visible_state.c",
        "t3_polling_gives_up.c",
        "u10_recv_into_pending_send.c",
        "u11_strided_halo_clean.c",
        "u12_loop_entered_while_pending.c",
        "u13_loop_starts_send_in_callee.c",
        "u1_send_written.c",
        "u2_recv_read.c",
        "u3_reuse_clean.c",
        "u4_derived_and_mrecv.c",
        "u5_icoll_reuse.c",
        "u6_icoll_clean.c",
        "u7_icoll_forms.c",
        "u8_send_from_pending_recv.c",
        "u9_send_from_other_buffer.c",
        "unchanged_features.c",
        "v1_rank_collective.c",
        "v2_uniform_collectives.c",
        "v3_input_branch.c",
        "w1_probe_poll.c",
        "w2_subcomm_wildcard.c",
        "w3_dup_comm_poll.c",
        "w4_freed_receive_in_waitall.c",
        "x1_waitany_order.c",
        "x2_testany_order.c",
        "x3_waitany_causal.c",
        "x4_waitsome_order.c",
        "x5_testany_halo.c",
        "x6_waitany_loop_leaves_one.c",
    ];
    let mut present: Vec<String> = std::fs::read_dir(workspace_root().join("tests/programs"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".c"))
        .collect();
    present.sort();
    assert_eq!(
        present, listed,
        "add a #[test] below (or in buffering.rs, reuse.rs, icoll.rs, fault_injection.rs, faults.rs, hangs.rs, choices.rs, collectives.rs, completeness.rs, rooted_early.rs, wildcards.rs) for each new program, and list it here",
    );
}

#[test]
fn a_send_buffer_written_before_its_wait_is_buffer_reuse() {
    let source = "tests/programs/buffer_reuse.c";
    let report = check_program(source);
    assert_eq!(report.findings.len(), 1, "{:?}", report.findings);
    let finding = &report.findings[0];
    // The send whose buffer changed is named with its line.
    let send = line_of(source, "buf[0] = 5;") - 1;
    assert!(
        finding
            .locations
            .iter()
            .any(|l| l.line == send && l.role == "secondary"),
        "{finding:?}"
    );
}

#[test]
fn clean_ring_has_no_finding() {
    let report = check_program("tests/programs/clean_ring.c");
    let ranks = &report.runs[0].ranks;
    assert!(ranks.iter().all(|r| r.state == "finalized"), "{ranks:?}");
    // The ring's sends and receives were recorded by the runtime.
    assert!(ranks.iter().all(|r| r.operations >= 4), "{ranks:?}");
}

#[test]
fn e1_recv_recv_is_a_deadlock_with_both_lines() {
    let report = check_program("tests/programs/e1_recv_recv.c");
    let finding = &report.findings[0];
    assert_eq!(finding.code, "MBH0001");
    assert_eq!(finding.ranks, [0, 1]);
    assert!(
        finding.message.contains("rank 0 → rank 1 → rank 0"),
        "{finding:?}"
    );
    assert!(
        report.runs[0].ranks.iter().all(|r| r.state == "deadlocked"),
        "{:?}",
        report.runs
    );
}

#[test]
fn failed_assertion_on_rank_1_is_reported_at_its_line() {
    let report = check_program("tests/programs/assert_rank1.c");
    let finding = &report.findings[0];
    assert_eq!(finding.code, "MBH0002");
    assert!(finding.message.contains("value == 42"), "{finding:?}");
    assert_eq!(finding.ranks, [1]);
}

#[test]
fn segfault_is_a_crash_at_the_faulting_line() {
    let report = check_program("tests/programs/segfault_rank1.c");
    let finding = &report.findings[0];
    assert!(finding.message.contains("SIGSEGV"), "{finding:?}");
    let rank1 = &report.runs[0].ranks[1];
    assert_eq!(rank1.signal, Some(11));
}

#[test]
fn nonzero_exit_is_reported_at_the_exit_call() {
    let report = check_program("tests/programs/exit_rank1.c");
    let finding = &report.findings[0];
    assert!(finding.message.contains("status 3"), "{finding:?}");
    // The rank's standard error is kept with its outcome.
    let rank1 = &report.runs[0].ranks[1];
    assert!(
        rank1
            .stderr
            .as_deref()
            .unwrap_or("")
            .contains("input is invalid"),
        "{rank1:?}"
    );
}

/// Errors the program handles: reported, and the program sees the same
/// error classes as under plain MPI and finishes.
#[test]
fn returned_mpi_errors_are_reported_and_the_program_goes_on() {
    let report = check_program("tests/programs/mpi_errors_returned.c");
    let invalid = report
        .findings
        .iter()
        .find(|f| f.kind == "invalid-argument")
        .expect("an invalid-argument finding");
    assert!(invalid.message.contains("invalid count"), "{invalid:?}");
    let stdout = &report.runs[0].stdout;
    assert!(
        stdout.contains("rank 0: a negative count gives MPI_ERR_COUNT"),
        "{stdout}"
    );
    assert!(
        stdout.contains("rank 1: a short buffer gives MPI_ERR_TRUNCATE"),
        "{stdout}"
    );
    assert!(
        report.runs[0].ranks.iter().all(|r| r.state == "finalized"),
        "{:?}",
        report.runs
    );
}

/// An invalid rank under `MPI_ERRORS_ARE_FATAL`: the finding names the
/// argument, and the job stops.
#[test]
fn an_invalid_rank_is_an_invalid_argument() {
    let report = check_program("tests/programs/invalid_rank_fatal.c");
    let finding = &report.findings[0];
    assert!(finding.message.contains("invalid rank"), "{finding:?}");
    assert!(
        finding
            .help
            .as_deref()
            .unwrap_or("")
            .contains("MPI_PROC_NULL"),
        "{finding:?}"
    );
}

/// The same on `MPI_COMM_SELF`, whose errors the runtime redirects too.
#[test]
fn an_invalid_rank_on_comm_self_is_an_invalid_argument() {
    let report = check_program("tests/programs/k6_error_on_comm_self.c");
    let finding = &report.findings[0];
    assert!(finding.message.contains("invalid rank"), "{finding:?}");
}

#[test]
fn packed_and_struct_messages_look_as_without_the_tool() {
    // The two truncated receives (a Recv, an Irecv's Wait) are the only
    // findings: no request leaks from the failed Wait. Counts, elements,
    // probes and data match a plain run under both clocks.
    let report = check_program("tests/programs/packed_messages.c");
    assert_eq!(report.findings.len(), 2, "{:?}", report.findings);
    let _lock = mbh_tests::mpi_lock();
    let dir = tempfile::tempdir().unwrap();
    let source = workspace_root().join("tests/programs/packed_messages.c");
    let plain = dir.path().join("plain");
    let out = std::process::Command::new(mbh_tests::mpicc())
        .args([
            "-O1",
            "-o",
            plain.to_str().unwrap(),
            source.to_str().unwrap(),
        ])
        .output()
        .expect("the MPI's mpicc runs");
    assert!(out.status.success(), "{}", describe(&out));
    let traced = build(
        std::path::Path::new("tests/programs/packed_messages.c"),
        dir.path(),
    );
    let run = |exe: &std::path::Path, clocks: Option<&str>| {
        let mut command = mbh_tests::mpiexec(2);
        command.arg(exe).env_remove("LD_LIBRARY_PATH");
        if let Some(clocks) = clocks {
            let trace = dir.path().join(format!("trace-{clocks}"));
            std::fs::create_dir_all(&trace).unwrap();
            std::fs::write(
                trace.join("runtime.json"),
                format!(
                    r#"{{"format":"mbhybrid-runtime","version":1,"clocks":"{clocks}","buffering":"infinite","guidance":null}}"#
                ),
            )
            .unwrap();
            command.env("MBHYBRID_TRACE_DIR", &trace);
        }
        let out = command.output().expect("mpiexec runs");
        assert!(out.status.success(), "{}", describe(&out));
        String::from_utf8(out.stdout).unwrap()
    };
    let expected = run(&plain, None);
    assert!(
        expected.contains("5 ints into 2: MPI_ERR_TRUNCATE"),
        "{expected}"
    );
    assert!(
        expected.contains("probe of 7 shorts: count 7"),
        "{expected}"
    );
    for clocks in ["lamport", "vector"] {
        assert_eq!(run(&traced, Some(clocks)), expected, "{clocks} clocks");
    }
}

#[test]
fn mpi_abort_is_an_assertion_at_the_call() {
    let report = check_program("tests/programs/mpi_abort_rank2.c");
    let finding = &report.findings[0];
    assert!(finding.message.contains("error code 17"), "{finding:?}");
    assert_eq!(finding.locations[0].call.as_deref(), Some("MPI_Abort"));
}

#[test]
fn a_program_built_without_mbhybrid_is_verified_through_preload() {
    // Compiled by MPICH's own wrapper, not by `mbhybrid build`: the runtime
    // is preloaded and the crash line comes from DWARF.
    let _lock = mbh_tests::mpi_lock();
    let dir = tempfile::tempdir().unwrap();
    let exe = dir.path().join("plain");
    let source = workspace_root().join("tests/programs/segfault_rank1.c");
    let out = std::process::Command::new(mbh_tests::mpicc())
        .args([
            "-g",
            "-O0",
            "-o",
            exe.to_str().unwrap(),
            source.to_str().unwrap(),
        ])
        .output()
        .expect("the MPI's mpicc runs");
    assert!(out.status.success(), "{}", describe(&out));
    let (status, report, out) = verify_json(&exe, 2, dir.path(), &[]);
    assert_eq!(status, 1, "{}", describe(&out));
    assert!(
        report
            .warnings
            .iter()
            .any(|w| w.contains("not built by `mbhybrid build`")),
        "{report:?}"
    );
    let crash = report
        .findings
        .iter()
        .find(|f| f.kind == "crash")
        .expect("a crash finding");
    let line = line_of("tests/programs/segfault_rank1.c", "expect: crash");
    assert!(
        crash
            .locations
            .iter()
            .any(|l| l.file == "tests/programs/segfault_rank1.c" && l.line == line && l.rank == 1),
        "{crash:?}"
    );
}

#[test]
fn short_and_human_formats_point_at_the_line() {
    let _lock = mbh_tests::mpi_lock();
    let dir = tempfile::tempdir().unwrap();
    let exe = build(
        std::path::Path::new("tests/programs/assert_rank1.c"),
        dir.path(),
    );
    let runs = dir.path().join("runs");
    let line = line_of("tests/programs/assert_rank1.c", "expect: assertion");
    for (format, needle) in [
        ("short", format!("tests/programs/assert_rank1.c:{line}:")),
        ("human", "assert(value == 42);".to_string()),
    ] {
        let out = run_mbhybrid(
            &workspace_root(),
            &[
                "verify",
                "--format",
                format,
                "-n",
                "2",
                "--run-dir",
                runs.to_str().unwrap(),
                exe.to_str().unwrap(),
            ],
        );
        assert_eq!(out.status.code(), Some(1), "{}", describe(&out));
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(text.contains(&needle), "{format}: {text}");
        assert!(text.contains("MBH0002"), "{format}: {text}");
    }
}

/// Issue 12: a finding on every run, not in one of three.
#[test]
fn e14_exit_without_finalize_is_a_finding_every_time() {
    for _ in 0..3 {
        let report = check_program("tests/programs/e14_exit_without_finalize.c");
        let rank1 = report.runs[0].ranks.iter().find(|r| r.rank == 1);
        assert_eq!(
            rank1.map(|r| r.state.as_str()),
            Some("exited"),
            "{:?}",
            report.runs[0].ranks
        );
        // Its pending request is reported at its exit, not at a
        // `MPI_Finalize` it never called.
        let leak = report.findings.iter().find(|f| f.kind == "request-leak");
        let labels: Vec<&str> = leak
            .iter()
            .flat_map(|f| f.locations.iter().map(|l| l.label.as_str()))
            .collect();
        assert!(
            labels.iter().any(|l| l.contains("when the rank exits")),
            "{:?}",
            report.findings
        );
    }
}

#[test]
fn p1_persistent_halo_is_clean() {
    // Which request each `MPI_Waitany` returns decides nothing here (the
    // index only picks the buffer), so `build` marks the site and those
    // orders are no choice points: one interleaving, complete, where
    // every order was run before (more than 8).
    let report = check_program("tests/programs/p1_persistent_halo.c");
    assert!(report.complete, "{:?}", report.warnings);
    assert!(report.warnings.is_empty(), "{:?}", report.warnings);
    assert!(
        report.choice_points.orderless > 0,
        "{:?}",
        report.choice_points
    );
    for run in &report.runs {
        let ranks = &run.ranks;
        assert!(ranks.iter().all(|r| r.state == "finalized"), "{ranks:?}");
        // Ring of three: rank r sums (left + right) * 10 + 2 * it over it < 5.
        let stdout = &run.stdout;
        for (rank, sum) in [(0, 3 * 50 + 20), (1, 2 * 50 + 20), (2, 50 + 20)] {
            assert!(
                stdout.contains(&format!("rank {rank} sum {sum}")),
                "{stdout}"
            );
        }
    }
}

/// Issue 18: a call before `MPI_Init` is a finding at its line, within
/// seconds (not "no process reached MPI_Init", nor the other rank waiting
/// in `MPI_Init` until the timeout).
#[test]
fn k5_a_call_before_init_is_reported_at_its_line() {
    let report = check_program("tests/programs/k5_call_before_init.c");
    assert_eq!(report.findings.len(), 1, "{:?}", report.findings);
    assert!(
        report.runs[0].seconds < 60.0,
        "{:?}",
        report.runs[0].seconds
    );
}

#[test]
fn p3_missing_start_names_the_wait_and_the_init() {
    let source = "tests/programs/p3_missing_start.c";
    let report = check_program(source);
    assert_eq!(report.findings.len(), 1, "{:?}", report.findings);
    let finding = &report.findings[0];
    assert_eq!(finding.kind, "missing-start");
    // MPI allows it (issue 18): a warning, not an error.
    assert_eq!(finding.severity, "warning");
    let init = line_of(source, "MPI_Recv_init(");
    assert!(
        finding
            .locations
            .iter()
            .any(|l| l.line == init && l.rank == 0 && l.role != "primary"),
        "the init's line is named: {finding:?}"
    );
}

#[test]
fn p5_a_cancelled_wildcard_receive_is_no_decision() {
    let report = check_program("tests/programs/p5_cancel_recv.c");
    assert!(report.wildcards.is_empty(), "{:?}", report.wildcards);
    let stdout = &report.runs[0].stdout;
    for line in ["cancelled 1", "persistent cancelled 1", "got 5"] {
        assert!(stdout.lines().any(|l| l == line), "{line}: {stdout}");
    }
}

#[test]
fn p5_cancelled_receives_are_flagged_in_the_trace() {
    // So the analyses do not wait for them to take a message.
    let _lock = mbh_tests::mpi_lock();
    let dir = tempfile::tempdir().unwrap();
    let exe = build(
        std::path::Path::new("tests/programs/p5_cancel_recv.c"),
        dir.path(),
    );
    let (status, report, out) = verify_json(&exe, 2, dir.path(), &["--keep-traces"]);
    assert_eq!(status, 0, "{}", describe(&out));
    let first = mbh_trace::layout::InterleavingDir::new(std::path::Path::new(&report.run_dir), 1);
    let trace = mbh_trace::RankTrace::read(&first.trace(0)).unwrap();
    let cancelled: Vec<mbh_trace::OpKind> = trace
        .ops
        .iter()
        .filter(|op| op.has(mbh_trace::op::flags::CANCELLED))
        .map(|op| op.kind)
        .collect();
    assert_eq!(
        cancelled,
        [mbh_trace::OpKind::Irecv, mbh_trace::OpKind::StartRecv]
    );
    let cancels = trace
        .ops
        .iter()
        .filter(|op| op.kind == mbh_trace::OpKind::Cancel)
        .count();
    assert_eq!(cancels, 2);
}

/// Issue 38 (MPI-4.0 §11.2.2): a message nobody receives is an error at
/// its send, with the receiver and the tag, although every rank finalized.
#[test]
fn q1_a_message_never_received_is_reported_at_its_send() {
    let source = "tests/programs/q1_unreceived_send.c";
    let report = check_program(source);
    assert_eq!(report.findings.len(), 1, "{:?}", report.findings);
    let finding = &report.findings[0];
    assert_eq!(
        (finding.code.as_str(), finding.severity.as_str()),
        ("MBH0020", "error")
    );
    assert!(
        finding
            .message
            .contains("rank 0 sent to rank 1 with tag 7 was never received"),
        "{finding:?}"
    );
}

/// Issue 38: a freed active send still has to be received; the one that
/// is (through a Waitany beside a wildcard receive) is not reported.
#[test]
fn q2_a_freed_send_never_received_is_reported_and_a_received_one_is_not() {
    let report = check_program("tests/programs/q2_freed_send_unreceived.c");
    assert!(
        report.findings.iter().all(|f| f.ranks == [2]),
        "{:?}",
        report.findings
    );
}
