//! Which message a receive can take: the one matching rule every analysis
//! uses.
//!
//! MPI matches a message to a receive by its *envelope*: communicator,
//! source and tag (MPI 4.0 §3.5). A receive (or probe) names a source or
//! `MPI_ANY_SOURCE` and a tag or `MPI_ANY_TAG`; it can take a message on
//! its communicator whose source and tag it names or leaves open. This
//! module decodes both sides from trace records:
//!
//! * [`SendSide::of`] reads the message a record sends: a send's `peer`
//!   and `tag`, or the send half of an `MPI_Sendrecv` /
//!   `MPI_Sendrecv_replace`, whose record keeps its *receive* side in
//!   `peer`/`tag` and its send side in `request` (destination in the low
//!   32 bits, send tag in the high 32; the runtime's `sendrecv_send_word`).
//!   It is the only place that decodes that word.
//! * [`RecvPattern`] is what a receive accepts, in one of two views that
//!   differ only on a wildcard receive a guided replay forced:
//!   - [`RecvPattern::as_written`]: the program's pattern. A forced
//!     `MPI_ANY_SOURCE` stays a wildcard. Use it for questions about the
//!     program (which sends could a receive take in *some* run, which
//!     receives MPI orders among themselves).
//!   - [`RecvPattern::as_posted`]: what MPI was actually asked in *this*
//!     run. A forced wildcard accepts only its forced source, because the
//!     runtime posted it with that source. Use it for questions about this
//!     run's progress (what a blocked receive is waiting for).
//!
//! Sources and destinations are ranks of the record's communicator, as
//! passed; ranks are never negative, the MPI constants `MPI_ANY_SOURCE`
//! and `MPI_PROC_NULL` are (their values differ between MPI libraries, so
//! nothing here compares against them: the record's flags say which).
//!
//! ```
//! use mbh_trace::envelope::{Envelope, RecvPattern, SendSide};
//! use mbh_trace::op::flags;
//! use mbh_trace::rank_trace::Op;
//! use mbh_trace::OpKind;
//!
//! // Rank 1 sends tag 7 to rank 0 on communicator 5.
//! let mut send = Op::new(0, OpKind::Send);
//! (send.peer, send.tag, send.comm) = (0, 7, 5);
//! let side = SendSide::of(&send).unwrap();
//! let message = side.envelope(1);
//!
//! // Rank 0 receives from MPI_ANY_SOURCE with tag 7; a replay forced it to
//! // rank 2.
//! let mut recv = Op::new(0, OpKind::Recv);
//! (recv.peer, recv.tag, recv.comm, recv.flags) = (2, 7, 5, flags::ANY_SOURCE);
//! assert!(RecvPattern::as_written(&recv).accepts(&message));
//! assert!(!RecvPattern::as_posted(&recv).accepts(&message));
//! assert_eq!(message, Envelope { comm: 5, source: 1, tag: 7 });
//! ```
//!
//! # Limitations
//!
//! Sources are ranks of the communicator; translating them to
//! `MPI_COMM_WORLD` ranks is the caller's business. Nothing here looks at
//! `FAILED` or `CANCELLED`: whether such a record still counts is each
//! analysis's choice.

use crate::op::{flags, OpClass};
use crate::rank_trace::Op;

/// The envelope of a message: what MPI compares against a receive's
/// pattern.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Envelope {
    /// Communicator handle bits (renamed across ranks by
    /// [`RankTrace::parse`](crate::RankTrace::parse)).
    pub comm: u64,
    /// The sender's rank in `comm`.
    pub source: i32,
    /// The tag it was sent with.
    pub tag: i32,
}

/// The message a record sends: its destination, tag and communicator.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct SendSide {
    /// Destination rank in `comm` (never negative).
    pub dest: i32,
    /// The tag sent with.
    pub tag: i32,
    /// Communicator handle bits.
    pub comm: u64,
}

impl SendSide {
    /// The message `op` sends, if it sends one.
    ///
    /// * A send (class [`OpClass::Send`]: `MPI_Send` ... `MPI_Irsend`, a
    ///   started persistent send): `peer`, `tag`, `comm`; `None` when its
    ///   `PROC_NULL` flag is set (no message).
    /// * `MPI_Sendrecv` / `MPI_Sendrecv_replace`: the send half from
    ///   `request` (destination = low 32 bits, tag = high 32 bits). The
    ///   record's `PROC_NULL` flag is about its *receive* half and is
    ///   ignored; a negative destination (`MPI_PROC_NULL`) gives `None`.
    /// * Anything else (receives, probes, `MPI_Send_init`, which makes a
    ///   request but no message): `None`.
    pub fn of(op: &Op) -> Option<SendSide> {
        if op.kind.is_sendrecv() {
            let dest = op.request as u32 as i32;
            let tag = (op.request >> 32) as u32 as i32;
            return (dest >= 0).then_some(SendSide {
                dest,
                tag,
                comm: op.comm,
            });
        }
        (op.kind.class() == OpClass::Send && !op.has(flags::PROC_NULL)).then_some(SendSide {
            dest: op.peer,
            tag: op.tag,
            comm: op.comm,
        })
    }

    /// The envelope of this message as its receiver sees it, given the
    /// sender's rank `source` in the communicator.
    pub fn envelope(&self, source: i32) -> Envelope {
        Envelope {
            comm: self.comm,
            source,
            tag: self.tag,
        }
    }
}

/// Which messages a receive or probe accepts: communicator, and source and
/// tag, `None` for a wildcard.
///
/// Build it with [`RecvPattern::as_written`] or [`RecvPattern::as_posted`],
/// which differ only on a wildcard receive a guided replay forced (see the
/// [module docs](self)). For a receive from `MPI_PROC_NULL` the source is
/// that (negative) constant, which no message has.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize)]
pub struct RecvPattern {
    /// Communicator handle bits.
    pub comm: u64,
    /// The source accepted; `None`: any.
    pub source: Option<i32>,
    /// The tag accepted; `None`: any.
    pub tag: Option<i32>,
}

impl RecvPattern {
    /// The pattern the program wrote in the receive (or probe, or the
    /// receive half of an `MPI_Sendrecv`) `op`: `MPI_ANY_SOURCE` and
    /// `MPI_ANY_TAG` (the record's `ANY_SOURCE`/`ANY_TAG` flags) are
    /// wildcards, even when a guided replay forced the source.
    pub fn as_written(op: &Op) -> RecvPattern {
        RecvPattern {
            comm: op.comm,
            source: (!op.has(flags::ANY_SOURCE)).then_some(op.peer),
            tag: (!op.has(flags::ANY_TAG)).then_some(op.tag),
        }
    }

    /// The pattern MPI was asked to match for `op` in the run that recorded
    /// it: as [`RecvPattern::as_written`], except that a wildcard receive a
    /// guided replay forced accepts only its forced source. Such a record
    /// keeps its `ANY_SOURCE` flag and holds the forced source in `peer`
    /// (a rank, so not negative); an unforced one holds `MPI_ANY_SOURCE`
    /// there (negative).
    pub fn as_posted(op: &Op) -> RecvPattern {
        RecvPattern {
            source: (!op.has(flags::ANY_SOURCE) || op.peer >= 0).then_some(op.peer),
            ..RecvPattern::as_written(op)
        }
    }

    /// Whether a message with envelope `message` can match this pattern:
    /// same communicator, and source and tag equal or left open.
    pub fn accepts(&self, message: &Envelope) -> bool {
        self.comm == message.comm
            && self.source.is_none_or(|s| s == message.source)
            && self.tag.is_none_or(|t| t == message.tag)
    }

    /// Whether some message could match both patterns: same communicator,
    /// and each of source and tag a wildcard in one of them or equal.
    pub fn overlaps(&self, other: &RecvPattern) -> bool {
        fn meet(a: Option<i32>, b: Option<i32>) -> bool {
            a.is_none() || b.is_none() || a == b
        }
        self.comm == other.comm && meet(self.source, other.source) && meet(self.tag, other.tag)
    }

    /// Whether every message `other` accepts, this accepts too (this
    /// pattern subsumes `other`): same communicator, and each of source and
    /// tag is a wildcard here or equal there.
    pub fn contains(&self, other: &RecvPattern) -> bool {
        self.comm == other.comm
            && (self.source.is_none() || self.source == other.source)
            && (self.tag.is_none() || self.tag == other.tag)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::op::OpKind;

    /// MPICH's values; nothing here may depend on them.
    const ANY_SOURCE: i32 = -2;
    const ANY_TAG: i32 = -1;
    const PROC_NULL: i32 = -1;

    fn op(kind: OpKind, peer: i32, tag: i32, flags: u16) -> Op {
        let mut op = Op::new(0, kind);
        (op.peer, op.tag, op.comm, op.flags) = (peer, tag, 9, flags);
        op
    }

    fn message(source: i32, tag: i32) -> Envelope {
        Envelope {
            comm: 9,
            source,
            tag,
        }
    }

    #[test]
    fn specific_receive_accepts_its_source_and_tag_only() {
        let recv = op(OpKind::Recv, 1, 7, 0);
        for pattern in [
            RecvPattern::as_written(&recv),
            RecvPattern::as_posted(&recv),
        ] {
            assert!(pattern.accepts(&message(1, 7)));
            assert!(!pattern.accepts(&message(2, 7)));
            assert!(!pattern.accepts(&message(1, 8)));
            assert!(!pattern.accepts(&Envelope {
                comm: 10,
                ..message(1, 7)
            }));
        }
    }

    #[test]
    fn unforced_wildcard_is_a_wildcard_in_both_views() {
        let recv = op(OpKind::Irecv, ANY_SOURCE, 7, flags::ANY_SOURCE);
        for pattern in [
            RecvPattern::as_written(&recv),
            RecvPattern::as_posted(&recv),
        ] {
            assert_eq!(pattern.source, None);
            assert!(pattern.accepts(&message(0, 7)) && pattern.accepts(&message(3, 7)));
            assert!(!pattern.accepts(&message(0, 8)));
        }
    }

    #[test]
    fn forced_wildcard_differs_between_views() {
        // A guided replay forced this MPI_ANY_SOURCE receive to rank 2.
        let recv = op(OpKind::Recv, 2, 7, flags::ANY_SOURCE);
        let written = RecvPattern::as_written(&recv);
        let posted = RecvPattern::as_posted(&recv);
        assert_eq!(written.source, None);
        assert_eq!(posted.source, Some(2));
        assert!(written.accepts(&message(1, 7)) && written.accepts(&message(2, 7)));
        assert!(!posted.accepts(&message(1, 7)) && posted.accepts(&message(2, 7)));
        assert!(written.contains(&posted) && !posted.contains(&written));
    }

    #[test]
    fn any_tag_accepts_every_tag() {
        let recv = op(OpKind::Recv, 1, ANY_TAG, flags::ANY_TAG);
        let pattern = RecvPattern::as_written(&recv);
        assert_eq!(pattern.tag, None);
        assert!(pattern.accepts(&message(1, 0)) && pattern.accepts(&message(1, 99)));
        assert!(!pattern.accepts(&message(2, 0)));
        let both = op(
            OpKind::Probe,
            ANY_SOURCE,
            ANY_TAG,
            flags::ANY_SOURCE | flags::ANY_TAG,
        );
        assert!(RecvPattern::as_posted(&both).accepts(&message(5, 5)));
    }

    #[test]
    fn contains_is_subsumption() {
        let any = RecvPattern {
            comm: 9,
            source: None,
            tag: None,
        };
        let from1 = RecvPattern {
            source: Some(1),
            ..any
        };
        let from1_tag7 = RecvPattern {
            tag: Some(7),
            ..from1
        };
        let tag7 = RecvPattern {
            tag: Some(7),
            ..any
        };
        assert!(any.contains(&from1_tag7) && from1.contains(&from1_tag7));
        assert!(tag7.contains(&from1_tag7) && from1_tag7.contains(&from1_tag7));
        assert!(!from1.contains(&tag7) && !tag7.contains(&from1));
        assert!(!from1_tag7.contains(&any));
        assert!(!any.contains(&RecvPattern { comm: 10, ..any }));
    }

    #[test]
    fn sends_decode_peer_and_tag() {
        let send = op(OpKind::Issend, 3, 4, 0);
        let side = SendSide::of(&send).unwrap();
        assert_eq!(
            side,
            SendSide {
                dest: 3,
                tag: 4,
                comm: 9
            }
        );
        assert_eq!(side.envelope(1), message(1, 4));
        assert_eq!(
            SendSide::of(&op(OpKind::StartSend, 0, 1, 0)).map(|s| s.dest),
            Some(0)
        );
    }

    #[test]
    fn sendrecv_send_side_is_in_the_request_word() {
        // Receives from 1 with tag 7; sends to 2 with tag 5.
        let mut sr = op(OpKind::Sendrecv, 1, 7, 0);
        sr.request = u64::from(2u32) | u64::from(5u32) << 32;
        let side = SendSide::of(&sr).unwrap();
        assert_eq!((side.dest, side.tag, side.comm), (2, 5, 9));
        // The receive side is `peer`/`tag`, as for any receive.
        assert!(RecvPattern::as_written(&sr).accepts(&message(1, 7)));
        // A tag with the high bit set survives the round trip.
        sr.kind = OpKind::SendrecvReplace;
        sr.request = u64::from(2u32) | u64::from(i32::MAX as u32) << 32;
        assert_eq!(SendSide::of(&sr).unwrap().tag, i32::MAX);
    }

    #[test]
    fn proc_null_sends_nothing() {
        assert_eq!(
            SendSide::of(&op(OpKind::Send, PROC_NULL, 0, flags::PROC_NULL)),
            None
        );
        // A Sendrecv's PROC_NULL flag is its receive half's: the send half
        // still goes to rank 2.
        let mut sr = op(OpKind::Sendrecv, PROC_NULL, 7, flags::PROC_NULL);
        sr.request = u64::from(2u32) | u64::from(5u32) << 32;
        assert_eq!(SendSide::of(&sr).map(|s| s.dest), Some(2));
        // Its send half to MPI_PROC_NULL sends nothing.
        sr.request = u64::from(PROC_NULL as u32) | u64::from(5u32) << 32;
        sr.flags = 0;
        assert_eq!(SendSide::of(&sr), None);
    }

    #[test]
    fn receives_and_requests_send_nothing() {
        for kind in [OpKind::Recv, OpKind::Irecv, OpKind::Probe, OpKind::SendInit] {
            assert_eq!(SendSide::of(&op(kind, 1, 1, 0)), None, "{kind:?}");
        }
    }
}
