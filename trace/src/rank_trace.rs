//! The per-rank trace file: what one MPI process did, written by the runtime
//! through a shared memory map and read by the CLI after (or during) a run.
//!
//! # Format (version 2)
//!
//! All integers little-endian (the writer's native order; traces are read on
//! the machine that wrote them).
//!
//! * bytes `0..HEADER_SIZE`: a [`RawHeader`], then zero padding up to
//!   [`HEADER_SIZE`] (one page, so records start page-aligned);
//! * then `record_capacity` slots of [`RECORD_SIZE`] bytes, each a [`RawOp`];
//!   the first `record_count` of them are written.
//!
//! The writer appends a record and only then publishes it by storing the new
//! `record_count` with release ordering, so a reader never sees a
//! half-written record counted. Fields that change in place (`state`,
//! `blocking_index`, a record's `flags` when its call returns) are single
//! aligned words. Because the file is a shared mapping, everything written
//! before a `SIGKILL` is in the page cache and survives the process.
//!
//! # Reading untrusted files
//!
//! [`RankTrace::decode`] never panics and never allocates more than the
//! file's size suggests, whatever the bytes. It rejects, with a
//! [`FormatError`] that names the problem, a file that is not a trace of
//! this version and a header it cannot understand. A counted record that
//! is damaged (an unknown kind, or an index that is not its position) ends
//! the trace there: the records before it are kept and the damage is
//! reported ([`Decoded::damaged`]). A file cut short (the header counts
//! more records than the file holds) keeps every complete record before
//! the cut and reports the rest as [`Truncated`]; [`RankTrace::parse`] and
//! [`RankTrace::read`] keep the records without the reports.

use crate::envelope::RecvPattern;
use crate::op::OpKind;
use crate::static_report::{
    PCONTROL_ABSTRACT_ENTER, PCONTROL_ABSTRACT_EXIT, PCONTROL_LOOP_ENTER, PCONTROL_LOOP_EXIT,
    PCONTROL_ZONE,
};
use bytemuck::{Pod, Zeroable};
use serde::Serialize;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicI32, AtomicU32, AtomicU64, Ordering};

/// The first eight bytes of every rank trace.
pub const MAGIC: [u8; 8] = *b"MBHTRACE";
/// The format version this crate writes and reads. Version 2 added
/// [`crate::op::flags::FORCED`]: a version 1 trace would read as a run that
/// forced nothing, so it is rejected rather than misread.
pub const FORMAT_VERSION: u32 = 2;
/// Bytes reserved for the header; records start here.
pub const HEADER_SIZE: usize = 4096;
/// Bytes per record slot.
pub const RECORD_SIZE: usize = std::mem::size_of::<RawOp>();
/// Return addresses kept for a crash or a nonzero exit.
pub const MAX_FRAMES: usize = 32;

/// How far a rank got, as its header says.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
#[repr(u32)]
pub enum RankState {
    /// The file exists but `MPI_Init` has not returned.
    Starting = 0,
    /// Between `MPI_Init` and `MPI_Finalize`.
    Running = 1,
    /// `MPI_Finalize` returned (`exit_status` is set once the process
    /// exits).
    Finalized = 2,
    /// The process called `exit` (or returned from `main`) after `MPI_Init`
    /// without calling `MPI_Finalize`; `exit_status` is set.
    Exited = 3,
    /// The process received a fatal signal; `signal` and `frames` are set.
    Signaled = 4,
    /// The program called `MPI_Abort`.
    Aborted = 5,
    /// The runtime stopped the job: the program made a call it cannot
    /// handle, or it failed itself. Its message is on the rank's standard
    /// error; `abort` holds the tool's exit code and the call's site.
    ToolStopped = 6,
}

impl RankState {
    fn from_code(code: u32) -> Option<Self> {
        Some(match code {
            0 => RankState::Starting,
            1 => RankState::Running,
            2 => RankState::Finalized,
            3 => RankState::Exited,
            4 => RankState::Signaled,
            5 => RankState::Aborted,
            6 => RankState::ToolStopped,
            _ => return None,
        })
    }
}

/// The header at the start of a rank trace, exactly as stored.
#[derive(Debug, Clone, Copy, Pod, Zeroable)]
#[repr(C)]
pub struct RawHeader {
    /// [`MAGIC`].
    pub magic: [u8; 8],
    /// [`FORMAT_VERSION`].
    pub version: u32,
    /// [`HEADER_SIZE`].
    pub header_size: u32,
    /// [`RECORD_SIZE`].
    pub record_size: u32,
    /// Rank in `MPI_COMM_WORLD`.
    pub rank: i32,
    /// Size of `MPI_COMM_WORLD`.
    pub size: i32,
    /// Process id.
    pub pid: u32,
    /// Records written (published with release ordering).
    pub record_count: u64,
    /// A [`RankState`] code.
    pub state: u32,
    /// Exit status, valid in state `Exited`.
    pub exit_status: i32,
    /// 1 + index of the record of the blocking call in progress; 0 if none.
    pub blocking_index: u64,
    /// The fatal signal, valid in state `Signaled`.
    pub signal: i32,
    /// How many of `frames` are valid.
    pub frame_count: u32,
    /// The faulting address of `SIGSEGV`/`SIGBUS`, or the instruction
    /// pointer at the signal, whichever the handler could tell.
    pub fault_addr: u64,
    /// Load bias of the main executable (to symbolise `frames`).
    pub exe_base: u64,
    /// Program counters: the signal's instruction pointer first when known,
    /// then return addresses, innermost first.
    pub frames: [u64; MAX_FRAMES],
    /// Error code given to `MPI_Abort`, valid in state `Aborted`.
    pub abort_code: i32,
    /// Site id of the `MPI_Abort` call.
    pub abort_site: u32,
    /// Records the runtime could not write (the trace could not grow: a
    /// full disk, a failed mapping). Zero in traces of older runtimes,
    /// which had no such count.
    pub lost_records: u64,
    /// The poll this rank repeats without success (`MPI_Test*`,
    /// `MPI_Iprobe`, `MPI_Improbe` finding nothing), written as the
    /// blocking call it stands for ([`TraceWriter::note_poll`]); its
    /// `index` is the record count when the series began, so it is current
    /// only while no record follows. Zero in traces of older runtimes.
    pub poll: RawOp,
    /// How many polls of the series of `poll` found nothing.
    pub polls: u64,
    /// [`HELD`] while the rank, having failed (a fatal signal, `MPI_Abort`,
    /// an exit without `MPI_Finalize`), waits in the runtime before it
    /// ends; the `mbhybrid` that launched it releases it by writing 0
    /// ([`release_held`]). Zero in traces of older runtimes.
    pub held: u32,
    /// Unused; keeps the header a multiple of 8 bytes.
    pub reserved: u32,
    /// What the runtime said when it stopped the rank (state
    /// `ToolStopped`): UTF-8, NUL-padded, cut at a character boundary.
    /// Zero in traces of older runtimes.
    pub stop_message: [u8; STOP_MESSAGE_BYTES],
}

/// The room for [`RawHeader::stop_message`].
pub const STOP_MESSAGE_BYTES: usize = 512;

/// The value of [`RawHeader::held`] while a failed rank waits.
pub const HELD: u32 = 1;

/// Lets a rank that waits in its failure ([`RawHeader::held`]) end: writes
/// 0 into the `held` word of the trace at `path`. The runtime maps the
/// file shared, so the write reaches the waiting process through the page
/// cache.
pub fn release_held(path: &std::path::Path) -> std::io::Result<()> {
    use std::os::unix::fs::FileExt;
    let offset = std::mem::offset_of!(RawHeader, held) as u64;
    let file = std::fs::OpenOptions::new().write(true).open(path)?;
    file.write_all_at(&0u32.to_ne_bytes(), offset)
}

/// One recorded MPI operation, exactly as stored ([`RECORD_SIZE`] bytes).
#[derive(Debug, Clone, Copy, Default, Pod, Zeroable, PartialEq, Eq)]
#[repr(C)]
pub struct RawOp {
    /// Per-rank operation index (0-based, dense).
    pub index: u64,
    /// An [`OpKind`] code.
    pub kind: u16,
    /// [`crate::op::flags`] bits.
    pub flags: u16,
    /// Site id (0: unknown).
    pub site: u32,
    /// Destination or source rank as passed (may be `MPI_ANY_SOURCE`).
    pub peer: i32,
    /// Tag as passed (may be `MPI_ANY_TAG`); for a collective, 1 + its
    /// sequence number among the collectives on its communicator, 0 when
    /// not known (see [`OpKind::Ibarrier`]).
    pub tag: i32,
    /// Communicator handle bits.
    pub comm: u64,
    /// Element count as passed.
    pub count: i32,
    /// Source of the message a receive matched (valid with `HAS_STATUS`).
    pub matched_source: i32,
    /// Tag of the message a receive matched (valid with `HAS_STATUS`).
    pub matched_tag: i32,
    /// MPI return code (0 = `MPI_SUCCESS`).
    pub error: i32,
    /// Request handle bits (nonblocking calls and completions).
    pub request: u64,
    /// Kind-specific word:
    ///
    /// * point-to-point calls: the datatype handle bits;
    /// * completions (`MPI_Wait`, `MPI_Waitall`, ...): the request they
    ///   completed, as [`Op::request_origin`] decodes it;
    /// * collectives: the datatype handle bits of the send side;
    /// * `MPI_Init_thread`: the thread level provided (`count` holds the one
    ///   required);
    /// * `MPI_Pcontrol`: `level << 32 | first_argument as u32` (`peer` holds
    ///   the second argument, the `k` of level 7303);
    /// * `MPI_Abort`: unused (`count` holds the error code);
    /// * the runtime's own records: what the accessors of [`crate::record`]
    ///   decode (`Matched`: [`Op::matched_send`]; `CommId`:
    ///   [`Op::comm_naming`]; `CollectiveComplete`:
    ///   [`Op::collective_completion`]; `Completed`:
    ///   [`Op::completed_request`]; `WildcardClock`, `ChoiceClock`:
    ///   [`Op::event_clock`]; `PotentialMatch`, `PotentialIndex`:
    ///   [`Op::potential`]), [`crate::check::Check`] for local checks, and
    ///   [`OpKind`]'s docs for the others.
    pub aux: u64,
}

// The `MPI_Pcontrol` levels as a record's `aux` carries them (`level << 32`).
pub(crate) const ABSTRACT_ENTER: u32 = PCONTROL_ABSTRACT_ENTER as u32;
pub(crate) const ABSTRACT_EXIT: u32 = PCONTROL_ABSTRACT_EXIT as u32;
pub(crate) const LOOP_ENTER: u32 = PCONTROL_LOOP_ENTER as u32;
pub(crate) const LOOP_EXIT: u32 = PCONTROL_LOOP_EXIT as u32;
const ZONE: u32 = PCONTROL_ZONE as u32;

const _: () = assert!(std::mem::size_of::<RawOp>() == 64);
const _: () = assert!(std::mem::size_of::<RawHeader>() <= HEADER_SIZE);

/// Appends records to a mapped trace file. Never allocates, never panics:
/// it runs inside the user's MPI processes (in signal handlers too, for the
/// header fields).
pub struct TraceWriter {
    base: *mut u8,
    capacity: u64,
}

// SAFETY: the writer only touches its mapping through raw pointers and
// atomics; the runtime serialises appends.
unsafe impl Send for TraceWriter {}

impl TraceWriter {
    /// Bytes a trace with room for `records` records needs.
    pub fn file_len(records: u64) -> u64 {
        HEADER_SIZE as u64 + records * RECORD_SIZE as u64
    }

    /// Wraps a mapping of `len` bytes, zero-filled or holding a trace written
    /// earlier by this process (after the mapping grew).
    ///
    /// # Safety
    ///
    /// `base` must be valid for reads and writes of `len` bytes, aligned to
    /// 8, for as long as the writer lives, and no other writer may use it.
    #[inline]
    pub unsafe fn from_raw(base: *mut u8, len: usize) -> Option<Self> {
        if base.is_null() || len < HEADER_SIZE || !(base as usize).is_multiple_of(8) {
            return None;
        }
        let capacity = ((len - HEADER_SIZE) / RECORD_SIZE) as u64;
        Some(TraceWriter { base, capacity })
    }

    #[inline]
    fn header(&self) -> *mut RawHeader {
        self.base.cast()
    }

    #[inline]
    fn u64_field(&self, field: *mut u64) -> &AtomicU64 {
        // SAFETY: the field lies inside the mapping and is 8-aligned
        // (RawHeader is repr(C) at the page-aligned base).
        unsafe { AtomicU64::from_ptr(field) }
    }

    /// Writes a fresh header. Call once, before the first record.
    pub fn init_header(&mut self, rank: i32, size: i32, pid: u32, exe_base: u64) {
        let header = RawHeader {
            magic: MAGIC,
            version: FORMAT_VERSION,
            header_size: HEADER_SIZE as u32,
            record_size: RECORD_SIZE as u32,
            rank,
            size,
            pid,
            state: RankState::Running as u32,
            exe_base,
            ..Zeroable::zeroed()
        };
        // SAFETY: the header lies inside the mapping (len >= HEADER_SIZE).
        unsafe { self.header().write_volatile(header) };
    }

    /// Records written so far.
    #[inline]
    pub fn len(&self) -> u64 {
        // SAFETY: see `u64_field`.
        self.u64_field(unsafe { &raw mut (*self.header()).record_count })
            .load(Ordering::Relaxed)
    }

    /// True when no record was written.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Slots in the mapping.
    #[inline]
    pub fn capacity(&self) -> u64 {
        self.capacity
    }

    /// Appends `op` (its `index` is set here) and returns its index, or
    /// `None` when the mapping is full (the caller grows it and retries).
    #[inline]
    pub fn append(&mut self, mut op: RawOp) -> Option<u64> {
        let index = self.len();
        if index >= self.capacity {
            return None;
        }
        op.index = index;
        // SAFETY: slot `index` < capacity lies inside the mapping, 8-aligned;
        // a plain write (built in place when inlined): the release store
        // below publishes it.
        unsafe { self.slot(index).write(op) };
        // SAFETY: see `u64_field`.
        self.u64_field(unsafe { &raw mut (*self.header()).record_count })
            .store(index + 1, Ordering::Release);
        Some(index)
    }

    #[inline]
    fn slot(&self, index: u64) -> *mut RawOp {
        // SAFETY (of callers): index < capacity.
        unsafe {
            self.base
                .add(HEADER_SIZE + index as usize * RECORD_SIZE)
                .cast()
        }
    }

    /// Changes a written record in place (a call returning fills in its
    /// status). Out-of-range indices are ignored. Only the fields `change`
    /// sets are stored (a call's return is a few words on the hot path,
    /// not a copy of the record out and back), each an aligned word, as
    /// readers of a live trace expect.
    #[inline]
    pub fn update(&mut self, index: u64, change: impl FnOnce(&mut RawOp)) {
        // `len` comes from the mapped header, which the writer does not
        // own alone; never trust it past the mapping.
        if index >= self.len().min(self.capacity) {
            return;
        }
        // SAFETY: the slot is inside the mapping, 8-aligned and written;
        // this process holds no other reference to it (one writer, and
        // `&mut self` for the duration). Other processes only read the
        // file.
        change(unsafe { &mut *self.slot(index) });
    }

    /// Marks record `index` as the blocking call in progress, or none.
    #[inline]
    pub fn set_blocking(&self, index: Option<u64>) {
        let value = index.map_or(0, |i| i + 1);
        // SAFETY: see `u64_field`.
        self.u64_field(unsafe { &raw mut (*self.header()).blocking_index })
            .store(value, Ordering::Release);
    }

    /// Notes a poll that found nothing, as `wait`: the blocking call that
    /// waits for what the poll looks for (`MPI_Test` as `MPI_Wait` on the
    /// same request, `MPI_Iprobe` as `MPI_Probe` of the same pattern),
    /// with the polled call's [`OpKind`] code in `matched_tag` (a poll that
    /// found nothing has no status). The same poll again,
    /// with no record between, counts one more in the series; another
    /// starts a new one. The wait-for graph reads a long series of a rank
    /// that does nothing else as that rank blocked in `wait`. Only stores
    /// to the mapped header: a polling loop's calls stay cheap.
    pub fn note_poll(&self, mut wait: RawOp) {
        wait.index = self.len();
        let header = self.header();
        // SAFETY: the field lies inside the header, 8-aligned; only this
        // writer stores to it.
        let current = unsafe { (&raw const (*header).poll).read_volatile() };
        // SAFETY: see `u64_field`.
        let polls = self.u64_field(unsafe { &raw mut (*header).polls });
        if same_poll(&current, &wait) {
            polls.fetch_add(1, Ordering::Release);
            return;
        }
        // Zero while the new poll is written: a reader in between sees no
        // series rather than a torn one.
        polls.store(0, Ordering::Release);
        // SAFETY: as above.
        unsafe { (&raw mut (*header).poll).write_volatile(wait) };
        polls.store(1, Ordering::Release);
    }

    /// Sets the rank's state. Async-signal-safe.
    pub fn set_state(&self, state: RankState) {
        // SAFETY: the field is inside the header, 4-aligned.
        unsafe { AtomicU32::from_ptr(&raw mut (*self.header()).state) }
            .store(state as u32, Ordering::Release);
    }

    /// The rank's state as last set.
    pub fn state(&self) -> Option<RankState> {
        // SAFETY: the field is inside the header, 4-aligned.
        let code =
            unsafe { AtomicU32::from_ptr(&raw mut (*self.header()).state) }.load(Ordering::Acquire);
        RankState::from_code(code)
    }

    /// Stores program counters for a crash or exit report. Async-signal-safe.
    pub fn set_frames(&self, fault_addr: u64, frames: &[u64]) {
        let header = self.header();
        let n = frames.len().min(MAX_FRAMES);
        // SAFETY: all fields lie inside the header; plain stores of words.
        unsafe {
            (*header).fault_addr = fault_addr;
            (&mut (*header).frames)[..n].copy_from_slice(&frames[..n]);
            (*header).frame_count = n as u32;
        }
    }

    /// Records a fatal signal. Async-signal-safe.
    pub fn record_signal(&self, signal: i32) {
        // SAFETY: the field is inside the header, 4-aligned.
        unsafe { AtomicI32::from_ptr(&raw mut (*self.header()).signal) }
            .store(signal, Ordering::Release);
        self.set_state(RankState::Signaled);
    }

    /// Records the status passed to `exit`: the state becomes `Exited`
    /// unless `MPI_Finalize` returned before.
    pub fn record_exit(&self, status: i32) {
        // SAFETY: the field is inside the header, 4-aligned.
        unsafe { AtomicI32::from_ptr(&raw mut (*self.header()).exit_status) }
            .store(status, Ordering::Release);
        // `Exited` means the process ended without `MPI_Finalize`; after
        // it, the state stays `Finalized` and only the status is added.
        if self.state() != Some(RankState::Finalized) {
            self.set_state(RankState::Exited);
        }
    }

    /// Records that the runtime stops the job (exit code `code`, at the
    /// call of site `site`), saying `message` (cut to
    /// [`STOP_MESSAGE_BYTES`] - 1 bytes at a character boundary).
    pub fn record_tool_stop(&self, code: i32, site: u32, message: &str) {
        let mut end = message.len().min(STOP_MESSAGE_BYTES - 1);
        while !message.is_char_boundary(end) {
            end -= 1;
        }
        let mut room = [0u8; STOP_MESSAGE_BYTES];
        room[..end].copy_from_slice(&message.as_bytes()[..end]);
        // SAFETY: the field is inside the header; only the stopping
        // thread writes it, before the state says it may be read.
        unsafe { (&raw mut (*self.header()).stop_message).write_volatile(room) };
        self.record_abort(code, site);
        self.set_state(RankState::ToolStopped);
    }

    /// Marks the rank as waiting in its failure ([`RawHeader::held`]).
    /// Async-signal-safe.
    pub fn hold(&self) {
        self.held_word().store(HELD, Ordering::Release);
    }

    /// Whether the rank still waits: nobody wrote 0 since [`Self::hold`].
    /// Async-signal-safe.
    pub fn is_held(&self) -> bool {
        self.held_word().load(Ordering::Acquire) == HELD
    }

    fn held_word(&self) -> &AtomicU32 {
        // SAFETY: the field is inside the header, 4-aligned.
        unsafe { AtomicU32::from_ptr(&raw mut (*self.header()).held) }
    }

    /// Counts a record that could not be written: the trace is then known
    /// to be incomplete.
    pub fn record_lost(&self) {
        // SAFETY: the field is inside the header, 8-aligned.
        unsafe { AtomicU64::from_ptr(&raw mut (*self.header()).lost_records) }
            .fetch_add(1, Ordering::AcqRel);
    }

    /// Records a call of `MPI_Abort`.
    pub fn record_abort(&self, code: i32, site: u32) {
        let header = self.header();
        // SAFETY: fields inside the header.
        unsafe {
            (*header).abort_code = code;
            (*header).abort_site = site;
        }
        self.set_state(RankState::Aborted);
    }
}

/// Whether two polls are one series: the same call on the same request
/// or pattern at the same record count (the site may differ: a loop can
/// poll from two lines).
fn same_poll(current: &RawOp, next: &RawOp) -> bool {
    RawOp {
        site: current.site,
        ..*next
    } == *current
}

/// Why a rank trace could not be read.
#[derive(Debug, thiserror::Error)]
pub enum TraceError {
    /// The file could not be read.
    #[error("cannot read trace {path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// The file is not a trace this crate reads.
    #[error("{path} is not a readable mbhybrid rank trace: {reason}; {help}", help = .reason.help())]
    Format {
        /// The file.
        path: PathBuf,
        /// What was wrong.
        reason: FormatError,
    },
}

/// What is wrong with the bytes of a rank trace ([`RankTrace::decode`]).
///
/// The message says what; [`FormatError::help`] says what to do.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum FormatError {
    /// The file is shorter than the header.
    #[error("the file has {len} bytes, fewer than the {needed} of a header")]
    TooShort {
        /// The file's length.
        len: usize,
        /// The bytes a header needs.
        needed: usize,
    },
    /// The file does not start with [`MAGIC`].
    #[error("the file does not start with `MBHTRACE` (it starts with {found:02x?})")]
    BadMagic {
        /// The first eight bytes.
        found: [u8; 8],
    },
    /// The header is of another version or layout.
    #[error(
        "the header says format version {version}, {header_size}-byte header, \
         {record_size}-byte records; this mbhybrid reads version {FORMAT_VERSION}, \
         {HEADER_SIZE}-byte header, {RECORD_SIZE}-byte records"
    )]
    Version {
        /// The header's version.
        version: u32,
        /// The header's header size.
        header_size: u32,
        /// The header's record size.
        record_size: u32,
    },
    /// The header's state is not a [`RankState`].
    #[error("the header's rank state {state} is not one this mbhybrid knows")]
    UnknownState {
        /// The state code.
        state: u32,
    },
    /// A counted record has a kind that is not an [`OpKind`].
    #[error("record {record} has unknown operation kind {kind}")]
    UnknownKind {
        /// The record's position.
        record: u64,
        /// The kind code.
        kind: u16,
    },
    /// A counted record's index is not its position (the writer numbers
    /// records densely from 0).
    #[error("record {record} says it is record {index}")]
    Misnumbered {
        /// The record's position.
        record: u64,
        /// The index it holds.
        index: u64,
    },
}

impl FormatError {
    /// What to do about it, in one line.
    pub fn help(&self) -> &'static str {
        match self {
            FormatError::BadMagic { .. } | FormatError::TooShort { .. } => {
                "give the `rank-N.trace` file of an interleaving directory; if it is one, \
                 it was overwritten or cut short after the run: run `mbhybrid verify` again"
            }
            FormatError::Version { .. } | FormatError::UnknownState { .. } => {
                "the program ran with the runtime library of another mbhybrid version: \
                 rebuild it with this version's `mbhybrid build`, then verify again"
            }
            _ => {
                "the file was damaged after the runtime wrote it (a full disk, or a change by \
                 hand): run `mbhybrid verify` again"
            }
        }
    }
}

/// Records a trace's header counts that its file does not hold: the file
/// was cut short (a copy that stopped, a full disk, a file system that lost
/// its tail). The records before the cut are complete and kept.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error(
    "the header counts {counted} records but the file ends after {kept} complete ones{}; \
     the rank's later operations are missing from the analysis",
    if *.partial_bytes > 0 { format!(" and {} bytes of the next", .partial_bytes) } else { String::new() }
)]
pub struct Truncated {
    /// Records the header counts.
    pub counted: u64,
    /// Complete records the file holds (all kept).
    pub kept: u64,
    /// Bytes of the first missing record that the file holds.
    pub partial_bytes: usize,
}

/// A trace as [`RankTrace::decode`] read it: the trace, and what the file
/// lacked.
#[derive(Debug, Clone)]
pub struct Decoded {
    /// Everything the file holds.
    pub trace: RankTrace,
    /// The records the header counts beyond the end of the file, if any.
    pub truncated: Option<Truncated>,
    /// The first damaged record (an unknown kind, an index that is not its
    /// position), if any: the trace holds the records before it.
    pub damaged: Option<FormatError>,
}

/// A decoded operation.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Op {
    /// Per-rank operation index.
    pub index: u64,
    /// What was called.
    pub kind: OpKind,
    /// [`crate::op::flags`] bits.
    pub flags: u16,
    /// Site id (0: unknown).
    pub site: u32,
    /// Peer as passed.
    pub peer: i32,
    /// Tag as passed.
    pub tag: i32,
    /// Communicator handle bits.
    pub comm: u64,
    /// Count as passed.
    pub count: i32,
    /// Source and tag of the matched message, for completed receives.
    pub matched: Option<(i32, i32)>,
    /// MPI return code.
    pub error: i32,
    /// Request handle bits.
    pub request: u64,
    /// Kind-specific word (see [`RawOp::aux`]).
    pub aux: u64,
}

impl Op {
    /// A record of `kind` at `index` with every other field zero, for
    /// building traces by hand (tests, tools).
    pub fn new(index: u64, kind: OpKind) -> Op {
        Op {
            index,
            kind,
            flags: 0,
            site: 0,
            peer: 0,
            tag: 0,
            comm: 0,
            count: 0,
            matched: None,
            error: 0,
            request: 0,
            aux: 0,
        }
    }

    /// A stored record whose kind decoded as `kind`.
    pub(crate) fn decoded(raw: &RawOp, kind: OpKind) -> Op {
        Op {
            index: raw.index,
            kind,
            flags: raw.flags,
            site: raw.site,
            peer: raw.peer,
            tag: raw.tag,
            comm: raw.comm,
            count: raw.count,
            matched: (raw.flags & crate::op::flags::HAS_STATUS != 0)
                .then_some((raw.matched_source, raw.matched_tag)),
            error: raw.error,
            request: raw.request,
            aux: raw.aux,
        }
    }

    /// Whether a flag of [`crate::op::flags`] is set.
    pub fn has(&self, flag: u16) -> bool {
        self.flags & flag != 0
    }
}

/// What a rank's process ended with, as far as its trace tells.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RankEnd {
    /// The last state the rank recorded.
    pub state: RankState,
    /// Exit status, when it exited.
    pub exit_status: Option<i32>,
    /// Fatal signal, when it got one.
    pub signal: Option<i32>,
    /// `MPI_Abort` error code and site, when it aborted.
    pub abort: Option<(i32, u32)>,
    /// Faulting address or instruction pointer of a signal.
    pub fault_addr: u64,
    /// Program counters for symbolisation.
    pub frames: Vec<u64>,
    /// Load bias of the main executable.
    pub exe_base: u64,
    /// Records the runtime could not write: what the rank did is not all
    /// in the trace.
    pub lost_records: u64,
    /// What the runtime said when it stopped the rank, when it did.
    pub tool_stop: Option<String>,
}

/// A poll a rank repeats without success and with no other recorded call
/// since it began ([`TraceWriter::note_poll`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Polling {
    /// The blocking call the poll stands for (`Wait`, `Waitany`,
    /// `Waitall`, `Waitsome`, `Probe`, `Mprobe`); its index is the trace's
    /// record count, one past the last record.
    pub wait: Op,
    /// The call polled (`Test`, `Testany`, ..., `Iprobe`, `Improbe`).
    pub polled: OpKind,
    /// How many times it found nothing.
    pub polls: u64,
}

/// A whole rank trace, read from disk.
#[derive(Debug, Clone, Serialize)]
pub struct RankTrace {
    /// Rank in `MPI_COMM_WORLD`.
    pub rank: i32,
    /// Size of `MPI_COMM_WORLD`.
    pub size: i32,
    /// Process id.
    pub pid: u32,
    /// How the rank ended (or where it is, for a running job).
    pub end: RankEnd,
    /// Index of the blocking call in progress, if any.
    pub blocking: Option<u64>,
    /// The poll the rank repeats since its last record, if it does.
    pub polling: Option<Polling>,
    /// Whether the rank failed and waits in the runtime to be released
    /// ([`RawHeader::held`]).
    pub held: bool,
    /// The operations, in issue order.
    pub ops: Vec<Op>,
}

impl RankTrace {
    /// The record that made the request a receive's `Matched` record
    /// belongs to, when a call on several requests (`MPI_Waitall`, ...)
    /// completed it: the runtime writes each request's
    /// [`OpKind::Completed`] record just before it processes the request,
    /// so before that request's `Matched` record. `None` for a `Matched`
    /// record of a single-request call (whose completion names its request
    /// itself) and in traces written before `Completed` records existed.
    pub fn completed_request_of(&self, matched: &Op) -> Option<u64> {
        let receiver = matched.matched_send()?.receiver;
        // Records are dense (index = position) in every trace the runtime
        // writes: look there first, so a reader calling this per record
        // stays linear; search only a trace built otherwise.
        let at = usize::try_from(matched.index)
            .ok()
            .filter(|&i| self.ops.get(i).is_some_and(|op| op.index == matched.index))
            .or_else(|| self.ops.iter().position(|op| op.index == matched.index))?;
        self.ops[..at]
            .iter()
            .rev()
            .take_while(|op| op.index > receiver)
            .find_map(|op| op.completed_request().filter(|c| c.call == receiver))
            .map(|c| c.origin)
    }

    /// The trace of a rank that finalized after `ops`, built by hand
    /// (tests, tools), like [`Op::new`].
    pub fn finalized(rank: i32, size: i32, ops: Vec<Op>) -> RankTrace {
        RankTrace {
            rank,
            size,
            pid: 1,
            end: RankEnd {
                state: RankState::Finalized,
                exit_status: None,
                signal: None,
                abort: None,
                fault_addr: 0,
                frames: vec![],
                exe_base: 0,
                lost_records: 0,
                tool_stop: None,
            },
            blocking: None,
            polling: None,
            held: false,
            ops,
        }
    }

    /// The MPI function each site made from a return address calls, from
    /// the trace's [`OpKind::CallSite`] records (a damaged one is skipped).
    pub fn call_sites(&self) -> impl Iterator<Item = (u32, String)> + '_ {
        self.ops
            .iter()
            .filter(|op| op.kind == OpKind::CallSite)
            .filter_map(|op| {
                let name = crate::op::call_name::decode([op.comm, op.request, op.aux])?;
                Some((op.site, name))
            })
    }

    /// The calls of MPI functions the runtime does not model, from the
    /// trace's [`OpKind::NotModelled`] records: (site, function). A record
    /// whose position and name disagree (a damaged one) is skipped; one of
    /// a function the table does not know gives the name it carries.
    pub fn not_modelled_calls(&self) -> impl Iterator<Item = (u32, String)> + '_ {
        self.ops
            .iter()
            .filter(|op| op.kind == OpKind::NotModelled)
            .filter_map(|op| {
                let words = [op.comm, op.request, op.aux];
                if op.count < 0 {
                    return Some((op.site, crate::op::call_name::decode(words)?));
                }
                let name = crate::support::name_at(usize::try_from(op.count).ok()?)?;
                (crate::op::call_name::encode(name) == words).then(|| (op.site, name.to_owned()))
            })
    }

    /// Reads a trace file, keeping the complete records of a file cut
    /// short (see [`RankTrace::read_decoded`] to learn that it was).
    pub fn read(path: &Path) -> Result<Self, TraceError> {
        Self::read_decoded(path).map(|d| d.trace)
    }

    /// Reads a trace file and tells whether it was cut short.
    pub fn read_decoded(path: &Path) -> Result<Decoded, TraceError> {
        let bytes = std::fs::read(path).map_err(|source| TraceError::Io {
            path: path.to_owned(),
            source,
        })?;
        Self::decode(&bytes).map_err(|reason| TraceError::Format {
            path: path.to_owned(),
            reason,
        })
    }

    /// Decodes a trace from its bytes, keeping the complete records of a
    /// file cut short (see [`RankTrace::decode`] to learn that it was).
    pub fn parse(bytes: &[u8]) -> Result<Self, FormatError> {
        Self::decode(bytes).map(|d| d.trace)
    }

    /// Decodes a trace from its bytes. Never panics; allocates at most in
    /// proportion to `bytes`.
    ///
    /// A prefix of a trace (a header alone, or a header and some records)
    /// decodes to the complete records it holds, with
    /// [`Decoded::truncated`] saying how many the header counts.
    pub fn decode(bytes: &[u8]) -> Result<Decoded, FormatError> {
        const RAW_HEADER: usize = std::mem::size_of::<RawHeader>();
        let Some(head) = bytes.get(..RAW_HEADER) else {
            return Err(FormatError::TooShort {
                len: bytes.len(),
                needed: RAW_HEADER,
            });
        };
        let header: RawHeader = bytemuck::pod_read_unaligned(head);
        if header.magic != MAGIC {
            return Err(FormatError::BadMagic {
                found: header.magic,
            });
        }
        if header.version != FORMAT_VERSION
            || header.header_size as usize != HEADER_SIZE
            || header.record_size as usize != RECORD_SIZE
        {
            return Err(FormatError::Version {
                version: header.version,
                header_size: header.header_size,
                record_size: header.record_size,
            });
        }
        let state = RankState::from_code(header.state).ok_or(FormatError::UnknownState {
            state: header.state,
        })?;
        let records = bytes.get(HEADER_SIZE..).unwrap_or_default();
        // Bounded by the file: a damaged `record_count` cannot make the
        // reader allocate more than the bytes it has.
        let available = (records.len() / RECORD_SIZE) as u64;
        let count = header.record_count.min(available);
        let truncated = (header.record_count > available).then_some(Truncated {
            counted: header.record_count,
            kept: available,
            partial_bytes: records.len() % RECORD_SIZE,
        });
        let (mut ops, damaged) = decode_records(records, count);
        // The poll follows the records: its communicator is renamed as a
        // record after them would be.
        let mut polling = polling_of(&header);
        if let Some(poll) = &mut polling {
            ops.push(poll.wait.clone());
            name_communicators(&mut ops);
            poll.wait = ops.pop().unwrap_or_else(|| poll.wait.clone());
        } else {
            name_communicators(&mut ops);
        }
        let frame_count = (header.frame_count as usize).min(MAX_FRAMES);
        let trace = RankTrace {
            rank: header.rank,
            size: header.size,
            pid: header.pid,
            end: RankEnd {
                state,
                // After `MPI_Finalize` the state stays `Finalized`; a
                // nonzero status is still the program's.
                exit_status: matches!(state, RankState::Exited | RankState::Finalized)
                    .then_some(header.exit_status),
                signal: (header.signal != 0).then_some(header.signal),
                abort: matches!(state, RankState::Aborted | RankState::ToolStopped)
                    .then_some((header.abort_code, header.abort_site)),
                fault_addr: header.fault_addr,
                frames: header.frames[..frame_count].to_vec(),
                exe_base: header.exe_base,
                lost_records: header.lost_records,
                tool_stop: (state == RankState::ToolStopped)
                    .then(|| stop_message(&header.stop_message))
                    .flatten(),
            },
            blocking: header.blocking_index.checked_sub(1),
            polling,
            held: header.held == HELD,
            ops,
        };
        Ok(Decoded {
            trace,
            truncated,
            damaged,
        })
    }
}

/// The first `count` records of `records`, up to the first damaged one
/// (and why it is damaged). The records before a damaged one are kept:
/// what the rank did up to there is still worth analysing, and the
/// caller learns where the trace stops being readable.
fn decode_records(records: &[u8], count: u64) -> (Vec<Op>, Option<FormatError>) {
    let mut ops = Vec::with_capacity(count as usize);
    for (i, chunk) in (0..count).zip(records.chunks_exact(RECORD_SIZE)) {
        let raw: RawOp = bytemuck::pod_read_unaligned(chunk);
        let Some(kind) = OpKind::from_code(raw.kind) else {
            let damaged = FormatError::UnknownKind {
                record: i,
                kind: raw.kind,
            };
            return (ops, Some(damaged));
        };
        if raw.index != i {
            let damaged = FormatError::Misnumbered {
                record: i,
                index: raw.index,
            };
            return (ops, Some(damaged));
        }
        ops.push(Op::decoded(&raw, kind));
    }
    (ops, None)
}

/// The poll series of `header`, when it is current (it began after the
/// last record) and its kinds decode.
fn polling_of(header: &RawHeader) -> Option<Polling> {
    let poll = &header.poll;
    if header.polls == 0 || poll.index != header.record_count {
        return None;
    }
    let wait = OpKind::from_code(poll.kind)?;
    let polled = OpKind::from_code(u16::try_from(poll.matched_tag).ok()?)?;
    Some(Polling {
        wait: Op::decoded(poll, wait),
        polled,
        polls: header.polls,
    })
}

/// The name every trace gives `MPI_COMM_WORLD` once read. Its handle is
/// local: a constant `int` in MPICH, but in Open MPI the address of a
/// library global, which address-space randomisation moves in every
/// process. Bit 62 set, bit 63 clear: no MPICH handle (32 bits), no user
/// space address (47 bits) and no [`OpKind::CommId`] name (bit 63) is this.
pub const WORLD_COMM: u64 = 1 << 62;

/// Renames the communicator of every MPI call recorded after a
/// [`OpKind::CommId`] record of its handle to the id that record gives,
/// which is the same in every member's trace, and `MPI_COMM_WORLD` (the
/// communicator of the `MPI_Init` record) to [`WORLD_COMM`]. Handles are
/// local: MPICH numbers a communicator by what its process made before,
/// so two ranks can hold the same communicator under different bits (and
/// reuse bits after `MPI_Comm_free`, hence the renaming follows the
/// records in order), and Open MPI's handles are addresses. Communicators
/// without a name (`MPI_COMM_SELF`) keep their bits. Which records hold a
/// communicator is [`OpKind::comm_is_communicator`]'s to say.
///
/// Linear in the records (a map, not a list: a damaged trace of many
/// distinct handles must not take quadratic time).
fn name_communicators(ops: &mut [Op]) {
    let mut names: std::collections::HashMap<u64, u64> = std::collections::HashMap::new();
    if let Some(init) = ops
        .iter()
        .find(|op| matches!(op.kind, OpKind::Init | OpKind::InitThread))
    {
        names.insert(init.comm, WORLD_COMM);
    }
    for op in ops.iter_mut() {
        if let Some(naming) = op.comm_naming() {
            names.insert(naming.handle, naming.id);
            continue;
        }
        if names.is_empty() || !op.kind.comm_is_communicator() {
            continue;
        }
        if let Some(&id) = names.get(&op.comm) {
            op.comm = id;
        }
    }
}

/// The text of a [`RawHeader::stop_message`], `None` when empty.
fn stop_message(room: &[u8; STOP_MESSAGE_BYTES]) -> Option<String> {
    let len = room.iter().position(|&b| b == 0).unwrap_or(room.len());
    (len > 0).then(|| String::from_utf8_lossy(&room[..len]).into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::op::flags;

    #[test]
    fn communicators_are_renamed_to_their_ids_from_their_naming_on() {
        let with = |index, kind, comm, aux| Op {
            comm,
            aux,
            ..Op::new(index, kind)
        };
        let id = 1 << 63 | 7;
        let later = 1 << 63 | 9;
        let mut ops = vec![
            with(0, OpKind::Send, 0xc400_0000, 0),
            with(1, OpKind::CommId, 0xc400_0000, id),
            with(2, OpKind::Recv, 0xc400_0000, 0),
            // A clock record's `comm` is a clock, not a communicator.
            with(3, OpKind::Matched, 0xc400_0000, 0),
            with(4, OpKind::Barrier, 0x4400_0000, 0),
            // The handle freed and made again: a new name.
            with(5, OpKind::CommId, 0xc400_0000, later),
            with(6, OpKind::Bcast, 0xc400_0000, 0),
            // A constructor's parent is a communicator.
            with(7, OpKind::CommMade, 0xc400_0000, 0),
        ];
        name_communicators(&mut ops);
        let comms: Vec<u64> = ops.iter().map(|o| o.comm).collect();
        assert_eq!(
            comms,
            [
                0xc400_0000,
                0xc400_0000,
                id,
                0xc400_0000,
                0x4400_0000,
                0xc400_0000,
                later,
                later
            ]
        );
    }

    /// Open MPI's world is an address that differs in every process: each
    /// trace's `MPI_Init` record says which, and every trace calls it the
    /// same.
    #[test]
    fn world_is_renamed_from_the_init_record_on() {
        let with = |index, kind, comm| Op {
            comm,
            ..Op::new(index, kind)
        };
        let world = 0x7f3a_51c0_2140;
        let mut ops = vec![
            with(0, OpKind::Init, world),
            with(1, OpKind::Send, world),
            with(2, OpKind::CommMade, world),
            with(3, OpKind::Matched, world),
            with(4, OpKind::Send, 0x7f3a_51c0_2500),
        ];
        name_communicators(&mut ops);
        let comms: Vec<u64> = ops.iter().map(|o| o.comm).collect();
        assert_eq!(
            comms,
            [WORLD_COMM, WORLD_COMM, WORLD_COMM, world, 0x7f3a_51c0_2500]
        );
    }

    /// An 8-aligned zeroed buffer standing in for the mapping.
    fn mapping(records: u64) -> Vec<u64> {
        vec![0u64; TraceWriter::file_len(records) as usize / 8]
    }

    fn bytes(buf: &[u64]) -> &[u8] {
        bytemuck::cast_slice(buf)
    }

    #[test]
    fn written_records_read_back() {
        let mut buf = mapping(4);
        let len = buf.len() * 8;
        // SAFETY: buf outlives the writer and is 8-aligned.
        let mut w = unsafe { TraceWriter::from_raw(buf.as_mut_ptr().cast(), len) }.unwrap();
        w.init_header(1, 3, 42, 0x5555_0000);
        let send = RawOp {
            kind: OpKind::Send as u16,
            peer: 2,
            tag: 7,
            site: 3,
            ..Default::default()
        };
        assert_eq!(w.append(send), Some(0));
        let recv = RawOp {
            kind: OpKind::Recv as u16,
            peer: -2,
            flags: flags::ANY_SOURCE,
            ..Default::default()
        };
        let i = w.append(recv).unwrap();
        w.set_blocking(Some(i));
        w.update(i, |op| {
            op.flags |= flags::RETURNED | flags::HAS_STATUS;
            op.matched_source = 0;
            op.matched_tag = 7;
        });
        let trace = RankTrace::parse(bytes(&buf)).unwrap();
        assert_eq!((trace.rank, trace.size, trace.pid), (1, 3, 42));
        assert_eq!(trace.end.state, RankState::Running);
        assert_eq!(trace.blocking, Some(1));
        assert_eq!(trace.ops.len(), 2);
        assert_eq!(trace.ops[0].kind, OpKind::Send);
        assert_eq!(trace.ops[0].site, 3);
        assert_eq!(trace.ops[1].matched, Some((0, 7)));
        assert!(trace.ops[1].has(flags::ANY_SOURCE));
        assert_eq!(trace.end.exe_base, 0x5555_0000);
    }

    /// Issue 16: a poll series counts while the same poll repeats with no
    /// record between; another poll starts a new one, a record ends it.
    #[test]
    fn poll_series_read_back_until_a_record_ends_them() {
        let mut buf = mapping(4);
        let len = buf.len() * 8;
        // SAFETY: buf outlives the writer and is 8-aligned.
        let mut w = unsafe { TraceWriter::from_raw(buf.as_mut_ptr().cast(), len) }.unwrap();
        w.init_header(0, 2, 42, 0);
        w.append(RawOp {
            kind: OpKind::Irecv as u16,
            request: 9,
            ..Default::default()
        });
        let wait = |site| RawOp {
            kind: OpKind::Wait as u16,
            request: 9,
            aux: 1,
            site,
            matched_tag: OpKind::Test as i32,
            ..Default::default()
        };
        for site in [5, 6, 5] {
            w.note_poll(wait(site));
        }
        let polling = RankTrace::parse(bytes(&buf)).unwrap().polling.unwrap();
        assert_eq!(
            (polling.wait.kind, polling.polled),
            (OpKind::Wait, OpKind::Test)
        );
        assert_eq!(
            (polling.polls, polling.wait.index, polling.wait.aux),
            (3, 1, 1)
        );
        assert_eq!(polling.wait.site, 5, "the series keeps its first site");
        w.note_poll(RawOp {
            request: 8,
            ..wait(5)
        });
        let polling = RankTrace::parse(bytes(&buf)).unwrap().polling.unwrap();
        assert_eq!((polling.polls, polling.wait.request), (1, 8));
        w.append(RawOp {
            kind: OpKind::Send as u16,
            ..Default::default()
        });
        assert_eq!(RankTrace::parse(bytes(&buf)).unwrap().polling, None);
    }

    #[test]
    fn call_site_records_name_the_function_of_their_site() {
        let mut buf = mapping(3);
        let len = buf.len() * 8;
        // SAFETY: as above.
        let mut w = unsafe { TraceWriter::from_raw(buf.as_mut_ptr().cast(), len) }.unwrap();
        w.init_header(0, 2, 1, 0x5555_0000);
        let id = crate::site::site_from_offset(0x1189).unwrap();
        let [comm, request, aux] = crate::op::call_name::encode("MPI_Recv");
        for (site, comm) in [(id, comm), (id + 1, u64::MAX)] {
            w.append(RawOp {
                kind: OpKind::CallSite as u16,
                flags: flags::RETURNED,
                site,
                comm,
                request,
                aux,
                ..Default::default()
            });
        }
        w.append(RawOp {
            kind: OpKind::Recv as u16,
            site: id,
            ..Default::default()
        });
        let trace = RankTrace::parse(bytes(&buf)).unwrap();
        // The second record is damaged (not a name): skipped.
        let sites: Vec<(u32, String)> = trace.call_sites().collect();
        assert_eq!(sites, [(id, "MPI_Recv".to_string())]);
        assert_eq!(trace.ops[2].site, id);
    }

    #[test]
    fn full_mapping_refuses_appends() {
        let mut buf = mapping(1);
        let len = buf.len() * 8;
        // SAFETY: as above.
        let mut w = unsafe { TraceWriter::from_raw(buf.as_mut_ptr().cast(), len) }.unwrap();
        w.init_header(0, 1, 1, 0);
        assert_eq!(
            w.append(RawOp {
                kind: 1,
                ..Default::default()
            }),
            Some(0)
        );
        assert_eq!(
            w.append(RawOp {
                kind: 1,
                ..Default::default()
            }),
            None
        );
        assert_eq!(w.len(), 1);
    }

    #[test]
    fn ends_are_recorded() {
        let mut buf = mapping(1);
        let len = buf.len() * 8;
        // SAFETY: as above.
        let w = unsafe { TraceWriter::from_raw(buf.as_mut_ptr().cast(), len) };
        let mut w = w.unwrap();
        w.init_header(0, 1, 1, 0);
        w.set_frames(0xdead, &[1, 2, 3]);
        w.record_signal(11);
        let t = RankTrace::parse(bytes(&buf)).unwrap();
        assert_eq!(t.end.state, RankState::Signaled);
        assert_eq!(t.end.signal, Some(11));
        assert_eq!(t.end.frames, vec![1, 2, 3]);
        assert_eq!(t.end.fault_addr, 0xdead);
    }

    #[test]
    fn a_matched_record_of_a_waitall_names_its_request_through_completed() {
        let op = |index: u64, kind: OpKind, request: u64, aux: u64| {
            let mut op = Op::new(index, kind);
            op.request = request;
            op.aux = aux;
            op
        };
        let trace = RankTrace::finalized(
            0,
            2,
            vec![
                op(0, OpKind::Irecv, 0, 0),
                op(1, OpKind::Irecv, 0, 0),
                op(2, OpKind::Waitall, 0, 1),
                op(3, OpKind::Completed, 2, 0),
                op(4, OpKind::Matched, 2, 7),
                op(5, OpKind::Completed, 2, 1),
                op(6, OpKind::Matched, 2, 9),
                op(7, OpKind::Wait, 0, 1),
                op(8, OpKind::Matched, 7, 3),
            ],
        );
        assert_eq!(trace.completed_request_of(&trace.ops[4]), Some(0));
        assert_eq!(trace.completed_request_of(&trace.ops[6]), Some(1));
        assert_eq!(
            trace.completed_request_of(&trace.ops[8]),
            None,
            "a single Wait"
        );
    }

    #[test]
    fn a_held_rank_is_released_through_its_file() {
        let mut buf = mapping(1);
        let len = buf.len() * 8;
        // SAFETY: as above.
        let mut w = unsafe { TraceWriter::from_raw(buf.as_mut_ptr().cast(), len) }.unwrap();
        w.init_header(0, 1, 1, 0);
        assert!(!w.is_held());
        w.record_signal(6);
        w.hold();
        assert!(w.is_held());
        assert!(RankTrace::parse(bytes(&buf)).unwrap().held);
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("rank-0.trace");
        std::fs::write(&path, bytes(&buf)).unwrap();
        release_held(&path).unwrap();
        let released = std::fs::read(&path).unwrap();
        let t = RankTrace::parse(&released).unwrap();
        assert!(!t.held);
        assert_eq!(t.end.signal, Some(6), "nothing else was written");
    }

    #[test]
    fn rejects_garbage_and_other_versions() {
        assert!(matches!(
            RankTrace::parse(b"short"),
            Err(FormatError::TooShort { len: 5, .. })
        ));
        let mut buf = mapping(0);
        let len = buf.len() * 8;
        // SAFETY: as above.
        let mut w = unsafe { TraceWriter::from_raw(buf.as_mut_ptr().cast(), len) }.unwrap();
        w.init_header(0, 1, 1, 0);
        bytemuck::cast_slice_mut::<u64, u8>(&mut buf)[8] = 99;
        let error = RankTrace::parse(bytes(&buf)).unwrap_err();
        assert!(matches!(error, FormatError::Version { version: 99, .. }));
        assert!(error.to_string().contains("version 99"), "{error}");
    }
}

/// A loop or zone marker enclosing a wildcard event (DESIGN.md, "MPI_Pcontrol
/// markers").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
pub struct LoopMarker {
    /// 7301 (a loop chosen for abstraction) or 7304 (any other loop with
    /// wildcard sites).
    pub level: u32,
    /// The loop's id.
    pub loop_id: i32,
}

/// One wildcard receive or probe, with its clocks and senders: what the
/// scheduler reads of a run (seed 000 §5.3.2.4, `parseProcessOutput`).
///
/// A choice among requests (`MPI_Waitany`, a `MPI_Testany` that completed
/// a request, `MPI_Waitsome`, `MPI_Testsome`, given more than one active
/// request; seed 001 §4) is an event of the same numbering:
/// [`WildcardEvent::is_index_choice`] tells it apart, `matched` is then the
/// index returned (the first of the list for the `some` forms) and
/// `potential` the other indices it could have returned. The search treats
/// both alike: a value per (rank, event), forced on replay.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct WildcardEvent {
    /// The receiving rank.
    pub rank: i32,
    /// Per-rank wildcard event number (0-based, in issue order).
    pub event: u32,
    /// Index of the receive's (or probe's) record.
    pub op_index: u64,
    /// The call.
    pub kind: OpKind,
    /// Its site id.
    pub site: u32,
    /// Clock when issued.
    pub start_clock: u64,
    /// Final clock (seed 000 rule R4).
    pub final_clock: u64,
    /// The sender it matched (-1 when unknown).
    pub matched: i32,
    /// The tag it matched.
    pub matched_tag: i32,
    /// Other senders that could have matched it, sorted.
    pub potential: Vec<i32>,
    /// Loop markers open at the call, outermost first.
    pub loops: Vec<LoopMarker>,
    /// The zone the call is in and its mixing bound `k` (Pcontrol 7303),
    /// when one was opened.
    pub zone: Option<(i32, i32)>,
    /// What the receive or probe accepts as the program wrote it (`None`
    /// for an index choice, or when the call's record is missing).
    pub pattern: Option<RecvPattern>,
    /// For potential senders whose message the matches-before oracle
    /// found, and for `matched` (the message taken): the wildcard events
    /// `(rank, event)` of this run in that message's causal past,
    /// ascending. The message may exist only because they matched as they
    /// did (under `--buffering zero` a rank sends its second message only
    /// once its first was received), so a run that flips one of them does
    /// not force this event to `matched`, and a run whose forced match of a
    /// sender did not happen is tried again with that sender's forced as
    /// they matched here. (Forcing them whenever this event is forced to a
    /// sender loses combinations: the message usually needs them to
    /// happen, not to match as they did: a run forced a sender's earlier
    /// messages to the receives they took once and missed the other
    /// orders of those receives.) Filled by the
    /// caller from the oracle; empty as read from the trace.
    pub enablers: Vec<(i32, Vec<(i32, u32)>)>,
    /// The run's guidance forced this event, as the runtime recorded it
    /// ([`EventClock::forced`](crate::record::EventClock::forced)): the
    /// one answer to "was this event forced?" for every reader.
    pub forced: bool,
    /// For an index choice: every request active at the call was
    /// completed by calls at the same site before the innermost loop
    /// around the call was left (its `MPI_Pcontrol` exit marker), so the
    /// loop handled all of them whatever the order. With the static
    /// analysis's word that the order decides nothing there
    /// (`CompletionOrder::Irrelevant`), the choice is no choice.
    pub settled_in_loop: bool,
}

impl WildcardEvent {
    /// A choice of which request completes (`matched` and `potential` are
    /// indices into the call's array), not of a sender.
    pub fn is_index_choice(&self) -> bool {
        self.kind.chooses_request()
    }
}

/// The loop markers open at a call, and its zone.
type MarkerContext = (Vec<LoopMarker>, Option<(i32, i32)>);

impl RankTrace {
    /// The rank's wildcard events that reached a final clock, by event
    /// number, with their potential senders.
    pub fn wildcard_events(&self) -> Vec<WildcardEvent> {
        use std::collections::BTreeMap;
        let mut events: BTreeMap<u32, WildcardEvent> = BTreeMap::new();
        let mut potential: BTreeMap<u32, Vec<i32>> = BTreeMap::new();
        // Markers open at each record index, computed in one pass.
        let mut open_loops: Vec<LoopMarker> = Vec::new();
        let mut zone = None;
        let mut context_at: BTreeMap<u64, MarkerContext> = BTreeMap::new();
        let wildcard_ops: std::collections::HashSet<u64> = self
            .ops
            .iter()
            .filter_map(Op::event_clock)
            .map(|clock| clock.call)
            .collect();
        for op in &self.ops {
            match op.kind {
                OpKind::Pcontrol => {
                    let level = (op.aux >> 32) as u32;
                    let id = op.aux as u32 as i32;
                    match level {
                        ABSTRACT_ENTER | LOOP_ENTER => {
                            open_loops.push(LoopMarker { level, loop_id: id })
                        }
                        ABSTRACT_EXIT | LOOP_EXIT => {
                            let opening = if level == ABSTRACT_EXIT {
                                ABSTRACT_ENTER
                            } else {
                                LOOP_ENTER
                            };
                            if let Some(at) = open_loops
                                .iter()
                                .rposition(|m| m.level == opening && m.loop_id == id)
                            {
                                open_loops.truncate(at);
                            }
                        }
                        ZONE => zone = Some((id, op.peer)),
                        _ => {}
                    }
                }
                _ if wildcard_ops.contains(&op.index) => {
                    context_at.insert(op.index, (open_loops.clone(), zone));
                }
                _ => {}
            }
        }
        let settled = crate::loop_completions::LoopCompletions::of(self);
        for op in &self.ops {
            if let Some(clock) = op.event_clock() {
                let event = clock.event;
                let call = self.ops.get(clock.call as usize);
                let (loops, zone) = context_at.get(&clock.call).cloned().unwrap_or_default();
                events.insert(
                    event,
                    WildcardEvent {
                        rank: self.rank,
                        event,
                        op_index: clock.call,
                        kind: call.map_or(
                            if op.kind == OpKind::ChoiceClock {
                                OpKind::Waitany
                            } else {
                                OpKind::Recv
                            },
                            |c| c.kind,
                        ),
                        site: call.map_or(0, |c| c.site),
                        start_clock: clock.issued_clock,
                        final_clock: clock.final_clock,
                        matched: clock.matched,
                        matched_tag: clock.matched_tag,
                        potential: Vec::new(),
                        loops,
                        zone,
                        pattern: call
                            .filter(|_| op.kind == OpKind::WildcardClock)
                            .map(RecvPattern::as_written),
                        enablers: Vec::new(),
                        forced: clock.forced,
                        settled_in_loop: op.kind == OpKind::ChoiceClock
                            && settled.settled(clock.call, clock.matched_tag),
                    },
                );
            } else if let Some(other) = op.potential() {
                potential
                    .entry(other.event)
                    .or_default()
                    .push(other.alternative);
            }
        }
        for (event, mut senders) in potential {
            if let Some(e) = events.get_mut(&event) {
                senders.retain(|&s| s != e.matched);
                senders.sort_unstable();
                senders.dedup();
                e.potential = senders;
            }
        }
        events.into_values().collect()
    }
}

#[cfg(test)]
mod wildcard_tests {
    use super::*;

    fn op(index: u64, kind: OpKind) -> Op {
        Op::new(index, kind)
    }

    #[test]
    fn events_gather_clocks_senders_and_markers() {
        let mut ops = vec![
            Op {
                aux: ((PCONTROL_ZONE as u64) << 32) | 4,
                peer: 2,
                ..op(0, OpKind::Pcontrol)
            },
            Op {
                aux: ((PCONTROL_ABSTRACT_ENTER as u64) << 32) | 9,
                ..op(1, OpKind::Pcontrol)
            },
            Op {
                site: 5,
                peer: -2,
                ..op(2, OpKind::Irecv)
            },
            Op {
                aux: ((PCONTROL_ABSTRACT_EXIT as u64) << 32) | 9,
                ..op(3, OpKind::Pcontrol)
            },
            Op {
                site: 6,
                peer: -2,
                ..op(4, OpKind::Recv)
            },
        ];
        // The Recv took P2's message, which is late for the Irecv (event 0).
        ops.push(Op {
            count: 0,
            peer: 0,
            request: 2,
            comm: 0,
            aux: 0,
            ..op(5, OpKind::WildcardClock)
        });
        ops.push(Op {
            count: 1,
            peer: 2,
            request: 4,
            comm: 0,
            aux: 1,
            ..op(6, OpKind::WildcardClock)
        });
        ops.push(Op {
            count: 0,
            peer: 2,
            request: 4,
            aux: 0,
            ..op(7, OpKind::PotentialMatch)
        });
        ops.push(Op {
            count: 0,
            peer: 2,
            request: 4,
            aux: 0,
            ..op(8, OpKind::PotentialMatch)
        });
        ops.push(Op {
            count: 1,
            peer: 2,
            request: 4,
            aux: 0,
            ..op(9, OpKind::PotentialMatch)
        });
        let trace = RankTrace::finalized(1, 3, ops);
        let events = trace.wildcard_events();
        assert_eq!(events.len(), 2);
        assert_eq!(events[0].potential, vec![2]);
        assert_eq!(events[0].site, 5);
        assert_eq!(events[0].kind, OpKind::Irecv);
        assert_eq!(
            events[0].loops,
            vec![LoopMarker {
                level: PCONTROL_ABSTRACT_ENTER as u32,
                loop_id: 9
            }]
        );
        assert_eq!(events[0].zone, Some((4, 2)));
        // A sender equal to the matched one is not an alternative.
        assert_eq!(events[1].potential, Vec::<i32>::new());
        assert!(events[1].loops.is_empty());
        assert_eq!(events[1].final_clock, 1);
    }

    /// A `Waitany` choice (seed 001 §4) shares the event numbering and reads
    /// back as an index choice with its potential indices.
    #[test]
    fn index_choices_read_back_as_events() {
        let ops = vec![
            Op {
                site: 3,
                ..op(0, OpKind::Waitany)
            },
            Op {
                count: 0,
                peer: 0,
                request: 0,
                comm: 0,
                aux: 0,
                tag: -1,
                ..op(1, OpKind::ChoiceClock)
            },
            Op {
                site: 4,
                ..op(2, OpKind::Waitany)
            },
            Op {
                count: 0,
                peer: 1,
                request: 2,
                aux: 0,
                ..op(3, OpKind::PotentialIndex)
            },
            // An index equal to the one returned is no alternative.
            Op {
                count: 0,
                peer: 0,
                request: 2,
                ..op(4, OpKind::PotentialIndex)
            },
        ];
        let trace = RankTrace::finalized(0, 3, ops);
        let events = trace.wildcard_events();
        assert_eq!(events.len(), 1);
        let e = &events[0];
        assert!(e.is_index_choice());
        assert_eq!((e.kind, e.site, e.matched), (OpKind::Waitany, 3, 0));
        assert_eq!(e.potential, vec![1]);
        assert!(!OpKind::Recv.chooses_request());
    }
}
