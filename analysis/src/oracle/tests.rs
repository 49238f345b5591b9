//! Hand-built traces of finished runs (SCENARIOS.md), with the records the
//! runtime writes: `Matched` after each receiving call (the `Recv`, or the
//! `Wait` of an `Irecv`), `WildcardClock` for each wildcard receive or
//! probe once it completed.

use super::*;
use mbh_trace::rank_trace::{RankEnd, RankState};

const WORLD: u64 = 0x4400_0000;
/// `MPI_ANY_SOURCE` as MPICH spells it (the oracle reads the flag).
const ANY: i32 = -2;

/// One call of a rank's program; `t` is the tag.
#[derive(Debug, Clone, Copy)]
enum C {
    Send(i32, i32),
    Ssend(i32, i32),
    Isend(i32, i32),
    Recv(i32, i32),
    Irecv(i32, i32),
    Probe(i32, i32),
    /// `MPI_Wait` on the request of the call at this position.
    Wait(usize),
    Barrier,
    Reduce(i32),
    Bcast(i32),
    /// Any blocking collective, with its root.
    Coll(OpKind, i32),
}

use C::*;

fn send(to: i32) -> C {
    Send(to, 0)
}
fn recv(from: i32) -> C {
    Recv(from, 0)
}

/// A message: the receiving call `(rank, position)` (for an `Irecv`, its
/// own position; for a probe, the message it saw) took the send `(rank,
/// position)`.
type Msg = ((usize, usize), (usize, usize));

fn record(kind: OpKind, peer: i32, tag: i32) -> Op {
    Op {
        index: 0,
        kind,
        flags: flags::RETURNED | if peer == ANY { flags::ANY_SOURCE } else { 0 },
        site: 0,
        peer,
        tag,
        comm: WORLD,
        count: 1,
        matched: None,
        error: 0,
        request: 0,
        aux: 0,
    }
}

/// A finished run: traces, record index of each call.
struct Job {
    traces: Vec<RankTrace>,
    index: Vec<Vec<u64>>,
}

impl Job {
    fn oracle(&self) -> Vec<OracleMatch> {
        potential_matches(&self.traces)
    }

    /// The oracle's senders of `rank`'s wildcard event `event`.
    fn senders(&self, rank: i32, event: u32) -> Vec<i32> {
        let all = self.oracle();
        let m = all
            .iter()
            .find(|m| m.rank == rank && m.event == event)
            .unwrap_or_else(|| panic!("no event {event} of rank {rank} in {all:?}"));
        m.senders.clone()
    }
}

/// Builds the traces of a finished run of `program` whose receives took
/// `messages`.
fn run(program: &[&[C]], messages: &[Msg]) -> Job {
    let took_map: std::collections::HashMap<(usize, usize), (usize, usize)> =
        messages.iter().copied().collect();
    let took = |rank: usize, position: usize| took_map.get(&(rank, position)).copied();
    // What completes at each call: the receive positions.
    let done_here = |rank: usize, position: usize| -> Vec<usize> {
        match program[rank][position] {
            Recv(..) | Probe(..) => vec![position],
            Wait(origin) if matches!(program[rank][origin], Irecv(..)) => vec![origin],
            _ => vec![],
        }
    };
    let wildcard = |c: C| matches!(c, Recv(ANY, _) | Irecv(ANY, _) | Probe(ANY, _));
    let extra = |rank: usize, position: usize| -> u64 {
        done_here(rank, position)
            .into_iter()
            .map(|r| {
                let probe = matches!(program[rank][r], Probe(..));
                u64::from(took(rank, r).is_some() && !probe)
                    + u64::from(wildcard(program[rank][r]) && took(rank, r).is_some())
            })
            .sum()
    };
    let index: Vec<Vec<u64>> = program
        .iter()
        .enumerate()
        .map(|(rank, calls)| {
            let mut next = 1;
            (0..calls.len())
                .map(|position| {
                    let at = next;
                    next += 1 + extra(rank, position);
                    at
                })
                .collect()
        })
        .collect();
    let handle = |rank: usize, position: usize| 0x9800_0000 + (rank * 64 + position) as u64;
    let traces = program
        .iter()
        .enumerate()
        .map(|(rank, calls)| {
            let mut ops = vec![record(OpKind::Init, 0, 0)];
            ops[0].index = 0;
            // Wildcard event numbers, in issue order.
            let events: Vec<i32> = calls
                .iter()
                .scan(0, |n, &c| {
                    let e = *n;
                    *n += i32::from(wildcard(c));
                    Some(e)
                })
                .collect();
            let event_of = |position: usize| events[position];
            for (position, &call) in calls.iter().enumerate() {
                let mut op = match call {
                    Send(to, t) => record(OpKind::Send, to, t),
                    Ssend(to, t) => record(OpKind::Ssend, to, t),
                    Isend(to, t) => Op {
                        request: handle(rank, position),
                        ..record(OpKind::Isend, to, t)
                    },
                    Recv(from, t) => record(OpKind::Recv, from, t),
                    Irecv(from, t) => Op {
                        request: handle(rank, position),
                        ..record(OpKind::Irecv, from, t)
                    },
                    Probe(from, t) => Op {
                        count: 0,
                        ..record(OpKind::Probe, from, t)
                    },
                    Wait(origin) => Op {
                        request: handle(rank, origin),
                        aux: index[rank][origin] + 1,
                        ..record(OpKind::Wait, 0, 0)
                    },
                    Barrier => record(OpKind::Barrier, 0, 0),
                    Reduce(root) => record(OpKind::Reduce, root, 0),
                    Bcast(root) => record(OpKind::Bcast, root, 0),
                    Coll(kind, root) => record(kind, root, 0),
                };
                op.index = index[rank][position];
                if let Some((sender, _)) = took(rank, position) {
                    op.flags |= flags::HAS_STATUS;
                    let tag = match program[sender][took(rank, position).unwrap().1] {
                        Send(_, t) | Ssend(_, t) | Isend(_, t) => t,
                        _ => 0,
                    };
                    op.matched = Some((sender as i32, tag));
                }
                let receiving = op.index;
                ops.push(op);
                for r in done_here(rank, position) {
                    let Some((sender, send)) = took(rank, r) else {
                        continue;
                    };
                    let event = if wildcard(program[rank][r]) {
                        event_of(r)
                    } else {
                        -1
                    };
                    if !matches!(program[rank][r], Probe(..)) {
                        ops.push(Op {
                            index: ops.len() as u64,
                            request: receiving,
                            aux: index[sender][send],
                            count: event,
                            ..record(OpKind::Matched, sender as i32, 0)
                        });
                    }
                    if event >= 0 {
                        ops.push(Op {
                            index: ops.len() as u64,
                            request: index[rank][r],
                            count: event,
                            ..record(OpKind::WildcardClock, sender as i32, 0)
                        });
                    }
                }
            }
            ops.push(Op {
                index: ops.len() as u64,
                ..record(OpKind::Finalize, 0, 0)
            });
            for (i, op) in ops.iter().enumerate() {
                assert_eq!(op.index, i as u64, "rank {rank}: {ops:?}");
            }
            RankTrace {
                rank: rank as i32,
                size: program.len() as i32,
                pid: 1000 + rank as u32,
                end: RankEnd {
                    state: RankState::Finalized,
                    exit_status: Some(0),
                    signal: None,
                    abort: None,
                    fault_addr: 0,
                    frames: Vec::new(),
                    exe_base: 0,
                    lost_records: 0,
                    tool_stop: None,
                },
                blocking: None,
                polling: None,
                held: false,
                ops,
            }
        })
        .collect();
    Job { traces, index }
}

/// S1, the crooked barrier (seed 000 Fig 3.2): P1's `Irecv(*)` floats past
/// the barrier, so P2's `Isend` after it is a potential match.
#[test]
fn s1_crooked_barrier() {
    let program: &[&[C]] = &[
        &[Isend(1, 0), Barrier, Wait(0)],
        &[Irecv(ANY, 0), Barrier, Recv(ANY, 0), Wait(0)],
        &[Barrier, Isend(1, 0), Wait(1)],
    ];
    let job = run(program, &[((1, 0), (0, 0)), ((1, 2), (2, 1))]);
    let all = job.oracle();
    assert_eq!(all.len(), 2);
    assert_eq!(
        all[0],
        OracleMatch {
            rank: 1,
            event: 0,
            op_index: job.index[1][0],
            kind: OpKind::Irecv,
            matched: 0,
            senders: vec![2],
            unreceived: vec![],
            enablers: vec![],
        }
    );
    // P0's message is taken by the Irecv, posted first.
    assert_eq!(all[1].senders, Vec::<i32>::new());
    // The other outcome: the Irecv took P2's, the Recv P0's.
    let job = run(program, &[((1, 0), (2, 1)), ((1, 2), (0, 0))]);
    assert_eq!(job.senders(1, 0), vec![0]);
    assert_eq!(job.senders(1, 1), Vec::<i32>::new());
}

/// With the `Wait` before the barrier the `Irecv` is fenced: P2's send is
/// ordered after it (SCENARIOS.md F4a's shape).
#[test]
fn a_waited_irecv_does_not_float_past_the_barrier() {
    let program: &[&[C]] = &[
        &[Isend(1, 0), Barrier, Wait(0)],
        &[Irecv(ANY, 0), Wait(0), Barrier, Recv(ANY, 0)],
        &[Barrier, Isend(1, 0), Wait(1)],
    ];
    let job = run(program, &[((1, 0), (0, 0)), ((1, 3), (2, 1))]);
    assert_eq!(job.senders(1, 0), Vec::<i32>::new());
}

/// S2 (Fig 3.1): both senders for P0's first receive, in either outcome.
#[test]
fn s2_two_matches() {
    let program: &[&[C]] = &[
        &[recv(ANY), recv(ANY)],
        &[send(0), send(2)],
        &[recv(1), send(0)],
    ];
    let job = run(
        program,
        &[((0, 0), (1, 0)), ((2, 0), (1, 1)), ((0, 1), (2, 1))],
    );
    assert_eq!(job.senders(0, 0), vec![2]);
    assert_eq!(job.senders(0, 1), Vec::<i32>::new());
    let job = run(
        program,
        &[((0, 0), (2, 1)), ((2, 0), (1, 1)), ((0, 1), (1, 0))],
    );
    assert_eq!(job.senders(0, 0), vec![1]);
    assert_eq!(job.senders(0, 1), Vec::<i32>::new());
}

/// S3 (Fig 3.3): no wildcard, nothing to list.
#[test]
fn s3_nonovertaking_has_no_potential_match() {
    let program: &[&[C]] = &[
        &[Barrier],
        &[Isend(2, 0), Barrier, send(2), Wait(0)],
        &[Irecv(1, 0), Barrier, recv(1), Wait(0)],
    ];
    let job = run(program, &[((2, 0), (1, 0)), ((2, 2), (1, 2))]);
    assert!(job.oracle().is_empty());
}

/// S4 (Fig 5.1): the late message is a potential match of the first
/// receive, whichever arrived first; the second receive has none.
#[test]
fn s4_late_message() {
    let program: &[&[C]] = &[&[send(1)], &[recv(ANY), recv(ANY)], &[send(1)]];
    for (first, second) in [(0, 2), (2, 0)] {
        let job = run(program, &[((1, 0), (first, 0)), ((1, 1), (second, 0))]);
        assert_eq!(job.senders(1, 0), vec![second as i32]);
        assert_eq!(job.senders(1, 1), Vec::<i32>::new());
    }
}

/// S5 (Fig 5.14). In one run only the two `Irecv`s have an alternative:
/// the other tag's message of each later `Recv` was taken by the `Irecv`
/// posted before it with the same tag, which matches before it (C4). Over
/// the four outcomes of the `Irecv`s (4 interleavings) every wildcard
/// receive takes both P1 and P2.
#[test]
fn s5_tags_and_pending_receives() {
    let program: &[&[C]] = &[
        &[
            Irecv(ANY, 2),
            Irecv(ANY, 3),
            Recv(ANY, 2),
            Recv(ANY, 3),
            Wait(0),
            Wait(1),
        ],
        &[Send(0, 2), Send(0, 3)],
        &[Send(0, 3), Send(0, 2)],
    ];
    // P1's sends: (1,0) tag 2, (1,1) tag 3; P2's: (2,0) tag 3, (2,1) tag 2.
    let tag2 = |r: usize| if r == 1 { (1, 0) } else { (2, 1) };
    let tag3 = |r: usize| if r == 1 { (1, 1) } else { (2, 0) };
    let mut taken: Vec<BTreeSet<i32>> = vec![BTreeSet::new(); 4];
    for a in [1, 2] {
        for b in [1, 2] {
            let job = run(
                program,
                &[
                    ((0, 0), tag2(a)),
                    ((0, 1), tag3(b)),
                    ((0, 2), tag2(3 - a)),
                    ((0, 3), tag3(3 - b)),
                ],
            );
            let all = job.oracle();
            let senders: Vec<Vec<i32>> = all.iter().map(|m| m.senders.clone()).collect();
            assert_eq!(
                senders,
                vec![vec![3 - a as i32], vec![3 - b as i32], vec![], vec![]]
            );
            for m in &all {
                taken[m.event as usize].insert(m.matched);
            }
        }
    }
    for t in taken {
        assert_eq!(t, BTreeSet::from([1, 2]));
    }
}

/// S6 (Fig 5.3): P0's send is a potential match of P2's first receive (the
/// case LLCP misses); LVCP must find it.
#[test]
fn s6_llcp_omission() {
    let program: &[&[C]] = &[
        &[recv(ANY), send(2)],
        &[send(2)],
        &[recv(ANY), recv(ANY)],
        &[send(0)],
    ];
    let job = run(
        program,
        &[((0, 0), (3, 0)), ((2, 0), (1, 0)), ((2, 1), (0, 1))],
    );
    assert_eq!(job.senders(2, 0), vec![0]);
    assert_eq!(job.senders(2, 1), Vec::<i32>::new());
    assert_eq!(job.senders(0, 0), Vec::<i32>::new());
}

/// S8 (§5.2.1, Fig 5.4): P1's `Ssend` matched P2's wildcard, so P1's next
/// send, and P3's send it enables, are ordered after it; P0's send is
/// concurrent. With a standard send nothing orders them.
#[test]
fn s8_synchronous_send_orders_later_sends() {
    for sync in [true, false] {
        let first = if sync { Ssend(2, 0) } else { send(2) };
        let program: &[&[C]] = &[
            &[send(2)],
            &[first, send(3)],
            &[recv(ANY), recv(ANY), recv(ANY)],
            &[recv(1), send(2)],
        ];
        let job = run(
            program,
            &[
                ((2, 0), (1, 0)),
                ((3, 0), (1, 1)),
                ((2, 1), (0, 0)),
                ((2, 2), (3, 1)),
            ],
        );
        let expected = if sync { vec![0] } else { vec![0, 3] };
        assert_eq!(job.senders(2, 0), expected, "sync {sync}");
    }
}

/// S8 the other way round (tests/programs/s8_ssend_order.c): P0's send
/// took the first wildcard and P1's `Ssend` the second. The `Ssend` was
/// still a potential match of the first (the receive it matched comes
/// after the first, its issue does not); P3's send, after the `Ssend`
/// returned, is not.
#[test]
fn s8_synchronous_send_matched_later_is_still_a_potential_match() {
    let program: &[&[C]] = &[
        &[send(2)],
        &[Ssend(2, 0), send(3)],
        &[recv(ANY), recv(ANY), recv(ANY)],
        &[recv(1), send(2)],
    ];
    let job = run(
        program,
        &[
            ((2, 0), (0, 0)),
            ((2, 1), (1, 0)),
            ((3, 0), (1, 1)),
            ((2, 2), (3, 1)),
        ],
    );
    assert_eq!(job.senders(2, 0), vec![1]);
}

/// S9: a wildcard probe, then a receive from the probed source.
#[test]
fn s9_wildcard_probe() {
    let program: &[&[C]] = &[
        &[Probe(ANY, 0), recv(1), Probe(ANY, 0), recv(2)],
        &[send(0)],
        &[send(0)],
    ];
    let job = run(
        program,
        &[
            ((0, 0), (1, 0)),
            ((0, 1), (1, 0)),
            ((0, 2), (2, 0)),
            ((0, 3), (2, 0)),
        ],
    );
    let all = job.oracle();
    assert_eq!(all.len(), 2);
    assert_eq!(all[0].kind, OpKind::Probe);
    assert_eq!(all[0].senders, vec![2]);
    assert_eq!(all[1].senders, Vec::<i32>::new());
}

/// S11 (seed 003 Fig 4): a non-root may leave `Reduce` early, so P2's send
/// after it is a potential match of P1's first `Recv(*)`. A `Barrier` in
/// its place orders that send after the receive.
#[test]
fn s11_reduce_is_not_a_full_match_set() {
    for collective in [Reduce(1), Barrier, Bcast(1)] {
        let program: &[&[C]] = &[
            &[send(1), collective],
            &[recv(ANY), collective, recv(ANY)],
            &[collective, send(1)],
        ];
        let job = run(program, &[((1, 0), (0, 0)), ((1, 2), (2, 1))]);
        let expected = match collective {
            Reduce(_) => vec![2],
            _ => vec![],
        };
        assert_eq!(job.senders(1, 0), expected, "{collective:?}");
        assert_eq!(job.senders(1, 1), Vec::<i32>::new());
    }
}

/// S11's shape over the other collectives: the late send is a potential
/// sender of the first receive exactly when the collective does not order
/// P2's call after P1's: `ToRoot` ones rooted at P1, and prefix ones
/// (`Scan`, `Exscan`: P2's result needs P1's data, not the reverse, but P2
/// is the last rank, so it waits for P1 too; P0 is first and waits for
/// nobody).
#[test]
fn s11_follows_each_collectives_data_flow() {
    use OpKind::*;
    let cases: &[(OpKind, i32, &[i32])] = &[
        (Gather, 1, &[2]),
        (Gatherv, 1, &[2]),
        (Scatter, 1, &[]),
        (Scatterv, 2, &[2]),
        (Allgatherv, 0, &[]),
        (Alltoallw, 0, &[]),
        (ReduceScatter, 0, &[]),
        (Scan, 0, &[]),
        (Exscan, 0, &[]),
    ];
    for &(kind, root, expected) in cases {
        let collective = Coll(kind, root);
        let program: &[&[C]] = &[
            &[send(1), collective],
            &[recv(ANY), collective, recv(ANY)],
            &[collective, send(1)],
        ];
        let job = run(program, &[((1, 0), (0, 0)), ((1, 2), (2, 1))]);
        assert_eq!(job.senders(1, 0), expected, "{kind:?} root {root}");
    }
    // With the roles of P0 and P2 swapped, a prefix flow leaves the late
    // sender (now P0, the first rank) unordered.
    for kind in [Scan, Exscan] {
        let collective = Coll(kind, 0);
        let program: &[&[C]] = &[
            &[collective, send(1)],
            &[recv(ANY), collective, recv(ANY)],
            &[send(1), collective],
        ];
        let job = run(program, &[((1, 0), (2, 0)), ((1, 2), (0, 1))]);
        assert_eq!(job.senders(1, 0), [0], "{kind:?}");
    }
}

/// E4 (Fig 2.7): in the run that completes, P2 is a potential sender; in
/// the run that deadlocks, P0's message was never received, and P0 is
/// listed as unreceived.
#[test]
fn e4_nondeterministic_deadlock() {
    let program: &[&[C]] = &[&[send(1)], &[recv(ANY), recv(2)], &[send(1)]];
    let job = run(program, &[((1, 0), (0, 0)), ((1, 1), (2, 0))]);
    let all = job.oracle();
    assert_eq!(
        (all[0].senders.clone(), all[0].unreceived.clone()),
        (vec![2], vec![])
    );
    let job = run(program, &[((1, 0), (2, 0))]);
    let all = job.oracle();
    assert_eq!(all[0].matched, 2);
    assert_eq!(all[0].senders, vec![0]);
    assert_eq!(all[0].unreceived, vec![0]);
}

/// Receive non-overtaking (C4'): an `Irecv` from P0 still open when a later
/// `Recv(*)` took P0's second message matched before it, so P0's first
/// message (the `Irecv`'s) is not an alternative for the `Recv(*)`; P2's
/// is.
#[test]
fn an_open_specific_irecv_precedes_a_wildcard_that_took_its_source() {
    let program: &[&[C]] = &[
        &[send(1), send(1)],
        &[Irecv(0, 0), recv(ANY), Wait(0), recv(2)],
        &[send(1)],
    ];
    let job = run(
        program,
        &[((1, 0), (0, 0)), ((1, 1), (0, 1)), ((1, 3), (2, 0))],
    );
    assert_eq!(job.senders(1, 0), vec![2]);
}

/// A later message whose tag the receive does not accept is no
/// alternative.
#[test]
fn incompatible_tags_are_not_potential_matches() {
    let program: &[&[C]] = &[
        &[Send(1, 5)],
        &[Recv(ANY, 0), Recv(0, 5), recv(2)],
        &[send(1)],
    ];
    let job = run(program, &[((1, 0), (2, 0)), ((1, 1), (0, 0))]);
    assert_eq!(job.senders(1, 0), Vec::<i32>::new());
}

fn event(rank: i32, event: u32, op_index: u64, matched: i32, potential: Vec<i32>) -> WildcardEvent {
    WildcardEvent {
        rank,
        event,
        op_index,
        kind: OpKind::Recv,
        site: 0,
        start_clock: 0,
        final_clock: 0,
        matched,
        matched_tag: 0,
        potential,
        loops: vec![],
        zone: None,
        pattern: None,
        enablers: Vec::new(),
        forced: false,
        settled_in_loop: false,
    }
}

/// The comparison: LLCP's Fig 5.3 omission is a miss, a sender the oracle
/// rules out is a false match.
#[test]
fn compare_reports_misses_and_false_matches() {
    let program: &[&[C]] = &[
        &[recv(ANY), send(2)],
        &[send(2)],
        &[recv(ANY), recv(ANY)],
        &[send(0)],
    ];
    let job = run(
        program,
        &[((0, 0), (3, 0)), ((2, 0), (1, 0)), ((2, 1), (0, 1))],
    );
    let oracle = job.oracle();
    let at = |r: usize, p: usize| job.index[r][p];
    // LVCP: exact.
    let lvcp = vec![
        event(0, 0, at(0, 0), 3, vec![]),
        event(2, 0, at(2, 0), 1, vec![0]),
        event(2, 1, at(2, 1), 0, vec![]),
    ];
    assert!(compare(&lvcp, &oracle).is_exact());
    // LLCP: misses P0, sound.
    let llcp = vec![
        event(0, 0, at(0, 0), 3, vec![]),
        event(2, 0, at(2, 0), 1, vec![]),
        event(2, 1, at(2, 1), 0, vec![]),
    ];
    let c = compare(&llcp, &oracle);
    assert!(c.is_sound());
    assert_eq!(
        c.missed,
        vec![SenderDiff {
            rank: 2,
            event: 0,
            op_index: at(2, 0),
            sender: 0
        }]
    );
    // A runtime claiming P1 for P2's second receive: P1's only message was
    // taken by the first, which matched before it.
    let wrong = vec![
        event(0, 0, at(0, 0), 3, vec![]),
        event(2, 0, at(2, 0), 1, vec![0]),
        event(2, 1, at(2, 1), 0, vec![1]),
    ];
    let c = compare(&wrong, &oracle);
    assert!(!c.is_sound());
    assert_eq!(c.false_matches.len(), 1);
    assert_eq!(c.false_matches[0].sender, 1);
    assert!(c.missed.is_empty());
    // An event the oracle does not know.
    let c = compare(&lvcp[..2], &oracle);
    assert_eq!(c.unknown_events, vec![(2, 1)]);
    // A choice among requests (seed 001 §4) in the same numbering is no
    // receive: not judged, not unknown.
    let mut with_choice = lvcp.clone();
    with_choice.push(WildcardEvent {
        kind: OpKind::Waitany,
        ..event(2, 2, at(2, 1), 0, vec![1])
    });
    assert!(compare(&with_choice, &oracle).is_exact());
}

/// A long program order: the searches stay iterative.
#[test]
fn long_traces_need_no_recursion() {
    let n = 20_000;
    let p0: Vec<C> = (0..n).map(|_| send(1)).collect();
    let mut p1: Vec<C> = vec![recv(ANY)];
    p1.extend((1..n).map(|_| recv(0)));
    p1.push(recv(2));
    let p2 = vec![send(1)];
    let program: &[&[C]] = &[&p0, &p1, &p2];
    let mut messages: Vec<Msg> = (0..n).map(|i| ((1, i), (0, i))).collect();
    messages.push(((1, n), (2, 0)));
    let job = run(program, &messages);
    assert_eq!(job.senders(1, 0), vec![2]);
}

/// Seed 001 §4 by the oracle (soak seed 1005): rank 0 posts two wildcard
/// `Irecv`s and a choice call (here the `Wait` at position 2 stands for a
/// `Waitany` that returned the first) leaves the second incomplete. It
/// could have been returned first unless its message was sent only after
/// the choice: rank 2 sends after a message rank 0 sent after it.
#[test]
fn a_choice_candidate_is_offered_unless_its_message_is_sent_after_the_choice() {
    let with_candidate = |job: &mut Job| {
        let trace = &mut job.traces[0];
        let index = trace.ops.len() as u64;
        trace.ops.push(Op {
            index,
            count: 2,
            peer: 1,
            request: job.index[0][1],
            aux: job.index[0][2],
            ..record(OpKind::ChoiceCandidate, 1, 0)
        });
    };
    let indices = |job: &Job| -> Vec<i32> {
        let all = potential_senders_and_indices(&job.traces, false);
        all.iter()
            .find(|m| m.rank == 0 && m.event == 2)
            .map(|m| m.senders.clone())
            .unwrap_or_else(|| panic!("no choice in {all:?}"))
    };
    let independent: &[&[C]] = &[
        &[Irecv(ANY, 0), Irecv(ANY, 0), Wait(0), Wait(1)],
        &[send(0)],
        &[send(0)],
    ];
    let mut job = run(independent, &[((0, 0), (1, 0)), ((0, 1), (2, 0))]);
    with_candidate(&mut job);
    assert_eq!(indices(&job), vec![1], "rank 2's message could come first");

    let after: &[&[C]] = &[
        &[Irecv(ANY, 0), Irecv(ANY, 0), Wait(0), Send(2, 5), Wait(1)],
        &[send(0)],
        &[Recv(0, 5), send(0)],
    ];
    let mut job = run(
        after,
        &[((0, 0), (1, 0)), ((0, 1), (2, 1)), ((2, 0), (0, 3))],
    );
    with_candidate(&mut job);
    assert_eq!(
        indices(&job),
        Vec::<i32>::new(),
        "rank 2 sends after the choice"
    );
}

/// Soak seed 2022: sends on a communicator other than MPI_COMM_WORLD name
/// their destination by its rank there. World ranks 1-3 make communicator
/// `C` (ranks 0-2 in it); ranks 2 and 3 send to its rank 0 (world rank 1),
/// whose wildcard receive took rank 2's message: rank 3's is a potential
/// sender, found once each member's `CommId` names its rank in `C`.
#[test]
fn sends_on_a_made_communicator_are_kept_by_world_rank() {
    const C: u64 = (1 << 63) | 7;
    let program: &[&[C]] = &[&[], &[recv(ANY)], &[send(0)], &[send(0)]];
    let mut job = run(program, &[((1, 0), (2, 0))]);
    for (rank, trace) in job.traces.iter_mut().enumerate().skip(1) {
        for op in trace.ops.iter_mut().filter(|op| op.kind != OpKind::Init) {
            if op.kind.class() != OpClass::Clock {
                op.comm = C;
            }
        }
        let index = trace.ops.len() as u64;
        trace.ops.push(Op {
            index,
            aux: C,
            comm: 0x8400_0000,
            ..record(OpKind::CommId, rank as i32 - 1, 0)
        });
    }
    assert_eq!(job.senders(1, 0), vec![3]);
}

/// Soak seed 3125's shape, with `Ssend`: ranks 2 and 3 each send to rank
/// 0, then to rank 1; rank 0 took 2 then 3, rank 1 took 2's message.
/// Rank 1 could have taken 3's, which 3 sent only after rank 0's second
/// receive took its first message: that receive, and rank 0's first
/// (program order), are the enablers of sender 3.
#[test]
fn enablers_are_the_wildcard_events_before_the_message() {
    let program: &[&[C]] = &[
        &[recv(ANY), recv(ANY)],
        &[recv(ANY), recv(ANY)],
        &[Ssend(0, 0), Ssend(1, 0)],
        &[Ssend(0, 0), Ssend(1, 0)],
    ];
    let job = run(
        program,
        &[
            ((0, 0), (2, 0)),
            ((0, 1), (3, 0)),
            ((1, 0), (2, 1)),
            ((1, 1), (3, 1)),
        ],
    );
    let all = job.oracle();
    let first = all.iter().find(|m| m.rank == 1 && m.event == 0).unwrap();
    assert_eq!(first.senders, vec![3]);
    // The message it took, rank 2's second, needs rank 0's first receive.
    assert_eq!(
        first.enablers,
        vec![(3, vec![(0, 0), (0, 1)]), (2, vec![(0, 0)])]
    );
}
