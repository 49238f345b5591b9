//! Processes a stopped job left behind outside its process group.
//!
//! A job runs in a process group of its own, and stopping it kills that
//! group. Open MPI puts each rank in a group of its own, so the kill of
//! the launcher does not reach them; a rank whose launcher died while the
//! rank was still inside `MPI_Init` waits there forever for its launcher's
//! answer, before the runtime's watch of `verify` (which would end it)
//! has started. Such a rank still carries the environment the job was
//! given, and one entry of it (the run's trace folder) belongs to this job
//! alone: every process of this user that carries it is killed.

use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;

/// Kills (SIGKILL) every other process of this user whose environment
/// holds `key=value`; returns how many it signalled. A process that ends
/// meanwhile, or whose environment cannot be read, is left alone.
pub(crate) fn kill_carrying(key: &str, value: &str) -> usize {
    let marker = format!("{key}={value}");
    let me = std::process::id();
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return 0;
    };
    let mut killed = 0;
    for entry in entries.flatten() {
        let Some(pid) = pid_of(entry.file_name().as_os_str()).filter(|&p| p != me) else {
            continue;
        };
        let Ok(environ) = std::fs::read(format!("/proc/{pid}/environ")) else {
            continue;
        };
        if environ.split(|&b| b == 0).any(|e| e == marker.as_bytes()) {
            // SAFETY: kill(2) on a process of this user that carries this
            // job's marker; it has no memory effects on this process.
            unsafe { libc::kill(pid as libc::pid_t, libc::SIGKILL) };
            killed += 1;
        }
    }
    killed
}

fn pid_of(name: &OsStr) -> Option<u32> {
    std::str::from_utf8(name.as_bytes()).ok()?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::process::Command;
    use std::time::{Duration, Instant};

    #[test]
    fn a_process_carrying_the_marker_is_killed_and_others_are_not() {
        let value = format!("leftovers-test-{}", std::process::id());
        let mut marked = Command::new("sleep")
            .arg("30")
            .env("MBH_LEFTOVER_TEST", &value)
            .spawn()
            .unwrap();
        let mut other = Command::new("sleep")
            .arg("30")
            .env("MBH_LEFTOVER_TEST", "another job")
            .spawn()
            .unwrap();
        // The child's environment is readable once it has exec'd.
        let deadline = Instant::now() + Duration::from_secs(5);
        let mut killed = 0;
        while killed == 0 && Instant::now() < deadline {
            killed = kill_carrying("MBH_LEFTOVER_TEST", &value);
            std::thread::sleep(Duration::from_millis(20));
        }
        assert_eq!(killed, 1);
        let status = marked.wait().unwrap();
        assert!(!status.success(), "killed, not finished: {status:?}");
        assert!(
            other.try_wait().unwrap().is_none(),
            "the other job's process runs on"
        );
        other.kill().unwrap();
        other.wait().unwrap();
    }
}
