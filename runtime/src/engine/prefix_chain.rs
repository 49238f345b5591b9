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
//! The sends are completed like `early.rs`'s calls. `MPI_Iscan` and
//! `MPI_Iexscan` do the same: rank 0's completes at once; above it, the
//! program's request is the receive of the partial, and the rest is done
//! when that request completes (`coll_done`) or at `MPI_Finalize`.

use super::early::{base_in, Span};
use super::Rt;
use crate::consts::{comm_self, in_place, request_null, status_ignore, uint64, SUCCESS};
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

/// A chain's receive from the rank below, posted and not yet finished
/// (`MPI_Iscan`/`MPI_Iexscan` at a rank above 0: the program's request is
/// the receive of the partial).
pub struct ChainInFlight {
    call: PrefixCall,
    shadow: MPI_Comm,
    me: c_int,
    n: c_int,
    span: Span,
    /// The partial of the ranks below, arriving.
    partial: Vec<u8>,
    /// Their clock, arriving, and its receive.
    clock: Vec<u8>,
    clock_request: MPI_Request,
}

/// The chains in flight, by the index their collective's slot holds.
#[derive(Default)]
pub struct Chains {
    in_flight: Vec<Option<ChainInFlight>>,
}

impl Rt {
    /// Runs blocking `call` as a chain on `shadow`, where this rank is `me`
    /// of `n`. `None` when it cannot (a datatype MPI cannot describe): the
    /// caller runs the library's scan. Merges the clocks of the ranks
    /// below.
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
        // SAFETY: the caller's contract.
        let (mut data, chain) = match unsafe { self.chain_start(call, shadow, me, n)? } {
            Ok(started) => started,
            Err(rc) => return Some(rc),
        };
        if chain.is_some() {
            // SAFETY: the receive just posted; its buffer is `chain`'s.
            let rc = unsafe { self.block_on(&mut data, status_ignore(), None) };
            if rc != SUCCESS {
                return Some(rc);
            }
        }
        // SAFETY: `chain` holds the partial received (or none at rank 0).
        Some(unsafe { self.chain_finish(call, shadow, me, n, chain) })
    }

    /// Starts nonblocking `call` as a chain: at rank 0 it completes at
    /// once (`None` in the request slot: the caller hands the program a
    /// request already complete); above, `*request` is the receive of the
    /// partial, and the returned index names the chain for
    /// [`Rt::chain_done`]. `None` when it cannot (the caller runs the
    /// library's call).
    ///
    /// # Safety
    ///
    /// As for [`Rt::prefix_chain`]; `request` is valid for writes.
    pub(super) unsafe fn prefix_chain_start(
        &mut self,
        call: PrefixCall,
        shadow: MPI_Comm,
        me: c_int,
        n: c_int,
        request: *mut MPI_Request,
    ) -> Option<Result<Option<u32>, c_int>> {
        // SAFETY: the caller's contract.
        let (data, chain) = match unsafe { self.chain_start(call, shadow, me, n)? } {
            Ok(started) => started,
            Err(rc) => return Some(Err(rc)),
        };
        let Some(chain) = chain else {
            // SAFETY: rank 0: nothing to receive.
            let rc = unsafe { self.chain_finish(call, shadow, me, n, None) };
            return Some(if rc == SUCCESS { Ok(None) } else { Err(rc) });
        };
        // SAFETY: the caller's contract.
        unsafe { *request = data };
        let free = self.chains.in_flight.iter().position(Option::is_none);
        let at = free.unwrap_or(self.chains.in_flight.len());
        if at == self.chains.in_flight.len() {
            self.chains.in_flight.push(None);
        }
        self.chains.in_flight[at] = Some(chain);
        Some(Ok(Some(at as u32)))
    }

    /// After the program's request of chain `at` completed (the partial
    /// arrived): finishes it. Returns MPI's error, if any.
    pub(super) fn chain_done(&mut self, at: u32) -> c_int {
        let Some(chain) = self
            .chains
            .in_flight
            .get_mut(at as usize)
            .and_then(Option::take)
        else {
            return SUCCESS;
        };
        let (call, shadow, me, n) = (chain.call, chain.shadow, chain.me, chain.n);
        // SAFETY: the chain's partial arrived; the call is the program's,
        // whose buffers stay until its request completes (now).
        unsafe { self.chain_finish(call, shadow, me, n, Some(chain)) }
    }

    /// Posts the receives of the partial and the clock of the ranks below
    /// (none at rank 0). `Err` when MPI refused.
    ///
    /// # Safety
    ///
    /// As for [`Rt::prefix_chain`].
    #[allow(clippy::type_complexity)]
    unsafe fn chain_start(
        &mut self,
        call: PrefixCall,
        shadow: MPI_Comm,
        me: c_int,
        n: c_int,
    ) -> Option<Result<(MPI_Request, Option<ChainInFlight>), c_int>> {
        let span = Span::of(0, call.count, call.datatype)?;
        if me == 0 {
            return Some(Ok((request_null(), None)));
        }
        let mut partial = self.early.buffer();
        partial.resize(span.len(), 0);
        let mut clock = self.early.buffer();
        clock.resize(self.width * 8, 0);
        let (mut data, mut clock_request) = (request_null(), request_null());
        let at = base_in(&mut partial, span);
        let width = self.width as c_int;
        let from = me - 1;
        // SAFETY: both buffers move into the chain (a `Vec`'s heap bytes
        // stay put) and live until the receives complete.
        let rc = unsafe {
            let rc = mpi_sys::PMPI_Irecv(
                at,
                call.count,
                call.datatype,
                from,
                DATA_TAG,
                shadow,
                &mut data,
            );
            if rc == SUCCESS {
                mpi_sys::PMPI_Irecv(
                    clock.as_mut_ptr().cast(),
                    width,
                    uint64(),
                    from,
                    CLOCK_TAG,
                    shadow,
                    &mut clock_request,
                )
            } else {
                rc
            }
        };
        if rc != SUCCESS {
            return Some(Err(rc));
        }
        let chain = ChainInFlight {
            call,
            shadow,
            me,
            n,
            span,
            partial,
            clock,
            clock_request,
        };
        Some(Ok((data, Some(chain))))
    }

    /// The rest of a chain once the partial of the ranks below arrived
    /// (`chain`; `None` at rank 0): their clock, this rank's result, and
    /// the partial of `0..=me` sent on.
    ///
    /// # Safety
    ///
    /// `call` is the program's call, its buffers valid.
    unsafe fn chain_finish(
        &mut self,
        call: PrefixCall,
        shadow: MPI_Comm,
        me: c_int,
        n: c_int,
        chain: Option<ChainInFlight>,
    ) -> c_int {
        let Some(span) = Span::of(0, call.count, call.datatype) else {
            return SUCCESS;
        };
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
        let mut rc = SUCCESS;
        let mut below = None;
        if let Some(mut chain) = chain {
            // SAFETY: the receive the chain posted, into its buffer.
            rc = unsafe { self.block_on(&mut chain.clock_request, status_ignore(), None) };
            if rc == SUCCESS {
                let words: Vec<u64> = chain
                    .clock
                    .chunks_exact(8)
                    .map(|b| u64::from_ne_bytes(b.try_into().unwrap_or([0; 8])))
                    .collect();
                self.llcp.merge(&words);
                let at = base_in(&mut chain.partial, chain.span);
                // SAFETY: both hold `count` x `datatype`; `own` becomes
                // `partial op own`.
                rc = unsafe {
                    mpi_sys::PMPI_Reduce_local(at, own_at, call.count, call.datatype, call.op)
                };
                below = Some((at, chain.partial));
            }
            self.early.recycle(chain.clock);
        }
        // The result: `0..=me` (scan), `0..me` (exscan; none at rank 0).
        let result = match (&below, call.exclusive) {
            (_, false) => Some(own_at),
            (Some((at, _)), true) => Some(*at),
            (None, true) => None,
        };
        if let (SUCCESS, Some(from)) = (rc, result) {
            // SAFETY: `from` holds `count` x `datatype`; the receive
            // buffer is the program's.
            rc = unsafe { copy_typed(from, call.recvbuf, call.count, call.datatype) };
        }
        if let Some((_, partial)) = below {
            self.early.recycle(partial);
        }
        if rc == SUCCESS && me + 1 < n {
            // SAFETY: `own` holds `count` x `datatype` and is followed
            // until the send completes.
            rc = unsafe { self.chain_send(own, own_at, call.count, call.datatype, me + 1, shadow) };
        } else {
            self.early.recycle(own);
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
