//! A fixed table of keys already reported, so that a check made at every
//! call records each (call, site) once: no allocation, no lock (callers
//! hold the runtime's state, one at a time). A key that finds no free
//! slot near its home is reported again, which the report merges.

use std::sync::atomic::{AtomicU64, Ordering};

/// Slots probed from a key's home before giving up.
const WINDOW: usize = 16;

/// `N` slots of nonzero keys (0: empty).
pub struct Seen<const N: usize> {
    slots: [AtomicU64; N],
}

impl<const N: usize> Seen<N> {
    /// An empty table.
    pub const fn new() -> Self {
        Seen {
            slots: [const { AtomicU64::new(0) }; N],
        }
    }

    /// Whether `key` (nonzero) was seen; claims a slot for it otherwise.
    pub fn seen_before(&self, key: u64) -> bool {
        let home = (key.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 32) as usize;
        for i in 0..WINDOW.min(N) {
            let slot = &self.slots[(home + i) % N];
            match slot.load(Ordering::Relaxed) {
                0 => {
                    slot.store(key, Ordering::Relaxed);
                    return false;
                }
                k if k == key => return true,
                _ => {}
            }
        }
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_key_is_new_once() {
        let seen: Seen<64> = Seen::new();
        assert!(!seen.seen_before(7));
        assert!(seen.seen_before(7));
        assert!(!seen.seen_before(8));
    }
}
