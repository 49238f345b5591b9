//! The thread level the program was given, and the rules of it that a
//! call can check for the price of a load and a compare: under
//! `MPI_THREAD_SINGLE` and `MPI_THREAD_FUNNELED` only the main thread, the
//! one that initialised MPI, may call MPI (MPI-4.0 §11.6.1); at every
//! level, `MPI_Finalize` is called on that thread (MPI-4.0 §11.6.2). A
//! call from another thread is recorded ([`Check::OffMainThread`]), once
//! per call site, and goes on to MPI as the program made it.
//!
//! Two threads in MPI at once are a different matter: the runtime's state
//! admits one caller at a time ([`crate::state`]), which stops the run.

use crate::checks;
use crate::record;
use crate::seen::Seen;
use mbh_trace::check::Check;
use std::os::raw::c_int;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};

/// Whether only the main thread may call MPI.
static MAIN_ONLY: AtomicBool = AtomicBool::new(false);
/// The level given, as [`Check::OffMainThread`] records it (0 single, 1
/// funneled, 2 serialized, 3 multiple).
static LEVEL: AtomicU32 = AtomicU32::new(0);
/// `pthread_self()` of the thread that initialised MPI.
static MAIN: AtomicU64 = AtomicU64::new(0);
/// The main thread's id (Linux's `gettid`), for the report.
static MAIN_ID: AtomicU64 = AtomicU64::new(0);

/// Call sites reported already (site + 1).
static REPORTED: Seen<64> = Seen::new();

/// Called on the thread that initialised MPI, with the level MPI
/// `provided` (`MPI_THREAD_SINGLE` after `MPI_Init`).
pub fn set(provided: c_int) {
    // SAFETY: `pthread_self` and `gettid` have no preconditions.
    let (me, id) = unsafe { (libc::pthread_self() as u64, libc::gettid()) };
    MAIN.store(me, Ordering::Relaxed);
    MAIN_ID.store(id as u64, Ordering::Relaxed);
    // SAFETY: `mpi-sys`'s statics are initialised from `mpi.h` before main.
    let levels = unsafe {
        [
            mpi_sys::RSMPI_THREAD_SINGLE,
            mpi_sys::RSMPI_THREAD_FUNNELED,
            mpi_sys::RSMPI_THREAD_SERIALIZED,
            mpi_sys::RSMPI_THREAD_MULTIPLE,
        ]
    };
    let level = levels.iter().position(|&l| l == provided).unwrap_or(0) as u32;
    LEVEL.store(level, Ordering::Relaxed);
    MAIN_ONLY.store(level <= 1, Ordering::Relaxed);
}

/// In `MPI_Finalize`, holding the runtime's state: at the levels
/// [`check`] does not cover, the thread must still be the main one.
pub fn check_finalize() {
    // SAFETY: no preconditions.
    let me = unsafe { libc::pthread_self() } as u64;
    if !MAIN_ONLY.load(Ordering::Relaxed) && me != MAIN.load(Ordering::Relaxed) {
        off_main_thread();
    }
}

/// At the start of every wrapped call, holding the runtime's state.
#[inline(always)]
pub fn check() {
    if MAIN_ONLY.load(Ordering::Relaxed) {
        // SAFETY: no preconditions.
        let me = unsafe { libc::pthread_self() } as u64;
        if me != MAIN.load(Ordering::Relaxed) {
            off_main_thread();
        }
    }
}

#[cold]
fn off_main_thread() {
    if !record::recording() {
        return;
    }
    let site = record::peek_site();
    if REPORTED.seen_before(u64::from(site) + 1) {
        return;
    }
    // SAFETY: no preconditions.
    let thread = unsafe { libc::gettid() };
    let check = Check::OffMainThread {
        level: LEVEL.load(Ordering::Relaxed) as i32,
        thread,
        main: MAIN_ID.load(Ordering::Relaxed),
    };
    checks::report(check, site, u64::MAX);
}
