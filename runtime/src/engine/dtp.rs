//! Deterministic waiting (seed 002 §3.3, Fig. 2) for `mbhybrid run`: when
//! the `MPI_Test` family sees a request complete, and which request the
//! `MPI_Waitany` family returns.
//!
//! Every nonblocking call gets a *deterministic transmission point* (DTP):
//! the logical time K = 10 ticks after it ([`Rt::det_due`]). A test before
//! it reports the request incomplete, however early the message came
//! (Fig. 2 lines 7-9, "postpone declaration"); a test at or after it waits
//! for the request and reports it complete (lines 3-5, 10-11). Following
//! §4.2.2's mitigation, the wait happens only in testing functions, never
//! at other program points. Every test ticks the clock, which is
//! deterministic now that what each test reports is.
//!
//! `MPI_Waitany` and `MPI_Waitsome` return the first active request of the
//! array (`Waitsome` that one alone): any of the requests MPI could report
//! is correct, and this one does not depend on timing.
//!
//! Nonblocking probes (`MPI_Iprobe`, `MPI_Improbe`) find a message when the
//! prober's clock has reached its stamp ([`crate::logical::Peek`]).

use super::deterministic::Quiet;
use super::Rt;
use crate::consts::{request_null, undefined, SUCCESS};
use crate::handle::HandleBits;
use crate::slots::Kind;
use mpi_sys::{MPI_Request, MPI_Status};
use std::os::raw::c_int;

/// Logical time from a nonblocking call to its DTP (the seed's K).
pub(super) const K: u64 = 10;

impl Rt {
    /// Whether `handle` is an active request (not `MPI_REQUEST_NULL`).
    fn active(handle: MPI_Request) -> bool {
        handle.bits() != request_null().bits()
    }

    /// Whether the DTP of `handle` has come: requests the runtime did not
    /// make have theirs at once.
    fn declared(&self, handle: MPI_Request, clock: u64) -> bool {
        Self::slot_of(handle)
            .and_then(|id| self.slots.get(id))
            .is_none_or(|slot| slot.due <= clock)
    }

    /// Swaps the placeholders of deferred receives among
    /// `requests[..count]` for their real requests, resolving those whose
    /// DTP has come (`deferred.rs`).
    ///
    /// # Safety
    ///
    /// `requests` holds `count` requests (or is null).
    unsafe fn det_swap_declared(&mut self, count: c_int, requests: *mut MPI_Request, clock: u64) {
        // SAFETY: the caller's contract.
        unsafe {
            self.det_swap_as(
                count,
                requests,
                |rt, i| rt.declared(*requests.add(i), clock),
                false,
            )
        };
    }

    /// At the DTP of `requests[i]` for each `i` of `due` (of `count`):
    /// polls `test` (a `Test` form of `complete.rs`, which records only
    /// when it completes something) until it reports a completion (seed
    /// 002 Fig. 2 lines 3-5), resolving deferred receives among them as
    /// soon as logical time can. `None` when one of them cannot complete
    /// before this rank acts: their DTPs move to the next (§4.2.3).
    ///
    /// # Safety
    ///
    /// `requests` holds `count` requests; `test` makes valid MPI calls;
    /// `done` reads what it wrote.
    unsafe fn det_at_due(
        &mut self,
        (count, requests): (c_int, *mut MPI_Request),
        due: &[usize],
        mut test: impl FnMut(&mut Self) -> c_int,
        done: impl Fn() -> bool,
    ) -> Option<c_int> {
        let outer = self.det_blocking(true);
        let result = loop {
            // SAFETY: the caller's contract.
            unsafe { self.det_swap_as(count, requests, |_, i| due.contains(&i), false) };
            let rc = test(self);
            if rc != SUCCESS || done() {
                break Some(rc);
            }
            // SAFETY: the caller's contract.
            let handles: Vec<MPI_Request> =
                due.iter().map(|&i| unsafe { *requests.add(i) }).collect();
            let quiet: Vec<Quiet> = handles.iter().map(|&h| self.det_stuck(h)).collect();
            let postpone = if quiet.contains(&Quiet::Yes) {
                true
            } else if quiet.contains(&Quiet::Stalled) {
                self.det_relaxed();
                true
            } else {
                false
            };
            if postpone {
                for h in handles {
                    self.det_postpone(h);
                }
                break None;
            }
            // SAFETY: MPI is initialised.
            unsafe { self.service(None) };
            super::pause();
        };
        self.det_blocking(outer);
        result
    }

    /// Whether request `handle` can complete before this rank acts: a
    /// receive (or a deferred wildcard one) nothing can arrive for is
    /// [`Quiet::Yes`] ([`Rt::det_quiet`]).
    fn det_stuck(&mut self, handle: MPI_Request) -> Quiet {
        if let Some((comm, tag)) = self.det_pending(handle) {
            return self.det_quiet(comm, None, tag);
        }
        let Some(slot) = Self::slot_of(handle)
            .and_then(|id| self.slots.get(id))
            .copied()
        else {
            return Quiet::Unknown;
        };
        let Kind::Recv(receive) = slot.kind else {
            return Quiet::Unknown;
        };
        match self
            .comms
            .comm_rank(receive.comm, slot.peer)
            .filter(|_| slot.peer >= 0)
        {
            Some(rank) => self.det_quiet(receive.comm, Some(rank), crate::consts::any_tag()),
            None => Quiet::Unknown,
        }
    }

    /// Moves the DTP of `handle` to K ticks from now.
    fn det_postpone(&mut self, handle: MPI_Request) {
        let due = self.det_due();
        if let Some(slot) = Self::slot_of(handle).and_then(|id| self.slots.get_mut(id)) {
            slot.due = due;
        }
    }

    /// `MPI_Test`.
    ///
    /// # Safety
    ///
    /// As for `MPI_Test`; deterministic mode is on.
    pub(super) unsafe fn det_test(
        &mut self,
        request: *mut MPI_Request,
        flag: *mut c_int,
        status: *mut MPI_Status,
    ) -> c_int {
        let clock = self.det_tick();
        // SAFETY: the caller's contract.
        unsafe { self.det_swap_declared(1, request, clock) };
        // SAFETY: the caller's contract (null is judged by MPI below).
        let handle = (!request.is_null()).then(|| unsafe { *request });
        match handle {
            Some(h) if Self::active(h) && !self.declared(h, clock) && !flag.is_null() => {
                // SAFETY: MPI is initialised.
                unsafe { self.service(None) };
                super::hold(flag)
            }
            Some(h) if Self::active(h) && !flag.is_null() => {
                // SAFETY: the caller's contract; `flag` non-null.
                let done = unsafe {
                    self.det_at_due(
                        (1, request),
                        &[0],
                        |rt| rt.test_now(request, flag, status),
                        || *flag != 0,
                    )
                };
                done.unwrap_or_else(|| super::hold(flag))
            }
            // SAFETY: the caller's contract: MPI judges it.
            _ => unsafe { self.test_now(request, flag, status) },
        }
    }

    /// The indices of the active requests of `requests[..count]`, and of
    /// those whose DTP has come.
    ///
    /// # Safety
    ///
    /// `requests` holds `count` requests.
    unsafe fn det_split(
        &self,
        count: c_int,
        requests: *const MPI_Request,
        clock: u64,
    ) -> (Vec<usize>, Vec<usize>) {
        let n = if requests.is_null() {
            0
        } else {
            usize::try_from(count).unwrap_or(0)
        };
        let mut active = Vec::new();
        let mut declared = Vec::new();
        for i in 0..n {
            // SAFETY: the caller's contract.
            let handle = unsafe { *requests.add(i) };
            if Self::active(handle) {
                active.push(i);
                if self.declared(handle, clock) {
                    declared.push(i);
                }
            }
        }
        (active, declared)
    }

    /// The next choice among requests takes index `j` (`choose.rs`).
    fn det_force_index(&mut self, j: Option<usize>) {
        if let Some(det) = self.det.as_mut() {
            det.forced_index = j;
        }
    }

    /// `MPI_Testany`: the first request whose DTP has come.
    ///
    /// # Safety
    ///
    /// As for `MPI_Testany`; deterministic mode is on.
    pub(super) unsafe fn det_testany(
        &mut self,
        count: c_int,
        requests: *mut MPI_Request,
        index: *mut c_int,
        flag: *mut c_int,
        status: *mut MPI_Status,
    ) -> c_int {
        let clock = self.det_tick();
        // SAFETY: the caller's contract.
        unsafe { self.det_swap_declared(count, requests, clock) };
        // SAFETY: the caller's contract.
        let (active, declared) = unsafe { self.det_split(count, requests, clock) };
        if active.is_empty() || index.is_null() || flag.is_null() {
            // SAFETY: the caller's contract: MPI answers (no active request).
            return unsafe { self.testany_now(count, requests, index, flag, status) };
        }
        let Some(&first) = declared.first() else {
            // SAFETY: the caller's index, non-null; MPI is initialised.
            unsafe {
                *index = undefined();
                self.service(None);
            }
            return super::hold(flag);
        };
        // SAFETY: the caller's contract; `flag` non-null.
        let done = unsafe {
            self.det_at_due(
                (count, requests),
                &[first],
                |rt| {
                    rt.det_force_index(Some(first));
                    rt.testany_now(count, requests, index, flag, status)
                },
                || *flag != 0,
            )
        };
        self.det_force_index(None);
        done.unwrap_or_else(|| {
            // SAFETY: the caller's index, non-null.
            unsafe { *index = undefined() };
            super::hold(flag)
        })
    }

    /// `MPI_Testall`: complete when every DTP has come.
    ///
    /// # Safety
    ///
    /// As for `MPI_Testall`; deterministic mode is on.
    pub(super) unsafe fn det_testall(
        &mut self,
        count: c_int,
        requests: *mut MPI_Request,
        flag: *mut c_int,
        statuses: *mut MPI_Status,
    ) -> c_int {
        let clock = self.det_tick();
        // SAFETY: the caller's contract.
        unsafe { self.det_swap_declared(count, requests, clock) };
        // SAFETY: the caller's contract.
        let (active, declared) = unsafe { self.det_split(count, requests, clock) };
        if flag.is_null() {
            // SAFETY: MPI judges the arguments.
            return unsafe { self.testall_now(count, requests, flag, statuses) };
        }
        if declared.len() < active.len() {
            // SAFETY: MPI is initialised.
            unsafe { self.service(None) };
            return super::hold(flag);
        }
        // SAFETY: the caller's contract; `flag` non-null.
        let done = unsafe {
            self.det_at_due(
                (count, requests),
                &declared,
                |rt| rt.testall_now(count, requests, flag, statuses),
                || *flag != 0,
            )
        };
        done.unwrap_or_else(|| super::hold(flag))
    }

    /// `MPI_Testsome`: the first request whose DTP has come, alone.
    ///
    /// # Safety
    ///
    /// As for `MPI_Testsome`; deterministic mode is on.
    pub(super) unsafe fn det_testsome(
        &mut self,
        count: c_int,
        requests: *mut MPI_Request,
        outcount: *mut c_int,
        indices: *mut c_int,
        statuses: *mut MPI_Status,
    ) -> c_int {
        let clock = self.det_tick();
        // SAFETY: the caller's contract.
        unsafe { self.det_swap_declared(count, requests, clock) };
        // SAFETY: the caller's contract.
        let (active, declared) = unsafe { self.det_split(count, requests, clock) };
        if active.is_empty() || outcount.is_null() || indices.is_null() {
            // SAFETY: the caller's contract: MPI answers.
            return unsafe { self.testsome_now(count, requests, outcount, indices, statuses) };
        }
        let Some(&first) = declared.first() else {
            // SAFETY: the caller's outcount, non-null; MPI is initialised.
            unsafe {
                *outcount = 0;
                self.service(None);
            }
            return SUCCESS;
        };
        // SAFETY: the caller's contract; `outcount` non-null.
        let done = unsafe {
            self.det_at_due(
                (count, requests),
                &[first],
                |rt| {
                    rt.det_force_index(Some(first));
                    rt.testsome_now(count, requests, outcount, indices, statuses)
                },
                || *outcount > 0 && *outcount != undefined(),
            )
        };
        self.det_force_index(None);
        done.unwrap_or_else(|| {
            // SAFETY: the caller's outcount, non-null.
            unsafe { *outcount = 0 };
            SUCCESS
        })
    }

    /// `MPI_Waitany`: the first active request.
    ///
    /// # Safety
    ///
    /// As for `MPI_Waitany`; deterministic mode is on.
    pub(super) unsafe fn det_waitany(
        &mut self,
        count: c_int,
        requests: *mut MPI_Request,
        index: *mut c_int,
        status: *mut MPI_Status,
    ) -> c_int {
        // SAFETY: the caller's contract.
        unsafe { self.det_swap(count, requests, |_, _| true) };
        // SAFETY: the caller's contract.
        let (active, _) = unsafe { self.det_split(count, requests, 0) };
        self.det_force_index(active.first().copied());
        // SAFETY: the caller's contract.
        let rc = unsafe { self.waitany_now(count, requests, index, status) };
        self.det_force_index(None);
        rc
    }

    /// `MPI_Waitsome`: the first active request alone.
    ///
    /// # Safety
    ///
    /// As for `MPI_Waitsome`; deterministic mode is on.
    pub(super) unsafe fn det_waitsome(
        &mut self,
        count: c_int,
        requests: *mut MPI_Request,
        outcount: *mut c_int,
        indices: *mut c_int,
        statuses: *mut MPI_Status,
    ) -> c_int {
        // SAFETY: the caller's contract.
        unsafe { self.det_swap(count, requests, |_, _| true) };
        // SAFETY: the caller's contract.
        let (active, _) = unsafe { self.det_split(count, requests, 0) };
        self.det_force_index(active.first().copied());
        // SAFETY: the caller's contract.
        let rc = unsafe { self.waitsome_now(count, requests, outcount, indices, statuses) };
        self.det_force_index(None);
        rc
    }
}
