//! The bodies of the `MPI_*` exports listed in `lib.rs`.
//!
//! Each forwards to `PMPI_*` untouched when recording is off. When it is on,
//! a blocking call is recorded (and marked blocking) before it is made and
//! completed after; a nonblocking call is recorded before and gets its
//! request after. The `PMPI_*` result is always returned unchanged.
//!
//! Record fields by kind (beyond `site`, `flags`, `error`):
//!
//! | kind | peer | tag | comm | count | request | aux |
//! | --- | --- | --- | --- | --- | --- | --- |
//! | `Init` | | | world | | | |
//! | `InitThread` | | | world | required | | provided |
//! | `Send`, `Recv`, `Isend`, `Irecv` | dest/source | tag | comm | count | (nonblocking) request | datatype |
//! | `Wait` | | | | | request | 1 + index of the record that created the request, 0 if unknown |
//! | `Barrier` | | | comm | | | |
//! | `Finalize` | | | | | | |
//! | `Abort` | | | comm | errorcode | | |
//! | `Pcontrol` | second argument (7303's `k`) | | | | | `level << 32 \| first argument as u32` |
//!
//! `Recv` and a `Wait` on a receive request get `HAS_STATUS` with the
//! matched source and tag, and so does the `Irecv` record of that request.

use crate::consts::{status_ignore, SUCCESS};
use crate::handle::HandleBits;
use crate::record::{self, begin, finish, p2p, recording, set_status, REQUESTS, TRACE};
use crate::requests::Pending;
use mbh_trace::op::{flags, OpClass};
use mbh_trace::rank_trace::{RankState, RawOp};
use mbh_trace::OpKind;
use mpi_sys::{MPI_Comm, MPI_Datatype, MPI_Request, MPI_Status};
use std::os::raw::{c_char, c_int, c_void};

/// A status the call can write into: the caller's, or `local` when the
/// caller passed `MPI_STATUS_IGNORE` (which must not be written). A null
/// status is passed on as it is, for MPI to judge.
#[inline(always)]
fn status_target(status: *mut MPI_Status, local: &mut MPI_Status) -> *mut MPI_Status {
    if status == status_ignore() {
        local
    } else {
        status
    }
}

/// A zeroed status.
#[inline(always)]
fn blank_status() -> MPI_Status {
    // SAFETY: MPI_Status is a C struct of integers: all-zero is valid.
    unsafe { std::mem::zeroed() }
}

/// Source and tag of a status MPI filled in.
#[inline(always)]
fn read_status(status: *const MPI_Status) -> Option<(c_int, c_int)> {
    if status.is_null() {
        return None;
    }
    // SAFETY: non-null, and either our local status or the caller's, which
    // MPI just wrote (the call succeeded).
    let status = unsafe { &*status };
    Some((status.MPI_SOURCE, status.MPI_TAG))
}

pub(crate) unsafe fn init(argc: *mut c_int, argv: *mut *mut *mut c_char) -> c_int {
    // SAFETY: the caller's arguments, passed on unchanged.
    let rc = unsafe { mpi_sys::PMPI_Init(argc, argv) };
    crate::start::after_init(OpKind::Init, rc, 0, 0);
    rc
}

pub(crate) unsafe fn init_thread(
    argc: *mut c_int,
    argv: *mut *mut *mut c_char,
    required: c_int,
    provided: *mut c_int,
) -> c_int {
    // SAFETY: the caller's arguments, passed on unchanged.
    let rc = unsafe { mpi_sys::PMPI_Init_thread(argc, argv, required, provided) };
    let level = if provided.is_null() {
        0
    } else {
        // SAFETY: non-null, and MPI just wrote it.
        unsafe { *provided }
    };
    crate::start::after_init(OpKind::InitThread, rc, required, level);
    rc
}

pub(crate) unsafe fn finalize() -> c_int {
    if !recording() {
        // SAFETY: no arguments.
        return unsafe { mpi_sys::PMPI_Finalize() };
    }
    let index = begin(
        || RawOp {
            kind: OpKind::Finalize as u16,
            site: record::site(),
            ..RawOp::default()
        },
        true,
    );
    // SAFETY: no arguments.
    let rc = unsafe { mpi_sys::PMPI_Finalize() };
    finish(index, rc, true, |_| {});
    if rc == SUCCESS {
        record::guard(|| {
            TRACE.writer()?.set_state(RankState::Finalized);
            Some(())
        });
    }
    rc
}

pub(crate) unsafe fn send(
    buf: *const c_void,
    count: c_int,
    datatype: MPI_Datatype,
    dest: c_int,
    tag: c_int,
    comm: MPI_Comm,
) -> c_int {
    if !recording() {
        // SAFETY: the caller's arguments, passed on unchanged.
        return unsafe { mpi_sys::PMPI_Send(buf, count, datatype, dest, tag, comm) };
    }
    let index = begin(|| p2p(OpKind::Send, dest, tag, comm, count, datatype), true);
    // SAFETY: as above.
    let rc = unsafe { mpi_sys::PMPI_Send(buf, count, datatype, dest, tag, comm) };
    finish(index, rc, true, |_| {});
    rc
}

#[allow(clippy::too_many_arguments)] // MPI_Recv's own
pub(crate) unsafe fn recv(
    buf: *mut c_void,
    count: c_int,
    datatype: MPI_Datatype,
    source: c_int,
    tag: c_int,
    comm: MPI_Comm,
    status: *mut MPI_Status,
) -> c_int {
    if !recording() {
        // SAFETY: the caller's arguments, passed on unchanged.
        return unsafe { mpi_sys::PMPI_Recv(buf, count, datatype, source, tag, comm, status) };
    }
    let index = begin(
        || p2p(OpKind::Recv, source, tag, comm, count, datatype),
        true,
    );
    let mut local = blank_status();
    let target = status_target(status, &mut local);
    // SAFETY: the caller's arguments; `target` is the caller's status or
    // `local`, which outlives the call.
    let rc = unsafe { mpi_sys::PMPI_Recv(buf, count, datatype, source, tag, comm, target) };
    let matched = if rc == SUCCESS {
        read_status(target)
    } else {
        None
    };
    finish(index, rc, true, |op| {
        if let Some((source, tag)) = matched {
            set_status(op, source, tag);
        }
    });
    rc
}

/// `Isend` and `Irecv`: record `op` (of `kind`), make the call, then store
/// the request and remember it for its completion.
#[inline(always)]
fn nonblocking(
    kind: OpKind,
    op: impl FnOnce() -> RawOp,
    request: *mut MPI_Request,
    call: impl FnOnce() -> c_int,
) -> c_int {
    let index = begin(op, false);
    let rc = call();
    let handle = if rc == SUCCESS && !request.is_null() {
        // SAFETY: non-null, and MPI just wrote the new request there.
        Some(unsafe { *request }.bits())
    } else {
        None
    };
    finish(index, rc, false, |op| {
        if let Some(bits) = handle {
            op.request = bits;
        }
    });
    if let (Some(index), Some(bits)) = (index, handle) {
        record::guard(|| Some(REQUESTS.insert(bits, Pending { index, kind })));
    }
    rc
}

#[allow(clippy::too_many_arguments)] // MPI_Isend's own
pub(crate) unsafe fn isend(
    buf: *const c_void,
    count: c_int,
    datatype: MPI_Datatype,
    dest: c_int,
    tag: c_int,
    comm: MPI_Comm,
    request: *mut MPI_Request,
) -> c_int {
    let call = || {
        // SAFETY: the caller's arguments, passed on unchanged.
        unsafe { mpi_sys::PMPI_Isend(buf, count, datatype, dest, tag, comm, request) }
    };
    if !recording() {
        return call();
    }
    let kind = OpKind::Isend;
    let op = || p2p(kind, dest, tag, comm, count, datatype);
    nonblocking(kind, op, request, call)
}

#[allow(clippy::too_many_arguments)] // MPI_Irecv's own
pub(crate) unsafe fn irecv(
    buf: *mut c_void,
    count: c_int,
    datatype: MPI_Datatype,
    source: c_int,
    tag: c_int,
    comm: MPI_Comm,
    request: *mut MPI_Request,
) -> c_int {
    let call = || {
        // SAFETY: the caller's arguments, passed on unchanged.
        unsafe { mpi_sys::PMPI_Irecv(buf, count, datatype, source, tag, comm, request) }
    };
    if !recording() {
        return call();
    }
    let kind = OpKind::Irecv;
    let op = || p2p(kind, source, tag, comm, count, datatype);
    nonblocking(kind, op, request, call)
}

pub(crate) unsafe fn wait(request: *mut MPI_Request, status: *mut MPI_Status) -> c_int {
    if !recording() {
        // SAFETY: the caller's arguments, passed on unchanged.
        return unsafe { mpi_sys::PMPI_Wait(request, status) };
    }
    let handle = if request.is_null() {
        None
    } else {
        // SAFETY: non-null: the caller's request, read before MPI frees it.
        Some(unsafe { *request }.bits())
    };
    let pending = handle.and_then(|bits| record::guard(|| REQUESTS.get(bits)));
    let index = begin(
        || RawOp {
            kind: OpKind::Wait as u16,
            site: record::site(),
            request: handle.unwrap_or(0),
            aux: pending.map_or(0, |p| p.index.wrapping_add(1)),
            ..RawOp::default()
        },
        true,
    );
    let mut local = blank_status();
    let target = status_target(status, &mut local);
    // SAFETY: the caller's request; `target` is the caller's status or
    // `local`, which outlives the call.
    let rc = unsafe { mpi_sys::PMPI_Wait(request, target) };
    let receive = pending.filter(|p| p.kind.class() == OpClass::Receive);
    let matched = match receive {
        Some(_) if rc == SUCCESS => read_status(target),
        _ => None,
    };
    finish(index, rc, true, |op| {
        if let Some((source, tag)) = matched {
            set_status(op, source, tag);
        }
    });
    if let (Some(origin), Some((source, tag))) = (receive, matched) {
        record::update(origin.index, |op| set_status(op, source, tag));
    }
    if let (Some(bits), true) = (handle, rc == SUCCESS && pending.is_some()) {
        record::guard(|| REQUESTS.remove(bits));
    }
    rc
}

pub(crate) unsafe fn barrier(comm: MPI_Comm) -> c_int {
    if !recording() {
        // SAFETY: the caller's argument, passed on unchanged.
        return unsafe { mpi_sys::PMPI_Barrier(comm) };
    }
    let index = begin(
        || RawOp {
            kind: OpKind::Barrier as u16,
            site: record::site(),
            comm: comm.bits(),
            ..RawOp::default()
        },
        true,
    );
    // SAFETY: as above.
    let rc = unsafe { mpi_sys::PMPI_Barrier(comm) };
    finish(index, rc, true, |_| {});
    rc
}

pub(crate) unsafe fn abort(comm: MPI_Comm, errorcode: c_int) -> c_int {
    if recording() {
        record::guard(|| {
            let site = record::site();
            TRACE.append(RawOp {
                kind: OpKind::Abort as u16,
                site,
                comm: comm.bits(),
                count: errorcode,
                ..RawOp::default()
            });
            TRACE.writer()?.record_abort(errorcode, site);
            Some(())
        });
    }
    // SAFETY: the caller's arguments, passed on unchanged.
    unsafe { mpi_sys::PMPI_Abort(comm, errorcode) }
}

pub(crate) fn pcontrol(level: c_int, a: c_int, b: c_int) {
    if !recording() {
        return;
    }
    record::guard(|| {
        TRACE.append(RawOp {
            kind: OpKind::Pcontrol as u16,
            flags: flags::RETURNED,
            site: record::site(),
            peer: b,
            aux: u64::from(level as u32) << 32 | u64::from(a as u32),
            ..RawOp::default()
        })
    });
}
