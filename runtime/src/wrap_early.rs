//! What a rank that only sends in a rooted collective needs to leave it
//! early (`engine/early.rs`): the bytes it sends, and, at the root of a
//! scatter, its own block, which MPI would have written into its receive
//! buffer before the call returned.

use crate::consts::{comm_self, in_place, status_ignore, SUCCESS};
use crate::engine::Span;
use mpi_sys::{MPI_Comm, MPI_Datatype};
use std::os::raw::{c_int, c_void};

/// The extent of `datatype` in bytes.
fn extent(datatype: MPI_Datatype) -> Option<isize> {
    let (mut lb, mut extent) = (0, 0);
    // SAFETY: valid out-parameters; MPI judges the handle.
    let rc = unsafe { mpi_sys::PMPI_Type_get_extent(datatype, &mut lb, &mut extent) };
    (rc == SUCCESS).then_some(())?;
    isize::try_from(extent).ok()
}

/// The size of `comm`.
fn size(comm: MPI_Comm) -> Option<c_int> {
    let mut n = 0;
    // SAFETY: a valid out-parameter; MPI judges the handle.
    let rc = unsafe { mpi_sys::PMPI_Comm_size(comm, &mut n) };
    (rc == SUCCESS).then_some(n)
}

/// The bytes the root of `MPI_Scatter` sends: `size(comm)` blocks.
pub fn scatter_span(count: c_int, datatype: MPI_Datatype, comm: MPI_Comm) -> Option<Span> {
    Span::of(0, count.checked_mul(size(comm)?)?, datatype)
}

/// The bytes the root of `MPI_Scatterv` sends: every rank's block.
///
/// # Safety
///
/// `counts` and `displs` hold `size(comm)` entries (MPI requires it at
/// the root).
pub unsafe fn scatterv_span(
    counts: *const c_int,
    displs: *const c_int,
    datatype: MPI_Datatype,
    comm: MPI_Comm,
) -> Option<Span> {
    if counts.is_null() || displs.is_null() {
        return None;
    }
    let n = usize::try_from(size(comm)?).ok()?;
    let step = extent(datatype)?;
    // SAFETY: the caller's contract.
    let (counts, displs) = unsafe {
        (
            std::slice::from_raw_parts(counts, n),
            std::slice::from_raw_parts(displs, n),
        )
    };
    let mut all = Span { lo: 0, hi: 0 };
    for (&count, &displ) in counts.iter().zip(displs) {
        let at = isize::try_from(displ).ok()?.checked_mul(step)?;
        all = all.union(Span::of(at, count, datatype)?);
    }
    Some(all)
}

/// The root's own block of a scatter (`count` x `datatype` at element
/// `displ` of `sendbuf`) into its receive buffer, now: MPI would have
/// written it before the call returned (nothing to do for
/// `MPI_IN_PLACE`). `None` when MPI failed to.
///
/// # Safety
///
/// The arguments are those of the root's scatter call.
pub unsafe fn own_block(
    sendbuf: *const c_void,
    displ: c_int,
    count: c_int,
    datatype: MPI_Datatype,
    recvbuf: *mut c_void,
    recvcount: c_int,
    recvtype: MPI_Datatype,
) -> Option<()> {
    if recvbuf == in_place() {
        return Some(());
    }
    let at = isize::try_from(displ)
        .ok()?
        .checked_mul(extent(datatype)?)?;
    let block = sendbuf.cast::<u8>().wrapping_offset(at).cast::<c_void>();
    // SAFETY: a copy between the program's buffers of its own call,
    // through the process's own communicator (no other rank sees it).
    let rc = unsafe {
        mpi_sys::PMPI_Sendrecv(
            block,
            count,
            datatype,
            0,
            0,
            recvbuf,
            recvcount,
            recvtype,
            0,
            0,
            comm_self(),
            status_ignore(),
        )
    };
    (rc == SUCCESS).then_some(())
}
