//! The thread level the program was given, and the rules of it that a
//! call can check for the price of a load and a compare: under
//! `MPI_THREAD_SINGLE` and `MPI_THREAD_FUNNELED` only the main thread, the
//! one that initialised MPI, may call MPI (MPI-4.0 §11.6.1); at every
//! level, `MPI_Finalize` is called on that thread (MPI-4.0 §11.6.2). A
//! call from another thread is recorded ([`Check::OffMainThread`]), once
//! per call site, and goes on to MPI as the program made it.
//!
//! Two threads in MPI at once ([`overlap`], which the export prologue
//! calls when another thread owns the runtime, `state.rs`): under
//! `MPI_THREAD_SERIALIZED` or lower the program's error (MPI-4.0 §11.6:
//! "the user must ensure that only one thread calls MPI at a time"),
//! noted in the interleaving directory ([`ThreadOverlap`]) and the job
//! stopped with [`THREAD_OVERLAP_EXIT`]; under `MPI_THREAD_MULTIPLE`
//! allowed, and not supported yet: the run stops naming both calls.
//! Either way the second call cannot go on to MPI: its messages would
//! lack the headers the other ranks' runtimes expect.

use crate::checks;
use crate::record;
use crate::seen::Seen;
use mbh_trace::check::Check;
use mbh_trace::layout::{InterleavingDir, ThreadOverlap, ENV_TRACE_DIR};
use mbh_trace::op::THREAD_OVERLAP_EXIT;
use std::io::Write;
use std::os::raw::c_int;
use std::sync::atomic::{AtomicBool, AtomicI32, AtomicU32, AtomicU64, Ordering};

/// Whether only the main thread may call MPI.
static MAIN_ONLY: AtomicBool = AtomicBool::new(false);
/// The level given, as [`Check::OffMainThread`] records it (0 single, 1
/// funneled, 2 serialized, 3 multiple).
static LEVEL: AtomicU32 = AtomicU32::new(0);
/// The token (`state::me`) of the thread that initialised MPI.
static MAIN: AtomicU64 = AtomicU64::new(0);
/// The main thread's id (Linux's `gettid`), for the report.
static MAIN_ID: AtomicU64 = AtomicU64::new(0);

/// This process's rank in `MPI_COMM_WORLD` (-1: unknown).
static RANK: AtomicI32 = AtomicI32::new(-1);

/// Call sites reported already (site + 1).
static REPORTED: Seen<64> = Seen::new();

/// The main thread's id when `token` (`state::me`) is the main thread's.
pub fn main_thread_id(token: u64) -> Option<i32> {
    let main = MAIN.load(Ordering::Relaxed);
    (main != 0 && token == main).then(|| MAIN_ID.load(Ordering::Relaxed) as i32)
}

/// Called on the thread that initialised MPI, with the level MPI
/// `provided` (`MPI_THREAD_SINGLE` after `MPI_Init`).
pub fn set(provided: c_int) {
    let me = crate::state::me();
    // SAFETY: `gettid` has no preconditions.
    let id = unsafe { libc::gettid() };
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
    if level > 0 {
        crate::access::threads_may_call_mpi();
    }
    let mut rank: c_int = -1;
    // SAFETY: MPI is initialised (`provided` came from it); an int
    // out-parameter.
    unsafe { mpi_sys::PMPI_Comm_rank(crate::consts::comm_world(), &mut rank) };
    RANK.store(rank, Ordering::Relaxed);
}

/// In `MPI_Finalize`, holding the runtime's state: at the levels
/// [`check`] does not cover, the thread must still be the main one.
pub fn check_finalize() {
    let me = crate::state::me();
    if !MAIN_ONLY.load(Ordering::Relaxed) && me != MAIN.load(Ordering::Relaxed) {
        off_main_thread();
    }
}

/// At the start of every wrapped call, by thread `me` (its token,
/// `state::me`), which owns the runtime.
#[inline(always)]
pub fn check(me: u64) {
    if MAIN_ONLY.load(Ordering::Relaxed) && me != MAIN.load(Ordering::Relaxed) {
        off_main_thread();
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

/// The level's name.
fn level_name(level: u32) -> &'static str {
    match level {
        0 => "MPI_THREAD_SINGLE",
        1 => "MPI_THREAD_FUNNELED",
        2 => "MPI_THREAD_SERIALIZED",
        _ => "MPI_THREAD_MULTIPLE",
    }
}

/// Export `call` was entered by this thread while thread `owner` (its
/// token, `state::me`) is inside another MPI call of this process. Never
/// returns: under `MPI_THREAD_SERIALIZED` or lower the program's error is
/// noted ([`ThreadOverlap`], in a file: the trace's one writer is the
/// owner, which may be writing it now) and the job stopped with
/// [`THREAD_OVERLAP_EXIT`], the second call's site in the rank's abort
/// record; under `MPI_THREAD_MULTIPLE` the run stops as not supported,
/// naming both calls and the level.
#[cold]
#[inline(never)]
pub fn overlap(call: &'static str, owner: u64) -> ! {
    let level = LEVEL.load(Ordering::Relaxed);
    let main = MAIN.load(Ordering::Relaxed);
    let site = crate::callsite::site_here();
    let (other_call, other_site) = crate::state::owner_call();
    // SAFETY: no preconditions.
    let thread = unsafe { libc::gettid() };
    let on_main = crate::state::me() == main;
    let other_on_main = owner == main;
    let other = if other_on_main {
        format!(
            "the main thread (thread {})",
            MAIN_ID.load(Ordering::Relaxed)
        )
    } else {
        "another thread".to_string()
    };
    if level >= 3 {
        crate::state::fatal_at(
            site,
            format_args!(
                "{call} was called on thread {thread} while {other} was inside {other_call}: two threads in MPI at once, which {} allows, but this version of mbhybrid cannot run yet",
                level_name(level)
            ),
        );
    }
    let _ = writeln!(
        std::io::stderr(),
        "mbhybrid: {call} was called on thread {thread} while {other} was inside {other_call}, which {} does not allow; the job is stopped",
        level_name(level)
    );
    if let Some(dir) = std::env::var_os(ENV_TRACE_DIR).filter(|d| !d.is_empty()) {
        let noted = ThreadOverlap {
            rank: RANK.load(Ordering::Relaxed),
            level: level as i32,
            site,
            thread,
            on_main,
            call: call.to_string(),
            other_site,
            other_on_main,
            other_call: other_call.to_string(),
        };
        let dir = InterleavingDir { path: dir.into() };
        let _ = std::fs::write(dir.thread_overlap(std::process::id()), noted.to_line());
    }
    // Header words only (the owner writes records, never these).
    if let Some(writer) = record::TRACE.writer() {
        writer.record_abort(THREAD_OVERLAP_EXIT, site);
        crate::crash::wait_to_be_released(&writer);
    }
    // SAFETY: MPI is initialised (the protocol is on); aborting the world
    // is always allowed.
    unsafe { mpi_sys::PMPI_Abort(crate::consts::comm_world(), THREAD_OVERLAP_EXIT) };
    // SAFETY: ends the process without running atexit handlers.
    unsafe { libc::_exit(THREAD_OVERLAP_EXIT) }
}
