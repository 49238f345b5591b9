//! `mbhybrid audit-barriers`: verify, then decide per `MPI_Barrier` site
//! whether it ever orders a wildcard receive before a send that could
//! otherwise have matched it (seed 004, Fib), and optionally write a patch
//! deleting the irrelevant ones.

use crate::cli::{AuditArgs, BufferingArg};
use anyhow::{Context, Result};
use mbh_diagnostics::tool::{emit, ToolDiagnostic};
use mbh_fib::{patch_path, patch_root, Coverage, Options, SendBuffering};
use mbh_session::search_loop;
use mbh_session::Session;
use mbh_trace::report::{AuditCost, BarrierVerdict};
use mbh_trace::FindingKind;
use mbh_verdict::barriers::barrier_verdicts;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;

/// Runs `mbhybrid audit-barriers`.
pub fn run(args: &AuditArgs) -> Result<ExitCode> {
    let started = Instant::now();
    let verify = &args.verify;
    let mut session = super::verify::prepare(verify)?;
    let mut exploration =
        search_loop::explore(&mut session, &super::verify::settings(verify), true)?;
    let runs = std::mem::take(&mut exploration.traces);
    let deadlock_free = !exploration.findings.iter().any(|f| {
        matches!(
            f.kind,
            FindingKind::Deadlock | FindingKind::Timeout | FindingKind::CollectiveMismatch
        )
    });
    let coverage = Coverage {
        complete: exploration.complete,
        deadlock_free,
    };
    let options = Options {
        buffering: match verify.buffering {
            BufferingArg::Zero => SendBuffering::Zero,
            _ => SendBuffering::Eager,
        },
        ..Options::default()
    };
    let explored = started.elapsed();
    let fib_started = Instant::now();
    let audit = mbh_fib::audit(&runs, coverage, &options);
    let fib = fib_started.elapsed();
    let timelines = std::mem::take(&mut exploration.timelines);
    let diverged = std::mem::take(&mut exploration.diverged);
    let tool_stops = std::mem::take(&mut exploration.tool_stops);
    let failure = exploration.failure.take();
    let mut report = super::verify::report(verify, &session, exploration, started);
    // Without a wildcard receive nothing can change a match, so every
    // barrier is irrelevant by Fib's definition: say that, not that the
    // barrier was judged against receives there are none of.
    let no_wildcards = runs
        .iter()
        .flatten()
        .all(|trace| trace.wildcard_events().is_empty());
    report.barriers = barrier_verdicts(session.sites.as_ref(), &audit.barriers, no_wildcards);
    report.barrier_audit = Some(AuditCost {
        fib_seconds: fib.as_secs_f64(),
        exploration_seconds: explored.as_secs_f64(),
    });
    // Every format shows the verdicts (diagnostics' `barriers` module).
    // The report first: a patch or HTML page that cannot be written is an
    // error after it, never a lost report.
    super::verify::print_report(&report, verify.format, &session.cwd)?;
    if let Some(failure) = failure {
        return Err(anyhow::Error::new(failure).context(format!(
            "the exploration stopped after {} interleaving(s); the report above covers those",
            report.interleavings
        )));
    }
    let exit = super::verify::tool_stop_exit(&tool_stops)
        .or_else(|| super::verify::divergence_exit(&diverged))
        .unwrap_or_else(|| {
            super::verify::exit_code(&report, super::verify::failing_severity(&args.verify))
        });
    if let Some(path) = &args.patch {
        write_patch(path, args.patch_root.as_deref(), &session, &report.barriers)?;
    }
    if let Some(path) = &verify.html {
        super::verify::write_html(path, &report, &session.cwd, &timelines)?;
    }
    Ok(exit)
}

/// Writes one unified diff deleting every irrelevant barrier call, its
/// paths relative to `root` (else [`mbh_fib::patch_root`]), and says on
/// standard error where and how to apply it. Sources are found from the
/// directory the program was built in (the site table's), wherever this
/// command runs.
fn write_patch(
    path: &Path,
    root: Option<&Path>,
    session: &Session,
    barriers: &[BarrierVerdict],
) -> Result<()> {
    let mut by_file: BTreeMap<&str, Vec<(u32, u32)>> = BTreeMap::new();
    let sites = session.sites.as_ref();
    // A barrier without a line (in code without debug information) has no
    // source to delete it from.
    for b in barriers
        .iter()
        .filter(|b| b.verdict == "irrelevant" && b.line > 0)
    {
        // Every call site on that line (the column tells the patch which call).
        for site in sites.into_iter().flat_map(|t| &t.sites) {
            if site.file == b.file && site.line == b.line && site.call.ends_with("MPI_Barrier") {
                by_file
                    .entry(&b.file)
                    .or_default()
                    .push((site.line, site.column));
            }
        }
    }
    let source_path = |file: &str| match sites {
        Some(table) => table.source_path(file, &session.cwd),
        None => session.cwd.join(file),
    };
    let build_dir = match sites.map(|t| t.directory.as_str()) {
        Some("") | None => session.cwd.clone(),
        Some(dir) => PathBuf::from(dir),
    };
    let root = match root {
        Some(root) => root.to_owned(),
        None => {
            let files: Vec<PathBuf> = by_file.keys().map(|f| source_path(f)).collect();
            patch_root(&session.cwd, &build_dir, &files)
        }
    };
    let mut diff = String::new();
    for (file, calls) in by_file {
        let absolute = source_path(file);
        let source = std::fs::read_to_string(&absolute).with_context(|| {
            format!(
                "cannot read {} (site file {file}, built in {}) to write the patch",
                absolute.display(),
                build_dir.display()
            )
        })?;
        let patch_path = patch_path(&absolute, &root).with_context(|| {
            format!(
                "{} is not under {}, where the patch is meant to be applied: give --patch-root a directory that holds the sources",
                absolute.display(),
                root.display()
            )
        })?;
        let patch = mbh_fib::deletion_patch(&patch_path, &source, &calls);
        for skipped in &patch.skipped {
            emit(
                &ToolDiagnostic::info(format!(
                    "not deleting the barrier at {file}:{}: {:?}",
                    skipped.line, skipped.reason
                ))
                .from("mbhybrid"),
            );
        }
        diff.push_str(&patch.diff);
    }
    std::fs::write(path, &diff)
        .with_context(|| format!("cannot write the patch to {}", path.display()))?;
    let shown = std::path::absolute(path).unwrap_or_else(|_| path.to_owned());
    let wrote = if diff.is_empty() {
        format!("wrote {}: empty, no barrier to delete", shown.display())
    } else {
        // The paths carry git's `a/` and `b/` prefixes: `-p1` strips them.
        format!(
            "wrote {}: apply it in {} with `patch -p1 < {}` (or `git apply`)",
            shown.display(),
            root.display(),
            shown.display()
        )
    };
    emit(&ToolDiagnostic::info(wrote).from("mbhybrid"));
    Ok(())
}
