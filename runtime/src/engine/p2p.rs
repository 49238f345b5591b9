//! Sends, receives, `Sendrecv`, probes.
//!
//! Every message to or from a real peer carries the header: packed with
//! the data into scratch memory (small messages of named contiguous types;
//! a request slot's memory for nonblocking ones) or through a struct
//! datatype of the header and the user's buffer ([`crate::packed`],
//! [`crate::piggyback`]). `MPI_PROC_NULL` peers make no message and go to
//! MPI unchanged.

use super::{finish_received, read_status, status_target, words_mut, HeaderAt, Posting, Rt, Waits};
use crate::consts::{
    bottom, byte, packed, proc_null, request_null, status_ignore, uint64, SUCCESS,
};
use crate::handle::HandleBits;
use crate::llcp::BlockingEvent;
use crate::packed;
use crate::pending::Pending;
use crate::piggyback;
use crate::record::{self, set_status, REQUESTS};
use crate::slots::{Kind, RecvState, SendState, INLINE_BYTES};
use crate::state::fatal;
use mbh_trace::OpKind;
use mpi_sys::{MPI_Comm, MPI_Datatype, MPI_Request, MPI_Status};
use std::os::raw::{c_int, c_void};

/// The mode of a send.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SendMode {
    /// `MPI_Send`, `MPI_Isend`.
    Standard,
    /// `MPI_Ssend`, `MPI_Issend`.
    Sync,
    /// `MPI_Bsend`, `MPI_Ibsend`.
    Buffered,
    /// `MPI_Rsend`, `MPI_Irsend`.
    Ready,
}

/// The blocking `PMPI_*send` of `mode`.
///
/// # Safety
///
/// As for `MPI_Send`.
unsafe fn pmpi_send(
    mode: SendMode,
    buf: *const c_void,
    count: c_int,
    datatype: MPI_Datatype,
    dest: c_int,
    tag: c_int,
    comm: MPI_Comm,
) -> c_int {
    // SAFETY: the caller's contract.
    unsafe {
        match mode {
            SendMode::Standard => mpi_sys::PMPI_Send(buf, count, datatype, dest, tag, comm),
            SendMode::Sync => mpi_sys::PMPI_Ssend(buf, count, datatype, dest, tag, comm),
            SendMode::Buffered => mpi_sys::PMPI_Bsend(buf, count, datatype, dest, tag, comm),
            SendMode::Ready => mpi_sys::PMPI_Rsend(buf, count, datatype, dest, tag, comm),
        }
    }
}

/// The nonblocking `PMPI_I*send` of `mode`.
///
/// # Safety
///
/// As for `MPI_Isend`.
#[allow(clippy::too_many_arguments)]
unsafe fn pmpi_isend(
    mode: SendMode,
    buf: *const c_void,
    count: c_int,
    datatype: MPI_Datatype,
    dest: c_int,
    tag: c_int,
    comm: MPI_Comm,
    request: *mut MPI_Request,
) -> c_int {
    // SAFETY: the caller's contract.
    unsafe {
        match mode {
            SendMode::Standard => {
                mpi_sys::PMPI_Isend(buf, count, datatype, dest, tag, comm, request)
            }
            SendMode::Sync => mpi_sys::PMPI_Issend(buf, count, datatype, dest, tag, comm, request),
            SendMode::Buffered => {
                mpi_sys::PMPI_Ibsend(buf, count, datatype, dest, tag, comm, request)
            }
            SendMode::Ready => mpi_sys::PMPI_Irsend(buf, count, datatype, dest, tag, comm, request),
        }
    }
}

impl Rt {
    /// The mode a send of `mode` really uses (`--buffering zero` makes
    /// standard sends synchronous).
    fn effective(&self, mode: SendMode) -> SendMode {
        if mode == SendMode::Standard && self.zero_buffering() {
            SendMode::Sync
        } else {
            mode
        }
    }

    /// Follows `request`, made by the call of record `index` outside the
    /// point-to-point engine (a one-sided `R` operation), as a request MPI
    /// completes on its own: the completion calls release it, and
    /// `MPI_Finalize` reports it if the program never completed it.
    /// Returns its slot.
    pub fn follow_request(&mut self, index: Option<u64>, request: MPI_Request) -> u32 {
        let id = self.slots.alloc(Kind::Plain { receive: false }, index);
        self.track(id, request);
        id
    }

    /// Remembers a request the program holds, under slot `id`.
    pub(super) fn track(&mut self, id: u32, request: MPI_Request) {
        let due = self.det_due();
        if let Some(slot) = self.slots.get_mut(id) {
            slot.request = request;
            slot.due = due;
        }
        // MPICH 4 returns one shared, already-complete "lightweight"
        // request for every send that completed eagerly, so a handle can
        // come back while an older slot still holds it. That older request
        // is complete: hand its slot to the runtime (as for a request the
        // program freed) instead of leaving it to look leaked at Finalize.
        if let Some(older) = REQUESTS.get(request.bits()).filter(|&older| older != id) {
            if let Some(slot) = self.slots.get_mut(older) {
                slot.orphan = true;
            }
            crate::access::forget(older);
            self.slots.watch(older);
        }
        if !REQUESTS.insert(request.bits(), id) {
            fatal(format_args!(
                "more than {} nonblocking requests are outstanding; this version of the runtime cannot follow them",
                record::REQUEST_SLOTS / 4 * 3
            ));
        }
    }

    /// Posts the receive of a synchronous send's acknowledgement into
    /// `buf` (`width` words) and returns its tag.
    ///
    /// # Safety
    ///
    /// `buf` must stay valid until the request completes.
    unsafe fn post_ack(
        &mut self,
        buf: *mut u64,
        dest_world: i32,
        request: &mut MPI_Request,
    ) -> Result<c_int, c_int> {
        let tag = self.next_ack_tag();
        // SAFETY: `buf` holds `width` words (the caller's contract).
        let rc = unsafe {
            mpi_sys::PMPI_Irecv(
                buf.cast(),
                self.width as c_int,
                uint64(),
                dest_world,
                tag,
                self.shadow,
                request,
            )
        };
        if rc == SUCCESS {
            Ok(tag)
        } else {
            Err(rc)
        }
    }

    /// A blocking send (`MPI_Send`, `Ssend`, `Bsend`, `Rsend`).
    ///
    /// # Safety
    ///
    /// As for `MPI_Send`.
    #[allow(clippy::too_many_arguments)]
    pub unsafe fn send(
        &mut self,
        mode: SendMode,
        kind: OpKind,
        buf: *const c_void,
        count: c_int,
        datatype: MPI_Datatype,
        dest: c_int,
        tag: c_int,
        comm: MPI_Comm,
    ) -> c_int {
        if dest != proc_null() {
            crate::access::check_call(buf, count, datatype, false);
        }
        let index = record::begin(|| record::p2p(kind, dest, tag, comm, count, datatype), true);
        let rc = if dest == proc_null() {
            // SAFETY: the caller's arguments: no message is made.
            unsafe { pmpi_send(mode, buf, count, datatype, dest, tag, comm) }
        } else {
            // SAFETY: the caller's contract.
            unsafe { self.send_blocking(mode, buf, count, datatype, dest, tag, comm, index) }
        };
        record::finish(index, rc, true, |_| {});
        rc
    }

    #[allow(clippy::too_many_arguments)]
    unsafe fn send_blocking(
        &mut self,
        mode: SendMode,
        buf: *const c_void,
        count: c_int,
        datatype: MPI_Datatype,
        dest: c_int,
        tag: c_int,
        comm: MPI_Comm,
        index: Option<u64>,
    ) -> c_int {
        let mode = self.effective(mode);
        let dest_world = self.comms.world_rank(comm, dest);
        let sync = mode == SendMode::Sync && dest_world >= 0;
        self.det_announce(comm, dest, tag);
        let mut ack = request_null();
        let ack_tag = if sync {
            let buf = self.ack_in.as_mut_ptr();
            // SAFETY: `ack_in` lives in `self` and is not touched until the
            // acknowledgement is waited for below.
            match unsafe { self.post_ack(buf, dest_world, &mut ack) } {
                Ok(tag) => tag,
                Err(rc) => return rc,
            }
        } else {
            0
        };
        let signature = self.send_signature(count, datatype);
        let header = self
            .wire
            .send_header(count, datatype, self.send_hdr.as_mut_ptr());
        // SAFETY: the send scratch or the scratch header, `hwords` long
        // each, not otherwise referenced until the send below.
        let words = unsafe { words_mut(header, self.hwords) };
        Self::encode(
            words, &self.llcp, self.rank, index, sync, ack_tag, signature,
        );
        // SAFETY: the header outlives the blocking send below, which
        // completes before the send scratch is used again.
        let mut msg = match unsafe { self.wire.outgoing(header, buf, count, datatype) } {
            Ok(msg) => msg,
            Err(rc) => {
                Self::cancel(&mut ack);
                return rc;
            }
        };
        let (b, n, ty) = (msg.buf, msg.count, msg.datatype);
        let rc = if mode == SendMode::Buffered || !self.must_poll() {
            // SAFETY: `msg` describes the header and the user's data.
            unsafe { pmpi_send(mode, b, n, ty, dest, tag, comm) }
        } else {
            let mut request = request_null();
            // SAFETY: as above; completed before returning.
            let rc = unsafe { pmpi_isend(mode, b, n, ty, dest, tag, comm, &mut request) };
            if rc == SUCCESS {
                // SAFETY: the request just made.
                unsafe { self.block_on(&mut request, status_ignore(), None) }
            } else {
                rc
            }
        };
        msg.free();
        if sync {
            if rc == SUCCESS {
                // SAFETY: the acknowledgement request posted above.
                let ack_rc = unsafe { self.block_on(&mut ack, status_ignore(), None) };
                if ack_rc == SUCCESS {
                    self.llcp.merge(&self.ack_in);
                }
            } else {
                Self::cancel(&mut ack);
            }
        }
        rc
    }

    /// A nonblocking send (`MPI_Isend`, `Issend`, `Ibsend`, `Irsend`).
    ///
    /// # Safety
    ///
    /// As for `MPI_Isend`.
    #[allow(clippy::too_many_arguments)]
    pub unsafe fn isend(
        &mut self,
        mode: SendMode,
        kind: OpKind,
        buf: *const c_void,
        count: c_int,
        datatype: MPI_Datatype,
        dest: c_int,
        tag: c_int,
        comm: MPI_Comm,
        request: *mut MPI_Request,
    ) -> c_int {
        if dest != proc_null() {
            crate::access::check_call(buf, count, datatype, false);
        }
        let index = record::begin(
            || record::p2p(kind, dest, tag, comm, count, datatype),
            false,
        );
        let rc = if dest == proc_null() {
            // SAFETY: the caller's arguments: no message is made.
            let rc = unsafe { pmpi_isend(mode, buf, count, datatype, dest, tag, comm, request) };
            if rc == SUCCESS && !request.is_null() {
                let id = self.slots.alloc(Kind::Plain { receive: false }, index);
                // SAFETY: non-null, just written by MPI.
                self.track(id, unsafe { *request });
            }
            rc
        } else {
            // SAFETY: the caller's contract.
            unsafe {
                self.isend_header(mode, buf, count, datatype, dest, tag, comm, request, index)
            }
        };
        let bits = (rc == SUCCESS && !request.is_null())
            // SAFETY: non-null, written by MPI.
            .then(|| unsafe { *request }.bits());
        record::finish(index, rc, false, |op| op.request = bits.unwrap_or(0));
        rc
    }

    #[allow(clippy::too_many_arguments)]
    unsafe fn isend_header(
        &mut self,
        mode: SendMode,
        buf: *const c_void,
        count: c_int,
        datatype: MPI_Datatype,
        dest: c_int,
        tag: c_int,
        comm: MPI_Comm,
        request: *mut MPI_Request,
        index: Option<u64>,
    ) -> c_int {
        let mode = self.effective(mode);
        let dest_world = self.comms.world_rank(comm, dest);
        let sync = mode == SendMode::Sync && dest_world >= 0;
        self.det_announce(comm, dest, tag);
        let state = SendState {
            sync,
            ack: request_null(),
            ack_arrived: false,
        };
        let id = self.slots.alloc(Kind::Send(state), index);
        let mut ack = request_null();
        let ack_tag = if sync {
            let buf = self.slots.ack(id);
            // SAFETY: the slot's memory lives until the slot is released,
            // after the acknowledgement arrived or was cancelled.
            match unsafe { self.post_ack(buf, dest_world, &mut ack) } {
                Ok(tag) => tag,
                Err(rc) => {
                    self.slots.release(id);
                    return rc;
                }
            }
        } else {
            0
        };
        if let Some(Kind::Send(s)) = self.slots.get_mut(id).map(|s| &mut s.kind) {
            s.ack = ack;
        }
        let signature = self.send_signature(count, datatype);
        let packed_bytes = self.wire.packed_bytes(count, datatype);
        if let Some(bytes) = packed_bytes.filter(|&b| b > INLINE_BYTES) {
            self.slots.give_room(id, bytes, packed::MAX_DATA);
        }
        // SAFETY: the slot's header words, not referenced elsewhere.
        let header = unsafe { words_mut(self.slots.header(id), self.hwords) };
        Self::encode(
            header, &self.llcp, self.rank, index, sync, ack_tag, signature,
        );
        let header = self.slots.header(id);
        let hbytes = self.hbytes as usize;
        // SAFETY: the header (and the data packed after it, in the slot or
        // its room) lives in the slot until the request completes.
        let msg = unsafe {
            match packed_bytes {
                Some(bytes) => Ok(packed::pack(header, hbytes, header, buf, bytes)),
                None => packed::struct_message(header, hbytes, buf, count, datatype),
            }
        };
        let mut msg = match msg {
            Ok(msg) => msg,
            Err(rc) => {
                Self::cancel(&mut ack);
                self.slots.release(id);
                return rc;
            }
        };
        let (b, n, ty) = (msg.buf, msg.count, msg.datatype);
        // SAFETY: `msg` describes the header and the data; `request` is the
        // caller's.
        let rc = unsafe { pmpi_isend(mode, b, n, ty, dest, tag, comm, request) };
        msg.free();
        if rc == SUCCESS && !request.is_null() {
            if let (Some(bytes @ 1..), Some(slot)) = (packed_bytes, self.slots.get_mut(id)) {
                slot.sent = Some((buf.cast::<u8>(), bytes));
            }
            // SAFETY: non-null, just written by MPI.
            self.track(id, unsafe { *request });
            // The program may not write `buf` until the send completes
            // (seed 000 §2.3.6.3).
            crate::access::watch(id, index, Pending::Send, (buf, count, datatype));
        } else {
            Self::cancel(&mut ack);
            self.slots.release(id);
        }
        rc
    }

    /// `MPI_Recv`.
    ///
    /// # Safety
    ///
    /// As for `MPI_Recv`.
    #[allow(clippy::too_many_arguments)]
    pub unsafe fn recv(
        &mut self,
        buf: *mut c_void,
        count: c_int,
        datatype: MPI_Datatype,
        source: c_int,
        tag: c_int,
        comm: MPI_Comm,
        status: *mut MPI_Status,
    ) -> c_int {
        if source != proc_null() {
            crate::access::check_call(buf, count, datatype, true);
        }
        if source == proc_null() {
            let index = record::begin(
                || record::p2p(OpKind::Recv, source, tag, comm, count, datatype),
                true,
            );
            // SAFETY: the caller's arguments: no message is received.
            let rc = unsafe { mpi_sys::PMPI_Recv(buf, count, datatype, source, tag, comm, status) };
            record::finish(index, rc, true, |_| {});
            return rc;
        }
        let posting = self.receive_posting(comm, source, tag, Waits::Block);
        let index = record::begin(
            || {
                Self::p2p_record(
                    OpKind::Recv,
                    source,
                    posting.source,
                    tag,
                    comm,
                    count,
                    datatype,
                )
            },
            true,
        );
        let seq = self.next_seq();
        let start = self.llcp.now();
        let mut local = super::blank_status();
        let target = status_target(status, &mut local);
        let header = self.recv_hdr.as_mut_ptr();
        self.det_alone(comm, posting.source);
        let (mut received, mut at) = (None, HeaderAt::Scratch);
        // SAFETY: the scratch header outlives the blocking receive, which
        // completes (and is unpacked) before the receive scratch is reused.
        let rc = match unsafe { self.wire.incoming(header, buf, count, datatype) } {
            Err(rc) => rc,
            Ok(mut msg) => {
                let (b, n, ty) = (msg.buf, msg.count, msg.datatype);
                let rc = if !self.must_poll() {
                    // SAFETY: `msg` describes the header and the user's
                    // buffer.
                    unsafe { mpi_sys::PMPI_Recv(b, n, ty, posting.source, tag, comm, target) }
                } else {
                    let mut request = request_null();
                    // SAFETY: as above; completed before returning.
                    let rc = unsafe {
                        mpi_sys::PMPI_Irecv(b, n, ty, posting.source, tag, comm, &mut request)
                    };
                    if rc == SUCCESS {
                        // SAFETY: the request just made.
                        unsafe { self.block_on(&mut request, target, None) }
                    } else {
                        rc
                    }
                };
                if rc == SUCCESS {
                    // SAFETY: completed into `target`; scratch untouched.
                    received = unsafe { packed::unpack(&msg, self.hbytes as usize, target) };
                    if msg.is_packed() {
                        at = HeaderAt::Wire;
                    }
                }
                msg.free();
                rc
            }
        };
        self.det_waits_for(None);
        if rc == SUCCESS {
            // SAFETY: the receive succeeded into `target`.
            unsafe {
                self.blocking_received(
                    seq,
                    comm,
                    posting,
                    tag,
                    start,
                    index,
                    datatype,
                    target,
                    (at, received),
                )
            };
        }
        finish_received(index, rc, target);
        rc
    }

    /// `MPI_Irecv`.
    ///
    /// # Safety
    ///
    /// As for `MPI_Irecv`.
    #[allow(clippy::too_many_arguments)]
    pub unsafe fn irecv(
        &mut self,
        buf: *mut c_void,
        count: c_int,
        datatype: MPI_Datatype,
        source: c_int,
        tag: c_int,
        comm: MPI_Comm,
        request: *mut MPI_Request,
    ) -> c_int {
        // SAFETY: the caller's contract.
        unsafe {
            self.irecv_as(
                OpKind::Irecv,
                buf,
                count,
                datatype,
                source,
                tag,
                comm,
                request,
            )
        }
    }

    /// A nonblocking receive recorded as `kind` (`Irecv`, or the
    /// `StartRecv` of a persistent request).
    ///
    /// # Safety
    ///
    /// As for `MPI_Irecv`.
    #[allow(clippy::too_many_arguments)]
    pub(super) unsafe fn irecv_as(
        &mut self,
        kind: OpKind,
        buf: *mut c_void,
        count: c_int,
        datatype: MPI_Datatype,
        source: c_int,
        tag: c_int,
        comm: MPI_Comm,
        request: *mut MPI_Request,
    ) -> c_int {
        if source != proc_null() {
            crate::access::check_call(buf, count, datatype, true);
        }
        if source == proc_null() {
            // SAFETY: the caller's contract.
            return unsafe {
                self.irecv_proc_null(kind, (buf, count, datatype), tag, comm, request)
            };
        }
        // A persistent request's inner receive is deferred too: completion
        // calls swap inner requests in before they look for placeholders.
        let posting = self.receive_posting(comm, source, tag, Waits::Post);
        let index = record::begin(
            || Self::p2p_record(kind, source, posting.source, tag, comm, count, datatype),
            false,
        );
        let seq = self.next_seq();
        let state = RecvState {
            seq,
            comm,
            event: posting.event,
            observed: false,
            acked: false,
            sig: self.signature(datatype),
            probed: None,
            settled: None,
        };
        let id = self.slots.alloc(Kind::Recv(state), index);
        let packed_bytes = self.wire.packed_bytes(count, datatype);
        if let Some(bytes) = packed_bytes.filter(|&b| b > INLINE_BYTES) {
            self.slots.give_room(id, bytes, packed::MAX_DATA);
        }
        let rc = if posting.defer {
            // SAFETY: the caller's contract.
            unsafe { self.det_defer(id, (buf, count, datatype), source, tag, comm, request) }
        } else {
            // SAFETY: the caller's contract.
            unsafe {
                self.post_into_slot(
                    id,
                    (buf, count, datatype),
                    posting.source,
                    tag,
                    comm,
                    request,
                )
            }
        };
        let mut bits = 0;
        if rc == SUCCESS && !request.is_null() {
            // SAFETY: non-null, just written by MPI.
            let handle = unsafe { *request };
            bits = handle.bits();
            let buffer = (buf.cast_const(), count, datatype);
            self.irecv_posted((id, index, seq), handle, posting, buffer, tag, comm);
        } else {
            self.slots.release(id);
        }
        record::finish(index, rc, false, |op| op.request = bits);
        rc
    }

    /// A receive of slot `id` (record `index`, issued `seq`-th) posted
    /// into `handle` for the caller's `buffer`: tracked and watched until
    /// it completes, and a wildcard's event posted to the clocks.
    fn irecv_posted(
        &mut self,
        (id, index, seq): (u32, Option<u64>, u64),
        handle: MPI_Request,
        posting: Posting,
        buffer: (*const c_void, c_int, MPI_Datatype),
        tag: c_int,
        comm: MPI_Comm,
    ) {
        self.track(id, handle);
        if !posting.defer && posting.source >= 0 && self.det.is_some() {
            let peer = self.comms.world_rank(comm, posting.source);
            if let Some(slot) = self.slots.get_mut(id) {
                slot.peer = peer;
            }
        }
        self.slots.watch(id);
        // The program may not touch the buffer until the receive
        // completes (seed 000 §2.3.6.3).
        crate::access::watch(id, index, Pending::Recv, buffer);
        if let Some(event) = posting.event {
            let pattern = Self::pattern(comm, posting, tag);
            self.llcp
                .post(event, seq, pattern, index.unwrap_or(u64::MAX), id);
        }
    }

    /// A nonblocking receive (`kind`) from `MPI_PROC_NULL`: no message is
    /// received, and its request is tracked as a plain one.
    ///
    /// # Safety
    ///
    /// As for `MPI_Irecv`.
    unsafe fn irecv_proc_null(
        &mut self,
        kind: OpKind,
        (buf, count, datatype): (*mut c_void, c_int, MPI_Datatype),
        tag: c_int,
        comm: MPI_Comm,
        request: *mut MPI_Request,
    ) -> c_int {
        let source = proc_null();
        let index = record::begin(
            || record::p2p(kind, source, tag, comm, count, datatype),
            false,
        );
        // SAFETY: the caller's arguments: no message is received.
        let rc = unsafe { mpi_sys::PMPI_Irecv(buf, count, datatype, source, tag, comm, request) };
        let mut bits = 0;
        if rc == SUCCESS && !request.is_null() {
            let id = self.slots.alloc(Kind::Plain { receive: true }, index);
            // SAFETY: non-null, just written by MPI.
            let handle = unsafe { *request };
            bits = handle.bits();
            self.track(id, handle);
        }
        record::finish(index, rc, false, |op| op.request = bits);
        rc
    }

    /// Posts the receive of slot `id` (made by `irecv_as`) from `source`
    /// into `request`: header and data into the slot for a packed receive,
    /// else a struct type of the slot's header and the user's buffer.
    ///
    /// # Safety
    ///
    /// As for `MPI_Irecv` of `buffer`; slot `id` is a receive's.
    pub(super) unsafe fn post_into_slot(
        &mut self,
        id: u32,
        buffer: (*mut c_void, c_int, MPI_Datatype),
        source: c_int,
        tag: c_int,
        comm: MPI_Comm,
        request: *mut MPI_Request,
    ) -> c_int {
        let (buf, count, datatype) = buffer;
        let header = self.slots.header(id);
        let packed_bytes = self.wire.packed_bytes(count, datatype);
        match packed_bytes {
            Some(bytes) => {
                // Header and data into the slot; the data moves to `buf`
                // when the request completes (`Rt::unpack_slot`).
                if let Some(slot) = self.slots.get_mut(id) {
                    slot.unpack = Some((buf.cast(), bytes));
                }
                let n = self.hbytes + bytes as c_int;
                // SAFETY: the slot (or its room) holds the header and
                // `bytes` after it until the request completes; `request`
                // is the caller's.
                unsafe { mpi_sys::PMPI_Irecv(header.cast(), n, byte(), source, tag, comm, request) }
            }
            None => {
                let mut ty = datatype;
                // SAFETY: the header lives in the slot until the request
                // completes.
                let mut rc = unsafe {
                    piggyback::struct_type(header, self.hbytes, buf, count, datatype, &mut ty)
                };
                if rc == SUCCESS {
                    // SAFETY: the struct type describes the slot's header
                    // and the user's buffer; `request` is the caller's.
                    rc =
                        unsafe { mpi_sys::PMPI_Irecv(bottom(), 1, ty, source, tag, comm, request) };
                    piggyback::free_type(&mut ty);
                }
                rc
            }
        }
    }

    /// `MPI_Sendrecv`: a receive and a send posted together and completed
    /// together.
    ///
    /// # Safety
    ///
    /// As for `MPI_Sendrecv`.
    #[allow(clippy::too_many_arguments)]
    pub unsafe fn sendrecv(
        &mut self,
        sendbuf: *const c_void,
        sendcount: c_int,
        sendtype: MPI_Datatype,
        dest: c_int,
        sendtag: c_int,
        recvbuf: *mut c_void,
        recvcount: c_int,
        recvtype: MPI_Datatype,
        source: c_int,
        recvtag: c_int,
        comm: MPI_Comm,
        status: *mut MPI_Status,
    ) -> c_int {
        // SAFETY: the caller's contract.
        unsafe {
            self.sendrecv_as(
                OpKind::Sendrecv,
                sendbuf,
                sendcount,
                sendtype,
                dest,
                sendtag,
                recvbuf,
                recvcount,
                recvtype,
                source,
                recvtag,
                comm,
                status,
            )
        }
    }

    /// `MPI_Sendrecv` recorded as `kind` (`Sendrecv`, `SendrecvReplace`).
    ///
    /// The receive is posted first (deterministic mode decides a wildcard
    /// one now: `Waits::Exchange`), then the send. The receive completes
    /// first: the status is written and the receive counted as a blocking
    /// one (which acknowledges a synchronous sender); then the send
    /// completes and its own acknowledgement is taken. When posting fails,
    /// what was posted is cancelled.
    ///
    /// # Safety
    ///
    /// As for `MPI_Sendrecv`.
    #[allow(clippy::too_many_arguments)]
    unsafe fn sendrecv_as(
        &mut self,
        kind: OpKind,
        sendbuf: *const c_void,
        sendcount: c_int,
        sendtype: MPI_Datatype,
        dest: c_int,
        sendtag: c_int,
        recvbuf: *mut c_void,
        recvcount: c_int,
        recvtype: MPI_Datatype,
        source: c_int,
        recvtag: c_int,
        comm: MPI_Comm,
        status: *mut MPI_Status,
    ) -> c_int {
        let null = proc_null();
        if dest != null {
            crate::access::check_call(sendbuf, sendcount, sendtype, false);
        }
        if source != null {
            crate::access::check_call(recvbuf, recvcount, recvtype, true);
        }
        let posting = if source == null {
            Posting::plain(source)
        } else {
            self.receive_posting(comm, source, recvtag, Waits::Exchange)
        };
        let recv = RecvHalf {
            buf: recvbuf,
            count: recvcount,
            datatype: recvtype,
            source,
            posted: posting.source,
            tag: recvtag,
        };
        let index = Self::sendrecv_record(kind, &recv, dest, sendtag, comm);
        let seq = self.next_seq();
        let start = self.llcp.now();
        let mut local = super::blank_status();
        let target = status_target(status, &mut local);
        let send = self.send_half((sendbuf, sendcount, sendtype), dest, sendtag, comm);
        let mut requests = [request_null(), request_null()];
        let mut ack = request_null();
        // SAFETY: the caller's receive arguments; `requests` outlives the
        // completion below.
        let (mut rc, incoming) = unsafe { self.sendrecv_post_recv(&recv, comm, &mut requests[0]) };
        if rc == SUCCESS {
            // SAFETY: the caller's send arguments; `requests` and `ack`
            // outlive the completion below.
            rc = unsafe { self.sendrecv_post_send(&send, comm, index, &mut requests[1], &mut ack) };
        }
        if rc != SUCCESS {
            // Undo what was posted.
            for request in &mut requests {
                Self::cancel(request);
            }
            Self::cancel(&mut ack);
            finish_received(index, rc, target);
            return rc;
        }
        // SAFETY: the halves posted above, of the caller's arguments.
        let rc = unsafe {
            self.sendrecv_complete(
                &recv,
                send.sync,
                comm,
                (seq, start, index),
                posting,
                &incoming,
                (&mut requests, &mut ack),
                target,
            )
        };
        finish_received(index, rc, target);
        rc
    }

    /// Completes the halves of an `MPI_Sendrecv` that [`Rt::sendrecv_as`]
    /// posted into `requests` (receive, send) and `ack`: the receive into
    /// `target`, then the send, then its acknowledgement.
    ///
    /// The receive half is completed, and its synchronous sender
    /// acknowledged, before the send half: MPI's own `MPI_Sendrecv`
    /// lets that sender return as soon as its message is taken. Waiting
    /// for both halves first held a `Sendrecv` that received but cannot
    /// send its sender inside the runtime, a wait MPI does not have and
    /// the wait-for graph cannot see: under `--buffering zero` a ring
    /// of them would end at the timeout instead of as a deadlock. The
    /// ack carries the clock after the receive, as before (seed 000
    /// §5.2.1, `MatchedWithSsend`).
    ///
    /// # Safety
    ///
    /// `requests` and `ack` were posted from the caller's arguments of
    /// `MPI_Sendrecv`, as `recv` says; `target` is valid for writes.
    #[allow(clippy::too_many_arguments)]
    unsafe fn sendrecv_complete(
        &mut self,
        recv: &RecvHalf,
        sync: bool,
        comm: MPI_Comm,
        (seq, start, index): (u64, u64, Option<u64>),
        posting: Posting,
        incoming: &Option<packed::Message>,
        (requests, ack): (&mut [MPI_Request; 2], &mut MPI_Request),
        target: *mut MPI_Status,
    ) -> c_int {
        let mut statuses = [super::blank_status(), super::blank_status()];
        // SAFETY: the receive `sendrecv_as` posted; `statuses` outlives the
        // wait.
        let mut rc = unsafe { self.block_on(&mut requests[0], &mut statuses[0], None) };
        if rc == SUCCESS {
            // SAFETY: the receive completed into `statuses[0]`; its scratch
            // is untouched since.
            unsafe {
                self.sendrecv_received(
                    recv,
                    comm,
                    (seq, start, index),
                    posting,
                    incoming,
                    statuses[0],
                    target,
                )
            };
        }
        // SAFETY: the send `sendrecv_as` posted.
        let sent = unsafe { self.block_on(&mut requests[1], &mut statuses[1], None) };
        if rc == SUCCESS {
            rc = sent;
        }
        if sync {
            // SAFETY: `ack` is the acknowledgement's receive `sendrecv_as`
            // posted.
            unsafe { self.sendrecv_ack(rc, ack) };
        }
        rc
    }

    /// `MPI_Sendrecv`'s send half, of the caller's `(buf, count, datatype)`
    /// to `dest` with `tag`: in standard mode unless the options make it
    /// synchronous (never to `MPI_PROC_NULL`).
    fn send_half(
        &mut self,
        (buf, count, datatype): (*const c_void, c_int, MPI_Datatype),
        dest: c_int,
        tag: c_int,
        comm: MPI_Comm,
    ) -> SendHalf {
        let mode = self.effective(SendMode::Standard);
        let dest_world = if dest == proc_null() {
            -1
        } else {
            self.comms.world_rank(comm, dest)
        };
        SendHalf {
            buf,
            count,
            datatype,
            dest,
            tag,
            mode,
            dest_world,
            sync: mode == SendMode::Sync && dest_world >= 0,
        }
    }

    /// Begins `MPI_Sendrecv`'s record (`kind`): the receive's fields, and
    /// the send's destination and tag in the `request` word
    /// ([`sendrecv_send_word`]). The record index, if recording.
    fn sendrecv_record(
        kind: OpKind,
        recv: &RecvHalf,
        dest: c_int,
        sendtag: c_int,
        comm: MPI_Comm,
    ) -> Option<u64> {
        record::begin(
            || {
                let mut op = Self::p2p_record(
                    kind,
                    recv.source,
                    recv.posted,
                    recv.tag,
                    comm,
                    recv.count,
                    recv.datatype,
                );
                op.request = sendrecv_send_word(dest, sendtag);
                op
            },
            true,
        )
    }

    /// Posts `MPI_Sendrecv`'s receive into `request`: straight to MPI from
    /// `MPI_PROC_NULL` (no message, no header); else header and data
    /// together, through the receive scratch, from the posted source.
    /// Returns MPI's code and, when the scratch was taken, the message to
    /// unpack once the receive completed.
    ///
    /// # Safety
    ///
    /// As for `MPI_Irecv` with `recv`'s arguments; the scratch header and
    /// receive scratch are not used again until the receive completed and
    /// was unpacked.
    unsafe fn sendrecv_post_recv(
        &mut self,
        recv: &RecvHalf,
        comm: MPI_Comm,
        request: &mut MPI_Request,
    ) -> (c_int, Option<packed::Message>) {
        let RecvHalf {
            buf,
            count,
            datatype,
            source,
            posted,
            tag,
        } = *recv;
        if source == proc_null() {
            // SAFETY: the caller's arguments: no message is received.
            let rc =
                unsafe { mpi_sys::PMPI_Irecv(buf, count, datatype, source, tag, comm, request) };
            return (rc, None);
        }
        let header = self.recv_hdr.as_mut_ptr();
        // SAFETY: the scratch header and receive scratch outlive the
        // completion (unpacked there).
        match unsafe { self.wire.incoming(header, buf, count, datatype) } {
            Err(rc) => (rc, None),
            Ok(mut msg) => {
                // SAFETY: `msg` describes the header and the buffer.
                let rc = unsafe {
                    mpi_sys::PMPI_Irecv(
                        msg.buf,
                        msg.count,
                        msg.datatype,
                        posted,
                        tag,
                        comm,
                        request,
                    )
                };
                msg.free();
                (rc, Some(msg))
            }
        }
    }

    /// Posts `MPI_Sendrecv`'s send into `request`: straight to MPI to
    /// `MPI_PROC_NULL` (no message, no header); else announced to
    /// deterministic mode, a synchronous send's acknowledgement receive
    /// posted into `ack` first, then the header (record `index`, clocks,
    /// type signature) and the data sent together in the send's mode.
    ///
    /// # Safety
    ///
    /// As for `MPI_Isend` with `send`'s arguments; the scratch header,
    /// send scratch and `ack_in` are not used again until the send and
    /// the acknowledgement completed.
    unsafe fn sendrecv_post_send(
        &mut self,
        send: &SendHalf,
        comm: MPI_Comm,
        index: Option<u64>,
        request: &mut MPI_Request,
        ack: &mut MPI_Request,
    ) -> c_int {
        let SendHalf {
            buf,
            count,
            datatype,
            dest,
            tag,
            mode,
            dest_world,
            sync,
        } = *send;
        if dest == proc_null() {
            // SAFETY: the caller's arguments: no message is made.
            return unsafe { mpi_sys::PMPI_Isend(buf, count, datatype, dest, tag, comm, request) };
        }
        self.det_announce(comm, dest, tag);
        let ack_tag = if sync {
            let buf = self.ack_in.as_mut_ptr();
            // SAFETY: `ack_in` is untouched until waited for
            // (`Rt::sendrecv_ack`).
            match unsafe { self.post_ack(buf, dest_world, ack) } {
                Ok(tag) => tag,
                Err(rc) => return rc,
            }
        } else {
            0
        };
        let signature = self.send_signature(count, datatype);
        let header = self
            .wire
            .send_header(count, datatype, self.send_hdr.as_mut_ptr());
        // SAFETY: the send scratch or the scratch header, `hwords` long
        // each, not otherwise referenced until the send completes.
        let words = unsafe { words_mut(header, self.hwords) };
        Self::encode(
            words, &self.llcp, self.rank, index, sync, ack_tag, signature,
        );
        // SAFETY: the scratch header and send scratch outlive the
        // completion.
        match unsafe { self.wire.outgoing(header, buf, count, datatype) } {
            Err(rc) => rc,
            Ok(mut msg) => {
                let (b, n, ty) = (msg.buf, msg.count, msg.datatype);
                // SAFETY: `msg` describes header and data.
                let rc = unsafe { pmpi_isend(mode, b, n, ty, dest, tag, comm, request) };
                msg.free();
                rc
            }
        }
    }

    /// `MPI_Sendrecv`'s receive half completed with `status`: the
    /// caller's status written into `target` (corrected by the header when
    /// the message came through the receive scratch, `incoming`), and the
    /// receive counted as a blocking one (issued `seq`-th at clock `start`,
    /// record `index`; posted as `posting`), which acknowledges a
    /// synchronous sender.
    ///
    /// # Safety
    ///
    /// `target` is the caller's status or a local one; the receive
    /// completed and its scratch is untouched since.
    #[allow(clippy::too_many_arguments)]
    unsafe fn sendrecv_received(
        &mut self,
        recv: &RecvHalf,
        comm: MPI_Comm,
        (seq, start, index): (u64, u64, Option<u64>),
        posting: Posting,
        incoming: &Option<packed::Message>,
        status: MPI_Status,
        target: *mut MPI_Status,
    ) {
        let from_null = recv.source == proc_null();
        let mut received = None;
        if !target.is_null() {
            // SAFETY: the caller's contract.
            received =
                unsafe { self.sendrecv_status(target, status, incoming.as_ref(), from_null) };
        }
        if from_null {
            return;
        }
        let at = match incoming {
            Some(msg) if msg.is_packed() => HeaderAt::Wire,
            _ => HeaderAt::Scratch,
        };
        // SAFETY: the receive completed into `target`.
        unsafe {
            self.blocking_received(
                seq,
                comm,
                posting,
                recv.tag,
                start,
                index,
                recv.datatype,
                target,
                (at, received),
            )
        };
    }

    /// Writes the completed receive's `status` into `target`, corrected
    /// by the header when the message came through the receive scratch
    /// (`incoming`); from `MPI_PROC_NULL` (`from_null`), what MPI's own
    /// `MPI_Sendrecv` says.
    ///
    /// # Safety
    ///
    /// `target` is valid for writes; the receive of `incoming` completed
    /// and its scratch is untouched since. Returns what
    /// [`packed::unpack`] read of the status.
    unsafe fn sendrecv_status(
        &self,
        target: *mut MPI_Status,
        status: MPI_Status,
        incoming: Option<&packed::Message>,
        from_null: bool,
    ) -> Option<mpi_sys::MPI_Count> {
        // SAFETY: `target` is the caller's status or `local`.
        unsafe { *target = status };
        let mut received = None;
        if let Some(msg) = incoming {
            // SAFETY: the receive completed into `target`; the receive
            // scratch is untouched since.
            received = unsafe { packed::unpack(msg, self.hbytes as usize, target) };
        }
        if from_null {
            // What MPI's own `MPI_Sendrecv` says for no message (an
            // `MPI_Irecv` from `MPI_PROC_NULL` completed by
            // `MPI_Waitall` says less).
            // SAFETY: as above.
            unsafe { super::proc_null_status(target) };
            return None;
        }
        received
    }

    /// A synchronous `MPI_Sendrecv`'s acknowledgement: once the call
    /// succeeded, waits for it and merges the clock it carries; after a
    /// failure, cancels its receive.
    ///
    /// # Safety
    ///
    /// `ack` is the acknowledgement's receive into `ack_in`, or null.
    unsafe fn sendrecv_ack(&mut self, rc: c_int, ack: &mut MPI_Request) {
        if rc == SUCCESS {
            // SAFETY: the acknowledgement request posted above.
            if unsafe { self.block_on(ack, status_ignore(), None) } == SUCCESS {
                self.llcp.merge(&self.ack_in);
            }
        } else {
            Self::cancel(ack);
        }
    }

    /// `MPI_Sendrecv_replace`: the buffer is packed into scratch memory
    /// (grown as needed, kept), sent from there as `MPI_PACKED` while the
    /// receive goes straight into the buffer, as in [`Rt::sendrecv`].
    ///
    /// # Safety
    ///
    /// As for `MPI_Sendrecv_replace`.
    #[allow(clippy::too_many_arguments)]
    pub unsafe fn sendrecv_replace(
        &mut self,
        buf: *mut c_void,
        count: c_int,
        datatype: MPI_Datatype,
        dest: c_int,
        sendtag: c_int,
        source: c_int,
        recvtag: c_int,
        comm: MPI_Comm,
        status: *mut MPI_Status,
    ) -> c_int {
        let mut size: c_int = 0;
        // SAFETY: the caller's count, datatype and communicator.
        let rc = unsafe { mpi_sys::PMPI_Pack_size(count, datatype, comm, &mut size) };
        if rc != SUCCESS {
            return rc;
        }
        let size_bytes = usize::try_from(size).unwrap_or(0);
        if self.packed.len() < size_bytes {
            self.packed.resize(size_bytes, 0);
        }
        let mut position: c_int = 0;
        // SAFETY: `packed` holds `size` bytes, enough for the buffer.
        let rc = unsafe {
            mpi_sys::PMPI_Pack(
                buf,
                count,
                datatype,
                self.packed.as_mut_ptr().cast(),
                size,
                &mut position,
                comm,
            )
        };
        if rc != SUCCESS {
            return rc;
        }
        let sendbuf = self.packed.as_ptr().cast();
        // SAFETY: `packed` is not touched again until the send completed
        // inside `sendrecv`.
        unsafe {
            self.sendrecv_as(
                OpKind::SendrecvReplace,
                sendbuf,
                position,
                packed(),
                dest,
                sendtag,
                buf,
                count,
                datatype,
                source,
                recvtag,
                comm,
                status,
            )
        }
    }

    /// `MPI_Probe`.
    ///
    /// # Safety
    ///
    /// As for `MPI_Probe`.
    pub unsafe fn probe(
        &mut self,
        source: c_int,
        tag: c_int,
        comm: MPI_Comm,
        status: *mut MPI_Status,
    ) -> c_int {
        let posting = if source == proc_null() {
            Posting::plain(source)
        } else {
            self.posting(comm, source, tag, Waits::Block)
        };
        let index = record::begin(
            || {
                Self::p2p_record(
                    OpKind::Probe,
                    source,
                    posting.source,
                    tag,
                    comm,
                    0,
                    comm_type(),
                )
            },
            true,
        );
        let seq = self.next_seq();
        let start = self.llcp.now();
        let mut local = super::blank_status();
        let target = status_target(status, &mut local);
        self.det_alone(comm, posting.source);
        let rc = if !self.must_poll() || source == proc_null() {
            // SAFETY: the caller's arguments (the posted source).
            unsafe { mpi_sys::PMPI_Probe(posting.source, tag, comm, target) }
        } else {
            // SAFETY: as above, polled.
            unsafe {
                self.spin(|_| {
                    let mut flag: c_int = 0;
                    let rc = mpi_sys::PMPI_Iprobe(posting.source, tag, comm, &mut flag, target);
                    (rc != SUCCESS || flag != 0).then_some(rc)
                })
            }
        };
        self.det_waits_for(None);
        let found = rc == SUCCESS && read_status(target).is_some_and(|(s, _)| s != proc_null());
        if found {
            let event = posting.event.map(|event| BlockingEvent {
                event,
                pattern: Self::pattern(comm, posting, tag),
                start,
                record: index.unwrap_or(u64::MAX),
            });
            // SAFETY: the probe succeeded into `target`.
            unsafe { self.probe_done(seq, comm, event, target, false) };
        }
        finish_received(index, rc, target);
        rc
    }

    /// `MPI_Iprobe`: an event (and a record) only when it finds a message.
    ///
    /// # Safety
    ///
    /// As for `MPI_Iprobe`.
    pub unsafe fn iprobe(
        &mut self,
        source: c_int,
        tag: c_int,
        comm: MPI_Comm,
        flag: *mut c_int,
        status: *mut MPI_Status,
    ) -> c_int {
        let posting = if source == proc_null() {
            Posting::plain(source)
        } else {
            self.posting(comm, source, tag, Waits::Peek)
        };
        let start = self.llcp.now();
        let mut local = super::blank_status();
        let target = status_target(status, &mut local);
        let rc = if posting.hold {
            super::hold(flag)
        } else if posting.arrive && !flag.is_null() {
            // SAFETY: as below, polled until the announced message is
            // there (it was sent before its announcement).
            unsafe {
                self.spin(|_| {
                    let rc = mpi_sys::PMPI_Iprobe(posting.source, tag, comm, flag, target);
                    (rc != SUCCESS || *flag != 0).then_some(rc)
                })
            }
        } else {
            // SAFETY: the caller's arguments (the posted source).
            unsafe { mpi_sys::PMPI_Iprobe(posting.source, tag, comm, flag, target) }
        };
        // SAFETY: MPI wrote the flag when it succeeded.
        let found = rc == SUCCESS && !flag.is_null() && unsafe { *flag } != 0;
        if found && posting.undecided {
            self.det_undetermined();
        }
        if !found {
            Self::iprobe_missed(source, posting, tag, comm, rc);
            // SAFETY: MPI is initialised.
            unsafe { self.service(None) };
            return rc;
        }
        let event = posting.event.map(|_| self.llcp.next_event());
        let matched = read_status(target);
        let index = record::append(|| {
            let mut op = Self::p2p_record(
                OpKind::Iprobe,
                source,
                posting.source,
                tag,
                comm,
                1,
                comm_type(),
            );
            op.flags |= mbh_trace::op::flags::RETURNED;
            if let Some((s, t)) = matched {
                set_status(&mut op, s, t);
            }
            op
        });
        if matched.is_some_and(|(s, _)| s != proc_null()) {
            let seq = self.next_seq();
            let event = event.map(|event| BlockingEvent {
                event,
                pattern: Self::pattern(comm, posting, tag),
                start,
                record: index.unwrap_or(u64::MAX),
            });
            // SAFETY: the probe succeeded into `target`.
            unsafe { self.probe_done(seq, comm, event, target, false) };
        }
        rc
    }

    /// An `MPI_Iprobe` that found no message: recorded when it failed,
    /// else one poll of a loop that stands for an `MPI_Probe` of the same
    /// pattern.
    fn iprobe_missed(source: c_int, posting: Posting, tag: c_int, comm: MPI_Comm, rc: c_int) {
        if rc != SUCCESS {
            record::append(|| {
                let mut op = Self::p2p_record(
                    OpKind::Iprobe,
                    source,
                    posting.source,
                    tag,
                    comm,
                    0,
                    comm_type(),
                );
                op.flags |= mbh_trace::op::flags::RETURNED | mbh_trace::op::flags::FAILED;
                op.error = rc;
                op
            });
        } else {
            // In a polling loop, an `MPI_Probe` of the same pattern.
            record::poll(OpKind::Iprobe, || {
                Self::p2p_record(
                    OpKind::Probe,
                    source,
                    posting.source,
                    tag,
                    comm,
                    0,
                    comm_type(),
                )
            });
        }
    }
}

/// `MPI_Sendrecv`'s send as the caller gave it, and how it goes.
#[derive(Clone, Copy)]
struct SendHalf {
    buf: *const c_void,
    count: c_int,
    datatype: MPI_Datatype,
    dest: c_int,
    tag: c_int,
    /// The mode the send really uses ([`Rt::effective`]).
    mode: SendMode,
    /// `dest` in `MPI_COMM_WORLD` (-1 for `MPI_PROC_NULL`).
    dest_world: i32,
    /// A synchronous send to a real peer: it waits for an acknowledgement.
    sync: bool,
}

/// `MPI_Sendrecv`'s receive as the caller gave it.
#[derive(Clone, Copy)]
struct RecvHalf {
    buf: *mut c_void,
    count: c_int,
    datatype: MPI_Datatype,
    /// The source as given.
    source: c_int,
    /// The source given to MPI ([`Posting`]'s: the forced one in a guided
    /// run).
    posted: c_int,
    tag: c_int,
}

/// `MPI_Sendrecv`'s send side in its record's `request` word: the
/// destination in the low 32 bits, the send tag in the high 32.
fn sendrecv_send_word(dest: c_int, sendtag: c_int) -> u64 {
    u64::from(dest as u32) | u64::from(sendtag as u32) << 32
}

/// Probes have no datatype: their records hold 0 (a null handle's bits are
/// not needed).
fn comm_type() -> MPI_Datatype {
    // SAFETY: a plain handle newtype; the value is only stored as bits.
    unsafe { std::mem::zeroed() }
}
