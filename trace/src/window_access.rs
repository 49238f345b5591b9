//! The [`OpKind::WindowAccess`] record: what a process did to its own
//! window's memory during an exposure epoch (MPI-4.0 §12.7, the
//! rules on local and RMA accesses to the same window location). The
//! runtime (`runtime/src/rma_exposure.rs`) watches the memory of each
//! window of its rank from the call that opens an exposure epoch
//! (`MPI_Win_fence` without `MPI_MODE_NOSUCCEED`, `MPI_Win_post`) to the
//! one that closes it (the next fence, `MPI_Win_wait`, a successful
//! `MPI_Win_test`, `MPI_Win_free`), merges the bytes its loads and stores
//! touch into ranges, and writes one record per range when the epoch
//! ends, just before the record of the closing call: a record belongs to
//! the epoch its position in the trace says.
//!
//! The fields: `request` = the window's id on the rank (as every RMA
//! record's), `aux` = the first byte of the range, relative to the
//! window's base, `comm` = one past its last byte, `site` = the site of
//! the first access that made the range (an access site, made from the
//! check's return address as for `buffer-reuse`), `tag` = the [`bits`],
//! `peer` = -1. A record with [`bits::UNWATCHED`] has no range: the
//! runtime could not watch the window in that epoch.

use crate::op::{flags, OpKind};
use crate::rank_trace::{Op, RawOp};

/// Bits of a record's `tag`.
pub mod bits {
    /// The range was stored to (else only loaded).
    pub const STORE: i32 = 1 << 0;
    /// The range was merged with a neighbour when the runtime ran out of
    /// room: it may hold bytes no access touched.
    pub const COARSE: i32 = 1 << 1;
    /// The epoch is a general active target exposure epoch
    /// (`MPI_Win_post` to `MPI_Win_wait`), else a fence epoch.
    pub const PSCW: i32 = 1 << 2;
    /// The window's memory was not watched in this epoch (too many
    /// windows exposed at once, or the watched-buffer table full): its
    /// accesses are not known.
    pub const UNWATCHED: i32 = 1 << 3;
}

/// A decoded [`OpKind::WindowAccess`] record.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WindowAccess {
    /// The window's id on the rank.
    pub window: u64,
    /// The bytes, relative to the window's base: `first..end`.
    pub bytes: (u64, u64),
    /// Stored to (else only loaded).
    pub store: bool,
    /// May hold bytes no access touched ([`bits::COARSE`]).
    pub coarse: bool,
    /// In a PSCW exposure epoch, else a fence epoch.
    pub pscw: bool,
    /// Not watched: the accesses of this epoch are not known.
    pub unwatched: bool,
    /// The site of the first access of the range.
    pub site: u32,
}

impl WindowAccess {
    /// The record the runtime stores for this range (its `index` is set
    /// when it is appended). Allocates nothing.
    pub fn record(self) -> RawOp {
        let tag = [
            (self.store, bits::STORE),
            (self.coarse, bits::COARSE),
            (self.pscw, bits::PSCW),
            (self.unwatched, bits::UNWATCHED),
        ]
        .iter()
        .filter(|(on, _)| *on)
        .fold(0, |t, (_, bit)| t | bit);
        RawOp {
            kind: OpKind::WindowAccess as u16,
            flags: flags::RETURNED,
            site: self.site,
            peer: -1,
            tag,
            request: self.window,
            aux: self.bytes.0,
            comm: self.bytes.1,
            ..RawOp::default()
        }
    }

    /// The range `op` records, `None` when it is not such a record.
    pub fn decode(op: &Op) -> Option<WindowAccess> {
        (op.kind == OpKind::WindowAccess).then_some(WindowAccess {
            window: op.request,
            bytes: (op.aux, op.comm),
            store: op.tag & bits::STORE != 0,
            coarse: op.tag & bits::COARSE != 0,
            pscw: op.tag & bits::PSCW != 0,
            unwatched: op.tag & bits::UNWATCHED != 0,
            site: op.site,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_range_round_trips() {
        let access = WindowAccess {
            window: 2,
            bytes: (8, 4096),
            store: true,
            coarse: false,
            pscw: true,
            unwatched: false,
            site: 0x8000_0123,
        };
        let raw = access.record();
        let op = Op::decoded(&raw, OpKind::WindowAccess);
        assert_eq!(WindowAccess::decode(&op), Some(access));
        assert_eq!(op.tag, bits::STORE | bits::PSCW);
        assert_eq!(WindowAccess::decode(&Op::new(0, OpKind::WinFence)), None);
        assert!(
            !OpKind::WindowAccess.comm_is_communicator(),
            "`comm` is a byte"
        );
    }
}
