//! The protocol: piggybacked clocks on every message, LLCP/LVCP
//! ([`crate::llcp`]) at every receive, clocks through collectives,
//! acknowledgements of synchronous sends, guided replay, and the records
//! of it all.
//!
//! # Blocking, and acknowledgements
//!
//! A synchronous send (`MPI_Ssend`, `MPI_Issend`, or a standard send under
//! `--buffering zero`) carries [`SYNC`](crate::piggyback::SYNC); its sender
//! posts a receive for an acknowledgement on the shadow of
//! `MPI_COMM_WORLD` and, when the send completes, waits for it and merges
//! the receiver's clock (seed 000 §5.2.1, done with a message instead of the
//! MPI library's clear-to-send packet). The receiver acknowledges as soon
//! as it sees the receive complete: at the receive, at the `Wait`/`Test`
//! that completes it, when `CompleteNow` resolves it, or while it polls.
//!
//! Because the sender now waits for the receiver to see the message, a
//! receiver that blocks in MPI for something the sender does next must keep
//! watching its own outstanding receives, or the tool would add a
//! deadlock. So while any receive is outstanding (or a freed request is
//! still in flight), every blocking call the runtime makes is a loop of
//! `MPI_Test*` and [`Rt::service`], which polls those receives with
//! `MPI_Request_get_status` and acknowledges what completed
//! (`MPI_Waitall` polls its own array with `MPI_Testsome` instead, and
//! acknowledges each receive the pass it completes: `settle.rs`; how the
//! passes spin or yield: `backoff.rs`). When none is outstanding, blocking
//! calls go straight to MPI. Collectives always use
//! their nonblocking form (`MPI_Ibarrier`, ...) completed that way, so
//! every rank makes the same calls whatever it has outstanding.
//!
//! An acknowledgement sent before the receive's final clock is known
//! carries the current clock plus one and marks the pending events issued
//! before it (`MatchedWithSsend`, §5.2.1).

mod awaited;
mod backoff;
mod bsend;
mod choose;
mod coll;
mod complete;
mod deferred;
mod deterministic;
mod dtp;
mod early;
mod matched;
mod p2p;
mod persist;
mod posting;
mod prefix_chain;
mod root_flow;
mod settle;
mod watch_coll;

pub use coll::{pair_term, Coll, CollState, Flow};
pub use early::{Early, EarlyLeaves, EarlyStart, Span};
pub use p2p::SendMode;
pub use persist::PersistentOp;
pub use prefix_chain::PrefixCall;

use crate::checks::{self, Handlers, Resources};
use crate::choice::Choices;
use crate::comms::Comms;
use crate::consts::{
    any_source, any_tag, comm_world, request_null, status_ignore, uint64, SUCCESS,
};
use crate::handle::HandleBits;
use crate::llcp::{DoneEvent, Envelope, Llcp, Pattern, PendingEvent, Rank, Receive, Sink};
use crate::packed::{HandleCache, Wire};
use crate::piggyback::{self, Header};
use crate::record;
use crate::slots::{Kind, Settled, Slots};
use crate::state::fatal;
use crate::typesig::{self, Sig};
use backoff::Backoff;
use mbh_trace::check::Check;
use mbh_trace::config::{Buffering, Clocks, ForcedIndex, RuntimeConfig};
use mbh_trace::op::{flags, ReuseFound};
use mbh_trace::rank_trace::RawOp;
use mbh_trace::OpKind;
use mpi_sys::{MPI_Comm, MPI_Count, MPI_Datatype, MPI_Request, MPI_Status};
use posting::{Posting, Waits};
use std::collections::HashMap;
use std::os::raw::c_int;

/// Chunks of request slots made at start-up.
const INITIAL_CHUNKS: usize = 4;

/// Largest acknowledgement tag (MPI guarantees tags up to 32767).
const ACK_TAGS: u32 = 32000;

/// Where a received message's header is.
#[derive(Debug, Clone, Copy)]
enum HeaderAt {
    /// The scratch header of blocking receives (the struct path's).
    Scratch,
    /// The start of the packed receive scratch ([`Wire::received_header`]).
    Wire,
    /// A request slot.
    Slot(u32),
}

/// What a nonblocking probe deterministic mode holds back reports: no
/// message (yet).
fn hold(flag: *mut c_int) -> c_int {
    if !flag.is_null() {
        // SAFETY: the program's flag, non-null.
        unsafe { *flag = 0 };
    }
    SUCCESS
}

/// A zeroed status.
#[inline(always)]
pub fn blank_status() -> MPI_Status {
    // SAFETY: MPI_Status is a C struct of integers: all-zero is valid.
    unsafe { std::mem::zeroed() }
}

/// The caller's status, or `local` when the caller passed
/// `MPI_STATUS_IGNORE`. A null status is passed on for MPI to judge.
#[inline(always)]
pub fn status_target(status: *mut MPI_Status, local: &mut MPI_Status) -> *mut MPI_Status {
    if status == status_ignore() {
        local
    } else {
        status
    }
}

/// Makes `status` the empty status of a receive from `MPI_PROC_NULL`:
/// source `MPI_PROC_NULL`, tag `MPI_ANY_TAG`, count 0.
///
/// # Safety
///
/// `status` is valid for writes.
pub unsafe fn proc_null_status(status: *mut MPI_Status) {
    // SAFETY: the caller's contract.
    unsafe {
        (*status).MPI_SOURCE = crate::consts::proc_null();
        (*status).MPI_TAG = any_tag();
        mpi_sys::PMPI_Status_set_elements(status, crate::consts::byte(), 0);
    }
}

/// Source and tag of a status MPI filled in.
#[inline(always)]
pub fn read_status(status: *const MPI_Status) -> Option<(c_int, c_int)> {
    if status.is_null() || status == status_ignore() {
        return None;
    }
    // SAFETY: non-null and not the ignore sentinel: a status MPI wrote.
    let status = unsafe { &*status };
    Some((status.MPI_SOURCE, status.MPI_TAG))
}

/// Lets other processes on the same cores run while the runtime polls.
#[inline(always)]
fn pause() {
    // SAFETY: no arguments; always safe.
    unsafe { libc::sched_yield() };
}

/// Appends the records of the causality tracking.
struct Recorder;

impl Sink for Recorder {
    fn final_clock(&mut self, e: &DoneEvent) {
        // Posted for one sender: only `Rt::force` gives a wildcard event a
        // source, so this is the guidance's forcing, recorded where it
        // happened rather than worked out again by each reader.
        let forced = if e.pattern.source.is_some() {
            flags::FORCED
        } else {
            0
        };
        record::append(|| RawOp {
            kind: OpKind::WildcardClock as u16,
            flags: flags::RETURNED | forced,
            count: e.event as i32,
            request: e.record,
            comm: e.start,
            // The order, not the own component: see `Llcp::order`.
            aux: e.order,
            peer: e.matched.map_or(-1, |m| m.source),
            tag: e
                .matched
                .map_or_else(|| e.pattern.tag.unwrap_or_else(any_tag), |m| m.tag),
            ..RawOp::default()
        });
    }

    fn potential(&mut self, event: u32, sender: Rank, message_clock: u64, receiver: u64) {
        record::append(|| RawOp {
            kind: OpKind::PotentialMatch as u16,
            flags: flags::RETURNED,
            count: event as i32,
            peer: sender,
            aux: message_clock,
            request: receiver,
            ..RawOp::default()
        });
    }
}

/// The runtime of one rank.
pub struct Rt {
    rank: i32,
    config: RuntimeConfig,
    /// The guidance's forced matches by (rank, event), indexed once here:
    /// every wildcard event looks itself up (empty in a free run).
    forced: ForcedIndex,
    llcp: Llcp,
    /// Clock words (1, or the world size).
    width: usize,
    /// Index of the own component in the clock.
    me: usize,
    hwords: usize,
    hbytes: c_int,
    /// The shadow of `MPI_COMM_WORLD`: acknowledgements, `MPI_Finalize`.
    shadow: MPI_Comm,
    comms: Comms,
    slots: Slots,
    /// Issue order of receives and probes.
    seq: u64,
    ack_seq: u32,
    // Scratch memory for blocking calls.
    send_hdr: Vec<u64>,
    recv_hdr: Vec<u64>,
    msg: Vec<u64>,
    ack_in: Vec<u64>,
    ack_out: Vec<u64>,
    coll_in: Vec<u64>,
    coll_out: Vec<u64>,
    statuses: Vec<MPI_Status>,
    /// Scratch of a polled `MPI_Waitall` (`settle.rs`).
    settle: settle::Scratch,
    /// The requests a waiting call on several has yet to list
    /// (`awaited.rs`).
    awaited: awaited::Awaited,
    ids: Vec<Option<u32>>,
    handles: Vec<MPI_Request>,
    masked: Vec<usize>,
    order: Vec<(u64, usize, *mut MPI_Status)>,
    acks_due: Vec<u32>,
    packed: Vec<u8>,
    /// Scratch memory of the packed fast path of blocking calls.
    wire: Wire,
    /// Type signatures by datatype handle (dropped by `MPI_Type_free`).
    types: HandleCache<Sig>,
    /// The signature words of the last send and receive.
    sig_words: typesig::Memo,
    /// The error handlers the program chose.
    handlers: Handlers,
    /// Handles the program made and has not freed.
    resources: Resources,
    /// The collective signature checks (`coll.rs`).
    sigs: coll::SigChecks,
    /// Clock reductions of collectives this rank is not the root of, in
    /// flight (`root_flow.rs`).
    root_flows: root_flow::RootFlows,
    /// The program's rooted collectives this rank left before the others
    /// entered them, in flight (`early.rs`).
    early: early::EarlyLeaves,
    /// `MPI_Iscan`/`MPI_Iexscan` chains in flight (`prefix_chain.rs`).
    chains: prefix_chain::Chains,
    /// Persistent requests the program holds, by handle bits.
    persistent: HashMap<u64, persist::Persistent>,
    /// Program handles swapped out of an array for a completion call
    /// (index, handle).
    swapped: Vec<(usize, MPI_Request)>,
    /// The program called `MPI_Cancel` (completions then check for it).
    cancels: bool,
    /// Messages matched probes took and the program has not received yet,
    /// by message handle bits.
    messages: HashMap<u64, matched::Probed>,
    /// Requests of past choices among requests still to complete (seed
    /// 001 §4, `choose.rs`).
    choices: Choices,
    /// The clock (own component) of the message the last receive took.
    clock_in: u64,
    /// Scratch of a choice being made: the other requests of its array
    /// (index, record of the call that made it, offered at once).
    others: Vec<(i32, Option<u64>, bool)>,
    /// `mbhybrid run`'s deterministic mode (`deterministic.rs`).
    det: Option<Box<deterministic::Det>>,
    /// The buffer of buffered sends the program attached (`bsend.rs`).
    bsend: Option<bsend::AttachedBuffer>,
}

impl Rt {
    /// Sets up the protocol right after `MPI_Init`, on `shadows`, two
    /// duplicates of world (start_colls.rs makes them): the clocks, the
    /// request slots. Collective over world.
    pub fn start(
        rank: i32,
        size: i32,
        config: RuntimeConfig,
        shadows: [MPI_Comm; 2],
    ) -> Result<Rt, String> {
        backoff::decide_yielding(size);
        let [shadow, sig_shadow] = shadows;
        let (width, me) = match config.clocks {
            Clocks::Lamport => (1, 0),
            Clocks::Vector => (size.max(1) as usize, rank.max(0) as usize),
        };
        let hwords = piggyback::header_words(width);
        let hbytes = c_int::try_from(hwords * 8)
            .map_err(|_| format!("{size} ranks are too many for vector clocks"))?;
        let last_guided = config.guidance.as_ref().map(|g| g.last_guided_clock);
        let forced = config
            .guidance
            .as_ref()
            .map(|g| g.index())
            .unwrap_or_default();
        let det = config.deterministic.map(|d| {
            let patience = std::time::Duration::from_millis(u64::from(d.patience_ms));
            Box::new(deterministic::Det::new(size.max(1) as usize, patience))
        });
        let mut rt = Rt {
            rank,
            llcp: Llcp::new(width, me, last_guided),
            config,
            forced,
            width,
            me,
            hwords,
            hbytes,
            shadow,
            comms: Comms::new(size),
            slots: Slots::new(hwords, width, INITIAL_CHUNKS, request_null()),
            seq: 0,
            ack_seq: 0,
            send_hdr: vec![0; hwords],
            recv_hdr: vec![0; hwords],
            msg: vec![0; hwords],
            ack_in: vec![0; width],
            ack_out: vec![0; width],
            coll_in: vec![0; width],
            coll_out: vec![0; width],
            statuses: vec![blank_status(); 64],
            settle: settle::Scratch::default(),
            awaited: awaited::Awaited::default(),
            ids: Vec::with_capacity(64),
            handles: Vec::with_capacity(64),
            masked: Vec::with_capacity(64),
            order: Vec::with_capacity(64),
            acks_due: Vec::with_capacity(16),
            packed: Vec::new(),
            wire: Wire::new(hwords * 8),
            types: HandleCache::new(Sig::UNCHECKED),
            sig_words: typesig::Memo::default(),
            handlers: Handlers::new(),
            resources: Resources::new(),
            sigs: coll::SigChecks::new(sig_shadow)?,
            root_flows: root_flow::RootFlows::new(width),
            early: early::EarlyLeaves::new(),
            chains: prefix_chain::Chains::default(),
            persistent: HashMap::with_capacity(64),
            swapped: Vec::with_capacity(64),
            cancels: false,
            messages: HashMap::with_capacity(16),
            choices: Choices::new(),
            clock_in: 0,
            others: Vec::with_capacity(64),
            bsend: None,
            det,
        };
        // SAFETY: every rank starts the runtime in `MPI_Init`.
        unsafe { rt.det_attach(comm_world(), comm_world(), 0) };
        Ok(rt)
    }

    fn next_seq(&mut self) -> u64 {
        self.seq += 1;
        self.seq
    }

    fn next_ack_tag(&mut self) -> c_int {
        self.ack_seq = self.ack_seq.wrapping_add(1);
        (self.ack_seq % ACK_TAGS + 1) as c_int
    }

    fn zero_buffering(&self) -> bool {
        self.config.buffering == Buffering::Zero
    }

    /// Whether blocking must poll (see the module docs).
    #[inline]
    fn must_poll(&self) -> bool {
        !self.slots.watched().is_empty() || self.sigs.any_pending() || self.det.is_some()
    }

    /// Writes this rank's header into `words`.
    #[allow(clippy::too_many_arguments)]
    fn encode(
        words: &mut [u64],
        llcp: &Llcp,
        rank: i32,
        record: Option<u64>,
        sync: bool,
        ack_tag: c_int,
        signature: u64,
    ) {
        piggyback::encode(
            words,
            &Header {
                flags: if sync { piggyback::SYNC } else { 0 },
                sender: rank,
                ack_tag,
                op_index: record.unwrap_or(u64::MAX),
                signature,
                clock: llcp.clock(),
            },
        );
    }

    /// The type signature of `datatype` (asked of MPI once per handle).
    #[inline]
    pub fn signature(&mut self, datatype: MPI_Datatype) -> Sig {
        self.types
            .get_or_insert_with(datatype.bits(), || typesig::describe(datatype))
    }

    /// The header's signature word of a send of `count` x `datatype`.
    #[inline]
    fn send_signature(&mut self, count: c_int, datatype: MPI_Datatype) -> u64 {
        let sig = self.signature(datatype);
        self.sig_words.send_word(sig, count)
    }

    /// Forgets the signature of a datatype being freed (its handle may be
    /// reused).
    pub fn forget_type(&mut self, datatype: MPI_Datatype) {
        self.types.remove(datatype.bits());
        self.wire.forget_type(datatype);
        crate::buffer_check::forget_type(datatype);
    }

    /// The error handlers the program chose.
    pub fn handlers(&mut self) -> &mut Handlers {
        &mut self.handlers
    }

    /// The handles the program made and has not freed.
    pub fn resources(&mut self) -> &mut Resources {
        &mut self.resources
    }

    fn pattern(comm: MPI_Comm, posting: Posting, tag: c_int) -> Pattern {
        Pattern {
            comm: comm.bits(),
            source: posting.forced,
            tag: (tag != any_tag()).then_some(tag),
        }
    }

    /// Waits for `request` (see the module docs). `skip` is the slot of the
    /// request itself, not to be polled as a watched receive.
    ///
    /// # Safety
    ///
    /// `request` and `status` as for `MPI_Wait`.
    unsafe fn block_on(
        &mut self,
        request: *mut MPI_Request,
        status: *mut MPI_Status,
        skip: Option<u32>,
    ) -> c_int {
        if !self.must_poll() {
            // A forced `Waitany` waits here for its one request.
            self.list_awaited();
            // SAFETY: the caller's contract.
            return unsafe { mpi_sys::PMPI_Wait(request, status) };
        }
        let outer = self.det_blocking(true);
        let mut backoff = Backoff::new();
        loop {
            let mut flag: c_int = 0;
            // SAFETY: the caller's contract.
            let rc = unsafe { mpi_sys::PMPI_Test(request, &mut flag, status) };
            if rc != SUCCESS || flag != 0 {
                self.det_blocking(outer);
                return rc;
            }
            if backoff.serves() {
                // SAFETY: polls the runtime's own requests.
                unsafe { self.service(skip) };
            }
            if backoff.pause() {
                self.list_awaited();
            }
        }
    }

    /// Polls until `test` says done (returning the MPI code).
    ///
    /// # Safety
    ///
    /// `test` must make valid MPI calls.
    unsafe fn spin(&mut self, mut test: impl FnMut(&mut Self) -> Option<c_int>) -> c_int {
        let outer = self.det_blocking(true);
        let mut backoff = Backoff::new();
        loop {
            if let Some(rc) = test(self) {
                self.det_blocking(outer);
                return rc;
            }
            if backoff.serves() {
                // SAFETY: polls the runtime's own requests.
                unsafe { self.service(None) };
            }
            if backoff.pause() {
                self.list_awaited();
            }
        }
    }

    /// Polls the watched slots: acknowledges receives that completed with a
    /// synchronous sender, and completes requests the program freed.
    ///
    /// # Safety
    ///
    /// MPI must be initialised.
    pub unsafe fn service(&mut self, skip: Option<u32>) {
        if self.det.is_some() {
            self.det_pull();
            let blocked = self.det.as_ref().is_some_and(|d| d.blocked);
            self.det_answer(blocked);
            self.det_try_deferred();
        }
        self.sig_poll_all();
        self.root_flows.poll();
        self.early.poll();
        let mut i = 0;
        while let Some(&id) = self.slots.watched().get(i) {
            if Some(id) == skip {
                i += 1;
                continue;
            }
            let Some(slot) = self.slots.get(id).copied() else {
                self.slots.unwatch(id);
                continue;
            };
            let mut flag: c_int = 0;
            let mut status = blank_status();
            // SAFETY: a request the runtime holds; valid out-parameters.
            let rc =
                unsafe { mpi_sys::PMPI_Request_get_status(slot.request, &mut flag, &mut status) };
            if rc != SUCCESS || flag == 0 {
                i += 1;
                continue;
            }
            match slot.kind {
                Kind::Recv(_) if !slot.orphan => {
                    self.observe(id);
                    // SAFETY: a status MPI just filled.
                    if !(self.cancels && unsafe { persist::was_cancelled(&status) }) {
                        self.early_ack(id);
                        // The program completes it later, maybe never
                        // (a rank polling another request): meanwhile the
                        // wait-for graph must not count it as posted, or
                        // a message it could take would make that sender
                        // look "slow, not stuck", and a deadlock would
                        // end only at the timeout.
                        self.record_took(id);
                    }
                }
                Kind::Send(send) if send.sync && !self.ack_arrived(id) => {
                    i += 1;
                }
                _ if slot.orphan => {
                    // SAFETY: an orphaned request the runtime completes.
                    unsafe { self.reap(id) };
                }
                _ => self.slots.unwatch(id),
            }
        }
    }

    /// Marks receive slot `id` as seen complete.
    fn observe(&mut self, id: u32) {
        if let Some(slot) = self.slots.get_mut(id) {
            if let Kind::Recv(r) = &mut slot.kind {
                r.observed = true;
            }
            if !slot.orphan {
                self.slots.unwatch(id);
            }
        }
    }

    /// Acknowledges a completed receive before its final clock is known.
    fn early_ack(&mut self, id: u32) {
        let Some(slot) = self.slots.get(id).copied() else {
            return;
        };
        let Kind::Recv(r) = slot.kind else {
            return;
        };
        if r.acked {
            return;
        }
        let Some(header) = piggyback::decode(self.slots.header_words(id)) else {
            return;
        };
        if !header.sync() {
            return;
        }
        let (to, tag) = (header.sender, header.ack_tag);
        let marked = self.llcp.mark_ssend_upto(r.seq, r.comm.bits());
        self.send_ack(to, tag, marked);
        if let Some(Kind::Recv(r)) = self.slots.get_mut(id).map(|s| &mut s.kind) {
            r.acked = true;
        }
    }

    /// Sends the acknowledgement of a synchronous send: this rank's clock,
    /// the own component plus one when `bump`.
    fn send_ack(&mut self, to: i32, tag: c_int, bump: bool) {
        self.ack_out.copy_from_slice(self.llcp.clock());
        if bump {
            self.ack_out[self.me] += 1;
        }
        // SAFETY: `ack_out` holds `width` words; the sender pre-posted the
        // matching receive on the shadow communicator.
        let rc = unsafe {
            mpi_sys::PMPI_Send(
                self.ack_out.as_ptr().cast(),
                self.width as c_int,
                uint64(),
                to,
                tag,
                self.shadow,
            )
        };
        if rc != SUCCESS {
            fatal(format_args!(
                "cannot acknowledge a synchronous send to rank {to} (MPI error {rc})"
            ));
        }
    }

    /// Whether the acknowledgement of send slot `id` arrived (tests it).
    fn ack_arrived(&mut self, id: u32) -> bool {
        let Some(slot) = self.slots.get_mut(id) else {
            return true;
        };
        let Kind::Send(send) = &mut slot.kind else {
            return true;
        };
        if !send.sync || send.ack_arrived {
            return true;
        }
        let mut flag: c_int = 0;
        // SAFETY: the acknowledgement request the runtime posted.
        let rc = unsafe { mpi_sys::PMPI_Test(&mut send.ack, &mut flag, status_ignore()) };
        if rc != SUCCESS || flag != 0 {
            send.ack_arrived = true;
        }
        send.ack_arrived
    }

    /// Completes an orphaned request (freed by the program) that MPI
    /// reports complete.
    ///
    /// # Safety
    ///
    /// Slot `id` holds an orphan whose request is complete.
    unsafe fn reap(&mut self, id: u32) {
        let Some(slot) = self.slots.get(id).copied() else {
            return;
        };
        let mut request = slot.request;
        let mut status = blank_status();
        // SAFETY: a complete request the runtime holds.
        unsafe { mpi_sys::PMPI_Wait(&mut request, &mut status) };
        // SAFETY: the request completed with `status`.
        unsafe { self.complete_slot(id, &mut status, slot.record) };
    }

    /// After MPI completed slot `id`'s request (and freed it): processes a
    /// receive's message, or a synchronous send's acknowledgement; frees
    /// the slot. `completer` is the record of the call that completed it.
    ///
    /// # Safety
    ///
    /// `status` is the request's status, valid for writes.
    unsafe fn complete_slot(&mut self, id: u32, status: *mut MPI_Status, completer: Option<u64>) {
        let Some(slot) = self.slots.get(id).copied() else {
            return;
        };
        // SAFETY: the caller's contract.
        if unsafe { self.cancelled(id, status) } {
            return;
        }
        let mut clock_in = None;
        match slot.kind {
            Kind::Recv(r) => {
                // SAFETY: the caller's contract.
                let received = unsafe { self.unpack_slot(id, status) };
                // A receive's message clock judges the choices that left
                // it outstanding (seed 001 §4, `choose.rs`).
                // SAFETY: the caller's contract.
                clock_in = unsafe {
                    self.receive_done(
                        r.seq,
                        r.comm,
                        Receive::Nonblocking(r.event),
                        status,
                        completer,
                        HeaderAt::Slot(id),
                        r.acked,
                        (r.sig, slot.record),
                        r.probed,
                        received,
                    )
                }
                .map(|_| self.clock_in);
            }
            Kind::Send(send) if send.sync => {
                if !send.ack_arrived {
                    let mut ack = send.ack;
                    // SAFETY: the acknowledgement request the runtime
                    // posted; its buffer is the slot's, which stays.
                    unsafe { self.block_on(&mut ack, status_ignore(), Some(id)) };
                }
                let ack = self.slots.ack_words(id);
                self.llcp.merge(ack);
            }
            Kind::Coll(state) => self.coll_done(id, state, slot.record, completer),
            Kind::Send(_) | Kind::Plain { .. } | Kind::Free => {}
        }
        if let (Some(sent), Some(completer), false) = (slot.sent, completer, slot.orphan) {
            // SAFETY: the program completes the request in this call, so
            // its send buffer is still valid (MPI's rule); the slot holds
            // the copy that went.
            unsafe { self.check_send_buffer(id, sent, completer, slot.record) };
        }
        if let (false, Some(made)) = (self.choices.is_empty(), slot.record) {
            self.settle_choices(made, clock_in, completer);
        }
        self.slots.release(id);
    }

    /// `buffer-reuse` (DESIGN.md "Local checks"): a packed nonblocking send
    /// (slot `id`) completed by the program's call `completer`; its buffer
    /// `sent` no longer holds what was copied into the message, so the
    /// program wrote to it while MPI could still read it (with plain MPI
    /// the receiver could get either contents). Only packed sends are
    /// checked: their copy costs nothing more to compare.
    ///
    /// # Safety
    ///
    /// `sent` is the user's send buffer, valid for reads.
    unsafe fn check_send_buffer(
        &mut self,
        id: u32,
        (buf, bytes): (*const u8, usize),
        completer: u64,
        send: Option<u64>,
    ) {
        let copy = self.slots.header(id).cast::<u8>().cast_const();
        // SAFETY: the slot (or its room) holds the header and the `bytes`
        // packed after it; the caller's contract for `buf`.
        let same = unsafe {
            std::slice::from_raw_parts(copy.add(self.hbytes as usize), bytes)
                == std::slice::from_raw_parts(buf, bytes)
        };
        if !same {
            checks::report(
                Check::BufferReuse {
                    found: ReuseFound::Changed,
                    operation_record: send.unwrap_or(u64::MAX),
                    threads: Default::default(),
                },
                checks::site_of(completer),
                completer,
            );
        }
    }

    /// A packed nonblocking receive (slot `id`) completed with `status` (not
    /// yet fixed): copies its data from after the slot's header to the
    /// user's buffer, once.
    ///
    /// # Safety
    ///
    /// `status` is null, ignored or the completed receive's status.
    unsafe fn unpack_slot(&mut self, id: u32, status: *const MPI_Status) -> Option<MPI_Count> {
        let (to, capacity) = self.slots.get_mut(id)?.unpack?;
        let from = self.slots.header(id).cast::<u8>().cast_const();
        // SAFETY: the slot (or its room) holds the header and `capacity`
        // bytes MPI wrote; `to` is the user's receive buffer.
        let received = unsafe {
            crate::packed::unpack_data(from, self.hbytes as usize, to, capacity, status)
        }?;
        if let Some(slot) = self.slots.get_mut(id) {
            slot.unpack = None;
        }
        Some(received)
    }

    /// A receive completed with `status` (not yet fixed) and its header at
    /// `header`: fixes the status, completes the receive's clock (R4),
    /// records the match and the potential matches, acknowledges a
    /// synchronous sender, checks the sender's type signature against
    /// `check` (the receive's datatype, and the record a mismatch names).
    /// `probed`: the message was taken by a matched probe (`MPI_Mprobe`)
    /// issued `seq`-th whose clock is this (its R4 is done).
    /// Returns the message's envelope.
    ///
    /// # Safety
    ///
    /// `status` is the receive's status, valid for writes.
    #[allow(clippy::too_many_arguments)]
    unsafe fn receive_done(
        &mut self,
        seq: u64,
        comm: MPI_Comm,
        receive: Receive,
        status: *mut MPI_Status,
        receiver: Option<u64>,
        header: HeaderAt,
        acked: bool,
        check: (Sig, Option<u64>),
        probed: Option<u64>,
        received: Option<MPI_Count>,
    ) -> Option<Envelope> {
        if status.is_null() {
            return None;
        }
        // SAFETY: the caller's contract, and `status` is not null.
        let bytes = unsafe { self.load_header(status, header, received) };
        // SAFETY: as above.
        let tag = unsafe { (*status).MPI_TAG };
        let Some(h) = piggyback::decode(&self.msg) else {
            // SAFETY: as above.
            let source = unsafe { (*status).MPI_SOURCE };
            fatal(format_args!(
                "a message from rank {source} (tag {tag}) arrived without mbhybrid's header: it was sent by a call the runtime does not see"
            ));
        };
        let envelope = Envelope {
            source: h.sender,
            tag,
        };
        check_signature(&mut self.sig_words, &h, check, bytes);
        let event = match receive {
            Receive::Blocking(b) => b.map(|b| b.event),
            Receive::Nonblocking(e) => e,
        };
        let receiver_index = receiver.unwrap_or(u64::MAX);
        self.acks_due.clear();
        // A message a matched probe took was matched (R4) at the probe.
        let posted = match probed {
            Some(posted) => posted,
            None => {
                let (slots, acks) = (&mut self.slots, &mut self.acks_due);
                self.llcp.complete(
                    seq,
                    comm.bits(),
                    envelope,
                    receive,
                    false,
                    |p| resolve(slots, acks, p),
                    &mut Recorder,
                )
            }
        };
        let message_clock = h.clock.get(self.me).copied().unwrap_or(0);
        self.clock_in = message_clock;
        record::append(|| RawOp {
            kind: OpKind::Matched as u16,
            flags: flags::RETURNED,
            request: receiver_index,
            peer: h.sender,
            aux: h.op_index,
            comm: message_clock,
            count: event.map_or(-1, |e| e as i32),
            ..RawOp::default()
        });
        self.llcp.incoming(
            seq,
            comm.bits(),
            envelope,
            h.clock,
            posted,
            receiver_index,
            &mut Recorder,
        );
        let (sync, to, ack_tag) = (h.sync(), h.sender, h.ack_tag);
        if sync && !acked {
            self.send_ack(to, ack_tag, false);
        }
        self.ack_resolved();
        if self.det.is_some() {
            // SAFETY: as above.
            let source = unsafe { (*status).MPI_SOURCE };
            self.det_received(comm, source);
        }
        Some(envelope)
    }

    /// The bytes of data of a received message, with its `status` fixed
    /// (the header's bytes taken out of its count) and its header copied
    /// into `self.msg` from where it arrived (`header`). Stops the job for
    /// a message too short to hold a header.
    ///
    /// # Safety
    ///
    /// `status` is the receive's status, not null, valid for writes.
    unsafe fn load_header(
        &mut self,
        status: *mut MPI_Status,
        header: HeaderAt,
        received: Option<MPI_Count>,
    ) -> u64 {
        // SAFETY: the caller's contract.
        let Some(bytes) = (unsafe { piggyback::fix_status(status, self.hbytes, received) }) else {
            // SAFETY: as above.
            let source = unsafe { (*status).MPI_SOURCE };
            fatal(format_args!(
                "a message from rank {source} arrived without mbhybrid's header: it was sent by a call the runtime does not see"
            ));
        };
        match header {
            HeaderAt::Scratch => self.msg.copy_from_slice(&self.recv_hdr),
            HeaderAt::Wire => self.msg.copy_from_slice(self.wire.received_header()),
            HeaderAt::Slot(id) => self.msg.copy_from_slice(self.slots.header_words(id)),
        }
        bytes
    }

    /// Acknowledges the synchronous senders of the receives `CompleteNow`
    /// just resolved (their final clocks are now known).
    fn ack_resolved(&mut self) {
        for i in 0..self.acks_due.len() {
            let id = self.acks_due[i];
            let Some(header) = piggyback::decode(self.slots.header_words(id)) else {
                continue;
            };
            let (to, tag) = (header.sender, header.ack_tag);
            self.send_ack(to, tag, false);
            if let Some(Kind::Recv(r)) = self.slots.get_mut(id).map(|s| &mut s.kind) {
                r.acked = true;
            }
        }
        self.acks_due.clear();
    }

    /// A probe found a message with `status`: fixes the status and
    /// completes the probe's clock (R4, Fig 5.21; a matched probe, which
    /// takes the message, as a receive). Returns the probe's clock.
    ///
    /// # Safety
    ///
    /// `status` is the probe's status, valid for writes.
    unsafe fn probe_done(
        &mut self,
        seq: u64,
        comm: MPI_Comm,
        event: Option<crate::llcp::BlockingEvent>,
        status: *mut MPI_Status,
        takes: bool,
    ) -> u64 {
        if status.is_null() {
            return self.llcp.now();
        }
        // SAFETY: the caller's contract.
        let (source, tag) = unsafe { ((*status).MPI_SOURCE, (*status).MPI_TAG) };
        // SAFETY: as above.
        if unsafe { piggyback::fix_status(status, self.hbytes, None) }.is_none() {
            fatal(format_args!(
                "a message from rank {source} (tag {tag}) arrived without mbhybrid's header: it was sent by a call the runtime does not see"
            ));
        }
        let envelope = Envelope {
            source: self.comms.world_rank(comm, source),
            tag,
        };
        if takes {
            self.det_claim(comm, source, tag);
        }
        self.acks_due.clear();
        let clock = {
            let (slots, acks) = (&mut self.slots, &mut self.acks_due);
            self.llcp.complete(
                seq,
                comm.bits(),
                envelope,
                Receive::Blocking(event),
                !takes,
                |p| resolve(slots, acks, p),
                &mut Recorder,
            )
        };
        self.ack_resolved();
        clock
    }

    /// A blocking receive (posted as `posting` with `tag`, issued `seq`-th
    /// at clock `start`, record `index`) completed into `status` with its
    /// header at `header` (the status counting `received` bytes, header
    /// included, when the unpack read it).
    ///
    /// # Safety
    ///
    /// `status` is the receive's status, valid for writes.
    #[allow(clippy::too_many_arguments)]
    unsafe fn blocking_received(
        &mut self,
        seq: u64,
        comm: MPI_Comm,
        posting: Posting,
        tag: c_int,
        start: u64,
        index: Option<u64>,
        datatype: MPI_Datatype,
        status: *mut MPI_Status,
        (header, received): (HeaderAt, Option<MPI_Count>),
    ) {
        if self.det.is_some() && posting.source == any_source() && !status.is_null() {
            // SAFETY: the caller's contract.
            let (source, found) = unsafe { ((*status).MPI_SOURCE, (*status).MPI_TAG) };
            self.det_took_unclaimed(comm, source, found);
        }
        let check = self.signature(datatype);
        let event = posting.event.map(|event| crate::llcp::BlockingEvent {
            event,
            pattern: Self::pattern(comm, posting, tag),
            start,
            record: index.unwrap_or(u64::MAX),
        });
        // SAFETY: the caller's contract.
        unsafe {
            self.receive_done(
                seq,
                comm,
                Receive::Blocking(event),
                status,
                index,
                header,
                false,
                (check, index),
                None,
                received,
            )
        };
    }

    /// Cancels and completes a request the runtime posted (an
    /// acknowledgement no longer expected).
    fn cancel(request: &mut MPI_Request) {
        if request.bits() == request_null().bits() {
            return;
        }
        // SAFETY: a receive request the runtime posted.
        unsafe {
            mpi_sys::PMPI_Cancel(request);
            mpi_sys::PMPI_Wait(request, status_ignore());
        }
    }

    /// `MPI_Finalize`: rule R5 over world, then the shadows are freed.
    ///
    /// # Safety
    ///
    /// As for `MPI_Finalize`.
    pub unsafe fn finalize(&mut self) -> c_int {
        let index = record::begin(
            || RawOp {
                kind: OpKind::Finalize as u16,
                site: record::site(),
                ..RawOp::default()
            },
            true,
        );
        // SAFETY: MPI is initialised.
        unsafe { self.service(None) };
        self.report_leaks();
        self.det_finish();
        let shadow = self.shadow;
        let rank = self.rank;
        // SAFETY: the world shadow is valid until freed below.
        unsafe { self.exchange(shadow, 0, Flow::All, rank) };
        // Every rank is here: the checks and clock exchanges every rank
        // started can complete (those of collectives the program never
        // completed too, so no runtime request outlives MPI).
        self.root_flows_wait_all();
        self.early_wait_all();
        self.sig_wait_all();
        let colls: Vec<u32> = self.slots.ids_in_use().collect();
        for id in colls {
            let Some(slot) = self.slots.get_mut(id) else {
                continue;
            };
            let mut request = slot.request;
            if let Kind::Coll(state) = &mut slot.kind {
                let mut exchange = state.exchange;
                state.exchange = request_null();
                let chain = std::mem::replace(&mut state.chain, coll::NO_CHAIN);
                // SAFETY: the runtime's exchange request.
                unsafe { self.block_on(&mut exchange, status_ignore(), Some(id)) };
                if chain != coll::NO_CHAIN {
                    // A scan's chain the program never completed: the rank
                    // above waits for it (`prefix_chain.rs`).
                    // SAFETY: the chain's receive, which the program left.
                    unsafe { self.block_on(&mut request, status_ignore(), Some(id)) };
                    self.chain_done(chain);
                }
            }
        }
        self.sig_free_all();
        self.det_close();
        // Synchronous sends the program never completed (or freed, and MPI
        // never completed): stop waiting for their acknowledgements, so no
        // receive stays posted on the shadow.
        let unfinished: Vec<u32> = self.slots.ids_in_use().collect();
        for id in unfinished {
            if let Some(Kind::Send(send)) = self.slots.get_mut(id).map(|s| &mut s.kind) {
                if send.sync && !send.ack_arrived {
                    Self::cancel(&mut send.ack);
                    send.ack_arrived = true;
                }
            }
        }
        let shadows: Vec<MPI_Comm> = self.comms.take_shadows().collect();
        for mut comm in shadows {
            // SAFETY: a shadow the runtime made.
            unsafe { mpi_sys::PMPI_Comm_free(&mut comm) };
        }
        // SAFETY: the world shadow, made at start.
        unsafe { mpi_sys::PMPI_Comm_free(&mut self.shadow) };
        crate::state::deactivate();
        // SAFETY: no arguments.
        let rc = unsafe { mpi_sys::PMPI_Finalize() };
        record::finish(index, rc, true, |_| {});
        rc
    }

    /// At `MPI_Finalize`: every request the program still holds
    /// (`RequestLeak`, at the call that made it; `aux` = the request's
    /// bits) and every handle it made and never freed (`ResourceLeak`,
    /// `aux` = the handle's bits).
    pub(crate) fn report_leaks(&mut self) {
        for id in self.slots.ids_in_use() {
            let Some(slot) = self.slots.get(id) else {
                continue;
            };
            if slot.orphan || self.is_inner(slot.request) {
                continue;
            }
            let at = slot.record.unwrap_or(u64::MAX);
            checks::report(
                Check::RequestLeak {
                    request: slot.request.bits(),
                },
                checks::site_of(at),
                at,
            );
        }
        self.report_persistent_leaks();
        for r in self.resources.live() {
            checks::report(
                Check::ResourceLeak {
                    resource: r.kind as i32,
                    handle: r.bits,
                },
                r.site,
                u64::MAX,
            );
        }
    }

    /// Makes a record of a point-to-point call, with the source actually
    /// posted.
    fn p2p_record(
        kind: OpKind,
        peer: c_int,
        posted: c_int,
        tag: c_int,
        comm: MPI_Comm,
        count: c_int,
        datatype: mpi_sys::MPI_Datatype,
    ) -> RawOp {
        let mut op = record::p2p(kind, peer, tag, comm, count, datatype);
        op.peer = posted;
        op
    }
}

/// Completes the record `index` of a blocking call that returned `rc` with
/// `status` (a receive's or probe's: the matched source and tag go in the
/// record; null or `MPI_STATUS_IGNORE` for none).
pub(super) fn finish_received(index: Option<u64>, rc: c_int, status: *const MPI_Status) {
    let matched = if rc == SUCCESS {
        read_status(status)
    } else {
        None
    };
    record::finish(index, rc, true, |op| {
        if let Some((source, tag)) = matched {
            record::set_status(op, source, tag);
        }
    });
}

/// Stores the receive status `status` (null or `MPI_STATUS_IGNORE`: none)
/// in the record `index` of a call that already returned: a `Test` that
/// completed a receive, the `Irecv` whose request completed.
pub(super) fn status_into(index: Option<u64>, status: *const MPI_Status) {
    if let (Some(index), Some((source, tag))) = (index, read_status(status)) {
        record::update(index, |op| record::set_status(op, source, tag));
    }
}

/// Waits until the request of pending event `p` completes (it matched:
/// something issued after it matched a message it accepts) and returns what
/// it matched (Fig 5.22's `MPI_Request_get_status`). A synchronous sender
/// is queued in `acks` for acknowledgement.
fn resolve(slots: &mut Slots, acks: &mut Vec<u32>, p: &PendingEvent) -> Option<Envelope> {
    let id = p.token;
    let slot = slots.get(id).copied()?;
    let Kind::Recv(r) = slot.kind else {
        return None;
    };
    let tag = match r.settled {
        // A polled `MPI_Waitall` already completed it: MPI freed the
        // request, its status is what the runtime kept.
        Some(Settled::Tag(tag)) => tag,
        Some(Settled::Cancelled) => return None,
        None => {
            let mut status = blank_status();
            loop {
                let mut flag: c_int = 0;
                // SAFETY: a receive request the runtime holds; valid
                // out-parameters.
                let rc = unsafe {
                    mpi_sys::PMPI_Request_get_status(slot.request, &mut flag, &mut status)
                };
                if rc != SUCCESS {
                    return None;
                }
                if flag != 0 {
                    break;
                }
                pause();
            }
            // SAFETY: a status MPI just filled.
            if unsafe { persist::was_cancelled(&status) } {
                return None;
            }
            status.MPI_TAG
        }
    };
    if let Some(s) = slots.get_mut(id) {
        if let Kind::Recv(r) = &mut s.kind {
            r.observed = true;
        }
        if !s.orphan {
            slots.unwatch(id);
        }
    }
    let header = piggyback::decode(slots.header_words(id))?;
    if header.sync() && !r.acked {
        acks.push(id);
    }
    Some(Envelope {
        source: header.sender,
        tag,
    })
}

/// Treats `ptr` as a buffer of `words` words (for headers).
///
/// # Safety
///
/// `ptr` must be valid for `words` words and not otherwise referenced.
unsafe fn words_mut<'a>(ptr: *mut u64, words: usize) -> &'a mut [u64] {
    // SAFETY: the caller's contract.
    unsafe { std::slice::from_raw_parts_mut(ptr, words) }
}
/// Reports a `type-mismatch` when the sender's type signature in header
/// `h` is not what the receive's datatype expects of `bytes` of data
/// (`check`: that datatype, and the record the finding names).
fn check_signature(
    sig_words: &mut typesig::Memo,
    h: &Header<'_>,
    check: (Sig, Option<u64>),
    bytes: u64,
) {
    if typesig::mismatch(h.signature, sig_words.expected(check.0, bytes)) {
        let at = check.1.unwrap_or(u64::MAX);
        checks::report(
            Check::TypeMismatch {
                sender: h.sender,
                send_record: h.op_index,
            },
            checks::site_of(at),
            at,
        );
    }
}
