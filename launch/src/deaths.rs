//! Which rank of a running job died first.
//!
//! When a rank is killed from outside (SIGKILL, the OOM killer, a
//! scheduler), no handler of the runtime sees it, and the launcher then
//! kills every other rank, usually with the same signal: the traces all
//! end "running", and Hydra's "BAD TERMINATION" banner names whichever
//! process it reaped first, not the one that died first (a rank
//! killed at its fourth call was reported as rank 0).
//!
//! So each rank's runtime connects, in `MPI_Init`, to a socket this watch
//! listens on ([`ENV_DEATH_SOCKET`], runtime/src/watchdog.rs) and never
//! writes to it. The kernel closes a process's sockets as it closes its
//! files, in the same step that closes the pipes through which the
//! launcher learns of the death. The launcher therefore kills the others
//! only after the first rank's connection has closed, and the order in
//! which connections close follows the order of the deaths: a rank killed
//! by the launcher cannot close its connection before the rank whose death
//! made the launcher act. (Watching the processes' exits instead, through
//! pidfds, is racy: a killed process is marked exited only after its files
//! are closed, and on a loaded machine the launcher's victims were seen to
//! exit before it.)
//!
//! The first close is claimed only when it came alone, every rank was
//! connected, and no connection was closed by a process that lived on (a
//! program that closes every descriptor): otherwise the order is unknown.

use mbh_trace::layout::InterleavingDir;
use mbh_trace::RankTrace;
use std::collections::HashMap;
use std::os::fd::AsRawFd;
use std::os::linux::net::SocketAddrExt;
use std::os::unix::net::{SocketAddr, UnixListener, UnixStream};
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

pub use mbh_trace::layout::ENV_DEATH_SOCKET;

/// How long one wait for a close lasts before the watch looks at its stop
/// flag again (when it could not make the connection that wakes it).
const WAIT: Duration = Duration::from_millis(20);

/// Watches of this process so far: each gets its own socket name.
static WATCHES: AtomicU32 = AtomicU32::new(0);

/// The watch over one job's ranks.
pub struct DeathWatch {
    /// The abstract socket's name, for [`ENV_DEATH_SOCKET`]; `None` when it
    /// could not be made (the order of deaths is then unknown).
    socket_name: Option<String>,
    stop: Arc<AtomicBool>,
    /// Ranks in the order their connections closed; `None` first when
    /// that order cannot be trusted.
    exits: Arc<Mutex<Vec<Option<i32>>>>,
    thread: Option<JoinHandle<()>>,
    /// Closed by [`DeathWatch::finish`] to end the watch's wait at once:
    /// the search's next run waits for the watch to end.
    wake: Option<UnixStream>,
}

impl DeathWatch {
    /// Starts watching the ranks of the job writing traces into `dir`.
    pub fn start(dir: &InterleavingDir, np: u32) -> DeathWatch {
        let stop = Arc::new(AtomicBool::new(false));
        let exits = Arc::new(Mutex::new(Vec::new()));
        let name = format!(
            "mbhybrid-deaths-{}-{}",
            std::process::id(),
            WATCHES.fetch_add(1, Ordering::Relaxed)
        );
        let listener = SocketAddr::from_abstract_name(name.as_bytes())
            .and_then(|address| UnixListener::bind_addr(&address))
            .and_then(|listener| listener.set_nonblocking(true).map(|()| listener));
        let (wake, woken) = match UnixStream::pair() {
            Ok((wake, woken)) => (Some(wake), Some(woken)),
            Err(_) => (None, None),
        };
        let thread = listener.ok().and_then(|listener| {
            let (stop, exits, dir) = (stop.clone(), exits.clone(), dir.clone());
            std::thread::Builder::new()
                .name("mbhybrid-deaths".into())
                .spawn(move || watch(listener, woken, &dir, np, &stop, &exits))
                .ok()
        });
        DeathWatch {
            socket_name: thread.is_some().then_some(name),
            stop,
            exits,
            thread,
            wake,
        }
    }

    /// The environment variable that tells the ranks where to connect.
    pub fn env(&self) -> Option<(String, String)> {
        let name = self.socket_name.clone()?;
        Some((ENV_DEATH_SOCKET.to_string(), name))
    }

    /// Stops watching; the ranks whose connections closed, in order. Empty
    /// when the order cannot be trusted (see the module docs).
    pub fn finish(mut self) -> Vec<i32> {
        self.stop_watching();
        let exits = self.exits.lock().map(|e| e.clone()).unwrap_or_default();
        exits
            .into_iter()
            .collect::<Option<Vec<i32>>>()
            .unwrap_or_default()
    }

    fn stop_watching(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        // Its end of the pair reads end-of-file: the wait returns.
        drop(self.wake.take());
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

impl Drop for DeathWatch {
    /// A watch dropped unfinished stops too (the connection that wakes it
    /// stays readable once closed: it must not be left polling).
    fn drop(&mut self) {
        self.stop_watching();
    }
}

/// A rank's connection, with the process id the kernel gave for its peer.
struct Connection {
    stream: UnixStream,
    pid: libc::pid_t,
}

/// Notes the closes until told to stop, and those seen in one last look
/// after.
fn watch(
    listener: UnixListener,
    woken: Option<UnixStream>,
    dir: &InterleavingDir,
    np: u32,
    stop: &AtomicBool,
    exits: &Mutex<Vec<Option<i32>>>,
) {
    let mut open: Vec<Connection> = Vec::new();
    let mut connected_pids: Vec<libc::pid_t> = Vec::new();
    let mut ranks = RankOfPid::default();
    loop {
        let stopping = stop.load(Ordering::Relaxed);
        accept_all(&listener, &mut open, &mut connected_pids);
        let closed = wait_for_closes(&listener, woken.as_ref(), &open);
        if !closed.is_empty() {
            let known = Known {
                dir,
                np,
                connected_pids: &connected_pids,
                ranks: &mut ranks,
            };
            note_closes(&closed, known, exits);
            open.retain(|c| !closed.contains(&c.pid));
        }
        if stopping {
            return;
        }
    }
}

/// What the watch knows of the job when connections close.
struct Known<'a> {
    dir: &'a InterleavingDir,
    np: u32,
    connected_pids: &'a [libc::pid_t],
    ranks: &'a mut RankOfPid,
}

/// Adds the ranks whose connections closed together, after `None` when
/// they are the first and the order cannot be trusted.
fn note_closes(closed: &[libc::pid_t], known: Known<'_>, exits: &Mutex<Vec<Option<i32>>>) {
    let Known {
        dir,
        np,
        connected_pids,
        ranks,
    } = known;
    let first_batch = exits.lock().map(|e| e.is_empty()).unwrap_or(false);
    let mut ended = Vec::new();
    let mut lived_on = false;
    for &pid in closed {
        // A process past closing its files is exiting or gone; one that is
        // neither closed the connection itself.
        if !already_dying(pid) {
            lived_on = true;
        } else if let Some(rank) = ranks.lookup(dir, np, pid) {
            ended.push(rank);
        }
    }
    if first_batch {
        let every_rank_connected = (0..np as i32).all(|rank| {
            connected_pids
                .iter()
                .any(|&pid| ranks.lookup(dir, np, pid) == Some(rank))
        });
        if ended.len() != 1 || lived_on || !every_rank_connected {
            push(exits, None);
        }
    }
    for rank in ended {
        push(exits, Some(rank));
    }
}

fn push(exits: &Mutex<Vec<Option<i32>>>, rank: Option<i32>) {
    if let Ok(mut exits) = exits.lock() {
        exits.push(rank);
    }
}

/// Accepts every connection waiting on `listener`.
fn accept_all(
    listener: &UnixListener,
    open: &mut Vec<Connection>,
    connected_pids: &mut Vec<libc::pid_t>,
) {
    while let Ok((stream, _)) = listener.accept() {
        let Some(pid) = peer_pid(&stream) else {
            continue;
        };
        connected_pids.push(pid);
        open.push(Connection { stream, pid });
    }
}

/// The process id of the peer of a Unix socket (`SO_PEERCRED`).
fn peer_pid(stream: &UnixStream) -> Option<libc::pid_t> {
    let mut credentials = libc::ucred {
        pid: 0,
        uid: 0,
        gid: 0,
    };
    let mut length = std::mem::size_of::<libc::ucred>() as libc::socklen_t;
    // SAFETY: `credentials` is a ucred and `length` its size, as
    // SO_PEERCRED expects.
    let rc = unsafe {
        libc::getsockopt(
            stream.as_raw_fd(),
            libc::SOL_SOCKET,
            libc::SO_PEERCRED,
            (&mut credentials as *mut libc::ucred).cast(),
            &mut length,
        )
    };
    (rc == 0 && credentials.pid > 0).then_some(credentials.pid)
}

/// Waits up to [`WAIT`] for a new connection, closed ones, or `woken`
/// readable; the peers' pids of the connections that closed (all at once
/// when several closed in one wait, which the order cannot split). The
/// runtime never writes, so a readable connection is a closed one.
fn wait_for_closes(
    listener: &UnixListener,
    woken: Option<&UnixStream>,
    open: &[Connection],
) -> Vec<libc::pid_t> {
    let readable = |fd: std::os::fd::RawFd| libc::pollfd {
        fd,
        events: libc::POLLIN,
        revents: 0,
    };
    // A negative descriptor is ignored by poll(2).
    let wake = woken.map_or(-1, |w| w.as_raw_fd());
    let mut fds: Vec<libc::pollfd> = [listener.as_raw_fd(), wake]
        .into_iter()
        .chain(open.iter().map(|c| c.stream.as_raw_fd()))
        .map(readable)
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
    fds[2..]
        .iter()
        .zip(open)
        .filter(|(fd, _)| fd.revents != 0)
        .map(|(_, c)| c.pid)
        .collect()
}

/// Ranks by process id, from the trace headers (each rank writes its pid
/// there in `MPI_Init`, after it connected).
#[derive(Default)]
struct RankOfPid {
    known: HashMap<libc::pid_t, i32>,
}

impl RankOfPid {
    fn lookup(&mut self, dir: &InterleavingDir, np: u32, pid: libc::pid_t) -> Option<i32> {
        if !self.known.contains_key(&pid) {
            for rank in 0..np as i32 {
                if let Some(header_pid) = pid_of(dir, rank) {
                    self.known.insert(header_pid, rank);
                }
            }
        }
        self.known.get(&pid).copied()
    }
}

/// The process id a rank's trace header gives, once the rank started.
fn pid_of(dir: &InterleavingDir, rank: i32) -> Option<libc::pid_t> {
    use std::io::Read;
    // The header alone: the records (a mapping of a megabyte or more) are
    // not needed.
    let mut header = vec![0u8; mbh_trace::rank_trace::HEADER_SIZE];
    let read = std::fs::File::open(dir.trace(rank))
        .and_then(|mut file| file.read(&mut header))
        .ok()?;
    let trace = RankTrace::parse(header.get(..read)?).ok()?;
    libc::pid_t::try_from(trace.pid).ok().filter(|&pid| pid > 0)
}

/// `PF_EXITING` in `/proc/PID/stat`'s flags: set as the kernel begins a
/// process's exit, before it closes the process's files.
const PF_EXITING: u64 = 0x4;

/// Whether process `pid` has begun to die: gone, a zombie or dead, or
/// exiting.
fn already_dying(pid: libc::pid_t) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|stat| stat_says_exiting(&stat))
        .unwrap_or(true)
}

/// From a `/proc/PID/stat` line: whether the state is zombie or dead, or
/// the flags say exiting. `None` when the line cannot be read.
fn stat_says_exiting(stat: &str) -> Option<bool> {
    // The command name (field 2) is in parentheses and may hold spaces or
    // parentheses itself: the fields after it start at the last ')'.
    let after_name = &stat[stat.rfind(')')? + 1..];
    let fields: Vec<&str> = after_name.split_whitespace().collect();
    let state = *fields.first()?;
    let flags: u64 = fields.get(6)?.parse().ok()?;
    Some(matches!(state, "Z" | "X" | "x") || flags & PF_EXITING != 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A forked child that connects like a rank's runtime and then waits
    /// for a signal, so the watch sees it connected and, once killed, its
    /// connection closed.
    struct ConnectedChild {
        pid: libc::pid_t,
    }

    impl ConnectedChild {
        fn id(&self) -> u32 {
            self.pid as u32
        }

        fn kill(&mut self) -> std::io::Result<()> {
            // SAFETY: signals the child this test forked.
            match unsafe { libc::kill(self.pid, libc::SIGKILL) } {
                0 => Ok(()),
                _ => Err(std::io::Error::last_os_error()),
            }
        }

        fn wait(&mut self) -> std::io::Result<()> {
            let mut status = 0;
            // SAFETY: reaps the child this test forked.
            match unsafe { libc::waitpid(self.pid, &mut status, 0) } {
                -1 => Err(std::io::Error::last_os_error()),
                _ => Ok(()),
            }
        }
    }

    fn connected_child(name: &str) -> ConnectedChild {
        // The address is made before the fork: the child only makes
        // system calls (the test harness is multithreaded).
        // SAFETY: sockaddr_un is plain data; all zeroes is valid.
        let mut address: libc::sockaddr_un = unsafe { std::mem::zeroed() };
        address.sun_family = libc::AF_UNIX as libc::sa_family_t;
        for (slot, byte) in address.sun_path[1..].iter_mut().zip(name.as_bytes()) {
            *slot = *byte as libc::c_char;
        }
        let length = (std::mem::size_of::<libc::sa_family_t>() + 1 + name.len()) as libc::socklen_t;
        // SAFETY: fork; the child calls only async-signal-safe functions
        // and never returns.
        let pid = unsafe { libc::fork() };
        assert!(pid >= 0, "fork failed");
        if pid == 0 {
            // SAFETY: socket, connect and pause on a valid address.
            unsafe {
                let fd = libc::socket(libc::AF_UNIX, libc::SOCK_STREAM, 0);
                libc::connect(fd, (&address as *const libc::sockaddr_un).cast(), length);
                loop {
                    libc::pause();
                }
            }
        }
        ConnectedChild { pid }
    }

    #[test]
    fn a_killed_peer_closes_its_connection_and_a_live_one_does_not() {
        let name = format!("mbhybrid-deaths-test-{}", std::process::id());
        let address = SocketAddr::from_abstract_name(name.as_bytes()).unwrap();
        let listener = UnixListener::bind_addr(&address).unwrap();
        listener.set_nonblocking(true).unwrap();
        let mut first = connected_child(&name);
        let mut second = connected_child(&name);
        let (mut open, mut pids) = (Vec::new(), Vec::new());
        while open.len() < 2 {
            wait_for_closes(&listener, None, &open);
            accept_all(&listener, &mut open, &mut pids);
        }
        pids.sort();
        let mut expected = vec![first.id() as libc::pid_t, second.id() as libc::pid_t];
        expected.sort();
        assert_eq!(pids, expected, "the peers' pids come from SO_PEERCRED");
        assert!(wait_for_closes(&listener, None, &open).is_empty());
        first.kill().unwrap();
        let mut closed = Vec::new();
        while closed.is_empty() {
            closed = wait_for_closes(&listener, None, &open);
        }
        assert_eq!(closed, vec![first.id() as libc::pid_t]);
        assert!(
            already_dying(first.id() as libc::pid_t),
            "a zombie is dying"
        );
        assert!(!already_dying(second.id() as libc::pid_t));
        first.wait().unwrap();
        assert!(
            already_dying(first.id() as libc::pid_t),
            "a reaped one is gone"
        );
        second.kill().unwrap();
        second.wait().unwrap();
    }

    #[test]
    fn stat_lines_are_read_past_a_command_name_with_parentheses() {
        let running = "12 (a (b) c) S 1 12 12 0 -1 4194560 100 0 0 0";
        assert_eq!(stat_says_exiting(running), Some(false));
        let exiting = "12 (prog) R 1 12 12 0 -1 4195596 100 0 0 0";
        assert_eq!(stat_says_exiting(exiting), Some(true));
        let zombie = "12 (prog) Z 1 12 12 0 -1 4194560 100 0 0 0";
        assert_eq!(stat_says_exiting(zombie), Some(true));
        assert_eq!(stat_says_exiting("12 (prog"), None);
    }
}
