//! The search policy: which of the open choices runs next.
//!
//! The [`Explorer`](crate::Explorer) owns everything else (finding choice
//! points, the bounds, building the forced prefix of each run, statistics);
//! a policy only orders the alternatives the explorer offers it. [`Dfs`] is
//! the order of seed 000 Fig 5.23.

use mbh_trace::rank_trace::WildcardEvent;

/// Where a wildcard event sits in the exploration order: by final clock,
/// then rank, then per-rank event number.
///
/// Lamport clocks order causally related events, so two events with equal
/// final clocks on different ranks are concurrent. The explorer breaks such
/// ties by rank and event number and treats the tied choice points as if
/// they were ordered: forcing the later one forces the earlier one to its
/// recorded sender. Every combination of their outcomes is thus explored
/// (they are concurrent, so any combination may be feasible), where a
/// scheduler treating a whole clock value as one level would explore each
/// of them only under the other's default outcome.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Key {
    /// Final clock (seed 000 rule R4).
    pub clock: u64,
    /// Receiving rank.
    pub rank: i32,
    /// Per-rank wildcard event number.
    pub event: u32,
}

impl Key {
    /// The key of a recorded event.
    pub fn of(event: &WildcardEvent) -> Key {
        Key {
            clock: event.final_clock,
            rank: event.rank,
            event: event.event,
        }
    }
}

/// A run of the explored tree whose choice points are open: every run the
/// explorer has offered alternatives of.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct NodeId(pub u64);

/// One alternative the explorer offers: run again, forcing the choice point
/// `key` of run `node` to `sender`, and everything below it as in `node`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Choice {
    /// The run that found the choice point.
    pub node: NodeId,
    /// The choice point, as it was in that run.
    pub key: Key,
    /// The sender to force.
    pub sender: i32,
    /// 1-based position of the choice point among the explorable choice
    /// points of `node` above its own forced choice (the mixing window).
    pub position: u32,
}

/// Orders the alternatives the explorer offers.
///
/// The explorer calls [`Policy::open`] once per run that has explorable
/// choice points, [`Policy::extend`] when a run finds one more sender for a
/// choice point of an open run, and [`Policy::next_choice`] to pick the
/// next run. A policy should eventually return every choice it was given:
/// the explorer keeps a run's data until all of its choices were returned.
pub trait Policy {
    /// Run `node` has these alternatives (ascending key, then sender).
    fn open(&mut self, node: NodeId, choices: Vec<Choice>);
    /// One more alternative for a choice point of an open run (found by the
    /// run that forced that choice point).
    fn extend(&mut self, choice: Choice);
    /// The next alternative to run, or `None` when none is left.
    fn next_choice(&mut self) -> Option<Choice>;

    /// The next `n` choices [`Policy::next_choice`] would give if no run
    /// opened or extended anything in between (what `verify --jobs` runs
    /// ahead). A policy that cannot tell gives none.
    fn upcoming(&self, _n: usize) -> Vec<Choice> {
        Vec::new()
    }
}

/// Depth-first search, seed 000 Fig 5.23: the alternatives of the most
/// recent run first (a replay that reveals new choice points is explored
/// before the remaining alternatives of the run it came from); within a
/// run, from the highest key down; within a choice point, senders in
/// ascending order.
///
/// Memory is one frame per run on the current path.
#[derive(Debug, Default)]
pub struct Dfs {
    /// Open runs, innermost last; each frame's choices are popped from the end.
    frames: Vec<(NodeId, Vec<Choice>)>,
}

impl Dfs {
    /// An empty search.
    pub fn new() -> Self {
        Self::default()
    }
}

impl Policy for Dfs {
    fn open(&mut self, node: NodeId, mut choices: Vec<Choice>) {
        if choices.is_empty() {
            return;
        }
        // Popped from the end: highest key first, lowest sender first.
        choices.sort_by(|a, b| a.key.cmp(&b.key).then(b.sender.cmp(&a.sender)));
        self.frames.push((node, choices));
    }

    fn extend(&mut self, choice: Choice) {
        // The run that found the sender was forced from `choice.node`, whose
        // frame is on top (it stays, even empty, until the next pick).
        match self
            .frames
            .iter_mut()
            .rev()
            .find(|(n, _)| *n == choice.node)
        {
            Some((_, choices)) => choices.push(choice),
            None => self.frames.push((choice.node, vec![choice])),
        }
    }

    fn upcoming(&self, n: usize) -> Vec<Choice> {
        self.frames
            .iter()
            .rev()
            .flat_map(|(_, choices)| choices.iter().rev())
            .take(n)
            .copied()
            .collect()
    }

    fn next_choice(&mut self) -> Option<Choice> {
        loop {
            let (_, choices) = self.frames.last_mut()?;
            if let Some(choice) = choices.pop() {
                return Some(choice);
            }
            self.frames.pop();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn choice(node: u64, clock: u64, sender: i32) -> Choice {
        Choice {
            node: NodeId(node),
            key: Key {
                clock,
                rank: 0,
                event: clock as u32,
            },
            sender,
            position: 1,
        }
    }

    #[test]
    fn dfs_takes_highest_key_and_newest_run_first() {
        let mut dfs = Dfs::new();
        dfs.open(
            NodeId(0),
            vec![choice(0, 1, 2), choice(0, 1, 3), choice(0, 5, 2)],
        );
        assert_eq!(dfs.upcoming(2), vec![choice(0, 5, 2), choice(0, 1, 2)]);
        assert_eq!(dfs.next_choice(), Some(choice(0, 5, 2)));
        dfs.open(NodeId(1), vec![choice(1, 7, 1)]);
        assert_eq!(
            dfs.upcoming(9),
            vec![choice(1, 7, 1), choice(0, 1, 2), choice(0, 1, 3)]
        );
        assert_eq!(dfs.next_choice(), Some(choice(1, 7, 1)));
        assert_eq!(dfs.next_choice(), Some(choice(0, 1, 2)));
        dfs.extend(choice(0, 1, 4));
        assert_eq!(dfs.next_choice(), Some(choice(0, 1, 4)));
        assert_eq!(dfs.next_choice(), Some(choice(0, 1, 3)));
        assert_eq!(dfs.next_choice(), None);
    }
}
