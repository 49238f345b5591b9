//! Hand-built traces of finished runs: the scenarios of SCENARIOS.md and
//! seeds 001 and 003.

use super::*;
use mbh_trace::rank_trace::RankEnd;

const WORLD: u64 = 0x4400_0000;
/// MPI_ANY_SOURCE as MPICH spells it (the analysis reads the flag).
const ANY: i32 = -2;

/// One call of a rank's program.
#[derive(Debug, Clone, Copy)]
enum C {
    Send(i32),
    Ssend(i32),
    Bsend(i32),
    Isend(i32),
    Ibsend(i32),
    Recv(i32),
    Irecv(i32),
    /// `MPI_Wait` on the request of the rank's call at this position.
    Wait(usize),
    /// `MPI_Waitall` as an older runtime recorded it: no `Completed`
    /// records, so the trace does not list its requests.
    Waitall,
    Issend(i32),
    /// `MPI_Start` of an `MPI_Send_init` request (recorded like an `Isend`).
    Start(i32),
    /// `MPI_Waitall` completing the requests of the rank's calls at these
    /// positions (one `Completed` record each).
    WaitallOf(&'static [usize]),
    /// `MPI_Waitany` that completed the request of the call at this
    /// position.
    Waitany(usize),
    /// `MPI_Waitsome` that completed these requests.
    Waitsome(&'static [usize]),
    /// `MPI_Test` that completed this request (flag true: a test that
    /// returned false is not recorded).
    Test(usize),
    /// `MPI_Testall` that completed these requests.
    Testall(&'static [usize]),
    /// `MPI_Testany` that completed this request.
    Testany(usize),
    /// `MPI_Testsome` that completed these requests.
    Testsome(&'static [usize]),
    Sendrecv {
        to: i32,
        from: i32,
    },
    Barrier,
    Bcast,
    Reduce,
}

/// A message: the receiving call `(rank, position)` (a `Recv`, `Sendrecv`,
/// or the `Wait`/`Waitall` that completed an `Irecv`) took the message of
/// the send `(rank, position)`.
type Msg = ((usize, usize), (usize, usize));

/// A finished run: every rank's trace, and the record index of each call.
struct Job {
    traces: Vec<RankTrace>,
    index: Vec<Vec<u64>>,
}

impl Job {
    /// The record index of `rank`'s call at `position`.
    fn at(&self, rank: usize, position: usize) -> u64 {
        self.index[rank][position]
    }

    fn hazard(&self) -> Option<BufferingHazard> {
        find_buffering_hazard(&self.traces)
    }
}

fn site(rank: usize, position: usize) -> u32 {
    (rank as u32 + 1) * 100 + position as u32
}

fn record(kind: OpKind, peer: i32) -> Op {
    Op {
        index: 0,
        kind,
        flags: flags::RETURNED | if peer == ANY { flags::ANY_SOURCE } else { 0 },
        site: 0,
        peer,
        tag: 0,
        comm: WORLD,
        count: 1,
        matched: None,
        error: 0,
        request: 0,
        aux: 0,
    }
}

/// Builds the traces of a finished run of `program` (rank `i`'s calls at
/// index `i`) in which the receives took `messages`: `Init`, the calls,
/// each receiving call followed by its `Matched` records, `Finalize`.
fn run(program: &[&[C]], messages: &[Msg]) -> Job {
    let took = |rank: usize, position: usize| -> Vec<(usize, usize)> {
        messages
            .iter()
            .filter(|(receiver, _)| *receiver == (rank, position))
            .map(|&(_, sender)| sender)
            .collect()
    };
    let index: Vec<Vec<u64>> = program
        .iter()
        .enumerate()
        .map(|(rank, calls)| {
            let mut next = 1;
            (0..calls.len())
                .map(|position| {
                    let at = next;
                    next += 1
                        + took(rank, position).len() as u64
                        + completed(calls[position]).len() as u64;
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
            let mut ops = vec![record(OpKind::Init, 0)];
            for (position, &call) in calls.iter().enumerate() {
                let senders = took(rank, position);
                let mut op = match call {
                    C::Send(to) => record(OpKind::Send, to),
                    C::Ssend(to) => record(OpKind::Ssend, to),
                    C::Bsend(to) => record(OpKind::Bsend, to),
                    C::Isend(to) => Op {
                        request: handle(rank, position),
                        ..record(OpKind::Isend, to)
                    },
                    C::Ibsend(to) => Op {
                        request: handle(rank, position),
                        ..record(OpKind::Ibsend, to)
                    },
                    C::Recv(from) => record(OpKind::Recv, from),
                    C::Irecv(from) => Op {
                        request: handle(rank, position),
                        ..record(OpKind::Irecv, from)
                    },
                    C::Wait(origin) => Op {
                        request: handle(rank, origin),
                        aux: index[rank][origin] + 1,
                        ..record(OpKind::Wait, 0)
                    },
                    C::Waitall => Op {
                        count: 2,
                        ..record(OpKind::Waitall, 0)
                    },
                    C::Issend(to) => Op {
                        request: handle(rank, position),
                        ..record(OpKind::Issend, to)
                    },
                    C::Start(to) => Op {
                        request: handle(rank, position),
                        ..record(OpKind::StartSend, to)
                    },
                    C::Test(origin) => Op {
                        request: handle(rank, origin),
                        aux: index[rank][origin] + 1,
                        count: 1,
                        ..record(OpKind::Test, 0)
                    },
                    C::Testany(origin) => Op {
                        request: handle(rank, origin),
                        aux: index[rank][origin] + 1,
                        count: 2,
                        ..record(OpKind::Testany, 0)
                    },
                    C::WaitallOf(_)
                    | C::Waitany(_)
                    | C::Waitsome(_)
                    | C::Testall(_)
                    | C::Testsome(_) => {
                        let kind = match call {
                            C::WaitallOf(_) => OpKind::Waitall,
                            C::Waitany(_) => OpKind::Waitany,
                            C::Waitsome(_) => OpKind::Waitsome,
                            C::Testall(_) => OpKind::Testall,
                            _ => OpKind::Testsome,
                        };
                        // The record names the first request it was given,
                        // not (for `any`/`some`) the one it completed.
                        Op {
                            count: 2,
                            ..record(kind, 0)
                        }
                    }
                    C::Sendrecv { to, from } => Op {
                        request: u64::from(to as u32),
                        ..record(OpKind::Sendrecv, from)
                    },
                    C::Barrier => record(OpKind::Barrier, 0),
                    C::Bcast => record(OpKind::Bcast, 0),
                    C::Reduce => record(OpKind::Reduce, 0),
                };
                op.index = index[rank][position];
                op.site = site(rank, position);
                if let Some(&(sender, _)) = senders.first() {
                    op.flags |= flags::HAS_STATUS;
                    op.matched = Some((sender as i32, 0));
                }
                ops.push(op);
                let mut senders = senders;
                let matched = |ops: &Vec<Op>, (sender, send): (usize, usize)| Op {
                    index: ops.len() as u64,
                    request: index[rank][position],
                    peer: sender as i32,
                    aux: index[sender][send],
                    ..record(OpKind::Matched, sender as i32)
                };
                // As the runtime writes them: each request's `Completed`
                // record, then a receive's `Matched` record.
                for &made in completed(call) {
                    ops.push(Op {
                        index: ops.len() as u64,
                        request: index[rank][position],
                        aux: index[rank][made],
                        ..record(OpKind::Completed, 0)
                    });
                    if let C::Irecv(from) = calls[made] {
                        if let Some(k) = senders
                            .iter()
                            .position(|&(s, _)| from == ANY || s as i32 == from)
                        {
                            let sender = senders.remove(k);
                            let m = matched(&ops, sender);
                            ops.push(m);
                        }
                    }
                }
                for sender in senders {
                    let m = matched(&ops, sender);
                    ops.push(m);
                }
            }
            ops.push(Op {
                index: ops.len() as u64,
                ..record(OpKind::Finalize, 0)
            });
            RankTrace {
                rank: rank as i32,
                size: program.len() as i32,
                pid: 1000 + rank as u32,
                end: RankEnd {
                    state: RankState::Exited,
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

/// The requests a call on several requests completed (positions).
fn completed(call: C) -> &'static [usize] {
    match call {
        C::WaitallOf(made) | C::Waitsome(made) | C::Testall(made) | C::Testsome(made) => made,
        C::Waitany(made) | C::Testany(made) => std::slice::from_ref(leak(made)),
        _ => &[],
    }
}

fn leak(position: usize) -> &'static usize {
    Box::leak(Box::new(position))
}

fn stuck(h: &BufferingHazard, rank: i32) -> &StuckRank {
    h.stuck.iter().find(|s| s.rank == rank).unwrap()
}

/// SCENARIOS.md E2 (seed 000 Fig 2.5): each rank `Isend(to other); Wait;
/// Irecv(from other); Wait`.
fn e2(size: usize) -> Job {
    let p0: &[C] = &[C::Isend(1), C::Wait(0), C::Irecv(1), C::Wait(2)];
    let p1: &[C] = &[C::Isend(0), C::Wait(0), C::Irecv(0), C::Wait(2)];
    let mut program = vec![p0, p1];
    program.resize(size, &[]);
    run(&program, &[((0, 3), (1, 0)), ((1, 3), (0, 0))])
}

#[test]
fn e2_head_to_head_completed_under_eager_buffering() {
    let job = e2(2);
    let h = job.hazard().expect("a buffering hazard");
    assert_eq!(h.ranks(), vec![0, 1]);
    assert_eq!(h.cycle, vec![0, 1]);
    assert_eq!(h.knot, vec![0, 1]);
    assert_eq!(h.sends().count(), 2);
    for (me, other) in [(0, 1), (1, 0)] {
        assert_eq!(
            stuck(&h, me as i32),
            &StuckRank {
                rank: me as i32,
                op_index: job.at(me, 1),
                kind: OpKind::Wait,
                site: site(me, 1),
                origin: Some(job.at(me, 0)),
                standard_send: true,
                // The Irecv that took the message, never issued.
                waits_for: vec![Awaited {
                    rank: other as i32,
                    op_index: job.at(other, 2),
                    kind: OpKind::Irecv,
                    site: site(other, 2),
                }],
            }
        );
    }
}

#[test]
fn a_rank_outside_the_cycle_waits_in_finalize() {
    let job = e2(3);
    let h = job.hazard().expect("a buffering hazard");
    assert_eq!(h.ranks(), vec![0, 1, 2]);
    assert_eq!(h.cycle, vec![0, 1]);
    assert_eq!(h.knot, vec![0, 1]);
    let idle = stuck(&h, 2);
    assert_eq!(idle.kind, OpKind::Finalize);
    assert!(!idle.standard_send);
    let finalize = |rank: usize| job.traces[rank].ops.len() as u64 - 1;
    assert_eq!(
        idle.waits_for
            .iter()
            .map(|w| (w.rank, w.op_index, w.kind))
            .collect::<Vec<_>>(),
        vec![
            (0, finalize(0), OpKind::Finalize),
            (1, finalize(1), OpKind::Finalize)
        ]
    );
}

#[test]
fn e10b_send_send_after_wildcards_and_barrier() {
    // Seed 003 Fig 2(b). P0: Send(to 1); Barrier; Send(to 1); Recv(from 2).
    // P1: Recv(*); Recv(*); Barrier; Send(to 2); Recv(from 0). P2: Send(to
    // 1); Barrier; Send(to 0); Recv(from 1). Both outcomes of the wildcards.
    let program: &[&[C]] = &[
        &[C::Send(1), C::Barrier, C::Send(1), C::Recv(2)],
        &[
            C::Recv(ANY),
            C::Recv(ANY),
            C::Barrier,
            C::Send(2),
            C::Recv(0),
        ],
        &[C::Send(1), C::Barrier, C::Send(0), C::Recv(1)],
    ];
    let after = [((1, 4), (0, 2)), ((2, 3), (1, 3)), ((0, 3), (2, 2))];
    for first in [0, 2] {
        let second = 2 - first;
        let mut messages = vec![((1, 0), (first, 0)), ((1, 1), (second, 0))];
        messages.extend(after);
        let job = run(program, &messages);
        let h = job.hazard().expect("a buffering hazard");
        assert_eq!(h.cycle, vec![0, 1, 2]);
        assert_eq!(h.knot, vec![0, 1, 2]);
        assert_eq!(h.sends().count(), 3);
        let s1 = stuck(&h, 1);
        assert_eq!((s1.kind, s1.op_index), (OpKind::Send, job.at(1, 3)));
        assert_eq!(
            s1.waits_for,
            vec![Awaited {
                rank: 2,
                op_index: job.at(2, 3),
                kind: OpKind::Recv,
                site: site(2, 3),
            }]
        );
    }
}

#[test]
fn a_ring_where_rank_0_sends_first_needs_no_buffering() {
    let program: &[&[C]] = &[
        &[C::Send(1), C::Recv(3)],
        &[C::Recv(0), C::Send(2)],
        &[C::Recv(1), C::Send(3)],
        &[C::Recv(2), C::Send(0)],
    ];
    let messages = [
        ((1, 0), (0, 0)),
        ((2, 0), (1, 1)),
        ((3, 0), (2, 1)),
        ((0, 1), (3, 1)),
    ];
    assert_eq!(run(program, &messages).hazard(), None);

    // Everyone sends first: only buffering lets it finish.
    let program: &[&[C]] = &[
        &[C::Send(1), C::Recv(3)],
        &[C::Send(2), C::Recv(0)],
        &[C::Send(3), C::Recv(1)],
        &[C::Send(0), C::Recv(2)],
    ];
    let messages = [
        ((1, 1), (0, 0)),
        ((2, 1), (1, 0)),
        ((3, 1), (2, 0)),
        ((0, 1), (3, 0)),
    ];
    let h = run(program, &messages)
        .hazard()
        .expect("a buffering hazard");
    assert_eq!(h.cycle, vec![0, 1, 2, 3]);
    assert_eq!(h.sends().count(), 4);
}

#[test]
fn properly_ordered_pairs_need_no_buffering() {
    let program: &[&[C]] = &[&[C::Send(1), C::Recv(1)], &[C::Recv(0), C::Send(0)]];
    assert_eq!(
        run(program, &[((1, 0), (0, 0)), ((0, 1), (1, 1))]).hazard(),
        None
    );
    // Receives posted before the sends, completed after.
    let program: &[&[C]] = &[
        &[C::Irecv(1), C::Isend(1), C::Wait(1), C::Wait(0)],
        &[C::Irecv(0), C::Send(0), C::Wait(0)],
    ];
    assert_eq!(
        run(program, &[((0, 3), (1, 1)), ((1, 2), (0, 1))]).hazard(),
        None
    );
}

#[test]
fn buffered_sends_never_wait_for_the_receiver() {
    // Head to head with Bsend: buffered by definition, so correct.
    let program: &[&[C]] = &[&[C::Bsend(1), C::Recv(1)], &[C::Bsend(0), C::Recv(0)]];
    let messages = [((0, 1), (1, 0)), ((1, 1), (0, 0))];
    assert_eq!(run(program, &messages).hazard(), None);
    // Ordered properly, too.
    let program: &[&[C]] = &[&[C::Bsend(1), C::Recv(1)], &[C::Recv(0), C::Bsend(0)]];
    assert_eq!(
        run(program, &[((1, 0), (0, 0)), ((0, 1), (1, 1))]).hazard(),
        None
    );
    // Ibsend and Wait.
    let program: &[&[C]] = &[
        &[C::Ibsend(1), C::Wait(0), C::Recv(1)],
        &[C::Ibsend(0), C::Wait(0), C::Recv(0)],
    ];
    let messages = [((0, 2), (1, 0)), ((1, 2), (0, 0))];
    assert_eq!(run(program, &messages).hazard(), None);
    // The same with standard sends is the hazard.
    let program: &[&[C]] = &[&[C::Send(1), C::Recv(1)], &[C::Send(0), C::Recv(0)]];
    let messages = [((0, 1), (1, 0)), ((1, 1), (0, 0))];
    assert!(run(program, &messages).hazard().is_some());
}

#[test]
fn a_run_that_did_not_finish_gets_no_answer() {
    // Rank 1 still running (the deadlock analysis' business).
    let mut job = e2(2);
    job.traces[1].ops.pop();
    job.traces[1].end.state = RankState::Running;
    job.traces[1].end.exit_status = None;
    assert_eq!(job.hazard(), None);
    // Finalize recorded but the rank aborted afterwards.
    let mut job = e2(2);
    job.traces[0].end.state = RankState::Aborted;
    assert_eq!(job.hazard(), None);
    // Traces of another job, or out of order.
    let mut job = e2(2);
    job.traces.swap(0, 1);
    assert_eq!(job.hazard(), None);
    assert_eq!(find_buffering_hazard(&[]), None);
    // MPI_Finalize returned (and the process has not exited yet): fine.
    let mut job = e2(2);
    for t in &mut job.traces {
        t.end.state = RankState::Finalized;
    }
    assert!(job.hazard().is_some());
}

#[test]
fn a_runtime_without_matched_records_gets_no_answer() {
    let mut job = e2(2);
    for op in job.traces.iter_mut().flat_map(|t| &mut t.ops) {
        if op.kind == OpKind::Matched {
            op.kind = OpKind::Pcontrol;
        }
    }
    assert_eq!(job.hazard(), None);
}

#[test]
fn e6_buffering_dependent_deadlock_completed_run_has_no_hazard() {
    // Seed 001 Fig 8. P0: Isend(to 1); Wait; Isend(to 2); Wait. P1:
    // Isend(to 2); Wait; Irecv(from 0); Wait. P2: Irecv(*); Wait;
    // Irecv(from 0); Wait. The run finished, so P2's Irecv(*) took P1's
    // message: the only match without buffering (P0's second Isend comes
    // after its first Wait, which needs P1's Irecv, which comes after P1's
    // Wait, which needs P2's Irecv(*)). With synchronous sends the
    // transition system passes every record: the run did not need
    // buffering. The deadlock of the figure is the other interleaving
    // (P2's Irecv(*) takes P0's second message), which only buffering makes
    // possible; it does not finish, and exploration plus the deadlock
    // analysis report it.
    let program: &[&[C]] = &[
        &[C::Isend(1), C::Wait(0), C::Isend(2), C::Wait(2)],
        &[C::Isend(2), C::Wait(0), C::Irecv(0), C::Wait(2)],
        &[C::Irecv(ANY), C::Wait(0), C::Irecv(0), C::Wait(2)],
    ];
    let messages = [((1, 3), (0, 0)), ((2, 1), (1, 0)), ((2, 3), (0, 2))];
    assert_eq!(run(program, &messages).hazard(), None);
}

#[test]
fn s11_unexpected_match_is_not_reported() {
    // Seed 003 Fig 4. P0: Send(to 1); Reduce(root 1). P1: Recv(*);
    // Reduce(root 1); Recv(*). P2: Reduce(root 1); Send(to 1).
    let program: &[&[C]] = &[
        &[C::Send(1), C::Reduce],
        &[C::Recv(ANY), C::Reduce, C::Recv(ANY)],
        &[C::Reduce, C::Send(1)],
    ];
    // First interleaving: nothing needs buffering.
    let first = [((1, 0), (0, 0)), ((1, 2), (2, 1))];
    assert_eq!(run(program, &first).hazard(), None);
    // Second: P1's first Recv(*) took P2's message. With synchronous sends
    // P0 is stuck in its Send while P1's Recv(*) is posted and waiting:
    // a library without buffering would have matched them (an unexpected
    // match); the analysis cannot tell what would have followed.
    let second = [((1, 0), (2, 1)), ((1, 2), (0, 0))];
    assert_eq!(run(program, &second).hazard(), None);

    // The same with specific sources is a real hazard: P0's Send cannot
    // match P1's first receive, and without buffering it blocks P0 before
    // the Reduce that P1 (the root) needs.
    let program: &[&[C]] = &[
        &[C::Send(1), C::Reduce],
        &[C::Recv(2), C::Reduce, C::Recv(0)],
        &[C::Reduce, C::Send(1)],
    ];
    let job = run(program, &second);
    let h = job.hazard().expect("a buffering hazard");
    assert_eq!(h.cycle, vec![0, 1, 2]);
    assert_eq!(h.knot, vec![0, 1, 2]);
    assert_eq!(
        h.sends().map(|s| (s.rank, s.op_index)).collect::<Vec<_>>(),
        vec![(0, job.at(0, 0))]
    );
    let p2 = stuck(&h, 2);
    assert_eq!(p2.kind, OpKind::Reduce);
    assert_eq!(
        p2.waits_for
            .iter()
            .map(|w| (w.rank, w.op_index, w.kind))
            .collect::<Vec<_>>(),
        vec![
            (0, job.at(0, 1), OpKind::Reduce),
            (1, job.at(1, 1), OpKind::Reduce)
        ]
    );
}

#[test]
fn a_synchronous_send_that_relied_on_a_buffered_send() {
    // P0: Ssend(to 1); Recv(from 1). P1: Send(to 0); Recv(from 0). The
    // Ssend completed because P1's Send was buffered.
    let program: &[&[C]] = &[&[C::Ssend(1), C::Recv(1)], &[C::Send(0), C::Recv(0)]];
    let job = run(program, &[((0, 1), (1, 0)), ((1, 1), (0, 0))]);
    let h = job.hazard().expect("a buffering hazard");
    assert_eq!(h.cycle, vec![0, 1]);
    assert_eq!(stuck(&h, 0).kind, OpKind::Ssend);
    assert!(!stuck(&h, 0).standard_send);
    assert_eq!(
        h.sends().map(|s| (s.rank, s.kind)).collect::<Vec<_>>(),
        vec![(1, OpKind::Send)]
    );
}

#[test]
fn a_stall_without_a_standard_send_is_not_a_buffering_issue() {
    // P0: Bcast(root 0); Ssend(to 1). P1: Recv(from 0); Bcast. It finished
    // because the root left the Bcast early; with a synchronising Bcast it
    // would not, but no send was buffered.
    let program: &[&[C]] = &[&[C::Bcast, C::Ssend(1)], &[C::Recv(0), C::Bcast]];
    assert_eq!(run(program, &[((1, 0), (0, 1))]).hazard(), None);
    // A standard Send there is not stuck either: P0 is stuck in the Bcast.
    let program: &[&[C]] = &[&[C::Bcast, C::Send(1)], &[C::Recv(0), C::Bcast]];
    assert_eq!(run(program, &[((1, 0), (0, 1))]).hazard(), None);
}

#[test]
fn a_send_to_self_before_its_receive_is_a_cycle_of_one() {
    let program: &[&[C]] = &[&[C::Send(0), C::Recv(0)]];
    let job = run(program, &[((0, 1), (0, 0))]);
    let h = job.hazard().expect("a buffering hazard");
    assert_eq!(h.cycle, vec![0]);
    assert_eq!(h.knot, vec![0]);
    assert_eq!(
        stuck(&h, 0).waits_for,
        vec![Awaited {
            rank: 0,
            op_index: job.at(0, 1),
            kind: OpKind::Recv,
            site: site(0, 1),
        }]
    );
}

#[test]
fn sendrecv_exchanges_need_no_buffering() {
    let program: &[&[C]] = &[
        &[C::Sendrecv { to: 1, from: 1 }],
        &[C::Sendrecv { to: 0, from: 0 }],
    ];
    let messages = [((0, 0), (1, 0)), ((1, 0), (0, 0))];
    assert_eq!(run(program, &messages).hazard(), None);
    // Against Send; Recv.
    let program: &[&[C]] = &[&[C::Sendrecv { to: 1, from: 1 }], &[C::Send(0), C::Recv(0)]];
    let messages = [((0, 0), (1, 0)), ((1, 1), (0, 0))];
    assert_eq!(run(program, &messages).hazard(), None);
    // Its send half is standard mode: P1 receives that message only after
    // a Barrier that P0 reaches after its Sendrecv.
    let program: &[&[C]] = &[
        &[C::Sendrecv { to: 1, from: 1 }, C::Barrier],
        &[C::Isend(0), C::Barrier, C::Recv(0), C::Wait(0)],
    ];
    let messages = [((0, 0), (1, 0)), ((1, 2), (0, 0))];
    let job = run(program, &messages);
    let h = job.hazard().expect("a buffering hazard");
    assert_eq!(h.cycle, vec![0, 1]);
    let p0 = stuck(&h, 0);
    assert_eq!((p0.kind, p0.standard_send), (OpKind::Sendrecv, true));
    assert_eq!(
        p0.waits_for,
        vec![Awaited {
            rank: 1,
            op_index: job.at(1, 2),
            kind: OpKind::Recv,
            site: site(1, 2),
        }]
    );
    assert_eq!(stuck(&h, 1).kind, OpKind::Barrier);
}

#[test]
fn waitall_receives_are_posted_no_later_than_their_earliest_candidate() {
    // Irecv; Send; Waitall on both sides: correct.
    let program: &[&[C]] = &[
        &[C::Irecv(1), C::Send(1), C::Waitall],
        &[C::Irecv(0), C::Send(0), C::Waitall],
    ];
    let messages = [((0, 2), (1, 1)), ((1, 2), (0, 1))];
    assert_eq!(run(program, &messages).hazard(), None);
    // Send; Irecv; Waitall: the sends needed buffering.
    let program: &[&[C]] = &[
        &[C::Send(1), C::Irecv(1), C::Waitall],
        &[C::Send(0), C::Irecv(0), C::Waitall],
    ];
    let messages = [((0, 2), (1, 0)), ((1, 2), (0, 0))];
    let job = run(program, &messages);
    let h = job.hazard().expect("a buffering hazard");
    assert_eq!(h.cycle, vec![0, 1]);
    assert_eq!(
        stuck(&h, 0).waits_for,
        vec![Awaited {
            rank: 1,
            op_index: job.at(1, 1),
            kind: OpKind::Irecv,
            site: site(1, 1),
        }]
    );
}

#[test]
fn a_wait_on_an_unknown_request_completes() {
    let mut job = e2(2);
    for t in &mut job.traces {
        for op in t.ops.iter_mut().filter(|op| op.kind == OpKind::Wait) {
            op.aux = 0;
            op.request = 0xdead;
        }
    }
    assert_eq!(job.hazard(), None);
}

#[test]
fn a_wildcard_only_hides_a_hazard_when_it_could_take_a_pending_send() {
    // P0: Irecv(*, tag 5); Send(to 1); Recv(from 1); Wait. P1: Send(to 0);
    // Recv(from 0); Send(to 0, tag 5). The sends are head to head, and P0's
    // Irecv(*) is posted and waiting for P1's last message.
    let program: &[&[C]] = &[
        &[C::Irecv(ANY), C::Send(1), C::Recv(1), C::Wait(0)],
        &[C::Send(0), C::Recv(0), C::Send(0)],
    ];
    let messages = [((0, 2), (1, 0)), ((1, 1), (0, 1)), ((0, 3), (1, 2))];
    let mut job = run(program, &messages);
    let (irecv, last) = (job.at(0, 0) as usize, job.at(1, 2) as usize);
    job.traces[0].ops[irecv].tag = 5;
    job.traces[1].ops[last].tag = 5;
    let h = job.hazard().expect("a buffering hazard");
    assert_eq!(h.cycle, vec![0, 1]);
    assert_eq!(h.sends().count(), 2);
    // With MPI_ANY_TAG the Irecv(*) could take P1's stuck Send: without
    // buffering the run would have gone another way; no report.
    job.traces[0].ops[irecv].flags |= flags::ANY_TAG;
    assert_eq!(job.hazard(), None);
}

#[test]
fn a_wildcard_completed_by_waitall_is_matched_when_its_message_was_sent() {
    // P0: Irecv(*); Waitall; Send(to 1); Recv(from 1). P1: Send(to 0);
    // Send(to 0); Recv(from 0). Without buffering P1's first Send matches
    // the Irecv(*), and then the remaining sends are head to head.
    let program: &[&[C]] = &[
        &[C::Irecv(ANY), C::Waitall, C::Send(1), C::Recv(1)],
        &[C::Send(0), C::Send(0), C::Recv(0)],
    ];
    let messages = [((0, 1), (1, 0)), ((0, 3), (1, 1)), ((1, 2), (0, 2))];
    let mut job = run(program, &messages);
    // As the runtime writes it: the Irecv record gets the status too.
    let irecv = &mut job.traces[0].ops[job.index[0][0] as usize];
    irecv.flags |= flags::HAS_STATUS;
    irecv.matched = Some((1, 0));
    let h = job.hazard().expect("a buffering hazard");
    assert_eq!(h.cycle, vec![0, 1]);
    assert_eq!(
        h.sends().map(|s| (s.rank, s.op_index)).collect::<Vec<_>>(),
        vec![(0, job.at(0, 2)), (1, job.at(1, 1))]
    );
    // Without the status the Irecv(*) may still be waiting, and could take
    // P1's second Send: no report.
    let irecv = &mut job.traces[0].ops[job.index[0][0] as usize];
    irecv.flags &= !flags::HAS_STATUS;
    irecv.matched = None;
    assert_eq!(job.hazard(), None);
}

/// A ring of `size` ranks (issue 11): each rank runs `calls` with `R`
/// standing for its right neighbour and `L` for its left one, and the
/// receiving call at position `p` of each rank took the message of its left
/// neighbour's call at position `s` for each `(p, s)` of `messages`.
fn ring(size: usize, calls: fn(i32, i32) -> Vec<C>, messages: &[(usize, usize)]) -> Job {
    let programs: Vec<Vec<C>> = (0..size as i32)
        .map(|r| calls((r + 1) % size as i32, (r + size as i32 - 1) % size as i32))
        .collect();
    let program: Vec<&[C]> = programs
        .iter()
        .map(|p| -> &[C] { Box::leak(p.clone().into_boxed_slice()) })
        .collect();
    let msgs: Vec<Msg> = (0..size)
        .flat_map(|r| {
            let left = (r + size - 1) % size;
            messages.iter().map(move |&(p, s)| ((r, p), (left, s)))
        })
        .collect();
    run(&program, &msgs)
}

/// `Isend(right); Isend(right); Waitall(sends); Recv(left); Recv(left)`.
fn ring_waitall(right: i32, left: i32) -> Vec<C> {
    vec![
        C::Isend(right),
        C::Isend(right),
        C::WaitallOf(&[0, 1]),
        C::Recv(left),
        C::Recv(left),
    ]
}

#[test]
fn a_ring_whose_isends_a_waitall_completes_before_the_receives_needs_buffering() {
    for size in [3, 4] {
        let job = ring(size, ring_waitall, &[(3, 0), (4, 1)]);
        let h = job.hazard().expect("a buffering hazard");
        let all: Vec<i32> = (0..size as i32).collect();
        assert_eq!(h.cycle, all);
        assert_eq!(h.knot, all);
        for r in 0..size {
            let s = stuck(&h, r as i32);
            let right = (r + 1) % size;
            assert_eq!((s.kind, s.op_index), (OpKind::Waitall, job.at(r, 2)));
            assert!(s.standard_send);
            // The report points at the first send, not at the Waitall.
            assert_eq!(s.origin, Some(job.at(r, 0)));
            // Both sends wait for the right neighbour's receives.
            assert_eq!(
                s.waits_for,
                vec![
                    Awaited {
                        rank: right as i32,
                        op_index: job.at(right, 3),
                        kind: OpKind::Recv,
                        site: site(right, 3),
                    },
                    Awaited {
                        rank: right as i32,
                        op_index: job.at(right, 4),
                        kind: OpKind::Recv,
                        site: site(right, 4),
                    },
                ]
            );
        }
    }
}

#[test]
fn a_waitall_without_completed_records_is_still_assumed_to_complete() {
    // A trace of a runtime that wrote no `Completed` records: the requests
    // of the Waitall are unknown, so it waits for nothing (conservative).
    let job = ring(
        3,
        |right, left| {
            vec![
                C::Isend(right),
                C::Isend(right),
                C::Waitall,
                C::Recv(left),
                C::Recv(left),
            ]
        },
        &[(3, 0), (4, 1)],
    );
    assert_eq!(job.hazard(), None);
}

#[test]
fn a_ring_whose_irecvs_are_posted_before_the_waitall_needs_no_buffering() {
    let job = ring(
        4,
        |right, left| vec![C::Irecv(left), C::Isend(right), C::WaitallOf(&[0, 1])],
        &[(2, 1)],
    );
    assert_eq!(job.hazard(), None);
    // The Matched record follows its Irecv's Completed record: the receive
    // was posted exactly at the Irecv.
    let job = ring(
        3,
        |right, left| vec![C::Isend(right), C::Irecv(left), C::WaitallOf(&[1, 0])],
        &[(2, 0)],
    );
    assert_eq!(job.hazard(), None);
}

#[test]
fn a_waitall_also_waits_for_the_senders_of_its_receives() {
    // P0: Irecv(from 2); Waitall; Recv(from 1). P1: Send(to 0); Send(to 2).
    // P2: Recv(from 1); Send(to 0). Without buffering P1's first Send waits
    // for P0's Recv, after the Waitall, which waits for P2's Send, after
    // P2's Recv, which waits for P1's second Send: a cycle through a
    // standard send and the Waitall's receive.
    let program: &[&[C]] = &[
        &[C::Irecv(2), C::WaitallOf(&[0]), C::Recv(1)],
        &[C::Send(0), C::Send(2)],
        &[C::Recv(1), C::Send(0)],
    ];
    let messages = [((0, 1), (2, 1)), ((0, 2), (1, 0)), ((2, 0), (1, 1))];
    let job = run(program, &messages);
    let h = job.hazard().expect("a buffering hazard");
    assert_eq!(h.cycle, vec![0, 2, 1]);
    assert_eq!(
        stuck(&h, 0).waits_for,
        vec![Awaited {
            rank: 2,
            op_index: job.at(2, 1),
            kind: OpKind::Send,
            site: site(2, 1),
        }]
    );
}

/// `Isend(right); Isend(right); Waitany; Waitany; Recv(left); Recv(left)`.
fn ring_waitany(right: i32, left: i32) -> Vec<C> {
    vec![
        C::Isend(right),
        C::Isend(right),
        C::Waitany(1),
        C::Waitany(0),
        C::Recv(left),
        C::Recv(left),
    ]
}

#[test]
fn a_waitany_loop_over_ring_isends_needs_buffering() {
    for size in [3, 4] {
        let job = ring(size, ring_waitany, &[(4, 0), (5, 1)]);
        let h = job.hazard().expect("a buffering hazard");
        assert_eq!(h.cycle, (0..size as i32).collect::<Vec<_>>());
        for r in 0..size {
            let s = stuck(&h, r as i32);
            // Stuck at the first Waitany: neither send can complete.
            assert_eq!((s.kind, s.op_index), (OpKind::Waitany, job.at(r, 2)));
            assert!(s.standard_send);
            assert_eq!(s.origin, Some(job.at(r, 0)));
            assert_eq!(s.waits_for.len(), 2, "{s:?}");
        }
    }
}

#[test]
fn a_waitany_loop_with_the_receive_posted_first_needs_no_buffering() {
    // Irecv(left); Isend(right); Waitany (took the send); Waitany (took the
    // receive). Without buffering the first Waitany can take the receive
    // instead: the left neighbour's send was issued.
    let job = ring(
        3,
        |right, left| {
            vec![
                C::Irecv(left),
                C::Isend(right),
                C::Waitany(1),
                C::Waitany(0),
            ]
        },
        &[(3, 1)],
    );
    assert_eq!(job.hazard(), None);
}

#[test]
fn a_waitany_loop_needs_one_more_request_per_call() {
    // P0: Isend(to 1); Isend(to 2); Waitany; Waitany; Recv(from 2).
    // P1: Recv(from 0). P2: Send(to 0); Recv(from 0).
    // The first Waitany can take the send to P1, but the second needs the
    // send to P2, whose receive comes after P2's Send, which waits for
    // P0's Recv: a cycle through the second Waitany. An analysis that let
    // every Waitany pass once any request can complete would miss it.
    let program: &[&[C]] = &[
        &[
            C::Isend(1),
            C::Isend(2),
            C::Waitany(0),
            C::Waitany(1),
            C::Recv(2),
        ],
        &[C::Recv(0)],
        &[C::Send(0), C::Recv(0)],
    ];
    let messages = [((1, 0), (0, 0)), ((2, 1), (0, 1)), ((0, 4), (2, 0))];
    let job = run(program, &messages);
    let h = job.hazard().expect("a buffering hazard");
    assert_eq!(h.cycle, vec![0, 2]);
    let s = stuck(&h, 0);
    assert_eq!((s.kind, s.op_index), (OpKind::Waitany, job.at(0, 3)));
    assert_eq!(s.origin, Some(job.at(0, 1)));
    assert_eq!(stuck(&h, 2).kind, OpKind::Send);
    // The same order with the second send to P1 as well: no hazard.
    let program: &[&[C]] = &[
        &[
            C::Isend(1),
            C::Isend(1),
            C::Waitany(0),
            C::Waitany(1),
            C::Recv(2),
        ],
        &[C::Recv(0), C::Recv(0)],
        &[C::Send(0)],
    ];
    let messages = [((1, 0), (0, 0)), ((1, 1), (0, 1)), ((0, 4), (2, 0))];
    assert_eq!(run(program, &messages).hazard(), None);
}

#[test]
fn a_waitany_that_completed_nothing_waits_for_nothing() {
    // No `Completed` record: every request given was inactive.
    let program: &[&[C]] = &[
        &[C::Isend(1), C::Wait(0), C::Waitsome(&[]), C::Recv(1)],
        &[C::Recv(0), C::Send(0)],
    ];
    let messages = [((1, 0), (0, 0)), ((0, 3), (1, 1))];
    assert_eq!(run(program, &messages).hazard(), None);
}

#[test]
fn a_waitsome_over_ring_isends_needs_buffering() {
    let job = ring(
        3,
        |right, left| {
            vec![
                C::Isend(right),
                C::Isend(right),
                C::Waitsome(&[0, 1]),
                C::Recv(left),
                C::Recv(left),
            ]
        },
        &[(3, 0), (4, 1)],
    );
    let h = job.hazard().expect("a buffering hazard");
    assert_eq!(h.cycle, vec![0, 1, 2]);
    assert_eq!(stuck(&h, 1).kind, OpKind::Waitsome);
    // Receives posted first: no hazard.
    let job = ring(
        3,
        |right, left| vec![C::Irecv(left), C::Isend(right), C::Waitsome(&[0, 1])],
        &[(2, 1)],
    );
    assert_eq!(job.hazard(), None);
}

#[test]
fn tests_that_completed_requests_never_wait() {
    // A test that completed a send in the run could return false without
    // buffering; what the program does then is not in the trace, so no
    // deadlock can be claimed. Each form, in the ring of issue 11.
    let forms: [fn(i32, i32) -> Vec<C>; 4] = [
        |right, left| vec![C::Isend(right), C::Test(0), C::Recv(left)],
        |right, left| vec![C::Isend(right), C::Testall(&[0]), C::Recv(left)],
        |right, left| vec![C::Isend(right), C::Testany(0), C::Recv(left)],
        |right, left| vec![C::Isend(right), C::Testsome(&[0]), C::Recv(left)],
    ];
    for form in forms {
        assert_eq!(ring(3, form, &[(2, 0)]).hazard(), None);
    }
    // A Testany loop (the same ring with two sends).
    let job = ring(
        3,
        |right, left| {
            vec![
                C::Isend(right),
                C::Isend(right),
                C::Testany(0),
                C::Testany(1),
                C::Recv(left),
                C::Recv(left),
            ]
        },
        &[(4, 0), (5, 1)],
    );
    assert_eq!(job.hazard(), None);
    // A Testany loop whose receives are posted first: no hazard either.
    let job = ring(
        3,
        |right, left| {
            vec![
                C::Irecv(left),
                C::Isend(right),
                C::Testany(1),
                C::Testany(0),
            ]
        },
        &[(3, 1)],
    );
    assert_eq!(job.hazard(), None);
}

#[test]
fn a_request_a_test_completed_stays_in_a_later_waitanys_pool() {
    // Isend(right) a; Isend(right) b; Testany (took a); Waitany (took b);
    // Recv; Recv. Without buffering the Testany may return false, and the
    // Waitany may then take a or b: it is stuck only if neither can
    // complete, which is the case in this ring.
    let job = ring(
        3,
        |right, left| {
            vec![
                C::Isend(right),
                C::Isend(right),
                C::Testany(0),
                C::Waitany(1),
                C::Recv(left),
                C::Recv(left),
            ]
        },
        &[(4, 0), (5, 1)],
    );
    let h = job.hazard().expect("a buffering hazard");
    assert_eq!(stuck(&h, 0).waits_for.len(), 2);
}

#[test]
fn persistent_sends_are_modelled_as_isends() {
    // MPI_Start of an MPI_Send_init request, completed by Wait or Waitall.
    for form in [
        (|right, left| vec![C::Start(right), C::Wait(0), C::Recv(left)]) as fn(i32, i32) -> Vec<C>,
        |right, left| vec![C::Start(right), C::WaitallOf(&[0]), C::Recv(left)],
        |right, left| vec![C::Start(right), C::Waitany(0), C::Recv(left)],
    ] {
        let job = ring(3, form, &[(2, 0)]);
        let h = job.hazard().expect("a buffering hazard");
        assert_eq!(h.cycle, vec![0, 1, 2]);
        assert_eq!(stuck(&h, 2).origin, Some(job.at(2, 0)));
    }
}

#[test]
fn synchronous_sends_in_a_waitall_are_not_a_hazard_on_their_own() {
    // Issend to a rank that receives late, in a Waitall with a standard
    // send to a rank that receives early: the only stuck send is
    // synchronous, which the run itself waited for.
    let program: &[&[C]] = &[
        &[C::Isend(1), C::Issend(2), C::WaitallOf(&[0, 1])],
        &[C::Recv(0)],
        &[C::Recv(0)],
    ];
    let messages = [((1, 0), (0, 0)), ((2, 0), (0, 1))];
    assert_eq!(run(program, &messages).hazard(), None);
}

#[test]
fn a_completion_of_a_shared_handle_may_be_any_of_its_requests() {
    // MPICH gives every send that completed eagerly one shared handle; the
    // runtime credits a completion to the latest request with it. P0:
    // Isend(to 1) a; Isend(to 2) b, same handle; Wait (credited to b);
    // Send(to 2); Wait. P1: Recv(from 0). P2: Recv(from 0, the Send's
    // message); Recv(from 0, b's). If the first Wait were b's, it would
    // wait for P2's second Recv, after P2's first, which waits for P0's
    // Send: a cycle. But the program may have waited for a there, which P1
    // receives at once: no report.
    let program: &[&[C]] = &[
        &[C::Isend(1), C::Isend(2), C::Wait(1), C::Send(2), C::Wait(0)],
        &[C::Recv(0)],
        &[C::Recv(0), C::Recv(0)],
    ];
    let messages = [((1, 0), (0, 0)), ((2, 0), (0, 3)), ((2, 1), (0, 1))];
    let mut job = run(program, &messages);
    assert!(
        job.hazard().is_some(),
        "distinct handles: b's Wait is stuck"
    );
    let (a, b) = (job.at(0, 0) as usize, job.at(0, 1) as usize);
    let shared = job.traces[0].ops[b].request;
    job.traces[0].ops[a].request = shared;
    // The second Wait found no slot for the handle: no `aux`.
    let last = job.at(0, 4) as usize;
    job.traces[0].ops[last].aux = 0;
    job.traces[0].ops[last].request = shared;
    assert_eq!(job.hazard(), None);
}
