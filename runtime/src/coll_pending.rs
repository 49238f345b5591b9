//! Which buffers a rank's nonblocking collective hands MPI until its
//! request completes, for the access check ([`crate::access`]):
//! the buffer MPI reads (a write to it before the `Wait` is a
//! `buffer-reuse`, as for `MPI_Isend`) and the one it writes (any access is,
//! as for `MPI_Irecv`). MPI-4.1 §6.12: "the user must not modify, read or
//! write any buffer argument of a nonblocking collective until it
//! completes" (a send buffer may be read, §3.7.2's rule for sends).
//!
//! One function per nonblocking export of `wrap_coll.rs`, named and called
//! as the export is (its `collectives!` macro calls `coll_pending::$iname`
//! with the export's arguments). What a rank's call touches depends on the
//! collective and the root: `Igather` reads every rank's send buffer and
//! writes the root's receive buffer (`size * recvcount` elements);
//! `Ibcast` reads the root's buffer and writes the others'; with
//! `MPI_IN_PLACE` the receive buffer is both read and written, so it is
//! watched as a receive's. The `v` and `w` forms are watched over the hull
//! of their blocks (holes between blocks included, as a derived
//! datatype's, `buffer_check::address_range`).
//!
//! Collectives on an intercommunicator are not watched (their counts are
//! per rank of the remote group, and the roots are named otherwise).

// The functions take the MPI calls' arguments as they are.
#![allow(clippy::too_many_arguments)]

use crate::buffer_check::address_range;
use crate::consts::{in_place, SUCCESS};
use crate::pending::Pending;
use mpi_sys::{MPI_Aint, MPI_Comm, MPI_Datatype, MPI_Op};
use std::os::raw::{c_int, c_void};

/// A buffer: its bytes and what the program may not do to them.
pub type Watched = ((usize, usize), Pending);

/// The buffers of one call: at most one read and one written.
#[derive(Debug, Default, Clone, Copy)]
pub struct Buffers {
    list: [Option<Watched>; 2],
}

impl Buffers {
    /// The buffers, empty ranges left out.
    pub fn as_list(&self) -> impl Iterator<Item = Watched> + '_ {
        self.list.iter().flatten().copied()
    }

    /// `read` (unless in place) and `written`.
    fn of(read: Option<(usize, usize)>, written: Option<(usize, usize)>) -> Buffers {
        Buffers {
            list: [
                read.map(|r| (r, Pending::Send)),
                written.map(|w| (w, Pending::Recv)),
            ],
        }
    }
}

/// This rank and the size of `comm`, an intracommunicator; `None` else.
fn rank_size(comm: MPI_Comm) -> Option<(c_int, c_int)> {
    let (mut inter, mut rank, mut size): (c_int, c_int, c_int) = (0, -1, 0);
    // SAFETY: valid out-parameters; MPI judges the handle.
    let ok = unsafe {
        mpi_sys::PMPI_Comm_test_inter(comm, &mut inter) == SUCCESS
            && inter == 0
            && mpi_sys::PMPI_Comm_rank(comm, &mut rank) == SUCCESS
            && mpi_sys::PMPI_Comm_size(comm, &mut size) == SUCCESS
    };
    (ok && rank >= 0 && size > 0).then_some((rank, size))
}

/// Whether `buffer` is `MPI_IN_PLACE`.
fn is_in_place(buffer: *const c_void) -> bool {
    buffer.cast_mut() == in_place()
}

/// `count` elements of `datatype` at `buffer`, unless in place.
fn range(buffer: *const c_void, count: c_int, datatype: MPI_Datatype) -> Option<(usize, usize)> {
    if is_in_place(buffer) {
        return None;
    }
    address_range(buffer, count, datatype)
}

/// `blocks` of `n * count` elements (`None` on overflow).
fn times(n: c_int, count: c_int) -> c_int {
    n.checked_mul(count).unwrap_or(0)
}

/// The union (hull) of two ranges.
fn hull(a: Option<(usize, usize)>, b: Option<(usize, usize)>) -> Option<(usize, usize)> {
    match (a, b) {
        (Some(a), Some(b)) => Some((a.0.min(b.0), a.1.max(b.1))),
        (a, None) => a,
        (None, b) => b,
    }
}

/// The hull of the `n` blocks `counts[i]` elements of `datatype` at
/// `buffer + displs[i] * unit(i)` bytes (`unit`: the datatype's extent for
/// the `v` forms, 1 for `Alltoallw`'s byte displacements), with a datatype
/// per block (`datatype(i)`).
///
/// # Safety
///
/// `counts` and `displs` hold `n` entries each (MPI's rule), or are null.
unsafe fn blocks(
    buffer: *const c_void,
    n: c_int,
    counts: *const c_int,
    displs: *const c_int,
    unit: impl Fn(MPI_Datatype) -> Option<MPI_Aint>,
    datatype: impl Fn(usize) -> Option<MPI_Datatype>,
) -> Option<(usize, usize)> {
    if is_in_place(buffer) || counts.is_null() || displs.is_null() {
        return None;
    }
    let n = usize::try_from(n).ok()?;
    // SAFETY: the caller's contract.
    let (counts, displs) = unsafe {
        (
            std::slice::from_raw_parts(counts, n),
            std::slice::from_raw_parts(displs, n),
        )
    };
    let mut all = None;
    for (i, (&count, &displ)) in counts.iter().zip(displs).enumerate() {
        let Some(datatype) = datatype(i) else {
            continue;
        };
        let Some(offset) = unit(datatype).and_then(|u| u.checked_mul(displ as MPI_Aint)) else {
            continue;
        };
        let at = buffer.cast::<u8>().wrapping_offset(offset as isize).cast();
        all = hull(all, address_range(at, count, datatype));
    }
    all
}

/// The extent of `datatype`.
fn extent(datatype: MPI_Datatype) -> Option<MPI_Aint> {
    let (mut lb, mut extent): (MPI_Aint, MPI_Aint) = (0, 0);
    // SAFETY: valid out-parameters; MPI judges the handle.
    let rc = unsafe { mpi_sys::PMPI_Type_get_extent(datatype, &mut lb, &mut extent) };
    (rc == SUCCESS).then_some(extent)
}

/// The `v` form's blocks of one `datatype` (displacements in extents).
///
/// # Safety
///
/// As [`blocks`].
unsafe fn blocks_v(
    buffer: *const c_void,
    n: c_int,
    counts: *const c_int,
    displs: *const c_int,
    datatype: MPI_Datatype,
) -> Option<(usize, usize)> {
    // SAFETY: the caller's contract.
    unsafe { blocks(buffer, n, counts, displs, extent, |_| Some(datatype)) }
}

/// `MPI_Ibarrier`: no buffer.
pub fn ibarrier(_comm: MPI_Comm) -> Buffers {
    Buffers::default()
}

/// `MPI_Ibcast`: the root's buffer is read, the others' written.
pub fn ibcast(
    buffer: *mut c_void,
    count: c_int,
    datatype: MPI_Datatype,
    root: c_int,
    comm: MPI_Comm,
) -> Buffers {
    let Some((me, _)) = rank_size(comm) else {
        return Buffers::default();
    };
    let at = range(buffer, count, datatype);
    if me == root {
        Buffers::of(at, None)
    } else {
        Buffers::of(None, at)
    }
}

/// A reduction to every rank (`Iallreduce`, `Iscan`, `Iexscan`): the send
/// buffer read, the receive buffer written (read too when in place).
fn reduction(
    sendbuf: *const c_void,
    recvbuf: *mut c_void,
    count: c_int,
    datatype: MPI_Datatype,
    comm: MPI_Comm,
) -> Buffers {
    if rank_size(comm).is_none() {
        return Buffers::default();
    }
    Buffers::of(
        range(sendbuf, count, datatype),
        range(recvbuf, count, datatype),
    )
}

/// `MPI_Ireduce`: every rank's send buffer read, the root's receive buffer
/// written.
pub fn ireduce(
    sendbuf: *const c_void,
    recvbuf: *mut c_void,
    count: c_int,
    datatype: MPI_Datatype,
    _op: MPI_Op,
    root: c_int,
    comm: MPI_Comm,
) -> Buffers {
    let Some((me, _)) = rank_size(comm) else {
        return Buffers::default();
    };
    let written = (me == root).then(|| range(recvbuf, count, datatype));
    Buffers::of(range(sendbuf, count, datatype), written.flatten())
}

/// `MPI_Iallreduce`.
pub fn iallreduce(
    sendbuf: *const c_void,
    recvbuf: *mut c_void,
    count: c_int,
    datatype: MPI_Datatype,
    _op: MPI_Op,
    comm: MPI_Comm,
) -> Buffers {
    reduction(sendbuf, recvbuf, count, datatype, comm)
}

/// `MPI_Iscan`.
pub fn iscan(
    sendbuf: *const c_void,
    recvbuf: *mut c_void,
    count: c_int,
    datatype: MPI_Datatype,
    _op: MPI_Op,
    comm: MPI_Comm,
) -> Buffers {
    reduction(sendbuf, recvbuf, count, datatype, comm)
}

/// `MPI_Iexscan` (rank 0's receive buffer is left undefined, so it is
/// MPI's too until the request completes).
pub fn iexscan(
    sendbuf: *const c_void,
    recvbuf: *mut c_void,
    count: c_int,
    datatype: MPI_Datatype,
    _op: MPI_Op,
    comm: MPI_Comm,
) -> Buffers {
    reduction(sendbuf, recvbuf, count, datatype, comm)
}

/// `MPI_Ireduce_scatter_block`: `size * recvcount` elements read, one
/// block written; in place, the whole receive buffer both.
pub fn ireduce_scatter_block(
    sendbuf: *const c_void,
    recvbuf: *mut c_void,
    recvcount: c_int,
    datatype: MPI_Datatype,
    _op: MPI_Op,
    comm: MPI_Comm,
) -> Buffers {
    let Some((_, n)) = rank_size(comm) else {
        return Buffers::default();
    };
    let all = times(n, recvcount);
    if is_in_place(sendbuf) {
        return Buffers::of(None, range(recvbuf, all, datatype));
    }
    Buffers::of(
        range(sendbuf, all, datatype),
        range(recvbuf, recvcount, datatype),
    )
}

/// `MPI_Ireduce_scatter`: the sum of the counts read, this rank's count
/// written; in place, the whole receive buffer both.
pub fn ireduce_scatter(
    sendbuf: *const c_void,
    recvbuf: *mut c_void,
    recvcounts: *const c_int,
    datatype: MPI_Datatype,
    _op: MPI_Op,
    comm: MPI_Comm,
) -> Buffers {
    let Some((me, n)) = rank_size(comm) else {
        return Buffers::default();
    };
    if recvcounts.is_null() {
        return Buffers::default();
    }
    // SAFETY: MPI requires one count per rank of the communicator.
    let counts = unsafe { std::slice::from_raw_parts(recvcounts, n as usize) };
    let all = counts.iter().fold(0, |a: c_int, &c| a.saturating_add(c));
    if is_in_place(sendbuf) {
        return Buffers::of(None, range(recvbuf, all, datatype));
    }
    Buffers::of(
        range(sendbuf, all, datatype),
        range(recvbuf, counts[me as usize], datatype),
    )
}

/// `MPI_Igather`: every rank's send buffer read (the root's unless in
/// place), the root's `size * recvcount` written.
pub fn igather(
    sendbuf: *const c_void,
    sendcount: c_int,
    sendtype: MPI_Datatype,
    recvbuf: *mut c_void,
    recvcount: c_int,
    recvtype: MPI_Datatype,
    root: c_int,
    comm: MPI_Comm,
) -> Buffers {
    let Some((me, n)) = rank_size(comm) else {
        return Buffers::default();
    };
    let written = (me == root).then(|| range(recvbuf, times(n, recvcount), recvtype));
    Buffers::of(range(sendbuf, sendcount, sendtype), written.flatten())
}

/// `MPI_Iscatter`: the root's `size * sendcount` read, every rank's
/// receive buffer written (the root's unless in place).
pub fn iscatter(
    sendbuf: *const c_void,
    sendcount: c_int,
    sendtype: MPI_Datatype,
    recvbuf: *mut c_void,
    recvcount: c_int,
    recvtype: MPI_Datatype,
    root: c_int,
    comm: MPI_Comm,
) -> Buffers {
    let Some((me, n)) = rank_size(comm) else {
        return Buffers::default();
    };
    let read = (me == root).then(|| range(sendbuf, times(n, sendcount), sendtype));
    Buffers::of(read.flatten(), range(recvbuf, recvcount, recvtype))
}

/// `MPI_Iallgather`: the send block read, `size * recvcount` written.
pub fn iallgather(
    sendbuf: *const c_void,
    sendcount: c_int,
    sendtype: MPI_Datatype,
    recvbuf: *mut c_void,
    recvcount: c_int,
    recvtype: MPI_Datatype,
    comm: MPI_Comm,
) -> Buffers {
    let Some((_, n)) = rank_size(comm) else {
        return Buffers::default();
    };
    Buffers::of(
        range(sendbuf, sendcount, sendtype),
        range(recvbuf, times(n, recvcount), recvtype),
    )
}

/// `MPI_Ialltoall`: `size` blocks read, `size` written.
pub fn ialltoall(
    sendbuf: *const c_void,
    sendcount: c_int,
    sendtype: MPI_Datatype,
    recvbuf: *mut c_void,
    recvcount: c_int,
    recvtype: MPI_Datatype,
    comm: MPI_Comm,
) -> Buffers {
    let Some((_, n)) = rank_size(comm) else {
        return Buffers::default();
    };
    Buffers::of(
        range(sendbuf, times(n, sendcount), sendtype),
        range(recvbuf, times(n, recvcount), recvtype),
    )
}

/// `MPI_Igatherv`: as [`igather`], the root's blocks where its counts and
/// displacements put them.
pub fn igatherv(
    sendbuf: *const c_void,
    sendcount: c_int,
    sendtype: MPI_Datatype,
    recvbuf: *mut c_void,
    recvcounts: *const c_int,
    displs: *const c_int,
    recvtype: MPI_Datatype,
    root: c_int,
    comm: MPI_Comm,
) -> Buffers {
    let Some((me, n)) = rank_size(comm) else {
        return Buffers::default();
    };
    // SAFETY: at the root, MPI requires one count and displacement per rank.
    let written =
        (me == root).then(|| unsafe { blocks_v(recvbuf, n, recvcounts, displs, recvtype) });
    Buffers::of(range(sendbuf, sendcount, sendtype), written.flatten())
}

/// `MPI_Iscatterv`: as [`iscatter`], the root's blocks where its counts
/// and displacements put them.
pub fn iscatterv(
    sendbuf: *const c_void,
    sendcounts: *const c_int,
    displs: *const c_int,
    sendtype: MPI_Datatype,
    recvbuf: *mut c_void,
    recvcount: c_int,
    recvtype: MPI_Datatype,
    root: c_int,
    comm: MPI_Comm,
) -> Buffers {
    let Some((me, n)) = rank_size(comm) else {
        return Buffers::default();
    };
    // SAFETY: at the root, MPI requires one count and displacement per rank.
    let read = (me == root).then(|| unsafe { blocks_v(sendbuf, n, sendcounts, displs, sendtype) });
    Buffers::of(read.flatten(), range(recvbuf, recvcount, recvtype))
}

/// `MPI_Iallgatherv`: the send block read, every rank's block written.
pub fn iallgatherv(
    sendbuf: *const c_void,
    sendcount: c_int,
    sendtype: MPI_Datatype,
    recvbuf: *mut c_void,
    recvcounts: *const c_int,
    displs: *const c_int,
    recvtype: MPI_Datatype,
    comm: MPI_Comm,
) -> Buffers {
    let Some((_, n)) = rank_size(comm) else {
        return Buffers::default();
    };
    // SAFETY: MPI requires one count and displacement per rank.
    let written = unsafe { blocks_v(recvbuf, n, recvcounts, displs, recvtype) };
    Buffers::of(range(sendbuf, sendcount, sendtype), written)
}

/// `MPI_Ialltoallv`: the blocks sent read, the blocks received written.
pub fn ialltoallv(
    sendbuf: *const c_void,
    sendcounts: *const c_int,
    sdispls: *const c_int,
    sendtype: MPI_Datatype,
    recvbuf: *mut c_void,
    recvcounts: *const c_int,
    rdispls: *const c_int,
    recvtype: MPI_Datatype,
    comm: MPI_Comm,
) -> Buffers {
    let Some((_, n)) = rank_size(comm) else {
        return Buffers::default();
    };
    // SAFETY: MPI requires one count and displacement per rank.
    unsafe {
        Buffers::of(
            blocks_v(sendbuf, n, sendcounts, sdispls, sendtype),
            blocks_v(recvbuf, n, recvcounts, rdispls, recvtype),
        )
    }
}

/// `MPI_Ialltoallw`: as [`ialltoallv`], with a datatype per block and
/// displacements in bytes.
pub fn ialltoallw(
    sendbuf: *const c_void,
    sendcounts: *const c_int,
    sdispls: *const c_int,
    sendtypes: *const MPI_Datatype,
    recvbuf: *mut c_void,
    recvcounts: *const c_int,
    rdispls: *const c_int,
    recvtypes: *const MPI_Datatype,
    comm: MPI_Comm,
) -> Buffers {
    let Some((_, n)) = rank_size(comm) else {
        return Buffers::default();
    };
    let byte = |_| Some(1);
    let type_of = |types: *const MPI_Datatype| {
        move |i: usize| {
            // SAFETY: MPI requires one datatype per rank; `i < n`.
            (!types.is_null()).then(|| unsafe { *types.add(i) })
        }
    };
    // SAFETY: MPI requires one count and displacement per rank.
    unsafe {
        Buffers::of(
            blocks(sendbuf, n, sendcounts, sdispls, byte, type_of(sendtypes)),
            blocks(recvbuf, n, recvcounts, rdispls, byte, type_of(recvtypes)),
        )
    }
}
