//! Hand-built rank traces with the records the runtime writes: the call
//! records, then, when a receive completes, its status and a `Matched`
//! record naming the send it took.
#![allow(dead_code)]

use mbh_fib::{Audit, Coverage, Edge, Node, RunGraph, SendBuffering, Taken, Verdict};
use mbh_trace::op::{flags, OpClass};
use mbh_trace::rank_trace::{Op, RankEnd, RankState};
use mbh_trace::{OpKind, RankTrace};
use petgraph::graph::NodeIndex;
use petgraph::visit::EdgeRef;
use petgraph::Direction;
use std::collections::{BTreeSet, HashSet, VecDeque};

/// A complete, deadlock-free exploration.
pub const FULL: Coverage = Coverage {
    complete: true,
    deadlock_free: true,
};

/// Communicator handle bits standing for `MPI_COMM_WORLD` (any value: the
/// crate reads it from the `MPI_Init` record).
pub const WORLD: u64 = 0x4400_0000;

/// One rank's trace under construction.
pub struct Rank {
    pub rank: i32,
    ops: Vec<Op>,
    next_request: u64,
    wildcard_events: i32,
    state: RankState,
}

fn blank(index: u64, kind: OpKind) -> Op {
    Op {
        index,
        kind,
        flags: 0,
        site: 0,
        peer: 0,
        tag: 0,
        comm: 0,
        count: 1,
        matched: None,
        error: 0,
        request: 0,
        aux: 0,
    }
}

/// A source argument: a rank or `MPI_ANY_SOURCE`.
#[derive(Clone, Copy)]
pub enum Source {
    Rank(i32),
    Any,
}

pub use Source::Any;

pub fn from(rank: i32) -> Source {
    Source::Rank(rank)
}

impl Rank {
    /// A rank that called `MPI_Init`.
    pub fn new(rank: i32) -> Rank {
        let mut r = Rank {
            rank,
            ops: Vec::new(),
            next_request: 0x9800_0000 + (rank as u64) * 0x1000,
            wildcard_events: 0,
            state: RankState::Finalized,
        };
        r.push(OpKind::Init, 0, |op| op.comm = WORLD);
        r
    }

    fn push(&mut self, kind: OpKind, site: u32, f: impl FnOnce(&mut Op)) -> u64 {
        let index = self.ops.len() as u64;
        let mut op = blank(index, kind);
        op.site = site;
        op.flags = flags::RETURNED;
        f(&mut op);
        self.ops.push(op);
        index
    }

    fn send_kind(&mut self, kind: OpKind, to: i32, tag: i32, comm: u64, site: u32) -> u64 {
        let request = if matches!(kind, OpKind::Isend | OpKind::Issend) {
            self.next_request += 1;
            self.next_request
        } else {
            0
        };
        self.push(kind, site, |op| {
            op.peer = to;
            op.tag = tag;
            op.comm = comm;
            op.request = request;
        })
    }

    /// `MPI_Isend(to, tag)` on the world.
    pub fn isend(&mut self, to: i32, tag: i32, site: u32) -> u64 {
        self.send_kind(OpKind::Isend, to, tag, WORLD, site)
    }

    /// `MPI_Isend` on `comm`.
    pub fn isend_on(&mut self, comm: u64, to: i32, tag: i32, site: u32) -> u64 {
        self.send_kind(OpKind::Isend, to, tag, comm, site)
    }

    /// `MPI_Send(to, tag)`.
    pub fn send(&mut self, to: i32, tag: i32, site: u32) -> u64 {
        self.send_kind(OpKind::Send, to, tag, WORLD, site)
    }

    /// `MPI_Ssend(to, tag)`.
    pub fn ssend(&mut self, to: i32, tag: i32, site: u32) -> u64 {
        self.send_kind(OpKind::Ssend, to, tag, WORLD, site)
    }

    fn receive(
        &mut self,
        kind: OpKind,
        from: Source,
        tag: Option<i32>,
        comm: u64,
        site: u32,
    ) -> u64 {
        let request = if kind == OpKind::Irecv {
            self.next_request += 1;
            self.next_request
        } else {
            0
        };
        self.push(kind, site, |op| {
            match from {
                Source::Rank(r) => op.peer = r,
                Source::Any => {
                    op.peer = -2;
                    op.flags |= flags::ANY_SOURCE;
                }
            }
            match tag {
                Some(t) => op.tag = t,
                None => {
                    op.tag = -1;
                    op.flags |= flags::ANY_TAG;
                }
            }
            op.comm = comm;
            op.request = request;
            if kind == OpKind::Recv {
                // Blocking: returned once matched (see `matched`).
                op.flags &= !flags::RETURNED;
            }
        })
    }

    /// `MPI_Irecv(from, tag)` on the world (`tag` `None`: `MPI_ANY_TAG`).
    pub fn irecv(&mut self, from: Source, tag: Option<i32>, site: u32) -> u64 {
        self.receive(OpKind::Irecv, from, tag, WORLD, site)
    }

    /// `MPI_Irecv` on `comm`.
    pub fn irecv_on(&mut self, comm: u64, from: Source, tag: Option<i32>, site: u32) -> u64 {
        self.receive(OpKind::Irecv, from, tag, comm, site)
    }

    /// `MPI_Recv(from, tag)` that took send `sent` = (rank, record index)
    /// with tag `sent_tag`.
    pub fn recv(
        &mut self,
        from: Source,
        tag: Option<i32>,
        site: u32,
        sent: (i32, u64),
        sent_tag: i32,
    ) -> u64 {
        let i = self.receive(OpKind::Recv, from, tag, WORLD, site);
        self.matched(i, i, sent, sent_tag);
        self.ops[i as usize].flags |= flags::RETURNED;
        i
    }

    /// `MPI_Recv` still blocked (a deadlock).
    pub fn recv_blocked(&mut self, from: Source, tag: Option<i32>, site: u32) -> u64 {
        self.state = RankState::Running;
        self.receive(OpKind::Recv, from, tag, WORLD, site)
    }

    /// Status and `Matched` record of receive `recv`, completed by record
    /// `at` (itself, or the `Wait`).
    fn matched(&mut self, recv: u64, at: u64, sent: (i32, u64), sent_tag: i32) {
        let wildcard = self.ops[recv as usize].has(flags::ANY_SOURCE);
        let event = if wildcard {
            self.wildcard_events += 1;
            self.wildcard_events - 1
        } else {
            -1
        };
        for i in [recv, at] {
            let op = &mut self.ops[i as usize];
            op.flags |= flags::HAS_STATUS;
            op.matched = Some((sent.0, sent_tag));
        }
        self.push(OpKind::Matched, 0, |op| {
            op.request = at;
            op.peer = sent.0;
            op.aux = sent.1;
            op.count = event;
            op.flags = 0;
        });
        if wildcard {
            self.push(OpKind::WildcardClock, 0, |op| {
                op.count = event;
                op.request = recv;
                op.peer = sent.0;
                op.tag = sent_tag;
                op.flags = 0;
            });
        }
    }

    /// `MPI_Wait` on the request of record `of`.
    pub fn wait(&mut self, of: u64, site: u32) -> u64 {
        let request = self.ops[of as usize].request;
        self.push(OpKind::Wait, site, |op| {
            op.request = request;
            op.aux = of + 1;
        })
    }

    /// `MPI_Wait` on receive `of`, which took send `sent` with `sent_tag`.
    pub fn wait_recv(&mut self, of: u64, site: u32, sent: (i32, u64), sent_tag: i32) -> u64 {
        let w = self.wait(of, site);
        self.matched(of, w, sent, sent_tag);
        w
    }

    /// `MPI_Wait` still blocked (a deadlock).
    pub fn wait_blocked(&mut self, of: u64, site: u32) -> u64 {
        self.state = RankState::Running;
        let w = self.wait(of, site);
        self.ops[w as usize].flags &= !flags::RETURNED;
        w
    }

    /// `MPI_Barrier(MPI_COMM_WORLD)`.
    pub fn barrier(&mut self, site: u32) -> u64 {
        self.barrier_on(WORLD, site)
    }

    /// `MPI_Barrier(comm)`.
    pub fn barrier_on(&mut self, comm: u64, site: u32) -> u64 {
        self.push(OpKind::Barrier, site, |op| op.comm = comm)
    }

    /// A rooted collective (`MPI_Bcast`, `MPI_Reduce`) on the world.
    pub fn rooted(&mut self, kind: OpKind, root: i32, site: u32) -> u64 {
        self.push(kind, site, |op| {
            op.comm = WORLD;
            op.peer = root;
        })
    }

    /// A nonblocking collective on world, completed by `MPI_Waitall` (whose
    /// record names another request): returns (collective, waitall); the
    /// runtime's `CollectiveComplete` record links the two.
    pub fn icollective_waitall(&mut self, kind: OpKind, root: i32, site: u32) -> (u64, u64) {
        let coll = self.rooted(kind, root, site);
        let waitall = self.push(OpKind::Waitall, site + 1, |op| op.count = 2);
        self.push(OpKind::CollectiveComplete, 0, |op| {
            op.request = coll;
            op.aux = waitall;
        });
        (coll, waitall)
    }

    /// The last call is still blocked (a deadlock): no `MPI_Finalize`.
    pub fn blocked(&mut self) {
        self.state = RankState::Running;
    }

    /// The trace, after `MPI_Finalize` (unless a call is still blocked).
    pub fn done(mut self) -> RankTrace {
        if self.state == RankState::Finalized {
            self.push(OpKind::Finalize, 0, |_| {});
        }
        RankTrace {
            rank: self.rank,
            size: 0,
            pid: 1000 + self.rank as u32,
            end: RankEnd {
                state: self.state,
                exit_status: None,
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
            ops: self.ops,
        }
    }
}

/// Sets every trace's `size` to the number of ranks.
pub fn run(ranks: Vec<Rank>) -> Vec<RankTrace> {
    let n = ranks.len() as i32;
    ranks
        .into_iter()
        .map(|r| {
            let mut t = r.done();
            t.size = n;
            t
        })
        .collect()
}

/// Builds the graph with eager sends.
pub fn graph(run: &[RankTrace]) -> RunGraph {
    RunGraph::build(run, &mbh_fib::Options::default())
}

/// Builds the graph with sends that complete only once matched.
pub fn graph_zero(run: &[RankTrace]) -> RunGraph {
    RunGraph::build(
        run,
        &mbh_fib::Options {
            buffering: SendBuffering::Zero,
            ..Default::default()
        },
    )
}

/// Writes the graph's DOT to the target directory and returns where, for
/// assertion messages.
pub fn dump(g: &RunGraph, name: &str) -> String {
    // Unit tests (`tests/reference/tests.rs`, compiled into them, shares this module) have no
    // target temporary directory.
    let dir = option_env!("CARGO_TARGET_TMPDIR")
        .map_or_else(std::env::temp_dir, std::path::PathBuf::from);
    let path = dir.join(format!("fib-{name}.dot"));
    match std::fs::write(&path, g.to_dot()) {
        Ok(()) => format!("graph written to {}", path.display()),
        Err(_) => g.to_dot(),
    }
}

/// Checks an audit's deletion set by brute force: deleting every
/// irrelevant site keeps every ordered pair ordered, and adding any site
/// kept for the deletion set unorders one.
pub fn check_deletion_set(runs: &[Vec<RankTrace>], a: &Audit) {
    let deleted: BTreeSet<u32> = a.irrelevant_sites().collect();
    assert!(
        lost_pairs(runs, &deleted).is_empty(),
        "deleting {deleted:?} unorders {:?}",
        lost_pairs(runs, &deleted)
    );
    for b in &a.barriers {
        if let Verdict::Relevant { after_deleting, .. } = &b.verdict {
            if !after_deleting.is_empty() || !relevant_alone(runs, b.site) {
                let mut more = deleted.clone();
                more.insert(b.site);
                assert!(
                    !lost_pairs(runs, &more).is_empty(),
                    "site {} was kept, yet deleting it too unorders nothing",
                    b.site
                );
            }
        }
    }
}

/// Whether the per-site audit alone (no deletion set) finds `site`
/// relevant: some single instance orders a pair.
pub fn relevant_alone(runs: &[Vec<RankTrace>], site: u32) -> bool {
    let taken = Taken::from_runs(runs);
    runs.iter().any(|r| {
        let g = graph(r);
        let found = mbh_fib::check_relevant(&g, r, &taken);
        found.pairs.iter().any(|p| {
            g.collectives()
                .iter()
                .any(|c| c.instance == p.barrier && c.members.iter().any(|m| m.site == site))
        })
    })
}

/// A pair ordered in the full graph and not without some barriers: (run,
/// receive's (rank, record index), send's).
pub type LostPair = (usize, (i32, u64), (i32, u64));

/// The (run, receive, send) pairs ordered in the full graph and not once
/// every barrier instance with a member at a site of `deleted` is cut out:
/// a breadth-first search per receive over the whole graph.
pub fn lost_pairs(runs: &[Vec<RankTrace>], deleted: &BTreeSet<u32>) -> Vec<LostPair> {
    let taken = Taken::from_runs(runs);
    let mut lost = Vec::new();
    for (i, ranks) in runs.iter().enumerate() {
        let g = graph(ranks);
        let cut: HashSet<NodeIndex> = g
            .collectives()
            .iter()
            .filter(|c| {
                c.instance.is_barrier() && c.members.iter().any(|m| deleted.contains(&m.site))
            })
            .map(|c| c.node)
            .collect();
        let reached = |from: NodeIndex, skip: &HashSet<NodeIndex>| {
            let mut seen = HashSet::from([from]);
            let mut queue = VecDeque::from([from]);
            while let Some(u) = queue.pop_front() {
                for v in g.graph().neighbors_directed(u, Direction::Outgoing) {
                    if !skip.contains(&v) && seen.insert(v) {
                        queue.push_back(v);
                    }
                }
            }
            seen
        };
        for rt in ranks {
            for r in rt.ops.iter().filter(|op| {
                matches!(op.kind, OpKind::Recv | OpKind::Irecv) && op.has(flags::ANY_SOURCE)
            }) {
                let Some(rn) = g.op_nodes(rt.rank, r.index).and_then(|n| n.receive) else {
                    continue;
                };
                let Node::Match { send: took, .. } = g.node(rn) else {
                    continue;
                };
                let (full, less) = (reached(rn, &HashSet::new()), reached(rn, &cut));
                for st in ranks {
                    for s in st.ops.iter().filter(|op| {
                        op.kind.class() == OpClass::Send
                            && op.comm == r.comm
                            && op.peer == rt.rank
                            && (r.has(flags::ANY_TAG) || op.tag == r.tag)
                            && (st.rank, op.index) != took.key()
                            && !taken.contains((rt.rank, r.index), (st.rank, op.index))
                    }) {
                        let Some(n) = g.op_nodes(st.rank, s.index) else {
                            continue;
                        };
                        let Some(sn) = n.send else { continue };
                        // Entering S's match from its own side.
                        let ordered = |seen: &HashSet<NodeIndex>| {
                            g.graph().edges_directed(sn, Direction::Incoming).any(|e| {
                                seen.contains(&e.source())
                                    && (e.source() == n.issue || *e.weight() == Edge::SendOrder)
                            })
                        };
                        if ordered(&full) && !ordered(&less) {
                            lost.push((i, (rt.rank, r.index), (st.rank, s.index)));
                        }
                    }
                }
            }
        }
    }
    lost
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
