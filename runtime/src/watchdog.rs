//! Ends this rank when the `mbhybrid` process that launched its job is
//! gone (issue 12: a `verify` killed with SIGKILL, as batch schedulers and
//! CI systems do at their time limit, left its job spinning forever, since
//! MPICH's ranks busy-poll and nobody was left to stop them).
//!
//! `verify` names itself in [`ENV_WATCH_PID`]. A thread of the runtime
//! wakes every [`PERIOD`], off every MPI call's path, and looks at that
//! process in `/proc`; once it is gone (or a zombie waiting to be reaped),
//! the rank says so on its standard error and kills itself. It makes no
//! MPI call and touches nothing of the program's.

use mbh_trace::layout::ENV_WATCH_PID;
use std::time::Duration;

/// How often the launching process is looked at.
const PERIOD: Duration = Duration::from_millis(500);

/// Starts the watch when the job was launched by `mbhybrid` (the variable
/// is set); otherwise does nothing.
pub fn start() {
    let Some(pid) = std::env::var(ENV_WATCH_PID)
        .ok()
        .and_then(|v| v.parse::<u32>().ok())
        .filter(|&pid| pid > 1)
    else {
        return;
    };
    let spawned = std::thread::Builder::new()
        .name("mbhybrid-watch".into())
        .stack_size(64 * 1024)
        .spawn(move || watch(pid));
    if spawned.is_err() {
        crate::start::warn(format_args!(
            "cannot start the thread that ends this rank when mbhybrid is gone; \
             a killed mbhybrid may leave this job running"
        ));
    }
}

fn watch(pid: u32) -> ! {
    let stat = format!("/proc/{pid}/stat");
    loop {
        std::thread::sleep(PERIOD);
        if !alive(&stat) {
            crate::start::warn(format_args!(
                "the mbhybrid process {pid} that launched this job is gone: stopping this rank"
            ));
            // SAFETY: signals this very process; SIGKILL cannot be caught,
            // so nothing of the program runs after it.
            unsafe { libc::kill(libc::getpid(), libc::SIGKILL) };
        }
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
}
