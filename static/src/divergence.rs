//! Collectives that some ranks may skip, and branches on the program's
//! input.
//!
//! A collective must be called by every rank of its communicator. The
//! classic way to break that is to call it under a condition that ranks
//! evaluate differently: `if (rank == 0) MPI_Barrier(comm)`. Following
//! PARCOACH (Saillard, Carribault and Barthou, *PARCOACH: Combining static
//! and dynamic validation of MPI collective communications*, IJHPCA 2014:
//! a collective is suspect when a conditional in its iterated
//! post-dominance frontier may let ranks take different paths) and its
//! refinement to rank-dependent ("multi-valued") conditions (Huchant,
//! Saillard, Barthou and Carribault, *Multi-Valued Expression Analysis for
//! Collective Checking*, Euro-Par 2019), this pass reports every collective
//! call site that is control-dependent ([`crate::control_dep`], after
//! Ferrante, Ottenstein and Warren) on a branch whose condition depends on
//! the rank or on data a point-to-point receive wrote. The dissertation
//! behind the dynamic verifier (seed 000, §7.1.1) names static analysis as
//! the way to catch common errors before a run; this is one, and its
//! by-product, the branches on program input that decide which MPI calls
//! run, says which inputs a dynamic verdict holds for.
//!
//! What a condition depends on comes from a value-dependence (taint)
//! analysis per function over the memory objects of [`crate::taint`]
//! (locals, heap blocks, globals, parameters), plus C++ heap blocks and
//! `main`'s `argv` through `MPI_Init` ([`addresses`]). Reads of locals,
//! heap blocks and parameters' pointees are flow- and field-sensitive: a
//! read sees the writes of its (object, offset) cell that reach it
//! ([`reaching`]); globals and unknown memory stay one flow-insensitive
//! object each.
//!
//! * sources: the rank (what `MPI_Comm_rank`, `MPI_Group_rank`,
//!   `MPI_Cart_rank`, `MPI_Cart_coords` and `MPI_Cart_shift` write, on any
//!   communicator); data received (what point-to-point receives, probes
//!   and completions write, and the outputs of collectives whose result
//!   differs by rank: `Scatter`, `Gather`, `Reduce`, `Alltoall`, `Scan`);
//!   and input: `argc`/`argv` of `main` (`argv[K]` for a constant index),
//!   `getenv("X")`, `rand()`, `time()`, `clock()`, `gettimeofday()`,
//!   `MPI_Wtime()`, and what `scanf`, `fscanf`, `fgets`, `fread`, `read`,
//!   `getline` and friends read;
//! * propagation: loads and stores, arithmetic, comparisons, casts, `phi`,
//!   `select`, `memcpy`, `sscanf`, calls to library functions (the result
//!   depends on the arguments: `atoi(argv[1])` stays `argv[1]`), and,
//!   through the call graph, the return values and pointer parameters of
//!   the program's own functions (summaries) and the arguments its
//!   functions receive from their callers (when every caller is known);
//! * control: a value stored, or chosen by a `phi`, under a branch takes
//!   the branch's dependences too (`if (rank == 0) go = 1;` makes `go`
//!   rank-dependent), as in Huchant et al.'s gated analysis: at a `phi`,
//!   and at a read of memory, the branches that decide the write and not
//!   the read; but not a `rank == root` branch whose root side keeps what
//!   it broadcasts and whose other side copies what it received
//!   ([`round_trip`]: miniAMR's parameters);
//! * agreement: what `MPI_Bcast`, `MPI_Allreduce` and `MPI_Allgather(v)`
//!   (and their nonblocking forms) write is the same on every rank that
//!   makes the call, whatever the branches around it: only the input it
//!   carries, nothing per rank. The write replaces the cell it starts at;
//!   for globals and unknown memory, a load that one of those calls
//!   dominates reads the collective's result. This keeps `MPI_Bcast(&n,
//!   ..); for (i < n) ..` and `MPI_Allreduce(&mine, &done, ..); if
//!   (!done) ..` silent. `MPI_Comm_size` is not a source, and a
//!   comparison of the rank with the size of the same communicator has
//!   one outcome (`if (rank < nprocs)`);
//! * membership: a communicator handle carries what decides which ranks
//!   it holds (its parent's, a split's colour).
//!
//! Interprocedurally, a collective in a function all of whose calls are
//! under rank-dependent branches (through any number of callers) is
//! reported with its callers' branches, and an input branch counts when it
//! decides a call to a function that reaches MPI calls.
//!
//! Branches are reported by source condition: clang splits `a && b` into
//! one branch per operand, both on the `if`'s line, so the branches of one
//! function on one line are one entry, with their dependences merged.
//!
//! A rank-dependent branch decides a collective only when its paths make
//! different sequences of collectives ([`crate::balance`], PARCOACH's
//! comparison): the same collective on both sides of `if (rank == 0) ..
//! else ..`, or a branch that only prints, decides nothing. Paths that end
//! the rank (`unreachable` after `abort`, `exit` or a failed `assert`) or
//! leave the function by an exception (`resume`) are not paths on which it
//! skips a collective.
//!
//! What it does not do, and why:
//!
//! * A collective under a rank branch that every rank takes for the sizes
//!   actually run is reported (the run then says it went alike).
//! * `MPI_Init`, `MPI_Init_thread` and `MPI_Finalize` are not checked: the
//!   rank is unknown before `MPI_Init`, and `MPI_Finalize` under a rank
//!   test is almost always one of several exits that all finalize.
//!   Collective communicator constructors (`MPI_Comm_split`,
//!   `MPI_Comm_dup`, `MPI_Comm_idup`, `MPI_Cart_create`, ...) are.
//! * Sizes are uniform: `MPI_Comm_size` on a split communicator differs
//!   between groups, but every member of one communicator agrees on it.
//!   A communicator handle carries only what decides its members (a
//!   constructor's output), not the rank of the one holding it.
//! * A collective on `MPI_COMM_SELF` (resolved as wildcard sources are,
//!   [`crate::consts::resolve`]) is never reported: its one member cannot
//!   disagree with itself. Nor is one on a communicator whose members
//!   depend on the rank (`MPI_Comm_split(world, rank < 3, ..)` then `if
//!   (rank < 3) MPI_Allreduce(.., split)`): the analysis cannot relate a
//!   split's colour to a branch, and the run compares the members.
//! * Inputs are assumed the same on every rank (`mpiexec` passes one
//!   command line): a branch on `argv` alone is an input branch, not a
//!   divergence. `time()` and `rand()` after different seeds may differ
//!   between ranks; they are reported as inputs only.
//! * For globals and unknown memory, agreement is by dominance, not by
//!   path: a rank-dependent store between the broadcast and the load is
//!   missed (silence). Accesses are compared by the offset they start at:
//!   a struct written byte by byte and read whole is missed.
//! * Values are not compared: a minimum over an agreed array that starts
//!   from the rank's own value is rank-dependent to this pass.
//! * Pointers stored in memory, function pointers and aliasing through
//!   parameters are followed as in [`crate::taint`]; calls through
//!   pointers return values that depend on their arguments. Contexts are
//!   merged: a parameter takes what every caller passes.

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::sync::Arc;

use mbh_trace::static_report::{
    CallClass, Dependence, DivergentCollective, GuardingBranch, InputBranch, Span, CLOCK_INPUTS,
};
use rayon::prelude::*;

use crate::balance::{balanced, Token};
use crate::cfg::Cfg;
use crate::consts::LocalVars;
use crate::control_dep::ControlDeps;
use crate::ir::{BlockId, Callee, Function, InstId, Loc, Op, Term, Val};
use crate::mpi::{self, Role};
use crate::pointers::Pointers;
use crate::taint::{self, Addr, CallKind, Obj};

mod addresses;
pub(crate) mod extents;
mod rank_tests;
mod reaching;
mod round_trip;
use rank_tests::ArmTests;
use reaching::{Cell, Def, Reaching};

/// Rounds of the whole-program fixpoint (summaries and caller contexts);
/// dependences only grow, so this is a safety bound, not a precision one.
const PROGRAM_ROUNDS: usize = 16;
/// Rounds of one function's fixpoint.
const FUNCTION_ROUNDS: usize = 64;

/// What a value may depend on.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
struct Deps {
    rank: bool,
    received: bool,
    inputs: BTreeSet<String>,
}

impl Deps {
    fn input(name: impl Into<String>) -> Self {
        Deps {
            inputs: [name.into()].into(),
            ..Deps::default()
        }
    }

    fn rank() -> Self {
        Deps {
            rank: true,
            ..Deps::default()
        }
    }

    fn received() -> Self {
        Deps {
            received: true,
            ..Deps::default()
        }
    }

    /// Adds `other`; whether anything was new.
    fn join(&mut self, other: &Deps) -> bool {
        let before = (self.rank, self.received, self.inputs.len());
        self.rank |= other.rank;
        self.received |= other.received;
        self.inputs.extend(other.inputs.iter().cloned());
        before != (self.rank, self.received, self.inputs.len())
    }

    fn is_empty(&self) -> bool {
        !self.rank && !self.received && self.inputs.is_empty()
    }

    /// Whether ranks may disagree on it.
    fn per_rank(&self) -> bool {
        self.rank || self.received
    }

    /// What is left once a collective made every rank agree on it.
    fn agreed(&self) -> Deps {
        Deps {
            inputs: self.inputs.clone(),
            ..Deps::default()
        }
    }

    /// As the report lists them (`Dependence`'s order).
    fn list(&self) -> Vec<Dependence> {
        let mut out = Vec::new();
        if self.rank {
            out.push(Dependence::Rank);
        }
        out.extend(self.inputs.iter().cloned().map(Dependence::Input));
        if self.received {
            out.push(Dependence::Received);
        }
        out
    }
}

/// What the pass needs from the rest of the analysis.
pub(crate) struct Program<'a> {
    pub fns: &'a [Function],
    /// Per function: where its pointers point.
    pub pointers: Vec<&'a Pointers>,
    /// Per function: its local variables and what is stored in them.
    pub vars: Vec<&'a LocalVars>,
    pub cfgs: Vec<&'a Cfg>,
    /// Per function: its MPI call sites, `(site id, instruction)`.
    pub sites: Vec<Vec<(u32, InstId)>>,
    /// Per function: its direct calls to defined functions.
    pub calls: &'a [Vec<(InstId, usize)>],
    /// Functions that may be called through pointers.
    pub address_taken: &'a HashSet<usize>,
    /// Per module: constant C strings by global name.
    pub strings: &'a [HashMap<String, String>],
    /// The sites of collectives on a communicator of one member
    /// (`MPI_COMM_SELF`): never divergent.
    pub single_member: HashSet<u32>,
    /// The sites of calls on `MPI_COMM_WORLD`.
    pub on_world: HashSet<u32>,
    /// `MPI_COMM_WORLD` as an operand, when the installed `mpi.h` says.
    pub comm_world: Option<Val>,
    /// Per function: the bytes its MPI calls write into receive buffers,
    /// where known ([`extents`]).
    pub extents: Vec<extents::Extents>,
    /// Globals that debug information describes as one scalar or pointer
    /// (no fields: an access at any offset is the whole of it).
    pub scalar_globals: HashSet<String>,
}

/// What the pass found, for the report.
#[derive(Debug, Default)]
pub(crate) struct Found {
    pub collectives: Vec<DivergentCollective>,
    pub input_branches: Vec<InputBranch>,
}

/// Runs the pass. `span` names locations as the rest of the report does.
pub(crate) fn find(
    p: &Program<'_>,
    span: &(dyn Fn(&Function, Option<Loc>) -> Span + Sync),
) -> Found {
    let shapes: Vec<Shape> = (0..p.fns.len())
        .into_par_iter()
        .map(|fi| Shape::of(&p.fns[fi], &p.calls[fi]))
        .collect();
    let mut conds = Vec::new();
    let mut uneven = Vec::new();
    let mut arm_tests = Vec::new();
    for o in flows(p, &shapes) {
        conds.push(o.conds);
        uneven.push(o.uneven);
        arm_tests.push(o.arm_tests);
    }
    let view = View {
        p,
        shapes: &shapes,
        conds: &conds,
        uneven: &uneven,
        arm_tests: &arm_tests,
        span,
    };
    Found {
        collectives: view.collectives(),
        input_branches: view.input_branches(),
    }
}

/// The control structure of one function.
struct Shape {
    /// Per block: the conditional branches (by block) it is
    /// control-dependent on, directly or not, ascending.
    guards: Vec<Vec<BlockId>>,
    /// Per block ending in a conditional `br` or a `switch`: its condition.
    cond: Vec<Option<Val>>,
    /// Calls to defined functions, by instruction.
    callee: HashMap<InstId, usize>,
    /// Per block, its living successors ([`living_successors`]).
    succs: Vec<Vec<u32>>,
    /// Per block, its immediate post-dominator over those.
    joins: Vec<Option<u32>>,
}

/// Each block's successors, without the blocks from which the program can
/// only end (every path reaches an `unreachable`: after `abort`, `exit`, a
/// failed `assert`) or leave the function by an exception (every path
/// reaches a `resume`: the cleanups C++ runs while an exception unwinds).
/// A rank that takes such a path stops, or hands the exception to a
/// caller whose own landing pads are judged there; it does not skip the
/// collectives after the branch, so the branch does not decide them (a
/// failed assertion is a finding of its own). Without this, every
/// `std::cout << ..` (an `invoke`) under `if (rank == 0)` would make the
/// rest of its function control-dependent on the test.
fn living_successors(f: &Function) -> Vec<Vec<u32>> {
    let n = f.blocks.len();
    let mut dies: Vec<bool> = f.blocks.iter().map(ends_the_rank).collect();
    // A block all of whose successors die dies too (to a fixpoint).
    let mut changed = true;
    while changed {
        changed = false;
        for (i, block) in f.blocks.iter().enumerate() {
            let all_die = !block.succs.is_empty()
                && block
                    .succs
                    .iter()
                    .all(|&s| dies.get(s as usize).copied().unwrap_or(false));
            if !dies[i] && all_die {
                dies[i] = true;
                changed = true;
            }
        }
    }
    (0..n)
        .map(|i| {
            f.blocks[i]
                .succs
                .iter()
                .copied()
                .filter(|&s| !dies.get(s as usize).copied().unwrap_or(false))
                .collect()
        })
        .collect()
}

/// Whether a block ends the rank's run of this function other than by a
/// return: `unreachable`, or `resume` (the only terminator without
/// successors that is neither: [`Term::Unsplittable`] with none).
fn ends_the_rank(b: &crate::ir::Block) -> bool {
    b.term == Term::Unreachable || (b.term == Term::Unsplittable && b.succs.is_empty())
}

impl Shape {
    fn of(f: &Function, calls: &[(InstId, usize)]) -> Shape {
        let succs = living_successors(f);
        let cond: Vec<Option<Val>> = f
            .blocks
            .iter()
            .map(|b| {
                if !matches!(b.term, Term::Br | Term::Switch) || b.end <= b.first {
                    return None;
                }
                f.insts[(b.end - 1) as usize].ops.first().cloned()
            })
            .collect();
        let deps = ControlDeps::new(&succs);
        let joins = deps.joins().to_vec();
        let guards = deps
            .closure()
            .into_iter()
            .map(|all| {
                all.into_iter()
                    .filter(|a| cond[*a as usize].is_some())
                    .collect()
            })
            .collect();
        Shape {
            guards,
            cond,
            callee: calls.iter().copied().collect(),
            succs,
            joins,
        }
    }
}

/// What one function tells its callers.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
struct Summary {
    /// Its return value.
    ret: Deps,
    /// What it writes through each pointer parameter, per offset from
    /// where the pointer points (`None`: somewhere unknown).
    writes: BTreeMap<u32, Fields>,
    /// The cells (parameter, offset) it writes on every path to a return:
    /// what the caller's object held there before the call is gone.
    must: BTreeSet<(u32, i64)>,
    /// Parameters an agreeing collective writes through on every path to
    /// a return, with what the result carries.
    agreed: BTreeMap<u32, Deps>,
}

/// A write a call makes: the cell it starts at, whether it replaces what
/// it covers, and how many bytes it covers ([`Def::len`]).
type Write = (Cell, bool, Option<u64>);

/// What an object holds, per offset (`None`: somewhere unknown).
type Fields = BTreeMap<Option<i64>, Deps>;

/// What one function's callers pass it, merged.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
struct Context {
    values: BTreeMap<u32, Deps>,
    /// What each pointer parameter points at, per offset from where it
    /// points (`None`: somewhere unknown).
    pointees: BTreeMap<u32, Fields>,
}

/// What the whole program knows at the start of a round.
struct Shared<'a> {
    summaries: &'a [Summary],
    contexts: &'a [Context],
    globals: &'a HashMap<String, Deps>,
    /// What the whole program tells [`round_trip`].
    round_trip: &'a round_trip::Facts,
}

/// What one function's analysis produced.
#[derive(Debug, Default)]
struct Outcome {
    summary: Summary,
    /// `(callee, argument, value, pointee)` of each call to a defined
    /// function, the pointee per offset.
    args: Vec<(usize, u32, Deps, Fields)>,
    globals: HashMap<String, Deps>,
    /// Per block: its condition's dependences (empty for other blocks).
    conds: Vec<Deps>,
    /// Its collectives on a communicator whose members depend on the rank.
    uneven: HashSet<InstId>,
    /// Per block ending in a two-way `br`: the rank tests each arm implies.
    arm_tests: Vec<Option<ArmTests>>,
    memo: Memo,
}

/// What one round computes of a function that the next can reuse.
#[derive(Debug, Default)]
struct Memo {
    addrs: Arc<Vec<Option<Addr>>>,
    writes: Vec<Def>,
    reach: Arc<Reaching>,
    trips: Arc<HashSet<(BlockId, Cell)>>,
}

/// The whole-program fixpoint: each round analyses every function with
/// the summaries and contexts of the previous one.
fn flows(p: &Program<'_>, shapes: &[Shape]) -> Vec<Outcome> {
    let n = p.fns.len();
    let mut summaries = vec![Summary::default(); n];
    let mut contexts = vec![Context::default(); n];
    let mut globals: HashMap<String, Deps> = HashMap::new();
    let mut outcomes: Vec<Outcome> = Vec::new();
    let round_trip = round_trip::Facts::of(p);
    for _ in 0..PROGRAM_ROUNDS {
        let shared = Shared {
            summaries: &summaries,
            contexts: &contexts,
            globals: &globals,
            round_trip: &round_trip,
        };
        outcomes = (0..n)
            .into_par_iter()
            .map(|fi| {
                let memo = outcomes.get(fi).map(|o: &Outcome| &o.memo);
                Flow::new(p, fi, &shapes[fi], &shared, memo).run()
            })
            .collect();
        let next_summaries: Vec<Summary> = outcomes.iter().map(|o| o.summary.clone()).collect();
        let mut next_contexts = vec![Context::default(); n];
        let mut next_globals = globals.clone();
        for o in &outcomes {
            for (g, k, value, pointee) in &o.args {
                if p.address_taken.contains(g) || p.fns[*g].name == "main" {
                    continue;
                }
                let c = &mut next_contexts[*g];
                c.values.entry(*k).or_default().join(value);
                let fields = c.pointees.entry(*k).or_default();
                for (field, d) in pointee {
                    fields.entry(*field).or_default().join(d);
                }
            }
            for (name, d) in &o.globals {
                next_globals.entry(name.clone()).or_default().join(d);
            }
        }
        let stable =
            next_summaries == summaries && next_contexts == contexts && next_globals == globals;
        summaries = next_summaries;
        contexts = next_contexts;
        globals = next_globals;
        if stable {
            break;
        }
    }
    outcomes
}

/// One function's value-dependence analysis.
struct Flow<'a> {
    p: &'a Program<'a>,
    fi: usize,
    f: &'a Function,
    shape: &'a Shape,
    shared: &'a Shared<'a>,
    addrs: Arc<Vec<Option<Addr>>>,
    vals: Vec<Deps>,
    /// The writes the reaching problem was set with.
    writes: Vec<Def>,
    /// What the writes of locals, heap blocks and parameters' pointees
    /// may see ([`reaching`]), and what each of those writes carries.
    reach: Arc<Reaching>,
    /// The branches whose dependences do not reach a cell's writes: the
    /// cell holds, where the branch's paths meet, what the root broadcast
    /// ([`round_trip`]).
    trips: Arc<HashSet<(BlockId, Cell)>>,
    def_deps: Vec<Deps>,
    /// Per write: whether the branches deciding it count for its reads.
    gated: Vec<bool>,
    /// Writes of other objects (globals, unknown memory), and writes the
    /// reaching problem was not told of: seen by every read.
    objs: HashMap<Obj, Deps>,
    param_writes: BTreeMap<u32, Fields>,
    /// Objects written by agreeing collectives (or calls that do so), with
    /// those calls and what their results carry.
    agreed_by: HashMap<Obj, Vec<InstId>>,
    agreed: HashMap<Obj, Deps>,
}

/// Where the rank is written: `(function, how many last arguments)` for
/// functions the signature table does not describe.
const RANK_OUTPUTS: &[(&str, usize)] = &[
    ("MPI_Comm_rank", 1),
    ("MPI_Group_rank", 1),
    ("MPI_Cart_rank", 1),
    ("MPI_Cart_coords", 1),
    ("MPI_Cart_shift", 2),
];

/// MPI functions whose outputs are one value each (an `int`, a handle).
const SCALAR_OUTPUTS: &[&str] = &[
    "MPI_Comm_rank",
    "MPI_Comm_size",
    "MPI_Comm_remote_size",
    "MPI_Group_rank",
    "MPI_Group_size",
    "MPI_Cart_rank",
    "MPI_Cart_shift",
];

/// Library functions that write one variable per pointer argument.
const SCANNERS: &[&str] = &["scanf", "fscanf", "sscanf", "vscanf", "vfscanf", "vsscanf"];

/// Collectives whose outputs are the same on every rank.
const AGREEING: &[&str] = &[
    "MPI_Bcast",
    "MPI_Allreduce",
    "MPI_Allgather",
    "MPI_Allgatherv",
    "MPI_Ibcast",
    "MPI_Iallreduce",
    "MPI_Iallgather",
    "MPI_Iallgatherv",
];

/// Functions that read files or standard input: named by their name.
const READERS: &[&str] = &[
    "scanf", "fscanf", "vscanf", "vfscanf", "fgets", "gets", "fread", "read", "pread", "getline",
    "getdelim", "getchar", "fgetc", "getc",
];

impl<'a> Flow<'a> {
    /// The analysis of function `fi` in one round; `memo` is what the
    /// previous round computed of it that does not change between rounds.
    fn new(
        p: &'a Program<'a>,
        fi: usize,
        shape: &'a Shape,
        shared: &'a Shared<'a>,
        memo: Option<&Memo>,
    ) -> Self {
        let f = &p.fns[fi];
        let addrs = match memo {
            Some(m) => Arc::clone(&m.addrs),
            None => Arc::new(Self::addresses(p, fi)),
        };
        let mut flow = Flow {
            p,
            fi,
            f,
            shape,
            shared,
            addrs,
            vals: vec![Deps::default(); f.insts.len()],
            reach: Arc::default(),
            trips: Arc::default(),
            writes: Vec::new(),
            def_deps: Vec::new(),
            gated: Vec::new(),
            objs: HashMap::new(),
            param_writes: BTreeMap::new(),
            agreed_by: HashMap::new(),
            agreed: HashMap::new(),
        };
        flow.find_agreeing_writes();
        let (writes, reads) = flow.accesses();
        // The writes change between rounds only when a callee's summary
        // gains a written field.
        (flow.reach, flow.trips) = match memo {
            Some(m) if m.writes == writes => (Arc::clone(&m.reach), Arc::clone(&m.trips)),
            _ => (
                Arc::new(Reaching::new(f, p.cfgs[fi], writes.clone(), &reads)),
                Arc::default(),
            ),
        };
        flow.writes = writes;
        if memo.is_none_or(|m| !Arc::ptr_eq(&m.reach, &flow.reach)) {
            flow.trips = Arc::new(flow.find_round_trips());
        }
        flow.def_deps = vec![Deps::default(); flow.reach.defs.len()];
        flow.gated = vec![false; flow.reach.defs.len()];
        flow
    }

    /// Where each pointer instruction of function `fi` points.
    fn addresses(p: &Program<'_>, fi: usize) -> Vec<Option<Addr>> {
        let f = &p.fns[fi];
        let followed = addresses::followed_vars(f, p.vars[fi]);
        (0..f.insts.len())
            .map(|i| {
                let inst = &f.insts[i];
                let v = Val::Inst(i as InstId);
                let found = inst.is_ptr.then(|| p.pointers[fi].addr(&v)).flatten();
                match found {
                    Some(Addr {
                        obj: Obj::Unknown, ..
                    }) => addresses::address(f, &followed, &v).or(found),
                    _ => found,
                }
            })
            .collect()
    }

    /// The cell an address names.
    fn cell(addr: &Addr) -> Cell {
        Cell {
            obj: addr.obj.clone(),
            // An offset known only modulo an index's scale is no field.
            field: addr.offset.filter(|_| addr.scales.is_empty()),
        }
    }

    /// Every write to and read of a tracked object ([`tracked`]) in the
    /// function, for the reaching-definitions problem.
    fn accesses(&self) -> (Vec<Def>, Vec<(InstId, Cell)>) {
        let mut writes = Vec::new();
        let mut reads = Vec::new();
        let mut write = |at: InstId, (cell, strong, len): Write| {
            if tracked(&cell.obj) {
                let strong = strong && cell.field.is_some();
                writes.push(Def {
                    at: Some(at),
                    cell,
                    len,
                    strong,
                });
            }
        };
        for (k, inst) in self.f.insts.iter().enumerate() {
            let i = k as InstId;
            match &inst.op {
                Op::Load => {
                    if let Some(a) = inst.ops.first().and_then(|v| self.addr(v)) {
                        reads.push((i, Self::cell(&a)));
                    }
                }
                Op::Store => {
                    if let Some(a) = inst.ops.get(1).and_then(|v| self.addr(v)) {
                        write(i, (Self::cell(&a), true, Some(1)));
                    }
                }
                Op::Call(callee) => {
                    for (arg, v) in inst.ops.iter().enumerate() {
                        let Some(a) = self.addr(v) else { continue };
                        let cell = Self::cell(&a);
                        reads.push((i, cell.clone()));
                        reads.push((
                            i,
                            Cell {
                                field: None,
                                ..cell.clone()
                            },
                        ));
                        for w in self.call_writes(i, callee, arg as u32, cell) {
                            write(i, w);
                        }
                    }
                }
                _ => {}
            }
        }
        (writes, reads)
    }

    /// What call `i` may write through its argument `arg`, which points at
    /// `cell`.
    fn call_writes(&self, i: InstId, callee: &Callee, arg: u32, cell: Cell) -> Vec<Write> {
        // From the cell to the object's end; all of it at an unknown offset.
        let rest = (cell.clone(), false, None);
        if let Some(&g) = self.shape.callee.get(&i) {
            let summary = &self.shared.summaries[g];
            let Some(fields) = summary.writes.get(&arg) else {
                return Vec::new();
            };
            return fields
                .keys()
                .map(|field| {
                    let shifted = Cell {
                        field: cell.field.zip(*field).map(|(a, b)| a.wrapping_add(b)),
                        ..cell.clone()
                    };
                    let strong = field.is_some_and(|x| summary.must.contains(&(arg, x)));
                    (shifted, strong, Some(1))
                })
                .collect();
        }
        let name = match callee {
            Callee::Named(n) => n.as_str(),
            _ => "",
        };
        if let Some(func) = mpi::lookup(name).filter(|_| mpi::is_mpi(name)) {
            return self.mpi_writes(i, name, &func, arg, cell);
        }
        let plain = name
            .strip_prefix("__isoc99_")
            .or_else(|| name.strip_prefix("__isoc23_"))
            .unwrap_or(name);
        // `scanf("%d", &p.n)` writes the one variable it is given, or
        // leaves it when the input does not parse.
        if SCANNERS.contains(&plain) {
            return vec![(cell, false, Some(1))];
        }
        // `llvm.lifetime.start` and the debug intrinsics name memory
        // without writing it.
        if matches!(taint::call_kind(plain), CallKind::Ignore) {
            return Vec::new();
        }
        // `memcpy`/`memset` of a constant length replace those bytes.
        let length = match (taint::call_kind(plain), self.f.insts[i as usize].ops.get(2)) {
            (CallKind::Copy | CallKind::Set, Some(Val::Int(n))) if arg == 0 && *n >= 0 => {
                Some(*n as u64)
            }
            _ => None,
        };
        match length {
            Some(n) => vec![(cell, true, Some(n))],
            // Any other function may write anywhere from where the pointer
            // it is given points.
            None => vec![rest],
        }
    }

    /// What MPI call `i` to `name` writes through its argument `arg`.
    fn mpi_writes(
        &self,
        i: InstId,
        name: &str,
        func: &mpi::MpiFunction,
        arg: u32,
        cell: Cell,
    ) -> Vec<Write> {
        let base = mpi::base_name(name).unwrap_or(name);
        let rank_output = RANK_OUTPUTS.iter().any(|(n, last)| {
            *n == base && arg as usize >= self.f.insts[i as usize].ops.len().saturating_sub(*last)
        });
        // `MPI_Init` hands back the command line it was given.
        let keeps_input = matches!(base, "MPI_Init" | "MPI_Init_thread");
        if keeps_input || !rank_output && !func.role(arg as usize).is_some_and(Role::is_output) {
            return Vec::new();
        }
        let one_value = SCALAR_OUTPUTS.contains(&base)
            || matches!(func.role(arg as usize), Some(Role::Flag | Role::Index));
        if one_value {
            return vec![(cell, true, Some(1))];
        }
        if let Some(&n) = self.p.extents[self.fi].get(&(i, arg)) {
            return vec![(cell, true, Some(n))];
        }
        // A buffer, a status or an array of unknown length replaces the
        // cell it starts at, and may reach the object's end.
        vec![(cell.clone(), true, Some(1)), (cell, false, None)]
    }

    /// Records the calls that make every rank agree on an object.
    fn find_agreeing_writes(&mut self) {
        let f = self.f;
        for (k, inst) in f.insts.iter().enumerate() {
            let i = k as InstId;
            let Op::Call(Callee::Named(name)) = &inst.op else {
                continue;
            };
            let params: Vec<u32> = match self.shape.callee.get(&i) {
                Some(g) => self.shared.summaries[*g].agreed.keys().copied().collect(),
                None if is_agreeing(name) => agreeing_outputs(name),
                None => continue,
            };
            for k in params {
                if let Some(a) = inst.ops.get(k as usize).and_then(|v| self.addr(v)) {
                    self.agreed_by.entry(a.obj).or_default().push(i);
                }
            }
        }
    }

    fn run(mut self) -> Outcome {
        for _ in 0..FUNCTION_ROUNDS {
            if !self.step() {
                break;
            }
        }
        self.outcome()
    }

    fn addr(&self, v: &Val) -> Option<Addr> {
        match v {
            Val::Inst(i) => self.addrs.get(*i as usize).cloned().flatten(),
            _ => self.p.pointers[self.fi].addr(v),
        }
    }

    fn val(&self, v: &Val) -> Deps {
        match v {
            Val::Inst(i) => self.vals.get(*i as usize).cloned().unwrap_or_default(),
            Val::Arg(k) if self.f.name == "main" => match k {
                0 => Deps::input("argc"),
                1 => Deps::input("argv"),
                _ => Deps::default(),
            },
            Val::Arg(k) => self.shared.contexts[self.fi]
                .values
                .get(k)
                .cloned()
                .unwrap_or_default(),
            _ => Deps::default(),
        }
    }

    fn union(&self, vals: &[Val]) -> Deps {
        let mut d = Deps::default();
        for v in vals {
            d.join(&self.val(v));
        }
        d
    }

    /// What a read at offset `read` of parameter object `obj` sees of what
    /// it held on entry, through the entry write of offset `entry`: that
    /// offset's, or every offset's for a read at an unknown one.
    fn initial_at(&self, obj: &Obj, read: Option<i64>, entry: Option<i64>) -> Deps {
        let Obj::Param(k) = obj else {
            return self.initial(obj);
        };
        if read.is_none() {
            return self.initial(obj);
        }
        self.shared.contexts[self.fi]
            .pointees
            .get(k)
            .and_then(|fields| fields.get(&entry))
            .cloned()
            .unwrap_or_default()
    }

    /// What object `obj` holds before this function writes it.
    fn initial(&self, obj: &Obj) -> Deps {
        match obj {
            Obj::Param(k) => {
                let mut d = Deps::default();
                for fields in self.shared.contexts[self.fi].pointees.get(k).into_iter() {
                    for f in fields.values() {
                        d.join(f);
                    }
                }
                d
            }
            Obj::Global(g) => self.shared.globals.get(g).cloned().unwrap_or_default(),
            _ => Deps::default(),
        }
    }

    /// What a read of `cell` at instruction `at` sees: for a tracked
    /// object, the writes that reach it; for another, what an agreeing
    /// collective that dominates `at` wrote, else everything written.
    fn read(&self, cell: &Cell, at: InstId) -> Deps {
        let obj = &cell.obj;
        if tracked(obj) {
            let mut d = self.objs.get(obj).cloned().unwrap_or_default();
            let block = |i: InstId| self.f.insts[i as usize].block;
            match self.reach.seen(at, cell) {
                Some(defs) => {
                    for &k in defs {
                        let def = &self.reach.defs[k];
                        match def.at {
                            Some(w) => {
                                d.join(&self.def_deps[k]);
                                if self.gated[k] {
                                    d.join(&self.gate_between(block(w), block(at), &def.cell));
                                }
                            }
                            None => {
                                d.join(&self.initial_at(obj, cell.field, def.cell.field));
                            }
                        }
                    }
                }
                None => {
                    d.join(&self.initial(obj));
                    for (k, def) in self.reach.defs.iter().enumerate() {
                        if def.cell.obj == *obj {
                            d.join(&self.def_deps[k]);
                            if let (true, Some(w)) = (self.gated[k], def.at) {
                                d.join(&self.control(block(w), &def.cell));
                            }
                        }
                    }
                }
            }
            return d;
        }
        if let Some(writers) = self.agreed_by.get(obj) {
            if writers.iter().any(|w| self.dominates(*w, at)) {
                return self.agreed.get(obj).cloned().unwrap_or_default();
            }
        }
        match self.objs.get(obj) {
            Some(d) => d.clone(),
            None => self.initial(obj),
        }
    }

    fn dominates(&self, a: InstId, b: InstId) -> bool {
        let block = |i: InstId| self.f.insts.get(i as usize).map(|x| x.block);
        match (block(a), block(b)) {
            (Some(ba), Some(bb)) if ba == bb => a < b,
            (Some(ba), Some(bb)) => self.p.cfgs[self.fi].dominates(ba, bb),
            _ => false,
        }
    }

    /// A value argument and, for a pointer, what it points to at `at`.
    fn arg(&self, v: &Val, at: InstId) -> Deps {
        let mut d = self.val(v);
        if let Some(a) = self.addr(v) {
            d.join(&self.read(&Self::cell(&a), at));
        }
        d
    }

    /// Instruction `at` writes `d` into `obj`, under the branches that
    /// decide whether `at` runs (implicit flow, see [`Flow::control`]).
    ///
    /// For a tracked cell the branches are added where a read sees the
    /// write ([`Flow::gate_between`]), as a `phi` takes them: only the
    /// branches that decide the write and not the read matter there. A
    /// store in a loop body is not made dependent on the loop's exit test
    /// for the reads in the same body, which run only when it went the same
    /// way.
    fn write(&mut self, at: InstId, cell: Cell, d: &Deps) -> bool {
        let control = match self.f.insts.get(at as usize) {
            Some(inst) => self.control(inst.block, &cell),
            None => Deps::default(),
        };
        self.record(at, cell, d, &control, true)
    }

    /// Instruction `at` writes `d` into `cell`, and nothing else: what an
    /// agreeing collective writes is the same on every rank that makes
    /// the call, whatever the branches around it (a rank that skips it is
    /// this pass's finding at the call itself).
    fn put(&mut self, at: InstId, cell: Cell, d: &Deps) -> bool {
        self.record(at, cell, d, &Deps::default(), false)
    }

    /// Records a write of `d` into `cell` at `at`, decided by branches
    /// that carry `control`; `gated` when a read of a tracked cell adds
    /// the branches between the write and itself.
    fn record(&mut self, at: InstId, cell: Cell, d: &Deps, control: &Deps, gated: bool) -> bool {
        let mut full = d.clone();
        full.join(control);
        if full.is_empty() && !gated {
            return false;
        }
        if let Obj::Param(k) = cell.obj {
            if !full.is_empty() {
                self.param_writes
                    .entry(k)
                    .or_default()
                    .entry(cell.field)
                    .or_default()
                    .join(&full);
            }
        }
        if tracked(&cell.obj) {
            let defs: Vec<usize> = self
                .reach
                .writes(at, &cell.obj)
                .iter()
                .copied()
                .filter(|&k| {
                    let field = self.reach.defs[k].cell.field;
                    field.is_none() || field == cell.field
                })
                .collect();
            if !defs.is_empty() {
                let mut changed = false;
                for k in defs {
                    changed |= self.def_deps[k].join(d);
                    changed |= gated && !std::mem::replace(&mut self.gated[k], true);
                }
                return changed;
            }
            return !full.is_empty() && self.objs.entry(cell.obj).or_default().join(&full);
        }
        if full.is_empty() {
            return false;
        }
        let initial = self.initial(&cell.obj);
        self.objs.entry(cell.obj).or_insert(initial).join(&full)
    }

    /// What decides whether a write of `cell` in block `from` happened,
    /// for a read in block `to`: the branches `from` depends on and `to`
    /// does not (but those that round-trip the cell, [`round_trip`]).
    fn gate_between(&self, from: BlockId, to: BlockId, cell: &Cell) -> Deps {
        let mut d = Deps::default();
        let own = &self.shape.guards[to as usize];
        for a in &self.shape.guards[from as usize] {
            if own.contains(a) || self.round_trips(*a, cell) {
                continue;
            }
            if let Some(c) = &self.shape.cond[*a as usize] {
                d.join(&self.val(c));
            }
        }
        d
    }

    /// Whether `branch` round-trips `cell` through a broadcast: it does
    /// not decide what the cell holds where its paths meet.
    fn round_trips(&self, branch: BlockId, cell: &Cell) -> bool {
        !self.trips.is_empty() && self.trips.contains(&(branch, cell.clone()))
    }

    fn write_through(&mut self, at: InstId, ptr: Option<&Val>, d: &Deps) -> bool {
        match ptr.and_then(|v| self.addr(v)) {
            Some(a) => self.write(at, Self::cell(&a), d),
            None => false,
        }
    }

    /// What the branches deciding whether a write of `cell` in block `b`
    /// runs depend on (implicit flow: a store under `if (rank == 0)` is
    /// rank-dependent), but those that round-trip the cell.
    fn control(&self, b: BlockId, cell: &Cell) -> Deps {
        let mut d = Deps::default();
        for a in &self.shape.guards[b as usize] {
            if self.round_trips(*a, cell) {
                continue;
            }
            if let Some(c) = &self.shape.cond[*a as usize] {
                d.join(&self.val(c));
            }
        }
        d
    }

    /// What decides which incoming value a `phi` in block `b` takes: the
    /// branches its predecessors depend on and `b` does not.
    fn gate(&self, b: BlockId) -> Deps {
        let mut d = Deps::default();
        let own = &self.shape.guards[b as usize];
        for pred in &self.p.cfgs[self.fi].preds[b as usize] {
            for a in &self.shape.guards[*pred as usize] {
                if own.contains(a) {
                    continue;
                }
                if let Some(c) = &self.shape.cond[*a as usize] {
                    d.join(&self.val(c));
                }
            }
        }
        d
    }

    /// One pass over the function; whether anything changed.
    fn step(&mut self) -> bool {
        let f = self.f;
        let mut changed = false;
        for (k, inst) in f.insts.iter().enumerate() {
            let i = k as InstId;
            let d = match &inst.op {
                Op::Load => match inst.ops.first() {
                    Some(ptr) => self.arg(ptr, i),
                    None => continue,
                },
                Op::Store => {
                    let Some(value) = inst.ops.first() else {
                        continue;
                    };
                    let mut d = self.val(value);
                    d.join(&self.union(&inst.ops[1..]));
                    changed |= self.write_through(i, inst.ops.get(1), &d);
                    continue;
                }
                Op::Gep { offset, var } => self.gep(&inst.ops, *offset, var.is_empty()),
                Op::Phi => {
                    let mut d = self.union(&inst.ops);
                    d.join(&self.gate(inst.block));
                    d
                }
                Op::Select | Op::Cast | Op::Compare(_) | Op::Logic(_) | Op::Compute => {
                    self.union(&inst.ops)
                }
                Op::Call(callee) => {
                    changed |= self.call(i, callee, &inst.ops);
                    continue;
                }
                _ => continue,
            };
            changed |= self.vals[k].join(&d);
        }
        changed
    }

    /// An offset: `argv` at a constant index becomes `argv[K]`.
    fn gep(&self, ops: &[Val], offset: i64, constant: bool) -> Deps {
        let mut d = self.union(ops);
        let base_is_argv = ops.first().is_some_and(|b| {
            let b = self.val(b);
            b.inputs.len() == 1 && b.inputs.contains("argv")
        });
        if constant && base_is_argv && offset >= 0 {
            d.inputs.remove("argv");
            // `argv` is an array of pointers, 8 bytes on the targets
            // mbhybrid supports (x86-64, AArch64).
            d.inputs.insert(format!("argv[{}]", offset / 8));
        }
        d
    }

    fn call(&mut self, i: InstId, callee: &Callee, args: &[Val]) -> bool {
        if let Some(&g) = self.shape.callee.get(&i) {
            return self.defined_call(i, g, args);
        }
        let name = match callee {
            Callee::Named(n) => n.as_str(),
            _ => "",
        };
        if mpi::is_mpi(name) {
            return self.mpi_call(i, name, args);
        }
        let plain = name
            .strip_prefix("__isoc99_")
            .or_else(|| name.strip_prefix("__isoc23_"))
            .unwrap_or(name);
        if let Some(label) = self.source(plain, args) {
            let d = Deps::input(label);
            let mut changed = self.vals[i as usize].join(&d);
            for a in args {
                if !self.is_string(a) {
                    changed |= self.write_through(i, Some(a), &d);
                }
            }
            return changed;
        }
        self.library_call(i, plain, args)
    }

    /// A call to a function outside the program.
    fn library_call(&mut self, i: InstId, name: &str, args: &[Val]) -> bool {
        let all = |flow: &Self, from: usize| {
            let mut d = Deps::default();
            for a in args.iter().skip(from) {
                d.join(&flow.arg(a, i));
            }
            d
        };
        if name == "sscanf" {
            // Parses its first argument into the pointers after the format.
            let d = all(self, 0);
            let mut changed = self.vals[i as usize].join(&d);
            for a in args.iter().skip(2) {
                changed |= self.write_through(i, Some(a), &d);
            }
            return changed;
        }
        let kind = if name.is_empty() {
            CallKind::Opaque
        } else {
            taint::call_kind(name)
        };
        match kind {
            CallKind::Ignore | CallKind::Alloc => false,
            CallKind::Copy => {
                let d = args.get(1).map(|s| self.arg(s, i)).unwrap_or_default();
                self.write_through(i, args.first(), &d)
            }
            CallKind::Set => {
                let d = args.get(1).map(|v| self.val(v)).unwrap_or_default();
                self.write_through(i, args.first(), &d)
            }
            CallKind::WritesFirst => {
                let d = all(self, 1);
                let changed = self.write_through(i, args.first(), &d);
                self.vals[i as usize].join(&d) || changed
            }
            _ => {
                let d = all(self, 0);
                self.vals[i as usize].join(&d)
            }
        }
    }

    fn is_string(&self, v: &Val) -> bool {
        matches!(v, Val::Global(g) if self.p.strings[self.f.module].contains_key(g))
    }

    /// The input a call to `name` reads, named as reports show it.
    fn source(&self, name: &str, args: &[Val]) -> Option<String> {
        if name == "getenv" || name == "secure_getenv" {
            let text = match args.first() {
                Some(Val::Global(g)) => self.p.strings[self.f.module].get(g),
                _ => None,
            };
            return Some(match text {
                Some(t) => format!("{name}(\"{t}\")"),
                None => name.to_owned(),
            });
        }
        // Their result (and whatever they write) is input
        // (`mbh_trace::static_report::CLOCK_INPUTS`).
        if name != "MPI_Wtime" && CLOCK_INPUTS.contains(&name) {
            return Some(format!("{name}()"));
        }
        READERS.contains(&name).then(|| name.to_owned())
    }

    /// A call to one of the program's functions: its summary.
    fn defined_call(&mut self, i: InstId, g: usize, args: &[Val]) -> bool {
        let summary = &self.shared.summaries[g];
        let mut changed = self.vals[i as usize].join(&summary.ret);
        for (k, a) in args.iter().enumerate() {
            let k = k as u32;
            let Some(addr) = self.addr(a) else { continue };
            let base = Self::cell(&addr);
            for (field, w) in summary.writes.get(&k).into_iter().flatten() {
                let cell = Cell {
                    field: base.field.zip(*field).map(|(a, b)| a.wrapping_add(b)),
                    ..base.clone()
                };
                changed |= self.write(i, cell, w);
            }
            if let Some(u) = summary.agreed.get(&k) {
                changed |= self.agreed.entry(addr.obj).or_default().join(u);
            }
        }
        changed
    }

    fn mpi_call(&mut self, i: InstId, name: &str, args: &[Val]) -> bool {
        let base = mpi::base_name(name).unwrap_or(name);
        if let Some((_, last)) = RANK_OUTPUTS.iter().find(|(n, _)| *n == base) {
            let mut changed = false;
            for a in args.iter().skip(args.len().saturating_sub(*last)) {
                changed |= self.write_through(i, Some(a), &Deps::rank());
            }
            return changed;
        }
        if base == "MPI_Wtime" {
            return self.vals[i as usize].join(&Deps::input("MPI_Wtime()"));
        }
        let Some(func) = mpi::lookup(name) else {
            return false;
        };
        if func.roles.is_none() {
            return false;
        }
        let inputs = || {
            let mut d = Deps::default();
            for (k, a) in args.iter().enumerate() {
                if func.is_input(k) {
                    d.join(&self.arg(a, i));
                }
            }
            d
        };
        let agreeing = is_agreeing(name);
        let d = match func.class {
            _ if agreeing => {
                // The same on every member of the communicator: what
                // decides its members is all that differs between ranks.
                let mut d = inputs().agreed();
                let comm = func.communicator_arg().and_then(|k| args.get(k));
                d.join(&comm.map(|c| self.val(c)).unwrap_or_default());
                d
            }
            CallClass::Receive
            | CallClass::SendReceive
            | CallClass::Probe
            | CallClass::Completion
            | CallClass::Collective => Deps::received(),
            // `MPI_Get_count` and friends: what the status says.
            CallClass::Other => inputs(),
            CallClass::Communicator if is_collective(name) => self.membership(base, args),
            _ => return false,
        };
        let mut changed = false;
        for (k, a) in args.iter().enumerate() {
            if !func.role(k).is_some_and(Role::is_output) {
                continue;
            }
            let Some(addr) = self.addr(a) else { continue };
            if agreeing {
                changed |= self.agreed.entry(addr.obj.clone()).or_default().join(&d);
                changed |= self.put(i, Self::cell(&addr), &d);
            } else {
                changed |= self.write(i, Self::cell(&addr), &d);
            }
        }
        changed
    }

    /// What decides which ranks a new communicator holds: the parent's
    /// members and, for a split, the colour (the key only orders them). A
    /// handle carries it, so `if (sub != MPI_COMM_NULL)` after a split by
    /// `rank < 2` is rank-dependent, as it is.
    fn membership(&self, base: &str, args: &[Val]) -> Deps {
        let mut d = args.first().map(|c| self.val(c)).unwrap_or_default();
        if matches!(base, "MPI_Comm_split" | "MPI_Comm_split_type") {
            d.join(&args.get(1).map(|c| self.val(c)).unwrap_or_default());
        }
        d
    }

    /// The collectives of this function on a communicator whose members
    /// depend on the rank.
    fn on_uneven_communicators(&self) -> HashSet<InstId> {
        self.p.sites[self.fi]
            .iter()
            .filter_map(|&(_, i)| {
                let name = self.f.callee(i)?;
                let comm = mpi::lookup(name)?.communicator_arg()?;
                let handle = self.f.insts[i as usize].ops.get(comm)?;
                self.val(handle).per_rank().then_some(i)
            })
            .collect()
    }

    fn outcome(&self) -> Outcome {
        let f = self.f;
        let mut summary = Summary {
            writes: self.param_writes.clone(),
            ..Summary::default()
        };
        let mut args = Vec::new();
        for (k, inst) in f.insts.iter().enumerate() {
            let i = k as InstId;
            match &inst.op {
                Op::Ret => {
                    if let Some(v) = inst.ops.first() {
                        summary.ret.join(&self.val(v));
                    }
                }
                Op::Call(_) => {
                    let Some(&g) = self.shape.callee.get(&i) else {
                        continue;
                    };
                    for (a, v) in inst.ops.iter().enumerate() {
                        let pointee = match self.addr(v) {
                            Some(addr) => self.pointee(&addr, i),
                            None => BTreeMap::new(),
                        };
                        args.push((g, a as u32, self.val(v), pointee));
                    }
                }
                _ => {}
            }
        }
        summary.agreed = self.agreed_params();
        summary.must = self.must_writes();
        let globals = self
            .objs
            .iter()
            .filter_map(|(o, d)| match o {
                Obj::Global(g) => Some((g.clone(), d.clone())),
                _ => None,
            })
            .collect();
        let conds = self
            .shape
            .cond
            .iter()
            .map(|c| match c {
                Some(c) if !self.rank_against_size(c) => self.val(c),
                _ => Deps::default(),
            })
            .collect();
        Outcome {
            summary,
            args,
            globals,
            conds,
            uneven: self.on_uneven_communicators(),
            arm_tests: self.all_arm_tests(),
            memo: Memo {
                addrs: Arc::clone(&self.addrs),
                writes: self.writes.clone(),
                reach: Arc::clone(&self.reach),
                trips: Arc::clone(&self.trips),
            },
        }
    }

    /// What `addr` points at when call `at` is made, per offset from it:
    /// for a tracked object, each write that reaches the call by the
    /// offset it starts at; for another, all it holds, at no known offset.
    fn pointee(&self, addr: &Addr, at: InstId) -> Fields {
        let base = Self::cell(addr);
        let whole = Cell {
            field: None,
            ..base.clone()
        };
        let mut out = Fields::new();
        let seen = self.reach.seen(at, &whole).filter(|_| tracked(&base.obj));
        let Some(seen) = seen else {
            let d = self.read(&whole, at);
            if !d.is_empty() {
                out.insert(None, d);
            }
            return out;
        };
        let relative = |field: Option<i64>| base.field.zip(field).map(|(b, f)| f.wrapping_sub(b));
        let block = |i: InstId| self.f.insts[i as usize].block;
        for &k in seen {
            let def = &self.reach.defs[k];
            match def.at {
                Some(w) => {
                    let mut d = self.def_deps[k].clone();
                    if self.gated[k] {
                        d.join(&self.gate_between(block(w), block(at), &def.cell));
                    }
                    out.entry(relative(def.cell.field)).or_default().join(&d);
                }
                // A parameter passed on: its own entry offsets, shifted.
                None => {
                    let Obj::Param(p) = &def.cell.obj else {
                        continue;
                    };
                    let context = self.shared.contexts[self.fi].pointees.get(p);
                    for (field, d) in context.into_iter().flatten() {
                        out.entry(relative(*field)).or_default().join(d);
                    }
                }
            }
        }
        if let Some(d) = self.objs.get(&base.obj) {
            out.entry(None).or_default().join(d);
        }
        out.retain(|_, d| !d.is_empty());
        out
    }

    /// Whether `cond` compares a rank with the size of its communicator
    /// (`rank < nprocs`, `size == rank`): every comparison of the two has
    /// one outcome on every rank, since a rank is in `0..size` (MPI 4.1
    /// §6.4.1), so the branch decides nothing, whatever the predicate.
    fn rank_against_size(&self, cond: &Val) -> bool {
        let Val::Inst(c) = cond else { return false };
        let inst = &self.f.insts[*c as usize];
        if !matches!(inst.op, Op::Compare(_)) || inst.ops.len() != 2 {
            return false;
        }
        let (Some(a), Some(b)) = (self.mpi_result(&inst.ops[0]), self.mpi_result(&inst.ops[1]))
        else {
            return false;
        };
        let names = [a.0, b.0];
        names.contains(&"MPI_Comm_rank") && names.contains(&"MPI_Comm_size") && a.1 == b.1
    }

    /// For a value read from a variable whose only write that reaches the
    /// read is one MPI call's output (through integer casts): that call's
    /// name and its communicator argument.
    fn mpi_result(&self, v: &Val) -> Option<(&'static str, Val)> {
        let Val::Inst(i) = v else { return None };
        let inst = &self.f.insts[*i as usize];
        match inst.op {
            Op::Cast => return self.mpi_result(inst.ops.first()?),
            Op::Load => {}
            _ => return None,
        }
        let cell = Self::cell(&self.addr(inst.ops.first()?)?);
        let seen = self.reach.seen(*i, &cell)?;
        let mut writers = seen.iter().map(|&k| self.reach.defs[k].at);
        let writer = writers.next()??;
        if !writers.all(|w| w == Some(writer)) {
            return None;
        }
        let call = &self.f.insts[writer as usize];
        let name = match self.f.callee(writer).and_then(mpi::base_name)? {
            "MPI_Comm_rank" => "MPI_Comm_rank",
            "MPI_Comm_size" => "MPI_Comm_size",
            _ => return None,
        };
        let comm = match call.ops.first()? {
            // A communicator read from a variable: the variable.
            Val::Inst(l) if self.f.insts[*l as usize].op == Op::Load => {
                self.f.insts[*l as usize].ops.first()?.clone()
            }
            other => other.clone(),
        };
        Some((name, comm))
    }

    /// The cells of parameters' pointees a strong write replaces before
    /// every return.
    fn must_writes(&self) -> BTreeSet<(u32, i64)> {
        let returns = self.returns();
        let mut out = BTreeSet::new();
        for def in &self.reach.defs {
            let (Some(at), Obj::Param(k), Some(field)) = (def.at, &def.cell.obj, def.cell.field)
            else {
                continue;
            };
            if def.strong && !returns.is_empty() && returns.iter().all(|r| self.dominates(at, *r)) {
                out.insert((*k, field));
            }
        }
        out
    }

    /// The function's reachable returns.
    fn returns(&self) -> Vec<InstId> {
        let f = self.f;
        (0..f.insts.len() as InstId)
            .filter(|i| matches!(f.insts[*i as usize].op, Op::Ret))
            .filter(|i| self.p.cfgs[self.fi].reachable[f.insts[*i as usize].block as usize])
            .collect()
    }

    /// Parameters written by an agreeing collective that runs before every
    /// return.
    fn agreed_params(&self) -> BTreeMap<u32, Deps> {
        let f = self.f;
        let returns: Vec<InstId> = (0..f.insts.len() as InstId)
            .filter(|i| matches!(f.insts[*i as usize].op, Op::Ret))
            .filter(|i| self.p.cfgs[self.fi].reachable[f.insts[*i as usize].block as usize])
            .collect();
        let mut out = BTreeMap::new();
        for (obj, writers) in &self.agreed_by {
            let Obj::Param(k) = obj else { continue };
            let before_all = !returns.is_empty()
                && returns
                    .iter()
                    .all(|r| writers.iter().any(|w| self.dominates(*w, *r)));
            if before_all {
                out.insert(*k, self.agreed.get(obj).cloned().unwrap_or_default());
            }
        }
        out
    }
}

/// Objects whose cells the reaching-definitions problem follows: those
/// whose every write this function makes is seen (a global may be written
/// by any callee, unknown memory through any pointer).
fn tracked(obj: &Obj) -> bool {
    matches!(obj, Obj::Local(_) | Obj::Heap(_) | Obj::Param(_))
}

fn is_agreeing(name: &str) -> bool {
    mpi::base_name(name).is_some_and(|b| AGREEING.contains(&b))
}

/// The arguments an agreeing collective writes.
fn agreeing_outputs(name: &str) -> Vec<u32> {
    let Some(func) = mpi::lookup(name) else {
        return Vec::new();
    };
    (0..func.roles.as_ref().map_or(0, Vec::len))
        .filter(|k| matches!(func.role(*k), Some(Role::RecvBuf | Role::InOutBuf)))
        .map(|k| k as u32)
        .collect()
}

/// Whether every rank of a communicator must make the call: collectives
/// and collective communicator constructors, not `MPI_Init`/`Finalize`
/// (see the module docs).
fn is_collective(name: &str) -> bool {
    let Some(func) = mpi::lookup(name) else {
        return false;
    };
    match func.class {
        CallClass::Collective => true,
        CallClass::Communicator => {
            func.zone_boundary || mpi::base_name(name) == Some("MPI_Comm_idup")
        }
        _ => false,
    }
}

/// A conditional branch: `(function, block)`.
type Branch = (usize, BlockId);

/// The finished analysis, for building the report.
struct View<'a> {
    p: &'a Program<'a>,
    shapes: &'a [Shape],
    conds: &'a [Vec<Deps>],
    /// Per function: collectives on a communicator whose members depend on
    /// the rank. Which ranks belong to it is what the branches around such
    /// a call usually test (`if (rank != 0) MPI_Intercomm_create(sub, ..)`
    /// after a split that left rank 0 out); the analysis cannot relate the
    /// two, and the run compares the members' sequences.
    uneven: &'a [HashSet<InstId>],
    /// Per function, per block: [`Outcome::arm_tests`].
    arm_tests: &'a [Vec<Option<ArmTests>>],
    span: &'a (dyn Fn(&Function, Option<Loc>) -> Span + Sync),
}

impl View<'_> {
    fn cond(&self, (h, a): Branch) -> &Deps {
        &self.conds[h][a as usize]
    }

    /// Where branch `(h, a)` is: its terminator's line, or, when an
    /// optimised build gave the terminator line 0 (a branch merged from
    /// several), the nearest line before it in its block.
    fn branch_span(&self, (h, a): Branch) -> Span {
        let f = &self.p.fns[h];
        let block = &f.blocks[a as usize];
        let loc = (block.first..block.end)
            .rev()
            .filter_map(|i| f.insts[i as usize].loc)
            .find(|loc| loc.line != 0);
        (self.span)(f, loc)
    }

    /// Every guard of instruction `i` of function `h`.
    fn guards_of(&self, h: usize, i: InstId) -> Vec<Branch> {
        let b = self.p.fns[h].insts[i as usize].block;
        self.shapes[h].guards[b as usize]
            .iter()
            .map(|a| (h, *a))
            .collect()
    }

    /// Per function: the branches in its callers that decide whether it
    /// runs, when every call to it is under a rank-dependent branch
    /// (through any number of callers); empty otherwise.
    fn entry_guards(&self) -> Vec<BTreeSet<Branch>> {
        let n = self.p.fns.len();
        let mut callers: Vec<Vec<(usize, InstId)>> = vec![Vec::new(); n];
        for (h, list) in self.p.calls.iter().enumerate() {
            for &(i, g) in list {
                callers[g].push((h, i));
            }
        }
        let mut entry: Vec<BTreeSet<Branch>> = vec![BTreeSet::new(); n];
        // Guards only grow, each round adds one, so this settles.
        for _ in 0..=n.min(PROGRAM_ROUNDS * 4) {
            let mut changed = false;
            for g in 0..n {
                if self.p.address_taken.contains(&g) || self.p.fns[g].name == "main" {
                    continue;
                }
                let mut all = BTreeSet::new();
                let mut every = !callers[g].is_empty();
                for &(h, i) in &callers[g] {
                    let mut here: BTreeSet<Branch> = self.guards_of(h, i).into_iter().collect();
                    here.extend(entry[h].iter().copied());
                    if !here.iter().any(|b| self.cond(*b).per_rank()) {
                        every = false;
                        break;
                    }
                    all.extend(here);
                }
                if !every {
                    all.clear();
                }
                if all != entry[g] {
                    entry[g] = all;
                    changed = true;
                }
            }
            if !changed {
                break;
            }
        }
        entry
    }

    /// Groups branches by source line (per function), the dependences of
    /// each group merged; keeps groups `keep` accepts; in source order.
    fn by_line(
        &self,
        branches: impl IntoIterator<Item = Branch>,
        keep: impl Fn(&Deps) -> bool,
    ) -> Vec<(usize, Span, Deps)> {
        let mut groups: BTreeMap<(usize, String, u32), (Span, Deps)> = BTreeMap::new();
        for b in branches {
            let s = self.branch_span(b);
            let d = self.cond(b);
            let key = (b.0, s.file.clone(), s.line);
            let slot = groups
                .entry(key)
                .or_insert_with(|| (s.clone(), Deps::default()));
            if s.column < slot.0.column {
                slot.0 = s;
            }
            slot.1.join(d);
        }
        let mut out: Vec<(usize, Span, Deps)> = groups
            .into_iter()
            .filter(|(_, (_, d))| keep(d))
            .map(|((h, ..), (s, d))| (h, s, d))
            .collect();
        out.sort_by(|a, b| {
            (&a.1.file, a.1.line, a.1.column).cmp(&(&b.1.file, b.1.line, b.1.column))
        });
        out
    }

    /// Whether every path of branch `(h, a)` to where they meet makes the
    /// same collectives ([`crate::balance`]): then the branch decides
    /// nothing about them, whatever its condition.
    fn balanced(&self, (h, a): Branch, reaches_collective: &[bool]) -> bool {
        let f = &self.p.fns[h];
        let shape = &self.shapes[h];
        let tokens = |b: BlockId| -> Option<Vec<Token>> {
            let block = &f.blocks[b as usize];
            let mut out = Vec::new();
            for i in block.first..block.end {
                match &f.insts[i as usize].op {
                    Op::Call(Callee::Named(name)) if is_collective(name) => {
                        out.push(Token::Collective(name.clone()))
                    }
                    Op::Call(Callee::Indirect) => return None,
                    Op::Call(_) => {
                        if let Some(&g) = shape.callee.get(&i) {
                            if reaches_collective[g] {
                                out.push(Token::Call(g));
                            }
                        }
                    }
                    _ => {}
                }
            }
            Some(out)
        };
        balanced(&shape.succs, a, shape.joins[a as usize], &tokens)
    }

    fn collectives(&self) -> Vec<DivergentCollective> {
        let entry = self.entry_guards();
        let reaches_collective = self.reaches_collective();
        let mut out = Vec::new();
        for (fi, f) in self.p.fns.iter().enumerate() {
            for &(site, i) in &self.p.sites[fi] {
                let Some(name) = f.callee(i) else { continue };
                if !is_collective(name)
                    || self.p.single_member.contains(&site)
                    || self.uneven[fi].contains(&i)
                {
                    continue;
                }
                let mut all: BTreeSet<Branch> = self.guards_of(fi, i).into_iter().collect();
                all.extend(entry[fi].iter().copied());
                all.retain(|b| !self.balanced(*b, &reaches_collective));
                let branches: Vec<GuardingBranch> = self
                    .by_line(all, Deps::per_rank)
                    .into_iter()
                    .map(|(_, span, d)| GuardingBranch {
                        span,
                        depends_on: d.list(),
                    })
                    .collect();
                if branches.is_empty() {
                    continue;
                }
                out.push(DivergentCollective {
                    site,
                    call: name.to_owned(),
                    function: f.shown_name().into_owned(),
                    span: (self.span)(f, f.insts[i as usize].loc),
                    branches,
                    rank_tests: self.rank_tests_on_every_path(fi, site, i),
                });
            }
        }
        self.keep_rank_tests_of_lone_sites(&mut out);
        out
    }

    /// Per function: whether it makes MPI calls, directly or through the
    /// functions it calls.
    fn reaches_mpi(&self) -> Vec<bool> {
        self.reaches(|fi| !self.p.sites[fi].is_empty())
    }

    /// Per function: whether it makes collectives, directly or through the
    /// functions it calls. Only those can make a branch's paths differ
    /// (PARCOACH compares sequences of collectives): a helper that calls
    /// `MPI_Error_string` on one side of a branch decides nothing.
    fn reaches_collective(&self) -> Vec<bool> {
        self.reaches(|fi| {
            self.p.sites[fi]
                .iter()
                .any(|(_, i)| self.p.fns[fi].callee(*i).is_some_and(is_collective))
        })
    }

    /// Per function: whether it, or a function it calls, is one `start`
    /// accepts.
    fn reaches(&self, start: impl Fn(usize) -> bool) -> Vec<bool> {
        let n = self.p.fns.len();
        let mut reaches: Vec<bool> = (0..n).map(start).collect();
        for _ in 0..n {
            let mut changed = false;
            for g in 0..n {
                if !reaches[g] && self.p.calls[g].iter().any(|(_, h)| reaches[*h]) {
                    reaches[g] = true;
                    changed = true;
                }
            }
            if !changed {
                break;
            }
        }
        reaches
    }

    fn input_branches(&self) -> Vec<InputBranch> {
        let reaches = self.reaches_mpi();
        let mut out = Vec::new();
        for (fi, f) in self.p.fns.iter().enumerate() {
            let mut deciding: BTreeSet<Branch> = BTreeSet::new();
            let mpi_insts = self.p.sites[fi].iter().map(|(_, i)| *i);
            let mpi_calls = self.p.calls[fi]
                .iter()
                .filter(|(_, g)| reaches[*g])
                .map(|(i, _)| *i);
            for i in mpi_insts.chain(mpi_calls) {
                deciding.extend(self.guards_of(fi, i));
            }
            for (_, span, d) in self.by_line(deciding, |d| !d.inputs.is_empty()) {
                out.push(InputBranch {
                    span,
                    inputs: d.inputs.into_iter().collect(),
                    function: f.shown_name().into_owned(),
                });
            }
        }
        out
    }
}
