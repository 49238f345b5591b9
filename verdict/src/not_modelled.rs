//! The calls of MPI functions the runtime does not model, from
//! the ranks' [`OpKind::NotModelled`]
//! records, and of the one-sided communication calls it records without
//! checking their races (their records, class
//! [`OpClass::Rma`]): each is a place the verdict does not cover fully, so
//! a run that made one is partial. One location per function, call site
//! and what is not covered ([`Unverified`], which the report's words are
//! grouped by), on the lowest rank that made it.
//!
//! One-sided communication's epochs and the races between its operations
//! are checked (`rma_epochs`, `rma_races`), and, when the program was
//! built with the access checks, its own loads and stores of origin and
//! result buffers while they may be in flight (`rma_reuse`) and of its
//! window memory during fence and PSCW exposure epochs (`rma_local`). A
//! run stays partial for what is still not checked, naming the calls that
//! leave the model: passive target synchronization (`MPI_Win_lock`,
//! `MPI_Win_lock_all`: the owner does not see when its window is
//! exposed), shared memory windows (`MPI_Win_allocate_shared`: other
//! processes load and store their memory directly), every RMA call of a
//! program built without the access checks; and it names the operations
//! whose races `rma_races` or `rma_local` could not decide, with why.

use crate::outcome::RunContext;
use crate::place::site_location;
use mbh_trace::finding::{Location, Role};
use mbh_trace::op::OpClass;
use mbh_trace::outcome::{Unverified, UnverifiedCall};
use mbh_trace::{OpKind, RankTrace};
use std::collections::BTreeMap;

/// What of one-sided call `kind` (a record of class [`OpClass::Rma`]) is
/// not covered, `None` when everything it does is checked: in a program
/// built with the access checks (`access_checks`), fence and PSCW epochs
/// and their operations.
fn rma_unverified(kind: OpKind, access_checks: bool) -> Option<Unverified> {
    match kind {
        _ if !access_checks => Some(Unverified::NoAccessChecks),
        OpKind::WinLock | OpKind::WinLockAll => Some(Unverified::PassiveTarget),
        OpKind::WinAllocateShared => Some(Unverified::SharedWindow),
        _ => None,
    }
}

/// The unmodelled calls the ranks of `traces` made, by function then line,
/// and the operations whose races were not checked (`unchecked`, from
/// `rma_races`: rank, record, why).
pub fn calls(
    ctx: &RunContext<'_>,
    traces: &[Option<RankTrace>],
    unchecked: &[(i32, mbh_trace::rank_trace::Op, &'static str)],
) -> Vec<UnverifiedCall> {
    let mut found: BTreeMap<(String, u32, Unverified), i32> = BTreeMap::new();
    for (rank, op, why) in unchecked {
        let key = (
            op.kind.mpi_name().to_owned(),
            op.site,
            Unverified::RacesUnchecked(why),
        );
        let at = found.entry(key).or_insert(*rank);
        *at = (*at).min(*rank);
    }
    // The runtime watches origin buffers and window memory only for a
    // program whose loads and stores call the access check.
    let access_checks = ctx.sites.is_some_and(|s| s.access_checks);
    for trace in traces.iter().flatten() {
        let rma = trace
            .ops
            .iter()
            .filter(|op| op.kind.class() == OpClass::Rma)
            .filter_map(|op| {
                let what = rma_unverified(op.kind, access_checks)?;
                Some((op.site, op.kind.mpi_name().to_owned(), what))
            });
        let unmodelled = trace
            .not_modelled_calls()
            .map(|(site, name)| (site, name, Unverified::NotModelled));
        for (site, name, what) in unmodelled.chain(rma) {
            let rank = found.entry((name, site, what)).or_insert(trace.rank);
            *rank = (*rank).min(trace.rank);
        }
    }
    let mut calls: Vec<UnverifiedCall> = found
        .into_iter()
        .map(|((name, site, what), rank)| UnverifiedCall {
            location: location(ctx, &name, site, rank, &what.label()),
            what,
        })
        .collect();
    let key = |c: &UnverifiedCall| {
        let l = &c.location;
        (l.call.clone(), l.file.clone(), l.line, l.label.clone())
    };
    calls.sort_by_key(key);
    calls.dedup_by(|a, b| key(a) == key(b));
    calls
}

/// Where call `name` at `site` is; a site no table knows (a call from a
/// library) is placed in the program, line 0.
fn location(ctx: &RunContext<'_>, name: &str, site: u32, rank: i32, label: &str) -> Location {
    let mut location = match ctx.sites.and_then(|s| s.get(site)) {
        Some(known) => site_location(known, rank, Role::Primary, label),
        None => Location {
            file: ctx.program.to_owned(),
            line: 0,
            column: 0,
            rank,
            call: None,
            function: None,
            role: Role::Primary,
            label: label.to_owned(),
        },
    };
    location.call = Some(name.to_owned());
    location
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fence_and_pscw_epochs_are_checked_with_the_access_checks() {
        assert_eq!(
            rma_unverified(OpKind::Put, true),
            None,
            "fence and PSCW: checked"
        );
        assert_eq!(rma_unverified(OpKind::WinFence, true), None);
        assert_eq!(
            rma_unverified(OpKind::WinLockAll, true),
            Some(Unverified::PassiveTarget)
        );
        assert_eq!(
            rma_unverified(OpKind::Put, false),
            Some(Unverified::NoAccessChecks)
        );
    }
}
