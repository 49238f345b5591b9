//! One-sided communication (RMA, MPI-4.0 chapter 12): the bodies
//! of the window, synchronization and operation exports `lib.rs` lists.
//! Each calls its `PMPI_` function with the program's arguments and
//! returns its result unchanged, and records one event
//! ([`OpKind::WinCreate`] ... [`OpKind::RgetAccumulate`]; the fields:
//! `mbh_trace::rma`) from which `verify` checks the epochs (MPI-4.0
//! §12.5) and the races between operations (§12.7): an operation's record
//! holds the bytes it touches on its target (three datatype queries, no
//! allocation), a window's its displacement unit. Nothing here changes
//! what MPI does: no piggyback, no clock.
//!
//! Windows get ids per rank as they are made (1, 2, ...), so a record
//! names its window the same way in every run of the program; a target
//! rank is recorded as a rank of `MPI_COMM_WORLD`, translated once, when
//! the window is made. An operation's record costs a scan of the window
//! table (programs hold few windows), no lock, no allocation.
//!
//! When the program checks its loads and stores, an operation's origin
//! and result buffers are watched until the call that completes it at the
//! origin, and the synchronization calls forget those they complete
//! (`rma_watch.rs`; MPI-4.0 §12.5, §12.7); and a window's memory is
//! watched from the fence or `MPI_Win_post` that opens an exposure epoch
//! to the call that closes it, whose record its ranges precede
//! (`rma_exposure.rs`).

use crate::consts::{comm_world, proc_null, undefined, SUCCESS};
use crate::handle::HandleBits;
use crate::record;
use crate::rma_watch::{Buffer, Buffers, Placed};
use crate::state::active;
use mbh_trace::op::flags;
use mbh_trace::rank_trace::RawOp;
use mbh_trace::rma::{assert, RmaLock};
use mbh_trace::OpKind;
use mpi_sys::{
    MPI_Aint, MPI_Comm, MPI_Datatype, MPI_Group, MPI_Info, MPI_Op, MPI_Request, MPI_Win,
};
use std::cell::UnsafeCell;
use std::os::raw::{c_int, c_void};
use std::sync::atomic::{AtomicBool, Ordering};

unsafe extern "C" {
    fn mbhybrid_rt_rma_consts(out: *mut c_int);
}

/// A window this rank made and has not freed.
struct Window {
    /// The handle's bits.
    handle: u64,
    /// Its id on this rank.
    id: u64,
    /// Its communicator.
    comm: MPI_Comm,
    /// The world rank of each rank of its communicator (-1: none).
    world: Vec<i32>,
    /// Its memory on this rank: base address and bytes ((0, 0) for a
    /// dynamic window), watched during exposure epochs
    /// (`rma_exposure.rs`).
    memory: (usize, usize),
}

// SAFETY: an MPI handle (an `int` or, in Open MPI, a pointer) names a
// process-wide object; the table only compares and returns it, under its
// lock.
unsafe impl Send for Window {}

/// The windows, and the id the next one gets.
struct Windows {
    live: Vec<Window>,
    next: u64,
}

/// The window table, claimed by one caller at a time without a lock: the
/// runtime assumes one thread calls MPI at a time (`record.rs`), and a
/// second caller meanwhile (a thread calling MPI concurrently) finds it
/// claimed and records the window as unknown.
struct Table {
    busy: AtomicBool,
    windows: UnsafeCell<Windows>,
}

// SAFETY: `windows` is only reached by the caller that set `busy`.
unsafe impl Sync for Table {}

static WINDOWS: Table = Table {
    busy: AtomicBool::new(false),
    windows: UnsafeCell::new(Windows {
        live: Vec::new(),
        next: 1,
    }),
};

/// Releases the table when dropped (after `f` returns or unwinds).
struct Release;

impl Drop for Release {
    fn drop(&mut self) {
        WINDOWS.busy.store(false, Ordering::Release);
    }
}

/// Runs `f` on the window table; `None` when another caller holds it.
fn windows<R>(f: impl FnOnce(&mut Windows) -> R) -> Option<R> {
    if WINDOWS.busy.swap(true, Ordering::Acquire) {
        return None;
    }
    let _release = Release;
    // SAFETY: `busy` is ours until `_release` drops.
    Some(f(unsafe { &mut *WINDOWS.windows.get() }))
}

/// The communicator of window `win`, whose error handler MPI applied to
/// a failed call on it (`MPI_COMM_WORLD` for a window not in the table).
pub(crate) fn comm_of(win: MPI_Win) -> MPI_Comm {
    let bits = win.bits();
    windows(|w| w.live.iter().find(|w| w.handle == bits).map(|w| w.comm))
        .flatten()
        .unwrap_or_else(comm_world)
}

/// [`comm_of`] the window `win` points to (after a failed `MPI_Win_free`,
/// which leaves it).
pub(crate) fn comm_behind(win: *mut MPI_Win) -> MPI_Comm {
    if win.is_null() {
        return comm_world();
    }
    // SAFETY: non-null: the program's window handle.
    comm_of(unsafe { *win })
}

/// What a record says of the window `win` and the target `target` (a
/// rank of its communicator): (window id, communicator bits, peer, flags).
/// Unknown windows (made before tracing, or not windows: MPI reports
/// those) get id 0.
fn place(win: MPI_Win, target: Option<c_int>) -> (u64, u64, i32, u16) {
    let bits = win.bits();
    let (id, comm, peer) = windows(|w| {
        let window = w.live.iter().find(|w| w.handle == bits)?;
        let peer = target
            .and_then(|t| usize::try_from(t).ok())
            .and_then(|t| window.world.get(t).copied())
            .unwrap_or(-1);
        Some((window.id, window.comm.bits(), peer))
    })
    .flatten()
    .unwrap_or((0, 0, -1));
    let flags = match target {
        Some(t) if t == proc_null() => flags::PROC_NULL,
        _ => 0,
    };
    (id, comm, peer, flags)
}

/// A record of `kind` on `win`; `target` a rank of its communicator.
fn event(kind: OpKind, win: MPI_Win, target: Option<c_int>) -> RawOp {
    let (id, comm, peer, flags) = place(win, target);
    RawOp {
        kind: kind as u16,
        flags,
        site: record::site(),
        peer,
        comm,
        request: id,
        ..RawOp::default()
    }
}

/// Records `op` around `call` (`blocking`: it may wait for other ranks,
/// so a rank stuck in it shows where). Returns what `call` returned.
#[inline]
fn recorded(op: impl FnOnce() -> RawOp, blocking: bool, call: impl FnOnce() -> c_int) -> c_int {
    recorded_then(op, blocking, call, |_, _| {})
}

/// As [`recorded`] for an `R` operation (`MPI_Rput`, ...): the request it
/// returns is followed like a nonblocking send's, so that the completion
/// calls release it and `MPI_Finalize` reports it when the program never
/// completed it (`RequestLeak`, at the operation; MPI-4.0 §12.4.5: an
/// `R` operation's request must be completed like any other).
/// Its `buffers` are watched under the request's slot as well as the
/// window's key (`rma_watch.rs`).
fn recorded_request(
    op: impl FnOnce() -> RawOp,
    (request, buffers): (*mut MPI_Request, Buffers),
    call: impl FnOnce() -> c_int,
) -> c_int {
    if !active() {
        return call();
    }
    let (index, placed, rc) = begin_call(op, false, call);
    record::finish(index, rc, false, |_| {});
    if rc == SUCCESS && !request.is_null() {
        // SAFETY: non-null, just written by MPI.
        let handle = unsafe { *request };
        TO_FOLLOW.with(|f| {
            f.set(Some(Follow {
                index,
                request: handle,
                placed,
                buffers,
            }))
        });
    }
    rc
}

/// What [`follow_requests`] hands on of an `R` operation.
#[derive(Clone, Copy)]
struct Follow {
    /// Its record.
    index: Option<u64>,
    /// The request MPI made.
    request: MPI_Request,
    /// Its window and target (`None` when not recorded).
    placed: Option<Placed>,
    /// Its buffers.
    buffers: Buffers,
}

thread_local! {
    /// The request an `R` operation just made, for [`follow_requests`]:
    /// the operation runs holding the runtime's state, so the export
    /// hands it to the engine once the call is done.
    static TO_FOLLOW: std::cell::Cell<Option<Follow>> = const { std::cell::Cell::new(None) };
}

/// Hands the request an `R` operation of this call made, if any, to the
/// engine ([`crate::engine::Rt::follow_request`]), and watches its
/// buffers under the request's slot, which its completion releases.
/// Called by the RMA exports with the state they hold.
pub(crate) fn follow_requests(rt: &mut crate::engine::Rt) {
    if let Some(follow) = TO_FOLLOW.with(|f| f.take()) {
        let slot = rt.follow_request(follow.index, follow.request);
        if let Some(placed) = follow.placed {
            crate::rma_watch::started(follow.index, placed, &follow.buffers, Some(slot));
        }
    }
}

/// Records `op` (`blocking` as for [`recorded`]) and makes `call`:
/// (the record, where the record put the call, what `call` returned).
/// The caller finishes the record.
#[inline]
fn begin_call(
    op: impl FnOnce() -> RawOp,
    blocking: bool,
    call: impl FnOnce() -> c_int,
) -> (Option<u64>, Option<Placed>, c_int) {
    let mut placed = None;
    let index = record::begin(
        || {
            let raw = op();
            placed = Some(Placed::of(&raw));
            raw
        },
        blocking,
    );
    (index, placed, call())
}

/// As [`recorded`], then `fill` adds what the call returned to the record.
/// A synchronization call then forgets the buffers of the operations it
/// completed at the origin (`rma_watch.rs`), after MPI returned.
#[inline]
fn recorded_then(
    op: impl FnOnce() -> RawOp,
    blocking: bool,
    call: impl FnOnce() -> c_int,
    fill: impl FnOnce(&mut RawOp, c_int),
) -> c_int {
    if !active() {
        return call();
    }
    let (index, placed, rc) = begin_call(op, blocking, call);
    record::finish(index, rc, blocking, |op| fill(op, rc));
    if let Some(placed) = placed {
        crate::rma_watch::synchronized(placed);
    }
    rc
}

/// As [`recorded`] for an operation without a request: when MPI took it,
/// its `buffers` are watched until the call that completes it
/// (`rma_watch.rs`; MPI-4.0 §12.7).
#[inline]
fn recorded_operation(
    op: impl FnOnce() -> RawOp,
    buffers: Buffers,
    call: impl FnOnce() -> c_int,
) -> c_int {
    if !active() {
        return call();
    }
    let (index, placed, rc) = begin_call(op, false, call);
    record::finish(index, rc, false, |_| {});
    if let (SUCCESS, Some(placed)) = (rc, placed) {
        crate::rma_watch::started(index, placed, &buffers, None);
    }
    rc
}

/// MPI's lock types and fence asserts, in `mbhybrid_rt_rma_consts`'s
/// order.
fn consts() -> [c_int; 4] {
    let mut out = [0; 4];
    // SAFETY: the shim writes four ints.
    unsafe { mbhybrid_rt_rma_consts(out.as_mut_ptr()) };
    out
}

/// The trace's code of MPI lock type `lock_type` (0: not a lock type).
fn lock_code(lock_type: c_int) -> i32 {
    let [exclusive, shared, ..] = consts();
    if lock_type == exclusive {
        RmaLock::Exclusive as i32
    } else if lock_type == shared {
        RmaLock::Shared as i32
    } else {
        0
    }
}

/// The trace's assert bits of MPI assert `assert_arg`.
fn assert_bits(assert_arg: c_int) -> i32 {
    let [_, _, nosucceed, noprecede] = consts();
    let mut bits = 0;
    if assert_arg & nosucceed != 0 {
        bits |= assert::NOSUCCEED;
    }
    if assert_arg & noprecede != 0 {
        bits |= assert::NOPRECEDE;
    }
    bits
}

/// The world rank of each rank of `comm` (-1 where MPI cannot say).
fn world_ranks(comm: MPI_Comm) -> Vec<i32> {
    // SAFETY: an immutable C constant of mpi-sys's shim.
    let null = unsafe { mpi_sys::RSMPI_GROUP_NULL };
    let (mut group, mut world) = (null, null);
    let mut size: c_int = 0;
    // SAFETY: `comm` made a window just now; the groups are ours and freed
    // below.
    let ok = unsafe {
        mpi_sys::PMPI_Comm_group(comm, &mut group) == SUCCESS
            && mpi_sys::PMPI_Comm_group(comm_world(), &mut world) == SUCCESS
            && mpi_sys::PMPI_Group_size(group, &mut size) == SUCCESS
    };
    let n = usize::try_from(size).unwrap_or(0);
    let ranks: Vec<c_int> = (0..size).collect();
    let mut out = vec![-1; n];
    let translated = ok && {
        // SAFETY: `ranks` and `out` hold `size` ints each.
        let rc = unsafe {
            mpi_sys::PMPI_Group_translate_ranks(
                group,
                size,
                ranks.as_ptr(),
                world,
                out.as_mut_ptr(),
            )
        };
        rc == SUCCESS
    };
    if !translated {
        out.fill(-1);
    }
    for g in [&mut group, &mut world] {
        if g.bits() != null.bits() {
            // SAFETY: a group made above.
            unsafe { mpi_sys::PMPI_Group_free(g) };
        }
    }
    let undefined = undefined();
    out.iter()
        .map(|&r| if r == undefined { -1 } else { r })
        .collect()
}

/// Records the making of a window by `call` on `comm` and, when MPI made
/// it, enters it in the table.
/// `disp_unit` and `size`: the window's displacement unit and bytes (0
/// for a dynamic window), recorded as `count` and `aux` (`mbh_trace::rma`).
/// `base()`: the window's base address, asked once MPI made it.
fn make(
    kind: OpKind,
    comm: MPI_Comm,
    (disp_unit, size): (c_int, MPI_Aint),
    (win, base): (*mut MPI_Win, impl FnOnce() -> usize),
    call: impl FnOnce() -> c_int,
) -> c_int {
    if !active() {
        return call();
    }
    let id = windows(|w| {
        w.next += 1;
        w.next - 1
    })
    .unwrap_or(0);
    let op = || RawOp {
        kind: kind as u16,
        site: record::site(),
        peer: -1,
        comm: comm.bits(),
        request: id,
        count: disp_unit,
        aux: size as u64,
        ..RawOp::default()
    };
    recorded_then(op, true, call, |_, rc| {
        if rc != SUCCESS || win.is_null() || id == 0 {
            return;
        }
        // SAFETY: MPI wrote the new window's handle.
        let handle = unsafe { *win }.bits();
        let world = world_ranks(comm);
        let memory = (base(), usize::try_from(size).unwrap_or(0));
        windows(|w| {
            w.live.push(Window {
                handle,
                id,
                comm,
                world,
                memory,
            })
        });
    })
}

pub(crate) unsafe fn win_create(
    base: *mut c_void,
    size: MPI_Aint,
    disp_unit: c_int,
    info: MPI_Info,
    comm: MPI_Comm,
    win: *mut MPI_Win,
) -> c_int {
    let memory = || base as usize;
    // SAFETY: the caller's arguments, passed on unchanged.
    let call = || unsafe { mpi_sys::PMPI_Win_create(base, size, disp_unit, info, comm, win) };
    make(
        OpKind::WinCreate,
        comm,
        (disp_unit, size),
        (win, memory),
        call,
    )
}

/// The base address `MPI_Win_allocate` (or `_shared`) wrote through
/// `baseptr` (0 when it is null).
fn allocated_base(baseptr: *mut c_void) -> usize {
    if baseptr.is_null() {
        return 0;
    }
    // SAFETY: non-null: MPI-4.0 §12.2.2, `baseptr` is the address of a
    // pointer, which MPI just wrote.
    unsafe { *baseptr.cast::<*mut c_void>() as usize }
}

pub(crate) unsafe fn win_allocate(
    size: MPI_Aint,
    disp_unit: c_int,
    info: MPI_Info,
    comm: MPI_Comm,
    baseptr: *mut c_void,
    win: *mut MPI_Win,
) -> c_int {
    // SAFETY: the caller's arguments, passed on unchanged.
    make(
        OpKind::WinAllocate,
        comm,
        (disp_unit, size),
        (win, || allocated_base(baseptr)),
        || unsafe { mpi_sys::PMPI_Win_allocate(size, disp_unit, info, comm, baseptr, win) },
    )
}

pub(crate) unsafe fn win_allocate_shared(
    size: MPI_Aint,
    disp_unit: c_int,
    info: MPI_Info,
    comm: MPI_Comm,
    baseptr: *mut c_void,
    win: *mut MPI_Win,
) -> c_int {
    // SAFETY: the caller's arguments, passed on unchanged.
    make(
        OpKind::WinAllocateShared,
        comm,
        (disp_unit, size),
        (win, || allocated_base(baseptr)),
        || unsafe { mpi_sys::PMPI_Win_allocate_shared(size, disp_unit, info, comm, baseptr, win) },
    )
}

pub(crate) unsafe fn win_create_dynamic(
    info: MPI_Info,
    comm: MPI_Comm,
    win: *mut MPI_Win,
) -> c_int {
    // SAFETY: the caller's arguments, passed on unchanged.
    make(
        OpKind::WinCreateDynamic,
        comm,
        (0, 0),
        (win, || 0),
        || unsafe { mpi_sys::PMPI_Win_create_dynamic(info, comm, win) },
    )
}

pub(crate) unsafe fn win_free(win: *mut MPI_Win) -> c_int {
    // SAFETY: the caller's arguments, passed on unchanged.
    let call = || unsafe { mpi_sys::PMPI_Win_free(win) };
    if !active() || win.is_null() {
        return call();
    }
    // SAFETY: non-null: the program's window, read before MPI nulls it.
    let handle = unsafe { *win };
    // Freeing ends any exposure epoch left open (an `rma-epoch` error
    // itself): its ranges are recorded before the call's.
    exposing(handle, true, None, || SUCCESS);
    recorded_then(
        || event(OpKind::WinFree, handle, None),
        true,
        call,
        |_, rc| {
            if rc == SUCCESS {
                windows(|w| w.live.retain(|w| w.handle != handle.bits()));
            }
        },
    )
}

/// The id and memory of window `win` (`None`: not in the table).
fn memory_of(win: MPI_Win) -> Option<(u64, (usize, usize))> {
    let bits = win.bits();
    windows(|w| {
        w.live
            .iter()
            .find(|w| w.handle == bits)
            .map(|w| (w.id, w.memory))
    })
    .flatten()
}

/// Makes `call`, a synchronization call on `win` that may close its
/// exposure epoch (`closes`: the epoch's ranges are recorded before the
/// call's own record) and open the next one (`opens`: `Some(pscw)`),
/// once MPI returned success (`rma_exposure.rs`; MPI-4.0 §12.5.1,
/// §12.5.2: the window is exposed from the fence or `MPI_Win_post` that
/// opens the epoch to the call that ends it). Only when the program
/// checks its accesses.
fn exposing(
    win: MPI_Win,
    closes: bool,
    opens: Option<bool>,
    call: impl FnOnce() -> c_int,
) -> c_int {
    if !active() || !crate::access::watching() {
        return call();
    }
    let known = memory_of(win);
    if let (true, Some((id, _))) = (closes, known) {
        crate::rma_exposure::close(id);
    }
    let rc = call();
    if let (SUCCESS, Some(pscw), Some((id, memory))) = (rc, opens, known) {
        crate::rma_exposure::open(id, memory, pscw);
    }
    rc
}

pub(crate) unsafe fn win_fence(assert_arg: c_int, win: MPI_Win) -> c_int {
    let tag = assert_bits(assert_arg);
    let op = || RawOp {
        tag,
        ..event(OpKind::WinFence, win, None)
    };
    // A fence ends the epoch before it and, unless it asserts that none
    // follows, starts the next (MPI-4.0 §12.5.1).
    let opens = (tag & assert::NOSUCCEED == 0).then_some(false);
    exposing(win, true, opens, || {
        // SAFETY: the caller's arguments, passed on unchanged.
        recorded(op, true, || unsafe {
            mpi_sys::PMPI_Win_fence(assert_arg, win)
        })
    })
}

pub(crate) unsafe fn win_lock(
    lock_type: c_int,
    rank: c_int,
    assert_arg: c_int,
    win: MPI_Win,
) -> c_int {
    let op = || RawOp {
        tag: assert_bits(assert_arg),
        count: lock_code(lock_type),
        ..event(OpKind::WinLock, win, Some(rank))
    };
    // SAFETY: the caller's arguments, passed on unchanged.
    recorded(op, true, || unsafe {
        mpi_sys::PMPI_Win_lock(lock_type, rank, assert_arg, win)
    })
}

pub(crate) unsafe fn win_unlock(rank: c_int, win: MPI_Win) -> c_int {
    // SAFETY: the caller's arguments, passed on unchanged.
    recorded(
        || event(OpKind::WinUnlock, win, Some(rank)),
        true,
        || unsafe { mpi_sys::PMPI_Win_unlock(rank, win) },
    )
}

pub(crate) unsafe fn win_lock_all(assert_arg: c_int, win: MPI_Win) -> c_int {
    let op = || RawOp {
        tag: assert_bits(assert_arg),
        ..event(OpKind::WinLockAll, win, None)
    };
    // SAFETY: the caller's arguments, passed on unchanged.
    recorded(op, true, || unsafe {
        mpi_sys::PMPI_Win_lock_all(assert_arg, win)
    })
}

pub(crate) unsafe fn win_unlock_all(win: MPI_Win) -> c_int {
    // SAFETY: the caller's arguments, passed on unchanged.
    recorded(
        || event(OpKind::WinUnlockAll, win, None),
        true,
        || unsafe { mpi_sys::PMPI_Win_unlock_all(win) },
    )
}

/// The size of `group` (0 when MPI cannot say: MPI reports the handle).
fn group_size(group: MPI_Group) -> i32 {
    let mut size = 0;
    // SAFETY: a query; an invalid handle is an error MPI returns.
    if unsafe { mpi_sys::PMPI_Group_size(group, &mut size) } != SUCCESS {
        return 0;
    }
    size
}

/// The world ranks of `group` as a bit set (`mbh_trace::rma::GROUP_RANKS`
/// of them at most), 0 when it has more, one not below that bound, or MPI
/// cannot say: unknown. No allocation: the ranks fit on the stack.
fn group_bits(group: MPI_Group) -> u64 {
    const MAX: usize = mbh_trace::rma::GROUP_RANKS as usize;
    let size = group_size(group);
    let Some(n) = usize::try_from(size).ok().filter(|&n| n <= MAX) else {
        return 0;
    };
    let ranks: [c_int; MAX] = std::array::from_fn(|i| i as c_int);
    let mut world = [-1 as c_int; MAX];
    // SAFETY: an immutable C constant of mpi-sys's shim.
    let mut world_group = unsafe { mpi_sys::RSMPI_GROUP_NULL };
    // SAFETY: `ranks` and `world` hold at least `size` ints; the world
    // group is ours and freed below.
    let ok = unsafe {
        mpi_sys::PMPI_Comm_group(comm_world(), &mut world_group) == SUCCESS
            && mpi_sys::PMPI_Group_translate_ranks(
                group,
                size,
                ranks.as_ptr(),
                world_group,
                world.as_mut_ptr(),
            ) == SUCCESS
    };
    // SAFETY: a group made above (freeing the null group is skipped).
    if world_group.bits() != unsafe { mpi_sys::RSMPI_GROUP_NULL }.bits() {
        // SAFETY: as above.
        unsafe { mpi_sys::PMPI_Group_free(&mut world_group) };
    }
    let mut bits = 0u64;
    for &rank in &world[..n] {
        match u32::try_from(rank) {
            Ok(r) if ok && r < mbh_trace::rma::GROUP_RANKS => bits |= 1 << r,
            _ => return 0,
        }
    }
    bits
}

pub(crate) unsafe fn win_post(group: MPI_Group, assert_arg: c_int, win: MPI_Win) -> c_int {
    let op = || RawOp {
        tag: assert_bits(assert_arg),
        count: group_size(group),
        aux: group_bits(group),
        ..event(OpKind::WinPost, win, None)
    };
    exposing(win, true, Some(true), || {
        // SAFETY: the caller's arguments, passed on unchanged.
        recorded(op, false, || unsafe {
            mpi_sys::PMPI_Win_post(group, assert_arg, win)
        })
    })
}

pub(crate) unsafe fn win_start(group: MPI_Group, assert_arg: c_int, win: MPI_Win) -> c_int {
    let op = || RawOp {
        tag: assert_bits(assert_arg),
        count: group_size(group),
        aux: group_bits(group),
        ..event(OpKind::WinStart, win, None)
    };
    // SAFETY: the caller's arguments, passed on unchanged.
    recorded(op, true, || unsafe {
        mpi_sys::PMPI_Win_start(group, assert_arg, win)
    })
}

pub(crate) unsafe fn win_complete(win: MPI_Win) -> c_int {
    // SAFETY: the caller's arguments, passed on unchanged.
    recorded(
        || event(OpKind::WinComplete, win, None),
        true,
        || unsafe { mpi_sys::PMPI_Win_complete(win) },
    )
}

pub(crate) unsafe fn win_wait(win: MPI_Win) -> c_int {
    exposing(win, true, None, || {
        // SAFETY: the caller's arguments, passed on unchanged.
        recorded(
            || event(OpKind::WinWait, win, None),
            true,
            || unsafe { mpi_sys::PMPI_Win_wait(win) },
        )
    })
}

/// `MPI_Win_test`, recorded only when it ends the exposure epoch or fails
/// (a polling loop would fill the trace otherwise, as with `MPI_Test`).
pub(crate) unsafe fn win_test(win: MPI_Win, flag: *mut c_int) -> c_int {
    // SAFETY: the caller's arguments, passed on unchanged.
    let rc = unsafe { mpi_sys::PMPI_Win_test(win, flag) };
    // SAFETY: MPI wrote the flag when it returned success.
    let ended = rc == SUCCESS && !flag.is_null() && unsafe { *flag } != 0;
    if active() && (ended || rc != SUCCESS) {
        if ended {
            // The exposure epoch is over: its ranges go before the record.
            exposing(win, true, None, || SUCCESS);
        }
        record::append(|| RawOp {
            flags: flags::RETURNED | if rc == SUCCESS { 0 } else { flags::FAILED },
            error: rc,
            count: i32::from(ended),
            ..event(OpKind::WinTest, win, None)
        });
    }
    rc
}

/// Defines the bodies of synchronization calls on one target or none,
/// which record nothing but the call: `name(args) => Kind, PMPI_x,
/// window, target`.
macro_rules! plain_sync {
    ($( $name:ident($($arg:ident: $ty:ty),*) => $kind:ident, $pmpi:ident, $win:expr, $target:expr; )*) => {
        $(
            pub(crate) unsafe fn $name($($arg: $ty),*) -> c_int {
                // SAFETY: the caller's arguments, passed on unchanged.
                recorded(|| event(OpKind::$kind, $win, $target), false, || unsafe {
                    mpi_sys::$pmpi($($arg),*)
                })
            }
        )*
    };
}

plain_sync! {
    win_flush(rank: c_int, win: MPI_Win) => WinFlush, PMPI_Win_flush, win, Some(rank);
    win_flush_all(win: MPI_Win) => WinFlushAll, PMPI_Win_flush_all, win, None;
    win_flush_local(rank: c_int, win: MPI_Win) => WinFlushLocal, PMPI_Win_flush_local, win, Some(rank);
    win_flush_local_all(win: MPI_Win) => WinFlushLocalAll, PMPI_Win_flush_local_all, win, None;
    win_sync(win: MPI_Win) => WinSync, PMPI_Win_sync, win, None;
}

/// The record of an operation on `win`'s `target` at displacement `disp`
/// of `count` elements of `datatype` on the target: its bytes when the
/// datatype has no holes (`mbh_trace::rma::TargetData`), and for the
/// accumulate family the reduction `acc_op` and the basic datatype (of
/// the target datatype, or of `origin` when the target's is derived:
/// MPI-4.0 §12.3.4 wants both built of the same one).
#[inline]
#[allow(clippy::too_many_arguments)]
fn operation(
    kind: OpKind,
    win: MPI_Win,
    target: c_int,
    disp: MPI_Aint,
    count: c_int,
    datatype: MPI_Datatype,
    acc: Option<(u8, MPI_Datatype)>,
) -> RawOp {
    let (len, lb) = target_bytes(count, datatype);
    let (acc_op, basic) = match acc {
        Some((op, origin)) => {
            let code = |t: MPI_Datatype| {
                crate::consts::predefined_type_index(t).and_then(|i| u8::try_from(i + 1).ok())
            };
            (op, code(datatype).or_else(|| code(origin)).unwrap_or(0))
        }
        None => (0, 0),
    };
    RawOp {
        count: len,
        tag: mbh_trace::rma::operation_tag(acc_op, basic, lb),
        aux: disp as u64,
        ..event(kind, win, Some(target))
    }
}

/// The bytes `count` elements of `datatype` cover on the target, and the
/// datatype's true lower bound: (-1, 0) when they have holes (MPI-4.0
/// §5.1: a size below the true extent, or elements farther apart than
/// they are long), do not fit the record, or MPI cannot say. From the
/// runtime's cache of extents (`buffer_check`): no call into MPI for a
/// datatype used lately.
fn target_bytes(count: c_int, datatype: MPI_Datatype) -> (i32, i16) {
    match crate::buffer_check::dense_bytes(count, datatype) {
        Some((len, lb)) => match (i32::try_from(len), i16::try_from(lb)) {
            (Ok(len), Ok(lb)) => (len, lb),
            _ => (-1, 0),
        },
        None => (-1, 0),
    }
}

/// The origin buffer of an accumulate-family operation with reduction
/// `op`, which MPI reads: none for `MPI_NO_OP`, whose origin MPI ignores
/// (MPI-4.0 §12.3.4), nor when no buffer is watched (the reduction's code
/// costs a look-up).
fn acc_origin(
    op: MPI_Op,
    addr: *const c_void,
    count: c_int,
    datatype: MPI_Datatype,
) -> Option<Buffer> {
    if !crate::access::watching() || acc_code(op) == mbh_trace::rma::acc_op::NO_OP {
        return None;
    }
    Buffer::read(addr, count, datatype)
}

/// The trace's code of reduction `op` (`mbh_trace::rma::acc_op`).
fn acc_code(op: MPI_Op) -> u8 {
    crate::consts::predefined_op_index(op)
        .and_then(|i| u8::try_from(i + 1).ok())
        .unwrap_or(0)
}

#[allow(clippy::too_many_arguments)] // MPI's signature
pub(crate) unsafe fn put(
    origin_addr: *const c_void,
    origin_count: c_int,
    origin_datatype: MPI_Datatype,
    target_rank: c_int,
    target_disp: MPI_Aint,
    target_count: c_int,
    target_datatype: MPI_Datatype,
    win: MPI_Win,
) -> c_int {
    let op = || {
        operation(
            OpKind::Put,
            win,
            target_rank,
            target_disp,
            target_count,
            target_datatype,
            None,
        )
    };
    let buffers = [
        Buffer::read(origin_addr, origin_count, origin_datatype),
        None,
        None,
    ];
    // SAFETY: the caller's arguments, passed on unchanged.
    recorded_operation(op, buffers, || unsafe {
        mpi_sys::PMPI_Put(
            origin_addr,
            origin_count,
            origin_datatype,
            target_rank,
            target_disp,
            target_count,
            target_datatype,
            win,
        )
    })
}

#[allow(clippy::too_many_arguments)] // MPI's signature
pub(crate) unsafe fn get(
    origin_addr: *mut c_void,
    origin_count: c_int,
    origin_datatype: MPI_Datatype,
    target_rank: c_int,
    target_disp: MPI_Aint,
    target_count: c_int,
    target_datatype: MPI_Datatype,
    win: MPI_Win,
) -> c_int {
    let op = || {
        operation(
            OpKind::Get,
            win,
            target_rank,
            target_disp,
            target_count,
            target_datatype,
            None,
        )
    };
    let buffers = [
        Buffer::written(origin_addr, origin_count, origin_datatype),
        None,
        None,
    ];
    // SAFETY: the caller's arguments, passed on unchanged.
    recorded_operation(op, buffers, || unsafe {
        mpi_sys::PMPI_Get(
            origin_addr,
            origin_count,
            origin_datatype,
            target_rank,
            target_disp,
            target_count,
            target_datatype,
            win,
        )
    })
}

#[allow(clippy::too_many_arguments)] // MPI's signature
pub(crate) unsafe fn accumulate(
    origin_addr: *const c_void,
    origin_count: c_int,
    origin_datatype: MPI_Datatype,
    target_rank: c_int,
    target_disp: MPI_Aint,
    target_count: c_int,
    target_datatype: MPI_Datatype,
    op: MPI_Op,
    win: MPI_Win,
) -> c_int {
    let record = || {
        operation(
            OpKind::Accumulate,
            win,
            target_rank,
            target_disp,
            target_count,
            target_datatype,
            Some((acc_code(op), origin_datatype)),
        )
    };
    let buffers = [
        acc_origin(op, origin_addr, origin_count, origin_datatype),
        None,
        None,
    ];
    // SAFETY: the caller's arguments, passed on unchanged.
    recorded_operation(record, buffers, || unsafe {
        mpi_sys::PMPI_Accumulate(
            origin_addr,
            origin_count,
            origin_datatype,
            target_rank,
            target_disp,
            target_count,
            target_datatype,
            op,
            win,
        )
    })
}

#[allow(clippy::too_many_arguments)] // MPI's signature
pub(crate) unsafe fn get_accumulate(
    origin_addr: *const c_void,
    origin_count: c_int,
    origin_datatype: MPI_Datatype,
    result_addr: *mut c_void,
    result_count: c_int,
    result_datatype: MPI_Datatype,
    target_rank: c_int,
    target_disp: MPI_Aint,
    target_count: c_int,
    target_datatype: MPI_Datatype,
    op: MPI_Op,
    win: MPI_Win,
) -> c_int {
    let record = || {
        operation(
            OpKind::GetAccumulate,
            win,
            target_rank,
            target_disp,
            target_count,
            target_datatype,
            Some((acc_code(op), origin_datatype)),
        )
    };
    let buffers = [
        acc_origin(op, origin_addr, origin_count, origin_datatype),
        Buffer::written(result_addr, result_count, result_datatype),
        None,
    ];
    // SAFETY: the caller's arguments, passed on unchanged.
    recorded_operation(record, buffers, || unsafe {
        mpi_sys::PMPI_Get_accumulate(
            origin_addr,
            origin_count,
            origin_datatype,
            result_addr,
            result_count,
            result_datatype,
            target_rank,
            target_disp,
            target_count,
            target_datatype,
            op,
            win,
        )
    })
}

#[allow(clippy::too_many_arguments)] // MPI's signature
pub(crate) unsafe fn fetch_and_op(
    origin_addr: *const c_void,
    result_addr: *mut c_void,
    datatype: MPI_Datatype,
    target_rank: c_int,
    target_disp: MPI_Aint,
    op: MPI_Op,
    win: MPI_Win,
) -> c_int {
    let record = || {
        operation(
            OpKind::FetchAndOp,
            win,
            target_rank,
            target_disp,
            1,
            datatype,
            Some((acc_code(op), datatype)),
        )
    };
    let buffers = [
        acc_origin(op, origin_addr, 1, datatype),
        Buffer::written(result_addr, 1, datatype),
        None,
    ];
    // SAFETY: the caller's arguments, passed on unchanged.
    recorded_operation(record, buffers, || unsafe {
        mpi_sys::PMPI_Fetch_and_op(
            origin_addr,
            result_addr,
            datatype,
            target_rank,
            target_disp,
            op,
            win,
        )
    })
}

#[allow(clippy::too_many_arguments)] // MPI's signature
pub(crate) unsafe fn compare_and_swap(
    origin_addr: *const c_void,
    compare_addr: *const c_void,
    result_addr: *mut c_void,
    datatype: MPI_Datatype,
    target_rank: c_int,
    target_disp: MPI_Aint,
    win: MPI_Win,
) -> c_int {
    let record = || {
        operation(
            OpKind::CompareAndSwap,
            win,
            target_rank,
            target_disp,
            1,
            datatype,
            Some((mbh_trace::rma::acc_op::COMPARE_AND_SWAP, datatype)),
        )
    };
    let buffers = [
        Buffer::read(origin_addr, 1, datatype),
        Buffer::read(compare_addr, 1, datatype),
        Buffer::written(result_addr, 1, datatype),
    ];
    // SAFETY: the caller's arguments, passed on unchanged.
    recorded_operation(record, buffers, || unsafe {
        mpi_sys::PMPI_Compare_and_swap(
            origin_addr,
            compare_addr,
            result_addr,
            datatype,
            target_rank,
            target_disp,
            win,
        )
    })
}

#[allow(clippy::too_many_arguments)] // MPI's signature
pub(crate) unsafe fn rput(
    origin_addr: *const c_void,
    origin_count: c_int,
    origin_datatype: MPI_Datatype,
    target_rank: c_int,
    target_disp: MPI_Aint,
    target_count: c_int,
    target_datatype: MPI_Datatype,
    win: MPI_Win,
    request: *mut MPI_Request,
) -> c_int {
    let op = || {
        operation(
            OpKind::Rput,
            win,
            target_rank,
            target_disp,
            target_count,
            target_datatype,
            None,
        )
    };
    let buffers = [
        Buffer::read(origin_addr, origin_count, origin_datatype),
        None,
        None,
    ];
    // SAFETY: the caller's arguments, passed on unchanged.
    recorded_request(op, (request, buffers), || unsafe {
        mpi_sys::PMPI_Rput(
            origin_addr,
            origin_count,
            origin_datatype,
            target_rank,
            target_disp,
            target_count,
            target_datatype,
            win,
            request,
        )
    })
}

#[allow(clippy::too_many_arguments)] // MPI's signature
pub(crate) unsafe fn rget(
    origin_addr: *mut c_void,
    origin_count: c_int,
    origin_datatype: MPI_Datatype,
    target_rank: c_int,
    target_disp: MPI_Aint,
    target_count: c_int,
    target_datatype: MPI_Datatype,
    win: MPI_Win,
    request: *mut MPI_Request,
) -> c_int {
    let op = || {
        operation(
            OpKind::Rget,
            win,
            target_rank,
            target_disp,
            target_count,
            target_datatype,
            None,
        )
    };
    let buffers = [
        Buffer::written(origin_addr, origin_count, origin_datatype),
        None,
        None,
    ];
    // SAFETY: the caller's arguments, passed on unchanged.
    recorded_request(op, (request, buffers), || unsafe {
        mpi_sys::PMPI_Rget(
            origin_addr,
            origin_count,
            origin_datatype,
            target_rank,
            target_disp,
            target_count,
            target_datatype,
            win,
            request,
        )
    })
}

#[allow(clippy::too_many_arguments)] // MPI's signature
pub(crate) unsafe fn raccumulate(
    origin_addr: *const c_void,
    origin_count: c_int,
    origin_datatype: MPI_Datatype,
    target_rank: c_int,
    target_disp: MPI_Aint,
    target_count: c_int,
    target_datatype: MPI_Datatype,
    op: MPI_Op,
    win: MPI_Win,
    request: *mut MPI_Request,
) -> c_int {
    let record = || {
        operation(
            OpKind::Raccumulate,
            win,
            target_rank,
            target_disp,
            target_count,
            target_datatype,
            Some((acc_code(op), origin_datatype)),
        )
    };
    let buffers = [
        acc_origin(op, origin_addr, origin_count, origin_datatype),
        None,
        None,
    ];
    // SAFETY: the caller's arguments, passed on unchanged.
    recorded_request(record, (request, buffers), || unsafe {
        mpi_sys::PMPI_Raccumulate(
            origin_addr,
            origin_count,
            origin_datatype,
            target_rank,
            target_disp,
            target_count,
            target_datatype,
            op,
            win,
            request,
        )
    })
}

#[allow(clippy::too_many_arguments)] // MPI's signature
pub(crate) unsafe fn rget_accumulate(
    origin_addr: *const c_void,
    origin_count: c_int,
    origin_datatype: MPI_Datatype,
    result_addr: *mut c_void,
    result_count: c_int,
    result_datatype: MPI_Datatype,
    target_rank: c_int,
    target_disp: MPI_Aint,
    target_count: c_int,
    target_datatype: MPI_Datatype,
    op: MPI_Op,
    win: MPI_Win,
    request: *mut MPI_Request,
) -> c_int {
    let record = || {
        operation(
            OpKind::RgetAccumulate,
            win,
            target_rank,
            target_disp,
            target_count,
            target_datatype,
            Some((acc_code(op), origin_datatype)),
        )
    };
    let buffers = [
        acc_origin(op, origin_addr, origin_count, origin_datatype),
        Buffer::written(result_addr, result_count, result_datatype),
        None,
    ];
    // SAFETY: the caller's arguments, passed on unchanged.
    recorded_request(record, (request, buffers), || unsafe {
        mpi_sys::PMPI_Rget_accumulate(
            origin_addr,
            origin_count,
            origin_datatype,
            result_addr,
            result_count,
            result_datatype,
            target_rank,
            target_disp,
            target_count,
            target_datatype,
            op,
            win,
            request,
        )
    })
}
