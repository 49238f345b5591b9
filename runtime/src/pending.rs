//! The buffers of pending nonblocking sends and receives, for the access
//! check ([`crate::access`]; seed 000 §2.3.6.3, Fig 2.9).
//!
//! An entry is made when an `MPI_Isend` (`Ibsend`, `Issend`, `Irsend`, a
//! started persistent send) or `MPI_Irecv` (a started persistent receive)
//! is under way, keyed by its request slot (`slots.rs`), and dropped when
//! the slot is released (the program's `Wait`/`Test` completed it, or the
//! runtime did) or the program frees the request. A nonblocking collective
//! has up to two buffers (what it reads, what it writes): its entries are
//! linked in a ring ([`Table::watch_all`]), so forgetting the slot drops
//! them all while a point-to-point request, alone in its ring, pays one
//! load more.
//!
//! A one-sided operation's buffers (MPI-4.0 §12.3; `rma_watch.rs`) carry
//! a key, their window and target, besides a slot: the synchronization
//! call that completes them drops every entry of its window, or of its
//! window and target ([`Table::forget_keyed`], a scan of the entries in
//! use), and an `R` operation's are dropped by its request's slot too.
//! They take at most half the table, so a loop of
//! puts in one epoch does not crowd out the nonblocking calls' buffers.
//!
//! # Threads
//!
//! Entries are made and dropped by the thread calling MPI (one at a time,
//! `record.rs`); any thread may look them up, from instrumented code. An
//! entry's words are written before its `start` is published (Release),
//! and a reader checks `start` again after reading them, as `heap.rs`
//! does. Nothing here allocates or blocks; a full table leaves the buffer
//! unwatched (fewer checks, never a crash).

use std::sync::atomic::{AtomicU16, AtomicU32, AtomicU64, AtomicUsize, Ordering};

/// Pending buffers followed per rank; more are not watched.
pub const ENTRIES: usize = 256;

/// Access sites reported per pending request; further ones are not.
pub const SITES_PER_REQUEST: usize = 4;

/// The slot of an entry no request owns (a one-sided operation without a
/// request): no request's slot is this, so only its key drops it.
pub const NO_SLOT: u32 = u32::MAX;

/// Request slots below this find their entry without a scan (a program
/// with more requests in flight than this pays a scan to forget one).
const DIRECT_SLOTS: usize = 4096;

/// What the program may not do to a pending buffer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pending {
    /// A send's: writing it.
    Send,
    /// A receive's: reading or writing it.
    Recv,
    /// A window's memory in an exposure epoch (`rma_exposure.rs`): its
    /// loads and stores are noted there, not reported here, so no look-up
    /// meets it; the entry only keeps it inside the published hull.
    Exposed,
}

/// An [`Entry::what`] bit: the operation uses every byte of its range.
const EXACT: u32 = 8;

/// An [`Entry::what`]: `what`, and [`EXACT`] when `exact`.
fn what_bits(what: Pending, exact: bool) -> u32 {
    (what as u32 + 1) | if exact { EXACT } else { 0 }
}

/// A buffer to watch: its range, what the program may not do to it, and
/// whether the operation uses every byte of it.
pub type BufferUse = ((usize, usize), Pending, bool);

/// One pending buffer: bytes `start..end`, `start` 0 when the entry is
/// free.
struct Entry {
    start: AtomicUsize,
    end: AtomicUsize,
    /// The request's slot id.
    slot: AtomicU32,
    /// 1 send, 2 receive, with [`EXACT`] when every byte of the range is
    /// the operation's.
    what: AtomicU32,
    /// The record of the call that started it (`u64::MAX`: none).
    record: AtomicU64,
    /// A one-sided operation's window and target ([`Table::forget_keyed`];
    /// 0: not one).
    key: AtomicU64,
    /// The next entry of the same request (its index + 1; 0: the entry is
    /// the request's only one). Written and read by the thread calling
    /// MPI only; 0 whenever the entry is free (`forget` clears a ring's),
    /// so a point-to-point watch need not write it.
    next: AtomicU16,
    /// Access sites already reported against this request (0: none).
    reported: [AtomicU32; SITES_PER_REQUEST],
    /// The starting thread's token (`state::me`: its thread pointer, read
    /// without a system call), to name it when another thread hits the
    /// buffer.
    thread: AtomicU64,
}

impl Entry {
    const fn new() -> Self {
        Entry {
            start: AtomicUsize::new(0),
            end: AtomicUsize::new(0),
            slot: AtomicU32::new(0),
            what: AtomicU32::new(0),
            record: AtomicU64::new(u64::MAX),
            key: AtomicU64::new(0),
            next: AtomicU16::new(0),
            reported: [const { AtomicU32::new(0) }; SITES_PER_REQUEST],
            thread: AtomicU64::new(0),
        }
    }
}

/// Where the pending buffers lie, for the instrumented program's inline
/// test: their hull `lo..hi`, and the widest stretch inside it that no
/// buffer touches, `gap.0..gap.1` (empty when there is none). Ghost cells
/// received at both ends of an array leave its interior in the gap, so
/// the interior's accesses during the exchange call nothing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Layout {
    /// The lowest byte of any buffer.
    pub lo: usize,
    /// One past the highest.
    pub hi: usize,
    /// The widest gap between buffers, `(0, 0)` when none.
    pub gap: (usize, usize),
}

/// Buffers beyond this many are followed by the hull alone (the gap costs
/// a sort of the live buffers at each start and completion).
pub const LAYOUT_BUFFERS: usize = 16;

/// An access that touched a pending buffer the wrong way.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Hit {
    /// The buffer's request.
    pub what: Pending,
    /// The record of the call that started it.
    pub record: u64,
    /// The access's site.
    pub site: u32,
    /// The token (`state::me`) of the thread that started the operation.
    pub thread: u64,
}

/// A fixed table of `N` pending buffers.
pub struct Table<const N: usize> {
    entries: [Entry; N],
    /// One past the highest entry ever used: lookups stop there.
    high: AtomicUsize,
    /// Entries in use: the instrumented program's fast path reads it.
    live: AtomicUsize,
    /// Entries in use with a key (one-sided operations').
    keyed: AtomicUsize,
    /// The entry of the last one-sided operation without a request that
    /// had one buffer (index + 1; 0: none), which the next one may share
    /// ([`Table::watch_keyed`]).
    last_keyed: AtomicUsize,
    /// Where the search for a free entry starts: one past the entry last
    /// taken, or the one last freed. With many requests in flight, a
    /// watch then costs a step or two instead of a scan.
    free_hint: AtomicUsize,
    /// Per request slot below [`DIRECT_SLOTS`]: its entry's index + 1
    /// (0: none), so that forgetting costs no scan.
    entry_of_slot: [AtomicU16; DIRECT_SLOTS],
}

impl<const N: usize> Table<N> {
    /// An empty table.
    pub const fn new() -> Self {
        Table {
            entries: [const { Entry::new() }; N],
            high: AtomicUsize::new(0),
            live: AtomicUsize::new(0),
            keyed: AtomicUsize::new(0),
            last_keyed: AtomicUsize::new(0),
            free_hint: AtomicUsize::new(0),
            entry_of_slot: [const { AtomicU16::new(0) }; DIRECT_SLOTS],
        }
    }

    /// Entries in use.
    pub fn live(&self) -> usize {
        self.live.load(Ordering::Relaxed)
    }

    /// Entries in use with a key.
    pub fn keyed(&self) -> usize {
        self.keyed.load(Ordering::Relaxed)
    }

    /// Whether one more keyed buffer could be watched ([`Table::watch_keyed`]).
    pub fn keyed_room(&self) -> bool {
        self.keyed() < N / 2
    }

    /// Watches `start..end` for the request in `slot`, started by record
    /// `record`. Returns false (not watched) when the range is empty or
    /// the table is full. Only the thread calling MPI calls this.
    pub fn watch(&self, slot: u32, range: (usize, usize), what: Pending, record: u64) -> bool {
        self.watch_entry(slot, range, what, record, (false, 0))
            .is_some()
    }

    /// [`Table::watch`] for a buffer whose every byte in `range` the
    /// operation uses (a contiguous datatype): an MPI call's buffer is
    /// compared with such buffers only ([`Table::hit_exact`]), since a
    /// strided one's range holds bytes it does not touch.
    pub fn watch_exact(
        &self,
        slot: u32,
        range: (usize, usize),
        what: Pending,
        record: u64,
    ) -> bool {
        self.watch_entry(slot, range, what, record, (true, 0))
            .is_some()
    }

    /// Watches each of `buffers` for the one request in `slot` (a
    /// nonblocking collective's send and receive buffers), linking their
    /// entries so that [`Table::forget`] drops them together. Returns how
    /// many are watched (empty ranges and a full table leave some out).
    /// Only the thread calling MPI calls this.
    pub fn watch_all(
        &self,
        slot: u32,
        buffers: &[((usize, usize), Pending)],
        record: u64,
    ) -> usize {
        let buffers = buffers.iter().map(|&(range, what)| (range, what, false));
        self.watch_ring(slot, record, 0, buffers).1
    }

    /// Watches the buffers of a one-sided operation started by record
    /// `record` on window and target `key` (not 0), each a range, what the
    /// program may not do to it and whether the operation uses every byte
    /// of it: linked as [`Table::watch_all`]'s, under the request's `slot`
    /// for an `R` operation, else [`NO_SLOT`]. Returns how many entries
    /// it took: none once half the table is in use, nor for a buffer an
    /// entry watches already (below). Only the thread calling MPI calls
    /// this.
    ///
    /// An operation without a request whose one buffer, window, target
    /// and use are those of the last one watched shares its entry while
    /// it lives: the same synchronization call completes both, and an
    /// access before it touches the earlier one's buffer too (a loop of
    /// puts from one variable then costs one entry, not one per put).
    pub fn watch_keyed(
        &self,
        slot: u32,
        key: u64,
        buffers: &[((usize, usize), Pending, bool)],
        record: u64,
    ) -> usize {
        let single = match buffers {
            [(range, what, exact)] if slot == NO_SLOT => Some((*range, *what, *exact)),
            _ => None,
        };
        if single.is_some_and(|buffer| self.same_as_last(key, buffer)) {
            return 0;
        }
        if key == 0 || self.keyed() + buffers.len() > N / 2 {
            return 0;
        }
        let (first, watched) = self.watch_ring(slot, record, key, buffers.iter().copied());
        if let (Some(_), Some(first)) = (single, first) {
            self.last_keyed.store(first + 1, Ordering::Relaxed);
        }
        watched
    }

    /// Whether the entry of the last one-sided operation watched alone
    /// ([`Table::watch_keyed`]) is live and watches `range` for `what` of
    /// an operation on `key` without a request.
    fn same_as_last(&self, key: u64, ((start, end), what, exact): BufferUse) -> bool {
        let Some(entry) = self
            .last_keyed
            .load(Ordering::Relaxed)
            .checked_sub(1)
            .and_then(|i| self.entries.get(i))
        else {
            return false;
        };
        key != 0
            && entry.start.load(Ordering::Relaxed) == start
            && start != 0
            && entry.end.load(Ordering::Relaxed) == end
            && entry.key.load(Ordering::Relaxed) == key
            && entry.slot.load(Ordering::Relaxed) == NO_SLOT
            && entry.what.load(Ordering::Relaxed) == what_bits(what, exact)
    }

    /// Watches `buffers` in one ring for `slot`: the ring's first entry,
    /// and how many were watched.
    fn watch_ring(
        &self,
        slot: u32,
        record: u64,
        key: u64,
        buffers: impl Iterator<Item = BufferUse>,
    ) -> (Option<usize>, usize) {
        let mut first: Option<usize> = None;
        let mut last: Option<usize> = None;
        for (range, what, exact) in buffers {
            let Some(index) = self.watch_entry(slot, range, what, record, (exact, key)) else {
                continue;
            };
            if let Some(previous) = last {
                self.entries[previous]
                    .next
                    .store(index as u16 + 1, Ordering::Relaxed);
            }
            first.get_or_insert(index);
            last = Some(index);
        }
        if let (Some(first), Some(last)) = (first, last) {
            if first != last {
                // Close the ring: any entry of it leads to all the others.
                self.entries[last]
                    .next
                    .store(first as u16 + 1, Ordering::Relaxed);
            }
            if let Some(direct) = self.entry_of_slot.get(slot as usize) {
                direct.store(first as u16 + 1, Ordering::Relaxed);
            }
        }
        (first, first.map_or(0, |first| self.ring_len(first)))
    }

    /// The entries in the ring of entry `first`.
    fn ring_len(&self, first: usize) -> usize {
        let mut count = 1;
        let mut at = first;
        while let Some(next) = self.next_in_ring(at, first).filter(|_| count < N) {
            count += 1;
            at = next;
        }
        count
    }

    /// The entry after `at` in its ring, `None` when the ring (started at
    /// `first`) is done.
    fn next_in_ring(&self, at: usize, first: usize) -> Option<usize> {
        match self.entries.get(at)?.next.load(Ordering::Relaxed) {
            0 => None,
            next => Some(usize::from(next) - 1).filter(|&n| n != first && n < N),
        }
    }

    /// [`Table::watch`], alone in its ring: the entry's index. `exact`:
    /// the operation uses every byte of the range; `key`: a one-sided
    /// operation's window and target (0: none).
    fn watch_entry(
        &self,
        slot: u32,
        (start, end): (usize, usize),
        what: Pending,
        record: u64,
        (exact, key): (bool, u64),
    ) -> Option<usize> {
        if start == 0 || end <= start {
            return None;
        }
        let hint = self.free_hint.load(Ordering::Relaxed).min(N);
        let index = (hint..N)
            .chain(0..hint)
            .find(|&i| self.entries[i].start.load(Ordering::Relaxed) == 0)?;
        let entry = &self.entries[index];
        self.free_hint.store(index + 1, Ordering::Relaxed);
        if let Some(direct) = self.entry_of_slot.get(slot as usize) {
            // N is at most a few hundred: the index fits.
            direct.store(index as u16 + 1, Ordering::Relaxed);
        }
        entry.end.store(end, Ordering::Relaxed);
        entry.slot.store(slot, Ordering::Relaxed);
        entry.what.store(what_bits(what, exact), Ordering::Relaxed);
        entry.record.store(record, Ordering::Relaxed);
        entry.key.store(key, Ordering::Relaxed);
        entry.thread.store(crate::state::me(), Ordering::Relaxed);
        if key != 0 {
            self.keyed.store(self.keyed() + 1, Ordering::Relaxed);
        }
        for site in &entry.reported {
            site.store(0, Ordering::Relaxed);
        }
        entry.start.store(start, Ordering::Release);
        // One writer (the thread calling MPI): loads and stores, not locked
        // read-modify-writes, which cost a store-buffer drain per request
        // (5% of a message-rate run).
        if self.high.load(Ordering::Relaxed) <= index {
            self.high.store(index + 1, Ordering::Relaxed);
        }
        self.live.store(self.live() + 1, Ordering::Release);
        Some(index)
    }

    /// Stops watching the buffer of the request in `slot` (if watched).
    /// Only the thread calling MPI calls this.
    pub fn forget(&self, slot: u32) {
        if self.live.load(Ordering::Relaxed) == 0 {
            return;
        }
        let index = match self.entry_of_slot.get(slot as usize) {
            Some(direct) => match direct.load(Ordering::Relaxed) {
                0 => return, // not watched
                known => {
                    direct.store(0, Ordering::Relaxed); // one writer, as in `watch`
                    Some(usize::from(known) - 1)
                }
            },
            None => {
                let high = self.high.load(Ordering::Relaxed).min(N);
                (0..high).find(|&i| {
                    let entry = &self.entries[i];
                    entry.start.load(Ordering::Relaxed) != 0
                        && entry.slot.load(Ordering::Relaxed) == slot
                })
            }
        };
        let Some(first) = index.filter(|&i| i < N) else {
            return;
        };
        // A point-to-point request's ring is its one entry: it pays one
        // load of `next` more than a table without rings.
        let entry = &self.entries[first];
        let next = entry.next.load(Ordering::Relaxed);
        if self.drop_entry(first, slot) && next != 0 {
            entry.next.store(0, Ordering::Relaxed);
            self.forget_ring(first, usize::from(next) - 1, slot);
        }
    }

    /// Drops the rest of the ring of entry `first` (dropped), from `next`.
    #[cold]
    fn forget_ring(&self, first: usize, next: usize, slot: u32) {
        let mut at = Some(next);
        // At most the table's entries: a ring is never longer.
        for _ in 0..N {
            let Some(index) = at else {
                break;
            };
            at = self.next_in_ring(index, first);
            self.entries[index].next.store(0, Ordering::Relaxed);
            self.drop_entry(index, slot);
        }
    }

    /// Stops watching the buffers of every one-sided operation whose key
    /// `completed` says a synchronization call just completed (MPI-4.0
    /// §12.5), `R` operations' included (their slots then find nothing).
    /// Returns how many were dropped. A scan of the entries in use, only
    /// while any has a key. Only the thread calling MPI calls this.
    pub fn forget_keyed(&self, completed: impl Fn(u64) -> bool) -> usize {
        if self.keyed() == 0 {
            return 0;
        }
        let high = self.high.load(Ordering::Relaxed).min(N);
        let mut dropped = 0;
        for (index, entry) in self.entries[..high].iter().enumerate() {
            let key = entry.key.load(Ordering::Relaxed);
            if key == 0 || entry.start.load(Ordering::Relaxed) == 0 || !completed(key) {
                continue;
            }
            // Its ring's other entries share its key: each is met here.
            entry.next.store(0, Ordering::Relaxed);
            self.free_entry(index);
            dropped += 1;
        }
        dropped
    }

    /// Frees entry `index` if it is in use for `slot` (then true).
    fn drop_entry(&self, index: usize, slot: u32) -> bool {
        let entry = &self.entries[index];
        if entry.start.load(Ordering::Relaxed) == 0 || entry.slot.load(Ordering::Relaxed) != slot {
            return false;
        }
        self.free_entry(index);
        true
    }

    /// Frees entry `index`, in use.
    fn free_entry(&self, index: usize) {
        let entry = &self.entries[index];
        if entry.key.load(Ordering::Relaxed) != 0 {
            self.keyed
                .store(self.keyed().saturating_sub(1), Ordering::Relaxed);
        }
        entry.start.store(0, Ordering::Release);
        let live = self.live() - 1;
        self.live.store(live, Ordering::Release);
        if live == 0 {
            // Empty: the next searches start at the bottom again, and
            // `layout` scans only what is used after this.
            self.high.store(0, Ordering::Release);
            self.free_hint.store(0, Ordering::Relaxed);
        } else {
            self.free_hint.store(index, Ordering::Relaxed);
        }
    }

    /// The layout of the live buffers ([`Layout`]), `None` when there are
    /// none or more than [`LAYOUT_BUFFERS`]. Only the thread calling MPI
    /// calls this (it alone changes the table).
    pub fn layout(&self) -> Option<Layout> {
        // Checked first: with many requests in flight (a message-rate
        // loop) every start and completion would otherwise scan the table
        // to find out.
        if self.live() > LAYOUT_BUFFERS {
            return None;
        }
        let mut ranges = [(0usize, 0usize); LAYOUT_BUFFERS];
        let mut count = 0;
        let high = self.high.load(Ordering::Relaxed).min(N);
        let live = self.live();
        for entry in &self.entries[..high] {
            if count == live {
                break; // every live entry found
            }
            let start = entry.start.load(Ordering::Relaxed);
            if start == 0 {
                continue;
            }
            *ranges.get_mut(count)? = (start, entry.end.load(Ordering::Relaxed));
            count += 1;
        }
        let ranges = &mut ranges[..count];
        ranges.sort_unstable();
        let (&(lo, first_end), rest) = ranges.split_first()?;
        let (mut reach, mut gap) = (first_end, (0, 0));
        for &(start, end) in rest {
            if start > reach && start - reach > gap.1 - gap.0 {
                gap = (reach, start);
            }
            reach = reach.max(end);
        }
        Some(Layout { lo, hi: reach, gap })
    }

    /// The pending buffer that `size` bytes from `address` touch the wrong
    /// way (`write`: a store, else a load), if any, and not yet reported
    /// for the access's site (`site()`, asked only then): then it is
    /// marked reported for that site. At most [`SITES_PER_REQUEST`] sites
    /// are reported per request.
    pub fn hit(
        &self,
        address: usize,
        size: usize,
        write: bool,
        site: impl FnOnce() -> u32,
    ) -> Option<Hit> {
        self.hit_where(address, size, write, site, 0)
    }

    /// [`Table::hit`] among the buffers watched with
    /// [`Table::watch_exact`] only: for an MPI call's own (contiguous)
    /// buffer, which must not be taken to overlap a strided buffer's holes.
    pub fn hit_exact(
        &self,
        address: usize,
        size: usize,
        write: bool,
        site: impl FnOnce() -> u32,
    ) -> Option<Hit> {
        self.hit_where(address, size, write, site, EXACT)
    }

    /// [`Table::hit`] among the entries with the `need` bits.
    fn hit_where(
        &self,
        address: usize,
        size: usize,
        write: bool,
        site: impl FnOnce() -> u32,
        need: u32,
    ) -> Option<Hit> {
        let mut site = Some(site);
        let mut known = 0;
        let end = address.saturating_add(size.max(1));
        let high = self.high.load(Ordering::Acquire).min(N);
        for entry in &self.entries[..high] {
            let start = entry.start.load(Ordering::Acquire);
            if start == 0 || end <= start || address >= entry.end.load(Ordering::Relaxed) {
                continue;
            }
            let bits = entry.what.load(Ordering::Relaxed);
            if bits & need != need {
                continue;
            }
            let what = match bits & !EXACT {
                1 => Pending::Send,
                2 => Pending::Recv,
                _ => continue, // exposed window memory: `rma_exposure.rs`'s
            };
            if what == Pending::Send && !write {
                continue; // reading a send buffer is allowed (MPI-3)
            }
            let record = entry.record.load(Ordering::Relaxed);
            let thread = entry.thread.load(Ordering::Relaxed);
            if let Some(site) = site.take() {
                known = site();
            }
            if entry.start.load(Ordering::Acquire) != start || !Self::first_report(entry, known) {
                continue;
            }
            return Some(Hit {
                what,
                record,
                site: known,
                thread,
            });
        }
        None
    }

    /// Claims `site` in `entry`'s reported sites; false when it is there
    /// already or there is no room.
    fn first_report(entry: &Entry, site: u32) -> bool {
        // 0 marks a free place: site 0 ("unknown") is kept as 1's place.
        let site = site.max(1);
        for place in &entry.reported {
            match place.compare_exchange(0, site, Ordering::AcqRel, Ordering::Acquire) {
                Ok(_) => return true,
                Err(seen) if seen == site => return false,
                Err(_) => {}
            }
        }
        false
    }
}

impl<const N: usize> Default for Table<N> {
    fn default() -> Self {
        Self::new()
    }
}

/// This rank's pending buffers.
pub static PENDING: Table<ENTRIES> = Table::new();

#[cfg(test)]
mod tests {
    use super::*;

    const SEND: (usize, usize) = (0x1000, 0x1000 + 65536);
    const RECV: (usize, usize) = (0x9_0000, 0x9_0040);

    #[test]
    fn a_send_buffer_is_only_hit_by_writes_and_a_receive_by_both() {
        let table: Table<8> = Table::new();
        assert!(table.watch(3, SEND, Pending::Send, 10));
        assert!(table.watch(4, RECV, Pending::Recv, 11));
        assert_eq!(table.live(), 2);
        assert_eq!(
            table.hit(0x1000 + 100, 4, false, || 1),
            None,
            "a read of a send buffer"
        );
        let hit = table.hit(0x1000 + 100, 4, true, || 1);
        assert_eq!(
            hit,
            Some(Hit {
                what: Pending::Send,
                record: 10,
                site: 1,
                thread: crate::state::me(),
            })
        );
        assert_eq!(
            table.hit(0x9_0000 + 60, 8, false, || 2).map(|h| h.record),
            Some(11)
        );
        // Overlap at the edges only.
        assert_eq!(
            table.hit(0x9_0040, 8, true, || 3),
            None,
            "just past the end"
        );
        assert_eq!(table.hit(0x9_0000 - 8, 8, true, || 3), None, "just before");
        assert_eq!(
            table.hit(0x9_0000 - 4, 8, true, || 3).map(|h| h.record),
            Some(11)
        );
    }

    #[test]
    fn each_site_is_reported_once_per_request() {
        let table: Table<8> = Table::new();
        table.watch(1, SEND, Pending::Send, 5);
        assert!(table.hit(0x1000, 4, true, || 7).is_some());
        assert!(
            table.hit(0x1004, 4, true, || 7).is_none(),
            "same site again"
        );
        for site in 8..11 {
            assert!(table.hit(0x1000, 4, true, || site).is_some());
        }
        assert!(
            table.hit(0x1000, 4, true, || 11).is_none(),
            "past the sites kept"
        );
        // A new request in the same slot starts afresh.
        table.forget(1);
        table.watch(1, SEND, Pending::Send, 6);
        assert_eq!(table.hit(0x1000, 4, true, || 7).map(|h| h.record), Some(6));
    }

    #[test]
    fn forgotten_buffers_are_not_hit_and_the_count_follows() {
        let table: Table<8> = Table::new();
        table.watch(1, SEND, Pending::Send, 5);
        table.watch(2, RECV, Pending::Recv, 6);
        table.forget(1);
        assert_eq!(table.live(), 1);
        assert_eq!(table.hit(0x1000, 4, true, || 1), None);
        table.forget(1);
        assert_eq!(table.live(), 1, "forgetting twice");
        table.forget(2);
        assert_eq!(table.live(), 0);
        assert_eq!(table.hit(0x9_0000, 4, true, || 1), None);
    }

    #[test]
    fn the_layout_is_the_hull_and_its_widest_gap() {
        let table: Table<32> = Table::new();
        assert_eq!(table.layout(), None, "nothing pending");
        // Ghost cells at both ends of an array, and the edges sent.
        table.watch(1, (0x1000, 0x1008), Pending::Recv, 1);
        table.watch(2, (0x9000, 0x9008), Pending::Recv, 2);
        table.watch(3, (0x1008, 0x1010), Pending::Send, 3);
        table.watch(4, (0x8ff8, 0x9000), Pending::Send, 4);
        let layout = table.layout().unwrap();
        assert_eq!((layout.lo, layout.hi), (0x1000, 0x9008));
        assert_eq!(layout.gap, (0x1010, 0x8ff8), "the interior");
        // Overlapping buffers leave no gap between them.
        table.forget(2);
        table.forget(4);
        table.watch(5, (0x1004, 0x100c), Pending::Send, 5);
        assert_eq!(
            table.layout(),
            Some(Layout {
                lo: 0x1000,
                hi: 0x1010,
                gap: (0, 0)
            })
        );
        for slot in 10..(10 + LAYOUT_BUFFERS as u32) {
            table.watch(
                slot,
                (0x4_0000 + slot as usize * 64, 0x4_0008 + slot as usize * 64),
                Pending::Recv,
                9,
            );
        }
        assert_eq!(table.layout(), None, "too many to sort at each call");
    }

    #[test]
    fn slots_past_the_direct_map_are_found_by_a_scan() {
        let table: Table<4> = Table::new();
        let far = DIRECT_SLOTS as u32 + 7;
        assert!(table.watch(far, SEND, Pending::Send, 1));
        assert!(table.watch(2, RECV, Pending::Recv, 2));
        table.forget(far);
        assert_eq!(table.live(), 1);
        assert_eq!(table.hit(0x1000, 4, true, || 1), None);
        assert!(table.hit(0x9_0000, 4, true, || 1).is_some());
        // The freed entry is taken again, whatever the hint said.
        for slot in 10..13 {
            assert!(table.watch(slot, (0x50_0000, 0x50_0010), Pending::Recv, 3));
        }
        assert!(
            !table.watch(13, (0x60_0000, 0x60_0010), Pending::Recv, 4),
            "full"
        );
        table.forget(11);
        assert!(table.watch(13, (0x60_0000, 0x60_0010), Pending::Recv, 4));
        assert_eq!(table.live(), 4);
    }

    /// An MPI call's buffer is compared with contiguous pending buffers
    /// only: a strided receive's range holds bytes it does not write.
    #[test]
    fn a_calls_buffer_meets_exact_buffers_only() {
        let table: Table<8> = Table::new();
        assert!(table.watch(1, RECV, Pending::Recv, 1), "strided");
        assert!(table.watch_exact(2, (0x20_0000, 0x20_0040), Pending::Recv, 2));
        assert!(table.watch_exact(3, SEND, Pending::Send, 3));
        assert_eq!(
            table.hit_exact(RECV.0, 8, false, || 1),
            None,
            "strided range"
        );
        assert!(
            table.hit(RECV.0, 8, false, || 1).is_some(),
            "a load still meets it"
        );
        let read = table.hit_exact(0x20_0010, 8, false, || 1);
        assert_eq!(read.map(|h| (h.what, h.record)), Some((Pending::Recv, 2)));
        assert_eq!(
            table.hit_exact(SEND.0, 8, false, || 1),
            None,
            "reading a send's buffer"
        );
        let write = table.hit_exact(SEND.0, 8, true, || 1);
        assert_eq!(write.map(|h| (h.what, h.record)), Some((Pending::Send, 3)));
    }

    /// A one-sided operation's buffers: dropped by the key of the call
    /// that completes them, an `R` operation's by its slot too; the key
    /// leaves the nonblocking calls' buffers alone.
    #[test]
    fn one_sided_buffers_are_forgotten_by_their_key_or_slot() {
        let table: Table<8> = Table::new();
        assert!(table.watch(1, RECV, Pending::Recv, 1), "a receive");
        let put = [((0x20_0000, 0x20_0010), Pending::Send, true)];
        let get = [((0x30_0000, 0x30_0010), Pending::Recv, true)];
        assert_eq!(table.watch_keyed(NO_SLOT, 0, &put, 2), 0, "no key");
        assert_eq!(table.watch_keyed(NO_SLOT, 0x1_0000_0002, &put, 2), 1);
        assert_eq!(table.watch_keyed(NO_SLOT, 0x1_0000_0003, &get, 3), 1);
        assert_eq!(table.keyed(), 2);
        assert_eq!(table.hit(0x20_0000, 4, false, || 1), None, "read by MPI");
        assert_eq!(
            table.hit(0x20_0000, 4, true, || 1).map(|h| h.record),
            Some(2)
        );
        assert_eq!(
            table
                .hit(0x30_0004, 4, false, || 1)
                .map(|h| (h.what, h.record)),
            Some((Pending::Recv, 3))
        );
        // Unlocking target 2 of window 1 completes the put only.
        assert_eq!(table.forget_keyed(|k| k == 0x1_0000_0002), 1);
        assert_eq!(table.hit(0x20_0000, 4, true, || 2), None);
        assert_eq!((table.live(), table.keyed()), (2, 1));
        // An `R` operation's two buffers, by its slot.
        let both = [
            ((0x40_0000, 0x40_0010), Pending::Send, true),
            ((0x50_0000, 0x50_0010), Pending::Recv, false),
        ];
        assert_eq!(table.watch_keyed(5, 0x1_0000_0003, &both, 4), 2);
        table.forget(5);
        assert_eq!((table.live(), table.keyed()), (2, 1));
        // Again, then a fence on window 1: every key of it, not the receive.
        assert_eq!(table.watch_keyed(6, 0x1_0000_0003, &both, 5), 2);
        assert_eq!(table.forget_keyed(|k| k >> 32 == 1), 3);
        assert_eq!((table.live(), table.keyed()), (1, 0));
        table.forget(6); // its entries are gone: nothing happens
        assert_eq!(table.live(), 1);
        assert!(table.hit(RECV.0, 4, false, || 3).is_some());
    }

    /// Puts from one variable to one target share an entry while it
    /// lives; another target, buffer or use takes its own.
    #[test]
    fn repeated_operations_on_one_buffer_share_an_entry() {
        let table: Table<8> = Table::new();
        let put = [((0x20_0000, 0x20_0004), Pending::Send, true)];
        assert_eq!(table.watch_keyed(NO_SLOT, 1 << 32 | 1, &put, 1), 1);
        for record in 2..5 {
            assert_eq!(table.watch_keyed(NO_SLOT, 1 << 32 | 1, &put, record), 0);
        }
        assert_eq!(table.keyed(), 1);
        let hit = table.hit(0x20_0000, 4, true, || 1).map(|h| h.record);
        assert_eq!(hit, Some(1), "the first put, still in flight");
        assert_eq!(table.watch_keyed(NO_SLOT, 1 << 32 | 2, &put, 5), 1);
        let get = [((0x20_0000, 0x20_0004), Pending::Recv, true)];
        assert_eq!(table.watch_keyed(NO_SLOT, 1 << 32 | 2, &get, 6), 1);
        assert_eq!(table.keyed(), 3);
        // Forgotten: the next put takes an entry again.
        assert_eq!(table.forget_keyed(|_| true), 3);
        assert_eq!(table.watch_keyed(NO_SLOT, 1 << 32 | 2, &get, 7), 1);
        assert_eq!(table.keyed(), 1);
        // An `R` operation never shares: its request completes it alone.
        assert_eq!(table.watch_keyed(3, 1 << 32 | 2, &get, 8), 1);
        assert_eq!(table.keyed(), 2);
    }

    #[test]
    fn one_sided_buffers_take_half_the_table_at_most() {
        let table: Table<8> = Table::new();
        let one = |i: usize| {
            [(
                (0x10_0000 * (i + 1), 0x10_0000 * (i + 1) + 8),
                Pending::Send,
                true,
            )]
        };
        for i in 0..4 {
            assert_eq!(table.watch_keyed(NO_SLOT, 1 << 32, &one(i), i as u64), 1);
        }
        assert_eq!(table.watch_keyed(NO_SLOT, 1 << 32, &one(4), 4), 0, "half");
        assert!(table.watch(1, RECV, Pending::Recv, 9), "room for a receive");
        assert_eq!(table.forget_keyed(|_| true), 4);
        assert_eq!(table.live(), 1);
    }

    #[test]
    fn a_full_table_leaves_buffers_unwatched() {
        let table: Table<2> = Table::new();
        assert!(table.watch(1, SEND, Pending::Send, 1));
        assert!(table.watch(2, RECV, Pending::Recv, 2));
        assert!(!table.watch(3, (0x50_0000, 0x50_0010), Pending::Recv, 3));
        assert_eq!(table.live(), 2);
        assert_eq!(table.hit(0x50_0000, 4, true, || 1), None);
        table.forget(3); // never watched: nothing happens
        assert_eq!(table.live(), 2);
        table.forget(1);
        assert!(
            table.watch(3, (0x50_0000, 0x50_0010), Pending::Recv, 3),
            "room again"
        );
        assert!(!table.watch(4, (0, 16), Pending::Send, 4), "null start");
        assert!(!table.watch(4, (64, 64), Pending::Send, 4), "empty range");
    }

    #[test]
    fn a_collectives_buffers_are_forgotten_together() {
        let table: Table<8> = Table::new();
        assert!(table.watch(1, RECV, Pending::Recv, 1));
        let both = [
            (SEND, Pending::Send),
            ((0x20_0000, 0x20_0040), Pending::Recv),
        ];
        assert_eq!(table.watch_all(2, &both, 7), 2);
        assert_eq!(table.live(), 3);
        assert_eq!(table.hit(0x1000, 4, true, || 1).map(|h| h.record), Some(7));
        assert_eq!(
            table.hit(0x20_0000, 4, false, || 1).map(|h| h.record),
            Some(7)
        );
        table.forget(2);
        assert_eq!(table.live(), 1, "both of slot 2's, not slot 1's");
        assert_eq!(table.hit(0x20_0000, 4, false, || 2), None);
        // Past the direct map: found by a scan, the ring followed from
        // whichever entry the scan meets first.
        let far = DIRECT_SLOTS as u32 + 3;
        let three = [
            ((0x30_0000, 0x30_0010), Pending::Send),
            ((0, 0), Pending::Send), // empty: left out
            ((0x40_0000, 0x40_0010), Pending::Recv),
        ];
        assert_eq!(table.watch_all(far, &three, 8), 2);
        table.forget(far);
        assert_eq!(table.live(), 1);
        table.forget(1);
        assert_eq!(table.live(), 0);
        // A freed entry starts alone in a ring again.
        assert!(table.watch(5, RECV, Pending::Recv, 9));
        table.forget(5);
        assert_eq!(table.live(), 0);
    }
}
