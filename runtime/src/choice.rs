//! Choices among requests (seed 001 §4): which request `MPI_Waitany`,
//! `MPI_Testany`, `MPI_Waitsome` or `MPI_Testsome` returns is
//! nondeterminism like the sender a wildcard receive takes, and the search
//! explores it the same way.
//!
//! # The events
//!
//! A call given more than one active request is a *choice event*, numbered
//! with the wildcard receives ([`crate::llcp::Llcp::next_event`]; a `Test`
//! form only when it completes a request). Its value is the index it
//! returned (for the `some` forms, the first index of the list). When it
//! returns, the clock advances ([`crate::llcp::Llcp::choose`]): its final
//! clock `end` is the clock before that step, so everything causally after
//! the call carries a clock (own component) above `end`.
//!
//! # The potential indices
//!
//! Another active request `j` of the array could have been returned
//! instead when its completion needs nothing the rank does after the call:
//!
//! * a request the same `some` call also returned, a receive already
//!   complete when the call returned (it cannot be hidden by what the rank
//!   does next, a failed assertion say), or one that needs no message (a
//!   receive from or send to `MPI_PROC_NULL`): at once;
//! * a receive that completes later, when the message it matched carries a
//!   clock (own component) `<= end`: its send is not causally after the
//!   call (Lamport: a send after it would carry more; vector clocks: exact),
//!   so in a replay that waits for `j` alone, the message still comes.
//!
//! The final clock is taken after the returned requests' messages were
//! merged: a later `end`, so more offers, and still sound (a send after
//! the call carries at least `end + 1`).
//!
//! Sends are never offered: when a send completes depends on the receiver,
//! whose match the clocks do not date (an offer that cannot happen would
//! hang the replay). This module keeps the requests still to complete
//! ([`Choices::watch`]) and judges them when they do ([`Choices::settle`]);
//! it makes no MPI call.

/// Requests watched at most; the oldest is forgotten beyond (a program
/// that never completes the rest of its arrays loses offers, not memory).
const MAX_WATCHED: usize = 4096;

/// A request of a choice's array, still outstanding after the choice.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Watched {
    /// The choice's event number.
    event: u32,
    /// Its final clock (own component).
    end: u64,
    /// Index of the record of the call that made the request (unique per
    /// rank, unlike request handles and slots, which are reused).
    record: u64,
    /// The request's index in the choice's array.
    index: i32,
}

/// The outstanding requests of past choices.
#[derive(Debug, Default)]
pub struct Choices {
    watched: Vec<Watched>,
}

impl Choices {
    /// No request watched; room for a few made up front.
    pub fn new() -> Self {
        Choices {
            watched: Vec::with_capacity(64),
        }
    }

    /// Whether no request is watched (the completion path's fast exit).
    #[inline(always)]
    pub fn is_empty(&self) -> bool {
        self.watched.is_empty()
    }

    /// Choice `event`, with final clock `end`, left the receive made by
    /// record `record` at `index` of its array outstanding.
    pub fn watch(&mut self, event: u32, end: u64, record: u64, index: i32) {
        if self.watched.len() >= MAX_WATCHED {
            self.watched.remove(0);
        }
        self.watched.push(Watched {
            event,
            end,
            record,
            index,
        });
    }

    /// The request made by record `record` completed, a receive whose
    /// message carried clock `clock` (own component; `None` for anything
    /// else, or a cancelled receive): `found(event, index)` for each choice
    /// that could have returned it instead; it is watched no more.
    pub fn settle(&mut self, record: u64, clock: Option<u64>, mut found: impl FnMut(u32, i32)) {
        self.watched.retain(|w| {
            if w.record != record {
                return true;
            }
            // seed 001 §4: an index is offered only when MPI could have
            // returned it, i.e. its message is not causally after the call.
            if clock.is_some_and(|c| c <= w.end) {
                found(w.event, w.index);
            }
            false
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn settle(c: &mut Choices, record: u64, clock: Option<u64>) -> Vec<(u32, i32)> {
        let mut out = Vec::new();
        c.settle(record, clock, |e, i| out.push((e, i)));
        out
    }

    /// The issue 11 programs: `Waitany` over receives from ranks 1 and 2
    /// returned index 0 at final clock 0; rank 2's message (clock 0) is a
    /// potential index, one sent after rank 0 replied (clock 1) is not.
    #[test]
    fn later_receives_are_offered_only_when_not_causally_after() {
        let mut c = Choices::new();
        c.watch(0, 0, 7, 1);
        assert_eq!(settle(&mut c, 7, Some(0)), vec![(0, 1)]);
        assert!(c.is_empty());
        c.watch(1, 0, 9, 1);
        assert_eq!(settle(&mut c, 9, Some(1)), vec![]);
        assert!(c.is_empty(), "judged once, then forgotten");
    }

    /// A request in several arrays (a loop of `Waitany` calls) is judged
    /// for each choice it was left outstanding by; other records are kept.
    #[test]
    fn one_completion_settles_every_choice_that_watched_it() {
        let mut c = Choices::new();
        c.watch(0, 0, 5, 2);
        c.watch(1, 3, 5, 1);
        c.watch(1, 3, 6, 0);
        assert_eq!(settle(&mut c, 5, Some(2)), vec![(1, 1)]);
        assert_eq!(settle(&mut c, 6, None), vec![], "a send is not offered");
        assert!(c.is_empty());
    }

    #[test]
    fn watching_is_bounded() {
        let mut c = Choices::new();
        for r in 0..(MAX_WATCHED as u64 + 10) {
            c.watch(0, 0, r, 1);
        }
        assert_eq!(c.watched.len(), MAX_WATCHED);
        assert_eq!(settle(&mut c, 0, Some(0)), vec![], "the oldest went");
        assert_eq!(settle(&mut c, 10, Some(0)), vec![(0, 1)]);
    }
}
