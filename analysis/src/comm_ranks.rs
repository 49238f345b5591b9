//! Ranks of communicators in world terms.
//!
//! Point-to-point records hold ranks of their own communicator (`peer`,
//! the matched source), while the analyses reason about world ranks (one
//! trace per world rank). Each member of a communicator the runtime named
//! records its rank there in its `CommId` record ([`Op::comm_naming`]: its
//! rank, and the id the records on that communicator carry as `comm`), so
//! the translation is exact for every named communicator, split or
//! duplicated; `MPI_COMM_WORLD` is the identity. A communicator the runtime could not
//! name has no translation (`None`): callers must treat it as unknown.

use mbh_trace::rank_trace::{Op, RankTrace};
use std::collections::HashMap;

/// Translation between communicator ranks and world ranks.
pub(crate) struct CommRanks {
    /// `MPI_COMM_WORLD`'s bits, when a trace recorded `MPI_Init`.
    world: Option<u64>,
    size: usize,
    /// (communicator id, its rank) → world rank.
    to_world: HashMap<(u64, i32), i32>,
    /// (communicator id, world rank) → its rank there.
    to_comm: HashMap<(u64, i32), i32>,
}

impl CommRanks {
    /// Reads the `CommId` records of `traces` (rank `i`'s at index `i`).
    pub(crate) fn new(traces: &[&RankTrace], world: Option<u64>) -> Self {
        let mut ranks = CommRanks {
            world,
            size: traces.len(),
            to_world: HashMap::new(),
            to_comm: HashMap::new(),
        };
        for (world_rank, trace) in traces.iter().enumerate() {
            let world_rank = world_rank as i32;
            for naming in trace.ops.iter().filter_map(Op::comm_naming) {
                let Some(rank) = naming.rank else {
                    continue;
                };
                ranks.to_world.insert((naming.id, rank), world_rank);
                ranks.to_comm.insert((naming.id, world_rank), rank);
            }
        }
        ranks
    }

    fn is_world(&self, comm: u64) -> bool {
        self.world == Some(comm)
    }

    fn in_range(&self, rank: i32) -> bool {
        (0..self.size as i32).contains(&rank)
    }

    /// The world rank of `rank` of `comm`; `None` when `comm` is unknown
    /// or `rank` is not one of its ranks (`MPI_PROC_NULL`, out of range).
    pub(crate) fn world_rank(&self, comm: u64, rank: i32) -> Option<i32> {
        if self.is_world(comm) {
            return self.in_range(rank).then_some(rank);
        }
        self.to_world.get(&(comm, rank)).copied()
    }

    /// The rank of world rank `world_rank` in `comm`; `None` when `comm`
    /// is unknown or does not hold it.
    pub(crate) fn comm_rank(&self, comm: u64, world_rank: i32) -> Option<i32> {
        if self.is_world(comm) {
            return self.in_range(world_rank).then_some(world_rank);
        }
        self.to_comm.get(&(comm, world_rank)).copied()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use mbh_trace::OpKind;

    fn comm_id(index: u64, id: u64, rank_there: i32) -> Op {
        Op {
            aux: id,
            peer: rank_there,
            ..Op::new(index, OpKind::CommId)
        }
    }

    #[test]
    fn a_split_in_reverse_order_translates_both_ways() {
        const SPLIT: u64 = 1 << 63 | 7;
        let traces: Vec<RankTrace> = (0..3)
            .map(|rank| RankTrace::finalized(rank, 3, vec![comm_id(0, SPLIT, 2 - rank)]))
            .collect();
        let refs: Vec<&RankTrace> = traces.iter().collect();
        let ranks = CommRanks::new(&refs, Some(0x4400_0000));
        assert_eq!(ranks.world_rank(SPLIT, 0), Some(2));
        assert_eq!(ranks.comm_rank(SPLIT, 2), Some(0));
        assert_eq!(ranks.world_rank(0x4400_0000, 1), Some(1));
        assert_eq!(ranks.world_rank(0x4400_0000, 3), None);
        // An unnamed communicator has no translation.
        assert_eq!(ranks.world_rank(0x8400_0001, 0), None);
    }
}
