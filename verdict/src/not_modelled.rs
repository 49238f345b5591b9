//! The calls of MPI functions the runtime does not model (issue 38), from
//! the ranks' [`OpKind::NotModelled`](mbh_trace::OpKind::NotModelled)
//! records, and of the one-sided communication calls it records without
//! checking their races yet (issue 39's first slice; their records, class
//! [`OpClass::Rma`]): each is a place the verdict does not cover fully, so
//! a run that made one is partial. One location per function and call
//! site, on the lowest rank that made it.
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
use mbh_trace::{OpKind, RankTrace};
use std::collections::BTreeMap;

/// What a location of an unmodelled call says.
pub const LABEL: &str = "not modelled by mbhybrid: not verified";

/// What a location of a call that opens a passive target epoch says: the
/// window memory of its target is not watched while the lock is held.
pub const PASSIVE_LABEL: &str =
    "one-sided communication: passive target epoch, local accesses to the target's window memory not checked";

/// What the location of `MPI_Win_allocate_shared` says.
pub const SHARED_LABEL: &str =
    "one-sided communication: shared memory window, other processes' loads and stores of its memory not checked";

/// What a location of a one-sided communication call of a program built
/// without the access checks says: neither window memory nor origin
/// buffers are watched.
pub const RACES_NO_ACCESS_LABEL: &str =
    "one-sided communication: epochs and remote races checked, local accesses to window memory and origin buffers not";

/// The label of a location of one-sided call `kind` (a record of class
/// [`OpClass::Rma`]), `None` when everything it does is checked: in a
/// program built with the access checks (`access_checks`), fence and
/// PSCW epochs and their operations.
fn rma_label(kind: OpKind, access_checks: bool) -> Option<&'static str> {
    match kind {
        _ if !access_checks => Some(RACES_NO_ACCESS_LABEL),
        OpKind::WinLock | OpKind::WinLockAll => Some(PASSIVE_LABEL),
        OpKind::WinAllocateShared => Some(SHARED_LABEL),
        _ => None,
    }
}

/// The start of what a location of an operation whose races were not
/// checked says; the reason follows.
pub const UNCHECKED_LABEL: &str = "races not checked: ";

/// The unmodelled calls the ranks of `traces` made, by function then line,
/// and the operations whose races were not checked (`unchecked`, from
/// `rma_races`: rank, record, why).
pub fn calls(
    ctx: &RunContext<'_>,
    traces: &[Option<RankTrace>],
    unchecked: &[(i32, mbh_trace::rank_trace::Op, &str)],
) -> Vec<Location> {
    let mut found: BTreeMap<(String, u32, String), i32> = BTreeMap::new();
    for (rank, op, why) in unchecked {
        let key = (
            op.kind.mpi_name().to_owned(),
            op.site,
            format!("{UNCHECKED_LABEL}{why}"),
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
                let label = rma_label(op.kind, access_checks)?;
                Some((op.site, op.kind.mpi_name().to_owned(), label))
            });
        let unmodelled = trace
            .not_modelled_calls()
            .map(|(site, name)| (site, name, LABEL));
        for (site, name, label) in unmodelled.chain(rma) {
            let key = (name, site, label.to_owned());
            let rank = found.entry(key).or_insert(trace.rank);
            *rank = (*rank).min(trace.rank);
        }
    }
    let mut locations: Vec<Location> = found
        .into_iter()
        .map(|((name, site, label), rank)| location(ctx, &name, site, rank, &label))
        .collect();
    locations.sort_by(|a, b| {
        (&a.call, &a.file, a.line, &a.label).cmp(&(&b.call, &b.file, b.line, &b.label))
    });
    locations.dedup_by(|a, b| {
        (&a.call, &a.file, a.line, &a.label) == (&b.call, &b.file, b.line, &b.label)
    });
    locations
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

/// Why a run that made the calls of `locations` is partial: the calls
/// where a run stopped because two threads were in MPI at once
/// ([`crate::thread_overlap`]), the unmodelled calls, then the one-sided
/// communication calls whose races are not checked, each named with its
/// first lines. `None` when there
/// are none.
pub fn partial_reason(locations: &[Location]) -> Option<String> {
    let (stopped, locations): (Vec<Location>, Vec<Location>) = locations
        .iter()
        .cloned()
        .partition(|l| l.label == crate::thread_overlap::STOPPED_LABEL);
    let (unchecked, locations): (Vec<Location>, Vec<Location>) = locations
        .into_iter()
        .partition(|l| l.label.starts_with(UNCHECKED_LABEL));
    let (rma, unmodelled): (Vec<Location>, Vec<Location>) = locations.into_iter().partition(|l| {
        [PASSIVE_LABEL, SHARED_LABEL, RACES_NO_ACCESS_LABEL].contains(&l.label.as_str())
    });
    let mut parts = Vec::new();
    if !stopped.is_empty() {
        parts.push(format!(
            "a run stopped where a second thread called MPI while another thread of its rank was inside MPI, so what the program does after that call is not verified: {}",
            summary(&stopped)
        ));
    }
    if !unmodelled.is_empty() {
        parts.push(format!(
            "the program calls MPI functions mbhybrid does not model, so what they do is not verified: {}",
            summary(&unmodelled)
        ));
    }
    parts.extend(rma_reasons(&rma));
    let mut whys: BTreeMap<&str, Vec<Location>> = BTreeMap::new();
    for l in &unchecked {
        whys.entry(&l.label[UNCHECKED_LABEL.len()..])
            .or_default()
            .push(l.clone());
    }
    for (why, at) in whys {
        parts.push(format!(
            "the races of these one-sided operations were not checked, because {why}: {}",
            summary(&at)
        ));
    }
    (!parts.is_empty()).then(|| parts.join("; "))
}

/// Why a run with the one-sided communication calls of `rma` is partial:
/// what of it is not checked (MPI-4.0 §12.7), one sentence per kind of
/// label, each naming its calls.
fn rma_reasons(rma: &[Location]) -> Vec<String> {
    let with = |label: &str| -> Vec<Location> {
        rma.iter().filter(|l| l.label == label).cloned().collect()
    };
    let mut reasons = Vec::new();
    let unchecked = with(RACES_NO_ACCESS_LABEL);
    if !unchecked.is_empty() {
        reasons.push(format!(
            "the program uses one-sided communication (RMA): mbhybrid checks its epochs and the races between its operations, but not the loads and stores of window memory by its own process during an epoch, nor, as the program was built without the access checks (`--no-access-checks` or MBHYBRID_ACCESS_CHECKS=off), of origin buffers while an operation may be in flight: {}",
            summary(&unchecked)
        ));
    }
    let passive = with(PASSIVE_LABEL);
    if !passive.is_empty() {
        reasons.push(format!(
            "the program uses passive target synchronization of one-sided communication (RMA locks): mbhybrid checks its epochs, the races between its operations and the program's loads and stores of their origin buffers while they may be in flight, but not the loads and stores of window memory by its own process while another rank may hold a lock on it: {}",
            summary(&passive)
        ));
    }
    let shared = with(SHARED_LABEL);
    if !shared.is_empty() {
        reasons.push(format!(
            "the program makes shared memory windows: the loads and stores other processes make directly of their memory are not checked: {}",
            summary(&shared)
        ));
    }
    reasons
}

/// Places named per function in [`summary`]; the JSON lists them all.
const PLACES_SHOWN: usize = 3;

/// `MPI_Put (rma.c:12), MPI_Win_fence (rma.c:10, rma.c:14)`: the calls of
/// `locations` by function, for a sentence (at most three
/// places each, then how many more).
pub fn summary(locations: &[Location]) -> String {
    let mut by_call: BTreeMap<&str, Vec<String>> = BTreeMap::new();
    for l in locations {
        let place = if l.line == 0 {
            l.file.clone()
        } else {
            format!("{}:{}", l.file, l.line)
        };
        let places = by_call.entry(l.call.as_deref().unwrap_or("?")).or_default();
        if !places.contains(&place) {
            places.push(place);
        }
    }
    by_call
        .into_iter()
        .map(|(call, places)| {
            let more = places.len().saturating_sub(PLACES_SHOWN);
            let shown = places[..places.len().min(PLACES_SHOWN)].join(", ");
            match more {
                0 => format!("{call} ({shown})"),
                n => format!("{call} ({shown} and {n} more)"),
            }
        })
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(call: &str, line: u32) -> Location {
        Location {
            file: "rma.c".into(),
            line,
            column: 3,
            rank: 0,
            call: Some(call.into()),
            function: None,
            role: Role::Primary,
            label: LABEL.into(),
        }
    }

    #[test]
    fn the_reason_names_unmodelled_and_race_unchecked_calls_apart() {
        let mut lock = at("MPI_Win_lock", 12);
        lock.label = PASSIVE_LABEL.into();
        let reason = partial_reason(&[at("MPI_Neighbor_alltoall", 9), lock]).unwrap();
        assert!(
            reason.starts_with("the program calls MPI functions mbhybrid does not model, so what they do is not verified: MPI_Neighbor_alltoall (rma.c:9); "),
            "{reason}"
        );
        assert!(
            reason.ends_with("but not the loads and stores of window memory by its own process while another rank may hold a lock on it: MPI_Win_lock (rma.c:12)"),
            "{reason}"
        );
        assert_eq!(
            rma_label(OpKind::Put, true),
            None,
            "fence and PSCW: checked"
        );
        assert_eq!(rma_label(OpKind::WinFence, true), None);
        assert_eq!(rma_label(OpKind::WinLockAll, true), Some(PASSIVE_LABEL));
        assert_eq!(rma_label(OpKind::Put, false), Some(RACES_NO_ACCESS_LABEL));
        let mut unchecked = at("MPI_Put", 12);
        unchecked.label = RACES_NO_ACCESS_LABEL.into();
        let reason = partial_reason(&[unchecked]).unwrap();
        assert!(
            reason.contains("the races between its operations, but not the loads and stores of window memory by its own process during an epoch, nor, as the program was built without the access checks")
                && reason.ends_with("of origin buffers while an operation may be in flight: MPI_Put (rma.c:12)"),
            "{reason}"
        );
        assert_eq!(partial_reason(&[]), None);
        let mut holes = at("MPI_Get", 14);
        holes.label = format!("{UNCHECKED_LABEL}their target datatype has holes");
        let reason = partial_reason(&[holes]).unwrap();
        assert_eq!(
            reason,
            "the races of these one-sided operations were not checked, because their target datatype has holes: MPI_Get (rma.c:14)"
        );
    }

    #[test]
    fn a_run_stopped_by_two_threads_in_mpi_is_said_first() {
        let mut stopped = at("MPI_Sendrecv", 24);
        stopped.label = crate::thread_overlap::STOPPED_LABEL.into();
        let reason = partial_reason(&[at("MPI_Neighbor_alltoall", 9), stopped]).unwrap();
        assert!(
            reason.starts_with("a run stopped where a second thread called MPI while another thread of its rank was inside MPI, so what the program does after that call is not verified: MPI_Sendrecv (rma.c:24); the program calls MPI functions mbhybrid does not model"),
            "{reason}"
        );
    }

    #[test]
    fn the_summary_names_each_function_with_its_first_lines() {
        let calls = [
            at("MPI_Win_fence", 10),
            at("MPI_Put", 12),
            at("MPI_Win_fence", 14),
            at("MPI_Win_fence", 16),
            at("MPI_Win_fence", 18),
        ];
        assert_eq!(
            summary(&calls),
            "MPI_Put (rma.c:12), MPI_Win_fence (rma.c:10, rma.c:14, rma.c:16 and 1 more)"
        );
    }
}
