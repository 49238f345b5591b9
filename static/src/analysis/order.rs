//! Phase 10b: whether the order in which the requests of each
//! any-completion call (`MPI_Waitany`, `MPI_Testany`, `MPI_Waitsome`,
//! `MPI_Testsome`) complete can change what the program does.
//!
//! Which message each request takes is decided when it matches, not when
//! the program learns it completed (MPI-4.0 §3.7.5), so the order is a
//! choice only through what the program does with the index. The taint
//! analysis follows the index and the status of the returned request
//! through the whole function ([`taint::Follow::CompletionOrder`]); the
//! memory it lets through, filled slot by slot, must be filled the same
//! way whatever the order ([`slot_discipline`]). A halo exchange that
//! unpacks whichever neighbour came first into that neighbour's ghost
//! cells passes both.

use std::collections::HashMap;

use mbh_trace::static_report::{CompletionOrder, WildcardKind};
use rayon::prelude::*;

use super::{Facts, Prog};
use crate::ir::InstId;
use crate::{slot_discipline, taint};

/// The decision for every any-completion site, by site id;
/// `reaches_mpi` says per function whether a call to it can reach MPI.
pub(super) fn completion_orders(
    prog: &Prog<'_>,
    facts: &Facts,
    reaches_mpi: &[bool],
) -> HashMap<u32, CompletionOrder> {
    facts
        .sites
        .par_iter()
        .enumerate()
        .flat_map_iter(|(fi, sites)| {
            sites
                .iter()
                .filter(|s| matches!(s.wildcard, Some((WildcardKind::AnyCompletion, _, _))))
                .map(move |s| (s.id, decide(prog, reaches_mpi, fi, s.inst)))
                .collect::<Vec<_>>()
        })
        .collect()
}

/// The decision for the any-completion call `inst` of function `fi`.
fn decide(prog: &Prog<'_>, reaches_mpi: &[bool], fi: usize, inst: InstId) -> CompletionOrder {
    let f = &prog.fns[fi];
    let local = &prog.locals[fi];
    let at = |i: InstId| prog.spans.at(f, i);
    let block = f.insts[inst as usize].block as usize;
    let Some(l) = local.loops.innermost[block].map(|l| &local.loops.loops[l]) else {
        return CompletionOrder::Matters {
            reason: "the call is not in a loop that could complete its other requests".into(),
        };
    };
    let region = vec![true; f.blocks.len()];
    // Calls to other functions are judged by what they are passed (an
    // index passed to a function the analysis does not follow leaks).
    let through = |_: &str| None;
    let verdict = taint::run(&taint::Input {
        follow: taint::Follow::CompletionOrder,
        f,
        vars: &local.vars,
        pointers: &local.pointers,
        consts: prog.consts,
        region: &region,
        seeds: &[inst],
        through: &through,
        at: &at,
    });
    let (collected, slot_stores) = match verdict {
        taint::Verdict::Contained {
            collected,
            slot_stores,
        } => (collected, slot_stores),
        taint::Verdict::Leaks(reason) => return CompletionOrder::Matters { reason },
    };
    let reaches = |name: &str| {
        prog.names
            .resolve(f.module, name)
            .is_some_and(|g| reaches_mpi[g])
    };
    let kept = slot_discipline::check(&slot_discipline::Input {
        f,
        cfg: &local.cfg,
        pointers: &local.pointers,
        l,
        seed: inst,
        slot_stores: &slot_stores,
        reaches_mpi: &reaches,
        at: &at,
    });
    match kept {
        Ok(()) => CompletionOrder::Irrelevant { collected },
        Err(reason) => CompletionOrder::Matters { reason },
    }
}
