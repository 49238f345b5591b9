//! Hand-built trace snapshots of the scenarios of SCENARIOS.md and seed 003.

use super::*;
use mbh_trace::rank_trace::RankEnd;

const WORLD: u64 = 0x4400_0000;
const OTHER_COMM: u64 = 0x8400_0001;
/// MPI_ANY_SOURCE as MPICH spells it (the analysis reads the flag).
const ANY: i32 = -2;

fn op(kind: OpKind, peer: i32, tag: i32) -> Op {
    Op {
        index: 0,
        kind,
        flags: flags::RETURNED | if peer == ANY { flags::ANY_SOURCE } else { 0 },
        site: 100 + kind as u32,
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

/// A rank's trace, built call by call.
struct Rank {
    rank: i32,
    size: i32,
    ops: Vec<Op>,
}

impl Rank {
    fn new(rank: i32, size: i32) -> Self {
        Rank {
            rank,
            size,
            ops: vec![op(OpKind::Init, 0, 0)],
        }
    }

    fn next(&self) -> u64 {
        self.ops.len() as u64
    }

    /// A call that returned.
    fn call(mut self, mut op: Op) -> Self {
        op.index = self.next();
        self.ops.push(op);
        self
    }

    fn send(self, to: i32, tag: i32) -> Self {
        self.call(op(OpKind::Send, to, tag))
    }

    /// A completed receive (`from` may be ANY) that took `(src, tag)`.
    fn recv(self, from: i32, tag: i32, took: (i32, i32)) -> Self {
        let mut r = op(OpKind::Recv, from, tag);
        r.flags |= flags::HAS_STATUS;
        r.matched = Some(took);
        self.call(r)
    }

    fn isend(self, to: i32, request: u64) -> Self {
        self.call(Op {
            request,
            ..op(OpKind::Isend, to, 0)
        })
    }

    fn irecv(self, from: i32, tag: i32, request: u64) -> Self {
        self.call(Op {
            request,
            ..op(OpKind::Irecv, from, tag)
        })
    }

    fn barrier(self) -> Self {
        self.call(op(OpKind::Barrier, 0, 0))
    }

    fn trace(self, state: RankState, blocking: Option<u64>) -> Option<RankTrace> {
        Some(RankTrace {
            rank: self.rank,
            size: self.size,
            pid: 1000 + self.rank as u32,
            end: RankEnd {
                state,
                exit_status: None,
                signal: (state == RankState::Signaled).then_some(11),
                abort: None,
                fault_addr: 0,
                frames: Vec::new(),
                exe_base: 0,
                lost_records: 0,
                tool_stop: None,
            },
            blocking,
            polling: None,
            held: false,
            ops: self.ops,
        })
    }

    /// The rank is blocked in `op` (not returned).
    fn blocked(mut self, mut op: Op) -> Option<RankTrace> {
        op.flags &= !flags::RETURNED;
        op.index = self.next();
        let index = op.index;
        self.ops.push(op);
        self.trace(RankState::Running, Some(index))
    }

    /// Blocked in a `Wait` on the request the record `origin` created.
    fn blocked_wait(self, origin: u64) -> Option<RankTrace> {
        let request = self.ops[origin as usize].request;
        self.blocked(Op {
            request,
            aux: origin + 1,
            ..op(OpKind::Wait, 0, 0)
        })
    }

    /// Polling `polled` `polls` times, as the blocking `wait` (a `Wait`
    /// on the request of record `origin` when given).
    fn polling(self, polled: OpKind, wait: Op, polls: u64) -> Option<RankTrace> {
        let mut wait = Op {
            index: self.next(),
            ..wait
        };
        wait.flags &= !flags::RETURNED;
        let mut trace = self.trace(RankState::Running, None)?;
        trace.polling = Some(mbh_trace::rank_trace::Polling {
            wait,
            polled,
            polls,
        });
        Some(trace)
    }

    /// Polling `MPI_Test` on the request record `origin` made.
    fn testing(self, origin: u64, polls: u64) -> Option<RankTrace> {
        let wait = Op {
            request: self.ops[origin as usize].request,
            aux: origin + 1,
            ..op(OpKind::Wait, 0, 0)
        };
        self.polling(OpKind::Test, wait, polls)
    }

    fn finalized(self) -> Option<RankTrace> {
        self.call(op(OpKind::Finalize, 0, 0))
            .trace(RankState::Finalized, None)
    }
}

fn recv(from: i32) -> Op {
    op(OpKind::Recv, from, 0)
}

fn deadlock(snapshot: &[Option<RankTrace>]) -> Deadlock {
    find_deadlock(snapshot).expect("a deadlock")
}

fn waits(d: &Deadlock, rank: i32) -> &WaitFor {
    &d.blocked.iter().find(|b| b.rank == rank).unwrap().waits_for
}

#[test]
fn e1_receive_receive_cycle() {
    // P0: Recv(from 1); P1: Recv(from 0).
    let snapshot = [
        Rank::new(0, 2).blocked(recv(1)),
        Rank::new(1, 2).blocked(recv(0)),
    ];
    let d = deadlock(&snapshot);
    assert_eq!(d.ranks(), vec![0, 1]);
    assert_eq!(d.cycle, vec![0, 1]);
    assert_eq!(d.knot, vec![0, 1]);
    assert_eq!(waits(&d, 0), &WaitFor::All(vec![1]));
    assert_eq!(d.blocked[0].kind, OpKind::Recv);
    assert_eq!(d.blocked[0].op_index, 1);
    assert_eq!(d.blocked[0].site, 100 + OpKind::Recv as u32);
    assert!(!d.caused_by_dead_ranks);
    assert!(d.dead_ranks.is_empty());
    assert!(d.collective_mismatches.is_empty());
}

#[test]
fn e4_wildcard_took_the_message_the_later_receive_needed() {
    // P0: Send(to 1); P2: Send(to 1); P1: Recv(*); Recv(from 2). Second
    // interleaving: the wildcard took P2's message. P0 and P2 wait in
    // MPI_Finalize.
    let snapshot = [
        Rank::new(0, 3)
            .send(1, 0)
            .blocked(op(OpKind::Finalize, 0, 0)),
        Rank::new(1, 3).recv(ANY, 0, (2, 0)).blocked(recv(2)),
        Rank::new(2, 3)
            .send(1, 0)
            .blocked(op(OpKind::Finalize, 0, 0)),
    ];
    let d = deadlock(&snapshot);
    assert_eq!(d.ranks(), vec![0, 1, 2]);
    assert_eq!(waits(&d, 1), &WaitFor::All(vec![2]));
    assert_eq!(waits(&d, 2), &WaitFor::All(vec![1]));
    assert_eq!(d.cycle, vec![1, 2]);
    assert_eq!(d.knot, vec![1, 2]);

    // First interleaving: the wildcard took P0's; P2's message is there.
    let snapshot = [
        Rank::new(0, 3)
            .send(1, 0)
            .blocked(op(OpKind::Finalize, 0, 0)),
        Rank::new(1, 3).recv(ANY, 0, (0, 0)).blocked(recv(2)),
        Rank::new(2, 3)
            .send(1, 0)
            .blocked(op(OpKind::Finalize, 0, 0)),
    ];
    assert_eq!(find_deadlock(&snapshot), None);
}

#[test]
fn head_to_head_synchronous_sends() {
    let snapshot = [
        Rank::new(0, 2).blocked(op(OpKind::Ssend, 1, 0)),
        Rank::new(1, 2).blocked(op(OpKind::Ssend, 0, 0)),
    ];
    let d = deadlock(&snapshot);
    assert_eq!(d.cycle, vec![0, 1]);
    assert_eq!(waits(&d, 1), &WaitFor::All(vec![0]));

    // E2 under zero buffering: Isend; Wait on both sides.
    let snapshot = [
        Rank::new(0, 2).isend(1, 7).blocked_wait(1),
        Rank::new(1, 2).isend(0, 7).blocked_wait(1),
    ];
    let d = deadlock(&snapshot);
    assert_eq!(d.cycle, vec![0, 1]);
    assert_eq!(d.blocked[0].kind, OpKind::Wait);
    assert_eq!(d.blocked[0].origin, Some(1));
}

#[test]
fn a_receive_whose_send_was_issued_is_not_deadlocked() {
    // P1 is still in its (rendezvous) Send to P0.
    let snapshot = [
        Rank::new(0, 2).blocked(recv(1)),
        Rank::new(1, 2).blocked(op(OpKind::Send, 0, 0)),
    ];
    assert_eq!(find_deadlock(&snapshot), None);
    // P1's Send returned (buffered) and it waits in MPI_Finalize.
    let snapshot = [
        Rank::new(0, 2).blocked(recv(1)),
        Rank::new(1, 2)
            .send(0, 0)
            .blocked(op(OpKind::Finalize, 0, 0)),
    ];
    assert_eq!(find_deadlock(&snapshot), None);
}

#[test]
fn a_send_with_a_posted_matching_irecv_is_not_deadlocked() {
    // P0: Ssend(to 1, tag 5); Barrier. P1: Irecv(from 0, tag 5); Barrier;
    // Wait. P2: Barrier. The barrier waits for P0, whose send the Irecv
    // takes.
    let snapshot = [
        Rank::new(0, 3).blocked(op(OpKind::Ssend, 1, 5)),
        Rank::new(1, 3)
            .irecv(0, 5, 9)
            .blocked(op(OpKind::Barrier, 0, 0)),
        Rank::new(2, 3).blocked(op(OpKind::Barrier, 0, 0)),
    ];
    assert_eq!(find_deadlock(&snapshot), None);
    // Without the Irecv (or with another tag) it is a deadlock.
    let snapshot = [
        Rank::new(0, 3).blocked(op(OpKind::Ssend, 1, 5)),
        Rank::new(1, 3)
            .irecv(0, 6, 9)
            .blocked(op(OpKind::Barrier, 0, 0)),
        Rank::new(2, 3).blocked(op(OpKind::Barrier, 0, 0)),
    ];
    let d = deadlock(&snapshot);
    assert_eq!(waits(&d, 1), &WaitFor::All(vec![0]));
    assert_eq!(waits(&d, 2), &WaitFor::All(vec![0]));
    assert_eq!(d.cycle, vec![0, 1]);
    assert_eq!(d.knot, vec![0, 1]);
}

#[test]
fn ranks_in_the_same_barrier_are_not_deadlocked() {
    let snapshot: Vec<_> = (0..4)
        .map(|r| Rank::new(r, 4).barrier().blocked(op(OpKind::Barrier, 0, 0)))
        .collect();
    assert_eq!(find_deadlock(&snapshot), None);
}

#[test]
fn e3_different_collectives_are_a_mismatch() {
    // P0: Bcast; Barrier. P1: Barrier; Bcast.
    let snapshot = [
        Rank::new(0, 2).blocked(op(OpKind::Bcast, 0, 0)),
        Rank::new(1, 2).blocked(op(OpKind::Barrier, 0, 0)),
    ];
    let d = deadlock(&snapshot);
    assert_eq!(
        d.collective_mismatches,
        vec![CollectiveMismatch {
            comm: WORLD,
            sequence: 0,
            calls: vec![
                CollectiveCall {
                    rank: 0,
                    op_index: 1,
                    kind: OpKind::Bcast,
                    site: 100 + OpKind::Bcast as u32
                },
                CollectiveCall {
                    rank: 1,
                    op_index: 1,
                    kind: OpKind::Barrier,
                    site: 100 + OpKind::Barrier as u32
                },
            ]
        }]
    );
    assert!(!d.caused_by_dead_ranks);
}

#[test]
fn a_wildcard_receive_with_a_live_sender_is_not_deadlocked() {
    // P0: Recv(*). P1 finalized. P2: Recv(from 3), which P3's Send
    // satisfies: P2 and P3 go on, and either may send to P0.
    let snapshot = [
        Rank::new(0, 4).blocked(recv(ANY)),
        Rank::new(1, 4).finalized(),
        Rank::new(2, 4).blocked(recv(3)),
        Rank::new(3, 4).blocked(op(OpKind::Send, 2, 0)),
    ];
    assert_eq!(find_deadlock(&snapshot), None);
    // Every possible sender finalized: a deadlock caused by dead ranks.
    let snapshot = [
        Rank::new(0, 3).blocked(recv(ANY)),
        Rank::new(1, 3).finalized(),
        Rank::new(2, 3).finalized(),
    ];
    let d = deadlock(&snapshot);
    assert_eq!(waits(&d, 0), &WaitFor::Any(vec![1, 2]));
    assert!(d.caused_by_dead_ranks);
    assert!(d.cycle.is_empty());
}

#[test]
fn waiting_for_a_finalized_rank_is_caused_by_a_dead_rank() {
    let snapshot = [
        Rank::new(0, 2).blocked(recv(1)),
        Rank::new(1, 2).finalized(),
    ];
    let d = deadlock(&snapshot);
    assert!(d.caused_by_dead_ranks);
    assert_eq!(
        d.dead_ranks,
        vec![DeadRank {
            rank: 1,
            state: RankState::Finalized,
            finalized: true
        }]
    );
    assert!(d.cycle.is_empty());
    assert!(d.knot.is_empty());

    // A crashed rank: the caller reports the crash.
    let snapshot = [
        Rank::new(0, 2).blocked(recv(1)),
        Rank::new(1, 2).trace(RankState::Signaled, None),
    ];
    let d = deadlock(&snapshot);
    assert!(d.caused_by_dead_ranks);
    assert!(!d.dead_ranks[0].finalized);

    // A cycle of live ranks beside a dead one is a deadlock of its own.
    let snapshot = [
        Rank::new(0, 4).blocked(recv(1)),
        Rank::new(1, 4).blocked(recv(0)),
        Rank::new(2, 4).blocked(recv(3)),
        Rank::new(3, 4).trace(RankState::Signaled, None),
    ];
    let d = deadlock(&snapshot);
    assert!(!d.caused_by_dead_ranks);
    assert_eq!(d.cycle, vec![0, 1]);
    assert_eq!(d.dead_ranks.len(), 1);
}

#[test]
fn sends_are_taken_in_non_overtaking_order_per_tag() {
    // P1 sent tag 1 then tag 2; P0 received the tag-2 one.
    let p1 = || Rank::new(1, 2).send(0, 1).send(0, 2).blocked(recv(0));
    let waiting_for = |tag| {
        [
            Rank::new(0, 2)
                .recv(1, 2, (1, 2))
                .blocked(op(OpKind::Recv, 1, tag)),
            p1(),
        ]
    };
    // Another tag 2: none left.
    assert_eq!(deadlock(&waiting_for(2)).cycle, vec![0, 1]);
    // Tag 1: still there.
    assert_eq!(find_deadlock(&waiting_for(1)), None);
    // MPI_ANY_TAG: the tag-1 message.
    let mut any_tag = op(OpKind::Recv, 1, -1);
    any_tag.flags |= flags::ANY_TAG;
    let snapshot = [Rank::new(0, 2).recv(1, 2, (1, 2)).blocked(any_tag), p1()];
    assert_eq!(find_deadlock(&snapshot), None);
}

#[test]
fn an_earlier_identical_irecv_takes_the_message_first() {
    let snapshot = [
        Rank::new(0, 2).irecv(1, 0, 5).blocked(recv(1)),
        Rank::new(1, 2).send(0, 0).blocked(recv(0)),
    ];
    assert_eq!(deadlock(&snapshot).cycle, vec![0, 1]);
    // The same send, waited for through the Irecv itself: it completes.
    let snapshot = [
        Rank::new(0, 2).irecv(1, 0, 5).blocked_wait(1),
        Rank::new(1, 2).send(0, 0).blocked(recv(0)),
    ];
    assert_eq!(find_deadlock(&snapshot), None);
}

/// Rank 0 posted an `Irecv` from rank 1 with `first_tag`, then a wildcard
/// one with tag 0, and waits on the wildcard; rank 1 sent `sends` messages
/// with tag 0; ranks 1 and 2 wait in a barrier.
fn wildcard_after_specific(first_tag: i32, sends: usize) -> [Option<RankTrace>; 3] {
    let mut sender = Rank::new(1, 3);
    for _ in 0..sends {
        sender = sender.send(0, 0);
    }
    [
        Rank::new(0, 3)
            .irecv(1, first_tag, 5)
            .irecv(ANY, 0, 6)
            .blocked_wait(2),
        sender.blocked(op(OpKind::Barrier, 0, 0)),
        Rank::new(2, 3).blocked(op(OpKind::Barrier, 0, 0)),
    ]
}

#[test]
fn an_earlier_specific_irecv_takes_the_message_a_later_wildcard_waits_for() {
    // Soak seed 4220's shape: the `Irecv` from rank 1 was posted first, so
    // rank 1's one message is its (MPI may have completed it without the
    // runtime processing it yet); the wildcard gets nothing from rank 1.
    let d = deadlock(&wildcard_after_specific(0, 1));
    assert_eq!(waits(&d, 0), &WaitFor::Any(vec![1, 2]));
    // A second message from rank 1 is left for the wildcard.
    assert_eq!(find_deadlock(&wildcard_after_specific(0, 2)), None);
    // The earlier receive takes another tag only: the message is free.
    assert_eq!(find_deadlock(&wildcard_after_specific(7, 1)), None);
}

#[test]
fn an_earlier_wildcard_leaves_the_order_of_matches_open() {
    // Rank 0 posted a wildcard, then a receive from rank 1, then waits on
    // a wildcard. If rank 1's message comes first the first wildcard
    // takes it, and rank 2's then reaches the receive waited on: it can
    // complete, whatever a per-sender order would say.
    let snapshot = [
        Rank::new(0, 3)
            .irecv(ANY, 0, 4)
            .irecv(1, 0, 5)
            .irecv(ANY, 0, 6)
            .blocked_wait(3),
        Rank::new(1, 3)
            .send(0, 0)
            .blocked(op(OpKind::Barrier, 0, 0)),
        Rank::new(2, 3)
            .send(0, 0)
            .blocked(op(OpKind::Barrier, 0, 0)),
    ];
    assert_eq!(find_deadlock(&snapshot), None);
}

#[test]
fn matched_records_say_exactly_which_send_was_taken() {
    // P0's first receive took P1's send (record 1), as its Matched record says.
    let p0 = Rank::new(0, 2).recv(1, 0, (1, 0)).call(Op {
        request: 1,
        peer: 1,
        aux: 1,
        ..op(OpKind::Matched, 1, 0)
    });
    let snapshot = [
        p0.blocked(recv(1)),
        Rank::new(1, 2).send(0, 0).blocked(recv(0)),
    ];
    assert_eq!(deadlock(&snapshot).cycle, vec![0, 1]);
}

#[test]
fn waitany_waits_for_any_of_its_requests() {
    // P0: Irecv(from 1); Irecv(from 2); Waitany. P1, P2: Recv(from 0).
    let snapshot = [
        Rank::new(0, 3)
            .irecv(1, 0, 3)
            .irecv(2, 0, 4)
            .blocked(op(OpKind::Waitany, 0, 0)),
        Rank::new(1, 3).blocked(recv(0)),
        Rank::new(2, 3).blocked(recv(0)),
    ];
    let d = deadlock(&snapshot);
    assert_eq!(waits(&d, 0), &WaitFor::Any(vec![1, 2]));
    assert_eq!(d.cycle, vec![0, 1]);
    assert_eq!(d.knot, vec![0, 1, 2]);
}

#[test]
fn a_rank_waiting_for_itself_is_a_cycle_of_one() {
    // Seed 004 Example 1 (F1): Irecv(from 0); Wait; Barrier; Isend(to 0).
    let snapshot = [Rank::new(0, 1).irecv(0, 0, 3).blocked_wait(1)];
    let d = deadlock(&snapshot);
    assert_eq!(d.cycle, vec![0]);
    assert_eq!(d.knot, vec![0]);
}

#[test]
fn unsure_means_no_deadlock() {
    // A communicator other than MPI_COMM_WORLD: ranks cannot be translated.
    let snapshot = [
        Rank::new(0, 2).blocked(Op {
            comm: OTHER_COMM,
            ..recv(1)
        }),
        Rank::new(1, 2).blocked(recv(0)),
    ];
    assert_eq!(find_deadlock(&snapshot), None);
    // A rank without a trace, or computing outside MPI.
    assert_eq!(
        find_deadlock(&[Rank::new(0, 2).blocked(recv(1)), None]),
        None
    );
    let snapshot = [
        Rank::new(0, 2).blocked(recv(1)),
        Rank::new(1, 2).trace(RankState::Running, None),
    ];
    assert_eq!(find_deadlock(&snapshot), None);
    // A Wait whose request is unknown.
    let snapshot = [
        Rank::new(0, 2).blocked(op(OpKind::Wait, 0, 0)),
        Rank::new(1, 2).blocked(recv(0)),
    ];
    assert_eq!(find_deadlock(&snapshot), None);
    // Nothing live.
    assert_eq!(find_deadlock(&[Rank::new(0, 1).finalized()]), None);
    assert_eq!(find_deadlock(&[]), None);
}

#[test]
fn progress_between_snapshots() {
    let before = [
        Rank::new(0, 2).blocked(recv(1)),
        Rank::new(1, 2).blocked(recv(0)),
    ];
    let same = before.clone();
    assert!(no_progress(&before, &same));
    let after = [
        Rank::new(0, 2).blocked(recv(1)),
        Rank::new(1, 2).send(0, 0).blocked(recv(0)),
    ];
    assert!(!no_progress(&before, &after));
    assert!(!no_progress(&before, &[before[0].clone(), None]));
    assert!(!no_progress(&before, &before[..1]));
}

#[test]
fn a_forced_wildcard_receive_waits_only_for_its_forced_source() {
    // A guided replay forced P1's Recv(*) to P2 (the record keeps the
    // ANY_SOURCE flag, with the forced source in `peer`), but P2's only
    // message was taken earlier: P0's unmatched message cannot help.
    let mut forced = op(OpKind::Recv, 2, 0);
    forced.flags |= flags::ANY_SOURCE;
    let snapshot = [
        Rank::new(0, 3)
            .send(1, 0)
            .blocked(op(OpKind::Finalize, 0, 0)),
        Rank::new(1, 3).recv(2, 0, (2, 0)).blocked(forced),
        Rank::new(2, 3)
            .send(1, 0)
            .blocked(op(OpKind::Finalize, 0, 0)),
    ];
    let d = deadlock(&snapshot);
    assert_eq!(waits(&d, 1), &WaitFor::All(vec![2]));
}

#[test]
fn a_wait_on_a_started_persistent_receive_waits_like_an_irecv() {
    // P0: Recv_init(from 1); Start; Wait. P1: Recv(from 0). Both stuck.
    let started = |rank: i32, from: i32| {
        Rank::new(rank, 2)
            .call(Op {
                request: 7,
                ..op(OpKind::StartRecv, from, 0)
            })
            .blocked_wait(1)
    };
    let snapshot = [started(0, 1), Rank::new(1, 2).blocked(recv(0))];
    let d = deadlock(&snapshot);
    assert_eq!(d.cycle, vec![0, 1]);
    assert_eq!(waits(&d, 0), &WaitFor::All(vec![1]));
    // Once P1 sends, the started receive can complete.
    let snapshot = [started(0, 1), Rank::new(1, 2).send(0, 0).blocked(recv(0))];
    assert_eq!(find_deadlock(&snapshot), None);
}

#[test]
fn a_wait_on_an_imrecv_never_waits() {
    // P0 waits on a receive from P1 while P1 waits for P0: a cycle with an
    // Irecv, none with an Imrecv (its matched probe took the message).
    let waiting_on = |kind: OpKind| {
        [
            Rank::new(0, 2)
                .call(Op {
                    request: 7,
                    ..op(kind, 1, 0)
                })
                .blocked_wait(1),
            Rank::new(1, 2).blocked(recv(0)),
        ]
    };
    assert_eq!(deadlock(&waiting_on(OpKind::Irecv)).cycle, vec![0, 1]);
    assert_eq!(find_deadlock(&waiting_on(OpKind::Imrecv)), None);
}

#[test]
fn a_cancelled_irecv_takes_no_message() {
    // P0: Irecv(from 1) then blocked in Recv(from 1, tag 5); P1: blocked in
    // Ssend(to 0, tag 0). The pending Irecv would take the Ssend; once
    // cancelled it takes nothing, and the two ranks wait for each other.
    let snapshot = |cancelled: bool| {
        let mut irecv = Op {
            request: 9,
            ..op(OpKind::Irecv, 1, 0)
        };
        if cancelled {
            irecv.flags |= flags::CANCELLED;
        }
        [
            Rank::new(0, 2).call(irecv).blocked(op(OpKind::Recv, 1, 5)),
            Rank::new(1, 2).blocked(op(OpKind::Ssend, 0, 0)),
        ]
    };
    assert_eq!(find_deadlock(&snapshot(false)), None);
    assert_eq!(deadlock(&snapshot(true)).cycle, vec![0, 1]);
}

/// A communicator's id as the runtime names it (top bit set).
const DUP: u64 = 1 << 63 | 5;

impl Rank {
    /// The rank is a member of the named communicator `id`.
    fn named(self, id: u64) -> Self {
        let rank = self.rank;
        self.named_as(id, rank)
    }

    /// Names communicator `id`, in which this rank is `rank_there`.
    fn named_as(self, id: u64, rank_there: i32) -> Self {
        self.call(Op {
            comm: 0x8400_0003,
            aux: id,
            ..op(OpKind::CommId, rank_there, 0)
        })
    }

    /// A nonblocking collective on `comm` with sequence number `seq` there
    /// (recorded in `tag` as 1 + it) and request handle `request`.
    fn icoll(self, kind: OpKind, comm: u64, seq: i32, request: u64) -> Self {
        self.call(Op {
            comm,
            request,
            ..op(kind, 0, seq + 1)
        })
    }

    /// The nonblocking collective at record `origin` completed.
    fn completed(self, origin: u64) -> Self {
        self.call(Op {
            request: origin,
            aux: u64::MAX,
            ..op(OpKind::CollectiveComplete, 0, 0)
        })
    }

    /// Blocked in a `Waitall` over `count` requests, listing the requests
    /// made at records `listed`.
    fn blocked_waitall(self, count: i32, listed: &[u64]) -> Option<RankTrace> {
        self.blocked_listing(OpKind::Waitall, count, listed)
    }

    /// Blocked in `kind` (a call on several requests) over `count`
    /// requests, listing the requests made at records `listed`
    /// (`u64::MAX`: a request the runtime did not know).
    fn blocked_listing(mut self, kind: OpKind, count: i32, listed: &[u64]) -> Option<RankTrace> {
        let index = self.next();
        self = self.call(Op {
            flags: 0,
            count,
            ..op(kind, 0, 0)
        });
        for &origin in listed {
            self = self.call(Op {
                request: index,
                aux: origin.wrapping_add(1),
                ..op(OpKind::WaitRequest, 0, 0)
            });
        }
        self.trace(RankState::Running, Some(index))
    }

    /// The `Matched` record of receive `receiver`: it took `sender`'s
    /// send at record `send`.
    fn took(self, receiver: u64, sender: i32, send: u64) -> Self {
        self.call(Op {
            request: receiver,
            aux: send,
            ..op(OpKind::Matched, sender, 0)
        })
    }
}

fn pending(d: &Deadlock, rank: i32) -> PendingCollective {
    d.blocked
        .iter()
        .find(|b| b.rank == rank)
        .and_then(|b| b.collective)
        .expect("a collective")
}

#[test]
fn ibarriers_on_different_communicators_wait_for_each_other() {
    // Issue 11 (a): P0 Ibarrier(world); Wait. P1 Ibarrier(dup); Wait.
    let snapshot = [
        Rank::new(0, 2)
            .named(DUP)
            .icoll(OpKind::Ibarrier, WORLD, 0, 9)
            .blocked_wait(2),
        Rank::new(1, 2)
            .named(DUP)
            .icoll(OpKind::Ibarrier, DUP, 0, 9)
            .blocked_wait(2),
    ];
    let d = deadlock(&snapshot);
    assert_eq!(waits(&d, 0), &WaitFor::All(vec![1]));
    assert_eq!(waits(&d, 1), &WaitFor::All(vec![0]));
    assert_eq!(d.cycle, vec![0, 1]);
    assert!(d.collective_mismatches.is_empty());
    let p0 = pending(&d, 0);
    assert_eq!(
        (p0.call.kind, p0.call.op_index, p0.world, p0.sequence),
        (OpKind::Ibarrier, 2, true, 0)
    );
    let p1 = pending(&d, 1);
    assert_eq!((p1.world, p1.sequence), (false, 0));
    assert_eq!(d.blocked[0].origin, Some(2));
}

#[test]
fn an_ibarrier_never_posted_by_a_rank_blocked_elsewhere() {
    // Issue 11 (c): P0 Ibarrier; Wait; Send(to 1). P1 Recv(from 0).
    let snapshot = [
        Rank::new(0, 2)
            .icoll(OpKind::Ibarrier, WORLD, 0, 9)
            .blocked_wait(1),
        Rank::new(1, 2).blocked(recv(0)),
    ];
    let d = deadlock(&snapshot);
    assert_eq!(waits(&d, 0), &WaitFor::All(vec![1]));
    assert_eq!(d.cycle, vec![0, 1]);
    // Never posted by a rank that finalized: caused by that rank's end,
    // still a deadlock of the waiting one.
    let snapshot = [
        Rank::new(0, 2)
            .icoll(OpKind::Ibarrier, WORLD, 0, 9)
            .blocked_wait(1),
        Rank::new(1, 2).finalized(),
    ];
    let d = deadlock(&snapshot);
    assert_eq!(waits(&d, 0), &WaitFor::All(vec![1]));
    assert_eq!(d.dead_ranks.len(), 1);
}

#[test]
fn a_wait_on_a_collective_every_member_posted_can_complete() {
    // P0 Iallreduce(dup); Wait. P1 Iallreduce(dup); Recv(from 0): MPI
    // completes the collective while P1 waits in its Recv.
    let snapshot = [
        Rank::new(0, 2)
            .named(DUP)
            .icoll(OpKind::Iallreduce, DUP, 0, 9)
            .blocked_wait(2),
        Rank::new(1, 2)
            .named(DUP)
            .icoll(OpKind::Iallreduce, DUP, 0, 9)
            .blocked(recv(0)),
    ];
    assert_eq!(find_deadlock(&snapshot), None);
    // Sequence numbers count per communicator: P1's world collective does
    // not stand in for the one on the duplicate.
    let snapshot = [
        Rank::new(0, 2)
            .named(DUP)
            .icoll(OpKind::Ibarrier, WORLD, 0, 8)
            .icoll(OpKind::Ibarrier, DUP, 0, 9)
            .blocked_wait(3),
        Rank::new(1, 2)
            .named(DUP)
            .icoll(OpKind::Ibarrier, WORLD, 0, 8)
            .blocked(recv(0)),
    ];
    let d = deadlock(&snapshot);
    assert_eq!(pending(&d, 0).sequence, 0);
    assert_eq!(waits(&d, 0), &WaitFor::All(vec![1]));
}

#[test]
fn a_blocking_collective_on_a_named_communicator_waits_for_its_members_only() {
    // Three ranks; P0 and P1 share a communicator: P0 Barrier(sub), P1
    // Recv(from 2), P2 Recv(from 0). P2 is no member: P0 waits for P1.
    let sub = 1 << 63 | 11;
    let snapshot = [
        Rank::new(0, 3).named(sub).blocked(Op {
            comm: sub,
            ..op(OpKind::Barrier, 0, 1)
        }),
        Rank::new(1, 3).named(sub).blocked(recv(2)),
        Rank::new(2, 3).blocked(recv(0)),
    ];
    let d = deadlock(&snapshot);
    assert_eq!(waits(&d, 0), &WaitFor::All(vec![1]));
    assert_eq!(d.cycle, vec![0, 1, 2]);
    // A communicator nobody named (its members are not known): unsure.
    let snapshot = [
        Rank::new(0, 2).blocked(Op {
            comm: OTHER_COMM,
            ..op(OpKind::Barrier, 0, 0)
        }),
        Rank::new(1, 2).blocked(recv(0)),
    ];
    assert_eq!(find_deadlock(&snapshot), None);
}

#[test]
fn different_nonblocking_collectives_at_one_position_are_a_mismatch() {
    // P0 Ibcast(dup); Wait. P1 Iallreduce(dup); Wait.
    let snapshot = [
        Rank::new(0, 2)
            .named(DUP)
            .icoll(OpKind::Ibcast, DUP, 0, 9)
            .blocked_wait(2),
        Rank::new(1, 2)
            .named(DUP)
            .icoll(OpKind::Iallreduce, DUP, 0, 9)
            .blocked_wait(2),
    ];
    let d = deadlock(&snapshot);
    assert_eq!(d.collective_mismatches.len(), 1);
    assert_eq!(d.collective_mismatches[0].comm, DUP);
    assert_eq!(d.collective_mismatches[0].calls.len(), 2);
}

#[test]
fn a_waitall_cannot_return_without_a_listed_collective() {
    // Issue 11, Waitall: P0 Ibarrier(world); Ibarrier(dup); Waitall(2).
    // P1 Ibarrier(dup); Recv(from 0). The duplicate's barrier can
    // complete, the world's cannot: the Waitall waits for P1.
    let snapshot = [
        Rank::new(0, 2)
            .named(DUP)
            .icoll(OpKind::Ibarrier, WORLD, 0, 8)
            .icoll(OpKind::Ibarrier, DUP, 0, 9)
            .blocked_waitall(2, &[2, 3]),
        Rank::new(1, 2)
            .named(DUP)
            .icoll(OpKind::Ibarrier, DUP, 0, 9)
            .blocked(recv(0)),
    ];
    let d = deadlock(&snapshot);
    assert_eq!(waits(&d, 0), &WaitFor::All(vec![1]));
    assert_eq!(pending(&d, 0).call.op_index, 2);
    assert_eq!(d.cycle, vec![0, 1]);
    // Unlisted (a runtime that wrote no WaitRequest records), the same
    // Waitall is OR over the outstanding requests: unsure.
    let snapshot = [
        Rank::new(0, 2)
            .named(DUP)
            .icoll(OpKind::Ibarrier, WORLD, 0, 8)
            .icoll(OpKind::Ibarrier, DUP, 0, 9)
            .blocked_waitall(2, &[]),
        Rank::new(1, 2)
            .named(DUP)
            .icoll(OpKind::Ibarrier, DUP, 0, 9)
            .blocked(recv(0)),
    ];
    assert_eq!(find_deadlock(&snapshot), None);
}

#[test]
fn a_waitany_over_a_stuck_collective_and_a_stuck_receive() {
    // P0 Ibarrier(world); Irecv(from 1); Waitany. P1 Recv(from 0).
    let snapshot = [
        Rank::new(0, 2)
            .icoll(OpKind::Ibarrier, WORLD, 0, 8)
            .irecv(1, 0, 9)
            .blocked(op(OpKind::Waitany, 0, 0)),
        Rank::new(1, 2).blocked(recv(0)),
    ];
    let d = deadlock(&snapshot);
    assert_eq!(waits(&d, 0), &WaitFor::Any(vec![1]));
    // A collective completed earlier is no longer outstanding; one that
    // can complete makes the Waitany able to return.
    let snapshot = [
        Rank::new(0, 2)
            .icoll(OpKind::Ibarrier, WORLD, 0, 8)
            .completed(1)
            .icoll(OpKind::Ibarrier, WORLD, 1, 8)
            .irecv(1, 0, 9)
            .blocked(op(OpKind::Waitany, 0, 0)),
        Rank::new(1, 2)
            .icoll(OpKind::Ibarrier, WORLD, 0, 8)
            .icoll(OpKind::Ibarrier, WORLD, 1, 8)
            .blocked(recv(0)),
    ];
    assert_eq!(find_deadlock(&snapshot), None);
}

/// A returned `MPI_Sendrecv` from `MPI_PROC_NULL` that sent `tag` to `to`
/// (its record's `peer`/`tag` are the receive half's).
fn sendrecv_from_proc_null(to: i32, tag: i32) -> Op {
    Op {
        flags: flags::RETURNED | flags::PROC_NULL,
        request: u64::from(to as u32) | u64::from(tag as u32) << 32,
        ..op(OpKind::Sendrecv, -1, 9)
    }
}

#[test]
fn a_sendrecv_send_half_is_an_issued_send() {
    // P0: Sendrecv(send tag 5 to 1, receive from MPI_PROC_NULL with tag 9),
    // then Recv(from 1). P1: Recv(from 0, tag 5), which P0's send half
    // serves: no deadlock (the send half used to be left out, and its tag
    // read from the record's receive tag).
    let snapshot = [
        Rank::new(0, 2)
            .call(sendrecv_from_proc_null(1, 5))
            .blocked(recv(1)),
        Rank::new(1, 2).blocked(op(OpKind::Recv, 0, 5)),
    ];
    assert_eq!(find_deadlock(&snapshot), None);
    // P1 wants the record's (receive) tag 9: nothing was sent with it.
    let snapshot = [
        Rank::new(0, 2)
            .call(sendrecv_from_proc_null(1, 5))
            .blocked(recv(1)),
        Rank::new(1, 2).blocked(op(OpKind::Recv, 0, 9)),
    ];
    assert_eq!(deadlock(&snapshot).cycle, vec![0, 1]);
}

/// A split of three ranks in reverse order: world rank r is rank 2 - r.
const REVERSED: u64 = 1 << 63 | 21;

fn on_reversed(op: Op) -> Op {
    Op {
        comm: REVERSED,
        ..op
    }
}

#[test]
fn a_receive_on_a_split_waits_for_the_world_rank_of_its_source() {
    // Issue 16: P2 (rank 0 of the split) receives from the split's rank 2,
    // world rank 0, which sent on MPI_COMM_WORLD instead and went on to
    // MPI_Finalize, as did P1. Before, a receive on any communicator but
    // the world was assumed to complete, and the run hung until the
    // timeout.
    let rank = |r: i32| Rank::new(r, 3).named_as(REVERSED, 2 - r);
    let snapshot = [
        rank(0).send(2, 0).blocked(op(OpKind::Finalize, 0, 0)),
        rank(1).blocked(op(OpKind::Finalize, 0, 0)),
        rank(2).blocked(on_reversed(recv(2))),
    ];
    let d = deadlock(&snapshot);
    assert_eq!(waits(&d, 2), &WaitFor::All(vec![0]));
    assert_eq!(waits(&d, 0), &WaitFor::All(vec![2]));
    assert_eq!(d.cycle, vec![0, 2]);
    // Sent on the split to its rank 0 (world rank 2): the receive can
    // complete.
    let snapshot = [
        rank(0)
            .call(on_reversed(op(OpKind::Send, 0, 0)))
            .blocked(op(OpKind::Finalize, 0, 0)),
        rank(1).blocked(op(OpKind::Finalize, 0, 0)),
        rank(2).blocked(on_reversed(recv(2))),
    ];
    assert_eq!(find_deadlock(&snapshot), None);
}

#[test]
fn a_wildcard_receive_on_a_split_waits_for_its_other_members() {
    // P0 and P1 form a split of two (P1 first); P0 takes ANY_SOURCE there
    // while P1 and P2 are stuck elsewhere: P0 waits for P1 only.
    let sub = 1 << 63 | 22;
    let snapshot = [
        Rank::new(0, 3).named_as(sub, 1).blocked(Op {
            comm: sub,
            ..recv(ANY)
        }),
        Rank::new(1, 3).named_as(sub, 0).blocked(recv(2)),
        Rank::new(2, 3).blocked(recv(1)),
    ];
    let d = deadlock(&snapshot);
    assert_eq!(waits(&d, 0), &WaitFor::Any(vec![1]));
    // P1 sent to the split's rank 1 (world 0) with the wildcard's tag.
    let snapshot = [
        Rank::new(0, 3).named_as(sub, 1).blocked(Op {
            comm: sub,
            ..recv(ANY)
        }),
        Rank::new(1, 3)
            .named_as(sub, 0)
            .call(Op {
                comm: sub,
                ..op(OpKind::Send, 1, 0)
            })
            .blocked(recv(2)),
        Rank::new(2, 3).blocked(recv(1)),
    ];
    assert_eq!(find_deadlock(&snapshot), None);
}

/// A blocked `MPI_Sendrecv`: send `send_tag` to `to`, receive from `from`
/// with `recv_tag`.
fn sendrecv(to: i32, send_tag: i32, from: i32, recv_tag: i32) -> Op {
    Op {
        request: u64::from(to as u32) | u64::from(send_tag as u32) << 32,
        ..op(OpKind::Sendrecv, from, recv_tag)
    }
}

#[test]
fn a_sendrecv_waits_for_its_receive_half() {
    // Both ranks exchange, but each sends a tag the other does not take.
    let snapshot = [
        Rank::new(0, 2).blocked(sendrecv(1, 1, 1, 2)),
        Rank::new(1, 2).blocked(sendrecv(0, 3, 0, 4)),
    ];
    let d = deadlock(&snapshot);
    assert_eq!(d.cycle, vec![0, 1]);
    assert_eq!(d.blocked[0].kind, OpKind::Sendrecv);
    // The tags agree: each receive half has its message.
    let snapshot = [
        Rank::new(0, 2).blocked(sendrecv(1, 1, 1, 2)),
        Rank::new(1, 2).blocked(sendrecv(0, 2, 0, 1)),
    ];
    assert_eq!(find_deadlock(&snapshot), None);
    // A rank blocked in a receive the other's blocked Sendrecv serves.
    let snapshot = [
        Rank::new(0, 2).blocked(sendrecv(1, 1, 1, 2)),
        Rank::new(1, 2).blocked(op(OpKind::Recv, 0, 1)),
    ];
    assert_eq!(find_deadlock(&snapshot), None);
}

#[test]
fn a_sendrecv_whose_send_half_nobody_can_take_waits_for_its_receiver() {
    // Seed 3003 under --buffering zero: P0's receive half has P1's
    // message, but P1's receive half was forced to P2, so P0's
    // synchronous send half waits for P1; P2's send waits for P1 too.
    let forced_to_2 = Op {
        flags: flags::ANY_SOURCE,
        ..sendrecv(0, 100, 2, 100)
    };
    let snapshot = [
        Rank::new(0, 3).blocked(sendrecv(1, 100, ANY, 100)),
        Rank::new(1, 3).blocked(forced_to_2),
        Rank::new(2, 3).blocked(op(OpKind::Send, 1, 200)),
    ];
    let d = deadlock(&snapshot);
    assert_eq!(waits(&d, 0), &WaitFor::All(vec![1]));
    assert_eq!(waits(&d, 1), &WaitFor::All(vec![2]));
    assert_eq!(d.cycle, vec![1, 2]);
}

/// Issue 16: `while (!flag) MPI_Test(&r, ...)` on an `Irecv` from rank 1,
/// which waits in `Recv` for rank 0: a deadlock once the series is long,
/// the polling rank blocked as in `Wait`, its poll named.
#[test]
fn a_long_test_loop_is_blocked_as_its_wait() {
    let snapshot = [
        Rank::new(0, 2).irecv(1, 0, 7).testing(1, POLLS_TO_BE_STUCK),
        Rank::new(1, 2).blocked(recv(0)),
    ];
    let d = deadlock(&snapshot);
    assert_eq!(d.cycle.len(), 2);
    let polling = d.blocked.iter().find(|b| b.rank == 0).unwrap();
    assert_eq!(polling.kind, OpKind::Wait);
    assert_eq!(polling.polled, Some((OpKind::Test, POLLS_TO_BE_STUCK)));
    assert_eq!(polling.waits_for, WaitFor::All(vec![1]));
    let blocked = d.blocked.iter().find(|b| b.rank == 1).unwrap();
    assert_eq!(blocked.polled, None);
}

/// A `Testany` loop stands for a `Waitany` on the requests still
/// outstanding: a receive it already returned is not one of them (soak
/// seed 4406, whose loops polled for their last receive until the timeout).
#[test]
fn a_testany_loop_waits_only_for_requests_not_yet_completed() {
    let mut first = Rank::new(0, 3).irecv(ANY, 0, 6);
    first.ops[1].matched = Some((1, 0));
    let waitany = Op {
        count: 2,
        ..op(OpKind::Waitany, 0, 0)
    };
    let snapshot = [
        first
            .irecv(ANY, 0, 7)
            .polling(OpKind::Testany, waitany, POLLS_TO_BE_STUCK),
        Rank::new(1, 3)
            .send(0, 0)
            .blocked(op(OpKind::Finalize, 0, 0)),
        Rank::new(2, 3).blocked(op(OpKind::Finalize, 0, 0)),
    ];
    let d = deadlock(&snapshot);
    assert_eq!(waits(&d, 0), &WaitFor::Any(vec![1, 2]));
}

/// A short series is a rank that may still leave its loop: no verdict.
#[test]
fn a_short_test_loop_is_no_deadlock() {
    let snapshot = [
        Rank::new(0, 2)
            .irecv(1, 0, 7)
            .testing(1, POLLS_TO_BE_STUCK - 1),
        Rank::new(1, 2).blocked(recv(0)),
    ];
    assert_eq!(find_deadlock(&snapshot), None);
}

/// Polling a receive whose message was sent is no deadlock however long.
#[test]
fn a_test_loop_whose_message_was_sent_can_complete() {
    let snapshot = [
        Rank::new(0, 2)
            .irecv(1, 0, 7)
            .testing(1, 10 * POLLS_TO_BE_STUCK),
        Rank::new(1, 2).send(0, 0).blocked(recv(0)),
    ];
    assert_eq!(find_deadlock(&snapshot), None);
}

/// `MPI_Iprobe` from any source stands for `MPI_Probe` of it: an OR wait.
#[test]
fn an_iprobe_loop_is_blocked_as_its_probe() {
    let mut probe = op(OpKind::Probe, ANY, 3);
    probe.flags |= flags::ANY_SOURCE;
    let snapshot = [
        Rank::new(0, 2).polling(OpKind::Iprobe, probe, POLLS_TO_BE_STUCK),
        Rank::new(1, 2).blocked(recv(0)),
    ];
    let d = deadlock(&snapshot);
    let polling = d.blocked.iter().find(|b| b.rank == 0).unwrap();
    assert_eq!(polling.polled, Some((OpKind::Iprobe, POLLS_TO_BE_STUCK)));
    assert_eq!(polling.waits_for, WaitFor::Any(vec![1]));
}

/// Between two snapshots a polling rank must have polled the same call
/// more: a count that stopped is a rank computing, a new call is a new
/// series.
#[test]
fn progress_of_a_polling_rank_is_its_count() {
    let at = |polls| {
        vec![
            Rank::new(0, 2).irecv(1, 0, 7).testing(1, polls),
            Rank::new(1, 2).blocked(recv(0)),
        ]
    };
    assert!(no_progress(&at(1000), &at(1500)));
    assert!(!no_progress(&at(1500), &at(1500)));
    let other_call = vec![
        Rank::new(0, 2)
            .irecv(1, 0, 7)
            .polling(OpKind::Iprobe, recv(1), 2000),
        Rank::new(1, 2).blocked(recv(0)),
    ];
    assert!(!no_progress(&at(1000), &other_call));
}

/// Seed 3125 under `--buffering zero`: P0's `Sendrecv` with P1 took P1's
/// message (its `Matched` record is written) and waits for the
/// acknowledgement of its send half, which P1 sent when it took P0's
/// message before going on to `MPI_Finalize`. Not a deadlock: both halves
/// are done or taken.
#[test]
fn a_sendrecv_whose_receive_matched_waits_for_no_sender() {
    let mut p0 = Rank::new(0, 2);
    let mut exchange = sendrecv(1, 101, 1, 101);
    exchange.flags &= !flags::RETURNED;
    exchange.index = p0.next();
    p0.ops.push(exchange);
    p0 = p0.call(Op {
        request: 1,
        peer: 1,
        aux: 1,
        ..op(OpKind::Matched, 1, 0)
    });
    let p0 = p0.trace(RankState::Running, Some(1));
    let p1 = Rank::new(1, 2)
        .call(sendrecv(0, 101, 0, 101))
        .call(Op {
            request: 1,
            peer: 0,
            aux: 1,
            ..op(OpKind::Matched, 0, 0)
        })
        .blocked(op(OpKind::Finalize, 0, 0));
    assert_eq!(find_deadlock(&[p0, p1]), None);

    // A receive half no Matched record names still waits for its sender.
    let snapshot = [
        Rank::new(0, 2).blocked(sendrecv(1, 101, 1, 101)),
        Rank::new(1, 2).blocked(op(OpKind::Finalize, 0, 0)),
    ];
    assert_eq!(deadlock(&snapshot).cycle, vec![0, 1]);
}

#[test]
fn a_waitall_waits_for_its_one_send_nobody_receives() {
    // Soak seed 3945 under zero buffering: P0 Isend(to 1) twice; Waitall.
    // P1 took the first (its Matched record says so), then blocks in a
    // receive of another tag from P0. The first send can complete, the
    // second cannot: the Waitall waits for P1, which waits for P0.
    let p1 = |rank: Rank| {
        rank.recv(0, 0, (0, 0))
            .took(1, 0, 1)
            .blocked(op(OpKind::Recv, 0, 7))
    };
    let listed = [
        Rank::new(0, 2)
            .isend(1, 8)
            .isend(1, 9)
            .blocked_waitall(2, &[1, 2]),
        p1(Rank::new(1, 2)),
    ];
    let d = deadlock(&listed);
    assert_eq!(waits(&d, 0), &WaitFor::All(vec![1]));
    assert_eq!(d.cycle, vec![0, 1]);
    // It names the send it cannot complete without.
    assert_eq!(d.blocked[0].origin, Some(2));
    // Not yet listed (it has not waited long enough for the runtime to
    // list its requests): OR over the outstanding ones, and the first
    // can complete.
    let unlisted = [
        Rank::new(0, 2)
            .isend(1, 8)
            .isend(1, 9)
            .blocked_waitall(2, &[]),
        p1(Rank::new(1, 2)),
    ];
    assert_eq!(find_deadlock(&unlisted), None);
}

#[test]
fn a_waitall_whose_listed_requests_can_all_complete_is_no_deadlock() {
    // P0 Isend(to 1); Irecv(from 1); Waitall. P1 posted a receive for the
    // send and sent the message: both can complete, while P1 waits.
    let snapshot = [
        Rank::new(0, 2)
            .isend(1, 8)
            .irecv(1, 0, 9)
            .blocked_waitall(2, &[1, 2]),
        Rank::new(1, 2).irecv(0, 0, 8).send(0, 0).blocked(recv(0)),
    ];
    assert_eq!(find_deadlock(&snapshot), None);
}

#[test]
fn an_unknown_request_of_a_waitall_does_not_hide_a_stuck_one() {
    // A request the runtime did not know beside a receive nobody sends
    // to: the Waitall cannot return whatever the unknown one does.
    let stuck = [
        Rank::new(0, 2)
            .irecv(1, 0, 9)
            .blocked_waitall(2, &[u64::MAX, 1]),
        Rank::new(1, 2).blocked(recv(0)),
    ];
    assert_eq!(waits(&deadlock(&stuck), 0), &WaitFor::All(vec![1]));
    // Beside a receive whose message came, the unknown one decides, and
    // the graph cannot tell.
    let unsure = [
        Rank::new(0, 2)
            .irecv(1, 0, 9)
            .blocked_waitall(2, &[u64::MAX, 1]),
        Rank::new(1, 2).send(0, 0).blocked(recv(0)),
    ];
    assert_eq!(find_deadlock(&unsure), None);
}

#[test]
fn a_waitany_waits_only_for_the_requests_it_was_given() {
    // P0 Irecv(from 1, tag 1); Irecv(from 1, tag 2); Waitany over the
    // second alone. P1 sent tag 1 and waits for P0. The first receive
    // can complete, but it is not in the array.
    let rank0 = || Rank::new(0, 2).irecv(1, 1, 8).irecv(1, 2, 9);
    let rank1 = || Rank::new(1, 2).send(0, 1).blocked(recv(0));
    for kind in [OpKind::Waitany, OpKind::Waitsome] {
        let listed = [rank0().blocked_listing(kind, 1, &[2]), rank1()];
        let d = deadlock(&listed);
        assert_eq!(waits(&d, 0), &WaitFor::Any(vec![1]), "{kind:?}");
        assert_eq!(d.cycle, vec![0, 1]);
        let both = [rank0().blocked_listing(kind, 2, &[1, 2]), rank1()];
        assert_eq!(find_deadlock(&both), None, "{kind:?}");
        let unlisted = [rank0().blocked_listing(kind, 1, &[]), rank1()];
        assert_eq!(find_deadlock(&unlisted), None, "{kind:?}");
    }
}

#[test]
fn a_receive_settled_inside_a_blocked_waitall_is_no_longer_posted() {
    // Soak seed 4094. P0: Irecv(from 1, tag 1); Irecv(*, tag 1); Waitall,
    // inside which MPI completed the wildcard receive with P2's first send
    // (a `Settled` record, before the `Matched` one the return writes).
    // P1: Send(to 0, tag 2), never received. P2: Send(to 0, tag 1) twice,
    // blocked in the second.
    let p0 = |settled: bool| {
        let mut r = Rank::new(0, 3).irecv(1, 1, 7).irecv(ANY, 1, 8);
        let waitall = r.next();
        r = r.call(Op {
            flags: 0,
            count: 2,
            ..op(OpKind::Waitall, 0, 0)
        });
        for origin in [1u64, 2] {
            r = r.call(Op {
                request: waitall,
                aux: origin + 1,
                ..op(OpKind::WaitRequest, 0, 0)
            });
        }
        if settled {
            r = r.call(Op {
                request: 2,
                aux: 1,
                count: -1,
                ..op(OpKind::Settled, 2, 0)
            });
        }
        r.trace(RankState::Running, Some(waitall))
    };
    let snapshot = |settled: bool| {
        [
            p0(settled),
            Rank::new(1, 3).blocked(op(OpKind::Send, 0, 2)),
            Rank::new(2, 3).send(0, 1).blocked(op(OpKind::Send, 0, 1)),
        ]
    };
    // Without the record the wildcard receive looks posted, and P2's
    // second send takeable by it.
    assert_eq!(find_deadlock(&snapshot(false)), None);
    let d = deadlock(&snapshot(true));
    assert_eq!(waits(&d, 0), &WaitFor::All(vec![1]));
    assert_eq!(waits(&d, 2), &WaitFor::All(vec![0]));
    assert_eq!(d.cycle, vec![0, 1]);
}
