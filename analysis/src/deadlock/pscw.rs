//! `MPI_Win_wait` in the wait-for graph: the one call of general active
//! target synchronization (post-start-complete-wait) that MPI says
//! blocks. MPI-4.0 §12.5.2: `MPI_Win_wait` "will block until all matching
//! calls to `MPI_Win_complete` have occurred", one per origin of the
//! post's group; `MPI_Win_start` and `MPI_Win_complete` may or may not
//! block (implementation-dependent), and a fence only usually
//! synchronizes (§12.5.1), so none of those is a wait the graph can
//! count on: they stay unmodelled and a hang there ends at `--timeout`.
//!
//! A window is the same on every rank of its communicator (it is made
//! collectively), and each rank names it by an id of its own: ranks agree
//! on (communicator, how many windows were made on it before), which is
//! what [`window_key`] gives. The `k`-th `MPI_Win_post` of a target on a
//! window matches, at each origin of its group, the `k`-th
//! `MPI_Win_start` whose group holds that target.

use mbh_trace::rank_trace::{Op, RankTrace};
use mbh_trace::rma::GROUP_RANKS;
use mbh_trace::OpKind;

use super::{Cond, Facts, Undecidable, WaitFor};

/// A window as every rank of its communicator names it: the communicator
/// and how many windows were made on it before this one.
type WindowKey = (u64, usize);

impl Facts<'_> {
    /// The blocked `MPI_Win_wait` `op` of `rank`: it waits for the origins
    /// of its epoch's post group that have not called `MPI_Win_complete`
    /// for it (AND).
    pub(super) fn win_wait(&self, rank: usize, op: &Op) -> Cond {
        let trace = self.traces[rank];
        let unknown = Cond::Unknown(Undecidable::NotModelled);
        let Some(window) = op.rma().map(|c| c.window) else {
            return unknown;
        };
        let posts: Vec<&Op> = trace
            .ops
            .iter()
            .filter(|p| p.index < op.index && p.kind == OpKind::WinPost && on(p, window))
            .collect();
        let (Some(post), Some(key)) = (posts.last(), window_key(trace, window)) else {
            return unknown;
        };
        let Some(group) = post.rma().and_then(|c| c.group) else {
            return unknown;
        };
        let missing: Vec<i32> = (0..self.size.min(GROUP_RANKS as usize))
            .filter(|&o| group & (1 << o) != 0)
            .filter(|&o| !self.completed_access(o, key, rank, posts.len()))
            .map(|o| o as i32)
            .collect();
        if missing.is_empty() {
            Cond::CanComplete
        } else {
            Cond::Waits(WaitFor::All(missing))
        }
    }

    /// Whether `origin` called `MPI_Win_complete` for its `k`-th access
    /// epoch (1-based) on window `key` whose start group holds `target`.
    fn completed_access(&self, origin: usize, key: WindowKey, target: usize, k: usize) -> bool {
        let trace = self.traces[origin];
        let Some(window) = window_id(trace, key) else {
            return false;
        };
        let mut starts = 0;
        let mut in_epoch = false;
        for op in trace.ops.iter().filter(|o| on(o, window)) {
            match op.kind {
                OpKind::WinStart => {
                    let holds = op.rma().is_some_and(|c| c.group_holds(target as i32));
                    starts += usize::from(holds);
                    in_epoch = holds && starts == k;
                }
                OpKind::WinComplete if in_epoch => return true,
                _ => {}
            }
        }
        false
    }
}

/// Whether RMA record `op` is on the window this rank calls `window`.
fn on(op: &Op, window: u64) -> bool {
    op.rma().is_some_and(|c| c.window == window)
}

/// The key of the window `trace`'s rank calls `window`.
fn window_key(trace: &RankTrace, window: u64) -> Option<WindowKey> {
    made_windows(trace)
        .find(|(id, _)| *id == window)
        .map(|(_, key)| key)
}

/// The id `trace`'s rank gives the window of `key`.
fn window_id(trace: &RankTrace, key: WindowKey) -> Option<u64> {
    made_windows(trace)
        .find(|(_, k)| *k == key)
        .map(|(id, _)| id)
}

/// Every window the rank made, with its key, in order.
fn made_windows(trace: &RankTrace) -> impl Iterator<Item = (u64, WindowKey)> + '_ {
    let mut made_on: std::collections::HashMap<u64, usize> = Default::default();
    trace
        .ops
        .iter()
        .filter(|op| op.kind.makes_window() && !op.has(mbh_trace::op::flags::FAILED))
        .map(move |op| {
            let before = made_on.entry(op.comm).or_default();
            let key = (op.comm, *before);
            *before += 1;
            (op.request, key)
        })
}
