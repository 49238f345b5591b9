//! Epoch and lifecycle errors of one-sided communication (MPI-4.0
//! §12.5), from each rank's RMA records ([`mbh_trace::rma`]), one window
//! at a time:
//!
//! * an operation (`MPI_Put` ...) outside any access epoch on its target:
//!   no fence epoch open, no `MPI_Win_lock` of the target, no
//!   `MPI_Win_lock_all`, no `MPI_Win_start` whose group holds the target
//!   (§12.5.2; a group of more than 64 ranks is not known, and holds
//!   every target); `MPI_Win_flush` of a target
//!   the rank has not locked (§12.5.4: only in passive-target epochs);
//! * `MPI_Win_unlock` of a target the rank has not locked,
//!   `MPI_Win_unlock_all` without `MPI_Win_lock_all`;
//! * `MPI_Win_complete` without `MPI_Win_start`, `MPI_Win_wait` or a
//!   `MPI_Win_test` without `MPI_Win_post`;
//! * a lock of a target the rank holds locked already on the window (or
//!   a second `MPI_Win_lock_all`);
//! * an epoch opened by `MPI_Win_lock`, `MPI_Win_lock_all`,
//!   `MPI_Win_start` or `MPI_Win_post` still open at `MPI_Win_free` or at
//!   `MPI_Finalize`.
//!
//! A fence opens an epoch for the operations that follow it (both access
//! and exposure, §12.5.1) unless its assert has `MPI_MODE_NOSUCCEED`, and
//! closes the one before: operations between fences are never flagged,
//! and a fence epoch left open at `MPI_Win_free` is what every fence
//! sequence ends with, not an error. Each record is judged as the rank
//! made it, so every run reports what it did, a call MPI refused too (it
//! refuses some of these errors itself). Races are not checked here.

use crate::place::site_location;
use mbh_trace::rank_trace::{Op, RankTrace};
use mbh_trace::rma::{assert, RmaCall, RmaLock};
use mbh_trace::{Finding, FindingKind, OpKind, Role, Severity, SiteTable};
use std::collections::BTreeMap;

/// One finding per (problem, call site, earlier call site), with every
/// rank that made it.
pub(crate) fn rma_epoch_findings(
    sites: Option<&SiteTable>,
    traces: &[Option<RankTrace>],
) -> Vec<Finding> {
    let mut found: BTreeMap<(u8, u32, u32), (Problem, Vec<i32>)> = BTreeMap::new();
    for trace in traces.iter().flatten() {
        for problem in problems(trace) {
            let key = (
                problem.what.order(),
                problem.at.site,
                problem.earlier_site(),
            );
            let entry = found.entry(key).or_insert_with(|| (problem, Vec::new()));
            if !entry.1.contains(&trace.rank) {
                entry.1.push(trace.rank);
            }
        }
    }
    found
        .into_values()
        .map(|(problem, ranks)| problem.finding(sites, ranks))
        .collect()
}

/// An epoch error of one rank.
#[derive(Debug, Clone)]
struct Problem {
    what: What,
    /// The rank that made it.
    rank: i32,
    /// The window's id on the rank, and the call that made it.
    window: u64,
    made: Option<Op>,
    /// The call at fault.
    at: Op,
    /// The earlier call involved: what opened the epoch left open, the
    /// lock held already, or where the last epoch ended.
    earlier: Option<Op>,
}

/// What is wrong.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum What {
    /// An operation (or a flush) with no epoch on its target.
    OutsideEpoch { target: Option<i32> },
    /// An operation in an access epoch of `MPI_Win_start` whose group
    /// does not hold its target, and no other epoch.
    OutsideGroup { target: i32 },
    /// `MPI_Win_unlock` of a target not locked, `MPI_Win_unlock_all`
    /// without `MPI_Win_lock_all`.
    UnlockNotLocked { target: Option<i32> },
    /// `MPI_Win_complete` without `MPI_Win_start`.
    CompleteWithoutStart,
    /// `MPI_Win_wait`/`MPI_Win_test` without `MPI_Win_post`.
    WaitWithoutPost,
    /// A lock of a target already locked (`None`: a second lock_all).
    LockedTwice { target: Option<i32> },
    /// An epoch still open when the window was freed.
    OpenAtFree,
    /// An epoch still open at `MPI_Finalize`.
    OpenAtFinalize,
}

impl What {
    fn order(self) -> u8 {
        match self {
            What::OutsideEpoch { .. } => 0,
            What::UnlockNotLocked { .. } => 1,
            What::CompleteWithoutStart => 2,
            What::WaitWithoutPost => 3,
            What::LockedTwice { .. } => 4,
            What::OpenAtFree => 5,
            What::OpenAtFinalize => 6,
            What::OutsideGroup { .. } => 7,
        }
    }
}

/// The epochs of one window on one rank.
#[derive(Debug, Default)]
struct Epochs {
    /// The call that made the window.
    made: Option<Op>,
    /// The fence that opened the current fence epoch.
    fence: Option<Op>,
    /// `MPI_Win_lock`s held, by target.
    locks: BTreeMap<i32, Op>,
    /// The `MPI_Win_lock_all` held.
    lock_all: Option<Op>,
    /// The `MPI_Win_start` whose access epoch is open.
    start: Option<Op>,
    /// The `MPI_Win_post` whose exposure epoch is open.
    post: Option<Op>,
    /// The last call that ended an access epoch (unlock, unlock_all,
    /// complete, a fence with `MPI_MODE_NOSUCCEED`).
    last_ended: Option<Op>,
}

impl Epochs {
    /// Whether an access epoch covers `target` (`None`: a target not
    /// known, as `MPI_PROC_NULL`: any epoch does).
    fn covers(&self, target: Option<i32>) -> bool {
        self.fence.is_some() || self.start_covers(target) || self.passive_covers(target)
    }

    /// Whether the `MPI_Win_start` epoch open covers `target`: its group
    /// holds it (MPI-4.0 §12.5.2), or the group or the target is not known.
    fn start_covers(&self, target: Option<i32>) -> bool {
        let Some(start) = self.start.as_ref().and_then(Op::rma) else {
            return false;
        };
        target.is_none_or(|t| start.group_holds(t))
    }

    /// Whether a passive-target epoch covers `target`.
    fn passive_covers(&self, target: Option<i32>) -> bool {
        self.lock_all.is_some()
            || match target {
                Some(t) => self.locks.contains_key(&t),
                None => !self.locks.is_empty(),
            }
    }

    /// The epochs still open that must be closed before the window goes:
    /// locks, lock_all, start, post (not a fence epoch).
    fn open(&self) -> Vec<Op> {
        let mut open: Vec<Op> = self.locks.values().cloned().collect();
        open.extend(self.lock_all.iter().cloned());
        open.extend(self.start.iter().cloned());
        open.extend(self.post.iter().cloned());
        open.sort_by_key(|op| op.index);
        open
    }
}

/// The epoch errors of one rank, in the order it made them.
fn problems(trace: &RankTrace) -> Vec<Problem> {
    let mut windows: BTreeMap<u64, Epochs> = BTreeMap::new();
    let mut out = Vec::new();
    for op in &trace.ops {
        if op.kind == OpKind::Finalize {
            for (&window, epochs) in &windows {
                for opener in epochs.open() {
                    out.push(problem(
                        trace,
                        What::OpenAtFinalize,
                        window,
                        epochs,
                        op,
                        Some(opener),
                    ));
                }
            }
            continue;
        }
        let Some(call) = op.rma() else {
            continue;
        };
        // A call MPI refused is still judged: MPICH refuses an operation
        // outside an epoch, an unlock of a target not locked, a free with
        // an epoch open, and that is the error to report. Only a window
        // MPI failed to make has no epochs to follow.
        if (call.failed && call.kind.makes_window()) || call.window == 0 {
            continue;
        }
        if call.kind.makes_window() {
            windows.insert(
                call.window,
                Epochs {
                    made: Some(op.clone()),
                    ..Epochs::default()
                },
            );
            continue;
        }
        let epochs = windows.entry(call.window).or_default();
        for (what, earlier) in step(epochs, &call, op) {
            out.push(problem(trace, what, call.window, epochs, op, earlier));
        }
        if call.kind == OpKind::WinFree {
            windows.remove(&call.window);
        }
    }
    out
}

fn problem(
    trace: &RankTrace,
    what: What,
    window: u64,
    epochs: &Epochs,
    at: &Op,
    earlier: Option<Op>,
) -> Problem {
    Problem {
        what,
        rank: trace.rank,
        window,
        made: epochs.made.clone(),
        at: at.clone(),
        earlier,
    }
}

/// The key of a lock whose target the runtime could not translate into a
/// world rank: its unlock (translated alike) finds it.
const UNKNOWN_TARGET: i32 = -1;

/// Applies `call` (record `op`) to the window's epochs; returns what is
/// wrong with it, each with the earlier call involved.
fn step(epochs: &mut Epochs, call: &RmaCall, op: &Op) -> Vec<(What, Option<Op>)> {
    let target = call.target;
    let mut wrong = Vec::new();
    match call.kind {
        OpKind::WinFence => {
            if epochs.fence.is_some() && call.assert & assert::NOSUCCEED != 0 {
                epochs.last_ended = Some(op.clone());
            }
            epochs.fence = (call.assert & assert::NOSUCCEED == 0).then(|| op.clone());
        }
        // Locking `MPI_PROC_NULL` is allowed and does nothing (§12.5.3).
        OpKind::WinLock | OpKind::WinUnlock if call.proc_null => {}
        OpKind::WinLock => {
            let key = target.unwrap_or(UNKNOWN_TARGET);
            if let Some(held) = epochs.locks.get(&key).or(epochs.lock_all.as_ref()) {
                wrong.push((What::LockedTwice { target }, Some(held.clone())));
            } else {
                epochs.locks.insert(key, op.clone());
            }
        }
        OpKind::WinLockAll => match &epochs.lock_all {
            Some(held) => wrong.push((What::LockedTwice { target: None }, Some(held.clone()))),
            None => epochs.lock_all = Some(op.clone()),
        },
        OpKind::WinUnlock => match epochs.locks.remove(&target.unwrap_or(UNKNOWN_TARGET)) {
            Some(_) => epochs.last_ended = Some(op.clone()),
            None => wrong.push((What::UnlockNotLocked { target }, epochs.last_ended.clone())),
        },
        OpKind::WinUnlockAll => match epochs.lock_all.take() {
            Some(_) => epochs.last_ended = Some(op.clone()),
            None => wrong.push((
                What::UnlockNotLocked { target: None },
                epochs.last_ended.clone(),
            )),
        },
        OpKind::WinStart => epochs.start = Some(op.clone()),
        OpKind::WinComplete => match epochs.start.take() {
            Some(_) => epochs.last_ended = Some(op.clone()),
            None => wrong.push((What::CompleteWithoutStart, epochs.last_ended.clone())),
        },
        OpKind::WinPost => epochs.post = Some(op.clone()),
        OpKind::WinWait => {
            let posted = epochs.post.take();
            wrong.extend(posted.is_none().then_some((What::WaitWithoutPost, None)));
        }
        OpKind::WinTest => {
            if epochs.post.is_none() {
                wrong.push((What::WaitWithoutPost, None));
            } else if call.test_ended {
                epochs.post = None;
            }
        }
        OpKind::WinFlush | OpKind::WinFlushLocal
            if !call.proc_null && !epochs.passive_covers(target) =>
        {
            wrong.push((What::OutsideEpoch { target }, epochs.last_ended.clone()));
        }
        OpKind::WinFlushAll | OpKind::WinFlushLocalAll if !epochs.passive_covers(None) => {
            wrong.push((
                What::OutsideEpoch { target: None },
                epochs.last_ended.clone(),
            ));
        }
        OpKind::WinFree => {
            for opener in epochs.open() {
                wrong.push((What::OpenAtFree, Some(opener)));
            }
        }
        kind if kind.is_rma_operation() && !epochs.covers(target) => {
            match (&epochs.start, target) {
                (Some(start), Some(t)) => {
                    wrong.push((What::OutsideGroup { target: t }, Some(start.clone())))
                }
                _ => wrong.push((What::OutsideEpoch { target }, epochs.last_ended.clone())),
            }
        }
        _ => {}
    }
    wrong
}

impl Problem {
    fn earlier_site(&self) -> u32 {
        self.earlier.as_ref().map_or(0, |op| op.site)
    }

    /// `window 1 (made by MPI_Win_allocate at rma.c:15)`.
    fn window_words(&self, sites: Option<&SiteTable>) -> String {
        let made = self.made.as_ref().map(|op| {
            let place = sites
                .and_then(|s| s.get(op.site))
                .filter(|s| s.line > 0)
                .map(|s| format!(" at {}", mbh_trace::place(&s.file, s.line, 0, None)))
                .unwrap_or_default();
            format!(" (made by `{}`{place})", op.kind.mpi_name())
        });
        format!("window {}{}", self.window, made.unwrap_or_default())
    }

    fn finding(self, sites: Option<&SiteTable>, ranks: Vec<i32>) -> Finding {
        let window = self.window_words(sites);
        let (rank, call) = (self.rank, self.at.kind.mpi_name());
        let of = |target: Option<i32>| match target {
            Some(t) => format!("rank {t}"),
            None => "its target".to_owned(),
        };
        let opener = self
            .earlier
            .as_ref()
            .map(|op| op.kind.mpi_name())
            .unwrap_or("");
        let epoch = epoch_words(self.earlier.as_ref());
        let (message, label, earlier_label, help) = match self.what {
            What::OutsideEpoch { target } => (
                format!("`{call}` to {} on {window} outside any access epoch", of(target)),
                format!(
                    "rank {rank} has no epoch open on window {} that covers {}: no fence epoch, no lock of the target, no `MPI_Win_lock_all`, no `MPI_Win_start`",
                    self.window,
                    of(target)
                ),
                "the last access epoch on the window ended here".to_owned(),
                "open an access epoch on the target first (MPI-4.0 §12.5): a `MPI_Win_fence` before and after the operations, `MPI_Win_lock`/`MPI_Win_unlock` (or `MPI_Win_lock_all`) around them, or `MPI_Win_start`/`MPI_Win_complete`",
            ),
            What::OutsideGroup { target } => (
                format!("`{call}` to rank {target} on {window}, which is not in the group of rank {rank}'s access epoch"),
                format!("rank {target} is not in the group rank {rank} gave `MPI_Win_start`, and no other epoch covers it"),
                format!("access epoch opened here for a group without rank {target}"),
                "give `MPI_Win_start` a group that holds every target of the operations before `MPI_Win_complete` (MPI-4.0 §12.5.2)",
            ),
            What::UnlockNotLocked { target } => (
                match self.at.kind {
                    OpKind::WinUnlockAll => format!("`MPI_Win_unlock_all` on {window} without `MPI_Win_lock_all`"),
                    _ => format!("`MPI_Win_unlock` of {} on {window}, which rank {rank} has not locked", of(target)),
                },
                format!("rank {rank} holds no such lock on window {}", self.window),
                "the last epoch on the window ended here".to_owned(),
                "unlock only a target this rank locked with `MPI_Win_lock` (`MPI_Win_unlock_all` only after `MPI_Win_lock_all`), once per lock (MPI-4.0 §12.5.3)",
            ),
            What::CompleteWithoutStart => (
                format!("`MPI_Win_complete` on {window} without `MPI_Win_start`"),
                format!("rank {rank} has no access epoch opened by `MPI_Win_start` on window {} to complete", self.window),
                "the last access epoch on the window ended here".to_owned(),
                "call `MPI_Win_start` with the target group before the operations, and `MPI_Win_complete` once after them (MPI-4.0 §12.5.2)",
            ),
            What::WaitWithoutPost => (
                format!("`{call}` on {window} without `MPI_Win_post`"),
                format!("rank {rank} has no exposure epoch opened by `MPI_Win_post` on window {}", self.window),
                String::new(),
                "call `MPI_Win_post` with the origin group before `MPI_Win_wait` or `MPI_Win_test` (MPI-4.0 §12.5.2)",
            ),
            What::LockedTwice { target } => (
                match target {
                    Some(t) => format!("rank {rank} locks rank {t} on {window} while it holds a lock on it already"),
                    None => format!("`{call}` on {window} while rank {rank} holds `MPI_Win_lock_all` already"),
                },
                format!("rank {rank} already holds this lock on window {}", self.window),
                format!("locked here by `{opener}`, not unlocked since"),
                "unlock the target (`MPI_Win_unlock`, `MPI_Win_unlock_all`) before locking it again; one rank holds at most one lock per target and window (MPI-4.0 §12.5.3)",
            ),
            What::OpenAtFree => (
                format!("{window} freed while rank {rank}'s {epoch} is still open"),
                format!("`MPI_Win_free` with an epoch of rank {rank} still open on window {}", self.window),
                format!("{epoch} opened here, never closed"),
                "close every epoch before `MPI_Win_free` (MPI-4.0 §12.2.5): `MPI_Win_unlock`/`MPI_Win_unlock_all` after a lock, `MPI_Win_complete` after `MPI_Win_start`, `MPI_Win_wait` after `MPI_Win_post`",
            ),
            What::OpenAtFinalize => (
                format!("`MPI_Finalize` while rank {rank}'s {epoch} on {window} is still open"),
                format!("rank {rank} finalizes with an epoch still open on window {}", self.window),
                format!("{epoch} opened here, never closed"),
                "close every epoch, then free the window, before `MPI_Finalize` (MPI-4.0 §12.5, §11.2.2)",
            ),
        };
        let mut finding = Finding::new(FindingKind::RmaEpoch, Severity::Error, message);
        finding.ranks = ranks;
        let site = |op: &Op| sites.and_then(|s| s.get(op.site));
        match site(&self.at) {
            Some(s) => finding
                .locations
                .push(site_location(s, rank, Role::Primary, &label)),
            None => finding
                .notes
                .push(format!("`{call}` on rank {rank}: {label}")),
        }
        if let Some(earlier) = &self.earlier {
            match site(earlier) {
                Some(s) if !earlier_label.is_empty() => {
                    finding
                        .locations
                        .push(site_location(s, rank, Role::Secondary, &earlier_label))
                }
                _ => {}
            }
        }
        finding.help = Some(help.to_owned());
        finding
    }
}

/// `exclusive lock of rank 1`, `access epoch (MPI_Win_start)`, ...: the
/// epoch `opener` opened.
fn epoch_words(opener: Option<&Op>) -> String {
    let Some(op) = opener else {
        return "epoch".to_owned();
    };
    let call = op.rma();
    match op.kind {
        OpKind::WinLock => {
            let lock = call.and_then(|c| c.lock).map_or("lock", |l| match l {
                RmaLock::Exclusive => "exclusive lock",
                RmaLock::Shared => "shared lock",
            });
            match call.and_then(|c| c.target) {
                Some(t) => format!("{lock} of rank {t}"),
                None => lock.to_owned(),
            }
        }
        OpKind::WinLockAll => "lock of every rank (`MPI_Win_lock_all`)".to_owned(),
        OpKind::WinStart => "access epoch (`MPI_Win_start`)".to_owned(),
        OpKind::WinPost => "exposure epoch (`MPI_Win_post`)".to_owned(),
        _ => "epoch".to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use mbh_trace::op::flags;

    /// A rank trace of `calls`: (kind, window, target, extra), where
    /// extra is the lock type or the fence assert.
    fn trace(calls: &[(OpKind, u64, i32, i32)]) -> RankTrace {
        let mut ops = Vec::new();
        for (i, &(kind, window, target, extra)) in calls.iter().enumerate() {
            let mut op = Op::new(i as u64, kind);
            op.site = i as u32 + 1;
            op.request = window;
            op.peer = target;
            op.flags = flags::RETURNED;
            match kind {
                OpKind::WinLock => op.count = extra,
                _ => op.tag = extra,
            }
            ops.push(op);
        }
        RankTrace::finalized(0, 2, ops)
    }

    fn whats(calls: &[(OpKind, u64, i32, i32)]) -> Vec<(What, u64)> {
        problems(&trace(calls))
            .into_iter()
            .map(|p| (p.what, p.at.index))
            .collect()
    }

    const EXCL: i32 = RmaLock::Exclusive as i32;
    const NOSUCCEED: i32 = assert::NOSUCCEED;
    use OpKind::*;

    #[test]
    fn operations_between_fences_are_in_an_epoch_and_after_the_last_are_not() {
        let fenced = [
            (WinAllocate, 1, -1, 0),
            (WinFence, 1, -1, 0),
            (Put, 1, 1, 0),
            (WinFence, 1, -1, 0),
            (Get, 1, 1, 0),
            (WinFence, 1, -1, NOSUCCEED),
            (WinFree, 1, -1, 0),
        ];
        assert_eq!(whats(&fenced), []);
        let after = [
            (WinAllocate, 1, -1, 0),
            (WinFence, 1, -1, 0),
            (WinFence, 1, -1, NOSUCCEED),
            (Put, 1, 1, 0),
        ];
        let found = problems(&trace(&after));
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].what, What::OutsideEpoch { target: Some(1) });
        assert_eq!(found[0].earlier.as_ref().map(|o| o.index), Some(2));
        assert_eq!(whats(&[(WinCreate, 1, -1, 0), (Put, 1, 0, 0)]).len(), 1);
    }

    #[test]
    fn a_lock_covers_its_target_only() {
        let calls = [
            (WinCreate, 1, -1, 0),
            (WinLock, 1, 1, EXCL),
            (Put, 1, 1, 0),
            (Put, 1, 2, 0),
            (WinFlush, 1, 1, 0),
            (WinUnlock, 1, 1, 0),
            (WinUnlock, 1, 1, 0),
        ];
        assert_eq!(
            whats(&calls),
            [
                (What::OutsideEpoch { target: Some(2) }, 3),
                (What::UnlockNotLocked { target: Some(1) }, 6)
            ]
        );
    }

    #[test]
    fn double_locks_and_epochs_left_open_are_found() {
        let calls = [
            (WinCreate, 1, -1, 0),
            (WinLock, 1, 1, EXCL),
            (WinLock, 1, 1, EXCL),
            (WinPost, 1, -1, 0),
            (WinFree, 1, -1, 0),
            (WinCreate, 2, -1, 0),
            (WinLockAll, 2, -1, 0),
            (Finalize, 0, 0, 0),
        ];
        assert_eq!(
            whats(&calls),
            [
                (What::LockedTwice { target: Some(1) }, 2),
                (What::OpenAtFree, 4),
                (What::OpenAtFree, 4),
                (What::OpenAtFinalize, 7)
            ]
        );
    }

    #[test]
    fn locks_of_proc_null_or_of_an_untranslated_target_pair_up() {
        let mut t = trace(&[
            (WinCreate, 1, -1, 0),
            (WinLock, 1, -1, EXCL),
            (Put, 1, -1, 0),
            (WinUnlock, 1, -1, 0),
            (WinLock, 1, -1, EXCL),
            (WinUnlock, 1, -1, 0),
            (WinFree, 1, -1, 0),
        ]);
        assert!(problems(&t).is_empty(), "{:?}", problems(&t));
        for at in [4, 5] {
            t.ops[at].flags |= flags::PROC_NULL;
        }
        assert!(problems(&t).is_empty(), "{:?}", problems(&t));
    }

    #[test]
    fn a_start_epoch_covers_its_group_only() {
        let mut t = trace(&[
            (WinCreate, 1, -1, 0),
            (WinStart, 1, -1, 0),
            (Put, 1, 1, 0),
            (Put, 1, 2, 0),
            (WinComplete, 1, -1, 0),
        ]);
        t.ops[1].aux = 0b10; // the group: world rank 1
        let found = problems(&t);
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!(found[0].what, What::OutsideGroup { target: 2 });
        assert_eq!((found[0].at.index, found[0].earlier_site()), (3, 2));
        t.ops[1].aux = 0; // a group not known covers every target
        assert!(problems(&t).is_empty());
    }

    #[test]
    fn general_active_target_calls_need_their_partner() {
        let calls = [
            (WinCreate, 1, -1, 0),
            (WinComplete, 1, -1, 0),
            (WinWait, 1, -1, 0),
            (WinStart, 1, -1, 0),
            (Accumulate, 1, 0, 0),
            (WinComplete, 1, -1, 0),
            (WinPost, 1, -1, 0),
            (WinWait, 1, -1, 0),
            (WinFree, 1, -1, 0),
        ];
        assert_eq!(
            whats(&calls),
            [(What::CompleteWithoutStart, 1), (What::WaitWithoutPost, 2)]
        );
    }

    #[test]
    fn refused_calls_are_judged_and_unknown_windows_skipped() {
        let mut t = trace(&[(WinCreate, 1, -1, 0), (Put, 1, 1, 0), (Put, 0, 1, 0)]);
        t.ops[1].flags |= flags::FAILED;
        let found: Vec<u64> = problems(&t).iter().map(|p| p.at.index).collect();
        assert_eq!(found, [1], "the refused put, not the one on no window");
        t.ops[0].flags |= flags::FAILED;
        assert!(
            problems(&t).iter().all(|p| p.made.is_none()),
            "a window MPI failed to make is not followed"
        );
    }
}
