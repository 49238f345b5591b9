//! The memory of this rank's windows while they are exposed, watched by
//! the access check ([`crate::access`]) so that `verify` can tell the
//! process's own loads and stores of it from the remote operations of
//! the same epoch (MPI-4.0 §12.7: a local store to window
//! memory conflicts with any remote access to those bytes in the same
//! exposure epoch, a local load with a remote `MPI_Put` or accumulate).
//!
//! An exposure epoch is opened by `MPI_Win_fence` (unless it asserts
//! `MPI_MODE_NOSUCCEED`, §12.5.1) or `MPI_Win_post` (§12.5.2), and closed
//! by the next fence, `MPI_Win_wait`, an `MPI_Win_test` that returns
//! true, or `MPI_Win_free`. While it is open, the window's memory is an
//! entry of the pending table
//! ([`crate::pending::Pending::Exposed`]), which only widens
//! the hull the instrumented program tests; the check then calls
//! [`note`], which merges the access into the epoch's load or store
//! ranges. When the epoch closes, [`close`] writes one
//! [`WindowAccess`] record per range, before the closing call's record,
//! so a record's place in the trace says its epoch.
//!
//! A loop over an array makes one range (an access that starts inside
//! or at the end of the range last grown extends it without a search);
//! [`RANGES`] ranges are kept per kind, and past them the two closest are
//! merged and marked coarse, so `verify` never claims bytes it does not
//! know. Nothing here allocates: fixed slots, each behind a lock only
//! its window's accesses and the thread calling MPI take (an access may
//! come from any thread).
//!
//! Passive target epochs (locks) are not watched: the window is exposed
//! whenever an origin holds a lock, which its owner does not see.

use crate::access;
use crate::record;
use mbh_trace::window_access::WindowAccess;
use std::cell::UnsafeCell;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

/// Windows exposed at once, per rank; more are recorded as unwatched.
pub const EXPOSED: usize = 8;

/// Ranges kept per window, epoch and kind (loads, stores).
pub const RANGES: usize = 32;

/// The pending table's slot of exposure slot `i`: far above any
/// request's (`slots.rs`), below [`crate::pending::NO_SLOT`].
fn table_slot(i: usize) -> u32 {
    u32::MAX - 1 - i as u32
}

/// Bytes `lo..hi` of a window (offsets from its base), the site of the
/// first access that made them, and whether they were merged past
/// [`RANGES`] (`coarse`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Range {
    /// The first byte.
    pub lo: usize,
    /// One past the last.
    pub hi: usize,
    /// The first access's site.
    pub site: u32,
    /// Merged with a neighbour: may hold bytes no access touched.
    pub coarse: bool,
}

const EMPTY: Range = Range {
    lo: 0,
    hi: 0,
    site: 0,
    coarse: false,
};

/// Disjoint, non-adjacent ranges sorted by first byte.
#[derive(Debug)]
pub struct Ranges {
    n: usize,
    /// The range the last access grew: a loop's next access extends it.
    last: usize,
    at: [Range; RANGES],
}

impl Ranges {
    /// No range.
    pub const fn new() -> Ranges {
        Ranges {
            n: 0,
            last: 0,
            at: [EMPTY; RANGES],
        }
    }

    /// The ranges, in order.
    pub fn ranges(&self) -> &[Range] {
        &self.at[..self.n]
    }

    /// Adds bytes `lo..hi` (`lo < hi`), touched by the access at `site()`
    /// (asked only when they start a range).
    pub fn add(&mut self, lo: usize, hi: usize, site: impl FnOnce() -> u32) {
        // A loop walking up an array: inside the last range or just past it.
        if let Some(r) = self.at[..self.n].get_mut(self.last) {
            if r.lo <= lo && lo <= r.hi {
                r.hi = r.hi.max(hi);
                self.merge_from(self.last);
                return;
            }
        }
        // The first range that ends at or after `lo`.
        let i = self.at[..self.n].partition_point(|r| r.hi < lo);
        if i < self.n && self.at[i].lo <= hi {
            let r = &mut self.at[i];
            r.lo = r.lo.min(lo);
            r.hi = r.hi.max(hi);
            self.merge_from(i);
            return;
        }
        if self.n == RANGES {
            // The merged range may now reach the access: add it again.
            self.coarsen();
            return self.add(lo, hi, site);
        }
        self.at.copy_within(i..self.n, i + 1);
        self.at[i] = Range {
            lo,
            hi,
            site: site(),
            coarse: false,
        };
        self.n += 1;
        self.last = i;
    }

    /// Merges range `i`, just grown, with the ones after it it reaches.
    fn merge_from(&mut self, i: usize) {
        let mut j = i + 1;
        while j < self.n && self.at[j].lo <= self.at[i].hi {
            self.at[i].hi = self.at[i].hi.max(self.at[j].hi);
            self.at[i].coarse |= self.at[j].coarse;
            j += 1;
        }
        if j > i + 1 {
            self.at.copy_within(j..self.n, i + 1);
            self.n -= j - (i + 1);
        }
        self.last = i;
    }

    /// Makes room: merges the two neighbours with the smallest gap, the
    /// result marked coarse (it holds the gap's bytes, which no access
    /// touched).
    #[cold]
    fn coarsen(&mut self) {
        let Some(i) =
            (0..self.n.saturating_sub(1)).min_by_key(|&i| self.at[i + 1].lo - self.at[i].hi)
        else {
            return;
        };
        self.at[i].hi = self.at[i + 1].hi;
        self.at[i].coarse = true;
        self.at[i].coarse |= self.at[i + 1].coarse;
        self.at.copy_within(i + 2..self.n, i + 1);
        self.n -= 1;
        self.last = i;
    }

    fn clear(&mut self) {
        self.n = 0;
        self.last = 0;
    }
}

impl Default for Ranges {
    fn default() -> Self {
        Self::new()
    }
}

/// One exposed window's epoch.
struct Exposure {
    /// The window's id (0: the slot is free).
    window: u64,
    /// Opened by `MPI_Win_post` (else a fence).
    pscw: bool,
    loads: Ranges,
    stores: Ranges,
}

/// A slot: the exposed bytes, readable without the lock, and the epoch.
struct Slot {
    /// The window's base address, 0 when the slot is free.
    base: AtomicUsize,
    /// One past its last byte.
    end: AtomicUsize,
    /// Held while `state` is read or written: a spin lock, as the section
    /// it guards is a few dozen instructions and an unlock is a plain
    /// store (a `Mutex`'s is a locked exchange, a third of an access's
    /// cost); threads sweeping one window together spin, never sleep.
    busy: AtomicBool,
    state: UnsafeCell<Exposure>,
}

// SAFETY: `state` is reached only through [`lock`], which holds `busy`.
unsafe impl Sync for Slot {}

/// A slot's epoch, held until dropped.
struct Held<'a> {
    slot: &'a Slot,
}

impl std::ops::Deref for Held<'_> {
    type Target = Exposure;
    fn deref(&self) -> &Exposure {
        // SAFETY: `busy` is ours until `self` drops.
        unsafe { &*self.slot.state.get() }
    }
}

impl std::ops::DerefMut for Held<'_> {
    fn deref_mut(&mut self) -> &mut Exposure {
        // SAFETY: as above, and `&mut self` is the only way in.
        unsafe { &mut *self.slot.state.get() }
    }
}

impl Drop for Held<'_> {
    fn drop(&mut self) {
        self.slot.busy.store(false, Ordering::Release);
    }
}

static SLOTS: [Slot; EXPOSED] = [const {
    Slot {
        base: AtomicUsize::new(0),
        end: AtomicUsize::new(0),
        busy: AtomicBool::new(false),
        state: UnsafeCell::new(Exposure {
            window: 0,
            pscw: false,
            loads: Ranges::new(),
            stores: Ranges::new(),
        }),
    }
}; EXPOSED];

/// One past the highest slot in use (0: none): the access check looks at
/// the slots below it only (one, for a program with one window), and at
/// none while nothing is exposed. Written by the thread calling MPI only.
static HIGH: AtomicUsize = AtomicUsize::new(0);

/// The slot's epoch, once no other thread holds it.
fn lock(slot: &Slot) -> Held<'_> {
    let mut spins = 0u32;
    while slot
        .busy
        .compare_exchange_weak(false, true, Ordering::Acquire, Ordering::Relaxed)
        .is_err()
    {
        spins += 1;
        if spins.is_multiple_of(64) {
            // The holder may be descheduled (more threads than cores).
            std::thread::yield_now();
        } else {
            std::hint::spin_loop();
        }
    }
    Held { slot }
}

/// Notes an access of `size` bytes at `address` (`write`: a store) made
/// at `site()`, if it touches an exposed window. Called by the access
/// check, from any thread; one relaxed load when nothing is exposed.
#[inline]
pub fn note(address: usize, size: usize, write: bool, site: impl Fn() -> u32) {
    let high = HIGH.load(Ordering::Acquire).min(EXPOSED);
    if high == 0 {
        return;
    }
    let end = address.saturating_add(size.max(1));
    for slot in &SLOTS[..high] {
        let base = slot.base.load(Ordering::Acquire);
        let top = slot.end.load(Ordering::Relaxed);
        if base == 0 || end <= base || address >= top {
            continue;
        }
        let mut epoch = lock(slot);
        // Closed meanwhile: its base is 0 again (under the lock).
        if slot.base.load(Ordering::Relaxed) != base {
            continue;
        }
        let (lo, hi) = (address.max(base) - base, end.min(top) - base);
        let ranges = if write {
            &mut epoch.stores
        } else {
            &mut epoch.loads
        };
        ranges.add(lo, hi, &site);
    }
}

/// Opens an exposure epoch of window `window` (`pscw`: by
/// `MPI_Win_post`) over its `size` bytes at `base`. Only when the program
/// checks its accesses; a window without memory is not watched. When no
/// slot or table entry is left, the epoch is recorded as unwatched at
/// once (its place in the trace is still inside the epoch). Called by the
/// thread calling MPI, after the opening call returned.
pub(crate) fn open(window: u64, (base, size): (usize, usize), pscw: bool) {
    if window == 0 || base == 0 || size == 0 || !access::watching() {
        return;
    }
    close(window);
    let free = SLOTS
        .iter()
        .position(|s| s.base.load(Ordering::Relaxed) == 0 && lock(s).window == 0);
    let end = base.saturating_add(size);
    let watched = free.filter(|&i| access::watch_exposed(table_slot(i), (base, end)));
    let Some(i) = watched else {
        unwatched(window, pscw);
        return;
    };
    let slot = &SLOTS[i];
    {
        let mut epoch = lock(slot);
        epoch.window = window;
        epoch.pscw = pscw;
        epoch.loads.clear();
        epoch.stores.clear();
    }
    slot.end.store(end, Ordering::Relaxed);
    slot.base.store(base, Ordering::Release);
    if HIGH.load(Ordering::Relaxed) <= i {
        HIGH.store(i + 1, Ordering::Release);
    }
}

/// Records that window `window`'s epoch could not be watched.
fn unwatched(window: u64, pscw: bool) {
    record::append(|| {
        WindowAccess {
            window,
            bytes: (0, 0),
            store: false,
            coarse: false,
            pscw,
            unwatched: true,
            site: 0,
        }
        .record()
    });
}

/// Closes window `window`'s exposure epoch, if one is open: writes its
/// ranges ([`WindowAccess`] records) and stops watching its memory.
/// Called by the thread calling MPI before the closing call's record.
pub(crate) fn close(window: u64) {
    if HIGH.load(Ordering::Relaxed) == 0 || window == 0 {
        return;
    }
    for (i, slot) in SLOTS.iter().enumerate() {
        if slot.base.load(Ordering::Relaxed) == 0 {
            continue;
        }
        let mut epoch = lock(slot);
        if epoch.window != window {
            continue;
        }
        slot.base.store(0, Ordering::Release);
        access::forget(table_slot(i));
        let pscw = epoch.pscw;
        for (ranges, store) in [(&epoch.loads, false), (&epoch.stores, true)] {
            for r in ranges.ranges() {
                record::append(|| {
                    WindowAccess {
                        window,
                        bytes: (r.lo as u64, r.hi as u64),
                        store,
                        coarse: r.coarse,
                        pscw,
                        unwatched: false,
                        site: r.site,
                    }
                    .record()
                });
            }
        }
        epoch.window = 0;
        drop(epoch);
        let high = SLOTS
            .iter()
            .rposition(|s| s.base.load(Ordering::Relaxed) != 0)
            .map_or(0, |last| last + 1);
        HIGH.store(high, Ordering::Release);
        return;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spans(r: &Ranges) -> Vec<(usize, usize, u32, bool)> {
        r.ranges()
            .iter()
            .map(|r| (r.lo, r.hi, r.site, r.coarse))
            .collect()
    }

    #[test]
    fn a_loop_over_an_array_makes_one_range_with_its_first_site() {
        let mut r = Ranges::new();
        for i in 0..1000 {
            r.add(i * 8, i * 8 + 8, || 7 + i as u32);
        }
        assert_eq!(spans(&r), [(0, 8000, 7, false)]);
        // Downwards too, through the search.
        let mut r = Ranges::new();
        for i in (0..100).rev() {
            r.add(i * 4, i * 4 + 4, || 1);
        }
        assert_eq!(spans(&r), [(0, 400, 1, false)]);
    }

    #[test]
    fn disjoint_accesses_stay_apart_and_join_when_the_gap_fills() {
        let mut r = Ranges::new();
        r.add(0, 4, || 1);
        r.add(16, 20, || 2);
        r.add(8, 12, || 3);
        assert_eq!(
            spans(&r),
            [(0, 4, 1, false), (8, 12, 3, false), (16, 20, 2, false)]
        );
        r.add(4, 16, || 4);
        assert_eq!(spans(&r), [(0, 20, 1, false)], "one range, first site");
    }

    #[test]
    fn past_the_room_the_closest_neighbours_merge_coarse() {
        let mut r = Ranges::new();
        // A column of a matrix: every 64th byte, more than the room.
        for i in 0..RANGES {
            r.add(i * 64, i * 64 + 4, || i as u32);
        }
        assert!(r.ranges().iter().all(|x| !x.coarse));
        r.add(RANGES * 64 + 8, RANGES * 64 + 12, || 99);
        assert_eq!(r.ranges().len(), RANGES);
        let coarse: Vec<_> = r.ranges().iter().filter(|x| x.coarse).collect();
        assert_eq!(coarse.len(), 1, "one merge");
        assert_eq!(r.ranges().last().map(|x| x.site), Some(99));
        // Bytes never touched are never claimed exact.
        let gap = (5, 60);
        assert!(r
            .ranges()
            .iter()
            .filter(|x| x.lo < gap.1 && gap.0 < x.hi)
            .all(|x| x.coarse));
    }
}
