//! The runtime's global state: whether the protocol is on, the one
//! [`Rt`](crate::engine::Rt) behind the claim of the thread in MPI, the
//! panic boundary of every export, and the fatal path.
//!
//! # Threads
//!
//! One thread at a time may be inside a wrapped call: every export's
//! prologue ([`claim`], from `lib.rs`'s `enter`) makes its thread the
//! owner (its token, [`me`]) for the whole call, one compare-and-swap, and
//! the owner alone reaches the state ([`with`]: a relaxed load and a
//! compare). A call made while another is inside is one of:
//!
//! * the same thread again ([`Entry::Nested`]): an MPI call from a
//!   callback MPI runs inside the outer call (an error handler, a
//!   reduction op, an attribute callback). It runs as a wrapped call
//!   unless it needs the state while the outer call holds it, which stops
//!   the run naming both calls (see `nested_stop`).
//! * another thread ([`Entry::Busy`]): `thread_level::overlap` reports it
//!   as the program's error under `MPI_THREAD_SERIALIZED` or lower, and
//!   stops the run as not supported under `MPI_THREAD_MULTIPLE`.
//!
//! Either way the second call cannot simply go on to MPI: its messages
//! would lack the headers the receivers' runtimes expect, and the
//! runtime's tables (requests, type signatures, handles) would miss what
//! it did.

use crate::consts::comm_world;
use crate::engine::Rt;
use crate::record::TRACE;
use std::cell::UnsafeCell;
use std::io::Write;
use std::os::raw::c_int;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, AtomicPtr, AtomicU32, AtomicU64, Ordering};

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
    /// The token ([`me`]) of the thread inside a wrapped call, 0: none.
    owner: AtomicU64,
    /// Whether the owner is inside [`with`] (only the owner reads or
    /// writes it).
    in_with: AtomicBool,
    rt: UnsafeCell<Option<Rt>>,
}

// SAFETY: `rt` is only reached through `with_cell`, by the owner, and not
// twice at once (`in_with`).
unsafe impl Sync for Cell {}

static RT: Cell = Cell {
    owner: AtomicU64::new(0),
    in_with: AtomicBool::new(false),
    rt: UnsafeCell::new(None),
};

/// The export the owner is in (a `&'static &'static str` of the export's
/// name, null: none or unknown), for a message about a second call.
static OWNER_CALL: AtomicPtr<&'static str> = AtomicPtr::new(std::ptr::null_mut());
/// The site of the owner's call.
static OWNER_SITE: AtomicU32 = AtomicU32::new(0);
/// The export a nested call (the owner's thread, again) is in.
static NESTED_CALL: AtomicPtr<&'static str> = AtomicPtr::new(std::ptr::null_mut());

/// This thread's token: on x86-64 its thread pointer (the TLS ABI puts the
/// pointer itself at `fs:0`, one load, where `pthread_self()` is a call
/// into libc), elsewhere `pthread_self()`. Nonzero and distinct for every
/// live thread.
#[inline(always)]
pub fn me() -> u64 {
    #[cfg(target_arch = "x86_64")]
    {
        let tp: u64;
        // SAFETY: the x86-64 TLS ABI (glibc and musl alike) stores the
        // thread pointer at offset 0 of the block `fs` addresses; reading
        // it has no side effect.
        unsafe {
            std::arch::asm!(
                "mov {}, qword ptr fs:[0]",
                out(reg) tp,
                options(nostack, readonly, preserves_flags, pure)
            )
        };
        tp
    }
    #[cfg(not(target_arch = "x86_64"))]
    // SAFETY: no preconditions.
    unsafe {
        libc::pthread_self() as u64
    }
}

/// What an export's prologue found.
pub enum Entry {
    /// The thread owns the runtime until the [`Claim`] drops.
    Claimed(Claim),
    /// The thread owns it already: a call from inside its own call.
    Nested,
    /// Another thread owns it (its token, [`me`]).
    Busy(u64),
}

/// Ownership of the runtime, given back when dropped.
pub struct Claim(());

impl Drop for Claim {
    #[inline(always)]
    fn drop(&mut self) {
        RT.owner.store(0, Ordering::Release);
    }
}

/// Makes thread `me` the owner, unless a thread already is.
#[inline(always)]
pub fn claim(me: u64) -> Entry {
    match RT
        .owner
        .compare_exchange(0, me, Ordering::Acquire, Ordering::Relaxed)
    {
        Ok(_) => Entry::Claimed(Claim(())),
        Err(owner) if owner == me => Entry::Nested,
        Err(owner) => Entry::Busy(owner),
    }
}

/// The owner entered export `call` (a static holding its name) at
/// `site`: what a second call's message names.
#[inline(always)]
pub fn note_owner_call(call: &'static &'static str, site: u32) {
    OWNER_CALL.store(std::ptr::from_ref(call).cast_mut(), Ordering::Relaxed);
    OWNER_SITE.store(site, Ordering::Relaxed);
}

/// A nested call entered export `call`.
#[cold]
pub fn note_nested_call(call: &'static &'static str) {
    NESTED_CALL.store(std::ptr::from_ref(call).cast_mut(), Ordering::Relaxed);
}

/// The export the owner is in and its site, as far as known.
pub fn owner_call() -> (&'static str, u32) {
    let call = OWNER_CALL.load(Ordering::Relaxed);
    // SAFETY: null, or a pointer to a static `&'static str`
    // (`note_owner_call`).
    let name = unsafe { call.as_ref() }.copied().unwrap_or("an MPI call");
    (name, OWNER_SITE.load(Ordering::Relaxed))
}

/// Installs the state and turns the protocol on (from `MPI_Init`).
pub fn install(rt: Rt) {
    with_cell(|slot| *slot = Some(rt));
    crate::lifecycle::start_protocol();
}

/// Turns the protocol off (in `MPI_Finalize`); the state stays.
pub fn deactivate() {
    crate::lifecycle::stop_protocol();
}

/// Leaves [`with`].
struct Leave;

impl Drop for Leave {
    fn drop(&mut self) {
        RT.in_with.store(false, Ordering::Relaxed);
    }
}

fn with_cell<R>(f: impl FnOnce(&mut Option<Rt>) -> R) -> R {
    let me = me();
    // Outside an export's claim (no path does this today) the call
    // claims for itself.
    let _own = if RT.owner.load(Ordering::Relaxed) == me {
        None
    } else {
        match claim(me) {
            Entry::Claimed(claim) => Some(claim),
            Entry::Nested | Entry::Busy(_) => fatal(format_args!(
                "the runtime's state was reached by a thread that is not inside an MPI call while another is (a bug in mbhybrid)"
            )),
        }
    };
    if RT.in_with.load(Ordering::Relaxed) {
        nested_stop();
    }
    RT.in_with.store(true, Ordering::Relaxed);
    let _leave = Leave;
    // SAFETY: this thread owns the cell and is not inside `with` already:
    // no other reference to the cell's content exists.
    let slot = unsafe { &mut *RT.rt.get() };
    f(slot)
}

/// A call from inside the owner's own call (a callback) needs the state
/// the outer call holds: stops the run naming both. Giving it the state
/// would alias the outer call's; passing it to MPI unwrapped would send
/// messages without the headers receivers expect, or leave the runtime's
/// tables (type signatures, handles, requests) without what it did.
#[cold]
fn nested_stop() -> ! {
    let inner = NESTED_CALL.load(Ordering::Relaxed);
    // SAFETY: null or a pointer to a static `&'static str`.
    let inner = unsafe { inner.as_ref() }.copied().unwrap_or("an MPI call");
    let (outer, _) = owner_call();
    fatal(format_args!(
        "{inner} was called from inside {outer} on the same thread (from a callback MPI ran: an error handler, a reduction op or an attribute callback); calling MPI from a callback is allowed, but this version of mbhybrid cannot follow it yet"
    ))
}

/// Runs `f` on the state unless it is busy or missing (an exit handler
/// that may run in the middle of anything).
pub fn try_with<R>(f: impl FnOnce(&mut Rt) -> R) -> Option<R> {
    let Entry::Claimed(_claim) = claim(me()) else {
        return None;
    };
    RT.in_with.store(true, Ordering::Relaxed);
    let _leave = Leave;
    // SAFETY: as in `with_cell`: the cell is ours until `_claim` drops.
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
    fatal_at(crate::record::peek_site(), what)
}

/// [`fatal`] about the call at `site`.
pub fn fatal_at(site: u32, what: std::fmt::Arguments<'_>) -> ! {
    let said = what.to_string();
    let _ = writeln!(std::io::stderr(), "mbhybrid: {said}");
    if let Some(writer) = TRACE.writer() {
        // The verdict reads the words from the trace, not from the
        // rank's standard error (which the program may have closed).
        writer.record_tool_stop(TOOL_EXIT, site, &said);
    }
    // SAFETY: MPI is initialised (every caller runs between MPI_Init and
    // MPI_Finalize); aborting the world is always allowed.
    unsafe { mpi_sys::PMPI_Abort(comm_world(), TOOL_EXIT) };
    // SAFETY: ends the process without running atexit handlers (MPI is in
    // an undefined state).
    unsafe { libc::_exit(TOOL_EXIT) }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One test: the claim is the process's, and no other unit test
    /// takes it.
    #[test]
    fn a_claim_tells_the_same_thread_from_another_one() {
        let me = me();
        let Entry::Claimed(claim) = claim(me) else {
            panic!("free at first");
        };
        assert!(matches!(super::claim(me), Entry::Nested));
        let other = std::thread::spawn(|| match super::claim(super::me()) {
            Entry::Busy(owner) => owner,
            _ => 0,
        })
        .join()
        .unwrap();
        assert_eq!(other, me, "another thread sees this one inside");
        static NAME: &str = "MPI_Recv";
        note_owner_call(&NAME, 12);
        assert_eq!(owner_call(), ("MPI_Recv", 12));
        assert!(try_with(|_| ()).is_none(), "an exit handler keeps out");
        drop(claim);
        assert!(matches!(super::claim(me), Entry::Claimed(_)));
    }
}
