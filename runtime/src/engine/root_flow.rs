//! Clock contributions that flow to a collective's root ([`Flow::ToRoot`]:
//! `MPI_Gather`, `MPI_Gatherv`, `MPI_Reduce` and their nonblocking forms)
//! from ranks that are not the root, and from the root of a
//! [`Flow::FromRoot`] one (`MPI_Bcast`, `MPI_Scatter(v)`; MPICH 4.0's
//! `MPI_Ibcast` root waits for the others): started, and left in flight.
//!
//! MPI lets a non-root leave these collectives before the root enters them,
//! and programs, and the matches mbhybrid forces, can depend on it (seed
//! 000 §5.2: the clocks of a gather flow to the root only, so a send after
//! it is concurrent with the root's receives before it). The reduction that
//! carries the clocks need not behave the same: Open MPI 4.1's
//! `MPI_Ireduce` of more than one word makes every rank wait for the root
//! (measured: a non-root waited 2 s for a root that slept 2 s; with one
//! word it did not), and MPICH's does for large clocks (its
//! reduce-scatter-gather algorithm). Waiting for it would make the
//! collective synchronise: the forced match could not happen, or the
//! program would deadlock only under mbhybrid. So a non-root starts the
//! reduction and goes on; the request is completed later, when the rank
//! polls ([`RootFlows::poll`], from `service` and `MPI_Comm_free`) or at
//! the latest at `MPI_Finalize`. Not at `MPI_Comm_free`: the root may never
//! enter the collective (it is blocked elsewhere), and a rank waiting
//! inside `MPI_Comm_free` is one the wait-for graph cannot see; in
//! `MPI_Finalize` it can.
//!
//! [`Flow::ToRoot`]: super::coll::Flow::ToRoot
//! [`Flow::FromRoot`]: super::coll::Flow::FromRoot

use crate::consts::SUCCESS;
use mpi_sys::MPI_Request;
use std::os::raw::c_int;

/// How many buffers are made ahead, so that a program's collectives do not
/// allocate while few are in flight.
const SPARE: usize = 8;

/// The clock exchanges a rank started as a sender only and has not
/// completed.
pub(super) struct RootFlows {
    width: usize,
    /// Each request with the buffer it reads (boxed: the address MPI holds
    /// stays put while the list moves).
    pending: Vec<(MPI_Request, Box<[u64]>)>,
    spare: Vec<Box<[u64]>>,
}

impl RootFlows {
    /// Room for clocks of `width` words.
    pub(super) fn new(width: usize) -> Self {
        RootFlows {
            width,
            pending: Vec::with_capacity(SPARE),
            spare: (0..SPARE)
                .map(|_| vec![0; width].into_boxed_slice())
                .collect(),
        }
    }

    /// A buffer holding `clock`, for a reduction about to start.
    pub(super) fn buffer(&mut self, clock: &[u64]) -> Box<[u64]> {
        let mut buffer = self
            .spare
            .pop()
            .unwrap_or_else(|| vec![0; self.width].into_boxed_slice());
        let n = clock.len().min(buffer.len());
        buffer[..n].copy_from_slice(&clock[..n]);
        buffer
    }

    /// Follows `request`, which reads `buffer`, until it completes.
    pub(super) fn push(&mut self, request: MPI_Request, buffer: Box<[u64]>) {
        self.pending.push((request, buffer));
    }

    /// Completes the reductions that are done (never blocks).
    pub(super) fn poll(&mut self) {
        let mut i = 0;
        while i < self.pending.len() {
            let mut flag: c_int = 0;
            // SAFETY: a request this rank started and has not completed.
            let rc = unsafe {
                mpi_sys::PMPI_Test(
                    &mut self.pending[i].0,
                    &mut flag,
                    crate::consts::status_ignore(),
                )
            };
            if rc == SUCCESS && flag == 0 {
                i += 1;
                continue;
            }
            // Done (or failed: a failed reduction has nothing left to read
            // its buffer, and the collective itself reports the error).
            let (_, buffer) = self.pending.swap_remove(i);
            self.spare.push(buffer);
        }
    }

    /// The oldest reduction in flight, taken off the list, to be waited
    /// for by the caller (which serves the rank meanwhile).
    pub(super) fn take_oldest(&mut self) -> Option<(MPI_Request, Box<[u64]>)> {
        (!self.pending.is_empty()).then(|| self.pending.remove(0))
    }

    /// Takes back the buffer of a reduction the caller completed.
    pub(super) fn recycle(&mut self, buffer: Box<[u64]>) {
        self.spare.push(buffer);
    }
}
