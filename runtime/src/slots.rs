//! Slots of outstanding nonblocking requests: what each request is, and
//! the memory its header (and a synchronous send's acknowledgement) lives
//! in until it completes.
//!
//! Each slot's memory is its header, then [`INLINE_BYTES`] for the data of
//! a small packed send (right after the header, so header and data go out
//! as one `MPI_BYTE` buffer: [`crate::packed`]), then the acknowledgement.
//!
//! A larger packed message gets a *room* instead: a buffer from a pool
//! (allocated when the pool is empty, kept when released) holding the
//! header and the data; while the slot has one, [`Slots::header`] is the
//! room's first word, so everything that reads or writes the header finds
//! it there.
//!
//! Memory comes in chunks of [`CHUNK`] slots allocated at start-up (four)
//! or when every slot is in use; a chunk never moves, so a header's
//! address stays valid while MPI writes into it. The hot path only pops and
//! pushes a free list.
//!
//! The **watch list** holds the slots the runtime polls while it blocks
//! ([`crate::engine`]'s service loop): receives whose completion it has not
//! seen yet (their sender may be waiting for an acknowledgement) and
//! requests the program freed with `MPI_Request_free` (orphans).

use mpi_sys::{MPI_Comm, MPI_Request};
use std::os::raw::c_int;

/// Slots per chunk of memory.
pub const CHUNK: usize = 256;

/// Bytes of data a slot holds after its header, for packed nonblocking
/// sends (a multiple of 8).
pub const INLINE_BYTES: usize = 256;

/// A synchronous or standard send in flight.
#[derive(Debug, Clone, Copy)]
pub struct SendState {
    /// Waits for an acknowledgement (§5.2.1).
    pub sync: bool,
    /// The acknowledgement's receive request (when `sync`).
    pub ack: MPI_Request,
    /// The acknowledgement arrived (its clock is in the ack buffer).
    pub ack_arrived: bool,
}

/// A receive in flight.
#[derive(Debug, Clone, Copy)]
pub struct RecvState {
    /// Issue order among receives and probes.
    pub seq: u64,
    /// Its communicator.
    pub comm: MPI_Comm,
    /// Its wildcard event number.
    pub event: Option<u32>,
    /// The runtime saw it complete (while polling, or resolving a pending
    /// event).
    pub observed: bool,
    /// Its synchronous sender was acknowledged.
    pub acked: bool,
    /// Its datatype's signature (the type-mismatch check).
    pub sig: crate::typesig::Sig,
    /// An `MPI_Imrecv`: the clock of the matched probe that took the
    /// message (it was matched there).
    pub probed: Option<u64>,
    /// A polled `MPI_Waitall` saw MPI complete (and free) the request and
    /// has not processed it yet (`engine/settle.rs`): what the status said.
    pub settled: Option<Settled>,
}

/// What MPI's status said of a receive whose request MPI already freed:
/// the runtime cannot ask MPI about it again.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Settled {
    /// It matched a message with this tag.
    Tag(c_int),
    /// It was cancelled.
    Cancelled,
}

/// What a slot holds.
#[derive(Debug, Clone, Copy)]
pub enum Kind {
    /// Not in use.
    Free,
    /// A request without a header (peer `MPI_PROC_NULL`); `receive` when it
    /// came from `MPI_Irecv`.
    Plain {
        /// Made by a receive.
        receive: bool,
    },
    /// A send.
    Send(SendState),
    /// A receive.
    Recv(RecvState),
    /// A nonblocking collective; its header and acknowledgement words hold
    /// the clock exchange's input and output.
    Coll(crate::engine::CollState),
}

/// One outstanding request.
#[derive(Debug, Clone, Copy)]
pub struct Slot {
    /// The MPI request (the handle the program holds, unless orphaned).
    pub request: MPI_Request,
    /// Index of the record of the call that made it.
    pub record: Option<u64>,
    /// What it is.
    pub kind: Kind,
    /// The program freed the request; the runtime completes it.
    pub orphan: bool,
    /// A packed receive: the user's buffer and its size in bytes, where the
    /// data after the slot's header goes when it completes.
    pub unpack: Option<(*mut u8, usize)>,
    /// A packed send: the user's buffer and its size in bytes, compared
    /// with the copy that went when the program completes the request
    /// (`buffer-reuse`).
    pub sent: Option<(*const u8, usize)>,
    /// `mbhybrid run`: the logical time of its deterministic transmission
    /// point (seed 002 §3.3; `engine/dtp.rs`).
    pub due: u64,
    /// `mbhybrid run`: the world rank a receive was posted for (-1: any,
    /// or not a receive).
    pub peer: i32,
    /// Its place in the watch list ([`NOT_WATCHED`]: none), so taking it
    /// off costs no search.
    watch_at: u32,
}

/// [`Slot`]'s `watch_at` of a slot not on the watch list.
const NOT_WATCHED: u32 = u32::MAX;

/// All slots.
pub struct Slots {
    slots: Vec<Slot>,
    free: Vec<u32>,
    header_words: usize,
    ack_words: usize,
    /// Chunk memory, leaked on purpose: MPI may write into a header until
    /// its request completes, so it lives as long as the process.
    chunks: Vec<*mut u64>,
    watch: Vec<u32>,
    null: MPI_Request,
    /// Each slot's room, if it has one (see the module docs).
    rooms: Vec<Option<Box<[u64]>>>,
    /// Rooms not in use.
    pool: Vec<Box<[u64]>>,
}

impl Slots {
    /// Room for `chunks` x [`CHUNK`] requests with headers of
    /// `header_words` and acknowledgements of `ack_words`.
    pub fn new(header_words: usize, ack_words: usize, chunks: usize, null: MPI_Request) -> Self {
        let mut slots = Slots {
            slots: Vec::with_capacity(chunks * CHUNK),
            free: Vec::with_capacity(chunks * CHUNK),
            header_words,
            ack_words,
            chunks: Vec::with_capacity(chunks.max(4) * 4),
            watch: Vec::with_capacity(chunks * CHUNK),
            null,
            rooms: Vec::with_capacity(chunks * CHUNK),
            pool: Vec::new(),
        };
        for _ in 0..chunks {
            slots.grow();
        }
        slots
    }

    fn words(&self) -> usize {
        self.header_words + INLINE_BYTES / 8 + self.ack_words
    }

    /// Adds a chunk.
    #[cold]
    fn grow(&mut self) {
        let first = self.slots.len();
        let memory = vec![0u64; CHUNK * self.words()].into_boxed_slice();
        self.chunks.push(Box::into_raw(memory).cast::<u64>());
        for i in (first..first + CHUNK).rev() {
            self.slots.push(Slot {
                request: self.null,
                record: None,
                kind: Kind::Free,
                orphan: false,
                unpack: None,
                sent: None,
                due: 0,
                peer: -1,
                watch_at: NOT_WATCHED,
            });
            self.free.push(i as u32);
            self.rooms.push(None);
        }
    }

    /// A fresh slot holding `kind`.
    pub fn alloc(&mut self, kind: Kind, record: Option<u64>) -> u32 {
        if self.free.is_empty() {
            self.grow();
        }
        let id = self.free.pop().unwrap_or_default();
        let slot = &mut self.slots[id as usize];
        *slot = Slot {
            request: self.null,
            record,
            kind,
            orphan: false,
            unpack: None,
            sent: None,
            due: 0,
            peer: -1,
            watch_at: NOT_WATCHED,
        };
        id
    }

    /// Frees slot `id` (and takes it off the watch list).
    pub fn release(&mut self, id: u32) {
        self.unwatch(id);
        // The operation is over: its buffer is the program's again.
        crate::access::forget(id);
        if let Some(room) = self.rooms.get_mut(id as usize).and_then(Option::take) {
            self.pool.push(room);
        }
        if let Some(slot) = self.slots.get_mut(id as usize) {
            if !matches!(slot.kind, Kind::Free) {
                slot.kind = Kind::Free;
                self.free.push(id);
            }
        }
    }

    /// Slot `id`.
    pub fn get(&self, id: u32) -> Option<&Slot> {
        self.slots
            .get(id as usize)
            .filter(|s| !matches!(s.kind, Kind::Free))
    }

    /// Slot `id`, to change.
    pub fn get_mut(&mut self, id: u32) -> Option<&mut Slot> {
        self.slots
            .get_mut(id as usize)
            .filter(|s| !matches!(s.kind, Kind::Free))
    }

    /// The first word of slot `id`'s memory (null for an unknown id).
    fn base(&self, id: u32) -> *mut u64 {
        let (chunk, at) = (id as usize / CHUNK, id as usize % CHUNK);
        match self.chunks.get(chunk) {
            // SAFETY: each chunk holds CHUNK slots of `words()` words.
            Some(&memory) => unsafe { memory.add(at * self.words()) },
            None => std::ptr::null_mut(),
        }
    }

    /// The header memory of slot `id` (stable while the slot is in use).
    pub fn header(&self, id: u32) -> *mut u64 {
        match self.rooms.get(id as usize) {
            Some(Some(room)) => room.as_ptr().cast_mut(),
            _ => self.base(id),
        }
    }

    /// Gives slot `id` a room of its header plus `bytes` of data (at most
    /// `max_bytes`, the size of every room) and returns the header's new
    /// address. Call before anything is written to the header.
    pub fn give_room(&mut self, id: u32, bytes: usize, max_bytes: usize) -> *mut u64 {
        if bytes > max_bytes || id as usize >= self.rooms.len() {
            return self.header(id);
        }
        if self.rooms[id as usize].is_none() {
            let words = self.header_words + max_bytes.div_ceil(8);
            let room = self
                .pool
                .pop()
                .unwrap_or_else(|| vec![0u64; words].into_boxed_slice());
            self.rooms[id as usize] = Some(room);
        }
        self.header(id)
    }

    /// The acknowledgement memory of slot `id`.
    pub fn ack(&self, id: u32) -> *mut u64 {
        let base = self.base(id);
        if base.is_null() {
            return base;
        }
        // SAFETY: each slot has `header_words + INLINE_BYTES / 8 +
        // ack_words` words.
        unsafe { base.add(self.header_words + INLINE_BYTES / 8) }
    }

    /// The header of slot `id`, as MPI left it (read it only when no
    /// communication is writing it).
    pub fn header_words(&self, id: u32) -> &[u64] {
        let base = self.header(id);
        if base.is_null() {
            return &[];
        }
        // SAFETY: the slot's header words lie inside its chunk, which lives
        // forever, or its room, which lives until the slot is released; the
        // caller reads after the receive completed.
        unsafe { std::slice::from_raw_parts(base, self.header_words) }
    }

    /// The acknowledgement of slot `id`, as received.
    pub fn ack_words(&self, id: u32) -> &[u64] {
        let ack = self.ack(id);
        if ack.is_null() {
            return &[];
        }
        // SAFETY: as for `header_words`.
        unsafe { std::slice::from_raw_parts(ack, self.ack_words) }
    }

    /// Puts slot `id` on the watch list.
    pub fn watch(&mut self, id: u32) {
        let at = self.watch.len() as u32;
        if let Some(slot) = self.slots.get_mut(id as usize) {
            if slot.watch_at == NOT_WATCHED {
                slot.watch_at = at;
                self.watch.push(id);
            }
        }
    }

    /// Takes slot `id` off the watch list: the last watched slot takes its
    /// place (the service loop relies on that order of events).
    pub fn unwatch(&mut self, id: u32) {
        let Some(slot) = self.slots.get_mut(id as usize) else {
            return;
        };
        let at = std::mem::replace(&mut slot.watch_at, NOT_WATCHED) as usize;
        if at >= self.watch.len() {
            return;
        }
        self.watch.swap_remove(at);
        if let Some(&moved) = self.watch.get(at) {
            if let Some(moved) = self.slots.get_mut(moved as usize) {
                moved.watch_at = at as u32;
            }
        }
    }

    /// Whether slot `id` is on the watch list.
    pub fn is_watched(&self, id: u32) -> bool {
        self.slots
            .get(id as usize)
            .is_some_and(|s| s.watch_at != NOT_WATCHED)
    }

    /// The watched slots.
    pub fn watched(&self) -> &[u32] {
        &self.watch
    }

    /// Ids of the slots in use.
    pub fn ids_in_use(&self) -> impl Iterator<Item = u32> + '_ {
        self.slots
            .iter()
            .enumerate()
            .filter(|(_, s)| !matches!(s.kind, Kind::Free))
            .map(|(id, _)| id as u32)
    }

    /// Slots in use.
    #[cfg(test)]
    pub fn in_use(&self) -> usize {
        self.slots.len() - self.free.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn null() -> MPI_Request {
        // SAFETY: a plain integer/pointer newtype; only compared in tests.
        unsafe { std::mem::zeroed() }
    }

    #[test]
    fn headers_are_stable_across_growth() {
        let mut s = Slots::new(5, 1, 1, null());
        let first = s.alloc(Kind::Plain { receive: false }, Some(1));
        let p = s.header(first);
        // SAFETY: the slot has 5 header words.
        unsafe { *p.add(4) = 77 };
        let more: Vec<u32> = (0..CHUNK * 2)
            .map(|_| s.alloc(Kind::Plain { receive: true }, None))
            .collect();
        assert_eq!(s.in_use(), 1 + CHUNK * 2);
        assert_eq!(s.header(first), p, "the first chunk did not move");
        assert_eq!(s.header_words(first)[4], 77);
        for id in more {
            s.release(id);
        }
        assert_eq!(s.in_use(), 1);
        let ack = s.ack(first);
        // SAFETY: the slot has one ack word after its header.
        unsafe { *ack = 5 };
        assert_eq!(s.ack_words(first), &[5]);
        assert_eq!(s.header_words(first).len(), 5);
    }

    #[test]
    fn rooms_move_the_header_and_come_back_to_the_pool() {
        let mut s = Slots::new(5, 1, 1, null());
        let id = s.alloc(Kind::Plain { receive: true }, None);
        let inline = s.header(id);
        let room = s.give_room(id, 1000, 8192);
        assert_ne!(room, inline, "the header moved to the room");
        assert_eq!(s.give_room(id, 1000, 8192), room, "one room per slot");
        // SAFETY: the room holds 5 header words and 8192 bytes.
        unsafe { *room.add(4) = 9 };
        assert_eq!(s.header_words(id)[4], 9);
        s.release(id);
        let next = s.alloc(Kind::Plain { receive: true }, None);
        assert_eq!(next, id);
        assert_eq!(s.header(next), inline, "a released slot has no room");
        assert_eq!(s.give_room(next, 10, 8192), room, "the room was reused");
        assert_eq!(s.give_room(next, 9000, 8192), room, "too large: unchanged");
        let other = s.alloc(Kind::Plain { receive: true }, None);
        assert_eq!(s.give_room(other, 9000, 8192), s.header(other));
        assert_eq!(s.header(other), s.base(other), "too large: no room");
    }

    #[test]
    fn watch_list_matches_a_set_under_churn() {
        let mut s = Slots::new(5, 1, 1, null());
        let ids: Vec<u32> = (0..20)
            .map(|_| s.alloc(Kind::Plain { receive: true }, None))
            .collect();
        let mut model = std::collections::BTreeSet::new();
        let mut state = 12345u32;
        for _ in 0..2000 {
            state ^= state << 13;
            state ^= state >> 17;
            state ^= state << 5;
            let id = ids[(state % 20) as usize];
            if state & 0x100 == 0 {
                s.watch(id);
                model.insert(id);
            } else {
                s.unwatch(id);
                model.remove(&id);
            }
            let mut listed: Vec<u32> = s.watched().to_vec();
            listed.sort_unstable();
            assert_eq!(listed, model.iter().copied().collect::<Vec<_>>());
        }
    }

    #[test]
    fn watch_list_follows_release() {
        let mut s = Slots::new(5, 1, 1, null());
        let a = s.alloc(Kind::Plain { receive: true }, None);
        let b = s.alloc(Kind::Plain { receive: true }, None);
        s.watch(a);
        s.watch(b);
        s.watch(a);
        assert_eq!(s.watched().len(), 2);
        s.release(a);
        assert_eq!(s.watched(), &[b]);
        assert!(s.get(a).is_none());
        s.release(a);
        assert_eq!(s.in_use(), 1);
    }
}
