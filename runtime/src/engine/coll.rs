//! Collectives: the program's collective in its nonblocking form, then the
//! clocks in the direction its data flows (seed 000 Fig 5.7, rule R5), on
//! the communicator's clock shadow:
//!
//! | [`Flow`] | calls | clocks |
//! | --- | --- | --- |
//! | `All` | `Barrier`, `Allreduce`, `Allgather(v)`, `Alltoall(v/w)`, `Reduce_scatter(_block)`, communicator constructors, `Finalize` | maximum over all ranks (`MPI_Iallreduce`) |
//! | `FromRoot` | `Bcast`, `Scatter(v)` | the others take the maximum of theirs and the root's (`MPI_Ibcast`); the root keeps its own and waits for nothing more than the collective itself made it wait for |
//! | `ToRoot` | `Reduce`, `Gather(v)` | the root takes the maximum of all (`MPI_Ireduce`); the others keep theirs and wait for nothing more than the collective itself made them wait for |
//! | `Prefix` | `Scan` | rank `i` takes the maximum of ranks `0..=i` (`MPI_Iscan`) |
//! | `ExclusivePrefix` | `Exscan` | rank `i` takes the maximum of ranks `0..i` and its own (`MPI_Iexscan`) |
//!
//! No flow is more synchronising than MPI's own (seed 003 Fig 4, SCENARIOS
//! S11): a rooted or prefix collective orders only what its data orders.
//! A rank that only sends in a rooted collective leaves the clock exchange
//! in flight (`root_flow.rs`), and in a guided run the program's call too
//! (`early.rs`), so a forced match that needs it to leave before the others
//! enter can happen whatever the MPI library does.
//!
//! # Nonblocking collectives
//!
//! `MPI_Ibarrier` ... `MPI_Iexscan` start the program's collective and the
//! clock exchange together, with each rank's clock at its call; the
//! exchange's buffers live in a request slot ([`Kind::Coll`]) tracked under
//! the program's request, and the exchanged clock is merged when whatever
//! `Wait`/`Test` completes that request (`complete_slot`), which also
//! appends a `CollectiveComplete` record naming the completing call.
//!
//! # The collective signature check
//!
//! Before each collective (blocking or not) on an intracommunicator, the
//! runtime starts one `MPI_Iallreduce` of `[h, !h, p, u]` on the
//! communicator's *signature shadow*, a second duplicate that carries
//! nothing else, so its operations match one for one whatever the
//! program's collectives are (the same call, count, datatype and operation
//! for every collective: a rank calling `Alltoallv` where another calls
//! `Bcast` must still meet it there). `h` hashes the collective's kind, its
//! root (rooted ones) and the type signature of what the rank contributes
//! where MPI requires equal signatures; the first two words are reduced
//! with `MAX`, and all ranks agree exactly when they come back `[h, !h]`.
//!
//! `p` and `u` check what no single word per rank can: the pairwise counts
//! of the `v` and `w` forms (`Gatherv`, `Scatterv`, `Allgatherv`,
//! `Alltoallv`, `Alltoallw`), where rank `i`'s block for rank `j` must
//! have the signature of what `j` expects from `i` (MPI requires it pair
//! by pair, so equal totals do not prove a match). Each rank
//! adds [`pair_term`]`(me, j, sent)` for what it sends every `j` and
//! subtracts `pair_term(i, me, expected)` for what it expects from every
//! `i`; `p` is reduced by wrapping sum, which is 0 when every pair agrees
//! (each term cancels its peer's) and, with 64-bit hashes, not 0 when one
//! does not. `u` (reduced with `MAX`) is 1 when some rank could not describe
//! one of its blocks (`MPI_PACKED`, say), and then `p` is ignored. Every
//! other collective sends `p = u = 0`. Summing into the existing reduction
//! costs no message and no synchronisation that the check did not already
//! have; exchanging the words per pair (`MPI_Ialltoall`) before the call
//! would have, and would not match the other ranks' reductions when the
//! ranks disagree on the collective itself. The reduction is one element of
//! a contiguous type of four words, so MPI never splits it between calls of
//! the operation ([`combine`]).
//!
//! The check is completed lazily: polled while the rank blocks anywhere
//! (`service`), at the next collective on the communicator, waited for at
//! `MPI_Comm_free` and `MPI_Finalize`, and waited for at once only when the
//! program's collective failed. So it adds no synchronisation: a root
//! leaves `MPI_Bcast` as early as MPI lets it. At most [`RING`] checks per
//! communicator are outstanding; the oldest is waited for to make room.
//!
//! A mismatch is recorded on every rank of the communicator (a
//! `CollectiveMismatch` local check at that rank's call), then the ranks
//! report to the communicator's rank 0 on the signature shadow, which stops
//! the job (`MPI_Abort`, code [`MISMATCH_EXIT`]) once all have recorded:
//! the program's mismatched collectives never get to hang or to write into
//! the wrong buffers for long.

use super::early::Early;
use super::Rt;
use crate::checks;
use crate::consts::{comm_world, op_max, op_min, request_null, status_ignore, uint64, SUCCESS};
use crate::handle::HandleBits;
use crate::record::{self, REQUESTS};
use crate::slots::Kind;
use crate::state::fatal;
use crate::typesig;
use mbh_trace::check::Check;
use mbh_trace::op::flags;
use mbh_trace::rank_trace::RawOp;
use mbh_trace::OpKind;
use mpi_sys::{MPI_Comm, MPI_Datatype, MPI_Op, MPI_Request};
use std::io::Write;
use std::os::raw::{c_int, c_void};
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

/// How many communicators this process named (`Rt::name`).
static NAMED: AtomicU32 = AtomicU32::new(0);

pub use mbh_trace::op::DataFlow as Flow;

/// Outstanding signature checks per communicator, at most.
pub const RING: usize = 64;

/// Exit code of a job stopped for a collective mismatch.
pub const MISMATCH_EXIT: c_int = mbh_trace::op::COLLECTIVE_MISMATCH_EXIT;

/// Tag of the "recorded" notes sent to the leader after a mismatch (the
/// signature shadow carries no other point-to-point message).
const MISMATCH_TAG: c_int = 1;

/// A nonblocking collective's clock exchange in flight.
#[derive(Debug, Clone, Copy)]
pub struct CollState {
    /// The exchange's request on the clock shadow.
    pub exchange: MPI_Request,
    /// Its flow.
    pub flow: Flow,
    /// This rank takes the exchanged clock (the root of a `ToRoot` flow,
    /// any rank but the first of an `ExclusivePrefix` one, everyone else).
    pub takes: bool,
    /// The prefix chain the request finishes (`prefix_chain.rs`), or
    /// [`NO_CHAIN`].
    pub chain: u32,
}

/// [`CollState::chain`] of a collective run by the MPI library.
pub const NO_CHAIN: u32 = u32::MAX;

/// One signature check.
#[derive(Debug, Clone, Copy)]
struct SigCheck {
    request: MPI_Request,
    /// `[h, !h, p, u]` sent, then their reduction received (module docs).
    words: [u64; 2 * WORDS],
    /// The collective's number among this communicator's collectives.
    seq: u64,
    /// Its record, site and kind, for the report.
    record: Option<u64>,
    site: u32,
    kind: u16,
}

/// The signature checks of one communicator.
struct SigShadow {
    comm: u64,
    /// The program freed the communicator with checks outstanding
    /// ([`Rt::sig_forget`]): its handle may name a new one, so lookups
    /// skip the entry, and `MPI_Finalize` completes its checks.
    retired: bool,
    shadow: MPI_Comm,
    /// Collectives started on the communicator.
    next: u64,
    /// Outstanding checks: a ring over `checks` (boxed, so MPI's buffers
    /// never move).
    checks: Box<[SigCheck; RING]>,
    head: usize,
    len: usize,
}

/// Every communicator's signature checks.
pub struct SigChecks {
    entries: Vec<SigShadow>,
    /// Outstanding checks over all communicators.
    pending: usize,
    /// Entries of freed communicators still held for their checks
    /// ([`Rt::sig_forget`]).
    retired: usize,
    /// The checks' datatype: [`WORDS`] contiguous `u64`s.
    word: MPI_Datatype,
    /// Their operation ([`combine`]).
    op: MPI_Op,
}

/// How long `MPI_Comm_free` waits for the communicator's signature checks
/// before leaving them to `MPI_Finalize` ([`Rt::sig_forget`]): long enough
/// for checks every member has started, short beside the hang monitor's
/// patience.
const COMM_FREE_WAIT: Duration = Duration::from_millis(100);

/// Words per rank of a signature check: `[h, !h, p, u]` (module docs).
const WORDS: usize = 4;

/// The operation of the signature checks: `MAX` of `h`, `!h` and `u`,
/// wrapping sum of `p` (module docs), element by element.
///
/// # Safety
///
/// MPI calls it with `*len` elements of the checks' datatype ([`WORDS`]
/// `u64`s each) at `invec` and `inoutvec`.
unsafe extern "C" fn combine(
    invec: *mut c_void,
    inoutvec: *mut c_void,
    len: *mut c_int,
    _datatype: *mut MPI_Datatype,
) {
    if invec.is_null() || inoutvec.is_null() || len.is_null() {
        return;
    }
    // SAFETY: MPI's contract above.
    let n = usize::try_from(unsafe { *len }).unwrap_or(0) * WORDS;
    // SAFETY: as above; MPI's two buffers do not overlap.
    let (a, b) = unsafe {
        (
            std::slice::from_raw_parts(invec.cast::<u64>(), n),
            std::slice::from_raw_parts_mut(inoutvec.cast::<u64>(), n),
        )
    };
    for (a, b) in a.chunks_exact(WORDS).zip(b.chunks_exact_mut(WORDS)) {
        b[0] = b[0].max(a[0]);
        b[1] = b[1].max(a[1]);
        b[2] = b[2].wrapping_add(a[2]);
        b[3] = b[3].max(a[3]);
    }
}

/// The term of the pairwise check (module docs) for `from`'s block to `to`
/// whose signature word is `word` (0: empty).
pub fn pair_term(from: usize, to: usize, word: u64) -> u64 {
    let pair = ((from as u64) << 32) ^ (to as u64);
    typesig::code(typesig::code(pair) ^ word)
}

impl SigChecks {
    /// Knows `MPI_COMM_WORLD`, with its signature shadow `world_shadow`;
    /// makes the checks' datatype and operation.
    pub fn new(world_shadow: MPI_Comm) -> Result<Self, String> {
        let mut word = uint64();
        // SAFETY: MPI is initialised; valid out-parameters.
        let rc = unsafe {
            let rc = mpi_sys::PMPI_Type_contiguous(WORDS as c_int, uint64(), &mut word);
            if rc == SUCCESS {
                mpi_sys::PMPI_Type_commit(&mut word)
            } else {
                rc
            }
        };
        if rc != SUCCESS {
            return Err(format!("cannot make the signature checks' datatype ({rc})"));
        }
        let mut op = op_max();
        // SAFETY: as above; `combine` is commutative and associative.
        let rc = unsafe { mpi_sys::PMPI_Op_create(Some(combine), 1, &mut op) };
        if rc != SUCCESS {
            return Err(format!(
                "cannot make the signature checks' operation ({rc})"
            ));
        }
        let mut checks = SigChecks {
            entries: Vec::with_capacity(8),
            pending: 0,
            retired: 0,
            word,
            op,
        };
        checks.add(comm_world(), world_shadow);
        Ok(checks)
    }

    fn add(&mut self, comm: MPI_Comm, shadow: MPI_Comm) {
        let blank = SigCheck {
            request: request_null(),
            words: [0; 2 * WORDS],
            seq: 0,
            record: None,
            site: 0,
            kind: 0,
        };
        self.entries.push(SigShadow {
            comm: comm.bits(),
            retired: false,
            shadow,
            next: 0,
            checks: Box::new([blank; RING]),
            head: 0,
            len: 0,
        });
    }

    fn find(&self, comm: MPI_Comm) -> Option<usize> {
        let bits = comm.bits();
        self.entries
            .iter()
            .position(|e| e.comm == bits && !e.retired)
    }

    /// Whether any check is outstanding (blocking calls then poll).
    pub fn any_pending(&self) -> bool {
        self.pending > 0
    }
}

/// The hash a signature check compares: the collective's kind, its root
/// (`None` for unrooted ones) and the signature word of the data the rank
/// contributes (0: not compared).
pub fn signature_hash(kind: OpKind, root: Option<c_int>, data: u64) -> u64 {
    let mut h = typesig::code(u64::from(kind as u16));
    if let Some(root) = root {
        h = typesig::code(h ^ u64::from(root as u32).rotate_left(17));
    }
    typesig::code(h ^ data)
}

/// What [`Rt::collective`] and [`Rt::icollective`] need to know of a call.
#[derive(Debug, Clone, Copy)]
pub struct Coll {
    /// The record kind.
    pub kind: OpKind,
    /// The communicator.
    pub comm: MPI_Comm,
    /// The root (0 when none).
    pub root: c_int,
    /// The count and datatype recorded (the send side).
    pub count: c_int,
    /// See `count`.
    pub datatype: MPI_Datatype,
    /// The signature word this rank contributes to the check (0: none).
    pub data: u64,
    /// This rank's share of the pairwise check (`Alltoallv`/`Alltoallw`,
    /// module docs; 0 for the others), `None` when one of its blocks is
    /// not checked.
    pub pairs: Option<u64>,
}

impl Rt {
    /// The signature word of `count` x `datatype`.
    pub fn data_word(&mut self, count: c_int, datatype: MPI_Datatype) -> u64 {
        self.send_signature(count, datatype)
    }

    /// The record of collective `c`.
    fn coll_record(c: &Coll) -> RawOp {
        RawOp {
            kind: c.kind as u16,
            site: record::site(),
            comm: c.comm.bits(),
            peer: c.root,
            count: c.count,
            aux: c.datatype.bits(),
            ..RawOp::default()
        }
    }

    /// Runs a blocking collective: `start` makes its nonblocking form's
    /// request; the runtime completes it, then exchanges clocks per the
    /// kind's flow.
    ///
    /// # Safety
    ///
    /// `start` must be a valid nonblocking collective call on `c.comm`.
    pub unsafe fn collective(
        &mut self,
        c: Coll,
        start: impl FnOnce(*mut MPI_Request) -> c_int,
        early: Option<Early<'_>>,
    ) -> c_int {
        let index = record::begin(|| Self::coll_record(&c), true);
        let flow = c.kind.data_flow().unwrap_or(Flow::All);
        // SAFETY: `c.comm` is the caller's communicator.
        let shadows = unsafe { self.shadows_unless_refused(&c) };
        let check = shadows.map(|(_, _, sig)| self.sig_start(sig, &c, index));
        note_sequence(index, check);
        // SAFETY: `early` describes the caller's call on `c.comm`.
        if let Some(rc) = unsafe { self.collective_early(early, c.root, flow, shadows) } {
            record::finish(index, rc, true, |_| {});
            return rc;
        }
        let mut request = request_null();
        let mut rc = start(&mut request);
        self.det_collective(check.map(|seq| (c.comm, seq)));
        if rc == SUCCESS {
            // SAFETY: the request just made.
            rc = unsafe { self.block_on(&mut request, status_ignore(), None) };
        }
        self.det_collective(None);
        if rc != SUCCESS {
            // A mismatch makes MPI fail in ways of its own: say which.
            if let (Some((_, _, sig)), Some(seq)) = (shadows, check) {
                self.sig_wait(sig, seq);
            }
        }
        if let (SUCCESS, Some((shadow, me, _))) = (rc, shadows) {
            // SAFETY: a valid clock shadow of `c.comm`.
            unsafe { self.exchange(shadow, c.root, flow, me) };
        }
        record::finish(index, rc, true, |_| {});
        rc
    }

    /// Runs a nonblocking collective: `start` makes the program's request
    /// in `*request`; the clock exchange starts with it and completes with
    /// it (see the module docs).
    ///
    /// # Safety
    ///
    /// `start` must be a valid nonblocking collective call on `c.comm`
    /// writing `*request`.
    pub unsafe fn icollective(
        &mut self,
        c: Coll,
        request: *mut MPI_Request,
        start: impl FnOnce() -> c_int,
        early: Option<Early<'_>>,
    ) -> c_int {
        let index = record::begin(|| Self::coll_record(&c), false);
        let flow = c.kind.data_flow().unwrap_or(Flow::All);
        // SAFETY: `c.comm` is the caller's communicator.
        let shadows = unsafe { self.shadows_unless_refused(&c) };
        let seq = shadows.map(|(_, _, sig)| self.sig_start(sig, &c, index));
        note_sequence(index, seq);
        // SAFETY: `early` describes the caller's call on `c.comm`.
        let started = unsafe { self.icollective_early(early, c.root, flow, shadows, request) };
        let (rc, chain, exchanged) = started.unwrap_or_else(|| (start(), NO_CHAIN, false));
        let handle = (rc == SUCCESS && !request.is_null()).then(|| {
            // SAFETY: non-null, written by MPI.
            unsafe { *request }
        });
        if let Some(handle) = handle {
            let id = self.slots.alloc(
                Kind::Coll(CollState {
                    exchange: request_null(),
                    flow,
                    takes: false,
                    chain,
                }),
                index,
            );
            if let Some(slot) = self.slots.get_mut(id) {
                slot.request = handle;
            }
            if let (Some((shadow, me, _)), false) = (shadows, exchanged) {
                // SAFETY: a valid clock shadow of `c.comm`; the slot's
                // memory stays until the slot is released.
                unsafe { self.exchange_start(id, shadow, c.root, flow, me) };
            }
            // A handle MPI hands out again (MPICH's shared request of
            // operations that completed at once) means the older request
            // completed: the runtime completes its slot itself, as `track`
            // does for sends.
            if let Some(older) = REQUESTS.get(handle.bits()).filter(|&older| older != id) {
                crate::access::forget(older);
                if let Some(slot) = self.slots.get_mut(older) {
                    slot.orphan = true;
                }
                self.slots.watch(older);
            }
            if !REQUESTS.insert(handle.bits(), id) {
                fatal(format_args!(
                    "more than {} nonblocking requests are outstanding; this version of the runtime cannot follow them",
                    record::REQUEST_SLOTS / 4 * 3
                ));
            }
        }
        let bits = handle.map_or(0, |h| h.bits());
        record::finish(index, rc, false, |op| op.request = bits);
        rc
    }

    /// Starts the clock exchange of the nonblocking collective of slot `id`
    /// with this rank's clock now; its buffers are the slot's header
    /// (input) and acknowledgement (output) words.
    ///
    /// # Safety
    ///
    /// `shadow` must be a valid intracommunicator every rank of which makes
    /// the same call; slot `id` holds a `Kind::Coll`.
    unsafe fn exchange_start(
        &mut self,
        id: u32,
        shadow: MPI_Comm,
        root: c_int,
        flow: Flow,
        me: c_int,
    ) {
        if only_sends(flow, me, root) {
            // The slot keeps no exchange: nothing to wait for or merge.
            // SAFETY: the caller's contract.
            unsafe { self.root_flow_start(shadow, root, flow) };
            return;
        }
        let width = self.width;
        let input = self.slots.header(id);
        let output = self.slots.ack(id);
        if input.is_null() || output.is_null() {
            return;
        }
        // SAFETY: the slot's header holds at least `width` words.
        unsafe { std::ptr::copy_nonoverlapping(self.llcp.clock().as_ptr(), input, width) };
        let mut exchange = request_null();
        // SAFETY: both buffers hold `width` words and live in the slot
        // until the exchange completes in `complete_slot`.
        let rc = unsafe {
            start_exchange(
                input,
                output,
                width as c_int,
                root,
                flow,
                shadow,
                &mut exchange,
            )
        };
        if rc != SUCCESS {
            fatal(format_args!(
                "the clock exchange of a nonblocking collective failed to start (MPI error {rc})"
            ));
        }
        let takes = match flow {
            Flow::All | Flow::Prefix => true,
            Flow::FromRoot => me != root,
            Flow::ToRoot => me == root,
            Flow::ExclusivePrefix => me != 0,
        };
        if let Some(Kind::Coll(state)) = self.slots.get_mut(id).map(|s| &mut s.kind) {
            state.exchange = exchange;
            state.takes = takes;
        }
    }

    /// After the program's nonblocking collective of slot `id` completed:
    /// completes the clock exchange and merges its clock; records which
    /// call completed it.
    pub(super) fn coll_done(
        &mut self,
        id: u32,
        state: CollState,
        origin: Option<u64>,
        completer: Option<u64>,
    ) {
        if state.chain != NO_CHAIN {
            let rc = self.chain_done(state.chain);
            if rc != SUCCESS {
                fatal(format_args!(
                    "a scan the runtime ran as a chain failed (MPI error {rc})"
                ));
            }
        }
        let mut exchange = state.exchange;
        if exchange.bits() != request_null().bits() {
            // SAFETY: the runtime's exchange request; every rank started it
            // at its call.
            let rc = unsafe { self.block_on(&mut exchange, status_ignore(), Some(id)) };
            if rc != SUCCESS {
                fatal(format_args!(
                    "the clock exchange of a nonblocking collective failed (MPI error {rc})"
                ));
            }
            if state.takes {
                let from_root = state.flow == Flow::FromRoot;
                let words = if from_root {
                    let header = self.slots.header_words(id);
                    &header[..self.width.min(header.len())]
                } else {
                    self.slots.ack_words(id)
                };
                self.llcp.merge(words);
            }
        }
        if let Some(origin) = origin {
            record::append(|| RawOp {
                kind: OpKind::CollectiveComplete as u16,
                flags: flags::RETURNED,
                request: origin,
                aux: completer.unwrap_or(u64::MAX),
                ..RawOp::default()
            });
        }
    }

    /// The clock shadow, this rank's rank in `comm` and the index of its
    /// signature checks; made on first use (collectively: every rank of
    /// `comm` is in this same collective). `None` for intercommunicators
    /// and handles MPI does not know.
    ///
    /// # Safety
    ///
    /// `comm` is the program's communicator of a collective call.
    unsafe fn shadows(&mut self, comm: MPI_Comm) -> Option<(MPI_Comm, c_int, usize)> {
        // SAFETY: the caller's contract.
        unsafe { self.shadows_of(comm, None) }
    }

    /// [`Rt::shadows`] of collective `c`'s communicator, `None` when `c`
    /// has an invalid root. That is an argument error MPI decides at the
    /// call, before any matching (`Comms::root_outside`): the runtime starts
    /// none of its own collectives for the call (no shadow made, no
    /// signature check, no clock exchange, no early leave), so MPI's
    /// `MPI_ERR_ROOT` comes back at once and is reported at the call.
    /// Otherwise a rank whose peers called on another communicator would
    /// wait for them first (in a shadow's duplication, or in the signature
    /// check a failed collective waits for) and the error would be lost
    /// behind the deadlock.
    ///
    /// # Safety
    ///
    /// As for [`Rt::shadows`].
    unsafe fn shadows_unless_refused(&mut self, c: &Coll) -> Option<(MPI_Comm, c_int, usize)> {
        if c.kind.is_rooted() && self.comms.root_outside(c.comm, c.root) {
            return None;
        }
        // SAFETY: the caller's contract.
        unsafe { self.shadows(c.comm) }
    }

    /// [`Rt::shadows`], where `comm` was just made by duplicating
    /// `duplicate_of` (`MPI_Comm_dup`): its shadows are then duplicates of
    /// the parent's. A duplicate of `comm` itself would run the copy
    /// callbacks of the attributes it inherited, which the program would
    /// see run once more than under MPI; the parent's shadows
    /// carry no attributes of the program's, and have the same group in
    /// the same order.
    ///
    /// # Safety
    ///
    /// As for [`Rt::shadows`]; `duplicate_of` (when given) has shadows or
    /// is `MPI_COMM_WORLD`, and every rank of it is in this call.
    unsafe fn shadows_of(
        &mut self,
        comm: MPI_Comm,
        duplicate_of: Option<MPI_Comm>,
    ) -> Option<(MPI_Comm, c_int, usize)> {
        if comm.bits() == comm_world().bits() {
            return Some((self.shadow, self.rank, 0));
        }
        let info = self.comms.info(comm)?;
        if info.inter {
            return None;
        }
        let me = info.rank;
        let clock = match info.shadow {
            Some(shadow) => shadow,
            None => {
                let source = duplicate_of
                    .and_then(|parent| self.clock_shadow_of(parent))
                    .unwrap_or(comm);
                // SAFETY: the caller's contract (`source` has the ranks of
                // `comm`).
                let shadow = unsafe { self.dup(source) };
                if let Some(info) = self.comms.info(comm) {
                    info.shadow = Some(shadow);
                }
                shadow
            }
        };
        let sig = match self.sigs.find(comm) {
            Some(at) => at,
            None => {
                let source = duplicate_of
                    .and_then(|parent| self.sigs.find(parent))
                    .map_or(comm, |at| self.sigs.entries[at].shadow);
                // SAFETY: as above.
                let shadow = unsafe { self.dup(source) };
                self.sigs.add(comm, shadow);
                self.sigs.entries.len() - 1
            }
        };
        Some((clock, me, sig))
    }

    /// How many collectives this rank has started on the communicator
    /// whose handle bits are `comm` (0 before its first).
    pub(super) fn sig_started(&self, comm: u64) -> u64 {
        self.sigs
            .entries
            .iter()
            .find(|e| e.comm == comm && !e.retired)
            .map_or(0, |e| e.next)
    }

    /// The clock shadow of `comm`, when it has one.
    fn clock_shadow_of(&mut self, comm: MPI_Comm) -> Option<MPI_Comm> {
        if comm.bits() == comm_world().bits() {
            return Some(self.shadow);
        }
        self.comms.info(comm)?.shadow
    }

    /// Makes the runtime's duplicate of `comm` (polled, so this rank keeps
    /// acknowledging synchronous sends meanwhile).
    ///
    /// # Safety
    ///
    /// Every rank of `comm` makes the same call.
    pub(super) unsafe fn dup(&mut self, comm: MPI_Comm) -> MPI_Comm {
        let mut shadow = comm;
        let mut request = request_null();
        // SAFETY: the caller's contract.
        let rc = unsafe { mpi_sys::PMPI_Comm_idup(comm, &mut shadow, &mut request) };
        let rc = if rc == SUCCESS {
            // SAFETY: the request just made.
            unsafe { self.block_on(&mut request, status_ignore(), None) }
        } else {
            rc
        };
        if rc != SUCCESS {
            fatal(format_args!(
                "cannot duplicate a communicator for the runtime's collectives (MPI error {rc})"
            ));
        }
        shadow
    }

    /// A communicator constructor made `made` from `parent` (`MPI_COMM_NULL`
    /// when this rank is not in it): clocks to the maximum over the ranks
    /// that made the call (`parent`, or `made` for `MPI_Comm_create_group`,
    /// whose parent's other ranks are not in the call), and the new
    /// communicator's shadows, made while every rank of it is here. `site`
    /// is the constructor's call, named in the new communicator's
    /// `CommId` record so reports can say which communicator they mean.
    ///
    /// # Safety
    ///
    /// Every rank of `parent` (of `made` when `over_parent` is false)
    /// made the constructor call that returned `made`.
    pub unsafe fn constructed(
        &mut self,
        parent: MPI_Comm,
        made: Option<MPI_Comm>,
        over_parent: bool,
        duplicate: bool,
        site: u32,
    ) {
        let over = if over_parent { Some(parent) } else { made };
        if let Some(over) = over {
            // SAFETY: the caller's contract.
            if let Some((shadow, me, _)) = unsafe { self.shadows(over) } {
                // SAFETY: a valid clock shadow of `over`.
                unsafe { self.exchange(shadow, 0, Flow::All, me) };
                // The offline oracle must know the constructor orders like
                // the clocks do: otherwise it offers a send made after an
                // `MPI_Comm_split` to a receive made before it.
                record::append(|| RawOp {
                    kind: OpKind::CommMade as u16,
                    flags: flags::RETURNED,
                    comm: over.bits(),
                    ..RawOp::default()
                });
            }
        }
        if let Some(made) = made {
            // SAFETY: every rank of `made` is in this call.
            unsafe { self.name(made, duplicate.then_some(parent), site) };
        }
    }

    /// Agrees with the other ranks of the new communicator `made` on an id
    /// for it, the same in every member's trace, and records it
    /// (`OpKind::CommId`): handles are local, so without it the analyses
    /// could not tell that two ranks' records are on one communicator. The
    /// id is the proposal of the member lowest in `MPI_COMM_WORLD`: its
    /// world rank and how many communicators it has named, unique because
    /// that member takes part in every communicator its counter counts.
    /// Also makes `made`'s shadows (the agreement runs on the clock one).
    ///
    /// # Safety
    ///
    /// Every rank of `made` makes the same call.
    unsafe fn name(&mut self, made: MPI_Comm, duplicate_of: Option<MPI_Comm>, site: u32) {
        // SAFETY: the caller's contract.
        let Some((shadow, _, _)) = (unsafe { self.shadows_of(made, duplicate_of) }) else {
            return;
        };
        let named = NAMED.fetch_add(1, Ordering::Relaxed) + 1;
        let rank = u64::from(u32::try_from(self.rank).unwrap_or(0));
        let mine: u64 = (1 << 63) | (rank << 32) | u64::from(named);
        let mut id = mine;
        let mut request = request_null();
        // SAFETY: one word each way, both live until the request completes
        // below; every rank of `made` (so of its shadow) is here.
        let rc = unsafe {
            mpi_sys::PMPI_Iallreduce(
                (&mine as *const u64).cast(),
                (&mut id as *mut u64).cast(),
                1,
                uint64(),
                op_min(),
                shadow,
                &mut request,
            )
        };
        let rc = if rc == SUCCESS {
            // SAFETY: the request just made.
            unsafe { self.block_on(&mut request, status_ignore(), None) }
        } else {
            rc
        };
        // (An unnamed communicator is never decided on: its wildcards
        // take the first message, counted as undetermined.)
        if rc == SUCCESS {
            // SAFETY: every rank of `made` is here; the clock shadow has
            // its ranks in order.
            unsafe { self.det_attach(made, shadow, id) };
        }
        if rc != SUCCESS {
            // Unnamed, the communicator keeps its local bits in the trace.
            return;
        }
        let mut my_rank: c_int = -1;
        // SAFETY: `made` is a valid communicator; an int out-parameter.
        unsafe { mpi_sys::PMPI_Comm_rank(made, &mut my_rank) };
        record::append(|| RawOp {
            kind: OpKind::CommId as u16,
            flags: flags::RETURNED,
            site,
            comm: made.bits(),
            aux: id,
            peer: my_rank,
            ..RawOp::default()
        });
    }

    /// Exchanges clocks on `shadow` per `flow`; `me` is this rank's rank.
    ///
    /// # Safety
    ///
    /// `shadow` must be a valid intracommunicator every rank of which
    /// makes the same call.
    pub(super) unsafe fn exchange(&mut self, shadow: MPI_Comm, root: c_int, flow: Flow, me: c_int) {
        if only_sends(flow, me, root) {
            // SAFETY: the caller's contract.
            unsafe { self.root_flow_start(shadow, root, flow) };
            return;
        }
        self.coll_in.copy_from_slice(self.llcp.clock());
        let width = self.width as c_int;
        let input = self.coll_in.as_mut_ptr();
        let output = self.coll_out.as_mut_ptr();
        let mut request = request_null();
        // SAFETY: both buffers hold `width` words and stay untouched until
        // the request completes below.
        let rc = unsafe { start_exchange(input, output, width, root, flow, shadow, &mut request) };
        let rc = if rc == SUCCESS {
            // SAFETY: the request just made.
            unsafe { self.block_on(&mut request, status_ignore(), None) }
        } else {
            rc
        };
        if rc != SUCCESS {
            fatal(format_args!(
                "the clock exchange of a collective failed (MPI error {rc})"
            ));
        }
        match flow {
            Flow::All | Flow::Prefix => self.llcp.merge(&self.coll_out),
            Flow::FromRoot => self.llcp.merge(&self.coll_in),
            Flow::ToRoot if me == root => self.llcp.merge(&self.coll_out),
            Flow::ExclusivePrefix if me != 0 => self.llcp.merge(&self.coll_out),
            Flow::ToRoot | Flow::ExclusivePrefix => {}
        }
    }

    /// Starts the clock exchange of a rank that only sends in a rooted
    /// collective ([`only_sends`]: a reduction to `root`, or the root's
    /// broadcast) on `shadow` and leaves it in flight (`root_flow.rs`:
    /// waiting would make the collective synchronise where MPI does not).
    ///
    /// # Safety
    ///
    /// `shadow` must be a valid intracommunicator every rank of which
    /// makes the same call.
    unsafe fn root_flow_start(&mut self, shadow: MPI_Comm, root: c_int, flow: Flow) {
        let mut buffer = self.root_flows.buffer(self.llcp.clock());
        let mut request = request_null();
        let width = self.width as c_int;
        let words = buffer.as_mut_ptr().cast();
        // SAFETY: `buffer` holds `width` words and stays, boxed, in the
        // list of flows until the request completes; a reduction's receive
        // buffer is significant at the root only, and a broadcast's root
        // only sends.
        let rc = unsafe {
            if flow == Flow::FromRoot {
                mpi_sys::PMPI_Ibcast(words, width, uint64(), root, shadow, &mut request)
            } else {
                mpi_sys::PMPI_Ireduce(
                    words,
                    std::ptr::null_mut(),
                    width,
                    uint64(),
                    op_max(),
                    root,
                    shadow,
                    &mut request,
                )
            }
        };
        if rc != SUCCESS {
            fatal(format_args!(
                "the clock exchange of a collective failed to start (MPI error {rc})"
            ));
        }
        self.root_flows.push(request, buffer);
    }

    /// Completes every clock reduction this rank left in flight
    /// (`MPI_Finalize`, where the wait-for graph follows the rank).
    pub(super) fn root_flows_wait_all(&mut self) {
        while let Some((mut request, buffer)) = self.root_flows.take_oldest() {
            // SAFETY: a request this rank started and has not completed.
            let rc = unsafe { self.block_on(&mut request, status_ignore(), None) };
            if rc != SUCCESS {
                fatal(format_args!(
                    "the clock exchange of a collective failed (MPI error {rc})"
                ));
            }
            self.root_flows.recycle(buffer);
        }
    }

    /// Starts the signature check of collective `c` (after polling the
    /// communicator's earlier ones; waiting for the oldest when [`RING`]
    /// are outstanding). Returns its sequence number.
    fn sig_start(&mut self, at: usize, c: &Coll, record: Option<u64>) -> u64 {
        self.sig_poll(at);
        if self.sigs.entries[at].len == RING {
            let oldest = {
                let e = &self.sigs.entries[at];
                e.checks[e.head].seq
            };
            self.sig_wait(at, oldest);
        }
        let rooted = c.kind.is_rooted().then_some(c.root);
        let h = signature_hash(c.kind, rooted, c.data);
        let (p, u) = c.pairs.map_or((0, 1), |p| (p, 0));
        let (word, op) = (self.sigs.word, self.sigs.op);
        let site = record::peek_site();
        let entry = &mut self.sigs.entries[at];
        let seq = entry.next;
        entry.next += 1;
        let slot = (entry.head + entry.len) % RING;
        let check = &mut entry.checks[slot];
        *check = SigCheck {
            request: request_null(),
            words: [h, !h, p, u, 0, 0, 0, 0],
            seq,
            record,
            site,
            kind: c.kind as u16,
        };
        let input = check.words.as_mut_ptr();
        // SAFETY: the ring's memory is boxed and stays until the check
        // completes (`sig_poll`/`sig_wait` take it off only then).
        let rc = unsafe {
            mpi_sys::PMPI_Iallreduce(
                input.cast(),
                input.add(WORDS).cast(),
                1,
                word,
                op,
                entry.shadow,
                &mut check.request,
            )
        };
        if rc != SUCCESS {
            fatal(format_args!(
                "cannot start the signature check of a collective (MPI error {rc})"
            ));
        }
        entry.len += 1;
        self.sigs.pending += 1;
        seq
    }

    /// Takes the completed checks off the front of communicator `at`'s
    /// ring (in order: MPI completes collectives on a communicator in the
    /// order they started only per rank, so the front is tested first).
    fn sig_poll(&mut self, at: usize) {
        loop {
            let entry = &mut self.sigs.entries[at];
            if entry.len == 0 {
                return;
            }
            let check = &mut entry.checks[entry.head];
            let mut flag: c_int = 0;
            // SAFETY: the runtime's own check request.
            let rc = unsafe { mpi_sys::PMPI_Test(&mut check.request, &mut flag, status_ignore()) };
            if rc != SUCCESS {
                fatal(format_args!(
                    "the signature check of a collective failed (MPI error {rc})"
                ));
            }
            if flag == 0 {
                return;
            }
            self.sig_done(at);
        }
    }

    /// Polls every communicator's checks (from `service`).
    pub(super) fn sig_poll_all(&mut self) {
        if !self.sigs.any_pending() {
            return;
        }
        for at in 0..self.sigs.entries.len() {
            self.sig_poll(at);
        }
        if self.sigs.retired > 0 {
            self.sig_sweep_retired();
        }
    }

    /// Frees the entries of freed communicators whose checks all
    /// completed, so that a program that frees communicators with checks
    /// in flight holds neither their shadows nor a longer list to poll.
    fn sig_sweep_retired(&mut self) {
        // Backwards: `swap_remove` moves an entry already visited.
        for at in (1..self.sigs.entries.len()).rev() {
            let entry = &self.sigs.entries[at];
            if entry.retired && entry.len == 0 {
                let mut entry = self.sigs.entries.swap_remove(at);
                self.sigs.retired -= 1;
                // SAFETY: a shadow the runtime made, no check outstanding.
                unsafe { mpi_sys::PMPI_Comm_free(&mut entry.shadow) };
            }
        }
    }

    /// Waits until check `seq` of communicator `at` (and those before it)
    /// completed, serving the rank's own requests meanwhile.
    fn sig_wait(&mut self, at: usize, seq: u64) {
        self.sig_wait_until(at, seq, None);
    }

    /// [`Rt::sig_wait`] that gives up at `deadline`: whether the checks
    /// completed.
    fn sig_wait_until(&mut self, at: usize, seq: u64, deadline: Option<Instant>) -> bool {
        loop {
            self.sig_poll(at);
            let entry = &self.sigs.entries[at];
            if entry.len == 0 || entry.checks[entry.head].seq > seq {
                return true;
            }
            if deadline.is_some_and(|d| Instant::now() >= d) {
                return false;
            }
            // SAFETY: MPI is initialised; `service` polls the checks too.
            unsafe { self.service(None) };
            super::pause();
        }
    }

    /// Before an MPI error stops the job: gives the outstanding checks up to
    /// `budget` to complete, so that a collective mismatch is reported as
    /// such (a mismatch diverges here) rather than as the error it caused.
    /// Open MPI, unlike MPICH, lets mismatched nonblocking collectives run
    /// and fails the wait with `MPI_ERR_TRUNCATE` before the check is
    /// done. Bounded: a rank that never reaches its check must not turn
    /// the error into a hang.
    pub fn sig_settle(&mut self, budget: std::time::Duration) {
        let start = Instant::now();
        while self.sigs.any_pending() && start.elapsed() < budget {
            self.sig_poll_all();
            // SAFETY: MPI is initialised (an MPI call just returned).
            unsafe { self.service(None) };
            super::pause();
        }
    }

    /// Waits for every check of every communicator (`MPI_Finalize`).
    pub(super) fn sig_wait_all(&mut self) {
        for at in 0..self.sigs.entries.len() {
            self.sig_wait(at, u64::MAX);
        }
    }

    /// `MPI_Comm_free` of `comm`: frees its signature shadow, or, while a
    /// check is outstanding, retires it to `MPI_Finalize`.
    ///
    /// A check is outstanding when some member has not made the
    /// collective yet, and it may never (it is blocked elsewhere). Waiting
    /// here would block the rank in a call the wait-for graph does not
    /// follow: the rank would look as if it were computing, so a hang in
    /// which one rank frees a communicator while a member is blocked
    /// elsewhere could only time out, never be confirmed as a deadlock.
    /// MPI lets a communicator be freed with operations pending, which then
    /// complete normally; the entry stays, under a handle no communicator
    /// has, and `MPI_Finalize` waits for its checks, where the graph sees
    /// the rank.
    fn sig_forget(&mut self, comm: MPI_Comm) {
        let Some(at) = self.sigs.find(comm) else {
            return;
        };
        if at == 0 {
            return;
        }
        // Checks normally complete at once (every member made the
        // collective); only one a member has not reached is left behind.
        let deadline = Instant::now() + COMM_FREE_WAIT;
        if !self.sig_wait_until(at, u64::MAX, Some(deadline)) {
            self.sigs.entries[at].retired = true;
            self.sigs.retired += 1;
            return;
        }
        let mut entry = self.sigs.entries.swap_remove(at);
        // SAFETY: a shadow the runtime made; every rank frees `comm` (a
        // collective call) and so its shadow.
        unsafe { mpi_sys::PMPI_Comm_free(&mut entry.shadow) };
    }

    /// Frees every signature shadow (`MPI_Finalize`, after `sig_wait_all`)
    /// and the checks' datatype and operation.
    pub(super) fn sig_free_all(&mut self) {
        for entry in &mut self.sigs.entries {
            // SAFETY: shadows the runtime made, no check outstanding.
            unsafe { mpi_sys::PMPI_Comm_free(&mut entry.shadow) };
        }
        self.sigs.entries.clear();
        // SAFETY: the runtime's own handles, no check outstanding.
        unsafe {
            mpi_sys::PMPI_Type_free(&mut self.sigs.word);
            mpi_sys::PMPI_Op_free(&mut self.sigs.op);
        }
    }

    /// The front check of communicator `at` completed: takes it off and
    /// stops the job when the ranks disagree.
    fn sig_done(&mut self, at: usize) {
        let entry = &mut self.sigs.entries[at];
        let check = entry.checks[entry.head];
        entry.head = (entry.head + 1) % RING;
        entry.len -= 1;
        self.sigs.pending -= 1;
        let [h, not_h, _, _, max_h, max_not_h, pairs, unchecked] = check.words;
        if max_h != h || max_not_h != not_h || (unchecked == 0 && pairs != 0) {
            let (comm, shadow) = (entry.comm, entry.shadow);
            self.collective_mismatch(check, comm, shadow);
        }
    }

    /// Records this rank's side of a collective mismatch, lets the
    /// communicator's rank 0 know, and (on rank 0, once every rank
    /// recorded) stops the job.
    #[cold]
    fn collective_mismatch(&mut self, check: SigCheck, comm: u64, shadow: MPI_Comm) -> ! {
        let site = check.record.map_or(check.site, checks::site_of);
        checks::report(
            Check::CollectiveMismatch {
                number: i32::try_from(check.seq).unwrap_or(i32::MAX),
                comm,
                kind: check.kind,
            },
            site,
            check.record.unwrap_or(u64::MAX),
        );
        let name = OpKind::from_code(check.kind).map_or("a collective", |k| k.mpi_name());
        let _ = writeln!(
            std::io::stderr(),
            "mbhybrid: the ranks disagree on collective number {} of a communicator (this rank called {name}); stopping the job",
            check.seq + 1
        );
        if let Some(writer) = record::TRACE.writer() {
            writer.record_abort(MISMATCH_EXIT, site);
        }
        let (mut me, mut size): (c_int, c_int) = (0, 0);
        // SAFETY: a valid shadow; valid out-parameters.
        unsafe {
            mpi_sys::PMPI_Comm_rank(shadow, &mut me);
            mpi_sys::PMPI_Comm_size(shadow, &mut size);
        }
        let mut byte = 0u8;
        if me != 0 {
            // SAFETY: a one-byte note to rank 0 of the runtime's shadow.
            unsafe {
                mpi_sys::PMPI_Send(
                    (&mut byte as *mut u8).cast(),
                    1,
                    crate::consts::byte(),
                    0,
                    MISMATCH_TAG,
                    shadow,
                );
            }
            // Rank 0 aborts the job; nothing ever answers this.
            // SAFETY: as above.
            unsafe {
                mpi_sys::PMPI_Recv(
                    (&mut byte as *mut u8).cast(),
                    1,
                    crate::consts::byte(),
                    0,
                    MISMATCH_TAG,
                    shadow,
                    status_ignore(),
                );
            }
        } else {
            for _ in 1..size {
                // SAFETY: as above.
                unsafe {
                    mpi_sys::PMPI_Recv(
                        (&mut byte as *mut u8).cast(),
                        1,
                        crate::consts::byte(),
                        crate::consts::any_source(),
                        MISMATCH_TAG,
                        shadow,
                        status_ignore(),
                    );
                }
            }
        }
        // SAFETY: MPI is initialised; aborting the world is always allowed.
        unsafe { mpi_sys::PMPI_Abort(comm_world(), MISMATCH_EXIT) };
        // SAFETY: ends the process as the abort would.
        unsafe { libc::_exit(MISMATCH_EXIT) }
    }

    /// `MPI_Comm_free`: forgets the communicator and frees its shadows.
    ///
    /// # Safety
    ///
    /// As for `MPI_Comm_free`.
    pub unsafe fn comm_free(&mut self, comm: *mut MPI_Comm) -> c_int {
        if !comm.is_null() {
            // SAFETY: non-null, the caller's handle.
            let handle = unsafe { *comm };
            self.resources
                .remove(crate::checks::ResourceKind::Comm, handle.bits());
            self.handlers.set(handle, false);
            // Not a wait: a root may never enter its collective, and a wait
            // here is one the wait-for graph cannot see. What is still in
            // flight completes at MPI_Finalize (`root_flow.rs`).
            self.root_flows.poll();
            self.early.poll();
            self.sig_forget(handle);
            if let Some(mut shadow) = self.comms.forget(handle) {
                // SAFETY: a shadow the runtime made; every rank frees
                // `comm` (a collective call) and so its shadow.
                unsafe { mpi_sys::PMPI_Comm_free(&mut shadow) };
            }
        }
        // SAFETY: the caller's contract.
        unsafe { mpi_sys::PMPI_Comm_free(comm) }
    }
}

/// Whether this rank (`me`) only sends in a collective of `flow` rooted at
/// `root` (the root of a `FromRoot` one, any other rank of a `ToRoot`
/// one): MPI lets it leave before the others enter (MPI-4.0 §6.1), and it
/// takes no clock.
pub(super) fn only_sends(flow: Flow, me: c_int, root: c_int) -> bool {
    match flow {
        Flow::FromRoot => me == root,
        Flow::ToRoot => me != root,
        Flow::All | Flow::Prefix | Flow::ExclusivePrefix => false,
    }
}

/// Writes collective `index`'s sequence number on its communicator into
/// its record (`tag` = 1 + it), while the rank may still block in it: the
/// wait-for graph matches a rank's collective with the other members' by
/// this number (seed 003's AND node over the members that have not
/// arrived), a `Wait` on a nonblocking collective's request included.
fn note_sequence(index: Option<u64>, seq: Option<u64>) {
    if let (Some(index), Some(seq)) = (index, seq) {
        let tag = i32::try_from(seq.saturating_add(1)).unwrap_or(0);
        record::update(index, |op| op.tag = tag);
    }
}

/// Starts the clock exchange of `flow` on `shadow`: `width` words from
/// `input` into `output` (`FromRoot`: in place in `input`).
///
/// # Safety
///
/// Both buffers hold `width` words and stay valid until `request`
/// completes; `shadow` is a valid intracommunicator every rank of which
/// makes the same call.
unsafe fn start_exchange(
    input: *mut u64,
    output: *mut u64,
    width: c_int,
    root: c_int,
    flow: Flow,
    shadow: MPI_Comm,
    request: *mut MPI_Request,
) -> c_int {
    let (i, o) = (input.cast(), output.cast());
    // SAFETY: the caller's contract.
    unsafe {
        match flow {
            Flow::All => mpi_sys::PMPI_Iallreduce(i, o, width, uint64(), op_max(), shadow, request),
            Flow::FromRoot => mpi_sys::PMPI_Ibcast(i, width, uint64(), root, shadow, request),
            Flow::ToRoot => {
                mpi_sys::PMPI_Ireduce(i, o, width, uint64(), op_max(), root, shadow, request)
            }
            Flow::Prefix => mpi_sys::PMPI_Iscan(i, o, width, uint64(), op_max(), shadow, request),
            Flow::ExclusivePrefix => {
                mpi_sys::PMPI_Iexscan(i, o, width, uint64(), op_max(), shadow, request)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn signature_hashes_tell_kinds_roots_and_data_apart() {
        let bcast0 = signature_hash(OpKind::Bcast, Some(0), 7);
        assert_eq!(bcast0, signature_hash(OpKind::Bcast, Some(0), 7));
        assert_ne!(bcast0, signature_hash(OpKind::Bcast, Some(1), 7));
        assert_ne!(bcast0, signature_hash(OpKind::Bcast, Some(0), 8));
        assert_ne!(bcast0, signature_hash(OpKind::Ibcast, Some(0), 7));
        assert_ne!(
            signature_hash(OpKind::Barrier, None, 0),
            signature_hash(OpKind::Ibarrier, None, 0)
        );
    }

    /// The wrapping sum of every rank's share for `sent[i][j]` (what `i`
    /// sends `j`) and `expected[j][i]` (what `j` expects from `i`).
    fn pair_sum(sent: &[[u64; 3]; 3], expected: &[[u64; 3]; 3]) -> u64 {
        let mut sum = 0u64;
        for me in 0..3 {
            for peer in 0..3 {
                sum = sum
                    .wrapping_add(pair_term(me, peer, sent[me][peer]))
                    .wrapping_sub(pair_term(peer, me, expected[me][peer]));
            }
        }
        sum
    }

    #[test]
    fn pair_terms_cancel_exactly_when_every_pair_agrees() {
        // Uneven words (0: empty), one per ordered pair.
        let sent = [[0, 11, 12], [13, 14, 0], [15, 16, 17]];
        let mut expected = [[0; 3]; 3];
        for i in 0..3 {
            for j in 0..3 {
                expected[j][i] = sent[i][j];
            }
        }
        assert_eq!(pair_sum(&sent, &expected), 0);
        let mut one_off = expected;
        one_off[1][0] = 99;
        assert_ne!(pair_sum(&sent, &one_off), 0);
        // Two ranks swapping what they expect is no agreement either.
        let mut swapped = expected;
        swapped[2].swap(0, 1);
        assert_ne!(pair_sum(&sent, &swapped), 0);
    }

    #[test]
    fn combine_maxes_the_hashes_and_sums_the_pairs() {
        let mut a = [5u64, 1, u64::MAX, 0, 1, 2, 3, 1];
        let mut b = [3u64, 9, 2, 1, 0, 0, 0, 0];
        let mut len: c_int = 2;
        // SAFETY: two elements of four words each in both buffers.
        unsafe {
            combine(
                a.as_mut_ptr().cast(),
                b.as_mut_ptr().cast(),
                &mut len,
                std::ptr::null_mut(),
            )
        };
        assert_eq!(b, [5, 9, 1, 1, 1, 2, 3, 1]);
    }
}
