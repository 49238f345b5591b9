//! The bodies of the collective `MPI_*` exports listed in `lib.rs`
//! (blocking and nonblocking): each forwards to `PMPI_*` untouched while
//! the runtime is off; otherwise it describes the call ([`Coll`]: record
//! kind, root, what the rank contributes to the collective signature check)
//! and hands it to [`Rt::collective`](crate::engine::Rt::collective) with
//! the call's nonblocking form, or to
//! [`Rt::icollective`](crate::engine::Rt::icollective). The clocks follow
//! the kind's [`DataFlow`](mbh_trace::op::DataFlow) (`engine/coll.rs`).
//!
//! Records: `peer` = root (0 when none), `comm`, `count` = the send count
//! (`Scatterv`: the receive count; `Reduce_scatter_block`: the receive
//! count; 0 for `Reduce_scatter`, `Alltoallv`, `Alltoallw`), `aux` = the
//! send datatype (0 when none or per rank); nonblocking ones also `request`
//! = the request handle.
//!
//! The signature word each rank contributes (MPI-3.1 §5: where the standard
//! requires equal type signatures): the data of `Bcast` and the reductions
//! (`Reduce_scatter`: the sum of the receive counts); for `Gather` what a
//! non-root sends and what the root receives per rank (`Scatter`: the
//! reverse); for `Allgather`/`Alltoall` one block received, or a value of
//! its own when the rank's send block differs from it. The `v`/`w` forms
//! are checked for kind and root only.

#![allow(clippy::too_many_arguments)]

use crate::consts::{in_place, SUCCESS};
use crate::engine::{Coll, Rt};
use crate::state::{self, active};
use mbh_trace::OpKind;
use mpi_sys::{MPI_Comm, MPI_Datatype, MPI_Op, MPI_Request};
use std::os::raw::{c_int, c_void};

/// A datatype handle stored as 0 in records of calls without one.
fn null_type() -> MPI_Datatype {
    // SAFETY: a plain handle newtype; only its bits are recorded.
    unsafe { std::mem::zeroed() }
}

/// This process's rank in `comm` (-1 when MPI cannot say).
fn rank_in(comm: MPI_Comm) -> c_int {
    let mut rank: c_int = -1;
    // SAFETY: a valid out-parameter; MPI judges the handle.
    if unsafe { mpi_sys::PMPI_Comm_rank(comm, &mut rank) } != SUCCESS {
        return -1;
    }
    rank
}

/// The signature word of a rooted exchange: what the root handles per rank
/// (`at_root`) at the root, what a non-root contributes elsewhere.
fn rooted_word(
    rt: &mut Rt,
    comm: MPI_Comm,
    root: c_int,
    other: (c_int, MPI_Datatype),
    at_root: (c_int, MPI_Datatype),
) -> u64 {
    let (count, datatype) = if rank_in(comm) == root {
        at_root
    } else {
        other
    };
    rt.data_word(count, datatype)
}

/// The signature word of `Allgather`/`Alltoall`: one received block, or a
/// word of its own when the rank's send block has another signature.
fn block_word(
    rt: &mut Rt,
    sendbuf: *const c_void,
    send: (c_int, MPI_Datatype),
    recv: (c_int, MPI_Datatype),
) -> u64 {
    let received = rt.data_word(recv.0, recv.1);
    if sendbuf.cast_mut() == in_place() {
        return received;
    }
    let sent = rt.data_word(send.0, send.1);
    if sent == received {
        received
    } else {
        crate::typesig::code(sent ^ 0x5e4d_0000_0000_0001)
    }
}

/// The sum of the `Reduce_scatter` receive counts (one per rank of `comm`).
fn total(recvcounts: *const c_int, comm: MPI_Comm) -> c_int {
    let mut size: c_int = 0;
    // SAFETY: a valid out-parameter; MPI judges the handle.
    if recvcounts.is_null() || unsafe { mpi_sys::PMPI_Comm_size(comm, &mut size) } != SUCCESS {
        return 0;
    }
    let n = usize::try_from(size).unwrap_or(0);
    // SAFETY: MPI requires one count per rank of the communicator.
    let counts = unsafe { std::slice::from_raw_parts(recvcounts, n) };
    counts.iter().fold(0, |a: c_int, &c| a.wrapping_add(c))
}

pub(crate) unsafe fn barrier(comm: MPI_Comm) -> c_int {
    if !active() {
        // SAFETY: the caller's arguments, passed on unchanged.
        return unsafe { mpi_sys::PMPI_Barrier(comm) };
    }
    state::with(|rt| {
        let c = Coll {
            kind: OpKind::Barrier,
            comm,
            root: 0,
            count: 0,
            datatype: null_type(),
            data: 0,
        };
        // SAFETY: the nonblocking form of the caller's call.
        let start = |request| unsafe { mpi_sys::PMPI_Ibarrier(comm, request) };
        // SAFETY: as above.
        unsafe { rt.collective(c, start) }
    })
}

pub(crate) unsafe fn ibarrier(comm: MPI_Comm, request: *mut MPI_Request) -> c_int {
    if !active() {
        // SAFETY: the caller's arguments, passed on unchanged.
        return unsafe { mpi_sys::PMPI_Ibarrier(comm, request) };
    }
    state::with(|rt| {
        let c = Coll {
            kind: OpKind::Ibarrier,
            comm,
            root: 0,
            count: 0,
            datatype: null_type(),
            data: 0,
        };
        // SAFETY: the caller's call.
        let start = || unsafe { mpi_sys::PMPI_Ibarrier(comm, request) };
        // SAFETY: as above.
        unsafe { rt.icollective(c, request, start) }
    })
}

pub(crate) unsafe fn bcast(
    buffer: *mut c_void,
    count: c_int,
    datatype: MPI_Datatype,
    root: c_int,
    comm: MPI_Comm,
) -> c_int {
    if !active() {
        // SAFETY: the caller's arguments, passed on unchanged.
        return unsafe { mpi_sys::PMPI_Bcast(buffer, count, datatype, root, comm) };
    }
    state::with(|rt| {
        let c = Coll {
            kind: OpKind::Bcast,
            comm,
            root,
            count,
            datatype,
            data: rt.data_word(count, datatype),
        };
        // SAFETY: the nonblocking form of the caller's call.
        let start =
            |request| unsafe { mpi_sys::PMPI_Ibcast(buffer, count, datatype, root, comm, request) };
        // SAFETY: as above.
        unsafe { rt.collective(c, start) }
    })
}

pub(crate) unsafe fn ibcast(
    buffer: *mut c_void,
    count: c_int,
    datatype: MPI_Datatype,
    root: c_int,
    comm: MPI_Comm,
    request: *mut MPI_Request,
) -> c_int {
    if !active() {
        // SAFETY: the caller's arguments, passed on unchanged.
        return unsafe { mpi_sys::PMPI_Ibcast(buffer, count, datatype, root, comm, request) };
    }
    state::with(|rt| {
        let c = Coll {
            kind: OpKind::Ibcast,
            comm,
            root,
            count,
            datatype,
            data: rt.data_word(count, datatype),
        };
        // SAFETY: the caller's call.
        let start =
            || unsafe { mpi_sys::PMPI_Ibcast(buffer, count, datatype, root, comm, request) };
        // SAFETY: as above.
        unsafe { rt.icollective(c, request, start) }
    })
}

pub(crate) unsafe fn reduce(
    sendbuf: *const c_void,
    recvbuf: *mut c_void,
    count: c_int,
    datatype: MPI_Datatype,
    op: MPI_Op,
    root: c_int,
    comm: MPI_Comm,
) -> c_int {
    if !active() {
        // SAFETY: the caller's arguments, passed on unchanged.
        return unsafe { mpi_sys::PMPI_Reduce(sendbuf, recvbuf, count, datatype, op, root, comm) };
    }
    state::with(|rt| {
        let c = Coll {
            kind: OpKind::Reduce,
            comm,
            root,
            count,
            datatype,
            data: rt.data_word(count, datatype),
        };
        // SAFETY: the nonblocking form of the caller's call.
        let start = |request| unsafe {
            mpi_sys::PMPI_Ireduce(sendbuf, recvbuf, count, datatype, op, root, comm, request)
        };
        // SAFETY: as above.
        unsafe { rt.collective(c, start) }
    })
}

pub(crate) unsafe fn ireduce(
    sendbuf: *const c_void,
    recvbuf: *mut c_void,
    count: c_int,
    datatype: MPI_Datatype,
    op: MPI_Op,
    root: c_int,
    comm: MPI_Comm,
    request: *mut MPI_Request,
) -> c_int {
    if !active() {
        // SAFETY: the caller's arguments, passed on unchanged.
        return unsafe {
            mpi_sys::PMPI_Ireduce(sendbuf, recvbuf, count, datatype, op, root, comm, request)
        };
    }
    state::with(|rt| {
        let c = Coll {
            kind: OpKind::Ireduce,
            comm,
            root,
            count,
            datatype,
            data: rt.data_word(count, datatype),
        };
        // SAFETY: the caller's call.
        let start = || unsafe {
            mpi_sys::PMPI_Ireduce(sendbuf, recvbuf, count, datatype, op, root, comm, request)
        };
        // SAFETY: as above.
        unsafe { rt.icollective(c, request, start) }
    })
}

pub(crate) unsafe fn allreduce(
    sendbuf: *const c_void,
    recvbuf: *mut c_void,
    count: c_int,
    datatype: MPI_Datatype,
    op: MPI_Op,
    comm: MPI_Comm,
) -> c_int {
    if !active() {
        // SAFETY: the caller's arguments, passed on unchanged.
        return unsafe { mpi_sys::PMPI_Allreduce(sendbuf, recvbuf, count, datatype, op, comm) };
    }
    state::with(|rt| {
        let c = Coll {
            kind: OpKind::Allreduce,
            comm,
            root: 0,
            count,
            datatype,
            data: rt.data_word(count, datatype),
        };
        // SAFETY: the nonblocking form of the caller's call.
        let start = |request| unsafe {
            mpi_sys::PMPI_Iallreduce(sendbuf, recvbuf, count, datatype, op, comm, request)
        };
        // SAFETY: as above.
        unsafe { rt.collective(c, start) }
    })
}

pub(crate) unsafe fn iallreduce(
    sendbuf: *const c_void,
    recvbuf: *mut c_void,
    count: c_int,
    datatype: MPI_Datatype,
    op: MPI_Op,
    comm: MPI_Comm,
    request: *mut MPI_Request,
) -> c_int {
    if !active() {
        // SAFETY: the caller's arguments, passed on unchanged.
        return unsafe {
            mpi_sys::PMPI_Iallreduce(sendbuf, recvbuf, count, datatype, op, comm, request)
        };
    }
    state::with(|rt| {
        let c = Coll {
            kind: OpKind::Iallreduce,
            comm,
            root: 0,
            count,
            datatype,
            data: rt.data_word(count, datatype),
        };
        // SAFETY: the caller's call.
        let start = || unsafe {
            mpi_sys::PMPI_Iallreduce(sendbuf, recvbuf, count, datatype, op, comm, request)
        };
        // SAFETY: as above.
        unsafe { rt.icollective(c, request, start) }
    })
}

pub(crate) unsafe fn scan(
    sendbuf: *const c_void,
    recvbuf: *mut c_void,
    count: c_int,
    datatype: MPI_Datatype,
    op: MPI_Op,
    comm: MPI_Comm,
) -> c_int {
    if !active() {
        // SAFETY: the caller's arguments, passed on unchanged.
        return unsafe { mpi_sys::PMPI_Scan(sendbuf, recvbuf, count, datatype, op, comm) };
    }
    state::with(|rt| {
        let c = Coll {
            kind: OpKind::Scan,
            comm,
            root: 0,
            count,
            datatype,
            data: rt.data_word(count, datatype),
        };
        // SAFETY: the nonblocking form of the caller's call.
        let start = |request| unsafe {
            mpi_sys::PMPI_Iscan(sendbuf, recvbuf, count, datatype, op, comm, request)
        };
        // SAFETY: as above.
        unsafe { rt.collective(c, start) }
    })
}

pub(crate) unsafe fn iscan(
    sendbuf: *const c_void,
    recvbuf: *mut c_void,
    count: c_int,
    datatype: MPI_Datatype,
    op: MPI_Op,
    comm: MPI_Comm,
    request: *mut MPI_Request,
) -> c_int {
    if !active() {
        // SAFETY: the caller's arguments, passed on unchanged.
        return unsafe {
            mpi_sys::PMPI_Iscan(sendbuf, recvbuf, count, datatype, op, comm, request)
        };
    }
    state::with(|rt| {
        let c = Coll {
            kind: OpKind::Iscan,
            comm,
            root: 0,
            count,
            datatype,
            data: rt.data_word(count, datatype),
        };
        // SAFETY: the caller's call.
        let start =
            || unsafe { mpi_sys::PMPI_Iscan(sendbuf, recvbuf, count, datatype, op, comm, request) };
        // SAFETY: as above.
        unsafe { rt.icollective(c, request, start) }
    })
}

pub(crate) unsafe fn exscan(
    sendbuf: *const c_void,
    recvbuf: *mut c_void,
    count: c_int,
    datatype: MPI_Datatype,
    op: MPI_Op,
    comm: MPI_Comm,
) -> c_int {
    if !active() {
        // SAFETY: the caller's arguments, passed on unchanged.
        return unsafe { mpi_sys::PMPI_Exscan(sendbuf, recvbuf, count, datatype, op, comm) };
    }
    state::with(|rt| {
        let c = Coll {
            kind: OpKind::Exscan,
            comm,
            root: 0,
            count,
            datatype,
            data: rt.data_word(count, datatype),
        };
        // SAFETY: the nonblocking form of the caller's call.
        let start = |request| unsafe {
            mpi_sys::PMPI_Iexscan(sendbuf, recvbuf, count, datatype, op, comm, request)
        };
        // SAFETY: as above.
        unsafe { rt.collective(c, start) }
    })
}

pub(crate) unsafe fn iexscan(
    sendbuf: *const c_void,
    recvbuf: *mut c_void,
    count: c_int,
    datatype: MPI_Datatype,
    op: MPI_Op,
    comm: MPI_Comm,
    request: *mut MPI_Request,
) -> c_int {
    if !active() {
        // SAFETY: the caller's arguments, passed on unchanged.
        return unsafe {
            mpi_sys::PMPI_Iexscan(sendbuf, recvbuf, count, datatype, op, comm, request)
        };
    }
    state::with(|rt| {
        let c = Coll {
            kind: OpKind::Iexscan,
            comm,
            root: 0,
            count,
            datatype,
            data: rt.data_word(count, datatype),
        };
        // SAFETY: the caller's call.
        let start = || unsafe {
            mpi_sys::PMPI_Iexscan(sendbuf, recvbuf, count, datatype, op, comm, request)
        };
        // SAFETY: as above.
        unsafe { rt.icollective(c, request, start) }
    })
}

pub(crate) unsafe fn reduce_scatter_block(
    sendbuf: *const c_void,
    recvbuf: *mut c_void,
    recvcount: c_int,
    datatype: MPI_Datatype,
    op: MPI_Op,
    comm: MPI_Comm,
) -> c_int {
    if !active() {
        // SAFETY: the caller's arguments, passed on unchanged.
        return unsafe {
            mpi_sys::PMPI_Reduce_scatter_block(sendbuf, recvbuf, recvcount, datatype, op, comm)
        };
    }
    state::with(|rt| {
        let c = Coll {
            kind: OpKind::ReduceScatterBlock,
            comm,
            root: 0,
            count: recvcount,
            datatype,
            data: rt.data_word(recvcount, datatype),
        };
        // SAFETY: the nonblocking form of the caller's call.
        let start = |request| unsafe {
            mpi_sys::PMPI_Ireduce_scatter_block(
                sendbuf, recvbuf, recvcount, datatype, op, comm, request,
            )
        };
        // SAFETY: as above.
        unsafe { rt.collective(c, start) }
    })
}

pub(crate) unsafe fn ireduce_scatter_block(
    sendbuf: *const c_void,
    recvbuf: *mut c_void,
    recvcount: c_int,
    datatype: MPI_Datatype,
    op: MPI_Op,
    comm: MPI_Comm,
    request: *mut MPI_Request,
) -> c_int {
    if !active() {
        // SAFETY: the caller's arguments, passed on unchanged.
        return unsafe {
            mpi_sys::PMPI_Ireduce_scatter_block(
                sendbuf, recvbuf, recvcount, datatype, op, comm, request,
            )
        };
    }
    state::with(|rt| {
        let c = Coll {
            kind: OpKind::IreduceScatterBlock,
            comm,
            root: 0,
            count: recvcount,
            datatype,
            data: rt.data_word(recvcount, datatype),
        };
        // SAFETY: the caller's call.
        let start = || unsafe {
            mpi_sys::PMPI_Ireduce_scatter_block(
                sendbuf, recvbuf, recvcount, datatype, op, comm, request,
            )
        };
        // SAFETY: as above.
        unsafe { rt.icollective(c, request, start) }
    })
}

pub(crate) unsafe fn reduce_scatter(
    sendbuf: *const c_void,
    recvbuf: *mut c_void,
    recvcounts: *const c_int,
    datatype: MPI_Datatype,
    op: MPI_Op,
    comm: MPI_Comm,
) -> c_int {
    if !active() {
        // SAFETY: the caller's arguments, passed on unchanged.
        return unsafe {
            mpi_sys::PMPI_Reduce_scatter(sendbuf, recvbuf, recvcounts, datatype, op, comm)
        };
    }
    state::with(|rt| {
        let c = Coll {
            kind: OpKind::ReduceScatter,
            comm,
            root: 0,
            count: 0,
            datatype,
            data: rt.data_word(total(recvcounts, comm), datatype),
        };
        // SAFETY: the nonblocking form of the caller's call.
        let start = |request| unsafe {
            mpi_sys::PMPI_Ireduce_scatter(sendbuf, recvbuf, recvcounts, datatype, op, comm, request)
        };
        // SAFETY: as above.
        unsafe { rt.collective(c, start) }
    })
}

pub(crate) unsafe fn ireduce_scatter(
    sendbuf: *const c_void,
    recvbuf: *mut c_void,
    recvcounts: *const c_int,
    datatype: MPI_Datatype,
    op: MPI_Op,
    comm: MPI_Comm,
    request: *mut MPI_Request,
) -> c_int {
    if !active() {
        // SAFETY: the caller's arguments, passed on unchanged.
        return unsafe {
            mpi_sys::PMPI_Ireduce_scatter(sendbuf, recvbuf, recvcounts, datatype, op, comm, request)
        };
    }
    state::with(|rt| {
        let c = Coll {
            kind: OpKind::IreduceScatter,
            comm,
            root: 0,
            count: 0,
            datatype,
            data: rt.data_word(total(recvcounts, comm), datatype),
        };
        // SAFETY: the caller's call.
        let start = || unsafe {
            mpi_sys::PMPI_Ireduce_scatter(sendbuf, recvbuf, recvcounts, datatype, op, comm, request)
        };
        // SAFETY: as above.
        unsafe { rt.icollective(c, request, start) }
    })
}

pub(crate) unsafe fn gather(
    sendbuf: *const c_void,
    sendcount: c_int,
    sendtype: MPI_Datatype,
    recvbuf: *mut c_void,
    recvcount: c_int,
    recvtype: MPI_Datatype,
    root: c_int,
    comm: MPI_Comm,
) -> c_int {
    if !active() {
        // SAFETY: the caller's arguments, passed on unchanged.
        return unsafe {
            mpi_sys::PMPI_Gather(
                sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm,
            )
        };
    }
    state::with(|rt| {
        let c = Coll {
            kind: OpKind::Gather,
            comm,
            root,
            count: sendcount,
            datatype: sendtype,
            data: rooted_word(rt, comm, root, (sendcount, sendtype), (recvcount, recvtype)),
        };
        // SAFETY: the nonblocking form of the caller's call.
        let start = |request| unsafe {
            mpi_sys::PMPI_Igather(
                sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm, request,
            )
        };
        // SAFETY: as above.
        unsafe { rt.collective(c, start) }
    })
}

pub(crate) unsafe fn igather(
    sendbuf: *const c_void,
    sendcount: c_int,
    sendtype: MPI_Datatype,
    recvbuf: *mut c_void,
    recvcount: c_int,
    recvtype: MPI_Datatype,
    root: c_int,
    comm: MPI_Comm,
    request: *mut MPI_Request,
) -> c_int {
    if !active() {
        // SAFETY: the caller's arguments, passed on unchanged.
        return unsafe {
            mpi_sys::PMPI_Igather(
                sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm, request,
            )
        };
    }
    state::with(|rt| {
        let c = Coll {
            kind: OpKind::Igather,
            comm,
            root,
            count: sendcount,
            datatype: sendtype,
            data: rooted_word(rt, comm, root, (sendcount, sendtype), (recvcount, recvtype)),
        };
        // SAFETY: the caller's call.
        let start = || unsafe {
            mpi_sys::PMPI_Igather(
                sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm, request,
            )
        };
        // SAFETY: as above.
        unsafe { rt.icollective(c, request, start) }
    })
}

pub(crate) unsafe fn scatter(
    sendbuf: *const c_void,
    sendcount: c_int,
    sendtype: MPI_Datatype,
    recvbuf: *mut c_void,
    recvcount: c_int,
    recvtype: MPI_Datatype,
    root: c_int,
    comm: MPI_Comm,
) -> c_int {
    if !active() {
        // SAFETY: the caller's arguments, passed on unchanged.
        return unsafe {
            mpi_sys::PMPI_Scatter(
                sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm,
            )
        };
    }
    state::with(|rt| {
        let c = Coll {
            kind: OpKind::Scatter,
            comm,
            root,
            count: sendcount,
            datatype: sendtype,
            data: rooted_word(rt, comm, root, (recvcount, recvtype), (sendcount, sendtype)),
        };
        // SAFETY: the nonblocking form of the caller's call.
        let start = |request| unsafe {
            mpi_sys::PMPI_Iscatter(
                sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm, request,
            )
        };
        // SAFETY: as above.
        unsafe { rt.collective(c, start) }
    })
}

pub(crate) unsafe fn iscatter(
    sendbuf: *const c_void,
    sendcount: c_int,
    sendtype: MPI_Datatype,
    recvbuf: *mut c_void,
    recvcount: c_int,
    recvtype: MPI_Datatype,
    root: c_int,
    comm: MPI_Comm,
    request: *mut MPI_Request,
) -> c_int {
    if !active() {
        // SAFETY: the caller's arguments, passed on unchanged.
        return unsafe {
            mpi_sys::PMPI_Iscatter(
                sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm, request,
            )
        };
    }
    state::with(|rt| {
        let c = Coll {
            kind: OpKind::Iscatter,
            comm,
            root,
            count: sendcount,
            datatype: sendtype,
            data: rooted_word(rt, comm, root, (recvcount, recvtype), (sendcount, sendtype)),
        };
        // SAFETY: the caller's call.
        let start = || unsafe {
            mpi_sys::PMPI_Iscatter(
                sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm, request,
            )
        };
        // SAFETY: as above.
        unsafe { rt.icollective(c, request, start) }
    })
}

pub(crate) unsafe fn allgather(
    sendbuf: *const c_void,
    sendcount: c_int,
    sendtype: MPI_Datatype,
    recvbuf: *mut c_void,
    recvcount: c_int,
    recvtype: MPI_Datatype,
    comm: MPI_Comm,
) -> c_int {
    if !active() {
        // SAFETY: the caller's arguments, passed on unchanged.
        return unsafe {
            mpi_sys::PMPI_Allgather(
                sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm,
            )
        };
    }
    state::with(|rt| {
        let c = Coll {
            kind: OpKind::Allgather,
            comm,
            root: 0,
            count: sendcount,
            datatype: sendtype,
            data: block_word(rt, sendbuf, (sendcount, sendtype), (recvcount, recvtype)),
        };
        // SAFETY: the nonblocking form of the caller's call.
        let start = |request| unsafe {
            mpi_sys::PMPI_Iallgather(
                sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, request,
            )
        };
        // SAFETY: as above.
        unsafe { rt.collective(c, start) }
    })
}

pub(crate) unsafe fn iallgather(
    sendbuf: *const c_void,
    sendcount: c_int,
    sendtype: MPI_Datatype,
    recvbuf: *mut c_void,
    recvcount: c_int,
    recvtype: MPI_Datatype,
    comm: MPI_Comm,
    request: *mut MPI_Request,
) -> c_int {
    if !active() {
        // SAFETY: the caller's arguments, passed on unchanged.
        return unsafe {
            mpi_sys::PMPI_Iallgather(
                sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, request,
            )
        };
    }
    state::with(|rt| {
        let c = Coll {
            kind: OpKind::Iallgather,
            comm,
            root: 0,
            count: sendcount,
            datatype: sendtype,
            data: block_word(rt, sendbuf, (sendcount, sendtype), (recvcount, recvtype)),
        };
        // SAFETY: the caller's call.
        let start = || unsafe {
            mpi_sys::PMPI_Iallgather(
                sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, request,
            )
        };
        // SAFETY: as above.
        unsafe { rt.icollective(c, request, start) }
    })
}

pub(crate) unsafe fn alltoall(
    sendbuf: *const c_void,
    sendcount: c_int,
    sendtype: MPI_Datatype,
    recvbuf: *mut c_void,
    recvcount: c_int,
    recvtype: MPI_Datatype,
    comm: MPI_Comm,
) -> c_int {
    if !active() {
        // SAFETY: the caller's arguments, passed on unchanged.
        return unsafe {
            mpi_sys::PMPI_Alltoall(
                sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm,
            )
        };
    }
    state::with(|rt| {
        let c = Coll {
            kind: OpKind::Alltoall,
            comm,
            root: 0,
            count: sendcount,
            datatype: sendtype,
            data: block_word(rt, sendbuf, (sendcount, sendtype), (recvcount, recvtype)),
        };
        // SAFETY: the nonblocking form of the caller's call.
        let start = |request| unsafe {
            mpi_sys::PMPI_Ialltoall(
                sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, request,
            )
        };
        // SAFETY: as above.
        unsafe { rt.collective(c, start) }
    })
}

pub(crate) unsafe fn ialltoall(
    sendbuf: *const c_void,
    sendcount: c_int,
    sendtype: MPI_Datatype,
    recvbuf: *mut c_void,
    recvcount: c_int,
    recvtype: MPI_Datatype,
    comm: MPI_Comm,
    request: *mut MPI_Request,
) -> c_int {
    if !active() {
        // SAFETY: the caller's arguments, passed on unchanged.
        return unsafe {
            mpi_sys::PMPI_Ialltoall(
                sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, request,
            )
        };
    }
    state::with(|rt| {
        let c = Coll {
            kind: OpKind::Ialltoall,
            comm,
            root: 0,
            count: sendcount,
            datatype: sendtype,
            data: block_word(rt, sendbuf, (sendcount, sendtype), (recvcount, recvtype)),
        };
        // SAFETY: the caller's call.
        let start = || unsafe {
            mpi_sys::PMPI_Ialltoall(
                sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, request,
            )
        };
        // SAFETY: as above.
        unsafe { rt.icollective(c, request, start) }
    })
}

pub(crate) unsafe fn gatherv(
    sendbuf: *const c_void,
    sendcount: c_int,
    sendtype: MPI_Datatype,
    recvbuf: *mut c_void,
    recvcounts: *const c_int,
    displs: *const c_int,
    recvtype: MPI_Datatype,
    root: c_int,
    comm: MPI_Comm,
) -> c_int {
    if !active() {
        // SAFETY: the caller's arguments, passed on unchanged.
        return unsafe {
            mpi_sys::PMPI_Gatherv(
                sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, root, comm,
            )
        };
    }
    state::with(|rt| {
        let c = Coll {
            kind: OpKind::Gatherv,
            comm,
            root,
            count: sendcount,
            datatype: sendtype,
            data: 0,
        };
        // SAFETY: the nonblocking form of the caller's call.
        let start = |request| unsafe {
            mpi_sys::PMPI_Igatherv(
                sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, root, comm,
                request,
            )
        };
        // SAFETY: as above.
        unsafe { rt.collective(c, start) }
    })
}

pub(crate) unsafe fn igatherv(
    sendbuf: *const c_void,
    sendcount: c_int,
    sendtype: MPI_Datatype,
    recvbuf: *mut c_void,
    recvcounts: *const c_int,
    displs: *const c_int,
    recvtype: MPI_Datatype,
    root: c_int,
    comm: MPI_Comm,
    request: *mut MPI_Request,
) -> c_int {
    if !active() {
        // SAFETY: the caller's arguments, passed on unchanged.
        return unsafe {
            mpi_sys::PMPI_Igatherv(
                sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, root, comm,
                request,
            )
        };
    }
    state::with(|rt| {
        let c = Coll {
            kind: OpKind::Igatherv,
            comm,
            root,
            count: sendcount,
            datatype: sendtype,
            data: 0,
        };
        // SAFETY: the caller's call.
        let start = || unsafe {
            mpi_sys::PMPI_Igatherv(
                sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, root, comm,
                request,
            )
        };
        // SAFETY: as above.
        unsafe { rt.icollective(c, request, start) }
    })
}

pub(crate) unsafe fn scatterv(
    sendbuf: *const c_void,
    sendcounts: *const c_int,
    displs: *const c_int,
    sendtype: MPI_Datatype,
    recvbuf: *mut c_void,
    recvcount: c_int,
    recvtype: MPI_Datatype,
    root: c_int,
    comm: MPI_Comm,
) -> c_int {
    if !active() {
        // SAFETY: the caller's arguments, passed on unchanged.
        return unsafe {
            mpi_sys::PMPI_Scatterv(
                sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount, recvtype, root, comm,
            )
        };
    }
    state::with(|rt| {
        let c = Coll {
            kind: OpKind::Scatterv,
            comm,
            root,
            count: recvcount,
            datatype: recvtype,
            data: 0,
        };
        // SAFETY: the nonblocking form of the caller's call.
        let start = |request| unsafe {
            mpi_sys::PMPI_Iscatterv(
                sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount, recvtype, root, comm,
                request,
            )
        };
        // SAFETY: as above.
        unsafe { rt.collective(c, start) }
    })
}

pub(crate) unsafe fn iscatterv(
    sendbuf: *const c_void,
    sendcounts: *const c_int,
    displs: *const c_int,
    sendtype: MPI_Datatype,
    recvbuf: *mut c_void,
    recvcount: c_int,
    recvtype: MPI_Datatype,
    root: c_int,
    comm: MPI_Comm,
    request: *mut MPI_Request,
) -> c_int {
    if !active() {
        // SAFETY: the caller's arguments, passed on unchanged.
        return unsafe {
            mpi_sys::PMPI_Iscatterv(
                sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount, recvtype, root, comm,
                request,
            )
        };
    }
    state::with(|rt| {
        let c = Coll {
            kind: OpKind::Iscatterv,
            comm,
            root,
            count: recvcount,
            datatype: recvtype,
            data: 0,
        };
        // SAFETY: the caller's call.
        let start = || unsafe {
            mpi_sys::PMPI_Iscatterv(
                sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount, recvtype, root, comm,
                request,
            )
        };
        // SAFETY: as above.
        unsafe { rt.icollective(c, request, start) }
    })
}

pub(crate) unsafe fn allgatherv(
    sendbuf: *const c_void,
    sendcount: c_int,
    sendtype: MPI_Datatype,
    recvbuf: *mut c_void,
    recvcounts: *const c_int,
    displs: *const c_int,
    recvtype: MPI_Datatype,
    comm: MPI_Comm,
) -> c_int {
    if !active() {
        // SAFETY: the caller's arguments, passed on unchanged.
        return unsafe {
            mpi_sys::PMPI_Allgatherv(
                sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, comm,
            )
        };
    }
    state::with(|rt| {
        let c = Coll {
            kind: OpKind::Allgatherv,
            comm,
            root: 0,
            count: sendcount,
            datatype: sendtype,
            data: 0,
        };
        // SAFETY: the nonblocking form of the caller's call.
        let start = |request| unsafe {
            mpi_sys::PMPI_Iallgatherv(
                sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, comm, request,
            )
        };
        // SAFETY: as above.
        unsafe { rt.collective(c, start) }
    })
}

pub(crate) unsafe fn iallgatherv(
    sendbuf: *const c_void,
    sendcount: c_int,
    sendtype: MPI_Datatype,
    recvbuf: *mut c_void,
    recvcounts: *const c_int,
    displs: *const c_int,
    recvtype: MPI_Datatype,
    comm: MPI_Comm,
    request: *mut MPI_Request,
) -> c_int {
    if !active() {
        // SAFETY: the caller's arguments, passed on unchanged.
        return unsafe {
            mpi_sys::PMPI_Iallgatherv(
                sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, comm, request,
            )
        };
    }
    state::with(|rt| {
        let c = Coll {
            kind: OpKind::Iallgatherv,
            comm,
            root: 0,
            count: sendcount,
            datatype: sendtype,
            data: 0,
        };
        // SAFETY: the caller's call.
        let start = || unsafe {
            mpi_sys::PMPI_Iallgatherv(
                sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, comm, request,
            )
        };
        // SAFETY: as above.
        unsafe { rt.icollective(c, request, start) }
    })
}

pub(crate) unsafe fn alltoallv(
    sendbuf: *const c_void,
    sendcounts: *const c_int,
    sdispls: *const c_int,
    sendtype: MPI_Datatype,
    recvbuf: *mut c_void,
    recvcounts: *const c_int,
    rdispls: *const c_int,
    recvtype: MPI_Datatype,
    comm: MPI_Comm,
) -> c_int {
    if !active() {
        // SAFETY: the caller's arguments, passed on unchanged.
        return unsafe {
            mpi_sys::PMPI_Alltoallv(
                sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype,
                comm,
            )
        };
    }
    state::with(|rt| {
        let c = Coll {
            kind: OpKind::Alltoallv,
            comm,
            root: 0,
            count: 0,
            datatype: sendtype,
            data: 0,
        };
        // SAFETY: the nonblocking form of the caller's call.
        let start = |request| unsafe {
            mpi_sys::PMPI_Ialltoallv(
                sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype,
                comm, request,
            )
        };
        // SAFETY: as above.
        unsafe { rt.collective(c, start) }
    })
}

pub(crate) unsafe fn ialltoallv(
    sendbuf: *const c_void,
    sendcounts: *const c_int,
    sdispls: *const c_int,
    sendtype: MPI_Datatype,
    recvbuf: *mut c_void,
    recvcounts: *const c_int,
    rdispls: *const c_int,
    recvtype: MPI_Datatype,
    comm: MPI_Comm,
    request: *mut MPI_Request,
) -> c_int {
    if !active() {
        // SAFETY: the caller's arguments, passed on unchanged.
        return unsafe {
            mpi_sys::PMPI_Ialltoallv(
                sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype,
                comm, request,
            )
        };
    }
    state::with(|rt| {
        let c = Coll {
            kind: OpKind::Ialltoallv,
            comm,
            root: 0,
            count: 0,
            datatype: sendtype,
            data: 0,
        };
        // SAFETY: the caller's call.
        let start = || unsafe {
            mpi_sys::PMPI_Ialltoallv(
                sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype,
                comm, request,
            )
        };
        // SAFETY: as above.
        unsafe { rt.icollective(c, request, start) }
    })
}

pub(crate) unsafe fn alltoallw(
    sendbuf: *const c_void,
    sendcounts: *const c_int,
    sdispls: *const c_int,
    sendtypes: *const MPI_Datatype,
    recvbuf: *mut c_void,
    recvcounts: *const c_int,
    rdispls: *const c_int,
    recvtypes: *const MPI_Datatype,
    comm: MPI_Comm,
) -> c_int {
    if !active() {
        // SAFETY: the caller's arguments, passed on unchanged.
        return unsafe {
            mpi_sys::PMPI_Alltoallw(
                sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls, recvtypes,
                comm,
            )
        };
    }
    state::with(|rt| {
        let c = Coll {
            kind: OpKind::Alltoallw,
            comm,
            root: 0,
            count: 0,
            datatype: null_type(),
            data: 0,
        };
        // SAFETY: the nonblocking form of the caller's call.
        let start = |request| unsafe {
            mpi_sys::PMPI_Ialltoallw(
                sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls, recvtypes,
                comm, request,
            )
        };
        // SAFETY: as above.
        unsafe { rt.collective(c, start) }
    })
}

pub(crate) unsafe fn ialltoallw(
    sendbuf: *const c_void,
    sendcounts: *const c_int,
    sdispls: *const c_int,
    sendtypes: *const MPI_Datatype,
    recvbuf: *mut c_void,
    recvcounts: *const c_int,
    rdispls: *const c_int,
    recvtypes: *const MPI_Datatype,
    comm: MPI_Comm,
    request: *mut MPI_Request,
) -> c_int {
    if !active() {
        // SAFETY: the caller's arguments, passed on unchanged.
        return unsafe {
            mpi_sys::PMPI_Ialltoallw(
                sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls, recvtypes,
                comm, request,
            )
        };
    }
    state::with(|rt| {
        let c = Coll {
            kind: OpKind::Ialltoallw,
            comm,
            root: 0,
            count: 0,
            datatype: null_type(),
            data: 0,
        };
        // SAFETY: the caller's call.
        let start = || unsafe {
            mpi_sys::PMPI_Ialltoallw(
                sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls, recvtypes,
                comm, request,
            )
        };
        // SAFETY: as above.
        unsafe { rt.icollective(c, request, start) }
    })
}
