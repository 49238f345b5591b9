//! `mbhybrid replay RUN_ID --interleaving N`: run one recorded interleaving
//! again with every wildcard receive forced to the sender it took then
//! (seed 002: a replay is reproducible when every nondeterministic match is
//! fixed), and report what it shows.

use crate::cli::{Format, ReplayArgs};
use crate::error::UsageError;
use anyhow::{Context, Result};
use is_terminal::IsTerminal;
use mbh_diagnostics::outcome;
use mbh_diagnostics::tool::{emit, ToolDiagnostic};
use mbh_session::divergence;
use mbh_session::interleaving;
use mbh_session::Session;
use mbh_trace::config::RuntimeConfig;
use mbh_trace::layout::InterleavingDir;
use mbh_trace::outcome::{Divergence, Warning};
use mbh_trace::report::{ChoicePointStats, Report};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

/// Runs `mbhybrid replay`.
pub fn run(args: &ReplayArgs) -> Result<ExitCode> {
    let started = Instant::now();
    let run_dir = locate_run(args)?;
    let progress = args.format == Format::Human && std::io::stderr().is_terminal();
    let mut session = Session::resume(
        &run_dir,
        mbh_session::progress::ProgressMode::Off,
        &crate::mpi_choice::installed_runtime(),
    )?;
    let recorded = InterleavingDir::new(&run_dir, args.interleaving);
    let text = std::fs::read_to_string(recorded.replay_config()).map_err(|_| {
        UsageError::NoSuchInterleaving {
            run: session.run_id.clone(),
            n: args.interleaving,
            available: count_interleavings(&run_dir),
        }
    })?;
    let config = RuntimeConfig::parse(&text)
        .map_err(|e| anyhow::anyhow!(e))
        .with_context(|| format!("{} is damaged", recorded.replay_config().display()))?;

    // Each replay gets a directory of its own beside the recorded one.
    let attempt = (1..)
        .find(|k| {
            !run_dir
                .join(format!("i{}-replay-{k}", args.interleaving))
                .exists()
        })
        .unwrap_or(1);
    let dir = InterleavingDir {
        path: run_dir.join(format!("i{}-replay-{attempt}", args.interleaving)),
    };
    if progress {
        emit(
            &ToolDiagnostic::info(format!(
                "replaying interleaving {} of run {}",
                args.interleaving, session.run_id
            ))
            .from("mbhybrid"),
        );
    }
    let replayed = interleaving::run(&mut session, args.interleaving, dir, config.clone())?;
    let mut warnings = session.warnings.clone();
    let forced = config.guidance.as_ref().map_or(0, |g| g.forced.len());
    let misses = divergence::replay_divergences(&session, &config, &replayed, &recorded);
    let diverged: Vec<Divergence> = misses
        .iter()
        .map(|miss| Divergence {
            interleaving: args.interleaving,
            miss: miss.clone(),
            run_dir: None,
        })
        .collect();
    if !misses.is_empty() {
        warnings.push(Warning::ReplayDiverged { forced, misses });
    }
    let mut findings = replayed.analysis.findings.clone();
    for finding in &mut findings {
        finding.replay = Some(session.replay_command(args.interleaving));
    }
    let report = Report {
        tool: "mbhybrid".into(),
        version: env!("CARGO_PKG_VERSION").into(),
        program: session.program_arg.clone(),
        args: session.args.clone(),
        np: session.np,
        clocks: format!("{:?}", config.clocks).to_lowercase(),
        buffering: format!("{:?}", config.buffering).to_lowercase(),
        interleavings: 1,
        complete: false,
        choice_points: ChoicePointStats::default(),
        findings,
        wildcards: Vec::new(),
        barriers: Vec::new(),
        barrier_audit: None,
        run_id: session.run_id.clone(),
        run_dir: session.run_dir.display().to_string(),
        runs: vec![replayed.analysis.outcome],
        warnings: warnings.iter().map(outcome::warning).collect(),
        limits: super::verify::limits(&session),
        not_modelled: (replayed.analysis.not_modelled.iter())
            .map(|call| call.location.clone())
            .collect(),
        run_ahead: None,
        seconds: started.elapsed().as_secs_f64(),
    };
    super::verify::print_report(&report, args.format, &session.cwd)?;
    Ok(super::verify::divergence_exit(&diverged)
        .unwrap_or_else(|| super::verify::replay_exit_code(&report)))
}

/// The run directory named by a run id (under the run root) or a path.
fn locate_run(args: &ReplayArgs) -> Result<PathBuf, mbh_session::SessionError> {
    let candidates = [args.run_dir.join(&args.run), PathBuf::from(&args.run)];
    candidates
        .into_iter()
        .find(|dir| mbh_trace::layout::RunManifest::path(dir).is_file())
        .map(|dir| dir.canonicalize().unwrap_or(dir))
        .ok_or_else(|| mbh_session::SessionError::NoSuchRun(args.run_dir.join(&args.run)))
}

fn count_interleavings(run_dir: &std::path::Path) -> u32 {
    (1..)
        .take_while(|n| InterleavingDir::new(run_dir, *n).replay_config().is_file())
        .count() as u32
}
