//! Phases 8 and 11: zones. A zone boundary is an MPI call that ends one
//! (a blocking collective, a collective communicator constructor,
//! `MPI_Init`/`MPI_Finalize`) or a call to a function that always makes
//! one; each boundary but `MPI_Finalize` opens a zone that runs to the
//! next boundaries, and holds the wildcard sites reached on the way.

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};

use rayon::prelude::*;

use super::{Facts, Prog, SiteFact};
use crate::cfg::Cfg;
use crate::ir::{Function, InstId, Term};
use crate::mpi;

/// One zone, opened in a function.
pub(super) struct ZoneFact {
    /// The boundary call that opens it.
    pub inst: InstId,
    /// What that call calls, demangled.
    pub opened_by: String,
    /// The ids of the wildcard sites in it.
    pub wildcards: Vec<u32>,
}

/// Phase 8: per function, whether it always calls a collective (every
/// path from its entry to a return passes a boundary), so that a call to
/// it is a boundary too. Iterated to a fixpoint, as each answer can make
/// its callers' true.
pub(super) fn always_collective_fns(prog: &Prog<'_>, sites: &[Vec<SiteFact>]) -> Vec<bool> {
    let (fns, locals, calls) = (prog.fns, prog.locals, &prog.calls.calls);
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
    always
}

/// Phase 11: the zones each function opens, in parallel. A zone's
/// wildcard sites include those of the functions called in it (all of
/// theirs).
pub(super) fn zones(prog: &Prog<'_>, facts: &Facts) -> Vec<Vec<ZoneFact>> {
    let (fns, locals, calls) = (prog.fns, prog.locals, &prog.calls.calls);
    let (sites, contains, always) = (&facts.sites, &facts.contains, &facts.always);
    let closure = wildcard_closure(prog, facts);
    fns.par_iter()
        .enumerate()
        .map(|(fi, f)| {
            let boundaries = boundary_insts(f, &sites[fi], &calls[fi], always);
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
        .collect()
}

/// Per function, in parallel: the ids of the wildcard sites it reaches,
/// its own and those of every function it calls, sorted; empty for the
/// functions that contain none.
fn wildcard_closure(prog: &Prog<'_>, facts: &Facts) -> Vec<Vec<u32>> {
    let calls = &prog.calls.calls;
    let (sites, contains) = (&facts.sites, &facts.contains);
    (0..prog.fns.len())
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
        .collect()
}

/// The zone boundaries of `f`: MPI boundary calls and calls to functions
/// that always call a collective, with the name of what is called.
fn boundary_insts(
    f: &Function,
    sites: &[SiteFact],
    calls: &[(InstId, usize)],
    always: &[bool],
) -> BTreeMap<InstId, String> {
    let mut out = BTreeMap::new();
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
    boundaries: &BTreeMap<InstId, String>,
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

#[cfg(test)]
mod tests {
    use super::super::tests::{functions, sites_of};
    use super::*;

    const DECLARE: &str = "declare i32 @MPI_Barrier(i32)\n\
        declare i32 @MPI_Recv(ptr, i32, i32, i32, i32, i32, ptr)\n";

    #[test]
    fn a_function_always_calls_a_collective_when_every_path_to_a_return_does() {
        let fns = functions(&format!(
            "{DECLARE}\
             define void @both(i1 %c) {{\nentry:\n  br i1 %c, label %a, label %b\n\
             a:\n  %x = call i32 @MPI_Barrier(i32 1)\n  br label %done\n\
             b:\n  %y = call i32 @MPI_Barrier(i32 1)\n  br label %done\n\
             done:\n  ret void\n}}\n\
             define void @one(i1 %c) {{\nentry:\n  br i1 %c, label %a, label %done\n\
             a:\n  %x = call i32 @MPI_Barrier(i32 1)\n  br label %done\n\
             done:\n  ret void\n}}\n\
             define void @never_returns() {{\nentry:\n  \
             %x = call i32 @MPI_Barrier(i32 1)\n  unreachable\n}}\n\
             define void @calls_both(i1 %c) {{\nentry:\n  call void @both(i1 %c)\n  \
             ret void\n}}\n"
        ));
        let always_given = |fi: usize, calls: &[(InstId, usize)], always: &[bool]| {
            let f = &fns[fi];
            let cut = boundary_blocks(f, &sites_of(f, 1), calls, always);
            always_collective(f, &Cfg::new(f), &cut)
        };
        assert!(always_given(0, &[], &[]));
        assert!(!always_given(1, &[], &[]));
        // A function that cannot return never ends a zone for its callers.
        assert!(!always_given(2, &[], &[]));
        // A call to a function that always calls a collective is a
        // boundary too.
        assert!(always_given(3, &[(0, 0)], &[true]));
        assert!(!always_given(3, &[(0, 0)], &[false]));
    }

    #[test]
    fn a_zone_holds_the_wildcards_reached_before_the_next_boundaries() {
        let recv = "call i32 @MPI_Recv(ptr null, i32 1, i32 7, i32 -2, i32 0, i32 1, ptr null)";
        let fns = functions(&format!(
            "{DECLARE}\
             define void @f(i1 %c) {{\nentry:\n  %b1 = call i32 @MPI_Barrier(i32 1)\n  \
             %r1 = {recv}\n  br i1 %c, label %a, label %done\n\
             a:\n  %b2 = call i32 @MPI_Barrier(i32 1)\n  %r2 = {recv}\n  br label %done\n\
             done:\n  %r3 = {recv}\n  %b3 = call i32 @MPI_Barrier(i32 1)\n  %r4 = {recv}\n  \
             ret void\n}}\n"
        ));
        let f = &fns[0];
        let sites = sites_of(f, 1);
        let boundaries = boundary_insts(f, &sites, &[], &[]);
        let wildcard_at: HashMap<InstId, Vec<u32>> = sites
            .iter()
            .filter(|s| s.wildcard.is_some())
            .map(|s| (s.inst, vec![s.id]))
            .collect();
        let zone =
            |after: InstId| zone_wildcards(f, &Cfg::new(f), after, &boundaries, &wildcard_at);
        let starts: Vec<InstId> = boundaries.keys().copied().collect();
        // Site ids: b1 1, r1 2, b2 3, r2 4, r3 5, b3 6, r4 7.
        assert_eq!(starts.len(), 3);
        assert_eq!(zone(starts[0]), [2, 5]);
        assert_eq!(zone(starts[1]), [4, 5]);
        assert_eq!(zone(starts[2]), [7]);
    }
}
