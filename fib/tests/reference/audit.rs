//! The pre-issue-13 audit (commit b067cb6), kept verbatim as the
//! reference of the differential tests (`super::tests`); only its paths
//! changed.

use super::graph::RunGraph;
use super::joint::{self, JointRun};
use super::relevance::{check_relevant, evidence_path, Taken};
use crate::audit::{Audit, AuditStats, BarrierVerdict, Coverage, Evidence, UnknownReason, Verdict};
use crate::graph::RunIssue;
use crate::model::{CollectiveInstance, OpRef, Options};
use crate::relevance::{Order, RelevantPair};
use mbh_trace::{OpKind, RankTrace};
use rayon::prelude::*;
use std::collections::{BTreeMap, BTreeSet};

/// What one run contributes.
struct RunOutcome {
    /// Site -> (findings, the first one, with its path).
    relevant: BTreeMap<u32, (usize, Evidence)>,
    /// Barrier calls: (site, comm).
    calls: Vec<(u32, u64)>,
    issues: Vec<RunIssue>,
    nodes: usize,
    edges: usize,
    findings: usize,
    stats: crate::relevance::RunStats,
    /// The member sites of each barrier instance with more than one.
    links: Vec<Vec<u32>>,
    /// The run kept for the deletion set's check.
    joint: Option<JointRun>,
}

fn analyse_run(
    interleaving: usize,
    ranks: &[RankTrace],
    taken: &Taken,
    (options, keep): (&Options, bool),
) -> RunOutcome {
    let graph = RunGraph::build(ranks, options);
    let found = check_relevant(&graph, ranks, taken);
    let members: BTreeMap<CollectiveInstance, &[OpRef]> = graph
        .collectives()
        .iter()
        .map(|c| (c.instance, c.members.as_slice()))
        .collect();
    // The first finding per site; its path is computed once.
    let mut first: BTreeMap<u32, (usize, &RelevantPair)> = BTreeMap::new();
    for pair in &found.pairs {
        let sites: BTreeSet<u32> = members
            .get(&pair.barrier)
            .into_iter()
            .flat_map(|m| m.iter().map(|op| op.site))
            .collect();
        for site in sites {
            first.entry(site).or_insert((0, pair)).0 += 1;
        }
    }
    let relevant = first
        .into_iter()
        .map(|(site, (count, pair))| {
            let evidence = Evidence {
                interleaving,
                receive: pair.receive,
                send: pair.send,
                order: pair.order,
                barrier: pair.barrier,
                members: members
                    .get(&pair.barrier)
                    .map(|m| m.to_vec())
                    .unwrap_or_default(),
                path: evidence_path(&graph, pair),
            };
            (site, (count, evidence))
        })
        .collect();
    let calls = ranks
        .iter()
        .flat_map(|t| &t.ops)
        .filter(|op| op.kind == OpKind::Barrier)
        .map(|op| (op.site, op.comm))
        .collect();
    let links = graph
        .collectives()
        .iter()
        .filter(|c| c.instance.is_barrier())
        .map(|c| {
            let sites: BTreeSet<u32> = c.members.iter().map(|m| m.site).collect();
            sites.into_iter().collect::<Vec<u32>>()
        })
        .filter(|sites| sites.len() > 1)
        .collect();
    let (issues, nodes, edges) = (
        graph.issues().to_vec(),
        graph.graph().node_count(),
        graph.graph().edge_count(),
    );
    let joint = if keep && issues.is_empty() && found.stats.pairs > 0 {
        JointRun::new(interleaving, graph, ranks, taken)
    } else {
        None
    };
    RunOutcome {
        relevant,
        calls,
        issues,
        nodes,
        edges,
        findings: found.pairs.len(),
        stats: found.stats,
        links,
        joint,
    }
}

/// Fib: the verdict on every barrier site executed in the runs.
///
/// Builds each run's completes-before graph ([`RunGraph::build`]), runs
/// CheckRelevant on it ([`check_relevant`]) and gathers the findings by
/// site: a site is relevant when any instance it took part in is
/// relevant in any run (every member site of that instance is), irrelevant
/// when it never is and the exploration was complete and deadlock-free
/// with usable traces, unknown otherwise. Then chooses the deletion set
/// (crate documentation, "The deletion set"): the irrelevant sites that
/// cannot be deleted together with the others become relevant, with
/// `after_deleting` naming the sites they depend on.
///
/// # Arguments
///
/// * `runs`: for each explored interleaving, every rank's trace.
/// * `coverage`: whether the exploration was complete and deadlock-free.
/// * `options`: how standard sends completed in the runs.
///
/// # Returns
///
/// One [`BarrierVerdict`] per executed barrier site, by site id, with the
/// evidence of relevant ones, and totals.
///
/// # Complexity
///
/// Per run, O(n) to build the graph, then [`check_relevant`]'s
/// O(Σ_R |W_R|) searches; runs and receives are processed in parallel.
/// The deletion set sweeps each receive once, then again for each unit of
/// irrelevant sites whose instances its last sweep went through: a few
/// windows per receive on a program that synchronises as it goes.
pub fn audit(runs: &[Vec<RankTrace>], coverage: Coverage, options: &Options) -> Audit {
    let taken = Taken::from_runs(runs);
    // Irrelevant verdicts need a complete, deadlock-free exploration: only
    // then are the graphs kept for the deletion set's check.
    let keep = coverage.complete && coverage.deadlock_free;
    let outcomes: Vec<RunOutcome> = runs
        .par_iter()
        .enumerate()
        .map(|(i, ranks)| analyse_run(i, ranks, &taken, (options, keep)))
        .collect();
    let mut stats = AuditStats {
        interleavings: runs.len(),
        ..AuditStats::default()
    };
    let mut sites: BTreeMap<u32, (BTreeSet<u64>, usize)> = BTreeMap::new();
    let mut relevant: BTreeMap<u32, (usize, Evidence)> = BTreeMap::new();
    let mut trace_issue: Option<UnknownReason> = None;
    let mut links: Vec<Vec<u32>> = Vec::new();
    let mut kept_runs: Vec<JointRun> = Vec::new();
    for (i, outcome) in outcomes.into_iter().enumerate() {
        links.extend(outcome.links);
        kept_runs.extend(outcome.joint);
        stats.nodes += outcome.nodes;
        stats.edges += outcome.edges;
        stats.wildcard_receives += outcome.stats.wildcard_receives;
        stats.pairs += outcome.stats.pairs;
        stats.ordered_pairs += outcome.stats.ordered_pairs;
        stats.visited += outcome.stats.visited;
        for (site, comm) in outcome.calls {
            let entry = sites.entry(site).or_default();
            entry.0.insert(comm);
            entry.1 += 1;
        }
        stats.relevant_findings += outcome.findings;
        for (site, (count, evidence)) in outcome.relevant {
            let entry = relevant.entry(site).or_insert((0, evidence));
            entry.0 += count;
        }
        if trace_issue.is_none() {
            trace_issue = outcome
                .issues
                .into_iter()
                .next()
                .map(|issue| UnknownReason::Trace {
                    interleaving: i,
                    issue,
                });
        }
    }
    let unsure = if !coverage.deadlock_free {
        Some(UnknownReason::Deadlock)
    } else if !coverage.complete {
        Some(UnknownReason::Bounded)
    } else {
        trace_issue
    };
    let barriers = sites
        .into_iter()
        .map(|(site, (comms, calls))| {
            let verdict = match relevant.remove(&site) {
                Some((findings, evidence)) => Verdict::Relevant {
                    evidence: Box::new(evidence),
                    findings,
                    after_deleting: Vec::new(),
                },
                None => match &unsure {
                    Some(reason) => Verdict::Unknown(reason.clone()),
                    None => Verdict::Irrelevant,
                },
            };
            BarrierVerdict {
                site,
                comms: comms.into_iter().collect(),
                calls,
                verdict,
            }
        })
        .collect::<Vec<BarrierVerdict>>();
    let mut barriers = barriers;
    stats.deletion_visited = deletion_set(&mut barriers, &links, &kept_runs, &taken);
    Audit { barriers, stats }
}

/// Makes the irrelevant verdicts safe to act on together: sites whose
/// calls meet a relevant site's in a barrier instance become unknown, and
/// the units of irrelevant sites (sites whose calls meet in an instance)
/// that [`joint::choose`] cannot add to the deletion set become relevant.
/// Returns the nodes its sweeps visited.
fn deletion_set(
    barriers: &mut [BarrierVerdict],
    links: &[Vec<u32>],
    runs: &[JointRun],
    taken: &Taken,
) -> usize {
    if !barriers.iter().any(|b| b.verdict == Verdict::Irrelevant) {
        return 0;
    }
    // Units: the sites linked by shared instances (union-find on indices).
    let index: BTreeMap<u32, usize> = barriers
        .iter()
        .enumerate()
        .map(|(i, b)| (b.site, i))
        .collect();
    let mut parent: Vec<usize> = (0..barriers.len()).collect();
    fn root(parent: &mut [usize], mut i: usize) -> usize {
        while parent[i] != i {
            parent[i] = parent[parent[i]];
            i = parent[i];
        }
        i
    }
    for sites in links {
        let mut ids = sites.iter().filter_map(|s| index.get(s).copied());
        let Some(first) = ids.next() else { continue };
        for other in ids {
            let (a, b) = (root(&mut parent, first), root(&mut parent, other));
            parent[a.max(b)] = a.min(b);
        }
    }
    let mut units: BTreeMap<usize, Vec<usize>> = BTreeMap::new();
    for i in 0..barriers.len() {
        let r = root(&mut parent, i);
        units.entry(r).or_default().push(i);
    }
    // Barriers are sorted by site: each unit lists its sites in order, and
    // units come in the order of their lowest site.
    let mut candidates: Vec<Vec<usize>> = Vec::new();
    for members in units.into_values() {
        let kept = members
            .iter()
            .map(|&i| &barriers[i])
            .find(|b| matches!(b.verdict, Verdict::Relevant { .. }))
            .map(|b| b.site);
        match kept {
            Some(kept) => {
                for &i in &members {
                    if barriers[i].verdict == Verdict::Irrelevant {
                        barriers[i].verdict =
                            Verdict::Unknown(UnknownReason::MeetsKeptBarrier { kept });
                    }
                }
            }
            None if members
                .iter()
                .all(|&i| barriers[i].verdict == Verdict::Irrelevant) =>
            {
                candidates.push(members)
            }
            None => {}
        }
    }
    let sites: Vec<Vec<u32>> = candidates
        .iter()
        .map(|m| m.iter().map(|&i| barriers[i].site).collect())
        .collect();
    let (choice, visited) = joint::choose(runs, taken, &sites);
    for (members, kept) in candidates.iter().zip(choice) {
        let Some(kept) = kept else { continue };
        let evidence = Evidence {
            interleaving: kept.interleaving,
            receive: kept.receive,
            send: kept.send,
            order: Order::ReceiveFirst,
            barrier: kept.barrier,
            members: kept.members,
            path: kept.path,
        };
        for &i in members {
            barriers[i].verdict = Verdict::Relevant {
                evidence: Box::new(evidence.clone()),
                findings: kept.findings,
                after_deleting: kept.after_deleting.clone(),
            };
        }
    }
    visited
}
