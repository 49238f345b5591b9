//! Which rank of a running job died first.
//!
//! When a rank is killed from outside (SIGKILL, the OOM killer, a
//! scheduler), no handler of the runtime sees it, and the launcher then
//! kills every other rank, usually with the same signal: the traces all
//! end "running", and Hydra's "BAD TERMINATION" banner names whichever
//! process it reaped first, not the one that died first (issue 12: a rank
//! killed at its fourth call was reported as rank 0). So while the job
//! runs, a thread watches each rank's process through a `pidfd` (Linux
//! 5.3), which becomes readable the moment the process exits, and keeps the
//! order of the exits. The launcher needs at least a round trip through
//! its own event loop before it kills the others, so the first exit seen
//! is the rank that died first.

use mbh_trace::layout::InterleavingDir;
use mbh_trace::RankTrace;
use std::os::fd::{FromRawFd, OwnedFd, RawFd};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

/// How long one wait for an exit lasts before the watch looks for ranks
/// that started since.
const WAIT: Duration = Duration::from_millis(20);

/// A rank process being watched.
struct Watched {
    rank: i32,
    pidfd: OwnedFd,
}

/// The watch over one job's ranks.
pub struct DeathWatch {
    stop: Arc<AtomicBool>,
    /// Ranks in the order their processes exited; `None` for a rank found
    /// gone before it was watched.
    exits: Arc<Mutex<Vec<Option<i32>>>>,
    thread: Option<JoinHandle<()>>,
}

impl DeathWatch {
    /// Starts watching the ranks of the job writing traces into `dir`.
    pub fn start(dir: &InterleavingDir, np: u32) -> DeathWatch {
        let stop = Arc::new(AtomicBool::new(false));
        let exits = Arc::new(Mutex::new(Vec::new()));
        let thread = {
            let (stop, exits, dir) = (stop.clone(), exits.clone(), dir.clone());
            std::thread::Builder::new()
                .name("mbhybrid-deaths".into())
                .spawn(move || watch(&dir, np, &stop, &exits))
                .ok()
        };
        DeathWatch {
            stop,
            exits,
            thread,
        }
    }

    /// Stops watching; the ranks whose processes exited, in order. Empty
    /// when a rank was gone before the watch saw it: its death may have
    /// come first, so the order says nothing.
    pub fn finish(mut self) -> Vec<i32> {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
        let exits = self.exits.lock().map(|e| e.clone()).unwrap_or_default();
        exits
            .into_iter()
            .collect::<Option<Vec<i32>>>()
            .unwrap_or_default()
    }
}

fn watch(dir: &InterleavingDir, np: u32, stop: &AtomicBool, exits: &Mutex<Vec<Option<i32>>>) {
    let mut watched: Vec<Watched> = Vec::new();
    let mut known = vec![false; np as usize];
    while !stop.load(Ordering::Relaxed) {
        for rank in 0..np as i32 {
            if known[rank as usize] {
                continue;
            }
            let Some(pid) = pid_of(dir, rank) else {
                continue;
            };
            known[rank as usize] = true;
            match pidfd_open(pid) {
                Some(pidfd) => watched.push(Watched { rank, pidfd }),
                // Gone before it was watched: when it died is unknown, so
                // no order can be claimed (`None` in the list).
                None => push(exits, None),
            }
        }
        if watched.is_empty() {
            std::thread::sleep(WAIT);
            continue;
        }
        let exited = wait_for_exits(&watched);
        // Several exits seen in one wake-up have no order among them, and
        // a rank not watched yet may have died unseen before the first
        // exit seen: in both cases which came first is unknown.
        let first_batch = exits.lock().map(|e| e.is_empty()).unwrap_or(false);
        let all_watched = known.iter().all(|&k| k);
        if first_batch && !exited.is_empty() && (exited.len() > 1 || !all_watched) {
            push(exits, None);
        }
        for rank in exited {
            push(exits, Some(rank));
            watched.retain(|w| w.rank != rank);
        }
    }
}

fn push(exits: &Mutex<Vec<Option<i32>>>, rank: Option<i32>) {
    if let Ok(mut exits) = exits.lock() {
        exits.push(rank);
    }
}

/// The process id a rank's trace header gives, once the rank started.
fn pid_of(dir: &InterleavingDir, rank: i32) -> Option<libc::pid_t> {
    use std::io::Read;
    // The header alone: the records (a mapping of a megabyte or more) are
    // not needed, and this runs every few milliseconds until the rank starts.
    let mut header = vec![0u8; mbh_trace::rank_trace::HEADER_SIZE];
    let read = std::fs::File::open(dir.trace(rank))
        .and_then(|mut file| file.read(&mut header))
        .ok()?;
    let trace = RankTrace::parse(header.get(..read)?).ok()?;
    libc::pid_t::try_from(trace.pid).ok().filter(|&pid| pid > 0)
}

fn pidfd_open(pid: libc::pid_t) -> Option<OwnedFd> {
    // SAFETY: the pidfd_open system call with no flags; it returns a new
    // descriptor or -1.
    let fd = unsafe { libc::syscall(libc::SYS_pidfd_open, pid, 0) };
    let fd = RawFd::try_from(fd).ok().filter(|&fd| fd >= 0)?;
    // SAFETY: a descriptor the kernel just gave us, owned by nobody else.
    Some(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// Waits up to [`WAIT`] for watched processes to exit; the ranks that did,
/// in the order poll lists them (all at once when several exit in one wait,
/// which the ordering cannot split).
fn wait_for_exits(watched: &[Watched]) -> Vec<i32> {
    use std::os::fd::AsRawFd;
    let mut fds: Vec<libc::pollfd> = watched
        .iter()
        .map(|w| libc::pollfd {
            fd: w.pidfd.as_raw_fd(),
            events: libc::POLLIN,
            revents: 0,
        })
        .collect();
    // SAFETY: `fds` holds `fds.len()` valid pollfd entries.
    let ready = unsafe {
        libc::poll(
            fds.as_mut_ptr(),
            fds.len() as libc::nfds_t,
            WAIT.as_millis() as i32,
        )
    };
    if ready <= 0 {
        return Vec::new();
    }
    fds.iter()
        .zip(watched)
        .filter(|(fd, _)| fd.revents != 0)
        .map(|(_, w)| w.rank)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_process_that_exits_makes_its_pidfd_readable() {
        let mut child = std::process::Command::new("true").spawn().unwrap();
        let pid = child.id() as libc::pid_t;
        let pidfd = pidfd_open(pid).expect("pidfd_open works on this kernel");
        let watched = [Watched { rank: 3, pidfd }];
        let mut exited = Vec::new();
        for _ in 0..250 {
            exited = wait_for_exits(&watched);
            if !exited.is_empty() {
                break;
            }
        }
        assert_eq!(exited, vec![3]);
        child.wait().unwrap();
    }
}
