//! The kind-specific words of a record, decoded: what a record of one kind
//! keeps in the positional fields of [`RawOp`](crate::rank_trace::RawOp)
//! whose meaning depends on the kind (`aux` above all, and `peer`,
//! `request`, `count`, `comm` of the runtime's own records). Readers
//! outside this crate decode those fields only through the accessors
//! below, so their rustdoc (and that of the types they return) is the
//! format's specification of each field; [`crate::envelope`] does the same
//! for what a message and a receive carry, and [`crate::check`] for the
//! records of local checks.
//!
//! Each accessor returns `None` for a record of another kind, so a reader
//! never takes one kind's word for another's.
//!
//! ```
//! use mbh_trace::rank_trace::Op;
//! use mbh_trace::record::SendRef;
//! use mbh_trace::OpKind;
//!
//! // Rank 0's `MPI_Wait` (record 3) completed its `MPI_Irecv` (record 1)
//! // with the message of rank 2's record 5.
//! let mut wait = Op::new(3, OpKind::Wait);
//! wait.aux = 1 + 1;
//! let mut matched = Op::new(4, OpKind::Matched);
//! (matched.request, matched.peer, matched.aux, matched.count) = (3, 2, 5, -1);
//!
//! assert_eq!(wait.request_origin(), Some(1));
//! let message = matched.matched_send().unwrap();
//! assert_eq!(message.receiver, 3);
//! assert_eq!(message.send, SendRef { sender: 2, record: 5 });
//! assert_eq!(message.event, None);
//! // Another kind's words are not these.
//! assert_eq!(matched.request_origin(), None);
//! assert_eq!(wait.matched_send(), None);
//! ```
//!
//! # Limitations
//!
//! The accessors decode; they do not check. A record index they return
//! may name no record of the trace (a damaged or hand-made trace, a
//! sender that did not record its send): looking it up is the caller's
//! business, as is whether a `FAILED` or `CANCELLED` record still counts.

use crate::op::{OpClass, OpKind};
use crate::rank_trace::Op;

/// A send, by where its record is: the sending rank and the index of the
/// send's record in that rank's trace.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct SendRef {
    /// The sender's rank in `MPI_COMM_WORLD`.
    pub sender: i32,
    /// The index of the send's record in the sender's trace (`u64::MAX`
    /// when the sender did not record it).
    pub record: u64,
}

/// An [`OpKind::Matched`] record, decoded ([`Op::matched_send`]): which
/// remote send a receive took, from the header the message carried.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct MatchedSend {
    /// The index of the record that received the message (`request`): the
    /// receive itself (`MPI_Recv`, `MPI_Sendrecv`, `MPI_Mrecv`, a probe),
    /// or the `Wait`/`Test` that completed an `MPI_Irecv` (for a call on
    /// several requests, [`crate::RankTrace::completed_request_of`] says
    /// which).
    pub receiver: u64,
    /// The send it took: `peer` = the sender's rank in `MPI_COMM_WORLD`,
    /// `aux` = the index of the send's record in the sender's trace.
    pub send: SendRef,
    /// The wildcard event the receive was (`count`; the record holds -1
    /// when it was none).
    pub event: Option<u32>,
    /// The clock the message carried (`comm`).
    pub clock: u64,
}

/// An [`OpKind::CommId`] record, decoded ([`Op::comm_naming`]): the name
/// every member's trace gives a communicator, so analyses can compare
/// communicators across ranks, and this rank's rank in it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct CommNaming {
    /// The communicator's handle bits in this process (`comm`), which
    /// other processes may number differently.
    pub handle: u64,
    /// The name every member's trace gives the communicator (`aux`; its
    /// top bit is set, which no handle has).
    pub id: u64,
    /// This rank's rank in the communicator (`peer`; the record holds -1
    /// when the runtime did not know it).
    pub rank: Option<i32>,
}

/// An [`OpKind::CollectiveComplete`] record, decoded
/// ([`Op::collective_completion`]): a nonblocking collective's request
/// completed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct CollectiveCompletion {
    /// The index of the nonblocking collective's record (`MPI_Ibarrier`,
    /// ...; `request`).
    pub collective: u64,
    /// The index of the record of the call that completed it (the
    /// `Wait`/`Test`; `aux`); `None` when the runtime completed it itself
    /// (the record holds `u64::MAX`).
    pub completed_by: Option<u64>,
}

/// An [`OpKind::Completed`] record, decoded ([`Op::completed_request`]): one
/// point-to-point request a call on several requests completed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct CompletedRequest {
    /// The index of the record of the call on several requests that
    /// completed it (`request`).
    pub call: u64,
    /// The index of the record that made the request (the `Isend`,
    /// `Irecv`, or the `Start` of a persistent request; `aux`; not 1 + it,
    /// unlike a completion's [`Op::request_origin`]).
    pub origin: u64,
}

/// An [`OpKind::WildcardClock`] or [`OpKind::ChoiceClock`] record, decoded
/// ([`Op::event_clock`]): a wildcard event that reached its final clock.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct EventClock {
    /// The per-rank wildcard event number (`count`), one numbering for
    /// receives, probes and choices among requests.
    pub event: u32,
    /// The index of the record of the receive or probe (for a choice: of
    /// the `Waitany`, ... call; `request`).
    pub call: u64,
    /// The clock when the call was issued (`comm`; for vector clocks the
    /// rank's own component).
    pub issued_clock: u64,
    /// The final clock (`aux`; seed 000 rule R4; for vector clocks the sum
    /// of the components: a place in a Lamport order, which the own
    /// component is not across ranks).
    pub final_clock: u64,
    /// The sender the receive or probe matched, -1 when unknown; for a
    /// choice, the index returned (for the `some` forms the first index of
    /// the list returned) (`peer`).
    pub matched: i32,
    /// The tag it matched; for a choice, how many requests of the array
    /// were active (-1 in traces from before it was recorded) (`tag`).
    pub matched_tag: i32,
    /// The run's guidance forced this event (flag
    /// [`FORCED`](crate::op::flags::FORCED)): the runtime posted it for
    /// the guidance's sender, or waited for the guidance's index alone.
    /// `matched` says whether it got it.
    pub forced: bool,
}

/// An [`OpKind::PotentialMatch`] or [`OpKind::PotentialIndex`] record,
/// decoded ([`Op::potential`]): what a wildcard event could have matched
/// instead.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Potential {
    /// The wildcard event's number (`count`).
    pub event: u32,
    /// The potential sender's rank; for a choice among requests, the index
    /// it could have returned (`peer`).
    pub alternative: i32,
    /// The clock the alternative's message carried (`aux`).
    pub clock: u64,
    /// The index of the record that took that message, as a `Matched`
    /// record names it ([`MatchedSend::receiver`]); for a choice, of the
    /// call that completed the request (`request`).
    pub receiver: u64,
}

/// An [`OpKind::WaitRequest`] record, decoded ([`Op::wait_request`]): one
/// request a blocked `MPI_Waitall`, `MPI_Waitany` or `MPI_Waitsome` waits
/// for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct WaitRequest {
    /// The index of the waiting call's record (`request`).
    pub call: u64,
    /// The index of the record of the call that made the request
    /// (`MPI_Isend`, `MPI_Irecv`, the `MPI_Start` of a persistent request,
    /// a nonblocking collective; `aux` holds 1 + it): `None` (0) for a
    /// request the runtime does not know.
    pub origin: Option<u64>,
}

/// An [`OpKind::ChoiceCandidate`] record, decoded
/// ([`Op::choice_candidate`]): a receive of a choice's array still
/// incomplete when the choice returned.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ChoiceCandidate {
    /// The choice's wildcard event number (`count`).
    pub event: u32,
    /// The index of the choice's record (`aux`).
    pub choice: u64,
    /// The receive's index in the array (`peer`).
    pub index: i32,
    /// The index of the record of the call that made the receive
    /// (`MPI_Irecv`, ...; `request`).
    pub receive: u64,
}

impl Op {
    /// The request a completion (class [`OpClass::Completion`]: `MPI_Wait`,
    /// `MPI_Test`, `MPI_Waitall`, ...) completed: the index of the record
    /// that made it (`MPI_Isend`, `MPI_Irecv`, the `MPI_Start` of a
    /// persistent request, a nonblocking collective), for a call on
    /// several requests its first request's. `None` when the runtime did
    /// not know it, and for other kinds.
    ///
    /// Stored in `aux` as 1 + that index, 0 when unknown. The other
    /// requests of a call on several are named by [`OpKind::Completed`]
    /// records ([`Op::completed_request`]) and, for nonblocking
    /// collectives, [`OpKind::CollectiveComplete`]
    /// ([`Op::collective_completion`]) and [`OpKind::WaitRequest`] records.
    pub fn request_origin(&self) -> Option<u64> {
        (self.kind.class() == OpClass::Completion)
            .then(|| self.aux.checked_sub(1))
            .flatten()
    }

    /// Which remote send an [`OpKind::Matched`] record says a receive took
    /// ([`MatchedSend`] says which word holds what). `None` for other
    /// kinds.
    pub fn matched_send(&self) -> Option<MatchedSend> {
        (self.kind == OpKind::Matched).then(|| self.took_words())
    }

    /// Which remote send an [`OpKind::Settled`] record says a receive took
    /// before its call returned (the words as in [`Op::matched_send`],
    /// but `receiver` is the index of the receive's own record, the
    /// `MPI_Irecv` or `MPI_Start`). `None` for other kinds.
    pub fn settled_send(&self) -> Option<MatchedSend> {
        (self.kind == OpKind::Settled).then(|| self.took_words())
    }

    /// The words of a `Matched` or `Settled` record.
    fn took_words(&self) -> MatchedSend {
        MatchedSend {
            receiver: self.request,
            send: SendRef {
                sender: self.peer,
                record: self.aux,
            },
            event: (self.count >= 0).then_some(self.count as u32),
            clock: self.comm,
        }
    }

    /// The communicator an [`OpKind::CommId`] record names, and this rank's
    /// rank in it ([`CommNaming`] says which word holds what). `None` for
    /// other kinds.
    pub fn comm_naming(&self) -> Option<CommNaming> {
        (self.kind == OpKind::CommId).then_some(CommNaming {
            handle: self.comm,
            id: self.aux,
            rank: (self.peer >= 0).then_some(self.peer),
        })
    }

    /// Which call completed a nonblocking collective, from an
    /// [`OpKind::CollectiveComplete`] record ([`CollectiveCompletion`] says
    /// which word holds what). `None` for other kinds.
    pub fn collective_completion(&self) -> Option<CollectiveCompletion> {
        (self.kind == OpKind::CollectiveComplete).then_some(CollectiveCompletion {
            collective: self.request,
            completed_by: (self.aux != u64::MAX).then_some(self.aux),
        })
    }

    /// One point-to-point request that a call on several requests
    /// completed, from an [`OpKind::Completed`] record ([`CompletedRequest`]
    /// says which word holds what). `None` for other kinds.
    pub fn completed_request(&self) -> Option<CompletedRequest> {
        (self.kind == OpKind::Completed).then_some(CompletedRequest {
            call: self.request,
            origin: self.aux,
        })
    }

    /// A wildcard event's clocks and outcome, from an
    /// [`OpKind::WildcardClock`] or [`OpKind::ChoiceClock`] record
    /// ([`EventClock`] says which word holds what). `None` for other kinds.
    pub fn event_clock(&self) -> Option<EventClock> {
        matches!(self.kind, OpKind::WildcardClock | OpKind::ChoiceClock).then_some(EventClock {
            event: self.count as u32,
            call: self.request,
            issued_clock: self.comm,
            final_clock: self.aux,
            matched: self.peer,
            matched_tag: self.tag,
            forced: self.has(crate::op::flags::FORCED),
        })
    }

    /// What a wildcard event could have matched instead, from an
    /// [`OpKind::PotentialMatch`] or [`OpKind::PotentialIndex`] record
    /// ([`Potential`] says which word holds what). `None` for other kinds.
    pub fn potential(&self) -> Option<Potential> {
        matches!(self.kind, OpKind::PotentialMatch | OpKind::PotentialIndex).then_some(Potential {
            event: self.count as u32,
            alternative: self.peer,
            clock: self.aux,
            receiver: self.request,
        })
    }
    /// A request a blocked call on several requests waits for, from an [`OpKind::WaitRequest`] record ([`WaitRequest`] says which
    /// word holds what). `None` for other kinds.
    pub fn wait_request(&self) -> Option<WaitRequest> {
        (self.kind == OpKind::WaitRequest).then_some(WaitRequest {
            call: self.request,
            origin: self.aux.checked_sub(1),
        })
    }

    /// A receive a choice could have returned instead, from an
    /// [`OpKind::ChoiceCandidate`] record ([`ChoiceCandidate`] says which
    /// word holds what). `None` for other kinds.
    pub fn choice_candidate(&self) -> Option<ChoiceCandidate> {
        (self.kind == OpKind::ChoiceCandidate).then_some(ChoiceCandidate {
            event: self.count as u32,
            choice: self.aux,
            index: self.peer,
            receive: self.request,
        })
    }

    /// A collective's 0-based sequence number among the collectives on its
    /// communicator (blocking or not; `tag` holds 1 + it). `None` when the
    /// runtime did not know it (`tag` 0, as on intercommunicators), and
    /// for records that are not collectives.
    pub fn collective_sequence(&self) -> Option<u64> {
        (self.kind.class() == OpClass::Collective)
            .then(|| u64::try_from(self.tag).ok()?.checked_sub(1))
            .flatten()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A record of `kind` with its positional words set.
    fn record(kind: OpKind, peer: i32, count: i32, comm: u64, request: u64, aux: u64) -> Op {
        Op {
            peer,
            count,
            comm,
            request,
            aux,
            tag: 7,
            ..Op::new(9, kind)
        }
    }

    #[test]
    fn a_completion_names_its_request_by_one_plus_its_index() {
        for &kind in OpKind::ALL {
            let op = record(kind, 0, 1, 0, 0, 4);
            let expected = (kind.class() == OpClass::Completion).then_some(3);
            assert_eq!(op.request_origin(), expected, "{kind:?}");
        }
        assert_eq!(record(OpKind::Wait, 0, 1, 0, 0, 0).request_origin(), None);
        assert_eq!(
            record(OpKind::Waitall, 0, 2, 0, 0, 1).request_origin(),
            Some(0)
        );
    }

    #[test]
    fn a_completed_record_names_its_request_by_its_index_itself() {
        let completed = record(OpKind::Completed, 0, 0, 0, 6, 4);
        assert_eq!(
            completed.completed_request(),
            Some(CompletedRequest { call: 6, origin: 4 }),
            "not 1 + it, as a completion's"
        );
        assert_eq!(completed.request_origin(), None);
        for &kind in OpKind::ALL.iter().filter(|&&k| k != OpKind::Completed) {
            assert_eq!(
                record(kind, 0, 0, 0, 6, 4).completed_request(),
                None,
                "{kind:?}"
            );
        }
    }

    #[test]
    fn a_matched_record_names_the_receiver_the_send_and_the_event() {
        let m = record(OpKind::Matched, 2, 5, 11, 3, 8);
        assert_eq!(
            m.matched_send(),
            Some(MatchedSend {
                receiver: 3,
                send: SendRef {
                    sender: 2,
                    record: 8
                },
                event: Some(5),
                clock: 11
            })
        );
        let not_wildcard = record(OpKind::Matched, 2, -1, 11, 3, u64::MAX);
        let decoded = not_wildcard.matched_send().unwrap();
        assert_eq!(decoded.event, None);
        assert_eq!(decoded.send.record, u64::MAX, "a send not recorded");
        for &kind in OpKind::ALL.iter().filter(|&&k| k != OpKind::Matched) {
            assert_eq!(
                record(kind, 2, 5, 11, 3, 8).matched_send(),
                None,
                "{kind:?}"
            );
        }
    }

    #[test]
    fn a_comm_id_record_names_a_handle_and_this_ranks_rank() {
        let id = 1 << 63 | 7;
        let named = record(OpKind::CommId, 1, 0, 0xc400_0000, 0, id);
        assert_eq!(
            named.comm_naming(),
            Some(CommNaming {
                handle: 0xc400_0000,
                id,
                rank: Some(1)
            })
        );
        let unknown_rank = record(OpKind::CommId, -1, 0, 0xc400_0000, 0, id);
        assert_eq!(unknown_rank.comm_naming().unwrap().rank, None);
        assert_eq!(
            record(OpKind::CommMade, 1, 0, 0xc400_0000, 0, id).comm_naming(),
            None
        );
    }

    #[test]
    fn a_collective_completion_names_the_completing_call_unless_the_runtime_did() {
        let by_wait = record(OpKind::CollectiveComplete, 0, 0, 0, 2, 5);
        assert_eq!(
            by_wait.collective_completion(),
            Some(CollectiveCompletion {
                collective: 2,
                completed_by: Some(5)
            })
        );
        let by_runtime = record(OpKind::CollectiveComplete, 0, 0, 0, 2, u64::MAX);
        assert_eq!(
            by_runtime.collective_completion().unwrap().completed_by,
            None
        );
        assert_eq!(
            record(OpKind::Completed, 0, 0, 0, 2, 5).collective_completion(),
            None
        );
        assert_eq!(
            record(OpKind::Wait, 0, 0, 0, 2, 5).completed_request(),
            None
        );
    }

    #[test]
    fn clocks_and_potentials_read_their_words() {
        for kind in [OpKind::WildcardClock, OpKind::ChoiceClock] {
            let op = record(kind, 2, 4, 10, 3, 12);
            assert_eq!(
                op.event_clock(),
                Some(EventClock {
                    event: 4,
                    call: 3,
                    issued_clock: 10,
                    final_clock: 12,
                    matched: 2,
                    matched_tag: 7,
                    forced: false,
                }),
                "{kind:?}"
            );
            let forced = Op {
                flags: crate::op::flags::FORCED | crate::op::flags::RETURNED,
                ..op
            };
            assert!(forced.event_clock().unwrap().forced, "{kind:?}");
            assert_eq!(op.potential(), None);
        }
        for kind in [OpKind::PotentialMatch, OpKind::PotentialIndex] {
            let op = record(kind, 1, 4, 0, 6, 9);
            assert_eq!(
                op.potential(),
                Some(Potential {
                    event: 4,
                    alternative: 1,
                    clock: 9,
                    receiver: 6
                }),
                "{kind:?}"
            );
            assert_eq!(op.event_clock(), None);
        }
        assert_eq!(record(OpKind::Matched, 1, 4, 0, 6, 9).event_clock(), None);
        assert_eq!(record(OpKind::Matched, 1, 4, 0, 6, 9).potential(), None);
    }

    #[test]
    fn a_settled_record_names_the_receive_and_the_send_it_took() {
        let settled = record(OpKind::Settled, 2, -1, 0, 3, 8);
        let took = settled.settled_send().expect("decoded");
        assert_eq!(
            (took.receiver, took.send.sender, took.send.record),
            (3, 2, 8)
        );
        assert_eq!(took.event, None);
        // Only the wait-for graph reads it: not a `Matched` record.
        assert_eq!(settled.matched_send(), None);
        assert_eq!(record(OpKind::Matched, 2, 5, 11, 3, 8).settled_send(), None);
    }

    #[test]
    fn a_wait_request_names_its_call_and_the_call_that_made_its_request() {
        let listed = record(OpKind::WaitRequest, 0, 0, 0, 7, 1 + 4);
        assert_eq!(
            listed.wait_request(),
            Some(WaitRequest {
                call: 7,
                origin: Some(4)
            })
        );
        let unknown = record(OpKind::WaitRequest, 0, 0, 0, 7, 0);
        assert_eq!(unknown.wait_request().unwrap().origin, None);
        assert_eq!(record(OpKind::Waitall, 0, 0, 0, 7, 5).wait_request(), None);
    }

    #[test]
    fn a_choice_candidate_names_its_choice_and_receive() {
        let candidate = record(OpKind::ChoiceCandidate, 2, 9, 0, 3, 11);
        assert_eq!(
            candidate.choice_candidate(),
            Some(ChoiceCandidate {
                event: 9,
                choice: 11,
                index: 2,
                receive: 3
            })
        );
        assert_eq!(
            record(OpKind::PotentialIndex, 2, 9, 0, 3, 11).choice_candidate(),
            None
        );
    }

    #[test]
    fn a_collectives_sequence_is_its_tag_less_one() {
        let mut bcast = Op::new(0, OpKind::Bcast);
        bcast.tag = 1 + 6;
        assert_eq!(bcast.collective_sequence(), Some(6));
        bcast.tag = 0;
        assert_eq!(bcast.collective_sequence(), None, "not known");
        let mut send = Op::new(0, OpKind::Send);
        send.tag = 7;
        assert_eq!(send.collective_sequence(), None, "a tag, not a number");
    }
}
