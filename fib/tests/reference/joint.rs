//! The pre-issue-13 deletion set (commit b067cb6), kept verbatim as the
//! reference of the differential tests (`super::tests`); only its paths
//! changed.

use super::graph::RunGraph;
use super::reach::{Sweep, WindowedReach, Workspace};
use super::relevance::{path_steps, send_side, DestSends, RankSends, Receive, Sends, Taken};
use crate::model::is_fence;
use crate::model::{CollectiveInstance, Event, Node, OpRef};
use crate::PathStep;
use mbh_trace::RankTrace;
use petgraph::graph::{DiGraph, NodeIndex};
use petgraph::Direction;
use rayon::prelude::*;
use std::collections::{BTreeSet, HashMap, HashSet};

/// What the joint check needs of one run, kept from the per-run analysis.
pub(crate) struct JointRun {
    pub(crate) interleaving: usize,
    pub(crate) graph: RunGraph,
    sends: Sends,
    receives: Vec<Receive>,
}

impl JointRun {
    /// The run's graph with its candidate sends and wildcard receives, or
    /// `None` when no receive has a candidate send (nothing to keep
    /// ordered).
    pub(crate) fn new(
        interleaving: usize,
        graph: RunGraph,
        ranks: &[RankTrace],
        taken: &Taken,
    ) -> Option<JointRun> {
        let sends = Sends::collect(&graph, ranks);
        let receives: Vec<Receive> = Receive::collect(&graph, ranks)
            .into_iter()
            .filter(|rc| rc.pairs(&graph, &sends, taken) > 0)
            .collect();
        (!receives.is_empty()).then_some(JointRun {
            interleaving,
            graph,
            sends,
            receives,
        })
    }
}

/// Why a unit cannot join the deletion set.
#[derive(Debug, Clone)]
pub(crate) struct Kept {
    pub(crate) interleaving: usize,
    pub(crate) receive: OpRef,
    pub(crate) send: OpRef,
    /// An instance of the unit on the path below.
    pub(crate) barrier: CollectiveInstance,
    pub(crate) members: Vec<OpRef>,
    /// A shortest ordering path from R's match to S's, avoiding the
    /// instances of the deletion set.
    pub(crate) path: Vec<PathStep>,
    /// Receives of the runs that would lose an ordered send.
    pub(crate) findings: usize,
    /// Sites of the deletion set with an instance on some ordering path of
    /// the pair in the full graph.
    pub(crate) after_deleting: Vec<u32>,
}

/// The outcome of the greedy choice: per unit in the order given, `None`
/// when it joined the deletion set; and the nodes the sweeps reached.
pub(crate) type Choice = (Vec<Option<Kept>>, usize);

/// One receive's state: the candidate sends unordered in the full graph,
/// and the barrier instances its last accepted sweep went through.
struct Pending {
    unordered: HashSet<NodeIndex>,
    hubs: Vec<NodeIndex>,
}

/// What one sweep of one receive found.
#[derive(Default)]
struct SweepOut {
    /// Collecting: the candidate sends R does not reach.
    unordered: Vec<NodeIndex>,
    /// Checking: the first send, by position, ordered in the full graph and
    /// not reached.
    lost: Option<NodeIndex>,
    /// The barrier instances taken out of the heap.
    hubs: Vec<NodeIndex>,
    /// Nodes reached.
    visited: usize,
}

/// Per run: barrier instance node -> its member sites, and site -> the
/// instance nodes with a member there.
struct Hubs {
    sites: HashMap<NodeIndex, (CollectiveInstance, Vec<OpRef>)>,
    of_site: HashMap<u32, Vec<NodeIndex>>,
}

impl Hubs {
    fn of(graph: &RunGraph) -> Hubs {
        let mut sites = HashMap::new();
        let mut of_site: HashMap<u32, Vec<NodeIndex>> = HashMap::new();
        for c in graph
            .collectives()
            .iter()
            .filter(|c| c.instance.is_barrier())
        {
            sites.insert(c.node, (c.instance, c.members.clone()));
            let member_sites: BTreeSet<u32> = c.members.iter().map(|m| m.site).collect();
            for site in member_sites {
                of_site.entry(site).or_default().push(c.node);
            }
        }
        Hubs { sites, of_site }
    }
}

/// Tells a reachability sweep of one receive R when every candidate send
/// left is decided: the sends of a rank after a fence completion of that
/// rank the sweep reached (the rank's fence chain leads to their issues
/// with no barrier instance on it), and the sends of a rank with one tag
/// after one whose match the sweep reached (they match in order) are
/// reached through their own side; the sweep can stop past the largest
/// position of the others.
struct Settled<'a> {
    comm: u64,
    me: i32,
    /// The (rank, tag) groups of sends R accepts.
    groups: Vec<((i32, i32), &'a RankSends)>,
    /// Per rank: the earliest fence completion reached.
    fence: HashMap<i32, u64>,
    /// Per (rank, tag): the earliest send whose match was reached.
    chain: HashMap<(i32, i32), u64>,
    horizon: u32,
}

impl<'a> Settled<'a> {
    fn new(dest: &'a DestSends, rc: &Receive) -> Self {
        let mut groups: Vec<_> = dest
            .by_rank_tag
            .iter()
            .filter(|((_, t), _)| rc.tag.is_none_or(|x| x == *t))
            .map(|(&k, s)| (k, s))
            .collect();
        groups.sort_unstable_by_key(|g| g.0);
        let mut settled = Settled {
            comm: rc.comm,
            me: rc.me,
            groups,
            fence: HashMap::new(),
            chain: HashMap::new(),
            horizon: 0,
        };
        settled.update();
        settled
    }

    /// The index after which the sends of `group` are settled.
    fn bound(&self, (rank, tag): (i32, i32)) -> Option<u64> {
        let fence = self.fence.get(&rank).copied();
        let chain = self.chain.get(&(rank, tag)).copied();
        fence.into_iter().chain(chain).min()
    }

    fn settles(&self, send: OpRef, tag: i32) -> bool {
        self.bound((send.rank, tag)).is_some_and(|b| b < send.index)
    }

    fn update(&mut self) {
        self.horizon = self
            .groups
            .iter()
            .filter_map(|&(k, sends)| sends.max_up_to(self.bound(k)))
            .max()
            .unwrap_or(0);
    }

    /// Takes in the reached node `n`.
    fn visit(&mut self, graph: &RunGraph, sends: &Sends, n: NodeIndex) {
        if let Node::Event {
            op,
            event: Event::Complete,
        } = graph.graph()[n]
        {
            let earlier = self.fence.get(&op.rank).is_some_and(|&i| i <= op.index);
            if is_fence(op.kind) && !earlier && self.groups.iter().any(|g| g.0 .0 == op.rank) {
                self.fence.insert(op.rank, op.index);
                self.update();
            }
        }
        if let Some(s) = sends.info.get(&n) {
            let key = (s.op.rank, s.tag);
            let earlier = self.chain.get(&key).is_some_and(|&i| i <= s.op.index);
            let accepted = self.groups.binary_search_by_key(&key, |g| g.0).is_ok();
            if s.comm == self.comm && s.dest == self.me && accepted && !earlier {
                self.chain.insert(key, s.op.index);
                self.update();
            }
        }
    }
}

/// One reachability sweep of receive `rc` in the run's graph less the
/// nodes `cut` holds for: collecting the candidate sends it does not reach
/// (`known` `None`), or stopping at the first one it does not reach that
/// is not in `known`.
fn sweep(
    run: &JointRun,
    reach: &WindowedReach<&DiGraph<Node, crate::Edge>>,
    ws: &mut Workspace,
    (rc, taken): (&Receive, &Taken),
    cut: &dyn Fn(NodeIndex) -> bool,
    known: Option<&HashSet<NodeIndex>>,
) -> SweepOut {
    let graph = &run.graph;
    let mut out = SweepOut::default();
    let Some(dest) = run.sends.dests.get(&(rc.comm, rc.me)) else {
        return out;
    };
    let list = &dest.by_position;
    let start = graph.position(rc.node);
    let mut cursor = list.partition_point(|&(p, _)| p <= start);
    let mut settle = Settled::new(dest, rc);
    let acyclic = reach.is_acyclic();
    // Whether S is reached through one of its own predecessors (not the
    // receive that took it): decided once every node below S is swept.
    let ordered = |s: NodeIndex, ws: &Workspace| {
        graph
            .graph()
            .neighbors_directed(s, Direction::Incoming)
            .any(|p| ws.reached(p.index()) && send_side(graph, s, p))
    };
    // Judges send `s`; true when the sweep can stop (a lost send).
    let judge = |s: NodeIndex, settled: bool, ws: &Workspace, out: &mut SweepOut| {
        if settled || !rc.is_candidate(&run.sends, taken, s) || ordered(s, ws) {
            return false;
        }
        match known {
            None => {
                out.unordered.push(s);
                false
            }
            Some(known) if known.contains(&s) => false,
            Some(_) => {
                out.lost = Some(s);
                true
            }
        }
    };
    reach.sweep_reach(ws, rc.node, cut, |n, position, ws| {
        if matches!(graph.graph()[n], Node::Collective(c) if c.is_barrier()) {
            out.hubs.push(n);
        }
        while let Some(&(_, s)) = list.get(cursor).filter(|&&(p, _)| p < position) {
            cursor += 1;
            if judge(s, false, ws, &mut out) {
                return Sweep::Stop;
            }
        }
        settle.visit(graph, &run.sends, n);
        if acyclic && position >= settle.horizon {
            Sweep::Stop
        } else {
            Sweep::Continue
        }
    });
    if out.lost.is_none() {
        // Past the stop, every send up to the horizon is decided; the later
        // ones come after a reached fence of their rank, or after a reached
        // send of their rank and tag.
        while let Some(&(_, s)) = list.get(cursor).filter(|&&(p, _)| p <= settle.horizon) {
            cursor += 1;
            let settled = (run.sends.info.get(&s)).is_some_and(|i| settle.settles(i.op, i.tag));
            if judge(s, settled, ws, &mut out) {
                break;
            }
        }
    }
    out.hubs.sort_unstable();
    out.hubs.dedup();
    out.visited = ws.visited().len();
    out
}

/// Chooses the deletion set among `units` (each a set of sites, in the
/// order to try them) over `runs`, and says for each unit whether it
/// joined (`None`) or is kept, with why.
pub(crate) fn choose(runs: &[JointRun], taken: &Taken, units: &[Vec<u32>]) -> Choice {
    let reaches: Vec<_> = runs.iter().map(|r| r.graph.reach()).collect();
    let hubs: Vec<Hubs> = runs.iter().map(|r| Hubs::of(&r.graph)).collect();
    // Every receive of every run, swept once in the full graph.
    let all: Vec<(usize, usize)> = runs
        .iter()
        .enumerate()
        .flat_map(|(i, r)| (0..r.receives.len()).map(move |k| (i, k)))
        .collect();
    let never = |_: NodeIndex| false;
    let mut pending: Vec<Vec<Pending>> = runs
        .iter()
        .map(|r| Vec::with_capacity(r.receives.len()))
        .collect();
    let first: Vec<SweepOut> = all
        .par_iter()
        .map_init(Workspace::new, |ws, &(i, k)| {
            let rc = (&runs[i].receives[k], taken);
            sweep(&runs[i], &reaches[i], ws, rc, &never, None)
        })
        .collect();
    let mut visited = first.iter().map(|o| o.visited).sum::<usize>();
    for (&(i, _), out) in all.iter().zip(first) {
        pending[i].push(Pending {
            unordered: out.unordered.into_iter().collect(),
            hubs: out.hubs,
        });
    }
    // Per run: instance node -> the receives whose last sweep took it.
    let mut readers: Vec<HashMap<NodeIndex, Vec<usize>>> = pending
        .iter()
        .map(|ps| {
            let mut m: HashMap<NodeIndex, Vec<usize>> = HashMap::new();
            for (k, p) in ps.iter().enumerate() {
                for &h in &p.hubs {
                    m.entry(h).or_default().push(k);
                }
            }
            m
        })
        .collect();
    let mut cut: Vec<HashSet<NodeIndex>> = vec![HashSet::new(); runs.len()];
    let mut deleted: BTreeSet<u32> = BTreeSet::new();
    let mut choice = Vec::with_capacity(units.len());
    for unit in units {
        let unit_hubs: Vec<HashSet<NodeIndex>> = hubs
            .iter()
            .map(|h| {
                unit.iter()
                    .flat_map(|s| h.of_site.get(s).into_iter().flatten().copied())
                    .collect()
            })
            .collect();
        let affected: Vec<(usize, usize)> = unit_hubs
            .iter()
            .enumerate()
            .flat_map(|(i, uh)| {
                let ks: BTreeSet<usize> = uh
                    .iter()
                    .flat_map(|h| readers[i].get(h).into_iter().flatten().copied())
                    .collect();
                ks.into_iter().map(move |k| (i, k))
            })
            .collect();
        let outs: Vec<SweepOut> = affected
            .par_iter()
            .map_init(Workspace::new, |ws, &(i, k)| {
                let is_cut = |n: NodeIndex| cut[i].contains(&n) || unit_hubs[i].contains(&n);
                let rc = (&runs[i].receives[k], taken);
                let known = Some(&pending[i][k].unordered);
                sweep(&runs[i], &reaches[i], ws, rc, &is_cut, known)
            })
            .collect();
        visited += outs.iter().map(|o| o.visited).sum::<usize>();
        let lost: Vec<(usize, usize, NodeIndex)> = affected
            .iter()
            .zip(&outs)
            .filter_map(|(&(i, k), o)| o.lost.map(|s| (i, k, s)))
            .collect();
        if let Some(&(i, k, s)) = lost.iter().min_by_key(|&&(i, k, s)| {
            let send = runs[i].sends.info[&s].op;
            (i, runs[i].receives[k].r.key(), send.key())
        }) {
            let mut ws = Workspace::new();
            choice.push(Some(explain(
                &runs[i],
                &reaches[i],
                &hubs[i],
                &mut ws,
                (&runs[i].receives[k], s),
                (&cut[i], &unit_hubs[i]),
                (&deleted, lost.len()),
            )));
            continue;
        }
        for (&(i, k), out) in affected.iter().zip(outs) {
            for &h in &out.hubs {
                let ks = readers[i].entry(h).or_default();
                if !ks.contains(&k) {
                    ks.push(k);
                }
            }
            pending[i][k].hubs = out.hubs;
        }
        for (c, uh) in cut.iter_mut().zip(unit_hubs) {
            c.extend(uh);
        }
        deleted.extend(unit.iter().copied());
        choice.push(None);
    }
    (choice, visited)
}

/// The evidence that a unit is kept: R, the send S it would lose, a path
/// from R's match to S's avoiding the deletion set's instances (it goes
/// through one of the unit's), and the deletion set's sites that could
/// also have ordered the pair.
fn explain(
    run: &JointRun,
    reach: &WindowedReach<&DiGraph<Node, crate::Edge>>,
    hubs: &Hubs,
    ws: &mut Workspace,
    (rc, s): (&Receive, NodeIndex),
    (cut, unit_hubs): (&HashSet<NodeIndex>, &HashSet<NodeIndex>),
    (deleted, findings): (&BTreeSet<u32>, usize),
) -> Kept {
    let graph = &run.graph;
    let accepted: Vec<NodeIndex> = graph
        .graph()
        .neighbors_directed(s, Direction::Incoming)
        .filter(|&p| send_side(graph, s, p))
        .collect();
    let path = accepted
        .iter()
        .filter_map(|&p| reach.path(ws, rc.node, p, Direction::Outgoing, |n| cut.contains(&n)))
        .min_by_key(|p| p.len())
        .map(|mut p| {
            p.push(s);
            p
        })
        .unwrap_or_default();
    let (barrier, members) = path
        .iter()
        .find(|n| unit_hubs.contains(n))
        .and_then(|n| hubs.sites.get(n))
        .cloned()
        .unwrap_or_else(|| {
            let any = unit_hubs.iter().min().and_then(|n| hubs.sites.get(n));
            any.cloned()
                .expect("a kept unit has an instance in the run")
        });
    // The deletion set's instances on some path from R's match to S's, in
    // the full graph: forward from R, backward from S's own side.
    let forward: HashSet<NodeIndex> = reach
        .window(ws, rc.node, Direction::Outgoing, graph.position(s))
        .into_iter()
        .filter(|n| cut.contains(n))
        .collect();
    let mut after_deleting = BTreeSet::new();
    for &p in &accepted {
        for n in reach.window(ws, p, Direction::Incoming, graph.position(rc.node)) {
            if forward.contains(&n) {
                if let Some((_, members)) = hubs.sites.get(&n) {
                    after_deleting.extend(
                        members
                            .iter()
                            .map(|m| m.site)
                            .filter(|x| deleted.contains(x)),
                    );
                }
            }
        }
    }
    Kept {
        interleaving: run.interleaving,
        receive: rc.r,
        send: run.sends.info[&s].op,
        barrier,
        members,
        path: path_steps(graph, path),
        findings,
        after_deleting: after_deleting.into_iter().collect(),
    }
}
