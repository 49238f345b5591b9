//! Phases 9 and 10: the loop abstraction choice. A loop with wildcard
//! sites (directly or through calls) is abstracted when the taint
//! analysis finds that their outcomes stay in it; calls are followed
//! through per-function summaries, computed callees first.

use std::collections::{BTreeSet, HashMap};

use mbh_trace::static_report::{LoopDecision, LoopMarker, Span};
use petgraph::graph::DiGraph;
use rayon::prelude::*;

use super::{Facts, Placement, Prog, SiteFact};
use crate::cfg::{Cfg, NaturalLoop};
use crate::ir::{BlockId, Function, InstId, Loc, Term};
use crate::taint;

/// Per function that contains wildcard sites: `Ok` when their outcomes
/// stay in it, else why they leave.
pub(super) type Summaries = HashMap<usize, Result<(), String>>;

/// The entry and exit edges of a loop, with where their markers go.
pub(super) type LoopEdges = Vec<(BlockId, BlockId, Placement)>;

/// The decision about one loop.
pub(super) struct LoopFact {
    /// Its index in its function's [`crate::cfg::Loops::loops`].
    pub index: usize,
    /// The ids of the wildcard sites in its body.
    pub direct: Vec<u32>,
    /// The functions with wildcard sites that its body calls, sorted.
    pub through_calls: Vec<String>,
    pub decision: LoopDecision,
    pub marker: LoopMarker,
    /// The decision in words.
    pub reason: String,
    /// Its entry and exit edges, with where their markers go (none when
    /// it gets no markers).
    pub edges: LoopEdges,
}

/// Phase 9: whether the outcomes of the wildcard sites of each function
/// stay in it, callees first (the strongly connected components of the
/// call graph come in reverse topological order), so that a call can be
/// judged by its callee's summary. Recursion is not followed.
pub(super) fn wildcard_summaries(
    prog: &Prog<'_>,
    facts: &Facts,
    graph: &DiGraph<usize, ()>,
) -> Summaries {
    let (fns, locals, consts) = (prog.fns, prog.locals, prog.consts);
    let (sites, contains) = (&facts.sites, &facts.contains);
    let mut summary: Summaries = HashMap::new();
    for scc in petgraph::algo::tarjan_scc(graph) {
        let recursive = scc.len() > 1 || graph.contains_edge(scc[0], scc[0]);
        for node in &scc {
            let g = node.index();
            if !contains[g] {
                continue;
            }
            let f = &fns[g];
            if recursive {
                summary.insert(
                    g,
                    Err(format!(
                        "`{}` contains wildcard receives and is recursive, which the analysis \
                         does not follow",
                        f.shown_name()
                    )),
                );
                continue;
            }
            let region = vec![true; f.blocks.len()];
            let seeds: Vec<InstId> = sites[g]
                .iter()
                .filter(|s| s.wildcard.is_some())
                .map(|s| s.inst)
                .collect();
            let through =
                |name: &str| through(&summary, prog.names.resolve(f.module, name), contains);
            let at = |i: InstId| prog.spans.at(f, i);
            let verdict = taint::run(&taint::Input {
                follow: taint::Follow::Outcomes,
                f,
                vars: &locals[g].vars,
                pointers: &locals[g].pointers,
                consts,
                region: &region,
                seeds: &seeds,
                through: &through,
                at: &at,
            });
            let result = match verdict {
                taint::Verdict::Contained { .. } => Ok(()),
                taint::Verdict::Leaks(reason) => Err(format!(
                    "the outcome of a wildcard receive in `{}` leaves it: {reason}",
                    f.shown_name()
                )),
            };
            summary.insert(g, result);
        }
    }
    summary
}

/// Phase 10: the decision about every loop, per function in parallel.
pub(super) fn loop_decisions(
    prog: &Prog<'_>,
    facts: &Facts,
    summary: &Summaries,
) -> Vec<Vec<LoopFact>> {
    prog.fns
        .par_iter()
        .enumerate()
        .map(|(fi, _)| {
            prog.locals[fi]
                .loops
                .loops
                .iter()
                .enumerate()
                .map(|(li, l)| decide(prog, facts, summary, fi, li, l))
                .collect()
        })
        .collect()
}

/// The decision about loop `l`, number `li` of function `fi`: which
/// wildcard sites it holds, whether their outcomes stay in it, and where
/// its markers go.
fn decide(
    prog: &Prog<'_>,
    facts: &Facts,
    summary: &Summaries,
    fi: usize,
    li: usize,
    l: &NaturalLoop,
) -> LoopFact {
    let (fns, consts) = (prog.fns, prog.consts);
    let (sites, calls, contains) = (&facts.sites, &prog.calls.calls, &facts.contains);
    let f = &fns[fi];
    let local = &prog.locals[fi];
    let here = prog.spans.span(f, loop_start(f, l));
    let direct: Vec<&SiteFact> = sites[fi]
        .iter()
        .filter(|s| s.wildcard.is_some() && l.body[f.insts[s.inst as usize].block as usize])
        .collect();
    let mut through_calls: Vec<String> = calls[fi]
        .iter()
        .filter(|(k, g)| contains[*g] && l.body[f.insts[*k as usize].block as usize])
        .map(|(_, g)| fns[*g].shown_name().into_owned())
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    through_calls.sort();
    let mut fact = LoopFact {
        index: li,
        direct: direct.iter().map(|s| s.id).collect(),
        through_calls,
        decision: LoopDecision::NoWildcards,
        marker: LoopMarker::None,
        reason: format!("loop at {here} has no wildcard receive"),
        edges: Vec::new(),
    };
    if direct.is_empty() && fact.through_calls.is_empty() {
        return fact;
    }
    let seeds: Vec<InstId> = direct.iter().map(|s| s.inst).collect();
    let through = |name: &str| through(summary, prog.names.resolve(f.module, name), contains);
    let at = |i: InstId| prog.spans.at(f, i);
    let verdict = taint::run(&taint::Input {
        follow: taint::Follow::Outcomes,
        f,
        vars: &local.vars,
        pointers: &local.pointers,
        consts,
        region: &l.body,
        seeds: &seeds,
        through: &through,
        at: &at,
    });
    (fact.decision, fact.marker, fact.reason) = decision(verdict, &here);
    match loop_edges(f, &local.cfg, l) {
        Ok(edges) => fact.edges = edges,
        Err(why) => {
            fact.marker = LoopMarker::None;
            fact.reason
                .push_str(&format!("; no markers inserted: {why}"));
        }
    }
    fact
}

/// The decision, marker and reason in words for a loop with wildcard
/// sites at `here`, from what the taint analysis found about their
/// outcomes.
fn decision(verdict: taint::Verdict, here: &Span) -> (LoopDecision, LoopMarker, String) {
    match verdict {
        taint::Verdict::Contained { collected, .. } => {
            let why = if collected.is_empty() {
                "the outcomes of its wildcard receives decide no branch and reach \
                 no MPI call after it"
                    .to_owned()
            } else {
                format!("the sender only indexes {}", collected.join(" and "))
            };
            (
                LoopDecision::Abstract,
                LoopMarker::Abstract,
                format!("loop at {here} abstracted: {why}"),
            )
        }
        taint::Verdict::Leaks(why) => (
            LoopDecision::Explore,
            LoopMarker::Explore,
            format!("loop at {here} not abstracted: {why}"),
        ),
    }
}

/// For a call to function `g`: `Some` when `g` contains wildcard sites,
/// with whether their outcomes stay in it.
fn through(summary: &Summaries, g: Option<usize>, contains: &[bool]) -> Option<Result<(), String>> {
    let g = g?;
    if !contains[g] {
        return None;
    }
    Some(summary.get(&g).cloned().unwrap_or_else(|| {
        Err("a function it calls contains wildcard receives and is recursive".into())
    }))
}

/// Where loop `l` starts in the source: the start its latches'
/// `!llvm.loop` metadata records (the `for`/`while`/`do` keyword), else
/// the header's first location.
pub(super) fn loop_start(f: &Function, l: &NaturalLoop) -> Option<Loc> {
    l.latches
        .iter()
        .filter_map(|b| f.blocks[*b as usize].loop_loc.map(|(start, _)| start))
        .min_by_key(|loc| (loc.line, loc.column))
        .or_else(|| f.block_loc(l.header))
}

/// The last line of loop `l`: its `!llvm.loop` end, or the last line any
/// body instruction is attributed to.
pub(super) fn loop_end_line(f: &Function, l: &NaturalLoop) -> u32 {
    let recorded = l
        .latches
        .iter()
        .filter_map(|b| f.blocks[*b as usize].loop_loc.and_then(|(_, end)| end))
        .map(|loc| loc.line)
        .max();
    recorded.unwrap_or_else(|| {
        l.blocks
            .iter()
            .flat_map(|b| {
                let block = &f.blocks[*b as usize];
                (block.first..block.end).filter_map(|i| f.insts[i as usize].loc)
            })
            .map(|loc| loc.line)
            .max()
            .unwrap_or(0)
    })
}

/// The entry and exit edges of loop `l`, with where their markers go, or
/// why they cannot be instrumented.
///
/// C++ code puts most calls in `invoke`s (a local object with a destructor
/// is enough), so two kinds of edges are common there: an `invoke`'s
/// normal edge, which can be split like a `br`'s, and its exception edge,
/// which leaves the loop for a landing pad. An exit marker goes right
/// after that `landingpad` even when other blocks unwind to it too: an
/// exit of a loop that is not open is ignored when the trace is read, so
/// the marker closes the loop only when the exception left it.
fn loop_edges(f: &Function, cfg: &Cfg, l: &NaturalLoop) -> Result<LoopEdges, String> {
    let mut edges = Vec::new();
    for &p in &cfg.preds[l.header as usize] {
        if cfg.reachable[p as usize] && !l.body[p as usize] {
            edges.push((p, l.header));
        }
    }
    for &b in &l.blocks {
        for &s in &cfg.succs[b as usize] {
            if !l.body[s as usize] {
                edges.push((b, s));
            }
        }
    }
    edges
        .into_iter()
        .map(|(u, v)| {
            let source = &f.blocks[u as usize];
            let target = &f.blocks[v as usize];
            let exit = l.body[u as usize] && !l.body[v as usize];
            let splittable =
                matches!(source.term, Term::Br | Term::Switch) || invoke_normal_edge(f, u, v);
            let placement = if cfg.succs[u as usize].len() == 1 && splittable {
                Placement::EndOfSource
            } else if cfg.preds[v as usize].len() == 1 && !target.pad {
                Placement::StartOfTarget
            } else if splittable && !target.pad {
                Placement::Split
            } else if exit && target.landing_pad {
                Placement::StartOfTarget
            } else {
                return Err(
                    "an edge into or out of it comes from a `callbr` or computed goto, or \
                     goes to an exception handler other than a landing pad, and cannot be split"
                        .to_owned(),
                );
            };
            Ok((u, v, placement))
        })
        .collect()
}

/// Whether `u -> v` is the normal edge of an `invoke`: `u` ends in a call
/// whose two successors are `v` and a landing pad.
fn invoke_normal_edge(f: &Function, u: BlockId, v: BlockId) -> bool {
    let block = &f.blocks[u as usize];
    let ends_in_call = block.end > block.first
        && matches!(f.insts[(block.end - 1) as usize].op, crate::ir::Op::Call(_));
    match block.succs.as_slice() {
        [normal, unwind] => {
            ends_in_call
                && block.term == Term::Unsplittable
                && *normal == v
                && *unwind != v
                && f.blocks[*unwind as usize].landing_pad
                && !f.blocks[v as usize].pad
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::functions;
    use super::*;
    use crate::cfg::Loops;

    /// The entry and exit edges of the only loop of each function of `ir`.
    fn edges(ir: &str) -> Vec<Result<LoopEdges, String>> {
        functions(ir)
            .iter()
            .map(|f| {
                let cfg = Cfg::new(f);
                let loops = Loops::new(&cfg);
                loop_edges(f, &cfg, &loops.loops[0])
            })
            .collect()
    }

    #[test]
    fn markers_go_where_an_edge_has_room_else_on_a_split_edge() {
        let found = edges(
            "define void @f(i32 %n, i1 %c) {\nentry:\n  br i1 %c, label %loop, label %done\n\
             loop:\n  %i = phi i32 [ 0, %entry ], [ %next, %loop ]\n  %next = add i32 %i, 1\n  \
             %more = icmp slt i32 %next, %n\n  br i1 %more, label %loop, label %exit\n\
             exit:\n  br label %done\n\
             done:\n  ret void\n}\n\
             define void @g(i32 %n) {\nentry:\n  br label %loop\n\
             loop:\n  %i = phi i32 [ 0, %entry ], [ %next, %loop ]\n  %next = add i32 %i, 1\n  \
             %more = icmp slt i32 %next, %n\n  br i1 %more, label %loop, label %done\n\
             done:\n  %d = phi i32 [ %next, %loop ]\n  ret void\n}\n",
        );
        assert_eq!(
            found,
            [
                Ok(vec![
                    (0, 1, Placement::Split),
                    (1, 2, Placement::StartOfTarget)
                ]),
                Ok(vec![
                    (0, 1, Placement::EndOfSource),
                    (1, 2, Placement::StartOfTarget)
                ]),
            ]
        );
    }

    /// C++: an `invoke`'s normal edge into the loop is split like a `br`'s;
    /// its exception edge out of the loop gets the exit marker after the
    /// landing pad, which other blocks unwind to as well.
    #[test]
    fn invoke_edges_get_markers() {
        let found = edges(
            "declare i32 @__gxx_personality_v0(...)\ndeclare void @g()\n\
             define void @h(i32 %n) personality ptr @__gxx_personality_v0 {\n\
             entry:\n  invoke void @g() to label %loop unwind label %pad\n\
             loop:\n  %i = phi i32 [ 0, %entry ], [ %next, %cont ]\n  %next = add i32 %i, 1\n  \
             invoke void @g() to label %cont unwind label %pad\n\
             cont:\n  %more = icmp slt i32 %next, %n\n  br i1 %more, label %loop, label %done\n\
             pad:\n  %lp = landingpad { ptr, i32 } cleanup\n  ret void\n\
             done:\n  ret void\n}\n",
        );
        assert_eq!(
            found,
            [Ok(vec![
                (0, 1, Placement::Split),
                (1, 3, Placement::StartOfTarget),
                (2, 4, Placement::StartOfTarget)
            ])]
        );
    }

    #[test]
    fn an_edge_out_of_a_computed_goto_gets_no_markers() {
        let found = edges(
            "define void @k(ptr %a, i1 %c) {\nentry:\n  br i1 %c, label %loop, label %done\n\
             loop:\n  indirectbr ptr %a, [label %loop, label %done]\n\
             done:\n  ret void\n}\n",
        );
        assert!(found[0].as_ref().unwrap_err().contains("cannot be split"));
    }

    #[test]
    fn the_reason_says_what_the_wildcard_outcomes_do() {
        let here = Span {
            file: "app.c".to_owned(),
            line: 42,
            column: 3,
        };
        let (chosen, marker, reason) = decision(
            taint::Verdict::Contained {
                collected: vec!["`results`".to_owned()],
                slot_stores: Vec::new(),
            },
            &here,
        );
        assert_eq!(
            (chosen, marker),
            (LoopDecision::Abstract, LoopMarker::Abstract)
        );
        assert_eq!(
            reason,
            format!("loop at {here} abstracted: the sender only indexes `results`")
        );
        let why = "the received value decides the branch at app.c:50";
        let (chosen, marker, reason) = decision(taint::Verdict::Leaks(why.to_owned()), &here);
        assert_eq!(
            (chosen, marker),
            (LoopDecision::Explore, LoopMarker::Explore)
        );
        assert_eq!(reason, format!("loop at {here} not abstracted: {why}"));
    }

    #[test]
    fn a_call_is_followed_only_into_functions_with_wildcards() {
        let contains = [true, false, true];
        let summary: Summaries = HashMap::from([(0, Ok(()))]);
        assert_eq!(through(&summary, Some(0), &contains), Some(Ok(())));
        assert_eq!(through(&summary, Some(1), &contains), None);
        assert_eq!(through(&summary, None, &contains), None);
        // No summary yet: a callee in the same cycle of calls.
        assert!(through(&summary, Some(2), &contains)
            .unwrap()
            .unwrap_err()
            .contains("recursive"));
    }
}
