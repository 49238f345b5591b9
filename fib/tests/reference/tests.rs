//! Differential tests: the crate's analysis against the pre-issue-13 one
//! ([`super`]) on random programs' traces. Every verdict, evidence (R, S,
//! barrier, members, path), finding count and deletion-set dependency must
//! be the same, and so must every run's (R, S, B) findings and graph.
//!
//! The programs are rounds of point-to-point messages between 2-5 ranks
//! (blocking, nonblocking and synchronous sends; specific and wildcard
//! receives, some posted rounds before they complete, `MPI_ANY_TAG` too),
//! each round ending in nothing, a barrier (at one site, or at sites that
//! differ by rank), two barriers, an `MPI_Allreduce` or an `MPI_Bcast`.
//! Each receive takes the message it was written for; a second run of the
//! same program swaps the messages of two wildcard receives. Nothing
//! forces the matching to be one MPI could produce: inconsistent traces
//! (cycles, early matches) are inputs too, and must get the same answers.

#[path = "../../tests/common/mod.rs"]
mod common;

use crate::Edge;
use crate::{audit, check_relevant, Audit, Coverage, Options, RunGraph, SendBuffering, Verdict};
use common::{run, Rank, Source};
use mbh_trace::{OpKind, RankTrace};
use petgraph::graph::NodeIndex;
use petgraph::visit::EdgeRef;
use petgraph::Direction;

/// SplitMix64: a small, seedable generator (the programs must be
/// reproducible from the seed a failure prints).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    fn chance(&mut self, percent: u64) -> bool {
        self.next() % 100 < percent
    }
}

#[derive(Clone, Copy, PartialEq)]
enum SendKind {
    Send,
    Isend,
    Ssend,
}

/// One message of the program and the calls that carry it.
#[derive(Clone, Copy)]
struct Message {
    src: i32,
    dst: i32,
    tag: i32,
    kind: SendKind,
    /// Round of the send (and, for `Isend`, of its `Wait`: `wait`).
    round: usize,
    wait: usize,
    /// Receive: `MPI_Irecv` posted in round `post` (`None`: a blocking
    /// `MPI_Recv`), completed in round `done`.
    post: Option<usize>,
    done: usize,
    any_source: bool,
    any_tag: bool,
    /// The message whose send the receive takes (itself, unless swapped).
    takes: usize,
}

/// What ends a round.
#[derive(Clone, Copy)]
enum Collective {
    None,
    /// A barrier; `split` ranks at or above it call it at `site + 1`.
    Barrier {
        site: u32,
        split: Option<i32>,
    },
    TwoBarriers {
        first: u32,
        second: u32,
    },
    Allreduce,
    Bcast {
        root: i32,
    },
}

struct Program {
    ranks: i32,
    rounds: usize,
    messages: Vec<Message>,
    ends: Vec<Collective>,
    /// A rank that stops early (still blocked), if any.
    stuck: Option<i32>,
}

fn program(rng: &mut Rng) -> Program {
    let ranks = 2 + rng.below(4) as i32;
    let rounds = 1 + rng.below(6);
    let mut messages = Vec::new();
    for round in 0..rounds {
        for _ in 0..rng.below(6) {
            let src = rng.below(ranks as usize) as i32;
            let mut dst = rng.below(ranks as usize) as i32;
            if dst == src && !rng.chance(10) {
                dst = (src + 1) % ranks;
            }
            let kind = match rng.below(10) {
                0..=3 => SendKind::Send,
                4..=8 => SendKind::Isend,
                _ => SendKind::Ssend,
            };
            let wait = (round + rng.below(2)).min(rounds - 1);
            let done = (round + rng.below(3)).min(rounds - 1);
            let post = rng
                .chance(50)
                .then(|| done.saturating_sub(rng.below(3)).min(done));
            messages.push(Message {
                src,
                dst,
                tag: rng.below(2) as i32,
                kind,
                round,
                wait,
                post,
                done,
                any_source: rng.chance(60),
                any_tag: rng.chance(20),
                takes: messages.len(),
            });
        }
    }
    let ends = (0..rounds)
        .map(|_| match rng.below(12) {
            0..=2 => Collective::None,
            3..=7 => Collective::Barrier {
                site: 50 + rng.below(3) as u32,
                split: rng
                    .chance(15)
                    .then(|| 1 + rng.below(ranks as usize - 1) as i32),
            },
            8 => Collective::TwoBarriers {
                first: 50 + rng.below(3) as u32,
                second: 50 + rng.below(3) as u32,
            },
            9 | 10 => Collective::Allreduce,
            _ => Collective::Bcast {
                root: rng.below(ranks as usize) as i32,
            },
        })
        .collect();
    let stuck = rng.chance(4).then(|| rng.below(ranks as usize) as i32);
    Program {
        ranks,
        rounds,
        messages,
        ends,
        stuck,
    }
}

/// A second run of `p`: two wildcard receives of one rank, whose patterns
/// accept each other's message and which complete after both sends, swap
/// messages. `None` if no such pair.
fn swapped(p: &Program, rng: &mut Rng) -> Option<Program> {
    let accepts = |r: &Message, m: &Message| {
        r.any_source && r.dst == m.dst && (r.any_tag || r.tag == m.tag) && m.round <= r.done
    };
    let mut pairs = Vec::new();
    for (i, a) in p.messages.iter().enumerate() {
        for (j, b) in p.messages.iter().enumerate().skip(i + 1) {
            if accepts(a, b) && accepts(b, a) {
                pairs.push((i, j));
            }
        }
    }
    if pairs.is_empty() {
        return None;
    }
    let (i, j) = pairs[rng.below(pairs.len())];
    let mut messages = p.messages.clone();
    messages[i].takes = j;
    messages[j].takes = i;
    Some(Program {
        messages,
        ends: p.ends.clone(),
        ..*p
    })
}

/// The traces of one run of `p`.
fn traces(p: &Program) -> Vec<RankTrace> {
    let mut ranks: Vec<Rank> = (0..p.ranks).map(Rank::new).collect();
    let n = p.messages.len();
    // Record indices: of each message's send and of its posted `Irecv`.
    let mut sent: Vec<Option<u64>> = vec![None; n];
    let mut posted: Vec<Option<u64>> = vec![None; n];
    let site = |base: u32, m: usize| base + (m % 3) as u32;
    for round in 0..p.rounds {
        // Posts and sends of every rank first: a receive completing this
        // round may take any of them.
        for (k, m) in p.messages.iter().enumerate() {
            if m.post == Some(round) {
                let r = &mut ranks[m.dst as usize];
                posted[k] = Some(r.irecv(source(m), tag(m), site(10, k)));
            }
        }
        for (k, m) in p.messages.iter().enumerate() {
            if m.round == round {
                let r = &mut ranks[m.src as usize];
                sent[k] = Some(match m.kind {
                    SendKind::Send => r.send(m.dst, m.tag, site(20, k)),
                    SendKind::Isend => r.isend(m.dst, m.tag, site(20, k)),
                    SendKind::Ssend => r.ssend(m.dst, m.tag, site(20, k)),
                });
            }
        }
        for (k, m) in p.messages.iter().enumerate() {
            if m.done != round {
                continue;
            }
            let took = &p.messages[m.takes];
            let Some(send) = sent[m.takes] else { continue };
            let from = (took.src, send);
            let r = &mut ranks[m.dst as usize];
            match posted[k] {
                Some(irecv) => {
                    r.wait_recv(irecv, site(30, k), from, took.tag);
                }
                None => {
                    r.recv(source(m), tag(m), site(30, k), from, took.tag);
                }
            }
        }
        for (k, m) in p.messages.iter().enumerate() {
            if m.kind == SendKind::Isend && m.wait == round {
                if let Some(s) = sent[k] {
                    ranks[m.src as usize].wait(s, site(40, k));
                }
            }
        }
        for r in ranks.iter_mut() {
            let rank = r.rank;
            write_end(r, p.ends[round], rank);
        }
    }
    if let Some(s) = p.stuck {
        ranks[s as usize].recv_blocked(Source::Any, Some(9), 99);
    }
    run(ranks)
}

fn source(m: &Message) -> Source {
    if m.any_source {
        Source::Any
    } else {
        Source::Rank(m.src)
    }
}

fn tag(m: &Message) -> Option<i32> {
    (!m.any_tag).then_some(m.tag)
}

/// One call of a simulated program.
#[derive(Clone, Copy)]
enum Call {
    Send {
        dst: i32,
        tag: i32,
        kind: SendKind,
    },
    /// `MPI_Recv` (`blocking`) or `MPI_Irecv`, from a rank or any.
    Recv {
        src: Option<i32>,
        tag: Option<i32>,
        blocking: bool,
    },
    /// `MPI_Wait` on the `slot`-th `Isend` or `Irecv` of the rank.
    Wait {
        slot: usize,
    },
    End(Collective),
}

/// Each rank's calls: rounds of messages (each rank's sends and receives of
/// a round in random order, then waits on some of its open requests; the
/// others wait rounds later), each round ending in one collective.
fn calls(rng: &mut Rng) -> Vec<Vec<Call>> {
    let ranks = 2 + rng.below(4);
    let rounds = 1 + rng.below(6);
    let mut calls: Vec<Vec<Call>> = vec![Vec::new(); ranks];
    let mut open: Vec<Vec<usize>> = vec![Vec::new(); ranks];
    let mut slots = vec![0usize; ranks];
    for round in 0..rounds {
        let mut mine: Vec<Vec<Call>> = vec![Vec::new(); ranks];
        for _ in 0..rng.below(7) {
            let src = rng.below(ranks);
            let dst = (src + 1 + rng.below(ranks - 1)) % ranks;
            let tag = rng.below(2) as i32;
            let kind = match rng.below(10) {
                0..=3 => SendKind::Send,
                4..=8 => SendKind::Isend,
                _ => SendKind::Ssend,
            };
            mine[src].push(Call::Send {
                dst: dst as i32,
                tag,
                kind,
            });
            mine[dst].push(Call::Recv {
                src: (!rng.chance(60)).then_some(src as i32),
                tag: (!rng.chance(20)).then_some(tag),
                blocking: rng.chance(40),
            });
        }
        let end = match rng.below(12) {
            0..=2 => Collective::None,
            3..=7 => Collective::Barrier {
                site: 50 + rng.below(3) as u32,
                split: rng.chance(15).then(|| 1 + rng.below(ranks - 1) as i32),
            },
            8 => Collective::TwoBarriers {
                first: 50 + rng.below(3) as u32,
                second: 50 + rng.below(3) as u32,
            },
            9 | 10 => Collective::Allreduce,
            _ => Collective::Bcast {
                root: rng.below(ranks) as i32,
            },
        };
        for r in 0..ranks {
            let mut list = std::mem::take(&mut mine[r]);
            for i in (1..list.len()).rev() {
                list.swap(i, rng.below(i + 1));
            }
            for call in list {
                let request = match call {
                    Call::Send { kind, .. } => kind == SendKind::Isend,
                    Call::Recv { blocking, .. } => !blocking,
                    _ => false,
                };
                calls[r].push(call);
                if request {
                    open[r].push(slots[r]);
                    slots[r] += 1;
                }
            }
            let last = round + 1 == rounds;
            let mut waits: Vec<usize> = Vec::new();
            open[r].retain(|&slot| {
                let now = last || rng.chance(70);
                if now {
                    waits.push(slot);
                }
                !now
            });
            for i in (1..waits.len()).rev() {
                waits.swap(i, rng.below(i + 1));
            }
            calls[r].extend(waits.into_iter().map(|slot| Call::Wait { slot }));
            calls[r].push(Call::End(end));
        }
    }
    calls
}

/// A message in flight.
struct Flight {
    src: i32,
    dst: i32,
    tag: i32,
    send: u64,
    matched: bool,
}

/// A receive: its pattern, its `Irecv` record, and the message it took.
struct Receive {
    rank: i32,
    src: Option<i32>,
    tag: Option<i32>,
    irecv: Option<u64>,
    took: Option<usize>,
}

/// What a rank waits for after issuing its current call.
#[derive(Clone, Copy)]
enum Pending {
    Matched(usize),
    Received(usize),
    Collective(usize),
}

/// A request of a rank: an `Isend`'s message or an `Irecv`.
#[derive(Clone, Copy)]
enum Request {
    Send { message: usize, record: u64 },
    Recv(usize),
}

/// Runs `calls` under a random schedule with MPI's matching rules (a
/// message goes to the earliest posted receive that accepts it, a receive
/// to the earliest arrived message it accepts; standard sends are eager
/// unless `zero`), and writes the traces. A deadlock leaves the blocked
/// ranks unfinished.
fn simulate(calls: &[Vec<Call>], zero: bool, rng: &mut Rng) -> Vec<RankTrace> {
    let n = calls.len();
    let mut ranks: Vec<Rank> = (0..n as i32).map(Rank::new).collect();
    let mut pc = vec![0usize; n];
    let mut pending: Vec<Option<Pending>> = vec![None; n];
    let mut requests: Vec<Vec<Request>> = vec![Vec::new(); n];
    let mut arrived = vec![0usize; n];
    let mut flights: Vec<Flight> = Vec::new();
    let mut receives: Vec<Receive> = Vec::new();
    let mut unexpected: Vec<usize> = Vec::new();
    let mut posted: Vec<usize> = Vec::new();
    let accepts = |r: &Receive, f: &Flight| {
        r.rank == f.dst && r.src.is_none_or(|s| s == f.src) && r.tag.is_none_or(|t| t == f.tag)
    };
    let site = |r: usize, at: usize| 10 + (r * 7 + at) as u32 % 5;
    loop {
        let ready = |r: usize,
                     pending: &[Option<Pending>],
                     flights: &[Flight],
                     receives: &[Receive],
                     arrived: &[usize]| {
            match pending[r] {
                None => pc[r] < calls[r].len(),
                Some(Pending::Matched(f)) => flights[f].matched,
                Some(Pending::Received(k)) => receives[k].took.is_some(),
                Some(Pending::Collective(c)) => arrived.iter().all(|&a| a > c),
            }
        };
        let enabled: Vec<usize> = (0..n)
            .filter(|&r| ready(r, &pending, &flights, &receives, &arrived))
            .collect();
        if enabled.is_empty() {
            break;
        }
        let r = enabled[rng.below(enabled.len())];
        let at = pc[r];
        if let Some(p) = pending[r].take() {
            // The blocked call completes.
            match (p, calls[r][at]) {
                (Pending::Received(k), Call::Recv { src, tag, .. }) => {
                    let f = &flights[receives[k].took.unwrap_or_default()];
                    let from = src.map_or(Source::Any, Source::Rank);
                    ranks[r].recv(from, tag, site(r, at), (f.src, f.send), f.tag);
                }
                (Pending::Received(k), Call::Wait { .. }) => {
                    let f = &flights[receives[k].took.unwrap_or_default()];
                    let irecv = receives[k].irecv.unwrap_or_default();
                    ranks[r].wait_recv(irecv, site(r, at), (f.src, f.send), f.tag);
                }
                (Pending::Matched(_), Call::Wait { slot }) => {
                    if let Request::Send { record, .. } = requests[r][slot] {
                        ranks[r].wait(record, site(r, at));
                    }
                }
                _ => {}
            }
            pc[r] += 1;
            continue;
        }
        match calls[r][at] {
            Call::Send { dst, tag, kind } => {
                let record = match kind {
                    SendKind::Send => ranks[r].send(dst, tag, site(r, at)),
                    SendKind::Isend => ranks[r].isend(dst, tag, site(r, at)),
                    SendKind::Ssend => ranks[r].ssend(dst, tag, site(r, at)),
                };
                let message = flights.len();
                flights.push(Flight {
                    src: r as i32,
                    dst,
                    tag,
                    send: record,
                    matched: false,
                });
                match posted
                    .iter()
                    .position(|&k| accepts(&receives[k], &flights[message]))
                {
                    Some(i) => {
                        let k = posted.remove(i);
                        receives[k].took = Some(message);
                        flights[message].matched = true;
                    }
                    None => unexpected.push(message),
                }
                let synchronous = kind == SendKind::Ssend || (zero && kind == SendKind::Send);
                if kind == SendKind::Isend {
                    requests[r].push(Request::Send { message, record });
                    pc[r] += 1;
                } else if synchronous {
                    pending[r] = Some(Pending::Matched(message));
                } else {
                    pc[r] += 1;
                }
            }
            Call::Recv { src, tag, blocking } => {
                let k = receives.len();
                let irecv = (!blocking).then(|| {
                    let from = src.map_or(Source::Any, Source::Rank);
                    ranks[r].irecv(from, tag, site(r, at))
                });
                receives.push(Receive {
                    rank: r as i32,
                    src,
                    tag,
                    irecv,
                    took: None,
                });
                match unexpected
                    .iter()
                    .position(|&f| accepts(&receives[k], &flights[f]))
                {
                    Some(i) => {
                        let f = unexpected.remove(i);
                        receives[k].took = Some(f);
                        flights[f].matched = true;
                    }
                    None => posted.push(k),
                }
                if blocking {
                    pending[r] = Some(Pending::Received(k));
                } else {
                    requests[r].push(Request::Recv(k));
                    pc[r] += 1;
                }
            }
            Call::Wait { slot } => match requests[r][slot] {
                Request::Send { message, .. } if zero => {
                    pending[r] = Some(Pending::Matched(message));
                }
                Request::Send { record, .. } => {
                    // An eager send's request is complete.
                    ranks[r].wait(record, site(r, at));
                    pc[r] += 1;
                }
                Request::Recv(k) => pending[r] = Some(Pending::Received(k)),
            },
            Call::End(end) => {
                write_end(&mut ranks[r], end, r as i32);
                if matches!(end, Collective::None) {
                    pc[r] += 1;
                } else {
                    // A pair of barriers is one rendezvous: its records
                    // are written together.
                    arrived[r] += 1;
                    pending[r] = Some(Pending::Collective(arrived[r] - 1));
                }
            }
        }
    }
    // A deadlock: the blocked calls' records, and no `MPI_Finalize`.
    for r in 0..n {
        let Some(p) = pending[r] else { continue };
        let at = pc[r];
        match (p, calls[r][at]) {
            (Pending::Received(_), Call::Recv { src, tag, .. }) => {
                ranks[r].recv_blocked(src.map_or(Source::Any, Source::Rank), tag, site(r, at));
            }
            (Pending::Received(k), Call::Wait { .. }) => {
                let irecv = receives[k].irecv.unwrap_or_default();
                ranks[r].wait_blocked(irecv, site(r, at));
            }
            (Pending::Matched(_), Call::Wait { slot }) => {
                if let Request::Send { record, .. } = requests[r][slot] {
                    ranks[r].wait_blocked(record, site(r, at));
                }
            }
            _ => ranks[r].blocked(),
        }
    }
    run(ranks)
}

/// The records of a round's end on rank `rank`.
fn write_end(r: &mut Rank, end: Collective, rank: i32) {
    match end {
        Collective::None => {}
        Collective::Barrier { site, split } => {
            let up = split.is_some_and(|s| rank >= s);
            r.barrier(site + u32::from(up));
        }
        Collective::TwoBarriers { first, second } => {
            r.barrier(first);
            r.barrier(second);
        }
        Collective::Allreduce => {
            r.rooted(OpKind::Allreduce, 0, 60);
        }
        Collective::Bcast { root } => {
            r.rooted(OpKind::Bcast, root, 61);
        }
    }
}

/// The runs, coverage and options of seed `seed`: one seed in three
/// writes a program's traces as generated (consistent or not), the others
/// simulate 1-3 interleavings of a program under MPI's rules.
fn case(seed: u64) -> (Vec<Vec<RankTrace>>, Coverage, Options) {
    let mut rng = Rng(seed);
    let zero = rng.chance(30);
    let options = Options {
        buffering: if zero {
            SendBuffering::Zero
        } else {
            SendBuffering::Eager
        },
        check_send_first: rng.chance(15),
    };
    let runs = if seed.is_multiple_of(3) {
        let p = program(&mut rng);
        let mut runs = vec![traces(&p)];
        if rng.chance(50) {
            if let Some(q) = swapped(&p, &mut rng) {
                runs.push(traces(&q));
            }
        }
        runs
    } else {
        let calls = calls(&mut rng);
        let count = 1 + rng.below(3);
        (0..count)
            .map(|_| simulate(&calls, zero, &mut rng))
            .collect()
    };
    let coverage = Coverage {
        complete: !rng.chance(5),
        deadlock_free: !rng.chance(5),
    };
    (runs, coverage, options)
}

/// What a verdict is, for the tally of what the cases covered.
fn kind(v: &Verdict) -> usize {
    match v {
        Verdict::Relevant { after_deleting, .. } if after_deleting.is_empty() => 0,
        Verdict::Relevant { .. } => 1,
        Verdict::Irrelevant => 2,
        Verdict::Unknown(_) => 3,
    }
}

/// The stats both analyses must agree on: what was examined and found,
/// not how far the searches went (`ordered_pairs` counts the pairs a
/// search reached before it stopped; `visited` and `deletion_visited` its
/// nodes).
fn examined(a: &Audit) -> [usize; 6] {
    let s = &a.stats;
    [
        s.interleavings,
        s.nodes,
        s.edges,
        s.wildcard_receives,
        s.pairs,
        s.relevant_findings,
    ]
}

/// The graphs are the same node for node: what each node is, its edges in
/// each direction in the order they are listed (searches and shortest
/// paths follow it), their rules, the positions.
fn same_graph(g: &RunGraph, h: &super::RunGraph, seed: u64) {
    let (new, old) = (g.graph(), h.graph());
    assert_eq!(new.node_count(), old.node_count(), "seed {seed}");
    assert_eq!(new.edge_count(), old.edge_count(), "seed {seed}");
    let (r, s) = (g.reach(), h.reach());
    assert_eq!(r.is_acyclic(), s.is_acyclic(), "seed {seed}");
    for n in old.node_indices() {
        assert_eq!(new.node(n), old[n], "seed {seed}, node {}", n.index());
        assert_eq!(
            r.position(n),
            s.position(n),
            "seed {seed}, node {}",
            n.index()
        );
        for dir in [Direction::Outgoing, Direction::Incoming] {
            let a: Vec<(NodeIndex, NodeIndex, Edge)> = new
                .edges_directed(n, dir)
                .map(|e| (e.source(), e.target(), *e.weight()))
                .collect();
            let b: Vec<(NodeIndex, NodeIndex, Edge)> = old
                .edges_directed(n, dir)
                .map(|e| (e.source(), e.target(), *e.weight()))
                .collect();
            assert_eq!(a, b, "seed {seed}, node {} {dir:?}", n.index());
            let a: Vec<_> = new.neighbors_directed(n, dir).collect();
            let b: Vec<_> = old.neighbors_directed(n, dir).collect();
            assert_eq!(a, b, "seed {seed}, node {} {dir:?}", n.index());
        }
    }
    for slot in 0..g.graph().ops.len() {
        let op = g.graph().op_ref(slot);
        let (a, b) = (g.op_nodes(op.rank, op.index), h.op_nodes(op.rank, op.index));
        assert_eq!(a, b, "seed {seed}, {op}");
    }
    assert_eq!(g.matches(), h.matches(), "seed {seed}");
    assert_eq!(g.collectives(), h.collectives(), "seed {seed}");
    assert_eq!(g.issues(), h.issues(), "seed {seed}");
}

#[test]
fn audits_agree_with_the_reference_on_random_programs() {
    let cases = if cfg!(debug_assertions) { 1500 } else { 6000 };
    // Relevant alone, kept for the deletion set, irrelevant, unknown;
    // and runs whose graph has a cycle.
    let mut tally = [0usize; 4];
    let mut cyclic = 0;
    for seed in 0..cases {
        let (runs, coverage, options) = case(seed);
        let new = audit(&runs, coverage, &options);
        let old = super::audit(&runs, coverage, &options);
        assert_eq!(new.barriers, old.barriers, "seed {seed}");
        assert_eq!(examined(&new), examined(&old), "seed {seed}");
        for b in &new.barriers {
            tally[kind(&b.verdict)] += 1;
        }
        let old_taken = super::Taken::from_runs(&runs);
        let taken = crate::Taken::from_runs(&runs);
        for ranks in &runs {
            let (g, h) = (
                RunGraph::build(ranks, &options),
                super::RunGraph::build(ranks, &options),
            );
            cyclic += usize::from(!h.reach().is_acyclic());
            same_graph(&g, &h, seed);
            let (new, old) = (
                check_relevant(&g, ranks, &taken),
                super::check_relevant(&h, ranks, &old_taken),
            );
            assert_eq!(new.pairs, old.pairs, "seed {seed}");
            assert_eq!(
                (new.stats.wildcard_receives, new.stats.pairs),
                (old.stats.wildcard_receives, old.stats.pairs),
                "seed {seed}"
            );
        }
    }
    // The cases reach every kind of verdict, and the searches' fallback.
    assert!(tally.iter().all(|&n| n >= 20), "{tally:?}");
    assert!(cyclic >= 20, "{cyclic} cyclic runs");
}
