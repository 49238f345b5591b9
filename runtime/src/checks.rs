//! Local checks (DESIGN.md "Local checks"; seed 000 §2.3.6): each failed
//! check appends an `OpKind::LocalCheck` record (`mbh_trace::op`), never
//! changing what a correct program computes.
//!
//! * **type-mismatch**: the receiver compares the sender's signature word
//!   with its own datatype ([`crate::typesig`], done in the engine).
//! * **request-leak**: requests still outstanding at `MPI_Finalize`.
//! * **resource-leak**: communicators, committed datatypes, groups and ops
//!   the program made and never freed ([`Resources`], a fixed-size table).
//! * **after-finalize**: an `MPI_*` call after `MPI_Finalize` returned.
//! * **buffer-reuse**: a packed nonblocking send's buffer differs, when
//!   the program's `Wait`/`Test` completes it, from the copy that went
//!   (done in the engine, `Rt::check_send_buffer`).
//! * **invalid-argument**: an `MPI_*` call returned an error whose class
//!   blames an argument (`MPI_ERR_RANK`, `MPI_ERR_COUNT`, ...); handled as
//!   an MPI error below, recorded as this check. Also a call the runtime
//!   refused ([`refuse`]) because MPI would read an argument that cannot be
//!   read (a NULL counts array, `null_arrays.rs`).
//! * **mpi-error**: an `MPI_*` call returned an error code. The runtime
//!   sets `MPI_ERRORS_RETURN` on `MPI_COMM_WORLD` and `MPI_COMM_SELF` at
//!   start (communicators made from them inherit it), remembers the handler the program asks for
//!   ([`Handlers`]), and after recording applies it: under
//!   `MPI_ERRORS_ARE_FATAL` it prints MPI's message and aborts the job.

use crate::consts::{comm_world, SUCCESS};
use crate::handle::HandleBits;
use crate::record;
use mbh_trace::check::Check;
use mbh_trace::op::BadArgument;
use mpi_sys::{MPI_Comm, MPI_Errhandler};
use std::io::Write;
use std::os::raw::{c_char, c_int};
use std::sync::atomic::{AtomicI32, AtomicU64, Ordering};

/// Live handles the resource table follows; more are not checked.
pub const RESOURCE_SLOTS: usize = 1024;

/// Communicators whose program-chosen handler is not fatal, followed.
pub const HANDLER_SLOTS: usize = 256;

/// Index of the record the current call began (`u64::MAX`: none).
static CALL: AtomicU64 = AtomicU64::new(u64::MAX);

/// The argument the runtime refused in the call in progress (a
/// [`BadArgument`] code, 0: none), which [`on_error`] records in place of
/// classifying the code.
static REFUSED: AtomicI32 = AtomicI32::new(0);

/// Refuses the call in progress for `argument`, which MPI must not see
/// (an array it would read is NULL: MPICH reads it unchecked and crashes,
/// `null_arrays.rs`): returns the error the program gets, `MPI_ERR_ARG`
/// (MPI-4.0 §9.4, "invalid argument of some other kind"); the export's
/// [`on_error`] records it and runs the program's handler, as for an error
/// MPI returned.
pub fn refuse(argument: BadArgument) -> c_int {
    REFUSED.store(argument as i32, Ordering::Relaxed);
    mpi_sys::MPI_ERR_ARG as c_int
}

/// The argument [`refuse`] refused in this call, taken.
fn take_refused() -> Option<BadArgument> {
    match REFUSED.swap(0, Ordering::Relaxed) {
        0 => None,
        code => Some(BadArgument::from_code(code)),
    }
}

/// Notes the record of the call in progress (from `record::begin`).
#[inline(always)]
pub fn note_call(index: u64) {
    CALL.store(index, Ordering::Relaxed);
}

/// `MPI_ERRORS_RETURN`.
pub fn errors_return() -> MPI_Errhandler {
    // SAFETY: an immutable C constant defined by mpi-sys's shim.
    unsafe { mpi_sys::RSMPI_ERRORS_RETURN }
}

/// `MPI_ERRORS_ARE_FATAL`.
pub fn errors_are_fatal() -> MPI_Errhandler {
    // SAFETY: an immutable C constant defined by mpi-sys's shim.
    unsafe { mpi_sys::RSMPI_ERRORS_ARE_FATAL }
}

/// Sets `MPI_ERRORS_RETURN` on world (at start, after the runtime made
/// its own shadow of world, which keeps `MPI_ERRORS_ARE_FATAL`) and on
/// `MPI_COMM_SELF`: an error there would otherwise end the process in
/// MPI's own handler, which under Open MPI often says nothing the report
/// can read (its message goes through the launcher, or nowhere).
pub fn redirect_errors() {
    // SAFETY: MPI is initialised; a predefined handler.
    let rc = unsafe { mpi_sys::PMPI_Comm_set_errhandler(comm_world(), errors_return()) };
    if rc == SUCCESS {
        crate::lifecycle::errors_returned();
    }
    // SAFETY: as above; an immutable C constant defined by mpi-sys's shim.
    unsafe { mpi_sys::PMPI_Comm_set_errhandler(mpi_sys::RSMPI_COMM_SELF, errors_return()) };
}

/// Whether errors are redirected to the runtime.
pub fn redirected() -> bool {
    crate::lifecycle::errors_return()
}

/// The site of record `index` (0 when unknown).
pub fn site_of(index: u64) -> u32 {
    let mut site = 0;
    record::update(index, |op| site = op.site);
    site
}

/// Appends the record of `check` at `site`, about the call whose record
/// is `call_record` (`u64::MAX`: none). The record's layout is
/// [`Check::record`]'s, the one place that writes it.
pub fn report(check: Check, site: u32, call_record: u64) {
    record::append(|| check.record(site, call_record));
}

/// A call after `MPI_Finalize` (from every export): records it with the
/// call's site; the call then goes to MPI as the program made it.
#[cold]
pub fn after_finalize() {
    if !record::recording() {
        return;
    }
    let site = record::site();
    report(Check::AfterFinalize, site, u64::MAX);
}

/// Before a wrapped call: the call's site, for [`on_error`].
#[inline(always)]
pub fn before_call() -> u32 {
    CALL.store(u64::MAX, Ordering::Relaxed);
    REFUSED.store(0, Ordering::Relaxed);
    record::peek_site()
}

/// After a wrapped call on `comm` returned `rc`: an error is recorded
/// (`MpiError`: `tag` = the code, `request` = the call's record), then
/// handled as the program asked: returned under `MPI_ERRORS_RETURN` (or a
/// handler of its own, which MPI already called), otherwise MPI's message
/// on standard error and the job aborted with the code.
#[inline(always)]
pub fn on_error(name: &str, comm: MPI_Comm, site: u32, rc: c_int) -> c_int {
    if rc == SUCCESS || !redirected() {
        return rc;
    }
    handle_error(name, comm, site, rc)
}

/// How long a fatal MPI error waits for outstanding collective checks.
const SETTLE_BUDGET: std::time::Duration = std::time::Duration::from_secs(2);

#[cold]
fn handle_error(name: &str, comm: MPI_Comm, site: u32, rc: c_int) -> c_int {
    let call = CALL.load(Ordering::Relaxed);
    let returns = crate::state::with(|rt| rt.handlers().returns(comm));
    if !returns {
        // A collective mismatch can be the error's cause: let it speak.
        crate::state::with(|rt| rt.sig_settle(SETTLE_BUDGET));
    }
    let refused = take_refused();
    match refused.or_else(|| blamed_argument(rc)) {
        Some(argument) => report(
            Check::InvalidArgument {
                code: rc,
                argument,
                comm: comm.bits(),
            },
            site,
            call,
        ),
        None => report(
            Check::MpiError {
                code: rc,
                comm: comm.bits(),
            },
            site,
            call,
        ),
    }
    if returns {
        return rc;
    }
    let words = match refused.and_then(BadArgument::null_array) {
        Some(array) => format!("`{array}` is NULL; mbhybrid refused the call before MPI read it"),
        None => error_string(rc),
    };
    let _ = writeln!(
        std::io::stderr(),
        "Fatal error in {name}: {words} (error code {rc}; MPI_ERRORS_ARE_FATAL)"
    );
    // The rank ends as an abort with the error code (after the `MpiError`
    // record, which says why).
    if let Some(writer) = crate::record::TRACE.writer() {
        writer.record_abort(rc, site);
    }
    // SAFETY: MPI is initialised; aborting the world is always allowed
    // (MPI's fatal handler aborts the whole job too).
    unsafe { mpi_sys::PMPI_Abort(comm_world(), rc) };
    // SAFETY: ends the process as the abort would.
    unsafe { libc::_exit(rc) }
}

/// MPI's words for error code `rc`.
fn error_string(rc: c_int) -> String {
    let mut text = [0 as c_char; mpi_sys::MPI_MAX_ERROR_STRING as usize + 1];
    let mut len: c_int = 0;
    // SAFETY: a buffer of MPI_MAX_ERROR_STRING + 1 chars.
    unsafe { mpi_sys::PMPI_Error_string(rc, text.as_mut_ptr(), &mut len) };
    let len = usize::try_from(len).unwrap_or(0).min(text.len() - 1);
    let bytes: Vec<u8> = text[..len].iter().map(|&c| c as u8).collect();
    String::from_utf8_lossy(&bytes).into_owned()
}

/// The argument an error code blames, when its MPI error class is one of
/// the argument classes: the call rejected what the program passed, which
/// `invalid-argument` reports with words for the argument (MPI validates;
/// the runtime only classifies, so nothing is checked twice).
fn blamed_argument(rc: c_int) -> Option<BadArgument> {
    let mut class: c_int = 0;
    // SAFETY: an out-parameter; any code is a valid input.
    if unsafe { mpi_sys::PMPI_Error_class(rc, &mut class) } != SUCCESS {
        return None;
    }
    let class = u32::try_from(class).ok()?;
    Some(match class {
        mpi_sys::MPI_ERR_BUFFER => BadArgument::Buffer,
        mpi_sys::MPI_ERR_COUNT => BadArgument::Count,
        mpi_sys::MPI_ERR_TYPE => BadArgument::Datatype,
        mpi_sys::MPI_ERR_TAG => BadArgument::Tag,
        mpi_sys::MPI_ERR_COMM => BadArgument::Communicator,
        mpi_sys::MPI_ERR_RANK => BadArgument::Rank,
        mpi_sys::MPI_ERR_ROOT => BadArgument::Root,
        mpi_sys::MPI_ERR_GROUP => BadArgument::Group,
        mpi_sys::MPI_ERR_OP => BadArgument::Op,
        mpi_sys::MPI_ERR_REQUEST => BadArgument::Request,
        mpi_sys::MPI_ERR_ARG => BadArgument::Other,
        _ => return None,
    })
}

/// The handler the program chose, per communicator: only those that are
/// not `MPI_ERRORS_ARE_FATAL` are listed (the default).
#[derive(Debug)]
pub struct Handlers {
    returns: Vec<u64>,
}

impl Handlers {
    /// None listed: every communicator fatal.
    pub fn new() -> Self {
        Handlers {
            returns: Vec::with_capacity(HANDLER_SLOTS),
        }
    }

    /// Whether errors on `comm` return to the program.
    pub fn returns(&self, comm: MPI_Comm) -> bool {
        self.returns.contains(&comm.bits())
    }

    /// The program chose for `comm` a handler that returns (`true`) or
    /// `MPI_ERRORS_ARE_FATAL` (`false`). Past [`HANDLER_SLOTS`] returning
    /// communicators, more are treated as fatal.
    pub fn set(&mut self, comm: MPI_Comm, returns: bool) {
        let bits = comm.bits();
        let at = self.returns.iter().position(|&b| b == bits);
        match (at, returns) {
            (None, true) if self.returns.len() < self.returns.capacity() => self.returns.push(bits),
            (Some(at), false) => {
                self.returns.swap_remove(at);
            }
            _ => {}
        }
    }

    /// `child` was made from `parent`: it inherits the parent's handler.
    pub fn inherit(&mut self, parent: MPI_Comm, child: MPI_Comm) {
        let returns = self.returns(parent);
        self.set(child, returns);
    }
}

impl Default for Handlers {
    fn default() -> Self {
        Self::new()
    }
}

/// What a followed handle is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ResourceKind {
    /// A communicator.
    Comm = 0,
    /// A committed datatype.
    Datatype = 1,
    /// A group.
    Group = 2,
    /// A reduction operation.
    Op = 3,
}

/// A live handle the program made.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Resource {
    /// What it is.
    pub kind: ResourceKind,
    /// Its bits.
    pub bits: u64,
    /// Site of the call that made (for a datatype: committed) it.
    pub site: u32,
}

/// The live handles: a table of [`RESOURCE_SLOTS`] entries, allocated once
/// (handles past it are not followed, so never reported).
#[derive(Debug)]
pub struct Resources {
    live: Vec<Resource>,
}

impl Resources {
    /// An empty table.
    pub fn new() -> Self {
        Resources {
            live: Vec::with_capacity(RESOURCE_SLOTS),
        }
    }

    /// Follows a handle; false when the table is full (or it is followed
    /// already: committing a type twice).
    pub fn add(&mut self, kind: ResourceKind, bits: u64, site: u32) -> bool {
        if self.live.len() >= RESOURCE_SLOTS
            || self.live.iter().any(|r| r.kind == kind && r.bits == bits)
        {
            return false;
        }
        self.live.push(Resource { kind, bits, site });
        true
    }

    /// Stops following a handle (it was freed).
    pub fn remove(&mut self, kind: ResourceKind, bits: u64) -> Option<Resource> {
        let at = self
            .live
            .iter()
            .position(|r| r.kind == kind && r.bits == bits)?;
        Some(self.live.swap_remove(at))
    }

    /// The live handles, oldest first when none was freed.
    pub fn live(&self) -> &[Resource] {
        &self.live
    }
}

impl Default for Resources {
    fn default() -> Self {
        Self::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resources_follow_live_handles_up_to_the_limit() {
        let mut t = Resources::new();
        assert!(t.add(ResourceKind::Datatype, 7, 3));
        assert!(!t.add(ResourceKind::Datatype, 7, 4), "committed twice");
        assert!(t.add(ResourceKind::Comm, 7, 5), "same bits, other kind");
        assert_eq!(t.remove(ResourceKind::Group, 7), None);
        assert_eq!(
            t.remove(ResourceKind::Datatype, 7),
            Some(Resource {
                kind: ResourceKind::Datatype,
                bits: 7,
                site: 3
            })
        );
        assert_eq!(t.live().len(), 1);
        for i in 0..RESOURCE_SLOTS as u64 {
            t.add(ResourceKind::Op, 100 + i, 0);
        }
        assert_eq!(t.live().len(), RESOURCE_SLOTS);
        let cap = t.live.capacity();
        assert!(!t.add(ResourceKind::Op, 1, 0));
        assert_eq!(t.live.capacity(), cap, "the table never grows");
    }

    #[test]
    fn handlers_default_to_fatal_and_inherit() {
        let mut h = Handlers::new();
        let comm = |n| MPI_Comm(crate::handle::TestRepr::test_repr(n));
        let (a, b, c) = (comm(1), comm(2), comm(3));
        assert!(!h.returns(a));
        h.set(a, true);
        h.set(a, true);
        assert!(h.returns(a));
        h.inherit(a, b);
        h.inherit(c, comm(4));
        assert!(h.returns(b) && !h.returns(comm(4)));
        h.set(a, false);
        assert!(!h.returns(a) && h.returns(b));
    }
}
