//! What taking one arm of a branch says about the rank: the tests of the
//! `MPI_COMM_WORLD` rank against constants that its condition implies
//! there (`rank == 0` on the true arm of `if (rank == 0 && argc > 2)`).
//!
//! They make a divergence certain: a collective that every path
//! reaches only through such arms is made only by the ranks passing the
//! tests, whatever the rest of the condition says. A test is recorded only
//! when the arm really implies it, so a condition this does not read gives
//! fewer tests, never a wrong one.

use std::collections::{HashMap, HashSet};

use mbh_trace::static_report::{DivergentCollective, RankCmp, RankTest};

use super::{Flow, View};
use crate::ir::{BlockId, InstId, IntCmp, Logic, Op, Term, Val};
use crate::mpi;

/// `(true arm, false arm)`: the tests `rank OP value` each arm implies.
pub(super) type ArmTests = [Vec<(RankCmp, i64)>; 2];

/// How deep a condition is read through `&&`, `||` and `select`.
const MAX_DEPTH: u32 = 8;

impl Flow<'_> {
    /// Per block ending in a two-way `br` on a condition that tests the
    /// world rank: what each arm implies.
    pub(super) fn all_arm_tests(&self) -> Vec<Option<ArmTests>> {
        self.f
            .blocks
            .iter()
            .zip(&self.shape.cond)
            .map(|(block, cond)| {
                let cond = cond.as_ref().filter(|_| block.term == Term::Br)?;
                let tests = self.arm_tests(cond);
                (!tests[0].is_empty() || !tests[1].is_empty()).then_some(tests)
            })
            .collect()
    }

    /// The tests each arm of `br cond` implies.
    pub(super) fn arm_tests(&self, cond: &Val) -> ArmTests {
        [self.implied(cond, true, 0), self.implied(cond, false, 0)]
    }

    /// The rank tests that `cond` having the value `holds` implies.
    fn implied(&self, cond: &Val, holds: bool, depth: u32) -> Vec<(RankCmp, i64)> {
        let Val::Inst(c) = cond else {
            return Vec::new();
        };
        if depth > MAX_DEPTH {
            return Vec::new();
        }
        let inst = &self.f.insts[*c as usize];
        let both = |a: &Val, b: &Val, holds: bool| {
            let mut out = self.implied(a, holds, depth + 1);
            out.extend(self.implied(b, holds, depth + 1));
            out
        };
        match (&inst.op, inst.ops.as_slice()) {
            (Op::Compare(p), [a, b]) => self.rank_compare(*p, a, b, holds).into_iter().collect(),
            // `a && b` true: both are; `a || b` false: neither is.
            (Op::Logic(Logic::And), [a, b]) if holds => both(a, b, true),
            (Op::Logic(Logic::Or), [a, b]) if !holds => both(a, b, false),
            // `a && b` is `select a, b, false` and `a || b` is
            // `select a, true, b` when the optimizer keeps them lazy.
            (Op::Select, [c, a, Val::Int(0)]) if holds => both(c, a, true),
            (Op::Select, [c, Val::Int(1 | -1), b]) if !holds => both(c, b, false),
            _ => Vec::new(),
        }
    }

    /// `a P b` having the value `holds`, as a test of the world rank, when
    /// one side is that rank and the other a constant.
    fn rank_compare(&self, p: IntCmp, a: &Val, b: &Val, holds: bool) -> Option<(RankCmp, i64)> {
        let (p, value) = match (self.is_world_rank(a), self.is_world_rank(b), a, b) {
            (true, _, _, Val::Int(v)) => (p, *v),
            (_, true, Val::Int(v), _) => (swapped(p), *v),
            _ => return None,
        };
        let p = if holds { p } else { negated(p) };
        signed(p, value)
    }

    /// Whether `v` is the rank `MPI_Comm_rank` gave on `MPI_COMM_WORLD`.
    fn is_world_rank(&self, v: &Val) -> bool {
        let Some(world) = &self.p.comm_world else {
            return false;
        };
        matches!(self.mpi_result(v), Some(("MPI_Comm_rank", comm)) if &comm == world)
    }
}

impl View<'_> {
    /// The rank tests every path from its function's entry to instruction
    /// `i` of function `fi` passes (a `site` on `MPI_COMM_WORLD` only): an
    /// arm's tests count when the arm's edge dominates the call, that is,
    /// when its target has no other predecessor and dominates the call.
    pub(super) fn rank_tests_on_every_path(
        &self,
        fi: usize,
        site: u32,
        i: InstId,
    ) -> Vec<RankTest> {
        if !self.p.on_world.contains(&site) {
            return Vec::new();
        }
        let f = &self.p.fns[fi];
        let cfg = self.p.cfgs[fi];
        let call_block = f.insts[i as usize].block;
        let mut out = Vec::new();
        for (g, tests) in self.arm_tests[fi].iter().enumerate() {
            let Some(tests) = tests else { continue };
            let g = g as BlockId;
            let succs = &f.blocks[g as usize].succs;
            if succs.len() != 2 || succs[0] == succs[1] {
                continue;
            }
            for (arm, &target) in succs.iter().enumerate() {
                let only_from_g = cfg.preds[target as usize] == [g];
                if only_from_g && cfg.dominates(target, call_block) {
                    out.extend(tests[arm].iter().map(|&(op, value)| RankTest {
                        span: self.branch_span((fi, g)),
                        op,
                        value,
                    }));
                }
            }
        }
        out
    }

    /// Keeps the rank tests only of collectives no other site can make up
    /// for on the ranks that fail them: the program's only listed site of
    /// its MPI function, with no site of it in a function called through
    /// a pointer (whose callers the analysis does not know). Two listed
    /// sites may be the two halves of one agreement
    /// (`if (rank == 0 && v) MPI_Barrier(..); if (rank != 0 && v)
    /// MPI_Barrier(..);`).
    pub(super) fn keep_rank_tests_of_lone_sites(&self, out: &mut [DivergentCollective]) {
        let base = |name: &str| mpi::base_name(name).unwrap_or(name).to_owned();
        let mut listed: HashMap<String, usize> = HashMap::new();
        for c in out.iter() {
            *listed.entry(base(&c.call)).or_default() += 1;
        }
        let indirect: HashSet<String> = self
            .p
            .address_taken
            .iter()
            .flat_map(|&g| {
                let f = &self.p.fns[g];
                self.p.sites[g].iter().filter_map(|&(_, i)| f.callee(i))
            })
            .map(base)
            .collect();
        for c in out.iter_mut() {
            let name = base(&c.call);
            if listed.get(&name) != Some(&1) || indirect.contains(&name) {
                c.rank_tests.clear();
            }
        }
    }
}

/// `b P' a` for `a P b`.
fn swapped(p: IntCmp) -> IntCmp {
    use IntCmp::*;
    match p {
        Eq | Ne => p,
        Ugt => Ult,
        Uge => Ule,
        Ult => Ugt,
        Ule => Uge,
        Sgt => Slt,
        Sge => Sle,
        Slt => Sgt,
        Sle => Sge,
    }
}

/// `!(a P b)` as `a P' b`.
fn negated(p: IntCmp) -> IntCmp {
    use IntCmp::*;
    match p {
        Eq => Ne,
        Ne => Eq,
        Ugt => Ule,
        Uge => Ult,
        Ult => Uge,
        Ule => Ugt,
        Sgt => Sle,
        Sge => Slt,
        Slt => Sge,
        Sle => Sgt,
    }
}

/// `rank P value` as a signed test. A rank is never negative, so an
/// unsigned test against a non-negative constant is the signed one, and
/// one against a negative constant (a huge unsigned one) has one outcome:
/// always true (no test: `None`) or never (a test no rank passes).
fn signed(p: IntCmp, value: i64) -> Option<(RankCmp, i64)> {
    use IntCmp::*;
    let never = Some((RankCmp::Lt, 0));
    Some(match p {
        Eq => (RankCmp::Eq, value),
        Ne => (RankCmp::Ne, value),
        Sgt => (RankCmp::Gt, value),
        Sge => (RankCmp::Ge, value),
        Slt => (RankCmp::Lt, value),
        Sle => (RankCmp::Le, value),
        Ult | Ule if value < 0 => return None,
        Ugt | Uge if value < 0 => return never,
        Ugt => (RankCmp::Gt, value),
        Uge => (RankCmp::Ge, value),
        Ult => (RankCmp::Lt, value),
        Ule => (RankCmp::Le, value),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unsigned_tests_against_negative_constants_have_one_outcome() {
        assert_eq!(signed(IntCmp::Ult, -1), None);
        assert_eq!(signed(IntCmp::Uge, -1), Some((RankCmp::Lt, 0)));
        assert_eq!(signed(IntCmp::Ult, 2), Some((RankCmp::Lt, 2)));
    }

    #[test]
    fn negating_and_swapping_twice_give_the_predicate_back() {
        use IntCmp::*;
        for p in [Eq, Ne, Ugt, Uge, Ult, Ule, Sgt, Sge, Slt, Sle] {
            assert_eq!(negated(negated(p)), p);
            assert_eq!(swapped(swapped(p)), p);
        }
        // `0 < rank` is `rank > 0`; `!(rank < 2)` is `rank >= 2`.
        assert_eq!(swapped(Slt), Sgt);
        assert_eq!(negated(Slt), Sge);
    }
}
