//! Deterministic mapping by logical time (seed 002 §3.4): which sender a
//! wildcard receive takes in `mbhybrid run`, whatever the order messages
//! arrive in. A pure state machine, like [`crate::llcp`]; the MPI side
//! (announcements, requests and answers on a duplicate of each
//! communicator) is `engine/deterministic.rs`.
//!
//! Every rank has a logical clock that ticks at each send and at each
//! receive or probe it posts (§3.2, with the tick of "an MPI function is
//! called" restricted to the calls whose number does not depend on timing:
//! `MPI_Test` and `MPI_Iprobe` do not tick, since without the seed's DTPs
//! (§3.3) how often a program polls is not deterministic). Each message is
//! stamped with its sender's clock, so messages are totally ordered by
//! (stamp, sender rank).
//!
//! The sender *announces* each message (its stamp and tag) to the receiver
//! before sending it, on the communicator's announcement duplicate, and
//! answers the receiver's *requests* for its clock (§3.4's on-demand
//! strategy). Announcements and answers from one sender arrive in the order
//! they were sent (MPI's non-overtaking rule on one communicator), so a
//! [`Lane`] knows, per sender: the announced messages not yet received, in
//! send order, and a *bound*: every message the sender announces later is
//! stamped above it.
//!
//! A wildcard receive takes the earliest message that matches it: the one
//! with the smallest (stamp, sender) among the first matching announcement
//! of each lane, once no other sender can still announce an earlier one
//! (each lane without an earlier matching message has a bound at or past
//! the candidate's stamp, has finalized, or is *released*: blocked waiting
//! for this rank itself, with every message this rank sent it delivered,
//! so it can send nothing before this rank acts: §4.2.3's confirmed
//! dependence, for the one-step cycles that are the seed's Fig. 4).

use std::collections::VecDeque;

/// A message announced and not yet received.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Announced {
    /// The program's tag.
    pub tag: i32,
    /// The sender's logical clock at the send.
    pub stamp: u64,
}

/// What a sender last answered to a request for its clock.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Answer {
    /// It was blocked in MPI when it answered.
    pub blocked: bool,
    /// It was blocked in a receive or probe from this rank only.
    pub waits_for_me: bool,
    /// How many messages it had received from this rank (on any
    /// communicator).
    pub received_from_me: u64,
    /// How many messages it had sent this rank (on any communicator).
    pub sent_to_me: u64,
    /// It was blocked in a blocking collective on a communicator this rank
    /// is in: the communicator's id (agreed by its ranks) and the
    /// collective's number among the communicator's collectives.
    pub collective: Option<(u64, u64)>,
}

/// One sender, as one receiver on one communicator knows it.
#[derive(Debug, Clone, Default)]
pub struct Lane {
    /// Announced and not claimed by a posted receive, in send order: what
    /// MPI holds as unexpected messages.
    pending: VecDeque<Announced>,
    /// Receives posted for this sender (their tags; `None`: any) whose
    /// message was not announced yet, in posting order: the next
    /// announcement goes to the first that matches it, as MPI gives an
    /// arriving message to the first posted receive that matches it.
    claims: VecDeque<Option<i32>>,
    /// Every later announcement is stamped above this.
    bound: u64,
    /// The sender finalized: it sends nothing more.
    finished: bool,
    /// How many messages it had sent this rank when it finalized.
    final_sent: u64,
    /// The sender's last answer.
    answer: Option<Answer>,
}

impl Lane {
    /// The first pending message a receive with `tag` (`None`:
    /// `MPI_ANY_TAG`) would take: MPI matches a sender's messages in the
    /// order they were sent.
    pub fn first_matching(&self, tag: Option<i32>) -> Option<Announced> {
        self.pending
            .iter()
            .copied()
            .find(|a| tag.is_none_or(|t| t == a.tag))
    }

    /// Whether an announcement of this lane's sender is stamped above
    /// `stamp`, or ties it and loses to `winner` by rank (`this` is this
    /// lane's rank).
    fn cannot_precede(&self, stamp: u64, winner: usize, this: usize) -> bool {
        // Later announcements are stamped at least `bound + 1`.
        let next = self.bound.saturating_add(1);
        next > stamp || (next == stamp && this > winner)
    }
}

/// What a wildcard receive can do now.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Decision {
    /// Take the message of `source` (rank in the communicator), stamped
    /// `stamp`.
    Take {
        /// The sender.
        source: usize,
        /// Its message's stamp.
        stamp: u64,
    },
    /// The earliest candidate is known, but `blockers` could still announce
    /// one earlier than `stamp`: ask them for their clocks.
    Wait {
        /// The candidate's sender.
        source: usize,
        /// The candidate's stamp.
        stamp: u64,
        /// The senders that could still precede it.
        blockers: Vec<usize>,
    },
    /// Nothing that matches was announced yet.
    Nothing,
}

/// What a nonblocking probe finds at logical time `until` (seed 002 §3.3:
/// a message is declared arrived once the prober's clock reaches its
/// stamp, never by when it arrived).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Peek {
    /// The earliest matching message, of this sender, is stamped at or
    /// before `until`.
    Found(usize),
    /// No sender has, or can still announce, a matching message stamped at
    /// or before `until`.
    Nothing,
    /// These senders could still announce one: ask for their clocks.
    Wait(Vec<usize>),
}

/// The lanes of one communicator (indexed by rank in it).
#[derive(Debug, Clone)]
pub struct Lanes {
    lanes: Vec<Lane>,
}

impl Lanes {
    /// A communicator of `size` ranks.
    pub fn new(size: usize) -> Self {
        Lanes {
            lanes: vec![Lane::default(); size],
        }
    }

    /// The lane of `source`, when it is a rank of the communicator.
    pub fn lane(&self, source: usize) -> Option<&Lane> {
        self.lanes.get(source)
    }

    /// `source` announced a message.
    pub fn announce(&mut self, source: usize, tag: i32, stamp: u64) {
        if let Some(lane) = self.lanes.get_mut(source) {
            lane.bound = lane.bound.max(stamp);
            match lane.claims.iter().position(|c| c.is_none_or(|t| t == tag)) {
                Some(at) => {
                    lane.claims.remove(at);
                }
                None => lane.pending.push_back(Announced { tag, stamp }),
            }
        }
    }

    /// A receive from `source` with `tag` (`None`: any) was posted (or a
    /// matched probe took a message): it takes the first pending message
    /// that matches, or the next one announced.
    pub fn claim(&mut self, source: usize, tag: Option<i32>) {
        if let Some(lane) = self.lanes.get_mut(source) {
            match lane
                .pending
                .iter()
                .position(|a| tag.is_none_or(|t| t == a.tag))
            {
                Some(at) => {
                    lane.pending.remove(at);
                }
                None => lane.claims.push_back(tag),
            }
        }
    }

    /// `source` answered a request: its clock was `clock`.
    pub fn answer(&mut self, source: usize, clock: u64, answer: Answer) {
        if let Some(lane) = self.lanes.get_mut(source) {
            lane.bound = lane.bound.max(clock);
            lane.answer = Some(answer);
        }
    }

    /// This rank's own lane: it sends nothing stamped at or below `clock`
    /// from now on.
    pub fn own_clock(&mut self, me: usize, clock: u64) {
        if let Some(lane) = self.lanes.get_mut(me) {
            lane.bound = lane.bound.max(clock);
        }
    }

    /// `source` finalized, having sent this rank `sent` messages.
    pub fn finish(&mut self, source: usize, sent: u64) {
        if let Some(lane) = self.lanes.get_mut(source) {
            lane.finished = true;
            lane.final_sent = sent;
        }
    }

    /// Whether `source` can send this rank nothing it has not received
    /// (`received` of its messages so far) before this rank acts: it
    /// finalized, or is released ([`Lanes::released`]), and every message
    /// it sent this rank was received.
    pub fn quiet(
        &self,
        source: usize,
        sent: u64,
        received: u64,
        started: impl Fn(u64) -> Option<u64>,
    ) -> bool {
        let Some(lane) = self.lanes.get(source) else {
            return true;
        };
        if lane.finished {
            return lane.final_sent == received;
        }
        self.released(source, sent, started)
            && lane.answer.is_some_and(|a| a.sent_to_me == received)
    }

    /// Whether a message `tag` (`None`: any) matches is pending on any
    /// lane.
    pub fn any_pending(&self, tag: Option<i32>) -> bool {
        self.lanes
            .iter()
            .any(|lane| lane.first_matching(tag).is_some())
    }

    /// A receive posted without a source (one deterministic mode could not
    /// decide) took `source`'s first pending message tagged `tag`. `false`
    /// when it was not announced yet (the caller reads more announcements
    /// and tries again).
    pub fn consume(&mut self, source: usize, tag: i32) -> bool {
        let Some(lane) = self.lanes.get_mut(source) else {
            return true;
        };
        match lane.pending.iter().position(|a| a.tag == tag) {
            Some(at) => {
                lane.pending.remove(at);
                true
            }
            None => false,
        }
    }

    /// Whether `source`'s last answer says it can send nothing until this
    /// rank acts: it waits in a receive from this rank alone, which has
    /// sent it `sent` messages (on any communicator), all received; or it
    /// waits in collective number `n` of a communicator this rank has
    /// started fewer than `n + 1` collectives on (`started(id)`), blocking
    /// or not.
    pub fn released(&self, source: usize, sent: u64, started: impl Fn(u64) -> Option<u64>) -> bool {
        self.lanes.get(source).is_some_and(|lane| {
            lane.answer.is_some_and(|a| {
                a.blocked
                    && ((a.waits_for_me && a.received_from_me == sent)
                        || a.collective
                            .is_some_and(|(id, n)| started(id).is_some_and(|mine| mine <= n)))
            })
        })
    }

    /// `source`'s last answer, if it answered.
    pub fn answer_of(&self, source: usize) -> Option<Answer> {
        self.lanes.get(source).and_then(|lane| lane.answer)
    }

    /// Whether `source` finalized.
    pub fn finished(&self, source: usize) -> bool {
        self.lanes.get(source).is_some_and(|lane| lane.finished)
    }

    /// Whether every sender but `me` finalized.
    pub fn all_finished_but(&self, me: usize) -> bool {
        self.lanes
            .iter()
            .enumerate()
            .all(|(q, lane)| q == me || lane.finished)
    }

    /// Whether every one of `blockers` last answered that it was blocked.
    pub fn all_blocked(&self, blockers: &[usize]) -> bool {
        blockers.iter().all(|&q| {
            self.lanes
                .get(q)
                .is_some_and(|l| l.answer.is_some_and(|a| a.blocked))
        })
    }

    /// What a nonblocking probe of `only` (`None`: any source) with `tag`
    /// finds at logical time `until` (see [`Peek`]).
    pub fn peek(
        &self,
        tag: Option<i32>,
        only: Option<usize>,
        until: u64,
        released: impl Fn(usize) -> bool,
    ) -> Peek {
        let in_scope = |q: usize| only.is_none_or(|o| o == q);
        let best = self
            .lanes
            .iter()
            .enumerate()
            .filter(|&(q, _)| in_scope(q))
            .filter_map(|(q, lane)| lane.first_matching(tag).map(|a| (a.stamp, q)))
            .filter(|&(stamp, _)| stamp <= until)
            .min();
        let blockers: Vec<usize> = self
            .lanes
            .iter()
            .enumerate()
            .filter(|&(q, lane)| {
                in_scope(q)
                    && best.is_none_or(|(_, source)| q != source)
                    && !lane.finished
                    && lane.first_matching(tag).is_none()
                    && match best {
                        Some((stamp, source)) => !lane.cannot_precede(stamp, source, q),
                        None => lane.bound < until,
                    }
                    && !released(q)
            })
            .map(|(q, _)| q)
            .collect();
        match (best, blockers.is_empty()) {
            (_, false) => Peek::Wait(blockers),
            (Some((_, source)), true) => Peek::Found(source),
            (None, true) => Peek::Nothing,
        }
    }

    /// The decision for a wildcard receive with `tag` (`None`: any tag).
    /// `released(q)` says whether sender `q` is released (see
    /// [`Lanes::released`]).
    pub fn decide(&self, tag: Option<i32>, released: impl Fn(usize) -> bool) -> Decision {
        let best = self
            .lanes
            .iter()
            .enumerate()
            .filter_map(|(q, lane)| lane.first_matching(tag).map(|a| (a.stamp, q)))
            .min();
        let Some((stamp, source)) = best else {
            return Decision::Nothing;
        };
        let blockers: Vec<usize> = self
            .lanes
            .iter()
            .enumerate()
            .filter(|&(q, lane)| {
                q != source
                    && !lane.finished
                    && lane.first_matching(tag).is_none()
                    && !lane.cannot_precede(stamp, source, q)
                    && !released(q)
            })
            .map(|(q, _)| q)
            .collect();
        if blockers.is_empty() {
            Decision::Take { source, stamp }
        } else {
            Decision::Wait {
                source,
                stamp,
                blockers,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn none(_: usize) -> bool {
        false
    }

    #[test]
    fn the_earliest_stamp_wins_whatever_arrived_first() {
        let mut lanes = Lanes::new(3);
        lanes.announce(2, 0, 4);
        lanes.announce(1, 0, 9);
        lanes.own_clock(0, 20);
        assert_eq!(
            lanes.decide(None, none),
            Decision::Take {
                source: 2,
                stamp: 4
            }
        );
    }

    #[test]
    fn a_sender_whose_clock_is_behind_the_candidate_blocks_it() {
        let mut lanes = Lanes::new(3);
        lanes.own_clock(0, 20);
        lanes.announce(1, 0, 9);
        assert_eq!(
            lanes.decide(None, none),
            Decision::Wait {
                source: 1,
                stamp: 9,
                blockers: vec![2]
            }
        );
        // Rank 2's clock passes 9: it can only send later stamps.
        lanes.answer(2, 9, answer(false, false, 0));
        assert!(matches!(
            lanes.decide(None, none),
            Decision::Take { source: 1, .. }
        ));
    }

    #[test]
    fn equal_stamps_go_to_the_lower_rank() {
        let mut lanes = Lanes::new(3);
        lanes.own_clock(0, 20);
        lanes.announce(2, 0, 5);
        // Rank 1's next stamp is at least 5: it could tie and win.
        lanes.answer(1, 4, answer(false, false, 0));
        assert!(matches!(lanes.decide(None, none), Decision::Wait { .. }));
        lanes.announce(1, 0, 5);
        assert!(matches!(
            lanes.decide(None, none),
            Decision::Take { source: 1, .. }
        ));
    }

    #[test]
    fn tags_select_and_a_sender_is_matched_in_send_order() {
        let mut lanes = Lanes::new(2);
        lanes.own_clock(0, 50);
        lanes.announce(1, 7, 3);
        lanes.announce(1, 8, 4);
        assert_eq!(
            lanes.decide(Some(8), none),
            Decision::Take {
                source: 1,
                stamp: 4
            }
        );
        assert!(lanes.consume(1, 8));
        assert_eq!(lanes.decide(Some(8), none), Decision::Nothing);
        assert!(!lanes.consume(1, 8), "not announced: the caller reads on");
        assert_eq!(
            lanes.decide(None, none),
            Decision::Take {
                source: 1,
                stamp: 3
            }
        );
    }

    #[test]
    fn finished_and_released_senders_do_not_block() {
        let mut lanes = Lanes::new(4);
        lanes.own_clock(0, 50);
        lanes.announce(1, 0, 9);
        lanes.finish(2, 0);
        lanes.answer(3, 2, answer(true, true, 5));
        assert!(matches!(lanes.decide(None, none), Decision::Wait { .. }));
        // Rank 3 waits for this rank, which sent it 5 messages, all
        // received.
        let never = |_| None;
        assert!(matches!(
            lanes.decide(None, |q| lanes.released(q, 5, never)),
            Decision::Take { source: 1, .. }
        ));
        // One of them still in flight: rank 3 may be about to run.
        assert!(!lanes.released(3, 6, never));
        // Blocked in collective 4 of communicator 77: released while this
        // rank has not started that collective itself.
        let mut lanes = Lanes::new(3);
        lanes.announce(1, 0, 9);
        lanes.answer(
            2,
            0,
            Answer {
                collective: Some((77, 4)),
                ..answer(true, false, 0)
            },
        );
        assert!(lanes.released(2, 0, |id| (id == 77).then_some(4)));
        assert!(!lanes.released(2, 0, |id| (id == 77).then_some(5)));
        assert!(
            !lanes.released(2, 0, never),
            "not a communicator of this rank"
        );
    }

    #[test]
    fn a_probe_finds_a_message_once_its_clock_reaches_the_stamp() {
        let mut lanes = Lanes::new(3);
        lanes.own_clock(0, 7);
        lanes.announce(1, 0, 5);
        lanes.answer(2, 9, answer(false, false, 0));
        assert_eq!(lanes.peek(None, None, 4, none), Peek::Nothing);
        assert_eq!(lanes.peek(None, None, 5, none), Peek::Found(1));
        // Rank 2 may still announce something stamped 10 or 11.
        assert_eq!(lanes.peek(None, Some(2), 11, none), Peek::Wait(vec![2]));
        assert_eq!(lanes.peek(None, Some(2), 9, none), Peek::Nothing);
        // Any source at 11: rank 1's message is earlier than anything
        // rank 2 can still announce.
        assert_eq!(lanes.peek(None, None, 11, none), Peek::Found(1));
        // Tag 3: rank 1's later messages may still be.
        lanes.own_clock(0, 11);
        assert_eq!(lanes.peek(Some(3), None, 11, none), Peek::Wait(vec![1, 2]));
    }

    #[test]
    fn posted_receives_claim_messages_in_posting_order() {
        let mut lanes = Lanes::new(2);
        lanes.own_clock(0, 50);
        // Two receives from rank 1 posted before anything was announced:
        // tag 7, then any tag.
        lanes.claim(1, Some(7));
        lanes.claim(1, None);
        lanes.announce(1, 5, 1);
        lanes.announce(1, 7, 2);
        lanes.announce(1, 9, 3);
        // Tag 5 went to the any-tag receive, tag 7 to the first: only
        // tag 9 is left for a wildcard.
        assert_eq!(
            lanes.decide(None, none),
            Decision::Take {
                source: 1,
                stamp: 3
            }
        );
        lanes.claim(1, Some(9));
        assert_eq!(lanes.decide(None, none), Decision::Nothing);
    }

    fn answer(blocked: bool, waits_for_me: bool, received_from_me: u64) -> Answer {
        Answer {
            blocked,
            waits_for_me,
            received_from_me,
            sent_to_me: 0,
            collective: None,
        }
    }
}
