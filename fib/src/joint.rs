//! The barriers that can be deleted together: a deletion set chosen
//! greedily among the sites found irrelevant one by one.
//!
//! Seed 004's verdicts are per barrier: two barriers that each order a
//! wildcard receive R before a send S are both irrelevant alone (the other
//! still orders the pair), though deleting both lets R take S. `audit
//! --patch` deletes every irrelevant barrier at once, so the verdicts must
//! hold for the set. In site order, a unit of irrelevant sites joins the
//! deletion set D when, with every instance of D and of the unit cut out
//! of every run's graph, every pair (R, S) ordered in the full graph is
//! still ordered; a unit that cannot join is kept, relevant, with the pair
//! it would unorder and the sites of D that could also order it.
//!
//! A unit is a set of sites whose calls meet in one barrier instance in
//! some run: deleting one without the others would pair the remaining
//! barriers differently, which cutting instances does not model.
//!
//! Ordered is CheckRelevant's relation (R's match reaches S's, entering it
//! from S's side); the searches are reachability sweeps in topological
//! order from R's match, over the window up to the sends still to settle,
//! as in [`crate::check_relevant`]. A sweep of R is repeated for a unit
//! only when its last sweep went through one of the unit's instances:
//! otherwise cutting them changes nothing it saw.

use crate::cbgraph::CbGraph;
use crate::graph::RunGraph;
use crate::horizon::Horizon;
use crate::model::is_fence;
use crate::model::{CollectiveInstance, Event, Node, OpRef};
use crate::reach::{Sweep, WindowedReach, Workspace};
use crate::relevance::{path_steps, send_side, DestSends, RankSends, Receive, Sends, Taken};
use crate::PathStep;
use mbh_trace::RankTrace;
use petgraph::graph::NodeIndex;
use petgraph::Direction;
use rayon::prelude::*;
use rustc_hash::FxHashMap;
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
        let receives = Receive::collect(&graph, ranks);
        let sends = Sends::collect(&graph, ranks, &receives);
        let receives: Vec<Receive> = receives
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
/// position of the others. A collective node reached leads to its
/// members' completions (never cut): it settles those ranks at once.
struct Settled<'a> {
    comm: u64,
    me: i32,
    /// The (rank, tag) groups of sends R accepts, sorted.
    groups: Vec<((i32, i32), &'a RankSends)>,
    /// Per rank with a group: the earliest fence completion reached.
    fence: FxHashMap<i32, u64>,
    /// Per group: the earliest send whose match was reached.
    chain: Vec<u64>,
    horizon: Horizon,
}

impl<'a> Settled<'a> {
    fn new(dest: &'a DestSends, rc: &Receive) -> Self {
        let groups: Vec<_> = dest
            .by_rank_tag
            .iter()
            .filter(|((_, t), _)| rc.tag.is_none_or(|x| x == *t))
            .map(|(k, s)| (*k, s))
            .collect();
        let values = groups.iter().map(|g| g.1.max_up_to(None).unwrap_or(0));
        Settled {
            comm: rc.comm,
            me: rc.me,
            chain: vec![u64::MAX; groups.len()],
            horizon: Horizon::new(values.collect()),
            groups,
            fence: FxHashMap::default(),
        }
    }

    /// The index after which the sends of `group` are settled.
    fn bound(&self, (rank, tag): (i32, i32)) -> Option<u64> {
        let fence = self.fence.get(&rank).copied();
        let chain = self
            .group(rank, tag)
            .map(|g| self.chain[g])
            .filter(|&i| i != u64::MAX);
        fence.into_iter().chain(chain).min()
    }

    fn group(&self, rank: i32, tag: i32) -> Option<usize> {
        self.groups.binary_search_by_key(&(rank, tag), |g| g.0).ok()
    }

    fn settles(&self, send: OpRef, tag: i32) -> bool {
        self.bound((send.rank, tag)).is_some_and(|b| b < send.index)
    }

    /// Lowers the horizon of group `g` to its sends up to its bound.
    fn lower(&mut self, g: usize) {
        let (key, sends) = self.groups[g];
        let max = sends.max_up_to(self.bound(key)).unwrap_or(0);
        self.horizon.lower(g, max);
    }

    /// A completion of `op` reached: if a fence, its rank's later sends
    /// are settled.
    fn completed(&mut self, op: OpRef) {
        let earlier = self.fence.get(&op.rank).is_some_and(|&i| i <= op.index);
        if !is_fence(op.kind) || earlier {
            return;
        }
        let from = self.groups.partition_point(|g| g.0 .0 < op.rank);
        let to = self.groups.partition_point(|g| g.0 .0 <= op.rank);
        if from < to {
            self.fence.insert(op.rank, op.index);
            for g in from..to {
                self.lower(g);
            }
        }
    }

    /// Takes in the reached node `n`.
    fn visit(&mut self, graph: &RunGraph, sends: &Sends, n: NodeIndex) {
        match graph.node(n) {
            Node::Event {
                op,
                event: Event::Complete,
            } => self.completed(op),
            Node::Collective(_) => {
                for &op in graph.exits(n) {
                    self.completed(op);
                }
            }
            _ => {}
        }
        if let Some(s) = sends.info.get(&n) {
            if s.comm != self.comm || s.dest != self.me {
                return;
            }
            let Some(g) = self.group(s.op.rank, s.tag) else {
                return;
            };
            if s.op.index < self.chain[g] {
                self.chain[g] = s.op.index;
                self.lower(g);
            }
        }
    }

    fn horizon(&mut self) -> u32 {
        self.horizon.max()
    }
}

/// One reachability sweep of receive `rc` in the run's graph less the
/// nodes `cut` holds for: collecting the candidate sends it does not reach
/// (`known` `None`), or stopping at the first one it does not reach that
/// is not in `known`.
fn sweep(
    run: &JointRun,
    reach: &WindowedReach<'_, &CbGraph>,
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
        if graph.graph().collective(n).is_some_and(|c| c.is_barrier()) {
            out.hubs.push(n);
        }
        while let Some(&(_, s)) = list.get(cursor).filter(|&&(p, _)| p < position) {
            cursor += 1;
            if judge(s, false, ws, &mut out) {
                return Sweep::Stop;
            }
        }
        settle.visit(graph, &run.sends, n);
        if acyclic && position >= settle.horizon() {
            Sweep::Stop
        } else {
            Sweep::Continue
        }
    });
    if out.lost.is_none() {
        // Past the stop, every send up to the horizon is decided; the later
        // ones come after a reached fence of their rank, or after a reached
        // send of their rank and tag.
        let horizon = settle.horizon();
        while let Some(&(_, s)) = list.get(cursor).filter(|&&(p, _)| p <= horizon) {
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
    let (mut pending, mut visited) = first_sweeps(runs, &reaches, taken);
    let mut readers = readers_of(&pending);
    let mut cut: Vec<HashSet<NodeIndex>> = vec![HashSet::new(); runs.len()];
    let mut deleted: BTreeSet<u32> = BTreeSet::new();
    let mut choice = Vec::with_capacity(units.len());
    for unit in units {
        let unit_hubs = unit_hubs(&hubs, unit);
        let affected = affected(&unit_hubs, &readers);
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
        accept(&affected, outs, &mut pending, &mut readers);
        for (c, uh) in cut.iter_mut().zip(unit_hubs) {
            c.extend(uh);
        }
        deleted.extend(unit.iter().copied());
        choice.push(None);
    }
    (choice, visited)
}

/// Every receive of every run, swept once in the full graph: each run's
/// receives' [`Pending`] states, and the nodes the sweeps reached.
fn first_sweeps(
    runs: &[JointRun],
    reaches: &[WindowedReach<'_, &CbGraph>],
    taken: &Taken,
) -> (Vec<Vec<Pending>>, usize) {
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
    let visited = first.iter().map(|o| o.visited).sum::<usize>();
    for (&(i, _), out) in all.iter().zip(first) {
        pending[i].push(Pending {
            unordered: out.unordered.into_iter().collect(),
            hubs: out.hubs,
        });
    }
    (pending, visited)
}

/// Per run: instance node -> the receives whose last sweep took it.
fn readers_of(pending: &[Vec<Pending>]) -> Vec<HashMap<NodeIndex, Vec<usize>>> {
    pending
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
        .collect()
}

/// Per run: the barrier instances with a member at a site of `unit`.
fn unit_hubs(hubs: &[Hubs], unit: &[u32]) -> Vec<HashSet<NodeIndex>> {
    hubs.iter()
        .map(|h| {
            unit.iter()
                .flat_map(|s| h.of_site.get(s).into_iter().flatten().copied())
                .collect()
        })
        .collect()
}

/// The receives (run, receive) whose last sweep went through one of
/// `unit_hubs`: the only ones deleting the unit can change.
fn affected(
    unit_hubs: &[HashSet<NodeIndex>],
    readers: &[HashMap<NodeIndex, Vec<usize>>],
) -> Vec<(usize, usize)> {
    unit_hubs
        .iter()
        .enumerate()
        .flat_map(|(i, uh)| {
            let ks: BTreeSet<usize> = uh
                .iter()
                .flat_map(|h| readers[i].get(h).into_iter().flatten().copied())
                .collect();
            ks.into_iter().map(move |k| (i, k))
        })
        .collect()
}

/// A unit joined: the `affected` receives' new sweeps `outs` are their
/// last ones.
fn accept(
    affected: &[(usize, usize)],
    outs: Vec<SweepOut>,
    pending: &mut [Vec<Pending>],
    readers: &mut [HashMap<NodeIndex, Vec<usize>>],
) {
    for (&(i, k), out) in affected.iter().zip(outs) {
        for &h in &out.hubs {
            let ks = readers[i].entry(h).or_default();
            if !ks.contains(&k) {
                ks.push(k);
            }
        }
        pending[i][k].hubs = out.hubs;
    }
}

/// The evidence that a unit is kept: R, the send S it would lose, a path
/// from R's match to S's avoiding the deletion set's instances (it goes
/// through one of the unit's), and the deletion set's sites that could
/// also have ordered the pair.
fn explain(
    run: &JointRun,
    reach: &WindowedReach<'_, &CbGraph>,
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
