//! Where each pointer of a function points: one table per function,
//! computed once and shared by the taint analysis (the loop abstraction),
//! the divergence analysis and every loop of the function.
//!
//! A pointer points to a memory object ([`Obj`]): a local variable
//! (`alloca`), a heap block (`malloc` and friends), a global, a parameter,
//! or "unknown". Addresses follow offsets (`getelementptr`), casts,
//! allocations, `phi`/`select`, and loads of plain local pointer variables
//! (an `alloca` only loaded and stored: its loads see every value stored
//! into it).
//!
//! The table is the least fixpoint of a monotone system over a lattice of
//! height four, solved by a worklist over the SSA def-use graph (the uses
//! of a value stored into a pointer variable are the loads of that
//! variable):
//!
//! ```text
//!   not yet  <  object at a known offset  <  object, offset unknown  <  unknown
//! ```
//!
//! Joining two different offsets into one object loses the offset; two
//! different objects give "unknown". So an offset that grows around a
//! cycle (`p = phi [base, p + 8]`) widens to "offset unknown" at once, and
//! each value rises at most three times: the work is linear in the number
//! of instructions and def-use edges, whatever the depth of `phi` chains
//! or pointer variables. A walk that recursed over operands without
//! remembering what it had computed was exponential in that depth
//! (a link of LULESH ran for more than 15 minutes).

use crate::consts::LocalVars;
use crate::ir::{Callee, Function, InstId, Op, Val};

/// Functions whose result is a new heap block: C's, and C++'s `operator
/// new` and `operator new[]` (plain, aligned and `nothrow`, as the Itanium
/// ABI mangles them).
pub(crate) const ALLOC: &[&str] = &[
    "malloc",
    "calloc",
    "realloc",
    "aligned_alloc",
    "valloc",
    "strdup",
    "_Znwm",
    "_Znam",
    "_ZnwmRKSt9nothrow_t",
    "_ZnamRKSt9nothrow_t",
    "_ZnwmSt11align_val_t",
    "_ZnamSt11align_val_t",
    "_ZnwmSt11align_val_tRKSt9nothrow_t",
    "_ZnamSt11align_val_tRKSt9nothrow_t",
];

/// A memory object.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(crate) enum Obj {
    Local(InstId),
    Heap(InstId),
    Global(String),
    Param(u32),
    Unknown,
}

impl Obj {
    /// Whether it belongs to the function (a local variable or a block it
    /// allocated), so that the analyses can follow everything done to it.
    pub(crate) fn is_local(&self) -> bool {
        matches!(self, Obj::Local(_) | Obj::Heap(_))
    }
}

/// Where a pointer points: an object, and the byte offset into it when
/// known modulo the sizes of the variable indices.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Addr {
    pub obj: Obj,
    pub offset: Option<i64>,
    pub scales: Vec<u64>,
}

impl Addr {
    /// The start of `obj`.
    fn start(obj: Obj) -> Addr {
        Addr {
            obj,
            offset: Some(0),
            scales: Vec::new(),
        }
    }

    /// Somewhere in `obj`.
    fn somewhere(obj: Obj) -> Addr {
        Addr {
            obj,
            offset: None,
            scales: Vec::new(),
        }
    }

    /// Anywhere: the lattice's top.
    fn unknown() -> Addr {
        Addr::somewhere(Obj::Unknown)
    }

    /// The least address both `self` and `other` may be.
    fn join(self, other: &Addr) -> Addr {
        if self == *other {
            self
        } else if self.obj == other.obj {
            Addr::somewhere(self.obj)
        } else {
            Addr::unknown()
        }
    }
}

/// Joins `b` into `a`, where `None` is "not yet" (or "not a pointer").
fn join(a: Option<Addr>, b: Option<&Addr>) -> Option<Addr> {
    match (a, b) {
        (None, b) => b.cloned(),
        (a, None) => a,
        (Some(a), Some(b)) => Some(a.join(b)),
    }
}

/// The address of every pointer instruction of one function.
#[derive(Debug, Default, Clone)]
pub(crate) struct Pointers {
    /// By instruction; `None` for values that are not pointers, or whose
    /// pointer comes from no object (an offset from a null pointer).
    addrs: Vec<Option<Addr>>,
    /// How many times a transfer function ran: what solving cost, for the
    /// tests that check it stays linear.
    #[cfg(test)]
    evaluations: usize,
}

impl Pointers {
    /// Solves the table of `f`, whose plain local variables are `vars`.
    pub(crate) fn of(f: &Function, vars: &LocalVars) -> Pointers {
        let mut solver = Solver {
            f,
            vars,
            addrs: vec![None; f.insts.len()],
            users: users(f, vars),
            evaluations: 0,
        };
        solver.solve();
        Pointers {
            #[cfg(test)]
            evaluations: solver.evaluations,
            addrs: solver.addrs,
        }
    }

    /// Where `v`, an operand in the function, points; `None` for values
    /// that are not pointers.
    pub(crate) fn addr(&self, v: &Val) -> Option<Addr> {
        match v {
            Val::Inst(i) => self.addrs.get(*i as usize).cloned().flatten(),
            other => constant(other),
        }
    }

    /// How many transfer functions solving ran.
    #[cfg(test)]
    pub(crate) fn evaluations(&self) -> usize {
        self.evaluations
    }
}

/// The address of an operand that is not an instruction.
fn constant(v: &Val) -> Option<Addr> {
    match v {
        Val::Arg(p) => Some(Addr::start(Obj::Param(*p))),
        Val::Global(g) => Some(Addr::start(Obj::Global(g.clone()))),
        Val::Int(_) | Val::Null | Val::Other | Val::Inst(_) => None,
    }
}

/// The operands whose address an instruction's address is computed from.
fn sources<'f>(f: &'f Function, vars: &'f LocalVars, i: usize) -> &'f [Val] {
    let inst = &f.insts[i];
    match &inst.op {
        Op::Gep { .. } | Op::Cast => &inst.ops[..1.min(inst.ops.len())],
        Op::Phi => &inst.ops,
        Op::Select => inst.ops.get(1..).unwrap_or(&[]),
        Op::Load => match inst.ops.first() {
            Some(Val::Inst(a)) if vars.is_plain(f, *a) => {
                vars.stores.get(a).map(Vec::as_slice).unwrap_or(&[])
            }
            _ => &[],
        },
        _ => &[],
    }
}

/// Per instruction: the pointer instructions whose address depends on it.
fn users(f: &Function, vars: &LocalVars) -> Vec<Vec<InstId>> {
    let mut users = vec![Vec::new(); f.insts.len()];
    for (i, inst) in f.insts.iter().enumerate() {
        if !inst.is_ptr {
            continue;
        }
        for v in sources(f, vars, i) {
            if let Val::Inst(j) = v {
                users[*j as usize].push(i as InstId);
            }
        }
    }
    users
}

/// The worklist solver.
struct Solver<'f> {
    f: &'f Function,
    vars: &'f LocalVars,
    addrs: Vec<Option<Addr>>,
    users: Vec<Vec<InstId>>,
    evaluations: usize,
}

impl Solver<'_> {
    fn solve(&mut self) {
        let pointers: Vec<InstId> = (0..self.f.insts.len() as InstId)
            .filter(|&i| self.f.insts[i as usize].is_ptr)
            .collect();
        self.propagate(pointers.iter().rev().copied().collect());
        // What is still "not yet" found no object: a cast of an integer, a
        // `phi` of null pointers, a variable never stored, or a cycle of
        // copies with no way in. Those may point anywhere (an offset from
        // a null pointer stays no pointer at all).
        let mut defaulted = Vec::new();
        for &i in &pointers {
            let op = &self.f.insts[i as usize].op;
            let copies = matches!(op, Op::Cast | Op::Phi | Op::Select | Op::Load);
            if copies && self.addrs[i as usize].is_none() {
                self.addrs[i as usize] = Some(Addr::unknown());
                defaulted.push(i);
            }
        }
        let users: Vec<InstId> = defaulted
            .iter()
            .flat_map(|&i| self.users[i as usize].iter().copied())
            .collect();
        self.propagate(users);
    }

    /// Runs the worklist from `work` (popped from the end) until nothing
    /// changes. A value only rises, at most three times, so each use is
    /// revisited at most three times.
    fn propagate(&mut self, mut work: Vec<InstId>) {
        while let Some(i) = work.pop() {
            let next = join(self.addrs[i as usize].clone(), self.transfer(i).as_ref());
            if next != self.addrs[i as usize] {
                self.addrs[i as usize] = next;
                work.extend(self.users[i as usize].iter().copied());
            }
        }
    }

    /// The current address of operand `v`.
    fn operand(&self, v: &Val) -> Option<Addr> {
        match v {
            Val::Inst(j) => self.addrs[*j as usize].clone(),
            other => constant(other),
        }
    }

    /// Instruction `i`'s address from its operands' current addresses.
    fn transfer(&mut self, i: InstId) -> Option<Addr> {
        self.evaluations += 1;
        let (f, vars) = (self.f, self.vars);
        let inst = &f.insts[i as usize];
        match &inst.op {
            Op::Alloca(_) => Some(Addr::start(Obj::Local(i))),
            Op::Call(Callee::Named(n)) if ALLOC.contains(&n.as_str()) => {
                Some(Addr::start(Obj::Heap(i)))
            }
            Op::Gep { offset, var } => {
                let mut base = self.operand(inst.ops.first()?)?;
                base.offset = base.offset.map(|o| o.wrapping_add(*offset));
                base.scales.extend(var.iter().map(|(_, s)| *s));
                Some(base)
            }
            Op::Load => match inst.ops.first() {
                Some(Val::Inst(a)) if vars.is_plain(f, *a) && vars.stores.contains_key(a) => {
                    self.join_of(sources(f, vars, i as usize))
                }
                _ => Some(Addr::unknown()),
            },
            Op::Cast | Op::Phi | Op::Select => self.join_of(sources(f, vars, i as usize)),
            _ => Some(Addr::unknown()),
        }
    }

    fn join_of(&self, vals: &[Val]) -> Option<Addr> {
        vals.iter()
            .fold(None, |acc, v| join(acc, self.operand(v).as_ref()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::{self, Files};
    use crate::Module;

    /// The functions of textual IR `ir`, as the analysis reads them.
    fn functions(ir: &str) -> Vec<Function> {
        let context = inkwell::context::Context::create();
        let module = Module::parse(&context, "test.ll", ir.as_bytes()).unwrap();
        ir::read_module(&module, 0, &mut Files::default()).functions
    }

    /// The table of the only function of `ir`, with the function.
    fn table(ir: &str) -> (Function, Pointers) {
        let f = functions(ir).remove(0);
        let pointers = Pointers::of(&f, &LocalVars::of(&f));
        (f, pointers)
    }

    /// The instruction of `f` whose IR text starts with `%name =`.
    fn named(f: &Function, ir: &str, name: &str) -> Val {
        // Instructions are numbered in order; count the ones before.
        let body = &ir[ir.find('{').unwrap()..];
        let mut k = 0;
        for line in body.lines().map(str::trim) {
            if line.starts_with(&format!("%{name} =")) {
                assert!(k < f.insts.len());
                return Val::Inst(k as InstId);
            }
            let label = line.ends_with(':') || line.is_empty() || line.starts_with('{');
            if !label && line != "}" {
                k += 1;
            }
        }
        panic!("no %{name}");
    }

    /// How many def-use edges the solver follows: the sources of every
    /// pointer instruction.
    fn edges(f: &Function) -> usize {
        let vars = LocalVars::of(f);
        (0..f.insts.len())
            .filter(|&i| f.insts[i].is_ptr)
            .map(|i| sources(f, &vars, i).len())
            .sum()
    }

    /// `levels` diamonds, each joining the previous pointer and that
    /// pointer plus 8 bytes: each `phi` reads the one before twice.
    fn diamonds(levels: usize) -> String {
        let mut ir = String::from(
            "define void @f(i1 %c) {\nentry:\n  %p0 = alloca [64 x i8]\n  br label %d1\n",
        );
        for k in 1..=levels {
            let p = k - 1;
            ir.push_str(&format!(
                "d{k}:\n  %q{p} = getelementptr i8, ptr %p{p}, i64 8\n  \
                 br i1 %c, label %l{k}, label %r{k}\n\
                 l{k}:\n  br label %j{k}\nr{k}:\n  br label %j{k}\n\
                 j{k}:\n  %p{k} = phi ptr [ %p{p}, %l{k} ], [ %q{p}, %r{k} ]\n  br label %d{}\n",
                k + 1
            ));
        }
        ir.push_str(&format!("d{}:\n  ret void\n}}\n", levels + 1));
        ir
    }

    /// A pointer variable advanced `stores` times: each store is the
    /// variable's own value plus 8 bytes, so each load reads every store.
    fn advancing_variable(stores: usize) -> String {
        let mut ir = String::from(
            "define void @f() {\nentry:\n  %a = alloca [64 x i8]\n  %v = alloca ptr\n  \
             store ptr %a, ptr %v\n",
        );
        for k in 0..stores {
            ir.push_str(&format!(
                "  %l{k} = load ptr, ptr %v\n  %g{k} = getelementptr i8, ptr %l{k}, i64 8\n  \
                 store ptr %g{k}, ptr %v\n"
            ));
        }
        ir.push_str("  %last = load ptr, ptr %v\n  ret void\n}\n");
        ir
    }

    #[test]
    fn deep_phi_chains_cost_linear_work() {
        let ir = diamonds(40);
        let (f, pointers) = table(&ir);
        let bound = 4 * (f.insts.len() + edges(&f));
        assert!(
            pointers.evaluations() <= bound,
            "{} evaluations for {} instructions",
            pointers.evaluations(),
            f.insts.len()
        );
        // The offset grows around no cycle, but two offsets meet at each
        // join: the address is somewhere in the array.
        let a = named(&f, &ir, "p0");
        let Val::Inst(local) = a else { unreachable!() };
        assert_eq!(
            pointers.addr(&named(&f, &ir, "p40")),
            Some(Addr::somewhere(Obj::Local(local)))
        );
        assert_eq!(
            pointers.addr(&named(&f, &ir, "q0")),
            Some(Addr {
                obj: Obj::Local(local),
                offset: Some(8),
                scales: Vec::new()
            })
        );
    }

    #[test]
    fn pointer_variables_stored_many_times_cost_linear_work() {
        let ir = advancing_variable(4);
        let (f, pointers) = table(&ir);
        let bound = 4 * (f.insts.len() + edges(&f));
        assert!(
            pointers.evaluations() <= bound,
            "{} evaluations for {} instructions",
            pointers.evaluations(),
            f.insts.len()
        );
        let Val::Inst(local) = named(&f, &ir, "a") else {
            unreachable!()
        };
        assert_eq!(
            pointers.addr(&named(&f, &ir, "last")),
            Some(Addr::somewhere(Obj::Local(local)))
        );
    }
}
