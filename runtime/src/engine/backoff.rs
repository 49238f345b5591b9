//! How a blocking call's polling loop spends its passes (the module docs
//! of [`crate::engine`] say why the runtime polls while it blocks).
//!
//! * **Busy, like MPI itself**, while this node has a core for each of its
//!   ranks: a pass ends with a spin hint, never a system call.
//!   `sched_yield` on every pass was 15-17% of a message-rate run
//!   (`BENCHMARKS.md`, "Where the message rate goes"), and on a machine
//!   with other work it gave the core away for a whole time slice while
//!   the peer waited.
//! * **Yielding** after [`Backoff::BUSY_PASSES`] passes when the node's
//!   ranks outnumber its cores (the test suite runs 5 ranks on 2): a
//!   rank that waits must let the rank it waits for run.
//!
//! While a call is young, the watched requests ([`super::Rt::service`]:
//! one `MPI_Request_get_status` each) are served every
//! [`Backoff::SERVICE_EVERY`]th pass: the acknowledgement a synchronous
//! sender waits for comes a few passes later, never not at all. After
//! that, every pass.

use std::sync::atomic::{AtomicBool, Ordering};

/// Whether long waits yield the core: set once at start-up.
static YIELDING: AtomicBool = AtomicBool::new(true);

/// Decides [`YIELDING`] from how many ranks share this node with this one
/// (the launcher says: MPICH's Hydra `MPI_LOCALNRANKS`, Open MPI's
/// `OMPI_COMM_WORLD_LOCAL_SIZE`; else all `world_size` are assumed here)
/// and the cores this process may run on.
pub(super) fn decide_yielding(world_size: i32) {
    let local = ["MPI_LOCALNRANKS", "OMPI_COMM_WORLD_LOCAL_SIZE"]
        .iter()
        .find_map(|name| std::env::var(name).ok()?.trim().parse::<usize>().ok())
        .unwrap_or_else(|| usize::try_from(world_size).unwrap_or(1));
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    YIELDING.store(local > cores, Ordering::Relaxed);
}

/// The passes of one blocking call.
pub(super) struct Backoff {
    passes: u32,
}

impl Backoff {
    /// Passes before a wait counts as long.
    const BUSY_PASSES: u32 = 64;
    /// While a wait is young, every how many passes the watched requests
    /// are served.
    const SERVICE_EVERY: u32 = 4;

    pub(super) fn new() -> Self {
        Backoff { passes: 0 }
    }

    /// Whether this pass serves the watched requests.
    #[inline(always)]
    pub(super) fn serves(&self) -> bool {
        self.passes >= Self::BUSY_PASSES
            || self.passes % Self::SERVICE_EVERY == Self::SERVICE_EVERY - 1
    }

    /// Whether the wait is long (its requests are listed).
    #[inline(always)]
    pub(super) fn is_long(&self) -> bool {
        self.passes >= Self::BUSY_PASSES
    }

    /// Ends a pass; true on the one pass that makes the wait long (the
    /// call then counts as waiting: `awaited.rs` lists its requests).
    #[inline(always)]
    pub(super) fn pause(&mut self) -> bool {
        if self.passes < Self::BUSY_PASSES {
            self.passes += 1;
            std::hint::spin_loop();
            self.passes == Self::BUSY_PASSES
        } else {
            if YIELDING.load(Ordering::Relaxed) {
                super::pause();
            } else {
                std::hint::spin_loop();
            }
            false
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Backoff;

    #[test]
    fn young_waits_serve_every_fourth_pass_and_long_ones_every_pass() {
        let mut backoff = Backoff::new();
        let served: Vec<bool> = (0..8)
            .map(|_| {
                let serves = backoff.serves();
                let _ = backoff.pause();
                serves
            })
            .collect();
        assert_eq!(
            served,
            [false, false, false, true, false, false, false, true]
        );
        for _ in 8..Backoff::BUSY_PASSES {
            let _ = backoff.pause();
        }
        assert!((0..5).all(|_| {
            let serves = backoff.serves();
            let _ = backoff.pause();
            serves
        }));
    }

    #[test]
    fn exactly_one_pass_makes_the_wait_long() {
        let mut backoff = Backoff::new();
        let turned: Vec<u32> = (1..=Backoff::BUSY_PASSES * 2)
            .filter(|_| backoff.pause())
            .collect();
        assert_eq!(turned, [Backoff::BUSY_PASSES]);
    }
}
