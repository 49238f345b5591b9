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

use super::Rt;
use crate::consts::{request_null, status_ignore, statuses_ignore, undefined, SUCCESS};
use crate::handle::HandleBits;
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
            self.det_swap(count, requests, |rt, i| {
                rt.declared(*requests.add(i), clock)
            })
        };
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
            Some(h) if Self::active(h) && !self.declared(h, clock) => {
                // SAFETY: MPI is initialised.
                unsafe { self.service(None) };
                // SAFETY: MPI checks a null flag in the call below.
                super::hold(flag)
            }
            Some(h) if Self::active(h) => {
                // SAFETY: the caller's contract.
                let rc = unsafe { self.wait(request, status) };
                if !flag.is_null() {
                    // SAFETY: the caller's flag, non-null.
                    unsafe { *flag = 1 };
                }
                rc
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
        if active.is_empty() || index.is_null() {
            // SAFETY: the caller's contract: MPI answers (no active request).
            return unsafe { self.testany_now(count, requests, index, flag, status) };
        }
        let Some(&first) = declared.first() else {
            // SAFETY: the caller's index, non-null; MPI is initialised.
            unsafe {
                *index = undefined();
                self.service(None);
                return super::hold(flag);
            }
        };
        // SAFETY: `first` is in the array.
        let rc = unsafe { self.wait(requests.add(first), status) };
        // SAFETY: the caller's index and flag.
        unsafe {
            *index = first as c_int;
            if !flag.is_null() {
                *flag = 1;
            }
        }
        rc
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
        if declared.len() < active.len() {
            // SAFETY: MPI is initialised.
            unsafe { self.service(None) };
            return super::hold(flag);
        }
        // SAFETY: the caller's contract.
        let rc = unsafe { self.waitall(count, requests, statuses) };
        if !flag.is_null() {
            // SAFETY: the caller's flag, non-null.
            unsafe { *flag = 1 };
        }
        rc
    }

    /// `MPI_Testsome`: every request whose DTP has come.
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
        if declared.is_empty() {
            // SAFETY: the caller's outcount, non-null; MPI is initialised.
            unsafe {
                *outcount = 0;
                self.service(None);
            }
            return SUCCESS;
        }
        // SAFETY: the caller's contract.
        unsafe { self.det_complete(&declared, requests, outcount, indices, statuses) }
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
        let Some(&first) = active.first().filter(|_| !index.is_null()) else {
            // SAFETY: the caller's contract: MPI answers.
            return unsafe { self.waitany_now(count, requests, index, status) };
        };
        // SAFETY: `first` is in the array; the caller's index.
        unsafe {
            *index = first as c_int;
            self.wait(requests.add(first), status)
        }
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
        if active.is_empty() || outcount.is_null() || indices.is_null() {
            // SAFETY: the caller's contract: MPI answers.
            return unsafe { self.waitsome_now(count, requests, outcount, indices, statuses) };
        }
        // SAFETY: the caller's contract.
        unsafe { self.det_complete(&active[..1], requests, outcount, indices, statuses) }
    }

    /// Waits for each of `chosen` in order, reporting them as `Testsome`
    /// and `Waitsome` do.
    ///
    /// # Safety
    ///
    /// `chosen` index `requests`; `outcount` and `indices` are non-null,
    /// `statuses` holds as many statuses as `requests` or is ignored.
    unsafe fn det_complete(
        &mut self,
        chosen: &[usize],
        requests: *mut MPI_Request,
        outcount: *mut c_int,
        indices: *mut c_int,
        statuses: *mut MPI_Status,
    ) -> c_int {
        let ignore = statuses == statuses_ignore() || statuses.is_null();
        let mut rc = SUCCESS;
        for (k, &i) in chosen.iter().enumerate() {
            let status = if ignore {
                status_ignore()
            } else {
                // SAFETY: the caller's contract.
                unsafe { statuses.add(k) }
            };
            // SAFETY: `i` is in the array; the caller's contract.
            let done = unsafe { self.wait(requests.add(i), status) };
            if done != SUCCESS {
                rc = done;
            }
            // SAFETY: as above.
            unsafe { *indices.add(k) = i as c_int };
        }
        // SAFETY: non-null (the caller's contract).
        unsafe { *outcount = chosen.len() as c_int };
        rc
    }
}
