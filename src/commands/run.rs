//! `mbhybrid run -n NP ./app ARGS`: one run of the program with every
//! wildcard receive deterministic (seed 002; the runtime's
//! `engine/deterministic.rs`), its output its own. After the job, one
//! summary on standard error: how the wildcard receives were decided, and
//! a digest of the matches to compare runs by.

use crate::cli::RunArgs;
use anyhow::Result;
use mbh_diagnostics::tool::{emit, ToolDiagnostic};
use mbh_session::deterministic::{decision_stats, Matches};
use mbh_session::interleaving::{self, LaunchSpec};
use mbh_trace::config::RuntimeConfig;
use mbh_trace::determinism::Deterministic;
use mbh_trace::layout::InterleavingDir;
use std::process::ExitCode;

/// `--timeout` left out: ten years.
const NO_TIMEOUT: u64 = 10 * 365 * 24 * 3600;

/// Runs `mbhybrid run`.
pub fn run(args: &RunArgs) -> Result<ExitCode> {
    let session = super::prepare_session(
        &args.job,
        &args.program,
        &args.args,
        args.timeout.unwrap_or(NO_TIMEOUT),
        mbh_session::progress::ProgressMode::Off,
    )?;
    let config = RuntimeConfig {
        deterministic: Some(Deterministic {
            patience_ms: args.patience,
            own_stderr: true,
        }),
        ..RuntimeConfig::default()
    };
    let dir = InterleavingDir::new(&session.run_dir, 1);
    let launched = interleaving::launch(&LaunchSpec::of(&session).passthrough(), dir, config)?;
    let dir = launched.dir().clone();
    let ended = launched.ended();
    if ended.stopped_by_monitor || ended.timed_out {
        return Ok(exit_code(ended, args));
    }
    let matches = Matches::read(&dir, session.np);
    let stats = decision_stats(&dir, session.np);
    emit(
        &ToolDiagnostic::info(format!(
            "{} wildcard receive(s) decided by logical time (Zhou et al.); match digest {:016x}; traces in {}",
            stats.decided,
            matches.digest(),
            dir.path.display()
        ))
        .from("mbhybrid"),
    );
    if stats.relaxed > 0 {
        emit(&ToolDiagnostic::warning(format!(
            "the deadlock breaker decided {} wildcard receive(s) or test(s): every rank that could still send an earlier message was stalled in MPI for {} ms (seed 002 §4.2.3); a rank that was only waiting long makes the run differ from there on: raise --patience",
            stats.relaxed, args.patience
        )).from("mbhybrid"));
    }
    if stats.undetermined > 0 {
        emit(&ToolDiagnostic::warning(format!(
            "{} wildcard receive(s) or probe(s) took the first message to arrive, not the one logical time chooses: the receive of an `MPI_Sendrecv` from MPI_ANY_SOURCE that logical time could not decide at once, or a wildcard on an intercommunicator (deterministic mode decides neither); they may differ between runs",
            stats.undetermined
        )).from("mbhybrid"));
    }
    Ok(exit_code(ended, args))
}

/// The program's exit status, or 1 when the job was stopped.
fn exit_code(ended: &mbh_trace::report::JobEnd, args: &RunArgs) -> ExitCode {
    if ended.stopped_by_monitor {
        emit(&ToolDiagnostic::error(format!(
            "the job deadlocked (the wait-for graph confirmed it) and was stopped; `mbhybrid verify -n {} {}` shows where",
            args.job.np,
            args.program.display()
        )).from("mbhybrid"));
        return ExitCode::from(1);
    }
    if ended.timed_out {
        emit(
            &ToolDiagnostic::error(format!(
                "the job was stopped after --timeout {} s",
                args.timeout.unwrap_or(NO_TIMEOUT)
            ))
            .from("mbhybrid"),
        );
        return ExitCode::from(1);
    }
    match ended.status.and_then(|s| s.code()) {
        Some(code) => ExitCode::from(u8::try_from(code).unwrap_or(1)),
        None => ExitCode::from(1),
    }
}
