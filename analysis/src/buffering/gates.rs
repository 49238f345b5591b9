//! The world collectives in the fixpoint: a rank passes its `k`-th
//! collective on `MPI_COMM_WORLD` once every rank reached its own `k`-th
//! (seed 003 §3.1 treats every collective as a barrier). Written as one
//! condition per other rank, that was `ranks - 1` conditions for each rank
//! at each instance, `ranks²` per instance, rebuilt and tested again each
//! time a rank was woken: at 1,024 ranks, 138 million conditions for the
//! 132 collectives of 10^4 calls. Here each instance counts the
//! ranks that reached it, and opens when all did: the same condition
//! (every rank at or past its instance), in `O(ranks)` per instance.
//!
//! Only instances every rank has are gates: at a later one some rank has
//! no instance to reach, and the record's condition says so
//! ([`super::Model::needs`]: not modelled, always passed).

use super::Model;

/// Arrivals at the world collective instances every rank has.
pub(super) struct Gates {
    size: usize,
    /// Per instance: the ranks at or past their record of it.
    arrived: Vec<usize>,
    /// Per instance: the ranks stopped at it, to wake when it opens.
    waiters: Vec<Vec<usize>>,
    /// Per rank: its first instance it has not reached.
    next: Vec<usize>,
}

impl Gates {
    /// The gates of `model` with every rank at its first record (those at
    /// an instance already have arrived).
    pub(super) fn new(model: &Model<'_>, work: &mut Vec<usize>) -> Gates {
        let size = model.ranks.len();
        let mut gates = Gates {
            size,
            arrived: vec![0; model.common_instances],
            waiters: vec![Vec::new(); model.common_instances],
            next: vec![0; size],
        };
        for rank in 0..size {
            gates.reached(model, rank, 0, work);
        }
        gates
    }

    /// Whether every rank reached instance `k`.
    pub(super) fn is_open(&self, k: usize) -> bool {
        self.arrived[k] == self.size
    }

    /// `rank` stops at instance `k` until it opens.
    pub(super) fn wait(&mut self, k: usize, rank: usize) {
        self.waiters[k].push(rank);
    }

    /// `rank` is now at its record `at`: it arrived at every instance up
    /// to there; the ranks stopped at an instance that opens go to `work`.
    pub(super) fn reached(
        &mut self,
        model: &Model<'_>,
        rank: usize,
        at: u64,
        work: &mut Vec<usize>,
    ) {
        let records = &model.ranks[rank].collectives;
        while let Some(&record) = records.get(self.next[rank]) {
            if record > at {
                break;
            }
            let k = self.next[rank];
            self.next[rank] += 1;
            if let Some(arrived) = self.arrived.get_mut(k) {
                *arrived += 1;
                if *arrived == self.size {
                    work.append(&mut self.waiters[k]);
                }
            }
        }
    }
}
