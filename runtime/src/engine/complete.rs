//! Completion calls: `Wait`, `Test` and their `all`/`any`/`some` forms,
//! `Request_free`, `Request_get_status`.
//!
//! A synchronous send is complete for the program only once its
//! acknowledgement arrived: the `Test` forms report it incomplete until
//! then (they hide it from MPI behind `MPI_REQUEST_NULL` for the call, so
//! MPI does not free it), the `Wait` forms wait for it.
//!
//! Receives completed by one call are processed in their issue order (the
//! order nonovertaking matched them in).

use super::persist::Waiting;
use super::{finish_received, status_into, status_target, Rt};
use crate::consts::{
    request_null, status_ignore, statuses_ignore, undefined, ERR_IN_STATUS, SUCCESS,
};
use crate::handle::HandleBits;
use crate::piggyback;
use crate::record::{self, REQUESTS};
use crate::slots::Kind;
use mbh_trace::op::flags;
use mbh_trace::rank_trace::RawOp;
use mbh_trace::OpKind;
use mpi_sys::{MPI_Request, MPI_Status};
use std::os::raw::c_int;
use std::ptr::null_mut;

impl Rt {
    /// The slot of `handle`, if the runtime made it.
    pub(super) fn slot_of(handle: MPI_Request) -> Option<u32> {
        if handle.bits() == request_null().bits() {
            return None;
        }
        REQUESTS.get(handle.bits())
    }

    /// A completion record: `request` is the (first) request, `aux` 1 +
    /// index of the record that made it (0 unknown), `count` how many
    /// requests the call was given.
    fn completion_op(
        &self,
        kind: OpKind,
        handle: MPI_Request,
        slot: Option<u32>,
        count: c_int,
    ) -> RawOp {
        let origin = slot
            .and_then(|id| self.slots.get(id))
            .and_then(|s| s.record);
        RawOp {
            kind: kind as u16,
            site: record::site(),
            request: handle.bits(),
            aux: origin.map_or(0, |i| i.wrapping_add(1)),
            count,
            ..RawOp::default()
        }
    }

    /// Before a call on several requests (record `completer`) processes the
    /// request of slot `id`, which it completed: a `Completed` record names
    /// the record that made it, since the call's own record names only its
    /// first request (the buffering analysis needs to know which sends it
    /// waited for, seed 003 §3). Nonblocking collectives have their own
    /// `CollectiveComplete` record.
    fn note_completed(&self, id: u32, completer: Option<u64>) {
        let Some(slot) = self.slots.get(id) else {
            return;
        };
        if let (Some(completer), Some(origin), false) = (
            completer,
            slot.record,
            matches!(slot.kind, Kind::Coll(_) | Kind::Free),
        ) {
            record::append(|| RawOp {
                kind: OpKind::Completed as u16,
                flags: flags::RETURNED,
                site: record::site(),
                request: completer,
                aux: origin,
                ..RawOp::default()
            });
        }
    }

    /// After MPI completed `handle` (slot `id`) with `status`: forgets the
    /// handle, processes the completion, gives a receive's status to the
    /// record of the call that made it. Returns whether it was a receive.
    ///
    /// # Safety
    ///
    /// `status` as MPI filled it, valid for writes.
    unsafe fn finish_request(
        &mut self,
        id: u32,
        handle: MPI_Request,
        status: *mut MPI_Status,
        completer: Option<u64>,
    ) -> bool {
        REQUESTS.remove(handle.bits());
        let Some(slot) = self.slots.get(id).copied() else {
            return false;
        };
        // SAFETY: the caller's contract.
        if unsafe { self.cancelled(id, status) } {
            return false;
        }
        let receive = matches!(slot.kind, Kind::Recv(_) | Kind::Plain { receive: true });
        // SAFETY: the caller's contract.
        unsafe { self.complete_slot(id, status, completer) };
        if receive {
            status_into(slot.record, status);
        }
        receive
    }

    /// `MPI_Test` as asked: deterministic mode's (`dtp.rs`), or MPI's.
    ///
    /// # Safety
    ///
    /// As for `MPI_Test`.
    unsafe fn test_or_det(
        &mut self,
        request: *mut MPI_Request,
        flag: *mut c_int,
        status: *mut MPI_Status,
    ) -> c_int {
        if self.det.is_some() {
            // SAFETY: the caller's contract.
            unsafe { self.det_test(request, flag, status) }
        } else {
            // SAFETY: the caller's contract.
            unsafe { self.test_now(request, flag, status) }
        }
    }

    /// `MPI_Wait`.
    ///
    /// # Safety
    ///
    /// As for `MPI_Wait`.
    unsafe fn wait_now(&mut self, request: *mut MPI_Request, status: *mut MPI_Status) -> c_int {
        if request.is_null() {
            // SAFETY: MPI reports the null pointer.
            return unsafe { mpi_sys::PMPI_Wait(request, status) };
        }
        // SAFETY: non-null: the caller's request, read before MPI frees it.
        let handle = unsafe { *request };
        let id = Self::slot_of(handle);
        let index = record::begin(|| self.completion_op(OpKind::Wait, handle, id, 1), true);
        let mut local = super::blank_status();
        let target = status_target(status, &mut local);
        // SAFETY: the caller's request and a valid status.
        let rc = unsafe { self.block_on(request, target, id) };
        let mut receive = false;
        if rc == SUCCESS {
            if let Some(id) = id {
                // SAFETY: MPI completed the request into `target`.
                receive = unsafe { self.finish_request(id, handle, target, index) };
            }
        } else if let Some(id) = id {
            // SAFETY: the caller's request (non-null, checked above).
            if unsafe { *request }.bits() == request_null().bits() {
                // MPI completed and freed it with an error (a truncated
                // receive): the program holds nothing to leak.
                REQUESTS.remove(handle.bits());
                self.slots.release(id);
            }
        }
        finish_received(index, rc, if receive { target } else { null_mut() });
        rc
    }

    /// `MPI_Test`. Recorded only when it completes the request (or fails).
    ///
    /// # Safety
    ///
    /// As for `MPI_Test`.
    pub(super) unsafe fn test_now(
        &mut self,
        request: *mut MPI_Request,
        flag: *mut c_int,
        status: *mut MPI_Status,
    ) -> c_int {
        if request.is_null() || flag.is_null() {
            // SAFETY: MPI reports the null pointer.
            return unsafe { mpi_sys::PMPI_Test(request, flag, status) };
        }
        // SAFETY: non-null: the caller's request.
        let handle = unsafe { *request };
        let id = Self::slot_of(handle);
        if let Some(id) = id {
            if !self.ack_arrived(id) {
                // SAFETY: non-null: the caller's flag.
                unsafe { *flag = 0 };
                self.polled_test(handle, Some(id));
                // SAFETY: MPI is initialised.
                unsafe { self.service(None) };
                return SUCCESS;
            }
        }
        let mut local = super::blank_status();
        let target = status_target(status, &mut local);
        // SAFETY: the caller's arguments and a valid status.
        let rc = unsafe { mpi_sys::PMPI_Test(request, flag, target) };
        // SAFETY: non-null, written by MPI.
        let done = rc == SUCCESS && unsafe { *flag } != 0;
        if done || rc != SUCCESS {
            let op = self.completion_op(OpKind::Test, handle, id, 1);
            let index = record::append(|| RawOp {
                flags: flags::RETURNED | if rc != SUCCESS { flags::FAILED } else { 0 },
                error: rc,
                ..op
            });
            if let (true, Some(id)) = (done, id) {
                // SAFETY: MPI completed the request into `target`.
                if unsafe { self.finish_request(id, handle, target, index) } {
                    status_into(index, target);
                }
            }
        } else {
            self.polled_test(handle, id);
            // SAFETY: MPI is initialised.
            unsafe { self.service(None) };
        }
        rc
    }

    /// An `MPI_Test` of `handle` found it incomplete: in a polling loop it
    /// stands for `MPI_Wait` on it.
    fn polled_test(&self, handle: MPI_Request, id: Option<u32>) {
        record::poll(OpKind::Test, || {
            self.completion_op(OpKind::Wait, handle, id, 1)
        });
    }

    /// A call on several (`polled`: `MPI_Testany`, `MPI_Testsome`) of
    /// `count` requests found none complete: in a polling loop it stands
    /// for `wait` (`MPI_Waitany`, `MPI_Waitsome`) on the rank's outstanding
    /// requests, or, when a replay forces it to return request `forced`,
    /// for `MPI_Wait` on that one alone: no other can complete it (seed 001
    /// §4). A forcing that request cannot meet is then a deadlock the
    /// wait-for graph confirms, not a loop that looks slow because another
    /// request can complete (the exhaustive reference forces every index,
    /// feasible or not).
    fn polled_many(&self, polled: OpKind, wait: OpKind, count: c_int, forced: Option<usize>) {
        record::poll(polled, || match forced {
            Some(j) if j < self.handles.len() => {
                self.completion_op(OpKind::Wait, self.handles[j], self.ids[j], 1)
            }
            _ => self.many_op(wait, count),
        });
    }

    /// Reads `count` requests into the scratch lists; `None` when the
    /// arguments are for MPI to reject.
    ///
    /// # Safety
    ///
    /// `requests` must hold `count` requests when non-null.
    unsafe fn snapshot(&mut self, count: c_int, requests: *const MPI_Request) -> Option<usize> {
        let n = usize::try_from(count).ok()?;
        if n > 0 && requests.is_null() {
            return None;
        }
        self.handles.clear();
        self.ids.clear();
        for i in 0..n {
            // SAFETY: `requests` holds `count` entries.
            let handle = unsafe { *requests.add(i) };
            self.handles.push(handle);
            self.ids.push(Self::slot_of(handle));
        }
        Some(n)
    }

    /// The record of a call on several requests.
    fn many_op(&self, kind: OpKind, count: c_int) -> RawOp {
        let first = self
            .handles
            .iter()
            .position(|h| h.bits() != request_null().bits());
        match first {
            Some(i) => self.completion_op(kind, self.handles[i], self.ids[i], count),
            None => self.completion_op(kind, request_null(), None, count),
        }
    }

    /// Statuses MPI can write for `n` requests: the caller's, or scratch
    /// when the caller passed `MPI_STATUSES_IGNORE`.
    fn statuses_for(&mut self, n: usize, statuses: *mut MPI_Status) -> *mut MPI_Status {
        if statuses != statuses_ignore() {
            return statuses;
        }
        if self.statuses.len() < n {
            self.statuses.resize(n, super::blank_status());
        }
        self.statuses.as_mut_ptr()
    }

    /// Whether a request of the snapshot is a synchronous send still
    /// waiting for its acknowledgement.
    fn any_unacknowledged(&self) -> bool {
        self.ids.iter().flatten().any(|&id| {
            matches!(
                self.slots.get(id).map(|s| s.kind),
                Some(Kind::Send(send)) if send.sync && !send.ack_arrived
            )
        })
    }

    /// Hides the snapshot's synchronous sends whose acknowledgement has
    /// not arrived behind `MPI_REQUEST_NULL` (see the module docs).
    ///
    /// # Safety
    ///
    /// `requests` is the snapshot's array.
    unsafe fn mask(&mut self, requests: *mut MPI_Request) {
        self.masked.clear();
        for i in 0..self.ids.len() {
            if let Some(id) = self.ids[i] {
                if !self.ack_arrived(id) {
                    self.masked.push(i);
                    // SAFETY: `i` < count.
                    unsafe { *requests.add(i) = request_null() };
                }
            }
        }
    }

    /// Undoes [`Rt::mask`].
    ///
    /// # Safety
    ///
    /// As for `mask`.
    unsafe fn unmask(&mut self, requests: *mut MPI_Request) {
        for &i in &self.masked {
            // SAFETY: `i` < count.
            unsafe { *requests.add(i) = self.handles[i] };
        }
    }

    /// Processes the completed requests queued in `order` (snapshot index,
    /// status) in the issue order of receives.
    ///
    /// # Safety
    ///
    /// Each status is valid and filled in by MPI.
    unsafe fn finish_order(&mut self, completer: Option<u64>) {
        for entry in self.order.iter_mut() {
            let id = self.ids[entry.1];
            entry.0 = match id.and_then(|id| self.slots.get(id)).map(|s| s.kind) {
                Some(Kind::Recv(r)) => r.seq,
                _ => 0,
            };
        }
        self.order.sort_by_key(|e| e.0);
        for k in 0..self.order.len() {
            let (_, i, status) = self.order[k];
            if let Some(id) = self.ids[i] {
                self.note_completed(id, completer);
                // SAFETY: the caller's contract.
                unsafe { self.finish_request(id, self.handles[i], status, completer) };
            }
        }
        self.order.clear();
    }

    /// Queues every completed request of an `all` call.
    ///
    /// # Safety
    ///
    /// `statuses` holds `n` statuses; `requests` the snapshot's array.
    unsafe fn queue_all(
        &mut self,
        rc: c_int,
        requests: *mut MPI_Request,
        statuses: *mut MPI_Status,
    ) {
        self.order.clear();
        for i in 0..self.ids.len() {
            if self.ids[i].is_none() {
                continue;
            }
            // SAFETY: `i` < n.
            let status = unsafe { statuses.add(i) };
            if rc == ERR_IN_STATUS {
                // SAFETY: as above; MPI set each entry's error.
                let completed = unsafe {
                    (*status).MPI_ERROR == SUCCESS
                        && (*requests.add(i)).bits() == request_null().bits()
                };
                if !completed {
                    continue;
                }
            }
            self.order.push((0, i, status));
        }
    }

    /// Queues the requests a `some` call completed.
    ///
    /// # Safety
    ///
    /// `indices` and `statuses` hold `outcount` entries.
    unsafe fn queue_some(
        &mut self,
        rc: c_int,
        outcount: c_int,
        indices: *const c_int,
        statuses: *mut MPI_Status,
    ) {
        self.order.clear();
        let n = usize::try_from(outcount).unwrap_or(0);
        for k in 0..n {
            // SAFETY: `k` < outcount.
            let (i, status) = unsafe { (*indices.add(k), statuses.add(k)) };
            // SAFETY: as above.
            if rc == ERR_IN_STATUS && unsafe { (*status).MPI_ERROR } != SUCCESS {
                continue;
            }
            if let Ok(i) = usize::try_from(i) {
                if i < self.ids.len() {
                    self.order.push((0, i, status));
                }
            }
        }
    }

    /// `MPI_Waitall`.
    ///
    /// # Safety
    ///
    /// As for `MPI_Waitall`.
    unsafe fn waitall_now(
        &mut self,
        count: c_int,
        requests: *mut MPI_Request,
        statuses: *mut MPI_Status,
    ) -> c_int {
        // SAFETY: the caller's contract.
        let Some(n) = (unsafe { self.snapshot(count, requests) }) else {
            // SAFETY: MPI judges the arguments.
            return unsafe { mpi_sys::PMPI_Waitall(count, requests, statuses) };
        };
        let index = record::begin(|| self.many_op(OpKind::Waitall, count), true);
        self.await_all(index);
        let sts = self.statuses_for(n, statuses);
        let rc = if !self.must_poll() {
            self.list_awaited();
            // SAFETY: the caller's requests and valid statuses.
            unsafe { mpi_sys::PMPI_Waitall(count, requests, sts) }
        } else if self.det.is_none() {
            // SAFETY: as above; `snapshot` read the array.
            unsafe { self.waitall_settling(count, requests, sts) }
        } else {
            // SAFETY: as above, polled.
            unsafe {
                self.spin(|_| {
                    let mut flag: c_int = 0;
                    let rc = mpi_sys::PMPI_Testall(count, requests, &mut flag, sts);
                    (rc != SUCCESS || flag != 0).then_some(rc)
                })
            }
        };
        self.forget_awaited();
        if rc == SUCCESS || rc == ERR_IN_STATUS {
            // SAFETY: MPI filled `sts`.
            unsafe {
                self.queue_all(rc, requests, sts);
                self.finish_order(index);
            }
        }
        record::finish(index, rc, true, |_| {});
        rc
    }

    /// `MPI_Testall`. Recorded only when it completes the
    /// requests (or fails).
    ///
    /// # Safety
    ///
    /// As for `MPI_Testall`.
    pub(super) unsafe fn testall_now(
        &mut self,
        count: c_int,
        requests: *mut MPI_Request,
        flag: *mut c_int,
        statuses: *mut MPI_Status,
    ) -> c_int {
        // SAFETY: the caller's contract.
        let snapshot = unsafe { self.snapshot(count, requests) };
        let (Some(n), false) = (snapshot, flag.is_null()) else {
            // SAFETY: MPI judges the arguments.
            return unsafe { mpi_sys::PMPI_Testall(count, requests, flag, statuses) };
        };
        for i in 0..n {
            if let Some(id) = self.ids[i] {
                if !self.ack_arrived(id) {
                    // SAFETY: non-null: the caller's flag.
                    unsafe { *flag = 0 };
                    record::poll(OpKind::Testall, || self.many_op(OpKind::Waitall, count));
                    // SAFETY: MPI is initialised.
                    unsafe { self.service(None) };
                    return SUCCESS;
                }
            }
        }
        let sts = self.statuses_for(n, statuses);
        // SAFETY: the caller's arguments and valid statuses.
        let rc = unsafe { mpi_sys::PMPI_Testall(count, requests, flag, sts) };
        // SAFETY: non-null, written by MPI.
        let done = (rc == SUCCESS && unsafe { *flag } != 0) || rc == ERR_IN_STATUS;
        if done || rc != SUCCESS {
            let op = self.many_op(OpKind::Testall, count);
            let index = record::append(|| RawOp {
                flags: flags::RETURNED | if rc != SUCCESS { flags::FAILED } else { 0 },
                error: rc,
                ..op
            });
            if done {
                // SAFETY: MPI filled `sts`.
                unsafe {
                    self.queue_all(rc, requests, sts);
                    self.finish_order(index);
                }
            }
        } else {
            record::poll(OpKind::Testall, || self.many_op(OpKind::Waitall, count));
            // SAFETY: MPI is initialised.
            unsafe { self.service(None) };
        }
        rc
    }

    /// `Testany` with unacknowledged synchronous sends hidden.
    ///
    /// # Safety
    ///
    /// As for `MPI_Testany`, after [`Rt::snapshot`].
    unsafe fn testany_masked(
        &mut self,
        count: c_int,
        requests: *mut MPI_Request,
        index: *mut c_int,
        flag: *mut c_int,
        status: *mut MPI_Status,
    ) -> c_int {
        // SAFETY: the caller's contract.
        unsafe { self.mask(requests) };
        // SAFETY: as above.
        let rc = unsafe { mpi_sys::PMPI_Testany(count, requests, index, flag, status) };
        // SAFETY: as above.
        unsafe { self.unmask(requests) };
        // SAFETY: MPI wrote both when it succeeded.
        let none_active = unsafe { *flag != 0 && *index == undefined() };
        if rc == SUCCESS && !self.masked.is_empty() && none_active {
            // Only hidden requests were active: none is complete yet.
            // SAFETY: as above.
            unsafe { *flag = 0 };
        }
        rc
    }

    /// A `Test` form forced to index `j` (seed 001 §4): tests that request
    /// alone (a synchronous send only once acknowledged) and reports it as
    /// the one completed, or nothing.
    ///
    /// # Safety
    ///
    /// `j` < the snapshot's count, `requests` its array; `index_out` and
    /// `flag` non-null; `status` valid.
    unsafe fn test_forced(
        &mut self,
        requests: *mut MPI_Request,
        j: usize,
        index_out: *mut c_int,
        flag: *mut c_int,
        status: *mut MPI_Status,
    ) -> c_int {
        // SAFETY: the caller's contract.
        unsafe { *flag = 0 };
        if self.ids[j].is_some_and(|id| !self.ack_arrived(id)) {
            return SUCCESS;
        }
        // SAFETY: the caller's contract.
        let rc = unsafe { mpi_sys::PMPI_Test(requests.add(j), flag, status) };
        // SAFETY: as above.
        unsafe { *index_out = if *flag != 0 { j as c_int } else { undefined() } };
        rc
    }

    /// `MPI_Waitany`.
    ///
    /// # Safety
    ///
    /// As for `MPI_Waitany`.
    pub(super) unsafe fn waitany_now(
        &mut self,
        count: c_int,
        requests: *mut MPI_Request,
        index_out: *mut c_int,
        status: *mut MPI_Status,
    ) -> c_int {
        // SAFETY: the caller's contract.
        let snapshot = unsafe { self.snapshot(count, requests) };
        if snapshot.is_none() || index_out.is_null() {
            // SAFETY: MPI judges the arguments.
            return unsafe { mpi_sys::PMPI_Waitany(count, requests, index_out, status) };
        }
        let index = record::begin(|| self.many_op(OpKind::Waitany, count), true);
        let mut local = super::blank_status();
        let target = status_target(status, &mut local);
        let choice = self.choosing(true);
        match choice.and_then(|c| c.forced) {
            Some(j) => self.await_one(index, j),
            None => self.await_all(index),
        }
        let rc = if let Some(j) = choice.and_then(|c| c.forced) {
            // A replay forces index `j` (seed 001 §4): wait for that
            // request alone, as `MPI_Wait` would, and return it.
            // SAFETY: `j` < count (an entry of the snapshot); a valid
            // status.
            let rc = unsafe { self.block_on(requests.add(j), target, self.ids[j]) };
            // SAFETY: non-null (checked by the caller of `snapshot`).
            unsafe { *index_out = j as c_int };
            rc
        } else if !self.any_unacknowledged() && !self.must_poll() {
            self.list_awaited();
            // SAFETY: the caller's arguments and a valid status.
            unsafe { mpi_sys::PMPI_Waitany(count, requests, index_out, target) }
        } else {
            // SAFETY: as above, polled.
            unsafe {
                self.spin(|rt| {
                    let mut flag: c_int = 0;
                    let rc = rt.testany_masked(count, requests, index_out, &mut flag, target);
                    (rc != SUCCESS || flag != 0).then_some(rc)
                })
            }
        };
        self.forget_awaited();
        let mut receive = false;
        let chosen = if rc == SUCCESS {
            // SAFETY: non-null, written by MPI when it succeeded.
            unsafe { *index_out }
        } else {
            undefined()
        };
        if let Ok(i) = usize::try_from(chosen) {
            if let Some(Some(id)) = self.ids.get(i).copied() {
                if choice.is_some() {
                    self.note_others(i, |_| false);
                }
                let handle = self.handles[i];
                self.note_completed(id, index);
                // SAFETY: MPI completed the request into `target`.
                receive = unsafe { self.finish_request(id, handle, target, index) };
                if let Some(c) = choice {
                    self.chose(c, i, index, false);
                }
            }
        }
        finish_received(index, rc, if receive { target } else { null_mut() });
        rc
    }

    /// `MPI_Testany`. Recorded only when it completes a
    /// request (or fails).
    ///
    /// # Safety
    ///
    /// As for `MPI_Testany`.
    pub(super) unsafe fn testany_now(
        &mut self,
        count: c_int,
        requests: *mut MPI_Request,
        index_out: *mut c_int,
        flag: *mut c_int,
        status: *mut MPI_Status,
    ) -> c_int {
        // SAFETY: the caller's contract.
        let snapshot = unsafe { self.snapshot(count, requests) };
        if snapshot.is_none() || index_out.is_null() || flag.is_null() {
            // SAFETY: MPI judges the arguments.
            return unsafe { mpi_sys::PMPI_Testany(count, requests, index_out, flag, status) };
        }
        let mut local = super::blank_status();
        let target = status_target(status, &mut local);
        let choice = self.choosing(false);
        let rc = match choice.and_then(|c| c.forced) {
            // A replay forces index `j` (seed 001 §4): only that request
            // can complete this call.
            // SAFETY: `j` < count; the caller's flag and index, non-null.
            Some(j) => unsafe { self.test_forced(requests, j, index_out, flag, target) },
            // SAFETY: the caller's arguments and a valid status.
            None => unsafe { self.testany_masked(count, requests, index_out, flag, target) },
        };
        // SAFETY: written by MPI when it succeeded.
        let chosen = if rc == SUCCESS && unsafe { *flag } != 0 {
            // SAFETY: as above.
            unsafe { *index_out }
        } else {
            undefined()
        };
        let slot = usize::try_from(chosen)
            .ok()
            .and_then(|i| self.ids.get(i).copied().flatten().map(|id| (i, id)));
        if slot.is_some() || rc != SUCCESS {
            let op = match slot {
                Some((i, id)) => {
                    self.completion_op(OpKind::Testany, self.handles[i], Some(id), count)
                }
                None => self.many_op(OpKind::Testany, count),
            };
            let index = record::append(|| RawOp {
                flags: flags::RETURNED | if rc != SUCCESS { flags::FAILED } else { 0 },
                error: rc,
                ..op
            });
            if let Some((i, id)) = slot {
                self.note_completed(id, index);
                if choice.is_some() {
                    self.note_others(i, |_| false);
                }
                // SAFETY: MPI completed the request into `target`.
                if unsafe { self.finish_request(id, self.handles[i], target, index) } {
                    status_into(index, target);
                }
                if let Some(c) = choice {
                    self.chose(c, i, index, true);
                }
            }
        } else if chosen == undefined() {
            // SAFETY: written by MPI (rc is SUCCESS here).
            if unsafe { *flag } == 0 {
                let forced = choice.and_then(|c| c.forced);
                self.polled_many(OpKind::Testany, OpKind::Waitany, count, forced);
            }
            // SAFETY: MPI is initialised.
            unsafe { self.service(None) };
        }
        rc
    }

    /// `Testsome` with unacknowledged synchronous sends hidden.
    ///
    /// # Safety
    ///
    /// As for `MPI_Testsome`, after [`Rt::snapshot`].
    unsafe fn testsome_masked(
        &mut self,
        count: c_int,
        requests: *mut MPI_Request,
        outcount: *mut c_int,
        indices: *mut c_int,
        statuses: *mut MPI_Status,
    ) -> c_int {
        // SAFETY: the caller's contract.
        unsafe { self.mask(requests) };
        // SAFETY: as above.
        let rc = unsafe { mpi_sys::PMPI_Testsome(count, requests, outcount, indices, statuses) };
        // SAFETY: as above.
        unsafe { self.unmask(requests) };
        // SAFETY: MPI wrote it when it succeeded.
        if rc == SUCCESS && !self.masked.is_empty() && unsafe { *outcount } == undefined() {
            // SAFETY: as above.
            unsafe { *outcount = 0 };
        }
        rc
    }

    /// `MPI_Testsome` that returns at most one request, through
    /// [`Rt::testany_masked`]: see [`any_as_some`].
    ///
    /// # Safety
    ///
    /// As for `MPI_Testsome`, with `statuses` valid for one status.
    unsafe fn testsome_one(
        &mut self,
        count: c_int,
        requests: *mut MPI_Request,
        outcount: *mut c_int,
        indices: *mut c_int,
        statuses: *mut MPI_Status,
    ) -> c_int {
        let (mut index, mut flag) = (undefined(), 0);
        // SAFETY: the caller's contract; valid out-parameters.
        let rc = unsafe { self.testany_masked(count, requests, &mut index, &mut flag, statuses) };
        // SAFETY: the caller's contract.
        unsafe { any_as_some(rc, index, flag, outcount, indices, statuses) }
    }

    /// A `some` form forced to index `j` (seed 001 §4): waits for (`wait`)
    /// or tests that request alone, and returns it alone once it completed
    /// (the choice is the first of the list; see below why nothing joins
    /// it).
    ///
    /// # Safety
    ///
    /// As for `MPI_Waitsome`, after [`Rt::snapshot`]; `j` < count,
    /// `statuses` holds count statuses.
    #[allow(clippy::too_many_arguments)]
    unsafe fn some_forced(
        &mut self,
        requests: *mut MPI_Request,
        j: usize,
        outcount: *mut c_int,
        indices: *mut c_int,
        statuses: *mut MPI_Status,
        wait: bool,
    ) -> c_int {
        let rc = if wait {
            // SAFETY: the caller's contract.
            let rc = unsafe { self.block_on(requests.add(j), statuses, self.ids[j]) };
            // SAFETY: as above.
            unsafe { *outcount = 1 };
            rc
        } else {
            let mut index = undefined();
            // `outcount` serves as the flag: 1 when `j` completed, else 0.
            // SAFETY: the caller's contract; valid out-parameters.
            unsafe { self.test_forced(requests, j, &mut index, outcount, statuses) }
        };
        // SAFETY: the caller's contract (`outcount`, `indices` non-null).
        unsafe {
            if rc != SUCCESS || *outcount == 0 {
                return rc;
            }
            *indices = j as c_int;
        }
        // The forced request alone, though others may have completed too:
        // which ones MPI would join to it depends on timing, and one it
        // joined could not head a later call the replay forces (a
        // `Testsome` loop forced to index 1, then to index 0, failed when
        // MPI returned 0 with 1). Returning fewer than have completed is
        // what MPI does when they complete a moment later; the next call
        // returns them.
        SUCCESS
    }

    /// Before a `some` call's requests are processed: for a choice, the
    /// first index of the list (its value) with the others noted
    /// ([`Rt::note_others`]; the rest of the list could have come first).
    ///
    /// # Safety
    ///
    /// `indices` holds `out` indices MPI wrote.
    unsafe fn note_some(
        &mut self,
        choice: Option<super::choose::Choosing>,
        out: c_int,
        indices: *const c_int,
    ) -> Option<usize> {
        choice?;
        let n = usize::try_from(out).ok().filter(|&n| n > 0)?;
        // SAFETY: the caller's contract.
        let list = unsafe { std::slice::from_raw_parts(indices, n) };
        let first = usize::try_from(list[0]).ok()?;
        self.note_others(first, |i| list.iter().any(|&k| usize::try_from(k) == Ok(i)));
        Some(first)
    }

    /// `MPI_Waitsome`.
    ///
    /// # Safety
    ///
    /// As for `MPI_Waitsome`.
    pub(super) unsafe fn waitsome_now(
        &mut self,
        count: c_int,
        requests: *mut MPI_Request,
        outcount: *mut c_int,
        indices: *mut c_int,
        statuses: *mut MPI_Status,
    ) -> c_int {
        // SAFETY: the caller's contract.
        let snapshot = unsafe { self.snapshot(count, requests) };
        let Some(n) = snapshot.filter(|_| !outcount.is_null() && !indices.is_null()) else {
            // SAFETY: MPI judges the arguments.
            return unsafe { mpi_sys::PMPI_Waitsome(count, requests, outcount, indices, statuses) };
        };
        let index = record::begin(|| self.many_op(OpKind::Waitsome, count), true);
        let sts = self.statuses_for(n, statuses);
        let choice = self.choosing(true);
        match choice.and_then(|c| c.forced) {
            Some(j) => self.await_one(index, j),
            None => self.await_all(index),
        }
        let rc = if let Some(j) = choice.and_then(|c| c.forced) {
            // SAFETY: the caller's arguments and valid statuses; `j` < n.
            unsafe { self.some_forced(requests, j, outcount, indices, sts, true) }
        } else if !self.any_unacknowledged() && !self.must_poll() {
            self.list_awaited();
            // SAFETY: the caller's arguments and valid statuses.
            unsafe {
                if choice.is_some() {
                    let mut one = undefined();
                    let rc = mpi_sys::PMPI_Waitany(count, requests, &mut one, sts);
                    any_as_some(rc, one, 1, outcount, indices, sts)
                } else {
                    mpi_sys::PMPI_Waitsome(count, requests, outcount, indices, sts)
                }
            }
        } else {
            // SAFETY: as above, polled.
            unsafe {
                self.spin(|rt| {
                    let rc = if choice.is_some() {
                        rt.testsome_one(count, requests, outcount, indices, sts)
                    } else {
                        rt.testsome_masked(count, requests, outcount, indices, sts)
                    };
                    (rc != SUCCESS || *outcount != 0).then_some(rc)
                })
            }
        };
        self.forget_awaited();
        if rc == SUCCESS || rc == ERR_IN_STATUS {
            // SAFETY: MPI filled the outputs.
            unsafe {
                let out = *outcount;
                if out != undefined() {
                    let first = self.note_some(choice, out, indices);
                    self.queue_some(rc, out, indices, sts);
                    self.finish_order(index);
                    if let (Some(c), Some(first)) = (choice, first) {
                        self.chose(c, first, index, false);
                    }
                }
            }
        }
        record::finish(index, rc, true, |_| {});
        rc
    }

    /// `MPI_Testsome`. Recorded only when it completes a
    /// request (or fails).
    ///
    /// # Safety
    ///
    /// As for `MPI_Testsome`.
    pub(super) unsafe fn testsome_now(
        &mut self,
        count: c_int,
        requests: *mut MPI_Request,
        outcount: *mut c_int,
        indices: *mut c_int,
        statuses: *mut MPI_Status,
    ) -> c_int {
        // SAFETY: the caller's contract.
        let snapshot = unsafe { self.snapshot(count, requests) };
        let Some(n) = snapshot.filter(|_| !outcount.is_null() && !indices.is_null()) else {
            // SAFETY: MPI judges the arguments.
            return unsafe { mpi_sys::PMPI_Testsome(count, requests, outcount, indices, statuses) };
        };
        let sts = self.statuses_for(n, statuses);
        let choice = self.choosing(false);
        let rc = match choice.and_then(|c| c.forced) {
            // SAFETY: the caller's arguments and valid statuses; `j` < n.
            Some(j) => unsafe { self.some_forced(requests, j, outcount, indices, sts, false) },
            // SAFETY: the caller's arguments and valid statuses.
            None if choice.is_some() => unsafe {
                self.testsome_one(count, requests, outcount, indices, sts)
            },
            // SAFETY: as above.
            None => unsafe { self.testsome_masked(count, requests, outcount, indices, sts) },
        };
        let out = if rc == SUCCESS || rc == ERR_IN_STATUS {
            // SAFETY: written by MPI when it succeeded.
            unsafe { *outcount }
        } else {
            0
        };
        if (out > 0 && out != undefined()) || rc != SUCCESS {
            let op = self.many_op(OpKind::Testsome, count);
            let index = record::append(|| RawOp {
                flags: flags::RETURNED | if rc != SUCCESS { flags::FAILED } else { 0 },
                error: rc,
                ..op
            });
            if out > 0 && out != undefined() {
                // SAFETY: MPI filled the outputs.
                unsafe {
                    let first = self.note_some(choice, out, indices);
                    self.queue_some(rc, out, indices, sts);
                    self.finish_order(index);
                    if let (Some(c), Some(first)) = (choice, first) {
                        self.chose(c, first, index, true);
                    }
                }
            }
        } else {
            if out == 0 {
                let forced = choice.and_then(|c| c.forced);
                self.polled_many(OpKind::Testsome, OpKind::Waitsome, count, forced);
            }
            // SAFETY: MPI is initialised.
            unsafe { self.service(None) };
        }
        rc
    }

    /// `MPI_Request_free`: a request the runtime made becomes an orphan the
    /// runtime completes itself (its header must live until then, and a
    /// synchronous partner may wait for an acknowledgement). Not recorded.
    ///
    /// # Safety
    ///
    /// As for `MPI_Request_free`.
    pub unsafe fn request_free(&mut self, request: *mut MPI_Request) -> c_int {
        if self.det.is_some() {
            // SAFETY: the caller's contract.
            unsafe { self.det_swap(1, request, |_, _| true) };
        }
        if request.is_null() {
            // SAFETY: MPI reports the null pointer.
            return unsafe { mpi_sys::PMPI_Request_free(request) };
        }
        // SAFETY: non-null: the caller's request.
        let handle = unsafe { *request };
        if let Some(p) = self.persistent_of(handle) {
            // SAFETY: the caller's request, holding `p`'s handle.
            return unsafe { self.free_persistent(request, p) };
        }
        let Some(id) = Self::slot_of(handle) else {
            // SAFETY: the caller's contract.
            return unsafe { mpi_sys::PMPI_Request_free(request) };
        };
        if matches!(self.slots.get(id).map(|s| s.kind), Some(Kind::Plain { .. })) {
            REQUESTS.remove(handle.bits());
            self.slots.release(id);
            // SAFETY: the caller's contract.
            return unsafe { mpi_sys::PMPI_Request_free(request) };
        }
        REQUESTS.remove(handle.bits());
        // The program can no longer tell when the operation ends, so its
        // buffer is no longer watched (no false `buffer-reuse` after a
        // completion the program learnt of by other means).
        crate::access::forget(id);
        if let Some(slot) = self.slots.get_mut(id) {
            slot.orphan = true;
        }
        self.slots.watch(id);
        // SAFETY: non-null: the caller's request, now freed for the program.
        unsafe { *request = request_null() };
        SUCCESS
    }

    /// `MPI_Request_get_status`: a receive's status loses the header's
    /// bytes. Not recorded.
    ///
    /// # Safety
    ///
    /// As for `MPI_Request_get_status`.
    pub unsafe fn request_get_status(
        &mut self,
        request: MPI_Request,
        flag: *mut c_int,
        status: *mut MPI_Status,
    ) -> c_int {
        let request = self.inner_of(request).unwrap_or(request);
        let request = self.det_real_of(request);
        let mut local = super::blank_status();
        let target = status_target(status, &mut local);
        // SAFETY: the caller's contract (a status, ours if ignored; an
        // active persistent request's inner request stands for it).
        let rc = unsafe { mpi_sys::PMPI_Request_get_status(request, flag, target) };
        // SAFETY: written by MPI when it succeeded.
        let done = rc == SUCCESS && !flag.is_null() && unsafe { *flag } != 0;
        let slot = Self::slot_of(request);
        if done {
            if let Some(id) = slot {
                // The program may read a packed receive's buffer now.
                // SAFETY: MPI filled `target` for the completed request.
                unsafe { self.unpack_slot(id, target) };
                // The operation is over (MPI defines the buffer now), though
                // the request lives until a `Wait`/`Test`.
                crate::access::forget(id);
            }
        }
        if done && !status.is_null() && status != status_ignore() {
            let receive = slot
                .and_then(|id| self.slots.get(id))
                .is_some_and(|s| matches!(s.kind, Kind::Recv(_)));
            if receive {
                // SAFETY: a status MPI just filled.
                unsafe { piggyback::fix_status(status, self.hbytes, None) };
            }
        }
        rc
    }

    // The completion calls as the program makes them: persistent requests
    // swapped for their inner requests around the call (`persist.rs`).

    /// `MPI_Wait`.
    ///
    /// # Safety
    ///
    /// As for `MPI_Wait`.
    pub unsafe fn wait(&mut self, request: *mut MPI_Request, status: *mut MPI_Status) -> c_int {
        if request.is_null() || self.persistent.is_empty() {
            // SAFETY: the caller's contract.
            return unsafe { self.settled_wait(request, status) };
        }
        // SAFETY: the caller's contract; non-null.
        unsafe { self.with_swapped(request, |rt| rt.settled_wait(request, status)) }
    }

    /// `MPI_Wait` on a request (a persistent one's inner request already
    /// swapped in): in deterministic mode, a deferred receive is resolved
    /// first (`deferred.rs`).
    ///
    /// # Safety
    ///
    /// As for `MPI_Wait`.
    unsafe fn settled_wait(&mut self, request: *mut MPI_Request, status: *mut MPI_Status) -> c_int {
        if self.det.is_some() {
            // SAFETY: the caller's contract.
            unsafe { self.det_swap(1, request, |_, _| true) };
        }
        // SAFETY: the caller's contract.
        unsafe { self.wait_now(request, status) }
    }

    /// `MPI_Test`. Recorded only when it completes the request (or fails).
    ///
    /// # Safety
    ///
    /// As for `MPI_Test`.
    pub unsafe fn test(
        &mut self,
        request: *mut MPI_Request,
        flag: *mut c_int,
        status: *mut MPI_Status,
    ) -> c_int {
        if request.is_null() || self.persistent.is_empty() {
            // SAFETY: the caller's contract.
            return unsafe { self.test_or_det(request, flag, status) };
        }
        // SAFETY: the caller's contract; non-null.
        unsafe { self.with_swapped(request, |rt| rt.test_or_det(request, flag, status)) }
    }

    /// `MPI_Waitall`.
    ///
    /// # Safety
    ///
    /// As for `MPI_Waitall`.
    pub unsafe fn waitall(
        &mut self,
        count: c_int,
        requests: *mut MPI_Request,
        statuses: *mut MPI_Status,
    ) -> c_int {
        // SAFETY: the caller's contract; the same array throughout.
        unsafe {
            self.with_array_swapped(count, requests, Waiting::Each, |rt| {
                if rt.det.is_some() {
                    rt.det_swap(count, requests, |_, _| true);
                }
                rt.waitall_now(count, requests, statuses)
            })
        }
    }

    /// `MPI_Testall`. Recorded only when it completes the requests (or
    /// fails).
    ///
    /// # Safety
    ///
    /// As for `MPI_Testall`.
    pub unsafe fn testall(
        &mut self,
        count: c_int,
        requests: *mut MPI_Request,
        flag: *mut c_int,
        statuses: *mut MPI_Status,
    ) -> c_int {
        // SAFETY: the caller's contract; the same array throughout.
        unsafe {
            self.with_array_swapped(count, requests, Waiting::Each, |rt| {
                if rt.det.is_some() {
                    rt.det_testall(count, requests, flag, statuses)
                } else {
                    rt.testall_now(count, requests, flag, statuses)
                }
            })
        }
    }

    /// `MPI_Waitany`.
    ///
    /// # Safety
    ///
    /// As for `MPI_Waitany`.
    pub unsafe fn waitany(
        &mut self,
        count: c_int,
        requests: *mut MPI_Request,
        index: *mut c_int,
        status: *mut MPI_Status,
    ) -> c_int {
        // SAFETY: the caller's contract; the same array throughout.
        unsafe {
            self.with_array_swapped(count, requests, Waiting::Some, |rt| {
                if rt.det.is_some() {
                    rt.det_waitany(count, requests, index, status)
                } else {
                    rt.waitany_now(count, requests, index, status)
                }
            })
        }
    }

    /// `MPI_Testany`. Recorded only when it completes a request (or fails).
    ///
    /// # Safety
    ///
    /// As for `MPI_Testany`.
    pub unsafe fn testany(
        &mut self,
        count: c_int,
        requests: *mut MPI_Request,
        index: *mut c_int,
        flag: *mut c_int,
        status: *mut MPI_Status,
    ) -> c_int {
        // SAFETY: the caller's contract; the same array throughout.
        unsafe {
            self.with_array_swapped(count, requests, Waiting::Some, |rt| {
                if rt.det.is_some() {
                    rt.det_testany(count, requests, index, flag, status)
                } else {
                    rt.testany_now(count, requests, index, flag, status)
                }
            })
        }
    }

    /// `MPI_Waitsome`.
    ///
    /// # Safety
    ///
    /// As for `MPI_Waitsome`.
    pub unsafe fn waitsome(
        &mut self,
        count: c_int,
        requests: *mut MPI_Request,
        outcount: *mut c_int,
        indices: *mut c_int,
        statuses: *mut MPI_Status,
    ) -> c_int {
        // SAFETY: the caller's contract; the same array throughout.
        unsafe {
            self.with_array_swapped(count, requests, Waiting::Some, |rt| {
                if rt.det.is_some() {
                    rt.det_waitsome(count, requests, outcount, indices, statuses)
                } else {
                    rt.waitsome_now(count, requests, outcount, indices, statuses)
                }
            })
        }
    }

    /// `MPI_Testsome`. Recorded only when it completes a request (or
    /// fails).
    ///
    /// # Safety
    ///
    /// As for `MPI_Testsome`.
    pub unsafe fn testsome(
        &mut self,
        count: c_int,
        requests: *mut MPI_Request,
        outcount: *mut c_int,
        indices: *mut c_int,
        statuses: *mut MPI_Status,
    ) -> c_int {
        // SAFETY: the caller's contract; the same array throughout.
        unsafe {
            self.with_array_swapped(count, requests, Waiting::Some, |rt| {
                if rt.det.is_some() {
                    rt.det_testsome(count, requests, outcount, indices, statuses)
                } else {
                    rt.testsome_now(count, requests, outcount, indices, statuses)
                }
            })
        }
    }
}

/// Gives one `MPI_Waitany`/`MPI_Testany` result (`rc`, `index`, `flag`;
/// the status already in `statuses[0]`) as a `some` form's: no request
/// (`outcount` 0), none active (`MPI_UNDEFINED`), or the one request, a
/// failed one as `MPI_ERR_IN_STATUS` with its code in its status
/// (MPI-4.0 §3.7.5).
///
/// A `some` call that is a choice returns one request at a time during
/// verification, as an MPI whose progress completes one operation per
/// call does: which requests MPI would return together depends on
/// timing, so the search could not force it, and a program that prints
/// or branches on them would have outcomes no run can be made to repeat.
/// One at a time, the call is a `Waitany`/`Testany` for the search (seed
/// 001 §4), and every order in which the requests complete is explored.
///
/// # Safety
///
/// `outcount` and `indices` valid for writing (one index), `statuses`
/// for one status.
unsafe fn any_as_some(
    rc: c_int,
    index: c_int,
    flag: c_int,
    outcount: *mut c_int,
    indices: *mut c_int,
    statuses: *mut MPI_Status,
) -> c_int {
    // SAFETY: the caller's contract.
    unsafe {
        if flag == 0 {
            *outcount = 0;
            return rc;
        }
        if index == undefined() {
            if rc == SUCCESS {
                *outcount = undefined();
            }
            return rc;
        }
        *outcount = 1;
        *indices = index;
        if rc != SUCCESS {
            (*statuses).MPI_ERROR = rc;
            return ERR_IN_STATUS;
        }
    }
    SUCCESS
}
