//! Matched probes: `MPI_Mprobe`, `MPI_Improbe`, `MPI_Mrecv`,
//! `MPI_Imrecv`.
//!
//! A matched probe takes the message it finds, so for the clocks it is the
//! receive (R4 with `CompleteNow` of every pending event that accepts the
//! message, not only the first as for a probe, Fig 5.21): a wildcard one is
//! a wildcard event, posted with the forced source in a replay. Its status
//! counts the program's data only. The message's header arrives with the
//! data at `MPI_Mrecv`/`MPI_Imrecv`, which records the match (`Matched`,
//! naming the receive's record and the probe's event) and runs the
//! late-message checks (Fig 5.19/5.20) as of the probe, then acknowledges a
//! synchronous sender. `MPI_MESSAGE_NO_PROC` (a probe of `MPI_PROC_NULL`)
//! goes to MPI unchanged.

use super::{finish_received, read_status, status_target, HeaderAt, Posting, Rt, Waits};
use crate::consts::{bottom, proc_null, request_null, SUCCESS};
use crate::handle::HandleBits;
use crate::llcp::{BlockingEvent, Receive};
use crate::pending::Pending;
use crate::piggyback;
use crate::record::{self, set_status};
use crate::slots::{Kind, RecvState};
use mbh_trace::op::flags;
use mbh_trace::OpKind;
use mpi_sys::{MPI_Comm, MPI_Datatype, MPI_Message, MPI_Request, MPI_Status};
use std::os::raw::{c_int, c_void};

/// A message a matched probe took, until it is received.
#[derive(Debug, Clone, Copy)]
pub struct Probed {
    /// The probe's issue order among receives and probes.
    seq: u64,
    /// The probe's clock (its final clock when it was an event).
    clock: u64,
    /// Its wildcard event.
    event: Option<u32>,
    comm: MPI_Comm,
    /// Source (rank in `comm`) and tag of the message.
    source: c_int,
    tag: c_int,
}

/// Probes have no datatype: their records hold 0.
fn no_type() -> MPI_Datatype {
    // SAFETY: a plain handle newtype; the value is only stored as bits.
    unsafe { std::mem::zeroed() }
}

impl Rt {
    /// The posting of a (matched) probe: `MPI_PROC_NULL` has none.
    fn probe_posting(
        &mut self,
        comm: MPI_Comm,
        source: c_int,
        tag: c_int,
        waits: Waits,
    ) -> Posting {
        if source == proc_null() {
            Posting::plain(source)
        } else {
            self.posting(comm, source, tag, waits)
        }
    }

    /// A matched probe found the message `message` with `status`
    /// (unfixed): completes its clock and remembers the message.
    ///
    /// # Safety
    ///
    /// `status` is the probe's status, valid for writes; `message` non-null.
    #[allow(clippy::too_many_arguments)]
    unsafe fn took(
        &mut self,
        seq: u64,
        comm: MPI_Comm,
        posting: Posting,
        tag: c_int,
        start: u64,
        index: Option<u64>,
        status: *mut MPI_Status,
        message: *mut MPI_Message,
    ) {
        let Some((source, found_tag)) = read_status(status) else {
            return;
        };
        if source == proc_null() {
            return;
        }
        let event = posting.event.map(|event| BlockingEvent {
            event,
            pattern: Self::pattern(comm, posting, tag),
            start,
            record: index.unwrap_or(u64::MAX),
        });
        // SAFETY: the caller's contract.
        let clock = unsafe { self.probe_done(seq, comm, event, status, true) };
        // SAFETY: non-null, written by MPI.
        let bits = unsafe { *message }.bits();
        self.messages.insert(
            bits,
            Probed {
                seq,
                clock,
                event: posting.event,
                comm,
                source,
                tag: found_tag,
            },
        );
    }

    /// `MPI_Mprobe`.
    ///
    /// # Safety
    ///
    /// As for `MPI_Mprobe`.
    pub unsafe fn mprobe(
        &mut self,
        source: c_int,
        tag: c_int,
        comm: MPI_Comm,
        message: *mut MPI_Message,
        status: *mut MPI_Status,
    ) -> c_int {
        let posting = self.probe_posting(comm, source, tag, Waits::Block);
        let index = record::begin(
            || {
                Self::p2p_record(
                    OpKind::Mprobe,
                    source,
                    posting.source,
                    tag,
                    comm,
                    0,
                    no_type(),
                )
            },
            true,
        );
        let seq = self.next_seq();
        let start = self.llcp.now();
        let mut local = super::blank_status();
        let target = status_target(status, &mut local);
        let rc = if !self.must_poll() || source == proc_null() {
            // SAFETY: the caller's arguments (the posted source).
            unsafe { mpi_sys::PMPI_Mprobe(posting.source, tag, comm, message, target) }
        } else {
            // SAFETY: as above, polled.
            unsafe {
                self.spin(|_| {
                    let mut flag: c_int = 0;
                    let rc = mpi_sys::PMPI_Improbe(
                        posting.source,
                        tag,
                        comm,
                        &mut flag,
                        message,
                        target,
                    );
                    (rc != SUCCESS || flag != 0).then_some(rc)
                })
            }
        };
        if rc == SUCCESS && !message.is_null() {
            // SAFETY: the probe succeeded into `target` and `message`.
            unsafe { self.took(seq, comm, posting, tag, start, index, target, message) };
        }
        // SAFETY: non-null when it succeeded.
        let bits = (rc == SUCCESS && !message.is_null()).then(|| unsafe { *message }.bits());
        if let (Some(index), Some(bits)) = (index, bits) {
            record::update(index, |op| op.request = bits);
        }
        finish_received(index, rc, target);
        rc
    }

    /// `MPI_Improbe`: an event (and a record) only when it finds a message.
    ///
    /// # Safety
    ///
    /// As for `MPI_Improbe`.
    pub unsafe fn improbe(
        &mut self,
        source: c_int,
        tag: c_int,
        comm: MPI_Comm,
        flag: *mut c_int,
        message: *mut MPI_Message,
        status: *mut MPI_Status,
    ) -> c_int {
        let posting = self.probe_posting(comm, source, tag, Waits::Peek);
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
                    let rc =
                        mpi_sys::PMPI_Improbe(posting.source, tag, comm, flag, message, target);
                    (rc != SUCCESS || *flag != 0).then_some(rc)
                })
            }
        } else {
            // SAFETY: the caller's arguments (the posted source).
            unsafe { mpi_sys::PMPI_Improbe(posting.source, tag, comm, flag, message, target) }
        };
        // SAFETY: MPI wrote the flag when it succeeded.
        let found = rc == SUCCESS && !flag.is_null() && unsafe { *flag } != 0;
        if found && posting.undecided {
            self.det_undetermined();
        }
        if !found {
            Self::improbe_missed(source, posting, tag, comm, rc);
            // SAFETY: MPI is initialised.
            unsafe { self.service(None) };
            return rc;
        }
        let posting = Posting {
            event: posting.event.map(|_| self.llcp.next_event()),
            ..posting
        };
        let matched = read_status(target);
        let bits = if message.is_null() {
            0
        } else {
            // SAFETY: non-null, written by MPI.
            unsafe { *message }.bits()
        };
        let index = record::append(|| {
            let mut op = Self::p2p_record(
                OpKind::Improbe,
                source,
                posting.source,
                tag,
                comm,
                1,
                no_type(),
            );
            op.flags |= flags::RETURNED;
            op.request = bits;
            if let Some((s, t)) = matched {
                set_status(&mut op, s, t);
            }
            op
        });
        let seq = self.next_seq();
        if !message.is_null() {
            // SAFETY: the probe succeeded into `target` and `message`.
            unsafe { self.took(seq, comm, posting, tag, start, index, target, message) };
        }
        rc
    }

    /// An `MPI_Improbe` that found no message: recorded when it failed,
    /// else one poll of a loop that stands for an `MPI_Mprobe` of the same
    /// pattern.
    fn improbe_missed(source: c_int, posting: Posting, tag: c_int, comm: MPI_Comm, rc: c_int) {
        if rc != SUCCESS {
            record::append(|| {
                let mut op = Self::p2p_record(
                    OpKind::Improbe,
                    source,
                    posting.source,
                    tag,
                    comm,
                    0,
                    no_type(),
                );
                op.flags |= flags::RETURNED | flags::FAILED;
                op.error = rc;
                op
            });
        } else {
            // In a polling loop, an `MPI_Mprobe` of the same pattern.
            record::poll(OpKind::Improbe, || {
                Self::p2p_record(
                    OpKind::Mprobe,
                    source,
                    posting.source,
                    tag,
                    comm,
                    0,
                    no_type(),
                )
            });
        }
    }

    /// The record of a matched receive of `p` (or of `MPI_MESSAGE_NO_PROC`).
    fn mrecv_record(
        kind: OpKind,
        p: Option<Probed>,
        count: c_int,
        datatype: MPI_Datatype,
    ) -> mbh_trace::rank_trace::RawOp {
        match p {
            Some(p) => record::p2p(kind, p.source, p.tag, p.comm, count, datatype),
            None => {
                let mut op = record::p2p(kind, proc_null(), 0, no_comm(), count, datatype);
                op.flags |= flags::PROC_NULL;
                op
            }
        }
    }

    /// `MPI_Mrecv`.
    ///
    /// # Safety
    ///
    /// As for `MPI_Mrecv`.
    pub unsafe fn mrecv(
        &mut self,
        buf: *mut c_void,
        count: c_int,
        datatype: MPI_Datatype,
        message: *mut MPI_Message,
        status: *mut MPI_Status,
    ) -> c_int {
        let probed = if message.is_null() {
            None
        } else {
            // SAFETY: non-null: the caller's message.
            self.messages.remove(&unsafe { *message }.bits())
        };
        if probed.is_some() {
            crate::access::check_call(buf, count, datatype, true);
        }
        let index = record::begin(
            || Self::mrecv_record(OpKind::Mrecv, probed, count, datatype),
            true,
        );
        let Some(p) = probed else {
            // MPI_MESSAGE_NO_PROC, or a message the runtime did not see
            // probed: MPI's to answer.
            // SAFETY: the caller's arguments, passed on unchanged.
            let rc = unsafe { mpi_sys::PMPI_Mrecv(buf, count, datatype, message, status) };
            finish_received(index, rc, status);
            return rc;
        };
        let mut local = super::blank_status();
        let target = status_target(status, &mut local);
        let mut ty = datatype;
        // SAFETY: the scratch header outlives the receive below.
        let mut rc = unsafe {
            piggyback::struct_type(
                self.recv_hdr.as_ptr(),
                self.hbytes,
                buf,
                count,
                datatype,
                &mut ty,
            )
        };
        if rc == SUCCESS {
            rc = if !self.must_poll() {
                // SAFETY: the struct type describes the scratch header and
                // the user's buffer; the caller's message.
                unsafe { mpi_sys::PMPI_Mrecv(bottom(), 1, ty, message, target) }
            } else {
                let mut request = request_null();
                // SAFETY: as above; completed before returning.
                let rc = unsafe { mpi_sys::PMPI_Imrecv(bottom(), 1, ty, message, &mut request) };
                if rc == SUCCESS {
                    // SAFETY: the request just made.
                    unsafe { self.block_on(&mut request, target, None) }
                } else {
                    rc
                }
            };
            piggyback::free_type(&mut ty);
        }
        if rc == SUCCESS {
            let check = self.signature(datatype);
            // SAFETY: the receive succeeded into `target`.
            unsafe {
                self.receive_done(
                    p.seq,
                    p.comm,
                    Receive::Nonblocking(p.event),
                    target,
                    index,
                    HeaderAt::Scratch,
                    false,
                    (check, index),
                    Some(p.clock),
                    None,
                )
            };
        } else {
            // The message stays the program's to receive again.
            // SAFETY: non-null (it was found).
            self.messages.insert(unsafe { *message }.bits(), p);
        }
        finish_received(index, rc, target);
        rc
    }

    /// `MPI_Imrecv`: completed like an `MPI_Irecv`.
    ///
    /// # Safety
    ///
    /// As for `MPI_Imrecv`.
    pub unsafe fn imrecv(
        &mut self,
        buf: *mut c_void,
        count: c_int,
        datatype: MPI_Datatype,
        message: *mut MPI_Message,
        request: *mut MPI_Request,
    ) -> c_int {
        let probed = if message.is_null() {
            None
        } else {
            // SAFETY: non-null: the caller's message.
            self.messages.remove(&unsafe { *message }.bits())
        };
        if probed.is_some() {
            crate::access::check_call(buf, count, datatype, true);
        }
        let index = record::begin(
            || Self::mrecv_record(OpKind::Imrecv, probed, count, datatype),
            false,
        );
        let Some(p) = probed else {
            // SAFETY: the caller's arguments, passed on unchanged.
            let rc = unsafe { mpi_sys::PMPI_Imrecv(buf, count, datatype, message, request) };
            let mut bits = 0;
            if rc == SUCCESS && !request.is_null() {
                let id = self.slots.alloc(Kind::Plain { receive: true }, index);
                // SAFETY: non-null, just written by MPI.
                let handle = unsafe { *request };
                bits = handle.bits();
                self.track(id, handle);
                // As after `MPI_Irecv` (seed 000 §2.3.6.3).
                crate::access::watch(
                    id,
                    index,
                    Pending::Recv,
                    (buf.cast_const(), count, datatype),
                );
            }
            record::finish(index, rc, false, |op| op.request = bits);
            return rc;
        };
        let state = RecvState {
            seq: p.seq,
            comm: p.comm,
            event: p.event,
            observed: false,
            acked: false,
            sig: self.signature(datatype),
            probed: Some(p.clock),
            settled: None,
        };
        let id = self.slots.alloc(Kind::Recv(state), index);
        let mut ty = datatype;
        // SAFETY: the header lives in the slot until the request completes.
        let mut rc = unsafe {
            piggyback::struct_type(
                self.slots.header(id),
                self.hbytes,
                buf,
                count,
                datatype,
                &mut ty,
            )
        };
        if rc == SUCCESS {
            // SAFETY: the struct type describes the slot's header and the
            // user's buffer; the caller's message and request.
            rc = unsafe { mpi_sys::PMPI_Imrecv(bottom(), 1, ty, message, request) };
            piggyback::free_type(&mut ty);
        }
        let mut bits = 0;
        if rc == SUCCESS && !request.is_null() {
            // SAFETY: non-null, just written by MPI.
            let handle = unsafe { *request };
            bits = handle.bits();
            self.track(id, handle);
            self.slots.watch(id);
            // The program may not touch `buf` until the receive completes
            // (seed 000 §2.3.6.3), as after `MPI_Irecv`.
            crate::access::watch(
                id,
                index,
                Pending::Recv,
                (buf.cast_const(), count, datatype),
            );
        } else {
            self.slots.release(id);
            if !message.is_null() {
                // SAFETY: non-null: the caller's message, not received.
                self.messages.insert(unsafe { *message }.bits(), p);
            }
        }
        record::finish(index, rc, false, |op| op.request = bits);
        rc
    }
}

/// A communicator handle stored as 0 in records without one.
fn no_comm() -> MPI_Comm {
    // SAFETY: a plain handle newtype; only its bits are recorded.
    unsafe { std::mem::zeroed() }
}
