//! One rank's facts keyed by record index, as sorted arrays: what the
//! buffering analysis and the oracle kept in `HashMap<(rank, record), _>`s,
//! which at 1,024 ranks of 10^4 calls were most of the buffering
//! analysis's time (a cache miss per lookup in tables of millions of
//! entries) and 2.7 GiB beside the traces at 1,024 ranks. A rank's keys are
//! looked up in about the order its records are walked: each search
//! starts where the previous one ended ([`partition_point_near`]), and
//! reads a few neighbouring entries instead of a cache line per halving
//! of a binary search.

use std::cell::Cell;

/// Values by record index: several per record ([`RecordMap::multi`]) or
/// one ([`RecordMap::last_wins`]), found by searching near the last key
/// found.
#[derive(Debug, Clone)]
pub(crate) struct RecordMap<V> {
    keys: Vec<u64>,
    values: Vec<V>,
    /// Where the last search ended.
    hint: Cell<usize>,
}

impl<V> Default for RecordMap<V> {
    fn default() -> Self {
        RecordMap {
            keys: Vec::new(),
            values: Vec::new(),
            hint: Cell::new(0),
        }
    }
}

impl<V> RecordMap<V> {
    /// Every value of `entries`, grouped by key; a key's values keep their
    /// order in `entries` (what pushing them to a map's `Vec` gave).
    pub(crate) fn multi(mut entries: Vec<(u64, V)>) -> Self {
        // Stable: the values of one key stay in the order given.
        entries.sort_by_key(|&(key, _)| key);
        let (keys, values) = entries.into_iter().unzip();
        RecordMap {
            keys,
            values,
            hint: Cell::new(0),
        }
    }

    /// The last value of `entries` for each key (what inserting them in
    /// order into a map left).
    pub(crate) fn last_wins(mut entries: Vec<(u64, V)>) -> Self {
        entries.sort_by_key(|&(key, _)| key);
        let mut keys: Vec<u64> = Vec::with_capacity(entries.len());
        let mut values: Vec<V> = Vec::with_capacity(entries.len());
        for (key, value) in entries {
            if keys.last() == Some(&key) {
                // Sorted stably: a later entry of the key replaces it.
                *values.last_mut().expect("a value per key") = value;
            } else {
                keys.push(key);
                values.push(value);
            }
        }
        RecordMap {
            keys,
            values,
            hint: Cell::new(0),
        }
    }

    /// The position of the first key not below `key`.
    fn first_at_least(&self, key: u64) -> usize {
        let at = partition_point_near(&self.keys, self.hint.get(), |&k| k < key);
        self.hint.set(at);
        at
    }

    /// The values of `key`, in order (empty when it has none).
    pub(crate) fn all(&self, key: u64) -> &[V] {
        let from = self.first_at_least(key);
        let to = from + partition_point_near(&self.keys[from..], 0, |&k| k == key);
        &self.values[from..to]
    }

    /// The value of `key` (the first, for a map of several per key).
    pub(crate) fn get(&self, key: u64) -> Option<&V> {
        let at = self.first_at_least(key);
        (self.keys.get(at) == Some(&key)).then(|| &self.values[at])
    }

    /// Whether `key` has a value.
    pub(crate) fn contains(&self, key: u64) -> bool {
        self.get(key).is_some()
    }

    /// Every key with a value, ascending (repeated for each of its
    /// values), and the value.
    pub(crate) fn iter(&self) -> impl Iterator<Item = (u64, &V)> {
        self.keys.iter().copied().zip(&self.values)
    }
}

/// [`slice::partition_point`] (`pred` holds for a prefix of `list`, and
/// the answer is its length), searched outward from `hint` in steps that
/// double, then by halving: `O(log d)` for an answer `d` away from `hint`.
pub(crate) fn partition_point_near<T>(list: &[T], hint: usize, pred: impl Fn(&T) -> bool) -> usize {
    let hint = hint.min(list.len());
    let mut step = 1;
    if hint > 0 && !pred(&list[hint - 1]) {
        // The answer is at most `high`: backwards.
        let mut high = hint - 1;
        loop {
            if high < step {
                return list[..high].partition_point(&pred);
            }
            let low = high - step;
            if pred(&list[low]) {
                return low + 1 + list[low + 1..high].partition_point(&pred);
            }
            high = low;
            step *= 2;
        }
    }
    // The answer is at least `low`: forwards.
    let mut low = hint;
    loop {
        let probe = low + step - 1;
        if probe >= list.len() {
            return low + list[low..].partition_point(&pred);
        }
        if !pred(&list[probe]) {
            return low + list[low..probe].partition_point(&pred);
        }
        low = probe + 1;
        step *= 2;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn several_values_of_a_key_keep_their_order() {
        let map = RecordMap::multi(vec![(5, 'a'), (2, 'b'), (5, 'c'), (9, 'd'), (5, 'e')]);
        assert_eq!(map.all(5), ['a', 'c', 'e']);
        assert_eq!(map.all(2), ['b']);
        assert_eq!(map.all(3), [] as [char; 0]);
        assert_eq!(map.all(10), [] as [char; 0]);
        assert_eq!(map.get(5), Some(&'a'));
        assert!(map.contains(9) && !map.contains(0));
    }

    #[test]
    fn the_last_value_of_a_key_wins_as_in_a_map() {
        let entries = vec![(7, 1), (3, 2), (7, 3), (3, 4), (1, 5)];
        let map = RecordMap::last_wins(entries.clone());
        let mut hashed = std::collections::HashMap::new();
        for (k, v) in entries {
            hashed.insert(k, v);
        }
        for k in 0..10 {
            assert_eq!(map.get(k), hashed.get(&k), "key {k}");
        }
        assert_eq!(map.iter().count(), 3);
    }

    #[test]
    fn a_search_from_any_hint_finds_the_partition_point() {
        for len in 0..40usize {
            let list: Vec<usize> = (0..len).map(|i| i * 3).collect();
            for bound in 0..len * 3 + 2 {
                let want = list.partition_point(|&x| x < bound);
                for hint in 0..len + 3 {
                    assert_eq!(
                        partition_point_near(&list, hint, |&x| x < bound),
                        want,
                        "len {len}, bound {bound}, hint {hint}"
                    );
                }
            }
        }
    }

    #[test]
    fn lookups_in_any_order_find_their_keys() {
        let map = RecordMap::multi((0..100u64).map(|k| (k * 2, k)).collect());
        for key in [150, 3, 198, 0, 199, 64, 65, 64, 2, 500] {
            let want: Vec<u64> = (key % 2 == 0 && key < 200)
                .then_some(key / 2)
                .into_iter()
                .collect();
            assert_eq!(map.all(key), want, "key {key}");
            assert_eq!(map.get(key), want.first(), "key {key}");
        }
    }
}
