//! The records of one-sided communication (RMA, MPI-4.0 chapter 12): what
//! each field of an RMA record holds ([`OpKind::WinCreate`] ...
//! [`OpKind::RgetAccumulate`]), written by the runtime's `rma.rs` and read
//! here, in one place, by [`Op::rma`].
//!
//! Every RMA record: `request` is the window's id on the rank, `comm` its
//! communicator (renamed across ranks like every communicator), `peer`
//! the target as a world rank. A window's making: `count` its
//! displacement unit (0 for a dynamic window), `aux` its size in bytes.
//! An operation: `aux` the target displacement, `count` the bytes it
//! touches on the target (-1 when its target datatype has holes), `tag`
//! its accumulate operation, basic datatype and the target datatype's true
//! lower bound ([`operation_tag`]). A synchronization call: `tag` its
//! assert ([`assert`](mod@assert)), `count` a lock's type ([`RmaLock`]) or a group's
//! size, `aux` a group's ranks ([`GROUP_RANKS`]).

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

/// The reduction operation of an accumulate-family record (bits 0..8 of
/// its `tag`): 1 + the position of MPI's predefined operation in
/// [`ACC_OPS`] (the runtime's `predefined_op_index`, the same in every
/// process), [`acc_op::COMPARE_AND_SWAP`] for `MPI_Compare_and_swap`, 0
/// when not known (an operation the program made, which MPI refuses in
/// RMA).
pub mod acc_op {
    /// `MPI_REPLACE`.
    pub const REPLACE: u8 = 13;
    /// `MPI_NO_OP`: the operation only reads the target.
    pub const NO_OP: u8 = 14;
    /// Not an `MPI_Op`: `MPI_Compare_and_swap`'s own operation.
    pub const COMPARE_AND_SWAP: u8 = 15;
}

/// MPI's predefined reduction operations in the order of the runtime's
/// `mpi_consts.c` (`mbhybrid_rt_predefined_ops`): code `i + 1` is
/// `ACC_OPS[i]`.
pub const ACC_OPS: [&str; 14] = [
    "MPI_MAX",
    "MPI_MIN",
    "MPI_SUM",
    "MPI_PROD",
    "MPI_LAND",
    "MPI_BAND",
    "MPI_LOR",
    "MPI_BOR",
    "MPI_LXOR",
    "MPI_BXOR",
    "MPI_MINLOC",
    "MPI_MAXLOC",
    "MPI_REPLACE",
    "MPI_NO_OP",
];

/// The name of accumulate operation code `code` ([`acc_op`]).
pub fn acc_op_name(code: u8) -> &'static str {
    match code {
        acc_op::COMPARE_AND_SWAP => "compare-and-swap",
        c => ACC_OPS
            .get(usize::from(c).wrapping_sub(1))
            .copied()
            .unwrap_or("an unknown operation"),
    }
}

/// The bytes of the target window an operation touches, relative to the
/// start of the target's window: `disp * disp_unit + lb ..
/// disp * disp_unit + lb + len`, with the target's `disp_unit` from its
/// own window creation record ([`RmaCall::disp_unit`]), which the origin
/// does not know.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TargetData {
    /// The target displacement as passed, in the target's units.
    pub disp: i64,
    /// The true lower bound of the target datatype, in bytes.
    pub lb: i64,
    /// The bytes touched: `target_count` × the size of the target
    /// datatype, which has no holes.
    pub len: u64,
}

impl TargetData {
    /// The byte range on a target whose window has displacement unit
    /// `disp_unit`; `None` on overflow.
    pub fn range(&self, disp_unit: i64) -> Option<(i64, i64)> {
        let start = self.disp.checked_mul(disp_unit)?.checked_add(self.lb)?;
        let end = start.checked_add(i64::try_from(self.len).ok()?)?;
        Some((start, end))
    }
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
    /// The assert bits ([`assert`](mod@assert)).
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
    /// The displacement unit of a window this rank made (`MPI_Win_create`,
    /// `MPI_Win_allocate`, `MPI_Win_allocate_shared`; `None` for a dynamic
    /// window, whose displacements are addresses).
    pub disp_unit: Option<i64>,
    /// The size in bytes of the memory a window this rank made exposes
    /// (`MPI_Win_create`, `MPI_Win_allocate`, `MPI_Win_allocate_shared`;
    /// `None` for a dynamic window, and for a record that did not say).
    pub win_size: Option<u64>,
    /// The bytes an operation touches on its target, when its target
    /// datatype has no holes (`None`: a derived datatype with holes, or a
    /// record of a runtime that did not say).
    pub data: Option<TargetData>,
    /// An accumulate-family operation's reduction ([`acc_op`]; 0: not
    /// known or not one).
    pub acc_op: u8,
    /// An accumulate-family operation's basic datatype: 1 + its position
    /// among the runtime's predefined datatypes (0: not known).
    pub basic_type: u8,
}

/// Bits 16.. of an operation's `tag`: the true lower bound of the target
/// datatype in bytes, as an `i16` ([`Op::rma`]).
const LB_SHIFT: u32 = 16;

/// The `tag` of an operation's record: its accumulate operation code
/// (bits 0..8), basic datatype code (bits 8..16) and the true lower bound
/// of its target datatype (bits 16..32, an `i16`; a bound that does not
/// fit is recorded as no target bytes, `count` -1).
pub fn operation_tag(acc_op: u8, basic_type: u8, lb: i16) -> i32 {
    i32::from(acc_op) | i32::from(basic_type) << 8 | i32::from(lb) << LB_SHIFT
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

/// Which of its own operations a synchronization call completes at the
/// origin, after which their origin buffers are the program's again
/// (MPI-4.0 §12.5): the runtime stops watching those buffers there
/// (`runtime/src/rma_watch.rs`), and a `buffer-reuse` finding names the
/// call that would have completed the operation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OriginCompletion {
    /// None: the call does not complete operations at the origin.
    Nothing,
    /// Every operation the rank started on the window: `MPI_Win_fence`
    /// (§12.5.1), `MPI_Win_complete` (§12.5.2), `MPI_Win_unlock_all`,
    /// `MPI_Win_flush_all`, `MPI_Win_flush_local_all` (§12.5.3, §12.5.4),
    /// and `MPI_Win_free` (§12.2.5: it needs them completed).
    Window,
    /// The operations on the call's target: `MPI_Win_unlock`,
    /// `MPI_Win_flush`, `MPI_Win_flush_local` (§12.5.3, §12.5.4).
    Target,
}

impl OpKind {
    /// What this call completes at the origin ([`OriginCompletion`]).
    pub fn origin_completion(self) -> OriginCompletion {
        match self {
            OpKind::WinFence
            | OpKind::WinComplete
            | OpKind::WinUnlockAll
            | OpKind::WinFlushAll
            | OpKind::WinFlushLocalAll
            | OpKind::WinFree => OriginCompletion::Window,
            OpKind::WinUnlock | OpKind::WinFlush | OpKind::WinFlushLocal => {
                OriginCompletion::Target
            }
            _ => OriginCompletion::Nothing,
        }
    }

    /// An operation that returns a request (`MPI_Rput`, `MPI_Rget`,
    /// `MPI_Raccumulate`, `MPI_Rget_accumulate`): completing the request
    /// also completes it at the origin (MPI-4.0 §12.4.5).
    pub fn is_request_operation(self) -> bool {
        matches!(
            self,
            OpKind::Rput | OpKind::Rget | OpKind::Raccumulate | OpKind::RgetAccumulate
        )
    }

    /// Whether an operation of this kind writes its origin buffer (a
    /// get's), else reads it: `MPI_Get_accumulate`, `MPI_Fetch_and_op`
    /// and `MPI_Compare_and_swap` read their origin and write a separate
    /// result buffer.
    pub fn writes_origin(self) -> bool {
        matches!(self, OpKind::Get | OpKind::Rget)
    }

    /// Whether an operation of this kind writes a result buffer apart
    /// from its origin buffer.
    pub fn has_result_buffer(self) -> bool {
        matches!(
            self,
            OpKind::GetAccumulate
                | OpKind::RgetAccumulate
                | OpKind::FetchAndOp
                | OpKind::CompareAndSwap
        )
    }
}

impl RmaCall {
    /// Whether this call (a later record of the same rank) completes
    /// `operation` at the origin ([`OriginCompletion`]): on its window,
    /// and for a call that names a target, on the operation's target.
    pub fn completes(&self, operation: &RmaCall) -> bool {
        if self.window != operation.window || self.window == 0 {
            return false;
        }
        match self.kind.origin_completion() {
            OriginCompletion::Nothing => false,
            OriginCompletion::Window => true,
            OriginCompletion::Target => self.target.is_some() && self.target == operation.target,
        }
    }
}

impl Op {
    /// The fields of an RMA record, `None` for any other.
    pub fn rma(&self) -> Option<RmaCall> {
        if self.kind.class() != OpClass::Rma {
            return None;
        }
        let proc_null = self.has(flags::PROC_NULL);
        let operation = self.kind.is_rma_operation();
        // An operation's `count` is its target bytes (-1: not known), its
        // `aux` the target displacement, its `tag` [`operation_tag`].
        let data = (operation && self.count >= 0).then(|| TargetData {
            disp: self.aux as i64,
            lb: i64::from(self.tag >> LB_SHIFT),
            len: self.count as u64,
        });
        // A window's record: `count` is its displacement unit (0 for a
        // dynamic window or a runtime that did not say).
        let disp_unit =
            (self.kind.makes_window() && self.kind != OpKind::WinCreateDynamic && self.count > 0)
                .then_some(i64::from(self.count));
        // Its `aux` is the size of the memory it exposes.
        let win_size = disp_unit.map(|_| self.aux);
        Some(RmaCall {
            kind: self.kind,
            window: self.request,
            target: (self.kind.has_rma_target() && !proc_null && self.peer >= 0)
                .then_some(self.peer),
            proc_null,
            assert: if operation { 0 } else { self.tag },
            lock: (self.kind == OpKind::WinLock)
                .then(|| RmaLock::from_code(self.count))
                .flatten(),
            test_ended: self.kind == OpKind::WinTest && self.count == 1,
            group: (matches!(self.kind, OpKind::WinStart | OpKind::WinPost) && self.aux != 0)
                .then_some(self.aux),
            failed: self.has(flags::FAILED),
            disp_unit,
            win_size,
            data,
            acc_op: if operation {
                (self.tag & 0xff) as u8
            } else {
                0
            },
            basic_type: if operation {
                (self.tag >> 8 & 0xff) as u8
            } else {
                0
            },
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

    #[test]
    fn a_synchronization_call_completes_operations_on_its_window_and_target() {
        let op = |kind, window, peer| {
            let mut op = Op::new(1, kind);
            op.request = window;
            op.peer = peer;
            op.rma().unwrap()
        };
        let put = op(OpKind::Put, 1, 2);
        assert!(op(OpKind::WinFence, 1, -1).completes(&put));
        assert!(
            !op(OpKind::WinFence, 2, -1).completes(&put),
            "another window"
        );
        assert!(op(OpKind::WinUnlock, 1, 2).completes(&put));
        assert!(
            !op(OpKind::WinUnlock, 1, 3).completes(&put),
            "another target"
        );
        assert!(op(OpKind::WinFlushLocal, 1, 2).completes(&put));
        assert!(op(OpKind::WinFlushLocalAll, 1, -1).completes(&put));
        assert!(op(OpKind::WinFree, 1, -1).completes(&put));
        assert!(!op(OpKind::WinSync, 1, -1).completes(&put));
        assert!(!op(OpKind::WinLock, 1, 2).completes(&put));
        assert!(!op(OpKind::WinFence, 0, -1).completes(&op(OpKind::Put, 0, 2)));
        assert!(OpKind::Rget.is_request_operation() && !OpKind::Get.is_request_operation());
        assert!(OpKind::Get.writes_origin() && !OpKind::Put.writes_origin());
        assert!(OpKind::FetchAndOp.has_result_buffer() && !OpKind::Get.has_result_buffer());
    }

    #[test]
    fn an_operation_says_its_target_bytes_and_accumulate_op() {
        let mut acc = Op::new(6, OpKind::Accumulate);
        acc.aux = (-2i64) as u64;
        acc.count = 16;
        acc.tag = operation_tag(3, 3, -4);
        let call = acc.rma().unwrap();
        assert_eq!(
            call.data,
            Some(TargetData {
                disp: -2,
                lb: -4,
                len: 16
            })
        );
        assert_eq!(call.data.unwrap().range(8), Some((-20, -4)));
        assert_eq!((call.acc_op, call.basic_type, call.assert), (3, 3, 0));
        assert_eq!(acc_op_name(call.acc_op), "MPI_SUM");
        assert_eq!(acc_op_name(acc_op::NO_OP), "MPI_NO_OP");
        acc.count = -1;
        assert_eq!(acc.rma().unwrap().data, None, "holes: not known");
        let mut made = Op::new(0, OpKind::WinAllocate);
        made.count = 4;
        assert_eq!(made.rma().unwrap().disp_unit, Some(4));
        made.kind = OpKind::WinCreateDynamic;
        assert_eq!(made.rma().unwrap().disp_unit, None);
    }
}
