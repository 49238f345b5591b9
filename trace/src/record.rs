//! The kind-specific words of a record, decoded: what a record of one kind
//! keeps in the positional fields of [`RawOp`](crate::rank_trace::RawOp) whose meaning depends on
//! the kind (`aux` above all, and `peer`, `request`, `count`, `comm` of the
//! runtime's own records). Readers outside this crate decode those fields
//! only through the accessors below, so their rustdoc is the format's
//! specification of each field; [`crate::envelope`] does the same for what
//! a message and a receive carry, and [`crate::check`] for the records of
//! local checks.
//!
//! Each accessor returns `None` for a record of another kind, so a reader
//! never takes one kind's word for another's.
//!
//! ```
//! use mbh_trace::rank_trace::Op;
//! use mbh_trace::OpKind;
//!
//! // Rank 0's `MPI_Wait` (record 3) completed its `MPI_Irecv` (record 1).
//! let mut wait = Op::new(3, OpKind::Wait);
//! wait.aux = 1 + 1;
//! assert_eq!(wait.request_origin(), Some(1));
//! // Another kind's words are not these.
//! let mut send = Op::new(4, OpKind::Send);
//! send.aux = 2;
//! assert_eq!(send.request_origin(), None);
//! ```
//!
//! # Limitations
//!
//! The accessors decode; they do not check. A record index they return
//! may name no record of the trace (a damaged or hand-made trace, a
//! sender that did not record its send): looking it up is the caller's
//! business, as is whether a `FAILED` or `CANCELLED` record still counts.

use crate::op::OpClass;
use crate::rank_trace::Op;

impl Op {
    /// The request a completion (class [`OpClass::Completion`]: `MPI_Wait`,
    /// `MPI_Test`, `MPI_Waitall`, ...) completed: the index of the record
    /// that made it (`MPI_Isend`, `MPI_Irecv`, the `MPI_Start` of a
    /// persistent request, a nonblocking collective), for a call on
    /// several requests its first request's. `None` when the runtime did
    /// not know it, and for other kinds.
    ///
    /// Stored in `aux` as 1 + that index, 0 when unknown. The other
    /// requests of a call on several are named by `Completed` records and,
    /// for nonblocking collectives, `CollectiveComplete` and `WaitRequest`
    /// records ([`crate::OpKind`]).
    pub fn request_origin(&self) -> Option<u64> {
        (self.kind.class() == OpClass::Completion)
            .then(|| self.aux.checked_sub(1))
            .flatten()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::OpKind;

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
}
