//! Races between a process's own loads and stores of its window memory
//! and the remote operations on it (MPI-4.0 §12.7, "Semantics
//! and Correctness": a local store to window memory conflicts with any
//! RMA access to those bytes in the same exposure epoch, a local load
//! with an `MPI_Put` or an accumulate that changes them).
//!
//! The runtime records, per exposure epoch of each of its windows, the
//! byte ranges the owner loaded and stored ([`WindowAccess`], from the
//! access checks; `runtime/src/rma_exposure.rs`), just before the call
//! that closes the epoch. Here each range is put in its epoch by its
//! place in the owner's trace (the `k`-th fence epoch of the window, or
//! the exposure epoch of the owner's last `MPI_Win_post`), and compared
//! with the remote operations on the owner's window that `rma_races`
//! placed in the same epoch at their origins.
//!
//! What orders the two: nothing inside one epoch. A fence epoch's
//! operations complete at the target only at the closing fence (§12.5.1),
//! a PSCW exposure epoch's at `MPI_Win_wait` (§12.5.2), and only those
//! calls make a store visible to the window's public copy and an update
//! visible to loads in the separate memory model (§12.7; a message inside
//! the epoch does not; the unified model gives only "eventually"): so a
//! store before the opening call, or a load after the closing one, is in
//! no epoch and never reported, and an access between them always is
//! when the bytes overlap and one of the two writes. This is the
//! portable reading, valid under both memory models; a program that
//! relies on `MPI_WIN_UNIFIED` and a message to order a store before a
//! remote get in the same epoch is reported.
//!
//! # Limitations
//!
//! Ranges the runtime had to merge past its room ([`WindowAccess`]'s
//! `coarse`), and epochs it could not watch, are not reported: the
//! operations they meet are named as not checked, with why. Passive
//! target epochs are not watched (the owner does not see an origin's
//! lock), nor the memory of dynamic windows.

use crate::place::site_location;
use crate::rma_races::{
    exposure, made_on, window_name, Access, Epoch, Posts, RaceCheck, WinKey, Windows,
};
use mbh_trace::rank_trace::Op;
use mbh_trace::window_access::WindowAccess;
use mbh_trace::{Finding, FindingKind, OpKind, RankTrace, Role, Severity, SiteTable};
use std::collections::{BTreeMap, HashMap};

/// Why an operation's races with its target's own accesses were not
/// checked (a partial run's reason names them).
pub mod why {
    /// Ranges merged past the runtime's room.
    pub const COARSE: &str = "their target loaded or stored too many separate ranges of the window in one epoch for mbhybrid to keep them exactly";
    /// An epoch the runtime could not watch.
    pub const UNWATCHED: &str = "their target could not watch its window memory in that epoch (more windows exposed at once, or more buffers watched, than mbhybrid follows)";
}

/// The epoch of an owner's range, as its own trace places it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Exposed {
    /// The `k`-th fence epoch of the window.
    Fence(u32),
    /// The exposure epoch of the owner's `MPI_Win_post` record.
    Post(u64),
}

/// One range of an owner's own accesses, placed.
#[derive(Debug, Clone)]
struct Local {
    rank: i32,
    window: WinKey,
    local_window: u64,
    access: WindowAccess,
    epoch: Exposed,
}

/// What the check compares: `rma_races`'s windows, operations (indices
/// by target window) and posts.
pub(crate) struct LocalRaces<'a> {
    pub(crate) windows: &'a Windows,
    pub(crate) accesses: &'a [Access],
    pub(crate) by_target: &'a BTreeMap<(WinKey, i32), Vec<usize>>,
    pub(crate) posts: &'a HashMap<(WinKey, i32), Posts>,
}

/// A race found: the remote operation and the owner's range.
#[derive(Debug)]
struct Race {
    remote: Access,
    local: Local,
    bytes: (i64, i64),
}

impl LocalRaces<'_> {
    /// Compares every owner's ranges of `traces` with the operations on
    /// its windows; the races into `check.findings`, the operations not
    /// decided into `check.unchecked`.
    pub(crate) fn check(
        &self,
        sites: Option<&SiteTable>,
        traces: &[Option<RankTrace>],
        check: &mut RaceCheck,
    ) {
        let mut found: BTreeMap<(u32, u32, bool), Race> = BTreeMap::new();
        let mut undecided: BTreeMap<(i32, u64), (Op, &'static str)> = BTreeMap::new();
        for local in traces.iter().flatten().flat_map(|t| self.owned(t)) {
            let key = (local.window, local.rank);
            let (Some(list), Some(Some(unit))) =
                (self.by_target.get(&key), self.windows.units.get(&key))
            else {
                continue;
            };
            for &i in list {
                let remote = &self.accesses[i];
                if !self.same_epoch(key, remote, local.epoch) {
                    continue;
                }
                let mut undecided_as = |why| {
                    undecided
                        .entry((remote.rank, remote.op.index))
                        .or_insert((remote.op.clone(), why));
                };
                if local.access.unwatched {
                    undecided_as(why::UNWATCHED);
                    continue;
                }
                let Some((lo, hi)) = overlap(remote, *unit, local.access.bytes) else {
                    continue;
                };
                if !(local.access.store || remote.writes()) {
                    continue; // two reads
                }
                if local.access.coarse {
                    undecided_as(why::COARSE);
                    continue;
                }
                found
                    .entry((remote.op.site, local.access.site, local.access.store))
                    .or_insert_with(|| Race {
                        remote: remote.clone(),
                        local: local.clone(),
                        bytes: (lo, hi),
                    });
            }
        }
        let made = &self.windows.made;
        check.findings.extend(found.into_values().map(|race| {
            let window = made_on(made, race.local.rank, race.local.local_window);
            race.finding(sites, window.as_ref())
        }));
        check.unchecked.extend(
            undecided
                .into_iter()
                .map(|((rank, _), (op, why))| (rank, op, why)),
        );
    }

    /// The ranges `trace`'s rank recorded of its own windows, each in its
    /// epoch: a fence epoch counted as `rma_races` counts an origin's,
    /// a PSCW one by the rank's open `MPI_Win_post`.
    fn owned(&self, trace: &RankTrace) -> Vec<Local> {
        let made = self.windows.made.get(trace.rank as usize);
        let mut fences: HashMap<u64, u32> = HashMap::new();
        let mut posted: HashMap<u64, u64> = HashMap::new();
        let mut out = Vec::new();
        for op in &trace.ops {
            if let Some(call) = op.rma().filter(|c| !c.failed) {
                match call.kind {
                    OpKind::WinFence => *fences.entry(call.window).or_insert(0) += 1,
                    OpKind::WinPost => {
                        posted.insert(call.window, op.index);
                    }
                    OpKind::WinWait => {
                        posted.remove(&call.window);
                    }
                    OpKind::WinTest if call.test_ended => {
                        posted.remove(&call.window);
                    }
                    _ => {}
                }
                continue;
            }
            let Some(access) = WindowAccess::decode(op) else {
                continue;
            };
            let epoch = if access.pscw {
                match posted.get(&access.window) {
                    Some(&post) => Exposed::Post(post),
                    None => continue,
                }
            } else {
                Exposed::Fence(fences.get(&access.window).copied().unwrap_or(0))
            };
            let Some(window) = made.and_then(|m| m.get(&access.window)).and_then(|m| m.key) else {
                continue;
            };
            out.push(Local {
                rank: trace.rank,
                window,
                local_window: access.window,
                access,
                epoch,
            });
        }
        out
    }

    /// Whether `remote`, an operation on `key`'s target window, is in the
    /// target's epoch `epoch`.
    fn same_epoch(&self, key: (WinKey, i32), remote: &Access, epoch: Exposed) -> bool {
        match (remote.epoch, epoch) {
            (Epoch::Fence(k), Exposed::Fence(l)) => k == l,
            (Epoch::Start { .. }, Exposed::Post(post)) => {
                exposure(self.posts, key, remote) == Ok(Some(post))
            }
            _ => false,
        }
    }
}

/// The bytes both `remote` (on a target of displacement unit `unit`) and
/// the range `bytes` touch, if any.
fn overlap(remote: &Access, unit: i64, (first, end): (u64, u64)) -> Option<(i64, i64)> {
    let (a0, a1) = remote.data.range(unit)?;
    let (b0, b1) = (i64::try_from(first).ok()?, i64::try_from(end).ok()?);
    let (lo, hi) = (a0.max(b0), a1.min(b1));
    (lo < hi).then_some((lo, hi))
}

impl Race {
    fn finding(self, sites: Option<&SiteTable>, made: Option<&Op>) -> Finding {
        let (a, l) = (&self.remote, &self.local);
        let owner = l.rank;
        let window = window_name(sites, l.local_window, made);
        let (lo, hi) = self.bytes;
        let bytes = if hi - lo == 1 {
            format!("byte {lo}")
        } else {
            format!("bytes {lo}..{hi}")
        };
        let what = if l.access.store { "store" } else { "load" };
        let message = format!(
            "{} by rank {} and a {what} by rank {owner} race on {bytes} of rank {owner}'s {window}",
            a.words(),
            a.rank
        );
        let mut finding = Finding::new(FindingKind::RmaRace, Severity::Error, message);
        finding.ranks = if a.rank == owner {
            vec![owner]
        } else {
            vec![a.rank, owner]
        };
        let site = |s: u32| sites.and_then(|t| t.get(s));
        let remote_label = format!(
            "(1) {} by rank {} to rank {owner}, {bytes} of its window",
            a.words(),
            a.rank
        );
        match site(a.op.site) {
            Some(s) => {
                finding
                    .locations
                    .push(site_location(s, a.rank, Role::Secondary, &remote_label))
            }
            None => finding.notes.push(remote_label),
        }
        let local_label = format!("(2) rank {owner}'s own {what} of {bytes} of its window memory");
        match site(l.access.site) {
            Some(s) => {
                let mut location = site_location(s, owner, Role::Primary, &local_label);
                location.call = None; // an access, not a call
                finding.locations.insert(0, location);
            }
            None => finding
                .notes
                .push(format!("{local_label} (the access's line is unknown)")),
        }
        let conflict = match (l.access.store, a.writes()) {
            (true, true) => "both write them",
            (true, false) => "the store changes what the operation reads",
            _ => "the load reads what the operation writes",
        };
        let (epoch, help) = match l.epoch {
            Exposed::Fence(_) => (
                "both are in the same fence epoch: the operation completes at rank {owner} only at the next `MPI_Win_fence`, and a load or store of window memory in between is not ordered with it".replace("{owner}", &owner.to_string()),
                "move the load or store out of the epoch (before the `MPI_Win_fence` that opens it or after the one that closes it), or make the two touch different bytes (MPI-4.0 §12.7)",
            ),
            Exposed::Post(_) => (
                format!("both are in the same exposure epoch of rank {owner} (its `MPI_Win_post` to its `MPI_Win_wait`): the operation completes there only at `MPI_Win_wait`, and a load or store of window memory in between is not ordered with it"),
                "move the load or store out of the exposure epoch (before `MPI_Win_post` or after `MPI_Win_wait`), or make the two touch different bytes (MPI-4.0 §12.7)",
            ),
        };
        finding.notes.push(format!("{conflict}; {epoch}"));
        finding.help = Some(help.to_owned());
        finding
    }
}
