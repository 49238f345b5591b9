//! How each rank ended, as findings: an exit without `MPI_Finalize`, a
//! crash, a failed assertion, `MPI_Abort`, calls before `MPI_Init`, a
//! timeout, and ranks killed from outside. A rank's trace records its
//! signal, exit status or `MPI_Abort` from inside the process, which is
//! exact; the launcher's view only fills in what the traces cannot tell.

use crate::local_checks::is_collective_mismatch;
use crate::outcome::RunContext;
use crate::place::*;
use crate::printed::*;
use mbh_analysis::deadlock::{self, Judged, RankVerdict, Undecidable};
use mbh_trace::rank_trace::{RankState, RankTrace};
use mbh_trace::report::RankOutcome;
use mbh_trace::{Finding, FindingKind, Location, Role, Severity};

/// An `exit` finding: at the line the rank exited from when its frames
/// show one, else at its last MPI call (labelled `last_call`).
pub(crate) fn exit_finding(
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

/// Calls the ranks made before `MPI_Init` (the runtime notes the first of
/// each process, `runtime/src/before_init.rs`; MPI then aborts it).
pub(crate) fn before_init_findings(ctx: &RunContext<'_>) -> Vec<Finding> {
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
pub(crate) fn rank_finding(
    ctx: &RunContext<'_>,
    trace: &RankTrace,
    stderr: &str,
) -> Option<Finding> {
    let rank = trace.rank;
    let end = &trace.end;
    let mut finding = match end.state {
        RankState::Signaled => {
            let signal = end.signal.unwrap_or(0);
            if signal == libc::SIGABRT {
                abort_finding(ctx, trace, stderr)
            } else {
                crash_finding(ctx, trace, signal)
            }
        }
        RankState::Exited => {
            // Ending after `MPI_Init` without `MPI_Finalize` is
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
        // The runtime stopped the job where two threads were in MPI at
        // once: the `thread-level` finding of its note says it all.
        RankState::Aborted
            if end.abort.map(|a| a.0) == Some(mbh_trace::op::THREAD_OVERLAP_EXIT)
                && crate::thread_overlap::stopped(&ctx.dir.thread_overlaps(), rank) =>
        {
            return None
        }
        // A limit of the tool, reported as a tool error (`tool_stops`).
        RankState::ToolStopped => return None,
        RankState::Aborted => mpi_abort_finding(ctx, trace)?,
        // Killed, and MPI said why: an error its own `MPI_ERRORS_ARE_FATAL`
        // handler took (one the runtime does not see: on `MPI_COMM_SELF`,
        // or of a call without a communicator) stopped the job.
        RankState::Starting | RankState::Running
            if !ctx.ended.timed_out && !ctx.ended.stopped_by_monitor =>
        {
            fatal_handler_finding(ctx, trace, stderr)?
        }
        _ => return None,
    };
    finding.interleaving = ctx.interleaving;
    finding.ranks = vec![rank];
    push_printed(&mut finding, rank, stderr);
    Some(finding)
}

/// A rank killed by `signal` (not `SIGABRT`, an abort's): where, its
/// stack, and for a bad access the address.
fn crash_finding(ctx: &RunContext<'_>, trace: &RankTrace, signal: i32) -> Finding {
    let (rank, end) = (trace.rank, &trace.end);
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

/// A rank that called `MPI_Abort`; `None` when it was the runtime's
/// abort for an MPI error.
fn mpi_abort_finding(ctx: &RunContext<'_>, trace: &RankTrace) -> Option<Finding> {
    let (rank, end) = (trace.rank, &trace.end);
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
    Some(f)
}

/// A rank killed after MPI's own fatal error handler printed why; `None`
/// when `stderr` holds no such message.
fn fatal_handler_finding(ctx: &RunContext<'_>, trace: &RankTrace, stderr: &str) -> Option<Finding> {
    let rank = trace.rank;
    let (call, words) = open_mpi_fatal_message(stderr)?;
    let mut f = Finding::new(
        FindingKind::MpiError,
        Severity::Error,
        format!("`{call}` failed on rank {rank} and MPI's fatal error handler stopped the job"),
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
    Some(f)
}

/// The last lines the rank printed, except glibc's assertion message:
/// the finding already says it.
fn push_printed(finding: &mut Finding, rank: i32, stderr: &str) {
    let printed: String = stderr
        .lines()
        .filter(|l| parse_glibc_assertion(l).is_none())
        .collect::<Vec<_>>()
        .join("\n");
    if let Some(last) = last_lines(&printed, 3) {
        finding.notes.push(format!("rank {rank} printed:\n{last}"));
    }
}

/// Whether the rank's abort with `code` is the runtime applying
/// `MPI_ERRORS_ARE_FATAL` after recording an MPI error with that code.
pub(crate) fn aborted_by_mpi_error(trace: &RankTrace, code: i32) -> bool {
    use mbh_trace::check::Check;
    trace
        .ops
        .iter()
        .filter_map(Check::decode)
        .any(|record| match record.check {
            Check::MpiError { code: c, .. } | Check::InvalidArgument { code: c, .. } => c == code,
            _ => false,
        })
}

/// `SIGABRT`: a failed `assert` (glibc prints where) or a plain `abort()`.
pub(crate) fn abort_finding(ctx: &RunContext<'_>, trace: &RankTrace, stderr: &str) -> Finding {
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
            // own `abort()`, which is an assertion.
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

pub(crate) fn timeout_finding(ctx: &RunContext<'_>, traces: &[Option<RankTrace>]) -> Finding {
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
pub(crate) fn why_undecided(judged: Judged) -> &'static str {
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
pub(crate) fn has_per_rank_counts(kind: mbh_trace::OpKind) -> bool {
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

pub(crate) fn killed_finding(
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
    // which need not be the one that died first. The exit order
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

/// "rank 1", "ranks 1 and 2", "ranks 0, 1 and 2".
pub(crate) fn rank_list(ranks: &[i32]) -> String {
    match ranks {
        [one] => format!("rank {one}"),
        [init @ .., last] => {
            let init: Vec<String> = init.iter().map(i32::to_string).collect();
            format!("ranks {} and {last}", init.join(", "))
        }
        [] => "no rank".to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rank_lists_read_as_words() {
        assert_eq!(rank_list(&[1]), "rank 1");
        assert_eq!(rank_list(&[1, 2]), "ranks 1 and 2");
        assert_eq!(rank_list(&[0, 1, 2]), "ranks 0, 1 and 2");
    }
}
