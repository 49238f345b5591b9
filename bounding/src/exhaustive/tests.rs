use super::*;
use crate::explore::RunEnd;
use mbh_trace::op::flags;
use mbh_trace::rank_trace::Op;

/// How far the ranks of a synthetic run that ended so got: a crash cut
/// every rank short (none is known to have finalized).
fn reach(end: RunEnd) -> Reach {
    match end {
        RunEnd::Crashed => Reach::Crashed {
            finished: BTreeSet::new(),
        },
        _ => Reach::Whole,
    }
}

/// A wildcard event of `rank` that matched `matched` and names `potential`.
fn event(rank: i32, number: u32, matched: i32, potential: &[i32]) -> WildcardEvent {
    WildcardEvent {
        rank,
        event: number,
        op_index: u64::from(number),
        kind: OpKind::Recv,
        site: 0,
        start_clock: 0,
        final_clock: 0,
        matched,
        matched_tag: 0,
        potential: potential.to_vec(),
        loops: vec![],
        zone: None,
        pattern: None,
        enablers: Vec::new(),
        forced: false,
        settled_in_loop: false,
    }
}

/// Each feasible run's events as (rank, event, sender) triples.
type Outcomes = BTreeSet<Vec<(i32, u32, i32)>>;

/// Runs `program` (forcing → events) under the search; returns its
/// [`Outcomes`].
fn explore(program: impl Fn(&Guidance) -> (Vec<WildcardEvent>, RunEnd)) -> (Outcomes, Exhaustive) {
    let mut search = Exhaustive::new(Some(1000));
    let mut outcomes = BTreeSet::new();
    while let Some(run) = search.next_run() {
        let guidance = run.guidance.unwrap_or_default();
        let (events, end) = program(&guidance);
        if search.record_run(&events, &[], &reach(end)).feasible() {
            outcomes.insert(
                events
                    .iter()
                    .map(|e| (e.rank, e.event, e.matched))
                    .collect(),
            );
        }
    }
    assert!(search.is_complete());
    (outcomes, search)
}

/// Issue 11's shape: ranks 0 and 1 each take two messages, from ranks 2
/// and 3, in either order; the MPI library always delivers rank 2 first.
fn two_receivers(g: &Guidance) -> (Vec<WildcardEvent>, RunEnd) {
    let mut events = Vec::new();
    for rank in 0..2 {
        let first = g.index().source_for(rank, 0).unwrap_or(2);
        if !(2..=3).contains(&first) {
            // Forced to a rank that never sends: the run hangs there.
            return (events, RunEnd::Deadlocked);
        }
        let second = 5 - first;
        if g.index().source_for(rank, 1).is_some_and(|s| s != second) {
            events.push(event(rank, 0, first, &[]));
            return (events, RunEnd::Deadlocked);
        }
        // Candidates: both senders (the search must not need the clocks).
        events.push(event(rank, 0, first, &[2, 3]));
        events.push(event(rank, 1, second, &[2, 3]));
    }
    (events, RunEnd::Complete)
}

#[test]
fn every_combination_of_concurrent_first_receives_runs() {
    let (outcomes, search) = explore(two_receivers);
    let firsts: BTreeSet<(i32, i32)> = outcomes
        .iter()
        .map(|o| {
            let of = |rank| o.iter().find(|e| e.0 == rank && e.1 == 0).unwrap().2;
            (of(0), of(1))
        })
        .collect();
    assert_eq!(firsts, [(2, 2), (2, 3), (3, 2), (3, 3)].into());
    let (runs, infeasible) = search.runs();
    assert_eq!(runs - infeasible, 4, "one feasible run per outcome");
}

#[test]
fn a_forcing_that_does_not_happen_is_infeasible_and_not_expanded() {
    let mut search = Exhaustive::new(None);
    search.next_run().expect("the free run");
    let first = vec![event(0, 0, 1, &[2])];
    assert!(search.record_run(&first, &[], &Reach::Whole).feasible());
    let run = search.next_run().expect("the alternative");
    let forced = run.guidance.unwrap();
    assert_eq!(forced.index().source_for(0, 0), Some(2));
    // The forced receive never completed: rank 2 never sent.
    let recorded = search.record_run(&[], &[], &Reach::Whole);
    assert!(!recorded.feasible());
    assert_eq!(search.next_run(), None);
    assert!(search.is_complete());
    assert_eq!(search.runs(), (2, 1));
}

#[test]
fn an_unknown_match_ends_what_can_be_forced_on_its_rank() {
    let mut search = Exhaustive::new(None);
    search.next_run();
    let events = vec![event(0, 0, -1, &[1]), event(0, 1, 1, &[2])];
    search.record_run(&events, &[], &reach(RunEnd::Crashed));
    assert_eq!(search.next_run(), None, "nothing forceable");
}

#[test]
fn the_run_limit_leaves_the_search_incomplete() {
    let mut search = Exhaustive::new(Some(1));
    search.next_run();
    search.record_run(&[event(0, 0, 1, &[2])], &[], &Reach::Whole);
    assert_eq!(search.next_run(), None);
    assert!(!search.is_complete());
}

fn trace(rank: i32, ops: Vec<Op>) -> RankTrace {
    RankTrace::finalized(rank, 3, ops)
}

/// The communicator of the hand-built traces.
const WORLD: u64 = 7;

/// A blocking receive at `index` that took `from`'s tag-0 message.
fn recv(index: u64, from: i32, wildcard: bool) -> Op {
    Op {
        comm: WORLD,
        flags: if wildcard { flags::ANY_SOURCE } else { 0 },
        peer: if wildcard { -2 } else { from },
        matched: Some((from, 0)),
        ..Op::new(index, OpKind::Recv)
    }
}

/// The `Matched` record at `index`: the receive at `request` took the
/// message of `from`'s record `send`; `event` is its wildcard event or -1.
fn matched(index: u64, request: u64, from: i32, send: u64, event: i32) -> Op {
    Op {
        request,
        peer: from,
        aux: send,
        count: event,
        ..Op::new(index, OpKind::Matched)
    }
}

/// A tag-0 send of `kind` at `index`.
fn send(index: u64, kind: OpKind) -> Op {
    Op {
        comm: WORLD,
        ..Op::new(index, kind)
    }
}

#[test]
fn candidates_are_senders_taken_later_or_never_not_earlier() {
    // Rank 0 takes rank 1's message, then (event 1) rank 2's; rank 2's
    // second message was never received.
    let receiver = trace(
        0,
        vec![
            recv(0, 1, true),
            matched(1, 0, 1, 0, -1),
            recv(2, 2, true),
            matched(3, 2, 2, 0, -1),
        ],
    );
    let traces = vec![
        receiver,
        trace(1, vec![send(0, OpKind::Send)]),
        trace(2, vec![send(0, OpKind::Send), send(1, OpKind::Send)]),
    ];
    let second = WildcardEvent {
        op_index: 2,
        ..event(0, 1, 2, &[])
    };
    assert_eq!(
        candidate_senders(&second, &[], &traces, false),
        [2].into(),
        "rank 1's message was taken before: not a candidate"
    );
    let first = WildcardEvent {
        op_index: 0,
        ..event(0, 0, 1, &[])
    };
    // Its own sender (rank 1) is what it took, not an alternative.
    assert_eq!(candidate_senders(&first, &[], &traces, false), [2].into());
}

#[test]
fn a_message_sent_after_the_event_completed_is_no_candidate() {
    // Rank 0's wildcard event 0 takes rank 1's message, then rank 0 sends
    // to rank 2, which answers only then: rank 2's answer (taken by rank
    // 0's event 1) depends on event 0, so event 0 could never take it.
    let traces = vec![
        trace(
            0,
            vec![
                recv(0, 1, true),
                matched(1, 0, 1, 0, 0),
                send(2, OpKind::Send),
                recv(3, 2, true),
                matched(4, 3, 2, 2, 1),
            ],
        ),
        trace(1, vec![send(0, OpKind::Send)]),
        trace(
            2,
            vec![
                recv(0, 0, false),
                matched(1, 0, 0, 2, -1),
                send(2, OpKind::Send),
            ],
        ),
    ];
    let first = WildcardEvent {
        op_index: 0,
        ..event(0, 0, 1, &[])
    };
    assert!(candidate_senders(&first, &[], &traces, false).is_empty());
    // Without the chain (rank 2 sends first), rank 2 is a candidate.
    let mut independent = traces.clone();
    independent[2].ops.truncate(0);
    independent[2].ops.push(send(0, OpKind::Send));
    independent[0].ops[4].aux = 0;
    assert_eq!(
        candidate_senders(&first, &[], &independent, false),
        [2].into()
    );
}

#[test]
fn a_synchronous_send_returns_after_its_receive() {
    // Rank 0: wildcard event 0 takes rank 1's message, then rank 0 sends to
    // rank 3, and event 1 takes rank 2's second message. Rank 3 takes rank
    // 0's message, then rank 2's first (sent with KIND).
    let receiver = trace(
        0,
        vec![
            recv(0, 1, true),
            matched(1, 0, 1, 0, 0),
            send(2, OpKind::Send),
            recv(3, 2, true),
            matched(4, 3, 2, 1, 1),
        ],
    );
    let third = trace(
        3,
        vec![
            recv(0, 0, false),
            matched(1, 0, 0, 2, -1),
            recv(2, 2, false),
            matched(3, 2, 2, 0, -1),
        ],
    );
    let first = WildcardEvent {
        op_index: 0,
        ..event(0, 0, 1, &[])
    };
    let with = |kind| {
        vec![
            receiver.clone(),
            trace(1, vec![send(0, OpKind::Send)]),
            trace(2, vec![send(0, kind), send(1, OpKind::Send)]),
            third.clone(),
        ]
    };
    // Rank 2's second send follows the return of its first, which follows
    // rank 3's receive of it, which follows rank 0's message, sent after
    // event 0.
    assert!(candidate_senders(&first, &[], &with(OpKind::Ssend), false).is_empty());
    assert!(candidate_senders(&first, &[], &with(OpKind::Send), true).is_empty());
    // Buffered, rank 2 could have sent both before event 0 completed.
    assert_eq!(
        candidate_senders(&first, &[], &with(OpKind::Send), false),
        [2].into()
    );
}

#[test]
fn a_sendrecv_is_a_candidate_by_its_send_half() {
    /// MPICH's MPI_PROC_NULL (the analysis reads the flag and the sign).
    const PROC_NULL: i32 = -1;
    let sendrecv = |from: i32, to: i32| Op {
        comm: WORLD,
        peer: from,
        tag: 5,
        flags: if from == PROC_NULL {
            flags::PROC_NULL
        } else {
            0
        },
        request: u64::from(to as u32),
        ..Op::new(0, OpKind::Sendrecv)
    };
    // Rank 0's Recv(*) took rank 1's message. Rank 2's Sendrecv receives
    // from MPI_PROC_NULL but sends (tag 0) to rank 0: never received, a
    // candidate (its record's PROC_NULL flag is its receive half's). Rank
    // 3's Sendrecv sends to MPI_PROC_NULL: no message, no candidate.
    let traces = vec![
        trace(
            0,
            vec![
                Op {
                    comm: WORLD,
                    flags: flags::ANY_SOURCE,
                    matched: Some((1, 0)),
                    ..Op::new(0, OpKind::Recv)
                },
                Op {
                    request: 0,
                    peer: 1,
                    aux: 0,
                    ..Op::new(1, OpKind::Matched)
                },
            ],
        ),
        trace(
            1,
            vec![Op {
                comm: WORLD,
                ..Op::new(0, OpKind::Send)
            }],
        ),
        trace(2, vec![sendrecv(PROC_NULL, 0)]),
        trace(3, vec![sendrecv(0, PROC_NULL)]),
    ];
    let first = WildcardEvent {
        op_index: 0,
        ..event(0, 0, 1, &[])
    };
    assert_eq!(candidate_senders(&first, &[], &traces, false), [2].into());
}
