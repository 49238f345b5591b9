//! What one run of the job ended with: each rank's end read from its trace,
//! turned into findings (`assertion`, `crash`, `exit`, `timeout`).
//!
//! The launcher's view (its exit status, what it printed) is only used when
//! the ranks' own traces cannot tell: a rank's trace records its signal,
//! exit status or `MPI_Abort` from inside the process, which is exact.

use crate::error::UsageError;
use crate::launch::Ended;
use crate::symbolize::{SourcePos, Symbolizer};
use mbh_bounding::deadlock::{self, Judged, RankVerdict, Undecidable};
use mbh_trace::layout::InterleavingDir;
use mbh_trace::rank_trace::{RankState, RankTrace};
use mbh_trace::report::{RankOutcome, RunOutcome};
use mbh_trace::{Finding, FindingKind, Location, Role, Severity, SiteTable};

/// The most of a rank's standard error kept in the report.
const STDERR_TAIL: usize = 4000;

/// Everything `analyze` needs about one finished run.
pub struct RunContext<'a> {
    /// The program as the user named it (for messages).
    pub program: &'a str,
    /// 1-based interleaving number.
    pub interleaving: u32,
    /// Its directory.
    pub dir: &'a InterleavingDir,
    /// How the launcher ended.
    pub ended: &'a Ended,
    /// Call sites, for programs built by `mbhybrid build`.
    pub sites: Option<&'a SiteTable>,
    /// Debug information of the executable.
    pub symbolizer: &'a Symbolizer,
    /// The run's timeout, for the message.
    pub timeout_secs: u64,
    /// Ranks in the order their processes exited ([`crate::deaths`]).
    pub exit_order: &'a [i32],
}

/// The outcome and the findings of one run.
pub struct Analysis {
    /// Per-rank ends.
    pub outcome: RunOutcome,
    /// Problems found.
    pub findings: Vec<Finding>,
    /// The traces that could be read, by rank.
    pub traces: Vec<Option<RankTrace>>,
    /// Gaps in the traces: unreadable, cut short, records lost. Each one
    /// keeps the verdict from being complete (issue 12).
    pub warnings: Vec<String>,
    /// The runtime stopped the job (a call it cannot handle, or its own
    /// failure): its message per rank. A limit of the tool, never a
    /// finding against the program (issue 12).
    pub tool_stops: Vec<String>,
}

/// Reads every rank's trace of `dir` (`None`: missing or unreadable), and
/// the warnings about the unreadable ones and the ones cut short.
pub fn read_traces(dir: &InterleavingDir, np: u32) -> (Vec<Option<RankTrace>>, Vec<String>) {
    let mut traces = Vec::new();
    let mut warnings = Vec::new();
    for rank in 0..np as i32 {
        let path = dir.trace(rank);
        traces.push(if path.exists() {
            match RankTrace::read_decoded(&path) {
                Ok(decoded) => {
                    if let Some(cut) = decoded.truncated {
                        // A rank killed while its trace was being copied
                        // or a full disk: what the file holds is kept, and
                        // the report says what is missing (issue 12).
                        warnings.push(format!(
                            "rank {rank}'s trace is cut short: its header counts {} records, the file holds {}; what the rank did after record {} is not analysed",
                            cut.counted, cut.kept, cut.kept
                        ));
                    }
                    if let Some(damage) = &decoded.damaged {
                        warnings.push(format!(
                            "rank {rank}'s trace is damaged ({damage}); the {} records before it are analysed, what follows is not",
                            decoded.trace.ops.len()
                        ));
                    }
                    let lost = decoded.trace.end.lost_records;
                    if lost > 0 {
                        warnings.push(format!(
                            "rank {rank}'s runtime could not write {lost} record{} (its trace could not grow: is the run directory's disk full?); what they held is not analysed",
                            if lost == 1 { "" } else { "s" }
                        ));
                    }
                    Some(decoded.trace)
                }
                Err(e) => {
                    warnings.push(format!("rank {rank}'s trace is unreadable: {e}"));
                    None
                }
            }
        } else {
            None
        });
    }
    (traces, warnings)
}

/// Whether `build`'s static analysis proved an overflow of `buffer` (`send
/// buffer`, `receive buffer`, `buffer`) at `site`.
fn proven_overflow(sites: Option<&SiteTable>, site: u32, buffer: &str) -> bool {
    use mbh_trace::static_report::BufferErrorKind;
    sites
        .and_then(|table| table.analysis.as_ref())
        .is_some_and(|analysis| {
            analysis.buffer_errors.iter().any(|e| {
                e.site == site && e.kind == BufferErrorKind::Overflow && e.argument == buffer
            })
        })
}

/// Tells what happened in a finished run from its traces ([`read_traces`]
/// gives them and the `warnings` about them).
pub fn analyze(
    ctx: &RunContext<'_>,
    traces: Vec<Option<RankTrace>>,
    warnings: Vec<String>,
) -> Result<Analysis, UsageError> {
    let launcher_stderr = std::fs::read_to_string(ctx.dir.launcher_stderr()).unwrap_or_default();
    let before_init = before_init_findings(ctx);
    if traces.iter().all(Option::is_none)
        && !ctx.ended.timed_out
        && !ctx.ended.stopped_by_monitor
        && before_init.is_empty()
    {
        // Traces written but unreadable (a format version mismatch) are
        // not "no process reached MPI_Init" (issue 12).
        if let Some(first) = warnings.first() {
            return Err(UsageError::UnreadableTraces {
                program: ctx.program.to_string(),
                first: first.clone(),
                run: ctx.dir.path.display().to_string(),
            });
        }
        return Err(no_rank_started(ctx, &launcher_stderr));
    }

    let mut findings = before_init;
    findings.extend(crate::buffer_findings::buffer_findings(ctx.sites, &traces));
    findings.extend(crate::divergence::divergence_findings(
        ctx.sites,
        &traces,
        ctx.ended.stopped_by_monitor,
    ));
    let mut ranks = Vec::new();
    let mut tool_stops = Vec::new();
    for (rank, trace) in traces.iter().enumerate() {
        let rank = rank as i32;
        let stderr = tail(&std::fs::read_to_string(ctx.dir.stderr(rank)).unwrap_or_default());
        if let Some(t) = trace
            .as_ref()
            .filter(|t| t.end.state == RankState::ToolStopped)
        {
            let site = t
                .end
                .abort
                .and_then(|(_, site)| ctx.sites.and_then(|s| s.get(site)));
            tool_stops.push(tool_stop_message(rank, &stderr, site));
        }
        let (state, exit_status, signal, operations) = match trace {
            None => ("never-started".to_string(), None, None, 0),
            Some(t) => {
                findings.extend(local_check_findings(ctx, t, &traces, &stderr));
                if let Some(finding) = rank_finding(ctx, t, &stderr) {
                    findings.push(finding);
                }
                let state = match t.end.state {
                    RankState::Exited => "exited",
                    RankState::Finalized => "finalized",
                    RankState::Signaled => "signaled",
                    RankState::Aborted => "aborted",
                    RankState::ToolStopped => "stopped-by-mbhybrid",
                    // mbhybrid stopped the job after confirming it could
                    // never finish.
                    RankState::Starting | RankState::Running if ctx.ended.stopped_by_monitor => {
                        "deadlocked"
                    }
                    RankState::Starting | RankState::Running if ctx.ended.timed_out => "timed-out",
                    RankState::Starting | RankState::Running => "killed",
                };
                (
                    state.to_string(),
                    t.end.exit_status,
                    t.end.signal,
                    t.ops.len() as u64,
                )
            }
        };
        ranks.push(RankOutcome {
            rank,
            state,
            exit_status,
            signal,
            operations,
            stderr,
        });
    }

    if ctx.ended.timed_out {
        findings.push(timeout_finding(ctx, &traces));
    } else if findings.is_empty()
        && tool_stops.is_empty()
        && !ctx.ended.stopped_by_monitor
        && !ctx.ended.status.is_some_and(|s| s.success())
        && !all_finished(&traces)
    {
        // Nothing inside the processes explains the failure: they were
        // killed from outside (the launcher, the OOM killer, a user).
        let launcher_stdout =
            std::fs::read_to_string(ctx.dir.launcher_stdout()).unwrap_or_default();
        findings.push(killed_finding(
            ctx,
            &ranks,
            &traces,
            &launcher_stdout,
            &launcher_stderr,
        ));
    }

    Ok(Analysis {
        outcome: RunOutcome {
            interleaving: ctx.interleaving,
            launcher_exit: ctx.ended.status.and_then(|s| s.code()),
            ranks,
            seconds: ctx.ended.elapsed.as_secs_f64(),
            stdout: tail(&std::fs::read_to_string(ctx.dir.launcher_stdout()).unwrap_or_default()),
            infeasible: false,
        },
        findings,
        traces,
        warnings,
        tool_stops,
    })
}

/// Whether every rank finalized and exited with status 0: a launcher that
/// still failed failed on its own (Debian's `mpiexec` of Open MPI 4.1.4
/// can segfault in `PMIx_Finalize`), which says nothing about the program.
fn all_finished(traces: &[Option<RankTrace>]) -> bool {
    traces.iter().all(|t| {
        t.as_ref()
            .is_some_and(|t| t.end.state == RankState::Finalized && t.end.exit_status == Some(0))
    })
}

/// An `exit` finding: at the line the rank exited from when its frames
/// show one, else at its last MPI call (labelled `last_call`).
fn exit_finding(
    ctx: &RunContext<'_>,
    trace: &RankTrace,
    message: String,
    last_call: &str,
    help: &str,
) -> Finding {
    let end = &trace.end;
    let mut f = Finding::new(FindingKind::Exit, Severity::Error, message);
    let pos = ctx
        .symbolizer
        .first_user_frame(&end.frames, end.exe_base, false);
    if pos.is_some() {
        push_pos(&mut f, pos, trace.rank, "the rank exited from here");
    } else {
        push_last_call(ctx, &mut f, trace, last_call);
    }
    f.help = Some(help.to_string());
    f
}

/// What the runtime said when it stopped `rank` (its `mbhybrid: ...` line
/// on the rank's standard error), and where, when the call's site is known.
fn tool_stop_message(rank: i32, stderr: &str, site: Option<&mbh_trace::Site>) -> String {
    let said = stderr
        .lines()
        .rev()
        .find_map(|line| line.trim().strip_prefix("mbhybrid: "))
        .unwrap_or("the runtime stopped it (its message is not in the rank's standard error)");
    match site {
        Some(site) => format!("{}: rank {rank}: {said}", site_place(site)),
        None => format!("rank {rank}: {said}"),
    }
}

/// The runtime's "cannot create <trace>: <why>" in a job's output, from
/// "cannot". Searched anywhere in a line: a launcher that merges the
/// ranks' standard error (Open MPI) may put another rank's text before it.
fn trace_not_created(output: &str) -> Option<&str> {
    const PREFIX: &str = "mbhybrid runtime: ";
    output.lines().find_map(|line| {
        let at = line.find("mbhybrid runtime: cannot create ")?;
        Some(&line[at + PREFIX.len()..])
    })
}

fn no_rank_started(ctx: &RunContext<'_>, launcher_stderr: &str) -> UsageError {
    // The runtime could not create its traces (a run directory that became
    // read-only or full): that, not "no process reached MPI_Init".
    let stdout = std::fs::read_to_string(ctx.dir.launcher_stdout()).unwrap_or_default();
    if let Some(reason) = trace_not_created(launcher_stderr).or(trace_not_created(&stdout)) {
        return UsageError::RunDirUnwritable {
            path: ctx.dir.path.clone(),
            reason: reason.to_string(),
        };
    }
    if let Some(line) = launcher_stderr
        .lines()
        .find(|l| l.contains("error while loading shared libraries"))
    {
        return UsageError::MpiLibraryMissing(line.trim().to_string());
    }
    let stdout = std::fs::read_to_string(ctx.dir.launcher_stdout()).unwrap_or_default();
    let printed = format!("{}{}", tail(&stdout), tail(launcher_stderr));
    let output = if printed.trim().is_empty() {
        String::new()
    } else {
        format!(" The job printed:\n{}", printed.trim_end())
    };
    UsageError::NeverInitialized {
        program: ctx.program.to_string(),
        run: ctx.dir.path.display().to_string(),
        output,
    }
}

/// Calls the ranks made before `MPI_Init` (the runtime notes the first of
/// each process, `runtime/src/before_init.rs`; MPI then aborts it).
fn before_init_findings(ctx: &RunContext<'_>) -> Vec<Finding> {
    ctx.dir
        .calls_before_init()
        .into_iter()
        .map(|call| {
            let who = if call.rank >= 0 {
                format!("rank {}", call.rank)
            } else {
                "a process of the job".to_string()
            };
            let mut f = Finding::new(
                FindingKind::BeforeInit,
                Severity::Error,
                format!("{who} called `{}` before `MPI_Init`", call.call),
            );
            f.interleaving = ctx.interleaving;
            f.ranks = (call.rank >= 0).then_some(call.rank).into_iter().collect();
            match ctx.sites.and_then(|s| s.get(call.site)) {
                Some(site) => f.locations.push(site_location(
                    site,
                    call.rank,
                    Role::Primary,
                    "called before `MPI_Init`",
                )),
                None => f.notes.push(
                    "the call's line is unknown (build with `mbhybrid build` to see it)".into(),
                ),
            }
            f.help = Some(
                "call `MPI_Init` (or `MPI_Init_thread`) first; before it only `MPI_Initialized`, `MPI_Finalized` and the version queries are allowed"
                    .into(),
            );
            f
        })
        .collect()
}

/// The finding a rank's own end makes, if its end is a problem.
fn rank_finding(ctx: &RunContext<'_>, trace: &RankTrace, stderr: &str) -> Option<Finding> {
    let rank = trace.rank;
    let end = &trace.end;
    let mut finding = match end.state {
        RankState::Signaled => {
            let signal = end.signal.unwrap_or(0);
            if signal == libc::SIGABRT {
                abort_finding(ctx, trace, stderr)
            } else {
                let mut f = Finding::new(
                    FindingKind::Crash,
                    Severity::Error,
                    format!("rank {rank} crashed with {}", signal_name(signal)),
                );
                push_frame(ctx, &mut f, end, true, rank, "the rank crashed here");
                push_stack(&mut f, ctx, trace);
                if signal == libc::SIGSEGV || signal == libc::SIGBUS {
                    f.notes
                        .push(format!("the invalid address was {:#x}", end.fault_addr));
                }
                f.help = Some(
                    "rebuild with `-- -fsanitize=address -g` or run the rank under a debugger to see the invalid access"
                        .into(),
                );
                f
            }
        }
        RankState::Exited => {
            // Issue 12: ending after `MPI_Init` without `MPI_Finalize` is
            // erroneous whatever the status (MPI 4.1 §11.2.2): the other
            // ranks' `MPI_Finalize` may hang, or the launcher kill them.
            let status = end.exit_status.unwrap_or(0);
            exit_finding(
                ctx,
                trace,
                format!("rank {rank} exited with status {status} without calling `MPI_Finalize`"),
                "last MPI call before the rank returned from `main` or called `exit`",
                "call `MPI_Finalize` on every rank before returning from `main` or calling `exit`; to stop the whole job on an error, call `MPI_Abort`",
            )
        }
        RankState::Finalized if end.exit_status.is_some_and(|s| s != 0) => {
            let status = end.exit_status.unwrap_or(0);
            exit_finding(
                ctx,
                trace,
                format!("rank {rank} exited with status {status}"),
                "last MPI call before the exit",
                "a nonzero exit status makes MPI launchers report the job as failed; check the error path that exits",
            )
        }
        // The runtime stopped the job after recording a collective
        // mismatch: that finding says it all.
        RankState::Aborted
            if end.abort.map(|a| a.0) == Some(mbh_trace::op::COLLECTIVE_MISMATCH_EXIT)
                && trace.ops.iter().any(is_collective_mismatch) =>
        {
            return None
        }
        // A limit of the tool, reported as a tool error (`tool_stops`).
        RankState::ToolStopped => return None,
        RankState::Aborted => {
            let (code, site) = end.abort.unwrap_or((0, 0));
            if aborted_by_mpi_error(trace, code) {
                // The runtime aborted the job for an MPI error under
                // `MPI_ERRORS_ARE_FATAL`, as MPI would have: the local
                // check's finding says it all.
                return None;
            }
            let mut f = Finding::new(
                FindingKind::Assertion,
                Severity::Error,
                format!("rank {rank} called `MPI_Abort` with error code {code}"),
            );
            match ctx.sites.and_then(|s| s.get(site)) {
                Some(site) => f.locations.push(site_location(
                    site,
                    rank,
                    Role::Primary,
                    "the program aborted here",
                )),
                None => push_frame(ctx, &mut f, end, false, rank, "the program aborted here"),
            }
            f
        }
        // Killed, and MPI said why: an error its own `MPI_ERRORS_ARE_FATAL`
        // handler took (one the runtime does not see: on `MPI_COMM_SELF`,
        // or of a call without a communicator) stopped the job.
        RankState::Starting | RankState::Running
            if !ctx.ended.timed_out && !ctx.ended.stopped_by_monitor =>
        {
            let (call, words) = open_mpi_fatal_message(stderr)?;
            let mut f = Finding::new(
                FindingKind::MpiError,
                Severity::Error,
                format!(
                    "`{call}` failed on rank {rank} and MPI's fatal error handler stopped the job"
                ),
            );
            push_last_call(
                ctx,
                &mut f,
                trace,
                "the last MPI call the rank made: this call failed",
            );
            f.notes.push(format!("MPI's message: {words}"));
            f.notes.push(
                "the error went to MPI's own `MPI_ERRORS_ARE_FATAL` handler (an error on `MPI_COMM_SELF`, or of a call without a communicator), which mbhybrid does not record: its class and arguments are not checked"
                    .into(),
            );
            f.help = Some(
                "check the arguments of the call; `MPI_Comm_set_errhandler` with `MPI_ERRORS_RETURN` lets the program handle the error"
                    .into(),
            );
            f
        }
        _ => return None,
    };
    finding.interleaving = ctx.interleaving;
    finding.ranks = vec![rank];
    // What the rank printed, except glibc's assertion message: the finding
    // already says it.
    let printed: String = stderr
        .lines()
        .filter(|l| parse_glibc_assertion(l).is_none())
        .collect::<Vec<_>>()
        .join("\n");
    if let Some(last) = last_lines(&printed, 3) {
        finding.notes.push(format!("rank {rank} printed:\n{last}"));
    }
    Some(finding)
}

/// Whether the rank's abort with `code` is the runtime applying
/// `MPI_ERRORS_ARE_FATAL` after recording an MPI error with that code.
fn aborted_by_mpi_error(trace: &RankTrace, code: i32) -> bool {
    use mbh_trace::op::LocalCheck;
    trace.ops.iter().any(|op| {
        op.kind == mbh_trace::OpKind::LocalCheck
            && matches!(
                LocalCheck::from_code(op.count),
                Some(LocalCheck::MpiError | LocalCheck::InvalidArgument)
            )
            && op.tag == code
    })
}

/// The call and MPI's words of the report Open MPI's own
/// `MPI_ERRORS_ARE_FATAL` handler prints (Open MPI 4.1.4's words; each line
/// after the process's `[host:pid] `):
///
/// ```text
/// *** An error occurred in MPI_Send
/// *** reported by process [267911169,1]
/// *** on communicator MPI_COMM_SELF
/// *** MPI_ERR_RANK: invalid rank
/// *** MPI_ERRORS_ARE_FATAL (processes in this communicator will now abort,
/// ***    and potentially your MPI job)
/// ```
fn open_mpi_fatal_message(stderr: &str) -> Option<(String, String)> {
    let mut said = stderr
        .lines()
        .filter_map(|line| line.split_once("*** ").map(|(_, said)| said.trim()));
    let call = said.find_map(|l| l.strip_prefix("An error occurred in "))?;
    let words = said.find(|l| {
        ![
            "reported by process",
            "on communicator",
            "on file",
            "on win",
            "before MPI",
        ]
        .iter()
        .any(|context| l.starts_with(context))
    })?;
    (!words.is_empty() && !words.starts_with("MPI_ERRORS_ARE_FATAL"))
        .then(|| (call.trim().to_string(), words.to_string()))
}

/// MPI's own words for the error that stopped the rank, from what the
/// runtime printed under `MPI_ERRORS_ARE_FATAL` (`Fatal error in MPI_Xxx:
/// ...`, MPI's error string after it): MPICH's last, most specific line,
/// without its function prefix and the code; Open MPI's whole string
/// (`MPI_ERR_RANK: invalid rank`).
fn mpi_fatal_message(stderr: &str) -> Option<String> {
    let start = stderr.find("Fatal error in ")?;
    let text = &stderr[start..];
    let end = text.find(" (error code ").unwrap_or(text.len());
    let last = text[..end].lines().last()?;
    // `internal_Send(78).: Invalid rank ...` -> `Invalid rank ...`
    let words = match last.find(": ") {
        Some(at) => &last[at + 2..],
        None => last,
    };
    let words = words.trim();
    (!words.is_empty()).then(|| words.to_string())
}

/// The findings of the checks the runtime made inside the rank
/// (`LocalCheck` records): MPI errors, type mismatches, leaks, calls after
/// `MPI_Finalize`.
fn local_check_findings(
    ctx: &RunContext<'_>,
    trace: &RankTrace,
    all: &[Option<RankTrace>],
    stderr: &str,
) -> Vec<Finding> {
    use mbh_trace::op::LocalCheck;
    let rank = trace.rank;
    let site_of = |id: u32| ctx.sites.and_then(|s| s.get(id));
    let mut findings = Vec::new();
    for record in trace
        .ops
        .iter()
        .filter(|op| op.kind == mbh_trace::OpKind::LocalCheck)
    {
        let Some(check) = LocalCheck::from_code(record.count) else {
            continue;
        };
        let call = site_of(record.site).map_or("the call".to_string(), |s| format!("`{}`", s.call));
        let (kind, severity, message, label, help) = match check {
            LocalCheck::MpiError => (
                FindingKind::MpiError,
                Severity::Error,
                format!("{call} returned MPI error {} on rank {rank}", record.tag),
                "this call failed".to_string(),
                "check the arguments of the call; `MPI_Error_string` gives MPI's own words for the code",
            ),
            LocalCheck::TypeMismatch => (
                FindingKind::TypeMismatch,
                Severity::Error,
                format!("rank {rank} received with a datatype that does not match what rank {} sent", record.peer),
                format!("receives data sent by rank {} with another type signature", record.peer),
                "send and receive the same sequence of basic types (for example `MPI_INT` on both sides, not `MPI_BYTE` on one)",
            ),
            LocalCheck::RequestLeak => (
                FindingKind::RequestLeak,
                Severity::Warning,
                format!("a request created by {call} on rank {rank} was never completed or freed"),
                // A rank that returned without finalizing is checked at its
                // exit (issue 12).
                if trace.end.state == RankState::Exited {
                    "this request is still pending when the rank exits (it never called `MPI_Finalize`)".to_string()
                } else {
                    "this request is still pending at `MPI_Finalize`".to_string()
                },
                "complete every request with `MPI_Wait`/`MPI_Test` (or `MPI_Request_free`) before `MPI_Finalize`",
            ),
            LocalCheck::ResourceLeak => (
                FindingKind::ResourceLeak,
                Severity::Warning,
                format!("a handle created by {call} on rank {rank} was never freed"),
                "created here, never freed".to_string(),
                "free communicators, datatypes, groups and ops (`MPI_Comm_free`, `MPI_Type_free`, ...) before `MPI_Finalize`",
            ),
            // Legal (MPI-4.1 §3.9: it returns at once with an empty
            // status), so a warning: usually a missing `MPI_Start` (issue 18).
            LocalCheck::MissingStart => (
                FindingKind::MissingStart,
                Severity::Warning,
                format!("{call} on rank {rank} waits on a persistent request that was never started"),
                "this request is inactive: no `MPI_Start` since it was created or last completed".to_string(),
                "waiting on an inactive request is legal and returns at once with an empty status; if the program meant to communicate, call `MPI_Start` (or `MPI_Startall`) on the request before each wait",
            ),
            // Issue 18: checked by the runtime against the buffer's object
            // (runtime/src/buffer_check.rs), before the call.
            LocalCheck::BufferOverflow => {
                let access = crate::buffer_findings::overflow_access(record.tag);
                let buffer = crate::buffer_findings::buffer_name(access);
                // The static analysis proved it already, with the object's
                // name: that finding says it (src/buffer_findings.rs).
                if proven_overflow(ctx.sites, record.site, buffer) {
                    continue;
                }
                let room = crate::buffer_findings::room_of(ctx.sites, record, access);
                let object = room.map_or_else(
                    || "the heap block".to_string(),
                    |r| format!("`{}`", r.object),
                );
                (
                    FindingKind::BufferOverflow,
                    Severity::Error,
                    format!(
                        "{call} {buffer} on rank {rank}: {object} holds {} bytes but {} elements of the datatype need {}",
                        record.request, record.peer, record.aux
                    ),
                    format!(
                        "the {buffer} is {} past the end of {object}",
                        crate::buffer_findings::access_verb(access)
                    ),
                    "make the count at most the buffer's size in elements, or the buffer as large as the count",
                )
            }
            LocalCheck::AfterFinalize => (
                FindingKind::AfterFinalize,
                Severity::Error,
                format!("rank {rank} called {call} after `MPI_Finalize`"),
                "called after `MPI_Finalize`".to_string(),
                "move the call before `MPI_Finalize`; only a few query functions are allowed after it",
            ),
            LocalCheck::BufferReuse
                if mbh_trace::op::ReuseFound::from_code(record.tag).is_access() =>
            {
                findings.push(crate::reuse_findings::access_finding(
                    ctx.sites,
                    trace,
                    record,
                    ctx.interleaving,
                ));
                continue;
            }
            // The access check named the write's line: the completion's
            // comparison would report the same send again.
            LocalCheck::BufferReuse if crate::reuse_findings::superseded(trace, record) => continue,
            LocalCheck::BufferReuse => {
                // The send's call, from its record (`aux`).
                let send_call = trace
                    .ops
                    .get(record.aux as usize)
                    .filter(|op| op.index == record.aux)
                    .map_or("the nonblocking send".to_string(), |op| {
                        let name = site_of(op.site).map_or(op.kind.mpi_name(), |s| s.call.as_str());
                        format!("`{name}`")
                    });
                (
                    FindingKind::BufferReuse,
                    Severity::Error,
                    format!("rank {rank} changed the buffer of {send_call} before the send completed"),
                    "(2) when the send completed here, its buffer had changed".to_string(),
                    "write to a send buffer only after `MPI_Wait` or a successful `MPI_Test` completes its request",
                )
            }
            LocalCheck::CollectiveMismatch => {
                findings.extend(collective_mismatch_finding(ctx, record, rank, all));
                continue;
            }
            LocalCheck::InvalidArgument => {
                let argument = mbh_trace::op::BadArgument::from_code(record.peer);
                (
                    FindingKind::InvalidArgument,
                    Severity::Error,
                    format!(
                        "rank {rank} passed an invalid {} to {call} (MPI error {})",
                        argument.words(),
                        record.tag
                    ),
                    format!("MPI rejected the {} argument of this call", argument.words()),
                    argument.help(),
                )
            }
        };
        let mut finding = Finding::new(kind, severity, message);
        finding.interleaving = ctx.interleaving;
        finding.ranks = vec![rank];
        match site_of(record.site) {
            Some(site) => finding
                .locations
                .push(site_location(site, rank, Role::Primary, &label)),
            None => finding
                .notes
                .push(format!("rank {rank}: {label} (the call's line is unknown)")),
        }
        if matches!(check, LocalCheck::MpiError | LocalCheck::InvalidArgument)
            && aborted_by_mpi_error(trace, record.tag)
            && trace.end.state == RankState::Aborted
        {
            if let Some(words) = mpi_fatal_message(stderr) {
                finding.notes.push(format!("MPI's message: {words}"));
            }
            finding.notes.push(
                "under `MPI_ERRORS_ARE_FATAL` (the default handler) the error stopped the job, as MPI would have"
                    .to_string(),
            );
        }
        if check == LocalCheck::TypeMismatch && record.peer >= 0 {
            finding.ranks.push(record.peer);
            // The send that was received, from the sender's own trace.
            let send = all
                .get(record.peer as usize)
                .and_then(Option::as_ref)
                .and_then(|t| t.ops.get(record.aux as usize))
                .and_then(|op| site_of(op.site));
            if let Some(site) = send {
                finding.locations.push(site_location(
                    site,
                    record.peer,
                    Role::Secondary,
                    "sent with this datatype",
                ));
            }
        }
        if check == LocalCheck::BufferReuse {
            let send = trace
                .ops
                .get(record.aux as usize)
                .filter(|op| op.index == record.aux)
                .and_then(|op| site_of(op.site));
            if let Some(site) = send {
                finding.locations.push(site_location(
                    site,
                    rank,
                    Role::Secondary,
                    "(1) the send started here",
                ));
            }
            finding
                .notes
                .push("the receiver may get the old contents, the new ones, or a mix".to_string());
        }
        if check == LocalCheck::BufferOverflow {
            let access = crate::buffer_findings::overflow_access(record.tag);
            if let Some(declared) = crate::buffer_findings::room_of(ctx.sites, record, access)
                .and_then(|room| crate::buffer_findings::declaration(room, rank))
            {
                finding.locations.push(declared);
            }
        }
        if check == LocalCheck::MissingStart {
            // The `*_init` that made the request (`aux` = its record).
            let init = trace
                .ops
                .get(record.aux as usize)
                .filter(|op| op.index == record.aux)
                .and_then(|op| site_of(op.site));
            if let Some(site) = init {
                finding.locations.push(site_location(
                    site,
                    rank,
                    Role::Secondary,
                    "the persistent request is created here",
                ));
            }
            finding
                .notes
                .push("the wait returns at once: nothing is sent or received".into());
        }
        finding.help = Some(help.to_string());
        findings.push(finding);
    }
    findings
}

/// Whether `op` is a `CollectiveMismatch` local check.
fn is_collective_mismatch(op: &mbh_trace::rank_trace::Op) -> bool {
    op.kind == mbh_trace::OpKind::LocalCheck
        && op.count == mbh_trace::op::LocalCheck::CollectiveMismatch as i32
}

/// One finding for a collective mismatch the runtime's signature check
/// found, naming each rank's call (every rank of the communicator records
/// its side: same collective number `tag`, same communicator `comm`). Made
/// by the lowest rank that recorded it; `None` for the others.
fn collective_mismatch_finding(
    ctx: &RunContext<'_>,
    record: &mbh_trace::rank_trace::Op,
    rank: i32,
    all: &[Option<RankTrace>],
) -> Option<Finding> {
    let same = |op: &&mbh_trace::rank_trace::Op| {
        is_collective_mismatch(op) && op.tag == record.tag && op.comm == record.comm
    };
    let sides: Vec<(i32, &mbh_trace::rank_trace::Op)> = all
        .iter()
        .flatten()
        .filter_map(|t| t.ops.iter().find(same).map(|op| (t.rank, op)))
        .collect();
    if sides.first().is_some_and(|&(first, _)| first < rank) {
        return None;
    }
    let name = |op: &mbh_trace::rank_trace::Op| {
        u16::try_from(op.peer)
            .ok()
            .and_then(mbh_trace::OpKind::from_code)
            .map_or("a collective", |k| k.mpi_name())
    };
    let calls: Vec<String> = sides
        .iter()
        .map(|&(r, op)| format!("rank {r} `{}`", name(op)))
        .collect();
    let same_kind = sides.windows(2).all(|w| w[0].1.peer == w[1].1.peer);
    let kind = u16::try_from(record.peer)
        .ok()
        .and_then(mbh_trace::OpKind::from_code);
    let what = if same_kind && kind.is_some_and(has_per_rank_counts) {
        // The pairwise check tells that some block differs from what its
        // receiver expects, not which one (runtime/src/engine/coll.rs).
        format!(
            "ranks call `{}` with different roots or datatypes, or a rank sends a block that differs from what its receiver's counts expect, at the same point",
            name(record)
        )
    } else if same_kind {
        format!(
            "ranks call `{}` with different roots or datatype signatures at the same point",
            name(record)
        )
    } else {
        "ranks call different collectives at the same point".to_string()
    };
    let mut finding = Finding::new(
        FindingKind::CollectiveMismatch,
        Severity::Error,
        format!("{what}: {}", calls.join(", ")),
    );
    finding.interleaving = ctx.interleaving;
    finding.ranks = sides.iter().map(|&(r, _)| r).collect();
    for (i, &(r, op)) in sides.iter().enumerate() {
        let label = format!(
            "collective number {} here is `{}`",
            record.tag + 1,
            name(op)
        );
        let role = if i == 0 {
            Role::Primary
        } else {
            Role::Secondary
        };
        match ctx.sites.and_then(|s| s.get(op.site)) {
            Some(site) => finding.locations.push(site_location(site, r, role, &label)),
            None => finding
                .notes
                .push(format!("rank {r}: {label} (the call's line is unknown)")),
        }
    }
    finding.help = Some(
        "call the same collectives, in the same order, with the same root and matching counts and datatypes, on every rank of the communicator".into(),
    );
    Some(finding)
}

/// `SIGABRT`: a failed `assert` (glibc prints where) or a plain `abort()`.
fn abort_finding(ctx: &RunContext<'_>, trace: &RankTrace, stderr: &str) -> Finding {
    let rank = trace.rank;
    let end = &trace.end;
    let frame = ctx
        .symbolizer
        .first_user_frame(&end.frames, end.exe_base, true);
    match stderr.lines().rev().find_map(parse_glibc_assertion) {
        Some(assertion) => {
            let mut f = Finding::new(
                FindingKind::Assertion,
                Severity::Error,
                format!("assertion `{}` failed on rank {rank}", assertion.expression),
            );
            // The message names the file as the compiler saw it; the frame, when
            // it is the same line, adds the column and a path relative to here.
            let column = frame
                .as_ref()
                .filter(|p| {
                    p.line == assertion.line && p.file.ends_with(file_name(&assertion.file))
                })
                .map_or(0, |p| p.column);
            let file = frame
                .as_ref()
                .filter(|p| {
                    p.line == assertion.line && p.file.ends_with(file_name(&assertion.file))
                })
                .map_or(assertion.file.clone(), |p| p.file.clone());
            f.locations.push(Location {
                file,
                line: assertion.line,
                column,
                rank,
                call: Some(assertion.function.clone()),
                function: Some(assertion.function),
                role: Role::Primary,
                label: "this assertion failed".into(),
            });
            f
        }
        None => match stderr.lines().rev().find_map(glibc_fatal_message) {
            // The C library aborted the rank: a crash, not the program's
            // own `abort()` (issue 12).
            Some(message) => {
                let mut f = Finding::new(
                    FindingKind::Crash,
                    Severity::Error,
                    format!("rank {rank} was stopped by the C library: `{message}`"),
                );
                push_frame(
                    ctx,
                    &mut f,
                    end,
                    true,
                    rank,
                    "the C library found the damage here",
                );
                push_stack(&mut f, ctx, trace);
                f.help = Some(
                    "the program wrote memory it does not own earlier (a heap or stack overflow, a double free); rebuild with `-- -fsanitize=address -g` or run the rank under valgrind to find where"
                        .into(),
                );
                f
            }
            None => {
                let mut f = Finding::new(
                    FindingKind::Assertion,
                    Severity::Error,
                    format!("rank {rank} called `abort()`"),
                );
                push_frame(ctx, &mut f, end, true, rank, "the rank aborted here");
                push_stack(&mut f, ctx, trace);
                f
            }
        },
    }
}

/// Frames of the program's own code shown in a crash's notes.
const STACK_FRAMES: usize = 6;

/// Adds the rank's own stack, innermost first, when it has more than the
/// one frame the location already shows.
fn push_stack(f: &mut Finding, ctx: &RunContext<'_>, trace: &RankTrace) {
    let end = &trace.end;
    let stack = ctx
        .symbolizer
        .user_stack(&end.frames, end.exe_base, true, STACK_FRAMES);
    if stack.len() < 2 {
        return;
    }
    let frames: Vec<String> = stack
        .iter()
        .map(|pos| {
            let function = pos.function.as_deref().unwrap_or("?");
            format!("{function} ({}:{})", pos.file, pos.line)
        })
        .collect();
    f.notes.push(format!(
        "stack of rank {}, innermost first: {}",
        trace.rank,
        frames.join(" <- ")
    ));
}

/// A message the C library prints before it aborts a process whose memory
/// it found damaged (glibc's `malloc_printerr` and fortify checks).
fn glibc_fatal_message(line: &str) -> Option<&str> {
    let line = line.trim();
    const HEAP: [&str; 10] = [
        "free(): ",
        "malloc(): ",
        "realloc(): ",
        "calloc(): ",
        "munmap_chunk(): ",
        "malloc_consolidate(): ",
        "_int_free(): ",
        "_int_malloc(): ",
        "double free or corruption",
        "corrupted ",
    ];
    if HEAP.iter().any(|p| line.starts_with(p)) {
        return Some(line);
    }
    // `*** stack smashing detected ***: terminated`
    let fortified = line.strip_prefix("*** ")?;
    let (what, _) = fortified.split_once(" ***")?;
    what.ends_with("detected").then_some(what)
}

fn file_name(path: &str) -> &str {
    path.rsplit('/').next().unwrap_or(path)
}

/// glibc's message: `prog: file.c:25: main: Assertion `x != 33' failed.`
#[derive(Debug, PartialEq, Eq)]
struct GlibcAssertion {
    file: String,
    line: u32,
    function: String,
    expression: String,
}

fn parse_glibc_assertion(line: &str) -> Option<GlibcAssertion> {
    let marker = ": Assertion `";
    let at = line.find(marker)?;
    let expression = line[at + marker.len()..]
        .strip_suffix("' failed.")?
        .to_string();
    let (rest, function) = line[..at].rsplit_once(": ")?;
    let (_program, file_line) = rest.rsplit_once(": ")?;
    let (file, line_no) = file_line.rsplit_once(':')?;
    Some(GlibcAssertion {
        file: file.to_string(),
        line: line_no.parse().ok()?,
        function: function.to_string(),
        expression,
    })
}

fn timeout_finding(ctx: &RunContext<'_>, traces: &[Option<RankTrace>]) -> Finding {
    let mut f = Finding::new(
        FindingKind::Timeout,
        Severity::Error,
        format!("the run did not finish within {} s", ctx.timeout_secs),
    );
    f.interleaving = ctx.interleaving;
    let verdicts = deadlock::undecided(traces);
    for (trace, verdict) in traces.iter().zip(verdicts) {
        let Some(trace) = trace else {
            continue;
        };
        f.ranks.push(trace.rank);
        let (label, site) = match verdict {
            RankVerdict::Blocked { kind, site, judged } => (
                format!(
                    "rank {} was waiting in `{}`{}",
                    trace.rank,
                    kind.mpi_name(),
                    why_undecided(judged)
                ),
                site,
            ),
            RankVerdict::Polling {
                kind,
                site,
                polls,
                judged,
            } => (
                format!(
                    "rank {} was polling `{}` ({polls} times in a row without success){}",
                    trace.rank,
                    kind.mpi_name(),
                    why_undecided(judged)
                ),
                site,
            ),
            RankVerdict::OutsideMpi => {
                f.notes.push(format!(
                    "rank {} was not in an MPI call (computing, or polling with calls other than one `MPI_Test*`/`MPI_Iprobe` repeated, which the wait-for graph does not follow)",
                    trace.rank
                ));
                continue;
            }
            RankVerdict::NoTrace | RankVerdict::Ended => continue,
        };
        match ctx.sites.and_then(|s| s.get(site)) {
            Some(site) => f
                .locations
                .push(site_location(site, trace.rank, Role::Primary, &label)),
            None => f.notes.push(label),
        }
    }
    f.help = Some(format!(
        "if the program needs more time, raise `--timeout` (now {} s); the reasons above say which calls the wait-for graph could not judge (a hang among them is a deadlock it could not confirm)",
        ctx.timeout_secs
    ));
    f
}

/// What the wait-for graph made of a call a timed-out rank waited in.
fn why_undecided(judged: Judged) -> &'static str {
    match judged {
        Judged::CanComplete => ", which can complete (what it waits for is there): slow, not stuck",
        Judged::Waits => ", waiting for other ranks",
        Judged::Undecided(Undecidable::NotModelled) => {
            ", a call the wait-for graph does not model"
        }
        Judged::Undecided(Undecidable::UnnamedCommunicator) => {
            ", on a communicator mbhybrid could not name (`MPI_COMM_SELF`, an intercommunicator): the wait-for graph cannot follow it"
        }
        Judged::Undecided(Undecidable::UnknownRequest) => {
            ", on a request the trace does not tie to a call"
        }
        Judged::Undecided(Undecidable::MissingTraces) => {
            " (some rank has no trace, so the wait-for graph could not judge)"
        }
    }
}

/// The collectives whose blocks have counts per rank (the `v` and `w`
/// forms), checked pair by pair.
fn has_per_rank_counts(kind: mbh_trace::OpKind) -> bool {
    use mbh_trace::OpKind::*;
    matches!(
        kind,
        Gatherv
            | Igatherv
            | Scatterv
            | Iscatterv
            | Allgatherv
            | Iallgatherv
            | Alltoallv
            | Ialltoallv
            | Alltoallw
            | Ialltoallw
    )
}

fn killed_finding(
    ctx: &RunContext<'_>,
    ranks: &[RankOutcome],
    traces: &[Option<RankTrace>],
    launcher_stdout: &str,
    launcher_stderr: &str,
) -> Finding {
    let killed: Vec<i32> = ranks
        .iter()
        .filter(|r| r.state == "killed")
        .map(|r| r.rank)
        .collect();
    // Hydra names one process by pid on its standard output ("BAD
    // TERMINATION ... PID 123 ... (signal 9)"): the one it reaped first,
    // which need not be the one that died first (issue 12). The exit order
    // the death watch saw decides; the banner's signal is that rank's only
    // when the banner names its process.
    let banner = hydra_bad_termination(launcher_stdout);
    // Open MPI's `mpiexec` names the rank and signal of the first process
    // it saw end abnormally; the ones it kills itself it does not name.
    let noticed = open_mpi_noticed(launcher_stderr).filter(|(rank, _)| killed.contains(rank));
    let pid_of = |rank: i32| {
        traces
            .iter()
            .flatten()
            .find(|t| t.rank == rank)
            .map(|t| t.pid)
    };
    let rank_of = |pid: u32| {
        traces
            .iter()
            .flatten()
            .find(|t| t.pid == pid)
            .map(|t| t.rank)
    };
    let first = ctx
        .exit_order
        .first()
        .copied()
        .filter(|rank| killed.contains(rank));
    // Without the watch's order, Open MPI's notice names the rank that
    // ended first: it comes from the launcher that killed the others.
    let first = first.or(noticed.map(|(rank, _)| rank));
    let culprit = first.or_else(|| banner.and_then(|(pid, _)| rank_of(pid)));
    // The banner's signal is the culprit's when the watch saw that rank
    // die first and the banner names its process; Open MPI's notice gives
    // the signal of the rank it names.
    let banner_signal = banner
        .and_then(|(pid, signal)| {
            let names_first = first.is_some_and(|rank| pid_of(rank) == Some(pid));
            names_first.then_some(signal).flatten()
        })
        .or_else(|| {
            noticed
                .filter(|&(rank, _)| first == Some(rank))
                .map(|(_, signal)| signal)
        });
    let message = match (first, culprit, banner_signal, banner) {
        (_, Some(rank), Some(signal), _) => format!(
            "rank {rank} was killed by signal {signal} ({}) from outside the program (by the system, a user or a resource limit); the launcher then stopped the job",
            signal_name(signal)
        ),
        (Some(rank), _, None, _) => format!(
            "rank {rank} was the first to end, killed from outside the program (by the system, a user or a resource limit); the launcher then stopped the job"
        ),
        // The banner alone: it may name a process the launcher killed
        // itself, so the report says so rather than blame that rank.
        (None, Some(rank), None, Some((pid, Some(signal)))) => format!(
            "{} ended without finishing: one was killed from outside the program (by the system, a user or a resource limit) and the launcher stopped the others; the launcher names rank {rank} (process {pid}, signal {signal}, {}), which mbhybrid could not confirm was the first",
            rank_list(&killed),
            signal_name(signal)
        ),
        (None, None, _, Some((pid, Some(signal)))) => format!(
            "process {pid} of the job was killed by signal {signal} ({}) from outside the program; the launcher then stopped the job",
            signal_name(signal)
        ),
        _ if killed.is_empty() => {
            "the job ended without finishing: killed from outside the program (by the launcher, the system or a user)".to_string()
        }
        _ => format!(
            "{} ended without finishing: killed from outside the program (by the launcher, the system or a user)",
            rank_list(&killed)
        ),
    };
    let mut f = Finding::new(FindingKind::Crash, Severity::Error, message);
    f.interleaving = ctx.interleaving;
    f.ranks = match first {
        Some(rank) => vec![rank],
        None => killed,
    };
    if let Some(last) = last_lines(&launcher_said(launcher_stderr), 5) {
        f.notes.push(format!("the launcher printed:\n{last}"));
    }
    f
}

/// The rank and signal of Open MPI's notice on the launcher's standard
/// error: `mpiexec noticed that process rank 1 with PID 0 on node vm exited
/// on signal 6 (Aborted).` (the launcher's name is its `argv[0]`).
fn open_mpi_noticed(stderr: &str) -> Option<(i32, i32)> {
    stderr.lines().find_map(|line| {
        let rest = line.split(" noticed that process rank ").nth(1)?;
        let rank = rest.split_whitespace().next()?.parse::<i32>().ok()?;
        let signal = rest.split(" exited on signal ").nth(1)?;
        let signal = signal
            .split(|c: char| !c.is_ascii_digit())
            .next()?
            .parse::<i32>()
            .ok()?;
        Some((rank, signal))
    })
}

/// The pid and signal of MPICH's Hydra "BAD TERMINATION" banner.
fn hydra_bad_termination(stdout: &str) -> Option<(u32, Option<i32>)> {
    let pid = stdout.lines().find_map(|l| {
        let rest = l.split("PID ").nth(1)?;
        rest.split_whitespace().next()?.parse::<u32>().ok()
    })?;
    let signal = stdout.lines().find_map(|l| {
        let rest = l.split("(signal ").nth(1)?;
        rest.trim_end_matches(')').trim().parse::<i32>().ok()
    });
    Some((pid, signal))
}

/// "rank 1", "ranks 1 and 2", "ranks 0, 1 and 2".
fn rank_list(ranks: &[i32]) -> String {
    match ranks {
        [one] => format!("rank {one}"),
        [init @ .., last] => {
            let init: Vec<String> = init.iter().map(i32::to_string).collect();
            format!("ranks {} and {last}", init.join(", "))
        }
        [] => "no rank".to_string(),
    }
}

/// A location where the rank's recorded frames stopped in the program: the
/// first with a source line; without debug information, the function and
/// offset of the first in the executable's code (the location names the
/// executable, line 0).
fn push_frame(
    ctx: &RunContext<'_>,
    f: &mut Finding,
    end: &mbh_trace::rank_trace::RankEnd,
    first_is_ip: bool,
    rank: i32,
    label: &str,
) {
    let symbolizer = ctx.symbolizer;
    let pos = symbolizer.first_user_frame(&end.frames, end.exe_base, first_is_ip);
    if pos.is_none() {
        if let Some((function, offset)) =
            symbolizer.first_exe_function(&end.frames, end.exe_base, first_is_ip)
        {
            f.locations.push(Location {
                file: symbolizer.exe().to_string(),
                line: 0,
                column: 0,
                rank,
                call: Some(function.clone()),
                label: format!("{label} (in `{function}`, at offset {offset:#x})"),
                function: Some(function),
                role: Role::Primary,
            });
            return;
        }
    }
    push_pos(f, pos, rank, label);
}

fn push_pos(f: &mut Finding, pos: Option<SourcePos>, rank: i32, label: &str) {
    match pos {
        Some(pos) => f.locations.push(Location {
            file: pos.file,
            line: pos.line,
            column: pos.column,
            rank,
            call: pos.function.clone(),
            function: pos.function,
            role: Role::Primary,
            label: label.to_string(),
        }),
        None => f.notes.push(format!(
            "no source line is known for rank {rank}: build the program with `-g` (as `mbhybrid build` does)"
        )),
    }
}

fn push_last_call(ctx: &RunContext<'_>, f: &mut Finding, trace: &RankTrace, label: &str) {
    // The program's calls, not the runtime's records about them (the leak
    // checks a rank exiting without `MPI_Finalize` writes come last and
    // carry the site of the call that made the leaked request).
    let site = trace
        .ops
        .iter()
        .rev()
        .filter(|op| op.kind.class() != mbh_trace::op::OpClass::Clock)
        .find_map(|op| ctx.sites.and_then(|s| s.get(op.site)));
    if let Some(site) = site {
        f.locations
            .push(site_location(site, trace.rank, Role::Primary, label));
    }
}

/// Where call site `site` is, in words: `app.c:12`; for a site without a
/// line (code without debug information) `app (in `main`)`.
pub fn site_place(site: &mbh_trace::Site) -> String {
    match (site.line, site.function.as_str()) {
        (0, "") => site.file.clone(),
        (0, function) => format!("{} (in `{function}`)", site.file),
        (line, _) => format!("{}:{line}", site.file),
    }
}

/// A location at call site `site` on `rank`. A site the runtime made from
/// a return address in code without debug information (line 0) has only
/// its function and its return address's offset in the executable (the
/// instruction after the call, as `objdump -d` shows it) to show: the
/// label says them (renderers that show no `function` still do).
pub fn site_location(site: &mbh_trace::Site, rank: i32, role: Role, label: &str) -> Location {
    let label = match mbh_trace::site::offset_of_site(site.id) {
        Some(offset) if site.line == 0 && !site.function.is_empty() => format!(
            "{label} (in `{}`, the call returning to offset {offset:#x})",
            site.function
        ),
        Some(offset) if site.line == 0 => {
            format!("{label} (the call returning to offset {offset:#x})")
        }
        _ => label.to_string(),
    };
    Location {
        file: site.file.clone(),
        line: site.line,
        column: site.column,
        rank,
        call: Some(site.call.clone()),
        function: (!site.function.is_empty()).then(|| site.function.clone()),
        role,
        label,
    }
}

fn tail(text: &str) -> String {
    if text.len() <= STDERR_TAIL {
        return text.to_string();
    }
    let mut start = text.len() - STDERR_TAIL;
    while !text.is_char_boundary(start) {
        start += 1;
    }
    text[start..].to_string()
}

/// The last `n` lines the program printed, without the backtraces MPI
/// libraries print on a fatal signal (the finding already has the line).
fn last_lines(text: &str, n: usize) -> Option<String> {
    let lines: Vec<&str> = text
        .lines()
        .filter(|l| !l.trim().is_empty() && !is_library_backtrace(l))
        .collect();
    if lines.is_empty() {
        return None;
    }
    Some(lines[lines.len().saturating_sub(n)..].join("\n"))
}

/// Lines of the backtraces UCX, MPICH and Open MPI print when a rank dies.
fn is_library_backtrace(line: &str) -> bool {
    let t = line.trim();
    t.contains(" [0x")
        || t.chars().all(|c| c == '=')
        || t.contains("==== backtrace")
        || t.contains("Caught signal")
        || is_open_mpi_report(t)
}

/// A line of the reports Open MPI 4.1.4 prints about a process, each after
/// its `[host:pid] `: its `MPI_ERRORS_ARE_FATAL` handler's
/// ([`open_mpi_fatal_message`]) and its signal handler's (MCA
/// `opal_signal`), on a fatal signal:
///
/// ```text
/// [vm:13385] *** Process received signal ***
/// [vm:13385] Signal: Aborted (6)
/// [vm:13385] Signal code:  (-6)
/// [vm:16294] Failing at address: (nil)
/// [vm:13385] [ 6] /tmp/prog(+0x1424)[0x560fc3dcc424]
/// [vm:13385] *** End of error message ***
/// ```
///
/// The runtime records the signal and the frames itself and then lets the
/// handler that was there before run, Open MPI's included: the rank dies
/// as it would without mbhybrid (the report's stack, symbolized, says more
/// than these addresses).
fn is_open_mpi_report(line: &str) -> bool {
    let Some(rest) = line.strip_prefix('[') else {
        return false;
    };
    // `host:pid]`: the host may hold anything but `]`, the pid is digits.
    let Some((process, said)) = rest.split_once("] ") else {
        return false;
    };
    let pid_only = process
        .rsplit_once(':')
        .is_some_and(|(_, pid)| !pid.is_empty() && pid.bytes().all(|b| b.is_ascii_digit()));
    if !pid_only {
        return false;
    }
    let said = said.trim_start();
    // `*** `: the signal report's first and last lines, and every line of
    // the report of its `MPI_ERRORS_ARE_FATAL` handler (the finding has
    // its words).
    const HEADS: [&str; 5] = [
        "*** ",
        "Signal: ",
        "Signal code:",
        "Failing at address:",
        "Associated errno:",
    ];
    if said.starts_with('[') {
        open_mpi_frame(said)
    } else {
        HEADS.iter().any(|head| said.starts_with(head))
    }
}

/// `[ 6] /tmp/prog(+0x1424)[0x560fc3dcc424]`: a frame of Open MPI's
/// backtrace (its number, then the object, offset and address).
fn open_mpi_frame(said: &str) -> bool {
    said.strip_prefix('[')
        .and_then(|rest| rest.split_once(']'))
        .is_some_and(|(number, frame)| {
            number.trim().bytes().all(|b| b.is_ascii_digit())
                && !number.trim().is_empty()
                && frame.trim_end().ends_with(']')
                && frame.contains("[0x")
        })
}

/// What the launcher printed, without what says nothing about the program:
/// the rules around Open MPI's banners, its runtime's internal errors
/// (`ORTE_ERROR_LOG`, as when a message it relays is cut by the abort), and
/// the report of Open MPI's own signal handler when `mpiexec` itself
/// crashes. Debian's `mpiexec` of Open
/// MPI 4.1.4 sometimes segfaults in `PMIx_Finalize` while it aborts a job
/// (once a rank failed, or when mbhybrid stops the job): that crash is the
/// launcher's, after the ranks' ends were decided, and is never a finding.
fn launcher_said(stderr: &str) -> String {
    stderr
        .lines()
        .filter(|l| {
            let t = l.trim();
            let rule = t.len() > 3 && t.bytes().all(|b| b == b'-');
            let noise = is_open_mpi_report(t)
                || t.contains("ORTE_ERROR_LOG: ")
                || t.ends_with(
                    "abort is already in progress...hit ctrl-c again to forcibly terminate",
                );
            !rule && !noise
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// `SIGSEGV (segmentation fault)`.
pub fn signal_name(signal: i32) -> String {
    let name = match signal {
        libc::SIGSEGV => "SIGSEGV (segmentation fault)",
        libc::SIGBUS => "SIGBUS (bus error)",
        libc::SIGFPE => "SIGFPE (arithmetic exception)",
        libc::SIGILL => "SIGILL (illegal instruction)",
        libc::SIGABRT => "SIGABRT (abort)",
        libc::SIGKILL => "SIGKILL",
        libc::SIGTERM => "SIGTERM",
        _ => return format!("signal {signal}"),
    };
    name.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use mbh_trace::rank_trace::{RawOp, TraceWriter};

    /// A trace file of `records` `MPI_Barrier` records, written as the
    /// runtime writes it.
    fn trace_bytes(records: u64) -> Vec<u8> {
        let mut buf = vec![0u64; TraceWriter::file_len(records) as usize / 8];
        let len = buf.len() * 8;
        // SAFETY: `buf` is 8-aligned, `len` bytes long, and outlives `w`.
        let mut w = unsafe { TraceWriter::from_raw(buf.as_mut_ptr().cast(), len) }.unwrap();
        w.init_header(0, 1, 1, 0);
        for _ in 0..records {
            w.append(RawOp {
                kind: mbh_trace::OpKind::Barrier as u16,
                ..RawOp::default()
            });
        }
        w.set_state(RankState::Finalized);
        buf.iter().flat_map(|word| word.to_le_bytes()).collect()
    }

    #[test]
    fn a_damaged_record_keeps_the_records_before_it_and_says_so() {
        let run = tempfile::tempdir().unwrap();
        let dir = InterleavingDir::new(run.path(), 1);
        std::fs::create_dir_all(dir.trace(0).parent().unwrap()).unwrap();
        let mut bytes = trace_bytes(3);
        // Record 2's kind (after its 8-byte index) becomes one no runtime
        // writes.
        let record_2 = TraceWriter::file_len(2) as usize;
        bytes[record_2 + 8..record_2 + 10].copy_from_slice(&0xfffeu16.to_le_bytes());
        std::fs::write(dir.trace(0), &bytes).unwrap();
        let (traces, warnings) = read_traces(&dir, 1);
        assert_eq!(traces[0].as_ref().map(|t| t.ops.len()), Some(2));
        assert_eq!(warnings.len(), 1, "{warnings:?}");
        assert!(warnings[0].contains("damaged"), "{warnings:?}");
    }

    #[test]
    fn traces_of_another_format_version_are_named_as_such() {
        let run = tempfile::tempdir().unwrap();
        let dir = InterleavingDir::new(run.path(), 1);
        std::fs::create_dir_all(dir.trace(0).parent().unwrap()).unwrap();
        let mut bytes = trace_bytes(1);
        // The version word follows the 8-byte magic.
        bytes[8..12].copy_from_slice(&99u32.to_le_bytes());
        std::fs::write(dir.trace(0), &bytes).unwrap();
        let ended = Ended {
            status: None,
            timed_out: false,
            stopped_by_monitor: false,
            elapsed: std::time::Duration::ZERO,
        };
        let symbolizer = Symbolizer::new(std::path::Path::new("/nonexistent"), run.path());
        let ctx = RunContext {
            program: "./app",
            interleaving: 1,
            dir: &dir,
            ended: &ended,
            sites: None,
            symbolizer: &symbolizer,
            timeout_secs: 10,
            exit_order: &[],
        };
        let (traces, warnings) = read_traces(&dir, 1);
        let error = analyze(&ctx, traces, warnings)
            .err()
            .expect("an error")
            .to_string();
        assert!(error.contains("no rank's trace could be read"), "{error}");
        assert!(error.contains("another mbhybrid version"), "{error}");
    }

    #[test]
    fn a_trace_cut_short_keeps_its_records_and_says_so() {
        let run = tempfile::tempdir().unwrap();
        let dir = InterleavingDir::new(run.path(), 1);
        std::fs::create_dir_all(dir.trace(0).parent().unwrap()).unwrap();
        // Two whole records and 5 bytes of the third.
        let cut = TraceWriter::file_len(2) as usize + 5;
        std::fs::write(dir.trace(0), &trace_bytes(3)[..cut]).unwrap();
        let (traces, warnings) = read_traces(&dir, 1);
        assert_eq!(traces[0].as_ref().map(|t| t.ops.len()), Some(2));
        assert_eq!(warnings.len(), 1, "{warnings:?}");
        assert!(
            warnings[0].contains("counts 3 records, the file holds 2"),
            "{warnings:?}"
        );
    }

    #[test]
    fn hydra_banner_names_pid_and_signal() {
        let banner = "=   BAD TERMINATION OF ONE OF YOUR APPLICATION PROCESSES\n\
                      =   PID 4242 RUNNING AT host\n\
                      =   EXIT CODE: 9\n\
                      YOUR APPLICATION TERMINATED WITH THE EXIT STRING: Killed (signal 9)\n";
        assert_eq!(hydra_bad_termination(banner), Some((4242, Some(9))));
        assert_eq!(hydra_bad_termination("nothing"), None);
    }

    #[test]
    fn the_c_library_s_fatal_messages_are_recognised() {
        for line in [
            "double free or corruption (fasttop)",
            "free(): double free detected in tcache 2",
            "malloc(): corrupted top size",
            "corrupted size vs. prev_size",
        ] {
            assert_eq!(glibc_fatal_message(line), Some(line));
        }
        assert_eq!(
            glibc_fatal_message("*** stack smashing detected ***: terminated"),
            Some("stack smashing detected")
        );
        assert_eq!(glibc_fatal_message("the program said free(): hello"), None);
        assert_eq!(glibc_fatal_message("*** not a message"), None);
    }

    #[test]
    fn rank_lists_read_as_words() {
        assert_eq!(rank_list(&[1]), "rank 1");
        assert_eq!(rank_list(&[1, 2]), "ranks 1 and 2");
        assert_eq!(rank_list(&[0, 1, 2]), "ranks 0, 1 and 2");
    }

    #[test]
    fn mpich_fatal_messages_are_shortened_to_their_words() {
        let stderr = "Fatal error in MPI_Send: internal_Send(120): MPI_Send(buf=(nil), count=1, dtype=USER<struct>, 2, 0, MPI_COMM_WORLD) failed\ninternal_Send(78).: Invalid rank has value 2 but must be nonnegative and less than 2 (error code 67783174; MPI_ERRORS_ARE_FATAL)\nAbort(67783174) on node 1\n";
        assert_eq!(
            mpi_fatal_message(stderr).as_deref(),
            Some("Invalid rank has value 2 but must be nonnegative and less than 2")
        );
        assert_eq!(mpi_fatal_message("nothing here"), None);
    }

    #[test]
    fn parses_glibc_assertion_messages() {
        let a = parse_glibc_assertion(
            "crooked: tests/programs/s1.c:31: main: Assertion `x != 33' failed.",
        )
        .unwrap();
        assert_eq!(
            a,
            GlibcAssertion {
                file: "tests/programs/s1.c".into(),
                line: 31,
                function: "main".into(),
                expression: "x != 33".into()
            }
        );
        assert!(parse_glibc_assertion("some other line").is_none());
        // An expression containing the marker's pieces still parses.
        let b = parse_glibc_assertion("a.out: /x/y.c:7: f: Assertion `s[0] == ':' && n' failed.")
            .unwrap();
        assert_eq!(
            (b.file.as_str(), b.line, b.expression.as_str()),
            ("/x/y.c", 7, "s[0] == ':' && n")
        );
    }

    #[test]
    fn tails_keep_the_end_on_char_boundaries() {
        let long = "é".repeat(STDERR_TAIL);
        let t = tail(&long);
        assert!(t.len() <= STDERR_TAIL + 1 && t.ends_with('é'));
        assert_eq!(last_lines("a\nb\n\nc\n", 2).as_deref(), Some("b\nc"));
        assert_eq!(last_lines("\n \n", 2), None);
        let ucx = "bad input\n[host:1:0:1] Caught signal 11 (Segmentation fault)\n==== backtrace ====\n 0  /lib/libucs.so(+0x1) [0x7f00]\n=================\n";
        assert_eq!(last_lines(ucx, 3).as_deref(), Some("bad input"));
    }

    /// Open MPI 4.1.4's words (Debian 12), captured from real runs.
    mod open_mpi {
        pub const ASSERTION_STDERR: &str = "crooked_barrier: examples/crooked_barrier.c:45: int main(int, char **): Assertion `x != 33' failed.
[vm:13385] *** Process received signal ***
[vm:13385] Signal: Aborted (6)
[vm:13385] Signal code:  (-6)
[vm:13385] [ 0] /lib/x86_64-linux-gnu/libc.so.6(+0x3c050)[0x7f17b065a050]
[vm:13385] [ 1] /lib/x86_64-linux-gnu/libc.so.6(+0x8aeec)[0x7f17b06a8eec]
[vm:13385] [ 2] /lib/x86_64-linux-gnu/libc.so.6(gsignal+0x12)[0x7f17b0659fb2]
[vm:13385] [ 3] /lib/x86_64-linux-gnu/libc.so.6(abort+0xd3)[0x7f17b0644472]
[vm:13385] [ 6] /tmp/hompi/crooked_barrier(+0x1424)[0x560fc3dcc424]
[vm:13385] [ 9] /tmp/hompi/crooked_barrier(+0x1121)[0x560fc3dcc121]
[vm:13385] *** End of error message ***
";
        pub const SEGFAULT_STDERR: &str = "bad input
[vm:16294] *** Process received signal ***
[vm:16294] Signal: Segmentation fault (11)
[vm:16294] Signal code: Address not mapped (1)
[vm:16294] Failing at address: (nil)
[vm:16294] [ 0] /lib/x86_64-linux-gnu/libc.so.6(+0x3c050)[0x7f0ec4c5a050]
[vm:16294] [ 1] /tmp/hompi/cmp/ompi/segfault_rank1(+0x1264)[0x5635191d9264]
[vm:16294] *** End of error message ***
";
        /// `mpiexec` segfaulting in `PMIx_Finalize` while it aborts a job.
        pub const LAUNCHER_CRASH: &str = "--------------------------------------------------------------------------
Primary job  terminated normally, but 1 process returned
a non-zero exit code. Per user-direction, the job has been aborted.
--------------------------------------------------------------------------
mpiexec: abort is already in progress...hit ctrl-c again to forcibly terminate

[vm:13377] *** Process received signal ***
[vm:13377] Signal: Segmentation fault (11)
[vm:13377] Signal code: Address not mapped (1)
[vm:13377] Failing at address: (nil)
[vm:13377] [ 0] /lib/x86_64-linux-gnu/libc.so.6(+0x3c050)[0x7f1abd322050]
[vm:13377] [ 1] /lib/x86_64-linux-gnu/libpmix.so.2(PMIx_Finalize+0x703)[0x7f1aba250e83]
[vm:13377] [ 7] mpiexec(+0x13b9)[0x5585196083b9]
[vm:13377] [10] mpiexec(+0x1131)[0x558519608131]
[vm:13377] *** End of error message ***
[vm:28409] [[519,0],0] ORTE_ERROR_LOG: Out of resource in file ../../../orte/util/show_help.c at line 507
";
        pub const NOTICED: &str =
            "--------------------------------------------------------------------------
Primary job  terminated normally, but 1 process returned
a non-zero exit code. Per user-direction, the job has been aborted.
--------------------------------------------------------------------------
--------------------------------------------------------------------------
mpiexec noticed that process rank 0 with PID 0 on node vm exited on signal 9 (Killed).
--------------------------------------------------------------------------
";
        pub const FATAL_ERROR: &str = "[vm:25364] *** An error occurred in MPI_Send
[vm:25364] *** reported by process [267911169,1]
[vm:25364] *** on communicator MPI_COMM_SELF
[vm:25364] *** MPI_ERR_RANK: invalid rank
[vm:25364] *** MPI_ERRORS_ARE_FATAL (processes in this communicator will now abort,
[vm:25364] ***    and potentially your MPI job)
";
        /// What the runtime prints under `MPI_ERRORS_ARE_FATAL`, with Open
        /// MPI's error string.
        pub const RUNTIME_FATAL: &str =
            "Fatal error in MPI_Send: MPI_ERR_RANK: invalid rank (error code 6; MPI_ERRORS_ARE_FATAL)\n";
    }

    #[test]
    fn open_mpi_s_signal_report_is_not_what_the_rank_printed() {
        let printed: String = open_mpi::ASSERTION_STDERR
            .lines()
            .filter(|l| parse_glibc_assertion(l).is_none())
            .collect::<Vec<_>>()
            .join("\n");
        assert_eq!(last_lines(&printed, 3), None);
        assert_eq!(
            last_lines(open_mpi::SEGFAULT_STDERR, 3).as_deref(),
            Some("bad input")
        );
        // The program's own lines that merely look alike stay.
        for kept in [
            "[rank 1] Signal: 3 received",
            "[vm:12x] Signal: Aborted (6)",
            "[vm:1] [ 0] no address here",
        ] {
            assert!(!is_library_backtrace(kept), "{kept}");
        }
    }

    #[test]
    fn the_launcher_s_own_crash_and_rules_are_not_shown() {
        assert_eq!(
            last_lines(&launcher_said(open_mpi::LAUNCHER_CRASH), 5).as_deref(),
            Some("Primary job  terminated normally, but 1 process returned\na non-zero exit code. Per user-direction, the job has been aborted.")
        );
    }

    #[test]
    fn open_mpi_names_the_rank_it_noticed() {
        assert_eq!(open_mpi_noticed(open_mpi::NOTICED), Some((0, 9)));
        assert_eq!(
            open_mpi_noticed("mpirun noticed that process rank 12 with PID 4242 on node n3 exited on signal 15 (Terminated)."),
            Some((12, 15))
        );
        assert_eq!(open_mpi_noticed(open_mpi::LAUNCHER_CRASH), None);
    }

    #[test]
    fn open_mpi_fatal_messages_give_the_call_and_its_words() {
        assert_eq!(
            open_mpi_fatal_message(open_mpi::FATAL_ERROR),
            Some((
                "MPI_Send".to_string(),
                "MPI_ERR_RANK: invalid rank".to_string()
            ))
        );
        assert_eq!(open_mpi_fatal_message("nothing here"), None);
        assert_eq!(
            mpi_fatal_message(open_mpi::RUNTIME_FATAL).as_deref(),
            Some("MPI_ERR_RANK: invalid rank")
        );
        // Its lines are left out of what the rank printed: the finding
        // has the words.
        assert_eq!(last_lines(open_mpi::FATAL_ERROR, 3), None);
    }

    #[test]
    fn signals_have_readable_names() {
        assert_eq!(signal_name(libc::SIGSEGV), "SIGSEGV (segmentation fault)");
        assert_eq!(signal_name(64), "signal 64");
    }

    /// Issue 12, as Open MPI's launcher printed it: two ranks' lines run
    /// together, the first cut by the second.
    #[test]
    fn a_trace_not_created_is_found_inside_a_merged_line() {
        let merged = "sig 1: 0<0\nmbhybrid runtime: mbhybrid runtime: cannot create /r/i3/rank-2.trace: Read-only file system (os error 30)\n";
        assert_eq!(
            trace_not_created(merged),
            Some("cannot create /r/i3/rank-2.trace: Read-only file system (os error 30)")
        );
        assert_eq!(
            trace_not_created("sig 1: 0<0\nmbhybrid runtime: stopped\n"),
            None
        );
    }
}
