//! Where the process is in its MPI life, in one word: the runtime's init
//! state machine. Each phase is a bit set once, at one place, and read
//! through the functions below; nothing else in the runtime keeps a
//! flag of its own about the process's MPI life.
//!
//! ```text
//!  process start
//!   │  a call before MPI_Init (noted once: before_init.rs) ── INIT_SEEN
//!   ▼
//!  MPI_Init returns ─────────────────────────────────────── INIT_SEEN
//!   │  the runtime decides whether to trace (start.rs) ──── STARTED
//!   │    tracing: the trace file exists (record.rs) ─────── TRACING
//!   │    errors come back to the runtime (checks.rs) ────── ERRORS_RETURN
//!   │    the protocol runs (state.rs) ───────────────────── PROTOCOL
//!   ▼
//!  MPI_Finalize: the protocol stops ───────────────────── −PROTOCOL
//!  MPI_Finalize returns ─────────────── +FINALIZED, −ERRORS_RETURN
//! ```
//!
//! `TRACING` also clears when recording panics (`record::guard`): the
//! program runs on untraced, as it would without the runtime.
//!
//! Reads are `Relaxed` (a wrapper reads a bit or two on every call, and
//! one thread at a time calls MPI: `state.rs`); changes are
//! read-modify-writes with `AcqRel`, so a bit set after the state it
//! guards was written publishes that state.

use std::sync::atomic::{AtomicU32, Ordering};

/// `MPI_Init` returned, or the first call before it was noted.
const INIT_SEEN: u32 = 1 << 0;
/// `MPI_Init` decided whether to trace.
const STARTED: u32 = 1 << 1;
/// Wrappers record (between a successful start of tracing and a
/// recording panic).
const TRACING: u32 = 1 << 2;
/// The protocol runs (piggyback, clocks): between `MPI_Init` and
/// `MPI_Finalize`, when every rank traces.
const PROTOCOL: u32 = 1 << 3;
/// `MPI_ERRORS_RETURN` is in place on world: errors come back to the
/// runtime, which applies the program's handler.
const ERRORS_RETURN: u32 = 1 << 4;
/// `MPI_Finalize` returned.
const FINALIZED: u32 = 1 << 5;

/// A set of phases, as bits of one word.
struct Phases(AtomicU32);

impl Phases {
    const fn new() -> Phases {
        Phases(AtomicU32::new(0))
    }

    #[inline(always)]
    fn is(&self, bit: u32) -> bool {
        self.0.load(Ordering::Relaxed) & bit != 0
    }

    /// Sets `bit`; whether it was set already.
    fn set(&self, bit: u32) -> bool {
        self.0.fetch_or(bit, Ordering::AcqRel) & bit != 0
    }

    fn clear(&self, bit: u32) {
        self.0.fetch_and(!bit, Ordering::AcqRel);
    }

    /// `MPI_Finalize` returned.
    fn finalize(&self) {
        self.clear(ERRORS_RETURN);
        self.set(FINALIZED);
    }
}

/// The process's phases.
static PHASES: Phases = Phases::new();

#[inline(always)]
fn is(bit: u32) -> bool {
    PHASES.is(bit)
}

fn set(bit: u32) -> bool {
    PHASES.set(bit)
}

fn clear(bit: u32) {
    PHASES.clear(bit);
}

/// Whether `MPI_Init` returned, or a call before it was already noted.
#[inline(always)]
pub fn init_seen() -> bool {
    is(INIT_SEEN)
}

/// Notes that `MPI_Init` returned, or that a call before it is being
/// noted; whether it was noted already.
pub fn see_init() -> bool {
    set(INIT_SEEN)
}

/// Whether `MPI_Init` decided whether to trace (before it, calls are
/// labelled for the record `MPI_Init` writes; see `callsite::label`).
#[inline(always)]
pub fn started() -> bool {
    is(STARTED)
}

/// `MPI_Init` decides whether to trace; whether it had already (a second
/// `MPI_Init`, which MPI rejects).
pub fn start() -> bool {
    set(STARTED)
}

/// Whether wrappers record (false outside `mbhybrid verify`).
#[inline(always)]
pub fn tracing() -> bool {
    is(TRACING)
}

/// Turns recording on (after the trace file exists).
pub fn start_tracing() {
    set(TRACING);
}

/// Turns recording off for good (a recording panicked).
pub fn stop_tracing() {
    clear(TRACING);
}

/// Whether wrappers piggyback (false: they only forward).
#[inline(always)]
pub fn protocol() -> bool {
    is(PROTOCOL)
}

/// The protocol starts (from `MPI_Init`, once the state is installed).
pub fn start_protocol() {
    set(PROTOCOL);
}

/// The protocol stops (in `MPI_Finalize`); the state stays.
pub fn stop_protocol() {
    clear(PROTOCOL);
}

/// Whether errors on world come back to the runtime.
#[inline(always)]
pub fn errors_return() -> bool {
    is(ERRORS_RETURN)
}

/// `MPI_ERRORS_RETURN` was set on world.
pub fn errors_returned() {
    set(ERRORS_RETURN);
}

/// Whether `MPI_Finalize` returned.
#[inline(always)]
pub fn finalized() -> bool {
    is(FINALIZED)
}

/// `MPI_Finalize` returned: later calls are reported, errors are MPI's.
pub fn finalize() {
    PHASES.finalize();
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each phase changes its own bit of the word (on a word of the
    /// test's own: the process's is left alone).
    #[test]
    fn each_phase_changes_its_own_bit() {
        let phases = Phases::new();
        assert!(!phases.set(INIT_SEEN));
        assert!(phases.set(INIT_SEEN), "noted once");
        assert!(!phases.set(STARTED));
        assert!(phases.set(STARTED), "a second start is seen");
        for bit in [TRACING, PROTOCOL, ERRORS_RETURN] {
            phases.set(bit);
        }
        phases.clear(PROTOCOL);
        assert!(!phases.is(PROTOCOL) && phases.is(TRACING));
        phases.finalize();
        assert!(phases.is(FINALIZED) && !phases.is(ERRORS_RETURN) && phases.is(TRACING));
        phases.clear(TRACING);
        assert!(!phases.is(TRACING) && phases.is(STARTED) && phases.is(INIT_SEEN));
    }
}
