//! Nonblocking wildcard receives in `mbhybrid run` whose sender logical
//! time cannot tell yet (seed 002 §3.4 decides a wildcard when a message
//! arrives; a PMPI runtime must name the source when it posts).
//!
//! Deciding at `MPI_Irecv` would have to wait there, and a program that
//! posts its receives before its sends (every rank of a ring, say) would
//! then wait for messages nobody has sent: a deadlock determinism made
//! (§4.2.1). So such a receive is *deferred*: the program gets a
//! placeholder request (a receive on a private duplicate of
//! `MPI_COMM_SELF` that nothing ever matches, so `MPI_Test` on it reports
//! it incomplete), and the real receive is posted, with the sender logical
//! time chose, as soon as the choice is made: while the rank polls in MPI,
//! or at the latest when the program waits for it (or tests it at its
//! DTP, `dtp.rs`), when the handle the program holds is swapped for the
//! real one. Later receives on the same communicator are deferred behind
//! it, and blocking receives and probes on it resolve it first, so MPI
//! sees the receives of a communicator posted in program order and
//! matches them as the program's own order would.

use super::Rt;
use crate::consts::{byte, request_null, status_ignore, SUCCESS};
use crate::handle::HandleBits;
use crate::record::REQUESTS;
use mpi_sys::{MPI_Comm, MPI_Datatype, MPI_Request};

use std::os::raw::{c_int, c_void};

/// A receive posted only as a placeholder.
struct Deferred {
    /// Its slot (`irecv_as`).
    id: u32,
    /// The handle the program holds.
    placeholder: MPI_Request,
    comm: MPI_Comm,
    /// The source as given (`MPI_ANY_SOURCE`, or a rank behind a deferred
    /// wildcard).
    source: c_int,
    tag: c_int,
    buffer: (*mut c_void, c_int, MPI_Datatype),
}

/// A deferred receive now posted, whose placeholder the program still
/// holds.
struct Moved {
    placeholder: MPI_Request,
    real: MPI_Request,
}

/// The deferred receives of one rank.
pub(super) struct DeferredReceives {
    /// In posting order.
    pending: Vec<Deferred>,
    moved: Vec<Moved>,
    /// The private duplicate of `MPI_COMM_SELF` placeholders are posted
    /// on, once made.
    never: Option<MPI_Comm>,
    /// A resolution is under way (the polling inside it must not start
    /// another).
    resolving: bool,
}

impl DeferredReceives {
    /// None yet.
    pub(super) fn new() -> Self {
        DeferredReceives {
            pending: Vec::new(),
            moved: Vec::new(),
            never: None,
            resolving: false,
        }
    }
}

impl Rt {
    /// Whether a receive on `comm` is deferred.
    pub(super) fn det_has_deferred(&self, comm: MPI_Comm) -> bool {
        self.det.as_ref().is_some_and(|d| {
            let bits = comm.bits();
            d.deferred.pending.iter().any(|p| p.comm.bits() == bits)
        })
    }

    /// Defers the receive of slot `id` (see the module docs): `request`
    /// gets a placeholder.
    ///
    /// # Safety
    ///
    /// As for `MPI_Irecv` of `buffer`; deterministic mode is on.
    pub(super) unsafe fn det_defer(
        &mut self,
        id: u32,
        buffer: (*mut c_void, c_int, MPI_Datatype),
        source: c_int,
        tag: c_int,
        comm: MPI_Comm,
        request: *mut MPI_Request,
    ) -> c_int {
        let never = match self.never_comm() {
            Ok(never) => never,
            Err(rc) => return rc,
        };
        // SAFETY: a receive nothing sends to: no buffer is written (MPI
        // reports a null `request`).
        let rc =
            unsafe { mpi_sys::PMPI_Irecv(std::ptr::null_mut(), 0, byte(), 0, 0, never, request) };
        if rc != SUCCESS || request.is_null() {
            return rc;
        }
        // SAFETY: non-null, just written by MPI.
        let placeholder = unsafe { *request };
        if let Some(det) = self.det.as_mut() {
            det.deferred.pending.push(Deferred {
                id,
                placeholder,
                comm,
                source,
                tag,
                buffer,
            });
        }
        SUCCESS
    }

    /// The private duplicate of `MPI_COMM_SELF`, made on first use (or
    /// MPI's error).
    fn never_comm(&mut self) -> Result<MPI_Comm, c_int> {
        let self_comm = crate::consts::comm_self();
        let Some(det) = self.det.as_mut() else {
            return Ok(self_comm);
        };
        if let Some(never) = det.deferred.never {
            return Ok(never);
        }
        let mut never = self_comm;
        // SAFETY: MPI is initialised; `MPI_COMM_SELF` has this rank alone.
        let rc = unsafe { mpi_sys::PMPI_Comm_dup(self_comm, &mut never) };
        if rc != SUCCESS {
            return Err(rc);
        }
        det.deferred.never = Some(never);
        Ok(never)
    }

    /// Resolves every deferred receive on `comm`, waiting as long as it
    /// takes.
    pub(super) fn det_resolve_comm(&mut self, comm: MPI_Comm) {
        while self.det_has_deferred(comm) {
            let bits = comm.bits();
            let Some(at) = self.det.as_ref().and_then(|d| {
                d.deferred
                    .pending
                    .iter()
                    .position(|p| p.comm.bits() == bits)
            }) else {
                return;
            };
            self.det_resolve_at(at, true, true);
        }
    }

    /// Resolves the first deferred receive of each communicator whose
    /// sender can be told now (from `service`).
    pub(super) fn det_try_deferred(&mut self) {
        let Some(det) = self.det.as_ref() else {
            return;
        };
        if det.deferred.resolving || det.deferred.pending.is_empty() {
            return;
        }
        let mut at = 0;
        while let Some(p) = self.det.as_ref().and_then(|d| d.deferred.pending.get(at)) {
            let comm = p.comm.bits();
            let first = self.det.as_ref().is_some_and(|d| {
                d.deferred.pending[..at]
                    .iter()
                    .all(|q| q.comm.bits() != comm)
            });
            if first && self.det_resolve_at(at, false, false) {
                continue;
            }
            at += 1;
        }
    }

    /// Resolves pending receive `at`, the first of its communicator:
    /// chooses its sender (waiting when `block`; `forced` as for
    /// [`Rt::det_choose`]), posts it, cancels its placeholder. Whether it
    /// was resolved.
    fn det_resolve_at(&mut self, at: usize, block: bool, forced: bool) -> bool {
        let Some(p) = self.det.as_ref().and_then(|d| d.deferred.pending.get(at)) else {
            return false;
        };
        let (id, comm, source, tag, buffer, placeholder) =
            (p.id, p.comm, p.source, p.tag, p.buffer, p.placeholder);
        if let Some(det) = self.det.as_mut() {
            det.deferred.resolving = true;
        }
        let chosen = if source == crate::consts::any_source() {
            self.det_choose(comm, tag, block, forced)
        } else {
            Some(source)
        };
        if let Some(det) = self.det.as_mut() {
            det.deferred.resolving = false;
        }
        let Some(chosen) = chosen else {
            return false;
        };
        self.det_claim(comm, chosen, tag);
        let due = self.slots.get(id).map_or(0, |s| s.due);
        let mut real = request_null();
        // SAFETY: the program's receive, as it posted it, from the chosen
        // sender; the slot lives until the request completes.
        let rc = unsafe { self.post_into_slot(id, buffer, chosen, tag, comm, &mut real) };
        if rc != SUCCESS {
            crate::state::fatal(format_args!(
                "cannot post a deferred MPI_Irecv from rank {chosen} (MPI error {rc})"
            ));
        }
        let peer = self.comms.world_rank(comm, chosen);
        if let Some(slot) = self.slots.get_mut(id) {
            slot.request = real;
            slot.due = due;
            slot.peer = peer;
        }
        REQUESTS.insert(real.bits(), id);
        let mut cancelled = placeholder;
        // SAFETY: the placeholder the runtime posted; it stays allocated
        // (so its handle is not reused) until the program's is swapped.
        unsafe { mpi_sys::PMPI_Cancel(&mut cancelled) };
        if let Some(det) = self.det.as_mut() {
            det.deferred.pending.remove(at);
            det.deferred.moved.push(Moved { placeholder, real });
        }
        true
    }

    /// Swaps each placeholder among `requests[..count]` for its real
    /// request, resolving first the deferred ones `must` names (by index).
    ///
    /// # Safety
    ///
    /// `requests` holds `count` requests (or is null).
    pub(super) unsafe fn det_swap(
        &mut self,
        count: c_int,
        requests: *mut MPI_Request,
        must: impl Fn(&Self, usize) -> bool,
    ) {
        // SAFETY: the caller's contract.
        unsafe { self.det_swap_as(count, requests, must, true) }
    }

    /// [`Rt::det_swap`], resolving only what logical time decides now
    /// when `block` is false.
    ///
    /// # Safety
    ///
    /// As for [`Rt::det_swap`].
    pub(super) unsafe fn det_swap_as(
        &mut self,
        count: c_int,
        requests: *mut MPI_Request,
        must: impl Fn(&Self, usize) -> bool,
        block: bool,
    ) {
        let n = if requests.is_null() {
            0
        } else {
            usize::try_from(count).unwrap_or(0)
        };
        for i in 0..n {
            let Some(det) = self.det.as_ref() else {
                return;
            };
            if det.deferred.pending.is_empty() && det.deferred.moved.is_empty() {
                return;
            }
            // SAFETY: the caller's contract.
            let bits = unsafe { *requests.add(i) }.bits();
            let pending = det
                .deferred
                .pending
                .iter()
                .any(|p| p.placeholder.bits() == bits);
            if pending && must(self, i) {
                self.det_resolve_through(bits, block);
            }
            // SAFETY: as above.
            unsafe { self.det_swap_one(requests.add(i)) };
        }
    }

    /// Resolves the pending receive whose placeholder has `bits`, and the
    /// receives deferred before it on its communicator first (waiting when
    /// `block`). Whether it was resolved.
    fn det_resolve_through(&mut self, bits: u64, block: bool) -> bool {
        loop {
            let Some(det) = self.det.as_ref() else {
                return false;
            };
            let pending = &det.deferred.pending;
            let Some(mine) = pending.iter().position(|p| p.placeholder.bits() == bits) else {
                return true;
            };
            let comm = pending[mine].comm.bits();
            let first = pending
                .iter()
                .position(|p| p.comm.bits() == comm)
                .unwrap_or(mine);
            if !self.det_resolve_at(first, block, true) && !block {
                return false;
            }
        }
    }

    /// The communicator and tag of the pending deferred receive whose
    /// placeholder is `request`.
    pub(super) fn det_pending(&self, request: MPI_Request) -> Option<(MPI_Comm, c_int)> {
        let bits = request.bits();
        let det = self.det.as_ref()?;
        let p = det
            .deferred
            .pending
            .iter()
            .find(|p| p.placeholder.bits() == bits)?;
        Some((p.comm, p.tag))
    }

    /// The program cancels the deferred receive whose placeholder is
    /// `request`, before it was resolved: it is never posted (the
    /// placeholder, cancelled, completes as the cancelled receive).
    pub(super) fn det_drop_deferred(&mut self, request: MPI_Request) {
        let bits = request.bits();
        if let Some(det) = self.det.as_mut() {
            det.deferred
                .pending
                .retain(|p| p.placeholder.bits() != bits);
        }
    }

    /// The real request of a moved placeholder (`MPI_Request_get_status`
    /// cannot swap the program's handle), else `request` itself.
    pub(super) fn det_real_of(&self, request: MPI_Request) -> MPI_Request {
        let bits = request.bits();
        self.det
            .as_ref()
            .and_then(|d| {
                d.deferred
                    .moved
                    .iter()
                    .find(|m| m.placeholder.bits() == bits)
            })
            .map_or(request, |m| m.real)
    }

    /// Swaps `*request`, if it is a moved placeholder, for its real
    /// request, and lets the placeholder go.
    ///
    /// # Safety
    ///
    /// `request` is valid for reads and writes.
    unsafe fn det_swap_one(&mut self, request: *mut MPI_Request) {
        // SAFETY: the caller's contract.
        let bits = unsafe { *request }.bits();
        let Some(det) = self.det.as_mut() else {
            return;
        };
        let Some(at) = det
            .deferred
            .moved
            .iter()
            .position(|m| m.placeholder.bits() == bits)
        else {
            return;
        };
        let Moved {
            mut placeholder,
            real,
        } = det.deferred.moved.remove(at);
        REQUESTS.remove(bits);
        // SAFETY: the cancelled placeholder completes at once.
        unsafe { mpi_sys::PMPI_Wait(&mut placeholder, status_ignore()) };
        // SAFETY: the caller's contract.
        unsafe { *request = real };
    }
}
