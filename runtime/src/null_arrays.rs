//! The count, displacement and datatype arrays of the `v` and `w`
//! collectives, checked for NULL before anything reads them.
//! MPICH reads them unchecked (a NULL `recvcounts` to `MPI_Reduce_scatter`
//! crashes inside the library) and so do the runtime's own checks (the
//! signature words, the pairwise checks, the watched buffers). A NULL
//! array that this rank's call reads is refused
//! ([`crate::checks::refuse`]): MPI never sees the call, the program gets
//! `MPI_ERR_ARG` and its error handler runs, and the report has an
//! `invalid-argument` at the call naming the array.
//!
//! Which arrays a rank's call reads (MPI-4.0 §6.5-§6.8, §6.10):
//! `Gatherv`'s `recvcounts` and `displs` and `Scatterv`'s `sendcounts` and
//! `displs` only at the root (`MPI_ROOT` on an intercommunicator): they are
//! "significant only at root", so the other ranks may pass NULL.
//! `Allgatherv`'s and `Reduce_scatter`'s on every rank; `Alltoallv`'s and
//! `Alltoallw`'s on every rank, except the send arrays with `MPI_IN_PLACE`
//! (§6.8: "sendcounts, sdispls and sendtype are ignored"). A communicator
//! MPI does not know is left to MPI to refuse.

use crate::consts::{in_place, SUCCESS};
use mbh_trace::op::BadArgument;
use mpi_sys::{MPI_Comm, MPI_Datatype};
use std::os::raw::{c_int, c_void};

/// The first argument of `arrays` that is NULL.
fn first_null(arrays: &[(*const c_void, BadArgument)]) -> Option<BadArgument> {
    arrays
        .iter()
        .find(|(array, _)| array.is_null())
        .map(|&(_, argument)| argument)
}

/// Whether `comm` is a communicator MPI knows, and an intercommunicator.
fn inter(comm: MPI_Comm) -> Option<bool> {
    let mut flag: c_int = 0;
    // SAFETY: a valid out-parameter; MPI judges the handle.
    (unsafe { mpi_sys::PMPI_Comm_test_inter(comm, &mut flag) } == SUCCESS).then_some(flag != 0)
}

/// Whether this rank is the root of a rooted collective on `comm`.
fn is_root(root: c_int, comm: MPI_Comm) -> bool {
    match inter(comm) {
        Some(true) => root == mpi_sys::MPI_ROOT,
        Some(false) => {
            let mut rank: c_int = -1;
            // SAFETY: a valid out-parameter; MPI judges the handle.
            let ok = unsafe { mpi_sys::PMPI_Comm_rank(comm, &mut rank) } == SUCCESS;
            ok && rank == root
        }
        None => false,
    }
}

/// The arrays every rank reads, when `comm` is one MPI knows.
fn on_every_rank(comm: MPI_Comm, arrays: &[(*const c_void, BadArgument)]) -> Option<BadArgument> {
    inter(comm)?;
    first_null(arrays)
}

/// `MPI_Gatherv`: the root's `recvcounts` and `displs`.
pub fn gatherv(
    recvcounts: *const c_int,
    displs: *const c_int,
    root: c_int,
    comm: MPI_Comm,
) -> Option<BadArgument> {
    if !is_root(root, comm) {
        return None;
    }
    first_null(&[
        (recvcounts.cast(), BadArgument::NullRecvcounts),
        (displs.cast(), BadArgument::NullDispls),
    ])
}

/// `MPI_Scatterv`: the root's `sendcounts` and `displs`.
pub fn scatterv(
    sendcounts: *const c_int,
    displs: *const c_int,
    root: c_int,
    comm: MPI_Comm,
) -> Option<BadArgument> {
    if !is_root(root, comm) {
        return None;
    }
    first_null(&[
        (sendcounts.cast(), BadArgument::NullSendcounts),
        (displs.cast(), BadArgument::NullDispls),
    ])
}

/// `MPI_Allgatherv`: `recvcounts` and `displs` on every rank (with
/// `MPI_IN_PLACE` too: they place the rank's own block).
pub fn allgatherv(
    recvcounts: *const c_int,
    displs: *const c_int,
    comm: MPI_Comm,
) -> Option<BadArgument> {
    on_every_rank(
        comm,
        &[
            (recvcounts.cast(), BadArgument::NullRecvcounts),
            (displs.cast(), BadArgument::NullDispls),
        ],
    )
}

/// `MPI_Reduce_scatter`: `recvcounts` on every rank.
pub fn reduce_scatter(recvcounts: *const c_int, comm: MPI_Comm) -> Option<BadArgument> {
    on_every_rank(comm, &[(recvcounts.cast(), BadArgument::NullRecvcounts)])
}

/// The arrays of an all-to-all after the send ones (`sent` of them),
/// which `MPI_IN_PLACE` leaves unread.
fn all_to_all(
    sendbuf: *const c_void,
    arrays: &[(*const c_void, BadArgument)],
    sent: usize,
    comm: MPI_Comm,
) -> Option<BadArgument> {
    let skip = if sendbuf.cast_mut() == in_place() {
        sent
    } else {
        0
    };
    on_every_rank(comm, arrays.get(skip..).unwrap_or_default())
}

/// `MPI_Alltoallv`: every array, but the send ones with `MPI_IN_PLACE`.
pub fn alltoallv(
    sendbuf: *const c_void,
    send: (*const c_int, *const c_int),
    recv: (*const c_int, *const c_int),
    comm: MPI_Comm,
) -> Option<BadArgument> {
    let arrays = [
        (send.0.cast(), BadArgument::NullSendcounts),
        (send.1.cast(), BadArgument::NullSdispls),
        (recv.0.cast(), BadArgument::NullRecvcounts),
        (recv.1.cast(), BadArgument::NullRdispls),
    ];
    all_to_all(sendbuf, &arrays, 2, comm)
}

/// `MPI_Alltoallw`: as [`alltoallv`], with the datatype arrays.
pub fn alltoallw(
    sendbuf: *const c_void,
    send: (*const c_int, *const c_int, *const MPI_Datatype),
    recv: (*const c_int, *const c_int, *const MPI_Datatype),
    comm: MPI_Comm,
) -> Option<BadArgument> {
    let arrays = [
        (send.0.cast(), BadArgument::NullSendcounts),
        (send.1.cast(), BadArgument::NullSdispls),
        (send.2.cast(), BadArgument::NullSendtypes),
        (recv.0.cast(), BadArgument::NullRecvcounts),
        (recv.1.cast(), BadArgument::NullRdispls),
        (recv.2.cast(), BadArgument::NullRecvtypes),
    ];
    all_to_all(sendbuf, &arrays, 3, comm)
}
