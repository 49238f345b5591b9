//! SCENARIOS.md F1-F6 (seed 004 Examples 1-5 and 4(a)), and a few more,
//! as the traces the runtime would write for every interleaving the
//! exploration runs.

mod common;

use common::*;
use mbh_fib::{audit, Audit, Coverage, Event, Node, Options, Order, UnknownReason, Verdict};
use mbh_trace::RankTrace;

/// The audit, cross-checked against one that also searches from S back
/// to R (CheckRelevant's swapped step), which must agree.
fn audit_runs(runs: &[Vec<RankTrace>], coverage: Coverage) -> Audit {
    let a = audit(runs, coverage, &Options::default());
    let both = Options {
        check_send_first: true,
        ..Options::default()
    };
    let b = audit(runs, coverage, &both);
    assert_eq!(a.barriers, b.barriers);
    check_deletion_set(runs, &a);
    a
}

/// The verdict on `site`, with the graphs' DOT written on failure.
fn expect(runs: &[Vec<RankTrace>], a: &Audit, site: u32, irrelevant: bool, name: &str) {
    let v = a.verdict(site);
    let ok = match v {
        Some(Verdict::Irrelevant) => irrelevant,
        Some(Verdict::Relevant { .. }) => !irrelevant,
        _ => false,
    };
    if !ok {
        let dumps: Vec<String> = runs
            .iter()
            .enumerate()
            .map(|(i, r)| dump(&graph(r), &format!("{name}-{i}")))
            .collect();
        panic!(
            "{name}: site {site} is {v:?}, expected {}; {}",
            if irrelevant { "irrelevant" } else { "relevant" },
            dumps.join("; ")
        );
    }
}

#[test]
fn f1_example_1_deadlocks_and_gives_no_verdict() {
    // P0 alone: Irecv(from 0, h); Wait(h); Barrier; Isend(to 0, 22).
    let mut p0 = Rank::new(0);
    let r = p0.irecv(from(0), Some(0), 1);
    p0.wait_blocked(r, 2);
    let runs = vec![run(vec![p0])];
    let a = audit_runs(
        &runs,
        Coverage {
            complete: true,
            deadlock_free: false,
        },
    );
    // The barrier never ran; had it, there would be no verdict either.
    assert!(matches!(
        a.verdict(3),
        None | Some(Verdict::Unknown(UnknownReason::Deadlock))
    ));
}

#[test]
fn f1b_example_1_altered_is_irrelevant() {
    // P0 alone: Irecv(from 0, x, h); Barrier; Isend(to 0, 22); Wait(h).
    let mut p0 = Rank::new(0);
    let r = p0.irecv(from(0), Some(0), 1);
    p0.barrier(2);
    let s = p0.isend(0, 0, 3);
    p0.wait_recv(r, 4, (0, s), 0);
    let runs = vec![run(vec![p0])];
    let a = audit_runs(&runs, FULL);
    expect(&runs, &a, 2, true, "f1b");
}

#[test]
fn f2_example_2_is_irrelevant() {
    // P0: Irecv(*, x, h); Barrier; Isend(to 0, 22); Wait(h).
    // P1: Isend(to 0, 33); Barrier.
    let runs: Vec<_> = [false, true]
        .into_iter()
        .map(|takes_own| {
            let mut p1 = Rank::new(1);
            let s1 = p1.isend(0, 0, 11);
            p1.barrier(12);
            let mut p0 = Rank::new(0);
            let r = p0.irecv(Any, Some(0), 1);
            p0.barrier(2);
            let s0 = p0.isend(0, 0, 3);
            let sent = if takes_own { (0, s0) } else { (1, s1) };
            p0.wait_recv(r, 4, sent, 0);
            run(vec![p0, p1])
        })
        .collect();
    let a = audit_runs(&runs, FULL);
    expect(&runs, &a, 2, true, "f2");
    expect(&runs, &a, 12, true, "f2");
    // Each send is taken by the Irecv in one of the runs: no pair is new.
    assert_eq!(a.stats.pairs, 0);
    // Asked run by run, with nothing known of the other run, the pairs
    // are unordered.
    for r in &runs {
        let g = graph(r);
        let found = mbh_fib::check_relevant(&g, r, &mbh_fib::Taken::default());
        assert_eq!((found.stats.pairs, found.stats.ordered_pairs), (1, 0));
    }
}

#[test]
fn f3_example_3_is_irrelevant() {
    // P0: Irecv(*, x, h); Barrier; Wait(h).
    // P1: Isend(to 0, 33); Barrier; Isend(to 0, 22). x is always 33.
    let mut p1 = Rank::new(1);
    let s33 = p1.isend(0, 0, 11);
    p1.barrier(12);
    p1.isend(0, 0, 13);
    let mut p0 = Rank::new(0);
    let r = p0.irecv(Any, Some(0), 1);
    p0.barrier(2);
    p0.wait_recv(r, 3, (1, s33), 0);
    let runs = vec![run(vec![p0, p1])];
    let a = audit_runs(&runs, FULL);
    expect(&runs, &a, 2, true, "f3");
    // The pair (R, second Isend) is ordered, by FIFO alone.
    assert_eq!(a.stats.ordered_pairs, 1);
}

fn f4(wait_before_barrier: bool, p2_wins: bool) -> Vec<RankTrace> {
    // P0: Irecv(*, x, h); Barrier; Wait(h)   (4(a): Wait before Barrier).
    // P1: Isend(to 0, 33); Barrier.   P2: Barrier; Isend(to 0, 22).
    let mut p1 = Rank::new(1);
    let s1 = p1.isend(0, 0, 11);
    p1.barrier(12);
    let mut p2 = Rank::new(2);
    p2.barrier(21);
    let s2 = p2.isend(0, 0, 22);
    let mut p0 = Rank::new(0);
    let r = p0.irecv(Any, Some(0), 1);
    let sent = if p2_wins { (2, s2) } else { (1, s1) };
    if wait_before_barrier {
        p0.wait_recv(r, 3, sent, 0);
        p0.barrier(2);
    } else {
        p0.barrier(2);
        p0.wait_recv(r, 3, sent, 0);
    }
    run(vec![p0, p1, p2])
}

#[test]
fn f4_example_4_is_irrelevant() {
    let runs = vec![f4(false, false), f4(false, true)];
    let a = audit_runs(&runs, FULL);
    for site in [2, 12, 21] {
        expect(&runs, &a, site, true, "f4");
    }
}

#[test]
fn f4a_example_4a_is_relevant_with_p0_irecv_and_p2_isend() {
    // Only one interleaving: P2's Isend cannot be issued before the Irecv
    // completed.
    let runs = vec![f4(true, false)];
    let a = audit_runs(&runs, FULL);
    for site in [2, 12, 21] {
        expect(&runs, &a, site, false, "f4a");
    }
    let Some(Verdict::Relevant {
        evidence, findings, ..
    }) = a.verdict(2)
    else {
        unreachable!()
    };
    assert_eq!(*findings, 1);
    assert_eq!(
        (
            evidence.receive.rank,
            evidence.receive.index,
            evidence.receive.site
        ),
        (0, 1, 1)
    );
    assert_eq!(evidence.receive.kind, mbh_trace::OpKind::Irecv);
    assert_eq!((evidence.send.rank, evidence.send.site), (2, 22));
    assert_eq!(evidence.send.kind, mbh_trace::OpKind::Isend);
    assert_eq!(evidence.order, Order::ReceiveFirst);
    assert_eq!((evidence.barrier.comm, evidence.barrier.seq), (WORLD, 0));
    let mut member_sites: Vec<u32> = evidence.members.iter().map(|m| m.site).collect();
    member_sites.sort_unstable();
    assert_eq!(member_sites, vec![2, 12, 21]);
    // The path: R's match, its completion, the Wait, P0's barrier, the
    // match set, P2's barrier, P2's Isend's issue and match.
    let path = &evidence.path;
    assert!(
        matches!(path.first().map(|s| s.node), Some(Node::Match { receive, .. }) if receive.index == 1)
    );
    assert!(path
        .iter()
        .any(|s| matches!(s.node, Node::Collective(c) if c.is_barrier())));
    assert!(matches!(
        path.last().map(|s| s.node),
        Some(Node::Event { op, event: Event::SendMatch }) if op.rank == 2
    ));
    let text: Vec<String> = path.iter().map(|s| s.node.to_string()).collect();
    assert!(text.iter().any(|t| t.contains("MPI_Wait")), "{text:?}");
}

#[test]
fn f4a_stays_relevant_when_other_runs_are_irrelevant() {
    let runs = vec![f4(false, false), f4(true, false)];
    let a = audit_runs(&runs, FULL);
    let Some(Verdict::Relevant { evidence, .. }) = a.verdict(21) else {
        panic!("{:?}", a.verdict(21))
    };
    assert_eq!(evidence.interleaving, 1);
}

#[test]
fn f5_example_5_is_irrelevant() {
    // P0: Barrier; Send(to 2).   P1: Send(to 2); Barrier.
    // P2: Irecv(from 1, h); Barrier; Recv(*); Wait(h).
    let mut p0 = Rank::new(0);
    p0.barrier(1);
    let s0 = p0.send(2, 0, 2);
    let mut p1 = Rank::new(1);
    let s1 = p1.send(2, 0, 11);
    p1.barrier(12);
    let mut p2 = Rank::new(2);
    let specific = p2.irecv(from(1), Some(0), 21);
    p2.barrier(22);
    p2.recv(Any, Some(0), 23, (0, s0), 0);
    p2.wait_recv(specific, 24, (1, s1), 0);
    let runs = vec![run(vec![p0, p1, p2])];
    for buffering in [mbh_fib::SendBuffering::Eager, mbh_fib::SendBuffering::Zero] {
        let options = Options {
            buffering,
            check_send_first: true,
        };
        let a = audit(&runs, FULL, &options);
        for site in [1, 12, 22] {
            expect(&runs, &a, site, true, "f5");
        }
        // P1's send is ordered before the wildcard (found by the swapped
        // search), by the Irecv alone.
        assert_eq!(a.stats.ordered_pairs, 1, "{buffering:?}");
    }
}

#[test]
fn f6_diffusion_without_wildcards_is_irrelevant() {
    // A 2x2 grid, two steps: each rank sends to and receives from its two
    // neighbours, waits, and meets the others at a barrier; a last
    // barrier before the end.
    let neighbours = |r: i32| [r ^ 1, r ^ 2];
    let mut ranks: Vec<Rank> = (0..4).map(Rank::new).collect();
    // Record indices are deterministic: compute each rank's sends first.
    let mut send_index = vec![vec![]; 4];
    for step in 0..2 {
        for (r, rank) in ranks.iter_mut().enumerate() {
            let r = r as i32;
            let sends: Vec<u64> = neighbours(r)
                .iter()
                .map(|&n| rank.isend(n, step, 100))
                .collect();
            send_index[r as usize].push(sends);
        }
        for (r, rank) in ranks.iter_mut().enumerate() {
            let r = r as i32;
            let recvs: Vec<(u64, i32)> = neighbours(r)
                .iter()
                .map(|&n| (rank.irecv(from(n), Some(step), 101), n))
                .collect();
            for &s in &send_index[r as usize][step as usize] {
                rank.wait(s, 102);
            }
            for (i, n) in recvs {
                let k = neighbours(n).iter().position(|&m| m == r).unwrap();
                let s = send_index[n as usize][step as usize][k];
                rank.wait_recv(i, 103, (n, s), step);
            }
            rank.barrier(104);
        }
    }
    for rank in &mut ranks {
        rank.barrier(105);
    }
    let runs = vec![run(ranks)];
    let a = audit_runs(&runs, FULL);
    assert_eq!(a.barriers.len(), 2);
    expect(&runs, &a, 104, true, "f6");
    expect(&runs, &a, 105, true, "f6");
    assert_eq!(a.stats.wildcard_receives, 0);
    let g = graph(&runs[0]);
    assert!(g.issues().is_empty(), "{:?}", g.issues());
}

#[test]
fn s1_crooked_barrier_is_irrelevant() {
    // P0: Isend(to 1, 22); Barrier; Wait.  P1: Irecv(*, x); Barrier;
    // Recv(*, y); Wait.  P2: Barrier; Isend(to 1, 33); Wait.
    let runs: Vec<_> = [false, true]
        .into_iter()
        .map(|swap| {
            let mut p0 = Rank::new(0);
            let s0 = p0.isend(1, 0, 1);
            p0.barrier(2);
            p0.wait(s0, 3);
            let mut p2 = Rank::new(2);
            p2.barrier(21);
            let s2 = p2.isend(1, 0, 22);
            p2.wait(s2, 23);
            let (first, second) = if swap {
                ((2, s2), (0, s0))
            } else {
                ((0, s0), (2, s2))
            };
            let mut p1 = Rank::new(1);
            let x = p1.irecv(Any, Some(0), 11);
            p1.barrier(12);
            p1.recv(Any, Some(0), 13, second, 0);
            p1.wait_recv(x, 14, first, 0);
            run(vec![p0, p1, p2])
        })
        .collect();
    let a = audit_runs(&runs, FULL);
    for site in [2, 12, 21] {
        expect(&runs, &a, site, true, "s1");
    }
}

#[test]
fn relevance_on_a_sub_communicator() {
    // F4a on a communicator of P0, P1, P2 whose handle is not the world's
    // (same ranks), plus a world barrier that orders nothing.
    const SUB: u64 = 0x8400_0002;
    let mut p1 = Rank::new(1);
    let s1 = p1.isend_on(SUB, 0, 0, 11);
    p1.barrier_on(SUB, 12);
    p1.barrier(13);
    let mut p2 = Rank::new(2);
    p2.barrier_on(SUB, 21);
    p2.isend_on(SUB, 0, 0, 22);
    p2.barrier(23);
    let mut p0 = Rank::new(0);
    let r = p0.irecv_on(SUB, Any, Some(0), 1);
    p0.wait_recv(r, 3, (1, s1), 0);
    p0.barrier_on(SUB, 2);
    p0.barrier(4);
    let runs = vec![run(vec![p0, p1, p2])];
    let a = audit_runs(&runs, FULL);
    for site in [2, 12, 21] {
        expect(&runs, &a, site, false, "sub");
    }
    let b = a.barriers.iter().find(|b| b.site == 2).unwrap();
    assert_eq!(b.comms, vec![SUB]);
    for site in [4, 13, 23] {
        expect(&runs, &a, site, true, "sub");
    }
}

#[test]
fn unknown_when_bounded_or_traces_are_incomplete() {
    let runs = vec![f4(false, false)];
    let a = audit_runs(
        &runs,
        Coverage {
            complete: false,
            deadlock_free: true,
        },
    );
    assert_eq!(
        a.verdict(2),
        Some(&Verdict::Unknown(UnknownReason::Bounded))
    );
    // A relevant site stays relevant under a bound.
    let runs = vec![f4(true, false)];
    let a = audit_runs(
        &runs,
        Coverage {
            complete: false,
            deadlock_free: true,
        },
    );
    assert!(matches!(a.verdict(2), Some(Verdict::Relevant { .. })));
    // A wildcard receive nobody says the match of.
    let mut p0 = Rank::new(0);
    p0.irecv(Any, Some(0), 1);
    p0.barrier(2);
    let mut p1 = Rank::new(1);
    p1.barrier(12);
    let runs = vec![run(vec![p0, p1])];
    let a = audit_runs(&runs, FULL);
    assert!(matches!(
        a.verdict(2),
        Some(Verdict::Unknown(UnknownReason::Trace {
            interleaving: 0,
            ..
        }))
    ));
}

#[test]
fn a_match_seen_in_another_run_is_not_asked_about() {
    // F4a's single run says P2's Isend is kept from P0's Irecv; if another
    // run (impossible in reality) had the Irecv take it, the pair is not
    // a new match and the barrier is not relevant through it.
    let runs = vec![f4(true, false), f4(true, true)];
    let a = audit_runs(&runs, FULL);
    // In the second run, R took P2's Isend; P1's Isend is then the
    // candidate, and it precedes the barrier: unordered.
    expect(&runs, &a, 2, true, "taken");
}

#[test]
fn f4a_stays_relevant_when_a_later_receive_takes_the_send() {
    // F4a with P0 receiving P2's message after its barrier: the receive
    // that took it is this run's outcome, not a constraint on the send, so
    // it does not order the Irecv before the send.
    let mut p1 = Rank::new(1);
    let s1 = p1.isend(0, 0, 11);
    p1.barrier(12);
    let mut p2 = Rank::new(2);
    p2.barrier(21);
    let s2 = p2.isend(0, 0, 22);
    p2.wait(s2, 23);
    let mut p0 = Rank::new(0);
    let r = p0.irecv(Any, None, 1);
    p0.wait_recv(r, 3, (1, s1), 0);
    p0.barrier(2);
    p0.recv(from(2), None, 4, (2, s2), 0);
    let runs = vec![run(vec![p0, p1, p2])];
    let a = audit_runs(&runs, FULL);
    for site in [2, 12, 21] {
        expect(&runs, &a, site, false, "f4a-later");
    }
}

/// `iterations` rounds of: P0 takes one message from each of P1..P3 with
/// wildcard receives, tells each worker to go on, and all meet at a
/// barrier that the go messages make useless.
fn rounds(iterations: usize) -> Vec<RankTrace> {
    let mut ranks: Vec<Rank> = (0..4).map(Rank::new).collect();
    for i in 0..iterations {
        let mut sent = Vec::new();
        for (w, rank) in ranks.iter_mut().enumerate().skip(1) {
            let s = rank.isend(0, 0, 10);
            rank.wait(s, 11);
            sent.push((w as i32, s));
        }
        // A different order of arrival each round.
        sent.rotate_left(i % 3);
        for &from_worker in &sent {
            let r = ranks[0].irecv(Any, Some(0), 1);
            ranks[0].wait_recv(r, 2, from_worker, 0);
        }
        for w in 1..4 {
            let go = ranks[0].send(w, 7, 4);
            ranks[w as usize].recv(from(0), Some(7), 12, (0, go), 7);
        }
        for rank in ranks.iter_mut() {
            rank.barrier(3);
        }
    }
    run(ranks)
}

#[test]
fn long_traces_cost_a_window_per_receive_not_the_trace() {
    let small = audit(&[rounds(50)], FULL, &Options::default());
    let large = audit(&[rounds(200)], FULL, &Options::default());
    for a in [&small, &large] {
        assert_eq!(a.verdict(3), Some(&Verdict::Irrelevant), "{:?}", a.stats);
    }
    // Four times the rounds: four times the receives, each with four
    // times the candidate sends, but the same window each.
    let per_receive = |a: &Audit| a.stats.visited as f64 / a.stats.wildcard_receives as f64;
    assert_eq!(
        large.stats.wildcard_receives,
        4 * small.stats.wildcard_receives
    );
    assert!(
        per_receive(&large) < 1.2 * per_receive(&small),
        "{:?} vs {:?}",
        small.stats,
        large.stats
    );
    // The swapped search agrees (it searches whole windows: kept short).
    let both = Options {
        check_send_first: true,
        ..Options::default()
    };
    let few = [rounds(6)];
    assert_eq!(
        audit(&few, FULL, &both).barriers,
        audit(&few, FULL, &Options::default()).barriers
    );
}

#[test]
fn workers_running_ahead_make_a_barrier_relevant() {
    // The same rounds without the go messages: without the barrier, a
    // worker's next message could reach a wildcard receive of this round.
    let mut ranks: Vec<Rank> = (0..3).map(Rank::new).collect();
    for _ in 0..3 {
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
        for rank in ranks.iter_mut() {
            rank.barrier(3);
        }
    }
    let runs = vec![run(ranks)];
    let a = audit_runs(&runs, FULL);
    let Some(Verdict::Relevant { evidence, .. }) = a.verdict(3) else {
        panic!("{:?}", a.verdict(3))
    };
    // The second receive of a round, and the first worker's next send.
    assert_eq!((evidence.receive.rank, evidence.send.rank), (0, 1));
    assert!(evidence.send.index > evidence.members[1].index);
}

#[test]
fn verdicts_serialize_for_the_json_report() {
    let runs = vec![f4(true, false)];
    let relevant = serde_json::to_value(audit_runs(&runs, FULL)).unwrap();
    let site = &relevant["barriers"][0];
    assert_eq!(site["verdict"], "relevant");
    assert_eq!(site["evidence"]["receive"]["kind"], "Irecv");
    assert_eq!(site["evidence"]["order"], "receive-first");
    let bounded = Coverage {
        complete: false,
        deadlock_free: true,
    };
    let unknown = serde_json::to_value(audit_runs(&[f4(false, false)], bounded)).unwrap();
    assert_eq!(unknown["barriers"][0]["verdict"], "unknown");
    assert_eq!(unknown["barriers"][0]["reason"], "bounded");
    let mut p0 = Rank::new(0);
    p0.irecv(Any, Some(0), 1);
    p0.barrier(2);
    let trace = serde_json::to_value(audit_runs(&[run(vec![p0])], FULL)).unwrap();
    assert_eq!(trace["barriers"][0]["reason"], "trace");
    assert_eq!(
        trace["barriers"][0]["issue"]["issue"],
        "unresolved-wildcard"
    );
}
