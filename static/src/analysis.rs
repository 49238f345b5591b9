//! The whole-program analysis: [`analyze`].

use std::collections::{BTreeSet, HashMap, HashSet};
use std::path::{Path, PathBuf};

use inkwell::basic_block::BasicBlock;
use inkwell::values::InstructionValue;
use mbh_trace::static_report::{
    BufferError, BufferRoom, CallInfo, FunctionInfo, LoopDecision, LoopInfo, LoopMarker, Note,
    Span, StaticReport, UnsupportedCall, WildcardKind, WildcardSite, ZoneInfo,
    PCONTROL_ABSTRACT_ENTER, PCONTROL_ABSTRACT_EXIT, PCONTROL_LOOP_ENTER, PCONTROL_LOOP_EXIT,
};
use petgraph::graph::{DiGraph, NodeIndex};
use rayon::prelude::*;

use crate::buffers;
use crate::cfg::{Cfg, Loops};
use crate::consts::{self, LocalVars, MpiConstants, Resolved};
use crate::divergence;
use crate::ir::{self, BlockId, Callee, Files, Function, FunctionRefs, InstId, Loc, Op, Term, Val};
use crate::mpi::{self, Role};
use crate::taint;
use crate::{mpi_call_sites, Module, MpiCallSite, SourceLocation};

/// One module to analyse, with the source it came from.
#[derive(Debug, Clone, Copy)]
pub struct AnalysisInput<'a, 'ctx> {
    /// The module.
    pub module: &'a Module<'ctx>,
    /// The source file as given to `build`/`analyze`: the file named by
    /// locations when the IR records none.
    pub source: &'a Path,
}

/// An `MPI_Pcontrol` call to insert: `MPI_Pcontrol(level, id)`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Marker {
    /// 7301, 7302, 7304 or 7305 (see [`mbh_trace::static_report`]).
    pub level: i32,
    /// The loop id.
    pub id: u32,
}

/// Where the markers of one control-flow edge go.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Placement {
    /// Before the terminator of the edge's source, which has no other
    /// successor.
    EndOfSource,
    /// At the first insertion point of the edge's target, which has no
    /// other predecessor.
    StartOfTarget,
    /// In a new block on the edge (a critical edge): the source's
    /// terminator (a `br` or `switch`) is redirected to it and the
    /// target's `phi`s updated.
    Split,
}

/// The markers of one control-flow edge, in the order to execute them
/// (exits of inner loops before outer ones, exits before entries).
#[derive(Debug, Clone)]
pub struct EdgeMarkers<'ctx> {
    /// The edge's source block.
    pub from: BasicBlock<'ctx>,
    /// The edge's target block.
    pub to: BasicBlock<'ctx>,
    /// Where to put them.
    pub placement: Placement,
    /// What to call.
    pub markers: Vec<Marker>,
}

/// A zone start: after `after`, a zone boundary call.
#[derive(Debug, Clone)]
pub struct ZoneStart<'ctx> {
    /// The zone id ([`ZoneInfo::id`]).
    pub zone: u32,
    /// The call that opens it.
    pub after: InstructionValue<'ctx>,
}

/// What to do to one module.
#[derive(Debug, Clone)]
pub struct ModulePlan<'ctx> {
    /// Its MPI call sites, as [`mpi_call_sites`] lists them.
    pub sites: Vec<MpiCallSite<'ctx>>,
    /// The site id of its first site; the others follow in order.
    pub first_site_id: u32,
    /// Loop markers, by edge.
    pub edges: Vec<EdgeMarkers<'ctx>>,
    /// Every zone start in the module (instrumented only when the zone has
    /// a bound).
    pub zone_starts: Vec<ZoneStart<'ctx>>,
}

/// The result of [`analyze`].
#[derive(Debug, Clone)]
pub struct Analysis<'ctx> {
    /// What was found, for people and for `OUT.mbh.json`.
    pub report: StaticReport,
    /// Per input module, in order: what `mbh-instrument` inserts.
    pub modules: Vec<ModulePlan<'ctx>>,
}

/// The markers of one edge before they are ordered: `(edge, placement,
/// [(exit 0 / entry 1, depth key, marker)])`.
type EdgePlan = ((BlockId, BlockId), Placement, Vec<(u32, u32, Marker)>);

/// Per function: everything computed about it on its own.
struct Local {
    vars: LocalVars,
    cfg: Cfg,
    loops: Loops,
}

/// One MPI call site.
#[derive(Debug, Clone)]
struct SiteFact {
    id: u32,
    inst: InstId,
    name: String,
    func: mpi::MpiFunction,
    wildcard: Option<(WildcardKind, String, String)>,
    /// A collective on `MPI_COMM_SELF`: its only member cannot disagree
    /// with itself about it.
    on_comm_self: bool,
}

struct Prog<'p> {
    fns: &'p [Function],
    locals: &'p [Local],
    const_globals: &'p [HashMap<String, Val>],
    callers: &'p HashMap<(usize, String), Vec<(usize, InstId)>>,
}

impl consts::Program for Prog<'_> {
    fn const_global(&self, module: usize, name: &str) -> Option<&Val> {
        self.const_globals.get(module)?.get(name)
    }

    fn callers(&self, module: usize, name: &str) -> Option<&[(usize, InstId)]> {
        self.callers
            .get(&(module, name.to_owned()))
            .map(Vec::as_slice)
    }

    fn function(&self, index: usize) -> (&Function, &LocalVars) {
        (&self.fns[index], &self.locals[index].vars)
    }
}

/// Analyses a program made of `inputs` (one module per source, in the
/// order given): loops, MPI sites, wildcard sites, zones and the loop
/// abstraction choice. Site ids are numbered from 1 in input order, as
/// `mbh-instrument` numbers them; so are loop and zone ids.
///
/// `base_dir` is the user's working directory: file names in the report
/// are relative to it when below it.
pub fn analyze<'ctx>(
    inputs: &[AnalysisInput<'_, 'ctx>],
    consts: &MpiConstants,
    base_dir: &Path,
) -> Analysis<'ctx> {
    // 1. Read the IR, on this thread.
    let mut files = Files::default();
    let mut fns: Vec<Function> = Vec::new();
    let mut refs: Vec<FunctionRefs<'ctx>> = Vec::new();
    let mut const_globals = Vec::new();
    let mut referenced: Vec<HashSet<String>> = Vec::new();
    let mut module_sites = Vec::new();
    let mut globals = Vec::new();
    let mut strings = Vec::new();
    for (m, input) in inputs.iter().enumerate() {
        let read = ir::read_module(input.module, m, &mut files);
        fns.extend(read.functions);
        refs.extend(read.refs);
        const_globals.push(read.const_globals);
        referenced.push(read.referenced);
        globals.push(read.globals);
        strings.push(read.strings);
        module_sites.push(mpi_call_sites(input.module));
    }
    let sources: Vec<PathBuf> = inputs
        .iter()
        .map(|i| SourceLocation::display_path(i.source, base_dir))
        .collect();
    let file_names: Vec<String> = files
        .paths
        .iter()
        .map(|p| {
            SourceLocation::display_path(p, base_dir)
                .to_string_lossy()
                .into_owned()
        })
        .collect();
    let span = |f: &Function, loc: Option<Loc>| -> Span {
        match loc {
            Some(loc) if !file_names[loc.file as usize].is_empty() => Span {
                file: file_names[loc.file as usize].clone(),
                line: loc.line,
                column: loc.column,
            },
            Some(loc) => Span {
                file: sources[f.module].to_string_lossy().into_owned(),
                line: loc.line,
                column: loc.column,
            },
            None => Span {
                file: sources[f.module].to_string_lossy().into_owned(),
                line: 0,
                column: 0,
            },
        }
    };
    let at = |f: &Function, i: InstId| -> String {
        let s = span(f, f.insts[i as usize].loc);
        if s.line == 0 {
            format!("a line of `{}` without debug information", f.shown_name())
        } else {
            s.to_string()
        }
    };

    // 2. Names.
    let mut internal: HashMap<(usize, &str), usize> = HashMap::new();
    let mut external: HashMap<&str, usize> = HashMap::new();
    for (i, f) in fns.iter().enumerate() {
        if f.internal {
            internal.insert((f.module, f.name.as_str()), i);
        } else {
            external.entry(f.name.as_str()).or_insert(i);
        }
    }
    let resolve_fn = |module: usize, name: &str| -> Option<usize> {
        internal
            .get(&(module, name))
            .or_else(|| external.get(name))
            .copied()
    };

    // 3. Per function, in parallel: CFG, dominators, loops, variables.
    let locals: Vec<Local> = fns
        .par_iter()
        .map(|f| {
            let cfg = Cfg::new(f);
            let loops = Loops::new(&cfg);
            Local {
                vars: LocalVars::of(f),
                cfg,
                loops,
            }
        })
        .collect();

    // 4. Direct calls; callers of internal functions whose address is not
    // taken.
    let mut calls: Vec<Vec<(InstId, usize)>> = vec![Vec::new(); fns.len()];
    let mut address_taken: HashSet<usize> = HashSet::new();
    let mut calls_unknown = vec![false; fns.len()];
    for (i, f) in fns.iter().enumerate() {
        for (k, inst) in f.insts.iter().enumerate() {
            if let Op::Call(callee) = &inst.op {
                match callee {
                    Callee::Named(name) => {
                        if let Some(g) = resolve_fn(f.module, name) {
                            calls[i].push((k as InstId, g));
                        }
                    }
                    Callee::Indirect => calls_unknown[i] = true,
                    Callee::Asm => {}
                }
            }
            for v in &inst.ops {
                if let Val::Global(name) = v {
                    if let Some(g) = resolve_fn(f.module, name) {
                        address_taken.insert(g);
                    }
                }
            }
        }
    }
    for (m, names) in referenced.iter().enumerate() {
        for name in names {
            if let Some(g) = resolve_fn(m, name) {
                address_taken.insert(g);
            }
        }
    }
    let mut callers: HashMap<(usize, String), Vec<(usize, InstId)>> = HashMap::new();
    for (i, f) in fns.iter().enumerate() {
        if f.internal && !address_taken.contains(&i) {
            callers.entry((f.module, f.name.clone())).or_default();
        }
    }
    for (i, list) in calls.iter().enumerate() {
        for &(k, g) in list {
            if let Some(slot) = callers.get_mut(&(fns[g].module, fns[g].name.clone())) {
                if fns[g].internal {
                    slot.push((i, k));
                }
            }
        }
    }
    let prog = Prog {
        fns: &fns,
        locals: &locals,
        const_globals: &const_globals,
        callers: &callers,
    };

    // 5. MPI sites, numbered in module order, and wildcard sites.
    let counts: Vec<u32> = fns
        .iter()
        .map(|f| {
            f.insts
                .iter()
                .filter(|i| matches!(&i.op, Op::Call(Callee::Named(n)) if mpi::is_mpi(n)))
                .count() as u32
        })
        .collect();
    let mut first_ids = Vec::with_capacity(fns.len());
    let mut next = 1u32;
    for c in &counts {
        first_ids.push(next);
        next += c;
    }
    let sites: Vec<Vec<SiteFact>> = fns
        .par_iter()
        .enumerate()
        .map(|(fi, f)| {
            let vars = &locals[fi].vars;
            let mut id = first_ids[fi];
            let mut out = Vec::new();
            for (k, inst) in f.insts.iter().enumerate() {
                let Op::Call(Callee::Named(name)) = &inst.op else {
                    continue;
                };
                let Some(func) = mpi::lookup(name) else {
                    continue;
                };
                let wildcard = wildcard(&prog, f, vars, consts, name, &func, &inst.ops);
                let on_comm_self = func
                    .communicator_arg()
                    .and_then(|k| inst.ops.get(k))
                    .is_some_and(|comm| {
                        consts::resolve(&prog, f, vars, comm, 0).is(&consts.comm_self)
                    });
                out.push(SiteFact {
                    id,
                    inst: k as InstId,
                    name: name.clone(),
                    func,
                    wildcard,
                    on_comm_self,
                });
                id += 1;
            }
            out
        })
        .collect();

    // 5b. Buffer arguments against their datatype and object.
    let buffer_facts: Vec<Vec<(u32, InstId, buffers::Fact)>> = fns
        .par_iter()
        .enumerate()
        .map(|(fi, f)| {
            let vars = &locals[fi].vars;
            sites[fi]
                .iter()
                .flat_map(|s| {
                    let call = (s.inst, s.name.as_str(), &s.func);
                    buffers::check(&prog, f, vars, &globals[f.module], consts, call)
                        .into_iter()
                        .map(|fact| (s.id, s.inst, fact))
                })
                .collect()
        })
        .collect();

    // 6. The call graph.
    let mut graph = DiGraph::<usize, ()>::with_capacity(fns.len(), fns.len() * 2);
    for i in 0..fns.len() {
        graph.add_node(i);
    }
    for (i, list) in calls.iter().enumerate() {
        let mut seen = HashSet::new();
        for &(_, g) in list {
            if seen.insert(g) {
                graph.add_edge(NodeIndex::new(i), NodeIndex::new(g), ());
            }
        }
    }

    // 7. Functions containing wildcard sites, directly or through calls.
    let mut contains = vec![false; fns.len()];
    let mut stack: Vec<usize> = (0..fns.len())
        .filter(|&i| sites[i].iter().any(|s| s.wildcard.is_some()))
        .collect();
    while let Some(g) = stack.pop() {
        if contains[g] {
            continue;
        }
        contains[g] = true;
        for caller in graph.neighbors_directed(NodeIndex::new(g), petgraph::Direction::Incoming) {
            if !contains[caller.index()] {
                stack.push(caller.index());
            }
        }
    }

    // 8. Functions that always call a collective, to a fixpoint.
    let mut always = vec![false; fns.len()];
    loop {
        let next: Vec<bool> = fns
            .par_iter()
            .enumerate()
            .map(|(i, f)| {
                let cut = boundary_blocks(f, &sites[i], &calls[i], &always);
                always_collective(f, &locals[i].cfg, &cut)
            })
            .collect();
        if next == always {
            break;
        }
        always = next;
    }

    // 9. Whether the outcomes of the wildcard sites of each function stay
    // in it, callees first.
    let mut summary: HashMap<usize, Result<(), String>> = HashMap::new();
    for scc in petgraph::algo::tarjan_scc(&graph) {
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
            let through = |name: &str| through(&summary, resolve_fn(f.module, name), &contains);
            let at = |i: InstId| at(f, i);
            let verdict = taint::run(&taint::Input {
                f,
                vars: &locals[g].vars,
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

    // 10. Loop decisions, per function in parallel.
    struct LoopFact {
        index: usize,
        direct: Vec<u32>,
        through_calls: Vec<String>,
        decision: LoopDecision,
        marker: LoopMarker,
        reason: String,
        edges: Vec<(BlockId, BlockId, Placement)>,
    }
    let loop_facts: Vec<Vec<LoopFact>> = fns
        .par_iter()
        .enumerate()
        .map(|(fi, f)| {
            let local = &locals[fi];
            local
                .loops
                .loops
                .iter()
                .enumerate()
                .map(|(li, l)| {
                    let here = span(f, loop_start(f, l));
                    let direct: Vec<&SiteFact> = sites[fi]
                        .iter()
                        .filter(|s| {
                            s.wildcard.is_some() && l.body[f.insts[s.inst as usize].block as usize]
                        })
                        .collect();
                    let mut through_calls: Vec<String> = calls[fi]
                        .iter()
                        .filter(|(k, g)| {
                            contains[*g] && l.body[f.insts[*k as usize].block as usize]
                        })
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
                    let through =
                        |name: &str| through(&summary, resolve_fn(f.module, name), &contains);
                    let at = |i: InstId| at(f, i);
                    let verdict = taint::run(&taint::Input {
                        f,
                        vars: &local.vars,
                        consts,
                        region: &l.body,
                        seeds: &seeds,
                        through: &through,
                        at: &at,
                    });
                    (fact.decision, fact.marker, fact.reason) = match verdict {
                        taint::Verdict::Contained { collected } => {
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
                    };
                    match loop_edges(f, &local.cfg, l) {
                        Ok(edges) => fact.edges = edges,
                        Err(why) => {
                            fact.marker = LoopMarker::None;
                            fact.reason
                                .push_str(&format!("; no markers inserted: {why}"));
                        }
                    }
                    fact
                })
                .collect()
        })
        .collect();

    // 11. Zones, per function in parallel. A zone's wildcard sites include
    // those of the functions called in it (all of theirs).
    let closure: Vec<Vec<u32>> = (0..fns.len())
        .into_par_iter()
        .map(|g| {
            if !contains[g] {
                return Vec::new();
            }
            let mut ids = BTreeSet::new();
            let mut seen = HashSet::new();
            let mut stack = vec![g];
            while let Some(h) = stack.pop() {
                if !seen.insert(h) {
                    continue;
                }
                ids.extend(
                    sites[h]
                        .iter()
                        .filter(|s| s.wildcard.is_some())
                        .map(|s| s.id),
                );
                stack.extend(calls[h].iter().map(|(_, c)| *c).filter(|c| contains[*c]));
            }
            ids.into_iter().collect()
        })
        .collect();
    struct ZoneFact {
        inst: InstId,
        opened_by: String,
        wildcards: Vec<u32>,
    }
    let zone_facts: Vec<Vec<ZoneFact>> = fns
        .par_iter()
        .enumerate()
        .map(|(fi, f)| {
            let boundaries = boundary_insts(f, &sites[fi], &calls[fi], &always);
            let mut wildcard_at: HashMap<InstId, Vec<u32>> = sites[fi]
                .iter()
                .filter(|s| s.wildcard.is_some())
                .map(|s| (s.inst, vec![s.id]))
                .collect();
            for &(k, g) in &calls[fi] {
                if contains[g] {
                    wildcard_at.entry(k).or_default().extend(&closure[g]);
                }
            }
            // MPI_Finalize ends the last zone but opens none: nothing may
            // communicate (or call MPI_Pcontrol) after it.
            boundaries
                .iter()
                .filter(|(_, name)| mpi::base_name(name) != Some("MPI_Finalize"))
                .map(|(&inst, opened_by)| ZoneFact {
                    inst,
                    // A user function that always calls a collective opens
                    // zones too: its name is shown like any other.
                    opened_by: mbh_trace::demangle(opened_by).into_owned(),
                    wildcards: zone_wildcards(f, &locals[fi].cfg, inst, &boundaries, &wildcard_at),
                })
                .collect()
        })
        .collect();

    // 12. The report, and the plans.
    let mut report = StaticReport::default();
    let mut loop_ids: Vec<Vec<u32>> = Vec::with_capacity(fns.len());
    let mut next_loop = 1u32;
    for facts in &loop_facts {
        loop_ids.push((next_loop..next_loop + facts.len() as u32).collect());
        next_loop += facts.len() as u32;
    }
    let mut plans: Vec<ModulePlan<'ctx>> = module_sites
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
    let mut next_zone = 1u32;
    for (fi, f) in fns.iter().enumerate() {
        let local = &locals[fi];
        let fspan = span(f, f.first_loc());
        report.functions.push(FunctionInfo {
            name: f.shown_name().into_owned(),
            symbol: f.name.clone(),
            file: fspan.file.clone(),
            line: fspan.line,
            mpi_calls: counts[fi],
            loops: loop_ids[fi].clone(),
            always_collective: always[fi],
            contains_wildcards: contains[fi],
            calls_unknown: calls_unknown[fi],
            irreducible: !local.loops.irreducible.is_empty(),
        });
        for region in &local.loops.irreducible {
            let loc = region.iter().find_map(|b| f.block_loc(*b));
            report.notes.push(Note {
                span: span(f, loc),
                message: format!(
                    "control flow in `{}` is irreducible here (a cycle entered at more than one \
                     place): no loop is claimed for it, so its wildcard receives are always \
                     explored",
                    f.shown_name()
                ),
            });
        }
        // Loops.
        let mut edge_markers: Vec<EdgePlan> = Vec::new();
        for fact in &loop_facts[fi] {
            let l = &local.loops.loops[fact.index];
            let id = loop_ids[fi][fact.index];
            let end_line = loop_end_line(f, l);
            report.loops.push(LoopInfo {
                id,
                function: f.shown_name().into_owned(),
                span: span(f, loop_start(f, l)),
                end_line,
                depth: l.depth,
                parent: l.parent.map(|p| loop_ids[fi][p]),
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
            for &(u, v, placement) in &fact.edges {
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
            if !fact.direct.is_empty() || !fact.through_calls.is_empty() {
                let has_indirect = l.blocks.iter().any(|b| {
                    let block = &f.blocks[*b as usize];
                    (block.first..block.end)
                        .any(|i| matches!(f.insts[i as usize].op, Op::Call(Callee::Indirect)))
                });
                if has_indirect {
                    report.notes.push(Note {
                        span: span(f, loop_start(f, l)),
                        message: "this loop calls through a function pointer: wildcard receives \
                                  reached that way are not considered in its abstraction choice"
                            .into(),
                    });
                }
            }
        }
        let plan = &mut plans[f.module];
        for ((u, v), placement, mut list) in edge_markers {
            list.sort_by_key(|(a, b, _)| (*a, *b));
            plan.edges.push(EdgeMarkers {
                from: refs[fi].blocks[u as usize],
                to: refs[fi].blocks[v as usize],
                placement,
                markers: list.into_iter().map(|(_, _, m)| m).collect(),
            });
        }
        // Sites.
        for s in &sites[fi] {
            let sspan = span(f, f.insts[s.inst as usize].loc);
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
                    in_loop: local.loops.innermost[block].map(|l| loop_ids[fi][l]),
                });
            }
            if let Some(reason) = mbh_trace::support::unsupported_reason(&s.name) {
                report.unsupported.push(UnsupportedCall {
                    site: s.id,
                    call: s.name.clone(),
                    function: f.shown_name().into_owned(),
                    span: sspan,
                    reason: reason.to_owned(),
                });
            }
        }
        for (site, inst, fact) in &buffer_facts[fi] {
            let b = match fact {
                buffers::Fact::Error(b) => b,
                buffers::Fact::Room(room) => {
                    report.buffer_rooms.push(BufferRoom {
                        site: *site,
                        access: room.access,
                        bytes: room.bytes,
                        object: room.object.clone(),
                        declared: room.declared.map(|d| span(f, Some(d))),
                    });
                    continue;
                }
            };
            report.buffer_errors.push(BufferError {
                site: *site,
                call: f.callee(*inst).unwrap_or_default().to_owned(),
                function: f.shown_name().into_owned(),
                span: span(f, f.insts[*inst as usize].loc),
                kind: b.kind,
                argument: b.argument.to_owned(),
                object: b.object.clone(),
                declared: b.declared.map(|d| span(f, Some(d))),
                datatype: b.datatype.clone(),
                message: b.message.clone(),
            });
        }
        // Zones.
        for z in &zone_facts[fi] {
            let zspan = span(f, f.insts[z.inst as usize].loc);
            report.zones.push(ZoneInfo {
                id: next_zone,
                name: zspan.to_string(),
                function: f.shown_name().into_owned(),
                opened_by: z.opened_by.clone(),
                span: zspan,
                bound: None,
                wildcard_sites: z.wildcards.clone(),
            });
            plans[f.module].zone_starts.push(ZoneStart {
                zone: next_zone,
                after: refs[fi].insts[z.inst as usize],
            });
            next_zone += 1;
        }
    }

    // 13. Collectives ranks may disagree on, and branches on the program's
    // input that decide MPI calls (issue 19).
    let found = divergence::find(
        &divergence::Program {
            fns: &fns,
            vars: locals.iter().map(|l| &l.vars).collect(),
            cfgs: locals.iter().map(|l| &l.cfg).collect(),
            sites: sites
                .iter()
                .map(|list| list.iter().map(|s| (s.id, s.inst)).collect())
                .collect(),
            calls: &calls,
            address_taken: &address_taken,
            strings: &strings,
            single_member: sites
                .iter()
                .flatten()
                .filter(|s| s.on_comm_self)
                .map(|s| s.id)
                .collect(),
        },
        &span,
    );
    report.divergent_collectives = found.collectives;
    report.input_branches = found.input_branches;
    Analysis {
        report,
        modules: plans,
    }
}

/// Where loop `l` starts in the source: the start its latches'
/// `!llvm.loop` metadata records (the `for`/`while`/`do` keyword), else
/// the header's first location.
fn loop_start(f: &Function, l: &crate::cfg::NaturalLoop) -> Option<Loc> {
    l.latches
        .iter()
        .filter_map(|b| f.blocks[*b as usize].loop_loc.map(|(start, _)| start))
        .min_by_key(|loc| (loc.line, loc.column))
        .or_else(|| f.block_loc(l.header))
}

/// The last line of loop `l`: its `!llvm.loop` end, or the last line any
/// body instruction is attributed to.
fn loop_end_line(f: &Function, l: &crate::cfg::NaturalLoop) -> u32 {
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

/// For a call to function `g`: `Some` when `g` contains wildcard sites,
/// with whether their outcomes stay in it.
fn through(
    summary: &HashMap<usize, Result<(), String>>,
    g: Option<usize>,
    contains: &[bool],
) -> Option<Result<(), String>> {
    let g = g?;
    if !contains[g] {
        return None;
    }
    Some(summary.get(&g).cloned().unwrap_or_else(|| {
        Err("a function it calls contains wildcard receives and is recursive".into())
    }))
}

/// Whether call `name(args)` is a wildcard site, and how its source and
/// tag read.
fn wildcard(
    prog: &Prog<'_>,
    f: &Function,
    vars: &LocalVars,
    consts: &MpiConstants,
    name: &str,
    func: &mpi::MpiFunction,
    args: &[Val],
) -> Option<(WildcardKind, String, String)> {
    if mpi::is_any_completion(name) {
        return Some((WildcardKind::AnyCompletion, String::new(), String::new()));
    }
    let source = func.arg(Role::Source)?;
    let resolve = |k: Option<usize>| -> Resolved {
        match k.and_then(|k| args.get(k)) {
            Some(v) => consts::resolve(prog, f, vars, v, 0),
            None => Resolved::Unknown,
        }
    };
    let src = resolve(Some(source));
    let tag = resolve(func.arg(Role::RecvTag));
    let src_text = src.describe(|c| consts.describe_source(c));
    let tag_text = tag.describe(|c| consts.describe_tag(c));
    let kind = if src.is(&consts.any_source) {
        WildcardKind::AnySource
    } else if src.may_be(&consts.any_source) || tag.may_be(&consts.any_tag) {
        if tag.is(&consts.any_tag) && !src.may_be(&consts.any_source) {
            WildcardKind::AnyTag
        } else {
            WildcardKind::MaybeWildcard
        }
    } else {
        return None;
    };
    Some((kind, src_text, tag_text))
}

/// The zone boundaries of `f`: MPI boundary calls and calls to functions
/// that always call a collective, with the name of what is called.
fn boundary_insts(
    f: &Function,
    sites: &[SiteFact],
    calls: &[(InstId, usize)],
    always: &[bool],
) -> std::collections::BTreeMap<InstId, String> {
    let mut out = std::collections::BTreeMap::new();
    for s in sites {
        if s.func.zone_boundary {
            out.insert(s.inst, s.name.clone());
        }
    }
    for &(k, g) in calls {
        if always[g] {
            if let Some(name) = f.callee(k) {
                out.insert(k, name.to_owned());
            }
        }
    }
    out
}

/// Blocks that contain a zone boundary.
fn boundary_blocks(
    f: &Function,
    sites: &[SiteFact],
    calls: &[(InstId, usize)],
    always: &[bool],
) -> Vec<bool> {
    let mut cut = vec![false; f.blocks.len()];
    for k in boundary_insts(f, sites, calls, always).keys() {
        cut[f.insts[*k as usize].block as usize] = true;
    }
    cut
}

/// Whether `f` can return and every path from its entry to a return
/// passes a boundary block.
fn always_collective(f: &Function, cfg: &Cfg, cut: &[bool]) -> bool {
    if f.blocks.is_empty() {
        return false;
    }
    let returns = |b: usize| f.blocks[b].term == Term::Ret;
    let can_return = (0..f.blocks.len()).any(|b| cfg.reachable[b] && returns(b));
    if !can_return {
        return false;
    }
    let mut seen = vec![false; f.blocks.len()];
    let mut stack = vec![0usize];
    while let Some(b) = stack.pop() {
        if seen[b] || cut[b] {
            continue;
        }
        seen[b] = true;
        if returns(b) {
            return false;
        }
        stack.extend(cfg.succs[b].iter().map(|s| *s as usize));
    }
    true
}

/// The wildcard sites reachable from just after boundary `start` without
/// passing another boundary.
fn zone_wildcards(
    f: &Function,
    cfg: &Cfg,
    start: InstId,
    boundaries: &std::collections::BTreeMap<InstId, String>,
    wildcard_at: &HashMap<InstId, Vec<u32>>,
) -> Vec<u32> {
    let mut found = BTreeSet::new();
    // Scans block `b` from instruction `from`; whether it runs to the end.
    let scan = |b: usize, from: InstId, found: &mut BTreeSet<u32>| -> bool {
        let block = &f.blocks[b];
        for i in from..block.end {
            if let Some(ids) = wildcard_at.get(&i) {
                found.extend(ids);
            }
            if boundaries.contains_key(&i) {
                return false;
            }
        }
        true
    };
    let first = f.insts[start as usize].block as usize;
    let mut seen = vec![false; f.blocks.len()];
    let mut stack = Vec::new();
    if scan(first, start + 1, &mut found) {
        stack.extend(cfg.succs[first].iter().map(|s| *s as usize));
    }
    while let Some(b) = stack.pop() {
        if seen[b] {
            continue;
        }
        seen[b] = true;
        if scan(b, f.blocks[b].first, &mut found) {
            stack.extend(cfg.succs[b].iter().map(|s| *s as usize));
        }
    }
    found.into_iter().collect()
}

/// The entry and exit edges of loop `l`, with where their markers go, or
/// why they cannot be instrumented.
fn loop_edges(
    f: &Function,
    cfg: &Cfg,
    l: &crate::cfg::NaturalLoop,
) -> Result<Vec<(BlockId, BlockId, Placement)>, String> {
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
            let splittable = matches!(source.term, Term::Br | Term::Switch);
            let placement = if cfg.succs[u as usize].len() == 1 && splittable {
                Placement::EndOfSource
            } else if cfg.preds[v as usize].len() == 1 && !target.pad {
                Placement::StartOfTarget
            } else if splittable && !target.pad {
                Placement::Split
            } else {
                return Err(
                    "an edge into or out of it comes from an `invoke`, `callbr` or computed \
                     goto, or goes to an exception handler, and cannot be split"
                        .to_owned(),
                );
            };
            Ok((u, v, placement))
        })
        .collect()
}
