//! Persistent requests (`MPI_Send_init` ..., `MPI_Recv_init`, `MPI_Start`,
//! `MPI_Startall`) and `MPI_Cancel`.
//!
//! The program's handle is a real persistent request MPI made with the
//! program's arguments (so MPI judges them at the init), which the runtime
//! never starts: to MPI it stays inactive. Each `MPI_Start` makes an inner
//! nonblocking request exactly as the `MPI_Isend`/`MPI_Irecv` it stands for
//! would at the start's site (header, clocks, wildcard event, forced source
//! in a guided run), recorded as `StartSend` ... / `StartRecv`. Every
//! completion call swaps the inner request in for the program's handle in
//! the program's array for the length of the call and back after it: a
//! completed inner request leaves the persistent request inactive, with
//! its handle still valid. A persistent request waited on while inactive
//! returns at once (MPI's own answer, an empty status) and is reported as
//! `MissingStart` (once per inactive spell).

use super::{Rt, SendMode};
use crate::checks;
use crate::consts::{proc_null, request_null, SUCCESS};
use crate::handle::HandleBits;
use crate::record;
use crate::slots::Kind;
use mbh_trace::check::Check;
use mbh_trace::rank_trace::RawOp;
use mbh_trace::OpKind;
use mpi_sys::{MPI_Comm, MPI_Datatype, MPI_Request, MPI_Status};
use std::os::raw::{c_int, c_void};

/// `MPI_ERR_REQUEST`: starting a request that is already active.
const ERR_REQUEST: c_int = mpi_sys::MPI_ERR_REQUEST as c_int;

/// What a persistent request does when started.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PersistentOp {
    /// `MPI_Send_init` (`Standard`), `Ssend_init`, `Bsend_init`,
    /// `Rsend_init`.
    Send(SendMode),
    /// `MPI_Recv_init`.
    Recv,
}

/// A persistent request the program holds.
#[derive(Debug, Clone, Copy)]
pub struct Persistent {
    op: PersistentOp,
    buf: *mut c_void,
    count: c_int,
    datatype: MPI_Datatype,
    peer: c_int,
    tag: c_int,
    comm: MPI_Comm,
    /// The init's record.
    init: Option<u64>,
    /// The inner request of the current start; `None` while inactive.
    inner: Option<MPI_Request>,
    /// `MissingStart` was reported for the current inactive spell.
    reported: bool,
    /// Peer `MPI_PROC_NULL`: no message, so MPI's own request is started
    /// and completed (its empty status is MPI's); not swapped, not
    /// checked for `MissingStart`.
    native: bool,
}

/// Which completion call is swapping requests in (for `MissingStart`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Waiting {
    /// `Wait`, `Test`, `Waitall`, `Testall`: every request must be active.
    Each,
    /// The `any`/`some` forms: inactive requests are skipped by design, so
    /// only a call given no active request at all is reported.
    Some,
}

impl Waiting {
    /// Whether an inactive persistent request given to the call is
    /// reported, when `active` of the requests given are active.
    fn reports_inactive(self, active: usize) -> bool {
        match self {
            Waiting::Each => true,
            Waiting::Some => active == 0,
        }
    }
}

/// The record kind of a start of `op`.
fn start_kind(op: PersistentOp) -> OpKind {
    match op {
        PersistentOp::Send(SendMode::Standard) => OpKind::StartSend,
        PersistentOp::Send(SendMode::Buffered) => OpKind::StartBsend,
        PersistentOp::Send(SendMode::Sync) => OpKind::StartSsend,
        PersistentOp::Send(SendMode::Ready) => OpKind::StartRsend,
        PersistentOp::Recv => OpKind::StartRecv,
    }
}

/// The `PMPI_*_init` of `op`.
///
/// # Safety
///
/// As for `MPI_Send_init`.
#[allow(clippy::too_many_arguments)]
unsafe fn pmpi_init(
    op: PersistentOp,
    buf: *mut c_void,
    count: c_int,
    datatype: MPI_Datatype,
    peer: c_int,
    tag: c_int,
    comm: MPI_Comm,
    request: *mut MPI_Request,
) -> c_int {
    let (b, n, d, p, t, c, r) = (buf, count, datatype, peer, tag, comm, request);
    // SAFETY: the caller's contract.
    unsafe {
        match op {
            PersistentOp::Send(SendMode::Standard) => mpi_sys::PMPI_Send_init(b, n, d, p, t, c, r),
            PersistentOp::Send(SendMode::Sync) => mpi_sys::PMPI_Ssend_init(b, n, d, p, t, c, r),
            PersistentOp::Send(SendMode::Buffered) => mpi_sys::PMPI_Bsend_init(b, n, d, p, t, c, r),
            PersistentOp::Send(SendMode::Ready) => mpi_sys::PMPI_Rsend_init(b, n, d, p, t, c, r),
            PersistentOp::Recv => mpi_sys::PMPI_Recv_init(b, n, d, p, t, c, r),
        }
    }
}

impl Rt {
    /// `MPI_Send_init` ... and `MPI_Recv_init` (`kind` the init's).
    ///
    /// # Safety
    ///
    /// As for `MPI_Send_init`.
    #[allow(clippy::too_many_arguments)]
    pub unsafe fn persistent_init(
        &mut self,
        op: PersistentOp,
        kind: OpKind,
        buf: *mut c_void,
        count: c_int,
        datatype: MPI_Datatype,
        peer: c_int,
        tag: c_int,
        comm: MPI_Comm,
        request: *mut MPI_Request,
    ) -> c_int {
        let index = record::begin(
            || {
                let mut op = record::p2p(kind, peer, tag, comm, count, datatype);
                if kind == OpKind::RecvInit {
                    op.flags = record::peer_flags(peer, tag, true);
                }
                op
            },
            false,
        );
        // SAFETY: the caller's arguments, passed on unchanged.
        let rc = unsafe { pmpi_init(op, buf, count, datatype, peer, tag, comm, request) };
        let mut bits = 0;
        if rc == SUCCESS && !request.is_null() {
            // SAFETY: non-null, just written by MPI.
            let handle = unsafe { *request };
            bits = handle.bits();
            self.persistent.insert(
                bits,
                Persistent {
                    op,
                    buf,
                    count,
                    datatype,
                    peer,
                    tag,
                    comm,
                    init: index,
                    inner: None,
                    reported: false,
                    native: peer == proc_null(),
                },
            );
        }
        record::finish(index, rc, false, |op| op.request = bits);
        rc
    }

    /// The persistent request of `handle`, if the runtime made it.
    pub(super) fn persistent_of(&self, handle: MPI_Request) -> Option<Persistent> {
        if self.persistent.is_empty() {
            return None;
        }
        self.persistent.get(&handle.bits()).copied()
    }

    /// `MPI_Start`.
    ///
    /// # Safety
    ///
    /// As for `MPI_Start`.
    pub unsafe fn start_request(&mut self, request: *mut MPI_Request) -> c_int {
        if request.is_null() {
            // SAFETY: MPI reports the null pointer.
            return unsafe { mpi_sys::PMPI_Start(request) };
        }
        let site = record::site();
        // SAFETY: non-null: the caller's request.
        unsafe { self.start_one(*request, site) }
    }

    /// `MPI_Startall`: each request started in order at the call's site.
    ///
    /// # Safety
    ///
    /// As for `MPI_Startall`.
    pub unsafe fn startall(&mut self, count: c_int, requests: *mut MPI_Request) -> c_int {
        let n = usize::try_from(count).unwrap_or(0);
        if count < 0 || (n > 0 && requests.is_null()) {
            // SAFETY: MPI judges the arguments.
            return unsafe { mpi_sys::PMPI_Startall(count, requests) };
        }
        let site = record::site();
        for i in 0..n {
            // SAFETY: `requests` holds `count` requests.
            let rc = unsafe { self.start_one(*requests.add(i), site) };
            if rc != SUCCESS {
                return rc;
            }
        }
        SUCCESS
    }

    /// Starts persistent request `handle`: the nonblocking call it stands
    /// for, recorded at `site`.
    ///
    /// # Safety
    ///
    /// The program's buffer given at the init is valid (MPI's contract).
    unsafe fn start_one(&mut self, handle: MPI_Request, site: u32) -> c_int {
        let Some(p) = self.persistent_of(handle) else {
            let mut handle = handle;
            // SAFETY: a request the runtime did not make: MPI judges it.
            return unsafe { mpi_sys::PMPI_Start(&mut handle) };
        };
        let kind = start_kind(p.op);
        if p.native {
            record::append(|| {
                let mut op = record::p2p(kind, p.peer, p.tag, p.comm, p.count, p.datatype);
                op.site = site;
                op.flags |= mbh_trace::op::flags::RETURNED;
                op.request = handle.bits();
                op
            });
            let mut handle = handle;
            // SAFETY: the program's persistent request, which makes no
            // message.
            return unsafe { mpi_sys::PMPI_Start(&mut handle) };
        }
        if p.inner.is_some() {
            // Erroneous in MPI (starting an active request).
            return ERR_REQUEST;
        }
        let mut inner = request_null();
        record::rearm_site(site);
        // SAFETY: the init's arguments, which the program keeps valid while
        // the request exists.
        let rc = unsafe {
            match p.op {
                PersistentOp::Send(mode) => self.isend(
                    mode, kind, p.buf, p.count, p.datatype, p.peer, p.tag, p.comm, &mut inner,
                ),
                PersistentOp::Recv => self.irecv_as(
                    kind, p.buf, p.count, p.datatype, p.peer, p.tag, p.comm, &mut inner,
                ),
            }
        };
        if rc == SUCCESS {
            if let Some(entry) = self.persistent.get_mut(&handle.bits()) {
                entry.inner = Some(inner);
                entry.reported = false;
            }
        }
        rc
    }

    /// Reports `MissingStart` for inactive persistent request `p` (handle
    /// `bits`) waited on at the current call.
    fn missing_start(&mut self, bits: u64, p: Persistent) {
        if p.reported {
            return;
        }
        if let Some(entry) = self.persistent.get_mut(&bits) {
            entry.reported = true;
        }
        checks::report(
            Check::MissingStart {
                init_record: p.init.unwrap_or(u64::MAX),
            },
            record::peek_site(),
            u64::MAX,
        );
    }

    /// Before a completion call on `count` requests at `requests`: puts the
    /// inner request of each active persistent request in its place
    /// (remembered in `swapped`) and reports inactive ones (`waiting`).
    ///
    /// # Safety
    ///
    /// `requests` holds `count` requests when non-null.
    pub(super) unsafe fn swap_in(
        &mut self,
        count: c_int,
        requests: *mut MPI_Request,
        waiting: Waiting,
    ) {
        self.swapped.clear();
        let n = usize::try_from(count).unwrap_or(0);
        if self.persistent.is_empty() || requests.is_null() {
            return;
        }
        let null = request_null().bits();
        let mut active = 0;
        let mut inactive: Option<(u64, Persistent)> = None;
        for i in 0..n {
            // SAFETY: `i` < count.
            let handle = unsafe { *requests.add(i) };
            match self.persistent_of(handle).filter(|p| !p.native) {
                Some(p) => match p.inner {
                    Some(inner) => {
                        active += 1;
                        // SAFETY: as above; restored by `swap_out`.
                        unsafe { *requests.add(i) = inner };
                        self.swapped.push((i, handle));
                    }
                    None if waiting == Waiting::Each => self.missing_start(handle.bits(), p),
                    None => inactive = inactive.or(Some((handle.bits(), p))),
                },
                None if handle.bits() != null => active += 1,
                None => {}
            }
        }
        if let Some((bits, p)) = inactive.filter(|_| waiting.reports_inactive(active)) {
            self.missing_start(bits, p);
        }
    }

    /// After the completion call: an inner request MPI completed (and set
    /// to `MPI_REQUEST_NULL`) leaves its persistent request inactive; every
    /// program handle goes back in its place.
    ///
    /// # Safety
    ///
    /// As for [`Rt::swap_in`], with the same array.
    pub(super) unsafe fn swap_out(&mut self, requests: *mut MPI_Request) {
        let null = request_null().bits();
        for k in 0..self.swapped.len() {
            let (i, handle) = self.swapped[k];
            // SAFETY: `i` < count (from `swap_in`).
            let now = unsafe { *requests.add(i) };
            if let Some(entry) = self.persistent.get_mut(&handle.bits()) {
                entry.inner = (now.bits() != null).then_some(now);
            }
            // SAFETY: as above.
            unsafe { *requests.add(i) = handle };
        }
        self.swapped.clear();
    }

    /// `MPI_Wait`/`MPI_Test` on one request: a persistent one is swapped
    /// like an array of one. Returns the call's code.
    ///
    /// # Safety
    ///
    /// `request` is non-null, the caller's.
    pub(super) unsafe fn with_swapped(
        &mut self,
        request: *mut MPI_Request,
        call: impl FnOnce(&mut Self) -> c_int,
    ) -> c_int {
        // SAFETY: the caller's contract.
        unsafe { self.swap_in(1, request, Waiting::Each) };
        if self.swapped.is_empty() {
            return call(self);
        }
        let swapped = self.swapped[0];
        self.swapped.clear();
        let rc = call(self);
        self.swapped.push(swapped);
        // SAFETY: as above.
        unsafe { self.swap_out(request) };
        rc
    }

    /// A completion call on the `count` requests at `requests` (`Waitall`,
    /// `Testany`, ...): runs `call` with the persistent ones swapped for
    /// their inner requests ([`Rt::swap_in`], inactive ones reported as
    /// `waiting` says), then puts every program handle back.
    ///
    /// # Safety
    ///
    /// `requests` holds `count` requests when non-null, the same array
    /// `call` uses.
    pub(super) unsafe fn with_array_swapped(
        &mut self,
        count: c_int,
        requests: *mut MPI_Request,
        waiting: Waiting,
        call: impl FnOnce(&mut Self) -> c_int,
    ) -> c_int {
        // SAFETY: the caller's contract.
        unsafe { self.swap_in(count, requests, waiting) };
        let rc = call(self);
        // SAFETY: the same array.
        unsafe { self.swap_out(requests) };
        rc
    }

    /// `MPI_Request_free` of persistent request `p`: an active inner
    /// request is left to the runtime to complete (as any freed request),
    /// then MPI frees the program's handle.
    ///
    /// # Safety
    ///
    /// `request` is non-null, the caller's, holding `p`'s handle.
    pub(super) unsafe fn free_persistent(
        &mut self,
        request: *mut MPI_Request,
        p: Persistent,
    ) -> c_int {
        // SAFETY: the caller's contract.
        let handle = unsafe { *request };
        record::append(|| RawOp {
            kind: OpKind::RequestFree as u16,
            flags: mbh_trace::op::flags::RETURNED,
            site: record::site(),
            request: handle.bits(),
            aux: p.init.map_or(0, |i| i.wrapping_add(1)),
            ..RawOp::default()
        });
        if let Some(mut inner) = p.inner {
            // SAFETY: the runtime's inner request.
            unsafe { self.request_free(&mut inner) };
        }
        self.persistent.remove(&handle.bits());
        // SAFETY: the caller's contract.
        unsafe { mpi_sys::PMPI_Request_free(request) }
    }

    /// Before `MPI_Cancel` in deterministic mode: a resolved deferred
    /// receive is cancelled as the real one (swapped in for the program's
    /// handle, or a persistent request's inner one); a pending one as its
    /// placeholder, never posted.
    ///
    /// # Safety
    ///
    /// `request` is non-null, the caller's.
    unsafe fn det_settle_cancel(&mut self, request: *mut MPI_Request) {
        // SAFETY: the caller's contract.
        let handle = unsafe { *request };
        match self.persistent_of(handle) {
            Some(Persistent {
                inner: Some(inner), ..
            }) => {
                let mut inner = inner;
                // SAFETY: a local request.
                unsafe { self.det_swap_as(1, &mut inner, |_, _| false, false) };
                self.det_drop_deferred(inner);
                if let Some(p) = self.persistent.get_mut(&handle.bits()) {
                    p.inner = Some(inner);
                }
            }
            _ => {
                // SAFETY: the caller's contract.
                unsafe { self.det_swap_as(1, request, |_, _| false, false) };
                // SAFETY: as above.
                self.det_drop_deferred(unsafe { *request });
            }
        }
    }

    /// The inner request standing for `handle` while it is an active
    /// persistent request (`Request_get_status`, `Cancel`).
    pub(super) fn inner_of(&self, handle: MPI_Request) -> Option<MPI_Request> {
        self.persistent_of(handle).and_then(|p| p.inner)
    }

    /// Whether the runtime's slot `id` is the inner request of an active
    /// persistent request (leaked with it, reported once at its init).
    pub(super) fn is_inner(&self, request: MPI_Request) -> bool {
        self.persistent
            .values()
            .any(|p| p.inner.is_some_and(|r| r.bits() == request.bits()))
    }

    /// At `MPI_Finalize`: persistent requests never freed (`RequestLeak` at
    /// the init).
    pub(super) fn report_persistent_leaks(&self) {
        for (&bits, p) in &self.persistent {
            let at = p.init.unwrap_or(u64::MAX);
            checks::report(
                Check::RequestLeak { request: bits },
                checks::site_of(at),
                at,
            );
        }
    }

    /// `MPI_Cancel`: of an active persistent request, cancels its inner
    /// request. Recorded (`Cancel`). A cancelled receive completes without
    /// a message: no match, and its wildcard event is dropped
    /// ([`Rt::cancelled`]).
    ///
    /// # Safety
    ///
    /// As for `MPI_Cancel`.
    pub unsafe fn cancel_request(&mut self, request: *mut MPI_Request) -> c_int {
        if request.is_null() {
            // SAFETY: MPI reports the null pointer.
            return unsafe { mpi_sys::PMPI_Cancel(request) };
        }
        if self.det.is_some() {
            // SAFETY: the caller's request, non-null.
            unsafe { self.det_settle_cancel(request) };
        }
        // SAFETY: non-null: the caller's request.
        let handle = unsafe { *request };
        let mut target = self.inner_of(handle).unwrap_or(handle);
        let origin = Self::slot_of(target)
            .and_then(|id| self.slots.get(id))
            .and_then(|s| s.record);
        record::append(|| RawOp {
            kind: OpKind::Cancel as u16,
            flags: mbh_trace::op::flags::RETURNED,
            site: record::site(),
            request: target.bits(),
            aux: origin.map_or(0, |i| i.wrapping_add(1)),
            ..RawOp::default()
        });
        self.cancels = true;
        // SAFETY: the caller's request, or the runtime's inner one.
        unsafe { mpi_sys::PMPI_Cancel(&mut target) }
    }

    /// After MPI completed slot `id`'s request with `status`: whether it
    /// was cancelled. A cancelled receive's wildcard event is forgotten (it
    /// matched nothing, so it is no decision) and its slot freed.
    ///
    /// # Safety
    ///
    /// `status` is the request's status as MPI filled it.
    pub(super) unsafe fn cancelled(&mut self, id: u32, status: *const MPI_Status) -> bool {
        // SAFETY: the caller's contract.
        if !self.cancels || !unsafe { was_cancelled(status) } {
            return false;
        }
        if let Some(origin) = self.slots.get(id).and_then(|s| s.record) {
            record::update(origin, |op| op.flags |= mbh_trace::op::flags::CANCELLED);
        }
        match self.slots.get_mut(id).map(|s| &mut s.kind) {
            Some(Kind::Recv(r)) => {
                if let Some(event) = r.event {
                    self.llcp.drop_pending(event);
                }
            }
            Some(Kind::Send(send)) if send.sync && !send.ack_arrived => {
                // No receive will acknowledge it.
                Self::cancel(&mut send.ack);
                send.ack_arrived = true;
            }
            _ => {}
        }
        self.slots.release(id);
        true
    }
}

/// Whether `status` (as MPI filled it) says its request was cancelled.
///
/// # Safety
///
/// `status` is null, `MPI_STATUS_IGNORE` or a status MPI filled.
pub(super) unsafe fn was_cancelled(status: *const MPI_Status) -> bool {
    if status.is_null() || status == crate::consts::status_ignore().cast_const() {
        return false;
    }
    let mut flag: c_int = 0;
    // SAFETY: a status MPI filled.
    let rc = unsafe { mpi_sys::PMPI_Test_cancelled(status, &mut flag) };
    rc == SUCCESS && flag != 0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_start_is_recorded_as_the_nonblocking_call_it_stands_for() {
        let kinds = [
            (PersistentOp::Send(SendMode::Standard), OpKind::StartSend),
            (PersistentOp::Send(SendMode::Buffered), OpKind::StartBsend),
            (PersistentOp::Send(SendMode::Sync), OpKind::StartSsend),
            (PersistentOp::Send(SendMode::Ready), OpKind::StartRsend),
            (PersistentOp::Recv, OpKind::StartRecv),
        ];
        for (op, kind) in kinds {
            assert_eq!(start_kind(op), kind);
            assert_eq!(kind.mpi_name(), "MPI_Start");
        }
        assert!(start_kind(PersistentOp::Send(SendMode::Sync)).is_synchronous_send());
        assert!(start_kind(PersistentOp::Recv).is_nonblocking_receive());
    }

    /// `Wait`/`Test`/`all` need every request active; the `any`/`some`
    /// forms skip inactive ones by design (a `Waitany` loop over started
    /// requests meets the completed ones), so only a call with nothing
    /// active to wait for is reported.
    #[test]
    fn inactive_requests_are_reported_by_call_kind() {
        assert!(Waiting::Each.reports_inactive(3));
        assert!(Waiting::Each.reports_inactive(0));
        assert!(!Waiting::Some.reports_inactive(1));
        assert!(Waiting::Some.reports_inactive(0));
    }
}
