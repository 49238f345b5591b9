//! The static report: what `mbhybrid analyze` prints and what `mbhybrid
//! build` stores in the site table ([`SiteTable::analysis`]).
//!
//! [`SiteTable::analysis`]: crate::site::SiteTable::analysis
//!
//! It describes the program as `mbh-static` saw its LLVM IR: the functions,
//! their natural loops (with nesting and, for loops that contain wildcard
//! receives, whether they are abstracted and why), the zones between
//! collective calls, the wildcard sites, the class of every MPI call, and
//! the MPI calls the runtime does not handle. In `OUT.mbh.json` it is the
//! `analysis` object:
//!
//! ```json
//! {"analysis": {
//!   "functions": [{"name": "main", "symbol": "main", "file": "app.c", "line": 5, "mpi_calls": 6,
//!                  "loops": [1, 2], "always_collective": false,
//!                  "contains_wildcards": true, "calls_unknown": false,
//!                  "irreducible": false}],
//!   "loops": [{"id": 1, "function": "main",
//!              "span": {"file": "app.c", "line": 12, "column": 5},
//!              "end_line": 17, "depth": 1, "parent": null,
//!              "wildcard_sites": [4], "through_calls": [],
//!              "decision": "abstract", "marker": "abstract",
//!              "reason": "loop at app.c:12 abstracted: the sender only indexes `results`"}],
//!   "zones": [{"id": 1, "name": "app.c:7", "function": "main", "opened_by": "MPI_Init",
//!              "span": {"file": "app.c", "line": 7, "column": 3}, "bound": null,
//!              "wildcard_sites": [4]}],
//!   "wildcards": [{"site": 4, "call": "MPI_Recv", "function": "main",
//!                  "span": {"file": "app.c", "line": 15, "column": 7},
//!                  "source": "MPI_ANY_SOURCE", "tag": "0", "kind": "any_source",
//!                  "loop": 1}],
//!   "calls": [{"site": 4, "class": "receive", "zone_boundary": false}],
//!   "unsupported": [],
//!   "notes": []}}
//! ```
//!
//! Function names (`name`, `function`, `through_calls`, `opened_by`) are
//! shown as the source spells them, demangled for C++
//! ([`demangle`](crate::demangle)); `symbol` keeps the linkage name.
//!
//! Ids: `site` is the id of the site table ([`Site::id`](crate::site::Site::id));
//! loop and zone ids are numbered from 1 in the order the sources were
//! given, function by function, and are what the `MPI_Pcontrol` markers
//! carry (`MPI_Pcontrol(7301, loop_id)`, `MPI_Pcontrol(7303, zone_id, k)`).
//! A zone's `name` (`file:line` of the call that opens it) is what users
//! write in `mbhybrid.toml` and `--zone-bound`.

use serde::{Deserialize, Serialize};

/// `MPI_Pcontrol` level: entering a loop chosen for abstraction.
pub const PCONTROL_ABSTRACT_ENTER: i32 = 7301;
/// `MPI_Pcontrol` level: leaving a loop chosen for abstraction.
pub const PCONTROL_ABSTRACT_EXIT: i32 = 7302;
/// `MPI_Pcontrol` level: a zone starts (`MPI_Pcontrol(7303, zone_id, k)`).
pub const PCONTROL_ZONE: i32 = 7303;
/// `MPI_Pcontrol` level: entering another loop with wildcard sites.
pub const PCONTROL_LOOP_ENTER: i32 = 7304;
/// `MPI_Pcontrol` level: leaving another loop with wildcard sites.
pub const PCONTROL_LOOP_EXIT: i32 = 7305;

/// Everything `mbh-static` found in one program.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct StaticReport {
    /// The functions defined in the program's IR, in source order.
    pub functions: Vec<FunctionInfo>,
    /// Every natural loop, numbered by [`LoopInfo::id`].
    pub loops: Vec<LoopInfo>,
    /// Every zone, numbered by [`ZoneInfo::id`].
    pub zones: Vec<ZoneInfo>,
    /// Every wildcard site (receives and probes from any source or with any
    /// tag, or maybe so; `Waitany`, `Testany`, `Waitsome`, `Testsome`).
    pub wildcards: Vec<WildcardSite>,
    /// The class of every MPI call site.
    pub calls: Vec<CallInfo>,
    /// MPI calls the runtime does not handle (pre-flight warnings).
    pub unsupported: Vec<UnsupportedCall>,
    /// Other things worth saying: irreducible control flow, calls through
    /// function pointers in loops, zone bounds that name no zone.
    pub notes: Vec<Note>,
    /// Buffer arguments the analysis proves wrong for their datatype or
    /// count. Absent in the tables of older builds.
    #[serde(default)]
    pub buffer_errors: Vec<BufferError>,
    /// Buffers whose object the analysis knows, at calls whose count or
    /// datatype it cannot check (a derived datatype, a count computed at
    /// run time): the runtime checks those calls against the room left in
    /// the object. Absent in the tables of older builds.
    #[serde(default)]
    pub buffer_rooms: Vec<BufferRoom>,
    /// Collective calls that some ranks may reach and others not, because
    /// a branch guarding them depends on the rank or on per-rank data
    /// (`collective-divergence`). Absent in the tables of older builds.
    #[serde(default)]
    pub divergent_collectives: Vec<DivergentCollective>,
    /// Branches that decide whether MPI calls run and that depend on the
    /// program's input (`argv`, `getenv`, files, standard input, `rand`,
    /// `time`): a verdict holds for the input it ran with.
    #[serde(default)]
    pub input_branches: Vec<InputBranch>,
}

/// What a branch condition depends on.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case", tag = "kind", content = "what")]
pub enum Dependence {
    /// The rank (`MPI_Comm_rank`'s result), directly or through
    /// arithmetic: ranks disagree.
    Rank,
    /// The program's input, named as the source says (`argv[1]`,
    /// `getenv("N")`, `rand()`, `time()`, `fscanf`, `read`).
    Input(String),
    /// Data a point-to-point receive wrote (it may differ by rank).
    Received,
}

/// Functions whose result is an input that changes from run to run and
/// from rank to rank (clocks and random numbers): a [`Dependence::Input`]
/// named `name()`. Every other input is given by the user (arguments,
/// environment, files) and is the same on every run with the same input.
pub const CLOCK_INPUTS: &[&str] = &[
    "rand",
    "random",
    "rand_r",
    "lrand48",
    "drand48",
    "time",
    "clock",
    "gettimeofday",
    "clock_gettime",
    "MPI_Wtime",
];

impl Dependence {
    /// The input a clock or random-number function `name` gives.
    pub fn clock(name: &str) -> Dependence {
        Dependence::Input(format!("{name}()"))
    }

    /// Whether it is an input the user gives (arguments, environment,
    /// files), not the rank, received data, a clock or a random number.
    pub fn is_given_input(&self) -> bool {
        match self {
            Dependence::Input(name) => !CLOCK_INPUTS
                .iter()
                .any(|clock| name.strip_suffix("()") == Some(clock)),
            _ => false,
        }
    }
}

/// A branch that decides whether a call runs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct GuardingBranch {
    /// The branch's condition (its line).
    pub span: Span,
    /// What the condition depends on, at least one entry.
    pub depends_on: Vec<Dependence>,
}

impl GuardingBranch {
    /// "the branch at app.c:10 depends on the rank and `argv[1]`".
    pub fn reason(&self) -> String {
        let what: Vec<String> = self
            .depends_on
            .iter()
            .map(|d| match d {
                Dependence::Rank => "the rank".to_string(),
                Dependence::Input(name) => name.clone(),
                Dependence::Received => "received data".to_string(),
            })
            .collect();
        format!(
            "the branch at {} depends on {}",
            self.span,
            what.join(" and ")
        )
    }
}

impl DivergentCollective {
    /// One sentence: the call and every branch that decides it.
    pub fn message(&self) -> String {
        let reasons: Vec<String> = self.branches.iter().map(GuardingBranch::reason).collect();
        format!(
            "`{}` may not be made alike by every rank (some may skip it, or make it in another order): {}",
            self.call,
            reasons.join("; ")
        )
    }
}

/// A collective whose execution ranks may disagree on.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DivergentCollective {
    /// The call's site id.
    pub site: u32,
    /// The MPI function (`MPI_Allreduce`).
    pub call: String,
    /// The function the call is in.
    pub function: String,
    /// The call's location.
    pub span: Span,
    /// The branches it is control-dependent on that depend on the rank or
    /// on received data (uniform ones, such as the size or a broadcast
    /// value, are left out).
    pub branches: Vec<GuardingBranch>,
    /// Tests of the `MPI_COMM_WORLD` rank against constants that every
    /// path to the call passes, so that only the ranks passing all of
    /// them can make it (`if (rank == 0 && argc > 2) MPI_Barrier(..)`).
    /// Recorded only for a collective on `MPI_COMM_WORLD` that is the
    /// program's only rank-guarded site of its MPI function, so that no
    /// other site can make up for it on the other ranks: then with `n`
    /// ranks, when [`ranks_passing`] is neither empty nor every rank, the
    /// ranks cannot agree on the call whenever one reaches it.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub rank_tests: Vec<RankTest>,
}

/// `rank OP value`, a test of a rank against a constant.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RankTest {
    /// The branch's condition (its line).
    pub span: Span,
    /// The comparison, with the rank on its left.
    pub op: RankCmp,
    /// The constant on its right.
    pub value: i64,
}

/// A comparison of a rank with a constant (signed: a rank is never
/// negative, so the analysis turns unsigned tests into these).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RankCmp {
    /// `==`
    Eq,
    /// `!=`
    Ne,
    /// `<`
    Lt,
    /// `<=`
    Le,
    /// `>`
    Gt,
    /// `>=`
    Ge,
}

impl RankTest {
    /// Whether `rank` passes the test.
    pub fn holds(&self, rank: i64) -> bool {
        let v = self.value;
        match self.op {
            RankCmp::Eq => rank == v,
            RankCmp::Ne => rank != v,
            RankCmp::Lt => rank < v,
            RankCmp::Le => rank <= v,
            RankCmp::Gt => rank > v,
            RankCmp::Ge => rank >= v,
        }
    }

    /// `rank == 0`, as the source would say it.
    pub fn describe(&self) -> String {
        let op = match self.op {
            RankCmp::Eq => "==",
            RankCmp::Ne => "!=",
            RankCmp::Lt => "<",
            RankCmp::Le => "<=",
            RankCmp::Gt => ">",
            RankCmp::Ge => ">=",
        };
        format!("rank {op} {}", self.value)
    }
}

/// The ranks of `0..n` that pass every test.
pub fn ranks_passing(tests: &[RankTest], n: usize) -> Vec<i64> {
    (0..n as i64)
        .filter(|&r| tests.iter().all(|t| t.holds(r)))
        .collect()
}

/// A branch on the program's input that decides whether MPI calls run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct InputBranch {
    /// The branch's condition (its line).
    pub span: Span,
    /// The inputs it depends on (`argv[1]`), as in [`Dependence::Input`].
    pub inputs: Vec<String>,
    /// The function it is in.
    pub function: String,
}

/// How a call uses a buffer: which of its buffers a [`BufferRoom`] is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum BufferAccess {
    /// A send buffer: read.
    Read,
    /// A receive buffer: written.
    Write,
    /// One buffer both sent and received (`MPI_Bcast`,
    /// `MPI_Sendrecv_replace`).
    ReadWrite,
}

/// The room a call's buffer has in its object, known statically.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BufferRoom {
    /// The call's site id.
    pub site: u32,
    /// Which of the call's buffers.
    pub access: BufferAccess,
    /// Bytes from the buffer's address to the end of its object.
    pub bytes: u64,
    /// The object as the source names it (`p`, `grid`).
    pub object: String,
    /// Where the object is declared, when debug information says.
    pub declared: Option<Span>,
}

/// What is wrong with a call's buffer argument.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum BufferErrorKind {
    /// The buffer's C type is not the MPI datatype's: `int x;
    /// MPI_Send(&x, 1, MPI_DOUBLE, ...)`.
    Type,
    /// `count` elements of the datatype reach past the end of the
    /// buffer's object: `int buf[1000]; MPI_Recv(buf, 2000, MPI_INT, ...)`.
    Overflow,
}

/// A buffer argument proven wrong at one call site, before any run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BufferError {
    /// The call's site id.
    pub site: u32,
    /// The MPI function (`MPI_Send`).
    pub call: String,
    /// The function the call is in.
    pub function: String,
    /// The call's location.
    pub span: Span,
    /// What is wrong.
    pub kind: BufferErrorKind,
    /// Which buffer: `send buffer`, `receive buffer`, `buffer`.
    pub argument: String,
    /// The buffer's object as the source names it (`x`, `buf`, `grid[2]`).
    pub object: String,
    /// Where that object is declared, when debug information says.
    pub declared: Option<Span>,
    /// The datatype argument as written (`MPI_DOUBLE`).
    pub datatype: String,
    /// One sentence: what is wrong, with the types or sizes
    /// (`` `x` is a `int` (4 bytes) but the datatype is `MPI_DOUBLE` (8 bytes) ``).
    pub message: String,
}

/// A place in the source.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Span {
    /// The file, relative to the directory `build`/`analyze` ran in when
    /// below it (as in the site table); empty when unknown.
    pub file: String,
    /// 1-based line; 0 when unknown.
    pub line: u32,
    /// 1-based column; 0 when unknown.
    pub column: u32,
}

impl Span {
    /// `file:line:column` as gcc prints a warning's place; without a line,
    /// the file and `function` (the one the place is in, `""` when
    /// unknown) instead ([`crate::place`](mod@crate::place)).
    pub fn gcc_place(&self, function: &str) -> String {
        match self.line {
            0 => crate::place(&self.file, 0, 0, Some(function)),
            line => format!("{}:{line}:{}", self.file, self.column),
        }
    }
}

impl std::fmt::Display for Span {
    /// `file:line`, the way users name a place in `mbhybrid.toml`; the
    /// file alone when the line is unknown ([`crate::place`](mod@crate::place)).
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&crate::place(&self.file, self.line, 0, None))
    }
}

/// One defined function.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FunctionInfo {
    /// Its name as the source spells it: the symbol demangled for C++
    /// ([`demangle`](crate::demangle): `ns::reduce<int>(int*, int)`), the
    /// name every other `function` field of the report uses.
    pub name: String,
    /// The IR symbol name, mangled for C++ (what `nm` lists); the same as
    /// `name` for C. Empty in reports written before it was recorded.
    #[serde(default)]
    pub symbol: String,
    /// Where it is defined (its first located instruction).
    pub file: String,
    /// The line of its first located instruction; 0 when unknown.
    pub line: u32,
    /// Direct MPI calls in its body.
    pub mpi_calls: u32,
    /// Ids of its loops.
    pub loops: Vec<u32>,
    /// Every path from its entry to a return passes a collective call
    /// (directly or through calls): its call sites end a zone.
    pub always_collective: bool,
    /// It contains wildcard sites, directly or through the functions it
    /// calls.
    pub contains_wildcards: bool,
    /// It calls through a function pointer (the callee is unknown).
    pub calls_unknown: bool,
    /// Its control flow is irreducible somewhere (a cycle with two entries):
    /// no loop is claimed for such a cycle.
    pub irreducible: bool,
}

/// What the analysis decided for a loop.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LoopDecision {
    /// The loop has no wildcard site, directly or through calls.
    NoWildcards,
    /// Chosen for abstraction: marked with `MPI_Pcontrol(7301/7302)`.
    Abstract,
    /// Has wildcard sites but is not abstracted: marked with
    /// `MPI_Pcontrol(7304/7305)` (abstracted only under
    /// `--loop-abstraction all`).
    Explore,
}

/// The markers build put around a loop.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LoopMarker {
    /// `MPI_Pcontrol(7301, id)` on entry, `(7302, id)` on exit.
    Abstract,
    /// `MPI_Pcontrol(7304, id)` on entry, `(7305, id)` on exit.
    Explore,
    /// None: the loop has no wildcard sites, or an edge could not be
    /// instrumented (see [`LoopInfo::reason`]).
    None,
}

/// One natural loop.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LoopInfo {
    /// Program-wide id, from 1; the `loop_id` of its markers.
    pub id: u32,
    /// The function it is in.
    pub function: String,
    /// Its header's first source location (the loop statement's line).
    pub span: Span,
    /// The last line any instruction of its body is attributed to.
    pub end_line: u32,
    /// 1 for an outermost loop, 2 for a loop in it, and so on.
    pub depth: u32,
    /// The id of the innermost loop that contains it.
    pub parent: Option<u32>,
    /// Site ids of the wildcard sites in its body (nested loops included).
    pub wildcard_sites: Vec<u32>,
    /// Functions called in its body that contain wildcard sites.
    pub through_calls: Vec<String>,
    /// What the analysis decided.
    pub decision: LoopDecision,
    /// What `build` inserted (`analyze` reports what it would insert).
    pub marker: LoopMarker,
    /// The decision in words, naming the source lines it rests on.
    pub reason: String,
}

/// One zone: a region of a function that starts after a collective call
/// (or a call to a function that always calls one) and runs until the next.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ZoneInfo {
    /// Program-wide id, from 1; the `zone_id` of `MPI_Pcontrol(7303, zone_id, k)`.
    pub id: u32,
    /// `file:line` of the call that opens it (stable across builds of the
    /// same sources; the key of `mbhybrid.toml`'s `[zones]`).
    pub name: String,
    /// The function it is in.
    pub function: String,
    /// The call that opens it (`MPI_Barrier`, or a function's name).
    pub opened_by: String,
    /// That call's location.
    pub span: Span,
    /// The mixing bound configured for it, if any (negative: unbounded).
    pub bound: Option<i64>,
    /// Site ids of the wildcard sites reachable in it before the next zone
    /// boundary, in this function.
    pub wildcard_sites: Vec<u32>,
}

/// Why a site is a wildcard site.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum WildcardKind {
    /// The source is `MPI_ANY_SOURCE`.
    AnySource,
    /// The source is specific but the tag is `MPI_ANY_TAG`.
    AnyTag,
    /// The source or tag is not a constant the analysis could resolve, so
    /// it may be a wildcard.
    MaybeWildcard,
    /// `MPI_Waitany`, `MPI_Testany`, `MPI_Waitsome` or `MPI_Testsome`.
    AnyCompletion,
}

/// One wildcard site.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct WildcardSite {
    /// Its site id.
    pub site: u32,
    /// The MPI function called.
    pub call: String,
    /// The function it is in.
    pub function: String,
    /// Its location.
    pub span: Span,
    /// The source argument as resolved (`MPI_ANY_SOURCE`, `3`,
    /// `MPI_ANY_SOURCE or 1`, `unknown`); empty for completion calls.
    pub source: String,
    /// The tag argument, likewise.
    pub tag: String,
    /// Why it is a wildcard site.
    pub kind: WildcardKind,
    /// The innermost loop that contains it.
    #[serde(rename = "loop")]
    pub in_loop: Option<u32>,
    /// For `AnyCompletion` sites: whether the order its requests complete
    /// in can change what the program does.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub completion_order: Option<CompletionOrder>,
}

/// Whether the order in which an any-completion call's requests complete
/// (which one `MPI_Waitany` returns first) can change what the program
/// does. Which message each request takes does not depend on it (the
/// request was matched when the message arrived, MPI-4.0 §3.5); only what
/// the program does with the index can.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "decision")]
pub enum CompletionOrder {
    /// The index it returns, and the status of that request, decide no
    /// branch, reach no MPI call and stay in memory the analysis names
    /// (`collected`: the objects filled slot by slot): every order leaves
    /// the program in the same state, so the order is no choice.
    Irrelevant {
        /// The objects filled slot by slot, named for people.
        collected: Vec<String>,
    },
    /// It may change what the program does: why.
    Matters {
        /// Where the index goes, in words.
        reason: String,
    },
}

/// The class of an MPI function.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CallClass {
    /// Point-to-point send (any mode, blocking or not, persistent init).
    Send,
    /// Point-to-point receive.
    Receive,
    /// `MPI_Sendrecv`, `MPI_Sendrecv_replace`.
    SendReceive,
    /// Probe (`MPI_Probe`, `MPI_Iprobe`, matched probes).
    Probe,
    /// Request completion (`Wait*`, `Test*`, `Start*`, `Request_free`, `Cancel`).
    Completion,
    /// Collective communication or synchronisation.
    Collective,
    /// Communicator, group and topology management.
    Communicator,
    /// Datatype management.
    Datatype,
    /// `MPI_Init`, `MPI_Finalize` and anything else.
    Other,
}

/// One MPI call site with its class.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CallInfo {
    /// Its site id.
    pub site: u32,
    /// Its class.
    pub class: CallClass,
    /// It ends a zone (a blocking collective, a collective communicator
    /// constructor, `MPI_Init` or `MPI_Finalize`).
    pub zone_boundary: bool,
}

/// An MPI call the runtime does not handle (see
/// [`support::unsupported_reason`](crate::support::unsupported_reason)).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct UnsupportedCall {
    /// Its site id.
    pub site: u32,
    /// The MPI function.
    pub call: String,
    /// The function it is in.
    pub function: String,
    /// Its location.
    pub span: Span,
    /// Why and what happens.
    pub reason: String,
}

/// Something the analysis wants the user to know.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Note {
    /// Where it applies.
    pub span: Span,
    /// What it says, one sentence.
    pub message: String,
}

impl StaticReport {
    /// The pre-flight warnings, one line each in the compiler style
    /// `file:line:col: warning: message`: buffer errors first, then
    /// unsupported MPI calls, then the notes.
    pub fn warnings(&self) -> Vec<String> {
        let buffers = self.buffer_errors.iter().map(|b| {
            let declared = b
                .declared
                .as_ref()
                .map(|d| format!(" (`{}` is declared at {d})", b.object))
                .unwrap_or_default();
            format!(
                "{}: warning: `{}` {}: {}{declared}",
                b.span.gcc_place(&b.function),
                b.call,
                b.argument,
                b.message
            )
        });
        let unsupported = self.unsupported.iter().map(|u| {
            format!(
                "{}: warning: `{}` is {}",
                u.span.gcc_place(&u.function),
                u.call,
                u.reason
            )
        });
        let notes = self
            .notes
            .iter()
            .map(|n| format!("{}: warning: {}", n.span.gcc_place(""), n.message));
        // Collectives some ranks may skip: only those behind a
        // branch whose paths make different collectives (`mbh-static`'s
        // balance check, after PARCOACH), so `if (rank == 0)
        // MPI_Barrier(c); else MPI_Barrier(c);` says nothing. `verify`
        // confirms or clears each from a run (verdict/src/divergence.rs).
        let divergent = self.divergent_collectives.iter().map(|d| {
            format!(
                "{}: warning: {} [MBH0019]",
                d.span.gcc_place(&d.function),
                d.message()
            )
        });
        buffers
            .chain(unsupported)
            .chain(notes)
            .chain(divergent)
            .collect()
    }

    /// The loop with id `id`.
    pub fn loop_by_id(&self, id: u32) -> Option<&LoopInfo> {
        self.loops.iter().find(|l| l.id == id)
    }

    /// The zone with id `id`.
    pub fn zone_by_id(&self, id: u32) -> Option<&ZoneInfo> {
        self.zones.iter().find(|z| z.id == id)
    }
}

#[cfg(test)]
mod tests {

    #[test]
    fn clocks_and_random_numbers_are_no_given_input() {
        assert!(Dependence::Input("argv[1]".into()).is_given_input());
        assert!(Dependence::Input("getenv(\"N\")".into()).is_given_input());
        assert!(Dependence::Input("fscanf".into()).is_given_input());
        assert!(!Dependence::clock("time").is_given_input());
        assert!(!Dependence::clock("MPI_Wtime").is_given_input());
        assert!(!Dependence::Rank.is_given_input());
        assert!(!Dependence::Received.is_given_input());
    }

    use super::*;

    #[test]
    fn round_trips_through_json_and_warns() {
        let span = Span {
            file: "app.c".into(),
            line: 12,
            column: 5,
        };
        let report = StaticReport {
            loops: vec![LoopInfo {
                id: 1,
                function: "main".into(),
                span: span.clone(),
                end_line: 17,
                depth: 1,
                parent: None,
                wildcard_sites: vec![4],
                through_calls: vec![],
                decision: LoopDecision::Abstract,
                marker: LoopMarker::Abstract,
                reason: "abstracted".into(),
            }],
            wildcards: vec![WildcardSite {
                site: 4,
                call: "MPI_Recv".into(),
                function: "main".into(),
                span: span.clone(),
                source: "MPI_ANY_SOURCE".into(),
                tag: "0".into(),
                kind: WildcardKind::AnySource,
                in_loop: Some(1),
                completion_order: None,
            }],
            unsupported: vec![UnsupportedCall {
                site: 5,
                call: "MPI_Isendrecv".into(),
                function: "main".into(),
                span: span.clone(),
                reason: "not supported".into(),
            }],
            ..Default::default()
        };
        let text = serde_json::to_string(&report).unwrap();
        assert!(text.contains(r#""decision":"abstract""#), "{text}");
        assert!(text.contains(r#""loop":1"#), "{text}");
        let back: StaticReport = serde_json::from_str(&text).unwrap();
        assert_eq!(back, report);
        assert_eq!(
            report.warnings(),
            ["app.c:12:5: warning: `MPI_Isendrecv` is not supported"]
        );
        assert_eq!(span.to_string(), "app.c:12");
        assert_eq!(report.loop_by_id(1).unwrap().end_line, 17);
        assert!(report.zone_by_id(1).is_none());
    }

    #[test]
    fn a_divergent_collective_is_a_build_warning_with_its_code() {
        let at = |line| Span {
            file: "app.c".into(),
            line,
            column: 5,
        };
        let report = StaticReport {
            divergent_collectives: vec![DivergentCollective {
                site: 3,
                call: "MPI_Barrier".into(),
                function: "main".into(),
                span: at(14),
                branches: vec![GuardingBranch {
                    span: at(12),
                    depends_on: vec![Dependence::Rank, Dependence::Input("argv[1]".into())],
                }],
                rank_tests: Vec::new(),
            }],
            ..StaticReport::default()
        };
        assert_eq!(
            report.warnings(),
            ["app.c:14:5: warning: `MPI_Barrier` may not be made alike by every rank (some may skip it, or make it in another order): the branch at app.c:12 depends on the rank and argv[1] [MBH0019]"]
        );
    }
}
