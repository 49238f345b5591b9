//! Issue 39, first slice: one-sided communication is recorded and its
//! epochs checked (MPI-4.0 §12.5). Each wrong program has a correct twin
//! that differs by one synchronization call: the wrong one is an
//! `rma-epoch` error (MBH0022) at the call's line, with the earlier call
//! involved where there is one; the twin has no such finding. Programs
//! that synchronize with fences and PSCW are complete; those with locks
//! (passive target) stay partial (exit 3 when nothing else is wrong), as
//! window memory is not watched under locks, and the report says so,
//! naming the lock calls.
//!
//! Remote races (MBH0023, `rma-race`): each racy program has two origins
//! (ranks 1 and 2) whose operations on rank 0's window no epoch orders;
//! the report names both lines and ranks, the window and the bytes; the
//! twin (disjoint bytes, another fence epoch, exclusive locks, atomic
//! accumulates) has no finding at all.
//!
//! Origin buffers (MBH0013, `buffer-reuse`; MPI-4.0 §12.5, §12.7): the
//! program's own load or store of an operation's origin or result buffer
//! before the call that completes the operation at the origin is reported
//! at the access, with the operation's line and the completing call's; the
//! twin moves the access past that call (or adds the `MPI_Win_flush_local`
//! that completes it) and has no finding.
//!
//! Window memory (MBH0023, `rma-race`; MPI-4.0 §12.7): the owner's own
//! load or store of its window's bytes in the exposure epoch in which
//! another rank's operation touches them, one of the two writing, is one
//! race naming the access's line and the operation's; the twin moves the
//! access out of the epoch (a fence between, after `MPI_Win_wait`) or to
//! other bytes, and is complete with no finding.

use crate::util::{check_program, check_program_with_expectations};
use mbh_tests::json::{Finding, Report};
use mbh_tests::workspace_root;

const CODE: &str = "MBH0022";

/// The line of the `n`-th (0-based) line of `source` holding `marker`.
fn nth_line(source: &str, marker: &str, n: usize) -> u32 {
    let text = std::fs::read_to_string(workspace_root().join(source)).unwrap();
    text.lines()
        .enumerate()
        .filter(|(_, l)| l.contains(marker))
        .nth(n)
        .unwrap_or_else(|| panic!("{marker:?} #{n} not in {source}"))
        .0 as u32
        + 1
}

/// The report's `rma-epoch` findings.
fn epoch_findings(report: &Report) -> Vec<&Finding> {
    report.findings.iter().filter(|f| f.code == CODE).collect()
}

/// Whether `source` synchronizes with locks (passive target) or makes a
/// shared memory window: its window memory is not watched, so its runs
/// stay partial.
fn unwatched_windows(source: &str) -> bool {
    let text = std::fs::read_to_string(workspace_root().join(source)).unwrap();
    text.contains("MPI_Win_lock") || text.contains("MPI_Win_allocate_shared")
}

/// The coverage of a run of `source`: partial, naming the lock calls,
/// for a program with passive target epochs (window memory is not
/// watched under locks); otherwise (fence and PSCW, built with the access
/// checks) complete, unless `lenient` (a wrong program MPI may refuse).
fn check_coverage(report: &Report, source: &str, lenient: bool) {
    if !unwatched_windows(source) {
        assert!(
            lenient || report.complete,
            "fence and PSCW are checked fully: {:?}",
            report.warnings
        );
        return;
    }
    assert!(!report.complete, "passive target stays partial");
    let why = report
        .warnings
        .iter()
        .find(|w| w.starts_with("coverage is partial"))
        .unwrap_or_else(|| panic!("the report says why it is partial: {:?}", report.warnings));
    assert!(
        why.contains("but not the loads and stores of window memory by its own process while another rank may hold a lock on it") && why.contains(source),
        "{why}"
    );
    assert!(!report.not_modelled.is_empty());
}

/// `source` (a wrong program) has one `rma-epoch` error on `rank`, at the
/// `n`-th line holding `at`, naming `words`, and, when given, a second
/// location at the line holding `earlier` (the call that opened the
/// epoch, or ended the last one).
/// Other findings may come with it, as the MPI reacts to the error: MPICH
/// refuses the call (an MPI error), Open MPI may hang (a timeout, kept
/// short).
fn check_wrong(
    source: &str,
    rank: i32,
    (at, n): (&str, usize),
    earlier: Option<(&str, usize)>,
    words: &str,
) {
    let report = check_program_with_expectations(source, &["--timeout", "10"], 1);
    let found = epoch_findings(&report);
    assert_eq!(found.len(), 1, "{:#?}", report.findings);
    let finding = found[0];
    assert_eq!(
        (finding.kind.as_str(), finding.severity.as_str()),
        ("rma-epoch", "error")
    );
    assert!(finding.message.contains(words), "{}", finding.message);
    assert!(
        finding
            .message
            .contains("window 1 (made by `MPI_Win_allocate`"),
        "{}",
        finding.message
    );
    assert_eq!(finding.ranks, [rank]);
    let primary = &finding.locations[0];
    assert_eq!(primary.role, "primary");
    assert_eq!(primary.file, source);
    assert_eq!(
        (primary.line, primary.rank),
        (nth_line(source, at, n), rank),
        "{finding:#?}"
    );
    match earlier {
        Some((call, n)) => {
            let second = finding
                .locations
                .iter()
                .find(|l| l.role == "secondary")
                .unwrap_or_else(|| panic!("a second location: {finding:#?}"));
            assert_eq!(second.line, nth_line(source, call, n), "{finding:#?}");
        }
        None => assert_eq!(finding.locations.len(), 1, "{finding:#?}"),
    }
    check_coverage(&report, source, true);
}

/// `source` (a correct program) has no `rma-epoch` finding, no finding at
/// all, and is complete unless it uses locks (the header says its exit).
fn check_twin(source: &str) -> Report {
    let report = check_program(source);
    assert!(report.findings.is_empty(), "{:#?}", report.findings);
    check_coverage(&report, source, false);
    assert!(
        report
            .warnings
            .iter()
            .all(|w| !w.contains("were not checked, because")),
        "every operation's races were decided: {:?}",
        report.warnings
    );
    report
}

#[test]
fn a_put_before_any_fence_is_outside_an_epoch() {
    check_wrong(
        "tests/programs/rma/put_outside_epoch.c",
        1,
        ("MPI_Put(", 0),
        None,
        "`MPI_Put` to rank 0 on window 1",
    );
}

#[test]
fn a_put_between_fences_is_in_its_epoch() {
    check_twin("tests/programs/rma/put_in_fence.c");
}

#[test]
fn a_second_unlock_unlocks_nothing() {
    check_wrong(
        "tests/programs/rma/unlock_twice.c",
        1,
        ("MPI_Win_unlock(", 1),
        Some(("MPI_Win_unlock(", 0)),
        "`MPI_Win_unlock` of rank 0 on window 1",
    );
}

#[test]
fn one_unlock_per_lock_is_correct() {
    check_twin("tests/programs/rma/unlock_once.c");
}

#[test]
fn a_lock_held_at_win_free_is_an_epoch_left_open() {
    check_wrong(
        "tests/programs/rma/lock_held_at_free.c",
        1,
        ("MPI_Win_free(", 0),
        Some(("MPI_Win_lock(", 0)),
        "exclusive lock of rank 0 is still open",
    );
}

#[test]
fn a_lock_released_before_win_free_is_correct() {
    check_twin("tests/programs/rma/lock_released_before_free.c");
}

#[test]
fn win_complete_without_win_start_is_found() {
    check_wrong(
        "tests/programs/rma/complete_without_start.c",
        1,
        ("MPI_Win_complete(", 0),
        None,
        "`MPI_Win_complete` on window 1",
    );
}

#[test]
fn win_start_then_complete_is_correct() {
    check_twin("tests/programs/rma/start_then_complete.c");
}

#[test]
fn win_wait_without_win_post_is_found() {
    check_wrong(
        "tests/programs/rma/wait_without_post.c",
        0,
        ("MPI_Win_wait(", 0),
        None,
        "`MPI_Win_wait` on window 1",
    );
}

#[test]
fn post_start_complete_wait_is_correct() {
    check_twin("tests/programs/rma/complete_after_start.c");
}

#[test]
fn locking_a_held_target_again_is_found() {
    check_wrong(
        "tests/programs/rma/lock_twice.c",
        1,
        ("MPI_Win_lock(", 1),
        Some(("MPI_Win_lock(", 0)),
        "rank 1 locks rank 0 on window 1",
    );
}

#[test]
fn a_fence_halo_exchange_is_correct_and_computes_as_under_mpi() {
    let source = "tests/programs/rma/fence_halo.c";
    let report = check_twin(source);
    let stdout = &report.runs[0].stdout;
    // Each rank got its neighbours' values: the wrappers change nothing.
    for line in [
        "rank 0 halo 102 101",
        "rank 1 halo 100 102",
        "rank 2 halo 101 100",
    ] {
        assert!(stdout.contains(line), "{line} in {stdout}");
    }
    assert!(!stdout.contains("wrong halo"), "{stdout}");
}

#[test]
fn a_fetch_and_op_counter_under_shared_locks_is_correct() {
    let source = "tests/programs/rma/fetch_and_op_counter.c";
    let report = check_twin(source);
    assert!(
        report.runs[0].stdout.contains("counter 9 of 9"),
        "{}",
        report.runs[0].stdout
    );
}

/// Every RMA function the runtime records, in correct epochs on windows
/// of each kind: none is an epoch error, the program computes what it
/// computes under plain MPI (the values below, the same on MPICH and Open
/// MPI without mbhybrid), and the partial reason names the calls whose
/// window memory is not watched (locks, the shared window). Built
/// without the access checks, every one is named (so each is wrapped and
/// recorded).
#[test]
fn every_recorded_rma_call_runs_as_under_mpi() {
    use mbh_trace::support::{of_class, Support};
    let source = "tests/programs/rma/every_rma_call.c";
    let report = check_twin(source);
    let stdout = &report.runs[0].stdout;
    for line in [
        "rank 0: got 10 mem 11 1 alloc 1 7 11 1 1 1 11 old 0 fetched 0 r 10 0 0 shared 40",
        "rank 1: got 11 mem 10 1 alloc 1 7 10 1 1 1 0 old 0 fetched 0 r 11 0 0 shared 41",
    ] {
        assert!(stdout.contains(line), "{line}\nin\n{stdout}");
    }
    let mut named: Vec<&str> = report
        .not_modelled
        .iter()
        .filter_map(|l| l.call.as_deref())
        .collect();
    named.dedup();
    assert_eq!(
        named,
        [
            "MPI_Win_allocate_shared",
            "MPI_Win_lock",
            "MPI_Win_lock_all"
        ]
    );
    let program = mbh_tests::TestProgram::load(source);
    let _lock = mbh_tests::mpi_lock();
    let dir = tempfile::tempdir().unwrap();
    let exe = crate::util::build_with(&program.source, dir.path(), &["--no-access-checks"]);
    let (status, report, out) = crate::util::verify_json(&exe, program.np, dir.path(), &[]);
    assert_eq!(status, 3, "{}", crate::util::describe(&out));
    let mut named: Vec<&str> = report
        .not_modelled
        .iter()
        .filter_map(|l| l.call.as_deref())
        .collect();
    named.dedup();
    let recorded: Vec<&str> = of_class(Support::RacesNotChecked).collect();
    assert_eq!(named, recorded);
}

#[test]
fn a_put_to_a_rank_outside_the_start_group_is_outside_its_epoch() {
    check_wrong(
        "tests/programs/rma/put_outside_start_group.c",
        2,
        ("MPI_Put(", 1),
        Some(("MPI_Win_start(", 0)),
        "`MPI_Put` to rank 1 on window 1",
    );
}

#[test]
fn puts_to_the_start_group_are_in_its_epoch() {
    check_twin("tests/programs/rma/put_inside_start_group.c");
}

/// RMA calls are checked against the thread level like every wrapped call
/// (issue 40): from a second thread under `MPI_THREAD_SINGLE`, an error
/// at each call site, and no epoch error (the fences pair up).
#[test]
fn rma_calls_off_the_main_thread_break_the_thread_level() {
    let report = check_program("tests/programs/rma/fence_off_main_thread.c");
    assert!(epoch_findings(&report).is_empty(), "{:#?}", report.findings);
    assert_eq!(report.findings.len(), 3, "{:#?}", report.findings);
    assert!(report.findings.iter().all(|f| f.kind == "thread-level"));
}

const RACE: &str = "MBH0023";

/// `source` (racy: exit 1) has exactly one `rma-race` error between rank
/// 1's operation at the `n1`-th line holding `first` and rank 2's at the
/// `n2`-th line holding `second`, on `bytes` of rank 0's window 1, saying
/// `why`; and the run is still partial for local accesses.
fn check_race(
    source: &str,
    (first, n1): (&str, usize),
    (second, n2): (&str, usize),
    bytes: &str,
    why: &str,
) {
    check_race_of(source, (first, n1, 1), (second, n2, 2), bytes, why);
}

/// [`check_race`] with the origins' ranks given: (call, n, rank) each.
fn check_race_of(
    source: &str,
    (first, n1, r1): (&str, usize, i32),
    (second, n2, r2): (&str, usize, i32),
    bytes: &str,
    why: &str,
) {
    let report = check_program(source);
    let races: Vec<&Finding> = report.findings.iter().filter(|f| f.code == RACE).collect();
    assert_eq!(races.len(), 1, "{:#?}", report.findings);
    assert_eq!(report.findings.len(), 1, "{:#?}", report.findings);
    let race = races[0];
    assert_eq!(
        (race.kind.as_str(), race.severity.as_str()),
        ("rma-race", "error")
    );
    let ranks: Vec<i32> = if r1 == r2 { vec![r1] } else { vec![r1, r2] };
    assert_eq!(race.ranks, ranks);
    assert!(
        race.message.contains(&format!(
            "race on {bytes} of rank 0's window 1 (made by `MPI_Win_allocate`"
        )),
        "{}",
        race.message
    );
    let at = |role: &str| {
        race.locations
            .iter()
            .find(|l| l.role == role)
            .unwrap_or_else(|| panic!("a {role} location: {race:#?}"))
    };
    let (primary, secondary) = (at("primary"), at("secondary"));
    assert_eq!(
        (primary.file.as_str(), primary.line, primary.rank),
        (source, nth_line(source, second, n2), r2),
        "{race:#?}"
    );
    assert_eq!(
        (secondary.file.as_str(), secondary.line, secondary.rank),
        (source, nth_line(source, first, n1), r1),
        "{race:#?}"
    );
    assert!(
        race.notes.iter().any(|n| n.contains(why)),
        "{:#?}",
        race.notes
    );
    assert!(race.help.is_some());
    check_coverage(&report, source, false);
}

#[test]
fn two_puts_to_the_same_bytes_in_one_fence_epoch_race() {
    check_race(
        "tests/programs/rma/put_same_bytes_fence.c",
        ("MPI_Put(", 0),
        ("MPI_Put(", 1),
        "bytes 0..4",
        "both are in the same fence epoch",
    );
}

/// An `MPI_Rput` whose request is never completed is a request leak at
/// the `MPI_Rput`; waited for, it is clean.
#[test]
fn an_rput_request_never_completed_is_a_request_leak() {
    let source = "tests/programs/rma/rput_never_completed.c";
    let report = check_program(source);
    assert_eq!(report.findings.len(), 1, "{:#?}", report.findings);
    assert_eq!(report.findings[0].code, "MBH0011");
    check_coverage(&report, source, false);
    check_twin("tests/programs/rma/rput_waited.c");
}

/// A put just past the memory the target gave its window: a
/// buffer-overflow at the put, with the window's size; the run is partial
/// for RMA as always. Its twin, `put_disjoint_bytes_fence.c`, stays inside.
#[test]
fn a_put_past_the_targets_window_is_a_buffer_overflow() {
    let source = "tests/programs/rma/put_past_window.c";
    let report = check_program(source);
    assert_eq!(report.findings.len(), 1, "{:#?}", report.findings);
    let finding = &report.findings[0];
    assert_eq!(
        (finding.code.as_str(), finding.severity.as_str()),
        ("MBH0018", "error")
    );
    assert!(
        finding
            .message
            .starts_with("`MPI_Put` by rank 1 reaches bytes 12..16 of rank 0's window 1")
            && finding.message.ends_with("which exposes 12 bytes"),
        "{}",
        finding.message
    );
    check_coverage(&report, source, false);
}

#[test]
fn two_puts_to_disjoint_bytes_in_one_fence_epoch_do_not() {
    let report = check_twin("tests/programs/rma/put_disjoint_bytes_fence.c");
    assert!(
        report.runs[0].stdout.contains("rank 0 holds 11 12"),
        "{}",
        report.runs[0].stdout
    );
}

#[test]
fn a_put_and_a_get_of_the_same_bytes_in_one_fence_epoch_race() {
    check_race(
        "tests/programs/rma/put_get_same_fence.c",
        ("MPI_Put(", 0),
        ("MPI_Get(", 0),
        "bytes 0..4",
        "one writes what the other reads; both are in the same fence epoch",
    );
}

#[test]
fn a_put_and_a_get_in_successive_fence_epochs_do_not() {
    let report = check_twin("tests/programs/rma/put_get_successive_fences.c");
    assert!(
        report.runs[0].stdout.contains("rank 2 got 11"),
        "{}",
        report.runs[0].stdout
    );
}

#[test]
fn puts_under_exclusive_locks_do_not_race() {
    check_twin("tests/programs/rma/put_exclusive_locks.c");
}

#[test]
fn puts_under_shared_locks_race() {
    check_race(
        "tests/programs/rma/put_shared_locks.c",
        ("MPI_Put(", 0),
        ("MPI_Put(", 1),
        "bytes 0..4",
        "both run under shared locks of rank 0",
    );
}

#[test]
fn accumulates_of_one_op_and_type_under_shared_locks_do_not_race() {
    let report = check_twin("tests/programs/rma/accumulate_sum_shared.c");
    assert!(
        report.runs[0].stdout.contains("rank 0 holds 23"),
        "{}",
        report.runs[0].stdout
    );
}

#[test]
fn an_accumulate_and_a_put_under_shared_locks_race() {
    check_race(
        "tests/programs/rma/accumulate_and_put_shared.c",
        ("MPI_Accumulate(", 0),
        ("MPI_Put(", 0),
        "bytes 0..4",
        "both write them; both run under shared locks",
    );
}

#[test]
fn a_put_then_a_get_in_one_lock_epoch_without_a_flush_race() {
    check_race_of(
        "tests/programs/rma/lock_put_get_no_flush.c",
        ("MPI_Put(", 0, 1),
        ("MPI_Get(", 0, 1),
        "bytes 0..4",
        "both are in one lock epoch of rank 1 with no `MPI_Win_flush` of rank 0 between them",
    );
}

#[test]
fn a_flush_between_a_put_and_a_get_orders_them() {
    let report = check_twin("tests/programs/rma/lock_put_flush_get.c");
    assert!(
        report.runs[0].stdout.contains("rank 1 got 11"),
        "{}",
        report.runs[0].stdout
    );
}

#[test]
fn two_origins_in_one_exposure_epoch_race() {
    check_race(
        "tests/programs/rma/pscw_one_exposure.c",
        ("MPI_Put(", 0),
        ("MPI_Put(", 1),
        "bytes 0..4",
        "both are in the same exposure epoch of rank 0",
    );
}

/// `MPI_Win_wait` is in the wait-for graph: it waits for the origins of
/// its post's group that have not called `MPI_Win_complete`, so a target
/// waiting for an origin that waits for the target's message is a
/// deadlock with both lines (the `// expect:` lines), not a timeout.
#[test]
fn a_win_wait_for_an_origin_blocked_elsewhere_is_a_deadlock() {
    let report = check_program("tests/programs/rma/pscw_wait_for_an_origin_blocked_elsewhere.c");
    assert!(report.complete, "{:?}", report.warnings);
    assert_eq!(report.findings.len(), 1, "{:#?}", report.findings);
    assert_eq!(report.findings[0].kind, "deadlock");
}

#[test]
fn two_exposure_epochs_order_their_origins() {
    let report = check_twin("tests/programs/rma/pscw_two_exposures.c");
    assert!(
        report.runs[0].stdout.contains("rank 0 holds 12"),
        "{}",
        report.runs[0].stdout
    );
}

/// A target datatype with holes: its bytes are not recorded, so nothing
/// is reported, and the partial reason names the put with why.
#[test]
fn a_put_through_a_datatype_with_holes_is_named_not_checked() {
    let source = "tests/programs/rma/put_vector_type_fence.c";
    let report = check_program(source);
    assert!(report.findings.is_empty(), "{:#?}", report.findings);
    let why = report
        .warnings
        .iter()
        .find(|w| w.starts_with("coverage is partial"))
        .expect("partial");
    let line = nth_line(source, "MPI_Put(pair", 0);
    assert!(
        why.contains(&format!(
            "the races of these one-sided operations were not checked, because their target datatype has holes, whose exact bytes mbhybrid does not record: MPI_Put ({source}:{line})"
        )),
        "{why}"
    );
    assert!(
        report.runs[0].stdout.contains("rank 0 holds 21 12 23"),
        "{}",
        report.runs[0].stdout
    );
}

/// `source` (racy) has one `buffer-reuse` error on rank 1: the access at
/// the line holding `access`, the operation at the line holding
/// `operation`, and the call that completes it at the line holding
/// `completion`; its message says `message`. `twin` has no finding.
fn check_origin_reuse(
    (source, twin): (&str, &str),
    (access, operation, completion): (&str, &str, &str),
    message: &str,
) {
    let report = check_program(source);
    assert_eq!(report.findings.len(), 1, "{:#?}", report.findings);
    let finding = &report.findings[0];
    assert_eq!(
        (finding.code.as_str(), finding.severity.as_str()),
        ("MBH0013", "error")
    );
    assert_eq!(finding.message, message);
    assert_eq!(finding.ranks, [1]);
    let lines: Vec<(&str, u32, i32)> = finding
        .locations
        .iter()
        .map(|l| (l.role.as_str(), l.line, l.rank))
        .collect();
    assert_eq!(
        lines,
        [
            ("primary", nth_line(source, access, 0), 1),
            ("secondary", nth_line(source, operation, 0), 1),
            ("secondary", nth_line(source, completion, 0), 1),
        ],
        "{finding:#?}"
    );
    let completing = completion.split('(').next().unwrap_or(completion);
    assert!(
        finding
            .help
            .as_deref()
            .is_some_and(|h| h.contains(&format!("`{completing}`"))),
        "the help names the call that completes it: {finding:#?}"
    );
    check_coverage(&report, source, false);
    check_twin(twin);
}

#[test]
fn an_origin_buffer_written_before_the_fence_is_buffer_reuse() {
    check_origin_reuse(
        (
            "tests/programs/rma/put_write_origin_before_fence.c",
            "tests/programs/rma/put_write_origin_after_fence.c",
        ),
        ("value = 2;", "MPI_Put(", "MPI_Win_fence(MPI_MODE_NOSUCCEED"),
        "rank 1 wrote to the origin buffer of `MPI_Put` before the `MPI_Win_fence` that completes it",
    );
}

#[test]
fn a_get_origin_buffer_read_before_the_fence_is_buffer_reuse() {
    check_origin_reuse(
        (
            "tests/programs/rma/get_read_origin_before_fence.c",
            "tests/programs/rma/get_read_origin_after_fence.c",
        ),
        (
            "seen = got;",
            "MPI_Get(",
            "MPI_Win_fence(MPI_MODE_NOSUCCEED",
        ),
        "rank 1 read the origin buffer of `MPI_Get` before the `MPI_Win_fence` that completes it",
    );
}

#[test]
fn an_origin_buffer_written_before_the_unlock_is_buffer_reuse() {
    check_origin_reuse(
        (
            "tests/programs/rma/lock_put_write_before_unlock.c",
            "tests/programs/rma/lock_put_write_after_unlock.c",
        ),
        ("value = 2;", "MPI_Put(", "MPI_Win_unlock("),
        "rank 1 wrote to the origin buffer of `MPI_Put` before the `MPI_Win_unlock` that completes it",
    );
}

/// `MPI_Win_flush_local` completes the put at the origin: the write after
/// it, before the unlock, is clean.
#[test]
fn an_origin_buffer_written_after_flush_local_is_clean() {
    check_twin("tests/programs/rma/lock_put_flush_local_write.c");
}

#[test]
fn an_origin_buffer_written_before_win_complete_is_buffer_reuse() {
    check_origin_reuse(
        (
            "tests/programs/rma/pscw_put_write_before_complete.c",
            "tests/programs/rma/pscw_put_write_after_complete.c",
        ),
        ("value = 2;", "MPI_Put(", "MPI_Win_complete("),
        "rank 1 wrote to the origin buffer of `MPI_Put` before the `MPI_Win_complete` that completes it",
    );
}

#[test]
fn an_rput_origin_buffer_written_before_its_wait_is_buffer_reuse() {
    check_origin_reuse(
        (
            "tests/programs/rma/rput_write_before_wait.c",
            "tests/programs/rma/rput_write_after_wait.c",
        ),
        ("value = 2;", "MPI_Rput(", "MPI_Wait("),
        "rank 1 wrote to the origin buffer of `MPI_Rput` before the `MPI_Wait` that completes it",
    );
}

#[test]
fn a_fetch_and_op_result_read_before_the_flush_is_buffer_reuse() {
    check_origin_reuse(
        (
            "tests/programs/rma/fetch_and_op_read_before_flush.c",
            "tests/programs/rma/fetch_and_op_read_after_flush.c",
        ),
        ("seen = got;", "MPI_Fetch_and_op(", "MPI_Win_flush("),
        "rank 1 read the result buffer of `MPI_Fetch_and_op` before the `MPI_Win_flush` that completes it",
    );
}

/// Built without the access checks, the write of
/// `put_write_origin_before_fence.c` goes unseen, and the partial
/// coverage says origin buffers were not checked, besides window memory.
#[test]
fn without_the_access_checks_origin_buffers_are_said_unchecked() {
    let program =
        mbh_tests::TestProgram::load("tests/programs/rma/put_write_origin_before_fence.c");
    let _lock = mbh_tests::mpi_lock();
    let dir = tempfile::tempdir().unwrap();
    let exe = crate::util::build_with(&program.source, dir.path(), &["--no-access-checks"]);
    let (status, report, out) = crate::util::verify_json(&exe, program.np, dir.path(), &[]);
    let context = crate::util::describe(&out);
    assert_eq!(status, 3, "{context}");
    assert!(report.findings.is_empty(), "{:#?}", report.findings);
    let why = report
        .warnings
        .iter()
        .find(|w| w.starts_with("coverage is partial"))
        .unwrap_or_else(|| panic!("partial\n{context}"));
    assert!(
        why.contains("but not the loads and stores of window memory by its own process during an epoch, nor, as the program was built without the access checks (`--no-access-checks` or MBHYBRID_ACCESS_CHECKS=off), of origin buffers while an operation may be in flight"),
        "{why}"
    );
}

/// An operation with two buffers, completed by `MPI_Win_unlock_all`: its
/// result buffer (which MPI writes) read early is named as such.
#[test]
fn a_get_accumulate_result_read_before_unlock_all_is_buffer_reuse() {
    check_origin_reuse(
        (
            "tests/programs/rma/get_accumulate_read_before_unlock_all.c",
            "tests/programs/rma/get_accumulate_read_after_unlock_all.c",
        ),
        ("seen = old;", "MPI_Get_accumulate(", "MPI_Win_unlock_all("),
        "rank 1 read the result buffer of `MPI_Get_accumulate` before the `MPI_Win_unlock_all` that completes it",
    );
}

/// `source` (racy: exit 1) has exactly one `rma-race` error: rank 1's
/// operation at the line holding `operation` and rank 0's own load or
/// store at the line holding `access` (the primary location, no call),
/// on `bytes` of rank 0's window 1, its message saying `words` and a
/// note `why`; the run is complete (fence and PSCW are checked fully).
/// `twin` has no finding and is complete; its output holds `twin_says`.
fn check_local_race(
    (source, twin, twin_says): (&str, &str, &str),
    (operation, access): (&str, &str),
    (bytes, words, why): (&str, &str, &str),
) {
    let report = check_program(source);
    assert_eq!(report.findings.len(), 1, "{:#?}", report.findings);
    let race = &report.findings[0];
    assert_eq!(
        (
            race.code.as_str(),
            race.kind.as_str(),
            race.severity.as_str()
        ),
        (RACE, "rma-race", "error")
    );
    assert_eq!(race.ranks, [1, 0]);
    assert!(
        race.message.contains(words)
            && race.message.contains(&format!(
                "race on {bytes} of rank 0's window 1 (made by `MPI_Win_allocate`"
            )),
        "{}",
        race.message
    );
    let lines: Vec<(&str, u32, i32, bool)> = race
        .locations
        .iter()
        .map(|l| (l.role.as_str(), l.line, l.rank, l.call.is_some()))
        .collect();
    assert_eq!(
        lines,
        [
            ("primary", nth_line(source, access, 0), 0, false),
            ("secondary", nth_line(source, operation, 0), 1, true),
        ],
        "{race:#?}"
    );
    assert!(
        race.notes.iter().any(|n| n.contains(why)),
        "{:#?}",
        race.notes
    );
    assert!(race.help.as_deref().is_some_and(|h| h.contains("§12.7")));
    check_coverage(&report, source, false);
    let clean = check_twin(twin);
    assert!(
        clean.runs[0].stdout.contains(twin_says),
        "{}",
        clean.runs[0].stdout
    );
}

#[test]
fn an_owners_store_and_a_put_in_one_fence_epoch_race() {
    check_local_race(
        (
            "tests/programs/rma/local_store_put_same_fence.c",
            "tests/programs/rma/local_store_put_fence_between.c",
            "rank 0 holds 7",
        ),
        ("MPI_Put(", "base[2] = 5;"),
        (
            "bytes 8..12",
            "`MPI_Put` by rank 1 and a store by rank 0",
            "both write them; both are in the same fence epoch",
        ),
    );
}

#[test]
fn an_owners_load_and_a_put_in_one_fence_epoch_race() {
    check_local_race(
        (
            "tests/programs/rma/local_load_put_same_fence.c",
            "tests/programs/rma/local_load_put_after_fence.c",
            "rank 0 saw 7",
        ),
        ("MPI_Put(", "seen = base[1];"),
        (
            "bytes 4..8",
            "`MPI_Put` by rank 1 and a load by rank 0",
            "the load reads what the operation writes",
        ),
    );
}

#[test]
fn an_owners_store_and_a_get_in_one_fence_epoch_race() {
    check_local_race(
        (
            "tests/programs/rma/local_store_get_same_fence.c",
            "tests/programs/rma/local_store_get_fence_between.c",
            "rank 1 got 9",
        ),
        ("MPI_Get(", "base[3] = 9;"),
        (
            "bytes 12..16",
            "`MPI_Get` by rank 1 and a store by rank 0",
            "the store changes what the operation reads",
        ),
    );
}

#[test]
fn an_owners_store_before_win_wait_races_with_a_put_of_its_exposure() {
    check_local_race(
        (
            "tests/programs/rma/pscw_local_store_before_wait.c",
            "tests/programs/rma/pscw_local_store_after_wait.c",
            "rank 0 holds 5",
        ),
        ("MPI_Put(", "base[0] = 5;"),
        (
            "bytes 0..4",
            "`MPI_Put` by rank 1 and a store by rank 0",
            "both are in the same exposure epoch of rank 0 (its `MPI_Win_post` to its `MPI_Win_wait`)",
        ),
    );
}

#[test]
fn an_owners_load_and_an_accumulate_in_one_fence_epoch_race() {
    check_local_race(
        (
            "tests/programs/rma/local_load_accumulate_same_fence.c",
            "tests/programs/rma/local_load_accumulate_after_fence.c",
            "rank 0 saw 8",
        ),
        ("MPI_Accumulate(", "seen = base[0];"),
        (
            "bytes 0..4",
            "`MPI_Accumulate` with `MPI_SUM` by rank 1 and a load by rank 0",
            "the load reads what the operation writes",
        ),
    );
}

/// A loop storing a whole row of the window: one race (its stores are
/// one range), on the put's 8 bytes; the put into the next row is clean.
#[test]
fn a_loop_over_a_row_is_one_race_with_a_put_into_it() {
    check_local_race(
        (
            "tests/programs/rma/local_row_loop_same_fence.c",
            "tests/programs/rma/local_row_loop_other_row.c",
            "rank 0 row 3 ends 31.5, row 4 starts 1",
        ),
        ("MPI_Put(", "m[3][j] = j * 0.5;"),
        (
            "bytes 1616..1624",
            "`MPI_Put` by rank 1 and a store by rank 0",
            "both write them; both are in the same fence epoch",
        ),
    );
}

/// Stores to every int of the window but the one a put writes, in its
/// epoch: no false alarm.
#[test]
fn an_owners_stores_beside_a_put_do_not_race() {
    let report = check_twin("tests/programs/rma/local_store_disjoint_put_fence.c");
    assert!(
        report.runs[0].stdout.contains("rank 0 holds 5 5 7 5"),
        "{}",
        report.runs[0].stdout
    );
}

/// An OpenMP loop of 4 threads storing a row of the window while a put
/// targets it: every thread's stores reach the epoch's ranges (one lock
/// per window slot), one race at the loop's store, and the run is
/// complete.
#[test]
fn a_row_stored_by_openmp_threads_is_one_race_with_a_put_into_it() {
    let source = "tests/programs/rma/local_row_openmp_same_fence.c";
    let report = check_program(source);
    assert_eq!(report.findings.len(), 1, "{:#?}", report.findings);
    assert!(
        report.findings[0]
            .message
            .contains("`MPI_Put` by rank 1 and a store by rank 0 race on bytes 89536..89544"),
        "{}",
        report.findings[0].message
    );
    assert!(report.complete, "{:?}", report.warnings);
}
