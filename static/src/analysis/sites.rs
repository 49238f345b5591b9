//! Phases 5 and 5b: the MPI call sites of every function, numbered as
//! `mbh-instrument` numbers them, which of them are wildcard sites, and
//! their buffer arguments checked against datatypes and objects.

use std::collections::HashMap;

use mbh_trace::static_report::WildcardKind;
use rayon::prelude::*;

use super::{Prog, SiteFact};
use crate::buffers;
use crate::consts::{self, LocalVars, MpiConstants, Resolved};
use crate::ir::{Callee, Function, InstId, Op, Val, VarInfo};
use crate::mpi::{self, Role};

/// Per function: how many calls to `MPI_`/`PMPI_` functions it makes.
/// Sites are numbered in module order, so a function's first site id is
/// 1 plus the counts of the functions before it.
pub(super) fn mpi_call_counts(fns: &[Function]) -> Vec<u32> {
    fns.iter()
        .map(|f| {
            f.insts
                .iter()
                .filter(|i| matches!(&i.op, Op::Call(Callee::Named(n)) if mpi::is_mpi(n)))
                .count() as u32
        })
        .collect()
}

/// Phase 5: the MPI call sites of each function, in parallel, with their
/// ids (numbered from the `counts` of [`mpi_call_counts`]), whether each
/// is a wildcard site, and whether a collective is on `MPI_COMM_SELF`.
pub(super) fn mpi_sites(prog: &Prog<'_>, counts: &[u32]) -> Vec<Vec<SiteFact>> {
    let (fns, locals, consts) = (prog.fns, prog.locals, prog.consts);
    let mut first_ids = Vec::with_capacity(fns.len());
    let mut next = 1u32;
    for c in counts {
        first_ids.push(next);
        next += c;
    }
    fns.par_iter()
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
                let wildcard = wildcard(prog, f, vars, consts, name, &func, &inst.ops);
                let comm = func
                    .communicator_arg()
                    .and_then(|k| inst.ops.get(k))
                    .map(|comm| consts::resolve(prog, f, vars, comm));
                let on_comm_self = comm.as_ref().is_some_and(|c| c.is(&consts.comm_self));
                let on_comm_world = comm.as_ref().is_some_and(|c| c.is(&consts.comm_world));
                out.push(SiteFact {
                    id,
                    inst: k as InstId,
                    name: name.clone(),
                    func,
                    wildcard,
                    on_comm_self,
                    on_comm_world,
                });
                id += 1;
            }
            out
        })
        .collect()
}

/// Phase 5b: per function, in parallel, the buffer arguments of its sites
/// against their datatype and the object they point into, as
/// `(site id, call, fact)`; `globals` are each module's global variables.
pub(super) fn buffer_facts(
    prog: &Prog<'_>,
    sites: &[Vec<SiteFact>],
    globals: &[HashMap<String, VarInfo>],
) -> Vec<Vec<(u32, InstId, buffers::Fact)>> {
    let (fns, locals, consts) = (prog.fns, prog.locals, prog.consts);
    fns.par_iter()
        .enumerate()
        .map(|(fi, f)| {
            let vars = &locals[fi].vars;
            sites[fi]
                .iter()
                .flat_map(|s| {
                    let call = (s.inst, s.name.as_str(), &s.func);
                    buffers::check(prog, f, vars, &globals[f.module], consts, call)
                        .into_iter()
                        .map(|fact| (s.id, s.inst, fact))
                })
                .collect()
        })
        .collect()
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
            Some(v) => consts::resolve(prog, f, vars, v),
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
