//! Which forced matches of a guided run did not happen: the one rule the
//! search (`mbh-bounding`, through `mbh-session`) and `mbhybrid replay`
//! share.
//!
//! Whether an event *was* forced is not worked out here: the runtime
//! records it where it forces ([`crate::op::flags::FORCED`], read as
//! [`WildcardEvent::forced`]). What is decided here is the other half of
//! the question: which forcings of the guidance no record shows happened,
//! and which of those are no failure at all because their rank never got
//! that far ([`Reach`]).
//!
//! ```
//! use mbh_trace::config::{ForcedMatch, Guidance};
//! use mbh_trace::forced::{unmatched_forces, Reach};
//!
//! // Rank 1's wildcard event 0 was forced to rank 2; the run recorded no
//! // such event, and it deadlocked (every rank was stopped where it was).
//! let guidance = Guidance {
//!     last_guided_clock: 0,
//!     forced: vec![ForcedMatch { rank: 1, event: 0, source: 2 }],
//! };
//! let unmatched = unmatched_forces(&guidance, &[], &Reach::Whole);
//! assert_eq!(unmatched.len(), 1);
//! assert_eq!(unmatched[0].observed, None);
//! ```

use crate::config::{ForcedMatch, Guidance};
use crate::rank_trace::{RankState, RankTrace, WildcardEvent};
use std::collections::{BTreeSet, HashMap};

/// A forced match that did not happen in the run that forced it.
///
/// The search forced `forced.source` because a run showed it could match
/// the event, and the event matched something else or never completed: a
/// soundness failure of the clocks, a replay that diverged, or a sender
/// the MPI library held back; the caller says which. Never a deadlock of
/// the program.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct UnmatchedForce {
    /// What was forced.
    pub forced: ForcedMatch,
    /// The sender (or index) the event matched instead; `None` when the
    /// event never completed.
    pub observed: Option<i32>,
}

/// How far a run's ranks got: what tells a forced event that did not
/// happen from one its rank never reached.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum Reach {
    /// Every rank ran to its end, or until the run was stopped with the
    /// rank stuck where it was (complete, deadlocked, timed out): an event
    /// missing from a rank's records did not happen.
    #[default]
    Whole,
    /// A rank died (a signal, `MPI_Abort`, an exit without
    /// `MPI_Finalize`, a stop of the runtime) and the launcher killed the
    /// rest: only the `finished` ranks (which returned from
    /// `MPI_Finalize`) ran to their end.
    Crashed {
        /// The ranks that finalized.
        finished: BTreeSet<i32>,
    },
}

impl Reach {
    /// The reach of a run that crashed, from the traces its ranks left (a
    /// rank without a trace did not finish).
    pub fn crashed<'a>(traces: impl IntoIterator<Item = &'a RankTrace>) -> Reach {
        Reach::Crashed {
            finished: traces
                .into_iter()
                .filter(|t| t.end.state == RankState::Finalized)
                .map(|t| t.rank)
                .collect(),
        }
    }

    /// Whether `rank`'s records may stop before events it would have made.
    ///
    /// A rank that died stopped at its crash point, and one the launcher
    /// killed stopped wherever the kill found it: neither got to make its
    /// later events, so a forcing of those says nothing about the clocks
    /// or the replay. A rank that finalized made every event it was going
    /// to, crash or not elsewhere, and a rank stuck in a deadlock was
    /// stopped only once nothing could move: a forced event missing from
    /// either did not happen.
    pub fn cut_short(&self, rank: i32) -> bool {
        match self {
            Reach::Whole => false,
            Reach::Crashed { finished } => !finished.contains(&rank),
        }
    }
}

/// The forced matches of `guidance` that the run's `events` (all ranks,
/// as [`RankTrace::wildcard_events`] gives them) do not show happened:
/// events that matched another sender (or index), and events missing from
/// the records of a rank that was not cut short (see [`Reach::cut_short`]).
/// An event whose match the runtime did not know (`matched` negative) is
/// not held against the forcing.
pub fn unmatched_forces(
    guidance: &Guidance,
    events: &[WildcardEvent],
    reach: &Reach,
) -> Vec<UnmatchedForce> {
    let index: HashMap<(i32, u32), &WildcardEvent> =
        events.iter().map(|e| ((e.rank, e.event), e)).collect();
    let mut unmatched = Vec::new();
    for &forced in &guidance.forced {
        match index.get(&(forced.rank, forced.event)) {
            Some(e) if e.matched >= 0 && e.matched != forced.source => {
                unmatched.push(UnmatchedForce {
                    forced,
                    observed: Some(e.matched),
                })
            }
            Some(_) => {}
            None if !reach.cut_short(forced.rank) => unmatched.push(UnmatchedForce {
                forced,
                observed: None,
            }),
            None => {}
        }
    }
    unmatched
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::op::OpKind;

    fn forcing(rank: i32, event: u32, source: i32) -> ForcedMatch {
        ForcedMatch {
            rank,
            event,
            source,
        }
    }

    fn event(rank: i32, number: u32, matched: i32) -> WildcardEvent {
        WildcardEvent {
            rank,
            event: number,
            op_index: 0,
            kind: OpKind::Recv,
            site: 0,
            start_clock: 0,
            final_clock: 1,
            matched,
            matched_tag: 0,
            potential: vec![],
            loops: vec![],
            zone: None,
            pattern: None,
            enablers: vec![],
            forced: true,
            settled_in_loop: false,
        }
    }

    /// In a crashed run, rank 0 died before its forced event 1 and rank 1
    /// finalized without its forced event 0: only rank 1's is reported.
    /// Rank 2's event matched another sender, which is reported whatever
    /// the run's end; rank 3's matched as forced.
    #[test]
    fn a_crashed_rank_is_excused_and_a_finished_one_is_not() {
        let guidance = Guidance {
            last_guided_clock: 0,
            forced: vec![
                forcing(0, 1, 2),
                forcing(1, 0, 2),
                forcing(2, 0, 1),
                forcing(3, 0, 1),
            ],
        };
        let events = [event(0, 0, 1), event(2, 0, 3), event(3, 0, 1)];
        let finished = RankTrace::finalized(1, 4, vec![]);
        let mut died = RankTrace::finalized(0, 4, vec![]);
        died.end.state = RankState::Signaled;
        let reach = Reach::crashed([&died, &finished]);
        assert!(reach.cut_short(0) && !reach.cut_short(1));
        assert!(reach.cut_short(3), "a rank without a trace did not finish");
        assert_eq!(
            unmatched_forces(&guidance, &events, &reach),
            vec![
                UnmatchedForce {
                    forced: forcing(1, 0, 2),
                    observed: None
                },
                UnmatchedForce {
                    forced: forcing(2, 0, 1),
                    observed: Some(3)
                },
            ]
        );
        // Without the crash, rank 0's missing event did not happen either.
        let whole = unmatched_forces(&guidance, &events, &Reach::Whole);
        assert_eq!(whole.len(), 3);
        assert_eq!(whole[0].forced, forcing(0, 1, 2));
    }

    /// A match the runtime did not know is not a failed forcing.
    #[test]
    fn an_unknown_match_is_not_held_against_the_forcing() {
        let guidance = Guidance {
            last_guided_clock: 0,
            forced: vec![forcing(0, 0, 1)],
        };
        let events = [event(0, 0, -1)];
        assert!(unmatched_forces(&guidance, &events, &Reach::Whole).is_empty());
    }
}
