//! Fault injection for the crash tests: `MBHYBRID_FAULT_INJECT=
//! RANK:CALL:SIGNAL` makes rank RANK raise SIGNAL at its CALL-th recorded
//! MPI call after `MPI_Init` (counted from 1),
//! so a test can kill any rank at any call with any signal and check that
//! `verify` still ends with a report, no panic, and no process left.
//!
//! Read once at start; afterwards one relaxed load per recorded call. Not
//! set, malformed, or for another rank: nothing happens.

use std::os::raw::c_int;
use std::sync::atomic::{AtomicI32, AtomicU64, Ordering};

/// The variable [`arm`] reads.
pub const ENV_FAULT_INJECT: &str = "MBHYBRID_FAULT_INJECT";

/// The call at which to raise, 0: never.
static AT_CALL: AtomicU64 = AtomicU64::new(0);
/// Calls recorded so far (counted only when armed).
static CALLS: AtomicU64 = AtomicU64::new(0);
static SIGNAL: AtomicI32 = AtomicI32::new(0);

/// `(rank, call, signal)` of a `RANK:CALL:SIGNAL` value.
fn parse(value: &str) -> Option<(c_int, u64, c_int)> {
    let mut parts = value.split(':');
    let rank = parts.next()?.trim().parse().ok()?;
    let call = parts.next()?.trim().parse().ok().filter(|&c| c > 0)?;
    let signal = parts.next()?.trim().parse().ok().filter(|&s| s > 0)?;
    parts.next().is_none().then_some((rank, call, signal))
}

/// Arms the fault for `rank` from the environment.
pub fn arm(rank: c_int) {
    let Some((target, call, signal)) = std::env::var(ENV_FAULT_INJECT)
        .ok()
        .as_deref()
        .and_then(parse)
    else {
        return;
    };
    if target == rank {
        SIGNAL.store(signal, Ordering::Relaxed);
        AT_CALL.store(call, Ordering::Relaxed);
    }
}

/// Called at each recorded MPI call.
#[inline]
pub fn at_call() {
    let at = AT_CALL.load(Ordering::Relaxed);
    if at > 0 && CALLS.fetch_add(1, Ordering::Relaxed) + 1 == at {
        // SAFETY: raise has no preconditions; the signal is the test's.
        unsafe { libc::raise(SIGNAL.load(Ordering::Relaxed)) };
    }
}

#[cfg(test)]
mod tests {
    use super::parse;

    #[test]
    fn values_name_a_rank_a_call_and_a_signal() {
        assert_eq!(parse("1:7:9"), Some((1, 7, 9)));
        assert_eq!(parse("1:0:9"), None);
        assert_eq!(parse("1:7"), None);
        assert_eq!(parse("1:7:9:2"), None);
        assert_eq!(parse("x:7:9"), None);
    }
}
