//! Starting one run of the MPI job through the launcher, and stopping it.
//!
//! The job runs in a process group of its own, so a timeout (or, later, a
//! confirmed deadlock) can stop the launcher and every rank it started.

use mbh_trace::report::JobEnd;
use std::fs::File;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// A launcher template that cannot start a job. The messages say what to
/// do.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum LauncherError {
    /// The launcher template lacks `{np}`.
    #[error("the launcher template `{0}` does not contain `{{np}}`, so mbhybrid cannot tell it how many processes to start. Write it with the placeholder, for example `--launcher 'mpiexec -n {{np}}'` or `--launcher 'srun -n {{np}}'`.")]
    LauncherWithoutNp(String),
    /// The launcher template cannot be split into words.
    #[error("the launcher template `{template}` cannot be parsed ({reason}). Quote it as one argument, for example `--launcher 'mpiexec -n {{np}}'`.")]
    LauncherUnparsable {
        /// The template.
        template: String,
        /// Why.
        reason: String,
    },
    /// The launcher program is not installed.
    #[error("the launcher `{0}` was not found on PATH. Install MPICH (`scripts/install-deps.sh` does, or `apt-get install mpich libmpich-dev`), or name your launcher with `--launcher`.")]
    LauncherMissing(String),
}

/// A launcher command with `{np}` filled in, for example `mpiexec -n 4`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Launcher {
    /// The template as given.
    pub template: String,
    /// Its words after substitution.
    pub argv: Vec<String>,
    /// Environment it needs besides mbhybrid's (`mpi_choice::launcher_env`).
    pub env: Vec<(String, String)>,
}

impl Launcher {
    /// Parses `template` (shell words, `{np}` required) for `np` processes
    /// and checks that its program exists.
    pub fn new(template: &str, np: u32) -> Result<Self, LauncherError> {
        if !template.contains("{np}") {
            return Err(LauncherError::LauncherWithoutNp(template.to_string()));
        }
        let words =
            shell_words::split(template).map_err(|e| LauncherError::LauncherUnparsable {
                template: template.to_string(),
                reason: e.to_string(),
            })?;
        if words.is_empty() {
            return Err(LauncherError::LauncherUnparsable {
                template: template.to_string(),
                reason: "it is empty".into(),
            });
        }
        let argv: Vec<String> = words
            .iter()
            .map(|w| w.replace("{np}", &np.to_string()))
            .collect();
        which::which(&argv[0]).map_err(|_| LauncherError::LauncherMissing(argv[0].clone()))?;
        Ok(Launcher {
            template: template.to_string(),
            argv,
            env: Vec::new(),
        })
    }

    /// The launcher with `env` in its environment.
    pub fn with_env(mut self, env: Vec<(String, String)>) -> Self {
        self.env = env;
        self
    }

    /// The command line for `program args`, as one shell string (for
    /// messages).
    pub fn command_line(&self, program: &Path, args: &[String]) -> String {
        let mut words = self.argv.clone();
        words.push(program.display().to_string());
        words.extend(args.iter().cloned());
        shell_words::join(words)
    }
}

/// One job to run.
#[derive(Debug)]
pub struct Job<'a> {
    /// The launcher.
    pub launcher: &'a Launcher,
    /// The program (absolute or as given).
    pub program: &'a Path,
    /// Its arguments.
    pub args: &'a [String],
    /// Extra environment for the job.
    pub env: Vec<(String, String)>,
    /// Where the launcher's standard output goes.
    pub stdout: PathBuf,
    /// Where the launcher's standard error goes.
    pub stderr: PathBuf,
    /// Leave standard output and error to the job (`mbhybrid run`) instead
    /// of the two files.
    pub passthrough: bool,
    /// The job's working directory ([`crate::workdir`]); `None`: this
    /// process's.
    pub current_dir: Option<PathBuf>,
    /// How long the run may take.
    pub timeout: Duration,
    /// An entry of `env` (key, value) that no other job's processes
    /// carry: once the job is stopped or killed, any process still
    /// carrying it is killed too (`leftovers.rs`).
    pub marker: Option<(String, String)>,
}

/// What a monitor tells the launcher loop after looking at the running job.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Watch {
    /// Let it run.
    Continue,
    /// Stop the job now (the monitor proved it can never finish).
    Stop,
}

/// How often a running job is looked at.
pub const POLL_INTERVAL: Duration = Duration::from_millis(25);

/// Runs `job` to its end, its timeout, or until `monitor` (called every
/// [`POLL_INTERVAL`] while the job runs) says stop. Its end is noticed when
/// it happens, not at the next look (`ExitWait`). Standard input is
/// `/dev/null`: an MPI job under verification cannot be fed interactively.
pub fn run(job: &Job<'_>, monitor: &mut dyn FnMut() -> Watch) -> std::io::Result<JobEnd> {
    use std::os::unix::process::CommandExt;
    let mut command = Command::new(&job.launcher.argv[0]);
    command
        .args(&job.launcher.argv[1..])
        .arg(job.program)
        .args(job.args)
        .envs(job.launcher.env.iter().map(|(k, v)| (k, v)))
        .envs(job.env.iter().map(|(k, v)| (k, v)))
        .stdin(Stdio::null())
        .process_group(0);
    if let Some(dir) = &job.current_dir {
        command.current_dir(dir);
    }
    if !job.passthrough {
        command
            .stdout(File::create(&job.stdout)?)
            .stderr(File::create(&job.stderr)?);
    }
    // The launcher gets SIGTERM (it then stops its ranks) when this
    // process dies, however it dies (SIGKILL included): no job outlives it. Each
    // rank's runtime also watches this process (runtime/src/watchdog.rs):
    // ranks that busy-poll in MPI never notice a launcher gone.
    let parent = std::process::id() as libc::pid_t;
    // SAFETY: the closure runs in the forked child before exec and calls
    // only async-signal-safe functions (prctl, getppid, _exit).
    unsafe {
        command.pre_exec(move || {
            libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGTERM);
            if libc::getppid() != parent {
                // Died between fork and prctl: no one is left to serve.
                libc::_exit(1);
            }
            Ok(())
        });
    }
    let start = Instant::now();
    let mut child = command.spawn()?;
    let group = child.id() as libc::pid_t;
    let _forward = crate::termination::ForwardTermination::to(group);
    let exit = ExitWait::of(group);
    loop {
        if let Some(status) = child.try_wait()? {
            // Ranks the launcher left behind (it should leave none) go too.
            kill_group(group, libc::SIGKILL);
            if std::os::unix::process::ExitStatusExt::signal(&status).is_some() {
                // Killed (a stop of mbhybrid kills the group): ranks in
                // groups of their own may be left.
                kill_leftovers(job);
            }
            return Ok(JobEnd {
                status: Some(status),
                timed_out: false,
                stopped_by_monitor: false,
                elapsed: start.elapsed(),
            });
        }
        let timed_out = start.elapsed() >= job.timeout;
        if timed_out || monitor() == Watch::Stop {
            stop_group(group, &mut child)?;
            kill_leftovers(job);
            return Ok(JobEnd {
                status: None,
                timed_out,
                stopped_by_monitor: !timed_out,
                elapsed: start.elapsed(),
            });
        }
        exit.wait(POLL_INTERVAL);
    }
}

/// Waits for the launcher to exit, up to a limit: on a pidfd, which
/// becomes readable when the process exits, so the search starts its next
/// run at once instead of up to [`POLL_INTERVAL`] later (half of it on
/// average, over every run of an exploration). Kernels before 5.3
/// have no pidfd: the wait then sleeps the whole limit.
struct ExitWait {
    /// The pidfd, if the kernel made one.
    pidfd: Option<std::os::fd::OwnedFd>,
}

impl ExitWait {
    fn of(pid: libc::pid_t) -> ExitWait {
        use std::os::fd::FromRawFd;
        // SAFETY: pidfd_open(2) takes a pid and flags and returns a new
        // descriptor or -1; it touches no memory of this process.
        let fd = unsafe { libc::syscall(libc::SYS_pidfd_open, pid, 0) };
        let pidfd = i32::try_from(fd).ok().filter(|&fd| fd >= 0).map(|fd| {
            // SAFETY: `fd` was just returned by the kernel and is owned by
            // nothing else.
            unsafe { std::os::fd::OwnedFd::from_raw_fd(fd) }
        });
        ExitWait { pidfd }
    }

    /// Returns when the process exited or `limit` passed (early on a
    /// signal, which the caller's loop absorbs).
    fn wait(&self, limit: Duration) {
        use std::os::fd::AsRawFd;
        let Some(pidfd) = &self.pidfd else {
            std::thread::sleep(limit);
            return;
        };
        let mut fd = libc::pollfd {
            fd: pidfd.as_raw_fd(),
            events: libc::POLLIN,
            revents: 0,
        };
        let millis = i32::try_from(limit.as_millis()).unwrap_or(i32::MAX);
        // SAFETY: one valid pollfd.
        let ready = unsafe { libc::poll(&mut fd, 1, millis) };
        if ready < 0 && std::io::Error::last_os_error().kind() != std::io::ErrorKind::Interrupted {
            // A pidfd that cannot be polled: wait as without one.
            std::thread::sleep(limit);
        }
    }
}

fn kill_leftovers(job: &Job<'_>) {
    if let Some((key, value)) = &job.marker {
        crate::leftovers::kill_carrying(key, value);
    }
}

fn kill_group(group: libc::pid_t, signal: libc::c_int) {
    // SAFETY: kill(2) with a negative pid signals a process group we
    // created; it has no memory effects on this process.
    unsafe { libc::kill(-group, signal) };
}

/// Asks the job to stop (SIGTERM lets the launcher clean up its ranks),
/// then forces it.
fn stop_group(group: libc::pid_t, child: &mut std::process::Child) -> std::io::Result<()> {
    kill_group(group, libc::SIGTERM);
    let deadline = Instant::now() + Duration::from_secs(2);
    while Instant::now() < deadline {
        if child.try_wait()?.is_some() {
            break;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    kill_group(group, libc::SIGKILL);
    child.wait()?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Waits up to 5 s for process `pid` to be gone (or a zombie).
    fn assert_gone(pid: libc::pid_t, what: &str) {
        let deadline = Instant::now() + Duration::from_secs(5);
        loop {
            let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
            if stat.is_empty() || stat.contains(") Z ") {
                return;
            }
            assert!(Instant::now() < deadline, "{what}: {stat}");
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    #[test]
    fn template_needs_np() {
        assert!(matches!(
            Launcher::new("mpiexec -n 4", 4),
            Err(LauncherError::LauncherWithoutNp(_))
        ));
    }

    #[test]
    fn np_is_substituted_and_quotes_respected() {
        let l = Launcher::new("env 'A=x y' {np}", 3).unwrap();
        assert_eq!(l.argv, ["env", "A=x y", "3"]);
    }

    #[test]
    fn missing_launcher_is_named() {
        match Launcher::new("no-such-launcher-xyz -n {np}", 2) {
            Err(LauncherError::LauncherMissing(name)) => assert_eq!(name, "no-such-launcher-xyz"),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn timeout_stops_the_whole_group() {
        let dir = tempfile::tempdir().unwrap();
        let script = dir.path().join("job.sh");
        let pid_file = dir.path().join("child.pid");
        // A "launcher" that leaves a child of its own behind, as mpiexec
        // leaves ranks: both must be gone after the timeout.
        std::fs::write(
            &script,
            format!("sleep 30 &\necho $! > {}\nwait\n", pid_file.display()),
        )
        .unwrap();
        let launcher = Launcher {
            template: "sh {np}".into(),
            argv: vec!["sh".into()],
            env: Vec::new(),
        };
        let job = Job {
            launcher: &launcher,
            program: &script,
            args: &[],
            env: vec![],
            stdout: dir.path().join("out"),
            stderr: dir.path().join("err"),
            passthrough: false,
            current_dir: None,
            timeout: Duration::from_millis(500),
            marker: None,
        };
        let ended = run(&job, &mut || Watch::Continue).unwrap();
        assert!(ended.timed_out);
        assert!(!ended.stopped_by_monitor);
        assert!(ended.status.is_none());
        let child: libc::pid_t = std::fs::read_to_string(&pid_file)
            .unwrap()
            .trim()
            .parse()
            .unwrap();
        // A killed orphan may linger as a zombie until init reaps it.
        assert_gone(child, "the launcher's child survived");
    }

    /// Open MPI's ranks run in process groups of their own: a stop kills
    /// the launcher's group, and what carries the job's marker goes too.
    #[test]
    fn a_stop_kills_what_left_the_group_and_carries_the_marker() {
        let dir = tempfile::tempdir().unwrap();
        let script = dir.path().join("job.sh");
        let pid_file = dir.path().join("child.pid");
        std::fs::write(
            &script,
            format!(
                "setsid sleep 30 &\necho $! > {}\nwait\n",
                pid_file.display()
            ),
        )
        .unwrap();
        let launcher = Launcher {
            template: "sh {np}".into(),
            argv: vec!["sh".into()],
            env: Vec::new(),
        };
        let marker = ("MBH_JOB_TEST".to_string(), dir.path().display().to_string());
        let job = Job {
            launcher: &launcher,
            program: &script,
            args: &[],
            env: vec![marker.clone()],
            stdout: dir.path().join("out"),
            stderr: dir.path().join("err"),
            passthrough: false,
            current_dir: None,
            timeout: Duration::from_secs(60),
            marker: Some(marker),
        };
        let ended = run(&job, &mut || {
            if pid_file.exists() {
                Watch::Stop
            } else {
                Watch::Continue
            }
        })
        .unwrap();
        assert!(ended.stopped_by_monitor);
        let child: libc::pid_t = std::fs::read_to_string(&pid_file)
            .unwrap()
            .trim()
            .parse()
            .unwrap();
        assert_gone(child, "the child in a group of its own survived");
    }

    #[test]
    fn an_exit_ends_the_wait_for_it_before_its_limit() {
        // Without the pidfd the wait would sleep its whole limit (a minute
        // here, against the child's few milliseconds).
        let mut child = Command::new("sh").args(["-c", "exit 0"]).spawn().unwrap();
        let exit = ExitWait::of(child.id() as libc::pid_t);
        assert!(exit.pidfd.is_some(), "this kernel has pidfd_open");
        let started = Instant::now();
        exit.wait(Duration::from_secs(60));
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "the wait ran to its limit"
        );
        assert!(child.try_wait().unwrap().is_some(), "the child has exited");
    }

    #[test]
    fn a_monitor_can_stop_the_job() {
        let dir = tempfile::tempdir().unwrap();
        let script = dir.path().join("job.sh");
        std::fs::write(&script, "sleep 30\n").unwrap();
        let launcher = Launcher {
            template: "sh {np}".into(),
            argv: vec!["sh".into()],
            env: Vec::new(),
        };
        let job = Job {
            launcher: &launcher,
            program: &script,
            args: &[],
            env: vec![],
            stdout: dir.path().join("out"),
            stderr: dir.path().join("err"),
            passthrough: false,
            current_dir: None,
            timeout: Duration::from_secs(60),
            marker: None,
        };
        let mut polls = 0;
        let ended = run(&job, &mut || {
            polls += 1;
            if polls == 3 {
                Watch::Stop
            } else {
                Watch::Continue
            }
        })
        .unwrap();
        assert!(ended.stopped_by_monitor && !ended.timed_out);
        assert_eq!(polls, 3);
        assert!(ended.elapsed < Duration::from_secs(10));
    }
}
