//! One test per IntraCB rule (seed 001 Definition 2, seed 004 Example 5)
//! and per kind of match set, on hand-built traces.

mod common;

use common::*;
use mbh_fib::{Edge, Event, Node, RunGraph, RunIssue};
use mbh_trace::OpKind;
use petgraph::graph::NodeIndex;
use petgraph::visit::EdgeRef;
use petgraph::Direction;

fn ev(g: &RunGraph, rank: i32, index: u64, event: Event) -> NodeIndex {
    g.event(rank, index, event)
        .unwrap_or_else(|| panic!("P{rank}#{index} has no {event:?} node"))
}

/// Asserts the edge, writing the graph's DOT for the failure message.
macro_rules! assert_edge {
    ($g:expr, $a:expr, $b:expr, $kind:expr, $name:literal) => {
        assert!(
            $g.has_edge($a, $b, $kind),
            "missing {:?} edge {} -> {}; {}",
            $kind,
            $g.node($a),
            $g.node($b),
            dump(&$g, $name)
        )
    };
}

macro_rules! assert_no_edge {
    ($g:expr, $a:expr, $b:expr, $name:literal) => {
        assert!(
            $g.graph().find_edge($a, $b).is_none(),
            "unexpected edge {} -> {}; {}",
            $g.node($a),
            $g.node($b),
            dump(&$g, $name)
        )
    };
}

#[test]
fn rule_1_sends_to_one_destination_match_in_order() {
    let mut p0 = Rank::new(0);
    let a = p0.isend(1, 0, 1);
    let b = p0.isend(1, 0, 2);
    let c = p0.isend(1, 5, 3); // other tag
    let d = p0.isend(2, 0, 4); // other destination
    let e = p0.isend(1, 0, 5);
    let t = run(vec![p0, Rank::new(1), Rank::new(2)]);
    let g = graph(&t);
    let m = |i| ev(&g, 0, i, Event::SendMatch);
    assert_edge!(g, m(a), m(b), Edge::SendOrder, "rule1");
    assert_edge!(g, m(b), m(e), Edge::SendOrder, "rule1");
    assert_no_edge!(g, m(a), m(c), "rule1");
    assert_no_edge!(g, m(b), m(d), "rule1");
    assert_no_edge!(g, m(a), m(e), "rule1"); // transitively, through b
}

#[test]
fn rule_2_receives_match_in_order_when_the_first_subsumes() {
    let mut p1 = Rank::new(1);
    let any = p1.irecv(Any, Some(0), 1);
    let from0 = p1.irecv(from(0), Some(0), 2);
    let from2 = p1.irecv(from(2), Some(0), 3);
    let other_tag = p1.irecv(from(0), Some(5), 4);
    let any_tag = p1.irecv(from(0), None, 5);
    let again0 = p1.irecv(from(0), Some(0), 6);
    let t = run(vec![Rank::new(0), p1, Rank::new(2)]);
    let g = graph(&t);
    let m = |i| ev(&g, 1, i, Event::ReceiveMatch);
    assert_edge!(g, m(any), m(from0), Edge::ReceiveOrder, "rule2");
    assert_edge!(g, m(any), m(from2), Edge::ReceiveOrder, "rule2");
    assert_no_edge!(g, m(from0), m(from2), "rule2");
    assert_no_edge!(g, m(any), m(other_tag), "rule2");
    // (0, ANY_TAG) is wider than every earlier receive: no edge in.
    for earlier in [any, from0, from2, other_tag] {
        assert_no_edge!(g, m(earlier), m(any_tag), "rule2");
    }
    // A later (0, 0) follows the last receive of each subsuming kind.
    assert_edge!(g, m(from0), m(again0), Edge::ReceiveOrder, "rule2");
    assert_edge!(g, m(any_tag), m(again0), Edge::ReceiveOrder, "rule2");
    assert_edge!(g, m(any), m(again0), Edge::ReceiveOrder, "rule2");
}

#[test]
fn example_5_a_matched_receive_is_not_trumped() {
    // P2: Irecv(from 1, h); Recv(*) with P1's message taken by the Irecv.
    let mut p0 = Rank::new(0);
    let s0 = p0.send(2, 0, 1);
    let mut p1 = Rank::new(1);
    let s1 = p1.send(2, 0, 2);
    let mut p2 = Rank::new(2);
    let specific = p2.irecv(from(1), Some(0), 3);
    let wild = p2.recv(Any, Some(0), 4, (0, s0), 0);
    p2.wait_recv(specific, 5, (1, s1), 0);
    let t = run(vec![p0, p1, p2]);
    let g = graph(&t);
    let (a, b) = (
        ev(&g, 2, specific, Event::ReceiveMatch),
        ev(&g, 2, wild, Event::ReceiveMatch),
    );
    assert_edge!(g, a, b, Edge::NotTrumped, "trump");
}

#[test]
fn example_5_an_unmatched_receive_can_be_trumped() {
    // The same, but nobody sends to the Irecv: the wildcard may match
    // first, so no edge.
    let mut p0 = Rank::new(0);
    let s0 = p0.send(2, 0, 1);
    let mut p2 = Rank::new(2);
    let specific = p2.irecv(from(1), Some(0), 3);
    let wild = p2.recv(Any, Some(0), 4, (0, s0), 0);
    let t = run(vec![p0, Rank::new(1), p2]);
    let g = graph(&t);
    let (a, b) = (
        ev(&g, 2, specific, Event::ReceiveMatch),
        ev(&g, 2, wild, Event::ReceiveMatch),
    );
    assert_no_edge!(g, a, b, "trumped");
    // And a receive whose message the later one could not take gives no
    // edge either (tags differ).
    let mut p0 = Rank::new(0);
    let s0 = p0.send(2, 0, 1);
    let mut p1 = Rank::new(1);
    let s1 = p1.send(2, 9, 2);
    let mut p2 = Rank::new(2);
    let specific = p2.irecv(from(1), Some(9), 3);
    let wild = p2.recv(Any, Some(0), 4, (0, s0), 0);
    p2.wait_recv(specific, 5, (1, s1), 9);
    let t = run(vec![p0, p1, p2]);
    let g = graph(&t);
    let (a, b) = (
        ev(&g, 2, specific, Event::ReceiveMatch),
        ev(&g, 2, wild, Event::ReceiveMatch),
    );
    assert_no_edge!(g, a, b, "other-tag");
}

#[test]
fn an_older_receive_that_accepts_the_message_matched_first() {
    // P1: Irecv(*, tag 0) a; Irecv(from 0, ANY_TAG) b, which took P0's
    // tag-0 message: a was no longer pending, so it matched first. Rule 2
    // gives no edge (a does not accept every tag).
    let mut p0 = Rank::new(0);
    let s0 = p0.isend(1, 0, 1);
    let mut p2 = Rank::new(2);
    let s2 = p2.isend(1, 0, 2);
    let mut p1 = Rank::new(1);
    let a = p1.irecv(Any, Some(0), 3);
    let b = p1.irecv(from(0), None, 4);
    p1.wait_recv(a, 5, (2, s2), 0);
    p1.wait_recv(b, 6, (0, s0), 0);
    let t = run(vec![p0, p1, p2]);
    let g = graph(&t);
    let (ma, mb) = (
        ev(&g, 1, a, Event::ReceiveMatch),
        ev(&g, 1, b, Event::ReceiveMatch),
    );
    assert_edge!(g, ma, mb, Edge::OlderReceiveFirst, "older");
    assert!(!g.has_edge(ma, mb, Edge::ReceiveOrder));
}

#[test]
fn rules_3_and_4_an_operation_completes_before_its_wait() {
    let mut p0 = Rank::new(0);
    let s = p0.isend(1, 0, 1);
    let w = p0.wait(s, 2);
    let mut p1 = Rank::new(1);
    let r = p1.irecv(from(0), Some(0), 3);
    let wr = p1.wait_recv(r, 4, (0, s), 0);
    let t = run(vec![p0, p1]);
    let g = graph(&t);
    assert_edge!(
        g,
        ev(&g, 0, s, Event::Complete),
        ev(&g, 0, w, Event::Complete),
        Edge::Completion,
        "completion"
    );
    assert_edge!(
        g,
        ev(&g, 1, r, Event::Complete),
        ev(&g, 1, wr, Event::Complete),
        Edge::Completion,
        "completion"
    );
}

#[test]
fn rule_5_fences_order_everything_after_them() {
    let mut p0 = Rank::new(0);
    let before = p0.isend(1, 0, 1);
    let b = p0.barrier(2);
    let x = p0.isend(1, 1, 3);
    let y = p0.isend(1, 2, 4);
    let w = p0.wait(x, 5);
    let z = p0.isend(1, 3, 6);
    let t = run(vec![p0, Rank::new(1)]);
    let g = graph(&t);
    let done = ev(&g, 0, b, Event::Complete);
    for i in [x, y, w] {
        assert_edge!(g, done, ev(&g, 0, i, Event::Issue), Edge::Fence, "fence");
    }
    // To the next fence's completion, which then fences the rest.
    assert_edge!(g, done, ev(&g, 0, w, Event::Complete), Edge::Fence, "fence");
    assert_edge!(
        g,
        ev(&g, 0, w, Event::Complete),
        ev(&g, 0, z, Event::Issue),
        Edge::Fence,
        "fence"
    );
    assert_no_edge!(g, done, ev(&g, 0, z, Event::Issue), "fence");
    // A nonblocking call is no fence: nothing from the Isend before.
    for n in [
        ev(&g, 0, before, Event::Complete),
        ev(&g, 0, before, Event::SendMatch),
    ] {
        assert_no_edge!(g, n, ev(&g, 0, b, Event::Issue), "fence");
    }
}

#[test]
fn a_send_completes_after_its_match_only_without_buffering() {
    let mut p0 = Rank::new(0);
    let std_send = p0.send(1, 0, 1);
    let sync_send = p0.ssend(1, 1, 2);
    let mut p1 = Rank::new(1);
    p1.recv(from(0), Some(0), 3, (0, std_send), 0);
    p1.recv(from(0), Some(1), 4, (0, sync_send), 1);
    let t = run(vec![p0, p1]);
    let eager = graph(&t);
    let zero = graph_zero(&t);
    for g in [&eager, &zero] {
        assert_edge!(
            g,
            ev(g, 0, sync_send, Event::SendMatch),
            ev(g, 0, sync_send, Event::Complete),
            Edge::Lifecycle,
            "buffering"
        );
    }
    assert_no_edge!(
        eager,
        ev(&eager, 0, std_send, Event::SendMatch),
        ev(&eager, 0, std_send, Event::Complete),
        "buffering"
    );
    assert_edge!(
        zero,
        ev(&zero, 0, std_send, Event::SendMatch),
        ev(&zero, 0, std_send, Event::Complete),
        Edge::Lifecycle,
        "buffering"
    );
}

#[test]
fn a_send_and_its_receive_share_one_match_event() {
    let mut p0 = Rank::new(0);
    let s = p0.isend(1, 0, 1);
    p0.wait(s, 2);
    let mut p1 = Rank::new(1);
    let r = p1.irecv(Any, Some(0), 3);
    p1.wait_recv(r, 4, (0, s), 0);
    let t = run(vec![p0, p1]);
    let g = graph(&t);
    let m = ev(&g, 0, s, Event::SendMatch);
    assert_eq!(Some(m), g.event(1, r, Event::ReceiveMatch));
    assert!(
        matches!(g.node(m), Node::Match { send, receive } if send.index == s && receive.index == r)
    );
    // Both issues precede it, the receive's completion follows it.
    assert_edge!(g, ev(&g, 0, s, Event::Issue), m, Edge::Lifecycle, "match");
    assert_edge!(g, ev(&g, 1, r, Event::Issue), m, Edge::Lifecycle, "match");
    assert_edge!(
        g,
        m,
        ev(&g, 1, r, Event::Complete),
        Edge::Lifecycle,
        "match"
    );
    assert_eq!(g.matches().len(), 1);
    assert!(g.issues().is_empty(), "{:?}", g.issues());
}

#[test]
fn collective_match_sets_follow_the_data() {
    let mut ranks: Vec<Rank> = (0..3).map(Rank::new).collect();
    let mut calls = Vec::new();
    for r in &mut ranks {
        let b = r.barrier(1);
        let bc = r.rooted(OpKind::Bcast, 1, 2);
        let red = r.rooted(OpKind::Reduce, 2, 3);
        calls.push((b, bc, red));
    }
    let t = run(ranks);
    let g = graph(&t);
    assert_eq!(g.collectives().len(), 3);
    let hub = |kind| {
        g.collectives()
            .iter()
            .find(|c| c.instance.kind == kind)
            .map(|c| c.node)
            .unwrap()
    };
    let (barrier, bcast, reduce) = (
        hub(OpKind::Barrier),
        hub(OpKind::Bcast),
        hub(OpKind::Reduce),
    );
    for rank in 0..3 {
        let (b, bc, red) = calls[rank as usize];
        assert_edge!(
            g,
            ev(&g, rank, b, Event::Issue),
            barrier,
            Edge::CollectiveIn,
            "coll"
        );
        assert_edge!(
            g,
            barrier,
            ev(&g, rank, b, Event::Complete),
            Edge::CollectiveOut,
            "coll"
        );
        // Bcast: after the root's issue, every completion.
        assert_eq!(
            g.has_edge(ev(&g, rank, bc, Event::Issue), bcast, Edge::CollectiveIn),
            rank == 1
        );
        assert_edge!(
            g,
            bcast,
            ev(&g, rank, bc, Event::Complete),
            Edge::CollectiveOut,
            "coll"
        );
        // Reduce: every issue, before the root's completion.
        assert_edge!(
            g,
            ev(&g, rank, red, Event::Issue),
            reduce,
            Edge::CollectiveIn,
            "coll"
        );
        assert_eq!(
            g.has_edge(
                reduce,
                ev(&g, rank, red, Event::Complete),
                Edge::CollectiveOut
            ),
            rank == 2
        );
    }
    assert!(g.issues().is_empty(), "{:?}", g.issues());
}

#[test]
fn barriers_on_other_communicators_are_other_instances() {
    const SUB: u64 = 0x8400_0001;
    let mut ranks: Vec<Rank> = (0..2).map(Rank::new).collect();
    for r in &mut ranks {
        r.barrier(1);
        r.barrier_on(SUB, 2);
        r.barrier(1);
    }
    let t = run(ranks);
    let g = graph(&t);
    let mut instances: Vec<_> = g
        .collectives()
        .iter()
        .map(|c| (c.instance.comm, c.instance.seq))
        .collect();
    instances.sort_unstable();
    assert_eq!(
        instances,
        vec![(common::WORLD, 0), (common::WORLD, 1), (SUB, 0)]
    );
}

#[test]
fn traces_that_cannot_be_used_are_reported() {
    // A wildcard receive with no Matched record, and a rank still blocked.
    let mut p0 = Rank::new(0);
    p0.irecv(Any, Some(0), 1);
    p0.recv_blocked(from(1), Some(0), 2);
    let t = run(vec![p0, Rank::new(1)]);
    let g = graph(&t);
    assert!(g
        .issues()
        .iter()
        .any(|i| matches!(i, RunIssue::UnresolvedWildcard { .. })));
    assert!(g
        .issues()
        .iter()
        .any(|i| matches!(i, RunIssue::RankEndedEarly { rank: 0, .. })));
}

#[test]
fn every_collective_kind_follows_its_data_and_nonblocking_ones_complete_where_named() {
    let mut ranks: Vec<Rank> = (0..3).map(Rank::new).collect();
    let mut calls = Vec::new();
    for r in &mut ranks {
        let gv = r.rooted(OpKind::Gatherv, 2, 1);
        let agv = r.rooted(OpKind::Allgatherv, 0, 2);
        let (ib, waitall) = r.icollective_waitall(OpKind::Ibarrier, 0, 3);
        calls.push((gv, agv, ib, waitall));
    }
    let t = run(ranks);
    let g = graph(&t);
    assert_eq!(g.collectives().len(), 3);
    let hub = |kind| {
        g.collectives()
            .iter()
            .find(|c| c.instance.kind == kind)
            .map(|c| c.node)
            .unwrap()
    };
    let (gatherv, allgatherv, ibarrier) = (
        hub(OpKind::Gatherv),
        hub(OpKind::Allgatherv),
        hub(OpKind::Ibarrier),
    );
    for rank in 0..3 {
        let (gv, agv, ib, waitall) = calls[rank as usize];
        // Gatherv: every issue, before the root's completion only.
        assert_edge!(
            g,
            ev(&g, rank, gv, Event::Issue),
            gatherv,
            Edge::CollectiveIn,
            "coll"
        );
        assert_eq!(
            g.has_edge(
                gatherv,
                ev(&g, rank, gv, Event::Complete),
                Edge::CollectiveOut
            ),
            rank == 2
        );
        // Allgatherv synchronises.
        assert_edge!(
            g,
            ev(&g, rank, agv, Event::Issue),
            allgatherv,
            Edge::CollectiveIn,
            "coll"
        );
        assert_edge!(
            g,
            allgatherv,
            ev(&g, rank, agv, Event::Complete),
            Edge::CollectiveOut,
            "coll"
        );
        // Ibarrier: synchronising, and complete before the Waitall that
        // the runtime named completes.
        assert_edge!(
            g,
            ibarrier,
            ev(&g, rank, ib, Event::Complete),
            Edge::CollectiveOut,
            "coll"
        );
        assert_edge!(
            g,
            ev(&g, rank, ib, Event::Complete),
            ev(&g, rank, waitall, Event::Complete),
            Edge::Completion,
            "completion"
        );
    }
}

/// A started persistent request (`MPI_Start` of an `MPI_Send_init` /
/// `MPI_Recv_init`) is recorded as `StartSend`/`StartRecv` with the fields
/// of the `Isend`/`Irecv` it stands for: the graph is the same.
#[test]
fn started_persistent_requests_order_like_isend_and_irecv() {
    let build = || {
        let mut p0 = Rank::new(0);
        let a = p0.isend(1, 0, 1);
        p0.wait(a, 2);
        let b = p0.isend(1, 0, 3);
        p0.wait(b, 4);
        let mut p1 = Rank::new(1);
        let r = p1.irecv(Any, Some(0), 5);
        p1.wait_recv(r, 6, (0, a), 0);
        let s = p1.irecv(from(0), Some(0), 7);
        p1.wait_recv(s, 8, (0, b), 0);
        run(vec![p0, p1])
    };
    let plain = build();
    let mut started = build();
    for trace in &mut started {
        for op in &mut trace.ops {
            op.kind = match op.kind {
                OpKind::Isend => OpKind::StartSend,
                OpKind::Irecv => OpKind::StartRecv,
                kind => kind,
            };
        }
    }
    let (a, b) = (graph(&plain), graph(&started));
    let edges = |g: &RunGraph| {
        let mut e: Vec<String> = g
            .graph()
            .node_indices()
            .flat_map(|n| g.graph().edges_directed(n, Direction::Outgoing))
            .map(|e| format!("{:?}", e.weight()))
            .collect();
        e.sort();
        e
    };
    assert_eq!(a.graph().node_count(), b.graph().node_count());
    assert!(!edges(&a).is_empty());
    assert_eq!(edges(&a), edges(&b), "{}", dump(&b, "started"));
}
