//! `mbhybrid verify`: explore the program's wildcard outcomes and report.

use crate::cli::{
    BufferingArg, ClocksArg, DenyArg, Format, LoopAbstractionArg, SearchArg, VerifyArgs,
};
use anyhow::Result;
use is_terminal::IsTerminal;
use mbh_diagnostics::outcome;
use mbh_diagnostics::tool::emit;
use mbh_session::progress::ProgressMode;
use mbh_session::search_loop::{self, Exploration, Settings};
use mbh_session::Session;
use mbh_trace::config::{Buffering, Clocks};
use mbh_trace::finding::Severity;
use mbh_trace::outcome::{Divergence, ToolStop, Warning};
use mbh_trace::report::Report;
use std::path::Path;
use std::process::ExitCode;
use std::time::{Duration, Instant};

/// Runs `mbhybrid verify`.
pub fn run(args: &VerifyArgs) -> Result<ExitCode> {
    let started = Instant::now();
    let mut session = prepare(args)?;
    let mut exploration = search_loop::explore(&mut session, &settings(args), false)?;
    let timelines = std::mem::take(&mut exploration.timelines);
    let diverged = std::mem::take(&mut exploration.diverged);
    let tool_stops = std::mem::take(&mut exploration.tool_stops);
    let failure = exploration.failure.take();
    let report = report(args, &session, exploration, started);
    // The report first: an extra output that fails (an unwritable
    // `--html` path) is an error after it, never a lost report.
    print_report(&report, args.format, &session.cwd)?;
    if let Some(failure) = failure {
        return Err(anyhow::Error::new(failure).context(format!(
            "the exploration stopped after {} interleaving(s); the report above covers those",
            report.interleavings
        )));
    }
    let html = args
        .html
        .as_deref()
        .map(|path| write_html(path, &report, &session.cwd, &timelines));
    let exit = tool_stop_exit(&tool_stops)
        .or_else(|| divergence_exit(&diverged))
        .unwrap_or_else(|| exit_code(&report, failing_severity(args)));
    html.transpose()?;
    Ok(exit)
}

/// A search or replay that could not force what it asked for has not
/// verified what it says (replays fail loudly, like loom's): an
/// error after the report, and exit status 2, whatever was found.
pub fn divergence_exit(diverged: &[Divergence]) -> Option<ExitCode> {
    if diverged.is_empty() {
        return None;
    }
    emit(&outcome::divergence_error(diverged));
    Some(ExitCode::from(2))
}

/// The runtime stopped the program at a call it cannot handle: a limit of
/// the tool, said as an error after the report (exit status 2), never a
/// finding against the program.
pub fn tool_stop_exit(tool_stops: &[ToolStop]) -> Option<ExitCode> {
    if tool_stops.is_empty() {
        return None;
    }
    emit(&outcome::tool_stop_error(tool_stops));
    Some(ExitCode::from(2))
}

/// The session of a `verify`-like command (`audit-barriers` shares it).
pub fn prepare(args: &VerifyArgs) -> Result<Session> {
    // Ctrl-C, SIGTERM or a batch system's time limit stops the search and
    // prints what ran: an hour of search is not lost to a time limit.
    mbh_launch::termination::report_on_stop();
    super::prepare_session(
        &args.job,
        &args.program,
        &args.args,
        args.timeout,
        // Standard error: never in the way of `--format json` on stdout.
        ProgressMode::for_stderr(),
    )
}

/// The exploration settings the options ask for.
pub fn settings(args: &VerifyArgs) -> Settings {
    Settings {
        clocks: clocks(args.clocks),
        bufferings: match args.buffering {
            BufferingArg::Infinite => vec![Buffering::Infinite],
            BufferingArg::Zero => vec![Buffering::Zero],
            BufferingArg::Both => vec![Buffering::Infinite, Buffering::Zero],
        },
        bounds: mbh_bounding::ExploreConfig::new()
            .loop_abstraction(match args.loop_abstraction {
                LoopAbstractionArg::Off => mbh_bounding::LoopAbstraction::Off,
                LoopAbstractionArg::Auto => mbh_bounding::LoopAbstraction::Auto,
                LoopAbstractionArg::All => mbh_bounding::LoopAbstraction::All,
            })
            .mixing_bound(args.mixing_bound),
        exhaustive: args.search == SearchArg::Exhaustive,
        max_interleavings: args.max_interleavings,
        time_budget: args.time_budget.map(Duration::from_secs),
        keep_traces: args.keep_traces,
        jobs: args.jobs as usize,
        deterministic: args.deterministic,
    }
}

fn clocks(arg: ClocksArg) -> Clocks {
    match arg {
        ClocksArg::Lamport => Clocks::Lamport,
        ClocksArg::Vector => Clocks::Vector,
    }
}

/// The report of an exploration.
pub fn report(
    args: &VerifyArgs,
    session: &Session,
    exploration: Exploration,
    started: Instant,
) -> Report {
    let mut warnings = session.warnings.clone();
    warnings.extend(exploration.warnings);
    warnings.extend(exploration.incomplete_because.map(Warning::Partial));
    Report {
        tool: "mbhybrid".into(),
        version: env!("CARGO_PKG_VERSION").into(),
        program: session.program_arg.clone(),
        args: session.args.clone(),
        np: session.np,
        clocks: match args.clocks {
            ClocksArg::Lamport => "lamport",
            ClocksArg::Vector => "vector",
        }
        .into(),
        buffering: match args.buffering {
            BufferingArg::Infinite => "infinite",
            BufferingArg::Zero => "zero",
            BufferingArg::Both => "both",
        }
        .into(),
        interleavings: exploration.interleavings,
        complete: exploration.complete,
        choice_points: exploration.stats,
        findings: exploration.findings,
        wildcards: exploration.wildcards,
        barriers: Vec::new(),
        barrier_audit: None,
        run_id: session.run_id.clone(),
        run_dir: session.run_dir.display().to_string(),
        runs: exploration.runs,
        warnings: warnings.iter().map(outcome::warning).collect(),
        limits: limits(session),
        not_modelled: (exploration.not_modelled.into_iter())
            .map(|call| call.location)
            .collect(),
        run_ahead: exploration.run_ahead,
        seconds: started.elapsed().as_secs_f64(),
    }
}

/// What any verdict on `session`'s program does not cover
/// ([`Report::limits`]).
pub fn limits(session: &Session) -> Vec<String> {
    let sites = session.sites.as_ref();
    let mut limits = mbh_verdict::divergence::input_dependence(sites);
    limits.extend(mbh_verdict::reuse::limits(sites));
    limits
}

/// The least severe finding that fails the run: errors, or warnings too
/// under `--deny warnings`. Compilers never fail a build on a warning
/// unless asked, and neither does `verify`.
pub fn failing_severity(args: &VerifyArgs) -> Severity {
    if args.deny.contains(&DenyArg::Warnings) {
        Severity::Warning
    } else {
        Severity::Error
    }
}

/// Whether `report` holds a finding at least as severe as `failing`.
pub fn has_failing_finding(report: &Report, failing: Severity) -> bool {
    report.findings.iter().any(|f| f.severity <= failing)
}

/// 1 a finding that fails the run (see [`failing_severity`]), else 3 when
/// coverage is partial (warnings never hide it), else 0.
pub fn exit_code(report: &Report, failing: Severity) -> ExitCode {
    if has_failing_finding(report, failing) {
        ExitCode::from(1)
    } else if coverage_is_partial(report) {
        ExitCode::from(PARTIAL_COVERAGE)
    } else {
        ExitCode::SUCCESS
    }
}

/// Exit status of a search that found nothing but did not cover the whole
/// space: a budget stopped it, or a bound skipped choice points.
/// Scripts and CI that test for 0 must not read it as "verified".
pub const PARTIAL_COVERAGE: u8 = 3;

/// Whether the search stopped early or a bound skipped a choice point.
pub fn coverage_is_partial(report: &Report) -> bool {
    !report.complete
        || report.choice_points.abstracted > 0
        || report.choice_points.mixing_bounded > 0
}

/// The exit status of a replay: one run, whose coverage is not the point;
/// 1 when it shows an error, as `verify` without `--deny`.
pub fn replay_exit_code(report: &Report) -> ExitCode {
    if !has_failing_finding(report, Severity::Error) {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    }
}

/// Writes the HTML report.
pub fn write_html(
    path: &Path,
    report: &Report,
    cwd: &Path,
    timelines: &[(usize, mbh_trace::timeline::Timeline)],
) -> Result<()> {
    let page = mbh_diagnostics::html::render(report, cwd, timelines);
    std::fs::write(path, page).map_err(|e| crate::error::UsageError::HtmlUnwritable {
        path: path.to_owned(),
        reason: e.to_string(),
    })?;
    Ok(())
}

/// Prints `report` in `format` on standard output.
pub fn print_report(report: &Report, format: Format, cwd: &Path) -> Result<()> {
    use std::io::Write;
    let text = match format {
        Format::Json => mbh_diagnostics::json::render(report)?,
        Format::Short => mbh_diagnostics::short::render(report),
        Format::Sarif => mbh_diagnostics::sarif::render_with_root(report, cwd),
        Format::Human => {
            let color = std::io::stdout().is_terminal() && std::env::var_os("NO_COLOR").is_none();
            mbh_diagnostics::human::render(report, cwd, color)?
        }
    };
    let mut out = std::io::stdout().lock();
    out.write_all(text.as_bytes())?;
    out.flush()?;
    Ok(())
}
