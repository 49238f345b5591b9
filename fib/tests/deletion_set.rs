//! The deletion set: the irrelevant verdicts hold for every irrelevant
//! barrier deleted at once, as `audit-barriers --patch` deletes them.

mod common;

use common::*;
use mbh_fib::{audit, Audit, Options, UnknownReason, Verdict};
use mbh_trace::{OpKind, RankTrace};

/// The audit, checked by brute force ([`check_deletion_set`]).
fn audit_runs(runs: &[Vec<RankTrace>]) -> Audit {
    let a = audit(runs, FULL, &Options::default());
    check_deletion_set(runs, &a);
    a
}

/// P0: Irecv(*); Wait (takes P1's message); the barriers; Recv(from 2).
/// P1: Send(to 0); the barriers.  P2: the barriers; Send(to 0).
/// `barriers` gives each barrier call's site, in order.
fn ordered_by(barriers: &[u32]) -> Vec<RankTrace> {
    let mut p1 = Rank::new(1);
    let s1 = p1.send(0, 0, 11);
    let mut p2 = Rank::new(2);
    let mut p0 = Rank::new(0);
    let r = p0.irecv(Any, Some(0), 1);
    p0.wait_recv(r, 2, (1, s1), 0);
    for &site in barriers {
        p0.barrier(site);
        p1.barrier(site);
        p2.barrier(site);
    }
    let s2 = p2.send(0, 0, 21);
    p0.recv(from(2), Some(0), 3, (2, s2), 0);
    run(vec![p0, p1, p2])
}

#[test]
fn of_two_barriers_ordering_one_pair_the_second_is_kept() {
    let runs = vec![ordered_by(&[10, 20])];
    // Alone, each barrier is irrelevant: the other orders the pair.
    for site in [10, 20] {
        let one = [site];
        let runs_one = vec![ordered_by(&one)];
        assert!(
            matches!(
                audit_runs(&runs_one).verdict(site),
                Some(Verdict::Relevant { .. })
            ),
            "a single barrier between them orders the pair"
        );
    }
    let a = audit_runs(&runs);
    assert_eq!(a.verdict(10), Some(&Verdict::Irrelevant));
    let Some(Verdict::Relevant {
        evidence,
        after_deleting,
        findings,
    }) = a.verdict(20)
    else {
        panic!("{:?}", a.verdict(20))
    };
    assert_eq!(after_deleting, &vec![10]);
    assert_eq!(*findings, 1);
    assert_eq!((evidence.receive.rank, evidence.receive.site), (0, 1));
    assert_eq!((evidence.send.rank, evidence.send.site), (2, 21));
    assert_eq!(evidence.send.kind, OpKind::Send);
    assert_eq!(evidence.barrier.seq, 1, "the second barrier instance");
    let mut member_sites: Vec<u32> = evidence.members.iter().map(|m| m.site).collect();
    member_sites.dedup();
    assert_eq!(member_sites, vec![20]);
    // The path goes from R's match through the kept barrier to S's match,
    // never through the deleted one.
    let path: Vec<String> = evidence.path.iter().map(|s| s.node.to_string()).collect();
    assert!(
        path.first().is_some_and(|p| p.contains("MPI_Irecv")),
        "{path:?}"
    );
    assert!(
        path.iter().any(|p| p.contains("MPI_Barrier #1")),
        "{path:?}"
    );
    assert!(
        !path.iter().any(|p| p.contains("MPI_Barrier #0")),
        "{path:?}"
    );
    assert!(path.last().is_some_and(|p| p.contains("P2#")), "{path:?}");
    assert_eq!(a.irrelevant_sites().collect::<Vec<_>>(), vec![10]);
    // In the JSON report, the verdict stays `relevant`, with the sites.
    let json = serde_json::to_value(&a).unwrap();
    let kept = &json["barriers"][1];
    assert_eq!(kept["verdict"], "relevant");
    assert_eq!(kept["after_deleting"], serde_json::json!([10]));
    assert!(json["barriers"][0].get("after_deleting").is_none());
}

#[test]
fn the_lower_site_goes_first() {
    // The same program with the sites the other way round: the barrier
    // with the lower site id is deleted, whichever comes first.
    let a = audit_runs(&[ordered_by(&[20, 10])]);
    assert_eq!(a.verdict(10), Some(&Verdict::Irrelevant));
    assert!(matches!(
        a.verdict(20),
        Some(Verdict::Relevant { after_deleting, .. }) if after_deleting == &vec![10]
    ));
}

#[test]
fn a_site_whose_instances_order_a_pair_together_is_kept() {
    // One site called twice in a row (a loop): each instance alone orders
    // nothing the other does not, but deleting the site deletes both.
    let a = audit_runs(&[ordered_by(&[10, 10])]);
    let Some(Verdict::Relevant {
        evidence,
        after_deleting,
        ..
    }) = a.verdict(10)
    else {
        panic!("{:?}", a.verdict(10))
    };
    assert!(after_deleting.is_empty());
    assert_eq!((evidence.send.rank, evidence.send.site), (2, 21));
}

#[test]
fn a_single_irrelevant_barrier_stays_irrelevant() {
    // Seed 004 Example 4: P2's send after the barrier can still reach
    // P0's Irecv, whose Wait comes after the barrier.
    let runs: Vec<_> = [false, true]
        .into_iter()
        .map(|p2_wins| {
            let mut p1 = Rank::new(1);
            let s1 = p1.isend(0, 0, 11);
            p1.barrier(12);
            let mut p2 = Rank::new(2);
            p2.barrier(21);
            let s2 = p2.isend(0, 0, 22);
            let mut p0 = Rank::new(0);
            let r = p0.irecv(Any, Some(0), 1);
            p0.barrier(2);
            let sent = if p2_wins { (2, s2) } else { (1, s1) };
            p0.wait_recv(r, 3, sent, 0);
            run(vec![p0, p1, p2])
        })
        .collect();
    let a = audit_runs(&runs);
    for site in [2, 12, 21] {
        assert_eq!(a.verdict(site), Some(&Verdict::Irrelevant), "site {site}");
    }
}

/// Rounds of: P0 takes one message from each worker with wildcard
/// receives and answers each; then everyone meets at two barriers (sites
/// 3 and 5) that the answers make useless, each alone and both together.
fn answered_rounds(iterations: usize) -> Vec<RankTrace> {
    let mut ranks: Vec<Rank> = (0..3).map(Rank::new).collect();
    for _ in 0..iterations {
        let mut sent = Vec::new();
        for (w, rank) in ranks.iter_mut().enumerate().skip(1) {
            let s = rank.isend(0, 0, 10);
            rank.wait(s, 11);
            sent.push((w as i32, s));
        }
        for &from_worker in &sent {
            let r = ranks[0].irecv(Any, Some(0), 1);
            ranks[0].wait_recv(r, 2, from_worker, 0);
        }
        for w in 1..3 {
            let go = ranks[0].send(w, 7, 4);
            ranks[w as usize].recv(from(0), Some(7), 12, (0, go), 7);
        }
        for rank in ranks.iter_mut() {
            rank.barrier(3);
            rank.barrier(5);
        }
    }
    run(ranks)
}

#[test]
fn independent_irrelevant_barriers_all_stay_irrelevant() {
    let a = audit_runs(&[answered_rounds(4)]);
    assert!(a.stats.pairs > 0, "{:?}", a.stats);
    for site in [3, 5] {
        assert_eq!(a.verdict(site), Some(&Verdict::Irrelevant), "site {site}");
    }
    // Barriers on two communicators, with nothing to order: two units,
    // both deleted.
    const SUB: u64 = 0x8400_0002;
    let mut p0 = Rank::new(0);
    let mut p1 = Rank::new(1);
    p0.barrier(30);
    p1.barrier(31);
    p0.barrier_on(SUB, 40);
    p1.barrier_on(SUB, 41);
    let a = audit_runs(&[run(vec![p0, p1])]);
    for site in [30, 31, 40, 41] {
        assert_eq!(a.verdict(site), Some(&Verdict::Irrelevant), "site {site}");
    }
}

#[test]
fn a_site_meeting_a_relevant_one_in_an_instance_is_unknown() {
    // P0 calls one barrier site twice; P1 calls site 11, then site 12;
    // P2 calls site 20 twice. The second instance is relevant (seed 004
    // Example 4(a)), the first is not: site 11 takes part only in the
    // first, but deleting it would make P1's site-12 call meet P0's first.
    let mut p1 = Rank::new(1);
    p1.barrier(11);
    let s1 = p1.isend(0, 0, 13);
    p1.barrier(12);
    let mut p2 = Rank::new(2);
    p2.barrier(20);
    p2.barrier(20);
    let s2 = p2.send(0, 0, 21);
    let mut p0 = Rank::new(0);
    p0.barrier(10);
    let r = p0.irecv(Any, Some(0), 1);
    p0.wait_recv(r, 2, (1, s1), 0);
    p0.barrier(10);
    p0.recv(from(2), Some(0), 3, (2, s2), 0);
    let a = audit_runs(&[run(vec![p0, p1, p2])]);
    for site in [10, 12, 20] {
        assert!(
            matches!(a.verdict(site), Some(Verdict::Relevant { .. })),
            "site {site}: {:?}",
            a.verdict(site)
        );
    }
    assert_eq!(
        a.verdict(11),
        Some(&Verdict::Unknown(UnknownReason::MeetsKeptBarrier {
            kept: 10
        }))
    );
}

/// bench/diffusion.c's shape: per step, a barrier, P0 takes one message
/// from each worker with wildcard receives, another barrier. Alone each
/// barrier is irrelevant (the other orders the next step's messages after
/// this step's receives); together the second is kept.
fn two_barriers_per_step(steps: usize, swap: bool) -> Vec<RankTrace> {
    let mut ranks: Vec<Rank> = (0..3).map(Rank::new).collect();
    for k in 0..steps {
        for rank in ranks.iter_mut() {
            rank.barrier(19);
        }
        let mut sent = Vec::new();
        for (w, rank) in ranks.iter_mut().enumerate().skip(1) {
            sent.push((w as i32, rank.send(0, 2, 30)));
        }
        if swap && k % 2 == 1 {
            sent.reverse();
        }
        for &from_worker in &sent {
            ranks[0].recv(Any, Some(2), 27, from_worker, 2);
        }
        for rank in ranks.iter_mut() {
            rank.barrier(35);
        }
    }
    run(ranks)
}

#[test]
fn the_deletion_set_costs_a_window_per_receive_not_the_trace() {
    let runs = |steps| {
        [
            two_barriers_per_step(steps, false),
            two_barriers_per_step(steps, true),
        ]
    };
    audit_runs(&runs(5));
    let audit_steps = |steps| audit(&runs(steps), FULL, &Options::default());
    let (small, large) = (audit_steps(50), audit_steps(200));
    for a in [&small, &large] {
        assert_eq!(a.verdict(19), Some(&Verdict::Irrelevant));
        assert!(matches!(
            a.verdict(35),
            Some(Verdict::Relevant { after_deleting, .. }) if after_deleting == &vec![19]
        ));
    }
    // Four times the steps: four times the receives, and (without the
    // barriers) every later message still ordered through its sender's
    // send-order chain, but the same window each.
    let per_receive =
        |a: &Audit| a.stats.deletion_visited as f64 / a.stats.wildcard_receives as f64;
    assert!(small.stats.deletion_visited > 0);
    assert!(
        per_receive(&large) < 1.2 * per_receive(&small),
        "{:?} vs {:?}",
        small.stats,
        large.stats
    );
}
