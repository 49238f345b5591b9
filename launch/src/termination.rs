//! What a termination signal to mbhybrid does to the jobs it runs.
//!
//! Every job runs in a process group of its own (so a timeout can stop all
//! of it), which also shields it from the terminal's Ctrl-C: without this
//! module an interrupted mbhybrid would leave the launcher and its ranks
//! spinning. On SIGINT, SIGTERM, SIGHUP or SIGXCPU (a batch system's time
//! limit: Slurm sends SIGTERM, PBS and LSF SIGXCPU) the handler kills every
//! running job's group. Then:
//!
//! - by default it restores the signal's default action and raises it
//!   again, so mbhybrid ends as the signal asks (`mbhybrid run`);
//! - after [`report_on_stop`], the first signal only records itself
//!   ([`stop_requested`]): the command finishes the run it is in (now
//!   killed), starts no other, and prints the report of what ran
//!   (`verify`, `audit-barriers`). A second signal ends mbhybrid
//!   at once, as by default.

use std::sync::atomic::{AtomicBool, AtomicI32, Ordering::SeqCst};
use std::sync::Once;

/// The process groups of the jobs running now (0: a free slot). One slot
/// per job `verify --jobs` may run at once (its limit, 256) and one spare.
static RUNNING_GROUPS: [AtomicI32; 257] = [const { AtomicI32::new(0) }; 257];

/// Whether the first signal stops the search instead of mbhybrid.
static REPORT_ON_STOP: AtomicBool = AtomicBool::new(false);

/// The signal that asked mbhybrid to stop (0: none yet).
static STOP_SIGNAL: AtomicI32 = AtomicI32::new(0);

const SIGNALS: [libc::c_int; 4] = [libc::SIGINT, libc::SIGTERM, libc::SIGHUP, libc::SIGXCPU];

/// Installs the handler (once per process).
fn install() {
    static INSTALL: Once = Once::new();
    INSTALL.call_once(|| {
        for signal in SIGNALS {
            // SAFETY: installs an async-signal-safe handler (it only uses
            // atomics, kill(2), signal(2) and raise(3)).
            unsafe { libc::signal(signal, on_termination as *const () as libc::sighandler_t) };
        }
    });
}

/// From now on the first termination signal kills the running jobs and is
/// recorded for [`stop_requested`] instead of ending mbhybrid.
pub fn report_on_stop() {
    REPORT_ON_STOP.store(true, SeqCst);
    install();
}

/// The signal that asked mbhybrid to stop, once one did, by name
/// (`SIGTERM`).
pub fn stop_requested() -> Option<&'static str> {
    match STOP_SIGNAL.load(SeqCst) {
        0 => None,
        libc::SIGINT => Some("SIGINT"),
        libc::SIGTERM => Some("SIGTERM"),
        libc::SIGHUP => Some("SIGHUP"),
        libc::SIGXCPU => Some("SIGXCPU"),
        _ => Some("a signal"),
    }
}

/// While alive, a termination signal to mbhybrid also kills the job's
/// process group.
pub(crate) struct ForwardTermination {
    /// Its slot in [`RUNNING_GROUPS`], if one was free.
    slot: Option<usize>,
}

impl ForwardTermination {
    pub(crate) fn to(group: libc::pid_t) -> Self {
        install();
        let slot = RUNNING_GROUPS
            .iter()
            .position(|slot| slot.compare_exchange(0, group, SeqCst, SeqCst).is_ok());
        if stop_requested().is_some() {
            // The signal came while this job was starting: it was in no
            // slot yet, so the handler could not kill it.
            // SAFETY: kill(2) on a process group this process created.
            unsafe { libc::kill(-group, libc::SIGKILL) };
        }
        ForwardTermination { slot }
    }
}

impl Drop for ForwardTermination {
    fn drop(&mut self) {
        if let Some(slot) = self.slot {
            RUNNING_GROUPS[slot].store(0, SeqCst);
        }
    }
}

extern "C" fn on_termination(signal: libc::c_int) {
    // SAFETY: atomic loads and stores, kill, signal and raise are
    // async-signal-safe.
    unsafe {
        for slot in &RUNNING_GROUPS {
            let group = slot.load(SeqCst);
            if group > 0 {
                libc::kill(-group, libc::SIGKILL);
            }
        }
        let first = STOP_SIGNAL
            .compare_exchange(0, signal, SeqCst, SeqCst)
            .is_ok();
        if first && REPORT_ON_STOP.load(SeqCst) {
            return;
        }
        libc::signal(signal, libc::SIG_DFL);
        libc::raise(signal);
    }
}
