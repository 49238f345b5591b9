//! The horizon of a receive's sweep: the largest position a candidate send
//! still to decide can have, over groups of sends (per rank, or per rank
//! and tag) whose bounds only come down as the sweep settles them.
//!
//! A sweep lowers one group's bound at each fence (or send) that settles
//! it; recomputing the maximum over every group then costs O(groups) per
//! lowering, O(ranks²) per receive once every rank has a settling fence.
//! A max-heap whose stale entries are dropped when they surface costs
//! O(log groups) per lowering instead.

use std::collections::BinaryHeap;

/// The largest of per-group values that only decrease.
#[derive(Debug, Default)]
pub(crate) struct Horizon {
    current: Vec<u32>,
    /// (value, group), stale when `current[group]` is below `value`.
    heap: BinaryHeap<(u32, u32)>,
}

impl Horizon {
    /// Groups `0..values.len()` with their starting values.
    pub(crate) fn new(values: Vec<u32>) -> Self {
        let heap = values
            .iter()
            .enumerate()
            .map(|(g, &v)| (v, g as u32))
            .collect();
        Horizon {
            current: values,
            heap,
        }
    }

    /// Lowers group `group`'s value to `value` (a larger value is ignored).
    pub(crate) fn lower(&mut self, group: usize, value: u32) {
        if value < self.current[group] {
            self.current[group] = value;
            self.heap.push((value, group as u32));
        }
    }

    /// The largest value, 0 without groups.
    pub(crate) fn max(&mut self) -> u32 {
        while let Some(&(value, group)) = self.heap.peek() {
            if self.current[group as usize] == value {
                return value;
            }
            self.heap.pop();
        }
        0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_maximum_follows_every_lowering() {
        let mut h = Horizon::new(vec![5, 9, 7]);
        assert_eq!(h.max(), 9);
        h.lower(1, 3);
        assert_eq!(h.max(), 7);
        h.lower(2, 8); // higher than 7: ignored
        assert_eq!(h.max(), 7);
        h.lower(2, 1);
        h.lower(0, 2);
        assert_eq!(h.max(), 3);
        assert_eq!(Horizon::new(Vec::new()).max(), 0);
    }
}
