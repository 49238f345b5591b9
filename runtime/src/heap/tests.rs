//! The heap table under allocation churn, against a model of the live
//! blocks. The table is one static shared by the tests of this crate that
//! run in parallel, so each test owns its own address ranges.

use super::*;
use std::collections::HashMap;

fn ptr(address: usize) -> *mut c_void {
    address as *mut c_void
}

#[test]
fn blocks_are_found_until_freed_and_replaced_when_reused() {
    let a = ptr(0x7000_0000_1000);
    let b = ptr(0x7000_0000_2000);
    mbhybrid_note_alloc(a, 4000);
    mbhybrid_note_alloc(b, 16);
    assert_eq!(block_size(a), Some(4000));
    assert_eq!(block_size(b), Some(16));
    assert_eq!(block_size((a as usize + 16) as *const c_void), None);
    mbhybrid_note_free(a);
    assert_eq!(block_size(a), None);
    assert_eq!(
        block_size(b),
        Some(16),
        "a freed slot does not end the probe"
    );
    mbhybrid_note_alloc(b, 64);
    assert_eq!(block_size(b), Some(64), "a block whose free was not seen");
    mbhybrid_note_alloc(std::ptr::null_mut(), 10);
    assert_eq!(block_size(std::ptr::null()), None);
}

/// Pointers MPI programs pass as buffers that are no heap block: NULL and
/// `MPI_BOTTOM` (0), Open MPI's `MPI_IN_PLACE` (1), MPICH's (-1), and the
/// next small values.
const NOT_BLOCKS: [usize; 5] = [0, 1, 2, 3, usize::MAX];

/// A small deterministic generator (xorshift), so a failure replays.
struct Dice(u64);

impl Dice {
    fn below(&mut self, n: usize) -> usize {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 % n as u64) as usize
    }
}

/// `count` 16-aligned addresses from `base` on whose probes start in the
/// table's first slots, where the probes of the small pointers of
/// [`NOT_BLOCKS`] run, and as many plain neighbours.
fn addresses(base: usize, count: usize) -> Vec<usize> {
    let low = (0..)
        .map(|i| base + 16 * i)
        .filter(|&a| first_slot(a) < PROBES)
        .take(count);
    let plain = (0..count).map(|i| base + 0x10_0000 + 64 * i);
    low.chain(plain).collect()
}

/// The live blocks of a churn, and the size the table must give for
/// each: `None` for a block the table could not list (its slots around
/// are full), which only means the block is not checked.
type Live = HashMap<usize, Option<usize>>;

/// Notes an allocation, and what the table must say of it after.
fn alloc(live: &mut Live, address: usize, size: usize) {
    let listed = list(ptr(address), size);
    live.insert(address, listed.then_some(size));
}

/// One step of a program's allocations, on the table and on the model.
fn churn_step(dice: &mut Dice, pool: &[usize], live: &mut Live) {
    let address = pool[dice.below(pool.len())];
    let size = 8 * (1 + dice.below(512));
    let listed = live.contains_key(&address);
    match (dice.below(5), listed) {
        // malloc, or reuse of a freed address at another size.
        (0 | 1, false) => {
            alloc(live, address, size);
        }
        // realloc that moves: the old block is freed first.
        (2, true) => {
            let to = pool[dice.below(pool.len())];
            if !live.contains_key(&to) {
                mbhybrid_note_free(ptr(address));
                live.remove(&address);
                alloc(live, to, size);
            }
        }
        // realloc that grows (or shrinks) in place.
        (3, true) => {
            mbhybrid_note_free(ptr(address));
            alloc(live, address, size);
        }
        // A block made again whose free was not seen (freed in a library).
        (2, false) => {
            alloc(live, address, size);
        }
        (_, true) => {
            mbhybrid_note_free(ptr(address));
            live.remove(&address);
        }
        _ => {}
    }
}

/// Every address of `pool` is listed with its live size or not at all,
/// and no pointer of [`NOT_BLOCKS`] is ever a block.
fn check_against(pool: &[usize], live: &Live, step: usize) {
    for &address in pool {
        assert_eq!(
            block_size(ptr(address)),
            live.get(&address).copied().flatten(),
            "block {address:#x} after step {step}"
        );
    }
    for pointer in NOT_BLOCKS {
        assert_eq!(
            block_size(ptr(pointer)),
            None,
            "pointer {pointer:#x} is no block (step {step})"
        );
    }
}

/// Churns the table through `pool` on one thread, checking every step.
fn churn(seed: u64, pool: &[usize], steps: usize) {
    let mut dice = Dice(seed);
    let mut live = Live::new();
    for step in 0..steps {
        churn_step(&mut dice, pool, &mut live);
        check_against(pool, &live, step);
    }
    for &address in live.keys() {
        mbhybrid_note_free(ptr(address));
    }
}

/// Issue 38 item 5: an in-place `MPI_Allreduce` on Open MPI was once
/// reported as overflowing a freed 32-byte block, because the lookup of
/// its `MPI_IN_PLACE` (the pointer 1) matched a freed slot.
#[test]
fn allocation_churn_keeps_every_block_exact_and_no_sentinel_a_block() {
    churn(0x9e37_79b9, &addresses(0x5a00_0000_0000, 48), 4000);
}

/// The same churn on four threads at once, each on its own addresses
/// (one address is live in one thread at a time), whose probes share the
/// table's first slots.
#[test]
fn concurrent_churn_keeps_every_threads_blocks_exact() {
    let threads: Vec<_> = (0..4u64)
        .map(|t| {
            std::thread::spawn(move || {
                let base = 0x5b00_0000_0000 + (t as usize) * 0x1_0000_0000;
                churn(0x51_7cc1 + t, &addresses(base, 24), 3000);
            })
        })
        .collect();
    for thread in threads {
        thread.join().expect("a churning thread failed");
    }
}
