//! Issue 12, fault injection: a rank killed at a pseudo-random MPI call
//! with a pseudo-random signal (`MBHYBRID_FAULT_INJECT`, read by the
//! runtime's `fault.rs`) ends every time with a report that names that
//! rank, exit status 1, no panic of mbhybrid, and no process left. The
//! cases come from a fixed seed, so a failure replays.

use crate::util::{build, describe};
use mbh_tests::json::Report;
use mbh_tests::{mbhybrid, workspace_root};
use std::path::Path;
use std::process::Command;

/// (rank, call, signal) cases from a small linear congruential generator.
fn cases(seed: u64, count: usize) -> Vec<(i32, u32, i32)> {
    const SIGNALS: [i32; 4] = [libc::SIGKILL, libc::SIGSEGV, libc::SIGTERM, libc::SIGABRT];
    let mut state = seed;
    let mut next = move || {
        state = state
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (state >> 33) as usize
    };
    (0..count)
        .map(|_| (next() % 4, 1 + next() % 40, SIGNALS[next() % 4]))
        .map(|(rank, call, signal)| (rank as i32, call as u32, signal))
        .collect()
}

#[test]
fn a_rank_killed_at_any_call_is_reported_and_nothing_is_left() {
    let _lock = mbh_tests::mpi_lock();
    let dir = tempfile::tempdir().unwrap();
    let exe = build(Path::new("tests/programs/k4_fault_target.c"), dir.path());
    let cases = cases(8, 8);
    // The seed covers every signal and every rank.
    let signals: std::collections::BTreeSet<i32> = cases.iter().map(|c| c.2).collect();
    let ranks: std::collections::BTreeSet<i32> = cases.iter().map(|c| c.0).collect();
    assert_eq!((signals.len(), ranks.len()), (4, 4), "{cases:?}");
    for (n, (rank, call, signal)) in cases.into_iter().enumerate() {
        let runs = dir.path().join(format!("runs-{n}"));
        let out = Command::new(mbhybrid())
            .args(["verify", "--format", "json", "-n", "4", "--run-dir"])
            .arg(&runs)
            .arg(&exe)
            .current_dir(workspace_root())
            .env_remove("LD_LIBRARY_PATH")
            .env("MBHYBRID_FAULT_INJECT", format!("{rank}:{call}:{signal}"))
            .output()
            .unwrap();
        let case = format!(
            "rank {rank}, call {call}, signal {signal}\n{}",
            describe(&out)
        );
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!stderr.contains("panicked"), "{case}");
        let report: Report =
            serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}\n{case}"));
        assert_eq!(out.status.code(), Some(1), "{case}");
        let finding = report.findings.first().unwrap_or_else(|| panic!("{case}"));
        match signal {
            // Signals the runtime's handlers record: the rank is known.
            libc::SIGABRT | libc::SIGSEGV => {
                assert_eq!(finding.ranks, vec![rank], "{case}");
                let expected = if signal == libc::SIGABRT {
                    format!("rank {rank} called `abort()`")
                } else {
                    format!("rank {rank} crashed with SIGSEGV")
                };
                assert!(finding.message.starts_with(&expected), "{case}");
            }
            // SIGKILL and SIGTERM leave no record: the rank is named when
            // the order of deaths is known, and no other rank is blamed.
            _ => {
                assert!(finding.ranks.contains(&rank), "{case}");
                assert!(crate::faults::blames_only(&finding.message, rank), "{case}");
            }
        }
        let left = Command::new("pgrep").arg("-f").arg(&exe).output().unwrap();
        assert!(
            left.stdout.is_empty(),
            "processes left: {}\n{case}",
            String::from_utf8_lossy(&left.stdout)
        );
    }
}

#[test]
fn without_a_fault_the_target_is_clean() {
    crate::util::check_program("tests/programs/k4_fault_target.c");
}
