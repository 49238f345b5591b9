//! The access check (seed 000 §2.3.6.3, Fig 2.9; SCENARIOS.md
//! E9): `mbhybrid build` puts a call of [`mbhybrid_check_access`] before
//! every load and store of the program's own code that may touch an MPI
//! buffer, guarded by the access being inside the hull of the pending
//! buffers ([`mbhybrid_pending_lo`]..[`mbhybrid_pending_hi`],
//! `instrument/src/accesses.rs`). A store into the buffer of a pending
//! send, or a load or store of the buffer of a pending receive, is recorded
//! as a [`LocalCheck::BufferReuse`] whose `site` is the access's (from the
//! check's return address, as `callsite.rs` makes sites of unlabelled
//! calls) and whose `aux` is the record of the call that started the
//! operation.
//!
//! The buffers are kept in [`crate::pending`]: the engine calls [`watch`]
//! when a nonblocking send or receive is under way, [`watch_all`] with a
//! nonblocking collective's buffers ([`crate::coll_pending`]),
//! [`watch_keyed`] with a one-sided operation's ([`crate::rma_watch`]), and
//! [`forget`] when its slot is released or the program frees it
//! ([`forget_keyed`] when a synchronization call completes one-sided
//! operations). Only when the program was
//! built with the checks ([`set_watching`], from the run's configuration):
//! a program built without them pays one relaxed load per nonblocking
//! call, not the buffer's extent and a table entry.
//!
//! # Limitations
//!
//! * Only code compiled by `mbhybrid build` is checked: accesses made by
//!   libraries (and by the MPI library itself) are not.
//! * Of one-sided communication, the origin and result buffers are
//!   watched, and a window's memory during its fence and PSCW exposure
//!   epochs (`rma_exposure.rs`), not during passive target epochs; a
//!   derived datatype is watched over
//!   its whole true extent, holes included (an access to a hole is
//!   reported), and so is the hull of a `v`/`w` collective's blocks.
//!   Nonblocking collectives on an intercommunicator are not watched.
//! * At most 256 pending buffers per rank (128 of one-sided operations)
//!   and 4 access sites per request are followed. The record is written by the accessing thread: an
//!   access on another thread while the MPI thread records is not
//!   synchronised with it (the runtime's single-caller rule, `record.rs`).

use crate::pending::{Pending, PENDING};
use crate::{callsite, checks, record};
use mbh_trace::check::{Check, OperationThread, ReuseThreads};
use mbh_trace::op::ReuseFound;
use mpi_sys::MPI_Datatype;
use std::os::raw::{c_int, c_void};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

/// Pending buffers watched (0: the hull below is empty).
static WATCHED: AtomicUsize = AtomicUsize::new(0);

/// Whether the program checks its accesses, so that buffers are worth
/// watching (`RuntimeConfig::watch_buffers`). Set once, before the first
/// MPI call the runtime follows.
static WATCHING: AtomicBool = AtomicBool::new(false);

/// Tells whether the program was built with the access checks.
pub fn set_watching(on: bool) {
    WATCHING.store(on, Ordering::Relaxed);
}

/// One past the highest byte of the buffers watched since the table was
/// last empty, 0 when it is: the instrumented program calls
/// [`mbhybrid_check_access`] only for an access below it (and ending
/// above [`mbhybrid_pending_lo`]), so a program with nothing pending pays
/// one load and a branch per access. The hull only grows while anything
/// is pending: a superset, never a missed buffer.
#[allow(non_upper_case_globals)]
#[unsafe(no_mangle)]
pub static mbhybrid_pending_hi: AtomicUsize = AtomicUsize::new(0);

/// What [`mbhybrid_pending_hi`] holds while nothing is pending: 0, or 1
/// once MPI was initialised at a level above `MPI_THREAD_SINGLE`. A loop
/// the build versioned runs its unchecked copy only while the hull is 0
/// (`instrument/src/versioning.rs`): with threads, another thread could
/// start an operation while this one is inside such a loop. 1 is below
/// every address, so the checks themselves still find nothing.
static HI_AT_REST: AtomicUsize = AtomicUsize::new(0);

/// Keeps the checked copy of every versioned loop in use from now on:
/// threads other than the one in a loop may call MPI.
pub fn threads_may_call_mpi() {
    HI_AT_REST.store(1, Ordering::Relaxed);
    // One writer (the thread calling MPI): raise an empty hull to 1.
    if mbhybrid_pending_hi.load(Ordering::Relaxed) == 0 {
        mbhybrid_pending_hi.store(1, Ordering::Release);
    }
}

/// The lowest byte of the buffers watched (`usize::MAX` when none).
#[allow(non_upper_case_globals)]
#[unsafe(no_mangle)]
pub static mbhybrid_pending_lo: AtomicUsize = AtomicUsize::new(usize::MAX);

/// The widest stretch inside the hull that no watched buffer touches
/// (`gap_lo..gap_hi`, `gap_hi` 0 when there is none): an access wholly
/// inside it calls nothing ([`crate::pending::Layout`]). Kept while at
/// most [`crate::pending::LAYOUT_BUFFERS`] buffers are watched.
#[allow(non_upper_case_globals)]
#[unsafe(no_mangle)]
pub static mbhybrid_pending_gap_lo: AtomicUsize = AtomicUsize::new(0);

/// One past the gap's last byte (0: no gap).
#[allow(non_upper_case_globals)]
#[unsafe(no_mangle)]
pub static mbhybrid_pending_gap_hi: AtomicUsize = AtomicUsize::new(0);

/// Watches the buffer of a nonblocking operation started by record
/// `record`, now in request slot `slot`: `count` elements of `datatype`
/// at `buffer`. Called by the thread calling MPI.
pub fn watch(
    slot: u32,
    record: Option<u64>,
    what: Pending,
    (buffer, count, datatype): (*const c_void, c_int, MPI_Datatype),
) {
    if !WATCHING.load(Ordering::Relaxed) || !record::recording() {
        return;
    }
    let Some((range, dense)) = crate::buffer_check::address_range_dense(buffer, count, datatype)
    else {
        return;
    };
    let record = record.unwrap_or(u64::MAX);
    let watched = if dense {
        PENDING.watch_exact(slot, range, what, record)
    } else {
        PENDING.watch(slot, range, what, record)
    };
    if watched {
        publish_watched([range]);
    }
}

/// Checks the buffer of a point-to-point call about to start against the
/// pending buffers: a send reads `count` elements of `datatype` at
/// `buffer` (`writes` false), a receive writes them. A send from the
/// buffer of a pending receive, or a receive into the buffer of a pending
/// send or receive, accesses memory MPI owns until that operation
/// completes (MPI-4.0 §3.7.2 and §3.7.3: the buffer of a pending
/// operation must not be accessed); MUST reports the same overlaps.
/// Recorded as a [`Check::BufferReuse`] at the call's site. Costs one
/// relaxed load when nothing is pending. Call it before the call watches
/// its own buffer.
pub fn check_call(buffer: *const c_void, count: c_int, datatype: MPI_Datatype, writes: bool) {
    if WATCHED.load(Ordering::Relaxed) == 0 || !watching() {
        return;
    }
    // Both buffers must be contiguous for their ranges to stand for their
    // bytes: a halo exchange's strided ghost column and interior column
    // have overlapping ranges and no byte in common.
    let Some(((start, end), true)) =
        crate::buffer_check::address_range_dense(buffer, count, datatype)
    else {
        return;
    };
    let site = record::peek_site();
    let Some(hit) = PENDING.hit_exact(start, end.saturating_sub(start), writes, || site) else {
        return;
    };
    report_hit(hit, writes, true);
}

/// Whether buffers are watched in this run: a nonblocking collective's
/// extents are worth computing only then.
pub fn watching() -> bool {
    WATCHING.load(Ordering::Relaxed) && record::recording()
}

/// Watches the buffers of a nonblocking collective started by record
/// `record`, now in request slot `slot`: each an address range and what
/// the program may not do to it ([`crate::coll_pending`]). Forgotten
/// together with the slot. Called by the thread calling MPI.
pub fn watch_all(slot: u32, record: Option<u64>, buffers: &[((usize, usize), Pending)]) {
    if !watching() || buffers.is_empty() {
        return;
    }
    if PENDING.watch_all(slot, buffers, record.unwrap_or(u64::MAX)) > 0 {
        publish_watched(buffers.iter().map(|&(range, _)| range));
    }
}

/// Watches the buffers of a one-sided operation started by record
/// `record` on the window and target `key` ([`crate::pending::Table::watch_keyed`]):
/// each an address range, what the program may not do to it, and whether
/// the operation uses every byte of it. `slot`: an `R` operation's request
/// slot, else [`crate::pending::NO_SLOT`]. The hull is published again
/// only when an entry was taken. Called by the thread calling MPI, only
/// while [`watching`].
pub fn watch_keyed(
    slot: u32,
    key: u64,
    record: Option<u64>,
    buffers: &[((usize, usize), Pending, bool)],
) {
    if PENDING.watch_keyed(slot, key, buffers, record.unwrap_or(u64::MAX)) > 0 {
        publish_watched(buffers.iter().map(|&(range, _, _)| range));
    }
}

/// Watches the memory `range` of a window in an exposure epoch under
/// `slot` (`rma_exposure.rs`'s, which no request has): it widens the
/// hull, so that the window's loads and stores reach
/// [`mbhybrid_check_access`], which notes them there. False when the
/// table is full. Called by the thread calling MPI, only while
/// [`watching`].
pub fn watch_exposed(slot: u32, range: (usize, usize)) -> bool {
    let watched = PENDING.watch(slot, range, Pending::Exposed, u64::MAX);
    if watched {
        publish_watched([range]);
    }
    watched
}

/// Stops watching the one-sided operations' buffers whose key `completed`
/// accepts ([`crate::pending::Table::forget_keyed`]). One relaxed load
/// when none is watched.
pub fn forget_keyed(completed: impl Fn(u64) -> bool) {
    if PENDING.forget_keyed(completed) > 0 {
        published_after_forget();
    }
}

/// Publishes the hull grown by `ranges`, just watched.
fn publish_watched(ranges: impl IntoIterator<Item = (usize, usize)>) {
    WATCHED.store(PENDING.live(), Ordering::Relaxed);
    // The new buffers may lie in the old gap: close it before the hull
    // grows, then publish the new one.
    mbhybrid_pending_gap_hi.store(0, Ordering::Release);
    // One writer (this thread): a load and a store, not a locked
    // read-modify-write.
    for (start, end) in ranges.into_iter().filter(|(start, end)| start < end) {
        if start < mbhybrid_pending_lo.load(Ordering::Relaxed) {
            mbhybrid_pending_lo.store(start, Ordering::Release);
        }
        if end > mbhybrid_pending_hi.load(Ordering::Relaxed) {
            mbhybrid_pending_hi.store(end, Ordering::Release);
        }
    }
    publish_layout();
}

/// Narrows the published hull to the live buffers and opens its widest
/// gap, when few enough buffers are live to sort them; else leaves the
/// (wider) hull as it is, with no gap.
fn publish_layout() {
    let Some(layout) = PENDING.layout() else {
        return;
    };
    mbhybrid_pending_lo.store(layout.lo, Ordering::Release);
    mbhybrid_pending_hi.store(layout.hi, Ordering::Release);
    mbhybrid_pending_gap_lo.store(layout.gap.0, Ordering::Release);
    mbhybrid_pending_gap_hi.store(layout.gap.1, Ordering::Release);
}

/// Stops watching the buffer of the request in `slot`, if any.
pub fn forget(slot: u32) {
    if WATCHED.load(Ordering::Relaxed) == 0 {
        return;
    }
    PENDING.forget(slot);
    published_after_forget();
}

/// Publishes the table's count and hull after entries were dropped.
fn published_after_forget() {
    let live = PENDING.live();
    WATCHED.store(live, Ordering::Relaxed);
    if live == 0 {
        // Empty: no access passes `address < rest`.
        mbhybrid_pending_hi.store(HI_AT_REST.load(Ordering::Relaxed), Ordering::Release);
        mbhybrid_pending_lo.store(usize::MAX, Ordering::Release);
        mbhybrid_pending_gap_hi.store(0, Ordering::Release);
    } else {
        publish_layout();
    }
}

/// The check's body: `size` bytes at `address` are read (`kind` 0) or
/// written (1) by the instruction before `return_address`.
#[cfg_attr(test, allow(dead_code))] // reached from the export only
extern "C" fn check_access(address: *const c_void, size: u64, kind: u32, return_address: usize) {
    if !record::recording() {
        return;
    }
    let write = kind != 0;
    let size = usize::try_from(size).unwrap_or(usize::MAX);
    // The site only for a hit: most checks find nothing.
    let site = || callsite::image().site_of(return_address as u64);
    // Window memory in an exposure epoch: noted, never a hit by itself.
    crate::rma_exposure::note(address as usize, size, write, site);
    let Some(hit) = PENDING.hit(address as usize, size, write, site) else {
        return;
    };
    report_hit(hit, write, false);
}

/// The threads of an access (this thread) that hit `hit`'s buffer.
fn access_threads(hit: &crate::pending::Hit) -> ReuseThreads {
    // SAFETY: `gettid` has no preconditions; a hit is rare, so the
    // system call is not on a path that runs per access.
    let access = unsafe { libc::gettid() };
    let operation = if hit.thread == crate::state::me() {
        OperationThread::Id(access)
    } else {
        crate::thread_level::main_thread_id(hit.thread)
            .map_or(OperationThread::Other, OperationThread::Id)
    };
    ReuseThreads { access, operation }
}

/// Records `hit`, met by a write (else a read) of an instrumented access
/// or, with `by_call`, of an MPI call's buffer, at the hit's site.
fn report_hit(hit: crate::pending::Hit, write: bool, by_call: bool) {
    let found = match (hit.what, write, by_call) {
        (Pending::Exposed, ..) => return, // never a hit (`Table::hit`)
        (Pending::Send, _, false) => ReuseFound::SendWritten,
        (Pending::Recv, false, false) => ReuseFound::RecvRead,
        (Pending::Recv, true, false) => ReuseFound::RecvWritten,
        (Pending::Send, _, true) => ReuseFound::CallWroteSend,
        (Pending::Recv, false, true) => ReuseFound::CallReadRecv,
        (Pending::Recv, true, true) => ReuseFound::CallWroteRecv,
    };
    let threads = if by_call {
        ReuseThreads::default()
    } else {
        access_threads(&hit)
    };
    checks::report(
        Check::BufferReuse {
            found,
            operation_record: hit.record,
            threads,
        },
        hit.site,
        u64::MAX,
    );
}

/// `mbhybrid_check_access(address, size, kind)`: called by the
/// instrumented program before an access inside the pending buffers'
/// hull. A trampoline like the MPI exports' (`lib.rs`): it passes its
/// return address, the instruction after the program's call, as the
/// body's fourth argument.
///
/// # Safety
///
/// Called with the three arguments above; `address` is not dereferenced.
#[cfg(target_arch = "x86_64")]
#[cfg_attr(not(test), unsafe(no_mangle))]
#[cfg_attr(test, allow(dead_code))] // unit tests do not export it
#[unsafe(naked)]
pub unsafe extern "C" fn mbhybrid_check_access(address: *const c_void, size: u64, kind: u32) {
    // rcx is the fourth argument register; `[rsp]` is the return address
    // the `call` pushed.
    core::arch::naked_asm!(
        "mov rcx, qword ptr [rsp]",
        "jmp {body}",
        body = sym check_access,
    )
}

/// `mbhybrid_check_access(address, size, kind)` where there is no
/// trampoline: the access's site is unknown (0).
///
/// # Safety
///
/// Called with the three arguments above; `address` is not dereferenced.
#[cfg(not(target_arch = "x86_64"))]
#[cfg_attr(not(test), unsafe(no_mangle))]
#[cfg_attr(test, allow(dead_code))] // unit tests do not export it
pub unsafe extern "C" fn mbhybrid_check_access(address: *const c_void, size: u64, kind: u32) {
    check_access(address, size, kind, 0)
}
