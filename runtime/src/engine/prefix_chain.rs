//! `MPI_Scan` and `MPI_Exscan` in a guided run: a chain from rank 0 up,
//! so that rank *i* leaves once ranks `0..i` entered, as MPI allows
//! (MPI-4.0 §6.1, §6.11: its result depends on them only).
//!
//! The MPI library's own scan exchanges data both ways (MPICH's recursive
//! doubling makes rank 0 wait for rank 1), so a match the clocks find
//! (seed 000 Fig 5.7: a prefix's clocks flow upwards only) that needs rank
//! 0 to send after its scan before rank 1 entered could not be forced
//! (`early.rs` does the same for rooted collectives). Every rank of the
//! communicator takes this path in a guided run (the decision is the
//! run's, so they agree): rank *i* receives the partial result of ranks
//! `0..i` and their clocks' maximum from rank *i - 1* on the clock shadow,
//! combines (`MPI_Reduce_local`, the partial on the left: the order MPI
//! prescribes for operations that do not commute), and sends the partial
//! of `0..=i` and its clock on to rank *i + 1* without waiting for it.
//! The sends are completed like `early.rs`'s calls.

use super::early::{base_in, Span};
use super::Rt;
use crate::consts::{comm_self, in_place, request_null, status_ignore, uint64, SUCCESS};
use crate::handle::HandleBits;
use mpi_sys::{MPI_Comm, MPI_Datatype, MPI_Op, MPI_Request};
use std::os::raw::{c_int, c_void};

/// Tags of the chain's messages on the clock shadow, above the
/// acknowledgements' (`ACK_TAGS`) and below the 32767 MPI guarantees.
const DATA_TAG: c_int = 32700;
const CLOCK_TAG: c_int = 32701;

/// A program's `MPI_Scan` or `MPI_Exscan`.
#[derive(Debug, Clone, Copy)]
pub struct PrefixCall {
    pub sendbuf: *const c_void,
    pub recvbuf: *mut c_void,
    pub count: c_int,
    pub datatype: MPI_Datatype,
    pub op: MPI_Op,
    /// `MPI_Exscan`: rank *i* takes `0..i` only.
    pub exclusive: bool,
}

impl Rt {
    /// Runs `call` as a chain on `shadow`, where this rank is `me` of `n`.
    /// `None` when it cannot (a datatype MPI cannot describe): the caller
    /// runs the library's scan. Merges the clocks of the ranks below.
    ///
    /// # Safety
    ///
    /// `call` is the program's call, on the communicator whose clock
    /// shadow is `shadow`; every rank of it takes this path.
    pub(super) unsafe fn prefix_chain(
        &mut self,
        call: PrefixCall,
        shadow: MPI_Comm,
        me: c_int,
        n: c_int,
    ) -> Option<c_int> {
        let span = Span::of(0, call.count, call.datatype)?;
        let input = if call.sendbuf == in_place().cast_const() {
            call.recvbuf.cast_const()
        } else {
            call.sendbuf
        };
        // This rank's input, then the partial of `0..=me` in place.
        let mut own = self.early.buffer();
        // SAFETY: MPI reads these bytes of the input too.
        own.extend_from_slice(unsafe {
            std::slice::from_raw_parts(input.cast::<u8>().offset(span.lo), span.len())
        });
        let own_at = base_in(&mut own, span);
        let mut below = None;
        let mut rc = SUCCESS;
        if me > 0 {
            let mut partial = self.early.buffer();
            partial.resize(span.len(), 0);
            let at = base_in(&mut partial, span);
            // SAFETY: `partial` holds the bytes of `count` x `datatype`.
            rc = unsafe { self.chain_receive(at, call.count, call.datatype, me - 1, shadow) };
            if rc == SUCCESS {
                // SAFETY: both hold `count` x `datatype`; `own` becomes
                // `partial op own`.
                rc = unsafe {
                    mpi_sys::PMPI_Reduce_local(at, own_at, call.count, call.datatype, call.op)
                };
            }
            below = Some((partial, at));
        }
        // The result: `0..=me` (scan), `0..me` (exscan; none at rank 0).
        let result = match (&below, call.exclusive) {
            (_, false) => Some(own_at),
            (Some((_, at)), true) => Some(*at),
            (None, true) => None,
        };
        if let (SUCCESS, Some(from)) = (rc, result) {
            // SAFETY: `from` holds `count` x `datatype`; the receive
            // buffer is the program's.
            rc = unsafe { copy_typed(from, call.recvbuf, call.count, call.datatype) };
        }
        if let Some((partial, _)) = below {
            self.early.recycle(partial);
        }
        if rc == SUCCESS && me + 1 < n {
            // SAFETY: `own` holds `count` x `datatype` and is followed
            // until the send completes.
            rc = unsafe { self.chain_send(own, own_at, call.count, call.datatype, me + 1, shadow) };
        } else {
            self.early.recycle(own);
        }
        Some(rc)
    }

    /// Receives the partial of the ranks below (into `at`) and their
    /// clock from `from`, waiting as a blocked call does; merges the clock.
    ///
    /// # Safety
    ///
    /// `at` holds `count` x `datatype`.
    unsafe fn chain_receive(
        &mut self,
        at: *mut c_void,
        count: c_int,
        datatype: MPI_Datatype,
        from: c_int,
        shadow: MPI_Comm,
    ) -> c_int {
        let width = self.width as c_int;
        let mut data = request_null();
        let mut clock = request_null();
        let clock_at = self.coll_in.as_mut_ptr().cast::<c_void>();
        // SAFETY: `at` and `coll_in` (`width` words) stay until both
        // requests complete below.
        let mut rc =
            unsafe { mpi_sys::PMPI_Irecv(at, count, datatype, from, DATA_TAG, shadow, &mut data) };
        if rc == SUCCESS {
            // SAFETY: as above.
            rc = unsafe {
                mpi_sys::PMPI_Irecv(
                    clock_at,
                    width,
                    uint64(),
                    from,
                    CLOCK_TAG,
                    shadow,
                    &mut clock,
                )
            };
        }
        for request in [&mut data, &mut clock] {
            if request.bits() != request_null().bits() {
                // SAFETY: a request just made.
                let done = unsafe { self.block_on(request, status_ignore(), None) };
                if rc == SUCCESS {
                    rc = done;
                }
            }
        }
        if rc == SUCCESS {
            self.llcp.merge(&self.coll_in);
        }
        rc
    }

    /// Sends `own` (its base at `at`) and this rank's clock to `to`, and
    /// follows both sends until they complete.
    ///
    /// # Safety
    ///
    /// `at` is `own`'s base for `count` x `datatype`.
    unsafe fn chain_send(
        &mut self,
        own: Vec<u8>,
        at: *mut c_void,
        count: c_int,
        datatype: MPI_Datatype,
        to: c_int,
        shadow: MPI_Comm,
    ) -> c_int {
        let mut clock = self.early.buffer();
        for word in self.llcp.clock() {
            clock.extend_from_slice(&word.to_ne_bytes());
        }
        let width = self.width as c_int;
        let mut data: MPI_Request = request_null();
        let mut clock_request: MPI_Request = request_null();
        // SAFETY: both buffers move into the followed list (a `Vec`'s
        // heap bytes stay put) and live until the sends complete.
        let rc = unsafe {
            let rc = mpi_sys::PMPI_Isend(at, count, datatype, to, DATA_TAG, shadow, &mut data);
            if rc == SUCCESS {
                mpi_sys::PMPI_Isend(
                    clock.as_mut_ptr().cast(),
                    width,
                    uint64(),
                    to,
                    CLOCK_TAG,
                    shadow,
                    &mut clock_request,
                )
            } else {
                rc
            }
        };
        self.early.follow(data, own);
        self.early.follow(clock_request, clock);
        rc
    }
}

/// Copies `count` x `datatype` from `from` to `to` (both laid out by the
/// datatype), through the process's own communicator.
///
/// # Safety
///
/// Both hold `count` x `datatype`.
unsafe fn copy_typed(
    from: *const c_void,
    to: *mut c_void,
    count: c_int,
    datatype: MPI_Datatype,
) -> c_int {
    if from == to.cast_const() {
        return SUCCESS;
    }
    // SAFETY: the caller's contract.
    unsafe {
        mpi_sys::PMPI_Sendrecv(
            from,
            count,
            datatype,
            0,
            0,
            to,
            count,
            datatype,
            0,
            0,
            comm_self(),
            status_ignore(),
        )
    }
}
