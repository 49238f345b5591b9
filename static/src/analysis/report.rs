//! Phase 12: the report and the plans. Everything the earlier phases
//! found becomes the [`StaticReport`] people and `OUT.mbh.json` read, and
//! the [`ModulePlan`]s `mbh-instrument` follows; loop, zone and site ids
//! are numbered here, from 1 in input order.

use mbh_trace::static_report::{
    BufferError, BufferRoom, CallInfo, FunctionInfo, LoopInfo, LoopMarker, Note, StaticReport,
    UnsupportedCall, WildcardSite, ZoneInfo, PCONTROL_ABSTRACT_ENTER, PCONTROL_ABSTRACT_EXIT,
    PCONTROL_LOOP_ENTER, PCONTROL_LOOP_EXIT,
};

use super::loops::{loop_end_line, loop_start, LoopFact};
use super::zones::ZoneFact;
use super::{EdgeMarkers, Facts, Marker, ModulePlan, Placement, Prog, ZoneStart};
use crate::buffers;
use crate::cfg::NaturalLoop;
use crate::ir::{BlockId, Callee, FunctionRefs, InstId, Op};
use crate::MpiCallSite;

/// The markers of one edge before they are ordered: `(edge, placement,
/// [(exit 0 / entry 1, depth key, marker)])`.
type EdgePlan = ((BlockId, BlockId), Placement, Vec<(u32, u32, Marker)>);

/// What phases 5b, 10 and 11 found, per function.
pub(super) struct Found<'a> {
    /// Its buffer arguments: `(site id, call, fact)`.
    pub buffers: &'a [Vec<(u32, InstId, buffers::Fact)>],
    /// Its loops' decisions.
    pub loops: &'a [Vec<LoopFact>],
    /// The zones it opens.
    pub zones: &'a [Vec<ZoneFact>],
    /// The completion-order decision of every any-completion site.
    pub orders: &'a std::collections::HashMap<u32, mbh_trace::static_report::CompletionOrder>,
}

/// Writes the report and the plans of each module (whose MPI call sites
/// are `module_sites`), function by function in input order.
pub(super) fn assemble<'ctx>(
    prog: &Prog<'_>,
    facts: &Facts,
    found: &Found<'_>,
    refs: &[FunctionRefs<'ctx>],
    module_sites: Vec<Vec<MpiCallSite<'ctx>>>,
) -> (StaticReport, Vec<ModulePlan<'ctx>>) {
    let mut out = Assembly {
        prog,
        facts,
        refs,
        loop_ids: loop_ids(found.loops),
        report: StaticReport::default(),
        plans: plans(module_sites),
        next_zone: 1,
    };
    for fi in 0..prog.fns.len() {
        out.function(fi);
        let edge_markers = out.loops(fi, &found.loops[fi]);
        out.place_markers(fi, edge_markers);
        out.sites(fi, found.orders);
        out.buffers(fi, &found.buffers[fi]);
        out.zones(fi, &found.zones[fi]);
    }
    (out.report, out.plans)
}

/// The report and the plans as they are being written.
struct Assembly<'a, 'ctx> {
    prog: &'a Prog<'a>,
    facts: &'a Facts,
    refs: &'a [FunctionRefs<'ctx>],
    /// Per function: the ids of its loops, in [`crate::cfg::Loops::loops`]
    /// order.
    loop_ids: Vec<Vec<u32>>,
    report: StaticReport,
    plans: Vec<ModulePlan<'ctx>>,
    /// The id the next zone gets.
    next_zone: u32,
}

/// Per function: the ids of its loops, numbered from 1 across functions.
fn loop_ids(loop_facts: &[Vec<LoopFact>]) -> Vec<Vec<u32>> {
    let mut loop_ids: Vec<Vec<u32>> = Vec::with_capacity(loop_facts.len());
    let mut next_loop = 1u32;
    for facts in loop_facts {
        loop_ids.push((next_loop..next_loop + facts.len() as u32).collect());
        next_loop += facts.len() as u32;
    }
    loop_ids
}

/// One empty plan per module, holding its sites, with site ids numbered
/// from 1 across modules.
fn plans(module_sites: Vec<Vec<MpiCallSite<'_>>>) -> Vec<ModulePlan<'_>> {
    let mut plans: Vec<ModulePlan<'_>> = module_sites
        .into_iter()
        .map(|sites| ModulePlan {
            sites,
            first_site_id: 0,
            edges: Vec::new(),
            zone_starts: Vec::new(),
        })
        .collect();
    let mut next_site = 1u32;
    for plan in &mut plans {
        plan.first_site_id = next_site;
        next_site += plan.sites.len() as u32;
    }
    plans
}

impl<'ctx> Assembly<'_, 'ctx> {
    /// Function `fi` itself, and a note for each of its irreducible
    /// regions.
    fn function(&mut self, fi: usize) {
        let (prog, facts, report) = (self.prog, self.facts, &mut self.report);
        let f = &prog.fns[fi];
        let local = &prog.locals[fi];
        let fspan = prog.spans.span(f, f.first_loc());
        report.functions.push(FunctionInfo {
            name: f.shown_name().into_owned(),
            symbol: f.name.clone(),
            file: fspan.file.clone(),
            line: fspan.line,
            mpi_calls: facts.counts[fi],
            loops: self.loop_ids[fi].clone(),
            always_collective: facts.always[fi],
            contains_wildcards: facts.contains[fi],
            calls_unknown: prog.calls.calls_unknown[fi],
            irreducible: !local.loops.irreducible.is_empty(),
        });
        for region in &local.loops.irreducible {
            let loc = region.iter().find_map(|b| f.block_loc(*b));
            report.notes.push(Note {
                span: prog.spans.span(f, loc),
                message: format!(
                    "control flow in `{}` is irreducible here (a cycle entered at more than one \
                     place): no loop is claimed for it, so its wildcard receives are always \
                     explored",
                    f.shown_name()
                ),
            });
        }
    }

    /// The loops of function `fi`, with a note for each loop with
    /// wildcard sites that calls through a pointer; returns the markers
    /// of its edges.
    fn loops(&mut self, fi: usize, loop_facts: &[LoopFact]) -> Vec<EdgePlan> {
        let (prog, report) = (self.prog, &mut self.report);
        let f = &prog.fns[fi];
        let local = &prog.locals[fi];
        let span = |loc| prog.spans.span(f, loc);
        let mut edge_markers: Vec<EdgePlan> = Vec::new();
        for fact in loop_facts {
            let l = &local.loops.loops[fact.index];
            let id = self.loop_ids[fi][fact.index];
            let end_line = loop_end_line(f, l);
            report.loops.push(LoopInfo {
                id,
                function: f.shown_name().into_owned(),
                span: span(loop_start(f, l)),
                end_line,
                depth: l.depth,
                parent: l.parent.map(|p| self.loop_ids[fi][p]),
                wildcard_sites: fact.direct.clone(),
                through_calls: fact.through_calls.clone(),
                decision: fact.decision,
                marker: fact.marker,
                reason: fact.reason.clone(),
            });
            let (enter, exit) = match fact.marker {
                LoopMarker::Abstract => (PCONTROL_ABSTRACT_ENTER, PCONTROL_ABSTRACT_EXIT),
                LoopMarker::Explore => (PCONTROL_LOOP_ENTER, PCONTROL_LOOP_EXIT),
                LoopMarker::None => continue,
            };
            add_markers(&mut edge_markers, l, id, (enter, exit), &fact.edges);
            if !fact.direct.is_empty() || !fact.through_calls.is_empty() {
                let has_indirect = l.blocks.iter().any(|b| {
                    let block = &f.blocks[*b as usize];
                    (block.first..block.end)
                        .any(|i| matches!(f.insts[i as usize].op, Op::Call(Callee::Indirect)))
                });
                if has_indirect {
                    report.notes.push(Note {
                        span: span(loop_start(f, l)),
                        message: "this loop calls through a function pointer: wildcard receives \
                                  reached that way are not considered in its abstraction choice"
                            .into(),
                    });
                }
            }
        }
        edge_markers
    }

    /// Puts the markers of function `fi`'s edges into its module's plan,
    /// each edge's in the order to execute them.
    fn place_markers(&mut self, fi: usize, edge_markers: Vec<EdgePlan>) {
        let plan = &mut self.plans[self.prog.fns[fi].module];
        for ((u, v), placement, list) in edge_markers {
            plan.edges.push(EdgeMarkers {
                from: self.refs[fi].blocks[u as usize],
                to: self.refs[fi].blocks[v as usize],
                placement,
                markers: ordered(list),
            });
        }
    }

    /// The MPI call sites of function `fi`: every call's class, the
    /// wildcard sites, and the calls the runtime does not support.
    fn sites(
        &mut self,
        fi: usize,
        orders: &std::collections::HashMap<u32, mbh_trace::static_report::CompletionOrder>,
    ) {
        let (prog, report) = (self.prog, &mut self.report);
        let f = &prog.fns[fi];
        let local = &prog.locals[fi];
        for s in &self.facts.sites[fi] {
            let sspan = prog.spans.span(f, f.insts[s.inst as usize].loc);
            report.calls.push(CallInfo {
                site: s.id,
                class: s.func.class,
                zone_boundary: s.func.zone_boundary,
            });
            if let Some((kind, source, tag)) = &s.wildcard {
                let block = f.insts[s.inst as usize].block as usize;
                report.wildcards.push(WildcardSite {
                    site: s.id,
                    call: s.name.clone(),
                    function: f.shown_name().into_owned(),
                    span: sspan.clone(),
                    source: source.clone(),
                    tag: tag.clone(),
                    kind: *kind,
                    in_loop: local.loops.innermost[block].map(|l| self.loop_ids[fi][l]),
                    completion_order: orders.get(&s.id).cloned(),
                });
            }
            let unsupported = mbh_trace::support::unsupported_reason(&s.name)
                .filter(|_| !in_mpi_cxx_bindings(&sspan.file));
            if let Some(reason) = unsupported {
                report.unsupported.push(UnsupportedCall {
                    site: s.id,
                    call: s.name.clone(),
                    function: f.shown_name().into_owned(),
                    span: sspan,
                    reason,
                });
            }
        }
    }

    /// The buffer arguments of function `fi`'s sites: the room each has
    /// (for the runtime's access checks) and the errors found.
    fn buffers(&mut self, fi: usize, buffer_facts: &[(u32, InstId, buffers::Fact)]) {
        let (prog, report) = (self.prog, &mut self.report);
        let f = &prog.fns[fi];
        let span = |loc| prog.spans.span(f, loc);
        for (site, inst, fact) in buffer_facts {
            let b = match fact {
                buffers::Fact::Error(b) => b,
                buffers::Fact::Room(room) => {
                    report.buffer_rooms.push(BufferRoom {
                        site: *site,
                        access: room.access,
                        bytes: room.bytes,
                        object: room.object.clone(),
                        declared: room.declared.map(|d| span(Some(d))),
                    });
                    continue;
                }
            };
            report.buffer_errors.push(BufferError {
                site: *site,
                call: f.callee(*inst).unwrap_or_default().to_owned(),
                function: f.shown_name().into_owned(),
                span: span(f.insts[*inst as usize].loc),
                kind: b.kind,
                argument: b.argument.to_owned(),
                object: b.object.clone(),
                declared: b.declared.map(|d| span(Some(d))),
                datatype: b.datatype.clone(),
                message: b.message.clone(),
            });
        }
    }

    /// The zones function `fi` opens, numbered in order, and where their
    /// starts go in its module's plan.
    fn zones(&mut self, fi: usize, zone_facts: &[ZoneFact]) {
        let f = &self.prog.fns[fi];
        for z in zone_facts {
            let zspan = self.prog.spans.span(f, f.insts[z.inst as usize].loc);
            self.report.zones.push(ZoneInfo {
                id: self.next_zone,
                name: zspan.to_string(),
                function: f.shown_name().into_owned(),
                opened_by: z.opened_by.clone(),
                span: zspan,
                bound: None,
                wildcard_sites: z.wildcards.clone(),
            });
            self.plans[f.module].zone_starts.push(ZoneStart {
                zone: self.next_zone,
                after: self.refs[fi].insts[z.inst as usize],
            });
            self.next_zone += 1;
        }
    }
}

/// Adds the markers of loop `l` (id `id`) to its entry and exit `edges`
/// in `edge_markers`: `enter` on the edges into its header from outside,
/// `exit` on the others, each with the key that orders it among the
/// markers of the same edge.
fn add_markers(
    edge_markers: &mut Vec<EdgePlan>,
    l: &NaturalLoop,
    id: u32,
    (enter, exit): (i32, i32),
    edges: &[(BlockId, BlockId, Placement)],
) {
    for &(u, v, placement) in edges {
        let entering = v == l.header && !l.body[u as usize];
        let marker = Marker {
            level: if entering { enter } else { exit },
            id,
        };
        // Sort key: exits first, innermost first; then entries,
        // outermost first.
        let key = if entering {
            (1, l.depth)
        } else {
            (0, u32::MAX - l.depth)
        };
        match edge_markers.iter_mut().find(|(e, ..)| *e == (u, v)) {
            Some((_, _, list)) => list.push((key.0, key.1, marker)),
            None => edge_markers.push(((u, v), placement, vec![(key.0, key.1, marker)])),
        }
    }
}

/// The markers of one edge in the order to execute them: by their keys
/// (exits of inner loops before outer ones, exits before entries).
fn ordered(mut list: Vec<(u32, u32, Marker)>) -> Vec<Marker> {
    list.sort_by_key(|(a, b, _)| (*a, *b));
    list.into_iter().map(|(_, _, m)| m).collect()
}

/// Whether `file` is one of the MPI library's own C++ binding headers
/// (Open MPI's `ompi/mpi/cxx/*.h`, which its `mpi.h` includes in every C++
/// compile; MPICH's `mpicxx.h`). Their inline methods call one-sided and
/// dynamic-process functions on behalf of programs that use the bindings:
/// a call there is the library's, not the program's, so `build` does not
/// warn about it (20 warnings on any C++ program under Open MPI). A
/// program that uses such a method still has its call recorded by the
/// runtime, and `verify` still names it.
fn in_mpi_cxx_bindings(file: &str) -> bool {
    file.contains("/ompi/mpi/cxx/") || file.ends_with("/mpicxx.h")
}

#[cfg(test)]
mod tests {
    use super::in_mpi_cxx_bindings;

    #[test]
    fn the_mpi_librarys_cxx_binding_headers_are_told_apart() {
        assert!(in_mpi_cxx_bindings(
            "/usr/lib/x86_64-linux-gnu/openmpi/include/openmpi/ompi/mpi/cxx/win_inln.h"
        ));
        assert!(in_mpi_cxx_bindings("/usr/include/mpich/mpicxx.h"));
        assert!(!in_mpi_cxx_bindings("src/halo.cpp"));
        assert!(!in_mpi_cxx_bindings(
            "/usr/include/x86_64-linux-gnu/mpich/mpi.h"
        ));
    }

    use super::*;

    /// A loop of `depth` whose header is block `header` and whose body is
    /// `blocks`, in a function of 6 blocks.
    fn natural_loop(header: BlockId, blocks: &[BlockId], depth: u32) -> NaturalLoop {
        let mut body = vec![false; 6];
        for b in blocks {
            body[*b as usize] = true;
        }
        NaturalLoop {
            header,
            latches: vec![*blocks.last().unwrap()],
            body,
            blocks: blocks.to_vec(),
            parent: None,
            depth,
        }
    }

    #[test]
    fn markers_of_one_edge_run_inner_exits_first_then_outer_entries() {
        // Blocks 1-4 are the outer loop, 2-3 the inner one; both are left
        // on the edge 3 -> 5, and both entered on 0 -> 1 -> 2.
        let outer = natural_loop(1, &[1, 2, 3, 4], 1);
        let inner = natural_loop(2, &[2, 3], 2);
        let mut edges = Vec::new();
        let split = Placement::Split;
        add_markers(
            &mut edges,
            &outer,
            1,
            (10, 11),
            &[(0, 1, split), (3, 5, split)],
        );
        add_markers(
            &mut edges,
            &inner,
            2,
            (20, 21),
            &[(1, 2, split), (3, 5, split)],
        );
        add_markers(&mut edges, &inner, 3, (30, 31), &[(1, 2, split)]);
        let shown: Vec<_> = edges
            .into_iter()
            .map(|(e, _, list)| {
                let markers: Vec<(i32, u32)> =
                    ordered(list).iter().map(|m| (m.level, m.id)).collect();
                (e, markers)
            })
            .collect();
        assert_eq!(
            shown,
            [
                ((0, 1), vec![(10, 1)]),
                ((3, 5), vec![(21, 2), (11, 1)]),
                ((1, 2), vec![(20, 2), (30, 3)]),
            ]
        );
    }

    #[test]
    fn loops_are_numbered_from_1_across_functions() {
        let fact = |index| LoopFact {
            index,
            direct: Vec::new(),
            through_calls: Vec::new(),
            decision: mbh_trace::static_report::LoopDecision::NoWildcards,
            marker: LoopMarker::None,
            reason: String::new(),
            edges: Vec::new(),
        };
        let ids = loop_ids(&[vec![fact(0), fact(1)], Vec::new(), vec![fact(0)]]);
        assert_eq!(ids, [vec![1, 2], vec![], vec![3]]);
    }
}
