//! The records of one-sided communication (RMA, MPI-4.0 chapter 12): what
//! each field of an RMA record holds ([`OpKind::WinCreate`] ...
//! [`OpKind::RgetAccumulate`]), written by the runtime's `rma.rs` and read
//! here, in one place, by [`Op::rma`].

use crate::op::{flags, OpClass};
use crate::rank_trace::Op;
use crate::OpKind;

/// The lock type of an `MPI_Win_lock` (its record's `count`): MPI's
/// constants differ between libraries, the trace's do not.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(i32)]
pub enum RmaLock {
    /// `MPI_LOCK_EXCLUSIVE`.
    Exclusive = 1,
    /// `MPI_LOCK_SHARED`.
    Shared = 2,
}

impl RmaLock {
    /// The lock type with trace code `code`.
    pub fn from_code(code: i32) -> Option<RmaLock> {
        match code {
            1 => Some(RmaLock::Exclusive),
            2 => Some(RmaLock::Shared),
            _ => None,
        }
    }
}

/// Bits of an RMA record's `tag` (the call's assert), in the trace's
/// encoding: MPI's `MPI_MODE_*` values are the library's.
pub mod assert {
    /// `MPI_MODE_NOSUCCEED`: no epoch follows this fence.
    pub const NOSUCCEED: i32 = 1 << 0;
    /// `MPI_MODE_NOPRECEDE`: no epoch precedes this fence.
    pub const NOPRECEDE: i32 = 1 << 1;
}

/// How many world ranks the group of an `MPI_Win_start` or `MPI_Win_post`
/// record can name: its `aux` is the set of its members' world ranks, bit
/// `r` for rank `r`, when they are all below this (0 otherwise: not
/// known).
pub const GROUP_RANKS: u32 = 64;

/// What an RMA record says, decoded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RmaCall {
    /// The call.
    pub kind: OpKind,
    /// The window's id on this rank (1 for the first window it made).
    pub window: u64,
    /// The target, a rank of `MPI_COMM_WORLD`, for calls that name one
    /// (`None` for `MPI_PROC_NULL`, for calls without a target, and for a
    /// rank the runtime could not translate).
    pub target: Option<i32>,
    /// The target was `MPI_PROC_NULL`.
    pub proc_null: bool,
    /// The assert bits ([`assert`]).
    pub assert: i32,
    /// The lock type of an `MPI_Win_lock`.
    pub lock: Option<RmaLock>,
    /// `MPI_Win_test` returned true (the exposure epoch ended).
    pub test_ended: bool,
    /// The world ranks of the group of an `MPI_Win_start` or
    /// `MPI_Win_post` (`None`: not known).
    pub group: Option<u64>,
    /// MPI returned an error: the call did nothing the checks can follow.
    pub failed: bool,
}

impl RmaCall {
    /// Whether the group of this `MPI_Win_start` or `MPI_Win_post` holds
    /// world rank `rank` (true when the group is not known).
    pub fn group_holds(&self, rank: i32) -> bool {
        match (self.group, u32::try_from(rank)) {
            (Some(bits), Ok(r)) if r < GROUP_RANKS => bits & (1 << r) != 0,
            _ => true,
        }
    }
}

impl OpKind {
    /// A call that makes a window (`MPI_Win_create`, `MPI_Win_allocate`,
    /// `MPI_Win_allocate_shared`, `MPI_Win_create_dynamic`).
    pub fn makes_window(self) -> bool {
        matches!(
            self,
            OpKind::WinCreate
                | OpKind::WinAllocate
                | OpKind::WinAllocateShared
                | OpKind::WinCreateDynamic
        )
    }

    /// An RMA communication call (`MPI_Put` ... `MPI_Rget_accumulate`):
    /// it needs an access epoch on its target.
    pub fn is_rma_operation(self) -> bool {
        (OpKind::Put as u16..=OpKind::RgetAccumulate as u16).contains(&(self as u16))
    }

    /// A call that names a target rank (the operations, `MPI_Win_lock`,
    /// `MPI_Win_unlock`, `MPI_Win_flush`, `MPI_Win_flush_local`).
    pub fn has_rma_target(self) -> bool {
        self.is_rma_operation()
            || matches!(
                self,
                OpKind::WinLock | OpKind::WinUnlock | OpKind::WinFlush | OpKind::WinFlushLocal
            )
    }
}

impl Op {
    /// The fields of an RMA record, `None` for any other.
    pub fn rma(&self) -> Option<RmaCall> {
        if self.kind.class() != OpClass::Rma {
            return None;
        }
        let proc_null = self.has(flags::PROC_NULL);
        Some(RmaCall {
            kind: self.kind,
            window: self.request,
            target: (self.kind.has_rma_target() && !proc_null && self.peer >= 0)
                .then_some(self.peer),
            proc_null,
            assert: self.tag,
            lock: (self.kind == OpKind::WinLock)
                .then(|| RmaLock::from_code(self.count))
                .flatten(),
            test_ended: self.kind == OpKind::WinTest && self.count == 1,
            group: (matches!(self.kind, OpKind::WinStart | OpKind::WinPost) && self.aux != 0)
                .then_some(self.aux),
            failed: self.has(flags::FAILED),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_rma_record_is_decoded() {
        let mut op = Op::new(3, OpKind::WinLock);
        op.request = 2;
        op.peer = 1;
        op.count = RmaLock::Exclusive as i32;
        op.tag = assert::NOSUCCEED;
        let call = op.rma().unwrap();
        assert_eq!(call.window, 2);
        assert_eq!(call.target, Some(1));
        assert_eq!(call.lock, Some(RmaLock::Exclusive));
        assert!(!call.proc_null && !call.failed);
        op.kind = OpKind::WinFence;
        assert_eq!(op.rma().unwrap().target, None, "a fence has no target");
        op.kind = OpKind::Put;
        op.flags = flags::PROC_NULL;
        let put = op.rma().unwrap();
        assert!(put.proc_null && put.target.is_none());
        assert!(Op::new(0, OpKind::Send).rma().is_none());
        assert!(OpKind::RgetAccumulate.is_rma_operation());
        assert!(!OpKind::WinSync.is_rma_operation());
        assert!(OpKind::WinAllocateShared.makes_window());
        let mut start = Op::new(4, OpKind::WinStart);
        start.aux = 0b100;
        let start = start.rma().unwrap();
        assert!(start.group_holds(2) && !start.group_holds(1));
        let unknown = Op::new(5, OpKind::WinStart).rma().unwrap();
        assert!(unknown.group.is_none() && unknown.group_holds(1));
    }
}
