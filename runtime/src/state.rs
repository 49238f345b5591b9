//! The runtime's global state: whether the protocol is on, the one
//! [`Rt`](crate::engine::Rt) behind a reentrancy guard, the panic boundary
//! of every export, and the fatal path.
//!
//! # Threads
//!
//! One thread at a time may call MPI (`MPI_THREAD_SINGLE`, `FUNNELED` or
//! `SERIALIZED`). A second call while one is being handled (another thread,
//! or a callback calling MPI) is detected and stops the run with a
//! message: the alternative would be messages without headers.

use crate::consts::comm_world;
use crate::engine::Rt;
use crate::record::TRACE;
use std::cell::UnsafeCell;
use std::io::Write;
use std::os::raw::c_int;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, Ordering};

/// Exit code of a run the runtime stops (EX_SOFTWARE): an unsupported
/// call, a bug in the tool, a malformed configuration.
pub const TOOL_EXIT: c_int = 70;

/// Whether wrappers piggyback (false: they only forward): the protocol
/// runs between `MPI_Init` and `MPI_Finalize`, when every rank has
/// `MBHYBRID_TRACE_DIR` ([`crate::lifecycle`]).
#[inline(always)]
pub fn active() -> bool {
    crate::lifecycle::protocol()
}

struct Cell {
    busy: AtomicBool,
    rt: UnsafeCell<Option<Rt>>,
}

// SAFETY: `rt` is only reached through `with`, which admits one caller at a
// time through `busy`.
unsafe impl Sync for Cell {}

static RT: Cell = Cell {
    busy: AtomicBool::new(false),
    rt: UnsafeCell::new(None),
};

/// Installs the state and turns the protocol on (from `MPI_Init`).
pub fn install(rt: Rt) {
    with_cell(|slot| *slot = Some(rt));
    crate::lifecycle::start_protocol();
}

/// Turns the protocol off (in `MPI_Finalize`); the state stays.
pub fn deactivate() {
    crate::lifecycle::stop_protocol();
}

struct Release;

impl Drop for Release {
    fn drop(&mut self) {
        RT.busy.store(false, Ordering::Release);
    }
}

fn with_cell<R>(f: impl FnOnce(&mut Option<Rt>) -> R) -> R {
    if RT.busy.swap(true, Ordering::Acquire) {
        fatal(format_args!(
            "MPI was called while the runtime was handling another MPI call \
             (from a second thread, or from a callback); this is not supported"
        ));
    }
    let _release = Release;
    crate::thread_level::check();
    // SAFETY: `busy` was false and is now true until `_release` drops: no
    // other reference to the cell's content exists.
    let slot = unsafe { &mut *RT.rt.get() };
    f(slot)
}

/// Runs `f` on the state unless it is busy or missing (an exit handler
/// that may run in the middle of anything).
pub fn try_with<R>(f: impl FnOnce(&mut Rt) -> R) -> Option<R> {
    if RT.busy.swap(true, Ordering::Acquire) {
        return None;
    }
    let _release = Release;
    // SAFETY: as in `with_cell`: `busy` is ours until `_release` drops.
    let slot = unsafe { &mut *RT.rt.get() };
    slot.as_mut().map(f)
}

/// Runs `f` on the state. Stops the run on reentrancy.
pub fn with<R>(f: impl FnOnce(&mut Rt) -> R) -> R {
    with_cell(|slot| match slot {
        Some(rt) => f(rt),
        None => fatal(format_args!(
            "the runtime state is missing (a bug in mbhybrid)"
        )),
    })
}

/// The panic boundary of an export: a panic stops the run with a message
/// naming the call instead of unwinding into C.
#[inline(always)]
pub fn boundary(name: &str, body: impl FnOnce() -> c_int) -> c_int {
    match catch_unwind(AssertUnwindSafe(body)) {
        Ok(rc) => rc,
        Err(_) => fatal(format_args!(
            "internal error in {name} (a bug in mbhybrid; see the panic message above)"
        )),
    }
}

/// Writes `mbhybrid: WHAT` to standard error, records the end in the trace
/// (as stopped by the tool, code [`TOOL_EXIT`]) and stops the job.
pub fn fatal(what: std::fmt::Arguments<'_>) -> ! {
    let _ = writeln!(std::io::stderr(), "mbhybrid: {what}");
    let site = crate::record::peek_site();
    if let Some(writer) = TRACE.writer() {
        writer.record_tool_stop(TOOL_EXIT, site);
    }
    // SAFETY: MPI is initialised (every caller runs between MPI_Init and
    // MPI_Finalize); aborting the world is always allowed.
    unsafe { mpi_sys::PMPI_Abort(comm_world(), TOOL_EXIT) };
    // SAFETY: ends the process without running atexit handlers (MPI is in
    // an undefined state).
    unsafe { libc::_exit(TOOL_EXIT) }
}
