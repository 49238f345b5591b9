//! The whole-program analysis: [`analyze`].
//!
//! [`analyze`] runs its phases in order, each a function of its own that
//! takes what the earlier ones computed (the numbers are those of the
//! comments in [`analyze`]):
//!
//! * `input`: 1. reading the IR of every module, and how the report names
//!   files and lines;
//! * `calls`: 2. resolving function names, 4. direct calls and the callers
//!   of internal functions, 6. the call graph, 7. the functions that
//!   contain wildcard sites;
//! * `sites`: 5. MPI sites and wildcard sites, 5b. buffer arguments;
//! * `zones`: 8. the functions that always call a collective, 11. zones;
//! * `loops`: 9. whether the wildcard outcomes of each function stay in
//!   it, 10. the loop abstraction decisions;
//! * `order`: 10b. whether the order any-completion calls' requests
//!   complete in can change what the program does;
//! * `report`: 12. the report and the plans `mbh-instrument` follows;
//! * here: 3. each function's CFG, loops and variables, and
//!   13. collectives ranks may disagree on (the `divergence` module).

mod calls;
mod input;
mod loops;
mod order;
mod report;
mod sites;
mod zones;

use std::collections::{HashMap, HashSet};
use std::path::Path;

use inkwell::basic_block::BasicBlock;
use inkwell::values::InstructionValue;
use mbh_trace::static_report::{StaticReport, WildcardKind};
use rayon::prelude::*;

use crate::cfg::{Cfg, Loops};
use crate::consts::{self, LocalVars, MpiConstants};
use crate::divergence;
use crate::dwarf::CType;
use crate::ir::{Function, InstId, Loc, Val, VarInfo};
use crate::mpi;
use crate::pointers::Pointers;
use crate::{Module, MpiCallSite};

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
    /// The zone id ([`ZoneInfo::id`](mbh_trace::static_report::ZoneInfo::id)).
    pub zone: u32,
    /// The call that opens it.
    pub after: InstructionValue<'ctx>,
}

/// What to do to one module.
#[derive(Debug, Clone)]
pub struct ModulePlan<'ctx> {
    /// Its MPI call sites, as [`mpi_call_sites`](crate::mpi_call_sites) lists them.
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

/// Per function: everything computed about it on its own.
struct Local {
    vars: LocalVars,
    /// Where its pointers point, solved once for every analysis.
    pointers: Pointers,
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
    /// A call on `MPI_COMM_WORLD`.
    on_comm_world: bool,
}

/// The program as phases 5 to 13 see it: what phases 1 to 4 computed,
/// read-only and shared by the threads of the parallel phases. It is also
/// what resolving a constant asks about the rest of the program
/// ([`consts::Program`]).
struct Prog<'p> {
    fns: &'p [Function],
    locals: &'p [Local],
    const_globals: &'p [HashMap<String, Val>],
    names: &'p calls::Names<'p>,
    calls: &'p calls::Calls,
    spans: &'p input::Spans,
    consts: &'p MpiConstants,
}

impl consts::Program for Prog<'_> {
    fn const_global(&self, module: usize, name: &str) -> Option<&Val> {
        self.const_globals.get(module)?.get(name)
    }

    fn callers(&self, module: usize, name: &str) -> Option<&[(usize, InstId)]> {
        self.calls
            .callers
            .get(&(module, name.to_owned()))
            .map(Vec::as_slice)
    }

    fn function(&self, index: usize) -> (&Function, &LocalVars) {
        (&self.fns[index], &self.locals[index].vars)
    }
}

/// Per function (by index in [`Prog::fns`]): what phases 5 to 8 found,
/// which the later phases read.
struct Facts {
    /// The number of calls to `MPI_`/`PMPI_` functions.
    counts: Vec<u32>,
    /// The MPI call sites, with their ids.
    sites: Vec<Vec<SiteFact>>,
    /// Whether it contains wildcard sites, directly or through calls.
    contains: Vec<bool>,
    /// Whether it always calls a collective: its calls end zones.
    always: Vec<bool>,
}

/// Analyses a program made of `inputs` (one module per source, in the
/// order given): loops, MPI sites, wildcard sites, zones and the loop
/// abstraction choice. Site ids are numbered from 1 in input order, as
/// `mbh-instrument` numbers them; so are loop and zone ids.
///
/// `base_dir` is the user's working directory: file names in the report
/// are relative to it when below it.
///
/// # Example
///
/// ```
/// use inkwell::context::Context;
/// use mbh_static::{analyze, mpi_call_sites, AnalysisInput, ConstValue, Module, MpiConstants};
/// use mbh_trace::static_report::LoopDecision;
///
/// let ir = r#"
/// declare i32 @MPI_Recv(ptr, i32, i32, i32, i32, i32, ptr)
/// declare i32 @MPI_Barrier(i32)
/// define void @master(i32 %n) {
/// entry:
///   %value = alloca i32
///   br label %loop
/// loop:
///   %i = phi i32 [ 1, %entry ], [ %next, %loop ]
///   %r = call i32 @MPI_Recv(ptr %value, i32 1, i32 7, i32 -2, i32 0, i32 1, ptr null)
///   %next = add i32 %i, 1
///   %more = icmp slt i32 %next, %n
///   br i1 %more, label %loop, label %done
/// done:
///   %b = call i32 @MPI_Barrier(i32 1)
///   ret void
/// }
/// "#;
/// let context = Context::create();
/// let module = Module::parse(&context, "master.ll", ir.as_bytes())?;
/// assert_eq!(mpi_call_sites(&module).len(), 2);
///
/// // The installed MPI's values (`mbh-instrument` reads them from mpi.h).
/// let consts = MpiConstants {
///     any_source: ConstValue::Int(-2),
///     any_tag: ConstValue::Int(-1),
///     proc_null: ConstValue::Int(-1),
///     undefined: ConstValue::Int(-32766),
///     comm_world: ConstValue::Int(1),
///     comm_self: ConstValue::Int(2),
///     status_size: 20,
///     status_source: 8,
///     status_tag: 12,
///     datatypes: Vec::new(),
/// };
/// let source = std::path::PathBuf::from("master.ll");
/// let inputs = [AnalysisInput { module: &module, source: &source }];
/// let analysis = analyze(&inputs, &consts, std::path::Path::new("."));
/// let report = &analysis.report;
/// assert_eq!(report.wildcards[0].source, "MPI_ANY_SOURCE");
/// assert_eq!(report.loops[0].decision, LoopDecision::Abstract);
/// assert_eq!(report.zones[0].opened_by, "MPI_Barrier");
/// // One entry edge and one exit edge get markers.
/// assert_eq!(analysis.modules[0].edges.len(), 2);
/// # Ok::<(), mbh_static::LoadError>(())
/// ```
pub fn analyze<'ctx>(
    inputs: &[AnalysisInput<'_, 'ctx>],
    consts: &MpiConstants,
    base_dir: &Path,
) -> Analysis<'ctx> {
    // 1. Read the IR, on this thread.
    let input::Read {
        files,
        fns,
        refs,
        const_globals,
        referenced,
        module_sites,
        globals,
        strings,
    } = input::read(inputs);
    let spans = input::Spans::new(inputs, &files, base_dir);
    // 2. Names.
    let names = calls::Names::new(&fns);
    // 3. Per function, in parallel: CFG, dominators, loops, variables.
    let locals = per_function(&fns);
    // 4. Direct calls; callers of internal functions whose address is not
    // taken.
    let calls = calls::Calls::new(&fns, &names, &referenced);
    let prog = Prog {
        fns: &fns,
        locals: &locals,
        const_globals: &const_globals,
        names: &names,
        calls: &calls,
        spans: &spans,
        consts,
    };
    // 5. MPI sites, numbered in module order, and wildcard sites.
    let counts = sites::mpi_call_counts(&fns);
    let sites = sites::mpi_sites(&prog, &counts);
    // 5b. Buffer arguments against their datatype and object.
    let buffer_facts = sites::buffer_facts(&prog, &sites, &globals);
    // 6. The call graph.
    let graph = calls.graph();
    // 7. Functions containing wildcard sites, directly or through calls.
    let contains = calls::contains_wildcards(&graph, &sites);
    // 8. Functions that always call a collective, to a fixpoint.
    let always = zones::always_collective_fns(&prog, &sites);
    let facts = Facts {
        counts,
        sites,
        contains,
        always,
    };
    // 9. Whether the outcomes of the wildcard sites of each function stay
    // in it, callees first.
    let summary = loops::wildcard_summaries(&prog, &facts, &graph);
    // 10. Loop decisions, per function in parallel.
    let loop_facts = loops::loop_decisions(&prog, &facts, &summary);
    // 10b. Whether completion orders matter, per site in parallel.
    let reaches_mpi = calls::reaches_mpi(&graph, &facts.sites, &calls.calls_unknown);
    let orders = order::completion_orders(&prog, &facts, &reaches_mpi);
    // 11. Zones, per function in parallel.
    let zone_facts = zones::zones(&prog, &facts);
    // 12. The report, and the plans.
    let found = report::Found {
        buffers: &buffer_facts,
        loops: &loop_facts,
        zones: &zone_facts,
        orders: &orders,
    };
    let (mut report, plans) = report::assemble(&prog, &facts, &found, &refs, module_sites);
    // 13. Collectives ranks may disagree on, and branches on the program's
    // input that decide MPI calls: a verdict holds for the input it ran with.
    let found = divergent(&prog, &facts.sites, &strings, &globals);
    report.divergent_collectives = found.collectives;
    report.input_branches = found.input_branches;
    Analysis {
        report,
        modules: plans,
    }
}

/// Phase 3: what each function's own code gives, computed in parallel
/// since no function needs another's: its control-flow graph with the
/// dominator tree, its natural loops, its local variables and where its
/// pointers point.
fn per_function(fns: &[Function]) -> Vec<Local> {
    fns.par_iter()
        .map(|f| {
            let cfg = Cfg::new(f);
            let loops = Loops::new(&cfg);
            let vars = LocalVars::of(f);
            Local {
                pointers: Pointers::of(f, &vars),
                vars,
                cfg,
                loops,
            }
        })
        .collect()
}

/// Phase 13: the collectives some ranks may skip and the branches on the
/// program's input that decide MPI calls, found by the
/// `divergence` module over everything computed so far; collectives on
/// `MPI_COMM_SELF` are never divergent, so their sites are passed as
/// single-member ones.
fn divergent(
    prog: &Prog<'_>,
    sites: &[Vec<SiteFact>],
    strings: &[HashMap<String, String>],
    globals: &[HashMap<String, VarInfo>],
) -> divergence::Found {
    let span = |f: &Function, loc: Option<Loc>| prog.spans.span(f, loc);
    divergence::find(
        &divergence::Program {
            fns: prog.fns,
            pointers: prog.locals.iter().map(|l| &l.pointers).collect(),
            vars: prog.locals.iter().map(|l| &l.vars).collect(),
            cfgs: prog.locals.iter().map(|l| &l.cfg).collect(),
            sites: sites
                .iter()
                .map(|list| list.iter().map(|s| (s.id, s.inst)).collect())
                .collect(),
            calls: &prog.calls.calls,
            address_taken: &prog.calls.address_taken,
            strings,
            single_member: sites
                .iter()
                .flatten()
                .filter(|s| s.on_comm_self)
                .map(|s| s.id)
                .collect(),
            on_world: sites
                .iter()
                .flatten()
                .filter(|s| s.on_comm_world)
                .map(|s| s.id)
                .collect(),
            comm_world: Some(prog.consts.comm_world.operand()),
            extents: prog
                .fns
                .par_iter()
                .enumerate()
                .map(|(fi, f)| {
                    let calls: Vec<InstId> = sites[fi].iter().map(|s| s.inst).collect();
                    let vars = &prog.locals[fi].vars;
                    divergence::extents::of(prog, prog.consts, f, vars, &calls)
                })
                .collect(),
            scalar_globals: scalar_globals(globals),
        },
        &span,
    )
}

/// The globals debug information describes as one scalar or pointer in
/// every module that describes them.
fn scalar_globals(globals: &[HashMap<String, VarInfo>]) -> HashSet<String> {
    let mut scalar = HashSet::new();
    let mut other = HashSet::new();
    for (name, var) in globals.iter().flatten() {
        match var.ty {
            CType::Scalar(_) | CType::Pointer(_) => scalar.insert(name.clone()),
            _ => other.insert(name.clone()),
        };
    }
    scalar.retain(|g| !other.contains(g));
    scalar
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::{self, Callee, Files, Op};

    /// The functions of textual IR `ir`, read as phase 1 reads them.
    pub(super) fn functions(ir: &str) -> Vec<Function> {
        let context = inkwell::context::Context::create();
        let module = Module::parse(&context, "test.ll", ir.as_bytes()).unwrap();
        ir::read_module(&module, 0, &mut Files::default()).functions
    }

    /// The MPI call sites of `f`, numbered from `first`, with the calls
    /// to `MPI_Recv` as wildcard sites.
    pub(super) fn sites_of(f: &Function, first: u32) -> Vec<SiteFact> {
        let mut out = Vec::new();
        for (k, inst) in f.insts.iter().enumerate() {
            let Op::Call(Callee::Named(name)) = &inst.op else {
                continue;
            };
            let Some(func) = mpi::lookup(name) else {
                continue;
            };
            out.push(SiteFact {
                id: first + out.len() as u32,
                inst: k as InstId,
                name: name.clone(),
                func,
                wildcard: (name == "MPI_Recv")
                    .then(|| (WildcardKind::AnySource, String::new(), String::new())),
                on_comm_self: false,
                on_comm_world: false,
            });
        }
        out
    }

    #[test]
    fn each_function_gets_its_cfg_loops_and_variables() {
        let fns = functions(
            "define void @f(i32 %n) {\nentry:\n  %v = alloca i32\n  br label %loop\n\
             loop:\n  %i = phi i32 [ 0, %entry ], [ %next, %loop ]\n  \
             store i32 %i, ptr %v\n  %next = add i32 %i, 1\n  \
             %more = icmp slt i32 %next, %n\n  br i1 %more, label %loop, label %done\n\
             done:\n  ret void\n}\n",
        );
        let locals = per_function(&fns);
        assert_eq!(locals.len(), 1);
        assert_eq!(locals[0].cfg.succs, [vec![1], vec![1, 2], vec![]]);
        assert_eq!(locals[0].loops.loops.len(), 1);
        assert_eq!(locals[0].loops.loops[0].header, 1);
    }
}
