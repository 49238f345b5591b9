//! Outstanding nonblocking requests: request handle bits -> the runtime's
//! slot for the request ([`crate::slots`]), so a completion finds its
//! header, its record and what it was.
//!
//! A fixed-size open-addressing table (linear probing, backward-shift
//! deletion, so no tombstones pile up) in atomics: no allocation, no lock,
//! no `unsafe`. Single writer, like the rest of the runtime. When it is
//! three quarters full, insertion fails (the caller stops the run: a
//! request the runtime cannot find again would lose its header).

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering::Relaxed};

/// Slot value of an empty slot.
const EMPTY: u64 = 0;

/// Request handle bits -> slot id, `N` entries (a power of two).
pub struct RequestTable<const N: usize> {
    keys: [AtomicU64; N],
    values: [AtomicU64; N],
    len: AtomicUsize,
}

impl<const N: usize> Default for RequestTable<N> {
    fn default() -> Self {
        Self::new()
    }
}

impl<const N: usize> RequestTable<N> {
    const N_IS_A_POWER_OF_TWO: () = assert!(N.is_power_of_two() && N >= 4);
    const MASK: usize = N - 1;
    /// At most this many entries, so probes always meet an empty slot.
    const MAX_LEN: usize = N / 4 * 3;

    /// An empty table.
    pub const fn new() -> Self {
        #[allow(clippy::let_unit_value)]
        let () = Self::N_IS_A_POWER_OF_TWO;
        RequestTable {
            keys: [const { AtomicU64::new(0) }; N],
            values: [const { AtomicU64::new(EMPTY) }; N],
            len: AtomicUsize::new(0),
        }
    }

    fn home(key: u64) -> usize {
        // Fibonacci hashing: MPICH handles differ mostly in low bits.
        (key.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 32) as usize & Self::MASK
    }

    /// The slot holding `key`, if any.
    fn find(&self, key: u64) -> Option<usize> {
        let mut slot = Self::home(key);
        for _ in 0..N {
            if self.values[slot].load(Relaxed) == EMPTY {
                return None;
            }
            if self.keys[slot].load(Relaxed) == key {
                return Some(slot);
            }
            slot = (slot + 1) & Self::MASK;
        }
        None
    }

    /// Remembers `slot` for `key` (replacing a stale entry of a reused
    /// handle). False when the table is too full.
    pub fn insert(&self, key: u64, slot: u32) -> bool {
        let value = u64::from(slot) + 1;
        let mut slot = Self::home(key);
        for _ in 0..N {
            let current = self.values[slot].load(Relaxed);
            if current == EMPTY {
                if self.len.load(Relaxed) >= Self::MAX_LEN {
                    return false;
                }
                self.keys[slot].store(key, Relaxed);
                self.values[slot].store(value, Relaxed);
                self.len.fetch_add(1, Relaxed);
                return true;
            }
            if self.keys[slot].load(Relaxed) == key {
                self.values[slot].store(value, Relaxed);
                return true;
            }
            slot = (slot + 1) & Self::MASK;
        }
        false
    }

    /// What is remembered for `key`.
    pub fn get(&self, key: u64) -> Option<u32> {
        let slot = self.find(key)?;
        unpack(self.values[slot].load(Relaxed))
    }

    /// Forgets `key`, returning what was remembered.
    pub fn remove(&self, key: u64) -> Option<u32> {
        let mut hole = self.find(key)?;
        let found = unpack(self.values[hole].load(Relaxed));
        // Backward-shift deletion (Knuth 6.4, Algorithm R): move later
        // entries of the probe run into the hole when their home allows.
        self.values[hole].store(EMPTY, Relaxed);
        let mut next = hole;
        for _ in 0..N {
            next = (next + 1) & Self::MASK;
            let value = self.values[next].load(Relaxed);
            if value == EMPTY {
                break;
            }
            let key = self.keys[next].load(Relaxed);
            let home = Self::home(key);
            // The entry at `next` may move to `hole` unless its home lies
            // cyclically in (hole, next].
            let stays = if hole <= next {
                hole < home && home <= next
            } else {
                hole < home || home <= next
            };
            if stays {
                continue;
            }
            self.keys[hole].store(key, Relaxed);
            self.values[hole].store(value, Relaxed);
            self.values[next].store(EMPTY, Relaxed);
            hole = next;
        }
        self.len.fetch_sub(1, Relaxed);
        found
    }

    /// Entries held.
    #[cfg(test)]
    pub fn len(&self) -> usize {
        self.len.load(Relaxed)
    }
}

fn unpack(value: u64) -> Option<u32> {
    u32::try_from(value.checked_sub(1)?).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn irecv(index: u64) -> u32 {
        index as u32
    }

    #[test]
    fn insert_get_remove() {
        let t = RequestTable::<16>::new();
        assert!(t.insert(0xac00_0001, irecv(0)));
        assert!(t.insert(0xac00_0002, irecv(5)));
        assert_eq!(t.get(0xac00_0001), Some(irecv(0)));
        assert_eq!(t.remove(0xac00_0002), Some(irecv(5)));
        assert_eq!(t.get(0xac00_0002), None);
        assert_eq!(t.remove(0xac00_0002), None);
        assert_eq!(t.len(), 1);
    }

    #[test]
    fn reused_handle_replaces_stale_entry() {
        let t = RequestTable::<16>::new();
        assert!(t.insert(7, irecv(1)));
        let isend = 9;
        assert!(t.insert(7, isend));
        assert_eq!(t.len(), 1);
        assert_eq!(t.get(7), Some(isend));
    }

    #[test]
    fn refuses_when_three_quarters_full() {
        let t = RequestTable::<8>::new();
        for k in 0..6 {
            assert!(t.insert(k, irecv(k)), "insert {k}");
        }
        assert!(!t.insert(100, irecv(100)));
        for k in 0..6 {
            assert_eq!(t.get(k), Some(irecv(k)));
        }
    }

    #[test]
    fn slot_ids_round_trip() {
        let t = RequestTable::<8>::new();
        assert!(t.insert(1, u32::MAX));
        assert_eq!(t.get(1), Some(u32::MAX));
        assert!(t.insert(2, 0));
        assert_eq!(t.remove(2), Some(0));
    }

    /// Many insert/remove cycles against a model: removal must never lose
    /// an entry that shares a probe run (the bug tombstone-free deletion
    /// invites).
    #[test]
    fn matches_a_model_under_churn() {
        let t = RequestTable::<32>::new();
        let mut model = std::collections::HashMap::new();
        let mut x: u64 = 12345;
        for step in 0..20_000u64 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            // Few distinct keys, so runs collide and wrap around.
            let key = x % 40;
            let step = step % 1000;
            if x & 0x100 == 0 {
                if t.insert(key, irecv(step)) {
                    model.insert(key, irecv(step));
                } else {
                    assert!(model.len() >= 24 && !model.contains_key(&key));
                }
            } else {
                assert_eq!(t.remove(key), model.remove(&key), "step {step}");
            }
            assert_eq!(t.len(), model.len());
            for (k, v) in &model {
                assert_eq!(t.get(*k), Some(*v), "step {step} key {k}");
            }
        }
    }
}
