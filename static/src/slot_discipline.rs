//! Whether the loop around an any-completion call handles each completed
//! request the same way whatever the order: the second half of the
//! completion-order decision ([`crate::taint::Follow::CompletionOrder`]
//! is the first).
//!
//! The taint analysis shows that the index decides no branch and reaches
//! no MPI call; what it lets through are the stores that fill memory slot
//! by slot (`ghost[idx] = buf[idx]`). Those leave the same memory in every
//! order only if each request's slot gets a value that depends on that
//! request alone, and gets it whatever happened before in the loop. So,
//! inside the innermost loop `L` around the call:
//!
//! * `L` starts no request (no `MPI_Irecv`, `MPI_Start`, ..., no call to a
//!   function that reaches MPI, no call through a pointer): the requests
//!   it completes are those active when it began;
//! * every slot store is in `L`, is the only store into its object there,
//!   and nothing else in `L` writes that object;
//! * its address and value are *stable*: built from constants, values
//!   computed before `L`, the call's own outputs (the index, the status,
//!   the flag), memory nothing in `L` writes but MPI (the requests'
//!   buffers), and arithmetic on those; a loop counter is not;
//! * the branches inside `L` it depends on (not `L`'s exits) test stable
//!   values, the flag of a `Test` form, or the index against
//!   `MPI_UNDEFINED` (`if (flag && idx != MPI_UNDEFINED)`); under
//!   `if (n == 0)` only the first request to complete would be stored.
//!
//! That `L` goes on until every one of those requests is complete is
//! checked at run time, from the trace (the search, not this module).

use std::collections::{HashMap, HashSet};

use mbh_trace::static_report::CallClass;

use crate::cfg::{Cfg, NaturalLoop};
use crate::control_dep::ControlDeps;
use crate::ir::{BlockId, Callee, Function, InstId, Op, Term, Val};
use crate::mpi::{self, Role};
use crate::pointers::{Obj, Pointers};
use crate::taint::{call_kind, CallKind};

/// What the check needs about one function and one call.
pub(crate) struct Input<'a> {
    pub f: &'a Function,
    pub cfg: &'a Cfg,
    pub pointers: &'a Pointers,
    /// The innermost loop around the call.
    pub l: &'a NaturalLoop,
    /// The any-completion call.
    pub seed: InstId,
    /// The slot stores the taint analysis let through.
    pub slot_stores: &'a [InstId],
    /// Whether a call to this function can reach MPI.
    pub reaches_mpi: &'a dyn Fn(&str) -> bool,
    /// Describes a location for messages.
    pub at: &'a dyn Fn(InstId) -> String,
}

/// `Ok` when every slot store keeps the discipline; else why not.
pub(crate) fn check(input: &Input<'_>) -> Result<(), String> {
    let writes = writes_in_loop(input)?;
    let check = Check {
        input,
        writes,
        constants: constant_objects(input.f, input.pointers),
        seed_objs: seed_objects(input),
        deps: ControlDeps::new(&input.cfg.succs).closure(),
        memo: HashMap::new().into(),
    };
    let mut filled: HashMap<Obj, InstId> = HashMap::new();
    for &s in input.slot_stores {
        check.slot_store(s)?;
        let obj = check.written_obj(s).ok_or_else(|| unnamed(input, s))?;
        if let Some(first) = filled.insert(obj.clone(), s) {
            return Err(format!(
                "two stores fill the same memory by index, at {} and {}",
                (input.at)(first),
                (input.at)(s)
            ));
        }
        let others = check
            .writes
            .get(&obj)
            .map_or(0, |w| w.iter().filter(|&&w| w != s).count());
        if others > 0 {
            return Err(format!(
                "the memory filled by index at {} is also written elsewhere in the loop",
                (input.at)(s)
            ));
        }
    }
    Ok(())
}

fn unnamed(input: &Input<'_>, s: InstId) -> String {
    format!(
        "the analysis cannot name the memory stored to at {}",
        (input.at)(s)
    )
}

/// The objects the call writes its outcomes into (index, status, flag).
fn seed_objects(input: &Input<'_>) -> HashSet<Obj> {
    let f = input.f;
    let Some(func) = f.callee(input.seed).and_then(mpi::lookup) else {
        return HashSet::new();
    };
    f.insts[input.seed as usize]
        .ops
        .iter()
        .enumerate()
        .filter(|(k, _)| {
            matches!(
                func.role(*k),
                Some(
                    Role::Index
                        | Role::Indices
                        | Role::Status
                        | Role::Statuses
                        | Role::Flag
                        | Role::Out
                )
            )
        })
        .filter_map(|(_, v)| input.pointers.addr(v).map(|a| a.obj))
        .collect()
}

/// Per object, the instructions inside the loop that write it; an error
/// when the loop starts requests or calls what the analysis cannot see.
fn writes_in_loop(input: &Input<'_>) -> Result<HashMap<Obj, Vec<InstId>>, String> {
    let f = input.f;
    let mut writes: HashMap<Obj, Vec<InstId>> = HashMap::new();
    let mut note = |obj: Option<Obj>, i: InstId| {
        writes
            .entry(obj.unwrap_or(Obj::Unknown))
            .or_default()
            .push(i);
    };
    for (i, inst) in f.insts.iter().enumerate() {
        let i = i as InstId;
        if !input.l.body[inst.block as usize] {
            continue;
        }
        let addr = |v: &Val| input.pointers.addr(v).map(|a| a.obj);
        match &inst.op {
            Op::Store => note(addr(&inst.ops[1]), i),
            Op::Call(Callee::Named(name)) => match call_kind(name) {
                CallKind::Mpi(func) => {
                    if starts_requests(name, &func) {
                        return Err(format!("the loop starts a request at {}", (input.at)(i)));
                    }
                    // Constant pointers (`MPI_STATUS_IGNORE`) write nothing.
                    for (k, v) in inst.ops.iter().enumerate() {
                        if func.is_output(k) && matches!(v, Val::Inst(_) | Val::Global(_)) {
                            note(addr(v), i);
                        }
                    }
                }
                CallKind::Copy | CallKind::Set | CallKind::WritesFirst => {
                    if let Some(dst) = inst.ops.first() {
                        note(addr(dst), i);
                    }
                }
                CallKind::Ignore | CallKind::Alloc | CallKind::Pure => {}
                CallKind::Opaque => {
                    if (input.reaches_mpi)(name) {
                        return Err(format!(
                            "the loop calls `{}` at {}, which calls MPI",
                            mbh_trace::demangle(name),
                            (input.at)(i)
                        ));
                    }
                    for v in &inst.ops {
                        if inst_is_ptr(f, v) {
                            note(addr(v), i);
                        }
                    }
                }
            },
            Op::Call(_) => {
                return Err(format!(
                    "the loop calls through a function pointer at {}",
                    (input.at)(i)
                ))
            }
            _ => {}
        }
    }
    Ok(writes)
}

fn inst_is_ptr(f: &Function, v: &Val) -> bool {
    match v {
        Val::Inst(i) => f.insts[*i as usize].is_ptr,
        Val::Global(_) | Val::Null => true,
        _ => false,
    }
}

/// The objects every write of which in the function is a plain store of
/// one and the same constant (`int flag = 1;` in the loop's body): they
/// hold that constant whenever they are read after a write.
fn constant_objects(f: &Function, pointers: &Pointers) -> HashSet<Obj> {
    let mut value: HashMap<Obj, Option<Val>> = HashMap::new();
    for inst in &f.insts {
        let (obj, v) = match &inst.op {
            Op::Store => {
                let v = &inst.ops[0];
                let constant = !matches!(v, Val::Inst(_) | Val::Arg(_));
                (
                    pointers.addr(&inst.ops[1]).map(|a| a.obj),
                    constant.then(|| v.clone()),
                )
            }
            Op::Call(_) => {
                for v in inst.ops.iter().filter(|v| inst_is_ptr(f, v)) {
                    if let Some(a) = pointers.addr(v) {
                        value.insert(a.obj, None);
                    }
                }
                continue;
            }
            _ => continue,
        };
        let Some(obj) = obj else { continue };
        let entry = value.entry(obj).or_insert_with(|| v.clone());
        if *entry != v {
            *entry = None;
        }
    }
    value
        .into_iter()
        .filter(|(o, v)| v.is_some() && o.is_local())
        .map(|(o, _)| o)
        .collect()
}

/// Whether MPI call `name` makes a request (`MPI_Irecv`, `MPI_Isend`,
/// `MPI_Send_init`, `MPI_Start`, nonblocking collectives, ...).
fn starts_requests(name: &str, func: &mpi::MpiFunction) -> bool {
    let base = name.strip_prefix('P').unwrap_or(name);
    base.starts_with("MPI_Start")
        || (func.arg(Role::Request).is_some() && func.class != CallClass::Completion)
}

struct Check<'a, 'b> {
    input: &'b Input<'a>,
    writes: HashMap<Obj, Vec<InstId>>,
    /// Objects only ever stored one constant ([`constant_objects`]).
    constants: HashSet<Obj>,
    seed_objs: HashSet<Obj>,
    /// Per block, every block it is control-dependent on.
    deps: Vec<Vec<u32>>,
    /// Stability of instructions already judged (`false` while being
    /// judged: a value that depends on itself inside the loop changes
    /// from one iteration to the next).
    memo: std::cell::RefCell<HashMap<InstId, bool>>,
}

impl Check<'_, '_> {
    fn f(&self) -> &Function {
        self.input.f
    }

    fn in_loop(&self, b: BlockId) -> bool {
        self.input.l.body[b as usize]
    }

    /// The object a slot store (or copy) writes.
    fn written_obj(&self, s: InstId) -> Option<Obj> {
        let inst = &self.f().insts[s as usize];
        let dst = match inst.op {
            Op::Store => &inst.ops[1],
            _ => inst.ops.first()?,
        };
        self.input.pointers.addr(dst).map(|a| a.obj)
    }

    fn slot_store(&self, s: InstId) -> Result<(), String> {
        let at = self.input.at;
        let inst = &self.f().insts[s as usize];
        if !self.in_loop(inst.block) {
            return Err(format!(
                "memory is filled by index at {}, after the loop around the call",
                at(s)
            ));
        }
        if !inst.ops.iter().all(|v| self.stable(v)) {
            return Err(format!(
                "the value or place stored by index at {} changes from one iteration to the next",
                at(s)
            ));
        }
        if !self.block_ok(inst.block) {
            return Err(format!(
                "whether the store at {} runs depends on what happened earlier in the loop",
                at(s)
            ));
        }
        Ok(())
    }

    /// Whether every branch inside the loop (its exits aside) that
    /// decides whether block `b` runs tests stable values.
    fn block_ok(&self, b: BlockId) -> bool {
        self.deps[b as usize]
            .iter()
            .filter(|&&d| self.in_loop(d) && !self.exits_loop(d))
            .all(|&d| self.branch_ok(d))
    }

    fn exits_loop(&self, b: BlockId) -> bool {
        self.input.cfg.succs[b as usize]
            .iter()
            .any(|s| !self.in_loop(*s))
    }

    /// Whether block `b`'s terminator tests a stable value.
    fn branch_ok(&self, b: BlockId) -> bool {
        let block = &self.f().blocks[b as usize];
        if !matches!(block.term, Term::Br | Term::Switch) || block.end <= block.first {
            return false;
        }
        let term = &self.f().insts[(block.end - 1) as usize];
        term.ops.first().is_none_or(|c| self.stable(c))
    }

    /// Whether `v` is the same for a given request whatever the order.
    fn stable(&self, v: &Val) -> bool {
        let Val::Inst(i) = v else { return true };
        if let Some(&known) = self.memo.borrow().get(i) {
            return known;
        }
        self.memo.borrow_mut().insert(*i, false);
        let verdict = self.judge(*i);
        self.memo.borrow_mut().insert(*i, verdict);
        verdict
    }

    fn judge(&self, i: InstId) -> bool {
        let inst = &self.f().insts[i as usize];
        if !self.in_loop(inst.block) {
            return true;
        }
        match &inst.op {
            Op::Alloca(_) => true,
            Op::Load => self.stable(&inst.ops[0]) && self.load_ok(&inst.ops[0]),
            Op::Gep { .. }
            | Op::Cast
            | Op::Compare(_)
            | Op::Logic(_)
            | Op::Compute
            | Op::Select => inst.ops.iter().all(|v| self.stable(v)),
            Op::Phi => {
                inst.ops.iter().all(|v| self.stable(v))
                    && self.block_ok(inst.block)
                    && self.input.cfg.preds[inst.block as usize]
                        .iter()
                        .filter(|p| self.in_loop(**p))
                        .all(|&p| self.branch_ok(p) && self.block_ok(p))
            }
            _ => false,
        }
    }

    /// Whether a load through `p` reads what the loop cannot change
    /// between requests: memory only MPI writes in the loop (buffers),
    /// the call's own outputs, or memory nothing in the loop writes.
    fn load_ok(&self, p: &Val) -> bool {
        let Some(addr) = self.input.pointers.addr(p) else {
            return false;
        };
        if self.seed_objs.contains(&addr.obj) || self.constants.contains(&addr.obj) {
            return true;
        }
        let unknown = self.writes.get(&Obj::Unknown).map_or(0, Vec::len);
        if unknown > 0 || addr.obj == Obj::Unknown {
            return false;
        }
        self.writes.get(&addr.obj).is_none_or(|ws| {
            ws.iter()
                .all(|&w| matches!(self.f().callee(w).map(call_kind), Some(CallKind::Mpi(_))))
        })
    }
}
