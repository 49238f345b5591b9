//! What one deterministic run (`mbhybrid run`, seed 002) decided, read
//! back from its interleaving directory: how its wildcard receives were
//! decided ([`decision_stats`]) and which sender each took ([`Matches`]),
//! with a digest to compare runs by.

use mbh_trace::determinism::DecisionStats;
use mbh_trace::layout::InterleavingDir;
use mbh_trace::RankTrace;

/// Every rank's decision statistics, summed (a rank that never reached
/// `MPI_Finalize` wrote none).
pub fn decision_stats(dir: &InterleavingDir, np: u32) -> DecisionStats {
    let mut total = DecisionStats::default();
    for rank in 0..np as i32 {
        let path = DecisionStats::path(&dir.path, rank);
        if let Some(stats) = std::fs::read_to_string(path)
            .ok()
            .and_then(|text| DecisionStats::parse(&text))
        {
            total.add(&stats);
        }
    }
    total
}

/// The senders each rank's wildcard receives took, in the order the rank
/// posted them (event numbers): what a deterministic run repeats.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Matches {
    /// Per rank: (event, sender's world rank).
    pub by_rank: Vec<Vec<(u32, i32)>>,
}

impl Matches {
    /// Reads them from the traces in `dir`.
    pub fn read(dir: &InterleavingDir, np: u32) -> Matches {
        let by_rank = (0..np as i32)
            .map(|rank| {
                RankTrace::read(&dir.trace(rank))
                    .map(|trace| Self::of(&trace))
                    .unwrap_or_default()
            })
            .collect();
        Matches { by_rank }
    }

    /// One rank's: the `Matched` records of wildcard events.
    fn of(trace: &RankTrace) -> Vec<(u32, i32)> {
        let mut matched: Vec<(u32, i32)> = trace
            .ops
            .iter()
            .filter_map(|op| op.matched_send())
            .filter_map(|m| Some((m.event?, m.send.sender)))
            .collect();
        matched.sort_unstable();
        matched
    }

    /// FNV-1a over every rank's list.
    pub fn digest(&self) -> u64 {
        let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
        let mut eat = |word: i64| {
            for byte in word.to_le_bytes() {
                hash ^= u64::from(byte);
                hash = hash.wrapping_mul(0x0100_0000_01b3);
            }
        };
        for (rank, matched) in self.by_rank.iter().enumerate() {
            eat(-(rank as i64) - 1);
            for &(event, sender) in matched {
                eat(i64::from(event));
                eat(i64::from(sender));
            }
        }
        hash
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_digest_tells_apart_who_took_what() {
        let a = Matches {
            by_rank: vec![vec![(0, 1), (1, 2)], vec![]],
        };
        let b = Matches {
            by_rank: vec![vec![(0, 2), (1, 1)], vec![]],
        };
        let c = Matches {
            by_rank: vec![vec![], vec![(0, 1), (1, 2)]],
        };
        assert_ne!(a.digest(), b.digest());
        assert_ne!(a.digest(), c.digest());
        assert_eq!(
            a.digest(),
            Matches {
                by_rank: a.by_rank.clone()
            }
            .digest()
        );
    }
}
