//! The runtime's potential senders against the offline oracle of
//! matches-before (seed 000 ch. 3), on the first interleaving of real runs:
//! no false potential match under either clock, and exactly the oracle's
//! senders under vector clocks (Theorem 5.5).

use crate::util::{build, describe, verify_json};
use mbh_trace::layout::InterleavingDir;
use mbh_trace::RankTrace;
use std::path::Path;

fn first_run(source: &str, np: u32, clocks: &str) -> (Vec<RankTrace>, String) {
    let _lock = mbh_tests::mpi_lock();
    let dir = tempfile::tempdir().unwrap();
    let exe = build(Path::new(source), dir.path());
    let (_, report, out) =
        verify_json(&exe, np, dir.path(), &["--clocks", clocks, "--keep-traces"]);
    let first = InterleavingDir::new(Path::new(&report.run_dir), 1);
    let traces = (0..np as i32)
        .map(|rank| {
            RankTrace::read(&first.trace(rank))
                .unwrap_or_else(|e| panic!("{e}\n{}", describe(&out)))
        })
        .collect();
    (traces, format!("{source} under {clocks}"))
}

fn check(source: &str, np: u32) {
    for clocks in ["lamport", "vector"] {
        let (traces, what) = first_run(source, np, clocks);
        let events: Vec<_> = traces.iter().flat_map(RankTrace::wildcard_events).collect();
        let oracle = mbh_analysis::potential_matches(&traces);
        let comparison = mbh_analysis::compare(&events, &oracle);
        assert!(
            comparison.is_sound(),
            "{what}: false potential matches {comparison:?}"
        );
        if clocks == "vector" {
            assert!(comparison.is_exact(), "{what}: missed {comparison:?}");
        }
    }
}

#[test]
fn s1_crooked_barrier_agrees_with_the_oracle() {
    check("tests/programs/s1_crooked_barrier.c", 3);
}

#[test]
fn s2_two_matches_agrees_with_the_oracle() {
    check("tests/programs/s2_two_matches.c", 3);
}

#[test]
fn s4_late_message_agrees_with_the_oracle() {
    check("tests/programs/s4_late_message.c", 3);
}

#[test]
fn s5_tags_agree_with_the_oracle() {
    check("tests/programs/s5_tags_pending.c", 3);
}

#[test]
fn s6_omission_is_sound_and_vector_clocks_are_exact() {
    check("tests/programs/s6_llcp_omission.c", 4);
}

#[test]
fn s11_reduce_agrees_with_the_oracle() {
    check("tests/programs/s11_reduce.c", 3);
}

#[test]
fn s7_any_tag_agrees_with_the_oracle() {
    check("tests/programs/s7_any_tag.c", 3);
}

#[test]
fn s8_ssend_agrees_with_the_oracle() {
    check("tests/programs/s8_ssend_order.c", 4);
}

#[test]
fn gatherv_agrees_with_the_oracle() {
    check("tests/programs/c1_gatherv_reduce.c", 3);
}

#[test]
fn allgatherv_agrees_with_the_oracle() {
    check("tests/programs/c2_allgatherv_orders.c", 3);
}

#[test]
fn ibarrier_agrees_with_the_oracle() {
    check("tests/programs/c3_ibarrier_orders.c", 3);
}

#[test]
fn p2_persistent_wildcard_agrees_with_the_oracle() {
    check("tests/programs/p2_persistent_wildcard.c", 3);
}

#[test]
fn p4_wildcard_mprobe_agrees_with_the_oracle() {
    check("tests/programs/p4_wildcard_mprobe.c", 3);
}

#[test]
fn s9_wildcard_probe_agrees_with_the_oracle() {
    check("tests/programs/s9_wildcard_probe.c", 3);
}

#[test]
fn polling_probes_agree_with_the_oracle() {
    check("tests/programs/w1_probe_poll.c", 4);
}

#[test]
fn a_duplicated_communicator_agrees_with_the_oracle() {
    check("tests/programs/w3_dup_comm_poll.c", 3);
}
