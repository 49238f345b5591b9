//! The recorder: the runtime's global state and the hot-path operations the
//! wrappers use.
//!
//! # Threads
//!
//! One thread at a time is inside a wrapped call, the owner of the
//! runtime (`state.rs`): only it appends, and appends are not synchronised
//! beyond that. A second thread that finds another inside writes nothing
//! here (`thread_level::overlap`).
//! The only other writer is the signal handler of the calling thread, which
//! touches header words only (state, signal, frames).
//!
//! # Panics
//!
//! Every entry goes through [`guard`]: a panic in recording (a bug) turns
//! recording off for the rest of the process and never reaches the program.

use crate::consts::{any_source, any_tag, proc_null, SUCCESS};
use crate::handle::HandleBits;
use crate::requests::RequestTable;
use crate::trace_file::TraceFile;
use mbh_trace::op::flags;
use mbh_trace::rank_trace::RawOp;
use mbh_trace::OpKind;
use mpi_sys::{MPI_Comm, MPI_Datatype};
use std::os::raw::c_int;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::Ordering;

/// Entries of the outstanding-request table (three quarters usable).
pub const REQUEST_SLOTS: usize = 16384;

/// This rank's trace file (unmapped when tracing is off).
pub static TRACE: TraceFile = TraceFile::new();

/// Outstanding nonblocking requests: handle bits -> slot id.
pub static REQUESTS: RequestTable<REQUEST_SLOTS> = RequestTable::new();

/// Whether wrappers record (false outside `mbhybrid verify`; true
/// between a successful start of tracing and a recording panic:
/// [`crate::lifecycle`]).
#[inline(always)]
pub fn recording() -> bool {
    crate::lifecycle::tracing()
}

/// Turns recording on (after the trace file exists).
pub fn enable() {
    crate::lifecycle::start_tracing();
}

/// The call site id the instrumented program stored before this call (or
/// `callsite::label` made from its return address), consumed: a call
/// nobody labelled (from a shared library) then reads 0, "unknown",
/// instead of the id of the previous call. Read it once per wrapper.
#[inline(always)]
pub fn site() -> u32 {
    crate::mbhybrid_site.swap(0, Ordering::Relaxed)
}

/// Stores `site` again for the next wrapper to consume: a call the runtime
/// makes of itself on the program's behalf (each request `MPI_Startall`
/// starts) is recorded at the program's call.
pub fn rearm_site(site: u32) {
    crate::mbhybrid_site.store(site, Ordering::Relaxed);
}

/// The call site id, not consumed (for messages about the current call).
pub fn peek_site() -> u32 {
    crate::mbhybrid_site.load(Ordering::Relaxed)
}

/// Runs `f`; a panic turns recording off and yields `None`.
#[inline(always)]
pub fn guard<R>(f: impl FnOnce() -> Option<R>) -> Option<R> {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(result) => result,
        Err(_) => {
            crate::lifecycle::stop_tracing();
            None
        }
    }
}

/// `ANY_SOURCE`/`ANY_TAG`/`PROC_NULL` flags for a call's peer and tag.
#[inline]
pub fn peer_flags(peer: c_int, tag: c_int, receive: bool) -> u16 {
    let mut f = 0;
    if peer == proc_null() {
        f |= flags::PROC_NULL;
    }
    if receive && peer == any_source() {
        f |= flags::ANY_SOURCE;
    }
    if receive && tag == any_tag() {
        f |= flags::ANY_TAG;
    }
    f
}

/// A point-to-point record (the datatype's bits go in `aux`).
#[inline]
pub fn p2p(
    kind: OpKind,
    peer: c_int,
    tag: c_int,
    comm: MPI_Comm,
    count: c_int,
    datatype: MPI_Datatype,
) -> RawOp {
    // Probes take wildcards as receives do (a probe from `MPI_ANY_SOURCE`
    // is a wildcard event, and the analyses read its pattern from these
    // flags).
    let receive = matches!(
        kind.class(),
        mbh_trace::op::OpClass::Receive | mbh_trace::op::OpClass::Probe
    );
    RawOp {
        kind: kind as u16,
        flags: peer_flags(peer, tag, receive),
        site: site(),
        peer,
        tag,
        comm: comm.bits(),
        count,
        aux: datatype.bits(),
        ..RawOp::default()
    }
}

/// Appends `op` before its call; a blocking call is also marked as the one
/// in progress. `None` when not recorded.
#[inline]
pub fn begin(op: impl FnOnce() -> RawOp, blocking: bool) -> Option<u64> {
    if !recording() {
        return None;
    }
    guard(|| {
        let index = TRACE.append(op())?;
        crate::checks::note_call(index);
        crate::fault::at_call();
        if blocking {
            TRACE.writer()?.set_blocking(Some(index));
        }
        Some(index)
    })
}

/// Completes record `index` after its call returned `rc`: sets `RETURNED`
/// (and `FAILED` with the code), lets `fill` add what the call returned,
/// and clears the blocking mark.
#[inline]
pub fn finish(index: Option<u64>, rc: c_int, blocking: bool, fill: impl FnOnce(&mut RawOp)) {
    let Some(index) = index else {
        return;
    };
    guard(|| {
        let mut writer = TRACE.writer()?;
        writer.update(index, |op| {
            op.flags |= flags::RETURNED;
            if rc != SUCCESS {
                op.flags |= flags::FAILED;
                op.error = rc;
            }
            fill(op);
        });
        if blocking {
            writer.set_blocking(None);
        }
        Some(())
    });
}

/// Appends a record of a call that already returned (or of the tool's
/// causality tracking). `None` when not recorded.
#[inline]
pub fn append(op: impl FnOnce() -> RawOp) -> Option<u64> {
    if !recording() {
        return None;
    }
    guard(|| TRACE.append(op()))
}

/// Notes a poll that found nothing, as the blocking call `wait` it stands
/// for, polled as `polled` (see `TraceWriter::note_poll`): the wait-for
/// graph can then tell a rank stuck in a polling loop from one computing.
#[inline]
pub fn poll(polled: OpKind, wait: impl FnOnce() -> RawOp) {
    if !recording() {
        return;
    }
    guard(|| {
        let writer = TRACE.writer()?;
        writer.note_poll(RawOp {
            matched_tag: polled as i32,
            ..wait()
        });
        Some(())
    });
}

/// Changes an earlier record (a completion fills in its request's status).
#[inline]
pub fn update(index: u64, change: impl FnOnce(&mut RawOp)) {
    if !recording() {
        return;
    }
    guard(|| {
        TRACE.writer()?.update(index, change);
        Some(())
    });
}

/// Stores a receive's status in a record.
#[inline]
pub fn set_status(op: &mut RawOp, source: c_int, tag: c_int) {
    op.flags |= flags::HAS_STATUS;
    op.matched_source = source;
    op.matched_tag = tag;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flags_follow_mpi_constants() {
        assert_eq!(peer_flags(0, 0, true), 0);
        assert_eq!(
            peer_flags(any_source(), any_tag(), true),
            flags::ANY_SOURCE | flags::ANY_TAG
        );
        // Sends cannot use wildcards: a send to "ANY_SOURCE" is an error
        // MPI reports, not a wildcard.
        assert_eq!(peer_flags(any_source(), any_tag(), false), 0);
        assert_eq!(peer_flags(proc_null(), 3, false), flags::PROC_NULL);
    }

    #[test]
    fn probes_keep_their_wildcards_in_the_record() {
        let world = crate::consts::comm_world();
        let datatype = crate::consts::byte();
        for kind in [OpKind::Probe, OpKind::Iprobe, OpKind::Mprobe, OpKind::Recv] {
            let op = p2p(kind, any_source(), any_tag(), world, 0, datatype);
            assert_eq!(
                op.flags & (flags::ANY_SOURCE | flags::ANY_TAG),
                flags::ANY_SOURCE | flags::ANY_TAG,
                "{kind:?}"
            );
        }
        let send = p2p(OpKind::Send, any_source(), any_tag(), world, 0, datatype);
        assert_eq!(send.flags, 0);
    }

    #[test]
    fn guard_swallows_panics_and_stops_recording() {
        enable();
        assert_eq!(guard(|| Some(3)), Some(3));
        let quiet = std::panic::take_hook();
        std::panic::set_hook(Box::new(|_| {}));
        let r: Option<()> = guard(|| panic!("bug in recording"));
        std::panic::set_hook(quiet);
        assert_eq!(r, None);
        assert!(!recording());
    }
}
