//! Whether a branch's paths make the same collectives: PARCOACH's
//! comparison of collective sequences (Saillard, Carribault, Barthou,
//! "PARCOACH: Combining static and dynamic validation of MPI collective
//! communications", IJHPCA 2014, §3), which control dependence alone
//! lacks. `if (rank == 1) { ...; MPI_Barrier } else { MPI_Barrier }`
//! makes every barrier control-dependent on a rank-dependent branch, yet
//! every rank calls `MPI_Barrier` once: seed 000 §7.1.1's divergence needs
//! the *sequences* of collectives to differ between a branch's paths.
//!
//! A branch is *balanced* when every path from it to its immediate
//! post-dominator (the function's end when it has none) makes the same
//! sequence of collective calls and of calls to functions that make
//! collectives (compared by name, not by communicator or root: the runtime's
//! `collective-mismatch` checks those on every run). Anything this cannot
//! judge counts as unbalanced, so the warning stays: a loop between the
//! branch and its join whose body makes such a call (its trip count may
//! differ per rank), an indirect call, or more paths than [`MAX_STEPS`]
//! allows. Paths that end in `unreachable` (a failed assertion, `abort`)
//! are left out by the caller's successor lists, as for control
//! dependence.

use crate::ir::BlockId;

/// Work allowed per branch (blocks visited over all paths); past it the
/// branch is judged unbalanced.
pub(crate) const MAX_STEPS: usize = 10_000;

/// What a block does that the comparison sees, in order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Token {
    /// A collective, by MPI name.
    Collective(String),
    /// A call of the defined function with this index, which makes
    /// collectives (directly or not).
    Call(usize),
}

/// Whether every path of a function from `branch` to `join` (`None`: to
/// the function's end) makes the same [`Token`]s. `succs` are the living
/// successors of each block; `tokens(block)` is `None` for a block whose
/// calls cannot be judged (an indirect call).
pub(crate) fn balanced(
    succs: &[Vec<u32>],
    branch: BlockId,
    join: Option<BlockId>,
    tokens: &dyn Fn(BlockId) -> Option<Vec<Token>>,
) -> bool {
    let mut walk = Walk {
        succs,
        join,
        tokens,
        steps: 0,
        found: None,
        on_path: vec![None; succs.len()],
    };
    let mut sequence = Vec::new();
    succs
        .get(branch as usize)
        .is_some_and(|next| next.iter().all(|&s| walk.visit(s, &mut sequence)))
}

/// A depth-first walk of the paths, stopping at the first disagreement.
struct Walk<'a> {
    succs: &'a [Vec<u32>],
    join: Option<BlockId>,
    tokens: &'a dyn Fn(BlockId) -> Option<Vec<Token>>,
    steps: usize,
    /// The sequence the first complete path made.
    found: Option<Vec<Token>>,
    /// Per block on the current path: the sequence's length on entering it.
    on_path: Vec<Option<usize>>,
}

impl Walk<'_> {
    /// Walks every path from `block`, `sequence` holding the tokens so
    /// far; false as soon as a path disagrees or cannot be judged.
    fn visit(&mut self, block: BlockId, sequence: &mut Vec<Token>) -> bool {
        self.steps += 1;
        if self.steps > MAX_STEPS {
            return false;
        }
        if Some(block) == self.join {
            return self.ends(sequence);
        }
        let Some(slot) = self.on_path.get(block as usize).copied() else {
            return false;
        };
        if let Some(entered_at) = slot {
            // A loop: harmless only when its body makes no token, since
            // its trip count may differ per rank.
            return entered_at == sequence.len();
        }
        let Some(own) = (self.tokens)(block) else {
            return false;
        };
        let before = sequence.len();
        self.on_path[block as usize] = Some(before);
        sequence.extend(own);
        let next = &self.succs[block as usize];
        let agreed = if next.is_empty() {
            self.ends(sequence)
        } else {
            next.iter().all(|&s| self.visit(s, sequence))
        };
        sequence.truncate(before);
        self.on_path[block as usize] = None;
        agreed
    }

    /// A path reached the join or the function's end with `sequence`.
    fn ends(&mut self, sequence: &[Token]) -> bool {
        match &self.found {
            Some(first) => first == sequence,
            None => {
                self.found = Some(sequence.to_vec());
                true
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Blocks' tokens for tests: `None` marks an indirect call.
    fn judge(succs: &[&[u32]], branch: u32, join: Option<u32>, calls: &[Option<&[&str]>]) -> bool {
        let succs: Vec<Vec<u32>> = succs.iter().map(|s| s.to_vec()).collect();
        let tokens = |b: u32| {
            calls[b as usize].map(|names| {
                names
                    .iter()
                    .map(|n| Token::Collective(n.to_string()))
                    .collect()
            })
        };
        balanced(&succs, branch, join, &tokens)
    }

    const NONE: Option<&[&str]> = Some(&[]);
    const BARRIER: Option<&[&str]> = Some(&["MPI_Barrier"]);
    const BCAST: Option<&[&str]> = Some(&["MPI_Bcast"]);

    #[test]
    fn a_barrier_on_both_sides_is_balanced() {
        // 0 -> {1, 2} -> 3
        let succs: &[&[u32]] = &[&[1, 2], &[3], &[3], &[]];
        assert!(judge(succs, 0, Some(3), &[NONE, BARRIER, BARRIER, NONE]));
    }

    #[test]
    fn a_barrier_on_one_side_is_not() {
        let succs: &[&[u32]] = &[&[1, 2], &[3], &[3], &[]];
        assert!(!judge(succs, 0, Some(3), &[NONE, BARRIER, NONE, NONE]));
        assert!(!judge(succs, 0, Some(3), &[NONE, BARRIER, BCAST, NONE]));
    }

    #[test]
    fn nested_branches_compare_every_path() {
        // S3's shape: 0 -> {1, 2}; 2 -> {3, 4}; 1, 3, 4 -> 5.
        let succs: &[&[u32]] = &[&[1, 2], &[5], &[3, 4], &[5], &[5], &[]];
        let calls = [NONE, BARRIER, NONE, BARRIER, BARRIER, NONE];
        assert!(judge(succs, 0, Some(5), &calls));
        let calls = [NONE, BARRIER, NONE, BARRIER, NONE, NONE];
        assert!(!judge(succs, 0, Some(5), &calls));
    }

    #[test]
    fn a_loop_making_a_collective_is_not_balanced() {
        // 0 -> {1, 3}; 1 -> 2; 2 -> {1, 3}: a loop on one side.
        let succs: &[&[u32]] = &[&[1, 3], &[2], &[1, 3], &[]];
        assert!(!judge(succs, 0, Some(3), &[NONE, BARRIER, NONE, NONE]));
        // The same loop without a collective in it: nothing differs.
        assert!(judge(succs, 0, Some(3), &[NONE, NONE, NONE, NONE]));
    }

    #[test]
    fn an_indirect_call_cannot_be_judged() {
        let succs: &[&[u32]] = &[&[1, 2], &[3], &[3], &[]];
        assert!(!judge(succs, 0, Some(3), &[NONE, None, NONE, NONE]));
    }

    #[test]
    fn without_a_join_paths_run_to_the_end() {
        // 0 -> {1, 2}, each returns: both must make the same calls.
        let succs: &[&[u32]] = &[&[1, 2], &[], &[]];
        assert!(judge(succs, 0, None, &[NONE, BARRIER, BARRIER]));
        assert!(!judge(succs, 0, None, &[NONE, BARRIER, NONE]));
    }
}
