//! The bodies of the `MPI_*` exports listed in `lib.rs` that do more than
//! forward: starting and stopping the runtime, and following handles for
//! the resource-leak check. The calls that forward to `PMPI_*` while the
//! runtime is off and hand the call to the [`Rt`](crate::engine::Rt)
//! otherwise are generated from their entries in `lib.rs` (`exports!`);
//! [`crate::engine`] does their work. What every call records is here.
//!
//! # Records
//!
//! Every recorded call gets `site`, `flags` (`RETURNED`, `FAILED` with
//! `error`, `ANY_SOURCE`/`ANY_TAG`/`PROC_NULL` as passed); a blocking call
//! is appended before it is made and marked as the rank's blocking call
//! until it returns.
//!
//! | kind | peer | tag | comm | count | request | aux |
//! | --- | --- | --- | --- | --- | --- | --- |
//! | `Init` | | | world | | | |
//! | `InitThread` | | | world | required | | provided |
//! | `Send`, `Ssend`, `Bsend`, `Rsend`, `Isend`, `Issend`, `Ibsend`, `Irsend` | dest | tag | comm | count | (nonblocking) request | datatype |
//! | `Recv`, `Irecv`, `Probe`, `Iprobe` | source posted (a guided run's forced source; `ANY_SOURCE` keeps its flag) | tag | comm | count (probes: 0, `Iprobe` 1) | (`Irecv`) request | datatype (probes: 0) |
//! | `Sendrecv`, `SendrecvReplace` | source posted | receive tag | comm | receive count | dest in the low 32 bits, send tag in the high 32 | receive datatype |
//! | `SendInit`, `BsendInit`, `SsendInit`, `RsendInit`, `RecvInit` | dest / source given | tag | comm | count | the program's handle | datatype |
//! | `StartSend`, `StartBsend`, `StartSsend`, `StartRsend`, `StartRecv` (each request of `MPI_Start`/`MPI_Startall`, at its site) | as for the `Isend`/`Irecv` it stands for | | | | the runtime's inner request | datatype |
//! | `Mprobe`, `Improbe` | source posted | tag | comm | 0 (`Improbe` 1) | the message handle | 0 |
//! | `Mrecv`, `Imrecv` | the probed message's source (`MPI_MESSAGE_NO_PROC`: `PROC_NULL`) | its tag | comm | count | (`Imrecv`) request | datatype |
//! | `Wait`, `Waitall`, `Waitany`, `Waitsome`, `Test`, `Testall`, `Testany`, `Testsome` | | | | requests given | the (first) request (a persistent request's inner one) | 1 + index of the record that made it, 0 if unknown |
//! | `RequestFree` (of a persistent request), `Cancel` | | | | | the request | 1 + index of the record that made it |
//! | collectives (`wrap_coll.rs`: `Barrier` ... `Iexscan`, each its own kind) | root (0 when none) | | comm | count (send count) | (nonblocking) request | datatype (send type) |
//! | `Finalize` | | | | | | |
//! | `Abort` | | | comm | errorcode | | |
//! | `Pcontrol` | second argument (7303's `k`) | | | | | `level << 32 \| first argument as u32` |
//!
//! A receive, and the `Wait`/`Test` that completes a nonblocking one, get
//! `HAS_STATUS` with the matched source and tag (ranks of the call's
//! communicator), and so does the `Irecv` record of that request. `Iprobe`,
//! `Improbe` and the `Test` forms are recorded only when they find a
//! message or complete a request (polling loops would fill the trace
//! otherwise).
//!
//! A request whose `MPI_Cancel` succeeded gets `CANCELLED` on the record
//! that made it, once a completion call sees it complete; it has no
//! `Matched` record and, for a wildcard receive, no `WildcardClock`.
//!
//! The causality records (`WildcardClock`, `PotentialMatch`, `Matched`,
//! documented in `mbh_trace::op`) name ranks in `MPI_COMM_WORLD`; for vector
//! clocks their clock fields hold the receiving rank's own component. A
//! `CollectiveComplete` record names the call that completed a nonblocking
//! collective's request. `ChoiceClock` and `PotentialIndex` (a choice
//! among requests, seed 001 §4) name indices into the call's array
//! instead of ranks. A `WildcardClock` or `ChoiceClock` of an event the
//! guidance forced carries `FORCED` (`Rt::force`, `Rt::choosing`), so no
//! reader has to work out from the guidance what the runtime did.

use crate::checks::{self, ResourceKind};
use crate::consts::SUCCESS;
use crate::handle::HandleBits;
use crate::record::{self, TRACE};
use crate::state::{self, active};
use mbh_trace::op::flags;
use mbh_trace::rank_trace::{RankState, RawOp};
use mbh_trace::OpKind;
use mpi_sys::{MPI_Comm, MPI_Datatype, MPI_Errhandler, MPI_Group, MPI_Op};
use std::os::raw::{c_char, c_int};

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
    if !active() {
        // SAFETY: no arguments.
        return unsafe { mpi_sys::PMPI_Finalize() };
    }
    let rc = state::with(|rt| {
        crate::thread_level::check_finalize();
        // SAFETY: as for MPI_Finalize.
        unsafe { rt.finalize() }
    });
    if rc == SUCCESS {
        crate::lifecycle::finalize();
        record::guard(|| {
            TRACE.writer()?.set_state(RankState::Finalized);
            Some(())
        });
    }
    rc
}

pub(crate) unsafe fn abort(comm: MPI_Comm, errorcode: c_int) -> c_int {
    if record::recording() {
        record::guard(|| {
            let site = record::site();
            TRACE.append(RawOp {
                kind: OpKind::Abort as u16,
                site,
                comm: comm.bits(),
                count: errorcode,
                ..RawOp::default()
            });
            let writer = TRACE.writer()?;
            writer.record_abort(errorcode, site);
            crate::crash::wait_to_be_released(&writer);
            Some(())
        });
    }
    // SAFETY: the caller's arguments, passed on unchanged.
    unsafe { mpi_sys::PMPI_Abort(comm, errorcode) }
}

pub(crate) fn pcontrol(level: c_int, a: c_int, b: c_int) {
    record::append(|| RawOp {
        kind: OpKind::Pcontrol as u16,
        flags: flags::RETURNED,
        site: record::site(),
        peer: b,
        aux: u64::from(level as u32) << 32 | u64::from(a as u32),
        ..RawOp::default()
    });
}

/// A point-to-point call the runtime cannot handle yet: says so by name and
/// stops the run (a message without a header would corrupt the receiver's
/// data instead).
#[cfg_attr(not(mpi4), allow(dead_code))] // every such call is MPI 4's
pub(crate) fn unsupported(name: &str) -> c_int {
    let site = crate::callsite::describe(record::peek_site());
    state::fatal(format_args!(
        "{name} is not supported by this version of the runtime (called at {site})"
    ))
}

/// `MPI_COMM_NULL`.
fn comm_null() -> MPI_Comm {
    // SAFETY: an immutable C constant defined by mpi-sys's shim.
    unsafe { mpi_sys::RSMPI_COMM_NULL }
}

/// Which ranks make a communicator constructor call, for its clock
/// exchange (DESIGN.md: constructors synchronise clocks to the maximum).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Made {
    /// Every rank of the parent (`split`, `create`, ...).
    OverParent,
    /// Every rank of the parent, with its group and attributes
    /// (`MPI_Comm_dup`, `MPI_Comm_dup_with_info`).
    Duplicate,
    /// The ranks of the group only (`MPI_Comm_create_group`).
    ByGroup,
    /// `MPI_Comm_idup`: the communicator exists only once the request
    /// completes; no exchange.
    Later,
    /// Intercommunicator constructors: no exchange (as for collectives on
    /// intercommunicators).
    Inter,
}

/// A call making communicator `*out` from `parent`: follows it as a
/// resource (at the call's site) with the parent's error handler, and
/// (per `made`) exchanges clocks and makes the new communicator's shadows.
///
/// # Safety
///
/// `out` is the caller's out-parameter, written by `make`.
pub(crate) unsafe fn new_comm(
    parent: MPI_Comm,
    out: *mut MPI_Comm,
    made: Made,
    make: impl FnOnce() -> c_int,
) -> c_int {
    if !active() {
        return make();
    }
    let site = record::site();
    let rc = make();
    if rc == SUCCESS && !out.is_null() {
        // SAFETY: non-null, written by MPI.
        let comm = unsafe { *out };
        let made_here = comm.bits() != comm_null().bits();
        state::with(|rt| {
            if made_here {
                rt.resources().add(ResourceKind::Comm, comm.bits(), site);
                rt.handlers().inherit(parent, comm);
            }
            let new = made_here.then_some(comm);
            // SAFETY: every rank of `parent` (of the group) made this call.
            unsafe {
                match made {
                    Made::OverParent => rt.constructed(parent, new, true, false, site),
                    Made::Duplicate => rt.constructed(parent, new, true, true, site),
                    Made::ByGroup => rt.constructed(parent, new, false, false, site),
                    Made::Later | Made::Inter => {}
                }
            }
        });
    }
    rc
}

/// A call making group `*out`: follows it as a resource.
///
/// # Safety
///
/// `out` is the caller's out-parameter, written by `make`.
pub(crate) unsafe fn new_group(out: *mut MPI_Group, make: impl FnOnce() -> c_int) -> c_int {
    if !active() {
        return make();
    }
    let site = record::site();
    let rc = make();
    if rc == SUCCESS && !out.is_null() {
        // SAFETY: non-null, written by MPI.
        let bits = unsafe { *out }.bits();
        // SAFETY: immutable C constants defined by mpi-sys's shim.
        let predefined = unsafe {
            bits == mpi_sys::RSMPI_GROUP_EMPTY.bits() || bits == mpi_sys::RSMPI_GROUP_NULL.bits()
        };
        if !predefined {
            state::with(|rt| rt.resources().add(ResourceKind::Group, bits, site));
        }
    }
    rc
}

/// A call freeing the handle `bits` of `kind`: stops following it when
/// `free` succeeds.
fn freed(kind: ResourceKind, bits: u64, free: impl FnOnce() -> c_int) -> c_int {
    if !active() {
        return free();
    }
    let _ = record::site();
    let rc = free();
    if rc == SUCCESS {
        state::with(|rt| rt.resources().remove(kind, bits));
    }
    rc
}

pub(crate) unsafe fn group_free(group: *mut MPI_Group) -> c_int {
    let bits = if group.is_null() {
        0
    } else {
        // SAFETY: non-null, the caller's handle.
        unsafe { *group }.bits()
    };
    // SAFETY: the caller's argument, passed on unchanged.
    freed(ResourceKind::Group, bits, || unsafe {
        mpi_sys::PMPI_Group_free(group)
    })
}

/// `MPI_Type_commit`: a derived type is followed from here (a type made
/// but never committed is not).
pub(crate) unsafe fn type_commit(datatype: *mut MPI_Datatype) -> c_int {
    if !active() {
        // SAFETY: the caller's argument, passed on unchanged.
        return unsafe { mpi_sys::PMPI_Type_commit(datatype) };
    }
    let site = record::site();
    // SAFETY: the caller's argument, passed on unchanged.
    let rc = unsafe { mpi_sys::PMPI_Type_commit(datatype) };
    if rc == SUCCESS && !datatype.is_null() {
        // SAFETY: non-null, the caller's handle.
        let handle = unsafe { *datatype };
        if !crate::typesig::is_named(handle) {
            state::with(|rt| {
                rt.resources()
                    .add(ResourceKind::Datatype, handle.bits(), site)
            });
        }
    }
    rc
}

/// `MPI_Type_free`: also forgets the type's cached signature.
pub(crate) unsafe fn type_free(datatype: *mut MPI_Datatype) -> c_int {
    if datatype.is_null() || !active() {
        // SAFETY: the caller's argument, passed on unchanged.
        return unsafe { mpi_sys::PMPI_Type_free(datatype) };
    }
    // SAFETY: non-null, the caller's handle.
    let handle = unsafe { *datatype };
    state::with(|rt| rt.forget_type(handle));
    // SAFETY: the caller's argument, passed on unchanged.
    freed(ResourceKind::Datatype, handle.bits(), || unsafe {
        mpi_sys::PMPI_Type_free(datatype)
    })
}

pub(crate) unsafe fn op_create(
    function: mpi_sys::MPI_User_function,
    commute: c_int,
    op: *mut MPI_Op,
) -> c_int {
    if !active() {
        // SAFETY: the caller's arguments, passed on unchanged.
        return unsafe { mpi_sys::PMPI_Op_create(function, commute, op) };
    }
    let site = record::site();
    // SAFETY: the caller's arguments, passed on unchanged.
    let rc = unsafe { mpi_sys::PMPI_Op_create(function, commute, op) };
    if rc == SUCCESS && !op.is_null() {
        // SAFETY: non-null, written by MPI.
        let bits = unsafe { *op }.bits();
        state::with(|rt| rt.resources().add(ResourceKind::Op, bits, site));
    }
    rc
}

pub(crate) unsafe fn op_free(op: *mut MPI_Op) -> c_int {
    let bits = if op.is_null() {
        0
    } else {
        // SAFETY: non-null, the caller's handle.
        unsafe { *op }.bits()
    };
    // SAFETY: the caller's argument, passed on unchanged.
    freed(ResourceKind::Op, bits, || unsafe {
        mpi_sys::PMPI_Op_free(op)
    })
}

/// `MPI_Comm_set_errhandler` (and the old `MPI_Errhandler_set`): once the
/// runtime redirected errors, `MPI_ERRORS_ARE_FATAL` is remembered, not
/// applied (the runtime aborts after recording the error); any other
/// handler is applied and remembered as returning.
pub(crate) unsafe fn comm_set_errhandler(comm: MPI_Comm, handler: MPI_Errhandler) -> c_int {
    if !active() || !checks::redirected() {
        // SAFETY: the caller's arguments, passed on unchanged.
        return unsafe { mpi_sys::PMPI_Comm_set_errhandler(comm, handler) };
    }
    let _ = record::site();
    let fatal = handler.bits() == checks::errors_are_fatal().bits();
    let applied = if fatal {
        checks::errors_return()
    } else {
        handler
    };
    // SAFETY: the caller's communicator, a valid handler.
    let rc = unsafe { mpi_sys::PMPI_Comm_set_errhandler(comm, applied) };
    if rc == SUCCESS {
        state::with(|rt| rt.handlers().set(comm, !fatal));
    }
    rc
}

/// `MPI_Comm_get_errhandler`: says `MPI_ERRORS_ARE_FATAL` where the
/// program has it, though the runtime put `MPI_ERRORS_RETURN` in place.
pub(crate) unsafe fn comm_get_errhandler(comm: MPI_Comm, handler: *mut MPI_Errhandler) -> c_int {
    // SAFETY: the caller's arguments, passed on unchanged.
    let rc = unsafe { mpi_sys::PMPI_Comm_get_errhandler(comm, handler) };
    if rc != SUCCESS || handler.is_null() || !active() || !checks::redirected() {
        return rc;
    }
    let _ = record::site();
    if !state::with(|rt| rt.handlers().returns(comm)) {
        // SAFETY: non-null, written by MPI; a predefined handler stays
        // valid after MPI_Errhandler_free.
        unsafe {
            if (*handler).bits() == checks::errors_return().bits() {
                mpi_sys::PMPI_Errhandler_free(handler);
                *handler = checks::errors_are_fatal();
            }
        }
    }
    rc
}
