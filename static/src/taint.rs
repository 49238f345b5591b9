//! Where the outcomes of wildcard receives go: the loop-abstraction rule.
//!
//! A flow-insensitive taint analysis over one function. The outcomes of
//! the wildcard sites in a region (a loop body, or a whole function called
//! from a loop) are the memory they write: the receive buffer (`DATA`), the
//! status (`MPI_SOURCE` is `SENDER`, `MPI_TAG` is `TAG`, told apart by the
//! byte offset read), the index of `Waitany` (`INDEX`), flags and counts
//! (`OTHER`). Taint follows loads, stores, arithmetic, casts, `phi`,
//! `select`, `memcpy` and MPI calls (a call reading a tainted value taints
//! what it writes), through memory objects: local variables (`alloca`),
//! heap blocks (`malloc` and friends, through the local pointer variables
//! that hold them), globals, parameters, and "unknown".
//!
//! The outcomes *leak* when a tainted value
//!
//! * decides a conditional branch, a `switch` or an indirect branch
//!   (anywhere in the function: inside the loop it changes what the loop
//!   does next, after it what the program does);
//! * is read by an MPI call outside the region (an argument, or the
//!   contents of a buffer or status it reads);
//! * is returned, stored to memory the analysis does not follow (globals,
//!   parameters, pointers it cannot resolve), or its object's address is
//!   stored away;
//! * is passed to a function that is not MPI and not on a short list of
//!   C library functions with no effect on control flow (`printf`, `free`,
//!   math), or through a function pointer.
//!
//! Under [`Follow::CompletionOrder`] only one outcome is followed: which
//! request an any-completion call (`MPI_Waitany`, `MPI_Testany`, the
//! `some` forms) returned, that is its index and the status of that
//! request. The flag and count of the `Test` and `some` forms say whether
//! something completed, not which, and an index compared with
//! `MPI_UNDEFINED` only says whether any request was still active: the
//! order changes neither. MPI calls inside the region count as leaks too
//! (a reply sent to the sender of whichever request came first is sent
//! in another order when another came first), and so does printing (the
//! output of another order differs).
//!
//! One store is exempt: a store whose address is indexed only by the
//! sender (or the completed request's index) and whose value is only the
//! received data, the sender or that index (`results[status.MPI_SOURCE] =
//! value`): whatever order the messages arrive in, each sender's slot ends
//! with that sender's message, so the collection is the same. The object
//! stored to stays untainted and is named in the explanation.

use std::collections::{BTreeSet, HashMap};

use mbh_trace::static_report::CallClass;

use crate::consts::{LocalVars, MpiConstants};
use crate::ir::{BlockId, Callee, Function, InstId, Op, Val};
use crate::mpi::{self, Role};
pub(crate) use crate::pointers::{Addr, Obj};
use crate::pointers::{Pointers, ALLOC};

pub(crate) const DATA: u8 = 1;
pub(crate) const SENDER: u8 = 2;
pub(crate) const TAG: u8 = 4;
pub(crate) const OTHER: u8 = 8;
pub(crate) const INDEX: u8 = 16;
/// On objects only: a status, whose fields are told apart when read.
pub(crate) const STATUS: u8 = 32;

/// How a call is treated.
#[derive(Debug, Clone)]
pub(crate) enum CallKind {
    Mpi(mpi::MpiFunction),
    /// `memcpy`/`memmove`: (dst, src) argument indices.
    Copy,
    /// `memset`.
    Set,
    /// Allocates a heap block.
    Alloc,
    /// Reads its arguments, writes nothing, decides nothing MPI sees.
    Pure,
    /// Writes into its first argument from the others (`sprintf`).
    WritesFirst,
    /// Debug and lifetime intrinsics: nothing.
    Ignore,
    /// Anything else.
    Opaque,
}

const PURE: &[&str] = &[
    "printf",
    "fprintf",
    "puts",
    "putchar",
    "fputs",
    "fputc",
    "putc",
    "fflush",
    "fwrite",
    "vprintf",
    "vfprintf",
    "perror",
    "free",
    // C++'s `operator delete` and `operator delete[]` (plain and sized).
    "_ZdlPv",
    "_ZdaPv",
    "_ZdlPvm",
    "_ZdaPvm",
    "abs",
    "labs",
    "llabs",
    "fabs",
    "fabsf",
    "sqrt",
    "sqrtf",
    "pow",
    "powf",
    "exp",
    "expf",
    "log",
    "logf",
    "log2",
    "log10",
    "sin",
    "cos",
    "tan",
    "sinf",
    "cosf",
    "floor",
    "ceil",
    "floorf",
    "ceilf",
    "round",
    "fmax",
    "fmin",
    "fmod",
    "strlen",
    "strcmp",
    "strncmp",
    "memcmp",
    "atoi",
    "atol",
    "atof",
    "strtol",
    "strtod",
    "usleep",
    "sleep",
    "time",
    "clock",
    "rand",
    "srand",
    "assert",
    "__assert_fail",
    "exit",
    "abort",
];
/// The [`PURE`] functions that write the program's output.
const OUTPUT: &[&str] = &[
    "printf", "fprintf", "puts", "putchar", "fputs", "fputc", "putc", "fwrite", "vprintf",
    "vfprintf", "perror",
];
const WRITES_FIRST: &[&str] = &[
    "sprintf", "snprintf", "strcpy", "strncpy", "strcat", "strncat",
];

pub(crate) fn call_kind(name: &str) -> CallKind {
    if let Some(f) = mpi::lookup(name) {
        return CallKind::Mpi(f);
    }
    if let Some(intrinsic) = name.strip_prefix("llvm.") {
        return if intrinsic.starts_with("memcpy") || intrinsic.starts_with("memmove") {
            CallKind::Copy
        } else if intrinsic.starts_with("memset") {
            CallKind::Set
        } else if intrinsic.starts_with("dbg.")
            || intrinsic.starts_with("lifetime.")
            || intrinsic.starts_with("stack")
            || intrinsic.starts_with("va_")
        {
            CallKind::Ignore
        } else {
            CallKind::Pure
        };
    }
    if ALLOC.contains(&name) {
        CallKind::Alloc
    } else if PURE.contains(&name) {
        CallKind::Pure
    } else if WRITES_FIRST.contains(&name) {
        CallKind::WritesFirst
    } else if name == "memcpy" || name == "memmove" {
        CallKind::Copy
    } else if name == "memset" {
        CallKind::Set
    } else {
        CallKind::Opaque
    }
}

/// Which outcomes a taint run follows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Follow {
    /// Every outcome of the seeds (the loop abstraction rule).
    Outcomes,
    /// Only which request an any-completion seed returned.
    CompletionOrder,
}

/// What one taint run needs.
pub(crate) struct Input<'a> {
    /// Which outcomes are followed.
    pub follow: Follow,
    pub f: &'a Function,
    pub vars: &'a LocalVars,
    /// Where the function's pointers point.
    pub pointers: &'a Pointers,
    pub consts: &'a MpiConstants,
    /// Blocks of the region (the loop body, or every block).
    pub region: &'a [bool],
    /// The wildcard sites in the region whose outcomes are followed.
    pub seeds: &'a [InstId],
    /// For calls in the region to functions with wildcard sites: `Err`
    /// with the reason when their outcomes leave them.
    pub through: &'a dyn Fn(&str) -> Option<Result<(), String>>,
    /// Describes a location for messages (`app.c:50`).
    pub at: &'a dyn Fn(InstId) -> String,
}

/// The result of one taint run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Verdict {
    /// The outcomes stay inside; `collected` names the objects filled by
    /// sender, and `slot_stores` are the stores (and copies) that fill
    /// them.
    Contained {
        collected: Vec<String>,
        slot_stores: Vec<InstId>,
    },
    /// They leak; the reason in words.
    Leaks(String),
}

struct Run<'a, 'b> {
    input: &'b Input<'a>,
    vlab: Vec<u8>,
    olab: HashMap<Obj, u8>,
    collected: BTreeSet<Obj>,
    /// The stores that filled `collected`.
    slot_stores: BTreeSet<InstId>,
    /// The first instruction that wrote an outcome into each object the
    /// analysis does not follow.
    escapes: HashMap<Obj, (InstId, u8)>,
}

/// Runs the analysis.
pub(crate) fn run(input: &Input<'_>) -> Verdict {
    let f = input.f;
    let mut run = Run {
        input,
        vlab: vec![0; f.insts.len()],
        olab: HashMap::new(),
        collected: BTreeSet::new(),
        slot_stores: BTreeSet::new(),
        escapes: HashMap::new(),
    };
    run.seed();
    let mut rounds = 0;
    while run.step() {
        rounds += 1;
        if rounds > 64 {
            return Verdict::Leaks(
                "the analysis did not settle on where the outcomes go (too many rounds)".into(),
            );
        }
    }
    if let Some(reason) = run.sinks() {
        return Verdict::Leaks(reason);
    }
    let mut collected: Vec<String> = run.collected.iter().map(|o| run.name(o)).collect();
    collected.dedup();
    Verdict::Contained {
        collected,
        slot_stores: run.slot_stores.into_iter().collect(),
    }
}

/// What labels say, for messages.
fn what(labels: u8) -> &'static str {
    if labels & DATA != 0 {
        "the received value"
    } else if labels & SENDER != 0 {
        "the sender"
    } else if labels & TAG != 0 {
        "the tag"
    } else if labels & INDEX != 0 {
        "the index of the completed request"
    } else {
        "the outcome of a wildcard receive"
    }
}

impl Run<'_, '_> {
    fn f(&self) -> &Function {
        self.input.f
    }

    fn in_region(&self, i: InstId) -> bool {
        let b: BlockId = self.f().insts[i as usize].block;
        self.input.region[b as usize]
    }

    fn addr(&self, v: &Val) -> Option<Addr> {
        self.input.pointers.addr(v)
    }

    fn val(&self, v: &Val) -> u8 {
        match v {
            Val::Inst(i) => self.vlab[*i as usize],
            _ => 0,
        }
    }

    /// Labels read from `addr` (a status's fields told apart).
    fn read(&self, addr: &Addr) -> u8 {
        let labels = self.olab.get(&addr.obj).copied().unwrap_or(0);
        if labels & STATUS == 0 {
            return labels;
        }
        let consts = self.input.consts;
        let size = consts.status_size as i64;
        let field = match addr.offset {
            Some(o) if addr.scales.iter().all(|s| *s as i64 % size == 0) => {
                Some(o.rem_euclid(size) as u64)
            }
            _ => None,
        };
        let fields = match field {
            Some(f) if f == consts.status_source => SENDER,
            Some(f) if f == consts.status_tag => TAG,
            Some(_) => OTHER,
            None => SENDER | TAG | OTHER,
        };
        (labels & !STATUS) | fields
    }

    /// Labels of a value argument and, for a pointer, what it points to.
    fn arg_labels(&self, v: &Val) -> u8 {
        let mut labels = self.val(v);
        if let Some(a) = self.addr(v) {
            let read = self.read(&Addr { offset: None, ..a });
            labels |= read;
        }
        labels
    }

    fn taint(&mut self, at: InstId, obj: &Obj, labels: u8) -> bool {
        if labels == 0 {
            return false;
        }
        if !obj.is_local() {
            self.escapes.entry(obj.clone()).or_insert((at, labels));
        }
        let slot = self.olab.entry(obj.clone()).or_insert(0);
        let before = *slot;
        *slot |= labels;
        *slot != before
    }

    fn set(&mut self, i: InstId, labels: u8) -> bool {
        let slot = &mut self.vlab[i as usize];
        let before = *slot;
        *slot |= labels;
        *slot != before
    }

    fn name(&self, obj: &Obj) -> String {
        let f = self.f();
        let var = |a: InstId| match &f.insts[a as usize].op {
            Op::Alloca(Some(name)) => Some(name.clone()),
            _ => None,
        };
        match obj {
            Obj::Local(a) => var(*a)
                .map(|n| format!("`{n}`"))
                .unwrap_or_else(|| "a local variable".into()),
            Obj::Heap(call) => {
                // The named local pointer variable that holds it.
                let holder = self
                    .input
                    .vars
                    .stores
                    .iter()
                    .filter(|(_, vals)| vals.contains(&Val::Inst(*call)))
                    .map(|(a, _)| *a)
                    .min()
                    .and_then(var);
                match holder {
                    Some(n) => format!("`{n}`"),
                    None => format!("the memory allocated at {}", (self.input.at)(*call)),
                }
            }
            Obj::Global(g) => format!("`{g}`"),
            Obj::Param(p) => {
                let holder = self
                    .input
                    .vars
                    .stores
                    .iter()
                    .filter(|(_, vals)| vals.contains(&Val::Arg(*p)))
                    .map(|(a, _)| *a)
                    .min()
                    .and_then(var);
                match holder {
                    Some(n) => format!("`{n}`"),
                    None => format!("parameter {}", p + 1),
                }
            }
            Obj::Unknown => "memory it cannot name".into(),
        }
    }

    /// Marks the outputs of the seeds.
    fn seed(&mut self) {
        let f = self.input.f;
        let mut completions_too = false;
        let mut writes: Vec<(InstId, Val, u8)> = Vec::new();
        for &s in self.input.seeds {
            let Some(name) = f.callee(s) else { continue };
            let Some(func) = mpi::lookup(name) else {
                continue;
            };
            let order_only = self.input.follow == Follow::CompletionOrder;
            if !order_only
                && func.arg(Role::Request).is_some()
                && func.class != CallClass::Completion
            {
                completions_too = true;
            }
            for (k, arg) in f.insts[s as usize].ops.iter().enumerate() {
                let label = if order_only {
                    order_label(&func, k)
                } else {
                    seed_label(&func, k)
                };
                if let Some(l) = label {
                    writes.push((s, arg.clone(), l));
                }
            }
        }
        if completions_too {
            // Nonblocking wildcard receives: their statuses come back from
            // the completion calls.
            for (i, inst) in f.insts.iter().enumerate() {
                let Op::Call(Callee::Named(name)) = &inst.op else {
                    continue;
                };
                let Some(func) = mpi::lookup(name) else {
                    continue;
                };
                if func.class != CallClass::Completion {
                    continue;
                }
                for (k, arg) in inst.ops.iter().enumerate() {
                    if let Some(l) = seed_label(&func, k) {
                        writes.push((i as InstId, arg.clone(), l));
                    }
                }
            }
        }
        for (at, arg, labels) in writes {
            if let Some(addr) = self.addr(&arg) {
                self.taint(at, &addr.obj, labels);
            }
        }
    }

    /// One pass over the function; whether anything changed.
    fn step(&mut self) -> bool {
        let f = self.input.f;
        let mut changed = false;
        for (i, inst) in f.insts.iter().enumerate() {
            let i = i as InstId;
            match &inst.op {
                Op::Alloca(_) | Op::Br | Op::Switch | Op::IndirectBr | Op::Ret | Op::Other => {}
                Op::Load => {
                    let mut l = self.val(&inst.ops[0]);
                    if let Some(a) = self.addr(&inst.ops[0]) {
                        l |= self.read(&a);
                    }
                    changed |= self.set(i, l);
                }
                Op::Store => {
                    let (v, p) = (&inst.ops[0], &inst.ops[1]);
                    let value = self.val(v);
                    changed |= self.store(i, p, value);
                }
                Op::Compare(_) if self.is_undefined_test(inst) => {}
                Op::Gep { .. }
                | Op::Phi
                | Op::Select
                | Op::Cast
                | Op::Compare(_)
                | Op::Logic(_)
                | Op::Compute => {
                    let l = inst.ops.iter().fold(0, |l, v| l | self.val(v));
                    changed |= self.set(i, l);
                }
                Op::Call(callee) => {
                    let name = match callee {
                        Callee::Named(n) => n.as_str(),
                        _ => "",
                    };
                    let kind = if name.is_empty() {
                        CallKind::Opaque
                    } else {
                        call_kind(name)
                    };
                    let args = &inst.ops;
                    match kind {
                        CallKind::Ignore | CallKind::Alloc => {}
                        CallKind::Copy if args.len() >= 2 => {
                            let l = self.arg_labels(&args[1])
                                | self
                                    .addr(&args[1])
                                    .map(|a| self.olab.get(&a.obj).copied().unwrap_or(0) & STATUS)
                                    .unwrap_or(0);
                            changed |= self.store(i, &args[0], l);
                        }
                        CallKind::Set if args.len() >= 2 => {
                            let l = self.val(&args[1]);
                            changed |= self.store(i, &args[0], l);
                        }
                        CallKind::WritesFirst if !args.is_empty() => {
                            let l = args[1..].iter().fold(0, |l, a| l | self.arg_labels(a));
                            changed |= self.store(i, &args[0], l);
                            changed |= self.set(i, l);
                        }
                        CallKind::Mpi(func) => {
                            let input: u8 = args
                                .iter()
                                .enumerate()
                                .filter(|(k, _)| func.is_input(*k))
                                .fold(0, |l, (_, a)| l | self.arg_labels(a));
                            if input != 0 {
                                for (k, a) in args.iter().enumerate() {
                                    if !func.is_output(k) {
                                        continue;
                                    }
                                    let role_label = seed_label(&func, k).unwrap_or(OTHER);
                                    if let Some(addr) = self.addr(a) {
                                        changed |= self.taint(i, &addr.obj, role_label | input);
                                    }
                                }
                            }
                        }
                        _ => {
                            let l = args.iter().fold(0, |l, a| l | self.arg_labels(a));
                            changed |= self.set(i, l);
                        }
                    }
                }
            }
        }
        changed
    }

    /// Whether `inst` compares the index an any-completion call wrote
    /// (read straight from its variable) with `MPI_UNDEFINED`: true
    /// exactly when no request was active, whatever the order.
    fn is_undefined_test(&self, inst: &crate::ir::Inst) -> bool {
        let undefined = self.input.consts.undefined.operand();
        let [a, b] = inst.ops.as_slice() else {
            return false;
        };
        let other = if *a == undefined {
            b
        } else if *b == undefined {
            a
        } else {
            return false;
        };
        let Val::Inst(load) = other else { return false };
        let load = &self.f().insts[*load as usize];
        matches!(load.op, Op::Load) && self.val(&load.ops[0]) == 0 && self.val(other) == INDEX
    }

    /// A store of labels `value` through pointer `p`.
    fn store(&mut self, at: InstId, p: &Val, value: u8) -> bool {
        let key = self.val(p);
        if key | value == 0 {
            return false;
        }
        let Some(addr) = self.addr(p) else {
            return false;
        };
        let by_sender = key != 0
            && key & !(SENDER | INDEX) == 0
            && value & !(DATA | SENDER | INDEX | STATUS) == 0
            && addr.obj != Obj::Unknown;
        if by_sender {
            self.slot_stores.insert(at);
            return self.collected.insert(addr.obj);
        }
        self.taint(at, &addr.obj, key | value)
    }

    /// The leak to tell: the first write of an outcome into memory the
    /// analysis does not follow, else the first other leak in instruction
    /// order. Such a write comes first because it is the cause: once an
    /// outcome is in memory that cannot be named, every read of such
    /// memory anywhere in the function counts as tainted, and the first of
    /// those reads (often before the loop) would explain nothing.
    fn sinks(&self) -> Option<String> {
        let f = self.input.f;
        let at = self.input.at;
        let escape = self
            .escapes
            .iter()
            .min_by_key(|(obj, (i, _))| (*i, (*obj).clone()))
            .map(|(obj, (i, labels))| {
                let labels = if labels & STATUS != 0 {
                    (labels & !STATUS) | SENDER
                } else {
                    *labels
                };
                format!(
                    "{} is written to {} at {}, which the analysis does not follow",
                    what(labels),
                    self.name(obj),
                    at(*i)
                )
            });
        escape.or_else(|| {
            f.insts
                .iter()
                .enumerate()
                .find_map(|(i, inst)| self.sink(i as InstId, inst))
        })
    }

    /// Whether instruction `i` leaks an outcome, and how.
    fn sink(&self, i: InstId, inst: &crate::ir::Inst) -> Option<String> {
        let f = self.input.f;
        let at = self.input.at;
        match &inst.op {
            Op::Br | Op::Switch | Op::IndirectBr => {
                let l = inst.ops.first().map_or(0, |c| self.val(c));
                (l != 0).then(|| format!("{} decides the branch at {}", what(l), at(i)))
            }
            Op::Ret => {
                let l = inst.ops.first().map_or(0, |v| self.val(v));
                (l != 0).then(|| {
                    format!(
                        "{} is returned from `{}` at {}",
                        what(l),
                        f.shown_name(),
                        at(i)
                    )
                })
            }
            Op::Store => {
                // The address of a tainted object stored anywhere but in a
                // plain local pointer variable.
                let (v, p) = (&inst.ops[0], &inst.ops[1]);
                let vaddr = self.addr(v)?;
                let tainted = self.olab.get(&vaddr.obj).copied().unwrap_or(0);
                let into_plain = matches!(p, Val::Inst(a) if self.input.vars.is_plain(f, *a));
                (tainted != 0 && !into_plain).then(|| {
                    format!(
                        "the address of {}, which holds {}, is stored at {}, and the analysis \
                         does not follow pointers",
                        self.name(&vaddr.obj),
                        what(tainted),
                        at(i)
                    )
                })
            }
            Op::Call(callee) => {
                let args = &inst.ops;
                let name = match callee {
                    Callee::Named(n) => Some(n.as_str()),
                    _ => None,
                };
                if let Some(n) = name {
                    if self.in_region(i) {
                        if let Some(Err(reason)) = (self.input.through)(n) {
                            return Some(reason);
                        }
                    }
                }
                match name.map(call_kind).unwrap_or(CallKind::Opaque) {
                    CallKind::Mpi(func) => {
                        // Under loop abstraction the region's own calls
                        // are what is abstracted; an order choice has no
                        // such excuse.
                        if self.in_region(i) && self.input.follow == Follow::Outcomes {
                            return None;
                        }
                        let l = args
                            .iter()
                            .enumerate()
                            .filter(|(k, _)| func.is_input(*k))
                            .fold(0, |l, (_, a)| l | self.arg_labels(a));
                        (l != 0).then(|| {
                            format!(
                                "{} reaches an argument of `{}` at {}",
                                what(l),
                                name.unwrap_or("MPI"),
                                at(i)
                            )
                        })
                    }
                    CallKind::Pure
                        if self.input.follow == Follow::CompletionOrder
                            && name.is_some_and(|n| OUTPUT.contains(&n)) =>
                    {
                        // Printed in another order, the output differs:
                        // not the same run, whatever the verdicts.
                        let l = args.iter().fold(0, |l, a| l | self.arg_labels(a));
                        (l != 0).then(|| format!("{} is printed at {}", what(l), at(i)))
                    }
                    CallKind::Opaque => {
                        let l = args.iter().fold(0, |l, a| l | self.arg_labels(a));
                        (l != 0).then(|| {
                            let callee = match name {
                                Some(n) => format!("`{}`", mbh_trace::demangle(n)),
                                None => "a function pointer".into(),
                            };
                            format!(
                                "{} is passed to {} at {}, which the analysis does not follow",
                                what(l),
                                callee,
                                at(i)
                            )
                        })
                    }
                    _ => None,
                }
            }
            _ => None,
        }
    }
}

/// The label an any-completion call's output argument `k` gets when only
/// which request it returned is followed: flags and counts say whether
/// something completed, not which.
fn order_label(func: &mpi::MpiFunction, k: usize) -> Option<u8> {
    match func.role(k)? {
        Role::Status | Role::Statuses => Some(STATUS),
        Role::Index | Role::Indices => Some(INDEX),
        _ => None,
    }
}

/// The label an MPI call's output argument `k` gets when it is an outcome.
fn seed_label(func: &mpi::MpiFunction, k: usize) -> Option<u8> {
    match func.role(k)? {
        Role::RecvBuf | Role::InOutBuf => Some(DATA),
        Role::Status | Role::Statuses => Some(STATUS),
        Role::Index | Role::Indices => Some(INDEX),
        Role::Flag | Role::Out => Some(OTHER),
        _ => None,
    }
}
