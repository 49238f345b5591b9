//! The buffers a one-sided operation gives MPI at the origin, watched by
//! the access check ([`crate::access`]) while the operation may be in
//! flight, as a nonblocking send's or receive's are.
//!
//! MPI-4.0 §12.3: an operation only starts the transfer; the buffer MPI
//! reads (the origin buffer of `MPI_Put`, `MPI_Accumulate`, and the origin
//! and compare values of `MPI_Get_accumulate`, `MPI_Fetch_and_op`,
//! `MPI_Compare_and_swap`) must not be written, and the buffer MPI writes
//! (`MPI_Get`'s origin buffer, the result buffers) not be read or written,
//! until the operation completes at the origin (§12.7, "the origin buffer
//! ... should not be accessed"). That is the synchronization call that
//! completes it (§12.5, [`OriginCompletion`]: the next `MPI_Win_fence`,
//! `MPI_Win_complete`, an unlock or flush of its target or of all, or
//! `MPI_Win_free`), or for an `R` operation its request's completion
//! (§12.4.5), whichever comes first.
//!
//! Each buffer is watched under a key, its window and target
//! (`window id << 32 | world rank`), so that a synchronization call
//! forgets exactly the operations it completes; an `R` operation's also
//! under its request's slot. Nothing here allocates: up to three buffers
//! on the stack, one table entry each; a full table leaves them unwatched.

use crate::access;
use crate::pending::{Pending, NO_SLOT, PENDING};
use mbh_trace::op::flags;
use mbh_trace::rank_trace::RawOp;
use mbh_trace::rma::OriginCompletion;
use mbh_trace::OpKind;
use mpi_sys::MPI_Datatype;
use std::os::raw::{c_int, c_void};

/// One buffer an operation gives MPI: `count` elements of `datatype` at
/// `addr`, and what the program may not do to it meanwhile (a buffer MPI
/// reads is a send's, one it writes a receive's).
#[derive(Clone, Copy)]
pub(crate) struct Buffer {
    pub addr: *const c_void,
    pub count: c_int,
    pub datatype: MPI_Datatype,
    pub what: Pending,
}

impl Buffer {
    /// A buffer MPI reads.
    pub fn read(addr: *const c_void, count: c_int, datatype: MPI_Datatype) -> Option<Buffer> {
        Some(Buffer {
            addr,
            count,
            datatype,
            what: Pending::Send,
        })
    }

    /// A buffer MPI writes.
    pub fn written(addr: *mut c_void, count: c_int, datatype: MPI_Datatype) -> Option<Buffer> {
        Some(Buffer {
            addr: addr.cast_const(),
            count,
            datatype,
            what: Pending::Recv,
        })
    }
}

/// An operation's buffers: `MPI_Compare_and_swap` has three.
pub(crate) type Buffers = [Option<Buffer>; 3];

/// Where a record puts its call: its kind, window id (0: unknown), target
/// as a world rank (-1: none or unknown), and whether that was
/// `MPI_PROC_NULL` (no transfer, MPI-4.0 §12.3).
#[derive(Clone, Copy)]
pub(crate) struct Placed {
    kind: u16,
    window: u64,
    peer: i32,
    proc_null: bool,
}

impl Placed {
    /// What record `raw` (`rma.rs`'s) says of its call.
    pub fn of(raw: &RawOp) -> Placed {
        Placed {
            kind: raw.kind,
            window: raw.request,
            peer: raw.peer,
            proc_null: raw.flags & flags::PROC_NULL != 0,
        }
    }

    /// The key of its window and target; `None` when either is unknown.
    fn key(&self) -> Option<u64> {
        let peer = u32::try_from(self.peer).ok()?;
        (self.window != 0 && self.window >> 32 == 0).then(|| self.window << 32 | u64::from(peer))
    }
}

/// Watches `buffers` of the operation just started by record `record` at
/// `placed` (an `R` operation's request in `slot`): only when the program
/// checks its accesses, and not for `MPI_PROC_NULL`, whose operation
/// touches no buffer.
pub(crate) fn started(record: Option<u64>, placed: Placed, buffers: &Buffers, slot: Option<u32>) {
    // A full table's half leaves the buffers unwatched: a loop of puts
    // in one epoch pays no extent look-up past it.
    if !access::watching() || placed.proc_null || !PENDING.keyed_room() {
        return;
    }
    let Some(key) = placed.key() else {
        return;
    };
    let mut ranges = [((0, 0), Pending::Send, false); 3];
    let mut n = 0;
    for b in buffers.iter().flatten() {
        let Some((range, dense)) =
            crate::buffer_check::address_range_dense(b.addr, b.count, b.datatype)
        else {
            continue;
        };
        if let Some(place) = ranges.get_mut(n) {
            *place = (range, b.what, dense);
            n += 1;
        }
    }
    if n > 0 {
        access::watch_keyed(slot.unwrap_or(NO_SLOT), key, record, &ranges[..n]);
    }
}

/// Forgets the buffers of the operations the synchronization call at
/// `placed` just completed at the origin ([`OriginCompletion`]). One
/// relaxed load when no one-sided buffer is watched.
pub(crate) fn synchronized(placed: Placed) {
    if PENDING.keyed() == 0 || placed.window == 0 {
        return;
    }
    let completion =
        OpKind::from_code(placed.kind).map_or(OriginCompletion::Nothing, |k| k.origin_completion());
    match completion {
        OriginCompletion::Nothing => {}
        OriginCompletion::Window => access::forget_keyed(|key| key >> 32 == placed.window),
        OriginCompletion::Target => {
            if let Some(completed) = placed.key() {
                access::forget_keyed(|key| key == completed);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn placed(kind: OpKind, window: u64, peer: i32) -> Placed {
        Placed::of(&RawOp {
            kind: kind as u16,
            request: window,
            peer,
            ..RawOp::default()
        })
    }

    #[test]
    fn a_key_is_the_window_and_the_target() {
        assert_eq!(placed(OpKind::Put, 2, 3).key(), Some(2 << 32 | 3));
        assert_eq!(placed(OpKind::Put, 0, 3).key(), None, "unknown window");
        assert_eq!(placed(OpKind::Put, 2, -1).key(), None, "unknown target");
        assert_eq!(
            placed(OpKind::Put, 1 << 32, 0).key(),
            None,
            "too many windows"
        );
    }
}
