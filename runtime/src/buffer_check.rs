//! The runtime half of the buffer check: before a call goes to MPI,
//! whether its `count` elements of its datatype (by the datatype's true
//! extent, so derived types too) reach past the end of the buffer's
//! object. The object's size comes from the heap table ([`crate::heap`]:
//! a buffer that starts a block the program's own code allocated) or from
//! the static analysis ([`RoomAtCall`]: the room left in a local or global
//! object at a call whose datatype or count `build` could not check).
//! A call that does not fit is recorded as a
//! [`LocalCheck::BufferOverflow`](mbh_trace::op::LocalCheck::BufferOverflow), even when the message that arrives is
//! short. Nothing here changes what the call does.

use crate::checks;
use crate::consts::SUCCESS;
use crate::handle::HandleBits;
use mbh_trace::check::Check;
use mbh_trace::config::RoomAtCall;
use mbh_trace::static_report::BufferAccess;
use mpi_sys::{MPI_Count, MPI_Datatype};
use std::os::raw::{c_int, c_void};
use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};
use std::sync::OnceLock;

/// The rooms of the run's configuration, ordered by site and access.
static ROOMS: OnceLock<Vec<RoomAtCall>> = OnceLock::new();

/// Keeps the rooms `verify` computed (once, at start).
pub fn set_rooms(mut rooms: Vec<RoomAtCall>) {
    rooms.sort();
    let _ = ROOMS.set(rooms);
}

/// The room the static analysis gave buffer `access` of the call at `site`.
fn room(site: u32, access: BufferAccess) -> Option<u64> {
    let rooms = ROOMS.get()?;
    let at = rooms
        .binary_search_by(|r| (r.site, r.access).cmp(&(site, access)))
        .ok()?;
    rooms.get(at).map(|r| r.bytes)
}

/// The bytes from a buffer's address that `count` elements of `datatype`
/// cover (the last element's true end), or `None` when MPI cannot say.
fn bytes_covered(count: c_int, datatype: MPI_Datatype) -> Option<u64> {
    if count <= 0 {
        return Some(0);
    }
    let (_, end) = true_span(count, datatype)?;
    u64::try_from(end).ok()
}

/// The bytes, as offsets from a buffer's address, that `count` (> 0)
/// elements of `datatype` touch: from the first element's true lower
/// bound to the last element's true end (`MPI_Type_get_true_extent`), or
/// `None` when MPI cannot say.
fn true_span(count: c_int, datatype: MPI_Datatype) -> Option<(i128, i128)> {
    let e = extents(datatype)?;
    let end = i128::from(e.true_lb)
        + i128::from(count - 1) * i128::from(e.extent)
        + i128::from(e.true_extent);
    Some((i128::from(e.true_lb).min(end), end))
}

/// What [`true_span`] needs of a datatype.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Extents {
    extent: MPI_Count,
    true_lb: MPI_Count,
    true_extent: MPI_Count,
    /// `MPI_Type_size`: the bytes of data one element holds.
    size: MPI_Count,
}

impl Extents {
    /// Whether `count` elements touch every byte of their span: no holes
    /// inside an element, none between elements.
    fn dense(&self, count: c_int) -> bool {
        self.true_extent == self.size && (count <= 1 || self.extent == self.size)
    }
}

/// The extents of `datatype`, asked of MPI once per handle while it stays
/// in [`CACHE`] (two calls into MPI on every checked call were a tenth of
/// the runtime's instructions per small message).
fn extents(datatype: MPI_Datatype) -> Option<Extents> {
    let bits = datatype.bits();
    if let Some(e) = CACHE.get(bits) {
        return Some(e);
    }
    let (mut lb, mut extent): (MPI_Count, MPI_Count) = (0, 0);
    let (mut true_lb, mut true_extent): (MPI_Count, MPI_Count) = (0, 0);
    let mut size: MPI_Count = 0;
    // SAFETY: valid out-parameters; an invalid datatype returns an error
    // (the runtime sets MPI_ERRORS_RETURN), and is then not checked here.
    let ok = unsafe {
        mpi_sys::PMPI_Type_get_extent_x(datatype, &mut lb, &mut extent) == SUCCESS
            && mpi_sys::PMPI_Type_get_true_extent_x(datatype, &mut true_lb, &mut true_extent)
                == SUCCESS
            && mpi_sys::PMPI_Type_size_x(datatype, &mut size) == SUCCESS
    };
    if !ok {
        return None;
    }
    let e = Extents {
        extent,
        true_lb,
        true_extent,
        size,
    };
    CACHE.put(bits, e);
    Some(e)
}

/// Forgets what is known of a datatype being freed (its handle may name
/// another type next).
pub fn forget_type(datatype: MPI_Datatype) {
    CACHE.forget(datatype.bits());
    PASSED.clear();
}

/// Checks of heap buffers that passed, remembered: the same buffer,
/// count and datatype again (a program's loop), with no allocation or
/// free noted since ([`crate::heap::generation`]), passes again without
/// looking the block up. Atomics only because it is a static, as for
/// [`CACHE`].
struct Passed {
    /// Per entry: buffer, count, datatype bits, heap generation + 1
    /// (0: empty).
    entries: [[AtomicU64; 4]; PASSED_CHECKS],
    next: AtomicU64,
}

/// Entries of [`PASSED`]: a send buffer and a receive buffer.
const PASSED_CHECKS: usize = 2;

static PASSED: Passed = Passed {
    entries: [const { [const { AtomicU64::new(0) }; 4] }; PASSED_CHECKS],
    next: AtomicU64::new(0),
};

impl Passed {
    fn key(
        buffer: *const c_void,
        count: c_int,
        datatype: MPI_Datatype,
        generation: usize,
    ) -> [u64; 4] {
        [
            buffer as usize as u64,
            u64::from(count as u32),
            datatype.bits(),
            (generation as u64).wrapping_add(1),
        ]
    }

    #[inline]
    fn contains(&self, key: [u64; 4]) -> bool {
        self.entries
            .iter()
            .any(|e| (0..4).all(|k| e[k].load(Ordering::Relaxed) == key[k]))
    }

    fn insert(&self, key: [u64; 4]) {
        let at = self.next.load(Ordering::Relaxed) as usize % PASSED_CHECKS;
        self.next.store(at as u64 + 1, Ordering::Relaxed);
        for (word, value) in self.entries[at].iter().zip(key) {
            word.store(value, Ordering::Relaxed);
        }
    }

    fn clear(&self) {
        for e in &self.entries {
            e[3].store(0, Ordering::Relaxed);
        }
    }
}

/// Entries of [`CACHE`] (a power of two).
const CACHED_TYPES: usize = 8;

/// The extents of the datatypes used last, direct-mapped by handle.
/// Atomics only because it is a static: one thread calls MPI (the
/// runtime's rule), so each entry has one writer and no reader elsewhere.
struct ExtentCache {
    /// Handle bits + 1 (0: empty).
    keys: [AtomicU64; CACHED_TYPES],
    values: [[AtomicI64; 4]; CACHED_TYPES],
}

static CACHE: ExtentCache = ExtentCache {
    keys: [const { AtomicU64::new(0) }; CACHED_TYPES],
    values: [const { [const { AtomicI64::new(0) }; 4] }; CACHED_TYPES],
};

impl ExtentCache {
    fn entry(bits: u64) -> usize {
        (bits.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 32) as usize % CACHED_TYPES
    }

    fn get(&self, bits: u64) -> Option<Extents> {
        let i = Self::entry(bits);
        if self.keys[i].load(Ordering::Relaxed) != bits.wrapping_add(1) {
            return None;
        }
        let [extent, true_lb, true_extent, size] = &self.values[i];
        Some(Extents {
            extent: extent.load(Ordering::Relaxed),
            true_lb: true_lb.load(Ordering::Relaxed),
            true_extent: true_extent.load(Ordering::Relaxed),
            size: size.load(Ordering::Relaxed),
        })
    }

    fn put(&self, bits: u64, e: Extents) {
        let i = Self::entry(bits);
        let [extent, true_lb, true_extent, size] = &self.values[i];
        extent.store(e.extent, Ordering::Relaxed);
        size.store(e.size, Ordering::Relaxed);
        true_lb.store(e.true_lb, Ordering::Relaxed);
        true_extent.store(e.true_extent, Ordering::Relaxed);
        self.keys[i].store(bits.wrapping_add(1), Ordering::Relaxed);
    }

    fn forget(&self, bits: u64) {
        let i = Self::entry(bits);
        if self.keys[i].load(Ordering::Relaxed) == bits.wrapping_add(1) {
            self.keys[i].store(0, Ordering::Relaxed);
        }
    }
}

/// The address range `count` elements of `datatype` at `buffer` touch
/// (for a derived datatype with holes, its whole true extent), or `None`
/// when it is empty or MPI cannot say.
pub fn address_range(
    buffer: *const c_void,
    count: c_int,
    datatype: MPI_Datatype,
) -> Option<(usize, usize)> {
    if count <= 0 {
        return None;
    }
    let (first, end) = true_span(count, datatype)?;
    let base = buffer as usize as i128;
    let start = usize::try_from(base + first).ok()?;
    let end = usize::try_from(base + end).ok()?;
    (end > start).then_some((start, end))
}

/// The bytes `count` elements of `datatype` hold, and its true lower
/// bound, when they leave no holes (MPI-4.0 §5.1); `None` otherwise or
/// when MPI cannot say. From the cache of extents: no call into MPI for a
/// datatype used lately.
pub fn dense_bytes(count: c_int, datatype: MPI_Datatype) -> Option<(i64, i64)> {
    let e = extents(datatype)?;
    (count >= 0 && e.dense(count)).then(|| (i64::from(count) * e.size, e.true_lb))
}

/// [`address_range`], and whether the elements use every byte of it (a
/// contiguous datatype): only then can the range stand for the bytes.
pub fn address_range_dense(
    buffer: *const c_void,
    count: c_int,
    datatype: MPI_Datatype,
) -> Option<((usize, usize), bool)> {
    let range = address_range(buffer, count, datatype)?;
    let dense = extents(datatype).is_some_and(|e| e.dense(count));
    Some((range, dense))
}

/// Records a [`LocalCheck::BufferOverflow`](mbh_trace::op::LocalCheck::BufferOverflow) at the current call when
/// `count` elements of `datatype` from `buffer` reach past the end of its
/// object, as far as the runtime knows the object. Call before the call
/// goes to MPI.
pub fn check_fits(
    buffer: *const c_void,
    count: c_int,
    datatype: MPI_Datatype,
    access: BufferAccess,
) {
    if !crate::heap::any_noted() && ROOMS.get().is_none_or(|rooms| rooms.is_empty()) {
        return; // nothing known of any buffer
    }
    if buffer == crate::consts::in_place().cast_const() {
        return; // no buffer: the receive buffer is the send buffer, checked as such
    }
    let generation = crate::heap::generation();
    let passed = Passed::key(buffer, count, datatype, generation);
    if PASSED.contains(passed) {
        return;
    }
    let site = crate::record::peek_site();
    // The heap block the buffer starts, else the static analysis's room
    // for the call.
    let known = match crate::heap::block_size(buffer) {
        Some(size) => Some((size as u64, false)),
        None => room(site, access).map(|bytes| (bytes, true)),
    };
    let Some((size, from_room)) = known else {
        return;
    };
    let Some(covered) = bytes_covered(count, datatype) else {
        return;
    };
    if covered <= size && !from_room {
        PASSED.insert(passed);
    }
    if covered > size {
        checks::report(
            Check::BufferOverflow {
                access,
                from_room,
                object_bytes: size,
                count,
                covered_bytes: covered,
            },
            site,
            u64::MAX,
        );
    }
}
