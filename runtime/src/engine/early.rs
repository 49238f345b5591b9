//! Rooted collectives a rank leaves before the others enter them.
//!
//! MPI-4.0 §6.1: a collective may or may not synchronise. The root of
//! `MPI_Bcast`, `MPI_Scatter` and `MPI_Scatterv`, and a rank other than
//! the root of `MPI_Gather`, `MPI_Gatherv` and `MPI_Reduce`, only sends:
//! it may return as soon as its send buffer may be reused, before any other
//! rank enters the call. The clocks follow that (seed 000 Fig 5.7: they
//! flow in the data's direction), so the search forces matches that need
//! such a rank to leave early; but an MPI library may keep it inside
//! (MPICH 4.0's `MPI_Ibcast` root completes only once the others entered),
//! and the forced match could not happen.
//!
//! So in a guided run such a rank starts the call's nonblocking form on a
//! copy of what it sends, returns, and the runtime completes the request
//! later: polled whenever the rank blocks in MPI (`service`) and at
//! `MPI_Comm_free`, waited for at `MPI_Finalize` (as the clock reductions
//! of `root_flow.rs`, for the same reason: a wait elsewhere would be one the
//! wait-for graph cannot see). The copy is what MPI requires: the program
//! may write its buffer once the call returned. Only guided runs pay for
//! it: the first run lets the MPI library decide, as the program would run
//! without mbhybrid, and the clocks still find the matches an early return
//! allows; copies are taken from a pool that keeps its buffers, so a loop
//! of collectives allocates only while its messages grow. `MPI_Scan` and
//! `MPI_Exscan`, where every rank but the last may leave before the ranks
//! above it enter, run as a chain instead (`prefix_chain.rs`).

use super::coll::{only_sends, Flow, NO_CHAIN};
use super::Rt;
use crate::consts::{bottom, in_place, status_ignore, SUCCESS};
use crate::state::fatal;
use mpi_sys::{MPI_Comm, MPI_Datatype, MPI_Request};
use std::os::raw::{c_int, c_void};

/// How many buffers the pool keeps at most (more in flight are freed when
/// they complete).
const KEEP: usize = 8;

/// The bytes a call reads from `base`: `[lo, hi)` relative to it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Span {
    pub lo: isize,
    pub hi: isize,
}

impl Span {
    /// Nothing.
    const EMPTY: Span = Span { lo: 0, hi: 0 };

    /// The union of both (an empty one adds nothing).
    pub fn union(self, other: Span) -> Span {
        if self.lo >= self.hi {
            return other;
        }
        if other.lo >= other.hi {
            return self;
        }
        Span {
            lo: self.lo.min(other.lo),
            hi: self.hi.max(other.hi),
        }
    }

    /// The bytes of `count` elements of `datatype` starting `offset`
    /// bytes from the base: from the first element's true lower bound to
    /// the last one's true upper bound (MPI-4.0 §5.1.8). `None` when MPI
    /// cannot describe the datatype.
    pub fn of(offset: isize, count: c_int, datatype: MPI_Datatype) -> Option<Span> {
        if count <= 0 {
            return Some(Span::EMPTY);
        }
        let (mut lb, mut extent, mut true_lb, mut true_extent) = (0, 0, 0, 0);
        // SAFETY: valid out-parameters; MPI judges the handle.
        let ok = unsafe {
            mpi_sys::PMPI_Type_get_extent(datatype, &mut lb, &mut extent) == SUCCESS
                && mpi_sys::PMPI_Type_get_true_extent(datatype, &mut true_lb, &mut true_extent)
                    == SUCCESS
        };
        if !ok {
            return None;
        }
        let step = isize::try_from(extent).ok()?;
        let last = step.checked_mul(isize::try_from(count - 1).ok()?)?;
        let true_lb = isize::try_from(true_lb).ok()?;
        let true_extent = isize::try_from(true_extent).ok()?;
        Some(Span {
            lo: offset + true_lb + last.min(0),
            hi: offset + true_lb + true_extent + last.max(0),
        })
    }

    pub(super) fn len(self) -> usize {
        usize::try_from(self.hi - self.lo).unwrap_or(0)
    }
}

/// The program's collectives this rank left early, in flight, with the
/// copies they read.
pub struct EarlyLeaves {
    pending: Vec<(MPI_Request, Vec<u8>)>,
    /// The copy made for the call being started.
    staged: Option<Vec<u8>>,
    spare: Vec<Vec<u8>>,
}

impl EarlyLeaves {
    pub(super) fn new() -> Self {
        EarlyLeaves {
            pending: Vec::new(),
            staged: None,
            spare: Vec::new(),
        }
    }

    /// Copies the bytes `span` of `base` and returns the address that
    /// stands for `base` in the copy, for a call about to start.
    /// `None` for `MPI_BOTTOM` (absolute addresses: the span may cover
    /// memory that is not the program's) and `MPI_IN_PLACE` (an erroneous
    /// send buffer here), where the rank stays in the call as MPI has it.
    ///
    /// # Safety
    ///
    /// `base` and `span` describe the buffer of a collective call the
    /// program made (MPI reads those bytes too).
    pub unsafe fn stage(&mut self, base: *const c_void, span: Span) -> Option<*mut c_void> {
        if base.is_null() || base == bottom().cast_const() || base == in_place().cast_const() {
            return None;
        }
        let mut copy = self.buffer();
        // SAFETY: the caller's contract: the call reads these bytes.
        let from =
            unsafe { std::slice::from_raw_parts(base.cast::<u8>().offset(span.lo), span.len()) };
        copy.extend_from_slice(from);
        let at = base_in(&mut copy, span);
        self.staged = Some(copy);
        Some(at)
    }

    /// An empty buffer from the pool.
    pub(super) fn buffer(&mut self) -> Vec<u8> {
        let mut buffer = self.spare.pop().unwrap_or_default();
        buffer.clear();
        buffer
    }

    /// Follows `request`, which reads `buffer`, until it completes.
    pub(super) fn follow(&mut self, request: MPI_Request, buffer: Vec<u8>) {
        self.pending.push((request, buffer));
    }

    /// The call on the staged copy started (`rc`): follows its request.
    pub(super) fn started(&mut self, rc: c_int, request: MPI_Request) {
        let Some(copy) = self.staged.take() else {
            return;
        };
        if rc == SUCCESS {
            self.pending.push((request, copy));
        } else {
            self.recycle(copy);
        }
    }

    /// Completes the calls that are done (never blocks).
    pub(super) fn poll(&mut self) {
        let mut i = 0;
        while i < self.pending.len() {
            let mut flag: c_int = 0;
            // SAFETY: a request this rank started and has not completed.
            let rc =
                unsafe { mpi_sys::PMPI_Test(&mut self.pending[i].0, &mut flag, status_ignore()) };
            if rc == SUCCESS && flag == 0 {
                i += 1;
                continue;
            }
            let (_, copy) = self.pending.swap_remove(i);
            self.recycle(copy);
        }
    }

    fn take_oldest(&mut self) -> Option<(MPI_Request, Vec<u8>)> {
        (!self.pending.is_empty()).then(|| self.pending.remove(0))
    }

    /// Takes back a buffer no request reads.
    pub(super) fn recycle(&mut self, copy: Vec<u8>) {
        if self.spare.len() < KEEP {
            self.spare.push(copy);
        }
    }
}

/// The address that stands for a buffer's base in `copy`, which holds the
/// buffer's bytes `span`. MPI addresses elements from the base; `lo` may
/// be positive or negative, so the base may lie outside the copy (never
/// dereferenced there).
pub(super) fn base_in(copy: &mut [u8], span: Span) -> *mut c_void {
    copy.as_mut_ptr().wrapping_offset(-span.lo).cast::<c_void>()
}

/// Starts the program's collective on a copy of what this rank sends;
/// `Some(rc)` when it did, `None` when it could not copy (nothing started).
pub type EarlyStart<'a> = &'a mut dyn FnMut(&mut EarlyLeaves, *mut MPI_Request) -> Option<c_int>;

/// How a blocking collective lets a rank leave before the others enter.
pub enum Early<'a> {
    /// A rank that only sends in a rooted collective: its call started on
    /// a copy of what it sends.
    Send(EarlyStart<'a>),
    /// `MPI_Scan`/`MPI_Exscan`: a chain (`prefix_chain.rs`).
    Prefix(super::prefix_chain::PrefixCall),
}

impl Rt {
    /// Starts the program's collective through `early` and leaves it in
    /// flight, when the run is guided (module docs; the caller knows that
    /// this rank only sends). `None` when the caller must run the call as
    /// usual.
    pub(super) fn leave_early(&mut self, early: Option<EarlyStart<'_>>) -> Option<c_int> {
        let early = early?;
        if !self.llcp.guiding() {
            return None;
        }
        let mut request = crate::consts::request_null();
        let rc = early(&mut self.early, &mut request)?;
        self.early.started(rc, request);
        Some(rc)
    }

    /// Runs a blocking collective through `early` in a guided run, where
    /// this rank may leave it before the others enter (`early.rs`,
    /// `prefix_chain.rs`), with its clock exchange; `None` when the caller
    /// must run it as usual.
    ///
    /// # Safety
    ///
    /// `early` describes the program's call on the communicator of
    /// `shadows`, rooted at `root`.
    pub(super) unsafe fn collective_early(
        &mut self,
        early: Option<Early<'_>>,
        root: c_int,
        flow: Flow,
        shadows: Option<(MPI_Comm, c_int, usize)>,
    ) -> Option<c_int> {
        if !self.llcp.guiding() {
            return None;
        }
        let (shadow, me, _) = shadows?;
        match early? {
            Early::Send(start) if only_sends(flow, me, root) => {
                let rc = self.leave_early(Some(start))?;
                if rc == SUCCESS {
                    // SAFETY: a valid clock shadow of the call's communicator.
                    unsafe { self.exchange(shadow, root, flow, me) };
                }
                Some(rc)
            }
            Early::Prefix(call) => {
                let mut n: c_int = 0;
                // SAFETY: a valid out-parameter; the runtime's shadow.
                if unsafe { mpi_sys::PMPI_Comm_size(shadow, &mut n) } != SUCCESS {
                    return None;
                }
                // SAFETY: the caller's contract; the chain merges clocks.
                unsafe { self.prefix_chain(call, shadow, me, n) }
            }
            Early::Send(_) => None,
        }
    }

    /// Starts a nonblocking collective through `early` in a guided run
    /// (`early.rs`, `prefix_chain.rs`): MPI's code, the chain the request
    /// finishes ([`NO_CHAIN`]: none), and whether the clocks are exchanged
    /// already (a chain carries them). `None` when the caller must start
    /// it as usual.
    ///
    /// # Safety
    ///
    /// As for [`Rt::collective_early`]; `request` is the program's.
    pub(super) unsafe fn icollective_early(
        &mut self,
        early: Option<Early<'_>>,
        root: c_int,
        flow: Flow,
        shadows: Option<(MPI_Comm, c_int, usize)>,
        request: *mut MPI_Request,
    ) -> Option<(c_int, u32, bool)> {
        if !self.llcp.guiding() || request.is_null() {
            return None;
        }
        let (shadow, me, _) = shadows?;
        // The program's request is done at once when nothing is left to
        // wait for (`early.rs`).
        let done = |rc| {
            if rc == SUCCESS {
                // SAFETY: the caller's request, valid for writes.
                unsafe { done_request(request) }
            } else {
                rc
            }
        };
        match early? {
            Early::Send(start) if only_sends(flow, me, root) => {
                Some((done(self.leave_early(Some(start))?), NO_CHAIN, false))
            }
            Early::Prefix(call) => {
                let mut n: c_int = 0;
                // SAFETY: a valid out-parameter; the runtime's shadow.
                if unsafe { mpi_sys::PMPI_Comm_size(shadow, &mut n) } != SUCCESS {
                    return None;
                }
                // SAFETY: the caller's contract.
                Some(
                    match unsafe { self.prefix_chain_start(call, shadow, me, n, request)? } {
                        Ok(Some(at)) => (SUCCESS, at, true),
                        Ok(None) => (done(SUCCESS), NO_CHAIN, true),
                        Err(rc) => (rc, NO_CHAIN, true),
                    },
                )
            }
            Early::Send(_) => None,
        }
    }

    /// Completes every collective this rank left early (`MPI_Finalize`,
    /// where the wait-for graph follows the rank).
    pub(super) fn early_wait_all(&mut self) {
        while let Some((mut request, copy)) = self.early.take_oldest() {
            // SAFETY: a request this rank started and has not completed.
            let rc = unsafe { self.block_on(&mut request, status_ignore(), None) };
            if rc != SUCCESS {
                fatal(format_args!(
                    "a collective the rank had left early failed to complete (MPI error {rc})"
                ));
            }
            self.early.recycle(copy);
        }
    }
}

/// Makes `*request` a request that is already complete, for the program's
/// nonblocking collective this rank left early: a generalized request
/// (MPI-4.0 §13.2), completed before the program sees it, so its `Wait`
/// returns at once as MPI allows, whatever the library's own request would
/// do. Its status is empty (§3.7.3).
///
/// # Safety
///
/// `request` is valid for writes.
pub(super) unsafe fn done_request(request: *mut MPI_Request) -> c_int {
    // SAFETY: MPI's callbacks, called with the null state given here.
    let rc = unsafe {
        mpi_sys::PMPI_Grequest_start(
            Some(empty_status),
            Some(nothing_to_free),
            Some(nothing_to_cancel),
            std::ptr::null_mut(),
            request,
        )
    };
    if rc != SUCCESS {
        return rc;
    }
    // SAFETY: the request just made.
    unsafe { mpi_sys::PMPI_Grequest_complete(*request) }
}

/// A generalized request's status: empty (§3.7.3).
unsafe extern "C" fn empty_status(_: *mut c_void, status: *mut mpi_sys::MPI_Status) -> c_int {
    if status.is_null() {
        return SUCCESS;
    }
    // SAFETY: MPI passes a status to fill.
    unsafe {
        (*status).MPI_SOURCE = crate::consts::any_source();
        (*status).MPI_TAG = crate::consts::any_tag();
        mpi_sys::PMPI_Status_set_elements(status, crate::consts::byte(), 0);
        mpi_sys::PMPI_Status_set_cancelled(status, 0);
    }
    SUCCESS
}

unsafe extern "C" fn nothing_to_free(_: *mut c_void) -> c_int {
    SUCCESS
}

unsafe extern "C" fn nothing_to_cancel(_: *mut c_void, _: c_int) -> c_int {
    SUCCESS
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spans_join_and_ignore_empty_ones() {
        let a = Span { lo: 8, hi: 16 };
        let b = Span { lo: -4, hi: 4 };
        assert_eq!(a.union(b), Span { lo: -4, hi: 16 });
        assert_eq!(a.union(Span::EMPTY), a);
        assert_eq!(Span::EMPTY.union(b), b);
    }
}
