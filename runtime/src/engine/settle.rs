//! `MPI_Waitall` while the runtime must poll (the module docs of
//! [`crate::engine`] say why it polls while it blocks).
//!
//! It used to poll with `MPI_Testall`, which says nothing until every
//! request is done, so each pass also had [`Rt::service`] ask MPI about
//! every watched receive, the array's own included, one
//! `MPI_Request_get_status` each: with 64 receives in flight that was a
//! fifth of a message-rate run (`BENCHMARKS.md`). Now each pass is one
//! `MPI_Testsome` over the array: it reports each request as it completes,
//! so a receive is acknowledged the pass it completes (a synchronous
//! sender may be waiting for it) and is no longer watched, and `service`
//! polls only the requests outside the array. The program sees what
//! `MPI_Waitall` gives: the same statuses, the same requests set to
//! `MPI_REQUEST_NULL` (or inactive, for persistent ones), and on a failure
//! `MPI_ERR_IN_STATUS` with each status's error `MPI_SUCCESS`, the
//! failure's code, or `MPI_ERR_PENDING` (MPI-3.1 §3.7.5).
//!
//! A receive `MPI_Testsome` completed is freed by MPI but processed (its
//! clock, its `Matched` record) only when the call returns, in issue
//! order. Meanwhile an orphan `service` reaps can resolve it as a pending
//! event (`CompleteNow`): the tag it matched is kept in its slot
//! ([`crate::slots::Settled`]) for that, since MPI can no longer be asked.

use super::backoff::Backoff;
use super::{persist, Rt};
use crate::consts::{request_null, undefined, ERR_IN_STATUS, ERR_PENDING, SUCCESS};
use crate::slots::{Kind, Settled};
use crate::{piggyback, record};
use mbh_trace::op::flags;
use mbh_trace::rank_trace::RawOp;
use mbh_trace::OpKind;
use mpi_sys::{MPI_Request, MPI_Status};
use std::os::raw::c_int;

/// Scratch memory of [`Rt::waitall_settling`], kept between calls so a
/// call allocates nothing once the arrays are as long as the program's.
#[derive(Default)]
pub(super) struct Scratch {
    indices: Vec<c_int>,
    statuses: Vec<MPI_Status>,
    /// Per request of the array: MPI reported it complete.
    settled: Vec<bool>,
    /// Per request of the array: its `Settled` record is written.
    recorded: Vec<bool>,
    /// The array's receives taken off the watch list for the call.
    unwatched: Vec<u32>,
}

impl Rt {
    /// Waits for the `count` requests of `requests` (read by `snapshot`),
    /// writing their statuses into `statuses` (`count` of them).
    ///
    /// # Safety
    ///
    /// As for `MPI_Waitall`, with `statuses` valid for `count` entries.
    pub(super) unsafe fn waitall_settling(
        &mut self,
        count: c_int,
        requests: *mut MPI_Request,
        statuses: *mut MPI_Status,
    ) -> c_int {
        let n = usize::try_from(count).unwrap_or(0);
        self.settle.prepare(n);
        self.unwatch_array();
        let outer = self.det_blocking(true);
        let mut backoff = Backoff::new();
        let rc = loop {
            let mut outcount: c_int = 0;
            let (indices, sts) = (
                self.settle.indices.as_mut_ptr(),
                self.settle.statuses.as_mut_ptr(),
            );
            // SAFETY: the caller's array; the scratch holds `count` entries.
            let rc =
                unsafe { mpi_sys::PMPI_Testsome(count, requests, &mut outcount, indices, sts) };
            if rc != SUCCESS {
                // SAFETY: MPI filled `outcount` entries (or none).
                break unsafe { self.settle_failed(rc, outcount, statuses) };
            }
            if outcount == undefined() {
                break SUCCESS;
            }
            // SAFETY: MPI filled `outcount` entries of the scratch.
            unsafe { self.settle_pass(outcount, statuses) };
            if outcount == 0 {
                if backoff.serves() {
                    // SAFETY: polls the runtime's own requests.
                    unsafe { self.service(None) };
                }
                if backoff.pause() {
                    self.list_awaited();
                    self.record_settled();
                }
            } else if backoff.is_long() {
                // Completions after the call started to look stuck.
                self.record_settled();
            }
        };
        self.det_blocking(outer);
        self.rewatch_unsettled();
        if rc == SUCCESS {
            // SAFETY: `statuses` holds `count` entries.
            unsafe { self.settle_idle(statuses) };
        }
        rc
    }

    /// Takes the array's watched receives off the watch list: each pass's
    /// `MPI_Testsome` reports them.
    fn unwatch_array(&mut self) {
        self.settle.unwatched.clear();
        for i in 0..self.ids.len() {
            let Some(id) = self.ids[i] else {
                continue;
            };
            let receive = matches!(self.slots.get(id), Some(s) if matches!(s.kind, Kind::Recv(_)) && !s.orphan);
            if receive && self.slots.is_watched(id) {
                self.slots.unwatch(id);
                self.settle.unwatched.push(id);
            }
        }
    }

    /// Writes a `Settled` record for each receive of the array that MPI
    /// completed and the call will process only when it returns, once
    /// each. Called when the call looks stuck: the wait-for graph must not
    /// count those receives as still posted, or a send one of them took
    /// would look takeable by it and the rank that sent it "slow, not
    /// stuck", and the hang would run into the timeout instead of being
    /// confirmed (the shape: a blocked `Waitall` whose wildcard receive
    /// already took one message while a second send to the rank waits).
    fn record_settled(&mut self) {
        for i in 0..self.settle.settled.len() {
            if !self.settle.settled[i] || self.settle.recorded[i] {
                continue;
            }
            self.settle.recorded[i] = true;
            let Some(id) = self.ids.get(i).copied().flatten() else {
                continue;
            };
            // `None`: an orphan's; `Cancelled`: no message taken.
            let took = matches!(
                self.slots.get(id).map(|s| s.kind),
                Some(Kind::Recv(r)) if matches!(r.settled, Some(Settled::Tag(_)))
            );
            if took {
                self.record_took(id);
            }
        }
    }

    /// Writes the `Settled` record of receive slot `id`, which MPI
    /// completed (not cancelled) and the program has not completed yet:
    /// the send it took, as its piggybacked header names it.
    pub(super) fn record_took(&self, id: u32) {
        let Some(slot) = self.slots.get(id).copied() else {
            return;
        };
        if !matches!(slot.kind, Kind::Recv(_)) {
            return;
        }
        let Some(header) = piggyback::decode(self.slots.header_words(id)) else {
            return;
        };
        record::append(|| RawOp {
            kind: OpKind::Settled as u16,
            flags: flags::RETURNED,
            request: slot.record.unwrap_or(u64::MAX),
            peer: header.sender,
            aux: header.op_index,
            count: -1,
            ..RawOp::default()
        });
    }

    /// Puts back on the watch list the array's receives a failure left
    /// open (a completed one was observed: [`Rt::acknowledge_settled`]).
    fn rewatch_unsettled(&mut self) {
        for k in 0..self.settle.unwatched.len() {
            let id = self.settle.unwatched[k];
            let open =
                matches!(self.slots.get(id).map(|s| s.kind), Some(Kind::Recv(r)) if !r.observed);
            if open {
                self.slots.watch(id);
            }
        }
    }

    /// Copies the statuses of the requests one `MPI_Testsome` completed to
    /// their places and acknowledges the receives among them.
    ///
    /// # Safety
    ///
    /// The scratch holds `outcount` entries filled by MPI; `statuses` the
    /// array's.
    unsafe fn settle_pass(&mut self, outcount: c_int, statuses: *mut MPI_Status) {
        for k in 0..usize::try_from(outcount).unwrap_or(0) {
            let Ok(i) = usize::try_from(self.settle.indices[k]) else {
                continue;
            };
            if i >= self.settle.settled.len() {
                continue;
            }
            let status = self.settle.statuses[k];
            // SAFETY: `i` < count.
            unsafe { *statuses.add(i) = status };
            self.settle.settled[i] = true;
            self.acknowledge_settled(i, &status);
        }
    }

    /// What [`Rt::service`] does for a watched receive it sees complete,
    /// for request `i` of the snapshot.
    fn acknowledge_settled(&mut self, i: usize, status: &MPI_Status) {
        let Some(id) = self.ids.get(i).copied().flatten() else {
            return;
        };
        let Some(slot) = self.slots.get(id).copied() else {
            return;
        };
        if !matches!(slot.kind, Kind::Recv(_)) || slot.orphan {
            return;
        }
        // SAFETY: a status MPI just filled.
        let cancelled = self.cancels && unsafe { persist::was_cancelled(status) };
        // MPI freed the request: a pending event resolved before the call
        // processes it (an orphan `service` reaps meanwhile completes it)
        // reads this instead of asking MPI about a freed handle.
        if let Some(Kind::Recv(r)) = self.slots.get_mut(id).map(|s| &mut s.kind) {
            r.settled = Some(if cancelled {
                Settled::Cancelled
            } else {
                Settled::Tag(status.MPI_TAG)
            });
        }
        self.observe(id);
        if !cancelled {
            self.early_ack(id);
        }
    }

    /// Gives the requests MPI never reported (null or inactive ones) the
    /// empty status `MPI_Waitall` gives them: `MPI_Wait`'s on a null
    /// request.
    ///
    /// # Safety
    ///
    /// `statuses` holds the array's `count` entries.
    unsafe fn settle_idle(&mut self, statuses: *mut MPI_Status) {
        for i in 0..self.settle.settled.len() {
            if !self.settle.settled[i] {
                let mut null = request_null();
                // SAFETY: a null request; `i` < count.
                unsafe { mpi_sys::PMPI_Wait(&mut null, statuses.add(i)) };
            }
        }
    }

    /// After `MPI_Testsome` failed with `rc`: the statuses `MPI_Waitall`
    /// gives on a failure, and its code.
    ///
    /// # Safety
    ///
    /// As for [`Rt::settle_pass`].
    unsafe fn settle_failed(
        &mut self,
        rc: c_int,
        outcount: c_int,
        statuses: *mut MPI_Status,
    ) -> c_int {
        let any_settled = self.settle.settled.iter().any(|&s| s);
        if rc != ERR_IN_STATUS && !any_settled {
            return rc; // an argument MPI refused: nothing completed
        }
        for i in 0..self.settle.settled.len() {
            if self.settle.settled[i] {
                // SAFETY: `i` < count.
                unsafe { (*statuses.add(i)).MPI_ERROR = SUCCESS };
            }
        }
        if outcount != undefined() {
            // SAFETY: the caller's contract.
            unsafe { self.settle_pass(outcount, statuses) };
        }
        // Neither failed nor completed; an error that is not one request's
        // is given to every request still open.
        let open = if rc == ERR_IN_STATUS { ERR_PENDING } else { rc };
        for i in 0..self.settle.settled.len() {
            if !self.settle.settled[i] && self.ids.get(i).copied().flatten().is_some() {
                // SAFETY: `i` < count.
                unsafe { (*statuses.add(i)).MPI_ERROR = open };
            }
        }
        ERR_IN_STATUS
    }
}

impl Scratch {
    /// Room for an array of `n` requests, none settled.
    fn prepare(&mut self, n: usize) {
        self.settled.clear();
        self.settled.resize(n, false);
        self.recorded.clear();
        self.recorded.resize(n, false);
        if self.indices.len() < n {
            self.indices.resize(n, 0);
            self.statuses.resize(n, super::blank_status());
        }
    }
}
