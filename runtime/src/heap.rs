//! The sizes of the program's heap blocks, for the buffer check
//! ([`crate::buffer_check`]).
//!
//! `mbhybrid build` inserts a call of [`mbhybrid_note_alloc`] after each
//! `malloc`, `calloc`, `realloc`, `aligned_alloc` and C++ `new` in the
//! program's own code, and of [`mbhybrid_note_free`] before each `free`
//! (and `realloc`) and `delete`. Blocks made or freed in code mbhybrid did
//! not compile (libraries) are not in the table, so their buffers are not
//! checked. Only a buffer that starts a block is looked up: an interior
//! pointer is not checked here (the static analysis checks constant
//! offsets into objects it knows).
//!
//! The table is a fixed array probed linearly, with no lock: any thread
//! may allocate, and a full table (or a long probe) drops the block,
//! which only means fewer checks. A slot's key is the block's address or
//! one of three markers (empty, freed, being written); the addresses at
//! or below the markers are never looked up nor listed ([`address_of`]),
//! since MPI programs pass such pointers as buffers (Open MPI's
//! `MPI_IN_PLACE` is 1, the freed marker: looked up, it would match a
//! freed slot). A slot
//! is written like a sequence lock: marked, size, then key; a reader
//! re-reads the key after the size, so it returns a size only with the
//! key that was published with it. Nothing here allocates, and nothing
//! changes what the program computes.

use std::os::raw::c_void;
use std::sync::atomic::{fence, AtomicUsize, Ordering};

/// Slots in the table: live blocks beyond it are not followed.
const SLOTS: usize = 1 << 15;
/// Slots looked at before giving up on an insert or a lookup.
const PROBES: usize = 32;
/// A slot never used (ends a lookup).
const EMPTY: usize = 0;
/// A slot whose block was freed (a lookup goes on past it).
const FREED: usize = 1;
/// A slot being written.
const CLAIMED: usize = 2;

static KEYS: [AtomicUsize; SLOTS] = [const { AtomicUsize::new(EMPTY) }; SLOTS];
static SIZES: [AtomicUsize; SLOTS] = [const { AtomicUsize::new(0) }; SLOTS];
/// Blocks noted, so a program that allocates nothing pays nothing.
static NOTED: AtomicUsize = AtomicUsize::new(0);
/// Changes with every allocation and free noted: an answer read from the
/// table holds while it stays the same ([`generation`]). A load and a
/// store, not a locked increment, on the program's allocation path: two
/// threads racing still move it, which is all a reader compares.
static GENERATION: AtomicUsize = AtomicUsize::new(0);

/// The table's generation (see [`GENERATION`]).
#[inline]
pub fn generation() -> usize {
    GENERATION.load(Ordering::Acquire)
}

fn next_generation() {
    GENERATION.store(
        GENERATION.load(Ordering::Relaxed).wrapping_add(1),
        Ordering::Release,
    );
}

/// The key of the block at `pointer`, or `None` for a pointer no block
/// starts at that would read as a slot's marker (NULL, `MPI_BOTTOM`,
/// Open MPI's `MPI_IN_PLACE`): every entry to the table goes through here.
fn address_of(pointer: *const c_void) -> Option<usize> {
    let address = pointer as usize;
    (address > CLAIMED).then_some(address)
}

fn first_slot(block: usize) -> usize {
    // Blocks are 16-aligned: the low bits carry nothing.
    (block >> 4).wrapping_mul(0x9E37_79B9_7F4A_7C15) % SLOTS
}

fn slots_of(block: usize) -> impl Iterator<Item = usize> {
    let first = first_slot(block);
    (0..PROBES).map(move |i| (first + i) % SLOTS)
}

/// Called by the program's instrumented code after an allocation of
/// `size` bytes returned `block`.
#[no_mangle]
pub extern "C" fn mbhybrid_note_alloc(block: *mut c_void, size: usize) {
    list(block, size);
}

/// Lists the block at `block` with `size` bytes; whether it is listed (a
/// failed allocation, or a table full around its slot, is not).
fn list(block: *mut c_void, size: usize) -> bool {
    let Some(block) = address_of(block) else {
        return false; // a failed allocation
    };
    // A block still listed (its free was not seen) is replaced in place.
    let slot = slots_of(block)
        .find(|&s| KEYS[s].load(Ordering::Acquire) == block)
        .or_else(|| {
            slots_of(block).find(|&s| {
                let key = KEYS[s].load(Ordering::Relaxed);
                (key == EMPTY || key == FREED)
                    && KEYS[s]
                        .compare_exchange(key, CLAIMED, Ordering::AcqRel, Ordering::Relaxed)
                        .is_ok()
            })
        });
    let Some(slot) = slot else {
        return false; // the table is full around here: this block is not checked
    };
    KEYS[slot].store(CLAIMED, Ordering::Relaxed);
    // The mark is seen before the new size by a reader that sees the size
    // (the reader's fence in `block_size` pairs with this one).
    fence(Ordering::Release);
    SIZES[slot].store(size, Ordering::Relaxed);
    KEYS[slot].store(block, Ordering::Release);
    NOTED.fetch_add(1, Ordering::Relaxed);
    next_generation();
    true
}

/// Called by the program's instrumented code before `block` is freed.
#[no_mangle]
pub extern "C" fn mbhybrid_note_free(block: *mut c_void) {
    let Some(block) = address_of(block) else {
        return;
    };
    if let Some(slot) = slots_of(block).find(|&s| KEYS[s].load(Ordering::Acquire) == block) {
        KEYS[slot].store(FREED, Ordering::Release);
        next_generation();
    }
}

/// Whether any block was noted (a program `mbhybrid build` did not
/// compile notes none).
#[inline]
pub fn any_noted() -> bool {
    NOTED.load(Ordering::Relaxed) != 0
}

/// The size of the live block that starts at `buffer`, if it is listed.
pub fn block_size(buffer: *const c_void) -> Option<usize> {
    if NOTED.load(Ordering::Relaxed) == 0 {
        return None;
    }
    let block = address_of(buffer)?;
    for slot in slots_of(block) {
        match KEYS[slot].load(Ordering::Acquire) {
            EMPTY => return None,
            key if key == block => {
                let size = SIZES[slot].load(Ordering::Relaxed);
                fence(Ordering::Acquire);
                // Still the same block after reading its size.
                return (KEYS[slot].load(Ordering::Relaxed) == block).then_some(size);
            }
            _ => {}
        }
    }
    None
}

#[cfg(test)]
mod tests;
