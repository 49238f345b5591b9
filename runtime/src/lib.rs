//! `libmbhybrid_rt.so`: the PMPI runtime mbhybrid loads into every MPI
//! process of a verified program.
//!
//! The program is linked against this library before the MPI library (or
//! gets it through `LD_PRELOAD`), so its `MPI_*` calls land here; each
//! export records the call in this rank's trace file and forwards it to the
//! MPI library's `PMPI_*` entry point, returning its result unchanged.
//!
//! This crate owns:
//!
//! * the `MPI_*` exports, all listed in this file (`MPI_Pcontrol`, which
//!   is variadic, is defined in `src/pcontrol.c` and forwards to
//!   [`mbhybrid_rt_pcontrol`]);
//! * [`mbhybrid_site`], the word the instrumented program stores each call
//!   site's id into before the call;
//! * writing the rank trace ([`mbh_trace::rank_trace`]) through a shared
//!   memory map, so it survives the process being killed, and the rank's
//!   standard error file, both in the directory named by
//!   [`MBHYBRID_TRACE_DIR`](mbh_trace::layout::ENV_TRACE_DIR);
//! * recording how the rank ended: `MPI_Finalize`, `exit` status, fatal
//!   signal with program counters, `MPI_Abort`.
//!
//! It must not change what the program computes: without
//! `MBHYBRID_TRACE_DIR` every export only forwards, and with it recording
//! is best effort (a failure or a bug in recording turns recording off, it
//! never reaches the program). It must not allocate, lock or print on the
//! per-call path; allocation and messages happen only when tracing starts.
//! No panic crosses the FFI boundary.
//!
//! This milestone records and forwards: no piggybacked clocks, no guided
//! replay, no local checks yet.
//!
//! # Example
//!
//! ```text
//! $ cargo build -p mbh-runtime
//! $ mpicc app.c -o app -L target/debug -Wl,-rpath,$PWD/target/debug \
//!       -Wl,--no-as-needed -lmbhybrid_rt        # mpicc adds -lmpich after
//! $ MBHYBRID_TRACE_DIR=/tmp/t mpiexec -n 3 ./app
//! $ cargo run -p mbh-runtime --example dump_trace -- /tmp/t
//! ```
//!
//! # Limitations
//!
//! * Only `MPI_Init`, `MPI_Init_thread`, `MPI_Finalize`, `MPI_Send`,
//!   `MPI_Recv`, `MPI_Isend`, `MPI_Irecv`, `MPI_Wait`, `MPI_Barrier`,
//!   `MPI_Abort` and `MPI_Pcontrol` are wrapped; other calls go straight to
//!   the MPI library and are not recorded.
//! * One thread at a time calls MPI (`MPI_THREAD_SINGLE`, `FUNNELED` or
//!   `SERIALIZED`): records are appended without synchronisation.
//!   Under `MPI_THREAD_MULTIPLE` records may be lost or torn.
//! * A `Wait` gets the matched source of a receive only when the request's
//!   `Irecv` is still in the pending-request table (4096 slots, best
//!   effort; requests completed by unwrapped calls stay until their handle
//!   is reused).
//! * Fatal signals are recorded, then passed on to the action that was in
//!   place at `MPI_Init` (MPICH over UCX has its own): should that action
//!   recover, the trace still says `Signaled` and later signals of that
//!   kind are not recorded. Signals the process ignores are not caught, and
//!   handlers the program installs after `MPI_Init` replace ours. Stack
//!   overflows are caught on the thread that called `MPI_Init` only (the
//!   alternate signal stack is per thread).
//! * Exit statuses need glibc's `on_exit`; `_exit` is not seen.
#![deny(missing_docs)]
#![deny(unsafe_op_in_unsafe_fn)]
#![warn(clippy::undocumented_unsafe_blocks)]

mod consts;
mod crash;
mod handle;
mod record;
mod requests;
mod start;
mod trace_file;
mod wrap;

pub use handle::HandleBits;

use mpi_sys::{MPI_Comm, MPI_Datatype, MPI_Request, MPI_Status};
use std::os::raw::{c_char, c_int, c_void};
use std::sync::atomic::AtomicU32;

/// The id of the MPI call site about to run, stored by the instrumented
/// program before each MPI call (0: unknown). Every record takes its
/// `site` from here.
#[allow(non_upper_case_globals)]
#[unsafe(no_mangle)]
pub static mbhybrid_site: AtomicU32 = AtomicU32::new(0);

// The exports. Each is a thin shim over its body in `wrap`; see that module
// for what each records.

/// `MPI_Init`: starts tracing when `MBHYBRID_TRACE_DIR` is set.
///
/// # Safety
///
/// As for `MPI_Init`.
#[cfg_attr(not(test), unsafe(no_mangle))]
#[allow(non_snake_case)] // the MPI name
pub unsafe extern "C" fn MPI_Init(argc: *mut c_int, argv: *mut *mut *mut c_char) -> c_int {
    // SAFETY: the caller upholds MPI_Init's contract.
    unsafe { wrap::init(argc, argv) }
}

/// `MPI_Init_thread`: starts tracing when `MBHYBRID_TRACE_DIR` is set.
///
/// # Safety
///
/// As for `MPI_Init_thread`.
#[cfg_attr(not(test), unsafe(no_mangle))]
#[allow(non_snake_case)] // the MPI name
pub unsafe extern "C" fn MPI_Init_thread(
    argc: *mut c_int,
    argv: *mut *mut *mut c_char,
    required: c_int,
    provided: *mut c_int,
) -> c_int {
    // SAFETY: the caller upholds MPI_Init_thread's contract.
    unsafe { wrap::init_thread(argc, argv, required, provided) }
}

/// `MPI_Finalize`: the rank's state becomes `Finalized` when it succeeds.
///
/// # Safety
///
/// As for `MPI_Finalize`.
#[cfg_attr(not(test), unsafe(no_mangle))]
#[allow(non_snake_case)] // the MPI name
pub unsafe extern "C" fn MPI_Finalize() -> c_int {
    // SAFETY: the caller upholds MPI_Finalize's contract.
    unsafe { wrap::finalize() }
}

/// `MPI_Send`.
///
/// # Safety
///
/// As for `MPI_Send`.
#[cfg_attr(not(test), unsafe(no_mangle))]
#[allow(non_snake_case)] // the MPI name
pub unsafe extern "C" fn MPI_Send(
    buf: *const c_void,
    count: c_int,
    datatype: MPI_Datatype,
    dest: c_int,
    tag: c_int,
    comm: MPI_Comm,
) -> c_int {
    // SAFETY: the caller upholds MPI_Send's contract.
    unsafe { wrap::send(buf, count, datatype, dest, tag, comm) }
}

/// `MPI_Recv`: records the matched source and tag.
///
/// # Safety
///
/// As for `MPI_Recv`.
#[cfg_attr(not(test), unsafe(no_mangle))]
#[allow(non_snake_case)] // the MPI name
pub unsafe extern "C" fn MPI_Recv(
    buf: *mut c_void,
    count: c_int,
    datatype: MPI_Datatype,
    source: c_int,
    tag: c_int,
    comm: MPI_Comm,
    status: *mut MPI_Status,
) -> c_int {
    // SAFETY: the caller upholds MPI_Recv's contract.
    unsafe { wrap::recv(buf, count, datatype, source, tag, comm, status) }
}

/// `MPI_Isend`.
///
/// # Safety
///
/// As for `MPI_Isend`.
#[cfg_attr(not(test), unsafe(no_mangle))]
#[allow(non_snake_case)] // the MPI name
pub unsafe extern "C" fn MPI_Isend(
    buf: *const c_void,
    count: c_int,
    datatype: MPI_Datatype,
    dest: c_int,
    tag: c_int,
    comm: MPI_Comm,
    request: *mut MPI_Request,
) -> c_int {
    // SAFETY: the caller upholds MPI_Isend's contract.
    unsafe { wrap::isend(buf, count, datatype, dest, tag, comm, request) }
}

/// `MPI_Irecv`.
///
/// # Safety
///
/// As for `MPI_Irecv`.
#[cfg_attr(not(test), unsafe(no_mangle))]
#[allow(non_snake_case)] // the MPI name
pub unsafe extern "C" fn MPI_Irecv(
    buf: *mut c_void,
    count: c_int,
    datatype: MPI_Datatype,
    source: c_int,
    tag: c_int,
    comm: MPI_Comm,
    request: *mut MPI_Request,
) -> c_int {
    // SAFETY: the caller upholds MPI_Irecv's contract.
    unsafe { wrap::irecv(buf, count, datatype, source, tag, comm, request) }
}

/// `MPI_Wait`: for a receive request, records the matched source and tag
/// on the `Wait` and on the request's `Irecv`.
///
/// # Safety
///
/// As for `MPI_Wait`.
#[cfg_attr(not(test), unsafe(no_mangle))]
#[allow(non_snake_case)] // the MPI name
pub unsafe extern "C" fn MPI_Wait(request: *mut MPI_Request, status: *mut MPI_Status) -> c_int {
    // SAFETY: the caller upholds MPI_Wait's contract.
    unsafe { wrap::wait(request, status) }
}

/// `MPI_Barrier`.
///
/// # Safety
///
/// As for `MPI_Barrier`.
#[cfg_attr(not(test), unsafe(no_mangle))]
#[allow(non_snake_case)] // the MPI name
pub unsafe extern "C" fn MPI_Barrier(comm: MPI_Comm) -> c_int {
    // SAFETY: the caller upholds MPI_Barrier's contract.
    unsafe { wrap::barrier(comm) }
}

/// `MPI_Abort`: the rank's state becomes `Aborted` before the call.
///
/// # Safety
///
/// As for `MPI_Abort`.
#[cfg_attr(not(test), unsafe(no_mangle))]
#[allow(non_snake_case)] // the MPI name
pub unsafe extern "C" fn MPI_Abort(comm: MPI_Comm, errorcode: c_int) -> c_int {
    // SAFETY: the caller upholds MPI_Abort's contract.
    unsafe { wrap::abort(comm, errorcode) }
}

/// Records an `MPI_Pcontrol` call; called by `MPI_Pcontrol` in
/// `src/pcontrol.c` with the level and, for mbhybrid's marker levels
/// 7301-7305, its one or two arguments (0 when absent). Not part of the
/// MPI interface.
#[unsafe(no_mangle)]
pub extern "C" fn mbhybrid_rt_pcontrol(level: c_int, a: c_int, b: c_int) {
    wrap::pcontrol(level, a, b);
}
