//! Collectives: the program's collective in its nonblocking form, then the
//! clocks in the direction its data flows (seed 000 Fig 5.7, rule R5), on
//! the communicator's shadow:
//!
//! | [`Flow`] | calls | clocks |
//! | --- | --- | --- |
//! | `All` | `Barrier`, `Allreduce`, `Allgather`, `Alltoall`, `Finalize` | maximum over all ranks (`MPI_Iallreduce`) |
//! | `FromRoot` | `Bcast`, `Scatter` | the others take the maximum of theirs and the root's (`MPI_Ibcast`) |
//! | `ToRoot` | `Reduce`, `Gather` | the root takes the maximum of all (`MPI_Ireduce`); the others keep theirs and wait for nothing more than the collective itself made them wait for |

use super::Rt;
use crate::consts::{op_max, request_null, status_ignore, uint64, SUCCESS};
use crate::handle::HandleBits;
use crate::record;
use mbh_trace::rank_trace::RawOp;
use mbh_trace::OpKind;
use mpi_sys::{MPI_Comm, MPI_Datatype, MPI_Request};
use std::os::raw::c_int;

/// Which way a collective's data, and so the clocks, flow.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Flow {
    /// Every rank's data reaches every rank: synchronising.
    All,
    /// The root's data reaches the others.
    FromRoot,
    /// Everyone's data reaches the root.
    ToRoot,
}

impl Rt {
    /// Runs a collective: `start` makes its nonblocking form's request;
    /// the runtime completes it, then exchanges clocks per `flow`.
    ///
    /// # Safety
    ///
    /// `start` must be a valid nonblocking collective call on `comm`.
    #[allow(clippy::too_many_arguments)]
    pub unsafe fn collective(
        &mut self,
        kind: OpKind,
        comm: MPI_Comm,
        root: c_int,
        count: c_int,
        datatype: MPI_Datatype,
        flow: Flow,
        start: impl FnOnce(*mut MPI_Request) -> c_int,
    ) -> c_int {
        let index = record::begin(
            || RawOp {
                kind: kind as u16,
                site: record::site(),
                comm: comm.bits(),
                peer: root,
                count,
                aux: datatype.bits(),
                ..RawOp::default()
            },
            true,
        );
        let mut request = request_null();
        let mut rc = start(&mut request);
        if rc == SUCCESS {
            // SAFETY: the request just made.
            rc = unsafe { self.block_on(&mut request, status_ignore(), None) };
        }
        if rc == SUCCESS {
            // SAFETY: `comm` is valid (the collective succeeded on it).
            unsafe { self.clocks_through(comm, root, flow) };
        }
        record::finish(index, rc, true, |_| {});
        rc
    }

    /// The clock exchange of a collective on `comm` (skipped for
    /// intercommunicators).
    ///
    /// # Safety
    ///
    /// `comm` must be a valid communicator.
    unsafe fn clocks_through(&mut self, comm: MPI_Comm, root: c_int, flow: Flow) {
        let world = comm.bits() == crate::consts::comm_world().bits();
        let (shadow, am_root) = if world {
            (self.shadow, self.rank == root)
        } else {
            let Some(info) = self.comms.info(comm) else {
                return;
            };
            if info.inter {
                return;
            }
            let am_root = info.rank == root;
            let shadow = match info.shadow {
                Some(shadow) => shadow,
                None => {
                    let mut shadow = comm;
                    let mut request = request_null();
                    // SAFETY: every rank of `comm` is in this same
                    // collective, so all make the shadow here.
                    let rc = unsafe { mpi_sys::PMPI_Comm_idup(comm, &mut shadow, &mut request) };
                    let rc = if rc == SUCCESS {
                        // SAFETY: the request just made.
                        unsafe { self.block_on(&mut request, status_ignore(), None) }
                    } else {
                        rc
                    };
                    if rc != SUCCESS {
                        crate::state::fatal(format_args!(
                            "cannot duplicate a communicator for the clocks of a collective (MPI error {rc})"
                        ));
                    }
                    if let Some(info) = self.comms.info(comm) {
                        info.shadow = Some(shadow);
                    }
                    shadow
                }
            };
            (shadow, am_root)
        };
        // SAFETY: a valid shadow of `comm`.
        unsafe { self.exchange(shadow, root, flow, am_root) };
    }

    /// Exchanges clocks on `shadow` per `flow`.
    ///
    /// # Safety
    ///
    /// `shadow` must be a valid intracommunicator every rank of which
    /// makes the same call.
    pub(super) unsafe fn exchange(
        &mut self,
        shadow: MPI_Comm,
        root: c_int,
        flow: Flow,
        am_root: bool,
    ) {
        self.coll_in.copy_from_slice(self.llcp.clock());
        let width = self.width as c_int;
        let input = self.coll_in.as_mut_ptr().cast();
        let output = self.coll_out.as_mut_ptr().cast();
        let mut request = request_null();
        // SAFETY: both buffers hold `width` words and stay untouched until
        // the request completes below.
        let rc = unsafe {
            match flow {
                Flow::All => mpi_sys::PMPI_Iallreduce(
                    input,
                    output,
                    width,
                    uint64(),
                    op_max(),
                    shadow,
                    &mut request,
                ),
                Flow::FromRoot => {
                    mpi_sys::PMPI_Ibcast(input, width, uint64(), root, shadow, &mut request)
                }
                Flow::ToRoot => mpi_sys::PMPI_Ireduce(
                    input,
                    output,
                    width,
                    uint64(),
                    op_max(),
                    root,
                    shadow,
                    &mut request,
                ),
            }
        };
        let rc = if rc == SUCCESS {
            // SAFETY: the request just made.
            unsafe { self.block_on(&mut request, status_ignore(), None) }
        } else {
            rc
        };
        if rc != SUCCESS {
            crate::state::fatal(format_args!(
                "the clock exchange of a collective failed (MPI error {rc})"
            ));
        }
        match flow {
            Flow::All => self.llcp.merge(&self.coll_out),
            Flow::FromRoot => self.llcp.merge(&self.coll_in),
            Flow::ToRoot if am_root => self.llcp.merge(&self.coll_out),
            Flow::ToRoot => {}
        }
    }

    /// `MPI_Comm_free`: forgets the communicator and frees its shadow.
    ///
    /// # Safety
    ///
    /// As for `MPI_Comm_free`.
    pub unsafe fn comm_free(&mut self, comm: *mut MPI_Comm) -> c_int {
        if !comm.is_null() {
            // SAFETY: non-null, the caller's handle.
            let handle = unsafe { *comm };
            self.resources
                .remove(crate::checks::ResourceKind::Comm, handle.bits());
            self.handlers.set(handle, false);
            if let Some(mut shadow) = self.comms.forget(handle) {
                // SAFETY: a shadow the runtime made; every rank frees
                // `comm` (a collective call) and so its shadow.
                unsafe { mpi_sys::PMPI_Comm_free(&mut shadow) };
            }
        }
        // SAFETY: the caller's contract.
        unsafe { mpi_sys::PMPI_Comm_free(comm) }
    }
}
