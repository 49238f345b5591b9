//! Ends this rank when the `mbhybrid` process that launched its job is
//! gone: a `verify` killed with SIGKILL, as batch schedulers and CI
//! systems do at their time limit, would otherwise leave its job spinning
//! forever, since MPICH's ranks busy-poll and nobody is left to stop them.
//!
//! `verify` listens on an abstract Unix socket it names in
//! [`ENV_DEATH_SOCKET`]. The rank connects to it here and a thread of the
//! runtime, off every MPI call's path, blocks reading it: nothing is ever
//! written, so the read returns only when `verify` is gone and the kernel
//! closed its end. The rank then says so on its standard error and kills
//! itself. The same connection tells `verify` the order in which ranks die
//! (launch/src/deaths.rs): the kernel closes it when this process's files close.
//!
//! Without the socket (it could not be made or reached), the thread looks
//! at the process [`ENV_WATCH_PID`] names in `/proc` every [`PERIOD`]
//! instead. Either way it makes no MPI call and touches nothing of the
//! program's.

use mbh_trace::layout::{ENV_DEATH_SOCKET, ENV_WATCH_PID};
use std::os::raw::c_int;
use std::sync::atomic::{AtomicI32, Ordering};
use std::time::Duration;

/// How often the launching process is looked at.
const PERIOD: Duration = Duration::from_millis(500);

/// The connection to `verify`'s socket, or -1; closed in a child the
/// program forks, whose life is not the rank's.
static CONNECTION: AtomicI32 = AtomicI32::new(-1);

/// Starts the watch when the job was launched by `mbhybrid` (the variables
/// are set); otherwise does nothing.
pub fn start() {
    let Some(pid) = std::env::var(ENV_WATCH_PID)
        .ok()
        .and_then(|v| v.parse::<u32>().ok())
        .filter(|&pid| pid > 1)
    else {
        return;
    };
    let connection = std::env::var(ENV_DEATH_SOCKET)
        .ok()
        .and_then(|name| connect(name.as_bytes()));
    let spawned = std::thread::Builder::new()
        .name("mbhybrid-watch".into())
        .stack_size(64 * 1024)
        .spawn(move || match connection {
            Some(fd) => wait_for_close(fd, pid),
            None => watch(pid),
        });
    if spawned.is_err() {
        crate::start::warn(format_args!(
            "cannot start the thread that ends this rank when mbhybrid is gone; \
             a killed mbhybrid may leave this job running"
        ));
    }
}

/// Connects to the abstract socket `name`; the descriptor, closed on
/// `exec` and in a forked child.
fn connect(name: &[u8]) -> Option<c_int> {
    // SAFETY: a plain socket call.
    let fd = unsafe { libc::socket(libc::AF_UNIX, libc::SOCK_STREAM | libc::SOCK_CLOEXEC, 0) };
    if fd < 0 {
        return None;
    }
    // SAFETY: sockaddr_un is plain data; all zeroes is valid.
    let mut address: libc::sockaddr_un = unsafe { std::mem::zeroed() };
    address.sun_family = libc::AF_UNIX as libc::sa_family_t;
    // An abstract name: a leading NUL, then the name's bytes.
    let room = address.sun_path.len() - 1;
    if name.len() > room {
        // SAFETY: the descriptor made above.
        unsafe { libc::close(fd) };
        return None;
    }
    for (slot, byte) in address.sun_path[1..].iter_mut().zip(name) {
        *slot = *byte as libc::c_char;
    }
    let length = std::mem::size_of::<libc::sa_family_t>() + 1 + name.len();
    // SAFETY: `address` is a sockaddr_un of which `length` bytes are used.
    let rc = unsafe {
        libc::connect(
            fd,
            (&address as *const libc::sockaddr_un).cast(),
            length as libc::socklen_t,
        )
    };
    if rc != 0 {
        // SAFETY: the descriptor made above.
        unsafe { libc::close(fd) };
        return None;
    }
    CONNECTION.store(fd, Ordering::Relaxed);
    // SAFETY: registers a handler that only closes a descriptor, which is
    // async-signal-safe as a fork child handler must be.
    unsafe { libc::pthread_atfork(None, None, Some(close_in_child)) };
    Some(fd)
}

/// In a child the program forks: the connection stands for the rank's
/// life, so the child must not keep it open after the rank dies.
extern "C" fn close_in_child() {
    let fd = CONNECTION.swap(-1, Ordering::Relaxed);
    if fd >= 0 {
        // SAFETY: the connection's descriptor, inherited by this child.
        unsafe { libc::close(fd) };
    }
}

/// Blocks until `verify`'s end of the connection closes, then stops the
/// rank.
fn wait_for_close(fd: c_int, pid: u32) -> ! {
    let mut byte = 0u8;
    loop {
        // SAFETY: reads at most one byte into `byte`.
        let read = unsafe { libc::read(fd, (&mut byte as *mut u8).cast(), 1) };
        let interrupted =
            read < 0 && std::io::Error::last_os_error().kind() == std::io::ErrorKind::Interrupted;
        if read == 0 || (read < 0 && !interrupted) {
            stop_rank(pid);
        }
    }
}

fn watch(pid: u32) -> ! {
    let stat = format!("/proc/{pid}/stat");
    loop {
        std::thread::sleep(PERIOD);
        if !alive(&stat) {
            stop_rank(pid);
        }
    }
}

fn stop_rank(pid: u32) -> ! {
    crate::start::warn(format_args!(
        "the mbhybrid process {pid} that launched this job is gone: stopping this rank"
    ));
    loop {
        // SAFETY: signals this very process; SIGKILL cannot be caught,
        // so nothing of the program runs after it.
        unsafe { libc::kill(libc::getpid(), libc::SIGKILL) };
    }
}

/// Whether the process whose `/proc/PID/stat` is `stat` exists and is not
/// a zombie (`Z`) or dead (`X`): the state is the field after the command
/// name's closing parenthesis. Reads into a buffer on the stack: the
/// thread allocates nothing after it starts.
fn alive(stat: &str) -> bool {
    use std::io::Read;
    let mut buffer = [0u8; 512];
    let Ok(read) = std::fs::File::open(stat).and_then(|mut f| f.read(&mut buffer)) else {
        return false;
    };
    let text = String::from_utf8_lossy(&buffer[..read]);
    state_of(&text).is_some_and(|state| state != 'Z' && state != 'X')
}

fn state_of(stat: &str) -> Option<char> {
    let after_name = &stat[stat.rfind(')')? + 1..];
    after_name.trim_start().chars().next()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_state_follows_the_last_parenthesis() {
        assert_eq!(state_of("123 (mbhybrid) S 1 2 3"), Some('S'));
        assert_eq!(
            state_of("123 (a) b) Z 1"),
            Some('Z'),
            "a name with ')' in it"
        );
        assert_eq!(state_of("garbage"), None);
    }

    #[test]
    fn this_process_is_alive_and_a_missing_one_is_not() {
        assert!(alive(&format!("/proc/{}/stat", std::process::id())));
        assert!(!alive("/proc/0/stat"));
    }

    #[test]
    fn the_rank_connects_to_an_abstract_socket_and_sees_it_close() {
        use std::os::linux::net::SocketAddrExt;
        use std::os::unix::net::{SocketAddr, UnixListener};
        let name = format!("mbhybrid-watchdog-test-{}", std::process::id());
        let address = SocketAddr::from_abstract_name(name.as_bytes()).unwrap();
        let listener = UnixListener::bind_addr(&address).unwrap();
        let fd = connect(name.as_bytes()).expect("connects");
        let (accepted, _) = listener.accept().unwrap();
        drop(accepted);
        let mut byte = 0u8;
        // SAFETY: reads at most one byte into `byte` from the connection.
        let read = unsafe { libc::read(fd, (&mut byte as *mut u8).cast(), 1) };
        assert_eq!(read, 0, "the closed peer reads as end of file");
        assert!(connect(b"mbhybrid-nobody-listens-here").is_none());
        assert!(
            connect(&[b'x'; 200]).is_none(),
            "a name too long for sun_path"
        );
    }
}
