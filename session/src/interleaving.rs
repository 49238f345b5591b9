//! One run of the job: write its runtime configuration, launch it with the
//! deadlock monitor watching, read what the ranks recorded, and keep what a
//! later `replay` needs.

use crate::error::{Result, SessionError};
use crate::session::Session;
use mbh_bounding::RunEnd;
use mbh_launch::hang_monitor::DeadlockMonitor;
use mbh_launch::Job;
use mbh_trace::config::{ForcedMatch, Guidance, RoomAtCall, RuntimeConfig};
use mbh_trace::forced::{unmatched_forces, Reach, UnmatchedForce};
use mbh_trace::layout::{InterleavingDir, ENV_HOLD_FAILED, ENV_TRACE_DIR, ENV_WATCH_PID};
use mbh_trace::rank_trace::WildcardEvent;
use mbh_trace::FindingKind;
use mbh_verdict::{Analysis, RunContext};

/// What one run showed.
pub struct Interleaving {
    /// Its directory.
    pub dir: InterleavingDir,
    /// Outcome, findings, traces.
    pub analysis: Analysis,
    /// Every wildcard event of every rank, with its potential senders.
    pub events: Vec<WildcardEvent>,
    /// Whether the deadlock monitor stopped the run.
    pub deadlocked: bool,
}

impl Interleaving {
    /// How the run ended, for the search. A run stopped by the timeout is
    /// stuck like a deadlocked one: a forced match it never made did not
    /// happen (it was not killed before it could).
    pub fn end(&self) -> RunEnd {
        let findings = &self.analysis.findings;
        if self.deadlocked || findings.iter().any(|f| f.kind == FindingKind::Timeout) {
            RunEnd::Deadlocked
        } else if findings
            .iter()
            .any(|f| f.kind != FindingKind::BufferingHazard)
        {
            RunEnd::Crashed
        } else {
            RunEnd::Complete
        }
    }

    /// How far its ranks got, for [`unmatched_forces`]: after a crash, the
    /// ranks that did not finalize were cut short ([`Reach::crashed`]).
    pub fn reach(&self) -> Reach {
        match self.end() {
            RunEnd::Crashed => Reach::crashed(self.analysis.traces.iter().flatten()),
            RunEnd::Complete | RunEnd::Deadlocked => Reach::Whole,
        }
    }

    /// The forced matches of `guidance` this run did not make: the rule the
    /// search and `mbhybrid replay` share ([`unmatched_forces`]).
    pub fn unmatched(&self, guidance: &Guidance) -> Vec<UnmatchedForce> {
        unmatched_forces(guidance, &self.events, &self.reach())
    }
}

/// The room of each buffer the static analysis knows at calls it could not
/// check itself, for the runtime's check, ordered as the
/// runtime looks them up.
fn buffer_rooms(session: &Session) -> Vec<RoomAtCall> {
    let Some(analysis) = session.sites.as_ref().and_then(|s| s.analysis.as_ref()) else {
        return Vec::new();
    };
    let mut rooms: Vec<RoomAtCall> = analysis
        .buffer_rooms
        .iter()
        .map(|room| RoomAtCall {
            site: room.site,
            access: room.access,
            bytes: room.bytes,
        })
        .collect();
    rooms.sort();
    rooms
}

/// What launching a run needs, owned: `verify --jobs` launches runs ahead
/// from other threads while the session analyses the run before them.
#[derive(Clone)]
pub struct LaunchSpec {
    launcher: mbh_launch::Launcher,
    program: std::path::PathBuf,
    args: Vec<String>,
    np: u32,
    timeout: std::time::Duration,
    preload: Option<std::path::PathBuf>,
    buffer_rooms: Vec<RoomAtCall>,
    watch_buffers: bool,
    passthrough: bool,
    /// The user's working directory, which each run's own mirrors.
    cwd: std::path::PathBuf,
    /// The run directory, never linked into a run's working directory.
    run_dir: std::path::PathBuf,
}

impl LaunchSpec {
    /// The launch of `session`'s program.
    pub fn of(session: &Session) -> LaunchSpec {
        LaunchSpec {
            launcher: session.launcher.clone(),
            program: session.program.clone(),
            args: session.args.clone(),
            np: session.np,
            timeout: session.timeout,
            preload: session.preload.clone(),
            buffer_rooms: buffer_rooms(session),
            watch_buffers: session.sites.as_ref().is_some_and(|t| t.access_checks),
            passthrough: false,
            cwd: session.cwd.clone(),
            run_dir: session.run_dir.clone(),
        }
    }

    /// The same launch with the program's output, and working directory,
    /// left to it (`mbhybrid run`: one run, as `mpiexec` would make it).
    pub fn passthrough(mut self) -> LaunchSpec {
        self.passthrough = true;
        self
    }
}

/// A job that ran and has not been analysed yet.
pub struct Launched {
    dir: InterleavingDir,
    config: RuntimeConfig,
    ended: mbh_trace::report::JobEnd,
    exit_order: Vec<i32>,
    monitor: DeadlockMonitor,
}

impl Launched {
    /// Its directory.
    pub fn dir(&self) -> &InterleavingDir {
        &self.dir
    }

    /// How the job ended.
    pub fn ended(&self) -> &mbh_trace::report::JobEnd {
        &self.ended
    }

    /// Moves its directory to `dir` (a run launched ahead gets its number
    /// when the search takes it). Nothing of the job holds the old path.
    pub fn move_to(&mut self, dir: InterleavingDir) -> Result<()> {
        std::fs::rename(&self.dir.path, &dir.path).map_err(|source| SessionError::Move {
            from: self.dir.path.clone(),
            to: dir.path.clone(),
            source,
        })?;
        self.dir = dir;
        Ok(())
    }
}

/// Runs interleaving `n` in `dir` under `config`.
pub fn run(
    session: &mut Session,
    n: u32,
    dir: InterleavingDir,
    config: RuntimeConfig,
) -> Result<Interleaving> {
    let launched = launch(&LaunchSpec::of(session), dir, config)?;
    analyze(session, n, launched)
}

/// Launches a job in `dir` under `config` with the deadlock monitor
/// watching, and waits for it to end.
pub fn launch(
    spec: &LaunchSpec,
    dir: InterleavingDir,
    mut config: RuntimeConfig,
) -> Result<Launched> {
    config.buffer_rooms = spec.buffer_rooms.clone();
    config.watch_buffers = spec.watch_buffers;
    std::fs::create_dir_all(&dir.path).map_err(|e| SessionError::RunDirUnwritable {
        path: dir.path.clone(),
        reason: e.to_string(),
    })?;
    std::fs::write(dir.runtime_config(), config.to_json()).map_err(|source| {
        SessionError::Write {
            path: dir.runtime_config(),
            source,
        }
    })?;

    // Each run writes its files in a folder of its own, so runs do not
    // overwrite or pile up each other's output files.
    let current_dir = if spec.passthrough {
        None
    } else {
        let made = mbh_launch::workdir::mirror(&spec.cwd, &dir.work(), &spec.run_dir);
        Some(made.map_err(|e| SessionError::RunDirUnwritable {
            path: dir.work(),
            reason: e.to_string(),
        })?)
    };
    let deaths = mbh_launch::deaths::DeathWatch::start(&dir, spec.np);
    let mut env = vec![
        (ENV_TRACE_DIR.to_string(), dir.path.display().to_string()),
        (ENV_WATCH_PID.to_string(), std::process::id().to_string()),
        // The monitor below releases ranks that fail (mbh-launch's
        // hang_monitor.rs).
        (ENV_HOLD_FAILED.to_string(), "1".to_string()),
    ];
    env.extend(deaths.env());
    if let Some(lib) = &spec.preload {
        let existing = std::env::var("LD_PRELOAD").unwrap_or_default();
        let value = if existing.is_empty() {
            lib.display().to_string()
        } else {
            format!("{}:{existing}", lib.display())
        };
        env.push(("LD_PRELOAD".into(), value));
    }
    let marker = (ENV_TRACE_DIR.to_string(), dir.path.display().to_string());
    let job = Job {
        marker: Some(marker),
        launcher: &spec.launcher,
        program: &spec.program,
        args: &spec.args,
        env,
        stdout: dir.launcher_stdout(),
        stderr: dir.launcher_stderr(),
        passthrough: spec.passthrough,
        current_dir,
        timeout: spec.timeout,
    };
    let mut monitor = DeadlockMonitor::new(&dir, spec.np);
    let ended = mbh_launch::run(&job, &mut || monitor.poll());
    let exit_order = deaths.finish();
    let ended = ended.map_err(|e| SessionError::LauncherFailed {
        command: spec.launcher.command_line(&spec.program, &spec.args),
        status: e.to_string(),
        stderr: String::new(),
    })?;
    Ok(Launched {
        dir,
        config,
        ended,
        exit_order,
        monitor,
    })
}

/// Reads what the ranks of a launched job recorded and analyses it as
/// interleaving `n`.
pub fn analyze(session: &mut Session, n: u32, launched: Launched) -> Result<Interleaving> {
    let Launched {
        dir,
        config,
        ended,
        exit_order,
        monitor,
    } = launched;
    let (traces, warnings) = mbh_verdict::read_traces(&dir, session.np);
    // Calls the program did not label: their sites, from the return
    // addresses the runtime recorded, join the table before any finding
    // looks one up.
    session.learn_sites(&traces);
    let session = &*session;
    let mut analysis = mbh_verdict::judge::judge(
        &RunContext {
            program: &session.program_arg,
            interleaving: n,
            dir: &dir,
            ended: &ended,
            sites: session.sites.as_ref(),
            symbolizer: &session.symbolizer,
            timeout_secs: session.timeout.as_secs(),
            exit_order: &exit_order,
        },
        traces,
        warnings,
        monitor.confirmed(),
    )?;
    let deadlocked = monitor.confirmed().is_some();
    session.note_missing_debug_info(&mut analysis.findings);
    // The oracle reads every rank's trace: taken out of the analysis and
    // put back, never copied (BENCHMARKS.md, "Post-run analysis at scale").
    let complete: Option<Vec<mbh_trace::RankTrace>> =
        analysis.traces.iter().all(Option::is_some).then(|| {
            std::mem::take(&mut analysis.traces)
                .into_iter()
                .flatten()
                .collect()
        });
    let mut events: Vec<WildcardEvent> = match &complete {
        Some(traces) => traces.iter().flat_map(|t| t.wildcard_events()).collect(),
        None => analysis
            .traces
            .iter()
            .flatten()
            .flat_map(|trace| trace.wildcard_events())
            .collect(),
    };
    if let Some(traces) = complete {
        let zero = config.buffering == mbh_trace::config::Buffering::Zero;
        add_oracle_senders(&mut events, &traces, deadlocked, zero);
        analysis.traces = traces.into_iter().map(Some).collect();
    }

    // Everything a replay needs: every wildcard match of this run, forced.
    let replay = RuntimeConfig {
        guidance: Some(Guidance {
            last_guided_clock: u64::MAX,
            forced: events
                .iter()
                .filter(|e| e.matched >= 0)
                .map(|e| ForcedMatch {
                    rank: e.rank,
                    event: e.event,
                    source: e.matched,
                })
                .collect(),
        }),
        deterministic: None,
        ..config
    };
    std::fs::write(dir.replay_config(), replay.to_json()).map_err(|source| {
        SessionError::Write {
            path: dir.replay_config(),
            source,
        }
    })?;
    Ok(Interleaving {
        dir,
        analysis,
        events,
        deadlocked,
    })
}

/// Removes the bulky files of an interleaving that showed nothing (its
/// traces and outputs), keeping its configurations: a long exploration must
/// not fill the disk, and a clean interleaving is still replayable.
pub fn prune(dir: &InterleavingDir) {
    let Ok(entries) = std::fs::read_dir(&dir.path) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let name = name.to_string_lossy();
        if name.ends_with(".trace") || name.ends_with(".stderr") {
            let _ = std::fs::remove_file(entry.path());
        }
    }
}

/// Completes the clocks' potential senders with the offline oracle's
/// (`mbh_analysis::potential_matches`, the matches-before order of seed
/// 000 ch. 3, computed from the traces after the run).
///
/// * Lamport clocks order concurrent events (seed 000 Theorem 5.3 is one
///   way only; Fig 5.3): LLCP misses senders, and the search would call a
///   space complete that it did not cover (the differential test
///   found it with synchronous sends). The oracle is exact on
///   `MPI_COMM_WORLD` and on every communicator the runtime named (each
///   member records its rank there, `CommId`), so its senders join every
///   event received on those.
/// * A run stopped in a deadlock leaves messages in flight that no receive
///   will ever take; the clocks learn a potential sender only from a
///   message that arrives (§5.1.3, `ProcessIncomingMessage`), so those
///   senders would be missed, and with them every other interleaving when
///   the first run happens to deadlock (SCENARIOS.md E4 with P2's message
///   first). The oracle's `unreceived` senders join on any communicator.
/// * The same holds for which request a `Waitany`/`Testany` could have
///   returned (seed 001 §4): the runtime offers a request whose message
///   carried a clock no later than the choice's, and a message from a rank
///   that merely did more work carries a later one (a `Testany` loop over
///   wildcard `Irecv`s was never offered that sender's index). The
///   oracle's potential indices join every choice.
fn add_oracle_senders(
    events: &mut [WildcardEvent],
    traces: &[mbh_trace::RankTrace],
    deadlocked: bool,
    zero_buffering: bool,
) {
    let world = traces
        .iter()
        .flat_map(|t| t.ops.iter())
        .find(|op| {
            matches!(
                op.kind,
                mbh_trace::OpKind::Init | mbh_trace::OpKind::InitThread
            )
        })
        .map(|op| op.comm);
    for found in mbh_analysis::potential_senders_and_indices(traces, zero_buffering) {
        let Some(event) = events
            .iter_mut()
            .find(|e| e.rank == found.rank && e.event == found.event)
        else {
            continue;
        };
        // Indices name requests of the rank's own array, whatever the
        // communicator; senders are exact where the oracle can name every
        // rank in MPI_COMM_WORLD.
        let on_world = event.is_index_choice()
            || traces
                .iter()
                .find(|t| t.rank == event.rank)
                .and_then(|t| t.ops.get(event.op_index as usize))
                // A communicator the runtime named (top bit set, which no
                // handle has): the oracle knows its members' world ranks.
                .is_some_and(|op| Some(op.comm) == world || op.comm >> 63 == 1);
        let senders = if on_world {
            &found.senders
        } else if deadlocked {
            &found.unreceived
        } else {
            continue;
        };
        for &sender in senders {
            if sender != event.matched && !event.potential.contains(&sender) {
                event.potential.push(sender);
            }
        }
        event.potential.sort_unstable();
        event.enablers = found
            .enablers
            .into_iter()
            .filter(|(sender, _)| *sender == event.matched || event.potential.contains(sender))
            .collect();
    }
}
