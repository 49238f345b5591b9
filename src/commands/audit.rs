//! `mbhybrid audit-barriers`: verify, then decide per `MPI_Barrier` site
//! whether it ever orders a wildcard receive before a send that could
//! otherwise have matched it (seed 004, Fib), and optionally write a patch
//! deleting the irrelevant ones.

use crate::cli::{AuditArgs, BufferingArg};
use anyhow::{Context, Result};
use mbh_fib::{Coverage, Options, SendBuffering, UnknownReason, Verdict};
use mbh_session::search_loop;
use mbh_session::Session;
use mbh_trace::report::{AuditCost, BarrierVerdict};
use mbh_trace::{FindingKind, Role};
use mbh_verdict::place::site_location;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;

/// The reason of an irrelevant barrier in a program that made no wildcard
/// receive.
const NO_WILDCARDS: &str = "the program made no wildcard receive for this input, so no barrier can change which message a receive takes (seed 004); delete it only if nothing else relies on it (timing, output order, files)";

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
    report.barriers = audit
        .barriers
        .iter()
        .filter_map(|b| verdict(&session, b, no_wildcards))
        .collect();
    report
        .barriers
        .sort_by(|a, b| (&a.file, a.line).cmp(&(&b.file, b.line)));
    report
        .barriers
        .dedup_by(|a, b| a.file == b.file && a.line == b.line);
    report.barrier_audit = Some(AuditCost {
        fib_seconds: fib.as_secs_f64(),
        exploration_seconds: explored.as_secs_f64(),
    });
    // Every format shows the verdicts (diagnostics' `barriers` module).
    // The report first: a patch or HTML page that cannot be written is an
    // error after it, never a lost report (issue 12).
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

fn verdict(
    session: &Session,
    barrier: &mbh_fib::BarrierVerdict,
    no_wildcards: bool,
) -> Option<BarrierVerdict> {
    let site = session.sites.as_ref()?.get(barrier.site)?;
    let (verdict, reason, evidence) = match &barrier.verdict {
        Verdict::Irrelevant if no_wildcards => (
            "irrelevant",
            Some(NO_WILDCARDS.to_string()),
            Vec::new(),
        ),
        Verdict::Irrelevant => ("irrelevant", None, Vec::new()),
        Verdict::Unknown(why) => (
            "unknown",
            Some(match why {
                UnknownReason::Deadlock => "the exploration found a deadlock or a hang, so the communication structure is not settled".to_string(),
                UnknownReason::Bounded => "the exploration was bounded (mixing bound, loop abstraction or budget)".to_string(),
                UnknownReason::Trace { interleaving, issue } => {
                    format!("interleaving {}'s traces could not be fully used: {issue:?}", interleaving + 1)
                }
                UnknownReason::MeetsKeptBarrier { kept } => format!(
                    "its calls meet those of {} in one MPI_Barrier, which is relevant: deleting this one alone would pair the remaining barriers differently",
                    barriers_at(session, &site.file, &[*kept]).0
                ),
            }),
            Vec::new(),
        ),
        Verdict::Relevant {
            evidence,
            after_deleting,
            ..
        } => {
            let sites = session.sites.as_ref();
            let mut locations = Vec::new();
            if let Some(s) = sites.and_then(|t| t.get(evidence.receive.site)) {
                locations.push(site_location(s, evidence.receive.rank, Role::Primary, "wildcard receive"));
            }
            if let Some(s) = sites.and_then(|t| t.get(evidence.send.site)) {
                locations.push(site_location(
                    s,
                    evidence.send.rank,
                    Role::Secondary,
                    "a send it could take if the barrier were gone",
                ));
            }
            let mut reason = format!(
                "it orders rank {}'s wildcard receive before rank {}'s send (interleaving {})",
                evidence.receive.rank,
                evidence.send.rank,
                evidence.interleaving + 1
            );
            if !after_deleting.is_empty() {
                // Irrelevant alone; kept so the irrelevant ones can all go.
                let (barriers, plural) = barriers_at(session, &site.file, after_deleting);
                let verb = if plural { "are" } else { "is" };
                reason.push_str(&format!(" once {barriers} {verb} deleted"));
            }
            ("relevant", Some(reason), locations)
        }
    };
    Some(BarrierVerdict {
        file: site.file.clone(),
        line: site.line,
        verdict: verdict.into(),
        reason,
        evidence,
    })
}

/// The source lines of barrier sites `sites`, `file:line` when in another
/// file than `file`, in order, without repeats.
fn site_lines(session: &Session, file: &str, sites: &[u32]) -> Vec<String> {
    let table = session.sites.as_ref();
    let mut lines: Vec<(bool, &str, u32)> = sites
        .iter()
        .filter_map(|&s| table.and_then(|t| t.get(s)))
        .map(|s| (s.file != file, s.file.as_str(), s.line))
        .collect();
    lines.sort_unstable();
    lines.dedup();
    lines
        .into_iter()
        .map(|(other, f, line)| {
            if other {
                format!("{f}:{line}")
            } else {
                line.to_string()
            }
        })
        .collect()
}

/// "the barrier at line 12", "the barriers at lines 12 and 20", "the
/// barriers at lines 12, 20 and 31", and whether that is plural.
fn barriers_at(session: &Session, file: &str, sites: &[u32]) -> (String, bool) {
    let lines = site_lines(session, file, sites);
    match lines.as_slice() {
        [] => ("barriers of unknown lines".to_string(), true),
        [one] => (format!("the barrier at line {one}"), false),
        [init @ .., last] => (
            format!("the barriers at lines {} and {last}", init.join(", ")),
            true,
        ),
    }
}

/// `file` relative to `root` (both made absolute and canonical), as
/// `patch -p1` and `git apply` want it (issue 12: an absolute path after
/// `a/` is refused by both). `None` when `file` is not under `root`.
fn relative_to(file: &Path, root: &Path) -> Option<String> {
    let file = file.canonicalize().ok()?;
    let root = root.canonicalize().ok()?;
    let relative = file.strip_prefix(&root).ok()?;
    Some(relative.to_string_lossy().into_owned())
}

/// Where a patch of `sources` is applied when the user names no
/// directory: the deepest directory that holds them, the directory the
/// program was built in (`build_dir`) and the current one (`cwd`), so that
/// `audit-barriers` run from a project's `bin/` makes a patch for the
/// project's root. A working directory elsewhere on the machine (whose
/// only common ancestor with the sources is `/`) is left out.
fn default_patch_root(cwd: &Path, build_dir: &Path, sources: &[PathBuf]) -> PathBuf {
    let real = |p: &Path| p.canonicalize().unwrap_or_else(|_| p.to_owned());
    let project = sources
        .iter()
        .map(|s| real(s.parent().unwrap_or(s)))
        .fold(real(build_dir), |root, dir| common_ancestor(&root, &dir));
    let with_cwd = common_ancestor(&project, &real(cwd));
    if with_cwd.parent().is_none() {
        project
    } else {
        with_cwd
    }
}

/// The longest path both `a` and `b` start with.
fn common_ancestor(a: &Path, b: &Path) -> PathBuf {
    a.components()
        .zip(b.components())
        .take_while(|(x, y)| x == y)
        .map(|(x, _)| x)
        .collect()
}

/// Writes one unified diff deleting every irrelevant barrier call, its
/// paths relative to `root` (else [`default_patch_root`]), and says on
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
            default_patch_root(&session.cwd, &build_dir, &files)
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
        let patch_path = relative_to(&absolute, &root).with_context(|| {
            format!(
                "{} is not under {}, where the patch is meant to be applied: give --patch-root a directory that holds the sources",
                absolute.display(),
                root.display()
            )
        })?;
        let patch = mbh_fib::deletion_patch(&patch_path, &source, &calls);
        for skipped in &patch.skipped {
            eprintln!(
                "mbhybrid: not deleting the barrier at {file}:{}: {:?}",
                skipped.line, skipped.reason
            );
        }
        diff.push_str(&patch.diff);
    }
    std::fs::write(path, &diff)
        .with_context(|| format!("cannot write the patch to {}", path.display()))?;
    let shown = std::path::absolute(path).unwrap_or_else(|_| path.to_owned());
    if diff.is_empty() {
        eprintln!(
            "mbhybrid: wrote {}: empty, no barrier to delete",
            shown.display()
        );
    } else {
        // The paths carry git's `a/` and `b/` prefixes: `-p1` strips them.
        eprintln!(
            "mbhybrid: wrote {}: apply it in {} with `patch -p1 < {}` (or `git apply`)",
            shown.display(),
            root.display(),
            shown.display()
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_patch_root_holds_the_sources_the_build_and_the_working_directory() {
        let p = PathBuf::from;
        let sources = [p("/w/CoMD/src-mpi/parallel.c")];
        assert_eq!(
            default_patch_root(
                Path::new("/w/CoMD/bin"),
                Path::new("/w/CoMD/src-mpi"),
                &sources
            ),
            p("/w/CoMD")
        );
        assert_eq!(
            default_patch_root(
                Path::new("/w/CoMD/src-mpi"),
                Path::new("/w/CoMD/src-mpi"),
                &sources
            ),
            p("/w/CoMD/src-mpi")
        );
        // A CMake build directory: the sources' project.
        assert_eq!(
            default_patch_root(
                Path::new("/w/app/build"),
                Path::new("/w/app/build"),
                &[p("/w/app/src/a.c"), p("/w/app/lib/b.c")]
            ),
            p("/w/app")
        );
        // Run from elsewhere on the machine: the project's root still.
        assert_eq!(
            default_patch_root(
                Path::new("/tmp/run"),
                Path::new("/w/app"),
                &[p("/w/app/a.c")]
            ),
            p("/w/app")
        );
    }
}
