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
//! (`Reduce_scatter`: the sum of the receive counts), and the reductions'
//! operation ([`reduction_word`]); for `Gather` what a
//! non-root sends and what the root receives per rank (`Scatter`: the
//! reverse); for `Allgather`/`Alltoall` one block received, or a value of
//! its own when the rank's send block differs from it. `Alltoallv` and
//! `Alltoallw` are checked pair by pair instead ([`pairs_v`], [`pairs_w`]:
//! what each rank sends each peer against what that peer expects from it,
//! `engine/coll.rs`). So are the other `v` forms ([`pairs_rooted_v`],
//! [`pairs_allgatherv`]): each block the root gathers or scatters, and
//! each block of an `Allgatherv`, against what its receiver expects.

#![allow(clippy::too_many_arguments)]

use crate::buffer_check::check_fits;
use crate::consts::{in_place, SUCCESS};
use crate::engine::{pair_term, Coll, Early, EarlyLeaves, EarlyStart, PrefixCall, Rt, Span};
use crate::state::{self, active};
use crate::typesig::{Shape, Sig};
use crate::wrap_early::{own_block, scatter_span, scatterv_span};
use mbh_trace::static_report::BufferAccess as Access;
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

/// The signature word of a reduction: its data and its operation (MPI
/// requires the same `op` on every rank, MPI-4.1 §6.9.1). A predefined
/// operation is compared by which it is; operations the program made are
/// local handles, so they all count as one ("user-defined") and are told
/// apart only from predefined ones.
fn reduction_word(rt: &mut Rt, count: c_int, datatype: MPI_Datatype, op: MPI_Op) -> u64 {
    const USER_DEFINED: u64 = 0x5553_4552; // "USER"
    let op_word = crate::consts::predefined_op_index(op).map_or(USER_DEFINED, |i| i as u64 + 1);
    rt.data_word(count, datatype) ^ crate::typesig::code(op_word).rotate_left(29)
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

/// This rank's rank in `comm` and its size, when `comm` is an
/// intracommunicator MPI knows (the signature check skips the others, and
/// their count arrays are sized by the remote group).
fn intra_rank_size(comm: MPI_Comm) -> Option<(usize, usize)> {
    let (mut inter, mut rank, mut size): (c_int, c_int, c_int) = (0, -1, 0);
    // SAFETY: valid out-parameters; MPI judges the handle.
    let ok = unsafe {
        mpi_sys::PMPI_Comm_test_inter(comm, &mut inter) == SUCCESS
            && inter == 0
            && mpi_sys::PMPI_Comm_rank(comm, &mut rank) == SUCCESS
            && mpi_sys::PMPI_Comm_size(comm, &mut size) == SUCCESS
    };
    if !ok {
        return None;
    }
    Some((usize::try_from(rank).ok()?, usize::try_from(size).ok()?))
}

/// Adds to `share` the pairwise terms of this rank (`me`) sending `sent`
/// to `peer` and expecting `expected` from it; `None` when either is not
/// checked.
fn add_pair(share: u64, me: usize, peer: usize, sent: Sig, expected: Sig) -> Option<u64> {
    let share = add_sent(share, me, peer, sent)?;
    add_expected(share, peer, me, expected)
}

/// The signature word of a block in the pairwise check (0: empty); `None`
/// when the block is not checked.
fn pair_word(sig: Sig) -> Option<u64> {
    match sig.shape {
        Shape::Unchecked => None,
        Shape::Empty => Some(0),
        Shape::Homogeneous { .. } | Shape::Mixed => Some(sig.hash),
    }
}

/// `share` plus the term of `from` sending `sent` to `to`.
fn add_sent(share: u64, from: usize, to: usize, sent: Sig) -> Option<u64> {
    Some(share.wrapping_add(pair_term(from, to, pair_word(sent)?)))
}

/// `share` minus the term of `to` expecting `expected` from `from`.
fn add_expected(share: u64, from: usize, to: usize, expected: Sig) -> Option<u64> {
    Some(share.wrapping_sub(pair_term(from, to, pair_word(expected)?)))
}

/// The root of a rooted `v` collective as an index into `0..n`; `None`
/// for a root MPI will refuse (it then fails the call itself).
fn root_index(root: c_int, n: usize) -> Option<usize> {
    usize::try_from(root).ok().filter(|&r| r < n)
}

/// Which way the blocks of a rooted `v` collective go.
#[derive(Clone, Copy)]
enum Towards {
    /// `Gatherv`: every rank's block to the root.
    Root,
    /// `Scatterv`: the root's block to every rank.
    FromRoot,
}

/// This rank's share of the pairwise check of a `Gatherv` or `Scatterv`
/// (module docs): each rank's own block (`own`: its count and datatype)
/// against what the root gives for that rank (`per_rank`: the root's
/// counts and datatype). With `MPI_IN_PLACE` at the root
/// (`own_in_place`), the root's own block does not move. `Some(0)` on an
/// intercommunicator.
fn pairs_rooted_v(
    rt: &mut Rt,
    flow: Towards,
    own: (c_int, MPI_Datatype),
    per_rank: (*const c_int, MPI_Datatype),
    own_in_place: bool,
    root: c_int,
    comm: MPI_Comm,
) -> Option<u64> {
    let Some((me, n)) = intra_rank_size(comm) else {
        return Some(0);
    };
    let root = root_index(root, n)?;
    let in_place = me == root && own_in_place;
    // The term of the block between `rank` and the root, as the rank
    // (`at_root` false) or the root (true) describes it.
    let term = |share: u64, rank: usize, block: Sig, at_root: bool| match (flow, at_root) {
        (Towards::Root, false) => add_sent(share, rank, root, block),
        (Towards::Root, true) => add_expected(share, rank, root, block),
        (Towards::FromRoot, false) => add_expected(share, root, rank, block),
        (Towards::FromRoot, true) => add_sent(share, root, rank, block),
    };
    let mut share = 0u64;
    if !in_place {
        share = term(
            share,
            me,
            rt.signature(own.1).repeat(i64::from(own.0)),
            false,
        )?;
    }
    if me == root {
        if per_rank.0.is_null() {
            return None;
        }
        let root_type = rt.signature(per_rank.1);
        // SAFETY: MPI requires one count per rank at the root.
        let counts = unsafe { std::slice::from_raw_parts(per_rank.0, n) };
        for (rank, &count) in counts.iter().enumerate() {
            if !(in_place && rank == root) {
                share = term(share, rank, root_type.repeat(i64::from(count)), true)?;
            }
        }
    }
    Some(share)
}

/// This rank's share of the pairwise check of an `Allgatherv`: its block,
/// sent to every rank, against what each expects from it (`recvcounts`
/// there). With `MPI_IN_PLACE`, its block is the one its `recvcounts`
/// gives itself.
fn pairs_allgatherv(
    rt: &mut Rt,
    sendbuf: *const c_void,
    send: (c_int, MPI_Datatype),
    recv: (*const c_int, MPI_Datatype),
    comm: MPI_Comm,
) -> Option<u64> {
    let Some((me, n)) = intra_rank_size(comm) else {
        return Some(0);
    };
    if recv.0.is_null() {
        return None;
    }
    let recv_type = rt.signature(recv.1);
    // SAFETY: MPI requires one count per rank of the communicator.
    let recvcounts = unsafe { std::slice::from_raw_parts(recv.0, n) };
    let sent = if sendbuf.cast_mut() == in_place() {
        recv_type.repeat(i64::from(recvcounts[me]))
    } else {
        rt.signature(send.1).repeat(i64::from(send.0))
    };
    let mut share = 0u64;
    for (peer, &count) in recvcounts.iter().enumerate() {
        share = add_pair(share, me, peer, sent, recv_type.repeat(i64::from(count)))?;
    }
    Some(share)
}

/// This rank's share of the pairwise check of an `Alltoallv` (see the
/// module docs): `Some(0)` on an intercommunicator (not checked), `None`
/// when a block is not checked or an array is missing (MPI then fails the
/// call itself).
fn pairs_v(
    rt: &mut Rt,
    sendbuf: *const c_void,
    send: (*const c_int, MPI_Datatype),
    recv: (*const c_int, MPI_Datatype),
    comm: MPI_Comm,
) -> Option<u64> {
    let Some((me, n, send)) = pairwise_sides(sendbuf, send, recv, comm) else {
        return Some(0);
    };
    if send.0.is_null() || recv.0.is_null() {
        return None;
    }
    // The datatypes are looked up once: only the counts vary per peer.
    let (send_type, recv_type) = (rt.signature(send.1), rt.signature(recv.1));
    // SAFETY: MPI requires one count per rank of the communicator.
    let (sendcounts, recvcounts) = unsafe {
        (
            std::slice::from_raw_parts(send.0, n),
            std::slice::from_raw_parts(recv.0, n),
        )
    };
    let mut share = 0u64;
    for (peer, (&s, &r)) in sendcounts.iter().zip(recvcounts).enumerate() {
        let sent = send_type.repeat(i64::from(s));
        let expected = recv_type.repeat(i64::from(r));
        share = add_pair(share, me, peer, sent, expected)?;
    }
    Some(share)
}

/// What [`pairs_v`] and [`pairs_w`] compare on `comm`: this rank, the
/// size, and the arrays of the blocks sent (with `MPI_IN_PLACE`, each block
/// sent is the one received in its place, so `recv`'s). `None` on an
/// intercommunicator, which is not checked.
fn pairwise_sides<T: Copy>(
    sendbuf: *const c_void,
    send: T,
    recv: T,
    comm: MPI_Comm,
) -> Option<(usize, usize, T)> {
    let (me, n) = intra_rank_size(comm)?;
    let sent = if sendbuf.cast_mut() == in_place() {
        recv
    } else {
        send
    };
    Some((me, n, sent))
}

/// [`pairs_v`] of an `Alltoallw` (a datatype per peer).
fn pairs_w(
    rt: &mut Rt,
    sendbuf: *const c_void,
    send: (*const c_int, *const MPI_Datatype),
    recv: (*const c_int, *const MPI_Datatype),
    comm: MPI_Comm,
) -> Option<u64> {
    let Some((me, n, send)) = pairwise_sides(sendbuf, send, recv, comm) else {
        return Some(0);
    };
    if send.0.is_null() || send.1.is_null() || recv.0.is_null() || recv.1.is_null() {
        return None;
    }
    // SAFETY: MPI requires one count and one datatype per rank of the
    // communicator.
    let (sendcounts, sendtypes, recvcounts, recvtypes) = unsafe {
        (
            std::slice::from_raw_parts(send.0, n),
            std::slice::from_raw_parts(send.1, n),
            std::slice::from_raw_parts(recv.0, n),
            std::slice::from_raw_parts(recv.1, n),
        )
    };
    let mut share = 0u64;
    for peer in 0..n {
        let sent = rt
            .signature(sendtypes[peer])
            .repeat(i64::from(sendcounts[peer]));
        let expected = rt
            .signature(recvtypes[peer])
            .repeat(i64::from(recvcounts[peer]));
        share = add_pair(share, me, peer, sent, expected)?;
    }
    Some(share)
}

/// Defines the body of a blocking collective export and of its nonblocking
/// form: each forwards to `PMPI_*` untouched while the runtime is off;
/// otherwise it refuses a NULL array the call would read (`arrays`,
/// `null_arrays.rs`), then describes the call ([`Coll`]) and hands it to the engine,
/// the blocking one with its nonblocking form as the way to start it
/// ([`Rt::collective`]), the nonblocking one as it is ([`Rt::icollective`]).
/// Only the description differs from one collective to the next, so only it
/// is written out below.
macro_rules! collectives {
    ($(
        $name:ident, $iname:ident => $pmpi:ident, $ipmpi:ident ($($arg:ident: $ty:ty),* $(,)?)
        as $kind:ident, $ikind:ident {
            comm: $comm:expr,
            root: $root:expr,
            count: $count:expr,
            datatype: $datatype:expr,
            data: |$rt:ident| $data:expr
            $(, arrays: $arrays:expr)?
            $(, pairs: $pairs:expr)?
            $(, buffers: $buffers:expr)?
            $(, early: |$leaves:ident, $early_request:ident| $early:expr)?
            $(, prefix: $prefix:expr)? $(,)?
        }
    )*) => { $(
        #[doc = concat!("The body of `", stringify!($kind), "`'s export.")]
        pub(crate) unsafe fn $name($($arg: $ty),*) -> c_int {
            if !active() {
                // SAFETY: the caller's arguments, passed on unchanged.
                return unsafe { mpi_sys::$pmpi($($arg),*) };
            }
            $(
                if let Some(argument) = $arrays {
                    return crate::checks::refuse(argument);
                }
            )?
            $($buffers;)?
            state::with(|$rt| {
                let c = Coll {
                    kind: OpKind::$kind,
                    comm: $comm,
                    root: $root,
                    count: $count,
                    datatype: $datatype,
                    data: $data,
                    pairs: pairs_or_none!($($pairs)?),
                };
                // SAFETY: the nonblocking form of the caller's call.
                let start = |request| unsafe { mpi_sys::$ipmpi($($arg,)* request) };
                $(
                    let mut on_copy = |$leaves: &mut EarlyLeaves, $early_request: *mut MPI_Request| {
                        // SAFETY: the caller's call, on a copy of what it
                        // sends (each collective's `early` says how).
                        unsafe { $early }
                    };
                )?
                let early = early_or_none!($(on_copy, $leaves)?)
                    .map(Early::Send)
                    $(.or(Some(Early::Prefix($prefix))))?;
                // SAFETY: as above.
                unsafe { $rt.collective(c, start, early) }
            })
        }

        #[doc = concat!("The body of `", stringify!($ikind), "`'s export.")]
        pub(crate) unsafe fn $iname($($arg: $ty,)* request: *mut MPI_Request) -> c_int {
            if !active() {
                // SAFETY: the caller's arguments, passed on unchanged.
                return unsafe { mpi_sys::$ipmpi($($arg,)* request) };
            }
            $(
                if let Some(argument) = $arrays {
                    return crate::checks::refuse(argument);
                }
            )?
            $($buffers;)?
            // What the access check watches until the request completes
            // (`coll_pending.rs`), worked out only when it watches.
            let pending = crate::access::watching()
                .then(|| crate::coll_pending::$iname($($arg),*))
                .unwrap_or_default();
            state::with(|$rt| {
                let c = Coll {
                    kind: OpKind::$ikind,
                    comm: $comm,
                    root: $root,
                    count: $count,
                    datatype: $datatype,
                    data: $data,
                    pairs: pairs_or_none!($($pairs)?),
                };
                // SAFETY: the caller's call.
                let start = || unsafe { mpi_sys::$ipmpi($($arg,)* request) };
                $(
                    let mut on_copy = |$leaves: &mut EarlyLeaves, $early_request: *mut MPI_Request| {
                        // SAFETY: the caller's call, on a copy of what it
                        // sends (each collective's `early` says how).
                        unsafe { $early }
                    };
                )?
                let early = early_or_none!($(on_copy, $leaves)?)
                    .map(Early::Send)
                    $(.or(Some(Early::Prefix($prefix))))?;
                // SAFETY: as above.
                let rc = unsafe { $rt.icollective(c, request, start, early) };
                // SAFETY: the caller's request, which the call wrote.
                unsafe { $rt.watch_collective(rc, request, pending) };
                rc
            })
        }
    )* };
}

/// How a rank that only sends in a rooted collective starts it on a copy of
/// its send buffer (`engine/early.rs`); `None` for the other collectives.
macro_rules! early_or_none {
    () => {
        None
    };
    ($on_copy:ident, $leaves:ident) => {
        Some(&mut $on_copy as EarlyStart<'_>)
    };
}

/// A collective's share of the pairwise check: 0 unless it has one.
macro_rules! pairs_or_none {
    () => {
        Some(0)
    };
    ($pairs:expr) => {
        $pairs
    };
}

collectives! {
    barrier, ibarrier => PMPI_Barrier, PMPI_Ibarrier(
        comm: MPI_Comm,
    ) as Barrier, Ibarrier {
        comm: comm,
        root: 0,
        count: 0,
        datatype: null_type(),
        data: |rt| 0,
    }

    bcast, ibcast => PMPI_Bcast, PMPI_Ibcast(
        buffer: *mut c_void,
        count: c_int,
        datatype: MPI_Datatype,
        root: c_int,
        comm: MPI_Comm,
    ) as Bcast, Ibcast {
        comm: comm,
        root: root,
        count: count,
        datatype: datatype,
        data: |rt| rt.data_word(count, datatype),
        buffers: check_fits(buffer, count, datatype, Access::ReadWrite),
        // Early: the root's buffer as MPI reads it.
        early: |leaves, request| {
            let copy = leaves.stage(buffer, Span::of(0, count, datatype)?)?;
            Some(mpi_sys::PMPI_Ibcast(copy, count, datatype, root, comm, request))
        },
    }

    reduce, ireduce => PMPI_Reduce, PMPI_Ireduce(
        sendbuf: *const c_void,
        recvbuf: *mut c_void,
        count: c_int,
        datatype: MPI_Datatype,
        op: MPI_Op,
        root: c_int,
        comm: MPI_Comm,
    ) as Reduce, Ireduce {
        comm: comm,
        root: root,
        count: count,
        datatype: datatype,
        data: |rt| reduction_word(rt, count, datatype, op),
        // Early: a non-root's send buffer as MPI reads it.
        early: |leaves, request| {
            let copy = leaves.stage(sendbuf, Span::of(0, count, datatype)?)?;
            Some(mpi_sys::PMPI_Ireduce(copy, recvbuf, count, datatype, op, root, comm, request))
        },
    }

    allreduce, iallreduce => PMPI_Allreduce, PMPI_Iallreduce(
        sendbuf: *const c_void,
        recvbuf: *mut c_void,
        count: c_int,
        datatype: MPI_Datatype,
        op: MPI_Op,
        comm: MPI_Comm,
    ) as Allreduce, Iallreduce {
        comm: comm,
        root: 0,
        count: count,
        datatype: datatype,
        data: |rt| reduction_word(rt, count, datatype, op),
        buffers: {
            check_fits(sendbuf, count, datatype, Access::Read);
            check_fits(recvbuf, count, datatype, Access::Write);
        },
    }

    scan, iscan => PMPI_Scan, PMPI_Iscan(
        sendbuf: *const c_void,
        recvbuf: *mut c_void,
        count: c_int,
        datatype: MPI_Datatype,
        op: MPI_Op,
        comm: MPI_Comm,
    ) as Scan, Iscan {
        comm: comm,
        root: 0,
        count: count,
        datatype: datatype,
        data: |rt| reduction_word(rt, count, datatype, op),
        prefix: PrefixCall { sendbuf, recvbuf, count, datatype, op, exclusive: false },
    }

    exscan, iexscan => PMPI_Exscan, PMPI_Iexscan(
        sendbuf: *const c_void,
        recvbuf: *mut c_void,
        count: c_int,
        datatype: MPI_Datatype,
        op: MPI_Op,
        comm: MPI_Comm,
    ) as Exscan, Iexscan {
        comm: comm,
        root: 0,
        count: count,
        datatype: datatype,
        data: |rt| reduction_word(rt, count, datatype, op),
        prefix: PrefixCall { sendbuf, recvbuf, count, datatype, op, exclusive: true },
    }

    reduce_scatter_block, ireduce_scatter_block => PMPI_Reduce_scatter_block, PMPI_Ireduce_scatter_block(
        sendbuf: *const c_void,
        recvbuf: *mut c_void,
        recvcount: c_int,
        datatype: MPI_Datatype,
        op: MPI_Op,
        comm: MPI_Comm,
    ) as ReduceScatterBlock, IreduceScatterBlock {
        comm: comm,
        root: 0,
        count: recvcount,
        datatype: datatype,
        data: |rt| reduction_word(rt, recvcount, datatype, op),
    }

    reduce_scatter, ireduce_scatter => PMPI_Reduce_scatter, PMPI_Ireduce_scatter(
        sendbuf: *const c_void,
        recvbuf: *mut c_void,
        recvcounts: *const c_int,
        datatype: MPI_Datatype,
        op: MPI_Op,
        comm: MPI_Comm,
    ) as ReduceScatter, IreduceScatter {
        comm: comm,
        root: 0,
        count: 0,
        datatype: datatype,
        data: |rt| reduction_word(rt, total(recvcounts, comm), datatype, op),
        arrays: crate::null_arrays::reduce_scatter(recvcounts, comm),
    }

    gather, igather => PMPI_Gather, PMPI_Igather(
        sendbuf: *const c_void,
        sendcount: c_int,
        sendtype: MPI_Datatype,
        recvbuf: *mut c_void,
        recvcount: c_int,
        recvtype: MPI_Datatype,
        root: c_int,
        comm: MPI_Comm,
    ) as Gather, Igather {
        comm: comm,
        root: root,
        count: sendcount,
        datatype: sendtype,
        data: |rt| rooted_word(rt, comm, root, (sendcount, sendtype), (recvcount, recvtype)),
        // Early: a non-root's send buffer as MPI reads it.
        early: |leaves, request| {
            let copy = leaves.stage(sendbuf, Span::of(0, sendcount, sendtype)?)?;
            Some(mpi_sys::PMPI_Igather(
                copy, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm, request,
            ))
        },
    }

    scatter, iscatter => PMPI_Scatter, PMPI_Iscatter(
        sendbuf: *const c_void,
        sendcount: c_int,
        sendtype: MPI_Datatype,
        recvbuf: *mut c_void,
        recvcount: c_int,
        recvtype: MPI_Datatype,
        root: c_int,
        comm: MPI_Comm,
    ) as Scatter, Iscatter {
        comm: comm,
        root: root,
        count: sendcount,
        datatype: sendtype,
        data: |rt| rooted_word(rt, comm, root, (recvcount, recvtype), (sendcount, sendtype)),
        // Early: the root's buffers as MPI uses them; its own
        // block is copied now, so MPI leaves its receive buffer alone.
        early: |leaves, request| {
            let span = scatter_span(sendcount, sendtype, comm)?;
            own_block(sendbuf, root.checked_mul(sendcount)?, sendcount, sendtype, recvbuf, recvcount, recvtype)?;
            let copy = leaves.stage(sendbuf, span)?;
            Some(mpi_sys::PMPI_Iscatter(
                copy, sendcount, sendtype, in_place(), recvcount, recvtype, root, comm, request,
            ))
        },
    }

    allgather, iallgather => PMPI_Allgather, PMPI_Iallgather(
        sendbuf: *const c_void,
        sendcount: c_int,
        sendtype: MPI_Datatype,
        recvbuf: *mut c_void,
        recvcount: c_int,
        recvtype: MPI_Datatype,
        comm: MPI_Comm,
    ) as Allgather, Iallgather {
        comm: comm,
        root: 0,
        count: sendcount,
        datatype: sendtype,
        data: |rt| block_word(rt, sendbuf, (sendcount, sendtype), (recvcount, recvtype)),
    }

    alltoall, ialltoall => PMPI_Alltoall, PMPI_Ialltoall(
        sendbuf: *const c_void,
        sendcount: c_int,
        sendtype: MPI_Datatype,
        recvbuf: *mut c_void,
        recvcount: c_int,
        recvtype: MPI_Datatype,
        comm: MPI_Comm,
    ) as Alltoall, Ialltoall {
        comm: comm,
        root: 0,
        count: sendcount,
        datatype: sendtype,
        data: |rt| block_word(rt, sendbuf, (sendcount, sendtype), (recvcount, recvtype)),
    }

    gatherv, igatherv => PMPI_Gatherv, PMPI_Igatherv(
        sendbuf: *const c_void,
        sendcount: c_int,
        sendtype: MPI_Datatype,
        recvbuf: *mut c_void,
        recvcounts: *const c_int,
        displs: *const c_int,
        recvtype: MPI_Datatype,
        root: c_int,
        comm: MPI_Comm,
    ) as Gatherv, Igatherv {
        comm: comm,
        root: root,
        count: sendcount,
        datatype: sendtype,
        data: |rt| 0,
        arrays: crate::null_arrays::gatherv(recvcounts, displs, root, comm),
        pairs: pairs_rooted_v(
            rt,
            Towards::Root,
            (sendcount, sendtype),
            (recvcounts, recvtype),
            sendbuf.cast_mut() == in_place(),
            root,
            comm,
        ),
        // Early: a non-root's send buffer as MPI reads it.
        early: |leaves, request| {
            let copy = leaves.stage(sendbuf, Span::of(0, sendcount, sendtype)?)?;
            Some(mpi_sys::PMPI_Igatherv(
                copy, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, root, comm,
                request,
            ))
        },
    }

    scatterv, iscatterv => PMPI_Scatterv, PMPI_Iscatterv(
        sendbuf: *const c_void,
        sendcounts: *const c_int,
        displs: *const c_int,
        sendtype: MPI_Datatype,
        recvbuf: *mut c_void,
        recvcount: c_int,
        recvtype: MPI_Datatype,
        root: c_int,
        comm: MPI_Comm,
    ) as Scatterv, Iscatterv {
        comm: comm,
        root: root,
        count: recvcount,
        datatype: recvtype,
        data: |rt| 0,
        arrays: crate::null_arrays::scatterv(sendcounts, displs, root, comm),
        pairs: pairs_rooted_v(
            rt,
            Towards::FromRoot,
            (recvcount, recvtype),
            (sendcounts, sendtype),
            recvbuf == in_place(),
            root,
            comm,
        ),
        // Early: the root's buffers as MPI uses them (its counts
        // and displacements hold one entry per rank); its own block is
        // copied now, so MPI leaves its receive buffer alone.
        early: |leaves, request| {
            let span = scatterv_span(sendcounts, displs, sendtype, comm)?;
            let me = usize::try_from(root).ok()?;
            let (count, displ) = (*sendcounts.add(me), *displs.add(me));
            own_block(sendbuf, displ, count, sendtype, recvbuf, recvcount, recvtype)?;
            let copy = leaves.stage(sendbuf, span)?;
            Some(mpi_sys::PMPI_Iscatterv(
                copy, sendcounts, displs, sendtype, in_place(), recvcount, recvtype, root, comm,
                request,
            ))
        },
    }

    allgatherv, iallgatherv => PMPI_Allgatherv, PMPI_Iallgatherv(
        sendbuf: *const c_void,
        sendcount: c_int,
        sendtype: MPI_Datatype,
        recvbuf: *mut c_void,
        recvcounts: *const c_int,
        displs: *const c_int,
        recvtype: MPI_Datatype,
        comm: MPI_Comm,
    ) as Allgatherv, Iallgatherv {
        comm: comm,
        root: 0,
        count: sendcount,
        datatype: sendtype,
        data: |rt| 0,
        arrays: crate::null_arrays::allgatherv(recvcounts, displs, comm),
        pairs: pairs_allgatherv(rt, sendbuf, (sendcount, sendtype), (recvcounts, recvtype), comm),
    }

    alltoallv, ialltoallv => PMPI_Alltoallv, PMPI_Ialltoallv(
        sendbuf: *const c_void,
        sendcounts: *const c_int,
        sdispls: *const c_int,
        sendtype: MPI_Datatype,
        recvbuf: *mut c_void,
        recvcounts: *const c_int,
        rdispls: *const c_int,
        recvtype: MPI_Datatype,
        comm: MPI_Comm,
    ) as Alltoallv, Ialltoallv {
        comm: comm,
        root: 0,
        count: 0,
        datatype: sendtype,
        data: |rt| 0,
        arrays: crate::null_arrays::alltoallv(sendbuf, (sendcounts, sdispls), (recvcounts, rdispls), comm),
        pairs: pairs_v(rt, sendbuf, (sendcounts, sendtype), (recvcounts, recvtype), comm),
    }

    alltoallw, ialltoallw => PMPI_Alltoallw, PMPI_Ialltoallw(
        sendbuf: *const c_void,
        sendcounts: *const c_int,
        sdispls: *const c_int,
        sendtypes: *const MPI_Datatype,
        recvbuf: *mut c_void,
        recvcounts: *const c_int,
        rdispls: *const c_int,
        recvtypes: *const MPI_Datatype,
        comm: MPI_Comm,
    ) as Alltoallw, Ialltoallw {
        comm: comm,
        root: 0,
        count: 0,
        datatype: null_type(),
        data: |rt| 0,
        arrays: crate::null_arrays::alltoallw(
            sendbuf,
            (sendcounts, sdispls, sendtypes),
            (recvcounts, rdispls, recvtypes),
            comm,
        ),
        pairs: pairs_w(rt, sendbuf, (sendcounts, sendtypes), (recvcounts, recvtypes), comm),
    }
}
